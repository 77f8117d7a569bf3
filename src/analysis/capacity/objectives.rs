//! Objectives: the one way they are written, read by [`parse_item`] wherever they are given
//! (`run --goodput`, `sweep --goodput`, the explorer's SLO view and its link): vLLM's
//! per-request form (`ttft:500`), stage percentiles (`p99_ttft:500`) and, for the SLO view,
//! any figure a result file records (`mean_tpot_ms<=50`). Then, for a capacity, the share of
//! requests that must be good, and a probe judged against them ([`judge`]). A failed request
//! is never good and counts as beyond every bound.

use std::fmt;

use thiserror::Error;

use crate::analysis::stats::percentile_sorted;
use crate::model::MetricKey;

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
    /// `ttft`, `tpot`, `itl`, `e2el`, with or without `_ms`.
    fn parse(name: &str) -> Option<SloMetric> {
        match name.strip_suffix("_ms").unwrap_or(name) {
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
    /// An item without `NAME:LIMIT` (or `NAME<=LIMIT`).
    #[error("{0:?} is not NAME:LIMIT (for example ttft:500, p99_ttft:500 or mean_tpot_ms<=50)")]
    Shape(String),
    /// A name that is neither a metric nor `pNN_metric`.
    #[error(
        "{item:?}: unknown objective {name:?} (ttft, tpot, itl, e2el, optionally as pNN_ttft …, or a metric name)"
    )]
    Name {
        /// The whole item.
        item: String,
        /// The part before the colon.
        name: String,
    },
    /// An objective of a kind this use does not take.
    #[error("{item:?}: {why}")]
    NotHere {
        /// The item as given.
        item: String,
        /// What the use takes instead.
        why: &'static str,
    },
    /// A percentile outside (0, 100].
    #[error("{0:?}: the percentile must be above 0 and at most 100")]
    Percentile(String),
    /// A bound that is not a finite number (not below 0 for a latency).
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
    /// Recorded objectives (`tag.objectives`) not in the form a sweep writes.
    #[error(
        "{0:?} is not ITEMS, at least N% of requests good (as a sweep records its objectives)"
    )]
    Recorded(String),
}

/// What one objective bounds.
#[derive(Clone, Debug, PartialEq)]
pub enum Bounded {
    /// Every request's latency (`ttft:500`, vLLM's `--goodput`).
    Request(SloMetric),
    /// A percentile of a stage's request latencies (`p99_ttft:500`, also `p99_ttft_ms<=500`).
    Percentile(f64, SloMetric),
    /// Another figure a result file records (`mean_tpot_ms<=50`, `output_throughput>=…` is not
    /// a form: every objective is an upper bound).
    Figure(MetricKey),
}

/// One objective as written: what it bounds and the bound (in ms for latencies, else in the
/// figure's unit).
#[derive(Clone, Debug, PartialEq)]
pub struct Item {
    /// What is bounded.
    pub bounded: Bounded,
    /// The largest value that meets it.
    pub limit: f64,
}

/// Reads one objective: `NAME:LIMIT` or `NAME<=LIMIT` (also `≤`, spaces allowed), the name a
/// per-request latency (`ttft`, `tpot`, `itl`, `e2el`, `_ms` optional), `pNN_` and one of
/// them, or any metric name of a result file; the limit a finite number, at least 0 for
/// latencies. Each use says which kinds it takes.
pub fn parse_item(item: &str) -> Result<Item, SloError> {
    let text = item.trim();
    let (name, value) = text
        .split_once("<=")
        .or_else(|| text.split_once('≤'))
        .or_else(|| text.split_once(':'))
        .ok_or_else(|| SloError::Shape(text.to_string()))?;
    let name = name.trim();
    let limit: f64 = value
        .trim()
        .parse()
        .ok()
        .filter(|x: &f64| x.is_finite())
        .ok_or_else(|| SloError::Limit(text.to_string()))?;
    let unknown = || SloError::Name {
        item: text.to_string(),
        name: name.to_string(),
    };
    let percentile = name
        .strip_prefix('p')
        .and_then(|r| r.split_once('_'))
        .and_then(|(p, m)| Some((p.parse::<f64>().ok()?, SloMetric::parse(m)?)));
    let bounded = if let Some(m) = SloMetric::parse(name) {
        Bounded::Request(m)
    } else if let Some((p, m)) = percentile {
        if !(p > 0.0 && p <= 100.0) {
            return Err(SloError::Percentile(text.to_string()));
        }
        Bounded::Percentile(p, m)
    } else {
        Bounded::Figure(MetricKey::from_name(name).ok_or_else(unknown)?)
    };
    if !matches!(bounded, Bounded::Figure(_)) && limit < 0.0 {
        return Err(SloError::Limit(text.to_string()));
    }
    Ok(Item { bounded, limit })
}

/// One objective as a command line gives it (`--goodput`'s items): [`parse_item`], a
/// per-request latency or a percentile of one, not a recorded figure (the SLO view's).
impl std::str::FromStr for Objective {
    type Err = SloError;

