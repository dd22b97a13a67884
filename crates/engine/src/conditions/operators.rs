//! Kyverno's condition operators (`pkg/engine/variables/operator`), with
//! their quirks: the value is the wildcard pattern of Equals; a string key
//! is tried as a duration, then a quantity, then a number, then a semver;
//! the set operators compare Go's `fmt.Sprint` of each element, both ways
//! as wildcards; AllNotIn means "not all in".

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::Value;

use crate::duration;
use crate::jmespath::go;
use crate::operator::StringPattern;
use crate::quantity::Quantity;
use crate::variables::{Document, Key};
use crate::wildcard;

/// Which Go type Kyverno holds an operand's numbers in. A condition's
/// literal key or value is decoded by apimachinery, which keeps integers
/// as `int64`; a top-level literal is then re-encoded through
/// encoding/json (`DocumentToUntyped`), which makes it a `float64`, while
/// a list or map is passed on as decoded. JMESPath results are `float64`.
/// `reflect.DeepEqual` (Equals on lists and maps) tells the two apart, and
/// `fmt.Sprint` (the set operators) prints `1000000` and `1e+06`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Origin<'d> {
    /// Every number is a `float64`.
    Float,
    /// Literal JSON inside a list or map: integers are `int64`.
    Literal,
    /// A list or map with substituted parts: each part as its document says.
    Mixed(&'d Document),
}

impl<'d> Origin<'d> {
    /// The origin of an operand compiled to `doc`.
    pub fn of(doc: &'d Document) -> Self {
        match doc {
            Document::Plain(Value::Array(_) | Value::Object(_)) => Origin::Literal,
            Document::Plain(_) | Document::Text(_) | Document::Unresolved(_) => Origin::Float,
            Document::List(_) | Document::Map(_) => Origin::Mixed(doc),
        }
    }

    /// The origin of a part inside this one.
    fn part(self, doc: &'d Document) -> Self {
        match doc {
            Document::Plain(_) => Origin::Literal,
            Document::Text(_) | Document::Unresolved(_) => Origin::Float,
            Document::List(_) | Document::Map(_) => Origin::Mixed(doc),
        }
    }

    fn item(self, i: usize) -> Self {
        match self {
            Origin::Mixed(Document::List(items)) => {
                items.get(i).map_or(Origin::Float, |d| self.part(d))
            }
            Origin::Mixed(_) => Origin::Float,
            other => other,
        }
    }

    fn entry(self, name: &str) -> Self {
        match self {
            Origin::Mixed(Document::Map(entries)) => entries
                .iter()
                .find_map(|(key, d)| match key {
                    Key::Plain(k) if k == name => Some(self.part(d)),
                    _ => None,
                })
                .unwrap_or(Origin::Float),
            Origin::Mixed(_) => Origin::Float,
            other => other,
        }
    }

    /// `n` as Go holds it here: `Some` when it is an `int64`.
    fn int(self, n: &serde_json::Number) -> Option<i64> {
        match self {
            Origin::Literal => n.as_i64(),
            Origin::Float | Origin::Mixed(_) => None,
        }
    }
}

/// `reflect.DeepEqual` on decoded JSON: an `int64` never equals a
/// `float64`, whatever their values.
fn deep_equal(a: &Value, oa: Origin, b: &Value, ob: Origin) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (oa.int(x), ob.int(y)) {
            (Some(x), Some(y)) => x == y,
            (None, None) => x.as_f64() == y.as_f64(),
            _ => false,
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len()
                && x.iter()
                    .zip(y)
                    .enumerate()
                    .all(|(i, (a, b))| deep_equal(a, oa.item(i), b, ob.item(i)))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter().all(|(k, v)| {
                    y.get(k)
                        .is_some_and(|w| deep_equal(v, oa.entry(k), w, ob.entry(k)))
                })
        }
        _ => a == b,
    }
}

