//! `validate.cel` and `celPreconditions`, as Kyverno runs them (the
//! ValidatingAdmissionPolicy model): `variables` evaluated lazily and read
//! as `variables.NAME`, then each expression must be `true`; the inputs are
//! `object`, `oldObject`, `request` and `namespaceObject`.
//!
//! Expressions run on the `kube-cel` interpreter: compiling is one parser
//! pass, and evaluation reads the request's JSON in place, so a CEL rule
//! costs no conversion of the object. Every expression gets Kubernetes'
//! per-expression cost budget.

use std::rc::Rc;

use kube_cel::{Activation, Budget, Program};
use serde_json::Value;

use crate::cluster::{Cached, Lookup};
use crate::diagnostics::{key_path, Diagnostics};
use crate::matching::selector_text;
use crate::resources;
use crate::settings::{Cel, NamedExpression, Params};
use crate::verdict::RuleStatus;

/// The `reason`s Kubernetes accepts, with the HTTP status each answers
/// with, as a ValidatingAdmissionPolicy's denial carries it.
const REASONS: &[(&str, u16)] = &[
    ("Unauthorized", 401),
    ("Forbidden", 403),
    ("Invalid", 422),
    ("RequestEntityTooLarge", 413),
];

/// Kubernetes' `MaxEvaluatedMessageExpressionSizeBytes`.
const MAX_MESSAGE_BYTES: usize = 5 * 1024;

/// An expression, with its text and message borrowed from the settings.
struct Expression<'a> {
    text: &'a str,
    /// The HTTP status its `reason` asks for, when it names one.
    code: Option<u16>,
    program: Program,
    message: Option<&'a str>,
    message_expression: Option<Program>,
}

/// A compiled `validate.cel`.
pub struct CompiledCel<'a> {
    variables: Vec<(String, Program)>,
    expressions: Vec<Expression<'a>>,
    reads_namespace: bool,
    params: Option<Params>,
    /// `auditAnnotations`: key and program.
    audit_annotations: Vec<(&'a str, Program)>,
}

impl std::fmt::Debug for CompiledCel<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let texts: Vec<&str> = self.expressions.iter().map(|e| e.text).collect();
        f.debug_struct("CompiledCel")
            .field("expressions", &texts)
            .finish()
    }
}

impl PartialEq for CompiledCel<'_> {
    fn eq(&self, other: &Self) -> bool {
        let texts = |c: &Self| c.expressions.iter().map(|e| e.text).collect::<Vec<_>>();
        texts(self) == texts(other)
    }
}

/// Compiles `text`; checking settings (loud `diags`) also compiles its
/// literal regex patterns, which a request builds only when it uses them.
fn compile_program(text: &str, path: &str, diags: &mut Diagnostics) -> Option<Program> {
    let compiled = kube_cel::compile(text).and_then(|p| {
        if !diags.is_quiet() {
            p.check_patterns()?;
        }
        Ok(p)
    });
    match compiled {
        Ok(p) => Some(p),
        Err(e) => {
            diags.push(path, format!("`{text}` does not compile: {}", e.one_line()));
            None
        }
    }
}