    fn from_str(item: &str) -> Result<Objective, SloError> {
        let parsed = parse_item(item)?;
        let (metric, percentile) = match parsed.bounded {
            Bounded::Request(m) => (m, None),
            Bounded::Percentile(p, m) => (m, Some(p)),
            Bounded::Figure(_) => {
                return Err(SloError::NotHere {
                    item: item.trim().to_string(),
                    why: "an objective bounds each request's ttft, tpot, itl or e2el, or a \
                          percentile of them (p99_ttft:500)",
                })
            }
        };
        Ok(Objective {
            metric,
            percentile,
            limit_ms: parsed.limit,
        })
    }
}

/// One `--goodput` argument: one objective or several separated by spaces
/// (`--goodput "ttft:500 p99_tpot:50"`), each read as [`Objective`] reads it, so a bad one is
/// refused where the command line is parsed, naming the flag.
#[derive(Clone, Debug, PartialEq)]
pub struct Objectives(pub Vec<Objective>);

impl std::str::FromStr for Objectives {
    type Err = SloError;

    fn from_str(text: &str) -> Result<Objectives, SloError> {
        if text.trim().is_empty() {
            return Err(SloError::Shape(text.to_string()));
        }
        text.split_whitespace()
            .map(str::parse)
            .collect::<Result<_, _>>()
            .map(Objectives)
    }
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
    /// The objectives (at least one) and the share of requests that must be good, in
    /// percent.
    pub fn new(objectives: Vec<Objective>, min_good_pct: f64) -> Result<CapacitySlo, SloError> {
        if !(0.0..=100.0).contains(&min_good_pct) {
            return Err(SloError::GoodShare(min_good_pct));
        }
        if objectives.is_empty() {
            return Err(SloError::Empty);
        }
        Ok(CapacitySlo {
            objectives,
            min_good_fraction: min_good_pct / 100.0,
        })
    }

    /// [`CapacitySlo::new`] of `ttft:500 p99_ttft:800 p95_tpot:50` items (one or several per
    /// text, as [`Objectives`] reads them).
    pub fn parse(items: &[String], min_good_pct: f64) -> Result<CapacitySlo, SloError> {
        let mut objectives = Vec::new();
        for item in items {
            objectives.extend(item.parse::<Objectives>()?.0);
        }
        CapacitySlo::new(objectives, min_good_pct)
    }
}

/// What [`CapacitySlo`]'s text says after its objectives.
const GOOD_SHARE_PREFIX: &str = ", at least ";
/// ...and after the share.
const GOOD_SHARE_SUFFIX: &str = "% of requests good";

