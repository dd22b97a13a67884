//! URLs as Kubernetes' URL library parses them: what Go's
//! `url.ParseRequestURI` accepts (an absolute URI or an absolute path),
//! split into parts as Go's `url.Parse` splits them. The functions are in
//! `library::url`.

use kube_units::quote::{go_quote, go_quote_bytes};

/// A parsed URL.
#[derive(Debug, Clone, PartialEq)]
pub struct Url {
    pub(crate) raw: String,
    pub(crate) scheme: String,
    /// `host[:port]`, brackets kept for IPv6.
    pub(crate) host: String,
    /// The path, unescaped.
    pub(crate) path: String,
    /// The path as written, when it differs from the default escaping.
    pub(crate) raw_path: String,
    pub(crate) raw_query: String,
}

impl Url {
    /// The URL as it was written.
    pub fn as_str(&self) -> &str {
        &self.raw
    }
}

/// `url.ParseRequestURI` to validate, then `url.Parse` for the parts.
pub(crate) fn parse(s: &str) -> Result<Url, String> {
    parse_request_uri(s)?;
    let without_fragment = s.split_once('#').map_or(s, |(u, _)| u);
    let mut url = parse_go(without_fragment, false)?;
    url.raw = s.to_string();
    Ok(url)
}

pub(crate) fn parse_request_uri(s: &str) -> Result<Url, String> {
    parse_go(s, true)
}

/// Go's `url.parse`.
fn parse_go(raw: &str, via_request: bool) -> Result<Url, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let mut url = Url {
        raw: raw.to_string(),
        scheme: String::new(),
        host: String::new(),
        path: String::new(),
        raw_path: String::new(),
        raw_query: String::new(),
    };
    if raw == "*" {
        url.path = "*".into();
        return Ok(url);
    }
    let (scheme, rest) = scheme(raw)?;
    url.scheme = scheme.to_ascii_lowercase();
    let mut rest = rest;
    if rest.ends_with('?') && rest.matches('?').count() == 1 {
        rest = rest.get(..rest.len() - 1).unwrap_or("");
    } else if let Some((r, q)) = rest.split_once('?') {
        rest = r;
        url.raw_query = q.to_string();
    }
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            // Opaque (`mailto:x`): no host, no path.
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        let segment = rest.split('/').next().unwrap_or("");
        if segment.contains(':') {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    if (!url.scheme.is_empty() || (!via_request && !rest.starts_with("///")))
        && rest.starts_with("//")
    {
        let after = rest.get(2..).unwrap_or("");
        let (authority, path) = match after.find('/') {
            Some(i) => (after.get(..i).unwrap_or(""), after.get(i..).unwrap_or("")),
            None => (after, ""),
        };
        url.host = parse_authority(&url.scheme, authority)?;
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    if escape_path(&url.path) != rest {
        url.raw_path = rest.to_string();
    }
    Ok(url)
}

/// Go's `getScheme`.
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => {
                return Ok((raw.get(..i).unwrap_or(""), raw.get(i + 1..).unwrap_or("")));
            }
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

/// Go's `parseAuthority`: the host is checked first, then the userinfo.
fn parse_authority(scheme: &str, authority: &str) -> Result<String, String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (
            Some(authority.get(..i).unwrap_or("")),
            authority.get(i + 1..).unwrap_or(""),
        ),
        None => (None, authority),
    };
    let host = parse_host(scheme, host)?;
    if let Some(userinfo) = userinfo {
        if !userinfo.bytes().all(valid_userinfo_byte) {
            return Err("net/url: invalid userinfo".into());
        }
        let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
        unescape(user, Mode::UserInfo)?;
        unescape(password, Mode::UserInfo)?;
    }
    Ok(host)
}

/// RFC 3986's unreserved characters and sub-delimiters, which Go leaves
/// unescaped in both userinfo and hosts.
fn unreserved_or_sub_delim(c: u8) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'-' | b'.'
                | b'_'
                | b'~'
                | b'!'
                | b'$'
                | b'&'
                | b'\''
                | b'('
                | b')'
                | b'*'
                | b'+'
                | b','
                | b';'
                | b'='
        )
}

/// Go's `validUserinfo`.
fn valid_userinfo_byte(c: u8) -> bool {
    unreserved_or_sub_delim(c) || matches!(c, b':' | b'%' | b'@')
}

fn valid_optional_port(port: &str) -> bool {
    match port.strip_prefix(':') {
        Some(digits) => digits.bytes().all(|b| b.is_ascii_digit()),
        None => port.is_empty(),
    }
}

fn invalid_port(port: &str) -> String {
    format!("invalid port {} after host", go_quote(port))
}

