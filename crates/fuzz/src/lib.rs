//! Structure-aware fuzzing of the policy's entry points, `validate` and
//! `validate_settings`, on the stable toolchain (no libFuzzer, no nightly).
//!
//! Seeds are ValidationRequest payloads: the fixtures of `test_data/cases.yaml`
//! and the corpus in `test_data/fuzz/corpus/` (inputs that once found a
//! problem, or that are hostile on purpose). Each run mutates a seed as
//! JSON (hostile strings, deep nesting, long lists, extreme numbers, Kyverno
//! anchors and operators, subtrees spliced from other seeds) and sometimes as
//! bytes, then calls both entry points. A panic, or a call slower than the
//! time limit, is a finding: its input is written out and the run fails.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use cpu_time::ThreadTime;
use kyverno_validate_policy::json::{BulkValue, Payload};
use serde_json::{json, Map, Value};

/// The API server's limit on an object, and so on a request.
pub const MAX_PAYLOAD: usize = 3 * 1024 * 1024;

/// A small, fast, reproducible generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
}

/// Strings that have hurt policy engines: wildcards and regexes that
/// backtrack, variables that nest or loop, Kyverno operators and anchors,
/// quantities and durations at their limits.
const HOSTILE_STRINGS: &[&str] = &[
    "*",
    "?*",
    "!*:latest",
    "*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*?*b",
    "{{ request.object }}",
    "{{ request.object.spec.containers[].image | [0] }}",
    "{{ {{ request.operation }} }}",
    "{{",
    "}}",
    "{{ request.object.metadata.name || '' | split(@, '') | length(@) }}",
    "{{ regex_match('(a+)+$', 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!') }}",
    "{{ base64_decode('@@@') }}",
    "{{ parse_yaml('a: [') }}",
    "{{ x509_decode('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----') }}",
    "{{ time_add('2023-01-01T00:00:00Z', '9999999999h') }}",
    "{{ divide(`1`, `0`) }}",
    "{{ random('[a-z]{1000}') }}",
    "{{ items(request.object, 'k', 'v') }}",
    "{{ element }}",
    "{{ @ }}",
    "$(./../../../..)",
    ">=9999999999999999999999999999",
    "<-1Ei",
    "1Ei",
    "9223372036854775807m",
    "-9223372036854775808",
    "1e308",
    "0.0000000000000000000000000001",
    "99999999999h",
    "1-10",
    "-1!-1",
    "a|b|c|*|?",
    "=(x)",
    "X(x)",
    "^(x)",
    "<(x)",
    ">(x)",
    "+(x)",
    "(x)",
    "!",
    "\u{0}",
    "é\u{200b}\u{202e}",
    "object.spec.containers.all(c, c.image.matches('(a*)*b'))",
    "[1,2,3].map(x, [x,x,x,x,x,x,x,x].map(y, [y,y,y,y,y,y,y,y]))",
    "size(object.metadata.name) * 999999999999999",
    "has(object.spec) ? object.spec : 1/0",
    "quantity('1Ei').add(quantity('1Ei')).isGreaterThan(quantity('1'))",
    "'a'.repeat(1000000)",
    "request.object.spec.containers[?image=='x'] | [0].name",
];

/// Keys Kyverno gives meaning to, with anchors.
const HOSTILE_KEYS: &[&str] = &[
    "=(spec)",
    "X(hostPath)",
    "^(containers)",
    "<(image)",
    "(name)",
    ">(x)",
    "+(x)",
    "*",
    "",
    "{{ request.object.kind }}",
    "foreach",
    "deny",
    "anyPattern",
    "preconditions",
    "context",
    "cel",
    "podSecurity",
    "elementScope",
];

/// The indices of a random walk from the root of `value`.
fn random_path(value: &Value, rng: &mut Rng) -> Vec<usize> {
    let mut path = Vec::new();
    let mut node = value;
    while !rng.chance(30) {
        let len = match node {
            Value::Object(m) => m.len(),
            Value::Array(a) => a.len(),
            _ => 0,
        };
        if len == 0 {
            break;
        }
        let i = rng.below(len);
        let next = match node {
            Value::Object(m) => m.values().nth(i),
            Value::Array(a) => a.get(i),
            _ => None,
        };
        let Some(next) = next else { break };
        path.push(i);
        node = next;
    }
    path
}

fn subtree<'v>(value: &'v Value, path: &[usize]) -> Option<&'v Value> {
    path.iter().try_fold(value, |node, &i| match node {
        Value::Object(m) => m.values().nth(i),
        Value::Array(a) => a.get(i),
        _ => None,
    })
}

