//! The compiled expression: nodes in one vector (argument lists and
//! comprehensions too, in `Aux` nodes), children referred to by index, and
//! names and string literals as spans of one text, so that a program is
//! two allocations (bytes literals add a third) and dropping it never
//! recurses.

use crate::func::Func;
use crate::value::Type;

pub(crate) type NodeId = u32;

/// A range of the program's `text` or `bytes`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Span {
    pub(crate) start: u32,
    pub(crate) end: u32,
}

impl Span {
    fn range(self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }
}

/// Words (node ids, flags) kept in the node vector: `len` of them in the
/// `Node::Aux` nodes from `first` on, three a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Words {
    pub(crate) first: NodeId,
    pub(crate) len: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    In,
}

impl BinOp {
    /// cel-go's name for the operator, as errors show it.
    pub(crate) fn name(self) -> &'static str {
        match self {
            BinOp::Add => "_+_",
            BinOp::Sub => "_-_",
            BinOp::Mul => "_*_",
            BinOp::Div => "_/_",
            BinOp::Rem => "_%_",
            BinOp::Eq => "_==_",
            BinOp::Ne => "_!=_",
            BinOp::Lt => "_<_",
            BinOp::Le => "_<=_",
            BinOp::Gt => "_>_",
            BinOp::Ge => "_>=_",
            BinOp::In => "@in",
        }
    }
}

/// The comprehension macros, one- and two-variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MacroKind {
    All,
    Exists,
    ExistsOne,
    /// `map` (with `filter` set for the three-argument form) and
    /// `transformList`.
    Map,
    Filter,
    /// `transformMap`: keys stay, values are transformed.
    TransformMap,
    /// `transformMapEntry`: each step yields a map whose entries are added.
    TransformMapEntry,
    /// `sortBy(e, key)`: the list ordered by each element's key.
    SortBy,
    /// `optional.optMap(x, e)`.
    OptMap,
    /// `optional.optFlatMap(x, e)`.
    OptFlatMap,
}

/// A comprehension, as `Node::Comprehension` stores it in words.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Comprehension {
    pub(crate) kind: MacroKind,
    pub(crate) range: NodeId,
    /// The element (one variable) or the index/key (two variables).
    pub(crate) var: Span,
    /// The value, for two-variable comprehensions.
    pub(crate) var2: Option<Span>,
    pub(crate) filter: Option<NodeId>,
    pub(crate) body: NodeId,
}

/// Marks an absent optional part of a comprehension in its words.
const NONE: u32 = u32::MAX;

const MACRO_KINDS: [MacroKind; 10] = [
    MacroKind::All,
    MacroKind::Exists,
    MacroKind::ExistsOne,
    MacroKind::Map,
    MacroKind::Filter,
    MacroKind::TransformMap,
    MacroKind::TransformMapEntry,
    MacroKind::SortBy,
    MacroKind::OptMap,
    MacroKind::OptFlatMap,
];

impl Comprehension {
    /// How many words a comprehension takes.
    pub(crate) const WORDS: usize = 8;

    pub(crate) fn encode(&self) -> [u32; Self::WORDS] {
        [
            // `MACRO_KINDS` lists the kinds in this order.
            self.kind as u32,
            self.range,
            self.var.start,
            self.var.end,
            self.var2.map_or(NONE, |v| v.start),
            self.var2.map_or(NONE, |v| v.end),
            self.filter.unwrap_or(NONE),
            self.body,
        ]
    }

    fn decode(words: &[u32]) -> Option<Self> {
        let [kind, range, start, end, start2, end2, filter, body] = *words else {
            return None;
        };
        Some(Self {
            kind: *MACRO_KINDS.get(kind as usize)?,
            range,
            var: Span { start, end },
            var2: (start2 != NONE).then_some(Span {
                start: start2,
                end: end2,
            }),
            filter: (filter != NONE).then_some(filter),
            body,
        })
    }
}

