//! The edge: ValidationRequest bytes in, Kubewarden responses out.

use kubewarden_policy_sdk::response::ValidationResponse;
use kubewarden_policy_sdk::settings::SettingsValidationResponse;

use kyverno_engine::cluster::{Cluster, NoCluster};
use kyverno_engine::json::{Json, Payload};
use kyverno_engine::{engine, policy, verdict};

/// HTTP status for a rejected request; the API server turns any code below
/// 400 into 400, which is what Kyverno's denials end up as.
pub const REJECT_CODE: u16 = 400;
/// The API server's status when a webhook match condition cannot be
/// evaluated under `failurePolicy: Fail`.
pub const FORBIDDEN: u16 = 403;

/// Evaluates one ValidationRequest (`{"request": ..., "settings": ...}`).
/// Never fails: a payload or settings problem becomes a rejection that says
/// what is wrong, so a broken policy fails closed.
pub fn validate(payload: &[u8]) -> ValidationResponse {
    validate_with(payload, &NoCluster)
}

/// [`validate`], reading cluster data a rule needs through `cluster`.
pub fn validate_with(payload: &[u8], cluster: &dyn Cluster) -> ValidationResponse {
    // Checked as UTF-8 once, then read as `str`: no string is checked
    // again. Bytes that are not UTF-8 go serde_json's byte way, for its
    // message.
    let parsed = match std::str::from_utf8(payload) {
        Ok(text) => Payload::read(text),
        Err(_) => Payload::read_bytes(payload),
    };
    let document = match parsed {
        Ok(v) => v,
        Err(e) => {
            return reject(
                format!("cannot read the ValidationRequest: {e}"),
                Vec::new(),
            )
        }
    };
    let Some(raw_request) = document.request else {
        return reject("the ValidationRequest has no `request`".into(), Vec::new());
    };
    let settings_doc = &document.settings.json;
    // Only settings that name the variables can have rules that read them:
    // noted as their strings were read, which spares every other request a
    // walk of every rule.
    let options = engine::Options {
        mentions_roles: document.settings.mentions_roles,
        teardown: teardown(),
        // The response says only what fails.
        statuses: engine::Statuses::Verdict,
        webhook: true,
    };
    let evaluation = match engine::evaluate_settings(settings_doc, raw_request, cluster, options) {
        Ok(evaluation) => evaluation,
        Err(diags) => {
            return reject(
                format!("invalid policy settings: {}", diags.summary()),
                Vec::new(),
            )
        }
    };
    if let Some(message) = evaluation.refusal {
        let mut response = reject(message, Vec::new());
        response.code = Some(FORBIDDEN);
        return response;
    }
    let verdict = verdict::decide(&evaluation.outcomes, evaluation.policy_name.as_deref());
    // CEL rules' `auditAnnotations`: the API server records them on the
    // request's audit event, under the webhook's name.
    let audit_annotations = (!evaluation.audit_annotations.is_empty())
        .then(|| evaluation.audit_annotations.into_iter().collect());
    options.teardown.release(document.settings.json);
    if verdict.accepted {
        ValidationResponse {
            accepted: true,
            message: None,
            code: None,
            mutated_object: None,
            audit_annotations,
            warnings: (!verdict.warnings.is_empty()).then_some(verdict.warnings),
        }
    } else {
        let mut response = reject(verdict.message.unwrap_or_default(), verdict.warnings);
        response.code = Some(verdict.code.unwrap_or(REJECT_CODE));
        response.audit_annotations = audit_annotations;
        response
    }
}

/// Guest memory below which a request's working data is left allocated
/// when it is done (see [`engine::Teardown`]). policy-server gives every
/// request a fresh instance, whose memory starts near 1.2 MiB; a host that
/// reuses the instance sees it grow to this size and then freed as usual,
/// so memory stays bounded either way.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
const LEAVE_BELOW_BYTES: usize = 16 << 20;

