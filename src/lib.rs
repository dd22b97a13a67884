//! kyverno-validate-policy: a Kubewarden policy that enforces Kyverno
//! `validate` rules. This crate is only the waPC glue and the Kubewarden
//! response (`admission`); the pipeline settings → policy (compile) →
//! engine (evaluate) → verdict lives in `kyverno-engine`.
#![deny(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

pub mod admission;
#[cfg(any(target_arch = "wasm32", test))]
mod alloc;
#[cfg(any(target_arch = "wasm32", test))]
mod memcmp;

#[cfg(target_arch = "wasm32")]
#[global_allocator]
static ALLOCATOR: alloc::SizeClasses = alloc::SizeClasses::new();

pub use kyverno_engine::*;

use wapc_guest::{register_function, CallResult};

// waPC looks the entry point up by its exact symbol name.
#[allow(unsafe_code)]
#[unsafe(no_mangle)]
pub extern "C" fn wapc_init() {
    register_function("validate", validate);
    register_function("validate_settings", validate_settings);
    register_function(
        "protocol_version",
        kubewarden_policy_sdk::protocol_version_guest,
    );
}

fn validate(payload: &[u8]) -> CallResult {
    Ok(serde_json::to_vec(&admission::validate_with(
        payload,
        &HostCluster,
    ))?)
}

/// Kubewarden's context-aware host capabilities, called with their JSON
/// request shapes and read as JSON (any kind, custom resources too, and no
/// k8s-openapi in the module). The host answers only for the resources the
/// policy's `contextAwareResources` list.
struct HostCluster;

impl cluster::Cluster for HostCluster {
    fn fetch(&self, lookup: &cluster::Lookup) -> Result<serde_json::Value, String> {
        let (namespace, operation, request) = lookup.host_call();
        let payload = serde_json::to_vec(&request).map_err(|e| e.to_string())?;
        let answer = wapc_guest::host_call("kubewarden", namespace, operation, &payload)
            .map_err(|e| format!("cannot read {}: {e}", lookup.describe()))?;
        // Lists of a namespace's objects can be large: their objects built
        // in bulk, as the request's are.
        serde_json::from_slice(&answer)
            .map(|json::BulkValue(value)| value)
            .map_err(|e| {
                format!(
                    "cannot read {}: the host's answer is not JSON: {e}",
                    lookup.describe()
                )
            })
    }
}

fn validate_settings(payload: &[u8]) -> CallResult {
    Ok(serde_json::to_vec(&admission::validate_settings(payload))?)
}
