//! Kubernetes and Go units shared by the policy engine and its CEL
//! interpreter: resource quantities (`500m`, `1Gi`) and Go durations
//! (`1h30m`), blang semantic versions, Go's string quoting for the
//! error messages that repeat Go's, and Go's regex syntax for `regex-lite`.
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

pub mod duration;
pub mod quantity;
pub mod quote;
pub mod re2;
pub mod semver;
pub mod small_regex;
