//! The ValidationRequest read in one pass of our own: the settings into a
//! [`Json`] that borrows from the text, the request into a `serde_json::Value`.
//!
//! serde_json reads through a visitor per value, and that dispatch was a
//! tenth of the guest's time on large rule sets. This reader takes the
//! common shape of a payload and nothing more: anything it does not take
//! (an error, escapes it does not decode, deep nesting, a duplicate field)
//! it gives up on, and the caller reads the text with serde_json instead,
//! for serde_json's result or its error message. So it must never accept
//! a text differently from serde_json; the fuzzer holds the two equal.

use std::borrow::Cow;

use serde_json::{Number, Value};

use super::{note_roles, object_of, Json, Map, Payload, Scanned};

/// Deeper than this, serde_json reads the text (it stops at 128).
const MAX_DEPTH: usize = 100;

/// The payload (a `request` that is absent or `null` is `None`); `None`
/// when serde_json must read the text.
pub(super) fn payload(text: &str) -> Option<Payload<'_>> {
    let mut reader = Reader {
        text,
        bytes: text.as_bytes(),
        at: 0,
        items: Vec::new(),
        entries: Vec::new(),
        values: Vec::new(),
        fields: Vec::new(),
        mentions_roles: false,
    };
    let mut request = None;
    let mut settings = None;
    reader.open(b'{', b'}', |reader| {
        let key = reader.key()?;
        match key.as_ref() {
            // serde refuses a field given twice.
            "request" if request.is_none() => request = Some(reader.value(1)?),
            "settings" if settings.is_none() => settings = Some(reader.settings(1)?),
            "request" | "settings" => return None,
            // serde reads other fields and ignores them.
            _ => {
                reader.value(1)?;
            }
        }
        Some(())
    })?;
    reader.skip_whitespace();
    if reader.at != reader.bytes.len() {
        return None;
    }
    Some(Payload {
        request: request.filter(|r| !r.is_null()),
        settings: Scanned {
            json: settings.unwrap_or(Json::Null),
            mentions_roles: reader.mentions_roles,
        },
    })
}

struct Reader<'a> {
    text: &'a str,
    bytes: &'a [u8],
    at: usize,
    /// Shared stacks the lists and objects being read collect into, so each
    /// is allocated once at its exact size.
    items: Vec<Json<'a>>,
    entries: Vec<(Cow<'a, str>, Json<'a>)>,
    values: Vec<Value>,
    fields: Vec<(String, Value)>,
    mentions_roles: bool,
}

