//! The Pod Security Standards checks as Kyverno runs them: its fork of
//! `k8s.io/pod-security-admission` (standards up to v1.34), which reports
//! every violation as a field error. Each check reads the pod's metadata and
//! spec as JSON and returns the field errors that make it fail, in the order
//! the fork emits them.

use std::collections::BTreeSet;
use std::fmt;

use serde_json::Value;

/// The level a check belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Level {
    Baseline,
    Restricted,
}

/// `latest`, or a pinned `v1.N` (only the minor number varies).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Latest,
    Minor(u32),
}

/// The offending value of a field error, typed as the fork reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadValue {
    Text(String),
    Bool(bool),
    Int(i64),
    List(Vec<String>),
}

impl fmt::Display for BadValue {
    /// Go's `%+v` of the value.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Text(text) => f.write_str(text),
            Self::Bool(b) => write!(f, "{b}"),
            Self::Int(n) => write!(f, "{n}"),
            Self::List(items) => write!(f, "[{}]", items.join(" ")),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorType {
    Forbidden,
    Required,
}

/// One `field.Error`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub kind: ErrorType,
    pub field: String,
    pub bad: BadValue,
}

impl FieldError {
    fn forbidden(field: String, bad: BadValue) -> Self {
        Self {
            kind: ErrorType::Forbidden,
            field,
            bad,
        }
    }

    /// `field.Forbidden` without a value: Go leaves the bad value `""`.
    fn forbidden_plain(field: String) -> Self {
        Self::forbidden(field, BadValue::Text(String::new()))
    }

    fn required(field: String) -> Self {
        Self {
            kind: ErrorType::Required,
            field,
            bad: BadValue::Text(String::new()),
        }
    }

    /// Kyverno's `extractBadValues`: what an exclusion's `values` must cover.
    pub fn bad_values(&self) -> Vec<String> {
        match &self.bad {
            BadValue::Text(text) if text.is_empty() => Vec::new(),
            BadValue::Text(text) => vec![text.clone()],
            BadValue::Bool(b) => vec![b.to_string()],
            BadValue::Int(n) => vec![n.to_string()],
            BadValue::List(items) => items.clone(),
        }
    }
}

impl fmt::Display for FieldError {
    /// One entry of Kyverno's `FormatChecksPrint`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.kind, &self.bad) {
            (ErrorType::Forbidden, BadValue::Text(text)) if text.is_empty() => {
                write!(f, "{}: Forbidden", self.field)
            }
            (ErrorType::Forbidden, bad) => {
                write!(
                    f,
                    "{} is forbidden, forbidden values found: {bad}",
                    self.field
                )
            }
            (ErrorType::Required, _) => write!(f, "{}: Required value", self.field),
        }
    }
}

/// A failed check: Kubernetes' forbidden reason and the field errors.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    pub reason: String,
    pub errors: Vec<FieldError>,
    /// False for checks whose errors the fork computes but does not return
    /// (AppArmor, host probes): Kyverno prints an empty list for them. The
    /// errors still drive exclusions here.
    pub listed: bool,
}

/// A violation with the ID of the check that found it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub id: &'static str,
    pub violation: Violation,
}

type CheckFn = fn(&Value, &Value) -> Option<Violation>;

/// One revision of a check, applying from `v1.{minor}`.
pub struct VersionedCheck {
    minor: u32,
    check: CheckFn,
}

const fn since(minor: u32, check: CheckFn) -> VersionedCheck {
    VersionedCheck { minor, check }
}

pub struct Check {
    pub id: &'static str,
    pub level: Level,
    /// Oldest first.
    versions: &'static [VersionedCheck],
}

