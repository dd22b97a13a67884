//! A rule's or a foreach's `context` entries: compiled once, loaded into
//! the JSON context in order (each can read the ones before it) and taken
//! out again after the rule or element.

use std::rc::Rc;

use std::borrow::Cow;

use serde_json::Value;

use crate::api_call::{self, shape_of, ApiPath};
use crate::cluster::{Cached, Lookup};
use crate::context::{Context, Mark};
use crate::diagnostics::{index_path, key_path, Diagnostics};
use crate::global_context;
use crate::image_data;
use crate::jmespath::Query;
use crate::settings::{ContextEntry, ContextSource};
use crate::variables::{compile_template, report_problems, Document, Template, VarError};

/// Context entry names Kyverno reserves for its own variables.
const RESERVED_NAMES: &[&str] = &[
    "images",
    "request",
    "serviceAccountName",
    "serviceAccountNamespace",
    "element",
    "elementIndex",
];

/// A `context` entry, compiled.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledEntry {
    pub name: String,
    source: Source,
}

#[derive(Debug, Clone, PartialEq)]
enum Source {
    Variable {
        value: Option<Document>,
        jmes_path: Option<JmesPath>,
        default: Option<Document>,
    },
    /// Read from the cluster; name and namespace substituted first.
    ConfigMap { name: Template, namespace: Template },
    /// A Kubernetes API GET; the path substituted first. With `post`, a
    /// SubjectAccessReview `POST` of that body, substituted first.
    ApiCall {
        url_path: String,
        url: Template,
        jmes_path: Option<JmesPath>,
        /// Used as is when the call fails, as in Kyverno.
        default: Option<Value>,
        post: Option<Document>,
    },
    /// An image's data from its registry; the reference substituted first.
    ImageRegistry {
        reference: Template,
        jmes_path: Option<JmesPath>,
    },
    /// A GlobalContextEntry's data; the name substituted first.
    GlobalReference {
        name: Template,
        jmes_path: Option<JmesPath>,
    },
}

#[derive(Debug, Clone, PartialEq)]
enum JmesPath {
    Compiled(Query),
    /// Has `{{ }}`: substituted, then parsed, per evaluation.
    Template(Template),
}

/// A template's value as the text a loader sends: a string as it is,
/// anything else as Go prints it.
fn render_text(template: &Template, ctx: &Context) -> Result<String, VarError> {
    template.render(ctx).map(|value| match value {
        Value::String(s) => s,
        other => crate::jmespath::go::sprint(&other),
    })
}