impl<'a> CompiledCel<'a> {
    /// Compiles `validate.cel` found at `path`; problems go to `diags`.
    pub fn compile(cel: &'a Cel, path: &str, diags: &mut Diagnostics) -> Option<Self> {
        let before = diags.errors().len();
        let audit_annotations = cel
            .audit_annotations
            .iter()
            .enumerate()
            .filter_map(|(i, a)| {
                let p = diags.key_path(
                    &diags.index_path(&diags.key_path(path, "auditAnnotations"), i),
                    "valueExpression",
                );
                let program = compile_program(&a.value_expression, &p, diags)?;
                Some((a.key.as_str(), program))
            })
            .collect();
        let variables = cel
            .variables
            .iter()
            .enumerate()
            .filter_map(|(i, v)| {
                let p = diags.key_path(
                    &diags.index_path(&diags.key_path(path, "variables"), i),
                    "expression",
                );
                Some((v.name.clone(), compile_program(&v.expression, &p, diags)?))
            })
            .collect();
        let mut expressions = Vec::new();
        for (i, e) in cel.expressions.iter().enumerate() {
            let p = diags.index_path(&diags.key_path(path, "expressions"), i);
            // Kyverno's CRD takes any `reason`; the ones Kubernetes names
            // answer with their status, any other with the default.
            let code = e.reason.as_ref().and_then(|reason| {
                REASONS
                    .iter()
                    .find(|(name, _)| name == reason)
                    .map(|(_, code)| *code)
            });
            let program = compile_program(&e.expression, &diags.key_path(&p, "expression"), diags);
            let message_expression = e
                .message_expression
                .as_ref()
                .and_then(|m| compile_program(m, &diags.key_path(&p, "messageExpression"), diags));
            if let Some(program) = program {
                expressions.push(Expression {
                    text: &e.expression,
                    code,
                    program,
                    message: e.message.as_deref(),
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
        let reads_namespace = cel
            .variables
            .iter()
            .map(|v| v.expression.as_str())
            .chain(cel.expressions.iter().flat_map(|e| {
                std::iter::once(e.expression.as_str()).chain(e.message_expression.as_deref())
            }))
            .chain(
                cel.audit_annotations
                    .iter()
                    .map(|a| a.value_expression.as_str()),
            )
            .any(|text| crate::scan::contains(text, &crate::scan::NAMESPACE_OBJECT));
        (diags.errors().len() == before).then_some(Self {
            variables,
            expressions,
            reads_namespace,
            params: cel.params.clone(),
            audit_annotations,
        })
    }

    /// Expressions without a `message` take the rule's `validate.message`,
    /// as Kyverno fills them in before compiling.
    pub fn with_default_message(mut self, message: Option<&'a str>) -> Self {
        if let Some(message) = message.filter(|m| !m.is_empty()) {
            for e in &mut self.expressions {
                if e.message.is_none_or(str::is_empty) {
                    e.message = Some(message);
                }
            }
        }
        self
    }

    /// Whether an expression reads `namespaceObject` (worth a cluster lookup).
    pub fn reads_namespace(&self) -> bool {
        self.reads_namespace
    }

    /// The parameter resources the rule runs with (`None`: it takes none
    /// and runs once; empty: it runs never, and passes).
    pub fn fetch_params(
        &self,
        request_namespace: &str,
        cluster: &Cached<'_>,
    ) -> Result<Option<Vec<Value>>, String> {
        match &self.params {
            Some(params) => fetch_params(params, request_namespace, cluster).map(Some),
            None => Ok(None),
        }
    }

    /// The rule's `variables`, which its `celPreconditions` read too.
    pub fn variables(&self) -> &[(String, Program)] {
        &self.variables
    }

    /// Evaluates every expression; the first that is not `true` fails the
    /// rule. An expression that errors fails it too: Kyverno runs CEL rules
    /// as a ValidatingAdmissionPolicy with `failurePolicy: Fail`, whose
    /// evaluation errors deny.
    pub fn evaluate(&self, inputs: &Inputs<'_>) -> (RuleStatus, String) {
        let outcome = self.evaluate_with_code(inputs);
        (outcome.status, outcome.message)
    }

    /// [`CompiledCel::evaluate`], with the HTTP status the failing
    /// expression's `reason` asks for.
    pub fn evaluate_with_code(&self, inputs: &Inputs<'_>) -> CelOutcome {
        let namespace = inputs.namespace_object();
        let mut activation = Activation::new();
        inputs.bind(&mut activation, &namespace);
        activation.bind_variables(&self.variables);
        let (status, message, code) = self.validations(&activation);
        // Audit annotations are recorded whatever the validations decided,
        // as a ValidatingAdmissionPolicy records them. Kyverno reads only the
        // decisions, so an annotation that errors changes no verdict.
        let mut audit_annotations = Vec::new();
        for (key, program) in &self.audit_annotations {
            if let Ok(value) = program.evaluate(&activation, &mut Budget::default()) {
                if let Some(v) = value.as_str().filter(|v| !v.is_empty()) {
                    audit_annotations.push((key.to_string(), v.to_string()));
                }
            }
        }
        CelOutcome {
            status,
            message,
            code,
            audit_annotations,
        }
    }

    /// The expressions, in order: the first that is not `true` decides.
    fn validations<'s>(&'s self, activation: &Activation<'s>) -> (RuleStatus, String, Option<u16>) {
        for e in &self.expressions {
            match e.program.evaluate(activation, &mut Budget::default()) {
                Ok(value) => match value.as_bool() {
                    Some(true) => {}
                    Some(false) => {
                        // Kubernetes' validator: a messageExpression result
                        // is used trimmed, unless it is blank, spans lines or
                        // is longer than 5 KiB; then the message, trimmed,
                        // then the expression.
                        let from_expression = e.message_expression.as_ref().and_then(|m| {
                            m.evaluate(activation, &mut Budget::default())
                                .ok()
                                .and_then(|v| v.as_str().map(str::to_string))
                                .filter(|s| {
                                    !s.trim().is_empty()
                                        && !s.contains('\n')
                                        && s.len() <= MAX_MESSAGE_BYTES
                                })
                        });
                        let message = from_expression
                            .map(|m| m.trim().to_string())
                            .or_else(|| {
                                e.message
                                    .map(str::trim)
                                    .filter(|m| !m.is_empty())
                                    .map(str::to_string)
                            })
                            .unwrap_or_else(|| format!("failed expression: {}", e.text.trim()));
                        return (RuleStatus::Fail, message, e.code);
                    }
                    None => {
                        let error = format!("expected a bool, got {} `{value}`", value.type_name());
                        return (RuleStatus::Fail, resulted_in_error(e.text, error), None);
                    }
                },
                Err(err) => return (RuleStatus::Fail, resulted_in_error(e.text, err), None),
            }
        }
        (RuleStatus::Pass, String::new(), None)
    }
}

/// What a CEL rule's evaluation gives: its status and message, the HTTP
/// status its failing expression's `reason` asks for, and the audit
/// annotations it produced.
#[derive(Debug, Clone, PartialEq)]
pub struct CelOutcome {
    pub status: RuleStatus,
    pub message: String,
    pub code: Option<u16>,
    pub audit_annotations: Vec<(String, String)>,
}

/// What CEL expressions read.
#[derive(Clone, Copy)]
pub struct Inputs<'a> {
    pub object: &'a Value,
    pub old_object: &'a Value,
    pub request: &'a Value,
    /// The request's namespace (`""` for cluster-scoped resources).
    pub namespace: &'a str,
    /// The Namespace object, when the cluster gave it.
    pub namespace_object: Option<&'a Value>,
    /// The parameter resource of this evaluation (`params`).
    pub params: Option<&'a Value>,
}

impl<'i> Inputs<'i> {
    /// The Namespace as the cluster has it; without cluster access only its
    /// name is known (reading its labels is then an error).
    fn namespace_object(&self) -> std::borrow::Cow<'i, Value> {
        match self.namespace_object {
            _ if self.namespace.is_empty() => std::borrow::Cow::Owned(Value::Null),
            Some(object) => std::borrow::Cow::Borrowed(object),
            None => std::borrow::Cow::Owned(
                serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": self.namespace}}),
            ),
        }
    }

    fn bind<'a>(&self, activation: &mut Activation<'a>, namespace: &'a Value)
    where
        'i: 'a,
    {
        activation.bind_json("object", self.object);
        activation.bind_json("oldObject", self.old_object);
        activation.bind_json("request", self.request);
        activation.bind_json("namespaceObject", namespace);
        activation.bind_json("params", self.params.unwrap_or(&Value::Null));
    }
}

/// The parameter resources `params` names, read as Kyverno reads them:
/// by name or by label selector, in `namespace` (else the request's) for
/// namespaced kinds; none found is an error with `parameterNotFoundAction:
/// Deny`.
fn fetch_params(
    params: &Params,
    request_namespace: &str,
    cluster: &Cached<'_>,
) -> Result<Vec<Value>, String> {
    let group = params
        .api_version
        .rsplit_once('/')
        .map_or("", |(group, _)| group);
    // A kind this module does not know takes its scope from its
    // CustomResourceDefinition when the policy may read it (Kyverno asks
    // discovery), else it is namespaced when a namespace is given.
    let namespaced = resources::is_namespaced(group, &params.kind)
        .or_else(|| definition_scope(group, &params.kind, cluster))
        .unwrap_or(params.namespace.is_some());
    if !namespaced && params.namespace.is_some() {
        return Err(
            "paramRef.namespace must not be provided for a cluster-scoped `paramKind`".into(),
        );
    }
    let namespace = if namespaced {
        match params.namespace.as_deref() {
            Some(ns) => Some(ns.to_string()),
            None if !request_namespace.is_empty() => Some(request_namespace.to_string()),
            None => {
                return Err(
                    "can't use namespaced paramRef to match cluster-scoped resources".into(),
                )
            }
        }
    } else {
        None
    };
    let found = match &params.name {
        Some(name) => vec![Rc::unwrap_or_clone(cluster.fetch(&Lookup::Get {
            api_version: params.api_version.clone(),
            kind: params.kind.clone(),
            namespace,
            name: name.clone(),
        })?)],
        // A missing named parameter is an error whatever
        // `parameterNotFoundAction` says, as in Kyverno.
        None => {
            let list = cluster.fetch(&Lookup::List {
                api_version: params.api_version.clone(),
                kind: params.kind.clone(),
                namespace,
                label_selector: params.selector.as_ref().map(selector_text),
                field_selector: None,
            })?;
            list.get("items")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default()
        }
    };
    if found.is_empty() && params.deny_when_missing {
        return Err("no params found".into());
    }
    Ok(found)
}

/// Whether the custom `kind` of `group` is namespaced, from its
/// CustomResourceDefinition (named by Kubernetes' guess of its plural).
fn definition_scope(group: &str, kind: &str, cluster: &Cached<'_>) -> Option<bool> {
    let definition = cluster
        .fetch(&Lookup::Get {
            api_version: "apiextensions.k8s.io/v1".into(),
            kind: "CustomResourceDefinition".into(),
            namespace: None,
            name: format!("{}.{group}", resources::guess_plural(kind)),
        })
        .ok()?;
    if definition
        .pointer("/spec/names/kind")
        .and_then(Value::as_str)
        != Some(kind)
    {
        return None;
    }
    match definition.pointer("/spec/scope").and_then(Value::as_str)? {
        "Namespaced" => Some(true),
        "Cluster" => Some(false),
        _ => None,
    }
}

/// Kubernetes' words for an expression that could not be evaluated.
fn resulted_in_error(text: &str, error: impl std::fmt::Display) -> String {
    format!("expression '{text}' resulted in error: {error}")
}

/// Kubernetes' match-condition matcher (`matchconditions.Matcher`), which
/// decides webhook `matchConditions` and, in Kyverno, `celPreconditions`:
/// `Ok(false)` when a condition is false (whatever errors there are),
/// `Ok(true)` when none is (a value that is not a boolean counts as
/// true), `Err` with the errors, each once, when one cannot be evaluated
/// and none is false.
pub(crate) fn conditions_hold<'a>(
    conditions: impl IntoIterator<Item = (&'a str, &'a Program)>,
    activation: &Activation<'a>,
) -> Result<bool, String> {
    let mut errors: Vec<String> = Vec::new();
    for (text, program) in conditions {
        match program.evaluate(activation, &mut Budget::default()) {
            Ok(value) if value.as_bool() == Some(false) => return Ok(false),
            Ok(_) => {}
            Err(e) => {
                let error = resulted_in_error(text, e);
                if !errors.contains(&error) {
                    errors.push(error);
                }
            }
        }
    }
    // Kubernetes' aggregate error: one message alone, several in brackets.
    match errors.as_slice() {
        [] => Ok(true),
        [one] => Err(one.clone()),
        many => Err(format!("[{}]", many.join(", "))),
    }
}

