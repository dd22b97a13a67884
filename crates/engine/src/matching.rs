//! `match` / `exclude`: which rules apply to a request, as Kyverno's
//! `MatchesResourceDescription` decides.

use serde_json::Value;

use crate::request::{metadata_map, metadata_str, AdmissionRequest, Gvk};
use crate::resources;
use crate::roles::Roles;
use crate::settings::{
    LabelSelector, MatchResources, ResourceDescription, ResourceFilter, Subject,
};
use crate::wildcard::{self, has_wildcard};

/// What a rule's filters are checked against, read once per request.
#[derive(Debug, Clone)]
pub struct Target<'a> {
    /// The kind of the requested resource (the parent kind for subresources).
    pub gvk: Gvk,
    pub sub_resource: &'a str,
    pub operation: &'a str,
    /// The kind of the object itself (`request.kind`).
    pub object_kind: String,
    pub name: &'a str,
    /// The object's namespace: empty for a Namespace.
    pub namespace: &'a str,
    /// The request's namespace (a Namespace's own name), which scopes the
    /// requester's RoleBindings.
    pub request_namespace: &'a str,
    pub labels: Option<&'a serde_json::Map<String, Value>>,
    pub annotations: Option<&'a serde_json::Map<String, Value>>,
    pub username: &'a str,
    pub groups: Vec<&'a str>,
    /// The labels of the request's Namespace, read from the cluster when a
    /// rule has a `namespaceSelector` (empty for cluster-scoped objects).
    pub namespace_labels: Option<serde_json::Map<String, Value>>,
    /// The requester's roles, read from the cluster when a rule selects by them.
    pub roles: Option<Roles>,
}

impl<'a> Target<'a> {
    pub fn new(request: &AdmissionRequest<'a>) -> Self {
        let resource = request.resource();
        let object_kind = request.kind();
        let sub_resource = request.sub_resource();
        let gvk = if sub_resource.is_empty() {
            object_kind.clone()
        } else {
            parent_kind(request.raw()).unwrap_or_else(|| object_kind.clone())
        };
        // The object's own name only (Kyverno's `ConvertResource` copies the
        // request's namespace onto it, never its name): a CONNECT's options
        // object has none, so `names` cannot select a `pods/exec`.
        let mut name = metadata_str(resource, "name");
        if name.is_empty() {
            name = metadata_str(resource, "generateName");
        }
        let namespace = if object_kind.kind == "Namespace" {
            ""
        } else {
            request.namespace()
        };
        Self {
            gvk,
            sub_resource,
            operation: request.operation(),
            object_kind: object_kind.kind,
            name,
            namespace,
            request_namespace: request.namespace(),
            labels: metadata_map(resource, "labels"),
            annotations: metadata_map(resource, "annotations"),
            username: request.username(),
            groups: request.groups().collect(),
            namespace_labels: None,
            roles: None,
        }
    }

    /// Whether the request's Namespace has labels to select by: Namespaces
    /// and cluster-scoped objects have none.
    pub fn has_namespace_labels(&self) -> bool {
        self.object_kind != "Namespace" && !self.namespace.is_empty()
    }

    /// The requester, as the cluster's role bindings name it.
    pub fn requester(&self) -> crate::roles::User<'a> {
        crate::roles::User {
            username: self.username,
            groups: self.groups.clone(),
            namespace: self.request_namespace,
        }
    }
}

