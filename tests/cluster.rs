//! Cluster data through the `Cluster` lookups (Kubewarden's context-aware
//! host capabilities in the module): `namespaceSelector` in match and
//! exclude, CEL's `namespaceObject`, configMap entries, and the
//! requester's roles.
use std::cell::Cell;

use kyverno_validate_policy::admission::validate_with;
use kyverno_validate_policy::cluster::{Cluster, Lookup, OciRead};
use serde_json::{json, Value};

/// A cluster holding objects, answering as Kubewarden's host does (a
/// missing object is an error; a list comes back in the List shape);
/// counts the lookups. Namespaces `prod` and `dev` carry `env=<name>`.
struct Namespaces {
    lookups: Cell<usize>,
    reachable: bool,
    objects: Vec<Value>,
}

impl Namespaces {
    fn new(reachable: bool) -> Self {
        let namespace = |name: &str| {
            json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": name, "labels": {"env": name}}})
        };
        let config_map = |namespace: &str| {
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "registries", "namespace": namespace},
                "data": {"allowed": "ghcr.io"}})
        };
        Self {
            lookups: Cell::new(0),
            reachable,
            objects: vec![
                namespace("prod"),
                namespace("dev"),
                config_map("default"),
                config_map("prod"),
            ],
        }
    }

    fn with(mut self, objects: Value) -> Self {
        if let Value::Array(objects) = objects {
            self.objects.extend(objects);
        }
        self
    }
}

