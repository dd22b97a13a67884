//! Settings → compiled rules: what `validate_settings` checks and what a
//! rule's body compiles to once its `match` selected a request.

use serde_json::Value;

use crate::diagnostics::{key_path, Diagnostics};
use crate::pattern::Pattern;
use crate::settings::{self, ContextSource, MatchResources, PolicySpec, Rule, ValidationBody};

/// A rule body ready to evaluate.
#[derive(Debug, Clone, PartialEq)]
pub enum CompiledBody {
    Pattern(Pattern),
    AnyPattern(Vec<Pattern>),
}

/// Parses and compiles the whole policy, reporting every problem with its
/// settings path. Empty diagnostics mean the settings are valid.
pub fn check(settings: &Value) -> Diagnostics {
    let mut diags = Diagnostics::default();
    if let Some(spec) = settings::parse(settings, &mut diags) {
        check_policy_level(&spec, &mut diags);
        for rule in &spec.rules {
            check_selection(rule, &mut diags);
            compile_body(rule, &mut diags);
        }
    }
    diags
}

/// Policy-level features the engine cannot evaluate yet.
pub fn check_policy_level(spec: &PolicySpec, diags: &mut Diagnostics) {
    for (i, o) in spec.failure_action_overrides.iter().enumerate() {
        if o.namespace_selector.is_some() {
            diags.push(
                &format!("validationFailureActionOverrides[{i}].namespaceSelector"),
                "needs the namespace's labels, which the admission request does not carry: not supported yet",
            );
        }
    }
}

/// What `match`/`exclude` and the rule header use that the engine cannot
/// evaluate yet. Cheap: run for every rule on every request, so that such a
/// rule never silently matches or not.
pub fn check_selection(rule: &Rule, diags: &mut Diagnostics) {
    let blocks = [
        ("match", Some(&rule.match_resources)),
        ("exclude", rule.exclude.as_ref()),
    ];
    for (name, block) in blocks {
        if let Some(block) = block {
            check_match_block(block, &key_path(&rule.path, name), diags);
        }
    }
    for (i, o) in rule.validate.failure_action_overrides.iter().enumerate() {
        if o.namespace_selector.is_some() {
            diags.push(
                &format!("{}.validate.failureActionOverrides[{i}].namespaceSelector", rule.path),
                "needs the namespace's labels, which the admission request does not carry: not supported yet",
            );
        }
    }
}

fn check_match_block(block: &MatchResources, path: &str, diags: &mut Diagnostics) {
    let filters = block
        .any
        .iter()
        .enumerate()
        .map(|(i, f)| (format!("{path}.any[{i}]"), f))
        .chain(
            block
                .all
                .iter()
                .enumerate()
                .map(|(i, f)| (format!("{path}.all[{i}]"), f)),
        )
        .chain(block.legacy.iter().map(|f| (path.to_string(), f)));
    for (p, filter) in filters {
        if !filter.roles.is_empty() {
            diags.push(
                &key_path(&p, "roles"),
                "needs the requester's RoleBindings, which the admission request does not carry: not supported yet",
            );
        }
        if !filter.cluster_roles.is_empty() {
            diags.push(
                &key_path(&p, "clusterRoles"),
                "needs the requester's ClusterRoleBindings, which the admission request does not carry: not supported yet",
            );
        }
        if filter
            .resources
            .as_ref()
            .is_some_and(|r| r.namespace_selector.is_some())
        {
            diags.push(
                &key_path(&key_path(&p, "resources"), "namespaceSelector"),
                "needs the namespace's labels, which the admission request does not carry: not supported yet",
            );
        }
    }
}

