//! A compiled expression: what [`compile`] makes of a text.

use crate::ast;
use crate::error::SyntaxError;
use crate::{parser, regex};

/// A compiled expression: immutable, cheap to keep and to evaluate many
/// times.
#[derive(Debug, Clone)]
pub struct Program {
    pub(crate) ast: ast::Ast,
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
}
