//! Kubernetes' CEL semver library (`k8s.io/apiserver/pkg/cel/library`,
//! version 1): `semver()`, `isSemver()`, with the optional normalizing
//! second argument, and the version's accessors and comparisons.

use std::cmp::Ordering;
use std::rc::Rc;

use kube_units::semver::{self, Version};

use crate::error::EvalError;
use crate::func::Func;
use crate::value::no_overload;
use crate::value::Value;

pub(crate) fn call<'a>(func: Func, args: &[Value<'a>]) -> Result<Value<'a>, EvalError> {
    match (func, args) {
        (Func::Semver, [Value::String(s)]) => to_value(semver::parse(s)),
        (Func::Semver, [Value::String(s), Value::Bool(normalize)]) => {
            to_value(parse(s, *normalize))
        }
        (Func::IsSemver, [Value::String(s)]) => Ok(Value::Bool(semver::parse(s).is_ok())),
        (Func::IsSemver, [Value::String(s), Value::Bool(normalize)]) => {
            Ok(Value::Bool(parse(s, *normalize).is_ok()))
        }
        (Func::Major, [Value::Semver(v)]) => Ok(int(v.major)),
        (Func::Minor, [Value::Semver(v)]) => Ok(int(v.minor)),
        (Func::Patch, [Value::Semver(v)]) => Ok(int(v.patch)),
        (Func::CompareTo, [Value::Semver(a), Value::Semver(b)]) => Ok(Value::Int(match a.cmp(b) {
            Ordering::Less => -1,
            Ordering::Equal => 0,
            Ordering::Greater => 1,
        })),
        (Func::IsGreaterThan, [Value::Semver(a), Value::Semver(b)]) => Ok(Value::Bool(a > b)),
        (Func::IsLessThan, [Value::Semver(a), Value::Semver(b)]) => Ok(Value::Bool(a < b)),
        _ => Err(no_overload(func.name(), args)),
    }
}

fn to_value<'a>(parsed: Result<Version, String>) -> Result<Value<'a>, EvalError> {
    parsed
        .map(|v| Value::Semver(Rc::new(v)))
        .map_err(EvalError::msg)
}

/// Go's `types.Int(v.Major)` of a `uint64`: wraps past `i64::MAX`.
fn int<'a>(part: u64) -> Value<'a> {
    Value::Int(part as i64)
}

fn parse(text: &str, normalize: bool) -> Result<Version, String> {
    if normalize {
        semver::parse(&normalized(text)?)
    } else {
        semver::parse(text)
    }
}

/// The library's `normalizeAndParse` rewriting: a leading `v` goes,
/// leading zeroes of each of the first three parts go, and missing minor
/// and patch parts become 0 (a short version may not carry a prerelease
/// or build).
fn normalized(text: &str) -> Result<String, String> {
    let text = text.strip_prefix('v').unwrap_or(text);
    let mut parts: Vec<String> = text
        .splitn(3, '.')
        .map(|part| {
            if part.len() <= 1 {
                return part.to_string();
            }
            let trimmed = part.trim_start_matches('0');
            if trimmed.as_bytes().first().is_some_and(u8::is_ascii_digit) {
                trimmed.to_string()
            } else {
                format!("0{trimmed}")
            }
        })
        .collect();
    if parts.len() < 3 {
        if parts.last().is_some_and(|last| last.contains(['+', '-'])) {
            return Err("short version cannot contain PreRelease/Build meta data".into());
        }
        parts.resize(3, "0".to_string());
    }
    Ok(parts.join("."))
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    /// Rows from the Kubernetes semver library's documentation and tests
    /// (`semverlib.go`, `semver_test.go`).
    #[test]
    fn semver_library() {
        let cases = [
            ("is_semver", "isSemver('1.0.0')", "true"),
            (
                "is_semver_prerelease_build",
                "isSemver('1.0.0-alpha.1+build.5')",
                "true",
            ),
            ("is_semver_v_prefix_strict", "isSemver('v1.0.0')", "false"),
            ("is_semver_short_strict", "isSemver('1.0')", "false"),
            (
                "is_semver_leading_zero_strict",
                "isSemver('01.0.0')",
                "false",
            ),
            ("is_semver_normalize_v", "isSemver('v1.0.0', true)", "true"),
            ("is_semver_normalize_short", "isSemver('1', true)", "true"),
            (
                "is_semver_normalize_zeroes",
                "isSemver('01.01.01', true)",
                "true",
            ),
            (
                "is_semver_normalize_short_pre",
                "isSemver('1.0-alpha', true)",
                "false",
            ),
            (
                "is_semver_normalize_off",
                "isSemver('v1.0.0', false)",
                "false",
            ),
            ("is_semver_garbage", "isSemver('hello')", "false"),
            ("major", "semver('1.2.3').major()", "1"),
            ("minor", "semver('1.2.3').minor()", "2"),
            ("patch", "semver('1.2.3').patch()", "3"),
            ("normalized_parts", "semver('v01.002', true).minor()", "2"),
            (
                "numeric_not_lexical",
                "semver('1.2.3').isLessThan(semver('1.10.0'))",
                "true",
            ),
            (
                "greater",
                "semver('2.0.0').isGreaterThan(semver('1.99.99'))",
                "true",
            ),
            (
                "prerelease_lower",
                "semver('1.0.0-rc.1').isLessThan(semver('1.0.0'))",
                "true",
            ),
            (
                "compare_equal_ignores_build",
                "semver('1.0.0+a').compareTo(semver('1.0.0+b'))",
                "0",
            ),
            (
                "compare_less",
                "semver('1.0.0').compareTo(semver('1.0.1'))",
                "-1",
            ),
            (
                "compare_greater",
                "semver('1.1.0').compareTo(semver('1.0.1'))",
                "1",
            ),
            (
                "equality",
                "semver('1.0.0') == semver('1.0.0+build')",
                "true",
            ),
            ("inequality", "semver('1.0.0') != semver('1.0.1')", "true"),
            (
                "type_name",
                "type(semver('1.0.0')) == kubernetes.Semver",
                "true",
            ),
            (
                "invalid_is_error",
                "semver('v1.0.0')",
                "error: Invalid character(s) found in major number \"v1\"",
            ),
            (
                "short_with_pre_is_error",
                "semver('1.0-alpha', true)",
                "error: short version cannot contain PreRelease/Build meta data",
            ),
            (
                "empty_is_error",
                "semver('')",
                "error: Version string empty",
            ),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}: {expr}");
        }
    }
}
