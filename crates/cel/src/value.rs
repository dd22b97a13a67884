//! CEL values. Inputs stay `serde_json` values borrowed for the whole
//! evaluation: `Value::Json` wraps an array or object lazily, and a field
//! read from it becomes a scalar `Value` without copying strings.

use std::cmp::Ordering;
use std::fmt;
use std::net::IpAddr;
use std::ops::Deref;
use std::rc::Rc;

use kube_units::quantity::QuantityValue;
use kube_units::semver::Version;

use crate::budget::Budget;
use crate::error::EvalError;
use crate::format::NamedFormat;
use crate::ip::Cidr;
use crate::time::Timestamp;
use crate::url::Url;

/// A string borrowed from the inputs or the program, or built while
/// evaluating.
#[derive(Clone, Debug)]
pub enum Str<'a> {
    Borrowed(&'a str),
    Owned(Rc<str>),
}

impl Deref for Str<'_> {
    type Target = str;
    fn deref(&self) -> &str {
        match self {
            Str::Borrowed(s) => s,
            Str::Owned(s) => s,
        }
    }
}

impl From<String> for Str<'_> {
    fn from(s: String) -> Self {
        Str::Owned(Rc::from(s))
    }
}

/// Bytes, borrowed from the program or built while evaluating.
#[derive(Clone, Debug)]
pub enum Bin<'a> {
    Borrowed(&'a [u8]),
    Owned(Rc<[u8]>),
}

impl Deref for Bin<'_> {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bin::Borrowed(b) => b,
            Bin::Owned(b) => b,
        }
    }
}

/// CEL types, as `type(x)` returns them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    Null,
    Bool,
    Int,
    Uint,
    Double,
    String,
    Bytes,
    List,
    Map,
    Type,
    Duration,
    Timestamp,
    Optional,
    Quantity,
    Url,
    Ip,
    Cidr,
    Semver,
    Format,
}

impl Type {
    pub fn name(self) -> &'static str {
        match self {
            Type::Null => "null_type",
            Type::Bool => "bool",
            Type::Int => "int",
            Type::Uint => "uint",
            Type::Double => "double",
            Type::String => "string",
            Type::Bytes => "bytes",
            Type::List => "list",
            Type::Map => "map",
            Type::Type => "type",
            Type::Duration => "google.protobuf.Duration",
            Type::Timestamp => "google.protobuf.Timestamp",
            Type::Optional => "optional_type",
            Type::Quantity => "kubernetes.Quantity",
            Type::Url => "kubernetes.URL",
            Type::Ip => "net.IP",
            Type::Cidr => "net.CIDR",
            Type::Semver => "kubernetes.Semver",
            Type::Format => "kubernetes.NamedFormat",
        }
    }

    /// The type a (possibly qualified) identifier names, if any.
    pub(crate) fn from_name(name: &str) -> Option<Type> {
        Some(match name {
            "null_type" => Type::Null,
            "bool" => Type::Bool,
            "int" => Type::Int,
            "uint" => Type::Uint,
            "double" => Type::Double,
            "string" => Type::String,
            "bytes" => Type::Bytes,
            "list" => Type::List,
            "map" => Type::Map,
            "type" => Type::Type,
            "google.protobuf.Duration" => Type::Duration,
            "google.protobuf.Timestamp" => Type::Timestamp,
            "optional_type" => Type::Optional,
            "kubernetes.Quantity" => Type::Quantity,
            "kubernetes.URL" => Type::Url,
            "net.IP" => Type::Ip,
            "net.CIDR" => Type::Cidr,
            "kubernetes.Semver" => Type::Semver,
            "kubernetes.NamedFormat" => Type::Format,
            _ => return None,
        })
    }
}

/// A map key: CEL allows bool, int, uint and string keys.
#[derive(Clone, Debug)]
pub enum Key<'a> {
    Bool(bool),
    Int(i64),
    Uint(u64),
    String(Str<'a>),
}

/// Keys normalised for lookup: `1`, `1u` and `1.0` find the same entry.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum KeyRef<'k> {
    Bool(bool),
    Num(i128),
    /// A string's bytes (which order strings as their text does).
    Str(&'k [u8]),
}

