//! `validate.foreach`: a JMESPath `list`, and for each element its own
//! `context`, `preconditions` and body (`pattern`, `anyPattern`, `deny` or
//! a nested `foreach`), with `element`, `elementIndex` and their
//! `element<N>` / `elementIndex<N>` forms set, as Kyverno's validator does.

use std::borrow::Cow;
use std::cell::OnceCell;

use serde_json::Value;

use crate::cluster::Cached;
use crate::conditions::CompiledConditions;
use crate::context::{Context, QueryError};
use crate::context_entries::{compile_context, load_context, CompiledEntry};
use crate::diagnostics::Diagnostics;
use crate::jmespath::{Query, SearchError};
use crate::pattern::Outcome;
use crate::pattern_body::{PatternBody, Resolved};
use crate::results::{
    any_pattern_result, deny_result, pattern_result, preconditions_result, RuleText,
};
use crate::settings::{Foreach, ForeachBody};
use crate::verdict::RuleStatus;

/// Deepest nesting of `foreach` in `foreach` accepted.
const MAX_NESTING: usize = 8;

/// Most elements one rule's foreach visits, nested loops included: three
/// nested loops over lists of 5,000 would otherwise run 125 billion times,
/// far past policy-server's deadline. A rule that needs more errors (and
/// so rejects in Enforce) rather than stall or pass unchecked.
pub const MAX_ITERATIONS: usize = 50_000;

/// The elements a rule's foreach may still visit.
struct Budget {
    remaining: usize,
    /// The list whose element went past the limit.
    exceeded: Option<String>,
}

impl Budget {
    /// Takes one visit; `false` when there is none left.
    fn take(&mut self, list: &str) -> bool {
        if self.remaining == 0 {
            self.exceeded.get_or_insert_with(|| list.to_string());
            return false;
        }
        self.remaining -= 1;
        true
    }

    fn message(list: &str) -> String {
        format!(
            "foreach visits more than {MAX_ITERATIONS} elements (the limit per rule), at `{list}`"
        )
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct CompiledForeach<'a> {
    list_text: String,
    /// The compiled list, or why it does not compile.
    list: Result<Query, String>,
    element_scope: Option<bool>,
    /// Whether anything in the entry reads `element<N>` / `elementIndex<N>`
    /// for its own nesting level: only then are they set, which spares a
    /// copy of every element.
    reads_numbered_element: bool,
    reads_numbered_index: bool,
    /// What runs for each element: compiled with the entry when its
    /// problems are wanted with their paths, else when the list first
    /// yields an element (an empty or absent list, common for
    /// `initContainers` and `ephemeralContainers`, compiles none of it).
    /// `None` inside: it has a problem.
    each: OnceCell<Option<Each<'a>>>,
    source: &'a Foreach<'a>,
    delete: bool,
    nesting: usize,
}

/// A foreach entry's per-element part.
#[derive(Debug, Clone, PartialEq)]
struct Each<'a> {
    context: Vec<CompiledEntry>,
    preconditions: Option<CompiledConditions>,
    body: Body<'a>,
}