impl Cluster for Namespaces {
    fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
        self.lookups.set(self.lookups.get() + 1);
        if !self.reachable {
            return Err(format!("cannot read {}: forbidden", lookup.describe()));
        }
        let field =
            |o: &Value, path: &str| o.pointer(path).and_then(Value::as_str).map(String::from);
        let of = |o: &&Value, api_version: &str, kind: &str, namespace: &Option<String>| {
            field(o, "/apiVersion").as_deref() == Some(api_version)
                && field(o, "/kind").as_deref() == Some(kind)
                && (namespace.is_none() || field(o, "/metadata/namespace") == *namespace)
        };
        match lookup {
            Lookup::Get {
                api_version,
                kind,
                namespace,
                name,
            } => self
                .objects
                .iter()
                .find(|o| {
                    of(o, api_version, kind, namespace)
                        && field(o, "/metadata/name").as_deref() == Some(name)
                })
                .cloned()
                .ok_or_else(|| format!("{kind} {name} not found")),
            Lookup::List {
                api_version,
                kind,
                namespace,
                label_selector,
                ..
            } => {
                let labelled = |o: &&Value| {
                    label_selector
                        .iter()
                        .flat_map(|s| s.split(','))
                        .all(|pair| {
                            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
                            o.pointer("/metadata/labels").and_then(|l| l.get(k)) == Some(&json!(v))
                        })
                };
                let items: Vec<&Value> = self
                    .objects
                    .iter()
                    .filter(|o| of(o, api_version, kind, namespace) && labelled(o))
                    .collect();
                Ok(
                    json!({"apiVersion": api_version, "kind": format!("{kind}List"),
                    "metadata": {"resourceVersion": "1"}, "items": items}),
                )
            }
            // Access is granted by `{"grant": {"user" | "group", "verb",
            // "resource", "namespace"?}}` objects.
            Lookup::CanI(review) => {
                let granted = self.objects.iter().filter_map(|o| o.get("grant")).any(|g| {
                    let who = g.get("user").and_then(Value::as_str) == Some(&review.user)
                        || g.get("group").and_then(Value::as_str).is_some_and(|group| {
                            review.groups.iter().flatten().any(|g| g == group)
                        });
                    who && g["verb"] == json!(review.verb)
                        && g["resource"] == json!(review.resource)
                        && g.get("namespace")
                            .is_none_or(|ns| *ns == json!(review.namespace))
                });
                Ok(if granted {
                    json!({"allowed": true, "reason": "granted"})
                } else {
                    json!({"allowed": false})
                })
            }
            // Images are kept as `{"image", "digest", "manifest", "config"}`.
            Lookup::Oci { read, image } => {
                let found = self
                    .objects
                    .iter()
                    .find(|o| o.get("image") == Some(&json!(image)))
                    .ok_or_else(|| format!("GET https://registry/{image}: MANIFEST_UNKNOWN"))?;
                Ok(match read {
                    OciRead::ManifestDigest => json!({"digest": found["digest"]}),
                    OciRead::Manifest => found["manifest"].clone(),
                    OciRead::ManifestAndConfig => json!({"manifest": found["manifest"],
                        "digest": found["digest"], "config": found["config"]}),
                })
            }
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

fn role_bindings() -> Value {
    json!([
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
            "metadata": {"name": "admins"}, "roleRef": {"kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "Group", "name": "system:masters"}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
            "metadata": {"name": "deployers", "namespace": "ci"}, "roleRef": {"kind": "Role", "name": "deployer"},
            "subjects": [{"kind": "ServiceAccount", "name": "builder"}]}
    ])
}

fn pod_by(username: &str, groups: Value) -> Value {
    let mut request = pod_request("prod");
    request["userInfo"] = json!({"username": username, "groups": groups});
    request
}

#[test]
fn roles_and_cluster_roles_select_the_requester() {
    let settings = |block: &str, filter: Value| {
        let mut rule = json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "no pods here", "deny": {}}});
        rule[block] = json!({"any": [filter]});
        json!({"validationFailureAction": "Enforce", "rules": [rule]})
    };
    let admin = pod_by(
        "kubernetes-admin",
        json!(["system:masters", "system:authenticated"]),
    );
    let builder = pod_by(
        "system:serviceaccount:ci:builder",
        json!(["system:serviceaccounts"]),
    );
    let cases = [
        (
            "exclude_cluster_admins_spares_an_admin",
            settings("exclude", json!({"clusterRoles": ["cluster-admin"]})),
            &admin,
            true,
        ),
        (
            "exclude_cluster_admins_keeps_others",
            settings("exclude", json!({"clusterRoles": ["cluster-admin"]})),
            &builder,
            false,
        ),
        (
            "match_a_namespaced_role",
            settings("match", json!({"roles": ["ci:deployer"]})),
            &builder,
            false,
        ),
        (
            "match_a_role_the_user_lacks",
            settings("match", json!({"roles": ["ci:deployer"]})),
            &admin,
            true,
        ),
    ];
    for (name, settings, request, want_accepted) in cases {
        let cluster = Namespaces::new(true).with(role_bindings());
        let (got, message) = accepted(&settings, request, &cluster);
        assert_eq!(got, want_accepted, "{name}: {message}");
        assert_eq!(cluster.lookups.get(), 2, "{name}: two lists per request");
    }
}

#[test]
fn request_roles_are_variables() {
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "validate": {"message": "roles {{ request.roles }}, cluster roles {{ request.clusterRoles || `[]` }}",
            "deny": {}}}]});
    let cluster = Namespaces::new(true).with(role_bindings());
    assert_eq!(
        accepted(
            &settings,
            &pod_by("system:serviceaccount:ci:builder", json!([])),
            &cluster
        ),
        (
            false,
            "r: roles [\"ci:deployer\"], cluster roles []".to_string()
        )
    );
}

#[test]
fn unreadable_bindings_fail_closed_with_the_reason() {
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "exclude": {"any": [{"clusterRoles": ["cluster-admin"]}]},
        "validate": {"deny": {}}}]});
    let (got, message) = accepted(
        &settings,
        &pod_by("alice", json!([])),
        &Namespaces::new(false),
    );
    assert!(!got);
    assert_eq!(
        message,
        "r: rule r needs the requester's roles, which could not be read: failed to list rolebindings: cannot read the rbac.authorization.k8s.io/v1 RoleBinding list: forbidden (the policy needs `rbac.authorization.k8s.io/v1` `RoleBinding` and `ClusterRoleBinding` in its contextAwareResources)"
    );
}

fn services() -> Value {
    json!([
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web", "namespace": "prod", "labels": {"team": "a"}},
            "spec": {"selector": {"app": "web"}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "headless", "namespace": "prod"}, "spec": {}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "api", "namespace": "dev"},
            "spec": {"selector": {"app": "api"}}}
    ])
}

