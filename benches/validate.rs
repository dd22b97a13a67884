//! `validate` latency through the waPC host, on the fixtures in
//! `test_data/cases.yaml`: p50/p95 with a fresh instance per call (what
//! policy-server does for every request) and with one reused instance.
//!
//!     make bench        # builds the module, then `cargo bench`
#[path = "../tests/support/fixtures.rs"]
mod fixtures;
#[path = "../tests/support/host.rs"]
mod host;

use std::time::{Duration, Instant};

const CALLS: usize = 200;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

fn main() -> anyhow::Result<()> {
    let wasm = host::wasm_path();
    let size = std::fs::metadata(&wasm)?.len();
    let module = host::PolicyModule::load(&wasm)?;
    println!("module: {} ({} KiB)", wasm.display(), size / 1024);
    println!(
        "{:<48} {:>12} {:>12} {:>12} {:>12}",
        "fixture", "fresh p50", "fresh p95", "reused p50", "reused p95"
    );
    for case in fixtures::cases() {
        let settings = fixtures::document(&case.settings);
        let request = fixtures::document(&case.request);
        let payload = host::validation_request(&settings, &request);
        let mut fresh = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let start = Instant::now();
            let instance = module.instance()?;
            instance
                .call("validate", &payload)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            fresh.push(start.elapsed());
        }
        let instance = module.instance()?;
        let mut reused = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let start = Instant::now();
            instance
                .call("validate", &payload)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            reused.push(start.elapsed());
        }
        fresh.sort();
        reused.sort();
        println!(
            "{:<48} {:>12?} {:>12?} {:>12?} {:>12?}",
            case.name,
            percentile(&fresh, 0.5),
            percentile(&fresh, 0.95),
            percentile(&reused, 0.5),
            percentile(&reused, 0.95)
        );
    }
    Ok(())
}
