//! What the console summary and the vLLM file show besides a stage's metrics
//! ([`SummaryView`]): vLLM's `--percentile-metrics` ([`PercentileMetric`]), the client queue
//! times, and the most frequent failure reasons ([`error_reasons`]).

use super::stage_info::StageInfo;
use crate::loadgen::measure::{request_latencies, StageMetrics};
use crate::loadgen::record::{Failure, RequestRecord};
use crate::loadgen::stats::{summarize, Summary};

/// vLLM's percentile word: `str(int(p)) if int(p) == p else str(p)`.
pub(super) fn p_word(p: f64) -> String {
    if p.fract() == 0.0 && p.abs() < 1e15 {
        format!("{}", p as i64)
    } else {
        format!("{p}")
    }
}

/// A metric vLLM reports percentiles of (`--percentile-metrics`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PercentileMetric {
    /// Time to first token.
    Ttft,
    /// Time per output token.
    Tpot,
    /// Inter-token latency.
    Itl,
    /// End-to-end latency.
    E2el,
    /// From the intended send to the actual send (waiting for a concurrency slot).
    ClientQueueTime,
    /// End-to-end latency plus the client queue time.
    E2elIncludingClientQueue,
}

impl PercentileMetric {
    /// vLLM's names, in vLLM's printing order.
    pub const ALL: [(&'static str, PercentileMetric); 6] = [
        ("ttft", PercentileMetric::Ttft),
        ("tpot", PercentileMetric::Tpot),
        ("itl", PercentileMetric::Itl),
        ("e2el", PercentileMetric::E2el),
        ("client_queue_time", PercentileMetric::ClientQueueTime),
        (
            "e2el_including_client_queue",
            PercentileMetric::E2elIncludingClientQueue,
        ),
    ];

    /// vLLM's `--percentile-metrics` default for generative models.
    pub const DEFAULT: &'static str = "ttft,tpot,itl";

    /// Parses a comma list of vLLM's names (as [`str::parse`] reads each); the error names the
    /// unknown one.
    pub fn parse_list(text: &str) -> Result<Vec<PercentileMetric>, UnknownPercentileMetric> {
        text.split(',')
            .filter(|s| !s.trim().is_empty())
            .map(str::parse)
            .collect()
    }

    /// The name in result keys (`mean_{name}_ms`).
    pub fn name(self) -> &'static str {
        Self::ALL
            .iter()
            .find(|(_, m)| *m == self)
            .map_or("", |(n, _)| n)
    }

    /// vLLM's (short name, section header).
    pub(super) fn titles(self) -> (&'static str, &'static str) {
        match self {
            PercentileMetric::Ttft => ("TTFT", "Time to First Token"),
            PercentileMetric::Tpot => ("TPOT", "Time per Output Token (excl. 1st token)"),
            PercentileMetric::Itl => ("ITL", "Inter-token Latency"),
            PercentileMetric::E2el => ("E2EL", "End-to-end Latency"),
            PercentileMetric::ClientQueueTime => ("Client Queue Time", "Client-side Queueing"),
            PercentileMetric::E2elIncludingClientQueue => (
                "E2EL incl. Client Queue",
                "Queue-inclusive End-to-end Latency",
            ),
        }
    }
}

/// One of vLLM's names (surrounding spaces ignored), as `--percentile-metrics` takes them.
impl std::str::FromStr for PercentileMetric {
    type Err = UnknownPercentileMetric;

    fn from_str(text: &str) -> Result<PercentileMetric, UnknownPercentileMetric> {
        let name = text.trim();
        PercentileMetric::ALL
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, m)| *m)
            .ok_or_else(|| UnknownPercentileMetric { name: name.into() })
    }
}

/// A name in `--percentile-metrics` that is not one of vLLM's ([`PercentileMetric::ALL`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{name:?} is not one of ttft, tpot, itl, e2el, client_queue_time, e2el_including_client_queue"
)]
pub struct UnknownPercentileMetric {
    /// The name given.
    pub name: String,
}

/// What the console summary and the vLLM file show besides the stage's metrics.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SummaryView {
    /// Metrics whose percentiles are printed, in vLLM's order (vLLM's `--percentile-metrics`).
    pub metrics: Vec<PercentileMetric>,
    /// Percentiles (vLLM's `--metric-percentiles`).
    pub percentiles: Vec<f64>,
    /// Client queue times of successful requests, milliseconds: from the moment the request
    /// was due to the moment it was sent (vLLM's `client_queue_time`).
    pub queue_times_ms: Vec<f64>,
    /// E2EL plus the queue time of successful requests, milliseconds.
    pub e2el_including_queue_ms: Vec<f64>,
    /// The most frequent failure reasons, most frequent first.
    pub error_reasons: Vec<ErrorReason>,
    /// Requests cancelled by the user's interrupt (neither successes nor failures).
    pub cancelled: u64,
}

/// One failure reason and how many requests failed with it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ErrorReason {
    /// The failure kind (`http_400`).
    pub kind: String,
    /// The message without the request URL, cut to [`REASON_BYTES`] bytes (for HTTP errors:
    /// the status and the start of the body).
    pub message: String,
    /// Requests that failed this way.
    pub count: u64,
}

/// Bytes of a failure message kept in [`ErrorReason::message`].
pub const REASON_BYTES: usize = 200;

/// Cuts `s` to at most `max` bytes on a character boundary.
fn cut(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut i = max;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    &s[..i]
}

/// The `n` most frequent failure reasons (kind and message without its URL, first
/// [`REASON_BYTES`] bytes), most frequent first; ties in order of first appearance.
pub fn error_reasons(requests: &[RequestRecord], n: usize) -> Vec<ErrorReason> {
    let mut out: Vec<ErrorReason> = Vec::new();
    for f in requests.iter().filter_map(|r| r.failure.as_ref()) {
        add_reason(&mut out, f);
    }
    most_frequent(out, n)
}

