//! Kubernetes resource quantities (`500m`, `1Gi`, `1.5`, `2e3`), parsed and
//! compared exactly as `resource.ParseQuantity` / `Quantity.Cmp` do for the
//! values policies use.

use std::cmp::Ordering;

/// A parsed quantity: `±mantissa × 10^exp10 × 2^exp2`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity {
    negative: bool,
    mantissa: u128,
    exp10: i32,
    exp2: u32,
}

impl Quantity {
    /// Parses Kubernetes' quantity grammar; `None` when `text` is not one.
    pub fn parse(text: &str) -> Option<Self> {
        let bytes = text.as_bytes();
        let mut i = 0;
        let mut negative = false;
        if let Some(&sign) = bytes.first() {
            if sign == b'+' || sign == b'-' {
                negative = sign == b'-';
                i = 1;
            }
        }
        let (mantissa, scale, digits, next) = parse_decimal(bytes, i)?;
        if digits == 0 {
            return None;
        }
        let suffix = text.get(next..)?;
        let (exp10, exp2) = match suffix {
            "" => (0, 0),
            "Ki" => (0, 10),
            "Mi" => (0, 20),
            "Gi" => (0, 30),
            "Ti" => (0, 40),
            "Pi" => (0, 50),
            "Ei" => (0, 60),
            "n" => (-9, 0),
            "u" => (-6, 0),
            "m" => (-3, 0),
            "k" => (3, 0),
            "M" => (6, 0),
            "G" => (9, 0),
            "T" => (12, 0),
            "P" => (15, 0),
            "E" => (18, 0),
            exponent => {
                let rest = exponent
                    .strip_prefix('e')
                    .or_else(|| exponent.strip_prefix('E'))?;
                let unsigned = rest
                    .strip_prefix('+')
                    .or_else(|| rest.strip_prefix('-'))
                    .unwrap_or(rest);
                if unsigned.is_empty() || !unsigned.bytes().all(|b| b.is_ascii_digit()) {
                    return None;
                }
                (rest.parse::<i32>().ok()?, 0)
            }
        };
        Some(Self {
            negative: negative && mantissa != 0,
            mantissa,
            exp10: exp10.checked_sub(scale)?,
            exp2,
        })
    }

    fn as_f64(&self) -> f64 {
        let magnitude = self.mantissa as f64 * 10f64.powi(self.exp10) * 2f64.powi(self.exp2 as i32);
        if self.negative {
            -magnitude
        } else {
            magnitude
        }
    }

    /// `mantissa × 2^exp2` folded into a decimal mantissa, when it fits.
    fn decimal(&self) -> Option<(u128, i32)> {
        let factor = 1u128.checked_shl(self.exp2)?;
        let mut m = self.mantissa.checked_mul(factor)?;
        let mut e = self.exp10;
        while m != 0 && m % 10 == 0 {
            m /= 10;
            e += 1;
        }
        Some((m, e))
    }

    /// Exact comparison where the numbers fit 128 bits, else by `f64`.
    pub fn compare(&self, other: &Self) -> Ordering {
        match (self.negative, other.negative) {
            (false, true) => return Ordering::Greater,
            (true, false) => return Ordering::Less,
            _ => {}
        }
        let magnitude = match (self.decimal(), other.decimal()) {
            (Some(a), Some(b)) => cmp_decimal(a, b),
            _ => self
                .as_f64()
                .abs()
                .partial_cmp(&other.as_f64().abs())
                .unwrap_or(Ordering::Equal),
        };
        if self.negative {
            magnitude.reverse()
        } else {
            magnitude
        }
    }
}

/// Reads `digits[.digits]`; returns mantissa, digits after the point, digit
/// count and the index after the number.
fn parse_decimal(bytes: &[u8], mut i: usize) -> Option<(u128, i32, usize, usize)> {
    let mut mantissa: u128 = 0;
    let mut scale = 0i32;
    let mut digits = 0usize;
    let mut seen_point = false;
    while let Some(&b) = bytes.get(i) {
        if b.is_ascii_digit() {
            digits += 1;
            match mantissa
                .checked_mul(10)
                .and_then(|m| m.checked_add(u128::from(b - b'0')))
            {
                Some(m) => {
                    mantissa = m;
                    if seen_point {
                        scale += 1;
                    }
                }
                // Beyond 38 digits, later integer digits only scale the value.
                None if !seen_point => scale -= 1,
                None => {}
            }
        } else if b == b'.' && !seen_point {
            seen_point = true;
        } else {
            break;
        }
        i += 1;
    }
    Some((mantissa, scale, digits, i))
}

