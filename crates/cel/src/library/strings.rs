//! cel-go's strings extension as Kubernetes enables it (version 2, plus
//! `reverse`): indices count code points, errors read as in cel-go, and
//! `format` follows the en_US formatter of that version.

use std::fmt::Write as _;

use kube_units::quote::go_quote;

use crate::budget::Budget;
use crate::error::EvalError;
use crate::func::Func;
use crate::time;
use crate::value::no_overload;
use crate::value::{ListRef, Str, Value};

pub(crate) fn call<'a>(
    func: Func,
    args: &[Value<'a>],
    budget: &mut Budget,
) -> Result<Value<'a>, EvalError> {
    if let (Func::Join, [list, rest @ ..]) = (func, args) {
        if let Some(list) = list.as_list() {
            let sep = match rest {
                [] => "",
                [Value::String(sep)] => sep,
                _ => return Err(no_overload(func.name(), args)),
            };
            return join(list, sep, budget);
        }
    }
    if let (Func::Format, [Value::String(f), list]) = (func, args) {
        if let Some(list) = list.as_list() {
            budget.charge_len(f.len())?;
            budget.charge_items(list.len())?;
            return format(f, list, budget).map(Value::string);
        }
    }
    if let (Func::Quote, [Value::String(s)]) = (func, args) {
        budget.charge_len(s.len())?;
        return Ok(Value::string(quote(s)));
    }
    let Some(Value::String(s)) = args.first() else {
        return Err(no_overload(func.name(), args));
    };
    budget.charge_len(s.len())?;
    let rest = args.get(1..).unwrap_or(&[]);
    let fail = || no_overload(func.name(), args);
    match (func, rest) {
        (Func::CharAt, [Value::Int(i)]) => char_at(s, *i),
        (Func::IndexOf, [Value::String(sub)]) => index_of(s, sub, 0).map(Value::Int),
        (Func::IndexOf, [Value::String(sub), Value::Int(off)]) => {
            index_of(s, sub, *off).map(Value::Int)
        }
        (Func::LastIndexOf, [Value::String(sub)]) => last_index_of(s, sub).map(Value::Int),
        (Func::LastIndexOf, [Value::String(sub), Value::Int(off)]) => {
            last_index_of_offset(s, sub, *off).map(Value::Int)
        }
        (Func::LowerAscii, []) => Ok(Value::string(s.to_ascii_lowercase())),
        (Func::UpperAscii, []) => Ok(Value::string(s.to_ascii_uppercase())),
        (Func::Replace, [Value::String(old), Value::String(new)]) => {
            replace(s, old, new, -1, budget)
        }
        (Func::Replace, [Value::String(old), Value::String(new), Value::Int(n)]) => {
            replace(s, old, new, *n, budget)
        }
        (Func::Split, [Value::String(sep)]) => split(s, sep, -1, budget),
        (Func::Split, [Value::String(sep), Value::Int(n)]) => split(s, sep, *n, budget),
        (Func::Substring, [Value::Int(start)]) => {
            let len = s.chars().count();
            substring(s, *start, i64::try_from(len).unwrap_or(i64::MAX))
        }
        (Func::Substring, [Value::Int(start), Value::Int(end)]) => {
            if start > end {
                return Err(EvalError::msg(format!(
                    "invalid substring range. start: {start}, end: {end}"
                )));
            }
            substring(s, *start, *end)
        }
        (Func::Trim, []) => Ok(match s {
            Str::Borrowed(b) => Value::String(Str::Borrowed(b.trim())),
            Str::Owned(_) => Value::string(s.trim().to_string()),
        }),
        _ => Err(fail()),
    }
}

fn out_of_range(i: i64) -> EvalError {
    EvalError::msg(format!("index out of range: {i}"))
}