fn api_call_rule(api_call: Value, deny_key: &str, value: Value) -> Value {
    json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "context": [{"name": "found", "apiCall": api_call}],
        "validate": {"message": "found {{ found }}",
            "deny": {"conditions": {"any": [{"key": deny_key, "operator": "Equals", "value": value}]}}}}]})
}

#[test]
fn api_calls_read_lists_and_objects() {
    let cases = [
        (
            "namespaced_list_with_jmes_path",
            json!({"urlPath": "/api/v1/namespaces/{{ request.namespace }}/services",
                "jmesPath": "items[?spec.selector].metadata.name"}),
            "r: found [\"web\"]",
        ),
        (
            "label_selector_in_the_query",
            json!({"urlPath": "/api/v1/namespaces/prod/services?labelSelector=team%3Da",
                "jmesPath": "items | length(@)"}),
            "r: found 1",
        ),
        (
            "list_across_namespaces",
            json!({"urlPath": "/api/v1/services", "jmesPath": "items[].metadata.name"}),
            "r: found [\"web\",\"headless\",\"api\"]",
        ),
        (
            "one_object",
            json!({"urlPath": "/api/v1/namespaces/prod/services/web", "jmesPath": "spec.selector.app"}),
            "r: found web",
        ),
        (
            "the_list_shape_without_jmes_path",
            json!({"urlPath": "/api/v1/namespaces/dev/services"}),
            "r: found {\"apiVersion\":\"v1\",\"items\":[{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"api\",\"namespace\":\"dev\"},\"spec\":{\"selector\":{\"app\":\"api\"}}}],\"kind\":\"ServiceList\",\"metadata\":{\"resourceVersion\":\"1\"}}",
        ),
        (
            "default_when_the_call_fails",
            json!({"urlPath": "/api/v1/namespaces/prod/services/missing", "jmesPath": "spec", "default": "none"}),
            "r: found none",
        ),
    ];
    for (name, api_call, want) in cases {
        let cluster = Namespaces::new(true).with(services());
        let settings = api_call_rule(api_call, "{{ found }}", json!("never"));
        // The deny never holds, so the rule passes; the message shows what
        // the entry held through a second, failing rule.
        let mut settings = settings;
        settings["rules"][0]["validate"]["deny"]["conditions"]["any"][0]["operator"] =
            json!("NotEquals");
        assert_eq!(
            accepted(&settings, &pod_request("prod"), &cluster),
            (false, want.to_string()),
            "{name}"
        );
    }
}

#[test]
fn a_failed_api_call_fails_the_rule_with_the_reason() {
    let settings = api_call_rule(
        json!({"urlPath": "/api/v1/namespaces/{{ request.namespace }}/secrets/db", "jmesPath": "metadata.labels"}),
        "{{ found }}",
        json!("x"),
    );
    let cluster = Namespaces::new(true).with(services());
    let (got, message) = accepted(&settings, &pod_request("prod"), &cluster);
    assert!(!got);
    assert!(
        message.contains("failed to fetch data for APICall: failed to GET resource with raw url: /api/v1/namespaces/prod/secrets/db: Secret db not found"),
        "{message}"
    );
}

#[test]
fn a_namespaced_policy_calls_only_its_own_namespace() {
    let policy = |url: &str| {
        let spec = api_call_rule(
            json!({"urlPath": url, "jmesPath": "items[].metadata.name", "default": []}),
            "{{ length(found) }}",
            json!(-1),
        );
        json!({"apiVersion": "kyverno.io/v1", "kind": "Policy",
            "metadata": {"name": "p", "namespace": "prod"}, "spec": spec})
    };
    let cluster = Namespaces::new(true).with(services());
    assert_eq!(
        accepted(
            &policy("/api/v1/namespaces/prod/services"),
            &pod_request("prod"),
            &cluster
        ),
        (true, String::new())
    );
    // Refused before the call, so the entry's `default` does not apply.
    let (got, message) = accepted(
        &policy("/api/v1/namespaces/dev/services"),
        &pod_request("prod"),
        &cluster,
    );
    assert!(!got);
    assert!(
        message.contains("context entry `found` did not load: path /api/v1/namespaces/dev/services refers to namespace dev, which is different from the policy namespace prod"),
        "{message}"
    );
}

