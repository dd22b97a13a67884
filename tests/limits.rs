//! Every limit on hostile input, hit on purpose: the request is answered
//! (rejected, in Enforce) with a message that names the limit, never
//! trapped and never silently accepted.
use serde_json::{json, Value};

fn pod(spec: Value) -> Value {
    json!({"uid": "1", "operation": "CREATE", "namespace": "default",
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "userInfo": {"username": "u"},
        "object": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "default"}, "spec": spec}})
}

fn enforce(validate: Value) -> Value {
    json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "validate": validate}]})
}

fn respond(payload: &str) -> Value {
    serde_json::to_value(kyverno_validate_policy::admission::validate(
        payload.as_bytes(),
    ))
    .unwrap()
}

fn rejected_with(response: &Value, words: &str) {
    assert_eq!(response["accepted"], false, "{response}");
    let message = response["message"].as_str().unwrap_or_default();
    assert!(message.contains(words), "`{words}` not in: {message}");
}

fn settings_problem(settings: &Value) -> String {
    let payload = serde_json::to_vec(settings).unwrap();
    let response = serde_json::to_value(kyverno_validate_policy::admission::validate_settings(
        &payload,
    ))
    .unwrap();
    assert_eq!(response["valid"], false, "{response}");
    response["message"].as_str().unwrap_or_default().to_string()
}

#[test]
fn json_nesting_of_the_request_is_limited() {
    let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let payload = format!(r#"{{"request": {deep}, "settings": {{}}}}"#);
    rejected_with(&respond(&payload), "recursion limit exceeded");
}

#[test]
fn json_nesting_of_the_settings_is_limited() {
    let deep = format!("{}1{}", "[".repeat(10_000), "]".repeat(10_000));
    let payload = format!(r#"{{"rules": {deep}}}"#);
    let response = serde_json::to_value(kyverno_validate_policy::admission::validate_settings(
        payload.as_bytes(),
    ))
    .unwrap();
    assert_eq!(response["valid"], false);
    assert!(response["message"]
        .as_str()
        .unwrap()
        .contains("recursion limit exceeded"));
}

#[test]
fn pattern_depth_is_limited() {
    let mut pattern = json!("x");
    for _ in 0..70 {
        pattern = json!({"a": pattern});
    }
    let problem = settings_problem(&enforce(json!({"pattern": pattern})));
    assert!(
        problem.contains("pattern is nested deeper than 64 levels"),
        "{problem}"
    );
}

#[test]
fn foreach_iterations_are_limited() {
    let containers: Vec<Value> = (0..400)
        .map(|i| json!({"name": format!("c{i}"), "image": "nginx"}))
        .collect();
    let settings = enforce(
        json!({"foreach": [{"list": "request.object.spec.containers",
        "foreach": [{"list": "request.object.spec.containers",
            "deny": {"conditions": {"any": [{"key": "{{ element.image }}", "operator": "Equals", "value": "nope"}]}}}]}]}),
    );
    let payload = json!({"request": pod(json!({"containers": containers})), "settings": settings});
    rejected_with(
        &respond(&payload.to_string()),
        "foreach visits more than 50000 elements (the limit per rule), at `request.object.spec.containers`",
    );
}

#[test]
fn jmespath_expression_depth_is_limited() {
    let expression = format!("{}x{}", "(".repeat(100), ")".repeat(100));
    let settings = enforce(json!({"deny": {"conditions": {"any": [
        {"key": format!("{{{{ {expression} }}}}"), "operator": "Equals", "value": "y"}]}}}));
    let problem = settings_problem(&settings);
    assert!(problem.contains("nests deeper than 64 levels"), "{problem}");
}

#[test]
fn cel_cost_is_limited() {
    let expression = "[1,2,3,4,5,6,7,8,9,10].all(a, [1,2,3,4,5,6,7,8,9,10].all(b, [1,2,3,4,5,6,7,8,9,10].all(c, [1,2,3,4,5,6,7,8,9,10].all(d, [1,2,3,4,5,6,7,8,9,10].all(e, [1,2,3,4,5,6,7,8,9,10].all(f, a + b + c + d + e + f > 0))))))";
    let settings = enforce(json!({"cel": {"expressions": [{"expression": expression}]}}));
    let payload = json!({"request": pod(json!({"containers": []})), "settings": settings});
    rejected_with(&respond(&payload.to_string()), "cost budget exceeded");
}

#[test]
fn variable_substitution_depth_is_limited() {
    // A variable whose value is a reference to itself (escaped when
    // loaded), so that every substitution brings it back.
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "context": [{"name": "again", "variable": {"value": "\\{{ again }}"}}],
        "validate": {"deny": {"conditions": {"any": [
            {"key": "x{{ again }}", "operator": "Equals", "value": "x"}]}}}}]});
    let payload = json!({"request": pod(json!({"containers": []})), "settings": settings});
    rejected_with(
        &respond(&payload.to_string()),
        "variables nest or repeat too deeply",
    );
}

