//! Reading one cell: numbers (a plain decimal read exactly without `str::parse`, then
//! thousands separators and units) and the plain text that can be taken as it is.

use crate::ingest::text::parse_quantity;

/// A number cell: the plain fast paths first, then thousands separators and units.
pub(super) fn cell_number(cell: &str) -> Option<(f64, &str)> {
    if let Some(v) = plain_decimal(cell) {
        return Some((v, ""));
    }
    match cell.parse::<f64>() {
        Ok(v) => Some((v, "")),
        Err(_) => parse_quantity(cell),
    }
}

/// `123`, `-40.370`, `.5`: at most 15 digits with an optional sign and point, read exactly as
/// `str::parse::<f64>` reads them (the digits are an exact integer below 2^53 and the power of
/// ten is exact, so the one division rounds correctly). `None` for anything else.
pub(crate) fn plain_decimal(cell: &str) -> Option<f64> {
    match decimal_prefix(cell.as_bytes(), 0) {
        Ok((Some(v), end)) if end == cell.len() => Some(v),
        _ => None,
    }
}

/// [`plain_decimal`]'s reading of `b[start..]` up to the first byte that is neither a digit
/// nor the first point, for a reader that splits and reads a row's cells in one pass: the
/// value (`None` when that stops at once: an empty cell) and where it stopped; `Err` when
/// the bytes up to there are not a plain decimal.
#[inline]
pub(super) fn decimal_prefix(b: &[u8], start: usize) -> Result<(Option<f64>, usize), ()> {
    let mut at = start;
    let negative = b.get(at) == Some(&b'-');
    if negative {
        at += 1;
    }
    let digits_from = at;
    let mut mantissa: u64 = 0;
    let mut count = 0u32;
    let mut point: Option<u32> = None;
    while let Some(&c) = b.get(at) {
        match c {
            b'0'..=b'9' => {
                mantissa = mantissa.wrapping_mul(10).wrapping_add(u64::from(c - b'0'));
                count += 1;
            }
            b'.' if point.is_none() => point = Some(count),
            _ => break,
        }
        at += 1;
    }
    if at == start {
        return Ok((None, at));
    }
    // At most 15 digits (an exact integer below 2^53) in at most 16 bytes after the sign.
    if count == 0 || count > 15 || at - digits_from > 16 {
        return Err(());
    }
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    // At most 15 digits: below 10^15, the same number as an `i64`, whose conversion to `f64`
    // is one instruction (a `u64`'s takes several on x86-64) and as exact.
    let m = mantissa as i64 as f64;
    let v = match count - point.unwrap_or(count) {
        // A whole number needs no division (the slowest step here).
        0 => m,
        decimals => m / POW10.get(decimals as usize).copied().ok_or(())?,
    };
    Ok((Some(if negative { -v } else { v }), at))
}

/// Whether a text cell can be taken as it is: nothing to trim and not a placeholder for no
/// value (`-`, `n/a`, `none`).
#[inline]
pub(super) fn plain_text(cell: &str) -> bool {
    let b = cell.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) if f.is_ascii_graphic() && l.is_ascii_graphic() => {
            b.len() > 4
                || !(cell == "-"
                    || cell.eq_ignore_ascii_case("n/a")
                    || cell.eq_ignore_ascii_case("none"))
        }
        _ => false,
    }
}

/// A GPU cell that gives a count too: `8xH100`, `8 x H100` (count first) or
/// `NVIDIA H100 80GB HBM3 x 2`, `A100 × 4` (count last, after a spaced `x` or a `×`): the count
/// and the GPU. `RTX 4090` and `MI300X` are GPUs alone.
pub(super) fn gpu_and_count(cell: &str) -> Option<(u64, &str)> {
    let t = cell.trim();
    if let Some((n, rest)) = t.split_once(['x', 'X', '×']) {
        if let Ok(c) = n.trim().parse::<u64>() {
            let rest = rest.trim();
            return (!rest.is_empty()).then_some((c, rest));
        }
    }
    let digits = t.len() - t.trim_end_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    let c: u64 = t[t.len() - digits..].parse().ok()?;
    let head = t[..t.len() - digits].trim_end();
    let gpu = if let Some(g) = head.strip_suffix('×') {
        g
    } else {
        let g = head.strip_suffix(['x', 'X'])?;
        if !g.ends_with(char::is_whitespace) {
            return None;
        }
        g
    };
    let gpu = gpu.trim();
    (!gpu.is_empty()).then_some((c, gpu))
}

