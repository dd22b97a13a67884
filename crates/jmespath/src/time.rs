//! Kyverno's `time_*` functions (`pkg/engine/jmespath/time.go`): Go's
//! `time.Parse` with Go layouts (`2006-01-02T15:04:05Z07:00`,
//! `Mon Jan _2 15:04:05 MST 2006`, …), results in Go's RFC 3339 form
//! (no fractional seconds; `Z` for a zero offset) and durations in Go's
//! `Duration.String()` form. The local time zone is taken to be UTC, as it
//! is in Kyverno's container image.

use std::time::{SystemTime, UNIX_EPOCH};

/// Hours, minutes and seconds of a numeric zone, and its length.
type ZoneParts<'a> = (&'a [u8], &'a [u8], &'a [u8], usize);

use serde_json::Value;

use crate::arguments::{go_parse_int, string_arg, FunctionError};
use kube_units::duration;

/// `time.RFC3339`.
const RFC3339: &str = "2006-01-02T15:04:05Z07:00";
/// Seconds from Go's zero time (0001-01-01 UTC) to the Unix epoch.
const UNIX_TO_INTERNAL: i128 = 62_135_596_800;
const NANOS: i128 = 1_000_000_000;

/// An instant with the zone offset it is shown in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct GoTime {
    /// Seconds since the Unix epoch.
    secs: i128,
    /// 0 ≤ nanos < 1e9.
    nanos: i128,
    /// Seconds east of UTC.
    offset: i64,
}

impl GoTime {
    /// A time from its wall clock in the zone `offset` (seconds east).
    pub(crate) fn from_clock(
        date: (i64, i64, i64),
        clock: (i64, i64, i64),
        nanos: i64,
        offset: i64,
    ) -> Self {
        let (year, month, day) = date;
        let (hour, minute, second) = clock;
        let local = days_from_civil(i128::from(year), i128::from(month), i128::from(day)) * 86_400
            + i128::from(hour) * 3600
            + i128::from(minute) * 60
            + i128::from(second);
        Self {
            secs: local - i128::from(offset),
            nanos: i128::from(nanos),
            offset,
        }
    }

    fn instant(&self) -> i128 {
        self.secs * NANOS + self.nanos
    }

    fn add(self, nanos: i128) -> Self {
        let total = self.instant() + nanos;
        Self {
            secs: total.div_euclid(NANOS),
            nanos: total.rem_euclid(NANOS),
            offset: self.offset,
        }
    }

    fn utc(self) -> Self {
        Self { offset: 0, ..self }
    }