/// Counts a failure under its reason.
fn add_reason(out: &mut Vec<ErrorReason>, f: &Failure) {
    let kind = f.kind.name();
    // Client messages start with the URL, the same for every request: leave it out.
    let msg = match f.message.split_once(": ") {
        Some((url, rest)) if url.starts_with("http://") || url.starts_with("https://") => rest,
        _ => f.message.as_str(),
    };
    // One line per reason: a body's line breaks become spaces.
    let msg: String = cut(msg, REASON_BYTES)
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    match out.iter_mut().find(|e| e.kind == kind && e.message == msg) {
        Some(e) => e.count += 1,
        None => out.push(ErrorReason {
            kind,
            message: msg,
            count: 1,
        }),
    }
}

/// The `n` most frequent of reasons counted in order of first appearance.
fn most_frequent(mut out: Vec<ErrorReason>, n: usize) -> Vec<ErrorReason> {
    // A stable sort keeps first appearance among equal counts.
    out.sort_by_key(|e| std::cmp::Reverse(e.count));
    out.truncate(n);
    out
}

/// [`SummaryView::new`] one request at a time, as a stage's requests end (in the stage's
/// order: the view is then that of [`SummaryView::new`]).
#[derive(Default)]
pub struct ViewTally {
    queue: Vec<f64>,
    incl: Vec<f64>,
    reasons: Vec<ErrorReason>,
}

impl ViewTally {
    /// No requests yet, with room for `requests`.
    pub fn with_capacity(requests: usize) -> ViewTally {
        ViewTally {
            queue: Vec::with_capacity(requests),
            incl: Vec::with_capacity(requests),
            reasons: Vec::new(),
        }
    }

    /// Counts the next request; `e2el_ms` is its E2EL when it has latencies
    /// ([`request_latencies`]).
    pub fn add(&mut self, r: &RequestRecord, e2el_ms: Option<f64>) {
        if let Some(e2el_ms) = e2el_ms {
            let q = queue_time_s(r) * 1e3;
            self.queue.push(q);
            self.incl.push(e2el_ms + q);
        }
        if let Some(f) = &r.failure {
            add_reason(&mut self.reasons, f);
        }
    }

    /// The view (see [`SummaryView::new`]).
    pub fn finish(
        self,
        metrics: Vec<PercentileMetric>,
        percentiles: Vec<f64>,
        cancelled: u64,
    ) -> SummaryView {
        SummaryView {
            metrics,
            percentiles,
            queue_times_ms: self.queue,
            e2el_including_queue_ms: self.incl,
            error_reasons: most_frequent(self.reasons, 3),
            cancelled,
        }
    }
}

impl SummaryView {
    /// The view of a stage: queue times from `requests` (successful ones, as vLLM) and the
    /// three most frequent failure reasons.
    pub fn new(
        metrics: Vec<PercentileMetric>,
        percentiles: Vec<f64>,
        requests: &[RequestRecord],
        cancelled: u64,
    ) -> SummaryView {
        let mut tally = ViewTally::default();
        for r in requests {
            tally.add(r, request_latencies(r).map(|l| l.e2el_ms));
        }
        tally.finish(metrics, percentiles, cancelled)
    }

    /// The metrics vLLM prints for this stage: the queue metrics only with a concurrency cap,
    /// the queue-inclusive E2EL only with a finite rate too (as vLLM).
    pub(super) fn printed(&self, info: &StageInfo) -> Vec<PercentileMetric> {
        PercentileMetric::ALL
            .iter()
            .map(|(_, m)| *m)
            .filter(|m| self.metrics.contains(m))
            .filter(|m| match m {
                PercentileMetric::ClientQueueTime => info.max_concurrency.is_some(),
                PercentileMetric::E2elIncludingClientQueue => {
                    info.max_concurrency.is_some() && info.request_rate.is_finite()
                }
                _ => true,
            })
            .collect()
    }

    /// A metric's summary: from the stage's metrics, or from this view's samples (vLLM prints
    /// zeros when there are none).
    pub(super) fn summary_of(&self, m: &StageMetrics, metric: PercentileMetric) -> Summary {
        let from = |s: &Option<Summary>| s.clone();
        let s = match metric {
            PercentileMetric::Ttft => from(&m.ttft),
            PercentileMetric::Tpot => from(&m.tpot),
            PercentileMetric::Itl => from(&m.itl),
            PercentileMetric::E2el => from(&m.e2el),
            PercentileMetric::ClientQueueTime => summarize(&self.queue_times_ms, &self.percentiles),
            PercentileMetric::E2elIncludingClientQueue => {
                summarize(&self.e2el_including_queue_ms, &self.percentiles)
            }
        };
        s.unwrap_or_else(|| Summary {
            percentiles: self.percentiles.iter().map(|p| (*p, 0.0)).collect(),
            ..Summary::default()
        })
    }
}

/// A request's client queue time, seconds: from when it was due to when it was sent (vLLM's
/// `client_queue_time`; never negative).
pub(super) fn queue_time_s(r: &RequestRecord) -> f64 {
    (r.sent_at_s - r.intended_at_s).max(0.0)
}

/// The percentiles of `s` that the view asks for, in the view's order (measure computes the
/// run's `--percentiles`; the view may ask for the same list).
pub(super) fn view_percentiles(s: &Summary, percentiles: &[f64]) -> Vec<(f64, f64)> {
    percentiles
        .iter()
        .filter_map(|p| {
            s.percentiles
                .iter()
                .find(|(q, _)| q == p)
                .map(|(_, v)| (*p, *v))
        })
        .collect()
}