impl<'a> Key<'a> {
    fn as_ref(&self) -> KeyRef<'_> {
        match self {
            Key::Bool(b) => KeyRef::Bool(*b),
            Key::Int(i) => KeyRef::Num(i128::from(*i)),
            Key::Uint(u) => KeyRef::Num(i128::from(*u)),
            Key::String(s) => KeyRef::Str(s.as_bytes()),
        }
    }

    pub(crate) fn to_value(&self) -> Value<'a> {
        match self {
            Key::Bool(b) => Value::Bool(*b),
            Key::Int(i) => Value::Int(*i),
            Key::Uint(u) => Value::Uint(*u),
            Key::String(s) => Value::String(s.clone()),
        }
    }

    /// The key a value makes, or `None` for types that cannot be keys.
    pub(crate) fn from_value(v: &Value<'a>) -> Option<Self> {
        Some(match v {
            Value::Bool(b) => Key::Bool(*b),
            Value::Int(i) => Key::Int(*i),
            Value::Uint(u) => Key::Uint(*u),
            Value::String(s) => Key::String(s.clone()),
            _ => return None,
        })
    }
}

/// How a value looks up a key; `None` when it can match no key.
pub(crate) fn key_ref<'k>(v: &'k Value<'_>) -> Option<KeyRef<'k>> {
    Some(match v {
        Value::Bool(b) => KeyRef::Bool(*b),
        Value::Int(i) => KeyRef::Num(i128::from(*i)),
        Value::Uint(u) => KeyRef::Num(i128::from(*u)),
        Value::Double(d) => KeyRef::Num(double_to_exact_int(*d)?),
        Value::String(s) => KeyRef::Str(s.as_bytes()),
        _ => return None,
    })
}

/// `d` as an integer when it is one exactly (and within 128 bits).
fn double_to_exact_int(d: f64) -> Option<i128> {
    if d.is_finite() && d.fract() == 0.0 && d.abs() < 1.7e38 {
        #[allow(clippy::cast_possible_truncation)]
        Some(d as i128)
    } else {
        None
    }
}

/// A map built while evaluating. Small maps are searched linearly; larger
/// ones keep a sorted index so lookups stay logarithmic.
#[derive(Clone, Debug)]
pub struct Map<'a> {
    entries: Vec<(Key<'a>, Value<'a>)>,
    index: Vec<u32>,
}

const LINEAR_MAP: usize = 8;

impl<'a> Map<'a> {
    /// The map of `entries`, or the first key given twice.
    pub(crate) fn new(entries: Vec<(Key<'a>, Value<'a>)>) -> Result<Self, Key<'a>> {
        let mut map = Self {
            entries,
            index: Vec::new(),
        };
        if map.entries.len() <= LINEAR_MAP {
            for (i, (k, _)) in map.entries.iter().enumerate() {
                let seen = map.entries.get(..i).unwrap_or(&[]);
                if seen.iter().any(|(other, _)| other.as_ref() == k.as_ref()) {
                    return Err(k.clone());
                }
            }
            return Ok(map);
        }
        let count = u32::try_from(map.entries.len()).unwrap_or(u32::MAX);
        let mut index: Vec<u32> = (0..count).collect();
        let key_at = |i: &u32| map.entries.get(*i as usize).map(|(k, _)| k.as_ref());
        index.sort_by(|a, b| key_at(a).cmp(&key_at(b)));
        for pair in index.windows(2) {
            if let [a, b] = pair {
                if key_at(a) == key_at(b) {
                    let dup = map.entries.get(*b as usize).map(|(k, _)| k.clone());
                    return Err(dup.unwrap_or(Key::Bool(false)));
                }
            }
        }
        map.index = index;
        Ok(map)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value at `key` (`1`, `1u` and `1.0` find the same entry).
    pub fn get(&self, key: &Value<'_>) -> Option<&Value<'a>> {
        self.find(key_ref(key)?)
    }

    /// The value at the string key `key`, given as bytes.
    pub(crate) fn get_name(&self, key: &[u8]) -> Option<&Value<'a>> {
        self.find(KeyRef::Str(key))
    }

