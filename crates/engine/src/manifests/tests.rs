use super::*;

/// Keys and signed messages made for these tests
/// (`test_data/manifests/signed.json`): a Service `web` signed as gzipped
/// YAML (`plain`) and as a tar.gz holding it beside a ConfigMap and a
/// README (`tarball`), each signed by `alice` and by `bob`.
fn signed() -> Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../test_data/manifests/signed.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn service(annotations: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": "web", "namespace": "default", "uid": "1234",
            "annotations": annotations},
        "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}],
            "selector": {"app": "web"}, "clusterIP": "10.0.0.7", "type": "ClusterIP"}})
}

fn signed_by(form: &str, signers: &[&str]) -> Value {
    let s = signed();
    let mut annotations = json!({"cosign.sigstore.dev/message": s[form]["message"]});
    for (i, who) in signers.iter().enumerate() {
        let key = if i == 0 {
            "cosign.sigstore.dev/signature".to_string()
        } else {
            format!("cosign.sigstore.dev/signature_{i}")
        };
        annotations[key] = s[form][who].clone();
    }
    service(annotations)
}

fn keys(names: &[&str]) -> Value {
    let s = signed();
    Value::Array(
        names
            .iter()
            .map(|n| json!({"keys": {"publicKeys": s[n]}}))
            .collect(),
    )
}

fn compiled(manifests: Value) -> CompiledManifests {
    let mut diags = Diagnostics::default();
    let c = CompiledManifests::compile(&manifests, "manifests", &mut diags);
    assert!(diags.is_empty(), "{}", diags.summary());
    c.unwrap()
}

fn check(manifests: Value, object: &Value) -> (RuleStatus, String) {
    compiled(manifests).evaluate(object, false)
}

#[test]
fn signed_resources_verify_by_key_and_count() {
    let cases = [
        (
            "plain_yaml_signed_by_the_key",
            json!({"attestors": [{"entries": keys(&["alice"])}]}),
            signed_by("plain", &["alice"]),
            RuleStatus::Pass,
            "verified manifest signatures; manifest verification succeeded; verifiedCount 1; requiredCount 1",
        ),
        (
            "tarball_signed_by_the_key",
            json!({"attestors": [{"entries": keys(&["alice"])}]}),
            signed_by("tarball", &["alice"]),
            RuleStatus::Pass,
            "verifiedCount 1",
        ),
        (
            "one_of_two_keys_is_enough_with_count_one",
            json!({"attestors": [{"count": 1, "entries": keys(&["bob", "alice"])}]}),
            signed_by("plain", &["alice"]),
            RuleStatus::Pass,
            "verifiedCount 1; requiredCount 1",
        ),
        (
            "count_one_reached_before_a_wrong_key",
            json!({"attestors": [{"count": 1, "entries": keys(&["alice", "bob"])}]}),
            signed_by("plain", &["alice"]),
            RuleStatus::Pass,
            "verifiedCount 1; requiredCount 1",
        ),
        (
            "every_key_by_default_each_with_its_signature",
            json!({"attestors": [{"entries": keys(&["alice", "bob"])}]}),
            signed_by("plain", &["bob", "alice"]),
            RuleStatus::Pass,
            "verifiedCount 2; requiredCount 2",
        ),
        (
            "unsigned_resource_fails",
            json!({"attestors": [{"entries": keys(&["alice"])}]}),
            service(json!({})),
            RuleStatus::Fail,
            ".attestors[0].entries[0].keys: YAML manifest not found for this resource: message not found",
        ),
        (
            "message_without_signature_fails",
            json!({"attestors": [{"entries": keys(&["alice"])}]}),
            signed_by("plain", &[]),
            RuleStatus::Fail,
            "failed to verify signature: signature not found",
        ),
        (
            "wrong_key_is_an_error",
            json!({"attestors": [{"entries": keys(&["bob"])}]}),
            signed_by("plain", &["alice"]),
            RuleStatus::Error,
            "error occurred during manifest verification: .attestors[0].entries[0].keys: failed to verify signature",
        ),
        (
            "nested_attestor_sets",
            json!({"attestors": [{"entries": [{"attestor": {"count": 1, "entries": keys(&["alice", "bob"])}}]}]}),
            signed_by("plain", &["alice"]),
            RuleStatus::Pass,
            "verifiedCount 1",
        ),
        (
            "another_annotation_domain",
            json!({"annotationDomain": "signing.example.com", "attestors": [{"entries": keys(&["alice"])}]}),
            signed_by("plain", &["alice"]),
            RuleStatus::Fail,
            "message not found",
        ),
    ];
    for (name, manifests, object, status, message) in cases {
        let (got, text) = check(manifests, &object);
        assert_eq!(got, status, "{name}: {text}");
        assert!(text.contains(message), "{name}: {text}");
    }
}

