//! A stage as it unfolded: each request's span on the stage's clock (intended send → sent →
//! first token → end) and the stage's time series grouped into panels for the run view.
//!
//! Up to [`MAX_BARS`] requests are kept one by one; past that they are binned into a bounded
//! grid (mean requests in each phase per time bin), so the figure's size does not grow with
//! the request count. Pure.

use crate::analysis::stats::percentile_sorted;
use crate::model::{Dataset, MetricKey, Record, RequestDetail};
use std::collections::BTreeMap;

/// Most requests drawn one bar each; more are binned (there are not more pixels than this).
pub const MAX_BARS: usize = 2000;
/// Time bins of a binned timeline.
pub const MAX_BINS: usize = 400;

/// How a request ended.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Outcome {
    /// It completed.
    Ok,
    /// It failed, with its failure kind (`http_503`), or `error` when the source gave none.
    Failed(String),
}

impl Outcome {
    /// The outcome's name: `ok` or the failure kind.
    pub fn name(&self) -> &str {
        match self {
            Outcome::Ok => "ok",
            Outcome::Failed(k) => k,
        }
    }
}

/// One request on the stage's clock, in seconds from the stage's start.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    /// Index of the request in its record.
    pub index: usize,
    /// Scheduled send time, when known.
    pub intended_s: Option<f64>,
    /// When it was sent.
    pub sent_s: f64,
    /// When its first token arrived.
    pub first_token_s: Option<f64>,
    /// When it ended.
    pub end_s: Option<f64>,
    /// How it ended.
    pub outcome: Outcome,
}

impl Span {
    /// The last moment known of the request (end, else first token, else send).
    pub fn last_s(&self) -> f64 {
        self.end_s.or(self.first_token_s).unwrap_or(self.sent_s)
    }
}

fn outcome_of(r: &RequestDetail) -> Outcome {
    match (&r.error_kind, &r.error) {
        (Some(k), _) => Outcome::Failed(k.clone()),
        (None, Some(_)) => Outcome::Failed("error".into()),
        (None, None) => Outcome::Ok,
    }
}

/// The requests that have a send time, sorted by it (ties by index).
pub fn spans(requests: &[RequestDetail]) -> Vec<Span> {
    let finite = |v: Option<f64>| v.filter(|v| v.is_finite());
    let mut out: Vec<Span> = requests
        .iter()
        .enumerate()
        .filter_map(|(index, r)| {
            let sent_s = finite(r.sent_s)?;
            Some(Span {
                index,
                intended_s: finite(r.intended_s),
                sent_s,
                first_token_s: finite(r.first_token_s()),
                end_s: finite(r.end_s()),
                outcome: outcome_of(r),
            })
        })
        .collect();
    crate::model::order::sort_by(&mut out, |a, b| {
        a.sent_s.total_cmp(&b.sent_s).then(a.index.cmp(&b.index))
    });
    out
}

/// Requests binned in time: in each bin, the mean number of requests in each phase and the
/// failures that ended in it. All vectors have the same length.
#[derive(Clone, Debug, PartialEq)]
pub struct PhaseGrid {
    /// Start of the first bin, seconds.
    pub start_s: f64,
    /// Width of every bin, seconds.
    pub bin_s: f64,
    /// Mean requests waiting to be sent (intended → sent).
    pub waiting: Vec<f64>,
    /// Mean requests waiting for their first token (sent → first token).
    pub prefill: Vec<f64>,
    /// Mean requests decoding (first token → end).
    pub decoding: Vec<f64>,
    /// Requests that failed in the bin, per second.
    pub failed_per_s: Vec<f64>,
    /// Requests binned.
    pub requests: usize,
}

impl PhaseGrid {
    /// The centre of each bin, seconds.
    pub fn centers_s(&self) -> Vec<f64> {
        (0..self.waiting.len())
            .map(|i| self.start_s + (i as f64 + 0.5) * self.bin_s)
            .collect()
    }
}

