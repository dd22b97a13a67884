//! Kyverno's auto-generated rules for pod controllers.
//!
//! A rule written for Pods also checks the pod template of Deployments,
//! DaemonSets, StatefulSets, Jobs, ReplicaSets and ReplicationControllers
//! (`autogen-NAME`, pod template at `spec.template`) and of CronJobs
//! (`autogen-cronjob-NAME`, at `spec.jobTemplate.spec.template`). Like
//! Kyverno's `ComputeRules(policy, kind)`, rules are generated only for the
//! kind of the request at hand: the pattern is wrapped in the template, the
//! kinds are replaced, and `request.object.spec` / `.metadata` references are
//! rewritten as plain substrings. Kyverno does it on the rule's JSON
//! ([`generate_one`]); requests derive the rule from the parsed Pod rule
//! ([`derive()`], held equal to the JSON way by `tests/autogen.rs`).

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::json::{Json, JsonCow};

use crate::matching::contains_kind;
use crate::settings::{
    AuditAnnotation, Cel, CelExpression, Condition, Conditions, ContextEntry, ContextSource, Deny,
    FailureActionOverride, Foreach, ForeachBody, LabelSelector, LabelSelectorRequirement,
    MatchResources, NamedExpression, Params, PodSecurity, PodSecurityExclude, ResourceDescription,
    ResourceFilter, Rule, Subject, Validation, ValidationBody,
};

/// Every pod controller Kyverno generates rules for by default.
pub const POD_CONTROLLERS: &[&str] = &[
    "DaemonSet",
    "Deployment",
    "Job",
    "StatefulSet",
    "ReplicaSet",
    "ReplicationController",
    "CronJob",
];

/// Where a kind keeps its pod template (the object with the pod's
/// `metadata` and `spec`): the resource itself for a Pod, `None` for kinds
/// without pods.
pub fn pod_template_path(kind: &str) -> Option<&'static [&'static str]> {
    match kind {
        "Pod" => Some(&[]),
        "CronJob" => Some(CRONJOB_TEMPLATE),
        k if POD_CONTROLLERS.contains(&k) => Some(CONTROLLER_TEMPLATE),
        _ => None,
    }
}
const CONTROLLER_TEMPLATE: &[&str] = &["spec", "template"];
const CRONJOB_TEMPLATE: &[&str] = &["spec", "jobTemplate", "spec", "template"];
const CRONJOB: &str = "CronJob";

const POD_REPLACEMENTS: [(&str, &str); 4] = [
    ("request.object.spec", "request.object.spec.template.spec"),
    (
        "request.oldObject.spec",
        "request.oldObject.spec.template.spec",
    ),
    (
        "request.object.metadata",
        "request.object.spec.template.metadata",
    ),
    (
        "request.oldObject.metadata",
        "request.oldObject.spec.template.metadata",
    ),
];
/// What every `from` of the replacement tables contains.
const OBJECT_FIELD: &str = "bject.";
const OBJECT_NEEDLE: crate::scan::Needle = crate::scan::Needle::new(OBJECT_FIELD);
const POD_CEL_REPLACEMENTS: [(&str, &str); 4] = [
    ("object.spec", "object.spec.template.spec"),
    ("oldObject.spec", "oldObject.spec.template.spec"),
    ("object.metadata", "object.spec.template.metadata"),
    ("oldObject.metadata", "oldObject.spec.template.metadata"),
];
const CRONJOB_REPLACEMENTS: [(&str, &str); 4] = [
    (
        "request.object.spec",
        "request.object.spec.jobTemplate.spec.template.spec",
    ),
    (
        "request.oldObject.spec",
        "request.oldObject.spec.jobTemplate.spec.template.spec",
    ),
    (
        "request.object.metadata",
        "request.object.spec.jobTemplate.spec.template.metadata",
    ),
    (
        "request.oldObject.metadata",
        "request.oldObject.spec.jobTemplate.spec.template.metadata",
    ),
];
const CRONJOB_CEL_REPLACEMENTS: [(&str, &str); 4] = [
    ("object.spec", "object.spec.jobTemplate.spec.template.spec"),
    (
        "oldObject.spec",
        "oldObject.spec.jobTemplate.spec.template.spec",
    ),
    (
        "object.metadata",
        "object.spec.jobTemplate.spec.template.metadata",
    ),
    (
        "oldObject.metadata",
        "oldObject.spec.jobTemplate.spec.template.metadata",
    ),
];

/// A generated rule: its JSON and the index of the Pod rule it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedRule {
    pub source: usize,
    pub rule: Value,
}

