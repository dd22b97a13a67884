//! Kyverno's JSON context: the document `{{ }}` variables and JMESPath
//! queries read. `request` is the AdmissionRequest as the API server sent
//! it; `serviceAccountName`, `serviceAccountNamespace` and `images` are
//! derived from it; rules add their `context` entries and foreach its
//! `element`s on top, and take them away again afterwards.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::autogen;
use crate::images;
use crate::jmespath::{CompileError, Query, SearchError};
use crate::request::AdmissionRequest;
use crate::roles::Roles;

static NULL: Value = Value::Null;

/// Why a query of the context failed, worded as Kyverno's `Query` does.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueryError {
    #[error("invalid query (nil)")]
    Empty,
    #[error("incorrect query {query}: {error}")]
    Compile { query: String, error: CompileError },
    #[error("JMESPath query failed: {0}")]
    Search(SearchError),
}

/// Kyverno's `images` variable: the images of a Pod or pod controller.
fn images_variable(object: &Value) -> Result<Option<Value>, String> {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let Some(template) = autogen::pod_template_path(kind) else {
        return Ok(None);
    };
    images::images_of(object, template).map_err(images_failure)
}

/// Whether [`images_variable`] would succeed, without building it.
fn check_images(object: &Value) -> Result<(), String> {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let Some(template) = autogen::pod_template_path(kind) else {
        return Ok(());
    };
    images::check_images(object, template).map_err(images_failure)
}

fn images_failure(e: String) -> String {
    format!("failed to add image information to the policy rule context: {e}")
}

#[derive(Debug, Clone)]
pub struct Context {
    root: Value,
    /// Kyverno's `images` variable, built by the first query that may read
    /// it (most rules never do, and it costs more than a small rule); its
    /// references are checked up front, which is all that can fail.
    /// `Some(None)` once it is in `root` or known to be absent.
    images: std::cell::OnceCell<Option<Value>>,
    delete: bool,
    /// Why `images` could not be built: Kyverno fails every rule that
    /// needs the context then.
    images_error: Option<String>,
}

