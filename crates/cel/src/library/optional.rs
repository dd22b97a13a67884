//! Optional values (`optional.of`, `.?f`, `[?i]`). `or` and `orValue`
//! short-circuit, so the evaluator implements them itself (they never get
//! here with their arguments evaluated).

use crate::error::EvalError;
use crate::func::Func;
use crate::value::no_overload;
use crate::value::Value;

pub(crate) fn call<'a>(func: Func, args: &[Value<'a>]) -> Result<Value<'a>, EvalError> {
    match (func, args) {
        (Func::OptionalOf, [v]) => Ok(Value::optional(Some(v.clone()))),
        (Func::OptionalNone, []) => Ok(Value::Optional(None)),
        (Func::OptionalOfNonZeroValue, [v]) => {
            Ok(Value::optional((!is_zero(v)).then(|| v.clone())))
        }
        (Func::HasValue, [Value::Optional(o)]) => Ok(Value::Bool(o.is_some())),
        (Func::Value, [Value::Optional(Some(v))]) => Ok((**v).clone()),
        (Func::Value, [Value::Optional(None)]) => {
            Err(EvalError::msg("optional.none() dereference"))
        }
        _ => Err(no_overload(func.name(), args)),
    }
}

/// The zero values `optional.ofNonZeroValue` treats as absent.
/// 0001-01-01T00:00:00Z in Unix seconds.
const GO_ZERO_TIME: i64 = -62_135_596_800;

fn is_zero(v: &Value<'_>) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::Int(i) => *i == 0,
        Value::Uint(u) => *u == 0,
        Value::Double(d) => *d == 0.0,
        Value::String(s) => s.is_empty(),
        Value::Bytes(b) => b.is_empty(),
        Value::Duration(d) => *d == 0,
        // Go's zero `time.Time`: year 1, not the Unix epoch.
        Value::Timestamp(t) => t.secs == GO_ZERO_TIME && t.nanos == 0,
        Value::Optional(o) => o.is_none(),
        other => match (other.as_list(), other.as_map()) {
            (Some(l), _) => l.len() == 0,
            (_, Some(m)) => m.len() == 0,
            _ => false,
        },
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::{eval_str, eval_with};
    use serde_json::json;

    #[test]
    fn optionals_follow_cel_go() {
        let obj = json!({"spec": {"a": {"b": 1}, "list": [10, 20]}, "empty": {}});
        let cases = [
            ("optional_select_present", "object.spec.?a.b.value()", "1"),
            (
                "optional_select_absent",
                "object.spec.?x.hasValue()",
                "false",
            ),
            (
                "chained_absent_stays_none",
                "object.?spec.?x.?y.hasValue()",
                "false",
            ),
            (
                "plain_select_on_optional_stays_optional",
                "object.spec.?a.b.hasValue()",
                "true",
            ),
            (
                "plain_select_on_optional_absent",
                "object.spec.?a.zzz.hasValue()",
                "false",
            ),
            ("optional_index_list", "object.spec.list[?1].value()", "20"),
            (
                "or_value_on_an_error_is_the_error",
                "object.spec.zzz.orValue(0)",
                "error: no such key: zzz",
            ),
            (
                "optional_index_out_of_range",
                "object.spec.list[?5].hasValue()",
                "false",
            ),
            ("optional_index_map", "object.spec[?'a'].b.orValue(0)", "1"),
            ("or_value_default", "object.spec.?x.orValue('d')", "d"),
            ("or_value_present", "object.spec.?a.b.orValue(0)", "1"),
            (
                "or_picks_first_present",
                "object.spec.?x.or(object.spec.?a).hasValue()",
                "true",
            ),
            (
                "or_short_circuits",
                "optional.of(1).or(optional.of(1/0)).value()",
                "1",
            ),
            // Kyverno's `__orValueCompat__`: strict in both arguments.
            (
                "or_value_is_strict",
                "optional.of(1).orValue(1/0)",
                "error: division by zero",
            ),
            (
                "or_value_receiver_error_first",
                "object.spec.missing.orValue(1/0)",
                "error: no such key: missing",
            ),
            (
                "value_of_none",
                "optional.none().value()",
                "error: optional.none() dereference",
            ),
            (
                "of_non_zero_value_zero",
                "optional.ofNonZeroValue('').hasValue()",
                "false",
            ),
            (
                "of_non_zero_value",
                "optional.ofNonZeroValue([1]).hasValue()",
                "true",
            ),
            // Go's zero time is year 1; the Unix epoch is a value.
            (
                "of_non_zero_value_go_zero_time",
                "optional.ofNonZeroValue(timestamp('0001-01-01T00:00:00Z')).hasValue()",
                "false",
            ),
            (
                "of_non_zero_value_epoch",
                "optional.ofNonZeroValue(timestamp('1970-01-01T00:00:00Z')).hasValue()",
                "true",
            ),
            ("on_non_container_is_none", "'abc'.?x.hasValue()", "false"),
            ("has_on_optional", "has(object.spec.?a.b)", "true"),
            (
                "or_value_on_non_optional_is_the_receiver",
                "object.spec.list.orValue([])",
                "[10, 20]",
            ),
            // cel-go 0.28 on; Kyverno rewrites only `orValue`.
            (
                "or_on_non_optional_is_an_error",
                "object.spec.a.b.or(optional.of(0))",
                "error: no matching overload for 'or' applied to '(int, optional_type)'",
            ),
            (
                "list_optional_entries",
                "[1, ?optional.none(), ?optional.of(2)]",
                "[1, 2]",
            ),
            (
                "map_optional_entries",
                "{'a': 1, ?'b': optional.none(), ?'c': optional.of(3)}",
                "{\"a\": 1, \"c\": 3}",
            ),
            (
                "optional_entry_needs_optional",
                "[?1]",
                "error: cannot initialize optional list element from non-optional value 1",
            ),
            ("opt_map", "optional.of(2).optMap(x, x * 3).value()", "6"),
            (
                "opt_map_none",
                "optional.none().optMap(x, x * 3).hasValue()",
                "false",
            ),
            (
                "opt_flat_map",
                "optional.of(2).optFlatMap(x, optional.none()).hasValue()",
                "false",
            ),
            (
                "optional_equality",
                "optional.of(1) == optional.of(1) && optional.none() == optional.none()",
                "true",
            ),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_with(expr, &obj), want, "{name}");
        }
        assert_eq!(eval_str("type(optional.none()) == optional_type"), "true");
    }
}