/// Kyverno's policy-level `CanAutoGen`: any rule that names resources,
/// selects by labels or annotations, or mixes Pod with other kinds turns
/// autogen off for the whole policy; so does a policy that never mentions
/// Pod or a pod controller.
pub fn can_autogen(rules: &[Json<'_>]) -> bool {
    let mut needed = false;
    for rule in rules {
        if rule.get("generate").is_some() {
            return false;
        }
        // Each block's legacy `resources`, then those of its `any` and
        // `all` filters.
        let descriptions = ["match", "exclude"]
            .into_iter()
            .filter_map(|key| rule.get(key))
            .flat_map(|m| {
                let filters = ["any", "all"]
                    .into_iter()
                    .filter_map(|block| m.get(block).and_then(Json::as_array))
                    .flatten()
                    .filter_map(|filter| filter.get("resources"));
                m.get("resources").into_iter().chain(filters)
            });
        for description in descriptions {
            let kinds = description
                .get("kinds")
                .and_then(Json::as_array)
                .unwrap_or_default()
                .iter()
                .filter_map(Json::as_str);
            let has = |k: &str| description.get(k).is_some_and(|v| !v.is_null());
            let names = description
                .get("names")
                .and_then(Json::as_array)
                .is_some_and(|n| !n.is_empty());
            let name = description
                .get("name")
                .and_then(Json::as_str)
                .is_some_and(|n| !n.is_empty());
            if name
                || names
                || has("selector")
                || has("annotations")
                || (kinds.clone().nth(1).is_some() && contains_kind(kinds.clone(), "Pod"))
            {
                return false;
            }
            needed |= kinds
                .clone()
                .any(|k| k == "Pod" || POD_CONTROLLERS.contains(&k));
        }
    }
    needed
}

/// The rules Kyverno generates for a request of `kind` (e.g. `Deployment`),
/// in Kyverno's order; empty when autogen does not apply.
pub fn generate(rules: &[Value], controllers: Option<&str>, kind: &str) -> Vec<GeneratedRule> {
    let views: Vec<Json<'_>> = rules.iter().map(Json::borrow).collect();
    if !applies(&views, controllers, kind) {
        return Vec::new();
    }
    rules
        .iter()
        .enumerate()
        .filter_map(|(i, rule)| {
            generate_one(rule, kind).map(|rule| GeneratedRule { source: i, rule })
        })
        .collect()
}

/// Whether autogen derives rules from the policy's `rules` (JSON) for a
/// request of `kind`.
pub fn applies(rules: &[Json<'_>], controllers: Option<&str>, kind: &str) -> bool {
    if kind.is_empty() || kind == "Pod" {
        return false;
    }
    // Split on commas without trimming, as Kyverno does. Kyverno looks the
    // request kind up in this list as is, so the legacy value `all`
    // generates nothing at admission time.
    let listed = match controllers {
        Some(list) => list.split(',').any(|c| c == kind),
        None => POD_CONTROLLERS.contains(&kind),
    };
    // The kind first: most requests are for no pod controller.
    listed && can_autogen(rules)
}

/// The JSON of the rule Kyverno generates from one Pod rule for a request
/// of `kind`, when it generates one (see [`applies`] for the policy-level
/// check).
pub fn generate_one(rule: &Value, kind: &str) -> Option<Value> {
    if kind == CRONJOB {
        controller_rule(rule, CRONJOB).and_then(|r| cronjob_rule(rule, r))
    } else {
        controller_rule(rule, kind).map(|r| finish(r, &POD_REPLACEMENTS, &POD_CEL_REPLACEMENTS))
    }
}

/// [`generate_one`] on a parsed rule: the same rule, derived without
/// writing its JSON again and parsing it back (a fifth of a pod-controller
/// request). Patterns are wrapped in new JSON; everything else is copied
/// with every string rewritten as `finish` rewrites the rule's JSON.
/// `None` where [`generate_one`] generates nothing.
pub fn derive<'a>(rule: &Rule<'a>, kind: &str) -> Option<Rule<'a>> {
    if rule.name.starts_with("autogen-") {
        return None;
    }
    let exclude_kinds = typed_kinds(rule.exclude.as_ref());
    if !contains_kind(typed_kinds(Some(&rule.match_resources)), "Pod")
        || (exclude_kinds.clone().next().is_some() && !contains_kind(exclude_kinds, "Pod"))
    {
        return None;
    }
    let cel = matches!(rule.validate.body, ValidationBody::Cel(_));
    let (name, wraps, table, kinds_everywhere): (String, &'static [&'static str], _, bool) =
        if kind == CRONJOB {
            let table = if cel {
                &CRONJOB_CEL_REPLACEMENTS
            } else {
                &CRONJOB_REPLACEMENTS
            };
            (
                format!("autogen-cronjob-{}", rule.name),
                CRONJOB_TEMPLATE,
                table,
                true,
            )
        } else {
            let table = if cel {
                &POD_CEL_REPLACEMENTS
            } else {
                &POD_REPLACEMENTS
            };
            (
                format!("autogen-{}", rule.name),
                CONTROLLER_TEMPLATE,
                table,
                false,
            )
        };
    let r = Rewrite(table);
    // The pattern is evaluated under the pod template (`Validation::template`,
    // `Pattern::evaluate_within`): no copy of it here unless a text changes.
    let body = match &rule.validate.body {
        ValidationBody::Pattern(p) => ValidationBody::Pattern(r.json(p)),
        ValidationBody::AnyPattern(ps) => {
            ValidationBody::AnyPattern(ps.iter().map(|p| r.json(p)).collect())
        }
        ValidationBody::Deny(d) => ValidationBody::Deny(Deny {
            conditions: d.conditions.as_ref().map(|c| r.conditions(c)),
        }),
        ValidationBody::Foreach(list) => {
            ValidationBody::Foreach(list.iter().map(|f| r.foreach(f)).collect())
        }
        ValidationBody::Cel(c) => ValidationBody::Cel(Box::new(r.cel(c))),
        ValidationBody::PodSecurity(ps) => ValidationBody::PodSecurity(PodSecurity {
            level: r.text(&ps.level),
            version: r.opt(&ps.version),
            exclude: ps
                .exclude
                .iter()
                .map(|e| PodSecurityExclude {
                    control_name: r.text(&e.control_name),
                    images: r.texts(&e.images),
                    restricted_field: r.opt(&e.restricted_field),
                    values: r.texts(&e.values),
                })
                .collect(),
        }),
        ValidationBody::Manifests(_) => return None,
    };
    // The controller rule names only the request's kind; the CronJob rule
    // is the controller rule wrapped once more, with every filter renamed.
    let kinds: &[&str] = &[kind];
    let retarget = |block: &MatchResources, exclude: bool| {
        retargeted(&r, block, kinds, kinds_everywhere, exclude)
    };
    let name = truncate_name(name);
    Some(Rule {
        name: r.owned_text(name).into(),
        path: rule.path.clone(),
        match_resources: retarget(&rule.match_resources, false),
        exclude: rule.exclude.as_ref().map(|e| retarget(e, true)),
        context: rule.context.iter().map(|c| r.context(c)).collect(),
        preconditions: rule.preconditions.as_ref().map(|c| r.conditions(c)),
        cel_preconditions: rule.cel_preconditions.iter().map(|e| r.named(e)).collect(),
        validate: Validation {
            message: rule.validate.message.as_ref().map(|m| r.cow(m)),
            failure_action: rule.validate.failure_action,
            failure_action_overrides: rule
                .validate
                .failure_action_overrides
                .iter()
                .map(|o| r.action_override(o))
                .collect(),
            body,
            template: wraps,
            allow_existing_violations: rule.validate.allow_existing_violations,
        },
    })
}

