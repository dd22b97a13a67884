//! `x509_decode`: a PEM certificate or certificate request decoded to the
//! object Kyverno returns, Go's `x509.Certificate` (or
//! `x509.CertificateRequest`) through `encoding/json`, with the RSA public
//! key as `{N, E}`. A small DER reader covers the fields Go exposes; name
//! constraints and CSR attributes are not decoded (left null).

use base64::Engine as _;
use serde_json::Value;

use crate::arguments::{go_base64_decode, number, sorted_object};
use crate::time::{format_time, GoTime};

/// Kyverno's `x509_decode`; the error text is Kyverno's (or Go's).
pub(super) fn decode(text: &str) -> Result<Value, String> {
    let (kind, der) = pem_decode(text).ok_or("failed to decode PEM block")?;
    match kind.as_str() {
        "CERTIFICATE" => certificate(&der),
        "CERTIFICATE REQUEST" => certificate_request(&der),
        _ => Err("PEM block neither contains a CERTIFICATE or CERTIFICATE REQUEST".into()),
    }
}

// ---------------------------------------------------------------------------
// PEM (Go's pem.Decode)

/// Go's `getLine`: the first line without trailing spaces, tabs and `\r`,
/// and the text after its newline.
fn get_line(data: &str) -> (&str, &str) {
    let (line, rest) = match data.find('\n') {
        Some(i) => (
            data.get(..i).unwrap_or_default(),
            data.get(i + 1..).unwrap_or_default(),
        ),
        None => (data, ""),
    };
    let line = line.strip_suffix('\r').unwrap_or(line);
    (line.trim_end_matches([' ', '\t']), rest)
}

/// The type and bytes of the first well-formed PEM block.
fn pem_decode(text: &str) -> Option<(String, Vec<u8>)> {
    const BEGIN: &str = "-----BEGIN ";
    const END: &str = "\n-----END ";
    const END_AT_START: &str = "-----END ";
    const DASHES: &str = "-----";
    let mut rest = text;
    loop {
        if let Some(after) = rest.strip_prefix(BEGIN) {
            rest = after;
        } else {
            let i = rest.find("\n-----BEGIN ")?;
            rest = rest.get(i + 1 + BEGIN.len()..)?;
        }
        let (type_line, after_type) = get_line(rest);
        rest = after_type;
        let Some(kind) = type_line.strip_suffix(DASHES) else {
            continue;
        };
        let mut has_headers = false;
        loop {
            if rest.is_empty() {
                return None;
            }
            let (line, next) = get_line(rest);
            if !line.contains(':') {
                break;
            }
            has_headers = true;
            rest = next;
        }
        let (end_index, trailer_index) = if !has_headers && rest.starts_with(END_AT_START) {
            (0, END_AT_START.len())
        } else {
            match rest.find(END) {
                Some(i) => (i, i + END.len()),
                None => continue,
            }
        };
        let trailer = rest.get(trailer_index..).unwrap_or_default();
        let expected = format!("{kind}{DASHES}");
        let Some(after_trailer) = trailer.strip_prefix(expected.as_str()) else {
            continue;
        };
        if !get_line(after_trailer).0.is_empty() {
            continue;
        }
        let body: String = rest
            .get(..end_index)
            .unwrap_or_default()
            .chars()
            .filter(|c| *c != ' ' && *c != '\t')
            .collect();
        match go_base64_decode(body.as_bytes()) {
            Ok(bytes) => return Some((kind.to_string(), bytes)),
            Err(_) => continue,
        }
    }
}

// ---------------------------------------------------------------------------
// DER

#[derive(Debug, Clone, Copy)]
struct Tlv<'a> {
    tag: u8,
    content: &'a [u8],
    raw: &'a [u8],
}

/// One DER element and the bytes after it.
fn read(data: &[u8]) -> Option<(Tlv<'_>, &[u8])> {
    let tag = *data.first()?;
    if (tag & 0x1f) == 0x1f {
        return None; // multi-byte tags are not used here
    }
    let first = *data.get(1)?;
    let (length, header) = if first < 0x80 {
        (usize::from(first), 2usize)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 {
            return None;
        }
        let mut length = 0usize;
        for i in 0..count {
            length = length
                .checked_mul(256)?
                .checked_add(usize::from(*data.get(2 + i)?))?;
        }
        (length, 2 + count)
    };
    let end = header.checked_add(length)?;
    Some((
        Tlv {
            tag,
            content: data.get(header..end)?,
            raw: data.get(..end)?,
        },
        data.get(end..)?,
    ))
}

/// The elements inside a constructed value.
fn children(content: &[u8]) -> Option<Vec<Tlv<'_>>> {
    let mut out = Vec::new();
    let mut rest = content;
    while !rest.is_empty() {
        let (tlv, next) = read(rest)?;
        out.push(tlv);
        rest = next;
    }
    Some(out)
}

/// The single element of `data`, which must have `tag`.
fn single(data: &[u8], tag: u8) -> Option<Tlv<'_>> {
    let (tlv, rest) = read(data)?;
    (tlv.tag == tag && rest.is_empty()).then_some(tlv)
}

fn object_identifier(content: &[u8]) -> Option<Vec<u64>> {
    if (content.last()? & 0x80) != 0 {
        return None;
    }
    let mut arcs = Vec::new();
    let mut value: u64 = 0;
    for &b in content {
        value = value.checked_mul(128)?.checked_add(u64::from(b & 0x7f))?;
        if (b & 0x80) == 0 {
            if arcs.is_empty() {
                if value < 80 {
                    arcs.push(value / 40);
                    arcs.push(value % 40);
                } else {
                    arcs.push(2);
                    arcs.push(value - 80);
                }
            } else {
                arcs.push(value);
            }
            value = 0;
        }
    }
    Some(arcs)
}

/// An OID as Go's `x509.OID` writes itself (`2.5.29.32.0`).
fn dotted(arcs: &[u64]) -> String {
    arcs.iter()
        .map(u64::to_string)
        .collect::<Vec<_>>()
        .join(".")
}

fn oid_json(arcs: &[u64]) -> Value {
    Value::Array(arcs.iter().map(|&a| Value::from(a)).collect())
}

/// A two's complement INTEGER of up to 8 bytes.
fn small_int(content: &[u8]) -> Option<i64> {
    if content.is_empty() || content.len() > 8 {
        return None;
    }
    let mut value: i64 = if (content.first()? & 0x80) != 0 {
        -1
    } else {
        0
    };
    for &b in content {
        value = (value << 8) | i64::from(b);
    }
    Some(value)
}

/// A non-negative big-endian integer in decimal (`big.Int.String()`).
fn big_decimal(bytes: &[u8]) -> String {
    let mut number: Vec<u8> = bytes.iter().copied().skip_while(|&b| b == 0).collect();
    let mut chunks: Vec<u64> = Vec::new();
    while !number.is_empty() {
        let mut remainder: u64 = 0;
        let mut quotient = Vec::with_capacity(number.len());
        for &b in &number {
            let current = remainder * 256 + u64::from(b);
            let digit = current / 1_000_000_000;
            remainder = current % 1_000_000_000;
            if digit != 0 || !quotient.is_empty() {
                quotient.push(u8::try_from(digit).unwrap_or(u8::MAX));
            }
        }
        chunks.push(remainder);
        number = quotient;
    }
    let mut text = match chunks.pop() {
        Some(top) => top.to_string(),
        None => return "0".into(),
    };
    while let Some(chunk) = chunks.pop() {
        text.push_str(&format!("{chunk:09}"));
    }
    text
}