fn to_i64(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn char_at<'a>(s: &str, i: i64) -> Result<Value<'a>, EvalError> {
    let idx = usize::try_from(i).map_err(|_| out_of_range(i))?;
    match s.chars().nth(idx) {
        Some(c) => Ok(Value::string(c.to_string())),
        None if s.chars().count() == idx => Ok(Value::String(Str::Borrowed(""))),
        None => Err(out_of_range(i)),
    }
}

/// Whether `sub` occurs in `runes` at `i`.
fn occurs_at(runes: &[char], sub: &[char], i: usize) -> bool {
    runes.get(i..i + sub.len()) == Some(sub)
}

/// What `indexOf` and `lastIndexOf` search, in code points, once the
/// offset is checked; or their answer when there is nothing to search.
enum Search {
    Answer(i64),
    Within {
        runes: Vec<char>,
        sub: Vec<char>,
        offset: usize,
    },
}

fn search(s: &str, sub: &str, offset: i64) -> Result<Search, EvalError> {
    let off = usize::try_from(offset).map_err(|_| out_of_range(offset))?;
    let runes: Vec<char> = s.chars().collect();
    if sub.is_empty() {
        return Ok(Search::Answer(if off > runes.len() {
            to_i64(runes.len())
        } else {
            offset
        }));
    }
    let sub: Vec<char> = sub.chars().collect();
    if off >= runes.len() || sub.len() > runes.len() {
        return Ok(Search::Answer(-1));
    }
    Ok(Search::Within {
        runes,
        sub,
        offset: off,
    })
}

fn index_of(s: &str, sub: &str, offset: i64) -> Result<i64, EvalError> {
    let (runes, sub, off) = match search(s, sub, offset)? {
        Search::Answer(answer) => return Ok(answer),
        Search::Within { runes, sub, offset } => (runes, sub, offset),
    };
    Ok((off..=runes.len() - sub.len())
        .find(|&i| occurs_at(&runes, &sub, i))
        .map_or(-1, to_i64))
}

fn last_index_of(s: &str, sub: &str) -> Result<i64, EvalError> {
    let len = s.chars().count();
    if sub.is_empty() {
        return Ok(to_i64(len));
    }
    if s.len() < sub.len() {
        return Ok(-1);
    }
    last_index_of_offset(s, sub, to_i64(len) - 1)
}

fn last_index_of_offset(s: &str, sub: &str, offset: i64) -> Result<i64, EvalError> {
    let (runes, sub, off) = match search(s, sub, offset)? {
        Search::Answer(answer) => return Ok(answer),
        Search::Within { runes, sub, offset } => (runes, sub, offset),
    };
    let start = off.min(runes.len() - sub.len());
    Ok((0..=start)
        .rev()
        .find(|&i| occurs_at(&runes, &sub, i))
        .map_or(-1, to_i64))
}

fn substring<'a>(s: &str, start: i64, end: i64) -> Result<Value<'a>, EvalError> {
    let len = s.chars().count();
    let check = |i: i64| {
        usize::try_from(i)
            .ok()
            .filter(|&i| i <= len)
            .ok_or_else(|| out_of_range(i))
    };
    let (start, end) = (check(start)?, check(end)?);
    Ok(Value::string(
        s.chars().skip(start).take(end - start).collect(),
    ))
}

fn replace<'a>(
    s: &str,
    old: &str,
    new: &str,
    n: i64,
    budget: &mut Budget,
) -> Result<Value<'a>, EvalError> {
    let out = match usize::try_from(n) {
        Ok(n) => s.replacen(old, new, n),
        Err(_) => s.replace(old, new),
    };
    budget.charge_len(out.len())?;
    Ok(Value::string(out))
}

/// Go's `strings.SplitN`: `n < 0` splits everywhere, `n == 0` gives no
/// parts, and an empty separator splits into characters.
fn split<'a>(s: &str, sep: &str, n: i64, budget: &mut Budget) -> Result<Value<'a>, EvalError> {
    if n == 0 {
        return Ok(Value::list(Vec::new()));
    }
    let limit = usize::try_from(n).unwrap_or(usize::MAX);
    let parts: Vec<String> = if sep.is_empty() {
        let mut parts: Vec<String> = Vec::new();
        let mut rest = s;
        while let Some(c) = rest.chars().next() {
            if parts.len() + 1 == limit {
                parts.push(rest.to_string());
                break;
            }
            parts.push(c.to_string());
            rest = rest.get(c.len_utf8()..).unwrap_or("");
        }
        parts
    } else {
        s.splitn(limit, sep).map(str::to_string).collect()
    };
    budget.charge_items(parts.len())?;
    Ok(Value::list(parts.into_iter().map(Value::string).collect()))
}

fn join<'a>(list: ListRef<'_, 'a>, sep: &str, budget: &mut Budget) -> Result<Value<'a>, EvalError> {
    let mut out = String::new();
    for (i, item) in list.iter().enumerate() {
        let Value::String(s) = &item else {
            return Err(EvalError::msg(format!("join: invalid input: {item}")));
        };
        if i > 0 {
            out.push_str(sep);
        }
        out.push_str(s);
    }
    budget.charge_len(out.len())?;
    Ok(Value::string(out))
}

