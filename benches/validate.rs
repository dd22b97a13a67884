//! `validate` latency of the built module through the waPC host, on the
//! workloads of `test_data/bench/workloads.jsonl` (the same as
//! `../shared/perf/run`: the seed Namespace rule and Kyverno's Pod Security
//! Standards as 20 pattern rules, 19 CEL rules and one `podSecurity` rule,
//! each on a Pod and a Deployment): p50/p95 with a fresh instance per call
//! (what policy-server does for every request) and with one reused instance.
//!
//!     make bench        # builds the module, then `cargo bench --bench validate`
#[path = "../tests/support/host.rs"]
mod host;

use std::time::{Duration, Instant};

use serde_json::Value;

const CALLS: usize = 200;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or_default()
}

fn main() -> anyhow::Result<()> {
    let wasm = host::wasm_path();
    let size = std::fs::metadata(&wasm)?.len();
    let module = host::PolicyModule::load(&wasm)?;
    println!(
        "module: {} ({:.2} MiB)",
        wasm.display(),
        size as f64 / f64::from(1 << 20)
    );
    println!(
        "{:<36} {:>8} {:>11} {:>11} {:>11} {:>11}",
        "workload", "verdict", "fresh p50", "fresh p95", "reused p50", "reused p95"
    );
    let workloads = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/test_data/bench/workloads.jsonl"
    );
    for line in std::fs::read_to_string(workloads)?.lines() {
        let case: Value = serde_json::from_str(line)?;
        let id = case["id"].as_str().unwrap_or_default();
        let payload = serde_json::to_vec(&case["payload"])?;
        let mut fresh = Vec::with_capacity(CALLS);
        let mut verdict = Value::Null;
        for _ in 0..CALLS {
            let start = Instant::now();
            let instance = module.instance()?;
            verdict = host::call(&instance, "validate", &payload)?;
            fresh.push(start.elapsed());
        }
        let instance = module.instance()?;
        let mut reused = Vec::with_capacity(CALLS);
        for _ in 0..CALLS {
            let start = Instant::now();
            host::call(&instance, "validate", &payload)?;
            reused.push(start.elapsed());
        }
        fresh.sort();
        reused.sort();
        let verdict = match verdict["accepted"].as_bool() {
            Some(true) => "accept",
            Some(false) => "reject",
            None => "?",
        };
        println!(
            "{:<36} {:>8} {:>11?} {:>11?} {:>11?} {:>11?}",
            id,
            verdict,
            percentile(&fresh, 0.5),
            percentile(&fresh, 0.95),
            percentile(&reused, 0.5),
            percentile(&reused, 0.95)
        );
    }
    Ok(())
}