    /// Year, month, day, hour, minute, second and weekday (0 = Sunday) of
    /// the wall clock.
    fn civil(&self) -> (i128, i128, i128, i128, i128, i128, i128) {
        let local = self.secs + i128::from(self.offset);
        let days = local.div_euclid(86_400);
        let second_of_day = local.rem_euclid(86_400);
        let (year, month, day) = civil_from_days(days);
        (
            year,
            month,
            day,
            second_of_day / 3600,
            second_of_day % 3600 / 60,
            second_of_day % 60,
            (days + 4).rem_euclid(7),
        )
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date.
fn days_from_civil(year: i128, month: i128, day: i128) -> i128 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year.rem_euclid(400);
    let shifted_month = if month > 2 { month - 3 } else { month + 9 };
    let day_of_year = (153 * shifted_month + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day number since 1970-01-01.
fn civil_from_days(days: i128) -> (i128, i128, i128) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let shifted_month = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * shifted_month + 2) / 5 + 1;
    let month = if shifted_month < 10 {
        shifted_month + 3
    } else {
        shifted_month - 9
    };
    let year = year_of_era + era * 400;
    (if month <= 2 { year + 1 } else { year }, month, day)
}

/// `t.Format(time.RFC3339)`, or `time.RFC3339Nano` (trailing zeros of the
/// fraction dropped) when `nano`.
pub(crate) fn format_time(t: &GoTime, nano: bool) -> String {
    let (year, month, day, hour, minute, second, _) = t.civil();
    let year = if year < 0 {
        format!("-{:04}", -year)
    } else {
        format!("{year:04}")
    };
    let mut out = format!("{year}-{month:02}-{day:02}T{hour:02}:{minute:02}:{second:02}");
    if nano && t.nanos != 0 {
        let fraction = format!("{:09}", t.nanos);
        out.push('.');
        out.push_str(fraction.trim_end_matches('0'));
    }
    if t.offset == 0 {
        out.push('Z');
    } else {
        let mut zone = t.offset / 60;
        if zone < 0 {
            out.push('-');
            zone = -zone;
        } else {
            out.push('+');
        }
        out.push_str(&format!("{:02}:{:02}", zone / 60, zone % 60));
    }
    out
}

fn now() -> GoTime {
    let nanos: i128 = match SystemTime::now().duration_since(UNIX_EPOCH) {
        Ok(d) => i128::try_from(d.as_nanos()).unwrap_or(0),
        Err(e) => -i128::try_from(e.duration().as_nanos()).unwrap_or(0),
    };
    GoTime {
        secs: 0,
        nanos: 0,
        offset: 0,
    }
    .add(nanos)
}

/// `t2.Sub(t1)`: nanoseconds, saturated to the range of a Go Duration.
fn sub(t2: &GoTime, t1: &GoTime) -> i128 {
    (t2.instant() - t1.instant()).clamp(i128::from(i64::MIN), i128::from(i64::MAX))
}

/// `time.Parse(time.RFC3339, text)`.
pub(crate) fn parse_rfc3339(text: &str) -> Result<GoTime, String> {
    parse_layout(RFC3339, text)
}

/// Kyverno's `getTimeArg`.
fn time_arg(name: &str, args: &[Value], index: usize) -> Result<GoTime, FunctionError> {
    parse_rfc3339(string_arg(name, args, index)?).map_err(FunctionError::new)
}

/// Kyverno's `getDurationArg`.
fn duration_arg(name: &str, args: &[Value], index: usize) -> Result<i64, FunctionError> {
    duration::parse_go(string_arg(name, args, index)?).map_err(FunctionError::new)
}

/// Runs the `time_*` function `name`.
pub(crate) fn call(name: &str, args: &[Value]) -> Result<Value, FunctionError> {
    let text = |s: String| Ok(Value::String(s));
    match name {
        "time_since" => {
            let layout = string_arg(name, args, 0)?;
            let start = string_arg(name, args, 1)?;
            let end = string_arg(name, args, 2)?;
            let parse = |value: &str| {
                let parsed = if layout.is_empty() {
                    parse_rfc3339(value)
                } else {
                    parse_layout(layout, value)
                };
                parsed.map_err(FunctionError::new)
            };
            let t1 = parse(start)?;
            let t2 = if end.is_empty() { now() } else { parse(end)? };
            text(duration::format(sub(&t2, &t1)))
        }
        "time_now" => text(format_time(&now(), false)),
        "time_now_utc" => text(format_time(&now().utc(), false)),
        "time_to_cron" => {
            let t = time_arg(name, args, 0)?;
            let (_, month, day, hour, minute, _, weekday) = t.civil();
            text(format!("{minute} {hour} {day} {month} {weekday}"))
        }
        "time_add" => {
            let t = time_arg(name, args, 0)?;
            let d = duration_arg(name, args, 1)?;
            text(format_time(&t.add(i128::from(d)), false))
        }
        "time_parse" => {
            let layout = string_arg(name, args, 0)?;
            let value = string_arg(name, args, 1)?;
            if go_parse_int(layout).is_ok() {
                // A number as the layout: the value is Unix seconds.
                let epoch = go_parse_int(value).map_err(FunctionError::new)?;
                let t = GoTime {
                    secs: i128::from(epoch),
                    nanos: 0,
                    offset: 0,
                };
                return text(format_time(&t, false));
            }
            let t = parse_layout(layout, value).map_err(FunctionError::new)?;
            text(format_time(&t, false))
        }
        "time_utc" => text(format_time(&time_arg(name, args, 0)?.utc(), false)),
        "time_diff" => {
            let t1 = time_arg(name, args, 0)?;
            let t2 = time_arg(name, args, 1)?;
            text(duration::format(sub(&t2, &t1)))
        }
        "time_before" => {
            let t1 = time_arg(name, args, 0)?;
            let t2 = time_arg(name, args, 1)?;
            Ok(Value::Bool(t1.instant() < t2.instant()))
        }
        "time_after" => {
            let t1 = time_arg(name, args, 0)?;
            let t2 = time_arg(name, args, 1)?;
            Ok(Value::Bool(t1.instant() > t2.instant()))
        }
        "time_between" => {
            let t = time_arg(name, args, 0)?;
            let start = time_arg(name, args, 1)?;
            let end = time_arg(name, args, 2)?;
            Ok(Value::Bool(
                t.instant() > start.instant() && t.instant() < end.instant(),
            ))
        }
        "time_truncate" => {
            let t = time_arg(name, args, 0)?;
            let d = i128::from(duration_arg(name, args, 1)?);
            if d <= 0 {
                return text(format_time(&t, false));
            }
            // Go truncates the absolute time since its zero time.
            let absolute = (t.secs + UNIX_TO_INTERNAL) * NANOS + t.nanos;
            text(format_time(&t.add(-absolute.rem_euclid(d)), false))
        }
        _ => Err(FunctionError::new(format!("unknown function: {name}()"))),
    }
}

// ---------------------------------------------------------------------------
// Go's time.Parse

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Std {
    LongMonth,
    Month,
    NumMonth,
    ZeroMonth,
    LongWeekDay,
    WeekDay,
    Day,
    UnderDay,
    ZeroDay,
    UnderYearDay,
    ZeroYearDay,
    Hour,
    Hour12,
    ZeroHour12,
    Minute,
    ZeroMinute,
    Second,
    ZeroSecond,
    LongYear,
    Year,
    UpperPm,
    LowerPm,
    Tz,
    Iso8601Tz,
    Iso8601SecondsTz,
    Iso8601ShortTz,
    Iso8601ColonTz,
    Iso8601ColonSecondsTz,
    NumTz,
    NumSecondsTz,
    NumShortTz,
    NumColonTz,
    NumColonSecondsTz,
    /// `.000`: exactly this many digits.
    FracSecond0(usize),
    /// `.999`: any number of digits, or none.
    FracSecond9,
}

const STD_0X: [Std; 6] = [
    Std::ZeroMonth,
    Std::ZeroDay,
    Std::ZeroHour12,
    Std::ZeroMinute,
    Std::ZeroSecond,
    Std::Year,
];

const SHORT_MONTHS: [&str; 12] = [
    "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
];
const LONG_MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const SHORT_DAYS: [&str; 7] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];
const LONG_DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];
/// Days of a non-leap year before month `m + 1` begins.
const DAYS_BEFORE: [i64; 13] = [0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334, 365];

