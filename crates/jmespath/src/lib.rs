//! JMESPath as Kyverno runs it: `parser` builds the tree once (functions
//! resolved, arity checked; its errors held equal to the `jmespath`
//! crate's) and this module interprets it with the departures of Kyverno's
//! go-jmespath fork:
//! - a field missing from an existing object is an error
//!   (`Unknown key "x" in path`), which `||`, comparisons, function
//!   arguments, pipes, projections and multi-selects turn into `null`;
//! - Kyverno's functions (`kyverno` module) extend and override the
//!   standard ones (`functions` module).
//!
//! `images` (image references as Kyverno parses them) and `wildcard`
//! (Kyverno's `*`/`?` matching) serve these functions and the engine alike.
#![deny(unsafe_code)]
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing
    )
)]

mod arithmetic;
mod functions;
pub mod go;
pub mod images;
pub mod kyverno;
mod parser;
mod time;
pub mod types;
pub mod wildcard;
pub mod work;

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::{Map, Value};

use types::Signature;

/// Deepest expression nesting accepted; bounds the parser's and the
/// interpreter's recursion.
const MAX_DEPTH: usize = 64;
/// Longest expression accepted, in bytes.
const MAX_LEN: usize = 64 * 1024;

/// Why an expression does not compile.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CompileError {
    #[error("{0}")]
    Syntax(String),
    #[error("unknown function: {0}()")]
    UnknownFunction(String),
    #[error("function {name}() takes {expected} argument{}, not {actual}", if *.expected == "1" { "" } else { "s" })]
    Arity {
        name: String,
        expected: String,
        actual: usize,
    },
    #[error("`&expression` is only an argument of sort_by, max_by, min_by and map")]
    MisplacedExpref,
    #[error(
        "the expression nests deeper than {MAX_DEPTH} levels or is longer than {MAX_LEN} bytes"
    )]
    TooDeep,
}

/// Why a search failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SearchError {
    /// go-jmespath's `NotFoundError`.
    #[error("Unknown key \"{0}\" in path")]
    NotFound(Name),
    #[error("{0}")]
    Function(String),
    #[error("invalid slice, step cannot be 0")]
    InvalidSlice,
    #[error("the query's results grow past {} MiB (the limit per query)", MAX_RESULT_BYTES >> 20)]
    TooLarge,
    #[error("{}", work::EXCEEDED)]
    TooMuchWork,
}

/// Most memory the values one search builds may take (estimated: a value
/// counts 32 bytes and its text; a 3 MiB object copied twice fits): copies
/// of the input, lists and maps built by the query. Without it
/// `@ | [@, @] | [@, @] | …` doubles the input at every pipe.
pub const MAX_RESULT_BYTES: usize = 16 << 20;

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
pub(crate) fn owned(value: Cow<'_, Value>) -> Result<Value, SearchError> {
    match value {
        Cow::Borrowed(v) => {
            charge(v)?;
            Ok(v.clone())
        }
        Cow::Owned(v) => Ok(v),
    }
}

/// A compiled expression. Cloning shares it.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    text: Rc<str>,
    node: Rc<Node>,
}

/// Most compiled expressions kept for reuse by one thread, and the longest
/// text kept: the cache saves work on the short queries policies repeat.
const CACHE_ENTRIES: usize = 512;
const CACHE_TEXT: usize = 4096;

