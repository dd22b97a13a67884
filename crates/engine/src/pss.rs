//! Kyverno's `validate.podSecurity`: the Kubernetes Pod Security Standards,
//! evaluated the way Kyverno evaluates them (its fork of
//! `k8s.io/pod-security-admission`, standards up to v1.34), with Kyverno's
//! exclusions and its failure message. Kyverno's quirks are kept on purpose:
//! only `baseline` skips the restricted checks, a pinned version older than
//! a check's first revision still runs that revision, and field paths are
//! moved under the controller's template only after exclusions were applied.

mod checks;
mod exclude;
#[cfg(test)]
mod tests;

use serde_json::Value;

use crate::diagnostics::{index_path, key_path, Diagnostics};
use crate::settings::{PodSecurity, PodSecurityExclude};
use checks::{Failure, Version};
use exclude::Exclude;

/// The pinned versions Kyverno's CRD accepts besides `latest`.
const MIN_PINNED: u32 = 19;
const MAX_PINNED: u32 = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PolicyLevel {
    Privileged,
    Baseline,
    Restricted,
}

/// Where a control's fields live, which decides whether Kyverno requires or
/// forbids `images` in its exclusions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Scope {
    Pod,
    Container,
    Both,
}

struct Control {
    name: &'static str,
    ids: &'static [&'static str],
    scope: Scope,
    /// Restricted-only, so a baseline rule may not exclude it. Seccomp and
    /// Capabilities have a baseline half and are allowed.
    restricted_only: bool,
}

/// Kyverno's control names (`controlName`) and the checks they cover.
const CONTROLS: &[Control] = &[
    control("HostProcess", &["windowsHostProcess"], Scope::Both, false),
    control("Host Namespaces", &["hostNamespaces"], Scope::Pod, false),
    control(
        "Privileged Containers",
        &["privileged"],
        Scope::Container,
        false,
    ),
    control(
        "Capabilities",
        &["capabilities_baseline", "capabilities_restricted"],
        Scope::Container,
        false,
    ),
    control("HostPath Volumes", &["hostPathVolumes"], Scope::Pod, false),
    control("Host Ports", &["hostPorts"], Scope::Container, false),
    control(
        "Host Probes / Lifecycle Hooks",
        &["hostProbesAndHostLifecycle"],
        Scope::Container,
        false,
    ),
    control("AppArmor", &["appArmorProfile"], Scope::Both, false),
    control("SELinux", &["seLinuxOptions"], Scope::Both, false),
    control("/proc Mount Type", &["procMount"], Scope::Container, false),
    control(
        "Seccomp",
        &["seccompProfile_baseline", "seccompProfile_restricted"],
        Scope::Both,
        false,
    ),
    control("Sysctls", &["sysctls"], Scope::Pod, false),
    control("Volume Types", &["restrictedVolumes"], Scope::Pod, true),
    control(
        "Privilege Escalation",
        &["allowPrivilegeEscalation"],
        Scope::Container,
        true,
    ),
    control("Running as Non-root", &["runAsNonRoot"], Scope::Both, true),
    control(
        "Running as Non-root user",
        &["runAsUser"],
        Scope::Both,
        true,
    ),
];

const fn control(
    name: &'static str,
    ids: &'static [&'static str],
    scope: Scope,
    restricted_only: bool,
) -> Control {
    Control {
        name,
        ids,
        scope,
        restricted_only,
    }
}

/// Compiled podSecurity settings.
#[derive(Debug, Clone, PartialEq)]
pub struct PodSecurityCheck {
    baseline_only: bool,
    version: Version,
    /// `level` and `version` as written: Kyverno prints them in its message.
    level_text: String,
    version_text: String,
    excludes: Vec<Exclude>,
}