/// Adds `[a, b)`'s overlap with each bin, in bins, to `acc` through a difference array
/// (`full`) for the bins it covers whole, so each interval costs O(1) besides its two ends.
fn spread(acc: &mut [f64], full: &mut [f64], start_s: f64, bin_s: f64, a: f64, b: f64) {
    let n = acc.len();
    if n == 0 || b.partial_cmp(&a) != Some(std::cmp::Ordering::Greater) {
        return;
    }
    let pos = |t: f64| ((t - start_s) / bin_s).clamp(0.0, n as f64);
    let (x, y) = (pos(a), pos(b));
    let (i, j) = (x.floor() as usize, y.floor() as usize);
    if i == j || i >= n {
        if i < n {
            acc[i] += y - x;
        }
        return;
    }
    acc[i] += (i + 1) as f64 - x;
    if j < n {
        acc[j] += y - j as f64;
    }
    // Bins i+1 .. j-1 are covered whole.
    if i + 1 < j {
        full[i + 1] += 1.0;
        if j < n {
            full[j] -= 1.0;
        }
    }
}

/// Bins `spans` into at most `bins` time bins covering their whole extent.
pub fn phase_grid(spans: &[Span], bins: usize) -> PhaseGrid {
    let start_s = spans
        .iter()
        .map(|s| s.intended_s.unwrap_or(s.sent_s).min(s.sent_s))
        .fold(f64::INFINITY, f64::min);
    let end_s = spans
        .iter()
        .map(Span::last_s)
        .fold(f64::NEG_INFINITY, f64::max);
    let bins = bins.max(1);
    if !start_s.is_finite() || !end_s.is_finite() {
        return PhaseGrid {
            start_s: 0.0,
            bin_s: 1.0,
            waiting: Vec::new(),
            prefill: Vec::new(),
            decoding: Vec::new(),
            failed_per_s: Vec::new(),
            requests: 0,
        };
    }
    let bin_s = ((end_s - start_s) / bins as f64).max(1e-6);
    let mut phases = [vec![0.0; bins], vec![0.0; bins], vec![0.0; bins]];
    let mut full = [vec![0.0; bins], vec![0.0; bins], vec![0.0; bins]];
    let mut failed_per_s = vec![0.0; bins];
    for s in spans {
        let mut put = |k: usize, a: Option<f64>, b: Option<f64>| {
            if let (Some(a), Some(b)) = (a, b) {
                spread(&mut phases[k], &mut full[k], start_s, bin_s, a, b);
            }
        };
        put(0, s.intended_s, Some(s.sent_s));
        put(1, Some(s.sent_s), s.first_token_s.or(s.end_s));
        put(2, s.first_token_s, s.end_s);
        if s.outcome != Outcome::Ok {
            let i = (((s.last_s() - start_s) / bin_s).floor().max(0.0) as usize).min(bins - 1);
            failed_per_s[i] += 1.0 / bin_s;
        }
    }
    for (phase, full) in phases.iter_mut().zip(&full) {
        let mut running = 0.0;
        for (v, d) in phase.iter_mut().zip(full) {
            running += d;
            *v += running;
        }
    }
    let [waiting, prefill, decoding] = phases;
    PhaseGrid {
        start_s,
        bin_s,
        waiting,
        prefill,
        decoding,
        failed_per_s,
        requests: spans.len(),
    }
}

/// Most bins of a series derived from requests (an hour of seconds); longer runs get wider bins.
const MAX_DERIVED_BINS: usize = 3600;

