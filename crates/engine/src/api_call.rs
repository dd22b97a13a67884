//! `context.apiCall` with `urlPath`: a Kubernetes API GET, which Kyverno
//! sends to the API server verbatim and which Kubewarden serves through
//! its host capabilities. Paths are mapped to `get_resource` (one object)
//! or `list_resources_*` (a List), with label and field selectors from
//! the query string. What the host cannot serve (subresources,
//! non-resource URLs, other query parameters) is an error that says so.
//! A SubjectAccessReview `POST` is answered by Kubewarden's `can_i`.

use std::rc::Rc;

use serde_json::{json, Value};

use crate::cluster::{AccessReview, Cached, Lookup};
use crate::resources::kind_of;

/// A namespaced `Policy` may call only paths in its own namespace, as
/// Kyverno checks the cleaned path (`^/api(s)?/.*?/namespaces/([^/]+)`).
pub fn check_policy_namespace(url: &str, policy_namespace: &str) -> Result<(), String> {
    let clean = crate::jmespath::go::clean_path(url);
    let namespace = clean
        .strip_prefix("/apis/")
        .or_else(|| clean.strip_prefix("/api/"))
        .and_then(|rest| {
            let at = rest.find("/namespaces/")?;
            let name = rest.get(at + "/namespaces/".len()..)?;
            name.split('/').next().filter(|n| !n.is_empty())
        });
    match namespace {
        Some(namespace) if namespace == policy_namespace => Ok(()),
        Some(namespace) => Err(format!(
            "path {clean} refers to namespace {namespace}, which is different from the policy namespace {policy_namespace}"
        )),
        None => Err(format!(
            "path {clean} does not contain a namespace segment, which is required for namespaced policies"
        )),
    }
}

/// A SubjectAccessReview `POST` of `body` (the `data` entries, substituted;
/// the settings allow a `POST` to no other path), answered through
/// `can_i`: the review as the API server returns it, its `spec` as sent
/// and its `status` from the host.
pub fn review_access(body: &Value, cluster: &Cached<'_>) -> Result<Value, String> {
    let spec = body.get("spec").unwrap_or(&Value::Null);
    let review = access_review(spec)?;
    let status = cluster.fetch(&Lookup::CanI(review))?;
    Ok(json!({
        "apiVersion": body.get("apiVersion").cloned().unwrap_or_else(|| "authorization.k8s.io/v1".into()),
        "kind": "SubjectAccessReview",
        "metadata": {"creationTimestamp": null},
        "spec": spec,
        "status": *status,
    }))
}

/// The one path a context entry may `POST` to: Kubewarden's `can_i`
/// capability sends SubjectAccessReviews.
pub const SUBJECT_ACCESS_REVIEWS: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";

/// What `can_i` carries of a SubjectAccessReview's `spec`, and of its
/// `resourceAttributes`.
pub const ACCESS_REVIEW_FIELDS: &[&str] = &["resourceAttributes", "user", "groups"];
pub const RESOURCE_ATTRIBUTE_FIELDS: &[&str] = &[
    "group",
    "name",
    "namespace",
    "resource",
    "subresource",
    "verb",
    "version",
];

/// What of a SubjectAccessReview's `spec` Kubewarden's `can_i` cannot send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unsendable<'s> {
    /// A `spec` field other than [`ACCESS_REVIEW_FIELDS`].
    Field(&'s str),
    /// A `resourceAttributes` field other than [`RESOURCE_ATTRIBUTE_FIELDS`].
    Attribute(&'s str),
    /// No `resourceAttributes` object: `can_i` reviews resources only.
    NoResourceAttributes,
}

/// Everything of `spec` that `can_i` cannot send, in order: the settings
/// report them all, a review built at run time fails with the first.
/// Unless `built`, `resourceAttributes` written as a string is a variable
/// still to be substituted, checked when it is.
pub fn unsendable(spec: &serde_json::Map<String, Value>, built: bool) -> Vec<Unsendable<'_>> {
    let mut found: Vec<Unsendable> = spec
        .keys()
        .filter(|k| !ACCESS_REVIEW_FIELDS.contains(&k.as_str()))
        .map(|k| Unsendable::Field(k))
        .collect();
    match spec.get("resourceAttributes") {
        Some(Value::Object(attributes)) => found.extend(
            attributes
                .keys()
                .filter(|k| !RESOURCE_ATTRIBUTE_FIELDS.contains(&k.as_str()))
                .map(|k| Unsendable::Attribute(k)),
        ),
        Some(Value::String(_)) if !built => {}
        _ => found.push(Unsendable::NoResourceAttributes),
    }
    found
}