/// Every check, in the order `policy.DefaultChecks()` registers them (Go
/// initialises the fork's `check_*.go` files in file-name order).
pub static CHECKS: &[Check] = &[
    Check {
        id: "allowPrivilegeEscalation",
        level: Level::Restricted,
        versions: &[
            since(8, allow_privilege_escalation_1_8),
            since(25, allow_privilege_escalation_1_25),
        ],
    },
    Check {
        id: "appArmorProfile",
        level: Level::Baseline,
        versions: &[since(0, app_armor_profile)],
    },
    Check {
        id: "capabilities_baseline",
        level: Level::Baseline,
        versions: &[since(0, capabilities_baseline)],
    },
    Check {
        id: "capabilities_restricted",
        level: Level::Restricted,
        versions: &[
            since(22, capabilities_restricted_1_22),
            since(25, capabilities_restricted_1_25),
        ],
    },
    Check {
        id: "hostNamespaces",
        level: Level::Baseline,
        versions: &[since(0, host_namespaces)],
    },
    Check {
        id: "hostPathVolumes",
        level: Level::Baseline,
        versions: &[since(0, host_path_volumes)],
    },
    Check {
        id: "hostPorts",
        level: Level::Baseline,
        versions: &[since(0, host_ports)],
    },
    Check {
        id: "hostProbesAndHostLifecycle",
        level: Level::Baseline,
        versions: &[since(34, host_probes)],
    },
    Check {
        id: "privileged",
        level: Level::Baseline,
        versions: &[since(0, privileged)],
    },
    Check {
        id: "procMount",
        level: Level::Baseline,
        versions: &[since(0, proc_mount)],
    },
    Check {
        id: "restrictedVolumes",
        level: Level::Restricted,
        versions: &[since(0, restricted_volumes)],
    },
    Check {
        id: "runAsNonRoot",
        level: Level::Restricted,
        versions: &[since(0, run_as_non_root)],
    },
    Check {
        id: "runAsUser",
        level: Level::Restricted,
        versions: &[since(23, run_as_user)],
    },
    Check {
        id: "seLinuxOptions",
        level: Level::Baseline,
        versions: &[
            since(0, se_linux_options_1_0),
            since(31, se_linux_options_1_31),
        ],
    },
    Check {
        id: "seccompProfile_baseline",
        level: Level::Baseline,
        versions: &[
            since(0, seccomp_annotations),
            since(19, seccomp_baseline_1_19),
        ],
    },
    Check {
        id: "seccompProfile_restricted",
        level: Level::Restricted,
        versions: &[
            since(19, seccomp_restricted_1_19),
            since(25, seccomp_restricted_1_25),
        ],
    },
    Check {
        id: "sysctls",
        level: Level::Baseline,
        versions: &[
            since(0, sysctls_1_0),
            since(27, sysctls_1_27),
            since(29, sysctls_1_29),
            since(32, sysctls_1_32),
        ],
    },
    Check {
        id: "windowsHostProcess",
        level: Level::Baseline,
        versions: &[since(0, windows_host_process)],
    },
];

/// Kyverno's `evaluatePSS`. Only `baseline` leaves out the restricted
/// checks (so `privileged` runs them all, as in Kyverno). Each check runs
/// one revision: `latest` the newest, a pinned version the newest that
/// applies from it or earlier, and the first when none does (Kyverno starts
/// from the first, so a check newer than the pin still runs).
pub fn evaluate(baseline_only: bool, version: Version, meta: &Value, spec: &Value) -> Vec<Failure> {
    evaluate_only(&[], baseline_only, version, meta, spec)
}

/// [`evaluate`] with only the checks `ids` names (all of them when empty):
/// an exclusion reads only its control's results.
pub fn evaluate_only(
    ids: &[&str],
    baseline_only: bool,
    version: Version,
    meta: &Value,
    spec: &Value,
) -> Vec<Failure> {
    let mut failures = Vec::new();
    for check in CHECKS {
        if baseline_only && check.level != Level::Baseline {
            continue;
        }
        if !ids.is_empty() && !ids.contains(&check.id) {
            continue;
        }
        let revision = match version {
            Version::Latest => check.versions.last(),
            Version::Minor(minor) => check
                .versions
                .iter()
                .rev()
                .find(|v| v.minor <= minor)
                .or(check.versions.first()),
        };
        if let Some(revision) = revision {
            if let Some(violation) = (revision.check)(meta, spec) {
                failures.push(Failure {
                    id: check.id,
                    violation,
                });
            }
        }
    }
    failures
}

