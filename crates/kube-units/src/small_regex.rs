//! Go regexes of the shapes policies mostly write (`^[0-9]+%$`,
//! `^v[0-9].[0-9].[0-9]$`, `^(foo|bar)-.*`), matched without a regex
//! engine. policy-server runs every request on a fresh instance, where
//! compiling one with `regex-lite` and matching it costs about 15,000
//! instructions and several fresh pages; these take a few hundred.
//!
//! [`Small::compile`] accepts Go's RE2 syntax without flags, Unicode or
//! POSIX classes, octal or hexadecimal escapes, `\Q…\E`, or assertions
//! other than a leading `^` and `\b` / `\B` and a trailing `\b` / `\B`
//! and `$` (`\bps\b`) of a pattern without top-level alternatives, and
//! with at most `MAX_POSITIONS`
//! characters once counted repetitions are written out. Anything else is
//! `None` and left to `regex-lite`, which also gives Go's error for the
//! patterns Go refuses: nothing `Small` accepts is refused by Go.
//!
//! Only whether a text matches somewhere is answered, which greedy and
//! lazy repetition agree on. The pattern becomes a Glushkov automaton
//! (one state per character position) whose set of live states is a
//! bit set, so matching is linear in the text whatever the pattern.

/// Character positions a pattern may have (bit 0 of a state set is the
/// start).
const MAX_POSITIONS: usize = 127;

/// Atoms parsed, counted-repetition copies included: bounds the work of
/// patterns such as `((){1000}){1000}`, which add no positions.
const MAX_ATOMS: usize = 4096;

/// Go's `{n,m}` limit.
const MAX_REPEAT: u32 = 1000;

const DIGITS: &[(char, char)] = &[('0', '9')];
const WORD: &[(char, char)] = &[('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')];
/// Go's `\s`: `[\t\n\f\r ]`.
const SPACE: &[(char, char)] = &[('\t', '\n'), ('\x0C', '\r'), (' ', ' ')];

#[derive(Debug, Clone, Copy)]
enum Class {
    Char(char),
    /// `.`: any character but a newline.
    AnyButNewline,
    /// `ranges[start..end]`, or any character outside them.
    Set {
        negated: bool,
        start: usize,
        end: usize,
    },
}

/// A compiled small regex; see the module's documentation.
#[derive(Debug)]
pub struct Small {
    /// The class of position `p` is `classes[p - 1]`.
    classes: Vec<Class>,
    ranges: Vec<(char, char)>,
    /// The positions that may follow position `p`; `follow[0]` are those
    /// a match may start with.
    follow: Vec<u128>,
    /// The positions a match may end with; bit 0 when the empty text
    /// matches.
    last: u128,
    anchored_start: bool,
    anchored_end: bool,
    /// A leading `\b` (`Some(true)`) or `\B` (`Some(false)`): a match
    /// starts only where it holds.
    lead: Option<bool>,
    /// A trailing `\b` or `\B`: a match ends only where it holds.
    trail: Option<bool>,
}

impl Small {
    /// `pattern` (Go syntax) when it is in the subset this handles.
    pub fn compile(pattern: &str) -> Option<Small> {
        let mut parser = Parser {
            text: pattern,
            pos: 0,
            classes: Vec::new(),
            ranges: Vec::new(),
            follow: vec![0],
            atoms: 0,
            depth: 0,
            anchored_start: false,
            anchored_end: false,
            lead: None,
            trail: None,
        };
        let (whole, alternatives) = parser.alternation()?;
        if parser.pos != pattern.len() {
            // An unbalanced `)`.
            return None;
        }
        let asserts = parser.anchored_start
            || parser.anchored_end
            || parser.lead.is_some()
            || parser.trail.is_some();
        if asserts && alternatives > 1 {
            return None;
        }
        let mut follow = parser.follow;
        *follow.first_mut()? = whole.first;
        Some(Small {
            classes: parser.classes,
            ranges: parser.ranges,
            follow,
            last: whole.last | u128::from(whole.nullable),
            anchored_start: parser.anchored_start,
            anchored_end: parser.anchored_end,
            lead: parser.lead,
            trail: parser.trail,
        })
    }

