//! `webhookConfiguration.matchConditions`: CEL conditions the API server
//! checks before it calls a Kyverno policy's webhook, decided as
//! Kubernetes' webhook matcher decides them. A false condition skips the
//! webhook, so no rule runs; one that cannot be evaluated (and none false)
//! fails the request under `failurePolicy: Fail` and skips the webhook
//! under `Ignore`.
//!
//! The conditions read `object`, `oldObject` and `request`, the admission
//! request as the API server describes it to CEL (no `uid`, no objects).

use kube_cel::{Activation, Program};
use serde_json::{Map, Value};

use crate::diagnostics::Diagnostics;
use crate::request::AdmissionRequest;
use crate::settings::NamedExpression;

/// Where the conditions are in the settings.
pub const MATCH_CONDITIONS: &str = "webhookConfiguration.matchConditions";

/// The fields of Kubernetes' `CreateAdmissionRequest`.
const REQUEST_FIELDS: &[&str] = &[
    "kind",
    "resource",
    "subResource",
    "requestKind",
    "requestResource",
    "requestSubResource",
    "name",
    "namespace",
    "operation",
    "userInfo",
    "dryRun",
    "options",
];

/// Compiled match conditions, with their expressions' text.
pub struct MatchConditions<'a> {
    conditions: Vec<(&'a str, Program)>,
}

/// What the conditions decide for a request.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// Every condition holds: the policy runs.
    Call,
    /// A condition is false, or one failed under `failurePolicy: Ignore`.
    Skip,
    /// A condition failed under `failurePolicy: Fail`: the API server's
    /// Forbidden (403) message.
    Refuse(String),
}

impl<'a> MatchConditions<'a> {
    /// Compiles `conditions`, found at `path`; `None` when one does not
    /// compile (the problems are in `diags`).
    pub fn compile(
        conditions: &'a [NamedExpression],
        path: &str,
        diags: &mut Diagnostics,
    ) -> Option<Self> {
        let conditions = crate::cel::compile_named(conditions, path, diags)?
            .into_iter()
            .map(|(c, program)| (c.expression.as_str(), program))
            .collect();
        Some(Self { conditions })
    }

    /// Decides `request` (the raw AdmissionRequest); `errors_block` is the
    /// policy's failure policy.
    pub fn decide(&self, request: &Value, errors_block: bool) -> Decision {
        let view = AdmissionRequest::new(request);
        let described: Map<String, Value> = REQUEST_FIELDS
            .iter()
            .filter_map(|&k| Some((k.to_string(), request.get(k)?.clone())))
            .collect();
        let described = Value::Object(described);
        let mut activation = Activation::new();
        activation.bind_json("object", view.object());
        activation.bind_json("oldObject", view.old_object());
        activation.bind_json("request", &described);
        let conditions = self
            .conditions
            .iter()
            .map(|(text, program)| (*text, program));
        match crate::cel::conditions_hold(conditions, &activation) {
            Ok(true) => Decision::Call,
            Ok(false) => Decision::Skip,
            Err(_) if !errors_block => Decision::Skip,
            Err(errors) => Decision::Refuse(forbidden(request, &errors)),
        }
    }
}

/// `apierrors.NewForbidden` for the request's resource and name.
fn forbidden(request: &Value, error: &str) -> String {
    fn text(v: Option<&Value>) -> &str {
        v.and_then(Value::as_str).unwrap_or_default()
    }
    let resource = request.get("resource");
    let plural = text(resource.and_then(|r| r.get("resource")));
    let group = text(resource.and_then(|r| r.get("group")));
    let name = text(request.get("name"));
    let qualified = match (plural, group) {
        ("", "") => String::new(),
        (plural, "") => plural.to_string(),
        (plural, group) => format!("{plural}.{group}"),
    };
    match (qualified.as_str(), name) {
        ("", _) => format!("forbidden: {error}"),
        (qualified, "") => format!("{qualified} is forbidden: {error}"),
        (qualified, name) => format!("{qualified} \"{name}\" is forbidden: {error}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn decide(conditions: &[(&str, &str)], request: Value, errors_block: bool) -> Decision {
        let list: Vec<NamedExpression> = conditions
            .iter()
            .map(|(name, expression)| NamedExpression {
                name: name.to_string(),
                expression: expression.to_string(),
            })
            .collect();
        let mut diags = Diagnostics::default();
        let compiled = MatchConditions::compile(&list, "matchConditions", &mut diags)
            .unwrap_or_else(|| panic!("{}", diags.summary()));
        compiled.decide(&request, errors_block)
    }

    #[test]
    fn conditions_decide_as_kubernetes_webhook_matcher() {
        let request = json!({"uid": "1", "operation": "CREATE", "name": "p", "namespace": "team-a",
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "userInfo": {"username": "alice", "groups": ["system:authenticated"]},
            "object": {"metadata": {"name": "p", "namespace": "team-a"}}});
        let deployment = json!({"operation": "DELETE", "name": "d", "namespace": "team-a",
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "oldObject": {"metadata": {"name": "d"}}});
        let cases = [
            ("all_true_calls", vec![("ns", "object.metadata.namespace == 'team-a'")], request.clone(), true, Decision::Call),
            ("a_false_one_skips", vec![("ns", "object.metadata.namespace == 'team-a'"),
                ("users", "!('system:authenticated' in request.userInfo.groups)")], request.clone(), true, Decision::Skip),
            ("false_wins_over_an_earlier_error", vec![("bad", "object.spec.x == 1"), ("no", "false")], request.clone(), true, Decision::Skip),
            ("request_has_no_uid", vec![("uid", "has(request.uid)")], request.clone(), true, Decision::Skip),
            ("request_has_the_user", vec![("user", "request.userInfo.username == 'alice'")], request.clone(), true, Decision::Call),
            ("a_non_bool_is_not_false", vec![("name", "object.metadata.name")], request.clone(), true, Decision::Call),
            ("an_error_refuses_under_fail", vec![("bad", "object.spec.x == 1")], request.clone(), true,
                Decision::Refuse("pods \"p\" is forbidden: expression 'object.spec.x == 1' resulted in error: no such key: spec".into())),
            ("an_error_skips_under_ignore", vec![("bad", "object.spec.x == 1")], request.clone(), false, Decision::Skip),
            ("errors_are_listed_and_the_group_qualifies_the_resource",
                vec![("a", "object.metadata.name == 'd'"), ("b", "object.spec == 1")], deployment, true,
                Decision::Refuse("deployments.apps \"d\" is forbidden: [expression 'object.metadata.name == 'd'' resulted in error: no such key: metadata, expression 'object.spec == 1' resulted in error: no such key: spec]".into())),
        ];
        for (name, conditions, request, errors_block, want) in cases {
            assert_eq!(decide(&conditions, request, errors_block), want, "{name}");
        }
    }
}