fn node_at<'v>(value: &'v mut Value, path: &[usize]) -> Option<&'v mut Value> {
    let Some((i, rest)) = path.split_first() else {
        return Some(value);
    };
    let child = match value {
        Value::Object(m) => m.values_mut().nth(*i)?,
        Value::Array(a) => a.get_mut(*i)?,
        _ => return None,
    };
    node_at(child, rest)
}

fn nested(depth: usize, rng: &mut Rng) -> Value {
    let mut v = Value::String((*pick(HOSTILE_STRINGS, rng)).to_string());
    for _ in 0..depth {
        v = if rng.chance(50) {
            json!([v])
        } else {
            let key = (*pick(HOSTILE_KEYS, rng)).to_string();
            let mut m = Map::new();
            m.insert(key, v);
            Value::Object(m)
        };
    }
    v
}

/// One of `items`, which is never empty here.
fn pick<'a, T>(items: &'a [T], rng: &mut Rng) -> &'a T {
    &items[rng.below(items.len())]
}

/// One structural mutation of `doc`; `donors` give subtrees to splice.
pub fn mutate(doc: &mut Value, donors: &[Value], rng: &mut Rng) {
    let donor = if donors.is_empty() {
        Value::Null
    } else {
        // Only the subtree is copied: a whole donor (up to 3 MiB) per
        // mutation was the campaign's largest cost.
        let d = pick(donors, rng);
        let path = random_path(d, rng);
        subtree(d, &path).cloned().unwrap_or_default()
    };
    let path = random_path(doc, rng);
    let Some(node) = node_at(doc, &path) else {
        return;
    };
    match rng.below(12) {
        0 => *node = Value::String((*pick(HOSTILE_STRINGS, rng)).to_string()),
        1 => {
            // Mostly short, sometimes the 60,000 of a hostile label.
            let n = 1 + if rng.chance(10) {
                rng.below(60_000)
            } else {
                rng.below(500)
            };
            let c = *pick(&["*", "?", "a", "{", "\\", "é"], rng);
            *node = Value::String(c.repeat(n));
        }
        2 => *node = nested(1 + rng.below(40), rng),
        3 => {
            // Up to 5,000 copies, within the API server's 3 MiB.
            let size = serde_json::to_vec(node).map_or(1, |b| b.len().max(1));
            let most = if rng.chance(10) { 5_000 } else { 50 };
            let n = rng.below(most).min(MAX_PAYLOAD / size);
            let item = node.clone();
            *node = Value::Array(vec![item; n]);
        }
        4 => {
            *node = match rng.below(6) {
                0 => json!(i64::MAX),
                1 => json!(i64::MIN),
                2 => json!(u64::MAX),
                3 => json!(1e308),
                4 => json!(-0.0),
                _ => json!(0.5),
            }
        }
        5 => *node = donor,
        6 => {
            if let Value::Object(m) = node {
                let key = m.keys().nth(rng.below(m.len().max(1))).cloned();
                if let Some(key) = key {
                    if rng.chance(50) {
                        m.remove(&key);
                    } else if let Some(v) = m.remove(&key) {
                        m.insert((*pick(HOSTILE_KEYS, rng)).to_string(), v);
                    }
                }
            }
        }
        7 => {
            if let Value::Object(m) = node {
                m.insert((*pick(HOSTILE_KEYS, rng)).to_string(), donor);
            }
        }
        8 => {
            *node =
                [Value::Null, json!(true), json!(false), json!({}), json!([])][rng.below(5)].clone()
        }
        9 => {
            if let Value::Array(a) = node {
                if !a.is_empty() {
                    let i = rng.below(a.len());
                    if rng.chance(50) {
                        a.remove(i);
                    } else if let Some(v) = a.get(i).cloned() {
                        a.push(v);
                    }
                }
            }
        }
        10 => {
            if let Value::String(s) = node {
                let cut = rng.below(s.len() + 1);
                if s.is_char_boundary(cut) {
                    s.truncate(cut);
                }
            }
        }
        _ => {
            // Past serde_json's limit of 128: the parser must refuse it. Deeper
            // documents come from `mutate_bytes`, as the harness itself
            // serializes these recursively.
            *node = nested(100 + rng.below(60), rng);
        }
    }
}

