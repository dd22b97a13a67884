//! Semantic versions as `github.com/blang/semver/v4` parses and orders
//! them (Kyverno's `semver_compare`, Kubernetes' CEL `semver()`): strict
//! `MAJOR.MINOR.PATCH[-PRE][+BUILD]`, no leading zeroes, build metadata
//! ignored when comparing. Written by hand for blang's exact errors.

use std::cmp::Ordering;
use std::fmt;

use crate::quote::go_quote;

/// One dot-separated prerelease identifier.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prerelease {
    Number(u64),
    Text(String),
}

/// A parsed version; build metadata is dropped, as no comparison reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Version {
    pub major: u64,
    pub minor: u64,
    pub patch: u64,
    pub pre: Vec<Prerelease>,
}

impl Ord for Version {
    fn cmp(&self, other: &Self) -> Ordering {
        compare(self, other)
    }
}

impl PartialOrd for Version {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)?;
        for (i, part) in self.pre.iter().enumerate() {
            f.write_str(if i == 0 { "-" } else { "." })?;
            match part {
                Prerelease::Number(n) => write!(f, "{n}")?,
                Prerelease::Text(t) => f.write_str(t)?,
            }
        }
        Ok(())
    }
}

fn containing_only(text: &str, allowed: impl Fn(char) -> bool) -> bool {
    text.chars().all(allowed)
}

fn has_leading_zeroes(text: &str) -> bool {
    text.len() > 1 && text.starts_with('0')
}

/// Go's `strconv.ParseUint(text, 10, 64)` for a string of digits.
fn parse_uint(text: &str) -> Result<u64, String> {
    if text.is_empty() {
        return Err(format!(
            "strconv.ParseUint: parsing {}: invalid syntax",
            go_quote(text)
        ));
    }
    text.parse::<u64>().map_err(|_| {
        format!(
            "strconv.ParseUint: parsing {}: value out of range",
            go_quote(text)
        )
    })
}

fn parse_part(text: &str, lower: &str, capital: &str) -> Result<u64, String> {
    if !containing_only(text, |c| c.is_ascii_digit()) {
        return Err(format!(
            "Invalid character(s) found in {lower} number {}",
            go_quote(text)
        ));
    }
    if has_leading_zeroes(text) {
        return Err(format!(
            "{capital} number must not contain leading zeroes {}",
            go_quote(text)
        ));
    }
    parse_uint(text)
}

fn is_alphanumeric_or_dash(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '-'
}

/// blang's `Parse`, with its error messages.
pub fn parse(text: &str) -> Result<Version, String> {
    if text.is_empty() {
        return Err("Version string empty".into());
    }
    let parts: Vec<&str> = text.splitn(3, '.').collect();
    let (Some(major), Some(minor), Some(rest), None) =
        (parts.first(), parts.get(1), parts.get(2), parts.get(3))
    else {
        return Err("No Major.Minor.Patch elements found".into());
    };
    let major = parse_part(major, "major", "Major")?;
    let minor = parse_part(minor, "minor", "Minor")?;
    let mut patch_text: &str = rest;
    let mut build: Vec<&str> = Vec::new();
    if let Some((before, after)) = patch_text.split_once('+') {
        build = after.split('.').collect();
        patch_text = before;
    }
    let mut prerelease: Vec<&str> = Vec::new();
    if let Some((before, after)) = patch_text.split_once('-') {
        prerelease = after.split('.').collect();
        patch_text = before;
    }
    let patch = parse_part(patch_text, "patch", "Patch")?;
    let mut pre = Vec::with_capacity(prerelease.len());
    for part in prerelease {
        if part.is_empty() {
            return Err("Prerelease is empty".into());
        }
        if containing_only(part, |c| c.is_ascii_digit()) {
            if has_leading_zeroes(part) {
                return Err(format!(
                    "Numeric PreRelease version must not contain leading zeroes {}",
                    go_quote(part)
                ));
            }
            pre.push(Prerelease::Number(parse_uint(part)?));
        } else if containing_only(part, is_alphanumeric_or_dash) {
            pre.push(Prerelease::Text(part.to_string()));
        } else {
            return Err(format!(
                "Invalid character(s) found in prerelease {}",
                go_quote(part)
            ));
        }
    }
    for part in build {
        if part.is_empty() {
            return Err("Build meta data is empty".into());
        }
        if !containing_only(part, is_alphanumeric_or_dash) {
            return Err(format!(
                "Invalid character(s) found in build meta data {}",
                go_quote(part)
            ));
        }
    }
    Ok(Version {
        major,
        minor,
        patch,
        pre,
    })
}

