//! The worst inputs found, timed: every payload of `test_data/fuzz/corpus/`
//! (hostile requests and settings: deep nesting, 60,000-character
//! wildcards, lists of 5,000 under three nested foreach, catastrophic
//! regexes, huge CEL lists, doubling JMESPath pipes, …) and of
//! `test_data/bench/hostile/` (the PSS rule sets against a 2.8 MiB Pod) through the built
//! module with a fresh instance per call, as policy-server runs it, and
//! natively with the memory the engine allocates at its peak (a 64-bit
//! upper bound of the module's: wasm32 values are smaller).
//!
//!     make bench-hostile   # builds the module, then `cargo bench --bench hostile`
#[path = "../tests/support/host.rs"]
mod host;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// Counts live bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// A benchmark's own allocator: the module's code is not affected.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(live, Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const CALLS: usize = 5;

fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times.get(times.len() / 2).copied().unwrap_or_default()
}

fn main() -> anyhow::Result<()> {
    let module = host::PolicyModule::load(&host::wasm_path())?;
    // The fuzz corpus, and large requests too slow to be fuzz seeds.
    let mut files = Vec::new();
    for dir in ["test_data/fuzz/corpus", "test_data/bench/hostile"] {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        files.extend(
            std::fs::read_dir(dir)?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|e| e == "json")),
        );
    }
    files.sort();
    println!(
        "{:<40} {:>9} {:>9} {:>12} {:>12} {:>12}",
        "input", "KiB", "verdict", "wasm fresh", "native", "native peak"
    );
    let mut worst = Duration::ZERO;
    for file in files {
        let payload = std::fs::read(&file)?;
        let name = file
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        let mut wasm = Vec::with_capacity(CALLS);
        let mut verdict = String::new();
        for _ in 0..CALLS {
            let start = Instant::now();
            let instance = module.instance()?;
            let response = host::call(&instance, "validate", &payload)?;
            wasm.push(start.elapsed());
            verdict = match response["accepted"].as_bool() {
                Some(true) => "accept".into(),
                Some(false) => "reject".into(),
                None => "?".into(),
            };
        }
        let mut native = Vec::with_capacity(CALLS);
        let mut peak = 0;
        for _ in 0..CALLS {
            let base = LIVE.load(Ordering::Relaxed);
            PEAK.store(base, Ordering::Relaxed);
            let start = Instant::now();
            let response = kyverno_validate_policy::admission::validate(&payload);
            native.push(start.elapsed());
            drop(response);
            peak = PEAK.load(Ordering::Relaxed).saturating_sub(base);
        }
        let wasm = median(wasm);
        worst = worst.max(wasm);
        println!(
            "{:<40} {:>9.1} {:>9} {:>12.2?} {:>12.2?} {:>8.1} MiB",
            name,
            payload.len() as f64 / 1024.0,
            verdict,
            wasm,
            median(native),
            peak as f64 / f64::from(1 << 20)
        );
    }
    println!("slowest through the module: {worst:.2?} (policy-server's deadline: 2 s)");
    Ok(())
}
