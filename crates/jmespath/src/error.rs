//! Why a query does not compile or a search fails, with the words the
//! errors say, and the limits they name.

use crate::ast::Name;
use crate::types::Signature;
use crate::work;

/// Deepest expression nesting accepted; bounds the parser's and the
/// interpreter's recursion.
pub(crate) const MAX_DEPTH: usize = 64;
/// Longest expression accepted, in bytes.
pub(crate) const MAX_LEN: usize = 64 * 1024;

/// Why an expression does not compile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompileError {
    #[error("{0}")]
    Syntax(String),
    #[error("unknown function: {0}()")]
    UnknownFunction(String),
    #[error("function {name}() takes {expected} argument{}, not {actual}", if *.expected == "1" { "" } else { "s" })]
    Arity {
        name: String,
        expected: String,
        actual: usize,
    },
    #[error("`&expression` is only an argument of sort_by, max_by, min_by and map")]
    MisplacedExpref,
    #[error(
        "the expression nests deeper than {MAX_DEPTH} levels or is longer than {MAX_LEN} bytes"
    )]
    TooDeep,
}

/// Why a search failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    /// go-jmespath's `NotFoundError`.
    #[error("Unknown key \"{0}\" in path")]
    NotFound(Name),
    #[error("{0}")]
    Function(String),
    #[error("invalid slice, step cannot be 0")]
    InvalidSlice,
    #[error("the query's results grow past {} MiB (the limit per query)", MAX_RESULT_BYTES >> 20)]
    TooLarge,
    #[error("{}", work::EXCEEDED)]
    TooMuchWork,
}

/// Most memory the values one search builds may take (estimated: a value
/// counts 32 bytes and its text; a 3 MiB object copied twice fits): copies
/// of the input, lists and maps built by the query. Without it
/// `@ | [@, @] | [@, @] | …` doubles the input at every pipe.
pub const MAX_RESULT_BYTES: usize = 16 << 20;

pub(crate) fn check_arity(signature: &Signature, actual: usize) -> Result<(), CompileError> {
    let declared = signature.args.len();
    let ok = if signature.variadic {
        actual >= declared
    } else {
        actual == declared
    };
    if ok {
        return Ok(());
    }
    Err(CompileError::Arity {
        name: signature.name.to_string(),
        expected: if signature.variadic {
            format!("at least {declared}")
        } else {
            declared.to_string()
        },
        actual,
    })
}

/// A parser error in words: what was expected, what was found, and where
/// (`syntax error at column 10: expected a value, found the end of the
/// expression (after `request.[`)`).
pub(crate) fn syntax_error(text: &str, offset: usize, reason: &str) -> String {
    // Lines and columns as the `jmespath` crate counts them: characters,
    // up to the offset taken as a character count.
    let (mut line, mut column) = (0usize, 0usize);
    for c in text.chars().take(offset) {
        if c == '\n' {
            line += 1;
            column = 0;
        } else {
            column += 1;
        }
    }
    let (expected, found) = reason.split_once(" -- found ").unwrap_or((reason, ""));
    let expected = match expected {
        "Unexpected nud token" => "a value".to_string(),
        other => backticked(other.strip_prefix("Expected ").unwrap_or(other)),
    };
    let found = token_words(found);
    // The parser counts columns from 0 on the error's line.
    let before: String = text
        .lines()
        .nth(line)
        .unwrap_or("")
        .chars()
        .take(column)
        .collect();
    let column = column + 1;
    let place = if before.trim().is_empty() {
        "at the start".to_string()
    } else {
        format!("after `{before}`")
    };
    format!("syntax error at column {column}: expected {expected}, found {found} ({place})")
}

/// `'}' or ','` → `` `}` or `,` ``.
fn backticked(text: &str) -> String {
    text.replace('\'', "`")
}

/// The parser's token (its `Debug` text) as a person would name it.
fn token_words(token: &str) -> String {
    let symbol = match token {
        "Eof" => return "the end of the expression".to_string(),
        "Dot" => ".",
        "Star" => "*",
        "Flatten" => "[]",
        "And" => "&&",
        "Or" => "||",
        "Pipe" => "|",
        "Filter" => "[?",
        "Lbracket" => "[",
        "Rbracket" => "]",
        "Comma" => ",",
        "Colon" => ":",
        "Not" => "!",
        "Ne" => "!=",
        "Eq" => "==",
        "Gt" => ">",
        "Gte" => ">=",
        "Lt" => "<",
        "Lte" => "<=",
        "At" => "@",
        "Ampersand" => "&",
        "Lparen" => "(",
        "Rparen" => ")",
        "Lbrace" => "{",
        "Rbrace" => "}",
        other => {
            let inner = |prefix: &str| {
                other
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.strip_suffix(')'))
                    .map(|v| v.trim_matches('"').to_string())
            };
            if let Some(name) = inner("Identifier(").or_else(|| inner("QuotedIdentifier(")) {
                return format!("the name `{name}`");
            }
            if let Some(number) = inner("Number(") {
                return format!("the number `{number}`");
            }
            if other.starts_with("Literal(") {
                return "a literal".to_string();
            }
            return format!("`{other}`");
        }
    };
    format!("`{symbol}`")
}
