//! The tree-walking evaluator. Every node visit and comprehension step is
//! charged to the budget; recursion is bounded by the parser's depth limit
//! and, across variables, by `MAX_EVAL_DEPTH`.

use std::rc::Rc;

use crate::activation::{Activation, Variable};
use crate::ast::{Ast, Comprehension, MacroKind, Node, NodeId, Words};
use crate::budget::Budget;
use crate::error::EvalError;
use crate::func::Func;
use crate::library;
use crate::ops;
use crate::program::Program;
use crate::value::no_overload;
use crate::value::{Bin, Key, ListIter, Map, MapIter, Str, Value};

/// Deepest evaluation recursion, counting variables that read variables.
const MAX_EVAL_DEPTH: usize = 1_000;

pub(crate) fn evaluate<'a>(
    ast: &'a Ast,
    act: &Activation<'a>,
    budget: &mut Budget,
    depth: usize,
    visible: usize,
) -> Result<Value<'a>, EvalError> {
    let mut e = Eval {
        ast,
        act,
        budget,
        scopes: Vec::new(),
        depth,
        visible,
    };
    e.eval(ast.root)
}

struct Eval<'e, 'a> {
    ast: &'a Ast,
    act: &'e Activation<'a>,
    budget: &'e mut Budget,
    /// Comprehension variables, innermost last.
    scopes: Vec<(&'a str, Value<'a>)>,
    depth: usize,
    /// How many composited variables this expression may read.
    visible: usize,
}

/// Errors that stop evaluation outright: `&&`, `||` and comprehensions
/// never absorb them.
fn is_fatal(e: &EvalError) -> bool {
    matches!(e, EvalError::CostBudgetExceeded | EvalError::TooDeep)
}

#[cold]
fn invalid() -> EvalError {
    EvalError::msg("invalid program")
}

#[cold]
#[inline(never)]
fn optional_element_error(other: &Value<'_>) -> EvalError {
    EvalError::msg(format!(
        "cannot initialize optional list element from non-optional value {other}"
    ))
}

#[cold]
#[inline(never)]
fn optional_entry_error(key: &Value<'_>, other: &Value<'_>) -> EvalError {
    EvalError::msg(format!(
        "cannot initialize optional entry '{key}' from non-optional value {other}"
    ))
}

#[cold]
#[inline(never)]
fn key_type_error(key: &Value<'_>) -> EvalError {
    EvalError::msg(format!("unsupported key type: {}", key.type_name()))
}

#[cold]
#[inline(never)]
fn not_iterable(range: &Value<'_>) -> EvalError {
    EvalError::msg(format!(
        "got '{}', expected iterable type",
        range.type_name()
    ))
}

#[cold]
#[inline(never)]
fn key_exists_error(key: &Key<'_>) -> EvalError {
    EvalError::msg(format!(
        "insert failed: key {} already exists",
        key.to_value()
    ))
}

#[cold]
#[inline(never)]
fn duplicate_key_error(key: &Key<'_>) -> EvalError {
    EvalError::msg(format!("duplicate key in map literal: {}", key.to_value()))
}

fn unwrap_rc<T: Clone>(rc: Rc<T>) -> T {
    Rc::try_unwrap(rc).unwrap_or_else(|rc| (*rc).clone())
}