impl<'a> Reader<'a> {
    fn skip_whitespace(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.at) {
            self.at += 1;
        }
    }

    fn next(&mut self) -> Option<u8> {
        let byte = *self.bytes.get(self.at)?;
        self.at += 1;
        Some(byte)
    }

    /// Reads a list or an object between `open` and `close`, calling `item`
    /// for each element (an object's elements read their own keys).
    fn open(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.skip_whitespace();
        if self.next()? != open {
            return None;
        }
        self.skip_whitespace();
        if self.bytes.get(self.at) == Some(&close) {
            self.at += 1;
            return Some(());
        }
        loop {
            item(self)?;
            self.skip_whitespace();
            match self.next()? {
                b',' => {}
                byte if byte == close => return Some(()),
                _ => return None,
            }
        }
    }

    /// An object's key and its colon.
    fn key(&mut self) -> Option<Cow<'a, str>> {
        self.skip_whitespace();
        if self.next()? != b'"' {
            return None;
        }
        let key = self.string()?;
        self.skip_whitespace();
        (self.next()? == b':').then_some(key)
    }

    /// A settings value.
    fn settings(&mut self, depth: usize) -> Option<Json<'a>> {
        self.skip_whitespace();
        match *self.bytes.get(self.at)? {
            b'"' => {
                self.at += 1;
                let text = self.string()?;
                note_roles(&mut self.mentions_roles, &text);
                Some(Json::String(text))
            }
            b'[' if depth < MAX_DEPTH => {
                let base = self.items.len();
                self.open(b'[', b']', |r| {
                    let item = r.settings(depth + 1)?;
                    r.items.push(item);
                    Some(())
                })?;
                Some(Json::Array(self.items.drain(base..).collect()))
            }
            b'{' if depth < MAX_DEPTH => {
                let base = self.entries.len();
                self.open(b'{', b'}', |r| {
                    let key = r.key()?;
                    let value = r.settings(depth + 1)?;
                    r.entries.push((key, value));
                    Some(())
                })?;
                Some(Json::Object(Map::of(self.entries.drain(base..))))
            }
            _ => match self.scalar()? {
                Value::Null => Some(Json::Null),
                Value::Bool(b) => Some(Json::Bool(b)),
                Value::Number(n) => Some(Json::Number(Box::new(n))),
                _ => None,
            },
        }
    }

    /// A request value, as [`super::BulkValue`] reads it.
    fn value(&mut self, depth: usize) -> Option<Value> {
        self.skip_whitespace();
        match *self.bytes.get(self.at)? {
            b'"' => {
                self.at += 1;
                Some(Value::String(self.string()?.into_owned()))
            }
            b'[' if depth < MAX_DEPTH => {
                let base = self.values.len();
                self.open(b'[', b']', |r| {
                    let item = r.value(depth + 1)?;
                    r.values.push(item);
                    Some(())
                })?;
                Some(Value::Array(self.values.drain(base..).collect()))
            }
            b'{' if depth < MAX_DEPTH => {
                let base = self.fields.len();
                self.open(b'{', b'}', |r| {
                    let key = r.key()?.into_owned();
                    let value = r.value(depth + 1)?;
                    r.fields.push((key, value));
                    Some(())
                })?;
                Some(Value::Object(object_of(self.fields.drain(base..))))
            }
            _ => self.scalar(),
        }
    }

    /// `null`, `true`, `false` or a number.
    fn scalar(&mut self) -> Option<Value> {
        let rest = self.bytes.get(self.at..)?;
        for (word, value) in [
            (&b"null"[..], Value::Null),
            (b"true", Value::Bool(true)),
            (b"false", Value::Bool(false)),
        ] {
            if rest.starts_with(word) {
                self.at += word.len();
                return Some(value);
            }
        }
        self.number().map(Value::Number)
    }

    /// A number: plain non-negative integers here, any other form read by
    /// serde_json from its text (so floats round exactly as serde_json's).
    fn number(&mut self) -> Option<Number> {
        let rest = self.bytes.get(self.at..)?;
        let digits = rest.iter().take_while(|b| b.is_ascii_digit()).count();
        let plain = matches!(digits, 1..=19)
            && (digits == 1 || rest.first() != Some(&b'0'))
            && !matches!(rest.get(digits), Some(b'.' | b'e' | b'E'));
        if plain {
            let n: u64 = self.text.get(self.at..self.at + digits)?.parse().ok()?;
            self.at += digits;
            return Some(n.into());
        }
        let len = rest
            .iter()
            .take_while(|b| matches!(b, b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E'))
            .count();
        if len == 0 {
            return None;
        }
        let number = serde_json::from_str(self.text.get(self.at..self.at + len)?).ok()?;
        self.at += len;
        Some(number)
    }

    /// The rest of a string whose opening quote has been read: borrowed
    /// when it has no escapes.
    fn string(&mut self) -> Option<Cow<'a, str>> {
        let start = self.at;
        let end = plain_end(self.bytes, start);
        match self.bytes.get(end)? {
            b'"' => {
                self.at = end + 1;
                Some(Cow::Borrowed(self.text.get(start..end)?))
            }
            b'\\' => self.unescape(start, end).map(Cow::Owned),
            // A control character, which JSON strings may not hold.
            _ => None,
        }
    }

    /// A string with escapes, from `start`, the first escape at `at`.
    fn unescape(&mut self, start: usize, mut at: usize) -> Option<String> {
        let mut out = String::with_capacity(at - start + 16);
        out.push_str(self.text.get(start..at)?);
        loop {
            match *self.bytes.get(at)? {
                b'"' => {
                    self.at = at + 1;
                    return Some(out);
                }
                b'\\' => {
                    let escape = *self.bytes.get(at + 1)?;
                    at += 2;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let unit = hex4(self.bytes.get(at..at + 4)?)?;
                            at += 4;
                            let code = if (0xD800..0xDC00).contains(&unit) {
                                // A surrogate pair, or serde_json's error.
                                if self.bytes.get(at..at + 2)? != b"\\u" {
                                    return None;
                                }
                                let low = hex4(self.bytes.get(at + 2..at + 6)?)?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return None;
                                }
                                at += 6;
                                0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)
                            } else {
                                unit
                            };
                            // A lone low surrogate is no char: serde_json's error.
                            out.push(char::from_u32(code)?);
                        }
                        _ => return None,
                    }
                }
                _ => return None,
            }
            let end = plain_end(self.bytes, at);
            out.push_str(self.text.get(at..end)?);
            at = end;
        }
    }
}

fn hex4(digits: &[u8]) -> Option<u32> {
    digits.iter().try_fold(0u32, |code, &d| {
        let nibble = char::from(d).to_digit(16)?;
        Some(code << 4 | nibble)
    })
}

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The first byte at or after `at` that ends a string's plain run: a quote,
/// a backslash or a control character; eight bytes at a time.
fn plain_end(bytes: &[u8], mut at: usize) -> usize {
    while let Some(chunk) = bytes.get(at..at + 8) {
        let word = <[u8; 8]>::try_from(chunk).map_or(0, u64::from_le_bytes);
        // A byte's high bit is set where it is zero after the xor (or below
        // 0x20); only the lowest such bit is exact, which is the one used.
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
        let hits = zero(word ^ (ONES * u64::from(b'"')))
            | zero(word ^ (ONES * u64::from(b'\\')))
            | (word.wrapping_sub(ONES * 0x20) & !word & HIGHS);
        if hits != 0 {
            return at + (hits.trailing_zeros() / 8) as usize;
        }
        at += 8;
    }
    while let Some(&byte) = bytes.get(at) {
        if byte == b'"' || byte == b'\\' || byte < 0x20 {
            return at;
        }
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_runs_end_where_a_byte_loop_ends_them() {
        let texts: [&[u8]; 8] = [
            b"",
            b"abc\"",
            b"0123456789abcdef\\x",
            b"0123456\"89",
            b"01234567\x1f9",
            "é€😀 plain unicode text, no end".as_bytes(),
            b"\x7f\x20\x21\x80\xff\"",
            b"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"",
        ];
        for text in texts {
            for start in 0..=text.len() {
                let want = (start..text.len())
                    .find(|&i| matches!(text[i], b'"' | b'\\') || text[i] < 0x20)
                    .unwrap_or(text.len());
                assert_eq!(plain_end(text, start), want, "{text:?} from {start}");
            }
        }
    }
}
