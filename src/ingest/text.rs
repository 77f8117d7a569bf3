//! Bytes to text: byte-order marks, UTF-16, invalid UTF-8 and binary data, plus the small
//! number and unit parsers every text reader shares.

use std::borrow::Cow;

use super::{IngestError, Warning};

/// The banner of a summary block: a text holding it is console output.
pub(crate) const BANNER: &str = "Serving Benchmark Result";

/// A file's content as text, with what decoding had to do.
pub(crate) struct Decoded<'a> {
    pub text: Cow<'a, str>,
    pub warnings: Vec<Warning>,
}

/// Decodes `bytes`: strips a UTF-8 byte-order mark, decodes UTF-16 with a byte-order mark,
/// replaces invalid UTF-8 (with a warning) and rejects binary data.
pub(crate) fn decode<'a>(source: &str, bytes: &'a [u8]) -> Result<Decoded<'a>, IngestError> {
    let mut warnings = Vec::new();
    if bytes.is_empty() {
        return Err(IngestError::Empty {
            file: source.to_string(),
        });
    }
    let text: Cow<'a, str> = if let Some(rest) = bytes.strip_prefix(b"\xEF\xBB\xBF") {
        utf8(rest, &mut warnings)
    } else if let Some(rest) = bytes.strip_prefix(b"\xFF\xFE") {
        warnings.push(Warning::file("decoded from UTF-16 (little-endian)"));
        Cow::Owned(utf16(rest, u16::from_le_bytes))
    } else if let Some(rest) = bytes.strip_prefix(b"\xFE\xFF") {
        warnings.push(Warning::file("decoded from UTF-16 (big-endian)"));
        Cow::Owned(utf16(rest, u16::from_be_bytes))
    } else if looks_utf16le_without_bom(bytes) {
        warnings.push(Warning::file(
            "decoded from UTF-16 (little-endian, no byte-order mark)",
        ));
        Cow::Owned(utf16(bytes, u16::from_le_bytes))
    } else {
        utf8(bytes, &mut warnings)
    };
    if let Some(offset) = binary_offset(&text) {
        return Err(IngestError::Binary {
            file: source.to_string(),
            offset,
        });
    }
    if text.trim().is_empty() {
        return Err(IngestError::Empty {
            file: source.to_string(),
        });
    }
    Ok(Decoded { text, warnings })
}

fn utf8<'a>(bytes: &'a [u8], warnings: &mut Vec<Warning>) -> Cow<'a, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Cow::Borrowed(s),
        Err(e) => {
            let line = 1 + memchr::memchr_iter(b'\n', &bytes[..e.valid_up_to()]).count();
            warnings.push(Warning::line(
                line,
                "invalid UTF-8 replaced with \u{FFFD} (is the file in another encoding?)",
            ));
            String::from_utf8_lossy(bytes)
        }
    }
}

fn utf16(bytes: &[u8], unit: fn([u8; 2]) -> u16) -> String {
    let units = bytes.chunks_exact(2).map(|c| unit([c[0], c[1]]));
    char::decode_utf16(units)
        .map(|c| c.unwrap_or(char::REPLACEMENT_CHARACTER))
        .collect()
}

/// ASCII text saved as UTF-16LE without a BOM: every odd byte of the first few is zero.
fn looks_utf16le_without_bom(bytes: &[u8]) -> bool {
    let head = &bytes[..bytes.len().min(64)];
    head.len() >= 8
        && head.len().is_multiple_of(2)
        && head.chunks_exact(2).all(|c| c[0] != 0 && c[1] == 0)
}

/// The byte offset of the first character that no text file holds (NUL and most controls),
/// looking at the first 64 KiB plus a sample; a few stray control characters are tolerated.
fn binary_offset(text: &str) -> Option<usize> {
    let mut bad = 0usize;
    let mut first = None;
    let mut seen = 0usize;
    for (i, c) in text.char_indices() {
        seen += 1;
        if seen > 65_536 {
            break;
        }
        let is_bad =
            c == '\0' || (c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{0C}' | '\u{1B}'));
        if is_bad {
            first.get_or_insert(i);
            bad += 1;
            if c == '\0' || bad > 8 {
                return first;
            }
        }
    }
    let replaced = text
        .chars()
        .take(65_536)
        .filter(|c| *c == char::REPLACEMENT_CHARACTER)
        .count();
    if replaced > 16 && replaced * 10 > seen.min(65_536) {
        return Some(0);
    }
    None
}

/// What format detection and the table readers learn from every byte of a text, found in one
/// pass over it ([`Scan::of`]) rather than one pass each: for a large CSV, which holds none of
/// the marks and no console banner, each pass is a read of the whole text from memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Scan {
    /// The text holds a `{`, `|` or backtick (templates need a `{`, markdown tables a `|`,
    /// fenced blocks a backtick).
    pub marked: bool,
    /// The text holds the vLLM console banner ([`BANNER`]).
    pub console: bool,
    /// `\n` bytes in the text (a table's rows to make room for).
    pub newlines: usize,
}

