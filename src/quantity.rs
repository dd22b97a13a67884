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