fn cmp_decimal((m1, e1): (u128, i32), (m2, e2): (u128, i32)) -> Ordering {
    if m1 == 0 || m2 == 0 {
        return m1.cmp(&m2);
    }
    let mag1 = digit_count(m1) as i64 + i64::from(e1);
    let mag2 = digit_count(m2) as i64 + i64::from(e2);
    if mag1 != mag2 {
        return mag1.cmp(&mag2);
    }
    // Same magnitude: scaling the one with the larger exponent keeps it
    // within the other's digit count, so it cannot overflow.
    let (a, b) = if e1 >= e2 {
        (scale_up(m1, e1 - e2), Some(m2))
    } else {
        (Some(m1), scale_up(m2, e2 - e1))
    };
    match (a, b) {
        (Some(a), Some(b)) => a.cmp(&b),
        _ => Ordering::Equal,
    }
}

fn scale_up(m: u128, by: i32) -> Option<u128> {
    10u128.checked_pow(u32::try_from(by).ok()?)?.checked_mul(m)
}

fn digit_count(mut m: u128) -> u32 {
    let mut n = 0;
    while m > 0 {
        m /= 10;
        n += 1;
    }
    n
}

/// How Kubernetes prints a quantity, fixed by the suffix it was written
/// with (`resource.Format`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantityFormat {
    /// `1e3`, `12E-2`.
    DecimalExponent,
    /// `Ki`, `Mi`, … `Ei`.
    BinarySI,
    /// No suffix or `n`, `u`, `m`, `k`, `M`, `G`, `T`, `P`, `E`.
    DecimalSI,
}

/// An exact quantity for arithmetic, `value × 10^exp`, kept the way
/// `resource.ParseQuantity` stores it (`1.50` is 150 × 10⁻², so the scale
/// Kyverno's `divide` rounds to is the same), plus its format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuantityValue {
    value: i128,
    exp: i64,
    format: QuantityFormat,
}

/// `10^n` as an i128, when it fits.
fn pow10_i128(n: i64) -> Option<i128> {
    10i128.checked_pow(u32::try_from(n).ok()?)
}

