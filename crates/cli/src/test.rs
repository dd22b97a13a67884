//! `kyverno-validate test`: runs Kyverno CLI test files (`kyverno-test.yaml`)
//! through the engine and checks their `results`, as `kyverno test` does.
//!
//! A test names policies, resources, PolicyExceptions, a values file and a
//! user. Each resource becomes a CREATE admission request (namespaced kinds
//! get `namespace: default` when they have none, as Kyverno's CLI does).
//! Values stand in for cluster lookups: a value named like a context entry
//! replaces that entry, `request.*` values are set on the request, and the
//! values file's `namespaceSelector` gives namespaces their labels. The user
//! file's roles and cluster roles are served as bindings, so `roles` /
//! `clusterRoles` and `request.roles` work as in Kyverno.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context as _, Result};
use kyverno_engine::cluster::{Cluster, Lookup, MockedResponse};
use kyverno_engine::engine::{evaluate_settings, Options, Statuses, Teardown};
use kyverno_engine::jmespath::Query;
use kyverno_engine::json::Json;
use kyverno_engine::resources;
use kyverno_engine::verdict::RuleStatus;
use kyverno_engine::wildcard;
use serde_json::{json, Map, Value};

/// One checked result: a row of the table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub policy: String,
    pub rule: String,
    pub resource: String,
    pub expected: String,
    /// What the engine said (`pass`, `fail`, `skip`, `warn`, `error`), or
    /// `None` when the rule gave no result for the resource.
    pub got: Option<String>,
    pub ok: bool,
    pub reason: String,
    /// The rule's own message, for `--detailed-results`.
    pub message: String,
}

impl Row {
    /// The table's RESULT: whether the result was as expected.
    fn outcome(&self) -> &'static str {
        if self.ok {
            "Pass"
        } else {
            "Fail"
        }
    }
}

/// `kyverno test`'s table header and the cells of `rows`, numbered from 1
/// (a MESSAGE column when `detailed`).
fn cells(rows: &[&Row], detailed: bool) -> (Vec<&'static str>, Vec<Vec<String>>) {
    let mut header = vec!["ID", "POLICY", "RULE", "RESOURCE", "RESULT", "REASON"];
    if detailed {
        header.push("MESSAGE");
    }
    let cells = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let mut cells = vec![
                (i + 1).to_string(),
                r.policy.clone(),
                r.rule.clone(),
                r.resource.clone(),
                r.outcome().to_string(),
                r.reason.clone(),
            ];
            if detailed {
                cells.push(r.message.clone());
            }
            cells
        })
        .collect();
    (header, cells)
}

/// The rows of one test file, or why it could not run.
#[derive(Debug)]
pub struct FileReport {
    pub path: PathBuf,
    pub rows: Vec<Row>,
    pub error: Option<String>,
}

impl FileReport {
    pub fn failed(&self) -> usize {
        self.rows.iter().filter(|r| !r.ok).count() + usize::from(self.error.is_some())
    }
}

/// `--test-case-selector`, as Kyverno's CLI reads it: `key=value` pairs,
/// comma-separated, for `policy`, `rule` and `resource`, each a wildcard
/// pattern. A result is run when each pair matches it (a result that names
/// no policy, rule or resource matches that pair); a `resource` pattern
/// other than `*` also replaces the resources a result names.
#[derive(Debug, Default, Clone)]
pub struct Selector {
    policy: Vec<String>,
    rule: Vec<String>,
    resource: Vec<String>,
    /// The resources that replace a result's (Kyverno's
    /// `ExtractResourceFilters`): the `resource` patterns before the first
    /// `*`, none when a pair was not understood.
    replacing: Vec<String>,
}

impl Selector {
    /// The selector, and the pairs that are not understood (as Kyverno, a
    /// message for each, the others still applied).
    pub fn parse(text: &str) -> (Self, Vec<String>) {
        let mut selector = Self::default();
        let mut problems = Vec::new();
        if text.is_empty() {
            return (selector, problems);
        }
        for pair in text.split(',') {
            let parts: Vec<&str> = pair.split('=').collect();
            let [key, value] = parts.as_slice() else {
                problems.push(format!("Invalid test-case-selector argument ({pair}). Parameter must be in the form `<key>=<value>`."));
                continue;
            };
            let value = value.trim().to_string();
            match key.trim() {
                "policy" => selector.policy.push(value),
                "rule" => selector.rule.push(value),
                "resource" => selector.resource.push(value),
                _ => problems.push(format!(
                    "Invalid test-case-selector ({pair}). Parameter can only be policy, rule or resource."
                )),
            }
        }
        if problems.is_empty() {
            selector.replacing = selector
                .resource
                .iter()
                .take_while(|p| *p != "*")
                .cloned()
                .collect();
        }
        (selector, problems)
    }

    fn selects(&self, result: &Value) -> bool {
        let field = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or("");
        let resources: Vec<&str> = listed_resources(result).collect();
        let named = |patterns: &[String], value: &str| {
            value.is_empty() || patterns.iter().all(|p| wildcard::matches(p, value))
        };
        named(&self.policy, field("policy"))
            && named(&self.rule, field("rule"))
            && (resources.is_empty()
                || self
                    .resource
                    .iter()
                    .all(|p| resources.iter().any(|r| wildcard::matches(p, r))))
    }

    /// A selected result's resources, as the selector may replace them.
    fn narrow(&self, names: &mut Vec<String>) {
        if !self.replacing.is_empty() {
            names.clone_from(&self.replacing);
        }
    }
}

/// The names in a test result's `resources` list.
fn listed_resources(result: &Value) -> impl Iterator<Item = &str> {
    result
        .get("resources")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Every test file under `paths` (files as given, directories searched
/// recursively for `file_name`), sorted.
pub fn discover(paths: &[PathBuf], file_name: &str) -> Result<Vec<PathBuf>> {
    let mut found = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk(path, file_name, &mut found)?;
        } else if path.is_file() {
            found.push(path.clone());
        } else {
            bail!("{}: no such file or directory", path.display());
        }
    }
    found.sort();
    found.dedup();
    Ok(found)
}

fn walk(dir: &Path, file_name: &str, found: &mut Vec<PathBuf>) -> Result<()> {
    let entries = std::fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))?;
    for entry in entries {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, file_name, found)?;
        } else if path.file_name().is_some_and(|n| n == file_name) {
            found.push(path);
        }
    }
    Ok(())
}

/// Runs one test file.
pub fn run_file(path: &Path, selector: &Selector) -> FileReport {
    match run(path, selector) {
        Ok(rows) => FileReport {
            path: path.to_path_buf(),
            rows,
            error: None,
        },
        Err(e) => FileReport {
            path: path.to_path_buf(),
            rows: Vec::new(),
            error: Some(format!("{e:#}")),
        },
    }
}

/// A test file's parts, as Kyverno's `Test` (and its legacy form) has them.
struct TestFile {
    policies: Vec<String>,
    resources: Vec<String>,
    exceptions: Vec<String>,
    /// `clusterResources`: what the test's cluster holds for lookups.
    cluster_resources: Vec<String>,
    variables: Option<String>,
    /// `values`: the values document written in the test itself.
    values: Option<Value>,
    userinfo: Option<String>,
    results: Vec<Value>,
    /// `globalContextEntries`: mocked data for global context entries.
    global_context: Vec<Value>,
    /// `apiCallResponses`: mocked answers to `apiCall` entries.
    api_call_responses: Vec<Value>,
}