/// Every kind a parsed `match`/`exclude` names ([`block_kinds`]).
fn typed_kinds(block: Option<&MatchResources>) -> impl Iterator<Item = &str> + Clone {
    block
        .into_iter()
        .flat_map(|block| {
            block
                .legacy
                .as_deref()
                .into_iter()
                .chain(&block.all)
                .chain(&block.any)
        })
        .filter_map(|f| f.resources.as_ref())
        .flat_map(|r| r.kinds.iter().map(String::as_str))
}

/// Which list of a `match`/`exclude` block a filter is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Filters {
    Any,
    All,
    Legacy,
}

/// [`replace_kinds`] on a parsed block: the block rewritten, its filters
/// naming `kinds` where Kyverno renames them (every filter with resources
/// when `every_filter`, else those naming Pod), in one copy.
fn retargeted(
    r: &Rewrite,
    block: &MatchResources,
    kinds: &[&str],
    every_filter: bool,
    is_exclude: bool,
) -> MatchResources {
    let new_kinds = || kinds.iter().map(|k| (*k).to_string()).collect::<Vec<_>>();
    let renamed = if !block.any.is_empty() {
        Filters::Any
    } else if !block.all.is_empty() {
        Filters::All
    } else {
        Filters::Legacy
    };
    let mut copy = r.match_resources(block, |list, old| {
        if list == renamed && list != Filters::Legacy && (every_filter || contains_kind(old, "Pod"))
        {
            new_kinds()
        } else {
            r.texts(old)
        }
    });
    if renamed == Filters::Legacy {
        let resources = copy
            .legacy
            .get_or_insert_with(Default::default)
            .resources
            .get_or_insert_with(Default::default);
        if !is_exclude || !resources.kinds.is_empty() {
            resources.kinds = new_kinds();
        }
    }
    copy
}

