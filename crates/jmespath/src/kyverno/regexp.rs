//! `regex_match`, `regex_replace_all` and `regex_replace_all_literal` with
//! Go's `regexp` semantics: unanchored matching, Go's replacement loop for
//! empty matches and Go's `$name` / `${name}` expansion.

use std::cell::RefCell;
use std::rc::Rc;

use kube_units::small_regex::Small;
use regex_lite::{Captures, Regex};
use serde_json::Value;

use crate::arguments::{arg, generic, iface_to_string, invalid_type, string_arg, FunctionError};

thread_local! {
    /// Engines compiled on this instance, by pattern: a projection calls a
    /// regex function once per element, with the same pattern.
    static ENGINES: RefCell<Vec<(Box<str>, Rc<Regex>)>> = const { RefCell::new(Vec::new()) };
}

/// Enough for the distinct patterns of a policy; beyond, compile each time.
const CACHED_ENGINES: usize = 32;

/// The engine for `pattern`: one compiled earlier on this instance, or
/// compiled now (and kept, while there is room).
fn engine(pattern: &str) -> Result<Rc<Regex>, String> {
    let cached = ENGINES.with(|cache| {
        cache.try_borrow().ok().and_then(|c| {
            c.iter()
                .find(|(p, _)| &**p == pattern)
                .map(|(_, r)| r.clone())
        })
    });
    if let Some(regex) = cached {
        return Ok(regex);
    }
    let regex = Rc::new(compile(pattern)?);
    // A counted repetition can make a short pattern a large engine: only
    // what stays small is kept.
    if pattern.len() > 256 || pattern.contains('{') {
        return Ok(regex);
    }
    ENGINES.with(|cache| {
        if let Ok(mut cache) = cache.try_borrow_mut() {
            if cache.len() < CACHED_ENGINES {
                cache.push((pattern.into(), regex.clone()));
            }
        }
    });
    Ok(regex)
}

/// Compiles `pattern`, with Go's error prefix.
fn compile(pattern: &str) -> Result<Regex, String> {
    kube_units::re2::for_regex_lite(pattern)
        .and_then(|text| Regex::new(&text).map_err(|e| e.to_string()))
        .map_err(|e| format!("error parsing regexp: {e}"))
}

/// `regex_match(regex, string|number)`: `regexp.Match`, so the error of a
/// bad regex is Go's, without the function prefix.
pub(super) fn is_match(args: &[Value]) -> Result<Value, FunctionError> {
    let name = "regex_match";
    let pattern = string_arg(name, args, 0)?;
    let text =
        iface_to_string(arg(args, 1)).ok_or_else(|| invalid_type(name, 2, "String or Real"))?;
    // Most policy regexes are small enough to match without building an
    // engine (a fresh instance per request pays for every build).
    if let Some(small) = Small::compile(pattern) {
        return Ok(Value::Bool(small.is_match(&text)));
    }
    let regex = engine(pattern).map_err(FunctionError::new)?;
    Ok(Value::Bool(regex.is_match(&text)))
}

/// `regex_replace_all(regex, src, repl)` and its `_literal` twin.
pub(super) fn replace_all(
    name: &str,
    args: &[Value],
    literal: bool,
) -> Result<Value, FunctionError> {
    let pattern = string_arg(name, args, 0)?;
    let text =
        iface_to_string(arg(args, 1)).ok_or_else(|| invalid_type(name, 2, "String or Real"))?;
    let replacement =
        iface_to_string(arg(args, 2)).ok_or_else(|| invalid_type(name, 3, "String or Real"))?;
    let regex = engine(pattern).map_err(|e| generic(name, e))?;
    Ok(Value::String(go_replace_all(
        &regex,
        &text,
        &replacement,
        literal,
    )))
}

/// Go's `Regexp.replaceAll`: after a match, an empty match at the same
/// position is not replaced, and the search always moves on.
fn go_replace_all(regex: &Regex, text: &str, replacement: &str, literal: bool) -> String {
    let names: Vec<Option<&str>> = regex.capture_names().collect();
    let mut out = String::with_capacity(text.len());
    let mut last_match_end = 0usize;
    let mut search_pos = 0usize;
    while search_pos <= text.len() {
        let Some(captures) = regex.captures_at(text, search_pos) else {
            break;
        };
        let Some(whole) = captures.get(0) else {
            break;
        };
        let (start, end) = (whole.start(), whole.end());
        out.push_str(text.get(last_match_end..start).unwrap_or_default());
        if end > last_match_end || start == 0 {
            if literal {
                out.push_str(replacement);
            } else {
                expand(&mut out, replacement, &captures, &names);
            }
        }
        last_match_end = end;
        let width = text
            .get(search_pos..)
            .and_then(|rest| rest.chars().next())
            .map_or(0, char::len_utf8);
        if search_pos + width > end {
            search_pos += width;
        } else if search_pos + 1 > end {
            search_pos += 1;
        } else {
            search_pos = end;
        }
    }
    out.push_str(text.get(last_match_end..).unwrap_or_default());
    out
}

