//! Cluster data a rule may need beyond the admission request: Kubewarden's
//! context-aware host capabilities (`get_resource`, `list_resources_*`),
//! behind a trait so that the engine runs natively with no cluster at all.
//! The waPC implementation lives at the edge (`lib.rs`); lookups are made
//! at most once per request.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{json, Value};

/// One lookup in the cluster, worded as Kubewarden's host expects it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Lookup {
    /// `get_resource`: one object.
    Get {
        api_version: String,
        kind: String,
        namespace: Option<String>,
        name: String,
    },
    /// `list_resources_by_namespace` (with a namespace) or
    /// `list_resources_all`: a List of objects of one kind.
    List {
        api_version: String,
        kind: String,
        namespace: Option<String>,
        label_selector: Option<String>,
        field_selector: Option<String>,
    },
    /// Kubewarden's OCI capabilities (`kubewarden`/`oci`), for an image.
    Oci { read: OciRead, image: String },
    /// `can_i`: a SubjectAccessReview's status.
    CanI(AccessReview),
}

/// What Kubewarden's `can_i` sends of a SubjectAccessReview: the user, their
/// groups, and the resource attributes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct AccessReview {
    pub user: String,
    pub groups: Option<Vec<String>>,
    pub group: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub resource: String,
    pub subresource: Option<String>,
    pub verb: String,
    pub version: Option<String>,
}

/// What the OCI capabilities read of an image.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OciRead {
    /// `v1/manifest_digest`: `{digest}` of what the reference names.
    ManifestDigest,
    /// `v1/oci_manifest`: the manifest or image index the reference names.
    Manifest,
    /// `v1/oci_manifest_config`: `{manifest, digest, config}` of the image
    /// for the host's platform.
    ManifestAndConfig,
}

impl Lookup {
    /// The host namespace (`kubernetes`, `oci`), operation and JSON payload.
    pub fn host_call(&self) -> (&'static str, &'static str, Value) {
        match self {
            Lookup::Get {
                api_version,
                kind,
                namespace,
                name,
            } => (
                "kubernetes",
                "get_resource",
                json!({
                    "api_version": api_version,
                    "kind": kind,
                    "name": name,
                    "namespace": namespace,
                    "disable_cache": false,
                }),
            ),
            Lookup::List {
                api_version,
                kind,
                namespace: Some(namespace),
                label_selector,
                field_selector,
            } => (
                "kubernetes",
                "list_resources_by_namespace",
                json!({
                    "api_version": api_version,
                    "kind": kind,
                    "namespace": namespace,
                    "label_selector": label_selector,
                    "field_selector": field_selector,
                }),
            ),
            Lookup::List {
                api_version,
                kind,
                namespace: None,
                label_selector,
                field_selector,
            } => (
                "kubernetes",
                "list_resources_all",
                json!({
                    "api_version": api_version,
                    "kind": kind,
                    "label_selector": label_selector,
                    "field_selector": field_selector,
                }),
            ),
            Lookup::CanI(review) => (
                "kubernetes",
                "can_i",
                json!({
                    "subject_access_review": {
                        "groups": review.groups,
                        "resource_attributes": {
                            "group": review.group,
                            "name": review.name,
                            "namespace": review.namespace,
                            "resource": review.resource,
                            "subresource": review.subresource,
                            "verb": review.verb,
                            "version": review.version,
                        },
                        "user": review.user,
                    },
                    "disable_cache": false,
                }),
            ),
            Lookup::Oci { read, image } => {
                let operation = match read {
                    OciRead::ManifestDigest => "v1/manifest_digest",
                    OciRead::Manifest => "v1/oci_manifest",
                    OciRead::ManifestAndConfig => "v1/oci_manifest_config",
                };
                ("oci", operation, Value::String(image.clone()))
            }
        }
    }

