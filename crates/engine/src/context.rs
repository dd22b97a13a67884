//! Kyverno's JSON context: the document `{{ }}` variables and JMESPath
//! queries read. `request` is the AdmissionRequest as the API server sent
//! it; `serviceAccountName`, `serviceAccountNamespace` and `images` are
//! derived from it; rules add their `context` entries and foreach its
//! `element`s on top, and take them away again afterwards.

use std::borrow::Cow;
use std::cell::{Cell, OnceCell};
use std::rc::Rc;

use serde_json::{Map, Value};

use crate::autogen;
use crate::images;
use crate::jmespath::{work, CompileError, Query, SearchError};
use crate::pattern::SkipMessages;
use crate::request::{AdmissionRequest, CelRequest};
use crate::roles::Roles;

static NULL: Value = Value::Null;

/// Why a query of the context failed, worded as Kyverno's `Query` does.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QueryError {
    #[error("invalid query (nil)")]
    Empty,
    #[error("incorrect query {query}: {error}")]
    Compile { query: String, error: CompileError },
    #[error("JMESPath query failed: {0}")]
    Search(SearchError),
    /// The query names a context entry that failed to load. Kyverno loads
    /// entries when a query first names them, so the query fails with
    /// the entry's error, whatever else it would have read.
    #[error("context entry `{name}` did not load: {error}")]
    Unloaded { name: String, error: String },
}

/// Whether Kyverno's deferred loader for the entry `name` runs for
/// `query`: its regex `(?:\A|\s|[^.0-9A-Za-z])NAME\b` finds the name
/// not right after a `.` or a letter or digit, and not running on into a
/// word character.
pub fn names_entry(query: &str, name: &str) -> bool {
    if name.is_empty() {
        return false;
    }
    let word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let ends_in_word = name.chars().next_back().is_some_and(word);
    query.match_indices(name).any(|(at, _)| {
        let before = query.get(..at).and_then(|s| s.chars().next_back());
        let after = query.get(at + name.len()..).and_then(|s| s.chars().next());
        let starts = match before {
            None => true,
            Some(c) => c.is_ascii_whitespace() || !(c == '.' || c.is_ascii_alphanumeric()),
        };
        starts && after.is_some_and(word) != ends_in_word
    })
}

/// Kyverno's `images` variable: the images of a Pod or pod controller.
fn images_variable(object: &Value) -> Result<Option<Value>, String> {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let Some(template) = autogen::pod_template_path(kind) else {
        return Ok(None);
    };
    images::images_of(object, template).map_err(images_failure)
}

/// Whether [`images_variable`] would succeed, without building it.
fn check_images(object: &Value) -> Result<(), String> {
    let kind = object.get("kind").and_then(Value::as_str).unwrap_or("");
    let Some(template) = autogen::pod_template_path(kind) else {
        return Ok(());
    };
    images::check_images(object, template).map_err(images_failure)
}

fn images_failure(e: String) -> String {
    format!("failed to add image information to the policy rule context: {e}")
}

/// Kyverno's `images` variable in a context: built on first read, or the
/// one a parent context built.
#[derive(Debug, Clone)]
enum Images<'a> {
    Lazy(OnceCell<Option<Value>>),
    Shared(&'a Option<Value>),
}

/// A query's scope: on the stack when it is short (nearly always: the
/// foreach elements and a few context entries), searched once per query.
enum ScopeEntries<'q> {
    Inline([(&'q str, &'q Value); SCOPE_INLINE], usize),
    Heap(Vec<(&'q str, &'q Value)>),
}

const SCOPE_INLINE: usize = 8;

impl<'q> ScopeEntries<'q> {
    fn collect(entries: impl Iterator<Item = (&'q str, &'q Value)>, len: usize) -> Self {
        if len > SCOPE_INLINE {
            return Self::Heap(entries.collect());
        }
        let mut inline = [("", &NULL); SCOPE_INLINE];
        let mut filled = 0;
        for (slot, entry) in inline.iter_mut().zip(entries) {
            *slot = entry;
            filled += 1;
        }
        Self::Inline(inline, filled)
    }