/// Go's `Regexp.expand`: `$$` is `$`; `$name` takes the longest run of
/// letters, digits and `_` (so `$1x` names the group `1x`); `${name}` is
/// explicit; a number is a group index; an unknown group expands to nothing;
/// a `$` that starts no valid name stays as it is.
fn expand(out: &mut String, template: &str, captures: &Captures<'_>, names: &[Option<&str>]) {
    let mut rest = template;
    while let Some(dollar) = rest.find('$') {
        out.push_str(rest.get(..dollar).unwrap_or_default());
        rest = rest.get(dollar + 1..).unwrap_or_default();
        if let Some(after) = rest.strip_prefix('$') {
            out.push('$');
            rest = after;
            continue;
        }
        let Some((name, number, after)) = extract(rest) else {
            out.push('$');
            continue;
        };
        rest = after;
        match number {
            Some(index) => {
                if let Some(group) = captures.get(index) {
                    out.push_str(group.as_str());
                }
            }
            None => {
                for (index, group_name) in names.iter().enumerate() {
                    if *group_name == Some(name) {
                        if let Some(group) = captures.get(index) {
                            out.push_str(group.as_str());
                            break;
                        }
                    }
                }
            }
        }
    }
    out.push_str(rest);
}

/// Go's `extract`: the name after a `$` (already removed), whether it is a
/// group number, and the text after it.
fn extract(text: &str) -> Option<(&str, Option<usize>, &str)> {
    let (braced, body) = match text.strip_prefix('{') {
        Some(body) => (true, body),
        None => (false, text),
    };
    let end = body
        .char_indices()
        .find(|&(_, c)| !c.is_alphanumeric() && c != '_')
        .map_or(body.len(), |(i, _)| i);
    if end == 0 {
        return None;
    }
    let name = body.get(..end)?;
    let mut rest = body.get(end..)?;
    if braced {
        rest = rest.strip_prefix('}')?;
    }
    let mut number: Option<usize> = Some(0);
    for b in name.bytes() {
        number = match number {
            Some(n) if b.is_ascii_digit() && n < 100_000_000 => {
                Some(n * 10 + usize::from(b - b'0'))
            }
            _ => None,
        };
        if number.is_none() {
            break;
        }
    }
    if name.len() > 1 && name.starts_with('0') {
        number = None;
    }
    Some((name, number, rest))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::useless_vec)]
mod tests {
    use super::*;

    #[test]
    fn expansion_follows_go() {
        let regex = Regex::new(r"(?P<first>\w+) (\w+)").unwrap();
        let cases = [
            ("index", "$2 $1", "world hello"),
            ("braced_index", "${2}x", "worldx"),
            ("name", "$first!", "hello!"),
            ("greedy_name", "$1x", ""),
            ("double_dollar", "$$1", "$1"),
            ("lone_dollar", "a$", "a$"),
            ("dollar_space", "$ x", "$ x"),
            ("unclosed_brace", "${1", "${1"),
            ("leading_zero_is_a_name", "$01", ""),
            ("missing_group", "[$9]", "[]"),
        ];
        for (case, template, want) in cases {
            assert_eq!(
                go_replace_all(&regex, "hello world", template, false),
                want,
                "{case}"
            );
        }
    }

    #[test]
    fn patterns_are_read_as_go_reads_them() {
        let cases = [
            ("space_is_not_vertical_tab", r"\s", "\u{b}", false),
            ("space", r"a\sb", "a b", true),
            ("quoted_text", r"^\Qa.b\E$", "a.b", true),
            ("quoted_text_is_literal", r"^\Qa.b\E$", "axb", false),
            ("octal_code", r"^\141$", "a", true),
        ];
        for (case, pattern, text, want) in cases {
            let got = is_match(&[Value::from(pattern), Value::from(text)]).unwrap();
            assert_eq!(got, Value::Bool(want), "{case}");
        }
    }

    #[test]
    fn replace_loop_handles_empty_matches() {
        let cases = [
            ("star", "a*", "baaac", "XbXcX"),
            ("empty_pattern", "", "ab", "XaXbX"),
            ("unicode_advances_by_char", "", "é", "XéX"),
            ("no_match", "z", "abc", "abc"),
        ];
        for (case, pattern, text, want) in cases {
            let regex = Regex::new(pattern).unwrap();
            assert_eq!(go_replace_all(&regex, text, "X", true), want, "{case}");
        }
    }
}
