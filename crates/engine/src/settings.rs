//! The policy settings: the `spec` of a Kyverno `ClusterPolicy`, as a typed model.
//!
//! The model is read from the settings JSON by hand rather than by
//! `#[derive(Deserialize)]` so that one pass reports every problem (unknown
//! keys, wrong types, missing fields) with its settings path, where serde
//! stops at the first.  Free-form parts (patterns, condition keys and values)
//! stay JSON and are compiled later, once a rule is known to apply.

use std::borrow::Cow;

use serde_json::Value;

use crate::api_call::{
    unsendable, Unsendable, ACCESS_REVIEW_FIELDS, RESOURCE_ATTRIBUTE_FIELDS, SUBJECT_ACCESS_REVIEWS,
};
use crate::json::{same_key, Json, JsonCow, Map};

use crate::diagnostics::{index_path, key_path, Diagnostics};

/// What happens to a request that violates a rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureAction {
    Enforce,
    Audit,
}

impl FailureAction {
    /// Kyverno accepts `Enforce`/`Audit` and the legacy `enforce`/`audit`.
    fn parse(text: &str) -> Option<Self> {
        match text {
            "Enforce" | "enforce" => Some(Self::Enforce),
            "Audit" | "audit" => Some(Self::Audit),
            _ => None,
        }
    }
}

/// Whether every matching rule runs, or only the first one that applies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ApplyRules {
    #[default]
    All,
    One,
}

/// A failure action for the namespaces listed (wildcards allowed).
#[derive(Debug, Clone, PartialEq)]
pub struct FailureActionOverride {
    pub action: FailureAction,
    pub namespaces: Vec<String>,
    pub namespace_selector: Option<LabelSelector>,
}

/// The policy spec.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicySpec<'a> {
    pub rules: Vec<Rule<'a>>,
    /// `validationFailureAction`; Kyverno's default is `Audit`.
    pub failure_action: FailureAction,
    pub failure_action_overrides: Vec<FailureActionOverride>,
    pub apply_rules: ApplyRules,
    /// Stands in for the `pod-policies.kyverno.io/autogen-controllers` annotation.
    pub autogen_controllers: Option<String>,
    /// The Kyverno policy's `metadata.name`: messages name the policy, as
    /// Kyverno's do, and PolicyExceptions name it.
    pub policy_name: Option<String>,
    /// The namespace of a namespaced `Policy` given as a whole manifest:
    /// exceptions name such a policy `namespace/name`.
    pub policy_namespace: Option<String>,
    /// PolicyExceptions given with the settings (`exceptions`).
    pub exceptions: Vec<PolicyException>,
    /// GlobalContextEntry manifests given with the settings
    /// (`globalContextEntries`), checked, as `globalReference` entries read
    /// them in place of the cluster's.
    pub global_context_entries: Vec<(String, Value)>,
    /// `webhookConfiguration.failurePolicy`, else `failurePolicy`: with
    /// `Ignore`, Kyverno lets a request through when a rule errors.
    pub errors_block: bool,
    /// `admission` (default true). With false, Kyverno's admission webhook
    /// never sees the policy: it only runs in background scans.
    pub admission: bool,
    /// `webhookConfiguration.matchConditions`: CEL conditions the API
    /// server checks before it calls the policy's webhook.
    pub match_conditions: Vec<NamedExpression>,
}

impl PolicySpec<'_> {
    /// How PolicyExceptions name this policy (`policyName`): `name` for a
    /// ClusterPolicy, `namespace/name` for a Policy.
    pub fn exception_key(&self) -> Option<String> {
        let name = self.policy_name.as_deref()?;
        Some(match &self.policy_namespace {
            Some(namespace) => format!("{namespace}/{name}"),
            None => name.to_string(),
        })
    }
}

/// A Kyverno `PolicyException` (`kyverno.io/v2` or `v2beta1`): the rules it
/// exempts, and the resources (`match`, `conditions`) it exempts them for.
#[derive(Debug, Clone, PartialEq)]
pub struct PolicyException {
    /// `namespace/name`, or `name`: how Kyverno names it in messages.
    pub key: String,
    pub targets: Vec<ExceptionTarget>,
    pub match_resources: MatchResources,
    pub conditions: Option<Conditions<'static>>,
    /// Pod security controls exempted; an exception with these only relaxes
    /// `podSecurity` rules, control by control.
    pub pod_security: Vec<PodSecurityExclude>,
    /// Where it sits in the settings (`exceptions[0]`), for messages; empty
    /// for exceptions read from the cluster.
    pub path: String,
}

/// `spec.exceptions[]`: a policy and the names of its rules (wildcards allowed).
#[derive(Debug, Clone, PartialEq)]
pub struct ExceptionTarget {
    pub policy_name: String,
    pub rule_names: Vec<String>,
}

/// A rule; its validate body borrows the settings' JSON (patterns are not
/// copied out of the settings).
#[derive(Debug, Clone, PartialEq)]
pub struct Rule<'a> {
    pub name: Cow<'a, str>,
    /// Where the rule sits in the settings (`rules[2]`), for messages.
    pub path: String,
    pub match_resources: MatchResources,
    pub exclude: Option<MatchResources>,
    pub context: Vec<ContextEntry>,
    pub preconditions: Option<Conditions<'a>>,
    pub cel_preconditions: Vec<NamedExpression>,
    pub validate: Validation<'a>,
}

