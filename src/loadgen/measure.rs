//! Per-stage metrics from per-request measurements, defined as vLLM's serving benchmark defines
//! them: TTFT; TPOT = (E2E − TTFT) / (output tokens − 1); ITL per token (a chunk after the first
//! that carries k tokens contributes its gap divided by k, k times, as SGLang's client does; the
//! first chunk's tokens count in TTFT only); E2E
//! latency; request, output and total token throughput over the stage duration; goodput against
//! `--goodput` SLOs. Failed requests are counted by kind and excluded from every throughput and
//! latency. Also what vLLM does not report: latencies from the *intended* send time, achieved vs
//! target rate and the client's scheduling lag.
//!
//! Timing honesty: a chunk that came in the same read as the one before it
//! ([`ChunkArrival::coalesced`](super::record::ChunkArrival)) has no gap of its own that was
//! observed. Its tokens join the read's observation, so each separately observed gap is spread
//! over all the tokens that arrived with it, and no 0 ms gap is invented (a request whose tokens
//! all came in one read has no ITL sample); the share of such
//! chunks is counted and, when visible, [`warnings`] says the ITL distribution is limited by
//! the client. Replies longer than asked (`over_length`) and, with `--ignore-eos`, shorter
//! (`short_reply`) are counted too. Pure; must not import app code.

use std::collections::BTreeMap;

use super::record::{ChunkArrival, LengthFlag, RequestRecord};
use super::stats::{summarize_owned, StreamedSummary, Summary};
use crate::analysis::capacity::{Objective, Objectives, SloError, SloMetric};

/// Service-level objectives for goodput, in milliseconds (vLLM's `--goodput ttft:MS tpot:MS e2el:MS`).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Slo {
    /// Largest acceptable TTFT.
    pub ttft_ms: Option<f64>,
    /// Largest acceptable TPOT.
    pub tpot_ms: Option<f64>,
    /// Largest acceptable end-to-end latency.
    pub e2el_ms: Option<f64>,
}

impl Slo {
    /// `run --goodput`'s objectives: it counts requests, so it takes vLLM's per-request bounds
    /// on TTFT, TPOT and E2EL only (`None` when there are none).
    pub fn from_objectives<'a>(
        objectives: impl IntoIterator<Item = &'a Objective>,
    ) -> Result<Option<Slo>, SloError> {
        let mut slo = None;
        for o in objectives {
            let s: &mut Slo = slo.get_or_insert_with(Slo::default);
            match (o.percentile, o.metric) {
                (None, SloMetric::Ttft) => s.ttft_ms = Some(o.limit_ms),
                (None, SloMetric::Tpot) => s.tpot_ms = Some(o.limit_ms),
                (None, SloMetric::E2el) => s.e2el_ms = Some(o.limit_ms),
                _ => {
                    return Err(SloError::NotHere {
                        item: o.to_string(),
                        why: "run's goodput counts the requests within every bound, as vLLM's: \
                              ttft, tpot and e2el (stage percentiles such as p99_ttft are \
                              sweep's)",
                    })
                }
            }
        }
        Ok(slo)
    }

    /// [`Slo::from_objectives`] of `ttft:500 tpot:50 e2el:2000` (as [`Objectives`] reads it).
    pub fn parse(text: &str) -> Result<Option<Slo>, SloError> {
        Slo::from_objectives(&text.parse::<Objectives>()?.0)
    }
}

/// Latency samples of one successful request, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestLatencies {
    /// Time to first token.
    pub ttft_ms: f64,
    /// Time per output token (0 when a single token came back, as vLLM does).
    pub tpot_ms: f64,
    /// Per-token inter-token latencies.
    pub itl_ms: Vec<f64>,
    /// End-to-end latency.
    pub e2el_ms: f64,
}

/// Whether [`request_latencies`] gives the request's latencies (without making them).
pub fn has_latencies(r: &RequestRecord) -> bool {
    r.failure.is_none() && r.ttft_s.is_some() && r.e2el_s.is_some()
}