/// Go 1.26's `parseHost`: a bracketed IP literal (an IPv6 address with an
/// optional `%25` zone) and port, or a name and port; for `http` and
/// `https` the port starts at the first colon.
fn parse_host(scheme: &str, host: &str) -> Result<String, String> {
    match host.rfind('[') {
        Some(i) if i > 0 => return Err("invalid IP-literal".into()),
        Some(_) => {
            let Some(close) = host.rfind(']') else {
                return Err("missing ']' in host".into());
            };
            let port = host.get(close + 1..).unwrap_or("");
            if !valid_optional_port(port) {
                return Err(invalid_port(port));
            }
            let inside = host.get(1..close).unwrap_or("");
            let address = match inside.find("%25") {
                Some(zone) => {
                    let address = unescape(inside.get(..zone).unwrap_or(""), Mode::Host)?;
                    let zone = unescape(inside.get(zone..).unwrap_or(""), Mode::Zone)?;
                    format!("{address}{zone}")
                }
                None => unescape(inside, Mode::Host)?,
            };
            // `netip.ParseAddr`; its finer error wording (which part of the
            // address is wrong) is not repeated.
            let (without_zone, zone) = address.split_once('%').unwrap_or((&address, "-"));
            let invalid_host =
                |why: &str| format!("invalid host: ParseAddr({}): {why}", go_quote(&address));
            return match without_zone.parse::<std::net::IpAddr>() {
                Ok(std::net::IpAddr::V6(_)) if zone.is_empty() => {
                    Err(invalid_host("zone must be a non-empty string"))
                }
                Ok(std::net::IpAddr::V6(_)) => Ok(host.to_string()),
                Ok(_) => Err("invalid IP-literal".into()),
                Err(_) => Err(invalid_host("unable to parse IP")),
            };
        }
        None => {}
    }
    if let Some(first) = host.find(':') {
        let at = if matches!(scheme, "http" | "https") {
            first
        } else {
            host.rfind(':').unwrap_or(first)
        };
        let port = host.get(at..).unwrap_or("");
        if !valid_optional_port(port) {
            return Err(invalid_port(port));
        }
    }
    unescape(host, Mode::Host)
}

/// Go's `splitHostPort`: host without brackets, and port.
pub(crate) fn split_host_port(host_port: &str) -> (&str, &str) {
    let (mut host, mut port) = (host_port, "");
    if let Some(i) = host_port.rfind(':') {
        let candidate = host_port.get(i..).unwrap_or("");
        if valid_optional_port(candidate) {
            host = host_port.get(..i).unwrap_or("");
            port = candidate.get(1..).unwrap_or("");
        }
    }
    if let Some(inner) = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')) {
        host = inner;
    }
    (host, port)
}

fn hex_value(c: u8) -> Option<u8> {
    char::from(c)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Percent-decoding; `plus` turns `+` into a space (query components).
/// Which part of a URL `unescape` reads, as Go's `encoding` modes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Mode {
    Path,
    /// A query component: `+` is a space.
    Query,
    UserInfo,
    /// A host: escapes only for non-ASCII bytes (and `%25`), and only the
    /// bytes a host may hold.
    Host,
    /// An IPv6 zone: escapes only for bytes a host may hold.
    Zone,
}

/// Go's `unescape`, with its errors.
pub(crate) fn unescape(s: &str, mode: Mode) -> Result<String, String> {
    let b = s.as_bytes();
    let hosty = matches!(mode, Mode::Host | Mode::Zone);
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while let Some(&c) = b.get(i) {
        match c {
            b'%' => {
                let pair = (
                    b.get(i + 1).and_then(|&h| hex_value(h)),
                    b.get(i + 2).and_then(|&l| hex_value(l)),
                );
                let escape = b.get(i..(i + 3).min(b.len())).unwrap_or(b"%");
                let bad = || format!("invalid URL escape {}", go_quote_bytes(escape));
                let (Some(h), Some(l)) = pair else {
                    return Err(bad());
                };
                let value = h * 16 + l;
                let percent = escape == b"%25";
                if mode == Mode::Host && h < 8 && !percent {
                    return Err(bad());
                }
                if mode == Mode::Zone && !percent && value != b' ' && !host_byte(value) {
                    return Err(bad());
                }
                out.push(value);
                i += 3;
            }
            b'+' if mode == Mode::Query => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                if hosty && c < 0x80 && !host_byte(c) {
                    return Err(format!(
                        "invalid character {} in host name",
                        go_quote(&char::from(c).to_string())
                    ));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The bytes Go's `shouldEscape(c, encodeHost)` lets a host hold as they
/// are.
fn host_byte(c: u8) -> bool {
    unreserved_or_sub_delim(c) || c >= 0x80 || matches!(c, b':' | b'[' | b']' | b'<' | b'>' | b'"')
}

/// Go's `shouldEscape(c, encodePath)`.
fn path_should_escape(c: u8) -> bool {
    !(c.is_ascii_alphanumeric()
        || matches!(
            c,
            b'-' | b'_'
                | b'.'
                | b'~'
                | b'$'
                | b'&'
                | b'+'
                | b','
                | b'/'
                | b':'
                | b';'
                | b'='
                | b'@'
        ))
}

fn escape_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for &c in path.as_bytes() {
        if path_should_escape(c) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(char::from(c));
        }
    }
    out
}

/// Go's `URL.EscapedPath`.
pub(crate) fn escaped_path(u: &Url) -> String {
    if !u.raw_path.is_empty() {
        let valid = u.raw_path.bytes().all(|c| {
            matches!(
                c,
                b'!' | b'$'
                    | b'&'
                    | b'\''
                    | b'('
                    | b')'
                    | b'*'
                    | b'+'
                    | b','
                    | b';'
                    | b'='
                    | b':'
                    | b'@'
                    | b'['
                    | b']'
                    | b'%'
            ) || !path_should_escape(c)
        });
        if valid && unescape(&u.raw_path, Mode::Path).is_ok_and(|p| p == u.path) {
            return u.raw_path.clone();
        }
    }
    if u.path == "*" {
        return "*".into();
    }
    escape_path(&u.path)
}
