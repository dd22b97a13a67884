//! Kubernetes' URL library (`url()`, `isURL()`, `getHost()`, …).

use std::rc::Rc;

use kube_units::quote::go_quote;

use crate::budget::Budget;
use crate::error::EvalError;
use crate::func::Func;
use crate::url::{escaped_path, parse, parse_request_uri, split_host_port, unescape, Mode};
use crate::value::{no_overload, Key, Map, Str, Value};

pub(crate) fn call<'a>(
    func: Func,
    args: &[Value<'a>],
    budget: &mut Budget,
) -> Result<Value<'a>, EvalError> {
    let fail = || no_overload(func.name(), args);
    match (func, args) {
        (Func::Url, [Value::String(s)]) => {
            budget.charge_len(s.len())?;
            parse(s).map(|u| Value::Url(Rc::new(u))).map_err(|e| {
                EvalError::msg(format!(
                    "URL parse error during conversion from string: parse {}: {e}",
                    go_quote(s)
                ))
            })
        }
        (Func::IsUrl, [Value::String(s)]) => {
            budget.charge_len(s.len())?;
            Ok(Value::Bool(parse_request_uri(s).is_ok()))
        }
        (Func::GetScheme, [Value::Url(u)]) => Ok(Value::string(u.scheme.clone())),
        (Func::GetHost, [Value::Url(u)]) => Ok(Value::string(u.host.clone())),
        (Func::GetHostname, [Value::Url(u)]) => {
            Ok(Value::string(split_host_port(&u.host).0.into()))
        }
        (Func::GetPort, [Value::Url(u)]) => Ok(Value::string(split_host_port(&u.host).1.into())),
        (Func::GetEscapedPath, [Value::Url(u)]) => Ok(Value::string(escaped_path(u))),
        (Func::GetQuery, [Value::Url(u)]) => {
            budget.charge_len(u.raw_query.len())?;
            query(&u.raw_query)
        }
        _ => Err(fail()),
    }
}

/// Go's `URL.Query()`: pairs that do not decode are skipped.
fn query<'a>(raw: &str) -> Result<Value<'a>, EvalError> {
    let mut entries: Vec<(String, Vec<Value<'a>>)> = Vec::new();
    for pair in raw.split('&') {
        if pair.is_empty() || pair.contains(';') {
            continue;
        }
        let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
        let (Ok(k), Ok(v)) = (unescape(k, Mode::Query), unescape(v, Mode::Query)) else {
            continue;
        };
        match entries.iter_mut().find(|(key, _)| *key == k) {
            Some((_, values)) => values.push(Value::string(v)),
            None => entries.push((k, vec![Value::string(v)])),
        }
    }
    let entries = entries
        .into_iter()
        .map(|(k, v)| (Key::String(Str::from(k)), Value::list(v)))
        .collect();
    Map::new(entries)
        .map(|m| Value::Map(Rc::new(m)))
        .map_err(|_| EvalError::msg("duplicate query key"))
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    #[test]
    fn url_library_follows_go_net_url() {
        let cases = [
            ("scheme", "url('https://example.com/').getScheme()", "https"),
            ("no_scheme", "url('/path').getScheme()", ""),
            ("host_with_port", "url('https://example.com:80/').getHost()", "example.com:80"),
            ("host", "url('https://example.com/').getHost()", "example.com"),
            ("ipv6_host", "url('https://[::1]:80/').getHost()", "[::1]:80"),
            ("no_host", "url('/path').getHost()", ""),
            ("hostname", "url('https://example.com:80/').getHostname()", "example.com"),
            ("ipv6_hostname", "url('https://[::1]:80/').getHostname()", "::1"),
            ("port", "url('https://example.com:80/').getPort()", "80"),
            ("no_port", "url('https://example.com/').getPort()", ""),
            ("path", "url('https://example.com/path').getEscapedPath()", "/path"),
            ("path_escaped", "url('https://example.com/path with spaces/').getEscapedPath()", "/path%20with%20spaces/"),
            ("path_kept_encoded", "url('https://example.com/a%2Fb').getEscapedPath()", "/a%2Fb"),
            ("empty_path", "url('https://example.com').getEscapedPath()", ""),
            ("query", "url('https://example.com/path?k1=a&k2=b&k2=c').getQuery()", "{\"k1\": [\"a\"], \"k2\": [\"b\", \"c\"]}"),
            ("query_unescaped", "url('https://example.com/path?key with spaces=value+x%21').getQuery()", "{\"key with spaces\": [\"value x!\"]}"),
            ("empty_query", "url('https://example.com/path?').getQuery()", "{}"),
            ("fragment_not_in_query", "url('https://e.com/p?q=v#frag').getQuery()", "{\"q\": [\"v\"]}"),
            ("user_info", "url('https://user:pass@example.com:80/path?query=val#fragment').getHostname()", "example.com"),
            ("is_url", "isURL('https://user:pass@example.com:80/path?query=val#fragment')", "true"),
            ("absolute_path_is_url", "isURL('/absolute-path')", "true"),
            ("bad_port", "isURL('https://a:b:c/')", "false"),
            ("relative_is_not_url", "isURL('../relative-path')", "false"),
            ("bad_escape", "isURL('https://e.com/%zz')", "false"),
            ("relative_error", "url('../relative-path')", "error: URL parse error during conversion from string: parse \"../relative-path\": invalid URI for request"),
            ("equality", "url('https://e.com/a') == url('https://e.com/a')", "true"),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }
}
