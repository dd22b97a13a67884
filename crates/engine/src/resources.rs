//! Kubernetes resource names: the plural in an API path or a request's
//! `resource`, and the Kind that Kubewarden's host capabilities and
//! Kyverno's `kinds` use. Built-in resources and common custom resources
//! are known; other plurals are guessed, and callers say so.

/// `(group, plural, kind)`; the core group is `""`.
const KNOWN: &[(&str, &str, &str)] = &[
    ("", "bindings", "Binding"),
    ("", "componentstatuses", "ComponentStatus"),
    ("", "configmaps", "ConfigMap"),
    ("", "endpoints", "Endpoints"),
    ("", "events", "Event"),
    ("", "limitranges", "LimitRange"),
    ("", "namespaces", "Namespace"),
    ("", "nodes", "Node"),
    ("", "persistentvolumeclaims", "PersistentVolumeClaim"),
    ("", "persistentvolumes", "PersistentVolume"),
    ("", "pods", "Pod"),
    ("", "podtemplates", "PodTemplate"),
    ("", "replicationcontrollers", "ReplicationController"),
    ("", "resourcequotas", "ResourceQuota"),
    ("", "secrets", "Secret"),
    ("", "serviceaccounts", "ServiceAccount"),
    ("", "services", "Service"),
    (
        "admissionregistration.k8s.io",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingwebhookconfigurations",
        "ValidatingWebhookConfiguration",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingadmissionpolicies",
        "ValidatingAdmissionPolicy",
    ),
    (
        "admissionregistration.k8s.io",
        "validatingadmissionpolicybindings",
        "ValidatingAdmissionPolicyBinding",
    ),
    (
        "apiextensions.k8s.io",
        "customresourcedefinitions",
        "CustomResourceDefinition",
    ),
    ("apiregistration.k8s.io", "apiservices", "APIService"),
    ("apps", "controllerrevisions", "ControllerRevision"),
    ("apps", "daemonsets", "DaemonSet"),
    ("apps", "deployments", "Deployment"),
    ("apps", "replicasets", "ReplicaSet"),
    ("apps", "statefulsets", "StatefulSet"),
    (
        "autoscaling",
        "horizontalpodautoscalers",
        "HorizontalPodAutoscaler",
    ),
    ("batch", "cronjobs", "CronJob"),
    ("batch", "jobs", "Job"),
    (
        "certificates.k8s.io",
        "certificatesigningrequests",
        "CertificateSigningRequest",
    ),
    ("coordination.k8s.io", "leases", "Lease"),
    ("discovery.k8s.io", "endpointslices", "EndpointSlice"),
    ("events.k8s.io", "events", "Event"),
    ("flowcontrol.apiserver.k8s.io", "flowschemas", "FlowSchema"),
    (
        "flowcontrol.apiserver.k8s.io",
        "prioritylevelconfigurations",
        "PriorityLevelConfiguration",
    ),
    ("networking.k8s.io", "ingressclasses", "IngressClass"),
    ("networking.k8s.io", "ingresses", "Ingress"),
    ("networking.k8s.io", "networkpolicies", "NetworkPolicy"),
    ("node.k8s.io", "runtimeclasses", "RuntimeClass"),
    ("policy", "poddisruptionbudgets", "PodDisruptionBudget"),
    (
        "rbac.authorization.k8s.io",
        "clusterrolebindings",
        "ClusterRoleBinding",
    ),
    ("rbac.authorization.k8s.io", "clusterroles", "ClusterRole"),
    ("rbac.authorization.k8s.io", "rolebindings", "RoleBinding"),
    ("rbac.authorization.k8s.io", "roles", "Role"),
    ("scheduling.k8s.io", "priorityclasses", "PriorityClass"),
    ("storage.k8s.io", "csidrivers", "CSIDriver"),
    ("storage.k8s.io", "csinodes", "CSINode"),
    (
        "storage.k8s.io",
        "csistoragecapacities",
        "CSIStorageCapacity",
    ),
    ("storage.k8s.io", "storageclasses", "StorageClass"),
    ("storage.k8s.io", "volumeattachments", "VolumeAttachment"),
];

