//! A selected rule, compiled: its context entries, preconditions, message
//! and body with every expression parsed, ready to evaluate against the
//! request's context. Patterns without variables are compiled here too;
//! patterns with variables are compiled after substitution.

use std::sync::Arc;

use serde_json::Value;

use crate::cel::{self, CompiledCel};
use crate::conditions::{join_non_empty, CompiledConditions};
use crate::context::Context;
use crate::diagnostics::{index_path, key_path, Diagnostics};
use crate::foreach::CompiledForeach;
use crate::jmespath::Query;
use crate::pattern::{Outcome, Pattern};
use crate::pss::PodSecurityCheck;
use crate::references;
use crate::settings::{ContextEntry, ContextSource, Deny, ValidationBody};
use crate::variables::{Document, Template, VarError};
use crate::verdict::RuleStatus;

/// Context entry names Kyverno reserves for its own variables.
const RESERVED_NAMES: &[&str] = &[
    "images",
    "request",
    "serviceAccountName",
    "serviceAccountNamespace",
    "element",
    "elementIndex",
];

/// A pattern, compiled now or, when it has variables, after substitution.
#[derive(Debug, Clone, PartialEq)]
pub enum PatternBody {
    Static(Pattern),
    Dynamic {
        document: Document,
        path: String,
    },
    /// A `$( )` reference that does not resolve: as in Kyverno, the rule
    /// errors when it runs.
    Unresolved(String),
}

impl PatternBody {
    pub fn compile(value: &Value, path: &str, delete: bool, diags: &mut Diagnostics) -> Self {
        let resolved;
        let value = if references::has_references(value) {
            match references::resolve(value) {
                Ok(v) => {
                    resolved = v;
                    &resolved
                }
                Err(e) => return PatternBody::Unresolved(e),
            }
        } else {
            value
        };
        let document = Document::compile(value, "", delete);
        if document.is_plain() {
            return PatternBody::Static(Pattern::compile(value, path, diags));
        }
        report_problems(&document, path, diags);
        // Check the pattern's shape with every variable standing for `*`.
        Pattern::compile(&placeholders(value), path, diags);
        PatternBody::Dynamic {
            document,
            path: path.to_string(),
        }
    }

    /// The pattern for this evaluation; an error when substitution fails or
    /// the substituted pattern is malformed.
    pub fn resolve(&self, ctx: &Context) -> Result<std::borrow::Cow<'_, Pattern>, String> {
        match self {
            PatternBody::Static(p) => Ok(std::borrow::Cow::Borrowed(p)),
            PatternBody::Unresolved(e) => Err(e.clone()),
            PatternBody::Dynamic { document, path } => {
                let value = document
                    .render(ctx)
                    .map_err(|e| format!("variable substitution failed: {e}"))?;
                let mut diags = Diagnostics::default();
                let pattern = Pattern::compile(&value, path, &mut diags);
                if diags.is_empty() {
                    Ok(std::borrow::Cow::Owned(pattern))
                } else {
                    Err(format!(
                        "the pattern is invalid after variable substitution: {}",
                        diags.summary()
                    ))
                }
            }
        }
    }
}

/// `value` with each string holding a variable replaced by `*` and each
/// such key by a plain name, for checking a pattern's shape.
fn placeholders(value: &Value) -> Value {
    match value {
        Value::String(s) if s.contains("{{") => Value::String("*".into()),
        Value::Array(items) => Value::Array(items.iter().map(placeholders).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let key = if k.contains("{{") {
                        "variable".to_string()
                    } else {
                        k.clone()
                    };
                    (key, placeholders(v))
                })
                .collect(),
        ),
        other => other.clone(),
    }
}

/// Reports expressions in `document` that do not compile.
pub fn report_problems(document: &Document, path: &str, diags: &mut Diagnostics) {
    for problem in document.problems() {
        let mut at = path.to_string();
        for segment in problem.pointer.split('/').filter(|s| !s.is_empty()) {
            at = key_path(&at, &segment.replace("\\/", "/"));
        }
        diags.push(
            &at,
            format!("variable `{{{{{}}}}}`: {}", problem.variable, problem.error),
        );
    }
}

