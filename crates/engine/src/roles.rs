//! The requester's Roles and ClusterRoles, as Kyverno's `GetRoleRef`
//! derives them: every RoleBinding and ClusterRoleBinding whose subjects
//! name the user, one of the user's groups, or the user's service account.
//! They feed `roles` / `clusterRoles` in match and exclude, and the
//! `request.roles` / `request.clusterRoles` variables.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::cluster::{Cached, Lookup};

/// The length of the shorter of the two names [`named_in`] finds.
pub const SHORTEST_NAME: usize = "request.roles".len();

/// Whether `text` names `request.roles` or `request.clusterRoles`, the
/// variables Kyverno fills from the requester's bindings. One pass over the
/// bytes, found through `request`'s `q`, a rare byte in a policy: a two-way
/// search for each whole name costs more in wasm.
pub fn named_in(text: &[u8]) -> bool {
    memchr::memchr_iter(b'q', text).any(|q| {
        let rest = q
            .checked_sub(2)
            .and_then(|at| text.get(at..))
            .unwrap_or_default();
        rest.starts_with(b"request.roles") || rest.starts_with(b"request.clusterRoles")
    })
}

const RBAC: &str = "rbac.authorization.k8s.io/v1";

/// Roles as `namespace:name`, ClusterRoles by name; sorted, no duplicates.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Roles {
    pub roles: Vec<String>,
    pub cluster_roles: Vec<String>,
}

/// Who made the request, as `request.userInfo` says, and where.
pub struct User<'a> {
    pub username: &'a str,
    pub groups: Vec<&'a str>,
    /// The request's namespace: a RoleBinding grants its ClusterRole only
    /// there (a Role, as `namespace:name`, everywhere).
    pub namespace: &'a str,
}

/// Reads the bindings through the cluster and keeps those naming `user`.
/// A binding list that cannot be read is an error, as in Kyverno.
pub fn resolve(user: &User<'_>, cluster: &Cached<'_>) -> Result<Roles, String> {
    let role_bindings = cluster
        .fetch(&Lookup::list_all(RBAC, "RoleBinding"))
        .map_err(|e| format!("failed to list rolebindings: {e}"))?;
    let cluster_role_bindings = cluster
        .fetch(&Lookup::list_all(RBAC, "ClusterRoleBinding"))
        .map_err(|e| format!("failed to list clusterrolebindings: {e}"))?;
    Ok(from_bindings(
        user,
        items(&role_bindings),
        items(&cluster_role_bindings),
    ))
}

fn items(list: &Value) -> &[Value] {
    list.get("items")
        .and_then(Value::as_array)
        .map_or(&[], Vec::as_slice)
}

/// The roles `user` holds through these bindings.
pub fn from_bindings(
    user: &User<'_>,
    role_bindings: &[Value],
    cluster_role_bindings: &[Value],
) -> Roles {
    let mut roles = BTreeSet::new();
    let mut cluster_roles = BTreeSet::new();
    for binding in role_bindings {
        let namespace = binding
            .pointer("/metadata/namespace")
            .and_then(Value::as_str)
            .unwrap_or("");
        if !names_user(binding, user, namespace) {
            continue;
        }
        match role_ref(binding) {
            ("Role", name) => {
                roles.insert(format!("{namespace}:{name}"));
            }
            ("ClusterRole", name) if namespace == user.namespace => {
                cluster_roles.insert(name.to_string());
            }
            _ => {}
        }
    }
    for binding in cluster_role_bindings {
        if names_user(binding, user, "") {
            if let ("ClusterRole", name) = role_ref(binding) {
                cluster_roles.insert(name.to_string());
            }
        }
    }
    Roles {
        roles: roles.into_iter().collect(),
        cluster_roles: cluster_roles.into_iter().collect(),
    }
}