/// `fmt.Sprint` of a part of an operand, its integers as Go holds them.
fn sprint(value: &Value, origin: Origin) -> Cow<'static, str> {
    match value {
        Value::Number(n) => match origin.int(n) {
            Some(i) => Cow::Owned(i.to_string()),
            None => Cow::Owned(go::sprint(value)),
        },
        Value::Array(items) if origin != Origin::Float => {
            let parts: Vec<Cow<str>> = items
                .iter()
                .enumerate()
                .map(|(i, v)| sprint(v, origin.item(i)))
                .collect();
            Cow::Owned(format!("[{}]", parts.join(" ")))
        }
        Value::Object(map) if origin != Origin::Float => {
            // serde_json's map is ordered by key, as Go prints a map.
            let parts: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("{k}:{}", sprint(v, origin.entry(k))))
                .collect();
            Cow::Owned(format!("map[{}]", parts.join(" ")))
        }
        other => Cow::Owned(go::sprint(other)),
    }
}

/// [`sprint`] of each element of a list operand, borrowing strings.
fn sprint_items<'v>(items: &'v [Value], origin: Origin) -> Vec<Cow<'v, str>> {
    items
        .iter()
        .enumerate()
        .map(|(i, v)| match v {
            Value::String(s) => Cow::Borrowed(s.as_str()),
            other => sprint(other, origin.item(i)),
        })
        .collect()
}

