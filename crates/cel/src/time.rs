//! `google.protobuf.Duration` (Go durations, nanoseconds) and
//! `google.protobuf.Timestamp` (RFC 3339, years 1–9999). Time zones are
//! UTC or fixed offsets only: there is no time-zone database.

use kube_units::duration;

use crate::error::EvalError;
use crate::functions::{no_overload, Func};
use crate::value::{Timestamp, Value};

/// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, as cel-go bounds them.
const MIN_UNIX: i64 = -62_135_596_800;
const MAX_UNIX: i64 = 253_402_300_799;
const NANOS: i128 = 1_000_000_000;

fn overflow() -> EvalError {
    EvalError::msg("timestamp overflow")
}

pub(crate) fn call<'a>(func: Func, args: &[Value<'a>]) -> Result<Value<'a>, EvalError> {
    let fail = || no_overload(func.name(), args);
    match (func, args) {
        (Func::Duration, [Value::Duration(d)]) => Ok(Value::Duration(*d)),
        (Func::Duration, [Value::String(s)]) => {
            duration::parse_go(s).map(Value::Duration).map_err(|_| {
                EvalError::msg("type conversion error from 'string' to 'google.protobuf.Duration'")
            })
        }
        (Func::Timestamp, [Value::Timestamp(t)]) => Ok(Value::Timestamp(*t)),
        (Func::Timestamp, [Value::String(s)]) => parse_rfc3339(s).map(Value::Timestamp),
        (Func::Timestamp, [Value::Int(secs)]) => {
            if (MIN_UNIX..=MAX_UNIX).contains(secs) {
                Ok(Value::Timestamp(Timestamp {
                    secs: *secs,
                    nanos: 0,
                    offset: 0,
                }))
            } else {
                Err(overflow())
            }
        }
        (_, [Value::Duration(d)]) => duration_part(func, *d).ok_or_else(fail),
        (_, [Value::Timestamp(t)]) => timestamp_part(func, *t, 0).ok_or_else(fail),
        (_, [Value::Timestamp(t), Value::String(tz)]) => {
            let offset = zone_offset(tz)?;
            if t.secs.checked_add(offset).is_none() {
                return Err(overflow());
            }
            timestamp_part(func, *t, offset).ok_or_else(fail)
        }
        _ => Err(fail()),
    }
}

fn duration_part<'a>(func: Func, d: i64) -> Option<Value<'a>> {
    let unit: i64 = match func {
        Func::GetHours => 3_600_000_000_000,
        Func::GetMinutes => 60_000_000_000,
        Func::GetSeconds => 1_000_000_000,
        Func::GetMilliseconds => 1_000_000,
        _ => return None,
    };
    Some(Value::Int(d / unit))
}

/// A civil date and time.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    /// Day of the year, 0-based.
    yday: i64,
    /// 0 is Sunday.
    wday: i64,
    hour: i64,
    minute: i64,
    second: i64,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Hinnant's
/// `days_from_civil`).
fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The date of a day number (Hinnant's `civil_from_days`).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    (
        year,
        u32::try_from(month).unwrap_or(1),
        u32::try_from(day).unwrap_or(1),
    )
}

fn civil(secs: i64) -> Civil {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    Civil {
        year,
        month,
        day,
        yday: days - days_from_civil(year, 1, 1),
        // 1970-01-01 was a Thursday.
        wday: (days + 4).rem_euclid(7),
        hour: rem / 3600,
        minute: rem % 3600 / 60,
        second: rem % 60,
    }
}

fn timestamp_part<'a>(func: Func, t: Timestamp, offset: i64) -> Option<Value<'a>> {
    let c = civil(t.secs.saturating_add(offset));
    Some(Value::Int(match func {
        Func::GetFullYear => c.year,
        Func::GetMonth => i64::from(c.month) - 1,
        Func::GetDate => i64::from(c.day),
        Func::GetDayOfMonth => i64::from(c.day) - 1,
        Func::GetDayOfWeek => c.wday,
        Func::GetDayOfYear => c.yday,
        Func::GetHours => c.hour,
        Func::GetMinutes => c.minute,
        Func::GetSeconds => c.second,
        Func::GetMilliseconds => i64::from(t.nanos / 1_000_000),
        _ => return None,
    }))
}

