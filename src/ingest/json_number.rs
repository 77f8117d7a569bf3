//! A JSON number read straight from bytes, for the streamed reader's per-request arrays
//! ([`super::stream`]): millions of short decimals (`0.0123`, `1024`) read while the array's
//! extent is found, in one pass, instead of each value's extent found first and its text then
//! handed to serde_json.
//!
//! Only the common case is taken, and there the value is the one serde_json gives (the crate
//! reads floats with its `float_roundtrip` feature: correctly rounded). A number with a
//! fraction or an exponent and at most 19 significant digits whose mantissa `m` is below
//! 2^53 and whose decimal exponent `e` is within ±22 is `m × 10^e` or `m / 10^-e`: both
//! operands are exact `f64`s, so the one IEEE operation rounds the exact value correctly
//! (Clinger's fast path). A whole number of at most 19 digits is the `u64` serde_json gives,
//! converted as serde_json converts it (`-0` is `-0.0`). Anything else, including every
//! number serde_json would reject (`01`, `1.`, `.5`, `+1`, `1e`), is [`Scan::Other`]: the
//! caller leaves it to serde_json, which gives the value or the error.

/// What [`scan`] found at the start of its bytes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Scan {
    /// A number of this value, taking this many bytes; the byte after it is `,`, `]`, `}` or
    /// whitespace.
    Number(f64, usize),
    /// The bytes end before the number does (or right after it): read more and scan again.
    Incomplete,
    /// Not a number this reader takes: leave it to serde_json.
    Other,
}

/// Exact powers of ten as `f64` (10^22 is the last one that is).
const POW10: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// Digits in a mantissa that cannot overflow a `u64`.
const MAX_DIGITS: u32 = 19;

/// Reads the number at the start of `b` (see the module doc).
#[inline(always)]
pub(super) fn scan(b: &[u8]) -> Scan {
    let mut i = 0;
    let negative = b.first() == Some(&b'-');
    if negative {
        i = 1;
    }
    let mut m: u64 = 0;
    // Digits read into `m` (leading zeros of a fraction included: they only make it bail
    // out earlier).
    let mut digits: u32 = 0;
    match b.get(i) {
        None => return Scan::Incomplete,
        Some(b'0') => {
            i += 1;
            match b.get(i) {
                None => return Scan::Incomplete,
                Some(b'0'..=b'9') => return Scan::Other,
                _ => {}
            }
        }
        Some(b'1'..=b'9') => {
            while let Some(&c) = b.get(i) {
                if !c.is_ascii_digit() {
                    break;
                }
                m = m.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                digits += 1;
                i += 1;
            }
        }
        Some(_) => return Scan::Other,
    }
    let mut exponent: i32 = 0;
    let mut whole = true;
    if b.get(i) == Some(&b'.') {
        whole = false;
        i += 1;
        let from = i;
        while let Some(&c) = b.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            m = m.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
            i += 1;
        }
        let n = (i - from) as u32;
        if n == 0 {
            return if i == b.len() {
                Scan::Incomplete
            } else {
                Scan::Other
            };
        }
        digits = digits.saturating_add(n);
        exponent = -(n.min(1 << 20) as i32);
    }
    if matches!(b.get(i), Some(b'e' | b'E')) {
        whole = false;
        i += 1;
        let minus = match b.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let from = i;
        let mut e: i32 = 0;
        while let Some(&c) = b.get(i) {
            if !c.is_ascii_digit() {
                break;
            }
            // Large exponents are left to serde_json: cap the sum, not the digits read.
            e = e.saturating_mul(10).saturating_add(i32::from(c - b'0'));
            i += 1;
        }
        if i == from {
            return if i == b.len() {
                Scan::Incomplete
            } else {
                Scan::Other
            };
        }
        exponent = exponent.saturating_add(if minus { -e } else { e });
    }
    // The number must be seen to end, at a byte that ends a value in an array.
    match b.get(i) {
        None => return Scan::Incomplete,
        Some(b',' | b']' | b'}' | b' ' | b'\n' | b'\r' | b'\t') => {}
        Some(_) => return Scan::Other,
    }
    if digits > MAX_DIGITS {
        return Scan::Other;
    }
    let v = if whole {
        // serde_json's `u64` (or, negative, its `i64`/`-0.0`) converted as `as f64` does.
        m as f64
    } else if m == 0 {
        0.0
    } else if m >= 1 << 53 {
        return Scan::Other;
    } else {
        let Some(&p) = POW10.get(exponent.unsigned_abs() as usize) else {
            return Scan::Other;
        };
        if exponent < 0 {
            m as f64 / p
        } else {
            m as f64 * p
        }
    };
    Scan::Number(if negative { -v } else { v }, i)
}

