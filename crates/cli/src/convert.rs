//! `convert`: Kyverno `ClusterPolicy` / `Policy` manifests → Kubewarden
//! `ClusterAdmissionPolicy` / `AdmissionPolicy` manifests that run this
//! module with the Kyverno policy's validate rules as settings.
//!
//! [`convert`] is pure: parsed documents in, manifests, warnings and
//! errors out. The settings are checked with the engine exactly as the
//! module's `validate_settings` checks them ([`policy::check`]), and the
//! webhook `rules` are derived from what the rules match, pod controllers
//! that autogen covers included.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use kyverno_engine::api_call::ApiPath;
use kyverno_engine::json::Json as Settings;
use kyverno_engine::settings::type_name;
use kyverno_engine::webhook_rules::{self, WebhookRule};
use kyverno_engine::{autogen, matching, policy, resources};
use serde_json::Value as Json;
use serde_yaml::{Mapping, Value as Yaml};

use crate::input::Document;

/// The module the manifests run unless `--module` names another: this
/// policy as the project publishes it.
pub const DEFAULT_MODULE: &str =
    "registry://ghcr.io/kubewarden/policies/kyverno-validate-policy:v0.1.0";

const POLICY_API_VERSIONS: [&str; 2] = ["kyverno.io/v1", "kyverno.io/v2beta1"];
const KUBEWARDEN_API_VERSION: &str = "policies.kubewarden.io/v1";
const AUTOGEN_ANNOTATION: &str = "pod-policies.kyverno.io/autogen-controllers";
/// Rule types the module does not enforce: such rules are left out.
const OTHER_RULE_TYPES: [&str; 3] = ["mutate", "generate", "verifyImages"];
/// Kyverno's annotations that Kubewarden's CRDs show as printer columns.
const ANNOTATIONS: [(&str, &str); 2] = [
    (
        "policies.kyverno.io/severity",
        "io.kubewarden.policy.severity",
    ),
    (
        "policies.kyverno.io/category",
        "io.kubewarden.policy.category",
    ),
];
/// The range Kubewarden's CRDs accept for `timeoutSeconds`.
const TIMEOUT_SECONDS: std::ops::RangeInclusive<i64> = 2..=30;
/// Operations in the order webhook rules list them.
const OPERATION_ORDER: [&str; 4] = ["CREATE", "UPDATE", "DELETE", "CONNECT"];
const RBAC_V1: &str = "rbac.authorization.k8s.io/v1";

/// What `convert` needs besides the documents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `spec.module` of every manifest.
    pub module: String,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            module: DEFAULT_MODULE.to_string(),
        }
    }
}

/// Where a problem is: file, document (1-based) and, once known, the policy
/// (`name`, or `namespace/name` for a namespaced `Policy`, as Kyverno names them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub source: String,
    pub document: usize,
    pub policy: Option<String>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: document {}", self.source, self.document)?;
        if let Some(policy) = &self.policy {
            write!(f, " (policy {policy})")?;
        }
        Ok(())
    }
}

/// A warning or an error, with where it was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub location: Location,
    pub message: String,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// The result of a conversion: one manifest per policy converted, in input
/// order, and every warning and error. Manifests are YAML values so that
/// the settings keep the order the policy was written in.
#[derive(Debug, Default)]
pub struct Conversion {
    pub manifests: Vec<Yaml>,
    pub warnings: Vec<Problem>,
    pub errors: Vec<Problem>,
}

/// Converts every Kyverno policy among `documents`; empty documents are
/// skipped, anything else is an error.
pub fn convert(documents: &[Document], options: &Options) -> Conversion {
    let mut conversion = Conversion::default();
    for document in documents {
        let mut report = Report {
            location: Location {
                source: document.source.clone(),
                document: document.index,
                policy: None,
            },
            conversion: &mut conversion,
        };
        let manifest = match &document.content {
            Ok(content) => convert_document(content, options, &mut report),
            Err(problem) => {
                report.error(problem.clone());
                None
            }
        };
        conversion.manifests.extend(manifest);
    }
    conversion
}

/// Collects the problems of one document.
struct Report<'a> {
    location: Location,
    conversion: &'a mut Conversion,
}

impl Report<'_> {
    fn warn(&mut self, message: impl Into<String>) {
        self.conversion.warnings.push(Problem {
            location: self.location.clone(),
            message: message.into(),
        });
    }

    fn error(&mut self, message: impl Into<String>) {
        self.conversion.errors.push(Problem {
            location: self.location.clone(),
            message: message.into(),
        });
    }

    fn errors(&self) -> usize {
        self.conversion.errors.len()
    }
}

/// A Kyverno policy, read as far as converting it needs.
struct Policy<'a> {
    cluster: bool,
    name: String,
    namespace: String,
    annotations: Option<&'a serde_json::Map<String, Json>>,
    spec: &'a serde_json::Map<String, Json>,
}

fn convert_document(content: &Yaml, options: &Options, report: &mut Report<'_>) -> Option<Yaml> {
    if content.is_null() {
        return None;
    }
    let json = match serde_json::to_value(content) {
        Ok(json) => json,
        Err(e) => {
            report.error(format!("cannot be read as a Kubernetes object: {e}"));
            return None;
        }
    };
    let policy = read_policy(&json, report)?;
    report.location.policy = Some(if policy.cluster {
        policy.name.clone()
    } else {
        format!("{}/{}", policy.namespace, policy.name)
    });
    let yaml_spec = content.get("spec")?;
    let (settings, kept) = settings_of(&policy, yaml_spec, report)?;
    let settings_json = match serde_json::to_value(&settings) {
        Ok(json) => json,
        Err(e) => {
            report.error(format!("cannot be read as a Kubernetes object: {e}"));
            return None;
        }
    };
    // The module's `validate_settings` runs exactly this check.
    let diagnostics = policy::check(&Settings::borrow(&settings_json));
    if !diagnostics.is_empty() {
        for problem in diagnostics.errors() {
            let path = policy_path(&problem.path, &kept);
            report.error(format!("{path}: {}", problem.message));
        }
        return None;
    }
    let rules: Vec<Json> = settings_json
        .get("rules")
        .and_then(Json::as_array)
        .cloned()
        .unwrap_or_default();
    let controllers = policy
        .annotations
        .and_then(|a| a.get(AUTOGEN_ANNOTATION))
        .and_then(Json::as_str);
    let before = report.errors();
    let webhook_rules = webhook_rules_of(&rules, controllers, report);
    let context_aware = context_aware_resources(policy.spec, &rules, report);
    let spec = manifest_spec(
        &policy,
        options,
        webhook_rules,
        context_aware,
        settings,
        report,
    );
    if report.errors() > before {
        return None;
    }
    Some(manifest(&policy, spec))
}