// --- reading the pod ------------------------------------------------------

/// Init containers first, as the fork's `visitContainers` walks them.
pub const CONTAINER_KINDS: [&str; 3] = ["initContainers", "containers", "ephemeralContainers"];

/// The value at `keys`; JSON `null` counts as absent, like a nil Go pointer.
fn at<'a>(value: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    keys.iter()
        .try_fold(value, |v, key| v.get(*key))
        .filter(|v| !v.is_null())
}

/// A struct-pointer field: set when it holds an object.
fn object_at<'a>(value: &'a Value, keys: &[&str]) -> Option<&'a Value> {
    at(value, keys).filter(|v| v.is_object())
}

fn flag(value: &Value, keys: &[&str]) -> Option<bool> {
    at(value, keys).and_then(Value::as_bool)
}

/// A plain string field; Go's zero value `""` when unset.
fn text<'a>(value: &'a Value, key: &str) -> &'a str {
    value.get(key).and_then(Value::as_str).unwrap_or("")
}

pub fn list<'a>(value: &'a Value, key: &str) -> &'a [Value] {
    value
        .get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// A container's field path (`spec.initContainers[0]`), written out only
/// when an error names it: most checks pass.
#[derive(Clone, Copy)]
struct ContainerPath {
    kind: &'static str,
    index: usize,
}

impl std::fmt::Display for ContainerPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "spec.{}[{}]", self.kind, self.index)
    }
}

/// Where a `securityContext` is: the pod's or a container's.
#[derive(Clone, Copy)]
enum SecurityContextAt {
    Pod,
    Container(ContainerPath),
}

impl std::fmt::Display for SecurityContextAt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Pod => f.write_str("spec.securityContext"),
            Self::Container(path) => write!(f, "{path}.securityContext"),
        }
    }
}

/// Every container with its field path.
fn containers(spec: &Value) -> Vec<(ContainerPath, &Value)> {
    CONTAINER_KINDS
        .iter()
        .flat_map(|&kind| {
            list(spec, kind)
                .iter()
                .enumerate()
                .map(move |(index, c)| (ContainerPath { kind, index }, c))
        })
        .collect()
}

fn is_windows(spec: &Value) -> bool {
    at(spec, &["os", "name"]).and_then(Value::as_str) == Some("windows")
}

/// Sorted and deduplicated, as Go's `sets.String.List()`.
fn sorted_set<'a>(items: impl Iterator<Item = &'a str>) -> Vec<String> {
    items
        .collect::<BTreeSet<_>>()
        .into_iter()
        .map(str::to_string)
        .collect()
}

fn pluralize(singular: &str, plural: &str, count: usize) -> String {
    let word = if count == 1 { singular } else { plural };
    word.to_string()
}

fn fail(reason: &str, errors: Vec<FieldError>) -> Option<Violation> {
    (!errors.is_empty()).then(|| Violation {
        reason: reason.to_string(),
        errors,
        listed: true,
    })
}

fn unlisted(violation: Violation) -> Violation {
    Violation {
        listed: false,
        ..violation
    }
}

// --- the checks -------------------------------------------------------------

fn allow_privilege_escalation_1_8(_: &Value, spec: &Value) -> Option<Violation> {
    let errors = containers(spec)
        .into_iter()
        .filter_map(|(path, c)| {
            let field = || format!("{path}.securityContext.allowPrivilegeEscalation");
            let Some(context) = object_at(c, &["securityContext"]) else {
                return Some(FieldError::required(field()));
            };
            match flag(context, &["allowPrivilegeEscalation"]) {
                None => Some(FieldError::forbidden(field(), BadValue::Text("nil".into()))),
                Some(true) => Some(FieldError::forbidden(field(), BadValue::Bool(true))),
                Some(false) => None,
            }
        })
        .collect();
    fail("allowPrivilegeEscalation != false", errors)
}

