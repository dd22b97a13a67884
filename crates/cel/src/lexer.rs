//! Turns CEL text into tokens, one at a time (the parser looks one token
//! ahead). Literals are decoded here, so the parser never sees escapes.

use crate::error::SyntaxError;

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok<'s> {
    /// A decimal or hex integer; kept unsigned so that the parser can fold
    /// `-9223372036854775808`.
    Int(u64),
    Uint(u64),
    Double(f64),
    Str(String),
    Bytes(Vec<u8>),
    Ident(&'s str),
    True,
    False,
    Null,
    In,
    LParen,
    RParen,
    LBracket,
    RBracket,
    LBrace,
    RBrace,
    Dot,
    Comma,
    Colon,
    Question,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    EqEq,
    NotEq,
    Lt,
    Le,
    Gt,
    Ge,
    AndAnd,
    OrOr,
    Eof,
}

impl Tok<'_> {
    /// How the token reads in an error message: `` `)` ``.
    pub(crate) fn describe(&self) -> String {
        let text = match self {
            Tok::Int(n) | Tok::Uint(n) => return format!("`{n}`"),
            Tok::Double(d) => return format!("`{d}`"),
            Tok::Str(_) => return "a string".into(),
            Tok::Bytes(_) => return "bytes".into(),
            Tok::Ident(name) => return format!("`{name}`"),
            Tok::True => "true",
            Tok::False => "false",
            Tok::Null => "null",
            Tok::In => "in",
            Tok::LParen => "(",
            Tok::RParen => ")",
            Tok::LBracket => "[",
            Tok::RBracket => "]",
            Tok::LBrace => "{",
            Tok::RBrace => "}",
            Tok::Dot => ".",
            Tok::Comma => ",",
            Tok::Colon => ":",
            Tok::Question => "?",
            Tok::Plus => "+",
            Tok::Minus => "-",
            Tok::Star => "*",
            Tok::Slash => "/",
            Tok::Percent => "%",
            Tok::Bang => "!",
            Tok::EqEq => "==",
            Tok::NotEq => "!=",
            Tok::Lt => "<",
            Tok::Le => "<=",
            Tok::Gt => ">",
            Tok::Ge => ">=",
            Tok::AndAnd => "&&",
            Tok::OrOr => "||",
            Tok::Eof => return "the end of the expression".into(),
        };
        format!("`{text}`")
    }
}

pub(crate) struct Lexer<'s> {
    src: &'s str,
    pos: usize,
}

fn is_ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn is_ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

impl<'s> Lexer<'s> {
    pub(crate) fn new(src: &'s str) -> Self {
        Self { src, pos: 0 }
    }

    fn byte(&self, at: usize) -> Option<u8> {
        self.src.as_bytes().get(at).copied()
    }

    fn error(&self, at: usize, message: &str) -> SyntaxError {
        SyntaxError::syntax(self.src, at, message)
    }

