//! kyverno-validate-policy: a Kubewarden policy that enforces Kyverno
//! `validate` rules. This file is only the waPC glue; the pipeline is
//! settings → policy (compile) → engine (evaluate) → verdict → admission
//! (response).
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
pub mod anchor;
pub mod autogen;
pub mod cel;
pub mod conditions;
pub mod context;
pub mod context_entries;
pub mod diagnostics;
pub mod engine;
pub mod foreach;
pub mod images;
pub mod jmespath;
pub mod matching;
pub mod operator;
pub mod pattern;
pub mod pattern_body;
pub mod policy;
pub mod pss;
pub mod references;
pub mod request;
pub mod results;
pub mod rule;
pub mod settings;
pub mod variables;
pub mod verdict;
pub mod webhook_rules;
pub mod wildcard;

// Units shared with the CEL interpreter, under their old paths.
pub use kube_units::{duration, quantity};

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
    Ok(serde_json::to_vec(&admission::validate(payload))?)
}

fn validate_settings(payload: &[u8]) -> CallResult {
    Ok(serde_json::to_vec(&admission::validate_settings(payload))?)
}
