//! Kyverno's arithmetic (`pkg/engine/jmespath/arithmetic.go`): `add`,
//! `subtract`, `multiply`, `divide`, `modulo` and `sum` on numbers,
//! quantities (`'1Gi'`) and durations (`'1h'`), and `round`.
//!
//! Operands: a JSON number is a scalar; a string is a quantity or a
//! duration (`'0'` is both: a duration when the other operand is only a
//! duration). Results: scalars as numbers, quantities in Kubernetes'
//! canonical form, durations in Go's `Duration.String()` form.

use serde_json::Value;

use crate::arguments::{
    arg, finite_number, generic, go_f64_to_i64, go_format_g, int_number, non_int_modulo,
    number_arg, type_mismatch, zero_division, FunctionError,
};
use kube_units::duration;
use kube_units::quantity::QuantityValue;

const NANOS_PER_SECOND: f64 = 1e9;

#[derive(Debug, Clone, Copy)]
enum Operand {
    Scalar(f64),
    Quantity(QuantityValue),
    Duration(i64),
}

/// What a string can be read as.
struct Candidate {
    scalar: Option<f64>,
    quantity: Option<QuantityValue>,
    duration: Option<i64>,
}

fn candidate(value: &Value, operator: &str) -> Result<Candidate, FunctionError> {
    let invalid = || generic(operator, "invalid operand");
    match value {
        Value::Number(n) => Ok(Candidate {
            scalar: Some(n.as_f64().ok_or_else(invalid)?),
            quantity: None,
            duration: None,
        }),
        Value::String(text) => {
            let quantity = QuantityValue::parse(text);
            let duration = duration::parse_go(text).ok();
            if quantity.is_none() && duration.is_none() {
                return Err(invalid());
            }
            Ok(Candidate {
                scalar: None,
                quantity,
                duration,
            })
        }
        _ => Err(invalid()),
    }
}

fn resolve(c: &Candidate, duration_context: bool) -> Option<Operand> {
    if let Some(s) = c.scalar {
        return Some(Operand::Scalar(s));
    }
    match (c.quantity, c.duration) {
        (None, Some(d)) => Some(Operand::Duration(d)),
        (Some(q), None) => Some(Operand::Quantity(q)),
        (Some(q), Some(d)) => Some(if duration_context {
            Operand::Duration(d)
        } else {
            Operand::Quantity(q)
        }),
        (None, None) => None,
    }
}

/// Kyverno's `parseArithemticOperands`.
fn operands(
    left: &Value,
    right: &Value,
    operator: &str,
) -> Result<(Operand, Operand), FunctionError> {
    let a = candidate(left, operator)?;
    let b = candidate(right, operator)?;
    let only_duration = |c: &Candidate| c.duration.is_some() && c.quantity.is_none();
    let duration_context = only_duration(&a) || only_duration(&b);
    match (resolve(&a, duration_context), resolve(&b, duration_context)) {
        (Some(x), Some(y)) => Ok((x, y)),
        _ => Err(generic(operator, "invalid operand")),
    }
}

/// Runs `add`, `sum`, `subtract`, `multiply`, `divide`, `modulo` or `round`.
pub(crate) fn call(name: &str, args: &[Value]) -> Result<Value, FunctionError> {
    match name {
        "add" => add(arg(args, 0), arg(args, 1), name),
        "sum" => {
            let items = arg(args, 0).as_array().ok_or_else(|| type_mismatch(name))?;
            let Some((first, rest)) = items.split_first() else {
                return Err(generic(
                    name,
                    "at least one element in the array is required",
                ));
            };
            let mut total = first.clone();
            for item in rest {
                total = add(&total, item, name)?;
            }
            Ok(total)
        }
        "subtract" => subtract(arg(args, 0), arg(args, 1)),
        "multiply" => {
            let (a, b) = operands(arg(args, 0), arg(args, 1), name)?;
            multiply(a, b)
        }
        "divide" => divide(arg(args, 0), arg(args, 1)),
        "modulo" => modulo(arg(args, 0), arg(args, 1)),
        "round" => round(args),
        _ => Err(FunctionError::new(format!("unknown function: {name}()"))),
    }
}