    /// How the lookup reads in messages (`v1 Namespace team-a`).
    pub fn describe(&self) -> String {
        match self {
            Lookup::Get {
                api_version,
                kind,
                namespace: Some(namespace),
                name,
            } => format!("{api_version} {kind} {namespace}/{name}"),
            Lookup::Get {
                api_version,
                kind,
                namespace: None,
                name,
            } => format!("{api_version} {kind} {name}"),
            Lookup::List {
                api_version,
                kind,
                namespace,
                label_selector,
                field_selector,
            } => {
                let mut text = format!("the {api_version} {kind} list");
                if let Some(namespace) = namespace {
                    text.push_str(&format!(" in {namespace}"));
                }
                for selector in [label_selector, field_selector].into_iter().flatten() {
                    text.push_str(&format!(" selected by `{selector}`"));
                }
                text
            }
            Lookup::Oci { read, image } => {
                let what = match read {
                    OciRead::ManifestDigest => "the manifest digest",
                    OciRead::Manifest => "the manifest",
                    OciRead::ManifestAndConfig => "the manifest and config",
                };
                format!("{what} of image `{image}`")
            }
            Lookup::CanI(review) => format!(
                "whether `{}` may {} {}",
                review.user, review.verb, review.resource
            ),
        }
    }

    /// Every object of a kind, in every namespace.
    pub fn list_all(api_version: &str, kind: &str) -> Self {
        Lookup::List {
            api_version: api_version.into(),
            kind: kind.into(),
            namespace: None,
            label_selector: None,
            field_selector: None,
        }
    }
}

/// Answers lookups; an error says why the object could not be read.
pub trait Cluster {
    fn fetch(&self, lookup: &Lookup) -> Result<Value, String>;

    /// The data a global context store holds for the entry `name`, in place
    /// of what its `GlobalContextEntry` reads (a Kyverno test's mocks, as
    /// Kyverno's CLI keeps them: the value, or an object of projections).
    /// Kubewarden's host keeps none: the entry is read from the cluster.
    fn global_context(&self, _name: &str) -> Option<Result<Value, String>> {
        None
    }

    /// A response that stands in for an `apiCall` of `method` to `url` (the
    /// path after substitution): a Kyverno test's `apiCallResponses`.
    /// Kubewarden's host has none: the call is made.
    fn api_call_response(&self, _method: &str, _url: &str) -> Option<MockedResponse> {
        None
    }
}

/// A mocked answer to an API call: its HTTP status and its JSON body.
#[derive(Debug, Clone, PartialEq)]
pub struct MockedResponse {
    pub status: u16,
    pub body: Value,
}

/// No cluster: natively, in tests, and wherever a host gives no access.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoCluster;

impl Cluster for NoCluster {
    fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
        Err(format!(
            "cannot read {}: no cluster access",
            lookup.describe()
        ))
    }
}

/// Most host calls (cluster reads, registry lookups, access reviews) one
/// request may make, each object once. A `foreach` may look something up
/// for each of up to 50,000 elements: without a bound one admission
/// request could send that many calls to the API server or a registry.
pub const MAX_CALLS: usize = 1_000;

/// Remembers every answer of the cluster it wraps, so that a request asks
/// for each object once, however many rules read it.
pub struct Cached<'c> {
    cluster: &'c dyn Cluster,
    /// Shared, not cloned: a List can be large, and most readers only
    /// query it.
    answers: RefCell<HashMap<Lookup, Result<Rc<Value>, String>>>,
    /// Calls made to `cluster` so far.
    calls: std::cell::Cell<usize>,
}

impl<'c> Cached<'c> {
    pub fn new(cluster: &'c dyn Cluster) -> Self {
        Self {
            cluster,
            answers: RefCell::new(HashMap::new()),
            calls: std::cell::Cell::new(0),
        }
    }

    pub fn fetch(&self, lookup: &Lookup) -> Result<Rc<Value>, String> {
        if let Some(answer) = self.answers.borrow().get(lookup) {
            return answer.clone();
        }
        if self.calls.get() >= MAX_CALLS {
            // Not remembered: the refusal is about this request's calls,
            // not about the object.
            return Err(format!(
                "cannot read {}: the request made {MAX_CALLS} calls to the cluster and registries (the limit per request)",
                lookup.describe()
            ));
        }
        self.calls.set(self.calls.get() + 1);
        let answer = self.cluster.fetch(lookup).map(Rc::new);
        self.answers
            .borrow_mut()
            .insert(lookup.clone(), answer.clone());
        answer
    }

    /// Answers `lookup` with `value` from now on, without asking the
    /// cluster (objects the settings give in place of the cluster's).
    pub fn seed(&self, lookup: Lookup, value: Value) {
        self.answers.borrow_mut().insert(lookup, Ok(Rc::new(value)));
    }

