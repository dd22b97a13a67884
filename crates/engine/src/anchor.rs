//! Kyverno anchors on pattern keys: `(key)` conditional, `=(key)` equality,
//! `^(key)` existence, `X(key)` negation, `<(key)` global, and `+(key)`
//! (add-if-not-present, a mutate anchor that validate patterns cannot use).

/// What an anchor on a pattern key asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnchorKind {
    Condition,
    Equality,
    Existence,
    Negation,
    Global,
    AddIfNotPresent,
}

impl AnchorKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Condition => "conditional",
            Self::Equality => "equality",
            Self::Existence => "existence",
            Self::Negation => "negation",
            Self::Global => "global",
            Self::AddIfNotPresent => "add-if-not-present",
        }
    }
}

/// A pattern key with its anchor removed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Anchor<'a> {
    pub kind: AnchorKind,
    pub key: &'a str,
}

/// Parses `^(?P<modifier>[+<=X^])?\((?P<key>.+)\)$` as Kyverno does; a key
/// that does not have this shape is a plain key.
pub fn parse(raw: &str) -> Option<Anchor<'_>> {
    let (kind, rest) = match raw.as_bytes().first()? {
        b'(' => (AnchorKind::Condition, raw),
        b'=' => (AnchorKind::Equality, raw.get(1..)?),
        b'^' => (AnchorKind::Existence, raw.get(1..)?),
        b'X' => (AnchorKind::Negation, raw.get(1..)?),
        b'<' => (AnchorKind::Global, raw.get(1..)?),
        b'+' => (AnchorKind::AddIfNotPresent, raw.get(1..)?),
        _ => return None,
    };
    let key = rest.strip_prefix('(')?.strip_suffix(')')?;
    if key.is_empty() {
        return None;
    }
    Some(Anchor { kind, key })
}

/// A key that looks like an anchor but is not one Kyverno can read
/// (`=(`, `X()`, `(a`): worth a settings error rather than a silent plain key.
pub fn malformed(raw: &str) -> Option<String> {
    if parse(raw).is_some() {
        return None;
    }
    let body = match raw.as_bytes().first()? {
        b'=' | b'^' | b'X' | b'<' | b'+' => raw.get(1..)?,
        b'(' => raw,
        _ => return None,
    };
    if !body.starts_with('(') && !raw.starts_with('(') {
        return None;
    }
    if body.starts_with('(') && !body.ends_with(')') {
        return Some(format!("anchor `{raw}` is missing its closing `)`"));
    }
    if body == "()" {
        return Some(format!("anchor `{raw}` names no field"));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_anchor_kind() {
        let cases = [
            (
                "conditional",
                "(image)",
                Some((AnchorKind::Condition, "image")),
            ),
            ("equality", "=(name)", Some((AnchorKind::Equality, "name"))),
            (
                "existence",
                "^(containers)",
                Some((AnchorKind::Existence, "containers")),
            ),
            (
                "negation",
                "X(hostPath)",
                Some((AnchorKind::Negation, "hostPath")),
            ),
            (
                "global",
                "<(imagePullSecrets)",
                Some((AnchorKind::Global, "imagePullSecrets")),
            ),
            (
                "add_if_not_present",
                "+(x)",
                Some((AnchorKind::AddIfNotPresent, "x")),
            ),
            (
                "key_with_slash",
                "(app.kubernetes.io/name)",
                Some((AnchorKind::Condition, "app.kubernetes.io/name")),
            ),
            ("plain_key", "image", None),
            ("empty_parens", "()", None),
            ("unclosed", "=(name", None),
            ("capital_x_word", "Xray", None),
        ];
        for (name, raw, want) in cases {
            assert_eq!(parse(raw).map(|a| (a.kind, a.key)), want, "{name}");
        }
    }

    #[test]
    fn reports_malformed_anchors() {
        let cases = [
            ("unclosed_equality", "=(name", true),
            ("unclosed_condition", "(name", true),
            ("empty_negation", "X()", true),
            ("empty_condition", "()", true),
            ("fine_anchor", "=(name)", false),
            ("plain_key", "name", false),
            ("x_prefixed_word", "Xray", false),
        ];
        for (name, raw, want) in cases {
            assert_eq!(malformed(raw).is_some(), want, "{name}");
        }
    }
}