const NO_RESOURCE_ATTRIBUTES: &str = "the SubjectAccessReview needs `resourceAttributes`: Kubewarden's `kubernetes/can_i` reviews access to resources";

/// The `can_i` request for a SubjectAccessReview `spec`; an error names
/// what `can_i` cannot send.
fn access_review(spec: &Value) -> Result<AccessReview, String> {
    let Some(spec) = spec.as_object() else {
        return Err(format!(
            "the SubjectAccessReview's `spec` must be an object, not `{}`",
            crate::jmespath::go::sprint(spec)
        ));
    };
    let message = |problem: &Unsendable| match problem {
        Unsendable::Field(key) => {
            format!("Kubewarden's `kubernetes/can_i` cannot send a SubjectAccessReview's `{key}`")
        }
        Unsendable::Attribute(key) => {
            format!("Kubewarden's `kubernetes/can_i` cannot send the resource attribute `{key}`")
        }
        Unsendable::NoResourceAttributes => NO_RESOURCE_ATTRIBUTES.to_string(),
    };
    if let Some(problem) = unsendable(spec, true).first() {
        return Err(message(problem));
    }
    let attributes = spec
        .get("resourceAttributes")
        .and_then(Value::as_object)
        .ok_or_else(|| NO_RESOURCE_ATTRIBUTES.to_string())?;
    let text =
        |map: &serde_json::Map<String, Value>, key: &str| -> Result<Option<String>, String> {
            match map.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::String(s)) => Ok(Some(s.clone())),
                Some(other) => Err(format!(
                    "`{key}` must be a string, not `{}`",
                    crate::jmespath::go::sprint(other)
                )),
            }
        };
    let groups = match spec.get("groups") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => Some(
            items
                .iter()
                .map(|g| match g {
                    Value::String(s) => Ok(s.clone()),
                    other => Err(format!(
                        "`groups` must list strings, not `{}`",
                        crate::jmespath::go::sprint(other)
                    )),
                })
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Some(other) => {
            return Err(format!(
                "`groups` must be a list, not `{}`",
                crate::jmespath::go::sprint(other)
            ))
        }
    };
    Ok(AccessReview {
        user: text(spec, "user")?.unwrap_or_default(),
        groups,
        group: text(attributes, "group")?,
        name: text(attributes, "name")?,
        namespace: text(attributes, "namespace")?,
        resource: text(attributes, "resource")?.unwrap_or_default(),
        subresource: text(attributes, "subresource")?,
        verb: text(attributes, "verb")?.unwrap_or_default(),
        version: text(attributes, "version")?,
    })
}

/// A resource path, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiPath {
    pub group: String,
    pub version: String,
    pub namespace: Option<String>,
    pub plural: String,
    /// `None` for a list.
    pub name: Option<String>,
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
}

