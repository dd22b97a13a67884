//! Go's RE2 regex syntax, rewritten where the `regex-lite` engine reads
//! the same text differently: Go's `\s` leaves out `\v`, `\Q…\E` quotes
//! literal text, `\0`, `\012` or `\141` are octal character codes, and
//! `\<` and `\>` are the characters, not word boundaries.
//! Anything else is passed on unchanged (an escape `regex-lite` does not
//! know still fails to compile, as most do in Go).

use std::borrow::Cow;

/// Go's `\s`: `[\t\n\f\r ]` (no vertical tab), as the members of a class.
const SPACE: &str = r"\t\n\x0C\r ";

/// `pattern` in the syntax `regex-lite` reads as Go reads `pattern`.
pub fn to_regex_lite(pattern: &str) -> Cow<'_, str> {
    if !pattern.contains(['\\', '[', '{']) {
        return Cow::Borrowed(pattern);
    }
    let mut out = String::with_capacity(pattern.len() + 8);
    let mut chars = pattern.chars().peekable();
    // Whether the text is inside `[...]`.
    let mut class = false;
    while let Some(c) = chars.next() {
        if c != '\\' {
            match (c, class) {
                ('[', false) => {
                    out.push(c);
                    // `[^` and a leading `]` belong to the opening.
                    if let Some(&'^') = chars.peek() {
                        out.push('^');
                        chars.next();
                    }
                    if let Some(&']') = chars.peek() {
                        out.push(']');
                        chars.next();
                    }
                    class = true;
                }
                ('[', true) => {
                    if let Some(&':') = chars.peek() {
                        // `[:alpha:]` inside a class: copied whole.
                        out.push(c);
                        for d in chars.by_ref() {
                            out.push(d);
                            if d == ']' {
                                break;
                            }
                        }
                    } else {
                        // Go has no nested classes: `[` is itself.
                        out.push_str("\\[");
                    }
                }
                // Go has no class set operations (`&&`, `~~`): the
                // characters are themselves.
                ('&' | '~', true) => {
                    out.push('\\');
                    out.push(c);
                }
                (']', true) => {
                    class = false;
                    out.push(c);
                }
                // Go reads a `{` that does not open a repetition as itself;
                // `regex-lite` refuses it or reads `{,n}` and `{01}` as
                // repetitions.
                ('{', false) if repetition(chars.clone()).is_none() => out.push_str("\\{"),
                _ => out.push(c),
            }
            continue;
        }
        let Some(e) = chars.next() else {
            // A trailing backslash: left for the engine to refuse.
            out.push('\\');
            break;
        };
        match e {
            's' if class => out.push_str(SPACE),
            's' => {
                out.push('[');
                out.push_str(SPACE);
                out.push(']');
            }
            'S' if !class => {
                out.push_str("[^");
                out.push_str(SPACE);
                out.push(']');
            }
            'Q' if !class => {
                // Literal text up to `\E` or the end.
                while let Some(q) = chars.next() {
                    if q == '\\' && matches!(chars.peek(), Some(&'E')) {
                        chars.next();
                        break;
                    }
                    push_literal(&mut out, q);
                }
            }
            '0'..='7' => {
                // `\0` and `\1`–`\7` followed by an octal digit take up to
                // three digits; a lone `\1`–`\7` is a backreference, which
                // neither engine has.
                let lone = e != '0' && !matches!(chars.peek(), Some('0'..='7'));
                if lone {
                    out.push('\\');
                    out.push(e);
                    continue;
                }
                let mut code = e.to_digit(8).unwrap_or(0);
                for _ in 0..2 {
                    let Some(digit) = chars.peek().and_then(|d| d.to_digit(8)) else {
                        break;
                    };
                    code = code * 8 + digit;
                    chars.next();
                }
                out.push_str(&format!("\\x{{{code:X}}}"));
            }
            // Go reads an escaped punctuation mark as itself; `regex-lite`
            // reads `\<` and `\>` as word boundaries.
            '<' | '>' => out.push(e),
            _ => {
                out.push('\\');
                out.push(e);
            }
        }
    }
    Cow::Owned(out)
}

/// Go's `parseRepeat` on the text after a `{`: `n}`, `n,}` or `n,m}`, with
/// numbers without leading zeros. The minimum, the maximum (`None` for
/// `n,}`) and how many characters the counts and the `}` take.
pub(crate) fn repetition(
    mut rest: impl Iterator<Item = char>,
) -> Option<(u64, Option<u64>, usize)> {
    let mut taken = 0;
    // A number, and the character after its digits.
    let mut number = |rest: &mut dyn Iterator<Item = char>| -> Option<(u64, Option<char>)> {
        let first = rest.next()?.to_digit(10)?;
        taken += 1;
        let mut value = u64::from(first);
        let mut digits = 1;
        loop {
            let next = rest.next();
            taken += usize::from(next.is_some());
            match next.and_then(|c| c.to_digit(10)) {
                // No leading zeros.
                Some(_) if first == 0 && digits == 1 => return None,
                Some(d) => {
                    value = value.saturating_mul(10).saturating_add(u64::from(d));
                    digits += 1;
                }
                None => return Some((value, next)),
            }
        }
    };
    let (min, after) = number(&mut rest)?;
    let bounds = match after? {
        '}' => (min, Some(min)),
        ',' => {
            let mut rest = rest.peekable();
            if rest.peek() == Some(&'}') {
                taken += 1;
                (min, None)
            } else {
                match number(&mut rest)? {
                    (max, Some('}')) => (min, Some(max)),
                    _ => return None,
                }
            }
        }
        _ => return None,
    };
    Some((bounds.0, bounds.1, taken))
}

