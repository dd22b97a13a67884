//! A hand-written precedence-climbing parser that builds the compact AST,
//! expands macros and resolves function names as it goes, so that a
//! program needs no further pass before it runs.
//!
//! One function climbs all the binary precedence levels, so that an
//! operand costs a few calls rather than one per level. Names and string
//! literals stay spans of the source text; argument lists are gathered on
//! a scratch stack in the parser and stored in the node vector; every
//! parsing function returns the height of the subtree it built, for the
//! depth limit. Compiling thus allocates twice per expression: the nodes
//! and the text.

use crate::ast::{Ast, BinOp, Comprehension, LiteralPattern, MacroKind, Node, NodeId, Span, Words};
use crate::error::SyntaxError;
use crate::func::{self, Func, ResolveError};
use crate::homogeneous::{self, Mismatch};
use crate::lexer::{Lexer, Tok};
use crate::value::Type;

/// Deepest nesting of the expression tree (and of parentheses, lists and
/// calls), as cel-go's parser limits it.
pub(crate) const MAX_DEPTH: usize = 250;

type PResult<T> = Result<T, Box<SyntaxError>>;

/// What a name on its own stands for, unless a variable.
enum Word {
    Plain,
    /// cel-go's reserved words: not usable as identifiers.
    Reserved,
    Type(Type),
}

fn classify(name: &str) -> Word {
    match name {
        "as" | "break" | "const" | "continue" | "else" | "for" | "function" | "if" | "import"
        | "let" | "loop" | "package" | "namespace" | "return" | "var" | "void" | "while" => {
            Word::Reserved
        }
        "null_type" => Word::Type(Type::Null),
        "bool" => Word::Type(Type::Bool),
        "int" => Word::Type(Type::Int),
        "uint" => Word::Type(Type::Uint),
        "double" => Word::Type(Type::Double),
        "string" => Word::Type(Type::String),
        "bytes" => Word::Type(Type::Bytes),
        "list" => Word::Type(Type::List),
        "map" => Word::Type(Type::Map),
        "type" => Word::Type(Type::Type),
        "optional_type" => Word::Type(Type::Optional),
        _ => Word::Plain,
    }
}

pub(crate) fn parse(src: &str) -> Result<Ast, SyntaxError> {
    parse_boxed(src).map_err(|e| *e)
}

fn parse_boxed(src: &str) -> PResult<Ast> {
    let mut p = Parser {
        src,
        lexer: Lexer::new(src),
        // Rarely more than one node per four bytes of text, so that the
        // vector seldom grows.
        nodes: Vec::with_capacity(src.len() / 4 + 8),
        extra: String::new(),
        patterns: Vec::new(),
        bytes: Vec::new(),
        scratch: Scratch::default(),
        recursion: 0,
        format_args: 0,
    };
    p.advance()?;
    let root = p.expr()?;
    if !matches!(p.lexer.tok, Tok::Eof) {
        return Err(p.expected("an operator or the end of the expression"));
    }
    let mut text = String::with_capacity(src.len() + p.extra.len());
    text.push_str(src);
    text.push_str(&p.extra);
    Ok(Ast {
        nodes: p.nodes,
        root: root.id(),
        text,
        bytes: p.bytes,
        source_len: src.len(),
        patterns: p.patterns,
    })
}

/// A subtree just parsed: its root (the low 32 bits), its height (the
/// next 16) and whether it is the identifier `variables` (bit 48), in one
/// word so that parsing functions return it in a register.
#[derive(Clone, Copy)]
struct Sub(u64);

const VARIABLES: u64 = 1 << 48;

impl Sub {
    fn new(id: NodeId, height: u16) -> Self {
        Self(u64::from(id) | u64::from(height) << 32)
    }

    /// This identifier, known to be `variables`.
    fn variables(self) -> Self {
        Self(self.0 | VARIABLES)
    }

    fn is_variables(self) -> bool {
        self.0 & VARIABLES != 0
    }

    fn id(self) -> NodeId {
        self.0 as u32
    }

    fn height(self) -> u16 {
        (self.0 >> 32) as u16
    }

    /// The height of a node over this one.
    fn up(self) -> u16 {
        self.height().saturating_add(1)
    }
}

/// The height of a node over `subs`.
fn over(subs: &[Sub]) -> u16 {
    subs.iter()
        .fold(0, |h, s| h.max(s.height()))
        .saturating_add(1)
}

struct Parser<'s> {
    src: &'s str,
    /// The lexer, and the current token in it.
    lexer: Lexer<'s>,
    nodes: Vec<Node>,
    /// Text the program needs beyond its source (decoded literals, made-up
    /// names); its spans start at `src.len()`.
    extra: String,
    bytes: Vec<u8>,
    patterns: Vec<LiteralPattern>,
    /// Call arguments, list elements, map entries and `&&`/`||` terms
    /// being gathered, innermost last.
    scratch: Scratch,
    recursion: usize,
    /// How many `format()` calls' arguments are being parsed: literals
    /// there may mix types (see [`homogeneous`]).
    format_args: u32,
}

/// A stack of words in the parser itself, until it outgrows it.
#[derive(Default)]
struct Scratch {
    inline: [u32; 32],
    len: usize,
    /// Every word, once there are too many for `inline`.
    heap: Option<Vec<u32>>,
}

impl Scratch {
    fn words(&self) -> &[u32] {
        match &self.heap {
            Some(heap) => heap,
            None => self.inline.get(..self.len).unwrap_or(&[]),
        }
    }

    fn len(&self) -> usize {
        match &self.heap {
            Some(heap) => heap.len(),
            None => self.len,
        }
    }