/// FNV-1a of a query's text: the cache's key. Fixed, so there is no random
/// seed to ask the host for; the keys are short texts, for which SipHash's
/// setup costs more than the hashing.
fn fnv(text: &str) -> u64 {
    text.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

/// Hashes a key that is already a hash (the cache's [`fnv`]) as itself.
#[derive(Debug, Clone, Copy, Default)]
struct Prehashed(u64);

impl std::hash::Hasher for Prehashed {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Only `write_u64` is used; fold anything else in all the same.
        for &b in bytes {
            self.0 = (self.0 << 8) | u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

type Cache =
    HashMap<u64, (Rc<str>, Result<Query, CompileError>), std::hash::BuildHasherDefault<Prehashed>>;

thread_local! {
    /// Expressions compiled so far, by text: a policy repeats its queries
    /// (`request.operation` in every precondition, one container list per
    /// rule), and a fresh instance per request makes this a per-request
    /// cache. Full, it stops growing; it only saves work, never changes a
    /// result. Keyed by the text's [`fnv`], which is computed once per lookup; two
    /// texts that share a hash are told apart by the text kept beside.
    /// It starts empty and grows: sized for 64 up front it touched two
    /// fresh pages of memory on requests that compile a handful.
    static COMPILED: std::cell::RefCell<Cache> =
        std::cell::RefCell::new(HashMap::with_hasher(Default::default()));
}

/// A field or function name as a query spells it: a range of the query's
/// text, which it shares, so parsing copies no names. A quoted name with
/// escapes has a text of its own.
#[derive(Clone)]
pub struct Name {
    text: Rc<str>,
    start: u32,
    end: u32,
}

impl Name {
    /// `text[range]`; a range past `u32` (longer than any query) is empty.
    fn slice(text: &Rc<str>, range: std::ops::Range<usize>) -> Self {
        let (Ok(start), Ok(end)) = (u32::try_from(range.start), u32::try_from(range.end)) else {
            return Self::from("");
        };
        Self {
            text: text.clone(),
            start,
            end,
        }
    }

    pub fn as_str(&self) -> &str {
        self.text
            .get(self.start as usize..self.end as usize)
            .unwrap_or_default()
    }
}

impl From<&str> for Name {
    fn from(name: &str) -> Self {
        let text: Rc<str> = Rc::from(name);
        Self::slice(&text, 0..text.len())
    }
}

impl PartialEq for Name {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl std::fmt::Debug for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(self.as_str(), f)
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Node {
    Identity,
    Field(Name),
    Index(i32),
    Slice {
        start: Option<i32>,
        stop: Option<i32>,
        step: i32,
    },
    Literal(Value),
    /// `a.b.c`: a chain of two or more fields, one node instead of a
    /// [`Node::Subexpr`] per dot (what most queries are made of).
    Path(Vec<Name>),
    /// `a.b`, `a[0]`: errors on the left propagate.
    Subexpr(Box<(Node, Node)>),
    /// `a | b`: a missing key on the left becomes `null`.
    Pipe(Box<(Node, Node)>),
    Projection(Box<(Node, Node)>),
    ObjectValues(Box<Node>),
    Flatten(Box<Node>),
    Condition(Box<(Node, Node)>),
    Comparison(Comparator, Box<(Node, Node)>),
    And(Box<(Node, Node)>),
    Or(Box<(Node, Node)>),
    Not(Box<Node>),
    MultiList(Vec<Node>),
    MultiHash(Vec<(Name, Node)>),
    Function(Function, Vec<Node>),
    Expref(Box<Node>),
    /// A call of a function no registry has: the parser's, which compiling
    /// turns into [`CompileError::UnknownFunction`]; never evaluated.
    Unresolved(Name, Vec<Node>),
}

impl Node {
    /// `left.right`: fields join into one [`Node::Path`].
    fn subexpr(left: Node, right: Node) -> Node {
        match (left, right) {
            (Node::Field(a), Node::Field(b)) => {
                // Room for the usual `request.object.spec.x` without growing.
                let mut names = Vec::with_capacity(4);
                names.extend([a, b]);
                Node::Path(names)
            }
            (Node::Path(mut names), Node::Field(b)) => {
                names.push(b);
                Node::Path(names)
            }
            (left, right) => Node::Subexpr(Box::new((left, right))),
        }
    }
}

/// A comparison operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparator {
    Equal,
    NotEqual,
    LessThan,
    LessThanEqual,
    GreaterThan,
    GreaterThanEqual,
}

/// A resolved function: Kyverno's registry wins over the standard one, as
/// Kyverno registers its functions over go-jmespath's.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Function {
    Kyverno(&'static Signature),
    Standard(&'static Signature),
}

impl Function {
    fn signature(self) -> &'static Signature {
        match self {
            Function::Kyverno(s) | Function::Standard(s) => s,
        }
    }
}

impl Query {
    /// Parses and resolves `text`.
    pub fn compile(text: &str) -> Result<Self, CompileError> {
        let key = fnv(text);
        let cached = COMPILED.with(|c| {
            c.borrow()
                .get(&key)
                .map(|(t, found)| (**t == *text).then(|| found.clone()))
        });
        if let Some(Some(found)) = cached {
            return found;
        }
        let text: Rc<str> = Rc::from(text);
        let compiled = parse_shared(&text).map(|node| Self {
            text: text.clone(),
            node: Rc::new(node),
        });
        // A text whose hash another holds is not kept.
        if cached.is_none() && text.len() <= CACHE_TEXT {
            COMPILED.with(|c| {
                let mut cache = c.borrow_mut();
                if cache.len() < CACHE_ENTRIES {
                    cache.insert(key, (text, compiled.clone()));
                }
            });
        }
        compiled
    }

    pub fn text(&self) -> &str {
        &self.text
    }

    /// Searches `data`; borrows from it when the result is part of it.
    pub fn search<'a>(&'a self, data: &'a Value) -> Result<Cow<'a, Value>, SearchError> {
        self.search_in(data, &[])
    }

    /// [`Query::search`] with `scope`'s entries seen as fields of `data`
    /// (a later entry hides an earlier one of its name, and both hide
    /// `data`'s own).
    pub fn search_in<'a>(
        &'a self,
        data: &'a Value,
        scope: Scope<'_, 'a>,
    ) -> Result<Cow<'a, Value>, SearchError> {
        BUILT.with(|b| b.set(0));
        eval_scoped(&self.node, data, scope)
    }

    /// [`Query::search_in`] for a result read as a list: its elements,
    /// borrowed from `data` or the scope where they are part of them (a
    /// flatten or multi-select builds a new list, not new elements). A
    /// value that is not a list is the one element.
    pub fn search_list_in<'a>(
        &'a self,
        data: &'a Value,
        scope: Scope<'_, 'a>,
    ) -> Result<Vec<Cow<'a, Value>>, SearchError> {
        BUILT.with(|b| b.set(0));
        // `list[]` and `list[].field` are projections: their results are
        // the projected elements, borrowed when they are in the input.
        if let Node::Projection(pair) = &*self.node {
            let (lhs, rhs) = &**pair;
            return Ok(
                project(lhs, rhs, data, scope)?.unwrap_or_else(|| vec![Cow::Borrowed(&NULL)])
            );
        }
        let builds_list = match &*self.node {
            Node::MultiList(_) | Node::Flatten(_) => true,
            Node::Subexpr(pair) => matches!(pair.1, Node::MultiList(_) | Node::Flatten(_)),
            _ => false,
        };
        if builds_list {
            let items = eval_items(&self.node, data, scope)?;
            return Ok(items.unwrap_or_else(|| vec![Cow::Borrowed(&NULL)]));
        }
        Ok(match eval_scoped(&self.node, data, scope)? {
            Cow::Borrowed(Value::Array(items)) => items.iter().map(Cow::Borrowed).collect(),
            Cow::Owned(Value::Array(items)) => items.into_iter().map(Cow::Owned).collect(),
            other => vec![other],
        })
    }

    /// Whether a search may read top-level field `name`: it names it
    /// there, or reads the whole document (`@` at the top, or `*`).
    pub fn may_read(&self, name: &str) -> bool {
        reads_field(&self.node, name)
    }
}

