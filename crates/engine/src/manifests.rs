//! `validate.manifests`: the resource must match a YAML manifest signed
//! with the attestors' keys, as Kyverno checks it with sigstore's
//! k8s-manifest-sigstore (key-based signatures only).
//!
//! The resource carries the signed manifest in `<domain>/message`
//! (base64 of a gzip of the signed bytes: YAML documents, or a tar.gz of
//! YAML files) and signatures in `<domain>/signature`, `…/signature_1`, ….
//! An entry is verified when some signature verifies over the signed bytes
//! with its key (ECDSA P-256, SHA-256) and the signed manifest of the
//! resource's kind and name equals the resource, fields ignored by
//! Kyverno's defaults and the rule's `ignoreFields` aside. An attestor set
//! passes when `count` entries (all, by default) are verified; every set
//! must pass.

use std::collections::{BTreeMap, HashMap};

use base64::Engine as _;
use p256::ecdsa::signature::Verifier;
use p256::ecdsa::{Signature, VerifyingKey};
use serde_json::{json, Map, Value};

use crate::diagnostics::{index_path, key_path, Diagnostics};
use crate::verdict::RuleStatus;

const DEFAULT_DOMAIN: &str = "cosign.sigstore.dev";

/// What a signed message may inflate to: a gzip bomb in an annotation
/// stops here instead of exhausting the module's memory.
const MAX_INFLATED: usize = 8 << 20;

/// A compiled `validate.manifests`.
#[derive(Debug, Clone, PartialEq)]
pub struct CompiledManifests {
    domain: String,
    sets: Vec<AttestorSet>,
    ignore: Vec<IgnoreBinding>,
}

#[derive(Debug, Clone, PartialEq)]
struct AttestorSet {
    /// `count`; 0 means every entry.
    count: usize,
    entries: Vec<Entry>,
}

#[derive(Debug, Clone, PartialEq)]
struct Entry {
    /// Where Kyverno's messages say the entry is (`.attestors[0].entries[1].keys`).
    path: String,
    annotations: BTreeMap<String, String>,
    check: Check,
}

#[derive(Debug, Clone, PartialEq)]
enum Check {
    Key(VerifyingKey),
    Nested(AttestorSet),
}

/// `ignoreFields[]`: fields ignored on the objects it names.
#[derive(Debug, Clone, PartialEq)]
struct IgnoreBinding {
    objects: Vec<ObjectRef>,
    fields: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Default)]
struct ObjectRef {
    group: String,
    version: String,
    kind: String,
    name: String,
    namespace: String,
}

fn text(value: Option<&Value>) -> String {
    value
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// Reads the object's fields, reporting any the engine does not know.
fn known_fields<'v>(
    value: &'v Value,
    path: &str,
    known: &[&str],
    diags: &mut Diagnostics,
) -> Option<&'v Map<String, Value>> {
    let Some(map) = value.as_object() else {
        diags.push(path, "must be an object");
        return None;
    };
    for key in map.keys() {
        if !known.contains(&key.as_str()) {
            diags.push(&key_path(path, key), "is not a field Kyverno knows here");
        }
    }
    Some(map)
}

