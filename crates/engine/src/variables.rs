//! `{{ }}` variable substitution, as Kyverno's `SubstituteAll` does it:
//! - a string that is exactly one variable takes the variable's JSON value;
//!   a variable inside text is inserted as a string (Go's JSON for
//!   non-strings);
//! - substituted text is scanned again, so nested `{{a.{{b}}}}` works;
//! - `\{{ }}` is an escape: left alone, the backslash removed at the end;
//! - map keys are substituted too;
//! - on DELETE, `request.object` in a variable reads `request.oldObject`.
//!
//! Templates are compiled once (their queries parsed) and rendered per
//! evaluation; only text produced by a substitution is parsed at run time.

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::context::{Context, QueryError};
use crate::diagnostics::{key_path, Diagnostics};
use crate::jmespath::{go, CompileError, Query};
use crate::json::Json;

/// Bounds the rescans of substituted text (a value that expands to itself
/// would loop forever in Kyverno).
const MAX_PASSES: usize = 32;
/// Bounds the variables the rescans of one text substitute, all passes
/// together: a value that brings back several copies of its variable
/// doubles them with every pass, and each costs a query.
const MAX_RESCANNED: usize = 10_000;
/// Bounds the descent into substituted documents.
const MAX_DEPTH: usize = 64;
/// Bounds the text substitution writes. A value that brings back several
/// copies of its own variable grows the text geometrically with every
/// rescan (Kyverno runs out of memory); no policy needs more than a few
/// copies of the largest object Kubernetes stores (1.5 MiB).
const MAX_TEXT: usize = 8 << 20;

/// Why substitution failed, worded as Kyverno words it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VarError {
    #[error("failed to resolve {variable} at path {path}: {error}")]
    Resolve {
        variable: String,
        path: String,
        error: Box<QueryError>,
    },
    /// A `$(…)` reference that does not resolve, in Kyverno's words.
    #[error("{0}")]
    Reference(String),
    #[error("expected string after substituting variables in key \"{0}\"")]
    KeyNotString(String),
    #[error("variables nest or repeat too deeply at path {0}")]
    TooDeep(String),
    #[error(
        "substituting variables{} writes more than {} MiB of text",
        located(.0),
        MAX_TEXT >> 20
    )]
    TooLarge(String),
    #[error(
        "substituting variables{} copies more of the request than one request may ({} MiB and {} times the request)",
        located(.0),
        crate::context::COPY_BUDGET >> 20,
        crate::context::COPIES_OF_REQUEST
    )]
    TooMuchCopied(String),
}

/// ` at path /a/b`, or nothing where there is no path.
fn located(path: &str) -> String {
    if path.is_empty() {
        String::new()
    } else {
        format!(" at path {path}")
    }
}

