//! The settings as a JSON tree that borrows its text from the payload.
//!
//! policy-server sends the settings with every request, so reading them is
//! paid per request. A `serde_json::Value` gives every string its own
//! allocation and every object a B-tree node sized for eleven keys; for the
//! 14 KB of Kyverno's Pod Security rules that is about 200 KB of fresh
//! memory, which a fresh wasm instance pays for page by page. [`Json`]
//! borrows strings that need no unescaping and sizes lists and objects
//! exactly (about 25 KB for the same settings). Objects keep their keys
//! sorted and unique, the last duplicate winning, so they read and iterate
//! exactly as a `serde_json::Value` would.

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::roles;

mod reader;

#[derive(Debug, Clone, PartialEq, Default)]
pub enum Json<'a> {
    #[default]
    Null,
    Bool(bool),
    /// Boxed: numbers are rare in settings, and unboxed they make every
    /// value half as large again (16 bytes aligned to 8 in wasm32).
    Number(Box<Number>),
    String(Cow<'a, str>),
    Array(Box<[Json<'a>]>),
    Object(Map<'a>),
}

/// A settings value, borrowed from the settings or rewritten (autogen).
/// `Cow<Json>` would make every settings type invariant in its lifetime
/// (through `ToOwned::Owned`); this keeps them covariant, so a compiled
/// rule can keep a reference to the rule it came from.
/// Like `Cow`, it compares and prints as the value it holds.
#[derive(Clone)]
pub enum JsonCow<'a> {
    Borrowed(&'a Json<'a>),
    Owned(Json<'a>),
}

impl<'a> JsonCow<'a> {
    /// The value, copied if borrowed.
    pub fn into_owned(self) -> Json<'a> {
        match self {
            Self::Borrowed(v) => v.clone(),
            Self::Owned(v) => v,
        }
    }
}

impl<'a> std::ops::Deref for JsonCow<'a> {
    type Target = Json<'a>;

    fn deref(&self) -> &Json<'a> {
        match self {
            Self::Borrowed(v) => v,
            Self::Owned(v) => v,
        }
    }
}

impl PartialEq for JsonCow<'_> {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl std::fmt::Debug for JsonCow<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        (**self).fmt(f)
    }
}

impl<'a> AsRef<Json<'a>> for JsonCow<'a> {
    fn as_ref(&self) -> &Json<'a> {
        self
    }
}

/// Objects up to this many entries are searched in order.
const SMALL_MAP: usize = 8;

/// Whether two keys are equal, comparing lengths and first bytes before
/// the text (a `memcmp` call in wasm): most settings keys differ there.
pub fn same_key(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.as_bytes().first() == b.as_bytes().first() && a == b
}

/// An object's entries, sorted by key, keys unique.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Map<'a>(Box<[(Cow<'a, str>, Json<'a>)]>);

