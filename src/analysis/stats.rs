//! Statistics on plain numbers: percentiles as numpy computes them by default (linear
//! interpolation between closest ranks), mean, empirical CDF and equal-width histograms.
//! Non-finite inputs (NaN, ±inf) are dropped by [`sorted_finite`] before any of these run.

/// The finite values of `values`, sorted ascending.
pub fn sorted_finite(values: impl IntoIterator<Item = f64>) -> Vec<f64> {
    let mut v: Vec<f64> = values.into_iter().collect();
    sort_finite_in_place(&mut v);
    v
}

/// Drops the values that are not finite and sorts the rest ascending, in place: no second
/// vector (an unstable sort needs no scratch space, and values equal under `total_cmp` are
/// the same bits, so the order is the stable sort's).
pub fn sort_finite_in_place(values: &mut Vec<f64>) {
    values.retain(|x| x.is_finite());
    crate::model::order::sort_floats(values);
}

/// The `p`-th percentile (0 ≤ p ≤ 100) of ascending `sorted` values, numpy's default
/// `linear` method: rank h = p / 100 × (n − 1), value = x⌊h⌋ + (x⌈h⌉ − x⌊h⌋) × (h − ⌊h⌋).
/// The one percentile of the crate: the explorer's distributions and the load generator's
/// summaries (vLLM's figures) both use it.
///
/// - `None` for no values, and for p outside 0..=100 or NaN (numpy refuses those too); a
///   caller's p = 150 is a mistake to report, not the maximum.
/// - A rank that falls on a value gives that value exactly, also when it is ±inf (p0 of
///   `[1, inf]` is 1; numpy's arithmetic would give NaN from inf × 0).
/// - Between a finite and an infinite value the result is the infinite one (the limit of the
///   interpolation); between −inf and +inf there is none, so `None`.
/// - The result is clamped to its two neighbours so rounding can never break monotonicity.
pub fn percentile_sorted(sorted: &[f64], p: f64) -> Option<f64> {
    percentile_ranked(sorted.len(), p, |i| sorted.get(i).copied())
}

/// The two ranks (0-based, in sorted order) [`percentile_sorted`] reads of `len` values for
/// `p`; `None` where it reads none.
pub fn percentile_ranks(len: usize, p: f64) -> Option<[usize; 2]> {
    if len == 0 || !(0.0..=100.0).contains(&p) {
        return None;
    }
    let last = len - 1;
    let lo = ((p / 100.0 * last as f64).floor() as usize).min(last);
    Some([lo, (lo + 1).min(last)])
}

/// [`percentile_sorted`] of `len` sorted values that `at(rank)` gives, for values not held in
/// one slice (a streamed selection reads only the two ranks [`percentile_ranks`] names).
pub fn percentile_ranked(len: usize, p: f64, at: impl Fn(usize) -> Option<f64>) -> Option<f64> {
    let [lo, hi] = percentile_ranks(len, p)?;
    let t = p / 100.0 * (len - 1) as f64 - lo as f64;
    let a = at(lo)?;
    let b = at(hi)?;
    if t == 0.0 || a == b {
        return Some(a);
    }
    match (a.is_infinite(), b.is_infinite()) {
        (true, true) => None,
        (true, false) => Some(a),
        (false, true) => Some(b),
        (false, false) => Some((a + (b - a) * t).clamp(a.min(b), a.max(b))),
    }
}

/// The `p`-th percentile of unsorted values (non-finite ones dropped); see
/// [`percentile_sorted`].
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    percentile_sorted(&sorted_finite(values.iter().copied()), p)
}