fn read_policy<'a>(json: &'a Json, report: &mut Report<'_>) -> Option<Policy<'a>> {
    let expected = format!(
        "expected a Kyverno `ClusterPolicy` or `Policy` ({})",
        POLICY_API_VERSIONS.join(" or ")
    );
    let Some(object) = json.as_object() else {
        report.error(format!(
            "is {}: {expected}",
            type_name(&Settings::borrow(json))
        ));
        return None;
    };
    let text = |key: &str| object.get(key).and_then(Json::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    if kind.is_empty() {
        report.error(format!("has no `kind`: {expected}"));
        return None;
    }
    let cluster = kind == "ClusterPolicy";
    if !(cluster || kind == "Policy") || !POLICY_API_VERSIONS.contains(&api_version) {
        let hint = if api_version.starts_with("policies.kubewarden.io/") {
            "; it is a Kubewarden policy already"
        } else {
            ""
        };
        let given = if api_version.is_empty() {
            format!("a `{kind}` without `apiVersion`")
        } else {
            format!("a `{api_version}` `{kind}`")
        };
        report.error(format!("{given} is not a Kyverno policy: {expected}{hint}"));
        return None;
    }
    let metadata = object.get("metadata");
    let field = |key: &str| {
        metadata
            .and_then(|m| m.get(key))
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
    };
    let Some(name) = field("name") else {
        report.error("`metadata.name` is required: the Kubewarden policy takes the same name");
        return None;
    };
    let Some(spec) = object.get("spec").and_then(Json::as_object) else {
        report.error("`spec` is required and must be a mapping: it holds the policy's rules");
        return None;
    };
    Some(Policy {
        cluster,
        name: name.to_string(),
        namespace: field("namespace").unwrap_or("default").to_string(),
        annotations: metadata
            .and_then(|m| m.get("annotations"))
            .and_then(Json::as_object),
        spec,
    })
}

/// The module's settings: the policy's `spec` with its validate rules only,
/// `policyName` and `autogenControllers`; and the index in `spec.rules` of
/// each rule kept.
fn settings_of(
    policy: &Policy<'_>,
    yaml_spec: &Yaml,
    report: &mut Report<'_>,
) -> Option<(Yaml, Vec<usize>)> {
    let mut settings = yaml_spec.as_mapping()?.clone();
    let mut kept = Vec::new();
    if let Some(rules) = policy.spec.get("rules").and_then(Json::as_array) {
        let yaml_rules = yaml_spec
            .get("rules")
            .and_then(Yaml::as_sequence)
            .map(Vec::as_slice)
            .unwrap_or_default();
        let mut kept_rules = Vec::new();
        for (i, (rule, yaml_rule)) in rules.iter().zip(yaml_rules).enumerate() {
            let other = OTHER_RULE_TYPES
                .iter()
                .find(|key| rule.get(**key).is_some());
            if let (None, Some(other)) = (rule.get("validate"), other) {
                let name = rule.get("name").and_then(Json::as_str).unwrap_or("");
                report.warn(format!(
                    "spec.rules[{i}]: rule `{name}` is a `{other}` rule: left out, the module enforces validate rules only"
                ));
                continue;
            }
            kept.push(i);
            kept_rules.push(yaml_rule.clone());
        }
        if kept.is_empty() {
            report.error("has no validate rule: there is nothing for the module to enforce");
            return None;
        }
        settings.insert("rules".into(), Yaml::Sequence(kept_rules));
    }
    // `monitor` mode stands in for `admission: false` (see `manifest`);
    // left in, the module would accept every request, the audit scanner's
    // too, which go through the same `validate`.
    if policy.spec.get("admission").and_then(Json::as_bool) == Some(false) {
        settings.remove("admission");
    }
    settings.insert("policyName".into(), policy.name.clone().into());
    // The annotation as written: the engine checks its type.
    let controllers = policy
        .annotations
        .and_then(|a| a.get(AUTOGEN_ANNOTATION))
        .and_then(|value| serde_yaml::to_value(value).ok());
    if let Some(controllers) = controllers {
        settings.insert("autogenControllers".into(), controllers);
    }
    Some((Yaml::Mapping(settings), kept))
}

/// A settings path as a path in the Kyverno policy: `rules[1].validate`
/// → `spec.rules[3].validate` when rules were left out.
fn policy_path(path: &str, kept: &[usize]) -> String {
    if path.is_empty() {
        return "spec".to_string();
    }
    if let Some(rest) = path.strip_prefix("policyName") {
        return format!("metadata.name{rest}");
    }
    if let Some(rest) = path.strip_prefix("autogenControllers") {
        return format!("metadata.annotations.\"{AUTOGEN_ANNOTATION}\"{rest}");
    }
    if let Some(rest) = path.strip_prefix("rules[") {
        if let Some((index, rest)) = rest.split_once(']') {
            if let Some(original) = index.parse::<usize>().ok().and_then(|i| kept.get(i)) {
                return format!("spec.rules[{original}]{rest}");
            }
        }
    }
    format!("spec.{path}")
}

/// The match filters of a rule's `match` or `exclude` block: the block
/// itself in the legacy form, else each `any` / `all` entry.
fn filters(block: Option<&Json>) -> Vec<&Json> {
    let Some(block) = block else {
        return Vec::new();
    };
    let mut out: Vec<&Json> = ["any", "all"]
        .iter()
        .filter_map(|key| block.get(*key).and_then(Json::as_array))
        .flatten()
        .collect();
    if block.get("resources").is_some() || out.is_empty() {
        out.push(block);
    }
    out
}

fn strings(value: Option<&Json>) -> impl Iterator<Item = &str> {
    value
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
}

/// A resource a webhook rule names.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Resource {
    group: String,
    version: String,
    /// `plural` or `plural/subresource`.
    resource: String,
}

fn has_wildcard(text: &str) -> bool {
    text.contains(['*', '?'])
}

/// The resources a kind selector (`Pod`, `apps/v1/Deployment`, `Pod/exec`,
/// `*`, …) matches. Guessed plurals are recorded in `guesses`.
fn resources_of_kind(
    selector: &str,
    guesses: &mut BTreeMap<String, String>,
) -> Result<Vec<Resource>, String> {
    let (group, version, kind, sub) = matching::parse_kind_selector(selector);
    if kind.is_empty() {
        return Err(format!(
            "kind `{selector}` is not a kind selector (`Kind`, `version/Kind` or `group/version/Kind`, with an optional `/subresource`)"
        ));
    }
    let version = if has_wildcard(version) { "*" } else { version }.to_string();
    let group = if has_wildcard(group) { "*" } else { group }.to_string();
    let with_sub = |plural: &str| {
        if sub.is_empty() {
            plural.to_string()
        } else {
            format!("{plural}/{sub}")
        }
    };
    if has_wildcard(kind) {
        return Ok(vec![Resource {
            group,
            version,
            resource: with_sub("*"),
        }]);
    }
    let mut plurals: Vec<(String, String)> = if group == "*" {
        resources::groups_of(kind)
            .filter_map(|g| Some((g.to_string(), resources::plural_of(g, kind)?.to_string())))
            .collect()
    } else {
        resources::plural_of(&group, kind)
            .map(|p| vec![(group.clone(), p.to_string())])
            .unwrap_or_default()
    };
    if plurals.is_empty() {
        let plural = match resources::custom_plural_of(kind) {
            Some(plural) => plural.to_string(),
            None => {
                let plural = resources::guess_plural(kind);
                guesses.insert(kind.to_string(), plural.clone());
                plural
            }
        };
        plurals.push((group, plural));
    }
    let mut out = Vec::new();
    for (group, plural) in plurals {
        // Kyverno's webhook sends a Pod rule the ephemeral containers
        // subresource too, and the engine matches `Pod` against it.
        if group.is_empty() && plural == "pods" && sub.is_empty() {
            out.push(Resource {
                group: group.clone(),
                version: version.clone(),
                resource: "pods/ephemeralcontainers".into(),
            });
        }
        out.push(Resource {
            group,
            version: version.clone(),
            resource: with_sub(&plural),
        });
    }
    Ok(out)
}

/// Kubernetes' rules for resource lists: `*/*` stands alone, `*` covers
/// plain resources, `R/*` covers `R/sub`, `*/sub` covers `R/sub`.
fn normalize(resources: BTreeSet<String>) -> Vec<String> {
    if resources.contains("*/*") {
        return vec!["*/*".to_string()];
    }
    let star = resources.contains("*");
    resources
        .iter()
        .filter(|resource| match resource.split_once('/') {
            None => !star || resource.as_str() == "*",
            Some((plural, sub)) => {
                let covered_by_all_subs = sub != "*" && resources.contains(&format!("{plural}/*"));
                let covered_by_all_plurals =
                    plural != "*" && resources.contains(&format!("*/{sub}"));
                !covered_by_all_subs && !covered_by_all_plurals
            }
        })
        .cloned()
        .collect()
}

/// Subresources reached with CONNECT (exec, attach, port forwarding, proxies).
fn is_connect(resource: &str) -> bool {
    let Some((plural, sub)) = resource.split_once('/') else {
        return false;
    };
    matches!(
        (plural, sub),
        (
            "pods" | "*",
            "exec" | "attach" | "portforward" | "proxy" | "*"
        ) | ("nodes" | "services", "proxy" | "*")
    )
}

/// The kinds a rule's `match` names, in every filter.
fn match_kinds(rule: &Json) -> Vec<&str> {
    filters(rule.get("match"))
        .into_iter()
        .flat_map(|filter| strings(filter.get("resources").and_then(|r| r.get("kinds"))))
        .collect()
}

