//! The edge: ValidationRequest bytes in, Kubewarden responses out.

use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::SettingsValidationResponse;
use serde_json::Value;

use crate::cluster::{Cached, Cluster, NoCluster};
use crate::diagnostics::Diagnostics;
use crate::{engine, policy, settings, verdict};

/// HTTP status for a rejected request; the API server turns any code below
/// 400 into 400, which is what Kyverno's denials end up as.
pub const REJECT_CODE: u16 = 400;

/// Evaluates one ValidationRequest (`{"request": ..., "settings": ...}`).
/// Never fails: a payload or settings problem becomes a rejection that says
/// what is wrong, so a broken policy fails closed.
pub fn validate(payload: &[u8]) -> ValidationResponse {
    validate_with(payload, &NoCluster)
}

/// [`validate`], reading cluster data a rule needs through `cluster`.
pub fn validate_with(payload: &[u8], cluster: &dyn Cluster) -> ValidationResponse {
    let mut document: Value = match serde_json::from_slice(payload) {
        Ok(v) => v,
        Err(e) => {
            return reject(
                format!("cannot read the ValidationRequest: {e}"),
                Vec::new(),
            )
        }
    };
    let Some(raw_request) = document.get_mut("request").map(Value::take) else {
        return reject("the ValidationRequest has no `request`".into(), Vec::new());
    };
    let settings_doc = document.get("settings").unwrap_or(&Value::Null);
    let mut diags = Diagnostics::default();
    let spec = settings::parse(settings_doc, &mut diags);
    let spec = match spec {
        Some(spec) if diags.is_empty() => spec,
        _ => {
            return reject(
                format!("invalid policy settings: {}", diags.summary()),
                Vec::new(),
            )
        }
    };
    let raw_rules = settings::spec_of(settings_doc)
        .get("rules")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let outcomes = engine::evaluate(&spec, raw_rules, raw_request, &Cached::new(cluster));
    let verdict = verdict::decide(&outcomes, spec.policy_name.as_deref());
    if verdict.accepted {
        ValidationResponse {
            accepted: true,
            message: None,
            code: None,
            mutated_object: None,
            audit_annotations: None,
            warnings: (!verdict.warnings.is_empty()).then_some(verdict.warnings),
        }
    } else {
        reject(verdict.message.unwrap_or_default(), verdict.warnings)
    }
}

fn reject(message: String, warnings: Vec<String>) -> ValidationResponse {
    ValidationResponse {
        accepted: false,
        message: Some(message),
        code: Some(REJECT_CODE),
        mutated_object: None,
        audit_annotations: None,
        warnings: (!warnings.is_empty()).then_some(warnings),
    }
}

/// Checks settings: parses and compiles every rule, reporting every problem
/// with its path in one message.
pub fn validate_settings(payload: &[u8]) -> SettingsValidationResponse {
    let problems = match serde_json::from_slice::<Value>(payload) {
        Err(e) => format!("settings are not valid JSON: {e}"),
        Ok(document) => {
            let diags = policy::check(&document);
            if diags.is_empty() {
                return SettingsValidationResponse {
                    valid: true,
                    message: None,
                };
            }
            diags.summary()
        }
    };
    SettingsValidationResponse {
        valid: false,
        message: Some(problems),
    }
}
