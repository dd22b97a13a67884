//! Evaluates a compiled tree with the departures of Kyverno's go-jmespath
//! fork: a field missing from an existing object is an error
//! (`Unknown key "x" in path`), which `||`, comparisons, function
//! arguments, pipes, projections and multi-selects turn into `null`.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::ast::{Function, Name, Node};
use crate::compare::{compare, truthy};
use crate::error::{SearchError, MAX_RESULT_BYTES};
use crate::functions::{self, Arg, Expref};
use crate::{go, kyverno, types, work};

/// A search of `node` over `data`, with `scope`'s entries seen as fields
/// of `data`; borrows from them when the result is part of them.
pub(crate) fn search<'a>(
    node: &'a Node,
    data: &'a Value,
    scope: Scope<'_, 'a>,
) -> Result<Cow<'a, Value>, SearchError> {
    BUILT.with(|b| b.set(0));
    eval_scoped(node, data, scope)
}

/// [`search`] for a result read as a list: its elements, borrowed from
/// `data` or the scope where they are part of them (a flatten or
/// multi-select builds a new list, not new elements). A value that is not
/// a list is the one element.
pub(crate) fn search_list<'a>(
    node: &'a Node,
    data: &'a Value,
    scope: Scope<'_, 'a>,
) -> Result<Vec<Cow<'a, Value>>, SearchError> {
    BUILT.with(|b| b.set(0));
    // `list[]` and `list[].field` are projections: their results are
    // the projected elements, borrowed when they are in the input.
    if let Node::Projection(pair) = node {
        let (lhs, rhs) = &**pair;
        return Ok(project(lhs, rhs, data, scope)?.unwrap_or_else(|| vec![Cow::Borrowed(&NULL)]));
    }
    let builds_list = match node {
        Node::MultiList(_) | Node::Flatten(_) => true,
        Node::Subexpr(pair) => matches!(pair.1, Node::MultiList(_) | Node::Flatten(_)),
        _ => false,
    };
    if builds_list {
        let items = eval_items(node, data, scope)?;
        return Ok(items.unwrap_or_else(|| vec![Cow::Borrowed(&NULL)]));
    }
    Ok(match eval_scoped(node, data, scope)? {
        Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
        Cow::Owned(Value::Array(items)) => items.into_iter().map(Cow::Owned).collect(),
        other => vec![other],
    })
}

thread_local! {
    /// What the running search has built so far, in estimated bytes.
    static BUILT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Counts a copy of `value` against the running search's budget.
fn charge(value: &Value) -> Result<(), SearchError> {
    let before = BUILT.with(std::cell::Cell::get);
    let total = work::footprint(value, before, MAX_RESULT_BYTES).ok_or(SearchError::TooLarge)?;
    BUILT.with(|b| b.set(total));
    Ok(())
}

/// The value itself: a copy, counted against the budget, when borrowed.
fn owned(value: Cow<'_, Value>) -> Result<Value, SearchError> {
    match value {
        Cow::Borrowed(v) => {
            charge(v)?;
            Ok(v.clone())
        }
        Cow::Owned(v) => Ok(v),
    }
}

/// Turns a missing key into `null`, as most of go-jmespath's nodes do.
fn absorb<'a>(result: Result<Cow<'a, Value>, SearchError>) -> Result<Cow<'a, Value>, SearchError> {
    match result {
        Err(SearchError::NotFound(_)) => Ok(Cow::Owned(Value::Null)),
        other => other,
    }
}

const NULL: Value = Value::Null;

fn eval<'a>(node: &'a Node, data: &'a Value) -> Result<Cow<'a, Value>, SearchError> {
    eval_scoped(node, data, &[])
}

/// Entries seen as fields of the top-level document, over its own: the
/// engine's variables (`element`, context entries) without copying them in.
pub type Scope<'s, 'a> = &'s [(&'s str, &'a Value)];