/// Latencies of a successful request; `None` for failed ones or ones without a token.
pub fn request_latencies(r: &RequestRecord) -> Option<RequestLatencies> {
    if r.failure.is_some() {
        return None;
    }
    let ttft = r.ttft_s?;
    let e2el = r.e2el_s?;
    let out = r.output_tokens();
    let tpot = if out > 1 {
        (e2el - ttft) / (out - 1) as f64
    } else {
        0.0
    };
    let mut itl = Vec::with_capacity(out as usize);
    itl_of(&r.chunks, &mut |v| itl.push(v));
    Some(RequestLatencies {
        ttft_ms: ttft * 1e3,
        tpot_ms: tpot * 1e3,
        itl_ms: itl,
        e2el_ms: e2el * 1e3,
    })
}

/// Calls `f` with a reply's per-token inter-token latencies (ms), in order: the `itl_ms` of
/// [`request_latencies`], made from the reply's chunks alone.
pub fn itl_of(chunks: impl IntoIterator<Item = ChunkArrival>, f: &mut dyn FnMut(f64)) {
    // One observation per read: a coalesced chunk's tokens join the chunk before it. Those that
    // came in the first read with the first token join the next observed gap instead (their own
    // gaps were not observed; the first chunk's own tokens count in TTFT only, as in vLLM).
    let chunks = chunks.into_iter();
    let mut observed: Vec<(f64, u32)> = Vec::with_capacity(chunks.size_hint().0);
    let mut first_read_extra = 0u32;
    for c in chunks {
        let k = c.tokens.max(1);
        let first_read = observed.len() == 1;
        match observed.last_mut() {
            Some(_) if c.coalesced && first_read => first_read_extra += k,
            Some(last) if c.coalesced => last.1 = last.1.saturating_add(k),
            _ => observed.push((c.at_s, k)),
        }
    }
    for (i, w) in observed.windows(2).enumerate() {
        let k = w[1].1 + if i == 0 { first_read_extra } else { 0 };
        let gap = (w[1].0 - w[0].0) / f64::from(k);
        for _ in 0..k {
            f(gap * 1e3);
        }
    }
}