/// The arithmetic mean of the finite values, `None` when there are none.
pub fn mean(values: &[f64]) -> Option<f64> {
    // Summed in order from -0.0, as `Sum` does, without a copy of the values (a distribution of
    // 20 million gaps copied them into a vector grown by doubling: 270 MB).
    let (sum, n) = values
        .iter()
        .filter(|v| v.is_finite())
        .fold((-0.0, 0usize), |(sum, n), v| (sum + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The empirical CDF of ascending `sorted` values: for each distinct value, the fraction of
/// values ≤ it (0 < fraction ≤ 1).
pub fn ecdf(sorted: &[f64]) -> Vec<(f64, f64)> {
    let n = sorted.len() as f64;
    let mut out: Vec<(f64, f64)> = Vec::new();
    for (i, &v) in sorted.iter().enumerate() {
        let frac = (i + 1) as f64 / n;
        match out.last_mut() {
            Some(last) if last.0 == v => last.1 = frac,
            _ => out.push((v, frac)),
        }
    }
    out
}

/// The empirical CDF of ascending `sorted` values in at most `max_points` steps: the exact
/// [`ecdf`] when it has that few, else its points at evenly spaced fractions (each the exact
/// fraction of values ≤ that value), always with the smallest and the largest value. Drawn as
/// steps, it is within `1 / max_points` of the whole CDF everywhere, so a million requests make
/// a chart of a few thousand points instead of a million.
pub fn ecdf_thinned(sorted: &[f64], max_points: usize) -> Vec<(f64, f64)> {
    let n = sorted.len();
    if n <= max_points || max_points < 2 {
        return ecdf(sorted);
    }
    let frac_at = |v: f64| sorted.partition_point(|x| *x <= v) as f64 / n as f64;
    let mut out: Vec<(f64, f64)> = Vec::with_capacity(max_points + 1);
    let mut push = |v: f64| match out.last() {
        Some(last) if last.0 == v => {}
        _ => out.push((v, frac_at(v))),
    };
    push(sorted[0]);
    for k in 1..=max_points {
        // The value below which a share k / max_points of the values lie.
        push(sorted[(k * n).div_ceil(max_points) - 1]);
    }
    out
}

/// One histogram bin: values in `[lo_value, hi_value)` (the last bin includes its upper edge).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HistogramBin {
    /// Lower edge.
    pub lo_value: f64,
    /// Upper edge.
    pub hi_value: f64,
    /// Values in the bin.
    pub count: usize,
}

/// `bins` equal-width bins from the minimum to the maximum of ascending `sorted` values
/// (one bin of width 1 around the value when all are equal). Empty for no values or 0 bins.
pub fn histogram(sorted: &[f64], bins: usize) -> Vec<HistogramBin> {
    match (sorted.first(), sorted.last()) {
        (Some(&min), Some(&max)) => histogram_range(sorted, min, max, bins),
        _ => Vec::new(),
    }
}

/// `bins` equal-width bins over `[lo_value, hi_value]` (so several series can share edges);
/// values outside the range are not counted. One bin of width 1 around `lo_value` when the
/// range is empty. Empty for 0 bins or a non-finite range.
pub fn histogram_range(
    sorted: &[f64],
    lo_value: f64,
    hi_value: f64,
    bins: usize,
) -> Vec<HistogramBin> {
    if bins == 0 || !lo_value.is_finite() || !hi_value.is_finite() || hi_value < lo_value {
        return Vec::new();
    }
    let (lo, hi, bins) = if hi_value > lo_value {
        (lo_value, hi_value, bins)
    } else {
        (lo_value - 0.5, lo_value + 0.5, 1)
    };
    let width = (hi - lo) / bins as f64;
    let mut out: Vec<HistogramBin> = (0..bins)
        .map(|i| HistogramBin {
            lo_value: lo + width * i as f64,
            hi_value: if i + 1 == bins {
                hi
            } else {
                lo + width * (i + 1) as f64
            },
            count: 0,
        })
        .collect();
    for &v in sorted {
        if v < lo || v > hi {
            continue;
        }
        let i = (((v - lo) / width).floor() as usize).min(bins - 1);
        out[i].count += 1;
    }
    out
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_thinned_ecdf_is_bounded_exact_at_its_points_and_close_everywhere() {
        // A million values with ties (a thousand distinct ones repeated) and a long tail.
        let mut v: Vec<f64> = (0..1_000_000u64)
            .map(|i| ((i * 7919) % 1000) as f64 + if i % 1000 == 0 { i as f64 } else { 0.0 })
            .collect();
        v.sort_by(f64::total_cmp);
        let full = ecdf(&v);
        let thin = ecdf_thinned(&v, 2000);
        assert!(thin.len() <= 2001, "{}", thin.len());
        assert_eq!(thin.first().map(|p| p.0), v.first().copied());
        assert_eq!(thin.last(), full.last());
        // Every point is a point of the whole CDF.
        for p in &thin {
            let i = full.partition_point(|q| q.0 < p.0);
            assert_eq!(full[i], *p);
        }
        // As steps, never further than 1 / 2000 from the whole CDF.
        for (x, f) in &full {
            let i = thin.partition_point(|q| q.0 <= *x);
            let drawn = if i == 0 { 0.0 } else { thin[i - 1].1 };
            assert!(f - drawn <= 1.0 / 2000.0 + 1e-12, "at {x}: {f} vs {drawn}");
        }
        // Few values: the whole CDF.
        assert_eq!(ecdf_thinned(&v[..10], 2000), ecdf(&v[..10]));
        assert!(ecdf_thinned(&[], 2000).is_empty());
    }
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn percentiles_match_numpy_linear() {
        // numpy.percentile([1, 2, 3, 4], [0, 25, 50, 90, 100]) == [1, 1.75, 2.5, 3.7, 4]
        let v = [4.0, 1.0, 3.0, 2.0];
        let got: Vec<f64> = [0.0, 25.0, 50.0, 90.0, 100.0]
            .iter()
            .map(|&p| percentile(&v, p).unwrap())
            .collect();
        let want = [1.0, 1.75, 2.5, 3.7, 4.0];
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?}");
        }
        assert_eq!(percentile(&[], 50.0), None);
        assert_eq!(percentile(&[1.0], 101.0), None);
        assert_eq!(percentile(&[f64::NAN, 7.0], 50.0), Some(7.0));
    }

    /// Where the explorer's and the load generator's copies differed: p outside 0..=100
    /// (the load generator clamped it) and infinite values (both gave NaN at some ranks).
    #[test]
    fn percentile_edges_outside_the_range_and_at_infinity() {
        let v = [1.0, 2.0, 3.0, 4.0];
        assert_eq!(percentile_sorted(&v, 100.5), None);
        assert_eq!(percentile_sorted(&v, -0.1), None);
        assert_eq!(percentile_sorted(&v, f64::NAN), None);
        assert_eq!(percentile_sorted(&v, 100.0), Some(4.0));
        let inf = f64::INFINITY;
        // A rank on a value: that value, even next to an infinity.
        assert_eq!(percentile_sorted(&[1.0, inf], 0.0), Some(1.0));
        assert_eq!(percentile_sorted(&[1.0, inf], 100.0), Some(inf));
        assert_eq!(percentile_sorted(&[-inf, 1.0], 0.0), Some(-inf));
        assert_eq!(percentile_sorted(&[inf, inf], 50.0), Some(inf));
        // Between a finite value and an infinity: the infinity.
        assert_eq!(percentile_sorted(&[1.0, inf], 50.0), Some(inf));
        assert_eq!(percentile_sorted(&[-inf, 1.0], 50.0), Some(-inf));
        // Between −inf and +inf: no value.
        assert_eq!(percentile_sorted(&[-inf, inf], 50.0), None);
        assert_eq!(percentile_sorted(&[-inf, 0.0, inf], 50.0), Some(0.0));
    }

    #[test]
    fn ecdf_and_histogram() {
        let s = [1.0, 2.0, 2.0, 4.0];
        assert_eq!(ecdf(&s), vec![(1.0, 0.25), (2.0, 0.75), (4.0, 1.0)]);
        let h = histogram(&s, 3);
        assert_eq!(h.iter().map(|b| b.count).collect::<Vec<_>>(), [1, 2, 1]);
        assert_eq!(h[2].hi_value, 4.0);
        assert_eq!(histogram(&[3.0, 3.0], 10).len(), 1);
        assert_eq!(mean(&[1.0, 3.0, f64::INFINITY]), Some(2.0));
    }

    proptest! {
        #[test]
        fn percentile_is_monotone_and_within_range(
            values in prop::collection::vec(-1e9f64..1e9, 1..200),
            p in 0.0f64..=100.0,
            q in 0.0f64..=100.0,
        ) {
            let sorted = sorted_finite(values.iter().copied());
            let (lo, hi) = if p <= q { (p, q) } else { (q, p) };
            let a = percentile_sorted(&sorted, lo).unwrap();
            let b = percentile_sorted(&sorted, hi).unwrap();
            prop_assert!(a <= b, "p{lo} = {a} > p{hi} = {b}");
            prop_assert!(a >= sorted[0] && b <= sorted[sorted.len() - 1]);
        }

        #[test]
        fn histogram_counts_every_value(
            values in prop::collection::vec(-1e6f64..1e6, 0..200),
            bins in 1usize..40,
        ) {
            let sorted = sorted_finite(values.iter().copied());
            let total: usize = histogram(&sorted, bins).iter().map(|b| b.count).sum();
            prop_assert_eq!(total, sorted.len());
        }
    }
}