    /// Whether `text` holds a match (Go's `MatchString`).
    pub fn is_match(&self, text: &str) -> bool {
        let mut chars = text.chars().peekable();
        let mut before = None;
        // Bit 0: a match may start here.
        let mut live = u128::from(holds(self.lead, None, chars.peek().copied()));
        if !self.anchored_end && self.ends(live, None, chars.peek().copied()) {
            return true;
        }
        while let Some(c) = chars.next() {
            let after = chars.peek().copied();
            let mut reachable = 0u128;
            for p in bits(live) {
                reachable |= self.follow.get(p).copied().unwrap_or(0);
            }
            let mut next = 0u128;
            for p in bits(reachable) {
                if self.accepts(p, c) {
                    next |= 1 << p;
                }
            }
            if !self.anchored_start && holds(self.lead, Some(c), after) {
                // A match may start at every character.
                next |= 1;
            }
            live = next;
            if live == 0 && self.anchored_start {
                return false;
            }
            if !self.anchored_end && self.ends(live, Some(c), after) {
                return true;
            }
            before = Some(c);
        }
        self.ends(live, before, None)
    }

    /// Whether a match ends between `before` and `after`.
    fn ends(&self, live: u128, before: Option<char>, after: Option<char>) -> bool {
        live & self.last != 0 && holds(self.trail, before, after)
    }

    fn accepts(&self, position: usize, c: char) -> bool {
        let Some(class) = position.checked_sub(1).and_then(|i| self.classes.get(i)) else {
            return false;
        };
        match *class {
            Class::Char(x) => x == c,
            Class::AnyButNewline => c != '\n',
            Class::Set {
                negated,
                start,
                end,
            } => {
                let ranges = self.ranges.get(start..end).unwrap_or_default();
                ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi) != negated
            }
        }
    }
}

/// Whether `\b` (`Some(true)`) or `\B` (`Some(false)`) holds between
/// `before` and `after` (the text's ends are not word characters; word
/// characters are ASCII, as in Go).
fn holds(assertion: Option<bool>, before: Option<char>, after: Option<char>) -> bool {
    let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
    assertion.is_none_or(|boundary| (word(before) != word(after)) == boundary)
}

/// The set bits of `set`, lowest first.
fn bits(mut set: u128) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        if set == 0 {
            return None;
        }
        let p = set.trailing_zeros() as usize;
        set &= set - 1;
        Some(p)
    })
}

/// What a part of the pattern contributes to the automaton.
#[derive(Debug, Clone, Copy)]
struct Fragment {
    first: u128,
    last: u128,
    nullable: bool,
}

const EMPTY: Fragment = Fragment {
    first: 0,
    last: 0,
    nullable: true,
};

enum Atom {
    Fragment(Fragment),
    /// `^` or `$`: zero-width, and takes no repetition.
    Anchor,
}