fn role_ref(binding: &Value) -> (&str, &str) {
    let field = |key: &str| {
        binding
            .get("roleRef")
            .and_then(|r| r.get(key))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    (field("kind"), field("name"))
}

/// Kyverno's `matchBindingSubjects`: a service account subject without a
/// namespace takes the binding's.
fn names_user(binding: &Value, user: &User<'_>, binding_namespace: &str) -> bool {
    let subjects = binding
        .get("subjects")
        .and_then(Value::as_array)
        .map_or(&[][..], Vec::as_slice);
    subjects.iter().any(|subject| {
        let field = |key: &str| subject.get(key).and_then(Value::as_str).unwrap_or("");
        let name = field("name");
        match field("kind") {
            "ServiceAccount" => {
                let namespace = match field("namespace") {
                    "" => binding_namespace,
                    ns => ns,
                };
                !namespace.is_empty()
                    && user
                        .username
                        .strip_prefix("system:serviceaccount:")
                        .and_then(|rest| rest.strip_prefix(namespace))
                        .and_then(|rest| rest.strip_prefix(':'))
                        == Some(name)
            }
            "Group" => user.groups.contains(&name),
            "User" => user.username == name,
            _ => false,
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Cluster;
    use serde_json::json;

    fn binding(namespace: Option<&str>, role: (&str, &str), subjects: Value) -> Value {
        let mut b = json!({"metadata": {"name": "b"}, "roleRef": {"kind": role.0, "name": role.1}, "subjects": subjects});
        if let Some(ns) = namespace {
            b["metadata"]["namespace"] = json!(ns);
        }
        b
    }

    #[test]
    fn named_in_finds_either_name() {
        let cases = [
            ("roles", "{{ request.roles }}", true),
            ("cluster_roles", "x request.clusterRoles[0]", true),
            ("at_the_end", "request.roles", true),
            (
                "other_request_fields",
                "request.object request.userInfo",
                false,
            ),
            ("roles_elsewhere", "spec.roles clusterRoles", false),
            ("cut_short", "request.role", false),
            ("empty", "", false),
        ];
        for (name, text, want) in cases {
            assert_eq!(named_in(text.as_bytes()), want, "{name}");
        }
    }

    #[test]
    fn bindings_name_the_user_by_user_group_or_service_account() {
        let user = User {
            username: "system:serviceaccount:ci:deployer",
            groups: vec!["system:serviceaccounts", "devs"],
            namespace: "prod",
        };
        let role_bindings = [
            binding(
                Some("ci"),
                ("Role", "pusher"),
                json!([{"kind": "ServiceAccount", "name": "deployer"}]),
            ),
            binding(
                Some("prod"),
                ("ClusterRole", "view"),
                json!([{"kind": "Group", "name": "devs"}]),
            ),
            // Another namespace's service account of the same name.
            binding(
                Some("prod"),
                ("Role", "admin"),
                json!([{"kind": "ServiceAccount", "name": "deployer"}]),
            ),
            binding(
                Some("prod"),
                ("Role", "reader"),
                json!([{"kind": "User", "name": "alice"}]),
            ),
        ];
        let cluster_role_bindings = [
            binding(
                None,
                ("ClusterRole", "edit"),
                json!([{"kind": "ServiceAccount", "name": "deployer", "namespace": "ci"}]),
            ),
            binding(
                None,
                ("ClusterRole", "view"),
                json!([{"kind": "Group", "name": "devs"}]),
            ),
            binding(
                None,
                ("ClusterRole", "cluster-admin"),
                json!([{"kind": "Group", "name": "system:masters"}]),
            ),
            // A ClusterRoleBinding's service account needs its namespace.
            binding(
                None,
                ("ClusterRole", "nodes"),
                json!([{"kind": "ServiceAccount", "name": "deployer"}]),
            ),
        ];
        assert_eq!(
            from_bindings(&user, &role_bindings, &cluster_role_bindings),
            Roles {
                roles: vec!["ci:pusher".into()],
                cluster_roles: vec!["edit".into(), "view".into()],
            }
        );
    }

    /// Kyverno's `getRoleRefByRoleBindings`: a RoleBinding to a ClusterRole
    /// counts only for requests in the binding's namespace; one to a Role
    /// counts everywhere, named by its namespace.
    #[test]
    fn a_role_binding_grants_its_cluster_role_only_in_its_namespace() {
        let role_bindings = [
            binding(
                Some("prod"),
                ("ClusterRole", "view"),
                json!([{"kind": "User", "name": "alice"}]),
            ),
            binding(
                Some("prod"),
                ("Role", "reader"),
                json!([{"kind": "User", "name": "alice"}]),
            ),
        ];
        let cases = [
            ("in_the_binding_namespace", "prod", vec!["view".to_string()]),
            ("in_another_namespace", "ci", vec![]),
            ("cluster_scoped", "", vec![]),
        ];
        for (name, namespace, cluster_roles) in cases {
            let user = User {
                username: "alice",
                groups: vec![],
                namespace,
            };
            assert_eq!(
                from_bindings(&user, &role_bindings, &[]),
                Roles {
                    roles: vec!["prod:reader".into()],
                    cluster_roles,
                },
                "{name}"
            );
        }
    }

    struct Bindings;

    impl Cluster for Bindings {
        fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
            match lookup {
                Lookup::List { kind, .. } if kind == "RoleBinding" => Ok(json!({"items": []})),
                _ => Err("forbidden".into()),
            }
        }
    }

    #[test]
    fn an_unreadable_binding_list_is_an_error() {
        let user = User {
            username: "alice",
            groups: vec![],
            namespace: "",
        };
        assert_eq!(
            resolve(&user, &Cached::new(&Bindings)),
            Err("failed to list clusterrolebindings: forbidden".into())
        );
    }
}
