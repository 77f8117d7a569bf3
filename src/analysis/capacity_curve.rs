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
use crate::model::points::configuration_dims;
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
/// The verdict of a probe too short to judge a percentile objective (`sweep` probes the load
/// again longer): not a measurement of its load either.
pub const TOO_SHORT_VERDICT: &str = "too short";
/// The tag naming the rule of a probe's steady window: the whole stage when the window would
/// hold too few requests (a sweep's slowest probe), so it may differ from probe to probe.
const STEADY_WINDOW_TAG: &str = "steady_window";

/// Tags that belong to one probe, not to its sweep.
const PROBE_TAGS: [&str; 3] = [VERDICT_TAG, PARTIAL_TAG, STEADY_WINDOW_TAG];

/// Tags that say how or where a sweep was run rather than what was measured: they name a
/// sweep only when nothing else tells two apart.
const RUN_TAGS: [&str; 7] = [
    CAPACITY_TAG,
    "command_line",
    "server_url",
    "seed",
    "benchlens_version",
    "benchlens_commit",
    "stage",
];

/// Most panels: the goodput panel and up to seven objectives (the figure lays out eight axes).
pub const MAX_CURVE_PANELS: usize = 8;

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

    /// The other axis.
    fn other(self) -> LoadAxis {
        match self {
            LoadAxis::RequestRate => LoadAxis::Concurrency,
            LoadAxis::Concurrency => LoadAxis::RequestRate,
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
    r.tags.get(VERDICT_TAG).is_some_and(|v| is_verdict(v))
}

/// Whether a verdict tag's value is one a sweep writes.
fn is_verdict(v: &str) -> bool {
    matches!(v, "passed" | "failed" | TOO_SHORT_VERDICT)
}

/// Whether the data is a sweep: every record is a probe (the explorer then opens on the
/// capacity view).
pub fn is_sweep_data(ds: &Dataset) -> bool {
    let probe = probe_rows(ds);
    !ds.is_empty() && (0..ds.len()).all(probe)
}

/// [`is_probe`] of each row, read from the verdict tag's dictionary codes.
fn probe_rows(ds: &Dataset) -> impl Fn(usize) -> bool + '_ {
    let key = DimKey::Tag(VERDICT_TAG.to_string());
    let col = ds.column(&key);
    let pass: Vec<bool> = std::iter::once(false)
        .chain(
            col.iter()
                .flat_map(|c| c.dict.iter())
                .map(|v| v.as_str().is_some_and(is_verdict)),
        )
        .collect();
    move |row| {
        col.and_then(|c| c.codes.try_get(row))
            .and_then(|code| pass.get(code as usize).copied())
            .unwrap_or(false)
    }
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
pub(super) struct Gathered {
    pub(super) key: Vec<Option<DimValue>>,
    axis: LoadAxis,
    pub(super) records: Vec<(usize, f64)>,
}

/// The probes among `indices` grouped into sweeps, with the dimensions of their identity (the
/// last one the load dimension not varied), and the count of records that are not probes.
fn gather(ds: &Dataset, indices: &[usize]) -> (Vec<DimKey>, Vec<Gathered>, usize) {
    let identity: Vec<DimKey> = configuration_dims(ds)
        .into_iter()
        .filter(|k| {
            !matches!(k, DimKey::Tag(t) if PROBE_TAGS.contains(&t.as_str()))
                && !matches!(k, DimKey::Known(Dim::RequestRate | Dim::MaxConcurrency))
        })
        .collect();
    let mut gathered: Vec<Gathered> = Vec::new();
    let mut not_probes = 0;
    let probe = probe_rows(ds);
    for &i in indices {
        if i >= ds.len() {
            continue;
        }
        // Not a probe: counted without rebuilding the record of a row kept as columns.
        let r = if probe(i) { ds.record(i) } else { None };
        let Some((r, (axis, load))) = r.and_then(|r| load_of(&r).map(|l| (r, l))) else {
            not_probes += 1;
            continue;
        };
        // The load dimension that is not varied (a rate sweep's concurrency cap) is part of
        // the sweep's identity.
        let mut key: Vec<Option<DimValue>> = identity.iter().map(|k| r.dim(k)).collect();
        key.push(r.known(axis.other().dim()));
        match gathered.iter_mut().find(|g| g.key == key && g.axis == axis) {
            Some(g) => g.records.push((i, load)),
            None => gathered.push(Gathered {
                key,
                axis,
                records: vec![(i, load)],
            }),
        }
    }
    (identity, gathered, not_probes)
}

/// A sweep's probes by load (repeats in probe order); goodput derived from the share of good
/// requests only when the objectives have a per-request bound (`per_request`).
fn probes_of(ds: &Dataset, g: &Gathered, per_request: bool) -> Vec<Probe> {
    let mut probes: Vec<Probe> = g
        .records
        .iter()
        .filter_map(|&(i, load)| {
            let r = ds.record(i)?;
            let verdict = if r.tags.contains_key(PARTIAL_TAG)
                || r.tags.get(VERDICT_TAG).map(String::as_str) == Some(TOO_SHORT_VERDICT)
            {
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
    crate::model::order::sort_by(&mut probes, |a, b| {
        a.load
            .total_cmp(&b.load)
            .then(a.number.cmp(&b.number))
            .then(a.record.cmp(&b.record))
    });
    probes
}

/// The capacity curves of the probes at `indices` (a filter's selection): probes grouped into
/// sweeps (see the module docs), sweeps named by what differs between them, one panel per
/// objective. Sweeps over the load axis of the first sweep are drawn; the others are counted.
pub fn capacity_curves(ds: &Dataset, indices: &[usize]) -> CapacityCurves {
    let (identity, mut gathered, not_probes) = gather(ds, indices);
    let axis = gathered.first().map_or(LoadAxis::RequestRate, |g| g.axis);
    let other_axis_sweeps = gathered.iter().filter(|g| g.axis != axis).count();
    gathered.retain(|g| g.axis == axis);
    let mut key_dims = identity;
    key_dims.push(DimKey::Known(axis.other().dim()));
    let (series_by, names) = name_sweeps(&key_dims, &gathered, ds);

    let mut sweeps: Vec<Sweep> = Vec::new();
    let mut panels: Vec<ObjectivePanel> = Vec::new();
    let mut panel_objectives: Vec<Vec<Option<Objective>>> = Vec::new();
    let mut panels_left_out: Vec<String> = Vec::new();
    for (g, name) in gathered.iter().zip(names) {
        let first = g.records.first().and_then(|&(i, _)| ds.record(i));
        let first = first.as_deref();
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
        let probes = probes_of(ds, g, per_request);
        let goodput = if probes.iter().any(|p| {
            ds.record(p.record)
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
            let r = ds.record(p.record);
            p.values = panel_objectives
                .iter()
                .map(|by_sweep| {
                    let o = by_sweep.get(si).copied().flatten()?;
                    judged_value(r.as_deref()?, &o)
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
    crate::model::order::sort_by(&mut order, |&a, &b| {
        natural_cmp(&sweeps[a].name, &sweeps[b].name)
    });
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
    crate::model::order::sort_by_key(&mut judged, |p| (p.number, p.record));
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
            at_load,
            at_failed,
        } => Capacity::Found {
            load,
            failed_at,
            rests_on: number(rests_on),
            at_load,
            at_failed,
        },
        Capacity::AtLeast {
            load,
            rests_on,
            at_load,
        } => Capacity::AtLeast {
            load,
            rests_on: number(rests_on),
            at_load,
        },
        below => below,
    })
}

/// Sweep names in order, for the legend title and tests.
pub fn sweep_names(c: &CapacityCurves) -> Vec<&str> {
    c.sweeps.iter().map(|s| s.name.as_str()).collect()
}

mod names;
mod words;

use names::name_sweeps;
pub use words::{capacity_words, selection_notes, SweepWords};

#[cfg(test)]
mod tests;
