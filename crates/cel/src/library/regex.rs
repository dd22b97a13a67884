//! `matches()` and Kubernetes' regex library (`find()`, `findAll()`).

use kube_units::small_regex::Small;

use crate::budget::Budget;
use crate::error::EvalError;
use crate::func::Func;
use crate::regex::RegexCache;
use crate::value::{no_overload, Str, Value};

/// Matching is linear in the text for each pattern state.
fn charge_match(text: &str, pattern: &str, budget: &mut Budget) -> Result<(), EvalError> {
    let t = u64::try_from(text.len() / 10 + 1).unwrap_or(u64::MAX);
    let p = u64::try_from(pattern.len() / 10 + 1).unwrap_or(u64::MAX);
    budget.charge(t.saturating_mul(p))
}

pub(crate) fn call<'a>(
    func: Func,
    args: &[Value<'a>],
    budget: &mut Budget,
    regexes: &RegexCache,
) -> Result<Value<'a>, EvalError> {
    match (func, args) {
        (Func::Matches, [Value::String(s), Value::String(p)]) => {
            // Most policy regexes are small enough to match without
            // building an engine (a fresh instance per request pays for
            // every build).
            if let Some(small) = Small::compile(p) {
                budget.charge_len(p.len())?;
                charge_match(s, p, budget)?;
                return Ok(Value::Bool(small.is_match(s)));
            }
            let re = regexes.get(p, func, budget)?;
            charge_match(s, p, budget)?;
            Ok(Value::Bool(re.is_match(s)))
        }
        (Func::Find, [Value::String(s), Value::String(p)]) => {
            let re = regexes.get(p, func, budget)?;
            charge_match(s, p, budget)?;
            Ok(match (s, re.find(s)) {
                (Str::Borrowed(b), Some(m)) => {
                    Value::String(Str::Borrowed(b.get(m.range()).unwrap_or("")))
                }
                (_, Some(m)) => Value::string(m.as_str().to_string()),
                (_, None) => Value::String(Str::Borrowed("")),
            })
        }
        (Func::FindAll, [Value::String(s), Value::String(p), rest @ ..]) => {
            let limit = match rest {
                [] => -1,
                [Value::Int(n)] => *n,
                _ => return Err(no_overload(func.name(), args)),
            };
            let re = regexes.get(p, func, budget)?;
            charge_match(s, p, budget)?;
            let take = usize::try_from(limit).unwrap_or(usize::MAX);
            let found = re
                .find_iter(s)
                .take(take)
                .map(|m| Value::string(m.as_str().to_string()))
                .collect();
            Ok(Value::list(found))
        }
        _ => Err(no_overload(func.name(), args)),
    }
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    #[test]
    fn regex_functions() {
        let cases = [
            ("member_matches", "'web-12'.matches('^web-[0-9]+$')", "true"),
            ("global_matches", "matches('abc', 'b')", "true"),
            ("unanchored", "'xabcx'.matches('abc')", "true"),
            ("no_match", "'abc'.matches('^b')", "false"),
            // Go's syntax, not regex-lite's.
            ("space_is_not_vertical_tab", r"'\v'.matches('\\s')", "false"),
            ("quoted_text", r"'a.b'.matches('^\\Qa.b\\E$')", "true"),
            ("octal_code", r"'a'.matches('\\141')", "true"),
            ("find_first", "'abc 123 def 456'.find('[0-9]+')", "123"),
            ("find_none_is_empty", "'abc'.find('[0-9]+')", ""),
            (
                "find_all",
                "'a1b22c333'.findAll('[0-9]+')",
                "[\"1\", \"22\", \"333\"]",
            ),
            (
                "find_all_limit",
                "'a1b22c333'.findAll('[0-9]+', 2)",
                "[\"1\", \"22\"]",
            ),
            (
                "find_all_zero_limit",
                "'a1b22c333'.findAll('[0-9]+', 0)",
                "[]",
            ),
            (
                "find_all_negative_limit",
                "'a1b22'.findAll('[0-9]+', -1)",
                "[\"1\", \"22\"]",
            ),
            (
                "bad_regex_is_error",
                "'a'.find('(' + '')",
                "error: Illegal regex: ",
            ),
            (
                "bad_regex_matches",
                "'a'.matches('(' + '')",
                "error: error parsing regexp: ",
            ),
            (
                "regex_go_refuses_is_error",
                "'a'.matches('a{2}' + '{3}')",
                "error: error parsing regexp: invalid nested repetition operator: `{2}{3}`",
            ),
            (
                "matches_on_int",
                "1.matches('a')",
                "error: no matching overload for 'matches' applied to '(int, string)'",
            ),
        ];
        for (name, expr, want) in cases {
            let got = eval_str(expr);
            if want.ends_with(": ") {
                assert!(got.starts_with(want), "{name}: {got}");
            } else {
                assert_eq!(got, want, "{name}");
            }
        }
    }
}
