//! A stage second by second: the time series stored with each stage (`Record::series`).
//!
//! From the per-request measurements, for each whole second from the stage's start: requests
//! sent (the achieved rate), mean requests in flight (each request counted over the part of the
//! second between its send and its end), output tokens received (tokens/s), and the TTFT of
//! the requests whose first token arrived in it and the inter-token latencies of the tokens
//! that arrived in it, as p50/p90/p99. ITL follows the stage metrics' rule (see
//! [`super::measure`]): a read's gap is spread over the tokens it brought, and chunks that
//! came in one read form one observation. Pure.
//!
//! The TTFT percentiles are exact (one value a request is held). The ITL percentiles of a
//! second are read from its counts in logarithmic buckets ([`LogCounts`]), not from a value
//! held per token: within 0.5 % of the exact percentile (relative; 1 ns for gaps below 1 ns),
//! its 0th and 100th exact. The stage's own ITL figures (`mean_itl_ms`, `p99_itl_ms`, …) are
//! exact (see [`super::measure`]).

use std::collections::BTreeMap;

use super::record::RequestRecord;
use crate::analysis::stats::percentile_sorted;

mod sketch;

pub use sketch::LogCounts;

/// The quantiles each latency column holds.
const QUANTILES: [(f64, &str); 3] = [(50.0, "p50"), (90.0, "p90"), (99.0, "p99")];

/// The series of a stage's requests, by column (see [`crate::model::Record::series`]); empty
/// when no request was sent.
pub fn series(requests: &[RequestRecord]) -> BTreeMap<String, Vec<f64>> {
    let mut tally = SeriesTally::new();
    for r in requests {
        tally.add(r);
    }
    tally.finish()
}

/// [`series`] one request at a time, as a stage's requests end (in the stage's order: the
/// columns are then those of [`series`] bit for bit). Each second's columns grow as requests
/// reach it; a failed reply's chunks past the stage's last end count in its last second, as
/// [`series`] counts them.
pub struct SeriesTally {
    /// The latest send or end so far (seconds from the stage's start).
    end_s: f64,
    sent: Vec<f64>,
    in_flight: Vec<f64>,
    tokens: Vec<f64>,
    ttft: Vec<Vec<f64>>,
    itl: Vec<LogCounts>,
}

impl Default for SeriesTally {
    fn default() -> SeriesTally {
        SeriesTally::new()
    }
}

/// `v[i]`, `v` grown to hold it.
fn at<T: Default>(v: &mut Vec<T>, i: usize) -> &mut T {
    if v.len() <= i {
        v.resize_with(i + 1, T::default);
    }
    &mut v[i]
}

/// The second of a time (seconds from the stage's start; before it: the first).
fn second(t: f64) -> usize {
    t.max(0.0).floor() as usize
}

impl SeriesTally {
    /// No requests yet.
    pub fn new() -> SeriesTally {
        SeriesTally {
            end_s: f64::NEG_INFINITY,
            sent: Vec::new(),
            in_flight: Vec::new(),
            tokens: Vec::new(),
            ttft: Vec::new(),
            itl: Vec::new(),
        }
    }

    /// Counts the next request.
    pub fn add(&mut self, r: &RequestRecord) {
        self.end_s = self
            .end_s
            .max(r.sent_at_s + r.e2el_s.or(r.ttft_s).unwrap_or(0.0))
            .max(r.sent_at_s);
        *at(&mut self.sent, second(r.sent_at_s)) += 1.0;
        let end = r.sent_at_s + r.e2el_s.unwrap_or(0.0);
        // Room for the seconds the request spans (no later than the stage's end).
        let from = r.sent_at_s.max(0.0);
        at(&mut self.in_flight, second(end.max(from)));
        spread_presence(&mut self.in_flight, r.sent_at_s, end);
        if let Some(t) = r.ttft_s.filter(|_| r.failure.is_none()) {
            at(&mut self.ttft, second(r.sent_at_s + t)).push(t * 1e3);
        }
        for c in &r.chunks {
            *at(&mut self.tokens, second(r.sent_at_s + c.at_s)) += f64::from(c.tokens);
        }
        if r.failure.is_none() {
            let itl = &mut self.itl;
            observed_gaps(r, |t, k, gap_ms| at(itl, second(t)).add(gap_ms, k));
        }
    }

