//! The bracket-then-bisect search over loads, fed one probe outcome at a time: brackets the
//! capacity by multiplying the load until a probe fails, bisects (geometric midpoints) until
//! the bracket is within the tolerance, then repeats the probes on both sides of the knee.

use thiserror::Error;

use super::answer::{bracket, verdict, Capacity, ProbeOutcome, Tally};
use crate::model::round_significant;

/// How the search moves.
#[derive(Clone, Debug, PartialEq)]
pub struct SearchConfig {
    /// The first load probed.
    pub start: f64,
    /// The search gives up above this load (the capacity is then "at least the last pass").
    pub max: f64,
    /// …and below this one (the capacity is then "below the minimum").
    pub min: f64,
    /// The bracket is narrow enough when `high / low - 1` is at most this.
    pub tolerance: f64,
    /// How many times each side of the final bracket is probed in all.
    pub repeats: usize,
    /// Factor between bracketing probes.
    pub growth: f64,
    /// Loads are whole numbers (a concurrency): probes are rounded, and a bracket of
    /// neighbouring numbers is as narrow as it gets.
    pub integer: bool,
}

impl Default for SearchConfig {
    fn default() -> SearchConfig {
        SearchConfig {
            start: 1.0,
            max: 10_000.0,
            min: 0.01,
            tolerance: 0.05,
            repeats: 2,
            growth: 2.0,
            integer: false,
        }
    }
}

/// Why a search configuration is unusable.
#[derive(Debug, Error, PartialEq)]
pub enum SearchConfigError {
    /// A load that is not a positive finite number, or min > start > max.
    #[error(
        "the loads must be positive and min ≤ start ≤ max (min {min}, start {start}, max {max})"
    )]
    Loads {
        /// `min`.
        min: f64,
        /// `start`.
        start: f64,
        /// `max`.
        max: f64,
    },
    /// A tolerance outside (0, 1).
    #[error("the tolerance {0} must be above 0 and below 1")]
    Tolerance(f64),
    /// A growth factor of at most 1.
    #[error("the growth factor {0} must be above 1")]
    Growth(f64),
}

impl SearchConfig {
    /// Checks the numbers.
    pub fn validate(&self) -> Result<(), SearchConfigError> {
        let ok = |x: f64| x.is_finite() && x > 0.0;
        if !(ok(self.min) && ok(self.start) && ok(self.max))
            || self.min > self.start
            || self.start > self.max
        {
            return Err(SearchConfigError::Loads {
                min: self.min,
                start: self.start,
                max: self.max,
            });
        }
        if !(self.tolerance > 0.0 && self.tolerance < 1.0) {
            return Err(SearchConfigError::Tolerance(self.tolerance));
        }
        if !(self.growth > 1.0 && self.growth.is_finite()) {
            return Err(SearchConfigError::Growth(self.growth));
        }
        Ok(())
    }
}

/// What the search wants next.
#[derive(Clone, Debug, PartialEq)]
pub enum Step {
    /// Probe this load.
    Probe(f64),
    /// The search is over.
    Done(Capacity),
}

/// The bracket-then-bisect search, fed one probe outcome at a time.
#[derive(Clone, Debug)]
pub struct Search {
    config: SearchConfig,
    probes: Vec<ProbeOutcome>,
}

impl Search {
    /// A search with a validated configuration.
    pub fn new(config: SearchConfig) -> Result<Search, SearchConfigError> {
        config.validate()?;
        Ok(Search {
            config,
            probes: Vec::new(),
        })
    }

    /// The probes so far, in order.
    pub fn probes(&self) -> &[ProbeOutcome] {
        &self.probes
    }

    /// Records the outcome of the probe [`next`](Search::next) asked for.
    pub fn record(&mut self, load: f64, passed: bool) {
        self.probes.push(ProbeOutcome { load, passed });
    }