impl<'a> Map<'a> {
    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        // Settings objects are small and their fields are looked up many
        // times: an in-order scan with [`same_key`] beats the binary
        // search's comparisons there.
        if self.0.len() <= SMALL_MAP {
            return self
                .0
                .iter()
                .find(|(k, _)| same_key(k, key))
                .map(|(_, v)| v);
        }
        self.0
            .binary_search_by(|(k, _)| k.as_ref().cmp(key))
            .ok()
            .and_then(|i| self.0.get(i))
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.get(key).is_some()
    }

    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&str, &Json<'a>)> {
        self.0.iter().map(|(k, v)| (k.as_ref(), v))
    }

    pub fn keys(&self) -> impl ExactSizeIterator<Item = &str> {
        self.0.iter().map(|(k, _)| k.as_ref())
    }

    pub fn values(&self) -> impl ExactSizeIterator<Item = &Json<'a>> {
        self.0.iter().map(|(_, v)| v)
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl<'a> Json<'a> {
    /// Parses JSON text, borrowing every string that has no escapes.
    pub fn parse(text: &'a [u8]) -> Result<Self, serde_json::Error> {
        let mut de = serde_json::Deserializer::from_slice(text);
        let value = Seed(&mut Scratch::default()).deserialize(&mut de)?;
        de.end()?;
        Ok(value)
    }

    /// A view of a `serde_json::Value`, borrowing its strings.
    pub fn borrow(value: &'a Value) -> Self {
        match value {
            Value::Null => Self::Null,
            Value::Bool(b) => Self::Bool(*b),
            Value::Number(n) => Self::Number(Box::new(n.clone())),
            Value::String(s) => Self::String(Cow::Borrowed(s)),
            Value::Array(items) => Self::Array(items.iter().map(Self::borrow).collect()),
            // A `serde_json::Map` is already sorted with unique keys.
            Value::Object(map) => Self::Object(Map(map
                .iter()
                .map(|(k, v)| (Cow::Borrowed(k.as_str()), Self::borrow(v)))
                .collect())),
        }
    }

    /// An owned tree from a `serde_json::Value`.
    pub fn owned(value: Value) -> Json<'static> {
        match value {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(b),
            Value::Number(n) => Json::Number(Box::new(n)),
            Value::String(s) => Json::String(Cow::Owned(s)),
            Value::Array(items) => Json::Array(items.into_iter().map(Json::owned).collect()),
            Value::Object(map) => Json::Object(Map(map
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k), Json::owned(v)))
                .collect())),
        }
    }

    /// The same tree, owning every string.
    pub fn into_owned(self) -> Json<'static> {
        match self {
            Json::Null => Json::Null,
            Json::Bool(b) => Json::Bool(b),
            Json::Number(n) => Json::Number(n),
            Json::String(s) => Json::String(Cow::Owned(s.into_owned())),
            Json::Array(items) => {
                Json::Array(items.into_vec().into_iter().map(Json::into_owned).collect())
            }
            Json::Object(Map(entries)) => Json::Object(Map(entries
                .into_vec()
                .into_iter()
                .map(|(k, v)| (Cow::Owned(k.into_owned()), v.into_owned()))
                .collect())),
        }
    }

    pub fn to_value(&self) -> Value {
        match self {
            Self::Null => Value::Null,
            Self::Bool(b) => Value::Bool(*b),
            Self::Number(n) => Value::Number((**n).clone()),
            Self::String(s) => Value::String(s.to_string()),
            Self::Array(items) => Value::Array(items.iter().map(Self::to_value).collect()),
            Self::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| (k.to_string(), v.to_value()))
                    .collect(),
            ),
        }
    }

    pub fn get(&self, key: &str) -> Option<&Json<'a>> {
        self.as_object().and_then(|m| m.get(key))
    }

    pub fn as_object(&self) -> Option<&Map<'a>> {
        match self {
            Self::Object(map) => Some(map),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&[Json<'a>]> {
        match self {
            Self::Array(items) => Some(items),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Self::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Self::Null)
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Self::String(_))
    }
}

impl fmt::Display for Json<'_> {
    /// Compact JSON, as `serde_json::Value` prints.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let text = serde_json::to_string(self).map_err(|_| fmt::Error)?;
        f.write_str(&text)
    }
}

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Null => serializer.serialize_unit(),
            Self::Bool(b) => serializer.serialize_bool(*b),
            Self::Number(n) => n.serialize(serializer),
            Self::String(s) => serializer.serialize_str(s),
            Self::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items.iter() {
                    seq.serialize_element(item)?;
                }
                seq.end()
            }
            Self::Object(map) => {
                let mut out = serializer.serialize_map(Some(map.len()))?;
                for (k, v) in map.iter() {
                    out.serialize_entry(k, v)?;
                }
                out.end()
            }
        }
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Json<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let json: Json<'de> = Seed(&mut Scratch::default()).deserialize(deserializer)?;
        Ok(json)
    }
}

/// A tree read with what its strings mention: whether any names
/// `request.roles` or `request.clusterRoles` ([`roles::named_in`]), which
/// rules can read only where the settings name them. Noted as each string
/// is read, so the question costs no second pass over the settings, and
/// none at all over the request sent beside them (a 1 MiB object took
/// 140 µs to search).
#[derive(Debug, Default, PartialEq)]
pub struct Scanned<'a> {
    pub json: Json<'a>,
    pub mentions_roles: bool,
}

impl<'de: 'a, 'a> Deserialize<'de> for Scanned<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut scratch = Scratch {
            scanning: true,
            ..Scratch::default()
        };
        let json: Json<'de> = Seed(&mut scratch).deserialize(deserializer)?;
        Ok(Scanned {
            json,
            mentions_roles: scratch.mentions_roles,
        })
    }
}

/// Shared stacks the lists and objects being read collect into, so each
/// is allocated once at its exact size instead of growing by doubling.
#[derive(Default)]
struct Scratch<'a> {
    items: Vec<Json<'a>>,
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
    /// Whether strings are searched, and what was found (see [`Scanned`]).
    scanning: bool,
    mentions_roles: bool,
}