impl<'e, 'a> Eval<'e, 'a> {
    fn eval(&mut self, id: NodeId) -> Result<Value<'a>, EvalError> {
        self.budget.charge(1)?;
        if self.depth >= MAX_EVAL_DEPTH {
            return Err(EvalError::TooDeep);
        }
        let ast = self.ast;
        let Some(node) = ast.node(id) else {
            return Err(EvalError::msg("invalid program"));
        };
        self.depth += 1;
        let result = self.node(node);
        self.depth -= 1;
        result
    }

    fn node(&mut self, node: &'a Node) -> Result<Value<'a>, EvalError> {
        match node {
            Node::Null => Ok(Value::Null),
            Node::Bool(b) => Ok(Value::Bool(*b)),
            Node::Int(i) => Ok(Value::Int(*i)),
            Node::Uint(u) => Ok(Value::Uint(*u)),
            Node::Double(d) => Ok(Value::Double(*d)),
            Node::String(s) => Ok(Value::String(Str::Borrowed(self.ast.str(*s)))),
            Node::Bytes(b) => Ok(Value::Bytes(Bin::Borrowed(self.ast.bytes(*b)))),
            // A comprehension variable may take a type's name (`type`,
            // `int`): it shadows the type in its body, as in cel-go.
            Node::Type(t) => match self.in_scope(t.name().as_bytes()) {
                Some(v) => Ok(v.clone()),
                None => Ok(Value::Type(*t)),
            },
            Node::Ident(name) => self.ident(self.ast.name(*name)),
            Node::Variable(name) => self.variable(self.ast.name(*name)),
            Node::Select {
                operand,
                field,
                optional,
            } => {
                let v = self.eval(*operand)?;
                select(v, self.ast.name(*field), *optional)
            }
            Node::Has { operand, field } => self.has(*operand, self.ast.name(*field)),
            Node::Index {
                operand,
                index,
                optional,
            } => {
                let v = self.eval(*operand)?;
                let i = self.eval(*index)?;
                index_value(v, &i, *optional)
            }
            Node::Not(x) => match self.eval(*x)? {
                Value::Bool(b) => Ok(Value::Bool(!b)),
                other => Err(no_overload("!_", &[other])),
            },
            Node::Neg(x) => ops::negate(self.eval(*x)?),
            Node::Binary { op, lhs, rhs } => {
                let a = self.eval(*lhs)?;
                let b = self.eval(*rhs)?;
                ops::binary(*op, &a, &b, self.budget)
            }
            Node::And(l, r) => self.logic(*l, *r, false),
            Node::Or(l, r) => self.logic(*l, *r, true),
            Node::Cond {
                cond,
                then,
                otherwise,
            } => match self.eval(*cond)? {
                Value::Bool(true) => self.eval(*then),
                Value::Bool(false) => self.eval(*otherwise),
                other => Err(no_overload("_?_:_", &[other])),
            },
            Node::List(items) => self.list(*items),
            Node::Map(entries) => self.map(*entries),
            Node::Call { func, args } => self.call(*func, *args),
            Node::Comprehension(at) => self.comprehension(*at),
            Node::Aux(_) => Err(invalid()),
        }
    }

    /// The comprehension variable `name` (names are compared as bytes).
    fn in_scope(&self, name: &[u8]) -> Option<&Value<'a>> {
        self.scopes
            .iter()
            .rev()
            .find(|(n, _)| n.as_bytes() == name)
            .map(|(_, v)| v)
    }

    fn ident(&mut self, name: &[u8]) -> Result<Value<'a>, EvalError> {
        if let Some(v) = self.in_scope(name) {
            return Ok(v.clone());
        }
        if name == b"variables" && self.act.has_variables() {
            return self.all_variables();
        }
        match self.act.lookup(name) {
            Some(v) => Ok(v.clone()),
            None => Err(EvalError::UndeclaredReference(text(name))),
        }
    }

    fn variable(&mut self, name: &[u8]) -> Result<Value<'a>, EvalError> {
        if !self.act.has_variables() || self.in_scope(b"variables").is_some() {
            let v = self.ident(b"variables")?;
            return select(v, name, false);
        }
        match self.act.variable_index(name, self.visible) {
            Some(i) => read_variable(self.act, i, self.budget, self.depth),
            None => Err(EvalError::UndeclaredReference(format!(
                "variables.{}",
                text(name)
            ))),
        }
    }

    /// `variables` on its own: a map of every visible variable.
    fn all_variables(&mut self) -> Result<Value<'a>, EvalError> {
        let names: Vec<(usize, &'a str)> = self.act.variable_names(self.visible).collect();
        let mut entries = Vec::with_capacity(names.len());
        for (i, name) in names {
            let v = read_variable(self.act, i, self.budget, self.depth)?;
            entries.push((Key::String(Str::Borrowed(name)), v));
        }
        let map = Map::new(entries).map_err(|_| EvalError::msg("duplicate variable names"))?;
        Ok(Value::Map(Rc::new(map)))
    }

    fn has(&mut self, operand: NodeId, field: &[u8]) -> Result<Value<'a>, EvalError> {
        if let Some(Node::Ident(name)) = self.ast.node(operand) {
            if self.ast.name(*name) == b"variables"
                && self.act.has_variables()
                && self.in_scope(b"variables").is_none()
            {
                let known = self.act.variable_index(field, self.visible).is_some();
                return Ok(Value::Bool(known));
            }
        }
        let v = self.eval(operand)?;
        has_field(&v, field).map(Value::Bool)
    }

    /// `&&` (`absorbing` false) and `||` (`absorbing` true), commutative
    /// over errors: the absorbing value on either side wins; otherwise the
    /// left error, then the right one.
    fn logic(&mut self, l: NodeId, r: NodeId, absorbing: bool) -> Result<Value<'a>, EvalError> {
        let left = self.eval(l);
        match &left {
            Ok(Value::Bool(b)) if *b == absorbing => return Ok(Value::Bool(absorbing)),
            Err(e) if is_fatal(e) => return left,
            _ => {}
        }
        let right = self.eval(r);
        match &right {
            Ok(Value::Bool(b)) if *b == absorbing => return Ok(Value::Bool(absorbing)),
            Err(e) if is_fatal(e) => return right,
            _ => {}
        }
        let op = if absorbing { "_||_" } else { "_&&_" };
        match (left, right) {
            (Ok(Value::Bool(_)), Ok(Value::Bool(_))) => Ok(Value::Bool(!absorbing)),
            (Err(e), _) => Err(e),
            (Ok(Value::Bool(_)), Err(e)) => Err(e),
            (Ok(Value::Bool(_)), Ok(v)) | (Ok(v), _) => Err(no_overload(op, &[v])),
        }
    }

    /// A list literal: `items` are element and optional flag pairs.
    fn list(&mut self, items: Words) -> Result<Value<'a>, EvalError> {
        let ast = self.ast;
        let count = items.len as usize / 2;
        self.budget.charge_items(count)?;
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            let (Some(id), Some(optional)) = (ast.word(items, 2 * i), ast.word(items, 2 * i + 1))
            else {
                return Err(invalid());
            };
            let v = self.eval(id)?;
            if optional == 0 {
                out.push(v);
                continue;
            }
            match v {
                Value::Optional(Some(x)) => out.push(unwrap_rc(x)),
                Value::Optional(None) => {}
                other => return Err(optional_element_error(&other)),
            }
        }
        Ok(Value::list(out))
    }

    /// A map literal: `entries` are key, value and optional flag triples.
    fn map(&mut self, entries: Words) -> Result<Value<'a>, EvalError> {
        let ast = self.ast;
        let count = entries.len as usize / 3;
        self.budget.charge_items(count)?;
        let mut out = Vec::with_capacity(count);
        for i in 0..count {
            let word = |at| ast.word(entries, 3 * i + at);
            let (Some(k), Some(v), Some(optional)) = (word(0), word(1), word(2)) else {
                return Err(invalid());
            };
            let key = self.eval(k)?;
            let value = self.eval(v)?;
            let value = if optional != 0 {
                match value {
                    Value::Optional(Some(x)) => unwrap_rc(x),
                    Value::Optional(None) => continue,
                    other => return Err(optional_entry_error(&key, &other)),
                }
            } else {
                value
            };
            let Some(key) = Key::from_value(&key) else {
                return Err(key_type_error(&key));
            };
            out.push((key, value));
        }
        let map = Map::new(out).map_err(|k| duplicate_key_error(&k))?;
        Ok(Value::Map(Rc::new(map)))
    }

    fn call(&mut self, func: Func, args: Words) -> Result<Value<'a>, EvalError> {
        let ast = self.ast;
        let count = args.len as usize;
        if matches!(func, Func::Or | Func::OrValue) && count == 2 {
            let (Some(target), Some(alternative)) = (ast.word(args, 0), ast.word(args, 1)) else {
                return Err(invalid());
            };
            return self.optional_or(func, target, alternative);
        }
        // Arguments live on the stack: no function takes more than four.
        let mut buf = [Value::Null, Value::Null, Value::Null, Value::Null];
        if count > buf.len() {
            let mut values = Vec::with_capacity(count);
            for i in 0..count {
                let id = ast.word(args, i).ok_or_else(invalid)?;
                values.push(self.eval(id)?);
            }
            return library::call(func, &values, self.budget, self.act.regexes());
        }
        for (i, slot) in buf.iter_mut().enumerate().take(count) {
            let Some(id) = ast.word(args, i) else {
                return Err(invalid());
            };
            *slot = self.eval(id)?;
        }
        library::call(
            func,
            buf.get(..count).unwrap_or(&[]),
            self.budget,
            self.act.regexes(),
        )
    }

    /// `o.or(p)` and `o.orValue(v)` as Kyverno's cel-go runs them.
    /// - `or` evaluates `p` only when `o` is empty; a receiver that is not
    ///   optional is an error (cel-go 0.28 on).
    /// - `orValue` is Kyverno's `__orValueCompat__`, an ordinary strict
    ///   function: both sides are evaluated and an error in either is the
    ///   result; a receiver that is not optional comes back as it is.
    fn optional_or(
        &mut self,
        func: Func,
        target: NodeId,
        alternative: NodeId,
    ) -> Result<Value<'a>, EvalError> {
        let target = self.eval(target)?;
        if func == Func::OrValue {
            let alt = self.eval(alternative)?;
            return Ok(match target {
                Value::Optional(Some(v)) => unwrap_rc(v),
                Value::Optional(None) => alt,
                other => other,
            });
        }
        match target {
            Value::Optional(Some(v)) => Ok(Value::Optional(Some(v))),
            Value::Optional(None) => match self.eval(alternative)? {
                alt @ Value::Optional(_) => Ok(alt),
                other => Err(no_overload(func.name(), &[Value::Optional(None), other])),
            },
            other => Err(no_overload(func.name(), &[other, Value::Optional(None)])),
        }
    }

    /// The comprehension whose words start at node `at`.
    #[inline(never)]
    fn comprehension(&mut self, at: NodeId) -> Result<Value<'a>, EvalError> {
        let Some(c) = self.ast.comprehension(at) else {
            return Err(invalid());
        };
        let c = &c;
        let range = self.eval(c.range)?;
        let base = self.scopes.len();
        self.scopes.push((self.ast.str(c.var), Value::Null));
        if let Some(v2) = c.var2 {
            self.scopes.push((self.ast.str(v2), Value::Null));
        }
        let result = if matches!(c.kind, MacroKind::OptMap | MacroKind::OptFlatMap) {
            self.opt_map(c, range, base)
        } else {
            self.fold(c, &range, base)
        };
        self.scopes.truncate(base);
        result
    }

    fn bind(&mut self, at: usize, value: Value<'a>) {
        if let Some(slot) = self.scopes.get_mut(at) {
            slot.1 = value;
        }
    }

    /// A predicate that must be a bool (`filter`, `map`'s filter).
    fn predicate(&mut self, id: NodeId) -> Result<bool, EvalError> {
        match self.eval(id)? {
            Value::Bool(b) => Ok(b),
            other => Err(no_overload("_?_:_", &[other])),
        }
    }

    fn fold(
        &mut self,
        c: &Comprehension,
        range: &Value<'a>,
        base: usize,
    ) -> Result<Value<'a>, EvalError> {
        let two = c.var2.is_some();
        let (mut items, len) = if let Some(list) = range.as_list() {
            (Items::List(list.iter().enumerate(), two), list.len())
        } else if let Some(map) = range.as_map() {
            (Items::Map(map.iter()), map.len())
        } else {
            return Err(not_iterable(range));
        };
        let mut deferred: Option<EvalError> = None;
        let mut count = 0usize;
        // `map` keeps every element, unless it has a filter.
        let keeps_all = c.kind == MacroKind::Map && c.filter.is_none();
        let mut out: Vec<Value<'a>> = Vec::with_capacity(if keeps_all { len } else { 0 });
        let mut entries: Vec<(Key<'a>, Value<'a>)> = Vec::new();
        let mut keys: Vec<Value<'a>> = Vec::new();
        if c.kind == MacroKind::SortBy && range.as_list().is_none() {
            return Err(no_overload("sortBy", std::slice::from_ref(range)));
        }
        for (first, second) in &mut items {
            self.budget.charge(1)?;
            let var = first.clone();
            self.bind(base, first);
            if two {
                self.bind(base + 1, second);
            }
            match c.kind {
                MacroKind::All | MacroKind::Exists => {
                    let stop = c.kind == MacroKind::Exists;
                    match self.eval(c.body) {
                        Ok(Value::Bool(b)) if b == stop => return Ok(Value::Bool(stop)),
                        Ok(Value::Bool(_)) => {}
                        Err(e) if is_fatal(&e) => return Err(e),
                        Err(e) => {
                            deferred.get_or_insert(e);
                        }
                        Ok(other) => {
                            let op = if stop { "_||_" } else { "_&&_" };
                            deferred.get_or_insert(no_overload(op, &[other]));
                        }
                    }
                }
                MacroKind::ExistsOne => {
                    if self.predicate(c.body)? {
                        count += 1;
                    }
                }
                MacroKind::Filter => {
                    if self.predicate(c.body)? {
                        self.budget.charge(1)?;
                        out.push(var);
                    }
                }
                MacroKind::Map => {
                    if let Some(f) = c.filter {
                        if !self.predicate(f)? {
                            continue;
                        }
                    }
                    self.budget.charge(1)?;
                    out.push(self.eval(c.body)?);
                }
                MacroKind::TransformMap => {
                    if let Some(f) = c.filter {
                        if !self.predicate(f)? {
                            continue;
                        }
                    }
                    let Some(key) = Key::from_value(&var) else {
                        return Err(key_type_error(&var));
                    };
                    self.budget.charge(1)?;
                    entries.push((key, self.eval(c.body)?));
                }
                MacroKind::TransformMapEntry => {
                    if let Some(f) = c.filter {
                        if !self.predicate(f)? {
                            continue;
                        }
                    }
                    let produced = self.eval(c.body)?;
                    let Some(map) = produced.as_map() else {
                        return Err(EvalError::NoMatchingOverload {
                            function: "cel.@mapInsert".into(),
                            args: format!("map, {}", produced.type_name()),
                        });
                    };
                    self.budget.charge_items(map.len())?;
                    for (key, value) in map.iter() {
                        let Some(key) = Key::from_value(&key) else {
                            return Err(key_type_error(&key));
                        };
                        entries.push((key, value));
                    }
                }
                MacroKind::SortBy => {
                    keys.push(self.eval(c.body)?);
                    out.push(var);
                }
                MacroKind::OptMap | MacroKind::OptFlatMap => {}
            }
        }
        match c.kind {
            MacroKind::All | MacroKind::Exists => match deferred {
                Some(e) => Err(e),
                None => Ok(Value::Bool(c.kind == MacroKind::All)),
            },
            MacroKind::ExistsOne => Ok(Value::Bool(count == 1)),
            MacroKind::TransformMap | MacroKind::TransformMapEntry => {
                let map = Map::new(entries).map_err(|k| key_exists_error(&k))?;
                Ok(Value::Map(Rc::new(map)))
            }
            MacroKind::SortBy => {
                let order = crate::library::lists::sorted_order(&keys, self.budget)?;
                Ok(Value::list(
                    order
                        .into_iter()
                        .filter_map(|i| out.get(i).cloned())
                        .collect(),
                ))
            }
            _ => Ok(Value::list(out)),
        }
    }

    fn opt_map(
        &mut self,
        c: &Comprehension,
        range: Value<'a>,
        base: usize,
    ) -> Result<Value<'a>, EvalError> {
        let name = if c.kind == MacroKind::OptMap {
            "optMap"
        } else {
            "optFlatMap"
        };
        match range {
            Value::Optional(None) => Ok(Value::Optional(None)),
            Value::Optional(Some(v)) => {
                self.bind(base, unwrap_rc(v));
                let result = self.eval(c.body)?;
                match result {
                    Value::Optional(_) if c.kind == MacroKind::OptFlatMap => Ok(result),
                    other if c.kind == MacroKind::OptMap => Ok(Value::optional(Some(other))),
                    other => Err(no_overload(name, &[other])),
                }
            }
            other => Err(no_overload(name, &[other])),
        }
    }
}