fn read_test(path: &Path) -> Result<TestFile> {
    let docs = read_yaml(path)?;
    let Some(doc) = docs.into_iter().next() else {
        bail!("{}: the file is empty", path.display());
    };
    // Kyverno's CLI reads the file into its `Test` type whatever its
    // `apiVersion` (its own suite has `kyverno.io/v1` tests); another kind
    // is some other document.
    if let Some(kind) = doc.get("kind").and_then(Value::as_str) {
        if kind != "Test" {
            let api_version = doc.get("apiVersion").and_then(Value::as_str).unwrap_or("");
            bail!(
                "{}: not a Kyverno test: expected `cli.kyverno.io/v1alpha1` `Test`, found `{api_version}` `{kind}`",
                path.display()
            );
        }
    }
    let strings = |key: &str| -> Vec<String> {
        doc.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let string = |key: &str| {
        doc.get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Ok(TestFile {
        policies: strings("policies"),
        resources: strings("resources"),
        exceptions: strings("exceptions"),
        cluster_resources: strings("clusterResources"),
        variables: string("variables"),
        values: doc.get("values").filter(|v| v.is_object()).cloned(),
        userinfo: string("userinfo"),
        results: doc
            .get("results")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        global_context: doc
            .get("globalContextEntries")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
        api_call_responses: doc
            .get("apiCallResponses")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default(),
    })
}

/// A test's `apiCallResponses` checked as Kyverno's CLI checks them (a
/// problem fails the test), by the key it looks them up by: `METHOD:url`,
/// or the bare URL for an entry that names no method.
fn api_call_mocks(entries: &[Value]) -> Result<BTreeMap<String, MockedResponse>> {
    let mut mocks = BTreeMap::new();
    for (i, entry) in entries.iter().enumerate() {
        let text = |key: &str| {
            entry
                .get(key)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let (url, url_path) = (text("url"), text("urlPath"));
        let resolved = match (url.is_empty(), url_path.is_empty()) {
            (true, true) => bail!("apiCallResponses[{i}]: either url or urlPath is required"),
            (false, false) => {
                bail!("apiCallResponses[{i}]: url and urlPath are mutually exclusive")
            }
            (false, true) => {
                let host = url
                    .strip_prefix("https://")
                    .or_else(|| url.strip_prefix("http://"));
                match host {
                    None => bail!(
                        "apiCallResponses[{i}]: url {url:?} must be an absolute https/http URL"
                    ),
                    Some(rest) if rest.split(['/', '?', '#']).next().unwrap_or("").is_empty() => {
                        bail!("apiCallResponses[{i}]: url {url:?} has scheme but no host")
                    }
                    Some(_) => url,
                }
            }
            (true, false) => {
                if !url_path.starts_with('/') {
                    bail!("apiCallResponses[{i}]: urlPath {url_path:?} must be an absolute path starting with '/'");
                }
                url_path
            }
        };
        let method = text("method").to_ascii_uppercase();
        if !matches!(method.as_str(), "" | "GET" | "POST") {
            bail!("apiCallResponses[{i}]: method must be GET or POST");
        }
        let response = entry.get("response");
        let body = match response.and_then(|r| r.get("body")) {
            None | Some(Value::Null) => {
                bail!("apiCallResponses[{i}] {resolved:?}: response.body is required")
            }
            Some(body) if !body.is_object() => {
                bail!("apiCallResponses[{i}] {resolved:?}: response.body must be a JSON object")
            }
            Some(body) => body.clone(),
        };
        let status = match response.and_then(|r| r.get("statusCode")) {
            None | Some(Value::Null) => 200,
            Some(code) => match code.as_u64().and_then(|c| u16::try_from(c).ok()) {
                Some(0) => 200,
                Some(c) if (100..=599).contains(&c) => c,
                _ => bail!("apiCallResponses[{i}] {resolved:?}: statusCode {code} must be between 100 and 599"),
            },
        };
        let key = if method.is_empty() {
            resolved.clone()
        } else {
            format!("{method}:{resolved}")
        };
        if mocks.contains_key(&key) {
            bail!("apiCallResponses: duplicate entry for {resolved:?} (key {key:?}) — each method+url combination must be unique");
        }
        mocks.insert(key, MockedResponse { status, body });
    }
    Ok(mocks)
}

/// A test's `globalContextEntries` checked as Kyverno's CLI checks them (a
/// problem fails the test), then resolved as it resolves them: the data
/// each entry holds (`data`, or the `resources` / `resourceFiles` list,
/// through `fieldPath`; an object of `projections` when there are some), or
/// the error a reference to it gets.
fn global_context_mocks(
    entries: &[Value],
    base: &Path,
) -> Result<BTreeMap<String, Result<Value, String>>> {
    let mut mocks = BTreeMap::new();
    for entry in entries {
        let text = |v: Option<&Value>| v.and_then(Value::as_str).unwrap_or("").trim().to_string();
        let name = text(entry.get("name"));
        if name.is_empty() {
            bail!("globalContextEntries: name is required");
        }
        if mocks.contains_key(&name) {
            bail!("globalContextEntries: duplicate name {name:?}");
        }
        let projections = entry
            .get("projections")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        for p in &projections {
            let projection = text(p.get("name"));
            if projection.is_empty() {
                bail!("globalContextEntries entry {name:?}: projection name is required");
            }
            if text(p.get("path")).is_empty() {
                bail!("globalContextEntries entry {name:?} projection {projection:?}: path is required");
            }
        }
        let data = entry.get("data").filter(|d| !d.is_null());
        let resources = entry.get("resources");
        let files = entry.get("resourceFiles");
        match [data, resources, files].iter().filter(|s| s.is_some()).count() {
            0 => bail!(
                "globalContextEntries entry {name:?}: one of data, resources, or resourceFiles is required"
            ),
            1 => {}
            _ => bail!(
                "globalContextEntries entry {name:?}: data, resources, and resourceFiles are mutually exclusive"
            ),
        }
        let root = match (data, resources, files) {
            (Some(data), _, _) if !data.is_object() => {
                bail!("globalContextEntries entry {name:?}: data must be a JSON object")
            }
            (Some(data), _, _) => data.clone(),
            (_, Some(resources), _) => {
                let list = resources.as_array().cloned().unwrap_or_default();
                if let Some(j) = list.iter().position(|r| !r.is_object()) {
                    bail!("globalContextEntries entry {name:?} resources[{j}]: must be a JSON object (Kubernetes resource manifest)");
                }
                Value::Array(list)
            }
            (_, _, Some(files)) => {
                let mut list = Vec::new();
                for (j, file) in files.as_array().into_iter().flatten().enumerate() {
                    let file = file.as_str().unwrap_or("").trim();
                    if file.is_empty() {
                        bail!("globalContextEntries entry {name:?} resourceFiles[{j}]: file path must not be empty");
                    }
                    if file.starts_with('/') {
                        bail!("globalContextEntries entry {name:?} resourceFiles[{j}]: file path must not be absolute");
                    }
                    let clean = kyverno_engine::jmespath::go::clean_path(file);
                    if clean == ".." || clean.starts_with("../") {
                        bail!("globalContextEntries entry {name:?} resourceFiles[{j}]: file path must not escape the test directory");
                    }
                    // Kyverno's `loadResourceFile` keeps each document whole (a
                    // `kind: List` is one object, not its items) and skips an
                    // empty one (`len(obj) == 0`).
                    let docs = read_documents(&base.join(file)).with_context(|| {
                        format!("globalContextEntries {name:?} resourceFiles {file:?}")
                    })?;
                    list.extend(
                        docs.into_iter()
                            .filter(|d| !matches!(d, Value::Object(m) if m.is_empty())),
                    );
                }
                Value::Array(list)
            }
            (None, None, None) => Value::Null,
        };
        let field_path = text(entry.get("fieldPath"));
        mocks.insert(
            name.clone(),
            resolve_mock(&name, root, &field_path, &projections),
        );
    }
    Ok(mocks)
}

/// `root` through `fieldPath`, then its `projections` as one object.
fn resolve_mock(
    name: &str,
    mut root: Value,
    field_path: &str,
    projections: &[Value],
) -> Result<Value, String> {
    let search = |path: &str, root: &Value| {
        Query::compile(path)
            .map_err(|e| e.to_string())
            .and_then(|q| {
                q.search(root)
                    .map(|v| v.into_owned())
                    .map_err(|e| e.to_string())
            })
    };
    if !field_path.is_empty() {
        root = search(field_path, &root)
            .map_err(|e| format!("globalContextEntries {name:?} fieldPath: {e}"))?;
    }
    if projections.is_empty() {
        return Ok(root);
    }
    let mut out = Map::new();
    for p in projections {
        let projection = p.get("name").and_then(Value::as_str).unwrap_or("");
        let path = p.get("path").and_then(Value::as_str).unwrap_or("");
        let value = search(path, &root).map_err(|e| {
            format!("globalContextEntries {name:?} projection {projection:?} path {path:?}: {e}")
        })?;
        out.insert(projection.to_string(), value);
    }
    Ok(Value::Object(out))
}

/// Every non-empty YAML document of a file, as JSON, with the items of a
/// `kind: List` in its place (as Kyverno's CLI loads policies and resources).
fn read_yaml(path: &Path) -> Result<Vec<Value>> {
    let mut docs = Vec::new();
    for doc in read_documents(path)? {
        match doc {
            Value::Object(map) if map.get("kind").and_then(Value::as_str) == Some("List") => docs
                .extend(
                    map.get("items")
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default(),
                ),
            other => docs.push(other),
        }
    }
    Ok(docs)
}

/// Every non-empty YAML document of a file, as JSON, each as written.
fn read_documents(path: &Path) -> Result<Vec<Value>> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let mut docs = Vec::new();
    for (i, doc) in serde_yaml::Deserializer::from_str(&text).enumerate() {
        let context = || format!("{}: document {}: not YAML", path.display(), i + 1);
        let yaml: serde_yaml::Value = serde::Deserialize::deserialize(doc).with_context(context)?;
        match serde_json::to_value(yaml).with_context(context)? {
            Value::Null => {}
            other => docs.push(other),
        }
    }
    Ok(docs)
}

/// Files a test names, relative to the test's folder; Kyverno also takes
/// URLs, which need a network this command does not use.
fn load_all(base: &Path, files: &[String]) -> Result<Vec<Value>> {
    let mut out = Vec::new();
    for file in files {
        if file.contains("://") {
            bail!("`{file}`: policies and resources from URLs are not supported; download them next to the test");
        }
        out.extend(read_yaml(&base.join(file))?);
    }
    Ok(out)
}

/// The values file (`cli.kyverno.io/v1alpha1` `Values`, or the legacy form).
#[derive(Default)]
struct Values {
    global: Map<String, Value>,
    /// policy → rule → values.
    rules: BTreeMap<(String, String), Map<String, Value>>,
    /// policy → resource name → values.
    resources: BTreeMap<(String, String), Map<String, Value>>,
    namespace_labels: BTreeMap<String, Value>,
    /// `subresources`: resources of a subresource kind (`Scale`) are
    /// requests for that subresource of their parent (`deployments/scale`).
    subresources: Vec<Subresource>,
}

#[derive(Clone)]
struct Subresource {
    kind: String,
    group: String,
    parent_group: String,
    parent_version: String,
    parent_plural: String,
    name: String,
}

fn read_values(path: &Path) -> Result<Values> {
    let doc = read_yaml(path)?.into_iter().next().unwrap_or(Value::Null);
    parse_values(&doc, path)
}

/// A values document (a `variables` file, or a test's inline `values`).
fn parse_values(doc: &Value, path: &Path) -> Result<Values> {
    let object = |v: Option<&Value>| v.and_then(Value::as_object).cloned().unwrap_or_default();
    let list = |v: Option<&Value>| v.and_then(Value::as_array).cloned().unwrap_or_default();
    let name = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    let mut values = Values {
        global: object(doc.get("globalValues")),
        ..Values::default()
    };
    for policy in list(doc.get("policies")) {
        let policy_name = name(&policy);
        for rule in list(policy.get("rules")) {
            let mut own = object(rule.get("values"));
            // Kyverno's CLI adds each `foreachValues` list as a variable
            // after the rule's `values`, and reads it at the element index
            // its store holds, which nothing sets any more: every element,
            // and the rule itself, see the first value.
            for (key, listed) in object(rule.get("foreachValues")) {
                let Some(first) = listed.as_array().and_then(|l| l.first()) else {
                    bail!(
                        "{}: `foreachValues.{key}` (rule {} of policy {policy_name}) must be a list with at least one value",
                        path.display(),
                        name(&rule)
                    );
                };
                own.insert(key, first.clone());
            }
            values.rules.insert((policy_name.clone(), name(&rule)), own);
        }
        for resource in list(policy.get("resources")) {
            values.resources.insert(
                (policy_name.clone(), name(&resource)),
                object(resource.get("values")),
            );
        }
    }
    for entry in list(doc.get("subresources")) {
        let field = |side: &str, key: &str| {
            entry
                .get(side)
                .and_then(|v| v.get(key))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        let full = field("subresource", "name");
        values.subresources.push(Subresource {
            kind: field("subresource", "kind"),
            group: field("subresource", "group"),
            parent_group: field("parentResource", "group"),
            parent_version: field("parentResource", "version"),
            parent_plural: field("parentResource", "name"),
            name: full
                .split_once('/')
                .map_or(full.clone(), |(_, s)| s.to_string()),
        });
    }
    for namespace in list(doc.get("namespaceSelector")) {
        let labels = namespace.get("labels").cloned().unwrap_or(json!({}));
        values.namespace_labels.insert(name(&namespace), labels);
    }
    Ok(values)
}

/// The user a test's requests come from (`cli.kyverno.io/v1alpha1` `UserInfo`).
#[derive(Default)]
struct User {
    info: Value,
    roles: Vec<String>,
    cluster_roles: Vec<String>,
}

fn read_user(path: &Path) -> Result<User> {
    let doc = read_yaml(path)?.into_iter().next().unwrap_or(Value::Null);
    let strings = |key: &str| -> Vec<String> {
        doc.get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    Ok(User {
        info: doc.get("userInfo").cloned().unwrap_or(json!({})),
        roles: strings("roles"),
        cluster_roles: strings("clusterRoles"),
    })
}

fn run(path: &Path, selector: &Selector) -> Result<Vec<Row>> {
    let test = read_test(path)?;
    let base = path.parent().unwrap_or(Path::new("."));
    let (policies, other_policies): (Vec<Value>, Vec<Value>) =
        load_all(base, &test.policies)?.into_iter().partition(|p| {
            matches!(
                p.get("kind").and_then(Value::as_str),
                Some("ClusterPolicy" | "Policy")
            )
        });
    let resources: Vec<Value> = load_all(base, &test.resources)?
        .into_iter()
        .map(default_namespace)
        .collect();
    let exceptions: Vec<Value> = load_all(base, &test.exceptions)?
        .into_iter()
        .filter(|e| e.get("kind").and_then(Value::as_str) == Some("PolicyException"))
        .collect();
    let values = match (&test.variables, &test.values) {
        (Some(file), _) => read_values(&base.join(file))?,
        (None, Some(inline)) => parse_values(inline, path)?,
        (None, None) => Values::default(),
    };
    let user = match &test.userinfo {
        Some(file) => read_user(&base.join(file))?,
        None => User::default(),
    };
    let cluster_objects = cluster_resources(base, &test.cluster_resources)?;
    let mut cluster = TestCluster::new(&resources, &values, &user, cluster_objects);
    cluster.global_context = global_context_mocks(&test.global_context, base)?;
    cluster.api_calls = api_call_mocks(&test.api_call_responses)?;
    let mut cache: BTreeMap<(usize, usize, String), Result<Outcomes, String>> = BTreeMap::new();
    let mut rows = Vec::new();
    for result in test.results.iter().filter(|r| selector.selects(r)) {
        let field = |key: &str| result.get(key).and_then(Value::as_str).unwrap_or("");
        let policy_name = field("policy");
        let rule = field("rule");
        let expected = match field("result") {
            "" => field("status"),
            r => r,
        }
        .to_ascii_lowercase();
        let kind = field("kind");
        // `operation`: the admission operation this result is about (the
        // values file's `request.operation`, or CREATE, when unset).
        let operation = field("operation");
        let mut names: Vec<String> = listed_resources(result).map(str::to_string).collect();
        if !field("resource").is_empty() {
            names.push(field("resource").to_string());
        }
        selector.narrow(&mut names);
        let row = |resource: &str, got: Option<String>, ok: bool, reason: String| Row {
            policy: policy_name.to_string(),
            rule: rule.to_string(),
            resource: resource.to_string(),
            expected: expected.clone(),
            got,
            ok,
            reason,
            message: String::new(),
        };
        let found = policies
            .iter()
            .position(|p| policy_key(p) == policy_name || meta(p, "name") == policy_name);
        let Some((p, policy)) = found.and_then(|p| Some((p, policies.get(p)?))) else {
            // Kyverno's other policy types (ValidatingPolicy, …) are not
            // Kyverno ClusterPolicy rules: said, not failed.
            if let Some(other) = other_policies
                .iter()
                .find(|o| meta(o, "name") == policy_name)
                .and_then(|o| o.get("kind").and_then(Value::as_str))
            {
                for name in &names {
                    rows.push(row(
                        name,
                        None,
                        true,
                        format!("not checked: {other} policies are not run by this engine"),
                    ));
                }
                continue;
            }
            for name in &names {
                rows.push(row(
                    name,
                    None,
                    false,
                    format!("policy `{policy_name}` is not among the test's policies"),
                ));
            }
            continue;
        };
        if !matches!(operation, "" | "CREATE" | "UPDATE" | "DELETE") {
            for name in &names {
                rows.push(row(
                    name,
                    None,
                    false,
                    format!("invalid test result: `operation` is `{operation}`, not CREATE, UPDATE or DELETE"),
                ));
            }
            continue;
        }
        if let Some(kind_of_rule) = other_rule_type(policy, rule) {
            for name in &names {
                rows.push(row(
                    name,
                    None,
                    true,
                    format!("not checked: {kind_of_rule} rules are not run by this engine"),
                ));
            }
            continue;
        }
        for name in &names {
            let found: Vec<usize> = resources
                .iter()
                .enumerate()
                .filter(|(_, r)| resource_named(r, name, kind, field("namespace")))
                .map(|(i, _)| i)
                .collect();
            if found.is_empty() {
                rows.push(row(
                    name,
                    None,
                    false,
                    "resource not found among the test's resources".into(),
                ));
                continue;
            }
            for (r, resource) in found
                .into_iter()
                .filter_map(|r| Some((r, resources.get(r)?)))
            {
                let outcomes = cache
                    .entry((p, r, operation.to_string()))
                    .or_insert_with(|| {
                        evaluate(
                            policy,
                            resource,
                            operation,
                            &exceptions,
                            &values,
                            &user,
                            &cluster,
                        )
                    });
                let shown = resource_id(resource);
                match outcomes {
                    Err(e) => rows.push(Row {
                        message: e.clone(),
                        ..row(&shown, Some("error".into()), expected == "error", e.clone())
                    }),
                    Ok(list) => {
                        // A result may name a Pod rule for a pod controller, which
                        // Kyverno answers with the rule autogen derived from it.
                        let names = [
                            rule.to_string(),
                            format!("autogen-{rule}"),
                            format!("autogen-cronjob-{rule}"),
                        ];
                        let found = names
                            .iter()
                            .find_map(|n| list.iter().find(|(r, _, _)| r == n));
                        let got = found.map(|(_, s, _)| s.clone());
                        let message = found.map(|(_, _, m)| m.clone()).unwrap_or_default();
                        let (ok, reason) = match found {
                            Some((_, g, _)) if *g == expected => (true, "Ok".to_string()),
                            Some((_, g, m)) if g == "error" || g == "fail" => {
                                (false, format!("Want {expected}, got {g}: {m}"))
                            }
                            Some((_, g, _)) => (false, format!("Want {expected}, got {g}")),
                            // No result for the rule: Kyverno's CLI counts the
                            // resource as excluded, which passes whatever the
                            // result expected.
                            None => (true, "Excluded".to_string()),
                        };
                        rows.push(Row {
                            message,
                            ..row(&shown, got, ok, reason)
                        });
                    }
                }
            }
        }
    }
    Ok(rows)
}

fn meta<'v>(object: &'v Value, key: &str) -> &'v str {
    object
        .get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// How results name a policy: `name`, or `namespace/name` for a Policy.
fn policy_key(policy: &Value) -> String {
    let namespace = meta(policy, "namespace");
    if policy.get("kind").and_then(Value::as_str) == Some("Policy") && !namespace.is_empty() {
        format!("{namespace}/{}", meta(policy, "name"))
    } else {
        meta(policy, "name").to_string()
    }
}

/// The type of `rule` when it is not a validate rule.
fn other_rule_type(policy: &Value, rule: &str) -> Option<&'static str> {
    let rules = policy.pointer("/spec/rules").and_then(Value::as_array)?;
    let base = rule
        .strip_prefix("autogen-cronjob-")
        .or_else(|| rule.strip_prefix("autogen-"))
        .unwrap_or(rule);
    let found = rules.iter().find(|r| {
        r.get("name")
            .and_then(Value::as_str)
            .is_some_and(|n| n == rule || n == base)
    });
    let Some(found) = found else {
        // A rule the policy does not have, in a policy of mutate, generate
        // or verifyImages rules only: Kyverno's validation gives it no
        // result to compare, and neither does this engine.
        return rules
            .iter()
            .all(|r| r.get("validate").is_none())
            .then(|| {
                ["mutate", "generate", "verifyImages"]
                    .into_iter()
                    .find(|t| rules.iter().any(|r| r.get(*t).is_some()))
            })
            .flatten();
    };
    if found.get("validate").is_some() {
        return None;
    }
    ["mutate", "generate", "verifyImages"]
        .into_iter()
        .find(|t| found.get(*t).is_some())
}

/// `name` may be `namespace/name`; `kind` and `namespace` narrow it down.
fn resource_named(resource: &Value, name: &str, kind: &str, namespace: &str) -> bool {
    let (ns, name) = match name.split_once('/') {
        Some((ns, n)) => (ns, n),
        None => (namespace, name),
    };
    meta(resource, "name") == name
        && (kind.is_empty() || resource.get("kind").and_then(Value::as_str) == Some(kind))
        && (ns.is_empty() || meta(resource, "namespace") == ns)
}

/// `apiVersion/Kind/namespace/name`, as Kyverno's table shows a resource.
fn resource_id(resource: &Value) -> String {
    let field = |k: &str| resource.get(k).and_then(Value::as_str).unwrap_or("");
    let namespace = meta(resource, "namespace");
    let mut id = format!("{}/{}", field("apiVersion"), field("kind"));
    if !namespace.is_empty() {
        id.push('/');
        id.push_str(namespace);
    }
    id.push('/');
    id.push_str(meta(resource, "name"));
    id
}

fn group_version(resource: &Value) -> (&str, &str) {
    let api_version = resource
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("v1");
    api_version.rsplit_once('/').unwrap_or(("", api_version))
}

/// Kyverno's CLI puts namespaced resources without a namespace in `default`.
fn default_namespace(mut resource: Value) -> Value {
    let (group, _) = group_version(&resource);
    let kind = resource.get("kind").and_then(Value::as_str).unwrap_or("");
    let namespaced = resources::is_namespaced(group, kind).unwrap_or(true);
    if namespaced && meta(&resource, "namespace").is_empty() {
        if let Some(metadata) = resource.get_mut("metadata").and_then(Value::as_object_mut) {
            metadata.insert("namespace".into(), json!("default"));
        }
    }
    resource
}

/// Rule name, result and message, for one policy and one resource.
type Outcomes = Vec<(String, String, String)>;

#[allow(clippy::too_many_arguments)]
fn evaluate(
    policy: &Value,
    resource: &Value,
    operation: &str,
    exceptions: &[Value],
    values: &Values,
    user: &User,
    cluster: &TestCluster,
) -> Result<Outcomes, String> {
    let name = meta(policy, "name").to_string();
    let resource_name = meta(resource, "name").to_string();
    let mut spec = policy.get("spec").cloned().unwrap_or(json!({}));
    let Some(spec_map) = spec.as_object_mut() else {
        return Err("the policy has no `spec`".into());
    };
    // Only validate rules run here; results for others are not checked.
    if let Some(Value::Array(rules)) = spec_map.get_mut("rules") {
        rules.retain(|r| r.get("validate").is_some());
    }
    spec_map.insert("policyName".into(), json!(name));
    if let Some(controllers) = policy
        .pointer("/metadata/annotations")
        .and_then(|a| a.get("pod-policies.kyverno.io/autogen-controllers"))
    {
        spec_map.insert("autogenControllers".into(), controllers.clone());
    }
    let related: Vec<Value> = exceptions
        .iter()
        .filter(|e| {
            e.pointer("/spec/exceptions")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .any(|t| t.get("policyName").and_then(Value::as_str) == Some(name.as_str()))
        })
        .cloned()
        .collect();
    if !related.is_empty() {
        spec_map.insert("exceptions".into(), Value::Array(related));
    }
    let mut request = admission_request(resource, user);
    let (group, _) = group_version(resource);
    let kind = resource.get("kind").and_then(Value::as_str).unwrap_or("");
    if let Some(sub) = values
        .subresources
        .iter()
        .find(|s| s.kind == kind && s.group == group)
    {
        if let Some(map) = request.as_object_mut() {
            map.insert(
                "resource".into(),
                json!({"group": sub.parent_group, "version": sub.parent_version,
                    "resource": sub.parent_plural}),
            );
            map.insert("subResource".into(), json!(sub.name));
        }
    }
    // Global values, then the resource's, then each rule's own.
    let mut shared = values.global.clone();
    if let Some(own) = values.resources.get(&(name.clone(), resource_name)) {
        shared.extend(own.clone());
    }
    let (request_values, context_values) = split_request_values(&shared);
    for (key, value) in request_values {
        set_request_value(&mut request, &key, value);
    }
    if let Some(Value::Array(rules)) = spec_map.get_mut("rules") {
        for rule in rules.iter_mut() {
            let rule_name = rule
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string();
            let mut mine = context_values.clone();
            if let Some(own) = values.rules.get(&(name.clone(), rule_name)) {
                let (req, ctx) = split_request_values(own);
                for (key, value) in req {
                    set_request_value(&mut request, &key, value);
                }
                mine.extend(ctx);
            }
            inject_values(rule, &mine);
        }
    }
    if !operation.is_empty() {
        set_request_value(&mut request, "request.operation", json!(operation));
    }
    let options = Options {
        mentions_roles: true,
        teardown: Teardown::Free,
        // Kyverno's tests name each rule's status.
        statuses: Statuses::Exact,
        // `kyverno test` runs a policy whatever its `admission`.
        webhook: false,
    };
    match evaluate_settings(&Json::borrow(&spec), request, cluster, options) {
        Err(diags) => Err(format!("invalid policy: {}", diags.summary())),
        Ok(evaluation) => {
            let scored = policy
                .pointer("/metadata/annotations")
                .and_then(|a| a.get("policies.kyverno.io/scored"))
                .and_then(Value::as_str)
                != Some("false");
            Ok(evaluation
                .outcomes
                .into_iter()
                .map(|o| {
                    let status = match o.status {
                        RuleStatus::Pass => "pass",
                        // An unscored policy's failures are warnings.
                        RuleStatus::Fail if scored => "fail",
                        RuleStatus::Fail => "warn",
                        RuleStatus::Skip => "skip",
                        RuleStatus::Error => "error",
                    };
                    (o.rule, status.to_string(), o.message)
                })
                .collect())
        }
    }
}

/// A CREATE request for `resource`, from the test's user.
fn admission_request(resource: &Value, user: &User) -> Value {
    let (group, version) = group_version(resource);
    let kind = resource.get("kind").and_then(Value::as_str).unwrap_or("");
    let plural = resources::plural_of(group, kind)
        .map(str::to_string)
        .unwrap_or_else(|| format!("{}s", kind.to_ascii_lowercase()));
    let mut request = json!({
        "uid": "00000000-0000-0000-0000-000000000000",
        "kind": {"group": group, "version": version, "kind": kind},
        "resource": {"group": group, "version": version, "resource": plural},
        "name": meta(resource, "name"),
        "operation": "CREATE",
        "userInfo": user.info,
        "object": resource,
        "oldObject": null,
        "dryRun": false,
    });
    let namespace = meta(resource, "namespace");
    if !namespace.is_empty() {
        if let Some(map) = request.as_object_mut() {
            map.insert("namespace".into(), json!(namespace));
        }
    }
    request
}

/// Values named `request.…`, and the others.
type Split = (Vec<(String, Value)>, Map<String, Value>);

fn split_request_values(values: &Map<String, Value>) -> Split {
    let mut request = Vec::new();
    let mut context = Map::new();
    for (key, value) in values {
        if key == "request"
            || key.starts_with("request.")
            || key == "serviceAccountName"
            || key == "serviceAccountNamespace"
        {
            request.push((key.clone(), value.clone()));
        } else {
            context.insert(key.clone(), value.clone());
        }
    }
    (request, context)
}

/// Sets `request.a.b` (segments may be quoted: `"example.com/x"`) on the
/// request. A DELETE keeps the resource as the old object, and an UPDATE
/// compares the resource with itself (a copy is its old object), as
/// Kyverno's CLI does.
fn set_request_value(request: &mut Value, key: &str, value: Value) {
    // The service account variables come from the requester's name
    // (`system:serviceaccount:NAMESPACE:NAME`), which the value sets.
    if key == "serviceAccountName" || key == "serviceAccountNamespace" {
        let current = request
            .pointer("/userInfo/username")
            .and_then(Value::as_str)
            .unwrap_or("");
        let (mut namespace, mut name) = current
            .strip_prefix("system:serviceaccount:")
            .and_then(|rest| rest.split_once(':'))
            .map(|(ns, n)| (ns.to_string(), n.to_string()))
            .unwrap_or_else(|| ("default".to_string(), "default".to_string()));
        let text = value
            .as_str()
            .map_or_else(|| value.to_string(), str::to_string);
        if key == "serviceAccountName" {
            name = text;
        } else {
            namespace = text;
        }
        set_path(
            request,
            &["userInfo".to_string(), "username".to_string()],
            json!(format!("system:serviceaccount:{namespace}:{name}")),
        );
        return;
    }
    let path = split_path(key);
    let Some((_, rest)) = path.split_first() else {
        return;
    };
    if rest.is_empty() {
        if let (Some(target), Value::Object(map)) = (request.as_object_mut(), value) {
            target.extend(map);
        }
        return;
    }
    if rest == ["operation"] && value == json!("UPDATE") {
        let object = request.get("object").cloned().unwrap_or_default();
        if let Some(map) = request.as_object_mut() {
            if map.get("oldObject").is_none_or(Value::is_null) {
                map.insert("oldObject".into(), object);
            }
        }
    }
    if rest == ["operation"] && value == json!("DELETE") {
        let object = request
            .get_mut("object")
            .map(Value::take)
            .unwrap_or_default();
        if let Some(map) = request.as_object_mut() {
            map.insert("oldObject".into(), object);
        }
    }
    set_path(request, rest, value);
}

fn split_path(key: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let mut quoted = false;
    for c in key.chars() {
        match c {
            '"' => quoted = !quoted,
            '.' if !quoted => out.push(std::mem::take(&mut current)),
            c => current.push(c),
        }
    }
    out.push(current);
    out
}

/// Puts values where the rule reads them: a value named like a context entry
/// (anywhere in the rule, foreach included) replaces it with a plain
/// variable; a dotted name (`filters.data.exclude`) fills that path of the
/// variable; a value no entry names becomes a variable of the rule.
fn inject_values(rule: &mut Value, values: &Map<String, Value>) {
    let mut by_name: BTreeMap<String, Value> = BTreeMap::new();
    for (key, value) in values {
        let path = split_path(key);
        let Some((head, rest)) = path.split_first() else {
            continue;
        };
        let slot = by_name.entry(head.clone()).or_insert(Value::Null);
        set_path(slot, rest, value.clone());
    }
    // `element…` values stand for what a foreach sets itself, element by
    // element; the loop's own values win, as in Kyverno's CLI.
    by_name.retain(|name, _| !name.starts_with("element"));
    let mut unused: Vec<String> = by_name.keys().cloned().collect();
    replace_entries(rule, &by_name, &mut unused);
    if unused.is_empty() {
        return;
    }
    let Some(map) = rule.as_object_mut() else {
        return;
    };
    let context = map.entry("context").or_insert(json!([]));
    if let Some(list) = context.as_array_mut() {
        for (i, name) in unused.iter().enumerate() {
            if let Some(value) = by_name.get(name) {
                list.insert(i, json!({"name": name, "variable": {"value": value}}));
            }
        }
    }
}

/// Sets `path` under `node`, making objects on the way.
fn set_path(node: &mut Value, path: &[String], value: Value) {
    let Some((first, rest)) = path.split_first() else {
        *node = value;
        return;
    };
    if !node.is_object() {
        *node = json!({});
    }
    if let Some(map) = node.as_object_mut() {
        set_path(map.entry(first.clone()).or_insert(Value::Null), rest, value);
    }
}

fn replace_entries(node: &mut Value, values: &BTreeMap<String, Value>, unused: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            if let Some(Value::Array(entries)) = map.get_mut("context") {
                for entry in entries.iter_mut() {
                    let name = entry
                        .get("name")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    if let Some(value) = values.get(&name) {
                        *entry = json!({"name": name, "variable": {"value": value}});
                        unused.retain(|n| *n != name);
                    }
                }
            }
            for value in map.values_mut() {
                replace_entries(value, values, unused);
            }
        }
        Value::Array(items) => {
            for item in items {
                replace_entries(item, values, unused);
            }
        }
        _ => {}
    }
}