/// `match` or `exclude`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct MatchResources {
    pub any: Vec<ResourceFilter>,
    pub all: Vec<ResourceFilter>,
    /// The legacy form without `any`/`all`: `match: {resources: ..., subjects: ...}`.
    /// Boxed: rare, and a rule holds two blocks.
    pub legacy: Option<Box<ResourceFilter>>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceFilter {
    pub resources: Option<ResourceDescription>,
    pub subjects: Vec<Subject>,
    pub roles: Vec<String>,
    pub cluster_roles: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct ResourceDescription {
    pub kinds: Vec<String>,
    /// The deprecated single `name`; checked on its own, like `names`.
    pub name: Option<String>,
    pub names: Vec<String>,
    pub namespaces: Vec<String>,
    pub operations: Vec<String>,
    pub annotations: Vec<(String, String)>,
    pub selector: Option<LabelSelector>,
    pub namespace_selector: Option<LabelSelector>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct LabelSelector {
    pub match_labels: Vec<(String, String)>,
    pub match_expressions: Vec<LabelSelectorRequirement>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct LabelSelectorRequirement {
    pub key: String,
    pub operator: String,
    pub values: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Subject {
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Validation<'a> {
    pub message: Option<Cow<'a, str>>,
    pub failure_action: Option<FailureAction>,
    pub failure_action_overrides: Vec<FailureActionOverride>,
    pub body: ValidationBody<'a>,
    /// The pod template's path autogen puts `pattern` / `anyPattern` under
    /// (`spec.template`, …); empty for a rule as written.
    pub template: &'static [&'static str],
    /// `allowExistingViolations` (default true): an UPDATE whose old object
    /// already failed the rule is not blocked.
    pub allow_existing_violations: bool,
}

/// Exactly one way of validating.
#[derive(Debug, Clone, PartialEq)]
pub enum ValidationBody<'a> {
    /// Borrowed from the settings, or rewritten by autogen.
    Pattern(JsonCow<'a>),
    AnyPattern(Vec<JsonCow<'a>>),
    Deny(Deny<'a>),
    Foreach(Vec<Foreach<'a>>),
    /// Boxed: the largest body, and every rule holds one.
    Cel(Box<Cel>),
    PodSecurity(PodSecurity),
    Manifests(&'a Json<'a>),
}

impl ValidationBody<'_> {
    pub fn key(&self) -> &'static str {
        match self {
            Self::Pattern(_) => "pattern",
            Self::AnyPattern(_) => "anyPattern",
            Self::Deny(_) => "deny",
            Self::Foreach(_) => "foreach",
            Self::Cel(_) => "cel",
            Self::PodSecurity(_) => "podSecurity",
            Self::Manifests(_) => "manifests",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Deny<'a> {
    pub conditions: Option<Conditions<'a>>,
}

/// `any`/`all` blocks (both may be present), or Kyverno's legacy plain list
/// (all must hold).
#[derive(Debug, Clone, PartialEq)]
pub enum Conditions<'a> {
    Blocks {
        any: Option<Vec<Condition<'a>>>,
        all: Option<Vec<Condition<'a>>>,
    },
    Legacy(Vec<Condition<'a>>),
}

impl Conditions<'_> {
    /// The same conditions, owning what they borrowed.
    pub fn into_owned(self) -> Conditions<'static> {
        let list = |l: Vec<Condition<'_>>| l.into_iter().map(Condition::into_owned).collect();
        match self {
            Conditions::Blocks { any, all } => Conditions::Blocks {
                any: any.map(list),
                all: all.map(list),
            },
            Conditions::Legacy(l) => Conditions::Legacy(list(l)),
        }
    }
}

/// A condition; its key and value borrow the settings' JSON.
#[derive(Debug, Clone, PartialEq)]
pub struct Condition<'a> {
    pub key: JsonCow<'a>,
    pub operator: Cow<'a, str>,
    pub value: JsonCow<'a>,
    pub message: Option<String>,
}

impl Condition<'_> {
    fn into_owned(self) -> Condition<'static> {
        let owned = |v: JsonCow<'_>| JsonCow::Owned(v.into_owned().into_owned());
        Condition {
            key: owned(self.key),
            operator: Cow::Owned(self.operator.into_owned()),
            value: owned(self.value),
            message: self.message,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Foreach<'a> {
    /// The `element<N>` / `elementIndex<N>` its text names.
    pub numbered: NumberedNames,
    pub list: String,
    pub context: Vec<ContextEntry>,
    pub preconditions: Option<Conditions<'a>>,
    pub element_scope: Option<bool>,
    pub body: ForeachBody<'a>,
}

/// Which nesting levels' `element<N>` and `elementIndex<N>` a foreach
/// entry names anywhere in its text (bit N); foreach sets only those.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct NumberedNames {
    pub elements: u64,
    pub indexes: u64,
}

impl NumberedNames {
    pub fn of(value: &Json<'_>) -> Self {
        let mut names = Self::default();
        names.add(value);
        names
    }

    pub fn element(self, nesting: usize) -> bool {
        nesting < 64 && self.elements >> nesting & 1 == 1
    }

    pub fn index(self, nesting: usize) -> bool {
        nesting < 64 && self.indexes >> nesting & 1 == 1
    }

    fn add(&mut self, value: &Json<'_>) {
        match value {
            Json::String(s) => self.read(s),
            Json::Array(items) => items.iter().for_each(|v| self.add(v)),
            Json::Object(map) => map.iter().for_each(|(k, v)| {
                self.read(k);
                self.add(v);
            }),
            _ => {}
        }
    }

    /// One pass over `text` for both a `\u` escape and the `m` of
    /// `element`: this runs on every string of every foreach, and most
    /// hold neither.
    fn read(&mut self, text: &str) {
        const WORD: &[u8] = b"element";
        // Where `m` sits in `element`.
        const M: usize = 3;
        let bytes = text.as_bytes();
        for at in memchr::memchr2_iter(b'\\', b'm', bytes) {
            if bytes.get(at) == Some(&b'\\') {
                // A JMESPath `\u` escape could spell any name.
                if bytes.get(at + 1) == Some(&b'u') {
                    self.elements = u64::MAX;
                    self.indexes = u64::MAX;
                    return;
                }
                continue;
            }
            let Some(start) = at.checked_sub(M) else {
                continue;
            };
            if bytes.get(start..start + WORD.len()) != Some(WORD) {
                continue;
            }
            let rest = text.get(start + WORD.len()..).unwrap_or_default();
            let (rest, bits) = match rest.strip_prefix("Index") {
                Some(rest) => (rest, &mut self.indexes),
                None => (rest, &mut self.elements),
            };
            let digits: &str = rest
                .find(|c: char| !c.is_ascii_digit())
                .map_or(rest, |end| rest.get(..end).unwrap_or_default());
            if let Ok(n) = digits.parse::<u32>() {
                *bits |= 1u64.checked_shl(n).unwrap_or(0);
            }
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ForeachBody<'a> {
    Pattern(JsonCow<'a>),
    AnyPattern(Vec<JsonCow<'a>>),
    Deny(Deny<'a>),
    Foreach(Vec<Foreach<'a>>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ContextEntry {
    pub name: String,
    pub source: ContextSource,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ContextSource {
    Variable {
        value: Option<Value>,
        jmes_path: Option<String>,
        default: Option<Value>,
    },
    /// A ConfigMap read from the cluster; `name` and `namespace` may hold
    /// variables.
    ConfigMap { name: String, namespace: String },
    /// A Kubernetes API GET (`urlPath`), its result queried with
    /// `jmesPath`; `default` when the call fails. `post` is the body of a
    /// `POST` (the `data` entries as one object): only a
    /// SubjectAccessReview, which Kubewarden answers with `can_i`.
    ApiCall {
        url_path: String,
        jmes_path: Option<String>,
        default: Option<Value>,
        post: Option<Value>,
    },
    /// An image's data from its registry (`reference` may hold variables),
    /// queried with `jmesPath`.
    ImageRegistry {
        reference: String,
        jmes_path: Option<String>,
    },
    /// Data a `GlobalContextEntry` keeps (`name` is `entry` or
    /// `entry.projection` and may hold variables), queried with `jmesPath`.
    GlobalReference {
        name: String,
        jmes_path: Option<String>,
    },
}

/// A Kyverno `GlobalContextEntry` (`kyverno.io/v2alpha1` or `v2beta1`):
/// data Kyverno keeps for `globalReference` context entries, which this
/// policy reads through the host capabilities on each request.
#[derive(Debug, Clone, PartialEq)]
pub struct GlobalContextEntry {
    pub name: String,
    pub source: GlobalSource,
    /// `name`, `jmesPath` (over the entry's data).
    pub projections: Vec<(String, String)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum GlobalSource {
    /// Every object of a resource, in `namespace` or in all namespaces.
    KubernetesResource {
        group: String,
        version: String,
        resource: String,
        namespace: Option<String>,
    },
    /// The answer to a Kubernetes API GET.
    ApiCall { url_path: String },
}

#[derive(Debug, Clone, PartialEq)]
pub struct NamedExpression {
    pub name: String,
    pub expression: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CelExpression {
    pub expression: String,
    pub message: Option<String>,
    pub message_expression: Option<String>,
    pub reason: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
pub struct Cel {
    pub expressions: Vec<CelExpression>,
    pub variables: Vec<NamedExpression>,
    pub params: Option<Params>,
    pub audit_annotations: Vec<AuditAnnotation>,
}

/// `auditAnnotations[]`: a key and the CEL expression giving its value.
#[derive(Debug, Clone, PartialEq)]
pub struct AuditAnnotation {
    pub key: String,
    pub value_expression: String,
}

/// `paramKind` + `paramRef`: the parameter resources a CEL rule reads as
/// `params`, as in a ValidatingAdmissionPolicy and its binding.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub api_version: String,
    pub kind: String,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub selector: Option<LabelSelector>,
    /// `parameterNotFoundAction: Deny`: no parameter is an error.
    pub deny_when_missing: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodSecurity {
    pub level: String,
    pub version: Option<String>,
    pub exclude: Vec<PodSecurityExclude>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct PodSecurityExclude {
    pub control_name: String,
    pub images: Vec<String>,
    pub restricted_field: Option<String>,
    pub values: Vec<String>,
}

/// Policy-level fields Kyverno accepts that do not change a validate verdict
/// in an admission request (they steer reports, webhooks or other rule types).
pub const VERDICT_NEUTRAL_SPEC_FIELDS: &[&str] = &[
    "background",
    "webhookTimeoutSeconds",
    "schemaValidation",
    "mutateExistingOnPolicyUpdate",
    "generateExisting",
    "generateExistingOnPolicyUpdate",
    "useServerSideApply",
    "emitWarning",
];

const SPEC_FIELDS: &[&str] = &[
    "rules",
    "admission",
    "failurePolicy",
    "webhookConfiguration",
    "validationFailureAction",
    "validationFailureActionOverrides",
    "applyRules",
    "autogenControllers",
    "policyName",
    "exceptions",
    "globalContextEntries",
];

/// A whole Kyverno policy given as settings: its `spec` is the policy.
const POLICY_KINDS: &[&str] = &["ClusterPolicy", "Policy"];
const POLICY_API_VERSIONS: &[&str] = &["kyverno.io/v1", "kyverno.io/v2beta1"];
const MANIFEST_FIELDS: &[&str] = &["apiVersion", "kind", "metadata", "spec", "status"];
const AUTOGEN_ANNOTATION: &str = "pod-policies.kyverno.io/autogen-controllers";

/// Parses the settings document; every problem found is pushed to `diags`.
/// The settings are a Kyverno policy's `spec`, or the whole `ClusterPolicy`
/// or `Policy` manifest. Returns `None` only when the document is not an
/// object at all.
pub fn parse<'a>(settings: &'a Json<'a>, diags: &mut Diagnostics) -> Option<PolicySpec<'a>> {
    let is_manifest = settings.as_object().is_some_and(|m| {
        ["apiVersion", "kind", "spec"]
            .iter()
            .any(|k| m.contains_key(k))
    });
    if !is_manifest {
        return parse_spec(settings, diags);
    }
    let manifest = Fields::open(settings, "", &[MANIFEST_FIELDS], diags)?;
    let kind = manifest.string("kind", diags).unwrap_or_default();
    let api_version = manifest.string("apiVersion", diags).unwrap_or_default();
    if !POLICY_KINDS.contains(&kind.as_str())
        || !POLICY_API_VERSIONS.contains(&api_version.as_str())
    {
        let given = match (api_version.as_str(), kind.as_str()) {
            ("", "") => "a document with `spec` but no `apiVersion` and `kind`".to_string(),
            (version, kind) => format!("a `{version}` `{kind}`"),
        };
        let hint = if kind == "ClusterAdmissionPolicy" || kind == "AdmissionPolicy" {
            ": a Kubewarden policy's settings go in its `spec.settings`"
        } else {
            ""
        };
        diags.push(
            "",
            format!(
                "the settings are {given}; expected a Kyverno policy's `spec`, or a whole `ClusterPolicy` or `Policy` ({}){hint}",
                POLICY_API_VERSIONS.join(" or ")
            ),
        );
        return None;
    }
    let mut name = None;
    let mut namespace = None;
    let mut autogen = None;
    if let Some(metadata) = manifest.get("metadata").and_then(|m| {
        Fields::open(
            m,
            "metadata",
            &[&[
                "name",
                "namespace",
                "annotations",
                "labels",
                "uid",
                "resourceVersion",
                "generation",
                "creationTimestamp",
                "managedFields",
            ]],
            diags,
        )
    }) {
        name = metadata.string("name", diags);
        // A ClusterPolicy's namespace means nothing; a Policy's names it.
        namespace = metadata
            .string("namespace", diags)
            .filter(|n| kind == "Policy" && !n.is_empty());
        autogen = metadata
            .get("annotations")
            .and_then(|a| a.get(AUTOGEN_ANNOTATION))
            .and_then(Json::as_str)
            .map(str::to_string);
    }
    let Some(spec) = manifest.get("spec") else {
        diags.push(
            "spec",
            "is required: the Kyverno policy's `spec` holds its rules",
        );
        return None;
    };
    // The spec's problems, with paths into the manifest.
    let mut spec_diags = Diagnostics::default();
    let parsed = parse_spec(spec, &mut spec_diags);
    for e in spec_diags.into_errors() {
        let path = if e.path.is_empty() {
            "spec".to_string()
        } else {
            format!("spec.{}", e.path)
        };
        diags.push(&path, e.message);
    }
    let mut parsed = parsed?;
    if parsed.policy_name.is_none() {
        parsed.policy_name = name;
    }
    if parsed.policy_namespace.is_none() {
        parsed.policy_namespace = namespace;
    }
    if parsed.autogen_controllers.is_none() {
        parsed.autogen_controllers = autogen;
    }
    Some(parsed)
}

/// The policy's `spec` within the settings: the settings themselves, or
/// the `spec` of a whole policy manifest.
pub fn spec_of<'s, 'a>(settings: &'s Json<'a>) -> &'s Json<'a> {
    match settings.get("spec") {
        Some(spec) if settings.get("kind").is_some() || settings.get("apiVersion").is_some() => {
            spec
        }
        _ => settings,
    }
}

/// Parses a Kyverno policy's `spec`.
fn parse_spec<'a>(settings: &'a Json<'a>, diags: &mut Diagnostics) -> Option<PolicySpec<'a>> {
    let spec = Fields::open(
        settings,
        "",
        &[SPEC_FIELDS, VERDICT_NEUTRAL_SPEC_FIELDS],
        diags,
    )?;
    let rules = match spec.get("rules") {
        None => {
            diags.push("rules", "is required: list the validate rules to enforce");
            Vec::new()
        }
        Some(value) => parse_rules(value, diags),
    };
    let failure_action = match spec.string("validationFailureAction", diags) {
        None => FailureAction::Audit,
        Some(text) => parse_failure_action(&text, &spec.path("validationFailureAction"), diags),
    };
    let failure_action_overrides =
        parse_overrides(&spec, "validationFailureActionOverrides", diags);
    let apply_rules = match spec.string("applyRules", diags).as_deref() {
        None | Some("All") => ApplyRules::All,
        Some("One") => ApplyRules::One,
        Some(other) => {
            diags.push(
                "applyRules",
                format!("must be `All` or `One`, not `{other}`"),
            );
            ApplyRules::All
        }
    };
    let autogen_controllers = spec.string("autogenControllers", diags);
    let (errors_block, match_conditions) = parse_webhook_configuration(&spec, diags);
    let admission = spec.bool("admission", diags).unwrap_or(true);
    let background = spec.bool("background", diags).unwrap_or(true);
    // Kyverno's policy validation refuses a policy processed nowhere.
    if !admission && !background {
        diags.push(
            "admission",
            "and `background` are both false: Kyverno refuses a policy that runs neither at admission nor in background scans",
        );
    }
    let policy_name = spec.string("policyName", diags);
    let exceptions: Vec<PolicyException> = spec
        .list("exceptions", diags)
        .filter_map(|(p, v)| parse_exception(v, &p, diags))
        .collect();
    let global_context_entries: Vec<(String, Value)> = spec
        .list("globalContextEntries", diags)
        .filter_map(|(p, v)| {
            parse_global_context_entry(v, &p, diags).map(|entry| (entry.name, v.to_value()))
        })
        .collect();
    match &policy_name {
        None if !exceptions.is_empty() => diags.push(
            "exceptions",
            "need `policyName`: exceptions name the policy they exempt rules of",
        ),
        Some(name) => {
            for e in &exceptions {
                // A namespaced Policy's exceptions write `namespace/name`.
                let names_this = |t: &ExceptionTarget| {
                    t.policy_name == *name
                        || t.policy_name
                            .rsplit_once('/')
                            .is_some_and(|(_, n)| n == name)
                };
                if !e.targets.is_empty() && !e.targets.iter().any(names_this) {
                    diags.push(
                        &e.path,
                        format!("exempts no rule of this policy: its `policyName`s differ from `{name}`"),
                    );
                }
            }
        }
        None => {}
    }
    Some(PolicySpec {
        rules,
        failure_action,
        failure_action_overrides,
        apply_rules,
        autogen_controllers,
        policy_name,
        policy_namespace: None,
        exceptions,
        global_context_entries,
        errors_block,
        admission,
        match_conditions,
    })
}

/// Kubernetes' limit on a webhook's `matchConditions`.
const MAX_MATCH_CONDITIONS: usize = 64;

/// Whether a rule's error blocks (Kyverno's `GetFailurePolicy`:
/// `webhookConfiguration.failurePolicy`, else `failurePolicy`, else
/// `Fail`), and the webhook's `matchConditions`, checked as Kubernetes
/// checks a webhook's: named, each name once, at most 64.
fn parse_webhook_configuration(
    spec: &Fields<'_>,
    diags: &mut Diagnostics,
) -> (bool, Vec<NamedExpression>) {
    let read = |f: &Fields<'_>, diags: &mut Diagnostics| match f.text("failurePolicy", diags) {
        None => None,
        Some(text) => match text.as_ref() {
            "Fail" => Some(true),
            "Ignore" => Some(false),
            other => {
                diags.push(
                    &f.path("failurePolicy"),
                    format!("must be `Fail` or `Ignore`, not `{other}`"),
                );
                None
            }
        },
    };
    // `timeoutSeconds` steers the webhook, not the verdict: `kyverno-validate
    // convert` puts it on the Kubewarden policy.
    let mut match_conditions = Vec::new();
    let from_webhook = spec.get("webhookConfiguration").and_then(|v| {
        let path = spec.path("webhookConfiguration");
        let f = Fields::open(
            v,
            &path,
            &[&["failurePolicy", "timeoutSeconds", "matchConditions"]],
            diags,
        )?;
        let listed = f.list("matchConditions", diags);
        if listed.len() > MAX_MATCH_CONDITIONS {
            diags.push(
                &f.path("matchConditions"),
                format!(
                    "has {} conditions: Kubernetes allows at most {MAX_MATCH_CONDITIONS}",
                    listed.len()
                ),
            );
        }
        for (p, v) in listed {
            let Some(condition) = parse_named_expression(v, &p, diags) else {
                continue;
            };
            if condition.name.is_empty() {
                diags.push(&p, "`name` is required");
            } else if match_conditions
                .iter()
                .any(|c: &NamedExpression| c.name == condition.name)
            {
                diags.push(
                    &key_path(&p, "name"),
                    format!("`{}` is used twice: names must be unique", condition.name),
                );
            }
            match_conditions.push(condition);
        }
        read(&f, diags)
    });
    let own = read(spec, diags);
    (from_webhook.or(own).unwrap_or(true), match_conditions)
}

const EXCEPTION_API_VERSIONS: &[&str] = &["kyverno.io/v2", "kyverno.io/v2beta1"];

/// An `apiCall` (a context entry's or a global entry's) must be a GET of a
/// Kubernetes path: the host capabilities make no other call (a context
/// entry's SubjectAccessReview `POST` aside).
fn check_host_call(call: &Fields<'_>, path: &str, diags: &mut Diagnostics) {
    check_service(call, path, diags);
    match call.string("method", diags).as_deref() {
        None | Some("GET") => {}
        Some(other) => diags.push(
            &key_path(path, "method"),
            format!("`{other}` requests cannot be made through Kubewarden's host capabilities, which read resources (`GET`) and answer a SubjectAccessReview `POST` to `{SUBJECT_ACCESS_REVIEWS}` (`kubernetes/can_i`)"),
        ),
    }
}

fn check_service(call: &Fields<'_>, path: &str, diags: &mut Diagnostics) {
    if call.get("service").is_some() {
        diags.push(
            &key_path(path, "service"),
            "calls to services are arbitrary HTTP requests, which Kubewarden's host capabilities cannot make; read Kubernetes resources with `urlPath`",
        );
    }
}

/// A SubjectAccessReview `POST`'s `data` as the request body: each entry's
/// `key` set to its `value`, as Kyverno builds it. The fields `can_i`
/// cannot send (`nonResourceAttributes`, `extra`, `uid`, selectors) are
/// refused here when the `spec` is written out, and when it is built at
/// run time.
fn parse_access_review(call: &Fields<'_>, path: &str, diags: &mut Diagnostics) -> Value {
    let mut body = serde_json::Map::new();
    if call.get("data").is_none() {
        diags.push(
            &key_path(path, "data"),
            "a SubjectAccessReview needs its `spec` in `data`",
        );
    }
    for (item_path, item) in call.list("data", diags) {
        let Some(entry) = Fields::open(item, &item_path, &[&["key", "value"]], diags) else {
            continue;
        };
        let key = entry.string("key", diags).unwrap_or_default();
        if key.is_empty() {
            diags.push(&item_path, "needs `key`");
            continue;
        }
        let value = entry
            .get("value")
            .map(Json::to_value)
            .unwrap_or(Value::Null);
        if key == "spec" {
            check_access_review_spec(&value, &entry.path("value"), diags);
        }
        body.insert(key, value);
    }
    Value::Object(body)
}

/// Refuses what `can_i` cannot send, in a `spec` written as an object
/// (one written as a variable is checked when it is built).
fn check_access_review_spec(spec: &Value, path: &str, diags: &mut Diagnostics) {
    let Some(spec) = spec.as_object() else {
        return;
    };
    let unsupported = |key: &str, known: &[&str]| {
        format!(
            "Kubewarden's `kubernetes/can_i` sends a SubjectAccessReview's {} only; `{key}` cannot be sent",
            known
                .iter()
                .map(|k| format!("`{k}`"))
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    for problem in unsendable(spec, false) {
        match problem {
            Unsendable::Field(key) => {
                diags.push(&key_path(path, key), unsupported(key, ACCESS_REVIEW_FIELDS))
            }
            Unsendable::Attribute(key) => diags.push(
                &key_path(&key_path(path, "resourceAttributes"), key),
                unsupported(key, RESOURCE_ATTRIBUTE_FIELDS),
            ),
            Unsendable::NoResourceAttributes => diags.push(
                path,
                "needs `resourceAttributes`: Kubewarden's `kubernetes/can_i` reviews access to resources",
            ),
        }
    }
}

/// Opens a Kyverno resource manifest, checking its kind and version.
fn open_manifest<'a>(
    value: &'a Json<'a>,
    path: &str,
    want: &str,
    versions: &[&str],
    diags: &mut Diagnostics,
) -> Option<Fields<'a>> {
    let manifest = Fields::open(value, path, &[MANIFEST_FIELDS], diags)?;
    let kind = manifest.string("kind", diags).unwrap_or_default();
    let api_version = manifest.string("apiVersion", diags).unwrap_or_default();
    if kind != want || !versions.contains(&api_version.as_str()) {
        diags.push(
            path,
            format!(
                "must be a `{want}` ({}), not a `{api_version}` `{kind}`",
                versions.join(" or ")
            ),
        );
        return None;
    }
    Some(manifest)
}

const GLOBAL_CONTEXT_API_VERSIONS: &[&str] =
    &["kyverno.io/v2beta1", "kyverno.io/v2alpha1", "kyverno.io/v2"];

/// Parses one `GlobalContextEntry` manifest, from the settings or the
/// cluster, with the checks Kyverno's admission makes of it.
pub fn parse_global_context_entry(
    value: &Json<'_>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<GlobalContextEntry> {
    let manifest = open_manifest(
        value,
        path,
        "GlobalContextEntry",
        GLOBAL_CONTEXT_API_VERSIONS,
        diags,
    )?;
    let name = manifest
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    if name.is_empty() {
        diags.push(&manifest.path("metadata"), "`name` is required");
    }
    let Some(spec) = manifest.get("spec") else {
        diags.push(path, "`spec` is required");
        return None;
    };
    let spec = Fields::open(
        spec,
        &manifest.path("spec"),
        &[&["kubernetesResource", "apiCall", "projections"]],
        diags,
    )?;
    let source = match (spec.get("kubernetesResource"), spec.get("apiCall")) {
        (Some(resource), None) => {
            let rp = spec.path("kubernetesResource");
            let r = Fields::open(
                resource,
                &rp,
                &[&["group", "version", "resource", "namespace"]],
                diags,
            )?;
            let group = r.string("group", diags).unwrap_or_default();
            let version = r.string("version", diags).unwrap_or_default();
            let resource = r.string("resource", diags).unwrap_or_default();
            if group.is_empty() && version != "v1" {
                diags.push(&rp, "needs `group` (only the core group's `v1` has none)");
            }
            if version.is_empty() {
                diags.push(&rp, "needs `version`");
            }
            if resource.is_empty() {
                diags.push(&rp, "needs `resource`");
            }
            GlobalSource::KubernetesResource {
                group,
                version,
                resource,
                namespace: r.string("namespace", diags).filter(|n| !n.is_empty()),
            }
        }
        (None, Some(call)) => {
            let ap = spec.path("apiCall");
            let call = Fields::open(
                call,
                &ap,
                &[&[
                    "urlPath",
                    "method",
                    "data",
                    "service",
                    "jmesPath",
                    "default",
                    "refreshInterval",
                    "retryLimit",
                ]],
                diags,
            )?;
            check_host_call(&call, &ap, diags);
            if call.get("data").is_some() {
                diags.push(
                    &key_path(&ap, "data"),
                    "is sent only with `POST`, which Kubewarden's host capabilities cannot make",
                );
            }
            // Kyverno ignores these for a global entry: it stores the raw answer.
            for ignored in ["jmesPath", "default"] {
                if call.get(ignored).is_some() {
                    diags.push(
                        &key_path(&ap, ignored),
                        "is not applied to a GlobalContextEntry's data (Kyverno ignores it there); use `projections` or the reference's `jmesPath`",
                    );
                }
            }
            let url_path = call.string("urlPath", diags).unwrap_or_default();
            if url_path.is_empty() {
                if call.get("service").is_none() {
                    diags.push(&ap, "needs `urlPath`");
                }
            } else if let Err(e) = crate::api_call::ApiPath::parse(&url_path) {
                diags.push(&key_path(&ap, "urlPath"), format!("`{url_path}`: {e}"));
            }
            GlobalSource::ApiCall { url_path }
        }
        _ => {
            diags.push(
                &spec.path("kubernetesResource"),
                "a global context entry needs exactly one of `kubernetesResource` and `apiCall`",
            );
            return None;
        }
    };
    let projections = spec
        .list("projections", diags)
        .filter_map(|(p, v)| {
            let f = Fields::open(v, &p, &[&["name", "jmesPath"]], diags)?;
            let projection = f.string("name", diags).unwrap_or_default();
            if projection.is_empty() {
                diags.push(&p, "`name` is required");
            } else if projection == name {
                diags.push(
                    &f.path("name"),
                    "must differ from the global context entry's name",
                );
            }
            let jmes_path = f.string("jmesPath", diags).unwrap_or_default();
            if let Err(e) = crate::jmespath::Query::compile(&jmes_path) {
                diags.push(&f.path("jmesPath"), format!("`{jmes_path}`: {e}"));
            }
            Some((projection, jmes_path))
        })
        .collect();
    Some(GlobalContextEntry {
        name,
        source,
        projections,
    })
}

/// Parses one `PolicyException` manifest, from the settings or the cluster.
pub fn parse_exception(
    value: &Json<'_>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<PolicyException> {
    let manifest = open_manifest(
        value,
        path,
        "PolicyException",
        EXCEPTION_API_VERSIONS,
        diags,
    )?;
    let metadata = manifest.get("metadata");
    let meta = |key: &str| {
        metadata
            .and_then(|m| m.get(key))
            .and_then(Json::as_str)
            .filter(|s| !s.is_empty())
    };
    let key = match (meta("namespace"), meta("name")) {
        (Some(namespace), Some(name)) => format!("{namespace}/{name}"),
        (None, Some(name)) => name.to_string(),
        (_, None) => {
            diags.push(&manifest.path("metadata"), "`name` is required");
            String::new()
        }
    };
    let Some(spec) = manifest.get("spec") else {
        diags.push(path, "`spec` is required");
        return None;
    };
    let spec = Fields::open(
        spec,
        &manifest.path("spec"),
        &[&[
            "exceptions",
            "match",
            "conditions",
            "podSecurity",
            "background",
        ]],
        diags,
    )?;
    let targets: Vec<ExceptionTarget> = spec
        .list("exceptions", diags)
        .filter_map(|(p, v)| {
            let f = Fields::open(v, &p, &[&["policyName", "ruleNames"]], diags)?;
            let policy_name = f.string("policyName", diags).unwrap_or_default();
            if policy_name.is_empty() {
                diags.push(&p, "`policyName` is required");
            }
            let rule_names = f.strings("ruleNames", diags);
            if rule_names.is_empty() {
                diags.push(&p, "`ruleNames` must name at least one rule");
            }
            Some(ExceptionTarget {
                policy_name,
                rule_names,
            })
        })
        .collect();
    if targets.is_empty() {
        diags.push(
            &spec.path("exceptions"),
            "must name at least one policy and its rules",
        );
    }
    let match_resources = match spec.get("match") {
        // Kyverno's exception `match` has only `any` and `all`, and one with
        // neither (`match: {}`) selects nothing.
        Some(v) => {
            let path = spec.path("match");
            for key in LEGACY_MATCH {
                if v.get(key).is_some() {
                    diags.push(
                        &key_path(&path, key),
                        "a PolicyException's `match` takes only `any` and `all`",
                    );
                }
            }
            parse_match(v, &path, true, diags)
        }
        None => {
            diags.push(
                &spec.path("match"),
                "is required: say which resources the exception applies to",
            );
            MatchResources::default()
        }
    };
    let conditions = spec
        .get("conditions")
        .and_then(|v| parse_conditions(v, &spec.path("conditions"), diags))
        .map(Conditions::into_owned);
    let pod_security = spec
        .list("podSecurity", diags)
        .filter_map(|(p, v)| parse_pod_security_exclude(v, &p, diags))
        .collect();
    Some(PolicyException {
        key,
        targets,
        match_resources,
        conditions,
        pod_security,
        path: path.to_string(),
    })
}

fn parse_failure_action(text: &str, path: &str, diags: &mut Diagnostics) -> FailureAction {
    FailureAction::parse(text).unwrap_or_else(|| {
        diags.push(path, format!("must be `Enforce` or `Audit`, not `{text}`"));
        FailureAction::Enforce
    })
}

fn parse_overrides(
    fields: &Fields<'_>,
    key: &str,
    diags: &mut Diagnostics,
) -> Vec<FailureActionOverride> {
    fields
        .list(key, diags)
        .filter_map(|(path, item)| {
            let f = Fields::open(
                item,
                &path,
                &[&["action", "namespaces", "namespaceSelector"]],
                diags,
            )?;
            let action = match f.string("action", diags) {
                Some(text) => parse_failure_action(&text, &f.path("action"), diags),
                None => {
                    diags.push(&path, "`action` is required");
                    FailureAction::Enforce
                }
            };
            Some(FailureActionOverride {
                action,
                namespaces: f.strings("namespaces", diags),
                namespace_selector: f
                    .get("namespaceSelector")
                    .and_then(|v| parse_selector(v, &f.path("namespaceSelector"), diags)),
            })
        })
        .collect()
}

fn parse_rules<'a>(value: &'a Json<'a>, diags: &mut Diagnostics) -> Vec<Rule<'a>> {
    let Some(items) = value.as_array() else {
        diags.push("rules", "must be a list of rules");
        return Vec::new();
    };
    if items.is_empty() {
        diags.push(
            "rules",
            "must not be empty: list at least one validate rule",
        );
    }
    let mut rules: Vec<Rule> = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let path = diags.index_path("rules", i);
        if let Some(rule) = parse_rule(item, &path, diags) {
            if let Some(first) = rules.iter().find(|r| r.name == rule.name) {
                diags.push(
                    &key_path(&path, "name"),
                    format!(
                        "duplicate rule name `{}` (also used by {})",
                        rule.name, first.path
                    ),
                );
            }
            rules.push(rule);
        }
    }
    rules
}

const RULE_FIELDS: &[&str] = &[
    "name",
    "match",
    "exclude",
    "context",
    "preconditions",
    "celPreconditions",
    "validate",
];
/// Rule fields that only matter to other rule types or to background reports.
const RULE_NEUTRAL_FIELDS: &[&str] = &["skipBackgroundRequests", "reportProperties"];
const OTHER_RULE_TYPES: &[&str] = &["mutate", "generate", "verifyImages", "imageExtractors"];

/// Parses one rule (also used for rules autogen derives from the settings).
pub fn parse_rule<'a>(
    value: &'a Json<'a>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Rule<'a>> {
    let f = Fields::open(
        value,
        path,
        &[RULE_FIELDS, RULE_NEUTRAL_FIELDS, OTHER_RULE_TYPES],
        diags,
    )?;
    for other in OTHER_RULE_TYPES {
        if f.get(other).is_some() {
            diags.push(
                &f.path(other),
                format!(
                    "`{other}` rules are not supported: this policy enforces only validate rules"
                ),
            );
        }
    }
    let name = f.text("name", diags).unwrap_or_else(|| {
        diags.push(path, "`name` is required");
        Cow::Borrowed("")
    });
    let match_resources = match f.get("match") {
        Some(v) => parse_match(v, &f.path("match"), false, diags),
        None => {
            diags.push(
                path,
                "`match` is required: say which resources the rule applies to",
            );
            MatchResources::default()
        }
    };
    let exclude = f
        .get("exclude")
        .map(|v| parse_match(v, &f.path("exclude"), true, diags));
    let context = parse_context(&f, diags);
    let preconditions = f
        .get("preconditions")
        .and_then(|v| parse_conditions(v, &f.path("preconditions"), diags));
    let cel_preconditions = f
        .list("celPreconditions", diags)
        .filter_map(|(p, v)| parse_named_expression(v, &p, diags))
        .collect();
    let validate = match f.get("validate") {
        Some(v) => parse_validation(v, &f.path("validate"), diags)?,
        None => {
            if OTHER_RULE_TYPES.iter().all(|k| f.get(k).is_none()) {
                diags.push(
                    path,
                    "`validate` is required: this policy enforces validate rules",
                );
            }
            return None;
        }
    };
    Some(Rule {
        name,
        path: path.to_string(),
        match_resources,
        exclude,
        context,
        preconditions,
        cel_preconditions,
        validate,
    })
}

/// `match` (or, with `empty_is_none`, `exclude`: Kyverno treats an empty
/// exclude block, `{}` or `{any: []}`, as no exclusion).
/// The keys of a `match` or `exclude` block's legacy form (without
/// `any`/`all`), which a PolicyException's `match` does not have.
const LEGACY_MATCH: &[&str] = &["resources", "subjects", "roles", "clusterRoles"];

fn parse_match(
    value: &Json<'_>,
    path: &str,
    empty_is_none: bool,
    diags: &mut Diagnostics,
) -> MatchResources {
    let Some(f) = Fields::open(value, path, &[&["any", "all"], LEGACY_MATCH], diags) else {
        return MatchResources::default();
    };
    let filters = |key: &str, diags: &mut Diagnostics| -> Vec<ResourceFilter> {
        let list = f.list(key, diags);
        // Exactly the list's size: a filter is large.
        let mut filters = Vec::with_capacity(list.len());
        for (p, v) in list {
            if let Some(inner) = Fields::open(v, &p, &[LEGACY_MATCH], diags) {
                filters.push(parse_filter(&inner, diags));
            }
        }
        filters
    };
    let any = filters("any", diags);
    let all = filters("all", diags);
    let has_legacy = LEGACY_MATCH.iter().any(|k| f.get(k).is_some());
    if has_legacy && (f.get("any").is_some() || f.get("all").is_some()) {
        diags.push(
            path,
            "use either `any`/`all` or the legacy `resources`/`subjects` form, not both",
        );
    }
    let legacy = has_legacy.then(|| Box::new(parse_filter(&f, diags)));
    if any.is_empty() && all.is_empty() && legacy.is_none() && !empty_is_none {
        diags.push(
            path,
            "must select resources with `any`, `all` or `resources`",
        );
    }
    MatchResources { any, all, legacy }
}

fn parse_filter(f: &Fields<'_>, diags: &mut Diagnostics) -> ResourceFilter {
    let resources = f.get("resources").and_then(|v| {
        let p = f.path("resources");
        let r = Fields::open(
            v,
            &p,
            &[&[
                "kinds",
                "name",
                "names",
                "namespaces",
                "operations",
                "annotations",
                "selector",
                "namespaceSelector",
            ]],
            diags,
        )?;
        let operations = r.strings("operations", diags);
        for (i, op) in operations.iter().enumerate() {
            if !matches!(op.as_str(), "CREATE" | "UPDATE" | "DELETE" | "CONNECT") {
                diags.push(
                    &index_path(&r.path("operations"), i),
                    format!("`{op}` is not an operation: use CREATE, UPDATE, DELETE or CONNECT"),
                );
            }
        }
        Some(ResourceDescription {
            kinds: r.strings("kinds", diags),
            name: r.string("name", diags).filter(|n| !n.is_empty()),
            names: r.strings("names", diags),
            namespaces: r.strings("namespaces", diags),
            operations,
            annotations: r.string_map("annotations", diags),
            selector: r
                .get("selector")
                .and_then(|v| parse_selector(v, &r.path("selector"), diags)),
            namespace_selector: r
                .get("namespaceSelector")
                .and_then(|v| parse_selector(v, &r.path("namespaceSelector"), diags)),
        })
    });
    let subjects = f
        .list("subjects", diags)
        .filter_map(|(p, v)| {
            let s = Fields::open(v, &p, &[&["kind", "name", "namespace", "apiGroup"]], diags)?;
            let kind = s.string("kind", diags).unwrap_or_default();
            if !matches!(kind.as_str(), "User" | "Group" | "ServiceAccount") {
                diags.push(
                    &s.path("kind"),
                    format!("must be `User`, `Group` or `ServiceAccount`, not `{kind}`"),
                );
            }
            Some(Subject {
                kind,
                name: s.string("name", diags).unwrap_or_default(),
                namespace: s.string("namespace", diags),
            })
        })
        .collect();
    ResourceFilter {
        resources,
        subjects,
        roles: f.strings("roles", diags),
        cluster_roles: f.strings("clusterRoles", diags),
    }
}

fn parse_selector(value: &Json<'_>, path: &str, diags: &mut Diagnostics) -> Option<LabelSelector> {
    let f = Fields::open(value, path, &[&["matchLabels", "matchExpressions"]], diags)?;
    let match_expressions = f
        .list("matchExpressions", diags)
        .filter_map(|(p, v)| {
            let e = Fields::open(v, &p, &[&["key", "operator", "values"]], diags)?;
            let operator = e.string("operator", diags).unwrap_or_default();
            if !matches!(
                operator.as_str(),
                "In" | "NotIn" | "Exists" | "DoesNotExist"
            ) {
                diags.push(
                    &e.path("operator"),
                    format!("must be In, NotIn, Exists or DoesNotExist, not `{operator}`"),
                );
            }
            Some(LabelSelectorRequirement {
                key: e.string("key", diags).unwrap_or_default(),
                operator,
                values: e.strings("values", diags),
            })
        })
        .collect();
    Some(LabelSelector {
        match_labels: f.string_map("matchLabels", diags),
        match_expressions,
    })
}

const BODY_KEYS: &[&str] = &[
    "pattern",
    "anyPattern",
    "deny",
    "foreach",
    "cel",
    "podSecurity",
    "manifests",
];

fn parse_validation<'a>(
    value: &'a Json<'a>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Validation<'a>> {
    let f = Fields::open(
        value,
        path,
        &[
            &["message", "failureAction", "failureActionOverrides"],
            BODY_KEYS,
            &["allowExistingViolations"],
        ],
        diags,
    )?;
    let present: Vec<&str> = BODY_KEYS
        .iter()
        .copied()
        .filter(|k| f.get(k).is_some())
        .collect();
    let body = match present.as_slice() {
        [] => {
            diags.push(
                path,
                "needs one of `pattern`, `anyPattern`, `deny`, `foreach`, `cel`, `podSecurity` or `manifests`",
            );
            return None;
        }
        [one] => parse_body(one, &f, diags)?,
        several => {
            diags.push(
                path,
                format!(
                    "has {}: a validate rule takes exactly one of them",
                    several
                        .iter()
                        .map(|k| format!("`{k}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            return None;
        }
    };
    let failure_action = f
        .string("failureAction", diags)
        .map(|text| parse_failure_action(&text, &f.path("failureAction"), diags));
    Some(Validation {
        message: f.text("message", diags),
        failure_action,
        failure_action_overrides: parse_overrides(&f, "failureActionOverrides", diags),
        body,
        template: &[],
        allow_existing_violations: f.bool("allowExistingViolations", diags).unwrap_or(true),
    })
}

fn parse_body<'a>(
    key: &str,
    f: &Fields<'a>,
    diags: &mut Diagnostics,
) -> Option<ValidationBody<'a>> {
    let value = f.get(key)?;
    let path = f.path(key);
    Some(match key {
        "pattern" => ValidationBody::Pattern(JsonCow::Borrowed(value)),
        "anyPattern" => ValidationBody::AnyPattern(parse_any_pattern(value, &path, diags)?),
        "deny" => ValidationBody::Deny(parse_deny(value, &path, diags)?),
        "foreach" => ValidationBody::Foreach(parse_foreach_list(value, &path, diags)),
        "cel" => ValidationBody::Cel(Box::new(parse_cel(value, &path, diags)?)),
        "podSecurity" => ValidationBody::PodSecurity(parse_pod_security(value, &path, diags)?),
        _ => ValidationBody::Manifests(value),
    })
}

fn parse_any_pattern<'a>(
    value: &'a Json<'a>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Vec<JsonCow<'a>>> {
    match value.as_array() {
        Some(items) if !items.is_empty() => Some(items.iter().map(JsonCow::Borrowed).collect()),
        Some(_) => {
            diags.push(path, "must list at least one pattern");
            None
        }
        None => {
            diags.push(path, "must be a list of patterns");
            None
        }
    }
}

fn parse_deny<'a>(value: &'a Json<'a>, path: &str, diags: &mut Diagnostics) -> Option<Deny<'a>> {
    let f = Fields::open(value, path, &[&["conditions"]], diags)?;
    Some(Deny {
        conditions: f
            .get("conditions")
            .and_then(|v| parse_conditions(v, &f.path("conditions"), diags)),
    })
}

pub fn parse_conditions<'a>(
    value: &'a Json<'a>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Conditions<'a>> {
    if let Some(items) = value.as_array() {
        let list = items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| parse_condition(v, &diags.index_path(path, i), diags))
            .collect();
        return Some(Conditions::Legacy(list));
    }
    let f = Fields::open(value, path, &[&["any", "all"]], diags)?;
    let block = |key: &str, diags: &mut Diagnostics| {
        f.get(key).map(|_| {
            f.list(key, diags)
                .filter_map(|(p, v)| parse_condition(v, &p, diags))
                .collect::<Vec<_>>()
        })
    };
    Some(Conditions::Blocks {
        any: block("any", diags),
        all: block("all", diags),
    })
}

fn parse_condition<'a>(
    value: &'a Json<'a>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Condition<'a>> {
    let f = Fields::open(
        value,
        path,
        &[&["key", "operator", "value", "message"]],
        diags,
    )?;
    let operator = f.text("operator", diags).unwrap_or_else(|| {
        diags.push(path, "`operator` is required");
        Cow::Borrowed("")
    });
    let field = |key: &str| {
        f.get(key)
            .map_or(JsonCow::Owned(Json::Null), JsonCow::Borrowed)
    };
    Some(Condition {
        key: field("key"),
        operator,
        value: field("value"),
        message: f.string("message", diags),
    })
}

fn parse_foreach_list<'a>(
    value: &'a Json<'a>,
    path: &str,
    diags: &mut Diagnostics,
) -> Vec<Foreach<'a>> {
    let Some(items) = value.as_array() else {
        diags.push(path, "must be a list");
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, v)| parse_foreach(v, &diags.index_path(path, i), diags))
        .collect()
}

fn parse_foreach<'a>(
    value: &'a Json<'a>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Foreach<'a>> {
    const KEYS: &[&str] = &["pattern", "anyPattern", "deny", "foreach"];
    let f = Fields::open(
        value,
        path,
        &[&["list", "context", "preconditions", "elementScope"], KEYS],
        diags,
    )?;
    let list = f.string("list", diags).unwrap_or_else(|| {
        diags.push(path, "`list` is required");
        String::new()
    });
    let present: Vec<&str> = KEYS
        .iter()
        .copied()
        .filter(|k| f.get(k).is_some())
        .collect();
    let body = match present.as_slice() {
        [one] => {
            let v = f.get(one)?;
            let p = f.path(one);
            match *one {
                "pattern" => ForeachBody::Pattern(JsonCow::Borrowed(v)),
                "anyPattern" => ForeachBody::AnyPattern(parse_any_pattern(v, &p, diags)?),
                "deny" => ForeachBody::Deny(parse_deny(v, &p, diags)?),
                _ => ForeachBody::Foreach(parse_foreach_list(v, &p, diags)),
            }
        }
        _ => {
            diags.push(
                path,
                "needs exactly one of `pattern`, `anyPattern`, `deny` or `foreach`",
            );
            return None;
        }
    };
    Some(Foreach {
        numbered: NumberedNames::of(value),
        list,
        context: parse_context(&f, diags),
        preconditions: f
            .get("preconditions")
            .and_then(|v| parse_conditions(v, &f.path("preconditions"), diags)),
        element_scope: f.bool("elementScope", diags),
        body,
    })
}

fn parse_context(f: &Fields<'_>, diags: &mut Diagnostics) -> Vec<ContextEntry> {
    const SOURCES: &[&str] = &[
        "variable",
        "configMap",
        "apiCall",
        "imageRegistry",
        "globalReference",
    ];
    f.list("context", diags)
        .filter_map(|(p, v)| {
            let e = Fields::open(v, &p, &[&["name"], SOURCES], diags)?;
            let name = e.string("name", diags).unwrap_or_else(|| {
                diags.push(&p, "`name` is required");
                String::new()
            });
            let present: Vec<&'static str> =
                SOURCES.iter().copied().filter(|k| e.get(k).is_some()).collect();
            let source = match present.as_slice() {
                ["variable"] => {
                    let vp = e.path("variable");
                    let var = Fields::open(
                        e.get("variable")?,
                        &vp,
                        &[&["value", "jmesPath", "default"]],
                        diags,
                    )?;
                    ContextSource::Variable {
                        value: var.get("value").map(Json::to_value),
                        jmes_path: var.string("jmesPath", diags),
                        default: var.get("default").map(Json::to_value),
                    }
                }
                ["configMap"] => {
                    let cp = e.path("configMap");
                    let cm = Fields::open(e.get("configMap")?, &cp, &[&["name", "namespace"]], diags)?;
                    let name = cm.string("name", diags).unwrap_or_else(|| {
                        diags.push(&cp, "`name` is required");
                        String::new()
                    });
                    ContextSource::ConfigMap {
                        name,
                        namespace: cm.string("namespace", diags).unwrap_or_default(),
                    }
                }
                ["apiCall"] => {
                    let ap = e.path("apiCall");
                    let call = Fields::open(
                        e.get("apiCall")?,
                        &ap,
                        &[&["urlPath", "method", "data", "service", "jmesPath", "default"]],
                        diags,
                    )?;
                    let url_path = call.string("urlPath", diags).unwrap_or_default();
                    let post = if call.get("method").and_then(Json::as_str) == Some("POST")
                        && url_path.trim() == SUBJECT_ACCESS_REVIEWS
                    {
                        check_service(&call, &ap, diags);
                        Some(parse_access_review(&call, &ap, diags))
                    } else {
                        check_host_call(&call, &ap, diags);
                        None
                    };
                    if url_path.is_empty() && call.get("service").is_none() {
                        diags.push(&ap, "needs `urlPath`");
                    }
                    ContextSource::ApiCall {
                        url_path,
                        jmes_path: call.string("jmesPath", diags),
                        default: call.get("default").map(Json::to_value),
                        post,
                    }
                }
                ["imageRegistry"] => {
                    let ip = e.path("imageRegistry");
                    let registry = Fields::open(
                        e.get("imageRegistry")?,
                        &ip,
                        &[&["reference", "jmesPath", "imageRegistryCredentials"]],
                        diags,
                    )?;
                    if registry.get("imageRegistryCredentials").is_some() {
                        diags.push(
                            &key_path(&ip, "imageRegistryCredentials"),
                            "a Kubewarden host reads registries with the policy server's own credentials and insecure-registry settings (its `imagePullSecret` and `sourceAuthorities`); remove this field and configure those instead",
                        );
                    }
                    let reference = registry.string("reference", diags).unwrap_or_default();
                    if reference.is_empty() {
                        diags.push(&ip, "needs `reference`");
                    }
                    ContextSource::ImageRegistry {
                        reference,
                        jmes_path: registry.string("jmesPath", diags),
                    }
                }
                ["globalReference"] => {
                    let gp = e.path("globalReference");
                    let reference =
                        Fields::open(e.get("globalReference")?, &gp, &[&["name", "jmesPath"]], diags)?;
                    let name = reference.string("name", diags).unwrap_or_default();
                    if name.is_empty() {
                        diags.push(&gp, "needs `name`: the GlobalContextEntry (`entry` or `entry.projection`)");
                    }
                    ContextSource::GlobalReference {
                        name,
                        jmes_path: reference.string("jmesPath", diags),
                    }
                }
                _ => {
                    diags.push(
                        &p,
                        "needs exactly one of `variable`, `configMap`, `apiCall`, `imageRegistry` or `globalReference`",
                    );
                    return None;
                }
            };
            Some(ContextEntry { name, source })
        })
        .collect()
}

fn parse_named_expression(
    value: &Json<'_>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<NamedExpression> {
    let f = Fields::open(value, path, &[&["name", "expression"]], diags)?;
    Some(NamedExpression {
        name: f.string("name", diags).unwrap_or_default(),
        expression: f.string("expression", diags).unwrap_or_else(|| {
            diags.push(path, "`expression` is required");
            String::new()
        }),
    })
}

fn parse_cel(value: &Json<'_>, path: &str, diags: &mut Diagnostics) -> Option<Cel> {
    let f = Fields::open(
        value,
        path,
        &[&[
            "expressions",
            "variables",
            "paramKind",
            "paramRef",
            "auditAnnotations",
            "generate",
        ]],
        diags,
    )?;
    let expressions = f
        .list("expressions", diags)
        .filter_map(|(p, v)| {
            let e = Fields::open(
                v,
                &p,
                &[&[
                    "expression",
                    "message",
                    "messageExpression",
                    "reason",
                    "fieldPath",
                ]],
                diags,
            )?;
            Some(CelExpression {
                expression: e.string("expression", diags).unwrap_or_else(|| {
                    diags.push(&p, "`expression` is required");
                    String::new()
                }),
                message: e.string("message", diags),
                message_expression: e.string("messageExpression", diags),
                reason: e.string("reason", diags),
            })
        })
        .collect();
    Some(Cel {
        expressions,
        variables: f
            .list("variables", diags)
            .filter_map(|(p, v)| parse_named_expression(v, &p, diags))
            .collect(),
        params: parse_params(&f, diags),
        audit_annotations: f
            .list("auditAnnotations", diags)
            .filter_map(|(p, v)| {
                let a = Fields::open(v, &p, &[&["key", "valueExpression"]], diags)?;
                let key = a.string("key", diags).unwrap_or_default();
                if key.is_empty() {
                    diags.push(&p, "`key` is required");
                }
                let value_expression = a.string("valueExpression", diags).unwrap_or_else(|| {
                    diags.push(&p, "`valueExpression` is required");
                    String::new()
                });
                Some(AuditAnnotation {
                    key,
                    value_expression,
                })
            })
            .collect(),
    })
}

fn parse_params(cel: &Fields<'_>, diags: &mut Diagnostics) -> Option<Params> {
    let kind_path = cel.path("paramKind");
    let ref_path = cel.path("paramRef");
    match (cel.get("paramKind"), cel.get("paramRef")) {
        (None, None) => return None,
        (Some(_), None) => {
            diags.push(
                &ref_path,
                "is required with `paramKind`: it says which parameter resources to read",
            );
            return None;
        }
        (None, Some(_)) => {
            diags.push(
                &kind_path,
                "is required with `paramRef`: it says what kind the parameters are",
            );
            return None;
        }
        (Some(_), Some(_)) => {}
    }
    let kind = Fields::open(
        cel.get("paramKind")?,
        &kind_path,
        &[&["apiVersion", "kind"]],
        diags,
    )?;
    let reference = Fields::open(
        cel.get("paramRef")?,
        &ref_path,
        &[&["name", "namespace", "selector", "parameterNotFoundAction"]],
        diags,
    )?;
    let required = |f: &Fields<'_>, key: &str, diags: &mut Diagnostics| {
        f.string(key, diags)
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| {
                diags.push(&f.path(key), "is required");
                String::new()
            })
    };
    let api_version = required(&kind, "apiVersion", diags);
    let kind_name = required(&kind, "kind", diags);
    let name = reference.string("name", diags).filter(|s| !s.is_empty());
    let selector = reference
        .get("selector")
        .and_then(|v| parse_selector(v, &reference.path("selector"), diags));
    if name.is_some() == selector.is_some() {
        diags.push(&ref_path, "needs exactly one of `name` and `selector`");
    }
    let deny_when_missing = match reference
        .string("parameterNotFoundAction", diags)
        .as_deref()
    {
        None | Some("Allow") => false,
        Some("Deny") => true,
        Some(other) => {
            diags.push(
                &reference.path("parameterNotFoundAction"),
                format!("must be Allow or Deny, not `{other}`"),
            );
            false
        }
    };
    Some(Params {
        api_version,
        kind: kind_name,
        name,
        namespace: reference
            .string("namespace", diags)
            .filter(|s| !s.is_empty()),
        selector,
        deny_when_missing,
    })
}

fn parse_pod_security(
    value: &Json<'_>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<PodSecurity> {
    let f = Fields::open(value, path, &[&["level", "version", "exclude"]], diags)?;
    let exclude = f
        .list("exclude", diags)
        .filter_map(|(p, v)| parse_pod_security_exclude(v, &p, diags))
        .collect();
    Some(PodSecurity {
        level: f.string("level", diags).unwrap_or_default(),
        version: f.string("version", diags),
        exclude,
    })
}

fn parse_pod_security_exclude(
    value: &Json<'_>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<PodSecurityExclude> {
    let e = Fields::open(
        value,
        path,
        &[&["controlName", "images", "restrictedField", "values"]],
        diags,
    )?;
    Some(PodSecurityExclude {
        control_name: e.string("controlName", diags).unwrap_or_default(),
        images: e.strings("images", diags),
        restricted_field: e.string("restrictedField", diags),
        values: e.strings("values", diags),
    })
}

/// Whether `key` is one of `known`. Run for every key of every object on
/// every request, so it compares with [`same_key`].
fn is_known(key: &str, known: &[&[&str]]) -> bool {
    known
        .iter()
        .flat_map(|group| group.iter())
        .any(|name| same_key(name, key))
}

/// A list field's items, each with its path (empty when paths are not
/// built): read as they are asked for, so no list of them is allocated.
#[derive(Default)]
struct Items<'a> {
    items: std::iter::Enumerate<std::slice::Iter<'a, Json<'a>>>,
    base: String,
    quiet: bool,
}

