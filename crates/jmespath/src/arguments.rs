//! What Kyverno's functions share: their errors (the templates of
//! Kyverno's `error.go`), the readers of their arguments, and the Go
//! conversions and formats their results go through.

use serde_json::{Map, Number, Value};

/// A function failed; `message` is the text Kyverno's error prints.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{message}")]
pub struct FunctionError {
    pub message: String,
}

impl FunctionError {
    pub(crate) fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }
}

// ---------------------------------------------------------------------------
// Error templates (error.go)

/// `JMESPath function '%s': %s`
pub(crate) fn generic(function: &str, message: impl std::fmt::Display) -> FunctionError {
    FunctionError::new(format!("JMESPath function '{function}': {message}"))
}

/// `JMESPath function '%s': argument #%d is not of type %s`
pub(crate) fn invalid_type(function: &str, position: usize, ty: &str) -> FunctionError {
    FunctionError::new(format!(
        "JMESPath function '{function}': argument #{position} is not of type {ty}"
    ))
}

/// `JMESPath function '%s': Zero divisor passed`
pub(crate) fn zero_division(function: &str) -> FunctionError {
    generic(function, "Zero divisor passed")
}

/// `JMESPath function '%s': Non-integer argument(s) passed for modulo`
pub(crate) fn non_int_modulo(function: &str) -> FunctionError {
    generic(function, "Non-integer argument(s) passed for modulo")
}

/// `JMESPath function '%s': Types mismatch`
pub(crate) fn type_mismatch(function: &str) -> FunctionError {
    generic(function, "Types mismatch")
}

// ---------------------------------------------------------------------------
// Arguments

static NULL: Value = Value::Null;

/// Argument `index`, null when missing.
pub(crate) fn arg(args: &[Value], index: usize) -> &Value {
    args.get(index).unwrap_or(&NULL)
}

/// Kyverno's `validateArg(f, arguments, index, reflect.String)`.
pub(crate) fn string_arg<'a>(
    function: &str,
    args: &'a [Value],
    index: usize,
) -> Result<&'a str, FunctionError> {
    arg(args, index)
        .as_str()
        .ok_or_else(|| invalid_type(function, index + 1, "string"))
}

/// Kyverno's `validateArg(f, arguments, index, reflect.Float64)`.
pub(crate) fn number_arg(
    function: &str,
    args: &[Value],
    index: usize,
) -> Result<f64, FunctionError> {
    arg(args, index)
        .as_f64()
        .ok_or_else(|| invalid_type(function, index + 1, "float64"))
}

// ---------------------------------------------------------------------------
// Go number formatting and conversions