/// What a comprehension goes through: pairs of index (or key) and element
/// (or value); one variable over a list binds the element alone.
enum Items<'v, 'a> {
    /// The list's elements, and whether there are two variables.
    List(std::iter::Enumerate<ListIter<'v, 'a>>, bool),
    Map(MapIter<'v, 'a>),
}

impl<'a> Iterator for Items<'_, 'a> {
    type Item = (Value<'a>, Value<'a>);

    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Items::List(items, two) => {
                let (i, v) = items.next()?;
                Some(if *two {
                    (Value::Int(i64::try_from(i).unwrap_or(i64::MAX)), v)
                } else {
                    (v, Value::Null)
                })
            }
            Items::Map(entries) => entries.next(),
        }
    }
}

/// A name of the program, as text.
#[cold]
fn text(name: &[u8]) -> String {
    String::from_utf8_lossy(name).into_owned()
}

/// `v.field` (or `v.?field`); on an optional the result stays optional.
fn select<'a>(v: Value<'a>, field: &[u8], optional: bool) -> Result<Value<'a>, EvalError> {
    // Lists are indexed by number: a field name is the wrong index type.
    let lookup = |v: &Value<'a>| {
        if v.as_list().is_some() {
            return Err(EvalError::msg("unsupported index type 'string' in list"));
        }
        Ok(v.as_map().and_then(|m| m.get_name(field)))
    };
    match v {
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => Ok(Value::optional(lookup(&inner)?)),
        _ if optional => Ok(Value::optional(lookup(&v)?)),
        _ => lookup(&v)?.ok_or_else(|| EvalError::NoSuchKey(text(field))),
    }
}