impl Scratch<'_> {
    fn scan(&mut self, text: &str) {
        if self.scanning {
            note_roles(&mut self.mentions_roles, text);
        }
    }
}

/// Sets `mentions` if a settings string `text` names the roles variables
/// (see [`Scanned`]): checked once per string value, never for keys.
// Called for every settings string; inlined as the loop it replaced was.
#[inline]
fn note_roles(mentions: &mut bool, text: &str) {
    // Most strings of a policy are too short to hold either name.
    if !*mentions && text.len() >= roles::SHORTEST_NAME {
        *mentions = roles::named_in(text.as_bytes());
    }
}

struct Seed<'s, 'a>(&'s mut Scratch<'a>);

impl<'de> DeserializeSeed<'de> for Seed<'_, 'de> {
    type Value = Json<'de>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Json<'de>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Seed<'_, 'de> {
    type Value = Json<'de>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_none<E>(self) -> Result<Json<'de>, E> {
        Ok(Json::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Json<'de>, E> {
        Ok(Json::Bool(b))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Box::new(n.into())))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Json<'de>, E> {
        Ok(Json::Number(Box::new(n.into())))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Json<'de>, E> {
        // As serde_json: a float JSON cannot hold (never parsed) is null.
        Ok(Number::from_f64(n).map_or(Json::Null, |n| Json::Number(Box::new(n))))
    }

    fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Json<'de>, E> {
        self.0.scan(s);
        Ok(Json::String(Cow::Borrowed(s)))
    }

    fn visit_str<E>(self, s: &str) -> Result<Json<'de>, E> {
        self.0.scan(s);
        Ok(Json::String(Cow::Owned(s.to_owned())))
    }

    fn visit_string<E>(self, s: String) -> Result<Json<'de>, E> {
        self.0.scan(&s);
        Ok(Json::String(Cow::Owned(s)))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Json<'de>, A::Error> {
        let scratch = self.0;
        let base = scratch.items.len();
        while let Some(item) = seq.next_element_seed(Seed(&mut *scratch))? {
            scratch.items.push(item);
        }
        Ok(Json::Array(scratch.items.drain(base..).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Json<'de>, A::Error> {
        let scratch = self.0;
        let base = scratch.entries.len();
        while let Some(Key(key)) = map.next_key()? {
            let value = map.next_value_seed(Seed(&mut *scratch))?;
            scratch.entries.push((key, value));
        }
        Ok(Json::Object(Map::of(scratch.entries.drain(base..))))
    }
}

impl<'a> Map<'a> {
    /// An object of `entries` in document order: sorted, the last of equal
    /// keys kept.
    // Inlined into the readers' loops (measured: a call per object cost 1 %).
    #[inline]
    fn of(entries: impl Iterator<Item = (Cow<'a, str>, Json<'a>)>) -> Self {
        let mut entries: Vec<_> = entries.collect();
        sort_unique(&mut entries);
        Map(entries.into_boxed_slice())
    }
}

/// Sorts entries by key, keeping the last of equal keys (as a JSON object
/// read into a map does).
fn sort_unique<T>(entries: &mut Vec<(Cow<'_, str>, T)>) {
    // Stable, so equal keys stay in document order.
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    let mut i = 1;
    while i < entries.len() {
        let same = matches!((entries.get(i - 1), entries.get(i)), (Some(a), Some(b)) if a.0 == b.0);
        if same {
            entries.remove(i - 1);
        } else {
            i += 1;
        }
    }
}

/// An object key, borrowed when it has no escapes.
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object key")
            }

            fn visit_borrowed_str<E>(self, s: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(s)))
            }

            fn visit_str<E>(self, s: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s.to_owned())))
            }

            fn visit_string<E>(self, s: String) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(s)))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// A ValidationRequest (`{"request": ..., "settings": ...}`): the request,
/// and the settings as a tree borrowing the payload's text.
#[derive(Debug, PartialEq)]
pub struct Payload<'a> {
    pub request: Option<Value>,
    pub settings: Scanned<'a>,
}

/// The payload as serde reads it.
#[derive(Deserialize)]
struct SerdePayload<'a> {
    request: Option<BulkValue>,
    #[serde(borrow, default)]
    settings: Scanned<'a>,
}