/// From v1.25 Windows pods (`spec.os.name: windows`) are exempt.
fn allow_privilege_escalation_1_25(meta: &Value, spec: &Value) -> Option<Violation> {
    if is_windows(spec) {
        return None;
    }
    allow_privilege_escalation_1_8(meta, spec)
}

const APPARMOR_ANNOTATION_PREFIX: &str = "container.apparmor.security.beta.kubernetes.io/";

fn app_armor_profile(meta: &Value, spec: &Value) -> Option<Violation> {
    let mut targets: Vec<(SecurityContextAt, &Value)> = Vec::new();
    if let Some(profile) = object_at(spec, &["securityContext", "appArmorProfile"]) {
        targets.push((SecurityContextAt::Pod, profile));
    }
    for (path, c) in containers(spec) {
        if let Some(profile) = object_at(c, &["securityContext", "appArmorProfile"]) {
            targets.push((SecurityContextAt::Container(path), profile));
        }
    }
    let mut errors = Vec::new();
    let mut bad_types = BTreeSet::new();
    for (prefix, profile) in targets {
        let kind = text(profile, "type");
        if !matches!(kind, "RuntimeDefault" | "Localhost") {
            bad_types.insert(kind);
            errors.push(FieldError::forbidden(
                format!("{prefix}.appArmorProfile.type"),
                BadValue::Text(kind.into()),
            ));
        }
    }
    // Go walks the annotation map in random order; sorting keeps it stable.
    let mut annotations: Vec<(&str, &str)> = meta
        .get("annotations")
        .and_then(Value::as_object)
        .map(|map| {
            map.iter()
                .filter_map(|(k, v)| v.as_str().map(|v| (k.as_str(), v)))
                .collect()
        })
        .unwrap_or_default();
    annotations.sort_unstable();
    let mut bad_annotations = 0;
    for (key, value) in annotations {
        let allowed =
            value.is_empty() || value == "runtime/default" || value.starts_with("localhost/");
        if key.starts_with(APPARMOR_ANNOTATION_PREFIX) && !allowed {
            bad_annotations += 1;
            errors.push(FieldError::forbidden(
                format!("metadata.annotations[{key}]"),
                BadValue::Text(value.into()),
            ));
        }
    }
    let reason = pluralize(
        "forbidden AppArmor profile",
        "forbidden AppArmor profiles",
        bad_types.len() + bad_annotations,
    );
    fail(&reason, errors).map(unlisted)
}

const BASELINE_CAPABILITIES: [&str; 13] = [
    "AUDIT_WRITE",
    "CHOWN",
    "DAC_OVERRIDE",
    "FOWNER",
    "FSETID",
    "KILL",
    "MKNOD",
    "NET_BIND_SERVICE",
    "SETFCAP",
    "SETGID",
    "SETPCAP",
    "SETUID",
    "SYS_CHROOT",
];

fn strings<'a>(value: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    list(value, key).iter().filter_map(Value::as_str)
}

fn capabilities_baseline(_: &Value, spec: &Value) -> Option<Violation> {
    let errors = containers(spec)
        .into_iter()
        .filter_map(|(path, c)| {
            let caps = object_at(c, &["securityContext", "capabilities"])?;
            let bad =
                sorted_set(strings(caps, "add").filter(|cap| !BASELINE_CAPABILITIES.contains(cap)));
            (!bad.is_empty()).then(|| {
                FieldError::forbidden(
                    format!("{path}.securityContext.capabilities.add"),
                    BadValue::List(bad),
                )
            })
        })
        .collect();
    fail("non-default capabilities", errors)
}

