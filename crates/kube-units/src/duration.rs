//! Go durations (`300ms`, `1h30m`, `-1.5h`) as `time.ParseDuration` reads them.

/// Nanoseconds, or `None` when `text` is not a Go duration. Like Go, a bare
/// `0` is a duration but any other number needs a unit.
pub fn parse(text: &str) -> Option<i128> {
    // Most strings compared are not durations: turn them away before Go's
    // error text is built.
    let body = text.strip_prefix(['-', '+']).unwrap_or(text);
    let first = *body.as_bytes().first()?;
    if !(first.is_ascii_digit() || first == b'.') {
        return None;
    }
    parse_go(text).ok().map(i128::from)
}

/// Go's `time.ParseDuration`, integer-exact, with Go's error text
/// (`time: invalid duration "1x"`, `time: unknown unit "d" in duration "1d"`,
/// `time: missing unit in duration "5"`).
pub fn parse_go(text: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", go_time_quote(text));
    let mut s: &[u8] = text.as_bytes();
    let mut negative = false;
    if let Some(&c) = s.first() {
        if c == b'-' || c == b'+' {
            negative = c == b'-';
            s = s.get(1..).unwrap_or_default();
        }
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    const LIMIT: u64 = 1 << 63;
    let mut total: u64 = 0;
    while let Some(&first) = s.first() {
        if first != b'.' && !first.is_ascii_digit() {
            return Err(invalid());
        }
        let before = s.len();
        let (whole, rest) = leading_int(s).ok_or_else(invalid)?;
        s = rest;
        let pre = before != s.len();
        let (mut fraction, mut scale, mut post) = (0u64, 1f64, false);
        if s.first() == Some(&b'.') {
            s = s.get(1..).unwrap_or_default();
            let before = s.len();
            let (f, sc, rest) = leading_fraction(s);
            fraction = f;
            scale = sc;
            s = rest;
            post = before != s.len();
        }
        if !pre && !post {
            return Err(invalid());
        }
        let unit_len = s
            .iter()
            .position(|&c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return Err(format!(
                "time: missing unit in duration {}",
                go_time_quote(text)
            ));
        }
        let unit_text = s.get(..unit_len).unwrap_or_default();
        s = s.get(unit_len..).unwrap_or_default();
        let unit = GO_UNITS
            .iter()
            .find(|(name, _)| name.as_bytes() == unit_text)
            .map(|&(_, nanos)| nanos)
            .ok_or_else(|| {
                format!(
                    "time: unknown unit {} in duration {}",
                    go_time_quote(&String::from_utf8_lossy(unit_text)),
                    go_time_quote(text)
                )
            })?;
        if whole > LIMIT / unit {
            return Err(invalid());
        }
        let mut value = whole.checked_mul(unit).ok_or_else(invalid)?;
        if fraction > 0 {
            // Go: v += uint64(float64(f) * (float64(unit) / scale))
            #[allow(
                clippy::cast_precision_loss,
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss
            )]
            let extra = (fraction as f64 * (unit as f64 / scale)) as u64;
            value = value.checked_add(extra).ok_or_else(invalid)?;
            if value > LIMIT {
                return Err(invalid());
            }
        }
        total = total.checked_add(value).ok_or_else(invalid)?;
        if total > LIMIT {
            return Err(invalid());
        }
    }
    if negative {
        // -Duration(d): 2^63 becomes i64::MIN.
        #[allow(clippy::cast_possible_wrap)]
        return Ok((total as i64).wrapping_neg());
    }
    i64::try_from(total).map_err(|_| invalid())
}

const GO_UNITS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("\u{b5}s", 1_000),
    ("\u{3bc}s", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
];

/// Go's `leadingInt`: the leading digits, `None` past 2^63.
pub fn leading_int(s: &[u8]) -> Option<(u64, &[u8])> {
    let mut x: u64 = 0;
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        if x > (1u64 << 63) / 10 {
            return None;
        }
        x = x * 10 + u64::from(c - b'0');
        if x > 1u64 << 63 {
            return None;
        }
        i += 1;
    }
    Some((x, s.get(i..).unwrap_or_default()))
}

/// Go's `leadingFraction`: digits after the point, and 10^(digits kept).
fn leading_fraction(s: &[u8]) -> (u64, f64, &[u8]) {
    let mut x: u64 = 0;
    let mut scale = 1f64;
    let mut overflow = false;
    let mut i = 0;
    while let Some(&c) = s.get(i) {
        if !c.is_ascii_digit() {
            break;
        }
        i += 1;
        if overflow {
            continue;
        }
        if x > ((1u64 << 63) - 1) / 10 {
            overflow = true;
            continue;
        }
        let y = x * 10 + u64::from(c - b'0');
        if y > 1u64 << 63 {
            overflow = true;
            continue;
        }
        x = y;
        scale *= 10.0;
    }
    (x, scale, s.get(i..).unwrap_or_default())
}

