//! `kyverno-fuzz [--jobs N] [ITERATIONS] [SEED]`: a fuzz campaign over `validate` and
//! `validate_settings` (see the crate docs). Findings go to
//! `target/fuzz-findings/`; the exit status is 1 when there are any.
//! `kyverno-fuzz --replay FILE…` times findings again; `kyverno-fuzz --x509
//! [ITERATIONS]` fuzzes the DER reader behind `x509_decode` on its own;
//! `kyverno-fuzz --manifests [ITERATIONS]` the readers of signed manifests.
//! With `FUZZ_KEEP_CURRENT` set, each input is written to
//! `target/fuzz-findings/current-SEED.json` before it runs: one that kills
//! the process (out of memory) is left there.
use std::path::PathBuf;

#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;
use std::process::ExitCode;
use std::time::Duration;

fn main() -> anyhow::Result<ExitCode> {
    let mut args = std::env::args().skip(1).peekable();
    // `--jobs N` (first): N threads, each with its own seed.
    let jobs: u64 = if args.peek().is_some_and(|a| a == "--jobs") {
        args.nth(1).map(|n| n.parse()).transpose()?.unwrap_or(1)
    } else {
        1
    };
    // `kyverno-fuzz --x509 [ITERATIONS]`: the DER reader on its own.
    if args.peek().is_some_and(|a| a == "--x509") {
        let iterations = args
            .nth(1)
            .map(|a| a.parse())
            .transpose()?
            .unwrap_or(1_000_000);
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let pems = kyverno_fuzz::certificates(&root.join("test_data"))?;
        let started = std::time::Instant::now();
        let (runs, panics) = kyverno_fuzz::run_x509(&pems, iterations, 0x509)?;
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        println!(
            "x509_decode: {runs} executions in {secs:.1} s ({:.0}/s), {} panics",
            runs as f64 / secs,
            panics.len()
        );
        for pem in &panics {
            println!("panic on:\n{pem}");
        }
        return Ok(if panics.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    // `kyverno-fuzz --manifests [ITERATIONS]`: the signed-manifest readers.
    if args.peek().is_some_and(|a| a == "--manifests") {
        let iterations = args
            .nth(1)
            .map(|a| a.parse())
            .transpose()?
            .unwrap_or(100_000);
        let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
        let signed: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(
            root.join("test_data/manifests/signed.json"),
        )?)?;
        let started = std::time::Instant::now();
        let (runs, panics) = kyverno_fuzz::run_manifests(&signed, iterations, 0x516)?;
        let secs = started.elapsed().as_secs_f64().max(1e-9);
        println!(
            "manifests: {runs} executions in {secs:.1} s ({:.0}/s), {} panics",
            runs as f64 / secs,
            panics.len()
        );
        for payload in &panics {
            println!("panic on:\n{}", String::from_utf8_lossy(payload));
        }
        return Ok(if panics.is_empty() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    // `kyverno-fuzz --replay FILE…`: times each finding again.
    if args.peek().is_some_and(|a| a == "--replay") {
        for file in args.skip(1) {
            let payload = std::fs::read(&file)?;
            match kyverno_fuzz::exercise(&payload) {
                Ok(took) => println!("{file}: {:.1} ms", took.as_secs_f64() * 1000.0),
                Err(panic) => println!("{file}: panic: {panic}"),
            }
        }
        return Ok(ExitCode::SUCCESS);
    }
    let iterations = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(100_000);
    let seed = args
        .next()
        .map(|a| a.parse())
        .transpose()?
        .unwrap_or(0x5eed);
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let seeds = kyverno_fuzz::seeds(&root.join("test_data"))?;
    let options = kyverno_fuzz::Options {
        iterations,
        seed,
        time_limit: Duration::from_millis(500),
        findings: root.join("target/fuzz-findings"),
        keep_current: std::env::var_os("FUZZ_KEEP_CURRENT").is_some(),
    };
    let report = kyverno_fuzz::run_parallel(&seeds, &options, jobs)?;
    let secs = report.elapsed.as_secs_f64().max(1e-9);
    println!(
        "{} executions in {:.1} s ({:.0}/s) from {} seeds, seed {seed}",
        report.executions,
        secs,
        report.executions as f64 / secs,
        seeds.len()
    );
    println!(
        "slowest call: {:.1} ms",
        report.slowest.as_secs_f64() * 1000.0
    );
    if let Some(kib) = kyverno_fuzz::peak_rss_kib() {
        println!("peak resident memory: {:.1} MiB", kib as f64 / 1024.0);
    }
    for path in &report.panics {
        println!("panic: {}", path.display());
    }
    for (path, took) in &report.slow {
        println!(
            "slow ({:.0} ms): {}",
            took.as_secs_f64() * 1000.0,
            path.display()
        );
    }
    Ok(if report.panics.is_empty() && report.slow.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
