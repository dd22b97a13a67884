//! `duration()`, `timestamp()` and their accessors (`getHours()`,
//! `getFullYear()`, …).

use kube_units::duration;

use crate::error::EvalError;
use crate::func::Func;
use crate::time::{civil, overflow, parse_rfc3339, Timestamp, MAX_UNIX, MIN_UNIX};
use crate::value::{no_overload, Value};

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