impl CompiledManifests {
    /// Compiles `validate.manifests` found at `path`; problems go to `diags`.
    pub fn compile(value: &Value, path: &str, diags: &mut Diagnostics) -> Option<Self> {
        let before = diags.errors().len();
        let map = known_fields(
            value,
            path,
            &[
                "attestors",
                "annotationDomain",
                "ignoreFields",
                "dryRun",
                "repository",
            ],
            diags,
        )?;
        if map.get("repository").is_some_and(|r| r != "") {
            diags.push(
                &key_path(path, "repository"),
                "manifests kept in an OCI bundle need registry downloads a Kubewarden policy cannot make; sign the manifest into the resource's annotations",
            );
        }
        if let Some(dry_run) = map.get("dryRun") {
            let p = key_path(path, "dryRun");
            if let Some(d) = known_fields(dry_run, &p, &["enable", "namespace"], diags) {
                if d.get("enable").and_then(Value::as_bool) == Some(true) {
                    diags.push(
                        &key_path(&p, "enable"),
                        "a dry-run create needs write access to the API server, which a Kubewarden policy does not have",
                    );
                }
            }
        }
        let domain = match text(map.get("annotationDomain")) {
            d if d.is_empty() => DEFAULT_DOMAIN.to_string(),
            d => d,
        };
        let attestors_path = key_path(path, "attestors");
        let sets: Vec<AttestorSet> = match map.get("attestors").and_then(Value::as_array) {
            Some(list) if !list.is_empty() => list
                .iter()
                .enumerate()
                .filter_map(|(i, set)| {
                    compile_set(
                        set,
                        &index_path(&attestors_path, i),
                        &format!(".attestors[{i}]"),
                        diags,
                    )
                })
                .collect(),
            _ => {
                diags.push(&attestors_path, "needs at least one attestor set");
                Vec::new()
            }
        };
        let ignore_path = key_path(path, "ignoreFields");
        let ignore = match map.get("ignoreFields") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(list)) => list
                .iter()
                .enumerate()
                .filter_map(|(i, b)| compile_ignore(b, &index_path(&ignore_path, i), diags))
                .collect(),
            Some(_) => {
                diags.push(&ignore_path, "must be a list");
                Vec::new()
            }
        };
        (diags.errors().len() == before).then_some(Self {
            domain,
            sets,
            ignore,
        })
    }

    /// Checks `object` (the request's new object); `dry_run`: the request
    /// is an API dry run, which Kyverno lets through.
    pub fn evaluate(&self, object: &Value, dry_run: bool) -> (RuleStatus, String) {
        if dry_run {
            return (
                RuleStatus::Pass,
                "allowed because of DryRun request".to_string(),
            );
        }
        let signed = Signed::read(object, &self.domain);
        let ignored = self.ignored_fields(object);
        let mut reasons = Vec::new();
        for set in &self.sets {
            match set.verify(object, &signed, &ignored, 0) {
                Outcome::Verified(reason) => reasons.push(reason),
                Outcome::Failed(reason) => return (RuleStatus::Fail, reason),
                Outcome::Error(e) => {
                    return (
                        RuleStatus::Error,
                        format!("error occurred during manifest verification: {e}"),
                    )
                }
            }
        }
        (
            RuleStatus::Pass,
            format!("verified manifest signatures; {}", reasons.join(",")),
        )
    }

    /// The ignore patterns that apply to `object`: k8s-manifest-sigstore's
    /// and Kyverno's defaults, the rule's `ignoreFields`, and the signature
    /// annotations themselves.
    fn ignored_fields(&self, object: &Value) -> Vec<String> {
        let target = ObjectRef::of(object);
        let mut fields: Vec<String> = Vec::new();
        for (kinds, list) in DEFAULT_IGNORES {
            if kinds.is_empty() || kinds.contains(&target.kind.as_str()) {
                fields.extend(list.iter().map(|f| f.to_string()));
            }
        }
        for binding in &self.ignore {
            if binding.objects.is_empty() || binding.objects.iter().any(|o| o.selects(&target)) {
                fields.extend(binding.fields.iter().cloned());
            }
        }
        for name in [
            "message",
            "signature",
            "certificate",
            "bundle",
            "resourceBundleRef",
        ] {
            fields.push(format!("metadata.annotations.{}/{name}", self.domain));
        }
        fields
    }
}

fn compile_set(
    value: &Value,
    path: &str,
    kyverno_path: &str,
    diags: &mut Diagnostics,
) -> Option<AttestorSet> {
    let map = known_fields(value, path, &["count", "entries"], diags)?;
    let count = match map.get("count") {
        None | Some(Value::Null) => 0,
        Some(v) => match v.as_u64().and_then(|n| usize::try_from(n).ok()) {
            Some(n) => n,
            None => {
                diags.push(
                    &key_path(path, "count"),
                    "must be a number of entries (0 or more)",
                );
                0
            }
        },
    };
    let entries_path = key_path(path, "entries");
    let mut entries = Vec::new();
    match map.get("entries").and_then(Value::as_array) {
        Some(list) if !list.is_empty() => {
            for (i, entry) in list.iter().enumerate() {
                compile_entry(
                    entry,
                    &index_path(&entries_path, i),
                    &format!("{kyverno_path}.entries[{i}]"),
                    &mut entries,
                    diags,
                );
            }
        }
        _ => diags.push(&entries_path, "needs at least one entry"),
    }
    Some(AttestorSet { count, entries })
}