/// Custom resources whose Kind a plural alone cannot tell (several words,
/// acronyms), keyed by plural whatever their group.
const KNOWN_CUSTOM: &[(&str, &str)] = &[
    ("authorizationpolicies", "AuthorizationPolicy"),
    ("certificaterequests", "CertificateRequest"),
    (
        "ciliumclusterwidenetworkpolicies",
        "CiliumClusterwideNetworkPolicy",
    ),
    ("ciliumnetworkpolicies", "CiliumNetworkPolicy"),
    ("cleanuppolicies", "CleanupPolicy"),
    ("clustercleanuppolicies", "ClusterCleanupPolicy"),
    ("clusterissuers", "ClusterIssuer"),
    ("clusterpolicies", "ClusterPolicy"),
    ("clusterpolicyreports", "ClusterPolicyReport"),
    ("destinationrules", "DestinationRule"),
    ("envoyfilters", "EnvoyFilter"),
    ("gatewayclasses", "GatewayClass"),
    ("gitrepositories", "GitRepository"),
    ("globalcontextentries", "GlobalContextEntry"),
    ("grpcroutes", "GRPCRoute"),
    ("helmreleases", "HelmRelease"),
    ("helmrepositories", "HelmRepository"),
    ("httproutes", "HTTPRoute"),
    ("meshtlsauthentications", "MeshTLSAuthentication"),
    ("networkauthentications", "NetworkAuthentication"),
    ("peerauthentications", "PeerAuthentication"),
    ("podmonitors", "PodMonitor"),
    ("policyexceptions", "PolicyException"),
    ("policyreports", "PolicyReport"),
    ("prometheusrules", "PrometheusRule"),
    ("referencegrants", "ReferenceGrant"),
    ("requestauthentications", "RequestAuthentication"),
    ("serverauthorizations", "ServerAuthorization"),
    ("serviceentries", "ServiceEntry"),
    ("servicemonitors", "ServiceMonitor"),
    ("tcproutes", "TCPRoute"),
    ("tlsroutes", "TLSRoute"),
    ("udproutes", "UDPRoute"),
    ("verticalpodautoscalers", "VerticalPodAutoscaler"),
    ("virtualservices", "VirtualService"),
];

/// Words Kinds are made of, to split an unknown plural
/// (`verticalpodautoscaler` → `VerticalPodAutoscaler`); acronyms are
/// written as Kinds write them.
const KIND_WORDS: &[&str] = &[
    "access",
    "account",
    "alert",
    "application",
    "authentication",
    "authorization",
    "autoscaler",
    "backup",
    "binding",
    "bucket",
    "certificate",
    "challenge",
    "channel",
    "chart",
    "check",
    "claim",
    "class",
    "cluster",
    "component",
    "config",
    "configuration",
    "constraint",
    "controller",
    "cron",
    "daemon",
    "definition",
    "deployment",
    "destination",
    "disruption",
    "endpoint",
    "entry",
    "event",
    "exception",
    "external",
    "filter",
    "gateway",
    "git",
    "global",
    "group",
    "helm",
    "image",
    "ingress",
    "instance",
    "issuer",
    "job",
    "key",
    "kustomization",
    "lease",
    "limit",
    "listener",
    "machine",
    "manager",
    "map",
    "mesh",
    "monitor",
    "namespace",
    "network",
    "node",
    "object",
    "order",
    "peer",
    "plugin",
    "policy",
    "pool",
    "pod",
    "probe",
    "profile",
    "project",
    "provider",
    "proxy",
    "push",
    "quota",
    "range",
    "receiver",
    "record",
    "release",
    "replica",
    "report",
    "repository",
    "request",
    "resource",
    "restore",
    "role",
    "route",
    "rule",
    "run",
    "scaled",
    "scaler",
    "schedule",
    "secret",
    "security",
    "server",
    "service",
    "set",
    "sidecar",
    "snapshot",
    "source",
    "spec",
    "stateful",
    "storage",
    "store",
    "subscription",
    "target",
    "task",
    "template",
    "tenant",
    "telemetry",
    "token",
    "trigger",
    "vertical",
    "virtual",
    "volume",
    "webhook",
    "workload",
];
const KIND_ACRONYMS: &[(&str, &str)] = &[
    ("grpc", "GRPC"),
    ("http", "HTTP"),
    ("tcp", "TCP"),
    ("tls", "TLS"),
    ("udp", "UDP"),
    ("dns", "DNS"),
    ("ip", "IP"),
];

/// The Kind of a resource, and whether it was guessed from the plural.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KindOf {
    pub kind: String,
    pub guessed: bool,
}

