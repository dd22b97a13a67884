//! kwctl's host-capability sessions (`--replay-host-capabilities-interactions`):
//! the recorded calls a policy makes and the host's answers, replayed in
//! order and matched exactly, as kwctl replays them. The same files serve
//! `e2e.bats`, the native fixtures and the wasm host.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::path::Path;
use std::sync::Mutex;

use serde::Deserialize;
use serde_json::{Map, Value};

#[derive(Debug, Deserialize)]
struct Exchange {
    request: String,
    response: Response,
}

#[derive(Debug, Deserialize)]
#[serde(tag = "type")]
enum Response {
    Success { payload: String },
    Error { message: String },
}

/// A session being replayed.
pub struct Session {
    name: String,
    exchanges: Mutex<VecDeque<Exchange>>,
}

impl Session {
    pub fn load(path: &Path) -> Self {
        let text =
            std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        let exchanges: Vec<Exchange> =
            serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        Self {
            name: path.display().to_string(),
            exchanges: Mutex::new(exchanges.into()),
        }
    }

    /// Answers one host call (`namespace` under the `kubewarden` binding)
    /// with the next recorded exchange, which must be this very call.
    pub fn answer(
        &self,
        namespace: &str,
        operation: &str,
        payload: &[u8],
    ) -> Result<Vec<u8>, String> {
        let mut exchanges = self.exchanges.lock().map_err(|e| e.to_string())?;
        let exchange = exchanges
            .pop_front()
            .ok_or_else(|| format!("{}: the list of recorded responses is empty", self.name))?;
        let (tag, fields) = recorded_request(&exchange.request);
        let (want_namespace, want_operation) = match tag.as_str() {
            "KubernetesGetResource" => ("kubernetes", "get_resource"),
            "KubernetesListResourceAll" => ("kubernetes", "list_resources_all"),
            "KubernetesListResourceNamespace" => ("kubernetes", "list_resources_by_namespace"),
            "OciManifestDigest" => ("oci", "v1/manifest_digest"),
            "OciManifest" => ("oci", "v1/oci_manifest"),
            "OciManifestAndConfig" => ("oci", "v1/oci_manifest_config"),
            "KubernetesCanI" => ("kubernetes", "can_i"),
            other => panic!("{}: unknown request type {other}", self.name),
        };
        let sent: Value = serde_json::from_slice(payload).map_err(|e| e.to_string())?;
        let sent = match sent {
            // OCI calls send the image reference alone.
            Value::String(image) => Map::from_iter([("image".to_string(), Value::String(image))]),
            // kwctl records `can_i`'s `subject_access_review` as `request`.
            Value::Object(mut map) if tag == "KubernetesCanI" => {
                if let Some(review) = map.remove("subject_access_review") {
                    map.insert("request".to_string(), review);
                }
                map
            }
            Value::Object(map) => map,
            other => return Err(format!("unexpected payload {other}")),
        };
        if (namespace, operation) != (want_namespace, want_operation)
            || without_nulls(&sent) != without_nulls(&fields)
        {
            return Err(format!(
                "{}: unexpected request: expected {tag} {fields:?}, got {namespace}/{operation} {sent:?}",
                self.name
            ));
        }
        match exchange.response {
            Response::Success { payload } => Ok(payload.into_bytes()),
            Response::Error { message } => Err(message),
        }
    }

    /// Whether every recorded call was made.
    pub fn finished(&self) -> bool {
        self.exchanges.lock().map(|e| e.is_empty()).unwrap_or(false)
    }
}

/// `!Tag\nfield: value…` → the tag and the fields.
fn recorded_request(text: &str) -> (String, Map<String, Value>) {
    let (tag_line, rest) = text.split_once('\n').unwrap_or((text, ""));
    let tag = tag_line.trim().trim_start_matches('!').to_string();
    let fields: Value = serde_yaml::from_str(rest).expect("a recorded request's fields");
    match fields {
        Value::Object(map) => (tag, map),
        _ => (tag, Map::new()),
    }
}

fn without_nulls(map: &Map<String, Value>) -> Map<String, Value> {
    map.iter()
        .filter(|(_, v)| !v.is_null())
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}