/// Everything reported for one stage.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageMetrics {
    /// Successful requests.
    pub completed: u64,
    /// Failed requests.
    pub failed: u64,
    /// Failed requests by kind name.
    pub failures: BTreeMap<String, u64>,
    /// Stage wall time, seconds.
    pub duration_s: f64,
    /// Input tokens of successful requests (server usage when given, else client count).
    pub total_input: u64,
    /// Output tokens of successful requests (server usage when given, else client count).
    pub total_output: u64,
    /// Output tokens per the server's usage, over requests that reported it.
    pub total_output_server: Option<u64>,
    /// Token-bearing chunks counted by the client.
    pub total_output_local: u64,
    /// Output tokens of the received text by the client's tokenizer, when counted.
    pub total_output_text: Option<u64>,
    /// Successful requests whose server token count differs from the client's count (its
    /// tokenizer's when the text was counted, else its chunk count).
    pub output_count_mismatches: u64,
    /// Successful requests with more output tokens than asked (`over_length`).
    pub over_length: u64,
    /// The longest over-length reply: (output tokens, tokens asked).
    pub longest_over_length: Option<(u64, u64)>,
    /// Successful `--ignore-eos` requests with fewer output tokens than asked (`short_reply`).
    pub short_reply: u64,
    /// Successful OpenAI-style streams that ended with `[DONE]` but no `finish_reason`.
    pub finish_reason_missing: u64,
    /// Requests sent again on a new connection because their pooled one had been closed by
    /// the server before answering (never a failure of theirs; see
    /// [`RequestRecord::retried_unsent`]).
    pub retried_unsent: u64,
    /// Requests whose server usage held values that are no token counts, ignored.
    pub usage_ignored: u64,
    /// The models the replies named, with how many replies named each (at most
    /// [`MAX_SERVER_MODELS`] names; OpenAI-style backends).
    pub server_models: BTreeMap<String, u64>,
    /// Completed requests for which the server counted the prompt more than
    /// [`PROMPT_DRIFT`] away from the asked length.
    pub prompt_drift: u64,
    /// Completed requests with the server's prompt count.
    pub prompt_counted: u64,
    /// The least and greatest ratio of the server's prompt count to the asked length among
    /// the drifting requests.
    pub prompt_drift_range: Option<(f64, f64)>,
    /// Token-bearing chunks of successful requests (the timing points).
    pub timed_chunks: u64,
    /// Of those, chunks that came in the same read as the one before: their gaps were not
    /// observed.
    pub coalesced_chunks: u64,
    /// Completed / duration.
    pub request_throughput: f64,
    /// Requests meeting every SLO / duration, when SLOs were given.
    pub request_goodput: Option<f64>,
    /// Output tokens / duration.
    pub output_throughput: f64,
    /// (Input + output tokens) / duration.
    pub total_token_throughput: f64,
    /// Most output tokens that arrived within one second of the stage.
    pub max_output_tokens_per_s: f64,
    /// Most requests in flight at once.
    pub max_concurrent_requests: u64,
    /// TTFT from the actual send.
    pub ttft: Option<Summary>,
    /// TPOT.
    pub tpot: Option<Summary>,
    /// ITL, per token.
    pub itl: Option<Summary>,
    /// End-to-end latency from the actual send.
    pub e2el: Option<Summary>,
    /// TTFT from the intended send time (includes client lag and queueing for a slot).
    pub ttft_from_intended: Option<Summary>,
    /// End-to-end latency from the intended send time.
    pub e2el_from_intended: Option<Summary>,
    /// The client's scheduling lag, milliseconds.
    pub schedule_lag: Option<Summary>,
    /// From each send to the write syscall of the request, milliseconds (not in TTFT; in the
    /// from-intended figures).
    pub write_delay: Option<Summary>,
    /// How long first response bytes waited in the socket for the client, milliseconds
    /// (client queueing, left out of TTFT thanks to kernel receive stamps).
    pub read_delay: Option<Summary>,
    /// Configured rate (req/s; infinite when unbounded).
    pub target_rate: f64,
    /// Rate at which requests were actually sent: (n − 1) / (last send − first send).
    pub achieved_rate: Option<f64>,
    /// Mean input tokens per successful request.
    pub mean_input_len: Option<f64>,
    /// Mean output tokens per successful request.
    pub mean_output_len: Option<f64>,
}

/// Computes a stage's metrics. `duration_s` is the stage's wall time (first send to last end).
pub fn compute(
    requests: &[RequestRecord],
    duration_s: f64,
    target_rate: f64,
    percentiles: &[f64],
    slo: Option<Slo>,
) -> StageMetrics {
    let mut tally = MetricsTally::new(slo);
    for r in requests {
        tally.add(r, request_latencies(r).as_ref());
    }
    // One ITL sample per token after the first, far more than requests: read from the records
    // again rather than held (8 bytes a token, more than a request's packed chunks).
    tally.finish(duration_s, target_rate, percentiles, |f| {
        for r in requests.iter().filter(|r| has_latencies(r)) {
            itl_of(&r.chunks, f);
        }
    })
}

/// Order of the edges at one instant in [`MetricsTally`]'s concurrency count.
const EDGE_END: u8 = 0;
/// See [`EDGE_END`].
const EDGE_START: u8 = 1;
/// See [`EDGE_END`]: the end of a request that took no time, after its own start.
const EDGE_END_AT_START: u8 = 2;

/// [`compute`] one request at a time, as a stage's requests end (in the stage's order: the
/// figures are then those of [`compute`] bit for bit). Holds a few numbers per request, not the
/// request.
pub struct MetricsTally {
    m: StageMetrics,
    slo: Option<Slo>,
    ttft: Vec<f64>,
    tpot: Vec<f64>,
    e2el: Vec<f64>,
    ttft_i: Vec<f64>,
    e2el_i: Vec<f64>,
    lag: Vec<f64>,
    write_delay: Vec<f64>,
    read_delay: Vec<f64>,
    good: u64,
    server_total: Option<u64>,
    per_second: BTreeMap<i64, u64>,
    /// Request starts and ends: (instant, [`EDGE_END`], [`EDGE_START`] or [`EDGE_END_AT_START`]).
    edges: Vec<(f64, u8)>,
    sends: Vec<f64>,
    itl: StreamedSummary,
}