/// Compiles the rule's body and rejects what the engine does not evaluate
/// yet. `None` when anything is wrong (the problems are in `diags`).
pub fn compile_body(rule: &Rule, diags: &mut Diagnostics) -> Option<CompiledBody> {
    let before = diags.errors().len();
    let path = &rule.path;
    for (i, entry) in rule.context.iter().enumerate() {
        let what = match entry.source {
            ContextSource::Variable { .. } => "context variables",
            ContextSource::External { kind } => kind,
        };
        diags.push(
            &format!("{path}.context[{i}]"),
            format!("`{what}` context entries are not supported yet"),
        );
    }
    if rule.preconditions.is_some() {
        diags.not_supported(&key_path(path, "preconditions"), "`preconditions`");
    }
    if !rule.cel_preconditions.is_empty() {
        diags.not_supported(&key_path(path, "celPreconditions"), "`celPreconditions`");
    }
    let validate_path = key_path(path, "validate");
    if let Some(message) = &rule.validate.message {
        if has_variables(message) {
            diags.not_supported(
                &key_path(&validate_path, "message"),
                "substituting variables (`{{ }}`, `$( )`) in `message`",
            );
        }
    }
    let body_path = key_path(&validate_path, rule.validate.body.key());
    let body = match &rule.validate.body {
        ValidationBody::Pattern(value) => {
            reject_variables(value, &body_path, diags);
            CompiledBody::Pattern(Pattern::compile(value, &body_path, diags))
        }
        ValidationBody::AnyPattern(values) => CompiledBody::AnyPattern(
            values
                .iter()
                .enumerate()
                .map(|(i, v)| {
                    let p = format!("{body_path}[{i}]");
                    reject_variables(v, &p, diags);
                    Pattern::compile(v, &p, diags)
                })
                .collect(),
        ),
        other => {
            diags.not_supported(&body_path, &format!("`validate.{}`", other.key()));
            return None;
        }
    };
    (diags.errors().len() == before).then_some(body)
}

fn has_variables(text: &str) -> bool {
    text.contains("{{") || text.contains("$(")
}

