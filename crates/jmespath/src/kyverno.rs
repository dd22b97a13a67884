//! Kyverno's custom JMESPath functions (`pkg/engine/jmespath`), with
//! Kyverno's results and error texts. The interpreter checks arity and
//! argument types against [`SIGNATURES`] before it calls [`call`].
//!
//! Arithmetic lives in the sibling `arithmetic` module, the `time_*`
//! functions in `time`; regexes, semver ranges, `random`, `x509_decode` and
//! `image_normalize` in the submodules below.

use std::cmp::Ordering;

use base64::Engine as _;
use serde_json::Value;

use crate::arguments::{
    arg, generic, go_base64_decode, go_f64_to_i64, go_format_g, go_format_g32, go_quote,
    iface_to_string, int_number, invalid_type, number, number_arg, sorted_object, string_arg,
    FunctionError,
};
use crate::types::{ArgType, Signature};

mod random;
mod regexp;
mod semver;
mod x509;

const S: &[ArgType] = &[ArgType::String];
const N: &[ArgType] = &[ArgType::Number];
const SN: &[ArgType] = &[ArgType::String, ArgType::Number];
const O: &[ArgType] = &[ArgType::Object];
const A: &[ArgType] = &[ArgType::Array];
const OA: &[ArgType] = &[ArgType::Object, ArgType::Array];
const ANY: &[ArgType] = &[ArgType::Any];

const fn sig(name: &'static str, args: &'static [&'static [ArgType]]) -> Signature {
    Signature {
        name,
        args,
        variadic: false,
    }
}

/// Kyverno's 51 functions, in the order `kyverno jp function` registers them.
pub static SIGNATURES: &[Signature] = &[
    sig("compare", &[S, S]),
    sig("equal_fold", &[S, S]),
    sig("replace", &[S, S, S, N]),
    sig("replace_all", &[S, S, S]),
    sig("to_upper", &[S]),
    sig("to_lower", &[S]),
    sig("trim", &[S, S]),
    sig("trim_prefix", &[S, S]),
    sig("split", &[S, S]),
    sig("regex_replace_all", &[S, SN, SN]),
    sig("regex_replace_all_literal", &[S, SN, SN]),
    sig("regex_match", &[S, SN]),
    sig("pattern_match", &[S, SN]),
    sig("label_match", &[O, O]),
    sig("to_boolean", &[S]),
    sig("add", &[ANY, ANY]),
    sig("sum", &[A]),
    sig("subtract", &[ANY, ANY]),
    sig("multiply", &[ANY, ANY]),
    sig("divide", &[ANY, ANY]),
    sig("modulo", &[ANY, ANY]),
    sig("round", &[N, N]),
    sig("base64_decode", &[S]),
    sig("base64_encode", &[S]),
    sig("time_since", &[S, S, S]),
    sig("time_now", &[]),
    sig("time_now_utc", &[]),
    sig("path_canonicalize", &[S]),
    sig("truncate", &[S, N]),
    sig("semver_compare", &[S, S]),
    sig("parse_json", &[S]),
    sig("parse_yaml", &[S]),
    sig("lookup", &[OA, SN]),
    sig("items", &[OA, S, S]),
    sig("object_from_lists", &[A, A]),
    sig("random", &[S]),
    sig("x509_decode", &[S]),
    sig("time_to_cron", &[S]),
    sig("time_add", &[S, S]),
    sig("time_parse", &[S, S]),
    sig("time_utc", &[S]),
    sig("time_diff", &[S, S]),
    sig("time_before", &[S, S]),
    sig("time_after", &[S, S]),
    sig("time_between", &[S, S, S]),
    sig("time_truncate", &[S, S]),
    sig("image_normalize", &[S]),
    sig("is_external_url", &[S]),
    sig("sha256", &[S]),
    sig("sha1", &[S]),
    sig("md5", &[S]),
];

/// The signature of Kyverno's function `name`.
pub fn signature(name: &str) -> Option<&'static Signature> {
    SIGNATURES.iter().find(|s| s.name == name)
}

