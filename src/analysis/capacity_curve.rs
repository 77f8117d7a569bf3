//! The capacity curve of `benchlens sweep` files: goodput and each objective's measured value
//! against the load, probe by probe, with the objectives' limits, the knee and the capacity in
//! words ([`capacity_curves`], [`capacity_words`]); [`super::capacity_figure`] draws it.
//!
//! - **A probe** is a record with `tag.verdict` (`passed` or `failed`; `tag.partial` marks a
//!   probe cut short, drawn but not judged). Its load is `extra.probe_load`, else its request
//!   rate (or its concurrency, for a sweep over concurrency).
//! - **A sweep** is the probes that share every configuration dimension but the load, the
//!   verdict and the steady window's rule (`tag.steady_window`: the whole stage when a slow
//!   probe's window would hold too few requests): the file, the command line, the date, the server, the objectives and the
//!   deployment (engine, GPU, model, label, ...). `benchlens sweep` writes the first probe's
//!   date, seed and server on every probe, so one file's probes are one sweep, and two files
//!   are two sweeps.
//! - **Series**: sweeps are told apart by the dimensions that differ between them: the
//!   deployment's first (engine, GPU, model, ..., label, other tags), then the file, the date
//!   or the command line where those leave two sweeps with one name.
//! - **Goodput**: the record's `request_goodput` (vLLM's definition: requests per second that
//!   met every per-request objective); else, when the objectives have a per-request bound,
//!   request throughput × the steady window's share of good requests (`extra.good_pct`),
//!   marked as derived. Percentile objectives alone define no goodput: the first panel then
//!   shows request throughput.
//! - **Objectives** (`tag.objectives`, vLLM's `--goodput` syntax): a percentile objective
//!   (`p90_ttft:100`) is drawn as the value the probe was judged by (`extra.slo_p90_ttft_ms`,
//!   the steady window's percentile; else the record's `p90_ttft_ms`) under its bound; a
//!   per-request one (`ttft:500`) as the share of requests within it
//!   (`extra.slo_ttft_within_pct`) above the share required (`--min-good-pct`).
//! - **The capacity** is the sweep's own sentence (`tag.capacity`). The verdicts of the probes
//!   shown give it again by the search's rule ([`Capacity::from_probes`]): that is what the
//!   knee marks, and what is said when the sweep recorded none or the filters hide some of its
//!   probes.

use super::capacity::{Capacity, CapacitySlo, Objective, ProbeOutcome, SloMetric};
use super::defaults::SERIES_PREFERENCE;
use super::points::configuration_dims;
use crate::charts::style::{format_value, NO_VALUE};
use crate::model::{
    natural_cmp, Dataset, Dim, DimKey, DimValue, LatencyMetric, MetricKey, Percentile, Record, Stat,
};

/// The tag holding a probe's verdict (`passed`, `failed`).
pub const VERDICT_TAG: &str = "verdict";
/// The tag holding a sweep's objectives.
pub const OBJECTIVES_TAG: &str = "objectives";
/// The tag holding a sweep's capacity in words.
pub const CAPACITY_TAG: &str = "capacity";
/// The tag marking a probe cut short (Ctrl-C): kept, not judged.
const PARTIAL_TAG: &str = "partial";
/// The tag naming the rule of a probe's steady window: the whole stage when the window would
/// hold too few requests (a sweep's slowest probe), so it may differ from probe to probe.
const STEADY_WINDOW_TAG: &str = "steady_window";

/// Tags that belong to one probe, not to its sweep.
const PROBE_TAGS: [&str; 3] = [VERDICT_TAG, PARTIAL_TAG, STEADY_WINDOW_TAG];

/// Tags that say how or where a sweep was run rather than what was measured: they name a
/// sweep only when nothing else tells two apart.
const RUN_TAGS: [&str; 6] = [
    CAPACITY_TAG,
    "command_line",
    "server_url",
    "seed",
    "benchlens_version",
    "stage",
];

/// Most panels: the goodput panel and up to seven objectives (the figure lays out eight axes).
pub const MAX_CURVE_PANELS: usize = 8;

/// Most dimensions joined into one sweep's name.
const MAX_NAME_DIMS: usize = 3;

/// What a sweep varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum LoadAxis {
    /// Requests per second.
    RequestRate,
    /// Requests in flight.
    Concurrency,
}

impl LoadAxis {
    /// Axis title with unit.
    pub fn label(self) -> &'static str {
        match self {
            LoadAxis::RequestRate => "Request rate (req/s)",
            LoadAxis::Concurrency => "Concurrency (requests in flight)",
        }
    }

    /// The unit, as `benchlens sweep` writes it in its capacity sentence.
    pub fn unit(self) -> &'static str {
        match self {
            LoadAxis::RequestRate => "req/s",
            LoadAxis::Concurrency => "concurrent requests",
        }
    }

    fn dim(self) -> Dim {
        match self {
            LoadAxis::RequestRate => Dim::RequestRate,
            LoadAxis::Concurrency => Dim::MaxConcurrency,
        }
    }
}

/// A probe's verdict.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProbeVerdict {
    /// Met every objective.
    Passed,
    /// Missed one.
    Failed,
    /// Cut short (`tag.partial`): not a measurement of its load.
    Unjudged,
}

/// One probe of a sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct Probe {
    /// The record (index into the dataset).
    pub record: usize,
    /// Its number in the sweep (`extra.probe`, from 1), when recorded.
    pub number: Option<u32>,
    /// The load probed.
    pub load: f64,
    /// Its verdict.
    pub verdict: ProbeVerdict,
    /// Request throughput, req/s.
    pub throughput: Option<f64>,
    /// Goodput, req/s (see the module docs for where it comes from).
    pub goodput: Option<f64>,
    /// The value judged for each of [`CapacityCurves::panels`], by panel.
    pub values: Vec<Option<f64>>,
}

/// Where a sweep's goodput comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GoodputSource {
    /// The records' `request_goodput`.
    Recorded,
    /// Request throughput × the share of good requests.
    Derived,
    /// None: the objectives have no per-request bound.
    Absent,
}

