//! The fuzz harness as part of `make test`: every corpus input (hostile on
//! purpose, or found by a campaign) and a short campaign go through both
//! entry points without a panic. Speed is measured by `make fuzz`, not here.
use std::path::PathBuf;
use std::time::Duration;

fn test_data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../test_data")
}

#[test]
fn every_corpus_input_goes_through_both_entry_points() {
    let dir = test_data().join("fuzz/corpus");
    let mut seen = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let payload = std::fs::read(&path).unwrap();
        if let Err(panic) = kyverno_fuzz::exercise(&payload) {
            panic!("{}: {panic}", path.display());
        }
        seen += 1;
    }
    assert!(seen >= 6, "the corpus lost its inputs");
}

#[test]
fn hostile_inputs_are_answered_not_trapped() {
    // Each corpus input gets a response that says what it is about.
    let corpus = test_data().join("fuzz/corpus");
    let respond = |name: &str| {
        let payload = std::fs::read(corpus.join(name)).unwrap();
        serde_json::to_value(kyverno_validate_policy::admission::validate(&payload)).unwrap()
    };
    let deep = respond("request-nested-10000-deep.json");
    assert_eq!(deep["accepted"], false);
    assert!(
        deep["message"]
            .as_str()
            .unwrap()
            .contains("recursion limit exceeded"),
        "{deep}"
    );
    let foreach = respond("foreach-three-deep-over-5000.json");
    assert_eq!(foreach["accepted"], false, "{foreach}");
}

#[test]
fn a_short_campaign_finds_no_panic() {
    let seeds = kyverno_fuzz::seeds(&test_data()).unwrap();
    let options = kyverno_fuzz::Options {
        iterations: 100,
        seed: 7,
        // Only a hang would trip this in a debug build.
        time_limit: Duration::from_secs(120),
        findings: std::env::temp_dir().join("kyverno-fuzz-test-findings"),
        keep_current: false,
    };
    let report = kyverno_fuzz::run(&seeds, &options).unwrap();
    assert_eq!(report.executions, 100);
    assert!(report.panics.is_empty(), "{:?}", report.panics);
    assert!(report.slow.is_empty(), "{:?}", report.slow);
}

#[test]
fn damaged_certificates_never_panic_the_der_reader() {
    let pems = kyverno_fuzz::certificates(&test_data()).unwrap();
    assert!(pems.len() >= 5);
    let (runs, panics) = kyverno_fuzz::run_x509(&pems, 2_000, 11).unwrap();
    assert_eq!(runs, 2_000);
    assert!(panics.is_empty(), "{panics:?}");
}

#[test]
fn damaged_signed_manifests_never_panic_their_readers() {
    let signed: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(test_data().join("manifests/signed.json")).unwrap(),
    )
    .unwrap();
    let (runs, panics) = kyverno_fuzz::run_manifests(&signed, 300, 5).unwrap();
    assert_eq!(runs, 300);
    assert!(panics.is_empty(), "{} panics", panics.len());
}

#[test]
fn parallel_jobs_share_the_iterations() {
    let seeds = kyverno_fuzz::seeds(&test_data()).unwrap();
    let options = kyverno_fuzz::Options {
        iterations: 61,
        seed: 3,
        time_limit: std::time::Duration::from_secs(30),
        findings: std::env::temp_dir()
            .join(format!("kyverno-fuzz-parallel-{}", std::process::id())),
        keep_current: true,
    };
    let report = kyverno_fuzz::run_parallel(&seeds, &options, 2).unwrap();
    assert_eq!(report.executions, 61);
    assert!(report.panics.is_empty(), "{:?}", report.panics);
    // Each job leaves the last input it ran.
    for seed in [3, 4] {
        let current = options.findings.join(format!("current-{seed}.json"));
        assert!(!std::fs::read(&current).unwrap().is_empty(), "{current:?}");
    }
}