/// Runs Kyverno's function `name`. Called only after the interpreter checked
/// arity and argument types against the signature.
pub fn call(name: &str, args: &[Value]) -> Result<Value, FunctionError> {
    match name {
        "compare" => {
            let (a, b) = (string_arg(name, args, 0)?, string_arg(name, args, 1)?);
            let order: i64 = match a.cmp(b) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            };
            Ok(Value::from(order))
        }
        "equal_fold" => Ok(Value::Bool(equal_fold(
            string_arg(name, args, 0)?,
            string_arg(name, args, 1)?,
        ))),
        "replace" => {
            let text = string_arg(name, args, 0)?;
            let old = string_arg(name, args, 1)?;
            let new = string_arg(name, args, 2)?;
            let count = go_f64_to_i64(number_arg(name, args, 3)?);
            Ok(Value::String(go_replace(text, old, new, count)))
        }
        "replace_all" => {
            let text = string_arg(name, args, 0)?;
            let old = string_arg(name, args, 1)?;
            let new = string_arg(name, args, 2)?;
            Ok(Value::String(text.replace(old, new)))
        }
        "to_upper" => Ok(Value::String(go_to_upper(string_arg(name, args, 0)?))),
        "to_lower" => Ok(Value::String(go_to_lower(string_arg(name, args, 0)?))),
        "trim" => {
            let text = string_arg(name, args, 0)?;
            let cutset = string_arg(name, args, 1)?;
            Ok(Value::String(
                text.trim_matches(|c: char| cutset.contains(c)).to_string(),
            ))
        }
        "trim_prefix" => {
            let text = string_arg(name, args, 0)?;
            let prefix = string_arg(name, args, 1)?;
            Ok(Value::String(
                text.strip_prefix(prefix).unwrap_or(text).to_string(),
            ))
        }
        "split" => {
            let text = string_arg(name, args, 0)?;
            let sep = string_arg(name, args, 1)?;
            Ok(Value::Array(
                go_split(text, sep).into_iter().map(Value::String).collect(),
            ))
        }
        "regex_replace_all" => regexp::replace_all(name, args, false),
        "regex_replace_all_literal" => regexp::replace_all(name, args, true),
        "regex_match" => regexp::is_match(args),
        "pattern_match" => {
            // Kyverno names regex_match in this function's errors.
            let pattern = string_arg("regex_match", args, 0)?;
            let text = iface_to_string(arg(args, 1))
                .ok_or_else(|| invalid_type("regex_match", 2, "String or Real"))?;
            Ok(Value::Bool(crate::wildcard::matches(pattern, &text)))
        }
        "label_match" => label_match(args),
        "to_boolean" => {
            let text = string_arg(name, args, 0)?;
            match go_to_lower(text).as_str() {
                "true" => Ok(Value::Bool(true)),
                "false" => Ok(Value::Bool(false)),
                _ => Err(generic(
                    name,
                    format!("lowercase argument must be 'true' or 'false' (provided: '{text}')"),
                )),
            }
        }
        "add" | "sum" | "subtract" | "multiply" | "divide" | "modulo" | "round" => {
            crate::arithmetic::call(name, args)
        }
        "base64_decode" => {
            let text = string_arg("", args, 0)?;
            let bytes = go_base64_decode(text.as_bytes()).map_err(|offset| {
                FunctionError::new(format!("illegal base64 data at input byte {offset}"))
            })?;
            Ok(Value::String(String::from_utf8_lossy(&bytes).into_owned()))
        }
        "base64_encode" => {
            let text = string_arg("", args, 0)?;
            Ok(Value::String(
                base64::engine::general_purpose::STANDARD.encode(text.as_bytes()),
            ))
        }
        "path_canonicalize" => {
            let path = string_arg(name, args, 0)?;
            Ok(Value::String(if path.is_empty() {
                String::new()
            } else {
                crate::go::clean_path(path)
            }))
        }
        "truncate" => {
            let text = string_arg(name, args, 0)?;
            let length = number_arg(name, args, 1)?.max(0.0);
            let length = usize::try_from(go_f64_to_i64(length)).unwrap_or(usize::MAX);
            Ok(Value::String(text.chars().take(length).collect()))
        }
        "semver_compare" => {
            let version = string_arg(name, args, 0)?;
            let range = string_arg(name, args, 1)?;
            semver::matches(version, range)
                .map(Value::Bool)
                .map_err(FunctionError::new)
        }
        "parse_json" => parse_json(string_arg(name, args, 0)?),
        "parse_yaml" => parse_yaml(string_arg(name, args, 0)?),
        "lookup" => lookup(args),
        "items" => items(args),
        "object_from_lists" => object_from_lists(args),
        "random" => {
            let pattern = arg(args, 0).as_str().unwrap_or_default();
            random::generate(pattern)
                .map(Value::String)
                .map_err(FunctionError::new)
        }
        "x509_decode" => x509::decode(string_arg(name, args, 0)?).map_err(FunctionError::new),
        "image_normalize" => {
            let image = string_arg(name, args, 0)?;
            crate::images::ImageInfo::parse(image)
                .map(|info| Value::String(info.reference()))
                .map_err(|e| generic(name, e))
        }
        "is_external_url" => {
            // Kyverno validates this argument under path_canonicalize's name.
            let url = string_arg("path_canonicalize", args, 0)?;
            is_external_url(url)
                .map(Value::Bool)
                .map_err(FunctionError::new)
        }
        "sha256" => Ok(Value::String(hex_digest::<sha2::Sha256>(string_arg(
            name, args, 0,
        )?))),
        "sha1" => Ok(Value::String(hex_digest::<sha1::Sha1>(string_arg(
            name, args, 0,
        )?))),
        "md5" => Ok(Value::String(hex_digest::<md5::Md5>(string_arg(
            name, args, 0,
        )?))),
        _ if name.starts_with("time_") => crate::time::call(name, args),
        _ => Err(FunctionError::new(format!("unknown function: {name}()"))),
    }
}

// ---------------------------------------------------------------------------
// Strings

/// `strings.EqualFold`: equal under simple Unicode case folding.
fn equal_fold(a: &str, b: &str) -> bool {
    let (mut left, mut right) = (a.chars(), b.chars());
    loop {
        match (left.next(), right.next()) {
            (None, None) => return true,
            (Some(x), Some(y)) => {
                if x != y
                    && simple_lower(x) != simple_lower(y)
                    && simple_upper(x) != simple_upper(y)
                {
                    return false;
                }
            }
            _ => return false,
        }
    }
}