impl PodSecurityCheck {
    /// Validates and compiles `validate.podSecurity` found at `path`,
    /// reporting every problem Kyverno's CRD or policy validation rejects.
    pub fn compile(ps: &PodSecurity, path: &str, diags: &mut Diagnostics) -> Option<Self> {
        let before = diags.errors().len();
        let level = match ps.level.as_str() {
            "privileged" => Some(PolicyLevel::Privileged),
            "baseline" => Some(PolicyLevel::Baseline),
            "restricted" => Some(PolicyLevel::Restricted),
            "" => {
                diags.push(
                    &key_path(path, "level"),
                    "is required: use \"privileged\", \"baseline\" or \"restricted\"",
                );
                None
            }
            other => {
                diags.push(
                    &key_path(path, "level"),
                    format!("unknown level {other:?}: use \"privileged\", \"baseline\" or \"restricted\""),
                );
                None
            }
        };
        let version_text = ps.version.clone().unwrap_or_default();
        let version = parse_version(&version_text);
        if version.is_none() {
            diags.push(
                &key_path(path, "version"),
                format!(
                    "unsupported version {version_text:?}: use \"latest\" or v1.{MIN_PINNED} to v1.{MAX_PINNED}"
                ),
            );
        }
        let exclude_path = key_path(path, "exclude");
        let excludes: Vec<Exclude> = ps
            .exclude
            .iter()
            .enumerate()
            .filter_map(|(i, e)| compile_exclude(e, level, &index_path(&exclude_path, i), diags))
            .collect();
        if diags.errors().len() > before {
            return None;
        }
        Some(Self {
            baseline_only: level == Some(PolicyLevel::Baseline),
            version: version?,
            level_text: ps.level.clone(),
            version_text,
            excludes,
        })
    }

    /// Evaluates a Pod or pod controller. `Ok(Some(violations))` on failure,
    /// with Kyverno's list of violated checks
    /// (`(Forbidden reason: ..., field error list: [...])...`); build the
    /// rule's message with [`Self::failure_message`].
    pub fn evaluate(&self, resource: &Value) -> Result<Option<String>, String> {
        let kind = resource.get("kind").and_then(Value::as_str).unwrap_or("");
        let Some((meta, spec)) = pod_parts(resource, kind) else {
            return Err(
                "Error while getting new resource: could not find correct resource type".into(),
            );
        };
        let mut failures = checks::evaluate(self.baseline_only, self.version, meta, spec);
        if !self.excludes.is_empty() {
            failures = exclude::apply(
                &self.excludes,
                self.baseline_only,
                self.version,
                failures,
                meta,
                spec,
            );
        }
        if failures.is_empty() {
            return Ok(None);
        }
        Ok(Some(format_failures(&failures, kind)))
    }

    /// Kyverno's failure message for rule `rule_name`, given what
    /// [`Self::evaluate`] returned.
    pub fn failure_message(&self, rule_name: &str, violations: &str) -> String {
        format!(
            "Validation rule '{rule_name}' failed. It violates PodSecurity \"{}:{}\": {violations}",
            self.level_text, self.version_text
        )
    }

    /// This check with the controls that policy exceptions exempt excluded
    /// too. They stay pod-relative, also on pod controllers: Kyverno applies
    /// them to the pod it extracted. Controls it does not know are left out
    /// ([`check_exemptions`] reports them in the settings).
    pub fn with_exemptions(&self, exempted: &[PodSecurityExclude]) -> Self {
        let mut out = self.clone();
        let mut ignored = Diagnostics::quiet();
        out.excludes.extend(
            exempted
                .iter()
                .filter_map(|e| compile_exclude(e, None, "", &mut ignored)),
        );
        out
    }

    /// The settings of the rule Kyverno's autogen derives for pod
    /// controllers (`cronjob`: for CronJobs). Kyverno's
    /// `updateRestrictedFields` moves `restrictedField` under the template
    /// and rewrites every `metadata`, while the field errors it compares them
    /// with stay pod-relative: such exclusions never match on controllers.
    pub fn for_autogen(&self, cronjob: bool) -> Self {
        let template = if cronjob {
            "spec.jobTemplate.spec.template.spec"
        } else {
            "spec.template.spec"
        };
        let rewrite = |s: &str| s.replace("metadata", "spec.template.metadata");
        let mut out = self.clone();
        for e in &mut out.excludes {
            if let Some(rest) = e.restricted_field.strip_prefix("spec") {
                e.restricted_field = format!("{template}{rest}");
            }
            e.restricted_field = rewrite(e.restricted_field.as_str());
            e.images = e.images.iter().map(|s| rewrite(s.as_str())).collect();
            e.values = e.values.iter().map(|s| rewrite(s.as_str())).collect();
        }
        out
    }
}

/// Reports what is wrong with a PolicyException's `podSecurity` controls,
/// found at `path`.
pub fn check_exemptions(exempted: &[PodSecurityExclude], path: &str, diags: &mut Diagnostics) {
    for (i, e) in exempted.iter().enumerate() {
        compile_exclude(e, None, &index_path(path, i), diags);
    }
}

