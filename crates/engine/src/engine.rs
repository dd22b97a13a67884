//! Evaluates a parsed policy against one admission request: selects the
//! rules (with autogen copies for pod controllers), compiles each selected
//! rule's body, runs it, and reports one outcome per rule that applied.

use serde_json::Value;

use crate::autogen;
use crate::cel;
use crate::cluster::{Cached, Cluster};
use crate::context::Context;
use crate::context_entries::{compile_context, load_context};
use crate::diagnostics::Diagnostics;
use crate::exceptions::{Exempted, Exemptions};
use crate::foreach;
use crate::json::Json;
use crate::match_conditions::{Decision, MatchConditions, MATCH_CONDITIONS};
use crate::matching::{
    rule_applies, selector_matches, selects_by_namespace_labels, selects_by_roles, Target,
};
use crate::pattern::{Bindings, SkipMessages};
use crate::pattern_body::{PatternBody, Resolved};
use crate::policy;
use crate::request::{AdmissionRequest, CelRequest};
use crate::results::{
    any_pattern_result, deny_result, pass_message, pattern_result, pod_security_result,
    preconditions_result,
};
use crate::roles::{self, Roles};
use crate::rule::{Body, CompiledRule};
use crate::settings::{
    self, ApplyRules, FailureAction, FailureActionOverride, PodSecurityExclude, PolicySpec, Rule,
    ValidationBody,
};
use crate::verdict::{RuleOutcome, RuleStatus};
use crate::wildcard;

/// What a policy's rules said about one request.
#[derive(Debug, Clone, PartialEq)]
pub struct Evaluation {
    pub outcomes: Vec<RuleOutcome>,
    /// Audit annotations CEL rules produced (`auditAnnotations`), by key;
    /// the first rule to give a key wins.
    pub audit_annotations: Vec<(String, String)>,
    /// The Kyverno policy's name, when the settings give it.
    pub policy_name: Option<String>,
    /// The API server's refusal when a webhook match condition could not
    /// be evaluated under `failurePolicy: Fail` (a 403, before any rule).
    pub refusal: Option<String>,
}

/// What becomes of a request's working data (the parsed policy, the
/// context holding the request, autogen's rules) once its outcomes are
/// known.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Teardown {
    /// Free it: the caller lives on (the CLI, tests, a reused instance).
    Free,
    /// Leave it allocated: the caller's memory is thrown away with the
    /// instance right after this request (policy-server's fresh instance
    /// per request), so freeing every node of the trees is wasted work.
    Leave,
}

impl Teardown {
    pub fn release<T>(self, value: T) {
        match self {
            Teardown::Free => drop(value),
            Teardown::Leave => std::mem::forget(value),
        }
    }
}

/// How exact the rules' statuses must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Statuses {
    /// Exact where they decide the response: a rule that passes reports
    /// `pass` even when a policy exception would have skipped it, since
    /// looking exceptions up (a cluster list) changes nothing then.
    Verdict,
    /// Every status as Kyverno reports it (the CLI's `test`).
    Exact,
}

/// How a request is evaluated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Whether the settings may name `request.roles` or
    /// `request.clusterRoles` (reading them into [`crate::json::Scanned`]
    /// answers it).
    pub mentions_roles: bool,
    pub teardown: Teardown,
    pub statuses: Statuses,
    /// Whether the request came through an admission webhook (the module),
    /// where a policy with `admission: false` is not run, as Kyverno's
    /// webhooks never see it; Kyverno's CLI runs it (`kyverno test`).
    pub webhook: bool,
}

/// The whole pipeline for one request, as the module and the CLI run it:
/// parse the settings (a Kyverno policy's `spec` or manifest), select and
/// evaluate the rules. Invalid settings come back as their problems, with
/// paths.
pub fn evaluate_settings(
    settings: &Json<'_>,
    request: Value,
    cluster: &dyn Cluster,
    options: Options,
) -> Result<Evaluation, Diagnostics> {
    // Settings are parsed without their paths; only invalid settings are
    // parsed again, with paths, to say where the problems are.
    let mut diags = Diagnostics::quiet();
    let spec = match settings::parse(settings, &mut diags) {
        Some(spec) if diags.is_empty() => spec,
        _ => {
            let mut diags = Diagnostics::default();
            settings::parse(settings, &mut diags);
            return Err(diags);
        }
    };
    // Kyverno's webhooks never see a policy with `admission: false`, nor a
    // request its webhook's match conditions leave out.
    let decision = if options.webhook {
        webhook_decision(&spec, &request)?
    } else {
        Decision::Call
    };
    let (outcomes, audit_annotations) = if decision == Decision::Call {
        let raw_rules = settings::spec_of(settings)
            .get("rules")
            .and_then(Json::as_array)
            .unwrap_or_default();
        let cached = Cached::new(cluster);
        crate::global_context::seed(&cached, &spec.global_context_entries);
        evaluate(&spec, raw_rules, request, &cached, options)
    } else {
        (Vec::new(), Vec::new())
    };
    let policy_name = spec.policy_name.clone();
    options.teardown.release(spec);
    Ok(Evaluation {
        outcomes,
        audit_annotations,
        policy_name,
        refusal: match decision {
            Decision::Refuse(message) => Some(message),
            _ => None,
        },
    })
}

/// What reaches the policy through an admission webhook: nothing with
/// `admission: false`, else what its webhook match conditions decide. Match
/// conditions compile without paths; only ones that do not compile are
/// compiled again, with paths, to say where the problems are.
fn webhook_decision(spec: &PolicySpec<'_>, request: &Value) -> Result<Decision, Diagnostics> {
    if !spec.admission {
        return Ok(Decision::Skip);
    }
    if spec.match_conditions.is_empty() {
        return Ok(Decision::Call);
    }
    let mut diags = Diagnostics::quiet();
    match MatchConditions::compile(&spec.match_conditions, MATCH_CONDITIONS, &mut diags) {
        Some(conditions) => Ok(conditions.decide(request, spec.errors_block)),
        None => {
            let mut diags = Diagnostics::default();
            MatchConditions::compile(&spec.match_conditions, MATCH_CONDITIONS, &mut diags);
            Err(diags)
        }
    }
}