/// A `context` entry, compiled. Only `variable` entries get this far.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledEntry {
    pub name: String,
    value: Option<Document>,
    jmes_path: Option<JmesPath>,
    default: Option<Document>,
}

#[derive(Debug, Clone, PartialEq)]
enum JmesPath {
    Compiled(Query),
    /// Has `{{ }}`: substituted, then parsed, per evaluation.
    Template(Template),
}

/// Compiles a rule's or a foreach's `context`.
pub fn compile_context(
    entries: &[ContextEntry],
    path: &str,
    rule_level: bool,
    delete: bool,
    diags: &mut Diagnostics,
) -> Vec<CompiledEntry> {
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let p = index_path(&key_path(path, "context"), i);
        if rule_level {
            if let Some(reserved) = RESERVED_NAMES
                .iter()
                .find(|r| entry.name == **r || entry.name.starts_with(&format!("{r}.")))
            {
                diags.push(
                    &key_path(&p, "name"),
                    format!(
                        "entry name `{}` is invalid as it conflicts with a pre-defined variable `{reserved}`",
                        entry.name
                    ),
                );
            }
        }
        match &entry.source {
            ContextSource::External { kind } => diags.push(
                &key_path(&p, kind),
                format!(
                    "`{kind}` context entries need cluster or registry access: not supported yet"
                ),
            ),
            ContextSource::Variable {
                value,
                jmes_path,
                default,
            } => {
                let vp = key_path(&p, "variable");
                let doc = |v: &Value, field: &str, diags: &mut Diagnostics| {
                    let d = Document::compile(v, "", delete);
                    report_problems(&d, &key_path(&vp, field), diags);
                    d
                };
                let jmes_path = jmes_path.as_ref().map(|text| {
                    if text.contains("{{") {
                        let t = Template::compile(text, "", delete);
                        for problem in t.problems() {
                            diags.push(
                                &key_path(&vp, "jmesPath"),
                                format!(
                                    "variable `{{{{{}}}}}`: {}",
                                    problem.variable, problem.error
                                ),
                            );
                        }
                        JmesPath::Template(t)
                    } else {
                        let text = if delete {
                            text.replace("request.object", "request.oldObject")
                        } else {
                            text.clone()
                        };
                        match Query::compile(&text) {
                            Ok(q) => JmesPath::Compiled(q),
                            Err(e) => {
                                diags.push(&key_path(&vp, "jmesPath"), format!("`{text}`: {e}"));
                                JmesPath::Template(Template::compile("", "", delete))
                            }
                        }
                    }
                });
                if value.is_none() && jmes_path.is_none() && default.is_none() {
                    diags.push(&vp, "needs `value`, `jmesPath` or `default`");
                }
                out.push(CompiledEntry {
                    name: entry.name.clone(),
                    value: value.as_ref().map(|v| doc(v, "value", diags)),
                    jmes_path,
                    default: default.as_ref().map(|v| doc(v, "default", diags)),
                });
            }
        }
    }
    out
}

impl CompiledEntry {
    /// Kyverno's variable loader: the value (or the context) queried with
    /// `jmesPath`, falling back to `default`; `null` is an error.
    fn evaluate(&self, ctx: &Context) -> Result<Value, String> {
        let name = &self.name;
        let path = match &self.jmes_path {
            None => None,
            Some(JmesPath::Compiled(q)) => Some(std::borrow::Cow::Borrowed(q)),
            Some(JmesPath::Template(t)) => {
                let text = match t.render(ctx) {
                    Ok(Value::String(s)) => s,
                    Ok(_) => return Err(format!("jmespath value must be a string {name}")),
                    Err(e) => {
                        return Err(format!(
                            "failed to substitute variables in context entry {name}: {e}"
                        ))
                    }
                };
                Some(std::borrow::Cow::Owned(Query::compile(&text).map_err(
                    |e| format!("failed to compile JMESPath: {text}, error: {e}"),
                )?))
            }
        };
        let default = match &self.default {
            Some(d) => Some(d.render(ctx).map_err(|e| {
                format!("failed to substitute variables in context entry {name}: {e}")
            })?),
            None => None,
        };
        let has_default = default.as_ref().is_some_and(|d| !d.is_null());
        let mut output = default.unwrap_or(Value::Null);
        match (&self.value, path) {
            (Some(value), path) => {
                let value = value.render(ctx).map_err(|e| {
                    format!("failed to substitute variables in context entry {name}: {e}")
                })?;
                match path {
                    None => output = value,
                    Some(q) => match q.search(&value) {
                        Ok(v) => output = v.into_owned(),
                        Err(e) if !has_default => {
                            return Err(format!(
                                "failed to apply jmespath {} to variable {}: {e}",
                                q.text(),
                                crate::jmespath::go::sprint(&value)
                            ))
                        }
                        Err(_) => {}
                    },
                }
            }
            (None, Some(q)) => match ctx.search(&q) {
                Ok(v) if !v.is_null() => output = v.into_owned(),
                Ok(_) => {}
                Err(e) if !has_default => {
                    return Err(format!(
                        "failed to apply jmespath {} to variable <nil>: {e}",
                        q.text()
                    ))
                }
                Err(_) => {}
            },
            (None, None) => {}
        }
        if output.is_null() {
            return Err(format!(
                "failed to add context entry for variable {name} since it evaluated to nil"
            ));
        }
        Ok(output)
    }
}