/// One sweep: its probes in load order, its objectives and its capacity.
#[derive(Clone, Debug, PartialEq)]
pub struct Sweep {
    /// Its series name: its values of [`CapacityCurves::series_by`] joined by " · ".
    pub name: String,
    /// Its probes by load, repeats in probe order.
    pub probes: Vec<Probe>,
    /// Its objectives, when recorded and readable.
    pub objectives: Option<CapacitySlo>,
    /// Why `tag.objectives` could not be read.
    pub objectives_error: Option<String>,
    /// Where the goodput comes from.
    pub goodput: GoodputSource,
    /// The capacity sentence the sweep recorded (`tag.capacity`).
    pub recorded: Option<String>,
    /// The capacity the verdicts of the probes shown give; `rests_on` is the probe's number
    /// less one (as the sweep counts), or its place in probe order when unnumbered.
    pub capacity: Option<Capacity>,
}

/// The same statistic over the repeats at one load.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LoadSpread {
    /// The load.
    pub load: f64,
    /// Mean of the probes' values.
    pub mean: f64,
    /// Lowest value.
    pub min: f64,
    /// Highest value.
    pub max: f64,
    /// Probes with a value.
    pub probes: usize,
}

impl Sweep {
    /// The knee: from the capacity to the first failing load above it (`None` when nothing
    /// above it failed). `None` when no load passed every probe.
    pub fn knee(&self) -> Option<(f64, Option<f64>)> {
        match self.capacity {
            Some(Capacity::Found {
                load, failed_at, ..
            }) => Some((load, Some(failed_at))),
            Some(Capacity::AtLeast { load, .. }) => Some((load, None)),
            _ => None,
        }
    }

    /// `value` of each probe, gathered per load (mean, lowest, highest), in load order.
    pub fn by_load(&self, value: impl Fn(&Probe) -> Option<f64>) -> Vec<LoadSpread> {
        let mut out: Vec<LoadSpread> = Vec::new();
        for p in &self.probes {
            let Some(v) = value(p).filter(|v| v.is_finite()) else {
                continue;
            };
            match out.last_mut() {
                Some(s) if s.load == p.load => {
                    s.mean = (s.mean * s.probes as f64 + v) / (s.probes + 1) as f64;
                    s.min = s.min.min(v);
                    s.max = s.max.max(v);
                    s.probes += 1;
                }
                _ => out.push(LoadSpread {
                    load: p.load,
                    mean: v,
                    min: v,
                    max: v,
                    probes: 1,
                }),
            }
        }
        out
    }

    /// The first panel's value of a probe: goodput, or request throughput when the sweep has
    /// no goodput.
    pub fn first_panel_value(&self, p: &Probe) -> Option<f64> {
        match self.goodput {
            GoodputSource::Absent => p.throughput,
            _ => p.goodput,
        }
    }
}

/// One panel under the goodput panel: an objective of one or more sweeps.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectivePanel {
    /// What the panel shows: `p90_ttft` (each sweep its own bound) or `ttft:500`.
    pub key: String,
    /// The y axis title with unit.
    pub title: String,
    /// Each sweep's limit line (by sweep; `None` for a sweep without this objective).
    pub limits: Vec<Option<f64>>,
    /// How the limit reads (short: it names a legend entry): `P90 TTFT ≤ 100 ms`,
    /// `99 % with TTFT ≤ 500 ms` (of requests).
    pub limit_labels: Vec<Option<String>>,
}

/// The capacity curves of the probes among some records.
#[derive(Clone, Debug, PartialEq)]
pub struct CapacityCurves {
    /// The load axis.
    pub axis: LoadAxis,
    /// The dimensions naming the sweeps (empty: one sweep).
    pub series_by: Vec<DimKey>,
    /// The sweeps, in the order of their names' values.
    pub sweeps: Vec<Sweep>,
    /// One panel per objective, in the order the sweeps give them, at most
    /// [`MAX_CURVE_PANELS`] − 1.
    pub panels: Vec<ObjectivePanel>,
    /// Objectives left without a panel for want of room.
    pub panels_left_out: usize,
    /// Sweeps over the other load axis, not drawn.
    pub other_axis_sweeps: usize,
    /// Selected records that are not probes of a sweep.
    pub not_probes: usize,
}

/// Whether a record is a sweep's probe.
pub fn is_probe(r: &Record) -> bool {
    matches!(
        r.tags.get(VERDICT_TAG).map(String::as_str),
        Some("passed" | "failed")
    )
}

/// Whether the data is a sweep: every record is a probe (the explorer then opens on the
/// capacity view).
pub fn is_sweep_data(ds: &Dataset) -> bool {
    !ds.is_empty() && ds.records().iter().all(is_probe)
}

/// A probe's load and what it varies: `extra.probe_load` (the concurrency when it equals the
/// record's `max_concurrency` and not its rate), else the finite request rate, else the
/// concurrency.
fn load_of(r: &Record) -> Option<(LoadAxis, f64)> {
    let rate = r.request_rate.filter(|v| v.is_finite());
    let concurrency = r.max_concurrency.map(|c| c as f64);
    match r.metric(&MetricKey::Extra("probe_load".into())) {
        Some(l) if l.is_finite() => {
            if concurrency == Some(l) && rate != Some(l) {
                Some((LoadAxis::Concurrency, l))
            } else {
                Some((LoadAxis::RequestRate, l))
            }
        }
        _ => rate
            .map(|l| (LoadAxis::RequestRate, l))
            .or(concurrency.map(|l| (LoadAxis::Concurrency, l))),
    }
}

/// The objective's name before its bound: `p90_ttft`, `ttft`.
fn objective_name(o: &Objective) -> String {
    let text = o.to_string();
    text.split(':').next().unwrap_or_default().to_string()
}

fn latency_of(m: SloMetric) -> LatencyMetric {
    match m {
        SloMetric::Ttft => LatencyMetric::Ttft,
        SloMetric::Tpot => LatencyMetric::Tpot,
        SloMetric::Itl => LatencyMetric::Itl,
        SloMetric::E2el => LatencyMetric::E2el,
    }
}

/// The panel an objective is drawn in: its key, title, limit and how the limit reads.
fn panel_of(o: &Objective, slo: &CapacitySlo) -> (String, String, f64, String) {
    let short = latency_of(o.metric).short_label();
    let bound = format_bound(o.limit_ms);
    match o.percentile {
        Some(p) => (
            objective_name(o),
            format!("P{} {short} (ms)", format_bound(p)),
            o.limit_ms,
            format!("P{} {short} ≤ {bound} ms", format_bound(p)),
        ),
        None => {
            let share = slo.min_good_fraction * 100.0;
            (
                o.to_string(),
                format!("Requests with {short} ≤ {bound} ms (%)"),
                share,
                format!("{} % with {short} ≤ {bound} ms", format_bound(share)),
            )
        }
    }
}

