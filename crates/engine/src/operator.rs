//! String patterns with Kyverno's operators: `>`, `<`, `>=`, `<=`, `!`,
//! ranges `a-b` / `a!-b`, alternatives `|` and conjunctions `&`, compared as
//! Go durations, Kubernetes quantities, or wildcard strings, in that order.
//!
//! A pattern is compiled once (operands parsed as duration and quantity up
//! front); matching a resource value parses only the value.

use std::borrow::Cow;

use serde_json::Value;

use crate::duration;
use crate::quantity::Quantity;
use crate::wildcard;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    Equal,
    NotEqual,
    More,
    Less,
    MoreEqual,
    LessEqual,
}

impl Op {
    fn holds(self, ordering: std::cmp::Ordering) -> bool {
        use std::cmp::Ordering::{Equal, Greater, Less};
        match self {
            Op::Equal => ordering == Equal,
            Op::NotEqual => ordering != Equal,
            Op::More => ordering == Greater,
            Op::Less => ordering == Less,
            Op::MoreEqual => ordering != Less,
            Op::LessEqual => ordering != Greater,
        }
    }
}

/// One side of a comparison, parsed every way Kyverno may read it; its
/// text is a span of the pattern's raw string (no copy per operand).
#[derive(Debug, Clone, PartialEq)]
pub struct Operand {
    start: usize,
    end: usize,
    /// Boxed, and only for an operand that reads as a number: most are
    /// plain text, and every pattern node is as large as an operand.
    numbers: Option<Box<Numbers>>,
}

/// An operand read as a Go duration and as a Kubernetes quantity.
#[derive(Debug, Clone, PartialEq)]
struct Numbers {
    duration: Option<i128>,
    quantity: Option<Quantity>,
}

impl Operand {
    /// `text` is a slice of `raw`.
    fn new(raw: &str, text: &str) -> Self {
        let start = (text.as_ptr() as usize).saturating_sub(raw.as_ptr() as usize);
        Self {
            start,
            end: start + text.len(),
            numbers: match (duration::parse(text), Quantity::parse(text)) {
                (None, None) => None,
                (duration, quantity) => Some(Box::new(Numbers { duration, quantity })),
            },
        }
    }

    fn text<'r>(&self, raw: &'r str) -> &'r str {
        raw.get(self.start..self.end).unwrap_or("")
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Term {
    Compare(Op, Operand),
    /// `a-b`: `>= a` and `<= b`.
    InRange(Operand, Operand),
    /// `a!-b`: `< a` or `> b`.
    NotInRange(Operand, Operand),
}

/// A compiled string pattern.
#[derive(Debug, Clone, PartialEq)]
pub struct StringPattern<'a> {
    /// Borrowed from the pattern's JSON.
    raw: &'a str,
    alternatives: Alternatives,
}

/// `|`-separated alternatives, each a list of `&`-joined terms; most
/// patterns are one term, kept without lists.
#[derive(Debug, Clone, PartialEq)]
enum Alternatives {
    One(Term),
    Many(Vec<Vec<Term>>),
}

impl<'a> StringPattern<'a> {
    pub fn compile(raw: &'a str) -> Self {
        let alternatives = if raw.contains(['|', '&']) {
            // Lists of exactly their size: a term is large.
            let mut alternatives = Vec::with_capacity(raw.matches('|').count() + 1);
            for alt in raw.split('|') {
                let alt = alt.trim_matches(' ');
                let mut terms = Vec::with_capacity(alt.matches('&').count() + 1);
                terms.extend(
                    alt.split('&')
                        .map(|t| compile_term(raw, t.trim_matches(' '))),
                );
                alternatives.push(terms);
            }
            Alternatives::Many(alternatives)
        } else {
            Alternatives::One(compile_term(raw, raw.trim_matches(' ')))
        };
        Self { raw, alternatives }
    }

    pub fn raw(&self) -> &'a str {
        self.raw
    }

    /// Kyverno's `validateStringPatterns`.
    pub fn matches(&self, value: &Value) -> bool {
        if value.as_str() == Some(self.raw) {
            return true;
        }
        let raw = self.raw;
        match &self.alternatives {
            Alternatives::One(term) => term_matches(raw, term, value),
            Alternatives::Many(alternatives) => alternatives
                .iter()
                .any(|terms| terms.iter().all(|t| term_matches(raw, t, value))),
        }
    }
}

