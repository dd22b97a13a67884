//! The work one request may do in queries and pattern checks, all of them
//! together. Each is bounded on its own (a query's results, a rule's
//! `foreach` elements), but a `foreach` over a list whose every element
//! runs a query or a check over the whole list does the square of the
//! request: 10,000 elements of a 150 KB request took 3.5 s natively, past
//! policy-server's deadline in wasm.
//!
//! A unit is a query's node evaluated (a projection's every element), an
//! element a function reads, or an element a pattern checks. A fresh wasm
//! instance starts with the whole allowance; a host that evaluates
//! several requests on one thread calls [`reset`] before each.

use std::cell::Cell;

use serde_json::Value;

/// Units one request may spend: about 100 ms natively at the worst. The
/// heaviest legitimate request measured, a 2.8 MiB Pod of 1,450
/// containers against 52 validate rules of kyverno/policies, spends
/// 236,000 (the 20 PSS pattern rules on it 71,000).
pub const MAX_WORK: usize = 2_000_000;

/// What an exhausted allowance says.
pub const EXCEEDED: &str =
    "the request's queries and pattern checks take more than 2000000 steps (the limit per request)";

thread_local! {
    static SPENT: Cell<usize> = const { Cell::new(0) };
}

/// Gives the request its whole allowance back.
pub fn reset() {
    SPENT.with(|s| s.set(0));
}

/// Spends `units`; false, and nothing spent, once that would pass the
/// allowance.
pub fn spend(units: usize) -> bool {
    SPENT.with(|s| {
        let total = s.get().saturating_add(units);
        let ok = total <= MAX_WORK;
        if ok {
            s.set(total);
        }
        ok
    })
}

/// `so_far` plus the memory a copy of `value` takes, estimated (a value
/// counts 32 bytes, as a `Value` and its share of a map or list, and its
/// text); `None` once that passes `limit` (the walk stops there). Depth is
/// bounded by the input's (JSON nesting is limited when it is read).
pub fn footprint(value: &Value, so_far: usize, limit: usize) -> Option<usize> {
    const NODE: usize = 32;
    let total = match value {
        Value::String(s) => so_far.saturating_add(NODE).saturating_add(s.len()),
        Value::Array(items) => items
            .iter()
            .try_fold(so_far.saturating_add(NODE), |t, v| footprint(v, t, limit))?,
        Value::Object(map) => map
            .iter()
            .try_fold(so_far.saturating_add(NODE), |t, (k, v)| {
                footprint(v, t.saturating_add(k.len()), limit)
            })?,
        _ => so_far.saturating_add(NODE),
    };
    (total <= limit).then_some(total)
}

/// What reading `value` through costs: its elements, or one per 64 bytes
/// of text.
pub fn size(value: &Value) -> usize {
    match value {
        Value::Array(items) => items.len(),
        Value::Object(map) => map.len(),
        Value::String(s) => s.len() / 64,
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_allowance_is_spent_up_to_the_limit_and_reset() {
        reset();
        assert!(spend(MAX_WORK - 1));
        assert!(spend(1));
        assert!(!spend(1), "past the limit");
        assert!(!spend(usize::MAX), "no overflow");
        reset();
        assert!(spend(10));
        // Exactly those 10 are spent.
        assert!(spend(MAX_WORK - 10));
        assert!(!spend(1));
    }

    #[test]
    fn reading_a_value_costs_its_elements() {
        let cases: Vec<(&str, Value, usize)> = vec![
            ("list", json!([1, 2, 3]), 3),
            ("map", json!({"a": 1}), 1),
            ("short_text", json!("abc"), 0),
            ("long_text", json!("x".repeat(640)), 10),
            ("number", json!(1), 0),
        ];
        for (name, value, want) in cases {
            assert_eq!(size(&value), want, "{name}");
        }
    }

    #[test]
    fn a_copy_is_estimated_by_its_values_and_text() {
        let cases: Vec<(&str, Value, usize, Option<usize>)> = vec![
            ("scalar", json!(1), 100, Some(32)),
            ("string", json!("abc"), 100, Some(35)),
            ("list", json!([1, "ab"]), 100, Some(32 + 32 + 34)),
            (
                "map_keys_count",
                json!({"key": null}),
                100,
                Some(32 + 3 + 32),
            ),
            ("past_the_limit", json!([1, 2, 3]), 100, None),
            ("at_the_limit", json!([1, 2]), 96, Some(96)),
        ];
        for (name, value, limit, want) in cases {
            assert_eq!(footprint(&value, 0, limit), want, "{name}");
        }
        assert_eq!(
            footprint(&json!(1), 50, 100),
            Some(82),
            "adds to what came before"
        );
    }

    #[test]
    fn the_limit_is_what_the_message_says() {
        assert!(EXCEEDED.contains(&MAX_WORK.to_string()));
    }
}