/// `pattern` as `regex-lite` should read it ([`to_regex_lite`]), or Go's
/// error for a pattern Go refuses that `regex-lite` would compile
/// (`refused_by_go`).
pub fn for_regex_lite(pattern: &str) -> Result<Cow<'_, str>, String> {
    match refused_by_go(pattern) {
        Some(e) => Err(e),
        None => Ok(to_regex_lite(pattern)),
    }
}

/// Go's error for a pattern Go refuses and `regex-lite` compiles: stacked
/// repetitions (`a**`, `a{2}{3}`), counts over 1,000 or a minimum over the
/// maximum, and flags other than `imsU` (`(?x)`). `None` for the others,
/// which both read alike (or both refuse).
fn refused_by_go(pattern: &str) -> Option<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let text = |range: std::ops::Range<usize>| -> String {
        chars.get(range).unwrap_or_default().iter().collect()
    };
    let mut i = 0;
    // Where the repetition just before started, if the last token was one.
    let mut last_repeat: Option<usize> = None;
    while let Some(&c) = chars.get(i) {
        let start = i;
        i += 1;
        let repeat_end = match c {
            '\\' => {
                if chars.get(i) == Some(&'Q') {
                    // Quoted text up to `\E`.
                    while i < chars.len()
                        && !(chars.get(i) == Some(&'\\') && chars.get(i + 1) == Some(&'E'))
                    {
                        i += 1;
                    }
                    i += 2;
                } else {
                    i += 1;
                }
                None
            }
            '[' => {
                i = class_end(&chars, i);
                None
            }
            '(' if chars.get(i) == Some(&'?') => {
                i += 1;
                if !matches!(chars.get(i), Some(':' | '<' | 'P')) {
                    while let Some(&f) = chars.get(i) {
                        i += 1;
                        match f {
                            ')' | ':' => break,
                            'i' | 'm' | 's' | 'U' | '-' => {}
                            _ => {
                                return Some(format!(
                                    "invalid or unsupported Perl syntax: `{}`",
                                    text(start..i)
                                ))
                            }
                        }
                    }
                }
                None
            }
            '*' | '+' | '?' => Some(i),
            '{' => match repetition(chars.get(i..).unwrap_or_default().iter().copied()) {
                Some((min, max, taken)) => {
                    i += taken;
                    if min > 1000 || max.is_some_and(|max| max > 1000 || max < min) {
                        return Some(format!("invalid repeat count: `{}`", text(start..i)));
                    }
                    Some(i)
                }
                None => None,
            },
            _ => None,
        };
        last_repeat = match repeat_end {
            Some(mut end) => {
                // A lazy `?` belongs to the repetition.
                if chars.get(end) == Some(&'?') {
                    end += 1;
                }
                i = end;
                if let Some(previous) = last_repeat {
                    return Some(format!(
                        "invalid nested repetition operator: `{}`",
                        text(previous..end)
                    ));
                }
                Some(start)
            }
            None => None,
        };
    }
    None
}

/// The index after the `]` that closes a class whose `[` ends before
/// `at` (a leading `^` and `]` belong to the opening; `[:name:]` is one
/// member; escapes are skipped).
fn class_end(chars: &[char], mut at: usize) -> usize {
    if chars.get(at) == Some(&'^') {
        at += 1;
    }
    if chars.get(at) == Some(&']') {
        at += 1;
    }
    while let Some(&c) = chars.get(at) {
        at += 1;
        match c {
            ']' => return at,
            '\\' => at += 1,
            '[' if chars.get(at) == Some(&':') => {
                while let Some(&d) = chars.get(at) {
                    at += 1;
                    if d == ']' {
                        break;
                    }
                }
            }
            _ => {}
        }
    }
    at
}