/// Parses `text`, whose names the tree shares.
fn parse_shared(text: &Rc<str>) -> Result<Node, CompileError> {
    // Nesting never exceeds the length: short texts skip the count.
    if text.len() > MAX_LEN || (text.len() > MAX_DEPTH && nesting(text) > MAX_DEPTH) {
        return Err(CompileError::TooDeep);
    }
    parser::parse(text)
}

/// How deeply brackets and negations nest, outside string literals: what
/// drives the parser's recursion.
fn nesting(text: &str) -> usize {
    let (mut depth, mut max) = (0usize, 0usize);
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' | '`' => quote = Some(c),
            '(' | '[' | '{' | '!' => {
                depth += 1;
                max = max.max(depth);
            }
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

pub(crate) fn check_arity(signature: &Signature, actual: usize) -> Result<(), CompileError> {
    let declared = signature.args.len();
    let ok = if signature.variadic {
        actual >= declared
    } else {
        actual == declared
    };
    if ok {
        return Ok(());
    }
    Err(CompileError::Arity {
        name: signature.name.to_string(),
        expected: if signature.variadic {
            format!("at least {declared}")
        } else {
            declared.to_string()
        },
        actual,
    })
}

/// Turns a missing key into `null`, as most of go-jmespath's nodes do.
fn absorb<'a>(result: Result<Cow<'a, Value>, SearchError>) -> Result<Cow<'a, Value>, SearchError> {
    match result {
        Err(SearchError::NotFound(_)) => Ok(Cow::Owned(Value::Null)),
        other => other,
    }
}

const NULL: Value = Value::Null;

/// A parser error in words: what was expected, what was found, and where
/// (`syntax error at column 10: expected a value, found the end of the
/// expression (after `request.[`)`).
pub(crate) fn syntax_error(text: &str, offset: usize, reason: &str) -> String {
    // Lines and columns as the `jmespath` crate counts them: characters,
    // up to the offset taken as a character count.
    let (mut line, mut column) = (0usize, 0usize);
    for c in text.chars().take(offset) {
        if c == '\n' {
            line += 1;
            column = 0;
        } else {
            column += 1;
        }
    }
    let (expected, found) = reason.split_once(" -- found ").unwrap_or((reason, ""));
    let expected = match expected {
        "Unexpected nud token" => "a value".to_string(),
        other => backticked(other.strip_prefix("Expected ").unwrap_or(other)),
    };
    let found = token_words(found);
    // The parser counts columns from 0 on the error's line.
    let before: String = text
        .lines()
        .nth(line)
        .unwrap_or("")
        .chars()
        .take(column)
        .collect();
    let column = column + 1;
    let place = if before.trim().is_empty() {
        "at the start".to_string()
    } else {
        format!("after `{before}`")
    };
    format!("syntax error at column {column}: expected {expected}, found {found} ({place})")
}

/// `'}' or ','` → `` `}` or `,` ``.
fn backticked(text: &str) -> String {
    text.replace('\'', "`")
}

/// The parser's token (its `Debug` text) as a person would name it.
fn token_words(token: &str) -> String {
    let symbol = match token {
        "Eof" => return "the end of the expression".to_string(),
        "Dot" => ".",
        "Star" => "*",
        "Flatten" => "[]",
        "And" => "&&",
        "Or" => "||",
        "Pipe" => "|",
        "Filter" => "[?",
        "Lbracket" => "[",
        "Rbracket" => "]",
        "Comma" => ",",
        "Colon" => ":",
        "Not" => "!",
        "Ne" => "!=",
        "Eq" => "==",
        "Gt" => ">",
        "Gte" => ">=",
        "Lt" => "<",
        "Lte" => "<=",
        "At" => "@",
        "Ampersand" => "&",
        "Lparen" => "(",
        "Rparen" => ")",
        "Lbrace" => "{",
        "Rbrace" => "}",
        other => {
            let inner = |prefix: &str| {
                other
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.strip_suffix(')'))
                    .map(|v| v.trim_matches('"').to_string())
            };
            if let Some(name) = inner("Identifier(").or_else(|| inner("QuotedIdentifier(")) {
                return format!("the name `{name}`");
            }
            if let Some(number) = inner("Number(") {
                return format!("the number `{number}`");
            }
            if other.starts_with("Literal(") {
                return "a literal".to_string();
            }
            return format!("`{other}`");
        }
    };
    format!("`{symbol}`")
}

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

