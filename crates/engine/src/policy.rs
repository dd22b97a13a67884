//! Settings → compiled rules: what `validate_settings` checks and what a
//! rule's body compiles to once its `match` selected a request.

use std::borrow::Cow;

use crate::conditions::CompiledConditions;
use crate::diagnostics::{key_path, Diagnostics};
use crate::json::Json;
use crate::match_conditions::{MatchConditions, MATCH_CONDITIONS};
use crate::pss;
use crate::results::RuleText;
use crate::rule::{self, CompiledRule};
use crate::settings::{self, Rule};
use crate::variables::Document;

/// Parses and compiles the whole policy, reporting every problem with its
/// settings path. Empty diagnostics mean the settings are valid.
pub fn check(settings: &Json<'_>) -> Diagnostics {
    let mut diags = Diagnostics::default();
    if let Some(spec) = settings::parse(settings, &mut diags) {
        for rule in &spec.rules {
            compile_rule(rule, false, &mut diags);
        }
        MatchConditions::compile(&spec.match_conditions, MATCH_CONDITIONS, &mut diags);
        for exception in &spec.exceptions {
            let path = key_path(&exception.path, "spec");
            if let Some(conditions) = &exception.conditions {
                let path = key_path(&path, "conditions");
                CompiledConditions::compile(conditions, &path, false, &mut diags);
            }
            let path = key_path(&path, "podSecurity");
            pss::check_exemptions(&exception.pod_security, &path, &mut diags);
        }
    }
    diags
}