impl<'a> Target<'a> {
    /// The old object of an UPDATE as Kyverno matches it before excusing an
    /// existing violation: a CREATE of the old object by a requester that
    /// holds no real user, group or role (`kyverno:kyverno-invalid-controller`),
    /// so rules that select by operation, labels or user tell it apart.
    pub fn for_old_object(request: &AdmissionRequest<'a>) -> Self {
        let mut target = Self::new(request);
        let old = request.old_object();
        let api_version = old.get("apiVersion").and_then(Value::as_str).unwrap_or("");
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        let kind = old.get("kind").and_then(Value::as_str).unwrap_or("");
        target.gvk = Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        };
        target.object_kind = kind.to_string();
        target.sub_resource = "";
        target.operation = "CREATE";
        let name = metadata_str(old, "name");
        if !name.is_empty() {
            target.name = name;
        }
        target.labels = metadata_map(old, "labels");
        target.annotations = metadata_map(old, "annotations");
        target.username = "kyverno:kyverno-invalid-controller";
        target.groups = vec!["kyverno:invalidgroup"];
        target.roles = Some(Roles {
            roles: vec!["kyverno:invalidrole".to_string()],
            cluster_roles: vec!["kyverno:invalidrole".to_string()],
        });
        target
    }
}

/// For a subresource request (`pods/exec`), Kyverno matches the kind of the
/// parent resource, which the request names only by its plural; built-in
/// resources are looked up in [`resources`].
fn parent_kind(raw: &Value) -> Option<Gvk> {
    let resource = raw.get("resource")?;
    let field = |k: &str| resource.get(k).and_then(Value::as_str).unwrap_or("");
    let kind = resources::builtin_kind(field("resource"))?;
    Some(Gvk {
        group: field("group").to_string(),
        version: field("version").to_string(),
        kind: kind.to_string(),
    })
}

/// Whether the rule applies: `match` selects and `exclude` does not.
pub fn rule_applies(
    match_resources: &MatchResources,
    exclude: Option<&MatchResources>,
    target: &Target<'_>,
) -> bool {
    let matched = if !match_resources.any.is_empty() {
        match_resources.any.iter().any(|f| match_selects(f, target))
    } else if !match_resources.all.is_empty() {
        match_resources.all.iter().all(|f| match_selects(f, target))
    } else {
        match_resources
            .legacy
            .as_ref()
            .is_some_and(|f| match_selects(f, target))
    };
    if !matched {
        return false;
    }
    let Some(exclude) = exclude else {
        return true;
    };
    let excluded = if !exclude.any.is_empty() {
        exclude
            .any
            .iter()
            .any(|f| !is_empty(f) && filter_selects(f, target))
    } else if !exclude.all.is_empty() {
        // An empty filter in `all` "did not exclude", so it spoils the block.
        exclude
            .all
            .iter()
            .all(|f| !is_empty(f) && filter_selects(f, target))
    } else {
        exclude
            .legacy
            .as_ref()
            .is_some_and(|f| !is_empty(f) && filter_selects(f, target))
    };
    !excluded
}

fn is_empty(filter: &ResourceFilter) -> bool {
    filter
        .resources
        .as_ref()
        .is_none_or(|r| *r == ResourceDescription::default())
        && filter.subjects.is_empty()
        && filter.roles.is_empty()
        && filter.cluster_roles.is_empty()
}

/// A `match` filter. Without any requester (no user, groups or roles, as
/// in Kyverno's CLI without a user file or a background scan), Kyverno
/// drops its user criteria (`roles`, `clusterRoles`, `subjects`) and
/// matches on the resource description alone; `exclude` keeps them.
fn match_selects(filter: &ResourceFilter, target: &Target<'_>) -> bool {
    let nobody = target.username.is_empty()
        && target.groups.is_empty()
        && target
            .roles
            .as_ref()
            .is_none_or(|r| r.roles.is_empty() && r.cluster_roles.is_empty());
    if !nobody {
        return filter_selects(filter, target);
    }
    match &filter.resources {
        Some(description) if *description != ResourceDescription::default() => {
            description_selects(description, target)
        }
        // Nothing left to match on: "match cannot be empty".
        _ => false,
    }
}

/// A PolicyException's `match`, as Kyverno's `checkMatchesResources`
/// reads it: `any` or `all` of its filters, each read as a rule's except
/// that `operations` are not checked, the user criteria hold even without
/// a requester, and a `namespaceSelector` passes for a Namespace.
pub fn exception_applies(match_resources: &MatchResources, target: &Target<'_>) -> bool {
    let selects =
        |f: &ResourceFilter| filter_selects_by(f, target, |d| description_holds(d, target, true));
    if !match_resources.any.is_empty() {
        match_resources.any.iter().any(selects)
    } else {
        !match_resources.all.is_empty() && match_resources.all.iter().all(selects)
    }
}