impl MetricsTally {
    /// No requests yet; goodput against `slo`.
    pub fn new(slo: Option<Slo>) -> MetricsTally {
        MetricsTally::with_capacity(slo, 0)
    }

    /// [`MetricsTally::new`] with room for `requests` (a stage of a known size grows no list,
    /// and holds no room beyond it).
    pub fn with_capacity(slo: Option<Slo>, requests: usize) -> MetricsTally {
        let list = || Vec::with_capacity(requests);
        MetricsTally {
            m: StageMetrics::default(),
            slo,
            ttft: list(),
            tpot: list(),
            e2el: list(),
            ttft_i: list(),
            e2el_i: list(),
            lag: list(),
            write_delay: list(),
            read_delay: list(),
            good: 0,
            server_total: None,
            per_second: BTreeMap::new(),
            edges: Vec::with_capacity(requests.saturating_mul(2)),
            sends: list(),
            itl: StreamedSummary::new(),
        }
    }

    /// Counts the next request; `l` is its [`request_latencies`].
    pub fn add(&mut self, r: &RequestRecord, l: Option<&RequestLatencies>) {
        let m = &mut self.m;
        m.retried_unsent += u64::from(r.retried_unsent);
        m.usage_ignored += u64::from(r.usage_ignored);
        if let Some(name) = &r.server_model {
            if let Some(n) = m.server_models.get_mut(name) {
                *n += 1;
            } else if m.server_models.len() < MAX_SERVER_MODELS {
                m.server_models.insert(name.clone(), 1);
            }
        }
        self.sends.push(r.sent_at_s);
        self.lag.push(r.schedule_lag_s * 1e3);
        self.write_delay.extend(r.write_delay_s.map(|s| s * 1e3));
        self.read_delay
            .extend(r.first_read_delay_s.map(|s| s * 1e3));
        let Some(l) = l else {
            m.failed += 1;
            let kind = r
                .failure
                .as_ref()
                .map_or("no_tokens".to_string(), |f| f.kind.name());
            *m.failures.entry(kind).or_default() += 1;
            return;
        };
        m.completed += 1;
        match r.length_flag() {
            Some(LengthFlag::OverLength) => {
                m.over_length += 1;
                let this = (r.output_tokens(), r.max_tokens);
                if m.longest_over_length.is_none_or(|(o, _)| this.0 > o) {
                    m.longest_over_length = Some(this);
                }
            }
            Some(LengthFlag::ShortReply) => m.short_reply += 1,
            None => {}
        }
        m.finish_reason_missing += u64::from(r.finish_reason_missing);
        if let (Some(server), true) = (r.input_tokens_server, r.input_len > 0) {
            m.prompt_counted += 1;
            let ratio = server as f64 / r.input_len as f64;
            if (ratio - 1.0).abs() > PROMPT_DRIFT {
                m.prompt_drift += 1;
                let (lo, hi) = m.prompt_drift_range.unwrap_or((ratio, ratio));
                m.prompt_drift_range = Some((lo.min(ratio), hi.max(ratio)));
            }
        }
        m.timed_chunks += r.chunks.len() as u64;
        m.coalesced_chunks += r.coalesced_chunks;
        m.total_input += r.input_tokens();
        m.total_output += r.output_tokens();
        m.total_output_local += r.output_chunks_local;
        if let Some(t) = r.output_tokens_text {
            *m.total_output_text.get_or_insert(0) += t;
        }
        if let Some(s) = r.output_tokens_server {
            *self.server_total.get_or_insert(0) += s;
            if s != r.output_tokens_text.unwrap_or(r.output_chunks_local) {
                m.output_count_mismatches += 1;
            }
        }
        // Latencies count from the request's write; before it: the wait for a slot and the
        // client's own delay in writing it.
        let wait = r.sent_at_s - r.intended_at_s + r.write_delay_s.unwrap_or(0.0);
        let origin = r.sent_at_s + r.write_delay_s.unwrap_or(0.0);
        self.ttft_i.push(l.ttft_ms + wait * 1e3);
        self.e2el_i.push(l.e2el_ms + wait * 1e3);
        if let Some(s) = self.slo {
            let ok = s.ttft_ms.is_none_or(|x| l.ttft_ms <= x)
                && s.tpot_ms.is_none_or(|x| l.tpot_ms <= x)
                && s.e2el_ms.is_none_or(|x| l.e2el_ms <= x);
            self.good += u64::from(ok);
        }
        for c in &r.chunks {
            let t = origin + c.at_s;
            *self.per_second.entry(t.floor() as i64).or_default() += u64::from(c.tokens);
        }
        let end = origin + l.e2el_ms / 1e3;
        self.edges.push((origin, EDGE_START));
        self.edges.push((
            end,
            if end > origin {
                EDGE_END
            } else {
                EDGE_END_AT_START
            },
        ));
        self.ttft.push(l.ttft_ms);
        self.tpot.push(l.tpot_ms);
        self.e2el.push(l.e2el_ms);
        for &v in &l.itl_ms {
            self.itl.add(v);
        }
    }