/// The one-character lower case of `c`, or `c`.
fn simple_lower(c: char) -> char {
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

/// The one-character upper case of `c`, or `c`.
fn simple_upper(c: char) -> char {
    let mut upper = c.to_uppercase();
    match (upper.next(), upper.next()) {
        (Some(u), None) => u,
        _ => c,
    }
}

/// `strings.ToUpper`: Go maps each rune to one rune (`ß` stays `ß`).
fn go_to_upper(text: &str) -> String {
    text.chars().map(simple_upper).collect()
}

/// `strings.ToLower`: one rune per rune (`İ` becomes `i`).
fn go_to_lower(text: &str) -> String {
    text.chars()
        .map(|c| c.to_lowercase().next().unwrap_or(c))
        .collect()
}

/// `strings.Replace(text, old, new, n)`: `n < 0` replaces all.
fn go_replace(text: &str, old: &str, new: &str, count: i64) -> String {
    if count < 0 {
        text.replace(old, new)
    } else {
        text.replacen(old, new, usize::try_from(count).unwrap_or(usize::MAX))
    }
}

/// `strings.Split`: an empty separator splits into characters.
fn go_split(text: &str, sep: &str) -> Vec<String> {
    if sep.is_empty() {
        text.chars().map(String::from).collect()
    } else {
        text.split(sep).map(String::from).collect()
    }
}

// ---------------------------------------------------------------------------
// Encodings and hashes

fn hex_digest<D: sha2::Digest>(text: &str) -> String {
    D::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

// ---------------------------------------------------------------------------
// Objects

fn label_match(args: &[Value]) -> Result<Value, FunctionError> {
    let name = "label_match";
    let labels = arg(args, 0)
        .as_object()
        .ok_or_else(|| invalid_type(name, 0, "Object"))?;
    let target = arg(args, 1)
        .as_object()
        .ok_or_else(|| invalid_type(name, 1, "Object"))?;
    for (key, value) in labels {
        let equal = match target.get(key) {
            // `reflect.DeepEqual` since kyverno#15827 (Go's `!=` had
            // panicked on a map or list).
            Some(found) => crate::compare::equal(found, value),
            None => false,
        };
        if !equal {
            return Ok(Value::Bool(false));
        }
    }
    Ok(Value::Bool(true))
}

/// A decoded document as Kyverno holds it: numbers as float64, maps with
/// sorted keys.
fn go_json(value: Value) -> Value {
    match value {
        Value::Number(n) => number(n.as_f64().unwrap_or(0.0)),
        Value::Array(items) => Value::Array(items.into_iter().map(go_json).collect()),
        Value::Object(map) => {
            sorted_object(map.into_iter().map(|(k, v)| (k, go_json(v))).collect())
        }
        other => other,
    }
}

fn parse_json(text: &str) -> Result<Value, FunctionError> {
    match serde_json::from_str::<Value>(text) {
        Ok(value) => Ok(go_json(value)),
        Err(e) if e.is_eof() => Err(FunctionError::new("unexpected end of JSON input")),
        Err(e) => Err(FunctionError::new(e.to_string())),
    }
}

/// `sigs.k8s.io/yaml.YAMLToJSON` then `json.Unmarshal`: the first document.
fn parse_yaml(text: &str) -> Result<Value, FunctionError> {
    use serde::Deserialize as _;
    let Some(document) = serde_yaml::Deserializer::from_str(text).next() else {
        return Ok(Value::Null);
    };
    let mut value = serde_yaml::Value::deserialize(document)
        .map_err(|e| FunctionError::new(format!("error converting YAML to JSON: yaml: {e}")))?;
    value
        .apply_merge()
        .map_err(|e| FunctionError::new(format!("error converting YAML to JSON: yaml: {e}")))?;
    yaml_to_json(value).map_err(FunctionError::new)
}

fn yaml_to_json(value: serde_yaml::Value) -> Result<Value, String> {
    use serde_yaml::Value as Y;
    Ok(match value {
        Y::Null => Value::Null,
        Y::Bool(b) => Value::Bool(b),
        Y::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if !f.is_finite() {
                return Err(format!(
                    "error converting YAML to JSON: json: unsupported value: {}",
                    go_format_g(f)
                ));
            }
            number(f)
        }
        Y::String(s) => Value::String(s),
        Y::Sequence(items) => Value::Array(
            items
                .into_iter()
                .map(yaml_to_json)
                .collect::<Result<Vec<_>, _>>()?,
        ),
        Y::Mapping(map) => {
            let mut entries = Vec::with_capacity(map.len());
            for (key, item) in map {
                let key = match key {
                    Y::String(s) => s,
                    Y::Bool(b) => b.to_string(),
                    Y::Number(n) => match (n.as_i64(), n.as_u64()) {
                        (Some(i), _) => i.to_string(),
                        (None, Some(u)) => u.to_string(),
                        _ => match go_format_g32(n.as_f64().unwrap_or(0.0)).as_str() {
                            "+Inf" => ".inf".into(),
                            "-Inf" => "-.inf".into(),
                            "NaN" => ".nan".into(),
                            other => other.to_string(),
                        },
                    },
                    Y::Tagged(tagged) => {
                        let inner = *tagged;
                        match inner.value {
                            Y::String(s) => s,
                            _ => {
                                return Err(
                                    "error converting YAML to JSON: unsupported map key".into()
                                )
                            }
                        }
                    }
                    _ => return Err("error converting YAML to JSON: unsupported map key".into()),
                };
                entries.push((key, yaml_to_json(item)?));
            }
            sorted_object(entries)
        }
        Y::Tagged(tagged) => {
            let inner = *tagged;
            yaml_to_json(inner.value)?
        }
    })
}

fn lookup(args: &[Value]) -> Result<Value, FunctionError> {
    let name = "lookup";
    match arg(args, 0) {
        Value::Object(map) => {
            let key = arg(args, 1)
                .as_str()
                .ok_or_else(|| invalid_type(name, 2, "String"))?;
            Ok(map.get(key).cloned().unwrap_or(Value::Null))
        }
        Value::Array(items) => {
            let index = arg(args, 1)
                .as_f64()
                .ok_or_else(|| invalid_type(name, 2, "Number"))?;
            let index = int_number(index).map_err(|e| {
                FunctionError::new(format!("JMESPath function '{name}': argument #2: {e}"))
            })?;
            Ok(usize::try_from(index)
                .ok()
                .and_then(|i| items.get(i))
                .cloned()
                .unwrap_or(Value::Null))
        }
        _ => Err(invalid_type(name, 1, "Object or Array")),
    }
}

fn items(args: &[Value]) -> Result<Value, FunctionError> {
    let name = "items";
    let key_name = arg(args, 1)
        .as_str()
        .ok_or_else(|| invalid_type(name, 2, "String"))?;
    let value_name = arg(args, 2)
        .as_str()
        .ok_or_else(|| invalid_type(name, 3, "String"))?;
    let entry = |key: Value, value: Value| {
        // A Go map literal: with equal names the value wins.
        sorted_object(if key_name == value_name {
            vec![(value_name.to_string(), value)]
        } else {
            vec![(key_name.to_string(), key), (value_name.to_string(), value)]
        })
    };
    match arg(args, 0) {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            Ok(Value::Array(
                keys.into_iter()
                    .map(|key| {
                        entry(
                            Value::String(key.clone()),
                            map.get(key).cloned().unwrap_or(Value::Null),
                        )
                    })
                    .collect(),
            ))
        }
        Value::Array(values) => Ok(Value::Array(
            values
                .iter()
                .enumerate()
                .map(|(index, value)| {
                    #[allow(clippy::cast_precision_loss)]
                    let index = index as f64;
                    entry(number(index), value.clone())
                })
                .collect(),
        )),
        _ => Err(invalid_type(name, 1, "Object or Array")),
    }
}

fn object_from_lists(args: &[Value]) -> Result<Value, FunctionError> {
    let name = "object_from_lists";
    let keys = arg(args, 0)
        .as_array()
        .ok_or_else(|| invalid_type(name, 1, "Array"))?;
    let values = arg(args, 1)
        .as_array()
        .ok_or_else(|| invalid_type(name, 2, "Array"))?;
    let mut entries: Vec<(String, Value)> = Vec::with_capacity(keys.len());
    for (i, key) in keys.iter().enumerate() {
        let key = iface_to_string(key).ok_or_else(|| invalid_type(name, 1, "StringArray"))?;
        let value = values.get(i).cloned().unwrap_or(Value::Null);
        // A Go map: a repeated key keeps the last value.
        entries.retain(|(k, _)| *k != key);
        entries.push((key, value));
    }
    Ok(sorted_object(entries))
}