/// Evaluates every rule that applies to the request, in Kyverno's order:
/// the policy's rules, then the rules autogen derives for the request's
/// pod-controller kind. `raw_rules` is the settings' `rules` JSON, which
/// decides whether autogen applies to the policy; its rules are derived
/// from the parsed Pod rules. The request is moved into the rules'
/// context once every rule has been matched against it. Returns the
/// rules' outcomes and the audit annotations they produced.
pub fn evaluate(
    spec: &PolicySpec,
    raw_rules: &[Json<'_>],
    request: Value,
    cluster: &Cached<'_>,
    options: Options,
) -> (Vec<RuleOutcome>, Vec<(String, String)>) {
    let Options {
        mentions_roles,
        teardown,
        statuses,
        webhook: _,
    } = options;
    // Each request has the whole allowance of queries and pattern checks.
    crate::jmespath::work::reset();
    // Autogen's rules, derived from the parsed Pod rules, with the index of
    // the rule each comes from.
    let generated: Vec<(usize, Rule)>;
    let mut missing = MissingData::default();
    let mut roles: Option<Roles> = None;
    let mut exemptions: Option<Exemptions>;
    let selected: Vec<(usize, FailureAction)> = {
        let view = AdmissionRequest::new(&request);
        let mut target = Target::new(&view);
        let kind = &target.gvk.kind;
        generated = if autogen::applies(raw_rules, spec.autogen_controllers.as_deref(), kind) {
            // Sized once: a rule is large, and doubling from four copies
            // each and touches fresh pages.
            let mut rules = Vec::with_capacity(spec.rules.len());
            rules.extend(
                spec.rules
                    .iter()
                    .enumerate()
                    .filter_map(|(i, rule)| Some((i, autogen::derive(rule, kind)?))),
            );
            rules
        } else {
            Vec::new()
        };
        let all = || spec.rules.iter().chain(generated.iter().map(|(_, r)| r));
        let no_labels = serde_json::Map::new();
        let overrides_select = spec
            .failure_action_overrides
            .iter()
            .chain(all().flat_map(|r| &r.validate.failure_action_overrides))
            .any(|o| o.namespace_selector.is_some());
        if (overrides_select || all().any(needs_labels)) && target.has_namespace_labels() {
            match cluster.namespace_labels(target.namespace) {
                Ok(labels) => target.namespace_labels = Some(labels),
                Err(e) => missing.labels = Some(e),
            }
        }
        let raw = |i: usize| raw_rule(raw_rules, &generated, i);
        if all().enumerate().any(|(i, rule)| {
            needs_roles(rule) || (mentions_roles && raw(i).is_some_and(reads_roles))
        }) {
            match roles::resolve(&target.requester(), cluster) {
                Ok(found) => {
                    target.roles = Some(found.clone());
                    roles = Some(found);
                }
                Err(e) => missing.roles = Some(e),
            }
        }
        // A namespaced Policy applies only to objects in its namespace
        // (Kyverno's `MatchesResourceDescription`); Namespaces have none.
        let in_scope = spec
            .policy_namespace
            .as_deref()
            .is_none_or(|namespace| namespace == target.namespace);
        let selected: Vec<(usize, FailureAction)> = all()
            .enumerate()
            .filter(|(i, rule)| {
                // Without the data, a rule that selects by it cannot be
                // matched: it errors below rather than silently not apply.
                in_scope
                    && (missing.error(rule, raw(*i)).is_some()
                        || rule_applies(&rule.match_resources, rule.exclude.as_ref(), &target))
            })
            .map(|(i, rule)| {
                // Namespaces and cluster-scoped objects have no namespace labels.
                let labels = if target.has_namespace_labels() {
                    target.namespace_labels.as_ref()
                } else {
                    Some(&no_labels)
                };
                (i, failure_action(spec, rule, target.namespace, labels))
            })
            .collect();
        exemptions = spec
            .exception_key()
            .map(|key| Exemptions::new(key, &spec.exceptions, target.roles.take()));
        selected
    };
    if selected.is_empty() {
        // Most requests select no rule: no context to build.
        teardown.release(request);
        teardown.release(generated);
        return (Vec::new(), Vec::new());
    }
    let rules: Vec<&Rule> = spec
        .rules
        .iter()
        .chain(generated.iter().map(|(_, r)| r))
        .collect();
    let mut ctx = Context::new(request);
    if let Some(namespace) = &spec.policy_namespace {
        ctx.set_policy_namespace(namespace);
    }
    if statuses == Statuses::Verdict {
        ctx.set_skip_messages(SkipMessages::Unread);
    }
    if let Some(roles) = &roles {
        ctx.add_roles(roles);
    }
    let mut outcomes = Vec::with_capacity(selected.len());
    let mut annotations = Vec::new();
    let delete = AdmissionRequest::new(ctx.request()).operation() == "DELETE";
    // Exceptions only turn a failure or an error into a skip; unless every
    // status must be exact, a passing rule does not look them up.
    let exact = statuses == Statuses::Exact || spec.apply_rules == ApplyRules::One;
    for (index, action) in selected {
        let Some(rule) = rules.get(index) else {
            continue;
        };
        let raw = raw_rule(raw_rules, &generated, index);
        let mut reported = Reported::default();
        let annotated = annotations.len();
        let result = match missing.error(rule, raw) {
            Some(e) => Some((RuleStatus::Error, e)),
            None => run_rule(
                rule,
                &mut ctx,
                cluster,
                action == FailureAction::Enforce,
                &mut reported,
                &mut annotations,
                &[],
            ),
        };
        let Some((mut status, mut message)) = result else {
            continue;
        };
        let consult = reported.exemptible
            && (exact || status != RuleStatus::Pass || annotations.len() > annotated);
        if let Some(exempted) = exemptions
            .as_mut()
            .filter(|_| consult)
            .and_then(|e| exemptions_for(e, rule, &mut ctx, cluster, delete))
        {
            let pod_security = matches!(rule.validate.body, ValidationBody::PodSecurity(_));
            match exempted.controls {
                // Exempted controls relax a failing podSecurity rule: it
                // fails only on the controls left, and is skipped otherwise.
                Some(controls) if pod_security => {
                    if status == RuleStatus::Fail {
                        let relaxed = run_rule(
                            rule,
                            &mut ctx,
                            cluster,
                            action == FailureAction::Enforce,
                            &mut reported,
                            &mut annotations,
                            &controls,
                        );
                        (status, message) = match relaxed {
                            Some((RuleStatus::Pass, _)) | None => {
                                (RuleStatus::Skip, exempted.message)
                            }
                            Some(other) => other,
                        };
                    }
                }
                _ => {
                    status = RuleStatus::Skip;
                    message = exempted.message;
                    reported.code = None;
                    annotations.truncate(annotated);
                }
            }
        }
        outcomes.push(RuleOutcome {
            rule: rule.name.to_string(),
            status,
            message,
            action,
            code: reported.code,
        });
        if spec.apply_rules == ApplyRules::One
            && matches!(status, RuleStatus::Pass | RuleStatus::Fail)
        {
            break;
        }
    }
    if !spec.errors_block {
        // `failurePolicy: Ignore`: Kyverno lets the request through when a
        // rule errors; the error still shows, as a warning.
        for outcome in outcomes.iter_mut() {
            if outcome.status == RuleStatus::Error {
                outcome.action = FailureAction::Audit;
            }
        }
    }
    teardown.release(ctx);
    teardown.release(rules);
    teardown.release(generated);
    (outcomes, annotations)
}

/// What the exceptions do to `rule`, judged as Kyverno judges them: in the
/// rule's context, so their conditions can read its context entries.
fn exemptions_for(
    exemptions: &mut Exemptions,
    rule: &Rule,
    ctx: &mut Context,
    cluster: &Cached<'_>,
    delete: bool,
) -> Option<Exempted> {
    if rule.context.is_empty() {
        return exemptions.for_rule(&rule.name, ctx, cluster, delete);
    }
    // Loaded again: the rule's run has taken its entries back. The cluster
    // answers from its cache.
    let mut diags = Diagnostics::quiet();
    let entries = compile_context(&rule.context, "", true, delete, &mut diags);
    let mark = load_context(&entries, ctx, cluster);
    let exempted = exemptions.for_rule(&rule.name, ctx, cluster, delete);
    ctx.restore(mark);
    exempted
}

/// The JSON of rule `index` in the order rules are evaluated: the
/// settings' rules, then autogen's.
fn raw_rule<'v, 'a>(
    raw_rules: &'v [Json<'a>],
    generated: &[(usize, Rule<'_>)],
    index: usize,
) -> Option<&'v Json<'a>> {
    // An autogen rule reads what its Pod rule reads (the rewrite changes
    // only `object` paths).
    let index = match index.checked_sub(raw_rules.len()) {
        Some(g) => generated.get(g)?.0,
        None => index,
    };
    raw_rules.get(index)
}

fn needs_labels(rule: &Rule) -> bool {
    selects_by_namespace_labels(&rule.match_resources, rule.exclude.as_ref())
}

fn needs_roles(rule: &Rule) -> bool {
    selects_by_roles(&rule.match_resources, rule.exclude.as_ref())
}

/// Whether a rule's text reads `request.roles` or `request.clusterRoles`,
/// which Kyverno adds to the context from the cluster's bindings.
fn reads_roles(rule: &Json<'_>) -> bool {
    match rule {
        Json::String(s) => s.contains("request.roles") || s.contains("request.clusterRoles"),
        Json::Array(items) => items.iter().any(reads_roles),
        Json::Object(map) => map
            .iter()
            .any(|(k, v)| k != "match" && k != "exclude" && reads_roles(v)),
        _ => false,
    }
}

/// Cluster data that rules select by and that could not be read.
#[derive(Default)]
struct MissingData {
    labels: Option<String>,
    roles: Option<String>,
}

impl MissingData {
    /// Why `rule` cannot be evaluated, when it needs what is missing.
    fn error(&self, rule: &Rule, raw: Option<&Json<'_>>) -> Option<String> {
        if let Some(e) = self.labels.as_ref().filter(|_| needs_labels(rule)) {
            return Some(format!(
                "rule {} selects by namespace labels, which could not be read: {e} (the policy needs `v1` `Namespace` in its contextAwareResources)",
                rule.name
            ));
        }
        let e = self.roles.as_ref()?;
        if needs_roles(rule) || raw.is_some_and(reads_roles) {
            return Some(format!(
                "rule {} needs the requester's roles, which could not be read: {e} (the policy needs `rbac.authorization.k8s.io/v1` `RoleBinding` and `ClusterRoleBinding` in its contextAwareResources)",
                rule.name
            ));
        }
        None
    }
}

type Result2 = Option<(RuleStatus, String)>;

/// What a rule's run reports besides its status and message.
#[derive(Debug, Default)]
struct Reported {
    /// The HTTP status a failing CEL expression's `reason` asks for.
    code: Option<u16>,
    /// Whether the run got as far as Kyverno's policy-exception check: past
    /// the rule's context and preconditions (a CEL rule's exceptions come
    /// before its own preconditions). A rule stopped earlier errors or
    /// skips whatever exceptions there are.
    exemptible: bool,
}

const EXISTING_VIOLATION: &str =
    "skipping the rule evaluation as pre-existing violations are allowed";

/// What CEL expressions read: the objects from the request in the
/// context, and `request` as Kyverno builds it ([`CelRequest`]).
fn cel_inputs<'a>(
    request: &'a Value,
    cel_request: &'a CelRequest,
    namespace_object: Option<&'a Value>,
) -> cel::Inputs<'a> {
    let view = AdmissionRequest::new(request);
    cel::Inputs {
        object: view.object(),
        old_object: view.old_object(),
        request: &cel_request.request,
        namespace: &cel_request.namespace,
        namespace_object,
        params: None,
    }
}