impl QuantityValue {
    /// `resource.ParseQuantity`: what [`Quantity::parse`] accepts, with the
    /// value Kubernetes stores (rounded up to a multiple of 1n where it is
    /// finer, binary values capped at 2⁶³-1). `None` when `text` is not a
    /// quantity or is too large for 128 bits.
    pub fn parse(text: &str) -> Option<Self> {
        Quantity::parse(text)?;
        let (negative, body) = match text.as_bytes().first() {
            Some(b'-') => (true, text.get(1..)?),
            Some(b'+') => (false, text.get(1..)?),
            _ => (false, text),
        };
        let number_end = body
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(body.len());
        let number = body.get(..number_end)?;
        let suffix = body.get(number_end..)?;
        let (int_part, denom) = number.split_once('.').unwrap_or((number, ""));
        let num = match int_part.trim_start_matches('0') {
            "" => "0",
            stripped => stripped,
        };
        let (binary, exponent, format): (bool, i64, QuantityFormat) = match suffix {
            "" => (false, 0, QuantityFormat::DecimalSI),
            "Ki" => (true, 10, QuantityFormat::BinarySI),
            "Mi" => (true, 20, QuantityFormat::BinarySI),
            "Gi" => (true, 30, QuantityFormat::BinarySI),
            "Ti" => (true, 40, QuantityFormat::BinarySI),
            "Pi" => (true, 50, QuantityFormat::BinarySI),
            "Ei" => (true, 60, QuantityFormat::BinarySI),
            "n" => (false, -9, QuantityFormat::DecimalSI),
            "u" => (false, -6, QuantityFormat::DecimalSI),
            "m" => (false, -3, QuantityFormat::DecimalSI),
            "k" => (false, 3, QuantityFormat::DecimalSI),
            "M" => (false, 6, QuantityFormat::DecimalSI),
            "G" => (false, 9, QuantityFormat::DecimalSI),
            "T" => (false, 12, QuantityFormat::DecimalSI),
            "P" => (false, 15, QuantityFormat::DecimalSI),
            "E" => (false, 18, QuantityFormat::DecimalSI),
            other => {
                let rest = other
                    .strip_prefix('e')
                    .or_else(|| other.strip_prefix('E'))?;
                (
                    false,
                    i64::from(rest.parse::<i32>().ok()?),
                    QuantityFormat::DecimalExponent,
                )
            }
        };
        let digit_count = i64::try_from(num.len().checked_add(denom.len())?).ok()?;
        let denom_len = i64::try_from(denom.len()).ok()?;
        // The int64 fast path of ParseQuantity.
        let (precision, mut scale, multiplier): (i64, i64, i64) = if binary {
            if denom.is_empty() {
                let num_len = i64::try_from(num.len()).ok()?;
                // Go: int32(float32(exponent)*3/10), truncated.
                #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
                let digits_of_suffix = ((exponent as f32) * 3.0 / 10.0) as i64;
                (15 - num_len - digits_of_suffix - 1, 0, 1i64 << exponent)
            } else {
                (-1, 0, 1)
            }
        } else {
            (18 - digit_count, exponent, 1)
        };
        if precision >= 0 {
            scale -= denom_len;
            if scale >= -9 {
                let shifted: i64 = format!("{num}{denom}").parse().ok()?;
                if let Some(result) = shifted.checked_mul(multiplier) {
                    let value = i128::from(result);
                    return Some(Self {
                        value: if negative { -value } else { value },
                        exp: scale,
                        format,
                    });
                }
            }
        }
        // The inf.Dec slow path: exact digits, then rounded up to 1n.
        let mut unscaled: i128 = format!("{num}{denom}").parse().ok()?;
        let mut decimal_places = denom_len;
        if binary {
            unscaled = unscaled.checked_mul(1i128.checked_shl(u32::try_from(exponent).ok()?)?)?;
        } else {
            decimal_places = decimal_places.checked_sub(exponent)?;
        }
        if unscaled != 0 {
            if decimal_places > 9 {
                unscaled = match pow10_i128(decimal_places - 9) {
                    Some(divisor) => {
                        let quotient = unscaled / divisor;
                        if unscaled % divisor == 0 {
                            quotient
                        } else {
                            quotient.checked_add(1)?
                        }
                    }
                    // Far below 1n: rounds up to 1n.
                    None => 1,
                };
            } else if decimal_places < 9 {
                unscaled = unscaled.checked_mul(pow10_i128(9 - decimal_places)?)?;
            }
            decimal_places = 9;
            if format == QuantityFormat::BinarySI {
                let max = i128::from(i64::MAX) * 1_000_000_000;
                if unscaled > max {
                    unscaled = max;
                }
            }
        }
        Some(Self {
            value: if negative { -unscaled } else { unscaled },
            exp: -decimal_places,
            format,
        })
    }

    /// An integer quantity (`resource.NewQuantity`).
    pub fn from_i64(value: i64, format: QuantityFormat) -> Self {
        Self {
            value: i128::from(value),
            exp: 0,
            format,
        }
    }

    pub fn format(&self) -> QuantityFormat {
        self.format
    }

    /// The same value printed in another format.
    pub fn with_format(self, format: QuantityFormat) -> Self {
        Self { format, ..self }
    }

    pub fn is_zero(&self) -> bool {
        self.value == 0
    }

    /// `inf.Dec` scale: digits after the decimal point (negative for tens).
    pub fn scale(&self) -> i64 {
        -self.exp
    }

    /// Both values over the smaller exponent.
    fn align(&self, other: &Self) -> Option<(i128, i128, i64)> {
        let exp = self.exp.min(other.exp);
        let a = self
            .value
            .checked_mul(pow10_i128(self.exp.checked_sub(exp)?)?)?;
        let b = other
            .value
            .checked_mul(pow10_i128(other.exp.checked_sub(exp)?)?)?;
        Some((a, b, exp))
    }

    /// `Quantity.Add`: the format of `self`, or of `other` when `self` is 0.
    pub fn add(&self, other: &Self) -> Option<Self> {
        let (a, b, exp) = self.align(other)?;
        Some(Self {
            value: a.checked_add(b)?,
            exp,
            format: if self.is_zero() {
                other.format
            } else {
                self.format
            },
        })
    }