    /// The stage's metrics. `itl_again` gives the ITL samples of the requests counted, in the
    /// same order, once more (their [`itl_of`], for each request with latencies).
    pub fn finish(
        self,
        duration_s: f64,
        target_rate: f64,
        percentiles: &[f64],
        itl_again: impl Fn(&mut dyn FnMut(f64)),
    ) -> StageMetrics {
        let MetricsTally {
            mut m,
            slo,
            ttft,
            tpot,
            e2el,
            ttft_i,
            e2el_i,
            lag,
            write_delay,
            read_delay,
            good,
            server_total,
            per_second,
            mut edges,
            mut sends,
            itl,
        } = self;
        m.duration_s = duration_s;
        m.target_rate = target_rate;
        m.total_output_server = server_total;
        // At one instant, ends of requests that started before it come first (back-to-back
        // requests do not overlap), then starts, then the ends of requests that took no time
        // at all (a zero-delay server, in seconds since the epoch as an f64): those ran, alone
        // they are one request in flight, and the count never goes below zero.
        // Unstable (in place, no scratch buffer): edges equal under this order are the same.
        edges.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        let mut live = 0u64;
        for (_, kind) in edges {
            if kind == EDGE_START {
                live += 1;
                m.max_concurrent_requests = m.max_concurrent_requests.max(live);
            } else {
                live = live.saturating_sub(1);
            }
        }
        m.max_output_tokens_per_s = per_second.values().copied().max().unwrap_or(0) as f64;
        if duration_s > 0.0 {
            m.request_throughput = m.completed as f64 / duration_s;
            m.output_throughput = m.total_output as f64 / duration_s;
            m.total_token_throughput = (m.total_input + m.total_output) as f64 / duration_s;
            m.request_goodput = slo.map(|_| good as f64 / duration_s);
        }
        if m.completed > 0 {
            m.mean_input_len = Some(m.total_input as f64 / m.completed as f64);
            m.mean_output_len = Some(m.total_output as f64 / m.completed as f64);
        }
        sends.sort_unstable_by(f64::total_cmp);
        if let (Some(first), Some(last)) = (sends.first(), sends.last()) {
            if sends.len() > 1 && last > first {
                m.achieved_rate = Some((sends.len() - 1) as f64 / (last - first));
            }
        }
        drop(sends);
        // Sorted in place (as `summarize` sorts its copy): the same figures.
        let sum = |v: Vec<f64>| summarize_owned(v, percentiles);
        m.ttft = sum(ttft);
        m.tpot = sum(tpot);
        m.itl = itl.finish(itl_again, percentiles);
        m.e2el = sum(e2el);
        m.ttft_from_intended = sum(ttft_i);
        m.e2el_from_intended = sum(e2el_i);
        m.schedule_lag = sum(lag);
        m.write_delay = sum(write_delay);
        m.read_delay = sum(read_delay);
        m
    }
}

/// Share of timed chunks that came coalesced from which the summary says the per-chunk ITL
/// distribution is limited by how the chunks were read.
pub const COALESCED_SHARE_WARNING: f64 = 0.01;

