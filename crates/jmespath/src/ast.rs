//! The tree a query compiles to: names that share the query's text,
//! nodes, comparators and resolved functions.

use std::rc::Rc;

use serde_json::Value;

use crate::types::Signature;

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
    pub(crate) fn slice(text: &Rc<str>, range: std::ops::Range<usize>) -> Self {
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
pub(crate) enum Node {
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
    pub(crate) fn subexpr(left: Node, right: Node) -> Node {
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
pub(crate) enum Comparator {
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
pub(crate) enum Function {
    Kyverno(&'static Signature),
    Standard(&'static Signature),
}

impl Function {
    pub(crate) fn signature(self) -> &'static Signature {
        match self {
            Function::Kyverno(s) | Function::Standard(s) => s,
        }
    }
}

/// Whether `node`, evaluated on the top-level document, may read its field
/// `name`: what evaluation hands the document to unchanged.
pub(crate) fn reads_field(node: &Node, name: &str) -> bool {
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
