//! Kubernetes' lists library (`isSorted`, `sum`, `min`, `max`, `indexOf`,
//! `lastIndexOf`) and cel-go's sets extension.

use std::cmp::Ordering;

use crate::ast::BinOp;
use crate::error::EvalError;
use crate::functions::{no_overload, Func};
use crate::value::{equal, ListRef, Value};
use crate::{ops, Budget};

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
            ("max_mixed_numbers", "[1, 2.5, 2u].max()", "2.5"),
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
                "sets.intersects([1, 2], [2.0, 5])",
                "true",
            ),
            ("sets_disjoint", "sets.intersects([1], [2])", "false"),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }
}