/// Problems Kyverno's policy validation (or plain sense) rejects in a string
/// pattern: an operator with nothing to compare, or a broken range.
pub fn check(raw: &str) -> Option<String> {
    for alt in raw.split('|') {
        for term in alt.trim_matches(' ').split('&') {
            let term = term.trim_matches(' ');
            let (op_len, _) = operator_prefix(term);
            if op_len > 0 && term.get(op_len..).is_some_and(|r| r.trim().is_empty()) {
                return Some(format!("operator in `{raw}` has no value to compare with"));
            }
            // `!-x` is "not equal to -x" (e.g. `!--privileged`), but a
            // trailing `!-` is a range missing its upper bound.
            if term.len() > 2 && term.ends_with("!-") {
                return Some(format!(
                    "invalid operator syntax in pattern `{raw}`: `!-` needs a range such as `1!-5`"
                ));
            }
        }
    }
    None
}

/// The operator at the start of a term and its length (`>=` before `>`).
/// Terms shorter than two bytes are always literal, as in Kyverno.
fn operator_prefix(term: &str) -> (usize, Op) {
    if term.len() < 2 {
        return (0, Op::Equal);
    }
    for (prefix, op) in [
        (">=", Op::MoreEqual),
        ("<=", Op::LessEqual),
        (">", Op::More),
        ("<", Op::Less),
        ("!", Op::NotEqual),
    ] {
        if term.starts_with(prefix) {
            return (prefix.len(), op);
        }
    }
    (0, Op::Equal)
}

/// A term of `raw` (a slice of it).
fn compile_term(raw: &str, term: &str) -> Term {
    let (len, op) = operator_prefix(term);
    if len > 0 {
        return Term::Compare(op, Operand::new(raw, term.get(len..).unwrap_or("").trim()));
    }
    if let Some((left, right)) = split_range(term, "!-") {
        return Term::NotInRange(Operand::new(raw, left), Operand::new(raw, right));
    }
    if let Some((left, right)) = split_range(term, "-") {
        return Term::InRange(Operand::new(raw, left), Operand::new(raw, right));
    }
    // Kyverno's `validateStringPattern` trims the operand of every
    // operator, equality included (`nginx\n` from a YAML block matches).
    Term::Compare(Op::Equal, Operand::new(raw, term.trim()))
}

/// Matches `^(E)SEP(E)$` with `E = [-|+]?\d+(\.\d+)?[A-Za-z]*`.
fn split_range<'t>(term: &'t str, separator: &str) -> Option<(&'t str, &'t str)> {
    let first = endpoint_len(term)?;
    let (left, rest) = term.split_at_checked(first)?;
    let right = rest.strip_prefix(separator)?;
    (endpoint_len(right)? == right.len()).then_some((left, right))
}

fn endpoint_len(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut i = usize::from(matches!(bytes.first(), Some(b'-' | b'|' | b'+')));
    let digits = |from: usize| {
        bytes
            .iter()
            .skip(from)
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    let whole = digits(i);
    if whole == 0 {
        return None;
    }
    i += whole;
    if bytes.get(i) == Some(&b'.') {
        let fraction = digits(i + 1);
        if fraction > 0 {
            i += 1 + fraction;
        }
    }
    i += bytes
        .iter()
        .skip(i)
        .take_while(|b| b.is_ascii_alphabetic())
        .count();
    Some(i)
}

fn term_matches(raw: &str, term: &Term, value: &Value) -> bool {
    match term {
        Term::Compare(op, operand) => compare(raw, value, operand, *op),
        Term::InRange(low, high) => {
            compare(raw, value, low, Op::MoreEqual) && compare(raw, value, high, Op::LessEqual)
        }
        Term::NotInRange(low, high) => {
            compare(raw, value, low, Op::Less) || compare(raw, value, high, Op::More)
        }
    }
}

/// Kyverno's `validateString`: a duration comparison if both sides are
/// durations, else a quantity comparison if both are quantities, else a
/// wildcard string comparison (equality operators only).
fn compare(raw: &str, value: &Value, operand: &Operand, op: Op) -> bool {
    if let Some(numbers) = &operand.numbers {
        let as_number = number_text(value);
        if let (Some(pattern), Some(text)) = (numbers.duration, as_number.as_deref()) {
            if let Some(v) = duration::parse(text) {
                return op.holds(v.cmp(&pattern));
            }
        }
        if let (Some(pattern), Some(text)) = (&numbers.quantity, as_number.as_deref()) {
            if let Some(v) = Quantity::parse(text) {
                return op.holds(v.compare(pattern));
            }
        }
    }
    compare_string(value, operand.text(raw), op)
}

/// Kyverno's `convertNumberToString`: what a value reads as in a duration or
/// quantity comparison (a missing value reads as `0`).
fn number_text(value: &Value) -> Option<Cow<'_, str>> {
    match value {
        Value::Null => Some(Cow::Borrowed("0")),
        Value::String(s) => Some(Cow::Borrowed(s)),
        Value::Number(n) => Some(Cow::Owned(match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => i.to_string(),
            (None, Some(f)) => format!("{f:.6}"),
            _ => return None,
        })),
        _ => None,
    }
}