/// One filter: every attribute it sets must hold (an empty filter never
/// matches, as in Kyverno: "match cannot be empty").
fn filter_selects(filter: &ResourceFilter, target: &Target<'_>) -> bool {
    filter_selects_by(filter, target, |d| description_selects(d, target))
}

/// [`filter_selects`] with `describe` deciding the resource description.
fn filter_selects_by(
    filter: &ResourceFilter,
    target: &Target<'_>,
    describe: impl Fn(&ResourceDescription) -> bool,
) -> bool {
    if is_empty(filter) {
        return false;
    }
    if let Some(description) = &filter.resources {
        if !describe(description) {
            return false;
        }
    }
    let held = |wanted: &[String], held: fn(&Roles) -> &[String]| {
        wanted.is_empty()
            || target
                .roles
                .as_ref()
                .is_some_and(|r| held(r).iter().any(|role| wanted.contains(role)))
    };
    held(&filter.roles, |r| &r.roles)
        && held(&filter.cluster_roles, |r| &r.cluster_roles)
        && (filter.subjects.is_empty() || subjects_match(&filter.subjects, target))
}

fn description_selects(d: &ResourceDescription, target: &Target<'_>) -> bool {
    if !d.operations.is_empty() && !d.operations.iter().any(|op| op == target.operation) {
        return false;
    }
    description_holds(d, target, false)
}

/// A resource description but its `operations`. `for_exception`: a
/// `namespaceSelector` passes for a Namespace (Kyverno's exceptions skip
/// it there; its rules fail it).
fn description_holds(d: &ResourceDescription, target: &Target<'_>, for_exception: bool) -> bool {
    if !d.kinds.is_empty() && !check_kind(&d.kinds, &target.gvk, target.sub_resource) {
        return false;
    }
    if d.name
        .as_deref()
        .is_some_and(|n| !wildcard::matches(n, target.name))
    {
        return false;
    }
    if !d.names.is_empty() && !d.names.iter().any(|n| wildcard::matches(n, target.name)) {
        return false;
    }
    if !d.namespaces.is_empty() {
        // A Namespace is matched by its own name.
        let ns = if target.object_kind == "Namespace" {
            target.name
        } else {
            target.namespace
        };
        if !d.namespaces.iter().any(|p| wildcard::matches(p, ns)) {
            return false;
        }
    }
    if !d.annotations.is_empty() && !annotations_match(&d.annotations, target.annotations) {
        return false;
    }
    if let Some(selector) = &d.selector {
        if !selector_matches(selector, target.labels) {
            return false;
        }
    }
    if let Some(selector) = &d.namespace_selector {
        // Kyverno: "namespace selector is not applicable for namespace
        // resource"; other objects are selected by their Namespace's labels.
        let holds = if target.object_kind == "Namespace" {
            for_exception
        } else {
            selector_matches(selector, target.namespace_labels.as_ref())
        };
        if !holds {
            return false;
        }
    }
    true
}

/// Whether the rule's `match` or `exclude` selects by the namespace's labels.
pub fn selects_by_namespace_labels(
    match_resources: &MatchResources,
    exclude: Option<&MatchResources>,
) -> bool {
    uses_namespace_selector(match_resources) || exclude.is_some_and(uses_namespace_selector)
}

/// Whether the rule's `match` or `exclude` selects by the requester's roles.
pub fn selects_by_roles(
    match_resources: &MatchResources,
    exclude: Option<&MatchResources>,
) -> bool {
    let uses = |block: &MatchResources| {
        block
            .any
            .iter()
            .chain(&block.all)
            .chain(block.legacy.as_deref())
            .any(|f| !f.roles.is_empty() || !f.cluster_roles.is_empty())
    };
    uses(match_resources) || exclude.is_some_and(uses)
}

