//! What a run leaves behind: vLLM's console summary block per stage, one canonical result file
//! (every stage a [`Record`], written with [`canonical::to_json`]), per-request JSON Lines beside
//! it, and with `--vllm-compatible` one file per stage with exactly vLLM's serving keys. Files are
//! written atomically (temporary file, then rename); `-` means stdout. Must not import app code.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};

use super::measure::{request_latencies, StageMetrics};
use super::record::RequestRecord;
use super::stats::{summarize, Summary};
use super::LoadgenError;
use crate::model::canonical::{self, number_to_json};
use crate::model::{LatencyMetric, MetricKey, Percentile, Record, RequestDetail, Stat};

/// The dimensions of one stage, as they go into its record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageInfo {
    /// Stage number, from 0.
    pub stage: usize,
    /// Model id.
    pub model: String,
    /// Backend name (`openai`).
    pub backend: String,
    /// `--engine`.
    pub engine: Option<String>,
    /// `--gpu`.
    pub gpu: Option<String>,
    /// `--gpu-count`.
    pub gpu_count: Option<u64>,
    /// `--label`.
    pub label: Option<String>,
    /// Dataset name.
    pub dataset: String,
    /// Configured rate (req/s, infinite when unbounded).
    pub request_rate: f64,
    /// Burstiness.
    pub burstiness: f64,
    /// Concurrency cap.
    pub max_concurrency: Option<u64>,
    /// Requests sent in the stage.
    pub num_prompts: u64,
    /// `%Y%m%d-%H%M%S` (UTC) at the stage's start.
    pub date: String,
    /// `--tag` pairs plus run metadata (tool version, command line, server URL...).
    pub tags: BTreeMap<String, String>,
    /// Endpoint path.
    pub endpoint: String,
    /// Whether the run was interrupted during or before this stage.
    pub partial: bool,
}

/// `%Y%m%d-%H%M%S` in UTC for seconds since the Unix epoch.
pub fn format_date(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    // Howard Hinnant's civil-from-days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// The current UTC date as vLLM writes it.
pub fn now_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format_date(secs)
}

/// Python's `{:.2f}` of a float: `nan`, `inf` and `-inf` spelled as Python spells them.
fn py_f2(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{v:.2}")
    }
}

/// vLLM's `"{:<40} {:<10}".format(label, value)`.
fn line(out: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "{label:<40} {:<10}", value.to_string());
}

/// vLLM's `"{:<40} {:<10.2f}".format(label, value)`.
fn line_f(out: &mut String, label: &str, value: f64) {
    line(out, label, py_f2(value));
}

fn section(out: &mut String, title: &str, fill: char) {
    // Python's str.format centring: the odd padding character goes to the right.
    let pad = 50usize.saturating_sub(title.chars().count());
    let left: String = std::iter::repeat_n(fill, pad / 2).collect();
    let right: String = std::iter::repeat_n(fill, pad - pad / 2).collect();
    let _ = writeln!(out, "{left}{title}{right}");
}

fn pct_label(p: f64) -> String {
    Percentile::new(p).map_or_else(|| p.to_string(), |p| p.to_string())
}