/// A bound as written: `100`, `2.5`.
fn format_bound(v: f64) -> String {
    crate::model::format_number((v * 1e6).round() / 1e6)
}

/// The value a probe was judged by for objective `o`.
fn judged_value(r: &Record, o: &Objective) -> Option<f64> {
    let name = objective_name(o);
    match o.percentile {
        Some(p) => r
            .metric(&MetricKey::Extra(format!("slo_{name}_ms")))
            .or_else(|| {
                let p = Percentile::new(p)?;
                r.metric(&MetricKey::latency(latency_of(o.metric), Stat::P(p)))
            }),
        None => r.metric(&MetricKey::Extra(format!("slo_{name}_within_pct"))),
    }
}

/// A sweep as first gathered: its identity, axis and records.
struct Gathered {
    key: Vec<Option<DimValue>>,
    axis: LoadAxis,
    records: Vec<(usize, f64)>,
}

/// The capacity curves of the probes at `indices` (a filter's selection): probes grouped into
/// sweeps (see the module docs), sweeps named by what differs between them, one panel per
/// objective. Sweeps over the load axis of the first sweep are drawn; the others are counted.
pub fn capacity_curves(ds: &Dataset, indices: &[usize]) -> CapacityCurves {
    let identity: Vec<DimKey> = configuration_dims(ds)
        .into_iter()
        .filter(|k| {
            !matches!(k, DimKey::Tag(t) if PROBE_TAGS.contains(&t.as_str()))
                && !matches!(k, DimKey::Known(Dim::RequestRate | Dim::MaxConcurrency))
        })
        .collect();
    let mut gathered: Vec<Gathered> = Vec::new();
    let mut not_probes = 0;
    for &i in indices {
        let Some(r) = ds.records().get(i) else {
            continue;
        };
        let Some((axis, load)) = load_of(r).filter(|_| is_probe(r)) else {
            not_probes += 1;
            continue;
        };
        // The load dimension that is not varied (a rate sweep's concurrency cap) is part of
        // the sweep's identity.
        let mut key: Vec<Option<DimValue>> = identity.iter().map(|k| r.dim(k)).collect();
        let other = match axis {
            LoadAxis::RequestRate => Dim::MaxConcurrency,
            LoadAxis::Concurrency => Dim::RequestRate,
        };
        key.push(r.known(other));
        match gathered.iter_mut().find(|g| g.key == key && g.axis == axis) {
            Some(g) => g.records.push((i, load)),
            None => gathered.push(Gathered {
                key,
                axis,
                records: vec![(i, load)],
            }),
        }
    }
    let axis = gathered.first().map_or(LoadAxis::RequestRate, |g| g.axis);
    let other_axis_sweeps = gathered.iter().filter(|g| g.axis != axis).count();
    gathered.retain(|g| g.axis == axis);
    let mut key_dims = identity;
    key_dims.push(DimKey::Known(match axis {
        LoadAxis::RequestRate => Dim::MaxConcurrency,
        LoadAxis::Concurrency => Dim::RequestRate,
    }));
    let (series_by, names) = name_sweeps(&key_dims, &gathered, ds);

    let mut sweeps: Vec<Sweep> = Vec::new();
    let mut panels: Vec<ObjectivePanel> = Vec::new();
    let mut panel_objectives: Vec<Vec<Option<Objective>>> = Vec::new();
    let mut panels_left_out: Vec<String> = Vec::new();
    for (g, name) in gathered.iter().zip(names) {
        let first = g.records.first().and_then(|&(i, _)| ds.records().get(i));
        let recorded_objectives = first.and_then(|r| r.tags.get(OBJECTIVES_TAG));
        let (objectives, objectives_error) = match recorded_objectives {
            None => (None, None),
            Some(t) => match CapacitySlo::from_recorded(t) {
                Ok(slo) => (Some(slo), None),
                Err(e) => (None, Some(format!("tag.objectives: {e}"))),
            },
        };
        let si = sweeps.len();
        for p in panels.iter_mut() {
            p.limits.push(None);
            p.limit_labels.push(None);
        }
        for o in panel_objectives.iter_mut() {
            o.push(None);
        }
        if let Some(slo) = &objectives {
            for o in &slo.objectives {
                let (key, title, limit, label) = panel_of(o, slo);
                let at = match panels.iter().position(|p| p.key == key) {
                    Some(at) => at,
                    None if panels.len() + 1 < MAX_CURVE_PANELS => {
                        panels.push(ObjectivePanel {
                            key,
                            title,
                            limits: vec![None; si + 1],
                            limit_labels: vec![None; si + 1],
                        });
                        panel_objectives.push(vec![None; si + 1]);
                        panels.len() - 1
                    }
                    None => {
                        if !panels_left_out.contains(&key) {
                            panels_left_out.push(key);
                        }
                        continue;
                    }
                };
                panels[at].limits[si] = Some(limit);
                panels[at].limit_labels[si] = Some(label);
                panel_objectives[at][si] = Some(*o);
            }
        }
        let per_request = objectives
            .as_ref()
            .is_some_and(|s| s.objectives.iter().any(|o| o.percentile.is_none()));
        let mut probes: Vec<Probe> = g
            .records
            .iter()
            .filter_map(|&(i, load)| {
                let r = ds.records().get(i)?;
                let verdict = if r.tags.contains_key(PARTIAL_TAG) {
                    ProbeVerdict::Unjudged
                } else if r.tags.get(VERDICT_TAG).map(String::as_str) == Some("passed") {
                    ProbeVerdict::Passed
                } else {
                    ProbeVerdict::Failed
                };
                let throughput = r.metric(&MetricKey::RequestThroughput);
                let good_pct = r.metric(&MetricKey::Extra("good_pct".into()));
                let goodput = r.metric(&MetricKey::RequestGoodput).or_else(|| {
                    per_request
                        .then(|| Some(throughput? * good_pct? / 100.0))
                        .flatten()
                });
                Some(Probe {
                    record: i,
                    number: r
                        .metric(&MetricKey::Extra("probe".into()))
                        .filter(|n| n.is_finite() && *n >= 1.0 && n.fract() == 0.0)
                        .map(|n| n as u32),
                    load,
                    verdict,
                    throughput,
                    goodput,
                    values: Vec::new(),
                })
            })
            .collect();
        probes.sort_by(|a, b| {
            a.load
                .total_cmp(&b.load)
                .then(a.number.cmp(&b.number))
                .then(a.record.cmp(&b.record))
        });
        let goodput = if probes.iter().any(|p| {
            ds.records()
                .get(p.record)
                .is_some_and(|r| r.metric(&MetricKey::RequestGoodput).is_some())
        }) {
            GoodputSource::Recorded
        } else if probes.iter().any(|p| p.goodput.is_some()) {
            GoodputSource::Derived
        } else {
            GoodputSource::Absent
        };
        let capacity = capacity_of(&probes);
        sweeps.push(Sweep {
            name,
            probes,
            objectives,
            objectives_error,
            goodput,
            recorded: first.and_then(|r| r.tags.get(CAPACITY_TAG)).cloned(),
            capacity,
        });
    }
    // Each probe's judged value per panel, now that every panel is known.
    for (si, s) in sweeps.iter_mut().enumerate() {
        for p in &mut s.probes {
            let r = ds.records().get(p.record);
            p.values = panel_objectives
                .iter()
                .map(|by_sweep| {
                    let o = by_sweep.get(si).copied().flatten()?;
                    judged_value(r?, &o)
                })
                .collect();
        }
    }
    for p in &mut panels {
        p.limits.resize(sweeps.len(), None);
        p.limit_labels.resize(sweeps.len(), None);
    }
    // Sweeps in the order of their names' values; panels' per-sweep lists follow.
    let mut order: Vec<usize> = (0..sweeps.len()).collect();
    order.sort_by(|&a, &b| natural_cmp(&sweeps[a].name, &sweeps[b].name));
    let sweeps: Vec<Sweep> = order.iter().map(|&i| sweeps[i].clone()).collect();
    for p in &mut panels {
        p.limits = order.iter().map(|&i| p.limits[i]).collect();
        p.limit_labels = order.iter().map(|&i| p.limit_labels[i].clone()).collect();
    }
    CapacityCurves {
        axis,
        series_by,
        sweeps,
        panels,
        panels_left_out: panels_left_out.len(),
        other_axis_sweeps,
        not_probes,
    }
}

