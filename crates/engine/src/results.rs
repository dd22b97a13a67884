//! What a rule's evaluation says: pass, fail, skip or error, with Kyverno's
//! messages (`validation error: MSG. rule NAME failed at path /a/b/`).

use serde_json::Value;

use crate::conditions::{join_non_empty, CompiledConditions};
use crate::context::Context;
use crate::pattern::Outcome;
use crate::pss::PodSecurityCheck;
use crate::variables::{Document, Template, VarError};
use crate::verdict::RuleStatus;

/// A rule's name and `validate.message`, which every result quotes.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleText<'a> {
    pub name: &'a str,
    /// `validate.message` as written (deny messages substitute it joined
    /// with the conditions' messages).
    pub raw_message: Option<&'a str>,
    /// `validate.message` compiled, when it has variables.
    pub message: Option<Document>,
}

impl RuleText<'_> {
    /// The rule's `validate.message`, substituted.
    pub fn message(&self, ctx: Option<&Context>) -> Result<Option<String>, VarError> {
        match (&self.message, ctx) {
            (None, _) => Ok(self.raw_message.map(str::to_string)),
            (Some(Document::Plain(v)), _) => Ok(v.as_str().map(str::to_string)),
            (Some(doc), Some(ctx)) => Ok(Some(match doc.render(ctx)? {
                Value::String(s) => s,
                other => crate::jmespath::go::sprint(&other),
            })),
            (Some(_), None) => Ok(None),
        }
    }

    /// Kyverno's deny message: the rule's message and the messages of the
    /// conditions that held, substituted together.
    pub fn deny_message(&self, ctx: &Context, condition_messages: &str) -> String {
        let raw = self.raw_message.unwrap_or_default();
        if raw.is_empty() && condition_messages.is_empty() {
            return format!("validation error: rule {} failed", self.name);
        }
        let joined = join_non_empty(&[raw, condition_messages], "; ");
        match Template::compile(&joined, "", ctx.is_delete()).render(ctx) {
            Ok(Value::String(s)) => s,
            Ok(_) => {
                "the produced message didn't resolve to a string, check your policy definition."
                    .into()
            }
            Err(_) => condition_messages.to_string(),
        }
    }
}

/// Checks preconditions: `None` when they hold, otherwise the rule's
/// result (skip when false, error when they cannot be evaluated).
pub fn preconditions_result(
    preconditions: &CompiledConditions,
    ctx: &Context,
) -> Option<(RuleStatus, String)> {
    match preconditions.evaluate(ctx) {
        Ok((true, _)) => None,
        Ok((false, msg)) => Some((
            RuleStatus::Skip,
            join_non_empty(&["preconditions not met", &msg], "; "),
        )),
        Err(e) => Some((
            RuleStatus::Error,
            format!("failed to evaluate preconditions: {e}"),
        )),
    }
}

/// `validation error: MSG. rule NAME WHAT`, Kyverno's failure shape.
pub fn failure_message(rule: &str, message: Option<&str>, what: &str) -> String {
    match message.filter(|m| !m.is_empty()) {
        None => format!("validation error: rule {rule} {what}"),
        Some(message) => {
            let dot = if message.ends_with('.') { "" } else { "." };
            format!("validation error: {message}{dot} rule {rule} {what}")
        }
    }
}

/// One pattern's outcome → status and message. `message` (the rule's,
/// substituted) is asked for only when the outcome needs it.
pub fn pattern_result(
    rule: &str,
    message: impl FnOnce() -> Option<String>,
    outcome: Outcome,
) -> (RuleStatus, String) {
    match outcome {
        Outcome::Pass => (RuleStatus::Pass, pass_message(rule)),
        Outcome::Skip(message) => (RuleStatus::Skip, message),
        Outcome::Fail {
            path, explanation, ..
        } => {
            let mut what = format!("failed at path {path}");
            if let Some(explanation) = explanation {
                what.push_str(&format!(" ({explanation})"));
            }
            (
                RuleStatus::Fail,
                failure_message(rule, message().as_deref(), &what),
            )
        }
        Outcome::Error(error) => (
            RuleStatus::Error,
            failure_message(
                rule,
                message().as_deref(),
                &format!("execution error: {error}"),
            ),
        ),
    }
}

/// anyPattern: the first passing pattern passes; otherwise every failure.
/// `outcomes` are the patterns' outcomes in order, evaluated as they are
/// asked for (none after the first pass); `message` only when none passes.
pub fn any_pattern_result(
    rule: &str,
    message: impl FnOnce() -> Option<String>,
    outcomes: impl IntoIterator<Item = Outcome>,
) -> (RuleStatus, String) {
    let mut failures = Vec::new();
    let mut skips = Vec::new();
    for (i, outcome) in outcomes.into_iter().enumerate() {
        match outcome {
            Outcome::Pass => {
                return (
                    RuleStatus::Pass,
                    format!("validation rule '{rule}' anyPattern[{i}] passed."),
                )
            }
            Outcome::Skip(message) => skips.push(format!("rule {rule}[{i}] skipped: {message}")),
            Outcome::Fail { path, .. } => {
                failures.push(format!("rule {rule}[{i}] failed at path {path}"))
            }
            Outcome::Error(error) => failures.push(format!("rule {rule}[{i}] failed: {error}")),
        }
    }
    if failures.is_empty() {
        return (RuleStatus::Skip, skips.join(" "));
    }
    let errors = failures.join(" ");
    let text = match message().filter(|m| !m.is_empty()) {
        None => format!("validation error: {errors}"),
        Some(m) if m.ends_with('.') => format!("validation error: {m} {errors}"),
        Some(m) => format!("validation error: {m}. {errors}"),
    };
    (RuleStatus::Fail, text)
}

/// Runs a `podSecurity` check against a Pod or pod controller.
pub fn pod_security_result(
    rule: &str,
    check: &PodSecurityCheck,
    resource: &Value,
) -> (RuleStatus, String) {
    match check.evaluate(resource) {
        Ok(None) => (RuleStatus::Pass, pass_message(rule)),
        Ok(Some(violations)) => (RuleStatus::Fail, check.failure_message(rule, &violations)),
        Err(e) => (RuleStatus::Error, e),
    }
}

/// A deny rule: conditions that hold fail it. No conditions at all hold,
/// as in Kyverno (an empty legacy list). A pass has no message: a foreach
/// element's is never read, and a rule's is [`pass_message`].
pub fn deny_result(
    rule: &RuleText,
    conditions: Option<&CompiledConditions>,
    ctx: &Context,
) -> (RuleStatus, String) {
    let outcome = match conditions {
        None => Ok((true, String::new())),
        Some(c) => c.evaluate(ctx),
    };
    match outcome {
        Err(e) => (
            RuleStatus::Error,
            format!("failed to check deny conditions: {e}"),
        ),
        Ok((true, messages)) => (RuleStatus::Fail, rule.deny_message(ctx, &messages)),
        Ok((false, _)) => (RuleStatus::Pass, String::new()),
    }
}

/// Kyverno's message for a rule that passed. Every passing rule writes
/// one, so it is joined by hand: `format!` costs several times as much in
/// wasm.
pub fn pass_message(rule: &str) -> String {
    const BEFORE: &str = "validation rule '";
    const AFTER: &str = "' passed.";
    let mut message = String::with_capacity(BEFORE.len() + rule.len() + AFTER.len());
    message.push_str(BEFORE);
    message.push_str(rule);
    message.push_str(AFTER);
    message
}
