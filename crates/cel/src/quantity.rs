//! What Kubernetes' `Quantity` methods say of a `kube_units` quantity
//! (`Sign`, `Cmp`, `AsInt64`). The functions are in `library::quantity`.

use std::cmp::Ordering;

use kube_units::quantity::{Quantity, QuantityFormat, QuantityValue};

pub(crate) fn sign(q: &QuantityValue) -> i64 {
    if q.is_zero() {
        0
    } else if q.as_approximate_f64() < 0.0 {
        -1
    } else {
        1
    }
}

/// `Quantity.Cmp`: exact through subtraction, else through the
/// comparable form.
pub(crate) fn compare(a: &QuantityValue, b: &QuantityValue) -> Ordering {
    if let Some(d) = a.sub(b) {
        return sign(&d).cmp(&0);
    }
    match (
        Quantity::parse(&a.canonical()),
        Quantity::parse(&b.canonical()),
    ) {
        (Some(x), Some(y)) => x.compare(&y),
        _ => Ordering::Equal,
    }
}

/// `Quantity.AsInt64`: only values stored with a non-negative decimal
/// exponent that fit 64 bits (so `1000m` is not an integer, as in
/// Kubernetes).
pub(crate) fn as_i64(q: &QuantityValue) -> Option<i64> {
    if q.scale() > 0 {
        return None;
    }
    let one = QuantityValue::from_i64(1, QuantityFormat::DecimalExponent);
    let whole = q
        .quo_round_down(&one, 0)?
        .with_format(QuantityFormat::DecimalExponent)
        .canonical();
    let (mantissa, exp) = whole.split_once('e').unwrap_or((&whole, "0"));
    let mantissa: i128 = mantissa.parse().ok()?;
    let exp: u32 = exp.parse().ok()?;
    let value = mantissa.checked_mul(10i128.checked_pow(exp)?)?;
    i64::try_from(value).ok()
}