/// What a test's cluster holds: the namespaces of its resources (labelled
/// from the values' `namespaceSelector`) and bindings that give the test's
/// user its roles.
/// The objects of a test's `clusterResources` files: Kubernetes objects as
/// they are, and Kyverno's `ClusterResource` documents, whose
/// `spec.resources` (objects, or files) and `spec.crds` (files) it lists.
fn cluster_resources(base: &Path, files: &[String]) -> Result<Vec<Value>> {
    let mut objects = Vec::new();
    for file in files {
        let path = base.join(file);
        let dir = path.parent().unwrap_or(base).to_path_buf();
        for doc in read_yaml(&path)? {
            if doc.get("kind").and_then(Value::as_str) != Some("ClusterResource") {
                objects.push(doc);
                continue;
            }
            for key in ["resources", "crds"] {
                let entries = doc
                    .pointer(&format!("/spec/{key}"))
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default();
                for entry in entries {
                    match entry.as_str() {
                        Some(file) => objects.extend(read_yaml(&dir.join(file))?),
                        None => objects.push(entry),
                    }
                }
            }
        }
    }
    Ok(objects)
}

struct TestCluster {
    objects: Vec<Value>,
    /// The test's global context mocks, by entry name.
    global_context: BTreeMap<String, Result<Value, String>>,
    /// The test's `apiCallResponses`, by [`api_call_mocks`]' key.
    api_calls: BTreeMap<String, MockedResponse>,
}

