//! `memcmp` for the guest, eight bytes at a time.
//!
//! wasi-libc's `memcmp` compares a byte per loop turn. The engine compares
//! short keys all the time (object lookups in the settings, the request and
//! JMESPath fields), and that loop was 4 % of the guest's time; this one
//! takes a third less. It is linked in place of wasi-libc's.
#![allow(unsafe_code)]

/// C's `memcmp` over two byte strings of one length: negative, zero or
/// positive as the first byte that differs is smaller or larger in `a`.
/// Reads only: it must not compare slices with `==`, which calls `memcmp`.
pub fn compare(a: &[u8], b: &[u8]) -> i32 {
    let mut words = a.chunks_exact(8).zip(b.chunks_exact(8));
    for (x, y) in words.by_ref() {
        let (x, y) = (word(x), word(y));
        if x != y {
            // Little-endian: the lowest differing bit is in the first
            // differing byte.
            let shift = (x ^ y).trailing_zeros() / 8 * 8;
            return i32::from((x >> shift) as u8) - i32::from((y >> shift) as u8);
        }
    }
    let done = a.len().min(b.len()) / 8 * 8;
    let rest = a.get(done..).unwrap_or_default().iter();
    for (x, y) in rest.zip(b.get(done..).unwrap_or_default()) {
        if x != y {
            return i32::from(*x) - i32::from(*y);
        }
    }
    0
}

fn word(bytes: &[u8]) -> u64 {
    <[u8; 8]>::try_from(bytes).map_or(0, u64::from_le_bytes)
}

/// # Safety
/// Both pointers must be valid for reads of `n` bytes.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn memcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: the caller guarantees `n` readable bytes at each.
    let (a, b) = unsafe {
        (
            std::slice::from_raw_parts(a, n),
            std::slice::from_raw_parts(b, n),
        )
    };
    compare(a, b)
}

/// `bcmp`: whether `n` bytes differ (LLVM asks this for equality tests).
///
/// # Safety
/// Both pointers must be valid for reads of `n` bytes.
#[cfg(target_arch = "wasm32")]
#[unsafe(no_mangle)]
pub unsafe extern "C" fn bcmp(a: *const u8, b: *const u8, n: usize) -> i32 {
    // SAFETY: as the caller guarantees.
    unsafe { memcmp(a, b, n) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_as_byte_strings_do() {
        let cases: [(&str, &[u8], &[u8]); 9] = [
            ("empty", b"", b""),
            ("equal_short", b"abc", b"abc"),
            (
                "equal_long",
                b"metadata.annotations",
                b"metadata.annotations",
            ),
            (
                "differs_in_the_first_word",
                b"abcdefgh-tail",
                b"abcdXfgh-tail",
            ),
            ("differs_in_the_tail", b"abcdefgh-tail", b"abcdefgh-tbil"),
            ("first_byte_wins_over_later_ones", b"aXXXXXXX", b"bAAAAAAA"),
            ("bytes_are_unsigned", b"\xff0000000", b"\x0100000000"),
            (
                "differs_in_the_last_byte_of_a_word",
                b"1234567z",
                b"1234567a",
            ),
            (
                "differs_in_a_second_word",
                b"12345678abcdefgh",
                b"12345678abcdefgg",
            ),
        ];
        for (name, a, b) in cases {
            let n = a.len().min(b.len());
            let (a, b) = (&a[..n], &b[..n]);
            assert_eq!(compare(a, b).signum(), a.cmp(b) as i32, "{name}");
            assert_eq!(compare(b, a).signum(), b.cmp(a) as i32, "{name}");
        }
    }
}
