//! JMESPath text to [`Node`]s: a lexer and a Pratt parser after the
//! reference grammar (jmespath.py, go-jmespath, the `jmespath` crate), built
//! straight into the interpreter's tree. Parsing is paid per request in a
//! fresh instance, so identifiers are sliced from the text and no token
//! queue or intermediate syntax tree is built and converted. Errors read as
//! the `jmespath` crate's, which `tests` holds this parser equal to.

use std::borrow::Cow;
use std::rc::Rc;

use serde_json::Value;

use crate::ast::{Comparator, Function, Name, Node};
use crate::error::{check_arity, syntax_error, CompileError, MAX_DEPTH};
use crate::{functions, kyverno};

/// A token's binding power below which a projection stops.
const PROJECTION_STOP: usize = 10;

#[derive(Debug, Clone, PartialEq)]
enum Token<'a> {
    Identifier(&'a str),
    /// Its name: borrowed when the quotes hold no escapes.
    QuotedIdentifier(Cow<'a, str>),
    Number(i32),
    Literal(Value),
    Dot,
    Star,
    Flatten,
    And,
    Or,
    Pipe,
    Filter,
    Lbracket,
    Rbracket,
    Comma,
    Colon,
    Not,
    Ne,
    Eq,
    Gt,
    Gte,
    Lt,
    Lte,
    At,
    Ampersand,
    Lparen,
    Rparen,
    Lbrace,
    Rbrace,
    Eof,
}

impl Token<'_> {
    fn lbp(&self) -> usize {
        match self {
            Token::Pipe => 1,
            Token::Or => 2,
            Token::And => 3,
            Token::Eq | Token::Gt | Token::Lt | Token::Gte | Token::Lte | Token::Ne => 5,
            Token::Flatten => 9,
            Token::Star => 20,
            Token::Filter => 21,
            Token::Dot => 40,
            Token::Not => 45,
            Token::Lbrace => 50,
            Token::Lbracket => 55,
            Token::Lparen => 60,
            _ => 0,
        }
    }

    /// The token as the `jmespath` crate's errors name it (its `Debug`).
    fn name(&self) -> Cow<'static, str> {
        Cow::Borrowed(match self {
            Token::Identifier(s) => return Cow::Owned(format!("Identifier({s:?})")),
            Token::QuotedIdentifier(s) => return Cow::Owned(format!("QuotedIdentifier({s:?})")),
            Token::Number(n) => return Cow::Owned(format!("Number({n})")),
            Token::Literal(_) => "Literal(..)",
            Token::Dot => "Dot",
            Token::Star => "Star",
            Token::Flatten => "Flatten",
            Token::And => "And",
            Token::Or => "Or",
            Token::Pipe => "Pipe",
            Token::Filter => "Filter",
            Token::Lbracket => "Lbracket",
            Token::Rbracket => "Rbracket",
            Token::Comma => "Comma",
            Token::Colon => "Colon",
            Token::Not => "Not",
            Token::Ne => "Ne",
            Token::Eq => "Eq",
            Token::Gt => "Gt",
            Token::Gte => "Gte",
            Token::Lt => "Lt",
            Token::Lte => "Lte",
            Token::At => "At",
            Token::Ampersand => "Ampersand",
            Token::Lparen => "Lparen",
            Token::Rparen => "Rparen",
            Token::Lbrace => "Lbrace",
            Token::Rbrace => "Rbrace",
            Token::Eof => "Eof",
        })
    }
}

/// A syntax error: the byte offset it is reported at and its reason.
struct SyntaxError {
    offset: usize,
    reason: String,
}

/// How deeply the parser may recurse. Brackets and negations are bounded
/// by [`MAX_DEPTH`] before parsing, but a chain of projections
/// (`a[*].a[*]…`) nests without them; past this bound its tree is deeper
/// than [`check`] allows anyway, so parsing stops there instead of running
/// out of stack.
const MAX_RECURSION: usize = 6 * MAX_DEPTH;

/// How many operators may wrap the expression before them (`a[0][0]…`,
/// `a[].a[]…`, `a || b || …`) in one query. Such chains are built in a loop,
/// not by recursion, but their tree is dropped recursively: a 64 KiB chain
/// would overflow the stack. A tree this deep somewhere fails [`check`]
/// anyway; one that wide is far past any policy's query.
const MAX_WRAPS: usize = 16 * MAX_DEPTH;

