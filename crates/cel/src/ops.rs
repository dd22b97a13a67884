//! Operators: arithmetic with cel-go's overflow rules, ordering, equality
//! and `in`.

use std::cmp::Ordering;
use std::rc::Rc;

use crate::ast::BinOp;
use crate::budget::Budget;
use crate::error::EvalError;
use crate::time;
use crate::time::Timestamp;
use crate::value::no_overload;
use crate::value::{cmp_numbers, equal, Bin, Str, Value};

pub(crate) fn negate(v: Value<'_>) -> Result<Value<'_>, EvalError> {
    match v {
        Value::Int(i) => i
            .checked_neg()
            .map(Value::Int)
            .ok_or(EvalError::IntegerOverflow),
        Value::Double(d) => Ok(Value::Double(-d)),
        Value::Duration(d) => d
            .checked_neg()
            .map(Value::Duration)
            .ok_or(EvalError::IntegerOverflow),
        other => Err(no_overload("-_", &[other])),
    }
}

pub(crate) fn binary<'a>(
    op: BinOp,
    a: &Value<'a>,
    b: &Value<'a>,
    budget: &mut Budget,
) -> Result<Value<'a>, EvalError> {
    let fail = || no_overload(op.name(), &[a.clone(), b.clone()]);
    match op {
        BinOp::Eq => equal(a, b, budget).map(Value::Bool),
        BinOp::Ne => equal(a, b, budget).map(|e| Value::Bool(!e)),
        BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => {
            let ord = compare(a, b).ok_or_else(fail)??;
            Ok(Value::Bool(match op {
                BinOp::Lt => ord == Ordering::Less,
                BinOp::Le => ord != Ordering::Greater,
                BinOp::Gt => ord == Ordering::Greater,
                _ => ord != Ordering::Less,
            }))
        }
        BinOp::In => contains(b, a, budget)?.map(Value::Bool).ok_or_else(fail),
        BinOp::Add => add(a, b, budget)?.ok_or_else(fail),
        BinOp::Sub => sub(a, b)?.ok_or_else(fail),
        BinOp::Mul => match (a, b) {
            (Value::Int(x), Value::Int(y)) => x
                .checked_mul(*y)
                .map(Value::Int)
                .ok_or(EvalError::IntegerOverflow),
            (Value::Uint(x), Value::Uint(y)) => x
                .checked_mul(*y)
                .map(Value::Uint)
                .ok_or(EvalError::UintOverflow),
            (Value::Double(x), Value::Double(y)) => Ok(Value::Double(x * y)),
            _ => Err(fail()),
        },
        BinOp::Div => match (a, b) {
            (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
                Err(EvalError::DivisionByZero)
            }
            (Value::Int(x), Value::Int(y)) => x
                .checked_div(*y)
                .map(Value::Int)
                .ok_or(EvalError::IntegerOverflow),
            (Value::Uint(x), Value::Uint(y)) => Ok(Value::Uint(x / y)),
            (Value::Double(x), Value::Double(y)) => Ok(Value::Double(x / y)),
            _ => Err(fail()),
        },
        BinOp::Rem => match (a, b) {
            (Value::Int(_), Value::Int(0)) | (Value::Uint(_), Value::Uint(0)) => {
                Err(EvalError::ModulusByZero)
            }
            (Value::Int(x), Value::Int(y)) => x
                .checked_rem(*y)
                .map(Value::Int)
                .ok_or(EvalError::IntegerOverflow),
            (Value::Uint(x), Value::Uint(y)) => Ok(Value::Uint(x % y)),
            _ => Err(fail()),
        },
    }
}

/// Ordering for `<` and friends: `None` when no overload applies, an
/// error for NaN.
pub(crate) fn compare(a: &Value<'_>, b: &Value<'_>) -> Option<Result<Ordering, EvalError>> {
    let nan = || EvalError::msg("NaN values cannot be ordered");
    if let Some(ord) = cmp_numbers(a, b) {
        return Some(ord.ok_or_else(nan));
    }
    Some(Ok(match (a, b) {
        (Value::String(x), Value::String(y)) => x.as_bytes().cmp(y.as_bytes()),
        (Value::Bytes(x), Value::Bytes(y)) => (**x).cmp(&**y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Duration(x), Value::Duration(y)) => x.cmp(y),
        (Value::Timestamp(x), Value::Timestamp(y)) => x.cmp(y),
        _ => return None,
    }))
}

