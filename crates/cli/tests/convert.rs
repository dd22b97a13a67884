//! `kyverno-validate convert` as a user runs it: the built binary on the
//! fixtures in `test_data/cli/convert/`, its exit code, its messages, and
//! manifests that the Kubewarden CRDs' schemas accept.
mod support;

use std::io::Write;
use std::process::{Command, Output, Stdio};

use serde::Deserialize;
use serde_json::{json, Value};
use support::{covers, workspace, Crds};

const FIXTURES: [&str; 4] = [
    "disallow-privileged-containers.yaml",
    "require-team-label.yaml",
    "restrict-image-registries.yaml",
    "pod-resources.yaml",
];

fn fixture(name: &str) -> String {
    workspace()
        .join("test_data/cli/convert")
        .join(name)
        .to_string_lossy()
        .into_owned()
}

/// Runs the binary from the workspace root, so messages name the files
/// as passed.
fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_kyverno-validate"))
        .args(args)
        .current_dir(workspace())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    pipe.write_all(stdin.unwrap_or("").as_bytes()).unwrap();
    drop(pipe);
    child.wait_with_output().unwrap()
}

fn stderr_lines(output: &Output) -> Vec<String> {
    String::from_utf8(output.stderr.clone())
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Every YAML document of stdout, as JSON.
fn manifests(output: &Output) -> Vec<Value> {
    let text = String::from_utf8(output.stdout.clone()).unwrap();
    serde_yaml::Deserializer::from_str(&text)
        .map(|document| Value::deserialize(document).unwrap())
        .collect()
}

fn relative(name: &str) -> String {
    format!("test_data/cli/convert/{name}")
}

#[test]
fn fixtures_convert_to_manifests_the_crds_accept() {
    let files: Vec<String> = FIXTURES.iter().map(|f| relative(f)).collect();
    let args: Vec<&str> = ["convert"]
        .into_iter()
        .chain(files.iter().map(String::as_str))
        .collect();
    let output = run(&args, None);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(
        stderr_lines(&output),
        ["warning: test_data/cli/convert/pod-resources.yaml: document 1 (policy pod-resources): spec.rules[0]: rule `add-default-requests` is a `mutate` rule: left out, the module enforces validate rules only"]
    );
    let manifests = manifests(&output);
    let crds = Crds::load();
    for manifest in &manifests {
        assert_eq!(
            crds.problems(manifest),
            Vec::<String>::new(),
            "{manifest:#}"
        );
    }
    let summary: Vec<(&str, &str, &str)> = manifests
        .iter()
        .map(|m| {
            (
                m["kind"].as_str().unwrap(),
                m["metadata"]["name"].as_str().unwrap(),
                m["metadata"]["namespace"].as_str().unwrap_or(""),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            (
                "ClusterAdmissionPolicy",
                "disallow-privileged-containers",
                ""
            ),
            ("AdmissionPolicy", "require-team-label", "team-a"),
            ("ClusterAdmissionPolicy", "restrict-image-registries", ""),
            ("ClusterAdmissionPolicy", "pod-resources", ""),
        ]
    );
    let [privileged, team, registries, resources] = manifests.as_slice() else {
        panic!("four manifests");
    };
    // Autogen: the Pod rule reaches every pod controller.
    for (group, resource) in [
        ("", "pods"),
        ("", "pods/ephemeralcontainers"),
        ("", "replicationcontrollers"),
        ("apps", "deployments"),
        ("apps", "daemonsets"),
        ("batch", "cronjobs"),
    ] {
        assert!(
            covers(
                &privileged["spec"]["rules"],
                group,
                "v1",
                resource,
                "CREATE"
            ),
            "{resource}"
        );
    }
    assert!(!covers(
        &privileged["spec"]["rules"],
        "",
        "v1",
        "pods",
        "DELETE"
    ));
    assert_eq!(privileged["spec"]["backgroundAudit"], true);
    assert_eq!(
        privileged["spec"]["settings"]["policyName"],
        "disallow-privileged-containers"
    );
    assert_eq!(
        team["spec"]["rules"],
        json!([{"apiGroups": ["apps"], "apiVersions": ["v1"], "resources": ["deployments", "statefulsets"], "operations": ["CREATE", "UPDATE"]}])
    );
    assert_eq!(team["spec"]["failurePolicy"], "Ignore");
    assert_eq!(team["spec"]["timeoutSeconds"], 5);
    assert_eq!(
        registries["spec"]["contextAwareResources"],
        json!([{"apiVersion": "v1", "kind": "ConfigMap"}, {"apiVersion": "v1", "kind": "Namespace"}])
    );
    assert_eq!(
        registries["spec"]["rules"][0]["operations"],
        json!(["CREATE", "UPDATE", "DELETE"])
    );
    assert_eq!(registries["spec"]["settings"]["autogenControllers"], "none");
    // The mutate rule is gone; autogen covers the two controllers listed.
    let kept: Vec<&str> = resources["spec"]["settings"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(kept, ["validate-resources"]);
    assert_eq!(
        resources["spec"]["rules"],
        json!([
            {"apiGroups": [""], "apiVersions": ["*"], "resources": ["pods", "pods/ephemeralcontainers"], "operations": ["CREATE", "UPDATE"]},
            {"apiGroups": ["apps"], "apiVersions": ["*"], "resources": ["deployments", "statefulsets"], "operations": ["CREATE", "UPDATE"]},
        ])
    );
}

#[test]
fn json_output_is_one_array_of_the_same_manifests() {
    let file = relative(FIXTURES[0]);
    let yaml = manifests(&run(&["convert", &file], None));
    let output = run(&["convert", "--output", "json", &file], None);
    assert!(output.status.success(), "{output:?}");
    let json: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(json, Value::Array(yaml));
}

#[test]
fn dash_reads_standard_input() {
    let text = std::fs::read_to_string(fixture(FIXTURES[1])).unwrap();
    let output = run(
        &["convert", "--module", "file:///policy.wasm", "-"],
        Some(&text),
    );
    assert!(output.status.success(), "{output:?}");
    let manifests = manifests(&output);
    assert_eq!(manifests.len(), 1);
    assert_eq!(manifests[0]["spec"]["module"], "file:///policy.wasm");
    assert_eq!(manifests[0]["metadata"]["name"], "require-team-label");
}

#[test]
fn bad_input_names_file_and_document_and_writes_nothing() {
    let output = run(
        &[
            "convert",
            &relative("invalid/not-yaml.yaml"),
            &relative(FIXTURES[0]),
            &relative("invalid/unknown-kind.yaml"),
            "-",
        ],
        Some("---\nkind: ClusterPolicy\n"),
    );
    assert_eq!(output.status.code(), Some(1), "{output:?}");
    assert!(output.stdout.is_empty());
    assert_eq!(
        stderr_lines(&output),
        [
            "error: test_data/cli/convert/invalid/not-yaml.yaml: document 1: not YAML: did not find expected node content at line 7 column 5, while parsing a flow node",
            "error: test_data/cli/convert/invalid/unknown-kind.yaml: document 2: a `v1` `ConfigMap` is not a Kyverno policy: expected a Kyverno `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1)",
            "error: <stdin>: document 1: a `ClusterPolicy` without `apiVersion` is not a Kyverno policy: expected a Kyverno `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1)",
            "error: 3 problems found: no manifest written",
        ]
    );
}

#[test]
fn missing_files_and_usage_errors() {
    let output = run(&["convert", "no/such/file.yaml"], None);
    assert_eq!(output.status.code(), Some(1));
    let lines = stderr_lines(&output);
    assert!(
        lines[0].starts_with("error: no/such/file.yaml: cannot read it: "),
        "{lines:?}"
    );
    let output = run(&["convert"], None);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
    let output = run(&["convert", "--output", "xml", "x.yaml"], None);
    assert_eq!(output.status.code(), Some(2), "{output:?}");
}

/// The schema check itself: unknown fields (which the API server would
/// prune) and out-of-range values are caught.
#[test]
fn the_schema_check_catches_what_the_api_server_would_refuse() {
    let output = run(&["convert", &relative(FIXTURES[1])], None);
    let manifest = manifests(&output).remove(0);
    let crds = Crds::load();
    assert_eq!(crds.problems(&manifest), Vec::<String>::new());
    let cases = [
        (
            "/spec/contextAwareResources",
            json!([{"apiVersion": "v1", "kind": "ConfigMap"}]),
        ),
        ("/spec/mode", json!("block")),
        ("/spec/timeoutSeconds", json!(60)),
        ("/spec/rules/0/apiGroups", json!("apps")),
    ];
    for (pointer, value) in cases {
        let mut broken = manifest.clone();
        let (parent, key) = pointer.rsplit_once('/').unwrap();
        let target = broken.pointer_mut(parent).unwrap();
        target[key] = value;
        assert_ne!(crds.problems(&broken), Vec::<String>::new(), "{pointer}");
    }
}