/// A node; names and string literals are spans of the program's text,
/// lists of children words in `Aux` nodes.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Span),
    Bytes(Span),
    Type(Type),
    Ident(Span),
    /// `variables.NAME`, read lazily from the activation.
    Variable(Span),
    Select {
        operand: NodeId,
        field: Span,
        optional: bool,
    },
    /// `has(operand.field)`.
    Has {
        operand: NodeId,
        field: Span,
    },
    Index {
        operand: NodeId,
        index: NodeId,
        optional: bool,
    },
    Not(NodeId),
    Neg(NodeId),
    Binary {
        op: BinOp,
        lhs: NodeId,
        rhs: NodeId,
    },
    And(NodeId, NodeId),
    Or(NodeId, NodeId),
    Cond {
        cond: NodeId,
        then: NodeId,
        otherwise: NodeId,
    },
    /// Elements, each a node and whether it is an optional entry (`?x`),
    /// two words each.
    List(Words),
    /// Entries `key, value, optional`, three words each.
    Map(Words),
    /// A function call; a member call's target is the first argument.
    Call {
        func: Func,
        args: Words,
    },
    /// The first of the `Aux` nodes that hold the comprehension.
    Comprehension(NodeId),
    /// Words of the nodes above; never evaluated.
    Aux([u32; 3]),
}

/// A parsed expression.
#[derive(Debug, Clone)]
pub(crate) struct Ast {
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: NodeId,
    /// The source text, followed by names and strings the parser decoded
    /// or made up.
    pub(crate) text: String,
    pub(crate) bytes: Vec<u8>,
    /// The length of the source text at the start of `text`.
    pub(crate) source_len: usize,
    /// The literal patterns of `matches`, `find` and `findAll` calls, for
    /// [`crate::Program::check_patterns`].
    pub(crate) patterns: Vec<LiteralPattern>,
}

/// A literal regex argument: the function, the pattern's text and where
/// the argument starts in the source.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LiteralPattern {
    pub(crate) func: Func,
    pub(crate) text: Span,
    pub(crate) at: u32,
}

/// Word `i` of `words`, stored in `nodes` (three to an `Aux` node).
#[inline]
pub(crate) fn word(nodes: &[Node], words: Words, i: usize) -> Option<u32> {
    if i >= words.len as usize {
        return None;
    }
    match nodes.get(words.first as usize + i / 3)? {
        Node::Aux(aux) => aux.get(i % 3).copied(),
        _ => None,
    }
}

impl Ast {
    #[inline]
    pub(crate) fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    /// A name's text, as bytes: cheaper than `str` to take.
    #[inline(always)]
    pub(crate) fn name(&self, span: Span) -> &[u8] {
        self.text.as_bytes().get(span.range()).unwrap_or(&[])
    }

    #[inline(always)]
    pub(crate) fn str(&self, span: Span) -> &str {
        let (start, end) = (span.start as usize, span.end as usize);
        match self.text.split_at_checked(end) {
            Some((head, _)) => head.split_at_checked(start).map_or("", |(_, s)| s),
            None => "",
        }
    }

    #[inline]
    pub(crate) fn bytes(&self, span: Span) -> &[u8] {
        self.bytes.get(span.range()).unwrap_or(&[])
    }

    /// Word `i` of `words`.
    #[inline]
    pub(crate) fn word(&self, words: Words, i: usize) -> Option<u32> {
        word(&self.nodes, words, i)
    }

    /// The comprehension whose words start at node `first`.
    pub(crate) fn comprehension(&self, first: NodeId) -> Option<Comprehension> {
        let first = first as usize;
        match self.nodes.get(first..first + 3)? {
            [Node::Aux([a, b, c]), Node::Aux([d, e, f]), Node::Aux([g, h, _])] => {
                Comprehension::decode(&[*a, *b, *c, *d, *e, *f, *g, *h])
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comprehensions_round_trip_through_words() {
        let var = Span { start: 1, end: 2 };
        for kind in MACRO_KINDS {
            for (var2, filter) in [(None, None), (Some(Span { start: 3, end: 5 }), Some(7))] {
                let c = Comprehension {
                    kind,
                    range: 4,
                    var,
                    var2,
                    filter,
                    body: 9,
                };
                let back = Comprehension::decode(&c.encode());
                assert!(back.is_some_and(|b| b.kind == kind
                    && b.range == 4
                    && b.var == var
                    && b.var2 == var2
                    && b.filter == filter
                    && b.body == 9));
            }
        }
    }
}