    fn as_slice(&self) -> &[(&'q str, &'q Value)] {
        match self {
            Self::Inline(inline, filled) => inline.get(..*filled).unwrap_or_default(),
            Self::Heap(entries) => entries,
        }
    }
}

/// Where [`Context::restore`] takes the entries (and the failed ones)
/// back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    entries: usize,
    failed: usize,
}

/// The document queries read: the request's (`root`), with entries laid
/// over it (rule and foreach `context` entries, foreach `element`s). An
/// entry is seen as a top-level field and hides an earlier one of its
/// name. A foreach works in a [`Context::child`], whose elements are
/// borrowed from the list they are in, never copied.
#[derive(Debug, Clone)]
pub struct Context<'a> {
    root: Cow<'a, Value>,
    entries: Vec<(Cow<'a, str>, Cow<'a, Value>)>,
    /// Context entries that failed to load, with why: a query that names
    /// one fails ([`QueryError::Unloaded`]).
    failed: Vec<(Cow<'a, str>, Cow<'a, str>)>,
    /// Built by the first query that may read it (most rules never do, and
    /// it costs more than a small rule); its references are checked up
    /// front, which is all that can fail.
    images: Images<'a>,
    delete: bool,
    /// Whether the request updates an object it carries the old state of
    /// (kept, as `delete`, so that no rule looks it up again).
    update: bool,
    /// Why `images` could not be built: Kyverno fails every rule that
    /// needs the context then. Checked when first asked: CEL, podSecurity
    /// and plain pattern rules never ask.
    images_error: OnceCell<Option<String>>,
    /// The request as CEL rules read it, built for the first of them.
    cel_request: OnceCell<CelRequest>,
    /// The namespace of a namespaced `Policy`: its API calls may read only
    /// there, as in Kyverno.
    policy_namespace: Option<Rc<str>>,
    /// Whether the rules' skip messages are read (see [`SkipMessages`]).
    skips: SkipMessages,
    /// What the request's variables may still copy and its context entries
    /// may still add, shared by child contexts: see [`Context::charge`] and
    /// [`Context::admit`].
    spent: Rc<Cell<Spent>>,
}

/// A request's running totals (see [`Context::spent`]).
#[derive(Debug, Clone, Copy)]
struct Spent {
    /// What substitution may still copy out of the context.
    copies_left: usize,
    /// Whether the request's own weight was added to `copies_left`.
    weighed: bool,
    /// The bytes of JSON context entries added so far.
    entries: usize,
}

impl Spent {
    fn new() -> Rc<Cell<Self>> {
        Rc::new(Cell::new(Self {
            copies_left: COPY_BUDGET,
            weighed: false,
            entries: 0,
        }))
    }
}

/// Kyverno's `DefaultMaxContextSize`: the JSON its context entries of one
/// request may add, in bytes. Every load counts, a foreach's for each
/// element too, and nothing is given back when an entry goes away.
pub const MAX_CONTEXT_SIZE: usize = 2 << 20;

/// How much of the context the variables of one request may copy, in
/// estimated bytes ([`work::footprint`]): this much, and [`COPIES_OF_REQUEST`]
/// times the request's own footprint. Copying is what substitution costs;
/// a variable whose value is a list of variables that each bring back that
/// list copies the square of the request.
pub const COPY_BUDGET: usize = 32 << 20;
pub const COPIES_OF_REQUEST: usize = 16;