    fn find(&self, key: KeyRef<'_>) -> Option<&Value<'a>> {
        if self.index.is_empty() {
            return self
                .entries
                .iter()
                .find(|(k, _)| k.as_ref() == key)
                .map(|(_, v)| v);
        }
        let at = self
            .index
            .binary_search_by(|i| {
                self.entries
                    .get(*i as usize)
                    .map_or(Ordering::Less, |(k, _)| k.as_ref().cmp(&key))
            })
            .ok()?;
        let i = *self.index.get(at)?;
        self.entries.get(i as usize).map(|(_, v)| v)
    }

    /// The entries, in the order they were written.
    pub fn entries(&self) -> &[(Key<'a>, Value<'a>)] {
        &self.entries
    }
}

/// A CEL value.
#[derive(Clone, Debug)]
pub enum Value<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Str<'a>),
    Bytes(Bin<'a>),
    List(Rc<Vec<Value<'a>>>),
    Map(Rc<Map<'a>>),
    /// A JSON array or object from the inputs, read lazily.
    Json(&'a serde_json::Value),
    Optional(Option<Rc<Value<'a>>>),
    /// Nanoseconds.
    Duration(i64),
    Timestamp(Timestamp),
    Type(Type),
    Quantity(Rc<QuantityValue>),
    Url(Rc<Url>),
    Ip(IpAddr),
    Cidr(Cidr),
    Semver(Rc<Version>),
    Format(NamedFormat),
}

impl<'a> Value<'a> {
    /// A JSON value as CEL sees it through Kubernetes' unstructured
    /// decoding: integral numbers that fit `int64` are `int`, others
    /// (fractions, and integers beyond `int64`) `double`; arrays and
    /// objects stay borrowed.
    pub fn from_json(v: &'a serde_json::Value) -> Self {
        match v {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    Value::Int(i)
                } else {
                    Value::Double(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            serde_json::Value::String(s) => Value::String(Str::Borrowed(s)),
            serde_json::Value::Array(_) | serde_json::Value::Object(_) => Value::Json(v),
        }
    }

    pub(crate) fn string(s: String) -> Self {
        Value::String(Str::from(s))
    }

    pub(crate) fn list(items: Vec<Value<'a>>) -> Self {
        Value::List(Rc::new(items))
    }

    pub(crate) fn optional(v: Option<Value<'a>>) -> Self {
        Value::Optional(v.map(Rc::new))
    }

    pub fn type_of(&self) -> Type {
        match self {
            Value::Null => Type::Null,
            Value::Bool(_) => Type::Bool,
            Value::Int(_) => Type::Int,
            Value::Uint(_) => Type::Uint,
            Value::Double(_) => Type::Double,
            Value::String(_) => Type::String,
            Value::Bytes(_) => Type::Bytes,
            Value::List(_) => Type::List,
            Value::Map(_) => Type::Map,
            Value::Json(serde_json::Value::Array(_)) => Type::List,
            Value::Json(_) => Type::Map,
            Value::Optional(_) => Type::Optional,
            Value::Duration(_) => Type::Duration,
            Value::Timestamp(_) => Type::Timestamp,
            Value::Type(_) => Type::Type,
            Value::Quantity(_) => Type::Quantity,
            Value::Url(_) => Type::Url,
            Value::Ip(_) => Type::Ip,
            Value::Cidr(_) => Type::Cidr,
            Value::Semver(_) => Type::Semver,
            Value::Format(_) => Type::Format,
        }
    }

    pub fn type_name(&self) -> &'static str {
        self.type_of().name()
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn as_list(&self) -> Option<ListRef<'_, 'a>> {
        match self {
            Value::List(items) => Some(ListRef::Owned(items)),
            Value::Json(serde_json::Value::Array(items)) => Some(ListRef::Json(items)),
            _ => None,
        }
    }

    pub(crate) fn as_map(&self) -> Option<MapRef<'_, 'a>> {
        match self {
            Value::Map(m) => Some(MapRef::Owned(m)),
            Value::Json(serde_json::Value::Object(m)) => Some(MapRef::Json(m)),
            _ => None,
        }
    }

    /// The value as JSON; `None` for what JSON cannot hold (bytes,
    /// non-finite doubles, maps with non-string keys).
    pub fn to_json(&self) -> Option<serde_json::Value> {
        use serde_json::Value as J;
        Some(match self {
            Value::Null => J::Null,
            Value::Bool(b) => J::Bool(*b),
            Value::Int(i) => J::from(*i),
            Value::Uint(u) => J::from(*u),
            Value::Double(d) => J::Number(serde_json::Number::from_f64(*d)?),
            Value::String(s) => J::String(s.to_string()),
            Value::Bytes(_) => return None,
            Value::Json(j) => (*j).clone(),
            Value::List(items) => J::Array(
                items
                    .iter()
                    .map(Value::to_json)
                    .collect::<Option<Vec<_>>>()?,
            ),
            Value::Map(m) => {
                let mut out = serde_json::Map::new();
                for (k, v) in m.entries() {
                    let Key::String(k) = k else { return None };
                    out.insert(k.to_string(), v.to_json()?);
                }
                J::Object(out)
            }
            Value::Optional(v) => match v {
                Some(v) => v.to_json()?,
                None => J::Null,
            },
            other => J::String(other.to_string()),
        })
    }
}

/// A field of a JSON object. Kubernetes objects are mostly small maps,
/// where a scan of the entries beats hashing the key.
fn json_get<'a>(
    m: &'a serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<&'a serde_json::Value> {
    if m.len() <= 8 {
        json_scan(m, key.as_bytes())
    } else {
        m.get(key)
    }
}

/// `json_get` for a name of the program, given as bytes: these are scanned
/// up to 16 entries, since turning them into text, as a larger map needs,
/// costs about as much.
fn json_get_name<'a>(
    m: &'a serde_json::Map<String, serde_json::Value>,
    key: &[u8],
) -> Option<&'a serde_json::Value> {
    if m.len() <= 16 {
        json_scan(m, key)
    } else {
        m.get(std::str::from_utf8(key).ok()?)
    }
}

fn json_scan<'a>(
    m: &'a serde_json::Map<String, serde_json::Value>,
    key: &[u8],
) -> Option<&'a serde_json::Value> {
    m.iter().find(|(k, _)| k.as_bytes() == key).map(|(_, v)| v)
}

/// A list, owned or a borrowed JSON array.
#[derive(Clone, Copy)]
pub(crate) enum ListRef<'v, 'a> {
    Owned(&'v [Value<'a>]),
    Json(&'a [serde_json::Value]),
}

impl<'v, 'a> ListRef<'v, 'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            ListRef::Owned(items) => items.len(),
            ListRef::Json(items) => items.len(),
        }
    }

    pub(crate) fn get(&self, i: usize) -> Option<Value<'a>> {
        match self {
            ListRef::Owned(items) => items.get(i).cloned(),
            ListRef::Json(items) => items.get(i).map(Value::from_json),
        }
    }

    pub(crate) fn iter(self) -> ListIter<'v, 'a> {
        match self {
            ListRef::Owned(items) => ListIter::Owned(items.iter()),
            ListRef::Json(items) => ListIter::Json(items.iter()),
        }
    }
}