    /// [`Cluster::global_context`] of the wrapped cluster.
    pub fn global_context(&self, name: &str) -> Option<Result<Value, String>> {
        self.cluster.global_context(name)
    }

    /// [`Cluster::api_call_response`] of the wrapped cluster.
    pub fn api_call_response(&self, method: &str, url: &str) -> Option<MockedResponse> {
        self.cluster.api_call_response(method, url)
    }

    /// The Namespace object `name`.
    pub fn namespace(&self, name: &str) -> Result<Rc<Value>, String> {
        self.fetch(&Lookup::Get {
            api_version: "v1".into(),
            kind: "Namespace".into(),
            namespace: None,
            name: name.into(),
        })
    }

    /// The labels of Namespace `name` (none when it has none).
    pub fn namespace_labels(&self, name: &str) -> Result<serde_json::Map<String, Value>, String> {
        Ok(self
            .namespace(name)?
            .pointer("/metadata/labels")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    struct Counting {
        calls: Cell<usize>,
    }

    impl Cluster for Counting {
        fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
            self.calls.set(self.calls.get() + 1);
            Ok(json!({"asked": lookup.describe()}))
        }
    }

    #[test]
    fn each_object_is_fetched_once_per_request() {
        let counting = Counting {
            calls: Cell::new(0),
        };
        let cached = Cached::new(&counting);
        assert_eq!(
            cached.namespace("team-a"),
            Ok(Rc::new(json!({"asked": "v1 Namespace team-a"})))
        );
        assert!(cached.namespace("team-a").is_ok());
        assert!(cached.namespace("team-b").is_ok());
        assert_eq!(counting.calls.get(), 2);
    }

    #[test]
    fn one_request_makes_a_bounded_number_of_calls() {
        let counting = Counting {
            calls: Cell::new(0),
        };
        let cached = Cached::new(&counting);
        for i in 0..MAX_CALLS {
            assert!(cached.namespace(&format!("ns-{i}")).is_ok(), "call {i}");
        }
        assert_eq!(
            cached.namespace("one-more"),
            Err(format!("cannot read v1 Namespace one-more: the request made {MAX_CALLS} calls to the cluster and registries (the limit per request)"))
        );
        assert!(
            cached.namespace("ns-7").is_ok(),
            "what was read is still answered"
        );
        assert_eq!(counting.calls.get(), MAX_CALLS);
    }

    #[test]
    fn lookups_are_worded_as_the_host_expects() {
        let lookup = Lookup::Get {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            namespace: Some("default".into()),
            name: "settings".into(),
        };
        assert_eq!(
            lookup.host_call(),
            (
                "kubernetes",
                "get_resource",
                json!({"api_version": "v1", "kind": "ConfigMap", "name": "settings",
                    "namespace": "default", "disable_cache": false})
            )
        );
        assert_eq!(
            NoCluster.fetch(&lookup),
            Err("cannot read v1 ConfigMap default/settings: no cluster access".into())
        );
        let namespaced = Lookup::List {
            api_version: "v1".into(),
            kind: "Pod".into(),
            namespace: Some("team-a".into()),
            label_selector: Some("app=web".into()),
            field_selector: None,
        };
        assert_eq!(
            namespaced.host_call(),
            (
                "kubernetes",
                "list_resources_by_namespace",
                json!({"api_version": "v1", "kind": "Pod", "namespace": "team-a",
                    "label_selector": "app=web", "field_selector": null})
            )
        );
        assert_eq!(
            namespaced.describe(),
            "the v1 Pod list in team-a selected by `app=web`"
        );
        let oci = Lookup::Oci {
            read: OciRead::ManifestAndConfig,
            image: "ghcr.io/x/y:1".into(),
        };
        assert_eq!(
            oci.host_call(),
            ("oci", "v1/oci_manifest_config", json!("ghcr.io/x/y:1"))
        );
        assert_eq!(
            oci.describe(),
            "the manifest and config of image `ghcr.io/x/y:1`"
        );
        assert_eq!(
            Lookup::list_all("rbac.authorization.k8s.io/v1", "ClusterRoleBinding").host_call(),
            (
                "kubernetes",
                "list_resources_all",
                json!({"api_version": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                    "label_selector": null, "field_selector": null})
            )
        );
    }
}
