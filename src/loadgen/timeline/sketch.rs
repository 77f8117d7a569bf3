//! One second's inter-token latencies, counted rather than held: [`LogCounts`], counts in
//! logarithmic buckets 1 % wide, as many as the second's values span (about 930 for values
//! from 10 µs to 100 ms: 3.7 KB, however many tokens arrived), plus the exact count, least and
//! greatest value.
//!
//! A percentile reads the same two ranks as [`crate::analysis::stats::percentile_sorted`] and
//! interpolates between them the same way, each rank's value taken as its bucket's middle
//! (clamped to the least and greatest value): within [`LogCounts::RELATIVE_ERROR`] (0.4975 %)
//! of the exact percentile, or [`LogCounts::MIN`] (1 ns) for values that small. The 0th and
//! 100th percentiles are exact.
//!
//! Why not a crate: `hdrhistogram` keeps a flat array for its whole range (about 30,000
//! counters for 1 µs..1 h at three significant digits, ~240 KB a histogram, too much for one a
//! second), and `sketches-ddsketch` answers quantiles by its own rank rule, not this crate's
//! interpolation between closest ranks; the buckets here are the ones of `benchlens inspect`'s
//! sketch of a per-request file, stored from the lowest bucket used to the highest.

/// Counts of values in logarithmic buckets (see the module doc).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LogCounts {
    /// Values ≤ [`LogCounts::MIN`] (zero gaps included).
    small: u64,
    /// The bucket of `counts[0]`.
    first: u32,
    /// Values per bucket, from bucket `first` on.
    counts: Vec<u32>,
    /// Values added (finite ones).
    count: u64,
    min: f64,
    max: f64,
}

impl LogCounts {
    /// Ratio of a bucket's upper bound to its lower.
    const GAMMA: f64 = 1.01;
    /// Smallest value (ms) told apart from zero: 1 ns.
    pub const MIN: f64 = 1e-6;
    /// The greatest bucket: values above `MIN · GAMMA^LAST` (10^15 ms) share it.
    const LAST: u32 = 4_860;
    /// How far (relative) a percentile can be from the exact one, for values above
    /// [`LogCounts::MIN`]: `(GAMMA - 1) / (GAMMA + 1)`.
    pub const RELATIVE_ERROR: f64 = (Self::GAMMA - 1.0) / (Self::GAMMA + 1.0);

    /// No values.
    pub fn new() -> LogCounts {
        LogCounts::default()
    }

    /// Values added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// Adds `k` copies of `v`; a value that is not finite, or negative (no gap between reads
    /// is: their times only go forward), is not counted.
    pub fn add(&mut self, v: f64, k: u32) {
        if !v.is_finite() || v < 0.0 || k == 0 {
            return;
        }
        if self.count == 0 {
            (self.min, self.max) = (v, v);
        } else {
            (self.min, self.max) = (self.min.min(v), self.max.max(v));
        }
        self.count += u64::from(k);
        if v <= Self::MIN {
            self.small += u64::from(k);
            return;
        }
        let slot = self.slot(bucket(v));
        *slot = slot.saturating_add(k);
    }

    /// The count of bucket `b`, the buckets held grown to reach it (by a little more than
    /// needed, so a second's range is reached in a few steps and little room is held beyond).
    fn slot(&mut self, b: u32) -> &mut u32 {
        const SLACK: u32 = 16;
        if self.counts.is_empty() {
            self.first = b;
        } else if b < self.first {
            let to = b.saturating_sub(SLACK).max(1);
            let grow = (self.first - to) as usize;
            self.counts.reserve_exact(grow);
            self.counts.splice(0..0, std::iter::repeat_n(0, grow));
            self.first = to;
        }
        let i = (b - self.first) as usize;
        if self.counts.len() <= i {
            let len = (i + 1 + SLACK as usize).min((Self::LAST - self.first) as usize + 1);
            self.counts.reserve_exact(len - self.counts.len());
            self.counts.resize(len, 0);
        }
        &mut self.counts[i]
    }

    /// Adds every value of `other`.
    pub fn merge(&mut self, other: &LogCounts) {
        if other.count == 0 {
            return;
        }
        if self.count == 0 {
            *self = other.clone();
            return;
        }
        (self.min, self.max) = (self.min.min(other.min), self.max.max(other.max));
        self.count += other.count;
        self.small += other.small;
        for (i, &n) in other.counts.iter().enumerate() {
            if n == 0 {
                continue;
            }
            let slot = self.slot(other.first + i as u32);
            *slot = slot.saturating_add(n);
        }
    }