struct Parser<'p> {
    text: &'p str,
    pos: usize,
    classes: Vec<Class>,
    ranges: Vec<(char, char)>,
    follow: Vec<u128>,
    atoms: usize,
    depth: usize,
    anchored_start: bool,
    anchored_end: bool,
    lead: Option<bool>,
    trail: Option<bool>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.text.get(self.pos..)?.chars().next()
    }

    fn peek_second(&self) -> Option<char> {
        self.text.get(self.pos..)?.chars().nth(1)
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, prefix: &str) -> bool {
        let found = self
            .text
            .get(self.pos..)
            .is_some_and(|rest| rest.starts_with(prefix));
        if found {
            self.pos += prefix.len();
        }
        found
    }

    /// `a|b|…`, with the number of alternatives.
    fn alternation(&mut self) -> Option<(Fragment, usize)> {
        let mut whole = self.concatenation()?;
        let mut alternatives = 1;
        while self.peek() == Some('|') {
            self.bump();
            let next = self.concatenation()?;
            whole = Fragment {
                first: whole.first | next.first,
                last: whole.last | next.last,
                nullable: whole.nullable || next.nullable,
            };
            alternatives += 1;
        }
        Some((whole, alternatives))
    }

    fn concatenation(&mut self) -> Option<Fragment> {
        let mut whole = EMPTY;
        while !matches!(self.peek(), None | Some('|' | ')')) {
            let next = self.repetition()?;
            whole = self.concatenate(whole, next);
        }
        Some(whole)
    }

    fn concatenate(&mut self, a: Fragment, b: Fragment) -> Fragment {
        for p in bits(a.last) {
            if let Some(f) = self.follow.get_mut(p) {
                *f |= b.first;
            }
        }
        Fragment {
            first: a.first | if a.nullable { b.first } else { 0 },
            last: b.last | if b.nullable { a.last } else { 0 },
            nullable: a.nullable && b.nullable,
        }
    }

    /// `a` repeated: its last positions lead back to its first.
    fn loop_back(&mut self, a: Fragment) {
        for p in bits(a.last) {
            if let Some(f) = self.follow.get_mut(p) {
                *f |= a.first;
            }
        }
    }

    /// An atom and its quantifier, if any.
    fn repetition(&mut self) -> Option<Fragment> {
        let start = self.pos;
        let fragment = match self.atom()? {
            Atom::Anchor if self.at_quantifier() => return None,
            Atom::Anchor => return Some(EMPTY),
            Atom::Fragment(f) => f,
        };
        let Some((min, max)) = self.quantifier()? else {
            return Some(fragment);
        };
        // Lazy or greedy, the same texts match.
        if self.peek() == Some('?') {
            self.bump();
        }
        if self.at_quantifier() {
            // Go refuses `a**`; leave its error to `regex-lite`.
            return None;
        }
        let after = self.pos;
        let copies = max.unwrap_or(min.max(1));
        let mut whole = EMPTY;
        for i in 0..copies {
            let copy = if i == 0 {
                fragment
            } else {
                // Each copy has positions of its own: parse the atom again.
                self.pos = start;
                match self.atom()? {
                    Atom::Fragment(f) => f,
                    Atom::Anchor => return None,
                }
            };
            let copy = match max {
                None if i + 1 == copies => {
                    self.loop_back(copy);
                    Fragment {
                        nullable: copy.nullable || min == 0,
                        ..copy
                    }
                }
                Some(_) if i >= min => Fragment {
                    nullable: true,
                    ..copy
                },
                _ => copy,
            };
            whole = self.concatenate(whole, copy);
        }
        self.pos = after;
        Some(whole)
    }

    fn at_quantifier(&self) -> bool {
        matches!(self.peek(), Some('*' | '+' | '?' | '{'))
    }

    /// `*`, `+`, `?`, `{n}`, `{n,}` or `{n,m}` as (min, max); `Some(None)`
    /// for none, `None` for a brace this does not read.
    #[allow(clippy::option_option)]
    fn quantifier(&mut self) -> Option<Option<(u32, Option<u32>)>> {
        let bounds = match self.peek() {
            Some('*') => (0, None),
            Some('+') => (1, None),
            Some('?') => (0, Some(1)),
            Some('{') => {
                // Go's counts, read as `to_regex_lite` reads them; `taken`
                // ends with the `}`, which the bump below takes.
                let rest = self.text.get(self.pos + 1..)?;
                let (min, max, taken) = crate::re2::repetition(rest.chars())?;
                let count = |n: u64| u32::try_from(n).ok().filter(|&n| n <= MAX_REPEAT);
                let min = count(min)?;
                let max = match max {
                    Some(max) => Some(count(max)?),
                    None => None,
                };
                if max.is_some_and(|max| max < min) {
                    return None;
                }
                self.pos += taken;
                (min, max)
            }
            _ => return Some(None),
        };
        self.bump();
        Some(Some(bounds))
    }

    fn atom(&mut self) -> Option<Atom> {
        self.atoms += 1;
        if self.atoms > MAX_ATOMS {
            return None;
        }
        let start = self.pos;
        let at_start = start == 0;
        let class = match self.bump()? {
            '(' => return self.group().map(Atom::Fragment),
            '[' => self.class()?,
            '.' => Class::AnyButNewline,
            '^' if at_start => {
                self.anchored_start = true;
                return Some(Atom::Anchor);
            }
            '$' if self.pos == self.text.len() => {
                self.anchored_end = true;
                return Some(Atom::Anchor);
            }
            '\\' if matches!(self.peek(), Some('b' | 'B')) => {
                let boundary = self.bump() == Some('b');
                let leading = start == 0 || (start == 1 && self.anchored_start);
                let rest = self.text.get(self.pos..).unwrap_or_default();
                if leading && self.lead.is_none() {
                    self.lead = Some(boundary);
                } else if matches!(rest, "" | "$") && self.trail.is_none() {
                    self.trail = Some(boundary);
                } else {
                    // A word boundary inside the pattern.
                    return None;
                }
                return Some(Atom::Anchor);
            }
            '\\' => self.escape()?,
            // Anchors elsewhere, repetitions with nothing to repeat, and
            // brackets Go may read as literals: left to `regex-lite`.
            '^' | '$' | ')' | '*' | '+' | '?' | '{' | '}' | ']' => return None,
            c => Class::Char(c),
        };
        self.position(class).map(Atom::Fragment)
    }

    fn position(&mut self, class: Class) -> Option<Fragment> {
        if self.classes.len() >= MAX_POSITIONS {
            return None;
        }
        self.classes.push(class);
        self.follow.push(0);
        let bit = 1u128 << self.classes.len();
        Some(Fragment {
            first: bit,
            last: bit,
            nullable: false,
        })
    }

    /// After `(`: `(?:…)`, `(?P<name>…)`, `(?<name>…)` or `(…)`.
    fn group(&mut self) -> Option<Fragment> {
        if !self.eat("?:") && (self.eat("?P<") || self.eat("?<")) {
            let start = self.pos;
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
            {
                self.bump();
            }
            if self.pos == start || !self.eat(">") {
                return None;
            }
        }
        if self.peek() == Some('?') {
            // Flags such as `(?i)`.
            return None;
        }
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let (inner, _) = self.alternation()?;
        self.depth -= 1;
        self.eat(")").then_some(inner)
    }

    /// `\x` outside a class.
    fn escape(&mut self) -> Option<Class> {
        let set = |parser: &mut Self, ranges: &[(char, char)], negated: bool| {
            let start = parser.ranges.len();
            parser.ranges.extend_from_slice(ranges);
            Class::Set {
                negated,
                start,
                end: parser.ranges.len(),
            }
        };
        Some(match self.bump()? {
            'd' => set(self, DIGITS, false),
            'D' => set(self, DIGITS, true),
            'w' => set(self, WORD, false),
            'W' => set(self, WORD, true),
            's' => set(self, SPACE, false),
            'S' => set(self, SPACE, true),
            c => Class::Char(escaped_char(c)?),
        })
    }

    /// After `[`: the class up to its `]`.
    fn class(&mut self) -> Option<Class> {
        let negated = self.peek() == Some('^');
        if negated {
            self.bump();
        }
        let start = self.ranges.len();
        let mut first = true;
        loop {
            let c = self.bump()?;
            if c == ']' && !first {
                break;
            }
            let lo = match c {
                // Nested classes, POSIX classes and Rust's set operations
                // read differently in Go and in `regex-lite`.
                '[' | '&' | '~' => return None,
                '-' if !first && self.peek() != Some(']') => return None,
                '\\' => match self.bump()? {
                    'd' => {
                        self.ranges.extend_from_slice(DIGITS);
                        first = false;
                        continue;
                    }
                    'w' => {
                        self.ranges.extend_from_slice(WORD);
                        first = false;
                        continue;
                    }
                    's' => {
                        self.ranges.extend_from_slice(SPACE);
                        first = false;
                        continue;
                    }
                    e => escaped_char(e)?,
                },
                c => c,
            };
            first = false;
            let hi = if self.peek() == Some('-') && !matches!(self.peek_second(), Some(']') | None)
            {
                self.bump();
                let hi = match self.bump()? {
                    '[' | '&' | '~' | '-' => return None,
                    '\\' => escaped_char(self.bump()?)?,
                    c => c,
                };
                if hi < lo {
                    return None;
                }
                hi
            } else {
                lo
            };
            self.ranges.push((lo, hi));
        }
        Some(Class::Set {
            negated,
            start,
            end: self.ranges.len(),
        })
    }
}

