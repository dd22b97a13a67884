//! `google.protobuf.Duration` (Go durations, nanoseconds) and
//! `google.protobuf.Timestamp` (RFC 3339, years 1–9999). Time zones are
//! UTC or fixed offsets only: there is no time-zone database. The
//! functions are in `library::time`.

use std::cmp::Ordering;

use crate::error::EvalError;

/// A point in time: seconds since the Unix epoch (UTC) and nanoseconds,
/// with the UTC offset it was written in, which only `string()` shows
/// (Go keeps a parsed time's zone). Equality and order ignore the offset.
#[derive(Clone, Copy, Debug)]
pub struct Timestamp {
    pub(crate) secs: i64,
    pub(crate) nanos: u32,
    /// Seconds east of UTC.
    pub(crate) offset: i32,
}

impl PartialEq for Timestamp {
    fn eq(&self, other: &Self) -> bool {
        (self.secs, self.nanos) == (other.secs, other.nanos)
    }
}

impl Eq for Timestamp {}

impl Ord for Timestamp {
    fn cmp(&self, other: &Self) -> Ordering {
        (self.secs, self.nanos).cmp(&(other.secs, other.nanos))
    }
}

impl PartialOrd for Timestamp {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Timestamp {
    /// Seconds since the Unix epoch.
    pub fn seconds(&self) -> i64 {
        self.secs
    }

    /// Nanoseconds within the second.
    pub fn nanos(&self) -> u32 {
        self.nanos
    }
}

/// 0001-01-01T00:00:00Z and 9999-12-31T23:59:59Z, as cel-go bounds them.
pub(crate) const MIN_UNIX: i64 = -62_135_596_800;
pub(crate) const MAX_UNIX: i64 = 253_402_300_799;
const NANOS: i128 = 1_000_000_000;

pub(crate) fn overflow() -> EvalError {
    EvalError::msg("timestamp overflow")
}

/// A civil date and time.
pub(crate) struct Civil {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    /// Day of the year, 0-based.
    pub(crate) yday: i64,
    /// 0 is Sunday.
    pub(crate) wday: i64,
    pub(crate) hour: i64,
    pub(crate) minute: i64,
    pub(crate) second: i64,
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

pub(crate) fn civil(secs: i64) -> Civil {
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

/// Go's `time.Parse(time.RFC3339, s)`, within cel-go's range.
pub(crate) fn parse_rfc3339(s: &str) -> Result<Timestamp, EvalError> {
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
