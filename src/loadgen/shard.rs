//! One run split over N processes (`run --shard I/N`), and shard files merged back into one run
//! (`benchlens merge`).
//!
//! Splitting: every shard builds the same seeded schedule and prompts, then keeps the requests
//! whose index is I modulo N, at their original times, and the I-th share of
//! `--max-concurrency`: started together, the N shards send exactly the whole run. Each shard's
//! stages record `tag.shard`, the wall-clock start of the stage (`stage_start_unix_s`), the
//! run's fingerprint ([`RUN_FINGERPRINT_TAG`]: the options that define the run, the seed) and
//! how many per-request rows the stage wrote ([`REQUEST_ROWS_METRIC`]).
//!
//! Merging: the per-request files of the shards are read back, their times put on one clock
//! by the stages' wall-clock starts, and every figure is computed again from the merged
//! requests — throughput over the merged span, percentiles over all requests (never averaged).
//! Shards that are not one run (fingerprints that differ, starts too far apart, a per-request
//! file cut short) are refused, the field named.

use std::fmt;
use std::str::FromStr;

use thiserror::Error;

use super::schedule::Arrivals;

/// The tag holding a shard's run fingerprint: a JSON object of the options that define the
/// run (see `run`'s `run_fingerprint`), equal in every shard of one run.
pub const RUN_FINGERPRINT_TAG: &str = "run_fingerprint";

/// The metric holding how many rows a shard's stage wrote to its per-request file.
pub const REQUEST_ROWS_METRIC: &str = "request_rows";

/// This process's part of a sharded run: shard `index` (from 0) of `count`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Shard {
    /// From 0 to `count − 1` (Kubernetes' `JOB_COMPLETION_INDEX` in an Indexed Job).
    pub index: usize,
    /// How many shards make the run.
    pub count: usize,
}

/// A `--shard` value that does not read.
#[derive(Debug, Error, PartialEq)]
#[error("{0:?} is not I/N with 0 ≤ I < N (for example 0/4)")]
pub struct ShardSyntax(String);

impl FromStr for Shard {
    type Err = ShardSyntax;

    fn from_str(s: &str) -> Result<Shard, ShardSyntax> {
        let bad = || ShardSyntax(s.to_string());
        let (i, n) = s.split_once('/').ok_or_else(bad)?;
        let index: usize = i.trim().parse().map_err(|_| bad())?;
        let count: usize = n.trim().parse().map_err(|_| bad())?;
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

impl Shard {
    /// This shard's requests of a schedule: those whose index is `index` modulo `count`, at
    /// their original times; `None` for an unbounded schedule, which has no indices to split.
    pub fn take(&self, plan: &Arrivals) -> Option<Arrivals> {
        match plan {
            Arrivals::Fixed(v) => Some(Arrivals::Fixed(
                v.iter()
                    .skip(self.index)
                    .step_by(self.count)
                    .copied()
                    .collect(),
            )),
            Arrivals::Unbounded { .. } => None,
        }
    }

    /// The run-wide index of this shard's `j`-th request.
    pub fn global_index(&self, j: usize) -> usize {
        j * self.count + self.index
    }

    /// This shard's part of a concurrency cap (the remainder goes to the first shards); `None`
    /// when the cap is smaller than the number of shards.
    pub fn concurrency(&self, cap: u64) -> Option<u64> {
        let n = self.count as u64;
        let part = cap / n + u64::from((self.index as u64) < cap % n);
        (part > 0).then_some(part)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn shards_parse_and_split_a_schedule_exactly() {
        assert_eq!("2/4".parse(), Ok(Shard { index: 2, count: 4 }));
        assert!("4/4".parse::<Shard>().is_err());
        assert!("1/0".parse::<Shard>().is_err());
        assert_eq!(
            "x".parse::<Shard>().unwrap_err().to_string(),
            "\"x\" is not I/N with 0 ≤ I < N (for example 0/4)"
        );
        let plan = Arrivals::Fixed((0..10).map(Duration::from_secs).collect());
        let mut all: Vec<(usize, Duration)> = Vec::new();
        for i in 0..4 {
            let s = Shard { index: i, count: 4 };
            let Some(Arrivals::Fixed(part)) = s.take(&plan) else {
                panic!("a fixed plan splits");
            };
            all.extend(
                part.iter()
                    .enumerate()
                    .map(|(j, t)| (s.global_index(j), *t)),
            );
        }
        all.sort();
        let whole: Vec<(usize, Duration)> = (0..10)
            .map(|i| (i, Duration::from_secs(i as u64)))
            .collect();
        assert_eq!(
            all, whole,
            "together the shards send every request once, at its time"
        );
        assert_eq!(
            Shard { index: 0, count: 2 }.take(&Arrivals::Unbounded {
                until: Duration::from_secs(1)
            }),
            None
        );
    }

    #[test]
    fn concurrency_is_shared_out() {
        let parts: Vec<Option<u64>> = (0..4)
            .map(|i| Shard { index: i, count: 4 }.concurrency(10))
            .collect();
        assert_eq!(parts, vec![Some(3), Some(3), Some(2), Some(2)]);
        assert_eq!(Shard { index: 3, count: 4 }.concurrency(3), None);
    }
}
