#![allow(clippy::unwrap_used, clippy::indexing_slicing)]

use serde_json::{json, Value};

use super::*;

const PATH: &str = "rules[0].validate.podSecurity";

fn settings(level: &str, version: Option<&str>, exclude: Vec<PodSecurityExclude>) -> PodSecurity {
    PodSecurity {
        level: level.into(),
        version: version.map(Into::into),
        exclude,
    }
}

fn exclusion(
    control: &str,
    images: &[&str],
    field: Option<&str>,
    values: &[&str],
) -> PodSecurityExclude {
    PodSecurityExclude {
        control_name: control.into(),
        images: images.iter().map(|s| s.to_string()).collect(),
        restricted_field: field.map(Into::into),
        values: values.iter().map(|s| s.to_string()).collect(),
    }
}

fn compiled(ps: &PodSecurity) -> PodSecurityCheck {
    let mut diags = Diagnostics::default();
    let check = PodSecurityCheck::compile(ps, PATH, &mut diags);
    assert!(diags.is_empty(), "{}", diags.summary());
    check.unwrap()
}

/// Deep-merges `patch` into `target`; arrays and scalars are replaced.
fn merge(target: &mut Value, patch: Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                merge(t.entry(k).or_insert(Value::Null), v);
            }
        }
        (t, p) => *t = p,
    }
}

fn pod(spec: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": spec})
}

/// A pod passing baseline, with `patch` merged into its spec.
fn baseline_pod(patch: Value) -> Value {
    let mut spec = json!({"containers": [{"name": "app", "image": "nginx"}]});
    merge(&mut spec, patch);
    pod(spec)
}

/// A baseline pod whose one container has `context` as securityContext.
fn baseline_container(context: Value) -> Value {
    baseline_pod(
        json!({"containers": [{"name": "app", "image": "nginx", "securityContext": context}]}),
    )
}

/// A container passing restricted, with `patch` merged into its securityContext.
fn hardened(name: &str, image: &str, patch: Value) -> Value {
    let mut context = json!({"allowPrivilegeEscalation": false, "capabilities": {"drop": ["ALL"]}});
    merge(&mut context, patch);
    json!({"name": name, "image": image, "securityContext": context})
}

/// A pod passing restricted, with `patch` merged into its spec.
fn restricted_pod(patch: Value) -> Value {
    let mut spec = json!({
        "securityContext": {"runAsNonRoot": true, "seccompProfile": {"type": "RuntimeDefault"}},
        "containers": [hardened("app", "nginx", json!({}))]
    });
    merge(&mut spec, patch);
    pod(spec)
}

fn restricted_container(patch: Value) -> Value {
    restricted_pod(json!({"containers": [hardened("app", "nginx", patch)]}))
}

struct Case {
    name: &'static str,
    level: &'static str,
    version: Option<&'static str>,
    resource: Value,
    want: Option<&'static str>,
}

fn case(
    name: &'static str,
    level: &'static str,
    version: Option<&'static str>,
    resource: Value,
    want: Option<&'static str>,
) -> Case {
    Case {
        name,
        level,
        version,
        resource,
        want,
    }
}

fn run(cases: Vec<Case>) {
    for c in cases {
        let check = compiled(&settings(c.level, c.version, vec![]));
        let got = check.evaluate(&c.resource).unwrap();
        assert_eq!(got.as_deref(), c.want, "case {}", c.name);
    }
}

const SYSCTL_KEEPALIVE: &str = "(Forbidden reason: forbidden sysctls, field error list: [spec.securityContext.sysctls[0].name is forbidden, forbidden values found: net.ipv4.tcp_keepalive_time])";