/// vLLM's percentile word: `str(int(p)) if int(p) == p else str(p)`.
fn p_word(p: f64) -> String {
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

    /// Parses a comma list of vLLM's names; the error names the unknown one.
    pub fn parse_list(text: &str) -> Result<Vec<PercentileMetric>, String> {
        text.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|name| {
                Self::ALL
                    .iter()
                    .find(|(n, _)| *n == name)
                    .map(|(_, m)| *m)
                    .ok_or_else(|| {
                        let names: Vec<&str> = Self::ALL.iter().map(|(n, _)| *n).collect();
                        format!("{name:?} is not one of {}", names.join(", "))
                    })
            })
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
    fn titles(self) -> (&'static str, &'static str) {
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
    // A stable sort keeps first appearance among equal counts.
    out.sort_by_key(|e| std::cmp::Reverse(e.count));
    out.truncate(n);
    out
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
        let mut queue = Vec::new();
        let mut incl = Vec::new();
        for r in requests {
            if let Some(l) = request_latencies(r) {
                let q = (r.sent_at_s - r.intended_at_s).max(0.0) * 1e3;
                queue.push(q);
                incl.push(l.e2el_ms + q);
            }
        }
        SummaryView {
            metrics,
            percentiles,
            queue_times_ms: queue,
            e2el_including_queue_ms: incl,
            error_reasons: error_reasons(requests, 3),
            cancelled,
        }
    }

    /// The metrics vLLM prints for this stage: the queue metrics only with a concurrency cap,
    /// the queue-inclusive E2EL only with a finite rate too (as vLLM).
    fn printed(&self, info: &StageInfo) -> Vec<PercentileMetric> {
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
    fn summary_of(&self, m: &StageMetrics, metric: PercentileMetric) -> Summary {
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

/// The percentiles of `s` that the view asks for, in the view's order (measure computes the
/// run's `--percentiles`; the view may ask for the same list).
fn view_percentiles(s: &Summary, percentiles: &[f64]) -> Vec<(f64, f64)> {
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

/// vLLM's console summary block for a stage (vLLM's `vllm bench serve`, checked against
/// vllm/benchmarks/serve.py of vLLM main at commit 009e6d4: labels, `{:<40} {:<10}` widths, order,
/// the median printed and then every percentile asked for, 50 included), followed by
/// benchlens's own block (client-side figures, error counts and the most frequent reasons).
pub fn summary_text(info: &StageInfo, m: &StageMetrics, view: &SummaryView) -> String {
    let mut out = String::new();
    section(&mut out, " Serving Benchmark Result ", '=');
    line(&mut out, "Successful requests:", m.completed);
    line(&mut out, "Failed requests:", m.failed);
    if let Some(c) = info.max_concurrency {
        line(&mut out, "Maximum request concurrency:", c);
    }
    if info.request_rate.is_finite() {
        line_f(
            &mut out,
            "Request rate configured (RPS):",
            info.request_rate,
        );
    }
    line_f(&mut out, "Benchmark duration (s):", m.duration_s);
    line(&mut out, "Total input tokens:", m.total_input);
    line(&mut out, "Total generated tokens:", m.total_output);
    line_f(
        &mut out,
        "Request throughput (req/s):",
        m.request_throughput,
    );
    if let Some(g) = m.request_goodput {
        line_f(&mut out, "Request goodput (req/s):", g);
    }
    line_f(
        &mut out,
        "Output token throughput (tok/s):",
        m.output_throughput,
    );
    line_f(
        &mut out,
        "Peak output token throughput (tok/s):",
        m.max_output_tokens_per_s,
    );
    line_f(
        &mut out,
        "Peak concurrent requests:",
        m.max_concurrent_requests as f64,
    );
    line_f(
        &mut out,
        "Total token throughput (tok/s):",
        m.total_token_throughput,
    );
    for metric in view.printed(info) {
        let (short, header) = metric.titles();
        let s = view.summary_of(m, metric);
        section(&mut out, header, '-');
        line_f(&mut out, &format!("Mean {short} (ms):"), s.mean);
        line_f(&mut out, &format!("Median {short} (ms):"), s.median);
        for (p, v) in view_percentiles(&s, &view.percentiles) {
            line_f(&mut out, &format!("P{} {short} (ms):", p_word(p)), v);
        }
    }
    let _ = writeln!(out, "{}", "=".repeat(50));
    client_section(&mut out, info, m, view);
    out
}

/// benchlens's block after vLLM's: what the client did and what went wrong.
fn client_section(out: &mut String, info: &StageInfo, m: &StageMetrics, view: &SummaryView) {
    section(out, " benchlens (client) ", '-');
    if let Some(a) = m.achieved_rate {
        line_f(out, "Achieved send rate (req/s):", a);
    }
    if let Some(l) = &m.schedule_lag {
        line_f(out, "Mean scheduling lag (ms):", l.mean);
        if let Some((p, v)) = l.percentiles.last() {
            line_f(out, &format!("P{} scheduling lag (ms):", p_word(*p)), *v);
        }
    }
    if info.request_rate.is_finite() {
        // Only a finite rate gives each request an intended send time.
        if let Some(s) = &m.ttft_from_intended {
            line_f(out, "Mean TTFT from intended send (ms):", s.mean);
        }
        if let Some(s) = &m.e2el_from_intended {
            line_f(out, "Mean E2EL from intended send (ms):", s.mean);
        }
    } else if info.max_concurrency.is_some() {
        // With `inf` every request is due at once: what remains is the wait for a slot.
        if let Some(s) = summarize(&view.queue_times_ms, &view.percentiles) {
            line_f(out, "Mean wait for a concurrency slot (ms):", s.mean);
        }
    }
    if let Some(s) = &m.write_delay {
        line_f(out, "Mean send-to-write delay (ms):", s.mean);
    }
    if let Some(s) = &m.read_delay {
        line_f(out, "Mean socket-to-read wait (ms):", s.mean);
        if let Some((p, v)) = s.percentiles.last() {
            line_f(
                out,
                &format!("P{} socket-to-read wait (ms):", p_word(*p)),
                *v,
            );
        }
    }
    if let Some(s) = m.total_output_server {
        line(out, "Generated tokens (server usage):", s);
    }
    if let Some(t) = m.total_output_text {
        line(out, "Generated tokens (client tokenizer):", t);
    }
    line(out, "Token chunks (client count):", m.total_output_local);
    line(
        out,
        "Requests with count mismatch:",
        m.output_count_mismatches,
    );
    for (kind, n) in &m.failures {
        line(out, &format!("Errors {kind}:"), n);
    }
    if !view.error_reasons.is_empty() {
        let _ = writeln!(out, "Most frequent errors:");
        for e in &view.error_reasons {
            let _ = writeln!(out, "  {} x {}: {}", e.count, e.kind, e.message);
        }
    }
    if view.cancelled > 0 {
        line(out, "Cancelled by interrupt:", view.cancelled);
    }
    if info.partial {
        line(out, "Partial (interrupted):", "yes");
    }
    for w in super::measure::warnings(m) {
        let _ = writeln!(out, "{w}");
    }
    let _ = writeln!(out, "{}", "=".repeat(50));
}

fn put_summary(r: &mut Record, metric: LatencyMetric, s: &Option<Summary>) {
    let Some(s) = s else { return };
    r.metrics
        .insert(MetricKey::latency(metric, Stat::Mean), s.mean);
    r.metrics
        .insert(MetricKey::latency(metric, Stat::Median), s.median);
    r.metrics
        .insert(MetricKey::latency(metric, Stat::Std), s.std);
    for (p, v) in &s.percentiles {
        if let Some(p) = Percentile::new(*p) {
            r.metrics.insert(MetricKey::latency(metric, Stat::P(p)), *v);
        }
    }
}

fn put_extra_summary(r: &mut Record, name: &str, s: &Option<Summary>) {
    let Some(s) = s else { return };
    let mut put = |stat: String, v: f64| {
        r.metrics
            .insert(MetricKey::Extra(format!("{stat}_{name}_ms")), v);
    };
    put("mean".into(), s.mean);
    put("median".into(), s.median);
    put("std".into(), s.std);
    for (p, v) in &s.percentiles {
        put(format!("p{}", pct_label(*p)), *v);
    }
}

/// Per-request detail for the canonical record.
pub fn request_detail(r: &RequestRecord) -> RequestDetail {
    let lat = request_latencies(r);
    RequestDetail {
        input_len: Some(r.input_tokens()),
        output_len: Some(if r.failure.is_some() {
            0
        } else {
            r.output_tokens()
        }),
        ttft_ms: lat.as_ref().map(|l| l.ttft_ms),
        itl_ms: lat.as_ref().map(|l| l.itl_ms.clone()).unwrap_or_default(),
        e2el_ms: lat.as_ref().map(|l| l.e2el_ms),
        error: r
            .failure
            .as_ref()
            .map(|f| format!("{}: {}", f.kind.name(), f.message)),
    }
}

/// The canonical record of a stage.
pub fn stage_record(
    info: &StageInfo,
    m: &StageMetrics,
    requests: &[RequestRecord],
    view: &SummaryView,
) -> Record {
    let mut r = Record {
        source: None,
        format: Some("benchlens".into()),
        model: Some(info.model.as_str().into()),
        engine: info.engine.as_deref().map(Into::into),
        gpu: info.gpu.as_deref().map(Into::into),
        gpu_count: info.gpu_count,
        dataset: Some(info.dataset.as_str().into()),
        input_len: m.mean_input_len,
        output_len: m.mean_output_len,
        max_concurrency: info.max_concurrency,
        request_rate: Some(info.request_rate),
        burstiness: Some(info.burstiness),
        num_prompts: Some(info.num_prompts),
        date: Some(info.date.as_str().into()),
        label: info.label.as_deref().map(Into::into),
        tags: info.tags.clone(),
        ..Record::default()
    };
    if info.partial {
        r.tags.insert("partial".into(), "true".into());
    }
    r.tags.insert("stage".into(), info.stage.to_string());
    let mt = &mut r.metrics;
    mt.insert(MetricKey::Completed, m.completed as f64);
    mt.insert(MetricKey::Failed, m.failed as f64);
    mt.insert(MetricKey::DurationS, m.duration_s);
    mt.insert(MetricKey::RequestThroughput, m.request_throughput);
    if let Some(g) = m.request_goodput {
        mt.insert(MetricKey::RequestGoodput, g);
    }
    if m.duration_s > 0.0 {
        mt.insert(
            MetricKey::InputThroughput,
            m.total_input as f64 / m.duration_s,
        );
    }
    mt.insert(MetricKey::OutputThroughput, m.output_throughput);
    mt.insert(MetricKey::TotalTokenThroughput, m.total_token_throughput);
    let mut extra = |k: &str, v: f64| {
        mt.insert(MetricKey::Extra(k.into()), v);
    };
    extra("total_input_tokens", m.total_input as f64);
    extra("total_output_tokens", m.total_output as f64);
    if let Some(s) = m.total_output_server {
        extra("total_output_tokens_server", s as f64);
    }
    extra("total_output_chunks_client", m.total_output_local as f64);
    if let Some(t) = m.total_output_text {
        extra("total_output_tokens_client", t as f64);
    }
    extra("output_count_mismatches", m.output_count_mismatches as f64);
    extra("over_length_requests", m.over_length as f64);
    extra("short_reply_requests", m.short_reply as f64);
    extra(
        "finish_reason_missing_requests",
        m.finish_reason_missing as f64,
    );
    extra("timed_chunks", m.timed_chunks as f64);
    extra("coalesced_chunks", m.coalesced_chunks as f64);
    extra("max_output_tokens_per_s", m.max_output_tokens_per_s);
    extra("max_concurrent_requests", m.max_concurrent_requests as f64);
    if let Some(a) = m.achieved_rate {
        extra("achieved_request_rate", a);
    }
    for (kind, n) in &m.failures {
        extra(&format!("errors_{kind}"), *n as f64);
    }
    put_summary(&mut r, LatencyMetric::Ttft, &m.ttft);
    put_summary(&mut r, LatencyMetric::Tpot, &m.tpot);
    put_summary(&mut r, LatencyMetric::Itl, &m.itl);
    put_summary(&mut r, LatencyMetric::E2el, &m.e2el);
    if info.request_rate.is_finite() {
        // Only a finite rate gives each request an intended send time.
        put_extra_summary(&mut r, "ttft_from_intended", &m.ttft_from_intended);
        put_extra_summary(&mut r, "e2el_from_intended", &m.e2el_from_intended);
    } else if info.max_concurrency.is_some() {
        let wait = summarize(&view.queue_times_ms, &view.percentiles);
        put_extra_summary(&mut r, "concurrency_slot_wait", &wait);
    }
    if view.cancelled > 0 {
        r.metrics.insert(
            MetricKey::Extra("cancelled_requests".into()),
            view.cancelled as f64,
        );
    }
    put_extra_summary(&mut r, "schedule_lag", &m.schedule_lag);
    put_extra_summary(&mut r, "write_delay", &m.write_delay);
    put_extra_summary(&mut r, "read_delay", &m.read_delay);
    r.requests = requests.iter().map(request_detail).collect();
    r
}

fn py_float(v: f64) -> String {
    if v.is_infinite() {
        "inf".into()
    } else if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{v:.1}")
    } else {
        format!("{v}")
    }
}

/// vLLM's serving result object for a stage (formats.md §2), with the keys `vllm bench serve`
/// writes (vllm/benchmarks/serve.py, vLLM main at commit 009e6d4): the run's settings, `--metadata` (our
/// tags) as top-level keys, the totals, `latencies` and `queue_times` (seconds, every request,
/// 0 for failed ones as vLLM), `rtfx` (0: no audio), mean/median/std and percentiles of the
/// metrics in `view.metrics`, and only with `detailed` (vLLM's `--save-detailed`) the other
/// per-request arrays: `input_lens`, `output_lens`, `start_times`, `ttfts`, `itls`,
/// `generated_texts`, `errors`.
pub fn vllm_json(
    info: &StageInfo,
    m: &StageMetrics,
    requests: &[RequestRecord],
    view: &SummaryView,
    detailed: bool,
) -> Value {
    let mut o = Map::new();
    o.insert("date".into(), json!(info.date));
    o.insert("endpoint_type".into(), json!(info.backend));
    o.insert("backend".into(), json!(info.backend));
    o.insert("label".into(), json!(info.label));
    o.insert("model_id".into(), json!(info.model));
    let tokenizer = info.tags.get("tokenizer").unwrap_or(&info.model);
    o.insert("tokenizer_id".into(), json!(tokenizer));
    o.insert("num_prompts".into(), json!(info.num_prompts));
    for (k, v) in &info.tags {
        o.entry(k.clone()).or_insert_with(|| json!(v));
    }
    let rate = if info.request_rate.is_finite() {
        json!(info.request_rate)
    } else {
        json!("inf")
    };
    o.insert("request_rate".into(), rate);
    o.insert("burstiness".into(), json!(info.burstiness));
    o.insert("max_concurrency".into(), json!(info.max_concurrency));
    o.insert("duration".into(), json!(m.duration_s));
    o.insert("completed".into(), json!(m.completed));
    o.insert("failed".into(), json!(m.failed));
    o.insert("total_input_tokens".into(), json!(m.total_input));
    o.insert("total_output_tokens".into(), json!(m.total_output));
    o.insert("request_throughput".into(), json!(m.request_throughput));
    o.insert("request_goodput".into(), json!(m.request_goodput));
    o.insert("output_throughput".into(), json!(m.output_throughput));
    o.insert(
        "total_token_throughput".into(),
        json!(m.total_token_throughput),
    );
    let lats: Vec<_> = requests.iter().map(request_latencies).collect();
    if detailed {
        o.insert(
            "input_lens".into(),
            requests.iter().map(|r| json!(r.input_tokens())).collect(),
        );
        o.insert(
            "output_lens".into(),
            requests
                .iter()
                .map(|r| {
                    json!(if r.failure.is_some() {
                        0
                    } else {
                        r.output_tokens()
                    })
                })
                .collect(),
        );
        o.insert(
            "ttfts".into(),
            lats.iter()
                .map(|l| json!(l.as_ref().map_or(0.0, |l| l.ttft_ms / 1e3)))
                .collect(),
        );
        o.insert(
            "itls".into(),
            lats.iter()
                .map(|l| {
                    l.as_ref().map_or(json!([]), |l| {
                        l.itl_ms.iter().map(|v| json!(v / 1e3)).collect()
                    })
                })
                .collect(),
        );
    }
    o.insert(
        "latencies".into(),
        lats.iter()
            .map(|l| json!(l.as_ref().map_or(0.0, |l| l.e2el_ms / 1e3)))
            .collect(),
    );
    if detailed {
        // vLLM's start times are perf_counter readings; ours are seconds after the stage start.
        o.insert(
            "start_times".into(),
            requests.iter().map(|r| json!(r.sent_at_s)).collect(),
        );
    }
    o.insert(
        "queue_times".into(),
        requests
            .iter()
            .map(|r| json!((r.sent_at_s - r.intended_at_s).max(0.0)))
            .collect(),
    );
    if detailed {
        o.insert(
            "generated_texts".into(),
            requests.iter().map(|r| json!(r.generated_text)).collect(),
        );
        o.insert(
            "errors".into(),
            requests
                .iter()
                .map(|r| {
                    json!(r.failure.as_ref().map_or(String::new(), |f| format!(
                        "{}: {}",
                        f.kind.name(),
                        f.message
                    )))
                })
                .collect(),
        );
    }
    o.insert(
        "max_output_tokens_per_s".into(),
        json!(m.max_output_tokens_per_s),
    );
    o.insert(
        "max_concurrent_requests".into(),
        json!(m.max_concurrent_requests),
    );
    o.insert("rtfx".into(), json!(0.0));
    for metric in view.printed(info) {
        let name = metric.name();
        // vLLM writes zeros when there is no sample.
        let s = view.summary_of(m, metric);
        o.insert(format!("mean_{name}_ms"), number_to_json(s.mean));
        o.insert(format!("median_{name}_ms"), number_to_json(s.median));
        o.insert(format!("std_{name}_ms"), number_to_json(s.std));
        for (p, v) in view_percentiles(&s, &view.percentiles) {
            o.insert(format!("p{}_{name}_ms", p_word(p)), number_to_json(v));
        }
    }
    Value::Object(o)
}

/// vLLM's file name for a stage: `{label or backend}-{rate}qps[-concurrency{N}]-{model}-{date}.json`.
pub fn vllm_file_name(info: &StageInfo) -> String {
    let head = info.label.clone().unwrap_or_else(|| info.backend.clone());
    let conc = info
        .max_concurrency
        .map_or(String::new(), |c| format!("-concurrency{c}"));
    let model = info.model.rsplit('/').next().unwrap_or(&info.model);
    format!(
        "{head}-{}qps{conc}-{model}-{}.json",
        py_float(info.request_rate),
        info.date
    )
}

/// One JSON Lines row per request (`<result>.requests.jsonl`). Fields:
///
/// | field | meaning |
/// |---|---|
/// | `stage`, `index` | stage number and request index within it |
/// | `input_len`, `input_tokens_server` | prompt tokens by the client's tokenizer / the server's usage |
/// | `max_tokens` | output tokens asked for |
/// | `output_tokens_server`, `output_tokens_client`, `output_chunks_client` | output tokens by usage, by the client's tokenizer, and token-bearing chunks |
/// | `intended_send_s`, `dispatched_s`, `sent_s` | seconds after the stage start: scheduled, dispatcher woke, sent |
/// | `schedule_lag_ms` | the client's own lateness (see [`super::schedule::Dispatch::lag`]) |
/// | `ttft_ms`, `e2el_ms` | from the request's write syscall to the kernel's receive stamp; `null` when failed |
/// | `write_delay_ms` | `sent_s` to the write syscall of the request (checkout/connect, client scheduling; not in TTFT) |
/// | `read_delay_ms` | how long the first response bytes waited in the socket for the client (outside TTFT) |
/// | `chunks_ms_tokens` | `[ms after the request's write, tokens]` per token-bearing chunk |
/// | `coalesced_chunks` | of those, chunks that came in the same read as the one before (gap not observed) |
/// | `finish_reason_missing` | the stream ended with `[DONE]` but no `finish_reason` (maybe cut off by the server) |
/// | `length_flag` | `over_length` (more tokens than asked), `short_reply` (fewer despite `--ignore-eos`) or `null` |
/// | `error_kind`, `error` | failure kind (`http_503`, `idle_timeout`...) and message, or `null` |
pub fn request_line(stage: usize, r: &RequestRecord) -> String {
    let chunks: Vec<Value> = r
        .chunks
        .iter()
        .map(|c| json!([c.at_s * 1e3, c.tokens]))
        .collect();
    json!({
        "stage": stage,
        "index": r.index,
        "input_len": r.input_len,
        "input_tokens_server": r.input_tokens_server,
        "max_tokens": r.max_tokens,
        "output_tokens_server": r.output_tokens_server,
        "output_chunks_client": r.output_chunks_local,
        "output_tokens_client": r.output_tokens_text,
        "intended_send_s": r.intended_at_s,
        "dispatched_s": r.dispatched_at_s,
        "schedule_lag_ms": r.schedule_lag_s * 1e3,
        "sent_s": r.sent_at_s,
        "ttft_ms": r.ttft_s.map(|t| t * 1e3),
        "e2el_ms": r.e2el_s.map(|t| t * 1e3),
        "write_delay_ms": r.write_delay_s.map(|t| t * 1e3),
        "read_delay_ms": r.first_read_delay_s.map(|t| t * 1e3),
        "chunks_ms_tokens": chunks,
        "coalesced_chunks": r.coalesced_chunks,
        "length_flag": r.length_flag().map(|f| f.name()),
        "finish_reason_missing": r.finish_reason_missing,
        "error_kind": r.failure.as_ref().map(|f| f.kind.name()),
        "error": r.failure.as_ref().map(|f| f.message.clone()),
    })
    .to_string()
}

/// Writes `text` to `path` atomically (a temporary file in the same folder, then a rename), or
/// to stdout when `path` is `-`.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), LoadgenError> {
    if path == Path::new("-") {
        let mut out = std::io::stdout().lock();
        return out
            .write_all(text.as_bytes())
            .and_then(|()| out.flush())
            .map_err(|source| LoadgenError::Write {
                path: path.into(),
                source,
            });
    }
    let err = |source| LoadgenError::Write {
        path: path.into(),
        source,
    };
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let tmp: PathBuf = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let result = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result.map_err(err)
}

/// The canonical JSON of all stages so far.
pub fn canonical_text(records: &[Record]) -> String {
    canonical::to_json(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_format_like_vllm() {
        assert_eq!(format_date(0), "19700101-000000");
        // 2024-02-29 12:34:56 UTC
        assert_eq!(format_date(1_709_210_096), "20240229-123456");
    }

    fn summary(mean: f64, median: f64, ps: &[(f64, f64)]) -> Option<Summary> {
        Some(Summary {
            count: 100,
            mean,
            median,
            std: 1.0,
            percentiles: ps.to_vec(),
        })
    }

    /// The figures of tests/fixtures/loadgen/vllm-summary-golden.py.
    fn golden_figures() -> StageMetrics {
        StageMetrics {
            completed: 98,
            failed: 2,
            duration_s: 25.123456,
            total_input: 12544,
            total_output: 3136,
            request_throughput: 3.9007,
            request_goodput: Some(3.5),
            output_throughput: 124.8236,
            max_output_tokens_per_s: 310.0,
            max_concurrent_requests: 8,
            total_token_throughput: 624.1155,
            ttft: summary(45.678, 44.1, &[(50.0, 44.1), (99.0, 80.25), (99.9, 91.004)]),
            tpot: summary(5.0049, 5.0, &[(50.0, 5.0), (99.0, 5.5), (99.9, 5.61)]),
            itl: summary(4.999, 4.98, &[(50.0, 4.98), (99.0, 7.125), (99.9, 12.5)]),
            e2el: summary(
                201.3,
                199.9,
                &[(50.0, 199.9), (99.0, 260.0), (99.9, 270.01)],
            ),
            ..StageMetrics::default()
        }
    }

    /// Our block up to and including vLLM's closing rule.
    fn vllm_part(text: &str) -> &str {
        let end = text.find(&format!("{}\n", "=".repeat(50))).unwrap() + 51;
        &text[..end]
    }

    #[test]
    fn summary_matches_vllm_character_for_character() {
        let info = StageInfo {
            request_rate: 4.0,
            max_concurrency: Some(8),
            ..StageInfo::default()
        };
        let view = SummaryView {
            metrics: PercentileMetric::parse_list(PercentileMetric::DEFAULT).unwrap(),
            percentiles: vec![50.0, 99.0, 99.9],
            ..SummaryView::default()
        };
        let text = summary_text(&info, &golden_figures(), &view);
        assert_eq!(
            vllm_part(&text),
            include_str!("../../tests/fixtures/loadgen/vllm-summary-rate4-conc8.txt")
        );
        // benchlens's own lines come after vLLM's block.
        assert!(text[vllm_part(&text).len()..]
            .starts_with("--------------- benchlens (client) ---------------\n"));

        let info = StageInfo {
            request_rate: f64::INFINITY,
            ..StageInfo::default()
        };
        let view = SummaryView {
            metrics: PercentileMetric::parse_list("ttft,e2el").unwrap(),
            percentiles: vec![99.0],
            ..SummaryView::default()
        };
        let m = StageMetrics {
            request_goodput: None,
            ..golden_figures()
        };
        assert_eq!(
            vllm_part(&summary_text(&info, &m, &view)),
            include_str!("../../tests/fixtures/loadgen/vllm-summary-inf.txt")
        );
        assert!(PercentileMetric::parse_list("ttft,latency")
            .unwrap_err()
            .contains("\"latency\""));
    }

    /// The explorer reads our console output as a vLLM summary: benchlens's second block does
    /// not disturb vLLM's.
    #[test]
    fn the_summary_reads_back_as_a_vllm_console_summary() {
        let info = StageInfo {
            request_rate: 4.0,
            max_concurrency: Some(8),
            ..StageInfo::default()
        };
        let mut m = golden_figures();
        m.failures.insert("http_500".into(), 2);
        let view = SummaryView {
            metrics: PercentileMetric::parse_list("ttft,tpot,itl,e2el").unwrap(),
            percentiles: vec![99.0],
            ..SummaryView::default()
        };
        let text = summary_text(&info, &m, &view);
        let got = crate::ingest::read("out.txt", text.as_bytes()).unwrap();
        assert_eq!(got.records.len(), 1);
        let r = &got.records[0];
        assert_eq!(r.metrics[&MetricKey::Completed], 98.0);
        assert_eq!(r.metrics[&MetricKey::TotalTokenThroughput], 624.12);
        let p99 = MetricKey::latency(LatencyMetric::E2el, Stat::P(Percentile::new(99.0).unwrap()));
        assert_eq!(r.metrics[&p99], 260.0);
    }

    #[test]
    fn error_reasons_are_the_three_most_frequent_without_the_url() {
        use crate::loadgen::record::{Failure, FailureKind};
        let failed = |kind, message: &str| RequestRecord {
            failure: Some(Failure {
                kind,
                message: message.into(),
            }),
            ..RequestRecord::default()
        };
        let long = format!(
            "http://h:1/v1/completions: HTTP 400 Bad Request: {}\nend",
            "x".repeat(300)
        );
        let mut reqs = vec![
            failed(
                FailureKind::Reset,
                "http://h:1/v1/completions: connection reset",
            ),
            failed(FailureKind::Http(400), &long),
            failed(FailureKind::Http(400), &long),
            failed(
                FailureKind::Http(422),
                "http://h:1/v1/completions: HTTP 422: {'ignore_eos'}",
            ),
            failed(
                FailureKind::Http(422),
                "http://h:1/v1/completions: HTTP 422: {'ignore_eos'}",
            ),
            failed(
                FailureKind::Http(422),
                "http://h:1/v1/completions: HTTP 422: {'ignore_eos'}",
            ),
            failed(FailureKind::Io, "broken pipe"),
        ];
        reqs.push(RequestRecord::default());
        let r = error_reasons(&reqs, 3);
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[0].count, r[0].kind.as_str(), r[0].message.as_str()),
            (3, "http_422", "HTTP 422: {'ignore_eos'}")
        );
        assert_eq!((r[1].count, r[1].kind.as_str()), (2, "http_400"));
        assert_eq!(r[1].message.len(), REASON_BYTES);
        assert!(r[1].message.starts_with("HTTP 400 Bad Request: xxx"));
        // Ties keep the order of first appearance.
        assert_eq!((r[2].count, r[2].kind.as_str()), (1, "reset"));
        let view = SummaryView::new(vec![PercentileMetric::Ttft], vec![99.0], &reqs, 0);
        let text = summary_text(&StageInfo::default(), &StageMetrics::default(), &view);
        assert!(
            text.contains("Most frequent errors:\n  3 x http_422: HTTP 422: {'ignore_eos'}\n"),
            "{text}"
        );
    }

    #[test]
    fn from_intended_is_shown_only_for_a_finite_rate() {
        let m = StageMetrics {
            ttft_from_intended: summary(900.0, 900.0, &[]),
            ..StageMetrics::default()
        };
        let r = RequestRecord {
            intended_at_s: 0.0,
            sent_at_s: 0.25,
            ttft_s: Some(0.01),
            e2el_s: Some(0.02),
            ..RequestRecord::default()
        };
        let view = SummaryView::new(vec![], vec![99.0], &[r], 0);
        let finite = StageInfo {
            request_rate: 2.0,
            max_concurrency: Some(4),
            ..StageInfo::default()
        };
        let text = summary_text(&finite, &m, &view);
        let want = format!(
            "{:<40} {:<10}\n",
            "Mean TTFT from intended send (ms):", "900.00"
        );
        assert!(text.contains(&want), "{text}");
        assert!(!text.contains("concurrency slot"));
        let capped = StageInfo {
            request_rate: f64::INFINITY,
            ..finite.clone()
        };
        let text = summary_text(&capped, &m, &view);
        assert!(!text.contains("from intended"), "{text}");
        let want = format!(
            "{:<40} {:<10}\n",
            "Mean wait for a concurrency slot (ms):", "250.00"
        );
        assert!(text.contains(&want), "{text}");
        let rec = stage_record(&capped, &m, &[], &view);
        assert!(rec
            .metrics
            .contains_key(&MetricKey::Extra("mean_concurrency_slot_wait_ms".into())));
        assert!(!rec
            .metrics
            .contains_key(&MetricKey::Extra("mean_ttft_from_intended_ms".into())));
        let open = StageInfo {
            max_concurrency: None,
            ..capped
        };
        let text = summary_text(&open, &m, &view);
        assert!(!text.contains("from intended") && !text.contains("concurrency slot"));
    }

    #[test]
    fn vllm_file_names() {
        let info = StageInfo {
            backend: "openai".into(),
            request_rate: 4.0,
            max_concurrency: Some(16),
            model: "org/Model-7B".into(),
            date: "20250101-000000".into(),
            ..StageInfo::default()
        };
        assert_eq!(
            vllm_file_name(&info),
            "openai-4.0qps-concurrency16-Model-7B-20250101-000000.json"
        );
        let info = StageInfo {
            request_rate: f64::INFINITY,
            label: Some("x".into()),
            ..info
        };
        assert!(vllm_file_name(&info).starts_with("x-infqps-"));
    }

    #[test]
    fn atomic_write_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_atomic(&p, "one").unwrap();
        write_atomic(&p, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        assert!(write_atomic(&dir.path().join("missing/r.json"), "x").is_err());
    }
}