#[test]
fn api_calls_the_host_cannot_make_are_rejected_in_the_settings() {
    let cases = [
        (
            "service_call",
            json!({"service": {"url": "http://svc"}}),
            "rules[0].context[0].apiCall.service: calls to services are arbitrary HTTP requests, which Kubewarden's host capabilities cannot make; read Kubernetes resources with `urlPath`",
        ),
        (
            "post_other_than_an_access_review",
            json!({"urlPath": "/apis/authentication.k8s.io/v1/tokenreviews", "method": "POST",
                "data": [{"key": "spec", "value": {"token": "x"}}]}),
            "rules[0].context[0].apiCall.method: `POST` requests cannot be made through Kubewarden's host capabilities, which read resources (`GET`) and answer a SubjectAccessReview `POST` to `/apis/authorization.k8s.io/v1/subjectaccessreviews` (`kubernetes/can_i`)",
        ),
        (
            "access_review_without_data",
            json!({"urlPath": "/apis/authorization.k8s.io/v1/subjectaccessreviews", "method": "POST"}),
            "rules[0].context[0].apiCall.data: a SubjectAccessReview needs its `spec` in `data`",
        ),
        (
            "access_review_of_a_non_resource_url",
            json!({"urlPath": "/apis/authorization.k8s.io/v1/subjectaccessreviews", "method": "POST",
                "data": [{"key": "spec", "value": {"user": "a", "nonResourceAttributes": {"path": "/healthz", "verb": "get"}}}]}),
            "rules[0].context[0].apiCall.data[0].value.nonResourceAttributes: Kubewarden's `kubernetes/can_i` sends a SubjectAccessReview's `resourceAttributes`, `user`, `groups` only; `nonResourceAttributes` cannot be sent; rules[0].context[0].apiCall.data[0].value: needs `resourceAttributes`: Kubewarden's `kubernetes/can_i` reviews access to resources",
        ),
        (
            "access_review_with_a_selector",
            json!({"urlPath": "/apis/authorization.k8s.io/v1/subjectaccessreviews", "method": "POST",
                "data": [{"key": "spec", "value": {"user": "a", "resourceAttributes": {"verb": "list", "resource": "pods", "labelSelector": {}}}}]}),
            "rules[0].context[0].apiCall.data[0].value.resourceAttributes.labelSelector: Kubewarden's `kubernetes/can_i` sends a SubjectAccessReview's `group`, `name`, `namespace`, `resource`, `subresource`, `verb`, `version` only; `labelSelector` cannot be sent",
        ),
        (
            "subresource",
            json!({"urlPath": "/api/v1/namespaces/{{request.namespace}}/pods/{{request.object.metadata.name}}/log"}),
            "rules[0].context[0].apiCall.urlPath: `/api/v1/namespaces/{{request.namespace}}/pods/{{request.object.metadata.name}}/log`: subresource `log` cannot be read through Kubewarden's host capabilities",
        ),
    ];
    for (name, api_call, want) in cases {
        let settings = api_call_rule(api_call, "a", json!("b"));
        let response =
            kyverno_validate_policy::admission::validate_settings(settings.to_string().as_bytes());
        let response = serde_json::to_value(response).expect("a response");
        assert_eq!(response["valid"], json!(false), "{name}");
        assert_eq!(response["message"], json!(want), "{name}");
    }
}