/// A serial number as `encoding/json` writes a `*big.Int` and Kyverno reads
/// it back: a float64.
fn serial_number(content: &[u8]) -> Value {
    let negative = content.first().is_some_and(|&b| (b & 0x80) != 0);
    let magnitude: Vec<u8> = if negative {
        // Two's complement: invert and add one.
        let mut bytes: Vec<u8> = content.iter().map(|b| !b).collect();
        for byte in bytes.iter_mut().rev() {
            let (sum, carry) = byte.overflowing_add(1);
            *byte = sum;
            if !carry {
                break;
            }
        }
        bytes
    } else {
        content.to_vec()
    };
    let value: f64 = big_decimal(&magnitude).parse().unwrap_or(0.0);
    number(if negative { -value } else { value })
}

fn base64(bytes: &[u8]) -> Value {
    Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
}

fn strings(list: Vec<String>) -> Value {
    if list.is_empty() {
        Value::Null
    } else {
        Value::Array(list.into_iter().map(Value::String).collect())
    }
}

fn values(list: Vec<Value>) -> Value {
    if list.is_empty() {
        Value::Null
    } else {
        Value::Array(list)
    }
}

fn object(entries: Vec<(&str, Value)>) -> Value {
    sorted_object(
        entries
            .into_iter()
            .map(|(k, v)| (k.to_string(), v))
            .collect(),
    )
}

/// The string types Go's x509 accepts in names.
fn asn1_string(tlv: &Tlv<'_>) -> Option<String> {
    match tlv.tag {
        // UTF8String, NumericString, PrintableString, IA5String
        0x0c | 0x12 | 0x13 | 0x16 => String::from_utf8(tlv.content.to_vec()).ok(),
        // T61String: Go keeps the bytes.
        0x14 => Some(String::from_utf8_lossy(tlv.content).into_owned()),
        // BMPString: UTF-16BE.
        0x1e => {
            let units: Vec<u16> = tlv
                .content
                .chunks(2)
                .map(|pair| match pair {
                    [hi, lo] => u16::from_be_bytes([*hi, *lo]),
                    _ => 0xfffd,
                })
                .collect();
            Some(
                char::decode_utf16(units)
                    .map(|c| c.unwrap_or('\u{fffd}'))
                    .collect(),
            )
        }
        _ => None,
    }
}

/// `pkix.Name` filled from an RDNSequence.
fn name(tlv: &Tlv<'_>) -> Option<Value> {
    let mut names = Vec::new();
    let (mut country, mut organization, mut unit, mut locality) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut province, mut street, mut postal) = (Vec::new(), Vec::new(), Vec::new());
    let (mut common_name, mut serial) = (String::new(), String::new());
    for rdn in children(tlv.content)? {
        if rdn.tag != 0x31 {
            return None;
        }
        for atv in children(rdn.content)? {
            let parts = children(atv.content)?;
            let [kind, value] = parts.as_slice() else {
                return None;
            };
            if kind.tag != 0x06 {
                return None;
            }
            let oid = object_identifier(kind.content)?;
            let text = asn1_string(value)?;
            names.push(object(vec![
                ("Type", oid_json(&oid)),
                ("Value", Value::String(text.clone())),
            ]));
            if let [2, 5, 4, attribute] = oid.as_slice() {
                match attribute {
                    3 => common_name = text,
                    5 => serial = text,
                    6 => country.push(text),
                    7 => locality.push(text),
                    8 => province.push(text),
                    9 => street.push(text),
                    10 => organization.push(text),
                    11 => unit.push(text),
                    17 => postal.push(text),
                    _ => {}
                }
            }
        }
    }
    Some(object(vec![
        ("CommonName", Value::String(common_name)),
        ("Country", strings(country)),
        ("ExtraNames", Value::Null),
        ("Locality", strings(locality)),
        ("Names", values(names)),
        ("Organization", strings(organization)),
        ("OrganizationalUnit", strings(unit)),
        ("PostalCode", strings(postal)),
        ("Province", strings(province)),
        ("SerialNumber", Value::String(serial)),
        ("StreetAddress", strings(street)),
    ]))
}

/// UTCTime or GeneralizedTime as `encoding/json` writes a `time.Time`
/// (RFC 3339 with nanoseconds).
fn asn1_time(tlv: &Tlv<'_>) -> Option<String> {
    let text = std::str::from_utf8(tlv.content).ok()?;
    let digits_at = |from: usize, to: usize| -> Option<i64> {
        let part = text.get(from..to)?;
        if part.bytes().all(|b| b.is_ascii_digit()) {
            part.parse().ok()
        } else {
            None
        }
    };
    let (year, mut pos) = match tlv.tag {
        0x17 => {
            let yy = digits_at(0, 2)?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, 2)
        }
        0x18 => (digits_at(0, 4)?, 4),
        _ => return None,
    };
    let month = digits_at(pos, pos + 2)?;
    let day = digits_at(pos + 2, pos + 4)?;
    let hour = digits_at(pos + 4, pos + 6)?;
    let minute = digits_at(pos + 6, pos + 8)?;
    pos += 8;
    let mut second = 0;
    if text
        .get(pos..pos + 1)
        .is_some_and(|c| c.bytes().all(|b| b.is_ascii_digit()))
    {
        second = digits_at(pos, pos + 2)?;
        pos += 2;
    }
    let mut nanos = 0i64;
    if tlv.tag == 0x18 && text.get(pos..pos + 1) == Some(".") {
        let digits: String = text
            .get(pos + 1..)?
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        pos += 1 + digits.len();
        let kept: String = digits.chars().take(9).collect();
        nanos = format!("{kept:0<9}").parse().ok()?;
    }
    let offset = match text.get(pos..)? {
        "Z" => 0,
        zone => {
            let sign = match zone.get(..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let hours: i64 = zone.get(1..3)?.parse().ok()?;
            let minutes: i64 = zone.get(3..5)?.parse().ok()?;
            if zone.len() != 5 {
                return None;
            }
            sign * (hours * 3600 + minutes * 60)
        }
    };
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 59
    {
        return None;
    }
    let t = GoTime::from_clock((year, month, day), (hour, minute, second), nanos, offset);
    Some(format_time(&t, true))
}

// ---------------------------------------------------------------------------
// Public keys and algorithms

const RSA: &[u64] = &[1, 2, 840, 113_549, 1, 1, 1];

fn public_key_algorithm(oid: &[u64]) -> i64 {
    match oid {
        [1, 2, 840, 113_549, 1, 1, 1] => 1,
        [1, 2, 840, 10040, 4, 1] => 2,
        [1, 2, 840, 10045, 2, 1] => 3,
        [1, 3, 101, 112] => 4,
        _ => 0,
    }
}

/// Go's `SignatureAlgorithm` for an AlgorithmIdentifier.
fn signature_algorithm(algorithm: &Tlv<'_>) -> i64 {
    let Some(parts) = children(algorithm.content) else {
        return 0;
    };
    let Some(oid) = parts.first().and_then(|t| object_identifier(t.content)) else {
        return 0;
    };
    match oid.as_slice() {
        [1, 2, 840, 113_549, 1, 1, 2] => 1,
        [1, 2, 840, 113_549, 1, 1, 4] => 2,
        [1, 2, 840, 113_549, 1, 1, 5] | [1, 3, 14, 3, 2, 29] => 3,
        [1, 2, 840, 113_549, 1, 1, 11] => 4,
        [1, 2, 840, 113_549, 1, 1, 12] => 5,
        [1, 2, 840, 113_549, 1, 1, 13] => 6,
        [1, 2, 840, 10040, 4, 3] => 7,
        [2, 16, 840, 1, 101, 3, 4, 3, 2] => 8,
        [1, 2, 840, 10045, 4, 1] => 9,
        [1, 2, 840, 10045, 4, 3, 2] => 10,
        [1, 2, 840, 10045, 4, 3, 3] => 11,
        [1, 2, 840, 10045, 4, 3, 4] => 12,
        [1, 2, 840, 113_549, 1, 1, 10] => pss_algorithm(parts.get(1)),
        [1, 3, 101, 112] => 16,
        _ => 0,
    }
}

