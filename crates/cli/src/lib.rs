//! The `kyverno-validate` command line: Kyverno policies → Kubewarden
//! policy manifests for the kyverno-validate-policy module (`convert`),
//! and Kyverno CLI tests run on the same engine (`test`). A library so
//! that tests reach both without a process per policy.
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

pub mod convert;
pub mod input;
pub mod output;
pub mod test;
