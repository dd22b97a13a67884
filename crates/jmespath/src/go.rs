//! How Go prints the JSON values Kyverno works with. Kyverno's context holds
//! numbers as float64, so `fmt.Sprint(1000000.0)` is `1e+06` and
//! `json.Marshal` writes `1000000`; messages and operators depend on both.

use serde_json::{Number, Value};

/// A float64 as a JSON number, integral values stored as integers so that
/// they print without a fraction.
pub fn number(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 {
        // Exact: |f| < 2^53 and integral.
        #[allow(clippy::cast_possible_truncation)]
        return Value::Number(Number::from(f as i64));
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// The shortest digits and decimal exponent of `f` (`1.5e3` → ("15", 3)).
fn digits(f: f64) -> (String, i32) {
    let text = format!("{:e}", f.abs());
    let (mantissa, exp) = text.split_once('e').unwrap_or((&text, "0"));
    (mantissa.replace('.', ""), exp.parse().unwrap_or(0))
}

fn exponent_form(f: f64, digits: &str, exp: i32, min_exp_digits: usize) -> String {
    let sign = if f < 0.0 { "-" } else { "" };
    let mut mantissa = String::new();
    let mut chars = digits.chars();
    if let Some(first) = chars.next() {
        mantissa.push(first);
    }
    let rest: String = chars.collect();
    if !rest.is_empty() {
        mantissa.push('.');
        mantissa.push_str(&rest);
    }
    let exp_sign = if exp < 0 { '-' } else { '+' };
    let exp_digits = format!("{:0>width$}", exp.abs(), width = min_exp_digits);
    format!("{sign}{mantissa}e{exp_sign}{exp_digits}")
}

/// `fmt.Sprint(f)` for a float64: Go's shortest `%g`, which switches to the
/// exponent form below 1e-4 and from 1e6 up (strconv: "if precision was the
/// shortest possible, use precision 6 for this decision").
pub fn sprint_float(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return format!("{f}");
    }
    let (d, exp) = digits(f);
    if !(-4..6).contains(&exp) {
        return exponent_form(f, &d, exp, 2);
    }
    format!("{f}")
}

/// `json.Marshal(f)` for a float64.
pub fn json_float(f: f64) -> String {
    if f == 0.0 || !f.is_finite() {
        return "0".into();
    }
    let abs = f.abs();
    if !(1e-6..1e21).contains(&abs) {
        let (d, exp) = digits(f);
        return exponent_form(f, &d, exp, 1);
    }
    format!("{f}")
}

fn sprint_number(n: &Number) -> String {
    match n.as_i64() {
        #[allow(clippy::cast_precision_loss)]
        Some(i) => sprint_float(i as f64),
        None => sprint_float(n.as_f64().unwrap_or(0.0)),
    }
}

/// `fmt.Sprint(v)` for a value decoded from JSON (`map[a:1]`, `[a b]`).
/// [`sprint`], borrowing a string value (the common case) instead of
/// copying it.
pub fn sprint_cow(value: &Value) -> std::borrow::Cow<'_, str> {
    match value {
        Value::String(s) => std::borrow::Cow::Borrowed(s),
        other => std::borrow::Cow::Owned(sprint(other)),
    }
}