impl TestCluster {
    fn new(resources: &[Value], values: &Values, user: &User, extra: Vec<Value>) -> Self {
        let mut namespaces: BTreeMap<String, Value> = values.namespace_labels.clone();
        for r in resources {
            let ns = meta(r, "namespace");
            if !ns.is_empty() {
                namespaces.entry(ns.to_string()).or_insert(json!({}));
            }
        }
        let mut objects: Vec<Value> = namespaces
            .into_iter()
            .map(|(name, labels)| {
                json!({"apiVersion": "v1", "kind": "Namespace",
                    "metadata": {"name": name, "labels": labels}})
            })
            .collect();
        let username = user
            .info
            .get("username")
            .and_then(Value::as_str)
            .unwrap_or("");
        let subject =
            json!([{"kind": "User", "name": username, "apiGroup": "rbac.authorization.k8s.io"}]);
        for (i, role) in user.roles.iter().enumerate() {
            let (namespace, name) = role.split_once(':').unwrap_or(("default", role));
            objects.push(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                "metadata": {"name": format!("kyverno-test-{i}"), "namespace": namespace},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
                "subjects": subject}),
            );
        }
        for (i, role) in user.cluster_roles.iter().enumerate() {
            objects.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": format!("kyverno-test-{i}")},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
                "subjects": subject}));
        }
        objects.extend(extra);
        Self {
            objects,
            global_context: BTreeMap::new(),
            api_calls: BTreeMap::new(),
        }
    }
}