/// Compiles a rule's or a foreach's `context`.
pub fn compile_context(
    entries: &[ContextEntry],
    path: &str,
    rule_level: bool,
    delete: bool,
    diags: &mut Diagnostics,
) -> Vec<CompiledEntry> {
    let mut out = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let p = index_path(&key_path(path, "context"), i);
        if rule_level {
            if let Some(reserved) = RESERVED_NAMES
                .iter()
                .find(|r| entry.name == **r || entry.name.starts_with(&format!("{r}.")))
            {
                diags.push(
                    &key_path(&p, "name"),
                    format!(
                        "entry name `{}` is invalid as it conflicts with a pre-defined variable `{reserved}`",
                        entry.name
                    ),
                );
            }
        }
        match &entry.source {
            ContextSource::ConfigMap { name, namespace } => {
                let cp = key_path(&p, "configMap");
                out.push(CompiledEntry {
                    name: entry.name.clone(),
                    source: Source::ConfigMap {
                        name: compile_template(name, &key_path(&cp, "name"), delete, diags),
                        namespace: compile_template(
                            namespace,
                            &key_path(&cp, "namespace"),
                            delete,
                            diags,
                        ),
                    },
                });
            }
            ContextSource::ApiCall {
                url_path,
                jmes_path,
                default,
                post,
            } => {
                let ap = key_path(&p, "apiCall");
                let url = compile_template(url_path, &key_path(&ap, "urlPath"), delete, diags);
                let post = post.as_ref().map(|body| {
                    let d = Document::compile(body, "", delete);
                    report_problems(&d, &key_path(&ap, "data"), diags);
                    d
                });
                if !url_path.is_empty() && post.is_none() {
                    if let Err(e) = ApiPath::parse(&shape_of(url_path)) {
                        diags.push(&key_path(&ap, "urlPath"), format!("`{url_path}`: {e}"));
                    }
                }
                let jmes_path = jmes_path
                    .as_ref()
                    .map(|text| compile_jmes_path(text, &key_path(&ap, "jmesPath"), delete, diags));
                out.push(CompiledEntry {
                    name: entry.name.clone(),
                    source: Source::ApiCall {
                        url_path: url_path.clone(),
                        url,
                        jmes_path,
                        default: default.clone(),
                        post,
                    },
                });
            }
            ContextSource::ImageRegistry {
                reference,
                jmes_path,
            } => {
                let ip = key_path(&p, "imageRegistry");
                let template =
                    compile_template(reference, &key_path(&ip, "reference"), delete, diags);
                let jmes_path = jmes_path
                    .as_ref()
                    .map(|text| compile_jmes_path(text, &key_path(&ip, "jmesPath"), delete, diags));
                out.push(CompiledEntry {
                    name: entry.name.clone(),
                    source: Source::ImageRegistry {
                        reference: template,
                        jmes_path,
                    },
                });
            }
            ContextSource::GlobalReference { name, jmes_path } => {
                let gp = key_path(&p, "globalReference");
                let template = compile_template(name, &key_path(&gp, "name"), delete, diags);
                let jmes_path = jmes_path
                    .as_ref()
                    .map(|text| compile_jmes_path(text, &key_path(&gp, "jmesPath"), delete, diags));
                out.push(CompiledEntry {
                    name: entry.name.clone(),
                    source: Source::GlobalReference {
                        name: template,
                        jmes_path,
                    },
                });
            }
            ContextSource::Variable {
                value,
                jmes_path,
                default,
            } => {
                let vp = key_path(&p, "variable");
                let doc = |v: &Value, field: &str, diags: &mut Diagnostics| {
                    let d = Document::compile_referenced(v, delete);
                    report_problems(&d, &key_path(&vp, field), diags);
                    d
                };
                let jmes_path = jmes_path
                    .as_ref()
                    .map(|text| compile_jmes_path(text, &key_path(&vp, "jmesPath"), delete, diags));
                if value.is_none() && jmes_path.is_none() && default.is_none() {
                    diags.push(&vp, "needs `value`, `jmesPath` or `default`");
                }
                out.push(CompiledEntry {
                    name: entry.name.clone(),
                    source: Source::Variable {
                        value: value.as_ref().map(|v| doc(v, "value", diags)),
                        jmes_path,
                        default: default.as_ref().map(|v| doc(v, "default", diags)),
                    },
                });
            }
        }
    }
    out
}

fn compile_jmes_path(text: &str, path: &str, delete: bool, diags: &mut Diagnostics) -> JmesPath {
    if crate::variables::has_variables(text) {
        JmesPath::Template(compile_template(text, path, delete, diags))
    } else {
        // Kyverno's DELETE rewrite of `request.object` applies inside
        // `{{ }}` only: a plain `jmesPath` reads `request.object` (null on
        // DELETE) as written (`loadVariable` queries it unchanged).
        match Query::compile(text) {
            Ok(q) => JmesPath::Compiled(q),
            Err(e) => {
                diags.push(path, format!("`{text}`: {e}"));
                JmesPath::Template(Template::compile("", "", delete))
            }
        }
    }
}

impl JmesPath {
    /// The query, its variables substituted when it has any.
    fn resolve(&self, entry: &str, ctx: &Context) -> Result<Cow<'_, Query>, String> {
        match self {
            JmesPath::Compiled(q) => Ok(Cow::Borrowed(q)),
            JmesPath::Template(t) => {
                let text = match t.render(ctx) {
                    Ok(Value::String(s)) => s,
                    Ok(_) => return Err(format!("jmespath value must be a string {entry}")),
                    Err(e) => {
                        return Err(format!(
                            "failed to substitute variables in context entry {entry}: {e}"
                        ))
                    }
                };
                Query::compile(&text)
                    .map(Cow::Owned)
                    .map_err(|e| format!("failed to compile JMESPath: {text}, error: {e}"))
            }
        }
    }
}

impl CompiledEntry {
    fn evaluate(&self, ctx: &Context, cluster: &Cached<'_>) -> Result<Value, String> {
        match &self.source {
            Source::Variable {
                value,
                jmes_path,
                default,
            } => self.variable(value.as_ref(), jmes_path.as_ref(), default.as_ref(), ctx),
            Source::ConfigMap { name, namespace } => self.config_map(name, namespace, ctx, cluster),
            Source::ApiCall {
                url_path,
                url,
                jmes_path,
                default,
                post,
            } => self.api_call(
                url_path,
                url,
                post.as_ref(),
                jmes_path.as_ref(),
                default.as_ref(),
                ctx,
                cluster,
            ),
            Source::ImageRegistry {
                reference,
                jmes_path,
            } => self.image_registry(reference, jmes_path.as_ref(), ctx, cluster),
            Source::GlobalReference { name, jmes_path } => {
                self.global_reference(name, jmes_path.as_ref(), ctx, cluster)
            }
        }
    }