/// Seconds east of UTC for a time-zone argument: UTC, or a fixed offset
/// such as `+01:00` / `-05:30` read as cel-go reads it.
fn zone_offset(tz: &str) -> Result<i64, EvalError> {
    let Some((hours, minutes)) = tz.split_once(':') else {
        return match tz {
            "" | "UTC" | "GMT" | "Etc/UTC" | "Etc/GMT" => Ok(0),
            _ => Err(EvalError::msg(format!("unknown time zone {tz}"))),
        };
    };
    let atoi = |s: &str| {
        s.parse::<i64>()
            .map_err(|_| EvalError::msg(format!("strconv.Atoi: parsing {s:?}: invalid syntax")))
    };
    let (h, m) = (atoi(hours)?, atoi(minutes)?);
    let offset = if tz.starts_with('-') {
        h.saturating_mul(60).saturating_sub(m)
    } else {
        h.saturating_mul(60).saturating_add(m)
    };
    Ok(offset.saturating_mul(60))
}

/// Go's `time.Parse(time.RFC3339, s)`, within cel-go's range.
fn parse_rfc3339(s: &str) -> Result<Timestamp, EvalError> {
    let bad =
        || EvalError::msg("type conversion error from 'string' to 'google.protobuf.Timestamp'");
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let digits = b.get(from..from + len)?;
        if !digits.iter().all(u8::is_ascii_digit) {
            return None;
        }
        std::str::from_utf8(digits).ok()?.parse().ok()
    };
    let sep = |at: usize, c: u8| b.get(at) == Some(&c);
    let fields = (|| {
        if !(sep(4, b'-') && sep(7, b'-') && sep(10, b'T') && sep(13, b':') && sep(16, b':')) {
            return None;
        }
        Some((
            num(0, 4)?,
            num(5, 2)?,
            num(8, 2)?,
            num(11, 2)?,
            num(14, 2)?,
            num(17, 2)?,
        ))
    })();
    let (year, month, day, hour, minute, second) = fields.ok_or_else(bad)?;
    let month = u32::try_from(month).map_err(|_| bad())?;
    let day = u32::try_from(day).map_err(|_| bad())?;
    let days_in_month = days_in_month(year, month).ok_or_else(bad)?;
    if day < 1 || day > days_in_month || hour > 23 || minute > 59 || second > 59 {
        return Err(bad());
    }
    // Fractional seconds: any number of digits, nanoseconds kept.
    let mut i = 19;
    let mut nanos: u32 = 0;
    if sep(i, b'.') || sep(i, b',') {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            if i - start < 9 {
                nanos = nanos * 10 + u32::from(b.get(i).copied().unwrap_or(b'0') - b'0');
            }
            i += 1;
        }
        let digits = i - start;
        if digits == 0 {
            return Err(bad());
        }
        for _ in digits..9 {
            nanos *= 10;
        }
    }
    let offset = match b.get(i..) {
        Some(b"Z") => 0,
        Some([sign @ (b'+' | b'-'), ..]) if b.len() == i + 6 && sep(i + 3, b':') => {
            let (h, m) = (
                num(i + 1, 2).ok_or_else(bad)?,
                num(i + 4, 2).ok_or_else(bad)?,
            );
            if h > 23 || m > 59 {
                return Err(bad());
            }
            let o = h * 3600 + m * 60;
            if *sign == b'-' {
                -o
            } else {
                o
            }
        }
        _ => return Err(bad()),
    };
    let secs =
        days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset;
    if !(MIN_UNIX..=MAX_UNIX).contains(&secs) {
        return Err(overflow());
    }
    Ok(Timestamp {
        secs,
        nanos,
        offset: i32::try_from(offset).map_err(|_| bad())?,
    })
}