fn capabilities_restricted_1_22(_: &Value, spec: &Value) -> Option<Violation> {
    let mut missing_drop = Vec::new();
    let mut adding = Vec::new();
    for (path, c) in containers(spec) {
        let drop_field = || format!("{path}.securityContext.capabilities.drop");
        let Some(caps) = object_at(c, &["securityContext", "capabilities"]) else {
            missing_drop.push(FieldError::required(drop_field()));
            continue;
        };
        let drops: Vec<&str> = strings(caps, "drop").collect();
        if !drops.contains(&"ALL") {
            missing_drop.push(if drops.is_empty() {
                FieldError::required(drop_field())
            } else {
                FieldError::forbidden(drop_field(), BadValue::List(sorted_set(drops.into_iter())))
            });
        }
        let bad = sorted_set(strings(caps, "add").filter(|cap| *cap != "NET_BIND_SERVICE"));
        if !bad.is_empty() {
            adding.push(FieldError::forbidden(
                format!("{path}.securityContext.capabilities.add"),
                BadValue::List(bad),
            ));
        }
    }
    // All missing drops first, then all forbidden adds, as the fork lists them.
    missing_drop.append(&mut adding);
    fail("unrestricted capabilities", missing_drop)
}

fn capabilities_restricted_1_25(meta: &Value, spec: &Value) -> Option<Violation> {
    if is_windows(spec) {
        return None;
    }
    capabilities_restricted_1_22(meta, spec)
}

fn host_namespaces(_: &Value, spec: &Value) -> Option<Violation> {
    let errors = ["hostNetwork", "hostPID", "hostIPC"]
        .into_iter()
        .filter(|key| flag(spec, &[*key]) == Some(true))
        .map(|key| FieldError::forbidden(format!("spec.{key}"), BadValue::Bool(true)))
        .collect();
    fail("host namespaces", errors)
}

fn host_path_volumes(_: &Value, spec: &Value) -> Option<Violation> {
    let errors = list(spec, "volumes")
        .iter()
        .enumerate()
        .filter_map(|(i, volume)| {
            let host_path = object_at(volume, &["hostPath"])?;
            Some(FieldError::forbidden(
                format!("spec.volumes[{i}].hostPath"),
                BadValue::Text(text(host_path, "path").into()),
            ))
        })
        .collect();
    fail("hostPath volumes", errors)
}

fn host_ports(_: &Value, spec: &Value) -> Option<Violation> {
    let mut errors = Vec::new();
    for (path, c) in containers(spec) {
        for (i, port) in list(c, "ports").iter().enumerate() {
            let host_port = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            if host_port != 0 {
                errors.push(FieldError::forbidden(
                    format!("{path}.ports[{i}].hostPort"),
                    BadValue::Int(host_port),
                ));
            }
        }
    }
    fail("hostPort", errors)
}

const PROBE_HANDLERS: [&[&str]; 5] = [
    &["livenessProbe"],
    &["readinessProbe"],
    &["startupProbe"],
    &["lifecycle", "postStart"],
    &["lifecycle", "preStop"],
];

/// v1.34+: probes and lifecycle hooks must not name a host.
fn host_probes(_: &Value, spec: &Value) -> Option<Violation> {
    let mut errors = Vec::new();
    for (path, c) in containers(spec) {
        for handler in PROBE_HANDLERS {
            // Most containers have no such handler: look it up once.
            let Some(found) = at(c, handler) else {
                continue;
            };
            for action in ["httpGet", "tcpSocket"] {
                let host = at(found, &[action, "host"])
                    .and_then(Value::as_str)
                    .unwrap_or("");
                if !host.is_empty() {
                    errors.push(FieldError::forbidden(
                        format!("{path}.{}.{action}.host", handler.join(".")),
                        BadValue::Text(host.into()),
                    ));
                }
            }
        }
    }
    fail("probe or lifecycle host", errors).map(unlisted)
}