/// [`eval`] on the top-level document, with `scope` over it.
fn eval_scoped<'a>(
    node: &'a Node,
    data: &'a Value,
    scope: Scope<'_, 'a>,
) -> Result<Cow<'a, Value>, SearchError> {
    // A projection or filter comes back here for every element.
    if !work::spend(1) {
        return Err(SearchError::TooMuchWork);
    }
    match node {
        Node::Identity if !scope.is_empty() => {
            // The whole document: a copy with the scope's entries in it.
            let mut whole = match data {
                Value::Object(map) => {
                    charge(data)?;
                    map.clone()
                }
                _ => Map::new(),
            };
            // In order: a later entry hides an earlier one of its name.
            for (name, value) in scope {
                charge(value)?;
                whole.insert((*name).to_string(), (*value).clone());
            }
            Ok(Cow::Owned(Value::Object(whole)))
        }
        Node::Identity => Ok(Cow::Borrowed(data)),
        Node::Field(name) => scoped_field(name, data, scope).map(Cow::Borrowed),
        Node::Path(names) => {
            let Some((first, rest)) = names.split_first() else {
                return Ok(Cow::Borrowed(data));
            };
            let mut value = scoped_field(first, data, scope)?;
            for name in rest {
                value = field(name, value)?;
            }
            Ok(Cow::Borrowed(value))
        }
        Node::Index(idx) => Ok(match data {
            Value::Array(items) => index(items, *idx).map_or(Cow::Borrowed(&NULL), Cow::Borrowed),
            _ => Cow::Borrowed(&NULL),
        }),
        Node::Slice { start, stop, step } => match data {
            Value::Array(items) => Ok(Cow::Owned(Value::Array(slice(
                items, *start, *stop, *step,
            )?))),
            _ => Ok(Cow::Borrowed(&NULL)),
        },
        Node::Literal(value) => Ok(Cow::Borrowed(value)),
        Node::Subexpr(pair) => {
            let (lhs, rhs) = &**pair;
            let left = eval_scoped(lhs, data, scope)?;
            eval_on(rhs, left)
        }
        Node::Pipe(pair) => {
            let (lhs, rhs) = &**pair;
            if is_length_of(rhs, |arg| matches!(arg, Node::Identity)) {
                if let Some(n) = count_listed(lhs, data, scope)? {
                    return Ok(Cow::Owned(Value::from(n)));
                }
            }
            let left = absorb(eval_scoped(lhs, data, scope))?;
            absorb(eval_on(rhs, left))
        }
        Node::Projection(pair) => match project(&pair.0, &pair.1, data, scope)? {
            Some(items) => Ok(Cow::Owned(Value::Array(
                items.into_iter().map(owned).collect::<Result<_, _>>()?,
            ))),
            None => Ok(Cow::Borrowed(&NULL)),
        },
        Node::ObjectValues(inner) => {
            let value = match eval_scoped(inner, data, scope) {
                Ok(v) => v,
                Err(SearchError::NotFound(_)) => return Ok(Cow::Borrowed(&NULL)),
                Err(e) => return Err(e),
            };
            Ok(match value {
                Cow::Borrowed(Value::Object(map)) => Cow::Owned(Value::Array(
                    map.values()
                        .map(|v| owned(Cow::Borrowed(v)))
                        .collect::<Result<_, _>>()?,
                )),
                Cow::Owned(Value::Object(map)) => {
                    Cow::Owned(Value::Array(map.into_iter().map(|(_, v)| v).collect()))
                }
                _ => Cow::Borrowed(&NULL),
            })
        }
        Node::Flatten(_) => match items_or_none(node, data, scope)? {
            Some(items) => Ok(Cow::Owned(Value::Array(
                items.into_iter().map(owned).collect::<Result<_, _>>()?,
            ))),
            None => Ok(Cow::Borrowed(&NULL)),
        },
        Node::Condition(pair) => {
            let (predicate, then) = &**pair;
            let test = absorb(eval_scoped(predicate, data, scope))?;
            if truthy(&test) {
                eval_scoped(then, data, scope)
            } else {
                Ok(Cow::Borrowed(&NULL))
            }
        }
        Node::Comparison(comparator, pair) => {
            let (lhs, rhs) = &**pair;
            let left = absorb(eval_scoped(lhs, data, scope))?;
            let right = absorb(eval_scoped(rhs, data, scope))?;
            Ok(Cow::Owned(compare(comparator, &left, &right)))
        }
        Node::And(pair) => {
            let (lhs, rhs) = &**pair;
            let left = absorb(eval_scoped(lhs, data, scope))?;
            if !truthy(&left) {
                return Ok(left);
            }
            eval_scoped(rhs, data, scope)
        }
        Node::Or(pair) => {
            let (lhs, rhs) = &**pair;
            let left = absorb(eval_scoped(lhs, data, scope))?;
            if truthy(&left) {
                return Ok(left);
            }
            absorb(eval_scoped(rhs, data, scope))
        }
        Node::Not(inner) => {
            let value = absorb(eval_scoped(inner, data, scope))?;
            Ok(Cow::Owned(Value::Bool(!truthy(&value))))
        }
        Node::MultiList(elements) => {
            if data.is_null() {
                return Ok(Cow::Borrowed(&NULL));
            }
            let mut out = Vec::with_capacity(elements.len());
            for e in elements {
                out.push(owned(absorb(eval_scoped(e, data, scope))?)?);
            }
            Ok(Cow::Owned(Value::Array(out)))
        }
        Node::MultiHash(elements) => {
            if data.is_null() {
                return Ok(Cow::Borrowed(&NULL));
            }
            let mut out = Map::new();
            for (key, e) in elements {
                out.insert(
                    key.as_str().to_string(),
                    owned(absorb(eval_scoped(e, data, scope))?)?,
                );
            }
            Ok(Cow::Owned(Value::Object(out)))
        }
        Node::Expref(_) => Ok(Cow::Borrowed(&NULL)),
        Node::Function(function, args) => {
            if let [arg] = args.as_slice() {
                if is_length_of(node, |_| true) {
                    if let Some(n) = count_listed(arg, data, scope)? {
                        return Ok(Cow::Owned(Value::from(n)));
                    }
                }
            }
            call(*function, args, data, scope).map(Cow::Owned)
        }
        // Compiling rejects it; kept as go-jmespath names the problem.
        Node::Unresolved(name, _) => {
            Err(SearchError::Function(format!("unknown function: {name}()")))
        }
    }
}

