//! Summary statistics over latency samples, defined exactly as vLLM's serving benchmark defines
//! them (numpy): mean, median, population standard deviation and percentiles by linear
//! interpolation between closest ranks ([`percentile_sorted`], shared with the explorer).
//! Pure; must not import app code.

use crate::analysis::stats::percentile_sorted;

/// Summary of one latency family (milliseconds).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    /// Number of samples.
    pub count: usize,
    /// Arithmetic mean.
    pub mean: f64,
    /// Median (numpy `median`, equal to the 50th percentile).
    pub median: f64,
    /// Population standard deviation (numpy `std`, ddof = 0).
    pub std: f64,
    /// Requested percentiles as `(p, value)`.
    pub percentiles: Vec<(f64, f64)>,
}

/// Summarises samples; `None` when there are none (vLLM would print 0, we omit the metric).
pub fn summarize(samples: &[f64], percentiles: &[f64]) -> Option<Summary> {
    if samples.is_empty() {
        return None;
    }
    summarize_owned(samples.to_vec(), percentiles)
}

/// [`summarize`] of samples it may reorder: sorted in place, not copied (the same figures).
pub fn summarize_owned(mut sorted: Vec<f64>, percentiles: &[f64]) -> Option<Summary> {
    sorted.retain(|v| !v.is_nan());
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len() as f64;
    let mean = sorted.iter().sum::<f64>() / n;
    let var = sorted.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n;
    Some(Summary {
        count: sorted.len(),
        mean,
        median: percentile_sorted(&sorted, 50.0).unwrap_or(0.0),
        std: var.sqrt(),
        percentiles: percentiles
            .iter()
            .filter_map(|&p| percentile_sorted(&sorted, p).map(|v| (p, v)))
            .collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_numpy_linear_percentiles() {
        // np.percentile([1,2,3,4], [50, 90, 99]) == [2.5, 3.7, 3.97]
        let s = summarize(&[4.0, 1.0, 3.0, 2.0], &[50.0, 90.0, 99.0]).unwrap();
        assert_eq!(s.median, 2.5);
        assert!((s.percentiles[1].1 - 3.7).abs() < 1e-12);
        assert!((s.percentiles[2].1 - 3.97).abs() < 1e-12);
        assert_eq!(s.mean, 2.5);
        // np.std([1,2,3,4]) == 1.118033988749895
        assert!((s.std - 1.118_033_988_749_895).abs() < 1e-12);
    }

    #[test]
    fn single_sample_and_empty() {
        let s = summarize(&[7.0], &[99.0]).unwrap();
        assert_eq!(
            (s.mean, s.median, s.std, s.percentiles[0].1),
            (7.0, 7.0, 0.0, 7.0)
        );
        assert!(summarize(&[], &[99.0]).is_none());
    }

    proptest::proptest! {
        #[test]
        fn percentiles_are_monotonic_and_within_the_samples(
            mut v in proptest::collection::vec(-1e6f64..1e6, 1..200),
            a in 0.0f64..100.0,
            b in 0.0f64..100.0,
        ) {
            v.sort_by(f64::total_cmp);
            let (lo, hi) = if a <= b { (a, b) } else { (b, a) };
            let (pl, ph) = (percentile_sorted(&v, lo).unwrap(), percentile_sorted(&v, hi).unwrap());
            proptest::prop_assert!(pl <= ph);
            proptest::prop_assert!(v[0] <= pl && ph <= v[v.len() - 1]);
            let s = summarize(&v, &[50.0]).unwrap();
            proptest::prop_assert_eq!(s.median, s.percentiles[0].1);
            proptest::prop_assert!(s.std >= 0.0);
        }
    }

    #[test]
    fn percentile_bounds_are_min_and_max() {
        let v: Vec<f64> = (0..101).map(f64::from).collect();
        assert_eq!(percentile_sorted(&v, 0.0), Some(0.0));
        assert_eq!(percentile_sorted(&v, 100.0), Some(100.0));
        assert_eq!(percentile_sorted(&v, 99.9), Some(99.9));
    }
}