/// `elem in container`; `None` when the container is neither list nor map.
fn contains(
    container: &Value<'_>,
    elem: &Value<'_>,
    budget: &mut Budget,
) -> Result<Option<bool>, EvalError> {
    if let Some(list) = container.as_list() {
        for item in list.iter() {
            if equal(&item, elem, budget)? {
                return Ok(Some(true));
            }
        }
        return Ok(Some(false));
    }
    Ok(container.as_map().map(|m| m.get(elem).is_some()))
}

fn add<'a>(
    a: &Value<'a>,
    b: &Value<'a>,
    budget: &mut Budget,
) -> Result<Option<Value<'a>>, EvalError> {
    Ok(Some(match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_add(*y).ok_or(EvalError::IntegerOverflow)?)
        }
        (Value::Uint(x), Value::Uint(y)) => {
            Value::Uint(x.checked_add(*y).ok_or(EvalError::UintOverflow)?)
        }
        (Value::Double(x), Value::Double(y)) => Value::Double(x + y),
        (Value::String(x), Value::String(y)) => {
            budget.charge_len(x.len() + y.len())?;
            if y.is_empty() {
                return Ok(Some(a.clone()));
            }
            if x.is_empty() {
                return Ok(Some(b.clone()));
            }
            let mut s = String::with_capacity(x.len() + y.len());
            s.push_str(x);
            s.push_str(y);
            Value::String(Str::from(s))
        }
        (Value::Bytes(x), Value::Bytes(y)) => {
            budget.charge_len(x.len() + y.len())?;
            let mut out = Vec::with_capacity(x.len() + y.len());
            out.extend_from_slice(x);
            out.extend_from_slice(y);
            Value::Bytes(Bin::Owned(out.into()))
        }
        (Value::Duration(x), Value::Duration(y)) => {
            Value::Duration(x.checked_add(*y).ok_or(EvalError::IntegerOverflow)?)
        }
        (Value::Timestamp(t), Value::Duration(d)) | (Value::Duration(d), Value::Timestamp(t)) => {
            Value::Timestamp(time::add_duration(*t, i128::from(*d))?)
        }
        _ => match (a.as_list(), b.as_list()) {
            (Some(x), Some(y)) => {
                budget.charge_items(x.len() + y.len())?;
                let mut out = Vec::with_capacity(x.len() + y.len());
                out.extend(x.iter());
                out.extend(y.iter());
                Value::List(Rc::new(out))
            }
            _ => return Ok(None),
        },
    }))
}

fn sub<'a>(a: &Value<'a>, b: &Value<'a>) -> Result<Option<Value<'a>>, EvalError> {
    Ok(Some(match (a, b) {
        (Value::Int(x), Value::Int(y)) => {
            Value::Int(x.checked_sub(*y).ok_or(EvalError::IntegerOverflow)?)
        }
        (Value::Uint(x), Value::Uint(y)) => {
            Value::Uint(x.checked_sub(*y).ok_or(EvalError::UintOverflow)?)
        }
        (Value::Double(x), Value::Double(y)) => Value::Double(x - y),
        (Value::Duration(x), Value::Duration(y)) => {
            Value::Duration(x.checked_sub(*y).ok_or(EvalError::IntegerOverflow)?)
        }
        (Value::Timestamp(t), Value::Duration(d)) => {
            Value::Timestamp(time::add_duration(*t, -i128::from(*d))?)
        }
        (Value::Timestamp(x), Value::Timestamp(y)) => Value::Duration(timestamp_diff(*x, *y)?),
        _ => return Ok(None),
    }))
}