fn uses_namespace_selector(block: &MatchResources) -> bool {
    block
        .any
        .iter()
        .chain(&block.all)
        .chain(block.legacy.as_deref())
        .any(|f| {
            f.resources
                .as_ref()
                .is_some_and(|r| r.namespace_selector.is_some())
        })
}

fn annotations_match(
    expected: &[(String, String)],
    actual: Option<&serde_json::Map<String, Value>>,
) -> bool {
    expected.iter().all(|(k, v)| {
        actual.into_iter().flatten().any(|(k1, v1)| {
            wildcard::matches(k, k1) && v1.as_str().is_some_and(|v1| wildcard::matches(v, v1))
        })
    })
}

/// A label selector, with Kyverno's wildcards in `matchLabels` (a wildcard
/// pair must be matched by some label; `matchExpressions` are exact). A
/// selector Kubernetes' `LabelSelectorAsSelector` refuses (`In` or `NotIn`
/// without values, `Exists` or `DoesNotExist` with some) matches nothing,
/// as Kyverno's `CheckSelector` fails it.
pub fn selector_matches(
    selector: &LabelSelector,
    labels: Option<&serde_json::Map<String, Value>>,
) -> bool {
    let label = |key: &str| labels.and_then(|l| l.get(key)).and_then(Value::as_str);
    let pairs_hold = selector.match_labels.iter().all(|(k, v)| {
        if has_wildcard(k) || has_wildcard(v) {
            labels.into_iter().flatten().any(|(k1, v1)| {
                wildcard::matches(k, k1) && v1.as_str().is_some_and(|v1| wildcard::matches(v, v1))
            })
        } else {
            label(k) == Some(v.as_str())
        }
    });
    pairs_hold
        && selector.match_expressions.iter().all(|e| {
            let value = label(&e.key);
            let listed = !e.values.is_empty();
            match e.operator.as_str() {
                "In" => listed && value.is_some_and(|v| e.values.iter().any(|x| x == v)),
                "NotIn" => listed && value.is_none_or(|v| !e.values.iter().any(|x| x == v)),
                "Exists" => !listed && value.is_some(),
                "DoesNotExist" => !listed && value.is_none(),
                _ => false,
            }
        })
}

/// A selector in the API server's query syntax (`app=web,tier in (a,b)`).
pub fn selector_text(selector: &LabelSelector) -> String {
    let mut parts: Vec<String> = selector
        .match_labels
        .iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in &selector.match_expressions {
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in ({})", e.key, e.values.join(",")),
            "NotIn" => format!("{} notin ({})", e.key, e.values.join(",")),
            "DoesNotExist" => format!("!{}", e.key),
            _ => e.key.clone(),
        });
    }
    parts.join(",")
}

fn subjects_match(subjects: &[Subject], target: &Target<'_>) -> bool {
    subjects.iter().any(|s| match s.kind.as_str() {
        "ServiceAccount" => {
            let ns = s.namespace.as_deref().unwrap_or("");
            let username = format!("system:serviceaccount:{ns}:{}", s.name);
            wildcard::matches(&username, target.username)
        }
        "Group" => target.groups.iter().any(|g| wildcard::matches(&s.name, g)),
        "User" => wildcard::matches(&s.name, target.username),
        _ => false,
    })
}