/// Kyverno's `updateFields` string rewrite, on parsed rule parts.
struct Rewrite(&'static [(&'static str, &'static str); 4]);

impl Rewrite {
    fn text(&self, s: &str) -> String {
        rewrite_text(s, self.0).into_owned()
    }

    /// [`Rewrite::text`], borrowing what it borrowed when nothing changes.
    fn cow<'a>(&self, s: &Cow<'a, str>) -> Cow<'a, str> {
        match s {
            Cow::Borrowed(s) => rewrite_text(s, self.0),
            Cow::Owned(s) => Cow::Owned(self.text(s)),
        }
    }

    /// [`Rewrite::text`] keeping `s` when nothing in it changes.
    fn owned_text(&self, s: String) -> String {
        if needs_rewrite(&s, self.0) {
            self.text(&s)
        } else {
            s
        }
    }

    fn opt(&self, s: &Option<String>) -> Option<String> {
        s.as_deref().map(|s| self.text(s))
    }

    fn texts(&self, list: &[String]) -> Vec<String> {
        list.iter().map(|s| self.text(s)).collect()
    }

    fn pairs(&self, list: &[(String, String)]) -> Vec<(String, String)> {
        list.iter()
            .map(|(k, v)| (self.text(k), self.text(v)))
            .collect()
    }

    fn value(&self, value: &Value) -> Value {
        let mut value = value.clone();
        rewrite_in_place(&mut value, self.0);
        value
    }

    /// A pattern or condition operand, borrowed as it is unless one of its
    /// texts is rewritten.
    fn json<'a>(&self, json: &JsonCow<'a>) -> JsonCow<'a> {
        match json {
            JsonCow::Borrowed(v) if !json_needs_rewrite(v, self.0) => JsonCow::Borrowed(v),
            // `to_value` is already a copy: rewrite it in place.
            other => JsonCow::Owned(Json::owned(rewrite_strings(other.to_value(), self.0))),
        }
    }

    fn selector(&self, s: &LabelSelector) -> LabelSelector {
        LabelSelector {
            match_labels: self.pairs(&s.match_labels),
            match_expressions: s
                .match_expressions
                .iter()
                .map(|e| LabelSelectorRequirement {
                    key: self.text(&e.key),
                    operator: self.text(&e.operator),
                    values: self.texts(&e.values),
                })
                .collect(),
        }
    }

    /// A block rewritten, with the kinds of each filter as `kinds` gives
    /// them from the filter's list and its own kinds.
    fn match_resources(
        &self,
        m: &MatchResources,
        kinds: impl Fn(Filters, &[String]) -> Vec<String>,
    ) -> MatchResources {
        let filter = |list: Filters, f: &ResourceFilter| ResourceFilter {
            resources: f.resources.as_ref().map(|d| ResourceDescription {
                kinds: kinds(list, &d.kinds),
                name: self.opt(&d.name),
                names: self.texts(&d.names),
                namespaces: self.texts(&d.namespaces),
                operations: self.texts(&d.operations),
                annotations: self.pairs(&d.annotations),
                selector: d.selector.as_ref().map(|s| self.selector(s)),
                namespace_selector: d.namespace_selector.as_ref().map(|s| self.selector(s)),
            }),
            subjects: f
                .subjects
                .iter()
                .map(|s| Subject {
                    kind: self.text(&s.kind),
                    name: self.text(&s.name),
                    namespace: self.opt(&s.namespace),
                })
                .collect(),
            roles: self.texts(&f.roles),
            cluster_roles: self.texts(&f.cluster_roles),
        };
        MatchResources {
            any: m.any.iter().map(|f| filter(Filters::Any, f)).collect(),
            all: m.all.iter().map(|f| filter(Filters::All, f)).collect(),
            legacy: m
                .legacy
                .as_deref()
                .map(|f| Box::new(filter(Filters::Legacy, f))),
        }
    }

    fn action_override(&self, o: &FailureActionOverride) -> FailureActionOverride {
        FailureActionOverride {
            action: o.action,
            namespaces: self.texts(&o.namespaces),
            namespace_selector: o.namespace_selector.as_ref().map(|s| self.selector(s)),
        }
    }

    fn conditions<'a>(&self, c: &Conditions<'a>) -> Conditions<'a> {
        let list = |l: &[Condition<'a>]| -> Vec<Condition<'a>> {
            l.iter()
                .map(|c| Condition {
                    key: self.json(&c.key),
                    operator: self.cow(&c.operator),
                    value: self.json(&c.value),
                    message: self.opt(&c.message),
                })
                .collect()
        };
        match c {
            Conditions::Blocks { any, all } => Conditions::Blocks {
                any: any.as_deref().map(list),
                all: all.as_deref().map(list),
            },
            Conditions::Legacy(l) => Conditions::Legacy(list(l)),
        }
    }

    fn context(&self, entry: &ContextEntry) -> ContextEntry {
        let value = |v: &Option<Value>| v.as_ref().map(|v| self.value(v));
        ContextEntry {
            name: self.text(&entry.name),
            source: match &entry.source {
                ContextSource::Variable {
                    value: v,
                    jmes_path,
                    default,
                } => ContextSource::Variable {
                    value: value(v),
                    jmes_path: self.opt(jmes_path),
                    default: value(default),
                },
                ContextSource::ConfigMap { name, namespace } => ContextSource::ConfigMap {
                    name: self.text(name),
                    namespace: self.text(namespace),
                },
                ContextSource::ApiCall {
                    url_path,
                    jmes_path,
                    default,
                    post,
                } => ContextSource::ApiCall {
                    url_path: self.text(url_path),
                    jmes_path: self.opt(jmes_path),
                    default: value(default),
                    post: value(post),
                },
                ContextSource::ImageRegistry {
                    reference,
                    jmes_path,
                } => ContextSource::ImageRegistry {
                    reference: self.text(reference),
                    jmes_path: self.opt(jmes_path),
                },
                ContextSource::GlobalReference { name, jmes_path } => {
                    ContextSource::GlobalReference {
                        name: self.text(name),
                        jmes_path: self.opt(jmes_path),
                    }
                }
            },
        }
    }

    fn named(&self, e: &NamedExpression) -> NamedExpression {
        NamedExpression {
            name: self.text(&e.name),
            expression: self.text(&e.expression),
        }
    }

    fn cel(&self, c: &Cel) -> Cel {
        Cel {
            expressions: c
                .expressions
                .iter()
                .map(|e| CelExpression {
                    expression: self.text(&e.expression),
                    message: self.opt(&e.message),
                    message_expression: self.opt(&e.message_expression),
                    reason: self.opt(&e.reason),
                })
                .collect(),
            variables: c.variables.iter().map(|v| self.named(v)).collect(),
            params: c.params.as_ref().map(|p| Params {
                api_version: self.text(&p.api_version),
                kind: self.text(&p.kind),
                name: self.opt(&p.name),
                namespace: self.opt(&p.namespace),
                selector: p.selector.as_ref().map(|s| self.selector(s)),
                deny_when_missing: p.deny_when_missing,
            }),
            audit_annotations: c
                .audit_annotations
                .iter()
                .map(|a| AuditAnnotation {
                    key: a.key.clone(),
                    value_expression: self.text(&a.value_expression),
                })
                .collect(),
        }
    }

    fn foreach<'a>(&self, f: &Foreach<'a>) -> Foreach<'a> {
        Foreach {
            numbered: f.numbered,
            list: self.text(&f.list),
            context: f.context.iter().map(|c| self.context(c)).collect(),
            preconditions: f.preconditions.as_ref().map(|c| self.conditions(c)),
            element_scope: f.element_scope,
            body: match &f.body {
                ForeachBody::Pattern(p) => ForeachBody::Pattern(self.json(p)),
                ForeachBody::AnyPattern(ps) => {
                    ForeachBody::AnyPattern(ps.iter().map(|p| self.json(p)).collect())
                }
                ForeachBody::Deny(d) => ForeachBody::Deny(Deny {
                    conditions: d.conditions.as_ref().map(|c| self.conditions(c)),
                }),
                ForeachBody::Foreach(list) => {
                    ForeachBody::Foreach(list.iter().map(|f| self.foreach(f)).collect())
                }
            },
        }
    }
}