#[cfg(test)]
pub(super) mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use proptest::prelude::*;

    /// serde_json's reading of the number text `t`, as the per-request readers see it.
    fn serde(t: &str) -> Option<f64> {
        serde_json::from_str::<f64>(t).ok()
    }

    /// `scan` of `t` followed by a comma agrees with serde_json: a number taken is
    /// serde_json's value bit for bit and all of `t`; one left over is either rejected by
    /// serde_json or outside the fast path. Returns whether it was taken.
    fn agrees(t: &str) -> bool {
        let s = format!("{t},");
        match scan(s.as_bytes()) {
            Scan::Number(v, n) => {
                let want = serde(t);
                assert_eq!(n, t.len(), "{t}");
                assert_eq!(
                    want.map(f64::to_bits),
                    Some(v.to_bits()),
                    "{t}: {v:?} against {want:?}"
                );
                true
            }
            Scan::Other => false,
            Scan::Incomplete => panic!("{t}: incomplete though followed by a comma"),
        }
    }

    #[test]
    fn odd_numbers_read_as_serde_json_reads_them() {
        for t in [
            "0",
            "-0",
            "0.0",
            "-0.0",
            "0e0",
            "-0e5",
            "0.000",
            "1",
            "-1",
            "1024",
            "0.011",
            "0.1",
            "0.2",
            "0.3",
            "1.5e3",
            "1.5E+3",
            "1.5e-3",
            "2.5e0",
            "123456789012345678",
            "9007199254740993",
            "-9007199254740993",
            "18446744073709551615",
            "9999999999999999999",
            "9007199254740992.5",
            "0.1e-22",
            "1e22",
            "1e23",
            "1e-22",
            "1e-23",
            "4.9e-324",
            "1.7976931348623157e308",
            "1e400",
            "1e-400",
            "123.456e-7",
            "0.30000000000000004",
            "3.141592653589793",
            "2.2250738585072014e-308",
        ] {
            agrees(t);
        }
        // The common forms are taken, not all left to serde_json.
        for t in [
            "0.011",
            "-0",
            "1024",
            "1.5e-3",
            "3.141592653589793",
            "9999999999999999999",
        ] {
            assert!(agrees(t), "{t} not taken");
        }
        assert_eq!(scan(b"-0,"), Scan::Number(-0.0, 2));
        assert!(matches!(scan(b"-0,"), Scan::Number(v, 2) if v.is_sign_negative()));
    }

    #[test]
    fn what_serde_json_rejects_is_left_to_it() {
        for t in [
            "01",
            "-01",
            "1.",
            "1.e3",
            ".5",
            "+1",
            "1e",
            "1e+",
            "-",
            "--1",
            "0x10",
            "1_000",
            "NaN",
            "Infinity",
            "-Infinity",
            "null",
            "true",
            "\"1\"",
            "1.5.3",
            "1e5e5",
            "[1]",
            "00",
            "1a",
        ] {
            let s = format!("{t},");
            assert_eq!(scan(s.as_bytes()), Scan::Other, "{t}");
        }
    }

    #[test]
    fn a_number_cut_by_the_end_of_the_bytes_asks_for_more() {
        for t in ["", "-", "0", "12", "1.", "1.5", "1e", "1e-", "1e-3", "-0"] {
            assert_eq!(scan(t.as_bytes()), Scan::Incomplete, "{t:?}");
        }
        for (t, n) in [("1]", 1), ("2.5 ", 3), ("7}", 1), ("-3\n", 2), ("1e2\t", 3)] {
            assert!(
                matches!(scan(t.as_bytes()), Scan::Number(_, k) if k == n),
                "{t:?}"
            );
        }
    }

    /// Number texts built from the grammar's parts, odd ones included (some of them not
    /// JSON: `01`, `1.`, `1e+`).
    pub(in crate::ingest) fn number_text() -> impl Strategy<Value = String> {
        (
            any::<bool>(),
            prop_oneof![
                Just(String::from("0")),
                "[1-9][0-9]{0,24}",
                "0{1,3}[0-9]{0,3}",
            ],
            prop_oneof![
                Just(String::new()),
                "\\.[0-9]{0,25}",
                "\\.0{0,20}[1-9]{1,4}",
            ],
            prop_oneof![
                Just(String::new()),
                "[eE][+-]?[0-9]{0,4}",
                "[eE]-?[0-9]{1,2}",
            ],
        )
            .prop_map(|(neg, int, frac, exp)| {
                format!("{}{int}{frac}{exp}", if neg { "-" } else { "" })
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn grammar_numbers_read_as_serde_json_reads_them(t in number_text()) {
            agrees(&t);
        }

        #[test]
        fn any_float_printed_reads_back_as_serde_json_reads_it(
            bits in any::<u64>(),
            places in 0usize..20,
        ) {
            let x = f64::from_bits(bits);
            prop_assume!(x.is_finite());
            agrees(&format!("{x}"));
            agrees(&format!("{x:e}"));
            agrees(&format!("{x:.places$}"));
            agrees(&format!("{x:.places$e}"));
        }

        #[test]
        fn short_decimals_are_taken(m in 0u64..1_000_000_000_000_000, scale in 0usize..16) {
            let digits = m.to_string();
            let t = if scale == 0 || scale >= digits.len() {
                digits
            } else {
                format!("{}.{}", &digits[..digits.len() - scale], &digits[digits.len() - scale..])
            };
            prop_assert!(agrees(&t), "{} not taken", t);
        }
    }
}