impl Cluster for TestCluster {
    fn global_context(&self, name: &str) -> Option<Result<Value, String>> {
        self.global_context.get(name).cloned()
    }

    fn api_call_response(&self, method: &str, url: &str) -> Option<MockedResponse> {
        self.api_calls
            .get(&format!("{method}:{url}"))
            .or_else(|| self.api_calls.get(url))
            .cloned()
    }

    fn fetch(&self, lookup: &Lookup) -> Result<Value, String> {
        match lookup {
            Lookup::Get {
                api_version,
                kind,
                namespace,
                name,
            } => self
                .objects
                .iter()
                .find(|o| {
                    o.get("apiVersion").and_then(Value::as_str) == Some(api_version)
                        && o.get("kind").and_then(Value::as_str) == Some(kind)
                        && meta(o, "name") == name
                        && namespace.as_deref().is_none_or(|ns| meta(o, "namespace") == ns)
                })
                .cloned()
                .ok_or_else(|| {
                    format!("{kind} {name} not found: a Kyverno test has no cluster; supply the value in the test's values file")
                }),
            Lookup::List {
                api_version,
                kind,
                namespace,
                label_selector,
                ..
            } => {
                let items: Vec<Value> = self
                    .objects
                    .iter()
                    .filter(|o| {
                        o.get("apiVersion").and_then(Value::as_str) == Some(api_version)
                            && o.get("kind").and_then(Value::as_str) == Some(kind)
                            && namespace.as_deref().is_none_or(|ns| meta(o, "namespace") == ns)
                            && label_selector.as_deref().is_none_or(|s| labels_match(o, s))
                    })
                    .cloned()
                    .collect();
                if items.is_empty() && !matches!(kind.as_str(), "RoleBinding" | "ClusterRoleBinding") {
                    return Err(format!("no {kind} in a Kyverno test's cluster: supply the value in the test's values file"));
                }
                Ok(json!({"apiVersion": api_version, "kind": format!("{kind}List"), "items": items}))
            }
            Lookup::Oci { image, .. } => Err(format!(
                "image `{image}`: `kyverno-validate test` does not read registries; supply the value in the test's values file"
            )),
            Lookup::CanI(_) => Err(
                "a SubjectAccessReview: a Kyverno test has no cluster to review access; supply the value in the test's values file".into(),
            ),
        }
    }
}