/// A Pod rule that asks whether the requester may `verb` `resource` in the
/// request's namespace, through a SubjectAccessReview `POST`.
fn access_review_rule(verb: &str, resource: &str, jmes_path: Option<&str>) -> Value {
    let mut call = json!({"urlPath": "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        "method": "POST",
        "data": [
            {"key": "kind", "value": "SubjectAccessReview"},
            {"key": "apiVersion", "value": "authorization.k8s.io/v1"},
            {"key": "spec", "value": {
                "resourceAttributes": {"resource": resource, "namespace": "{{ request.namespace }}",
                    "verb": verb, "group": ""},
                "user": "{{ request.userInfo.username }}",
                "groups": "{{ request.userInfo.groups }}"}}]});
    if let Some(path) = jmes_path {
        call["jmesPath"] = json!(path);
    }
    json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "context": [{"name": "review", "apiCall": call}],
        "validate": {"message": "not authorized: {{ review }}",
            "deny": {"conditions": {"any": [{"key": "{{ review.status.allowed || review }}",
                "operator": "NotEquals", "value": true}]}}}}]})
}

#[test]
fn subject_access_reviews_are_answered_by_can_i() {
    let grants = json!([
        {"grant": {"user": "alice", "verb": "delete", "resource": "namespaces", "namespace": "prod"}},
        {"grant": {"group": "ops", "verb": "delete", "resource": "pods"}}
    ]);
    let cases = [
        ("granted_to_the_user", "alice", json!([]), "delete", "namespaces", None, (true, String::new())),
        ("granted_to_a_group", "bob", json!(["ops"]), "delete", "pods", None, (true, String::new())),
        (
            "not_granted",
            "bob",
            json!(["dev"]),
            "delete",
            "namespaces",
            None,
            (false, r#"r: not authorized: {"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","metadata":{"creationTimestamp":null},"spec":{"groups":["dev"],"resourceAttributes":{"group":"","namespace":"prod","resource":"namespaces","verb":"delete"},"user":"bob"},"status":{"allowed":false}}"#.to_string()),
        ),
        ("queried_with_jmes_path", "alice", json!([]), "delete", "namespaces", Some("status"), (true, String::new())),
    ];
    for (name, user, groups, verb, resource, jmes_path, want) in cases {
        let mut settings = access_review_rule(verb, resource, jmes_path);
        if jmes_path.is_some() {
            settings["rules"][0]["validate"]["deny"]["conditions"]["any"][0]["key"] =
                json!("{{ review.allowed }}");
        }
        let cluster = Namespaces::new(true).with(grants.clone());
        assert_eq!(
            accepted(&settings, &pod_by(user, groups), &cluster),
            want,
            "{name}"
        );
    }
}

#[test]
fn a_failed_access_review_fails_the_rule_or_takes_the_default() {
    // A spec built from a variable is checked when it is built.
    let mut settings = access_review_rule("get", "pods", None);
    settings["rules"][0]["context"][0]["apiCall"]["data"][2]["value"] =
        json!("{{ request.object.metadata.labels }}");
    let mut request = pod_by("alice", json!([]));
    request["object"]["metadata"]["labels"] = json!({"uid": "1"});
    let (got, message) = accepted(&settings, &request, &Namespaces::new(true));
    assert!(!got);
    assert!(
        message.contains("failed to fetch data for APICall: failed to POST resource with raw url: /apis/authorization.k8s.io/v1/subjectaccessreviews: Kubewarden's `kubernetes/can_i` cannot send a SubjectAccessReview's `uid`"),
        "{message}"
    );
    // The host's error, and then the entry's default.
    let mut settings = access_review_rule("get", "pods", None);
    let (got, message) = accepted(
        &settings,
        &pod_by("alice", json!([])),
        &Namespaces::new(false),
    );
    assert!(!got);
    assert!(
        message.contains("failed to POST resource with raw url: /apis/authorization.k8s.io/v1/subjectaccessreviews: cannot read whether `alice` may get pods: forbidden"),
        "{message}"
    );
    settings["rules"][0]["context"][0]["apiCall"]["default"] = json!({"status": {"allowed": true}});
    assert_eq!(
        accepted(
            &settings,
            &pod_by("alice", json!([])),
            &Namespaces::new(false)
        ),
        (true, String::new())
    );
}

/// A Pod rule whose CEL `expression` reads parameters of `param_kind`.
fn cel_params_rule(param_kind: Value, param_ref: Value, expression: Value) -> Value {
    json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "validate": {"cel": {"paramKind": param_kind, "paramRef": param_ref,
            "expressions": [expression]}}}]})
}

