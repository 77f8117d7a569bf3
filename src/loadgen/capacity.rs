//! Capacity search: the highest load whose requests meet the service-level objectives.
//!
//! Three pure pieces that `benchlens sweep` strings together, each testable without a server:
//!
//! - [`CapacitySlo`]: the objectives, in vLLM's `--goodput` syntax (`ttft:500` — each request's
//!   TTFT at most 500 ms) plus percentile objectives (`p99_ttft:500` — the stage's 99th
//!   percentile at most 500 ms) and the share of requests that must be good (`--min-good-pct`,
//!   99 by default). A failed request is never good.
//! - [`steady_window`]: which requests of a probe were sent while the server was in its steady
//!   state: those of the warm-up (the system filling) and of the drain (arrivals stopped, the
//!   load falling) are left out, and the rule that chose the window is recorded with it.
//! - [`Search`]: brackets the capacity by multiplying the load until a probe fails, bisects the
//!   bracket (geometric midpoints, since capacities span orders of magnitude) until it is
//!   narrower than the tolerance, then repeats the probes on both sides of the knee. The
//!   capacity is the highest load that passed every one of its probes; the lowest load that
//!   failed bounds it from above, and the pair is the uncertainty reported.

use std::fmt;

use thiserror::Error;

use crate::analysis::stats::percentile_sorted;

/// A latency measured per request that an objective can bound.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SloMetric {
    /// Time to first token.
    Ttft,
    /// Time per output token after the first.
    Tpot,
    /// Inter-token latency (per token).
    Itl,
    /// End-to-end latency.
    E2el,
}

impl SloMetric {
    fn parse(name: &str) -> Option<SloMetric> {
        match name {
            "ttft" => Some(SloMetric::Ttft),
            "tpot" => Some(SloMetric::Tpot),
            "itl" => Some(SloMetric::Itl),
            "e2el" => Some(SloMetric::E2el),
            _ => None,
        }
    }

    /// The metric's name as vLLM writes it.
    pub fn name(self) -> &'static str {
        match self {
            SloMetric::Ttft => "ttft",
            SloMetric::Tpot => "tpot",
            SloMetric::Itl => "itl",
            SloMetric::E2el => "e2el",
        }
    }
}

/// One objective: a per-request bound (`percentile: None`) or a bound on a stage percentile.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Objective {
    /// What is bounded.
    pub metric: SloMetric,
    /// `Some(99.0)` for `p99_ttft:…`; `None` for vLLM's per-request `ttft:…`.
    pub percentile: Option<f64>,
    /// The bound, in milliseconds.
    pub limit_ms: f64,
}

impl fmt::Display for Objective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.percentile {
            Some(p) => write!(f, "p{p}_{}:{}", self.metric.name(), self.limit_ms),
            None => write!(f, "{}:{}", self.metric.name(), self.limit_ms),
        }
    }
}

/// Why an objective list does not parse.
#[derive(Debug, Error, PartialEq)]
pub enum SloError {
    /// An item without `NAME:MS`.
    #[error("{0:?} is not NAME:MS (for example ttft:500 or p99_ttft:500)")]
    Shape(String),
    /// A name that is neither a metric nor `pNN_metric`.
    #[error(
        "{item:?}: unknown objective {name:?} (ttft, tpot, itl, e2el, optionally as pNN_ttft …)"
    )]
    Name {
        /// The whole item.
        item: String,
        /// The part before the colon.
        name: String,
    },
    /// A percentile outside (0, 100].
    #[error("{0:?}: the percentile must be above 0 and at most 100")]
    Percentile(String),
    /// A bound that is not a finite, non-negative number.
    #[error("{0:?}: the bound is not a number of milliseconds")]
    Limit(String),
    /// A share of good requests outside [0, 100].
    #[error("--min-good-pct {0}: must be between 0 and 100")]
    GoodShare(f64),
    /// No objective at all.
    #[error(
        "no objective given: a capacity needs at least one (for example --goodput p99_ttft:500)"
    )]
    Empty,
}

/// The objectives a probe must meet.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacitySlo {
    /// Every objective, in the order given.
    pub objectives: Vec<Objective>,
    /// The fraction (0..=1) of a probe's requests that must be good.
    pub min_good_fraction: f64,
}