/// `strings.quote`: CEL escapes, in double quotes.
fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

// ---- string.format ----

/// The largest precision honoured; more only costs memory.
const MAX_PRECISION: usize = 1_000;

fn format(f: &str, args: ListRef<'_, '_>, budget: &mut Budget) -> Result<String, EvalError> {
    let bytes = f.as_bytes();
    let mut out = String::with_capacity(f.len());
    let mut literal_start = 0;
    let mut i = 0;
    let mut arg_index = 0usize;
    while let Some(&b) = bytes.get(i) {
        if b != b'%' {
            i += 1;
            continue;
        }
        out.push_str(f.get(literal_start..i).unwrap_or(""));
        if bytes.get(i + 1) == Some(&b'%') {
            out.push('%');
            i += 2;
            literal_start = i;
            continue;
        }
        let arg = args
            .get(arg_index)
            .ok_or_else(|| EvalError::msg(format!("index {arg_index} out of range")))?;
        if i + 1 >= bytes.len() {
            return Err(EvalError::msg("unexpected end of string"));
        }
        let clause = Clause::parse(f, i).map_err(EvalError::msg)?;
        i = clause.end;
        literal_start = i;
        let precision = clause.precision;
        let text = match clause.verb {
            's' => format_string(&arg, budget),
            'd' => format_decimal(&arg),
            'f' => format_fixed(&arg, precision.unwrap_or(6)),
            'e' => format_scientific(&arg, precision.unwrap_or(6)),
            'b' => format_radix(&arg, 2),
            'o' => format_radix(&arg, 8),
            _ => format_hex(&arg, clause.verb == 'X'),
        }
        .map_err(|m| EvalError::msg(format!("error during formatting: {m}")))?;
        budget.charge_len(text.len())?;
        out.push_str(&text);
        arg_index += 1;
    }
    out.push_str(f.get(literal_start..).unwrap_or(""));
    Ok(out)
}

/// A formatting clause: its verb, its precision, and where it ends.
struct Clause {
    verb: char,
    precision: Option<usize>,
    end: usize,
}

impl Clause {
    /// The clause whose `%` is at `at` (and is not `%%`), worded as cel-go
    /// words a clause it cannot parse.
    fn parse(f: &str, at: usize) -> Result<Self, String> {
        let parse_err = |m: String| format!("could not parse formatting clause: {m}");
        let bytes = f.as_bytes();
        let mut i = at + 1;
        let mut precision = None;
        if bytes.get(i) == Some(&b'.') {
            i += 1;
            let start = i;
            while bytes.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
            if i >= bytes.len() {
                return Err(parse_err(
                    "error while parsing precision: could not find end of precision specifier"
                        .into(),
                ));
            }
            let digits = f.get(start..i).unwrap_or("");
            let p: usize = digits.parse().map_err(|_| {
                parse_err(format!(
                    "error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing {digits:?}: invalid syntax"
                ))
            })?;
            precision = Some(p.min(MAX_PRECISION));
        }
        let verb = f.get(i..).and_then(|r| r.chars().next()).unwrap_or('%');
        if !matches!(verb, 's' | 'd' | 'f' | 'e' | 'b' | 'o' | 'x' | 'X') {
            return Err(parse_err(format!(
                "unrecognized formatting clause \"{verb}\""
            )));
        }
        Ok(Self {
            verb,
            precision,
            end: i + verb.len_utf8(),
        })
    }

    /// Whether the clause takes an argument of `kind` (cel-go's static
    /// check compares kinds only; `%s` takes every kind a literal has).
    fn takes(&self, kind: &str) -> bool {
        let takes: &[&str] = match self.verb {
            'd' | 'o' => &["int", "uint"],
            'f' | 'e' => &["double", "string"],
            'b' => &["int", "uint", "bool"],
            'x' | 'X' => &["int", "uint", "string", "bytes"],
            _ => return true,
        };
        takes.contains(&kind)
    }
}

/// Why `verb` cannot format a value of type `type_name`, as cel-go says it.
fn refusal(verb: char, type_name: &str) -> String {
    let what = match verb {
        'd' => "decimal clause can only be used on integers",
        'f' => "fixed-point clause can only be used on doubles",
        'e' => "scientific clause can only be used on doubles",
        'b' => "only integers and bools can be formatted as binary",
        'o' => "octal clause can only be used on integers",
        'x' | 'X' => "only integers, byte buffers, and strings can be formatted as hex",
        _ => "string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps",
    };
    format!("{what}, was given {type_name}")
}