/// `has(v.field)`: false when absent, and (as cel-go) on values that have
/// no fields.
fn has_field(v: &Value<'_>, field: &[u8]) -> Result<bool, EvalError> {
    match v {
        Value::Optional(None) => Ok(false),
        Value::Optional(Some(inner)) => has_field(inner, field),
        other if other.as_list().is_some() => {
            Err(EvalError::msg("unsupported index type 'string' in list"))
        }
        other => Ok(other.as_map().is_some_and(|m| m.get_name(field).is_some())),
    }
}

/// A list index: ints, and uints or doubles that are exact ints.
fn list_index(idx: &Value<'_>) -> Result<i64, EvalError> {
    match idx {
        Value::Int(i) => Ok(*i),
        Value::Uint(u) => i64::try_from(*u)
            .map_err(|_| EvalError::msg(format!("unsupported index value {u} in list"))),
        Value::Double(d) => crate::library::stdlib::double_to_int(*d)
            .ok()
            .filter(|i| {
                #[allow(clippy::cast_precision_loss)]
                let back = *i as f64;
                back == *d
            })
            .ok_or_else(|| EvalError::msg(format!("unsupported index value {idx} in list"))),
        other => Err(EvalError::msg(format!(
            "unsupported index type '{}' in list",
            other.type_name()
        ))),
    }
}

