//! The standard library: `size`, string tests and type conversions, with
//! cel-go's rules and error texts.

use crate::budget::Budget;
use crate::error::EvalError;
use crate::func::Func;
use crate::time;
use crate::value::no_overload;
use crate::value::{format_double, Bin, Str, Value};

pub(crate) fn call<'a>(
    func: Func,
    args: &[Value<'a>],
    budget: &mut Budget,
) -> Result<Value<'a>, EvalError> {
    let fail = || no_overload(func.name(), args);
    match (func, args) {
        (Func::Size, [v]) => size(v, budget).ok_or_else(fail)?,
        (Func::Contains, [Value::String(s), Value::String(sub)]) => {
            budget.charge_len(s.len())?;
            Ok(Value::Bool(s.contains(&**sub)))
        }
        (Func::StartsWith, [Value::String(s), Value::String(p)]) => {
            Ok(Value::Bool(s.starts_with(&**p)))
        }
        (Func::EndsWith, [Value::String(s), Value::String(p)]) => {
            Ok(Value::Bool(s.ends_with(&**p)))
        }
        (Func::Int, [v]) => to_int(v).ok_or_else(fail)?,
        (Func::Uint, [v]) => to_uint(v).ok_or_else(fail)?,
        (Func::Double, [v]) => to_double(v).ok_or_else(fail)?,
        (Func::String, [v]) => to_string(v, budget).ok_or_else(fail)?,
        (Func::Bool, [v]) => to_bool(v).ok_or_else(fail)?,
        (Func::Bytes, [Value::Bytes(b)]) => Ok(Value::Bytes(b.clone())),
        (Func::Bytes, [Value::String(s)]) => {
            budget.charge_len(s.len())?;
            Ok(Value::Bytes(Bin::Owned(s.as_bytes().into())))
        }
        (Func::Dyn, [v]) => Ok(v.clone()),
        (Func::Type, [v]) => Ok(Value::Type(v.type_of())),
        _ => Err(fail()),
    }
}

fn size<'a>(v: &Value<'a>, budget: &mut Budget) -> Option<Result<Value<'a>, EvalError>> {
    let n = match v {
        Value::String(s) => {
            if let Err(e) = budget.charge_len(s.len()) {
                return Some(Err(e));
            }
            s.chars().count()
        }
        Value::Bytes(b) => b.len(),
        other => match (other.as_list(), other.as_map()) {
            (Some(l), _) => l.len(),
            (_, Some(m)) => m.len(),
            _ => return None,
        },
    };
    Some(Ok(Value::Int(i64::try_from(n).unwrap_or(i64::MAX))))
}

fn conversion_error(from: &Value<'_>, to: &str) -> EvalError {
    EvalError::msg(format!(
        "type conversion error from '{}' to '{to}'",
        from.type_name()
    ))
}

/// `None` when no overload takes `v`.
fn to_int<'a>(v: &Value<'a>) -> Option<Result<Value<'a>, EvalError>> {
    Some(match v {
        Value::Int(i) => Ok(Value::Int(*i)),
        Value::Uint(u) => i64::try_from(*u)
            .map(Value::Int)
            .map_err(|_| EvalError::IntegerOverflow),
        Value::Double(d) => double_to_int(*d).map(Value::Int),
        Value::String(s) => s
            .parse::<i64>()
            .map(Value::Int)
            .map_err(|_| conversion_error(v, "int")),
        Value::Timestamp(t) => Ok(Value::Int(t.secs)),
        Value::Duration(d) => Ok(Value::Int(*d)),
        _ => return None,
    })
}

/// Truncation towards zero, erroring outside `int` as cel-go does.
pub(crate) fn double_to_int(d: f64) -> Result<i64, EvalError> {
    const TWO_63: f64 = 9_223_372_036_854_775_808.0;
    if !d.is_finite() || d <= -TWO_63 || d >= TWO_63 {
        return Err(EvalError::IntegerOverflow);
    }
    #[allow(clippy::cast_possible_truncation)]
    Ok(d as i64)
}

fn to_uint<'a>(v: &Value<'a>) -> Option<Result<Value<'a>, EvalError>> {
    const TWO_64: f64 = 18_446_744_073_709_551_616.0;
    Some(match v {
        Value::Uint(u) => Ok(Value::Uint(*u)),
        Value::Int(i) => u64::try_from(*i)
            .map(Value::Uint)
            .map_err(|_| EvalError::UintOverflow),
        Value::Double(d) => {
            if !d.is_finite() || *d < 0.0 || *d >= TWO_64 {
                Err(EvalError::UintOverflow)
            } else {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Ok(Value::Uint(*d as u64))
            }
        }
        // Go's ParseUint takes no sign.
        Value::String(s) if !s.starts_with('+') => s
            .parse::<u64>()
            .map(Value::Uint)
            .map_err(|_| conversion_error(v, "uint")),
        Value::String(_) => Err(conversion_error(v, "uint")),
        _ => return None,
    })
}

