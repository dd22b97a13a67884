//! Checks shared by the CLI's integration tests: manifests against the
//! Kubewarden CRDs' schemas, and webhook rules against requests.
#![allow(dead_code)]

use std::path::PathBuf;

use serde_json::Value;

/// The workspace root.
pub fn workspace() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The `v1` openAPIV3Schema of the CRD in `test_data/kubewarden-crds/`.
fn crd_schema(file: &str) -> Value {
    let path = workspace().join("test_data/kubewarden-crds").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path:?}: {e}"));
    let crd: Value = serde_yaml::from_str(&text).unwrap();
    let version = crd["spec"]["versions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["name"] == "v1")
        .expect("a v1 version");
    strict(version["schema"]["openAPIV3Schema"].clone())
}

/// The API server prunes fields a structural schema does not name; here
/// they are errors, so a misspelt field cannot vanish unnoticed.
fn strict(mut schema: Value) -> Value {
    if let Some(object) = schema.as_object_mut() {
        let open = object.contains_key("additionalProperties")
            || object.contains_key("x-kubernetes-preserve-unknown-fields");
        if object.contains_key("properties") && !open {
            object.insert("additionalProperties".into(), Value::Bool(false));
        }
        for (key, value) in object.iter_mut() {
            match key.as_str() {
                "properties" => {
                    if let Some(properties) = value.as_object_mut() {
                        for property in properties.values_mut() {
                            *property = strict(property.take());
                        }
                    }
                }
                "items" | "additionalProperties" => *value = strict(value.take()),
                _ => {}
            }
        }
    }
    schema
}

/// Validators for both Kubewarden policy kinds.
pub struct Crds {
    cluster: jsonschema::Validator,
    namespaced: jsonschema::Validator,
}

impl Crds {
    pub fn load() -> Self {
        let validator = |file| jsonschema::draft4::new(&crd_schema(file)).unwrap();
        Self {
            cluster: validator("policies.kubewarden.io_clusteradmissionpolicies.yaml"),
            namespaced: validator("policies.kubewarden.io_admissionpolicies.yaml"),
        }
    }

    /// Every way `manifest` breaks its CRD's schema (plus the checks
    /// the schema leaves out: apiVersion, kind, name).
    pub fn problems(&self, manifest: &Value) -> Vec<String> {
        let validator = match manifest["kind"].as_str() {
            Some("ClusterAdmissionPolicy") => &self.cluster,
            Some("AdmissionPolicy") => &self.namespaced,
            other => return vec![format!("unexpected kind {other:?}")],
        };
        let mut problems: Vec<String> = validator
            .iter_errors(manifest)
            .map(|e| format!("{}: {e}", e.instance_path()))
            .collect();
        if manifest["apiVersion"] != "policies.kubewarden.io/v1" {
            problems.push(format!("apiVersion {}", manifest["apiVersion"]));
        }
        if !manifest["metadata"]["name"].is_string() {
            problems.push("no metadata.name".into());
        }
        problems
    }
}

/// Whether one of the webhook `rules` sends a request for `resource`
/// (`plural` or `plural/sub`) of `group`/`version`, as the API server
/// matches them; `operation` `*` stands for any.
pub fn covers(rules: &Value, group: &str, version: &str, resource: &str, operation: &str) -> bool {
    let (plural, sub) = resource.split_once('/').unwrap_or((resource, ""));
    let names = |rule: &Value, key: &str, wanted: &str| {
        rule[key]
            .as_array()
            .into_iter()
            .flatten()
            .any(|v| v == "*" || v == wanted || wanted == "*")
    };
    rules.as_array().into_iter().flatten().any(|rule| {
        names(rule, "apiGroups", group)
            && names(rule, "apiVersions", version)
            && names(rule, "operations", operation)
            && rule["resources"].as_array().into_iter().flatten().any(|r| {
                let r = r.as_str().unwrap_or("");
                let (rule_plural, rule_sub) = r.split_once('/').unwrap_or((r, ""));
                match (rule_sub, sub) {
                    ("", "") => rule_plural == "*" || rule_plural == plural,
                    ("", _) | (_, "") => false,
                    (rule_sub, sub) => {
                        (rule_plural == "*" || rule_plural == plural)
                            && (rule_sub == "*" || rule_sub == sub)
                    }
                }
            })
    })
}