/// RSA-PSS: SHA256WithRSAPSS (13), SHA384WithRSAPSS (14) or
/// SHA512WithRSAPSS (15) from the hash in the parameters.
fn pss_algorithm(params: Option<&Tlv<'_>>) -> i64 {
    let hash = params
        .and_then(|p| children(p.content))
        .and_then(|fields| fields.into_iter().find(|f| f.tag == 0xa0))
        .and_then(|explicit| single(explicit.content, 0x30))
        .and_then(|algorithm| children(algorithm.content))
        .and_then(|parts| parts.first().and_then(|t| object_identifier(t.content)));
    match hash.as_deref() {
        Some([2, 16, 840, 1, 101, 3, 4, 2, 1]) => 13,
        Some([2, 16, 840, 1, 101, 3, 4, 2, 2]) => 14,
        Some([2, 16, 840, 1, 101, 3, 4, 2, 3]) => 15,
        _ => 0,
    }
}

/// The algorithm of a SubjectPublicKeyInfo and, for RSA, `{N, E}`.
fn public_key(spki: &Tlv<'_>) -> Result<(i64, Value), String> {
    let malformed = || "x509: malformed public key".to_string();
    let parts = children(spki.content).ok_or_else(malformed)?;
    let [algorithm, key] = parts.as_slice() else {
        return Err(malformed());
    };
    let oid = children(algorithm.content)
        .and_then(|p| p.first().and_then(|t| object_identifier(t.content)))
        .ok_or_else(malformed)?;
    let kind = public_key_algorithm(&oid);
    if oid.as_slice() != RSA {
        return Err("certificate should use rsa algorithm".into());
    }
    let failed = || "failed to parse subject public key info".to_string();
    if key.tag != 0x03 {
        return Err(failed());
    }
    let bits = key.content.get(1..).ok_or_else(failed)?;
    let rsa = single(bits, 0x30)
        .and_then(|s| children(s.content))
        .ok_or_else(failed)?;
    let [modulus, exponent] = rsa.as_slice() else {
        return Err(failed());
    };
    if modulus.tag != 0x02 || exponent.tag != 0x02 {
        return Err(failed());
    }
    if modulus.content.first().is_some_and(|&b| (b & 0x80) != 0) {
        return Err(failed());
    }
    let e = small_int(exponent.content)
        .filter(|&e| e > 0 && e <= i64::from(i32::MAX))
        .ok_or_else(failed)?;
    Ok((
        kind,
        object(vec![
            ("E", Value::from(e)),
            ("N", Value::String(big_decimal(modulus.content))),
        ]),
    ))
}

// ---------------------------------------------------------------------------
// Extensions

/// What Go's `processExtensions` fills in.
struct Extensions {
    list: Vec<Value>,
    key_usage: i64,
    basic_constraints_valid: bool,
    is_ca: bool,
    max_path_len: i64,
    max_path_len_zero: bool,
    subject_key_id: Option<Vec<u8>>,
    authority_key_id: Option<Vec<u8>>,
    dns_names: Vec<String>,
    email_addresses: Vec<String>,
    ip_addresses: Vec<String>,
    uris: Vec<Value>,
    ext_key_usage: Vec<Value>,
    unknown_ext_key_usage: Vec<Value>,
    ocsp_server: Vec<String>,
    issuing_certificate_url: Vec<String>,
    crl_distribution_points: Vec<String>,
    policy_identifiers: Vec<Value>,
    /// Go 1.22+'s `Policies` (dotted OIDs) and Go 1.24+'s policy
    /// constraints, mappings and inhibitAnyPolicy.
    policies: Vec<Value>,
    policy_mappings: Vec<Value>,
    require_explicit_policy: Option<i64>,
    inhibit_policy_mapping: Option<i64>,
    inhibit_any_policy: Option<i64>,
    unhandled_critical: Vec<Value>,
}

impl Extensions {
    fn new() -> Self {
        Self {
            list: Vec::new(),
            key_usage: 0,
            basic_constraints_valid: false,
            is_ca: false,
            max_path_len: 0,
            max_path_len_zero: false,
            subject_key_id: None,
            authority_key_id: None,
            dns_names: Vec::new(),
            email_addresses: Vec::new(),
            ip_addresses: Vec::new(),
            uris: Vec::new(),
            ext_key_usage: Vec::new(),
            unknown_ext_key_usage: Vec::new(),
            ocsp_server: Vec::new(),
            issuing_certificate_url: Vec::new(),
            crl_distribution_points: Vec::new(),
            policy_identifiers: Vec::new(),
            policies: Vec::new(),
            policy_mappings: Vec::new(),
            require_explicit_policy: None,
            inhibit_policy_mapping: None,
            inhibit_any_policy: None,
            unhandled_critical: Vec::new(),
        }
    }

    /// Reads a SEQUENCE OF Extension.
    fn read_all(&mut self, sequence: &Tlv<'_>) -> Option<()> {
        for extension in children(sequence.content)? {
            let parts = children(extension.content)?;
            let (id, critical, value) = match parts.as_slice() {
                [id, value] => (id, false, value),
                [id, flag, value] if flag.tag == 0x01 => {
                    (id, flag.content.first().is_some_and(|&b| b != 0), value)
                }
                _ => return None,
            };
            if id.tag != 0x06 || value.tag != 0x04 {
                return None;
            }
            let oid = object_identifier(id.content)?;
            self.list.push(object(vec![
                ("Critical", Value::Bool(critical)),
                ("Id", oid_json(&oid)),
                ("Value", base64(value.content)),
            ]));
            let handled = self.handle(&oid, value.content).unwrap_or(true);
            if critical && !handled {
                self.unhandled_critical.push(oid_json(&oid));
            }
        }
        Some(())
    }