fn compare_pre(a: &Prerelease, b: &Prerelease) -> Ordering {
    match (a, b) {
        (Prerelease::Number(x), Prerelease::Number(y)) => x.cmp(y),
        (Prerelease::Number(_), Prerelease::Text(_)) => Ordering::Less,
        (Prerelease::Text(_), Prerelease::Number(_)) => Ordering::Greater,
        (Prerelease::Text(x), Prerelease::Text(y)) => x.cmp(y),
    }
}

/// blang's `Version.Compare` (build metadata ignored).
pub fn compare(a: &Version, b: &Version) -> Ordering {
    let numbers = (a.major, a.minor, a.patch).cmp(&(b.major, b.minor, b.patch));
    if numbers != Ordering::Equal {
        return numbers;
    }
    match (a.pre.is_empty(), b.pre.is_empty()) {
        (true, true) => return Ordering::Equal,
        (true, false) => return Ordering::Greater,
        (false, true) => return Ordering::Less,
        (false, false) => {}
    }
    for (x, y) in a.pre.iter().zip(b.pre.iter()) {
        let order = compare_pre(x, y);
        if order != Ordering::Equal {
            return order;
        }
    }
    a.pre.len().cmp(&b.pre.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_follows_blang() {
        let cases: [(&str, &str, Result<&str, &str>); 9] = [
            ("empty", "", Err("Version string empty")),
            (
                "two_parts",
                "1.2",
                Err("No Major.Minor.Patch elements found"),
            ),
            (
                "letter_in_patch",
                "1.2.a",
                Err("Invalid character(s) found in patch number \"a\""),
            ),
            (
                "leading_zero",
                "01.2.3",
                Err("Major number must not contain leading zeroes \"01\""),
            ),
            ("empty_prerelease", "1.2.3-", Err("Prerelease is empty")),
            (
                "v_prefix",
                "v1.2.3",
                Err("Invalid character(s) found in major number \"v1\""),
            ),
            ("build_dropped", "1.2.3-rc.1+build.5", Ok("1.2.3-rc.1")),
            ("plain", "10.20.30", Ok("10.20.30")),
            (
                "huge",
                "1.2.99999999999999999999",
                Err("strconv.ParseUint: parsing \"99999999999999999999\": value out of range"),
            ),
        ];
        for (name, text, want) in cases {
            let got = parse(text).map(|v| v.to_string());
            assert_eq!(got.as_deref().map_err(String::as_str), want, "{name}");
        }
    }

    #[test]
    fn ordering_follows_semver_precedence() {
        let ascending = [
            "1.0.0-1",
            "1.0.0-2",
            "1.0.0-10",
            "1.0.0-a",
            "1.0.0-a.1",
            "1.0.0-b",
            "1.0.0",
            "1.0.1",
            "1.2.0",
            "1.10.0",
            "2.0.0",
        ];
        for pair in ascending.windows(2) {
            let [a, b] = pair else { continue };
            assert!(parse(a).unwrap() < parse(b).unwrap(), "{a} < {b}");
        }
        assert_eq!(parse("1.0.0+x").unwrap(), parse("1.0.0+y").unwrap());
    }
}
