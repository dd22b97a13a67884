//! Kyverno's overlay patterns (`validate.pattern`, `anyPattern`), compiled
//! once and matched against a resource as Kyverno's `MatchPattern` does:
//! anchors first, then nested-anchor keys, then plain keys; skips from
//! conditional and global anchors; failure paths like `/spec/containers/0/image/`.
//!
//! A pattern compiled on a request (quiet diagnostics) borrows its keys
//! from the settings and compiles each map value only when an evaluation
//! reaches it: most of a policy's pattern sits under anchors whose keys a
//! given resource lacks (the 20 PSS pattern rules reach 34 of 243 nodes on
//! a compliant Pod). Checking settings compiles every node, with paths.

use std::cell::OnceCell;

use serde_json::{Map, Value};

use crate::json::{self, Json};

use crate::anchor::{self, AnchorKind};
use crate::diagnostics::{Diagnostics, LazyPath};
use crate::jmespath::work;
use crate::operator::{self, StringPattern};
use crate::scan::{self, Needle};
use crate::wildcard::{self, has_wildcard};

/// Patterns deeper than this are refused at compile time, and resources are
/// never walked deeper than the pattern, so evaluation depth is bounded too.
pub const MAX_DEPTH: usize = 64;

const CONDITIONAL_MISMATCH: &str = "conditional anchor mismatch";
const GLOBAL_MISMATCH: &str = "global anchor mismatch";
const NEGATION_MATCHED: &str = "negation anchor matched in resource";
const CONDITIONAL_MISMATCH_NEEDLE: Needle = Needle::new(CONDITIONAL_MISMATCH);
const GLOBAL_MISMATCH_NEEDLE: Needle = Needle::new(GLOBAL_MISMATCH);
const NEGATION_MATCHED_NEEDLE: Needle = Needle::new(NEGATION_MATCHED);

/// A compiled pattern node, borrowing from the pattern's JSON.
#[derive(Debug, Clone, PartialEq)]
pub enum Pattern<'a> {
    Map(MapPattern<'a>),
    Array(Vec<Pattern<'a>>),
    Scalar(Scalar<'a>),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Scalar<'a> {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    String(StringPattern<'a>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct MapPattern<'a> {
    /// Entries in Kyverno's evaluation order.
    entries: Vec<Entry<'a>>,
    /// Whether an entry, here or deeper, is anchored (Kyverno evaluates
    /// such keys first).
    anchored: bool,
    /// How many of `entries` are Kyverno's phase one (conditional,
    /// equality, negation and existence anchors).
    phase_one: usize,
    /// Whether a `metadata` entry may hold wildcard keys to bind
    /// ([`expand_in_metadata`]).
    holds_metadata: bool,
}

/// Where a map sits, for Kyverno's wildcard keys in `metadata.labels` and
/// `metadata.annotations` (`ExpandInMetadata`).
#[derive(Debug, Clone, Copy, PartialEq)]
enum Place {
    Other,
    Metadata,
    Tags,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry<'a> {
    /// The key as written (`(image)`).
    raw: &'a str,
    /// Where the key without its anchor (`image`) sits in `raw`: one string
    /// per entry instead of two.
    key_at: std::ops::Range<usize>,
    anchor: Option<AnchorKind>,
    /// A wildcard key in labels/annotations: bound to the first resource key
    /// it matches (Go picks one at random).
    bind_wildcard: bool,
    value: Child<'a>,
}

/// A map entry's value: compiled with its map, or when first reached.
#[derive(Debug, Clone, PartialEq)]
enum Child<'a> {
    Ready(Box<Pattern<'a>>),
    /// Kept inline, small: most deferred values are never compiled.
    Deferred {
        source: &'a Json<'a>,
        depth: usize,
        place: Place,
        /// Whether the value holds anchors (which orders its entry first),
        /// read from the JSON without compiling it.
        anchored: bool,
        /// The value compiled, or its problem (settings checks report it
        /// first; a request that reaches it errors).
        compiled: OnceCell<Box<Result<Pattern<'a>, String>>>,
    },
}

impl<'a> Child<'a> {
    fn get(&self) -> Result<&Pattern<'a>, PatternError> {
        let (source, depth, place, compiled) = match self {
            Child::Ready(pattern) => return Ok(pattern),
            Child::Deferred {
                source,
                depth,
                place,
                compiled,
                ..
            } => (*source, *depth, *place, compiled),
        };
        let compiled = compiled.get_or_init(|| {
            let mut diags = Diagnostics::quiet();
            let pattern = compile_node(source, &LazyPath::new(""), depth, place, &mut diags);
            Box::new(if diags.is_empty() {
                Ok(pattern)
            } else {
                Err(diags.summary())
            })
        });
        compiled
            .as_ref()
            .as_ref()
            .map_err(|problem| PatternError::invalid(format!("the pattern is invalid: {problem}")))
    }

    fn has_anchors(&self) -> bool {
        match self {
            Child::Ready(pattern) => has_nested_anchors(pattern),
            Child::Deferred { anchored, .. } => *anchored,
        }
    }
}

/// Where Kyverno evaluates an entry of a map, in this order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Phase {
    /// Conditional, equality, negation and existence anchors.
    Anchor,
    /// Global anchors and keys holding anchors deeper down.
    Front,
    Plain,
}

/// The phase an anchor puts its entry in; `None` for the anchors that
/// leave it a plain key.
fn anchor_phase(kind: AnchorKind) -> Option<Phase> {
    match kind {
        AnchorKind::Condition
        | AnchorKind::Equality
        | AnchorKind::Negation
        | AnchorKind::Existence => Some(Phase::Anchor),
        AnchorKind::Global => Some(Phase::Front),
        AnchorKind::AddIfNotPresent => None,
    }
}

impl Entry<'_> {
    fn phase(&self) -> Phase {
        match self.anchor.and_then(anchor_phase) {
            Some(phase) => phase,
            None if self.value.has_anchors() => Phase::Front,
            None => Phase::Plain,
        }
    }

    /// The key without its anchor (`image`).
    fn key(&self) -> &str {
        self.raw.get(self.key_at.clone()).unwrap_or_default()
    }
}

/// Why a pattern did not match, in Kyverno's words.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternError {
    pub message: String,
    /// The resource path Kyverno reports (`/spec/containers/0/image/`); empty
    /// when Kyverno reports none.
    pub path: String,
    /// Beyond Kyverno: what was expected and what was found, in words.
    detail: Option<String>,
    /// The pattern keys leading to the failure, innermost first; filled in
    /// only on the way out of a failure, so passing checks build nothing.
    field: Vec<String>,
    /// A skip gathered from a list or map whose every check skipped
    /// (Kyverno's `*PatternError`), as opposed to an anchor's own skip.
    gathered: bool,
    /// A part of the pattern reached on a request did not compile, or the
    /// request's allowance of checks ran out: the rule's error, at once.
    invalid: bool,
    /// Set when nobody would read the message, so it was not written: a
    /// skip's (an admission verdict never reads one), or a failure under an
    /// anchor that turns every failure into a skip. Kyverno classifies
    /// errors by their text, so this keeps what the text would have held.
    unwritten: Option<Mentions>,
}

/// Which of Kyverno's anchor phrases a message holds, written or not.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct Mentions {
    skip: bool,
    negation: bool,
}

/// The phrase all three anchor messages share: most texts are ruled out by
/// one scan for it.
const ANCHOR_PHRASE: Needle = Needle::new(" anchor m");

impl Mentions {
    const SKIP: Mentions = Mentions {
        skip: true,
        negation: false,
    };

    fn of(text: &str) -> Self {
        if !scan::contains(text, &ANCHOR_PHRASE) {
            return Self::default();
        }
        Self {
            skip: scan::contains(text, &CONDITIONAL_MISMATCH_NEEDLE)
                || scan::contains(text, &GLOBAL_MISMATCH_NEEDLE),
            negation: scan::contains(text, &NEGATION_MATCHED_NEEDLE),
        }
    }

    /// A message made of parts the phrases cannot straddle (each part is
    /// set off by a quote, slash, colon or `; `, none of which a phrase
    /// holds) mentions what its parts mention.
    fn or(self, other: Self) -> Self {
        Self {
            skip: self.skip || other.skip,
            negation: self.negation || other.negation,
        }
    }

    /// A resource path's keys, as its text would show them.
    fn of_path(path: &ResPath<'_>) -> Self {
        let mut mentions = Self::default();
        let mut at = path;
        loop {
            at = match at {
                ResPath::Root => return mentions,
                ResPath::Key(parent, key) => {
                    mentions = mentions.or(Self::of(key));
                    parent
                }
                ResPath::Index(parent, _) => parent,
            };
        }
    }