/// Kyverno's `generateRuleForControllers` for one controller kind, before
/// the string rewrite.
fn controller_rule(rule: &Value, kind: &str) -> Option<Value> {
    let name = rule.get("name").and_then(Value::as_str).unwrap_or("");
    if name.starts_with("autogen-") {
        return None;
    }
    let match_kinds = block_kinds(rule.get("match"));
    let exclude_kinds = block_kinds(rule.get("exclude"));
    if !contains_kind(&match_kinds, "Pod")
        || (!exclude_kinds.is_empty() && !contains_kind(&exclude_kinds, "Pod"))
    {
        return None;
    }
    // Known controllers and custom ones named in `autogenControllers` alike
    // become the rule's only kind: rules are generated per request kind.
    wrap_rule(rule, &format!("autogen-{name}"), "template", &[kind], false)
}

/// `autogen-cronjob-NAME`: the controller rule wrapped once more.
fn cronjob_rule(original: &Value, controller: Value) -> Option<Value> {
    let name = original.get("name").and_then(Value::as_str).unwrap_or("");
    let wrapped = wrap_rule(
        &controller,
        &format!("autogen-cronjob-{name}"),
        "jobTemplate",
        &[CRONJOB],
        true,
    )?;
    Some(finish(
        wrapped,
        &CRONJOB_REPLACEMENTS,
        &CRONJOB_CEL_REPLACEMENTS,
    ))
}