/// A float64 as a JSON number; integral values below 2^53 become integers so
/// they print without a fraction, as Go's encoder prints them. Not finite
/// values (which callers rule out) become null.
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 2f64.powi(53) {
        return Value::Number(Number::from(f as i64));
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// [`number`], or the error Go's JSON encoder gives for NaN and ±Inf.
pub(crate) fn finite_number(f: f64) -> Result<Value, FunctionError> {
    if f.is_finite() {
        Ok(number(f))
    } else {
        Err(FunctionError::new(format!(
            "json: unsupported value: {}",
            go_format_g(f)
        )))
    }
}

/// Go's `int64(f)` on amd64: truncation, and `MinInt64` for NaN and values
/// out of range.
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn go_f64_to_i64(f: f64) -> i64 {
    let limit = 2f64.powi(63);
    if (-limit..limit).contains(&f) {
        f as i64
    } else {
        i64::MIN
    }
}

/// Kyverno's `intNumber`: `f` as an integer, or its error text.
pub(crate) fn int_number(f: f64) -> Result<i64, String> {
    if !f.is_finite() || f.trunc() != f {
        return Err(format!(
            "expected an integer number but got: {}",
            go_format_g(f)
        ));
    }
    let i = go_f64_to_i64(f);
    #[allow(clippy::cast_precision_loss)]
    let back = i as f64;
    if back != f {
        return Err(format!(
            "number is outside the range of integer numbers: {}",
            go_format_g(f)
        ));
    }
    Ok(i)
}

/// The shortest decimal digits of a finite, non-zero, positive `f` and the
/// power of ten of its first digit (`1.5e3` → ("15", 3)).
fn shortest_digits(text: &str) -> (String, i64) {
    let (mantissa, exp) = text.split_once('e').unwrap_or((text, "0"));
    (mantissa.replace('.', ""), exp.parse().unwrap_or(0))
}

/// `digits` × 10^(exp - len + 1) written out without an exponent.
fn plain_decimal(digits: &str, exp: i64) -> String {
    let len = i64::try_from(digits.len()).unwrap_or(i64::MAX);
    if exp < 0 {
        let zeros = usize::try_from(-exp - 1).unwrap_or(0);
        format!("0.{}{digits}", "0".repeat(zeros))
    } else if len <= exp + 1 {
        let zeros = usize::try_from(exp + 1 - len).unwrap_or(0);
        format!("{digits}{}", "0".repeat(zeros))
    } else {
        let point = usize::try_from(exp + 1).unwrap_or(0);
        format!(
            "{}.{}",
            digits.get(..point).unwrap_or_default(),
            digits.get(point..).unwrap_or_default()
        )
    }
}

/// `digits` × 10^(exp - len + 1) as Go's `%e` writes it: `1.5e+03`.
fn exponent_form(digits: &str, exp: i64) -> String {
    let mut chars = digits.chars();
    let mut text = String::new();
    if let Some(first) = chars.next() {
        text.push(first);
    }
    let rest: String = chars.collect();
    if !rest.is_empty() {
        text.push('.');
        text.push_str(&rest);
    }
    let sign = if exp < 0 { '-' } else { '+' };
    format!("{text}e{sign}{:02}", exp.unsigned_abs())
}

fn special_float(f: f64) -> Option<String> {
    if f.is_nan() {
        Some("NaN".into())
    } else if f.is_infinite() {
        Some(if f > 0.0 { "+Inf" } else { "-Inf" }.into())
    } else if f == 0.0 {
        Some(if f.is_sign_negative() { "-0" } else { "0" }.into())
    } else {
        None
    }
}

/// Go's `%v` / `%g` for a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`):
/// shortest digits, the exponent form below 1e-4 and from 1e6 up.
pub(crate) fn go_format_g(f: f64) -> String {
    special_float(f).unwrap_or_else(|| shortest(f < 0.0, &format!("{:e}", f.abs()), true))
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 32)`.
pub(crate) fn go_format_g32(f: f64) -> String {
    #[allow(clippy::cast_possible_truncation)]
    let x = f as f32;
    special_float(f64::from(x))
        .unwrap_or_else(|| shortest(x < 0.0, &format!("{:e}", x.abs()), true))
}

/// Go's `strconv.FormatFloat(f, 'f', -1, 32)`: the shortest float32 digits,
/// written out without an exponent (`123456789` → `123456790`).
pub(crate) fn go_format_f32(f: f64) -> String {
    #[allow(clippy::cast_possible_truncation)]
    let x = f as f32;
    special_float(f64::from(x))
        .unwrap_or_else(|| shortest(x < 0.0, &format!("{:e}", x.abs()), false))
}

/// A finite number written with the shortest digits of its magnitude
/// (`scientific`, as Rust's `{:e}` writes them): Go's `'g'` layout, which
/// takes the exponent form below 1e-4 and from 1e6 up, or its `'f'` layout.
fn shortest(negative: bool, scientific: &str, g: bool) -> String {
    let sign = if negative { "-" } else { "" };
    let (digits, exp) = shortest_digits(scientific);
    if g && !(-4..6).contains(&exp) {
        format!("{sign}{}", exponent_form(&digits, exp))
    } else {
        format!("{sign}{}", plain_decimal(&digits, exp))
    }
}

/// Kyverno's `ifaceToString`: strings as they are, numbers as float32 `'f'`
/// text, booleans as `true`/`false`; anything else has no string form.
pub(crate) fn iface_to_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(go_format_f32(n.as_f64().unwrap_or(0.0))),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

pub(crate) use kube_units::quote::go_quote;

/// Go's `strconv.ParseInt(text, 10, 64)`, with the error text.
pub(crate) fn go_parse_int(text: &str) -> Result<i64, String> {
    let digits = text
        .strip_prefix('-')
        .or_else(|| text.strip_prefix('+'))
        .unwrap_or(text);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseInt: parsing {}: invalid syntax",
            go_quote(text)
        ));
    }
    text.parse::<i64>().map_err(|_| {
        format!(
            "strconv.ParseInt: parsing {}: value out of range",
            go_quote(text)
        )
    })
}

// ---------------------------------------------------------------------------
// Encodings and objects

fn base64_value(c: u8) -> Option<u8> {
    match c {
        b'A'..=b'Z' => Some(c - b'A'),
        b'a'..=b'z' => Some(c - b'a' + 26),
        b'0'..=b'9' => Some(c - b'0' + 52),
        b'+' => Some(62),
        b'/' => Some(63),
        _ => None,
    }
}

/// Go's `base64.StdEncoding.DecodeString`: padding required, `\r` and `\n`
/// skipped, unused trailing bits ignored; the error is the offset Go's
/// `CorruptInputError` reports.
pub(crate) fn go_base64_decode(src: &[u8]) -> Result<Vec<u8>, usize> {
    let is_newline = |c: Option<&u8>| matches!(c, Some(b'\n' | b'\r'));
    let mut out = Vec::with_capacity(src.len() / 4 * 3 + 3);
    let mut si = 0usize;
    while si < src.len() {
        let mut quantum = [0u8; 4];
        let mut filled = 4usize;
        let mut trailing: Option<usize> = None;
        let mut j = 0usize;
        while j < 4 {
            let Some(&c) = src.get(si) else {
                if j == 0 {
                    return Ok(out);
                }
                return Err(si - j);
            };
            si += 1;
            if let Some(v) = base64_value(c) {
                if let Some(slot) = quantum.get_mut(j) {
                    *slot = v;
                }
                j += 1;
                continue;
            }
            if c == b'\n' || c == b'\r' {
                continue;
            }
            if c != b'=' {
                return Err(si - 1);
            }
            match j {
                0 | 1 => return Err(si - 1),
                2 => {
                    while is_newline(src.get(si)) {
                        si += 1;
                    }
                    match src.get(si) {
                        None => return Err(src.len()),
                        Some(&b'=') => si += 1,
                        Some(_) => return Err(si - 1),
                    }
                }
                _ => {}
            }
            while is_newline(src.get(si)) {
                si += 1;
            }
            if si < src.len() {
                trailing = Some(si);
            }
            filled = j;
            break;
        }
        let [a, b, c, d] = quantum;
        let value =
            (u32::from(a) << 18) | (u32::from(b) << 12) | (u32::from(c) << 6) | u32::from(d);
        let bytes = value.to_be_bytes();
        let decoded = bytes.get(1..filled).unwrap_or_default();
        out.extend_from_slice(decoded);
        if let Some(offset) = trailing {
            return Err(offset);
        }
    }
    Ok(out)
}

/// A Go map as JSON: keys in sorted order, as Go's encoder writes them.
pub(crate) fn sorted_object(entries: Vec<(String, Value)>) -> Value {
    let mut entries = entries;
    entries.sort_by(|(a, _), (b, _)| a.cmp(b));
    let mut map = Map::new();
    for (key, value) in entries {
        map.insert(key, value);
    }
    Value::Object(map)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_number_formatting() {
        let g = [
            (1.0, "1"),
            (1.5, "1.5"),
            (1e6, "1e+06"),
            (123456.0, "123456"),
            (1e-5, "1e-05"),
            (0.0001, "0.0001"),
            (-2.5, "-2.5"),
        ];
        for (f, want) in g {
            assert_eq!(go_format_g(f), want, "{f}");
        }
        let f32s = [
            (1.0, "1"),
            (1.5, "1.5"),
            (123456789.0, "123456790"),
            (0.1, "0.1"),
            (-12.0, "-12"),
            (1e20, "100000000000000000000"),
        ];
        for (f, want) in f32s {
            assert_eq!(go_format_f32(f), want, "{f}");
        }
        assert_eq!(go_quote("a\"b\n"), "\"a\\\"b\\n\"");
        assert_eq!(go_parse_int("+12"), Ok(12));
        assert_eq!(
            go_parse_int("1a"),
            Err("strconv.ParseInt: parsing \"1a\": invalid syntax".into())
        );
    }
}