    /// Skips whitespace and `//` comments.
    fn skip_trivia(&mut self) {
        while let Some(c) = self.byte(self.pos) {
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0c => self.pos += 1,
                b'/' if self.byte(self.pos + 1) == Some(b'/') => {
                    while let Some(c) = self.byte(self.pos) {
                        if c == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                _ => break,
            }
        }
    }

    /// The next token and the byte offset where it starts.
    pub(crate) fn next_token(&mut self) -> Result<(Tok<'s>, usize), SyntaxError> {
        self.skip_trivia();
        let start = self.pos;
        let Some(c) = self.byte(start) else {
            return Ok((Tok::Eof, start));
        };
        let two = |s: &Self, second: u8| s.byte(start + 1) == Some(second);
        let (tok, len) = match c {
            b'(' => (Tok::LParen, 1),
            b')' => (Tok::RParen, 1),
            b'[' => (Tok::LBracket, 1),
            b']' => (Tok::RBracket, 1),
            b'{' => (Tok::LBrace, 1),
            b'}' => (Tok::RBrace, 1),
            b',' => (Tok::Comma, 1),
            b':' => (Tok::Colon, 1),
            b'?' => (Tok::Question, 1),
            b'+' => (Tok::Plus, 1),
            b'-' => (Tok::Minus, 1),
            b'*' => (Tok::Star, 1),
            b'/' => (Tok::Slash, 1),
            b'%' => (Tok::Percent, 1),
            b'!' if two(self, b'=') => (Tok::NotEq, 2),
            b'!' => (Tok::Bang, 1),
            b'=' if two(self, b'=') => (Tok::EqEq, 2),
            b'<' if two(self, b'=') => (Tok::Le, 2),
            b'<' => (Tok::Lt, 1),
            b'>' if two(self, b'=') => (Tok::Ge, 2),
            b'>' => (Tok::Gt, 1),
            b'&' if two(self, b'&') => (Tok::AndAnd, 2),
            b'|' if two(self, b'|') => (Tok::OrOr, 2),
            b'.' if self.byte(start + 1).is_some_and(|d| d.is_ascii_digit()) => {
                return self.number(start);
            }
            b'.' => (Tok::Dot, 1),
            b'0'..=b'9' => return self.number(start),
            b'"' | b'\'' => return self.string(start, start, false, false),
            c if is_ident_start(c) => return Ok((self.ident_or_string(start)?, start)),
            _ => {
                let ch = self.src.get(start..).and_then(|s| s.chars().next());
                let shown = ch.map_or_else(String::new, String::from);
                return Err(self.error(start, &format!("token recognition error at: '{shown}'")));
            }
        };
        self.pos = start + len;
        Ok((tok, start))
    }

    fn ident_or_string(&mut self, start: usize) -> Result<Tok<'s>, SyntaxError> {
        // String prefixes: r, b and both, in either order and case.
        let mut i = start;
        let (mut raw, mut bytes) = (false, false);
        while let Some(c) = self.byte(i) {
            match c {
                b'r' | b'R' if !raw => raw = true,
                b'b' | b'B' if !bytes => bytes = true,
                b'"' | b'\'' if i > start => {
                    let (tok, _) = self.string(start, i, raw, bytes)?;
                    return Ok(tok);
                }
                _ => break,
            }
            i += 1;
        }
        let mut end = start;
        while self.byte(end).is_some_and(is_ident_char) {
            end += 1;
        }
        self.pos = end;
        let word = self.src.get(start..end).unwrap_or("");
        Ok(match word {
            "true" => Tok::True,
            "false" => Tok::False,
            "null" => Tok::Null,
            "in" => Tok::In,
            _ => Tok::Ident(word),
        })
    }

    fn number(&mut self, start: usize) -> Result<(Tok<'s>, usize), SyntaxError> {
        let bytes = self.src.as_bytes();
        let digits_end = |mut i: usize, hex: bool| {
            while bytes
                .get(i)
                .is_some_and(|c| c.is_ascii_digit() || (hex && c.is_ascii_hexdigit()))
            {
                i += 1;
            }
            i
        };
        let is_hex = self.byte(start) == Some(b'0')
            && matches!(self.byte(start + 1), Some(b'x' | b'X'))
            && self.byte(start + 2).is_some_and(|c| c.is_ascii_hexdigit());
        if is_hex {
            let end = digits_end(start + 2, true);
            let text = self.src.get(start + 2..end).unwrap_or("");
            let value = u64::from_str_radix(text, 16)
                .map_err(|_| self.error(start, "invalid int literal"))?;
            return Ok(self.int_suffix(start, end, value));
        }
        let mut end = digits_end(start, false);
        let mut is_float = false;
        if self.byte(end) == Some(b'.') && self.byte(end + 1).is_some_and(|c| c.is_ascii_digit()) {
            is_float = true;
            end = digits_end(end + 1, false);
        }
        if matches!(self.byte(end), Some(b'e' | b'E')) {
            let mut e = end + 1;
            if matches!(self.byte(e), Some(b'+' | b'-')) {
                e += 1;
            }
            if self.byte(e).is_some_and(|c| c.is_ascii_digit()) {
                is_float = true;
                end = digits_end(e, false);
            }
        }
        let text = self.src.get(start..end).unwrap_or("");
        if is_float {
            self.pos = end;
            // Out of range is an error, as Go's ParseFloat makes it.
            let value: f64 = text
                .parse()
                .ok()
                .filter(|v: &f64| v.is_finite())
                .ok_or_else(|| self.error(start, "invalid double literal"))?;
            return Ok((Tok::Double(value), start));
        }
        let value: u64 = text
            .parse()
            .map_err(|_| self.error(start, "invalid int literal"))?;
        Ok(self.int_suffix(start, end, value))
    }

