//! Rows of a CSV without quotes split by hand, eight bytes at a time, into cells borrowed from
//! the text: the same rows, lines and blank-row skipping as the `csv` crate gives.

/// Rows of a CSV without quotes: rows end at `\n` or `\r` (so `\r\n` too, the `\n` then
/// being an empty line), cells at the delimiter, borrowed from the text. Empty lines are no
/// row and blank rows (every cell empty after trimming) are skipped, as with the `csv` crate
/// and [`next_row`](super::delimited::next_row).
pub(super) struct PlainRows<'a> {
    pub(super) rest: &'a str,
    /// 1 + the newlines consumed so far.
    pub(super) line: usize,
    /// The line the `csv` crate reports for the next row: where the reader stood after the
    /// previous row's terminator (empty lines are skipped while reading the next row, and a
    /// `\r\n`'s `\n` is consumed by the next row too).
    pub(super) reported: usize,
    pub(super) delimiter: u8,
}

impl<'a> PlainRows<'a> {
    /// Whether `text` splits the same by hand as through the `csv` crate: no quote at all.
    pub(super) fn applies(text: &str) -> bool {
        memchr::memchr(b'"', text.as_bytes()).is_none()
    }

    /// Steps over a row of `used` bytes read by another reader, ending at `\n` or `\r\n`
    /// (included), leaving the lines as [`next`](PlainRows::next) would have.
    pub(super) fn advance(&mut self, used: usize) {
        let bytes = self.rest.as_bytes();
        let crlf = used >= 2 && bytes.get(used - 2) == Some(&b'\r');
        if crlf {
            // The row ends at `\r`; its `\n` is an empty line, stepped over by the next row.
            self.reported = self.line;
            self.line += 1;
        } else {
            self.line += 1;
            self.reported = self.line;
        }
        self.rest = self.rest.get(used..).unwrap_or("");
    }

    /// Steps over empty lines (`\n` or a lone `\r`) at the start of the rest, as
    /// [`next`](PlainRows::next) does: they are no row (a `\r\n` row leaves its `\n` here).
    pub(super) fn skip_empty_lines(&mut self) {
        let bytes = self.rest.as_bytes();
        let mut at = 0;
        while let Some(&b) = bytes.get(at) {
            match b {
                b'\n' => self.line += 1,
                b'\r' => {}
                _ => break,
            }
            at += 1;
        }
        self.rest = self.rest.get(at..).unwrap_or("");
    }

    /// The next non-blank row's cells into `cells` and its line.
    pub(super) fn next(&mut self, cells: &mut Vec<&'a str>) -> Option<usize> {
        while !self.rest.is_empty() {
            // The line, then its cells at each delimiter.
            let text = self.rest;
            let bytes = text.as_bytes();
            cells.clear();
            let end = split_line(text, self.delimiter, cells);
            if bytes.get(end) == Some(&b'\n') {
                self.line += 1;
            }
            self.rest = text.get(end + 1..).unwrap_or("");
            if end == 0 {
                // An empty line is no row at all for the `csv` crate.
                continue;
            }
            let at = self.reported;
            self.reported = self.line;
            if cells.iter().all(|c| c.trim().is_empty()) {
                continue;
            }
            return Some(at);
        }
        None
    }
}

/// Bytes of `x` that are zero, as the high bit of each byte (exact: no carries between bytes).
#[inline]
fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
}

/// Splits the first line of `text` (up to `\n`, `\r` or the end) at `delimiter` into `cells`
/// and returns where the line ends. Eight bytes are looked at a time: a table row is some
/// tens of bytes with a delimiter every few, where searching for each one on its own costs
/// more than the search.
#[inline]
fn split_line<'a>(text: &'a str, delimiter: u8, cells: &mut Vec<&'a str>) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let bytes = text.as_bytes();
    let (d, lf, cr) = (
        ONES * u64::from(delimiter),
        ONES * u64::from(b'\n'),
        ONES * u64::from(b'\r'),
    );
    let mut start = 0;
    let mut i = 0;
    while let Some(word) = bytes.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        let mut delims = zero_bytes(w ^ d);
        let ends = zero_bytes(w ^ lf) | zero_bytes(w ^ cr);
        let end = (ends != 0).then(|| ends.trailing_zeros() / 8);
        if let Some(e) = end {
            // Only the delimiters before the line's end.
            delims &= (1u64 << (e * 8)) - 1;
        }
        while delims != 0 {
            let at = i + (delims.trailing_zeros() / 8) as usize;
            cells.push(&text[start..at]);
            start = at + 1;
            delims &= delims - 1;
        }
        if let Some(e) = end {
            let at = i + e as usize;
            cells.push(&text[start..at]);
            return at;
        }
        i += 8;
    }
    for (k, &b) in bytes[i..].iter().enumerate() {
        let at = i + k;
        if b == b'\n' || b == b'\r' {
            cells.push(&text[start..at]);
            return at;
        }
        if b == delimiter {
            cells.push(&text[start..at]);
            start = at + 1;
        }
    }
    cells.push(&text[start..]);
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_line_splits_as_a_search_per_delimiter_does() {
        let alphabet = ["a", "bc", ",", ";", "\n", "\r", "é", " ", "1.5"];
        let mut x: u64 = 7;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (x >> 58) as usize;
            let mut text = String::new();
            let mut y = x;
            for _ in 0..len {
                y = y.wrapping_mul(6364136223846793005).wrapping_add(1);
                text.push_str(alphabet[(y >> 60) as usize % alphabet.len()]);
            }
            for delimiter in [b',', b';'] {
                let end = text.find(['\n', '\r']).unwrap_or(text.len());
                let expected: Vec<&str> = text[..end].split(delimiter as char).collect();
                let mut cells = Vec::new();
                assert_eq!(split_line(&text, delimiter, &mut cells), end, "{text:?}");
                assert_eq!(cells, expected, "{text:?}");
            }
        }
    }
}