fn quantity_text(q: Option<QuantityValue>, operator: &str) -> Result<Value, FunctionError> {
    q.map(|q| Value::String(q.canonical()))
        .ok_or_else(|| generic(operator, "quantity out of range"))
}

fn duration_text(nanos: i64) -> Value {
    Value::String(duration::format(i128::from(nanos)))
}

/// Go's `Duration.Seconds()`.
fn seconds(d: i64) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    let (whole, fraction) = ((d / 1_000_000_000) as f64, (d % 1_000_000_000) as f64);
    whole + fraction / NANOS_PER_SECOND
}

/// `time.Duration(seconds * float64(time.Second)).String()`.
fn duration_from_seconds(seconds: f64) -> Value {
    duration_text(go_f64_to_i64(seconds * NANOS_PER_SECOND))
}

/// `resource.ParseQuantity(fmt.Sprintf("%v", f))`.
fn scalar_quantity(f: f64, operator: &str) -> Result<QuantityValue, FunctionError> {
    QuantityValue::parse(&go_format_g(f)).ok_or_else(|| generic(operator, "quantity out of range"))
}

/// `add` (also each step of `sum`, reported under `operator`).
fn add(left: &Value, right: &Value, operator: &str) -> Result<Value, FunctionError> {
    match operands(left, right, operator)? {
        (Operand::Quantity(a), Operand::Quantity(b)) => quantity_text(a.add(&b), operator),
        (Operand::Duration(a), Operand::Duration(b)) => Ok(duration_text(a.wrapping_add(b))),
        (Operand::Scalar(a), Operand::Scalar(b)) => finite_number(a + b),
        _ => Err(type_mismatch(operator)),
    }
}

fn subtract(left: &Value, right: &Value) -> Result<Value, FunctionError> {
    let operator = "subtract";
    match operands(left, right, operator)? {
        (Operand::Quantity(a), Operand::Quantity(b)) => quantity_text(a.sub(&b), operator),
        (Operand::Duration(a), Operand::Duration(b)) => Ok(duration_text(a.wrapping_sub(b))),
        (Operand::Scalar(a), Operand::Scalar(b)) => finite_number(a - b),
        _ => Err(type_mismatch(operator)),
    }
}

fn multiply(a: Operand, b: Operand) -> Result<Value, FunctionError> {
    let operator = "multiply";
    match (a, b) {
        (Operand::Scalar(x), Operand::Scalar(y)) => finite_number(x * y),
        (Operand::Quantity(q), Operand::Scalar(s)) | (Operand::Scalar(s), Operand::Quantity(q)) => {
            let factor = scalar_quantity(s, operator)?;
            quantity_text(q.mul(&factor), operator)
        }
        (Operand::Duration(d), Operand::Scalar(s)) | (Operand::Scalar(s), Operand::Duration(d)) => {
            Ok(duration_from_seconds(seconds(d) * s))
        }
        _ => Err(type_mismatch(operator)),
    }
}

fn divide(left: &Value, right: &Value) -> Result<Value, FunctionError> {
    let operator = "divide";
    match operands(left, right, operator)? {
        (Operand::Quantity(a), Operand::Quantity(b)) => {
            let divisor = b.as_approximate_f64();
            if divisor == 0.0 {
                return Err(zero_division(operator));
            }
            finite_number(a.as_approximate_f64() / divisor)
        }
        (Operand::Quantity(a), Operand::Scalar(s)) => {
            if s == 0.0 {
                return Err(zero_division(operator));
            }
            let divisor = scalar_quantity(s, operator)?;
            let scale = a.scale().max(divisor.scale());
            quantity_text(a.quo_round_down(&divisor, scale), operator)
        }
        (Operand::Duration(a), Operand::Duration(b)) => {
            let divisor = seconds(b);
            if divisor == 0.0 {
                return Err(zero_division(operator));
            }
            finite_number(seconds(a) / divisor)
        }
        (Operand::Duration(d), Operand::Scalar(s)) => {
            if s == 0.0 {
                return Err(zero_division(operator));
            }
            Ok(duration_from_seconds(seconds(d) / s))
        }
        (Operand::Scalar(x), Operand::Scalar(y)) => {
            if y == 0.0 {
                return Err(zero_division(operator));
            }
            finite_number(x / y)
        }
        _ => Err(type_mismatch(operator)),
    }
}