    /// Go's `%v` of a resource value, as the mismatch message prints it.
    fn of_value(value: &Value) -> Self {
        match value {
            Value::String(s) => Self::of(s),
            Value::Array(_) | Value::Object(_) => Self::of(&go_value(value)),
            Value::Null | Value::Bool(_) | Value::Number(_) => Self::default(),
        }
    }

    fn of_scalar(scalar: &Scalar<'_>) -> Self {
        match scalar {
            Scalar::String(s) => Self::of(s.raw()),
            _ => Self::default(),
        }
    }
}

impl PatternError {
    fn new(path: &dyn std::fmt::Display, message: String) -> Self {
        Self {
            message,
            path: path.to_string(),
            detail: None,
            field: Vec::new(),
            gathered: false,
            invalid: false,
            unwritten: None,
        }
    }

    /// A failure whose message nobody reads, with what it would mention.
    fn unwritten(mentions: Mentions) -> Self {
        Self {
            unwritten: Some(mentions),
            ..Self::new(&"", String::new())
        }
    }

    /// The rule's error, at once (see `invalid`).
    fn invalid(message: String) -> Self {
        Self {
            invalid: true,
            ..Self::new(&"", message)
        }
    }

    fn mentions(&self) -> Mentions {
        self.unwritten
            .unwrap_or_else(|| Mentions::of(&self.message))
    }

    /// A skip made of the skips of every element or anchor.
    fn gathered(mut self) -> Self {
        self.gathered = true;
        self
    }

    fn detail(mut self, detail: String) -> Self {
        self.detail = Some(detail);
        self
    }

    /// The same failure under Kyverno's anchor prefix (a conditional or
    /// global anchor's, so it is a skip). Kyverno wraps it in its anchor
    /// error type, so a skip gathered below becomes the anchor's own
    /// (direct) skip. `silent`: nobody reads the skip's message.
    fn prefixed(mut self, prefix: &str, silent: bool) -> Self {
        // The rule's error (`invalid`) keeps its message however quiet.
        if !self.invalid && (silent || self.unwritten.is_some()) {
            return Self::unwritten(self.mentions().or(Mentions::SKIP));
        }
        self.message = format!("{prefix}: {}", self.message);
        self.gathered = false;
        self
    }

    fn within(mut self, segment: impl FnOnce() -> String) -> Self {
        // Only a failure's explanation reads the pattern fields.
        if self.unwritten.is_none() {
            self.field.push(segment());
        }
        self
    }

    /// `pattern.spec.containers[*].image: expected `!*:latest`, found `nginx:latest``.
    fn explanation(&self) -> Option<String> {
        let detail = self.detail.as_ref()?;
        let mut field = String::from("pattern");
        for segment in self.field.iter().rev() {
            if segment.starts_with('[') {
                field.push_str(segment);
            } else if segment
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                field.push('.');
                field.push_str(segment);
            } else {
                field.push_str(&format!("[\"{segment}\"]"));
            }
        }
        Some(format!("{field}: {detail}"))
    }

    /// Conditional and global anchor mismatches skip the rule. Kyverno
    /// classifies by the message text, so wrapped errors classify the same.
    /// Asked of every element's failure, so through [`scan`], not
    /// `str::contains` (a two-way searcher set up per call).
    fn is_skip(&self) -> bool {
        self.mentions().skip
    }

    fn is_negation(&self) -> bool {
        self.mentions().negation
    }
}

/// The skips of a map's anchors or of a list's elements, gathered into one
/// skip (Kyverno's `multierr.Combine`) when nothing else decides.
struct Skips {
    /// Nobody reads the gathered message: keep only what it mentions.
    silent: bool,
    messages: Vec<String>,
    mentions: Mentions,
    count: usize,
    /// Whether one of them is an anchor's own skip, not a gathered one.
    direct: bool,
}

impl Skips {
    fn new(silent: bool) -> Self {
        Self {
            silent,
            messages: Vec::new(),
            mentions: Mentions::default(),
            count: 0,
            direct: false,
        }
    }

    fn push(&mut self, skip: PatternError) {
        self.count += 1;
        self.direct |= !skip.gathered;
        if self.silent {
            self.mentions = self.mentions.or(skip.mentions());
        } else {
            self.messages.push(skip.message);
        }
    }

    /// The one skip, reported at `path`.
    fn gathered(self, path: &ResPath<'_>) -> PatternError {
        let error = if self.silent {
            PatternError::unwritten(self.mentions)
        } else {
            PatternError::new(path, self.messages.join("; "))
        };
        error.gathered()
    }
}

/// Whether a skip's message is read: Kyverno reports it (the CLI's `test`
/// shows it); an admission verdict never reads one, so then it is not
/// written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SkipMessages {
    Read,
    Unread,
}

/// The result of matching a whole pattern.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Pass,
    /// A conditional or global anchor did not hold: the rule does not apply.
    Skip(String),
    /// The resource violates the pattern at `path`.
    /// `explanation` says, beyond Kyverno, which pattern field expected what
    /// and what was found.
    Fail {
        path: String,
        message: String,
        explanation: Option<String>,
    },
    /// Kyverno reports no path (an anchor key missing from the resource, or
    /// a nested-array length mismatch): an error, not a plain failure.
    Error(String),
}

impl<'a> Pattern<'a> {
    /// Compiles a pattern, reporting problems under `path` (a settings
    /// path). With quiet diagnostics (a request), map values compile when
    /// an evaluation first reaches them.
    pub fn compile(value: &'a Json<'a>, path: &str, diags: &mut Diagnostics) -> Pattern<'a> {
        compile_node(value, &LazyPath::new(path), 0, Place::Other, diags)
    }

    /// Kyverno's `MatchPattern`.
    pub fn evaluate(&self, resource: &Value) -> Outcome {
        self.evaluate_within(resource, &[])
    }

    /// [`Pattern::evaluate`], writing a skip's message only if it is read.
    pub fn evaluate_for(&self, resource: &Value, skips: SkipMessages) -> Outcome {
        self.evaluate_bound(resource, &[], &Bindings::default(), skips)
    }

    /// [`Pattern::evaluate`] of this pattern wrapped in `template`, a map
    /// of one plain key per segment (`{"spec": {"template": …}}`), as
    /// autogen wraps a Pod rule's pattern in a controller's pod template
    /// (`spec.template`, `spec.jobTemplate.spec.template` for a CronJob):
    /// the same checks, paths and messages, with no wrapper built.
    pub fn evaluate_within(&self, resource: &Value, template: &[&str]) -> Outcome {
        self.evaluate_bound(resource, template, &Bindings::default(), SkipMessages::Read)
    }

    /// [`Pattern::evaluate_within`] with the wildcard keys earlier
    /// evaluations of the same pattern bound (see [`Bindings`]). With
    /// [`SkipMessages::Unread`], a skip's message is empty.
    pub fn evaluate_bound(
        &self,
        resource: &Value,
        template: &[&str],
        bindings: &Bindings,
        skips: SkipMessages,
    ) -> Outcome {
        let mut walk = Walk {
            anchors: AnchorPresence::default(),
            bindings,
            skips,
            quiet: false,
        };
        match validate_within(resource, self, template, &ResPath::Root, &mut walk) {
            Ok(()) => Outcome::Pass,
            Err(e) if e.invalid => Outcome::Error(e.message),
            Err(e) if e.is_skip() => Outcome::Skip(e.message),
            Err(e) if e.is_negation() => Outcome::Fail {
                explanation: e.explanation(),
                path: e.path,
                message: e.message,
            },
            Err(e) if walk.anchors.keys_missing() || e.path.is_empty() => Outcome::Error(e.message),
            Err(e) => Outcome::Fail {
                explanation: e.explanation(),
                path: e.path,
                message: e.message,
            },
        }
    }
}

fn compile_node<'a>(
    value: &'a Json<'a>,
    path: &LazyPath<'_>,
    depth: usize,
    place: Place,
    diags: &mut Diagnostics,
) -> Pattern<'a> {
    if depth > MAX_DEPTH {
        diags.push(
            &path.render(),
            format!("pattern is nested deeper than {MAX_DEPTH} levels"),
        );
        return Pattern::Scalar(Scalar::Null);
    }
    match value {
        Json::Object(map) => Pattern::Map(compile_map(map, path, depth, place, diags)),
        Json::Array(items) => Pattern::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, v)| compile_node(v, &path.index(i), depth + 1, Place::Other, diags))
                .collect(),
        ),
        Json::Null => Pattern::Scalar(Scalar::Null),
        Json::Bool(b) => Pattern::Scalar(Scalar::Bool(*b)),
        Json::Number(n) => Pattern::Scalar(match n.as_i64() {
            Some(i) => Scalar::Int(i),
            None => Scalar::Float(n.as_f64().unwrap_or(0.0)),
        }),
        Json::String(s) => {
            if let Some(problem) = operator::check(s) {
                diags.push(&path.render(), problem);
            }
            Pattern::Scalar(Scalar::String(StringPattern::compile(s)))
        }
    }
}

