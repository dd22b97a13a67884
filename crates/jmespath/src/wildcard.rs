//! Kyverno's wildcard matching: `*` matches any run of characters (also
//! none), `?` exactly one character; everything else matches itself.
//! Case-sensitive, over Unicode scalar values, as Go's `go-wildcard` does.

/// Whether `text` contains a wildcard character.
pub fn has_wildcard(text: &str) -> bool {
    text.contains(['*', '?'])
}

/// Matches `text` against `pattern`. The pattern is cut at its stars: the
/// first piece must start the text, the last end it, and each piece between
/// is found leftmost after the one before (which is all a star needs). A
/// piece without `?` is found with the standard library's linear substring
/// search, one with `?` by a bit-parallel scan: no backtracking, so a long
/// hostile pattern against a long value costs O(text × piece / 64) at
/// worst, not O(text × pattern).
pub fn matches(pattern: &str, text: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    let mut pieces = pattern.split('*');
    let first = pieces.next().unwrap_or_default();
    let Some(rest) = pattern.get(first.len()..).filter(|r| !r.is_empty()) else {
        // No star: the whole text, piece for piece.
        return strip_prefix(text, first).is_some_and(str::is_empty);
    };
    let Some(mut text) = strip_prefix(text, first) else {
        return false;
    };
    // `rest` starts with a star; the piece after the last star ends the text.
    let (middle, last) = match rest.rfind('*') {
        Some(i) => (
            rest.get(..i).unwrap_or_default(),
            rest.get(i + 1..).unwrap_or_default(),
        ),
        None => ("", rest),
    };
    let Some(end) = strip_suffix(text, last) else {
        return false;
    };
    text = end;
    for piece in middle.split('*').filter(|p| !p.is_empty()) {
        match find(text, piece) {
            Some(after) => text = text.get(after..).unwrap_or_default(),
            None => return false,
        }
    }
    true
}

/// `text` without a leading `piece` (`?` matching any one character).
fn strip_prefix<'t>(text: &'t str, piece: &str) -> Option<&'t str> {
    let mut chars = text.char_indices();
    for p in piece.chars() {
        let (_, c) = chars.next()?;
        if p != '?' && p != c {
            return None;
        }
    }
    Some(
        chars
            .next()
            .map_or("", |(i, _)| text.get(i..).unwrap_or_default()),
    )
}

/// `text` without a trailing `piece` (`?` matching any one character).
fn strip_suffix<'t>(text: &'t str, piece: &str) -> Option<&'t str> {
    let mut chars = text.char_indices().rev();
    let mut cut = text.len();
    for p in piece.chars().rev() {
        let (i, c) = chars.next()?;
        if p != '?' && p != c {
            return None;
        }
        cut = i;
    }
    text.get(..cut)
}

/// The byte offset just past the leftmost match of `piece` in `text`.
fn find(text: &str, piece: &str) -> Option<usize> {
    if !piece.contains('?') {
        return text.find(piece).map(|i| i + piece.len());
    }
    // Shift-And over characters: bit k of `state` says that the piece's
    // first k+1 characters end at the current character.
    let piece: Vec<char> = piece.chars().collect();
    let words = piece.len().div_ceil(64);
    let mut any = vec![0u64; words];
    let mut masks: Vec<(char, Vec<u64>)> = Vec::new();
    for (k, &c) in piece.iter().enumerate() {
        if c == '?' {
            set(&mut any, k);
        } else if !masks.iter().any(|(m, _)| *m == c) {
            masks.push((c, Vec::new()));
        }
    }
    for (c, mask) in &mut masks {
        *mask = any.clone();
        for (k, p) in piece.iter().enumerate() {
            if p == c {
                set(mask, k);
            }
        }
    }
    masks.sort_by_key(|(c, _)| *c);
    let last = piece.len() - 1;
    let mut state = vec![0u64; words];
    for (i, c) in text.char_indices() {
        let mask = match masks.binary_search_by_key(&c, |(m, _)| *m) {
            Ok(found) => masks.get(found).map_or(&any, |(_, m)| m),
            Err(_) => &any,
        };
        let mut carry = 1u64;
        for (word, m) in state.iter_mut().zip(mask) {
            let next_carry = *word >> 63;
            *word = ((*word << 1) | carry) & m;
            carry = next_carry;
        }
        if state
            .get(last / 64)
            .is_some_and(|w| w >> (last % 64) & 1 == 1)
        {
            return Some(i + c.len_utf8());
        }
    }
    None
}

