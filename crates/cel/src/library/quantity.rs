//! Kubernetes' quantity library (`quantity()`, `isQuantity()`, `add()`,
//! `compareTo()`, …).

use std::cmp::Ordering;
use std::rc::Rc;

use kube_units::quantity::{QuantityFormat, QuantityValue};

use crate::error::EvalError;
use crate::func::Func;
use crate::quantity::{as_i64, compare, sign};
use crate::value::{no_overload, Value};

const FORMAT_WRONG: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

pub(crate) fn call<'a>(func: Func, args: &[Value<'a>]) -> Result<Value<'a>, EvalError> {
    let fail = || no_overload(func.name(), args);
    match (func, args) {
        (Func::Quantity, [Value::String(s)]) => QuantityValue::parse(s)
            .map(|q| Value::Quantity(Rc::new(q)))
            .ok_or_else(|| EvalError::msg(FORMAT_WRONG)),
        (Func::IsQuantity, [Value::String(s)]) => {
            Ok(Value::Bool(QuantityValue::parse(s).is_some()))
        }
        (Func::Sign, [Value::Quantity(q)]) => Ok(Value::Int(sign(q))),
        (Func::IsInteger, [Value::Quantity(q)]) => Ok(Value::Bool(as_i64(q).is_some())),
        (Func::AsInteger, [Value::Quantity(q)]) => as_i64(q)
            .map(Value::Int)
            .ok_or_else(|| EvalError::msg("cannot convert value to integer")),
        (Func::AsApproximateFloat, [Value::Quantity(q)]) => {
            Ok(Value::Double(q.as_approximate_f64()))
        }
        (Func::Add | Func::Sub, [Value::Quantity(q), other]) => {
            let other = match other {
                Value::Quantity(o) => **o,
                Value::Int(i) => QuantityValue::from_i64(*i, QuantityFormat::DecimalExponent),
                _ => return Err(fail()),
            };
            let result = if func == Func::Add {
                q.add(&other)
            } else {
                q.sub(&other)
            };
            result
                .map(|r| Value::Quantity(Rc::new(r)))
                .ok_or_else(|| EvalError::msg("quantity arithmetic overflow"))
        }
        (Func::CompareTo, [Value::Quantity(a), Value::Quantity(b)]) => {
            Ok(Value::Int(match compare(a, b) {
                Ordering::Less => -1,
                Ordering::Equal => 0,
                Ordering::Greater => 1,
            }))
        }
        (Func::IsGreaterThan, [Value::Quantity(a), Value::Quantity(b)]) => {
            Ok(Value::Bool(compare(a, b) == Ordering::Greater))
        }
        (Func::IsLessThan, [Value::Quantity(a), Value::Quantity(b)]) => {
            Ok(Value::Bool(compare(a, b) == Ordering::Less))
        }
        _ => Err(fail()),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    #[test]
    fn quantity_library() {
        let cases = [
            ("parse_and_compare", "quantity('200M').compareTo(quantity('0.2G'))", "0"),
            ("decimal_vs_binary", "quantity('50M').compareTo(quantity('50Mi'))", "-1"),
            ("greater", "quantity('150Mi').isGreaterThan(quantity('100Mi'))", "true"),
            ("less", "quantity('50M').isLessThan(quantity('100M'))", "true"),
            ("equality", "quantity('1Gi') == quantity('1024Mi')", "true"),
            ("is_quantity", "isQuantity('1.3Gi')", "true"),
            ("not_quantity", "isQuantity('200K')", "false"),
            ("bad_quantity", "quantity('Three')", "error: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"),
            ("is_integer", "quantity('50k').isInteger()", "true"),
            ("big_is_integer", "quantity('50000000G').isInteger()", "true"),
            ("milli_not_integer", "quantity('1500m').isInteger()", "false"),
            ("too_big_not_integer", "quantity('100E').isInteger()", "false"),
            ("as_integer", "quantity('50k').asInteger()", "50000"),
            ("binary_as_integer", "quantity('1Ki').asInteger()", "1024"),
            ("as_integer_error", "quantity('1.5').asInteger()", "error: cannot convert value to integer"),
            ("approximate_float", "quantity('50k').sub(20000).asApproximateFloat()", "30000"),
            ("add_quantity", "quantity('50k').add(quantity('20k')) == quantity('70k')", "true"),
            ("add_int", "quantity('50k').add(20) == quantity('50020')", "true"),
            ("chain", "quantity('50k').add(20).sub(quantity('100k')).sub(-50000) == quantity('20')", "true"),
            ("sign_negative", "sign(quantity('-5'))", "-1"),
            ("sign_zero_member", "quantity('0').sign()", "0"),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }
}