#[test]
fn changed_content_fails_with_the_difference() {
    let mut object = signed_by("plain", &["alice"]);
    object["spec"]["selector"]["app"] = json!("other");
    object["spec"]["ports"][0]["nodePort"] = json!(30080); // ignored for Services
    let manifests = json!({"attestors": [{"entries": keys(&["alice"])}]});
    let (status, message) = check(manifests.clone(), &object);
    assert_eq!(status, RuleStatus::Fail, "{message}");
    assert_eq!(
        message,
        "manifest verification failed; verifiedCount 0; requiredCount 1; message \
         .attestors[0].entries[0].keys: failed to verify signature. diff found; \
         {\"items\":[{\"key\":\"spec.selector.app\",\"values\":{\"after\":\"other\",\"before\":\"web\"}}]}"
    );
    // The rule's ignoreFields take it out.
    let ignoring = json!({"attestors": [{"entries": keys(&["alice"])}],
        "ignoreFields": [{"objects": [{"kind": "Service"}], "fields": ["spec.selector.app"]}]});
    assert_eq!(check(ignoring, &object).0, RuleStatus::Pass);
    let elsewhere = json!({"attestors": [{"entries": keys(&["alice"])}],
        "ignoreFields": [{"objects": [{"kind": "Deployment"}], "fields": ["spec.selector.app"]}]});
    assert_eq!(check(elsewhere, &object).0, RuleStatus::Fail);
}

#[test]
fn dry_runs_pass_and_bad_messages_are_errors() {
    let manifests = compiled(json!({"attestors": [{"entries": keys(&["alice"])}]}));
    assert_eq!(
        manifests.evaluate(&service(json!({})), true),
        (
            RuleStatus::Pass,
            "allowed because of DryRun request".to_string()
        )
    );
    let bad = service(json!({"cosign.sigstore.dev/message": "%%%",
        "cosign.sigstore.dev/signature": "AAAA"}));
    let (status, message) = manifests.evaluate(&bad, false);
    assert_eq!(status, RuleStatus::Error, "{message}");
    assert!(
        message.contains("failed to decode base64 message"),
        "{message}"
    );
    // A gzip bomb stops at the inflate limit.
    let zeros = vec![0u8; MAX_INFLATED + 1];
    let compressed = miniz_oxide::deflate::compress_to_vec(&zeros, 9);
    let mut bomb = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];
    bomb.extend(compressed);
    assert!(gunzip(&bomb).unwrap_err().contains("the limit"));
}

#[test]
fn settings_name_what_a_kubewarden_policy_cannot_do() {
    let s = signed();
    let cases = [
        (
            json!({"attestors": [{"entries": [{"keys": {"publicKeys": s["rsa"]}}]}]}),
            "manifests.attestors[0].entries[0].keys.publicKeys: only ECDSA P-256 public keys are supported for manifests (the key is RSA, Ed25519 or another type)",
        ),
        (
            json!({"attestors": [{"entries": [{"keyless": {"subject": "me"}}]}]}),
            "manifests.attestors[0].entries[0].keyless: keyless attestors need Fulcio and Rekor",
        ),
        (
            json!({"attestors": [{"entries": keys(&["alice"])}], "repository": "ghcr.io/acme/bundle"}),
            "manifests.repository: manifests kept in an OCI bundle",
        ),
        (
            json!({"attestors": [{"entries": keys(&["alice"])}], "dryRun": {"enable": true}}),
            "manifests.dryRun.enable: a dry-run create needs write access",
        ),
        (json!({"attestors": []}), "manifests.attestors: needs at least one attestor set"),
        (
            json!({"attestors": [{"entries": [{"keys": {"publicKeys": "k8s://ns/secret"}}]}]}),
            "manifests.attestors[0].entries[0].keys.publicKeys: needs a PEM public key",
        ),
    ];
    for (manifests, want) in cases {
        let mut diags = Diagnostics::default();
        assert!(CompiledManifests::compile(&manifests, "manifests", &mut diags).is_none());
        let summary = diags.summary();
        assert!(summary.contains(want), "{summary}\nwanted: {want}");
    }
}

