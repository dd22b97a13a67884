//! Kubernetes' lists library (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf`), cel-go's lists extension (`slice`, `flatten`, `sort`,
//! `distinct`, `reverse`, `lists.range`), its sets extension, and the list
//! functions of its optional library (`first`, `last`, `optional.unwrap`,
//! `unwrapOpt`).

use std::cmp::Ordering;

use crate::ast::BinOp;
use crate::budget::Budget;
use crate::error::EvalError;
use crate::func::Func;
use crate::ops;
use crate::value::no_overload;
use crate::value::{equal, ListRef, Type, Value};

pub(crate) fn call<'a>(
    func: Func,
    args: &[Value<'a>],
    budget: &mut Budget,
) -> Result<Value<'a>, EvalError> {
    let fail = || no_overload(func.name(), args);
    match (func, args) {
        (Func::IsSorted, [l]) => is_sorted(list(l).ok_or_else(fail)?, budget),
        (Func::Sum, [l]) => sum(list(l).ok_or_else(fail)?, budget),
        (Func::Min, [l]) => extreme(list(l).ok_or_else(fail)?, Ordering::Less, "min", budget),
        (Func::Max, [l]) => extreme(list(l).ok_or_else(fail)?, Ordering::Greater, "max", budget),
        (Func::IndexOf, [l, item]) => {
            let l = list(l).ok_or_else(fail)?;
            for (i, v) in l.iter().enumerate() {
                if equal(&v, item, budget)? {
                    return Ok(Value::Int(i64::try_from(i).unwrap_or(i64::MAX)));
                }
            }
            Ok(Value::Int(-1))
        }
        (Func::LastIndexOf, [l, item]) => {
            let l = list(l).ok_or_else(fail)?;
            for i in (0..l.len()).rev() {
                if let Some(v) = l.get(i) {
                    if equal(&v, item, budget)? {
                        return Ok(Value::Int(i64::try_from(i).unwrap_or(i64::MAX)));
                    }
                }
            }
            Ok(Value::Int(-1))
        }
        (Func::Slice, [l, Value::Int(start), Value::Int(end)]) => {
            let l = list(l).ok_or_else(fail)?;
            let len = i64::try_from(l.len()).unwrap_or(i64::MAX);
            let (start, end) = (*start, *end);
            if start < 0 || end < 0 {
                return Err(EvalError::msg(format!(
                    "cannot slice({start}, {end}), negative indexes not supported"
                )));
            }
            if start > end {
                return Err(EvalError::msg(format!(
                    "cannot slice({start}, {end}), start index must be less than or equal to end index"
                )));
            }
            if len < end {
                return Err(EvalError::msg(format!(
                    "cannot slice({start}, {end}), list is length {len}"
                )));
            }
            let (start, end) = (
                usize::try_from(start).unwrap_or(0),
                usize::try_from(end).unwrap_or(0),
            );
            budget.charge_items(end - start)?;
            Ok(Value::list(
                l.iter().skip(start).take(end - start).collect(),
            ))
        }
        (Func::Flatten, [l]) => Ok(Value::list(flatten(list(l).ok_or_else(fail)?, 1, budget)?)),
        (Func::Flatten, [l, Value::Int(depth)]) => {
            let l = list(l).ok_or_else(fail)?;
            if *depth < 0 {
                return Err(EvalError::msg("level must be non-negative"));
            }
            Ok(Value::list(flatten(l, *depth, budget)?))
        }
        (Func::Sort, [l]) => sort(list(l).ok_or_else(fail)?, budget),
        (Func::Distinct, [l]) => {
            let l = list(l).ok_or_else(fail)?;
            let mut kept: Vec<Value<'a>> = Vec::new();
            for v in l.iter() {
                budget.charge_items(kept.len())?;
                if !contains(ListRef::Owned(&kept), &v, budget)? {
                    kept.push(v);
                }
            }
            Ok(Value::list(kept))
        }
        (Func::Reverse, [l]) => {
            let l = list(l).ok_or_else(fail)?;
            budget.charge_items(l.len())?;
            let mut items: Vec<Value<'a>> = l.iter().collect();
            items.reverse();
            Ok(Value::list(items))
        }
        (Func::ListsRange, [Value::Int(n)]) => {
            if *n < 0 {
                return Err(EvalError::msg(format!(
                    "lists.range: size must be non-negative, got {n}"
                )));
            }
            if *n > MAX_RANGE {
                return Err(EvalError::msg(format!(
                    "lists.range: size {n} exceeds maximum allowed ({MAX_RANGE})"
                )));
            }
            budget.charge_items(usize::try_from(*n).unwrap_or(usize::MAX))?;
            Ok(Value::list((0..*n).map(Value::Int).collect()))
        }
        (Func::First | Func::Last, [l]) => {
            let l = list(l).ok_or_else(fail)?;
            let at = match func {
                Func::First => Some(0),
                _ => l.len().checked_sub(1),
            };
            Ok(Value::optional(at.and_then(|i| l.get(i))))
        }
        (Func::Unwrap | Func::UnwrapOpt, [l]) => {
            let l = list(l).ok_or_else(fail)?;
            budget.charge_items(l.len())?;
            let mut present = Vec::new();
            for v in l.iter() {
                match v {
                    Value::Optional(Some(inner)) => present.push((*inner).clone()),
                    Value::Optional(None) => {}
                    other => return Err(no_overload(func.name(), &[other])),
                }
            }
            Ok(Value::list(present))
        }
        (Func::SetsContains | Func::SetsEquivalent | Func::SetsIntersects, [a, b]) => {
            let (Some(a), Some(b)) = (list(a), list(b)) else {
                return Err(fail());
            };
            let result = match func {
                Func::SetsContains => contains_all(a, b, budget)?,
                Func::SetsEquivalent => contains_all(a, b, budget)? && contains_all(b, a, budget)?,
                _ => {
                    let mut any = false;
                    for x in a.iter() {
                        if contains(b, &x, budget)? {
                            any = true;
                            break;
                        }
                    }
                    any
                }
            };
            Ok(Value::Bool(result))
        }
        _ => Err(fail()),
    }
}