// ---------------------------------------------------------------------------
// URLs

/// Kyverno's `is_external_url`: the host of the URL must not be a loopback
/// or private address. Kyverno resolves host names through DNS, which a
/// policy cannot do; names that only resolve inside a cluster or a machine
/// (`localhost`, `*.svc`, `*.cluster.local`, `*.local`, `*.internal`,
/// single-label names) count as internal, other names as external.
fn is_external_url(url: &str) -> Result<bool, String> {
    let host = url_hostname(url)?;
    if let Ok(ip) = host.parse::<std::net::IpAddr>() {
        return Ok(!(is_loopback(&ip) || is_private(&ip)));
    }
    if host.is_empty() {
        return Err("lookup : no such host".into());
    }
    let lower = host.to_ascii_lowercase();
    let lower = lower.trim_end_matches('.');
    let internal = lower == "localhost"
        || !lower.contains('.')
        || [
            ".localhost",
            ".svc",
            ".cluster.local",
            ".local",
            ".internal",
        ]
        .iter()
        .any(|suffix| lower.ends_with(suffix));
    Ok(!internal)
}

fn ipv4_of(ip: &std::net::IpAddr) -> Option<std::net::Ipv4Addr> {
    match ip {
        std::net::IpAddr::V4(v4) => Some(*v4),
        std::net::IpAddr::V6(v6) => v6.to_ipv4_mapped(),
    }
}

/// Go's `IP.IsLoopback`.
fn is_loopback(ip: &std::net::IpAddr) -> bool {
    match (ipv4_of(ip), ip) {
        (Some(v4), _) => v4.is_loopback(),
        (None, std::net::IpAddr::V6(v6)) => v6.is_loopback(),
        _ => false,
    }
}

/// Go's `IP.IsPrivate`: 10/8, 172.16/12, 192.168/16, fc00::/7.
fn is_private(ip: &std::net::IpAddr) -> bool {
    match (ipv4_of(ip), ip) {
        (Some(v4), _) => v4.is_private(),
        (None, std::net::IpAddr::V6(v6)) => v6
            .segments()
            .first()
            .is_some_and(|s| (s & 0xfe00) == 0xfc00),
        _ => false,
    }
}