impl CapacitySlo {
    /// Reads objectives back from their text, as [`Display`](fmt::Display) writes it and a
    /// sweep records it in `tag.objectives` (`p99_ttft:500 ttft:800, at least 99% of requests
    /// good`).
    pub fn from_recorded(text: &str) -> Result<CapacitySlo, SloError> {
        let recorded = || SloError::Recorded(text.to_string());
        let (items, share) = text.rsplit_once(GOOD_SHARE_PREFIX).ok_or_else(recorded)?;
        let pct: f64 = share
            .strip_suffix(GOOD_SHARE_SUFFIX)
            .and_then(|p| p.trim().parse().ok())
            .ok_or_else(recorded)?;
        CapacitySlo::parse(&[items.to_string()], pct)
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
            "{GOOD_SHARE_PREFIX}{}{GOOD_SHARE_SUFFIX}",
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
    /// Whether it was met (never when too few samples were measured for its percentile).
    pub met: bool,
    /// For a percentile objective measured on fewer samples than [`min_samples`] asks: how
    /// many it needs. The probe was too short to judge it.
    pub too_few: Option<usize>,
    /// Samples it was judged on: requests for a per-request objective; values (tokens'
    /// gaps for ITL) for a percentile.
    pub samples: usize,
}

/// Fewest samples a percentile objective is judged on: enough that the percentile is not read
/// off the sample maximum. The percentile interpolates between ranks `⌊p·(n−1)⌋` and the next
/// (0-based, `p` as a fraction), so it stays clear of the maximum (rank `n−1`) only when
/// `p·(n−1) ≤ n−2`, i.e. `n ≥ 1 + 1/(1−p)`: 11 requests for p90, 21 for p95, 101 for p99,
/// 1001 for p99.9. Fewer, and one outlier is the percentile (the p99 of 27 requests is their
/// maximum, so a single slow first token failed a probe). p100 is the maximum by definition and
/// needs one sample.
pub fn min_samples(percentile: f64) -> usize {
    let p = percentile / 100.0;
    if !(0.0..1.0).contains(&p) {
        return 1;
    }
    // The smallest whole n with p·(n−1) ≤ n−2, found by stepping rather than trusting
    // 1/(1−p); a rounding error of 1e-9 (0.999 · 1000 is not exactly 999) gives the maximum no
    // weight worth a sample.
    let clear = |n: usize| p * (n as f64 - 1.0) <= n as f64 - 2.0 + 1e-9;
    let mut n = (1.0 + 1.0 / (1.0 - p)).floor().max(2.0) as usize;
    while !clear(n) {
        n += 1;
    }
    while n > 2 && clear(n - 1) {
        n -= 1;
    }
    n
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
                    too_few: None,
                    samples: requests.len(),
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
                crate::model::order::sort_floats(&mut values);
                let measured = percentile_sorted(&values, p);
                let need = min_samples(p);
                let too_few = (values.len() < need).then_some(need);
                ObjectiveCheck {
                    objective: *o,
                    measured,
                    met: too_few.is_none() && measured.is_some_and(|v| v <= o.limit_ms),
                    too_few,
                    samples: values.len(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_parser_reads_every_form_of_objective() {
        let read = |t: &str| parse_item(t).map(|i| (i.bounded, i.limit));
        assert_eq!(
            read("ttft:500"),
            Ok((Bounded::Request(SloMetric::Ttft), 500.0))
        );
        assert_eq!(
            read(" e2el_ms <= 2000 "),
            Ok((Bounded::Request(SloMetric::E2el), 2000.0))
        );
        assert_eq!(read("p99_ttft:500"), read("p99_ttft_ms<=500"));
        assert_eq!(
            read("p99.9_itl_ms≤40"),
            Ok((Bounded::Percentile(99.9, SloMetric::Itl), 40.0))
        );
        assert_eq!(
            read("mean_tpot_ms<=50"),
            Ok((
                Bounded::Figure(MetricKey::from_name("mean_tpot_ms").unwrap()),
                50.0
            ))
        );
        assert_eq!(read("ttft=5"), Err(SloError::Shape("ttft=5".into())));
        assert_eq!(
            read("p0_ttft:5"),
            Err(SloError::Percentile("p0_ttft:5".into()))
        );
        assert_eq!(read("ttft:-1"), Err(SloError::Limit("ttft:-1".into())));
        assert_eq!(read("ttft:inf"), Err(SloError::Limit("ttft:inf".into())));
        assert!(matches!(read("nope:5"), Err(SloError::Name { .. })));
        // A capacity takes requests and percentiles, not recorded figures.
        assert!(matches!(
            CapacitySlo::parse(&["mean_tpot_ms<=50".into()], 100.0),
            Err(SloError::NotHere { .. })
        ));
        assert_eq!(
            CapacitySlo::parse(&["p99_ttft_ms<=500 ttft:300".into()], 100.0),
            CapacitySlo::parse(&["p99_ttft:500".into(), "ttft:300".into()], 100.0)
        );
    }

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

    #[test]
    fn recorded_objectives_read_back() {
        for (items, pct) in [
            ("ttft:500 p99_ttft:800 p95.5_itl:40", 99.0),
            ("p90_e2el:2.5", 0.0),
        ] {
            let slo =
                CapacitySlo::parse(&items.split(' ').map(String::from).collect::<Vec<_>>(), pct)
                    .unwrap();
            assert_eq!(CapacitySlo::from_recorded(&slo.to_string()), Ok(slo));
        }
        let read =
            CapacitySlo::from_recorded("p90_ttft:100, at least 95% of requests good").unwrap();
        assert_eq!(read.min_good_fraction, 0.95);
        for bad in [
            "",
            "p90_ttft:100",
            "p90_ttft:100, at least many% of requests good",
            "p90_ttft:100, at least 99%",
            "<script>, at least 99% of requests good",
            ", at least 99% of requests good",
            "p90_ttft:100, at least 120% of requests good",
        ] {
            assert!(CapacitySlo::from_recorded(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            CapacitySlo::from_recorded("p90_ttft:100")
                .unwrap_err()
                .to_string(),
            "\"p90_ttft:100\" is not ITEMS, at least N% of requests good (as a sweep records its \
             objectives)"
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
    fn a_percentile_needs_enough_samples_not_to_be_the_maximum() {
        assert_eq!(
            [50.0, 90.0, 95.0, 99.0, 99.9, 100.0].map(min_samples),
            [3, 11, 21, 101, 1001, 1]
        );
        // The smallest count whose percentile reads no rank above the second largest value.
        for p in [90.0, 95.0, 99.0] {
            let n = min_samples(p);
            let clear = |n: usize| p / 100.0 * (n as f64 - 1.0) <= n as f64 - 2.0 + 1e-9;
            assert!(clear(n) && !clear(n - 1), "{p} {n}");
        }
        // The probe: 27 requests, one slow first token. p99 of them is their maximum,
        // so the probe is too short to judge p99 rather than failed by one outlier's value.
        let slo = CapacitySlo::parse(&items("p99_ttft:50"), 0.0).unwrap();
        let mut reqs: Vec<RequestOutcome> = (0..26).map(|_| ok(20.0)).collect();
        reqs.push(ok(73.8));
        let v = judge(&slo, &reqs);
        assert_eq!(v.checks[0].too_few, Some(101));
        assert!(!v.checks[0].met && !v.passed);
        let many: Vec<RequestOutcome> = (0..101).map(|_| ok(20.0)).collect();
        let v = judge(&slo, &many);
        assert_eq!((v.checks[0].too_few, v.passed), (None, true));
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
}