    fn int_suffix(&mut self, start: usize, end: usize, value: u64) -> (Tok<'s>, usize) {
        if matches!(self.byte(end), Some(b'u' | b'U')) {
            self.pos = end + 1;
            (Tok::Uint(value), start)
        } else {
            self.pos = end;
            (Tok::Int(value), start)
        }
    }

    /// A quoted literal whose opening quote is at `quote`; `start` is where
    /// its prefix begins.
    fn string(
        &mut self,
        start: usize,
        quote: usize,
        raw: bool,
        bytes: bool,
    ) -> Result<(Tok<'s>, usize), SyntaxError> {
        let q = self.byte(quote).unwrap_or(b'"');
        let triple = self.byte(quote + 1) == Some(q) && self.byte(quote + 2) == Some(q);
        let body_start = if triple { quote + 3 } else { quote + 1 };
        // Find the closing quote: escapes skip one character unless raw.
        let mut i = body_start;
        let body_end = loop {
            let Some(c) = self.byte(i) else {
                return Err(self.error(start, "unterminated string literal"));
            };
            if c == b'\\' && !raw {
                i += 2;
                continue;
            }
            if !triple && (c == b'\n' || c == b'\r') {
                return Err(self.error(start, "unterminated string literal"));
            }
            if c == q && (!triple || (self.byte(i + 1) == Some(q) && self.byte(i + 2) == Some(q))) {
                break i;
            }
            i += 1;
        };
        self.pos = if triple { body_end + 3 } else { body_end + 1 };
        let body = self.src.get(body_start..body_end).unwrap_or("");
        let body = if body.contains('\r') {
            body.replace("\r\n", "\n").replace('\r', "\n")
        } else {
            body.to_string()
        };
        let decoded = if raw {
            body.into_bytes()
        } else {
            unescape(&body, bytes).map_err(|m| self.error(start, m))?
        };
        if bytes {
            return Ok((Tok::Bytes(decoded), start));
        }
        // Escapes in strings only produce valid code points, so this holds.
        let text = String::from_utf8(decoded)
            .map_err(|_| self.error(start, "invalid UTF-8 in string literal"))?;
        Ok((Tok::Str(text), start))
    }
}

