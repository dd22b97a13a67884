//! `random(pattern)`: a random string matching a regular expression, as
//! Kyverno's `goregen` generates it. Supports literals, escapes, classes
//! (ranges, negation, `\d \w \s`, POSIX `[:alpha:]`), `.`, groups,
//! alternation and the repetitions `? * + {n} {n,} {n,m}`; unbounded
//! repetitions stop at 10 more, as goregen's default. Anchors generate
//! nothing. Sizes and nesting are bounded.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// Go's regexp/syntax limit on a repetition count.
const MAX_REPEAT: u32 = 1000;
/// goregen's `DefaultMaxUnboundedRepeatCount`.
const UNBOUNDED_EXTRA: u32 = 10;
const MAX_DEPTH: usize = 100;
const MAX_OUTPUT: usize = 100_000;
const MAX_STEPS: usize = 1_000_000;

#[derive(Debug, Clone)]
enum Node {
    Literal(char),
    /// Inclusive ranges; a negated class is stored already complemented
    /// over printable ASCII.
    Class(Vec<(char, char)>),
    Concat(Vec<Node>),
    Alternate(Vec<Node>),
    Repeat(Box<Node>, u32, u32),
    Empty,
}

/// Generates a string for `pattern`; the error text is Kyverno's.
pub(super) fn generate(pattern: &str) -> Result<String, String> {
    if pattern.is_empty() {
        return Err("no pattern provided".into());
    }
    let mut parser = Parser {
        chars: pattern.chars().collect(),
        pos: 0,
        pattern,
    };
    let node = parser.alternation(0)?;
    if parser.pos < parser.chars.len() {
        return Err(parser.error("unexpected )"));
    }
    let mut generator = Generator {
        rng: Rng::new(),
        out: String::new(),
        steps: 0,
    };
    generator.emit(&node, 0)?;
    Ok(generator.out)
}

/// Emits text for a parsed pattern, within bounds on output and work.
struct Generator {
    rng: Rng,
    out: String,
    steps: usize,
}

impl Generator {
    fn emit(&mut self, node: &Node, depth: usize) -> Result<(), String> {
        self.steps += 1;
        if self.steps > MAX_STEPS || depth > 4 * MAX_DEPTH + 10 {
            return Err("random: pattern is too complex".into());
        }
        if self.out.len() > MAX_OUTPUT {
            return Err("random: generated string is too long".into());
        }
        match node {
            Node::Literal(c) => self.out.push(*c),
            Node::Class(ranges) => {
                let size = |&(lo, hi): &(char, char)| {
                    u64::from(u32::from(hi)).saturating_sub(u64::from(u32::from(lo))) + 1
                };
                let total: u64 = ranges.iter().map(size).sum();
                let mut pick = self.rng.below(total);
                for range in ranges {
                    let width = size(range);
                    if pick < width {
                        let code =
                            u32::from(range.0).saturating_add(u32::try_from(pick).unwrap_or(0));
                        self.out.push(char::from_u32(code).unwrap_or(range.0));
                        break;
                    }
                    pick -= width;
                }
            }
            Node::Concat(items) => {
                for item in items {
                    self.emit(item, depth + 1)?;
                }
            }
            Node::Alternate(options) => {
                let count = u64::try_from(options.len()).unwrap_or(u64::MAX);
                let index = usize::try_from(self.rng.below(count)).unwrap_or(0);
                if let Some(option) = options.get(index) {
                    self.emit(option, depth + 1)?;
                }
            }
            Node::Repeat(inner, min, max) => {
                let span = u64::from(max.saturating_sub(*min)) + 1;
                let count = u64::from(*min) + self.rng.below(span);
                for _ in 0..count {
                    self.emit(inner, depth + 1)?;
                }
            }
            Node::Empty => {}
        }
        Ok(())
    }
}

struct Parser<'a> {
    chars: Vec<char>,
    pos: usize,
    pattern: &'a str,
}