pub fn sprint(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => sprint_number(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(sprint).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            let parts: Vec<String> = entries
                .into_iter()
                .map(|(k, v)| format!("{k}:{}", sprint(v)))
                .collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

/// `json.Marshal(v)`: sorted keys, Go's number format, HTML-safe escaping.
pub fn json(value: &Value) -> String {
    let mut out = String::new();
    write_json(value, &mut out);
    out
}

/// The length of [`json`]'s text, counted without keeping it.
pub fn json_len(value: &Value) -> usize {
    let mut count = Count(0);
    write_json(value, &mut count);
    count.0
}

/// Where [`write_json`] writes: a string, or a count of its bytes.
trait Sink {
    fn put(&mut self, text: &str);
}

impl Sink for String {
    fn put(&mut self, text: &str) {
        self.push_str(text);
    }
}

struct Count(usize);

impl Sink for Count {
    fn put(&mut self, text: &str) {
        self.0 = self.0.saturating_add(text.len());
    }
}

fn write_json(value: &Value, out: &mut impl Sink) {
    match value {
        Value::Null => out.put("null"),
        Value::Bool(b) => out.put(if *b { "true" } else { "false" }),
        Value::Number(n) => match n.as_i64() {
            Some(i) => out.put(&i.to_string()),
            None => out.put(&json_float(n.as_f64().unwrap_or(0.0))),
        },
        Value::String(s) => write_json_string(s, out),
        Value::Array(items) => {
            out.put("[");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_json(item, out);
            }
            out.put("]");
        }
        Value::Object(map) => {
            let mut entries: Vec<(&String, &Value)> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.put("{");
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.put(",");
                }
                write_json_string(k, out);
                out.put(":");
                write_json(v, out);
            }
            out.put("}");
        }
    }
}

fn write_json_string(s: &str, out: &mut impl Sink) {
    out.put("\"");
    let mut buf = [0u8; 4];
    for c in s.chars() {
        match c {
            '"' => out.put("\\\""),
            '\\' => out.put("\\\\"),
            '\n' => out.put("\\n"),
            '\r' => out.put("\\r"),
            '\t' => out.put("\\t"),
            '<' => out.put("\\u003c"),
            '>' => out.put("\\u003e"),
            '&' => out.put("\\u0026"),
            '\u{2028}' => out.put("\\u2028"),
            '\u{2029}' => out.put("\\u2029"),
            c if (c as u32) < 0x20 => out.put(&format!("\\u{:04x}", c as u32)),
            c => out.put(c.encode_utf8(&mut buf)),
        }
    }
    out.put("\"");
}

/// Go's `path.Clean` (and `filepath.Clean` on Linux).
pub fn clean_path(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|last| *last != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sprint_prints_as_go_fmt_does() {
        let cases = [
            ("integral_float", json!(3.0), "3"),
            ("integer", json!(5), "5"),
            ("fraction", json!(1.5), "1.5"),
            ("million_uses_exponent", json!(1_000_000), "1e+06"),
            ("hundred_thousand_is_plain", json!(100_000), "100000"),
            ("small_uses_exponent", json!(0.00001), "1e-05"),
            ("null", json!(null), "<nil>"),
            ("list", json!(["a", 1]), "[a 1]"),
            ("map_sorted", json!({"b": 1, "a": "x"}), "map[a:x b:1]"),
        ];
        for (name, value, want) in cases {
            assert_eq!(sprint(&value), want, "{name}");
        }
    }

    #[test]
    fn json_marshals_as_go_does() {
        let cases = [
            (
                "sorted_keys",
                json!({"b": 1, "a": [true, null]}),
                r#"{"a":[true,null],"b":1}"#,
            ),
            ("html_escaped", json!("<a&b>"), r#""\u003ca\u0026b\u003e""#),
            ("big_float", json!(1e21), "1e+21"),
            ("tiny_float", json!(1e-7), "1e-7"),
            ("million", json!(1_000_000.0), "1000000"),
        ];
        for (name, value, want) in cases {
            assert_eq!(json(&value), want, "{name}");
            assert_eq!(json_len(&value), want.len(), "{name}: json_len");
        }
    }

    #[test]
    fn json_len_counts_what_json_writes() {
        let cases = [
            ("empty_list", json!([])),
            ("empty_map", json!({})),
            ("escapes", json!("q\"b\\s\n\r\t\u{1}\u{2028}é")),
            (
                "nested",
                json!({"a": [1, -2, 2.5, false, null, {"<k>": "v"}], "b": {}}),
            ),
            ("negative_float", json!(-0.000_001_5)),
        ];
        for (name, value) in cases {
            assert_eq!(json_len(&value), json(&value).len(), "{name}");
        }
    }
}
