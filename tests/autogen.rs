//! Autogen derives a pod-controller rule from the parsed Pod rule
//! (`autogen::derive`), as Kyverno derives it from the rule's JSON: the
//! result must equal parsing the JSON rule `autogen::generate_one` writes,
//! for every kind, on the fixtures, hand-written corner cases and, when
//! present, every policy of the conformance corpus.
use kyverno_validate_policy::autogen::{derive, generate_one, POD_CONTROLLERS};
use kyverno_validate_policy::diagnostics::Diagnostics;
use kyverno_validate_policy::json::{Json, JsonCow};
use kyverno_validate_policy::settings::{parse_rule, spec_of, Rule, ValidationBody};
use serde_json::{json, Value};

fn rules_of(settings: &Value) -> Vec<Value> {
    let settings = Json::borrow(settings);
    spec_of(&settings)
        .get("rules")
        .and_then(Json::as_array)
        .map(|rules| rules.iter().map(Json::to_value).collect())
        .unwrap_or_default()
}

/// Checks one rule for every controller kind; the number of rules derived.
fn check(rule: &Value, origin: &str) -> usize {
    let mut diags = Diagnostics::quiet();
    let view = Json::borrow(rule);
    let Some(parsed) = parse_rule(&view, "rules[0]", &mut diags) else {
        return 0;
    };
    if !diags.is_empty() {
        return 0;
    }
    let mut derived = 0;
    for kind in POD_CONTROLLERS
        .iter()
        .chain(&["CronJob", "Pod", "ConfigMap"])
    {
        let from_json = generate_one(rule, kind).and_then(|json| {
            let mut diags = Diagnostics::quiet();
            let json = Json::borrow(&json);
            let rule = parse_rule(&json, "rules[0]", &mut diags)?;
            // Owned: the JSON goes out of scope here.
            Some(format!("{rule:?}"))
        });
        let typed = derive(&parsed, kind).map(|r| format!("{:?}", in_template(r)));
        assert_eq!(typed, from_json, "{origin}, {kind}, rule {}", rule["name"]);
        derived += usize::from(typed.is_some());
    }
    derived
}

/// A derived rule with its pattern put under its pod template, as the
/// JSON rule writes it (the derived rule leaves that to compiling).
fn in_template(mut rule: Rule<'_>) -> Rule<'_> {
    let template = std::mem::take(&mut rule.validate.template);
    let wrap = |pattern: &mut JsonCow<'_>| {
        let inner = pattern.to_value();
        let wrapped = template
            .iter()
            .rev()
            .fold(inner, |inner, key| json!({(*key): inner}));
        *pattern = JsonCow::Owned(Json::owned(wrapped));
    };
    match &mut rule.validate.body {
        ValidationBody::Pattern(p) => wrap(p),
        ValidationBody::AnyPattern(ps) => ps.iter_mut().for_each(wrap),
        _ => {}
    }
    rule
}