impl Context<'static> {
    /// The context Kyverno builds for an admission request. The request is
    /// moved in, not copied: a fresh instance serves one request, and a
    /// large object must not cost a second copy.
    pub fn new(request: Value) -> Self {
        let view = AdmissionRequest::new(&request);
        let delete = view.operation() == "DELETE";
        let update = view.operation() == "UPDATE" && !view.old_object().is_null();
        let (sa_name, sa_namespace) = service_account(view.username());
        let images = OnceCell::new();
        let images_error = OnceCell::new();
        if delete {
            let _ = images.set(None);
            let _ = images_error.set(None);
        }
        let mut req = match request {
            Value::Object(map) => map,
            _ => Map::new(),
        };
        // Kyverno always has both keys: `null` when the request has no such object.
        for key in ["object", "oldObject"] {
            if !req.contains_key(key) {
                req.insert(key.to_string(), Value::Null);
            }
        }
        let mut root = Map::new();
        root.insert("request".into(), Value::Object(req));
        root.insert("serviceAccountName".into(), Value::String(sa_name));
        root.insert(
            "serviceAccountNamespace".into(),
            Value::String(sa_namespace),
        );
        Self {
            root: Cow::Owned(Value::Object(root)),
            entries: Vec::new(),
            failed: Vec::new(),
            images: Images::Lazy(images),
            delete,
            update,
            images_error,
            cel_request: OnceCell::new(),
            policy_namespace: None,
            skips: SkipMessages::Read,
            spent: Spent::new(),
        }
    }

    /// A context over a plain document (tests, `variable.value` + `jmesPath`).
    pub fn from_value(root: Value) -> Self {
        Self {
            root: Cow::Owned(root),
            entries: Vec::new(),
            failed: Vec::new(),
            images: Images::Lazy(OnceCell::from(None)),
            delete: false,
            update: false,
            images_error: OnceCell::from(None),
            cel_request: OnceCell::new(),
            policy_namespace: None,
            skips: SkipMessages::Read,
            spent: Spent::new(),
        }
    }
}

