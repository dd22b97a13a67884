//! The built module, loaded through wapc + wasmtime-provider as Kubewarden's
//! policy-server loads it, with a fresh instance per call.
//! Needs `make policy.wasm` first (the `test` make target does it).
#[path = "support/fixtures.rs"]
mod fixtures;
#[path = "support/host.rs"]
mod host;
#[path = "support/session.rs"]
mod session;

use std::sync::Arc;

use serde_json::{json, Value};

fn module() -> host::PolicyModule {
    host::PolicyModule::load(&host::wasm_path())
        .expect("the release module is built (`make policy.wasm`)")
}

#[test]
fn fixtures_give_the_expected_verdicts_through_the_wasm_host() {
    let module = module();
    for case in fixtures::cases() {
        let settings = fixtures::document(&case.settings);
        let request = fixtures::document(&case.request);
        let instance = module.instance().expect("instance");
        let validity = host::call(
            &instance,
            "validate_settings",
            settings.to_string().as_bytes(),
        )
        .expect("validate_settings");
        assert_eq!(validity["valid"], json!(true), "{}: {validity}", case.name);
        let replay = case
            .session
            .as_ref()
            .map(|s| Arc::new(session::Session::load(&fixtures::test_data().join(s))));
        let fresh = match &replay {
            Some(replay) => {
                let replay = Arc::clone(replay);
                module.instance_with(move |binding, ns, op, payload| {
                    assert_eq!(binding, "kubewarden");
                    replay.answer(ns, op, payload)
                })
            }
            None => module.instance(),
        }
        .expect("instance");
        let response = host::call(
            &fresh,
            "validate",
            &host::validation_request(&settings, &request),
        )
        .expect("validate");
        fixtures::assert_response(&case, &response);
        if let Some(replay) = &replay {
            assert!(
                replay.finished(),
                "{}: calls left in the session",
                case.name
            );
        }
    }
}

#[test]
fn protocol_version_is_v1() {
    let instance = module().instance().expect("instance");
    let bytes = instance
        .call("protocol_version", b"")
        .expect("protocol_version");
    assert_eq!(
        serde_json::from_slice::<Value>(&bytes).expect("json"),
        json!("v1")
    );
}

#[test]
fn invalid_settings_are_reported_with_paths_through_the_host() {
    let instance = module().instance().expect("instance");
    let settings = json!({"rules": [{"name": "a", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "validate": {"pattern": {"spec": {"X()": "x"}}, "deny": {}}}], "bogus": 1});
    let response = host::call(
        &instance,
        "validate_settings",
        settings.to_string().as_bytes(),
    )
    .expect("call");
    assert_eq!(response["valid"], json!(false));
    let message = response["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("bogus: unknown field `bogus`"),
        "{message}"
    );
    assert!(
        message.contains("rules[0].validate: has `pattern`, `deny`"),
        "{message}"
    );
}

#[test]
fn garbage_requests_are_rejected_not_trapped() {
    let instance = module().instance().expect("instance");
    let response = host::call(&instance, "validate", b"{not json").expect("validate answers");
    assert_eq!(response["accepted"], json!(false));
    let deep = "[".repeat(10_000) + &"]".repeat(10_000);
    let payload = format!(r#"{{"settings": {{"rules": []}}, "request": {deep}}}"#);
    let response = host::call(
        &module().instance().expect("instance"),
        "validate",
        payload.as_bytes(),
    )
    .expect("validate answers");
    assert_eq!(response["accepted"], json!(false));
}

#[test]
fn long_jmespath_operator_chains_are_refused_not_trapped() {
    // 48 KiB of `a[].`: under the length limit, but its tree would
    // overflow the guest's 1 MiB stack when built or dropped.
    let query = format!("{{{{ {}a }}}}", "a[].".repeat(12_000));
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "validate": {"deny": {"conditions": {"any": [
            {"key": query, "operator": "Equals", "value": "x"}]}}}}]});
    let response = host::call(
        &module().instance().expect("instance"),
        "validate_settings",
        settings.to_string().as_bytes(),
    )
    .expect("validate_settings answers");
    assert_eq!(response["valid"], json!(false));
    let message = response["message"].as_str().unwrap_or_default();
    assert!(message.contains("nests deeper than 64 levels"), "{message}");
}

#[test]
fn a_reused_instance_keeps_its_memory_bounded() {
    // A fresh instance leaves each request's working data allocated (the
    // instance is thrown away); a host that reuses the instance must still
    // see memory bounded. Each request here parses to about 8 MiB (half a
    // million empty objects): left allocated every time, 600 of them
    // would pass wasm32's 4 GiB and trap.
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["ConfigMap"]}}]},
        "validate": {"message": "m", "pattern": {"metadata": {"name": "?*"}}}}]});
    let items = vec!["{}"; 500_000].join(",");
    let request = format!(
        r#"{{"uid": "1", "operation": "CREATE", "namespace": "default",
        "kind": {{"group": "", "version": "v1", "kind": "ConfigMap"}},
        "object": {{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "c"}},
        "items": [{items}]}}}}"#
    );
    let payload = format!(r#"{{"settings": {settings}, "request": {request}}}"#);
    let instance = module().instance().expect("instance");
    for i in 0..600 {
        let response = host::call(&instance, "validate", payload.as_bytes())
            .unwrap_or_else(|e| panic!("request {i}: {e}"));
        assert_eq!(response["accepted"], json!(true), "request {i}");
    }
}