fn compile_entry(
    value: &Value,
    path: &str,
    kyverno_path: &str,
    entries: &mut Vec<Entry>,
    diags: &mut Diagnostics,
) {
    let Some(map) = known_fields(
        value,
        path,
        &[
            "keys",
            "attestor",
            "annotations",
            "certificates",
            "keyless",
            "repository",
        ],
        diags,
    ) else {
        return;
    };
    for (field, why) in [
        ("certificates", "certificate attestors need a transparency log (Rekor), which a Kubewarden policy cannot reach; use `keys`"),
        ("keyless", "keyless attestors need Fulcio and Rekor, which a Kubewarden policy cannot reach; use `keys`"),
        ("repository", "manifests kept in an OCI bundle need registry downloads a Kubewarden policy cannot make"),
    ] {
        if map.get(field).is_some_and(|v| !v.is_null()) {
            diags.push(&key_path(path, field), why);
        }
    }
    let annotations: BTreeMap<String, String> = map
        .get("annotations")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                .collect()
        })
        .unwrap_or_default();
    if let Some(nested) = map.get("attestor") {
        let p = key_path(path, "attestor");
        if let Some(set) = compile_set(nested, &p, &format!("{kyverno_path}.attestor"), diags) {
            entries.push(Entry {
                path: format!("{kyverno_path}.attestor"),
                annotations: annotations.clone(),
                check: Check::Nested(set),
            });
        }
    }
    let Some(keys) = map.get("keys") else {
        if map.get("attestor").is_none() {
            diags.push(path, "needs `keys` (or a nested `attestor`)");
        }
        return;
    };
    let keys_path = key_path(path, "keys");
    let Some(keys_map) = known_fields(
        keys,
        &keys_path,
        &[
            "publicKeys",
            "signatureAlgorithm",
            "kms",
            "secret",
            "rekor",
            "ctlog",
        ],
        diags,
    ) else {
        return;
    };
    for field in ["kms", "secret"] {
        if keys_map.get(field).is_some_and(|v| !v.is_null() && v != "") {
            diags.push(
                &key_path(&keys_path, field),
                "keys read from a KMS or a Secret are out of a Kubewarden policy's reach; give the PEM in `publicKeys`",
            );
        }
    }
    let pem = text(keys_map.get("publicKeys"));
    let blocks = pem_blocks(&pem);
    if blocks.is_empty() {
        diags.push(
            &key_path(&keys_path, "publicKeys"),
            "needs a PEM public key (`-----BEGIN PUBLIC KEY-----`)",
        );
        return;
    }
    // Several keys in one string are one entry each, as Kyverno expands them.
    for der in blocks {
        match ecdsa_p256_key(&der) {
            Ok(key) => entries.push(Entry {
                path: format!("{kyverno_path}.keys"),
                annotations: annotations.clone(),
                check: Check::Key(key),
            }),
            Err(e) => diags.push(&key_path(&keys_path, "publicKeys"), e),
        }
    }
}

fn compile_ignore(value: &Value, path: &str, diags: &mut Diagnostics) -> Option<IgnoreBinding> {
    let map = known_fields(value, path, &["objects", "fields"], diags)?;
    let objects = map
        .get("objects")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .map(|o| ObjectRef {
                    group: text(o.get("group")),
                    version: text(o.get("version")),
                    kind: text(o.get("kind")),
                    name: text(o.get("name")),
                    namespace: text(o.get("namespace")),
                })
                .collect()
        })
        .unwrap_or_default();
    let fields = map
        .get("fields")
        .and_then(Value::as_array)
        .map(|list| {
            list.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    Some(IgnoreBinding { objects, fields })
}

/// The DER bodies of the `PUBLIC KEY` PEM blocks in `text`.
fn pem_blocks(text: &str) -> Vec<Vec<u8>> {
    const BEGIN: &str = "-----BEGIN PUBLIC KEY-----";
    const END: &str = "-----END PUBLIC KEY-----";
    let mut blocks = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(BEGIN) {
        let after = rest.get(start + BEGIN.len()..).unwrap_or_default();
        let Some(end) = after.find(END) else { break };
        let body: String = after
            .get(..end)
            .unwrap_or_default()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        if let Ok(der) = base64::engine::general_purpose::STANDARD.decode(body) {
            blocks.push(der);
        }
        rest = after.get(end + END.len()..).unwrap_or_default();
    }
    blocks
}

/// One DER element: its tag, its content and what follows it.
fn der(bytes: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = bytes.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (len, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let n = usize::from(first & 0x7f);
        if n == 0 || n > 4 {
            return None;
        }
        let digits = rest.get(..n)?;
        let len = digits
            .iter()
            .fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
        (len, rest.get(n..)?)
    };
    Some((tag, rest.get(..len)?, rest.get(len..)?))
}

const OID_EC_PUBLIC_KEY: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x02, 0x01];
const OID_P256: &[u8] = &[0x2a, 0x86, 0x48, 0xce, 0x3d, 0x03, 0x01, 0x07];

/// An ECDSA P-256 key from a SubjectPublicKeyInfo; other key types are
/// named in the error.
fn ecdsa_p256_key(spki: &[u8]) -> Result<VerifyingKey, String> {
    let unreadable = || "the public key is not a readable SubjectPublicKeyInfo".to_string();
    let (_, info, _) = der(spki).ok_or_else(unreadable)?;
    let (_, algorithm, rest) = der(info).ok_or_else(unreadable)?;
    let (_, bits, _) = der(rest).ok_or_else(unreadable)?;
    let (_, oid, params) = der(algorithm).ok_or_else(unreadable)?;
    if oid != OID_EC_PUBLIC_KEY {
        return Err("only ECDSA P-256 public keys are supported for manifests (the key is RSA, Ed25519 or another type)".into());
    }
    let curve = der(params).map(|(_, c, _)| c).unwrap_or_default();
    if curve != OID_P256 {
        return Err("only ECDSA P-256 public keys are supported for manifests (the key is on another curve)".into());
    }
    let point = bits.get(1..).ok_or_else(unreadable)?;
    VerifyingKey::from_sec1_bytes(point)
        .map_err(|_| "the P-256 public key is not a point on the curve".into())
}