impl<'a> Context<'a> {
    /// A context that reads this one and takes entries of its own, which
    /// may borrow from this one (a foreach's elements from its list).
    pub fn child(&self) -> Context<'_> {
        Context {
            root: Cow::Borrowed(self.root.as_ref()),
            entries: self
                .entries
                .iter()
                .map(|(name, value)| (Cow::Borrowed(name.as_ref()), Cow::Borrowed(value.as_ref())))
                .collect(),
            failed: self
                .failed
                .iter()
                .map(|(name, error)| (Cow::Borrowed(name.as_ref()), Cow::Borrowed(error.as_ref())))
                .collect(),
            images: match &self.images {
                Images::Shared(images) => Images::Shared(images),
                Images::Lazy(cell) => match cell.get() {
                    Some(images) => Images::Shared(images),
                    None => Images::Lazy(OnceCell::new()),
                },
            },
            delete: self.delete,
            update: self.update,
            images_error: self.images_error.clone(),
            cel_request: OnceCell::new(),
            policy_namespace: self.policy_namespace.clone(),
            skips: self.skips,
            spent: self.spent.clone(),
        }
    }

    /// Makes this the context of a namespaced `Policy` in `namespace`.
    pub fn set_policy_namespace(&mut self, namespace: &str) {
        self.policy_namespace = Some(namespace.into());
    }

    /// Takes what copying `value` weighs from the request's budget; false,
    /// and nothing taken, when too little is left. The weighing stops as
    /// soon as it passes what is left.
    pub fn charge(&self, value: &Value) -> bool {
        let mut spent = self.spent.get();
        let mut weight = work::footprint(value, 0, spent.copies_left);
        if weight.is_none() && !spent.weighed {
            // The request is weighed only when the base runs out: most
            // requests copy far less.
            let request = work::footprint(&self.root, 0, usize::MAX).unwrap_or(0);
            spent.copies_left = spent
                .copies_left
                .saturating_add(request.saturating_mul(COPIES_OF_REQUEST));
            spent.weighed = true;
            weight = work::footprint(value, 0, spent.copies_left);
        }
        let Some(weight) = weight else {
            self.spent.set(spent);
            return false;
        };
        spent.copies_left -= weight;
        self.spent.set(spent);
        true
    }

    /// Counts a context entry's value against [`MAX_CONTEXT_SIZE`], as
    /// Kyverno's `AddContextEntry` does with its JSON; past the limit the
    /// entry is not added and this is Kyverno's error.
    pub fn admit(&self, value: &Value) -> Result<(), String> {
        let mut spent = self.spent.get();
        let size = spent
            .entries
            .saturating_add(crate::jmespath::go::json_len(value));
        if size > MAX_CONTEXT_SIZE {
            return Err(format!(
                "context size limit exceeded: {size} bytes exceeds limit of {MAX_CONTEXT_SIZE} bytes"
            ));
        }
        spent.entries = size;
        self.spent.set(spent);
        Ok(())
    }

    /// Whether the rules' skip messages are read: an admission verdict
    /// never reads them, so patterns need not write them.
    pub fn set_skip_messages(&mut self, skips: SkipMessages) {
        self.skips = skips;
    }

    pub fn skip_messages(&self) -> SkipMessages {
        self.skips
    }

    /// The namespace of the namespaced `Policy` whose rules run here.
    pub fn policy_namespace(&self) -> Option<&str> {
        self.policy_namespace.as_deref()
    }

    /// Why the context is unusable for rules that read it, if it is.
    pub fn images_error(&self) -> Option<&str> {
        self.images_error
            .get_or_init(|| check_images(self.object()).err())
            .as_deref()
    }

    /// The admission request, as the API server sent it.
    pub fn request(&self) -> &Value {
        self.root.get("request").unwrap_or(&NULL)
    }

    /// The request as Kyverno's CEL rules read it ([`CelRequest`]), built
    /// once per request.
    pub fn cel_request(&self) -> &CelRequest {
        self.cel_request
            .get_or_init(|| CelRequest::new(self.request()))
    }

    /// Whether the request deletes: variables then read `request.oldObject`
    /// where they say `request.object`.
    pub fn is_delete(&self) -> bool {
        self.delete
    }

    /// Whether the request is an UPDATE with an old object.
    pub fn is_update(&self) -> bool {
        self.update
    }

    /// A top-level field as queries see it: the latest entry of that name,
    /// else the document's own.
    pub fn lookup(&self, name: &str) -> Option<&Value> {
        if let Some((_, value)) = self.entries.iter().rev().find(|(n, _)| n == name) {
            return Some(value.as_ref());
        }
        if name == "images" {
            if let Some(images) = self.built_images() {
                return Some(images);
            }
        }
        self.root.get(name)
    }

    /// Runs a compiled query against the whole context.
    pub fn search<'q>(&'q self, query: &'q Query) -> Result<Cow<'q, Value>, QueryError> {
        self.check_loaded(query)?;
        let scope = self.scope(query);
        query
            .search_in(self.root.as_ref(), scope.as_slice())
            .map_err(QueryError::Search)
    }

    /// [`Context::search`] for a list: its elements, borrowed where the
    /// context holds them.
    pub fn search_list<'q>(&'q self, query: &'q Query) -> Result<Vec<Cow<'q, Value>>, QueryError> {
        self.check_loaded(query)?;
        let scope = self.scope(query);
        query
            .search_list_in(self.root.as_ref(), scope.as_slice())
            .map_err(QueryError::Search)
    }

    /// Fails a query that names an entry that did not load.
    fn check_loaded(&self, query: &Query) -> Result<(), QueryError> {
        match self
            .failed
            .iter()
            .find(|(name, _)| names_entry(query.text(), name))
        {
            Some((name, error)) => Err(QueryError::Unloaded {
                name: name.to_string(),
                error: error.to_string(),
            }),
            None => Ok(()),
        }
    }

    /// What `query` sees over the document: `images` when it may read it,
    /// then the entries.
    fn scope<'q>(&'q self, query: &Query) -> ScopeEntries<'q> {
        let images = match &self.images {
            Images::Shared(images) => images.as_ref(),
            Images::Lazy(cell) => match cell.get() {
                Some(built) => built.as_ref(),
                None if query.may_read("images") => self.built_images(),
                None => None,
            },
        };
        let entries = images.map(|images| ("images", images)).into_iter().chain(
            self.entries
                .iter()
                .map(|(name, value)| (name.as_ref(), value.as_ref())),
        );
        ScopeEntries::collect(entries, usize::from(images.is_some()) + self.entries.len())
    }

    fn built_images(&self) -> Option<&Value> {
        match &self.images {
            Images::Shared(images) => images.as_ref(),
            Images::Lazy(cell) => cell
                .get_or_init(|| {
                    if self.images_error().is_some() {
                        return None;
                    }
                    images_variable(self.object()).ok().flatten()
                })
                .as_ref(),
        }
    }

    /// Compiles and runs `text`, for expressions known only at run time.
    pub fn query(&self, text: &str) -> Result<Value, QueryError> {
        let text = text.trim();
        if text.is_empty() {
            return Err(QueryError::Empty);
        }
        let query = Query::compile(text).map_err(|error| QueryError::Compile {
            query: text.to_string(),
            error,
        })?;
        self.search(&query).map(Cow::into_owned)
    }

    /// Lays an entry over the context; [`Context::restore`] with the mark
    /// takes it (and any set after it) away again.
    pub fn set(&mut self, name: &str, value: Value) -> Mark {
        let mark = self.mark();
        self.entries
            .push((Cow::Owned(name.to_string()), Cow::Owned(value)));
        mark
    }

    /// [`Context::set`] with a value the context borrows.
    pub fn set_borrowed(&mut self, name: Cow<'a, str>, value: &'a Value) -> Mark {
        let mark = self.mark();
        self.entries.push((name, Cow::Borrowed(value)));
        mark
    }

    /// Records that the entry `name` failed to load: queries that name it
    /// fail with `error` until [`Context::restore`] takes it away.
    pub fn fail(&mut self, name: &str, error: String) -> Mark {
        let mark = self.mark();
        self.failed
            .push((Cow::Owned(name.to_string()), Cow::Owned(error)));
        mark
    }

    /// Where the context is now, for [`Context::restore`].
    pub fn mark(&self) -> Mark {
        Mark {
            entries: self.entries.len(),
            failed: self.failed.len(),
        }
    }

    /// Undoes [`Context::set`] and [`Context::fail`] and what came after.
    pub fn restore(&mut self, mark: Mark) {
        self.entries.truncate(mark.entries);
        self.failed.truncate(mark.failed);
    }

    /// Adds the requester's roles as Kyverno does (`request.roles`,
    /// `request.clusterRoles`, each left out when empty).
    pub fn add_roles(&mut self, roles: &Roles) {
        let Some(Value::Object(request)) = self.root.to_mut().get_mut("request") else {
            return;
        };
        for (key, list) in [
            ("roles", &roles.roles),
            ("clusterRoles", &roles.cluster_roles),
        ] {
            if !list.is_empty() {
                let list = list.iter().cloned().map(Value::String).collect();
                request.insert(key.to_string(), Value::Array(list));
            }
        }
    }

    /// `request.object`.
    pub fn object(&self) -> &Value {
        self.request().get("object").unwrap_or(&NULL)
    }

    /// Replaces `request.object` (Kyverno re-validates the old object of
    /// an UPDATE this way); returns the previous value.
    pub fn swap_object(&mut self, object: Value) -> Value {
        // Kyverno reads `images` from the new object only.
        self.built_images();
        self.swap_request_field("object", object)
    }

    /// Replaces `request.oldObject`; returns the previous one.
    pub fn swap_old_object(&mut self, object: Value) -> Value {
        self.swap_request_field("oldObject", object)
    }

    fn swap_request_field(&mut self, field: &str, value: Value) -> Value {
        self.cel_request = OnceCell::new();
        match self
            .root
            .to_mut()
            .get_mut("request")
            .and_then(|r| r.get_mut(field))
        {
            Some(slot) => std::mem::replace(slot, value),
            None => Value::Null,
        }
    }

    /// Replaces `request.operation`; returns the previous one.
    pub fn swap_operation(&mut self, operation: &str) -> String {
        self.cel_request = OnceCell::new();
        match self
            .root
            .to_mut()
            .get_mut("request")
            .and_then(|r| r.get_mut("operation"))
        {
            Some(slot) => match std::mem::replace(slot, Value::String(operation.into())) {
                Value::String(s) => s,
                _ => String::new(),
            },
            None => String::new(),
        }
    }
}

