//! Noise: how far a chart point's value may be from the one a rerun would give, and whether two
//! values can be told apart.
//!
//! **Where an interval comes from.**
//! - **Repeats**: records of one configuration (the same value in every configured dimension)
//!   that differ only in where or when they were run: the file (`source`), `format`, `date`,
//!   `label`, or a repeat tag ([`is_repeat_dim`]: `run`, `run_id`, `repeat`, `iteration`,
//!   `trial`, ...). With n ≥ 2 of them the interval is the **95 % confidence interval of the
//!   mean**, mean ± t · s / √n, where s is the sample standard deviation (n − 1 in the
//!   denominator) and t the 97.5th percentile of Student's t with n − 1 degrees of freedom
//!   (12.71 for n = 2, 4.30 for n = 3, 2.78 for n = 5, 1.96 in the limit).
//! - **The file's standard deviation**: a single record whose file gives the spread of its
//!   value over the tool's own repetitions (llama-bench's `stddev_ts`, `avg_ts ± 0.41`, read as
//!   `extra.tokens_per_s_stddev`; see [`spread_companions`]) gets mean ± that standard
//!   deviation: the file does not always say how many repetitions it ran, so no t factor.
//! - A single record without one, or a point that averages records of *different*
//!   configurations (a mean over output lengths is not noise), has **no interval**: no bar.
//!
//! **Telling two values apart** ([`distinguishable`]): two values are "not distinguishable"
//! when their intervals overlap; a value without an interval counts as the point it is, so it
//! is not distinguishable from another value whose interval contains it. When neither has an
//! interval nothing is said (`None`): the old "fastest" rule stands. Overlap is symmetric, and
//! overlapping 95 % intervals is a conservative test (two means can differ significantly while
//! their intervals still overlap a little): a "fastest" shown is one the repeats support.
//!
//! [`Moments`] is the one accumulator the chart's points are gathered with
//! ([`crate::charts::series`]): the sum (so the mean is what it always was, sum / n) and the
//! sum of squared deviations from the running mean (Welford's update), so the spread of a
//! million values of 10⁶ ± 1 is not lost to cancellation.

use super::{DimKey, MetricKey};
use crate::model::{format_number, round_significant, Dim};

/// A bound or deviation as the notes print it: four significant digits (`90.06`, `109.9`).
pub fn short_number(v: f64) -> String {
    format_number(round_significant(v, 4))
}

/// Tags whose values number or name repeated runs of one configuration, not a configuration.
pub const REPEAT_TAGS: [&str; 10] = [
    "run",
    "run_id",
    "runid",
    "repeat",
    "repetition",
    "rep",
    "iteration",
    "iter",
    "trial",
    "attempt",
];

/// Whether records differing in `k` alone are repeats of one configuration: the file, its
/// format, when it was run, its label, or a repeat tag ([`REPEAT_TAGS`]).
pub fn is_repeat_dim(k: &DimKey) -> bool {
    match k {
        DimKey::Known(d) => matches!(d, Dim::Source | Dim::Format | Dim::Date | Dim::Label),
        DimKey::Tag(t) => REPEAT_TAGS.contains(&t.to_ascii_lowercase().as_str()),
    }
}

/// The metrics that hold a file's standard deviation of `metric` over its own repetitions
/// (`extra.tokens_per_s` → `extra.tokens_per_s_stddev`, `_std`), most common name first.
pub fn spread_companions(metric: &MetricKey) -> Vec<MetricKey> {
    match metric {
        MetricKey::Extra(n) if !n.ends_with("_stddev") && !n.ends_with("_std") => vec![
            MetricKey::Extra(format!("{n}_stddev")),
            MetricKey::Extra(format!("{n}_std")),
        ],
        _ => Vec::new(),
    }
}

/// Count, sum and sum of squared deviations of a stream of values (Welford's update, with the
/// mean taken as sum / n so that it is exactly the plain mean).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Moments {
    /// How many values.
    pub n: usize,
    /// Their sum.
    pub sum: f64,
    /// The sum of squared deviations from their mean.
    pub m2: f64,
}

impl Moments {
    /// Adds a value.
    pub fn add(&mut self, y: f64) {
        let before = if self.n == 0 {
            y
        } else {
            self.sum / self.n as f64
        };
        self.n += 1;
        self.sum += y;
        let after = self.sum / self.n as f64;
        self.m2 += (y - before) * (y - after);
    }

    /// The mean (NaN for no values).
    pub fn mean(&self) -> f64 {
        self.sum / self.n as f64
    }

    /// The sample standard deviation (n − 1), for n ≥ 2.
    pub fn sample_sd(&self) -> Option<f64> {
        (self.n >= 2).then(|| (self.m2.max(0.0) / (self.n - 1) as f64).sqrt())
    }