/// Field `name` of `data`, or of the scope's entry of that name, which
/// hides it.
fn scoped_field<'a>(
    name: &Name,
    data: &'a Value,
    scope: Scope<'_, 'a>,
) -> Result<&'a Value, SearchError> {
    match scope.iter().rev().find(|(n, _)| *n == name.as_str()) {
        Some((_, value)) => Ok(*value),
        None => field(name, data),
    }
}

/// Field `name` of an object (go-jmespath's `NotFoundError` when it lacks
/// it); `null` of anything else.
fn field<'a>(name: &Name, data: &'a Value) -> Result<&'a Value, SearchError> {
    match data {
        Value::Object(map) => map
            .get(name.as_str())
            .ok_or_else(|| SearchError::NotFound(name.clone())),
        _ => Ok(&NULL),
    }
}

/// Evaluates `node` against an intermediate result, keeping borrows alive.
/// The elements a projection or a flatten goes over, borrowed where they
/// come from the input: `spec.[initContainers, containers][].name` reads
/// each container in place instead of copying the lists first. `None`
/// when the value is not a list (the projection then yields `null`).
fn eval_items<'a>(
    node: &'a Node,
    data: &'a Value,
    scope: Scope<'_, 'a>,
) -> Result<Option<Vec<Cow<'a, Value>>>, SearchError> {
    match node {
        Node::MultiList(elements) if !data.is_null() => {
            let mut out = Vec::with_capacity(elements.len());
            for e in elements {
                out.push(absorb(eval_scoped(e, data, scope))?);
            }
            Ok(Some(out))
        }
        Node::Subexpr(pair) if matches!(pair.1, Node::MultiList(_) | Node::Flatten(_)) => {
            let (lhs, rhs) = &**pair;
            match eval_scoped(lhs, data, scope)? {
                Cow::Borrowed(left) => eval_items(rhs, left, &[]),
                Cow::Owned(left) => match eval_items(rhs, &left, &[])? {
                    Some(items) => Ok(Some(
                        items
                            .into_iter()
                            .map(|i| owned(i).map(Cow::Owned))
                            .collect::<Result<_, _>>()?,
                    )),
                    None => Ok(None),
                },
            }
        }
        Node::Flatten(inner) => {
            let Some(items) = items_or_none(inner, data, scope)? else {
                return Ok(None);
            };
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    Cow::Borrowed(Value::Array(inner)) => {
                        out.extend(inner.iter().map(Cow::Borrowed))
                    }
                    Cow::Owned(Value::Array(inner)) => {
                        out.extend(inner.into_iter().map(Cow::Owned))
                    }
                    other => out.push(other),
                }
            }
            Ok(Some(out))
        }
        _ => Ok(match eval_scoped(node, data, scope)? {
            Cow::Borrowed(Value::Array(items)) => Some(items.iter().map(Cow::Borrowed).collect()),
            Cow::Owned(Value::Array(items)) => Some(items.into_iter().map(Cow::Owned).collect()),
            _ => None,
        }),
    }
}

