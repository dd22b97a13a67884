//! Cluster data through the `Cluster` lookups (Kubewarden's context-aware
//! host capabilities in the module): `namespaceSelector` in match and
//! exclude, and CEL's `namespaceObject`.
use std::cell::Cell;

use kyverno_validate_policy::admission::validate_with;
use kyverno_validate_policy::cluster::{Cluster, Lookup};
use serde_json::{json, Value};

/// Namespaces `prod` (env=prod) and `dev` (env=dev); counts the lookups.
struct Namespaces {
    lookups: Cell<usize>,
    reachable: bool,
}

impl Namespaces {
    fn new(reachable: bool) -> Self {
        Self {
            lookups: Cell::new(0),
            reachable,
        }
    }
}

impl Cluster for Namespaces {
    fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
        self.lookups.set(self.lookups.get() + 1);
        let Lookup::Get { kind, name, .. } = lookup;
        if !self.reachable {
            return Err(format!("cannot read v1 Namespace {name}: forbidden"));
        }
        let Lookup::Get { namespace, .. } = lookup;
        match (kind.as_str(), namespace.as_deref(), name.as_str()) {
            ("Namespace", None, "prod" | "dev") => Ok(json!({
                "apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "labels": {"env": name}}
            })),
            ("ConfigMap", Some("default" | "prod"), "registries") => Ok(json!({
                "apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace},
                "data": {"allowed": "ghcr.io"}
            })),
            _ => Err(format!("{kind} {name} not found")),
        }
    }
}

fn pod_request(namespace: &str) -> Value {
    json!({"uid": "1", "operation": "CREATE", "namespace": namespace,
        "kind": {"group": "", "version": "v1", "kind": "Pod"},
        "object": {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web", "namespace": namespace}, "spec": {"containers": []}}})
}

fn deny_in_namespaces(block: &str, selector: Value) -> Value {
    let mut rule = json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "validate": {"message": "no pods here", "deny": {}}});
    let filter = json!({"resources": {"kinds": ["Pod"], "namespaceSelector": selector}});
    match block {
        "match" => rule["match"] = json!({"any": [filter]}),
        _ => rule["exclude"] = json!({"any": [filter]}),
    }
    json!({"validationFailureAction": "Enforce", "rules": [rule, {
        "name": "second", "match": {"any": [{"resources": {"kinds": ["Pod"], "namespaceSelector": selector}}]},
        "validate": {"message": "still no pods", "deny": {}}}]})
}

fn accepted(settings: &Value, request: &Value, cluster: &dyn Cluster) -> (bool, String) {
    let payload = json!({"request": request, "settings": settings}).to_string();
    let response =
        serde_json::to_value(validate_with(payload.as_bytes(), cluster)).expect("a response");
    (
        response["accepted"] == json!(true),
        response["message"].as_str().unwrap_or_default().to_string(),
    )
}

#[test]
fn namespace_selector_selects_by_the_namespace_labels() {
    let prod_only = json!({"matchLabels": {"env": "prod"}});
    let cases = [
        ("match_selects_prod", "match", "prod", false),
        ("match_skips_dev", "match", "dev", true),
        ("exclude_spares_prod", "exclude", "prod", false),
        ("exclude_keeps_dev", "exclude", "dev", false),
    ];
    for (name, block, namespace, want_accepted) in cases {
        let settings = deny_in_namespaces(block, prod_only.clone());
        let cluster = Namespaces::new(true);
        let (got, message) = accepted(&settings, &pod_request(namespace), &cluster);
        assert_eq!(got, want_accepted, "{name}: {message}");
        assert_eq!(cluster.lookups.get(), 1, "{name}: one lookup per request");
    }
}

#[test]
fn namespace_selector_never_selects_a_namespace_itself() {
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Namespace"], "namespaceSelector": {"matchLabels": {"env": "prod"}}}}]},
        "validate": {"deny": {}}}]});
    let request = json!({"uid": "1", "operation": "CREATE", "kind": {"group": "", "version": "v1", "kind": "Namespace"},
        "object": {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod", "labels": {"env": "prod"}}}});
    let cluster = Namespaces::new(true);
    assert_eq!(
        accepted(&settings, &request, &cluster),
        (true, String::new())
    );
    assert_eq!(cluster.lookups.get(), 0);
}

#[test]
fn unreadable_namespace_labels_fail_closed_with_the_reason() {
    let settings = deny_in_namespaces("match", json!({"matchLabels": {"env": "prod"}}));
    let (got, message) = accepted(&settings, &pod_request("prod"), &Namespaces::new(false));
    assert!(!got);
    assert!(
        message.starts_with("r: rule r selects by namespace labels, which could not be read: cannot read v1 Namespace prod: forbidden (the policy needs `v1` `Namespace` in its contextAwareResources)"),
        "{message}"
    );
}

#[test]
fn cel_reads_the_real_namespace_object() {
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "validate": {"cel": {"expressions": [{"expression": "namespaceObject.metadata.labels.env == 'prod'",
            "message": "only in prod"}]}}}]});
    let cluster = Namespaces::new(true);
    assert_eq!(
        accepted(&settings, &pod_request("prod"), &cluster),
        (true, String::new())
    );
    assert_eq!(
        accepted(&settings, &pod_request("dev"), &cluster),
        (false, "r: only in prod".to_string())
    );
}

#[test]
fn config_map_entries_read_data_and_metadata() {
    let settings = |namespace: &str| {
        json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "context": [{"name": "registries", "configMap": {"name": "registries", "namespace": namespace}}],
            "validate": {"message": "{{ registries.metadata.namespace }} allows {{ registries.data.allowed }}",
                "deny": {"conditions": {"any": [{"key": "{{ registries.data.allowed }}", "operator": "Equals", "value": "ghcr.io"}]}}}}]})
    };
    let cluster = Namespaces::new(true);
    let cases = [
        (
            "namespace_from_a_variable",
            "{{ request.namespace }}",
            "r: prod allows ghcr.io",
        ),
        (
            "empty_namespace_means_default",
            "",
            "r: default allows ghcr.io",
        ),
    ];
    for (name, namespace, want) in cases {
        assert_eq!(
            accepted(&settings(namespace), &pod_request("prod"), &cluster),
            (false, want.to_string()),
            "{name}"
        );
    }
    // A ConfigMap that cannot be read errors the rule, naming the entry.
    let (got, message) = accepted(&settings("dev"), &pod_request("dev"), &cluster);
    assert!(!got);
    assert!(
        message.contains("failed to retrieve config map for context entry registries: ConfigMap registries not found"),
        "{message}"
    );
}