pub(crate) enum ListIter<'v, 'a> {
    Owned(std::slice::Iter<'v, Value<'a>>),
    Json(std::slice::Iter<'a, serde_json::Value>),
}

impl<'a> Iterator for ListIter<'_, 'a> {
    type Item = Value<'a>;
    fn next(&mut self) -> Option<Value<'a>> {
        match self {
            ListIter::Owned(it) => it.next().cloned(),
            ListIter::Json(it) => it.next().map(Value::from_json),
        }
    }
}

/// A map, owned or a borrowed JSON object.
#[derive(Clone, Copy)]
pub(crate) enum MapRef<'v, 'a> {
    Owned(&'v Map<'a>),
    Json(&'a serde_json::Map<String, serde_json::Value>),
}

impl<'v, 'a> MapRef<'v, 'a> {
    pub(crate) fn len(&self) -> usize {
        match self {
            MapRef::Owned(m) => m.len(),
            MapRef::Json(m) => m.len(),
        }
    }

    pub(crate) fn get(&self, key: &Value<'_>) -> Option<Value<'a>> {
        match self {
            MapRef::Owned(m) => m.get(key).cloned(),
            MapRef::Json(m) => match key {
                Value::String(s) => json_get(m, s).map(Value::from_json),
                _ => None,
            },
        }
    }

    /// The value at the string key `key`, given as bytes.
    pub(crate) fn get_name(&self, key: &[u8]) -> Option<Value<'a>> {
        match self {
            MapRef::Owned(m) => m.get_name(key).cloned(),
            MapRef::Json(m) => json_get_name(m, key).map(Value::from_json),
        }
    }

