//! The plan of a run: its stages in order, one per `--request-rate` value times one per
//! `--max-concurrency` value, each with its load (the rate, this process's share of the
//! concurrency cap), its size (a number of requests or a duration) and its seed, and where the
//! arrivals come from (the rate, a ramp or a trace). Made once the options are checked and the
//! prompts loaded, before any load, so a plan that cannot be run (a shard of an unbounded
//! stage, a concurrency cap smaller than the shards) is refused before anything is sent.

use std::time::Duration;

use super::opts::RunOpts;
use super::prepare::{invalid, Prepared};
use crate::loadgen::schedule::{arrivals, ramp_arrivals, Arrivals, Ramp, StageSize};
use crate::loadgen::shard::Shard;
use crate::loadgen::LoadgenError;

/// One stage of the plan.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Stage {
    /// Its place in the run, from 0.
    pub(super) index: usize,
    /// `--request-rate`'s value (infinite for `inf`); a ramp's or a trace's stage has the mean
    /// rate of its schedule instead (see [`Plan::schedule`]).
    pub(super) rate: f64,
    /// The concurrency cap of this process (with `--shard`, its share of the run's).
    pub(super) concurrency: Option<u64>,
    /// How many requests, or for how long.
    pub(super) size: StageSize,
    /// The seed of its arrivals: `--seed` plus the stage's index.
    pub(super) seed: u64,
}

/// Where a stage's arrivals come from.
#[derive(Clone, Debug, PartialEq)]
enum Source {
    /// The stage's rate with `--burstiness`.
    Rate,
    /// `--ramp-up-*`.
    Ramp(Ramp),
    /// A trace's arrival times (`--dataset trace`).
    Trace(Vec<Duration>),
}

/// A run's stages and how their arrivals are made.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Plan {
    /// In the order run.
    pub(super) stages: Vec<Stage>,
    source: Source,
    burstiness: f64,
    shard: Option<Shard>,
}

impl Plan {
    /// The stages of `opts` as `prep` checked them; `trace` the arrivals of a trace dataset.
    pub(super) fn new(
        opts: &RunOpts,
        prep: &Prepared,
        trace: Option<Vec<Duration>>,
    ) -> Result<Plan, LoadgenError> {
        let size = match opts.duration {
            Some(d) => StageSize::Duration(Duration::from_secs_f64(d)),
            None => StageSize::Count(opts.num_prompts as usize),
        };
        let source = match (trace, prep.ramp) {
            (Some(offsets), _) => Source::Trace(offsets),
            (None, Some(ramp)) => Source::Ramp(ramp),
            (None, None) => Source::Rate,
        };
        let mut stages = Vec::with_capacity(prep.rates.len() * prep.concurrencies.len());
        for &rate in &prep.rates {
            for &cap in &prep.concurrencies {
                let index = stages.len();
                let concurrency = match (opts.shard, cap) {
                    (Some(s), Some(c)) => Some(s.concurrency(c).ok_or_else(|| {
                        invalid(
                            "shard",
                            format!("--max-concurrency {c} is less than one per shard"),
                        )
                    })?),
                    (_, cap) => cap,
                };
                let unbounded = source == Source::Rate
                    && rate.is_infinite()
                    && matches!(size, StageSize::Duration(_));
                if opts.shard.is_some() && unbounded {
                    return Err(unsplittable());
                }
                stages.push(Stage {
                    index,
                    rate,
                    concurrency,
                    size,
                    seed: opts.seed.wrapping_add(index as u64),
                });
            }
        }
        Ok(Plan {
            stages,
            source,
            burstiness: opts.burstiness,
            shard: opts.shard,
        })
    }