/// `t + nanos`, within the timestamp range.
pub(crate) fn add_duration(t: Timestamp, nanos: i128) -> Result<Timestamp, EvalError> {
    let total = i128::from(t.secs) * NANOS + i128::from(t.nanos) + nanos;
    let secs = i64::try_from(total.div_euclid(NANOS)).map_err(|_| overflow())?;
    if !(MIN_UNIX..=MAX_UNIX).contains(&secs) {
        return Err(overflow());
    }
    Ok(Timestamp {
        secs,
        nanos: u32::try_from(total.rem_euclid(NANOS)).map_err(|_| overflow())?,
        offset: t.offset,
    })
}

/// The days of `month` (1–12) in the proleptic Gregorian `year`; `None`
/// for a month that does not exist.
pub(crate) fn days_in_month(year: i64, month: u32) -> Option<u32> {
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => Some(31),
        4 | 6 | 9 | 11 => Some(30),
        2 if leap => Some(29),
        2 => Some(28),
        _ => None,
    }
}

/// Go's `RFC3339Nano` in the zone the timestamp was written in: trailing
/// zeros of the fraction dropped, `Z` for UTC.
pub(crate) fn timestamp_string(t: Timestamp) -> String {
    let c = civil(t.secs + i64::from(t.offset));
    let mut s = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        c.year, c.month, c.day, c.hour, c.minute, c.second
    );
    if t.nanos > 0 {
        let frac = format!("{:09}", t.nanos);
        s.push('.');
        s.push_str(frac.trim_end_matches('0'));
    }
    if t.offset == 0 {
        s.push('Z');
    } else {
        let sign = if t.offset < 0 { '-' } else { '+' };
        let minutes = t.offset.unsigned_abs() / 60;
        s.push_str(&format!("{sign}{:02}:{:02}", minutes / 60, minutes % 60));
    }
    s
}

/// cel-go's `string(duration)`: seconds, shortest decimal, then `s`.
pub(crate) fn duration_string(nanos: i64) -> String {
    let secs = nanos / 1_000_000_000;
    let frac = nanos % 1_000_000_000;
    #[allow(clippy::cast_precision_loss)]
    let seconds = secs as f64 + frac as f64 / 1e9;
    format!("{seconds}s")
}

#[cfg(test)]
mod tests {
    use crate::test_support::eval_str;