fn compile_map<'a>(
    map: &'a json::Map<'a>,
    path: &LazyPath<'_>,
    depth: usize,
    place: Place,
    diags: &mut Diagnostics,
) -> MapPattern<'a> {
    let deferred = diags.is_quiet();
    // One list of exactly the map's size, sorted into Kyverno's evaluation
    // order below.
    let mut entries = Vec::with_capacity(map.len());
    for (raw, value) in map.iter() {
        let entry_path = path.key(raw);
        if let Some(problem) = anchor::malformed(raw) {
            diags.push(&entry_path.render(), problem);
        }
        let parsed = anchor::parse(raw.trim());
        let kind = parsed.as_ref().map(|a| a.kind);
        match kind {
            Some(AnchorKind::AddIfNotPresent) => diags.push(
                &entry_path.render(),
                format!(
                    "unsupported anchor `{raw}`: add-if-not-present anchors belong to mutate rules"
                ),
            ),
            Some(AnchorKind::Existence) => match value.as_array() {
                Some(items) if !items.is_empty() => {}
                Some(_) => diags.push(
                    &entry_path.render(),
                    "existence anchor needs at least one pattern in its list",
                ),
                None => diags.push(
                    &entry_path.render(),
                    "existence anchor needs a list of patterns",
                ),
            },
            _ => {}
        }
        // The anchor's key is a slice of `raw`: keep where it is.
        let key_at = match &parsed {
            Some(a) => {
                let start = (a.key.as_ptr() as usize).saturating_sub(raw.as_ptr() as usize);
                start..start + a.key.len()
            }
            None => 0..raw.len(),
        };
        let key = raw.get(key_at.clone()).unwrap_or_default();
        // Kyverno's `ExpandInMetadata` rebuilds a labels/annotations
        // pattern from its string values before checking it, so any other
        // value (`null`, a number, a map) checks nothing. It does so when
        // the resource has the labels as a map, the only case that reaches
        // this map's entries.
        if place == Place::Tags && !value.is_string() {
            continue;
        }
        let child_place = match (place, key) {
            (_, "metadata") => Place::Metadata,
            (Place::Metadata, "labels" | "annotations") => Place::Tags,
            _ => Place::Other,
        };
        let value = if deferred {
            Child::Deferred {
                source: value,
                depth: depth + 1,
                place: child_place,
                anchored: json_has_anchors(value),
                compiled: OnceCell::new(),
            }
        } else {
            Child::Ready(Box::new(compile_node(
                value,
                &entry_path,
                depth + 1,
                child_place,
                diags,
            )))
        };
        let entry = Entry {
            raw,
            bind_wildcard: place == Place::Tags && has_wildcard(key),
            key_at,
            anchor: kind,
            value,
        };
        entries.push(entry);
    }
    // Phase 1: the anchors, in byte order of their raw keys. Phase 2:
    // global anchors and keys holding nested anchors first (in reverse
    // order, as Kyverno pushes them to the front of a list), then the
    // plain keys in order.
    entries.sort_by(|a, b| {
        let (ga, gb) = (a.phase(), b.phase());
        ga.cmp(&gb).then_with(|| match ga {
            Phase::Front => b.raw.cmp(a.raw),
            Phase::Anchor | Phase::Plain => a.raw.cmp(b.raw),
        })
    });
    let phase_one = entries
        .iter()
        .take_while(|e| e.phase() == Phase::Anchor)
        .count();
    // Front entries are global anchors or hold anchors deeper down.
    let anchored_here = entries.iter().any(|e| e.phase() != Phase::Plain);
    let holds_metadata = entries.iter().any(|e| e.key() == "metadata");
    MapPattern {
        entries,
        anchored: anchored_here,
        phase_one,
        holds_metadata,
    }
}

/// What [`has_nested_anchors`] says of `value` compiled: whether a map in
/// it has an anchored key Kyverno evaluates first.
fn json_has_anchors(value: &Json<'_>) -> bool {
    match value {
        Json::Object(map) => map.iter().any(|(raw, v)| {
            anchor::parse(raw.trim()).is_some_and(|a| anchor_phase(a.kind).is_some())
                || json_has_anchors(v)
        }),
        Json::Array(items) => items.iter().any(json_has_anchors),
        _ => false,
    }
}

fn has_nested_anchors(pattern: &Pattern) -> bool {
    match pattern {
        Pattern::Map(map) => map.anchored,
        Pattern::Array(items) => items.iter().any(has_nested_anchors),
        Pattern::Scalar(_) => false,
    }
}

/// Kyverno's `AnchorMap`: whether each conditional, existence and negation
/// anchor key was ever seen in the resource. A failure while one never was
/// is reported as an error rather than a failure.
#[derive(Default)]
struct AnchorPresence<'p> {
    seen: Vec<(&'p str, bool)>,
}

impl<'p> AnchorPresence<'p> {
    fn record(
        &mut self,
        pattern: &'p MapPattern<'_>,
        resource: &Map<String, Value>,
        bindings: &Bindings,
    ) {
        for entry in &pattern.entries {
            // Negations belong absent: Kyverno's `KeysAreMissing` leaves
            // them out (since kyverno#8953).
            if !matches!(
                entry.anchor,
                Some(AnchorKind::Condition | AnchorKind::Existence)
            ) {
                continue;
            }
            let present = resource.contains_key(bindings.key_of(entry).as_ref());
            match self.seen.iter_mut().find(|(raw, _)| *raw == entry.raw) {
                Some((_, seen)) => *seen |= present,
                None => self.seen.push((entry.raw, present)),
            }
        }
    }

    fn keys_missing(&self) -> bool {
        self.seen.iter().any(|(_, seen)| !seen)
    }
}

/// Kyverno's `ExpandInMetadata`: before a map holding `metadata` is
/// checked, each wildcard key of the pattern's `metadata.labels` and
/// `metadata.annotations` is rewritten, in the pattern itself, to a
/// resource key it matches. The rewrite outlives the check: later list
/// elements checked against the same pattern, and the old object's pass of
/// an UPDATE, see the key the first match bound.
///
/// A binding belongs to one pattern entry, known by where its key sits in
/// the pattern's source text, which stays put while one rule is evaluated
/// (the settings, or the substituted pattern both passes share).
#[derive(Default)]
pub struct Bindings(std::cell::Cell<Vec<(usize, String)>>);

impl Bindings {
    fn id(entry: &Entry<'_>) -> usize {
        entry.raw.as_ptr() as usize
    }

    /// The key an entry stands for: its binding, or the key as written.
    fn key_of<'e>(&self, entry: &'e Entry<'_>) -> std::borrow::Cow<'e, str> {
        if !entry.bind_wildcard {
            return entry.key().into();
        }
        let bound = self.0.take();
        let id = Self::id(entry);
        let key = bound.iter().find(|(i, _)| *i == id).map(|(_, k)| k.clone());
        self.0.set(bound);
        key.map_or_else(|| entry.key().into(), Into::into)
    }

    /// Binds `entry` to the first key of `tags` it matches, unless an
    /// earlier check bound it (after a rewrite the key has no wildcard).
    fn bind(&self, entry: &Entry<'_>, tags: &Map<String, Value>) {
        let mut bound = self.0.take();
        let id = Self::id(entry);
        if !bound.iter().any(|(i, _)| *i == id) {
            if let Some(key) = bound_wildcard_key(entry.key(), tags) {
                bound.push((id, key.to_string()));
            }
        }
        self.0.set(bound);
    }
}

/// The state of one pattern check.
struct Walk<'p, 'b> {
    anchors: AnchorPresence<'p>,
    bindings: &'b Bindings,
    skips: SkipMessages,
    /// Under an anchor that turns every failure into a skip or drops it:
    /// only a failure's kind is read, not its message.
    quiet: bool,
}

impl Walk<'_, '_> {
    /// Whether a skip made here has its message read.
    fn silent(&self) -> bool {
        self.quiet || self.skips == SkipMessages::Unread
    }