    /// `Quantity.Sub`, same format rule as [`Self::add`].
    pub fn sub(&self, other: &Self) -> Option<Self> {
        let (a, b, exp) = self.align(other)?;
        Some(Self {
            value: a.checked_sub(b)?,
            exp,
            format: if self.is_zero() {
                other.format
            } else {
                self.format
            },
        })
    }

    /// The exact product, in the format of `self`.
    pub fn mul(&self, other: &Self) -> Option<Self> {
        Some(Self {
            value: self.value.checked_mul(other.value)?,
            exp: self.exp.checked_add(other.exp)?,
            format: self.format,
        })
    }

    /// `inf.Dec.QuoRound(self, other, scale, RoundDown)`: the quotient cut
    /// (towards zero) to `scale` decimal places, in the format of `self`.
    /// `None` when `other` is zero or the numbers do not fit.
    pub fn quo_round_down(&self, other: &Self, scale: i64) -> Option<Self> {
        if other.value == 0 {
            return None;
        }
        // value = trunc(a × 10^(ea - eb + scale) / b) × 10^-scale
        let shift = self.exp.checked_sub(other.exp)?.checked_add(scale)?;
        let value = if shift >= 0 {
            self.value
                .checked_mul(pow10_i128(shift)?)?
                .checked_div(other.value)?
        } else {
            match pow10_i128(-shift).and_then(|p| other.value.checked_mul(p)) {
                Some(divisor) => self.value.checked_div(divisor)?,
                // The divisor is beyond 10^38: the quotient truncates to 0.
                None => 0,
            }
        };
        Some(Self {
            value,
            exp: -scale,
            format: self.format,
        })
    }

    /// `Quantity.AsApproximateFloat64`.
    pub fn as_approximate_f64(&self) -> f64 {
        #[allow(clippy::cast_precision_loss)]
        let base = self.value as f64;
        if self.exp == 0 {
            return base;
        }
        let factor: f64 = format!("1e{}", self.exp).parse().unwrap_or(f64::INFINITY);
        base * factor
    }

    /// The value as an integer, when it has no fractional part.
    fn integer(&self) -> Option<i128> {
        if self.exp >= 0 {
            self.value.checked_mul(pow10_i128(self.exp)?)
        } else {
            match pow10_i128(-self.exp) {
                Some(p) if self.value % p == 0 => Some(self.value / p),
                Some(_) => None,
                // 10^-exp beyond 128 bits: only zero is an integer.
                None => (self.value == 0).then_some(0),
            }
        }
    }

    /// `Quantity.String()`: Kubernetes' canonical form (`25Ki`, `1500m`,
    /// `12301`, `1e3`, `0`).
    pub fn canonical(&self) -> String {
        if self.value == 0 {
            return "0".into();
        }
        let mut format = self.format;
        if format == QuantityFormat::BinarySI {
            match self.integer() {
                Some(int) if int.unsigned_abs() >= 1024 => return binary_canonical(int),
                _ => format = QuantityFormat::DecimalSI,
            }
        }
        let (mut mantissa, mut exp) = (self.value, self.exp);
        while mantissa.unsigned_abs() >= 10 && mantissa % 10 == 0 {
            mantissa /= 10;
            exp = exp.saturating_add(1);
        }
        // Exponent down to a multiple of 3 (Go's `exponent % 3` cases).
        let remainder = exp.rem_euclid(3);
        if remainder != 0 {
            if let Some(m) = pow10_i128(remainder).and_then(|p| mantissa.checked_mul(p)) {
                mantissa = m;
                exp -= remainder;
            }
        }
        let suffix = match (format, exp) {
            (_, 0) => String::new(),
            (QuantityFormat::DecimalSI, -9) => "n".into(),
            (QuantityFormat::DecimalSI, -6) => "u".into(),
            (QuantityFormat::DecimalSI, -3) => "m".into(),
            (QuantityFormat::DecimalSI, 3) => "k".into(),
            (QuantityFormat::DecimalSI, 6) => "M".into(),
            (QuantityFormat::DecimalSI, 9) => "G".into(),
            (QuantityFormat::DecimalSI, 12) => "T".into(),
            (QuantityFormat::DecimalSI, 15) => "P".into(),
            (QuantityFormat::DecimalSI, 18) => "E".into(),
            // DecimalExponent, and decimal values beyond the SI suffixes.
            (_, e) => format!("e{e}"),
        };
        format!("{mantissa}{suffix}")
    }
}

