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
mod error;
mod eval;
mod format;
mod functions;
mod ip;
mod lexer;
mod lists;
mod ops;
mod optional;
mod parser;
mod quantity;
mod regex;
mod semver;
mod stdlib;
mod strings;
mod time;
mod url;
mod value;

pub use activation::Activation;
pub use error::{EvalError, SyntaxError};
pub use ip::Cidr;
pub use url::Url;
pub use value::{Bin, Key, Map, Str, Timestamp, Type, Value};

/// Deepest nesting a program may have (parentheses, calls, operators).
pub const MAX_DEPTH: usize = parser::MAX_DEPTH;

/// A compiled expression: immutable, cheap to keep and to evaluate many
/// times.
#[derive(Debug, Clone)]
pub struct Program {
    ast: ast::Ast,
}

/// Parses `text`, expands macros and resolves every function it calls.
pub fn compile(text: &str) -> Result<Program, SyntaxError> {
    Ok(Program {
        ast: parser::parse(text)?,
    })
}

impl Program {
    /// Compiles the program's literal regex patterns (of `matches`, `find`
    /// and `findAll`), as Kubernetes' CEL environment does when it compiles
    /// an expression: the first that does not compile is an error. Not
    /// part of [`compile`], so that a request builds only the regexes it
    /// uses; checking a policy's settings runs it.
    pub fn check_patterns(&self) -> Result<(), SyntaxError> {
        for pattern in &self.ast.patterns {
            if !regex::is_valid(self.ast.str(pattern.text)) {
                let source = self.ast.text.get(..self.ast.source_len).unwrap_or_default();
                return Err(SyntaxError::check(
                    source,
                    pattern.at as usize,
                    format!("invalid {} argument", pattern.func.name()),
                ));
            }
        }
        Ok(())
    }

    /// Evaluates the program against `activation`, charging each step to
    /// `budget`.
    pub fn evaluate<'a>(
        &'a self,
        activation: &Activation<'a>,
        budget: &mut Budget,
    ) -> Result<Value<'a>, EvalError> {
        eval::evaluate(&self.ast, activation, budget, 0, usize::MAX)
    }
}

/// The evaluation cost allowed, in steps: a node visited, an iteration of
/// a comprehension, or a slice of the data a function goes through (about
/// one per 10 bytes of a string, one per list element).
#[derive(Debug, Clone)]
pub struct Budget {
    remaining: u64,
}

impl Budget {
    /// Kubernetes' per-expression runtime cost limit.
    pub const DEFAULT_LIMIT: u64 = 1_000_000;

    pub fn new(limit: u64) -> Self {
        Self { remaining: limit }
    }

    /// What is left of the budget.
    pub fn remaining(&self) -> u64 {
        self.remaining
    }

    pub(crate) fn charge(&mut self, cost: u64) -> Result<(), EvalError> {
        match self.remaining.checked_sub(cost) {
            Some(left) => {
                self.remaining = left;
                Ok(())
            }
            None => {
                self.remaining = 0;
                Err(EvalError::CostBudgetExceeded)
            }
        }
    }

    /// Work proportional to `bytes` of text.
    pub(crate) fn charge_len(&mut self, bytes: usize) -> Result<(), EvalError> {
        self.charge(u64::try_from(bytes / 10).unwrap_or(u64::MAX))
    }

    /// Work proportional to `items` elements.
    pub(crate) fn charge_items(&mut self, items: usize) -> Result<(), EvalError> {
        self.charge(u64::try_from(items).unwrap_or(u64::MAX))
    }
}

impl Default for Budget {
    fn default() -> Self {
        Self::new(Self::DEFAULT_LIMIT)
    }
}

#[cfg(test)]
mod test_support {
    use super::*;

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
