//! Runs one request through the built policy module, as Kubewarden's
//! policy-server would, and prints the ValidationResponse:
//!
//!     cargo run --example evaluate -- --settings FILE --request FILE [--wasm FILE]
//!
//! FILEs are YAML or JSON; the request is an AdmissionRequest (or an
//! AdmissionReview, whose `request` is used).
#[path = "../tests/support/host.rs"]
mod host;

use std::path::PathBuf;

use std::process::ExitCode;

use anyhow::{bail, Context, Result};

/// Errors are printed as one line with their causes, never as a backtrace
/// (`RUST_BACKTRACE` is often set on developers' machines).
fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<()> {
    let mut settings = None;
    let mut request = None;
    let mut wasm = host::wasm_path();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let value = args
            .next()
            .with_context(|| format!("{arg} needs a value"))?;
        match arg.as_str() {
            "--settings" => settings = Some(PathBuf::from(value)),
            "--request" => request = Some(PathBuf::from(value)),
            "--wasm" => wasm = PathBuf::from(value),
            other => bail!("unknown argument {other}; usage: evaluate --settings FILE --request FILE [--wasm FILE]"),
        }
    }
    let (Some(settings), Some(request)) = (settings, request) else {
        bail!("usage: evaluate --settings FILE --request FILE [--wasm FILE]");
    };
    let settings = host::read_document(&settings)?;
    let request = host::read_document(&request)?;
    let module = host::PolicyModule::load(&wasm)?;
    let validity = host::call(
        &module.instance()?,
        "validate_settings",
        settings.to_string().as_bytes(),
    )?;
    if validity["valid"] != serde_json::Value::Bool(true) {
        println!("{}", serde_json::to_string_pretty(&validity)?);
        bail!("the settings are invalid");
    }
    let response = host::call(
        &module.instance()?,
        "validate",
        &host::validation_request(&settings, &request),
    )?;
    println!("{}", serde_json::to_string_pretty(&response)?);
    Ok(())
}