fn teardown() -> engine::Teardown {
    #[cfg(target_arch = "wasm32")]
    if core::arch::wasm32::memory_size(0).saturating_mul(65536) < LEAVE_BELOW_BYTES {
        return engine::Teardown::Leave;
    }
    // Natively (tests, the CLI) the process lives on.
    engine::Teardown::Free
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
    let problems = match Json::parse(payload) {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn payloads_that_do_not_read_are_rejected_with_serde_json_s_reason() {
        let cases: [(&str, &[u8], &str); 3] = [
            (
                "bytes_that_are_not_utf8_in_a_string",
                b"{\"request\": {\"uid\": \"\xff\"}}",
                "cannot read the ValidationRequest: invalid unicode code point at line 1 column 22",
            ),
            (
                "not_json",
                b"{\"request\": ",
                "cannot read the ValidationRequest: EOF while parsing a value at line 1 column 12",
            ),
            (
                "valid_utf8_that_is_not_json",
                "{\"request\": é}".as_bytes(),
                "cannot read the ValidationRequest: expected value at line 1 column 13",
            ),
        ];
        for (name, payload, want) in cases {
            let response = validate(payload);
            assert!(!response.accepted, "{name}");
            assert_eq!(response.message.as_deref(), Some(want), "{name}");
        }
    }

    #[test]
    fn invalid_settings_reject_requests_naming_the_paths() {
        let payload = json!({"settings": {"rules": [{"name": "r",
            "match": {"any": [{"resources": {"kinds": ["Pod", 3]}}]},
            "validate": {"pattern": {"spec": {"X()": "x"}}}}]},
            "request": {"uid": "1", "operation": "CREATE"}})
        .to_string();
        let response = validate(payload.as_bytes());
        assert!(!response.accepted);
        assert_eq!(
            response.message.as_deref(),
            Some("invalid policy settings: rules[0].match.any[0].resources.kinds[1]: must be a string, not a number")
        );
    }

    #[test]
    fn rejections_carry_the_status_a_cel_reason_asks_for() {
        let settings = |reason: Option<&str>| {
            let mut expression =
                json!({"expression": "object.metadata.name != 'bad'", "message": "bad name"});
            if let Some(reason) = reason {
                expression["reason"] = json!(reason);
            }
            json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
                "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                "validate": {"cel": {"expressions": [expression]}}}]})
        };
        let request = json!({"uid": "1", "operation": "CREATE", "namespace": "default",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"}}});
        let cases = [
            ("no_reason_is_kyvernos_400", None, 400),
            ("forbidden", Some("Forbidden"), 403),
            ("invalid", Some("Invalid"), 422),
            ("unauthorized", Some("Unauthorized"), 401),
            ("too_large", Some("RequestEntityTooLarge"), 413),
        ];
        for (name, reason, code) in cases {
            let payload = json!({"settings": settings(reason), "request": request}).to_string();
            let response = validate(payload.as_bytes());
            assert!(!response.accepted, "{name}");
            assert_eq!(response.code, Some(code), "{name}");
            assert_eq!(response.message.as_deref(), Some("r: bad name"), "{name}");
        }
    }

    #[test]
    fn webhook_match_conditions_decide_before_any_rule() {
        let settings = |condition: &str, failure_policy: &str| {
            json!({"validationFailureAction": "Enforce", "failurePolicy": failure_policy,
                "webhookConfiguration": {"matchConditions": [{"name": "c", "expression": condition}]},
                "rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                    "validate": {"message": "bad name", "pattern": {"metadata": {"name": "good"}}}}]})
        };
        let request = json!({"uid": "1", "operation": "CREATE", "namespace": "default", "name": "bad",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad"}}});
        let rule_fails = "r: validation error: bad name. rule r failed at path /metadata/name/ (pattern.metadata.name: expected `good` but found `bad`)";
        // (case, condition, failurePolicy, accepted, code, message)
        let cases = [
            ("true_runs_the_rules", "object.metadata.name == 'bad'", "Fail", false, Some(400), Some(rule_fails.to_string())),
            ("false_skips_the_policy", "object.metadata.name != 'bad'", "Fail", true, None, None),
            ("error_is_forbidden_under_fail", "object.spec.x", "Fail", false, Some(403),
                Some("pods \"bad\" is forbidden: expression 'object.spec.x' resulted in error: no such key: spec".to_string())),
            ("error_skips_under_ignore", "object.spec.x", "Ignore", true, None, None),
        ];
        for (name, condition, failure_policy, accepted, code, message) in cases {
            let payload =
                json!({"settings": settings(condition, failure_policy), "request": request})
                    .to_string();
            let response = validate(payload.as_bytes());
            assert_eq!(response.accepted, accepted, "{name}");
            assert_eq!(response.code, code, "{name}");
            assert_eq!(response.message, message, "{name}");
        }
    }
}