    pub(crate) fn iter(self) -> MapIter<'v, 'a> {
        match self {
            MapRef::Owned(m) => MapIter::Owned(m.entries().iter()),
            MapRef::Json(m) => MapIter::Json(m.iter()),
        }
    }
}

pub(crate) enum MapIter<'v, 'a> {
    Owned(std::slice::Iter<'v, (Key<'a>, Value<'a>)>),
    Json(serde_json::map::Iter<'a>),
}

impl<'a> Iterator for MapIter<'_, 'a> {
    type Item = (Value<'a>, Value<'a>);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            MapIter::Owned(it) => it.next().map(|(k, v)| (k.to_value(), v.clone())),
            MapIter::Json(it) => it
                .next()
                .map(|(k, v)| (Value::String(Str::Borrowed(k)), Value::from_json(v))),
        }
    }
}

/// Exact comparison of an integer with a double (`None` for NaN).
pub(crate) fn cmp_int_double(i: i128, d: f64) -> Option<Ordering> {
    if d.is_nan() {
        return None;
    }
    // Beyond ±2^100 every i64/u64 is on one side.
    const FAR: f64 = 1.267_650_600_228_229_4e30;
    if d >= FAR {
        return Some(Ordering::Less);
    }
    if d <= -FAR {
        return Some(Ordering::Greater);
    }
    #[allow(clippy::cast_possible_truncation)]
    let whole = d.trunc() as i128;
    Some(match i.cmp(&whole) {
        Ordering::Equal => 0.0f64.partial_cmp(&d.fract()).unwrap_or(Ordering::Equal),
        other => other,
    })
}

/// Numeric ordering across int, uint and double.
pub(crate) fn cmp_numbers(a: &Value<'_>, b: &Value<'_>) -> Option<Option<Ordering>> {
    let int = |v: &Value<'_>| match v {
        Value::Int(i) => Some(i128::from(*i)),
        Value::Uint(u) => Some(i128::from(*u)),
        _ => None,
    };
    Some(match (a, b) {
        (Value::Double(x), Value::Double(y)) => x.partial_cmp(y),
        (Value::Double(x), other) => cmp_int_double(int(other)?, *x).map(Ordering::reverse),
        (other, Value::Double(y)) => cmp_int_double(int(other)?, *y),
        _ => Some(int(a)?.cmp(&int(b)?)),
    })
}

/// CEL equality: never an error except when the budget runs out; values
/// of different types are unequal, numbers compare by value, lists and
/// maps deeply.
pub(crate) fn equal(a: &Value<'_>, b: &Value<'_>, budget: &mut Budget) -> Result<bool, EvalError> {
    budget.charge(1)?;
    Ok(match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::String(x), Value::String(y)) => {
            budget.charge_len(x.len().min(y.len()))?;
            **x == **y
        }
        (Value::Bytes(x), Value::Bytes(y)) => **x == **y,
        (Value::Duration(x), Value::Duration(y)) => x == y,
        (Value::Timestamp(x), Value::Timestamp(y)) => x == y,
        (Value::Type(x), Value::Type(y)) => x == y,
        (Value::Quantity(x), Value::Quantity(y)) => crate::quantity::compare(x, y).is_eq(),
        (Value::Url(x), Value::Url(y)) => x == y,
        (Value::Ip(x), Value::Ip(y)) => x == y,
        (Value::Cidr(x), Value::Cidr(y)) => x == y,
        (Value::Semver(x), Value::Semver(y)) => x == y,
        (Value::Format(x), Value::Format(y)) => x == y,
        (Value::Optional(x), Value::Optional(y)) => match (x, y) {
            (None, None) => true,
            (Some(x), Some(y)) => equal(x, y, budget)?,
            _ => false,
        },
        (Value::Json(x), Value::Json(y)) if std::ptr::eq(*x, *y) => true,
        _ => {
            if let Some(ord) = cmp_numbers(a, b) {
                return Ok(ord == Some(Ordering::Equal));
            }
            if let (Some(x), Some(y)) = (a.as_list(), b.as_list()) {
                if x.len() != y.len() {
                    return Ok(false);
                }
                for (x, y) in x.iter().zip(y.iter()) {
                    if !equal(&x, &y, budget)? {
                        return Ok(false);
                    }
                }
                return Ok(true);
            }
            if let (Some(x), Some(y)) = (a.as_map(), b.as_map()) {
                if x.len() != y.len() {
                    return Ok(false);
                }
                for (k, v) in x.iter() {
                    match y.get(&k) {
                        Some(w) if equal(&v, &w, budget)? => {}
                        _ => return Ok(false),
                    }
                }
                return Ok(true);
            }
            false
        }
    })
}

