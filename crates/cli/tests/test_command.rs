//! `kyverno-validate test` run as a user runs it, on the Kyverno test
//! folders in `test_data/cli/`.
use std::process::{Command, Output};

use serde_json::Value;

mod support;

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_kyverno-validate"))
        .args(args)
        .current_dir(support::workspace())
        .env("NO_COLOR", "1")
        .output()
        .expect("the binary runs")
}

#[test]
fn kyverno_test_folders_agree_with_their_expected_results() {
    let output = run(&["test", "test_data/cli/test"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    for folder in [
        "admission-user-info",
        "api-call-responses",
        "cluster-resources",
        "exceptions",
        "exclude-namespaces-dynamically",
        "foreach-values",
        "namespace-selector",
        "operations",
        "subresources",
    ] {
        assert!(
            stdout.contains(&format!("test_data/cli/test/{folder}/kyverno-test.yaml")),
            "{folder} not run:\n{stdout}"
        );
    }
    assert!(stdout.contains("│ ID │ POLICY"), "{stdout}");
    assert!(
        stdout.contains("Test Summary: 28 tests passed and 0 tests failed"),
        "{stdout}"
    );
    // Rows say why a result holds where Kyverno does: an excluded resource,
    // a policy type this engine does not run.
    assert!(stdout.contains("│ Excluded │"), "{stdout}");
    assert!(
        stdout.contains("not checked: ValidatingPolicy policies are not run by this engine"),
        "{stdout}"
    );
}

#[test]
fn a_wrong_expectation_fails_the_run_and_says_what_happened() {
    let output = run(&["test", "test_data/cli/failing"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    assert!(stdout.contains("Want fail, got pass"), "{stdout}");
    assert!(
        stdout.contains("Test Summary: 0 tests passed and 1 tests failed"),
        "{stdout}"
    );
}

#[test]
fn fail_only_prints_the_failures_after_the_summary() {
    let output = run(&["test", "--fail-only", "test_data/cli/failing"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "{stdout}");
    let summary = stdout
        .find("Test Summary: 1 out of 1 tests failed")
        .expect(&stdout);
    let failures = stdout.find("Aggregated Failed Test Cases").expect(&stdout);
    assert!(summary < failures, "{stdout}");
    // One table, after the summary.
    assert_eq!(stdout.matches("│ ID │ POLICY").count(), 1, "{stdout}");
    assert!(stdout.contains("Want fail, got pass"), "{stdout}");
}

#[test]
fn detailed_results_add_each_rules_message() {
    let output = run(&[
        "test",
        "--detailed-results",
        "test_data/cli/test/namespace-selector",
    ]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "{stdout}");
    assert!(stdout.contains("│ MESSAGE"), "{stdout}");
    assert!(stdout.contains("validation error"), "{stdout}");
}

#[test]
fn the_test_case_selector_runs_the_results_it_matches() {
    // (selector, results run)
    let cases = [
        ("policy=*,rule=*,resource=*", 28),
        ("policy=require-team-label", 3),
        ("policy=require-team-*,resource=labelled", 1),
        ("policy=nothing-like-it", 0),
    ];
    for (selector, want) in cases {
        let output = run(&["test", "-t", selector, "test_data/cli/test"]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "{selector}: {stdout}");
        // A test with nothing selected is not run.
        assert_eq!(
            stdout.matches("Loading test").count() == 0,
            want == 0,
            "{selector}: {stdout}"
        );
        assert!(
            stdout.contains(&format!(
                "Test Summary: {want} tests passed and 0 tests failed"
            )),
            "{selector}: {stdout}"
        );
    }
}

#[test]
fn output_formats_write_kyvernos_tables() {
    let cases = [
        ("json", "\"POLICY\": \"require-team-label\""),
        ("yaml", "- ID: 1\n  POLICY: require-team-label"),
        (
            "markdown",
            "| ID | POLICY | RULE | RESOURCE | RESULT | REASON | \n|----|",
        ),
        ("junit", "<testsuites tests=\"1\" failures=\"1\">"),
        ("junit", "<failure message=\"Want fail, got pass\">"),
    ];
    for (format, want) in cases {
        let output = run(&["test", "-o", format, "test_data/cli/failing"]);
        let stdout = String::from_utf8_lossy(&output.stdout);
        assert_eq!(output.status.code(), Some(1), "{format}: {stdout}");
        assert!(stdout.contains(want), "{format}: {stdout}");
        assert!(
            stdout.contains("Test Summary: 0 tests passed and 1 tests failed"),
            "{format}: {stdout}"
        );
    }
    // Our JSON report and Kyverno's tables do not mix.
    let output = run(&[
        "test",
        "--output",
        "json",
        "-o",
        "json",
        "test_data/cli/failing",
    ]);
    assert_eq!(output.status.code(), Some(2));
}

#[test]
fn json_output_lists_every_result_for_machines() {
    let output = run(&[
        "test",
        "--output",
        "json",
        "test_data/cli/test/namespace-selector",
    ]);
    assert!(output.status.success());
    let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert_eq!(report["passed"], 3);
    assert_eq!(report["failed"], 0);
    let results = report["tests"][0]["results"].as_array().unwrap();
    assert_eq!(results[0]["expected"], "fail");
    assert_eq!(results[0]["got"], "fail");
    assert_eq!(results[2]["got"], Value::Null);
}

#[test]
fn paths_without_tests_and_broken_files_are_errors() {
    // As `kyverno test`: finding no test is said, and fails only with
    // `--require-tests`.
    let output = run(&["test", "test_data/cli/convert"]);
    assert_eq!(output.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no `kyverno-test.yaml` found"));
    let output = run(&["test", "--require-tests", "test_data/cli/convert"]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("no `kyverno-test.yaml` found"));
    let output = run(&["test", "test_data/cli/convert/invalid/not-yaml.yaml"]);
    assert_eq!(output.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(stdout.contains("Error:"), "{stdout}");
    assert!(stdout.contains("not-yaml.yaml"), "{stdout}");
}

/// Every result of the folders that exercise the test format's features
/// is answered by the rule itself, not passed as `Excluded`.
#[test]
fn test_format_features_reach_the_rules() {
    for (folder, got) in [
        ("subresources", vec!["fail", "pass"]),
        ("operations", vec!["fail", "fail", ""]),
        (
            "cluster-resources",
            vec!["pass", "fail", "fail", "pass", ""],
        ),
    ] {
        let output = run(&[
            "test",
            "--output",
            "json",
            &format!("test_data/cli/test/{folder}"),
        ]);
        let report: Value = serde_json::from_slice(&output.stdout).expect("JSON");
        let results = report["tests"][0]["results"].as_array().unwrap();
        let answers: Vec<&str> = results
            .iter()
            .map(|r| r["got"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(answers, got, "{folder}: {report}");
    }
}