/// The capacity the judged probes give, `rests_on` counted as the sweep counts its probes.
fn capacity_of(probes: &[Probe]) -> Option<Capacity> {
    let mut judged: Vec<&Probe> = probes
        .iter()
        .filter(|p| p.verdict != ProbeVerdict::Unjudged)
        .collect();
    judged.sort_by_key(|p| (p.number, p.record));
    let outcomes: Vec<ProbeOutcome> = judged
        .iter()
        .map(|p| ProbeOutcome {
            load: p.load,
            passed: p.verdict == ProbeVerdict::Passed,
        })
        .collect();
    let number = |i: usize| {
        judged
            .get(i)
            .and_then(|p| p.number)
            .map_or(i, |n| n as usize - 1)
    };
    Some(match Capacity::from_probes(&outcomes)? {
        Capacity::Found {
            load,
            failed_at,
            rests_on,
        } => Capacity::Found {
            load,
            failed_at,
            rests_on: number(rests_on),
        },
        Capacity::AtLeast { load, rests_on } => Capacity::AtLeast {
            load,
            rests_on: number(rests_on),
        },
        below => below,
    })
}

/// Where a dimension ranks when naming sweeps: the deployment's dimensions first (in
/// [`SERIES_PREFERENCE`] order, then the label, then tags), then the file, the date and the
/// tags that say how a sweep was run.
fn name_rank(k: &DimKey) -> (u8, usize) {
    match k {
        DimKey::Known(Dim::Source) => (2, 0),
        DimKey::Known(Dim::Date) => (2, 1),
        DimKey::Known(Dim::Label) => (1, 0),
        DimKey::Known(d) => (
            0,
            SERIES_PREFERENCE
                .iter()
                .position(|p| p == d)
                .unwrap_or(SERIES_PREFERENCE.len()),
        ),
        DimKey::Tag(t) => match RUN_TAGS.iter().position(|r| r == t) {
            Some(at) => (3, at),
            None => (1, 1),
        },
    }
}

/// The dimensions naming the sweeps and each sweep's name: the deployment dimensions that
/// differ between sweeps (at most [`MAX_NAME_DIMS`]), then, while two sweeps share a name,
/// the next differing dimension. One sweep is named by its file.
fn name_sweeps(
    key_dims: &[DimKey],
    gathered: &[Gathered],
    ds: &Dataset,
) -> (Vec<DimKey>, Vec<String>) {
    let value = |g: &Gathered, d: usize| {
        g.key
            .get(d)
            .cloned()
            .flatten()
            .map_or(NO_VALUE.to_string(), |v| v.to_string())
    };
    if gathered.len() <= 1 {
        let name = gathered
            .first()
            .and_then(|g| g.records.first())
            .and_then(|&(i, _)| ds.records().get(i))
            .and_then(|r| r.source.as_deref().map(str::to_string))
            .unwrap_or_else(|| "sweep".to_string());
        return (Vec::new(), gathered.iter().map(|_| name.clone()).collect());
    }
    let mut varying: Vec<usize> = (0..key_dims.len())
        .filter(|&d| {
            let first = value(&gathered[0], d);
            gathered.iter().any(|g| value(g, d) != first)
        })
        .collect();
    varying.sort_by_key(|&d| name_rank(&key_dims[d]));
    let mut chosen: Vec<usize> = varying
        .iter()
        .copied()
        .filter(|&d| name_rank(&key_dims[d]).0 <= 1)
        .take(MAX_NAME_DIMS)
        .collect();
    let names_of = |chosen: &[usize]| -> Vec<String> {
        gathered
            .iter()
            .map(|g| {
                chosen
                    .iter()
                    .map(|&d| value(g, d))
                    .collect::<Vec<_>>()
                    .join(" · ")
            })
            .collect()
    };
    let distinct = |names: &[String]| {
        let mut seen: Vec<&String> = names.iter().collect();
        seen.sort();
        seen.dedup();
        seen.len() == names.len()
    };
    for &d in &varying {
        if !chosen.is_empty() && distinct(&names_of(&chosen)) {
            break;
        }
        if !chosen.contains(&d) {
            chosen.push(d);
        }
    }
    let names = names_of(&chosen);
    (chosen.iter().map(|&d| key_dims[d].clone()).collect(), names)
}

/// What is said under the chart about one sweep.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepWords {
    /// The sweep's name.
    pub name: String,
    /// The capacity and its uncertainty.
    pub capacity: String,
    /// The rest: the repeats at the knee, the goodput there, the objectives, what is missing.
    pub notes: Vec<String>,
}