fn privileged(_: &Value, spec: &Value) -> Option<Violation> {
    let errors = containers(spec)
        .into_iter()
        .filter(|(_, c)| flag(c, &["securityContext", "privileged"]) == Some(true))
        .map(|(path, _)| {
            FieldError::forbidden(
                format!("{path}.securityContext.privileged"),
                BadValue::Bool(true),
            )
        })
        .collect();
    fail("privileged", errors)
}

fn proc_mount(_: &Value, spec: &Value) -> Option<Violation> {
    let errors = containers(spec)
        .into_iter()
        .filter_map(|(path, c)| {
            let mount = at(c, &["securityContext", "procMount"]).and_then(Value::as_str)?;
            (mount != "Default").then(|| {
                FieldError::forbidden(
                    format!("{path}.securityContext.procMount"),
                    BadValue::Text(mount.into()),
                )
            })
        })
        .collect();
    fail("procMount", errors)
}

const ALLOWED_VOLUME_SOURCES: [&str; 9] = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "image",
    "persistentVolumeClaim",
    "projected",
    "secret",
];

/// In the order the fork tests them; the first one set names the volume type.
const RESTRICTED_VOLUME_SOURCES: [&str; 21] = [
    "hostPath",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "gitRepo",
    "nfs",
    "iscsi",
    "glusterfs",
    "rbd",
    "flexVolume",
    "cinder",
    "cephfs",
    "flocker",
    "fc",
    "azureFile",
    "vsphereVolume",
    "quobyte",
    "azureDisk",
    "photonPersistentDisk",
    "portworxVolume",
    "scaleIO",
    "storageos",
];

fn restricted_volumes(_: &Value, spec: &Value) -> Option<Violation> {
    let errors = list(spec, "volumes")
        .iter()
        .enumerate()
        .filter_map(|(i, volume)| {
            let set = |key: &&str| object_at(volume, &[*key]).is_some();
            if ALLOWED_VOLUME_SOURCES.iter().any(set) {
                return None;
            }
            let source = RESTRICTED_VOLUME_SOURCES
                .iter()
                .find(|key| set(key))
                .copied()
                .unwrap_or("unknown");
            Some(FieldError::forbidden_plain(format!(
                "spec.volumes[{i}].{source}"
            )))
        })
        .collect();
    fail("restricted volume types", errors)
}

fn run_as_non_root(_: &Value, spec: &Value) -> Option<Violation> {
    let mut errors = Vec::new();
    let pod = flag(spec, &["securityContext", "runAsNonRoot"]);
    if pod == Some(false) {
        errors.push(FieldError::forbidden(
            "spec.securityContext.runAsNonRoot".into(),
            BadValue::Bool(false),
        ));
    }
    let mut implicit = Vec::new();
    for (path, c) in containers(spec) {
        let field = || format!("{path}.securityContext.runAsNonRoot");
        match flag(c, &["securityContext", "runAsNonRoot"]) {
            Some(false) => errors.push(FieldError::forbidden(field(), BadValue::Bool(false))),
            // Unset is fine only under a pod-level `runAsNonRoot: true`.
            None if pod != Some(true) => implicit.push(FieldError::required(field())),
            _ => {}
        }
    }
    errors.append(&mut implicit);
    fail("runAsNonRoot != true", errors)
}

fn run_as_user(_: &Value, spec: &Value) -> Option<Violation> {
    let root =
        |v: &Value| at(v, &["securityContext", "runAsUser"]).and_then(Value::as_i64) == Some(0);
    let mut errors = Vec::new();
    if root(spec) {
        errors.push(FieldError::forbidden(
            "spec.securityContext.runAsUser".into(),
            BadValue::Int(0),
        ));
    }
    for (path, c) in containers(spec) {
        if root(c) {
            errors.push(FieldError::forbidden(
                format!("{path}.securityContext.runAsUser"),
                BadValue::Int(0),
            ));
        }
    }
    fail("runAsUser=0", errors)
}