/// Go's `int64(f)` with Kyverno's check that nothing was cut off.
fn exact_int(f: f64) -> Option<i64> {
    let i = go_f64_to_i64(f);
    #[allow(clippy::cast_precision_loss)]
    let back = i as f64;
    (back == f).then_some(i)
}

fn modulo(left: &Value, right: &Value) -> Result<Value, FunctionError> {
    let operator = "modulo";
    match operands(left, right, operator)? {
        (Operand::Quantity(a), Operand::Quantity(b)) => {
            let x = exact_int(a.as_approximate_f64()).ok_or_else(|| non_int_modulo(operator))?;
            let y = exact_int(b.as_approximate_f64()).ok_or_else(|| non_int_modulo(operator))?;
            if y == 0 {
                return Err(zero_division(operator));
            }
            Ok(Value::String(
                QuantityValue::from_i64(x.wrapping_rem(y), a.format()).canonical(),
            ))
        }
        (Operand::Duration(a), Operand::Duration(b)) => {
            if b == 0 {
                return Err(zero_division(operator));
            }
            Ok(duration_text(a.wrapping_rem(b)))
        }
        (Operand::Scalar(a), Operand::Scalar(b)) => {
            let x = exact_int(a).ok_or_else(|| non_int_modulo(operator))?;
            let y = exact_int(b).ok_or_else(|| non_int_modulo(operator))?;
            if y == 0 {
                return Err(zero_division(operator));
            }
            #[allow(clippy::cast_precision_loss)]
            let result = x.wrapping_rem(y) as f64;
            finite_number(result)
        }
        _ => Err(type_mismatch(operator)),
    }
}