impl<'a> Iterator for Items<'a> {
    type Item = (String, &'a Json<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        let (i, item) = self.items.next()?;
        let path = if self.quiet {
            String::new()
        } else {
            index_path(&self.base, i)
        };
        Some((path, item))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        self.items.size_hint()
    }
}

impl ExactSizeIterator for Items<'_> {}

/// Reads the fields of one settings object, reporting unknown keys and
/// wrongly typed values with their paths.
struct Fields<'a> {
    map: &'a Map<'a>,
    path: String,
    /// No paths are built (see [`Diagnostics::quiet`]).
    quiet: bool,
}

impl<'a> Fields<'a> {
    fn open(
        value: &'a Json<'a>,
        path: &str,
        known: &[&[&str]],
        diags: &mut Diagnostics,
    ) -> Option<Self> {
        let Some(map) = value.as_object() else {
            diags.push(path, format!("must be an object, not {}", type_name(value)));
            return None;
        };
        let mut listed = false;
        for key in map.keys() {
            if is_known(key, known) {
                continue;
            }
            let candidates = known.iter().flat_map(|g| g.iter().copied());
            let message = match closest(key, candidates) {
                Some(near) => format!("unknown field `{key}`: did you mean `{near}`?"),
                // The allowed fields once per object, not once per field.
                None if !listed => {
                    listed = true;
                    let mut all: Vec<&str> = known.iter().flat_map(|g| g.iter().copied()).collect();
                    all.sort_unstable();
                    format!("unknown field `{key}`; expected one of {}", all.join(", "))
                }
                None => format!("unknown field `{key}`"),
            };
            diags.push(&key_path(path, key), message);
        }
        let quiet = diags.is_quiet();
        Some(Self {
            map,
            path: if quiet {
                String::new()
            } else {
                path.to_string()
            },
            quiet,
        })
    }