    /// Runs `check` quiet if `quiet` (or already so).
    fn quietly<T>(&mut self, quiet: bool, check: impl FnOnce(&mut Self) -> T) -> T {
        let was = self.quiet;
        self.quiet |= quiet;
        let result = check(self);
        self.quiet = was;
        result
    }
}

/// [`Bindings`]: binds the wildcard label and annotation keys under the
/// `metadata` of `pattern` to the keys of the resource's, as Kyverno does
/// before it checks the map (so even where an anchor then skips it).
fn expand_in_metadata(
    resource: &Map<String, Value>,
    pattern: &MapPattern<'_>,
    bindings: &Bindings,
) {
    let Some(Value::Object(metadata)) = resource.get("metadata") else {
        return;
    };
    let Some(Ok(Pattern::Map(pattern_metadata))) = pattern
        .entries
        .iter()
        .find(|e| e.key() == "metadata")
        .map(|e| e.value.get())
    else {
        return;
    };
    for tags in &pattern_metadata.entries {
        if !matches!(tags.key(), "labels" | "annotations") {
            continue;
        }
        let Some(Value::Object(resource_tags)) = metadata.get(tags.key()) else {
            continue;
        };
        if let Ok(Pattern::Map(pattern_tags)) = tags.value.get() {
            for entry in pattern_tags.entries.iter().filter(|e| e.bind_wildcard) {
                bindings.bind(entry, resource_tags);
            }
        }
    }
}

type Check = Result<(), PatternError>;

/// A resource path as Kyverno prints it (`/spec/containers/0/image/`),
/// built only when a check fails.
#[derive(Clone, Copy)]
enum ResPath<'a> {
    Root,
    Key(&'a ResPath<'a>, &'a str),
    Index(&'a ResPath<'a>, usize),
}

impl ResPath<'_> {
    /// `/spec/containers/0/image/`, written into one buffer (a `write!`
    /// per level ran the formatting machinery at each). The chain is as
    /// deep as the pattern, which is bounded.
    fn render(&self) -> String {
        let mut text = String::new();
        self.write_to(&mut text);
        text
    }

    fn write_to(&self, text: &mut String) {
        match self {
            ResPath::Root => text.push('/'),
            ResPath::Key(parent, key) => {
                parent.write_to(text);
                text.push_str(key);
                text.push('/');
            }
            ResPath::Index(parent, i) => {
                parent.write_to(text);
                // Writing to a `String` cannot fail.
                let _ = std::fmt::Write::write_fmt(text, format_args!("{i}/"));
            }
        }
    }
}

impl std::fmt::Display for ResPath<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.render())
    }
}

/// Kyverno's `validateResourceElement`.
fn validate_element<'p>(
    resource: &Value,
    pattern: &'p Pattern<'_>,
    path: &ResPath<'_>,
    walk: &mut Walk<'p, '_>,
) -> Check {
    // Every element checked is paid for: a `foreach` may check the whole
    // resource once per element of one of its lists.
    if !work::spend(1) {
        return Err(PatternError::invalid(work::EXCEEDED.to_string()));
    }
    match pattern {
        Pattern::Map(map) => {
            let Some(object) = resource.as_object() else {
                return Err(not_a_map(resource, path, walk.quiet));
            };
            walk.anchors.record(map, object, walk.bindings);
            validate_map(object, map, path, walk)
        }
        Pattern::Array(items) => {
            let Some(list) = resource.as_array() else {
                if walk.quiet {
                    return Err(PatternError::unwritten(Mentions::of_path(path)));
                }
                return Err(PatternError::new(
                    path,
                    format!("validation rule failed at path {path}, resource does not satisfy the expected overlay pattern"),
                )
                .detail(format!("expected a list but {}", found(resource))));
            };
            validate_array(resource, list, items, path, walk)
        }
        Pattern::Scalar(scalar) => {
            let ok = match resource {
                Value::Array(list) => list.iter().all(|v| scalar_matches(v, scalar)),
                other => scalar_matches(other, scalar),
            };
            if ok {
                Ok(())
            } else if walk.quiet {
                Err(PatternError::unwritten(
                    Mentions::of_value(resource)
                        .or(Mentions::of_scalar(scalar))
                        .or(Mentions::of_path(path)),
                ))
            } else {
                let at = path.render();
                let message = format!(
                    "resource value '{}' does not match '{}' at path {at}",
                    go_value(resource),
                    scalar_text(scalar)
                );
                Err(PatternError::new(&at, message).detail(format!(
                    "expected `{}` but {}",
                    scalar_text(scalar),
                    found(resource)
                )))
            }
        }
    }
}

fn validate_map<'p>(
    resource: &Map<String, Value>,
    pattern: &'p MapPattern<'_>,
    path: &ResPath<'_>,
    walk: &mut Walk<'p, '_>,
) -> Check {
    // Phase 1, the anchors: a skip is noted and the others still run; a
    // failure ends the map unless an anchor of this map skipped directly
    // (then the map skips). Phase 2, the other keys: any error ends it.
    if pattern.holds_metadata {
        expand_in_metadata(resource, pattern, walk.bindings);
    }
    let phase_one = pattern.phase_one;
    let mut skips = Skips::new(walk.silent());
    let mut applied = 0usize;
    for entry in pattern.entries.iter().take(phase_one) {
        match handle_entry(resource, entry, path, walk) {
            Ok(()) => applied += 1,
            Err(e) if e.invalid => return Err(e),
            Err(e) if e.is_skip() => skips.push(e),
            Err(e) if skips.direct => drop(e),
            Err(e) => return Err(e.within(|| entry.key().to_string())),
        }
    }
    if skips.count > 0 && (applied == 0 || skips.direct) {
        return Err(skips.gathered(path));
    }
    for entry in pattern.entries.iter().skip(phase_one) {
        handle_entry(resource, entry, path, walk)
            .map_err(|e| e.within(|| entry.key().to_string()))?;
    }
    Ok(())
}

fn handle_entry<'p>(
    resource: &Map<String, Value>,
    entry: &'p Entry<'_>,
    path: &ResPath<'_>,
    walk: &mut Walk<'p, '_>,
) -> Check {
    let key = walk.bindings.key_of(entry);
    let key = key.as_ref();
    let current = ResPath::Key(path, key);
    let value = resource.get(key);
    // The value's pattern is asked for (and compiled, if deferred) only
    // where a check reads it.
    match entry.anchor {
        // Any failure under these anchors is a skip: nothing below writes
        // a message unless the skip's is read.
        Some(AnchorKind::Condition) => match value {
            Some(v) => {
                let pattern = entry.value.get()?;
                let silent = walk.silent();
                walk.quietly(silent, |walk| validate_element(v, pattern, &current, walk))
                    .map_err(|e| e.prefixed(CONDITIONAL_MISMATCH, silent))
            }
            None if walk.silent() => Err(PatternError::unwritten(Mentions::SKIP)),
            None => Err(PatternError::new(
                &current,
                format!(
                    "{CONDITIONAL_MISMATCH}: conditional anchor key doesn't exist in the resource"
                ),
            )),
        },
        Some(AnchorKind::Global) => match value {
            Some(v) => {
                let pattern = entry.value.get()?;
                let silent = walk.silent();
                walk.quietly(silent, |walk| validate_element(v, pattern, &current, walk))
                    .map_err(|e| e.prefixed(GLOBAL_MISMATCH, silent))
            }
            None => Ok(()),
        },
        Some(AnchorKind::Equality) => match value {
            Some(v) => validate_element(v, entry.value.get()?, &current, walk),
            None => Ok(()),
        },
        Some(AnchorKind::Negation) => match value {
            Some(_) => Err(PatternError::new(
                &current,
                format!("{NEGATION_MATCHED}: {current} is not allowed"),
            )
            .detail("the field must not be present".into())),
            None => Ok(()),
        },
        Some(AnchorKind::Existence) => match value {
            Some(v) => validate_existence(v, entry.value.get()?, &current, walk),
            None => Ok(()),
        },
        // `+(key)` is refused at compile time; like Kyverno, an unknown anchor
        // is a plain key looked up as written.
        Some(AnchorKind::AddIfNotPresent) | None => {
            let (key, current, value) = if entry.anchor.is_some() {
                let raw = entry.raw;
                (raw, ResPath::Key(path, raw), resource.get(raw))
            } else {
                (key, current, value)
            };
            plain_entry(value, key, entry.value.get()?, path, &current, walk)
        }
    }
}