impl Context {
    /// The context Kyverno builds for an admission request. The request is
    /// moved in, not copied: a fresh instance serves one request, and a
    /// large object must not cost a second copy.
    pub fn new(request: Value) -> Self {
        let view = AdmissionRequest::new(&request);
        let delete = view.operation() == "DELETE";
        let (sa_name, sa_namespace) = service_account(view.username());
        let images_error = if delete {
            None
        } else {
            check_images(view.object()).err()
        };
        let images = std::cell::OnceCell::new();
        if delete || images_error.is_some() {
            let _ = images.set(None);
        }
        let mut req = match request {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        // Kyverno always has both keys: `null` when the request has no such object.
        for key in ["object", "oldObject"] {
            req.entry(key.to_string()).or_insert(Value::Null);
        }
        let mut root = Map::new();
        root.insert("request".into(), Value::Object(req));
        root.insert("serviceAccountName".into(), Value::String(sa_name));
        root.insert(
            "serviceAccountNamespace".into(),
            Value::String(sa_namespace),
        );
        Self {
            root: Value::Object(root),
            images,
            delete,
            images_error,
        }
    }

    /// Why the context is unusable for rules that read it, if it is.
    pub fn images_error(&self) -> Option<&str> {
        self.images_error.as_deref()
    }

    /// The admission request, as the API server sent it.
    pub fn request(&self) -> &Value {
        self.root.get("request").unwrap_or(&NULL)
    }

    /// A context over a plain document (tests, `variable.value` + `jmesPath`).
    pub fn from_value(root: Value) -> Self {
        Self {
            root,
            images: std::cell::OnceCell::from(None),
            delete: false,
            images_error: None,
        }
    }

    /// Whether the request deletes: variables then read `request.oldObject`
    /// where they say `request.object`.
    pub fn is_delete(&self) -> bool {
        self.delete
    }

    pub fn root(&self) -> &Value {
        &self.root
    }

    /// Runs a compiled query against the whole context.
    pub fn search<'a>(&'a self, query: &'a Query) -> Result<Cow<'a, Value>, QueryError> {
        let images = match self.images.get() {
            Some(built) => built.as_ref(),
            None if query.may_read("images") => self.built_images().as_ref(),
            None => None,
        };
        let found = match images {
            Some(images) => query.search_in(&self.root, &[("images", images)]),
            None => query.search(&self.root),
        };
        found.map_err(QueryError::Search)
    }

    fn built_images(&self) -> &Option<Value> {
        self.images
            .get_or_init(|| images_variable(self.object()).ok().flatten())
    }

    /// Puts `images` into the document itself, before an entry of that name
    /// replaces it or the object it is read from is swapped.
    fn settle_images(&mut self) {
        let images = self.built_images().clone();
        self.images = std::cell::OnceCell::from(None);
        if let (Some(images), Value::Object(map)) = (images, &mut self.root) {
            map.entry("images").or_insert(images);
        }
    }

    /// Compiles and runs `text`, for expressions known only at run time.
    pub fn query(&self, text: &str) -> Result<Value, QueryError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(QueryError::Empty);
        }
        let query = Query::compile(text).map_err(|error| QueryError::Compile {
            query: text.to_string(),
            error,
        })?;
        self.search(&query).map(Cow::into_owned)
    }

    /// Sets a top-level entry, returning what it replaces so that the caller
    /// can put it back with [`Context::restore`].
    pub fn set(&mut self, name: &str, value: Value) -> Option<Value> {
        if name == "images" {
            self.settle_images();
        }
        match &mut self.root {
            Value::Object(map) => map.insert(name.to_string(), value),
            _ => None,
        }
    }

    /// Adds the requester's roles as Kyverno does (`request.roles`,
    /// `request.clusterRoles`, each left out when empty).
    pub fn add_roles(&mut self, roles: &Roles) {
        let Some(Value::Object(request)) = self.root.get_mut("request") else {
            return;
        };
        for (key, list) in [
            ("roles", &roles.roles),
            ("clusterRoles", &roles.cluster_roles),
        ] {
            if !list.is_empty() {
                let list = list.iter().cloned().map(Value::String).collect();
                request.insert(key.to_string(), Value::Array(list));
            }
        }
    }

    /// Undoes [`Context::set`].
    pub fn restore(&mut self, name: &str, previous: Option<Value>) {
        if let Value::Object(map) = &mut self.root {
            match previous {
                Some(v) => {
                    map.insert(name.to_string(), v);
                }
                None => {
                    map.remove(name);
                }
            }
        }
    }

    /// `request.object`.
    pub fn object(&self) -> &Value {
        self.request().get("object").unwrap_or(&NULL)
    }

    /// Replaces `request.object` (Kyverno re-validates the old object of
    /// an UPDATE this way); returns the previous value.
    pub fn swap_object(&mut self, object: Value) -> Value {
        // Kyverno reads `images` from the new object only.
        self.settle_images();
        match self
            .root
            .get_mut("request")
            .and_then(|r| r.get_mut("object"))
        {
            Some(slot) => std::mem::replace(slot, object),
            None => Value::Null,
        }
    }

    /// Replaces `request.operation`; returns the previous one.
    pub fn swap_operation(&mut self, operation: &str) -> String {
        match self
            .root
            .get_mut("request")
            .and_then(|r| r.get_mut("operation"))
        {
            Some(slot) => match std::mem::replace(slot, Value::String(operation.into())) {
                Value::String(s) => s,
                _ => String::new(),
            },
            None => String::new(),
        }
    }
}