    fn get(&self, key: &str) -> Option<&'a Json<'a>> {
        self.map.get(key)
    }

    fn path(&self, key: &str) -> String {
        if self.quiet {
            return String::new();
        }
        key_path(&self.path, key)
    }

    /// [`Fields::string`] borrowed from the settings.
    fn text(&self, key: &str, diags: &mut Diagnostics) -> Option<Cow<'a, str>> {
        match self.get(key)? {
            Json::String(Cow::Borrowed(s)) => Some(Cow::Borrowed(s)),
            Json::String(Cow::Owned(s)) => Some(Cow::Owned(s.clone())),
            Json::Null => None,
            other => {
                diags.push(
                    &self.path(key),
                    format!("must be a string, not {}", type_name(other)),
                );
                None
            }
        }
    }

    fn string(&self, key: &str, diags: &mut Diagnostics) -> Option<String> {
        self.text(key, diags).map(Cow::into_owned)
    }

    fn bool(&self, key: &str, diags: &mut Diagnostics) -> Option<bool> {
        match self.get(key)? {
            Json::Bool(b) => Some(*b),
            Json::Null => None,
            other => {
                diags.push(
                    &self.path(key),
                    format!("must be true or false, not {}", type_name(other)),
                );
                None
            }
        }
    }

    /// The items of a list field, each with its path; reports a non-list.
    fn list(&self, key: &str, diags: &mut Diagnostics) -> Items<'a> {
        match self.get(key) {
            Some(Json::Array(items)) => Items {
                items: items.iter().enumerate(),
                base: self.path(key),
                quiet: self.quiet,
            },
            None | Some(Json::Null) => Items::default(),
            Some(other) => {
                diags.push(
                    &self.path(key),
                    format!("must be a list, not {}", type_name(other)),
                );
                Items::default()
            }
        }
    }

    fn strings(&self, key: &str, diags: &mut Diagnostics) -> Vec<String> {
        // Paths are built only for the elements that are not strings.
        let items = match self.get(key) {
            Some(Json::Array(items)) => items,
            None | Some(Json::Null) => return Vec::new(),
            Some(_) => {
                // Not a list, which `list` reports.
                self.list(key, diags);
                return Vec::new();
            }
        };
        items
            .iter()
            .enumerate()
            .filter_map(|(i, v)| match v {
                Json::String(s) => Some(s.to_string()),
                other => {
                    diags.push(
                        &index_path(&self.path(key), i),
                        format!("must be a string, not {}", type_name(other)),
                    );
                    None
                }
            })
            .collect()
    }

    fn string_map(&self, key: &str, diags: &mut Diagnostics) -> Vec<(String, String)> {
        match self.get(key) {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::Object(map)) => map
                .iter()
                .filter_map(|(k, v)| match v {
                    Json::String(s) => Some((k.to_string(), s.to_string())),
                    other => {
                        diags.push(
                            &key_path(&self.path(key), k),
                            format!("must be a string, not {}", type_name(other)),
                        );
                        None
                    }
                })
                .collect(),
            Some(other) => {
                diags.push(
                    &self.path(key),
                    format!("must be a map of strings, not {}", type_name(other)),
                );
                Vec::new()
            }
        }
    }
}

/// A JSON type in words, for messages.
/// The known field `key` was most likely meant to be: the nearest by edit
/// distance (ignoring case), when it is near enough to be a typo.
fn closest<'k>(key: &str, candidates: impl Iterator<Item = &'k str>) -> Option<&'k str> {
    let key_lower = key.to_ascii_lowercase();
    let limit = (key.chars().count() / 4).clamp(1, 3);
    candidates
        .map(|c| (edit_distance(&key_lower, &c.to_ascii_lowercase()), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = Vec::with_capacity(b.len() + 1);
        current.push(i + 1);
        for (j, cb) in b.iter().enumerate() {
            let substitute = previous
                .get(j)
                .copied()
                .unwrap_or(usize::MAX)
                .saturating_add(usize::from(ca != *cb));
            let delete = previous
                .get(j + 1)
                .copied()
                .unwrap_or(usize::MAX)
                .saturating_add(1);
            let insert = current
                .get(j)
                .copied()
                .unwrap_or(usize::MAX)
                .saturating_add(1);
            current.push(substitute.min(delete).min(insert));
        }
        previous = current;
    }
    previous.last().copied().unwrap_or(0)
}

pub fn type_name(value: &Json<'_>) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "a list",
        Json::Object(_) => "an object",
    }
}