/// What an entry or a set comes to.
enum Outcome {
    Verified(String),
    Failed(String),
    Error(String),
}

impl AttestorSet {
    fn verify(&self, object: &Value, signed: &Signed, ignored: &[String], depth: usize) -> Outcome {
        let required = if self.count == 0 {
            self.entries.len()
        } else {
            self.count
        };
        let mut verified = 0;
        let mut reasons = Vec::new();
        let mut errors = Vec::new();
        for entry in &self.entries {
            let outcome = entry.verify(object, signed, ignored, depth);
            match outcome {
                Outcome::Verified(reason) => {
                    verified += 1;
                    reasons.push(reason);
                    if verified >= required {
                        return Outcome::Verified(format!(
                            "manifest verification succeeded; verifiedCount {verified}; requiredCount {required}; message {}",
                            reasons.join(",")
                        ));
                    }
                }
                Outcome::Failed(reason) => reasons.push(reason),
                Outcome::Error(e) => errors.push(e),
            }
        }
        if !errors.is_empty() {
            return Outcome::Error(errors.join("; "));
        }
        Outcome::Failed(format!(
            "manifest verification failed; verifiedCount {verified}; requiredCount {required}; message {}",
            reasons.join(",")
        ))
    }
}

impl Entry {
    fn verify(&self, object: &Value, signed: &Signed, ignored: &[String], depth: usize) -> Outcome {
        let annotations = object.pointer("/metadata/annotations");
        for (key, want) in &self.annotations {
            let got = annotations
                .and_then(|a| a.get(key))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if got != want {
                return Outcome::Error(format!(
                    "annotations mismatch: `{key}` is `{got}`, the attestor expects `{want}`"
                ));
            }
        }
        let key = match &self.check {
            Check::Nested(set) => {
                // Nesting is bounded by the settings document's depth.
                return set.verify(object, signed, ignored, depth + 1);
            }
            Check::Key(key) => key,
        };
        let p = &self.path;
        let manifests = match &signed.manifests {
            Ok(list) => list,
            Err(Problem::Fail(why)) => {
                return Outcome::Failed(format!(
                    "{p}: YAML manifest not found for this resource: {why}"
                ))
            }
            Err(Problem::Error(why)) => {
                return Outcome::Error(format!(
                    "{p}: YAML manifest not found for this resource: {why}"
                ))
            }
        };
        let Some(manifest) = find_manifest(manifests, object) else {
            return Outcome::Failed(format!(
                "{p}: YAML manifest not found for this resource: failed to find a YAML manifest in the gzipped message"
            ));
        };
        if signed.signatures.is_empty() {
            return Outcome::Failed(format!(
                "{p}: failed to verify signature: signature not found"
            ));
        }
        let total = signed.signatures.len();
        let mut trials = Vec::new();
        let mut good = false;
        for (i, signature) in signed.signatures.iter().enumerate() {
            match verify_signature(key, &signed.raw, signature) {
                Ok(()) => {
                    good = true;
                    break;
                }
                Err(e) => trials.push(format!(
                    "[publickey 1/1] [signature {}/{total}] error: {e}",
                    i + 1
                )),
            }
        }
        if !good {
            return Outcome::Error(format!(
                "{p}: failed to verify signature: verification failed for {total} signature. all trials: {}",
                serde_json::to_string(&trials).unwrap_or_default()
            ));
        }
        // Compared once the signature holds: a message no key signed costs
        // no walk of the resource.
        let Differences { shown, more } = diff(manifest, object, ignored);
        if !shown.is_empty() {
            let items: Vec<Value> = shown
                .into_iter()
                .map(|(key, before, after)| {
                    json!({"key": key, "values": {"after": after, "before": before}})
                })
                .collect();
            let more = if more { " and more differences" } else { "" };
            return Outcome::Failed(format!(
                "{p}: failed to verify signature. diff found; {}{more}",
                json!({ "items": items })
            ));
        }
        Outcome::Verified("singed by a valid signer: ".to_string())
    }
}

fn verify_signature(key: &VerifyingKey, message: &[u8], signature: &[u8]) -> Result<(), String> {
    let sig = Signature::from_der(signature)
        .or_else(|_| Signature::from_slice(signature))
        .map_err(|_| "the signature is neither ASN.1 DER nor r||s".to_string())?;
    key.verify(message, &sig)
        .map_err(|_| "invalid signature when validating ASN.1 encoded signature".to_string())
}

/// Why no manifest could be read: a failure (nothing signed) or an error
/// (something signed, but unreadable).
enum Problem {
    Fail(String),
    Error(String),
}