/// Go's `nextStdChunk`: the length of the literal prefix, the layout
/// element after it (if any) and where the rest of the layout starts.
fn next_std_chunk(layout: &[u8]) -> (usize, Option<Std>, usize) {
    let at = |i: usize, pattern: &[u8]| layout.get(i..i + pattern.len()) == Some(pattern);
    let byte = |i: usize| layout.get(i).copied();
    let lower_at = |i: usize| byte(i).is_some_and(|c| c.is_ascii_lowercase());
    let mut i = 0;
    while let Some(c) = byte(i) {
        match c {
            b'J' if at(i, b"Jan") => {
                if at(i, b"January") {
                    return (i, Some(Std::LongMonth), i + 7);
                }
                if !lower_at(i + 3) {
                    return (i, Some(Std::Month), i + 3);
                }
            }
            b'M' => {
                if at(i, b"Mon") {
                    if at(i, b"Monday") {
                        return (i, Some(Std::LongWeekDay), i + 6);
                    }
                    if !lower_at(i + 3) {
                        return (i, Some(Std::WeekDay), i + 3);
                    }
                }
                if at(i, b"MST") {
                    return (i, Some(Std::Tz), i + 3);
                }
            }
            b'0' => {
                if let Some(d @ b'1'..=b'6') = byte(i + 1) {
                    if let Some(&std) = STD_0X.get(usize::from(d - b'1')) {
                        return (i, Some(std), i + 2);
                    }
                }
                if at(i + 1, b"02") {
                    return (i, Some(Std::ZeroYearDay), i + 3);
                }
            }
            b'1' => {
                if byte(i + 1) == Some(b'5') {
                    return (i, Some(Std::Hour), i + 2);
                }
                return (i, Some(Std::NumMonth), i + 1);
            }
            b'2' => {
                if at(i, b"2006") {
                    return (i, Some(Std::LongYear), i + 4);
                }
                return (i, Some(Std::Day), i + 1);
            }
            b'_' => {
                if byte(i + 1) == Some(b'2') {
                    // `_2006` is a literal `_` and then the year.
                    if at(i + 1, b"2006") {
                        return (i + 1, Some(Std::LongYear), i + 5);
                    }
                    return (i, Some(Std::UnderDay), i + 2);
                }
                if at(i + 1, b"_2") {
                    return (i, Some(Std::UnderYearDay), i + 3);
                }
            }
            b'3' => return (i, Some(Std::Hour12), i + 1),
            b'4' => return (i, Some(Std::Minute), i + 1),
            b'5' => return (i, Some(Std::Second), i + 1),
            b'P' if byte(i + 1) == Some(b'M') => {
                return (i, Some(Std::UpperPm), i + 2);
            }
            b'p' if byte(i + 1) == Some(b'm') => {
                return (i, Some(Std::LowerPm), i + 2);
            }
            b'-' => {
                let zones: [(&[u8], Std); 5] = [
                    (b"-070000", Std::NumSecondsTz),
                    (b"-07:00:00", Std::NumColonSecondsTz),
                    (b"-0700", Std::NumTz),
                    (b"-07:00", Std::NumColonTz),
                    (b"-07", Std::NumShortTz),
                ];
                for (pattern, std) in zones {
                    if at(i, pattern) {
                        return (i, Some(std), i + pattern.len());
                    }
                }
            }
            b'Z' => {
                let zones: [(&[u8], Std); 5] = [
                    (b"Z070000", Std::Iso8601SecondsTz),
                    (b"Z07:00:00", Std::Iso8601ColonSecondsTz),
                    (b"Z0700", Std::Iso8601Tz),
                    (b"Z07:00", Std::Iso8601ColonTz),
                    (b"Z07", Std::Iso8601ShortTz),
                ];
                for (pattern, std) in zones {
                    if at(i, pattern) {
                        return (i, Some(std), i + pattern.len());
                    }
                }
            }
            b'.' | b',' => {
                if let Some(digit @ (b'0' | b'9')) = byte(i + 1) {
                    let mut j = i + 1;
                    while byte(j) == Some(digit) {
                        j += 1;
                    }
                    if !byte(j).is_some_and(|d| d.is_ascii_digit()) {
                        let std = if digit == b'0' {
                            Std::FracSecond0(j - (i + 1))
                        } else {
                            Std::FracSecond9
                        };
                        return (i, Some(std), j);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    (layout.len(), None, layout.len())
}

/// The `quote` of Go's time package, on bytes.
fn quote(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() + 2);
    out.push('"');
    for &b in bytes {
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

/// `parsing time "v" as "layout": cannot parse "rest" as "element"`.
fn cannot_parse(layout: &str, value: &str, value_elem: &[u8], layout_elem: &[u8]) -> String {
    format!(
        "parsing time {} as {}: cannot parse {} as {}",
        quote(value.as_bytes()),
        quote(layout.as_bytes()),
        quote(value_elem),
        quote(layout_elem)
    )
}

/// `parsing time "v": message`.
fn parse_message(value: &str, message: &str) -> String {
    format!("parsing time {}{message}", quote(value.as_bytes()))
}

fn tail(bytes: &[u8], from: usize) -> &[u8] {
    bytes.get(from..).unwrap_or_default()
}

fn is_digit(bytes: &[u8], i: usize) -> bool {
    bytes.get(i).is_some_and(u8::is_ascii_digit)
}

fn cut_space(mut bytes: &[u8]) -> &[u8] {
    while bytes.first() == Some(&b' ') {
        bytes = tail(bytes, 1);
    }
    bytes
}

/// Go's `skip`: removes `prefix` from `value`, runs of spaces matching runs
/// of spaces; on failure, the value where it stopped.
fn skip<'a>(mut value: &'a [u8], mut prefix: &[u8]) -> Result<&'a [u8], &'a [u8]> {
    while let Some(&p) = prefix.first() {
        if p == b' ' {
            if value.first().is_some_and(|&c| c != b' ') {
                return Err(value);
            }
            prefix = cut_space(prefix);
            value = cut_space(value);
            continue;
        }
        if value.first() != Some(&p) {
            return Err(value);
        }
        prefix = tail(prefix, 1);
        value = tail(value, 1);
    }
    Ok(value)
}

/// Go's time `atoi`: an optional sign and digits, nothing else.
fn atoi(bytes: &[u8]) -> Option<i64> {
    let (negative, digits) = match bytes.first() {
        Some(b'-') => (true, tail(bytes, 1)),
        Some(b'+') => (false, tail(bytes, 1)),
        _ => (false, bytes),
    };
    let (x, rest) = kube_units::duration::leading_int(digits)?;
    if !rest.is_empty() {
        return None;
    }
    #[allow(clippy::cast_possible_wrap)]
    let x = x as i64;
    Some(if negative { x.wrapping_neg() } else { x })
}

/// Go's `getnum`: one or two digits (exactly two when `fixed`).
fn getnum(bytes: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    let first = i64::from(bytes.first().filter(|b| b.is_ascii_digit())? - b'0');
    match bytes.get(1).filter(|b| b.is_ascii_digit()) {
        Some(&second) => Some((first * 10 + i64::from(second - b'0'), tail(bytes, 2))),
        None if fixed => None,
        None => Some((first, tail(bytes, 1))),
    }
}

/// Go's `getnum3`: one to three digits (exactly three when `fixed`).
fn getnum3(bytes: &[u8], fixed: bool) -> Option<(i64, &[u8])> {
    let mut n = 0i64;
    let mut i = 0;
    while i < 3 && is_digit(bytes, i) {
        n = n * 10 + i64::from(bytes.get(i).copied().unwrap_or(b'0') - b'0');
        i += 1;
    }
    if i == 0 || (fixed && i != 3) {
        return None;
    }
    Some((n, tail(bytes, i)))
}

/// Go's `lookup`: a case-insensitive (ASCII) match of a name at the start.
fn lookup<'a>(table: &[&str], value: &'a [u8]) -> Option<(i64, &'a [u8])> {
    for (index, name) in table.iter().enumerate() {
        let name = name.as_bytes();
        let Some(candidate) = value.get(..name.len()) else {
            continue;
        };
        let equal = candidate.iter().zip(name).all(|(&a, &b)| {
            a == b || {
                let (la, lb) = (a | 0x20, b | 0x20);
                la == lb && la.is_ascii_lowercase()
            }
        });
        if equal {
            return Some((i64::try_from(index).unwrap_or(0), tail(value, name.len())));
        }
    }
    None
}

fn comma_or_period(b: Option<&u8>) -> bool {
    matches!(b, Some(b'.' | b','))
}

/// Go's `parseNanoseconds`: the fraction `value[1..n]` (at most 9 digits
/// kept) in nanoseconds, or a range error.
fn parse_nanoseconds(value: &[u8], n: usize) -> Option<(i64, Option<&'static str>)> {
    if !comma_or_period(value.first()) {
        return None;
    }
    let n = n.min(10);
    let ns = atoi(value.get(1..n)?)?;
    if ns < 0 {
        return Some((ns, Some("fractional second")));
    }
    let mut ns = ns;
    for _ in n..10 {
        ns = ns.saturating_mul(10);
    }
    Some((ns, None))
}

/// Go's `parseSignedOffset`: the length of `+hh` / `-h` (hours up to 23).
fn parse_signed_offset(value: &[u8]) -> usize {
    if !matches!(value.first(), Some(b'+' | b'-')) {
        return 0;
    }
    let digits = tail(value, 1);
    match kube_units::duration::leading_int(digits) {
        Some((x, rest)) if rest.len() != digits.len() && x <= 23 => value.len() - rest.len(),
        _ => 0,
    }
}

/// Go's `parseTimeZone`: the length of a zone abbreviation at the start.
fn parse_time_zone(value: &[u8]) -> Option<usize> {
    if value.len() < 3 {
        return None;
    }
    if matches!(value.get(..4), Some(b"ChST" | b"MeST")) {
        return Some(4);
    }
    if value.get(..3) == Some(b"GMT".as_slice()) {
        let rest = tail(value, 3);
        return Some(if rest.is_empty() {
            3
        } else {
            3 + parse_signed_offset(rest)
        });
    }
    if matches!(value.first(), Some(b'+' | b'-')) {
        let n = parse_signed_offset(value);
        return (n > 0).then_some(n);
    }
    let upper = value
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_uppercase())
        .count();
    match upper {
        3 => Some(3),
        4 if value.get(3) == Some(&b'T') || value.get(..4) == Some(b"WITA".as_slice()) => Some(4),
        5 if value.get(4) == Some(&b'T') => Some(5),
        _ => None,
    }
}

fn is_leap(year: i64) -> bool {
    year.rem_euclid(4) == 0 && (year.rem_euclid(100) != 0 || year.rem_euclid(400) == 0)
}

fn days_in(month: i64, year: i64) -> i64 {
    if month == 2 && is_leap(year) {
        return 29;
    }
    let index = usize::try_from(month).unwrap_or(0);
    match (
        DAYS_BEFORE.get(index),
        index.checked_sub(1).and_then(|i| DAYS_BEFORE.get(i)),
    ) {
        (Some(end), Some(start)) => end - start,
        _ => 0,
    }
}

/// Go's `time.Parse(layout, value)` with UTC as the local zone.
pub(crate) fn parse_layout(full_layout: &str, full_value: &str) -> Result<GoTime, String> {
    let mut layout = full_layout.as_bytes();
    let mut value = full_value.as_bytes();
    let mut range_error: Option<&'static str> = None;
    let (mut am, mut pm) = (false, false);
    let (mut year, mut month, mut day, mut year_day) = (0i64, -1i64, -1i64, -1i64);
    let (mut hour, mut minute, mut second, mut nanos) = (0i64, 0i64, 0i64, 0i64);
    let mut utc = false;
    let mut zone_offset: Option<i64> = None;
    let mut zone_name: Option<&[u8]> = None;
    loop {
        let (prefix_len, std, rest_start) = next_std_chunk(layout);
        let prefix = layout.get(..prefix_len).unwrap_or_default();
        let element = layout.get(prefix_len..rest_start).unwrap_or_default();
        value = match skip(value, prefix) {
            Ok(rest) => rest,
            Err(stopped) => return Err(cannot_parse(full_layout, full_value, stopped, prefix)),
        };
        let Some(std) = std else {
            if !value.is_empty() {
                return Err(parse_message(
                    full_value,
                    &format!(": extra text: {}", quote(value)),
                ));
            }
            break;
        };
        layout = tail(layout, rest_start);
        let hold = value;
        let mut bad = false;
        match std {
            Std::Year => match value.get(..2) {
                Some(p) => {
                    value = tail(value, 2);
                    match atoi(p) {
                        Some(y) => year = if y >= 69 { y + 1900 } else { y + 2000 },
                        None => bad = true,
                    }
                }
                None => bad = true,
            },
            Std::LongYear => {
                if value.len() < 4 || !is_digit(value, 0) {
                    bad = true;
                } else {
                    let p = value.get(..4).unwrap_or_default();
                    value = tail(value, 4);
                    match atoi(p) {
                        Some(y) => year = y,
                        None => bad = true,
                    }
                }
            }
            Std::Month | Std::LongMonth => {
                let table: &[&str] = if std == Std::Month {
                    &SHORT_MONTHS
                } else {
                    &LONG_MONTHS
                };
                match lookup(table, value) {
                    Some((index, rest)) => {
                        month = index + 1;
                        value = rest;
                    }
                    None => bad = true,
                }
            }
            Std::NumMonth | Std::ZeroMonth => match getnum(value, std == Std::ZeroMonth) {
                Some((n, rest)) => {
                    month = n;
                    value = rest;
                    if !(1..=12).contains(&n) {
                        range_error = Some("month");
                    }
                }
                None => bad = true,
            },
            Std::WeekDay | Std::LongWeekDay => {
                let table: &[&str] = if std == Std::WeekDay {
                    &SHORT_DAYS
                } else {
                    &LONG_DAYS
                };
                match lookup(table, value) {
                    Some((_, rest)) => value = rest,
                    None => bad = true,
                }
            }
            Std::Day | Std::UnderDay | Std::ZeroDay => {
                if std == Std::UnderDay && value.first() == Some(&b' ') {
                    value = tail(value, 1);
                }
                match getnum(value, std == Std::ZeroDay) {
                    Some((n, rest)) => {
                        day = n;
                        value = rest;
                    }
                    None => bad = true,
                }
            }
            Std::UnderYearDay | Std::ZeroYearDay => {
                for _ in 0..2 {
                    if std == Std::UnderYearDay && value.first() == Some(&b' ') {
                        value = tail(value, 1);
                    }
                }
                match getnum3(value, std == Std::ZeroYearDay) {
                    Some((n, rest)) => {
                        year_day = n;
                        value = rest;
                    }
                    None => bad = true,
                }
            }
            Std::Hour => match getnum(value, false) {
                Some((n, rest)) => {
                    hour = n;
                    value = rest;
                    if !(0..24).contains(&n) {
                        range_error = Some("hour");
                    }
                }
                None => bad = true,
            },
            Std::Hour12 | Std::ZeroHour12 => match getnum(value, std == Std::ZeroHour12) {
                Some((n, rest)) => {
                    hour = n;
                    value = rest;
                    if !(0..=12).contains(&n) {
                        range_error = Some("hour");
                    }
                }
                None => bad = true,
            },
            Std::Minute | Std::ZeroMinute => match getnum(value, std == Std::ZeroMinute) {
                Some((n, rest)) => {
                    minute = n;
                    value = rest;
                    if !(0..60).contains(&n) {
                        range_error = Some("minute");
                    }
                }
                None => bad = true,
            },
            Std::Second | Std::ZeroSecond => match getnum(value, std == Std::ZeroSecond) {
                Some((n, rest)) => {
                    second = n;
                    value = rest;
                    if !(0..60).contains(&n) {
                        range_error = Some("second");
                    } else if value.len() >= 2
                        && comma_or_period(value.first())
                        && is_digit(value, 1)
                    {
                        // A fraction in the value but none in the layout.
                        let (_, next, _) = next_std_chunk(layout);
                        if !matches!(next, Some(Std::FracSecond0(_) | Std::FracSecond9)) {
                            let mut n = 2;
                            while is_digit(value, n) {
                                n += 1;
                            }
                            match parse_nanoseconds(value, n) {
                                Some((ns, range)) => {
                                    nanos = ns;
                                    range_error = range;
                                }
                                None => bad = true,
                            }
                            value = tail(value, n);
                        }
                    }
                }
                None => bad = true,
            },
            Std::UpperPm | Std::LowerPm => match value.get(..2) {
                Some(p) => {
                    value = tail(value, 2);
                    let (pm_text, am_text): (&[u8], &[u8]) = if std == Std::UpperPm {
                        (b"PM", b"AM")
                    } else {
                        (b"pm", b"am")
                    };
                    if p == pm_text {
                        pm = true;
                    } else if p == am_text {
                        am = true;
                    } else {
                        bad = true;
                    }
                }
                None => bad = true,
            },
            Std::Iso8601Tz
            | Std::Iso8601SecondsTz
            | Std::Iso8601ShortTz
            | Std::Iso8601ColonTz
            | Std::Iso8601ColonSecondsTz
                if value.first() == Some(&b'Z') =>
            {
                value = tail(value, 1);
                utc = true;
            }
            Std::Iso8601Tz
            | Std::Iso8601SecondsTz
            | Std::Iso8601ShortTz
            | Std::Iso8601ColonTz
            | Std::Iso8601ColonSecondsTz
            | Std::NumTz
            | Std::NumSecondsTz
            | Std::NumShortTz
            | Std::NumColonTz
            | Std::NumColonSecondsTz => {
                let v: &[u8] = value;
                let byte = |i: usize| v.get(i).copied();
                let part = |from: usize, to: usize| v.get(from..to).unwrap_or_default();
                let parsed: Option<ZoneParts<'_>> = match std {
                    Std::Iso8601ColonTz | Std::NumColonTz => (value.len() >= 6
                        && byte(3) == Some(b':'))
                    .then(|| (part(1, 3), part(4, 6), b"00".as_slice(), 6)),
                    Std::Iso8601ShortTz | Std::NumShortTz => (value.len() >= 3)
                        .then(|| (part(1, 3), b"00".as_slice(), b"00".as_slice(), 3)),
                    Std::Iso8601ColonSecondsTz | Std::NumColonSecondsTz => {
                        (value.len() >= 9 && byte(3) == Some(b':') && byte(6) == Some(b':'))
                            .then(|| (part(1, 3), part(4, 6), part(7, 9), 9))
                    }
                    Std::Iso8601SecondsTz | Std::NumSecondsTz => {
                        (value.len() >= 7).then(|| (part(1, 3), part(3, 5), part(5, 7), 7))
                    }
                    _ => (value.len() >= 5).then(|| (part(1, 3), part(3, 5), b"00".as_slice(), 5)),
                };
                match parsed {
                    None => bad = true,
                    Some((hh, mm, ss, consumed)) => {
                        let sign = byte(0);
                        value = tail(value, consumed);
                        match (getnum(hh, true), getnum(mm, true), getnum(ss, true)) {
                            (Some((h, _)), Some((m, _)), Some((s, _))) => {
                                // Go's checks use > so that 24h, 60m, 60s pass.
                                if h > 24 {
                                    range_error = Some("time zone offset hour");
                                }
                                if m > 60 {
                                    range_error = Some("time zone offset minute");
                                }
                                if s > 60 {
                                    range_error = Some("time zone offset second");
                                }
                                let offset = (h * 60 + m) * 60 + s;
                                match sign {
                                    Some(b'+') => zone_offset = Some(offset),
                                    Some(b'-') => zone_offset = Some(-offset),
                                    _ => bad = true,
                                }
                            }
                            _ => bad = true,
                        }
                    }
                }
            }
            Std::Tz => {
                if value.get(..3) == Some(b"UTC".as_slice()) {
                    utc = true;
                    value = tail(value, 3);
                } else {
                    match parse_time_zone(value) {
                        Some(n) => {
                            zone_name = value.get(..n);
                            value = tail(value, n);
                        }
                        None => bad = true,
                    }
                }
            }
            Std::FracSecond0(digits) => {
                let n = digits + 1;
                if value.len() < n {
                    bad = true;
                } else {
                    match parse_nanoseconds(value, n) {
                        Some((ns, range)) => {
                            nanos = ns;
                            range_error = range;
                        }
                        None => bad = true,
                    }
                    value = tail(value, n);
                }
            }
            Std::FracSecond9 => {
                if value.len() >= 2 && comma_or_period(value.first()) && is_digit(value, 1) {
                    let mut i = 0;
                    while is_digit(value, i + 1) {
                        i += 1;
                    }
                    match parse_nanoseconds(value, i + 1) {
                        Some((ns, range)) => {
                            nanos = ns;
                            range_error = range;
                        }
                        None => bad = true,
                    }
                    value = tail(value, i + 1);
                }
            }
        }
        if let Some(range) = range_error {
            return Err(parse_message(
                full_value,
                &format!(": {range} out of range"),
            ));
        }
        if bad {
            return Err(cannot_parse(full_layout, full_value, hold, element));
        }
    }
    if pm && hour < 12 {
        hour += 12;
    } else if am && hour == 12 {
        hour = 0;
    }
    if year_day >= 0 {
        let (mut m, mut d) = (0i64, 0i64);
        if is_leap(year) {
            if year_day == 31 + 29 {
                m = 2;
                d = 29;
            } else if year_day > 31 + 29 {
                year_day -= 1;
            }
        }
        if !(1..=365).contains(&year_day) {
            return Err(parse_message(full_value, ": day-of-year out of range"));
        }
        if m == 0 {
            m = (year_day - 1) / 31 + 1;
            let before = |k: i64| {
                usize::try_from(k)
                    .ok()
                    .and_then(|k| DAYS_BEFORE.get(k))
                    .copied()
                    .unwrap_or(0)
            };
            if before(m) < year_day {
                m += 1;
            }
            d = year_day - before(m - 1);
        }
        if month >= 0 && month != m {
            return Err(parse_message(
                full_value,
                ": day-of-year does not match month",
            ));
        }
        month = m;
        if day >= 0 && day != d {
            return Err(parse_message(
                full_value,
                ": day-of-year does not match day",
            ));
        }
        day = d;
    } else {
        if month < 0 {
            month = 1;
        }
        if day < 0 {
            day = 1;
        }
    }
    if day < 1 || day > days_in(month, year) {
        return Err(parse_message(full_value, ": day out of range"));
    }
    let date = (year, month, day);
    let clock = (hour, minute, second);
    if utc {
        return Ok(GoTime::from_clock(date, clock, nanos, 0));
    }
    if let Some(offset) = zone_offset {
        return Ok(GoTime::from_clock(date, clock, nanos, offset));
    }
    if let Some(name) = zone_name {
        // An abbreviation the (UTC) local zone does not know: the clock is
        // read as UTC and shown with the offset of a GMT±h name, else 0.
        let offset = match name.strip_prefix(b"GMT") {
            Some(hours) if !hours.is_empty() => atoi(hours).unwrap_or(0).saturating_mul(3600),
            _ => 0,
        };
        let t = GoTime::from_clock(date, clock, nanos, 0);
        return Ok(GoTime { offset, ..t });
    }
    Ok(GoTime::from_clock(date, clock, nanos, 0))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::useless_vec)]
mod tests {
    use super::*;
    use serde_json::json;

    fn run(name: &str, args: &[&str]) -> Result<Value, String> {
        let args: Vec<Value> = args.iter().map(|a| json!(a)).collect();
        call(name, &args).map_err(|e| e.message)
    }

    #[test]
    fn kyverno_time_examples() {
        let cases: Vec<(&str, &str, Vec<&str>, Value)> = vec![
            (
                "since_rfc3339",
                "time_since",
                vec!["", "2021-01-02T15:04:05-07:00", "2021-01-10T03:14:05-07:00"],
                json!("180h10m0s"),
            ),
            (
                "since_unix_date_layout",
                "time_since",
                vec![
                    "Mon Jan _2 15:04:05 MST 2006",
                    "Mon Jan 02 15:04:05 MST 2021",
                    "Mon Jan 10 03:14:16 MST 2021",
                ],
                json!("180h10m11s"),
            ),
            (
                "since_docs_day",
                "time_since",
                vec!["", "2022-04-10T03:14:05-07:00", "2022-04-11T03:14:05-07:00"],
                json!("24h0m0s"),
            ),
            (
                "since_helm_layout",
                "time_since",
                vec!["2006-Jan-02", "2020-Jan-14", "2020-Jan-17"],
                json!("72h0m0s"),
            ),
            (
                "to_cron",
                "time_to_cron",
                vec!["2023-02-02T15:04:05Z"],
                json!("4 15 2 2 4"),
            ),
            (
                "to_cron_keeps_offset",
                "time_to_cron",
                vec!["2022-04-11T03:14:05-07:00"],
                json!("14 3 11 4 1"),
            ),
            (
                "add",
                "time_add",
                vec!["2021-01-02T15:04:05-07:00", "3h"],
                json!("2021-01-02T18:04:05-07:00"),
            ),
            (
                "add_docs",
                "time_add",
                vec!["2023-01-12T12:37:56-05:00", "6h"],
                json!("2023-01-12T18:37:56-05:00"),
            ),
            (
                "parse_rfc3339",
                "time_parse",
                vec!["2006-01-02T15:04:05Z07:00", "2021-01-02T15:04:05-07:00"],
                json!("2021-01-02T15:04:05-07:00"),
            ),
            (
                "parse_custom",
                "time_parse",
                vec![
                    "Mon Jan 02 15:04:05 -0700 2006",
                    "Sat Jan 02 15:04:05 -0700 2021",
                ],
                json!("2021-01-02T15:04:05-07:00"),
            ),
            (
                "parse_docs",
                "time_parse",
                vec![
                    "Mon Jan 02 2006 15:04:05 -0700",
                    "Fri Jun 22 2022 17:45:00 +0100",
                ],
                json!("2022-06-22T17:45:00+01:00"),
            ),
            (
                "parse_epoch",
                "time_parse",
                vec!["1702691171", "1702691171"],
                json!("2023-12-16T01:46:11Z"),
            ),
            (
                "parse_fraction_dropped",
                "time_parse",
                vec!["2006-01-02T15:04:05.000Z07:00", "2021-01-02T15:04:05.123Z"],
                json!("2021-01-02T15:04:05Z"),
            ),
            (
                "parse_pm",
                "time_parse",
                vec!["Jan 2, 2006 at 3:04pm (MST)", "Feb 3, 2013 at 7:54pm (PST)"],
                json!("2013-02-03T19:54:00Z"),
            ),
            (
                "parse_year_day",
                "time_parse",
                vec!["2006-002", "2024-060"],
                json!("2024-02-29T00:00:00Z"),
            ),
            (
                "parse_gmt_offset",
                "time_parse",
                vec!["2006-01-02 15:04 MST", "2021-01-02 10:00 GMT+3"],
                json!("2021-01-02T13:00:00+03:00"),
            ),
            (
                "utc",
                "time_utc",
                vec!["2023-02-02T15:04:05Z"],
                json!("2023-02-02T15:04:05Z"),
            ),
            (
                "utc_from_offset",
                "time_utc",
                vec!["2023-02-02T15:04:05-07:00"],
                json!("2023-02-02T22:04:05Z"),
            ),
            (
                "utc_docs",
                "time_utc",
                vec!["2021-01-02T02:04:05+08:30"],
                json!("2021-01-01T17:34:05Z"),
            ),
            (
                "diff",
                "time_diff",
                vec!["2021-01-02T15:04:05-07:00", "2021-01-10T03:14:05-07:00"],
                json!("180h10m0s"),
            ),
            (
                "diff_negative",
                "time_diff",
                vec!["2023-01-12T00:00:00Z", "2023-01-11T00:00:00Z"],
                json!("-24h0m0s"),
            ),
            (
                "diff_fraction",
                "time_diff",
                vec!["2023-01-12T00:00:00Z", "2023-01-12T00:00:01.5Z"],
                json!("1.5s"),
            ),
            (
                "before",
                "time_before",
                vec!["2021-01-02T15:04:05-07:00", "2021-01-02T16:04:05-07:00"],
                json!(true),
            ),
            (
                "before_equal",
                "time_before",
                vec!["2021-01-02T15:04:05-07:00", "2021-01-02T15:04:05-07:00"],
                json!(false),
            ),
            (
                "before_later",
                "time_before",
                vec!["2021-01-02T16:04:05-07:00", "2021-01-02T15:04:05-07:00"],
                json!(false),
            ),
            (
                "after",
                "time_after",
                vec!["2021-01-02T16:04:05-07:00", "2021-01-02T15:04:05-07:00"],
                json!(true),
            ),
            (
                "after_equal",
                "time_after",
                vec!["2021-01-02T15:04:05-07:00", "2021-01-02T15:04:05-07:00"],
                json!(false),
            ),
            (
                "after_docs_zones",
                "time_after",
                vec!["2023-01-12T14:07:55-05:00", "2023-01-12T19:05:59Z"],
                json!(true),
            ),
            (
                "between",
                "time_between",
                vec![
                    "2021-01-02T17:04:05-07:00",
                    "2021-01-02T15:04:05-07:00",
                    "2021-01-02T18:04:05-07:00",
                ],
                json!(true),
            ),
            (
                "between_start_excluded",
                "time_between",
                vec![
                    "2021-01-02T15:04:05-07:00",
                    "2021-01-02T15:04:05-07:00",
                    "2021-01-02T18:04:05-07:00",
                ],
                json!(false),
            ),
            (
                "between_end_excluded",
                "time_between",
                vec![
                    "2021-01-02T18:04:05-07:00",
                    "2021-01-02T15:04:05-07:00",
                    "2021-01-02T18:04:05-07:00",
                ],
                json!(false),
            ),
            (
                "truncate_hour",
                "time_truncate",
                vec!["2023-01-12T17:37:00Z", "1h"],
                json!("2023-01-12T17:00:00Z"),
            ),
            (
                "truncate_two_hours",
                "time_truncate",
                vec!["2023-01-12T17:37:00Z", "2h"],
                json!("2023-01-12T16:00:00Z"),
            ),
            (
                "truncate_docs",
                "time_truncate",
                vec!["2021-01-02T23:04:05Z", "2h"],
                json!("2021-01-02T22:00:00Z"),
            ),
            (
                "truncate_zero_duration",
                "time_truncate",
                vec!["2021-01-02T23:04:05Z", "0s"],
                json!("2021-01-02T23:04:05Z"),
            ),
        ];
        for (case, name, args, want) in cases {
            assert_eq!(run(name, &args), Ok(want), "{case}");
        }
    }

    #[test]
    fn go_parse_errors() {
        let cases = [
            (
                "rfc3339_garbage",
                "time_utc",
                vec!["foo"],
                "parsing time \"foo\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"foo\" as \"2006\"",
            ),
            ("empty", "time_utc", vec![""], "parsing time \"\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"2006\""),
            (
                "missing_zone",
                "time_utc",
                vec!["2021-01-02T15:04:05"],
                "parsing time \"2021-01-02T15:04:05\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"Z07:00\"",
            ),
            ("month_range", "time_utc", vec!["2021-13-02T15:04:05Z"], "parsing time \"2021-13-02T15:04:05Z\": month out of range"),
            ("day_range", "time_utc", vec!["2021-02-30T15:04:05Z"], "parsing time \"2021-02-30T15:04:05Z\": day out of range"),
            ("extra_text", "time_utc", vec!["2021-01-02T15:04:05Zjunk"], "parsing time \"2021-01-02T15:04:05Zjunk\": extra text: \"junk\""),
            ("bad_duration", "time_add", vec!["2021-01-02T15:04:05Z", "1d"], "time: unknown unit \"d\" in duration \"1d\""),
            ("bad_epoch", "time_parse", vec!["1", "abc"], "strconv.ParseInt: parsing \"abc\": invalid syntax"),
        ];
        for (case, name, args, want) in cases {
            assert_eq!(run(name, &args), Err(want.to_string()), "{case}");
        }
    }

    #[test]
    fn now_has_rfc3339_shape() {
        for name in ["time_now", "time_now_utc"] {
            let value = run(name, &[]).unwrap();
            let text = value.as_str().unwrap();
            assert_eq!(text.len(), 20, "{text}");
            assert!(text.ends_with('Z'), "{text}");
            assert!(parse_rfc3339(text).is_ok(), "{text}");
        }
        let since = run("time_since", &["", "2020-01-01T00:00:00Z", ""]).unwrap();
        assert!(since.as_str().unwrap().ends_with('s'));
    }

    #[test]
    fn civil_round_trip() {
        for (y, m, d) in [
            (1970, 1, 1),
            (2000, 2, 29),
            (1, 1, 1),
            (9999, 12, 31),
            (-1, 3, 1),
        ] {
            let days = days_from_civil(y, m, d);
            assert_eq!(civil_from_days(days), (y, m, d));
        }
        assert_eq!(days_from_civil(1, 1, 1) * 86_400, -UNIX_TO_INTERNAL);
    }
}
