//! Kubernetes' checks on admission webhook rules (`RuleWithOperations`), as
//! the API server and kwctl (policy-evaluator) apply them to the `rules` of
//! `metadata.yml` and of Kubewarden policy manifests. Written once so every
//! place the project writes `rules` is held to the same rules.
use serde::Deserialize;

/// One webhook rule: which API groups, versions, resources and operations an
/// admission policy receives.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WebhookRule {
    #[serde(default)]
    pub api_groups: Vec<String>,
    #[serde(default)]
    pub api_versions: Vec<String>,
    #[serde(default)]
    pub resources: Vec<String>,
    #[serde(default)]
    pub operations: Vec<String>,
}

/// The operations a webhook rule may name.
pub const OPERATIONS: [&str; 5] = ["CREATE", "UPDATE", "DELETE", "CONNECT", "*"];

/// Every problem with `rule`, each naming its field; empty when it is valid.
pub fn check(rule: &WebhookRule) -> Vec<String> {
    let mut problems = Vec::new();
    for (field, values) in [
        ("apiGroups", &rule.api_groups),
        ("apiVersions", &rule.api_versions),
    ] {
        if values.is_empty() {
            problems.push(format!("{field}: must name at least one value"));
        }
        if let Some(problem) = star_stands_alone(values) {
            problems.push(format!("{field}: {problem}"));
        }
    }
    if rule.resources.is_empty() {
        problems.push("resources: must name at least one resource".to_string());
    }
    problems.extend(
        check_resources(&rule.resources)
            .into_iter()
            .map(|problem| format!("resources: {problem}")),
    );
    if rule.operations.is_empty() {
        problems.push("operations: must name at least one operation".to_string());
    }
    for operation in &rule.operations {
        if !OPERATIONS.contains(&operation.as_str()) {
            problems.push(format!(
                "operations: unknown operation `{operation}`, expected one of {}",
                OPERATIONS.join(", ")
            ));
        }
    }
    if let Some(problem) = star_stands_alone(&rule.operations) {
        problems.push(format!("operations: {problem}"));
    }
    problems
}

fn star_stands_alone(values: &[String]) -> Option<String> {
    (values.len() > 1 && values.iter().any(|value| value == "*"))
        .then(|| "`*` must be the only value when it is used".to_string())
}

/// Kubernetes' `validateResources`: `*/*` stands alone, `*` excludes plain
/// resources, `R/*` excludes `R/sub` and `*/sub` excludes `R/sub`.
fn check_resources(resources: &[String]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut wildcard_subresources_of: Vec<&str> = Vec::new();
    let mut wildcard_resource_for: Vec<&str> = Vec::new();
    let has = |wanted: &str| resources.iter().any(|resource| resource == wanted);
    for resource in resources {
        if resource.is_empty() {
            problems.push("an empty resource is not allowed".to_string());
            continue;
        }
        let Some((name, sub)) = resource.split_once('/') else {
            continue;
        };
        if name != "*" && has(&format!("{name}/*")) && sub != "*" {
            problems.push(format!(
                "`{name}/*` is present, so `{resource}` must not be listed"
            ));
        }
        if name != "*" && has(&format!("*/{sub}")) {
            problems.push(format!(
                "`*/{sub}` is present, so `{resource}` must not be listed"
            ));
        }
        if sub == "*" {
            wildcard_subresources_of.push(name);
        }
        if name == "*" {
            wildcard_resource_for.push(sub);
        }
    }
    if has("*/*") && resources.len() > 1 {
        problems.push("`*/*` is present, so no other resource may be listed".to_string());
    }
    if has("*")
        && resources
            .iter()
            .any(|resource| resource != "*" && !resource.is_empty() && !resource.contains('/'))
    {
        problems.push(
            "`*` is present, so no other resource without a subresource may be listed".to_string(),
        );
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(resources: &[&str], operations: &[&str]) -> WebhookRule {
        WebhookRule {
            api_groups: vec!["*".to_string()],
            api_versions: vec!["*".to_string()],
            resources: resources.iter().map(|s| s.to_string()).collect(),
            operations: operations.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn resources_follow_kubernetes_rules() {
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            ("double_wildcard_alone", &["*/*"], None),
            ("plain_resources", &["pods", "deployments"], None),
            ("star_with_subresources", &["*", "pods/exec"], None),
            ("resource_with_its_wildcard_subresources", &["pods", "pods/*"], None),
            (
                "double_wildcard_beside_star",
                &["*", "*/*"],
                Some("resources: `*/*` is present, so no other resource may be listed"),
            ),
            (
                "star_beside_plain_resource",
                &["*", "pods"],
                Some("resources: `*` is present, so no other resource without a subresource may be listed"),
            ),
            (
                "wildcard_subresources_cover_named_one",
                &["pods/*", "pods/exec"],
                Some("resources: `pods/*` is present, so `pods/exec` must not be listed"),
            ),
            (
                "wildcard_resource_covers_named_one",
                &["*/scale", "deployments/scale"],
                Some("resources: `*/scale` is present, so `deployments/scale` must not be listed"),
            ),
            (
                "empty_resource",
                &[""],
                Some("resources: an empty resource is not allowed"),
            ),
            (
                "no_resource",
                &[],
                Some("resources: must name at least one resource"),
            ),
        ];
        for (name, resources, expected) in cases {
            let problems = check(&rule(resources, &["CREATE"]));
            match expected {
                None => assert!(problems.is_empty(), "{name}: {problems:?}"),
                Some(expected) => assert!(
                    problems.iter().any(|problem| problem == expected),
                    "{name}: {problems:?}"
                ),
            }
        }
    }

    #[test]
    fn operations_are_known_and_star_stands_alone() {
        let cases: &[(&str, &[&str], Option<&str>)] = &[
            ("all_four", &["CREATE", "UPDATE", "DELETE", "CONNECT"], None),
            ("star_alone", &["*"], None),
            (
                "star_with_others",
                &["*", "CREATE"],
                Some("operations: `*` must be the only value when it is used"),
            ),
            (
                "lowercase_operation",
                &["create"],
                Some("operations: unknown operation `create`, expected one of CREATE, UPDATE, DELETE, CONNECT, *"),
            ),
            (
                "none",
                &[],
                Some("operations: must name at least one operation"),
            ),
        ];
        for (name, operations, expected) in cases {
            let problems = check(&rule(&["pods"], operations));
            match expected {
                None => assert!(problems.is_empty(), "{name}: {problems:?}"),
                Some(expected) => assert_eq!(problems, vec![expected.to_string()], "{name}"),
            }
        }
    }

    #[test]
    fn groups_and_versions_are_required_and_star_stands_alone() {
        let mut bad = rule(&["pods"], &["CREATE"]);
        bad.api_groups = vec!["".to_string(), "*".to_string()];
        bad.api_versions = Vec::new();
        assert_eq!(
            check(&bad),
            vec![
                "apiGroups: `*` must be the only value when it is used".to_string(),
                "apiVersions: must name at least one value".to_string(),
            ]
        );
    }
}