    /// Decodes one known extension; whether Go counts it as handled.
    fn handle(&mut self, oid: &[u64], value: &[u8]) -> Option<bool> {
        match oid {
            [2, 5, 29, 15] => {
                let bits = single(value, 0x03)?;
                let unused = usize::from(*bits.content.first()?);
                let bytes = bits.content.get(1..)?;
                let bit_length = (bytes.len() * 8).saturating_sub(unused);
                for i in 0..9usize {
                    let set = i < bit_length
                        && bytes
                            .get(i / 8)
                            .is_some_and(|byte| ((byte >> (7 - i % 8)) & 1) == 1);
                    if set {
                        self.key_usage |= 1 << i;
                    }
                }
                Some(true)
            }
            [2, 5, 29, 19] => {
                let fields = children(single(value, 0x30)?.content)?;
                let mut fields = fields.iter().peekable();
                let mut is_ca = false;
                if let Some(flag) = fields.peek().filter(|f| f.tag == 0x01) {
                    is_ca = flag.content.first().is_some_and(|&b| b != 0);
                    fields.next();
                }
                let mut max_path_len = -1;
                if let Some(length) = fields.peek().filter(|f| f.tag == 0x02) {
                    max_path_len = small_int(length.content)?;
                }
                self.basic_constraints_valid = true;
                self.is_ca = is_ca;
                self.max_path_len = max_path_len;
                self.max_path_len_zero = max_path_len == 0;
                Some(true)
            }
            [2, 5, 29, 17] => {
                self.subject_alt_names(value)?;
                let empty = self.dns_names.is_empty()
                    && self.email_addresses.is_empty()
                    && self.ip_addresses.is_empty()
                    && self.uris.is_empty();
                Some(!empty)
            }
            [2, 5, 29, 14] => {
                self.subject_key_id = Some(single(value, 0x04)?.content.to_vec());
                Some(true)
            }
            [2, 5, 29, 35] => {
                let fields = children(single(value, 0x30)?.content)?;
                if let Some(key_id) = fields.first().filter(|f| f.tag == 0x80) {
                    self.authority_key_id = Some(key_id.content.to_vec());
                }
                Some(true)
            }
            [2, 5, 29, 37] => {
                for usage in children(single(value, 0x30)?.content)? {
                    let usage_oid = object_identifier(usage.content)?;
                    match ext_key_usage(&usage_oid) {
                        Some(known) => self.ext_key_usage.push(Value::from(known)),
                        None => self.unknown_ext_key_usage.push(oid_json(&usage_oid)),
                    }
                }
                Some(true)
            }
            [2, 5, 29, 31] => {
                for point in children(single(value, 0x30)?.content)? {
                    let fields = children(point.content)?;
                    let Some(name) = fields.first().filter(|f| f.tag == 0xa0) else {
                        continue;
                    };
                    let Some(full) = children(name.content)?.into_iter().find(|f| f.tag == 0xa0)
                    else {
                        continue;
                    };
                    for general in children(full.content)? {
                        if general.tag != 0x86 {
                            break;
                        }
                        self.crl_distribution_points
                            .push(String::from_utf8_lossy(general.content).into_owned());
                    }
                }
                Some(true)
            }
            [2, 5, 29, 32] => {
                for policy in children(single(value, 0x30)?.content)? {
                    let fields = children(policy.content)?;
                    let id = fields.first().filter(|f| f.tag == 0x06)?;
                    let oid = object_identifier(id.content)?;
                    self.policy_identifiers.push(oid_json(&oid));
                    self.policies.push(Value::String(dotted(&oid)));
                }
                Some(true)
            }
            [2, 5, 29, 33] => {
                for mapping in children(single(value, 0x30)?.content)? {
                    let pair = children(mapping.content)?;
                    let [issuer, subject] = pair.as_slice() else {
                        return None;
                    };
                    self.policy_mappings.push(object(vec![
                        (
                            "IssuerDomainPolicy",
                            Value::String(dotted(&object_identifier(issuer.content)?)),
                        ),
                        (
                            "SubjectDomainPolicy",
                            Value::String(dotted(&object_identifier(subject.content)?)),
                        ),
                    ]));
                }
                Some(true)
            }
            [2, 5, 29, 36] => {
                for field in children(single(value, 0x30)?.content)? {
                    match field.tag {
                        0x80 => self.require_explicit_policy = Some(small_int(field.content)?),
                        0x81 => self.inhibit_policy_mapping = Some(small_int(field.content)?),
                        _ => return None,
                    }
                }
                Some(true)
            }
            [2, 5, 29, 54] => {
                self.inhibit_any_policy = Some(small_int(single(value, 0x02)?.content)?);
                Some(true)
            }
            // Name constraints: Go handles them; not decoded here.
            [2, 5, 29, 30] => Some(true),
            [2, 5, 29, _] => Some(false),
            [1, 3, 6, 1, 5, 5, 7, 1, 1] => {
                for access in children(single(value, 0x30)?.content)? {
                    let fields = children(access.content)?;
                    let [method, location] = fields.as_slice() else {
                        continue;
                    };
                    if location.tag != 0x86 {
                        continue;
                    }
                    let url = String::from_utf8_lossy(location.content).into_owned();
                    match object_identifier(method.content)?.as_slice() {
                        [1, 3, 6, 1, 5, 5, 7, 48, 1] => self.ocsp_server.push(url),
                        [1, 3, 6, 1, 5, 5, 7, 48, 2] => self.issuing_certificate_url.push(url),
                        _ => {}
                    }
                }
                Some(true)
            }
            _ => Some(false),
        }
    }

    fn subject_alt_names(&mut self, value: &[u8]) -> Option<()> {
        for general in children(single(value, 0x30)?.content)? {
            let text = || String::from_utf8_lossy(general.content).into_owned();
            match general.tag {
                0x81 => self.email_addresses.push(text()),
                0x82 => self.dns_names.push(text()),
                0x86 => self.uris.push(url_json(&text())),
                0x87 => self.ip_addresses.push(ip_text(general.content)?),
                _ => {}
            }
        }
        Some(())
    }
}

fn ext_key_usage(oid: &[u64]) -> Option<i64> {
    Some(match oid {
        [2, 5, 29, 37, 0] => 0,
        [1, 3, 6, 1, 5, 5, 7, 3, n @ 1..=9] => i64::try_from(*n).ok()?,
        [1, 3, 6, 1, 4, 1, 311, 10, 3, 3] => 10,
        [2, 16, 840, 1, 113_730, 4, 1] => 11,
        [1, 3, 6, 1, 4, 1, 311, 2, 1, 22] => 12,
        [1, 3, 6, 1, 4, 1, 311, 61, 1, 1] => 13,
        _ => return None,
    })
}

/// `net.IP.String()` of 4 or 16 bytes.
fn ip_text(bytes: &[u8]) -> Option<String> {
    match bytes.len() {
        4 => {
            let octets: [u8; 4] = bytes.try_into().ok()?;
            Some(std::net::Ipv4Addr::from(octets).to_string())
        }
        16 => {
            let octets: [u8; 16] = bytes.try_into().ok()?;
            let ip = std::net::Ipv6Addr::from(octets);
            Some(match ip.to_ipv4_mapped() {
                Some(v4) => v4.to_string(),
                None => ip.to_string(),
            })
        }
        _ => None,
    }
}

/// A `*url.URL` as `encoding/json` writes it.
fn url_json(text: &str) -> Value {
    let (rest, fragment) = text.split_once('#').unwrap_or((text, ""));
    let (rest, query) = rest.split_once('?').unwrap_or((rest, ""));
    let (scheme, rest) = match rest.split_once(':') {
        Some((scheme, after))
            if scheme
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic()) =>
        {
            (scheme, after)
        }
        _ => ("", rest),
    };
    let (host, path, opaque) = match rest.strip_prefix("//") {
        Some(authority_and_path) => {
            let (authority, path) = match authority_and_path.find('/') {
                Some(i) => (
                    authority_and_path.get(..i).unwrap_or_default(),
                    authority_and_path.get(i..).unwrap_or_default(),
                ),
                None => (authority_and_path, ""),
            };
            let host = authority.rsplit('@').next().unwrap_or_default();
            (host, path, "")
        }
        None if !scheme.is_empty() && !rest.starts_with('/') => ("", "", rest),
        None => ("", rest, ""),
    };
    object(vec![
        ("ForceQuery", Value::Bool(false)),
        ("Fragment", Value::String(fragment.to_string())),
        ("Host", Value::String(host.to_string())),
        ("OmitHost", Value::Bool(false)),
        ("Opaque", Value::String(opaque.to_string())),
        ("Path", Value::String(path.to_string())),
        ("RawFragment", Value::String(String::new())),
        ("RawPath", Value::String(String::new())),
        ("RawQuery", Value::String(query.to_string())),
        ("Scheme", Value::String(scheme.to_string())),
        ("User", Value::Null),
    ])
}

// ---------------------------------------------------------------------------
// Certificates and requests

