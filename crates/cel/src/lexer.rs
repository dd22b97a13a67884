//! Turns CEL text into tokens, one at a time (the parser looks one token
//! ahead). Literals are decoded here, so the parser never sees escapes;
//! names and literals without escapes are slices of the source, so that
//! lexing allocates nothing for them.

use crate::error::SyntaxError;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Tok<'s> {
    /// A decimal or hex integer; kept unsigned so that the parser can fold
    /// `-9223372036854775808`.
    Int(u64),
    Uint(u64),
    Double(f64),
    /// A string literal: its text, a slice of the source, or (`None`)
    /// decoded into the lexer's `decoded` buffer.
    Str(Option<&'s str>),
    /// A bytes literal: a slice of the source, or (`None`) decoded into
    /// the lexer's `decoded_bytes`.
    Bytes(Option<&'s [u8]>),
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
    /// Where the next token is looked for.
    pos: usize,
    /// The current token and where it starts.
    pub(crate) tok: Tok<'s>,
    pub(crate) at: usize,
    /// The text of the current literal when escapes make it differ from
    /// the source.
    pub(crate) decoded: String,
    pub(crate) decoded_bytes: Vec<u8>,
}

type LResult<T> = Result<T, Box<SyntaxError>>;

/// Which bytes may continue an identifier.
const IDENT_CHARS: [bool; 256] = {
    let mut table = [false; 256];
    let mut rest: &mut [bool] = &mut table;
    let mut c = 0u8;
    while let [slot, tail @ ..] = rest {
        *slot = c.is_ascii_alphanumeric() || c == b'_';
        c = c.wrapping_add(1);
        rest = tail;
    }
    table
};

/// Word-at-a-time byte tests: each byte of the result has its high bit set
/// when the byte tested true, and no other bits.
mod swar {
    const LOW: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    const SEVEN: u64 = 0x7f7f_7f7f_7f7f_7f7f;

    /// The eight bytes at `at`, if there are eight.
    pub(super) fn word(bytes: &[u8], at: usize) -> Option<u64> {
        let chunk: [u8; 8] = bytes.get(at..at + 8)?.try_into().ok()?;
        Some(u64::from_le_bytes(chunk))
    }

    /// Bytes of `w` (all below 0x80) equal to `b` (below 0x80).
    fn eq7(w: u64, b: u8) -> u64 {
        let x = w ^ (LOW * u64::from(b));
        !((x + SEVEN) | x) & HIGH
    }

    /// Bytes of `w` that may matter inside a quoted literal: the quote
    /// `q`, backslash and line ends.
    pub(super) fn special(w: u64, q: u8) -> u64 {
        let ascii = !w & HIGH;
        let w = w & SEVEN;
        (eq7(w, q) | eq7(w, b'\\') | eq7(w, b'\n') | eq7(w, b'\r')) & ascii
    }

    /// How many bytes come before the first flagged one in `mask`.
    pub(super) fn first(mask: u64) -> usize {
        (mask.trailing_zeros() / 8) as usize
    }
}

/// Where the identifier that goes on at `at` ends.
fn ident_end(bytes: &[u8], mut at: usize) -> usize {
    // Four bytes a step, then one.
    while let Some(&[a, b, c, d]) = bytes.get(at..at + 4) {
        let ends = [a, b, c, d].iter().position(|&c| !is_ident_char(c));
        if let Some(i) = ends {
            return at + i;
        }
        at += 4;
    }
    while bytes.get(at).copied().is_some_and(is_ident_char) {
        at += 1;
    }
    at
}

fn is_ident_char(c: u8) -> bool {
    IDENT_CHARS.get(usize::from(c)).copied().unwrap_or(false)
}

impl<'s> Lexer<'s> {
    /// A lexer before the first token: call `advance`.
    pub(crate) fn new(src: &'s str) -> Self {
        Self {
            src,
            pos: 0,
            tok: Tok::Eof,
            at: 0,
            decoded: String::new(),
            decoded_bytes: Vec::new(),
        }
    }

    fn byte(&self, at: usize) -> Option<u8> {
        self.src.as_bytes().get(at).copied()
    }

    #[cold]
    #[inline(never)]
    fn error(&self, at: usize, message: &str) -> Box<SyntaxError> {
        Box::new(SyntaxError::syntax(self.src, at, message))
    }

    /// Moves to the next token, past whitespace and `//` comments.
    pub(crate) fn advance(&mut self) -> LResult<()> {
        let bytes = self.src.as_bytes();
        let mut pos = self.pos;
        let c = loop {
            let Some(&c) = bytes.get(pos) else {
                self.pos = pos;
                self.at = pos;
                self.tok = Tok::Eof;
                return Ok(());
            };
            match c {
                b' ' | b'\t' | b'\n' | b'\r' | 0x0c => pos += 1,
                b'/' if bytes.get(pos + 1) == Some(&b'/') => {
                    pos += 2;
                    while bytes.get(pos).is_some_and(|&c| c != b'\n') {
                        pos += 1;
                    }
                }
                _ => break c,
            }
        };
        let start = pos;
        self.at = start;
        let two = |second: u8| bytes.get(start + 1) == Some(&second);
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
            b'!' if two(b'=') => (Tok::NotEq, 2),
            b'!' => (Tok::Bang, 1),
            b'=' if two(b'=') => (Tok::EqEq, 2),
            b'<' if two(b'=') => (Tok::Le, 2),
            b'<' => (Tok::Lt, 1),
            b'>' if two(b'=') => (Tok::Ge, 2),
            b'>' => (Tok::Gt, 1),
            b'&' if two(b'&') => (Tok::AndAnd, 2),
            b'|' if two(b'|') => (Tok::OrOr, 2),
            b'.' if bytes.get(start + 1).is_some_and(u8::is_ascii_digit) => {
                return self.number(start);
            }
            b'.' => (Tok::Dot, 1),
            b'0'..=b'9' => return self.number(start),
            b'"' | b'\'' => return self.string(start, start, false, false),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => return self.ident_or_string(start),
            _ => return Err(self.unrecognized(start)),
        };
        self.pos = start + len;
        self.tok = tok;
        Ok(())
    }

    /// `advance` after a name: quicker when, as mostly, a one-byte token
    /// follows at once.
    #[inline(always)]
    pub(crate) fn advance_after_name(&mut self) -> LResult<()> {
        let bytes = self.src.as_bytes();
        let at = self.pos;
        self.tok = match bytes.get(at) {
            Some(b'.') if !bytes.get(at + 1).is_some_and(u8::is_ascii_digit) => Tok::Dot,
            Some(b'(') => Tok::LParen,
            Some(b')') => Tok::RParen,
            Some(b',') => Tok::Comma,
            _ => return self.advance(),
        };
        self.at = at;
        self.pos = at + 1;
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn unrecognized(&self, start: usize) -> Box<SyntaxError> {
        let ch = self.src.get(start..).and_then(|s| s.chars().next());
        let shown = ch.map_or_else(String::new, String::from);
        self.error(start, &format!("token recognition error at: '{shown}'"))
    }

    /// After a `.` token, when a name or `?` and a name follow it directly,
    /// as they mostly do: moves to the name (past the `?`) as `advance`
    /// would, and says whether there was a `?`. Otherwise changes nothing.
    pub(crate) fn name_after_dot(&mut self) -> Option<bool> {
        let bytes = self.src.as_bytes();
        let optional = bytes.get(self.pos) == Some(&b'?');
        let start = self.pos + usize::from(optional);
        let c = *bytes.get(start)?;
        if !(c.is_ascii_alphabetic() || c == b'_') || self.starts_string(start) {
            return None;
        }
        let end = ident_end(bytes, start + 1);
        let word = self.src.get(start..end)?;
        if matches!(word, "true" | "false" | "null" | "in") {
            return None;
        }
        self.at = start;
        self.pos = end;
        self.tok = Tok::Ident(word);
        Some(optional)
    }

    /// Whether a prefixed string literal (`r'…'`, `b"…"`) starts at `start`.
    fn starts_string(&self, start: usize) -> bool {
        let bytes = self.src.as_bytes();
        if !matches!(bytes.get(start), Some(b'r' | b'R' | b'b' | b'B')) {
            return false;
        }
        let (mut raw, mut is_bytes) = (false, false);
        for (i, &c) in bytes.iter().enumerate().skip(start) {
            match c {
                b'r' | b'R' if !raw => raw = true,
                b'b' | b'B' if !is_bytes => is_bytes = true,
                b'"' | b'\'' => return i > start,
                _ => return false,
            }
        }
        false
    }

    #[inline]
    fn ident_or_string(&mut self, start: usize) -> LResult<()> {
        let bytes = self.src.as_bytes();
        // String prefixes: r, b and both, in either order and case.
        if let Some(b'r' | b'R' | b'b' | b'B') = bytes.get(start) {
            let mut i = start;
            let (mut raw, mut is_bytes) = (false, false);
            while let Some(&c) = bytes.get(i) {
                match c {
                    b'r' | b'R' if !raw => raw = true,
                    b'b' | b'B' if !is_bytes => is_bytes = true,
                    b'"' | b'\'' if i > start => return self.string(start, i, raw, is_bytes),
                    _ => break,
                }
                i += 1;
            }
        }
        let end = ident_end(bytes, start + 1);
        self.pos = end;
        let word = self.src.get(start..end).unwrap_or("");
        self.tok = match word {
            "true" => Tok::True,
            "false" => Tok::False,
            "null" => Tok::Null,
            "in" => Tok::In,
            _ => Tok::Ident(word),
        };
        Ok(())
    }

    #[inline(never)]
    fn number(&mut self, start: usize) -> LResult<()> {
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
            self.int_suffix(end, value);
            return Ok(());
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
            self.tok = Tok::Double(value);
            return Ok(());
        }
        // Decimal digits only, so this is `text.parse::<u64>()`, quicker.
        let value = text
            .bytes()
            .try_fold(0u64, |v, d| {
                v.checked_mul(10)?
                    .checked_add(u64::from(d.wrapping_sub(b'0')))
            })
            .filter(|_| !text.is_empty())
            .ok_or_else(|| self.error(start, "invalid int literal"))?;
        self.int_suffix(end, value);
        Ok(())
    }

    fn int_suffix(&mut self, end: usize, value: u64) {
        if matches!(self.byte(end), Some(b'u' | b'U')) {
            self.pos = end + 1;
            self.tok = Tok::Uint(value);
        } else {
            self.pos = end;
            self.tok = Tok::Int(value);
        }
    }

    /// A quoted literal whose opening quote is at `quote`; `start` is where
    /// its prefix begins.
    #[inline(never)]
    fn string(&mut self, start: usize, quote: usize, raw: bool, bytes: bool) -> LResult<()> {
        let src = self.src.as_bytes();
        let q = src.get(quote).copied().unwrap_or(b'"');
        let triple = src.get(quote + 1) == Some(&q) && src.get(quote + 2) == Some(&q);
        let body_start = if triple { quote + 3 } else { quote + 1 };
        // Find the closing quote: escapes skip one character unless raw.
        // Without escapes or carriage returns the body is the literal.
        let mut plain = true;
        let mut i = body_start;
        let body_end = loop {
            // Ordinary bytes, eight at a time.
            while let Some(w) = swar::word(src, i) {
                let special = swar::special(w, q);
                if special != 0 {
                    i += swar::first(special);
                    break;
                }
                i += 8;
            }
            let Some(&c) = src.get(i) else {
                return Err(self.error(start, "unterminated string literal"));
            };
            match c {
                b'\\' if !raw => {
                    plain = false;
                    i += 2;
                    continue;
                }
                b'\n' | b'\r' if !triple => {
                    return Err(self.error(start, "unterminated string literal"));
                }
                b'\r' => plain = false,
                _ if c == q
                    && (!triple || (src.get(i + 1) == Some(&q) && src.get(i + 2) == Some(&q))) =>
                {
                    break i;
                }
                _ => {}
            }
            i += 1;
        };
        self.pos = if triple { body_end + 3 } else { body_end + 1 };
        let body = self.src.get(body_start..body_end).unwrap_or("");
        if plain {
            self.tok = if bytes {
                Tok::Bytes(Some(body.as_bytes()))
            } else {
                Tok::Str(Some(body))
            };
            return Ok(());
        }
        self.decode(start, body, raw, bytes)
    }

    /// A literal's body with escapes or carriage returns, decoded.
    #[inline(never)]
    fn decode(&mut self, start: usize, body: &str, raw: bool, bytes: bool) -> LResult<()> {
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
            self.decoded_bytes = decoded;
            self.tok = Tok::Bytes(None);
            return Ok(());
        }
        // Escapes in strings only produce valid code points, so this holds.
        self.decoded = String::from_utf8(decoded)
            .map_err(|_| self.error(start, "invalid UTF-8 in string literal"))?;
        self.tok = Tok::Str(None);
        Ok(())
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

    /// The tokens of `src`, decoded literals leaked so that they read
    /// like the others.
    fn tokens(src: &str) -> Result<Vec<Tok<'_>>, String> {
        let mut lexer = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            lexer.advance().map_err(|e| e.message)?;
            let tok = match lexer.tok {
                Tok::Eof => return Ok(out),
                Tok::Str(None) => Tok::Str(Some(String::leak(lexer.decoded.clone()))),
                Tok::Bytes(None) => Tok::Bytes(Some(Vec::leak(lexer.decoded_bytes.clone()))),
                tok => tok,
            };
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
            (
                "bytes",
                r"b'\xff\101'",
                vec![Tok::Bytes(Some(&[0xff, b'A']))],
            ),
            ("raw_bytes", r"rb'\x'", vec![Tok::Bytes(Some(br"\x"))]),
            ("bytes_utf8", "b'é'", vec![Tok::Bytes(Some("é".as_bytes()))]),
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
    fn word_test_agrees_with_byte_tests() {
        for b in 0..=255u8 {
            for at in 0..8 {
                for filler in [b'a', b'"', 0x80, b'\\'] {
                    let mut bytes = [filler; 8];
                    if let Some(slot) = bytes.get_mut(at) {
                        *slot = b;
                    }
                    let w = swar::word(&bytes, 0).unwrap_or(0);
                    for (i, &c) in bytes.iter().enumerate() {
                        let bit = 0x80u64 << (8 * i);
                        for q in [b'"', b'\''] {
                            let special = matches!(c, b'\\' | b'\n' | b'\r') || c == q;
                            assert_eq!(swar::special(w, q) & bit != 0, special, "{bytes:?}");
                        }
                    }
                }
            }
        }
        assert_eq!(swar::word(b"1234567", 0), None);
        assert_eq!(swar::first(0x80 << 16), 2);
    }

    #[test]
    fn long_names_and_literals() {
        let name = "aVeryLongIdentifier_with_digits_0123456789_and_more";
        assert_eq!(tokens(name), Ok(vec![Tok::Ident(name)]));
        assert_eq!(
            tokens("abcdefgh.ijklmnopq"),
            Ok(vec![
                Tok::Ident("abcdefgh"),
                Tok::Dot,
                Tok::Ident("ijklmnopq")
            ])
        );
        let cases = [
            (
                "'a long string literal, longer than a word'",
                "a long string literal, longer than a word",
            ),
            (
                r"'ends with an escape in the last word \n'",
                "ends with an escape in the last word \n",
            ),
            (
                "'héllo wörld, non-ASCII in every word: ééééé'",
                "héllo wörld, non-ASCII in every word: ééééé",
            ),
            (
                "'''a triple-quoted string with 'quotes' and\nlines'''",
                "a triple-quoted string with 'quotes' and\nlines",
            ),
            (
                r"r'raw \d+ strings keep backslashes \'",
                r"raw \d+ strings keep backslashes \",
            ),
        ];
        for (src, want) in cases {
            assert_eq!(tokens(src), Ok(vec![Tok::Str(Some(want))]), "{src}");
        }
        for src in [
            "'a string that never ends, longer than a word",
            "'a string broken by a newline,\n longer than a word'",
        ] {
            assert_eq!(tokens(src), Err("unterminated string literal".to_string()));
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