/// The rules autogen adds, for every pod controller it may cover, computed
/// by the engine exactly as it computes them per request.
fn autogen_rules(rules: &[Json], controllers: Option<&str>, report: &mut Report<'_>) -> Vec<Json> {
    let mut kinds: Vec<&str> = autogen::POD_CONTROLLERS.to_vec();
    if let Some(list) = controllers {
        for name in list.split(',') {
            if name.trim() != name {
                report.warn(format!(
                    "`{AUTOGEN_ANNOTATION}` names `{name}` with spaces: Kyverno and the module split the list on commas as is, so no rule is generated for `{}`",
                    name.trim()
                ));
            } else if name == "all" {
                report.warn(format!(
                    "`{AUTOGEN_ANNOTATION}: all` is a legacy value that generates no rule at admission: list the controllers instead"
                ));
            } else if !name.is_empty() && name != "none" && !kinds.contains(&name) {
                kinds.push(name);
            }
        }
    }
    kinds
        .into_iter()
        .flat_map(|kind| autogen::generate(rules, controllers, kind))
        .map(|generated| generated.rule)
        .collect()
}

/// The operations the webhook rules name: those the match filters list
/// when every filter lists some, else what the rules act on.
fn operations(rules: &[Json], resources: &BTreeSet<Resource>) -> Vec<String> {
    let filters: Vec<&Json> = rules
        .iter()
        .flat_map(|rule| filters(rule.get("match")))
        .collect();
    let listed = |filter: &&Json| {
        filter
            .get("resources")
            .and_then(|r| r.get("operations"))
            .and_then(Json::as_array)
            .is_some_and(|o| !o.is_empty())
    };
    let mut wanted: BTreeSet<String> = BTreeSet::new();
    if !filters.is_empty() && filters.iter().all(listed) {
        for filter in &filters {
            wanted.extend(
                strings(filter.get("resources").and_then(|r| r.get("operations")))
                    .map(str::to_string),
            );
        }
        if wanted.contains("*") {
            return vec!["*".to_string()];
        }
    } else {
        wanted.extend(["CREATE".to_string(), "UPDATE".to_string()]);
        // Patterns, anyPattern and podSecurity pass on DELETE in the
        // engine; deny conditions, CEL and foreach can act on it.
        let acts_on_delete = rules.iter().any(|rule| {
            let validate = rule.get("validate");
            ["deny", "cel", "foreach"]
                .iter()
                .any(|key| validate.and_then(|v| v.get(*key)).is_some())
        });
        if acts_on_delete {
            wanted.insert("DELETE".into());
        }
        if resources.iter().any(|r| is_connect(&r.resource)) {
            wanted.insert("CONNECT".into());
        }
    }
    let mut ordered: Vec<String> = OPERATION_ORDER
        .iter()
        .filter(|op| wanted.remove(**op))
        .map(|op| op.to_string())
        .collect();
    // Anything else is kept for the check to name.
    ordered.extend(wanted);
    ordered
}

/// The webhook rules: one per (API group, version), resources sorted.
fn webhook_rules_of(
    rules: &[Json],
    controllers: Option<&str>,
    report: &mut Report<'_>,
) -> Vec<WebhookRule> {
    let mut all_rules = rules.to_vec();
    all_rules.extend(autogen_rules(rules, controllers, report));
    let mut found = BTreeSet::new();
    let mut guesses = BTreeMap::new();
    let mut bad_kinds = BTreeSet::new();
    for rule in &all_rules {
        for selector in match_kinds(rule) {
            match resources_of_kind(selector, &mut guesses) {
                Ok(resources) => found.extend(resources),
                Err(problem) => {
                    bad_kinds.insert(problem);
                }
            }
        }
    }
    let any_bad_kind = !bad_kinds.is_empty();
    for problem in bad_kinds {
        report.error(problem);
    }
    for (kind, plural) in guesses {
        report.warn(format!(
            "kind `{kind}` is not a known kind: its resource is guessed as `{plural}`; check it (`kubectl api-resources`) and fix `spec.rules` if it is wrong"
        ));
    }
    if found.is_empty() {
        if !any_bad_kind {
            report.error(
                "the validate rules match no kind: `spec.rules` would send the policy nothing",
            );
        }
        return Vec::new();
    }
    let operations = operations(&all_rules, &found);
    let mut grouped: BTreeMap<(String, String), BTreeSet<String>> = BTreeMap::new();
    for Resource {
        group,
        version,
        resource,
    } in found
    {
        grouped
            .entry((group, version))
            .or_default()
            .insert(resource);
    }
    let webhook_rules: Vec<WebhookRule> = grouped
        .into_iter()
        .map(|((group, version), resources)| WebhookRule {
            api_groups: vec![group],
            api_versions: vec![version],
            resources: normalize(resources),
            operations: operations.clone(),
        })
        .collect();
    for (i, rule) in webhook_rules.iter().enumerate() {
        for problem in webhook_rules::check(rule) {
            report.error(format!(
                "spec.rules[{i}] of the Kubewarden policy: {problem}"
            ));
        }
    }
    webhook_rules
}

/// What [`mark_variables`] puts in place of a variable: no resource name
/// contains braces.
const VARIABLE: &str = "{var}";

/// `{{ … }}` replaced by [`VARIABLE`].
fn mark_variables(template: &str) -> String {
    let mut out = String::new();
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(rest.get(..start).unwrap_or(""));
        out.push_str(VARIABLE);
        rest = match rest.get(start..).and_then(|r| r.find("}}")) {
            Some(end) => rest.get(start + end + 2..).unwrap_or(""),
            None => "",
        };
    }
    out.push_str(rest);
    out
}

/// What a rule reads from the cluster, as `(apiVersion, kind)`.
fn context_aware_resources(
    spec: &serde_json::Map<String, Json>,
    rules: &[Json],
    report: &mut Report<'_>,
) -> BTreeSet<(String, String)> {
    let mut found = BTreeSet::new();
    let namespace = || ("v1".to_string(), "Namespace".to_string());
    let bindings = [
        (RBAC_V1.to_string(), "RoleBinding".to_string()),
        (RBAC_V1.to_string(), "ClusterRoleBinding".to_string()),
    ];
    let overrides_select_namespaces = |overrides: Option<&Json>| {
        overrides
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .any(|o| o.get("namespaceSelector").is_some_and(|s| !s.is_null()))
    };
    if overrides_select_namespaces(spec.get("validationFailureActionOverrides")) {
        found.insert(namespace());
    }
    for rule in rules {
        let name = rule.get("name").and_then(Json::as_str).unwrap_or("");
        for block in ["match", "exclude"] {
            for filter in filters(rule.get(block)) {
                let selector = filter
                    .get("resources")
                    .and_then(|r| r.get("namespaceSelector"));
                if selector.is_some_and(|s| !s.is_null()) {
                    found.insert(namespace());
                }
                if ["roles", "clusterRoles"]
                    .iter()
                    .any(|key| strings(filter.get(*key)).next().is_some())
                {
                    found.extend(bindings.clone());
                }
            }
        }
        let validate = rule.get("validate");
        if overrides_select_namespaces(validate.and_then(|v| v.get("failureActionOverrides"))) {
            found.insert(namespace());
        }
        for entry in entries_of(rule, validate) {
            if entry.get("configMap").is_some() {
                found.insert(("v1".to_string(), "ConfigMap".to_string()));
            }
            let call = entry.get("apiCall");
            // A SubjectAccessReview `POST` goes to `can_i`, which reads no
            // resource the policy must be granted.
            let posted = call.and_then(|c| c.get("method")).and_then(Json::as_str) == Some("POST");
            let url = call
                .filter(|_| !posted)
                .and_then(|call| call.get("urlPath"))
                .and_then(Json::as_str);
            if let Some(url) = url {
                match api_call_resource(url) {
                    Ok((resource, None)) => {
                        found.insert(resource);
                    }
                    Ok((resource, Some(plural))) => {
                        report.warn(format!(
                            "rule `{name}`: the apiCall `{url}` reads `{plural}`, guessed to be kind `{}`: check it, the policy may only read the kinds in `contextAwareResources`",
                            resource.1
                        ));
                        found.insert(resource);
                    }
                    Err(problem) => report.warn(format!(
                        "rule `{name}`: the apiCall `{url}` {problem}: add what it reads to `contextAwareResources` by hand"
                    )),
                }
            }
        }
        let cel = validate.and_then(|v| v.get("cel"));
        for entry in entries_of(rule, validate) {
            let Some(reference) = entry
                .get("globalReference")
                .and_then(|g| g.get("name"))
                .and_then(Json::as_str)
            else {
                continue;
            };
            global_reference_resources(spec, name, reference, &mut found, report);
        }
        if let Some(param_kind) = cel.and_then(|c| c.get("paramKind")) {
            let text = |key: &str| param_kind.get(key).and_then(Json::as_str).unwrap_or("");
            found.insert((text("apiVersion").to_string(), text("kind").to_string()));
        }
        let reads_namespace = [cel, rule.get("celPreconditions")]
            .into_iter()
            .flatten()
            .any(|value| value.to_string().contains("namespaceObject"));
        if reads_namespace {
            found.insert(namespace());
        }
        let text = rule.to_string();
        if text.contains("request.roles") || text.contains("request.clusterRoles") {
            found.extend(bindings.clone());
        }
    }
    found
}

