//! `metadata.yml` held to the checks kwctl (policy-evaluator) applies when it
//! annotates the module and scaffolds `artifacthub-pkg.yml`, so a file kwctl
//! would reject fails here too, where kwctl is not installed.
use kyverno_validate_policy::webhook_rules::{self, WebhookRule};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Metadata {
    rules: Vec<WebhookRule>,
    mutating: bool,
    #[serde(default)]
    execution_mode: Option<String>,
    #[serde(default)]
    annotations: BTreeMap<String, String>,
}

const AUTHOR: &str = "io.kubewarden.policy.author";
const KEYWORDS: &str = "io.artifacthub.keywords";
const VERSION: &str = "io.kubewarden.policy.version";
const OCI_URL: &str = "io.kubewarden.policy.ociUrl";
const URLS: [&str; 2] = ["io.kubewarden.policy.url", "io.kubewarden.policy.source"];

/// Every problem kwctl would report for this `metadata.yml` text.
fn problems(text: &str) -> Vec<String> {
    let metadata: Metadata = match serde_yaml::from_str(text) {
        Ok(metadata) => metadata,
        Err(error) => return vec![format!("not a metadata document: {error}")],
    };
    let mut problems = Vec::new();
    if metadata.mutating {
        problems.push("mutating: a validating policy must say `false`".to_string());
    }
    if metadata.execution_mode.as_deref() != Some("kubewarden-wapc") {
        problems.push("executionMode: must be `kubewarden-wapc`".to_string());
    }
    for (index, rule) in metadata.rules.iter().enumerate() {
        for problem in webhook_rules::check(rule) {
            problems.push(format!("rules[{index}].{problem}"));
        }
    }
    let annotations = &metadata.annotations;
    match annotations.get(AUTHOR) {
        Some(authors) => {
            if let Err(problem) = name_email_list(authors) {
                problems.push(format!("{AUTHOR}: {problem}"));
            }
        }
        None => problems.push(format!("{AUTHOR}: is required")),
    }
    if let Some(keywords) = annotations.get(KEYWORDS) {
        if keywords.split(',').any(|keyword| keyword.trim().is_empty()) {
            problems.push(format!("{KEYWORDS}: an empty keyword in `{keywords}`"));
        }
    }
    match annotations.get(VERSION) {
        Some(version) if semver::Version::parse(version).is_ok() => {}
        Some(version) => problems.push(format!("{VERSION}: `{version}` is not a semver")),
        None => problems.push(format!("{VERSION}: is required")),
    }
    if !annotations.contains_key(OCI_URL) {
        problems.push(format!("{OCI_URL}: is required"));
    }
    for key in URLS {
        if let Some(url) = annotations.get(key) {
            if !url.starts_with("https://") || url.contains(char::is_whitespace) {
                problems.push(format!("{key}: `{url}` is not an https URL"));
            }
        }
    }
    problems
}

/// kwctl reads the author annotation as an RFC 5322 address list: comma-
/// separated `name <email>` values.
fn name_email_list(value: &str) -> Result<(), String> {
    for entry in value.split(',') {
        let entry = entry.trim();
        let shape = || format!("`{entry}` is not of the form `name <email>`");
        let (name, rest) = entry.split_once('<').ok_or_else(shape)?;
        let email = rest.strip_suffix('>').ok_or_else(shape)?;
        if name.trim().is_empty() {
            return Err(shape());
        }
        match email.split_once('@') {
            Some((local, domain))
                if !local.is_empty()
                    && !domain.is_empty()
                    && !domain.contains('@')
                    && !email.contains(char::is_whitespace) => {}
            _ => return Err(format!("`{email}` is not an email address")),
        }
    }
    Ok(())
}

fn read(path: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(path);
    std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("{}: {error}", path.display()))
}

#[test]
fn metadata_yml_passes_kwctl_checks() {
    assert_eq!(problems(&read("metadata.yml")), Vec::<String>::new());
}

#[test]
fn metadata_version_matches_the_crate_version() {
    let metadata: Metadata = serde_yaml::from_str(&read("metadata.yml")).expect("metadata");
    assert_eq!(
        metadata.annotations.get(VERSION).map(String::as_str),
        Some(env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn metadata_that_kwctl_1_35_rejected_is_caught() {
    assert_eq!(
        problems(&read("test_data/metadata/rejected-by-kwctl-1.35.yml")),
        vec![
            "rules[0].resources: `*/*` is present, so no other resource may be listed".to_string(),
            "io.kubewarden.policy.author: `kyverno-validate-policy developers` is not of the form `name <email>`".to_string(),
        ]
    );
}

#[test]
fn author_lists_are_comma_separated_name_email_values() {
    let cases = [
        ("one_author", "Jane Doe <jane@example.com>", true),
        (
            "two_authors",
            "Jane Doe <jane@example.com>, John Roe <john@example.org>",
            true,
        ),
        ("name_only", "Jane Doe", false),
        ("email_only", "<jane@example.com>", false),
        ("not_an_email", "Jane Doe <jane>", false),
        ("trailing_comma", "Jane Doe <jane@example.com>,", false),
    ];
    for (name, value, valid) in cases {
        assert_eq!(name_email_list(value).is_ok(), valid, "{name}: {value}");
    }
}