/// Bytes [`Scan::of`] looks at at a time: each piece is read from memory once and looked at
/// three times while it is in the nearest cache.
const SCAN_PIECE: usize = 8 << 10;

impl Scan {
    /// The scan of `text`: `marked` and `console` as `memchr3` and `str::contains` over the
    /// whole text give them, `newlines` as a count over it.
    pub(crate) fn of(text: &str) -> Scan {
        let bytes = text.as_bytes();
        let banner = BANNER.as_bytes();
        let finder = memchr::memmem::Finder::new(banner);
        // A banner may straddle two pieces: each search starts this much before its piece.
        let overlap = banner.len().saturating_sub(1);
        let mut scan = Scan::default();
        for (k, piece) in bytes.chunks(SCAN_PIECE).enumerate() {
            scan.marked = scan.marked || memchr::memchr3(b'{', b'|', b'`', piece).is_some();
            if !scan.console {
                let start = (k * SCAN_PIECE).saturating_sub(overlap);
                let end = k * SCAN_PIECE + piece.len();
                scan.console = bytes
                    .get(start..end)
                    .is_some_and(|b| finder.find(b).is_some());
            }
            scan.newlines += memchr::memchr_iter(b'\n', piece).count();
        }
        scan
    }
}

/// A short description of unrecognised text for error messages.
pub(crate) fn describe(text: &str) -> String {
    let first = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("");
    let shown: String = first.chars().take(60).collect();
    let ellipsis = if first.chars().count() > 60 {
        "…"
    } else {
        ""
    };
    format!("line 1 reads {shown:?}{ellipsis}")
}