/// `latest` (also when unset) or `v1.N` within the CRD's range.
fn parse_version(text: &str) -> Option<Version> {
    if text.is_empty() || text == "latest" {
        return Some(Version::Latest);
    }
    let digits = text.strip_prefix("v1.")?;
    // Go's `api.ParseVersion`: no sign, no leading zero.
    let canonical = !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit())
        && (digits == "0" || !digits.starts_with('0'));
    let minor: u32 = digits.parse().ok().filter(|_| canonical)?;
    (MIN_PINNED..=MAX_PINNED)
        .contains(&minor)
        .then_some(Version::Minor(minor))
}

fn compile_exclude(
    e: &PodSecurityExclude,
    level: Option<PolicyLevel>,
    path: &str,
    diags: &mut Diagnostics,
) -> Option<Exclude> {
    let name_path = key_path(path, "controlName");
    let control = CONTROLS.iter().find(|c| c.name == e.control_name);
    match control {
        None => {
            let names: Vec<String> = CONTROLS.iter().map(|c| format!("{:?}", c.name)).collect();
            diags.push(
                &name_path,
                format!(
                    "unknown control name {:?}: use one of {}",
                    e.control_name,
                    names.join(", ")
                ),
            );
        }
        Some(c) => {
            match c.scope {
                Scope::Container if e.images.is_empty() => diags.push(
                    &name_path,
                    format!(
                        "{:?} is a container level control: exclude.images must be specified",
                        c.name
                    ),
                ),
                Scope::Pod if !e.images.is_empty() => diags.push(
                    &name_path,
                    format!(
                        "{:?} is a pod level control: exclude.images must not be specified",
                        c.name
                    ),
                ),
                _ => {}
            }
            if level == Some(PolicyLevel::Baseline) && c.restricted_only {
                diags.push(
                    &name_path,
                    format!("{:?} is not a control of the baseline level", c.name),
                );
            }
        }
    }
    let restricted_field = e.restricted_field.clone().unwrap_or_default();
    if !restricted_field.is_empty() && e.values.is_empty() {
        diags.push(
            &key_path(path, "values"),
            "is required when restrictedField is set",
        );
    }
    if restricted_field.is_empty() && !e.values.is_empty() {
        diags.push(
            &key_path(path, "restrictedField"),
            "is required when values are set",
        );
    }
    let c = control?;
    Some(Exclude {
        ids: c.ids,
        images: e.images.clone(),
        restricted_field,
        values: e.values.clone(),
    })
}

static NULL: Value = Value::Null;

/// The pod metadata and spec: the resource's own for a Pod, its pod
/// template's for a pod controller.
fn pod_parts<'a>(resource: &'a Value, kind: &str) -> Option<(&'a Value, &'a Value)> {
    // For a CronJob too the pod template's metadata: Kyverno's CronJob
    // tests reject a forbidden AppArmor annotation found there.
    let template = crate::autogen::pod_template_path(kind)?;
    let walk = |last: &str| {
        template
            .iter()
            .chain([&last])
            .try_fold(resource, |v, key| v.get(*key))
            .unwrap_or(&NULL)
    };
    Some((walk("metadata"), walk("spec")))
}

/// Kyverno's `FormatChecksPrint`, after `convertChecks` moved the fields.
fn format_failures(failures: &[Failure], kind: &str) -> String {
    failures
        .iter()
        .map(|failure| {
            let errors: Vec<String> = if failure.violation.listed {
                failure
                    .violation
                    .errors
                    .iter()
                    .map(|error| {
                        let mut error = error.clone();
                        error.field = relocate(&error.field, kind);
                        error.to_string()
                    })
                    .collect()
            } else {
                Vec::new()
            };
            format!(
                "(Forbidden reason: {}, field error list: [{}])",
                failure.violation.reason,
                errors.join(", ")
            )
        })
        .collect()
}

/// Kyverno's `convertChecks`: plain substring replacements, so every `spec`
/// and `metadata` in the path moves, and metadata moves even for Pods.
fn relocate(field: &str, kind: &str) -> String {
    let field = match crate::autogen::pod_template_path(kind) {
        Some(template) if !template.is_empty() => {
            field.replace("spec", &format!("{}.spec", template.join(".")))
        }
        _ => field.to_string(),
    };
    field.replace("metadata", "spec.template.metadata")
}
