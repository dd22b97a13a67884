//! A selected rule, compiled: its context entries, preconditions, message
//! and body with every expression parsed, ready to evaluate against the
//! request's context.

use std::cell::OnceCell;
use std::sync::Arc;

use crate::cel::{self, CompiledCel};
use crate::conditions::{self, CompiledConditions};
use crate::context_entries::CompiledEntry;
use crate::diagnostics::Diagnostics;
use crate::foreach::CompiledForeach;
use crate::manifests::CompiledManifests;
use crate::pattern_body::PatternBody;
use crate::pss::PodSecurityCheck;
use crate::results::RuleText;
use crate::settings::{Rule, ValidationBody};

/// A rule body, compiled.
#[derive(Debug, Clone, PartialEq)]
pub enum Body<'a> {
    Pattern(PatternBody<'a>),
    AnyPattern(Vec<PatternBody<'a>>),
    Deny(Option<CompiledConditions>),
    Foreach(Vec<CompiledForeach<'a>>),
    PodSecurity(PodSecurityCheck),
    Cel(Arc<CompiledCel<'a>>),
    Manifests(Arc<CompiledManifests>),
}

/// A rule ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledRule<'a> {
    pub text: RuleText<'a>,
    pub context: Vec<CompiledEntry>,
    pub preconditions: Option<CompiledConditions>,
    pub cel_preconditions: Option<Arc<cel::Preconditions>>,
    /// The body: compiled with the rule, or (see [`CompiledRule::deferring`])
    /// when its preconditions first pass. `None` inside: it has a problem.
    body: OnceCell<Option<Body<'a>>>,
    source: &'a Rule<'a>,
    delete: bool,
}

impl<'a> CompiledRule<'a> {
    /// A rule with its body compiled, or (`None`) waiting for its
    /// preconditions.
    pub fn new(
        text: RuleText<'a>,
        context: Vec<CompiledEntry>,
        preconditions: Option<CompiledConditions>,
        cel_preconditions: Option<Arc<cel::Preconditions>>,
        body: Option<Body<'a>>,
        source: &'a Rule<'a>,
        delete: bool,
    ) -> Self {
        let cell = OnceCell::new();
        if let Some(body) = body {
            let _ = cell.set(Some(body));
        }
        Self {
            text,
            context,
            preconditions,
            cel_preconditions,
            body: cell,
            source,
            delete,
        }
    }

    /// Whether a rule's body can wait for its preconditions: most requests
    /// a rule with preconditions selects fail them, and its body is then
    /// never needed. Only bodies that run after the preconditions qualify.
    pub fn deferring(rule: &Rule<'_>) -> bool {
        rule.preconditions.is_some()
            && matches!(
                rule.validate.body,
                ValidationBody::Pattern(_)
                    | ValidationBody::AnyPattern(_)
                    | ValidationBody::Deny(_)
                    | ValidationBody::Foreach(_)
            )
    }

    /// The body, compiled now if it waited; `None` when it has a problem
    /// (compile the rule with [`Diagnostics`] paths to say which).
    pub fn body(&self) -> Option<&Body<'a>> {
        self.body
            .get_or_init(|| {
                let mut diags = Diagnostics::quiet();
                compile_rule_body(self.source, self.delete, &mut diags).filter(|_| diags.is_empty())
            })
            .as_ref()
    }

    /// The body if it is compiled already; a body that waits for the
    /// preconditions is not compiled to answer.
    pub fn compiled_body(&self) -> Option<&Body<'a>> {
        self.body.get().and_then(Option::as_ref)
    }

    /// The body if it is compiled, for changes before the rule runs.
    pub fn body_mut(&mut self) -> Option<&mut Body<'a>> {
        self.body.get_mut().and_then(Option::as_mut)
    }

    /// The rule as the settings wrote it.
    pub fn source(&self) -> &'a Rule<'a> {
        self.source
    }

    /// Whether evaluating needs the JSON context at all.
    pub fn needs_context(&self) -> bool {
        !self.context.is_empty()
            || self.preconditions.is_some()
            || self.text.message.as_ref().is_some_and(|m| !m.is_plain())
            || match self.body.get() {
                // Waiting for preconditions, which need the context.
                None | Some(None) => true,
                Some(Some(body)) => match body {
                    Body::Pattern(p) => !matches!(p, PatternBody::Static { .. }),
                    Body::AnyPattern(ps) => {
                        ps.iter().any(|p| !matches!(p, PatternBody::Static { .. }))
                    }
                    Body::Deny(_) | Body::Foreach(_) => true,
                    Body::PodSecurity(_) | Body::Cel(_) | Body::Manifests(_) => false,
                },
            }
    }
}

/// Compiles a rule's `validate` body, with the checks only the body needs.
/// `None`, or problems in `diags`, when it has a problem.
pub fn compile_rule_body<'a>(
    rule: &'a Rule<'_>,
    delete: bool,
    diags: &mut Diagnostics,
) -> Option<Body<'a>> {
    let validate_path = diags.key_path(&rule.path, "validate");
    let body_path = diags.key_path(&validate_path, rule.validate.body.key());
    let body = compile_body(
        &rule.name,
        rule.validate.message.as_deref(),
        &rule.validate.body,
        rule.validate.template,
        &body_path,
        delete,
        diags,
    )?;
    if let Body::Deny(Some(conditions)) = &body {
        let path = diags.key_path(&body_path, "conditions");
        for doc in conditions.documents() {
            crate::variables::check_no_element(doc, &path, diags);
        }
    }
    Some(body)
}

/// Compiles a rule's validate body (for `foreach` bodies see `foreach`).
/// `rule` is the rule's name: autogen's copies (`autogen-…`) get Kyverno's
/// rewrite of `podSecurity` exclusions.
pub fn compile_body<'a>(
    rule: &str,
    message: Option<&'a str>,
    body: &'a ValidationBody,
    template: &'static [&'static str],
    path: &str,
    delete: bool,
    diags: &mut Diagnostics,
) -> Option<Body<'a>> {
    Some(match body {
        ValidationBody::Cel(c) => Body::Cel(Arc::new(
            CompiledCel::compile(c, path, diags)?.with_default_message(message),
        )),
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
        ValidationBody::Pattern(v) => {
            Body::Pattern(PatternBody::compile(v, path, template, delete, diags))
        }
        ValidationBody::AnyPattern(vs) => Body::AnyPattern(
            vs.iter()
                .enumerate()
                .map(|(i, v)| {
                    let at = diags.index_path(path, i);
                    PatternBody::compile_any(v, &at, template, delete, diags)
                })
                .collect(),
        ),
        ValidationBody::Deny(deny) => {
            Body::Deny(conditions::compile_deny(deny, path, delete, diags))
        }
        ValidationBody::Foreach(list) => Body::Foreach(
            list.iter()
                .enumerate()
                .map(|(i, f)| {
                    CompiledForeach::compile(f, &diags.index_path(path, i), delete, diags)
                })
                .collect(),
        ),
        ValidationBody::Manifests(m) => Body::Manifests(Arc::new(CompiledManifests::compile(
            &m.to_value(),
            path,
            diags,
        )?)),
    })
}