#[test]
fn baseline_controls_pass_and_fail() {
    run(vec![
        case("baseline_pod_passes", "baseline", None, baseline_pod(json!({})), None),
        case(
            "host_namespaces_fail",
            "baseline",
            None,
            baseline_pod(json!({"hostNetwork": true})),
            Some("(Forbidden reason: host namespaces, field error list: [spec.hostNetwork is forbidden, forbidden values found: true])"),
        ),
        case("host_namespaces_false_passes", "baseline", None, baseline_pod(json!({"hostPID": false})), None),
        case(
            "privileged_fails",
            "baseline",
            Some("latest"),
            baseline_container(json!({"privileged": true})),
            Some("(Forbidden reason: privileged, field error list: [spec.containers[0].securityContext.privileged is forbidden, forbidden values found: true])"),
        ),
        case("privileged_false_passes", "baseline", None, baseline_container(json!({"privileged": false})), None),
        case(
            "capabilities_outside_default_set_fail",
            "baseline",
            None,
            baseline_container(json!({"capabilities": {"add": ["SYS_TIME", "NET_ADMIN"]}})),
            Some("(Forbidden reason: non-default capabilities, field error list: [spec.containers[0].securityContext.capabilities.add is forbidden, forbidden values found: [NET_ADMIN SYS_TIME]])"),
        ),
        case("capabilities_default_set_passes", "baseline", None, baseline_container(json!({"capabilities": {"add": ["CHOWN"]}})), None),
        case(
            "host_path_volume_fails",
            "baseline",
            None,
            baseline_pod(json!({"volumes": [{"name": "h", "hostPath": {"path": "/etc"}}]})),
            Some("(Forbidden reason: hostPath volumes, field error list: [spec.volumes[0].hostPath is forbidden, forbidden values found: /etc])"),
        ),
        case("empty_dir_volume_passes", "baseline", None, baseline_pod(json!({"volumes": [{"name": "e", "emptyDir": {}}]})), None),
        case(
            "host_port_fails",
            "baseline",
            None,
            baseline_pod(json!({"containers": [{"name": "app", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": 8080}]}]})),
            Some("(Forbidden reason: hostPort, field error list: [spec.containers[0].ports[0].hostPort is forbidden, forbidden values found: 8080])"),
        ),
        case(
            "host_port_zero_passes",
            "baseline",
            None,
            baseline_pod(json!({"containers": [{"name": "app", "image": "nginx", "ports": [{"containerPort": 80, "hostPort": 0}]}]})),
            None,
        ),
        // Kyverno's fork returns no field errors for AppArmor: the list is empty.
        case(
            "apparmor_unconfined_fails",
            "baseline",
            None,
            baseline_pod(json!({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}})),
            Some("(Forbidden reason: forbidden AppArmor profile, field error list: [])"),
        ),
        case(
            "apparmor_annotations_fail",
            "baseline",
            None,
            json!({"kind": "Pod", "metadata": {"annotations": {
                "container.apparmor.security.beta.kubernetes.io/a": "unconfined",
                "container.apparmor.security.beta.kubernetes.io/b": "unknown"
            }}, "spec": {"containers": [{"name": "a"}, {"name": "b"}]}}),
            Some("(Forbidden reason: forbidden AppArmor profiles, field error list: [])"),
        ),
        case(
            "apparmor_runtime_default_passes",
            "baseline",
            None,
            baseline_container(json!({"appArmorProfile": {"type": "RuntimeDefault"}})),
            None,
        ),
        case(
            "selinux_type_and_user_fail",
            "baseline",
            None,
            baseline_container(json!({"seLinuxOptions": {"type": "spc_t", "user": "u"}})),
            Some("(Forbidden reason: seLinuxOptions, field error list: [spec.containers[0].securityContext.seLinuxOptions.type is forbidden, forbidden values found: spc_t, spec.containers[0].securityContext.seLinuxOptions.user is forbidden, forbidden values found: u])"),
        ),
        case(
            "selinux_container_engine_t_passes_latest",
            "baseline",
            None,
            baseline_container(json!({"seLinuxOptions": {"type": "container_engine_t"}})),
            None,
        ),
        case(
            "selinux_container_engine_t_fails_before_1_31",
            "baseline",
            Some("v1.29"),
            baseline_container(json!({"seLinuxOptions": {"type": "container_engine_t"}})),
            Some("(Forbidden reason: seLinuxOptions, field error list: [spec.containers[0].securityContext.seLinuxOptions.type is forbidden, forbidden values found: container_engine_t])"),
        ),
        case(
            "proc_mount_unmasked_fails",
            "baseline",
            None,
            baseline_container(json!({"procMount": "Unmasked"})),
            Some("(Forbidden reason: procMount, field error list: [spec.containers[0].securityContext.procMount is forbidden, forbidden values found: Unmasked])"),
        ),
        case("proc_mount_default_passes", "baseline", None, baseline_container(json!({"procMount": "Default"})), None),
        case(
            "seccomp_unconfined_fails",
            "baseline",
            None,
            baseline_pod(json!({"securityContext": {"seccompProfile": {"type": "Unconfined"}}})),
            Some("(Forbidden reason: seccompProfile, field error list: [spec.securityContext.seccompProfile.type is forbidden, forbidden values found: Unconfined])"),
        ),
        case(
            "seccomp_localhost_passes",
            "baseline",
            None,
            baseline_pod(json!({"securityContext": {"seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}}})),
            None,
        ),
        case(
            "sysctl_unsafe_fails",
            "baseline",
            None,
            baseline_pod(json!({"securityContext": {"sysctls": [{"name": "kernel.msgmax", "value": "1"}]}})),
            Some("(Forbidden reason: forbidden sysctls, field error list: [spec.securityContext.sysctls[0].name is forbidden, forbidden values found: kernel.msgmax])"),
        ),
        case(
            "sysctl_keepalive_passes_latest",
            "baseline",
            None,
            baseline_pod(json!({"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_keepalive_time", "value": "60"}]}})),
            None,
        ),
        case(
            "host_process_fails",
            "baseline",
            None,
            baseline_pod(json!({"securityContext": {"windowsOptions": {"hostProcess": true}}})),
            Some("(Forbidden reason: hostProcess, field error list: [spec.securityContext.windowsOptions.hostProcess is forbidden, forbidden values found: true])"),
        ),
        // Kyverno's fork returns no field errors for host probes either.
        case(
            "host_probe_fails_latest",
            "baseline",
            None,
            baseline_pod(json!({"containers": [{"name": "app", "image": "nginx", "livenessProbe": {"httpGet": {"host": "localhost", "port": 80}}}]})),
            Some("(Forbidden reason: probe or lifecycle host, field error list: [])"),
        ),
    ]);
}

#[test]
fn restricted_controls_pass_and_fail() {
    run(vec![
        case("restricted_pod_passes", "restricted", None, restricted_pod(json!({})), None),
        case(
            "baseline_pod_fails_restricted",
            "restricted",
            Some("latest"),
            baseline_pod(json!({})),
            Some("(Forbidden reason: allowPrivilegeEscalation != false, field error list: [spec.containers[0].securityContext.allowPrivilegeEscalation: Required value])(Forbidden reason: unrestricted capabilities, field error list: [spec.containers[0].securityContext.capabilities.drop: Required value])(Forbidden reason: runAsNonRoot != true, field error list: [spec.containers[0].securityContext.runAsNonRoot: Required value])(Forbidden reason: seccompProfile, field error list: [spec.containers[0].securityContext.seccompProfile.type: Required value])"),
        ),
        case(
            "volume_type_nfs_fails",
            "restricted",
            None,
            restricted_pod(json!({"volumes": [{"name": "n", "nfs": {"server": "s", "path": "/"}}]})),
            Some("(Forbidden reason: restricted volume types, field error list: [spec.volumes[0].nfs: Forbidden])"),
        ),
        case(
            "volume_type_projected_passes",
            "restricted",
            None,
            restricted_pod(json!({"volumes": [{"name": "t", "projected": {"sources": []}}]})),
            None,
        ),
        case(
            "privilege_escalation_unset_fails",
            "restricted",
            None,
            restricted_container(json!({"allowPrivilegeEscalation": null})),
            Some("(Forbidden reason: allowPrivilegeEscalation != false, field error list: [spec.containers[0].securityContext.allowPrivilegeEscalation is forbidden, forbidden values found: nil])"),
        ),
        case(
            "privilege_escalation_windows_passes_latest",
            "restricted",
            None,
            restricted_pod(json!({"os": {"name": "windows"}, "containers": [hardened("app", "nginx", json!({"allowPrivilegeEscalation": null}))]})),
            None,
        ),
        case(
            "privilege_escalation_windows_passes_pinned_1_25",
            "restricted",
            Some("v1.25"),
            restricted_pod(json!({"os": {"name": "windows"}, "containers": [hardened("app", "nginx", json!({"allowPrivilegeEscalation": null}))]})),
            None,
        ),
        // Pinned before v1.25, the v1.8 revision has no Windows exemption.
        case(
            "privilege_escalation_windows_fails_pinned_1_24",
            "restricted",
            Some("v1.24"),
            restricted_pod(json!({"os": {"name": "windows"}, "containers": [hardened("app", "nginx", json!({"allowPrivilegeEscalation": null}))]})),
            Some("(Forbidden reason: allowPrivilegeEscalation != false, field error list: [spec.containers[0].securityContext.allowPrivilegeEscalation is forbidden, forbidden values found: nil])"),
        ),
        case(
            "run_as_non_root_missing_fails",
            "restricted",
            None,
            restricted_pod(json!({"securityContext": {"runAsNonRoot": null}})),
            Some("(Forbidden reason: runAsNonRoot != true, field error list: [spec.containers[0].securityContext.runAsNonRoot: Required value])"),
        ),
        case(
            "run_as_non_root_false_fails",
            "restricted",
            None,
            restricted_container(json!({"runAsNonRoot": false})),
            Some("(Forbidden reason: runAsNonRoot != true, field error list: [spec.containers[0].securityContext.runAsNonRoot is forbidden, forbidden values found: false])"),
        ),
        case(
            "run_as_user_root_fails",
            "restricted",
            None,
            restricted_container(json!({"runAsUser": 0})),
            Some("(Forbidden reason: runAsUser=0, field error list: [spec.containers[0].securityContext.runAsUser is forbidden, forbidden values found: 0])"),
        ),
        case("run_as_user_non_root_passes", "restricted", None, restricted_container(json!({"runAsUser": 1000})), None),
        case(
            "seccomp_missing_fails",
            "restricted",
            None,
            restricted_pod(json!({"securityContext": {"seccompProfile": null}})),
            Some("(Forbidden reason: seccompProfile, field error list: [spec.containers[0].securityContext.seccompProfile.type: Required value])"),
        ),
        case(
            "capabilities_restricted_fail",
            "restricted",
            None,
            restricted_container(json!({"capabilities": {"drop": ["NET_RAW"], "add": ["CHOWN"]}})),
            Some("(Forbidden reason: unrestricted capabilities, field error list: [spec.containers[0].securityContext.capabilities.drop is forbidden, forbidden values found: [NET_RAW], spec.containers[0].securityContext.capabilities.add is forbidden, forbidden values found: [CHOWN]])"),
        ),
        case(
            "capabilities_restricted_first_revision_runs_before_1_22",
            "restricted",
            Some("v1.21"),
            restricted_container(json!({"capabilities": {"drop": ["NET_RAW"], "add": ["CHOWN"]}})),
            Some("(Forbidden reason: unrestricted capabilities, field error list: [spec.containers[0].securityContext.capabilities.drop is forbidden, forbidden values found: [NET_RAW], spec.containers[0].securityContext.capabilities.add is forbidden, forbidden values found: [CHOWN]])"),
        ),
        case(
            "net_bind_service_passes",
            "restricted",
            None,
            restricted_container(json!({"capabilities": {"add": ["NET_BIND_SERVICE"]}})),
            None,
        ),
    ]);
}

/// Kyverno's `evaluatePSS` runs one revision of each check: the newest
/// that applies at the pinned version, else the first.
#[test]
fn pinned_versions_run_one_revision_of_each_check() {
    let keepalive = || {
        baseline_pod(
            json!({"securityContext": {"sysctls": [{"name": "net.ipv4.tcp_keepalive_time"}]}}),
        )
    };
    let annotated = || {
        json!({"kind": "Pod",
            "metadata": {"annotations": {"seccomp.security.alpha.kubernetes.io/pod": "unconfined"}},
            "spec": {"containers": [{"name": "app", "image": "nginx"}]}})
    };
    run(vec![
        // The v1.29 revision allows it; the v1.0 and v1.27 ones, not run, do not.
        case("sysctl_keepalive_passes_at_1_29", "baseline", Some("v1.29"), keepalive(), None),
        case(
            "sysctl_keepalive_fails_at_1_27",
            "baseline",
            Some("v1.27"),
            keepalive(),
            Some(SYSCTL_KEEPALIVE),
        ),
        // Only the v1.0 seccomp revision, not run, reads the alpha annotations.
        case("seccomp_annotation_passes_at_1_19", "baseline", Some("v1.19"), annotated(), None),
        // A check whose first revision is newer than the pin still runs it.
        case(
            "run_as_user_root_fails_at_1_19",
            "restricted",
            Some("v1.19"),
            restricted_container(json!({"runAsUser": 0})),
            Some("(Forbidden reason: runAsUser=0, field error list: [spec.containers[0].securityContext.runAsUser is forbidden, forbidden values found: 0])"),
        ),
        case(
            "host_probe_fails_at_1_29",
            "baseline",
            Some("v1.29"),
            baseline_pod(json!({"containers": [{"name": "app", "image": "nginx", "livenessProbe": {"httpGet": {"host": "localhost", "port": 80}}}]})),
            Some("(Forbidden reason: probe or lifecycle host, field error list: [])"),
        ),
    ]);
}

#[test]
fn privileged_level_runs_every_check_as_kyverno_does() {
    let check = compiled(&settings("privileged", None, vec![]));
    assert!(check.evaluate(&baseline_pod(json!({}))).unwrap().is_some());
}

#[test]
fn controllers_are_read_from_their_pod_template() {
    let container =
        json!([{"name": "app", "image": "nginx", "securityContext": {"privileged": true}}]);
    let deployment = json!({"kind": "Deployment", "spec": {"template": {"metadata": {}, "spec": {"containers": container}}}});
    let cronjob = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": container}}}}}});
    let check = compiled(&settings("baseline", None, vec![]));
    assert_eq!(
        check.evaluate(&deployment).unwrap().as_deref(),
        Some("(Forbidden reason: privileged, field error list: [spec.template.spec.containers[0].securityContext.privileged is forbidden, forbidden values found: true])")
    );
    assert_eq!(
        check.evaluate(&cronjob).unwrap().as_deref(),
        Some("(Forbidden reason: privileged, field error list: [spec.jobTemplate.spec.template.spec.containers[0].securityContext.privileged is forbidden, forbidden values found: true])")
    );
    assert_eq!(
        check.evaluate(&json!({"kind": "Service", "spec": {}})),
        Err("Error while getting new resource: could not find correct resource type".to_string())
    );
}

#[test]
fn failure_message_is_kyvernos() {
    let latest = compiled(&settings("restricted", Some("latest"), vec![]));
    assert_eq!(
        latest.failure_message("psa", "(X)"),
        "Validation rule 'psa' failed. It violates PodSecurity \"restricted:latest\": (X)"
    );
    // Kyverno prints the version as written, so an unset one stays empty.
    let unset = compiled(&settings("baseline", None, vec![]));
    assert_eq!(
        unset.failure_message("psa", "(X)"),
        "Validation rule 'psa' failed. It violates PodSecurity \"baseline:\": (X)"
    );
}

const CAPS_SYS_TIME: &str = "(Forbidden reason: non-default capabilities, field error list: [spec.containers[0].securityContext.capabilities.add is forbidden, forbidden values found: [SYS_TIME]])(Forbidden reason: unrestricted capabilities, field error list: [spec.containers[0].securityContext.capabilities.add is forbidden, forbidden values found: [SYS_TIME]])";
const PRIVILEGED_FIRST: &str = "(Forbidden reason: privileged, field error list: [spec.containers[0].securityContext.privileged is forbidden, forbidden values found: true])";

#[test]
fn exclusions() {
    let sys_time = restricted_container(json!({"capabilities": {"add": ["SYS_TIME"]}}));
    let two_privileged = baseline_pod(json!({"containers": [
        {"name": "sidecar", "image": "busybox", "securityContext": {"privileged": true}},
        {"name": "web", "image": "nginx:1.27", "securityContext": {"privileged": true}}
    ]}));
    let probe = baseline_pod(
        json!({"containers": [{"name": "app", "image": "nginx", "readinessProbe": {"tcpSocket": {"host": "10.0.0.1", "port": 80}}}]}),
    );
    let add_field = "spec.containers[*].securityContext.capabilities.add";
    let cases: Vec<(&str, PodSecurity, Value, Option<&str>)> = vec![
        (
            "field_and_value_covered",
            settings("restricted", None, vec![exclusion("Capabilities", &["nginx*"], Some(add_field), &["SYS_TIME"])]),
            sys_time.clone(),
            None,
        ),
        (
            "value_not_covered",
            settings("restricted", None, vec![exclusion("Capabilities", &["nginx*"], Some(add_field), &["NET_ADMIN"])]),
            sys_time.clone(),
            Some(CAPS_SYS_TIME),
        ),
        (
            "other_field",
            settings(
                "restricted",
                None,
                vec![exclusion("Capabilities", &["nginx*"], Some("spec.initContainers[*].securityContext.capabilities.add"), &["SYS_TIME"])],
            ),
            sys_time.clone(),
            Some(CAPS_SYS_TIME),
        ),
        (
            "image_not_matching",
            settings("restricted", None, vec![exclusion("Capabilities", &["busybox"], None, &[])]),
            sys_time.clone(),
            Some(CAPS_SYS_TIME),
        ),
        (
            "whole_control_for_image",
            settings("restricted", None, vec![exclusion("Capabilities", &["ngin?"], None, &[])]),
            sys_time,
            None,
        ),
        (
            "only_the_matching_container",
            settings("baseline", None, vec![exclusion("Privileged Containers", &["nginx:*"], None, &[])]),
            two_privileged,
            Some(PRIVILEGED_FIRST),
        ),
        (
            "pod_level_control",
            settings("baseline", None, vec![exclusion("Host Namespaces", &[], None, &[])]),
            baseline_pod(json!({"hostNetwork": true, "hostPID": true})),
            None,
        ),
        (
            "pod_level_field_of_a_control_on_both_levels",
            settings("baseline", None, vec![exclusion("AppArmor", &[], None, &[])]),
            baseline_pod(json!({"securityContext": {"appArmorProfile": {"type": "Unconfined"}}})),
            None,
        ),
        (
            "host_probe_for_image",
            settings("baseline", None, vec![exclusion("Host Probes / Lifecycle Hooks", &["nginx"], None, &[])]),
            probe,
            None,
        ),
        (
            "unrelated_control",
            settings("baseline", None, vec![exclusion("Sysctls", &[], None, &[])]),
            baseline_pod(json!({"hostIPC": true})),
            Some("(Forbidden reason: host namespaces, field error list: [spec.hostIPC is forbidden, forbidden values found: true])"),
        ),
    ];
    for (name, ps, resource, want) in cases {
        let got = compiled(&ps).evaluate(&resource).unwrap();
        assert_eq!(got.as_deref(), want, "case {name}");
    }
}

#[test]
fn autogen_restricted_fields_do_not_match_controllers() {
    let ps = settings(
        "restricted",
        None,
        vec![exclusion(
            "Capabilities",
            &["nginx"],
            Some("spec.containers[*].securityContext.capabilities.add"),
            &["SYS_TIME"],
        )],
    );
    let template = restricted_container(json!({"capabilities": {"add": ["SYS_TIME"]}}));
    let deployment =
        json!({"kind": "Deployment", "spec": {"template": {"spec": template["spec"].clone()}}});
    let check = compiled(&ps);
    // A rule written for Deployments compares pod-relative fields and matches.
    assert_eq!(check.evaluate(&deployment).unwrap(), None);
    // Kyverno's autogen rewrote restrictedField, so the exclusion misses.
    assert!(check
        .for_autogen(false)
        .evaluate(&deployment)
        .unwrap()
        .is_some());
}

#[test]
fn invalid_settings_are_reported() {
    let cases: Vec<(&str, PodSecurity, &str, &str)> = vec![
        (
            "unknown_level",
            settings("strict", None, vec![]),
            "level",
            "unknown level \"strict\"",
        ),
        (
            "missing_level",
            settings("", None, vec![]),
            "level",
            "is required",
        ),
        (
            "version_past_crd",
            settings("baseline", Some("v1.33"), vec![]),
            "version",
            "unsupported version \"v1.33\"",
        ),
        (
            "version_without_v",
            settings("baseline", Some("1.25"), vec![]),
            "version",
            "unsupported version",
        ),
        (
            "version_leading_zero",
            settings("baseline", Some("v1.025"), vec![]),
            "version",
            "unsupported version",
        ),
        (
            "unknown_control",
            settings(
                "baseline",
                None,
                vec![exclusion("Host Network", &[], None, &[])],
            ),
            "exclude[0].controlName",
            "unknown control name \"Host Network\"",
        ),
        (
            "container_control_without_images",
            settings(
                "baseline",
                None,
                vec![exclusion("Capabilities", &[], None, &[])],
            ),
            "exclude[0].controlName",
            "exclude.images must be specified",
        ),
        (
            "pod_control_with_images",
            settings(
                "baseline",
                None,
                vec![exclusion("Sysctls", &["nginx"], None, &[])],
            ),
            "exclude[0].controlName",
            "exclude.images must not be specified",
        ),
        (
            "restricted_control_at_baseline",
            settings(
                "baseline",
                None,
                vec![exclusion("Volume Types", &[], None, &[])],
            ),
            "exclude[0].controlName",
            "not a control of the baseline level",
        ),
        (
            "field_without_values",
            settings(
                "restricted",
                None,
                vec![exclusion(
                    "Seccomp",
                    &[],
                    Some("spec.securityContext.seccompProfile.type"),
                    &[],
                )],
            ),
            "exclude[0].values",
            "is required when restrictedField is set",
        ),
        (
            "values_without_field",
            settings(
                "restricted",
                None,
                vec![exclusion("Seccomp", &[], None, &["Unconfined"])],
            ),
            "exclude[0].restrictedField",
            "is required when values are set",
        ),
    ];
    for (name, ps, path, message) in cases {
        let mut diags = Diagnostics::default();
        assert!(
            PodSecurityCheck::compile(&ps, PATH, &mut diags).is_none(),
            "case {name}"
        );
        let errors = diags.errors();
        assert_eq!(errors.len(), 1, "case {name}: {}", diags.summary());
        assert_eq!(errors[0].path, format!("{PATH}.{path}"), "case {name}");
        assert!(
            errors[0].message.contains(message),
            "case {name}: {}",
            errors[0].message
        );
    }
}

#[test]
fn valid_settings_compile() {
    let ok = [
        settings("baseline", None, vec![exclusion("Seccomp", &[], None, &[])]),
        settings(
            "baseline",
            Some("latest"),
            vec![exclusion("Capabilities", &["*"], None, &[])],
        ),
        settings(
            "restricted",
            Some("v1.19"),
            vec![exclusion("Running as Non-root", &["nginx"], None, &[])],
        ),
        settings(
            "privileged",
            Some("v1.29"),
            vec![exclusion("Volume Types", &[], None, &[])],
        ),
    ];
    for ps in ok {
        compiled(&ps);
    }
}
