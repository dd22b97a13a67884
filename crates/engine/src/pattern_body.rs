//! A validate pattern as written in a rule: compiled once when it has no
//! `{{ }}` variables, otherwise substituted and compiled per evaluation;
//! `$( )` references are resolved when it compiles.

use serde_json::Value;

use crate::json::Json;

use crate::context::Context;
use crate::diagnostics::Diagnostics;
use crate::pattern::{Bindings, Outcome, Pattern, SkipMessages, MAX_DEPTH};
use crate::references;
use crate::variables::{has_variables, report_problems, Document};

/// A pattern, compiled now or, when it has variables (or resolved `$( )`
/// references), after substitution.
#[derive(Debug, Clone, PartialEq)]
pub enum PatternBody<'a> {
    /// Borrowing the rule's JSON.
    Static {
        pattern: Pattern<'a>,
        /// The pod template autogen puts the pattern under
        /// ([`Pattern::evaluate_within`]).
        template: &'static [&'static str],
    },
    Dynamic {
        document: Document,
        path: String,
        template: &'static [&'static str],
    },
    /// A `$( )` reference that does not resolve: as in Kyverno, the rule
    /// errors when it runs.
    Unresolved(String),
}

impl<'a> PatternBody<'a> {
    /// Compiles the pattern found at settings `path`. `template`: the pod
    /// template autogen evaluates it under (see [`Pattern::evaluate_within`]),
    /// empty for a Pod's; its fields' pointers (which `{{@}}` reads) start
    /// there, as in the pattern Kyverno's autogen writes.
    pub fn compile(
        value: &'a Json<'a>,
        path: &str,
        template: &'static [&'static str],
        delete: bool,
        diags: &mut Diagnostics,
    ) -> Self {
        // Most patterns have neither references nor variables: compile them
        // as they are, with no copy of the pattern as a document.
        if !needs_substitution(value, 0) {
            return PatternBody::Static {
                pattern: Pattern::compile(value, path, diags),
                template,
            };
        }
        Self::dynamic(value, path, template, delete, diags, |resolved| resolved)
    }

    /// A pattern kept as a document (its references resolved, then
    /// `convert`ed), substituted and compiled when it runs.
    fn dynamic(
        value: &Json<'_>,
        path: &str,
        template: &'static [&'static str],
        delete: bool,
        diags: &mut Diagnostics,
        convert: impl FnOnce(Value) -> Value,
    ) -> Self {
        // Substitution works on `serde_json` documents, as the request is one.
        let resolved = match references::resolve(&value.to_value()) {
            Ok(v) => convert(v),
            Err(e) => return PatternBody::Unresolved(e),
        };
        let root: String = template.iter().map(|key| format!("/{key}")).collect();
        let document = Document::compile(&resolved, &root, delete);
        report_problems(&document, path, diags);
        if !diags.is_quiet() {
            // Check the pattern's shape with every variable standing for `*`.
            Pattern::compile(&Json::owned(placeholders(&resolved)), path, diags);
        }
        PatternBody::Dynamic {
            document,
            path: path.to_string(),
            template,
        }
    }

    /// An `anyPattern` alternative. Kyverno decodes those with
    /// encoding/json, so their integers are float64s (`1` then matches
    /// `"1.0"`, as a `pattern`'s int64 does not): a pattern with integers
    /// is kept as a document of floats and compiled when it runs.
    pub fn compile_any(
        value: &'a Json<'a>,
        path: &str,
        template: &'static [&'static str],
        delete: bool,
        diags: &mut Diagnostics,
    ) -> Self {
        if !has_integers(value, 0) {
            return Self::compile(value, path, template, delete, diags);
        }
        Self::dynamic(value, path, template, delete, diags, as_floats)
    }

    /// The outcome of a pattern without variables; `None` for the others.
    pub fn evaluate_static(&self, resource: &Value, skips: SkipMessages) -> Option<Outcome> {
        match self {
            PatternBody::Static { pattern, template } => {
                Some(pattern.evaluate_bound(resource, template, &Bindings::default(), skips))
            }
            PatternBody::Dynamic { .. } | PatternBody::Unresolved(_) => None,
        }
    }

    /// The pattern for this evaluation; an error when substitution fails.
    pub fn resolve(&self, ctx: &Context) -> Result<Resolved<'_, 'a>, String> {
        match self {
            PatternBody::Static { pattern, template } => Ok(Resolved::Compiled(pattern, template)),
            PatternBody::Unresolved(e) => Err(e.clone()),
            PatternBody::Dynamic {
                document,
                path,
                template,
            } => {
                let value = document
                    .render(ctx)
                    .map_err(|e| format!("variable substitution failed: {e}"))?;
                Ok(Resolved::Rendered {
                    value: Json::owned(value),
                    path,
                    template,
                })
            }
        }
    }
}

/// A pattern ready for one evaluation: compiled with the rule, or
/// substituted and still to compile ([`Resolved::pattern`]).
pub enum Resolved<'p, 'a> {
    Compiled(&'p Pattern<'a>, &'static [&'static str]),
    Rendered {
        value: Json<'static>,
        path: &'p str,
        template: &'static [&'static str],
    },
}