fn params_rule(param_ref: Value) -> Value {
    cel_params_rule(
        json!({"apiVersion": "v1", "kind": "ConfigMap"}),
        param_ref,
        json!({"expression": "object.metadata.name in params.data.allowed.split(',')",
            "messageExpression": "'not allowed by ' + params.metadata.name"}),
    )
}

fn allowed_names() -> Value {
    json!([
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "names", "namespace": "prod", "labels": {"kind": "names"}},
            "data": {"allowed": "web,api"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "more-names", "namespace": "prod", "labels": {"kind": "names"}},
            "data": {"allowed": "web"}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "names", "namespace": "default"},
            "data": {"allowed": "db"}}
    ])
}

#[test]
fn cel_params_are_read_by_name_or_selector() {
    let cases = [
        (
            "by_name_in_the_request_namespace",
            json!({"name": "names", "parameterNotFoundAction": "Deny"}),
            "prod",
            (true, ""),
        ),
        (
            "by_name_in_a_given_namespace",
            json!({"name": "names", "namespace": "default"}),
            "prod",
            (false, "r: not allowed by names"),
        ),
        // Every selected parameter must pass; `more-names` does not allow `api`.
        (
            "by_selector_each_param",
            json!({"selector": {"matchLabels": {"kind": "names"}}}),
            "prod",
            (false, "r: not allowed by more-names"),
        ),
        (
            "none_found_allowed",
            json!({"selector": {"matchLabels": {"kind": "none"}}, "parameterNotFoundAction": "Allow"}),
            "prod",
            (true, ""),
        ),
        (
            "none_found_denied",
            json!({"selector": {"matchLabels": {"kind": "none"}}, "parameterNotFoundAction": "Deny"}),
            "prod",
            (false, "r: error in parameterized resource: no params found"),
        ),
        (
            "missing_by_name",
            json!({"name": "names", "parameterNotFoundAction": "Deny"}),
            "dev",
            (
                false,
                "r: error in parameterized resource: ConfigMap names not found",
            ),
        ),
    ];
    for (name, param_ref, namespace, (want_accepted, want_message)) in cases {
        let cluster = Namespaces::new(true).with(allowed_names());
        let mut request = pod_request(namespace);
        request["object"]["metadata"]["name"] = json!("api");
        let (got, message) = accepted(&params_rule(param_ref), &request, &cluster);
        assert_eq!(
            (got, message.as_str()),
            (want_accepted, want_message),
            "{name}"
        );
    }
}

/// A parameter kind this module does not know takes its scope from its
/// CustomResourceDefinition: a namespaced one is read in the request's
/// namespace when `paramRef` names none.
#[test]
fn cel_params_of_custom_kinds_take_their_scope_from_the_definition() {
    let rule = |param_ref: Value| {
        cel_params_rule(
            json!({"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit"}),
            param_ref,
            json!({"expression": "params.spec.max >= 1", "message": "limit read"}),
        )
    };
    let definition = |scope: &str| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "replicalimits.rules.example.com"},
            "spec": {"group": "rules.example.com", "scope": scope,
                "names": {"kind": "ReplicaLimit", "plural": "replicalimits"}}})
    };
    let limit = |namespace: &str, max: u32| {
        json!({"apiVersion": "rules.example.com/v1", "kind": "ReplicaLimit",
            "metadata": {"name": "limit", "namespace": namespace}, "spec": {"max": max}})
    };
    let by_name = json!({"name": "limit", "parameterNotFoundAction": "Deny"});
    let cluster = Namespaces::new(true).with(json!([
        definition("Namespaced"),
        limit("prod", 3),
        limit("dev", 0)
    ]));
    // Each request reads the limit of its own namespace.
    assert_eq!(
        accepted(&rule(by_name.clone()), &pod_request("prod"), &cluster),
        (true, String::new()),
        "prod_limit"
    );
    assert_eq!(
        accepted(&rule(by_name), &pod_request("dev"), &cluster),
        (false, "r: limit read".to_string()),
        "dev_limit"
    );
}