/// The share of timed chunks that came in the same read as the one before, if any came.
pub fn coalesced_share(m: &StageMetrics) -> Option<f64> {
    (m.timed_chunks > 0).then(|| m.coalesced_chunks as f64 / m.timed_chunks as f64)
}

/// How far (a share of the asked length) the server's prompt count may be from the asked
/// length before the summary warns that the client's tokenizer is not the model's.
pub const PROMPT_DRIFT: f64 = 0.10;

/// Distinct model names a stage keeps from the replies.
pub const MAX_SERVER_MODELS: usize = 4;

/// Whether a model name a reply gave is the one asked: equal, or equal in the last path
/// segment, ignoring case (`org/Model` asked, `model` named, or a path to the same file).
pub fn same_model(asked: &str, named: &str) -> bool {
    let last = |s: &str| {
        s.trim_end_matches('/')
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(s)
            .to_ascii_lowercase()
    };
    asked == named || last(asked) == last(named)
}

/// Warnings about a stage's figures, one line each, for the console summary. `model` is the
/// model the requests asked for.
pub fn warnings(m: &StageMetrics, model: &str) -> Vec<String> {
    let mut out = Vec::new();
    let other: Vec<String> = m
        .server_models
        .iter()
        .filter(|(name, _)| !same_model(model, name))
        .map(|(name, n)| format!("{name:?} in {n}"))
        .collect();
    if !other.is_empty() {
        out.push(format!(
            "Warning: the server named another model than --model {model:?} in its replies ({} of the replies): a server that accepts any model name (llama-server does) answers with its own, and the result is labelled with the name asked; pass --model as the server names it",
            other.join(", ")
        ));
    }
    if m.prompt_drift > 0 {
        let (lo, hi) = m.prompt_drift_range.unwrap_or((1.0, 1.0));
        out.push(format!(
            "Warning: for {} of {} requests the server counted the prompt more than {:.0}% away from the asked length ({:.2}x to {:.2}x): the client's tokenizer is not the model's, so the workload is not the one asked; pass --tokenizer with the model's tokenizer.json (chat backends also count the chat template's tokens)",
            m.prompt_drift,
            m.prompt_counted,
            PROMPT_DRIFT * 100.0,
            lo,
            hi
        ));
    }
    if m.over_length > 0 {
        let longest = m.longest_over_length.map_or(String::new(), |(o, a)| {
            format!(" (longest: {o} tokens for {a} asked)")
        });
        out.push(format!(
            "Warning: {} of {} replies were longer than asked{longest}: the server ignores the length limit the backend sends",
            m.over_length, m.completed
        ));
    }
    if m.short_reply > 0 {
        out.push(format!(
            "Warning: {} of {} replies were shorter than asked despite --ignore-eos: the server does not honour ignore_eos",
            m.short_reply, m.completed
        ));
    }
    if m.finish_reason_missing > 0 {
        out.push(format!(
            "Warning: {} of {} replies ended with [DONE] but no finish_reason: the server may have cut them off (llama-cpp-python does when another request arrives, unless started with --interrupt_requests False)",
            m.finish_reason_missing, m.completed
        ));
    }
    if m.usage_ignored > 0 {
        out.push(format!(
            "Warning: {} request(s) reported usage values that are no token counts (negative, fractional, huge, or text such as \"NaN\"): those values were ignored and the client's counts used; the chunks and timings are kept",
            m.usage_ignored
        ));
    }
    if m.retried_unsent > 0 {
        out.push(format!(
            "Note: {} request(s) were sent again on a new connection: the server had closed the kept-alive connection before answering (llama-server does after each streamed reply); not counted as failures",
            m.retried_unsent
        ));
    }
    if let Some(share) = coalesced_share(m).filter(|s| *s >= COALESCED_SHARE_WARNING) {
        out.push(format!(
            "Note: {:.1}% of token chunks ({} of {}) came in one read with the chunk before, so their own gaps were not observed: the server sent them together or the client read late (the socket-to-read wait above tells which); the per-chunk ITL distribution is limited by that (each observed gap is spread over its tokens)",
            share * 100.0,
            m.coalesced_chunks,
            m.timed_chunks
        ));
    }
    out
}

#[cfg(test)]
mod tests;
