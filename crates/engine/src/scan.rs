//! Substring tests for the texts every request walks (patterns, messages,
//! expressions). `str::contains` sets up a two-way search per call, which
//! in wasm costs more than the short scans these texts need.

/// A fixed word to look for, with its least common byte picked when it is
/// written (see `commonness`): the scan jumps between occurrences of
/// that byte, so `element` is found through its `m`, not every `e`.
#[derive(Debug, Clone, Copy)]
pub struct Needle {
    text: &'static str,
    /// Where the anchor byte sits in `text`.
    offset: usize,
    anchor: u8,
}

impl Needle {
    pub const fn new(text: &'static str) -> Self {
        let (mut offset, mut anchor) = (0, 0);
        let (mut rest, mut at) = (text.as_bytes(), 0);
        while let [byte, tail @ ..] = rest {
            if at == 0 || commonness(*byte) < commonness(anchor) {
                (offset, anchor) = (at, *byte);
            }
            (rest, at) = (tail, at + 1);
        }
        Self {
            text,
            offset,
            anchor,
        }
    }
}

/// A variable's `{{`, and its closing `}}`.
pub const OPEN: Needle = Needle::new("{{");
pub const CLOSE: Needle = Needle::new("}}");
/// An escaped variable, `\{{`, which Kyverno leaves as it is.
pub const ESCAPED_OPEN: Needle = Needle::new("\\{{");
/// A reference to another field of the pattern, `$(./name)`.
pub const REFERENCE: Needle = Needle::new("$(");
/// The CEL variable that needs the namespace read.
pub const NAMESPACE_OBJECT: Needle = Needle::new("namespaceObject");

/// Whether `needle` occurs in `text`.
pub fn contains(text: &str, needle: &Needle) -> bool {
    positions(text, needle).next().is_some()
}

/// Where `needle` starts in `text`, in order (overlapping matches too). An
/// empty needle is never found: the engine looks only for fixed words.
pub fn positions<'t>(text: &'t str, needle: &Needle) -> impl Iterator<Item = usize> + 't {
    let bytes = text.as_bytes();
    let Needle {
        text: wanted,
        offset,
        anchor,
    } = *needle;
    let wanted = wanted.as_bytes();
    memchr::memchr_iter(anchor, bytes)
        .filter_map(move |at| at.checked_sub(offset))
        .filter(move |&start| bytes.get(start..start + wanted.len()) == Some(wanted))
        .take_while(move |_| !wanted.is_empty())
}

/// How often a byte turns up in policy text, roughly (higher is more
/// often): spaces, dots and quotes, then lowercase letters by their
/// frequency in English; anything else is rare.
const fn commonness(byte: u8) -> u8 {
    match byte {
        b' ' | b'.' | b'"' => 30,
        b'e' => 26,
        b't' => 25,
        b'a' => 24,
        b'o' => 23,
        b'i' => 22,
        b'n' => 21,
        b's' => 20,
        b'r' => 19,
        b'h' => 18,
        b'l' => 17,
        b'd' => 16,
        b'c' => 15,
        b'u' => 14,
        b'm' => 13,
        b'f' => 12,
        b'p' => 11,
        b'g' => 10,
        b'w' => 9,
        b'y' => 8,
        b'b' => 7,
        b'v' => 6,
        b'k' => 5,
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_what_str_contains_finds() {
        let cases: [(&str, &'static str); 13] = [
            ("{{ x }}", "{{"),
            ("a{ {b", "{{"),
            ("\\{{ x }}", "\\{{"),
            ("object.metadata", "namespaceObject"),
            ("namespaceObject.metadata", "namespaceObject"),
            ("elementelement0", "element"),
            ("", "x"),
            ("é{{", "{{"),
            ("$(./name)", "$("),
            ("element0 element1 elem", "element"),
            ("mmm element", "element"),
            ("m", "element"),
            ("spec.template.spec", "spec.template"),
        ];
        for (text, word) in cases {
            let needle = &Needle::new(word);
            assert_eq!(
                contains(text, needle),
                text.contains(word),
                "{text} / {word}"
            );
            let want: Vec<usize> = text.match_indices(word).map(|(at, _)| at).collect();
            let got: Vec<usize> = positions(text, needle).collect();
            // `match_indices` does not overlap; these needles cannot overlap.
            assert_eq!(got, want, "{text} / {word}");
        }
    }
}