/// Kyverno's `ParseKindSelector`: `Pod`, `v1/Pod`, `apps/v1/Deployment`,
/// `Pod/exec`, `Pod.exec`, `*/*`, … → (group, version, kind, subresource).
pub fn parse_kind_selector(input: &str) -> (&str, &str, &str, &str) {
    // Borrowed, with no list: every rule's kinds are read on every request.
    let mut parts = [""; 5];
    let mut count = 0;
    let (head, last) = match input.rsplit_once('/') {
        Some((head, last)) => (Some(head), last),
        None => (None, input),
    };
    for part in head
        .into_iter()
        .flat_map(|h| h.split('/'))
        .chain(last.split('.'))
    {
        if let Some(slot) = parts.get_mut(count) {
            *slot = part;
        }
        count += 1;
    }
    let parts = parts.get(..count).unwrap_or(&parts);
    match parts {
        [kind] => ("*", "*", kind, ""),
        ["*", "*"] => ("*", "*", "*", "*"),
        ["*", sub] if is_lowercase(sub) => ("*", "*", "*", sub),
        [first, second] if is_version(first) => ("*", first, second, ""),
        [kind, sub] => ("*", "*", kind, sub),
        [first, kind, sub] if is_version(first) => ("*", first, kind, sub),
        [group, version, kind] => (group, version, kind, ""),
        [group, version, kind, sub] => (group, version, kind, sub),
        _ => ("", "", "", ""),
    }
}

/// Go's `strings.ToLower(s) == s`, without the copy.
fn is_lowercase(text: &str) -> bool {
    text.chars().all(|c| {
        let mut lower = c.to_lowercase();
        lower.next() == Some(c) && lower.next().is_none()
    })
}

/// `^(v\d+((alpha|beta)\d+)?|\*)$`
fn is_version(text: &str) -> bool {
    if text == "*" {
        return true;
    }
    let Some(rest) = text.strip_prefix('v') else {
        return false;
    };
    let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return false;
    }
    let rest = rest.get(digits..).unwrap_or("");
    if rest.is_empty() {
        return true;
    }
    let Some(tail) = rest
        .strip_prefix("alpha")
        .or_else(|| rest.strip_prefix("beta"))
    else {
        return false;
    };
    !tail.is_empty() && tail.bytes().all(|b| b.is_ascii_digit())
}

/// Whether any kind selector matches the request's kind and subresource. A
/// selector without a subresource matches only the resource itself (and,
/// for Pods, the `ephemeralcontainers` subresource), as Kyverno ≤ 1.13 and
/// its webhook registration do; `Pod/exec` must be asked for.
pub fn check_kind(kinds: &[String], gvk: &Gvk, sub_resource: &str) -> bool {
    kinds.iter().any(|k| {
        let (group, version, kind, sub) = parse_kind_selector(k);
        wildcard::matches(group, &gvk.group)
            && wildcard::matches(version, &gvk.version)
            && wildcard::matches(kind, &gvk.kind)
            && (wildcard::matches(sub, sub_resource)
                || (gvk.group.is_empty()
                    && gvk.version == "v1"
                    && gvk.kind == "Pod"
                    && sub_resource == "ephemeralcontainers"))
    })
}

/// Kyverno's `ContainsKind`: whether a kind list names `kind`, whatever
/// group, version or subresource it adds.
pub fn contains_kind<I>(list: I, kind: &str) -> bool
where
    I: IntoIterator,
    I::Item: AsRef<str>,
{
    list.into_iter().any(|selector| {
        let selector = selector.as_ref();
        // A bare kind (most selectors) is its own kind part.
        if !selector.contains(['/', '.']) {
            return selector == kind;
        }
        kind_of(selector) == kind
    })
}