/// A series derived from request spans, for sources that carry timing but no series (vLLM's
/// `--save-detailed`): per bin of 1 s (wider past [`MAX_DERIVED_BINS`]) from 0, `sent`,
/// `in_flight` (mean, each request counted from its send to its last known moment) and
/// `ttft_p50_ms`/`ttft_p90_ms`/`ttft_p99_ms` of the first tokens that arrived in the bin. Empty
/// when no span has a send time at or after 0.
pub fn series_from_spans(spans: &[Span]) -> BTreeMap<String, Vec<f64>> {
    let end_s = spans
        .iter()
        .map(Span::last_s)
        .fold(f64::NEG_INFINITY, f64::max);
    if !end_s.is_finite() || end_s < 0.0 {
        return BTreeMap::new();
    }
    let whole = end_s.floor() as usize + 1;
    let bin_s = (whole as f64 / MAX_DERIVED_BINS as f64).ceil().max(1.0);
    let bins = ((end_s / bin_s).floor() as usize + 1).min(MAX_DERIVED_BINS);
    let at = |t: f64| ((t / bin_s).floor().max(0.0) as usize).min(bins - 1);
    let mut sent = vec![0.0; bins];
    let mut in_flight = vec![0.0; bins];
    let mut full = vec![0.0; bins];
    let mut ttft: Vec<Vec<f64>> = vec![Vec::new(); bins];
    for s in spans {
        sent[at(s.sent_s)] += 1.0;
        spread(&mut in_flight, &mut full, 0.0, bin_s, s.sent_s, s.last_s());
        if let (Some(f), Outcome::Ok) = (s.first_token_s, &s.outcome) {
            ttft[at(f)].push((f - s.sent_s) * 1e3);
        }
    }
    let mut running = 0.0;
    for (v, d) in in_flight.iter_mut().zip(&full) {
        running += d;
        *v += running;
    }
    let mut out = BTreeMap::new();
    out.insert("t_s".into(), (0..bins).map(|i| i as f64 * bin_s).collect());
    out.insert("sent".into(), sent);
    out.insert("in_flight".into(), in_flight);
    for v in &mut ttft {
        crate::model::order::sort_floats(v);
    }
    for p in [50.0, 90.0, 99.0] {
        out.insert(
            format!("ttft_p{p}_ms"),
            ttft.iter()
                .map(|v| percentile_sorted(v, p).unwrap_or(f64::NAN))
                .collect(),
        );
    }
    out
}

/// The timeline of a stage's requests: bars one by one, or binned past [`MAX_BARS`].
#[derive(Clone, Debug, PartialEq)]
pub enum Timeline {
    /// Every request, sorted by send time.
    Bars(Vec<Span>),
    /// Too many requests for bars: binned.
    Binned(PhaseGrid),
}

/// The timeline of `requests` (those with a send time).
pub fn timeline(requests: &[RequestDetail]) -> Timeline {
    let spans = spans(requests);
    if spans.len() > MAX_BARS {
        Timeline::Binned(phase_grid(&spans, MAX_BINS))
    } else {
        Timeline::Bars(spans)
    }
}

/// Whether a record can be shown in the run view: requests with a send time, or a series.
pub fn has_run_detail(r: &Record) -> bool {
    r.series.contains_key("t_s") || r.requests.iter().any(|q| q.sent_s.is_some())
}

/// A stage's name in the stage menu: its file, load and request count.
pub fn stage_label(r: &Record) -> String {
    let mut parts = vec![r.source.as_deref().unwrap_or("(no file)").to_string()];
    if let Some(rate) = r.request_rate {
        parts.push(format!("{} req/s", crate::model::format_number(rate)));
    }
    if let Some(c) = r.max_concurrency {
        parts.push(format!("concurrency {c}"));
    }
    if !r.requests.is_empty() {
        parts.push(format!("{} requests", r.requests.len()));
    }
    parts.join(" · ")
}

/// The run view's stages: every record among `matching` with per-request timing or a series
/// ([`has_run_detail`]), labelled, and the one shown.
#[derive(Clone, Debug, PartialEq)]
pub struct RunStages {
    /// (record index, [`stage_label`]) of every stage that can be shown, in `matching`'s order.
    pub stages: Vec<(usize, String)>,
    /// The record shown: the chosen one while it is still among the stages, else the first.
    pub shown: usize,
}

impl RunStages {
    /// The label of the stage shown.
    pub fn shown_label(&self) -> &str {
        self.stages
            .iter()
            .find(|(i, _)| *i == self.shown)
            .map_or("", |(_, l)| l.as_str())
    }
}

/// Why the run view has nothing to show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "No filtered record has per-request timing or a time series \
     (benchlens run's files have both; vLLM's with --save-detailed have timing)."
)]
pub struct NoRunDetail;