impl CapacitySlo {
    /// Parses `ttft:500 p99_ttft:800 p95_tpot:50` items (one or several per argument) and the
    /// share of requests that must be good, in percent.
    pub fn parse(items: &[String], min_good_pct: f64) -> Result<CapacitySlo, SloError> {
        if !(0.0..=100.0).contains(&min_good_pct) {
            return Err(SloError::GoodShare(min_good_pct));
        }
        let mut objectives = Vec::new();
        for item in items.iter().flat_map(|s| s.split_whitespace()) {
            let (name, value) = item
                .split_once(':')
                .ok_or_else(|| SloError::Shape(item.to_string()))?;
            let limit_ms: f64 = value
                .parse()
                .ok()
                .filter(|x: &f64| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| SloError::Limit(item.to_string()))?;
            let unknown = || SloError::Name {
                item: item.to_string(),
                name: name.to_string(),
            };
            let (percentile, metric) = match name.strip_prefix('p').and_then(|r| r.split_once('_'))
            {
                Some((p, metric)) => {
                    let p: f64 = p.parse().map_err(|_| unknown())?;
                    if !(p > 0.0 && p <= 100.0) {
                        return Err(SloError::Percentile(item.to_string()));
                    }
                    (Some(p), metric)
                }
                None => (None, name),
            };
            let metric = SloMetric::parse(metric).ok_or_else(unknown)?;
            objectives.push(Objective {
                metric,
                percentile,
                limit_ms,
            });
        }
        if objectives.is_empty() {
            return Err(SloError::Empty);
        }
        Ok(CapacitySlo {
            objectives,
            min_good_fraction: min_good_pct / 100.0,
        })
    }
}

impl fmt::Display for CapacitySlo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, o) in self.objectives.iter().enumerate() {
            if i > 0 {
                f.write_str(" ")?;
            }
            write!(f, "{o}")?;
        }
        write!(
            f,
            ", at least {}% of requests good",
            self.min_good_fraction * 100.0
        )
    }
}

/// What a probe's verdict needs of one request in its window.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestOutcome {
    /// Whether it succeeded; a failure is never good and has no latencies.
    pub ok: bool,
    /// Time to first token, ms.
    pub ttft_ms: f64,
    /// Time per output token, ms.
    pub tpot_ms: f64,
    /// Inter-token latencies, ms.
    pub itl_ms: Vec<f64>,
    /// End-to-end latency, ms.
    pub e2el_ms: f64,
}

impl RequestOutcome {
    fn value(&self, m: SloMetric) -> f64 {
        match m {
            SloMetric::Ttft => self.ttft_ms,
            SloMetric::Tpot => self.tpot_ms,
            SloMetric::Itl => self.itl_ms.iter().copied().fold(0.0, f64::max),
            SloMetric::E2el => self.e2el_ms,
        }
    }
}

/// One objective's measured value against its bound.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectiveCheck {
    /// The objective.
    pub objective: Objective,
    /// The measured percentile (ms); for a per-request objective, the share of requests that met
    /// it, in percent.
    pub measured: Option<f64>,
    /// Whether it was met.
    pub met: bool,
}

/// Whether a probe met the objectives, and by how much each.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// Requests judged (those of the steady window).
    pub requests: usize,
    /// Good requests: succeeded and within every per-request bound.
    pub good: usize,
    /// Each objective's check, in order.
    pub checks: Vec<ObjectiveCheck>,
    /// All met, and enough requests good.
    pub passed: bool,
}

impl Verdict {
    /// Good requests as a fraction of those judged (0 when none).
    pub fn good_fraction(&self) -> f64 {
        if self.requests == 0 {
            0.0
        } else {
            self.good as f64 / self.requests as f64
        }
    }
}

/// Judges a probe's requests against the objectives. With no request at all the probe fails.
pub fn judge(slo: &CapacitySlo, requests: &[RequestOutcome]) -> Verdict {
    let per_request: Vec<&Objective> = slo
        .objectives
        .iter()
        .filter(|o| o.percentile.is_none())
        .collect();
    let good = requests
        .iter()
        .filter(|r| r.ok && per_request.iter().all(|o| r.value(o.metric) <= o.limit_ms))
        .count();
    let mut checks = Vec::with_capacity(slo.objectives.len());
    for o in &slo.objectives {
        let check = match o.percentile {
            None => {
                let met_by = requests
                    .iter()
                    .filter(|r| r.ok && r.value(o.metric) <= o.limit_ms)
                    .count();
                let share =
                    (!requests.is_empty()).then(|| met_by as f64 / requests.len() as f64 * 100.0);
                ObjectiveCheck {
                    objective: *o,
                    measured: share,
                    met: share.is_some_and(|s| s >= slo.min_good_fraction * 100.0),
                }
            }
            Some(p) => {
                // A failed request has no latency: it counts as beyond every bound, so failures
                // cannot make a percentile look better.
                let mut values: Vec<f64> = Vec::with_capacity(requests.len());
                for r in requests {
                    if !r.ok {
                        values.push(f64::INFINITY);
                    } else if o.metric == SloMetric::Itl {
                        values.extend_from_slice(&r.itl_ms);
                    } else {
                        values.push(r.value(o.metric));
                    }
                }
                values.sort_by(f64::total_cmp);
                let measured = percentile_sorted(&values, p);
                ObjectiveCheck {
                    objective: *o,
                    measured,
                    met: measured.is_some_and(|v| v <= o.limit_ms),
                }
            }
        };
        checks.push(check);
    }
    let enough_good =
        !requests.is_empty() && good as f64 >= slo.min_good_fraction * requests.len() as f64;
    Verdict {
        requests: requests.len(),
        good,
        passed: enough_good && checks.iter().all(|c| c.met),
        checks,
    }
}