/// [`eval_items`], with a missing key read as no list: the flatten or
/// projection over it is then `null`.
fn items_or_none<'a>(
    node: &'a Node,
    data: &'a Value,
    scope: Scope<'_, 'a>,
) -> Result<Option<Vec<Cow<'a, Value>>>, SearchError> {
    match eval_items(node, data, scope) {
        Err(SearchError::NotFound(_)) => Ok(None),
        other => other,
    }
}

/// Whether `node` is the standard `length` of one argument `arg` accepts.
fn is_length_of(node: &Node, arg: impl Fn(&Node) -> bool) -> bool {
    matches!(node, Node::Function(Function::Standard(sig), args)
        if sig.name == "length" && matches!(args.as_slice(), [a] if arg(a)))
}

/// How many elements a flatten or projection lists, counted where they
/// are: `containers[] | length(@)` (Kyverno's usual count) would copy every
/// container into the list only to count it. `None` for other nodes and
/// when the result is not a list: the caller evaluates as usual.
fn count_listed<'a>(
    node: &'a Node,
    data: &'a Value,
    scope: Scope<'_, 'a>,
) -> Result<Option<usize>, SearchError> {
    let items = match node {
        Node::Flatten(_) => items_or_none(node, data, scope)?,
        Node::Projection(pair) => project(&pair.0, &pair.1, data, scope)?,
        _ => None,
    };
    Ok(items.map(|items| items.len()))
}

/// A projection's results: `rhs` on each element of `lhs`, nulls left
/// out, borrowed where they are part of the input. `None` when `lhs` is
/// not a list (the projection is then `null`).
fn project<'a>(
    lhs: &'a Node,
    rhs: &'a Node,
    data: &'a Value,
    scope: Scope<'_, 'a>,
) -> Result<Option<Vec<Cow<'a, Value>>>, SearchError> {
    let Some(items) = items_or_none(lhs, data, scope)? else {
        return Ok(None);
    };
    let mut out = Vec::with_capacity(items.len());
    for item in items {
        let projected = absorb(eval_on(rhs, item))?;
        if !projected.is_null() {
            out.push(projected);
        }
    }
    Ok(Some(out))
}

fn eval_on<'a>(node: &'a Node, value: Cow<'a, Value>) -> Result<Cow<'a, Value>, SearchError> {
    match value {
        Cow::Borrowed(v) => eval(node, v),
        Cow::Owned(v) => eval(node, &v).and_then(owned).map(Cow::Owned),
    }
}

