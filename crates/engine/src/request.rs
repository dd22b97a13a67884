//! A read-only view of the raw AdmissionRequest JSON.
//!
//! The engine reads the request as JSON rather than a typed copy so that
//! every field a policy may look at (`request.*` variables, unknown object
//! fields) stays exactly as the API server sent it.

use serde_json::Value;

/// `group/version/kind` of a request or a kind selector.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

/// The fields every rule reads are looked up once, when the view is made:
/// each lookup is a walk of the request's B-tree map.
#[derive(Debug, Clone, Copy)]
pub struct AdmissionRequest<'a> {
    raw: &'a Value,
    operation: &'a str,
    object: &'a Value,
    old_object: &'a Value,
}

static NULL: Value = Value::Null;

impl<'a> AdmissionRequest<'a> {
    pub fn new(raw: &'a Value) -> Self {
        Self {
            raw,
            operation: raw.get("operation").and_then(Value::as_str).unwrap_or(""),
            object: raw.get("object").unwrap_or(&NULL),
            old_object: raw.get("oldObject").unwrap_or(&NULL),
        }
    }

    pub fn raw(&self) -> &'a Value {
        self.raw
    }

    fn str_field(&self, key: &str) -> &'a str {
        self.raw.get(key).and_then(Value::as_str).unwrap_or("")
    }

    pub fn operation(&self) -> &'a str {
        self.operation
    }

    pub fn sub_resource(&self) -> &'a str {
        self.str_field("subResource")
    }

    /// The request's kind; falls back to the object's `apiVersion`/`kind`
    /// when the host sent no `kind` (e.g. a hand-written test request).
    pub fn kind(&self) -> Gvk {
        let kind = self.raw.get("kind");
        let field = |k: &str| {
            kind.and_then(|v| v.get(k))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let gvk = Gvk {
            group: field("group"),
            version: field("version"),
            kind: field("kind"),
        };
        if !gvk.kind.is_empty() {
            return gvk;
        }
        let resource = self.resource();
        let api_version = resource
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or("");
        let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
        Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: resource
                .get("kind")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
        }
    }

    pub fn object(&self) -> &'a Value {
        self.object
    }

    pub fn old_object(&self) -> &'a Value {
        self.old_object
    }

    /// The resource a rule checks: `oldObject` for DELETE (there is no new
    /// object), otherwise `object`, as Kyverno does.
    pub fn resource(&self) -> &'a Value {
        if self.operation() == "DELETE" || self.object().is_null() {
            self.old_object()
        } else {
            self.object()
        }
    }

    /// The namespace of the request, or of the resource when the request
    /// does not say.
    pub fn namespace(&self) -> &'a str {
        let ns = self.str_field("namespace");
        if !ns.is_empty() {
            return ns;
        }
        metadata_str(self.resource(), "namespace")
    }

    pub fn name(&self) -> &'a str {
        let name = metadata_str(self.resource(), "name");
        if name.is_empty() {
            self.str_field("name")
        } else {
            name
        }
    }

    pub fn user_info(&self) -> &'a Value {
        self.raw.get("userInfo").unwrap_or(&NULL)
    }

    pub fn username(&self) -> &'a str {
        self.user_info()
            .get("username")
            .and_then(Value::as_str)
            .unwrap_or("")
    }

    pub fn groups(&self) -> impl Iterator<Item = &'a str> {
        self.user_info()
            .get("groups")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
    }
}

/// `metadata.<key>` of a resource as a string, or `""`.
pub fn metadata_str<'v>(resource: &'v Value, key: &str) -> &'v str {
    resource
        .get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// `metadata.<key>` of a resource as a string map (labels, annotations).
pub fn metadata_map<'v>(
    resource: &'v Value,
    key: &str,
) -> Option<&'v serde_json::Map<String, Value>> {
    resource
        .get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_object)
}

/// The `request` and namespace Kyverno's CEL rules see. Kyverno
/// (`validate_cel.go`) rebuilds the request from admission attributes, as
/// Kubernetes' `CreateAdmissionRequest` does: the name and namespace come
/// from the object (no namespace for a Namespace, whose `namespaceObject`
/// is then null), `dryRun` is always false, and there is no uid,
/// sub-resource, object or options.
#[derive(Debug, Clone)]
pub struct CelRequest {
    pub request: Value,
    pub namespace: String,
}

impl CelRequest {
    pub fn new(request: &Value) -> Self {
        let view = AdmissionRequest::new(request);
        let resource = view.resource();
        let gvk = view.kind();
        let namespace = if gvk.kind == "Namespace" && gvk.version == "v1" && gvk.group.is_empty() {
            ""
        } else {
            metadata_str(resource, "namespace")
        };
        let field = |key: &str| request.get(key).cloned().unwrap_or(Value::Null);
        let mut out = serde_json::Map::new();
        out.insert("uid".into(), Value::String(String::new()));
        for (key, from) in [
            ("kind", "kind"),
            ("resource", "resource"),
            ("requestKind", "kind"),
            ("requestResource", "resource"),
        ] {
            out.insert(key.into(), field(from));
        }
        let name = metadata_str(resource, "name");
        if !name.is_empty() {
            out.insert("name".into(), Value::String(name.to_string()));
        }
        if !namespace.is_empty() {
            out.insert("namespace".into(), Value::String(namespace.to_string()));
        }
        out.insert("operation".into(), field("operation"));
        out.insert("userInfo".into(), field("userInfo"));
        out.insert("dryRun".into(), Value::Bool(false));
        Self {
            request: Value::Object(out),
            namespace: namespace.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn delete_requests_use_the_old_object() {
        let raw = json!({"operation": "DELETE", "object": null,
            "oldObject": {"kind": "Pod", "metadata": {"name": "old", "namespace": "ns"}}});
        let req = AdmissionRequest::new(&raw);
        assert_eq!(req.name(), "old");
        assert_eq!(req.namespace(), "ns");
    }

    #[test]
    fn kind_falls_back_to_the_object() {
        let raw = json!({"object": {"apiVersion": "apps/v1", "kind": "Deployment"}});
        let gvk = AdmissionRequest::new(&raw).kind();
        assert_eq!(
            gvk,
            Gvk {
                group: "apps".into(),
                version: "v1".into(),
                kind: "Deployment".into()
            }
        );
    }
}