/// Kyverno's `generateRule`: rename, replace kinds, wrap the validate body.
fn wrap_rule(
    rule: &Value,
    name: &str,
    template_key: &str,
    kinds: &[&str],
    every_filter: bool,
) -> Option<Value> {
    let source = rule.as_object()?;
    let validate = source.get("validate")?.as_object()?;
    let mut out = Map::new();
    out.insert(
        "name".into(),
        Value::String(truncate_name(name.to_string())),
    );
    for key in ["match", "exclude"] {
        if let Some(block) = source.get(key) {
            out.insert(
                key.into(),
                replace_kinds(block, kinds, every_filter, key == "exclude"),
            );
        }
    }
    for key in [
        "context",
        "preconditions",
        "celPreconditions",
        "skipBackgroundRequests",
    ] {
        if let Some(v) = source.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    // A clone, not `json!`, which would serialize the pattern afresh.
    let wrap = |pattern: &Value| {
        let template = Map::from_iter([(template_key.to_string(), pattern.clone())]);
        Value::Object(Map::from_iter([(
            "spec".to_string(),
            Value::Object(template),
        )]))
    };
    let mut new_validate = Map::new();
    for key in [
        "message",
        "failureAction",
        "failureActionOverrides",
        "allowExistingViolations",
    ] {
        if let Some(v) = validate.get(key) {
            new_validate.insert(key.into(), v.clone());
        }
    }
    if let Some(pattern) = validate.get("pattern") {
        new_validate.insert("pattern".into(), wrap(pattern));
    } else if let Some(deny) = validate.get("deny") {
        new_validate.insert("deny".into(), deny.clone());
    } else if let Some(pss) = validate.get("podSecurity") {
        new_validate.insert("podSecurity".into(), pss.clone());
    } else if let Some(any) = validate.get("anyPattern") {
        let patterns = any.as_array()?.iter().map(wrap).collect();
        new_validate.insert("anyPattern".into(), Value::Array(patterns));
    } else if let Some(foreach) = validate.get("foreach") {
        new_validate.insert("foreach".into(), foreach.clone());
    } else if validate.get("cel").is_some() {
        // CEL keeps the whole validate block; only the expressions are rewritten.
        new_validate = validate.clone();
    } else {
        return None;
    }
    out.insert("validate".into(), Value::Object(new_validate));
    Some(Value::Object(out))
}

/// Replaces the kinds of `match`/`exclude`: in `any` if present, else `all`,
/// else the legacy `resources` (for `exclude` only when it listed kinds).
/// The controller rule rewrites only filters that named Pod; the CronJob
/// rule rewrites every filter.
fn replace_kinds(block: &Value, kinds: &[&str], every_filter: bool, is_exclude: bool) -> Value {
    let mut block = block.clone();
    let new_kinds = Value::Array(kinds.iter().map(|k| Value::String((*k).into())).collect());
    let non_empty = |key: &str, b: &Value| {
        b.get(key)
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
    };
    let list_key = if non_empty("any", &block) {
        Some("any")
    } else if non_empty("all", &block) {
        Some("all")
    } else {
        None
    };
    match list_key {
        Some(key) => {
            if let Some(filters) = block.get_mut(key).and_then(Value::as_array_mut) {
                for filter in filters {
                    let Some(resources) =
                        filter.get_mut("resources").and_then(Value::as_object_mut)
                    else {
                        continue;
                    };
                    let names_pod = contains_kind(string_list(resources.get("kinds")), "Pod");
                    if every_filter || names_pod {
                        resources.insert("kinds".into(), new_kinds.clone());
                    }
                }
            }
        }
        None => {
            if let Some(map) = block.as_object_mut() {
                let resources = map
                    .entry("resources")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Some(resources) = resources.as_object_mut() {
                    let had_kinds = !string_list(resources.get("kinds")).is_empty();
                    if !is_exclude || had_kinds {
                        resources.insert("kinds".into(), new_kinds);
                    }
                }
            }
        }
    }
    block
}

/// Rewrites `request.object.spec` and friends everywhere in the rule, as a
/// plain substring replacement over its JSON (Kyverno's `updateFields`).
fn finish(rule: Value, plain: &[(&str, &str); 4], cel: &[(&str, &str); 4]) -> Value {
    let is_cel = rule.get("validate").and_then(|v| v.get("cel")).is_some();
    let table = if is_cel { cel } else { plain };
    rewrite_strings(rule, table)
}

fn rewrite_strings(mut value: Value, table: &[(&str, &str); 4]) -> Value {
    rewrite_in_place(&mut value, table);
    value
}

/// Replaces in place, allocating only for the strings that change: most
/// of a rule's strings name no `object` field at all.
fn rewrite_in_place(value: &mut Value, table: &[(&str, &str); 4]) {
    match value {
        Value::String(s) => {
            if let Cow::Owned(new) = rewrite_text(s, table) {
                *s = new;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| rewrite_in_place(v, table)),
        Value::Object(map) if map.keys().any(|k| needs_rewrite(k, table)) => {
            *map = std::mem::take(map)
                .into_iter()
                .map(|(k, mut v)| {
                    rewrite_in_place(&mut v, table);
                    (rewrite_text(&k, table).into_owned(), v)
                })
                .collect();
        }
        Value::Object(map) => map.values_mut().for_each(|v| rewrite_in_place(v, table)),
        _ => {}
    }
}

/// Whether a replacement of `table` applies to a key or text of `value`.
fn json_needs_rewrite(value: &Json<'_>, table: &[(&str, &str); 4]) -> bool {
    match value {
        Json::String(s) => needs_rewrite(s, table),
        Json::Array(items) => items.iter().any(|v| json_needs_rewrite(v, table)),
        Json::Object(map) => map
            .iter()
            .any(|(k, v)| needs_rewrite(k, table) || json_needs_rewrite(v, table)),
        _ => false,
    }
}

/// Whether a replacement of `table` applies to `s`. Every text replaced
/// names `object.` or `Object.`: one scan for that turns away most strings
/// (messages, names) before the four replacements are looked for.
fn needs_rewrite(s: &str, table: &[(&str, &str); 4]) -> bool {
    crate::scan::contains(s, &OBJECT_NEEDLE)
        && table
            .iter()
            .any(|(from, _)| starts(s, from).next().is_some())
}

/// `s` with the replacements of `table`, in order, as Kyverno's chain of
/// `strings.ReplaceAll`; borrowed when none applies.
fn rewrite_text<'s>(s: &'s str, table: &[(&str, &str); 4]) -> Cow<'s, str> {
    if !crate::scan::contains(s, &OBJECT_NEEDLE) {
        return Cow::Borrowed(s);
    }
    table
        .iter()
        .fold(Cow::Borrowed(s), |s, (from, to)| replace_all(s, from, to))
}

/// Go's `strings.ReplaceAll(s, from, to)`, keeping `s` when `from` does not
/// occur in it.
fn replace_all<'s>(s: Cow<'s, str>, from: &str, to: &str) -> Cow<'s, str> {
    // Room for two replacements: most texts name the object once or twice.
    let mut out = String::with_capacity(s.len() + 2 * to.len().saturating_sub(from.len()));
    let mut copied = 0;
    let mut replaced = false;
    for start in starts(&s, from) {
        out.push_str(s.get(copied..start).unwrap_or_default());
        out.push_str(to);
        copied = start + from.len();
        replaced = true;
    }
    if !replaced {
        return s;
    }
    out.push_str(s.get(copied..).unwrap_or_default());
    Cow::Owned(out)
}

