//! Kyverno's `podSecurity.exclude` (`ApplyPodSecurityExclusion`). For each
//! exclusion Kyverno evaluates a stand-in pod — without `images`, the pod
//! with its containers replaced by one empty `fake` container (so pod-level
//! fields stay); with `images`, a pod holding only the matching containers —
//! and every field error that stand-in raises for the excluded control, on
//! `restrictedField` (if set) with all bad values among `values` (if set),
//! removes one matching field error from the pod's own result. A check
//! whose errors are all removed no longer fails.

use serde_json::{json, Map, Value};

use super::checks::{self, list, Failure, Version, CONTAINER_KINDS};
use crate::wildcard;

/// One compiled `exclude` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Exclude {
    /// The check IDs of the excluded control.
    pub ids: &'static [&'static str],
    pub images: Vec<String>,
    /// Empty when unset, as Kyverno treats it.
    pub restricted_field: String,
    pub values: Vec<String>,
}

pub fn apply(
    excludes: &[Exclude],
    baseline_only: bool,
    version: Version,
    mut failures: Vec<Failure>,
    meta: &Value,
    spec: &Value,
) -> Vec<Failure> {
    for exclude in excludes {
        // An exclusion only takes failures away: with none left, running
        // the checks on its stand-in would change nothing.
        if failures.is_empty() {
            break;
        }
        // A control with no checks exempts nothing.
        if exclude.ids.is_empty() {
            continue;
        }
        let per_container = !exclude.images.is_empty();
        let (stand_in_meta, stand_in_spec) = if per_container {
            // Kyverno's stand-in keeps only the pod's name and namespace.
            (json!({}), matching_containers(spec, &exclude.images))
        } else {
            (meta.clone(), fake_container(spec))
        };
        // Only the excluded control's results are read.
        let excluded = checks::evaluate_only(
            exclude.ids,
            baseline_only,
            version,
            &stand_in_meta,
            &stand_in_spec,
        );
        failures = exempt(
            failures,
            &excluded,
            exclude,
            spec,
            &stand_in_spec,
            per_container,
        );
    }
    failures
}

fn fake_container(spec: &Value) -> Value {
    let mut fake = spec.as_object().cloned().unwrap_or_default();
    fake.insert("containers".into(), json!([{"name": "fake"}]));
    fake.remove("initContainers");
    fake.remove("ephemeralContainers");
    Value::Object(fake)
}

fn matching_containers(spec: &Value, images: &[String]) -> Value {
    let mut out = Map::new();
    for kind in CONTAINER_KINDS {
        let matching: Vec<Value> = list(spec, kind)
            .iter()
            .filter(|c| {
                let image = c.get("image").and_then(Value::as_str).unwrap_or("");
                images
                    .iter()
                    .any(|pattern| wildcard::matches(pattern, image))
            })
            .cloned()
            .collect();
        if !matching.is_empty() {
            out.insert(kind.into(), Value::Array(matching));
        }
    }
    Value::Object(out)
}

/// Kyverno's `exemptExclusions`.
fn exempt(
    mut failures: Vec<Failure>,
    excluded: &[Failure],
    exclude: &Exclude,
    spec: &Value,
    stand_in_spec: &Value,
    per_container: bool,
) -> Vec<Failure> {
    // Kyverno keys the results by check ID (one each) and lists them in map
    // order; this keeps the checks' order.
    for stand_in in excluded.iter().filter(|f| exclude.ids.contains(&f.id)) {
        for stand_in_error in &stand_in.violation.errors {
            let (field, container) = locate(&stand_in_error.field, stand_in_spec, per_container);
            if !exclude.restricted_field.is_empty() && field != exclude.restricted_field {
                continue;
            }
            let covered = stand_in_error.bad_values().iter().all(|bad| {
                exclude
                    .values
                    .iter()
                    .any(|pattern| wildcard::matches(pattern, bad))
            });
            if !exclude.values.is_empty() && !covered {
                continue;
            }
            let Some(pos) = failures.iter().position(|k| k.id == stand_in.id) else {
                continue;
            };
            let now_empty = match failures.get_mut(pos) {
                Some(entry) => {
                    let errors = &mut entry.violation.errors;
                    let hit = errors.iter().position(|error| {
                        let (own_field, own_container) = locate(&error.field, spec, per_container);
                        // Container fields must also be in the same container.
                        own_field == field
                            && (own_container.is_none() || own_container == container)
                    });
                    if let Some(i) = hit {
                        // Go's `remove` moves the last error into the gap.
                        errors.swap_remove(i);
                    }
                    errors.is_empty()
                }
                None => false,
            };
            if now_empty {
                failures.remove(pos);
            }
        }
    }
    failures
}

/// Kyverno's `parseField`: the field with every run of digits turned into
/// `*`, and, for a per-container exclusion and a field under
/// `spec.<kind>[i]`, the name of that container in `spec`.
fn locate(field: &str, spec: &Value, per_container: bool) -> (String, Option<String>) {
    let starred = star_indexes(field);
    if !per_container {
        return (starred, None);
    }
    // The second word of letters names the list the field is in.
    let kind = field
        .split(|c: char| !c.is_ascii_alphabetic())
        .filter(|word| !word.is_empty())
        .nth(1)
        .unwrap_or("");
    if !CONTAINER_KINDS.contains(&kind) {
        return (starred, None);
    }
    let name = first_number(field)
        .and_then(|i| list(spec, kind).get(i))
        .and_then(|c| c.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("");
    (starred, Some(name.to_string()))
}

fn star_indexes(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut in_digits = false;
    for c in field.chars() {
        if c.is_ascii_digit() {
            if !in_digits {
                out.push('*');
            }
            in_digits = true;
        } else {
            in_digits = false;
            out.push(c);
        }
    }
    out
}

fn first_number(field: &str) -> Option<usize> {
    let digits: String = field
        .chars()
        .skip_while(|c| !c.is_ascii_digit())
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok()
}