    /// The stage's arrivals (with `--shard`, this process's share of them) and its target
    /// rate: the stage's, or for a trace or a ramp the mean over the planned span.
    pub(super) fn schedule(&self, stage: &Stage) -> Result<(Arrivals, f64), LoadgenError> {
        let planned = match &self.source {
            Source::Trace(offsets) => Arrivals::Fixed(offsets.clone()),
            Source::Ramp(ramp) => ramp_arrivals(*ramp, self.burstiness, stage.size, stage.seed),
            Source::Rate => arrivals(stage.rate, self.burstiness, stage.size, stage.seed),
        };
        let rate = match (&planned, &self.source) {
            (_, Source::Rate) => stage.rate,
            (Arrivals::Fixed(o), _) if o.len() > 1 => {
                (o.len() - 1) as f64 / o.last().map_or(1.0, Duration::as_secs_f64).max(1e-9)
            }
            _ => stage.rate,
        };
        let planned = match self.shard {
            None => planned,
            Some(s) => s.take(&planned).ok_or_else(unsplittable)?,
        };
        Ok((planned, rate))
    }
}

fn unsplittable() -> LoadgenError {
    invalid(
        "shard",
        "an unbounded stage (--duration at rate inf) has no requests to split: give a finite \
         --request-rate or --num-prompts",
    )
}

#[cfg(test)]
mod tests {
    use super::super::prepare::prepare;
    use super::*;

    fn plan_of(opts: &RunOpts) -> Result<Plan, String> {
        let prep = prepare(opts).map_err(|e| e.to_string())?;
        Plan::new(opts, &prep, None).map_err(|e| e.to_string())
    }

    #[test]
    fn stages_are_rates_times_concurrencies_each_seeded() {
        let opts = RunOpts {
            request_rate: vec!["2".parse().unwrap(), "inf".parse().unwrap()],
            max_concurrency: vec![4, 8],
            num_prompts: 10,
            seed: 5,
            ..RunOpts::default()
        };
        let plan = plan_of(&opts).unwrap();
        let loads: Vec<(usize, f64, Option<u64>, u64)> = plan
            .stages
            .iter()
            .map(|s| (s.index, s.rate, s.concurrency, s.seed))
            .collect();
        assert_eq!(
            loads,
            [
                (0, 2.0, Some(4), 5),
                (1, 2.0, Some(8), 6),
                (2, f64::INFINITY, Some(4), 7),
                (3, f64::INFINITY, Some(8), 8)
            ]
        );
        assert!(plan.stages.iter().all(|s| s.size == StageSize::Count(10)));
        let (arrivals, rate) = plan.schedule(&plan.stages[0]).unwrap();
        assert_eq!((arrivals.len(), rate), (Some(10), 2.0));
    }

    #[test]
    fn a_plan_a_shard_cannot_run_is_refused_before_any_load() {
        let shard = |o: RunOpts| RunOpts {
            shard: "3/4".parse().ok(),
            ..o
        };
        let small = shard(RunOpts {
            max_concurrency: vec![8, 3],
            ..RunOpts::default()
        });
        let why = plan_of(&small).unwrap_err();
        assert!(
            why.contains("--max-concurrency 3 is less than one per shard"),
            "{why}"
        );
        let unbounded = shard(RunOpts {
            duration: Some(5.0),
            max_concurrency: vec![8],
            ..RunOpts::default()
        });
        assert!(plan_of(&unbounded).unwrap_err().contains("unbounded stage"));
        // Its share of the cap (8 among 4) and every fourth request (3, 7).
        let ok = plan_of(&shard(RunOpts {
            max_concurrency: vec![8],
            num_prompts: 10,
            ..RunOpts::default()
        }))
        .unwrap();
        assert_eq!(ok.stages[0].concurrency, Some(2));
        assert_eq!(ok.schedule(&ok.stages[0]).unwrap().0.len(), Some(2));
    }

    #[test]
    fn a_trace_stage_runs_at_its_mean_rate() {
        let opts = RunOpts::default();
        let prep = prepare(&opts).unwrap();
        let at = |s: f64| Duration::from_secs_f64(s);
        let plan = Plan::new(&opts, &prep, Some(vec![at(0.0), at(1.0), at(2.0)])).unwrap();
        let (arrivals, rate) = plan.schedule(&plan.stages[0]).unwrap();
        assert_eq!((arrivals.len(), rate), (Some(3), 1.0));
    }
}