fn certificate(der: &[u8]) -> Result<Value, String> {
    let malformed = || "x509: malformed certificate".to_string();
    let (cert, trailing) = read(der).ok_or_else(malformed)?;
    if cert.tag != 0x30 {
        return Err(malformed());
    }
    if !trailing.is_empty() {
        return Err("x509: trailing data".into());
    }
    let parts = children(cert.content).ok_or_else(malformed)?;
    let [tbs, signature_algorithm_tlv, signature] = parts.as_slice() else {
        return Err(malformed());
    };
    if tbs.tag != 0x30 || signature.tag != 0x03 {
        return Err(malformed());
    }
    let fields = children(tbs.content).ok_or_else(malformed)?;
    let mut fields = fields.iter().peekable();
    let mut version = 0;
    if let Some(explicit) = fields.peek().filter(|f| f.tag == 0xa0) {
        version = single(explicit.content, 0x02)
            .and_then(|v| small_int(v.content))
            .ok_or_else(malformed)?;
        fields.next();
    }
    if !(0..=2).contains(&version) {
        return Err("x509: invalid version".into());
    }
    let mut next = |tag: u8| {
        fields
            .next()
            .filter(|f| f.tag == tag)
            .copied()
            .ok_or_else(malformed)
    };
    let serial = next(0x02)?;
    let _inner_signature_algorithm = next(0x30)?;
    let issuer = next(0x30)?;
    let validity = next(0x30)?;
    let subject = next(0x30)?;
    let spki = next(0x30)?;
    let mut extensions = Extensions::new();
    for field in fields {
        if field.tag == 0xa3 {
            let sequence = single(field.content, 0x30).ok_or_else(malformed)?;
            extensions.read_all(&sequence).ok_or_else(malformed)?;
        }
    }
    let times = children(validity.content).ok_or_else(malformed)?;
    let [not_before, not_after] = times.as_slice() else {
        return Err(malformed());
    };
    let not_before = asn1_time(not_before).ok_or_else(malformed)?;
    let not_after = asn1_time(not_after).ok_or_else(malformed)?;
    let (algorithm, key) = public_key(&spki)?;
    let issuer_name = name(&issuer).ok_or_else(malformed)?;
    let subject_name = name(&subject).ok_or_else(malformed)?;
    let e = extensions;
    Ok(object(vec![
        (
            "AuthorityKeyId",
            e.authority_key_id.as_deref().map_or(Value::Null, base64),
        ),
        (
            "BasicConstraintsValid",
            Value::Bool(e.basic_constraints_valid),
        ),
        ("CRLDistributionPoints", strings(e.crl_distribution_points)),
        ("DNSNames", strings(e.dns_names)),
        ("EmailAddresses", strings(e.email_addresses)),
        ("ExcludedDNSDomains", Value::Null),
        ("ExcludedEmailAddresses", Value::Null),
        ("ExcludedIPRanges", Value::Null),
        ("ExcludedURIDomains", Value::Null),
        ("ExtKeyUsage", values(e.ext_key_usage)),
        ("Extensions", values(e.list)),
        ("ExtraExtensions", Value::Null),
        ("IPAddresses", strings(e.ip_addresses)),
        (
            "InhibitAnyPolicy",
            Value::from(e.inhibit_any_policy.unwrap_or_default()),
        ),
        (
            "InhibitAnyPolicyZero",
            Value::Bool(e.inhibit_any_policy == Some(0)),
        ),
        (
            "InhibitPolicyMapping",
            Value::from(e.inhibit_policy_mapping.unwrap_or_default()),
        ),
        (
            "InhibitPolicyMappingZero",
            Value::Bool(e.inhibit_policy_mapping == Some(0)),
        ),
        ("IsCA", Value::Bool(e.is_ca)),
        ("Issuer", issuer_name),
        ("IssuingCertificateURL", strings(e.issuing_certificate_url)),
        ("KeyUsage", Value::from(e.key_usage)),
        ("MaxPathLen", Value::from(e.max_path_len)),
        ("MaxPathLenZero", Value::Bool(e.max_path_len_zero)),
        ("NotAfter", Value::String(not_after)),
        ("NotBefore", Value::String(not_before)),
        ("OCSPServer", strings(e.ocsp_server)),
        ("PermittedDNSDomains", Value::Null),
        ("PermittedDNSDomainsCritical", Value::Bool(false)),
        ("PermittedEmailAddresses", Value::Null),
        ("PermittedIPRanges", Value::Null),
        ("PermittedURIDomains", Value::Null),
        ("Policies", values(e.policies)),
        ("PolicyIdentifiers", values(e.policy_identifiers)),
        ("PolicyMappings", values(e.policy_mappings)),
        ("PublicKey", key),
        ("PublicKeyAlgorithm", Value::from(algorithm)),
        ("Raw", base64(cert.raw)),
        ("RawIssuer", base64(issuer.raw)),
        ("RawSubject", base64(subject.raw)),
        ("RawSubjectPublicKeyInfo", base64(spki.raw)),
        ("RawTBSCertificate", base64(tbs.raw)),
        (
            "RequireExplicitPolicy",
            Value::from(e.require_explicit_policy.unwrap_or_default()),
        ),
        (
            "RequireExplicitPolicyZero",
            Value::Bool(e.require_explicit_policy == Some(0)),
        ),
        ("SerialNumber", serial_number(serial.content)),
        (
            "Signature",
            base64(signature.content.get(1..).unwrap_or_default()),
        ),
        (
            "SignatureAlgorithm",
            Value::from(signature_algorithm(signature_algorithm_tlv)),
        ),
        ("Subject", subject_name),
        (
            "SubjectKeyId",
            e.subject_key_id.as_deref().map_or(Value::Null, base64),
        ),
        ("URIs", values(e.uris)),
        ("UnhandledCriticalExtensions", values(e.unhandled_critical)),
        ("UnknownExtKeyUsage", values(e.unknown_ext_key_usage)),
        ("Version", Value::from(version + 1)),
    ]))
}

fn certificate_request(der: &[u8]) -> Result<Value, String> {
    let malformed = || "x509: malformed certificate request".to_string();
    let (request, _) = read(der).ok_or_else(malformed)?;
    if request.tag != 0x30 {
        return Err(malformed());
    }
    let parts = children(request.content).ok_or_else(malformed)?;
    let [info, signature_algorithm_tlv, signature] = parts.as_slice() else {
        return Err(malformed());
    };
    if info.tag != 0x30 || signature.tag != 0x03 {
        return Err(malformed());
    }
    let fields = children(info.content).ok_or_else(malformed)?;
    let [version, subject, spki, rest @ ..] = fields.as_slice() else {
        return Err(malformed());
    };
    if version.tag != 0x02 || subject.tag != 0x30 || spki.tag != 0x30 {
        return Err(malformed());
    }
    let version = small_int(version.content).ok_or_else(malformed)?;
    let mut extensions = Extensions::new();
    if let Some(attributes) = rest.iter().find(|f| f.tag == 0xa0) {
        for attribute in children(attributes.content).ok_or_else(malformed)? {
            let Some(parts) = children(attribute.content) else {
                continue;
            };
            let [kind, values_set] = parts.as_slice() else {
                continue;
            };
            if object_identifier(kind.content).as_deref()
                != Some([1, 2, 840, 113_549, 1, 9, 14].as_slice())
            {
                continue;
            }
            let Some(first) = children(values_set.content).and_then(|v| v.into_iter().next())
            else {
                continue;
            };
            extensions.read_all(&first).ok_or_else(malformed)?;
        }
    }
    let (algorithm, key) = public_key(spki)?;
    let subject_name = name(subject).ok_or_else(malformed)?;
    let e = extensions;
    Ok(object(vec![
        ("Attributes", Value::Null),
        ("DNSNames", strings(e.dns_names)),
        ("EmailAddresses", strings(e.email_addresses)),
        ("ExtraExtensions", Value::Null),
        ("Extensions", values(e.list)),
        ("IPAddresses", strings(e.ip_addresses)),
        ("PublicKey", key),
        ("PublicKeyAlgorithm", Value::from(algorithm)),
        ("Raw", base64(request.raw)),
        ("RawSubject", base64(subject.raw)),
        ("RawSubjectPublicKeyInfo", base64(spki.raw)),
        ("RawTBSCertificateRequest", base64(info.raw)),
        (
            "Signature",
            base64(signature.content.get(1..).unwrap_or_default()),
        ),
        (
            "SignatureAlgorithm",
            Value::from(signature_algorithm(signature_algorithm_tlv)),
        ),
        ("Subject", subject_name),
        ("URIs", values(e.uris)),
        ("Version", Value::from(version)),
    ]))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::useless_vec)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Kyverno's own test certificate (`*.kyverno.svc`, serial 0).
    const KYVERNO_SVC: &str = r#"-----BEGIN CERTIFICATE-----