/// `key=value,key2=value2` selectors.
fn labels_match(object: &Value, selector: &str) -> bool {
    selector.split(',').filter(|s| !s.is_empty()).all(|term| {
        let (key, value) = term.split_once('=').unwrap_or((term, ""));
        object
            .pointer("/metadata/labels")
            .and_then(|l| l.get(key.trim()))
            .and_then(Value::as_str)
            == Some(value.trim_start_matches('=').trim())
    })
}

/// `kyverno test -o`'s formats of a results table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum TableFormat {
    Json,
    Yaml,
    Markdown,
    Junit,
}

/// How [`render_text`] prints, as `kyverno test`'s flags ask.
#[derive(Debug, Default, Clone, Copy)]
pub struct TextOptions {
    pub colour: bool,
    /// `--fail-only`: no table per test; the failures, in one table, after
    /// the summary.
    pub fail_only: bool,
    /// `--detailed-results`: each row with the rule's message.
    pub detailed: bool,
}

/// `kyverno test`'s report: each test's table (the text table, or
/// `format`, as `kyverno test -o` writes it), then the summary.
pub fn render_text(
    reports: &[FileReport],
    options: TextOptions,
    format: Option<TableFormat>,
) -> String {
    let show = |rows: &[&Row]| match format {
        None => table(rows, options),
        Some(format) => format!("\n{}\n", formatted(rows, format, options.detailed)),
    };
    let mut out = String::new();
    let (mut passed, mut failed) = (0, 0);
    let mut failures: Vec<&Row> = Vec::new();
    for report in reports {
        // As `kyverno test`: a test with no result to check (none
        // selected) is not run.
        if report.rows.is_empty() && report.error.is_none() {
            continue;
        }
        let _ = writeln!(out, "Loading test ( {} ) ...", report.path.display());
        if let Some(e) = &report.error {
            let _ = writeln!(out, "  {} {e}\n", paint(options.colour, "Error:", "31"));
            failed += 1;
            continue;
        }
        if !options.fail_only {
            let rows: Vec<&Row> = report.rows.iter().collect();
            out.push_str(&show(&rows));
            let _ = writeln!(out);
        }
        failures.extend(report.rows.iter().filter(|r| !r.ok));
        passed += report.rows.iter().filter(|r| r.ok).count();
        failed += report.failed();
    }
    if options.fail_only {
        let _ = writeln!(
            out,
            "Test Summary: {failed} out of {} tests failed",
            passed + failed
        );
        if !failures.is_empty() {
            if format.is_none() {
                let _ = writeln!(out, "\nAggregated Failed Test Cases : ");
            }
            out.push_str(&show(&failures));
        }
    } else {
        let _ = writeln!(
            out,
            "Test Summary: {passed} tests passed and {failed} tests failed"
        );
    }
    out
}

fn paint(colour: bool, text: &str, code: &str) -> String {
    if colour {
        format!("\x1b[{code}m{text}\x1b[0m")
    } else {
        text.to_string()
    }
}