/// Where `from` starts in `s`, leftmost first and without overlaps, as
/// `strings.ReplaceAll` finds them. Every `from` names `bject.` once, so
/// this scans only for that word: `str::contains` set up a two-way searcher
/// per text and replacement, most of autogen's cost in wasm.
fn starts<'s>(s: &'s str, from: &'s str) -> impl Iterator<Item = usize> + 's {
    let offset = crate::scan::positions(from, &OBJECT_NEEDLE).next();
    let mut free_from = 0;
    crate::scan::positions(s, &OBJECT_NEEDLE).filter_map(move |at| {
        let start = at.checked_sub(offset?)?;
        let found = start >= free_from
            && s.as_bytes().get(start..start + from.len()) == Some(from.as_bytes());
        found.then(|| {
            free_from = start + from.len();
            start
        })
    })
}

fn truncate_name(mut name: String) -> String {
    let mut end = name.len().min(63);
    while !name.is_char_boundary(end) {
        end -= 1;
    }
    name.truncate(end);
    name
}

/// Every kind named in a `match`/`exclude` block (legacy, `all`, `any`).
fn block_kinds(block: Option<&Value>) -> Vec<String> {
    let Some(block) = block else {
        return Vec::new();
    };
    let mut kinds = string_list(block.get("resources").and_then(|r| r.get("kinds")));
    for key in ["all", "any"] {
        for filter in block
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            kinds.extend(string_list(
                filter.get("resources").and_then(|r| r.get("kinds")),
            ));
        }
    }
    kinds
}

