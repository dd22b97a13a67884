//! `validate.cel` and `celPreconditions`, as Kyverno runs them (the
//! ValidatingAdmissionPolicy model): `variables` evaluated in order and
//! read as `variables.NAME`, then each expression must be `true`; the
//! inputs are `object`, `oldObject`, `request` and `namespaceObject`
//! (`null`: the namespace is not known without cluster access).
//!
//! Programs are compiled once per request with the strings and lists
//! extensions and Kubernetes' regex functions.

use std::collections::HashMap;
use std::sync::Arc;

use ::cel::common::types::{CelBool, CelInt, CelList, CelString};
use ::cel::common::value::Val;
use ::cel::objects::{Key, Map};
use ::cel::{Context, Env, ExecutionError, Program, Value as CelValue};
use serde_json::Value;

use crate::diagnostics::{index_path, key_path, Diagnostics};
use crate::settings::{Cel, NamedExpression};
use crate::verdict::RuleStatus;

/// The `reason`s Kubernetes accepts. Kubewarden answers a rejection with
/// the policy's own code, so the reason is checked but not sent.
const REASONS: &[&str] = &[
    "Unauthorized",
    "Forbidden",
    "Invalid",
    "RequestEntityTooLarge",
];

/// Deepest JSON nesting converted into CEL values.
const MAX_DEPTH: usize = 64;

/// The CEL environment: the standard library, the strings and lists
/// extensions, and Kubernetes' `matches` / `find` / `findAll` on RE2-style
/// regexes (regex-lite, compiled only when called).
fn env() -> Result<Env, String> {
    let mut env = Env::stdlib();
    ::cel::extensions::strings(&mut env).map_err(|e| e.to_string())?;
    ::cel::extensions::lists(&mut env).map_err(|e| e.to_string())?;
    ::cel::add_member_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>)
        .map_err(|e| e.to_string())?;
    ::cel::add_overload!(env, fn matches: (CelString, CelString) -> Result<CelBool>, id = "matches_global")
        .map_err(|e| e.to_string())?;
    ::cel::add_member_overload!(env, fn find: (CelString, CelString) -> Result<CelString>)
        .map_err(|e| e.to_string())?;
    ::cel::add_member_overload!(env, fn find_all: (CelString, CelString) -> Result<CelList>)
        .map_err(|e| e.to_string())?;
    ::cel::add_overload!(env, fn duration: (CelString) -> Result<CelInt>)
        .map_err(|e| e.to_string())?;
    Ok(env)
}

/// `duration('1h30m')`, as nanoseconds: comparisons and arithmetic
/// between durations work; the `google.protobuf.Duration` methods
/// (`getHours()`, …) do not, because the CEL crate's duration type would
/// bring the whole time-zone database into the module.
fn duration(text: &CelString<'_>) -> Result<CelInt, ExecutionError> {
    crate::duration::parse(text.inner())
        .and_then(|ns| i64::try_from(ns).ok())
        .map(CelInt::from)
        .ok_or_else(|| {
            ExecutionError::function_error(
                "duration",
                format!("invalid duration '{}'", text.inner()),
            )
        })
}

thread_local! {
    /// Building the environment costs over a millisecond; every CEL rule
    /// and precondition of a request shares one, built on first use (a
    /// fresh instance serves one request, so this is once per request).
    static ENV: std::cell::OnceCell<Result<Arc<Env>, String>> = const { std::cell::OnceCell::new() };
}

fn shared_env() -> Result<Arc<Env>, String> {
    ENV.with(|cell| cell.get_or_init(|| env().map(Arc::new)).clone())
}

fn regex(function: &str, pattern: &str) -> Result<regex_lite::Regex, ExecutionError> {
    regex_lite::Regex::new(pattern).map_err(|e| {
        ExecutionError::function_error(function, format!("'{pattern}' not a valid regex: {e}"))
    })
}

fn matches(this: &CelString<'_>, re: &CelString<'_>) -> Result<CelBool, ExecutionError> {
    Ok(CelBool::from(
        regex("matches", re.inner())?.is_match(this.inner()),
    ))
}

fn find(this: &CelString<'_>, re: &CelString<'_>) -> Result<CelString<'static>, ExecutionError> {
    let found = regex("find", re.inner())?
        .find(this.inner())
        .map(|m| m.as_str().to_string())
        .unwrap_or_default();
    Ok(CelString::from(found))
}

fn find_all(this: &CelString<'_>, re: &CelString<'_>) -> Result<CelList<'static>, ExecutionError> {
    let all: Vec<Box<dyn Val>> = regex("findAll", re.inner())?
        .find_iter(this.inner())
        .map(|m| Box::new(CelString::from(m.as_str().to_string())) as Box<dyn Val>)
        .collect();
    Ok(CelList::from(all))
}

