//! JMESPath's truthiness, equality and comparisons of values.

use serde_json::Value;

use crate::ast::Comparator;

/// JMESPath truthiness: false, null, "", [] and {} are false.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Number(_) => true,
    }
}

/// Deep equality with numbers compared as float64, as Go's decoded JSON is.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

pub(crate) fn compare(comparator: &Comparator, left: &Value, right: &Value) -> Value {
    match comparator {
        Comparator::Equal => Value::Bool(equal(left, right)),
        Comparator::NotEqual => Value::Bool(!equal(left, right)),
        ordering => {
            let (Some(l), Some(r)) = (left.as_f64(), right.as_f64()) else {
                return Value::Null;
            };
            Value::Bool(match ordering {
                Comparator::LessThan => l < r,
                Comparator::LessThanEqual => l <= r,
                Comparator::GreaterThan => l > r,
                _ => l >= r,
            })
        }
    }
}