/// What the resource's annotations carry.
struct Signed {
    /// The signed bytes (the message, inflated once).
    raw: Vec<u8>,
    manifests: Result<Vec<Value>, Problem>,
    signatures: Vec<Vec<u8>>,
}

impl Signed {
    fn read(object: &Value, domain: &str) -> Self {
        let annotation = |name: &str| {
            object
                .pointer("/metadata/annotations")
                .and_then(|a| a.get(format!("{domain}/{name}")))
                .and_then(Value::as_str)
        };
        // `signature`, then `signature_1`, `signature_2`, … up to the first gap.
        let mut signatures = Vec::new();
        let mut i = 0usize;
        while let Some(text) = annotation(&if i == 0 {
            "signature".to_string()
        } else {
            format!("signature_{i}")
        }) {
            signatures.push(
                base64::engine::general_purpose::STANDARD
                    .decode(text)
                    .unwrap_or_else(|_| text.as_bytes().to_vec()),
            );
            i += 1;
        }
        let Some(message) = annotation("message") else {
            return Self {
                raw: Vec::new(),
                manifests: Err(Problem::Fail("message not found".into())),
                signatures,
            };
        };
        let decoded = base64::engine::general_purpose::STANDARD
            .decode(message.trim())
            .map_err(|e| e.to_string())
            .and_then(|bytes| gunzip_if_gzip(&bytes));
        let raw = match decoded {
            Ok(raw) => raw,
            Err(e) => {
                return Self {
                    raw: Vec::new(),
                    manifests: Err(Problem::Error(format!(
                        "failed to decode base64 message in the annotation: {e}"
                    ))),
                    signatures,
                }
            }
        };
        let manifests = yaml_documents(&raw)
            .map_or_else(|| tarball_documents(&raw), Ok)
            .map_err(|e| {
                Problem::Error(format!(
                    "failed to decode base64 message in the annotation: {e}"
                ))
            });
        Self {
            raw,
            manifests,
            signatures,
        }
    }
}

/// Inflates a gzip stream; other bytes are returned as they are.
fn gunzip_if_gzip(bytes: &[u8]) -> Result<Vec<u8>, String> {
    if !bytes.starts_with(&[0x1f, 0x8b]) {
        return Ok(bytes.to_vec());
    }
    gunzip(bytes)
}

fn gunzip(bytes: &[u8]) -> Result<Vec<u8>, String> {
    let bad = || "gzip: invalid header".to_string();
    if bytes.get(..3) != Some(&[0x1f, 0x8b, 0x08]) {
        return Err(bad());
    }
    let flags = *bytes.get(3).ok_or_else(bad)?;
    let mut at = 10usize;
    if flags & 0x04 != 0 {
        let len = bytes.get(at..at + 2).ok_or_else(bad)?;
        let len = usize::from(u16::from_le_bytes([
            *len.first().ok_or_else(bad)?,
            *len.get(1).ok_or_else(bad)?,
        ]));
        at = at.checked_add(2 + len).ok_or_else(bad)?;
    }
    for flag in [0x08u8, 0x10] {
        if flags & flag != 0 {
            let rest = bytes.get(at..).ok_or_else(bad)?;
            let end = rest.iter().position(|&b| b == 0).ok_or_else(bad)?;
            at += end + 1;
        }
    }
    if flags & 0x02 != 0 {
        at += 2;
    }
    let data = bytes.get(at..).ok_or_else(bad)?;
    miniz_oxide::inflate::decompress_to_vec_with_limit(data, MAX_INFLATED).map_err(|e| {
        match e.status {
            miniz_oxide::inflate::TINFLStatus::HasMoreOutput => {
                format!("gzip: the message inflates past {MAX_INFLATED} bytes (the limit)")
            }
            _ => "gzip: invalid compressed data".to_string(),
        }
    })
}

/// The signed bytes read as YAML documents, when they are YAML with at
/// least one object in them.
fn yaml_documents(raw: &[u8]) -> Option<Vec<Value>> {
    let text = std::str::from_utf8(raw).ok()?;
    let mut documents = Vec::new();
    for document in serde_yaml::Deserializer::from_str(text) {
        let value: Value = serde::Deserialize::deserialize(document).ok()?;
        if value.is_object() {
            documents.push(value);
        }
    }
    (!documents.is_empty()).then_some(documents)
}