/// The kind part of a selector, as `GetKindFromGVK` + `SplitSubresource` read it.
fn kind_of(selector: &str) -> String {
    let parts: Vec<&str> = selector.split('/').collect();
    let dotted = |s: &str| s.replacen('.', "/", 1);
    let kind = match parts.as_slice() {
        [kind] => dotted(kind),
        ["*", "*"] => "*/*".to_string(),
        [first, second] if is_version(first) => dotted(second),
        [first, second] => format!("{first}/{second}"),
        [first, second, third] if is_version(first) => format!("{second}/{third}"),
        [_, _, third] => dotted(third),
        [_, _, third, fourth] => format!("{third}/{fourth}"),
        _ => String::new(),
    };
    match kind.split_once('/') {
        Some((k, rest)) if !rest.contains('/') => k.to_string(),
        _ => kind,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostics::Diagnostics;
    use crate::settings::parse_rule;
    use serde_json::json;

    fn request(kind: (&str, &str, &str), sub: &str, op: &str, object: Value) -> Value {
        json!({"kind": {"group": kind.0, "version": kind.1, "kind": kind.2}, "subResource": sub,
            "operation": op, "namespace": object["metadata"]["namespace"], "object": object,
            "userInfo": {"username": "system:serviceaccount:ci:deployer", "groups": ["system:serviceaccounts", "devs"]}})
    }

    fn pod() -> Value {
        request(
            ("", "v1", "Pod"),
            "",
            "CREATE",
            json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "web-1", "namespace": "prod", "labels": {"app": "web", "tier": "front"},
                "annotations": {"team.io/owner": "payments"}}}),
        )
    }

    fn applies(rule: Value, raw_request: &Value) -> bool {
        let mut diags = Diagnostics::default();
        let mut rule = rule;
        rule["name"] = json!("r");
        rule["validate"] = json!({"pattern": {}});
        let rule = crate::json::Json::borrow(&rule);
        let rule = parse_rule(&rule, "rules[0]", &mut diags).expect("rule parses");
        assert!(diags.is_empty(), "{}", diags.summary());
        let req = AdmissionRequest::new(raw_request);
        rule_applies(
            &rule.match_resources,
            rule.exclude.as_ref(),
            &Target::new(&req),
        )
    }

    fn any(resources: Value) -> Value {
        json!({"match": {"any": [{"resources": resources}]}})
    }

    #[test]
    fn resource_filters() {
        let pod = pod();
        let cases: Vec<(&str, Value, bool)> = vec![
            ("plain_kind", any(json!({"kinds": ["Pod"]})), true),
            ("other_kind", any(json!({"kinds": ["Deployment"]})), false),
            ("version_kind", any(json!({"kinds": ["v1/Pod"]})), true),
            (
                "group_version_kind_mismatch",
                any(json!({"kinds": ["apps/v1/Pod"]})),
                false,
            ),
            ("wildcard_kind", any(json!({"kinds": ["*"]})), true),
            (
                "group_wildcard_version",
                any(json!({"kinds": ["*/Pod"]})),
                true,
            ),
            (
                "subresource_kind_needs_subresource",
                any(json!({"kinds": ["Pod/exec"]})),
                false,
            ),
            (
                "names_wildcard",
                any(json!({"kinds": ["Pod"], "names": ["web-*"]})),
                true,
            ),
            (
                "names_mismatch",
                any(json!({"kinds": ["Pod"], "names": ["db-*"]})),
                false,
            ),
            (
                "legacy_name",
                any(json!({"kinds": ["Pod"], "name": "web-?"})),
                true,
            ),
            (
                "namespaces_wildcard",
                any(json!({"kinds": ["Pod"], "namespaces": ["pr*"]})),
                true,
            ),
            (
                "namespaces_mismatch",
                any(json!({"kinds": ["Pod"], "namespaces": ["dev"]})),
                false,
            ),
            (
                "operations_match",
                any(json!({"kinds": ["Pod"], "operations": ["CREATE"]})),
                true,
            ),
            (
                "operations_mismatch",
                any(json!({"kinds": ["Pod"], "operations": ["DELETE"]})),
                false,
            ),
            (
                "annotations_wildcards",
                any(json!({"annotations": {"team.io/*": "pay*"}})),
                true,
            ),
            (
                "annotations_mismatch",
                any(json!({"annotations": {"team.io/owner": "search"}})),
                false,
            ),
            (
                "selector_match_labels",
                any(json!({"selector": {"matchLabels": {"app": "web"}}})),
                true,
            ),
            (
                "selector_wildcard_labels",
                any(json!({"selector": {"matchLabels": {"ti*": "fr?nt"}}})),
                true,
            ),
            (
                "selector_in",
                any(
                    json!({"selector": {"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}}),
                ),
                true,
            ),
            (
                "selector_not_in",
                any(
                    json!({"selector": {"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}}),
                ),
                false,
            ),
            (
                "selector_exists",
                any(
                    json!({"selector": {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}}),
                ),
                true,
            ),
            (
                "selector_does_not_exist",
                any(
                    json!({"selector": {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}}),
                ),
                false,
            ),
            // Kubernetes refuses these selectors; Kyverno's CheckSelector
            // then fails them, even where the label would pass.
            (
                "selector_not_in_without_values",
                any(
                    json!({"selector": {"matchExpressions": [{"key": "team", "operator": "NotIn", "values": []}]}}),
                ),
                false,
            ),
            (
                "selector_exists_with_values",
                any(
                    json!({"selector": {"matchExpressions": [{"key": "tier", "operator": "Exists", "values": ["front"]}]}}),
                ),
                false,
            ),
            (
                "any_needs_one",
                json!({"match": {"any": [{"resources": {"kinds": ["Service"]}}, {"resources": {"kinds": ["Pod"]}}]}}),
                true,
            ),
            (
                "all_needs_every",
                json!({"match": {"all": [{"resources": {"kinds": ["Pod"]}}, {"resources": {"namespaces": ["dev"]}}]}}),
                false,
            ),
            (
                "legacy_resources",
                json!({"match": {"resources": {"kinds": ["Pod"]}}}),
                true,
            ),
            (
                "exclude_any",
                json!({"match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "exclude": {"any": [{"resources": {"namespaces": ["prod"]}}]}}),
                false,
            ),
            (
                "exclude_all_needs_every",
                json!({"match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "exclude": {"all": [{"resources": {"namespaces": ["prod"]}}, {"resources": {"names": ["db"]}}]}}),
                true,
            ),
            (
                "exclude_legacy",
                json!({"match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "exclude": {"resources": {"names": ["web-1"]}}}),
                false,
            ),
            (
                "empty_exclude_excludes_nothing",
                json!({"match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "exclude": {}}),
                true,
            ),
            (
                "exclude_with_an_empty_any_excludes_nothing",
                json!({"match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "exclude": {"any": []}}),
                true,
            ),
        ];
        for (name, rule, want) in cases {
            assert_eq!(applies(rule, &pod), want, "{name}");
        }
    }

    #[test]
    fn subject_filters() {
        let pod = pod();
        let subjects = |s: Value| json!({"match": {"any": [{"resources": {"kinds": ["Pod"]}, "subjects": [s]}]}});
        let cases: Vec<(&str, Value, bool)> = vec![
            (
                "service_account",
                subjects(json!({"kind": "ServiceAccount", "name": "deployer", "namespace": "ci"})),
                true,
            ),
            (
                "service_account_other_namespace",
                subjects(
                    json!({"kind": "ServiceAccount", "name": "deployer", "namespace": "prod"}),
                ),
                false,
            ),
            (
                "group",
                subjects(json!({"kind": "Group", "name": "devs"})),
                true,
            ),
            (
                "group_wildcard",
                subjects(json!({"kind": "Group", "name": "system:*"})),
                true,
            ),
            (
                "user",
                subjects(json!({"kind": "User", "name": "system:serviceaccount:ci:*"})),
                true,
            ),
            (
                "user_mismatch",
                subjects(json!({"kind": "User", "name": "alice"})),
                false,
            ),
            (
                "exclude_by_user",
                json!({"match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                "exclude": {"any": [{"subjects": [{"kind": "Group", "name": "devs"}]}]}}),
                false,
            ),
        ];
        for (name, rule, want) in cases {
            assert_eq!(applies(rule, &pod), want, "{name}");
        }
        // Without a requester (no user, groups or roles), `match` drops its
        // user criteria, as Kyverno does; `exclude` keeps them.
        let mut nobody = pod.clone();
        nobody["userInfo"] = json!({});
        let anonymous: Vec<(&str, Value, bool)> = vec![
            (
                "match_keeps_the_resource_criteria",
                subjects(json!({"kind": "User", "name": "alice"})),
                true,
            ),
            (
                "match_of_user_criteria_alone_is_empty",
                json!({"match": {"any": [{"subjects": [{"kind": "User", "name": "alice"}]}]}}),
                false,
            ),
            (
                "exclude_by_user_excludes_nobody",
                json!({"match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                "exclude": {"any": [{"subjects": [{"kind": "Group", "name": "devs"}]}]}}),
                true,
            ),
        ];
        for (name, rule, want) in anonymous {
            assert_eq!(applies(rule, &nobody), want, "{name}");
        }
    }

    #[test]
    fn subresources_and_namespaces() {
        let exec = json!({"kind": {"group": "", "version": "v1", "kind": "PodExecOptions"},
            "resource": {"group": "", "version": "v1", "resource": "pods"}, "subResource": "exec",
            "operation": "CONNECT", "namespace": "prod", "name": "web-1",
            "object": {"kind": "PodExecOptions", "command": ["sh"]}});
        assert!(
            applies(any(json!({"kinds": ["Pod/exec"]})), &exec),
            "pod_exec_selector"
        );
        assert!(
            applies(any(json!({"kinds": ["Pod.exec"]})), &exec),
            "dotted_subresource"
        );
        assert!(
            !applies(any(json!({"kinds": ["Pod"]})), &exec),
            "plain_pod_skips_exec"
        );
        // Kyverno selects by the object's name; the options object has none,
        // whatever the request's `name`.
        assert!(
            !applies(
                any(json!({"kinds": ["Pod/exec"], "names": ["web-*"]})),
                &exec
            ),
            "names_do_not_read_the_request_name"
        );
        let scale = json!({"kind": {"group": "autoscaling", "version": "v1", "kind": "Scale"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"}, "subResource": "scale",
            "operation": "UPDATE", "namespace": "prod", "object": {"kind": "Scale", "metadata": {"name": "web"}}});
        assert!(
            applies(any(json!({"kinds": ["Deployment/scale"]})), &scale),
            "deployment_scale"
        );
        assert!(
            applies(any(json!({"kinds": ["apps/v1/Deployment/scale"]})), &scale),
            "gvk_scale"
        );
        let namespace = request(
            ("", "v1", "Namespace"),
            "",
            "CREATE",
            json!({"kind": "Namespace", "metadata": {"name": "team-a"}}),
        );
        assert!(
            applies(
                any(json!({"kinds": ["Namespace"], "namespaces": ["team-*"]})),
                &namespace
            ),
            "a_namespace_is_matched_by_its_name"
        );
    }

    #[test]
    fn kind_selectors_parse_as_kyverno_does() {
        let cases = [
            ("Pod", ("*", "*", "Pod", "")),
            ("v1/Pod", ("*", "v1", "Pod", "")),
            ("apps/v1/Deployment", ("apps", "v1", "Deployment", "")),
            ("Group/*/Kind", ("Group", "*", "Kind", "")),
            ("Pod/exec", ("*", "*", "Pod", "exec")),
            ("Pod.exec", ("*", "*", "Pod", "exec")),
            ("*/*", ("*", "*", "*", "*")),
            ("*/scale", ("*", "*", "*", "scale")),
            ("v1/Pod/status", ("*", "v1", "Pod", "status")),
            (
                "networking.k8s.io/v1/Ingress",
                ("networking.k8s.io", "v1", "Ingress", ""),
            ),
            (
                "apps/v1/Deployment/scale",
                ("apps", "v1", "Deployment", "scale"),
            ),
        ];
        for (input, (g, v, k, s)) in cases {
            let got = parse_kind_selector(input);
            assert_eq!(got, (g, v, k, s), "{input}");
        }
        let kinds = |l: &[&str]| l.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(contains_kind(kinds(&["v1/Pod"]), "Pod"));
        assert!(contains_kind(kinds(&["Pod/status"]), "Pod"));
        assert!(!contains_kind(kinds(&["Deployment"]), "Pod"));
    }
}
