//! The compiled expression: nodes in one vector, children referred to by
//! index, so that a program is a few allocations and dropping it never
//! recurses.

use crate::functions::Func;
use crate::value::Type;

pub(crate) type NodeId = u32;

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
    /// `optional.optMap(x, e)`.
    OptMap,
    /// `optional.optFlatMap(x, e)`.
    OptFlatMap,
}

#[derive(Debug, Clone)]
pub(crate) struct Comprehension {
    pub(crate) kind: MacroKind,
    pub(crate) range: NodeId,
    /// The element (one variable) or the index/key (two variables).
    pub(crate) var: Box<str>,
    /// The value, for two-variable comprehensions.
    pub(crate) var2: Option<Box<str>>,
    pub(crate) filter: Option<NodeId>,
    pub(crate) body: NodeId,
}

#[derive(Debug, Clone)]
pub(crate) enum Node {
    Null,
    Bool(bool),
    Int(i64),
    Uint(u64),
    Double(f64),
    String(Box<str>),
    Bytes(Box<[u8]>),
    Type(Type),
    Ident(Box<str>),
    /// `variables.NAME`, read lazily from the activation.
    Variable(Box<str>),
    Select {
        operand: NodeId,
        field: Box<str>,
        optional: bool,
    },
    /// `has(operand.field)`.
    Has {
        operand: NodeId,
        field: Box<str>,
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
    /// Elements, each with whether it is an optional entry (`?x`).
    List(Box<[(NodeId, bool)]>),
    /// Entries `(key, value, optional)`.
    Map(Box<[(NodeId, NodeId, bool)]>),
    /// A function call; a member call's target is the first argument.
    Call {
        func: Func,
        args: Box<[NodeId]>,
    },
    Comprehension(Box<Comprehension>),
}

/// A parsed expression; the root is the last node.
#[derive(Debug, Clone)]
pub(crate) struct Ast {
    pub(crate) nodes: Vec<Node>,
    pub(crate) root: NodeId,
}

impl Ast {
    pub(crate) fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id as usize)
    }
}