/// Byte-level damage to a serialized payload: flips, cuts, insertions.
pub fn mutate_bytes(bytes: &mut Vec<u8>, rng: &mut Rng) {
    if bytes.is_empty() {
        bytes.extend_from_slice(b"{}");
    }
    for _ in 0..1 + rng.below(4) {
        let i = rng.below(bytes.len());
        match rng.below(4) {
            0 => {
                if let Some(b) = bytes.get_mut(i) {
                    *b ^= 1 << rng.below(8);
                }
            }
            1 => bytes.truncate(i),
            2 => {
                let insert = *pick(&[&b"{"[..], b"[", b"\"", b"\\u0000", b"1e999", b"]}"], rng);
                let tail = bytes.split_off(i.min(bytes.len()));
                bytes.extend_from_slice(insert);
                bytes.extend_from_slice(&tail);
            }
            _ => {
                let tail = bytes.split_off(i.min(bytes.len()));
                bytes.extend(std::iter::repeat_n(b'[', rng.below(20_000)));
                bytes.extend_from_slice(&tail);
            }
        }
        if bytes.is_empty() {
            break;
        }
    }
}

/// What a run found.
#[derive(Debug, Default)]
pub struct Report {
    pub executions: u64,
    pub panics: Vec<PathBuf>,
    pub slow: Vec<(PathBuf, Duration)>,
    pub slowest: Duration,
    pub elapsed: Duration,
}

/// How a run goes.
#[derive(Debug, Clone)]
pub struct Options {
    pub iterations: u64,
    pub seed: u64,
    /// A call slower than this is a finding.
    pub time_limit: Duration,
    /// Where findings are written.
    pub findings: PathBuf,
    /// Write each input to `findings/current-SEED.json` before it runs, so
    /// one that kills the process (out of memory) is left behind.
    pub keep_current: bool,
}

/// Calls both entry points with `payload` (`validate_settings` with its
/// `settings`); `Err` when either panics, else the longer of the two calls,
/// each being a request of its own to policy-server, in the thread's CPU
/// time (wall time would count the machine's load).
pub fn exercise(payload: &[u8]) -> std::result::Result<Duration, String> {
    let read = serde_json::from_slice::<Value>(payload);
    // The request is read with objects built in bulk: it must read any
    // document as serde_json does.
    let bulk = serde_json::from_slice::<BulkValue>(payload);
    match (&read, bulk) {
        (Ok(a), Ok(BulkValue(b))) if *a == b => {}
        (Err(_), Err(_)) => {}
        (a, b) => {
            return Err(format!(
                "BulkValue reads the payload differently from serde_json: {:?} / {:?}",
                a.as_ref().map(|_| "value").map_err(ToString::to_string),
                b.map(|_| "value").map_err(|e| e.to_string())
            ))
        }
    }
    // The payload is read by the engine's own reader where it can: it must
    // read every text as serde_json does, to the same value or the same error.
    if let Ok(text) = std::str::from_utf8(payload) {
        let ours = Payload::read(text).map_err(|e| e.to_string());
        let serde = Payload::read_with_serde(text).map_err(|e| e.to_string());
        if ours != serde {
            return Err(format!(
                "the payload reader disagrees with serde_json: {:?} / {:?}",
                ours.as_ref().map(|_| "payload"),
                serde.as_ref().map(|_| "payload")
            ));
        }
    }
    let settings = read
        .ok()
        .and_then(|mut v| v.get_mut("settings").map(Value::take))
        .unwrap_or(Value::Null);
    let settings = serde_json::to_vec(&settings).unwrap_or_default();
    let outcome = std::panic::catch_unwind(|| {
        let start = ThreadTime::now();
        let response = kyverno_validate_policy::admission::validate(payload);
        let validate = start.elapsed();
        drop(response);
        let start = ThreadTime::now();
        let response = kyverno_validate_policy::admission::validate_settings(&settings);
        let validate_settings = start.elapsed();
        drop(response);
        validate.max(validate_settings)
    });
    outcome.map_err(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

/// The seeds: every fixture of `test_data/cases.yaml` as a payload, and
/// the corpus files.
pub fn seeds(test_data: &Path) -> Result<Vec<Value>> {
    let mut seeds = Vec::new();
    let cases: Value = serde_yaml::from_str(
        &std::fs::read_to_string(test_data.join("cases.yaml")).context("cases.yaml")?,
    )?;
    for case in cases.as_array().into_iter().flatten() {
        let read = |key: &str| -> Result<Value> {
            let file = case.get(key).and_then(Value::as_str).unwrap_or_default();
            let text =
                std::fs::read_to_string(test_data.join(file)).with_context(|| file.to_string())?;
            Ok(serde_yaml::from_str(&text)?)
        };
        seeds.push(json!({"request": read("request")?, "settings": read("settings")?}));
    }
    for entry in std::fs::read_dir(test_data.join("fuzz/corpus"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "json") {
            let text = std::fs::read(&path)?;
            // Corpus files may be deliberately broken JSON: keep them as strings.
            seeds
                .push(serde_json::from_slice(&text).unwrap_or_else(|_| {
                    Value::String(String::from_utf8_lossy(&text).into_owned())
                }));
        }
    }
    Ok(seeds)
}

/// The payload bytes of a seed (a string seed is raw bytes).
pub fn bytes_of(seed: &Value) -> Vec<u8> {
    match seed {
        Value::String(raw) => raw.as_bytes().to_vec(),
        other => serde_json::to_vec(other).unwrap_or_default(),
    }
}

/// Runs the campaign on `jobs` threads, each with its own share of the
/// iterations and its own seed (`options.seed + job`); one report.
pub fn run_parallel(seeds: &[Value], options: &Options, jobs: u64) -> Result<Report> {
    let jobs = jobs.max(1);
    let started = Instant::now();
    // Quiet for the whole campaign: each job's own swap of the panic hook
    // then swaps a quiet hook for a quiet one.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let reports: Vec<Result<Report>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..jobs)
            .map(|job| {
                let share = options.iterations / jobs + u64::from(job < options.iterations % jobs);
                let options = Options {
                    iterations: share,
                    seed: options.seed.wrapping_add(job),
                    ..options.clone()
                };
                scope.spawn(move || run(seeds, &options))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow::anyhow!("a fuzz job died")))
            })
            .collect()
    });
    std::panic::set_hook(hook);
    let mut total = Report::default();
    for report in reports {
        let report = report?;
        total.executions += report.executions;
        total.panics.extend(report.panics);
        total.slow.extend(report.slow);
        total.slowest = total.slowest.max(report.slowest);
    }
    total.elapsed = started.elapsed();
    Ok(total)
}