const SELINUX_TYPES_1_0: &[&str] = &["", "container_t", "container_init_t", "container_kvm_t"];
const SELINUX_TYPES_1_31: &[&str] = &[
    "",
    "container_t",
    "container_init_t",
    "container_kvm_t",
    "container_engine_t",
];

fn se_linux_options(spec: &Value, allowed_types: &[&str]) -> Option<Violation> {
    let mut targets: Vec<(SecurityContextAt, &Value)> = Vec::new();
    if let Some(options) = object_at(spec, &["securityContext", "seLinuxOptions"]) {
        targets.push((SecurityContextAt::Pod, options));
    }
    for (path, c) in containers(spec) {
        if let Some(options) = object_at(c, &["securityContext", "seLinuxOptions"]) {
            targets.push((SecurityContextAt::Container(path), options));
        }
    }
    let mut errors = Vec::new();
    for (prefix, options) in targets {
        let kind = text(options, "type");
        if !allowed_types.contains(&kind) {
            errors.push(FieldError::forbidden(
                format!("{prefix}.seLinuxOptions.type"),
                BadValue::Text(kind.into()),
            ));
        }
        for key in ["user", "role"] {
            let value = text(options, key);
            if !value.is_empty() {
                errors.push(FieldError::forbidden(
                    format!("{prefix}.seLinuxOptions.{key}"),
                    BadValue::Text(value.into()),
                ));
            }
        }
    }
    fail("seLinuxOptions", errors)
}

fn se_linux_options_1_0(_: &Value, spec: &Value) -> Option<Violation> {
    se_linux_options(spec, SELINUX_TYPES_1_0)
}

/// v1.31 allows `container_engine_t`.
fn se_linux_options_1_31(_: &Value, spec: &Value) -> Option<Violation> {
    se_linux_options(spec, SELINUX_TYPES_1_31)
}

const SECCOMP_POD_ANNOTATION: &str = "seccomp.security.alpha.kubernetes.io/pod";
const SECCOMP_CONTAINER_PREFIX: &str = "container.seccomp.security.alpha.kubernetes.io/";

/// Before v1.19 seccomp was set with alpha annotations.
fn seccomp_annotations(meta: &Value, spec: &Value) -> Option<Violation> {
    let valid =
        |v: &str| v == "runtime/default" || v == "docker/default" || v.starts_with("localhost/");
    let mut keys = vec![SECCOMP_POD_ANNOTATION.to_string()];
    keys.extend(
        containers(spec)
            .into_iter()
            .map(|(_, c)| format!("{SECCOMP_CONTAINER_PREFIX}{}", text(c, "name"))),
    );
    let errors = keys
        .into_iter()
        .filter_map(|key| {
            let value = meta
                .get("annotations")
                .and_then(|a| a.get(key.as_str()))
                .and_then(Value::as_str)?;
            (!valid(value)).then(|| {
                FieldError::forbidden(
                    format!("metadata.annotations[{key}]"),
                    BadValue::Text(value.into()),
                )
            })
        })
        .collect();
    fail("seccompProfile", errors)
}

fn valid_seccomp(kind: &str) -> bool {
    matches!(kind, "RuntimeDefault" | "Localhost")
}

fn seccomp_baseline_1_19(_: &Value, spec: &Value) -> Option<Violation> {
    let mut targets: Vec<(SecurityContextAt, &Value)> = Vec::new();
    if let Some(profile) = object_at(spec, &["securityContext", "seccompProfile"]) {
        targets.push((SecurityContextAt::Pod, profile));
    }
    for (path, c) in containers(spec) {
        if let Some(profile) = object_at(c, &["securityContext", "seccompProfile"]) {
            targets.push((SecurityContextAt::Container(path), profile));
        }
    }
    let errors = targets
        .into_iter()
        .filter_map(|(prefix, profile)| {
            let kind = text(profile, "type");
            (!valid_seccomp(kind)).then(|| {
                FieldError::forbidden(
                    format!("{prefix}.seccompProfile.type"),
                    BadValue::Text(kind.into()),
                )
            })
        })
        .collect();
    fail("seccompProfile", errors)
}