/// The longest list `lists.range` builds (cel-go's bound).
const MAX_RANGE: i64 = 10_000_000;

/// `depth` levels of nested lists spliced into their parent; other
/// elements stay as they are.
fn flatten<'a>(
    list: ListRef<'_, 'a>,
    depth: i64,
    budget: &mut Budget,
) -> Result<Vec<Value<'a>>, EvalError> {
    budget.charge_items(list.len())?;
    let mut out = Vec::with_capacity(list.len());
    for v in list.iter() {
        match v.as_list() {
            Some(inner) if depth > 0 => out.extend(flatten(inner, depth - 1, budget)?),
            _ => out.push(v),
        }
    }
    Ok(out)
}

/// cel-go's `sort`: the elements must share one comparable type.
fn sort<'a>(list: ListRef<'_, 'a>, budget: &mut Budget) -> Result<Value<'a>, EvalError> {
    let items: Vec<Value<'a>> = list.iter().collect();
    let order = sorted_order(&items, budget)?;
    Ok(Value::list(
        order
            .into_iter()
            .filter_map(|i| items.get(i).cloned())
            .collect(),
    ))
}

/// cel-go's `@sortByAssociatedKeys` (behind `sort()` and `sortBy`): the
/// positions of `keys` in ascending order; the keys must share one
/// comparable type.
pub(crate) fn sorted_order(
    keys: &[Value<'_>],
    budget: &mut Budget,
) -> Result<Vec<usize>, EvalError> {
    budget.charge_items(keys.len())?;
    let Some(first) = keys.first() else {
        return Ok(Vec::new());
    };
    let kind = first.type_of();
    if !matches!(
        kind,
        Type::Int
            | Type::Uint
            | Type::Double
            | Type::Bool
            | Type::Duration
            | Type::Timestamp
            | Type::String
            | Type::Bytes
    ) {
        return Err(EvalError::msg("list elements must be comparable"));
    }
    if keys.iter().any(|v| v.type_of() != kind) {
        return Err(EvalError::msg("list elements must have the same type"));
    }
    let mut order: Vec<usize> = (0..keys.len()).collect();
    let mut failed = None;
    order.sort_by(|&a, &b| match (keys.get(a), keys.get(b)) {
        (Some(x), Some(y)) => match ops::compare(x, y) {
            Some(Ok(order)) => order,
            Some(Err(e)) => {
                failed.get_or_insert(e);
                Ordering::Equal
            }
            None => Ordering::Equal,
        },
        _ => Ordering::Equal,
    });
    match failed {
        Some(e) => Err(e),
        None => Ok(order),
    }
}

fn list<'v, 'a>(v: &'v Value<'a>) -> Option<ListRef<'v, 'a>> {
    v.as_list()
}

fn contains(
    list: ListRef<'_, '_>,
    item: &Value<'_>,
    budget: &mut Budget,
) -> Result<bool, EvalError> {
    for v in list.iter() {
        if equal(&v, item, budget)? {
            return Ok(true);
        }
    }
    Ok(false)
}

fn contains_all(
    list: ListRef<'_, '_>,
    sub: ListRef<'_, '_>,
    budget: &mut Budget,
) -> Result<bool, EvalError> {
    for x in sub.iter() {
        if !contains(list, &x, budget)? {
            return Ok(false);
        }
    }
    Ok(true)
}

fn ordering(a: &Value<'_>, b: &Value<'_>, func: &str) -> Result<Ordering, EvalError> {
    ops::compare(a, b).unwrap_or_else(|| Err(no_overload(func, &[a.clone(), b.clone()])))
}

fn is_sorted<'a>(list: ListRef<'_, 'a>, budget: &mut Budget) -> Result<Value<'a>, EvalError> {
    budget.charge_items(list.len())?;
    let mut prev: Option<Value<'a>> = None;
    for v in list.iter() {
        if let Some(p) = &prev {
            if ordering(p, &v, "isSorted")? == Ordering::Greater {
                return Ok(Value::Bool(false));
            }
        }
        prev = Some(v);
    }
    Ok(Value::Bool(true))
}

fn sum<'a>(list: ListRef<'_, 'a>, budget: &mut Budget) -> Result<Value<'a>, EvalError> {
    budget.charge_items(list.len())?;
    let mut items = list.iter();
    let Some(mut acc) = items.next() else {
        return Ok(Value::Int(0));
    };
    if !matches!(
        acc,
        Value::Int(_) | Value::Uint(_) | Value::Double(_) | Value::Duration(_)
    ) {
        return Err(no_overload("sum", &[acc]));
    }
    for v in items {
        acc = ops::binary(BinOp::Add, &acc, &v, budget)?;
    }
    Ok(acc)
}

fn extreme<'a>(
    list: ListRef<'_, 'a>,
    prefer: Ordering,
    name: &str,
    budget: &mut Budget,
) -> Result<Value<'a>, EvalError> {
    budget.charge_items(list.len())?;
    let mut best: Option<Value<'a>> = None;
    for v in list.iter() {
        best = Some(match best {
            None => {
                // A lone element must still be comparable.
                ordering(&v, &v, name)?;
                v
            }
            Some(b) if ordering(&v, &b, name)? == prefer => v,
            Some(b) => b,
        });
    }
    best.ok_or_else(|| EvalError::msg(format!("{name} called on empty list")))
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    #[test]
    fn lists_and_sets_libraries() {
        let cases = [
            ("is_sorted", "[1, 2, 2, 3].isSorted()", "true"),
            ("not_sorted", "['b', 'a'].isSorted()", "false"),
            ("empty_sorted", "[].isSorted()", "true"),
            ("sum_ints", "[1, 2, 3].sum()", "6"),
            ("sum_doubles", "[1.5, 2.5].sum()", "4"),
            ("sum_empty", "[].sum()", "0"),
            (
                "sum_durations",
                "[duration('1s'), duration('2s')].sum() == duration('3s')",
                "true",
            ),
            (
                "sum_overflow",
                "[9223372036854775807, 1].sum()",
                "error: integer overflow",
            ),
            (
                "sum_strings",
                "['a'].sum()",
                "error: no matching overload for 'sum' applied to '(string)'",
            ),
            ("min", "[3, 1, 2].min()", "1"),
            ("max", "['a', 'c', 'b'].max()", "c"),
            ("min_empty", "[].min()", "error: min called on empty list"),
            ("max_mixed_numbers", "[1, dyn(2.5), dyn(2u)].max()", "2.5"),
            ("index_of", "[1, 2, 3, 2].indexOf(2)", "1"),
            ("last_index_of", "[1, 2, 3, 2].lastIndexOf(2)", "3"),
            ("index_of_missing", "[1, 2].indexOf(5)", "-1"),
            ("sets_contains", "sets.contains([1, 2, 3], [3, 1])", "true"),
            ("sets_contains_empty", "sets.contains([1], [])", "true"),
            ("sets_not_contains", "sets.contains([1, 2], [4])", "false"),
            (
                "sets_equivalent",
                "sets.equivalent([1, 2, 2], [2, 1])",
                "true",
            ),
            (
                "sets_not_equivalent",
                "sets.equivalent([1, 2], [1])",
                "false",
            ),
            (
                "sets_intersects",
                "sets.intersects([1, 2], [dyn(2.0), 5])",
                "true",
            ),
            ("sets_disjoint", "sets.intersects([1], [2])", "false"),
            // cel-go's lists extension, examples from its documentation.
            ("slice", "[1, 2, 3, 4].slice(1, 3) == [2, 3]", "true"),
            ("slice_to_end", "[1, 2, 3, 4].slice(2, 4) == [3, 4]", "true"),
            ("slice_empty", "[1].slice(1, 1) == []", "true"),
            (
                "slice_negative",
                "[1].slice(-1, 1)",
                "error: cannot slice(-1, 1), negative indexes not supported",
            ),
            (
                "slice_backwards",
                "[1, 2].slice(2, 1)",
                "error: cannot slice(2, 1), start index must be less than or equal to end index",
            ),
            (
                "slice_past_the_end",
                "[1, 2].slice(0, 3)",
                "error: cannot slice(0, 3), list is length 2",
            ),
            (
                "flatten_one_level",
                "[1, dyn([2, 3]), dyn([4])].flatten() == [1, 2, 3, 4]",
                "true",
            ),
            (
                "flatten_keeps_deeper_lists",
                "[1, dyn([2, dyn([3, 4])])].flatten() == [1, 2, dyn([3, 4])]",
                "true",
            ),
            (
                "flatten_empty_lists",
                "[1, 2, dyn([]), dyn([]), dyn([3, 4])].flatten() == [1, 2, 3, 4]",
                "true",
            ),
            (
                "flatten_depth",
                "[1, dyn([2, dyn([3, dyn([4])])])].flatten(2) == [1, 2, 3, dyn([4])]",
                "true",
            ),
            ("flatten_depth_zero", "[[1]].flatten(0) == [[1]]", "true"),
            (
                "flatten_negative_depth",
                "[1, dyn([2, dyn([3, dyn([4])])])].flatten(-1)",
                "error: level must be non-negative",
            ),
            ("sort_ints", "[3, 2, 1].sort() == [1, 2, 3]", "true"),
            (
                "sort_strings",
                "['b', 'c', 'a'].sort() == ['a', 'b', 'c']",
                "true",
            ),
            ("sort_empty", "[].sort() == []", "true"),
            (
                "sort_mixed_types",
                "[1, dyn('b')].sort()",
                "error: list elements must have the same type",
            ),
            (
                "sort_lists",
                "[[1, 2, 3]].sort()",
                "error: list elements must be comparable",
            ),
            (
                "distinct",
                "[1, 2, 2, 3, 3, 3].distinct() == [1, 2, 3]",
                "true",
            ),
            (
                "distinct_keeps_first",
                "['b', 'b', 'c', 'a', 'c'].distinct() == ['b', 'c', 'a']",
                "true",
            ),
            (
                "distinct_mixed",
                "[1, dyn('b'), 2, dyn('b')].distinct() == [1, dyn('b'), 2]",
                "true",
            ),
            (
                "distinct_numbers_across_types",
                "[1, dyn(1.0), dyn(1u)].distinct() == [1]",
                "true",
            ),
            (
                "reverse_list",
                "[5, 3, 1, 2].reverse() == [2, 1, 3, 5]",
                "true",
            ),
            (
                "reverse_is_not_a_string_function_in_kubernetes",
                "'abc'.reverse()",
                "error: no matching overload for 'reverse' applied to '(string)'",
            ),
            ("range", "lists.range(5) == [0, 1, 2, 3, 4]", "true"),
            ("range_empty", "lists.range(0) == []", "true"),
            (
                "range_negative",
                "lists.range(-1)",
                "error: lists.range: size must be non-negative, got -1",
            ),
            // cel-go's optional library, version 2.
            ("first", "[1, 2].first().value() == 1", "true"),
            ("last", "[1, 2].last().value() == 2", "true"),
            ("first_of_empty", "[].first().hasValue()", "false"),
            (
                "unwrap",
                "optional.unwrap([optional.of(1), optional.none()]) == [1]",
                "true",
            ),
            (
                "unwrap_opt",
                "[optional.of(1), optional.none()].unwrapOpt() == [1]",
                "true",
            ),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }
}