/// The operator names Kyverno's CRD accepts (its engine reads them in any
/// case).
pub const NAMES: &[&str] = &[
    "Equals",
    "NotEquals",
    "AnyIn",
    "AllIn",
    "AnyNotIn",
    "AllNotIn",
    "GreaterThan",
    "GreaterThanOrEquals",
    "LessThan",
    "LessThanOrEquals",
    "DurationGreaterThan",
    "DurationGreaterThanOrEquals",
    "DurationLessThan",
    "DurationLessThanOrEquals",
    "Equal",
    "NotEqual",
    "In",
    "NotIn",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compare {
    GreaterThan,
    GreaterThanOrEquals,
    LessThan,
    LessThanOrEquals,
}

impl Compare {
    fn holds(self, ord: Ordering) -> bool {
        match self {
            Compare::GreaterThan => ord == Ordering::Greater,
            Compare::GreaterThanOrEquals => ord != Ordering::Less,
            Compare::LessThan => ord == Ordering::Less,
            Compare::LessThanOrEquals => ord != Ordering::Greater,
        }
    }

    fn floats(self, a: f64, b: f64) -> bool {
        a.partial_cmp(&b).is_some_and(|o| self.holds(o))
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operator {
    Equals,
    NotEquals,
    /// Deprecated `In`.
    In,
    /// Deprecated `NotIn`.
    NotIn,
    AnyIn,
    AllIn,
    AnyNotIn,
    AllNotIn,
    Numeric(Compare),
    /// Deprecated `Duration*` operators.
    Duration(Compare),
}

/// How an operator name reads: Kyverno's engine looks operators up
/// without regard to case, but its comparison operators then compare only
/// under their exact spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    Known(Operator),
    /// A comparison operator in another case (`greaterthan`), which Kyverno
    /// accepts and never holds; the spelling it needs.
    InexactComparison(&'static str),
    Unknown,
}

impl Operator {
    /// The operator `name` spells, in any case, as Kyverno's
    /// `CreateOperatorHandler` reads it.
    pub fn read(name: &str) -> Spelling {
        if let Some(exact) = Self::parse(name) {
            return Spelling::Known(exact);
        }
        let Some(canonical) = NAMES.iter().find(|n| n.eq_ignore_ascii_case(name)) else {
            return Spelling::Unknown;
        };
        match Self::parse(canonical) {
            Some(Self::Numeric(_) | Self::Duration(_)) => Spelling::InexactComparison(canonical),
            Some(op) => Spelling::Known(op),
            None => Spelling::Unknown,
        }
    }

    /// The operator `name` spells exactly.
    pub fn parse(name: &str) -> Option<Self> {
        use Compare::*;
        Some(match name {
            "Equals" | "Equal" => Self::Equals,
            "NotEquals" | "NotEqual" => Self::NotEquals,
            "In" => Self::In,
            "NotIn" => Self::NotIn,
            "AnyIn" => Self::AnyIn,
            "AllIn" => Self::AllIn,
            "AnyNotIn" => Self::AnyNotIn,
            "AllNotIn" => Self::AllNotIn,
            "GreaterThan" => Self::Numeric(GreaterThan),
            "GreaterThanOrEquals" => Self::Numeric(GreaterThanOrEquals),
            "LessThan" => Self::Numeric(LessThan),
            "LessThanOrEquals" => Self::Numeric(LessThanOrEquals),
            "DurationGreaterThan" => Self::Duration(GreaterThan),
            "DurationGreaterThanOrEquals" => Self::Duration(GreaterThanOrEquals),
            "DurationLessThan" => Self::Duration(LessThan),
            "DurationLessThanOrEquals" => Self::Duration(LessThanOrEquals),
            _ => return None,
        })
    }

    /// Whether `key OPERATOR value` holds, after substitution, every
    /// number a `float64` (see [`Operator::evaluate_typed`]).
    pub fn evaluate(self, key: &Value, value: &Value) -> bool {
        self.evaluate_typed(key, Origin::Float, value, Origin::Float)
    }

    /// [`Operator::evaluate`], with where each operand came from.
    pub fn evaluate_typed(self, key: &Value, ko: Origin, value: &Value, vo: Origin) -> bool {
        match self {
            Self::Equals => equals(key, ko, value, vo),
            Self::NotEquals => not_equals(key, ko, value, vo),
            Self::In => legacy_in(key, value, vo, false),
            Self::NotIn => legacy_in(key, value, vo, true),
            Self::AnyIn => any_in(key, ko, value, vo, false),
            Self::AnyNotIn => any_in(key, ko, value, vo, true),
            Self::AllIn => all_in(key, ko, value, vo, false),
            Self::AllNotIn => all_in(key, ko, value, vo, true),
            Self::Numeric(c) => numeric(key, value, c),
            Self::Duration(c) => duration_op(key, value, c),
        }
    }
}

/// Nanoseconds of a Go duration string (`"0"` excluded, as Kyverno's
/// `parseDuration` excludes it).
fn duration_nanos(text: &str) -> Option<i64> {
    if text == "0" {
        return None;
    }
    duration::parse(text).and_then(|ns| i64::try_from(ns).ok())
}

/// A number read as seconds, as Go's `time.Duration(f) * time.Second`
/// computes it on amd64: the conversion truncates (a value out of range
/// becomes the smallest int64) and the product wraps around.
fn number_nanos(value: &Value) -> Option<i64> {
    const LIMIT: f64 = 9_223_372_036_854_775_808.0; // 2^63
    let f = value.as_f64()?;
    #[allow(clippy::cast_possible_truncation)]
    let whole = if f.is_nan() || !(-LIMIT..LIMIT).contains(&f) {
        i64::MIN
    } else {
        f.trunc() as i64
    };
    Some(whole.wrapping_mul(1_000_000_000))
}

/// Kyverno's `parseDuration`: at least one side a duration string, the
/// other a duration string or a number of seconds; in nanoseconds.
fn parse_durations(key: &Value, value: &Value) -> Option<(i64, i64)> {
    let k = key.as_str().and_then(duration_nanos);
    let v = value.as_str().and_then(duration_nanos);
    if k.is_none() && v.is_none() {
        return None;
    }
    Some((
        k.or_else(|| number_nanos(key))?,
        v.or_else(|| number_nanos(value))?,
    ))
}

fn parse_float(text: &str) -> Option<f64> {
    let t = text.trim_start_matches('+');
    if t.is_empty() || t.contains(char::is_whitespace) {
        return None;
    }
    t.parse::<f64>().ok()
}

fn equals(key: &Value, ko: Origin, value: &Value, vo: Origin) -> bool {
    match key {
        Value::Bool(k) => value.as_bool() == Some(*k),
        Value::Number(k) => {
            let k = k.as_f64().unwrap_or(f64::NAN);
            match value {
                Value::Number(v) => v.as_f64() == Some(k),
                Value::String(s) => parse_float(s) == Some(k),
                _ => false,
            }
        }
        Value::String(k) => {
            if let Some((a, b)) = parse_durations(key, value) {
                return a == b;
            }
            // A value that is no quantity falls through to the wildcard
            // (Kyverno's CLI tests compare `"300Mi"` with `""` this way).
            if let (Some(kq), Some(vq)) =
                (Quantity::parse(k), value.as_str().and_then(Quantity::parse))
            {
                return kq.compare(&vq) == Ordering::Equal;
            }
            value.as_str().is_some_and(|v| wildcard::matches(v, k))
        }
        Value::Object(_) => value.is_object() && deep_equal(key, ko, value, vo),
        Value::Array(_) => value.is_array() && deep_equal(key, ko, value, vo),
        Value::Null => false,
    }
}

fn not_equals(key: &Value, ko: Origin, value: &Value, vo: Origin) -> bool {
    match key {
        Value::Bool(k) => value.as_bool() != Some(*k),
        Value::Number(k) => {
            let k = k.as_f64().unwrap_or(f64::NAN);
            match value {
                Value::Number(v) => v.as_f64() != Some(k),
                Value::String(s) => parse_float(s) != Some(k),
                _ => true,
            }
        }
        Value::String(k) => {
            if let Some((a, b)) = parse_durations(key, value) {
                return a != b;
            }
            if let (Some(kq), Some(vq)) =
                (Quantity::parse(k), value.as_str().and_then(Quantity::parse))
            {
                return kq.compare(&vq) != Ordering::Equal;
            }
            match value.as_str() {
                Some(v) => !wildcard::matches(v, k),
                None => true,
            }
        }
        Value::Object(_) | Value::Array(_) => !deep_equal(key, ko, value, vo),
        Value::Null => false,
    }
}

/// Wildcard match either way round (the key may be the pattern too).
fn either_matches(a: &str, b: &str) -> bool {
    wildcard::matches(a, b) || wildcard::matches(b, a)
}

/// A value string in range form (`1-10`, `100Mi-1Gi`).
fn is_range(text: &str) -> bool {
    let bytes = text.as_bytes();
    // `[-+]?\d+(\.\d+)?[A-Za-z]*` twice, joined by `-`.
    fn operand(b: &[u8], mut i: usize) -> Option<usize> {
        if matches!(b.get(i), Some(b'-' | b'+' | b'|')) {
            i += 1;
        }
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
        if b.get(i) == Some(&b'.') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
            i += 1;
            while b.get(i).is_some_and(u8::is_ascii_digit) {
                i += 1;
            }
        }
        while b.get(i).is_some_and(u8::is_ascii_alphabetic) {
            i += 1;
        }
        Some(i)
    }
    operand(bytes, 0)
        .filter(|&i| bytes.get(i) == Some(&b'-'))
        .and_then(|i| operand(bytes, i + 1))
        .is_some_and(|end| end == bytes.len())
}

fn in_range(key: &str, range: &str) -> bool {
    StringPattern::compile(range).matches(&Value::String(key.to_string()))
}

/// A value string that is a JSON list of strings, a plain string (one
/// element, only when `allow_plain`: not valid JSON), or invalid (`None`:
/// valid JSON of another shape). JSON `null` is the empty list, as Go's
/// `json.Unmarshal` into a slice reads it.
fn string_list(text: &str, allow_plain: bool) -> Option<Vec<String>> {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Array(items)) => items
            .into_iter()
            .map(|v| match v {
                Value::String(s) => Some(s),
                _ => None,
            })
            .collect(),
        Ok(Value::Null) => Some(Vec::new()),
        Ok(_) => None,
        Err(_) if allow_plain => Some(vec![text.to_string()]),
        Err(_) => None,
    }
}