/// Runs the campaign.
pub fn run(seeds: &[Value], options: &Options) -> Result<Report> {
    let mut rng = Rng::new(options.seed);
    let mut report = Report::default();
    let started = Instant::now();
    if seeds.is_empty() {
        return Ok(report);
    }
    let structured: Vec<Value> = seeds.iter().filter(|s| s.is_object()).cloned().collect();
    // Each seed is serialized once, not once per byte-level mutation.
    let bytes: Vec<Vec<u8>> = seeds.iter().map(bytes_of).collect();
    let all: Vec<usize> = (0..seeds.len()).collect();
    let small: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| bytes.get(i).is_some_and(|b| b.len() < 32 * 1024))
        .collect();
    let small = if small.is_empty() { all.clone() } else { small };
    // Panics are findings, not noise on stderr.
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for i in 0..options.iterations {
        // Large seeds (the hostile corpus) cost a thousand small ones: they
        // come up one time in fifty, so a campaign explores mostly cheap
        // inputs and still revisits the expensive ones.
        let at = if rng.chance(2) {
            *pick(&all, &mut rng)
        } else {
            *pick(&small, &mut rng)
        };
        let (Some(seed), Some(seed_bytes)) = (seeds.get(at), bytes.get(at)) else {
            continue;
        };
        let mut payload = if seed.is_object() && !rng.chance(10) {
            let mut doc = seed.clone();
            for _ in 0..1 + rng.below(3) {
                mutate(&mut doc, &structured, &mut rng);
            }
            bytes_of(&doc)
        } else {
            let mut bytes = seed_bytes.clone();
            mutate_bytes(&mut bytes, &mut rng);
            bytes
        };
        if payload.len() > MAX_PAYLOAD {
            payload.truncate(MAX_PAYLOAD);
        }
        report.executions += 1;
        if options.keep_current {
            std::fs::create_dir_all(&options.findings)?;
            let current = options
                .findings
                .join(format!("current-{}.json", options.seed));
            std::fs::write(&current, &payload)?;
        }
        match exercise(&payload) {
            Ok(took) => {
                report.slowest = report.slowest.max(took);
                if took > options.time_limit {
                    let path = save(&options.findings, "slow", options.seed, i, &payload)?;
                    report.slow.push((path, took));
                }
            }
            Err(_) => {
                let path = save(&options.findings, "panic", options.seed, i, &payload)?;
                report.panics.push(path);
            }
        }
    }
    std::panic::set_hook(hook);
    report.elapsed = started.elapsed();
    Ok(report)
}