impl Parser<'_> {
    fn error(&self, what: &str) -> String {
        format!("error parsing regexp: {what}: `{}`", self.pattern)
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn next(&mut self) -> Option<char> {
        let c = self.peek();
        if c.is_some() {
            self.pos += 1;
        }
        c
    }

    fn alternation(&mut self, depth: usize) -> Result<Node, String> {
        if depth > MAX_DEPTH {
            return Err(self.error("expression nests too deeply"));
        }
        let mut options = vec![self.concatenation(depth)?];
        while self.peek() == Some('|') {
            self.pos += 1;
            options.push(self.concatenation(depth)?);
        }
        Ok(if options.len() == 1 {
            options.pop().unwrap_or(Node::Empty)
        } else {
            Node::Alternate(options)
        })
    }

    fn concatenation(&mut self, depth: usize) -> Result<Node, String> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom(depth)?;
            let atom = self.repetitions(atom)?;
            items.push(atom);
        }
        Ok(Node::Concat(items))
    }

    fn atom(&mut self, depth: usize) -> Result<Node, String> {
        let Some(c) = self.next() else {
            return Ok(Node::Empty);
        };
        match c {
            '(' => {
                if self.peek() == Some('?') {
                    self.pos += 1;
                    self.group_flags()?;
                    if self.peek() == Some(')') {
                        // A flag group such as `(?i)`: no text.
                        self.pos += 1;
                        return Ok(Node::Empty);
                    }
                }
                let inner = self.alternation(depth + 1)?;
                if self.next() != Some(')') {
                    return Err(self.error("missing closing )"));
                }
                Ok(inner)
            }
            '[' => self.class(),
            '.' => Ok(Node::Class(vec![(' ', '~')])),
            '^' | '$' => Ok(Node::Empty),
            '\\' => self.escape(false),
            '*' | '+' | '?' => Err(self.error("missing argument to repetition operator")),
            c => Ok(Node::Literal(c)),
        }
    }

    /// After `(?`: a name (`P<name>`, `<name>`), flags (`i`, `-s`, …) or `:`.
    fn group_flags(&mut self) -> Result<(), String> {
        if self.peek() == Some('P') {
            self.pos += 1;
        }
        if self.peek() == Some('<') {
            while let Some(c) = self.next() {
                if c == '>' {
                    return Ok(());
                }
            }
            return Err(self.error("invalid named capture"));
        }
        while let Some(c) = self.peek() {
            match c {
                ':' => {
                    self.pos += 1;
                    return Ok(());
                }
                ')' => return Ok(()),
                'i' | 'm' | 's' | 'U' | '-' => self.pos += 1,
                _ => return Err(self.error("invalid or unsupported Perl syntax")),
            }
        }
        Err(self.error("missing closing )"))
    }

    fn repetitions(&mut self, atom: Node) -> Result<Node, String> {
        let mut node = atom;
        loop {
            let (min, max) = match self.peek() {
                Some('*') => {
                    self.pos += 1;
                    (0, UNBOUNDED_EXTRA)
                }
                Some('+') => {
                    self.pos += 1;
                    (1, UNBOUNDED_EXTRA)
                }
                Some('?') => {
                    self.pos += 1;
                    (0, 1)
                }
                Some('{') => match self.braces()? {
                    Some(bounds) => bounds,
                    None => return Ok(node),
                },
                _ => return Ok(node),
            };
            if matches!(node, Node::Repeat(..)) {
                // `a**` is an error in Go (a lazy `a*?` was taken below).
                return Err(self.error("invalid nested repetition operator"));
            }
            if self.peek() == Some('?') {
                self.pos += 1; // lazy: same strings
            }
            node = Node::Repeat(Box::new(node), min, max);
        }
    }

    /// `{n}`, `{n,}`, `{n,m}`; `None` (and no input taken) when the brace
    /// does not start a repetition, which Go reads as a literal `{`.
    fn braces(&mut self) -> Result<Option<(u32, u32)>, String> {
        let start = self.pos;
        let mut text = String::new();
        let mut end = None;
        for (offset, &c) in self.chars.iter().enumerate().skip(start + 1) {
            if c == '}' {
                end = Some(offset);
                break;
            }
            text.push(c);
        }
        let Some(end) = end else {
            return Ok(None);
        };
        let parse = |s: &str| -> Option<u32> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                None
            } else {
                Some(s.parse::<u32>().unwrap_or(u32::MAX))
            }
        };
        let bounds = match text.split_once(',') {
            None => parse(&text).map(|n| (n, n)),
            Some((lo, "")) => parse(lo).map(|n| (n, n.saturating_add(UNBOUNDED_EXTRA))),
            Some((lo, hi)) => parse(lo).zip(parse(hi)),
        };
        let Some((min, max)) = bounds else {
            return Ok(None);
        };
        let repeat: String = self
            .chars
            .get(start..=end)
            .unwrap_or_default()
            .iter()
            .collect();
        let explicit_max_too_big =
            matches!(text.split_once(','), Some((_, hi)) if !hi.is_empty()) && max > MAX_REPEAT;
        if min > MAX_REPEAT || explicit_max_too_big || max < min {
            return Err(format!(
                "error parsing regexp: invalid repeat count: `{repeat}`"
            ));
        }
        self.pos = end + 1;
        Ok(Some((min, max)))
    }

    /// After `\`: inside a class only single characters and `\d \w \s`
    /// make sense.
    fn escape(&mut self, in_class: bool) -> Result<Node, String> {
        let Some(c) = self.next() else {
            return Err(self.error("trailing backslash at end of expression"));
        };
        Ok(match c {
            'd' => Node::Class(vec![('0', '9')]),
            'D' => Node::Class(complement(&[('0', '9')])),
            'w' => Node::Class(word()),
            'W' => Node::Class(complement(&word())),
            's' => Node::Class(space()),
            'S' => Node::Class(complement(&space())),
            'b' | 'B' | 'A' | 'z' if !in_class => Node::Empty,
            'n' => Node::Literal('\n'),
            't' => Node::Literal('\t'),
            'r' => Node::Literal('\r'),
            'f' => Node::Literal('\u{c}'),
            'v' => Node::Literal('\u{b}'),
            'a' => Node::Literal('\u{7}'),
            c if c.is_ascii_punctuation() => Node::Literal(c),
            _ => return Err(self.error("invalid escape sequence")),
        })
    }

    fn class(&mut self) -> Result<Node, String> {
        let negated = self.peek() == Some('^');
        if negated {
            self.pos += 1;
        }
        let mut ranges: Vec<(char, char)> = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.next() else {
                return Err(self.error("missing closing ]"));
            };
            if c == ']' && !first {
                break;
            }
            first = false;
            let low = match c {
                '[' if self.peek() == Some(':') => {
                    let rest: String = self
                        .chars
                        .get(self.pos..)
                        .unwrap_or_default()
                        .iter()
                        .collect();
                    let Some(close) = rest.find(":]") else {
                        return Err(self.error("missing closing ]"));
                    };
                    let name = rest.get(1..close).unwrap_or_default();
                    let class =
                        posix(name).ok_or_else(|| self.error("invalid character class range"))?;
                    ranges.extend(class);
                    self.pos += rest.get(..close + 2).map_or(0, |s| s.chars().count());
                    continue;
                }
                '\\' => match self.escape(true)? {
                    Node::Literal(l) => l,
                    Node::Class(class) => {
                        ranges.extend(class);
                        continue;
                    }
                    _ => return Err(self.error("invalid escape sequence")),
                },
                c => c,
            };
            if self.peek() == Some('-') && self.chars.get(self.pos + 1).is_some_and(|&n| n != ']') {
                self.pos += 1;
                let high = match self.next() {
                    Some('\\') => match self.escape(true)? {
                        Node::Literal(h) => h,
                        _ => return Err(self.error("invalid character class range")),
                    },
                    Some(h) => h,
                    None => return Err(self.error("missing closing ]")),
                };
                if high < low {
                    return Err(self.error("invalid character class range"));
                }
                ranges.push((low, high));
            } else {
                ranges.push((low, low));
            }
        }
        let ranges = if negated { complement(&ranges) } else { ranges };
        if ranges.is_empty() {
            return Err("random: character class matches nothing printable".into());
        }
        Ok(Node::Class(ranges))
    }
}

