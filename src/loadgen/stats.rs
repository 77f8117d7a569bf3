//! Summary statistics over latency samples, defined exactly as vLLM's serving benchmark defines
//! them (numpy): mean, median, population standard deviation and percentiles by linear
//! interpolation between closest ranks ([`percentile_sorted`], shared with the explorer).
//! Pure; must not import app code.

use std::collections::BTreeMap;

use crate::analysis::stats::{percentile_ranked, percentile_ranks, percentile_sorted};

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
    // Unstable: in place, where a stable sort allocates a scratch buffer of up to the samples'
    // size. Samples equal under `total_cmp` have the same bits, so the order is the same.
    sorted.sort_unstable_by(f64::total_cmp);
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

/// High bits of a sample's order key that [`summarize_streamed`] counts in its first pass: 2^20
/// buckets (8 MB of counts) split an octave of values into 256 buckets.
const BUCKET_BITS: u32 = 20;

/// [`summarize`] of samples too many to hold at once: `each` calls its argument once per sample,
/// and gives the same samples, in any order, every time it is called (twice here). The first
/// call counts and sums them and counts them per bucket of their high bits; the second sums the
/// squared deviations and keeps only the samples of the buckets holding the ranks the
/// percentiles read ([`percentile_ranks`]), which are sorted to give those ranks exactly. So the
/// median and percentiles are those of [`summarize`]; mean and std are summed in the order
/// given rather than sorted, which can change their last bits.
pub fn summarize_streamed(
    each: impl Fn(&mut dyn FnMut(f64)),
    percentiles: &[f64],
) -> Option<Summary> {
    let mut first = StreamedSummary::new();
    each(&mut |v| first.add(v));
    first.finish(each, percentiles)
}

/// [`summarize_streamed`] with its first pass fed one sample at a time as the samples come
/// (while a stage runs), and its second pass over the same samples, in the same order, at
/// [`finish`](StreamedSummary::finish): the same figures, bit for bit.
pub struct StreamedSummary {
    /// Samples per bucket of their high bits.
    counts: Vec<u64>,
    /// Samples (not NaN) so far.
    n: usize,
    /// Their sum, in the order given.
    sum: f64,
}

impl Default for StreamedSummary {
    fn default() -> StreamedSummary {
        StreamedSummary::new()
    }
}

impl StreamedSummary {
    /// No samples yet (8 MB of bucket counts).
    pub fn new() -> StreamedSummary {
        StreamedSummary {
            counts: vec![0u64; 1 << BUCKET_BITS],
            n: 0,
            sum: 0.0,
        }
    }

    /// The first pass over one sample.
    pub fn add(&mut self, v: f64) {
        if !v.is_nan() {
            self.n += 1;
            self.sum += v;
            self.counts[bucket(v)] += 1;
        }
    }

    /// The summary: `each` gives the samples [`add`](StreamedSummary::add) was given, in the
    /// same order, once more.
    pub fn finish(
        self,
        each: impl Fn(&mut dyn FnMut(f64)),
        percentiles: &[f64],
    ) -> Option<Summary> {
        let StreamedSummary { counts, n, sum } = self;
        if n == 0 {
            return None;
        }
        let mean = sum / n as f64;
        // The ranks read, and the bucket holding each: buckets in key order, so ranks add up.
        let mut wanted: BTreeMap<usize, (usize, usize)> = BTreeMap::new(); // rank -> (bucket, first rank in it)
        for p in percentiles.iter().copied().chain([50.0]) {
            for rank in percentile_ranks(n, p).into_iter().flatten() {
                wanted.insert(rank, (0, 0));
            }
        }
        let (mut below, mut b) = (0usize, 0usize);
        for (rank, slot) in wanted.iter_mut() {
            while below + counts[b] as usize <= *rank {
                below += counts[b] as usize;
                b += 1;
            }
            *slot = (b, below);
        }
        // Each wanted bucket's samples in a vector of exactly their number (the first pass
        // counted them): one bucket can hold a large share of the samples (a zero-delay server's
        // reads give the same tiny gap to many tokens), and a vector grown by doubling would hold
        // up to twice that and leave the smaller copies it went through resident.
        let mut kept: BTreeMap<usize, Vec<f64>> = wanted
            .values()
            .map(|&(b, _)| (b, Vec::with_capacity(counts[b] as usize)))
            .collect();
        drop(counts);
        let mut var_sum = 0.0f64;
        each(&mut |v| {
            if !v.is_nan() {
                var_sum += (v - mean).powi(2);
                if let Some(k) = kept.get_mut(&bucket(v)) {
                    k.push(v);
                }
            }
        });
        for k in kept.values_mut() {
            // In place, no scratch buffer (see `summarize_owned`).
            k.sort_unstable_by(f64::total_cmp);
        }
        let at = |rank: usize| {
            let &(b, first) = wanted.get(&rank)?;
            kept.get(&b)?.get(rank - first).copied()
        };
        Some(Summary {
            count: n,
            mean,
            median: percentile_ranked(n, 50.0, at).unwrap_or(0.0),
            std: (var_sum / n as f64).sqrt(),
            percentiles: percentiles
                .iter()
                .filter_map(|&p| percentile_ranked(n, p, at).map(|v| (p, v)))
                .collect(),
        })
    }
}