/// Compiles and runs one selected rule; `None` when Kyverno produces no
/// result for it (pattern rules on DELETE, foreach over nothing).
/// `exempted`: pod security controls that policy exceptions exempt.
fn run_rule(
    rule: &Rule,
    ctx: &mut Context,
    cluster: &Cached<'_>,
    enforce: bool,
    reported: &mut Reported,
    annotations: &mut Vec<(String, String)>,
    exempted: &[PodSecurityExclude],
) -> Result2 {
    // From the context, which read them once for every rule.
    let delete = ctx.is_delete();
    let update = ctx.is_update();
    // Compiled without settings paths; a rule with a problem is compiled
    // again, with them, to say where it is.
    let mut diags = Diagnostics::quiet();
    let compiled = match policy::compile_rule(rule, delete, &mut diags) {
        Some(mut compiled) if diags.is_empty() => {
            if let Some(Body::PodSecurity(check)) = compiled.body_mut() {
                if !exempted.is_empty() {
                    *check = check.with_exemptions(exempted);
                }
            }
            compiled
        }
        _ => return Some(cannot_be_evaluated(rule, delete)),
    };
    // The CEL and manifest bodies below never wait for preconditions; a
    // body that waits is not compiled to find that out.
    let body = || compiled.compiled_body();
    // CEL preconditions and CEL bodies: the other rules need none of this.
    if compiled.cel_preconditions.is_some() || matches!(body(), Some(Body::Cel(_))) {
        reported.exemptible = true;
        // The real Namespace for CEL's `namespaceObject`, when an expression
        // reads it and the cluster can tell.
        let reads_namespace = compiled
            .cel_preconditions
            .as_ref()
            .is_some_and(|p| p.reads_namespace())
            || matches!(body(), Some(Body::Cel(c)) if c.reads_namespace());
        let namespace = ctx.cel_request().namespace.clone();
        let namespace_object = (reads_namespace && !namespace.is_empty())
            .then(|| cluster.namespace(&namespace).ok())
            .flatten();
        // Parameter resources: the preconditions and the expressions run once
        // per parameter, and the first run that does not pass decides.
        let params = match body() {
            Some(Body::Cel(c)) => match c.fetch_params(&namespace, cluster) {
                Ok(params) => params,
                Err(e) => {
                    return Some((
                        RuleStatus::Error,
                        format!("error in parameterized resource: {e}"),
                    ))
                }
            },
            _ => None,
        };
        let runs: Vec<Option<&Value>> = match &params {
            Some(list) => list.iter().map(Some).collect(),
            None => vec![None],
        };
        // The body's variables, which the preconditions read too.
        let variables = match body() {
            Some(Body::Cel(c)) => c.variables(),
            _ => &[],
        };
        for param in runs {
            let inputs = cel::Inputs {
                params: param,
                ..cel_inputs(
                    ctx.request(),
                    ctx.cel_request(),
                    namespace_object.as_deref(),
                )
            };
            if let Some(pre) = &compiled.cel_preconditions {
                match pre.evaluate(&inputs, variables) {
                    // Kyverno's match conditions: the rule does not apply.
                    Ok(false) if params.is_some() => {
                        return Some((RuleStatus::Skip, "cel preconditions not met".into()))
                    }
                    Ok(false) => return None,
                    Ok(true) => {}
                    // The matcher's error is a denial, which Kyverno reports
                    // as the rule failing with the error's text.
                    Err(e) => return Some((RuleStatus::Fail, e)),
                }
            }
            if let Some(Body::Cel(c)) = body() {
                let outcome = c.evaluate_with_code(&inputs);
                for annotation in outcome.audit_annotations {
                    if !annotations.iter().any(|(key, _)| *key == annotation.0) {
                        annotations.push(annotation);
                    }
                }
                if outcome.status != RuleStatus::Pass {
                    reported.code = outcome.code;
                    return Some((outcome.status, outcome.message));
                }
            }
        }
    }
    if matches!(body(), Some(Body::Cel(_))) {
        return Some((RuleStatus::Pass, pass_message(compiled.text.name)));
    }
    if let Some(Body::Manifests(m)) = body() {
        // Kyverno's manifest handler verifies the new object alone: no
        // context, preconditions or existing violations, and nothing on
        // DELETE.
        reported.exemptible = true;
        if delete {
            return None;
        }
        let dry_run = ctx.request().get("dryRun").and_then(Value::as_bool) == Some(true);
        return Some(m.evaluate(ctx.object(), dry_run));
    }
    if !compiled.needs_context() {
        reported.exemptible = true;
        if delete {
            // Kyverno validates patterns only against a new object.
            return None;
        }
        // Wildcard label keys the new object binds stay bound for the old.
        let bindings = Bindings::default();
        let skips = ctx.skip_messages();
        let new = run_static(&compiled, ctx.object(), &bindings, skips);
        let request = || AdmissionRequest::new(ctx.request());
        if enforce
            && update
            && rule.validate.allow_existing_violations
            && new.0 == RuleStatus::Fail
            && old_object_matches(rule, &request(), cluster)
        {
            // A violation the old object already had does not block the
            // update (Kyverno's allowExistingViolations default).
            let old = run_static(&compiled, request().old_object(), &bindings, skips);
            if old.0 == RuleStatus::Fail {
                return Some((RuleStatus::Skip, EXISTING_VIOLATION.into()));
            }
        }
        return Some(new);
    }
    if let Some(e) = ctx.images_error() {
        return Some((RuleStatus::Error, e.to_string()));
    }
    run_both_passes(
        &compiled,
        ctx,
        cluster,
        delete,
        enforce && update && rule.validate.allow_existing_violations,
        &mut reported.exemptible,
    )
}

