//! A small, fast CEL interpreter over `serde_json` values, with the CEL
//! libraries Kubernetes (ValidatingAdmissionPolicy) and Kyverno enable.
//!
//! Compiling is one pass of a hand-written parser that also expands macros
//! and resolves function names; evaluating borrows the JSON inputs and
//! allocates only for values it builds. Every step is charged to a
//! [`Budget`], and nesting is bounded, so no input can hang or overflow
//! the stack.
//!
//! ```
//! use kube_cel::{compile, Activation, Budget};
//! let object = serde_json::json!({"spec": {"replicas": 3}});
//! let program = compile("object.spec.replicas <= 5").unwrap();
//! let mut activation = Activation::new();
//! activation.bind_json("object", &object);
//! let result = program.evaluate(&activation, &mut Budget::default()).unwrap();
//! assert_eq!(result.as_bool(), Some(true));
//! ```
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

mod activation;
mod ast;
mod budget;
mod error;
mod eval;
mod format;
mod func;
mod homogeneous;
mod ip;
mod lexer;
mod library;
mod ops;
mod parser;
mod program;
mod quantity;
mod regex;
mod time;
mod url;
mod value;

pub use activation::Activation;
pub use budget::Budget;
pub use error::{EvalError, SyntaxError};
pub use ip::Cidr;
pub use program::{compile, Program};
pub use time::Timestamp;
pub use url::Url;
pub use value::{Bin, Key, Map, Str, Type, Value};

/// Deepest nesting a program may have (parentheses, calls, operators).
pub const MAX_DEPTH: usize = parser::MAX_DEPTH;

#[cfg(test)]
mod test_support {
    use super::*;

    /// Each case's expression compiles (`None`), or fails to compile with
    /// an error that contains the text given.
    pub(crate) fn assert_compiles(cases: &[(&str, &str, Option<&str>)]) {
        for (name, expr, want) in cases {
            let got = compile(expr).err().map(|e| e.one_line());
            match want {
                None => assert_eq!(got, None, "{name}"),
                Some(want) => {
                    let got = got.unwrap_or_default();
                    assert!(got.contains(want), "{name}: {got}");
                }
            }
        }
    }

    /// The result of `expr` (with `object` bound to `{}`), as text, or
    /// `error: …`.
    pub(crate) fn eval_str(expr: &str) -> String {
        eval_with(expr, &serde_json::json!({}))
    }

    pub(crate) fn eval_with(expr: &str, object: &serde_json::Value) -> String {
        let program = match compile(expr) {
            Ok(p) => p,
            Err(e) => return format!("compile error: {}", e.one_line()),
        };
        let mut activation = Activation::new();
        activation.bind_json("object", object);
        match program.evaluate(&activation, &mut Budget::default()) {
            Ok(v) => v.to_string(),
            Err(e) => format!("error: {e}"),
        }
    }
}

#[cfg(test)]
mod tests;