/// Compiled `celPreconditions`: all must hold for the rule to apply.
pub struct Preconditions {
    /// Each condition's name and expression text, and its program.
    conditions: Vec<(String, String, Program)>,
    reads_namespace: bool,
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

/// Compiles each of `list` (its `expression` at `path[i].expression`);
/// `None` when one does not compile (the problems are in `diags`).
pub(crate) fn compile_named<'a>(
    list: &'a [NamedExpression],
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Vec<(&'a NamedExpression, Program)>> {
    let before = diags.errors().len();
    let compiled = list
        .iter()
        .enumerate()
        .filter_map(|(i, c)| {
            let p = diags.key_path(&diags.index_path(path, i), "expression");
            Some((c, compile_program(&c.expression, &p, diags)?))
        })
        .collect();
    (diags.errors().len() == before).then_some(compiled)
}

impl Preconditions {
    pub fn compile(list: &[NamedExpression], path: &str, diags: &mut Diagnostics) -> Option<Self> {
        let conditions = compile_named(list, path, diags)?
            .into_iter()
            .map(|(c, program)| (c.name.clone(), c.expression.clone(), program))
            .collect();
        let reads_namespace = list
            .iter()
            .any(|c| crate::scan::contains(&c.expression, &crate::scan::NAMESPACE_OBJECT));
        Some(Self {
            conditions,
            reads_namespace,
        })
    }

    /// Whether a condition reads `namespaceObject`.
    pub fn reads_namespace(&self) -> bool {
        self.reads_namespace
    }

    /// Whether the conditions hold, decided by `conditions_hold`: Kyverno
    /// runs them through Kubernetes' match-condition matcher. `variables`
    /// are the rule's `validate.cel.variables`: Kyverno compiles the
    /// conditions after them, in the same composited environment, so
    /// conditions may read them.
    pub fn evaluate(
        &self,
        inputs: &Inputs<'_>,
        variables: &[(String, Program)],
    ) -> Result<bool, String> {
        let namespace = inputs.namespace_object();
        let mut activation = Activation::new();
        inputs.bind(&mut activation, &namespace);
        activation.bind_variables(variables);
        conditions_hold(
            self.conditions
                .iter()
                .map(|(_, text, program)| (text.as_str(), program)),
            &activation,
        )
    }
}

#[cfg(test)]
mod tests;
