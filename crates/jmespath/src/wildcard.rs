//! Kyverno's wildcard matching: `*` matches any run of characters (also
//! none), `?` exactly one character; everything else matches itself.
//! Case-sensitive, over Unicode scalar values, as Go's `go-wildcard` does.

/// Whether `text` contains a wildcard character.
pub fn has_wildcard(text: &str) -> bool {
    text.contains(['*', '?'])
}

/// Matches `text` against `pattern` in O(len(text) * len(pattern)) at worst,
/// without recursion (a pathological `*a*a*a*b` must not blow the stack).
pub fn matches(pattern: &str, text: &str) -> bool {
    if pattern == "*" {
        return true;
    }
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = text.chars().collect();
    let (mut pi, mut ti) = (0usize, 0usize);
    // Where the last `*` was seen, and the text position it is retried from.
    let mut star: Option<(usize, usize)> = None;
    while ti < t.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ti));
                pi += 1;
            }
            Some(&c) if c == '?' || Some(&c) == t.get(ti) => {
                pi += 1;
                ti += 1;
            }
            _ => match star {
                Some((sp, st)) => {
                    pi = sp + 1;
                    ti = st + 1;
                    star = Some((sp, st + 1));
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == '*'))
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
}