/// JSON → CEL: integral numbers are `int` so that `object.spec.replicas + 1`
/// works, others `double`.
fn to_cel(value: &Value, depth: usize) -> CelValue {
    if depth > MAX_DEPTH {
        return CelValue::Null;
    }
    match value {
        Value::Null => CelValue::Null,
        Value::Bool(b) => CelValue::Bool(*b),
        Value::Number(n) => match n.as_i64() {
            Some(i) => CelValue::Int(i),
            None => match n.as_u64() {
                Some(u) => CelValue::UInt(u),
                None => CelValue::Float(n.as_f64().unwrap_or(0.0)),
            },
        },
        Value::String(s) => CelValue::String(Arc::new(s.clone())),
        Value::Array(items) => CelValue::List(Arc::new(
            items.iter().map(|v| to_cel(v, depth + 1)).collect(),
        )),
        Value::Object(map) => {
            let entries: HashMap<Key, CelValue> = map
                .iter()
                .map(|(k, v)| (Key::String(Arc::new(k.clone())), to_cel(v, depth + 1)))
                .collect();
            CelValue::Map(Map {
                map: Arc::new(entries),
            })
        }
    }
}

struct Expression {
    text: String,
    program: Program,
    message: Option<String>,
    message_expression: Option<Program>,
}

/// A compiled `validate.cel`.
pub struct CompiledCel {
    env: Arc<Env>,
    variables: Vec<(String, Program)>,
    expressions: Vec<Expression>,
}

impl std::fmt::Debug for CompiledCel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let texts: Vec<&str> = self.expressions.iter().map(|e| e.text.as_str()).collect();
        f.debug_struct("CompiledCel")
            .field("expressions", &texts)
            .finish()
    }
}

impl PartialEq for CompiledCel {
    fn eq(&self, other: &Self) -> bool {
        let texts = |c: &Self| {
            c.expressions
                .iter()
                .map(|e| e.text.clone())
                .collect::<Vec<_>>()
        };
        texts(self) == texts(other)
    }
}

fn compile_program(env: &Env, text: &str, path: &str, diags: &mut Diagnostics) -> Option<Program> {
    match env.compile(text) {
        Ok(p) => Some(p),
        Err(e) => {
            let why = e.to_string().replace('\n', " ");
            diags.push(path, format!("`{text}` does not compile: {why}"));
            None
        }
    }
}

impl CompiledCel {
    /// Compiles `validate.cel` found at `path`; problems go to `diags`.
    pub fn compile(cel: &Cel, path: &str, diags: &mut Diagnostics) -> Option<Self> {
        let before = diags.errors().len();
        for (field, present) in [
            ("paramKind", cel.param_kind.is_some()),
            ("paramRef", cel.param_ref.is_some()),
        ] {
            if present {
                diags.push(
                    &key_path(path, field),
                    "parameter resources need cluster access: not supported yet",
                );
            }
        }
        if cel.audit_annotations.is_some() {
            diags.push(
                &key_path(path, "auditAnnotations"),
                "audit annotations are not supported yet",
            );
        }
        let env = match shared_env() {
            Ok(env) => env,
            Err(e) => {
                diags.push(path, format!("the CEL environment failed to build: {e}"));
                return None;
            }
        };
        let variables = cel
            .variables
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let p = key_path(&index_path(&key_path(path, "variables"), i), "expression");
                Some((
                    v.name.clone(),
                    compile_program(&env, &v.expression, &p, diags)?,
                ))
            })
            .collect();
        let mut expressions = Vec::new();
        for (i, e) in cel.expressions.iter().enumerate() {
            let p = index_path(&key_path(path, "expressions"), i);
            if let Some(reason) = &e.reason {
                if !REASONS.contains(&reason.as_str()) {
                    diags.push(
                        &key_path(&p, "reason"),
                        format!("must be one of {}, not `{reason}`", REASONS.join(", ")),
                    );
                }
            }
            let program = compile_program(&env, &e.expression, &key_path(&p, "expression"), diags);
            let message_expression = e
                .message_expression
                .as_ref()
                .and_then(|m| compile_program(&env, m, &key_path(&p, "messageExpression"), diags));
            if let Some(program) = program {
                expressions.push(Expression {
                    text: e.expression.clone(),
                    program,
                    message: e.message.clone(),
                    message_expression,
                });
            }
        }
        if cel.expressions.is_empty() {
            diags.push(
                &key_path(path, "expressions"),
                "needs at least one expression",
            );
        }
        (diags.errors().len() == before).then(|| Self {
            env,
            variables,
            expressions,
        })
    }

    /// Evaluates every expression; the first that is not `true` fails the
    /// rule (or errors it).
    pub fn evaluate(&self, inputs: &Inputs<'_>) -> (RuleStatus, String) {
        let mut ctx = Context::with_env(self.env.clone());
        inputs.bind(&mut ctx);
        // Variables in order, each able to read the ones before it.
        let mut values: HashMap<Key, CelValue> = HashMap::new();
        for (name, program) in &self.variables {
            ctx.add_variable_from_value(
                "variables",
                CelValue::Map(Map {
                    map: Arc::new(values.clone()),
                }),
            );
            if let Ok(v) = program.execute(&ctx) {
                values.insert(Key::String(Arc::new(name.clone())), v);
            }
        }
        ctx.add_variable_from_value(
            "variables",
            CelValue::Map(Map {
                map: Arc::new(values),
            }),
        );
        for e in &self.expressions {
            match e.program.execute(&ctx) {
                Ok(CelValue::Bool(true)) => {}
                Ok(CelValue::Bool(false)) => {
                    let from_expression =
                        e.message_expression
                            .as_ref()
                            .and_then(|m| match m.execute(&ctx) {
                                Ok(CelValue::String(s)) if !s.trim().is_empty() => {
                                    Some(s.as_str().to_string())
                                }
                                _ => None,
                            });
                    let message = from_expression
                        .or_else(|| e.message.clone().filter(|m| !m.is_empty()))
                        .unwrap_or_else(|| format!("failed expression: {}", e.text));
                    return (RuleStatus::Fail, message);
                }
                Ok(other) => {
                    return (
                        RuleStatus::Error,
                        format!(
                            "expression '{}' resulted in error: expected a bool, got {other:?}",
                            e.text
                        ),
                    )
                }
                Err(err) => {
                    return (
                        RuleStatus::Error,
                        format!("expression '{}' resulted in error: {err}", e.text),
                    )
                }
            }
        }
        (RuleStatus::Pass, String::new())
    }
}