/// One table of `rows`, numbered from 1, in `format`.
fn formatted(rows: &[&Row], format: TableFormat, detailed: bool) -> String {
    match format {
        TableFormat::Json | TableFormat::Yaml => {
            let list: Vec<Value> = rows
                .iter()
                .enumerate()
                .map(|(i, r)| {
                    let mut row = json!({"ID": i + 1, "POLICY": r.policy, "RULE": r.rule,
                        "RESOURCE": r.resource, "RESULT": r.outcome(), "REASON": r.reason});
                    if let (true, Some(map)) = (detailed, row.as_object_mut()) {
                        map.insert("Message".into(), json!(r.message));
                    }
                    row
                })
                .collect();
            if format == TableFormat::Json {
                serde_json::to_string_pretty(&list).unwrap_or_default()
            } else {
                serde_yaml::to_string(&list).unwrap_or_default()
            }
        }
        TableFormat::Markdown => {
            let (header, cells) = cells(rows, detailed);
            let mut out = format!("| {} | \n", header.join(" | "));
            let _ = writeln!(out, "|{}", "----|".repeat(header.len()));
            for row in cells {
                let _ = writeln!(out, "| {} |", row.join(" | "));
            }
            out
        }
        TableFormat::Junit => junit(rows, detailed),
    }
}

/// JUnit XML: a test suite per policy (sorted), a test case per row.
fn junit(rows: &[&Row], detailed: bool) -> String {
    let escape = |text: &str| {
        text.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
            .replace('"', "&quot;")
    };
    let mut suites: BTreeMap<&str, Vec<&Row>> = BTreeMap::new();
    for row in rows {
        suites.entry(row.policy.as_str()).or_default().push(row);
    }
    let failures = rows.iter().filter(|r| !r.ok).count();
    let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    let _ = writeln!(
        out,
        "<testsuites tests=\"{}\" failures=\"{failures}\">",
        rows.len()
    );
    for (policy, rows) in suites {
        let _ = writeln!(
            out,
            " <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\">",
            escape(policy),
            rows.len(),
            rows.iter().filter(|r| !r.ok).count()
        );
        for row in rows {
            let _ = writeln!(
                out,
                "  <testcase classname=\"{}\" name=\"{}\">",
                escape(&row.rule),
                escape(&row.resource)
            );
            let mut details = format!(
                "    Policy: {}\n    Rule: {}\n    Resource: {}\n    Result: {}\n",
                row.policy,
                row.rule,
                row.resource,
                row.outcome()
            );
            if detailed {
                let _ = writeln!(details, "    Message: {}", row.message);
            }
            if row.ok {
                let _ = writeln!(
                    out,
                    "   <system-out>\n    Reason: {}\n{}   </system-out>",
                    escape(&row.reason),
                    escape(&details)
                );
            } else {
                let _ = writeln!(
                    out,
                    "   <failure message=\"{}\">\n{}   </failure>",
                    escape(&row.reason),
                    escape(&details)
                );
            }
            let _ = writeln!(out, "  </testcase>");
        }
        let _ = writeln!(out, " </testsuite>");
    }
    out.push_str("</testsuites>");
    out
}

/// `kyverno test`'s table of `rows`, numbered from 1.
fn table(rows: &[&Row], options: TextOptions) -> String {
    let (header, cells) = cells(rows, options.detailed);
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[String]| {
        let mut text = String::from("│");
        for (i, (c, w)) in row.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w.saturating_sub(c.chars().count()));
            let cell = match (i, c.as_str()) {
                (4, "Pass") => paint(options.colour, "Pass", "32"),
                (4, "Fail") => paint(options.colour, "Fail", "31"),
                _ => c.clone(),
            };
            let _ = write!(text, " {cell}{pad} │");
        }
        text
    };
    let mut out = String::new();
    let header: Vec<String> = header.iter().map(|h| h.to_string()).collect();
    let _ = writeln!(out, "{}", line(&header));
    for row in &cells {
        let _ = writeln!(out, "{}", line(row));
    }
    out
}