    /// The columns.
    pub fn finish(self) -> BTreeMap<String, Vec<f64>> {
        let SeriesTally {
            end_s,
            sent,
            in_flight,
            tokens,
            ttft,
            itl,
        } = self;
        if !end_s.is_finite() {
            return BTreeMap::new();
        }
        let seconds = (end_s.max(0.0).floor() as usize) + 1;
        // Counts past the last second join it: whole numbers, so their sums are exact in any
        // order.
        let sums = |mut v: Vec<f64>| {
            let late: f64 = v.iter().skip(seconds).sum();
            v.resize(seconds, 0.0);
            v[seconds - 1] += late;
            v
        };
        let lists = |mut v: Vec<Vec<f64>>| {
            let late: Vec<f64> = v
                .iter_mut()
                .skip(seconds)
                .flat_map(std::mem::take)
                .collect();
            v.resize_with(seconds, Vec::new);
            v[seconds - 1].extend(late);
            v
        };
        let (sent, tokens) = (sums(sent), sums(tokens));
        let mut in_flight = in_flight;
        in_flight.resize(seconds, 0.0);
        let ttft = lists(ttft);
        let mut itl = itl;
        let late = itl
            .iter()
            .skip(seconds)
            .fold(LogCounts::new(), |mut all, s| {
                all.merge(s);
                all
            });
        itl.resize_with(seconds, LogCounts::new);
        itl[seconds - 1].merge(&late);
        let mut out = BTreeMap::new();
        out.insert("t_s".to_string(), (0..seconds).map(|s| s as f64).collect());
        out.insert("sent".to_string(), sent);
        out.insert("in_flight".to_string(), in_flight);
        out.insert("output_tokens".to_string(), tokens);
        let sorted: Vec<Vec<f64>> = ttft
            .into_iter()
            .map(|mut v| {
                v.sort_by(f64::total_cmp);
                v
            })
            .collect();
        for (p, label) in QUANTILES {
            out.insert(
                format!("ttft_{label}_ms"),
                sorted
                    .iter()
                    .map(|v| percentile_sorted(v, p).unwrap_or(f64::NAN))
                    .collect(),
            );
            out.insert(
                format!("itl_{label}_ms"),
                itl.iter()
                    .map(|c| c.percentile(p).unwrap_or(f64::NAN))
                    .collect(),
            );
        }
        out
    }
}

/// Calls `f(at, tokens, gap_ms)` for each read of a request's chunks after its first: when it
/// reached the socket (seconds from the stage's start), the tokens it brought (a chunk counts at
/// least one) and the gap from the read before, spread over those tokens.
fn observed_gaps(r: &RequestRecord, mut f: impl FnMut(f64, u32, f64)) {
    let mut last_read: Option<f64> = None;
    let mut pending = 0u32;
    let mut chunks = r.chunks.iter().peekable();
    while let Some(c) = chunks.next() {
        let at = r.sent_at_s + c.at_s;
        pending += c.tokens.max(1);
        // The chunk's read ends when the next chunk is not coalesced with it.
        let read_ends = chunks.peek().is_none_or(|n| !n.coalesced);
        if !read_ends {
            continue;
        }
        if let Some(prev) = last_read {
            f(at, pending, (at - prev) * 1e3 / f64::from(pending));
        }
        last_read = Some(at);
        pending = 0;
    }
}