    /// The 95 % confidence interval of the mean (see the module docs), for n ≥ 2 finite values.
    pub fn interval(&self) -> Option<Interval> {
        let sd = self.sample_sd()?;
        let mean = self.mean();
        let half = t975(self.n - 1) * sd / (self.n as f64).sqrt();
        Interval::new(mean, half, Basis::Repeats { n: self.n, sd })
    }
}

/// The 97.5th percentile of Student's t distribution with `df` degrees of freedom (the t of
/// a two-sided 95 % interval): exact to four decimals from a table up to 30, then the
/// Cornish–Fisher expansion around the normal's 1.959964 (within 1e-4 there).
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.7062, 4.3027, 3.1824, 2.7764, 2.5706, 2.4469, 2.3646, 2.3060, 2.2622, 2.2281, 2.2010,
        2.1788, 2.1604, 2.1448, 2.1314, 2.1199, 2.1098, 2.1009, 2.0930, 2.0860, 2.0796, 2.0739,
        2.0687, 2.0639, 2.0595, 2.0555, 2.0518, 2.0484, 2.0452, 2.0423,
    ];
    if df == 0 {
        return f64::INFINITY;
    }
    if let Some(t) = TABLE.get(df - 1) {
        return *t;
    }
    let z: f64 = 1.959_964;
    let v = df as f64;
    z + (z.powi(3) + z) / (4.0 * v)
        + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
}

/// The interval of a point gathered in `moments` (the one rule every view follows): the 95 %
/// interval of the mean when it holds two or more values that are `repeats` (records told apart
/// only by [`is_repeat_dim`] dimensions), the file's standard deviation `file_sd` around the
/// single value of a point of one record, else none (a mean of different configurations).
pub fn point_interval(moments: &Moments, repeats: bool, file_sd: Option<f64>) -> Option<Interval> {
    if moments.n >= 2 {
        repeats.then(|| moments.interval()).flatten()
    } else {
        file_sd.and_then(|sd| Interval::from_file_std(moments.mean(), sd))
    }
}

/// What an interval was made from.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Basis {
    /// `n` repeats with sample standard deviation `sd`: mean ± t · sd / √n.
    Repeats {
        /// How many repeats.
        n: usize,
        /// Their sample standard deviation.
        sd: f64,
    },
    /// The file's own standard deviation over its repetitions: mean ± sd.
    FileStd {
        /// The standard deviation the file gives.
        sd: f64,
    },
}

/// An interval around a point's value: `low ≤ value ≤ high`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Interval {
    /// Its lower end.
    pub low: f64,
    /// Its upper end.
    pub high: f64,
    /// How it was made.
    pub basis: Basis,
}

impl Interval {
    /// `mean ± half`, when both are finite and `half` is not negative.
    pub fn new(mean: f64, half: f64, basis: Basis) -> Option<Interval> {
        (mean.is_finite() && half.is_finite() && half >= 0.0).then_some(Interval {
            low: mean - half,
            high: mean + half,
            basis,
        })
    }

    /// The file's standard deviation `sd` around `value`.
    pub fn from_file_std(value: f64, sd: f64) -> Option<Interval> {
        Interval::new(value, sd, Basis::FileStd { sd })
    }

    /// Half its width: the error bar's length on either side of the mean.
    pub fn half_width(&self) -> f64 {
        (self.high - self.low) / 2.0
    }

    /// Whether it contains `v`.
    pub fn contains(&self, v: f64) -> bool {
        self.low <= v && v <= self.high
    }

    /// What it is, for hover text and notes: `95 % interval 9.2 – 12.8 (mean ± t·s/√n of 3
    /// repeats, s = 1.4)` or `± 0.41, the file's standard deviation over its repetitions`.
    pub fn describe(&self) -> String {
        match self.basis {
            Basis::Repeats { n, sd } => format!(
                "95 % interval {} – {} (mean ± t·s/√n of {n} repeats, s = {})",
                short_number(self.low),
                short_number(self.high),
                short_number(sd)
            ),
            Basis::FileStd { sd } => format!(
                "± {}: the file's standard deviation over its repetitions ({} – {})",
                short_number(sd),
                short_number(self.low),
                short_number(self.high)
            ),
        }
    }
}

/// A value with, where known, its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Noisy {
    /// The value (a mean of repeats, or a file's figure).
    pub value: f64,
    /// Its interval, if it has one.
    pub interval: Option<Interval>,
}

impl Noisy {
    /// The range the value may be in: its interval, or the value alone.
    fn range(&self) -> (f64, f64) {
        self.interval
            .map_or((self.value, self.value), |i| (i.low, i.high))
    }
}

/// Whether `a` and `b` can be told apart: `Some(false)` when their ranges (an interval, or a
/// value alone) overlap, `Some(true)` when they do not, `None` when neither has an interval
/// (nothing is known of the noise). Symmetric.
pub fn distinguishable(a: &Noisy, b: &Noisy) -> Option<bool> {
    if a.interval.is_none() && b.interval.is_none() {
        return None;
    }
    let (al, ah) = a.range();
    let (bl, bh) = b.range();
    Some(ah < bl || bh < al)
}