impl PartialEq for Value<'_> {
    /// CEL's `==`, without a budget.
    fn eq(&self, other: &Self) -> bool {
        equal(self, other, &mut Budget::new(u64::MAX)).unwrap_or(false)
    }
}

/// Go's `%g` for a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`):
/// shortest digits, exponent form below 1e-4 and from 1e6.
pub(crate) fn format_double(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let sci = format!("{:e}", f.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let dot = if rest.is_empty() { "" } else { "." };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{dot}{rest}e{esign}{:02}", exp.unsigned_abs());
    }
    if exp < 0 {
        let zeros = "0".repeat(exp.unsigned_abs() as usize - 1);
        return format!("{sign}0.{zeros}{digits}");
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        let zeros = "0".repeat(int_len - digits.len());
        format!("{sign}{digits}{zeros}")
    } else {
        let (int, frac) = digits.split_at(int_len);
        format!("{sign}{int}.{frac}")
    }
}

/// Writes `s` as a CEL/Go double-quoted string.
pub(crate) fn write_quoted(f: &mut impl fmt::Write, s: &str) -> fmt::Result {
    f.write_char('"')?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if c.is_control() => write!(f, "\\u{:04x}", u32::from(c))?,
            c => f.write_char(c)?,
        }
    }
    f.write_char('"')
}

impl Value<'_> {
    /// Like `Display`, but strings (and bytes) are quoted, as inside lists.
    fn fmt_nested(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::String(s) => write_quoted(f, s),
            Value::Bytes(b) => {
                f.write_char('b')?;
                write_quoted(f, &String::from_utf8_lossy(b))
            }
            other => fmt::Display::fmt(other, f),
        }
    }
}

use std::fmt::Write as _;

impl fmt::Display for Value<'_> {
    /// cel-go's text for the value: what `string(x)` gives for scalars,
    /// `[1, "a"]` and `{"k": 1}` for lists and maps.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Uint(u) => write!(f, "{u}"),
            Value::Double(d) => f.write_str(&format_double(*d)),
            Value::String(s) => f.write_str(s),
            Value::Bytes(b) => f.write_str(&String::from_utf8_lossy(b)),
            Value::Json(_) | Value::List(_) | Value::Map(_) => {
                if let Some(list) = self.as_list() {
                    f.write_char('[')?;
                    for (i, item) in list.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        item.fmt_nested(f)?;
                    }
                    return f.write_char(']');
                }
                if let Some(map) = self.as_map() {
                    f.write_char('{')?;
                    for (i, (k, v)) in map.iter().enumerate() {
                        if i > 0 {
                            f.write_str(", ")?;
                        }
                        k.fmt_nested(f)?;
                        f.write_str(": ")?;
                        v.fmt_nested(f)?;
                    }
                    return f.write_char('}');
                }
                Ok(())
            }
            Value::Optional(None) => f.write_str("optional.none()"),
            Value::Optional(Some(v)) => {
                f.write_str("optional.of(")?;
                v.fmt_nested(f)?;
                f.write_char(')')
            }
            Value::Duration(d) => f.write_str(&crate::time::duration_string(*d)),
            Value::Timestamp(t) => f.write_str(&crate::time::timestamp_string(*t)),
            Value::Type(t) => f.write_str(t.name()),
            Value::Quantity(q) => f.write_str(&q.canonical()),
            Value::Url(u) => f.write_str(u.as_str()),
            Value::Ip(ip) => write!(f, "{ip}"),
            Value::Cidr(c) => write!(f, "{c}"),
            Value::Semver(v) => write!(f, "{v}"),
            Value::Format(n) => f.write_str(n.name()),
        }
    }
}