/// Compiles a selected rule and rejects what the engine does not evaluate
/// yet. `delete` applies Kyverno's DELETE rewrite of `request.object` in
/// variables. `None` when anything is wrong (the problems are in `diags`).
/// With quiet `diags` (a request), a body that can wait for the rule's
/// preconditions (see [`CompiledRule::deferring`]) is compiled only when
/// they pass, and its problems show then; a `foreach` entry waits for its
/// first element the same way.
pub fn compile_rule<'a>(
    rule: &'a Rule<'a>,
    delete: bool,
    diags: &mut Diagnostics,
) -> Option<CompiledRule<'a>> {
    let defer = diags.is_quiet() && CompiledRule::deferring(rule);
    let before = diags.errors().len();
    let path = &rule.path;
    let cel_preconditions = if rule.cel_preconditions.is_empty() {
        None
    } else {
        crate::cel::Preconditions::compile(
            &rule.cel_preconditions,
            &diags.key_path(path, "celPreconditions"),
            diags,
        )
        .map(std::sync::Arc::new)
    };
    let context = crate::context_entries::compile_context(&rule.context, path, true, delete, diags);
    let preconditions_path = diags.key_path(path, "preconditions");
    let preconditions = rule
        .preconditions
        .as_ref()
        .map(|c| CompiledConditions::compile(c, &preconditions_path, delete, diags));
    let validate_path = diags.key_path(path, "validate");
    let message_path = diags.key_path(&validate_path, "message");
    // A message without variables is used as written.
    let message = rule
        .validate
        .message
        .as_ref()
        .filter(|m| crate::variables::has_variables(m))
        .map(|m| {
            let doc = Document::compile(&Json::String(Cow::Borrowed(m)), "", delete);
            crate::variables::report_problems(&doc, &message_path, diags);
            crate::variables::check_no_element(&doc, &message_path, diags);
            doc
        });
    if let Some(pre) = &preconditions {
        for doc in pre.documents() {
            crate::variables::check_no_element(doc, &preconditions_path, diags);
        }
    }
    let body = if defer {
        None
    } else {
        Some(rule::compile_rule_body(rule, delete, diags)?)
    };
    let compiled = CompiledRule::new(
        RuleText {
            name: &rule.name,
            raw_message: rule.validate.message.as_deref(),
            message,
        },
        context,
        preconditions,
        cel_preconditions,
        body,
        rule,
        delete,
    );
    (diags.errors().len() == before).then_some(compiled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{json, Value};

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
                vec!["bogus: unknown field `bogus`; expected one of admission, applyRules, autogenControllers, background, emitWarning, exceptions, failurePolicy, generateExisting, generateExistingOnPolicyUpdate, globalContextEntries, mutateExistingOnPolicyUpdate, policyName, rules, schemaValidation, useServerSideApply, validationFailureAction, validationFailureActionOverrides, webhookConfiguration, webhookTimeoutSeconds"]),
            ("background_only_policy_is_valid", json!({"rules": [pod_rule(json!({"pattern": {}}))], "admission": false, "background": true}), vec![]),
            ("policy_processed_nowhere_is_refused", json!({"rules": [pod_rule(json!({"pattern": {}}))], "admission": false, "background": false}),
                vec!["admission: and `background` are both false: Kyverno refuses a policy that runs neither at admission nor in background scans"]),
            ("admission_and_background_are_booleans", json!({"rules": [pod_rule(json!({"pattern": {}}))], "admission": "false", "background": 1}),
                vec!["admission: must be true or false, not a string", "background: must be true or false, not a number"]),
            ("match_conditions_are_named_once_and_compile", json!({"rules": [pod_rule(json!({"pattern": {}}))],
                "webhookConfiguration": {"matchConditions": [{"name": "a", "expression": "true"}, {"name": "a", "expression": "object.x == "},
                    {"expression": "true"}]}}),
                vec![
                    "webhookConfiguration.matchConditions[1].name: `a` is used twice: names must be unique",
                    "webhookConfiguration.matchConditions[2]: `name` is required",
                    "webhookConfiguration.matchConditions[1].expression: `object.x == ` does not compile: at line 1, column 13: expected an expression, found the end of the expression",
                ]),
            ("cel_literal_patterns_are_compiled", json!({"rules": [pod_rule(json!({"cel": {"expressions": [
                    {"expression": "object.metadata.name.matches('^[a-z]+$') && duration('1h') > duration('1m')"},
                    {"expression": "object.metadata.name.matches('[a-z')"}]}}))]}),
                vec!["rules[0].validate.cel.expressions[1].expression: `object.metadata.name.matches('[a-z')` does not compile: at line 1, column 30: invalid matches argument"]),
            ("cel_literals_of_mixed_types_are_refused", json!({"rules": [pod_rule(json!({"cel": {"expressions": [
                    {"expression": "object.metadata.name in ['a', 'b'] || '%s %s'.format([1, 'x']) != ''"},
                    {"expression": "object.spec.replicas in [1, 'two']"}]}}))]}),
                vec!["rules[0].validate.cel.expressions[1].expression: `object.spec.replicas in [1, 'two']` does not compile: at line 1, column 25: expected type 'int' but found 'string'"]),
            ("failure_policy_value_is_checked", json!({"rules": [pod_rule(json!({"pattern": {}}))], "failurePolicy": "Skip"}),
                vec!["failurePolicy: must be `Fail` or `Ignore`, not `Skip`"]),
            ("webhook_failure_policy_is_checked", json!({"rules": [pod_rule(json!({"pattern": {}}))], "webhookConfiguration": {"failurePolicy": "ignore", "timeoutSeconds": 10}}),
                vec!["webhookConfiguration.failurePolicy: must be `Fail` or `Ignore`, not `ignore`"]),
            ("misspelled_field_gets_a_suggestion", json!({"rules": [pod_rule(json!({"pattern": {}}))], "validationFailureActon": "Enforce"}),
                vec!["validationFailureActon: unknown field `validationFailureActon`: did you mean `validationFailureAction`?"]),
            ("allowed_fields_listed_once_per_object", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"], "foo": 1, "bar": 2}}]}, "validate": {"pattern": {}}}]}),
                vec![
                    "rules[0].match.any[0].resources.bar: unknown field `bar`; expected one of annotations, kinds, name, names, namespaceSelector, namespaces, operations, selector",
                    "rules[0].match.any[0].resources.foo: unknown field `foo`",
                ]),
            ("misspelled_nested_field", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kind": ["Pod"]}}]}, "validate": {"patern": {}}}]}),
                vec![
                    "rules[0].match.any[0].resources.kind: unknown field `kind`: did you mean `kinds`?",
                    "rules[0].validate.patern: unknown field `patern`: did you mean `pattern`?",
                    "rules[0].validate: needs one of `pattern`, `anyPattern`, `deny`, `foreach`, `cel`, `podSecurity` or `manifests`",
                ]),
            ("cel_syntax_error", json!({"rules": [pod_rule(json!({"cel": {"expressions": [{"expression": "object.spec.replicas >"}]}}))]}),
                vec!["rules[0].validate.cel.expressions[0].expression: `object.spec.replicas >` does not compile: at line 1, column 23: expected an expression, found the end of the expression"]),
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
            ("cluster_data_in_match_is_valid", json!({"rules": [{"name": "r", "match": {"any": [{"clusterRoles": ["admin"], "resources": {"kinds": ["Pod"], "namespaceSelector": {}}}]}, "validate": {"pattern": {}}}]}),
                vec![]),
            ("manifests_need_attestors", json!({"rules": [pod_rule(json!({"manifests": {}}))]}),
                vec!["rules[0].validate.manifests.attestors: needs at least one attestor set"]),
            ("exception_needs_policy_name", json!({"rules": [pod_rule(json!({"pattern": {}}))],
                "exceptions": [{"apiVersion": "kyverno.io/v2", "kind": "PolicyException", "metadata": {"name": "e"},
                    "spec": {"exceptions": [{"policyName": "p", "ruleNames": ["r"]}], "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}}}]}),
                vec!["exceptions: need `policyName`: exceptions name the policy they exempt rules of"]),
            ("exception_match_has_no_legacy_form", json!({"policyName": "p", "rules": [pod_rule(json!({"pattern": {}}))],
                "exceptions": [{"apiVersion": "kyverno.io/v2", "kind": "PolicyException", "metadata": {"name": "e"},
                    "spec": {"exceptions": [{"policyName": "p", "ruleNames": ["r"]}], "match": {"resources": {"kinds": ["Pod"]}}}}]}),
                vec!["exceptions[0].spec.match.resources: a PolicyException's `match` takes only `any` and `all`"]),
            ("exception_for_another_policy", json!({"policyName": "mine", "rules": [pod_rule(json!({"pattern": {}}))],
                "exceptions": [{"apiVersion": "kyverno.io/v2", "kind": "PolicyException", "metadata": {"name": "e"},
                    "spec": {"exceptions": [{"policyName": "theirs", "ruleNames": ["r"]}], "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}}}]}),
                vec!["exceptions[0]: exempts no rule of this policy: its `policyName`s differ from `mine`"]),
            ("exception_problems_have_paths", json!({"policyName": "p", "rules": [pod_rule(json!({"pattern": {}}))],
                "exceptions": [{"apiVersion": "kyverno.io/v1", "kind": "PolicyException"},
                    {"apiVersion": "kyverno.io/v2beta1", "kind": "PolicyException", "metadata": {"name": "e"},
                    "spec": {"exceptions": [{"policyName": "p", "ruleNames": []}],
                        "conditions": {"any": [{"key": "{{ request.[ }}", "operator": "Equals", "value": "x"}]},
                        "podSecurity": [{"controlName": "Capabilities"}]}}]}),
                vec![
                    "exceptions[0]: must be a `PolicyException` (kyverno.io/v2 or kyverno.io/v2beta1), not a `kyverno.io/v1` `PolicyException`",
                    "exceptions[1].spec.exceptions[0]: `ruleNames` must name at least one rule",
                    "exceptions[1].spec.match: is required: say which resources the exception applies to",
                    "exceptions[1].spec.conditions.any[0].key: variable `{{request.[}}`: syntax error at column 10: expected a value, found the end of the expression (after `request.[`)",
                    "exceptions[1].spec.podSecurity[0].controlName: \"Capabilities\" is a container level control: exclude.images must be specified",
                ]),
            ("variables_in_pattern_are_valid", json!({"rules": [pod_rule(json!({"pattern": {"metadata": {"name": "{{ request.name }}"}}}))]}), vec![]),
            ("bad_expression_in_pattern", json!({"rules": [pod_rule(json!({"pattern": {"metadata": {"name": "{{ request.[ }}"}}}))]}),
                vec!["rules[0].validate.pattern.metadata.name: variable `{{request.[}}`: syntax error at column 10: expected a value, found the end of the expression (after `request.[`)"]),
            ("unknown_function_in_message", json!({"rules": [pod_rule(json!({"message": "{{ nope(request) }}", "pattern": {}}))]}),
                vec!["rules[0].validate.message: variable `{{nope(request)}}`: unknown function: nope()"]),
            ("element_outside_foreach", json!({"rules": [pod_rule(json!({"deny": {"conditions": {"any": [{"key": "{{ element.name }}", "operator": "Equals", "value": "x"}]}}}))]}),
                vec!["rules[0].validate.deny.conditions: variable `element.name` present outside of foreach"]),
            ("unknown_condition_operator", json!({"rules": [pod_rule(json!({"deny": {"conditions": {"all": [{"key": "a", "operator": "Matches", "value": "x"}]}}}))]}),
                vec!["rules[0].validate.deny.conditions.all[0].operator: unknown operator `Matches`; expected one of Equals, NotEquals, AnyIn, AllIn, AnyNotIn, AllNotIn, GreaterThan, GreaterThanOrEquals, LessThan, LessThanOrEquals, DurationGreaterThan, DurationGreaterThanOrEquals, DurationLessThan, DurationLessThanOrEquals, Equal, NotEqual, In, NotIn"]),
            ("reserved_context_name", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "context": [{"name": "request", "variable": {"value": 1}}], "validate": {"deny": {}}}]}),
                vec!["rules[0].context[0].name: entry name `request` is invalid as it conflicts with a pre-defined variable `request`"]),
            ("global_reference_entry_is_valid", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "context": [{"name": "g", "globalReference": {"name": "x.y", "jmesPath": "length(@)"}}], "validate": {"deny": {}}}]}), vec![]),
            ("global_reference_needs_a_name", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "context": [{"name": "g", "globalReference": {"jmesPath": "length(@)"}}], "validate": {"deny": {}}}]}),
                vec!["rules[0].context[0].globalReference: needs `name`: the GlobalContextEntry (`entry` or `entry.projection`)"]),
            ("global_context_entries_are_checked", json!({"globalContextEntries": [
                    {"apiVersion": "kyverno.io/v2alpha1", "kind": "GlobalContextEntry", "metadata": {"name": "ok"},
                        "spec": {"kubernetesResource": {"group": "apps", "version": "v1", "resource": "deployments"}}},
                    {"apiVersion": "kyverno.io/v2alpha1", "kind": "GlobalContextEntry", "metadata": {"name": "both"},
                        "spec": {"kubernetesResource": {"version": "v1", "resource": "pods"}, "apiCall": {"urlPath": "/api/v1/pods"}}},
                    {"apiVersion": "kyverno.io/v2beta1", "kind": "GlobalContextEntry", "metadata": {"name": "ext"},
                        "spec": {"apiCall": {"service": {"url": "https://x"}, "refreshInterval": "10s"},
                            "projections": [{"name": "ext", "jmesPath": "a["}]}},
                    {"apiVersion": "kyverno.io/v2beta1", "kind": "GlobalContextEntry", "metadata": {"name": "nogroup"},
                        "spec": {"kubernetesResource": {"version": "v1beta1", "resource": "widgets"}}},
                    {"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "p"}}],
                "rules": [pod_rule(json!({"deny": {}}))]}),
                vec![
                    "globalContextEntries[1].spec.kubernetesResource: a global context entry needs exactly one of `kubernetesResource` and `apiCall`",
                    "globalContextEntries[2].spec.apiCall.service: calls to services are arbitrary HTTP requests, which Kubewarden's host capabilities cannot make; read Kubernetes resources with `urlPath`",
                    "globalContextEntries[2].spec.projections[0].name: must differ from the global context entry's name",
                    "globalContextEntries[2].spec.projections[0].jmesPath: `a[`: syntax error at column 3: expected number, `:`, or `*`, found the end of the expression (after `a[`)",
                    "globalContextEntries[3].spec.kubernetesResource: needs `group` (only the core group's `v1` has none)",
                    "globalContextEntries[4]: must be a `GlobalContextEntry` (kyverno.io/v2beta1 or kyverno.io/v2alpha1 or kyverno.io/v2), not a `kyverno.io/v1` `ClusterPolicy`",
                ]),
            ("api_call_entry_is_valid", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "context": [{"name": "cm", "apiCall": {"urlPath": "/api/v1/namespaces", "jmesPath": "items[].metadata.name"}}], "validate": {"deny": {}}}]}), vec![]),
            ("api_call_with_a_bad_jmes_path", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "context": [{"name": "cm", "apiCall": {"urlPath": "/api/v1/namespaces", "jmesPath": "items[?"}}], "validate": {"deny": {}}}]}),
                vec!["rules[0].context[0].apiCall.jmesPath: `items[?`: syntax error at column 8: expected a value, found the end of the expression (after `items[?`)"]),
            ("config_map_entry_is_valid", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "context": [{"name": "cm", "configMap": {"name": "x", "namespace": "{{ request.namespace }}"}}], "validate": {"deny": {}}}]}), vec![]),
            ("config_map_entry_needs_a_name", json!({"rules": [{"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "context": [{"name": "cm", "configMap": {"namespace": "y"}}], "validate": {"deny": {}}}]}),
                vec!["rules[0].context[0].configMap: `name` is required"]),
            ("every_problem_at_once", json!({"applyRules": "Some", "rules": [pod_rule(json!({})), {"name": "b"}]}),
                vec![
                    "rules[0].validate: needs one of `pattern`, `anyPattern`, `deny`, `foreach`, `cel`, `podSecurity` or `manifests`",
                    "rules[1]: `match` is required: say which resources the rule applies to",
                    "rules[1]: `validate` is required: this policy enforces validate rules",
                    "applyRules: must be `All` or `One`, not `Some`",
                ]),
        ];
        for (name, settings, want) in cases {
            let got: Vec<String> = check(&Json::borrow(&settings))
                .into_errors()
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(got, want, "{name}");
        }
    }

    fn manifest(api_version: &str, kind: &str, spec: Value) -> Value {
        json!({"apiVersion": api_version, "kind": kind,
            "metadata": {"name": "require-labels", "annotations": {"pod-policies.kyverno.io/autogen-controllers": "none"}},
            "spec": spec})
    }

    #[test]
    fn whole_policy_manifests_are_accepted_as_settings() {
        let spec = json!({"validationFailureAction": "Enforce", "rules": [pod_rule(json!({"pattern": {"spec": {}}}))]});
        for (api_version, kind) in [
            ("kyverno.io/v1", "ClusterPolicy"),
            ("kyverno.io/v1", "Policy"),
            ("kyverno.io/v2beta1", "ClusterPolicy"),
        ] {
            let diags = check(&Json::borrow(&manifest(api_version, kind, spec.clone())));
            assert!(
                diags.is_empty(),
                "{api_version} {kind}: {}",
                diags.summary()
            );
        }
        let mut parsed_diags = Diagnostics::default();
        let document = manifest("kyverno.io/v1", "ClusterPolicy", spec);
        let document = Json::borrow(&document);
        let parsed = settings::parse(&document, &mut parsed_diags).expect("a policy");
        assert_eq!(parsed.policy_name.as_deref(), Some("require-labels"));
        assert_eq!(parsed.autogen_controllers.as_deref(), Some("none"));
    }

    #[test]
    fn manifest_problems_point_into_its_spec() {
        let bad = manifest(
            "kyverno.io/v1",
            "ClusterPolicy",
            json!({"rules": [pod_rule(json!({}))], "validationFailureActon": "Enforce"}),
        );
        let got: Vec<String> = check(&Json::borrow(&bad))
            .into_errors()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            vec![
                "spec.validationFailureActon: unknown field `validationFailureActon`: did you mean `validationFailureAction`?",
                "spec.rules[0].validate: needs one of `pattern`, `anyPattern`, `deny`, `foreach`, `cel`, `podSecurity` or `manifests`",
            ]
        );
        let no_spec = json!({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "x"}});
        let got: Vec<String> = check(&Json::borrow(&no_spec))
            .into_errors()
            .iter()
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            got,
            vec!["spec: is required: the Kyverno policy's `spec` holds its rules"]
        );
    }

    #[test]
    fn other_kinds_are_rejected_saying_what_was_given() {
        let spec = json!({"rules": [pod_rule(json!({"pattern": {}}))]});
        let cases = [
            ("validating_policy", manifest("policies.kyverno.io/v1alpha1", "ValidatingPolicy", spec.clone()),
                "the settings are a `policies.kyverno.io/v1alpha1` `ValidatingPolicy`; expected a Kyverno policy's `spec`, or a whole `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1)"),
            ("kubewarden_policy", manifest("policies.kubewarden.io/v1", "ClusterAdmissionPolicy", spec.clone()),
                "the settings are a `policies.kubewarden.io/v1` `ClusterAdmissionPolicy`; expected a Kyverno policy's `spec`, or a whole `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1): a Kubewarden policy's settings go in its `spec.settings`"),
            ("pod", json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": []}}),
                "the settings are a `v1` `Pod`; expected a Kyverno policy's `spec`, or a whole `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1)"),
            ("spec_without_kind", json!({"spec": spec.clone()}),
                "the settings are a document with `spec` but no `apiVersion` and `kind`; expected a Kyverno policy's `spec`, or a whole `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1)"),
        ];
        for (name, settings, want) in cases {
            let got: Vec<String> = check(&Json::borrow(&settings))
                .into_errors()
                .iter()
                .map(ToString::to_string)
                .collect();
            assert_eq!(got, vec![want.to_string()], "{name}");
        }
    }

    #[test]
    fn failure_policy_decides_whether_errors_block() {
        // (case, settings fields, whether a rule's error blocks)
        let cases = [
            ("default_is_fail", json!({}), true),
            ("ignore", json!({"failurePolicy": "Ignore"}), false),
            ("fail", json!({"failurePolicy": "Fail"}), true),
            (
                "webhook_configuration_wins",
                json!({"failurePolicy": "Fail", "webhookConfiguration": {"failurePolicy": "Ignore"}}),
                false,
            ),
            (
                "webhook_configuration_without_one",
                json!({"failurePolicy": "Ignore", "webhookConfiguration": {"timeoutSeconds": 5}}),
                false,
            ),
        ];
        for (name, fields, want) in cases {
            let mut settings = fields;
            settings["rules"] = json!([pod_rule(json!({"pattern": {}}))]);
            let text = settings.to_string();
            let json = crate::json::Json::parse(text.as_bytes()).unwrap();
            let mut diags = Diagnostics::default();
            let spec = crate::settings::parse(&json, &mut diags).unwrap();
            assert!(diags.is_empty(), "{name}");
            assert_eq!(spec.errors_block, want, "{name}");
        }
    }
}
