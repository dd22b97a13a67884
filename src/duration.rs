//! Go durations (`300ms`, `1h30m`, `-1.5h`) as `time.ParseDuration` reads them.

const UNITS: &[(&str, f64)] = &[
    ("ns", 1.0),
    ("us", 1e3),
    ("\u{b5}s", 1e3),
    ("\u{3bc}s", 1e3),
    ("ms", 1e6),
    ("s", 1e9),
    ("m", 60e9),
    ("h", 3600e9),
];

/// Nanoseconds, or `None` when `text` is not a Go duration. Like Go, a bare
/// `0` is a duration but any other number needs a unit.
pub fn parse(text: &str) -> Option<i128> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, text.get(1..)?),
        Some(b'+') => (false, text.get(1..)?),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(0);
    }
    if rest.is_empty() {
        return None;
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let number_len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = rest.get(..number_len)?;
        if number.is_empty() || number == "." || number.matches('.').count() > 1 {
            return None;
        }
        let value: f64 = number.parse().ok()?;
        rest = rest.get(number_len..)?;
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = rest.get(..unit_len)?;
        let scale = UNITS.iter().find(|(u, _)| *u == unit)?.1;
        total += value * scale;
        rest = rest.get(unit_len..)?;
    }
    // Go rejects durations beyond ~292 years.
    if total > i64::MAX as f64 {
        return None;
    }
    let nanos = total.round() as i128;
    Some(if negative { -nanos } else { nanos })
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