/// The Kind served as `plural` in `group`.
pub fn kind_of(group: &str, plural: &str) -> KindOf {
    let plural_lower = plural.to_ascii_lowercase();
    let known = KNOWN
        .iter()
        .find(|(g, p, _)| *g == group && *p == plural_lower)
        .map(|(_, _, k)| *k)
        .or_else(|| {
            (!group.is_empty() && !is_builtin_group(group))
                .then(|| {
                    KNOWN_CUSTOM
                        .iter()
                        .find(|(p, _)| *p == plural_lower)
                        .map(|(_, k)| *k)
                })
                .flatten()
        });
    match known {
        Some(kind) => KindOf {
            kind: kind.to_string(),
            guessed: false,
        },
        None => KindOf {
            kind: guess_kind(plural),
            guessed: true,
        },
    }
}

/// Kubernetes' guess of a Kind's resource (`UnsafeGuessKindToResource`).
pub fn guess_plural(kind: &str) -> String {
    let lower = kind.to_ascii_lowercase();
    if let Some(stem) = lower.strip_suffix('y') {
        if !stem.ends_with(['a', 'e', 'i', 'o', 'u']) && !stem.is_empty() {
            return format!("{stem}ies");
        }
    }
    if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|s| lower.ends_with(s))
    {
        return format!("{lower}es");
    }
    format!("{lower}s")
}

/// The built-in Kind served as `plural`, in whichever group (no built-in
/// plural names two kinds).
pub fn builtin_kind(plural: &str) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|(_, p, _)| *p == plural)
        .map(|(_, _, k)| *k)
}

/// The plural a Kind is served as, for built-in kinds.
pub fn plural_of(group: &str, kind: &str) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|(g, _, k)| *g == group && *k == kind)
        .map(|(_, p, _)| *p)
}

/// The groups that serve a built-in Kind (`Event` is in two), in table order.
pub fn groups_of(kind: &str) -> impl Iterator<Item = &'static str> + '_ {
    KNOWN
        .iter()
        .filter(move |(_, _, k)| *k == kind)
        .map(|(g, _, _)| *g)
}

/// The plural of a common custom resource Kind, whatever its group.
pub fn custom_plural_of(kind: &str) -> Option<&'static str> {
    KNOWN_CUSTOM
        .iter()
        .find(|(_, k)| *k == kind)
        .map(|(p, _)| *p)
}

/// Built-in kinds that live outside namespaces.
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CertificateSigningRequest",
    "ClusterRole",
    "ClusterRoleBinding",
    "ComponentStatus",
    "CSIDriver",
    "CSINode",
    "CustomResourceDefinition",
    "FlowSchema",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "Node",
    "PersistentVolume",
    "PriorityClass",
    "PriorityLevelConfiguration",
    "RuntimeClass",
    "StorageClass",
    "ValidatingAdmissionPolicy",
    "ValidatingAdmissionPolicyBinding",
    "ValidatingWebhookConfiguration",
    "VolumeAttachment",
];

/// Whether a built-in kind lives in namespaces; `None` for other kinds.
pub fn is_namespaced(group: &str, kind: &str) -> Option<bool> {
    plural_of(group, kind)?;
    Some(!CLUSTER_SCOPED.contains(&kind))
}

fn is_builtin_group(group: &str) -> bool {
    KNOWN.iter().any(|(g, _, _)| *g == group)
}

/// English plural → singular, first letter upper case: `servers` →
/// `Server`, `proxies` → `Proxy`, `Routes` → `Route`.
fn guess_kind(plural: &str) -> String {
    let singular = if let Some(stem) = plural.strip_suffix("ies") {
        format!("{stem}y")
    } else if ["sses", "xes", "ches", "shes", "zes"]
        .iter()
        .any(|s| plural.ends_with(s))
    {
        plural
            .get(..plural.len().saturating_sub(2))
            .unwrap_or(plural)
            .to_string()
    } else if let Some(stem) = plural.strip_suffix('s') {
        stem.to_string()
    } else {
        plural.to_string()
    };
    if let Some(words) = split_words(&singular.to_ascii_lowercase()) {
        return words;
    }
    let mut chars = singular.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => singular,
    }
}