    fn push(&mut self, word: u32) {
        if let Some(heap) = &mut self.heap {
            heap.push(word);
        } else if let Some(slot) = self.inline.get_mut(self.len) {
            *slot = word;
            self.len += 1;
        } else {
            self.spill(word);
        }
    }

    #[cold]
    #[inline(never)]
    fn spill(&mut self, word: u32) {
        let mut heap = Vec::with_capacity(2 * self.inline.len());
        heap.extend_from_slice(self.words());
        heap.push(word);
        self.heap = Some(heap);
    }

    fn truncate(&mut self, len: usize) {
        match &mut self.heap {
            Some(heap) => heap.truncate(len),
            None => self.len = self.len.min(len),
        }
    }
}

/// Adds `Aux` nodes holding `words` to `nodes`, if their place fits in a
/// node id.
fn store(nodes: &mut Vec<Node>, words: Option<&[u32]>) -> Option<Words> {
    let words = words.unwrap_or(&[]);
    let stored = Words {
        first: u32::try_from(nodes.len()).ok()?,
        len: u32::try_from(words.len()).ok()?,
    };
    let mut rest = words;
    loop {
        let (aux, tail) = match *rest {
            [] => break,
            [a] => ([a, 0, 0], &[][..]),
            [a, b] => ([a, b, 0], &[][..]),
            [a, b, c, ref tail @ ..] => ([a, b, c], tail),
        };
        nodes.push(Node::Aux(aux));
        rest = tail;
    }
    Some(stored)
}

/// `[start, end)` as a span, if it fits.
fn span(start: usize, end: usize) -> Option<Span> {
    Some(Span {
        start: u32::try_from(start).ok()?,
        end: u32::try_from(end).ok()?,
    })
}

impl<'s> Parser<'s> {
    fn advance(&mut self) -> PResult<()> {
        self.lexer.advance()
    }

    #[cold]
    #[inline(never)]
    fn expected(&self, what: &str) -> Box<SyntaxError> {
        Box::new(SyntaxError::mismatched(
            self.src,
            self.lexer.at,
            &self.lexer.tok.describe(),
            what,
        ))
    }