/// The `.yaml` / `.yml` files of a tar.gz, in name order, as documents.
fn tarball_documents(raw: &[u8]) -> Result<Vec<Value>, String> {
    let tar = gunzip(raw)?;
    let mut files: Vec<(String, Vec<Value>)> = Vec::new();
    let mut at = 0usize;
    let mut long_name: Option<String> = None;
    while let Some(header) = tar.get(at..at + 512) {
        if header.iter().all(|&b| b == 0) {
            break;
        }
        let field = |from: usize, to: usize| header.get(from..to).unwrap_or_default();
        let cstr = |bytes: &[u8]| {
            let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
            String::from_utf8_lossy(bytes.get(..end).unwrap_or_default()).into_owned()
        };
        let size_text = cstr(field(124, 136));
        let size = usize::from_str_radix(size_text.trim(), 8)
            .map_err(|_| "tar: invalid header".to_string())?;
        let truncated = || "tar: unexpected end of archive".to_string();
        let data_at = at + 512;
        let data_end = data_at.checked_add(size).ok_or_else(truncated)?;
        let data = tar.get(data_at..data_end).ok_or_else(truncated)?;
        let typeflag = field(156, 157).first().copied().unwrap_or(0);
        let prefix = cstr(field(345, 500));
        let name = long_name.take().unwrap_or_else(|| {
            let name = cstr(field(0, 100));
            if prefix.is_empty() {
                name
            } else {
                format!("{prefix}/{name}")
            }
        });
        match typeflag {
            b'0' | 0 => {
                let base = name.rsplit('/').next().unwrap_or_default().to_string();
                if !name.starts_with("..") && (base.ends_with(".yaml") || base.ends_with(".yml")) {
                    let documents = yaml_documents(data).unwrap_or_default();
                    files.push((name, documents));
                }
            }
            // GNU long name: the next entry's name.
            b'L' => long_name = Some(cstr(data)),
            // Directories and extended headers carry no manifest.
            b'5' | b'x' | b'g' => {}
            other => {
                return Err(format!(
                    "tar: entry `{name}` has type `{}`, not a file or a directory",
                    char::from(other)
                ))
            }
        }
        at = size
            .div_ceil(512)
            .checked_mul(512)
            .and_then(|padded| data_at.checked_add(padded))
            .ok_or_else(truncated)?;
    }
    files.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(files.into_iter().flat_map(|(_, docs)| docs).collect())
}

fn group_of(object: &Value) -> &str {
    let api_version = object
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    api_version.rsplit_once('/').map_or("", |(group, _)| group)
}

/// The signed manifest for `object`: same group and kind, then the same
/// name (in the same namespace, if one is), else the first of the kind.
fn find_manifest<'m>(manifests: &'m [Value], object: &Value) -> Option<&'m Value> {
    let kind = object.get("kind");
    let same_kind: Vec<&Value> = manifests
        .iter()
        .filter(|m| m.get("kind") == kind && group_of(m) == group_of(object))
        .collect();
    let name = |v: &Value| v.pointer("/metadata/name").cloned();
    let namespace = |v: &Value| v.pointer("/metadata/namespace").cloned();
    let named: Vec<&Value> = same_kind
        .iter()
        .copied()
        .filter(|m| name(m) == name(object))
        .collect();
    named
        .iter()
        .copied()
        .find(|m| namespace(m) == namespace(object))
        .or_else(|| named.first().copied())
        .or_else(|| same_kind.first().copied())
}

/// `a.b.0.c → value`, leaving out what counts as absent (null, `{}`, `[]`).
/// Most differences a failure lists (Kyverno lists them all: a resource of
/// megabytes that differs everywhere made a message of megabytes).
const MAX_SHOWN: usize = 100;

/// Every non-null leaf of `value` under its dotted path
/// (`spec.ports.0.port`), sorted by path. Of two leaves with one path (a
/// key that holds a dot), the later is kept, as a map keeps it.
fn flatten(value: &Value) -> Vec<(String, &Value)> {
    fn walk<'v>(value: &'v Value, path: &mut String, out: &mut Vec<(String, &'v Value)>) {
        let mut under = |segment: &dyn std::fmt::Display, v: &'v Value, path: &mut String| {
            let len = path.len();
            if len > 0 {
                path.push('.');
            }
            // Writing to a `String` cannot fail.
            let _ = std::fmt::Write::write_fmt(path, format_args!("{segment}"));
            walk(v, path, out);
            path.truncate(len);
        };
        match value {
            Value::Null => {}
            Value::Object(map) => {
                for (k, v) in map {
                    under(k, v, path);
                }
            }
            Value::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    under(&i, v, path);
                }
            }
            scalar => out.push((path.clone(), scalar)),
        }
    }
    let mut out = Vec::new();
    walk(value, &mut String::new(), &mut out);
    out.sort_by(|a, b| a.0.cmp(&b.0));
    // The sort is stable: of equal paths the last written comes last.
    out.dedup_by(|later, kept| {
        let same = later.0 == kept.0;
        if same {
            std::mem::swap(later, kept);
        }
        same
    });
    out
}

fn same_value(key: &str, a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        (Value::String(x), Value::String(y)) if key.ends_with("image") => {
            let short = |s: &str| {
                let s = s.strip_prefix("docker.io/").unwrap_or(s);
                s.strip_suffix(":latest").unwrap_or(s).to_string()
            };
            short(x) == short(y)
        }
        _ => a == b,
    }
}