fn seccomp_restricted_1_19(_: &Value, spec: &Value) -> Option<Violation> {
    let mut explicit = Vec::new();
    let mut pod_set = false;
    if let Some(profile) = object_at(spec, &["securityContext", "seccompProfile"]) {
        let kind = text(profile, "type");
        if valid_seccomp(kind) {
            pod_set = true;
        } else {
            explicit.push(FieldError::forbidden(
                "spec.securityContext.seccompProfile.type".into(),
                BadValue::Text(kind.into()),
            ));
        }
    }
    let mut implicit = Vec::new();
    for (path, c) in containers(spec) {
        let field = || format!("{path}.securityContext.seccompProfile.type");
        match object_at(c, &["securityContext", "seccompProfile"]) {
            Some(profile) => {
                let kind = text(profile, "type");
                if !valid_seccomp(kind) {
                    explicit.push(FieldError::forbidden(field(), BadValue::Text(kind.into())));
                }
            }
            None if !pod_set => implicit.push(FieldError::required(field())),
            None => {}
        }
    }
    // Bad values are reported alone; missing profiles only when none is bad.
    fail(
        "seccompProfile",
        if explicit.is_empty() {
            implicit
        } else {
            explicit
        },
    )
}

fn seccomp_restricted_1_25(meta: &Value, spec: &Value) -> Option<Violation> {
    if is_windows(spec) {
        return None;
    }
    seccomp_restricted_1_19(meta, spec)
}

const SYSCTLS_1_0: &[&str] = &[
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.tcp_syncookies",
    "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start",
];
const SYSCTLS_1_27: &[&str] = &["net.ipv4.ip_local_reserved_ports"];
const SYSCTLS_1_29: &[&str] = &[
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
];
const SYSCTLS_1_32: &[&str] = &["net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"];

fn sysctls(spec: &Value, allowed: &[&[&str]]) -> Option<Violation> {
    let sysctls = at(spec, &["securityContext", "sysctls"])
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let errors = sysctls
        .iter()
        .enumerate()
        .filter_map(|(i, sysctl)| {
            let name = text(sysctl, "name");
            (!allowed.iter().any(|set| set.contains(&name))).then(|| {
                FieldError::forbidden(
                    format!("spec.securityContext.sysctls[{i}].name"),
                    BadValue::Text(name.into()),
                )
            })
        })
        .collect();
    fail("forbidden sysctls", errors)
}

fn sysctls_1_0(_: &Value, spec: &Value) -> Option<Violation> {
    sysctls(spec, &[SYSCTLS_1_0])
}

fn sysctls_1_27(_: &Value, spec: &Value) -> Option<Violation> {
    sysctls(spec, &[SYSCTLS_1_0, SYSCTLS_1_27])
}

fn sysctls_1_29(_: &Value, spec: &Value) -> Option<Violation> {
    sysctls(spec, &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29])
}

fn sysctls_1_32(_: &Value, spec: &Value) -> Option<Violation> {
    sysctls(
        spec,
        &[SYSCTLS_1_0, SYSCTLS_1_27, SYSCTLS_1_29, SYSCTLS_1_32],
    )
}

fn windows_host_process(_: &Value, spec: &Value) -> Option<Violation> {
    let host_process =
        |v: &Value| flag(v, &["securityContext", "windowsOptions", "hostProcess"]) == Some(true);
    let mut errors = Vec::new();
    if host_process(spec) {
        errors.push(FieldError::forbidden(
            "spec.securityContext.windowsOptions.hostProcess".into(),
            BadValue::Bool(true),
        ));
    }
    for (path, c) in containers(spec) {
        if host_process(c) {
            errors.push(FieldError::forbidden(
                format!("{path}.securityContext.windowsOptions.hostProcess"),
                BadValue::Bool(true),
            ));
        }
    }
    fail("hostProcess", errors)
}
