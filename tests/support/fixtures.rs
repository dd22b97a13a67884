//! The fixture table in `test_data/cases.yaml`: settings + request +
//! expected verdict and message, run natively and through the wasm host.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    pub name: String,
    pub settings: String,
    pub request: String,
    pub accepted: bool,
    /// The exact rejection message, when the request is rejected.
    #[serde(default)]
    pub message: Option<String>,
    /// The exact warnings (Audit-mode violations).
    #[serde(default)]
    pub warnings: Vec<String>,
    /// The exact audit annotations (CEL rules' `auditAnnotations`).
    #[serde(default)]
    pub audit_annotations: std::collections::BTreeMap<String, String>,
    /// A kwctl session (`test_data/sessions/`) answering the cluster and
    /// registry lookups the case makes, in order.
    #[serde(default)]
    pub session: Option<String>,
}

pub fn test_data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("test_data")
}

pub fn cases() -> Vec<Case> {
    let text =
        std::fs::read_to_string(test_data().join("cases.yaml")).expect("test_data/cases.yaml");
    serde_yaml::from_str(&text).expect("cases.yaml parses")
}

pub fn document(relative: &str) -> Value {
    let path = test_data().join(relative);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Checks a ValidationResponse against the case.
pub fn assert_response(case: &Case, response: &Value) {
    let name = &case.name;
    assert_eq!(
        response["accepted"].as_bool(),
        Some(case.accepted),
        "{name}: {response}"
    );
    if !case.accepted {
        assert_eq!(response["code"].as_u64(), Some(400), "{name}: {response}");
    }
    if let Some(message) = &case.message {
        assert_eq!(
            response["message"].as_str(),
            Some(message.as_str()),
            "{name}"
        );
    }
    let warnings: Vec<String> = response["warnings"]
        .as_array()
        .map(|w| {
            w.iter()
                .filter_map(|s| s.as_str().map(String::from))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(warnings, case.warnings, "{name}: warnings");
    let annotations: std::collections::BTreeMap<String, String> = response["audit_annotations"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        annotations, case.audit_annotations,
        "{name}: audit annotations"
    );
}