/// The words the tables print when two values cannot be told apart.
pub const NOT_DISTINGUISHABLE: &str = "not distinguishable";

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn three_repeats_give_the_t_interval() {
        let mut m = Moments::default();
        for y in [10.0, 12.0, 14.0] {
            m.add(y);
        }
        assert_eq!(m.mean(), 12.0);
        assert!((m.sample_sd().unwrap() - 2.0).abs() < 1e-12);
        let i = m.interval().unwrap();
        // 4.3027 × 2 / √3 = 4.9683.
        assert!(
            (i.half_width() - 4.3027 * 2.0 / 3f64.sqrt()).abs() < 1e-9,
            "{i:?}"
        );
        assert!(
            i.describe().starts_with("95 % interval 7.03"),
            "{}",
            i.describe()
        );
        let mut one = Moments::default();
        one.add(5.0);
        assert_eq!(one.interval(), None);
    }

    #[test]
    fn a_point_has_an_interval_from_repeats_or_its_files_deviation_only() {
        let mut three = Moments::default();
        for y in [10.0, 12.0, 14.0] {
            three.add(y);
        }
        assert_eq!(point_interval(&three, true, None), three.interval());
        // A mean of different configurations is not noise, whatever the file says.
        assert_eq!(point_interval(&three, false, Some(1.0)), None);
        let mut one = Moments::default();
        one.add(5.0);
        let i = point_interval(&one, true, Some(0.5)).unwrap();
        assert_eq!(
            (i.low, i.high, i.basis),
            (4.5, 5.5, Basis::FileStd { sd: 0.5 })
        );
        assert_eq!(point_interval(&one, true, None), None);
    }

    #[test]
    fn t_leaves_the_table_smoothly() {
        assert!((t975(30) - 2.0423).abs() < 1e-4);
        assert!((t975(31) - 2.0395).abs() < 1e-3);
        assert!((t975(120) - 1.9799).abs() < 1e-3);
        assert!((t975(1_000_000) - 1.96).abs() < 1e-3);
        assert!(t975(0).is_infinite());
    }

    #[test]
    fn spread_survives_large_values() {
        let mut m = Moments::default();
        for i in 0..1000 {
            m.add(1e9 + f64::from(i % 2));
        }
        assert!((m.sample_sd().unwrap() - 0.50025).abs() < 1e-3);
    }

    #[test]
    fn repeat_dims_are_where_and_when_not_what() {
        assert!(is_repeat_dim(&DimKey::Known(Dim::Source)));
        assert!(is_repeat_dim(&DimKey::Tag("Run_ID".into())));
        assert!(!is_repeat_dim(&DimKey::Known(Dim::Engine)));
        assert!(!is_repeat_dim(&DimKey::Tag("seed_len".into())));
        assert_eq!(
            spread_companions(&MetricKey::Extra("tokens_per_s".into()))[0],
            MetricKey::Extra("tokens_per_s_stddev".into())
        );
        assert!(spread_companions(&MetricKey::OutputThroughput).is_empty());
    }

    #[test]
    fn overlap_decides() {
        let at = |v: f64, half: Option<f64>| Noisy {
            value: v,
            interval: half.and_then(|h| Interval::from_file_std(v, h)),
        };
        assert_eq!(distinguishable(&at(10.0, None), &at(11.0, None)), None);
        assert_eq!(
            distinguishable(&at(10.0, Some(1.0)), &at(10.5, None)),
            Some(false)
        );
        assert_eq!(
            distinguishable(&at(10.0, Some(1.0)), &at(12.5, Some(1.0))),
            Some(true)
        );
        assert_eq!(
            distinguishable(&at(10.0, Some(1.0)), &at(11.5, Some(1.0))),
            Some(false)
        );
    }

    proptest! {
        #[test]
        fn the_interval_contains_the_mean(values in proptest::collection::vec(-1e6f64..1e6, 2..40)) {
            let mut m = Moments::default();
            for &v in &values {
                m.add(v);
            }
            let i = m.interval().unwrap();
            prop_assert!(i.contains(m.mean()), "{i:?} {}", m.mean());
            prop_assert!(i.low <= i.high);
        }

        #[test]
        fn telling_apart_is_symmetric(
            a in -100f64..100.0, ha in proptest::option::of(0f64..50.0),
            b in -100f64..100.0, hb in proptest::option::of(0f64..50.0),
        ) {
            let x = Noisy { value: a, interval: ha.and_then(|h| Interval::from_file_std(a, h)) };
            let y = Noisy { value: b, interval: hb.and_then(|h| Interval::from_file_std(b, h)) };
            let d = distinguishable(&x, &y);
            prop_assert_eq!(d, distinguishable(&y, &x));
            // Overlapping intervals are never told apart.
            if let (Some(i), Some(j)) = (x.interval, y.interval) {
                if i.low <= j.high && j.low <= i.high {
                    prop_assert_eq!(d, Some(false));
                }
            }
        }
    }
}