/// The rule over the new object and, when the first pass fails and
/// `existing_may_excuse`, over the old object: a violation the old object
/// already had does not block the update.
fn run_both_passes(
    compiled: &CompiledRule<'_>,
    ctx: &mut Context,
    cluster: &Cached<'_>,
    delete: bool,
    existing_may_excuse: bool,
    exemptible: &mut bool,
) -> Result2 {
    let mut carried = Carried::default();
    let new = run_with_context(compiled, ctx, cluster, delete, &mut carried, exemptible)?;
    if existing_may_excuse
        && new.0 == RuleStatus::Fail
        && old_object_matches(
            compiled.source(),
            &AdmissionRequest::new(ctx.request()),
            cluster,
        )
    {
        let old_object = AdmissionRequest::new(ctx.request()).old_object().clone();
        let previous = ctx.swap_object(old_object);
        // Kyverno checks the old object as a CREATE of it, with an empty
        // old object (`SetResources(empty, old)` leaves an empty map, where
        // `request.oldObject.<field>` is an unknown key: an error, not null).
        let previous_old = ctx.swap_old_object(Value::Object(serde_json::Map::new()));
        let operation = ctx.swap_operation("CREATE");
        // Kyverno loads the rule's context again for this pass: an entry
        // computed from `request.object` now reads the old object.
        let old = run_with_context(compiled, ctx, cluster, false, &mut carried, exemptible);
        ctx.swap_operation(&operation);
        ctx.swap_old_object(previous_old);
        ctx.swap_object(previous);
        if old.is_some_and(|(status, _)| status == RuleStatus::Fail) {
            return Some((RuleStatus::Skip, EXISTING_VIOLATION.into()));
        }
    }
    Some(new)
}

/// Whether the rule applies to the old object of an UPDATE, matched as a
/// CREATE by no real requester, as Kyverno's `validateOldObject` checks
/// before it excuses a violation the old object already had.
fn old_object_matches(rule: &Rule, request: &AdmissionRequest<'_>, cluster: &Cached<'_>) -> bool {
    let mut target = Target::for_old_object(request);
    if selects_by_namespace_labels(&rule.match_resources, rule.exclude.as_ref())
        && target.has_namespace_labels()
    {
        target.namespace_labels = cluster.namespace_labels(target.namespace).ok();
    }
    rule_applies(&rule.match_resources, rule.exclude.as_ref(), &target)
}

/// A rule whose compiling found a problem: the error says where, from the
/// rule compiled again with settings paths.
fn cannot_be_evaluated(rule: &Rule<'_>, delete: bool) -> (RuleStatus, String) {
    let mut diags = Diagnostics::default();
    policy::compile_rule(rule, delete, &mut diags);
    (
        RuleStatus::Error,
        format!(
            "rule {} cannot be evaluated: {}",
            rule.name,
            diags.summary()
        ),
    )
}

/// A rule whose patterns have no variables and that needs no context.
fn run_static(
    rule: &CompiledRule,
    resource: &Value,
    bindings: &Bindings,
    skips: SkipMessages,
) -> (RuleStatus, String) {
    let message = || {
        rule.text
            .raw_message
            .filter(|m| !m.is_empty())
            .map(str::to_string)
    };
    match rule.body() {
        None => cannot_be_evaluated(rule.source(), false),
        Some(Body::Pattern(PatternBody::Static { pattern, template })) => pattern_result(
            rule.text.name,
            message,
            pattern.evaluate_bound(resource, template, bindings, skips),
        ),
        Some(Body::AnyPattern(ps)) => {
            let outcomes = ps.iter().filter_map(|p| p.evaluate_static(resource, skips));
            any_pattern_result(rule.text.name, message, outcomes)
        }
        Some(Body::PodSecurity(check)) => pod_security_result(rule.text.name, check, resource),
        _ => (
            RuleStatus::Error,
            format!("rule {} needs its variables substituted", rule.text.name),
        ),
    }
}

/// A rule's patterns as Kyverno leaves them between its passes over the
/// new and the old object: it substitutes their variables in place, so the
/// old object is checked against the new object's values, and binds their
/// wildcard label and annotation keys in place ([`Bindings`]).
#[derive(Default)]
struct Carried<'r, 'a> {
    /// The patterns as the first pass substituted them.
    substituted: Option<Vec<Resolved<'r, 'a>>>,
    bindings: Bindings,
}

/// Loads the rule's context, checks its preconditions and runs its body.
/// `carried`: what an earlier pass left in the rule's patterns.
/// `exemptible`: set once the preconditions pass (see
/// [`Reported::exemptible`]).
fn run_with_context<'r, 'a>(
    rule: &'r CompiledRule<'a>,
    ctx: &mut Context,
    cluster: &Cached<'_>,
    delete: bool,
    carried: &mut Carried<'r, 'a>,
    exemptible: &mut bool,
) -> Result2 {
    let mark = load_context(&rule.context, ctx, cluster);
    let result = run_loaded(rule, ctx, cluster, delete, carried, exemptible);
    ctx.restore(mark);
    result
}

/// [`run_with_context`] with the rule's context loaded.
fn run_loaded<'r, 'a>(
    rule: &'r CompiledRule<'a>,
    ctx: &mut Context,
    cluster: &Cached<'_>,
    delete: bool,
    carried: &mut Carried<'r, 'a>,
    exemptible: &mut bool,
) -> Result2 {
    if let Some((status, message)) = rule
        .preconditions
        .as_ref()
        .and_then(|pre| preconditions_result(pre, ctx))
    {
        return Some((status, message));
    }
    *exemptible = true;
    let message = |ctx: &Context| match rule.text.message(Some(ctx)) {
        Ok(m) => m,
        Err(e) => Some(format!("failed to substitute variables in message: {e}")),
    };
    // A body that waited for the preconditions compiles now.
    let Some(body) = rule.body() else {
        return Some(cannot_be_evaluated(rule.source(), delete));
    };
    let result = match body {
        Body::Deny(conditions) => match deny_result(&rule.text, conditions.as_ref(), ctx) {
            (RuleStatus::Pass, _) => (RuleStatus::Pass, pass_message(rule.text.name)),
            other => other,
        },
        Body::Pattern(p) => {
            // Kyverno substitutes a pattern's variables before it skips the
            // pattern on DELETE: a variable that does not resolve is still
            // the rule's error.
            let resolved = match substitute(std::slice::from_ref(p), ctx, &mut carried.substituted)
            {
                Ok(resolved) => resolved,
                Err(e) => return Some((RuleStatus::Error, e)),
            };
            if delete {
                return None;
            }
            let Some(resolved) = resolved.first() else {
                return Some((RuleStatus::Error, "no pattern".into()));
            };
            match resolved.pattern() {
                Err(e) => (RuleStatus::Error, e),
                Ok(pattern) => pattern_result(
                    rule.text.name,
                    || message(ctx),
                    pattern.evaluate_bound(ctx.object(), &carried.bindings, ctx.skip_messages()),
                ),
            }
        }
        Body::AnyPattern(ps) => {
            // Every pattern substituted and compiled before any runs: a
            // problem in any of them is the rule's error (on DELETE, only
            // the substitution, which Kyverno does before it skips).
            let resolved = match substitute(ps, ctx, &mut carried.substituted) {
                Ok(resolved) => resolved,
                Err(e) => return Some((RuleStatus::Error, e)),
            };
            if delete {
                return None;
            }
            let patterns = match resolved
                .iter()
                .map(Resolved::pattern)
                .collect::<Result<Vec<_>, _>>()
            {
                Ok(patterns) => patterns,
                Err(e) => return Some((RuleStatus::Error, e)),
            };
            // Kyverno copies an anyPattern through JSON before it checks
            // it, so no wildcard key a pass binds outlives that pass.
            let object = ctx.object();
            any_pattern_result(
                rule.text.name,
                || message(ctx),
                patterns
                    .iter()
                    .map(|p| p.evaluate(object, ctx.skip_messages())),
            )
        }
        Body::Foreach(list) => match foreach::evaluate(&rule.text, list, ctx, cluster, 0) {
            Ok(result) => result?,
            Err(foreach::Uncompiled) => cannot_be_evaluated(rule.source(), delete),
        },
        Body::PodSecurity(check) => {
            if delete {
                return None;
            }
            pod_security_result(rule.text.name, check, ctx.object())
        }
        // Run above, before the context is needed.
        Body::Cel(c) => c.evaluate(&cel_inputs(ctx.request(), ctx.cel_request(), None)),
        Body::Manifests(m) => m.evaluate(ctx.object(), false),
    };
    Some(result)
}

