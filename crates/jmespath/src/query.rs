//! A compiled query, and the per-thread cache of the queries compiled
//! so far.

use std::borrow::Cow;
use std::collections::HashMap;
use std::rc::Rc;

use serde_json::Value;

use crate::ast::{self, Node};
use crate::error::{CompileError, SearchError, MAX_DEPTH, MAX_LEN};
use crate::eval::{self, Scope};
use crate::parser;

/// A compiled expression. Cloning shares it.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    text: Rc<str>,
    node: Rc<Node>,
}

/// Most compiled expressions kept for reuse by one thread, and the longest
/// text kept: the cache saves work on the short queries policies repeat.
const CACHE_ENTRIES: usize = 512;
pub(crate) const CACHE_TEXT: usize = 4096;

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
        eval::search(&self.node, data, scope)
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
        eval::search_list(&self.node, data, scope)
    }

    /// Whether a search may read top-level field `name`: it names it
    /// there, or reads the whole document (`@` at the top, or `*`).
    pub fn may_read(&self, name: &str) -> bool {
        ast::reads_field(&self.node, name)
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