/// A plain key's value (`value` under `key` of the map at `path`) against
/// its pattern.
fn plain_entry<'p>(
    value: Option<&Value>,
    key: &str,
    pattern: &'p Pattern<'_>,
    path: &ResPath<'_>,
    current: &ResPath<'_>,
    walk: &mut Walk<'p, '_>,
) -> Check {
    if let Pattern::Scalar(Scalar::String(s)) = pattern {
        if s.raw() == "*" {
            // `*` means present and not null; Kyverno reports the parent path.
            return match value {
                Some(v) if !v.is_null() => Ok(()),
                _ if walk.quiet => Err(PatternError::unwritten(
                    Mentions::of_path(path).or(Mentions::of(key)),
                )),
                _ => Err(PatternError::new(path, format!("{path}/{key} not found"))
                    .detail("expected `*` (any value) but the field is missing or null".into())),
            };
        }
    }
    validate_element(value.unwrap_or(&Value::Null), pattern, current, walk)
}

/// `pattern` under `template`'s keys, each a map of that one plain key
/// ([`Pattern::evaluate_within`]): what [`validate_map`] does with such a
/// map, level by level.
fn validate_within<'p>(
    resource: &Value,
    pattern: &'p Pattern<'_>,
    template: &[&str],
    path: &ResPath<'_>,
    walk: &mut Walk<'p, '_>,
) -> Check {
    let Some((key, inner)) = template.split_first() else {
        return validate_element(resource, pattern, path, walk);
    };
    let Some(object) = resource.as_object() else {
        return Err(not_a_map(resource, path, walk.quiet));
    };
    let current = ResPath::Key(path, key);
    let value = object.get(*key);
    let checked = if inner.is_empty() {
        plain_entry(value, key, pattern, path, &current, walk)
    } else {
        // The next level is a map pattern, never `*`.
        validate_within(
            value.unwrap_or(&Value::Null),
            pattern,
            inner,
            &current,
            walk,
        )
    };
    checked.map_err(|e| e.within(|| key.to_string()))
}

/// A map pattern met something else.
fn not_a_map(resource: &Value, path: &ResPath<'_>, quiet: bool) -> PatternError {
    if quiet {
        return PatternError::unwritten(Mentions::of_path(path));
    }
    PatternError::new(
        path,
        format!(
            "pattern and resource have different structures. Path: {path}. Expected map[string]interface {{}}, found {}",
            go_type(resource)
        ),
    )
    .detail(format!("expected an object but {}", found(resource)))
}

/// Within `metadata.labels` / `metadata.annotations`, a pattern key with
/// wildcards stands for the first resource key it matches (Kyverno's
/// `ExpandInMetadata`; Go picks one at random, this picks the first). No
/// match leaves the key as written, which then is missing.
fn bound_wildcard_key<'r>(key: &str, resource: &'r Map<String, Value>) -> Option<&'r str> {
    // Kyverno reads only the resource's string values here.
    resource
        .iter()
        .find(|(k, v)| v.is_string() && wildcard::matches(key, k))
        .map(|(k, _)| k.as_str())
}

fn validate_existence<'p>(
    resource: &Value,
    pattern: &'p Pattern<'_>,
    path: &ResPath<'_>,
    walk: &mut Walk<'p, '_>,
) -> Check {
    let Some(list) = resource.as_array() else {
        return Err(PatternError::new(
            path,
            format!(
                "invalid resource type {}: Existence ^ () anchor can be used only on list/array type resource",
                go_type(resource)
            ),
        ));
    };
    let Pattern::Array(patterns) = pattern else {
        return Err(PatternError::new(
            path,
            "invalid pattern type: Pattern has to be of list to compare against resource".into(),
        ));
    };
    for item in patterns {
        if !matches!(item, Pattern::Map(_)) {
            return Err(PatternError::new(
                path,
                "invalid pattern type []interface {}: Pattern has to be of type map to compare against items in resource".into(),
            ));
        }
        let mut found = false;
        for (i, element) in list.iter().enumerate() {
            // An element's failure is dropped: only a pass is looked for.
            let checked = walk.quietly(true, |walk| {
                validate_element(element, item, &ResPath::Index(path, i), walk)
            });
            match checked {
                Ok(()) => {
                    found = true;
                    break;
                }
                Err(e) if e.invalid => return Err(e),
                Err(_) => {}
            }
        }
        if !found {
            return Err(PatternError::new(
                path,
                format!("existence anchor validation failed at path {path}"),
            )
            .detail("expected at least one element to match, but none does".into()));
        }
    }
    Ok(())
}

fn validate_array<'p>(
    resource: &Value,
    list: &[Value],
    patterns: &'p [Pattern<'_>],
    path: &ResPath<'_>,
    walk: &mut Walk<'p, '_>,
) -> Check {
    let Some(first) = patterns.first() else {
        return Err(PatternError::new(path, "pattern Array empty".into()));
    };
    match first {
        // Every element is checked against the first pattern map.
        Pattern::Map(_) => validate_elements(
            list.iter().map(|element| (element, first)),
            path,
            walk,
            |_| "[*]".into(),
        ),
        Pattern::Scalar(_) => {
            validate_element(resource, first, path, walk).map_err(|e| e.within(|| "[*]".into()))
        }
        Pattern::Array(_) => {
            if list.len() < patterns.len() {
                return Err(PatternError::new(
                    &"",
                    format!(
                        "validate Array failed, array length mismatch, resource Array len is {} and pattern Array len is {}",
                        list.len(),
                        patterns.len()
                    ),
                ));
            }
            validate_elements(list.iter().zip(patterns), path, walk, |i| format!("[{i}]"))
        }
    }
}

