//! `semver_compare`: `github.com/blang/semver/v4`'s `ParseRange` over
//! `kube_units::semver` versions, written out by hand (its range syntax is not the `semver`
//! crate's): `>=1.0.0 <2.0.0 || >3.0.0`, `!=1.2.3`, `1.2.x`, with blang's
//! quirks kept (`!4.x.x` matches nothing; an invalid version is 0.0.0).

use std::cmp::Ordering;

use kube_units::semver::{compare, parse as parse_version, Version};

use kube_units::quote::go_quote;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Comparator {
    Eq,
    Ne,
    Gt,
    Ge,
    Lt,
    Le,
}

impl Comparator {
    fn parse(text: &str) -> Option<Self> {
        match text {
            "" | "=" | "==" => Some(Self::Eq),
            ">" => Some(Self::Gt),
            ">=" => Some(Self::Ge),
            "<" => Some(Self::Lt),
            "<=" => Some(Self::Le),
            "!" | "!=" => Some(Self::Ne),
            _ => None,
        }
    }

    fn accepts(self, order: Ordering) -> bool {
        match self {
            Self::Eq => order == Ordering::Equal,
            Self::Ne => order != Ordering::Equal,
            Self::Gt => order == Ordering::Greater,
            Self::Ge => order != Ordering::Less,
            Self::Lt => order == Ordering::Less,
            Self::Le => order != Ordering::Greater,
        }
    }
}

/// Kyverno's `semver_compare(version, range)`: whether `version` (0.0.0 when
/// it does not parse) is in `range`; the error is blang's.
pub(super) fn matches(version: &str, range: &str) -> Result<bool, String> {
    let version = parse_version(version).unwrap_or_default();
    let alternatives = parse_range(range)?;
    Ok(alternatives.iter().any(|all| {
        all.iter()
            .all(|(comparator, bound)| comparator.accepts(compare(&version, bound)))
    }))
}

/// blang's `ParseRange`: alternatives (`||`) of conjunctions (spaces).
fn parse_range(range: &str) -> Result<Vec<Vec<(Comparator, Version)>>, String> {
    let parts = split_and_trim(range);
    let alternatives = split_or_parts(&parts)?;
    let expanded = expand_wildcards(alternatives)?;
    let mut result = Vec::with_capacity(expanded.len());
    for all in expanded {
        let mut conjunction = Vec::with_capacity(all.len());
        for part in all {
            let (operator, version) = split_comparator_version(&part)?;
            let bound = build_version_range(&operator, &version)
                .map_err(|e| format!("Could not parse Range {}: {e}", go_quote(&part)))?;
            conjunction.push(bound);
        }
        result.push(conjunction);
    }
    Ok(result)
}

/// blang's `splitAndTrim`: split on spaces except after `>`, `<`, `=`; a
/// piece of one character is dropped (blang's `last < i-1`); spaces removed.
fn split_and_trim(text: &str) -> Vec<String> {
    let bytes = text.as_bytes();
    let mut result = Vec::new();
    let mut last = 0usize;
    let mut last_char = 0u8;
    for (i, &c) in bytes.iter().enumerate() {
        if c == b' ' && !matches!(last_char, b'>' | b'<' | b'=') {
            if last + 1 < i {
                if let Some(piece) = text.get(last..i) {
                    result.push(piece.to_string());
                }
            }
            last = i + 1;
        } else if c != b' ' {
            last_char = c;
        }
    }
    if last + 1 < bytes.len() {
        if let Some(piece) = text.get(last..) {
            result.push(piece.to_string());
        }
    }
    result.into_iter().map(|p| p.replace(' ', "")).collect()
}

fn split_or_parts(parts: &[String]) -> Result<Vec<Vec<String>>, String> {
    let mut alternatives = Vec::new();
    let mut last = 0usize;
    for (i, part) in parts.iter().enumerate() {
        if part == "||" {
            if i == 0 {
                return Err("First element in range is '||'".into());
            }
            alternatives.push(parts.get(last..i).unwrap_or_default().to_vec());
            last = i + 1;
        }
    }
    if last == parts.len() {
        return Err("Last element in range is '||'".into());
    }
    alternatives.push(parts.get(last..).unwrap_or_default().to_vec());
    Ok(alternatives)
}

/// blang's `splitComparatorVersion`: the comparator is what precedes the
/// first digit.
fn split_comparator_version(text: &str) -> Result<(String, String), String> {
    let first_digit = text
        .char_indices()
        .find(|&(_, c)| c.is_ascii_digit() || (!c.is_ascii() && c.is_numeric()))
        .map(|(i, _)| i);
    match first_digit {
        Some(i) => Ok((
            text.get(..i).unwrap_or_default().trim().to_string(),
            text.get(i..).unwrap_or_default().to_string(),
        )),
        None => Err(format!(
            "Could not get version from string: {}",
            go_quote(text)
        )),
    }
}

