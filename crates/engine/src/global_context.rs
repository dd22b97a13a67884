//! Kyverno's global context (`GlobalContextEntry`, read by `globalReference`
//! context entries). Kyverno keeps each entry's data in a cache it refreshes
//! in the background; a fresh Kubewarden instance has no cache, so the
//! entry's data is read through the host capabilities when a reference
//! needs it (once per request: the cluster answers are cached).
//!
//! The entry itself comes from the settings' `globalContextEntries`, which
//! answer for the cluster ([`seed`]), else from the cluster
//! (`kyverno.io/v2beta1` `GlobalContextEntry`).

use serde_json::Value;

use crate::api_call::ApiPath;
use crate::cluster::{Cached, Lookup};
use crate::diagnostics::Diagnostics;
use crate::jmespath::Query;
use crate::json::Json;
use crate::settings::{parse_global_context_entry, GlobalContextEntry, GlobalSource};

/// Kyverno's storage version first; clusters with an older Kyverno serve
/// only `v2alpha1`.
const API_VERSIONS: [&str; 2] = ["kyverno.io/v2beta1", "kyverno.io/v2alpha1"];
const KIND: &str = "GlobalContextEntry";

fn lookup(api_version: &str, name: &str) -> Lookup {
    Lookup::Get {
        api_version: api_version.into(),
        kind: KIND.into(),
        namespace: None,
        name: name.into(),
    }
}

/// Lets the settings' entries answer for the cluster's.
pub fn seed(cluster: &Cached<'_>, entries: &[(String, Value)]) {
    let [newer, _] = API_VERSIONS;
    for (name, manifest) in entries {
        cluster.seed(lookup(newer, name), manifest.clone());
    }
}

/// The entry `name`, read at the storage version, else at the older one.
fn fetch(name: &str, cluster: &Cached<'_>) -> Result<std::rc::Rc<Value>, String> {
    let [newer, older] = API_VERSIONS;
    cluster
        .fetch(&lookup(newer, name))
        .or_else(|e| cluster.fetch(&lookup(older, name)).map_err(|_| e))
}

/// The data `reference` (`entry` or `entry.projection`, as Kyverno splits
/// it at dots) names, as Kyverno's store answers it.
pub fn data(reference: &str, cluster: &Cached<'_>) -> Result<Value, String> {
    let mut names = reference.split('.');
    let name = names.next().unwrap_or_default();
    let projection = names.next().unwrap_or_default();
    if let Some(held) = cluster.global_context(name) {
        return held.and_then(|value| held_data(value, projection));
    }
    let manifest =
        fetch(name, cluster).map_err(|e| format!("failed to fetch entry key={name}: {e}"))?;
    let mut diags = Diagnostics::quiet();
    let entry = parse_global_context_entry(&Json::borrow(&manifest), "", &mut diags)
        .filter(|_| diags.is_empty())
        .ok_or_else(|| {
            format!(
                "global context entry `{name}` is invalid: {}",
                diags.summary()
            )
        })?;
    let data = read(&entry, cluster)?;
    if projection.is_empty() {
        return match (&entry.source, data) {
            (GlobalSource::ApiCall { .. }, Value::Null) => Err("no data available".into()),
            (_, data) => Ok(data),
        };
    }
    let Some((_, jmes_path)) = entry.projections.iter().find(|(p, _)| p == projection) else {
        return Err(format!("projection {projection:?} not found"));
    };
    let query = Query::compile(jmes_path).map_err(|e| {
        format!("failed to parse jmespath query for projection {projection:?}: {e}")
    })?;
    let projected = match (query.search(&data), &entry.source) {
        (Ok(projected), _) => projected.into_owned(),
        // Kyverno's resource entries drop a projection that fails; its API
        // entries keep the error.
        (Err(_), GlobalSource::KubernetesResource { .. }) => {
            return Err(format!("projection {projection:?} not found"))
        }
        (Err(e), GlobalSource::ApiCall { .. }) => {
            return Err(format!("failed to apply projection {projection:?}: {e}"))
        }
    };
    match (&entry.source, projected) {
        // Kyverno's API entries keep no null data.
        (GlobalSource::ApiCall { .. }, Value::Null) => Err("no data available".into()),
        (_, projected) => Ok(projected),
    }
}