/// A deny rule whose key substitutes `again`, an annotation of the Pod.
fn substituting_an_annotation(again: String) -> String {
    let variable = "{{ request.object.metadata.annotations.again }}";
    let mut request = pod(json!({"containers": []}));
    request["object"]["metadata"]["annotations"] = json!({ "again": again });
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "validate": {"deny": {"conditions": {"any": [
            {"key": format!("x{variable}"), "operator": "Equals", "value": "x"}]}}}}]});
    json!({"request": request, "settings": settings}).to_string()
}

#[test]
fn variables_that_bring_back_their_own_copies_are_limited() {
    // A value holding its own variable twice: every rescan doubles the
    // variables (Kyverno's loop runs out of memory). Found by the fuzz
    // campaign.
    let variable = "{{ request.object.metadata.annotations.again }}";
    rejected_with(
        &respond(&substituting_an_annotation(format!("{variable}{variable}"))),
        "variables nest or repeat too deeply",
    );
}

#[test]
fn text_that_substitution_writes_is_limited() {
    // The same with 300 KB beside the copies: few variables, but the text
    // doubles past 8 MiB within five rescans.
    let variable = "{{ request.object.metadata.annotations.again }}";
    let padding = "p".repeat(300_000);
    rejected_with(
        &respond(&substituting_an_annotation(format!(
            "{variable}{padding}{variable}"
        ))),
        "writes more than 8 MiB of text",
    );
}

#[test]
fn what_variables_copy_out_of_the_request_is_limited() {
    // A list of 3,000 variables that each bring back the list: 9,000,000
    // strings from a 100 KB request (1.2 s and gigabytes before).
    let variable = "{{ request.object.spec.items }}";
    let request = pod(json!({"containers": [], "items": vec![variable; 3_000]}));
    let payload = json!({"request": request, "settings": enforce(json!({"deny": {"conditions": {"any": [
        {"key": variable, "operator": "Equals", "value": "x"}]}}}))});
    rejected_with(
        &respond(&payload.to_string()),
        "copies more of the request than one request may",
    );
}

#[test]
fn what_context_entries_add_is_limited() {
    // A foreach whose entry copies a 100 KB annotation per element: 30
    // elements load 3 MB of context, past Kyverno's 2 MiB.
    let mut request = pod(json!({"containers": [], "items": vec![json!({}); 30]}));
    request["object"]["metadata"]["annotations"] = json!({"big": "b".repeat(100_000)});
    let payload = json!({"request": request, "settings": enforce(json!({"foreach": [{
        "list": "request.object.spec.items",
        "context": [{"name": "copy", "variable": {"jmesPath": "request.object.metadata.annotations.big"}}],
        "deny": {"conditions": {"any": [{"key": "{{ length(copy) }}", "operator": "Equals", "value": 0}]}}}]}))});
    rejected_with(
        &respond(&payload.to_string()),
        "context size limit exceeded",
    );
}

/// A Pod whose `spec.items` lists `n` small maps, against one `foreach`
/// over that list.
fn foreach_over_items(n: usize, each: Value) -> String {
    let items: Vec<Value> = (0..n).map(|i| json!({"x": i.to_string()})).collect();
    let request = pod(json!({"containers": [], "items": items}));
    let mut foreach = json!({"list": "request.object.spec.items"});
    if let (Some(foreach), Value::Object(each)) = (foreach.as_object_mut(), each) {
        foreach.extend(each);
    }
    json!({"request": request, "settings": enforce(json!({"foreach": [foreach]}))}).to_string()
}

