//! `preconditions` and `deny.conditions`: `any`/`all` blocks or the legacy
//! list, each condition's key and value substituted when it is evaluated
//! (lazily, so a short-circuit also skips a later variable's error), then
//! compared by Kyverno's operators (`operators` module).

use crate::context::Context;
use crate::diagnostics::Diagnostics;
use crate::jmespath::work;
use crate::settings::{Condition, Conditions, Deny};
use crate::variables::{Document, VarError};

pub use operators::{Operator, Spelling};

/// Why a condition could not be evaluated.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ConditionError {
    #[error("failed to substitute variables in condition key: {0}")]
    Key(VarError),
    #[error("failed to substitute variables in condition value: {0}")]
    Value(VarError),
    #[error("{}", crate::jmespath::work::EXCEEDED)]
    TooMuchWork,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompiledCondition {
    key: Document,
    operator: Operator,
    value: Document,
    message: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum CompiledConditions {
    Blocks {
        any: Option<Vec<CompiledCondition>>,
        all: Vec<CompiledCondition>,
    },
    Legacy(Vec<CompiledCondition>),
}

impl CompiledCondition {
    fn compile(c: &Condition, path: &str, delete: bool, diags: &mut Diagnostics) -> Option<Self> {
        let operator = match Operator::read(&c.operator) {
            Spelling::Known(operator) => Some(operator),
            Spelling::InexactComparison(exact) => {
                diags.push(
                    &diags.key_path(path, "operator"),
                    format!(
                        "write `{}` as `{exact}`: Kyverno compares only under the exact spelling, and in any other case the condition never holds",
                        c.operator
                    ),
                );
                None
            }
            Spelling::Unknown => {
                diags.push(
                    &diags.key_path(path, "operator"),
                    format!(
                        "unknown operator `{}`; expected one of {}",
                        c.operator,
                        operators::NAMES.join(", ")
                    ),
                );
                None
            }
        };
        let key = Document::compile_referenced(c.key.as_ref(), delete);
        let value = Document::compile_referenced(c.value.as_ref(), delete);
        for (field, doc) in [("key", &key), ("value", &value)] {
            crate::variables::report_problems(doc, &diags.key_path(path, field), diags);
        }
        Some(Self {
            key,
            operator: operator?,
            value,
            message: c.message.clone().unwrap_or_default(),
        })
    }

    /// Substitutes and compares; the message is the condition's own.
    fn evaluate(&self, ctx: &Context) -> Result<bool, ConditionError> {
        let key = self.key.render_cow(ctx).map_err(ConditionError::Key)?;
        let value = self.value.render_cow(ctx).map_err(ConditionError::Value)?;
        // Set operators go over both sides: the request pays for them.
        let size = work::size(&key).saturating_add(work::size(&value));
        if !work::spend(size) {
            return Err(ConditionError::TooMuchWork);
        }
        Ok(self.operator.evaluate_typed(
            &key,
            operators::Origin::of(&self.key),
            &value,
            operators::Origin::of(&self.value),
        ))
    }
}

fn compile_list(
    list: &[Condition],
    path: &str,
    delete: bool,
    diags: &mut Diagnostics,
) -> Vec<CompiledCondition> {
    list.iter()
        .enumerate()
        .filter_map(|(i, c)| {
            CompiledCondition::compile(c, &diags.index_path(path, i), delete, diags)
        })
        .collect()
}

impl CompiledConditions {
    /// Compiles conditions found at `path`; problems go to `diags`.
    pub fn compile(
        conditions: &Conditions,
        path: &str,
        delete: bool,
        diags: &mut Diagnostics,
    ) -> Self {
        match conditions {
            Conditions::Legacy(list) => Self::Legacy(compile_list(list, path, delete, diags)),
            Conditions::Blocks { any, all } => Self::Blocks {
                any: any
                    .as_ref()
                    .map(|l| compile_list(l, &diags.key_path(path, "any"), delete, diags)),
                all: all
                    .as_ref()
                    .map(|l| compile_list(l, &diags.key_path(path, "all"), delete, diags))
                    .unwrap_or_default(),
            },
        }
    }

    /// The keys and values of every condition.
    pub fn documents(&self) -> Vec<&Document> {
        let lists: Vec<&Vec<CompiledCondition>> = match self {
            Self::Legacy(list) => vec![list],
            Self::Blocks { any, all } => any.iter().chain(std::iter::once(all)).collect(),
        };
        lists
            .into_iter()
            .flatten()
            .flat_map(|c| [&c.key, &c.value])
            .collect()
    }

    /// Kyverno's `EvaluateConditions`: the result, and the messages of the
    /// conditions that decided it (`"; "`-joined, empty ones left out).
    pub fn evaluate(&self, ctx: &Context) -> Result<(bool, String), ConditionError> {
        match self {
            Self::Legacy(list) => {
                let mut trues = Vec::new();
                for c in list {
                    if !c.evaluate(ctx)? {
                        return Ok((false, c.message.clone()));
                    }
                    trues.push(c.message.as_str());
                }
                Ok((true, join_non_empty(&trues, ";")))
            }
            Self::Blocks { any, all } => {
                let mut trues = Vec::new();
                let mut falses = Vec::new();
                let mut any_result = true;
                if let Some(any) = any {
                    any_result = false;
                    for c in any {
                        if c.evaluate(ctx)? {
                            any_result = true;
                            trues.push(c.message.as_str());
                            break;
                        }
                        falses.push(c.message.as_str());
                    }
                }
                let mut all_result = true;
                for c in all {
                    if c.evaluate(ctx)? {
                        trues.push(c.message.as_str());
                    } else {
                        all_result = false;
                        falses.push(c.message.as_str());
                        break;
                    }
                }
                if any_result && all_result {
                    Ok((true, join_non_empty(&trues, "; ")))
                } else {
                    Ok((false, join_non_empty(&falses, "; ")))
                }
            }
        }
    }
}

pub fn join_non_empty(parts: &[&str], separator: &str) -> String {
    parts
        .iter()
        .filter(|p| !p.is_empty())
        .copied()
        .collect::<Vec<_>>()
        .join(separator)
}

pub mod operators;

/// `deny.conditions`, compiled; `None` when the deny has none.
pub fn compile_deny(
    deny: &Deny,
    path: &str,
    delete: bool,
    diags: &mut Diagnostics,
) -> Option<CompiledConditions> {
    deny.conditions
        .as_ref()
        .map(|c| CompiledConditions::compile(c, &diags.key_path(path, "conditions"), delete, diags))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

    fn conditions(value: Value) -> CompiledConditions {
        let mut diags = Diagnostics::default();
        let json = crate::json::Json::borrow(&value);
        let parsed = crate::settings::parse_conditions(&json, "c", &mut diags).unwrap();
        let compiled = CompiledConditions::compile(&parsed, "c", false, &mut diags);
        assert!(diags.is_empty(), "{}", diags.summary());
        compiled
    }

    #[test]
    fn blocks_combine_as_kyverno_does() {
        let ctx = Context::from_value(json!({"a": "x", "n": 3}));
        let t = |m: &str| json!({"key": "{{a}}", "operator": "Equals", "value": "x", "message": m});
        let f = |m: &str| json!({"key": "{{a}}", "operator": "Equals", "value": "y", "message": m});
        let cases = [
            (
                "any_first_true_stops",
                json!({"any": [f("f1"), t("t1"), t("t2")]}),
                (true, "t1"),
            ),
            (
                "any_all_false",
                json!({"any": [f("f1"), f("f2")]}),
                (false, "f1; f2"),
            ),
            (
                "all_true",
                json!({"all": [t("t1"), t("t2")]}),
                (true, "t1; t2"),
            ),
            (
                "all_first_false_stops",
                json!({"all": [t("t1"), f("f1"), f("f2")]}),
                (false, "f1"),
            ),
            (
                "any_and_all_both_needed",
                json!({"any": [t("t1")], "all": [f("f1")]}),
                (false, "f1"),
            ),
            ("empty_any_is_false", json!({"any": []}), (false, "")),
            ("nothing_is_true", json!({}), (true, "")),
            ("legacy_list", json!([t("t1"), t("t2")]), (true, "t1;t2")),
            (
                "legacy_first_false",
                json!([t("t1"), f("f1")]),
                (false, "f1"),
            ),
        ];
        for (name, value, (result, message)) in cases {
            let got = conditions(value).evaluate(&ctx).unwrap();
            assert_eq!(got, (result, message.to_string()), "{name}");
        }
    }

    #[test]
    fn substitution_errors_name_the_variable() {
        let ctx = Context::from_value(json!({"request": {"object": {}}}));
        let c = conditions(
            json!({"all": [{"key": "{{ request.object.missing }}", "operator": "Equals", "value": "x"}]}),
        );
        assert_eq!(
            c.evaluate(&ctx).unwrap_err().to_string(),
            "failed to substitute variables in condition key: failed to resolve request.object.missing at path : JMESPath query failed: Unknown key \"missing\" in path"
        );
    }

    /// Kyverno resolves `$(…)` references in a key or value, against that
    /// key or value, before it substitutes variables.
    #[test]
    fn references_resolve_within_the_key_or_value() {
        let ctx = Context::from_value(json!({"a": "x"}));
        let cases = [
            (
                "a_sibling_in_a_map_key",
                json!({"key": {"a": "v", "b": "$(../a)"}, "operator": "Equals", "value": {"a": "v", "b": "v"}}),
                Ok(true),
            ),
            (
                "an_escaped_reference_is_text",
                json!({"key": "\\$(x)", "operator": "Equals", "value": "{{ '$' }}(x)"}),
                Ok(true),
            ),
            (
                "a_root_string_names_no_field",
                json!({"key": "$(./x)", "operator": "Equals", "value": "x"}),
                Err("failed to substitute variables in condition key: failed to resolve $(./x) at path : no field at ./x"),
            ),
        ];
        for (name, condition, want) in cases {
            let got = conditions(json!({"all": [condition]}))
                .evaluate(&ctx)
                .map(|(passed, _)| passed)
                .map_err(|e| e.to_string());
            assert_eq!(got, want.map_err(str::to_string), "{name}");
        }
    }

    #[test]
    fn short_circuit_skips_later_errors() {
        let ctx = Context::from_value(json!({"a": "x"}));
        let c = conditions(json!({"any": [
            {"key": "{{a}}", "operator": "Equals", "value": "x"},
            {"key": "{{missing}}", "operator": "Equals", "value": "x"}
        ]}));
        assert_eq!(c.evaluate(&ctx).unwrap(), (true, String::new()));
    }

    #[test]
    fn operators_read_in_any_case_as_kyvernos_engine_reads_them() {
        let ctx = Context::from_value(json!({"a": "x", "n": 3}));
        let cases = [
            ("lowercase_equals", "equals", "{{a}}", json!("x"), true),
            ("uppercase_equals", "EQUALS", "{{a}}", json!("y"), false),
            (
                "lowercase_deprecated_equal",
                "equal",
                "{{a}}",
                json!("x"),
                true,
            ),
            (
                "mixed_case_anyin",
                "anyIN",
                "{{a}}",
                json!(["x", "z"]),
                true,
            ),
            (
                "lowercase_allnotin",
                "allnotin",
                "{{a}}",
                json!(["x"]),
                false,
            ),
            ("exact_greater_than", "GreaterThan", "{{n}}", json!(2), true),
        ];
        for (name, operator, key, value, want) in cases {
            let c =
                conditions(json!({"all": [{"key": key, "operator": operator, "value": value}]}));
            assert_eq!(c.evaluate(&ctx).unwrap().0, want, "{name}");
        }
    }

    #[test]
    fn a_comparison_in_another_case_is_refused_with_its_spelling() {
        let cases = [
            ("lowercase", "greaterthan", "write `greaterthan` as `GreaterThan`: Kyverno compares only under the exact spelling"),
            ("uppercase_duration", "DURATIONLESSTHAN", "write `DURATIONLESSTHAN` as `DurationLessThan`"),
            ("unknown", "bigger", "unknown operator `bigger`; expected one of Equals"),
        ];
        for (name, operator, want) in cases {
            let got = settings_problems(
                json!({"all": [{"key": "1", "operator": operator, "value": "2"}]}),
            );
            assert_eq!(got.len(), 1, "{name}: {got:?}");
            assert!(
                got[0].starts_with(&format!("deny.conditions.all[0].operator: {want}")),
                "{name}: {got:?}"
            );
        }
    }

    /// What parsing and compiling `value` as `deny.conditions` reports.
    fn settings_problems(value: Value) -> Vec<String> {
        let mut diags = Diagnostics::default();
        let json = crate::json::Json::borrow(&value);
        let parsed =
            crate::settings::parse_conditions(&json, "deny.conditions", &mut diags).unwrap();
        CompiledConditions::compile(&parsed, "deny.conditions", false, &mut diags);
        diags
            .into_errors()
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn bad_operators_and_expressions_are_settings_problems() {
        let got = settings_problems(
            json!({"all": [{"key": "{{ a.[ }}", "operator": "bigger", "value": "x"}]}),
        );
        assert_eq!(got.len(), 2, "{got:?}");
        assert!(
            got[0].starts_with("deny.conditions.all[0].operator: unknown operator `bigger`"),
            "{got:?}"
        );
        assert!(
            got[1].starts_with(
                "deny.conditions.all[0].key: variable `{{a.[}}`: syntax error at column 4"
            ),
            "{got:?}"
        );
    }
}