/// The bucket of a (non-NaN) sample: the high bits of a key that orders as `f64::total_cmp`.
fn bucket(v: f64) -> usize {
    let bits = v.to_bits();
    let key = if bits >> 63 == 1 {
        !bits
    } else {
        bits | 1 << 63
    };
    (key >> (64 - BUCKET_BITS)) as usize
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

    proptest::proptest! {
        #[test]
        fn streamed_summaries_give_the_same_percentiles(
            v in proptest::collection::vec(
                proptest::prop_oneof![
                    -1e6f64..1e6,
                    0.0f64..10.0,
                    proptest::sample::select(vec![0.0, -0.0, 5.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN]),
                ],
                0..400,
            ),
        ) {
            let p = [0.0, 1.0, 25.0, 50.0, 90.0, 99.0, 99.9, 100.0];
            let whole = summarize(&v, &p);
            let streamed = summarize_streamed(|f| v.iter().for_each(|&x| f(x)), &p);
            match (whole, streamed) {
                (None, None) => {}
                (Some(a), Some(b)) => {
                    proptest::prop_assert_eq!(a.count, b.count);
                    proptest::prop_assert_eq!(a.median.to_bits(), b.median.to_bits());
                    let bits = |s: &Summary| s.percentiles.iter().map(|(p, v)| (p.to_bits(), v.to_bits())).collect::<Vec<_>>();
                    proptest::prop_assert_eq!(bits(&a), bits(&b));
                    let close = |x: f64, y: f64| x == y || (x - y).abs() <= 1e-9 * x.abs().max(1.0) || (x.is_nan() && y.is_nan());
                    proptest::prop_assert!(close(a.mean, b.mean), "{} {}", a.mean, b.mean);
                    proptest::prop_assert!(close(a.std, b.std), "{} {}", a.std, b.std);
                }
                (a, b) => proptest::prop_assert!(false, "{a:?} against {b:?}"),
            }
        }
    }

    #[test]
    fn streamed_summary_of_many_equal_and_clustered_samples() {
        // A million samples in few buckets: every rank still exact.
        let v: Vec<f64> = (0..1_000_000u32)
            .map(|i| 5.0 + f64::from(i % 1000) * 1e-6)
            .collect();
        let p = [50.0, 99.0, 99.9];
        let a = summarize(&v, &p).unwrap();
        let b = summarize_streamed(|f| v.iter().for_each(|&x| f(x)), &p).unwrap();
        assert_eq!(
            (a.count, a.median, &a.percentiles),
            (b.count, b.median, &b.percentiles)
        );
        // Summed in another order: a million rounded additions of about 5 drift apart by
        // far less than a nanosecond.
        assert!((a.mean - b.mean).abs() < 1e-9 && (a.std - b.std).abs() < 1e-9);
    }

    #[test]
    fn percentile_bounds_are_min_and_max() {
        let v: Vec<f64> = (0..101).map(f64::from).collect();
        assert_eq!(percentile_sorted(&v, 0.0), Some(0.0));
        assert_eq!(percentile_sorted(&v, 100.0), Some(100.0));
        assert_eq!(percentile_sorted(&v, 99.9), Some(99.9));
    }
}
