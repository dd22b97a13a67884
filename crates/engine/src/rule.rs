//! A selected rule, compiled: its context entries, preconditions, message
//! and body with every expression parsed, ready to evaluate against the
//! request's context.

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
use crate::settings::ValidationBody;

/// A rule body, compiled.
#[derive(Debug, Clone, PartialEq)]
pub enum Body<'a> {
    Pattern(PatternBody<'a>),
    AnyPattern(Vec<PatternBody<'a>>),
    Deny(Option<CompiledConditions>),
    Foreach(Vec<CompiledForeach<'a>>),
    PodSecurity(PodSecurityCheck),
    Cel(Arc<CompiledCel>),
    Manifests(Arc<CompiledManifests>),
}

/// A rule ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledRule<'a> {
    pub text: RuleText<'a>,
    pub context: Vec<CompiledEntry>,
    pub preconditions: Option<CompiledConditions>,
    pub cel_preconditions: Option<Arc<cel::Preconditions>>,
    pub body: Body<'a>,
}

impl CompiledRule<'_> {
    /// Whether evaluating needs the JSON context at all.
    pub fn needs_context(&self) -> bool {
        !self.context.is_empty()
            || self.preconditions.is_some()
            || self.text.message.as_ref().is_some_and(|m| !m.is_plain())
            || match &self.body {
                Body::Pattern(p) => !matches!(p, PatternBody::Static { .. }),
                Body::AnyPattern(ps) => ps.iter().any(|p| !matches!(p, PatternBody::Static { .. })),
                Body::Deny(_) | Body::Foreach(_) => true,
                Body::PodSecurity(_) | Body::Cel(_) | Body::Manifests(_) => false,
            }
    }
}

/// Compiles a rule's validate body (for `foreach` bodies see `foreach`).
/// `rule` is the rule's name: autogen's copies (`autogen-…`) get Kyverno's
/// rewrite of `podSecurity` exclusions.
pub fn compile_body<'a>(
    rule: &str,
    message: Option<&str>,
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
            Body::Pattern(PatternBody::compile(v, path, delete, diags).within(template))
        }
        ValidationBody::AnyPattern(vs) => Body::AnyPattern(
            vs.iter()
                .enumerate()
                .map(|(i, v)| {
                    PatternBody::compile_any(v, &diags.index_path(path, i), delete, diags)
                        .within(template)
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
