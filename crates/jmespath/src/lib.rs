//! JMESPath as Kyverno runs it: `parser` builds the tree (`ast`) once
//! (functions resolved, arity checked; its errors held equal to the
//! `jmespath` crate's), `query` keeps it, and `eval` interprets it with the
//! departures of Kyverno's go-jmespath fork:
//! - a field missing from an existing object is an error
//!   (`Unknown key "x" in path`), which `||`, comparisons, function
//!   arguments, pipes, projections and multi-selects turn into `null`;
//! - Kyverno's functions (`kyverno` module) extend and override the
//!   standard ones (`functions` module).
//!
//! `images` (image references as Kyverno parses them) and `wildcard`
//! (Kyverno's `*`/`?` matching) serve these functions and the engine alike.
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

mod arguments;
mod arithmetic;
mod ast;
mod compare;
mod error;
mod eval;
mod functions;
pub mod go;
pub mod images;
pub mod kyverno;
mod parser;
mod query;
mod time;
pub mod types;
pub mod wildcard;
pub mod work;

pub use ast::Name;
pub use compare::{equal, truthy};
pub use error::{CompileError, SearchError, MAX_RESULT_BYTES};
pub use eval::Scope;
pub use query::Query;

#[cfg(test)]
mod tests;