    /// The `p`-th percentile as [`crate::analysis::stats::percentile_sorted`] gives it of the
    /// values, within [`LogCounts::RELATIVE_ERROR`] (see the module doc); `None` when there are
    /// none or `p` is outside 0..=100.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        let len = usize::try_from(self.count).ok()?;
        crate::analysis::stats::percentile_ranked(len, p, |rank| self.at_rank(rank as u64))
    }

    /// The value standing for the `rank`-th smallest (0-based).
    fn at_rank(&self, rank: u64) -> Option<f64> {
        if rank >= self.count {
            return None;
        }
        if rank == 0 {
            return Some(self.min);
        }
        if rank == self.count - 1 {
            return Some(self.max);
        }
        if rank < self.small {
            return Some(self.min.min(Self::MIN));
        }
        let mut seen = self.small;
        for (i, &n) in self.counts.iter().enumerate() {
            seen += u64::from(n);
            if rank < seen {
                let upper = Self::MIN * Self::GAMMA.powi((self.first as usize + i) as i32);
                let middle = upper * 2.0 / (1.0 + Self::GAMMA);
                return Some(middle.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    /// Bytes held besides the struct itself.
    pub fn heap_bytes(&self) -> usize {
        self.counts.capacity() * std::mem::size_of::<u32>()
    }
}

/// The bucket of a value above [`LogCounts::MIN`]: bucket `b` holds `(MIN·γ^(b−1), MIN·γ^b]`.
fn bucket(v: f64) -> u32 {
    let b = ((v / LogCounts::MIN).ln() / LogCounts::GAMMA.ln()).ceil();
    (b.max(1.0) as u32).min(LogCounts::LAST)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::stats::percentile_sorted;

    /// Percentiles of `values` counted, against the exact ones.
    fn check(values: &[f64], ps: &[f64]) {
        let mut c = LogCounts::new();
        for &v in values {
            c.add(v, 1);
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        for &p in ps {
            let exact = percentile_sorted(&sorted, p).unwrap();
            let got = c.percentile(p).unwrap();
            let allowed = (exact * LogCounts::RELATIVE_ERROR * (1.0 + 1e-9)).max(LogCounts::MIN);
            assert!(
                (got - exact).abs() <= allowed,
                "p{p}: {got} vs {exact} (n {})",
                values.len()
            );
        }
    }

    #[test]
    fn percentiles_are_within_the_bound_over_many_shapes() {
        let ps: Vec<f64> = (0..=100).map(f64::from).chain([99.9, 0.1, 12.5]).collect();
        // Uniform, spread over eight decades, clustered, with zeros, two values, one value.
        let uniform: Vec<f64> = (1..=10_000).map(|i| f64::from(i) * 0.37).collect();
        let decades: Vec<f64> = (0..5_000)
            .map(|i| 10f64.powf(-3.0 + f64::from(i) * 8.0 / 5_000.0))
            .collect();
        let mut clustered: Vec<f64> = (0..3_000).map(|i| 1.0 + f64::from(i % 97) * 1e-4).collect();
        clustered.extend([0.0, 0.0, 1e-7, 250.0, 4_000.0]);
        for values in [
            uniform,
            decades,
            clustered,
            vec![0.0, 5.0],
            vec![3.3],
            vec![0.0; 7],
        ] {
            check(&values, &ps);
        }
    }

    #[test]
    fn extremes_are_exact_and_copies_count_as_values() {
        let mut c = LogCounts::new();
        c.add(2.5, 3);
        c.add(0.75, 1);
        c.add(f64::NAN, 5);
        c.add(-1.0, 1);
        c.add(f64::INFINITY, 1);
        assert_eq!(c.count(), 4);
        assert_eq!(c.percentile(0.0), Some(0.75));
        assert_eq!(c.percentile(100.0), Some(2.5));
        // Ranks 1 and 2 are 2.5: read as the middle of its bucket, within the bound.
        let p50 = c.percentile(50.0).unwrap();
        assert!(
            (p50 - 2.5).abs() <= 2.5 * LogCounts::RELATIVE_ERROR,
            "{p50}"
        );
        assert_ne!(p50, 2.5);
        assert_eq!(c.percentile(101.0), None);
        assert_eq!(LogCounts::new().percentile(50.0), None);
        let mut zeros = LogCounts::new();
        zeros.add(0.0, 2);
        assert_eq!(zeros.percentile(50.0), Some(0.0));
    }

    #[test]
    fn merged_counts_are_the_counts_of_all_values() {
        let values: Vec<f64> = (0..2_000).map(|i| f64::from(i % 313) * 0.09).collect();
        let (mut all, mut low, mut high) = (LogCounts::new(), LogCounts::new(), LogCounts::new());
        for &v in &values {
            all.add(v, 1);
            if v < 10.0 {
                low.add(v, 1);
            } else {
                high.add(v, 1);
            }
        }
        // Every percentile, bit for bit, and the count.
        let read = |c: &LogCounts| {
            let ps: Vec<u64> = (0..=1000)
                .map(|p| c.percentile(f64::from(p) / 10.0).unwrap().to_bits())
                .collect();
            (c.count(), ps)
        };
        // Merged either way round: the buckets below and above are both grown into.
        let mut a = high.clone();
        a.merge(&low);
        let mut b = low;
        b.merge(&high);
        assert_eq!(read(&a), read(&all));
        assert_eq!(read(&b), read(&all));
        let mut empty = LogCounts::new();
        empty.merge(&all);
        assert_eq!(empty, all);
        all.merge(&LogCounts::new());
        assert_eq!(empty, all);
    }

    #[test]
    fn one_second_of_millisecond_gaps_holds_a_few_kilobytes() {
        // 256 streams, 1,000 tokens a second each, gaps 0.5–5 ms, and one of 1 µs, one of 1 s.
        let mut c = LogCounts::new();
        for i in 0..256_000u32 {
            c.add(0.5 + f64::from(i % 4_500) * 1e-3, 1);
        }
        c.add(1e-3, 1);
        c.add(1_000.0, 1);
        assert_eq!(c.count(), 256_002);
        assert!(c.heap_bytes() <= 6_000, "{}", c.heap_bytes());
    }
}