#[test]
fn pattern_checks_of_one_request_are_limited() {
    // Each of 10,000 elements checks the whole list again (3.5 s natively
    // before, past policy-server's deadline in wasm).
    let each = json!({"elementScope": false, "pattern": {"spec": {"items": [{"x": "?*"}]}}});
    rejected_with(
        &respond(&foreach_over_items(10_000, each)),
        "take more than 2000000 steps (the limit per request)",
    );
}

#[test]
fn query_steps_of_one_request_are_limited() {
    // Each of 3,000 elements projects the whole list again.
    let each = json!({"deny": {"conditions": {"any": [
        {"key": "{{ request.object.spec.items[].x }}", "operator": "AnyIn", "value": ["nope"]}]}}});
    rejected_with(
        &respond(&foreach_over_items(3_000, each)),
        "take more than 2000000 steps (the limit per request)",
    );
    // A function reading the whole list pays for it the same.
    let each = json!({"deny": {"conditions": {"any": [
        {"key": "{{ length(request.object.spec.items) }}", "operator": "Equals", "value": 0}]}}});
    rejected_with(
        &respond(&foreach_over_items(3_000, each)),
        "take more than 2000000 steps (the limit per request)",
    );
}

#[test]
fn long_wildcards_against_long_values_are_answered() {
    // No limit is needed: wildcard pieces are found in one pass over the
    // value, so a 60,000-character pattern against a 120,000-character
    // value is answered at once, and correctly.
    let pattern = format!("*{}b", "a".repeat(60_000));
    let settings = enforce(json!({"message": "m",
        "pattern": {"metadata": {"annotations": {"note": pattern}}}}));
    let mut request = pod(json!({"containers": [{"name": "c", "image": "nginx"}]}));
    request["object"]["metadata"]["annotations"] = json!({"note": "a".repeat(120_000)});
    let payload = json!({"settings": settings, "request": request}).to_string();
    rejected_with(&respond(&payload), "/metadata/annotations/note/");
    request["object"]["metadata"]["annotations"] =
        json!({"note": format!("{}b", "a".repeat(120_000))});
    let payload = json!({"settings": settings, "request": request}).to_string();
    assert_eq!(respond(&payload)["accepted"], true);
}

#[test]
fn what_a_jmespath_query_builds_is_limited() {
    // Every pipe doubles the object: without a budget the module would
    // run out of memory (and trap) long before an answer.
    let doubling = format!("request.object{}", " | [@, @]".repeat(40));
    let settings = enforce(json!({"message": "m", "deny": {"conditions": {"any": [
        {"key": format!("{{{{ {doubling} | length(@) }}}}"), "operator": "Equals", "value": 2}]}}}));
    let request = pod(json!({"containers": [{"name": "c", "image": "nginx"}]}));
    let payload = json!({"settings": settings, "request": request}).to_string();
    rejected_with(
        &respond(&payload),
        "the query's results grow past 16 MiB (the limit per query)",
    );
}

#[test]
fn what_a_signed_manifest_inflates_to_is_limited() {
    use base64::Engine as _;
    // 9 MiB of zeros, gzipped to a few KiB: past the 8 MiB limit.
    let zeros = vec![0u8; 9 << 20];
    let mut bomb = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];
    bomb.extend(miniz_oxide::deflate::compress_to_vec(&zeros, 9));
    bomb.extend([0u8; 8]);
    let message = base64::engine::general_purpose::STANDARD.encode(&bomb);
    let key = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEXmiLhj36rnhlyfsQYRpSydTGR6mc\nch4+nbYLxVh8SNL+CwyB673xay5ZOkiaF+nu62mvmi4HayIkdvB/V5M5Qg==\n-----END PUBLIC KEY-----\n";
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "signed",
        "match": {"any": [{"resources": {"kinds": ["Service"]}}]},
        "validate": {"manifests": {"attestors": [{"entries": [{"keys": {"publicKeys": key}}]}]}}}]});
    let request = json!({"uid": "1", "operation": "CREATE", "namespace": "default",
        "kind": {"group": "", "version": "v1", "kind": "Service"},
        "object": {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web",
            "annotations": {"cosign.sigstore.dev/message": message,
                "cosign.sigstore.dev/signature": "MEUCIQ=="}}}});
    let response = respond(&json!({"settings": settings, "request": request}).to_string());
    rejected_with(
        &response,
        "gzip: the message inflates past 8388608 bytes (the limit)",
    );
}
