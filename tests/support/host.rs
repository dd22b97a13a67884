//! A waPC host built like Kubewarden's policy-server (wapc +
//! wasmtime-provider), shared by the integration tests, the `evaluate`
//! example and the benchmark.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context, Result};
use serde_json::{json, Value};
use wapc::WapcHost;
use wasmtime_provider::{WasmtimeEngineProviderBuilder, WasmtimeEngineProviderPre};

/// The release module `make policy.wasm` builds, in the target directory
/// this test or example was built in (so `CARGO_TARGET_DIR` is honoured).
pub fn wasm_path() -> PathBuf {
    const MODULE: &str = "wasm32-wasip1/release/kyverno_validate_policy.wasm";
    let from_exe = std::env::current_exe().ok().and_then(|exe| {
        exe.ancestors()
            .map(|dir| dir.join(MODULE))
            .find(|candidate| candidate.exists())
    });
    from_exe.unwrap_or_else(|| {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("target")
            .join(MODULE)
    })
}

/// The module compiled once; instances are cheap to make from it.
pub struct PolicyModule {
    pre: WasmtimeEngineProviderPre,
}

impl PolicyModule {
    pub fn load(path: &Path) -> Result<Self> {
        let bytes = std::fs::read(path).with_context(|| {
            format!(
                "reading {}: build it first with `make policy.wasm`",
                path.display()
            )
        })?;
        let pre = WasmtimeEngineProviderBuilder::new()
            .module_bytes(&bytes)
            .build_pre()
            .map_err(|e| anyhow!("compiling the module: {e}"))?;
        Ok(Self { pre })
    }

    /// A new instance, as policy-server makes for every request. Host
    /// capabilities (cluster lookups) answer with an error: there is no
    /// cluster behind this host.
    pub fn instance(&self) -> Result<WapcHost> {
        self.instance_with(|binding, ns, op, _payload| {
            Err(format!(
                "host capability {binding}/{ns}/{op} is not available"
            ))
        })
    }

    /// A new instance whose host capabilities `answer` serves.
    pub fn instance_with(
        &self,
        answer: impl Fn(&str, &str, &str, &[u8]) -> std::result::Result<Vec<u8>, String>
            + Send
            + Sync
            + 'static,
    ) -> Result<WapcHost> {
        let engine = self
            .pre
            .rehydrate(None)
            .map_err(|e| anyhow!("instantiating: {e}"))?;
        WapcHost::new(
            Box::new(engine),
            Some(Box::new(move |_id, binding, ns, op, payload: &[u8]| {
                answer(binding, ns, op, payload).map_err(Into::into)
            })),
        )
        .map_err(|e| anyhow!("starting the waPC host: {e}"))
    }
}

/// Calls `function` on `host` and parses the JSON it returns.
pub fn call(host: &WapcHost, function: &str, payload: &[u8]) -> Result<Value> {
    let bytes = host
        .call(function, payload)
        .map_err(|e| anyhow!("calling `{function}`: {e}"))?;
    serde_json::from_slice(&bytes).with_context(|| format!("`{function}` returned no JSON"))
}

/// Reads a YAML or JSON document.
pub fn read_document(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_yaml::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// The ValidationRequest for a settings document and an AdmissionRequest
/// (an AdmissionReview is unwrapped to its `request`).
pub fn validation_request(settings: &Value, request: &Value) -> Vec<u8> {
    let request = request.get("request").unwrap_or(request);
    json!({"settings": settings, "request": request})
        .to_string()
        .into_bytes()
}