/// The stages among the records at `matching` (indices into `records`, the filter's result)
/// and the one shown: `chosen` (from the address or the stage menu) when it is one of them,
/// else the first. A chosen stage that the filter hides falls back to the first, it is never
/// shown outside the filter.
pub fn run_stages(
    ds: &Dataset,
    matching: &[usize],
    chosen: Option<usize>,
) -> Result<RunStages, NoRunDetail> {
    // Rows kept as columns carry no run detail.
    let mut stages: Vec<(usize, String)> = Vec::new();
    let mut stage_tags: Vec<Option<String>> = Vec::new();
    for (i, r) in matching
        .iter()
        .filter_map(|&i| ds.kept_record(i).map(|r| (i, r)))
        .filter(|(_, r)| has_run_detail(r))
    {
        stages.push((i, stage_label(r)));
        stage_tags.push(r.tags.get("stage").cloned());
    }
    tell_apart(&mut stages, &stage_tags);
    let shown = chosen
        .filter(|c| stages.iter().any(|(i, _)| i == c))
        .or_else(|| stages.first().map(|(i, _)| *i))
        .ok_or(NoRunDetail)?;
    Ok(RunStages { stages, shown })
}

/// Labels that two stages share (a sweep probing one rate twice) get the stage number the file
/// gives them (`· stage 3`), else their place among the alike (`· 2 of 2`).
fn tell_apart(stages: &mut [(usize, String)], stage_tags: &[Option<String>]) {
    let mut alike: std::collections::HashMap<String, Vec<usize>> = Default::default();
    for (k, (_, label)) in stages.iter().enumerate() {
        alike.entry(label.clone()).or_default().push(k);
    }
    for group in alike.into_values().filter(|g| g.len() > 1) {
        let tags: Vec<Option<&String>> = group.iter().map(|&k| stage_tags[k].as_ref()).collect();
        let mut distinct: Vec<&String> = tags.iter().flatten().copied().collect();
        crate::model::order::sort(&mut distinct);
        distinct.dedup();
        let by_tag = distinct.len() == group.len();
        for (place, &k) in group.iter().enumerate() {
            let label = &mut stages[k].1;
            match tags[place] {
                Some(tag) if by_tag => label.push_str(&format!(" · stage {tag}")),
                _ => label.push_str(&format!(" · {} of {}", place + 1, group.len())),
            }
        }
    }
}

/// The sentence under the run view's figure: how the timeline is drawn and the steady-state
/// window shaded, if any.
pub fn timeline_summary(tl: &Timeline, window_s: Option<(f64, f64)>) -> String {
    let drawn = match tl {
        Timeline::Bars(s) if s.is_empty() => "No request has a send time; series only.".into(),
        Timeline::Bars(s) => format!("{} requests, one bar each, by send time.", s.len()),
        Timeline::Binned(g) => format!(
            "{} requests, binned: mean requests in each phase per {:.3} s.",
            g.requests, g.bin_s
        ),
    };
    match window_s {
        Some((a, b)) => format!("{drawn} Steady-state window {a:.2}–{b:.2} s shaded."),
        None => drawn,
    }
}

/// The steady-state window of a record (`window_start_s`, `window_end_s`), when it has one.
pub fn steady_window_s(r: &Record) -> Option<(f64, f64)> {
    let get = |n: &str| {
        r.metrics
            .get(&MetricKey::Extra(n.into()))
            .copied()
            .filter(|v| v.is_finite())
    };
    let (a, b) = (get("window_start_s")?, get("window_end_s")?);
    (b > a).then_some((a, b))
}

/// One line of a series panel.
#[derive(Clone, Debug, PartialEq)]
pub struct Line {
    /// Legend name.
    pub name: String,
    /// One value per time of the panel's series (NaN for none).
    pub values: Vec<f64>,
}

/// A panel of time series sharing a y axis.
#[derive(Clone, Debug, PartialEq)]
pub struct Panel {
    /// The y axis title (quantity and unit).
    pub title: String,
    /// The lines drawn.
    pub lines: Vec<Line>,
}

/// A record's time series grouped into panels.
#[derive(Clone, Debug, PartialEq)]
pub struct SeriesPanels {
    /// Where each value is drawn, seconds from the stage's start: the middle of its bin (the
    /// series' `t_s` is each bin's start), so a bin lines up with the requests it counts.
    pub x_s: Vec<f64>,
    /// The panels, in display order.
    pub panels: Vec<Panel>,
}

