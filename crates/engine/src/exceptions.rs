//! Kyverno's PolicyExceptions: a rule is exempted for a request when an
//! exception names the policy and the rule, its `match` selects the request
//! and its `conditions` hold. Exceptions come with the settings and, when the
//! host lets the policy read them, from the cluster.

use serde_json::Value;

use crate::cluster::{Cached, Lookup};
use crate::conditions::CompiledConditions;
use crate::context::Context;
use crate::diagnostics::Diagnostics;
use crate::json::Json;
use crate::matching::{exception_applies, selects_by_namespace_labels, selects_by_roles, Target};
use crate::request::AdmissionRequest;
use crate::roles::{self, Roles};
use crate::settings::{parse_exception, PodSecurityExclude, PolicyException};
use crate::wildcard;

/// The versions PolicyExceptions are served as, newest first: a cluster
/// with an older Kyverno serves only `v2beta1`.
const API_VERSIONS: [&str; 2] = ["kyverno.io/v2", "kyverno.io/v2beta1"];

/// The cluster's PolicyExceptions. An exception only relaxes a policy, so
/// exceptions that cannot be read (the policy may not read them, or Kyverno's
/// CRDs are not installed) or that Kyverno would have refused are left out:
/// the policy then applies in full.
fn from_cluster(cluster: &Cached<'_>) -> Vec<PolicyException> {
    for api_version in API_VERSIONS {
        let Ok(list) = cluster.fetch(&Lookup::list_all(api_version, "PolicyException")) else {
            continue;
        };
        let items = list.get("items").and_then(Value::as_array);
        return items
            .into_iter()
            .flatten()
            .filter_map(|item| {
                let mut diags = Diagnostics::quiet();
                let parsed = parse_exception(&Json::borrow(item), "", &mut diags)?;
                diags.is_empty().then_some(parsed)
            })
            .collect();
    }
    Vec::new()
}

/// Whether `exception` names rule `rule` of the policy Kyverno calls `policy`
/// (rule names may hold wildcards).
fn names(exception: &PolicyException, policy: &str, rule: &str) -> bool {
    exception
        .targets
        .iter()
        .any(|t| t.policy_name == policy && t.rule_names.iter().any(|r| wildcard::matches(r, rule)))
}

/// Whether deciding if `exception` selects a request needs the namespace's
/// labels, or the requester's roles.
fn needs_labels(exception: &PolicyException) -> bool {
    selects_by_namespace_labels(&exception.match_resources, None)
}

fn needs_roles(exception: &PolicyException) -> bool {
    selects_by_roles(&exception.match_resources, None)
}

/// Whether the exception's `match` selects the request.
fn selects(exception: &PolicyException, target: &Target<'_>) -> bool {
    exception_applies(&exception.match_resources, target)
}

/// Of exceptions whose `match` selected the request, those whose
/// `conditions` hold in `ctx`. An exception whose conditions cannot be
/// evaluated does not hold: Kyverno logs it and checks the next one.
fn holding<'e>(
    exceptions: &[&'e PolicyException],
    ctx: &Context,
    delete: bool,
) -> Vec<&'e PolicyException> {
    exceptions
        .iter()
        .copied()
        .filter(|exception| {
            let Some(conditions) = &exception.conditions else {
                return true;
            };
            let mut diags = Diagnostics::quiet();
            let compiled = CompiledConditions::compile(conditions, "", delete, &mut diags);
            diags.is_empty() && matches!(compiled.evaluate(ctx), Ok((true, _)))
        })
        .collect()
}

/// What the exceptions that hold for a rule do to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Exempted {
    /// Kyverno's skip message, naming the exceptions.
    pub message: String,
    /// When every exception exempts pod security controls: those controls,
    /// which relax a `podSecurity` rule instead of skipping it.
    pub controls: Option<Vec<PodSecurityExclude>>,
}

/// The policy exceptions that may exempt a policy's rules from one
/// request. Kyverno consults them once a rule's context has loaded and its
/// preconditions passed; they are looked up at the first rule that needs
/// them, so a request whose rules all pass never lists the cluster's.
pub struct Exemptions<'s> {
    /// The policy as exceptions name it (`namespace/name` or `name`).
    policy: String,
    from_settings: &'s [PolicyException],
    /// Listed at the first need.
    from_cluster: Option<Vec<PolicyException>>,
    /// The requester's roles, when rule selection resolved them; otherwise
    /// resolved when an exception selects by them. (The Namespace's labels
    /// need no copy here: the cluster's cache answers them.)
    roles: Option<Roles>,
}