/// cel-go's static check of `'literal'.format([list literal])`, which
/// Kubernetes' CEL environment runs when it compiles an expression: every
/// clause has an argument, each argument's kind (`None` where only the
/// evaluation knows it) suits its clause, and no argument is left over.
pub(crate) fn check_format(f: &str, kinds: &[Option<&str>]) -> Result<(), String> {
    let bytes = f.as_bytes();
    let mut i = 0;
    let mut requested = 0usize;
    while let Some(&b) = bytes.get(i) {
        if b != b'%' {
            i += 1;
            continue;
        }
        if bytes.get(i + 1) == Some(&b'%') {
            i += 2;
            continue;
        }
        let index = requested;
        requested += 1;
        if i + 1 >= bytes.len() {
            return Err("unexpected end of string".into());
        }
        let Some(kind) = kinds.get(index) else {
            return Err(format!("index {index} out of range"));
        };
        let clause = Clause::parse(f, i)?;
        if let Some(kind) = kind.filter(|k| !clause.takes(k)) {
            return Err(format!(
                "error during formatting: {}",
                refusal(clause.verb, kind)
            ));
        }
        i = clause.end;
    }
    if kinds.len() > requested {
        return Err(format!(
            "too many arguments supplied to string.format (expected {requested}, got {})",
            kinds.len()
        ));
    }
    Ok(())
}

/// `%s`.
fn format_string(arg: &Value<'_>, budget: &mut Budget) -> Result<String, String> {
    if arg.as_list().is_some() || arg.as_map().is_some() {
        return format_aggregate(arg, budget);
    }
    Ok(match arg {
        Value::Null => "null".into(),
        Value::String(s) => s.to_string(),
        Value::Bytes(b) => String::from_utf8_lossy(b).into_owned(),
        Value::Bool(_)
        | Value::Int(_)
        | Value::Uint(_)
        | Value::Double(_)
        | Value::Timestamp(_)
        | Value::Duration(_)
        | Value::Type(_) => arg.to_string(),
        other => return Err(refusal('s', other.type_name())),
    })
}

/// A value inside a formatted list or map, written as a CEL literal.
fn format_element(v: &Value<'_>, budget: &mut Budget) -> Result<String, String> {
    if v.as_list().is_some() || v.as_map().is_some() {
        return format_aggregate(v, budget);
    }
    Ok(match v {
        Value::String(s) => go_quote(s),
        Value::Bytes(b) => format!("b{}", go_quote(&String::from_utf8_lossy(b))),
        Value::Int(_) | Value::Uint(_) => v.to_string(),
        Value::Double(d) if d.is_finite() => format!("{d:.6}"),
        Value::Double(d) if d.is_nan() => "\"NaN\"".into(),
        Value::Double(d) if *d > 0.0 => "\"+Inf\"".into(),
        Value::Double(_) => "\"-Inf\"".into(),
        Value::Timestamp(t) => format!("timestamp({})", go_quote(&time::timestamp_string(*t))),
        Value::Duration(d) => format!("duration({})", go_quote(&time::duration_string(*d))),
        Value::Null | Value::Bool(_) | Value::Type(_) => v.to_string(),
        other => return Err(format!("no formatting function for {}", other.type_name())),
    })
}

fn format_aggregate(v: &Value<'_>, budget: &mut Budget) -> Result<String, String> {
    if budget.charge(1).is_err() {
        return Err("cost budget exceeded".into());
    }
    if let Some(list) = v.as_list() {
        let items: Result<Vec<String>, String> = list
            .iter()
            .map(|item| format_element(&item, budget))
            .collect();
        return Ok(format!("[{}]", items?.join(", ")));
    }
    let Some(map) = v.as_map() else {
        return Err(format!("no formatting function for {}", v.type_name()));
    };
    let mut pairs = Vec::with_capacity(map.len());
    for (k, val) in map.iter() {
        let key = match &k {
            Value::String(s) => go_quote(s),
            Value::Bool(_) | Value::Int(_) | Value::Uint(_) => k.to_string(),
            other => {
                return Err(format!(
                    "no formatting function for map key of type {}",
                    other.type_name()
                ))
            }
        };
        pairs.push((key, format_element(&val, budget)?));
    }
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    let body: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
    Ok(format!("{{{}}}", body.join(", ")))
}