/// Checks list elements against their patterns: elements a conditional or
/// global anchor skips are ignored, unless every element is skipped.
fn validate_elements<'v, 'p, 'a: 'p>(
    pairs: impl Iterator<Item = (&'v Value, &'p Pattern<'a>)>,
    path: &ResPath<'_>,
    walk: &mut Walk<'p, '_>,
    segment: impl Fn(usize) -> String,
) -> Check {
    let mut applied = 0;
    let mut skips = Skips::new(walk.silent());
    for (i, (element, pattern)) in pairs.enumerate() {
        match validate_element(element, pattern, &ResPath::Index(path, i), walk) {
            Ok(()) => applied += 1,
            Err(e) if e.is_skip() => skips.push(e),
            Err(e) => return Err(e.within(|| segment(i))),
        }
    }
    if applied == 0 && skips.count > 0 {
        return Err(skips.gathered(path));
    }
    Ok(())
}

/// Kyverno's `pattern.Validate` for a leaf value.
fn scalar_matches(value: &Value, pattern: &Scalar) -> bool {
    match pattern {
        Scalar::Bool(b) => value.as_bool() == Some(*b),
        Scalar::Int(p) => match value {
            Value::Number(n) => match (n.as_i64(), n.as_f64()) {
                (Some(i), _) => i == *p,
                (None, Some(f)) => f.fract() == 0.0 && f == *p as f64,
                _ => false,
            },
            Value::String(s) => go_parse_int(s) == Some(*p),
            _ => false,
        },
        Scalar::Float(p) => match value {
            Value::Number(n) => match n.as_i64() {
                // Go converts the pattern (`int64(pattern) == value`), so
                // integers beyond float precision stay distinct.
                #[allow(clippy::cast_possible_truncation)]
                Some(i) => p.fract() == 0.0 && *p as i64 == i,
                None => n.as_f64() == Some(*p),
            },
            Value::String(s) => s.parse::<f64>().ok() == Some(*p),
            _ => false,
        },
        Scalar::Null => match value {
            Value::Null => true,
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            Value::String(s) => s.is_empty(),
            _ => false,
        },
        Scalar::String(s) => s.matches(value),
    }
}

/// Go's `strconv.ParseInt(s, 10, 64)`.
fn go_parse_int(s: &str) -> Option<i64> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

fn scalar_text(scalar: &Scalar) -> String {
    match scalar {
        Scalar::Null => "<nil>".into(),
        Scalar::Bool(b) => b.to_string(),
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => go_float(*f),
        Scalar::String(s) => s.raw().to_string(),
    }
}

/// What a resource value is, in words, for explanations.
fn found(value: &Value) -> String {
    match value {
        Value::Null => "the field is missing or null".into(),
        Value::Object(_) => "found an object".into(),
        Value::Array(_) => format!("found the list `{}`", compact(value)),
        other => format!("found `{}`", compact(other)),
    }
}

/// A value shown in an explanation, shortened so one message stays readable.
fn compact(value: &Value) -> String {
    let text = match value {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    if text.chars().count() > 80 {
        format!("{}…", text.chars().take(80).collect::<String>())
    } else {
        text
    }
}

/// Go's `%T` for a decoded JSON value.
pub fn go_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.as_i64().is_some() => "int64",
        Value::Number(_) => "float64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

/// Go's `%v` for a decoded JSON value, as Kyverno's messages print it.
pub fn go_value(value: &Value) -> String {
    match value {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match n.as_i64() {
            Some(i) => i.to_string(),
            None => go_float(n.as_f64().unwrap_or(0.0)),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_value).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            let body: Vec<String> = keys
                .into_iter()
                .map(|k| format!("{k}:{}", map.get(k).map(go_value).unwrap_or_default()))
                .collect();
            format!("map[{}]", body.join(" "))
        }
    }
}

/// Go's `%v` for a float64: shortest digits, exponent form below 1e-4 or
/// from 1e21 up.
fn go_float(f: f64) -> String {
    let abs = f.abs();
    if abs != 0.0 && !(1e-4..1e21).contains(&abs) {
        let text = format!("{f:e}");
        match text.split_once('e') {
            Some((m, e)) => {
                let (sign, digits) = match e.strip_prefix('-') {
                    Some(d) => ('-', d),
                    None => ('+', e),
                };
                format!("{m}e{sign}{digits:0>2}")
            }
            None => text,
        }
    } else {
        format!("{f}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every case runs compiled whole (as settings checks compile) and
    /// compiled as a request does (map values when reached): the outcomes
    /// must be the same.
    fn run(pattern: Value, resource: Value) -> Outcome {
        let pattern = Json::borrow(&pattern);
        let mut diags = Diagnostics::default();
        let compiled = Pattern::compile(&pattern, "pattern", &mut diags);
        assert!(diags.is_empty(), "{}", diags.summary());
        let outcome = compiled.evaluate(&resource);
        let mut quiet = Diagnostics::quiet();
        let deferred = Pattern::compile(&pattern, "pattern", &mut quiet);
        assert!(quiet.is_empty(), "{}", quiet.summary());
        assert_eq!(deferred.evaluate(&resource), outcome, "deferred: {pattern}");
        // Unread skip messages change nothing but a skip's message.
        let unread = compiled.evaluate_for(&resource, SkipMessages::Unread);
        match &outcome {
            Outcome::Skip(_) => assert_eq!(unread, Outcome::Skip(String::new()), "{pattern}"),
            other => assert_eq!(&unread, other, "unread skips: {pattern}"),
        }
        outcome
    }

    /// Compares the Kyverno part of a failure; explanations have their own test.
    fn fail(path: &str, message: &str) -> Outcome {
        Outcome::Fail {
            path: path.into(),
            message: message.into(),
            explanation: None,
        }
    }

    fn run_kyverno(pattern: Value, resource: Value) -> Outcome {
        match run(pattern, resource) {
            Outcome::Fail { path, message, .. } => Outcome::Fail {
                path,
                message,
                explanation: None,
            },
            other => other,
        }
    }

    fn pod(containers: Value) -> Value {
        json!({"kind": "Pod", "spec": {"containers": containers}})
    }

    /// Kyverno's TestConditionalAnchorWithMultiplePatterns pattern.
    fn latest_pattern() -> Value {
        json!({"spec": {"containers": [{"name": "*", "(image)": "*:latest | !*:*", "imagePullPolicy": "!Always"}]}})
    }

    fn c(image: &str, policy: &str) -> Value {
        json!({"name": "c", "image": image, "imagePullPolicy": policy})
    }

    /// Autogen's pod template is walked, not built: the outcome is the
    /// wrapped pattern's, failures, skips and messages included.
    #[test]
    fn a_pattern_within_a_template_is_the_wrapped_pattern() {
        let wrap = |pattern: &Value, template: &[&str]| {
            template
                .iter()
                .rev()
                .fold(pattern.clone(), |inner, key| json!({(*key): inner}))
        };
        let patterns = [
            ("plain", json!({"spec": {"hostNetwork": false}})),
            ("anchored", latest_pattern()),
            (
                "global",
                json!({"metadata": {"<(name)": "a*"}, "spec": {"x": 1}}),
            ),
            ("labels", json!({"metadata": {"labels": {"app*": "?*"}}})),
            ("negation", json!({"spec": {"X(hostPID)": "null"}})),
            ("star", json!("*")),
            ("scalar", json!("a")),
        ];
        let pod = json!({"metadata": {"name": "a", "labels": {"app": "x"}},
            "spec": {"hostNetwork": true, "hostPID": true, "x": 1,
                "containers": [c("nginx:latest", "Always")]}});
        let resources = [
            ("pod_template", pod.clone()),
            ("no_spec", json!({"metadata": {}})),
            ("spec_not_a_map", json!({"spec": 3})),
            ("no_template", json!({"spec": {}})),
            (
                "null_template",
                json!({"spec": {"template": null, "jobTemplate": null}}),
            ),
            ("not_a_map", json!([1])),
        ];
        for (name, pattern) in patterns {
            let json_pattern = Json::borrow(&pattern);
            let compiled = Pattern::compile(&json_pattern, "p", &mut Diagnostics::quiet());
            for template in [
                &["spec", "template"][..],
                &["spec", "jobTemplate", "spec", "template"][..],
            ] {
                let wrapped_value = wrap(&pattern, template);
                let wrapped_json = Json::borrow(&wrapped_value);
                let wrapped = Pattern::compile(&wrapped_json, "p", &mut Diagnostics::quiet());
                let mut all = resources.to_vec();
                all.push(("controller", wrap(&pod, template)));
                for (what, resource) in &all {
                    assert_eq!(
                        compiled.evaluate_within(resource, template),
                        wrapped.evaluate(resource),
                        "{name} on {what} within {template:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn processing_rules_of_the_overlay_pattern() {
        let cases: Vec<(&str, Value, Value, Outcome)> = vec![
            ("missing_field_fails", json!({"metadata": {"labels": {"app": "?*"}}}), json!({"metadata": {}}),
                fail("/metadata/labels/", "pattern and resource have different structures. Path: /metadata/labels/. Expected map[string]interface {}, found <nil>")),
            ("undefined_fields_are_wildcards", json!({"metadata": {"name": "a"}}), json!({"metadata": {"name": "a", "x": 1}}), Outcome::Pass),
            ("star_needs_a_present_field", json!({"spec": {"x": "*"}}), json!({"spec": {}}), fail("/spec/", "/spec//x not found")),
            ("star_accepts_empty_string", json!({"spec": {"x": "*"}}), json!({"spec": {"x": ""}}), Outcome::Pass),
            ("question_needs_one_char", json!({"spec": {"x": "?"}}), json!({"spec": {"x": ""}}),
                fail("/spec/x/", "resource value '' does not match '?' at path /spec/x/")),
            ("question_star_needs_a_value", json!({"spec": {"x": "?*"}}), json!({"spec": {}}),
                fail("/spec/x/", "resource value '<nil>' does not match '?*' at path /spec/x/")),
            ("null_requires_absence", json!({"spec": {"x": null}}), json!({"spec": {}}), Outcome::Pass),
            ("null_rejects_a_value", json!({"spec": {"x": null}}), json!({"spec": {"x": "a"}}),
                fail("/spec/x/", "resource value 'a' does not match '<nil>' at path /spec/x/")),
            // Kyverno's docs say `""` accepts a missing field; its code (and
            // so its verdicts) compare a missing value as no string at all.
            ("empty_string_matches_only_an_empty_value", json!({"spec": {"x": ""}}), json!({"spec": {}}),
                fail("/spec/x/", "resource value '<nil>' does not match '' at path /spec/x/")),
            ("empty_string_accepts_empty_value", json!({"spec": {"x": ""}}), json!({"spec": {"x": ""}}), Outcome::Pass),
            ("children_checked_when_parent_matches", json!({"spec": {"a": {"b": 1}}}), json!({"spec": {"a": {"b": 2}}}),
                fail("/spec/a/b/", "resource value '2' does not match '1' at path /spec/a/b/")),
            ("every_array_element_must_match", json!({"spec": {"containers": [{"image": "!*:latest"}]}}),
                pod(json!([{"image": "a:1"}, {"image": "b:latest"}])),
                fail("/spec/containers/1/image/", "resource value 'b:latest' does not match '!*:latest' at path /spec/containers/1/image/")),
            ("scalar_pattern_over_scalar_list", json!({"spec": {"args": ["!--privileged"]}}), json!({"spec": {"args": ["a", "--privileged"]}}),
                fail("/spec/args/", "resource value '[a --privileged]' does not match '!--privileged' at path /spec/args/")),
            ("int_pattern_matches_numeric_string", json!({"spec": {"port": 80}}), json!({"spec": {"port": "80"}}), Outcome::Pass),
            ("bool_pattern_rejects_string", json!({"spec": {"x": true}}), json!({"spec": {"x": "true"}}),
                fail("/spec/x/", "resource value 'true' does not match 'true' at path /spec/x/")),
            ("float_pattern_matches_integral_int", json!({"spec": {"x": 2.0}}), json!({"spec": {"x": 2}}), Outcome::Pass),
            ("quantity_operator", json!({"spec": {"memory": "<=1Gi"}}), json!({"spec": {"memory": "512Mi"}}), Outcome::Pass),
            ("wildcard_label_key", json!({"metadata": {"labels": {"app.kubernetes.io/*": "?*"}}}),
                json!({"metadata": {"labels": {"app.kubernetes.io/name": "web"}}}), Outcome::Pass),
            ("wildcard_label_key_without_match_fails", json!({"metadata": {"labels": {"foo/A*": "bar"}}}),
                json!({"metadata": {"labels": {"foo/XYZ": "bar"}}}),
                fail("/metadata/labels/foo/A*/", "resource value '<nil>' does not match 'bar' at path /metadata/labels/foo/A*/")),
            // ExpandInMetadata keeps only a labels pattern's string values.
            ("label_pattern_null_value_checks_nothing", json!({"metadata": {"labels": {"X(secret)": null}}}),
                json!({"metadata": {"labels": {"secret": "x"}}}), Outcome::Pass),
            ("label_pattern_number_checks_nothing", json!({"metadata": {"annotations": {"replicas": 1}}}),
                json!({"metadata": {"annotations": {"replicas": "2"}}}), Outcome::Pass),
            ("wildcard_label_key_binds_beside_a_null_value", json!({"metadata": {"labels": {"app*": "?*", "n": null}}}),
                json!({"metadata": {"labels": {"app1": "x"}}}), Outcome::Pass),
            // ExpandInMetadata rewrites the pattern in place: the key the
            // first element binds is the key later elements must have.
            ("wildcard_label_key_stays_bound_across_list_elements",
                json!({"items": [{"metadata": {"labels": {"app*": "?*"}}}]}),
                json!({"items": [{"metadata": {"labels": {"app1": "x"}}}, {"metadata": {"labels": {"app2": "y"}}}]}),
                fail("/items/1/metadata/labels/app1/", "resource value '<nil>' does not match '?*' at path /items/1/metadata/labels/app1/")),
            ("wildcard_label_key_unbound_by_an_element_without_labels_binds_later",
                json!({"items": [{"metadata": {"=(labels)": {"app*": "?*"}}}]}),
                json!({"items": [{"metadata": {"name": "a"}}, {"metadata": {"labels": {"app2": "y"}}}]}),
                Outcome::Pass),
            ("label_pattern_still_needs_the_labels", json!({"metadata": {"labels": {"app": 1}}}),
                json!({"metadata": {"name": "a"}}),
                fail("/metadata/labels/", "pattern and resource have different structures. Path: /metadata/labels/. Expected map[string]interface {}, found <nil>")),
        ];
        for (name, pattern, resource, want) in cases {
            assert_eq!(run_kyverno(pattern, resource), want, "{name}");
        }
    }

    #[test]
    fn anchors_pass_fail_or_skip_as_in_kyverno() {
        let skip_missing = Outcome::Skip(
            "conditional anchor mismatch: conditional anchor key doesn't exist in the resource"
                .into(),
        );
        let cases: Vec<(&str, Value, Value, Outcome)> = vec![
            // Kyverno's own test table (validate_test.go).
            ("cond_test_1_skip", latest_pattern(), pod(json!([c("nginx:1.2.3", "Always")])),
                Outcome::Skip("conditional anchor mismatch: resource value 'nginx:1.2.3' does not match '*:latest | !*:*' at path /spec/containers/0/image/".into())),
            ("cond_test_4_pass", latest_pattern(), pod(json!([c("nginx", "Never")])), Outcome::Pass),
            ("cond_test_5_pass", latest_pattern(), pod(json!([c("nginx:latest", "Never")])), Outcome::Pass),
            ("cond_test_10_one_applied_one_skipped", latest_pattern(), pod(json!([c("nginx", "Never"), c("busybox:1.28", "Always")])), Outcome::Pass),
            ("cond_condition_holds_then_fails", latest_pattern(), pod(json!([c("nginx:latest", "Always")])),
                fail("/spec/containers/0/imagePullPolicy/", "resource value 'Always' does not match '!Always' at path /spec/containers/0/imagePullPolicy/")),
            ("cond_key_missing_skips", json!({"spec": {"(hostNetwork)": true, "hostPID": true}}), json!({"spec": {}}), skip_missing),
            ("equality_absent_passes", json!({"spec": {"=(hostPID)": false}}), json!({"spec": {}}), Outcome::Pass),
            ("equality_present_must_match", json!({"spec": {"=(hostPID)": false}}), json!({"spec": {"hostPID": true}}),
                fail("/spec/hostPID/", "resource value 'true' does not match 'false' at path /spec/hostPID/")),
            ("negation_present_fails", json!({"spec": {"X(hostPath)": "null"}}), json!({"spec": {"hostPath": {"path": "/"}}}),
                fail("/spec/hostPath/", "negation anchor matched in resource: /spec/hostPath/ is not allowed")),
            ("negation_absent_passes", json!({"spec": {"X(hostPath)": "null"}}), json!({"spec": {}}), Outcome::Pass),
            // A list whose elements all skip does not end the map: the
            // other anchors and keys still decide (Kyverno's validateMap).
            ("skipped_list_then_failing_anchor",
                json!({"spec": {"=(initContainers)": [{"(image)": "!*/foo:*", "securityContext": {"allowPrivilegeEscalation": "false"}}],
                    "=(containers)": [{"(image)": "!*/foo:*", "securityContext": {"allowPrivilegeEscalation": "false"}}]}}),
                json!({"spec": {"containers": [{"image": "test/foo:1"}],
                    "initContainers": [{"image": "test/bar:1", "securityContext": {"allowPrivilegeEscalation": true}}]}}),
                fail("/spec/initContainers/0/securityContext/allowPrivilegeEscalation/",
                    "resource value 'true' does not match 'false' at path /spec/initContainers/0/securityContext/allowPrivilegeEscalation/")),
            ("skipped_list_then_failing_plain_key",
                json!({"spec": {"=(containers)": [{"(image)": "*:latest", "imagePullPolicy": "Always"}], "=(hostPID)": false, "hostNetwork": false}}),
                json!({"spec": {"containers": [{"image": "nginx:1"}], "hostPID": false, "hostNetwork": true}}),
                fail("/spec/hostNetwork/", "resource value 'true' does not match 'false' at path /spec/hostNetwork/")),
            // An anchor of the map itself that skips makes the map skip,
            // even when another anchor fails.
            ("direct_skip_wins_over_a_failing_anchor",
                json!({"spec": {"(hostNetwork)": true, "=(hostPID)": false}}),
                json!({"spec": {"hostNetwork": false, "hostPID": true}}),
                Outcome::Skip("conditional anchor mismatch: resource value 'false' does not match 'true' at path /spec/hostNetwork/".into())),
            ("existence_one_element_suffices", json!({"spec": {"^(containers)": [{"image": "nginx*"}]}}),
                pod(json!([{"image": "busybox"}, {"image": "nginx:1"}])), Outcome::Pass),
            ("existence_none_fails", json!({"spec": {"^(containers)": [{"image": "nginx*"}]}}),
                pod(json!([{"image": "busybox"}])),
                fail("/spec/containers/", "existence anchor validation failed at path /spec/containers/")),
            ("global_mismatch_skips", json!({"spec": {"containers": [{"name": "*", "<(image)": "*:latest", "imagePullPolicy": "!Always"}]}}),
                pod(json!([c("nginx:v1", "Always")])),
                Outcome::Skip("global anchor mismatch: resource value 'nginx:v1' does not match '*:latest' at path /spec/containers/0/image/".into())),
            ("global_holds_then_checks", json!({"spec": {"containers": [{"name": "*", "<(image)": "*:latest", "imagePullPolicy": "!Always"}]}}),
                pod(json!([c("nginx:latest", "IfNotPresent")])), Outcome::Pass),
            ("global_absent_passes", json!({"spec": {"<(runtimeClassName)": "gvisor"}}), json!({"spec": {}}), Outcome::Pass),
            ("test_37_conditional_parent_missing_skips",
                json!({"metadata": {"labels": {"allow-docker": "true"}}, "(spec)": {"(volumes)": [{"(hostPath)": {"path": "/var/run/docker.sock"}}]}}),
                json!({"metadata": {"labels": {"app": "x"}}, "spec": {"containers": []}}),
                Outcome::Skip("conditional anchor mismatch: conditional anchor mismatch: conditional anchor key doesn't exist in the resource".into())),
            ("test_44_equality_nested_conditions",
                json!({"spec": {"=(initContainers)": [{"(name)": "!istio-init", "=(securityContext)": {"=(runAsUser)": ">0"}}], "=(containers)": [{"=(securityContext)": {"=(runAsUser)": ">0"}}]}}),
                json!({"spec": {"initContainers": [{"name": "nginx", "securityContext": {"runAsUser": 1000}}], "containers": [{"name": "nginx"}]}}),
                Outcome::Pass),
            ("missing_anchor_key_turns_failure_into_error",
                json!({"spec": {"(hostNetwork)": true, "^(containers)": [{"name": "*"}], "replicas": 2}}),
                json!({"spec": {"hostNetwork": true, "replicas": 3}}),
                Outcome::Error("resource value '3' does not match '2' at path /spec/replicas/".into())),
            ("absent_negation_key_is_not_missing",
                json!({"spec": {"X(hostNetwork)": "*", "replicas": 2}}), json!({"spec": {"replicas": 3}}),
                fail("/spec/replicas/", "resource value '3' does not match '2' at path /spec/replicas/")),
            // A conditional anchor wraps what it found below, so a nested
            // skip is the anchor's own and the map skips.
            ("nested_skip_under_a_conditional_is_direct",
                json!({"spec": {"(securityContext)": {"(runAsNonRoot)": true}, "=(hostNetwork)": false, "serviceAccountName": "good"}}),
                json!({"spec": {"securityContext": {"runAsNonRoot": false}, "hostNetwork": false, "serviceAccountName": "bad"}}),
                Outcome::Skip("conditional anchor mismatch: conditional anchor mismatch: resource value 'false' does not match 'true' at path /spec/securityContext/runAsNonRoot/".into())),
            // Kyverno tells a skip by its message text: an element whose
            // mismatch message holds an anchor phrase (from the resource's
            // value, the pattern's, or a key on the path) is skipped, not
            // failed, so the other element decides and the anchor holds.
            ("phrase_in_a_value_makes_an_element_skip",
                json!({"(spec)": {"list": [{"x": "a"}]}, "metadata": {"name": "good"}}),
                json!({"spec": {"list": [{"x": "a"}, {"x": "says conditional anchor mismatch"}]}, "metadata": {"name": "bad"}}),
                fail("/metadata/name/", "resource value 'bad' does not match 'good' at path /metadata/name/")),
            ("phrase_in_the_pattern_makes_an_element_skip",
                json!({"(spec)": {"list": [{"x": "a | b global anchor mismatch"}]}, "metadata": {"name": "good"}}),
                json!({"spec": {"list": [{"x": "a"}, {"x": "c"}]}, "metadata": {"name": "bad"}}),
                fail("/metadata/name/", "resource value 'bad' does not match 'good' at path /metadata/name/")),
            ("phrase_in_a_key_makes_an_element_skip",
                json!({"(spec)": {"list": [{"conditional anchor mismatch": "a"}]}, "metadata": {"name": "good"}}),
                json!({"spec": {"list": [{"conditional anchor mismatch": "a"}, {"conditional anchor mismatch": "c"}]}, "metadata": {"name": "bad"}}),
                fail("/metadata/name/", "resource value 'bad' does not match 'good' at path /metadata/name/")),
            ("without_the_phrase_the_element_fails_the_anchor",
                json!({"(spec)": {"list": [{"x": "a"}]}, "metadata": {"name": "good"}}),
                json!({"spec": {"list": [{"x": "a"}, {"x": "c"}]}, "metadata": {"name": "bad"}}),
                Outcome::Skip("conditional anchor mismatch: resource value 'c' does not match 'a' at path /spec/list/1/x/".into())),
            ("phrase_in_a_nested_value_makes_an_element_skip",
                json!({"(spec)": {"list": [{"x": "a"}]}, "metadata": {"name": "good"}}),
                json!({"spec": {"list": [{"x": "a"}, {"x": ["negation", "global anchor mismatch"]}]}, "metadata": {"name": "bad"}}),
                fail("/metadata/name/", "resource value 'bad' does not match 'good' at path /metadata/name/")),
        ];
        for (name, pattern, resource, want) in cases {
            assert_eq!(run_kyverno(pattern, resource), want, "{name}");
        }
    }

    #[test]
    fn resource_paths_render_keys_and_indices_as_kyverno_writes_them() {
        let spec = ResPath::Key(&ResPath::Root, "spec");
        let containers = ResPath::Key(&spec, "containers");
        let largest = format!("/{}/", usize::MAX);
        let cases: Vec<(&str, ResPath<'_>, &str)> = vec![
            ("root", ResPath::Root, "/"),
            ("key", ResPath::Key(&ResPath::Root, "spec"), "/spec/"),
            (
                "index_zero",
                ResPath::Index(&containers, 0),
                "/spec/containers/0/",
            ),
            (
                "index_of_two_digits",
                ResPath::Index(&containers, 10),
                "/spec/containers/10/",
            ),
            (
                "large_index",
                ResPath::Index(&containers, 1_234_567),
                "/spec/containers/1234567/",
            ),
            (
                "largest_index",
                ResPath::Index(&ResPath::Root, usize::MAX),
                &largest,
            ),
            ("empty_key", ResPath::Key(&ResPath::Root, ""), "//"),
        ];
        for (name, path, want) in cases {
            assert_eq!(path.render(), want, "{name}");
            assert_eq!(path.to_string(), want, "{name}");
        }
    }

    #[test]
    fn failures_explain_the_pattern_field_and_the_values() {
        let explain = |pattern: Value, resource: Value| match run(pattern, resource) {
            Outcome::Fail { explanation, .. } => explanation,
            other => panic!("expected a failure, got {other:?}"),
        };
        let cases: Vec<(&str, Value, Value, &str)> = vec![
            ("scalar_in_list_of_maps", json!({"spec": {"containers": [{"image": "!*:latest"}]}}),
                pod(json!([{"image": "nginx:latest"}])),
                "pattern.spec.containers[*].image: expected `!*:latest` but found `nginx:latest`"),
            ("missing_field", json!({"metadata": {"labels": {"app.kubernetes.io/name": "?*"}}}),
                json!({"metadata": {"labels": {}}}),
                "pattern.metadata.labels[\"app.kubernetes.io/name\"]: expected `?*` but the field is missing or null"),
            ("structure", json!({"spec": {"securityContext": {"runAsNonRoot": true}}}), json!({"spec": {}}),
                "pattern.spec.securityContext: expected an object but the field is missing or null"),
            ("negation", json!({"spec": {"X(hostPath)": "null"}}), json!({"spec": {"hostPath": {}}}),
                "pattern.spec.hostPath: the field must not be present"),
            ("star", json!({"spec": {"x": "*"}}), json!({"spec": {}}),
                "pattern.spec.x: expected `*` (any value) but the field is missing or null"),
        ];
        for (name, pattern, resource, want) in cases {
            assert_eq!(explain(pattern, resource).as_deref(), Some(want), "{name}");
        }
    }

    #[test]
    fn null_pattern_accepts_an_empty_list() {
        // Kyverno checks a scalar pattern against every element of a list,
        // so an empty list passes even a `null` pattern. Its unit test of
        // `validateNilPattern` alone (value-pattern harness) says otherwise;
        // the engine's end-to-end verdict is what we reproduce.
        assert_eq!(
            run(
                json!({"data": {"value": null}}),
                json!({"data": {"value": []}})
            ),
            Outcome::Pass
        );
    }

    #[test]
    fn deep_resources_are_walked_only_as_deep_as_the_pattern() {
        // serde_json refuses documents nested deeper than 128 levels, so this
        // is as deep as a request can get.
        let mut resource = json!("leaf");
        for _ in 0..120 {
            resource = json!({"a": resource});
        }
        let outcome = run(json!({"a": {"a": {"b": "x"}}}), resource);
        assert!(matches!(outcome, Outcome::Fail { .. }), "{outcome:?}");
    }

    #[test]
    fn too_deep_patterns_are_refused() {
        let mut pattern = json!("x");
        for _ in 0..(MAX_DEPTH + 2) {
            pattern = json!({"a": pattern});
        }
        let mut diags = Diagnostics::default();
        Pattern::compile(&Json::borrow(&pattern), "pattern", &mut diags);
        assert!(
            diags.summary().contains("nested deeper than 64 levels"),
            "{}",
            diags.summary()
        );
    }
}