/// Why parsing stopped.
enum ParseError {
    Syntax(SyntaxError),
    TooDeep,
}

/// Parses `text` and checks its functions (known, with the right number of
/// arguments), `&expression`s (only as arguments) and nesting.
pub(crate) fn parse(text: &Rc<str>) -> Result<Node, CompileError> {
    let syntax = |e: SyntaxError| CompileError::Syntax(syntax_error(text, e.offset, &e.reason));
    let tokens = lex(text).map_err(syntax)?;
    let mut parser = Parser {
        text,
        tokens,
        next: 0,
        offset: 0,
        depth: 0,
        wraps: 0,
    };
    let parsed = parser.expression(0).and_then(|node| {
        if *parser.peek_token() == Token::Eof {
            Ok(node)
        } else {
            Err(parser.peek_error("Did not parse the complete expression"))
        }
    });
    let node = parsed.map_err(|e| match e {
        ParseError::Syntax(e) => syntax(e),
        ParseError::TooDeep => CompileError::TooDeep,
    })?;
    check(&node, 0)?;
    Ok(node)
}

/// What the crate's conversion checked, in its order (each node before
/// its children, left to right).
fn check(node: &Node, depth: usize) -> Result<(), CompileError> {
    if depth > 4 * MAX_DEPTH {
        return Err(CompileError::TooDeep);
    }
    let next = |n: &Node| check(n, depth + 1);
    match node {
        Node::Identity
        | Node::Field(_)
        | Node::Path(_)
        | Node::Index(_)
        | Node::Slice { .. }
        | Node::Literal(_) => Ok(()),
        Node::Expref(_) => Err(CompileError::MisplacedExpref),
        Node::ObjectValues(inner) | Node::Flatten(inner) | Node::Not(inner) => next(inner),
        Node::Subexpr(pair)
        | Node::Pipe(pair)
        | Node::Projection(pair)
        | Node::Condition(pair)
        | Node::Comparison(_, pair)
        | Node::And(pair)
        | Node::Or(pair) => {
            next(&pair.0)?;
            next(&pair.1)
        }
        Node::MultiList(items) => items.iter().try_for_each(next),
        Node::MultiHash(pairs) => pairs.iter().try_for_each(|(_, v)| next(v)),
        Node::Unresolved(name, _) => Err(CompileError::UnknownFunction(name.as_str().to_string())),
        Node::Function(function, args) => {
            check_arity(function.signature(), args.len())?;
            // An argument `&expr` stands for its expression, one level down.
            args.iter().try_for_each(|a| match a {
                Node::Expref(inner) => next(inner),
                other => next(other),
            })
        }
    }
}

fn resolve(name: Name, args: Vec<Node>) -> Node {
    match kyverno::signature(name.as_str())
        .map(Function::Kyverno)
        .or_else(|| functions::signature(name.as_str()).map(Function::Standard))
    {
        Some(function) => Node::Function(function, args),
        None => Node::Unresolved(name, args),
    }
}

