//! Go's `strconv.Quote`, for error messages that repeat Go's wording.

use std::fmt::Write as _;

/// Go's `strconv.Quote` (what `%q` prints).
pub fn go_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    push_quoted(&mut out, text);
    out.push('"');
    out
}

/// `strconv.Quote` of bytes that may not be UTF-8: each invalid byte is
/// `\xHH`, as Go prints a string cut inside a character.
pub fn go_quote_bytes(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for chunk in bytes.utf8_chunks() {
        push_quoted(&mut out, chunk.valid());
        for b in chunk.invalid() {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    out.push('"');
    out
}

fn push_quoted(out: &mut String, text: &str) {
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if u32::from(c) < 0x20 || u32::from(c) == 0x7f => {
                let _ = write!(out, "\\x{:02x}", u32::from(c));
            }
            c if !is_print(c) => {
                if u32::from(c) < 0x10000 {
                    let _ = write!(out, "\\u{:04x}", u32::from(c));
                } else {
                    let _ = write!(out, "\\U{:08x}", u32::from(c));
                }
            }
            c => out.push(c),
        }
    }
}

/// Go's `strconv.IsPrint` without its tables: control characters, the
/// spaces and separators other than U+0020, the format characters, the
/// private-use planes and the noncharacters are not printable. (Unassigned
/// code points, which Go also escapes, are printed as they are.)
fn is_print(c: char) -> bool {
    let n = u32::from(c);
    let unprintable = c.is_control()
        || (c.is_whitespace() && c != ' ')
        || matches!(
            n,
            0x00AD
                | 0x0600..=0x0605
                | 0x061C
                | 0x06DD
                | 0x070F
                | 0x0890..=0x0891
                | 0x08E2
                | 0x180E
                | 0x200B..=0x200F
                | 0x202A..=0x202E
                | 0x2060..=0x2064
                | 0x2066..=0x206F
                | 0xE000..=0xF8FF
                | 0xFEFF
                | 0xFFF9..=0xFFFB
                | 0x110BD
                | 0x110CD
                | 0x13430..=0x1343F
                | 0x1BCA0..=0x1BCA3
                | 0x1D173..=0x1D17A
                | 0xE0001
                | 0xE0020..=0xE007F
                | 0xF0000..=0x10FFFF
        )
        || (n & 0xFFFE) == 0xFFFE
        || (0xFDD0..=0xFDEF).contains(&n);
    !unprintable
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quotes_as_go_does() {
        let cases = [
            ("plain", "abc", "\"abc\""),
            ("escapes", "a\"b\\c\n\t", "\"a\\\"b\\\\c\\n\\t\""),
            ("control", "\u{1}\u{7f}", "\"\\x01\\x7f\""),
            ("non_ascii_printable", "é中", "\"é中\""),
            ("zero_width_space", "\u{200b}", "\"\\u200b\""),
            ("no_break_space", "\u{a0}", "\"\\u00a0\""),
            ("private_use_plane", "\u{f0000}", "\"\\U000f0000\""),
        ];
        for (name, text, want) in cases {
            assert_eq!(go_quote(text), want, "{name}");
        }
        assert_eq!(go_quote_bytes(b"%a\xc3"), "\"%a\\xc3\"");
    }
}