/// `round(number, places)`: `math.Round(x*10^n)/10^n`, `n` a non-negative
/// integer.
fn round(args: &[Value]) -> Result<Value, FunctionError> {
    let operator = "round";
    let value = number_arg(operator, args, 0)?;
    let places = number_arg(operator, args, 1)?;
    let places = int_number(places)
        .map_err(|_| generic(operator, "Non-integer argument(s) passed for round off"))?;
    if places < 0 {
        // Kyverno formats argOutOfBoundsError without its two numbers.
        return Err(generic(
            operator,
            "%!d(MISSING) argument is out of bounds (%!d(MISSING))",
        ));
    }
    let shift: f64 = format!("1e{places}").parse().unwrap_or(f64::INFINITY);
    finite_number((value * shift).round() / shift)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::useless_vec)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, args: &[Value]) -> Result<Value, String> {
        call(name, args).map_err(|e| e.message)
    }

    /// Kyverno's arithmetic_test.go tables, plus the documented examples.
    #[test]
    fn kyverno_arithmetic_tables() {
        let ok: Vec<(&str, &str, Value, Value, Value)> = vec![
            ("scalar_add", "add", json!(12), json!(13), json!(25)),
            (
                "quantity_add",
                "add",
                json!("12Ki"),
                json!("13Ki"),
                json!("25Ki"),
            ),
            (
                "quantity_add_mixed",
                "add",
                json!("12Ki"),
                json!("13"),
                json!("12301"),
            ),
            (
                "duration_add",
                "add",
                json!("12s"),
                json!("13s"),
                json!("25s"),
            ),
            (
                "scalar_subtract",
                "subtract",
                json!(12),
                json!(13),
                json!(-1),
            ),
            (
                "quantity_subtract",
                "subtract",
                json!("12Ki"),
                json!("13Ki"),
                json!("-1Ki"),
            ),
            (
                "quantity_subtract_mixed",
                "subtract",
                json!("12Ki"),
                json!("13"),
                json!("12275"),
            ),
            (
                "quantity_subtract_docs",
                "subtract",
                json!("10Mi"),
                json!("5Ki"),
                json!("10235Ki"),
            ),
            (
                "duration_subtract",
                "subtract",
                json!("12s"),
                json!("13s"),
                json!("-1s"),
            ),
            (
                "quantity_times_scalar",
                "multiply",
                json!("12Ki"),
                json!(2),
                json!("24Ki"),
            ),
            (
                "duration_times_scalar",
                "multiply",
                json!("12s"),
                json!(2),
                json!("24s"),
            ),
            (
                "scalar_times_scalar",
                "multiply",
                json!(2.5),
                json!(2.5),
                json!(6.25),
            ),
            (
                "scalar_times_quantity",
                "multiply",
                json!(2.5),
                json!("12Ki"),
                json!("30Ki"),
            ),
            (
                "scalar_times_plain_quantity",
                "multiply",
                json!(2.5),
                json!("12"),
                json!("30"),
            ),
            (
                "scalar_times_duration",
                "multiply",
                json!(2.5),
                json!("40s"),
                json!("1m40s"),
            ),
            (
                "quantity_by_quantity_equal",
                "divide",
                json!("256M"),
                json!("256M"),
                json!(1),
            ),
            (
                "quantity_by_quantity",
                "divide",
                json!("512M"),
                json!("256M"),
                json!(2),
            ),
            (
                "quantity_by_quantity_fraction",
                "divide",
                json!("8"),
                json!("3"),
                json!(8.0 / 3.0),
            ),
            (
                "quantity_by_quantity_half",
                "divide",
                json!("128M"),
                json!("256M"),
                json!(0.5),
            ),
            (
                "quantity_by_scalar",
                "divide",
                json!("12Ki"),
                json!(3),
                json!("4Ki"),
            ),
            (
                "quantity_by_binary_quantity",
                "divide",
                json!("12Ki"),
                json!("2Ki"),
                json!(6),
            ),
            (
                "quantity_by_plain",
                "divide",
                json!("12Ki"),
                json!("200"),
                json!(61.44),
            ),
            (
                "quantity_by_quantity_docs",
                "divide",
                json!("10Mi"),
                json!("5Ki"),
                json!(2048),
            ),
            (
                "duration_by_scalar",
                "divide",
                json!("12s"),
                json!(3),
                json!("4s"),
            ),
            (
                "duration_by_duration",
                "divide",
                json!("12s"),
                json!("5s"),
                json!(2.4),
            ),
            (
                "scalar_by_scalar",
                "divide",
                json!(14),
                json!(3),
                json!(4.666666666666667),
            ),
            (
                "quantity_by_scalar_rounds_down",
                "divide",
                json!("10m"),
                json!(3),
                json!("3m"),
            ),
            (
                "quantity_modulo",
                "modulo",
                json!("12Ki"),
                json!("5Ki"),
                json!("2Ki"),
            ),
            (
                "duration_modulo",
                "modulo",
                json!("13s"),
                json!("2s"),
                json!("1s"),
            ),
            ("scalar_modulo", "modulo", json!(13), json!(5), json!(3)),
            (
                "scalar_modulo_negative",
                "modulo",
                json!(-13),
                json!(5),
                json!(-3),
            ),
            (
                "zero_is_a_duration_with_a_duration",
                "add",
                json!("0"),
                json!("1h"),
                json!("1h0m0s"),
            ),
            (
                "zero_is_a_quantity_with_a_quantity",
                "add",
                json!("0"),
                json!("1Gi"),
                json!("1Gi"),
            ),
            (
                "duration_hours",
                "add",
                json!("1h"),
                json!("30m"),
                json!("1h30m0s"),
            ),
            (
                "decimal_si_sum",
                "add",
                json!("500m"),
                json!("1"),
                json!("1500m"),
            ),
            (
                "exponent_format",
                "add",
                json!("1e3"),
                json!("1e3"),
                json!("2e3"),
            ),
        ];
        for (case, name, a, b, want) in ok {
            assert_eq!(run(name, &[a, b]), Ok(want), "{case}");
        }
        let errors: Vec<(&str, &str, Value, Value, &str)> = vec![
            (
                "scalar_string_duration",
                "add",
                json!("12"),
                json!("13s"),
                "JMESPath function 'add': Types mismatch",
            ),
            (
                "scalar_quantity",
                "add",
                json!(12),
                json!("13Ki"),
                "JMESPath function 'add': Types mismatch",
            ),
            (
                "scalar_plain_quantity",
                "add",
                json!(12),
                json!("13"),
                "JMESPath function 'add': Types mismatch",
            ),
            (
                "quantity_duration",
                "add",
                json!("12Ki"),
                json!("13s"),
                "JMESPath function 'add': Types mismatch",
            ),
            (
                "duration_scalar",
                "add",
                json!("12s"),
                json!(13),
                "JMESPath function 'add': Types mismatch",
            ),
            (
                "not_an_operand",
                "add",
                json!("abc"),
                json!(1),
                "JMESPath function 'add': invalid operand",
            ),
            (
                "null_operand",
                "subtract",
                json!(null),
                json!(1),
                "JMESPath function 'subtract': invalid operand",
            ),
            (
                "quantity_times_quantity",
                "multiply",
                json!("12Ki"),
                json!("12"),
                "JMESPath function 'multiply': Types mismatch",
            ),
            (
                "duration_times_duration",
                "multiply",
                json!("12s"),
                json!("12s"),
                "JMESPath function 'multiply': Types mismatch",
            ),
            (
                "quantity_by_duration",
                "divide",
                json!("12Ki"),
                json!("2s"),
                "JMESPath function 'divide': Types mismatch",
            ),
            (
                "duration_by_quantity",
                "divide",
                json!("12s"),
                json!("4"),
                "JMESPath function 'divide': Types mismatch",
            ),
            (
                "scalar_by_duration",
                "divide",
                json!(14),
                json!("5s"),
                "JMESPath function 'divide': Types mismatch",
            ),
            (
                "scalar_by_zero",
                "divide",
                json!(14),
                json!(0),
                "JMESPath function 'divide': Zero divisor passed",
            ),
            (
                "quantity_by_zero",
                "divide",
                json!("4Ki"),
                json!(0),
                "JMESPath function 'divide': Zero divisor passed",
            ),
            (
                "quantity_by_zero_quantity",
                "divide",
                json!("4Ki"),
                json!("0Ki"),
                "JMESPath function 'divide': Zero divisor passed",
            ),
            (
                "plain_by_zero",
                "divide",
                json!("4"),
                json!("0"),
                "JMESPath function 'divide': Zero divisor passed",
            ),
            (
                "duration_by_zero",
                "divide",
                json!("4s"),
                json!(0),
                "JMESPath function 'divide': Zero divisor passed",
            ),
            (
                "duration_by_zero_duration",
                "divide",
                json!("4s"),
                json!("0s"),
                "JMESPath function 'divide': Zero divisor passed",
            ),
            (
                "scalar_modulo_zero",
                "modulo",
                json!(14),
                json!(0),
                "JMESPath function 'modulo': Zero divisor passed",
            ),
            (
                "quantity_modulo_zero",
                "modulo",
                json!("4Ki"),
                json!("0Ki"),
                "JMESPath function 'modulo': Zero divisor passed",
            ),
            (
                "duration_modulo_zero",
                "modulo",
                json!("4s"),
                json!("0s"),
                "JMESPath function 'modulo': Zero divisor passed",
            ),
            (
                "quantity_modulo_fraction",
                "modulo",
                json!("4"),
                json!("1.5"),
                "JMESPath function 'modulo': Non-integer argument(s) passed for modulo",
            ),
            (
                "fraction_modulo_quantity",
                "modulo",
                json!("4.5"),
                json!("1"),
                "JMESPath function 'modulo': Non-integer argument(s) passed for modulo",
            ),
            (
                "scalar_modulo_fraction",
                "modulo",
                json!(14),
                json!(1.5),
                "JMESPath function 'modulo': Non-integer argument(s) passed for modulo",
            ),
            (
                "fraction_modulo_scalar",
                "modulo",
                json!(14.5),
                json!(2),
                "JMESPath function 'modulo': Non-integer argument(s) passed for modulo",
            ),
            (
                "quantity_modulo_scalar",
                "modulo",
                json!("12Ki"),
                json!(13),
                "JMESPath function 'modulo': Types mismatch",
            ),
            (
                "duration_modulo_quantity",
                "modulo",
                json!("13s"),
                json!("12"),
                "JMESPath function 'modulo': Types mismatch",
            ),
        ];
        for (case, name, a, b, want) in errors {
            assert_eq!(run(name, &[a, b]), Err(want.to_string()), "{case}");
        }
    }

    #[test]
    fn sum_folds_add() {
        let cases: Vec<(&str, Value, Result<Value, &str>)> = vec![
            (
                "empty",
                json!([]),
                Err("JMESPath function 'sum': at least one element in the array is required"),
            ),
            ("one_scalar", json!([12]), Ok(json!(12))),
            ("scalars", json!([12, 13, 1, 4]), Ok(json!(30))),
            (
                "quantities",
                json!(["12Ki", "13Ki", "1Ki", "4Ki"]),
                Ok(json!("30Ki")),
            ),
            (
                "quantity_and_plain",
                json!(["12Ki", "13"]),
                Ok(json!("12301")),
            ),
            (
                "durations",
                json!(["12s", "13s", "1s", "4s"]),
                Ok(json!("30s")),
            ),
            (
                "docs_quantities",
                json!(["2Ki", "5Gi", "8Mi"]),
                Ok(json!("5251074Ki")),
            ),
            (
                "docs_durations",
                json!(["2h", "50s", "90s"]),
                Ok(json!("2h2m20s")),
            ),
            ("docs_scalars", json!([6, 3, 8]), Ok(json!(17))),
            (
                "mixed",
                json!(["12s", 13]),
                Err("JMESPath function 'sum': Types mismatch"),
            ),
            (
                "mixed_quantity",
                json!([12, "13Ki"]),
                Err("JMESPath function 'sum': Types mismatch"),
            ),
            ("single_is_returned_as_is", json!(["abc"]), Ok(json!("abc"))),
        ];
        for (case, input, want) in cases {
            assert_eq!(run("sum", &[input]), want.map_err(String::from), "{case}");
        }
    }

    #[test]
    fn round_cases() {
        let cases: Vec<(&str, Value, Value, Result<Value, &str>)> = vec![
            ("docs", json!(10.125), json!(2), Ok(json!(10.13))),
            ("docs_variable", json!(10.123456), json!(2), Ok(json!(10.12))),
            ("zero_places", json!(2.5), json!(0), Ok(json!(3))),
            ("negative_half_away_from_zero", json!(-2.5), json!(0), Ok(json!(-3))),
            ("integer", json!(7), json!(3), Ok(json!(7))),
            ("fraction_places", json!(1.5), json!(1.5), Err("JMESPath function 'round': Non-integer argument(s) passed for round off")),
            ("negative_places", json!(1.5), json!(-1), Err("JMESPath function 'round': %!d(MISSING) argument is out of bounds (%!d(MISSING))")),
        ];
        for (case, value, places, want) in cases {
            assert_eq!(
                run("round", &[value, places]),
                want.map_err(String::from),
                "{case}"
            );
        }
    }

    #[test]
    fn huge_values_do_not_panic() {
        for (name, a, b) in [
            ("add", json!("9223372036854775807ns"), json!("1ns")),
            ("multiply", json!("100000h"), json!(1e300)),
            ("multiply", json!("8Ei"), json!(1e300)),
            ("add", json!("1e300"), json!("1e300")),
            ("divide", json!("1e-300"), json!(1e-300)),
            ("modulo", json!(1e300), json!(7)),
            ("add", json!(1e308), json!(1e308)),
        ] {
            let _ = call(name, &[a, b]);
        }
        let _ = call("round", &[json!(5), json!(400)]);
    }
}