#[test]
fn ignore_objects_match_as_k8s_manifest_sigstore_does() {
    let target = ObjectRef {
        group: "apps".into(),
        version: "v1".into(),
        kind: "Deployment".into(),
        name: "web-1".into(),
        namespace: String::new(),
    };
    let cases = [
        ("empty_matches_all", ObjectRef::default(), true),
        (
            "prefix",
            ObjectRef {
                name: "web-*".into(),
                ..ObjectRef::default()
            },
            true,
        ),
        (
            "alternatives",
            ObjectRef {
                kind: "Pod, Deployment".into(),
                ..ObjectRef::default()
            },
            true,
        ),
        (
            "dash_is_empty_only",
            ObjectRef {
                namespace: "-".into(),
                ..ObjectRef::default()
            },
            true,
        ),
        (
            "exact_mismatch",
            ObjectRef {
                group: "batch".into(),
                ..ObjectRef::default()
            },
            false,
        ),
    ];
    for (name, pattern, want) in cases {
        assert_eq!(pattern.selects(&target), want, "{name}");
    }
}

#[test]
fn ignore_fields_find_the_literal_every_match_needs() {
    let cases = [
        (
            "dotted_field",
            "spec.ports..*.targetPort.*",
            Some("targetPort"),
        ),
        (
            "optional_last_character",
            "metadata.annotationsx*",
            Some("annotations"),
        ),
        ("alternatives_are_not_read", "a.(bb|cc).*", None),
        ("classes_are_not_read", "spec.[a-z]+.*", None),
        ("escapes_are_not_read", "spec\\.x.*", None),
        ("only_wildcards", ".*", None),
    ];
    for (name, pattern, want) in cases {
        assert_eq!(required_literal(pattern).as_deref(), want, "{name}");
    }
}

#[test]
fn ignore_fields_match_as_regexes_whatever_the_engine() {
    // `.` is any character, the match is unanchored, and a pattern too
    // large for the small automaton is matched by regex-lite.
    let long = format!("{}.*", "x".repeat(200));
    let cases = [
        (
            "dots_are_wildcards",
            "spec.ports..*.targetPort.*",
            "spec.ports.0.targetPort",
            true,
        ),
        ("unanchored", "status.*", "metadata.status.x", true),
        (
            "literal_missing",
            "spec.ports..*.targetPort.*",
            "spec.ports.0.port",
            false,
        ),
        ("long_pattern", long.as_str(), &"x".repeat(201), true),
        (
            "long_pattern_missing",
            long.as_str(),
            &"x".repeat(199),
            false,
        ),
    ];
    for (name, pattern, text, want) in cases {
        let field = IgnoreField::compile(pattern).expect(name);
        assert_eq!(field.is_match(text), want, "{name}");
    }
}

#[test]
fn fields_that_only_moved_to_another_index_are_no_difference() {
    let manifest = json!({"spec": {"ports": [{"port": 80}, {"port": 443, "name": "https"}]}});
    let cases = [
        (
            "moved_to_the_next_element",
            json!({"spec": {"ports": [{"port": 80}, {"port": 443}, {"name": "https"}]}}),
            vec![],
        ),
        (
            "moved_and_changed",
            json!({"spec": {"ports": [{"port": 80}, {"port": 443}, {"name": "http"}]}}),
            vec![
                ("spec.ports.1.name".to_string(), json!("https"), Value::Null),
                ("spec.ports.2.name".to_string(), Value::Null, json!("http")),
            ],
        ),
        (
            "moved_under_another_field",
            json!({"spec": {"ports": [{"port": 80}, {"port": 443}], "names": [{"name": "https"}]}}),
            vec![
                ("spec.names.0.name".to_string(), Value::Null, json!("https")),
                ("spec.ports.1.name".to_string(), json!("https"), Value::Null),
            ],
        ),
    ];
    for (name, object, want) in cases {
        let got = diff(&manifest, &object, &[]);
        assert_eq!(got.shown, want, "{name}");
        assert!(!got.more, "{name}");
    }
}

#[test]
fn a_failure_lists_the_first_hundred_differences_in_key_order() {
    let manifest = json!({"kind": "ConfigMap", "data": {}});
    let data: serde_json::Map<String, Value> =
        (0..150).map(|i| (format!("k{i:03}"), json!("v"))).collect();
    let object = json!({"kind": "ConfigMap", "data": data});
    let got = diff(&manifest, &object, &["data.k000".to_string()]);
    assert!(got.more);
    assert_eq!(got.shown.len(), MAX_SHOWN);
    let keys: Vec<&str> = got.shown.iter().map(|(k, _, _)| k.as_str()).collect();
    assert_eq!(
        keys.first(),
        Some(&"data.k001"),
        "an ignored field is left out first"
    );
    assert_eq!(keys.last(), Some(&"data.k100"));
    let exactly = json!({"kind": "ConfigMap", "data": (0..MAX_SHOWN).map(|i| (format!("k{i:03}"), json!("v"))).collect::<serde_json::Map<_, _>>()});
    let got = diff(&manifest, &exactly, &[]);
    assert_eq!((got.shown.len(), got.more), (MAX_SHOWN, false));
}