/// Variables in patterns need the expression engine, not built yet.
fn reject_variables(value: &Value, path: &str, diags: &mut Diagnostics) {
    let found = match value {
        Value::String(s) => has_variables(s),
        Value::Array(items) => {
            for item in items {
                reject_variables(item, path, diags);
            }
            false
        }
        Value::Object(map) => {
            for (k, v) in map {
                if has_variables(k) {
                    diags.not_supported(
                        &key_path(path, k),
                        "substituting variables in pattern keys",
                    );
                }
                reject_variables(v, &key_path(path, k), diags);
            }
            false
        }
        _ => false,
    };
    if found {
        diags.not_supported(path, "substituting variables (`{{ }}`, `$( )`) in patterns");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pod_rule(validate: Value) -> Value {
        json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "validate": validate})
    }

    /// Each case: settings, and the exact problems `validate_settings` reports.
    #[test]
    fn settings_problems_are_reported_with_their_paths() {
        let cases: Vec<(&str, Value, Vec<&str>)> = vec![
            ("valid_policy_has_no_problems", json!({"rules": [pod_rule(json!({"pattern": {"spec": {}}}))]}), vec![]),
            ("missing_rules", json!({}), vec!["rules: is required: list the validate rules to enforce"]),
            ("empty_rules", json!({"rules": []}), vec!["rules: must not be empty: list at least one validate rule"]),
            ("unknown_top_level_key", json!({"rules": [pod_rule(json!({"pattern": {}}))], "bogus": true}),
                vec!["bogus: unknown field `bogus`; expected one of admission, applyRules, autogenControllers, background, emitWarning, failurePolicy, generateExisting, generateExistingOnPolicyUpdate, mutateExistingOnPolicyUpdate, rules, schemaValidation, useServerSideApply, validationFailureAction, validationFailureActionOverrides, webhookConfiguration, webhookTimeoutSeconds"]),
            ("bad_failure_action", json!({"validationFailureAction": "Block", "rules": [pod_rule(json!({"pattern": {}}))]}),
                vec!["validationFailureAction: must be `Enforce` or `Audit`, not `Block`"]),
            ("duplicate_rule_names", json!({"rules": [pod_rule(json!({"pattern": {}})), pod_rule(json!({"pattern": {}}))]}),
                vec!["rules[1].name: duplicate rule name `r` (also used by rules[0])"]),
            ("mutate_rule", json!({"rules": [{"name": "m", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "mutate": {}}]}),
                vec!["rules[0].mutate: `mutate` rules are not supported: this policy enforces only validate rules"]),
            ("no_validation_kind", json!({"rules": [pod_rule(json!({"message": "x"}))]}),
                vec!["rules[0].validate: needs one of `pattern`, `anyPattern`, `deny`, `foreach`, `cel`, `podSecurity` or `manifests`"]),
            ("two_validation_kinds", json!({"rules": [pod_rule(json!({"pattern": {}, "deny": {}}))]}),
                vec!["rules[0].validate: has `pattern`, `deny`: a validate rule takes exactly one of them"]),
            ("malformed_anchor", json!({"rules": [pod_rule(json!({"pattern": {"spec": {"=(hostPID": false}}}))]}),
                vec!["rules[0].validate.pattern.spec.\"=(hostPID\": anchor `=(hostPID` is missing its closing `)`"]),
            ("empty_negation_anchor", json!({"rules": [pod_rule(json!({"pattern": {"X()": "x"}}))]}),
                vec!["rules[0].validate.pattern.\"X()\": anchor `X()` names no field"]),
            ("add_anchor_in_validate", json!({"rules": [pod_rule(json!({"pattern": {"+(a)": "x"}}))]}),
                vec!["rules[0].validate.pattern.\"+(a)\": unsupported anchor `+(a)`: add-if-not-present anchors belong to mutate rules"]),
            ("existence_anchor_needs_list", json!({"rules": [pod_rule(json!({"pattern": {"^(containers)": {"a": "b"}}}))]}),
                vec!["rules[0].validate.pattern.\"^(containers)\": existence anchor needs a list of patterns"]),
            ("bad_operator", json!({"rules": [pod_rule(json!({"pattern": {"spec": {"replicas": ">="}}}))]}),
                vec!["rules[0].validate.pattern.spec.replicas: operator in `>=` has no value to compare with"]),
            ("unknown_match_key", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kind": ["Pod"]}}]}, "validate": {"pattern": {}}}]}),
                vec!["rules[0].match.any[0].resources.kind: unknown field `kind`; expected one of annotations, kinds, name, names, namespaceSelector, namespaces, operations, selector"]),
            ("cluster_data_in_match", json!({"rules": [{"name": "r", "match": {"any": [{"clusterRoles": ["admin"], "resources": {"kinds": ["Pod"], "namespaceSelector": {}}}]}, "validate": {"pattern": {}}}]}),
                vec![
                    "rules[0].match.any[0].clusterRoles: needs the requester's ClusterRoleBindings, which the admission request does not carry: not supported yet",
                    "rules[0].match.any[0].resources.namespaceSelector: needs the namespace's labels, which the admission request does not carry: not supported yet",
                ]),
            ("not_yet_supported_bodies", json!({"rules": [pod_rule(json!({"deny": {}}))]}),
                vec!["rules[0].validate.deny: `validate.deny` is not supported yet"]),
            ("variables_in_pattern", json!({"rules": [pod_rule(json!({"pattern": {"metadata": {"name": "{{ request.name }}"}}}))]}),
                vec!["rules[0].validate.pattern.metadata.name: substituting variables (`{{ }}`, `$( )`) in patterns is not supported yet"]),
            ("every_problem_at_once", json!({"applyRules": "Some", "rules": [pod_rule(json!({})), {"name": "b"}]}),
                vec![
                    "rules[0].validate: needs one of `pattern`, `anyPattern`, `deny`, `foreach`, `cel`, `podSecurity` or `manifests`",
                    "rules[1]: `match` is required: say which resources the rule applies to",
                    "rules[1]: `validate` is required: this policy enforces validate rules",
                    "applyRules: must be `All` or `One`, not `Some`",
                ]),
        ];
        for (name, settings, want) in cases {
            let got: Vec<String> = check(&settings)
                .into_errors()
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }
}