fn format_decimal(arg: &Value<'_>) -> Result<String, String> {
    match arg {
        Value::Int(_) | Value::Uint(_) => Ok(arg.to_string()),
        other => Err(refusal('d', other.type_name())),
    }
}

/// A double argument for `%f` / `%e`; the strings "NaN", "Infinity" and
/// "-Infinity" are accepted too, as in cel-go.
fn float_arg(arg: &Value<'_>) -> Option<f64> {
    match arg {
        Value::Double(d) => Some(*d),
        Value::String(s) => match &**s {
            "NaN" => Some(f64::NAN),
            "Infinity" => Some(f64::INFINITY),
            "-Infinity" => Some(f64::NEG_INFINITY),
            _ => None,
        },
        _ => None,
    }
}

fn non_finite(d: f64) -> Option<String> {
    if d.is_nan() {
        Some("NaN".into())
    } else if d.is_infinite() {
        Some(if d > 0.0 { "∞" } else { "-∞" }.into())
    } else {
        None
    }
}

/// `%f` as Go's en_US message printer writes it: grouped thousands.
fn format_fixed(arg: &Value<'_>, precision: usize) -> Result<String, String> {
    let d = float_arg(arg).ok_or_else(|| refusal('f', arg.type_name()))?;
    if let Some(s) = non_finite(d) {
        return Ok(s);
    }
    let plain = format!("{:.*}", precision, d.abs());
    let (int, frac) = plain.split_once('.').unwrap_or((&plain, ""));
    let mut grouped = String::with_capacity(plain.len() + int.len() / 3 + 1);
    if d.is_sign_negative() && plain.bytes().any(|b| b != b'0' && b != b'.') {
        grouped.push('-');
    }
    for (i, c) in int.chars().enumerate() {
        if i > 0 && (int.len() - i) % 3 == 0 {
            grouped.push(',');
        }
        grouped.push(c);
    }
    if !frac.is_empty() {
        grouped.push('.');
        grouped.push_str(frac);
    }
    Ok(grouped)
}

/// `%e` as Go's en_US message printer writes it: `1.052033 × 10⁰³`.
fn format_scientific(arg: &Value<'_>, precision: usize) -> Result<String, String> {
    let d = float_arg(arg).ok_or_else(|| refusal('e', arg.type_name()))?;
    if let Some(s) = non_finite(d) {
        return Ok(s);
    }
    let sci = format!("{:.*e}", precision, d);
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    const SUPERSCRIPT: [char; 10] = ['⁰', '¹', '²', '³', '⁴', '⁵', '⁶', '⁷', '⁸', '⁹'];
    let mut out = format!("{mantissa}\u{202f}\u{d7}\u{202f}10");
    if exp < 0 {
        out.push('⁻');
    }
    for c in format!("{:02}", exp.unsigned_abs()).chars() {
        let digit = c.to_digit(10).unwrap_or(0) as usize;
        out.push(SUPERSCRIPT.get(digit).copied().unwrap_or('⁰'));
    }
    Ok(out)
}

fn format_radix(arg: &Value<'_>, radix: u32) -> Result<String, String> {
    let digits = |u: u64| match radix {
        2 => format!("{u:b}"),
        _ => format!("{u:o}"),
    };
    match arg {
        Value::Int(i) if *i < 0 => Ok(format!("-{}", digits(i.unsigned_abs()))),
        Value::Int(i) => Ok(digits(i.unsigned_abs())),
        Value::Uint(u) => Ok(digits(*u)),
        Value::Bool(b) if radix == 2 => Ok(if *b { "1" } else { "0" }.into()),
        other if radix == 2 => Err(refusal('b', other.type_name())),
        other => Err(refusal('o', other.type_name())),
    }
}