/// The key as Kyverno's set operators see it: one string (a string, a
/// number or a bool, printed as Go prints it) or a list.
enum SetKey {
    One(String),
    Many(Vec<String>),
}

fn set_key(key: &Value, origin: Origin) -> Option<SetKey> {
    match key {
        Value::String(s) => Some(SetKey::One(s.clone())),
        Value::Number(_) | Value::Bool(_) => Some(SetKey::One(go::sprint(key))),
        Value::Array(items) => Some(SetKey::Many(
            sprint_items(items, origin)
                .into_iter()
                .map(Cow::into_owned)
                .collect(),
        )),
        _ => None,
    }
}

/// Whether a value string holds scalar key `k`: as a wildcard, a range, or
/// a JSON list of strings (a plain string is a one-element list only when
/// `allow_plain`). `None` when the value is valid JSON of another shape.
fn string_contains(v: &str, k: &str, allow_plain: bool) -> Option<bool> {
    if wildcard::matches(v, k) {
        Some(true)
    } else if is_range(v) {
        Some(in_range(k, v))
    } else {
        string_list(v, allow_plain).map(|list| list.iter().any(|s| s == k))
    }
}

/// Kyverno's `anyKeyExistsInArray` / `allKeyExistsInArray` (the same
/// test): a scalar key in a list (wildcards either way round) or in a value
/// string. `None` for a value of another type.
fn key_exists(k: &str, value: &Value, origin: Origin) -> Option<bool> {
    match value {
        Value::Array(items) => Some(
            sprint_items(items, origin)
                .iter()
                .any(|v| either_matches(v, k)),
        ),
        Value::String(v) => string_contains(v, k, true),
        _ => None,
    }
}

