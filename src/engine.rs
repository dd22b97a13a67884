//! Evaluates a parsed policy against one admission request: selects the
//! rules (with autogen copies for pod controllers), compiles each selected
//! rule's body, runs it, and reports one outcome per rule that applied.

use serde_json::Value;

use crate::autogen;
use crate::diagnostics::Diagnostics;
use crate::matching::{rule_applies, Target};
use crate::pattern::{Outcome, Pattern};
use crate::policy::{self, CompiledBody};
use crate::request::AdmissionRequest;
use crate::settings::{self, ApplyRules, FailureAction, FailureActionOverride, PolicySpec, Rule};
use crate::verdict::{RuleOutcome, RuleStatus};
use crate::wildcard;

/// Evaluates every rule that applies to the request, in Kyverno's order:
/// the policy's rules, then the rules autogen derives for the request's
/// pod-controller kind. `raw_rules` is the settings' `rules` JSON, from
/// which autogen derives its rules.
pub fn evaluate(
    spec: &PolicySpec,
    raw_rules: &[Value],
    request: &AdmissionRequest<'_>,
) -> Vec<RuleOutcome> {
    let target = Target::new(request);
    let generated: Vec<Rule> = autogen::generate(
        raw_rules,
        spec.autogen_controllers.as_deref(),
        &target.gvk.kind,
    )
    .into_iter()
    .filter_map(|g| {
        let source = spec.rules.get(g.source)?;
        let mut ignored = Diagnostics::default();
        settings::parse_rule(&g.rule, &source.path, &mut ignored)
    })
    .collect();
    let mut outcomes = Vec::new();
    for rule in spec.rules.iter().chain(&generated) {
        if !rule_applies(&rule.match_resources, rule.exclude.as_ref(), &target) {
            continue;
        }
        let Some((status, message)) = run_rule(rule, request) else {
            continue;
        };
        outcomes.push(RuleOutcome {
            rule: rule.name.clone(),
            status,
            message,
            action: failure_action(spec, rule, target.namespace),
        });
        if spec.apply_rules == ApplyRules::One
            && matches!(status, RuleStatus::Pass | RuleStatus::Fail)
        {
            break;
        }
    }
    outcomes
}

/// Compiles and runs one selected rule; `None` when Kyverno produces no
/// result for it (pattern rules on DELETE requests).
fn run_rule(rule: &Rule, request: &AdmissionRequest<'_>) -> Option<(RuleStatus, String)> {
    let mut diags = Diagnostics::default();
    policy::check_selection(rule, &mut diags);
    let body = policy::compile_body(rule, &mut diags);
    let body = match body {
        Some(body) if diags.is_empty() => body,
        _ => {
            return Some((
                RuleStatus::Error,
                format!(
                    "rule {} cannot be evaluated: {}",
                    rule.name,
                    diags.summary()
                ),
            ))
        }
    };
    if request.operation() == "DELETE" {
        // Kyverno validates patterns only against a new object.
        return None;
    }
    let new = run_body(rule, &body, request.object());
    let old_object = request.old_object();
    if request.operation() == "UPDATE" && !old_object.is_null() && new.0 != RuleStatus::Pass {
        // An existing violation that the update leaves as it was does not
        // block the update (Kyverno's allowExistingViolations default).
        let old = run_body(rule, &body, old_object);
        if old == new {
            return Some((
                RuleStatus::Skip,
                "skipping modified resource as validation results have not changed".into(),
            ));
        }
    }
    Some(new)
}

fn run_body(rule: &Rule, body: &CompiledBody, resource: &Value) -> (RuleStatus, String) {
    match body {
        CompiledBody::Pattern(pattern) => pattern_result(rule, pattern, resource),
        CompiledBody::AnyPattern(patterns) => any_pattern_result(rule, patterns, resource),
    }
}

fn pattern_result(rule: &Rule, pattern: &Pattern, resource: &Value) -> (RuleStatus, String) {
    match pattern.evaluate(resource) {
        Outcome::Pass => (
            RuleStatus::Pass,
            format!("validation rule '{}' passed.", rule.name),
        ),
        Outcome::Skip(message) => (RuleStatus::Skip, message),
        Outcome::Fail {
            path, explanation, ..
        } => {
            let mut what = format!("failed at path {path}");
            if let Some(explanation) = explanation {
                what.push_str(&format!(" ({explanation})"));
            }
            (RuleStatus::Fail, failure_message(rule, &what))
        }
        Outcome::Error(error) => (
            RuleStatus::Error,
            failure_message(rule, &format!("execution error: {error}")),
        ),
    }
}

/// `validation error: MESSAGE. rule NAME failed at path /a/b/`, Kyverno's shape.
fn failure_message(rule: &Rule, what: &str) -> String {
    match rule.validate.message.as_deref().filter(|m| !m.is_empty()) {
        None => format!("validation error: rule {} {what}", rule.name),
        Some(message) => {
            let dot = if message.ends_with('.') { "" } else { "." };
            format!("validation error: {message}{dot} rule {} {what}", rule.name)
        }
    }
}

fn any_pattern_result(rule: &Rule, patterns: &[Pattern], resource: &Value) -> (RuleStatus, String) {
    let mut failures = Vec::new();
    let mut skips = Vec::new();
    for (i, pattern) in patterns.iter().enumerate() {
        match pattern.evaluate(resource) {
            Outcome::Pass => {
                return (
                    RuleStatus::Pass,
                    format!("validation rule '{}' anyPattern[{i}] passed.", rule.name),
                )
            }
            Outcome::Skip(message) => {
                skips.push(format!("rule {}[{i}] skipped: {message}", rule.name))
            }
            Outcome::Fail { path, .. } => {
                failures.push(format!("rule {}[{i}] failed at path {path}", rule.name))
            }
            Outcome::Error(error) => {
                failures.push(format!("rule {}[{i}] failed: {error}", rule.name))
            }
        }
    }
    if failures.is_empty() {
        return (RuleStatus::Skip, skips.join(" "));
    }
    let errors = failures.join(" ");
    let message = match rule.validate.message.as_deref().filter(|m| !m.is_empty()) {
        None => format!("validation error: {errors}"),
        Some(m) if m.ends_with('.') => format!("validation error: {m} {errors}"),
        Some(m) => format!("validation error: {m}. {errors}"),
    };
    (RuleStatus::Fail, message)
}

/// Kyverno's precedence: the rule's overrides, the rule's `failureAction`,
/// the policy's overrides, then `validationFailureAction`.
fn failure_action(spec: &PolicySpec, rule: &Rule, namespace: &str) -> FailureAction {
    let applies = |o: &&FailureActionOverride| {
        o.namespaces.is_empty()
            || o.namespaces
                .iter()
                .any(|ns| wildcard::matches(ns, namespace))
    };
    rule.validate
        .failure_action_overrides
        .iter()
        .find(applies)
        .map(|o| o.action)
        .or(rule.validate.failure_action)
        .or_else(|| {
            spec.failure_action_overrides
                .iter()
                .find(applies)
                .map(|o| o.action)
        })
        .unwrap_or(spec.failure_action)
}
