//! The standard JMESPath functions, as go-jmespath implements them.

use std::cmp::Ordering;

use serde_json::{Map, Value};

use std::borrow::Cow;

use crate::ast::Node;
use crate::compare::equal;
use crate::error::SearchError;
use crate::go;
use crate::types::{ArgType as T, Signature};

/// A function argument: a value, or an expression reference.
pub(crate) enum Arg<'a> {
    Value(Cow<'a, Value>),
    Expref(Expref<'a>),
}

/// An expression reference (`&expr`) with the evaluator that applies it,
/// so the functions never call back into the interpreter by name.
pub(crate) struct Expref<'a> {
    pub node: &'a Node,
    pub apply: fn(&Node, &Value) -> Result<Value, SearchError>,
}

const ANY: &[T] = &[T::Any];
const NUM: &[T] = &[T::Number];
const STR: &[T] = &[T::String];
const OBJ: &[T] = &[T::Object];
const ARR: &[T] = &[T::Array];
const EXP: &[T] = &[T::Expref];

static SIGNATURES: &[Signature] = &[
    sig("abs", &[NUM]),
    sig("avg", &[&[T::ArrayNumber]]),
    sig("ceil", &[NUM]),
    sig("contains", &[&[T::Array, T::String], ANY]),
    sig("ends_with", &[STR, STR]),
    sig("floor", &[NUM]),
    sig("join", &[STR, &[T::ArrayString]]),
    sig("keys", &[OBJ]),
    sig("length", &[&[T::String, T::Array, T::Object]]),
    sig("map", &[EXP, ARR]),
    sig("max", &[&[T::ArrayNumber, T::ArrayString]]),
    sig("max_by", &[ARR, EXP]),
    Signature {
        name: "merge",
        args: &[OBJ],
        variadic: true,
    },
    sig("min", &[&[T::ArrayNumber, T::ArrayString]]),
    sig("min_by", &[ARR, EXP]),
    Signature {
        name: "not_null",
        args: &[ANY],
        variadic: true,
    },
    sig("reverse", &[&[T::Array, T::String]]),
    sig("sort", &[&[T::ArrayNumber, T::ArrayString]]),
    sig("sort_by", &[ARR, EXP]),
    sig("starts_with", &[STR, STR]),
    sig("sum", &[&[T::ArrayNumber]]),
    sig("to_array", &[ANY]),
    sig("to_number", &[ANY]),
    sig("to_string", &[ANY]),
    sig("type", &[ANY]),
    sig("values", &[OBJ]),
];

const fn sig(name: &'static str, args: &'static [&'static [T]]) -> Signature {
    Signature {
        name,
        args,
        variadic: false,
    }
}

pub fn signature(name: &str) -> Option<&'static Signature> {
    SIGNATURES.iter().find(|s| s.name == name)
}

fn value<'b>(args: &'b [Arg<'_>], i: usize) -> &'b Value {
    match args.get(i) {
        Some(Arg::Value(v)) => v.as_ref(),
        _ => &Value::Null,
    }
}

fn expref<'b, 'a>(args: &'b [Arg<'a>], i: usize) -> Option<&'b Expref<'a>> {
    match args.get(i) {
        Some(Arg::Expref(expref)) => Some(expref),
        _ => None,
    }
}

fn f64_of(v: &Value) -> f64 {
    v.as_f64().unwrap_or(0.0)
}

fn items(v: &Value) -> &[Value] {
    v.as_array().map_or(&[], Vec::as_slice)
}

/// Applies an expression reference to one element.
fn apply(expref: &Expref<'_>, element: &Value) -> Result<Value, SearchError> {
    (expref.apply)(expref.node, element)
}

/// Orders numbers or strings; anything else is a type error.
fn order(a: &Value, b: &Value, name: &str) -> Result<Ordering, SearchError> {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => Ok(f64_of(&Value::Number(x.clone()))
            .partial_cmp(&f64_of(&Value::Number(y.clone())))
            .unwrap_or(Ordering::Equal)),
        (Value::String(x), Value::String(y)) => Ok(x.cmp(y)),
        _ => Err(SearchError::Function(format!(
            "{name}: expected the expression to return numbers or strings, got {} and {}",
            go::sprint(a),
            go::sprint(b)
        ))),
    }
}