/// The same, for machines.
pub fn render_json(reports: &[FileReport]) -> Value {
    let files: Vec<Value> = reports
        .iter()
        .map(|r| {
            json!({
                "file": r.path.display().to_string(),
                "error": r.error,
                "results": r.rows.iter().map(|row| json!({
                    "policy": row.policy, "rule": row.rule, "resource": row.resource,
                    "expected": row.expected, "got": row.got, "ok": row.ok, "reason": row.reason,
                    "message": row.message,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    let failed: usize = reports.iter().map(FileReport::failed).sum();
    let total: usize = reports.iter().map(|r| r.rows.len()).sum();
    json!({"tests": files, "passed": total.saturating_sub(failed), "failed": failed})
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_segments_keep_their_dots() {
        assert_eq!(
            split_path(r#"request.object.metadata.annotations."example.com/x""#),
            vec![
                "request",
                "object",
                "metadata",
                "annotations",
                "example.com/x"
            ]
        );
    }

    #[test]
    fn global_context_mocks_resolve_as_kyvernos_cli_resolves_them() {
        let dir = std::env::temp_dir().join(format!("kv-gce-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(
            dir.join("deployments.yaml"),
            "kind: Deployment\nmetadata: {name: a}\n---\nkind: Deployment\nmetadata: {name: b}\n",
        )
        .unwrap();
        std::fs::write(
            dir.join("list.yaml"),
            "kind: List\nitems: [{kind: Pod}, {kind: Pod}]\n---\n{}\n---\nkind: Pod\n",
        )
        .unwrap();
        let entries = json!([
            {"name": "data", "data": {"deployments": [{"name": "x"}, {"name": "y"}]},
                "projections": [{"name": "items", "path": "deployments"}]},
            {"name": "inline", "resources": [{"kind": "Pod", "metadata": {"name": "p"}}],
                "fieldPath": "[].metadata.name"},
            {"name": "files", "resourceFiles": ["deployments.yaml"]},
            {"name": "list-file", "resourceFiles": ["list.yaml"], "fieldPath": "[].kind"},
            {"name": "bad-path", "data": {"a": 1}, "fieldPath": "a.["}
        ]);
        let mocks = global_context_mocks(entries.as_array().unwrap(), &dir).unwrap();
        assert_eq!(
            mocks["data"],
            Ok(json!({"items": [{"name": "x"}, {"name": "y"}]}))
        );
        assert_eq!(mocks["inline"], Ok(json!(["p"])));
        // A `kind: List` document stays one object; an empty one is skipped.
        assert_eq!(mocks["list-file"], Ok(json!(["List", "Pod"])));
        assert_eq!(
            mocks["files"].as_ref().map(|v| v.as_array().map(Vec::len)),
            Ok(Some(2))
        );
        assert!(
            matches!(&mocks["bad-path"], Err(e) if e.starts_with("globalContextEntries \"bad-path\" fieldPath: ")),
            "{:?}",
            mocks["bad-path"]
        );
        let problems = [
            (json!([{"name": ""}]), "globalContextEntries: name is required"),
            (
                json!([{"name": "a", "data": {}}, {"name": "a", "data": {}}]),
                "globalContextEntries: duplicate name \"a\"",
            ),
            (
                json!([{"name": "a"}]),
                "globalContextEntries entry \"a\": one of data, resources, or resourceFiles is required",
            ),
            (
                json!([{"name": "a", "data": {}, "resources": []}]),
                "globalContextEntries entry \"a\": data, resources, and resourceFiles are mutually exclusive",
            ),
            (
                json!([{"name": "a", "data": [1]}]),
                "globalContextEntries entry \"a\": data must be a JSON object",
            ),
            (
                json!([{"name": "a", "resourceFiles": ["../x.yaml"]}]),
                "globalContextEntries entry \"a\" resourceFiles[0]: file path must not escape the test directory",
            ),
            (
                json!([{"name": "a", "data": {}, "projections": [{"name": "p"}]}]),
                "globalContextEntries entry \"a\" projection \"p\": path is required",
            ),
        ];
        for (entries, want) in problems {
            let error = global_context_mocks(entries.as_array().unwrap(), &dir).unwrap_err();
            assert_eq!(error.to_string(), want);
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn selectors_read_as_kyvernos_cli_reads_them() {
        let result = json!({"policy": "require-labels", "rule": "check-team",
            "resources": ["web", "db"]});
        // (selector, problems, selects the result, resources it is run on)
        let cases = [
            ("policy=*,rule=*,resource=*", 0, true, vec!["web", "db"]),
            ("", 0, true, vec!["web", "db"]),
            ("policy=require-*", 0, true, vec!["web", "db"]),
            ("rule=other", 0, false, vec![]),
            ("resource=db", 0, true, vec!["db"]),
            ("resource=d?", 0, true, vec!["d?"]),
            ("resource=*,resource=db", 0, true, vec!["web", "db"]),
            ("resource=cache", 0, false, vec![]),
            // A pair not understood is said; the others still select, and
            // no resource is replaced.
            ("team=a,resource=db", 1, true, vec!["web", "db"]),
            ("policy", 1, true, vec!["web", "db"]),
        ];
        for (text, problems, selects, resources) in cases {
            let (selector, found) = Selector::parse(text);
            assert_eq!(found.len(), problems, "{text}: {found:?}");
            assert_eq!(selector.selects(&result), selects, "{text}");
            if selects {
                let mut names = vec!["web".to_string(), "db".to_string()];
                selector.narrow(&mut names);
                assert_eq!(names, resources, "{text}");
            }
        }
    }

    #[test]
    fn a_test_is_read_whatever_its_api_version_but_not_another_kind() {
        let dir = std::env::temp_dir().join(format!("kv-test-kind-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let cases = [
            (
                "cli_api",
                "apiVersion: cli.kyverno.io/v1alpha1\nkind: Test",
                true,
            ),
            ("kyverno_api", "apiVersion: kyverno.io/v1\nkind: Test", true),
            ("no_type", "policies: [p.yaml]", true),
            (
                "policy",
                "apiVersion: kyverno.io/v1\nkind: ClusterPolicy",
                false,
            ),
        ];
        for (name, head, read) in cases {
            let path = dir.join(format!("{name}.yaml"));
            std::fs::write(&path, format!("{head}\nresults: []\n")).unwrap();
            match read_test(&path) {
                Ok(_) => assert!(read, "{name}: read"),
                Err(e) => {
                    assert!(!read, "{name}: {e}");
                    assert!(e.to_string().contains("not a Kyverno test"), "{name}: {e}");
                }
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn api_call_responses_are_checked_and_keyed_as_kyvernos_cli_keys_them() {
        let ok = json!([
            {"urlPath": "/api/v1/namespaces", "method": "get", "response": {"body": {"items": []}}},
            {"url": "https://example.com/check", "response": {"statusCode": 403, "body": {}}},
        ]);
        let mocks = api_call_mocks(ok.as_array().unwrap()).unwrap();
        let keys: Vec<&str> = mocks.keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            ["GET:/api/v1/namespaces", "https://example.com/check"]
        );
        assert_eq!(mocks["GET:/api/v1/namespaces"].status, 200);
        assert_eq!(mocks["https://example.com/check"].status, 403);
        let body = json!({"body": {}});
        let cases = [
            (
                "neither_url",
                json!([{"response": body}]),
                "either url or urlPath is required",
            ),
            (
                "both_urls",
                json!([{"url": "https://a.b/c", "urlPath": "/c", "response": body}]),
                "mutually exclusive",
            ),
            (
                "relative_path",
                json!([{"urlPath": "api/v1", "response": body}]),
                "must be an absolute path",
            ),
            (
                "no_scheme",
                json!([{"url": "example.com/x", "response": body}]),
                "absolute https/http URL",
            ),
            (
                "no_host",
                json!([{"url": "https:///x", "response": body}]),
                "no host",
            ),
            (
                "other_method",
                json!([{"urlPath": "/x", "method": "PUT", "response": body}]),
                "method must be GET or POST",
            ),
            (
                "no_body",
                json!([{"urlPath": "/x", "response": {}}]),
                "response.body is required",
            ),
            (
                "list_body",
                json!([{"urlPath": "/x", "response": {"body": [1]}}]),
                "must be a JSON object",
            ),
            (
                "status_out_of_range",
                json!([{"urlPath": "/x", "response": {"statusCode": 700, "body": {}}}]),
                "must be between 100 and 599",
            ),
            (
                "duplicate",
                json!([{"urlPath": "/x", "response": body}, {"urlPath": "/x", "response": body}]),
                "duplicate entry",
            ),
        ];
        for (name, entries, want) in cases {
            let Err(error) = api_call_mocks(entries.as_array().unwrap()) else {
                panic!("{name}: accepted");
            };
            assert!(error.to_string().contains(want), "{name}: {error}");
        }
    }

    #[test]
    fn foreach_values_give_their_first_value_after_the_rules_values() {
        let doc = json!({"policies": [{"name": "p", "rules": [{"name": "r",
            "values": {"allowed": "from-values", "other": 1},
            "foreachValues": {"allowed": ["first", "second"], "images": [{"user": "root"}]}}]}]});
        let values = parse_values(&doc, Path::new("values.yaml")).unwrap();
        let own = &values.rules[&("p".to_string(), "r".to_string())];
        assert_eq!(own["allowed"], json!("first"));
        assert_eq!(own["images"], json!({"user": "root"}));
        assert_eq!(own["other"], json!(1));
        for (name, listed) in [("empty", json!([])), ("not_a_list", json!("x"))] {
            let doc = json!({"policies": [{"name": "p", "rules": [{"name": "r",
                "foreachValues": {"allowed": listed}}]}]});
            let Err(error) = parse_values(&doc, Path::new("values.yaml")) else {
                panic!("{name}: accepted");
            };
            assert!(
                error.to_string().contains("`foreachValues.allowed`"),
                "{name}: {error}"
            );
        }
    }

    #[test]
    fn values_replace_context_entries_or_become_variables() {
        let mut rule = json!({"name": "r", "context": [
            {"name": "filters", "configMap": {"name": "f", "namespace": "kyverno"}},
            {"name": "kept", "variable": {"value": 1}}],
            "validate": {"foreach": [{"list": "x", "context": [{"name": "inner", "apiCall": {"urlPath": "/api/v1/pods"}}]}]}});
        let values: Map<String, Value> = serde_json::from_value(json!({
            "filters.data.exclude": "a", "filters.data.include": "b", "inner": [1], "extra": "e",
            "element.name": "left to the loop"}))
        .unwrap();
        inject_values(&mut rule, &values);
        assert_eq!(
            rule["context"][0],
            json!({"name": "extra", "variable": {"value": "e"}})
        );
        assert_eq!(
            rule["context"][1],
            json!({"name": "filters", "variable": {"value": {"data": {"exclude": "a", "include": "b"}}}})
        );
        assert_eq!(
            rule["context"][2],
            json!({"name": "kept", "variable": {"value": 1}})
        );
        assert_eq!(
            rule["validate"]["foreach"][0]["context"][0],
            json!({"name": "inner", "variable": {"value": [1]}})
        );
        assert_eq!(rule["context"].as_array().map(Vec::len), Some(3));
    }

    #[test]
    fn request_values_set_fields_and_delete_moves_the_object() {
        let mut request =
            json!({"operation": "CREATE", "object": {"kind": "Pod"}, "oldObject": null});
        set_request_value(&mut request, "request.operation", json!("DELETE"));
        set_request_value(&mut request, "request.mode", json!("background"));
        assert_eq!(request["operation"], "DELETE");
        assert_eq!(request["oldObject"], json!({"kind": "Pod"}));
        assert_eq!(request["object"], Value::Null);
        assert_eq!(request["mode"], "background");
    }

    #[test]
    fn an_update_compares_the_resource_with_a_copy_of_itself() {
        let mut request =
            json!({"operation": "CREATE", "object": {"kind": "Pod"}, "oldObject": null});
        set_request_value(&mut request, "request.operation", json!("UPDATE"));
        assert_eq!(request["operation"], "UPDATE");
        assert_eq!(request["object"], json!({"kind": "Pod"}));
        assert_eq!(request["oldObject"], json!({"kind": "Pod"}));
    }

    #[test]
    fn resources_are_found_by_name_kind_and_namespace() {
        let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "prod"}});
        let cases = [
            ("name", "web", "", "", true),
            ("name_and_kind", "web", "Pod", "", true),
            ("other_kind", "web", "Deployment", "", false),
            ("namespace_prefix", "prod/web", "", "", true),
            ("other_namespace", "dev/web", "", "", false),
            ("namespace_field", "web", "", "dev", false),
        ];
        for (label, name, kind, namespace, expected) in cases {
            assert_eq!(
                resource_named(&pod, name, kind, namespace),
                expected,
                "{label}"
            );
        }
        assert_eq!(resource_id(&pod), "v1/Pod/prod/web");
    }

    #[test]
    fn namespaced_resources_default_to_the_default_namespace() {
        let pod = default_namespace(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}),
        );
        assert_eq!(meta(&pod, "namespace"), "default");
        let ns = default_namespace(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}),
        );
        assert_eq!(meta(&ns, "namespace"), "");
    }
}