struct Parser<'a> {
    /// The query's text, which names share.
    text: &'a Rc<str>,
    tokens: Vec<(usize, Token<'a>)>,
    next: usize,
    /// Where the token last taken starts.
    offset: usize,
    /// How many [`Parser::expression`] calls are under way.
    depth: usize,
    /// How many operators have wrapped the expression before them.
    wraps: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self, ahead: usize) -> Option<&Token<'a>> {
        self.tokens.get(self.next + ahead).map(|(_, t)| t)
    }

    fn peek_token(&self) -> &Token<'a> {
        self.peek(0).unwrap_or(&Token::Eof)
    }

    fn peek_offset(&self) -> usize {
        self.tokens
            .get(self.next)
            .map_or(self.offset, |(offset, _)| *offset)
    }

    fn advance(&mut self) -> Token<'a> {
        match self.tokens.get_mut(self.next) {
            Some((offset, token)) => {
                self.offset = *offset;
                self.next += 1;
                std::mem::replace(token, Token::Eof)
            }
            None => Token::Eof,
        }
    }

    /// An error about `token`: the one just taken, or (`peeked`) the next.
    fn error(&self, token: &Token<'_>, message: &str, peeked: bool) -> ParseError {
        ParseError::Syntax(SyntaxError {
            offset: if peeked {
                self.peek_offset()
            } else {
                self.offset
            },
            reason: format!("{message} -- found {}", token.name()),
        })
    }

    fn peek_error(&self, message: &str) -> ParseError {
        self.error(self.peek_token(), message, true)
    }

    fn expression(&mut self, rbp: usize) -> Result<Node, ParseError> {
        if self.depth >= MAX_RECURSION {
            return Err(ParseError::TooDeep);
        }
        self.depth += 1;
        let mut left = self.nud()?;
        while rbp < self.peek_token().lbp() {
            left = self.led(left)?;
            // A longer path or a call does not nest; anything else does.
            if !matches!(
                left,
                Node::Path(_) | Node::Function(..) | Node::Unresolved(..)
            ) {
                self.wraps += 1;
                if self.wraps > MAX_WRAPS {
                    return Err(ParseError::TooDeep);
                }
            }
        }
        self.depth -= 1;
        Ok(left)
    }

    fn nud(&mut self) -> Result<Node, ParseError> {
        let token = self.advance();
        match token {
            Token::At => Ok(Node::Identity),
            Token::Identifier(name) => Ok(Node::Field(self.name(name, 0))),
            Token::QuotedIdentifier(name) => match self.peek_token() {
                Token::Lparen => Err(self.error(
                    &Token::Lparen,
                    "Quoted strings can't be a function name",
                    true,
                )),
                _ => Ok(Node::Field(self.quoted(name))),
            },
            Token::Star => self.wildcard_values(Node::Identity),
            Token::Literal(value) => Ok(Node::Literal(value)),
            Token::Lbracket => match (self.peek_token(), self.peek(1)) {
                (Token::Number(_) | Token::Colon, _) => self.index(),
                (Token::Star, Some(Token::Rbracket)) => {
                    self.advance();
                    self.wildcard_index(Node::Identity)
                }
                _ => self.multi_list(),
            },
            Token::Flatten => self.flatten(Node::Identity),
            Token::Lbrace => {
                let mut pairs = Vec::new();
                loop {
                    pairs.push(self.key_value()?);
                    match self.advance() {
                        Token::Rbrace => break,
                        Token::Comma => continue,
                        t => return Err(self.error(&t, "Expected '}' or ','", false)),
                    }
                }
                Ok(Node::MultiHash(pairs))
            }
            Token::Ampersand => Ok(Node::Expref(Box::new(
                self.expression(Token::Ampersand.lbp())?,
            ))),
            Token::Not => Ok(Node::Not(Box::new(self.expression(Token::Not.lbp())?))),
            Token::Filter => self.filter(Node::Identity),
            Token::Lparen => {
                let inner = self.expression(0)?;
                match self.advance() {
                    Token::Rparen => Ok(inner),
                    t => Err(self.error(&t, "Expected ')' to close '('", false)),
                }
            }
            t => Err(self.error(&t, "Unexpected nud token", false)),
        }
    }

    fn led(&mut self, left: Node) -> Result<Node, ParseError> {
        let token = self.advance();
        // Both operands in one allocation.
        let boxed = |l: Node, r: Node| Box::new((l, r));
        match token {
            Token::Dot => {
                if *self.peek_token() == Token::Star {
                    self.advance();
                    self.wildcard_values(left)
                } else {
                    let rhs = self.dot(Token::Dot.lbp())?;
                    Ok(Node::subexpr(left, rhs))
                }
            }
            Token::Lbracket => match self.peek_token() {
                Token::Number(_) | Token::Colon => {
                    let rhs = self.index()?;
                    Ok(Node::Subexpr(boxed(left, rhs)))
                }
                Token::Star => {
                    self.advance();
                    self.wildcard_index(left)
                }
                _ => Err(self.peek_error("Expected number, ':', or '*'")),
            },
            Token::Or => {
                let rhs = self.expression(Token::Or.lbp())?;
                Ok(Node::Or(boxed(left, rhs)))
            }
            Token::And => {
                let rhs = self.expression(Token::And.lbp())?;
                Ok(Node::And(boxed(left, rhs)))
            }
            Token::Pipe => {
                let rhs = self.expression(Token::Pipe.lbp())?;
                Ok(Node::Pipe(boxed(left, rhs)))
            }
            Token::Lparen => match left {
                Node::Field(name) => {
                    let args = self.list(&Token::Rparen)?;
                    Ok(resolve(name, args))
                }
                _ => Err(self.peek_error("Invalid function name")),
            },
            Token::Flatten => self.flatten(left),
            Token::Filter => self.filter(left),
            Token::Eq => self.comparison(Comparator::Equal, left),
            Token::Ne => self.comparison(Comparator::NotEqual, left),
            Token::Gt => self.comparison(Comparator::GreaterThan, left),
            Token::Gte => self.comparison(Comparator::GreaterThanEqual, left),
            Token::Lt => self.comparison(Comparator::LessThan, left),
            Token::Lte => self.comparison(Comparator::LessThanEqual, left),
            t => Err(self.error(&t, "Unexpected led token", false)),
        }
    }

    /// The name `text` of the token just taken, which starts `skip` bytes
    /// into it, as a range of the query.
    fn name(&self, text: &str, skip: usize) -> Name {
        let start = self.offset + skip;
        Name::slice(self.text, start..start + text.len())
    }

    fn quoted(&self, name: Cow<'_, str>) -> Name {
        match name {
            // Inside the quote the token starts with.
            Cow::Borrowed(text) => self.name(text, 1),
            Cow::Owned(text) => Name::from(text.as_str()),
        }
    }

    fn key_value(&mut self) -> Result<(Name, Node), ParseError> {
        let key = match self.advance() {
            Token::Identifier(key) => self.name(key, 0),
            Token::QuotedIdentifier(key) => self.quoted(key),
            t => return Err(self.error(&t, "Expected Field to start key value pair", false)),
        };
        if *self.peek_token() != Token::Colon {
            return Err(self.peek_error("Expected ':' to follow key"));
        }
        self.advance();
        Ok((key, self.expression(0)?))
    }

    fn filter(&mut self, lhs: Node) -> Result<Node, ParseError> {
        let predicate = self.expression(0)?;
        match self.advance() {
            Token::Rbracket => {
                let then = self.projection_rhs(Token::Filter.lbp())?;
                Ok(Node::Projection(Box::new((
                    lhs,
                    Node::Condition(Box::new((predicate, then))),
                ))))
            }
            t => Err(self.error(&t, "Expected ']'", false)),
        }
    }

    fn flatten(&mut self, lhs: Node) -> Result<Node, ParseError> {
        let rhs = self.projection_rhs(Token::Flatten.lbp())?;
        Ok(Node::Projection(Box::new((
            Node::Flatten(Box::new(lhs)),
            rhs,
        ))))
    }

    fn comparison(&mut self, comparator: Comparator, lhs: Node) -> Result<Node, ParseError> {
        let rhs = self.expression(Token::Eq.lbp())?;
        Ok(Node::Comparison(comparator, Box::new((lhs, rhs))))
    }

    fn dot(&mut self, lbp: usize) -> Result<Node, ParseError> {
        match self.peek_token() {
            Token::Lbracket => {
                self.advance();
                self.multi_list()
            }
            Token::Identifier(_)
            | Token::QuotedIdentifier(_)
            | Token::Star
            | Token::Lbrace
            | Token::Ampersand => self.expression(lbp),
            _ => Err(self.peek_error("Expected identifier, '*', '{', '[', '&', or '[?'")),
        }
    }

    fn projection_rhs(&mut self, lbp: usize) -> Result<Node, ParseError> {
        match self.peek_token() {
            Token::Dot => {
                self.advance();
                self.dot(lbp)
            }
            Token::Lbracket | Token::Filter => self.expression(lbp),
            t if t.lbp() < PROJECTION_STOP => Ok(Node::Identity),
            _ => Err(self.peek_error("Expected '.', '[', or '[?'")),
        }
    }

    fn wildcard_index(&mut self, lhs: Node) -> Result<Node, ParseError> {
        match self.advance() {
            Token::Rbracket => {
                let rhs = self.projection_rhs(Token::Star.lbp())?;
                Ok(Node::Projection(Box::new((lhs, rhs))))
            }
            t => Err(self.error(&t, "Expected ']' for wildcard index", false)),
        }
    }

    fn wildcard_values(&mut self, lhs: Node) -> Result<Node, ParseError> {
        let rhs = self.projection_rhs(Token::Star.lbp())?;
        Ok(Node::Projection(Box::new((
            Node::ObjectValues(Box::new(lhs)),
            rhs,
        ))))
    }

    /// `[n]`, or a slice `[start:stop:step]` (a projection).
    fn index(&mut self) -> Result<Node, ParseError> {
        let mut parts: [Option<i32>; 3] = [None, None, None];
        let mut at = 0usize;
        loop {
            match self.advance() {
                Token::Number(n) => {
                    if let Some(part) = parts.get_mut(at) {
                        *part = Some(n);
                    }
                    match self.peek_token() {
                        Token::Colon | Token::Rbracket => {}
                        _ => return Err(self.peek_error("Expected ':', or ']'")),
                    }
                }
                Token::Rbracket => break,
                Token::Colon if at >= 2 => {
                    return Err(self.error(&Token::Colon, "Too many colons in slice expr", false));
                }
                Token::Colon => {
                    at += 1;
                    match self.peek_token() {
                        Token::Number(_) | Token::Colon | Token::Rbracket => {}
                        _ => return Err(self.peek_error("Expected number, ':', or ']'")),
                    }
                }
                t => return Err(self.error(&t, "Expected number, ':', or ']'", false)),
            }
        }
        let [start, stop, step] = parts;
        if at == 0 {
            // A number came first: the lexer gives `[` then a number.
            return Ok(Node::Index(start.unwrap_or_default()));
        }
        let slice = Node::Slice {
            start,
            stop,
            step: step.unwrap_or(1),
        };
        let rhs = self.projection_rhs(Token::Star.lbp())?;
        Ok(Node::Projection(Box::new((slice, rhs))))
    }

    fn multi_list(&mut self) -> Result<Node, ParseError> {
        Ok(Node::MultiList(self.list(&Token::Rbracket)?))
    }

    /// Comma-separated expressions up to `closing`.
    fn list(&mut self, closing: &Token<'_>) -> Result<Vec<Node>, ParseError> {
        let mut nodes = Vec::new();
        while self.peek_token() != closing {
            nodes.push(self.expression(0)?);
            if *self.peek_token() == Token::Comma {
                self.advance();
                if self.peek_token() == closing {
                    return Err(self.peek_error("invalid token after ','"));
                }
            }
        }
        self.advance();
        Ok(nodes)
    }
}

