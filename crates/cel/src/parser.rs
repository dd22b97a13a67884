//! A hand-written precedence-climbing parser that builds the compact AST,
//! expands macros and resolves function names as it goes, so that a
//! program needs no further pass before it runs.

use crate::ast::{Ast, BinOp, Comprehension, MacroKind, Node, NodeId};
use crate::error::SyntaxError;
use crate::functions::{self, ResolveError};
use crate::lexer::{Lexer, Tok};
use crate::value::Type;

/// Deepest nesting of the expression tree (and of parentheses, lists and
/// calls), as cel-go's parser limits it.
pub(crate) const MAX_DEPTH: usize = 250;

type PResult<T> = Result<T, Box<SyntaxError>>;

/// cel-go's reserved words: not usable as identifiers.
const RESERVED: &[&str] = &[
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

pub(crate) fn parse(src: &str) -> Result<Ast, SyntaxError> {
    parse_boxed(src).map_err(|e| *e)
}

fn parse_boxed(src: &str) -> PResult<Ast> {
    let mut lexer = Lexer::new(src);
    let (tok, at) = lexer.next_token()?;
    let mut p = Parser {
        src,
        lexer,
        tok,
        at,
        // About one node per four bytes of text, to avoid regrowing.
        nodes: Vec::with_capacity(src.len() / 4 + 4),
        depths: Vec::with_capacity(src.len() / 4 + 4),
        recursion: 0,
    };
    let root = p.expr()?;
    if p.tok != Tok::Eof {
        return Err(p.expected("an operator or the end of the expression"));
    }
    Ok(Ast {
        nodes: p.nodes,
        root,
    })
}

struct Parser<'s> {
    src: &'s str,
    lexer: Lexer<'s>,
    tok: Tok<'s>,
    /// Where the current token starts.
    at: usize,
    nodes: Vec<Node>,
    /// Height of each node's subtree, to bound evaluation recursion.
    depths: Vec<u16>,
    recursion: usize,
}

impl<'s> Parser<'s> {
    fn advance(&mut self) -> PResult<()> {
        let (tok, at) = self.lexer.next_token()?;
        self.tok = tok;
        self.at = at;
        Ok(())
    }