impl<'p, 'a> Resolved<'p, 'a> {
    /// The pattern to evaluate; an error when the substituted pattern is
    /// malformed (checked whole, with its settings paths).
    pub fn pattern(&self) -> Result<Ready<'_, 'p, 'a>, String> {
        match self {
            Resolved::Compiled(p, template) => Ok(Ready::Compiled(p, template)),
            Resolved::Rendered {
                value,
                path,
                template,
            } => {
                let mut diags = Diagnostics::default();
                let pattern = Pattern::compile(value, path, &mut diags);
                if diags.is_empty() {
                    Ok(Ready::Rendered(pattern, template))
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

/// A compiled pattern: the rule's own, or one compiled from its
/// substitution for this evaluation.
/// Each with autogen's pod template (see [`Pattern::evaluate_within`]).
pub enum Ready<'r, 'p, 'a> {
    Compiled(&'p Pattern<'a>, &'static [&'static str]),
    Rendered(Pattern<'r>, &'static [&'static str]),
}

impl Ready<'_, '_, '_> {
    /// Kyverno's `MatchPattern` ([`Pattern::evaluate_within`]).
    pub fn evaluate(&self, resource: &Value, skips: SkipMessages) -> Outcome {
        self.evaluate_bound(resource, &Bindings::default(), skips)
    }

    /// [`Ready::evaluate`] with the wildcard keys bound by earlier passes
    /// over the same pattern ([`Bindings`]).
    pub fn evaluate_bound(
        &self,
        resource: &Value,
        bindings: &Bindings,
        skips: SkipMessages,
    ) -> Outcome {
        match self {
            Ready::Compiled(p, template) => p.evaluate_bound(resource, template, bindings, skips),
            Ready::Rendered(p, template) => p.evaluate_bound(resource, template, bindings, skips),
        }
    }
}

/// Whether a string of `value` holds a `{{ }}` variable or a `$( )`
/// reference, or a key a variable (one walk for both).
fn needs_substitution(value: &Json<'_>, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        // Too deep to be a pattern: compiling it says so.
        return false;
    }
    match value {
        Json::String(s) => has_variables(s) || crate::scan::contains(s, &crate::scan::REFERENCE),
        Json::Array(items) => items.iter().any(|v| needs_substitution(v, depth + 1)),
        Json::Object(map) => map
            .iter()
            .any(|(k, v)| has_variables(k) || needs_substitution(v, depth + 1)),
        _ => false,
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

/// Whether a pattern has an integer anywhere (bounded as patterns are).
fn has_integers(value: &Json<'_>, depth: usize) -> bool {
    if depth > MAX_DEPTH {
        return false;
    }
    match value {
        Json::Number(n) => n.is_i64() || n.is_u64(),
        Json::Array(items) => items.iter().any(|v| has_integers(v, depth + 1)),
        Json::Object(map) => map.iter().any(|(_, v)| has_integers(v, depth + 1)),
        _ => false,
    }
}

/// `value` with every number a float, as encoding/json decodes it.
fn as_floats(value: Value) -> Value {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => n
            .as_f64()
            .and_then(serde_json::Number::from_f64)
            .map_or(Value::Number(n), Value::Number),
        Value::Array(items) => Value::Array(items.into_iter().map(as_floats).collect()),
        Value::Object(map) => {
            Value::Object(map.into_iter().map(|(k, v)| (k, as_floats(v))).collect())
        }
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn any_pattern_numbers_are_floats_as_kyverno_decodes_them() {
        // (case, pattern, resource, whether it passes as a pattern, and as
        // an anyPattern alternative)
        let cases = [
            (
                "decimal_string",
                json!({"spec": {"f": 1}}),
                json!({"spec": {"f": "1.0"}}),
                false,
                true,
            ),
            (
                "exponent_string",
                json!({"spec": {"f": 1}}),
                json!({"spec": {"f": "1e0"}}),
                false,
                true,
            ),
            (
                "integer_string",
                json!({"spec": {"f": 1}}),
                json!({"spec": {"f": "1"}}),
                true,
                true,
            ),
            (
                "same_integer",
                json!({"spec": {"f": 1}}),
                json!({"spec": {"f": 1}}),
                true,
                true,
            ),
            (
                "other_integer",
                json!({"spec": {"f": 1}}),
                json!({"spec": {"f": 2}}),
                false,
                false,
            ),
            (
                "no_numbers",
                json!({"spec": {"f": "a"}}),
                json!({"spec": {"f": "a"}}),
                true,
                true,
            ),
        ];
        let request = json!({"operation": "CREATE", "object": {}});
        let ctx = Context::new(request);
        for (name, pattern, resource, as_pattern, as_any) in cases {
            let text = pattern.to_string();
            let json = Json::parse(text.as_bytes()).unwrap();
            for (any, want) in [(false, as_pattern), (true, as_any)] {
                let mut diags = Diagnostics::default();
                let body = if any {
                    PatternBody::compile_any(&json, "p", &[], false, &mut diags)
                } else {
                    PatternBody::compile(&json, "p", &[], false, &mut diags)
                };
                assert!(diags.is_empty(), "{name}");
                let resolved = body.resolve(&ctx).unwrap();
                let outcome = resolved
                    .pattern()
                    .unwrap()
                    .evaluate(&resource, SkipMessages::Read);
                assert_eq!(outcome == Outcome::Pass, want, "{name} (anyPattern: {any})");
            }
        }
    }
}