/// "no matching overload" for `function` applied to `args`.
pub(crate) fn no_overload(function: &str, args: &[Value<'_>]) -> EvalError {
    let types: Vec<&str> = args.iter().map(Value::type_name).collect();
    EvalError::NoMatchingOverload {
        function: function.to_string(),
        args: types.join(", "),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn json_numbers_become_int_or_double() {
        let cases = [
            ("integral", json!(3), Value::Int(3)),
            ("negative", json!(-3), Value::Int(-3)),
            // Kubernetes decodes integers beyond int64 as float64.
            (
                "beyond_i64_is_double",
                json!(u64::MAX),
                Value::Double(u64::MAX as f64),
            ),
            ("fraction_is_double", json!(1.5), Value::Double(1.5)),
            ("null", json!(null), Value::Null),
        ];
        for (name, j, want) in cases {
            let got = Value::from_json(&j);
            assert_eq!(got.type_of(), want.type_of(), "{name}");
            assert_eq!(got, want, "{name}");
        }
    }

    #[test]
    fn equality_follows_cel() {
        let j = json!({"a": [1, 2.0, "x"], "b": {"c": null}});
        let lit = Value::Map(Rc::new(
            Map::new(vec![
                (
                    Key::String(Str::Borrowed("a")),
                    Value::list(vec![
                        Value::Uint(1),
                        Value::Int(2),
                        Value::String(Str::Borrowed("x")),
                    ]),
                ),
                (Key::String(Str::Borrowed("b")), Value::from_json(&j["b"])),
            ])
            .unwrap(),
        ));
        let cases = [
            (
                "json_equals_literal",
                Value::from_json(&j),
                lit.clone(),
                true,
            ),
            ("int_uint", Value::Int(1), Value::Uint(1), true),
            ("int_double", Value::Int(1), Value::Double(1.0), true),
            (
                "int_double_fraction",
                Value::Int(1),
                Value::Double(1.5),
                false,
            ),
            (
                "nan",
                Value::Double(f64::NAN),
                Value::Double(f64::NAN),
                false,
            ),
            (
                "mixed_types",
                Value::Int(1),
                Value::String(Str::Borrowed("1")),
                false,
            ),
            ("null_null", Value::Null, Value::Null, true),
            ("null_vs_map", Value::Null, lit, false),
            (
                "list_lengths",
                Value::list(vec![Value::Int(1)]),
                Value::list(vec![]),
                false,
            ),
        ];
        for (name, a, b, want) in cases {
            assert_eq!(a == b, want, "{name}");
            assert_eq!(b == a, want, "{name} (swapped)");
        }
    }

    #[test]
    fn map_keys_unify_numbers_and_reject_duplicates() {
        let small = Map::new(vec![(Key::Int(1), Value::Bool(true))]).unwrap();
        assert!(small.get(&Value::Uint(1)).is_some());
        assert!(small.get(&Value::Double(1.0)).is_some());
        assert!(small.get(&Value::Double(1.5)).is_none());
        let many: Vec<_> = (0..20).map(|i| (Key::Int(i), Value::Int(i * 2))).collect();
        let big = Map::new(many).unwrap();
        assert_eq!(big.get(&Value::Uint(7)), Some(&Value::Int(14)));
        assert!(big.get(&Value::Int(20)).is_none());
        let dup = Map::new(vec![
            (Key::Int(1), Value::Null),
            (Key::Uint(1), Value::Null),
        ]);
        assert!(dup.is_err());
        let mut many: Vec<_> = (0..20).map(|i| (Key::Int(i), Value::Null)).collect();
        many.push((Key::Uint(3), Value::Null));
        assert!(Map::new(many).is_err());
    }

    #[test]
    fn doubles_print_like_go_percent_g() {
        let cases = [
            ("integral", 3.0, "3"),
            ("fraction", 2.5, "2.5"),
            ("million_uses_exponent", 1e6, "1e+06"),
            ("below_million", 123456.0, "123456"),
            ("long", 1234567.0, "1.234567e+06"),
            ("small", 0.0001, "0.0001"),
            ("smaller", 0.00001, "1e-05"),
            ("tiny", 2e-9, "2e-09"),
            ("negative", -1.5, "-1.5"),
            ("zero", 0.0, "0"),
            ("infinity", f64::INFINITY, "+Inf"),
        ];
        for (name, f, want) in cases {
            assert_eq!(format_double(f), want, "{name}");
        }
    }

    #[test]
    fn display_reads_like_cel() {
        let j = json!({"a": ["x", 1]});
        assert_eq!(Value::from_json(&j).to_string(), r#"{"a": ["x", 1]}"#);
        assert_eq!(Value::String(Str::Borrowed("top")).to_string(), "top");
        assert_eq!(Value::optional(None).to_string(), "optional.none()");
    }
}