/// The values a list key is compared with, or the answer itself when the
/// value string decides alone (one equal key, a range). `None`: invalid.
enum SetValues<'v> {
    List(Vec<Cow<'v, str>>),
    Decided(bool),
}

/// AnyIn (`negate` = AnyNotIn: some key is in no value).
fn any_in(key: &Value, ko: Origin, value: &Value, vo: Origin, negate: bool) -> bool {
    match set_key(key, ko) {
        None => false,
        Some(SetKey::One(k)) => key_exists(&k, value, vo).is_some_and(|e| e != negate),
        Some(SetKey::Many(keys)) => {
            let values = match value {
                Value::Array(items) => SetValues::List(sprint_items(items, vo)),
                Value::Number(_) | Value::Bool(_) => SetValues::List(vec![go::sprint_cow(value)]),
                Value::String(v) => {
                    if keys.len() == 1 && keys.first() == Some(v) {
                        SetValues::Decided(!negate)
                    } else if is_range(v) {
                        SetValues::Decided(if negate {
                            let not_range = v.replacen('-', "!-", 1);
                            keys.iter().any(|k| in_range(k, &not_range))
                        } else {
                            keys.iter().any(|k| in_range(k, v))
                        })
                    } else {
                        match string_list(v, true) {
                            Some(list) => {
                                SetValues::List(list.into_iter().map(Cow::Owned).collect())
                            }
                            None => return false,
                        }
                    }
                }
                _ => return false,
            };
            match values {
                SetValues::Decided(answer) => answer,
                SetValues::List(values) => {
                    let found = |k: &String| values.iter().any(|v| either_matches(k, v));
                    if negate {
                        keys.iter().any(|k| !found(k))
                    } else {
                        keys.iter().any(found)
                    }
                }
            }
        }
    }
}

/// AllIn (`negate` = AllNotIn: no key is in any value).
fn all_in(key: &Value, ko: Origin, value: &Value, vo: Origin, negate: bool) -> bool {
    match set_key(key, ko) {
        None => false,
        Some(SetKey::One(k)) => key_exists(&k, value, vo).is_some_and(|e| e != negate),
        Some(SetKey::Many(keys)) => {
            let values = match value {
                Value::Array(items) => SetValues::List(sprint_items(items, vo)),
                Value::String(v) => {
                    if keys.len() == 1 && keys.first() == Some(v) {
                        SetValues::Decided(!negate)
                    } else if is_range(v) {
                        SetValues::Decided(if negate {
                            !keys.iter().any(|k| in_range(k, v))
                        } else {
                            keys.iter().all(|k| in_range(k, v))
                        })
                    } else {
                        match string_list(v, true) {
                            Some(list) => {
                                SetValues::List(list.into_iter().map(Cow::Owned).collect())
                            }
                            None => return false,
                        }
                    }
                }
                _ => return false,
            };
            match values {
                SetValues::Decided(answer) => answer,
                SetValues::List(values) => {
                    let found = |k: &String| values.iter().any(|v| either_matches(k, v));
                    if negate {
                        !keys.iter().any(found)
                    } else {
                        keys.iter().all(found)
                    }
                }
            }
        }
    }
}