    /// Takes the current token and moves past it.
    fn take(&mut self) -> PResult<Tok<'s>> {
        let tok = std::mem::replace(&mut self.tok, Tok::Eof);
        self.advance()?;
        Ok(tok)
    }

    #[cold]
    #[inline(never)]
    fn expected(&self, what: &str) -> Box<SyntaxError> {
        Box::new(SyntaxError::mismatched(
            self.src,
            self.at,
            &self.tok.describe(),
            what,
        ))
    }

    fn expect(&mut self, tok: Tok<'_>, what: &str) -> PResult<()> {
        if self.tok == tok {
            self.advance()
        } else {
            Err(self.expected(what))
        }
    }

    #[cold]
    #[inline(never)]
    fn check_error(&self, at: usize, message: String) -> Box<SyntaxError> {
        Box::new(SyntaxError::check(self.src, at, message))
    }

    #[cold]
    #[inline(never)]
    fn too_deep(&self, at: usize) -> Box<SyntaxError> {
        Box::new(SyntaxError::syntax(
            self.src,
            at,
            "expression nests too deeply",
        ))
    }

    fn node(&self, id: NodeId) -> Option<&Node> {
        self.nodes.get(id as usize)
    }

    fn push(&mut self, node: Node, at: usize) -> PResult<NodeId> {
        let mut height = 0u16;
        let depth_of = |c: NodeId| self.depths.get(c as usize).copied().unwrap_or(0);
        for_each_child(&node, |c| height = height.max(depth_of(c)));
        let height = height.saturating_add(1);
        if usize::from(height) > MAX_DEPTH {
            return Err(self.too_deep(at));
        }
        let id = NodeId::try_from(self.nodes.len()).map_err(|_| self.too_deep(at))?;
        self.nodes.push(node);
        self.depths.push(height);
        Ok(id)
    }

    fn expr(&mut self) -> PResult<NodeId> {
        self.recursion += 1;
        if self.recursion > MAX_DEPTH {
            return Err(self.too_deep(self.at));
        }
        let result = self.conditional();
        self.recursion -= 1;
        result
    }

    fn conditional(&mut self) -> PResult<NodeId> {
        let cond = self.or()?;
        if self.tok != Tok::Question {
            return Ok(cond);
        }
        let at = self.at;
        self.advance()?;
        let then = self.or()?;
        self.expect(Tok::Colon, "`:`")?;
        let otherwise = self.expr()?;
        self.push(
            Node::Cond {
                cond,
                then,
                otherwise,
            },
            at,
        )
    }

    fn or(&mut self) -> PResult<NodeId> {
        let at = self.at;
        let first = self.and()?;
        if self.tok != Tok::OrOr {
            return Ok(first);
        }
        let mut terms = vec![first];
        while self.tok == Tok::OrOr {
            self.advance()?;
            terms.push(self.and()?);
        }
        self.balanced(&terms, at, Node::Or)
    }

    fn and(&mut self) -> PResult<NodeId> {
        let at = self.at;
        let first = self.binary(1)?;
        if self.tok != Tok::AndAnd {
            return Ok(first);
        }
        let mut terms = vec![first];
        while self.tok == Tok::AndAnd {
            self.advance()?;
            terms.push(self.binary(1)?);
        }
        self.balanced(&terms, at, Node::And)
    }

    /// Long `&&`/`||` chains become balanced trees, as in cel-go, so that
    /// they do not count against the depth limit; the result is the same.
    fn balanced(
        &mut self,
        terms: &[NodeId],
        at: usize,
        make: fn(NodeId, NodeId) -> Node,
    ) -> PResult<NodeId> {
        match terms {
            [] => Err(self.expected("an expression")),
            [one] => Ok(*one),
            _ => {
                let (left, right) = terms.split_at(terms.len() / 2);
                let l = self.balanced(left, at, make)?;
                let r = self.balanced(right, at, make)?;
                self.push(make(l, r), at)
            }
        }
    }

    /// Relations, `+ -` and `* / %` by precedence climbing: one frame per
    /// level of parentheses instead of one per precedence level.
    fn binary(&mut self, min: u8) -> PResult<NodeId> {
        let mut lhs = self.unary()?;
        loop {
            let (op, prec) = match self.tok {
                Tok::Lt => (BinOp::Lt, 1),
                Tok::Le => (BinOp::Le, 1),
                Tok::Gt => (BinOp::Gt, 1),
                Tok::Ge => (BinOp::Ge, 1),
                Tok::EqEq => (BinOp::Eq, 1),
                Tok::NotEq => (BinOp::Ne, 1),
                Tok::In => (BinOp::In, 1),
                Tok::Plus => (BinOp::Add, 2),
                Tok::Minus => (BinOp::Sub, 2),
                Tok::Star => (BinOp::Mul, 3),
                Tok::Slash => (BinOp::Div, 3),
                Tok::Percent => (BinOp::Rem, 3),
                _ => return Ok(lhs),
            };
            if prec < min {
                return Ok(lhs);
            }
            let at = self.at;
            self.advance()?;
            let rhs = self.binary(prec + 1)?;
            lhs = self.push(Node::Binary { op, lhs, rhs }, at)?;
        }
    }

    /// `!` and `-` repeated: as in cel-go, an even count cancels out, and a
    /// single `-` before a number literal makes a negative literal.
    fn unary(&mut self) -> PResult<NodeId> {
        let at = self.at;
        match self.tok {
            Tok::Bang => {
                let mut count = 0usize;
                while self.tok == Tok::Bang {
                    count += 1;
                    self.advance()?;
                }
                let operand = self.member()?;
                if count % 2 == 1 {
                    self.push(Node::Not(operand), at)
                } else {
                    Ok(operand)
                }
            }
            Tok::Minus => {
                let mut count = 0usize;
                while self.tok == Tok::Minus {
                    count += 1;
                    self.advance()?;
                }
                if count == 1 {
                    let literal = match self.tok {
                        Tok::Int(n) => {
                            let value = if n == 1u64 << 63 {
                                i64::MIN
                            } else {
                                i64::try_from(n)
                                    .map(|v| -v)
                                    .map_err(|_| self.literal_error(at, "invalid int literal"))?
                            };
                            Some(Node::Int(value))
                        }
                        Tok::Double(d) => Some(Node::Double(-d)),
                        _ => None,
                    };
                    if let Some(node) = literal {
                        self.advance()?;
                        let lit = self.push(node, at)?;
                        return self.member_suffix(lit);
                    }
                }
                let operand = self.member()?;
                if count % 2 == 1 {
                    self.push(Node::Neg(operand), at)
                } else {
                    Ok(operand)
                }
            }
            _ => self.member(),
        }
    }

    #[cold]
    #[inline(never)]
    fn literal_error(&self, at: usize, message: &str) -> Box<SyntaxError> {
        Box::new(SyntaxError::syntax(self.src, at, message))
    }

    fn member(&mut self) -> PResult<NodeId> {
        let primary = self.primary()?;
        self.member_suffix(primary)
    }

    fn member_suffix(&mut self, mut target: NodeId) -> PResult<NodeId> {
        loop {
            match self.tok {
                Tok::Dot => {
                    let at = self.at;
                    self.advance()?;
                    let optional = self.tok == Tok::Question;
                    if optional {
                        self.advance()?;
                    }
                    let Tok::Ident(name) = self.tok else {
                        return Err(self.expected("a field or function name after `.`"));
                    };
                    let name_at = self.at;
                    self.advance()?;
                    if self.tok == Tok::LParen && !optional {
                        let args = self.call_args()?;
                        target = self.call(Some(target), name, args, name_at)?;
                    } else {
                        target = self.select(target, name, optional, at)?;
                    }
                }
                Tok::LBracket => {
                    let at = self.at;
                    self.advance()?;
                    let optional = self.tok == Tok::Question;
                    if optional {
                        self.advance()?;
                    }
                    let index = self.expr()?;
                    self.expect(Tok::RBracket, "`]`")?;
                    target = self.push(
                        Node::Index {
                            operand: target,
                            index,
                            optional,
                        },
                        at,
                    )?;
                }
                _ => return Ok(target),
            }
        }
    }

    fn call_args(&mut self) -> PResult<Vec<NodeId>> {
        self.advance()?; // (
        let mut args = Vec::new();
        if self.tok == Tok::RParen {
            self.advance()?;
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            match self.tok {
                Tok::Comma => self.advance()?,
                Tok::RParen => {
                    self.advance()?;
                    return Ok(args);
                }
                _ => return Err(self.expected("`,` or `)`")),
            }
        }
    }

    fn primary(&mut self) -> PResult<NodeId> {
        match self.tok {
            Tok::Dot => {
                // A leading dot names the root scope: `.x` is `x`.
                self.advance()?;
                let Tok::Ident(_) = self.tok else {
                    return Err(self.expected("an identifier after `.`"));
                };
                self.ident()
            }
            Tok::Ident(_) => self.ident(),
            Tok::LParen => {
                self.advance()?;
                let e = self.expr()?;
                self.expect(Tok::RParen, "`)`")?;
                Ok(e)
            }
            Tok::LBracket => self.list(),
            Tok::LBrace => self.map(),
            _ => self.literal(),
        }
    }

    /// An identifier, or a global call.
    #[inline(never)]
    fn ident(&mut self) -> PResult<NodeId> {
        let at = self.at;
        let Tok::Ident(name) = self.tok else {
            return Err(self.expected("an identifier"));
        };
        self.advance()?;
        if self.tok == Tok::LParen {
            let args = self.call_args()?;
            return self.call(None, name, args, at);
        }
        if RESERVED.contains(&name) {
            return Err(Box::new(SyntaxError::syntax(
                self.src,
                at,
                format!("reserved identifier: {name}"),
            )));
        }
        let node = match Type::from_name(name) {
            Some(t) => Node::Type(t),
            None => Node::Ident(name.into()),
        };
        self.push(node, at)
    }

    #[inline(never)]
    fn literal(&mut self) -> PResult<NodeId> {
        let at = self.at;
        let node = match self.tok {
            Tok::Int(_)
            | Tok::Uint(_)
            | Tok::Double(_)
            | Tok::Str(_)
            | Tok::Bytes(_)
            | Tok::True
            | Tok::False
            | Tok::Null => match self.take()? {
                Tok::Int(n) => Node::Int(
                    i64::try_from(n).map_err(|_| self.literal_error(at, "invalid int literal"))?,
                ),
                Tok::Uint(n) => Node::Uint(n),
                Tok::Double(d) => Node::Double(d),
                Tok::Str(s) => Node::String(s.into_boxed_str()),
                Tok::Bytes(b) => Node::Bytes(b.into_boxed_slice()),
                Tok::True => Node::Bool(true),
                Tok::False => Node::Bool(false),
                _ => Node::Null,
            },
            _ => return Err(self.expected("an expression")),
        };
        self.push(node, at)
    }

    fn list(&mut self) -> PResult<NodeId> {
        let at = self.at;
        self.advance()?; // [
        let mut items = Vec::new();
        while self.tok != Tok::RBracket {
            let optional = self.tok == Tok::Question;
            if optional {
                self.advance()?;
            }
            items.push((self.expr()?, optional));
            match self.tok {
                Tok::Comma => self.advance()?,
                Tok::RBracket => {}
                _ => return Err(self.expected("`,` or `]`")),
            }
        }
        self.advance()?;
        self.push(Node::List(items.into_boxed_slice()), at)
    }

    fn map(&mut self) -> PResult<NodeId> {
        let at = self.at;
        self.advance()?; // {
        let mut entries = Vec::new();
        while self.tok != Tok::RBrace {
            let optional = self.tok == Tok::Question;
            if optional {
                self.advance()?;
            }
            let key = self.expr()?;
            self.expect(Tok::Colon, "`:`")?;
            let value = self.expr()?;
            entries.push((key, value, optional));
            match self.tok {
                Tok::Comma => self.advance()?,
                Tok::RBrace => {}
                _ => return Err(self.expected("`,` or `}`")),
            }
        }
        self.advance()?;
        self.push(Node::Map(entries.into_boxed_slice()), at)
    }

    #[inline(never)]
    fn select(
        &mut self,
        operand: NodeId,
        field: &str,
        optional: bool,
        at: usize,
    ) -> PResult<NodeId> {
        if !optional {
            if let Some(Node::Ident(root)) = self.node(operand) {
                if &**root == "variables" {
                    return self.push(Node::Variable(field.into()), at);
                }
            }
            // Qualified type names: `net.IP`, `google.protobuf.Timestamp`.
            if matches!(
                field,
                "Duration" | "Timestamp" | "Quantity" | "URL" | "IP" | "CIDR"
            ) {
                if let Some(prefix) = self.qualified_name(operand) {
                    if let Some(t) = Type::from_name(&format!("{prefix}.{field}")) {
                        return self.push(Node::Type(t), at);
                    }
                }
            }
        }
        self.push(
            Node::Select {
                operand,
                field: field.into(),
                optional,
            },
            at,
        )
    }

    /// `a.b.c` for a chain of identifiers and selections.
    #[inline(never)]
    fn qualified_name(&self, id: NodeId) -> Option<String> {
        match self.node(id)? {
            Node::Ident(name) => Some(name.to_string()),
            Node::Select {
                operand,
                field,
                optional: false,
            } => Some(format!("{}.{field}", self.qualified_name(*operand)?)),
            _ => None,
        }
    }

    fn ident_name(&self, id: NodeId, at: usize) -> PResult<Box<str>> {
        match self.node(id) {
            Some(Node::Ident(name)) => Ok(name.clone()),
            Some(Node::Type(t)) if !t.name().contains('.') => Ok(t.name().into()),
            _ => Err(self.check_error(at, "argument must be a simple name".into())),
        }
    }

    #[inline(never)]
    fn call(
        &mut self,
        target: Option<NodeId>,
        name: &str,
        args: Vec<NodeId>,
        at: usize,
    ) -> PResult<NodeId> {
        let Some(target) = target else {
            if name == "has" {
                return self.has(&args, at);
            }
            let func = self.resolve(name, false, args.len(), at)?;
            return self.push(
                Node::Call {
                    func,
                    args: args.into_boxed_slice(),
                },
                at,
            );
        };
        if let Some(Node::Ident(ns)) = self.node(target) {
            let qualified = format!("{ns}.{name}");
            if functions::is_namespaced(&qualified) {
                let func = self.resolve(&qualified, false, args.len(), at)?;
                return self.push(
                    Node::Call {
                        func,
                        args: args.into_boxed_slice(),
                    },
                    at,
                );
            }
        }
        if let Some(node) = self.comprehension(target, name, &args, at)? {
            return self.push(node, at);
        }
        let func = self.resolve(name, true, args.len(), at)?;
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(target);
        all.extend(args);
        self.push(
            Node::Call {
                func,
                args: all.into_boxed_slice(),
            },
            at,
        )
    }

    #[inline(never)]
    fn resolve(
        &self,
        name: &str,
        member: bool,
        argc: usize,
        at: usize,
    ) -> PResult<functions::Func> {
        functions::resolve(name, member, argc).map_err(|e| match e {
            ResolveError::Unknown => self.check_error(at, format!("unknown function `{name}`")),
            ResolveError::Arity(takes) => {
                self.check_error(at, format!("function `{name}` takes {takes}, not {argc}"))
            }
        })
    }

    #[inline(never)]
    fn has(&mut self, args: &[NodeId], at: usize) -> PResult<NodeId> {
        let invalid = || self.check_error(at, "invalid argument to has() macro".into());
        let [arg] = args else {
            return Err(invalid());
        };
        match self.node(*arg) {
            Some(Node::Select {
                operand,
                field,
                optional: false,
            }) => {
                let node = Node::Has {
                    operand: *operand,
                    field: field.clone(),
                };
                self.push(node, at)
            }
            Some(Node::Variable(name)) => {
                let field = name.clone();
                let operand = self.push(Node::Ident("variables".into()), at)?;
                self.push(Node::Has { operand, field }, at)
            }
            _ => Err(invalid()),
        }
    }

    /// The macro `name` applied to `target`, if it is one.
    #[inline(never)]
    fn comprehension(
        &self,
        range: NodeId,
        name: &str,
        args: &[NodeId],
        at: usize,
    ) -> PResult<Option<Node>> {
        use MacroKind as K;
        // (kind, two variables, has a filter)
        let (kind, two, filter) = match (name, args.len()) {
            ("all", 2) => (K::All, false, false),
            ("all", 3) => (K::All, true, false),
            ("exists", 2) => (K::Exists, false, false),
            ("exists", 3) => (K::Exists, true, false),
            ("exists_one", 2) => (K::ExistsOne, false, false),
            ("exists_one" | "existsOne", 3) => (K::ExistsOne, true, false),
            ("map", 2) => (K::Map, false, false),
            ("map", 3) => (K::Map, false, true),
            ("filter", 2) => (K::Filter, false, false),
            ("transformList", 3) => (K::Map, true, false),
            ("transformList", 4) => (K::Map, true, true),
            ("transformMap", 3) => (K::TransformMap, true, false),
            ("transformMap", 4) => (K::TransformMap, true, true),
            ("optMap", 2) => (K::OptMap, false, false),
            ("optFlatMap", 2) => (K::OptFlatMap, false, false),
            _ => return Ok(None),
        };
        let mut rest = args.iter().copied();
        let mut next = || {
            rest.next()
                .ok_or_else(|| self.check_error(at, "missing macro argument".into()))
        };
        let var = self.ident_name(next()?, at)?;
        let var2 = if two {
            let v = self.ident_name(next()?, at)?;
            if v == var {
                return Err(self.check_error(at, format!("duplicate variable name: {v}")));
            }
            Some(v)
        } else {
            None
        };
        let filter = if filter { Some(next()?) } else { None };
        let body = next()?;
        Ok(Some(Node::Comprehension(Box::new(Comprehension {
            kind,
            range,
            var,
            var2,
            filter,
            body,
        }))))
    }
}