fn index(items: &[Value], idx: i32) -> Option<&Value> {
    let len = i64::try_from(items.len()).ok()?;
    let i = i64::from(idx);
    let i = if i < 0 { len + i } else { i };
    usize::try_from(i).ok().and_then(|i| items.get(i))
}

fn slice(
    items: &[Value],
    start: Option<i32>,
    stop: Option<i32>,
    step: i32,
) -> Result<Vec<Value>, SearchError> {
    if step == 0 {
        return Err(SearchError::InvalidSlice);
    }
    let len = i64::try_from(items.len()).unwrap_or(i64::MAX);
    let step = i64::from(step);
    let clamp = |v: Option<i32>, default: i64| -> i64 {
        match v {
            None => default,
            Some(v) => {
                let v = i64::from(v);
                if v < 0 {
                    (len + v).max(if step < 0 { -1 } else { 0 })
                } else if step < 0 {
                    v.min(len - 1)
                } else {
                    v.min(len)
                }
            }
        }
    };
    let (start, stop) = if step > 0 {
        (clamp(start, 0), clamp(stop, len))
    } else {
        (clamp(start, len - 1), clamp(stop, -1))
    };
    let mut out = Vec::new();
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        if let Some(v) = usize::try_from(i).ok().and_then(|i| items.get(i)) {
            charge(v)?;
            out.push(v.clone());
        }
        i += step;
    }
    Ok(out)
}

fn call<'a>(
    function: Function,
    args: &'a [Node],
    data: &'a Value,
    scope: Scope<'_, 'a>,
) -> Result<Value, SearchError> {
    let signature = function.signature();
    let mut values = Vec::with_capacity(args.len());
    for (i, arg) in args.iter().enumerate() {
        let accepted = signature
            .args
            .get(i)
            .or_else(|| signature.args.last())
            .copied()
            .unwrap_or(&[]);
        let value = match arg {
            Node::Expref(inner) => Arg::Expref(Expref {
                node: inner,
                apply: apply_expref,
            }),
            other => Arg::Value(absorb(eval_scoped(other, data, scope))?),
        };
        let ok = match &value {
            Arg::Expref(_) => accepted.contains(&types::ArgType::Expref),
            Arg::Value(v) => accepted.iter().any(|t| t.accepts(v)),
        };
        if !ok {
            let shown = match &value {
                Arg::Value(v) => go::sprint(v),
                Arg::Expref(_) => "&expression".into(),
            };
            let names: Vec<String> = accepted.iter().map(|t| format!("{:?}", t.name())).collect();
            return Err(SearchError::Function(format!(
                "Invalid type for: {shown}, expected: []jmespath.JpType{{{}}}",
                names.join(", ")
            )));
        }
        values.push(value);
    }
    // A function goes over its arguments without coming back through
    // `eval_scoped`: it pays for their size.
    let size = values.iter().fold(0usize, |n, v| match v {
        Arg::Value(v) => n.saturating_add(work::size(v)),
        Arg::Expref(_) => n,
    });
    if !work::spend(size) {
        return Err(SearchError::TooMuchWork);
    }
    match function {
        Function::Kyverno(s) => {
            let plain: Vec<Value> = values
                .into_iter()
                .map(|a| match a {
                    Arg::Value(v) => owned(v),
                    Arg::Expref(_) => Ok(Value::Null),
                })
                .collect::<Result<_, _>>()?;
            kyverno::call(s.name, &plain).map_err(|e| SearchError::Function(e.message))
        }
        Function::Standard(s) => functions::call(s.name, &values),
    }
}

/// Applies an expression reference to one element, as go-jmespath does:
/// a missing key is `null`.
fn apply_expref(node: &Node, element: &Value) -> Result<Value, SearchError> {
    absorb(eval(node, element)).and_then(owned)
}