/// What loading a context put into the context, to take it out again.
#[derive(Debug, Default)]
pub struct Loaded {
    previous: Vec<(String, Option<Value>)>,
    /// Entries that failed to load, with why: Kyverno loads lazily and a
    /// failed entry only shows as a missing key later, so we keep the
    /// reason for the message.
    pub failures: Vec<(String, String)>,
}

impl Loaded {
    pub fn undo(self, ctx: &mut Context) {
        for (name, previous) in self.previous.into_iter().rev() {
            ctx.restore(&name, previous);
        }
    }
}

/// Loads entries in order; each can read the ones before it.
pub fn load_context(entries: &[CompiledEntry], ctx: &mut Context) -> Loaded {
    let mut loaded = Loaded::default();
    for entry in entries {
        match entry.evaluate(ctx) {
            Ok(value) => {
                let previous = ctx.set(&entry.name, value);
                loaded.previous.push((entry.name.clone(), previous));
            }
            Err(e) => loaded.failures.push((entry.name.clone(), e)),
        }
    }
    loaded
}

/// A rule body, compiled.
#[derive(Debug, Clone, PartialEq)]
pub enum Body {
    Pattern(PatternBody),
    AnyPattern(Vec<PatternBody>),
    Deny(Option<CompiledConditions>),
    Foreach(Vec<CompiledForeach>),
    PodSecurity(PodSecurityCheck),
    Cel(Arc<CompiledCel>),
}

pub fn compile_deny(
    deny: &Deny,
    path: &str,
    delete: bool,
    diags: &mut Diagnostics,
) -> Option<CompiledConditions> {
    deny.conditions
        .as_ref()
        .map(|c| CompiledConditions::compile(c, &key_path(path, "conditions"), delete, diags))
}

/// A rule ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledRule {
    pub name: String,
    /// `validate.message` as written (deny messages substitute it joined
    /// with the conditions' messages).
    pub raw_message: String,
    pub context: Vec<CompiledEntry>,
    pub preconditions: Option<CompiledConditions>,
    pub cel_preconditions: Option<Arc<cel::Preconditions>>,
    pub message: Option<Document>,
    pub body: Body,
}

impl CompiledRule {
    /// Whether evaluating needs the JSON context at all.
    pub fn needs_context(&self) -> bool {
        !self.context.is_empty()
            || self.preconditions.is_some()
            || self.message.as_ref().is_some_and(|m| !m.is_plain())
            || match &self.body {
                Body::Pattern(p) => !matches!(p, PatternBody::Static(_)),
                Body::AnyPattern(ps) => ps.iter().any(|p| !matches!(p, PatternBody::Static(_))),
                Body::Deny(_) | Body::Foreach(_) => true,
                Body::PodSecurity(_) | Body::Cel(_) => false,
            }
    }

