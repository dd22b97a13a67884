//! Native cost of one `validate` call (payload bytes → response), on the
//! workloads of `test_data/bench/workloads.jsonl` (the seed rule and
//! Kyverno's Pod Security Standards as patterns, CEL and `podSecurity`).
//! Native times show where the engine spends its time; the wasm figures
//! that matter come from `make bench` (benches/validate.rs).
//!
//!     cargo bench --bench engine [-- FILTER]
use std::time::{Duration, Instant};

use serde_json::Value;

const CALLS: usize = 200;

fn main() -> anyhow::Result<()> {
    let filter = std::env::args().skip(1).find(|a| !a.starts_with('-'));
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/test_data/bench/workloads.jsonl"
    );
    println!("{:<36} {:>10} {:>10}", "workload", "p50", "p95");
    for line in std::fs::read_to_string(path)?.lines() {
        let case: Value = serde_json::from_str(line)?;
        let id = case["id"].as_str().unwrap_or_default();
        if filter.as_deref().is_some_and(|f| !id.contains(f)) {
            continue;
        }
        let payload = serde_json::to_vec(&case["payload"])?;
        let mut times: Vec<Duration> = (0..CALLS)
            .map(|_| {
                let start = Instant::now();
                std::hint::black_box(kyverno_validate_policy::admission::validate(&payload));
                start.elapsed()
            })
            .collect();
        times.sort();
        println!(
            "{:<36} {:>10?} {:>10?}",
            id,
            times[CALLS / 2],
            times[CALLS * 95 / 100]
        );
    }
    Ok(())
}