/// The capacity's sentence as the sweep would have written it, from the probes shown.
fn computed_words(c: &Capacity, unit: &str) -> String {
    match c {
        Capacity::AtLeast { load, rests_on } => format!(
            "capacity at least {load:.3} {unit}: every probe shown met the objectives (the \
             highest load is probe {}); no failing load bounds it",
            rests_on + 1
        ),
        other => other.describe(unit),
    }
}

/// "2 of 2 probes at 51.880 passed".
fn repeats_at(s: &Sweep, load: f64) -> String {
    let at: Vec<&Probe> = s
        .probes
        .iter()
        .filter(|p| p.load == load && p.verdict != ProbeVerdict::Unjudged)
        .collect();
    let passed = at
        .iter()
        .filter(|p| p.verdict == ProbeVerdict::Passed)
        .count();
    let probes = if at.len() == 1 { "probe" } else { "probes" };
    format!("{passed} of {} {probes} at {load:.3} passed", at.len())
}

/// The capacity of each sweep in words, with its uncertainty: the sweep's own sentence (or
/// the one its probes give, when it recorded none or the probes shown say otherwise), the
/// repeats on both sides of the knee, the goodput at the capacity with its spread, and the
/// objectives.
pub fn capacity_words(c: &CapacityCurves) -> Vec<SweepWords> {
    let unit = c.axis.unit();
    c.sweeps
        .iter()
        .map(|s| {
            let computed = s.capacity.as_ref().map(|cap| computed_words(cap, unit));
            let mut notes = Vec::new();
            let capacity = match (&s.recorded, &computed) {
                (Some(rec), Some(comp)) if rec == comp => rec.clone(),
                (Some(rec), Some(comp)) => {
                    notes.push(format!("The {} probes shown give: {comp}.", s.probes.len()));
                    rec.clone()
                }
                (Some(rec), None) => rec.clone(),
                (None, Some(comp)) => {
                    notes.push(
                        "The sweep recorded no capacity (it did not finish); this one is \
                         worked out from its probes' verdicts."
                            .to_string(),
                    );
                    comp.clone()
                }
                (None, None) => "no capacity: no probe shown was judged".to_string(),
            };
            if let Some(Capacity::Found {
                load, failed_at, ..
            }) = s.capacity
            {
                notes.push(format!(
                    "At the knee: {}; {}.",
                    repeats_at(s, load),
                    repeats_at(s, failed_at)
                ));
            }
            if let Some((load, _)) = s.knee() {
                let label = match s.goodput {
                    GoodputSource::Absent => "request throughput",
                    _ => "goodput",
                };
                if let Some(at) = s
                    .by_load(|p| s.first_panel_value(p))
                    .into_iter()
                    .find(|l| l.load == load)
                {
                    let spread = if at.probes > 1 {
                        format!(
                            " ({} – {} over {} probes)",
                            format_value(at.min),
                            format_value(at.max),
                            at.probes
                        )
                    } else {
                        String::new()
                    };
                    notes.push(format!(
                        "{} at the capacity: {} req/s{spread}.",
                        capitalize(label),
                        format_value(at.mean)
                    ));
                }
            }
            match (&s.objectives, &s.objectives_error) {
                (Some(slo), _) => notes.push(format!("Objectives: {slo}.")),
                (None, Some(e)) => notes.push(format!("Objectives unreadable: {e}.")),
                (None, None) => notes.push("No objectives recorded (tag.objectives).".into()),
            }
            match s.goodput {
                GoodputSource::Derived => notes.push(
                    "Goodput is request throughput × the share of good requests (the records \
                     carry no request_goodput)."
                        .into(),
                ),
                GoodputSource::Absent if s.objectives.is_some() => notes.push(
                    "Percentile objectives alone define no goodput: the first panel shows \
                     request throughput."
                        .into(),
                ),
                _ => {}
            }
            let unjudged = s
                .probes
                .iter()
                .filter(|p| p.verdict == ProbeVerdict::Unjudged)
                .count();
            if unjudged > 0 {
                notes.push(format!(
                    "{unjudged} probe(s) cut short (tag.partial): drawn, not judged."
                ));
            }
            SweepWords {
                name: s.name.clone(),
                capacity,
                notes,
            }
        })
        .collect()
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    c.next()
        .map(|f| f.to_uppercase().chain(c).collect())
        .unwrap_or_default()
}

/// What the view says about the selection as a whole: records that are not probes, sweeps on
/// another axis, objectives without a panel. Empty when there is nothing to say.
pub fn selection_notes(c: &CapacityCurves) -> Vec<String> {
    let mut notes = Vec::new();
    if c.not_probes > 0 {
        notes.push(format!(
            "{} selected record(s) are not probes of a `benchlens sweep` (no tag.verdict) and \
             are not drawn.",
            c.not_probes
        ));
    }
    if c.other_axis_sweeps > 0 {
        let other = match c.axis {
            LoadAxis::RequestRate => LoadAxis::Concurrency,
            LoadAxis::Concurrency => LoadAxis::RequestRate,
        };
        notes.push(format!(
            "{} sweep(s) over the {} are not drawn: the load axis is the {}. Filter them in \
             alone to see them.",
            c.other_axis_sweeps,
            other.dim().label().to_lowercase(),
            c.axis.dim().label().to_lowercase()
        ));
    }
    if c.panels_left_out > 0 {
        notes.push(format!(
            "{} objective(s) have no panel: at most {} are drawn.",
            c.panels_left_out,
            MAX_CURVE_PANELS - 1
        ));
    }
    notes
}