/// Calls `f` with each child of `node`.
fn for_each_child(node: &Node, mut f: impl FnMut(NodeId)) {
    match node {
        Node::Null
        | Node::Bool(_)
        | Node::Int(_)
        | Node::Uint(_)
        | Node::Double(_)
        | Node::String(_)
        | Node::Bytes(_)
        | Node::Type(_)
        | Node::Ident(_)
        | Node::Variable(_) => {}
        Node::Select { operand, .. } | Node::Has { operand, .. } => f(*operand),
        Node::Index { operand, index, .. } => {
            f(*operand);
            f(*index);
        }
        Node::Not(x) | Node::Neg(x) => f(*x),
        Node::Binary { lhs, rhs, .. } | Node::And(lhs, rhs) | Node::Or(lhs, rhs) => {
            f(*lhs);
            f(*rhs);
        }
        Node::Cond {
            cond,
            then,
            otherwise,
        } => {
            f(*cond);
            f(*then);
            f(*otherwise);
        }
        Node::List(items) => items.iter().for_each(|(id, _)| f(*id)),
        Node::Map(entries) => entries.iter().for_each(|(k, v, _)| {
            f(*k);
            f(*v);
        }),
        Node::Call { args, .. } => args.iter().for_each(|a| f(*a)),
        Node::Comprehension(c) => {
            f(c.range);
            if let Some(filter) = c.filter {
                f(filter);
            }
            f(c.body);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A compact rendering of the tree, to pin down precedence.
    fn show(ast: &Ast, id: NodeId) -> String {
        let s = |id: NodeId| show(ast, id);
        match ast.node(id) {
            Some(Node::Int(i)) => i.to_string(),
            Some(Node::Uint(u)) => format!("{u}u"),
            Some(Node::Double(d)) => format!("{d:?}"),
            Some(Node::String(st)) => format!("{st:?}"),
            Some(Node::Bytes(b)) => format!("b{b:?}"),
            Some(Node::Bool(b)) => b.to_string(),
            Some(Node::Null) => "null".into(),
            Some(Node::Type(t)) => format!("type:{}", t.name()),
            Some(Node::Ident(n)) => n.to_string(),
            Some(Node::Variable(n)) => format!("var:{n}"),
            Some(Node::Select {
                operand,
                field,
                optional,
            }) => format!(
                "{}.{}{field}",
                s(*operand),
                if *optional { "?" } else { "" }
            ),
            Some(Node::Has { operand, field }) => format!("has({}.{field})", s(*operand)),
            Some(Node::Index {
                operand,
                index,
                optional,
            }) => format!(
                "{}[{}{}]",
                s(*operand),
                if *optional { "?" } else { "" },
                s(*index)
            ),
            Some(Node::Not(x)) => format!("!{}", s(*x)),
            Some(Node::Neg(x)) => format!("-{}", s(*x)),
            Some(Node::Binary { op, lhs, rhs }) => {
                format!("({} {} {})", s(*lhs), op.name(), s(*rhs))
            }
            Some(Node::And(l, r)) => format!("({} && {})", s(*l), s(*r)),
            Some(Node::Or(l, r)) => format!("({} || {})", s(*l), s(*r)),
            Some(Node::Cond {
                cond,
                then,
                otherwise,
            }) => format!("({} ? {} : {})", s(*cond), s(*then), s(*otherwise)),
            Some(Node::List(items)) => format!(
                "[{}]",
                items
                    .iter()
                    .map(|(i, o)| format!("{}{}", if *o { "?" } else { "" }, s(*i)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(Node::Map(entries)) => format!(
                "{{{}}}",
                entries
                    .iter()
                    .map(|(k, v, o)| format!("{}{}: {}", if *o { "?" } else { "" }, s(*k), s(*v)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(Node::Call { func, args }) => format!(
                "{}({})",
                func.name(),
                args.iter().map(|a| s(*a)).collect::<Vec<_>>().join(", ")
            ),
            Some(Node::Comprehension(c)) => format!(
                "{:?}({}, {}{}, {}{})",
                c.kind,
                s(c.range),
                c.var,
                c.var2
                    .as_ref()
                    .map(|v| format!(", {v}"))
                    .unwrap_or_default(),
                c.filter.map(|f| format!("{} ? ", s(f))).unwrap_or_default(),
                s(c.body)
            ),
            None => "?".into(),
        }
    }

    fn parsed(src: &str) -> String {
        match parse(src) {
            Ok(ast) => show(&ast, ast.root),
            Err(e) => format!("error: {}", e.one_line()),
        }
    }

    #[test]
    fn precedence_and_associativity() {
        let cases = [
            ("mul_binds_tighter", "1 + 2 * 3", "(1 _+_ (2 _*_ 3))"),
            ("left_assoc", "1 - 2 - 3", "((1 _-_ 2) _-_ 3)"),
            ("relation_below_add", "a + 1 < b", "((a _+_ 1) _<_ b)"),
            ("and_below_relation", "a < b && c", "((a _<_ b) && c)"),
            ("or_below_and", "a || b && c", "(a || (b && c))"),
            ("ternary_lowest", "a || b ? c : d", "((a || b) ? c : d)"),
            (
                "ternary_right_assoc",
                "a ? b : c ? d : e",
                "(a ? b : (c ? d : e))",
            ),
            ("in_is_relation", "'a' in m && x", "((\"a\" @in m) && x)"),
            ("unary_binds_tightest", "-a.b * !c", "(-a.b _*_ !c)"),
            ("double_negation_cancels", "!!a", "a"),
            (
                "negative_literal",
                "-9223372036854775808",
                "-9223372036854775808",
            ),
            ("negative_double", "-1.5", "-1.5"),
            ("negative_uint_is_negation", "-1u", "-1u"),
            ("member_chain", "a.b[0].?c[?d]", "a.b[0].?c[?d]"),
            ("parens", "(1 + 2) * 3", "((1 _+_ 2) _*_ 3)"),
        ];
        for (name, src, want) in cases {
            assert_eq!(parsed(src), want, "{name}");
        }
    }

    #[test]
    fn literals_calls_and_macros() {
        let cases = [
            ("list_trailing_comma", "[1, ?x,]", "[1, ?x]"),
            (
                "map_optional_entry",
                "{'a': 1, ?'b': x}",
                "{\"a\": 1, ?\"b\": x}",
            ),
            ("global_call", "size(x)", "size(x)"),
            (
                "member_call_target_first",
                "s.startsWith('a')",
                "startsWith(s, \"a\")",
            ),
            ("namespaced_call", "optional.of(1)", "optional.of(1)"),
            ("has_macro", "has(a.b)", "has(a.b)"),
            ("has_variable", "has(variables.x)", "has(variables.x)"),
            ("all_macro", "l.all(x, x > 0)", "All(l, x, (x _>_ 0))"),
            (
                "map_filter",
                "l.map(x, x > 0, x)",
                "Map(l, x, (x _>_ 0) ? x)",
            ),
            ("two_var", "m.all(k, v, v)", "All(m, k, v, v)"),
            (
                "transform_map",
                "l.transformMap(i, v, v)",
                "TransformMap(l, i, v, v)",
            ),
            ("variables", "variables.foo.bar", "var:foo.bar"),
            ("type_idents", "type(x) == int", "(type(x) _==_ type:int)"),
            ("qualified_type", "net.IP", "type:net.IP"),
            ("leading_dot", ".a.b", "a.b"),
            ("uint_literal", "3u", "3u"),
        ];
        for (name, src, want) in cases {
            assert_eq!(parsed(src), want, "{name}");
        }
    }

    #[test]
    fn errors_say_what_was_expected_where() {
        let cases = [
            (
                "dangling_dot",
                "object.spec.(",
                "at line 1, column 13: expected a field or function name after `.`, found `(`",
            ),
            (
                "unclosed_paren",
                "(1 + 2",
                "at line 1, column 7: expected `)`, found the end of the expression",
            ),
            (
                "empty",
                "",
                "at line 1, column 1: expected an expression, found the end of the expression",
            ),
            (
                "two_values",
                "1 2",
                "at line 1, column 3: expected an operator or the end of the expression, found `2`",
            ),
            (
                "second_line",
                "a &&\n  )",
                "at line 2, column 3: expected an expression, found `)`",
            ),
            (
                "unknown_function",
                "frob(1)",
                "at line 1, column 1: unknown function `frob`",
            ),
            (
                "unknown_method",
                "a.frob()",
                "at line 1, column 3: unknown function `frob`",
            ),
            (
                "arity",
                "'a'.substring(1, 2, 3)",
                "at line 1, column 5: function `substring` takes 1 or 2 arguments, not 3",
            ),
            (
                "has_needs_select",
                "has(a)",
                "at line 1, column 1: invalid argument to has() macro",
            ),
            (
                "macro_var_must_be_ident",
                "l.all(x.y, true)",
                "at line 1, column 3: argument must be a simple name",
            ),
            (
                "reserved",
                "if",
                "at line 1, column 1: reserved identifier: if",
            ),
            (
                "int_overflow",
                "9223372036854775808",
                "at line 1, column 1: invalid int literal",
            ),
            (
                "bad_escape",
                "'\\q'",
                "at line 1, column 1: unable to unescape string",
            ),
            (
                "ternary_needs_colon",
                "a ? b",
                "at line 1, column 6: expected `:`, found the end of the expression",
            ),
        ];
        for (name, src, want) in cases {
            assert_eq!(parsed(src), format!("error: {want}"), "{name}");
        }
    }

    #[test]
    fn cel_go_rendering_of_a_syntax_error() {
        let err = parse("object.spec.(").err().map(|e| e.to_string());
        assert_eq!(
            err.as_deref(),
            Some(
                "ERROR: <input>:1:13: Syntax error: mismatched input '(' expecting a field or function name after `.`\n | object.spec.(\n | ............^"
            )
        );
    }

    #[test]
    fn nesting_is_bounded() {
        let deep = format!("{}1{}", "(".repeat(300), ")".repeat(300));
        assert!(parsed(&deep).contains("expression nests too deeply"));
        let chain = format!("a{}", ".b".repeat(300));
        assert!(parsed(&chain).contains("expression nests too deeply"));
        let sum = vec!["1"; 300].join(" + ");
        assert!(parsed(&sum).contains("expression nests too deeply"));
        // Long `&&` chains are balanced, so they stay shallow.
        let conj = vec!["true"; 2000].join(" && ");
        assert!(!parsed(&conj).starts_with("error"));
        let ok = format!("{}1{}", "(".repeat(100), ")".repeat(100));
        assert_eq!(parsed(&ok), "1");
    }
}