/// Adds to each second the share of it that `[from, to)` covers.
fn spread_presence(per_second: &mut [f64], from: f64, to: f64) {
    let (from, to) = (from.max(0.0), to.max(from.max(0.0)));
    let last = per_second.len().saturating_sub(1);
    let first = (from.floor() as usize).min(last);
    let end = (to.floor() as usize).min(last);
    for (s, v) in per_second.iter_mut().enumerate().take(end + 1).skip(first) {
        let lo = from.max(s as f64);
        let hi = to.min(s as f64 + 1.0);
        if hi > lo {
            *v += hi - lo;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::record::ChunkArrival;

    fn request(sent: f64, chunk_at: &[(f64, u32, bool)]) -> RequestRecord {
        RequestRecord {
            sent_at_s: sent,
            ttft_s: chunk_at.first().map(|c| c.0),
            e2el_s: chunk_at.last().map(|c| c.0),
            chunks: chunk_at
                .iter()
                .map(|&(at_s, tokens, coalesced)| ChunkArrival {
                    at_s,
                    tokens,
                    coalesced,
                })
                .collect(),
            ..RequestRecord::default()
        }
    }

    #[test]
    fn seconds_count_sends_presence_tokens_and_latencies() {
        let reqs = vec![
            // Sent at 0.5 s, first token 0.1 s later, then tokens 0.2 s apart into second 1.
            request(
                0.5,
                &[
                    (0.1, 1, false),
                    (0.3, 1, false),
                    (0.5, 1, false),
                    (0.7, 1, false),
                ],
            ),
            // Sent at 1.25 s: two tokens in one read after the first.
            request(1.25, &[(0.25, 1, false), (0.5, 1, false), (0.5, 1, true)]),
        ];
        let s = series(&reqs);
        assert_eq!(s["t_s"], vec![0.0, 1.0]);
        assert_eq!(s["sent"], vec![1.0, 1.0]);
        // First request: 0.5–1.2 s; second: 1.25–1.75 s.
        let flight: Vec<f64> = s["in_flight"]
            .iter()
            .map(|x| (x * 1e9).round() / 1e9)
            .collect();
        assert_eq!(flight, vec![0.5, 0.7]);
        assert_eq!(s["output_tokens"], vec![2.0, 5.0]);
        // Sums of binary fractions: compare to the nanosecond.
        let ms = |k: &str, i: usize| (s[k][i] * 1e6).round() / 1e6;
        // TTFTs: 100 ms (arrived at 0.6 s) and 250 ms (at 1.5 s).
        assert_eq!((ms("ttft_p50_ms", 0), ms("ttft_p50_ms", 1)), (100.0, 250.0));
        // ITL: 200 ms in second 0 (0.6 → 0.8), then 200, 200 and the coalesced read's 250 ms
        // spread over its two tokens: 125, 125. One value is its own percentile (the least
        // and greatest are exact); others are within 0.5 % (read from buckets).
        assert_eq!(ms("itl_p50_ms", 0), 200.0);
        let near = |k: &str, i: usize, exact: f64| {
            let got = s[k][i];
            assert!(
                (got - exact).abs() <= exact * LogCounts::RELATIVE_ERROR,
                "{k}[{i}]: {got} vs {exact}"
            );
        };
        near("itl_p99_ms", 1, 200.0);
        near("itl_p50_ms", 1, 162.5);
        near("itl_p90_ms", 1, 200.0);
    }

    /// Each second's ITL percentiles against the exact ones of the gaps that arrived in it
    /// (the values `series` held, one a token, before it counted them in buckets).
    #[test]
    fn per_second_itl_percentiles_are_within_half_a_percent_of_exact() {
        let reqs: Vec<RequestRecord> = (0..400)
            .map(|i| {
                let chunks: Vec<(f64, u32, bool)> = (0..40)
                    .map(|k| {
                        // Later chunks come later: 1.5–7.1 ms apart.
                        let at = 0.01 + f64::from(k) * 0.0043 + f64::from((i * k * k) % 29) * 1e-4;
                        (at, 1 + u32::from(k % 3 == 2), k % 5 == 4)
                    })
                    .collect();
                request(f64::from(i) * 0.011, &chunks)
            })
            .collect();
        let s = series(&reqs);
        let seconds = s["t_s"].len();
        let mut exact: Vec<Vec<f64>> = vec![Vec::new(); seconds];
        for r in &reqs {
            observed_gaps(r, |t, k, gap_ms| {
                let v = &mut exact[second(t).min(seconds - 1)];
                v.extend(std::iter::repeat_n(gap_ms, k as usize));
            });
        }
        let full = exact.iter().filter(|v| v.len() > 1000).count();
        assert!(full >= 4, "{full} of {seconds} seconds");
        for (p, label) in QUANTILES {
            let key = format!("itl_{label}_ms");
            for (i, v) in exact.iter_mut().enumerate() {
                v.sort_by(f64::total_cmp);
                let Some(want) = percentile_sorted(v, p) else {
                    assert!(s[&key][i].is_nan());
                    continue;
                };
                let got = s[&key][i];
                assert!(
                    (got - want).abs() <= want * LogCounts::RELATIVE_ERROR * (1.0 + 1e-9),
                    "{key}[{i}]: {got} vs {want}"
                );
            }
        }
    }

    #[test]
    fn empty_seconds_have_no_latency_and_no_requests_no_series() {
        let s = series(&[request(2.5, &[(0.1, 1, false)])]);
        assert_eq!(s["sent"], vec![0.0, 0.0, 1.0]);
        assert!(s["ttft_p50_ms"][0].is_nan());
        assert!(series(&[]).is_empty());
    }
}