/// The first differences between the signed manifest and the resource, in
/// the order of their keys, as `(key, before, after)`, once the ignored
/// fields are left out.
#[derive(Debug, PartialEq)]
struct Differences {
    shown: Vec<(String, Value, Value)>,
    /// Whether there are more than [`MAX_SHOWN`].
    more: bool,
}

fn diff(manifest: &Value, object: &Value, ignored: &[String]) -> Differences {
    let before = flatten(manifest);
    let after = flatten(object);
    let mut changed = Vec::new();
    let mut only_before = Vec::new();
    let mut only_after = Vec::new();
    // Both sorted by path: one merge pass pairs them.
    let mut after_iter = after.into_iter().peekable();
    for (key, b) in before {
        while let Some((k, a)) = after_iter.next_if(|(k, _)| *k < key) {
            only_after.push((k, a));
        }
        match after_iter.next_if(|(k, _)| *k == key) {
            Some((_, a)) if same_value(&key, b, a) => {}
            Some((_, a)) => changed.push((key, b.clone(), a.clone())),
            None => only_before.push((key, b)),
        }
    }
    only_after.extend(after_iter);
    // A list element that only moved: the same value at the same path
    // under another index on the other side.
    let unindexed = |key: &str| -> String {
        key.split('.')
            .map(|part| {
                if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
                    "#"
                } else {
                    part
                }
            })
            .collect::<Vec<_>>()
            .join(".")
    };
    let mut taken = vec![false; only_after.len()];
    // The fields only after, by their unindexed path, in order: a moved
    // element is looked for among its own path's, not among them all.
    let mut by_shape: HashMap<String, Vec<usize>> = HashMap::new();
    for (i, (k, _)) in only_after.iter().enumerate() {
        by_shape.entry(unindexed(k)).or_default().push(i);
    }
    let mut differences = changed;
    for (key, value) in only_before {
        let shape = unindexed(&key);
        let moved = by_shape
            .get(&shape)
            .into_iter()
            .flatten()
            .copied()
            .find(|&i| {
                !taken.get(i).copied().unwrap_or(true)
                    && only_after
                        .get(i)
                        .is_some_and(|(k, v)| k != &key && v == &value)
            });
        match moved {
            Some(i) => {
                if let Some(t) = taken.get_mut(i) {
                    *t = true;
                }
            }
            None => differences.push((key, value.clone(), Value::Null)),
        }
    }
    for (i, (key, value)) in only_after.into_iter().enumerate() {
        if !taken.get(i).copied().unwrap_or(false) {
            differences.push((key, Value::Null, value.clone()));
        }
    }
    // A field absent on one side and an empty string on the other is no
    // difference.
    differences.retain(|(_, b, a)| !(b.is_null() && a == "" || a.is_null() && b == ""));
    if differences.is_empty() {
        return Differences {
            shown: differences,
            more: false,
        };
    }
    // Kyverno's ignore fields are unanchored regexes: `field*`, each `*`
    // read as `.*`. Compiled only when there is something to filter, as
    // small automata where they fit: a large resource has thousands of
    // differing fields, and a backtracking-free regex engine still took
    // seconds over them all.
    let patterns: Vec<IgnoreField> = ignored
        .iter()
        .filter_map(|f| IgnoreField::compile(&format!("{f}*").replace('*', ".*")))
        .collect();
    // In key order, and only as far as the message goes: a resource that
    // differs everywhere is not matched against every pattern in full.
    differences.sort_by(|x, y| x.0.cmp(&y.0));
    let mut shown = Vec::new();
    for difference in differences {
        if patterns.iter().any(|p| p.is_match(&difference.0)) {
            continue;
        }
        if shown.len() == MAX_SHOWN {
            return Differences { shown, more: true };
        }
        shown.push(difference);
    }
    Differences { shown, more: false }
}

/// An ignore field's regex, with the longest literal text every match
/// contains, looked for first: most fields contain none of it.
struct IgnoreField {
    required: Option<memchr::memmem::Finder<'static>>,
    matcher: Matcher,
}

enum Matcher {
    Small(kube_units::small_regex::Small),
    Regex(regex_lite::Regex),
}

impl IgnoreField {
    fn compile(pattern: &str) -> Option<Self> {
        let matcher = match kube_units::small_regex::Small::compile(pattern) {
            Some(small) => Matcher::Small(small),
            None => Matcher::Regex(regex_lite::Regex::new(pattern).ok()?),
        };
        Some(Self {
            required: required_literal(pattern)
                .map(|text| memchr::memmem::Finder::new(text.as_bytes()).into_owned()),
            matcher,
        })
    }

    fn is_match(&self, text: &str) -> bool {
        if let Some(required) = &self.required {
            if required.find(text.as_bytes()).is_none() {
                return false;
            }
        }
        match &self.matcher {
            Matcher::Small(small) => small.is_match(text),
            Matcher::Regex(regex) => regex.is_match(text),
        }
    }
}