/// The character `\c` stands for, for the escapes this reads.
fn escaped_char(c: char) -> Option<char> {
    Some(match c {
        't' => '\t',
        'n' => '\n',
        'r' => '\r',
        'f' => '\x0C',
        'v' => '\x0B',
        c if c.is_ascii_punctuation() => c,
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_regexes_match_as_go_matches_them() {
        let cases: &[(&str, &str, &str, bool)] = &[
            ("percent", "^[0-9]+%$", "49%", true),
            ("percent_needs_digits", "^[0-9]+%$", "%", false),
            ("percent_anchored_end", "^[0-9]+%$", "49%x", false),
            ("percent_anchored_start", "^[0-9]+%$", "x49%", false),
            (
                "alternatives_in_group",
                "^([1-9]|[1-4][0-9]|5[0])%$",
                "50%",
                true,
            ),
            (
                "alternatives_in_group_miss",
                "^([1-9]|[1-4][0-9]|5[0])%$",
                "51%",
                false,
            ),
            (
                "unanchored_finds_inside",
                "docker.io",
                "a/docker.io/b",
                true,
            ),
            ("dot_is_any_char", "^v[0-9].[0-9]$", "v1x2", true),
            ("dot_is_not_newline", "^a.b$", "a\nb", false),
            ("empty_pattern_matches_all", "", "anything", true),
            ("star_matches_empty", "^a*$", "", true),
            ("plus_needs_one", "^a+$", "", false),
            ("counted_exact", "^a{3}$", "aaa", true),
            ("counted_exact_too_many", "^a{3}$", "aaaa", false),
            ("counted_range", "^(ab){1,2}$", "abab", true),
            ("counted_range_too_many", "^(ab){1,2}$", "ababab", false),
            ("counted_at_least", "^x{2,}$", "xxxxx", true),
            ("counted_at_least_too_few", "^x{2,}$", "x", false),
            ("counted_zero", "^ab{0}c$", "ac", true),
            ("lazy_is_the_same", "^a+?b$", "aab", true),
            ("negated_class", "^[^/]+$", "a/b", false),
            ("negated_class_takes_newline", "^[^a]$", "\n", true),
            ("digit_escape", r"^\d\d$", "42", true),
            (
                "space_escape_leaves_out_vertical_tab",
                r"^\s$",
                "\x0B",
                false,
            ),
            ("not_space", r"^\S+$", "ab", true),
            ("word_class", r"^\w+$", "a_1", true),
            ("escaped_dot", r"^a\.b$", "axb", false),
            ("class_with_escapes", r"^[\w.-]+$", "a.b-c", true),
            ("leading_dash_in_class", "^[-a]+$", "-a-", true),
            ("trailing_dash_in_class", "^[a-]+$", "a-", true),
            ("closing_bracket_first_in_class", "^[]a]+$", "]a", true),
            ("named_group", "^(?P<n>a|b)c$", "bc", true),
            ("non_capturing_group", "^(?:a|b)+$", "abba", true),
            ("unicode_literal", "^é+$", "éé", true),
            ("nullable_alternative", "a|", "zzz", true),
            ("end_anchor_only", "b$", "ab", true),
            ("end_anchor_only_miss", "b$", "ba", false),
            (
                "word_boundaries_find_a_word",
                r"\bps\b",
                "sh -c ps aux",
                true,
            ),
            (
                "word_boundaries_skip_a_longer_word",
                r"\bps\b",
                "psql",
                false,
            ),
            ("word_boundary_at_the_text_start", r"\bps", "ps", true),
            (
                "word_boundary_after_underscore_fails",
                r"\bps",
                "_ps",
                false,
            ),
            ("not_word_boundary_inside_a_word", r"\Bs\B", "ps", false),
            ("not_word_boundary_between_letters", r"\Bs\B", "pso", true),
            ("word_boundary_alone_needs_a_word", r"\b", "--", false),
            ("word_boundary_alone_finds_a_word", r"\b", "-a-", true),
            ("anchored_word_boundary", r"^\bx\b$", "x", true),
        ];
        for (name, pattern, text, want) in cases {
            let small = Small::compile(pattern).unwrap_or_else(|| panic!("{name}: not compiled"));
            assert_eq!(small.is_match(text), *want, "{name}");
        }
    }

    #[test]
    fn patterns_outside_the_subset_are_left_to_the_regex_engine() {
        let cases = [
            ("flags", "(?i)abc"),
            ("word_boundary_inside", r"a\bb"),
            ("word_boundary_with_top_level_alternatives", r"\ba|b"),
            ("repeated_word_boundary", r"\b*a"),
            ("unicode_class", r"\pL"),
            ("hex_escape", r"\x41"),
            ("octal_escape", r"\141"),
            ("quoted_text", r"\Qa.b\E"),
            ("posix_class", "[[:alpha:]]"),
            ("nested_repetition", "a**"),
            ("nothing_to_repeat", "*a"),
            ("anchor_inside", "a^b"),
            ("anchor_with_top_level_alternatives", "^a|b"),
            ("unbalanced_open", "(a"),
            ("unbalanced_close", "a)"),
            ("unclosed_class", "[a"),
            ("reversed_range", "[z-a]"),
            ("brace_go_reads_as_literal", "a{,2}"),
            ("repeat_beyond_go_limit", "a{1001}"),
            ("count_with_a_leading_zero_is_text_in_go", "a{01}"),
            ("too_many_positions", "a{200}"),
            ("empty_repetition_blowup", "((){1000}){1000}"),
            ("trailing_backslash", "a\\"),
            ("backreference", r"(a)\1"),
            ("rust_set_operation", "[a&&b]"),
        ];
        for (name, pattern) in cases {
            assert!(Small::compile(pattern).is_none(), "{name}");
        }
    }

    /// A small deterministic generator (xorshift), so failures reproduce.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }

        fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
            items[(self.next() % items.len() as u64) as usize]
        }
    }

    /// Random patterns of up to `max_pieces` of `pieces`, each tried on
    /// random texts of `alphabet`: wherever `Small` compiles a pattern,
    /// `regex-lite` (reading it through `re2::to_regex_lite`, as the
    /// module's callers do) compiles it too and agrees on every text.
    /// Returns how many patterns were compared and how many both refused.
    fn differential(
        seed: u64,
        pieces: &[&str],
        max_pieces: u64,
        alphabet: &[&str],
    ) -> (usize, usize) {
        let mut rng = Rng(seed);
        let (mut compared, mut refused_by_both) = (0, 0);
        for _ in 0..30_000 {
            let len = 1 + rng.next() % max_pieces;
            let pattern: String = (0..len).map(|_| rng.pick(pieces)).collect();
            let lite = regex_lite::Regex::new(&crate::re2::to_regex_lite(&pattern));
            let Some(small) = Small::compile(&pattern) else {
                refused_by_both += usize::from(lite.is_err());
                continue;
            };
            let lite = lite.unwrap_or_else(|e| panic!("{pattern:?}: go refuses it: {e}"));
            for _ in 0..15 {
                let len = rng.next() % 7;
                let text: String = (0..len).map(|_| rng.pick(alphabet)).collect();
                assert_eq!(
                    small.is_match(&text),
                    lite.is_match(&text),
                    "{pattern:?} on {text:?}"
                );
            }
            compared += 1;
        }
        (compared, refused_by_both)
    }

    #[test]
    fn small_agrees_with_regex_lite_on_random_patterns() {
        let tokens = [
            "a", "b", "c", "%", "-", "/", ".", r"\.", r"\d", r"\w", r"\s", r"\S", r"\D", "[a-c]",
            "[^b]", "[0-9]", "[]a]", "[-b]", "[a-]", r"[\w.]", "(", ")", "(?:", "(?P<n>", "|", "*",
            "+", "?", "??", "*?", "{2}", "{1,3}", "{0,}", "{0}", "{2,}", "^", "$", "é", r"\-",
            r"\$", "[^\n]", "{", "}", "]", "{01}", "{1,02}", "{x}", "{,2}", r"\b", r"\B",
        ];
        let alphabet = [
            "a", "b", "c", "%", "-", "/", ".", "0", "7", " ", "\n", "\x0B", "é", "_",
        ];
        let (compared, refused_by_both) =
            differential(0x9E37_79B9_7F4A_7C15, &tokens, 8, &alphabet);
        // The generator must exercise both sides.
        assert!(compared > 2_000, "only {compared} patterns compared");
        assert!(refused_by_both > 1_000, "only {refused_by_both} refused");
    }

    /// Patterns of random characters, mostly the syntax's own.
    #[test]
    fn small_agrees_with_regex_lite_on_random_characters() {
        let chars = [
            "a", "b", "(", ")", "[", "]", "{", "}", "|", "*", "+", "?", "^", "$", "\\", ".", "-",
            ",", "0", "1", "2", ":", "P", "p", "d", "D", "w", "s", "<", ">", "_", "é", "n", "x",
        ];
        let alphabet = ["a", "b", "-", ".", "0", "1", " ", "\n", "é", "_", "]", "{"];
        let (compared, _) = differential(0x2545_F491_4F6C_DD1D, &chars, 10, &alphabet);
        assert!(compared > 1_000, "only {compared} patterns compared");
    }
}