/// A request's place in time, seconds from the probe's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RequestSpan {
    /// When it was sent.
    pub sent_s: f64,
    /// When it ended (success or failure).
    pub end_s: f64,
}

/// The part of a probe measured, and the rule that chose it.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyWindow {
    /// Start of the window, seconds from the probe's start (requests sent from here on count).
    pub start_s: f64,
    /// End of the window (requests sent before it count).
    pub end_s: f64,
    /// Indices of the requests in the window, in the order given.
    pub indices: Vec<usize>,
    /// The rule, in words, with its numbers.
    pub rule: String,
}

/// The fewest requests a window may hold; with fewer the whole probe is used (and the rule says so).
pub const MIN_WINDOW_REQUESTS: usize = 20;

/// The steady-state window of a probe whose arrivals ran from 0 to `arrivals_end_s`.
///
/// The warm-up lasts while the server fills: until the in-flight count has had time to reach
/// its level, which by Little's law takes about one request lifetime — the median latency of the
/// probe's first requests (the first tenth, at least one) — and at least a tenth of the
/// arrivals. The drain is the last median latency of the arrivals: requests sent then finish as
/// the load falls away after the last arrival, so they would see a lighter server. Requests
/// sent between the two are judged. A window that would hold fewer than
/// [`MIN_WINDOW_REQUESTS`] falls back to every request.
pub fn steady_window(spans: &[RequestSpan], arrivals_end_s: f64) -> SteadyWindow {
    let all = || (0..spans.len()).collect::<Vec<_>>();
    let mut order: Vec<usize> = all();
    order.sort_by(|&a, &b| spans[a].sent_s.total_cmp(&spans[b].sent_s));
    let first_n = order.len().div_ceil(10).max(1).min(order.len());
    let mut first_latencies: Vec<f64> = order[..first_n]
        .iter()
        .map(|&i| (spans[i].end_s - spans[i].sent_s).max(0.0))
        .collect();
    first_latencies.sort_by(f64::total_cmp);
    let lifetime_s = percentile_sorted(&first_latencies, 50.0).unwrap_or(0.0);
    let arrivals_end_s = arrivals_end_s.max(0.0);
    let start_s = lifetime_s.max(0.1 * arrivals_end_s);
    let end_s = arrivals_end_s - lifetime_s;
    let indices: Vec<usize> = (0..spans.len())
        .filter(|&i| spans[i].sent_s >= start_s && spans[i].sent_s < end_s)
        .collect();
    if indices.len() < MIN_WINDOW_REQUESTS {
        return SteadyWindow {
            start_s: 0.0,
            end_s: arrivals_end_s,
            rule: format!(
                "whole probe: the steady window ({start_s:.2}–{end_s:.2} s) would hold {} \
                 request(s), fewer than {MIN_WINDOW_REQUESTS}",
                indices.len()
            ),
            indices: all(),
        };
    }
    SteadyWindow {
        start_s,
        end_s,
        rule: format!(
            "warm-up: the first {start_s:.2} s (max of one median request lifetime, \
             {lifetime_s:.3} s, and a tenth of the {arrivals_end_s:.2} s of arrivals); \
             drain: the last {lifetime_s:.3} s of arrivals"
        ),
        indices,
    }
}

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

/// One probe's load and whether it passed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProbeOutcome {
    /// The load probed.
    pub load: f64,
    /// Whether it met the objectives.
    pub passed: bool,
}