/// Data a store holds for an entry, read as Kyverno's CLI reads its mocks:
/// the value itself, or one field of it for a projection.
fn held_data(value: Value, projection: &str) -> Result<Value, String> {
    if projection.is_empty() {
        return Ok(value);
    }
    match value {
        Value::Object(mut fields) => fields
            .remove(projection)
            .ok_or_else(|| format!("global context mock: projection {projection:?} not found")),
        _ => Err(format!(
            "global context mock: projection {projection:?} requested but value is not an object"
        )),
    }
}

/// The entry's data: the objects of its resource, or its API call's answer.
fn read(entry: &GlobalContextEntry, cluster: &Cached<'_>) -> Result<Value, String> {
    match &entry.source {
        GlobalSource::KubernetesResource {
            group,
            version,
            resource,
            namespace,
        } => {
            let path = ApiPath {
                group: group.clone(),
                version: version.clone(),
                namespace: namespace.clone(),
                plural: resource.clone(),
                name: None,
                label_selector: None,
                field_selector: None,
            };
            let list = path.fetch(cluster).map_err(|e| {
                format!(
                    "failed to list {resource} for global context entry {}: {e}",
                    entry.name
                )
            })?;
            Ok(list
                .get("items")
                .cloned()
                .unwrap_or(Value::Array(Vec::new())))
        }
        GlobalSource::ApiCall { url_path } => ApiPath::parse(url_path)
            .and_then(|path| path.fetch(cluster))
            .map(|answer| answer.as_ref().clone())
            .map_err(|e| format!("failed to GET resource with raw url: {url_path}: {e}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::Cluster;
    use serde_json::json;

    struct Objects(Vec<Value>);

    impl Cluster for Objects {
        fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
            match lookup {
                // Served at the version each object was written in only, to
                // show the older version is read too.
                Lookup::Get {
                    api_version,
                    kind,
                    name,
                    ..
                } => self
                    .0
                    .iter()
                    .find(|o| {
                        o["apiVersion"] == json!(api_version)
                            && o["kind"] == json!(kind)
                            && o["metadata"]["name"] == json!(name)
                    })
                    .cloned()
                    .ok_or_else(|| format!("{kind} {name} not found")),
                Lookup::List {
                    kind, namespace, ..
                } => Ok(json!({"kind": format!("{kind}List"), "items": self.0.iter()
                    .filter(|o| o["kind"] == json!(kind)
                        && namespace.as_ref().is_none_or(|ns| o["metadata"]["namespace"] == json!(ns)))
                    .cloned().collect::<Vec<_>>()})),
                other => Err(format!("cannot read {}", other.describe())),
            }
        }
    }

    fn deployment(name: &str, namespace: &str, replicas: u64) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"replicas": replicas}})
    }

    fn entry(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "kyverno.io/v2alpha1", "kind": "GlobalContextEntry",
            "metadata": {"name": name}, "spec": spec})
    }

    #[test]
    fn references_read_their_entrys_data_as_kyvernos_store_answers() {
        let deployments = entry(
            "deployments",
            json!({"kubernetesResource": {"group": "apps", "version": "v1", "resource": "deployments", "namespace": "prod"},
                "projections": [{"name": "replicas", "jmesPath": "[].spec.replicas"},
                    {"name": "failing", "jmesPath": "abs(@)"}]}),
        );
        let settings_entry = entry(
            "from-settings",
            json!({"kubernetesResource": {"version": "v1", "resource": "namespaces"}}),
        );
        let prod_ns = entry(
            "prod-ns",
            json!({"apiCall": {"urlPath": "/api/v1/namespaces/prod", "refreshInterval": "10s"},
                "projections": [{"name": "missing", "jmesPath": "`null`"},
                    {"name": "failing", "jmesPath": "metadata.labels.none"}]}),
        );
        let mut newer = entry(
            "newer",
            json!({"kubernetesResource": {"group": "apps", "version": "v1", "resource": "deployments"},
                "projections": [{"name": "replicas", "jmesPath": "[].spec.replicas"}]}),
        );
        newer["apiVersion"] = json!("kyverno.io/v2beta1");
        let cluster = Objects(vec![
            newer,
            deployments,
            prod_ns,
            deployment("a", "prod", 2),
            deployment("b", "prod", 3),
            deployment("c", "dev", 5),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}}),
        ]);
        let cached = Cached::new(&cluster);
        seed(&cached, &[("from-settings".into(), settings_entry)]);
        let cases: Vec<(&str, &str, Result<Value, String>)> = vec![
            (
                "the_objects_of_the_resource_in_its_namespace",
                "deployments",
                Ok(json!([
                    deployment("a", "prod", 2),
                    deployment("b", "prod", 3)
                ])),
            ),
            ("a_projection", "deployments.replicas", Ok(json!([2, 3]))),
            (
                "an_unknown_projection",
                "deployments.other",
                Err("projection \"other\" not found".into()),
            ),
            (
                "an_entry_from_the_settings",
                "from-settings",
                Ok(
                    json!([{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}}]),
                ),
            ),
            (
                "an_api_call_answer",
                "prod-ns",
                Ok(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "prod"}})),
            ),
            (
                "a_null_api_projection_is_no_data",
                "prod-ns.missing",
                Err("no data available".into()),
            ),
            (
                "a_failing_api_projection_keeps_its_error",
                "prod-ns.failing",
                Err(
                    "failed to apply projection \"failing\": Unknown key \"labels\" in path".into(),
                ),
            ),
            (
                "a_failing_resource_projection_is_dropped",
                "deployments.failing",
                Err("projection \"failing\" not found".into()),
            ),
            (
                "an_unknown_entry",
                "nothing",
                Err(
                    "failed to fetch entry key=nothing: GlobalContextEntry nothing not found"
                        .into(),
                ),
            ),
            (
                "an_entry_of_the_newer_version",
                "newer.replicas",
                Ok(json!([2, 3, 5])),
            ),
        ];
        for (name, reference, want) in cases {
            assert_eq!(data(reference, &cached), want, "{name}");
        }
    }

    /// A store holding data for an entry (Kyverno's CLI mocks).
    struct Held(Value);

    impl Cluster for Held {
        fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
            Err(format!("cannot read {}", lookup.describe()))
        }

        fn global_context(&self, name: &str) -> Option<Result<Value, String>> {
            (name == "held").then(|| Ok(self.0.clone()))
        }
    }

    #[test]
    fn held_data_answers_before_the_cluster() {
        let object = Held(json!({"items": [1, 2]}));
        let list = Held(json!([1, 2]));
        let cases = [
            ("the_whole_value", &object, "held", Ok(json!({"items": [1, 2]}))),
            ("a_projection", &object, "held.items", Ok(json!([1, 2]))),
            (
                "a_missing_projection",
                &object,
                "held.other",
                Err("global context mock: projection \"other\" not found".to_string()),
            ),
            (
                "a_projection_of_a_list",
                &list,
                "held.items",
                Err("global context mock: projection \"items\" requested but value is not an object".to_string()),
            ),
            (
                "another_entry_is_read_from_the_cluster",
                &object,
                "other",
                Err("failed to fetch entry key=other: cannot read kyverno.io/v2beta1 GlobalContextEntry other".to_string()),
            ),
        ];
        for (name, cluster, reference, want) in cases {
            assert_eq!(data(reference, &Cached::new(cluster)), want, "{name}");
        }
    }
}
