//! Reading one cell: numbers (a plain decimal read exactly without `str::parse`, then
//! thousands separators and units) and the plain text that can be taken as it is.

use crate::ingest::text::parse_quantity;
pub(crate) use crate::ingest::text::{decimal_prefix, plain_decimal, trim_cell};

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

#[cfg(test)]
mod tests {
    use super::*;

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
}