impl<'s> Exemptions<'s> {
    pub fn new(policy: String, from_settings: &'s [PolicyException], roles: Option<Roles>) -> Self {
        Self {
            policy,
            from_settings,
            from_cluster: None,
            roles,
        }
    }

    /// The exceptions that exempt rule `rule` from the request in `ctx`,
    /// if any.
    pub fn for_rule(
        &mut self,
        rule: &str,
        ctx: &Context,
        cluster: &Cached<'_>,
        delete: bool,
    ) -> Option<Exempted> {
        let Self {
            policy,
            from_settings,
            from_cluster,
            roles,
        } = self;
        let listed = from_cluster.get_or_insert_with(|| self::from_cluster(cluster));
        let naming: Vec<&PolicyException> = from_settings
            .iter()
            .chain(listed.iter())
            .filter(|e| names(e, policy, rule))
            .collect();
        if naming.is_empty() {
            return None;
        }
        let view = AdmissionRequest::new(ctx.request());
        let mut target = Target::new(&view);
        if target.has_namespace_labels() && naming.iter().any(|e| needs_labels(e)) {
            // Without the labels such an exception cannot select: the rule applies.
            target.namespace_labels = cluster.namespace_labels(target.namespace).ok();
        }
        if naming.iter().any(|e| needs_roles(e)) {
            if roles.is_none() {
                *roles = roles::resolve(&target.requester(), cluster).ok();
            }
            target.roles = roles.clone();
        }
        let selecting: Vec<&PolicyException> =
            naming.into_iter().filter(|e| selects(e, &target)).collect();
        let held = holding(&selecting, ctx, delete);
        if held.is_empty() {
            return None;
        }
        Some(Exempted {
            message: skip_message(&held),
            controls: held.iter().all(|e| !e.pod_security.is_empty()).then(|| {
                held.iter()
                    .flat_map(|e| e.pod_security.iter().cloned())
                    .collect()
            }),
        })
    }
}

