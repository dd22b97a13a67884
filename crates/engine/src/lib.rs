//! Kyverno `validate` rules as a library: settings → policy (compile) →
//! engine (evaluate) → verdict. It runs in the Kubewarden module and
//! natively (tests, benchmarks, the `kyverno-validate` CLI).
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

pub mod anchor;
pub mod api_call;
pub mod autogen;
pub mod cel;
pub mod cluster;
pub mod conditions;
pub mod context;
pub mod context_entries;
pub mod diagnostics;
pub mod engine;
pub mod exceptions;
pub mod foreach;
pub mod global_context;
pub mod image_data;
pub mod json;
pub mod manifests;
pub mod match_conditions;
pub mod matching;
pub mod operator;
pub mod pattern;
pub mod pattern_body;
pub mod policy;
pub mod pss;
pub mod references;
pub mod request;
pub mod resources;
pub mod results;
pub mod roles;
pub mod rule;
pub mod scan;
pub mod settings;
pub mod variables;
pub mod verdict;
pub mod webhook_rules;

// The JMESPath dialect and units live in crates of their own; the engine
// reads them under these paths.
pub use kube_units::{duration, quantity};
pub use kyverno_jmespath as jmespath;
pub use kyverno_jmespath::{images, wildcard};