#[derive(Debug, Clone, PartialEq)]
enum Body<'a> {
    Pattern(PatternBody<'a>),
    AnyPattern(Vec<PatternBody<'a>>),
    Deny(Option<CompiledConditions>),
    Foreach(Vec<CompiledForeach<'a>>),
}

/// A foreach entry whose per-element part has a problem, found when its
/// list first yielded an element: the rule is compiled again, with
/// settings paths, to say where.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Uncompiled;

impl<'a> CompiledForeach<'a> {
    /// Compiles an entry. With quiet `diags` (a request), its per-element
    /// part waits for the first element.
    pub fn compile(f: &'a Foreach<'a>, path: &str, delete: bool, diags: &mut Diagnostics) -> Self {
        Self::compile_nested(f, path, delete, 0, diags)
    }

    fn compile_nested(
        f: &'a Foreach<'a>,
        path: &str,
        delete: bool,
        nesting: usize,
        diags: &mut Diagnostics,
    ) -> Self {
        // Kyverno accepts a policy whose `list` does not parse (it never
        // substitutes `{{ }}` there either); such a list makes the rule an
        // error when it runs, so the error is kept for then.
        let list = Query::compile(f.list.trim()).map_err(|e| e.to_string());
        let each = OnceCell::new();
        if !diags.is_quiet() {
            let before = diags.errors().len();
            let compiled = Each::compile(f, path, delete, nesting, diags);
            let _ = each.set((diags.errors().len() == before).then_some(compiled));
        }
        Self {
            list_text: f.list.trim().to_string(),
            list,
            element_scope: f.element_scope,
            reads_numbered_element: f.numbered.element(nesting),
            reads_numbered_index: f.numbered.index(nesting),
            each,
            source: f,
            delete,
            nesting,
        }
    }

    /// The per-element part, compiled now if it waited.
    fn each(&self) -> Result<&Each<'a>, Uncompiled> {
        self.each
            .get_or_init(|| {
                let mut diags = Diagnostics::quiet();
                let each = Each::compile(self.source, "", self.delete, self.nesting, &mut diags);
                diags.is_empty().then_some(each)
            })
            .as_ref()
            .ok_or(Uncompiled)
    }
}

impl<'a> Each<'a> {
    fn compile(
        f: &'a Foreach<'a>,
        path: &str,
        delete: bool,
        nesting: usize,
        diags: &mut Diagnostics,
    ) -> Self {
        let body = match &f.body {
            ForeachBody::Pattern(v) => Body::Pattern(PatternBody::compile(
                v,
                &diags.key_path(path, "pattern"),
                &[],
                delete,
                diags,
            )),
            ForeachBody::AnyPattern(vs) => {
                let p = diags.key_path(path, "anyPattern");
                Body::AnyPattern(
                    vs.iter()
                        .enumerate()
                        .map(|(i, v)| {
                            PatternBody::compile_any(
                                v,
                                &diags.index_path(&p, i),
                                &[],
                                delete,
                                diags,
                            )
                        })
                        .collect(),
                )
            }
            ForeachBody::Deny(d) => Body::Deny(crate::conditions::compile_deny(
                d,
                &diags.key_path(path, "deny"),
                delete,
                diags,
            )),
            ForeachBody::Foreach(list) => {
                let p = diags.key_path(path, "foreach");
                if nesting + 1 >= MAX_NESTING {
                    diags.push(
                        &p,
                        format!("foreach nests deeper than {MAX_NESTING} levels"),
                    );
                    Body::Foreach(Vec::new())
                } else {
                    Body::Foreach(
                        list.iter()
                            .enumerate()
                            .map(|(i, f)| {
                                CompiledForeach::compile_nested(
                                    f,
                                    &diags.index_path(&p, i),
                                    delete,
                                    nesting + 1,
                                    diags,
                                )
                            })
                            .collect(),
                    )
                }
            }
        };
        Self {
            context: compile_context(&f.context, path, false, delete, diags),
            preconditions: f.preconditions.as_ref().map(|c| {
                CompiledConditions::compile(
                    c,
                    &diags.key_path(path, "preconditions"),
                    delete,
                    diags,
                )
            }),
            body,
        }
    }
}

/// Kyverno's `validateForEach` over a rule's (or an element's) foreach
/// list: the first result that is not a pass ends it; `None` when no
/// element was validated.
pub fn evaluate(
    rule: &RuleText,
    list: &[CompiledForeach],
    ctx: &mut Context,
    cluster: &Cached<'_>,
    nesting: usize,
) -> Result<Option<(RuleStatus, String)>, Uncompiled> {
    let mut budget = Budget {
        remaining: MAX_ITERATIONS,
        exceeded: None,
    };
    let result = evaluate_within(rule, list, &*ctx, cluster, nesting, &mut budget)?;
    // However the loops ended, a rule that ran out of visits is an error.
    Ok(match budget.exceeded {
        Some(list) => Some((RuleStatus::Error, Budget::message(&list))),
        None => result,
    })
}

fn evaluate_within(
    rule: &RuleText,
    list: &[CompiledForeach],
    ctx: &Context,
    cluster: &Cached<'_>,
    nesting: usize,
    budget: &mut Budget,
) -> Result<Option<(RuleStatus, String)>, Uncompiled> {
    let mut applied = 0;
    let mut list_error = None;
    for foreach in list {
        let found = match &foreach.list {
            // A missing field is the common error: it is told apart without
            // writing the message out.
            Ok(query) => ctx.search_list(query).map_err(|e| match e {
                QueryError::Search(SearchError::NotFound(_)) => None,
                e => Some(e.to_string()),
            }),
            Err(e) => Err(Some(e.clone())),
        };
        let elements = match found {
            Ok(items) => items,
            // An absent variable skips the foreach; another error skips it
            // too, but is the rule's error if no other list applied (as
            // Kyverno's `validateForEach` does, telling them apart by the
            // message).
            Err(e) => {
                if let Some(e) = e.filter(|e| !e.contains("Unknown key")) {
                    list_error.get_or_insert(e);
                }
                continue;
            }
        };
        let (result, count) =
            validate_elements(rule, foreach, &elements, ctx, cluster, nesting, budget)?;
        if result.0 != RuleStatus::Pass {
            return Ok(Some(result));
        }
        applied += count;
    }
    Ok(if applied > 0 {
        Some((RuleStatus::Pass, "rule passed".to_string()))
    } else {
        list_error.map(|e| (RuleStatus::Error, format!("failed to evaluate list: {e}")))
    })
}

fn validate_elements<'e>(
    rule: &RuleText,
    foreach: &CompiledForeach,
    elements: &'e [Cow<'e, Value>],
    parent: &'e Context<'_>,
    cluster: &Cached<'_>,
    nesting: usize,
    budget: &mut Budget,
) -> Result<((RuleStatus, String), usize), Uncompiled> {
    let mut applied = 0;
    // The elements are read where they are, in a context of their own.
    let mut ctx = parent.child();
    for (index, element) in elements.iter().enumerate() {
        let element: &'e Value = element.as_ref();
        if element.is_null() {
            continue;
        }
        if !budget.take(&foreach.list_text) {
            let message = Budget::message(&foreach.list_text);
            return Ok(((RuleStatus::Error, message), applied));
        }
        let scoped = match foreach.element_scope {
            None => element.is_object(),
            Some(true) if !element.is_object() => {
                return Ok((
                    (
                        RuleStatus::Error,
                        format!(
                            "failed to process foreach: cannot use elementScope=true foreach rules for elements that are not maps, expected type=map got type={}",
                            crate::pattern::go_type(element)
                        ),
                    ),
                    applied,
                ));
            }
            Some(scope) => scope,
        };
        // `element<N>` and `elementIndex<N>` only when something reads them.
        let mark = ctx.set_borrowed(Cow::Borrowed("element"), element);
        if foreach.reads_numbered_element {
            ctx.set_borrowed(Cow::Owned(format!("element{nesting}")), element);
        }
        ctx.set("elementIndex", Value::from(index));
        if foreach.reads_numbered_index {
            ctx.set(&format!("elementIndex{nesting}"), Value::from(index));
        }
        let result = validate_element(rule, foreach, scoped, &mut ctx, cluster, nesting, budget);
        ctx.restore(mark);
        let result = result?;
        let Some((status, message)) = result else {
            continue;
        };
        match status {
            RuleStatus::Skip => continue,
            RuleStatus::Pass => applied += 1,
            // An element whose preconditions cannot be evaluated is passed
            // over; any other error ends the loop, as in Kyverno.
            RuleStatus::Error if message.contains("failed to evaluate preconditions") => continue,
            RuleStatus::Error | RuleStatus::Fail => {
                let message = format!(
                    "validation failure: {message} (foreach `{}`, element {index})",
                    foreach.list_text
                );
                return Ok(((status, message), applied));
            }
        }
    }
    Ok(((RuleStatus::Pass, String::new()), applied))
}