fn corner_cases() -> Vec<Value> {
    let pattern = json!({"spec": {"containers": [{"image": "!*:latest"}]}});
    vec![
        json!({"name": "legacy-match", "match": {"resources": {"kinds": ["Pod"], "namespaces": ["prod"]}},
            "exclude": {"subjects": [{"kind": "User", "name": "admin"}]},
            "validate": {"message": "{{ request.object.metadata.name }}", "pattern": pattern}}),
        json!({"name": "all-block", "match": {"all": [{"resources": {"kinds": ["Pod"],
                "selector": {"matchLabels": {"app": "x"}}}}, {"subjects": [{"kind": "Group", "name": "g"}]}]},
            "exclude": {"any": [{"resources": {"kinds": ["Pod"], "namespaces": ["kube-system"]}}]},
            "validate": {"failureAction": "Enforce",
                "failureActionOverrides": [{"action": "Audit", "namespaces": ["dev"],
                    "namespaceSelector": {"matchExpressions": [{"key": "k", "operator": "In", "values": ["v"]}]}}],
                "anyPattern": [pattern, {"metadata": {"labels": {"team": "?*"}}}]}}),
        json!({"name": "object.spec-in-the-name", "match": {"any": [{"resources": {"kinds": ["v1/Pod"]}}]},
            "context": [
                {"name": "v", "variable": {"value": {"request.object.spec": "{{ request.object.spec.x }}"},
                    "jmesPath": "request.oldObject.metadata.name", "default": "request.object.metadata"}},
                {"name": "cm", "configMap": {"name": "{{ request.object.metadata.name }}", "namespace": "ns"}},
                {"name": "api", "apiCall": {"urlPath": "/api/v1/namespaces/{{ request.object.metadata.namespace }}/pods",
                    "jmesPath": "items[].request.object.spec", "default": []}},
                {"name": "img", "imageRegistry": {"reference": "{{ request.object.spec.containers[0].image }}"}}],
            "preconditions": {"any": [{"key": "{{ request.object.spec.x }}", "operator": "Equals",
                "value": "{{ request.oldObject.spec.x }}", "message": "request.object.metadata"}]},
            "validate": {"deny": {"conditions": [{"key": "{{ request.object.metadata.labels }}",
                "operator": "NotEquals", "value": {"request.object.spec": 1}}]}}}),
        json!({"name": "foreach", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"foreach": [{"list": "request.object.spec.containers",
                "context": [{"name": "x", "variable": {"jmesPath": "element.name"}}],
                "preconditions": {"all": [{"key": "{{ element0.name }}", "operator": "NotEquals", "value": ""}]},
                "foreach": [{"list": "element.ports", "pattern": {"containerPort": "{{ request.object.spec.x }}"}},
                    {"list": "element.env", "anyPattern": [{"name": "?*"}]},
                    {"list": "element.env", "deny": {"conditions": {"all": [{"key": "{{ elementIndex1 }}",
                        "operator": "Equals", "value": "request.object.spec"}]}}}]}]}}),
        json!({"name": "cel", "match": {"any": [{"resources": {"kinds": ["Pod"], "operations": ["CREATE"]}}]},
            "celPreconditions": [{"name": "p", "expression": "object.metadata.name != 'x'"}],
            "validate": {"cel": {"paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
                "paramRef": {"name": "object.spec", "parameterNotFoundAction": "Deny"},
                "variables": [{"name": "c", "expression": "object.spec.containers + oldObject.spec.containers"}],
                "expressions": [{"expression": "variables.c.all(c, c.name != '')",
                    "messageExpression": "'bad ' + object.metadata.name", "reason": "Forbidden"}]}}}),
        json!({"name": "pss", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"podSecurity": {"level": "baseline", "version": "latest",
                "exclude": [{"controlName": "Capabilities", "images": ["nginx*"]}]}}}),
        json!({"name": "autogen-already", "match": {"any": [{"resources": {"kinds": ["Deployment"]}}]},
            "validate": {"pattern": pattern}}),
        json!({"name": "mixed-kinds", "match": {"any": [{"resources": {"kinds": ["Pod", "ConfigMap"]}},
                {"resources": {"kinds": ["Secret"]}}]},
            "exclude": {"all": [{"resources": {"kinds": ["Secret"]}}]},
            "validate": {"pattern": pattern}}),
        json!({"name": &"n".repeat(70), "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"pattern": pattern}}),
    ]
}

#[test]
fn derived_rules_equal_the_rules_parsed_from_autogens_json() {
    let mut derived = 0;
    for rule in corner_cases() {
        derived += check(&rule, "corner case");
    }
    assert!(derived >= 40, "{derived}");
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    for entry in std::fs::read_dir(root.join("test_data/settings")).unwrap() {
        let path = entry.unwrap().path();
        let settings: Value =
            serde_yaml::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for rule in rules_of(&settings) {
            check(&rule, &path.display().to_string());
        }
    }
    let workloads = std::fs::read_to_string(root.join("test_data/bench/workloads.jsonl")).unwrap();
    for line in workloads.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        for rule in rules_of(&case["payload"]["settings"]) {
            check(&rule, "workloads");
        }
    }
}

#[test]
fn derived_rules_agree_on_the_conformance_corpus_policies() {
    let corpus =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/conformance/dev.jsonl");
    let Ok(text) = std::fs::read_to_string(&corpus) else {
        eprintln!("skipped: {} is absent", corpus.display());
        return;
    };
    let mut seen = std::collections::HashSet::new();
    let mut derived = 0;
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).unwrap();
        let Some(policy) = case.get("policy") else {
            continue;
        };
        for rule in rules_of(policy) {
            if seen.insert(rule.to_string()) {
                derived += check(&rule, case["id"].as_str().unwrap_or(""));
            }
        }
    }
    eprintln!(
        "{} distinct rules, {derived} derived rules compared",
        seen.len()
    );
}