MIIC7TCCAdWgAwIBAgIBADANBgkqhkiG9w0BAQsFADAYMRYwFAYDVQQDDA0qLmt5
dmVybm8uc3ZjMB4XDTIyMDExMTEzMjY0M1oXDTIzMDExMTE0MjY0M1owGDEWMBQG
A1UEAwwNKi5reXZlcm5vLnN2YzCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoC
ggEBAMsAz85+yino+MmdKsVtHwNi3oAVjumzXHiLfUJK7xi5KU8B7goPHF/VCe/V
7Y2c4afyfgY2ePw4LxSDkCYNgYwqjSwGIbcsqv5ZRazBdDxR09ri6PknNyBVGLi5
RlPXIrGQ3psNuf55qwxJxLO31qCZuvktKY5YvuIR4JPmBhuSFXOnn0ZiQw8uxMcQ
0QA2lz+PxWCVNk9q+31H5DH1oYZDLfU3mijIOA+AJGZbBb+ZwBmpVL0+2TXLxE74
WowdKEV+WTsKojNTd0VwcuRKRKR/6ynXAAis21y1X7Ui9FJE6mDIylUD40WXOKGJ
1lYY41kRnYhVhvXYN9JtNYdY3HsCAwEAAaNCMEAwDgYDVR0PAQH/BAQDAgKkMA8G
A1UdEwEB/wQFMAMBAf8wHQYDVR0OBBYEFOnlASVD9fu3TAjptlW/gAXA4ql+MA0G
CSqGSIb3DQEBCwUAA4IBAQCIpyRiChxp97crKfQ24Jt7z8P+AGpLf3sX4eL87ESa
7QRoVJtXLmaut1pUEoYLQruKmh/0YFtZG9WxVgY6iuKbWnu7bOeMB/Ir+V/yrX3R
+XvZOsuXiJnEbJiBW6lJzLldoW4f/71H+j1WD4tHpqmdMxq/sLqXfPIuc0/m0yFC
n+ADBWGGB8Nn66vxtv+cT6p+RIVotXPQWbMilWp6pd5wSuB68FqrDwtYLNJtPwFs
9MPVkuaJdYZ0eWd/rMcKD94Hgf89gvA0+qzMVFf+3BemXskjQRYy6CKsqoyC6jX4
nhYjumAP/7psbzITsnpHtfCEEU+2JZwgM406aiMcsgLb
-----END CERTIFICATE-----"#;
    /// Kyverno's second test certificate (`C=xx, ST=x, …`).
    const XX: &str = r#"-----BEGIN CERTIFICATE-----
MIIDSjCCAjKgAwIBAgIUWxmj40l+TDVJq98Xy7c6Leo3np8wDQYJKoZIhvcNAQEL
BQAwPTELMAkGA1UEBhMCeHgxCjAIBgNVBAgTAXgxCjAIBgNVBAcTAXgxCjAIBgNV
BAoTAXgxCjAIBgNVBAsTAXgwHhcNMTgwMjAyMTIzODAwWhcNMjMwMjAxMTIzODAw
WjA9MQswCQYDVQQGEwJ4eDEKMAgGA1UECBMBeDEKMAgGA1UEBxMBeDEKMAgGA1UE
ChMBeDEKMAgGA1UECxMBeDCCASIwDQYJKoZIhvcNAQEBBQADggEPADCCAQoCggEB
ANHkqOmVf23KMXdaZU2eFUx1h4wb09JINBB8x/HL7UE0KFJcnOoVnNQB0gRukUop
iYCzrzMFyGWWmB/pAEKool+ZiI2uMy6mcYBDtOi4pOm7U0TQQMV6L/5Yfi65xRz3
RTMd/tYAoFi4aCZbJAGjxU6UWNYDzTy8E/cP6ZnlNbVHRiA6/wHsoWcXtWTXYP5y
n9cf7EWQi1hOBM4BWmOIyB1f6LEgQipZWMOMPPHO3hsuSBn0rk7jovSt5XTlbgRr
txqAJiNjJUykWzIF+lLnZCioippGv5vkdGvE83JoACXvZTUwzA+MLu49fkw3bweq
kbhrer8kacjfGlw3aJN37eECAwEAAaNCMEAwDgYDVR0PAQH/BAQDAgEGMA8GA1Ud
EwEB/wQFMAMBAf8wHQYDVR0OBBYEFKXcb52bv6oqnD+D9fTNFHZL8IWxMA0GCSqG
SIb3DQEBCwUAA4IBAQADvKvv3ym0XAYwKxPLLl3Lc6sJYHDbTN0donduG7PXeb1d
huukJ2lfufUYp2IGSAxuLecTYeeByOVp1gaMb5LsIGt2BVDmlMMkiH29LUHsvbyi
85CpJo7A5RJG6AWW2VBCiDjz5v8JFM6pMkBRFfXH+pwIge65CE+MTSQcfb1/aIIo
Q226P7E/3uUGX4k4pDXG/O7GNvykF40v1DB5y7DDBTQ4JWiJfyGkT69TmdOGLFAm
jwxUjWyvEey4qJex/EGEm5RQcMv9iy7tba1wK7sykNGn5uDELGPGIIEAa5rIHm1F
UFOZZVoELaasWS559wy8og39Eq21dDMynb8Bndn/
-----END CERTIFICATE-----"#;
    /// openssl: SANs, EKU, critical key usage, serial 0x0102.
    const WITH_SANS: &str = r#"-----BEGIN CERTIFICATE-----
MIICwDCCAimgAwIBAgICAQIwDQYJKoZIhvcNAQELBQAwOTEYMBYGA1UEAwwPd2Vi
LmV4YW1wbGUuY29tMQ0wCwYDVQQKDARBY21lMQ4wDAYDVQQKDAVBY21lMjAeFw0y
NjExMjExNTE1MDlaFw0yNjEyMjExNTE1MDlaMDkxGDAWBgNVBAMMD3dlYi5leGFt
cGxlLmNvbTENMAsGA1UECgwEQWNtZTEOMAwGA1UECgwFQWNtZTIwgZ8wDQYJKoZI
hvcNAQEBBQADgY0AMIGJAoGBAMWzpuDRDTGIWzgGRORLvzMW0B41+dZcY7CvZGLj
vEeEwkOYbe33BFL9v4csCohY4XHnd76K3SN74oycOQhcyOladG6NHnAEhGbll9gj
LOVBDmyGKYCvZhQOHkwczX+SbHaV71sxs6KxXmZF1lI0OhqClOWonvjren9nZk+e
KuADAgMBAAGjgdYwgdMwHQYDVR0OBBYEFJLSXklPnriPMjWtAE/PQQTAxJFIMB8G
A1UdIwQYMBaAFJLSXklPnriPMjWtAE/PQQTAxJFIMA8GA1UdEwEB/wQFMAMBAf8w
UQYDVR0RBEowSIIPd2ViLmV4YW1wbGUuY29tgg93d3cuZXhhbXBsZS5jb22HBAoA
AAGBBWFAYi5jhhdodHRwczovL3guZXhhbXBsZS9wP3E9MTAdBgNVHSUEFjAUBggr
BgEFBQcDAQYIKwYBBQUHAwIwDgYDVR0PAQH/BAQDAgWgMA0GCSqGSIb3DQEBCwUA
A4GBABK3ZnmmkCH146vFtgcVax2RIrCyEBrmtA1eqYn4Cb/dlfAriyXUn6P54ZaV
9oNzodN8SUB5sVRadi2yXxbZydeHiD5hKSxx0F/6P1e9vD2doWY1PYOuALhu+sKc
X/A8aBmdjfKf9+FktkYP/EWDJfJ2tTtyA+KXns1k9ew/jrNG
-----END CERTIFICATE-----"#;
    const REQUEST: &str = r#"-----BEGIN CERTIFICATE REQUEST-----