/// Whether `node`, evaluated on the top-level document, may read its field
/// `name`: what [`eval_scoped`] hands the document to unchanged.
fn reads_field(node: &Node, name: &str) -> bool {
    let here = |n: &Node| reads_field(n, name);
    match node {
        Node::Identity => true,
        Node::Field(field) => field == name,
        Node::Path(names) => names.first().is_some_and(|first| first == name),
        Node::Index(_) | Node::Slice { .. } | Node::Literal(_) | Node::Expref(_) => false,
        Node::Subexpr(pair) | Node::Pipe(pair) | Node::Projection(pair) => here(&pair.0),
        Node::ObjectValues(inner) | Node::Flatten(inner) | Node::Not(inner) => here(inner),
        Node::Condition(pair) | Node::Comparison(_, pair) | Node::And(pair) | Node::Or(pair) => {
            here(&pair.0) || here(&pair.1)
        }
        Node::MultiList(items) | Node::Function(_, items) | Node::Unresolved(_, items) => {
            items.iter().any(here)
        }
        Node::MultiHash(items) => items.iter().any(|(_, n)| here(n)),
    }
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

/// JMESPath truthiness: false, null, "", [] and {} are false.
pub fn truthy(value: &Value) -> bool {
    match value {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
        Value::Number(_) => true,
    }
}

/// Deep equality with numbers compared as float64, as Go's decoded JSON is.
pub fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

fn compare(comparator: &Comparator, left: &Value, right: &Value) -> Value {
    match comparator {
        Comparator::Equal => Value::Bool(equal(left, right)),
        Comparator::NotEqual => Value::Bool(!equal(left, right)),
        ordering => {
            let (Some(l), Some(r)) = (left.as_f64(), right.as_f64()) else {
                return Value::Null;
            };
            Value::Bool(match ordering {
                Comparator::LessThan => l < r,
                Comparator::LessThanEqual => l <= r,
                Comparator::GreaterThan => l > r,
                _ => l >= r,
            })
        }
    }
}

/// A function argument: a value, or an expression reference.
enum Arg<'a> {
    Value(Cow<'a, Value>),
    Expref(&'a Node),
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
            Node::Expref(inner) => Arg::Expref(inner),
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

#[cfg(test)]
mod tests;