/// A rule's context entries, its foreach's included.
fn entries_of<'j>(rule: &'j Json, validate: Option<&'j Json>) -> Vec<&'j Json> {
    let mut entries: Vec<&Json> = items(rule.get("context"));
    let mut foreach: Vec<&Json> = items(validate.and_then(|v| v.get("foreach")));
    while let Some(item) = foreach.pop() {
        entries.extend(items(item.get("context")));
        foreach.extend(items(item.get("foreach")));
    }
    entries
}

/// What a `globalReference` reads: the GlobalContextEntry's resource when
/// the settings define the entry, else the entry from the cluster.
fn global_reference_resources(
    spec: &serde_json::Map<String, Json>,
    rule: &str,
    reference: &str,
    found: &mut BTreeSet<(String, String)>,
    report: &mut Report<'_>,
) {
    let entry_name = reference.split('.').next().unwrap_or_default();
    let defined = spec
        .get("globalContextEntries")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
        .find(|e| e.pointer("/metadata/name").and_then(Json::as_str) == Some(entry_name));
    let Some(defined) = defined else {
        for api_version in ["kyverno.io/v2beta1", "kyverno.io/v2alpha1"] {
            found.insert((api_version.to_string(), "GlobalContextEntry".to_string()));
        }
        report.warn(format!(
            "rule `{rule}`: the globalReference `{reference}` reads GlobalContextEntry `{entry_name}` from the cluster: add the kind that entry reads to `contextAwareResources` by hand, or define the entry in the settings' `globalContextEntries`"
        ));
        return;
    };
    let text = |pointer: &str| {
        defined
            .pointer(pointer)
            .and_then(Json::as_str)
            .unwrap_or("")
    };
    let url = match text("/spec/apiCall/urlPath") {
        "" => {
            let (group, version, resource) = (
                text("/spec/kubernetesResource/group"),
                text("/spec/kubernetesResource/version"),
                text("/spec/kubernetesResource/resource"),
            );
            if group.is_empty() {
                format!("/api/{version}/{resource}")
            } else {
                format!("/apis/{group}/{version}/{resource}")
            }
        }
        url => url.to_string(),
    };
    match api_call_resource(&url) {
        Ok((resource, guessed)) => {
            if let Some(plural) = guessed {
                report.warn(format!(
                    "rule `{rule}`: GlobalContextEntry `{entry_name}` reads `{plural}`, guessed to be kind `{}`: check it, the policy may only read the kinds in `contextAwareResources`",
                    resource.1
                ));
            }
            found.insert(resource);
        }
        Err(problem) => report.warn(format!(
            "rule `{rule}`: GlobalContextEntry `{entry_name}` {problem}: add what it reads to `contextAwareResources` by hand"
        )),
    }
}

fn items(value: Option<&Json>) -> Vec<&Json> {
    value
        .and_then(Json::as_array)
        .map(|list| list.iter().collect())
        .unwrap_or_default()
}

/// The `(apiVersion, kind)` an apiCall path reads, and the plural when
/// the kind is guessed; an error says why it cannot be told.
#[allow(clippy::type_complexity)]
fn api_call_resource(url: &str) -> Result<((String, String), Option<String>), String> {
    let path = ApiPath::parse(&mark_variables(url)).map_err(|e| format!("cannot be read: {e}"))?;
    if [&path.group, &path.version, &path.plural]
        .iter()
        .any(|part| part.contains(VARIABLE))
    {
        return Err("picks its resource with variables".into());
    }
    let found = resources::kind_of(&path.group, &path.plural);
    let api_version = if path.group.is_empty() {
        path.version.clone()
    } else {
        format!("{}/{}", path.group, path.version)
    };
    let guessed = found.guessed.then(|| path.plural.clone());
    Ok(((api_version, found.kind), guessed))
}

/// A webhook setting and its path: `webhookConfiguration.KEY` first, as
/// Kyverno reads it, then the deprecated spec-level field.
fn webhook_setting<'a>(
    spec: &'a serde_json::Map<String, Json>,
    key: &str,
    deprecated: &str,
) -> Option<(String, &'a Json)> {
    let set = |v: &&Json| !v.is_null();
    spec.get("webhookConfiguration")
        .and_then(|w| w.get(key))
        .filter(set)
        .map(|v| (format!("spec.webhookConfiguration.{key}"), v))
        .or_else(|| {
            spec.get(deprecated)
                .filter(set)
                .map(|v| (format!("spec.{deprecated}"), v))
        })
}

/// The manifest's `spec`.
fn manifest_spec(
    policy: &Policy<'_>,
    options: &Options,
    rules: Vec<WebhookRule>,
    context_aware: BTreeSet<(String, String)>,
    settings: Yaml,
    report: &mut Report<'_>,
) -> Mapping {
    let spec = policy.spec;
    let mut out = Mapping::new();
    out.insert("module".into(), options.module.clone().into());
    // `protect` whatever the failure action: the module applies Kyverno's
    // `Audit` and `Enforce` itself, and an Audit violation comes back as
    // an accepted request with a warning, never as a rejection.
    let admission = spec
        .get("admission")
        .and_then(Json::as_bool)
        .unwrap_or(true);
    let mode = if admission {
        "protect"
    } else {
        report.warn(
            "`spec.admission` is false: Kyverno only scans existing resources with it; the Kubewarden policy runs in `monitor` mode, which evaluates requests without rejecting them, and its settings leave `admission` out, so that background audits report violations",
        );
        "monitor"
    };
    out.insert("mode".into(), mode.into());
    out.insert("mutating".into(), false.into());
    match spec.get("background") {
        None | Some(Json::Null) => {
            out.insert("backgroundAudit".into(), true.into());
        }
        Some(Json::Bool(background)) => {
            out.insert("backgroundAudit".into(), (*background).into());
        }
        Some(other) => report.error(format!(
            "spec.background: must be a boolean, not {}",
            type_name(&Settings::borrow(other))
        )),
    }
    // Kyverno reads `webhookConfiguration.failurePolicy` first, then the
    // deprecated `failurePolicy`; likewise for the timeout.
    match webhook_setting(spec, "failurePolicy", "failurePolicy") {
        None => {
            out.insert("failurePolicy".into(), "Fail".into());
        }
        Some((_, Json::String(value))) if value == "Fail" || value == "Ignore" => {
            out.insert("failurePolicy".into(), value.clone().into());
        }
        Some((path, other)) => report.error(format!(
            "{path}: must be `Fail` or `Ignore`, not `{}`",
            other
                .as_str()
                .map_or_else(|| other.to_string(), str::to_string)
        )),
    }
    if let Some((path, timeout)) = webhook_setting(spec, "timeoutSeconds", "webhookTimeoutSeconds")
    {
        match timeout.as_i64() {
            Some(seconds) => {
                let clamped = seconds.clamp(*TIMEOUT_SECONDS.start(), *TIMEOUT_SECONDS.end());
                if clamped != seconds {
                    report.warn(format!(
                        "the webhook timeout of {seconds} s is outside the {}..={} s Kubewarden accepts: {clamped} s is used",
                        TIMEOUT_SECONDS.start(),
                        TIMEOUT_SECONDS.end()
                    ));
                }
                out.insert("timeoutSeconds".into(), clamped.into());
            }
            None => report.error(format!(
                "{path}: must be a whole number of seconds, not {timeout}"
            )),
        }
    }
    let match_conditions = spec
        .get("webhookConfiguration")
        .and_then(|w| w.get("matchConditions"))
        .filter(|c| c.as_array().is_some_and(|c| !c.is_empty()));
    if let Some(conditions) = match_conditions.and_then(|c| serde_yaml::to_value(c).ok()) {
        out.insert("matchConditions".into(), conditions);
    }
    let rules = rules
        .into_iter()
        .map(|rule| {
            let list = |values: Vec<String>| {
                Yaml::Sequence(values.into_iter().map(Yaml::String).collect())
            };
            let mut entry = Mapping::new();
            entry.insert("apiGroups".into(), list(rule.api_groups));
            entry.insert("apiVersions".into(), list(rule.api_versions));
            entry.insert("resources".into(), list(rule.resources));
            entry.insert("operations".into(), list(rule.operations));
            Yaml::Mapping(entry)
        })
        .collect();
    out.insert("rules".into(), Yaml::Sequence(rules));
    if !context_aware.is_empty() {
        if policy.cluster {
            let list = context_aware
                .into_iter()
                .map(|(api_version, kind)| {
                    let mut entry = Mapping::new();
                    entry.insert("apiVersion".into(), api_version.into());
                    entry.insert("kind".into(), kind.into());
                    Yaml::Mapping(entry)
                })
                .collect();
            out.insert("contextAwareResources".into(), Yaml::Sequence(list));
        } else {
            let names: Vec<String> = context_aware
                .iter()
                .map(|(api_version, kind)| format!("{api_version} {kind}"))
                .collect();
            report.warn(format!(
                "the rules read {} from the cluster, but an `AdmissionPolicy` cannot be granted `contextAwareResources` (only a `ClusterAdmissionPolicy` can): those lookups will fail; make it a ClusterPolicy to grant them",
                names.join(", ")
            ));
        }
    }
    out.insert("settings".into(), settings);
    out
}