fn timestamp_diff(x: Timestamp, y: Timestamp) -> Result<i64, EvalError> {
    let nanos = |t: Timestamp| i128::from(t.secs) * 1_000_000_000 + i128::from(t.nanos);
    i64::try_from(nanos(x) - nanos(y)).map_err(|_| EvalError::IntegerOverflow)
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    #[test]
    fn arithmetic_follows_cel_go() {
        let cases = [
            ("int_add", "1 + 2", "3"),
            (
                "int_overflow",
                "9223372036854775807 + 1",
                "error: integer overflow",
            ),
            (
                "int_mul_overflow",
                "4611686018427387904 * 2",
                "error: integer overflow",
            ),
            (
                "min_negate_overflow",
                "-(-9223372036854775808)",
                "error: integer overflow",
            ),
            (
                "min_div_minus_one",
                "-9223372036854775808 / -1",
                "error: integer overflow",
            ),
            (
                "min_rem_minus_one",
                "-9223372036854775808 % -1",
                "error: integer overflow",
            ),
            (
                "uint_underflow",
                "1u - 2u",
                "error: unsigned integer overflow",
            ),
            ("division_by_zero", "1 / 0", "error: division by zero"),
            ("modulus_by_zero", "1 % 0", "error: modulus by zero"),
            (
                "uint_division_by_zero",
                "1u / 0u",
                "error: division by zero",
            ),
            ("int_division_truncates", "-7 / 2", "-3"),
            ("int_remainder_sign", "-7 % 2", "-1"),
            ("double_division_by_zero", "1.0 / 0.0", "+Inf"),
            ("double_arith", "1.5 * 2.0 - 0.5", "2.5"),
            (
                "mixed_is_no_overload",
                "1 + 1u",
                "error: no matching overload for '_+_' applied to '(int, uint)'",
            ),
            (
                "int_plus_string",
                "1 + 'a'",
                "error: no matching overload for '_+_' applied to '(int, string)'",
            ),
            (
                "double_modulo",
                "1.5 % 1.0",
                "error: no matching overload for '_%_' applied to '(double, double)'",
            ),
            ("string_concat", "'ab' + 'cd'", "abcd"),
            ("bytes_concat", "b'a' + b'b' == b'ab'", "true"),
            ("list_concat", "[1] + [2, 3]", "[1, 2, 3]"),
            (
                "negate_uint",
                "-(1u)",
                "error: no matching overload for '-_' applied to '(uint)'",
            ),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }

    #[test]
    fn comparisons_follow_cel_go() {
        let cases = [
            ("mixed_numeric", "1 < 1.5 && 2u > 1 && 1.0 == 1", "true"),
            (
                "big_uint_vs_int",
                "18446744073709551615u > 9223372036854775807",
                "true",
            ),
            ("negative_vs_uint", "-1 < 0u", "true"),
            ("strings_bytewise", "'a' < 'b' && 'B' < 'a'", "true"),
            ("bools", "false < true", "true"),
            ("bytes", "b'a' < b'b'", "true"),
            (
                "nan_cannot_order",
                "double('NaN') < 1.0",
                "error: NaN values cannot be ordered",
            ),
            (
                "lists_do_not_order",
                "[1] < [2]",
                "error: no matching overload for '_<_' applied to '(list, list)'",
            ),
            ("mixed_types_unequal", "1 == 'a'", "false"),
            ("null_equals_null", "null == null", "true"),
            (
                "deep_list_equality",
                "[dyn(1), [dyn(2), 'x']] == [dyn(1.0), [dyn(2u), 'x']]",
                "true",
            ),
            (
                "map_equality_ignores_order",
                "{'a': 1, 'b': 2} == {'b': 2, 'a': 1}",
                "true",
            ),
            ("ne", "1 != 2", "true"),
            ("in_list", "2 in [1, 2, 3]", "true"),
            ("in_list_numeric", "2.0 in [1, 2, 3]", "true"),
            ("in_map", "'a' in {'a': 1}", "true"),
            ("not_in_map", "'b' in {'a': 1}", "false"),
            (
                "in_string_is_error",
                "'a' in 'abc'",
                "error: no matching overload for '@in' applied to '(string, string)'",
            ),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }
}