/// The lines of `text` as `str::lines` gives them (`\n` or `\r\n` ends, no empty last line),
/// found by `memchr` (a long table is millions of short lines).
pub(crate) fn lines_of(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let (line, next) = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(i) => (&rest[..i], &rest[i + 1..]),
            None => (rest, ""),
        };
        rest = next;
        Some(line.strip_suffix('\r').unwrap_or(line))
    })
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
pub(crate) fn decimal_prefix(b: &[u8], start: usize) -> Result<(Option<f64>, usize), ()> {
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

/// A number with an optional unit, as written in a table cell: `25,342`, `12.34 ms`,
/// `1234.5 tokens/secs`, `8.5%`, `inf`.
pub(crate) fn parse_quantity(cell: &str) -> Option<(f64, &str)> {
    let t = trim_cell(cell);
    if t.is_empty() {
        return None;
    }
    // Most cells are plain decimals: read exactly as `parse_number_text` reads them.
    if let Some(v) = plain_decimal(t) {
        return Some((v, ""));
    }
    if let Some(v) = crate::model::canonical::parse_number_text(t) {
        return Some((v, ""));
    }
    let end = t
        .char_indices()
        .find(|(_, c)| !(c.is_ascii_digit() || matches!(c, '.' | ',' | '-' | '+' | 'e' | 'E')))
        .map_or(t.len(), |(i, _)| i);
    // Do not read "e" of a unit as an exponent: back off to the last digit.
    let mut num_end = end;
    while num_end > 0 && !t.as_bytes()[num_end - 1].is_ascii_digit() {
        num_end -= 1;
    }
    if num_end == 0 {
        return None;
    }
    let v = crate::model::canonical::parse_number_text(&t[..num_end])?;
    Some((v, t[num_end..].trim()))
}

/// The factor that turns a duration in `unit` into milliseconds, when `unit` is one.
pub(crate) fn to_ms_factor(unit: &str) -> Option<f64> {
    let u = unit.trim();
    let any = |names: &[&str]| names.iter().any(|n| u.eq_ignore_ascii_case(n));
    if any(&["ms", "msec", "millisecond", "milliseconds"]) {
        Some(1.0)
    } else if any(&["s", "sec", "secs", "second", "seconds"]) {
        Some(1000.0)
    } else if any(&["us", "µs", "μs", "microsecond", "microseconds"]) {
        Some(1e-3)
    } else if any(&["ns", "nanosecond", "nanoseconds"]) {
        Some(1e-6)
    } else if any(&["min", "minute", "minutes"]) {
        Some(60_000.0)
    } else {
        None
    }
}

/// snake_case of a free-form name: `Avg latency (ms)` → `avg_latency_ms`.
pub(crate) fn snake(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    let mut prev_lower = false;
    for c in name.chars() {
        let decimal_point = c == '.' && out.ends_with(|p: char| p.is_ascii_digit());
        if c.is_alphanumeric() || decimal_point {
            if c.is_uppercase() && prev_lower {
                out.push('_');
            }
            prev_lower = c.is_lowercase() || c.is_ascii_digit();
            out.extend(c.to_lowercase());
        } else {
            if !out.ends_with('_') && !out.is_empty() {
                out.push('_');
            }
            prev_lower = false;
        }
    }
    while out.ends_with('_') || out.ends_with('.') {
        out.pop();
    }
    out
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

    #[test]
    fn a_scan_finds_what_whole_text_searches_find_across_its_pieces() {
        let banner = super::BANNER;
        // The banner and each mark at every offset around a piece's end, in a text of
        // several pieces.
        for at in (SCAN_PIECE - banner.len() - 2)..(SCAN_PIECE + 2) {
            let mut text = "a,b\n".repeat(3 * SCAN_PIECE / 4);
            text.replace_range(at..at + banner.len(), banner);
            let scan = Scan::of(&text);
            assert_eq!(
                scan,
                Scan {
                    marked: false,
                    console: true,
                    newlines: memchr::memchr_iter(b'\n', text.as_bytes()).count(),
                },
                "banner at {at}"
            );
            for mark in ["{", "|", "`"] {
                let mut marked = "1\n".repeat(2 * SCAN_PIECE);
                marked.replace_range(at + SCAN_PIECE..at + SCAN_PIECE + 1, mark);
                assert_eq!(
                    Scan::of(&marked),
                    Scan {
                        marked: true,
                        console: false,
                        newlines: 2 * SCAN_PIECE - usize::from(at % 2 == 1),
                    },
                    "{mark} at {at}"
                );
            }
        }
        // Cut anywhere, the banner is not found.
        for cut in 1..banner.len() {
            let text = format!("{}\n{}", &banner[..cut], &banner[cut..]);
            assert_eq!(
                Scan::of(&text),
                Scan {
                    marked: false,
                    console: false,
                    newlines: 1
                }
            );
        }
        assert_eq!(Scan::of(""), Scan::default());
    }

    #[test]
    fn boms_and_utf16_are_decoded() {
        let d = decode("f", b"\xEF\xBB\xBF{\"a\":1}").unwrap();
        assert_eq!(d.text, "{\"a\":1}");
        let mut le = vec![0xFF, 0xFE];
        for u in "{\"a\": 1}".encode_utf16() {
            le.extend(u.to_le_bytes());
        }
        assert_eq!(decode("f", &le).unwrap().text, "{\"a\": 1}");
        let mut be = vec![0xFE, 0xFF];
        for u in "x,y".encode_utf16() {
            be.extend(u.to_be_bytes());
        }
        assert_eq!(decode("f", &be).unwrap().text, "x,y");
    }

    #[test]
    fn binary_is_rejected() {
        let e = decode("f.bin", &[0x89, b'P', b'N', b'G', 0, 0, 1, 2]).err();
        assert!(matches!(e, Some(IngestError::Binary { .. })), "{e:?}");
    }

    #[test]
    fn quantities_with_units() {
        assert_eq!(parse_quantity("12.34 ms"), Some((12.34, "ms")));
        assert_eq!(
            parse_quantity("1234.5 tokens/secs"),
            Some((1234.5, "tokens/secs"))
        );
        assert_eq!(parse_quantity("25,342"), Some((25342.0, "")));
        assert_eq!(parse_quantity("3e2"), Some((300.0, "")));
        assert_eq!(parse_quantity("5e"), None.or(Some((5.0, "e"))));
        assert_eq!(parse_quantity("ok"), None);
    }

    #[test]
    fn snake_case_names() {
        assert_eq!(
            snake("Average latency per token (ms)"),
            "average_latency_per_token_ms"
        );
        assert_eq!(snake("batchSize"), "batch_size");
        assert_eq!(snake("nrGPUs"), "nr_gpus");
        assert_eq!(snake("# of req."), "of_req");
        assert_eq!(snake("p99.9 TTFT"), "p99.9_ttft");
    }
}