impl<'a> From<SerdePayload<'a>> for Payload<'a> {
    fn from(payload: SerdePayload<'a>) -> Self {
        Payload {
            request: payload.request.map(|BulkValue(request)| request),
            settings: payload.settings,
        }
    }
}

impl<'a> Payload<'a> {
    /// Reads `text` with the engine's own reader (`reader`), or with
    /// serde_json where that reader gives up: for serde_json's result or
    /// its error message. Either way the same payload.
    pub fn read(text: &'a str) -> Result<Self, serde_json::Error> {
        reader::payload(text).map_or_else(|| Self::read_with_serde(text), Ok)
    }

    /// Reads `text` with serde_json only: the reference [`Payload::read`]
    /// must agree with.
    pub fn read_with_serde(text: &'a str) -> Result<Self, serde_json::Error> {
        serde_json::from_str::<SerdePayload>(text).map(Payload::from)
    }

    /// Reads bytes that are not UTF-8, for serde_json's message about them.
    pub fn read_bytes(bytes: &'a [u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice::<SerdePayload>(bytes).map(Payload::from)
    }
}

/// A `serde_json::Value` read as serde_json reads one, with lists sized
/// exactly and large objects built in bulk: their entries are sorted once
/// and the B-tree filled node by node, instead of a search from the root
/// for every key. The request is read this way; a ConfigMap's thousand
/// keys took a quarter of a 1 MiB request's time in those searches.
#[derive(Debug, Default)]
pub struct BulkValue(pub Value);

impl<'de> Deserialize<'de> for BulkValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let mut scratch = ValueScratch::default();
        ValueSeed(&mut scratch)
            .deserialize(deserializer)
            .map(BulkValue)
    }
}

/// Objects with more entries than this are built in bulk. Below it, one
/// leaf holds them all and inserting in turn is as cheap (and needs no
/// sorted copy).
const BULK_ENTRIES: usize = 11;

/// Shared stacks the lists and objects being read collect into (see
/// [`Scratch`]).
#[derive(Default)]
struct ValueScratch {
    items: Vec<Value>,
    entries: Vec<(String, Value)>,
}

struct ValueSeed<'s>(&'s mut ValueScratch);

impl<'de> DeserializeSeed<'de> for ValueSeed<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for ValueSeed<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
        Ok(Value::Bool(b))
    }

    fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
        Ok(Value::Number(n.into()))
    }

    fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
        Ok(Number::from_f64(n).map_or(Value::Null, Value::Number))
    }

    fn visit_str<E>(self, s: &str) -> Result<Value, E> {
        Ok(Value::String(s.to_owned()))
    }

    fn visit_string<E>(self, s: String) -> Result<Value, E> {
        Ok(Value::String(s))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let scratch = self.0;
        let base = scratch.items.len();
        while let Some(item) = seq.next_element_seed(ValueSeed(&mut *scratch))? {
            scratch.items.push(item);
        }
        Ok(Value::Array(scratch.items.drain(base..).collect()))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let scratch = self.0;
        let base = scratch.entries.len();
        while let Some(key) = map.next_key::<String>()? {
            let value = map.next_value_seed(ValueSeed(&mut *scratch))?;
            scratch.entries.push((key, value));
        }
        Ok(Value::Object(object_of(scratch.entries.drain(base..))))
    }
}