/// cel-go's escapes: in strings `\x`/octal are code points, in bytes they
/// are bytes (and `\u` is not allowed).
fn unescape(body: &str, bytes: bool) -> Result<Vec<u8>, &'static str> {
    const BAD: &str = "unable to unescape string";
    let mut out = Vec::with_capacity(body.len());
    let src = body.as_bytes();
    let mut i = 0;
    while let Some(&c) = src.get(i) {
        if c != b'\\' {
            out.push(c);
            i += 1;
            continue;
        }
        let Some(&e) = src.get(i + 1) else {
            return Err("unable to unescape string, found '\\' as last character");
        };
        i += 2;
        let simple = match e {
            b'a' => Some(0x07),
            b'b' => Some(0x08),
            b'f' => Some(0x0c),
            b'n' => Some(b'\n'),
            b'r' => Some(b'\r'),
            b't' => Some(b'\t'),
            b'v' => Some(0x0b),
            b'\\' | b'\'' | b'"' | b'`' | b'?' => Some(e),
            _ => None,
        };
        if let Some(b) = simple {
            out.push(b);
            continue;
        }
        let (value, width, radix) = match e {
            b'x' | b'X' => (0, 2, 16),
            b'u' if !bytes => (0, 4, 16),
            b'U' if !bytes => (0, 8, 16),
            b'0'..=b'3' => (u32::from(e - b'0'), 2, 8),
            _ => return Err(BAD),
        };
        let digits = src.get(i..i + width).ok_or(BAD)?;
        let mut v: u32 = value;
        for &d in digits {
            let x = char::from(d).to_digit(radix).ok_or(if radix == 8 {
                "unable to unescape octal sequence in string"
            } else {
                BAD
            })?;
            v = v
                .checked_mul(radix)
                .and_then(|v| v.checked_add(x))
                .ok_or(BAD)?;
        }
        i += width;
        if bytes {
            out.push(u8::try_from(v).map_err(|_| BAD)?);
        } else {
            let ch = char::from_u32(v).ok_or("invalid unicode code point")?;
            let mut buf = [0u8; 4];
            out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(src: &str) -> Result<Vec<Tok<'_>>, String> {
        let mut lexer = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let (tok, _) = lexer.next_token().map_err(|e| e.message)?;
            if tok == Tok::Eof {
                return Ok(out);
            }
            out.push(tok);
        }
    }

    #[test]
    fn literals_decode_as_cel_go_does() {
        let cases: Vec<(&str, &str, Vec<Tok<'_>>)> = vec![
            ("decimal", "42", vec![Tok::Int(42)]),
            ("hex", "0x1F", vec![Tok::Int(31)]),
            ("uint", "7u", vec![Tok::Uint(7)]),
            ("hex_uint", "0xffU", vec![Tok::Uint(255)]),
            ("double", "1.5", vec![Tok::Double(1.5)]),
            ("exponent", "1e3", vec![Tok::Double(1000.0)]),
            ("leading_dot", ".5", vec![Tok::Double(0.5)]),
            ("signed_exponent", "2.5E-1", vec![Tok::Double(0.25)]),
            (
                "int_then_member",
                "1.size",
                vec![Tok::Int(1), Tok::Dot, Tok::Ident("size")],
            ),
            ("single_quotes", "'a\"b'", vec![Tok::Str("a\"b".into())]),
            ("double_quotes", "\"a'b\"", vec![Tok::Str("a'b".into())]),
            (
                "escapes",
                r#"'\a\b\f\n\r\t\v\\\'\"\`\?'"#,
                vec![Tok::Str("\x07\x08\x0c\n\r\t\x0b\\'\"`?".into())],
            ),
            (
                "hex_escape_is_code_point",
                r"'\xFF'",
                vec![Tok::Str("\u{ff}".into())],
            ),
            ("octal_escape", r"'\101'", vec![Tok::Str("A".into())]),
            (
                "unicode_escapes",
                r"'\u00e9\U0001F600'",
                vec![Tok::Str("é😀".into())],
            ),
            ("raw", r"r'\d+'", vec![Tok::Str(r"\d+".into())]),
            ("triple", "'''a\n'b'''", vec![Tok::Str("a\n'b".into())]),
            ("bytes", r"b'\xff\101'", vec![Tok::Bytes(vec![0xff, b'A'])]),
            ("raw_bytes", r"rb'\x'", vec![Tok::Bytes(br"\x".to_vec())]),
            (
                "bytes_utf8",
                "b'é'",
                vec![Tok::Bytes("é".as_bytes().to_vec())],
            ),
            (
                "keywords",
                "true false null in",
                vec![Tok::True, Tok::False, Tok::Null, Tok::In],
            ),
            (
                "operators",
                "<= >= == != && || ! ?",
                vec![
                    Tok::Le,
                    Tok::Ge,
                    Tok::EqEq,
                    Tok::NotEq,
                    Tok::AndAnd,
                    Tok::OrOr,
                    Tok::Bang,
                    Tok::Question,
                ],
            ),
            ("comment", "1 // one\n", vec![Tok::Int(1)]),
            (
                "crlf_normalised",
                "'''a\r\nb'''",
                vec![Tok::Str("a\nb".into())],
            ),
        ];
        for (name, src, want) in cases {
            assert_eq!(tokens(src), Ok(want), "{name}");
        }
    }

    #[test]
    fn bad_literals_are_errors() {
        let cases = [
            ("unterminated", "'abc", "unterminated string literal"),
            ("newline_in_single", "'a\nb'", "unterminated string literal"),
            ("unknown_escape", r"'\q'", "unable to unescape string"),
            ("surrogate", r"'\ud800'", "invalid unicode code point"),
            (
                "unicode_in_bytes",
                r"b'\u0041'",
                "unable to unescape string",
            ),
            (
                "int_too_large",
                "18446744073709551616",
                "invalid int literal",
            ),
            ("stray_char", "a # b", "token recognition error at: '#'"),
            (
                "single_ampersand",
                "a & b",
                "token recognition error at: '&'",
            ),
        ];
        for (name, src, want) in cases {
            assert_eq!(tokens(src), Err(want.to_string()), "{name}");
        }
    }
}