    /// Kyverno's global context loader: the data of the GlobalContextEntry
    /// (or its projection) the name gives, queried with `jmesPath`.
    fn global_reference(
        &self,
        name: &Template,
        jmes_path: Option<&JmesPath>,
        ctx: &Context,
        cluster: &Cached<'_>,
    ) -> Result<Value, String> {
        let entry = &self.name;
        let reference = render_text(name, ctx)
            .map_err(|e| format!("failed to substitute variables in context entry {entry}: {e}"))?;
        let data = global_context::data(&reference, cluster).map_err(|e| {
            format!("failed to load global context data for context entry {entry}: {e}")
        })?;
        let Some(jmes_path) = jmes_path else {
            return Ok(data);
        };
        self.query_data(jmes_path, &data, ctx)
    }

    /// `data` (an API call's or a global context entry's) queried with the
    /// entry's `jmesPath`, a failure worded as Kyverno's loaders word it.
    fn query_data(
        &self,
        jmes_path: &JmesPath,
        data: &Value,
        ctx: &Context,
    ) -> Result<Value, String> {
        let entry = &self.name;
        let query = jmes_path.resolve(entry, ctx)?;
        query.search(data).map(Cow::into_owned).map_err(|e| {
            format!(
                "failed to apply JMESPath {} for context entry {entry}: {e}",
                query.text()
            )
        })
    }

    /// Kyverno's image data loader: the image's `imageData`, queried with
    /// `jmesPath`.
    fn image_registry(
        &self,
        reference: &Template,
        jmes_path: Option<&JmesPath>,
        ctx: &Context,
        cluster: &Cached<'_>,
    ) -> Result<Value, String> {
        let entry = &self.name;
        let image = match reference.render(ctx) {
            Ok(Value::String(s)) => s,
            Ok(other) => {
                return Err(format!(
                    "invalid image reference {}, image reference must be a string",
                    crate::jmespath::go::sprint(&other)
                ))
            }
            Err(e) => {
                return Err(format!(
                    "failed to substitute variables in context entry {entry}: {e}"
                ))
            }
        };
        let data = image_data::fetch(&image, cluster)
            .map_err(|e| format!("failed to fetch image descriptor: {image}, error: {e}"))?;
        let Some(jmes_path) = jmes_path else {
            return Ok(data);
        };
        let query = jmes_path.resolve(entry, ctx)?;
        query.search(&data).map(Cow::into_owned).map_err(|e| {
            format!(
                "failed to apply JMESPath ({}) results to context entry {entry}, error: {e}",
                query.text()
            )
        })
    }

    /// Kyverno's apiCall loader: the object or List the path names,
    /// queried with `jmesPath` (a `null` result is kept); `default`, not
    /// queried, when the call fails.
    #[allow(clippy::too_many_arguments)]
    fn api_call(
        &self,
        url_path: &str,
        url: &Template,
        post: Option<&Document>,
        jmes_path: Option<&JmesPath>,
        default: Option<&Value>,
        ctx: &Context,
        cluster: &Cached<'_>,
    ) -> Result<Value, String> {
        let entry = &self.name;
        let substitution = |e: VarError| {
            format!("failed to substitute variables in context entry {entry} {url_path}: {e}")
        };
        let url = render_text(url, ctx).map_err(substitution)?;
        // A test's mocked response, as Kyverno's CLI serves it: before any
        // other check, with neither `default` nor the cluster behind it.
        let method = if post.is_some() { "POST" } else { "GET" };
        if let Some(mocked) = cluster.api_call_response(method, &url) {
            if !(200..300).contains(&mocked.status) {
                return Err(format!(
                    "HTTP {} from apiCall mock for context entry {entry:?} (v1 apiCall treats non-2xx as failure)",
                    mocked.status
                ));
            }
            return match jmes_path {
                Some(jmes_path) => self.query_data(jmes_path, &mocked.body, ctx),
                None => Ok(mocked.body),
            };
        }
        // Checked before the call, so `default` does not stand in.
        if let Some(namespace) = ctx.policy_namespace() {
            api_call::check_policy_namespace(&url, namespace)?;
        }
        let response = match post {
            Some(body) => {
                let body = body.render(ctx).map_err(substitution)?;
                api_call::review_access(&body, cluster)
                    .map(Rc::new)
                    .map_err(|e| format!("failed to POST resource with raw url: {url}: {e}"))
            }
            None => ApiPath::parse(&url)
                .and_then(|path| path.fetch(cluster))
                .map_err(|e| format!("failed to GET resource with raw url: {url}: {e}")),
        };
        let response = match (response, default) {
            (Ok(response), _) => response,
            (Err(_), Some(default)) => return Ok(default.clone()),
            (Err(e), None) => return Err(format!("failed to fetch data for APICall: {e}")),
        };
        let Some(jmes_path) = jmes_path else {
            return Ok(Rc::unwrap_or_clone(response));
        };
        self.query_data(jmes_path, &response, ctx)
    }