MIIBhjCB8AIBADAaMRgwFgYDVQQDDA9yZXEuZXhhbXBsZS5jb20wgZ8wDQYJKoZI
hvcNAQEBBQADgY0AMIGJAoGBAMWzpuDRDTGIWzgGRORLvzMW0B41+dZcY7CvZGLj
vEeEwkOYbe33BFL9v4csCohY4XHnd76K3SN74oycOQhcyOladG6NHnAEhGbll9gj
LOVBDmyGKYCvZhQOHkwczX+SbHaV71sxs6KxXmZF1lI0OhqClOWonvjren9nZk+e
KuADAgMBAAGgLTArBgkqhkiG9w0BCQ4xHjAcMBoGA1UdEQQTMBGCD3JlcS5leGFt
cGxlLmNvbTANBgkqhkiG9w0BAQsFAAOBgQBcgpO5XvB0GmAiKBrEJhmaxv1j4dpF
tkxiKbd16EW0mVrAaRbBhihye3onU7REclr10RqiZ1JgxSpqKpBL3SxjP9MZAM3T
JYzJkmt3Msv/VLa/tLwD0Z9QSUqq65aH8AY9irm2OeIwBuOTd9dcZTwOE4jHFbzW
uNfeBVGw3AytSg==
-----END CERTIFICATE REQUEST-----"#;
    const EC: &str = r#"-----BEGIN CERTIFICATE-----
