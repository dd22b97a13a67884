//! A whole Kyverno policy manifest given as settings evaluates exactly like
//! its `spec` with the same name and autogen annotation.
use serde_json::{json, Value};

fn manifest(spec: Value) -> Value {
    json!({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
        "metadata": {"name": "require-labels", "annotations": {"pod-policies.kyverno.io/autogen-controllers": "none"}},
        "spec": spec})
}

fn respond(settings: &Value, request: &Value) -> Value {
    let payload = json!({"request": request, "settings": settings}).to_string();
    serde_json::to_value(kyverno_validate_policy::admission::validate(
        payload.as_bytes(),
    ))
    .expect("a response")
}

#[test]
fn a_manifest_evaluates_exactly_like_its_spec() {
    let rule = json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "validate": {"pattern": {"metadata": {"labels": {"team": "?*"}}}}});
    let spec = json!({"validationFailureAction": "Enforce", "rules": [rule]});
    let mut same_spec = spec.clone();
    same_spec["policyName"] = json!("require-labels");
    same_spec["autogenControllers"] = json!("none");
    let request = json!({"operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}, "spec": {}}});
    let from_manifest = respond(&manifest(spec), &request);
    assert_eq!(from_manifest, respond(&same_spec, &request));
    assert_eq!(from_manifest["accepted"], json!(false));
    assert!(
        from_manifest["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("require-labels: r: validation error")),
        "{from_manifest}"
    );
}