fn lex(text: &str) -> Result<Vec<(usize, Token<'_>)>, SyntaxError> {
    // Most tokens are a few bytes: one allocation for nearly every query.
    let mut tokens = Vec::with_capacity(text.len() / 3 + 2);
    let bytes = text.as_bytes();
    let mut at = 0;
    let error = |offset: usize, reason: String| SyntaxError { offset, reason };
    while let Some(&byte) = bytes.get(at) {
        let start = at;
        at += 1;
        let next = bytes.get(at).copied();
        let mut two = |second: u8, pair: Token<'static>, single: Token<'static>| {
            if next == Some(second) {
                at += 1;
                pair
            } else {
                single
            }
        };
        let token = match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => {
                while bytes
                    .get(at)
                    .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                {
                    at += 1;
                }
                Token::Identifier(text.get(start..at).unwrap_or_default())
            }
            b'.' => Token::Dot,
            b'[' => match next {
                Some(b']') => {
                    at += 1;
                    Token::Flatten
                }
                Some(b'?') => {
                    at += 1;
                    Token::Filter
                }
                _ => Token::Lbracket,
            },
            b'*' => Token::Star,
            b'|' => two(b'|', Token::Or, Token::Pipe),
            b'@' => Token::At,
            b']' => Token::Rbracket,
            b'{' => Token::Lbrace,
            b'}' => Token::Rbrace,
            b'&' => two(b'&', Token::And, Token::Ampersand),
            b'(' => Token::Lparen,
            b')' => Token::Rparen,
            b',' => Token::Comma,
            b':' => Token::Colon,
            b'"' | b'\'' | b'`' => {
                let (inner, end) = delimited(text, start, byte)?;
                at = end;
                match byte {
                    // No escapes and no control characters: the JSON string
                    // is its text.
                    b'"' if inner.bytes().all(|b| b >= 0x20 && b != b'\\') => {
                        Token::QuotedIdentifier(Cow::Borrowed(inner))
                    }
                    b'"' => match serde_json::from_str::<String>(&format!("\"{inner}\"")) {
                        Ok(name) => Token::QuotedIdentifier(Cow::Owned(name)),
                        Err(e) => {
                            return Err(error(
                                start,
                                format!("Unable to parse quoted identifier {inner}: {e}"),
                            ))
                        }
                    },
                    b'\'' => {
                        Token::Literal(Value::String(unescape(inner, "\\'", "'").into_owned()))
                    }
                    _ => match serde_json::from_str::<Value>(&unescape(inner, "\\`", "`")) {
                        Ok(value) => Token::Literal(value),
                        Err(e) => {
                            return Err(error(
                                start,
                                format!("Unable to parse literal JSON {inner}: {e}"),
                            ))
                        }
                    },
                }
            }
            b'=' => match next {
                Some(b'=') => {
                    at += 1;
                    Token::Eq
                }
                _ => {
                    return Err(error(
                        start,
                        "'=' is not valid. Did you mean '=='?".to_string(),
                    ))
                }
            },
            b'>' => two(b'=', Token::Gte, Token::Gt),
            b'<' => two(b'=', Token::Lte, Token::Lt),
            b'!' => two(b'=', Token::Ne, Token::Not),
            b'0'..=b'9' => {
                let (number, end) = number(text, start, start)?;
                at = end;
                Token::Number(number)
            }
            b'-' => match next {
                Some(b'1'..=b'9') => {
                    let (number, end) = number(text, start, start + 1)?;
                    at = end;
                    Token::Number(number)
                }
                // The crate takes any Unicode digit here, then fails to read it.
                _ if text
                    .get(at..)
                    .and_then(|s| s.chars().next())
                    .is_some_and(|c| c.is_numeric() && !c.is_ascii_digit()) =>
                {
                    return Err(error(start, "Expected valid number".to_string()));
                }
                _ => {
                    return Err(error(
                        start,
                        "'-' must be followed by numbers 1-9".to_string(),
                    ))
                }
            },
            b' ' | b'\n' | b'\t' | b'\r' => continue,
            _ => {
                let c = text
                    .get(start..)
                    .and_then(|s| s.chars().next())
                    .unwrap_or('?');
                return Err(error(start, format!("Invalid character: {c}")));
            }
        };
        tokens.push((start, token));
    }
    tokens.push((text.len(), Token::Eof));
    Ok(tokens)
}