/// Kyverno's message for a rule skipped by exceptions (without a space
/// before the names, as Kyverno writes it).
fn skip_message(exceptions: &[&PolicyException]) -> String {
    let keys: Vec<&str> = exceptions.iter().map(|e| e.key.as_str()).collect();
    format!(
        "rule is skipped due to policy exceptions{}",
        keys.join(", ")
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::AdmissionRequest;
    use serde_json::json;

    fn exception(spec: Value) -> PolicyException {
        let manifest = json!({"apiVersion": "kyverno.io/v2", "kind": "PolicyException",
            "metadata": {"name": "allow", "namespace": "kyverno"}, "spec": spec});
        let mut diags = Diagnostics::default();
        let parsed =
            parse_exception(&Json::borrow(&manifest), "exceptions[0]", &mut diags).unwrap();
        assert!(diags.is_empty(), "{}", diags.summary());
        parsed
    }

    #[test]
    fn an_exception_names_rules_of_one_policy_with_wildcards() {
        let e = exception(json!({
            "exceptions": [{"policyName": "disallow-host", "ruleNames": ["host-*", "exact"]}],
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}}));
        let cases = [
            ("wildcard_rule", "disallow-host", "host-namespaces", true),
            ("exact_rule", "disallow-host", "exact", true),
            (
                "autogen_rule_not_named",
                "disallow-host",
                "autogen-host-namespaces",
                false,
            ),
            ("other_policy", "other", "exact", false),
            (
                "namespaced_policy_key_differs",
                "ns/disallow-host",
                "exact",
                false,
            ),
        ];
        for (name, policy, rule, expected) in cases {
            assert_eq!(names(&e, policy, rule), expected, "{name}");
        }
        assert_eq!(e.key, "kyverno/allow");
    }

    #[test]
    fn match_selects_and_conditions_decide() {
        let e = exception(json!({
            "exceptions": [{"policyName": "p", "ruleNames": ["r"]}],
            "match": {"any": [{"resources": {"kinds": ["Pod"], "namespaces": ["delta"], "names": ["tool-*"]}}]},
            "conditions": {"any": [{"key": "{{ request.object.metadata.labels.color || '' }}", "operator": "Equals", "value": "blue"}]}}));
        let request = |namespace: &str, name: &str, color: &str| {
            json!({"operation": "CREATE", "namespace": namespace,
                "kind": {"group": "", "version": "v1", "kind": "Pod"},
                "object": {"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": name, "namespace": namespace, "labels": {"color": color}}}})
        };
        let cases = [
            (
                "selected_and_holding",
                request("delta", "tool-1", "blue"),
                true,
                true,
            ),
            (
                "selected_condition_false",
                request("delta", "tool-1", "red"),
                true,
                false,
            ),
            (
                "other_namespace",
                request("prod", "tool-1", "blue"),
                false,
                false,
            ),
            ("other_name", request("delta", "web", "blue"), false, false),
        ];
        for (name, req, selected, exempt) in cases {
            let view = AdmissionRequest::new(&req);
            let target = Target::new(&view);
            assert_eq!(selects(&e, &target), selected, "{name}");
            let ctx = Context::new(req.clone());
            let held = holding(&[&e], &ctx, false);
            if selected {
                assert_eq!(!held.is_empty(), exempt, "{name}");
            }
        }
    }

    /// Kyverno's `checkMatchesResources` differs from rule matching.
    #[test]
    fn exception_match_reads_as_kyvernos_check_matches_resources() {
        let matching = |filter: Value| {
            exception(
                json!({"exceptions": [{"policyName": "p", "ruleNames": ["r"]}],
                "match": {"any": [filter]}}),
            )
        };
        let request = |kind: &str, operation: &str, user: &str| {
            json!({"operation": operation, "namespace": "delta", "userInfo": {"username": user},
                "kind": {"group": "", "version": "v1", "kind": kind},
                "object": {"apiVersion": "v1", "kind": kind, "metadata": {"name": "x"}}})
        };
        let cases = [
            (
                "operations_are_not_checked",
                matching(json!({"resources": {"kinds": ["Pod"], "operations": ["DELETE"]}})),
                request("Pod", "CREATE", "alice"),
                true,
            ),
            (
                "subjects_hold_without_a_requester",
                matching(
                    json!({"subjects": [{"kind": "User", "name": "bob"}], "resources": {"kinds": ["Pod"]}}),
                ),
                request("Pod", "CREATE", ""),
                false,
            ),
            (
                "a_namespace_selector_passes_for_a_namespace",
                matching(
                    json!({"resources": {"kinds": ["Namespace"], "namespaceSelector": {"matchLabels": {"a": "b"}}}}),
                ),
                request("Namespace", "CREATE", "alice"),
                true,
            ),
            (
                "an_empty_match_selects_nothing",
                exception(
                    json!({"exceptions": [{"policyName": "p", "ruleNames": ["r"]}], "match": {}}),
                ),
                request("Pod", "CREATE", "alice"),
                false,
            ),
        ];
        for (name, e, req, want) in cases {
            let view = AdmissionRequest::new(&req);
            assert_eq!(selects(&e, &Target::new(&view)), want, "{name}");
        }
    }

    #[test]
    fn the_skip_message_names_every_exception() {
        let a = exception(
            json!({"exceptions": [{"policyName": "p", "ruleNames": ["r"]}],
            "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}}),
        );
        let mut b = a.clone();
        b.key = "other".into();
        assert_eq!(
            skip_message(&[&a, &b]),
            "rule is skipped due to policy exceptionskyverno/allow, other"
        );
    }

    #[test]
    fn unreadable_or_invalid_cluster_exceptions_are_left_out() {
        struct Answer(Result<Value, String>);
        impl crate::cluster::Cluster for Answer {
            fn fetch(&self, _: &Lookup) -> Result<Value, String> {
                self.0.clone()
            }
        }
        let denied = Answer(Err("not allowed".into()));
        assert!(from_cluster(&Cached::new(&denied)).is_empty());
        let listed = Answer(Ok(json!({"items": [
            {"apiVersion": "kyverno.io/v2", "kind": "PolicyException", "metadata": {"name": "ok"},
             "spec": {"exceptions": [{"policyName": "p", "ruleNames": ["r"]}],
                      "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}}},
            {"apiVersion": "kyverno.io/v2", "kind": "PolicyException", "metadata": {"name": "no-match"},
             "spec": {"exceptions": [{"policyName": "p", "ruleNames": ["r"]}]}}
        ]})));
        let found = from_cluster(&Cached::new(&listed));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].key, "ok");
    }
}