MIIBbjCCARWgAwIBAgIUUz4UBgl5GIvee1UTb1IfRCc6AVcwCgYIKoZIzj0EAwIw
DTELMAkGA1UEAwwCZWMwHhcNMjYxMTIxMTUxNTA5WhcNMjYxMTIyMTUxNTA5WjAN
MQswCQYDVQQDDAJlYzBZMBMGByqGSM49AgEGCCqGSM49AwEHA0IABGDnPlkfIiRH
gB3bLfLml/4u1j4HJ3U8OpDC31fsTYM4a9TzPpEXZF8oZ//bPaZYgHycP+ZK+wlH
3IYTdlFT8wajUzBRMB0GA1UdDgQWBBSVhqm53/sUXW8gXuzKliSW2xpbcDAfBgNV
HSMEGDAWgBSVhqm53/sUXW8gXuzKliSW2xpbcDAPBgNVHRMBAf8EBTADAQH/MAoG
CCqGSM49BAMCA0cAMEQCIF5N7qlIDLBWC+Yz4tg+D9k3Wosw8Y+Co2iONgX+JE4M
AiB/onvDWSAaj6tergEj4rGgb43/ccVuWaO5806C0UmZxA==
-----END CERTIFICATE-----"#;

    #[test]
    fn kyverno_test_certificate_svc() {
        let v = decode(KYVERNO_SVC).unwrap();
        assert_eq!(
            v["PublicKey"],
            json!({"E": 65537, "N": "25626776194299809103943925293022478779550111351090439168995035251396620593900589237452364135475983088162735720467798166985191488213022186077349821145857402701723499012699772423162550319145896535355752944351742979794245171828792388153331005254201525593934122190716637483002316913539755904599370968007653484768793099970920881706651907943367212661888776583428009130496820305182341702970575924538413569026902195901329094514102681440057150490032724791460671006772434362132998853498175356133386237155854830546292463707783883111067332118558636600306550854546869660051077649500890548685566726464348535891964886136890236394619"})
        );
        assert_eq!(v["SerialNumber"], json!(0));
        assert_eq!(v["Version"], json!(3));
        assert_eq!(v["SignatureAlgorithm"], json!(4));
        assert_eq!(v["PublicKeyAlgorithm"], json!(1));
        assert_eq!(v["NotBefore"], json!("2022-01-11T13:26:43Z"));
        assert_eq!(v["NotAfter"], json!("2023-01-11T14:26:43Z"));
        assert_eq!(v["KeyUsage"], json!(37));
        assert_eq!(v["IsCA"], json!(true));
        assert_eq!(v["BasicConstraintsValid"], json!(true));
        assert_eq!(v["MaxPathLen"], json!(-1));
        assert_eq!(v["MaxPathLenZero"], json!(false));
        assert_eq!(v["SubjectKeyId"], json!("6eUBJUP1+7dMCOm2Vb+ABcDiqX4="));
        assert_eq!(v["AuthorityKeyId"], Value::Null);
        assert_eq!(
            v["RawSubject"],
            json!("MBgxFjAUBgNVBAMMDSoua3l2ZXJuby5zdmM=")
        );
        assert_eq!(
            v["RawIssuer"],
            json!("MBgxFjAUBgNVBAMMDSoua3l2ZXJuby5zdmM=")
        );
        assert!(v["Raw"]
            .as_str()
            .unwrap()
            .starts_with("MIIC7TCCAdWgAwIBAgIBADANBgkqhkiG9w0BAQsF"));
        assert!(v["Signature"]
            .as_str()
            .unwrap()
            .starts_with("iKckYgocafe3Kyn0NuCbe8/D/gBqS3"));
        assert_eq!(
            v["Extensions"],
            json!([
                {"Critical": true, "Id": [2, 5, 29, 15], "Value": "AwICpA=="},
                {"Critical": true, "Id": [2, 5, 29, 19], "Value": "MAMBAf8="},
                {"Critical": false, "Id": [2, 5, 29, 14], "Value": "BBTp5QElQ/X7t0wI6bZVv4AFwOKpfg=="}
            ])
        );
        let svc_name = json!({
            "CommonName": "*.kyverno.svc", "Country": null, "ExtraNames": null, "Locality": null,
            "Names": [{"Type": [2, 5, 4, 3], "Value": "*.kyverno.svc"}],
            "Organization": null, "OrganizationalUnit": null, "PostalCode": null, "Province": null,
            "SerialNumber": "", "StreetAddress": null
        });
        assert_eq!(v["Subject"], svc_name);
        assert_eq!(v["Issuer"], svc_name);
        for null_field in [
            "DNSNames",
            "EmailAddresses",
            "IPAddresses",
            "URIs",
            "ExtKeyUsage",
            "UnhandledCriticalExtensions",
            "PolicyIdentifiers",
            "Policies",
            "PolicyMappings",
            "CRLDistributionPoints",
            "OCSPServer",
        ] {
            assert_eq!(v[null_field], Value::Null, "{null_field}");
        }
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted);
        assert_eq!(keys.len(), 52);
        for zero in [
            "InhibitAnyPolicy",
            "InhibitPolicyMapping",
            "RequireExplicitPolicy",
        ] {
            assert_eq!(v[zero], 0, "{zero}");
            assert_eq!(v[format!("{zero}Zero")], false, "{zero}Zero");
        }
    }

    #[test]
    fn kyverno_test_certificate_xx() {
        let v = decode(XX).unwrap();
        assert_eq!(v["PublicKey"]["N"], json!("26496562094779491076553211809422098021949952483515703281510813808490953126660362388109632773224118754702902108388229193869554055094778177099185065933983949693842239539154549752097759985799130804083586220803335221114269832081649712810220640441076536231140807229028981655981643835428138719795509959624793308640711388215921808921435203036357847686892066058381787405708754578605922703585581205444932036212009496723589206933777338978604488048677611723712498345752655171502746679687404543368933776929978831813434358099337112479727796701588293884856604804625411358577626503349165930794262171211166398339413648296787152727521"));
        assert_eq!(
            v["SerialNumber"],
            json!("520089955419326249038486015063014459614455897759"
                .parse::<f64>()
                .unwrap())
        );
        assert_eq!(v["KeyUsage"], json!(96));
        assert_eq!(v["NotBefore"], json!("2018-02-02T12:38:00Z"));
        assert_eq!(v["NotAfter"], json!("2023-02-01T12:38:00Z"));
        assert_eq!(v["SubjectKeyId"], json!("pdxvnZu/qiqcP4P19M0UdkvwhbE="));
        assert_eq!(
            v["Subject"],
            json!({
                "CommonName": "", "Country": ["xx"], "ExtraNames": null, "Locality": ["x"],
                "Names": [
                    {"Type": [2, 5, 4, 6], "Value": "xx"}, {"Type": [2, 5, 4, 8], "Value": "x"},
                    {"Type": [2, 5, 4, 7], "Value": "x"}, {"Type": [2, 5, 4, 10], "Value": "x"},
                    {"Type": [2, 5, 4, 11], "Value": "x"}
                ],
                "Organization": ["x"], "OrganizationalUnit": ["x"], "PostalCode": null, "Province": ["x"],
                "SerialNumber": "", "StreetAddress": null
            })
        );
        assert_eq!(
            v["RawSubject"],
            json!("MD0xCzAJBgNVBAYTAnh4MQowCAYDVQQIEwF4MQowCAYDVQQHEwF4MQowCAYDVQQKEwF4MQowCAYDVQQLEwF4")
        );
    }

    #[test]
    fn base64_wrapped_certificate_decodes_like_the_plain_one() {
        let wrapped = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUM3VENDQWRXZ0F3SUJBZ0lCQURBTkJna3Foa2lHOXcwQkFRc0ZBREFZTVJZd0ZBWURWUVFEREEwcUxtdDUKZG1WeWJtOHVjM1pqTUI0WERUSXlNREV4TVRFek1qWTBNMW9YRFRJek1ERXhNVEUwTWpZME0xb3dHREVXTUJRRwpBMVVFQXd3TktpNXJlWFpsY201dkxuTjJZekNDQVNJd0RRWUpLb1pJaHZjTkFRRUJCUUFEZ2dFUEFEQ0NBUW9DCmdnRUJBTXNBejg1K3lpbm8rTW1kS3NWdEh3Tmkzb0FWanVtelhIaUxmVUpLN3hpNUtVOEI3Z29QSEYvVkNlL1YKN1kyYzRhZnlmZ1kyZVB3NEx4U0RrQ1lOZ1l3cWpTd0dJYmNzcXY1WlJhekJkRHhSMDlyaTZQa25OeUJWR0xpNQpSbFBYSXJHUTNwc051ZjU1cXd4SnhMTzMxcUNadXZrdEtZNVl2dUlSNEpQbUJodVNGWE9ubjBaaVF3OHV4TWNRCjBRQTJseitQeFdDVk5rOXErMzFINURIMW9ZWkRMZlUzbWlqSU9BK0FKR1piQmIrWndCbXBWTDArMlRYTHhFNzQKV293ZEtFVitXVHNLb2pOVGQwVndjdVJLUktSLzZ5blhBQWlzMjF5MVg3VWk5RkpFNm1ESXlsVUQ0MFdYT0tHSgoxbFlZNDFrUm5ZaFZodlhZTjlKdE5ZZFkzSHNDQXdFQUFhTkNNRUF3RGdZRFZSMFBBUUgvQkFRREFnS2tNQThHCkExVWRFd0VCL3dRRk1BTUJBZjh3SFFZRFZSME9CQllFRk9ubEFTVkQ5ZnUzVEFqcHRsVy9nQVhBNHFsK01BMEcKQ1NxR1NJYjNEUUVCQ3dVQUE0SUJBUUNJcHlSaUNoeHA5N2NyS2ZRMjRKdDd6OFArQUdwTGYzc1g0ZUw4N0VTYQo3UVJvVkp0WExtYXV0MXBVRW9ZTFFydUttaC8wWUZ0Wkc5V3hWZ1k2aXVLYldudTdiT2VNQi9JcitWL3lyWDNSCitYdlpPc3VYaUpuRWJKaUJXNmxKekxsZG9XNGYvNzFIK2oxV0Q0dEhwcW1kTXhxL3NMcVhmUEl1YzAvbTB5RkMKbitBREJXR0dCOE5uNjZ2eHR2K2NUNnArUklWb3RYUFFXYk1pbFdwNnBkNXdTdUI2OEZxckR3dFlMTkp0UHdGcwo5TVBWa3VhSmRZWjBlV2Qvck1jS0Q5NEhnZjg5Z3ZBMCtxek1WRmYrM0JlbVhza2pRUll5NkNLc3FveUM2alg0Cm5oWWp1bUFQLzdwc2J6SVRzbnBIdGZDRUVVKzJKWndnTTQwNmFpTWNzZ0xiCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K";
        let pem = crate::arguments::go_base64_decode(wrapped.as_bytes()).unwrap();
        let pem = String::from_utf8(pem).unwrap();
        assert_eq!(decode(&pem).unwrap(), decode(KYVERNO_SVC).unwrap());
    }

    #[test]
    fn extensions_are_decoded() {
        let v = decode(WITH_SANS).unwrap();
        assert_eq!(v["SerialNumber"], json!(258));
        assert_eq!(v["DNSNames"], json!(["web.example.com", "www.example.com"]));
        assert_eq!(v["IPAddresses"], json!(["10.0.0.1"]));
        assert_eq!(v["EmailAddresses"], json!(["a@b.c"]));
        assert_eq!(v["URIs"][0]["Scheme"], json!("https"));
        assert_eq!(v["URIs"][0]["Host"], json!("x.example"));
        assert_eq!(v["URIs"][0]["Path"], json!("/p"));
        assert_eq!(v["URIs"][0]["RawQuery"], json!("q=1"));
        assert_eq!(v["ExtKeyUsage"], json!([1, 2]));
        assert_eq!(v["KeyUsage"], json!(5));
        assert_eq!(v["IsCA"], json!(true));
        assert_eq!(v["Subject"]["Organization"], json!(["Acme", "Acme2"]));
        assert_eq!(v["Subject"]["CommonName"], json!("web.example.com"));
        assert_eq!(v["AuthorityKeyId"], v["SubjectKeyId"]);
        assert_eq!(v["UnhandledCriticalExtensions"], Value::Null);
        assert_eq!(v["Extensions"].as_array().unwrap().len(), 6);
    }

    #[test]
    fn certificate_request() {
        let v = decode(REQUEST).unwrap();
        assert_eq!(v["Version"], json!(0));
        assert_eq!(v["Subject"]["CommonName"], json!("req.example.com"));
        assert_eq!(v["DNSNames"], json!(["req.example.com"]));
        assert_eq!(v["PublicKeyAlgorithm"], json!(1));
        assert_eq!(v["SignatureAlgorithm"], json!(4));
        assert_eq!(v["Extensions"][0]["Id"], json!([2, 5, 29, 17]));
        assert!(v["PublicKey"]["N"]
            .as_str()
            .unwrap()
            .starts_with("13883090073702669810"));
    }

    #[test]
    fn errors() {
        let cases = [
            ("not_pem", "xyz", "failed to decode PEM block"),
            ("ec_key", EC, "certificate should use rsa algorithm"),
            (
                "other_block",
                "-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n",
                "PEM block neither contains a CERTIFICATE or CERTIFICATE REQUEST",
            ),
            (
                "bad_der",
                "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
                "x509: malformed certificate",
            ),
            (
                "end_type_differs",
                "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERT-----\n",
                "failed to decode PEM block",
            ),
        ];
        for (case, input, want) in cases {
            assert_eq!(decode(input), Err(want.to_string()), "{case}");
        }
    }

    #[test]
    fn big_integers_in_decimal() {
        assert_eq!(big_decimal(&[]), "0");
        assert_eq!(big_decimal(&[0, 0]), "0");
        assert_eq!(big_decimal(&[1, 0]), "256");
        assert_eq!(big_decimal(&[0x3b, 0x9a, 0xca, 0x00]), "1000000000");
        assert_eq!(big_decimal(&[0xff; 9]), "4722366482869645213695");
        assert_eq!(serial_number(&[0xff]), json!(-1));
    }
}