fn compare_string(value: &Value, pattern: &str, op: Op) -> bool {
    let text: Cow<'_, str> = match value {
        Value::String(s) => Cow::Borrowed(s),
        Value::Bool(b) => Cow::Borrowed(if *b { "true" } else { "false" }),
        Value::Number(n) => Cow::Owned(match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_float_e(n.as_f64().unwrap_or(0.0)),
        }),
        _ => return false,
    };
    match op {
        Op::Equal => wildcard::matches(pattern, &text),
        Op::NotEqual => !wildcard::matches(pattern, &text),
        // Kyverno: ">, >=, <, <= are not applicable to strings".
        _ => false,
    }
}

/// Go's `strconv.FormatFloat(v, 'E', -1, 64)`: `1.5E+00`.
fn go_float_e(v: f64) -> String {
    let text = format!("{v:E}");
    match text.split_once('E') {
        Some((mantissa, exp)) => {
            let (sign, digits) = match exp.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', exp),
            };
            format!("{mantissa}E{sign}{digits:0>2}")
        }
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_pattern_cases() {
        let cases = [
            ("literal_equal", "nginx", json!("nginx"), true),
            ("literal_differs", "nginx", json!("busybox"), false),
            ("wildcard_suffix", "*:latest", json!("nginx:latest"), true),
            ("not_wildcard", "!*:latest", json!("nginx:latest"), false),
            ("not_wildcard_passes", "!*:latest", json!("nginx:1.0"), true),
            ("question_star_on_empty", "?*", json!(""), false),
            ("question_star_on_missing", "?*", Value::Null, false),
            ("star_on_missing_reads_zero", "*", Value::Null, false),
            ("greater_number", ">1", json!(5), true),
            ("greater_number_string", ">1", json!("5"), true),
            ("greater_fails", ">10", json!(5), false),
            ("less_equal_quantity", "<=1Gi", json!("1024Mi"), true),
            ("quantity_equal_across_units", "1Gi", json!("1024Mi"), true),
            ("millicores", "<1", json!("500m"), true),
            ("duration_compare", ">1h", json!("90m"), true),
            ("duration_not_quantity", "<10m", json!("5m"), true),
            ("range_inside", "1-10", json!(5), true),
            ("range_outside", "1-10", json!(11), false),
            ("range_with_units", "1Mi-1Gi", json!("512Mi"), true),
            ("not_in_range_outside", "1!-10", json!(11), true),
            ("not_in_range_inside", "1!-10", json!(5), false),
            ("negative_range", "-5-10", json!(-3), true),
            ("or_alternatives", "a|b", json!("b"), true),
            ("and_terms", ">1 & <20", json!(10), true),
            ("and_fails", ">1 & <20", json!(25), false),
            ("combined_or_and", ">1 & <20 | >31 & <33", json!(32), true),
            ("combined_none", ">1 & <20 | >31 & <33", json!(25), false),
            ("literal_pipe_value", "a|b", json!("a|b"), true),
            ("greater_on_plain_string", ">abc", json!("abd"), false),
            ("missing_reads_zero_for_numbers", "<1", Value::Null, true),
            ("missing_is_not_not_equal", "!foo", Value::Null, false),
            ("bool_as_string", "true", json!(true), true),
            ("float_e_format", "1.5E+00", json!(1.5), true),
            ("float_quantity_compare", ">1", json!(1.5), true),
            ("single_char_operator_is_literal", ">", json!(">"), true),
            ("not_equal_negative_number", "!-5", json!(-5), false),
            ("date_is_not_range", "2023-01-01", json!("2023-01-01"), true),
            ("equal_operand_is_trimmed", "nginx\n", json!("nginx"), true),
            ("tab_trimmed_too", "\tnginx", json!("nginx"), true),
            ("trimmed_number", "5\n", json!(5), true),
            ("trimmed_quantity", "1Gi\n", json!("1024Mi"), true),
            ("trimmed_alternative", "a|b\n", json!("b"), true),
        ];
        for (name, pattern, value, want) in cases {
            assert_eq!(
                StringPattern::compile(pattern).matches(&value),
                want,
                "{name}"
            );
        }
    }

    #[test]
    fn check_flags_broken_operators() {
        assert!(check(">=").is_some());
        assert!(check("!-5").is_none());
        assert!(check("!--privileged").is_none());
        assert!(check("5!-").is_some());
        assert!(check(">= 5").is_none());
        assert!(check("1!-5").is_none());
        assert!(check("!*:latest").is_none());
        assert!(check(">").is_none());
    }

    #[test]
    fn go_float_formatting() {
        assert_eq!(go_float_e(1.5), "1.5E+00");
        assert_eq!(go_float_e(8.0), "8E+00");
        assert_eq!(go_float_e(0.001), "1E-03");
    }
}