impl ApiPath {
    /// Reads `/api/v1/namespaces/ns/pods?labelSelector=app%3Dweb` and the like.
    pub fn parse(url: &str) -> Result<Self, String> {
        let (path, query) = url.split_once('?').unwrap_or((url, ""));
        let segments: Vec<&str> = path.split('/').filter(|s| !s.is_empty()).collect();
        let (group, version, rest) = match segments.as_slice() {
            ["api", version, rest @ ..] => ("", *version, rest),
            ["apis", group, version, rest @ ..] => (*group, *version, rest),
            _ => {
                return Err(
                    "only Kubernetes resource paths (`/api/<version>/…` or `/apis/<group>/<version>/…`) can be read through Kubewarden's host capabilities".into(),
                )
            }
        };
        let (namespace, plural, name) = match rest {
            [] => return Err("the path names no resource".into()),
            ["namespaces", ns] if group.is_empty() => (None, "namespaces", Some(*ns)),
            ["namespaces", _] => return Err("the path names no resource".into()),
            ["namespaces", ns, plural] => (Some(*ns), *plural, None),
            ["namespaces", ns, plural, name] => (Some(*ns), *plural, Some(*name)),
            ["namespaces", _, _, _, sub, ..] | [_, _, sub, ..] => {
                return Err(format!(
                    "subresource `{sub}` cannot be read through Kubewarden's host capabilities"
                ))
            }
            [plural] => (None, *plural, None),
            [plural, name] => (None, *plural, Some(*name)),
        };
        let mut out = Self {
            group: group.to_string(),
            version: version.to_string(),
            namespace: namespace.map(String::from),
            plural: plural.to_string(),
            name: name.map(String::from),
            label_selector: None,
            field_selector: None,
        };
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            let value = percent_decode(value)?;
            match key {
                "labelSelector" => out.label_selector = Some(value),
                "fieldSelector" => out.field_selector = Some(value),
                other => {
                    return Err(format!(
                        "query parameter `{other}` is not supported (only `labelSelector` and `fieldSelector`)"
                    ))
                }
            }
        }
        if out.name.is_some() && (out.label_selector.is_some() || out.field_selector.is_some()) {
            return Err("selectors apply to lists, not to one object".into());
        }
        Ok(out)
    }

    fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    fn lookup(&self, kind: String) -> Lookup {
        match &self.name {
            Some(name) => Lookup::Get {
                api_version: self.api_version(),
                kind,
                namespace: self.namespace.clone(),
                name: name.clone(),
            },
            None => Lookup::List {
                api_version: self.api_version(),
                kind,
                namespace: self.namespace.clone(),
                label_selector: self.label_selector.clone(),
                field_selector: self.field_selector.clone(),
            },
        }
    }

    /// Reads the object or the List the path names. A plural that is not
    /// known is looked up in its CustomResourceDefinition, else guessed,
    /// and an error then says what was guessed.
    pub fn fetch(&self, cluster: &Cached<'_>) -> Result<Rc<serde_json::Value>, String> {
        let found = kind_of(&self.group, &self.plural);
        // The core group's resources are fixed: the API server answers any
        // other plural with a 404, so an entry's `default` applies.
        if found.guessed && self.group.is_empty() {
            return Err(format!(
                "the server could not find the requested resource (`{}` is not a core `v1` resource)",
                self.plural
            ));
        }
        let (kind, guessed) = if found.guessed {
            match self.kind_from_definition(cluster) {
                Some(kind) => (kind, false),
                None => (found.kind, true),
            }
        } else {
            (found.kind, false)
        };
        let lookup = self.lookup(kind.clone());
        cluster.fetch(&lookup).map_err(|e| {
            if guessed {
                format!(
                    "{e} (the kind `{kind}` was guessed from `{}`; let the policy read `apiextensions.k8s.io/v1` `CustomResourceDefinition` to look it up)",
                    self.plural
                )
            } else {
                e
            }
        })
    }

    fn kind_from_definition(&self, cluster: &Cached<'_>) -> Option<String> {
        let definition = cluster
            .fetch(&Lookup::Get {
                api_version: "apiextensions.k8s.io/v1".into(),
                kind: "CustomResourceDefinition".into(),
                namespace: None,
                name: format!("{}.{}", self.plural, self.group),
            })
            .ok()?;
        definition
            .pointer("/spec/names/kind")
            .and_then(serde_json::Value::as_str)
            .map(String::from)
    }
}