/// `system:serviceaccount:NS:NAME` → (NAME, NS); anything else → empty.
/// Like Kyverno, only the prefix's length is checked, not its text.
fn service_account(username: &str) -> (String, String) {
    const PREFIX: &str = "system:serviceaccount:";
    let rest = if username.len() <= PREFIX.len() {
        ""
    } else {
        username.get(PREFIX.len()..).unwrap_or("")
    };
    let parts: Vec<&str> = rest.split(':').collect();
    match (parts.first(), parts.get(1)) {
        (Some(ns), Some(name)) => (name.to_string(), ns.to_string()),
        _ => (String::new(), String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_copy_budget_is_the_requests_and_shared_with_child_contexts() {
        let ctx = Context::new(json!({"operation": "CREATE", "object": {"a": 1}}));
        let child = ctx.child();
        // Half the base, give or take the list's own 32 bytes.
        let big = Value::Array(vec![Value::Null; COPY_BUDGET / 64]);
        assert!(child.charge(&big));
        assert!(
            ctx.charge(&big),
            "the request's own weight is allowed beyond the base"
        );
        // The base and what the request allows are spent now.
        assert!(!ctx.charge(&big));
        assert!(!child.charge(&Value::Array(vec![json!([1, 2, 3]); 100])));
        assert!(ctx.charge(&json!(1)), "a failed charge takes nothing");
    }

    #[test]
    fn images_are_read_from_pods_and_pod_controllers_only() {
        let cronjob = json!({"kind": "CronJob", "spec": {"jobTemplate": {"spec": {"template": {"spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}}});
        let images = images_variable(&cronjob).unwrap().unwrap();
        assert_eq!(
            images["containers"]["c"]["jsonPointer"],
            "/spec/jobTemplate/spec/template/spec/containers/0/image"
        );
        let config =
            json!({"kind": "ConfigMap", "spec": {"containers": [{"name": "c", "image": "nginx"}]}});
        assert!(images_variable(&config).unwrap().is_none());
    }

    #[test]
    fn images_are_built_when_read_and_stay_those_of_the_new_object() {
        let pod = |image: &str| json!({"kind": "Pod", "spec": {"containers": [{"name": "c", "image": image}]}});
        let request = json!({"operation": "UPDATE", "object": pod("nginx:new"),
            "oldObject": pod("nginx:old")});
        let tag = || Query::compile("images.containers.c.tag").unwrap();
        let keys = || Query::compile("keys(@)").unwrap();
        let read = |ctx: &Context, q: &Query| ctx.search(q).map(Cow::into_owned);

        let ctx = Context::new(request.clone());
        assert_eq!(read(&ctx, &tag()), Ok(json!("new")), "read_on_demand");
        assert_eq!(
            read(&ctx, &keys()),
            Ok(json!([
                "images",
                "request",
                "serviceAccountName",
                "serviceAccountNamespace"
            ])),
            "whole_context_holds_images"
        );

        let mut ctx = Context::new(request.clone());
        let old = ctx.request().get("oldObject").cloned().unwrap_or_default();
        let new = ctx.swap_object(old);
        assert_eq!(
            read(&ctx, &tag()),
            Ok(json!("new")),
            "swapped_object_keeps_new_images"
        );
        ctx.swap_object(new);

        let mut ctx = Context::new(request);
        let mark = ctx.set("images", json!({"containers": {"c": {"tag": "entry"}}}));
        assert_eq!(
            read(&ctx, &tag()),
            Ok(json!("entry")),
            "entry_named_images_wins"
        );
        ctx.restore(mark);
        assert_eq!(
            read(&ctx, &tag()),
            Ok(json!("new")),
            "restored_builtin_images"
        );
    }

    #[test]
    fn service_account_comes_from_the_username() {
        let cases = [
            (
                "service_account",
                "system:serviceaccount:kube-system:replicaset-controller",
                ("replicaset-controller", "kube-system"),
            ),
            ("user", "alice", ("", "")),
            ("prefix_only", "system:serviceaccount:", ("", "")),
            ("no_name", "system:serviceaccount:ns", ("", "")),
        ];
        for (name, username, (sa, ns)) in cases {
            assert_eq!(
                service_account(username),
                (sa.to_string(), ns.to_string()),
                "{name}"
            );
        }
    }

    /// Kyverno's deferred loader regex, `(?:\A|\s|[^.0-9A-Za-z])NAME\b`.
    #[test]
    fn queries_name_an_entry_as_kyvernos_deferred_loader_finds_it() {
        let cases = [
            ("the_whole_query", "data", true),
            ("a_field_of_it", "data.items[0]", true),
            ("after_an_operator", "x || data", true),
            ("in_a_function_call", "length(data)", true),
            ("after_an_underscore", "_data", true),
            ("inside_a_string_literal", "'data'", true),
            ("a_field_of_something_else", "request.data", false),
            ("a_longer_name", "database", false),
            ("after_a_letter", "mydata", false),
            ("after_a_digit", "1data", false),
            ("running_on_into_an_underscore", "data_x", false),
            ("once_of_several", "mydata || data", true),
        ];
        for (name, query, want) in cases {
            assert_eq!(names_entry(query, "data"), want, "{name}");
        }
    }

    #[test]
    fn a_failed_entry_fails_the_queries_that_name_it_until_restored() {
        let mut ctx = Context::from_value(json!({"other": 1}));
        let mark = ctx.fail("data", "no such ConfigMap".into());
        let err = ctx.query("data || 'fallback'").unwrap_err();
        assert_eq!(
            err.to_string(),
            "context entry `data` did not load: no such ConfigMap"
        );
        assert_eq!(ctx.query("other").unwrap(), json!(1));
        let child = ctx.child();
        assert!(child.query("data").is_err(), "a child sees the failure");
        ctx.restore(mark);
        assert_eq!(ctx.query("data || 'fallback'").unwrap(), json!("fallback"));
    }

    #[test]
    fn context_holds_the_request_and_derived_variables() {
        let raw = json!({
            "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:ns1:builder"},
            "object": {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}
        });
        let ctx = Context::new(raw);
        assert_eq!(
            ctx.query("request.object.metadata.name").unwrap(),
            json!("p")
        );
        assert_eq!(ctx.query("request.oldObject").unwrap(), json!(null));
        assert_eq!(ctx.query("serviceAccountName").unwrap(), json!("builder"));
        assert_eq!(ctx.query("serviceAccountNamespace").unwrap(), json!("ns1"));
        assert_eq!(
            ctx.query("images.containers.c.reference").unwrap(),
            json!("docker.io/nginx:latest")
        );
        assert_eq!(
            ctx.query("  ").unwrap_err().to_string(),
            "invalid query (nil)"
        );
        assert_eq!(
            ctx.query("request.object.metadata.labels")
                .unwrap_err()
                .to_string(),
            "JMESPath query failed: Unknown key \"labels\" in path"
        );
    }

    #[test]
    fn entries_are_set_and_restored() {
        let mut ctx = Context::from_value(json!({"a": 1}));
        let first = ctx.set("a", json!(2));
        let second = ctx.set("b", json!(3));
        assert_eq!(ctx.query("[a, b]").unwrap(), json!([2, 3]));
        assert_eq!(ctx.query("@").unwrap(), json!({"a": 2, "b": 3}));
        ctx.restore(second);
        assert_eq!(ctx.query("@").unwrap(), json!({"a": 2}));
        ctx.restore(first);
        assert_eq!(ctx.query("@").unwrap(), json!({"a": 1}));
        assert_eq!(ctx.lookup("b"), None);
    }

    #[test]
    fn a_child_reads_its_parent_and_borrows_its_elements() {
        let mut parent = Context::from_value(json!({"list": [{"n": 1}, {"n": 2}]}));
        parent.set("entry", json!("e"));
        let list = Query::compile("list").unwrap();
        let read = Query::compile("[entry, element.n]").unwrap();
        let items = parent.search_list(&list).unwrap();
        let mut child = parent.child();
        let mut seen = Vec::new();
        for item in &items {
            let mark = child.set_borrowed(Cow::Borrowed("element"), item.as_ref());
            seen.push(child.search(&read).unwrap().into_owned());
            child.restore(mark);
        }
        assert_eq!(seen, vec![json!(["e", 1]), json!(["e", 2])]);
        assert_eq!(child.lookup("element"), None);
    }
}