/// What CEL expressions read.
pub struct Inputs<'a> {
    pub object: &'a Value,
    pub old_object: &'a Value,
    pub request: &'a Value,
    /// The request's namespace (`""` for cluster-scoped resources).
    pub namespace: &'a str,
}

impl Inputs<'_> {
    fn bind(&self, ctx: &mut Context<'_, '_>) {
        ctx.add_variable_from_value("object", to_cel(self.object, 0));
        ctx.add_variable_from_value("oldObject", to_cel(self.old_object, 0));
        ctx.add_variable_from_value("request", to_cel(self.request, 0));
        // Only the name is known without cluster access: labels and the
        // rest of the Namespace are absent (reading them is an error).
        let namespace = if self.namespace.is_empty() {
            Value::Null
        } else {
            serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}})
        };
        ctx.add_variable_from_value("namespaceObject", to_cel(&namespace, 0));
        ctx.add_variable_from_value("params", CelValue::Null);
    }
}

/// Compiled `celPreconditions`: all must hold for the rule to apply.
pub struct Preconditions {
    env: Arc<Env>,
    conditions: Vec<(String, Program)>,
}

impl std::fmt::Debug for Preconditions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names: Vec<&str> = self.conditions.iter().map(|c| c.0.as_str()).collect();
        f.debug_struct("Preconditions")
            .field("conditions", &names)
            .finish()
    }
}

impl PartialEq for Preconditions {
    fn eq(&self, other: &Self) -> bool {
        let names = |p: &Self| p.conditions.iter().map(|c| c.0.clone()).collect::<Vec<_>>();
        names(self) == names(other)
    }
}

impl Preconditions {
    pub fn compile(list: &[NamedExpression], path: &str, diags: &mut Diagnostics) -> Option<Self> {
        let before = diags.errors().len();
        let env = match shared_env() {
            Ok(env) => env,
            Err(e) => {
                diags.push(path, format!("the CEL environment failed to build: {e}"));
                return None;
            }
        };
        let conditions = list
            .iter()
            .enumerate()
            .filter_map(|(i, c)| {
                let p = key_path(&index_path(path, i), "expression");
                Some((
                    c.name.clone(),
                    compile_program(&env, &c.expression, &p, diags)?,
                ))
            })
            .collect();
        (diags.errors().len() == before).then(|| Self { env, conditions })
    }

    /// `Ok(None)` when all hold; `Ok(Some(name))` names the first that does
    /// not; `Err` when one cannot be evaluated.
    pub fn evaluate(&self, inputs: &Inputs<'_>) -> Result<Option<String>, String> {
        let mut ctx = Context::with_env(self.env.clone());
        inputs.bind(&mut ctx);
        for (name, program) in &self.conditions {
            match program.execute(&ctx) {
                Ok(CelValue::Bool(true)) => {}
                Ok(CelValue::Bool(false)) => return Ok(Some(name.clone())),
                Ok(other) => {
                    return Err(format!(
                        "cel precondition {name} must evaluate to a bool, got {other:?}"
                    ))
                }
                Err(e) => return Err(format!("cel precondition {name} failed: {e}")),
            }
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests;