/// `%XX` escapes and `+` for space, as in a URL query.
fn percent_decode(text: &str) -> Result<String, String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' => {
                let hex = bytes
                    .get(i + 1..i + 3)
                    .and_then(|h| std::str::from_utf8(h).ok())
                    .and_then(|h| u8::from_str_radix(h, 16).ok())
                    .ok_or_else(|| format!("invalid escape in query `{text}`"))?;
                out.push(hex);
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).map_err(|_| format!("query `{text}` is not UTF-8 once decoded"))
}

/// The path with every `{{ }}` replaced by a placeholder, to check its
/// shape when the settings are validated.
pub fn shape_of(template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(rest.get(..start).unwrap_or(""));
        match rest.get(start..).and_then(|r| r.find("}}")) {
            Some(end) => {
                out.push('x');
                rest = rest.get(start + end + 2..).unwrap_or("");
            }
            None => {
                rest = "";
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Cluster;
    use serde_json::{json, Value};

    #[test]
    fn namespaced_policies_call_only_their_namespace() {
        let other = |path: &str, ns: &str| {
            Err(format!(
                "path {path} refers to namespace {ns}, which is different from the policy namespace team-a"
            ))
        };
        let none = |path: &str| {
            Err(format!(
                "path {path} does not contain a namespace segment, which is required for namespaced policies"
            ))
        };
        let cases = [
            (
                "core_list_in_the_namespace",
                "/api/v1/namespaces/team-a/pods",
                Ok(()),
            ),
            (
                "group_object_in_the_namespace",
                "/apis/apps/v1/namespaces/team-a/deployments/web",
                Ok(()),
            ),
            ("the_namespace_itself", "/api/v1/namespaces/team-a", Ok(())),
            (
                "with_a_query",
                "/api/v1/namespaces/team-a/pods?labelSelector=a%3Db",
                Ok(()),
            ),
            (
                "cleaned_first",
                "/api/v1/namespaces/team-b/../team-a/pods/",
                Ok(()),
            ),
            (
                "another_namespace",
                "/api/v1/namespaces/team-b/pods",
                other("/api/v1/namespaces/team-b/pods", "team-b"),
            ),
            ("cluster_wide_list", "/api/v1/pods", none("/api/v1/pods")),
            (
                "an_access_review",
                SUBJECT_ACCESS_REVIEWS,
                none(SUBJECT_ACCESS_REVIEWS),
            ),
            // Go's `/api(s)?/.*?/namespaces/` needs a segment between.
            (
                "no_version_segment",
                "/api/namespaces/team-a",
                none("/api/namespaces/team-a"),
            ),
            ("not_an_api_path", "/version", none("/version")),
        ];
        for (name, url, want) in cases {
            assert_eq!(check_policy_namespace(url, "team-a"), want, "{name}");
        }
    }

    fn path(
        group: &str,
        version: &str,
        namespace: Option<&str>,
        plural: &str,
        name: Option<&str>,
    ) -> ApiPath {
        ApiPath {
            group: group.into(),
            version: version.into(),
            namespace: namespace.map(String::from),
            plural: plural.into(),
            name: name.map(String::from),
            label_selector: None,
            field_selector: None,
        }
    }

    #[test]
    fn paths_name_objects_and_lists() {
        let selected = ApiPath {
            label_selector: Some("app=web,tier in (a,b)".into()),
            field_selector: Some("metadata.name=x".into()),
            ..path("", "v1", Some("ns"), "pods", None)
        };
        let cases = [
            ("core_list_all", "/api/v1/pods", path("", "v1", None, "pods", None)),
            ("namespaces", "/api/v1/namespaces", path("", "v1", None, "namespaces", None)),
            ("one_namespace", "/api/v1/namespaces/prod", path("", "v1", None, "namespaces", Some("prod"))),
            ("namespaced_list", "/api/v1/namespaces/prod/services", path("", "v1", Some("prod"), "services", None)),
            ("namespaced_get", "/api/v1/namespaces/prod/secrets/db", path("", "v1", Some("prod"), "secrets", Some("db"))),
            ("group_list", "/apis/apps/v1/namespaces/prod/deployments", path("apps", "v1", Some("prod"), "deployments", None)),
            ("cluster_scoped_get", "/apis/storage.k8s.io/v1/storageclasses/standard/", path("storage.k8s.io", "v1", None, "storageclasses", Some("standard"))),
            ("selectors", "/api/v1/namespaces/ns/pods?labelSelector=app%3Dweb%2Ctier+in+(a,b)&fieldSelector=metadata.name=x", selected),
        ];
        for (name, url, want) in cases {
            assert_eq!(ApiPath::parse(url), Ok(want), "{name}");
        }
    }

    #[test]
    fn paths_the_host_cannot_serve() {
        let cases = [
            ("non_resource_url", "/version", "only Kubernetes resource paths (`/api/<version>/…` or `/apis/<group>/<version>/…`) can be read through Kubewarden's host capabilities"),
            ("discovery", "/apis/apps/v1", "the path names no resource"),
            ("subresource", "/api/v1/namespaces/ns/pods/web/log", "subresource `log` cannot be read through Kubewarden's host capabilities"),
            ("cluster_subresource", "/api/v1/nodes/n1/proxy", "subresource `proxy` cannot be read through Kubewarden's host capabilities"),
            ("pagination", "/api/v1/pods?limit=10", "query parameter `limit` is not supported (only `labelSelector` and `fieldSelector`)"),
            ("selector_on_one_object", "/api/v1/namespaces/ns/pods/web?labelSelector=a", "selectors apply to lists, not to one object"),
            ("bad_escape", "/api/v1/pods?labelSelector=%zz", "invalid escape in query `%zz`"),
        ];
        for (name, url, want) in cases {
            assert_eq!(ApiPath::parse(url), Err(want.to_string()), "{name}");
        }
    }

    #[test]
    fn shapes_replace_variables() {
        assert_eq!(
            shape_of("/api/v1/namespaces/{{ request.namespace }}/pods/{{element.name}}"),
            "/api/v1/namespaces/x/pods/x"
        );
    }

    struct Lookups(std::cell::RefCell<Vec<Lookup>>);

    impl Cluster for Lookups {
        fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
            self.0.borrow_mut().push(lookup.clone());
            match lookup {
                Lookup::Get { kind, name, .. } if kind == "CustomResourceDefinition" => {
                    if name == "widgetpolicies.example.com" {
                        Ok(json!({"spec": {"names": {"kind": "WidgetPolicy"}}}))
                    } else {
                        Err("not found".into())
                    }
                }
                _ => Err("not found".into()),
            }
        }
    }

    #[test]
    fn an_unknown_core_resource_is_not_found_without_asking_the_host() {
        let cluster = Lookups(Default::default());
        let cached = Cached::new(&cluster);
        let path = ApiPath::parse("/api/v1/namespaces/team-a/invalid");
        assert_eq!(
            path.map(|p| p.fetch(&cached)),
            Ok(Err("the server could not find the requested resource (`invalid` is not a core `v1` resource)".into()))
        );
        assert!(cluster.0.borrow().is_empty(), "no host call");
    }

    #[test]
    fn unknown_kinds_come_from_their_definition_or_are_guessed() {
        let cluster = Lookups(Default::default());
        let cached = Cached::new(&cluster);
        let from_definition = ApiPath::parse("/apis/example.com/v1/widgetpolicies");
        assert_eq!(
            from_definition.map(|p| p.fetch(&cached)),
            Ok(Err("not found".into()))
        );
        assert!(matches!(cluster.0.borrow().last(),
            Some(Lookup::List { kind, .. }) if kind == "WidgetPolicy"));
        let guessed = ApiPath::parse("/apis/example.com/v1/gadgets");
        assert_eq!(
            guessed.map(|p| p.fetch(&cached)),
            Ok(Err("not found (the kind `Gadget` was guessed from `gadgets`; let the policy read `apiextensions.k8s.io/v1` `CustomResourceDefinition` to look it up)".into()))
        );
    }
}