fn string_list(value: Option<&Value>) -> Vec<String> {
    value
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(str::to_string)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod_rule() -> Value {
        json!({
            "name": "check-labels",
            "match": {"any": [{"resources": {"kinds": ["Pod"], "namespaces": ["prod"]}}]},
            "preconditions": {"all": [{"key": "{{request.object.metadata.labels.app}}", "operator": "NotEquals", "value": ""}]},
            "validate": {
                "failureAction": "Enforce",
                "message": "missing team on {{request.object.metadata.name}}",
                "pattern": {"metadata": {"labels": {"team": "?*"}}}
            }
        })
    }

    #[test]
    fn every_template_controller_gets_an_autogen_rule() {
        for kind in [
            "DaemonSet",
            "Deployment",
            "Job",
            "StatefulSet",
            "ReplicaSet",
            "ReplicationController",
        ] {
            let generated = generate(&[pod_rule()], None, kind);
            assert_eq!(generated.len(), 1, "{kind}");
            let rule = &generated[0].rule;
            assert_eq!(rule["name"], json!("autogen-check-labels"), "{kind}");
            assert_eq!(
                rule["match"]["any"][0]["resources"]["kinds"],
                json!([kind]),
                "{kind}"
            );
            assert_eq!(
                rule["match"]["any"][0]["resources"]["namespaces"],
                json!(["prod"]),
                "{kind}"
            );
            assert_eq!(
                rule["validate"]["pattern"],
                json!({"spec": {"template": {"metadata": {"labels": {"team": "?*"}}}}}),
                "{kind}"
            );
            assert_eq!(
                rule["validate"]["message"],
                json!("missing team on {{request.object.spec.template.metadata.name}}"),
                "{kind}"
            );
            assert_eq!(
                rule["preconditions"]["all"][0]["key"],
                json!("{{request.object.spec.template.metadata.labels.app}}"),
                "{kind}"
            );
            assert_eq!(
                rule["validate"]["failureAction"],
                json!("Enforce"),
                "{kind}"
            );
        }
    }

    #[test]
    fn cronjobs_get_the_job_template_rule() {
        let generated = generate(&[pod_rule()], None, "CronJob");
        assert_eq!(generated.len(), 1);
        let rule = &generated[0].rule;
        assert_eq!(rule["name"], json!("autogen-cronjob-check-labels"));
        assert_eq!(
            rule["match"]["any"][0]["resources"]["kinds"],
            json!(["CronJob"])
        );
        assert_eq!(
            rule["validate"]["pattern"],
            json!({"spec": {"jobTemplate": {"spec": {"template": {"metadata": {"labels": {"team": "?*"}}}}}}})
        );
        assert_eq!(
            rule["validate"]["message"],
            json!(
                "missing team on {{request.object.spec.jobTemplate.spec.template.metadata.name}}"
            )
        );
    }

    #[test]
    fn bodies_are_rewritten_as_kyverno_does() {
        let any_pattern = json!({"name": "a", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"anyPattern": [{"spec": {"x": 1}}, {"spec": {"y": 2}}]}});
        let rule = &generate(&[any_pattern], None, "Deployment")[0].rule;
        assert_eq!(
            rule["validate"]["anyPattern"],
            json!([{"spec": {"template": {"spec": {"x": 1}}}}, {"spec": {"template": {"spec": {"y": 2}}}}])
        );
        let foreach = json!({"name": "f", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"foreach": [{"list": "request.object.spec.containers", "deny": {}}]}});
        let rule = &generate(&[foreach], None, "CronJob")[0].rule;
        assert_eq!(
            rule["validate"]["foreach"][0]["list"],
            json!("request.object.spec.jobTemplate.spec.template.spec.containers")
        );
        let cel = json!({"name": "c", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]},
            "validate": {"cel": {"expressions": [{"expression": "!has(object.spec.hostPID)"}]}}});
        let rule = &generate(&[cel], None, "StatefulSet")[0].rule;
        assert_eq!(
            rule["validate"]["cel"]["expressions"][0]["expression"],
            json!("!has(object.spec.template.spec.hostPID)")
        );
        let manifests = json!({"name": "m", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "validate": {"manifests": {}}});
        assert!(
            generate(&[manifests], None, "Deployment").is_empty(),
            "manifests_are_not_autogenerated"
        );
    }

    /// name, rules, autogenControllers, request kind, rules generated
    type Case = (
        &'static str,
        Vec<Value>,
        Option<&'static str>,
        &'static str,
        usize,
    );

    #[test]
    fn when_autogen_applies() {
        let with = |resources: Value| json!({"name": "r", "match": {"any": [{"resources": resources}]}, "validate": {"pattern": {}}});
        let cases: Vec<Case> = vec![
            (
                "pod_rule_for_deployment",
                vec![pod_rule()],
                None,
                "Deployment",
                1,
            ),
            ("pods_get_no_autogen", vec![pod_rule()], None, "Pod", 0),
            (
                "names_disable_autogen",
                vec![with(json!({"kinds": ["Pod"], "names": ["web"]}))],
                None,
                "Deployment",
                0,
            ),
            (
                "selector_disables_autogen",
                vec![with(json!({"kinds": ["Pod"], "selector": {}}))],
                None,
                "Deployment",
                0,
            ),
            (
                "annotations_disable_autogen",
                vec![with(json!({"kinds": ["Pod"], "annotations": {"a": "b"}}))],
                None,
                "Deployment",
                0,
            ),
            (
                "pod_mixed_with_other_kinds",
                vec![with(json!({"kinds": ["Pod", "Service"]}))],
                None,
                "Deployment",
                0,
            ),
            (
                "one_bad_rule_disables_the_policy",
                vec![pod_rule(), with(json!({"kinds": ["Pod"], "names": ["x"]}))],
                None,
                "Deployment",
                0,
            ),
            (
                "non_pod_rule_gets_none",
                vec![with(json!({"kinds": ["Deployment"]}))],
                None,
                "Deployment",
                0,
            ),
            (
                "controllers_list_allows",
                vec![pod_rule()],
                Some("Deployment,CronJob"),
                "CronJob",
                1,
            ),
            (
                "controllers_list_restricts",
                vec![pod_rule()],
                Some("Deployment,CronJob"),
                "Job",
                0,
            ),
            (
                "controllers_none",
                vec![pod_rule()],
                Some("none"),
                "Deployment",
                0,
            ),
            (
                "namespaces_keep_autogen",
                vec![with(json!({"kinds": ["Pod"], "namespaces": ["a"]}))],
                None,
                "Job",
                1,
            ),
        ];
        for (name, rules, controllers, kind, want) in cases {
            assert_eq!(generate(&rules, controllers, kind).len(), want, "{name}");
        }
    }

    #[test]
    fn every_replaced_text_names_an_object_field() {
        for table in [
            &POD_REPLACEMENTS,
            &POD_CEL_REPLACEMENTS,
            &CRONJOB_REPLACEMENTS,
            &CRONJOB_CEL_REPLACEMENTS,
        ] {
            for (from, _) in table {
                assert!(from.contains(OBJECT_FIELD), "{from}");
            }
        }
    }

    /// The scan for `bject.` replaces exactly as the chain of
    /// `str::replace` (Go's `strings.ReplaceAll`) it stands for.
    #[test]
    fn rewrite_text_replaces_as_a_chain_of_replace_all() {
        let texts = [
            "",
            "no field here",
            "{{ request.object.spec.containers[].image }}",
            "{{ request.object.metadata.name }}/{{ request.oldObject.metadata.name }}",
            "request.object.specrequest.object.spec",
            "request.object.spec.request.object.spec",
            "request.request.object.spec",
            "xrequest.object.metadata.labels",
            "request.oldObject.spec and request.object.spec",
            "object.spec.containers.all(c, oldObject.metadata.name == object.metadata.name)",
            "request.objec.spec bject. object. Object.",
            "é request.object.spec é",
            "request.object.metadat",
        ];
        for table in [
            &POD_REPLACEMENTS,
            &POD_CEL_REPLACEMENTS,
            &CRONJOB_REPLACEMENTS,
            &CRONJOB_CEL_REPLACEMENTS,
        ] {
            for text in texts {
                let want = table
                    .iter()
                    .fold(text.to_string(), |s, (from, to)| s.replace(from, to));
                let got = rewrite_text(text, table);
                assert_eq!(got, want, "{text}");
                assert_eq!(matches!(got, Cow::Owned(_)), want != text, "{text}");
                assert_eq!(needs_rewrite(text, table), want != text, "{text}");
            }
        }
    }

    #[test]
    fn generated_names_are_cut_to_63_bytes() {
        let mut rule = pod_rule();
        rule["name"] = json!("too-long-this-rule-name-will-be-truncated-to-63-characters");
        let name = |kind| generate(&[rule.clone()], None, kind)[0].rule["name"].clone();
        assert_eq!(
            name("Deployment"),
            json!("autogen-too-long-this-rule-name-will-be-truncated-to-63-charact")
        );
        assert_eq!(
            name("CronJob"),
            json!("autogen-cronjob-too-long-this-rule-name-will-be-truncated-to-63")
        );
    }
}