/// Canonical BinarySI form of an integer of at least 1024 in magnitude.
fn binary_canonical(mut int: i128) -> String {
    let mut power = 0usize;
    while int.unsigned_abs() >= 1024 && int % 1024 == 0 && power < 6 {
        int /= 1024;
        power += 1;
    }
    let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
        .get(power)
        .copied()
        .unwrap_or("");
    format!("{int}{suffix}")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn q(text: &str) -> Quantity {
        Quantity::parse(text).unwrap_or_else(|| panic!("{text} should parse"))
    }

    #[test]
    fn parses_kubernetes_quantities() {
        for ok in [
            "1", "1.5", "500m", "1Gi", "+2", "-3k", ".5", "5.", "1e3", "2E-2", "0",
        ] {
            assert!(Quantity::parse(ok).is_some(), "{ok}");
        }
        for bad in ["", "Gi", "1GB", "abc", "1.2.3", "1e", "--1", "1 Gi", "*"] {
            assert!(Quantity::parse(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn compares_across_suffixes() {
        let cases = [
            (
                "binary_equals_decimal_multiple",
                "1Gi",
                "1024Mi",
                Ordering::Equal,
            ),
            ("millis_vs_unit", "500m", "1", Ordering::Less),
            ("decimal_point", "1.5", "1500m", Ordering::Equal),
            ("kilo_vs_kibi", "1k", "1Ki", Ordering::Less),
            ("exponent", "2e3", "2k", Ordering::Equal),
            ("negative", "-1", "0", Ordering::Less),
            ("zero_signs", "-0", "0", Ordering::Equal),
            ("large", "8Ei", "9E", Ordering::Greater),
            ("float_like", "0.25", "250m", Ordering::Equal),
        ];
        for (name, a, b, want) in cases {
            assert_eq!(q(a).compare(&q(b)), want, "{name}");
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod value_tests {
    use super::*;

    fn canonical(text: &str) -> String {
        QuantityValue::parse(text)
            .unwrap_or_else(|| panic!("{text} should parse"))
            .canonical()
    }

    #[test]
    fn canonical_forms_follow_kubernetes() {
        let cases = [
            ("binary_whole", "25Ki", "25Ki"),
            ("binary_reduces", "1024Ki", "1Mi"),
            ("binary_not_multiple", "1.5Ki", "1536"),
            ("binary_small_is_decimal", "0.5Ki", "512"),
            ("decimal_milli", "1500m", "1500m"),
            ("decimal_reduces", "1000m", "1"),
            ("decimal_kilo", "2000", "2k"),
            ("decimal_fraction", "1.5", "1500m"),
            ("decimal_nano_round_up", "0.0000000001", "1n"),
            ("exponent", "1e3", "1e3"),
            ("exponent_zero", "12e0", "12"),
            ("exponent_thousands", "1200e0", "1200"),
            ("zero", "0", "0"),
            ("zero_binary", "0Ki", "0"),
            ("negative", "-1Ki", "-1Ki"),
            ("big_decimal", "1000E", "1e21"),
        ];
        for (case, input, want) in cases {
            assert_eq!(canonical(input), want, "{case}");
        }
    }

    #[test]
    fn arithmetic_keeps_kubernetes_formats() {
        let q = |t: &str| QuantityValue::parse(t).unwrap();
        assert_eq!(q("12Ki").add(&q("13Ki")).unwrap().canonical(), "25Ki");
        assert_eq!(q("0").add(&q("1Gi")).unwrap().canonical(), "1Gi");
        assert_eq!(q("12Ki").sub(&q("13Ki")).unwrap().canonical(), "-1Ki");
        assert_eq!(q("12Ki").mul(&q("2.5")).unwrap().canonical(), "30Ki");
        let scale = q("10m").scale().max(q("3").scale());
        assert_eq!(
            q("10m").quo_round_down(&q("3"), scale).unwrap().canonical(),
            "3m"
        );
        assert!(q("1").quo_round_down(&q("0"), 0).is_none());
        assert_eq!(q("256M").as_approximate_f64(), 256e6);
        assert_eq!(
            QuantityValue::from_i64(2048, QuantityFormat::BinarySI).canonical(),
            "2Ki"
        );
        assert_eq!(q("1.50").scale(), 2);
        assert_eq!(q("8Ei").format(), QuantityFormat::BinarySI);
        assert!(QuantityValue::parse("1h").is_none());
    }
}