    #[test]
    fn durations() {
        let cases = [
            (
                "parse_and_compare",
                "duration('1h30m') == duration('90m')",
                "true",
            ),
            ("string_form", "string(duration('1h30m'))", "5400s"),
            ("fraction_string", "string(duration('1.5s'))", "1.5s"),
            ("millis_string", "string(duration('100ms'))", "0.1s"),
            (
                "micro_sign",
                "duration('2µs') == duration('2000ns')",
                "true",
            ),
            ("us_unit", "duration('2us') == duration('2µs')", "true"),
            ("hours", "duration('1h30m').getHours()", "1"),
            ("minutes_are_total", "duration('1h30m').getMinutes()", "90"),
            ("seconds", "duration('1m1s').getSeconds()", "61"),
            (
                "milliseconds_are_total",
                "duration('1.5s').getMilliseconds()",
                "1500",
            ),
            (
                "arithmetic",
                "duration('1h') + duration('30m') == duration('90m')",
                "true",
            ),
            ("negation", "-duration('1s') < duration('0s')", "true"),
            ("int_is_nanos", "int(duration('1s'))", "1000000000"),
            (
                "bad_duration",
                "duration('1' + 'd')",
                "error: type conversion error from 'string' to 'google.protobuf.Duration'",
            ),
            (
                "type_name",
                "type(duration('1s')) == google.protobuf.Duration",
                "true",
            ),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(expr), want, "{name}");
        }
    }

    #[test]
    fn timestamps() {
        let t = "timestamp('2023-03-14T15:09:26.535Z')";
        let cases = [
            ("string_round_trip", format!("string({t})"), "2023-03-14T15:09:26.535Z"),
            // cel-go keeps the zone `time.Parse` found; only `string()` shows it.
            ("offset_kept_by_string", "string(timestamp('2023-01-01T01:00:00+01:00'))".into(), "2023-01-01T01:00:00+01:00"),
            ("negative_offset_kept", "string(timestamp('2023-01-01T01:00:00.5-05:30') + duration('1h'))".into(), "2023-01-01T02:00:00.5-05:30"),
            ("offset_ignored_by_equality", "timestamp('2023-01-01T01:00:00+01:00') == timestamp('2023-01-01T00:00:00Z')".into(), "true"),
            ("offset_ignored_by_getters", "timestamp('2023-01-01T01:00:00+01:00').getHours()".into(), "0"),
            ("zero_offset_is_utc", "string(timestamp('2023-01-01T00:00:00+00:00'))".into(), "2023-01-01T00:00:00Z"),
            ("full_year", format!("{t}.getFullYear()"), "2023"),
            ("month_zero_based", format!("{t}.getMonth()"), "2"),
            ("date_one_based", format!("{t}.getDate()"), "14"),
            ("day_of_month_zero_based", format!("{t}.getDayOfMonth()"), "13"),
            ("day_of_week", format!("{t}.getDayOfWeek()"), "2"),
            ("day_of_year", format!("{t}.getDayOfYear()"), "72"),
            ("hours", format!("{t}.getHours()"), "15"),
            ("hours_in_offset", format!("{t}.getHours('+02:00')"), "17"),
            ("hours_negative_offset", format!("{t}.getHours('-05:30')"), "9"),
            ("minutes_negative_offset", format!("{t}.getMinutes('-05:30')"), "39"),
            ("utc_name", format!("{t}.getHours('UTC')"), "15"),
            ("named_zone_unknown", format!("{t}.getHours('America/New_York')"), "error: unknown time zone America/New_York"),
            ("minutes", format!("{t}.getMinutes()"), "9"),
            ("seconds", format!("{t}.getSeconds()"), "26"),
            ("milliseconds", format!("{t}.getMilliseconds()"), "535"),
            ("plus_duration", format!("string({t} + duration('1h'))"), "2023-03-14T16:09:26.535Z"),
            ("difference", "timestamp('2023-01-02T00:00:00Z') - timestamp('2023-01-01T00:00:00Z') == duration('24h')".into(), "true"),
            ("ordering", "timestamp('2023-01-01T00:00:00Z') < timestamp('2023-01-01T00:00:01Z')".into(), "true"),
            ("from_int", "string(timestamp(0))".into(), "1970-01-01T00:00:00Z"),
            ("to_int", "int(timestamp('1970-01-02T00:00:00Z'))".into(), "86400"),
            ("leap_day", "timestamp('2024-02-29T00:00:00Z').getDayOfYear()".into(), "59"),
            ("before_epoch", "string(timestamp('1969-12-31T23:59:59Z'))".into(), "1969-12-31T23:59:59Z"),
            ("year_one", "timestamp('0001-01-01T00:00:00Z').getFullYear()".into(), "1"),
            ("bad_date", "timestamp('2023-02-30' + 'T00:00:00Z')".into(), "error: type conversion error from 'string' to 'google.protobuf.Timestamp'"),
            ("missing_zone", "timestamp('2023-01-01' + 'T00:00:00')".into(), "error: type conversion error from 'string' to 'google.protobuf.Timestamp'"),
            ("overflow", "timestamp('9999-12-31T23:59:59Z') + duration('1s')".into(), "error: timestamp overflow"),
        ];
        for (name, expr, want) in cases {
            assert_eq!(eval_str(&expr), want, "{name}");
        }
    }
}