/// One element: its context, its preconditions, then the body.
fn validate_element(
    rule: &RuleText,
    foreach: &CompiledForeach,
    scoped: bool,
    ctx: &mut Context,
    cluster: &Cached<'_>,
    nesting: usize,
    budget: &mut Budget,
) -> Result<Option<(RuleStatus, String)>, Uncompiled> {
    let each = foreach.each()?;
    let mark = load_context(&each.context, ctx, cluster);
    let result = (|| {
        if let Some(result) = each
            .preconditions
            .as_ref()
            .and_then(|pre| preconditions_result(pre, ctx))
        {
            return Ok(Some(result));
        }
        let resource = if scoped {
            ctx.lookup("element").unwrap_or(&Value::Null)
        } else {
            ctx.object()
        };
        Ok(match &each.body {
            Body::Deny(conditions) => Some(deny_result(rule, conditions.as_ref(), ctx)),
            Body::Pattern(p) => {
                let resolved = match p.resolve(ctx) {
                    Ok(resolved) => resolved,
                    Err(e) => return Ok(Some((RuleStatus::Error, e))),
                };
                Some(match resolved.pattern() {
                    Err(e) => (RuleStatus::Error, e),
                    Ok(pattern) => match pattern.evaluate(resource, ctx.skip_messages()) {
                        // An element's pass needs no message.
                        Outcome::Pass => (RuleStatus::Pass, String::new()),
                        outcome => pattern_result(
                            rule.name,
                            || rule.message(Some(ctx)).ok().flatten(),
                            outcome,
                        ),
                    },
                })
            }
            Body::AnyPattern(ps) => {
                let resolved = match ps
                    .iter()
                    .map(|p| p.resolve(ctx))
                    .collect::<Result<Vec<_>, _>>()
                {
                    Ok(resolved) => resolved,
                    Err(e) => return Ok(Some((RuleStatus::Error, e))),
                };
                let patterns = match resolved
                    .iter()
                    .map(Resolved::pattern)
                    .collect::<Result<Vec<_>, _>>()
                {
                    Ok(patterns) => patterns,
                    Err(e) => return Ok(Some((RuleStatus::Error, e))),
                };
                Some(any_pattern_result(
                    rule.name,
                    || rule.message(Some(ctx)).ok().flatten(),
                    patterns
                        .iter()
                        .map(|p| p.evaluate(resource, ctx.skip_messages())),
                ))
            }
            Body::Foreach(nested) => {
                evaluate_within(rule, nested, ctx, cluster, nesting + 1, budget)?
            }
        })
    })();
    ctx.restore(mark);
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::outcomes_of;
    use serde_json::json;

    fn statuses(foreach: Value) -> Vec<RuleStatus> {
        let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "m", "foreach": foreach}}]});
        let request = json!({"uid": "1", "operation": "CREATE", "namespace": "default",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [
                    {"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 81}]},
                    {"name": "b", "ports": [{"containerPort": 90}]}]}}});
        outcomes_of(&settings, request)
            .iter()
            .map(|o| o.status)
            .collect()
    }

    /// A loop over each container's ports that denies when `key` is not
    /// one of `allowed`.
    fn nested_loop(key: &str, allowed: Value) -> Value {
        json!([{"list": "request.object.spec.containers", "foreach": [{"list": "element.ports",
            "deny": {"conditions": {"all": [{"key": key, "operator": "AnyNotIn", "value": allowed}]}}}]}])
    }

    fn outcome(foreach: Value) -> (RuleStatus, String) {
        let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"message": "m", "foreach": foreach}}]});
        let request = json!({"uid": "1", "operation": "CREATE", "namespace": "default",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                "spec": {"containers": [{"name": "a"}, {"name": "b", "x": "bad"}]}}});
        outcomes_of(&settings, request)
            .first()
            .map(|o| (o.status, o.message.clone()))
            .unwrap_or((RuleStatus::Skip, "no outcome".into()))
    }

    #[test]
    fn list_and_element_errors_follow_kyverno() {
        let deny_x = json!({"conditions": {"all": [{"key": "{{ element.x }}", "operator": "Equals", "value": "bad"}]}});
        let cases = [
            (
                "list_that_does_not_parse_is_the_rules_error",
                json!([{"list": "request.object.spec.containers[", "deny": deny_x}]),
                RuleStatus::Error,
                "failed to evaluate list: ",
            ),
            (
                "list_in_braces_is_the_rules_error",
                json!([{"list": "{{ request.object.spec.containers }}", "deny": deny_x}]),
                RuleStatus::Error,
                "failed to evaluate list: ",
            ),
            (
                "broken_list_is_passed_over_when_another_applies",
                json!([{"list": "request.object.spec.containers[", "deny": deny_x},
                       {"list": "request.object.metadata", "deny": {"conditions": {"all": [
                           {"key": "a", "operator": "Equals", "value": "b"}]}}}]),
                RuleStatus::Pass,
                "",
            ),
            (
                "absent_variable_skips_the_loop",
                json!([{"list": "nothere.items", "deny": deny_x}]),
                RuleStatus::Skip,
                "no outcome",
            ),
            (
                "first_element_error_ends_the_loop",
                json!([{"list": "request.object.spec.containers", "deny": deny_x}]),
                RuleStatus::Error,
                "element 0",
            ),
            (
                "element_precondition_error_is_passed_over",
                json!([{"list": "request.object.spec.containers",
                    "preconditions": {"all": [{"key": "{{ element.x }}", "operator": "Equals", "value": "bad"}]},
                    "deny": {}}]),
                RuleStatus::Fail,
                "element 1",
            ),
        ];
        for (name, foreach, status, message) in cases {
            let (got, text) = outcome(foreach);
            assert_eq!(got, status, "{name}: {text}");
            assert!(text.contains(message), "{name}: {text}");
        }
    }

    #[test]
    fn an_entry_compiles_what_runs_per_element_when_its_first_element_comes() {
        // The per-element part's problem: an operator Kyverno does not have.
        let bad_deny =
            json!({"conditions": {"all": [{"key": "a", "operator": "Equalz", "value": "a"}]}});
        let cases = [
            (
                "elements_compile_it_and_its_problem_errors_the_rule",
                json!([{"list": "request.object.spec.containers", "deny": bad_deny}]),
                RuleStatus::Error,
                "rule r cannot be evaluated: validate.foreach[0].deny.conditions.all[0].operator: unknown operator `Equalz`",
            ),
            (
                "nested_entries_wait_for_their_own_elements",
                json!([{"list": "request.object.spec.containers",
                    "foreach": [{"list": "element.ports", "deny": bad_deny}]}]),
                RuleStatus::Skip,
                "no outcome",
            ),
            (
                // The settings check reports the problem; a request whose
                // list is empty never reaches it.
                "an_empty_list_compiles_nothing",
                json!([{"list": "request.object.spec.initContainers", "deny": bad_deny}]),
                RuleStatus::Skip,
                "no outcome",
            ),
        ];
        for (name, foreach, status, message) in cases {
            let (got, text) = outcome(foreach);
            assert_eq!(got, status, "{name}: {text}");
            assert!(text.starts_with(message), "{name}: {text}");
        }
    }

    #[test]
    fn numbered_elements_and_indexes_reach_nested_loops() {
        let cases = [
            (
                "outer_element_by_number",
                "{{ element0.name }}-{{ element1.containerPort }}",
                json!(["a-80", "a-81", "b-90"]),
            ),
            (
                "indexes_by_number",
                "{{ elementIndex0 }}/{{ elementIndex1 }}/{{ elementIndex }}",
                json!(["0/0/0", "0/1/1", "1/0/0"]),
            ),
        ];
        for (name, key, allowed) in cases {
            // Every combination the loops produce is allowed: a wrong or
            // missing binding makes the rule fail or error.
            assert_eq!(
                statuses(nested_loop(key, allowed)),
                vec![RuleStatus::Pass],
                "{name}"
            );
            assert_eq!(
                statuses(nested_loop(key, json!(["x"]))),
                vec![RuleStatus::Fail],
                "{name}"
            );
        }
    }

    #[test]
    fn numbered_names_are_found_in_keys_strings_and_escapes() {
        use crate::settings::NumberedNames;
        let cases = [
            (
                "in_a_string",
                json!({"deny": {"x": "{{ element0.a }}"}}),
                (true, false),
            ),
            (
                "in_a_key",
                json!({"pattern": {"{{element0}}": 1}}),
                (true, false),
            ),
            (
                "escaped",
                json!({"list": "\"\\u0065lement0\""}),
                (true, true),
            ),
            (
                "other_level",
                json!({"deny": {"x": "{{ element1.a }}"}}),
                (false, false),
            ),
            (
                "plain_element",
                json!({"deny": {"x": "{{ element.a }}"}}),
                (false, false),
            ),
            (
                "index",
                json!({"deny": {"x": "{{ elementIndex0 }}"}}),
                (false, true),
            ),
            (
                "ten",
                json!({"deny": {"x": "{{ element10 }}"}}),
                (false, false),
            ),
            (
                "at_the_start_of_the_text",
                json!({"deny": {"x": "element0.a"}}),
                (true, false),
            ),
            (
                "after_another_escape",
                json!({"deny": {"x": "a\\n{{ elementIndex0 }}"}}),
                (false, true),
            ),
            (
                "m_too_early_for_the_word",
                json!({"deny": {"m": "mm0"}}),
                (false, false),
            ),
            (
                "escape_after_a_name",
                json!({"deny": {"x": "{{ element1 }} \\u0041"}}),
                (true, true),
            ),
        ];
        for (name, value, (element, index)) in cases {
            let names = NumberedNames::of(&crate::json::Json::borrow(&value));
            assert_eq!(
                (names.element(0), names.index(0)),
                (element, index),
                "{name}"
            );
        }
        assert!(
            NumberedNames::of(&crate::json::Json::borrow(&json!("{{ element10 }}"))).element(10)
        );
    }
}