/// `system:serviceaccount:NS:NAME` → (NAME, NS); anything else → empty.
/// Like Kyverno, only the prefix's length is checked, not its text.
fn service_account(username: &str) -> (String, String) {
    const PREFIX: &str = "system:serviceaccount:";
    let rest = if username.len() <= PREFIX.len() {
        ""
    } else {
        username.get(PREFIX.len()..).unwrap_or("")
    };
    let parts: Vec<&str> = rest.split(':').collect();
    match (parts.first(), parts.get(1)) {
        (Some(ns), Some(name)) => (name.to_string(), ns.to_string()),
        _ => (String::new(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn images_are_read_from_pods_and_pod_controllers_only() {
        let cronjob = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}}});
        let images = images_variable(&cronjob).unwrap().unwrap();
        assert_eq!(
            images["containers"]["c"]["jsonPointer"],
            "/spec/jobTemplate/spec/template/spec/containers/0/image"
        );
        let config =
            json!({"kind": "ConfigMap", "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        assert!(images_variable(&config).unwrap().is_none());
    }

    #[test]
    fn images_are_built_when_read_and_stay_those_of_the_new_object() {
        let pod = |image: &str| json!({"kind": "Pod", "spec": {"containers": [{"name": "c", "image": image}]}});
        let request = json!({"operation": "UPDATE", "object": pod("nginx:new"),
            "oldObject": pod("nginx:old")});
        let tag = || Query::compile("images.containers.c.tag").unwrap();
        let keys = || Query::compile("keys(@)").unwrap();
        let read = |ctx: &Context, q: &Query| ctx.search(q).map(Cow::into_owned);

        let ctx = Context::new(request.clone());
        assert_eq!(read(&ctx, &tag()), Ok(json!("new")), "read_on_demand");
        assert_eq!(
            read(&ctx, &keys()),
            Ok(json!([
                "images",
                "request",
                "serviceAccountName",
                "serviceAccountNamespace"
            ])),
            "whole_context_holds_images"
        );

        let mut ctx = Context::new(request.clone());
        let old = ctx.request().get("oldObject").cloned().unwrap_or_default();
        let new = ctx.swap_object(old);
        assert_eq!(
            read(&ctx, &tag()),
            Ok(json!("new")),
            "swapped_object_keeps_new_images"
        );
        ctx.swap_object(new);

        let mut ctx = Context::new(request);
        let previous = ctx.set("images", json!({"containers": {"c": {"tag": "entry"}}}));
        assert_eq!(
            read(&ctx, &tag()),
            Ok(json!("entry")),
            "entry_named_images_wins"
        );
        ctx.restore("images", previous);
        assert_eq!(
            read(&ctx, &tag()),
            Ok(json!("new")),
            "restored_builtin_images"
        );
    }

    #[test]
    fn service_account_comes_from_the_username() {
        let cases = [
            (
                "service_account",
                "system:serviceaccount:kube-system:replicaset-controller",
                ("replicaset-controller", "kube-system"),
            ),
            ("user", "alice", ("", "")),
            ("prefix_only", "system:serviceaccount:", ("", "")),
            ("no_name", "system:serviceaccount:ns", ("", "")),
        ];
        for (name, username, (sa, ns)) in cases {
            assert_eq!(
                service_account(username),
                (sa.to_string(), ns.to_string()),
                "{name}"
            );
        }
    }

    #[test]
    fn context_holds_the_request_and_derived_variables() {
        let raw = json!({
            "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:ns1:builder"},
            "object": {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        });
        let ctx = Context::new(raw);
        assert_eq!(
            ctx.query("request.object.metadata.name").unwrap(),
            json!("p")
        );
        assert_eq!(ctx.query("request.oldObject").unwrap(), json!(null));
        assert_eq!(ctx.query("serviceAccountName").unwrap(), json!("builder"));
        assert_eq!(ctx.query("serviceAccountNamespace").unwrap(), json!("ns1"));
        assert_eq!(
            ctx.query("images.containers.c.reference").unwrap(),
            json!("docker.io/nginx:latest")
        );
        assert_eq!(
            ctx.query("  ").unwrap_err().to_string(),
            "invalid query (nil)"
        );
        assert_eq!(
            ctx.query("request.object.metadata.labels")
                .unwrap_err()
                .to_string(),
            "JMESPath query failed: Unknown key \"labels\" in path"
        );
    }

    #[test]
    fn entries_are_set_and_restored() {
        let mut ctx = Context::from_value(json!({"a": 1}));
        let previous = ctx.set("a", json!(2));
        let added = ctx.set("b", json!(3));
        assert_eq!(ctx.query("[a, b]").unwrap(), json!([2, 3]));
        ctx.restore("b", added);
        ctx.restore("a", previous);
        assert_eq!(ctx.root(), &json!({"a": 1}));
    }
}