/// The `quote` of Go's time package: bytes outside printable ASCII as
/// `\xNN`, `"` and `\` escaped.
pub fn go_time_quote(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for &b in text.as_bytes() {
        if !(b' '..0x80).contains(&b) {
            out.push_str(&format!("\\x{b:02x}"));
        } else {
            if b == b'"' || b == b'\\' {
                out.push('\\');
            }
            out.push(char::from(b));
        }
    }
    out.push('"');
    out
}

/// Go's `Duration.String()`: `1h30m0s`, `1.5s`, `300ms`, `2µs`, `0s`.
pub fn format(nanos: i128) -> String {
    let sign = if nanos < 0 { "-" } else { "" };
    let u = nanos.unsigned_abs();
    if u < 1_000_000_000 {
        let (unit, precision) = match u {
            0 => return "0s".into(),
            1..=999 => ("ns", 0),
            1_000..=999_999 => ("\u{b5}s", 3),
            _ => ("ms", 6),
        };
        let (fraction, whole) = fraction_digits(u, precision);
        return format!("{sign}{whole}{fraction}{unit}");
    }
    let (fraction, seconds) = fraction_digits(u, 9);
    let mut text = String::from(sign);
    let minutes = seconds / 60;
    if minutes > 0 {
        let hours = minutes / 60;
        if hours > 0 {
            text.push_str(&format!("{hours}h"));
        }
        text.push_str(&format!("{}m", minutes % 60));
    }
    text.push_str(&format!("{}{fraction}s", seconds % 60));
    text
}

/// `.ddd` (trailing zeros dropped, empty when zero) of the last `precision`
/// digits of `v`, and the rest of `v`.
fn fraction_digits(v: u128, precision: u32) -> (String, u128) {
    let scale = 10u128.pow(precision);
    let (whole, fraction) = (v / scale, v % scale);
    if fraction == 0 {
        return (String::new(), whole);
    }
    let width = precision as usize;
    let digits = format!("{fraction:0width$}");
    (format!(".{}", digits.trim_end_matches('0')), whole)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_duration_cases() {
        let cases = [
            ("zero_without_unit", "0", Some(0)),
            ("number_needs_unit", "5", None),
            ("hours", "12h", Some(12 * 3_600_000_000_000)),
            ("compound", "1h30m", Some(5_400_000_000_000)),
            ("fraction", "1.5h", Some(5_400_000_000_000)),
            ("millis", "300ms", Some(300_000_000)),
            ("micro_sign", "2\u{b5}s", Some(2_000)),
            ("negative", "-1s", Some(-1_000_000_000)),
            ("unknown_unit", "1d", None),
            ("empty", "", None),
            ("only_sign", "-", None),
            ("quantity_is_not_duration", "1Gi", None),
            ("trailing_garbage", "1h ", None),
        ];
        for (name, text, want) in cases {
            assert_eq!(parse(text), want, "{name}");
        }
    }
}

#[cfg(test)]
mod go_tests {
    use super::*;

    #[test]
    fn go_duration_strings() {
        let cases = [
            ("zero", 0, "0s"),
            ("nanos", 5, "5ns"),
            ("micros", 1_500, "1.5\u{b5}s"),
            ("millis", 300_000_000, "300ms"),
            ("seconds", 1_500_000_000, "1.5s"),
            ("minute", 60_000_000_000, "1m0s"),
            ("hour_and_half", 5_400_000_000_000, "1h30m0s"),
            ("negative", -1_000_000_000, "-1s"),
            ("days_stay_hours", 86_400_000_000_000, "24h0m0s"),
            (
                "min_int64",
                i128::from(i64::MIN),
                "-2562047h47m16.854775808s",
            ),
        ];
        for (case, nanos, want) in cases {
            assert_eq!(format(nanos), want, "{case}");
        }
    }

    #[test]
    fn go_parse_duration_with_errors() {
        let cases = [
            ("zero", "0", Ok(0)),
            ("signed_zero", "-0", Ok(0)),
            ("fraction_exact", "1.5h", Ok(5_400_000_000_000)),
            ("tenth", "0.1s", Ok(100_000_000)),
            ("compound", "1h30m", Ok(5_400_000_000_000)),
            ("micro_sign", "2\u{b5}s", Ok(2_000)),
            ("max", "9223372036854775807ns", Ok(i64::MAX)),
            ("min", "-9223372036854775808ns", Ok(i64::MIN)),
            (
                "overflow",
                "9223372036854775808ns",
                Err("time: invalid duration \"9223372036854775808ns\""),
            ),
            (
                "missing_unit",
                "5",
                Err("time: missing unit in duration \"5\""),
            ),
            (
                "unknown_unit",
                "1d",
                Err("time: unknown unit \"d\" in duration \"1d\""),
            ),
            ("empty", "", Err("time: invalid duration \"\"")),
            ("dot_only", ".s", Err("time: invalid duration \".s\"")),
            (
                "quantity",
                "1Gi",
                Err("time: unknown unit \"Gi\" in duration \"1Gi\""),
            ),
        ];
        for (case, text, want) in cases {
            assert_eq!(parse_go(text), want.map_err(String::from), "{case}");
        }
    }
}