fn set(bits: &mut [u64], k: usize) {
    if let Some(word) = bits.get_mut(k / 64) {
        *word |= 1 << (k % 64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcard_cases() {
        let cases = [
            ("star_matches_empty", "*", "", true),
            ("star_matches_anything", "*", "nginx:1.2", true),
            ("question_needs_one_char", "?", "", false),
            ("question_matches_one_char", "?", "a", true),
            ("question_star_needs_a_char", "?*", "", false),
            ("question_star_matches_text", "?*", "abc", true),
            ("suffix_match", "*:latest", "nginx:latest", true),
            ("suffix_mismatch", "*:latest", "nginx:1.0", false),
            ("infix_star", "ghcr.io/*/app", "ghcr.io/org/app", true),
            ("literal_is_exact", "abc", "abd", false),
            ("case_sensitive", "ABC", "abc", false),
            ("empty_pattern_matches_only_empty", "", "", true),
            ("empty_pattern_rejects_text", "", "a", false),
            ("backtracking", "*a*b", "xaxxaxb", true),
            ("backtracking_fails", "*a*b", "xaxxax", false),
            ("unicode_char_counts_once", "?", "é", true),
            ("trailing_stars", "a**", "a", true),
        ];
        for (name, pattern, text, want) in cases {
            assert_eq!(matches(pattern, text), want, "{name}");
        }
    }

    #[test]
    fn pathological_pattern_is_fast_and_correct() {
        let pattern = "*a".repeat(50) + "b";
        let text = "a".repeat(5000);
        assert!(!matches(&pattern, &text));
    }

    #[test]
    fn pieces_between_stars_are_found_in_order() {
        let cases = [
            ("question_in_middle_piece", "*a?c*", "xxabcxx", true),
            ("question_piece_not_found", "*a?c*", "xxacxx", false),
            ("question_piece_unicode", "*é?é*", "xéxéx", true),
            ("pieces_in_order", "*ab*cd*", "xxabyycdzz", true),
            ("pieces_out_of_order", "*cd*ab*", "xxabyycdzz", false),
            ("prefix_and_suffix_do_not_overlap", "ab*ba", "aba", false),
            ("prefix_and_suffix_meet", "ab*ba", "abba", true),
            ("suffix_with_question", "*?b", "b", false),
            ("suffix_with_question_matches", "*?b", "ab", true),
            (
                "long_question_piece",
                &format!("*{}b*", "?".repeat(70)),
                &format!("{}b", "a".repeat(70)),
                true,
            ),
            (
                "long_question_piece_short_text",
                &format!("*{}b*", "?".repeat(70)),
                &format!("{}b", "a".repeat(69)),
                false,
            ),
            ("star_question_star", "*?*", "", false),
            ("star_question_star_one", "*?*", "x", true),
        ];
        for (name, pattern, text, want) in cases {
            assert_eq!(matches(pattern, text), want, "{name}");
        }
    }

    /// The textbook backtracking matcher, to compare with.
    fn reference(pattern: &[char], text: &[char]) -> bool {
        match pattern.split_first() {
            None => text.is_empty(),
            Some(('*', rest)) => (0..=text.len()).any(|i| reference(rest, &text[i..])),
            Some((&p, rest)) => text
                .split_first()
                .is_some_and(|(&c, tail)| (p == '?' || p == c) && reference(rest, tail)),
        }
    }

    #[test]
    fn agrees_with_a_backtracking_matcher_on_random_inputs() {
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = |n: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % n
        };
        let alphabet = ['a', 'b', 'é', '*', '?'];
        for _ in 0..20_000 {
            let pattern: Vec<char> = (0..next(8)).map(|_| alphabet[next(5) as usize]).collect();
            let text: Vec<char> = (0..next(8)).map(|_| alphabet[next(3) as usize]).collect();
            let (p, t): (String, String) = (pattern.iter().collect(), text.iter().collect());
            assert_eq!(
                matches(&p, &t),
                reference(&pattern, &text),
                "{p:?} vs {t:?}"
            );
        }
    }

    #[test]
    fn long_pieces_against_long_values_do_not_backtrack() {
        // O(text × pattern) matchers take minutes here; pieces are found
        // in a single pass over the text.
        let n = 60_000;
        let text = "a".repeat(2 * n);
        for pattern in [
            format!("*{}b", "a".repeat(n)),
            format!("*{}b*", "?".repeat(n)),
            format!("*{}b*c", "a?".repeat(n / 2)),
        ] {
            assert!(!matches(&pattern, &text));
        }
        assert!(matches(&format!("*{}", "a".repeat(n)), &text));
    }
}