fn to_double<'a>(v: &Value<'a>) -> Option<Result<Value<'a>, EvalError>> {
    #[allow(clippy::cast_precision_loss)]
    Some(match v {
        Value::Double(d) => Ok(Value::Double(*d)),
        Value::Int(i) => Ok(Value::Double(*i as f64)),
        Value::Uint(u) => Ok(Value::Double(*u as f64)),
        Value::String(s) => s
            .parse::<f64>()
            .map(Value::Double)
            .map_err(|_| conversion_error(v, "double")),
        _ => return None,
    })
}

fn to_string<'a>(v: &Value<'a>, budget: &mut Budget) -> Option<Result<Value<'a>, EvalError>> {
    Some(Ok(match v {
        Value::String(s) => Value::String(s.clone()),
        Value::Int(i) => Value::string(i.to_string()),
        Value::Uint(u) => Value::string(u.to_string()),
        Value::Double(d) => Value::string(format_double(*d)),
        Value::Bool(b) => Value::String(Str::Borrowed(if *b { "true" } else { "false" })),
        Value::Bytes(b) => {
            if let Err(e) = budget.charge_len(b.len()) {
                return Some(Err(e));
            }
            match std::str::from_utf8(b) {
                Ok(s) => Value::string(s.to_string()),
                Err(_) => return Some(Err(conversion_error(v, "string"))),
            }
        }
        Value::Timestamp(t) => Value::string(time::timestamp_string(*t)),
        Value::Duration(d) => Value::string(time::duration_string(*d)),
        Value::Type(t) => Value::String(Str::Borrowed(t.name())),
        Value::Ip(_) | Value::Cidr(_) => Value::string(v.to_string()),
        _ => return None,
    }))
}

fn to_bool<'a>(v: &Value<'a>) -> Option<Result<Value<'a>, EvalError>> {
    Some(match v {
        Value::Bool(b) => Ok(Value::Bool(*b)),
        // Go's strconv.ParseBool.
        Value::String(s) => match &**s {
            "1" | "t" | "T" | "TRUE" | "true" | "True" => Ok(Value::Bool(true)),
            "0" | "f" | "F" | "FALSE" | "false" | "False" => Ok(Value::Bool(false)),
            _ => Err(conversion_error(v, "bool")),
        },
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    #[test]
    fn size_and_string_tests() {
        let cases = [
            ("string_counts_code_points", "size('héllo')", "5"),
            ("member_size", "'abc'.size()", "3"),
            ("bytes", "size(b'\\xff\\x00')", "2"),
            ("list", "size([1, 2, 3])", "3"),
            ("map", "{'a': 1}.size()", "1"),
            ("contains", "'kubernetes'.contains('erne')", "true"),
            ("starts_with", "'kubernetes'.startsWith('kube')", "true"),
            ("ends_with", "'kubernetes'.endsWith('tes')", "true"),
            (
                "size_of_int",
                "size(1)",
                "error: no matching overload for 'size' applied to '(int)'",
            ),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }

    #[test]
    fn conversions_follow_cel_go() {
        let cases = [
            ("int_truncates", "int(1.9)", "1"),
            ("int_negative_truncates", "int(-1.9)", "-1"),
            ("int_from_string", "int('-42')", "-42"),
            (
                "int_bad_string",
                "int('x')",
                "error: type conversion error from 'string' to 'int'",
            ),
            (
                "int_from_big_uint",
                "int(18446744073709551615u)",
                "error: integer overflow",
            ),
            (
                "int_from_huge_double",
                "int(1e19)",
                "error: integer overflow",
            ),
            ("int_nan", "int(double('NaN'))", "error: integer overflow"),
            (
                "uint_from_negative",
                "uint(-1)",
                "error: unsigned integer overflow",
            ),
            ("uint_from_string", "uint('7')", "7"),
            (
                "uint_rejects_sign",
                "uint('+7')",
                "error: type conversion error from 'string' to 'uint'",
            ),
            ("double_from_int", "double(3)", "3"),
            ("double_from_string", "double('2.5')", "2.5"),
            ("string_of_double", "string(1.5)", "1.5"),
            ("string_of_big_double", "string(1e21)", "1e+21"),
            ("string_of_uint", "string(7u)", "7"),
            ("string_of_bool", "string(true)", "true"),
            ("string_of_bytes", "string(b'abc')", "abc"),
            (
                "string_of_bad_bytes",
                "string(b'\\xff')",
                "error: type conversion error from 'bytes' to 'string'",
            ),
            (
                "string_of_list",
                "string([1])",
                "error: no matching overload for 'string' applied to '(list)'",
            ),
            ("bool_from_string", "bool('True')", "true"),
            (
                "bool_bad_string",
                "bool('yes')",
                "error: type conversion error from 'string' to 'bool'",
            ),
            ("bytes_from_string", "bytes('a') == b'a'", "true"),
            ("dyn_is_identity", "dyn(1) == 1", "true"),
            ("type_of_int", "type(1) == int", "true"),
            ("type_of_json_map", "type({'a': 1}) == map", "true"),
            ("type_of_type", "type(int) == type", "true"),
            ("type_name", "string(type('a'))", "string"),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }
}