pub(crate) fn call(name: &str, args: &[Arg<'_>]) -> Result<Value, SearchError> {
    let a = value(args, 0);
    Ok(match name {
        "abs" => go::number(f64_of(a).abs()),
        "avg" => {
            let nums = items(a);
            if nums.is_empty() {
                Value::Null
            } else {
                go::number(nums.iter().map(f64_of).sum::<f64>() / nums.len() as f64)
            }
        }
        "ceil" => go::number(f64_of(a).ceil()),
        "floor" => go::number(f64_of(a).floor()),
        "contains" => {
            let needle = value(args, 1);
            Value::Bool(match a {
                Value::String(s) => needle.as_str().is_some_and(|n| s.contains(n)),
                _ => items(a).iter().any(|item| equal(item, needle)),
            })
        }
        "ends_with" => Value::Bool(
            a.as_str()
                .unwrap_or_default()
                .ends_with(value(args, 1).as_str().unwrap_or_default()),
        ),
        "starts_with" => Value::Bool(
            a.as_str()
                .unwrap_or_default()
                .starts_with(value(args, 1).as_str().unwrap_or_default()),
        ),
        "join" => {
            let parts: Vec<&str> = items(value(args, 1))
                .iter()
                .filter_map(Value::as_str)
                .collect();
            Value::String(parts.join(a.as_str().unwrap_or_default()))
        }
        "keys" => Value::Array(
            a.as_object()
                .map(|m| m.keys().cloned().map(Value::String).collect())
                .unwrap_or_default(),
        ),
        "values" => Value::Array(
            a.as_object()
                .map(|m| m.values().cloned().collect())
                .unwrap_or_default(),
        ),
        "length" => {
            let n = match a {
                Value::String(s) => s.chars().count(),
                Value::Array(items) => items.len(),
                Value::Object(map) => map.len(),
                _ => 0,
            };
            Value::from(n)
        }
        "map" => {
            let Some(node) = expref(args, 0) else {
                return Ok(Value::Null);
            };
            let mut out = Vec::new();
            for item in items(value(args, 1)) {
                out.push(apply(node, item)?);
            }
            Value::Array(out)
        }
        "max" | "min" => {
            let mut best: Option<&Value> = None;
            for item in items(a) {
                best = Some(match best {
                    None => item,
                    Some(b) => {
                        let ord = order(item, b, name)?;
                        let better = if name == "max" {
                            ord == Ordering::Greater
                        } else {
                            ord == Ordering::Less
                        };
                        if better {
                            item
                        } else {
                            b
                        }
                    }
                });
            }
            best.cloned().unwrap_or(Value::Null)
        }
        "max_by" | "min_by" => {
            let Some(node) = expref(args, 1) else {
                return Ok(Value::Null);
            };
            let mut best: Option<(&Value, Value)> = None;
            for item in items(a) {
                let key = apply(node, item)?;
                if !key.is_number() && !key.is_string() {
                    return Err(SearchError::Function(format!(
                        "{name}: the expression must return a number or a string, not {}",
                        go::sprint(&key)
                    )));
                }
                let better = match &best {
                    None => true,
                    Some((_, k)) => {
                        let ord = order(&key, k, name)?;
                        if name == "max_by" {
                            ord == Ordering::Greater
                        } else {
                            ord == Ordering::Less
                        }
                    }
                };
                if better {
                    best = Some((item, key));
                }
            }
            best.map(|(item, _)| item.clone()).unwrap_or(Value::Null)
        }
        "merge" => {
            let mut out = Map::new();
            for arg in args {
                if let Arg::Value(v) = arg {
                    if let Value::Object(map) = v.as_ref() {
                        for (k, v) in map {
                            out.insert(k.clone(), v.clone());
                        }
                    }
                }
            }
            Value::Object(out)
        }
        "not_null" => args
            .iter()
            .find_map(|arg| match arg {
                Arg::Value(v) if !v.is_null() => Some(v.as_ref().clone()),
                _ => None,
            })
            .unwrap_or(Value::Null),
        "reverse" => match a {
            Value::String(s) => Value::String(s.chars().rev().collect()),
            _ => Value::Array(items(a).iter().rev().cloned().collect()),
        },
        "sort" => {
            let mut sorted = items(a).to_vec();
            let mut error = None;
            sorted.sort_by(|x, y| {
                order(x, y, name).unwrap_or_else(|e| {
                    error.get_or_insert(e);
                    Ordering::Equal
                })
            });
            if let Some(e) = error {
                return Err(e);
            }
            Value::Array(sorted)
        }
        "sort_by" => {
            let Some(node) = expref(args, 1) else {
                return Ok(Value::Null);
            };
            let mut keyed = Vec::new();
            for item in items(a) {
                keyed.push((apply(node, item)?, item.clone()));
            }
            let mut error = None;
            keyed.sort_by(|x, y| {
                order(&x.0, &y.0, name).unwrap_or_else(|e| {
                    error.get_or_insert(e);
                    Ordering::Equal
                })
            });
            if let Some(e) = error {
                return Err(e);
            }
            Value::Array(keyed.into_iter().map(|(_, v)| v).collect())
        }
        "sum" => go::number(items(a).iter().map(f64_of).sum()),
        "to_array" => match a {
            Value::Array(_) => a.clone(),
            other => Value::Array(vec![other.clone()]),
        },
        "to_number" => match a {
            Value::Number(_) => a.clone(),
            Value::String(s) => s.parse::<f64>().map(go::number).unwrap_or(Value::Null),
            _ => Value::Null,
        },
        "to_string" => match a {
            Value::String(_) => a.clone(),
            other => Value::String(go::json(other)),
        },
        "type" => Value::String(
            match a {
                Value::Null => "null",
                Value::Bool(_) => "boolean",
                Value::Number(_) => "number",
                Value::String(_) => "string",
                Value::Array(_) => "array",
                Value::Object(_) => "object",
            }
            .into(),
        ),
        other => {
            return Err(SearchError::Function(format!(
                "unknown function: {other}()"
            )));
        }
    })
}