/// Where the `{{ }}` spans of `text` are: Kyverno's `RegexVariables`,
/// `(^|[^\\])\{\{(?:\{[^{}]*\}|[^{}])*\}\}`. Its match takes the character
/// before `{{`, so a variable right after another (`{{a}}{{b}}`) is not
/// found in the same pass: only a rescan of the result finds it.
fn spans(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let mut out: Vec<(usize, usize)> = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        let after_previous = out.last().is_none_or(|&(_, end)| i > end);
        let starts = bytes.get(i) == Some(&b'{')
            && bytes.get(i + 1) == Some(&b'{')
            && (i == 0 || (after_previous && bytes.get(i - 1) != Some(&b'\\')));
        if starts {
            if let Some(end) = span_end(bytes, i + 2) {
                out.push((i, end));
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// The end (exclusive) of a variable whose body starts at `j`.
fn span_end(bytes: &[u8], mut j: usize) -> Option<usize> {
    loop {
        match bytes.get(j)? {
            b'}' => return (bytes.get(j + 1) == Some(&b'}')).then_some(j + 2),
            b'{' => {
                // One level of single braces: `{[^{}]*}`.
                j += 1;
                loop {
                    match bytes.get(j)? {
                        b'}' => break,
                        b'{' => return None,
                        _ => j += 1,
                    }
                }
                j += 1;
            }
            _ => j += 1,
        }
    }
}

/// Kyverno's `replaceBracesAndTrimSpaces`: the expression, and whether a
/// leading `-` asks for shallow substitution (`{{- x }}`: the value is
/// inserted as it is, its own `{{ }}` never substituted).
fn variable_text(span: &str) -> (String, bool) {
    // A span is `{{…}}`; braces inside it are rare, so the two replacements
    // run only when there are some.
    let inner = span
        .strip_prefix("{{")
        .and_then(|s| s.strip_suffix("}}"))
        .filter(|s| {
            !crate::scan::contains(s, &crate::scan::OPEN)
                && !crate::scan::contains(s, &crate::scan::CLOSE)
        });
    let replaced;
    let text = match inner {
        Some(inner) => inner.trim(),
        None => {
            replaced = span.replace("{{", "").replace("}}", "");
            replaced.trim()
        }
    };
    match text.strip_prefix('-') {
        Some(rest) => (rest.trim().to_string(), true),
        None => (text.to_string(), false),
    }
}

/// The JMESPath `{{@}}` stands for, from the pointer of the string that
/// holds it, as Kyverno builds it: the pointer's parts after any `foreach`,
/// less two more (which Kyverno meant for `validate.pattern`, though the
/// pointer starts inside the pattern), under `request.object`. So
/// `/spec/containers/0/name` reads `request.object[0].name`, and a pointer
/// of two parts or fewer the whole object.
fn at_path(pointer: &str) -> String {
    let parts = pointer_parts(pointer);
    let after_foreach = parts
        .iter()
        .position(|p| p == "foreach")
        .map_or(0, |i| i + 1);
    let rest = parts.get(after_foreach..).unwrap_or_default();
    let rest = if rest.len() > 2 {
        rest.get(2..).unwrap_or_default()
    } else {
        &[]
    };
    let mut out = String::from("request.object");
    for part in rest {
        if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            out.push('[');
            out.push_str(part);
            out.push(']');
            continue;
        }
        out.push('.');
        let mut chars = part.chars();
        let plain = chars
            .next()
            .is_some_and(|c| c == '(' || c == '_' || c.is_ascii_alphabetic())
            && chars.all(|c| c == ')' || c == '_' || c.is_ascii_alphanumeric());
        if plain {
            out.push_str(part);
            continue;
        }
        // A JSON string, as Kyverno's jsonpointer quotes a name.
        if let Ok(quoted) = serde_json::to_string(part) {
            out.push_str(&quoted);
        }
    }
    out
}

/// Kyverno's `jsonpointer.ParsePath`: parts split on `/`, a backslash
/// escaping the next character, empty parts dropped.
fn pointer_parts(pointer: &str) -> Vec<String> {
    let mut parts = Vec::new();
    let mut part = String::new();
    let mut escaped = false;
    for c in pointer.chars() {
        match c {
            c if escaped => {
                part.push(c);
                escaped = false;
            }
            '\\' => escaped = true,
            '/' => {
                if !part.is_empty() {
                    parts.push(std::mem::take(&mut part));
                }
            }
            c => part.push(c),
        }
    }
    if !part.is_empty() {
        parts.push(part);
    }
    parts
}

#[derive(Debug, Clone, PartialEq)]
enum Part {
    Text(String),
    Var {
        /// The variable as written, for error messages.
        variable: String,
        query: Result<Query, QueryError>,
        shallow: bool,
    },
}

/// A string with variables, compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct Template {
    parts: Vec<Part>,
    /// The pointer path of the string in its document (for messages).
    path: String,
}

/// Whether `text` needs substitution at all (variables or escapes).
pub fn has_variables(text: &str) -> bool {
    crate::scan::contains(text, &crate::scan::OPEN)
}

fn compile_variable(variable: &str, delete: bool) -> Result<Query, QueryError> {
    let variable = if delete {
        Cow::Owned(variable.replace("request.object", "request.oldObject"))
    } else {
        Cow::Borrowed(variable)
    };
    if variable.is_empty() {
        return Err(QueryError::Empty);
    }
    Query::compile(&variable).map_err(|error| QueryError::Compile {
        query: variable.into_owned(),
        error,
    })
}

impl Template {
    /// Compiles `text` found at pointer `path`. `delete` applies Kyverno's
    /// DELETE rewrite. Problems in a variable's expression are kept and
    /// reported by [`Template::problems`] and when rendered.
    pub fn compile(text: &str, path: &str, delete: bool) -> Self {
        let mut parts = Vec::new();
        let mut last = 0;
        for (start, end) in spans(text) {
            if start > last {
                parts.push(Part::Text(text.get(last..start).unwrap_or_default().into()));
            }
            let raw = text.get(start..end).unwrap_or_default();
            let (mut variable, shallow) = variable_text(raw);
            if variable == "@" {
                variable = at_path(path);
            }
            let query = compile_variable(&variable, delete);
            parts.push(Part::Var {
                variable,
                query,
                shallow,
            });
            last = end;
        }
        if last < text.len() {
            parts.push(Part::Text(text.get(last..).unwrap_or_default().into()));
        }
        Self {
            parts,
            path: path.to_string(),
        }
    }

    /// The variables' expressions, as written.
    pub fn variables(&self) -> impl Iterator<Item = &str> {
        self.parts.iter().filter_map(|p| match p {
            Part::Var { variable, .. } => Some(variable.as_str()),
            Part::Text(_) => None,
        })
    }

    /// Expressions in the template that do not compile.
    pub fn problems(&self) -> Vec<Problem> {
        self.parts
            .iter()
            .filter_map(|p| match p {
                Part::Var {
                    variable,
                    query: Err(QueryError::Compile { error, .. }),
                    ..
                } => Some(Problem {
                    pointer: self.path.clone(),
                    variable: variable.clone(),
                    error: error.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// Substitutes the variables.
    pub fn render(&self, ctx: &Context) -> Result<Value, VarError> {
        if let [Part::Var {
            variable, query, ..
        }] = self.parts.as_slice()
        {
            return self.resolve(ctx, variable, query);
        }
        let text = self.join(ctx)?;
        if self.ends_shallow() {
            return Ok(Value::String(unescape(&text)));
        }
        rescan(text, ctx, &self.path)
    }

    /// Whether the last variable is shallow: Kyverno then looks for no
    /// variables in what the pass produced.
    fn ends_shallow(&self) -> bool {
        self.parts.iter().rev().find_map(|p| match p {
            Part::Var { shallow, .. } => Some(*shallow),
            Part::Text(_) => None,
        }) == Some(true)
    }

    /// The text with every variable replaced by its value.
    fn join(&self, ctx: &Context) -> Result<String, VarError> {
        let mut text = String::new();
        for part in &self.parts {
            match part {
                Part::Text(t) => text.push_str(t),
                Part::Var {
                    variable,
                    query,
                    shallow,
                } => {
                    let value = self.resolve(ctx, variable, query)?;
                    match (&value, shallow) {
                        // Escaped, so no later pass substitutes it.
                        (Value::String(s), true) => text.push_str(&s.replace("{{", "\\{{")),
                        _ => push_value(&mut text, &value),
                    }
                    if text.len() > MAX_TEXT {
                        return Err(VarError::TooLarge(self.path.clone()));
                    }
                }
            }
        }
        Ok(text)
    }

    fn resolve(
        &self,
        ctx: &Context,
        variable: &str,
        query: &Result<Query, QueryError>,
    ) -> Result<Value, VarError> {
        let result = match query {
            Ok(q) => ctx.search(q),
            Err(e) => Err(e.clone()),
        };
        match result {
            // A value of the context is copied out: the request pays for it.
            Ok(Cow::Borrowed(value)) if !ctx.charge(value) => {
                Err(VarError::TooMuchCopied(self.path.clone()))
            }
            Ok(value) => Ok(value.into_owned()),
            Err(error) => Err(VarError::Resolve {
                variable: variable.to_string(),
                path: self.path.clone(),
                error: Box::new(error),
            }),
        }
    }
}

/// A string inserts as itself, anything else as Go's JSON.
fn push_value(text: &mut String, value: &Value) {
    match value {
        Value::String(s) => text.push_str(s),
        other => text.push_str(&go::json(other)),
    }
}

/// Substitutes variables that substitution produced (nested or expanded
/// values), then drops the backslash of escaped `\{{ }}`.
fn rescan(mut text: String, ctx: &Context, path: &str) -> Result<Value, VarError> {
    let (mut passes, mut rescanned) = (0, 0);
    loop {
        let found = spans(&text);
        if found.is_empty() {
            break;
        }
        passes += 1;
        rescanned += found.len();
        if passes > MAX_PASSES || rescanned > MAX_RESCANNED {
            return Err(VarError::TooDeep(path.to_string()));
        }
        let template = Template::compile(&text, path, ctx.is_delete());
        if found.len() == 1 && found.first() == Some(&(0, text.len())) {
            // The text is now exactly one variable: its value keeps its type.
            return template.render(ctx);
        }
        text = template.join(ctx)?;
        if template.ends_shallow() {
            break;
        }
    }
    Ok(Value::String(unescape(&text)))
}

/// `\{{` → `{{`, everywhere, as Kyverno's substitution ends.
fn unescape(text: &str) -> String {
    if crate::scan::contains(text, &crate::scan::ESCAPED_OPEN) {
        text.replace("\\{{", "{{")
    } else {
        text.to_string()
    }
}

/// An expression that does not compile, where it is.
#[derive(Debug, Clone, PartialEq)]
pub struct Problem {
    /// The string's pointer path in its document (`/metadata/name`).
    pub pointer: String,
    pub variable: String,
    pub error: CompileError,
}

/// A JSON document (pattern, condition key or value, context value) with
/// its variables compiled.
#[derive(Debug, Clone, PartialEq)]
pub enum Document {
    /// Nothing to substitute.
    Plain(Value),
    Text(Template),
    List(Vec<Document>),
    Map(Vec<(Key, Document)>),
    /// A `$(…)` reference in it could not be resolved: rendering fails
    /// with this error (see [`Document::compile_referenced`]).
    Unresolved(String),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Key {
    Plain(String),
    Template(String, Template),
}

/// A JSON tree documents are compiled from: the settings' [`Json`], read
/// where it is, or a `serde_json` value (what substitution produced).
pub trait Tree {
    fn text(&self) -> Option<&str>;
    fn items(&self) -> Option<impl Iterator<Item = &Self>>;
    fn entries(&self) -> Option<impl Iterator<Item = (&str, &Self)>>;
    fn to_value(&self) -> Value;
}

impl Tree for Value {
    fn text(&self) -> Option<&str> {
        self.as_str()
    }

    fn items(&self) -> Option<impl Iterator<Item = &Self>> {
        self.as_array().map(|items| items.iter())
    }

    fn entries(&self) -> Option<impl Iterator<Item = (&str, &Self)>> {
        self.as_object()
            .map(|map| map.iter().map(|(k, v)| (k.as_str(), v)))
    }

    fn to_value(&self) -> Value {
        self.clone()
    }
}

impl Tree for Json<'_> {
    fn text(&self) -> Option<&str> {
        self.as_str()
    }

    fn items(&self) -> Option<impl Iterator<Item = &Self>> {
        self.as_array().map(|items| items.iter())
    }

    fn entries(&self) -> Option<impl Iterator<Item = (&str, &Self)>> {
        self.as_object().map(|map| map.iter())
    }

    fn to_value(&self) -> Value {
        Json::to_value(self)
    }
}

impl Document {
    /// Compiles `value` found at pointer `path` (`""` for a root).
    pub fn compile(value: &impl Tree, path: &str, delete: bool) -> Self {
        if !contains_variables(value) {
            return Document::Plain(value.to_value());
        }
        if let Some(text) = value.text() {
            return Document::Text(Template::compile(text, path, delete));
        }
        if let Some(items) = value.items() {
            return Document::List(
                items
                    .enumerate()
                    .map(|(i, v)| Document::compile(v, &format!("{path}/{i}"), delete))
                    .collect(),
            );
        }
        match value.entries() {
            Some(entries) => Document::Map(
                entries
                    .map(|(k, v)| {
                        let key = if has_variables(k) {
                            Key::Template(k.to_string(), Template::compile(k, path, delete))
                        } else {
                            Key::Plain(k.to_string())
                        };
                        let child = format!("{path}/{}", k.replace('/', "\\/"));
                        (key, Document::compile(v, &child, delete))
                    })
                    .collect(),
            ),
            None => Document::Plain(value.to_value()),
        }
    }

    /// [`Document::compile`] of a root document after its `$(…)`
    /// references are resolved against it, as Kyverno's `substituteAll`
    /// does before it substitutes a condition's key or value or a context
    /// variable. A reference that does not resolve fails when rendered.
    pub fn compile_referenced(value: &impl Tree, delete: bool) -> Self {
        if !contains_reference(value) {
            return Document::compile(value, "", delete);
        }
        match crate::references::resolve(&value.to_value()) {
            Ok(resolved) => Document::compile(&resolved, "", delete),
            Err(e) => Document::Unresolved(e),
        }
    }

    /// Expressions that do not compile, with their variable text.
    pub fn problems(&self) -> Vec<Problem> {
        let mut out = Vec::new();
        self.collect_problems(&mut out);
        out
    }

    fn collect_problems(&self, out: &mut Vec<Problem>) {
        match self {
            Document::Plain(_) | Document::Unresolved(_) => {}
            Document::Text(t) => out.extend(t.problems()),
            Document::List(items) => items.iter().for_each(|d| d.collect_problems(out)),
            Document::Map(entries) => {
                for (k, d) in entries {
                    if let Key::Template(_, t) = k {
                        out.extend(t.problems());
                    }
                    d.collect_problems(out);
                }
            }
        }
    }

    /// Every variable's expression, as written.
    pub fn variables(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_variables(&mut out);
        out
    }

    fn collect_variables<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Document::Plain(_) | Document::Unresolved(_) => {}
            Document::Text(t) => out.extend(t.variables()),
            Document::List(items) => items.iter().for_each(|d| d.collect_variables(out)),
            Document::Map(entries) => {
                for (k, d) in entries {
                    if let Key::Template(_, t) = k {
                        out.extend(t.variables());
                    }
                    d.collect_variables(out);
                }
            }
        }
    }

    /// Whether rendering can change the document.
    pub fn is_plain(&self) -> bool {
        matches!(self, Document::Plain(_))
    }

    /// Substitutes every variable.
    /// [`Document::render`], borrowing a document with nothing to
    /// substitute (most condition values).
    pub fn render_cow(&self, ctx: &Context) -> Result<Cow<'_, Value>, VarError> {
        match self {
            Document::Plain(v) => Ok(Cow::Borrowed(v)),
            other => other.render(ctx).map(Cow::Owned),
        }
    }

    pub fn render(&self, ctx: &Context) -> Result<Value, VarError> {
        match self {
            Document::Plain(v) => Ok(v.clone()),
            Document::Unresolved(e) => Err(VarError::Reference(e.clone())),
            Document::Text(t) => {
                let value = t.render(ctx)?;
                // Kyverno walks into what a variable returned and
                // substitutes the strings inside it too.
                if value.is_object() || value.is_array() {
                    substitute_dynamic(value, ctx, &t.path, 0)
                } else {
                    Ok(value)
                }
            }
            Document::List(items) => items
                .iter()
                .map(|d| d.render(ctx))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array),
            Document::Map(entries) => {
                let mut out = Map::new();
                for (key, doc) in entries {
                    let value = doc.render(ctx)?;
                    let key = match key {
                        Key::Plain(k) => k.clone(),
                        Key::Template(raw, t) => match t.render(ctx)? {
                            Value::String(s) => s,
                            Value::Null => raw.clone(),
                            _ => return Err(VarError::KeyNotString(raw.clone())),
                        },
                    };
                    out.insert(key, value);
                }
                Ok(Value::Object(out))
            }
        }
    }
}

fn contains_variables(value: &impl Tree) -> bool {
    any_text(
        value,
        0,
        &Scan {
            keys: true,
            deep: false,
            test: has_variables,
        },
    )
}

/// Whether a string in `value` holds a `$(` (a reference, maybe escaped);
/// too deep a document counts, for resolving it to say so.
fn contains_reference(value: &impl Tree) -> bool {
    let reference = |text: &str| crate::scan::contains(text, &crate::scan::REFERENCE);
    any_text(
        value,
        0,
        &Scan {
            keys: false,
            deep: true,
            test: reference,
        },
    )
}

/// What [`any_text`] looks for: strings (and with `keys` map keys) that
/// pass `test`; `deep` answers past [`MAX_DEPTH`] levels.
struct Scan<F> {
    keys: bool,
    deep: bool,
    test: F,
}

fn any_text(value: &impl Tree, depth: usize, scan: &Scan<impl Fn(&str) -> bool>) -> bool {
    if depth > MAX_DEPTH {
        return scan.deep;
    }
    if let Some(text) = value.text() {
        return (scan.test)(text);
    }
    if let Some(mut items) = value.items() {
        return items.any(|v| any_text(v, depth + 1, scan));
    }
    value.entries().is_some_and(|mut entries| {
        entries.any(|(k, v)| (scan.keys && (scan.test)(k)) || any_text(v, depth + 1, scan))
    })
}

/// Substitutes a document known only at run time (what a variable returned).
pub fn substitute_dynamic(
    value: Value,
    ctx: &Context,
    path: &str,
    depth: usize,
) -> Result<Value, VarError> {
    if depth > MAX_DEPTH {
        return Err(VarError::TooDeep(path.to_string()));
    }
    if !contains_variables(&value) {
        return Ok(value);
    }
    match value {
        Value::String(s) => Template::compile(&s, path, ctx.is_delete()).render(ctx),
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, v)| substitute_dynamic(v, ctx, &format!("{path}/{i}"), depth + 1))
            .collect::<Result<Vec<_>, _>>()
            .map(Value::Array),
        Value::Object(map) => {
            let mut out = Map::new();
            for (k, v) in map {
                let child = format!("{path}/{}", k.replace('/', "\\/"));
                let v = substitute_dynamic(v, ctx, &child, depth + 1)?;
                let key = if has_variables(&k) {
                    match Template::compile(&k, path, ctx.is_delete()).render(ctx)? {
                        Value::String(s) => s,
                        Value::Null => k,
                        _ => return Err(VarError::KeyNotString(k)),
                    }
                } else {
                    k
                };
                out.insert(key, v);
            }
            Ok(Value::Object(out))
        }
        other => Ok(other),
    }
}

/// Reports expressions in `document` that do not compile.
pub fn report_problems(document: &Document, path: &str, diags: &mut Diagnostics) {
    for problem in document.problems() {
        let mut at = path.to_string();
        for segment in problem.pointer.split('/').filter(|s| !s.is_empty()) {
            at = key_path(&at, &segment.replace("\\/", "/"));
        }
        diags.push(
            &at,
            format!("variable `{{{{{}}}}}`: {}", problem.variable, problem.error),
        );
    }
}

/// Compiles a string that may hold variables, reporting problems in its
/// expressions at `path`.
pub fn compile_template(text: &str, path: &str, delete: bool, diags: &mut Diagnostics) -> Template {
    let template = Template::compile(text, "", delete);
    for problem in template.problems() {
        diags.push(
            path,
            format!("variable `{{{{{}}}}}`: {}", problem.variable, problem.error),
        );
    }
    template
}

/// Kyverno rejects `element` variables outside a foreach.
pub fn check_no_element(document: &Document, path: &str, diags: &mut Diagnostics) {
    for variable in document.variables() {
        if variable.starts_with("element") {
            diags.push(
                path,
                format!("variable `{variable}` present outside of foreach"),
            );
        }
    }
}

#[cfg(test)]
mod tests;