fn lookup_index<'a>(v: &Value<'a>, idx: &Value<'_>) -> Result<Option<Value<'a>>, EvalError> {
    if let Some(list) = v.as_list() {
        let i = list_index(idx)?;
        return Ok(usize::try_from(i).ok().and_then(|i| list.get(i)));
    }
    Ok(v.as_map().and_then(|m| m.get(idx)))
}

/// `v[idx]` (or `v[?idx]`).
fn index_value<'a>(v: Value<'a>, idx: &Value<'_>, optional: bool) -> Result<Value<'a>, EvalError> {
    match v {
        Value::Optional(None) => Ok(Value::Optional(None)),
        Value::Optional(Some(inner)) => Ok(Value::optional(lookup_index(&inner, idx)?)),
        _ if optional => Ok(Value::optional(lookup_index(&v, idx)?)),
        _ => lookup_index(&v, idx)?.ok_or_else(|| {
            if v.as_list().is_some() {
                EvalError::IndexOutOfBounds(idx.to_string())
            } else {
                EvalError::NoSuchKey(idx.to_string())
            }
        }),
    }
}

impl Program {
    /// Evaluates the program against `activation`, charging each step to
    /// `budget`.
    pub fn evaluate<'a>(
        &'a self,
        activation: &Activation<'a>,
        budget: &mut Budget,
    ) -> Result<Value<'a>, EvalError> {
        evaluate(&self.ast, activation, budget, 0, usize::MAX)
    }
}

/// The value of composited variable `index`, evaluated now, in
/// `activation`, if not yet.
fn read_variable<'a>(
    activation: &Activation<'a>,
    index: usize,
    budget: &mut Budget,
    depth: usize,
) -> Result<Value<'a>, EvalError> {
    match activation.begin_variable(index)? {
        Variable::Known(result) => result,
        Variable::Evaluate(ast) => {
            let result = evaluate(ast, activation, budget, depth, index);
            activation.finish_variable(index, &result)?;
            result
        }
    }
}