/// Width of each series bin, seconds (the step of `t_s`; 1 s when it cannot be told).
fn bin_width_s(t: &[f64]) -> f64 {
    t.windows(2)
        .map(|w| w[1] - w[0])
        .find(|d| d.is_finite() && *d > 0.0)
        .unwrap_or(1.0)
}

/// A last bin shorter than this share of a bin is too short to turn into a rate.
const MIN_PARTIAL_BIN: f64 = 0.2;

/// The series of `r` as panels: output tokens/s, requests sent/s, requests in flight, TTFT
/// and ITL quantiles, then every other column (the `server.*` telemetry among them) alone.
/// A record with no series but request timing gets [`series_from_spans`].
pub fn series_panels(r: &Record) -> Option<SeriesPanels> {
    if !r.series.contains_key("t_s") {
        let derived = series_from_spans(&spans(&r.requests));
        if derived.is_empty() {
            return None;
        }
        let end_s = spans(&r.requests)
            .iter()
            .map(Span::last_s)
            .fold(f64::NEG_INFINITY, f64::max);
        let mut stand_in = Record {
            series: derived,
            ..Record::default()
        };
        if let Some(d) = r.metric(&MetricKey::DurationS).or(Some(end_s)) {
            stand_in.set_metric(MetricKey::DurationS, d);
        }
        return series_panels(&stand_in);
    }
    let t_s = r.series.get("t_s")?.clone();
    let width_s = bin_width_s(&t_s);
    // The last bin ends with the stage: a probe's last partial second holds a fraction of a
    // second's counts, so its rate divides by the time it covers, and one too short to rate
    // (under a fifth of a bin) is not drawn rather than drawn as a collapse.
    let last_width = t_s
        .last()
        .and_then(|&t| r.metric(&MetricKey::DurationS).map(|end| end - t))
        .filter(|w| w.is_finite() && *w > 0.0 && *w < width_s);
    let per_s = |v: &[f64]| -> Vec<f64> {
        let n = v.len();
        v.iter()
            .enumerate()
            .map(|(i, x)| match last_width {
                Some(w) if i + 1 == n && w >= MIN_PARTIAL_BIN * width_s => x / w,
                Some(_) if i + 1 == n => f64::NAN,
                _ => x / width_s,
            })
            .collect()
    };
    let mut used = vec!["t_s".to_string()];
    let mut panels = Vec::new();
    let rate = |col: &str, title: &str, used: &mut Vec<String>, panels: &mut Vec<Panel>| {
        if let Some(v) = r.series.get(col) {
            used.push(col.into());
            panels.push(Panel {
                title: title.into(),
                lines: vec![Line {
                    name: title.into(),
                    values: per_s(v),
                }],
            });
        }
    };
    rate("output_tokens", "output tok/s", &mut used, &mut panels);
    rate("sent", "requests sent/s", &mut used, &mut panels);
    if let Some(v) = r.series.get("in_flight") {
        used.push("in_flight".into());
        panels.push(Panel {
            title: "requests in flight".into(),
            lines: vec![Line {
                name: "in flight".into(),
                values: v.clone(),
            }],
        });
    }
    for (prefix, title) in [("ttft_", "TTFT (ms)"), ("itl_", "ITL (ms)")] {
        let quantity = &title[..title.len() - 5];
        let lines: Vec<Line> = r
            .series
            .iter()
            .filter(|(k, _)| k.starts_with(prefix) && k.ends_with("_ms"))
            .map(|(k, v)| Line {
                name: format!("{quantity} {}", &k[prefix.len()..k.len() - 3]),
                values: v.clone(),
            })
            .collect();
        if !lines.is_empty() {
            used.extend(
                r.series
                    .keys()
                    .filter(|k| k.starts_with(prefix) && k.ends_with("_ms"))
                    .cloned(),
            );
            panels.push(Panel {
                title: title.into(),
                lines,
            });
        }
    }
    for (k, v) in &r.series {
        if !used.contains(k) {
            panels.push(Panel {
                title: k.clone(),
                lines: vec![Line {
                    name: k.clone(),
                    values: v.clone(),
                }],
            });
        }
    }
    let x_s = t_s.iter().map(|t| t + width_s / 2.0).collect();
    Some(SeriesPanels { x_s, panels })
}

#[cfg(test)]
mod tests;