/// The longest run of plain characters in `pattern` that every match must
/// contain; `None` for patterns with groups, classes, alternatives or
/// escapes, where that takes more reading than it saves.
fn required_literal(pattern: &str) -> Option<String> {
    if pattern.contains(['(', '[', '|', '\\']) {
        return None;
    }
    let plain = |c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '/' | ':' | '~');
    let mut best = String::new();
    let mut run = String::new();
    for c in pattern.chars() {
        if plain(c) {
            run.push(c);
            continue;
        }
        // A quantifier makes the character before it optional.
        if matches!(c, '*' | '?' | '{') {
            run.pop();
        }
        if run.len() > best.len() {
            best = std::mem::take(&mut run);
        }
        run.clear();
    }
    if run.len() > best.len() {
        best = run;
    }
    (!best.is_empty()).then_some(best)
}

impl ObjectRef {
    fn of(object: &Value) -> Self {
        let api_version = text(object.get("apiVersion"));
        let (group, version) = match api_version.rsplit_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.clone()),
        };
        Self {
            group,
            version,
            kind: text(object.get("kind")),
            name: text(object.pointer("/metadata/name")),
            namespace: text(object.pointer("/metadata/namespace")),
        }
    }

    /// Whether this `objects[]` entry names `target` (k8s-manifest-sigstore's
    /// `MatchPattern` on each field).
    fn selects(&self, target: &ObjectRef) -> bool {
        fn matches(pattern: &str, value: &str) -> bool {
            pattern.split(',').map(str::trim).any(|p| match p {
                "" | "*" => true,
                "-" => value.is_empty(),
                _ => match p.strip_suffix('*') {
                    Some(prefix) => value.starts_with(prefix),
                    None => p == value,
                },
            })
        }
        matches(&self.group, &target.group)
            && matches(&self.version, &target.version)
            && matches(&self.kind, &target.kind)
            && matches(&self.name, &target.name)
            && matches(&self.namespace, &target.namespace)
    }
}

/// The fields k8s-manifest-sigstore and Kyverno ignore by default, by kind
/// (an empty kind list: every kind).
const DEFAULT_IGNORES: &[(&[&str], &[&str])] = &[
    (
        &[],
        &[
            "metadata.managedFields.*",
            "metadata.resourceVersion",
            "metadata.selfLink",
            "metadata.annotations.kubectl.kubernetes.io/last-applied-configuration",
            "metadata.annotations.namespace",
            "metadata.annotations.control-plane.alpha.kubernetes.io/leader",
            "metadata.annotations.deprecated.daemonset.template.generation",
            "metadata.annotations.deployment.kubernetes.io/revision",
            "metadata.creationTimestamp",
            "metadata.generation",
            "metadata.uid",
            "metadata.finalizers*",
            "metadata.labels.app.kubernetes.io/instance",
            "metadata.namespace",
            "status",
            "spec.containers.*.imagePullPolicy",
            "spec.containers.*.terminationMessagePath",
            "spec.containers.*.terminationMessagePolicy",
            "spec.dnsPolicy",
            "spec.restartPolicy",
            "spec.schedulerName",
            "spec.terminationGracePeriodSeconds",
        ],
    ),
    (
        &["ServiceAccount"],
        &["secrets.*.name", "imagePullSecrets.*.name"],
    ),
    (
        &["Service"],
        &[
            "spec.ports.*.nodePort",
            "spec.clusterIP",
            "spec.clusterIPs.0",
            "spec.sessionAffinity",
            "spec.type",
            "spec.ipFamilies.*",
            "spec.ipFamilyPolicy",
            "spec.internalTrafficPolicy",
        ],
    ),
    (
        &["Pod"],
        &[
            "spec.volumes.*.name",
            "spec.volumes.*.projected.*",
            "spec.volumes.*.configMap.defaultMode",
            "spec.containers.*.volumeMounts.*",
            "spec.tolerations.*",
            "spec.enableServiceLinks",
            "spec.preemptionPolicy",
            "spec.priority",
            "spec.serviceAccount",
        ],
    ),
    (
        &["Deployment"],
        &[
            "spec.progressDeadlineSeconds",
            "spec.revisionHistoryLimit",
            "spec.strategy.*",
            "spec.template.metadata.creationTimestamp",
            "spec.containers.*.ports.*.protocol",
            "spec.containers.*.resources",
            "spec.securityContext",
        ],
    ),
    (
        &["CustomResourceDefinition"],
        &["spec.conversion.strategy", "spec.names.listKind"],
    ),
    (
        &["ClusterPolicy", "Policy"],
        &[
            "metadata.annotations.pod-policies.kyverno.io/autogen-controllers",
            "spec.failurePolicy",
            "spec.background",
            "spec.validationFailureAction",
        ],
    ),
    (&["Route"], &["spec.host"]),
];

#[cfg(test)]
mod tests;