/// `singular` written as known words, each capitalised (acronyms in
/// capitals), when it splits into them entirely; longest words first.
fn split_words(singular: &str) -> Option<String> {
    if singular.len() > 128 {
        return None;
    }
    // best[i]: the words spelling singular[..i], fewest first.
    let mut best: Vec<Option<Vec<&str>>> = vec![None; singular.len() + 1];
    if let Some(first) = best.first_mut() {
        *first = Some(Vec::new());
    }
    for start in 0..singular.len() {
        let Some(Some(prefix)) = best.get(start).cloned() else {
            continue;
        };
        let rest = singular.get(start..).unwrap_or_default();
        let words = KIND_WORDS
            .iter()
            .copied()
            .chain(KIND_ACRONYMS.iter().map(|(w, _)| *w));
        for word in words {
            if rest.starts_with(word) {
                let end = start + word.len();
                let mut spelled = prefix.clone();
                spelled.push(word);
                let better = best
                    .get(end)
                    .is_none_or(|b| b.as_ref().is_none_or(|b| b.len() > spelled.len()));
                if better {
                    if let Some(slot) = best.get_mut(end) {
                        *slot = Some(spelled);
                    }
                }
            }
        }
    }
    let words = best.last()?.as_ref()?;
    // A single word is what the plain guess gives already.
    (words.len() > 1).then(|| {
        words
            .iter()
            .map(|w| match KIND_ACRONYMS.iter().find(|(a, _)| a == w) {
                Some((_, upper)) => (*upper).to_string(),
                None => {
                    let mut chars = w.chars();
                    chars
                        .next()
                        .map(|f| f.to_uppercase().chain(chars).collect())
                        .unwrap_or_default()
                }
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_of_plurals() {
        let cases = [
            ("core_resource", "", "pods", "Pod", false),
            (
                "group_resource",
                "networking.k8s.io",
                "networkpolicies",
                "NetworkPolicy",
                false,
            ),
            (
                "acronym_custom_resource",
                "policy.linkerd.io",
                "httproutes",
                "HTTPRoute",
                false,
            ),
            (
                "multi_word_custom_resource",
                "security.istio.io",
                "authorizationpolicies",
                "AuthorizationPolicy",
                false,
            ),
            (
                "guessed_custom_resource",
                "policy.linkerd.io",
                "servers",
                "Server",
                true,
            ),
            ("guessed_ies", "example.com", "proxies", "Proxy", true),
            (
                "known_vertical_pod_autoscalers",
                "autoscaling.k8s.io",
                "verticalpodautoscalers",
                "VerticalPodAutoscaler",
                false,
            ),
            (
                "guessed_from_words",
                "keda.sh",
                "scaledobjects",
                "ScaledObject",
                true,
            ),
            (
                "guessed_with_an_acronym",
                "example.com",
                "tlsroutepolicies",
                "TLSRoutePolicy",
                true,
            ),
            (
                "unknown_words_keep_the_plain_guess",
                "example.com",
                "frobnicators",
                "Frobnicator",
                true,
            ),
            ("guessed_es", "example.com", "boxes", "Box", true),
            (
                "capitalised_plural",
                "route.openshift.io",
                "Routes",
                "Route",
                true,
            ),
            // A plural of a built-in group must be a built-in resource.
            (
                "unknown_builtin_plural",
                "apps",
                "httproutes",
                "HTTPRoute",
                true,
            ),
        ];
        for (name, group, plural, kind, guessed) in cases {
            assert_eq!(
                kind_of(group, plural),
                KindOf {
                    kind: kind.into(),
                    guessed
                },
                "{name}"
            );
        }
    }

    #[test]
    fn builtin_kinds_of_plurals() {
        assert_eq!(builtin_kind("deployments"), Some("Deployment"));
        assert_eq!(builtin_kind("apiservices"), Some("APIService"));
        assert_eq!(builtin_kind("httproutes"), None);
    }

    #[test]
    fn plurals_of_builtin_kinds() {
        assert_eq!(plural_of("apps", "Deployment"), Some("deployments"));
        assert_eq!(plural_of("", "Endpoints"), Some("endpoints"));
        assert_eq!(plural_of("example.com", "Widget"), None);
    }

    #[test]
    fn groups_and_custom_plurals_of_kinds() {
        assert_eq!(groups_of("Deployment").collect::<Vec<_>>(), ["apps"]);
        assert_eq!(
            groups_of("Event").collect::<Vec<_>>(),
            ["", "events.k8s.io"]
        );
        assert_eq!(groups_of("Widget").count(), 0);
        assert_eq!(custom_plural_of("HTTPRoute"), Some("httproutes"));
        assert_eq!(custom_plural_of("Deployment"), None);
    }

    #[test]
    fn scopes_of_builtin_kinds() {
        assert_eq!(is_namespaced("", "ConfigMap"), Some(true));
        assert_eq!(is_namespaced("storage.k8s.io", "StorageClass"), Some(false));
        assert_eq!(is_namespaced("example.com", "Widget"), None);
    }
}