fn save(dir: &Path, what: &str, seed: u64, i: u64, payload: &[u8]) -> Result<PathBuf> {
    std::fs::create_dir_all(dir)?;
    // The seed tells campaigns apart (parallel jobs share the folder).
    let path = dir.join(format!("{what}-{seed}-{i}.json"));
    std::fs::write(&path, payload)?;
    Ok(path)
}

/// The process's peak resident memory, from Linux's `/proc` (`None` elsewhere).
pub fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// The certificates (PEM) the x509 campaign starts from.
pub fn certificates(test_data: &Path) -> Result<Vec<String>> {
    let mut pems = Vec::new();
    for entry in std::fs::read_dir(test_data.join("fuzz/x509"))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "pem") {
            pems.push(std::fs::read_to_string(&path)?);
        }
    }
    pems.sort();
    Ok(pems)
}

/// A fuzz campaign of its own for the hand-written DER reader behind
/// `x509_decode`: certificates and requests with damaged DER (flipped
/// bytes, long-form and oversized lengths, cuts, insertions), re-wrapped in
/// PEM, and sometimes damaged PEM text. Returns the executions and the
/// inputs that panicked.
pub fn run_x509(pems: &[String], iterations: u64, seed: u64) -> Result<(u64, Vec<String>)> {
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    let query = kyverno_jmespath::Query::compile("x509_decode(@)")
        .map_err(|e| anyhow::anyhow!("x509_decode does not compile: {e}"))?;
    let ders: Vec<(String, Vec<u8>)> = pems
        .iter()
        .filter_map(|pem| {
            let label = pem
                .lines()
                .next()?
                .trim_matches('-')
                .trim_start_matches("BEGIN ");
            let body: String = pem.lines().filter(|l| !l.starts_with("-----")).collect();
            Some((label.to_string(), engine.decode(body).ok()?))
        })
        .collect();
    if ders.is_empty() {
        anyhow::bail!("no certificate to start from");
    }
    let mut rng = Rng::new(seed);
    let mut panics = Vec::new();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for _ in 0..iterations {
        let (label, der) = pick(&ders, &mut rng);
        let mut der = der.clone();
        for _ in 0..1 + rng.below(4) {
            let i = rng.below(der.len().max(1));
            match rng.below(5) {
                0 => {
                    if let Some(b) = der.get_mut(i) {
                        *b ^= 1 << rng.below(8);
                    }
                }
                1 => {
                    // Length bytes: long forms, and lengths past the end.
                    let b = *pick(
                        &[0x80u8, 0x81, 0x82, 0x84, 0x88, 0xff, 0x7f, 0x00],
                        &mut rng,
                    );
                    if let Some(slot) = der.get_mut(i) {
                        *slot = b;
                    }
                }
                2 => der.truncate(i),
                3 => {
                    let tail = der.split_off(i.min(der.len()));
                    der.extend((0..rng.below(16)).map(|_| rng.next_u64() as u8));
                    der.extend_from_slice(&tail);
                }
                _ => {
                    // A subtree copied elsewhere: nesting the reader has not seen.
                    let from = rng.below(der.len().max(1));
                    let to = (from + rng.below(64)).min(der.len());
                    let chunk: Vec<u8> = der.get(from..to).map(<[u8]>::to_vec).unwrap_or_default();
                    let at = rng.below(der.len() + 1).min(der.len());
                    let tail = der.split_off(at);
                    der.extend_from_slice(&chunk);
                    der.extend_from_slice(&tail);
                }
            }
        }
        let mut pem = format!(
            "-----BEGIN {label}-----\n{}\n-----END {label}-----\n",
            engine.encode(&der)
        );
        if rng.chance(5) {
            let mut bytes = pem.into_bytes();
            mutate_bytes(&mut bytes, &mut rng);
            pem = String::from_utf8_lossy(&bytes).into_owned();
        }
        let input = Value::String(pem);
        if std::panic::catch_unwind(|| query.search(&input).map(|_| ())).is_err() {
            if let Value::String(pem) = input {
                panics.push(pem);
            }
        }
    }
    std::panic::set_hook(hook);
    Ok((iterations, panics))
}

/// Gzip as the signed messages use it (the reader ignores the trailer's
/// checksum, so it is left zero).
fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut out = vec![0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(bytes, 6));
    out.extend([0u8; 8]);
    out
}