/// The rule's patterns with their variables substituted: those a first
/// pass kept in `substituted`, else substituted now and kept there.
fn substitute<'s, 'r, 'a>(
    patterns: &'r [PatternBody<'a>],
    ctx: &Context,
    substituted: &'s mut Option<Vec<Resolved<'r, 'a>>>,
) -> Result<&'s [Resolved<'r, 'a>], String> {
    if substituted.is_none() {
        let resolved = patterns
            .iter()
            .map(|p| p.resolve(ctx))
            .collect::<Result<Vec<_>, _>>()?;
        *substituted = Some(resolved);
    }
    Ok(substituted.as_deref().unwrap_or_default())
}

/// Kyverno's precedence: the rule's overrides, the rule's `failureAction`,
/// the policy's overrides, then `validationFailureAction`. An override
/// applies in the namespaces it names and, with a `namespaceSelector`, in
/// the namespaces whose labels it selects; when the labels could not be
/// read, only an override that enforces is taken (fail closed).
fn failure_action(
    spec: &PolicySpec,
    rule: &Rule,
    namespace: &str,
    labels: Option<&serde_json::Map<String, Value>>,
) -> FailureAction {
    let applies = |o: &&FailureActionOverride| {
        let named = o.namespaces.is_empty()
            || o.namespaces
                .iter()
                .any(|ns| wildcard::matches(ns, namespace));
        named
            && o.namespace_selector
                .as_ref()
                .is_none_or(|selector| match labels {
                    Some(labels) => selector_matches(selector, Some(labels)),
                    None => o.action == FailureAction::Enforce,
                })
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

/// The outcomes of `settings` on `request` with no cluster: how the
/// crate's tests run a whole policy.
#[cfg(test)]
pub(crate) fn outcomes_of(settings: &Value, request: Value) -> Vec<RuleOutcome> {
    match evaluate_settings(
        &Json::borrow(settings),
        request,
        &crate::cluster::NoCluster,
        Options {
            mentions_roles: false,
            teardown: Teardown::Free,
            statuses: Statuses::Exact,
            webhook: true,
        },
    ) {
        Ok(evaluation) => evaluation.outcomes,
        Err(diags) => panic!("invalid settings: {}", diags.summary()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An UPDATE of a Pod whose old and new objects both break the rule.
    /// `validate` may carry the rule's `context` too, moved to the rule.
    fn update_status(match_resources: Value, mut validate: Value) -> RuleStatus {
        let context = validate
            .as_object_mut()
            .and_then(|v| v.remove("context"))
            .unwrap_or(json!([]));
        let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
            "match": match_resources, "context": context, "validate": validate}]});
        let pod = |label: &str| {
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default", "labels": {"stage": label}},
                "spec": {"containers": [{"name": "c", "image": "nginx:latest"}]}})
        };
        let request = json!({"uid": "1", "operation": "UPDATE", "namespace": "default",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "userInfo": {"username": "alice"},
            "object": pod("new"), "oldObject": pod("old")});
        outcomes_of(&settings, request)
            .first()
            .map(|o| o.status)
            .unwrap_or(RuleStatus::Pass)
    }

    /// An Enforce rule over an UPDATE of a Pod from `old` labels to `new`.
    fn relabel_status(validate: Value, new: Value, old: Value) -> RuleStatus {
        let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "validate": validate}]});
        let pod = |labels: Value| {
            json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default", "labels": labels},
                "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
        };
        let request = json!({"uid": "1", "operation": "UPDATE", "namespace": "default",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "userInfo": {"username": "alice"}, "object": pod(new), "oldObject": pod(old)});
        outcomes_of(&settings, request)
            .first()
            .map(|o| o.status)
            .unwrap_or(RuleStatus::Pass)
    }

    #[test]
    fn wildcard_label_keys_the_new_object_binds_are_the_old_objects_keys() {
        // The new `team-a` label is empty; the old object has `team-b` only.
        // A pattern's key bound to `team-a` in the first pass is missing from
        // the old object, which so fails too: an existing violation.
        let labels = json!({"team-*": "?*"});
        let cases = [
            (
                "pattern_keeps_the_binding",
                json!({"pattern": {"metadata": {"labels": labels}}}),
                RuleStatus::Skip,
            ),
            (
                "pattern_with_variables_keeps_the_binding",
                json!({"pattern": {"metadata": {"labels": labels,
                    "name": "{{ request.object.metadata.name }}"}}}),
                RuleStatus::Skip,
            ),
            // Kyverno copies an anyPattern before each pass: the old object
            // binds `team-b`, passes, and the new violation stands.
            (
                "any_pattern_binds_afresh",
                json!({"anyPattern": [{"metadata": {"labels": labels}}]}),
                RuleStatus::Fail,
            ),
        ];
        for (name, validate, want) in cases {
            let got = relabel_status(validate, json!({"team-a": ""}), json!({"team-b": "x"}));
            assert_eq!(got, want, "{name}");
        }
    }

    /// Outcome of one rule on a CREATE of a Pod running `image`.
    fn pod_outcome(image: &str, validate: Value) -> (RuleStatus, String) {
        pod_rule_outcome(image, json!({"validate": validate}))
    }

    /// [`pod_outcome`] for a rule with more than `validate`: `fields` are
    /// the rule's besides its name and match.
    fn pod_rule_outcome(image: &str, fields: Value) -> (RuleStatus, String) {
        let mut rule = json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}});
        if let (Some(rule), Some(fields)) = (rule.as_object_mut(), fields.as_object()) {
            rule.extend(fields.clone());
        }
        let settings = json!({"validationFailureAction": "Enforce", "rules": [rule]});
        let request = json!({"uid": "1", "operation": "CREATE", "namespace": "default",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "userInfo": {"username": "alice"},
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default"},
                "spec": {"containers": [{"name": "c", "image": image}]}}});
        outcomes_of(&settings, request)
            .first()
            .map(|o| (o.status, o.message.clone()))
            .unwrap_or((RuleStatus::Pass, String::new()))
    }

    #[test]
    fn a_rule_that_does_not_compile_errors_with_the_problem() {
        let cases = [
            (
                // Compiled quietly first, then again with paths for the message.
                "problem_in_the_pattern_root",
                json!({"+(dnsPolicy)": "None"}),
                "rule r cannot be evaluated: validate.pattern.\"+(dnsPolicy)\": unsupported anchor `+(dnsPolicy)`: add-if-not-present anchors belong to mutate rules",
            ),
            (
                // Deeper values compile when a check reaches them.
                "problem_reached_deeper",
                json!({"spec": {"+(dnsPolicy)": "None"}}),
                "validation error: m. rule r execution error: the pattern is invalid: +(dnsPolicy): unsupported anchor `+(dnsPolicy)`: add-if-not-present anchors belong to mutate rules",
            ),
        ];
        for (name, pattern, want) in cases {
            let (status, message) =
                pod_outcome("nginx", json!({"message": "m", "pattern": pattern}));
            assert_eq!(status, RuleStatus::Error, "{name}: {message}");
            assert_eq!(message, want, "{name}");
        }
        // A problem no check reaches does not stop the rule (the settings
        // check reports it).
        let (status, _) = pod_outcome(
            "nginx",
            json!({"message": "m", "pattern": {"=(status)": {"+(x)": "y"}}}),
        );
        assert_eq!(status, RuleStatus::Pass);
    }

    #[test]
    fn a_body_waits_for_the_preconditions_and_its_problem_shows_when_they_pass() {
        // The body's problem: an operator Kyverno does not have.
        let deny = json!({"message": "m", "deny": {"conditions": {"all": [
            {"key": "a", "operator": "Equalz", "value": "a"}]}}});
        let outcome = |image: &str| {
            pod_rule_outcome(
                image,
                json!({"preconditions": {"all": [{"key": "{{ request.object.spec.containers[0].image }}",
                    "operator": "Equals", "value": "nginx"}]}, "validate": deny}),
            )
        };
        let cases = [
            (
                "preconditions_pass_the_body_compiles_and_errors",
                "nginx",
                RuleStatus::Error,
                "rule r cannot be evaluated: validate.deny.conditions.all[0].operator: unknown operator `Equalz`",
            ),
            // Not selected by its preconditions: the body is never compiled
            // (the settings check reports its problem).
            (
                "preconditions_fail_the_body_is_not_compiled",
                "redis",
                RuleStatus::Skip,
                "preconditions not met",
            ),
        ];
        for (name, image, status, message) in cases {
            let (got, text) = outcome(image);
            assert_eq!(got, status, "{name}: {text}");
            assert!(text.starts_with(message), "{name}: {text}");
        }
    }

    #[test]
    fn the_images_variable_is_there_for_rules_that_read_it_and_checked_for_all() {
        let deny_when = |key: &str, value: &str| {
            json!({"message": "m", "deny": {"conditions": {"all": [
                {"key": key, "operator": "Equals", "value": value}]}}})
        };
        let cases = [
            (
                "named_images_are_read",
                "nginx:1.2",
                deny_when("{{ images.containers.c.tag }}", "1.2"),
                RuleStatus::Fail,
                "",
            ),
            (
                "the_whole_context_holds_images",
                "nginx:1.2",
                deny_when("{{ length(keys(@)[?@ == 'images']) }}", "1"),
                RuleStatus::Fail,
                "",
            ),
            (
                "a_rule_without_images_still_passes",
                "nginx:1.2",
                deny_when("{{ request.operation }}", "DELETE"),
                RuleStatus::Pass,
                "",
            ),
            // An image Kyverno cannot parse fails every rule that reads the
            // context, whether it names `images` or not.
            (
                "a_bad_image_fails_rules_without_images",
                "NGINX::bad",
                deny_when("{{ request.operation }}", "DELETE"),
                RuleStatus::Error,
                "failed to add image information to the policy rule context",
            ),
            (
                "a_bad_image_fails_rules_with_images",
                "NGINX::bad",
                deny_when("{{ images.containers.c.tag }}", "x"),
                RuleStatus::Error,
                "failed to add image information to the policy rule context",
            ),
        ];
        for (name, image, validate, status, message) in cases {
            let (got, text) = pod_outcome(image, validate);
            assert_eq!(got, status, "{name}: {text}");
            assert!(text.contains(message), "{name}: {text}");
        }
    }

    #[test]
    fn existing_violations_are_excused_only_where_the_old_object_matches() {
        let latest = json!({"message": "no latest",
            "pattern": {"spec": {"containers": [{"image": "!*:latest"}]}}});
        let deny = json!({"message": "no", "deny": {}});
        let kinds = |extra: Value| {
            let mut resources = json!({"kinds": ["Pod"]});
            if let (Some(r), Some(e)) = (resources.as_object_mut(), extra.as_object()) {
                r.extend(e.clone());
            }
            json!({"any": [{"resources": resources}]})
        };
        let cases = [
            (
                "pattern_old_object_also_fails",
                kinds(json!({})),
                latest.clone(),
                RuleStatus::Skip,
            ),
            (
                "deny_old_object_also_fails",
                kinds(json!({})),
                deny.clone(),
                RuleStatus::Skip,
            ),
            // The old object is matched as a CREATE: an UPDATE-only rule
            // does not excuse it.
            (
                "update_only_pattern",
                kinds(json!({"operations": ["UPDATE"]})),
                latest.clone(),
                RuleStatus::Fail,
            ),
            (
                "update_only_deny",
                kinds(json!({"operations": ["UPDATE"]})),
                deny.clone(),
                RuleStatus::Fail,
            ),
            // A selector the old object does not meet.
            (
                "selector_only_the_new_object_meets",
                kinds(json!({"selector": {"matchLabels": {"stage": "new"}}})),
                latest.clone(),
                RuleStatus::Fail,
            ),
            // The old object is matched with no real requester.
            (
                "subjects_name_the_requester",
                json!({"any": [{"resources": {"kinds": ["Pod"]},
                    "subjects": [{"kind": "User", "name": "alice"}]}]}),
                latest,
                RuleStatus::Fail,
            ),
            // The old object's pass has an empty old object: reading a field
            // of it errors, so the new object's failure stands (Kyverno's
            // immutable-label policies without an operation guard).
            (
                "old_object_fields_are_unknown_in_the_old_pass",
                kinds(json!({})),
                json!({"message": "immutable", "deny": {"conditions": {"all": [{
                    "key": "{{ request.object.metadata.labels.stage }}",
                    "operator": "NotEquals",
                    "value": "{{ request.oldObject.metadata.labels.stage }}"}]}}}),
                RuleStatus::Fail,
            ),
            // Kyverno loads the rule's context again for the old object's
            // pass: the entry now reads the old `stage: old`, which passes,
            // so the new object's violation is not an existing one.
            (
                "context_entries_are_loaded_again_for_the_old_object",
                kinds(json!({})),
                json!({"message": "no new stage",
                    "context": [{"name": "stage", "variable": {
                        "jmesPath": "request.object.metadata.labels.stage"}}],
                    "deny": {"conditions": {"all": [{
                        "key": "{{ stage }}", "operator": "Equals", "value": "new"}]}}}),
                RuleStatus::Fail,
            ),
        ];
        for (name, match_resources, validate, want) in cases {
            assert_eq!(update_status(match_resources, validate), want, "{name}");
        }
    }

    /// Kyverno loads a context entry when a query first names it: a failed
    /// entry fails the queries that name it (a `||` fallback included),
    /// and nothing else.
    /// Kyverno's `MatchesResourceDescription`: a namespaced Policy's rules
    /// apply only to objects in the Policy's namespace.
    #[test]
    fn a_namespaced_policy_applies_only_in_its_namespace() {
        let policy = json!({"apiVersion": "kyverno.io/v1", "kind": "Policy",
            "metadata": {"name": "p", "namespace": "team-a"},
            "spec": {"validationFailureAction": "Enforce", "rules": [{"name": "r",
                "match": {"any": [{"resources": {"kinds": ["Pod", "Namespace"]}}]},
                "validate": {"message": "m", "deny": {}}}]}});
        let request = |kind: &str, namespace: &str| {
            let mut metadata = json!({"name": "x"});
            if !namespace.is_empty() {
                metadata["namespace"] = json!(namespace);
            }
            json!({"uid": "1", "kind": {"group": "", "version": "v1", "kind": kind},
                "operation": "CREATE", "namespace": namespace, "userInfo": {},
                "object": {"apiVersion": "v1", "kind": kind, "metadata": metadata}})
        };
        let cases = [
            ("its_namespace", request("Pod", "team-a"), 1),
            ("another_namespace", request("Pod", "team-b"), 0),
            ("a_namespace_object", request("Namespace", "team-a"), 0),
        ];
        for (name, request, applied) in cases {
            let outcomes = outcomes_of(&policy, request);
            assert_eq!(outcomes.len(), applied, "{name}");
            assert!(
                outcomes.iter().all(|o| o.status == RuleStatus::Fail),
                "{name}"
            );
        }
    }

    #[test]
    fn a_failed_context_entry_fails_only_what_names_it() {
        let missing = json!({"name": "team", "variable": {
            "jmesPath": "request.object.metadata.labels.team"}});
        let deny = |key: &str, value: &str| json!({"all": [{"key": key, "operator": "Equals", "value": value}]});
        let cases = [
            (
                "a_fallback_does_not_hide_the_failure",
                json!([missing]),
                deny("{{ team || 'none' }}", "none"),
                RuleStatus::Error,
                "failed to resolve team || 'none' at path : context entry `team` did not load: failed to apply jmespath",
            ),
            (
                "an_unnamed_failed_entry_is_harmless",
                json!([missing]),
                deny("{{ request.object.metadata.name }}", "p"),
                RuleStatus::Fail,
                "",
            ),
            (
                "a_later_entry_that_reads_it_fails_too",
                json!([missing, {"name": "upper", "variable": {"jmesPath": "to_upper(team)"}}]),
                deny("{{ upper }}", "X"),
                RuleStatus::Error,
                "context entry `upper` did not load: failed to apply jmespath to_upper(team) to variable <nil>: context entry `team` did not load",
            ),
            // Kyverno resolves a variable's `$(…)` references first.
            (
                "a_reference_in_a_value_that_names_no_field",
                json!([{"name": "v", "variable": {"value": "$(./x)"}}]),
                deny("{{ v }}", "x"),
                RuleStatus::Error,
                "context entry `v` did not load",
            ),
            (
                "a_later_entry_with_a_default_takes_the_default",
                json!([missing, {"name": "upper", "variable": {
                    "jmesPath": "to_upper(team)", "default": "NONE"}}]),
                deny("{{ upper }}", "NONE"),
                RuleStatus::Fail,
                "",
            ),
        ];
        for (name, context, conditions, want, message) in cases {
            let (got, text) = pod_rule_outcome(
                "nginx",
                json!({"context": context, "validate": {"message": "m", "deny": {"conditions": conditions}}}),
            );
            assert_eq!(got, want, "{name}: {text}");
            assert!(text.contains(message), "{name}: {text}");
        }
    }

    /// Kyverno's context size limit: the JSON of a request's context
    /// entries may add up to 2 MiB; the entry that passes it fails to load.
    #[test]
    fn context_entries_add_up_to_two_mebibytes() {
        // `l0` is 64 KiB of JSON; each next entry doubles the one before.
        let mut entries = vec![json!({"name": "l0", "variable": {"value": "x".repeat(65_534)}})];
        for i in 1..=5 {
            entries.push(json!({"name": format!("l{i}"), "variable": {
                "jmesPath": format!("join('', [l{0}, l{0}])", i - 1)}}));
        }
        let deny =
            |key: &str| json!({"all": [{"key": key, "operator": "Equals", "value": "never"}]});
        let cases = [
            // 64 + 128 + 256 + 512 + 1024 KiB (less quotes) fit in 2 MiB.
            ("entries_within_the_limit", 5, "{{ length(l4) }}", RuleStatus::Pass, ""),
            ("the_entry_past_the_limit", 6, "{{ length(l5) }}", RuleStatus::Error,
                "context entry `l5` did not load: context size limit exceeded: 4128654 bytes exceeds limit of 2097152 bytes"),
            ("entries_before_it_still_load", 6, "{{ length(l4) }}", RuleStatus::Pass, ""),
        ];
        for (name, count, key, want, message) in cases {
            let (got, text) = pod_rule_outcome(
                "nginx",
                json!({"context": entries[..count], "validate": {"message": "m", "deny": {"conditions": deny(key)}}}),
            );
            assert_eq!(got, want, "{name}: {text}");
            assert!(text.contains(message), "{name}: {text}");
        }
    }

    /// CEL's `request` is Kyverno's, rebuilt from the admission attributes.
    #[test]
    fn cel_request_follows_kyvernos_attributes() {
        let status = |kind: &str, object: Value, expression: &str| {
            let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
                "match": {"any": [{"resources": {"kinds": [kind]}}]},
                "validate": {"cel": {"expressions": [{"expression": expression, "message": "m"}]}}}]});
            let request = json!({"uid": "abc", "operation": "CREATE", "namespace": "team-a",
                "kind": {"group": "", "version": "v1", "kind": kind},
                "resource": {"group": "", "version": "v1", "resource": "x"},
                "dryRun": true,
                "userInfo": {"username": "u"}, "object": object});
            outcomes_of(&settings, request).first().map(|o| o.status)
        };
        let pod = json!({"kind": "Pod", "metadata": {"name": "p", "namespace": "team-a"}});
        let ns = json!({"kind": "Namespace", "metadata": {"name": "team-a"}});
        let cases: Vec<(&str, &str, Value, &str, RuleStatus)> = vec![
            (
                "dry_run_is_always_false",
                "Pod",
                pod.clone(),
                "request.dryRun == false",
                RuleStatus::Pass,
            ),
            (
                "no_uid",
                "Pod",
                pod.clone(),
                "request.uid == ''",
                RuleStatus::Pass,
            ),
            (
                "name_and_namespace_from_the_object",
                "Pod",
                pod.clone(),
                "request.name == 'p' && request.namespace == 'team-a'",
                RuleStatus::Pass,
            ),
            (
                "user_info_kept",
                "Pod",
                pod,
                "request.userInfo.username == 'u'",
                RuleStatus::Pass,
            ),
            (
                "a_namespace_has_no_namespace",
                "Namespace",
                ns.clone(),
                "!has(request.namespace)",
                RuleStatus::Pass,
            ),
            (
                "a_namespace_has_no_namespace_object",
                "Namespace",
                ns,
                "namespaceObject == null",
                RuleStatus::Pass,
            ),
        ];
        for (name, kind, object, expression, want) in cases {
            assert_eq!(status(kind, object, expression), Some(want), "{name}");
        }
    }

    /// Answers lists of PolicyExceptions with `exceptions`, counting them.
    struct ExceptionCluster {
        exceptions: Vec<Value>,
        lists: std::cell::Cell<usize>,
    }

    impl Cluster for ExceptionCluster {
        fn fetch(&self, lookup: &crate::cluster::Lookup) -> Result<Value, String> {
            match lookup {
                crate::cluster::Lookup::List { kind, .. } if kind == "PolicyException" => {
                    self.lists.set(self.lists.get() + 1);
                    Ok(json!({"items": self.exceptions}))
                }
                other => Err(format!("cannot read {}", other.describe())),
            }
        }
    }

    /// Rule `r` of policy `p` (`fields` besides its name and match) on a
    /// CREATE of a Pod with `spec`, with one cluster exception for the rule
    /// (`extra`: its spec besides `exceptions` and `match`). Returns the
    /// rule's status and message, and how often exceptions were listed.
    fn exempted_outcome(
        fields: Value,
        extra: Value,
        spec: Value,
        statuses: Statuses,
    ) -> (RuleStatus, String, usize) {
        let mut rule = json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}});
        let mut exception = json!({"exceptions": [{"policyName": "p", "ruleNames": ["r"]}],
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}});
        for (target, more) in [(&mut rule, fields), (&mut exception, extra)] {
            if let (Some(target), Some(more)) = (target.as_object_mut(), more.as_object()) {
                target.extend(more.clone());
            }
        }
        let cluster = ExceptionCluster {
            exceptions: vec![
                json!({"apiVersion": "kyverno.io/v2", "kind": "PolicyException",
                "metadata": {"name": "e", "namespace": "kyverno"}, "spec": exception}),
            ],
            lists: std::cell::Cell::new(0),
        };
        let settings =
            json!({"policyName": "p", "validationFailureAction": "Enforce", "rules": [rule]});
        let request = json!({"uid": "1", "operation": "CREATE", "namespace": "default",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "userInfo": {"username": "alice"},
            "object": {"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": "p", "namespace": "default", "labels": {"team": "a"}},
                "spec": spec}});
        let options = Options {
            mentions_roles: false,
            teardown: Teardown::Free,
            statuses,
            webhook: true,
        };
        let evaluation = evaluate_settings(&Json::borrow(&settings), request, &cluster, options)
            .unwrap_or_else(|d| panic!("invalid settings: {}", d.summary()));
        let (status, message) = evaluation
            .outcomes
            .first()
            .map(|o| (o.status, o.message.clone()))
            .unwrap_or((RuleStatus::Pass, String::new()));
        (status, message, cluster.lists.get())
    }

    /// Mocked API responses for two paths; the cluster itself has nothing.
    struct MockedCalls;

    impl Cluster for MockedCalls {
        fn fetch(&self, lookup: &crate::cluster::Lookup) -> Result<Value, String> {
            Err(format!("cannot read {}", lookup.describe()))
        }

        fn api_call_response(
            &self,
            method: &str,
            url: &str,
        ) -> Option<crate::cluster::MockedResponse> {
            let (status, body) = match (method, url) {
                ("GET", "/api/v1/namespaces/a/configmaps/limit") => {
                    (200, json!({"data": {"max": "3"}}))
                }
                ("GET", "/api/v1/namespaces/b/configmaps/limit") => {
                    (404, json!({"kind": "Status"}))
                }
                _ => return None,
            };
            Some(crate::cluster::MockedResponse { status, body })
        }
    }

    #[test]
    fn mocked_api_responses_stand_in_for_the_call_without_its_default() {
        let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "r",
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "context": [{"name": "limit", "apiCall": {
                "urlPath": "/api/v1/namespaces/{{ request.namespace }}/configmaps/limit",
                "jmesPath": "data.max", "default": "10"}}],
            "validate": {"message": "over {{ limit }}", "deny": {"conditions": {"any": [
                {"key": "{{ request.object.metadata.annotations.n }}",
                 "operator": "GreaterThan", "value": "{{ limit }}"}]}}}}]});
        let cases = [
            ("mocked_body_queried", "a", "2", RuleStatus::Pass, ""),
            ("mocked_body_denies", "a", "5", RuleStatus::Fail, "over 3"),
            (
                "a_non_2xx_mock_fails_the_entry",
                "b",
                "1",
                RuleStatus::Error,
                "HTTP 404 from apiCall mock for context entry \"limit\" (v1 apiCall treats non-2xx as failure)",
            ),
            // Without a mock the call is made; it fails, so `default` holds.
            ("unmocked_call_falls_back_to_default", "c", "5", RuleStatus::Pass, ""),
        ];
        for (name, namespace, n, status, message) in cases {
            let request = json!({"uid": "1", "operation": "CREATE", "namespace": namespace,
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p",
                    "namespace": namespace, "annotations": {"n": n}}}});
            let options = Options {
                mentions_roles: false,
                teardown: Teardown::Free,
                statuses: Statuses::Exact,
                webhook: true,
            };
            let evaluation =
                evaluate_settings(&Json::borrow(&settings), request, &MockedCalls, options)
                    .unwrap_or_else(|d| panic!("{name}: invalid settings: {}", d.summary()));
            let outcome = evaluation.outcomes.first().expect("one outcome");
            assert_eq!(outcome.status, status, "{name}: {}", outcome.message);
            assert!(
                outcome.message.contains(message),
                "{name}: {}",
                outcome.message
            );
        }
    }

    #[test]
    fn a_background_only_policy_runs_outside_webhooks_only() {
        let settings = json!({"admission": false, "validationFailureAction": "Enforce",
            "rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
                "validate": {"pattern": {"metadata": {"labels": {"team": "?*"}}}}}]});
        let request = json!({"uid": "1", "operation": "CREATE", "namespace": "default",
            "kind": {"group": "", "version": "v1", "kind": "Pod"},
            "object": {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "default"}}});
        // (case, options.webhook, statuses of the rules run)
        let cases = [
            ("admission_webhook_runs_no_rule", true, vec![]),
            ("cli_runs_the_rule", false, vec![RuleStatus::Fail]),
        ];
        for (name, webhook, want) in cases {
            let options = Options {
                mentions_roles: false,
                teardown: Teardown::Free,
                statuses: Statuses::Exact,
                webhook,
            };
            let evaluation = evaluate_settings(
                &Json::borrow(&settings),
                request.clone(),
                &crate::cluster::NoCluster,
                options,
            )
            .unwrap_or_else(|d| panic!("{name}: invalid settings: {}", d.summary()));
            let got: Vec<RuleStatus> = evaluation.outcomes.iter().map(|o| o.status).collect();
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn exceptions_are_consulted_after_the_preconditions_and_only_as_the_statuses_need() {
        let deny_on = |image: &str| {
            json!({"validate": {"deny": {"conditions": {"any": [
                {"key": "{{ request.object.spec.containers[0].image }}", "operator": "Equals", "value": image}]}}}})
        };
        let with_preconditions = |condition: Value| {
            let mut rule = deny_on("nginx");
            rule["preconditions"] = json!({"all": [condition]});
            rule
        };
        let nginx = json!({"containers": [{"name": "c", "image": "nginx"}]});
        let skipped = "rule is skipped due to policy exceptionskyverno/e";
        let cases = [
            (
                "a_failing_rule_is_skipped",
                deny_on("nginx"),
                json!({}),
                Statuses::Verdict,
                (RuleStatus::Skip, skipped, 1),
            ),
            (
                // Skip or pass, the request is accepted: no list.
                "a_passing_rule_keeps_its_pass_for_a_verdict",
                deny_on("redis"),
                json!({}),
                Statuses::Verdict,
                (RuleStatus::Pass, "validation rule 'r' passed.", 0),
            ),
            (
                "a_passing_rule_is_skipped_when_statuses_are_exact",
                deny_on("redis"),
                json!({}),
                Statuses::Exact,
                (RuleStatus::Skip, skipped, 1),
            ),
            (
                // Kyverno logs the error and checks the next exception.
                "an_exception_whose_conditions_error_does_not_exempt",
                deny_on("nginx"),
                json!({"conditions": {"any": [{"key": "{{ request.object.nothing.here }}",
                    "operator": "Equals", "value": "x"}]}}),
                Statuses::Exact,
                (RuleStatus::Fail, "", 1),
            ),
            (
                "an_exception_whose_conditions_hold_exempts",
                deny_on("nginx"),
                json!({"conditions": {"any": [{"key": "{{ request.object.metadata.labels.team }}",
                    "operator": "Equals", "value": "a"}]}}),
                Statuses::Verdict,
                (RuleStatus::Skip, skipped, 1),
            ),
            (
                // Kyverno loads the rule's context before it checks exceptions.
                "exception_conditions_read_the_rule_s_context",
                {
                    let mut rule = deny_on("nginx");
                    rule["context"] =
                        json!([{"name": "teamName", "variable": {"value": "platform"}}]);
                    rule
                },
                json!({"conditions": {"all": [{"key": "{{ teamName }}",
                    "operator": "Equals", "value": "platform"}]}}),
                Statuses::Verdict,
                (RuleStatus::Skip, skipped, 1),
            ),
            (
                "preconditions_not_met_skip_before_any_exception",
                with_preconditions(json!({"key": "a", "operator": "Equals", "value": "b"})),
                json!({}),
                Statuses::Exact,
                (RuleStatus::Skip, "preconditions not met", 0),
            ),
            (
                "a_precondition_error_is_the_rule_s_error_despite_exceptions",
                with_preconditions(
                    json!({"key": "{{ request.object.nothing.here }}", "operator": "Equals", "value": "b"}),
                ),
                json!({}),
                Statuses::Exact,
                (RuleStatus::Error, "failed to evaluate preconditions", 0),
            ),
        ];
        for (name, rule, extra, statuses, (status, message, lists)) in cases {
            let got = exempted_outcome(rule, extra, nginx.clone(), statuses);
            assert_eq!((got.0, got.2), (status, lists), "{name}: {}", got.1);
            assert!(got.1.starts_with(message), "{name}: {}", got.1);
        }
    }

    #[test]
    fn pod_security_exceptions_relax_a_failing_rule_control_by_control() {
        let rule = json!({"validate": {"podSecurity": {"level": "baseline", "version": "latest"}}});
        let host_namespaces = json!({"podSecurity": [{"controlName": "Host Namespaces"}]});
        let container = json!({"name": "c", "image": "nginx"});
        let privileged =
            json!({"name": "c", "image": "nginx", "securityContext": {"privileged": true}});
        let cases = [
            (
                // Kyverno checks the pod first; it passes without the exception.
                "a_passing_pod_passes",
                json!({"containers": [container]}),
                (RuleStatus::Pass, ""),
            ),
            (
                "the_only_violation_exempted_is_a_skip",
                json!({"hostNetwork": true, "containers": [container]}),
                (RuleStatus::Skip, "rule is skipped due to policy exceptions"),
            ),
            (
                "violations_left_fail",
                json!({"hostNetwork": true, "containers": [privileged]}),
                (RuleStatus::Fail, ""),
            ),
        ];
        for (name, spec, (status, message)) in cases {
            let got =
                exempted_outcome(rule.clone(), host_namespaces.clone(), spec, Statuses::Exact);
            assert_eq!(got.0, status, "{name}: {}", got.1);
            assert!(got.1.starts_with(message), "{name}: {}", got.1);
            if status == RuleStatus::Fail {
                assert!(got.1.contains("privileged"), "{name}: {}", got.1);
                assert!(!got.1.contains("hostNetwork"), "{name}: {}", got.1);
            }
        }
    }
}