/// `text` with `escaped` read as `plain`; most literals have no backslash
/// and are passed through as they are.
fn unescape<'t>(text: &'t str, escaped: &str, plain: &str) -> Cow<'t, str> {
    if text.as_bytes().contains(&b'\\') {
        Cow::Owned(text.replace(escaped, plain))
    } else {
        Cow::Borrowed(text)
    }
}

/// The digits from `digits` on, as an `i32` (negative when the text at
/// `start` is `-`), and where they end.
fn number(text: &str, start: usize, digits: usize) -> Result<(i32, usize), SyntaxError> {
    let bytes = text.as_bytes();
    let mut end = digits;
    while bytes.get(end).is_some_and(u8::is_ascii_digit) {
        end += 1;
    }
    let invalid = || SyntaxError {
        offset: start,
        reason: "Expected valid number".to_string(),
    };
    let magnitude: i32 = text
        .get(digits..end)
        .and_then(|d| d.parse().ok())
        .ok_or_else(invalid)?;
    Ok((
        if digits > start {
            -magnitude
        } else {
            magnitude
        },
        end,
    ))
}

/// The text between the delimiter at `start` and its closing twin (a
/// backslash keeps the next character in), and the offset after it.
fn delimited(text: &str, start: usize, delimiter: u8) -> Result<(&str, usize), SyntaxError> {
    let bytes = text.as_bytes();
    let mut at = start + 1;
    while let Some(&b) = bytes.get(at) {
        if b == delimiter {
            return Ok((text.get(start + 1..at).unwrap_or_default(), at + 1));
        }
        at += if b == b'\\' { 2 } else { 1 };
    }
    let inner = text.get(start + 1..).unwrap_or_default();
    let d = char::from(delimiter);
    Err(SyntaxError {
        offset: start,
        reason: format!("Unclosed {d} delimiter: {d}{inner}"),
    })
}

#[cfg(test)]
mod tests;