/// An object of `entries` in document order: built in bulk past
/// [`BULK_ENTRIES`], else inserted in turn. Either way the last of equal
/// keys wins, as in serde_json's own.
fn object_of(
    entries: impl ExactSizeIterator<Item = (String, Value)>,
) -> serde_json::Map<String, Value> {
    if entries.len() > BULK_ENTRIES {
        entries.collect()
    } else {
        let mut object = serde_json::Map::new();
        for (key, value) in entries {
            object.insert(key, value);
        }
        object
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_as_serde_json_does() {
        let cases = [
            ("scalars", r#"[null, true, 1, -2, 2.5, "x"]"#),
            ("nested", r#"{"b": {"y": [1, {"z": null}]}, "a": "t"}"#),
            ("escapes", r#"{"k\"ey": "line\nbreak \u00e9"}"#),
            ("duplicate_keys_last_wins", r#"{"a": 1, "b": 2, "a": 3}"#),
            ("empty", r#"{"a": {}, "b": []}"#),
            (
                "big_numbers",
                r#"[18446744073709551615, -9223372036854775808, 1e300]"#,
            ),
        ];
        for (name, text) in cases {
            let expected: Value = serde_json::from_str(text).unwrap();
            let json = Json::parse(text.as_bytes()).unwrap();
            assert_eq!(json.to_value(), expected, "{name}");
            assert_eq!(json.to_string(), expected.to_string(), "{name}: printed");
            assert_eq!(Json::borrow(&expected), json, "{name}: borrowed view");
            assert_eq!(Json::owned(expected.clone()), json, "{name}: owned");
        }
    }

    #[test]
    fn payloads_read_as_serde_json_reads_them() {
        let keys: String = (0..30)
            .rev()
            .map(|i| format!(r#""k{i}": [{i}, "v{i}"], "#))
            .collect();
        let deep = format!(
            r#"{{"request": {{"object": {}1{}}}, "settings": {{}}}}"#,
            "[".repeat(110),
            "]".repeat(110)
        );
        let cases: Vec<(&str, String)> = vec![
            ("typical", r#"{"request": {"uid": "1", "object": {"kind": "Pod", "spec": {"containers": [{"name": "a"}]}}}, "settings": {"rules": [{"name": "r", "match": {"any": []}}], "validationFailureAction": "Enforce"}}"#.into()),
            ("settings_first_and_whitespace", " \n\t{ \"settings\" : { \"a\" : [ 1 , true , null ] } ,\r\n \"request\" : { } } \n".into()),
            ("no_settings", r#"{"request": {"a": 1}}"#.into()),
            ("null_request_and_settings", r#"{"request": null, "settings": null}"#.into()),
            ("no_request", r#"{"settings": {"a": "b"}}"#.into()),
            ("empty", "{}".into()),
            ("unknown_fields", r#"{"x": [1, {"y": "\ud800"}], "request": {}, "z": 1e400}"#.into()),
            ("escapes", r#"{"request": {"k\"e\\y": "\/\b\f\n\r\t\u00e9\u20ac\ud83d\ude00 end"}, "settings": {"m": "a\"b", "n\u0041": "\\{{ request.roles }}"}}"#.into()),
            ("unicode_unescaped", r#"{"request": {"é": "€😀"}, "settings": {"ü": ["日本"]}}"#.into()),
            ("numbers", r#"{"request": {"a": [0, 7, 18446744073709551615, 18446744073709551616, 12345678901234567890, -1, -0, 1.5, 1e3, 2E-2, -9223372036854775808, 0.1]}, "settings": {"n": [3, -4.25, 1e2, 99999999999999999999]}}"#.into()),
            ("duplicate_keys_last_wins", r#"{"request": {"a": 1, "a": 2}, "settings": {"b": 1, "b": [2]}}"#.into()),
            ("large_objects", format!(r#"{{"request": {{{keys}"k3": "again"}}, "settings": {{{keys}"end": 1}}}}"#)),
            ("roles_in_a_value", r#"{"settings": {"k": "{{ request.clusterRoles }}"}, "request": {}}"#.into()),
            ("roles_in_a_key_only", r#"{"settings": {"request.roles": "x"}, "request": {}}"#.into()),
            ("deep_nesting", deep),
            // serde_json's errors, whichever reader gives up first.
            ("duplicate_field", r#"{"request": {}, "request": {}}"#.into()),
            ("lone_surrogate", r#"{"request": {"a": "\ud800"}}"#.into()),
            ("lone_low_surrogate", r#"{"request": {"a": "\udc00x"}}"#.into()),
            ("control_character", "{\"request\": {\"a\": \"x\u{1}y\"}}".into()),
            ("bad_escape", r#"{"request": {"a": "\q"}}"#.into()),
            ("trailing_comma", r#"{"request": {"a": [1,]}}"#.into()),
            ("leading_zero", r#"{"request": {"a": 01}}"#.into()),
            ("huge_exponent", r#"{"request": {"a": 1e400}}"#.into()),
            ("trailing_text", r#"{"request": {}} x"#.into()),
            ("not_an_object", "[1]".into()),
            ("truncated", r#"{"request": {"a": "b"#.into()),
            ("bare_word", r#"{"request": {"a": nul}}"#.into()),
        ];
        for (name, text) in cases {
            let ours = Payload::read(&text).map_err(|e| e.to_string());
            let serde = Payload::read_with_serde(&text).map_err(|e| e.to_string());
            assert_eq!(ours, serde, "{name}");
        }
        // The reader takes the common shapes itself.
        for text in [
            r#"{"request": {"a": "\u00e9\ud83d\ude00"}, "settings": {"b": [1.5, -2]}}"#,
            "{\"settings\": {\"k\": \"{{ request.roles }}\"}, \"request\": {\"a\": 1}}",
        ] {
            assert!(reader::payload(text).is_some(), "{text}");
        }
    }

    #[test]
    fn bulk_values_read_as_serde_json_reads_them() {
        let many: String = (0..40).rev().map(|i| format!(r#""k{i}": {i}, "#)).collect();
        let cases = [
            (
                "scalars",
                r#"[null, true, 1, -2, 2.5, "x", "\u00e9\n"]"#.to_string(),
            ),
            (
                "nested",
                r#"{"b": {"y": [1, {"z": null}]}, "a": []}"#.to_string(),
            ),
            (
                "small_object_duplicate_last_wins",
                r#"{"a": 1, "b": 2, "a": 3}"#.to_string(),
            ),
            // More than one leaf: built in bulk.
            (
                "large_object_out_of_order",
                format!("{{{many}\"end\": true}}"),
            ),
            (
                "large_object_duplicate_last_wins",
                format!(r#"{{{many}"k7": "last", "k39": "again"}}"#),
            ),
            (
                "big_numbers",
                r#"[18446744073709551615, -9223372036854775808, 1e300]"#.to_string(),
            ),
        ];
        for (name, text) in cases {
            let expected: Value = serde_json::from_str(&text).unwrap();
            let BulkValue(got) = serde_json::from_str(&text).unwrap();
            assert_eq!(got, expected, "{name}");
            assert_eq!(got.to_string(), expected.to_string(), "{name}: printed");
        }
        for text in ["{", r#"{"a": 1,}"#, "[1 2]", &"[".repeat(10_000)] {
            assert!(serde_json::from_str::<BulkValue>(text).is_err(), "{text}");
        }
    }

    #[test]
    fn scanned_notes_strings_that_name_the_roles_variables() {
        let cases = [
            (
                "nested_value",
                r#"{"rules": [{"k": "{{ request.roles }}"}]}"#,
                true,
            ),
            (
                "escaped_value",
                r#"{"k": "\"{{request.clusterRoles}}\""}"#,
                true,
            ),
            ("key_only", r#"{"request.roles": "x"}"#, false),
            (
                "other_variables",
                r#"{"k": "{{ request.object.roles }}"}"#,
                false,
            ),
            ("no_strings", r#"[1, true, null]"#, false),
        ];
        for (name, text, want) in cases {
            let scanned: Scanned = serde_json::from_str(text).unwrap();
            assert_eq!(scanned.mentions_roles, want, "{name}");
            assert_eq!(
                scanned.json,
                Json::parse(text.as_bytes()).unwrap(),
                "{name}: tree"
            );
        }
    }

    #[test]
    fn strings_without_escapes_are_borrowed() {
        let json = Json::parse(br#"{"plain": "text", "esc\naped": "a\tb"}"#).unwrap();
        let map = json.as_object().unwrap();
        let (plain_key, plain) = map.iter().find(|(k, _)| *k == "plain").unwrap();
        assert_eq!(plain_key, "plain");
        assert!(matches!(plain, Json::String(Cow::Borrowed("text"))));
        assert!(matches!(map.get("esc\naped"), Some(Json::String(Cow::Owned(s))) if s == "a\tb"));
    }

    #[test]
    fn objects_read_by_key_in_sorted_order() {
        let json = Json::parse(br#"{"zeta": 1, "alpha": 2, "mid": {"b": 1, "a": 2}}"#).unwrap();
        let map = json.as_object().unwrap();
        assert_eq!(map.keys().collect::<Vec<_>>(), ["alpha", "mid", "zeta"]);
        assert_eq!(json.get("alpha"), Some(&Json::Number(Box::new(2.into()))));
        assert_eq!(
            json.get("mid").and_then(|m| m.get("a")),
            Some(&Json::Number(Box::new(2.into())))
        );
        assert_eq!(json.get("missing"), None);
    }

    #[test]
    fn rejects_what_serde_json_rejects() {
        for text in ["{", r#"{"a": 1,}"#, "[1 2]", "nul", r#"{"a": 1} x"#] {
            assert!(Json::parse(text.as_bytes()).is_err(), "{text}");
            assert!(serde_json::from_str::<Value>(text).is_err(), "{text}");
        }
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let text = "[".repeat(100_000);
        assert!(Json::parse(text.as_bytes()).is_err());
    }
}
