//! `validate` latency of the built module through the waPC host, on the
//! workloads of `test_data/bench/workloads.jsonl` (the same as
//! `../shared/perf/run`: the seed Namespace rule and Kyverno's Pod Security
//! Standards as 20 pattern rules, 19 CEL rules and one `podSecurity` rule,
//! each on a Pod and a Deployment): p50/p95 with a fresh instance per call
//! (what policy-server does for every request) and with one reused instance.
//!
//! Two more workloads are built here: a 1 MiB ConfigMap (1,000 values of
//! 1,000 bytes) against a `deny` rule and a CEL rule, where the cost is
//! reading the request, which `../shared/perf/run`'s floor guest pays too.
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
    let mut cases: Vec<(String, Vec<u8>)> = Vec::new();
    for line in std::fs::read_to_string(workloads)?.lines() {
        let case: Value = serde_json::from_str(line)?;
        let id = case["id"].as_str().unwrap_or_default().to_string();
        cases.push((id, serde_json::to_vec(&case["payload"])?));
    }
    cases.extend(large_configmap()?);
    for (id, payload) in cases {
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

/// A 1 MiB ConfigMap against a `deny` rule and against a CEL rule.
fn large_configmap() -> anyhow::Result<Vec<(String, Vec<u8>)>> {
    let data: serde_json::Map<String, Value> = (0..1000)
        .map(|i| {
            let value: String = (0..1000)
                .map(|j| char::from(b'a' + ((i * 7 + j * 13) % 26) as u8))
                .collect();
            (format!("key-{i:04}"), Value::String(value))
        })
        .collect();
    let request = serde_json::json!({
        "uid": "1",
        "kind": {"group": "", "version": "v1", "kind": "ConfigMap"},
        "operation": "CREATE",
        "name": "big",
        "namespace": "default",
        "userInfo": {"username": "u"},
        "object": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "big", "namespace": "default", "labels": {"app": "a"}},
            "data": data,
        },
    });
    let matching = serde_json::json!({"any": [{"resources": {"kinds": ["ConfigMap"]}}]});
    let rules = [
        (
            "configmap-1mib-deny",
            serde_json::json!({"name": "keys", "match": matching, "validate": {
                "message": "too many keys",
                "deny": {"conditions": {"any": [{
                    "key": "{{ length(keys(request.object.data)) }}",
                    "operator": "GreaterThan",
                    "value": 5000,
                }]}},
            }}),
        ),
        (
            "configmap-1mib-cel",
            serde_json::json!({"name": "size", "match": matching, "validate": {
                "cel": {"expressions": [{"expression": "size(object.data) < 5000"}]},
            }}),
        ),
    ];
    rules
        .into_iter()
        .map(|(id, rule)| {
            let payload = serde_json::json!({
                "request": request,
                "settings": {"validationFailureAction": "Enforce", "rules": [rule]},
            });
            Ok((id.to_string(), serde_json::to_vec(&payload)?))
        })
        .collect()
}