    /// Moves past the current token if `here` (it is the one expected),
    /// else fails saying `what` was expected.
    fn expect(&mut self, here: bool, what: &str) -> PResult<()> {
        if here {
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

    /// The literal at `at` mixes types (see [`homogeneous`]).
    fn check_homogeneous(&self, mismatch: Option<Mismatch>, at: usize) -> PResult<()> {
        match mismatch {
            Some(mismatch) => Err(self.check_error(at, mismatch.to_string())),
            None => Ok(()),
        }
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

    /// The text of a span of the source or of `extra`.
    fn text(&self, span: Span) -> &str {
        let (start, end) = (span.start as usize, span.end as usize);
        match start.checked_sub(self.src.len()) {
            Some(from) => {
                let to = end.saturating_sub(self.src.len());
                self.extra.get(from..to).unwrap_or("")
            }
            None => self.src.get(start..end).unwrap_or(""),
        }
    }

    /// The span of `len` bytes of source at `at`.
    fn source_span(&self, at: usize, len: usize) -> PResult<Span> {
        span(at, at + len).ok_or_else(|| self.too_deep(at))
    }

    /// Adds `s` to the program's text.
    #[inline(never)]
    fn add_text(&mut self, s: &str, at: usize) -> PResult<Span> {
        let start = self.src.len() + self.extra.len();
        self.extra.push_str(s);
        span(start, start + s.len()).ok_or_else(|| self.too_deep(at))
    }

    /// Moves `scratch[base..]` to `Aux` nodes, and says where.
    fn spill(&mut self, base: usize, at: usize) -> PResult<Words> {
        let words = store(&mut self.nodes, self.scratch.words().get(base..));
        self.scratch.truncate(base);
        words.ok_or_else(|| self.too_deep(at))
    }

    /// Adds `Aux` nodes holding `words`.
    fn store(&mut self, words: &[u32], at: usize) -> PResult<Words> {
        store(&mut self.nodes, Some(words)).ok_or_else(|| self.too_deep(at))
    }

    /// Adds `node`, of `height`, at `at` in the source.
    fn push(&mut self, node: Node, height: u16, at: usize) -> PResult<Sub> {
        if usize::from(height) > MAX_DEPTH {
            return Err(self.too_deep(at));
        }
        let id = NodeId::try_from(self.nodes.len())
            .ok()
            .filter(|id| *id != NodeId::MAX)
            .ok_or_else(|| self.too_deep(at))?;
        self.nodes.push(node);
        Ok(Sub::new(id, height))
    }

    fn expr(&mut self) -> PResult<Sub> {
        self.recursion += 1;
        if self.recursion > MAX_DEPTH {
            return Err(self.too_deep(self.lexer.at));
        }
        let result = self.conditional();
        self.recursion -= 1;
        result
    }

    #[inline(always)]
    fn conditional(&mut self) -> PResult<Sub> {
        let cond = self.climb(1)?;
        if !matches!(self.lexer.tok, Tok::Question) {
            return Ok(cond);
        }
        let at = self.lexer.at;
        self.advance()?;
        let then = self.binary(1)?;
        self.expect(matches!(self.lexer.tok, Tok::Colon), "`:`")?;
        let otherwise = self.expr()?;
        let node = Node::Cond {
            cond: cond.id(),
            then: then.id(),
            otherwise: otherwise.id(),
        };
        self.push(node, over(&[cond, then, otherwise]), at)
    }

    /// All binary operators by precedence climbing: `||` (1), `&&` (2),
    /// relations (3), `+ -` (4) and `* / %` (5). One frame per operand and
    /// level of parentheses instead of one per precedence level.
    fn binary(&mut self, min: u8) -> PResult<Sub> {
        self.climb(min)
    }

    /// `binary`, inlined where an expression starts so that a whole
    /// expression costs a frame less.
    #[inline(always)]
    fn climb(&mut self, min: u8) -> PResult<Sub> {
        let at = self.lexer.at;
        let mut lhs = self.unary()?;
        loop {
            let (op, prec) = match self.lexer.tok {
                Tok::OrOr => (None, 1),
                Tok::AndAnd => (None, 2),
                Tok::Lt => (Some(BinOp::Lt), 3),
                Tok::Le => (Some(BinOp::Le), 3),
                Tok::Gt => (Some(BinOp::Gt), 3),
                Tok::Ge => (Some(BinOp::Ge), 3),
                Tok::EqEq => (Some(BinOp::Eq), 3),
                Tok::NotEq => (Some(BinOp::Ne), 3),
                Tok::In => (Some(BinOp::In), 3),
                Tok::Plus => (Some(BinOp::Add), 4),
                Tok::Minus => (Some(BinOp::Sub), 4),
                Tok::Star => (Some(BinOp::Mul), 5),
                Tok::Slash => (Some(BinOp::Div), 5),
                Tok::Percent => (Some(BinOp::Rem), 5),
                _ => return Ok(lhs),
            };
            if prec < min {
                return Ok(lhs);
            }
            let Some(op) = op else {
                lhs = self.logic(lhs, prec == 2, at)?;
                continue;
            };
            let op_at = self.lexer.at;
            self.advance()?;
            let rhs = self.binary(prec + 1)?;
            let node = Node::Binary {
                op,
                lhs: lhs.id(),
                rhs: rhs.id(),
            };
            lhs = self.push(node, over(&[lhs, rhs]), op_at)?;
        }
    }

    /// A chain of `&&` (`and`) or `||` starting with `first`, which starts
    /// at `at`.
    #[inline(never)]
    fn logic(&mut self, first: Sub, and: bool, at: usize) -> PResult<Sub> {
        let term = if and { 3 } else { 2 };
        let goes_on = |p: &Self| {
            matches!(
                (&p.lexer.tok, and),
                (Tok::AndAnd, true) | (Tok::OrOr, false)
            )
        };
        self.advance()?;
        let second = self.binary(term)?;
        if !goes_on(self) {
            // Two terms, the usual case: no need to gather them.
            return self.junction(first, second, at, and);
        }
        let base = self.scratch.len();
        for sub in [first, second] {
            self.scratch.push(sub.id());
            self.scratch.push(u32::from(sub.height()));
        }
        while goes_on(self) {
            self.advance()?;
            let next = self.binary(term)?;
            self.scratch.push(next.id());
            self.scratch.push(u32::from(next.height()));
        }
        let count = (self.scratch.len() - base) / 2;
        let result = self.balanced(base, 0, count, at, and);
        self.scratch.truncate(base);
        result
    }

    /// `l && r` (`and`) or `l || r`.
    fn junction(&mut self, l: Sub, r: Sub, at: usize, and: bool) -> PResult<Sub> {
        let node = if and {
            Node::And(l.id(), r.id())
        } else {
            Node::Or(l.id(), r.id())
        };
        self.push(node, over(&[l, r]), at)
    }

    /// Term `i` of the id and height pairs at `scratch[base..]`.
    fn term(&self, base: usize, i: usize) -> Option<Sub> {
        let at = base + 2 * i;
        match self.scratch.words().get(at..at + 2) {
            Some(&[id, height]) => Some(Sub::new(id, u16::try_from(height).ok()?)),
            _ => None,
        }
    }

    /// Long `&&`/`||` chains (terms `lo..hi` of the id and height pairs at
    /// `scratch[base..]`) become balanced trees, as in cel-go, so that they
    /// do not count against the depth limit; the result is the same.
    fn balanced(
        &mut self,
        base: usize,
        lo: usize,
        hi: usize,
        at: usize,
        and: bool,
    ) -> PResult<Sub> {
        let len = hi.saturating_sub(lo);
        let (l, r) = match len {
            1 => {
                return self
                    .term(base, lo)
                    .ok_or_else(|| self.expected("an expression"))
            }
            2 => match (self.term(base, lo), self.term(base, lo + 1)) {
                (Some(l), Some(r)) => (l, r),
                _ => return Err(self.expected("an expression")),
            },
            0 => return Err(self.expected("an expression")),
            _ => {
                let mid = lo + len / 2;
                let l = self.balanced(base, lo, mid, at, and)?;
                let r = self.balanced(base, mid, hi, at, and)?;
                (l, r)
            }
        };
        self.junction(l, r, at, and)
    }

    /// `!` and `-` repeated: as in cel-go, an even count cancels out, and a
    /// single `-` before a number literal makes a negative literal.
    fn unary(&mut self) -> PResult<Sub> {
        match self.lexer.tok {
            Tok::Bang => self.not(),
            Tok::Minus => self.negation(),
            _ => self.member(),
        }
    }

    #[inline(never)]
    fn not(&mut self) -> PResult<Sub> {
        let at = self.lexer.at;
        let mut count = 0usize;
        while matches!(self.lexer.tok, Tok::Bang) {
            count += 1;
            self.advance()?;
        }
        let operand = self.member()?;
        if count % 2 == 1 {
            self.push(Node::Not(operand.id()), operand.up(), at)
        } else {
            Ok(operand)
        }
    }

    #[inline(never)]
    fn negation(&mut self) -> PResult<Sub> {
        let at = self.lexer.at;
        let mut count = 0usize;
        while matches!(self.lexer.tok, Tok::Minus) {
            count += 1;
            self.advance()?;
        }
        if count == 1 {
            let literal = match self.lexer.tok {
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
                let lit = self.push(node, 1, at)?;
                return self.member_suffix(lit);
            }
        }
        let operand = self.member()?;
        if count % 2 == 1 {
            self.push(Node::Neg(operand.id()), operand.up(), at)
        } else {
            Ok(operand)
        }
    }

    #[cold]
    #[inline(never)]
    fn literal_error(&self, at: usize, message: &str) -> Box<SyntaxError> {
        Box::new(SyntaxError::syntax(self.src, at, message))
    }

    #[inline(always)]
    fn member(&mut self) -> PResult<Sub> {
        let primary = self.primary()?;
        if matches!(self.lexer.tok, Tok::Dot | Tok::LBracket) {
            self.member_suffix(primary)
        } else {
            Ok(primary)
        }
    }

    fn member_suffix(&mut self, mut target: Sub) -> PResult<Sub> {
        loop {
            match self.lexer.tok {
                Tok::Dot => {
                    let at = self.lexer.at;
                    let optional = match self.lexer.name_after_dot() {
                        Some(optional) => optional,
                        None => {
                            self.advance()?;
                            let optional = matches!(self.lexer.tok, Tok::Question);
                            if optional {
                                self.advance()?;
                            }
                            optional
                        }
                    };
                    let Tok::Ident(name) = self.lexer.tok else {
                        return Err(self.expected("a field or function name after `.`"));
                    };
                    let name_at = self.lexer.at;
                    self.lexer.advance_after_name()?;
                    if matches!(self.lexer.tok, Tok::LParen) && !optional {
                        target = self.member_call(target, name, name_at)?;
                    } else {
                        target = self.select(target, name, name_at, optional, at)?;
                    }
                }
                Tok::LBracket => target = self.index(target)?,
                _ => return Ok(target),
            }
        }
    }

    #[inline(never)]
    fn index(&mut self, operand: Sub) -> PResult<Sub> {
        let at = self.lexer.at;
        self.advance()?;
        let optional = matches!(self.lexer.tok, Tok::Question);
        if optional {
            self.advance()?;
        }
        let index = self.expr()?;
        self.expect(matches!(self.lexer.tok, Tok::RBracket), "`]`")?;
        let node = Node::Index {
            operand: operand.id(),
            index: index.id(),
            optional,
        };
        self.push(node, over(&[operand, index]), at)
    }

    /// Parses `(args…)` onto the scratch stack; returns how many there are,
    /// the greatest height among them and where the first one starts.
    fn call_args(&mut self) -> PResult<(usize, u16, usize)> {
        self.advance()?; // (
        let first_at = self.lexer.at;
        if matches!(self.lexer.tok, Tok::RParen) {
            self.advance()?;
            return Ok((0, 0, first_at));
        }
        let (mut count, mut height) = (0, 0);
        loop {
            let arg = self.expr()?;
            self.scratch.push(arg.id());
            count += 1;
            height = height.max(arg.height());
            match self.lexer.tok {
                Tok::Comma => self.advance()?,
                Tok::RParen => {
                    self.advance()?;
                    return Ok((count, height, first_at));
                }
                _ => return Err(self.expected("`,` or `)`")),
            }
        }
    }

    #[inline(always)]
    fn primary(&mut self) -> PResult<Sub> {
        match self.lexer.tok {
            Tok::Ident(name) => self.ident(name),
            Tok::Dot => {
                // A leading dot names the root scope: `.x` is `x`.
                self.advance()?;
                let Tok::Ident(name) = self.lexer.tok else {
                    return Err(self.expected("an identifier after `.`"));
                };
                self.ident(name)
            }
            Tok::LParen => {
                self.advance()?;
                let e = self.expr()?;
                self.expect(matches!(self.lexer.tok, Tok::RParen), "`)`")?;
                Ok(e)
            }
            Tok::LBracket => self.list(),
            Tok::LBrace => self.map(),
            _ => self.literal(),
        }
    }

    /// An identifier (the current token, `name`), or a global call.
    fn ident(&mut self, name: &'s str) -> PResult<Sub> {
        let at = self.lexer.at;
        self.lexer.advance_after_name()?;
        if matches!(self.lexer.tok, Tok::LParen) {
            return self.global_call(name, at);
        }
        match classify(name) {
            Word::Plain => {
                let node = Node::Ident(self.source_span(at, name.len())?);
                let sub = self.push(node, 1, at)?;
                Ok(if name == "variables" {
                    sub.variables()
                } else {
                    sub
                })
            }
            Word::Type(t) => self.push(Node::Type(t), 1, at),
            Word::Reserved => Err(Box::new(SyntaxError::syntax(
                self.src,
                at,
                format!("reserved identifier: {name}"),
            ))),
        }
    }

    #[inline(never)]
    fn literal(&mut self) -> PResult<Sub> {
        let at = self.lexer.at;
        let tok = self.lexer.tok;
        // Literal text first: the decoded buffers serve the next token too.
        let node = match tok {
            Tok::Str(s) => Node::String(self.string_span(s, at)?),
            Tok::Bytes(b) => {
                let start = self.bytes.len();
                let b = b.unwrap_or(&self.lexer.decoded_bytes);
                self.bytes.extend_from_slice(b);
                let span = span(start, self.bytes.len());
                Node::Bytes(span.ok_or_else(|| self.too_deep(at))?)
            }
            Tok::Uint(n) => Node::Uint(n),
            Tok::Double(d) => Node::Double(d),
            Tok::True => Node::Bool(true),
            Tok::False => Node::Bool(false),
            Tok::Null => Node::Null,
            Tok::Int(_) => Node::Null,
            _ => return Err(self.expected("an expression")),
        };
        self.advance()?;
        let node = match tok {
            Tok::Int(n) => Node::Int(
                i64::try_from(n).map_err(|_| self.literal_error(at, "invalid int literal"))?,
            ),
            _ => node,
        };
        self.push(node, 1, at)
    }

    /// The span of a string literal's text: in the source when it is a
    /// slice of it (`Some`), else added from the lexer's buffer.
    fn string_span(&mut self, s: Option<&'s str>, at: usize) -> PResult<Span> {
        if let Some(slice) = s {
            let offset = (slice.as_ptr() as usize).wrapping_sub(self.src.as_ptr() as usize);
            let part = offset
                .checked_add(slice.len())
                .and_then(|end| self.src.get(offset..end));
            if part.is_some_and(|part| std::ptr::eq(part, slice)) {
                return self.source_span(offset, slice.len());
            }
            return self.add_text(slice, at);
        }
        let start = self.src.len() + self.extra.len();
        self.extra.push_str(&self.lexer.decoded);
        span(start, self.src.len() + self.extra.len()).ok_or_else(|| self.too_deep(at))
    }

    #[inline(never)]
    fn list(&mut self) -> PResult<Sub> {
        let at = self.lexer.at;
        self.advance()?; // [
        let base = self.scratch.len();
        let mut height = 0;
        while !matches!(self.lexer.tok, Tok::RBracket) {
            let optional = matches!(self.lexer.tok, Tok::Question);
            if optional {
                self.advance()?;
            }
            let item = self.expr()?;
            self.scratch.push(item.id());
            self.scratch.push(u32::from(optional));
            height = height.max(item.height());
            match self.lexer.tok {
                Tok::Comma => self.advance()?,
                Tok::RBracket => {}
                _ => return Err(self.expected("`,` or `]`")),
            }
        }
        self.advance()?;
        let items = self.spill(base, at)?;
        if self.format_args == 0 {
            self.check_homogeneous(homogeneous::list_mismatch(&self.nodes, items), at)?;
        }
        self.push(Node::List(items), height.saturating_add(1), at)
    }

    #[inline(never)]
    fn map(&mut self) -> PResult<Sub> {
        let at = self.lexer.at;
        self.advance()?; // {
        let base = self.scratch.len();
        let mut height = 0;
        while !matches!(self.lexer.tok, Tok::RBrace) {
            let optional = matches!(self.lexer.tok, Tok::Question);
            if optional {
                self.advance()?;
            }
            let key = self.expr()?;
            self.expect(matches!(self.lexer.tok, Tok::Colon), "`:`")?;
            let value = self.expr()?;
            self.scratch.push(key.id());
            self.scratch.push(value.id());
            self.scratch.push(u32::from(optional));
            height = height.max(key.height()).max(value.height());
            match self.lexer.tok {
                Tok::Comma => self.advance()?,
                Tok::RBrace => {}
                _ => return Err(self.expected("`,` or `}`")),
            }
        }
        self.advance()?;
        let entries = self.spill(base, at)?;
        if self.format_args == 0 {
            self.check_homogeneous(homogeneous::map_mismatch(&self.nodes, entries), at)?;
        }
        self.push(Node::Map(entries), height.saturating_add(1), at)
    }

    /// `operand.name` (`name` at `name_at`), or `operand.?name`.
    fn select(
        &mut self,
        operand: Sub,
        name: &str,
        name_at: usize,
        optional: bool,
        at: usize,
    ) -> PResult<Sub> {
        let field = self.source_span(name_at, name.len())?;
        if !optional {
            if operand.is_variables() {
                return self.push(Node::Variable(field), 1, at);
            }
            // Qualified type names: `net.IP`, `google.protobuf.Timestamp`.
            let capital = name.as_bytes().first().is_some_and(u8::is_ascii_uppercase);
            if capital
                && matches!(
                    name,
                    "Duration"
                        | "Timestamp"
                        | "Quantity"
                        | "URL"
                        | "IP"
                        | "CIDR"
                        | "Semver"
                        | "NamedFormat"
                )
            {
                if let Some(t) = self.qualified_type(operand.id(), name) {
                    return self.push(Node::Type(t), 1, at);
                }
            }
        }
        let node = Node::Select {
            operand: operand.id(),
            field,
            optional,
        };
        self.push(node, operand.up(), at)
    }

    /// The type `prefix.name` names, where `prefix` is the qualified name
    /// `id` spells.
    #[cold]
    #[inline(never)]
    fn qualified_type(&self, id: NodeId, name: &str) -> Option<Type> {
        let prefix = self.qualified_name(id)?;
        Type::from_name(&format!("{prefix}.{name}"))
    }

    /// `a.b.c` for a chain of identifiers and selections.
    fn qualified_name(&self, id: NodeId) -> Option<String> {
        match self.node(id)? {
            Node::Ident(name) => Some(self.text(*name).to_string()),
            Node::Select {
                operand,
                field,
                optional: false,
            } => Some(format!(
                "{}.{}",
                self.qualified_name(*operand)?,
                self.text(*field)
            )),
            _ => None,
        }
    }

    /// A comprehension variable: a simple name.
    fn ident_name(&mut self, id: NodeId, at: usize) -> PResult<Span> {
        match self.node(id) {
            Some(Node::Ident(name)) => Ok(*name),
            Some(Node::Type(t)) if !t.name().contains('.') => {
                let name = t.name();
                self.add_text(name, at)
            }
            _ => Err(self.check_error(at, "argument must be a simple name".into())),
        }
    }

    /// A call to `func` with the arguments `scratch[base..]`.
    fn push_call(&mut self, func: Func, base: usize, height: u16, at: usize) -> PResult<Sub> {
        let args = self.spill(base, at)?;
        self.push(Node::Call { func, args }, height, at)
    }

    /// `name(args…)`: a global function or the `has` macro.
    #[inline(never)]
    fn global_call(&mut self, name: &str, at: usize) -> PResult<Sub> {
        let base = self.scratch.len();
        let (argc, height, first_at) = self.call_args()?;
        if name == "has" {
            let result = self.has(base, height, at);
            self.scratch.truncate(base);
            return result;
        }
        let func = self.resolve(name, false, argc, at)?;
        self.check_literal(func, base, first_at)?;
        self.push_call(func, base, height.saturating_add(1), at)
    }

    /// cel-go's literal validators, which Kubernetes' CEL environment runs
    /// when it compiles an expression (since 1.29): a literal first argument
    /// of `duration` or `timestamp` must be valid. Literal patterns (of
    /// `matches`, and of `find` and `findAll`, which Kubernetes compiles
    /// then too) are only noted: building a regex costs, and a request
    /// builds only those it uses (see [`crate::Program::check_patterns`]).
    /// `scratch[base]` is the first argument, which starts at `at`.
    fn check_literal(&mut self, func: Func, base: usize, at: usize) -> PResult<()> {
        let Some(&Node::String(span)) =
            self.scratch.words().get(base).and_then(|&id| self.node(id))
        else {
            return Ok(());
        };
        match func {
            Func::Duration | Func::Timestamp => {
                let value =
                    crate::value::Value::String(crate::value::Str::Borrowed(self.text(span)));
                if crate::library::time::call(func, &[value]).is_err() {
                    return Err(self.check_error(at, format!("invalid {} argument", func.name())));
                }
            }
            Func::Matches | Func::Find | Func::FindAll => self.patterns.push(LiteralPattern {
                func,
                text: span,
                at: u32::try_from(at).unwrap_or(u32::MAX),
            }),
            _ => {}
        }
        Ok(())
    }

    /// `target.name(args…)`: a namespaced global function, a macro or a
    /// member function.
    #[inline(never)]
    fn member_call(&mut self, target: Sub, name: &str, at: usize) -> PResult<Sub> {
        let base = self.scratch.len();
        self.scratch.push(target.id());
        let format = name == "format";
        self.format_args += u32::from(format);
        let args = self.call_args();
        self.format_args -= u32::from(format);
        let (argc, height, first_at) = args?;
        if let Some(Node::Ident(ns)) = self.node(target.id()) {
            if let Some(qualified) = func::namespaced(self.text(*ns), name) {
                let func = self.resolve(qualified, false, argc, at)?;
                let result = self.push_call(func, base + 1, height.saturating_add(1), at);
                self.scratch.truncate(base);
                return result;
            }
        }
        let height = height.max(target.height()).saturating_add(1);
        if let Some(kind) = macro_kind(name, argc) {
            let result = self.comprehension(target.id(), kind, base + 1, height, at);
            self.scratch.truncate(base);
            return result;
        }
        let func = self.resolve(name, true, argc, at)?;
        self.check_literal(func, base + 1, first_at)?;
        if func == Func::Format {
            self.check_format(base, at)?;
        }
        self.push_call(func, base, height, at)
    }

    /// cel-go's string format validator, which Kubernetes' CEL environment
    /// runs when it compiles an expression: a literal format string called
    /// with a list literal must have a clause for every argument and an
    /// argument of a fitting kind for every clause (see
    /// [`crate::library::check_format`]). `scratch[base]` is the target,
    /// `scratch[base + 1]` the argument.
    fn check_format(&self, base: usize, at: usize) -> PResult<()> {
        let words = self.scratch.words();
        let (Some(&target), Some(&arg)) = (words.get(base), words.get(base + 1)) else {
            return Ok(());
        };
        let (Some(&Node::String(span)), Some(&Node::List(items))) =
            (self.node(target), self.node(arg))
        else {
            return Ok(());
        };
        let Some(kinds) = homogeneous::element_kinds(&self.nodes, items) else {
            return Ok(());
        };
        crate::library::check_format(self.text(span), &kinds)
            .map_err(|message| self.check_error(at, message))
    }

    #[inline(never)]
    fn resolve(&self, name: &str, member: bool, argc: usize, at: usize) -> PResult<Func> {
        func::resolve(name, member, argc).map_err(|e| match e {
            ResolveError::Unknown => self.check_error(at, format!("unknown function `{name}`")),
            ResolveError::Arity(takes) => {
                self.check_error(at, format!("function `{name}` takes {takes}, not {argc}"))
            }
        })
    }

    /// `has(scratch[base..])`, whose argument is `height` high.
    #[inline(never)]
    fn has(&mut self, base: usize, height: u16, at: usize) -> PResult<Sub> {
        let invalid = |p: &Self| p.check_error(at, "invalid argument to has() macro".into());
        let [arg] = self.scratch.words().get(base..).unwrap_or(&[]) else {
            return Err(invalid(self));
        };
        match self.node(*arg) {
            Some(Node::Select {
                operand,
                field,
                optional: false,
            }) => {
                let node = Node::Has {
                    operand: *operand,
                    field: *field,
                };
                // As high as the selection it replaces.
                self.push(node, height, at)
            }
            Some(Node::Variable(name)) => {
                let field = *name;
                let root = self.add_text("variables", at)?;
                let operand = self.push(Node::Ident(root), 1, at)?;
                self.push(
                    Node::Has {
                        operand: operand.id(),
                        field,
                    },
                    2,
                    at,
                )
            }
            _ => Err(invalid(self)),
        }
    }

    /// `comprehension` for the `kind` macro over `range`, with the
    /// arguments `scratch[base..]`, `height` high.
    #[inline(never)]
    fn comprehension(
        &mut self,
        range: NodeId,
        (kind, two, filter): (MacroKind, bool, bool),
        base: usize,
        height: u16,
        at: usize,
    ) -> PResult<Sub> {
        let mut args = [0; 4];
        for (slot, arg) in args
            .iter_mut()
            .zip(self.scratch.words().get(base..).unwrap_or(&[]))
        {
            *slot = *arg;
        }
        let argc = self.scratch.len() - base;
        let mut rest = args.iter().copied().take(argc);
        let mut next = |p: &Self| {
            rest.next()
                .ok_or_else(|| p.check_error(at, "missing macro argument".into()))
        };
        let var = next(self)?;
        let var = self.ident_name(var, at)?;
        let var2 = if two {
            let v = next(self)?;
            let v = self.ident_name(v, at)?;
            if self.text(v) == self.text(var) {
                let shown = self.text(v).to_string();
                return Err(self.check_error(at, format!("duplicate variable name: {shown}")));
            }
            Some(v)
        } else {
            None
        };
        // cel-go's macros keep their fold's accumulator under this name.
        for v in std::iter::once(var).chain(var2) {
            if self.text(v) == "__result__" {
                return Err(self.check_error(
                    at,
                    "iteration variable overwrites accumulator variable".into(),
                ));
            }
        }
        let filter = if filter { Some(next(self)?) } else { None };
        let body = next(self)?;
        let words = Comprehension {
            kind,
            range,
            var,
            var2,
            filter,
            body,
        }
        .encode();
        let words = self.store(&words, at)?;
        self.push(Node::Comprehension(words.first), height, at)
    }
}

/// The comprehension macro `name` with `argc` arguments: its kind, whether
/// it has two variables and whether it has a filter.
fn macro_kind(name: &str, argc: usize) -> Option<(MacroKind, bool, bool)> {
    use MacroKind as K;
    Some(match (name, argc) {
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
        ("transformMapEntry", 3) => (K::TransformMapEntry, true, false),
        ("transformMapEntry", 4) => (K::TransformMapEntry, true, true),
        ("sortBy", 2) => (K::SortBy, false, false),
        ("optMap", 2) => (K::OptMap, false, false),
        ("optFlatMap", 2) => (K::OptFlatMap, false, false),
        _ => return None,
    })
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
            Some(Node::String(st)) => format!("{:?}", ast.str(*st)),
            Some(Node::Bytes(b)) => format!("b{:?}", ast.bytes(*b)),
            Some(Node::Bool(b)) => b.to_string(),
            Some(Node::Null) => "null".into(),
            Some(Node::Type(t)) => format!("type:{}", t.name()),
            Some(Node::Ident(n)) => ast.str(*n).to_string(),
            Some(Node::Variable(n)) => format!("var:{}", ast.str(*n)),
            Some(Node::Select {
                operand,
                field,
                optional,
            }) => format!(
                "{}.{}{}",
                s(*operand),
                if *optional { "?" } else { "" },
                ast.str(*field)
            ),
            Some(Node::Has { operand, field }) => {
                format!("has({}.{})", s(*operand), ast.str(*field))
            }
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
                words(ast, *items)
                    .chunks(2)
                    .map(|w| match w {
                        [i, o] => format!("{}{}", if *o == 1 { "?" } else { "" }, s(*i)),
                        _ => "?".into(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(Node::Map(entries)) => format!(
                "{{{}}}",
                words(ast, *entries)
                    .chunks(3)
                    .map(|w| match w {
                        [k, v, o] => {
                            format!("{}{}: {}", if *o == 1 { "?" } else { "" }, s(*k), s(*v))
                        }
                        _ => "?".into(),
                    })
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(Node::Call { func, args }) => format!(
                "{}({})",
                func.name(),
                words(ast, *args)
                    .iter()
                    .map(|a| s(*a))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Some(Node::Comprehension(at)) => {
                let Some(c) = ast.comprehension(*at) else {
                    return "?".into();
                };
                format!(
                    "{:?}({}, {}{}, {}{})",
                    c.kind,
                    s(c.range),
                    ast.str(c.var),
                    c.var2
                        .map(|v| format!(", {}", ast.str(v)))
                        .unwrap_or_default(),
                    c.filter.map(|f| format!("{} ? ", s(f))).unwrap_or_default(),
                    s(c.body)
                )
            }
            Some(Node::Aux(_)) | None => "?".into(),
        }
    }

    fn words(ast: &Ast, words: Words) -> Vec<u32> {
        (0..words.len as usize)
            .map(|i| ast.word(words, i).unwrap_or(u32::MAX))
            .collect()
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

    /// Literal patterns compile only when checked (`check_patterns`), not
    /// when the program is parsed.
    #[test]
    fn literal_patterns_are_checked_on_demand() {
        let cases = [
            (
                "literal_member_pattern_is_checked",
                "name.matches( '[')",
                "at line 1, column 15: invalid matches argument",
            ),
            (
                "literal_pattern_go_refuses_is_checked",
                "name.matches('a{2}{3}')",
                "at line 1, column 14: invalid matches argument",
            ),
            (
                "global_matches_checks_its_first_argument_as_cel_go_does",
                "matches('(', name)",
                "at line 1, column 9: invalid matches argument",
            ),
            (
                "literal_find_pattern_is_checked",
                "name.findAll('a(', 2) == []",
                "at line 1, column 14: invalid findAll argument",
            ),
            (
                "valid_patterns_pass",
                "name.matches('^a.b$') && name.find('[0-9]+') != ''",
                "",
            ),
            (
                "pattern_made_at_run_time_is_not_checked",
                "name.matches('(' + '')",
                "",
            ),
        ];
        for (name, src, want) in cases {
            let program =
                crate::compile(src).unwrap_or_else(|e| panic!("{name}: {}", e.one_line()));
            let got = program
                .check_patterns()
                .err()
                .map(|e| e.one_line())
                .unwrap_or_default();
            assert_eq!(got, want, "{name}");
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
                "literal_duration_is_checked",
                "duration('1x') > duration('1s')",
                "at line 1, column 10: invalid duration argument",
            ),
            (
                "literal_timestamp_is_checked",
                "x == timestamp('yesterday')",
                "at line 1, column 16: invalid timestamp argument",
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
    fn member_access_reads_the_same_however_spaced() {
        let cases = [
            ("optional_select", "a.?b.c", "a.?b.c"),
            ("spaces_around_dot", "a . b .? c", "a.b.?c"),
            ("space_inside_optional", "a . ? b", "a.?b"),
            ("newline_after_question", "a.?\n b", "a.?b"),
            ("comment_after_dot", "a.// c\nb", "a.b"),
            ("names_like_prefixes", "a.rb.br.r.b.Rb", "a.rb.br.r.b.Rb"),
            (
                "keywords_inside_names",
                "a.inx.true_.nullable",
                "a.inx.true_.nullable",
            ),
            ("index_then_dot", "a[0].b", "a[0].b"),
            (
                "call_after_names",
                "a.b.size() + x.indexOf(1)",
                "(size(a.b) _+_ indexOf(x, 1))",
            ),
            ("variables_in_parens", "(variables).x", "var:x"),
            ("variables_optional", "variables.?x", "variables.?x"),
            (
                "qualified_type_spaced",
                "google . protobuf . Duration",
                "type:google.protobuf.Duration",
            ),
        ];
        for (name, src, want) in cases {
            assert_eq!(parsed(src), want, "{name}");
        }
        let errors = [
            ("keyword_after_dot", "a.in", "at line 1, column 3: expected a field or function name after `.`, found `in`"),
            ("literal_after_question", "a.?true", "at line 1, column 4: expected a field or function name after `.`, found `true`"),
            ("string_after_dot", "a.r'x'", "at line 1, column 3: expected a field or function name after `.`, found a string"),
            ("bytes_after_dot", "a.b'x'", "at line 1, column 3: expected a field or function name after `.`, found bytes"),
            ("string_after_question", "a.?\"s\"", "at line 1, column 4: expected a field or function name after `.`, found a string"),
            ("number_after_dot", "a.5", "at line 1, column 2: expected an operator or the end of the expression, found `0.5`"),
            ("nothing_after_question", "a.?", "at line 1, column 4: expected a field or function name after `.`, found the end of the expression"),
            ("optional_call", "a.?b(1)", "at line 1, column 5: expected an operator or the end of the expression, found `(`"),
        ];
        for (name, src, want) in errors {
            assert_eq!(parsed(src), format!("error: {want}"), "{name}");
        }
    }

    #[test]
    fn long_argument_lists_and_chains() {
        // More words than the scratch stack keeps in place.
        let items: Vec<String> = (0..40).map(|i| i.to_string()).collect();
        let list = format!("[{}]", items.join(", "));
        assert_eq!(parsed(&list), list);
        let entries: Vec<String> = (0..20).map(|i| format!("{i}: x{i}")).collect();
        let map = format!("{{{}}}", entries.join(", "));
        assert_eq!(parsed(&map), map);
        let nested = format!("[[{}], [{}]]", items.join(", "), items.join(", "));
        assert_eq!(parsed(&nested), nested);
        let terms: Vec<String> = (0..24).map(|i| format!("t{i}")).collect();
        // Split in halves, the left one the smaller, as cel-go does.
        let chain = parsed(&terms.join(" || "));
        assert!(
            chain.starts_with("((((t0 || (t1 || t2)) || (t3 || (t4 || t5)))"),
            "{chain}"
        );
        assert_eq!(chain.matches("||").count(), 23);
        assert_eq!(
            parsed("'a'.substring(1, 2, 3, 4, 5)"),
            "error: at line 1, column 5: function `substring` takes 1 or 2 arguments, not 5"
        );
        assert_eq!(
            parsed("l.transformMap(k, v, k > 0, v)"),
            "TransformMap(l, k, v, (k _>_ 0) ? v)"
        );
        assert_eq!(
            parsed("l.all(v, v, true)"),
            "error: at line 1, column 3: duplicate variable name: v"
        );
        assert_eq!(parsed("l.all(int, int)"), "All(l, int, type:int)");
        for expr in ["l.map(__result__, 1)", "l.all(i, __result__, true)"] {
            assert!(
                parsed(expr).ends_with("iteration variable overwrites accumulator variable"),
                "{expr}: {}",
                parsed(expr)
            );
        }
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
