//! `$(path)` references inside a pattern (or any document Kyverno
//! substitutes: a condition's key or value, a context variable), as Kyverno
//! resolves them: the path is relative to the referring field
//! (`$(./../../limits/memory)`), points into the document itself (anchors
//! ignored), and may start with an operator (`$(<=./../../limits/memory)` →
//! `<=2048Mi`). `\$(` escapes. They depend only on the document, so they
//! are resolved when it compiles.

use serde_json::Value;

use crate::anchor;

/// Bounds the walk over the pattern.
const MAX_DEPTH: usize = 64;

/// `pattern` with every reference replaced by the value it points to.
pub fn resolve(pattern: &Value) -> Result<Value, String> {
    substitute(pattern, pattern, "", 0)
}

fn substitute(value: &Value, document: &Value, path: &str, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "the pattern nests deeper than {MAX_DEPTH} levels at {path}"
        ));
    }
    Ok(match value {
        Value::String(s) if crate::scan::contains(s, &crate::scan::REFERENCE) => {
            Value::String(substitute_string(s, document, path)?)
        }
        Value::Array(items) => Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| substitute(v, document, &format!("{path}/{i}"), depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| {
                    let child = format!("{path}/{}", anchor_free(k));
                    Ok((k.clone(), substitute(v, document, &child, depth + 1)?))
                })
                .collect::<Result<_, String>>()?,
        ),
        other => other.clone(),
    })
}

fn anchor_free(key: &str) -> String {
    anchor::parse(key).map_or_else(|| key.to_string(), |a| a.key.to_string())
}

/// Kyverno's `RegexReferences`: `$(` + one character + non-spaces + `)`,
/// greedy to the last `)` before a space, not preceded by `\`.
fn references(text: &str) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        let starts = bytes.get(i) == Some(&b'$')
            && bytes.get(i + 1) == Some(&b'(')
            && (i == 0 || bytes.get(i - 1) != Some(&b'\\'));
        if starts {
            // The run of non-spaces after `$(` plus one character.
            let body_start = i + 2;
            let mut end = body_start + 1;
            while end < bytes.len() && bytes.get(end) != Some(&b' ') {
                end += 1;
            }
            let run = text.get(body_start + 1..end).unwrap_or("");
            if let Some(close) = run.rfind(')') {
                let stop = body_start + 1 + close + 1;
                out.push((i, stop));
                i = stop;
                continue;
            }
        }
        i += 1;
    }
    out
}

fn substitute_string(text: &str, document: &Value, path: &str) -> Result<String, String> {
    let mut out = String::new();
    let mut last = 0;
    for (start, end) in references(text) {
        out.push_str(text.get(last..start).unwrap_or(""));
        let reference = text.get(start..end).unwrap_or("");
        out.push_str(&resolve_reference(reference, document, path)?);
        last = end;
    }
    out.push_str(text.get(last..).unwrap_or(""));
    Ok(out.replace("\\$(", "$("))
}

const OPERATORS: &[&str] = &[">=", "<=", ">", "<", "!"];

fn resolve_reference(reference: &str, document: &Value, path: &str) -> Result<String, String> {
    let inner = reference.trim_matches(|c| c == '$' || c == '(' || c == ')');
    let op = OPERATORS
        .iter()
        .find(|op| inner.starts_with(**op))
        .copied()
        .unwrap_or("");
    let target = inner.get(op.len()..).unwrap_or("");
    if target.is_empty() {
        return Err(format!(
            "failed to resolve {reference} at path {path}: expected path, found empty reference"
        ));
    }
    // Kyverno joins a relative path to the field's; the root's path is
    // empty, so from a root string the joined path stays relative and
    // never names a field.
    let absolute = if target.starts_with('/') {
        Some(clean(target))
    } else {
        (!path.is_empty()).then(|| clean(&format!("{path}/{target}")))
    };
    let value = absolute
        .as_deref()
        .and_then(|absolute| lookup(document, absolute))
        .ok_or_else(|| {
            format!(
                "failed to resolve {reference} at path {path}: no field at {}",
                absolute.as_deref().unwrap_or(target)
            )
        })?;
    let text = match (value, op) {
        (Value::String(s), _) => s.clone(),
        (Value::Number(n), op) if !op.is_empty() => match n.as_i64() {
            Some(i) => i.to_string(),
            None => format!("{:.6}", n.as_f64().unwrap_or(0.0)),
        },
        (Value::Null, _) => {
            return Err(format!(
                "got nil resolved variable {reference} at path {path}"
            ));
        }
        _ => {
            return Err(format!(
                "NotResolvedReferenceErr,reference {reference} not resolved at path {path}"
            ))
        }
    };
    Ok(format!("{op}{text}"))
}

/// Go's `path.Clean` for absolute paths.
fn clean(path: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    format!("/{}", parts.join("/"))
}

/// The pattern field at `path`, matching keys with their anchors removed.
fn lookup<'a>(document: &'a Value, path: &str) -> Option<&'a Value> {
    let mut current = document;
    for segment in path.split('/').filter(|s| !s.is_empty()) {
        current = match current {
            Value::Object(map) => map
                .iter()
                .find(|(k, _)| anchor_free(k) == segment)
                .map(|(_, v)| v)?,
            Value::Array(items) => items.get(segment.parse::<usize>().ok()?)?,
            _ => return None,
        };
    }
    Some(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn references_resolve_into_the_pattern() {
        let cases = [
            (
                "relative_with_operator",
                json!({"spec": {"containers": [{"resources": {"requests": {"memory": "$(<=./../../limits/memory)"}, "limits": {"memory": "2048Mi"}}}]}}),
                json!({"spec": {"containers": [{"resources": {"requests": {"memory": "<=2048Mi"}, "limits": {"memory": "2048Mi"}}}]}}),
            ),
            (
                "anchors_are_ignored",
                json!({"(spec)": {"namespace": "n1", "x": {"y": "$(../../../spec/namespace)"}}}),
                json!({"(spec)": {"namespace": "n1", "x": {"y": "n1"}}}),
            ),
            (
                "absolute_path",
                json!({"a": "v", "b": "$(/a)"}),
                json!({"a": "v", "b": "v"}),
            ),
            (
                "number_with_operator_keeps_integers",
                json!({"a": 2, "b": "$(>=../a)"}),
                json!({"a": 2, "b": ">=2"}),
            ),
            (
                "escaped_reference_is_kept",
                json!({"a": "\\$(x)"}),
                json!({"a": "$(x)"}),
            ),
        ];
        for (name, pattern, want) in cases {
            assert_eq!(resolve(&pattern), Ok(want), "{name}");
        }
    }

    #[test]
    fn unresolvable_references_are_errors() {
        assert!(resolve(&json!({"a": "$(../missing)"}))
            .unwrap_err()
            .contains("no field at"));
        assert!(resolve(&json!({"a": {"b": 1}, "c": "$(../a)"}))
            .unwrap_err()
            .contains("not resolved"));
    }
}