fn manifest(policy: &Policy<'_>, spec: Mapping) -> Yaml {
    let mut metadata = Mapping::new();
    metadata.insert("name".into(), policy.name.clone().into());
    if !policy.cluster {
        metadata.insert("namespace".into(), policy.namespace.clone().into());
    }
    let mut annotations = Mapping::new();
    for (kyverno, kubewarden) in ANNOTATIONS {
        let value = policy
            .annotations
            .and_then(|a| a.get(kyverno))
            .and_then(Json::as_str);
        if let Some(value) = value {
            annotations.insert(kubewarden.into(), value.into());
        }
    }
    if !annotations.is_empty() {
        metadata.insert("annotations".into(), Yaml::Mapping(annotations));
    }
    let kind = if policy.cluster {
        "ClusterAdmissionPolicy"
    } else {
        "AdmissionPolicy"
    };
    let mut out = Mapping::new();
    out.insert("apiVersion".into(), KUBEWARDEN_API_VERSION.into());
    out.insert("kind".into(), kind.into());
    out.insert("metadata".into(), Yaml::Mapping(metadata));
    out.insert("spec".into(), Yaml::Mapping(spec));
    Yaml::Mapping(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The manifest (as JSON), warnings and errors of one document.
    fn convert_json(policy: &Json) -> (Option<Json>, Vec<String>, Vec<String>) {
        let content = serde_yaml::to_value(policy).unwrap();
        let documents = [Document {
            source: "p.yaml".into(),
            index: 1,
            content: Ok(content),
        }];
        let conversion = convert(&documents, &Options::default());
        let manifest = conversion
            .manifests
            .first()
            .map(|m| serde_json::to_value(m).unwrap());
        let messages = |problems: Vec<Problem>| problems.iter().map(ToString::to_string).collect();
        (
            manifest,
            messages(conversion.warnings),
            messages(conversion.errors),
        )
    }

    fn cluster_policy(annotations: Json, spec: Json) -> Json {
        json!({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy",
            "metadata": {"name": "p", "annotations": annotations}, "spec": spec})
    }

    fn rule(kinds: Json, validate: Json) -> Json {
        json!({"name": "r", "match": {"any": [{"resources": {"kinds": kinds}}]}, "validate": validate})
    }

    fn pattern() -> Json {
        json!({"pattern": {"metadata": {"labels": {"team": "?*"}}}})
    }

    fn deny() -> Json {
        json!({"deny": {"conditions": {"any": [{"key": "{{ request.operation }}", "operator": "Equals", "value": "DELETE"}]}}})
    }

    /// Converts a policy that must convert without error.
    fn converted(policy: &Json) -> (Json, Vec<String>) {
        let (manifest, warnings, errors) = convert_json(policy);
        assert_eq!(errors, Vec::<String>::new());
        (manifest.unwrap(), warnings)
    }

    /// `group/version/resource` for every resource the webhook rules name.
    fn routed(manifest: &Json) -> Vec<String> {
        let mut out = Vec::new();
        for rule in manifest["spec"]["rules"].as_array().unwrap() {
            for group in rule["apiGroups"].as_array().unwrap() {
                for version in rule["apiVersions"].as_array().unwrap() {
                    for resource in rule["resources"].as_array().unwrap() {
                        out.push(format!(
                            "{}/{}/{}",
                            group.as_str().unwrap(),
                            version.as_str().unwrap(),
                            resource.as_str().unwrap()
                        ));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn kinds_become_webhook_resources() {
        let none = json!({AUTOGEN_ANNOTATION: "none"});
        let cases: &[(&str, Json, &[&str], Option<&str>)] = &[
            ("builtin_kind_finds_its_group", json!(["Deployment"]), &["apps/*/deployments"], None),
            ("core_kind", json!(["ConfigMap"]), &["/*/configmaps"], None),
            ("version_is_kept", json!(["v1/ConfigMap"]), &["/v1/configmaps"], None),
            ("group_version_kind", json!(["networking.k8s.io/v1/Ingress"]), &["networking.k8s.io/v1/ingresses"], None),
            ("pod_brings_ephemeral_containers", json!(["Pod"]), &["/*/pods", "/*/pods/ephemeralcontainers"], None),
            ("subresource", json!(["Pod/exec"]), &["/*/pods/exec"], None),
            ("dotted_subresource", json!(["Pod.status"]), &["/*/pods/status"], None),
            ("group_version_kind_subresource", json!(["apps/v1/Deployment/scale"]), &["apps/v1/deployments/scale"], None),
            ("wildcard_kind", json!(["*"]), &["*/*/*"], None),
            ("wildcard_kind_and_subresources", json!(["*/*"]), &["*/*/*/*"], None),
            ("wildcard_resource_of_a_subresource", json!(["*/scale", "Deployment/scale"]), &["*/*/*/scale", "apps/*/deployments/scale"], None),
            ("kind_served_by_two_groups", json!(["Event"]), &["/*/events", "events.k8s.io/*/events"], None),
            ("common_custom_kind", json!(["HTTPRoute"]), &["*/*/httproutes"], None),
            ("all_subresources_cover_one", json!(["Pod/*", "Pod/exec"]), &["/*/pods/*"], None),
            ("resources_grouped_and_sorted", json!(["Secret", "ConfigMap", "v1/Service"]), &["/*/configmaps", "/*/secrets", "/v1/services"], None),
            ("unknown_kind_is_guessed", json!(["Widget"]), &["*/*/widgets"],
                Some("p.yaml: document 1 (policy p): kind `Widget` is not a known kind: its resource is guessed as `widgets`; check it (`kubectl api-resources`) and fix `spec.rules` if it is wrong")),
            ("unknown_kind_in_its_group", json!(["acme.io/v1/Proxy"]), &["acme.io/v1/proxies"],
                Some("p.yaml: document 1 (policy p): kind `Proxy` is not a known kind: its resource is guessed as `proxies`; check it (`kubectl api-resources`) and fix `spec.rules` if it is wrong")),
        ];
        for (name, kinds, expected, warning) in cases {
            let policy = cluster_policy(
                none.clone(),
                json!({"rules": [rule(kinds.clone(), pattern())]}),
            );
            let (manifest, warnings) = converted(&policy);
            assert_eq!(routed(&manifest), *expected, "{name}");
            assert_eq!(
                warnings,
                warning.iter().map(|w| w.to_string()).collect::<Vec<_>>(),
                "{name}"
            );
        }
    }

    #[test]
    fn kinds_in_every_match_form_are_routed() {
        let rules = json!([
            {"name": "legacy", "match": {"resources": {"kinds": ["Secret"]}}, "validate": pattern()},
            {"name": "all", "match": {"all": [{"resources": {"kinds": ["ConfigMap"]}}]}, "validate": pattern()},
            {"name": "any", "match": {"any": [{"resources": {"kinds": ["Service"]}}]}, "validate": pattern()},
        ]);
        let (manifest, _) = converted(&cluster_policy(json!({}), json!({"rules": rules})));
        assert_eq!(
            routed(&manifest),
            ["/*/configmaps", "/*/secrets", "/*/services"]
        );
    }

    #[test]
    fn autogen_adds_the_pod_controllers_it_covers() {
        let pod_rule = rule(json!(["Pod"]), pattern());
        let pods = ["/*/pods", "/*/pods/ephemeralcontainers"];
        let every = [
            "/*/pods",
            "/*/pods/ephemeralcontainers",
            "/*/replicationcontrollers",
            "apps/*/daemonsets",
            "apps/*/deployments",
            "apps/*/replicasets",
            "apps/*/statefulsets",
            "batch/*/cronjobs",
            "batch/*/jobs",
        ];
        let named = json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"], "names": ["web-*"]}}]}, "validate": pattern()});
        // name, annotations, rule, resources routed, warnings
        type Case<'a> = (&'a str, Json, Json, Vec<&'a str>, Vec<&'a str>);
        let cases: Vec<Case> = vec![
            ("no_annotation_covers_every_controller", json!({}), pod_rule.clone(), every.to_vec(), vec![]),
            ("none_covers_no_controller", json!({AUTOGEN_ANNOTATION: "none"}), pod_rule.clone(), pods.to_vec(), vec![]),
            ("a_list_covers_those_controllers", json!({AUTOGEN_ANNOTATION: "Deployment,CronJob"}), pod_rule.clone(),
                vec!["/*/pods", "/*/pods/ephemeralcontainers", "apps/*/deployments", "batch/*/cronjobs"], vec![]),
            ("spaces_are_not_trimmed_as_in_kyverno", json!({AUTOGEN_ANNOTATION: "Deployment, Job"}), pod_rule.clone(),
                vec!["/*/pods", "/*/pods/ephemeralcontainers", "apps/*/deployments"],
                vec!["p.yaml: document 1 (policy p): `pod-policies.kyverno.io/autogen-controllers` names ` Job` with spaces: Kyverno and the module split the list on commas as is, so no rule is generated for `Job`"]),
            ("rules_selecting_by_name_turn_autogen_off", json!({}), named, pods.to_vec(), vec![]),
            ("rules_without_pods_have_nothing_to_generate", json!({}), rule(json!(["Deployment"]), pattern()), vec!["apps/*/deployments"], vec![]),
        ];
        for (name, annotations, rule, expected, expected_warnings) in cases {
            let (manifest, warnings) = converted(&cluster_policy(
                annotations.clone(),
                json!({"rules": [rule]}),
            ));
            assert_eq!(routed(&manifest), expected, "{name}");
            assert_eq!(warnings, expected_warnings, "{name}");
            assert_eq!(
                manifest["spec"]["settings"].get("autogenControllers"),
                annotations.get(AUTOGEN_ANNOTATION),
                "{name}"
            );
        }
    }

    #[test]
    fn operations_follow_what_the_rules_act_on() {
        let with_operations = |operations: Json| json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"], "operations": operations}}]}, "validate": deny()});
        let cases: Vec<(&str, Vec<Json>, &[&str])> = vec![
            (
                "pattern_skips_delete",
                vec![rule(json!(["Pod"]), pattern())],
                &["CREATE", "UPDATE"],
            ),
            (
                "any_pattern_skips_delete",
                vec![rule(json!(["Pod"]), json!({"anyPattern": [{"spec": {}}]}))],
                &["CREATE", "UPDATE"],
            ),
            (
                "pod_security_skips_delete",
                vec![rule(
                    json!(["Pod"]),
                    json!({"podSecurity": {"level": "baseline", "version": "latest"}}),
                )],
                &["CREATE", "UPDATE"],
            ),
            (
                "deny_acts_on_delete",
                vec![rule(json!(["Pod"]), deny())],
                &["CREATE", "UPDATE", "DELETE"],
            ),
            (
                "cel_acts_on_delete",
                vec![rule(
                    json!(["Pod"]),
                    json!({"cel": {"expressions": [{"expression": "true"}]}}),
                )],
                &["CREATE", "UPDATE", "DELETE"],
            ),
            (
                "foreach_acts_on_delete",
                vec![rule(
                    json!(["Pod"]),
                    json!({"foreach": [{"list": "request.object.spec.containers", "pattern": {"image": "*"}}]}),
                )],
                &["CREATE", "UPDATE", "DELETE"],
            ),
            (
                "connect_subresource_adds_connect",
                vec![rule(json!(["Pod/exec"]), pattern())],
                &["CREATE", "UPDATE", "CONNECT"],
            ),
            (
                "listed_operations_are_used",
                vec![
                    with_operations(json!(["CREATE"])),
                    with_operations(json!(["DELETE", "CREATE"])),
                ],
                &["CREATE", "DELETE"],
            ),
            (
                "one_unlisted_filter_means_the_defaults",
                vec![
                    with_operations(json!(["CREATE"])),
                    rule(json!(["Pod"]), pattern()),
                ],
                &["CREATE", "UPDATE", "DELETE"],
            ),
        ];
        for (name, rules, expected) in cases {
            let rules: Vec<Json> = rules
                .into_iter()
                .enumerate()
                .map(|(i, mut r)| {
                    r["name"] = json!(format!("r{i}"));
                    r
                })
                .collect();
            let policy =
                cluster_policy(json!({AUTOGEN_ANNOTATION: "none"}), json!({"rules": rules}));
            let (manifest, _) = converted(&policy);
            for webhook_rule in manifest["spec"]["rules"].as_array().unwrap() {
                assert_eq!(webhook_rule["operations"], json!(expected), "{name}");
            }
        }
    }

    #[test]
    fn context_aware_resources_cover_what_rules_read() {
        let namespace = json!([{"apiVersion": "v1", "kind": "Namespace"}]);
        let bindings = json!([
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding"},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding"},
        ]);
        let with = |extra: Json| {
            let mut r = rule(json!(["Pod"]), deny());
            for (key, value) in extra.as_object().unwrap() {
                r[key] = value.clone();
            }
            r
        };
        let cases: Vec<(&str, Json, Json, Json)> = vec![
            (
                "nothing_read",
                json!({}),
                rule(json!(["Pod"]), pattern()),
                Json::Null,
            ),
            (
                "config_map_entry",
                json!({}),
                with(
                    json!({"context": [{"name": "cm", "configMap": {"name": "c", "namespace": "default"}}]}),
                ),
                json!([{"apiVersion": "v1", "kind": "ConfigMap"}]),
            ),
            (
                "api_call_path",
                json!({}),
                with(
                    json!({"context": [{"name": "d", "apiCall": {"urlPath": "/apis/apps/v1/namespaces/{{request.namespace}}/deployments", "jmesPath": "items[].metadata.name"}}]}),
                ),
                json!([{"apiVersion": "apps/v1", "kind": "Deployment"}]),
            ),
            (
                "access_review_post_reads_nothing",
                json!({}),
                with(
                    json!({"context": [{"name": "r", "apiCall": {"urlPath": "/apis/authorization.k8s.io/v1/subjectaccessreviews", "method": "POST",
                        "data": [{"key": "spec", "value": {"user": "{{ request.userInfo.username }}", "resourceAttributes": {"verb": "delete", "resource": "pods"}}}]}}]}),
                ),
                Json::Null,
            ),
            (
                "api_call_in_foreach",
                json!({}),
                rule(
                    json!(["Pod"]),
                    json!({"foreach": [{"list": "request.object.spec.containers",
                    "context": [{"name": "ns", "apiCall": {"urlPath": "/api/v1/namespaces/{{request.namespace}}"}}], "deny": {}}]}),
                ),
                namespace.clone(),
            ),
            (
                "namespace_selector_in_match",
                json!({}),
                json!({"name": "r", "match": {"any": [{"resources": {"kinds": ["Pod"], "namespaceSelector": {"matchLabels": {"a": "b"}}}}]}, "validate": pattern()}),
                namespace.clone(),
            ),
            (
                "namespace_selector_in_overrides",
                json!({"validationFailureActionOverrides": [{"action": "Enforce", "namespaceSelector": {"matchLabels": {"a": "b"}}}]}),
                rule(json!(["Pod"]), pattern()),
                namespace.clone(),
            ),
            (
                "cluster_roles_in_exclude",
                json!({}),
                with(json!({"exclude": {"any": [{"clusterRoles": ["cluster-admin"]}]}})),
                bindings.clone(),
            ),
            (
                "roles_in_variables",
                json!({}),
                rule(
                    json!(["Pod"]),
                    json!({"deny": {"conditions": {"any": [{"key": "admin", "operator": "AnyIn", "value": "{{ request.roles }}"}]}}}),
                ),
                bindings.clone(),
            ),
            (
                "cel_param_kind",
                json!({}),
                rule(
                    json!(["Pod"]),
                    json!({"cel": {"paramKind": {"apiVersion": "example.com/v1", "kind": "Limits"}, "paramRef": {"name": "limits"},
                    "expressions": [{"expression": "true"}]}}),
                ),
                json!([{"apiVersion": "example.com/v1", "kind": "Limits"}]),
            ),
            (
                "global_reference_to_an_entry_in_the_settings",
                json!({"globalContextEntries": [{"apiVersion": "kyverno.io/v2beta1", "kind": "GlobalContextEntry",
                    "metadata": {"name": "deploys"},
                    "spec": {"kubernetesResource": {"group": "apps", "version": "v1", "resource": "deployments"}}}]}),
                with(
                    json!({"context": [{"name": "n", "globalReference": {"name": "deploys", "jmesPath": "length(@)"}}]}),
                ),
                json!([{"apiVersion": "apps/v1", "kind": "Deployment"}]),
            ),
            (
                "cel_namespace_object",
                json!({}),
                rule(
                    json!(["Pod"]),
                    json!({"cel": {"expressions": [{"expression": "namespaceObject.metadata.name != 'x'"}]}}),
                ),
                namespace.clone(),
            ),
        ];
        for (name, spec, r, expected) in cases {
            let mut spec = spec;
            spec["rules"] = json!([r]);
            let (manifest, warnings) = converted(&cluster_policy(json!({}), spec));
            assert_eq!(
                manifest["spec"]
                    .get("contextAwareResources")
                    .cloned()
                    .unwrap_or(Json::Null),
                expected,
                "{name}"
            );
            assert_eq!(warnings, Vec::<String>::new(), "{name}");
        }
    }

    #[test]
    fn api_calls_that_hide_their_resource_are_warned_about() {
        let cases = [
            ("variable_plural", "/api/v1/namespaces/default/{{ kind }}",
                "p.yaml: document 1 (policy p): rule `r`: the apiCall `/api/v1/namespaces/default/{{ kind }}` picks its resource with variables: add what it reads to `contextAwareResources` by hand"),
            ("guessed_kind", "/apis/acme.io/v1/gizmos",
                "p.yaml: document 1 (policy p): rule `r`: the apiCall `/apis/acme.io/v1/gizmos` reads `gizmos`, guessed to be kind `Gizmo`: check it, the policy may only read the kinds in `contextAwareResources`"),
        ];
        for (name, url, expected) in cases {
            let mut r = rule(json!(["Pod"]), deny());
            r["context"] = json!([{"name": "x", "apiCall": {"urlPath": url}}]);
            let (_, warnings) = converted(&cluster_policy(
                json!({AUTOGEN_ANNOTATION: "none"}),
                json!({"rules": [r]}),
            ));
            assert_eq!(warnings, [expected], "{name}");
        }
    }

    #[test]
    fn a_global_reference_to_the_clusters_entry_reads_it_and_is_warned_about() {
        let mut r = rule(json!(["Pod"]), deny());
        r["context"] = json!([{"name": "n", "globalReference": {"name": "deploys.count"}}]);
        let (manifest, warnings) = converted(&cluster_policy(
            json!({AUTOGEN_ANNOTATION: "none"}),
            json!({"rules": [r]}),
        ));
        assert_eq!(
            manifest["spec"]["contextAwareResources"],
            json!([{"apiVersion": "kyverno.io/v2alpha1", "kind": "GlobalContextEntry"},
                {"apiVersion": "kyverno.io/v2beta1", "kind": "GlobalContextEntry"}])
        );
        assert_eq!(
            warnings,
            ["p.yaml: document 1 (policy p): rule `r`: the globalReference `deploys.count` reads GlobalContextEntry `deploys` from the cluster: add the kind that entry reads to `contextAwareResources` by hand, or define the entry in the settings' `globalContextEntries`"]
        );
    }

    #[test]
    fn namespaced_policy_becomes_an_admission_policy_without_cluster_access() {
        let mut r = rule(json!(["ConfigMap"]), deny());
        r["context"] = json!([{"name": "cm", "configMap": {"name": "c", "namespace": "team"}}]);
        let policy = |metadata: Json| json!({"apiVersion": "kyverno.io/v2beta1", "kind": "Policy", "metadata": metadata, "spec": {"rules": [r.clone()]}});
        let (manifest, warnings) = converted(&policy(json!({"name": "p", "namespace": "team"})));
        assert_eq!(manifest["kind"], "AdmissionPolicy");
        assert_eq!(
            manifest["metadata"],
            json!({"name": "p", "namespace": "team"})
        );
        assert_eq!(manifest["spec"]["settings"]["policyName"], "p");
        assert_eq!(manifest["spec"].get("contextAwareResources"), None);
        assert_eq!(
            warnings,
            ["p.yaml: document 1 (policy team/p): the rules read v1 ConfigMap from the cluster, but an `AdmissionPolicy` cannot be granted `contextAwareResources` (only a `ClusterAdmissionPolicy` can): those lookups will fail; make it a ClusterPolicy to grant them"]
        );
        let (manifest, _) = converted(&policy(json!({"name": "p"})));
        assert_eq!(manifest["metadata"]["namespace"], "default");
    }

    #[test]
    fn manifest_fields_come_from_the_policy() {
        let base = || json!({"rules": [rule(json!(["Pod"]), pattern())]});
        let with = |extra: Json| {
            let mut spec = base();
            for (key, value) in extra.as_object().unwrap() {
                spec[key] = value.clone();
            }
            spec
        };
        let cases: Vec<(&str, Json, Json, Vec<&str>)> = vec![
            ("defaults", base(), json!({"mode": "protect", "mutating": false, "backgroundAudit": true, "failurePolicy": "Fail"}), vec![]),
            ("background_off_ignore_and_timeout", with(json!({"background": false, "failurePolicy": "Ignore", "webhookTimeoutSeconds": 15})),
                json!({"backgroundAudit": false, "failurePolicy": "Ignore", "timeoutSeconds": 15}), vec![]),
            ("webhook_configuration_wins", with(json!({"failurePolicy": "Fail", "webhookTimeoutSeconds": 15,
                    "webhookConfiguration": {"failurePolicy": "Ignore", "timeoutSeconds": 5, "matchConditions": [{"name": "not-system", "expression": "true"}]}})),
                json!({"failurePolicy": "Ignore", "timeoutSeconds": 5, "matchConditions": [{"name": "not-system", "expression": "true"}]}), vec![]),
            ("timeout_clamped_low", with(json!({"webhookTimeoutSeconds": 1})), json!({"timeoutSeconds": 2}),
                vec!["p.yaml: document 1 (policy p): the webhook timeout of 1 s is outside the 2..=30 s Kubewarden accepts: 2 s is used"]),
            ("timeout_clamped_high", with(json!({"webhookTimeoutSeconds": 45})), json!({"timeoutSeconds": 30}),
                vec!["p.yaml: document 1 (policy p): the webhook timeout of 45 s is outside the 2..=30 s Kubewarden accepts: 30 s is used"]),
            ("background_only_policy_monitors", with(json!({"admission": false})), json!({"mode": "monitor"}),
                vec!["p.yaml: document 1 (policy p): `spec.admission` is false: Kyverno only scans existing resources with it; the Kubewarden policy runs in `monitor` mode, which evaluates requests without rejecting them, and its settings leave `admission` out, so that background audits report violations"]),
        ];
        for (name, spec, expected, expected_warnings) in cases {
            let (manifest, warnings) = converted(&cluster_policy(
                json!({AUTOGEN_ANNOTATION: "none"}),
                spec.clone(),
            ));
            for (key, value) in expected.as_object().unwrap() {
                assert_eq!(&manifest["spec"][key], value, "{name}: {key}");
            }
            assert_eq!(manifest["spec"]["module"], DEFAULT_MODULE, "{name}");
            assert_eq!(warnings, expected_warnings, "{name}");
            // The settings are the spec, plus the name and the annotation,
            // less `admission: false`, which `monitor` mode stands in for.
            let mut settings = spec;
            if settings["admission"] == json!(false) {
                settings.as_object_mut().unwrap().remove("admission");
            }
            settings["policyName"] = json!("p");
            settings["autogenControllers"] = json!("none");
            assert_eq!(manifest["spec"]["settings"], settings, "{name}");
        }
    }

    #[test]
    fn severity_and_category_become_kubewarden_annotations() {
        let annotations = json!({"policies.kyverno.io/severity": "high", "policies.kyverno.io/category": "Best Practices",
            "policies.kyverno.io/title": "Require Labels"});
        let (manifest, _) = converted(&cluster_policy(
            annotations,
            json!({"rules": [rule(json!(["Pod"]), pattern())]}),
        ));
        assert_eq!(
            manifest["metadata"],
            json!({"name": "p", "annotations": {"io.kubewarden.policy.severity": "high", "io.kubewarden.policy.category": "Best Practices"}})
        );
    }

    #[test]
    fn the_module_reference_is_an_option() {
        let content = serde_yaml::to_value(cluster_policy(
            json!({}),
            json!({"rules": [rule(json!(["Pod"]), pattern())]}),
        ))
        .unwrap();
        let documents = [Document {
            source: "p.yaml".into(),
            index: 1,
            content: Ok(content),
        }];
        let options = Options {
            module: "file:///tmp/policy.wasm".into(),
        };
        let conversion = convert(&documents, &options);
        assert_eq!(
            conversion.manifests[0]["spec"]["module"],
            Yaml::from("file:///tmp/policy.wasm")
        );
    }

    #[test]
    fn rules_of_other_types_are_left_out_with_a_warning() {
        let rules = json!([
            {"name": "add-labels", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "mutate": {"patchStrategicMerge": {}}},
            rule(json!(["Pod"]), pattern()),
            {"name": "clone-secret", "match": {"any": [{"resources": {"kinds": ["Namespace"]}}]}, "generate": {"kind": "Secret"}},
            {"name": "signed", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "verifyImages": [{"imageReferences": ["*"]}]},
        ]);
        let (manifest, warnings) = converted(&cluster_policy(
            json!({AUTOGEN_ANNOTATION: "none"}),
            json!({"rules": rules}),
        ));
        assert_eq!(
            manifest["spec"]["settings"]["rules"],
            json!([rule(json!(["Pod"]), pattern())])
        );
        assert_eq!(
            routed(&manifest),
            ["/*/pods", "/*/pods/ephemeralcontainers"]
        );
        assert_eq!(
            warnings,
            [
                "p.yaml: document 1 (policy p): spec.rules[0]: rule `add-labels` is a `mutate` rule: left out, the module enforces validate rules only",
                "p.yaml: document 1 (policy p): spec.rules[2]: rule `clone-secret` is a `generate` rule: left out, the module enforces validate rules only",
                "p.yaml: document 1 (policy p): spec.rules[3]: rule `signed` is a `verifyImages` rule: left out, the module enforces validate rules only",
            ]
        );
    }

    #[test]
    fn errors_name_the_document_and_the_problem() {
        let mutate_only = cluster_policy(
            json!({}),
            json!({"rules": [
            {"name": "m", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "mutate": {}}]}),
        );
        let bad_settings = cluster_policy(
            json!({AUTOGEN_ANNOTATION: 3}),
            json!({"validationFailureAction": "Block", "rules": [
            {"name": "m", "match": {"any": [{"resources": {"kinds": ["Pod"]}}]}, "mutate": {}},
            rule(json!(["Pod"]), json!({"pattern": {"spec": {"=(hostPID": false}}}))]}),
        );
        let cases: Vec<(&str, Json, Vec<&str>)> = vec![
            ("not_a_mapping", json!(["a", "b"]),
                vec!["p.yaml: document 1: is a list: expected a Kyverno `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1)"]),
            ("no_kind", json!({"apiVersion": "kyverno.io/v1"}),
                vec!["p.yaml: document 1: has no `kind`: expected a Kyverno `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1)"]),
            ("another_kind", json!({"apiVersion": "v1", "kind": "ConfigMap"}),
                vec!["p.yaml: document 1: a `v1` `ConfigMap` is not a Kyverno policy: expected a Kyverno `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1)"]),
            ("kubewarden_policy", json!({"apiVersion": "policies.kubewarden.io/v1", "kind": "ClusterAdmissionPolicy"}),
                vec!["p.yaml: document 1: a `policies.kubewarden.io/v1` `ClusterAdmissionPolicy` is not a Kyverno policy: expected a Kyverno `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1); it is a Kubewarden policy already"]),
            ("unknown_version", json!({"apiVersion": "kyverno.io/v9", "kind": "ClusterPolicy"}),
                vec!["p.yaml: document 1: a `kyverno.io/v9` `ClusterPolicy` is not a Kyverno policy: expected a Kyverno `ClusterPolicy` or `Policy` (kyverno.io/v1 or kyverno.io/v2beta1)"]),
            ("no_name", json!({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "spec": {}}),
                vec!["p.yaml: document 1: `metadata.name` is required: the Kubewarden policy takes the same name"]),
            ("no_spec", json!({"apiVersion": "kyverno.io/v1", "kind": "ClusterPolicy", "metadata": {"name": "p"}}),
                vec!["p.yaml: document 1: `spec` is required and must be a mapping: it holds the policy's rules"]),
            ("no_rules", cluster_policy(json!({}), json!({})),
                vec!["p.yaml: document 1 (policy p): spec.rules: is required: list the validate rules to enforce"]),
            ("no_validate_rule_left", mutate_only,
                vec!["p.yaml: document 1 (policy p): has no validate rule: there is nothing for the module to enforce"]),
            ("settings_problems_with_policy_paths", bad_settings,
                vec![
                    "p.yaml: document 1 (policy p): spec.validationFailureAction: must be `Enforce` or `Audit`, not `Block`",
                    "p.yaml: document 1 (policy p): metadata.annotations.\"pod-policies.kyverno.io/autogen-controllers\": must be a string, not a number",
                    "p.yaml: document 1 (policy p): spec.rules[1].validate.pattern.spec.\"=(hostPID\": anchor `=(hostPID` is missing its closing `)`",
                ]),
            ("bad_kind_selector", cluster_policy(json!({}), json!({"rules": [rule(json!(["a/b/c/d/e"]), pattern())]})),
                vec!["p.yaml: document 1 (policy p): kind `a/b/c/d/e` is not a kind selector (`Kind`, `version/Kind` or `group/version/Kind`, with an optional `/subresource`)"]),
            ("bad_failure_policy", cluster_policy(json!({}), json!({"failurePolicy": "Sometimes", "rules": [rule(json!(["Pod"]), pattern())]})),
                vec!["p.yaml: document 1 (policy p): spec.failurePolicy: must be `Fail` or `Ignore`, not `Sometimes`"]),
        ];
        for (name, document, expected) in cases {
            let (manifest, _, errors) = convert_json(&document);
            assert_eq!(manifest, None, "{name}");
            assert_eq!(errors, expected, "{name}");
        }
    }

    #[test]
    fn documents_that_are_not_yaml_or_empty() {
        let documents = [
            Document {
                source: "a.yaml".into(),
                index: 1,
                content: Ok(Yaml::Null),
            },
            Document {
                source: "a.yaml".into(),
                index: 2,
                content: Err("not YAML: bad indentation".into()),
            },
        ];
        let conversion = convert(&documents, &Options::default());
        assert!(conversion.manifests.is_empty());
        assert_eq!(
            conversion
                .errors
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["a.yaml: document 2: not YAML: bad indentation"]
        );
    }

    #[test]
    fn settings_paths_map_back_to_the_policy() {
        let cases = [
            ("", "spec"),
            ("rules", "spec.rules"),
            ("rules[0].validate", "spec.rules[2].validate"),
            ("rules[1]", "spec.rules[5]"),
            ("validationFailureAction", "spec.validationFailureAction"),
            ("policyName", "metadata.name"),
            (
                "autogenControllers",
                "metadata.annotations.\"pod-policies.kyverno.io/autogen-controllers\"",
            ),
        ];
        for (settings, expected) in cases {
            assert_eq!(policy_path(settings, &[2, 5]), expected, "{settings}");
        }
    }

    #[test]
    fn plurals_are_guessed_as_kubernetes_does() {
        let cases = [
            ("Widget", "widgets"),
            ("Policy", "policies"),
            ("Gateway", "gateways"),
            ("Ingress", "ingresses"),
            ("Box", "boxes"),
            ("Batch", "batches"),
        ];
        for (kind, plural) in cases {
            assert_eq!(resources::guess_plural(kind), plural, "{kind}");
        }
    }
}