/// `cell.trim()`, with ASCII whitespace (most cells' padding) stripped byte by byte.
#[inline]
pub(crate) fn trim_cell(cell: &str) -> &str {
    // ASCII whitespace by bytes (most cells), then `trim` only when an edge is not ASCII
    // (Unicode whitespace such as a no-break space).
    let b = cell.as_bytes();
    let (mut start, mut end) = (0, b.len());
    // `char::is_whitespace`'s ASCII members (`u8::is_ascii_whitespace` leaves out \x0b).
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r');
    while start < end && space(b[start]) {
        start += 1;
    }
    while end > start && space(b[end - 1]) {
        end -= 1;
    }
    let t = &cell[start..end];
    match (t.as_bytes().first(), t.as_bytes().last()) {
        (Some(f), Some(l)) if !f.is_ascii() || !l.is_ascii() => t.trim(),
        _ => t,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        #[test]
        fn trim_cell_is_trim(s in "[ \t\r\n\x0b\x0c\u{a0}\u{2003}\u{85}a-z0-9|*.-]{0,12}") {
            proptest::prop_assert_eq!(trim_cell(&s), s.trim());
        }
    }

    #[test]
    fn gpu_cells_with_a_count_either_side() {
        assert_eq!(gpu_and_count("8xH100"), Some((8, "H100")));
        assert_eq!(gpu_and_count("8 x H100"), Some((8, "H100")));
        assert_eq!(
            gpu_and_count("NVIDIA H100 80GB HBM3 x 2"),
            Some((2, "NVIDIA H100 80GB HBM3"))
        );
        assert_eq!(gpu_and_count("A100 × 4"), Some((4, "A100")));
        assert_eq!(gpu_and_count("RTX 4090"), None);
        assert_eq!(gpu_and_count("MI300X"), None);
        assert_eq!(gpu_and_count("H100"), None);
        assert_eq!(gpu_and_count("A100 x"), None);
    }

    #[test]
    fn plain_decimals_read_exactly_as_std_parses_them() {
        let mut cases: Vec<String> = [
            "0",
            "-0",
            "5.",
            ".5",
            "-.5",
            "1024",
            "40.370",
            "0.1",
            "0.3",
            "1500.00",
            "123456789012345",
            "12345678901234.5",
            "9007199254740993",
            "1234567890123456",
            "0.000000000000001",
            "99.99999999999999",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 16) as usize + 1;
            let text = format!("{:016}", x % 10_000_000_000_000_000);
            let mut t = text[16 - digits..].to_string();
            let at = (x >> 40) as usize % (digits + 1);
            if x & 1 == 0 {
                t.insert(at, '.');
            }
            if x & 2 == 0 {
                t.insert(0, '-');
            }
            cases.push(t);
        }
        for c in &cases {
            if let Some(v) = plain_decimal(c) {
                let expected: f64 = c.parse().unwrap();
                assert_eq!(v.to_bits(), expected.to_bits(), "{c}");
            }
            // Read as a prefix, up to a delimiter, the same.
            let row = format!("{c},7");
            let got = decimal_prefix(row.as_bytes(), 0);
            match plain_decimal(c) {
                Some(v) => assert_eq!(got, Ok((Some(v), c.len())), "{c}"),
                None => assert!(!matches!(got, Ok((Some(_), end)) if end == c.len()), "{c}"),
            }
        }
        assert_eq!(decimal_prefix(b"a,1.5\n", 2), Ok((Some(1.5), 5)));
        assert_eq!(decimal_prefix(b"a,,", 2), Ok((None, 2)));
        assert_eq!(decimal_prefix(b"-,", 0), Err(()));
        assert_eq!(decimal_prefix(b"12.5.1", 0), Ok((Some(12.5), 4)));
        for not in [
            "", "-", ".", "-.", "1.2.3", "1e3", "+1", "1,024", "inf", "nan", " 1", "1 ",
        ] {
            assert_eq!(plain_decimal(not), None, "{not:?}");
        }
        assert_eq!(plain_decimal("40.370"), Some(40.37));
    }
}