fn gunzip(bytes: &[u8]) -> Option<Vec<u8>> {
    miniz_oxide::inflate::decompress_to_vec_with_limit(bytes.get(10..)?, 1 << 24).ok()
}

/// Byte damage for binary formats: flips, octal-looking digits (tar sizes),
/// cuts, random insertions and copied chunks.
fn damage(bytes: &mut Vec<u8>, rng: &mut Rng) {
    for _ in 0..1 + rng.below(4) {
        let i = rng.below(bytes.len().max(1));
        match rng.below(5) {
            0 => {
                if let Some(b) = bytes.get_mut(i) {
                    *b ^= 1 << rng.below(8);
                }
            }
            1 => {
                let b = *pick(&[b'7', b'0', b' ', 0u8, 0xff, b'5', b'L', b'x'], rng);
                if let Some(slot) = bytes.get_mut(i) {
                    *slot = b;
                }
            }
            2 => bytes.truncate(i),
            3 => {
                let tail = bytes.split_off(i.min(bytes.len()));
                bytes.extend((0..rng.below(600)).map(|_| rng.next_u64() as u8));
                bytes.extend_from_slice(&tail);
            }
            _ => {
                let from = rng.below(bytes.len().max(1));
                let to = (from + rng.below(1024)).min(bytes.len());
                let chunk: Vec<u8> = bytes.get(from..to).map(<[u8]>::to_vec).unwrap_or_default();
                let at = rng.below(bytes.len() + 1).min(bytes.len());
                let tail = bytes.split_off(at);
                bytes.extend_from_slice(&chunk);
                bytes.extend_from_slice(&tail);
            }
        }
    }
}

/// A fuzz campaign of its own for the hand-written readers behind
/// `validate.manifests` (gzip headers, tar, the signed YAML): signed
/// messages from `test_data/manifests/signed.json` damaged at each layer
/// (the outer gzip, the signed bytes, the tar inside) and sent as a
/// request. Returns the executions and the payloads that panicked.
pub fn run_manifests(signed: &Value, iterations: u64, seed: u64) -> Result<(u64, Vec<Vec<u8>>)> {
    use base64::Engine as _;
    let engine = base64::engine::general_purpose::STANDARD;
    let keys = json!([
        {"keys": {"publicKeys": signed["alice"]}},
        {"keys": {"publicKeys": signed["bob"]}}
    ]);
    let settings = json!({"validationFailureAction": "Enforce", "rules": [{"name": "signed",
        "match": {"any": [{"resources": {"kinds": ["Service"]}}]},
        "validate": {"manifests": {"attestors": [{"count": 1, "entries": keys}]}}}]});
    let messages: Vec<(Vec<u8>, Value)> = ["plain", "tarball"]
        .iter()
        .filter_map(|form| {
            let outer = engine.decode(signed[form]["message"].as_str()?).ok()?;
            Some((outer, signed[form]["alice"].clone()))
        })
        .collect();
    if messages.is_empty() {
        anyhow::bail!("no signed message to start from");
    }
    let mut rng = Rng::new(seed);
    let mut panics = Vec::new();
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    for _ in 0..iterations {
        let (outer, signature) = pick(&messages, &mut rng);
        let mut message = outer.clone();
        match rng.below(3) {
            0 => damage(&mut message, &mut rng),
            layer => {
                if let Some(mut raw) = gunzip(outer) {
                    let inner_tar = (layer == 2).then(|| gunzip(&raw)).flatten();
                    match inner_tar {
                        Some(mut tar) => {
                            damage(&mut tar, &mut rng);
                            raw = gzip(&tar);
                        }
                        None => damage(&mut raw, &mut rng),
                    }
                    message = gzip(&raw);
                }
            }
        }
        let object = json!({"apiVersion": "v1", "kind": "Service",
            "metadata": {"name": "web", "namespace": "default", "annotations": {
                "cosign.sigstore.dev/message": engine.encode(&message),
                "cosign.sigstore.dev/signature": signature}},
            "spec": {"selector": {"app": "web"}}});
        let payload = serde_json::to_vec(&json!({"settings": settings, "request": {
            "uid": "1", "operation": "CREATE", "namespace": "default", "name": "web",
            "kind": {"group": "", "version": "v1", "kind": "Service"}, "object": object}}))?;
        if std::panic::catch_unwind(|| kyverno_validate_policy::admission::validate(&payload))
            .is_err()
        {
            panics.push(payload);
        }
    }
    std::panic::set_hook(hook);
    Ok((iterations, panics))
}