    /// A load a later probe contradicted, to probe again before the bracket stands: the lowest
    /// load whose passes and failures are tied (a rate below the knee that failed once, or the
    /// failing side that then passed), else the lowest failing load when a higher load passed.
    /// Each load is probed at most `2 × repeats + 1` times: a tie (an even count) is always
    /// settled by one more, and a failure still contradicted after that stands (the lower
    /// capacity is the safe answer).
    fn unsettled(&self) -> Option<f64> {
        let cap = 2 * self.config.repeats + 1;
        let mut loads: Vec<f64> = self.probes.iter().map(|p| p.load).collect();
        crate::model::order::sort_floats(&mut loads);
        loads.dedup();
        let open = |l: &f64| self.runs_at(*l).0 < cap;
        if let Some(&tied) = loads
            .iter()
            .find(|&&l| verdict(&self.probes, l).is_none() && open(&l))
        {
            return Some(tied);
        }
        let top_pass = loads
            .iter()
            .copied()
            .filter(|&l| verdict(&self.probes, l) == Some(true))
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))))?;
        loads
            .iter()
            .copied()
            .find(|&l| l < top_pass && verdict(&self.probes, l) == Some(false))
            .filter(open)
    }

    fn runs_at(&self, load: f64) -> (usize, bool) {
        let at: Vec<&ProbeOutcome> = self.probes.iter().filter(|p| p.load == load).collect();
        (at.len(), at.iter().all(|p| p.passed))
    }

    fn last_index_at(&self, load: f64) -> usize {
        self.probes
            .iter()
            .rposition(|p| p.load == load)
            .unwrap_or_default()
    }

    fn bracket(&self) -> (Option<f64>, Option<f64>) {
        bracket(&self.probes)
    }

    fn round_up(&self, load: f64) -> f64 {
        if self.config.integer {
            load.ceil()
        } else {
            load
        }
    }

    fn round_down(&self, load: f64) -> f64 {
        if self.config.integer {
            load.floor().max(1.0)
        } else {
            load
        }
    }

    /// The next step: a load to probe, or the answer.
    pub fn next(&self) -> Step {
        let c = &self.config;
        if let Some(load) = self.unsettled() {
            return Step::Probe(load);
        }
        let (low, high) = self.bracket();
        match (low, high) {
            (None, None) => Step::Probe(c.start),
            // Still bracketing upwards.
            (Some(lo), None) => {
                if lo >= c.max {
                    Step::Done(Capacity::AtLeast {
                        load: lo,
                        rests_on: self.last_index_at(lo),
                        at_load: Tally::of(&self.probes, lo),
                    })
                } else {
                    Step::Probe(self.round_up(lo * c.growth).min(c.max))
                }
            }
            // Still bracketing downwards.
            (None, Some(hi)) => {
                if hi <= c.min {
                    Step::Done(Capacity::BelowMin { load: hi })
                } else {
                    Step::Probe(self.round_down(hi / c.growth).max(c.min))
                }
            }
            (Some(lo), Some(hi)) => {
                let adjacent = c.integer && hi - lo <= 1.0;
                if hi / lo - 1.0 > c.tolerance && !adjacent {
                    let mid = (lo * hi).sqrt();
                    let mid = if c.integer {
                        mid.round().clamp(lo + 1.0, hi - 1.0)
                    } else {
                        // Four significant digits: loads a reader can quote, still well inside
                        // any bracket wider than the tolerance.
                        round_significant(mid, 4)
                    };
                    return Step::Probe(mid);
                }
                // Narrow enough: repeat each side until it has been probed `repeats` times. A
                // repeat that contradicts its side's verdict makes a tie, settled by one more
                // probe before anything stands (see `unsettled`).
                let (lo_runs, _) = self.runs_at(lo);
                if lo_runs < c.repeats {
                    return Step::Probe(lo);
                }
                let (hi_runs, _) = self.runs_at(hi);
                if hi_runs < c.repeats {
                    return Step::Probe(hi);
                }
                Step::Done(Capacity::Found {
                    load: lo,
                    failed_at: hi,
                    rests_on: self.last_index_at(lo),
                    at_load: Tally::of(&self.probes, lo),
                    at_failed: Tally::of(&self.probes, hi),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs a search against a system whose capacity is `knee`, with `flaky` loads failing once.
    fn search(
        config: SearchConfig,
        knee: f64,
        mut flaky: Vec<f64>,
    ) -> (Capacity, Vec<ProbeOutcome>) {
        let mut s = Search::new(config).unwrap();
        for _ in 0..200 {
            match s.next() {
                Step::Probe(load) => {
                    let passed = if let Some(i) = flaky.iter().position(|&f| f == load) {
                        flaky.remove(i);
                        false
                    } else {
                        load <= knee
                    };
                    s.record(load, passed);
                }
                Step::Done(c) => return (c, s.probes().to_vec()),
            }
        }
        panic!("the search did not end in 200 probes");
    }

    #[test]
    fn search_brackets_bisects_and_repeats() {
        let (c, probes) = search(SearchConfig::default(), 21.6, vec![]);
        let Capacity::Found {
            load,
            failed_at,
            rests_on,
            ..
        } = c
        else {
            panic!("{c:?}");
        };
        assert!(load <= 21.6 && failed_at > 21.6, "{load} {failed_at}");
        assert!(failed_at / load - 1.0 <= 0.05);
        // Bracketing 1, 2, 4, 8, 16, 32, then bisection, then one repeat of each side.
        let loads: Vec<f64> = probes.iter().map(|p| p.load).collect();
        assert_eq!(&loads[..6], &[1.0, 2.0, 4.0, 8.0, 16.0, 32.0]);
        assert_eq!(probes.iter().filter(|p| p.load == load).count(), 2);
        assert_eq!(probes.iter().filter(|p| p.load == failed_at).count(), 2);
        assert_eq!(probes[rests_on].load, load);
    }

    #[test]
    fn a_failed_repeat_moves_the_capacity_down() {
        let (first, _) = search(SearchConfig::default(), 21.6, vec![]);
        let Capacity::Found { load: clean, .. } = first else {
            panic!();
        };
        // The same system, but the knee-side load fails on its repeat.
        let (c, probes) = search(SearchConfig::default(), 21.6, vec![clean, clean]);
        let Capacity::Found {
            load, failed_at, ..
        } = c
        else {
            panic!("{c:?}");
        };
        assert!(load < clean, "{load} {clean}");
        assert!(failed_at <= clean);
        // Every probe of the reported capacity passed.
        assert!(probes.iter().filter(|p| p.load == load).all(|p| p.passed));
    }

    #[test]
    fn a_contradicting_probe_reopens_the_bracket() {
        // 16 fails once on an outlier while bracketing; the search used to settle below 16 even
        // after 16 then passed. The tie is probed again, 16 passes by majority, and the bracket
        // reopens above it to the real knee.
        let (c, probes) = search(SearchConfig::default(), 21.6, vec![16.0]);
        let Capacity::Found {
            load, failed_at, ..
        } = c
        else {
            panic!("{c:?}");
        };
        assert!(
            load > 16.0 && load <= 21.6 && failed_at > 21.6,
            "{c:?} {probes:?}"
        );
        assert_eq!(probes.iter().filter(|p| p.load == 16.0).count(), 3);
        assert_eq!(Capacity::from_probes(&probes), Some(c));
        // A pass above a failure contests the failure: it is probed again, and after
        // 2 × repeats + 1 probes a failure that keeps failing stands.
        let mut s = Search::new(SearchConfig::default()).unwrap();
        s.record(8.0, false);
        s.record(10.0, true);
        assert_eq!(s.next(), Step::Probe(8.0));
        s.record(8.0, false);
        assert_eq!(s.next(), Step::Probe(8.0));
        for _ in 0..3 {
            s.record(8.0, false);
        }
        assert_ne!(s.next(), Step::Probe(8.0));
        // A rate below the knee that fails on its repeat is a tie, probed once more.
        let mut s = Search::new(SearchConfig::default()).unwrap();
        s.record(4.0, true);
        s.record(5.0, false);
        s.record(4.0, false);
        assert_eq!(s.next(), Step::Probe(4.0));
    }

    #[test]
    fn search_ends_at_the_limits() {
        let cfg = SearchConfig {
            start: 4.0,
            max: 16.0,
            min: 1.0,
            ..SearchConfig::default()
        };
        let (c, _) = search(cfg.clone(), 1000.0, vec![]);
        assert!(
            matches!(c, Capacity::AtLeast { load, .. } if load == 16.0),
            "{c:?}"
        );
        let (c, probes) = search(cfg, 0.5, vec![]);
        assert_eq!(c, Capacity::BelowMin { load: 1.0 });
        assert_eq!(probes.len(), 3, "4, 2, 1");
    }

    #[test]
    fn whole_number_loads_stop_at_neighbours() {
        let cfg = SearchConfig {
            start: 1.0,
            max: 1024.0,
            min: 1.0,
            integer: true,
            ..SearchConfig::default()
        };
        let (c, probes) = search(cfg, 11.0, vec![]);
        assert_eq!(
            c,
            Capacity::Found {
                load: 11.0,
                failed_at: 12.0,
                rests_on: probes.iter().rposition(|p| p.load == 11.0).unwrap(),
                at_load: Tally { met: 2, probes: 2 },
                at_failed: Tally { met: 0, probes: 2 },
            }
        );
        assert!(probes.iter().all(|p| p.load.fract() == 0.0), "{probes:?}");
    }

    #[test]
    fn bisection_loads_have_four_significant_digits() {
        let (_, probes) = search(SearchConfig::default(), 21.6, vec![]);
        for p in probes {
            assert_eq!(p.load, round_significant(p.load, 4), "{}", p.load);
        }
        assert_eq!(round_significant(47.568284600108846, 4), 47.57);
        assert_eq!(round_significant(0.012345, 2), 0.012);
    }

    #[test]
    fn bad_configurations_are_refused() {
        let bad = |f: fn(&mut SearchConfig)| {
            let mut c = SearchConfig::default();
            f(&mut c);
            Search::new(c).is_err()
        };
        assert!(bad(|c| c.start = 0.0));
        assert!(bad(|c| c.start = f64::NAN));
        assert!(bad(|c| c.max = 0.5));
        assert!(bad(|c| c.tolerance = 0.0));
        assert!(bad(|c| c.growth = 1.0));
        assert!(!bad(|_| ()));
    }

    #[test]
    fn capacity_from_probes_agrees_with_the_search() {
        let cfg = SearchConfig {
            min: 0.25,
            ..SearchConfig::default()
        };
        let (clean, _) = search(cfg.clone(), 21.6, vec![]);
        let Capacity::Found { load: clean, .. } = clean else {
            panic!("{clean:?}");
        };
        // A clean search, one whose knee-side repeat fails, one that never passes.
        for (knee, flaky) in [(21.6, vec![]), (21.6, vec![clean, clean]), (0.1, vec![])] {
            let (c, probes) = search(cfg.clone(), knee, flaky);
            assert_eq!(
                Capacity::from_probes(&probes),
                Some(c.clone()),
                "{probes:?}"
            );
            // Read back in another order, the loads are the same and the probe it rests on
            // is found again.
            let mut reversed = probes.clone();
            reversed.reverse();
            match (Capacity::from_probes(&reversed), c) {
                (
                    Some(Capacity::Found {
                        load,
                        failed_at,
                        rests_on,
                        ..
                    }),
                    Capacity::Found {
                        load: l,
                        failed_at: f,
                        ..
                    },
                ) => {
                    assert_eq!((load, failed_at), (l, f));
                    assert_eq!(reversed[rests_on].load, load);
                }
                (got, want) => assert_eq!(got, Some(want)),
            }
        }
        assert!(matches!(
            Capacity::from_probes(&search(cfg, 0.1, vec![]).1),
            Some(Capacity::BelowMin { load }) if load == 0.25
        ));
        let passes = [1.0, 2.0].map(|load| ProbeOutcome { load, passed: true });
        assert_eq!(
            Capacity::from_probes(&passes),
            Some(Capacity::AtLeast {
                load: 2.0,
                rests_on: 1,
                at_load: Tally { met: 1, probes: 1 },
            })
        );
        assert_eq!(Capacity::from_probes(&[]), None);
    }

    #[test]
    fn capacity_in_words() {
        let c = Capacity::Found {
            load: 20.0,
            failed_at: 21.0,
            rests_on: 9,
            at_load: Tally { met: 2, probes: 2 },
            at_failed: Tally { met: 0, probes: 2 },
        };
        assert_eq!(
            c.describe("req/s"),
            "capacity 20.000 req/s: all 2 probes at 20.000 met the objectives and all 2 probes \
             at 21.000 did not, so the knee lies in [20.000, 21.000) (+5.0 %); it rests on probe \
             10"
        );
        // After majority verdicts the words stay true: not "every probe".
        let c = Capacity::Found {
            load: 16.0,
            failed_at: 17.0,
            rests_on: 7,
            at_load: Tally { met: 2, probes: 3 },
            at_failed: Tally { met: 1, probes: 3 },
        };
        assert!(
            c.describe("req/s").starts_with(
                "capacity 16.000 req/s: 2 of 3 probes at 16.000 met the objectives and 2 of 3 \
                 probes at 17.000 did not"
            ),
            "{}",
            c.describe("req/s")
        );
        let (c, probes) = search(SearchConfig::default(), 21.6, vec![21.6_f64.min(16.0)]);
        let Capacity::Found { at_load, load, .. } = c else {
            panic!("{c:?}");
        };
        assert_eq!(at_load, Tally::of(&probes, load));
        let at_least = Capacity::AtLeast {
            load: 8.0,
            rests_on: 3,
            at_load: Tally { met: 1, probes: 1 },
        };
        assert_eq!(
            at_least.describe("req/s"),
            "capacity at least 8.000 req/s: every load up to the maximum met the objectives by \
             the majority of its probes (the one probe at 8.000; probe 4)"
        );
    }
}