#[test]
fn cel_params_need_both_halves() {
    let mut settings = params_rule(json!({"name": "a", "selector": {}}));
    let check = |settings: &Value| {
        let response =
            kyverno_validate_policy::admission::validate_settings(settings.to_string().as_bytes());
        serde_json::to_value(response).expect("a response")["message"].clone()
    };
    assert_eq!(
        check(&settings),
        json!("rules[0].validate.cel.paramRef: needs exactly one of `name` and `selector`")
    );
    settings["rules"][0]["validate"]["cel"]
        .as_object_mut()
        .expect("cel")
        .remove("paramKind");
    assert_eq!(
        check(&settings),
        json!("rules[0].validate.cel.paramKind: is required with `paramRef`: it says what kind the parameters are")
    );
}

#[test]
fn image_registry_entries_read_image_data() {
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
        "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
        "validate": {"foreach": [{"list": "request.object.spec.containers",
            "context": [{"name": "data", "imageRegistry": {"reference": "{{ element.image }}",
                "jmesPath": "{user: configData.config.User || '', resolved: resolvedImage}"}}],
            "deny": {"conditions": {"any": [{"key": "{{ data.user }}", "operator": "Equals", "value": ""}]}}}],
            "message": "{{ data.resolved }} runs as root"}}]});
    let images = json!([
        {"image": "ghcr.io/acme/app:1.0", "digest": "sha256:aaa",
            "manifest": {"schemaVersion": 2, "layers": []}, "config": {"config": {"User": "1000"}}},
        {"image": "ghcr.io/acme/root:1.0", "digest": "sha256:bbb",
            "manifest": {"schemaVersion": 2, "layers": []}, "config": {"config": {}}}
    ]);
    let pod = |image: &str| {
        let mut request = pod_request("prod");
        request["object"]["spec"]["containers"] = json!([{"name": "c", "image": image}]);
        request
    };
    let cluster = Namespaces::new(true).with(images);
    assert_eq!(
        accepted(&settings, &pod("ghcr.io/acme/app:1.0"), &cluster),
        (true, String::new())
    );
    let (got, message) = accepted(&settings, &pod("ghcr.io/acme/root:1.0"), &cluster);
    assert!(!got);
    assert!(
        message.contains("ghcr.io/acme/root@sha256:bbb runs as root"),
        "{message}"
    );
    let (got, message) = accepted(&settings, &pod("ghcr.io/acme/gone:1.0"), &cluster);
    assert!(!got);
    assert!(
        message.contains("failed to fetch image descriptor: ghcr.io/acme/gone:1.0, error: GET https://registry/ghcr.io/acme/gone:1.0: MANIFEST_UNKNOWN"),
        "{message}"
    );
}

#[test]
fn failure_action_overrides_select_namespaces_by_labels() {
    let settings = |overrides_key: &str| {
        let mut rule = json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "no pods here", "deny": {}}});
        let overrides =
            json!([{"action": "Audit", "namespaceSelector": {"matchLabels": {"env": "dev"}}}]);
        let mut settings = json!({"validationFailureAction": "Enforce", "rules": []});
        if overrides_key == "rule" {
            rule["validate"]["failureActionOverrides"] = overrides;
        } else {
            settings["validationFailureActionOverrides"] = overrides;
        }
        settings["rules"] = json!([rule]);
        settings
    };
    for level in ["rule", "policy"] {
        let cluster = Namespaces::new(true);
        let payload =
            json!({"request": pod_request("dev"), "settings": settings(level)}).to_string();
        let response =
            serde_json::to_value(validate_with(payload.as_bytes(), &cluster)).expect("a response");
        assert_eq!(response["accepted"], json!(true), "{level}: {response}");
        assert_eq!(response["warnings"], json!(["r: no pods here"]), "{level}");
        assert_eq!(
            accepted(&settings(level), &pod_request("prod"), &cluster),
            (false, "r: no pods here".to_string()),
            "{level}"
        );
        // Without the labels, an Audit override is not taken: fail closed.
        assert_eq!(
            accepted(
                &settings(level),
                &pod_request("dev"),
                &Namespaces::new(false)
            ),
            (false, "r: no pods here".to_string()),
            "{level}"
        );
    }
}