    /// Kyverno's ConfigMap loader: the object's `data` and `metadata`, from
    /// `namespace` (`default` when empty).
    fn config_map(
        &self,
        name: &Template,
        namespace: &Template,
        ctx: &Context,
        cluster: &Cached<'_>,
    ) -> Result<Value, String> {
        let entry = &self.name;
        let text = |t: &Template| {
            render_text(t, ctx).map_err(|e| {
                format!("failed to substitute variables in context entry {entry}: {e}")
            })
        };
        let name = text(name)?;
        let mut namespace = text(namespace)?;
        if namespace.is_empty() {
            namespace = "default".into();
        }
        let object = cluster
            .fetch(&Lookup::Get {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
                namespace: Some(namespace),
                name,
            })
            .map_err(|e| format!("failed to retrieve config map for context entry {entry}: {e}"))?;
        let mut out = serde_json::Map::new();
        for key in ["data", "metadata"] {
            out.insert(
                key.to_string(),
                object.get(key).cloned().unwrap_or(Value::Null),
            );
        }
        Ok(Value::Object(out))
    }

    /// Kyverno's variable loader: the value (or the context) queried with
    /// `jmesPath`, falling back to `default`; `null` is an error.
    fn variable(
        &self,
        value: Option<&Document>,
        jmes_path: Option<&JmesPath>,
        default: Option<&Document>,
        ctx: &Context,
    ) -> Result<Value, String> {
        let name = &self.name;
        let path = match jmes_path {
            None => None,
            Some(jmes_path) => Some(jmes_path.resolve(name, ctx)?),
        };
        let default = match default {
            Some(d) => Some(d.render(ctx).map_err(|e| {
                format!("failed to substitute variables in context entry {name}: {e}")
            })?),
            None => None,
        };
        let has_default = default.as_ref().is_some_and(|d| !d.is_null());
        let mut output = default.unwrap_or(Value::Null);
        match (value, path) {
            (Some(value), path) => {
                let value = value.render(ctx).map_err(|e| {
                    format!("failed to substitute variables in context entry {name}: {e}")
                })?;
                match path {
                    None => output = value,
                    Some(q) => match q.search(&value) {
                        Ok(v) => output = v.into_owned(),
                        Err(e) if !has_default => {
                            return Err(format!(
                                "failed to apply jmespath {} to variable {}: {e}",
                                q.text(),
                                crate::jmespath::go::sprint(&value)
                            ))
                        }
                        Err(_) => {}
                    },
                }
            }
            (None, Some(q)) => match ctx.search(&q) {
                Ok(v) if !v.is_null() => output = v.into_owned(),
                Ok(_) => {}
                Err(e) if !has_default => {
                    return Err(format!(
                        "failed to apply jmespath {} to variable <nil>: {e}",
                        q.text()
                    ))
                }
                Err(_) => {}
            },
            (None, None) => {}
        }
        if output.is_null() {
            return Err(format!(
                "failed to add context entry for variable {name} since it evaluated to nil"
            ));
        }
        Ok(output)
    }
}

/// Loads entries in order; each can read the ones before it. An entry
/// that fails is recorded, not fatal: Kyverno loads an entry when a query
/// first names it, so only a query that names it fails. Returns where the
/// context was before, for [`Context::restore`] to take the entries out.
pub fn load_context(entries: &[CompiledEntry], ctx: &mut Context, cluster: &Cached<'_>) -> Mark {
    let mark = ctx.mark();
    for entry in entries {
        match entry
            .evaluate(ctx, cluster)
            .and_then(|value| ctx.admit(&value).map(|()| value))
        {
            Ok(value) => {
                ctx.set(&entry.name, value);
            }
            Err(e) => {
                ctx.fail(&entry.name, e);
            }
        }
    }
    mark
}