/// The search's answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Capacity {
    /// Found: the knee lies between `load` (passed every probe) and `failed_at`.
    Found {
        /// The highest load that passed every probe of it: the capacity.
        load: f64,
        /// The lowest load above it that failed a probe.
        failed_at: f64,
        /// Index (in probe order) of the last probe of `load`.
        rests_on: usize,
    },
    /// Every load up to the maximum passed: the capacity is at least `load`.
    AtLeast {
        /// The highest load probed (and passed).
        load: f64,
        /// Index of its last probe.
        rests_on: usize,
    },
    /// Even the minimum load failed.
    BelowMin {
        /// The lowest load probed (and failed).
        load: f64,
    },
}

impl Capacity {
    /// The capacity in words, with its uncertainty.
    pub fn describe(&self, unit: &str) -> String {
        match self {
            Capacity::Found {
                load,
                failed_at,
                rests_on,
            } => format!(
                "capacity {load:.3} {unit}: every probe at {load:.3} met the objectives and one \
                 at {failed_at:.3} did not, so the knee lies in [{load:.3}, {failed_at:.3}) \
                 (+{:.1} %); it rests on probe {}",
                (failed_at / load - 1.0) * 100.0,
                rests_on + 1
            ),
            Capacity::AtLeast { load, rests_on } => format!(
                "capacity at least {load:.3} {unit}: every probe up to the maximum met the \
                 objectives (probe {})",
                rests_on + 1
            ),
            Capacity::BelowMin { load } => format!(
                "capacity below {load:.3} {unit}: even the lowest load probed missed the objectives"
            ),
        }
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

    /// The highest load whose every probe passed, below the lowest load that failed any.
    fn bracket(&self) -> (Option<f64>, Option<f64>) {
        let failed = self
            .probes
            .iter()
            .filter(|p| !p.passed)
            .map(|p| p.load)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.min(x))));
        let passed = self
            .probes
            .iter()
            .map(|p| p.load)
            .filter(|&l| failed.is_none_or(|f| l < f) && self.runs_at(l).1)
            .fold(None, |m: Option<f64>, x| Some(m.map_or(x, |m| m.max(x))));
        (passed, failed)
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
        let (low, high) = self.bracket();
        match (low, high) {
            (None, None) => Step::Probe(c.start),
            // Still bracketing upwards.
            (Some(lo), None) => {
                if lo >= c.max {
                    Step::Done(Capacity::AtLeast {
                        load: lo,
                        rests_on: self.last_index_at(lo),
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
                        mid
                    };
                    return Step::Probe(mid);
                }
                // Narrow enough: repeat the passing side until it has passed `repeats` times
                // (one failure moves the bracket down), and the failing side until it has been
                // probed as often (a failure stands: one miss is enough to leave a load out).
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
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(s: &str) -> Vec<String> {
        vec![s.to_string()]
    }

    #[test]
    fn objectives_parse_in_vllm_and_percentile_forms() {
        let slo = CapacitySlo::parse(&items("ttft:500 p99_ttft:800 p95.5_itl:40"), 99.0).unwrap();
        assert_eq!(
            slo.objectives,
            vec![
                Objective {
                    metric: SloMetric::Ttft,
                    percentile: None,
                    limit_ms: 500.0
                },
                Objective {
                    metric: SloMetric::Ttft,
                    percentile: Some(99.0),
                    limit_ms: 800.0
                },
                Objective {
                    metric: SloMetric::Itl,
                    percentile: Some(95.5),
                    limit_ms: 40.0
                },
            ]
        );
        assert_eq!(slo.min_good_fraction, 0.99);
        assert_eq!(
            slo.to_string(),
            "ttft:500 p99_ttft:800 p95.5_itl:40, at least 99% of requests good"
        );
    }

    #[test]
    fn bad_objectives_say_which_item() {
        assert_eq!(
            CapacitySlo::parse(&items("ttft=5"), 99.0),
            Err(SloError::Shape("ttft=5".into()))
        );
        assert_eq!(
            CapacitySlo::parse(&items("p0_ttft:5"), 99.0),
            Err(SloError::Percentile("p0_ttft:5".into()))
        );
        assert_eq!(
            CapacitySlo::parse(&items("p101_ttft:5"), 99.0),
            Err(SloError::Percentile("p101_ttft:5".into()))
        );
        assert!(matches!(
            CapacitySlo::parse(&items("p99_speed:5"), 99.0),
            Err(SloError::Name { .. })
        ));
        assert!(matches!(
            CapacitySlo::parse(&items("pxx_ttft:5"), 99.0),
            Err(SloError::Name { .. })
        ));
        assert_eq!(
            CapacitySlo::parse(&items("ttft:-1"), 99.0),
            Err(SloError::Limit("ttft:-1".into()))
        );
        assert_eq!(
            CapacitySlo::parse(&items("ttft:nan"), 99.0),
            Err(SloError::Limit("ttft:nan".into()))
        );
        assert_eq!(CapacitySlo::parse(&[], 99.0), Err(SloError::Empty));
        assert_eq!(
            CapacitySlo::parse(&items("ttft:5"), 101.0),
            Err(SloError::GoodShare(101.0))
        );
    }

    fn ok(ttft: f64) -> RequestOutcome {
        RequestOutcome {
            ok: true,
            ttft_ms: ttft,
            tpot_ms: 10.0,
            itl_ms: vec![10.0, 12.0],
            e2el_ms: ttft + 20.0,
        }
    }

    #[test]
    fn judge_counts_failures_as_beyond_every_bound() {
        let slo = CapacitySlo::parse(&items("p50_ttft:100"), 0.0).unwrap();
        // Two fast successes and two failures: the median sits among the failures.
        let mut reqs = vec![
            ok(10.0),
            ok(20.0),
            RequestOutcome::default(),
            RequestOutcome::default(),
        ];
        let v = judge(&slo, &reqs);
        assert!(!v.passed);
        assert_eq!(v.good, 2);
        reqs.truncate(3);
        let v = judge(&slo, &reqs);
        assert_eq!(v.checks[0].measured, Some(20.0));
        assert!(v.passed);
    }

    #[test]
    fn judge_needs_the_share_of_good_requests() {
        let slo = CapacitySlo::parse(&items("ttft:100"), 75.0).unwrap();
        let reqs = vec![ok(10.0), ok(20.0), ok(30.0), ok(200.0)];
        let v = judge(&slo, &reqs);
        assert_eq!((v.good, v.requests), (3, 4));
        assert_eq!(v.checks[0].measured, Some(75.0));
        assert!(v.passed);
        let strict = CapacitySlo::parse(&items("ttft:100"), 80.0).unwrap();
        assert!(!judge(&strict, &reqs).passed);
        assert!(!judge(&slo, &[]).passed, "no request, no pass");
    }

    #[test]
    fn itl_percentiles_pool_every_token() {
        let slo = CapacitySlo::parse(&items("p100_itl:11"), 0.0).unwrap();
        let v = judge(&slo, &[ok(1.0)]);
        assert_eq!(v.checks[0].measured, Some(12.0));
        assert!(!v.passed);
    }

    fn spans(n: usize, gap_s: f64, life_s: f64) -> Vec<RequestSpan> {
        (0..n)
            .map(|i| RequestSpan {
                sent_s: i as f64 * gap_s,
                end_s: i as f64 * gap_s + life_s,
            })
            .collect()
    }

    #[test]
    fn steady_window_leaves_out_warm_up_and_drain() {
        // 100 requests over 10 s, each living 2 s: warm-up 2 s, drain the last 2 s.
        let s = spans(100, 0.1, 2.0);
        let w = steady_window(&s, 10.0);
        assert_eq!((w.start_s, w.end_s), (2.0, 8.0));
        assert_eq!(w.indices.first(), Some(&20));
        assert_eq!(w.indices.last(), Some(&79));
        assert_eq!(w.indices.len(), 60);
        assert!(
            w.rule.starts_with("warm-up: the first 2.00 s"),
            "{}",
            w.rule
        );
        // Short lives: the warm-up is a tenth of the arrivals.
        let w = steady_window(&spans(100, 0.1, 0.05), 10.0);
        assert_eq!((w.start_s, w.end_s), (1.0, 9.95));
        assert_eq!(w.indices.len(), 90);
    }

    #[test]
    fn steady_window_falls_back_to_the_whole_probe() {
        let s = spans(30, 0.1, 1.5);
        let w = steady_window(&s, 3.0);
        assert_eq!(w.indices.len(), 30);
        assert!(w.rule.starts_with("whole probe"), "{}", w.rule);
        assert_eq!(steady_window(&[], 3.0).indices.len(), 0);
    }

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
                rests_on: probes.iter().rposition(|p| p.load == 11.0).unwrap()
            }
        );
        assert!(probes.iter().all(|p| p.load.fract() == 0.0), "{probes:?}");
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
    fn capacity_in_words() {
        let c = Capacity::Found {
            load: 20.0,
            failed_at: 21.0,
            rests_on: 9,
        };
        assert_eq!(
            c.describe("req/s"),
            "capacity 20.000 req/s: every probe at 20.000 met the objectives and one at 21.000 \
             did not, so the knee lies in [20.000, 21.000) (+5.0 %); it rests on probe 10"
        );
    }
}