fn word() -> Vec<(char, char)> {
    vec![('0', '9'), ('A', 'Z'), ('_', '_'), ('a', 'z')]
}

fn space() -> Vec<(char, char)> {
    vec![('\t', '\n'), ('\u{c}', '\r'), (' ', ' ')]
}

fn posix(name: &str) -> Option<Vec<(char, char)>> {
    Some(match name {
        "alnum" => vec![('0', '9'), ('A', 'Z'), ('a', 'z')],
        "alpha" => vec![('A', 'Z'), ('a', 'z')],
        "ascii" => vec![(' ', '~')],
        "blank" => vec![('\t', '\t'), (' ', ' ')],
        "digit" => vec![('0', '9')],
        "lower" => vec![('a', 'z')],
        "upper" => vec![('A', 'Z')],
        "space" => space(),
        "word" => word(),
        "xdigit" => vec![('0', '9'), ('A', 'F'), ('a', 'f')],
        "punct" => vec![('!', '/'), (':', '@'), ('[', '`'), ('{', '~')],
        "graph" | "print" => vec![('!', '~')],
        _ => return None,
    })
}

/// Printable ASCII not in `ranges`.
fn complement(ranges: &[(char, char)]) -> Vec<(char, char)> {
    let mut out: Vec<(char, char)> = Vec::new();
    for code in 0x20u8..=0x7e {
        let c = char::from(code);
        if ranges.iter().any(|&(lo, hi)| (lo..=hi).contains(&c)) {
            continue;
        }
        let extends_last = out
            .last()
            .is_some_and(|&(_, hi)| u32::from(hi) + 1 == u32::from(c));
        if extends_last {
            if let Some(last) = out.last_mut() {
                last.1 = c;
            }
        } else {
            out.push((c, c));
        }
    }
    out
}