/// The deprecated In / NotIn: a scalar key as AnyIn tests it (without
/// ranges or plain strings), a list key by exact set membership.
fn legacy_in(key: &Value, value: &Value, vo: Origin, negate: bool) -> bool {
    match key {
        Value::String(_) | Value::Number(_) | Value::Bool(_) => {
            let k = go::sprint(key);
            let exists = match value {
                Value::Array(items) => Some(
                    sprint_items(items, vo)
                        .iter()
                        .any(|v| either_matches(v, &k)),
                ),
                Value::String(v) => {
                    if wildcard::matches(v, &k) {
                        Some(true)
                    } else {
                        string_list(v, false).map(|list| list.contains(&k))
                    }
                }
                _ => None,
            };
            exists.is_some_and(|e| e != negate)
        }
        Value::Array(items) => {
            let Some(keys) = items
                .iter()
                .map(|v| v.as_str().map(str::to_string))
                .collect::<Option<Vec<String>>>()
            else {
                return false;
            };
            let values: Vec<String> = match value {
                Value::Array(vs) => match vs
                    .iter()
                    .map(|v| v.as_str().map(str::to_string))
                    .collect::<Option<Vec<String>>>()
                {
                    Some(vs) => vs,
                    None => return false,
                },
                Value::String(v) => {
                    // Kyverno answers `true` here for NotIn as well.
                    if keys.len() == 1 && keys.first() == Some(v) {
                        return true;
                    }
                    match string_list(v, false) {
                        Some(list) => list,
                        None => return false,
                    }
                }
                _ => return false,
            };
            let missing = keys.iter().any(|k| !values.contains(k));
            if negate {
                missing
            } else {
                !missing
            }
        }
        _ => false,
    }
}

/// A strict semantic version (`MAJOR.MINOR.PATCH[-pre][+build]`), as blang's
/// `semver.Parse` reads it.
fn semver(text: &str) -> Option<semver::Version> {
    semver::Version::parse(text).ok()
}

fn numeric_float(key: f64, value: &Value, c: Compare) -> bool {
    match value {
        Value::Number(v) => v.as_f64().is_some_and(|v| c.floats(key, v)),
        Value::String(s) => {
            if let Some((a, b)) = parse_durations(&go::number(key), value) {
                return c.holds(a.cmp(&b));
            }
            match parse_float(s) {
                Some(v) => c.floats(key, v),
                None => false,
            }
        }
        _ => false,
    }
}

fn numeric(key: &Value, value: &Value, c: Compare) -> bool {
    match key {
        Value::Number(k) => numeric_float(k.as_f64().unwrap_or(f64::NAN), value, c),
        Value::String(k) => {
            if let Some((a, b)) = parse_durations(key, value) {
                return c.holds(a.cmp(&b));
            }
            if let (Some(kq), Some(vq)) =
                (Quantity::parse(k), value.as_str().and_then(Quantity::parse))
            {
                return c.holds(kq.compare(&vq));
            }
            if let Some(kf) = parse_float(k) {
                return numeric_float(kf, value, c);
            }
            if let Some(kv) = semver(k) {
                return value
                    .as_str()
                    .and_then(semver)
                    .is_some_and(|vv| c.holds(kv.cmp_precedence(&vv)));
            }
            false
        }
        _ => false,
    }
}

/// The deprecated Duration* operators: numbers are seconds, strings Go
/// durations (`"0"` included).
fn duration_op(key: &Value, value: &Value, c: Compare) -> bool {
    let nanos = |v: &Value| match v {
        Value::Number(_) => number_nanos(v),
        Value::String(s) => duration::parse(s).and_then(|ns| i64::try_from(ns).ok()),
        _ => None,
    };
    match (nanos(key), nanos(value)) {
        (Some(k), Some(v)) => c.holds(k.cmp(&v)),
        _ => false,
    }
}

#[cfg(test)]
mod tests;