/// `c` as a literal of the regex syntax.
fn push_literal(out: &mut String, c: char) {
    if c.is_ascii_punctuation() {
        out.push('\\');
    }
    out.push(c);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_syntax_is_rewritten_where_regex_lite_reads_it_otherwise() {
        let cases = [
            ("no_escape_is_borrowed", "a.b*", "a.b*"),
            ("space_leaves_out_vertical_tab", r"a\sb", r"a[\t\n\x0C\r ]b"),
            ("not_space", r"\S+", r"[^\t\n\x0C\r ]+"),
            ("space_in_a_class", r"[\sx]", r"[\t\n\x0C\r x]"),
            ("quoted_text", r"\Qa.b\E+", r"a\.b+"),
            ("quoted_to_the_end", r"x\Q(*", r"x\(\*"),
            ("octal_three_digits", r"\141", r"\x{61}"),
            ("octal_zero", r"\0", r"\x{0}"),
            ("octal_stops_at_three", r"\1411", r"\x{61}1"),
            ("octal_zero_then_eight", r"\08", r"\x{0}8"),
            ("lone_backreference_kept", r"\1", r"\1"),
            (
                "other_escapes_kept",
                r"\d\w\b\.\x{41}\pL",
                r"\d\w\b\.\x{41}\pL",
            ),
            (
                "closing_bracket_first_in_class",
                r"[]\s]",
                r"[]\t\n\x0C\r ]",
            ),
            ("negated_class", r"[^\s]", r"[^\t\n\x0C\r ]"),
            (
                "posix_class_kept",
                r"[[:alpha:]\s]",
                r"[[:alpha:]\t\n\x0C\r ]",
            ),
            ("trailing_backslash_kept", "a\\", "a\\"),
            ("escaped_angle_brackets_are_literal", r"\<a\>", "<a>"),
            ("nested_bracket_is_itself_in_a_class", "[[a]", r"[\[a]"),
            (
                "set_operators_are_themselves_in_a_class",
                "[a&&b~~c]",
                r"[a\&\&b\~\~c]",
            ),
            ("ampersand_outside_a_class_kept", "a&&b", "a&&b"),
            ("repetition_kept", "a{2}b{1,}c{0,3}", "a{2}b{1,}c{0,3}"),
            (
                "brace_without_a_count_is_itself",
                "^{[A-Z]+}$",
                r"^\{[A-Z]+}$",
            ),
            ("brace_without_a_minimum_is_itself", "a{,3}", r"a\{,3}"),
            ("brace_with_a_leading_zero_is_itself", "a{01}", r"a\{01}"),
            (
                "brace_with_a_leading_zero_maximum_is_itself",
                "a{1,02}",
                r"a\{1,02}",
            ),
            ("zero_count_kept", "a{0}b{0,0}", "a{0}b{0,0}"),
            ("brace_at_the_end_is_itself", "a{", r"a\{"),
            ("brace_unclosed_is_itself", "a{2", r"a\{2"),
            ("brace_in_a_class_kept", "[{]", "[{]"),
            ("escaped_angle_bracket_in_a_class", r"[\<x]", "[<x]"),
        ];
        for (name, go, lite) in cases {
            assert_eq!(to_regex_lite(go), lite, "{name}");
        }
    }

    #[test]
    fn patterns_go_refuses_and_regex_lite_compiles_are_refused_with_gos_error() {
        let cases = [
            (
                "stacked_stars",
                "a**",
                Some("invalid nested repetition operator: `**`"),
            ),
            (
                "stacked_after_lazy",
                "a*?+",
                Some("invalid nested repetition operator: `*?+`"),
            ),
            (
                "stacked_counts",
                "a{2}{3}",
                Some("invalid nested repetition operator: `{2}{3}`"),
            ),
            (
                "count_over_go_limit",
                "a{1001}",
                Some("invalid repeat count: `{1001}`"),
            ),
            (
                "maximum_over_go_limit",
                "a{2,1001}",
                Some("invalid repeat count: `{2,1001}`"),
            ),
            (
                "minimum_over_maximum",
                "a{3,2}",
                Some("invalid repeat count: `{3,2}`"),
            ),
            (
                "extended_flag",
                "(?x) a",
                Some("invalid or unsupported Perl syntax: `(?x`"),
            ),
            ("lazy_star", "a*?", None),
            ("lazy_count", "a{2,3}?b+", None),
            ("star_then_literal_brace", "a*{x}", None),
            ("stars_in_a_class", "[**]+", None),
            ("escaped_stars", r"a\*\*", None),
            ("quoted_stars", r"\Qa**\E", None),
            ("flags", "(?i)a(?s:.)(?-m)b", None),
            ("named_group", "(?P<n>a)+(?<m>b)*", None),
            ("count_at_go_limit", "a{1000}", None),
            // Not a repetition in Go: the brace is itself.
            ("maximum_with_a_leading_zero", "a{1,02}", None),
            ("posix_class", "[[:alpha:]]+", None),
        ];
        for (name, pattern, want) in cases {
            assert_eq!(refused_by_go(pattern).as_deref(), want, "{name}");
        }
    }

    /// What the rewrites are for: `regex-lite` then matches as Go does.
    #[test]
    fn rewritten_patterns_match_as_go_matches_them() {
        let cases = [
            ("escaped_angle_bracket", r"^\<$", "<", true),
            ("no_word_boundary", r"\<a", "a", false),
            ("nested_bracket", "^[[a]+$", "[a[", true),
            ("set_operator", "^[a&&b]$", "&", true),
            ("set_operator_tilde", "^[a~~b]$", "~", true),
            ("brace_as_itself", "^{[A-Z_]+}$", "{HOME}", true),
            ("no_repetition_without_a_minimum", "^a{,3}$", "a{,3}", true),
            ("repetition", "^a{2}$", "aa", true),
        ];
        for (name, pattern, text, want) in cases {
            let regex = regex_lite::Regex::new(&to_regex_lite(pattern))
                .unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(regex.is_match(text), want, "{name}");
        }
    }
}