fn format_hex(arg: &Value<'_>, upper: bool) -> Result<String, String> {
    let hex = |u: u64| {
        if upper {
            format!("{u:X}")
        } else {
            format!("{u:x}")
        }
    };
    let hex_bytes = |b: &[u8]| {
        let mut s = String::with_capacity(b.len() * 2);
        for byte in b {
            let _ = if upper {
                write!(s, "{byte:02X}")
            } else {
                write!(s, "{byte:02x}")
            };
        }
        s
    };
    match arg {
        Value::Int(i) if *i < 0 => Ok(format!("-{}", hex(i.unsigned_abs()))),
        Value::Int(i) => Ok(hex(i.unsigned_abs())),
        Value::Uint(u) => Ok(hex(*u)),
        Value::String(s) => Ok(hex_bytes(s.as_bytes())),
        Value::Bytes(b) => Ok(hex_bytes(b)),
        other => Err(refusal('x', other.type_name())),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    #[test]
    fn strings_extension() {
        let cases = [
            ("char_at", "'héllo'.charAt(1)", "é"),
            ("char_at_end_is_empty", "'abc'.charAt(3)", ""),
            (
                "char_at_past_end",
                "'abc'.charAt(4)",
                "error: index out of range: 4",
            ),
            ("index_of", "'hello mellow'.indexOf('ello')", "1"),
            ("index_of_offset", "'hello mellow'.indexOf('ello', 2)", "7"),
            ("index_of_code_points", "'héllo'.indexOf('l')", "2"),
            ("index_of_empty", "'abc'.indexOf('')", "0"),
            ("index_of_missing", "'abc'.indexOf('z')", "-1"),
            (
                "index_of_negative",
                "'abc'.indexOf('a', -1)",
                "error: index out of range: -1",
            ),
            ("last_index_of", "'hello mellow'.lastIndexOf('ello')", "7"),
            (
                "last_index_of_offset",
                "'hello mellow'.lastIndexOf('ello', 6)",
                "1",
            ),
            ("last_index_of_empty", "'abc'.lastIndexOf('')", "3"),
            ("lower_ascii", "'TacoCÆT'.lowerAscii()", "tacocÆt"),
            ("upper_ascii", "'tacoCæt'.upperAscii()", "TACOCæT"),
            ("replace", "'a-b-c'.replace('-', '+')", "a+b+c"),
            ("replace_n", "'a-b-c'.replace('-', '+', 1)", "a+b-c"),
            ("replace_zero", "'a-b-c'.replace('-', '+', 0)", "a-b-c"),
            ("split", "'a,b,c'.split(',')", "[\"a\", \"b\", \"c\"]"),
            ("split_n", "'a,b,c'.split(',', 2)", "[\"a\", \"b,c\"]"),
            ("split_zero", "'a,b,c'.split(',', 0)", "[]"),
            (
                "split_empty_separator",
                "'abc'.split('')",
                "[\"a\", \"b\", \"c\"]",
            ),
            (
                "split_empty_separator_n",
                "'abc'.split('', 2)",
                "[\"a\", \"bc\"]",
            ),
            ("substring", "'tacocat'.substring(4)", "cat"),
            ("substring_range", "'tacocat'.substring(0, 4)", "taco"),
            (
                "substring_bad_range",
                "'tacocat'.substring(4, 2)",
                "error: invalid substring range. start: 4, end: 2",
            ),
            (
                "substring_out_of_range",
                "'abc'.substring(4)",
                "error: index out of range: 4",
            ),
            ("trim", "'  \\ttrim\\n '.trim()", "trim"),
            ("join", "['a', 'b'].join()", "ab"),
            ("join_separator", "['a', 'b'].join(', ')", "a, b"),
            (
                "join_non_string",
                "['a', dyn(1)].join()",
                "error: join: invalid input: 1",
            ),
            ("quote", "strings.quote('a\"b\\n')", "\"a\\\"b\\n\""),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }

    #[test]
    fn format_follows_cel_go() {
        let cases = [
            ("string_and_int", "'%s is %d'.format(['x', 42])", "x is 42"),
            ("percent_escape", "'%%%s%%'.format(['a'])", "%a%"),
            ("fixed_precision", "'%.3f'.format([1.2345])", "1.234"),
            ("fixed_default", "'%f'.format([2.71828])", "2.718280"),
            ("fixed_grouping", "'%.2f'.format([1234567.891])", "1,234,567.89"),
            ("fixed_nan_string", "'%f'.format(['NaN'])", "NaN"),
            ("scientific", "'%.6e'.format([1052.032911275])", "1.052033\u{202f}×\u{202f}10⁰³"),
            ("scientific_default", "'%e'.format([2.71828])", "2.718280\u{202f}×\u{202f}10⁰⁰"),
            ("binary", "'%b'.format([5])", "101"),
            ("binary_negative", "'%b'.format([-5])", "-101"),
            ("binary_bool", "'%b'.format([true])", "1"),
            ("octal", "'%o'.format([11])", "13"),
            ("hex", "'%x'.format([30])", "1e"),
            ("hex_upper_negative", "'%X'.format([-30])", "-1E"),
            ("hex_string", "'%x'.format(['Hello world!'])", "48656c6c6f20776f726c6421"),
            ("double_as_string", "'%s'.format([2.71])", "2.71"),
            ("small_double_as_string", "'%s'.format([0.000000002])", "2e-09"),
            ("list_as_string", "'%s'.format([[1, 'a', 2.71]])", "[1, \"a\", 2.710000]"),
            ("map_as_string", "'%s'.format([{'b': 'y', 'a': 1}])", "{\"a\":1, \"b\":\"y\"}"),
            ("null", "'null: %s'.format([null])", "null: null"),
            ("duration", "'%s'.format([duration('1h45m47s')])", "6347s"),
            ("type", "'%s'.format([type('a')])", "string"),
            // Arguments built at run time: a literal list is checked when the
            // expression compiles (see the next test).
            ("missing_argument", "'%s %s'.format(dyn(['a']))", "error: index 1 out of range"),
            // Go's `%q` escapes what `strconv.IsPrint` rejects, not only
            // control characters.
            ("unprintable_in_a_list_is_escaped", "'%s'.format([['\\u00ad']])", "[\"\\u00ad\"]"),
            ("decimal_on_double", "'%d'.format(dyn([1.5]))", "error: error during formatting: decimal clause can only be used on integers, was given double"),
            ("unknown_clause", "'%z'.format(dyn([1]))", "error: could not parse formatting clause: unrecognized formatting clause \"z\""),
            ("trailing_percent", "'abc%'.format(dyn([1]))", "error: unexpected end of string"),
            ("fixed_on_an_int", "'%f'.format(dyn([1]))", "error: error during formatting: fixed-point clause can only be used on doubles, was given int"),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }

    /// cel-go's string format validator, as Kubernetes' CEL environment
    /// runs it: a literal format string called with a list literal is
    /// checked when the expression compiles.
    #[test]
    fn literal_format_calls_are_checked_when_compiled() {
        let cases = [
            (
                "too_many_arguments",
                "'%s %s'.format(['abc', 'def', 'ghi']) == 'abc def'",
                Some("too many arguments supplied to string.format (expected 2, got 3)"),
            ),
            (
                "no_clause_but_an_argument",
                "'plain'.format([1]) == 'plain'",
                Some("too many arguments supplied to string.format (expected 0, got 1)"),
            ),
            (
                "too_few_arguments",
                "'%s %s'.format(['a']) != ''",
                Some("index 1 out of range"),
            ),
            (
                "decimal_on_a_string",
                "true || '%d'.format(['x']) == ''",
                Some("error during formatting: decimal clause can only be used on integers, was given string"),
            ),
            (
                "fixed_on_an_int",
                "'%.2f'.format([1]) != ''",
                Some("error during formatting: fixed-point clause can only be used on doubles, was given int"),
            ),
            (
                "binary_on_a_double",
                "'%b'.format([1.5]) != ''",
                Some("only integers and bools can be formatted as binary, was given double"),
            ),
            (
                "hex_on_a_list",
                "'%x'.format([[1]]) != ''",
                Some("only integers, byte buffers, and strings can be formatted as hex, was given list"),
            ),
            (
                "octal_on_null",
                "'%o'.format([null]) != ''",
                Some("octal clause can only be used on integers, was given null_type"),
            ),
            (
                "unknown_clause",
                "'%z'.format([1]) != ''",
                Some("could not parse formatting clause: unrecognized formatting clause \"z\""),
            ),
            (
                "trailing_percent",
                "'abc%'.format([1]) != ''",
                Some("unexpected end of string"),
            ),
            ("fitting_literals", "'%s %d %.1f %b %x %o'.format(['a', -1, 2.5, true, 'hi', 8u]) != ''", None),
            ("any_string_for_fixed", "'%f'.format(['NaN']) != ''", None),
            ("escaped_percent_takes_none", "'100%%'.format([]) == '100%'", None),
            ("fields_are_not_typed_here", "'%d'.format([object.x]) != ''", None),
            ("arguments_not_a_literal_list", "'%s %s'.format(dyn(['a'])) != ''", None),
            ("format_string_not_a_literal", "object.f.format(['a', 'b']) != ''", None),
        ];
        crate::test_support::assert_compiles(&cases);
    }
}