/// Sweep names in order, for the legend title and tests.
pub fn sweep_names(c: &CapacityCurves) -> Vec<&str> {
    c.sweeps.iter().map(|s| s.name.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::capacity_figure::capacity_plot;
    use crate::analysis::defaults::{default_view, View};
    use crate::charts::Theme;
    use serde_json::Value;

    /// The sweep made against the mock (tests/fixtures/loadgen/README.md).
    fn fixture() -> Dataset {
        let bytes = include_bytes!("../../tests/fixtures/loadgen/sweep-mock.json");
        Dataset::new(
            crate::ingest::read("sweep-mock.json", bytes)
                .unwrap()
                .records,
        )
    }

    const OBJECTIVES: &str = "p90_ttft:100, at least 99% of requests good";

    /// A probe of a rate sweep judged on p90 TTFT.
    fn probe(source: &str, engine: &str, n: u32, load: f64, passed: bool, p90: f64) -> Record {
        let mut r = Record {
            source: Some(source.into()),
            engine: Some(engine.into()),
            model: Some("m".into()),
            date: Some("20261123-100000".into()),
            request_rate: Some(load),
            ..Record::default()
        };
        r.tags.insert(
            VERDICT_TAG.into(),
            if passed { "passed" } else { "failed" }.into(),
        );
        r.tags.insert(OBJECTIVES_TAG.into(), OBJECTIVES.into());
        r.set_metric(MetricKey::Extra("probe".into()), f64::from(n));
        r.set_metric(MetricKey::Extra("probe_load".into()), load);
        r.set_metric(MetricKey::RequestThroughput, load.min(10.0));
        r.set_metric(MetricKey::Extra("slo_p90_ttft_ms".into()), p90);
        r
    }

    /// Loads 4, 8, 16 (fails), 11.31 (fails), 5.657, then the knee's repeats.
    fn sweep(source: &str, engine: &str, scale: f64) -> Vec<Record> {
        [
            (4.0, true, 20.0),
            (8.0, true, 40.0),
            (16.0, false, 900.0),
            (11.31, false, 300.0),
            (9.514, true, 80.0),
            (9.514, true, 90.0),
            (11.31, false, 320.0),
        ]
        .iter()
        .enumerate()
        .map(|(k, &(load, passed, p90))| {
            probe(source, engine, k as u32 + 1, load * scale, passed, p90)
        })
        .collect()
    }

    fn all(ds: &Dataset) -> Vec<usize> {
        (0..ds.len()).collect()
    }

    fn figure(c: &CapacityCurves) -> Value {
        serde_json::from_str(&capacity_plot(c, Theme::Light).to_json()).unwrap()
    }

    #[test]
    fn the_mock_sweep_is_one_curve_with_its_knee_and_its_own_words() {
        let ds = fixture();
        assert!(is_sweep_data(&ds));
        assert_eq!(default_view(&ds), View::Capacity);
        let c = capacity_curves(&ds, &all(&ds));
        assert_eq!(c.axis, LoadAxis::RequestRate);
        assert_eq!(c.sweeps.len(), 1, "{:?}", sweep_names(&c));
        assert!(c.series_by.is_empty());
        let s = &c.sweeps[0];
        assert_eq!(s.name, "sweep-mock.json");
        let loads: Vec<f64> = s.probes.iter().map(|p| p.load).collect();
        assert_eq!(
            loads,
            [20.0, 40.0, 47.57, 51.88, 51.88, 54.17, 54.17, 56.57, 80.0]
        );
        assert_eq!(
            s.capacity,
            Some(Capacity::Found {
                load: 51.88,
                failed_at: 54.17,
                rests_on: 7
            })
        );
        assert_eq!(s.knee(), Some((51.88, Some(54.17))));
        // One panel: p90 TTFT, judged over the steady window, under its 100 ms bound.
        assert_eq!(c.panels.len(), 1);
        assert_eq!(c.panels[0].key, "p90_ttft");
        assert_eq!(c.panels[0].title, "P90 TTFT (ms)");
        assert_eq!(c.panels[0].limits, [Some(100.0)]);
        let at_80 = s.probes.last().unwrap();
        assert_eq!(at_80.values, [Some(658.9350248)]);
        assert_eq!(at_80.verdict, ProbeVerdict::Failed);
        // Percentile objectives only: no goodput, the first panel is request throughput.
        assert_eq!(s.goodput, GoodputSource::Absent);
        let spread = s.by_load(|p| p.values[0]);
        let knee = spread.iter().find(|l| l.load == 51.88).unwrap();
        assert_eq!(knee.probes, 2);
        assert_eq!((knee.min, knee.max), (68.96682600000001, 72.27073));

        let words = capacity_words(&c);
        assert_eq!(words.len(), 1);
        assert_eq!(
            words[0].capacity,
            "capacity 51.880 req/s: every probe at 51.880 met the objectives and one at 54.170 \
             did not, so the knee lies in [51.880, 54.170) (+4.4 %); it rests on probe 8"
        );
        let notes = words[0].notes.join("\n");
        assert!(
            notes.contains(
                "At the knee: 2 of 2 probes at 51.880 passed; 0 of 2 probes at 54.170 passed."
            ),
            "{notes}"
        );
        assert!(
            notes.contains(
                "Request throughput at the capacity: 51.95 req/s (51.85 – 52.05 over 2 probes)."
            ),
            "{notes}"
        );
        assert!(
            notes.contains(&format!("Objectives: {OBJECTIVES}.")),
            "{notes}"
        );
        assert!(notes.contains("define no goodput"), "{notes}");
        assert!(selection_notes(&c).is_empty());
    }

    #[test]
    fn the_two_mock_fixtures_overlay_by_model() {
        let bytes = include_bytes!("../../tests/fixtures/loadgen/sweep-mock-small.json");
        let mut records = fixture().into_records();
        records.extend(
            crate::ingest::read("sweep-mock-small.json", bytes)
                .unwrap()
                .records,
        );
        let ds = Dataset::new(records);
        assert_eq!(default_view(&ds), View::Capacity);
        let c = capacity_curves(&ds, &all(&ds));
        assert_eq!(c.series_by, [DimKey::Known(Dim::Model)]);
        assert_eq!(sweep_names(&c), ["tiny-mock", "tiny-mock-small"]);
        let knees: Vec<_> = c.sweeps.iter().map(Sweep::knee).collect();
        assert_eq!(
            knees,
            [Some((51.88, Some(54.17))), Some((25.93, Some(27.08)))]
        );
        // Its first probe was judged over the whole stage (too few requests for a window):
        // still a probe of the same sweep.
        assert_eq!(c.sweeps[1].probes.len(), 9);
    }

    #[test]
    fn filters_that_hide_probes_are_said() {
        let ds = fixture();
        // Leave out probe 8 (the second pass at 51.88): the capacity stands, on probe 6.
        let shown: Vec<usize> = (0..ds.len()).filter(|&i| i != 7).collect();
        let c = capacity_curves(&ds, &shown);
        let words = capacity_words(&c);
        assert!(words[0].capacity.ends_with("it rests on probe 8"));
        assert!(
            words[0].notes[0].starts_with("The 8 probes shown give: capacity 51.880 req/s")
                && words[0].notes[0].ends_with("it rests on probe 6."),
            "{:?}",
            words[0].notes
        );
        assert!(words[0].notes[1].contains("1 of 1 probe at 51.880 passed"));
    }

    #[test]
    fn the_figure_has_a_panel_per_objective_the_limit_and_the_knee() {
        let ds = fixture();
        let c = capacity_curves(&ds, &all(&ds));
        let fig = figure(&c);
        let data = fig["data"].as_array().unwrap();
        let names: Vec<&str> = data.iter().filter_map(|t| t["name"].as_str()).collect();
        // Throughput panel: the mean line, the passed and failed probes, the capacity star.
        let line = &data[0];
        assert_eq!(line["yaxis"], "y");
        assert_eq!(line["x"].as_array().unwrap().len(), 7, "seven loads");
        assert_eq!(line["error_y"]["type"], "data");
        let star = data
            .iter()
            .find(|t| {
                t["name"]
                    .as_str()
                    .is_some_and(|n| n.contains("capacity 51.88"))
            })
            .unwrap_or_else(|| panic!("{names:?}"));
        assert_eq!(star["x"], serde_json::json!([51.88]));
        assert_eq!(star["marker"]["symbol"], "star");
        let failed = data
            .iter()
            .find(|t| {
                t["name"]
                    .as_str()
                    .is_some_and(|n| n.ends_with("failed probes"))
                    && t["yaxis"] == "y2"
            })
            .unwrap();
        assert_eq!(
            failed["x"].as_array().unwrap().len(),
            4,
            "80, 56.57 and twice 54.17"
        );
        assert_eq!(failed["marker"]["symbol"], "x");
        // The p90 TTFT panel with its 100 ms line across the loads.
        let limit = data
            .iter()
            .find(|t| t["name"] == "limit: P90 TTFT ≤ 100 ms")
            .unwrap_or_else(|| panic!("{names:?}"));
        assert_eq!(limit["yaxis"], "y2");
        assert_eq!(limit["y"], serde_json::json!([100.0, 100.0]));
        let x = limit["x"].as_array().unwrap();
        assert!(x[0].as_f64().unwrap() < 20.0 && x[1].as_f64().unwrap() > 80.0);
        // Two panels on one load axis: the second matches the first, only it is titled.
        let layout = &fig["layout"];
        assert_eq!(layout["xaxis2"]["matches"], "x");
        assert_eq!(layout["xaxis2"]["title"]["text"], "Request rate (req/s)");
        assert_eq!(layout["xaxis"]["showticklabels"], false);
        assert_eq!(layout["yaxis2"]["title"]["text"], "P90 TTFT (ms)");
        assert_eq!(
            layout["yaxis"]["title"]["text"],
            "Request throughput (req/s)"
        );
        assert!(layout["xaxis"]["type"].is_null(), "20 to 80 req/s: linear");
        // The knee shaded on both panels, from the capacity to the first failing load.
        let knees: Vec<&Value> = layout["shapes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["type"] == "rect")
            .collect();
        assert_eq!(knees.len(), 2);
        assert_eq!(
            (knees[0]["x0"].as_f64(), knees[0]["x1"].as_f64()),
            (Some(51.88), Some(54.17))
        );
        assert_eq!(knees[1]["yref"], "y2 domain");
        assert_eq!(layout["height"], 190 + 2 * 230);
    }

    #[test]
    fn sweeps_of_two_deployments_are_two_named_curves() {
        let mut records = sweep("a.json", "vllm", 1.0);
        records.extend(sweep("b.json", "sglang", 4.0));
        let ds = Dataset::new(records);
        let c = capacity_curves(&ds, &all(&ds));
        assert_eq!(c.series_by, [DimKey::Known(Dim::Engine)]);
        assert_eq!(sweep_names(&c), ["sglang", "vllm"]);
        let caps: Vec<Option<(f64, Option<f64>)>> = c.sweeps.iter().map(Sweep::knee).collect();
        assert_eq!(
            caps,
            [Some((38.056, Some(45.24))), Some((9.514, Some(11.31)))]
        );
        // One panel, one shared limit line; a knee per sweep and panel.
        assert_eq!(c.panels.len(), 1);
        assert_eq!(c.panels[0].limits, [Some(100.0), Some(100.0)]);
        let fig = figure(&c);
        let limits = fig["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("limit")))
            .count();
        assert_eq!(limits, 1);
        let rects = fig["layout"]["shapes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s["type"] == "rect")
            .count();
        assert_eq!(rects, 4);
        // 4 to 64 req/s: a log axis.
        assert_eq!(fig["layout"]["xaxis"]["type"], "log");
        let words = capacity_words(&c);
        assert_eq!(words[0].name, "sglang");
        assert!(
            words[0]
                .capacity
                .starts_with("capacity 38.056 req/s: every probe at 38.056"),
            "{words:?}"
        );
        assert!(words[0].notes[0].contains("recorded no capacity"));
    }

    #[test]
    fn sweeps_differing_only_in_file_or_limit_are_told_apart() {
        let mut records = sweep("monday.json", "vllm", 1.0);
        records.extend(sweep("tuesday.json", "vllm", 1.1));
        let ds = Dataset::new(records.clone());
        let c = capacity_curves(&ds, &all(&ds));
        assert_eq!(c.series_by, [DimKey::Known(Dim::Source)]);
        assert_eq!(sweep_names(&c), ["monday.json", "tuesday.json"]);
        // Other objectives: a sweep of its own, named by them, each with its own limit line.
        for r in records.iter_mut().skip(7) {
            r.source = Some("monday.json".into());
            r.tags.insert(
                OBJECTIVES_TAG.into(),
                "p90_ttft:200, at least 99% of requests good".into(),
            );
        }
        let ds = Dataset::new(records);
        let c = capacity_curves(&ds, &all(&ds));
        assert_eq!(c.series_by, [DimKey::Tag(OBJECTIVES_TAG.into())]);
        assert_eq!(c.panels[0].limits, [Some(100.0), Some(200.0)]);
        let fig = figure(&c);
        let limits: Vec<&Value> = fig["data"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("limit (")))
            .collect();
        assert_eq!(limits.len(), 2);
    }

    #[test]
    fn per_request_objectives_give_goodput_and_a_share_panel() {
        let mut records = sweep("a.json", "vllm", 1.0);
        for (k, r) in records.iter_mut().enumerate() {
            r.tags.insert(
                OBJECTIVES_TAG.into(),
                "ttft:500 p90_ttft:100, at least 95% of requests good".into(),
            );
            r.set_metric(MetricKey::Extra("good_pct".into()), 100.0 - k as f64);
            r.set_metric(
                MetricKey::Extra("slo_ttft_within_pct".into()),
                100.0 - k as f64,
            );
        }
        let ds = Dataset::new(records.clone());
        let c = capacity_curves(&ds, &all(&ds));
        let s = &c.sweeps[0];
        assert_eq!(s.goodput, GoodputSource::Derived);
        let at_8 = s.probes.iter().find(|p| p.load == 8.0).unwrap();
        assert_eq!(at_8.goodput, Some(8.0 * 0.99));
        assert_eq!(c.panels.len(), 2);
        let share = &c.panels[0];
        assert_eq!(share.key, "ttft:500");
        assert_eq!(share.title, "Requests with TTFT ≤ 500 ms (%)");
        assert_eq!(share.limits, [Some(95.0)]);
        assert_eq!(at_8.values, [Some(99.0), Some(40.0)]);
        let words = capacity_words(&c);
        assert!(words[0]
            .notes
            .iter()
            .any(|n| n.starts_with("Goodput at the capacity")));
        assert!(words[0]
            .notes
            .iter()
            .any(|n| n.contains("share of good requests")));
        // vLLM's own goodput, when recorded, is used as it is.
        for r in &mut records {
            r.set_metric(MetricKey::RequestGoodput, 1.5);
        }
        let ds = Dataset::new(records);
        let c = capacity_curves(&ds, &all(&ds));
        assert_eq!(c.sweeps[0].goodput, GoodputSource::Recorded);
        assert!(c.sweeps[0].probes.iter().all(|p| p.goodput == Some(1.5)));
        let fig = figure(&c);
        assert_eq!(fig["layout"]["yaxis"]["title"]["text"], "Goodput (req/s)");
        assert!(fig["layout"]["title"]["text"]
            .as_str()
            .unwrap()
            .contains("dotted: request throughput"));
        let dotted = fig["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["line"]["dash"] == "dot")
            .unwrap();
        assert_eq!(dotted["y"][1], 8.0, "request throughput at 8 req/s");
    }

    #[test]
    fn unfinished_sweeps_cut_short_probes_and_other_axes() {
        let mut records = sweep("a.json", "vllm", 1.0);
        records.truncate(4);
        // The fourth probe was interrupted: kept, not judged.
        records[3].tags.insert(PARTIAL_TAG.into(), "true".into());
        let mut conc = probe("c.json", "vllm", 1, 8.0, true, 10.0);
        conc.request_rate = Some(f64::INFINITY);
        conc.max_concurrency = Some(8);
        records.push(conc);
        let mut plain = Record::default();
        plain.set_metric(MetricKey::RequestThroughput, 1.0);
        records.push(plain);
        let ds = Dataset::new(records);
        assert!(!is_sweep_data(&ds));
        let c = capacity_curves(&ds, &all(&ds));
        assert_eq!(
            (c.sweeps.len(), c.other_axis_sweeps, c.not_probes),
            (1, 1, 1)
        );
        let s = &c.sweeps[0];
        assert_eq!(
            s.capacity,
            Some(Capacity::Found {
                load: 8.0,
                failed_at: 16.0,
                rests_on: 1
            })
        );
        let words = capacity_words(&c);
        assert!(
            words[0].capacity.ends_with("it rests on probe 2"),
            "{words:?}"
        );
        assert!(words[0].notes[0].contains("recorded no capacity"));
        assert!(words[0]
            .notes
            .iter()
            .any(|n| n.starts_with("1 probe(s) cut short")));
        let notes = selection_notes(&c).join(" ");
        assert!(
            notes.contains("1 selected record(s) are not probes"),
            "{notes}"
        );
        assert!(
            notes.contains("1 sweep(s) over the max concurrency"),
            "{notes}"
        );
        let fig = figure(&c);
        let open = fig["data"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["marker"]["symbol"] == "circle-open")
            .unwrap();
        assert_eq!(open["x"], serde_json::json!([11.31]));
    }

    #[test]
    fn a_concurrency_sweep_reads_its_concurrency() {
        let records: Vec<Record> = [
            (1, true),
            (2, true),
            (4, false),
            (3, true),
            (3, true),
            (4, false),
        ]
        .iter()
        .enumerate()
        .map(|(k, &(load, passed))| {
            let mut r = probe("c.json", "vllm", k as u32 + 1, load as f64, passed, 10.0);
            r.request_rate = Some(f64::INFINITY);
            r.max_concurrency = Some(load);
            r
        })
        .collect();
        let ds = Dataset::new(records);
        let c = capacity_curves(&ds, &all(&ds));
        assert_eq!(c.axis, LoadAxis::Concurrency);
        assert_eq!(c.sweeps.len(), 1);
        assert_eq!(
            capacity_words(&c)[0].capacity,
            "capacity 3.000 concurrent requests: every probe at 3.000 met the objectives and one \
             at 4.000 did not, so the knee lies in [3.000, 4.000) (+33.3 %); it rests on probe 5"
        );
    }

    #[test]
    fn hostile_tags_are_text_and_never_panic() {
        let mut records = sweep("<b>x</b>.json", "vllm", 1.0);
        for r in &mut records {
            r.tags
                .insert(OBJECTIVES_TAG.into(), "<script>alert(1)</script>".into());
            r.tags.insert(CAPACITY_TAG.into(), "<img src=x>".into());
        }
        records[0].set_metric(MetricKey::Extra("probe".into()), -3.0);
        records[1].set_metric(MetricKey::Extra("probe_load".into()), f64::NAN);
        let ds = Dataset::new(records);
        let c = capacity_curves(&ds, &all(&ds));
        let s = &c.sweeps[0];
        assert!(s.objectives.is_none());
        assert!(s
            .objectives_error
            .as_deref()
            .unwrap()
            .starts_with("tag.objectives: "));
        assert!(c.panels.is_empty());
        let words = capacity_words(&c);
        assert_eq!(words[0].capacity, "<img src=x>");
        assert!(words[0]
            .notes
            .iter()
            .any(|n| n.starts_with("Objectives unreadable")));
        let json = capacity_plot(&c, Theme::Dark).to_json();
        assert!(
            !json.contains("<b>x</b>"),
            "names are escaped in the figure"
        );
        assert!(json.contains("&lt;b&gt;x&lt;/b&gt;.json"));
        // Nothing selected: no sweep, nothing to say about it.
        let empty = capacity_curves(&ds, &[]);
        assert!(empty.sweeps.is_empty() && capacity_words(&empty).is_empty());
        assert!(!is_sweep_data(&Dataset::default()));
    }
}
