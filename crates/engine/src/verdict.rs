//! Rule outcomes → the policy's verdict: which failures reject the request
//! and which only warn.

use crate::settings::FailureAction;

/// How one rule ended for this request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RuleStatus {
    Pass,
    Fail,
    Skip,
    Error,
}

#[derive(Debug, Clone, PartialEq)]
pub struct RuleOutcome {
    /// The rule's name as Kyverno reports it (`autogen-NAME` for pod controllers).
    pub rule: String,
    pub status: RuleStatus,
    /// Kyverno-shaped text: `validation error: MSG. rule NAME failed at path /a/b/`.
    pub message: String,
    /// The failure action in force for this rule and namespace.
    pub action: FailureAction,
    /// The HTTP status the rule asks a rejection to carry (a CEL
    /// expression's `reason`); `None` for the default.
    pub code: Option<u16>,
}

/// The policy's decision for one request.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verdict {
    pub accepted: bool,
    pub message: Option<String>,
    pub warnings: Vec<String>,
    /// The status of the first blocking rule that asks for one.
    pub code: Option<u16>,
}

/// Failed and errored rules reject in Enforce (errors fail closed) and warn
/// in Audit; passing and skipped rules say nothing. Every failing rule is
/// listed, not only the first; with the policy's name, the message starts
/// with it, as Kyverno names the policy before its rules, and a warning
/// reads as Kyverno's (`policy P.R: message`).
pub fn decide(outcomes: &[RuleOutcome], policy: Option<&str>) -> Verdict {
    let mut blocking = Vec::new();
    let mut warnings = Vec::new();
    let mut code = None;
    for outcome in outcomes {
        if !matches!(outcome.status, RuleStatus::Fail | RuleStatus::Error) {
            continue;
        }
        let line = format!("{}: {}", outcome.rule, outcome.message);
        match outcome.action {
            FailureAction::Enforce => {
                code = code.or(outcome.code);
                blocking.push(line)
            }
            // Kyverno's admission warning (`policy P.R: message`) when the
            // policy's name is known.
            FailureAction::Audit => warnings.push(match policy {
                Some(policy) => format!("policy {policy}.{line}"),
                None => line,
            }),
        }
    }
    Verdict {
        accepted: blocking.is_empty(),
        message: (!blocking.is_empty()).then(|| {
            let rules = blocking.join("; ");
            match policy {
                Some(policy) => format!("{policy}: {rules}"),
                None => rules,
            }
        }),
        warnings,
        code,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(rule: &str, status: RuleStatus, action: FailureAction) -> RuleOutcome {
        RuleOutcome {
            rule: rule.into(),
            status,
            message: format!("{rule} says no"),
            action,
            code: None,
        }
    }

    /// name, outcomes, accepted, message, warnings
    type Case = (
        &'static str,
        Vec<RuleOutcome>,
        bool,
        Option<&'static str>,
        Vec<&'static str>,
    );

    #[test]
    fn verdict_cases() {
        use FailureAction::{Audit, Enforce};
        use RuleStatus::{Error, Fail, Pass, Skip};
        let cases: Vec<Case> = vec![
            ("no_rules_accepts", vec![], true, None, vec![]),
            (
                "pass_and_skip_accept_silently",
                vec![outcome("a", Pass, Enforce), outcome("b", Skip, Enforce)],
                true,
                None,
                vec![],
            ),
            (
                "enforce_failure_rejects",
                vec![outcome("a", Fail, Enforce)],
                false,
                Some("a: a says no"),
                vec![],
            ),
            (
                "every_failing_rule_is_listed",
                vec![
                    outcome("a", Fail, Enforce),
                    outcome("b", Pass, Enforce),
                    outcome("c", Fail, Enforce),
                ],
                false,
                Some("a: a says no; c: c says no"),
                vec![],
            ),
            (
                "errors_fail_closed_in_enforce",
                vec![outcome("a", Error, Enforce)],
                false,
                Some("a: a says no"),
                vec![],
            ),
            (
                "audit_failure_only_warns",
                vec![outcome("a", Fail, Audit)],
                true,
                None,
                vec!["a: a says no"],
            ),
            (
                "mixed_actions",
                vec![outcome("a", Fail, Audit), outcome("b", Fail, Enforce)],
                false,
                Some("b: b says no"),
                vec!["a: a says no"],
            ),
        ];
        for (name, outcomes, accepted, message, warnings) in cases {
            let verdict = decide(&outcomes, None);
            assert_eq!(verdict.accepted, accepted, "{name}");
            assert_eq!(verdict.message.as_deref(), message, "{name}");
            assert_eq!(verdict.warnings, warnings, "{name}");
        }
    }

    #[test]
    fn the_policy_name_leads_the_message() {
        let outcomes = vec![RuleOutcome {
            rule: "check-labels".into(),
            status: RuleStatus::Fail,
            message: "validation error: label `team` is required".into(),
            action: FailureAction::Enforce,
            code: None,
        }];
        assert_eq!(
            decide(&outcomes, Some("require-labels")).message.as_deref(),
            Some("require-labels: check-labels: validation error: label `team` is required")
        );
    }

    #[test]
    fn with_the_policy_name_a_warning_reads_as_kyvernos() {
        let outcomes = vec![outcome("a", RuleStatus::Fail, FailureAction::Audit)];
        assert_eq!(
            decide(&outcomes, Some("require-labels")).warnings,
            vec!["policy require-labels.a: a says no"]
        );
        assert_eq!(decide(&outcomes, None).warnings, vec!["a: a says no"]);
    }

    #[test]
    fn the_first_blocking_rule_with_a_reason_sets_the_code() {
        let with_code = |rule: &str, action, code| RuleOutcome {
            code,
            ..outcome(rule, RuleStatus::Fail, action)
        };
        let outcomes = vec![
            with_code("audited", FailureAction::Audit, Some(401)),
            with_code("plain", FailureAction::Enforce, None),
            with_code("forbidden", FailureAction::Enforce, Some(403)),
            with_code("invalid", FailureAction::Enforce, Some(422)),
        ];
        assert_eq!(decide(&outcomes, None).code, Some(403));
        assert_eq!(decide(&outcomes[..2], None).code, None);
    }
}