/// `url.Parse(text).Hostname()`.
fn url_hostname(text: &str) -> Result<String, String> {
    let parse_error = |detail: String| format!("parse {}: {detail}", go_quote(text));
    if text.chars().any(|c| c.is_ascii_control()) {
        return Err(parse_error(
            "net/url: invalid control character in URL".into(),
        ));
    }
    let without_fragment = text.split('#').next().unwrap_or_default();
    // A scheme: a letter, then letters, digits, `+`, `-`, `.`, then `:`.
    let mut rest = without_fragment;
    if let Some(colon) = without_fragment.find(':') {
        let scheme = without_fragment.get(..colon).unwrap_or_default();
        let valid = scheme
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic())
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
        if valid {
            rest = without_fragment.get(colon + 1..).unwrap_or_default();
        } else if colon == 0 {
            return Err(parse_error("missing protocol scheme".into()));
        }
    }
    let rest = rest.split('?').next().unwrap_or_default();
    let Some(authority) = rest.strip_prefix("//") else {
        return Ok(String::new());
    };
    let authority = authority.split('/').next().unwrap_or_default();
    let host_port = authority.rsplit('@').next().unwrap_or_default();
    if host_port.contains(' ') {
        return Err(parse_error(format!(
            "invalid character {} in host name",
            go_quote(" ")
        )));
    }
    let host = if let Some(bracketed) = host_port.strip_prefix('[') {
        bracketed.split(']').next().unwrap_or_default().to_string()
    } else {
        match host_port.rsplit_once(':') {
            Some((host, port)) if port.bytes().all(|b| b.is_ascii_digit()) => host.to_string(),
            Some((_, port)) => {
                return Err(parse_error(format!(
                    "invalid port {} after host",
                    go_quote(&format!(":{port}"))
                )))
            }
            None => host_port.to_string(),
        }
    };
    Ok(host)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::useless_vec)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ok(name: &str, args: &[Value]) -> Value {
        match call(name, args) {
            Ok(v) => v,
            Err(e) => panic!("{name}({args:?}) failed: {e}"),
        }
    }

    fn err(name: &str, args: &[Value]) -> String {
        match call(name, args) {
            Ok(v) => panic!("{name}({args:?}) should fail, got {v}"),
            Err(e) => e.message,
        }
    }

    #[test]
    fn signatures_cover_the_51_functions_of_the_conformance_list() {
        assert_eq!(SIGNATURES.len(), 51);
        let text = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../../shared/conformance/jmespath_functions.json"
        ));
        let Ok(text) = text else {
            return; // the shared folder is not always beside the crate
        };
        let listed: Value = serde_json::from_str(&text).unwrap();
        for entry in listed["kyverno_custom"].as_array().unwrap() {
            let name = entry["name"].as_str().unwrap();
            let sig = signature(name).unwrap_or_else(|| panic!("{name} missing"));
            let args: Vec<String> = sig
                .args
                .iter()
                .map(|types| types.iter().map(|t| t.name()).collect::<Vec<_>>().join("|"))
                .collect();
            let want: Vec<String> = entry["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap().to_string())
                .collect();
            assert_eq!(args, want, "{name}");
        }
    }

    #[test]
    fn string_functions() {
        let cases: Vec<(&str, &str, Vec<Value>, Value)> = vec![
            (
                "compare_equal",
                "compare",
                vec![json!("a"), json!("a")],
                json!(0),
            ),
            (
                "compare_less",
                "compare",
                vec![json!("a"), json!("b")],
                json!(-1),
            ),
            (
                "compare_greater",
                "compare",
                vec![json!("b"), json!("a")],
                json!(1),
            ),
            (
                "equal_fold_case",
                "equal_fold",
                vec![json!("Go"), json!("go")],
                json!(true),
            ),
            (
                "equal_fold_differs",
                "equal_fold",
                vec![json!("a"), json!("b")],
                json!(false),
            ),
            (
                "equal_fold_digit",
                "equal_fold",
                vec![json!("1"), json!("b")],
                json!(false),
            ),
            (
                "equal_fold_kelvin",
                "equal_fold",
                vec![json!("\u{212a}"), json!("k")],
                json!(true),
            ),
            (
                "replace_all_negative",
                "replace",
                vec![
                    json!("Lorem ipsum ipsum ipsum dolor sit amet"),
                    json!("ipsum"),
                    json!("muspi"),
                    json!(-1),
                ],
                json!("Lorem muspi muspi muspi dolor sit amet"),
            ),
            (
                "replace_one",
                "replace",
                vec![
                    json!("Lorem ipsum ipsum ipsum dolor sit amet"),
                    json!("ipsum"),
                    json!("muspi"),
                    json!(1),
                ],
                json!("Lorem muspi ipsum ipsum dolor sit amet"),
            ),
            (
                "replace_two_docs",
                "replace",
                vec![
                    json!("Lorem ipsum dolor sit amet foo ipsum bar ipsum"),
                    json!("ipsum"),
                    json!("muspi"),
                    json!(2),
                ],
                json!("Lorem muspi dolor sit amet foo muspi bar ipsum"),
            ),
            (
                "replace_zero",
                "replace",
                vec![json!("aaa"), json!("a"), json!("b"), json!(0)],
                json!("aaa"),
            ),
            (
                "replace_empty_old",
                "replace",
                vec![json!("ab"), json!(""), json!("-"), json!(-1)],
                json!("-a-b-"),
            ),
            (
                "replace_all",
                "replace_all",
                vec![
                    json!("Lorem ipsum dolor sit amet"),
                    json!("ipsum"),
                    json!("muspi"),
                ],
                json!("Lorem muspi dolor sit amet"),
            ),
            (
                "to_upper",
                "to_upper",
                vec![json!("a#%&123Bc")],
                json!("A#%&123BC"),
            ),
            ("to_upper_sharp_s", "to_upper", vec![json!("ß")], json!("ß")),
            (
                "to_lower",
                "to_lower",
                vec![json!("a#%&123Bc")],
                json!("a#%&123bc"),
            ),
            (
                "trim_cutset",
                "trim",
                vec![json!("¡¡¡Hello, Gophers!!!"), json!("!¡")],
                json!("Hello, Gophers"),
            ),
            (
                "trim_docs",
                "trim",
                vec![json!("foocorpcom"), json!("mcof")],
                json!("rp"),
            ),
            (
                "trim_interior_kept",
                "trim",
                vec![json!("foocorpcom"), json!("o")],
                json!("foocorpcom"),
            ),
            (
                "trim_empty_cutset",
                "trim",
                vec![json!(" a "), json!("")],
                json!(" a "),
            ),
            (
                "trim_prefix",
                "trim_prefix",
                vec![json!("docker://kubevirt/fedora"), json!("docker://")],
                json!("kubevirt/fedora"),
            ),
            (
                "trim_prefix_absent",
                "trim_prefix",
                vec![json!("abc"), json!("x")],
                json!("abc"),
            ),
            (
                "split",
                "split",
                vec![json!("Hello, Gophers"), json!(", ")],
                json!(["Hello", "Gophers"]),
            ),
            (
                "split_empty_sep",
                "split",
                vec![json!("aé"), json!("")],
                json!(["a", "é"]),
            ),
            (
                "split_empty_text",
                "split",
                vec![json!(""), json!(",")],
                json!([""]),
            ),
            (
                "split_empty_both",
                "split",
                vec![json!(""), json!("")],
                json!([]),
            ),
            (
                "truncate_5",
                "truncate",
                vec![json!("Lorem ipsum dolor sit amet"), json!(5)],
                json!("Lorem"),
            ),
            (
                "truncate_11",
                "truncate",
                vec![json!("Lorem ipsum ipsum ipsum dolor sit amet"), json!(11)],
                json!("Lorem ipsum"),
            ),
            (
                "truncate_longer",
                "truncate",
                vec![json!("Lorem ipsum ipsum ipsum dolor sit amet"), json!(40)],
                json!("Lorem ipsum ipsum ipsum dolor sit amet"),
            ),
            (
                "truncate_fraction",
                "truncate",
                vec![json!("Lorem ipsum"), json!(2.6)],
                json!("Lo"),
            ),
            (
                "truncate_zero",
                "truncate",
                vec![json!("Lorem ipsum"), json!(0)],
                json!(""),
            ),
            (
                "truncate_negative",
                "truncate",
                vec![json!("Lorem ipsum"), json!(-1)],
                json!(""),
            ),
            (
                "truncate_by_characters",
                "truncate",
                vec![json!("héllo"), json!(2)],
                json!("hé"),
            ),
            (
                "to_boolean_true",
                "to_boolean",
                vec![json!("TruE")],
                json!(true),
            ),
            (
                "to_boolean_false",
                "to_boolean",
                vec![json!("FalsE")],
                json!(false),
            ),
            (
                "pattern_match",
                "pattern_match",
                vec![json!("prefix-*"), json!("prefix-foo")],
                json!(true),
            ),
            (
                "pattern_match_number",
                "pattern_match",
                vec![json!("12*"), json!(12.0)],
                json!(true),
            ),
            (
                "pattern_match_question",
                "pattern_match",
                vec![json!("158-7?-4*"), json!("158-73-417")],
                json!(true),
            ),
            (
                "pattern_match_miss",
                "pattern_match",
                vec![json!("a?"), json!("a")],
                json!(false),
            ),
        ];
        for (case, name, args, want) in cases {
            assert_eq!(ok(name, &args), want, "{case}");
        }
    }

    #[test]
    fn to_boolean_rejects_other_text() {
        assert_eq!(
            err("to_boolean", &[json!("yes")]),
            "JMESPath function 'to_boolean': lowercase argument must be 'true' or 'false' (provided: 'yes')"
        );
    }

    #[test]
    fn base64_functions() {
        let cases = [
            (
                "encode",
                "base64_encode",
                json!("hello"),
                Ok(json!("aGVsbG8=")),
            ),
            ("encode_empty", "base64_encode", json!(""), Ok(json!(""))),
            (
                "decode",
                "base64_decode",
                json!("aGVsbG8="),
                Ok(json!("hello")),
            ),
            (
                "decode_skips_newlines",
                "base64_decode",
                json!("aGVs\nbG8="),
                Ok(json!("hello")),
            ),
            (
                "decode_trailing_bits_ignored",
                "base64_decode",
                json!("aGVsbG9="),
                Ok(json!("hello")),
            ),
            (
                "decode_missing_padding",
                "base64_decode",
                json!("aGVsbG8"),
                Err("illegal base64 data at input byte 4"),
            ),
            (
                "decode_bad_char",
                "base64_decode",
                json!("aGV*bG8="),
                Err("illegal base64 data at input byte 3"),
            ),
            (
                "decode_short",
                "base64_decode",
                json!("a"),
                Err("illegal base64 data at input byte 0"),
            ),
            (
                "decode_trailing_garbage",
                "base64_decode",
                json!("aGk=aGk="),
                Err("illegal base64 data at input byte 4"),
            ),
            (
                "decode_padding_too_early",
                "base64_decode",
                json!("a==="),
                Err("illegal base64 data at input byte 1"),
            ),
        ];
        for (case, name, input, want) in cases {
            match want {
                Ok(v) => assert_eq!(ok(name, &[input]), v, "{case}"),
                Err(m) => assert_eq!(err(name, &[input]), m, "{case}"),
            }
        }
    }

    #[test]
    fn hashes_are_lowercase_hex() {
        let cases = [
            (
                "md5_docs",
                "md5",
                "Alice & Bob",
                "def42e1abd2462df1f9f0a4b3d488221",
            ),
            (
                "sha1_docs",
                "sha1",
                "Alice & Bob",
                "e3ec484930685a61b0f824cd684a68699d2b98c1",
            ),
            (
                "sha256_docs",
                "sha256",
                "alertmanager-kube-prometheus-stack-alertmanager",
                "75c07bb807f2d80a85d34880b8af0c5f29f7c27577076ed5d0e4b427dee7dbcc",
            ),
            (
                "sha256_empty",
                "sha256",
                "",
                "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
            ),
        ];
        for (case, name, input, want) in cases {
            assert_eq!(ok(name, &[json!(input)]), json!(want), "{case}");
        }
    }

    #[test]
    fn path_canonicalize_cleans_like_go() {
        let cases = [
            ("double_slashes", "/var//lib///kubelet", "/var/lib/kubelet"),
            ("dot_dot", "/var/lib/../run", "/var/run"),
            ("dot_dot_above_root", "/../etc", "/etc"),
            ("relative_dot_dot", "../a/./b/", "../a/b"),
            ("only_dot", "./", "."),
            ("empty_stays_empty", "", ""),
            ("root", "///", "/"),
            (
                "containerd",
                "/var/run//containerd/./containerd.sock",
                "/var/run/containerd/containerd.sock",
            ),
        ];
        for (case, input, want) in cases {
            assert_eq!(
                ok("path_canonicalize", &[json!(input)]),
                json!(want),
                "{case}"
            );
        }
    }

    #[test]
    fn label_match_cases() {
        let labels = json!({"app": "test-app", "controller-name": "test-controller"});
        let cases = [
            ("subset", json!({"app": "test-app"}), true),
            (
                "all",
                json!({"app": "test-app", "controller-name": "test-controller"}),
                true,
            ),
            ("value_differs", json!({"app": "test-app2"}), false),
            (
                "key_missing",
                json!({"app.kubernetes.io/name": "test-app"}),
                false,
            ),
            ("empty_matches", json!({}), true),
        ];
        for (case, selector, want) in cases {
            assert_eq!(
                ok("label_match", &[selector, labels.clone()]),
                json!(want),
                "{case}"
            );
        }
        assert_eq!(
            ok("label_match", &[json!({"n": 1}), json!({"n": 1.0})]),
            json!(true)
        );
        // Kyverno's nested case: maps and lists compare deeply.
        let nested = json!({"app": "test-app", "annotations": {"test": "test"}, "ownerReferences": [{"kind": "ReplicaSet", "n": 1}]});
        assert_eq!(
            ok(
                "label_match",
                &[
                    json!({"app": "test-app", "annotations": {"test": "test"}}),
                    nested.clone()
                ]
            ),
            json!(true)
        );
        assert_eq!(
            ok(
                "label_match",
                &[
                    json!({"ownerReferences": [{"kind": "ReplicaSet", "n": 1.0}]}),
                    nested.clone()
                ]
            ),
            json!(true)
        );
        assert_eq!(
            ok(
                "label_match",
                &[json!({"annotations": {"test": "other"}}), nested]
            ),
            json!(false)
        );
    }

    #[test]
    fn parse_json_and_yaml() {
        let cases: Vec<(&str, &str, &str, Value)> = vec![
            (
                "json_object",
                "parse_json",
                r#"{"a": "b"}"#,
                json!({"a": "b"}),
            ),
            (
                "json_numbers_are_floats",
                "parse_json",
                "[1, 2.5, 1e3]",
                json!([1, 2.5, 1000]),
            ),
            ("json_scalar", "parse_json", "true", json!(true)),
            ("json_null", "parse_json", "null", Value::Null),
            (
                "json_sorted_keys",
                "parse_json",
                r#"{"b":1,"a":2}"#,
                json!({"a": 2, "b": 1}),
            ),
            ("yaml_map", "parse_yaml", "a: b", json!({"a": "b"})),
            (
                "yaml_list",
                "parse_yaml",
                "\n- 1\n- 2\n- 3\n- a: b",
                json!([1, 2, 3, {"a": "b"}]),
            ),
            (
                "yaml_nested",
                "parse_yaml",
                "\nspec:\n  test: 1\n  test2:\n    - 2\n    - 3\n",
                json!({"spec": {"test": 1, "test2": [2, 3]}}),
            ),
            (
                "yaml_folded",
                "parse_yaml",
                "\nbar: >\n  this is not a normal string it\n  spans more than\n  one line\n  see?",
                json!({"bar": "this is not a normal string it spans more than one line see?"}),
            ),
            (
                "yaml_nulls",
                "parse_yaml",
                "\n---\nfoo: ~\nbar: null\n",
                json!({"bar": null, "foo": null}),
            ),
            (
                "yaml_int_key",
                "parse_yaml",
                "1: a\ntrue: b",
                json!({"1": "a", "true": "b"}),
            ),
            (
                "yaml_first_document",
                "parse_yaml",
                "a: 1\n---\nb: 2\n",
                json!({"a": 1}),
            ),
            ("yaml_empty", "parse_yaml", "", Value::Null),
        ];
        for (case, name, input, want) in cases {
            assert_eq!(ok(name, &[json!(input)]), want, "{case}");
        }
        assert_eq!(
            err("parse_json", &[json!("{")]),
            "unexpected end of JSON input"
        );
        assert!(call("parse_json", &[json!("{a}")]).is_err());
        assert!(call("parse_yaml", &[json!("a: [")]).is_err());
    }

    #[test]
    fn lookup_cases() {
        let cases: Vec<(&str, Value, Value, Result<Value, &str>)> = vec![
            ("object_key", json!({"key1": "value1", "key2": "value2"}), json!("key2"), Ok(json!("value2"))),
            ("object_missing", json!({"a": 1}), json!("b"), Ok(Value::Null)),
            ("array_index", json!(["item0", "item1", "item2"]), json!(1), Ok(json!("item1"))),
            ("array_out_of_range", json!(["a"]), json!(3), Ok(Value::Null)),
            ("array_negative", json!(["a"]), json!(-1), Ok(Value::Null)),
            (
                "array_fraction",
                json!(["a"]),
                json!(1.5),
                Err("JMESPath function 'lookup': argument #2: expected an integer number but got: 1.5"),
            ),
            ("object_number_key", json!({"a": 1}), json!(1), Err("JMESPath function 'lookup': argument #2 is not of type String")),
            ("array_string_index", json!([1]), json!("0"), Err("JMESPath function 'lookup': argument #2 is not of type Number")),
        ];
        for (case, input, key, want) in cases {
            match want {
                Ok(v) => assert_eq!(ok("lookup", &[input, key]), v, "{case}"),
                Err(m) => assert_eq!(err("lookup", &[input, key]), m, "{case}"),
            }
        }
    }

    #[test]
    fn items_and_object_from_lists() {
        assert_eq!(
            ok(
                "items",
                &[
                    json!({"team": "apple", "organization": "banana"}),
                    json!("key"),
                    json!("value")
                ]
            ),
            json!([{"key": "organization", "value": "banana"}, {"key": "team", "value": "apple"}])
        );
        assert_eq!(
            ok(
                "items",
                &[
                    json!([{"team": "apple"}, {"organization": "banana"}]),
                    json!("key"),
                    json!("value")
                ]
            ),
            json!([{"key": 0, "value": {"team": "apple"}}, {"key": 1, "value": {"organization": "banana"}}])
        );
        assert_eq!(
            ok(
                "items",
                &[json!({"key1": "value1"}), json!("myKey"), json!("myValue")]
            ),
            json!([{"myKey": "key1", "myValue": "value1"}])
        );
        let cases = [
            (
                "strings",
                json!(["key1", "key2"]),
                json!(["1", "2"]),
                json!({"key1": "1", "key2": "2"}),
            ),
            (
                "number_value",
                json!(["key1", "key2"]),
                json!([1, "2"]),
                json!({"key1": 1, "key2": "2"}),
            ),
            (
                "missing_value",
                json!(["key1", "key2"]),
                json!([1]),
                json!({"key1": 1, "key2": null}),
            ),
            (
                "number_and_bool_keys",
                json!([1.5, true]),
                json!(["a", "b"]),
                json!({"1.5": "a", "true": "b"}),
            ),
        ];
        for (case, keys, values, want) in cases {
            assert_eq!(ok("object_from_lists", &[keys, values]), want, "{case}");
        }
        assert_eq!(
            err("object_from_lists", &[json!([null]), json!([])]),
            "JMESPath function 'object_from_lists': argument #1 is not of type StringArray"
        );
    }

    #[test]
    fn is_external_url_cases() {
        let cases = [
            ("public_ip", "http://8.8.8.8/x", Ok(true)),
            ("private_ip", "http://10.0.0.1:8080/x", Ok(false)),
            ("loopback", "https://127.0.0.1", Ok(false)),
            ("ipv6_loopback", "http://[::1]:80/", Ok(false)),
            ("ipv6_unique_local", "http://[fd00::1]/", Ok(false)),
            ("localhost", "http://localhost:8080", Ok(false)),
            (
                "service_name",
                "http://my-svc.my-ns.svc.cluster.local/path",
                Ok(false),
            ),
            ("single_label", "http://nginx", Ok(false)),
            ("public_name", "https://github.com/kyverno", Ok(true)),
            ("no_host", "just-a-path", Err("lookup : no such host")),
        ];
        for (case, url, want) in cases {
            match want {
                Ok(b) => assert_eq!(ok("is_external_url", &[json!(url)]), json!(b), "{case}"),
                Err(m) => assert_eq!(err("is_external_url", &[json!(url)]), m, "{case}"),
            }
        }
    }

    #[test]
    fn regex_functions() {
        let cases: Vec<(&str, &str, Vec<Value>, Value)> = vec![
            (
                "match_unanchored",
                "regex_match",
                vec![json!("12.*"), json!("hgf'b1a2r'b12g")],
                json!(true),
            ),
            (
                "match_number",
                "regex_match",
                vec![json!("12.*"), json!(12.0)],
                json!(true),
            ),
            (
                "match_range_docs",
                "regex_match",
                vec![json!("^[1-7]$"), json!(1)],
                json!(true),
            ),
            (
                "match_percent",
                "regex_match",
                vec![json!("^[0-9]+%$"), json!("50%")],
                json!(true),
            ),
            (
                "match_word_boundary",
                "regex_match",
                vec![json!("\\bps\\b"), json!("ps aux")],
                json!(true),
            ),
            (
                "match_no",
                "regex_match",
                vec![json!("^v[0-9].[0-9].[0-9]$"), json!("empty")],
                json!(false),
            ),
            (
                "replace_all_missing_group",
                "regex_replace_all",
                vec![
                    json!("([Hh]e|G)l"),
                    json!("Hello world, helworldlo"),
                    json!("${2}G"),
                ],
                json!("Glo world, Gworldlo"),
            ),
            (
                "replace_all_group",
                "regex_replace_all",
                vec![
                    json!("([0-9])([0-9])"),
                    json!("hello im 42 months old"),
                    json!("${1}1"),
                ],
                json!("hello im 41 months old"),
            ),
            (
                "replace_all_dollar_name_is_greedy",
                "regex_replace_all",
                vec![json!("(a)"), json!("a"), json!("$1x")],
                json!(""),
            ),
            (
                "replace_all_double_dollar",
                "regex_replace_all",
                vec![json!("a"), json!("a"), json!("$$")],
                json!("$"),
            ),
            (
                "replace_all_named",
                "regex_replace_all",
                vec![json!("(?P<w>b+)"), json!("abbc"), json!("<$w>")],
                json!("a<bb>c"),
            ),
            (
                "replace_all_empty_matches",
                "regex_replace_all",
                vec![json!("a*"), json!("baaac"), json!("X")],
                json!("XbXcX"),
            ),
            (
                "replace_all_numbers",
                "regex_replace_all",
                vec![json!("^1"), json!(12), json!(3)],
                json!("32"),
            ),
            (
                "replace_docker",
                "regex_replace_all",
                vec![
                    json!("^docker.io/(.*)$"),
                    json!("docker.io/nginx:latest"),
                    json!("harbor.corp.org/$1"),
                ],
                json!("harbor.corp.org/nginx:latest"),
            ),
            (
                "literal",
                "regex_replace_all_literal",
                vec![
                    json!("[Hh]el?"),
                    json!("Hello world, helworldlo"),
                    json!("G"),
                ],
                json!("Glo world, Gworldlo"),
            ),
            (
                "literal_keeps_dollar",
                "regex_replace_all_literal",
                vec![
                    json!("^(\\d{3}-?\\d{2}-?\\d{4})$"),
                    json!("123-45-6789"),
                    json!("$1"),
                ],
                json!("$1"),
            ),
        ];
        for (case, name, args, want) in cases {
            assert_eq!(ok(name, &args), want, "{case}");
        }
        assert!(err("regex_match", &[json!("("), json!("a")]).starts_with("error parsing regexp: "));
        // Go refuses what regex-lite would compile: the rule errors, as in Kyverno.
        assert_eq!(
            err("regex_match", &[json!("a**"), json!("a")]),
            "error parsing regexp: invalid nested repetition operator: `**`"
        );
        assert!(
            err("regex_replace_all", &[json!("("), json!("a"), json!("b")])
                .starts_with("JMESPath function 'regex_replace_all': error parsing regexp: ")
        );
    }

    #[test]
    fn semver_compare_cases() {
        let cases = [
            ("wildcard_ge", "4.1.3", ">=4.1.x", true),
            ("not_wildcard_is_never_true", "4.1.3", "!4.x.x", false),
            ("and", "1.8.6", ">1.0.0 <2.0.0", true),
            ("or", "2.1.5", "<2.0.0 || >=3.0.0", false),
            ("or_second", "3.1.5", "<2.0.0 || >=3.0.0", true),
            ("equal", "1.2.3", "1.2.3", true),
            ("equal_docs", "1.2.3", "1.2.4", false),
            ("spaces_after_operator", "1.2.3", ">= 1.0.0", true),
            ("prerelease_lower", "1.0.0-alpha", "<1.0.0", true),
            ("invalid_version_is_zero", "v1.2.3", "<0.0.1", true),
            ("not_equal", "1.2.3", "!=1.2.3", false),
            ("minor_wildcard", "1.5.0", "1.x", true),
        ];
        for (case, version, range, want) in cases {
            assert_eq!(
                ok("semver_compare", &[json!(version), json!(range)]),
                json!(want),
                "{case}"
            );
        }
        assert_eq!(
            err("semver_compare", &[json!("1.0.0"), json!("abc")]),
            "Could not get version from string: \"abc\""
        );
        assert_eq!(
            err("semver_compare", &[json!("1.0.0"), json!("")]),
            "Last element in range is '||'"
        );
    }

    #[test]
    fn random_generates_matching_text() {
        let cases = [
            "[a-z0-9]{6}",
            "[A-Z0-9]{8}-[A-Z0-9]{4}-[A-Z0-9]{12}",
            "(foo|bar)-\\d{3}",
            "x[^a-z]y?z+",
            "[0-9]{1,6}",
        ];
        for pattern in cases {
            let generated = ok("random", &[json!(pattern)]);
            let text = generated.as_str().unwrap();
            let anchored = regex_lite::Regex::new(&format!("^(?:{pattern})$")).unwrap();
            assert!(anchored.is_match(text), "{pattern} gave {text}");
        }
        assert_eq!(err("random", &[json!("")]), "no pattern provided");
        assert!(call("random", &[json!("a{2000}")]).is_err());
        assert!(call("random", &[json!("(a")]).is_err());
    }

    #[test]
    fn image_normalize_cases() {
        let cases = [
            ("short_name", "nginx", Ok("docker.io/nginx:latest")),
            ("tag", "nginx:v10.3", Ok("docker.io/nginx:v10.3")),
            ("full", "docker.io/test/nginx:v10.3", Ok("docker.io/test/nginx:v10.3")),
            ("two_segments", "test/nginx", Ok("docker.io/test/nginx:latest")),
            ("registry_port", "localhost:4443/test/nginx", Ok("localhost:4443/test/nginx:latest")),
            (
                "digest",
                "docker.io/test/centos@sha256:dc25bd6a1b7d3e4b8b3c2e5e1d8b9d1a7b2e3f4a5b6c7d8e9f0a1b2c3d4e5f60",
                Ok("docker.io/test/centos@sha256:dc25bd6a1b7d3e4b8b3c2e5e1d8b9d1a7b2e3f4a5b6c7d8e9f0a1b2c3d4e5f60"),
            ),
            ("ghcr", "ghcr.io/kyverno/kyverno:v1.10", Ok("ghcr.io/kyverno/kyverno:v1.10")),
            (
                "invalid",
                "++",
                Err("JMESPath function 'image_normalize': bad image: docker.io/++, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: invalid reference format"),
            ),
            (
                "uppercase",
                "Nginx",
                Err("JMESPath function 'image_normalize': bad image: docker.io/Nginx, defaultRegistry: docker.io, enableDefaultRegistryMutation: true: repository name must be lowercase"),
            ),
        ];
        for (case, input, want) in cases {
            match want {
                Ok(v) => assert_eq!(ok("image_normalize", &[json!(input)]), json!(v), "{case}"),
                Err(m) => assert_eq!(err("image_normalize", &[json!(input)]), m, "{case}"),
            }
        }
    }

    #[test]
    fn unknown_function_is_an_error() {
        assert!(call("no_such_function", &[]).is_err());
    }
}