static CALLS: AtomicU64 = AtomicU64::new(0);

/// xorshift64*, seeded from the clock and a call counter.
struct Rng(u64);

impl Rng {
    fn new() -> Self {
        let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| {
            u64::try_from(d.as_nanos() % u128::from(u64::MAX)).unwrap_or(0)
        });
        let count = CALLS.fetch_add(1, Ordering::Relaxed);
        let seed = nanos ^ count.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x2545_F491_4F6C_DD1D;
        Self(if seed == 0 { 1 } else { seed })
    }

    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// A number in `0..n` (0 when `n` is 0).
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::useless_vec)]
mod tests {
    use super::*;

    #[test]
    fn generated_strings_match_their_pattern() {
        let patterns = [
            "[a-z0-9]{6}",
            "[A-Z0-9]{8}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{4}-[A-Z0-9]{12}",
            "^prefix-[0-9a-f]{4,8}$",
            "(a|bc|d(e|f))+",
            "[[:alpha:]_]{3}\\.[^0-9]x*?",
            "\\w\\W\\s\\S\\d\\D",
            "a{2,}b{0}c?",
            "(?i)abc",
            "(?:x|y)(?P<n>z)",
            "[-a]{5}[a-]{5}",
        ];
        for pattern in patterns {
            for _ in 0..20 {
                let text = generate(pattern).unwrap();
                let anchored = regex_lite::Regex::new(&format!("^(?:{pattern})$")).unwrap();
                assert!(anchored.is_match(&text), "{pattern} gave {text:?}");
            }
        }
    }

    #[test]
    fn bad_patterns_are_errors() {
        for pattern in [
            "", "(a", "a)", "[a", "*a", "a{1001}", "a{3,2}", "[z-a]", "\\",
        ] {
            assert!(generate(pattern).is_err(), "{pattern}");
        }
    }

    #[test]
    fn sizes_are_bounded() {
        assert!(generate("(((a{1000}){1000}){1000})").is_err());
    }
}