    /// The rule's `validate.message`, substituted.
    pub fn message(&self, ctx: Option<&Context>) -> Result<Option<String>, VarError> {
        match (&self.message, ctx) {
            (None, _) => Ok(None),
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
        let raw = &self.raw_message;
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

/// Runs one pattern against `resource` (`Outcome` → status and message).
pub fn pattern_result(
    rule: &str,
    message: Option<&str>,
    pattern: &Pattern,
    resource: &Value,
) -> (RuleStatus, String) {
    match pattern.evaluate(resource) {
        Outcome::Pass => (
            RuleStatus::Pass,
            format!("validation rule '{rule}' passed."),
        ),
        Outcome::Skip(message) => (RuleStatus::Skip, message),
        Outcome::Fail {
            path, explanation, ..
        } => {
            let mut what = format!("failed at path {path}");
            if let Some(explanation) = explanation {
                what.push_str(&format!(" ({explanation})"));
            }
            (RuleStatus::Fail, failure_message(rule, message, &what))
        }
        Outcome::Error(error) => (
            RuleStatus::Error,
            failure_message(rule, message, &format!("execution error: {error}")),
        ),
    }
}

/// anyPattern: the first passing pattern passes; otherwise every failure.
pub fn any_pattern_result(
    rule: &str,
    message: Option<&str>,
    patterns: &[&Pattern],
    resource: &Value,
) -> (RuleStatus, String) {
    let mut failures = Vec::new();
    let mut skips = Vec::new();
    for (i, pattern) in patterns.iter().enumerate() {
        match pattern.evaluate(resource) {
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
    let text = match message.filter(|m| !m.is_empty()) {
        None => format!("validation error: {errors}"),
        Some(m) if m.ends_with('.') => format!("validation error: {m} {errors}"),
        Some(m) => format!("validation error: {m}. {errors}"),
    };
    (RuleStatus::Fail, text)
}

/// Kyverno rejects `element` variables outside a foreach.
pub fn check_no_element(document: &Document, path: &str, diags: &mut Diagnostics) {
    for variable in document.variables() {
        if variable.starts_with("element") {
            diags.push(
                path,
                format!("variable `{variable}` present outside of foreach"),
            );
        }
    }
}

/// Runs a `podSecurity` check against a Pod or pod controller.
pub fn pod_security_result(
    rule: &str,
    check: &PodSecurityCheck,
    resource: &Value,
) -> (RuleStatus, String) {
    match check.evaluate(resource) {
        Ok(None) => (
            RuleStatus::Pass,
            format!("validation rule '{rule}' passed."),
        ),
        Ok(Some(violations)) => (RuleStatus::Fail, check.failure_message(rule, &violations)),
        Err(e) => (RuleStatus::Error, e),
    }
}

/// Compiles a rule's validate body (for `foreach` bodies see `foreach`).
/// `rule` is the rule's name: autogen's copies (`autogen-…`) get Kyverno's
/// rewrite of `podSecurity` exclusions.
pub fn compile_body(
    rule: &str,
    body: &ValidationBody,
    path: &str,
    delete: bool,
    diags: &mut Diagnostics,
) -> Option<Body> {
    Some(match body {
        ValidationBody::Cel(c) => Body::Cel(Arc::new(CompiledCel::compile(c, path, diags)?)),
        ValidationBody::PodSecurity(ps) => {
            let check = PodSecurityCheck::compile(ps, path, diags)?;
            Body::PodSecurity(if rule.starts_with("autogen-cronjob-") {
                check.for_autogen(true)
            } else if rule.starts_with("autogen-") {
                check.for_autogen(false)
            } else {
                check
            })
        }
        ValidationBody::Pattern(v) => Body::Pattern(PatternBody::compile(v, path, delete, diags)),
        ValidationBody::AnyPattern(vs) => Body::AnyPattern(
            vs.iter()
                .enumerate()
                .map(|(i, v)| PatternBody::compile(v, &index_path(path, i), delete, diags))
                .collect(),
        ),
        ValidationBody::Deny(deny) => Body::Deny(compile_deny(deny, path, delete, diags)),
        ValidationBody::Foreach(list) => Body::Foreach(
            list.iter()
                .enumerate()
                .map(|(i, f)| CompiledForeach::compile(f, &index_path(path, i), delete, diags))
                .collect(),
        ),
        other => {
            diags.not_supported(path, &format!("`validate.{}`", other.key()));
            return None;
        }
    })
}