fn build_version_range(operator: &str, version: &str) -> Result<(Comparator, Version), String> {
    let joined = format!("{operator}{version}");
    let comparator = Comparator::parse(operator).ok_or_else(|| {
        format!(
            "Could not parse comparator {} in {}",
            go_quote(operator),
            go_quote(&joined)
        )
    })?;
    let version = parse_version(version).map_err(|e| {
        format!(
            "Could not parse version {} in {}: {e}",
            go_quote(version),
            go_quote(&joined)
        )
    })?;
    Ok((comparator, version))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wildcard {
    None,
    Major,
    Minor,
    Patch,
}

fn wildcard_type(version: &str) -> Wildcard {
    let parts: Vec<&str> = version.split('.').collect();
    if parts.last() != Some(&"x") {
        return Wildcard::None;
    }
    match parts.len() {
        1 => Wildcard::Major,
        2 => Wildcard::Minor,
        3 => Wildcard::Patch,
        _ => Wildcard::None,
    }
}

fn version_from_wildcard(version: &str) -> String {
    let flat = version.replacen(".x.x", ".x", 1).replacen(".x", ".0", 1);
    if flat.split('.').count() == 2 {
        format!("{flat}.0")
    } else {
        flat
    }
}

/// blang's `incrementMajorVersion` / `incrementMinorVersion`; "" when the
/// part is not a number (blang ignores that error).
fn increment(version: &str, index: usize) -> String {
    let mut parts: Vec<String> = version.split('.').map(String::from).collect();
    let Some(part) = parts.get_mut(index) else {
        return String::new();
    };
    match part.parse::<i64>() {
        Ok(n) => *part = n.wrapping_add(1).to_string(),
        Err(_) => return String::new(),
    }
    parts.join(".")
}

/// blang's `expandWildcardVersion`.
fn expand_wildcards(alternatives: Vec<Vec<String>>) -> Result<Vec<Vec<String>>, String> {
    let mut expanded = Vec::with_capacity(alternatives.len());
    for all in alternatives {
        let mut parts = Vec::with_capacity(all.len());
        for part in all {
            if !part.contains('x') {
                parts.push(part);
                continue;
            }
            let (operator, version) = split_comparator_version(&part)?;
            let kind = wildcard_type(&version);
            let flat = version_from_wildcard(&version);
            let (result_operator, bump) = match operator.as_str() {
                ">" => (">=", true),
                ">=" => (">=", false),
                "<" => ("<", false),
                "<=" => ("<", true),
                "" | "=" | "==" => {
                    parts.push(format!(">={flat}"));
                    ("<", true)
                }
                "!=" | "!" => {
                    parts.push(format!("<{flat}"));
                    (">=", true)
                }
                _ => ("", false),
            };
            let result_version = if bump {
                match kind {
                    Wildcard::Patch => increment(&flat, 1),
                    Wildcard::Minor => increment(&flat, 0),
                    Wildcard::Major | Wildcard::None => String::new(),
                }
            } else {
                flat
            };
            parts.push(format!("{result_operator}{result_version}"));
        }
        expanded.push(parts);
    }
    Ok(expanded)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::useless_vec)]
mod tests {
    use super::*;

    #[test]
    fn blang_range_cases() {
        let cases = [
            ("docs_wildcard_ge", "4.1.3", ">=4.1.x", Ok(true)),
            ("docs_not_wildcard", "4.1.3", "!4.x.x", Ok(false)),
            ("docs_and", "1.8.6", ">1.0.0 <2.0.0", Ok(true)),
            ("docs_or", "2.1.5", "<2.0.0 || >=3.0.0", Ok(false)),
            ("docs_not_equal_versions", "1.2.3", "1.2.4", Ok(false)),
            ("le_patch_wildcard", "1.2.9", "<=1.2.x", Ok(true)),
            ("gt_patch_wildcard", "1.2.9", ">1.2.x", Ok(false)),
            ("gt_patch_wildcard_next_minor", "1.3.0", ">1.2.x", Ok(true)),
            ("prerelease_numbers", "1.0.0-2", ">1.0.0-10", Ok(false)),
            ("prerelease_text_after_number", "1.0.0-a", ">1.0.0-1", Ok(true)),
            ("build_ignored", "1.0.0+build", "=1.0.0", Ok(true)),
            ("leading_zero_range_version", "1.0.0", ">=01.0.0", Err("Could not parse Range \">=01.0.0\": Could not parse version \"01.0.0\" in \">=01.0.0\": Major number must not contain leading zeroes \"01\"")),
            ("bad_comparator", "1.0.0", "~1.0.0", Err("Could not parse Range \"~1.0.0\": Could not parse comparator \"~\" in \"~1.0.0\"")),
            ("first_or", "1.0.0", "|| 1.0.0", Err("First element in range is '||'")),
            ("two_part_version", "1.0.0", "1.0", Err("Could not parse Range \"1.0\": Could not parse version \"1.0\" in \"1.0\": No Major.Minor.Patch elements found")),
        ];
        for (case, version, range, want) in cases {
            assert_eq!(
                matches(version, range),
                want.map_err(String::from),
                "{case}"
            );
        }
    }
}
