//! `benchlens inspect` of a per-request file (`<result>.requests.jsonl`, written by
//! `benchlens run`): one pass over its lines, never the whole file in memory, summarised as
//! counts, outcomes and the distributions of TTFT, ITL, E2EL and token counts.
//!
//! Memory: one line at a time (the read buffer grows to the longest line), plus 8 bytes per
//! request for each per-request figure (TTFT, E2EL, input and output tokens: exact
//! percentiles by the crate's one percentile, [`crate::analysis::stats::percentile_sorted`]),
//! plus a fixed 28 KB log-bucket sketch for the inter-token gaps, which number about a hundred
//! per request: its percentiles are within 0.5 % of the exact value (relative), its mean, min
//! and max exact. A bad line is skipped with a warning naming its line; the first
//! [`MAX_WARNINGS`] are printed, the rest counted.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::BufRead;

use serde::Deserialize;

use super::error::CliError;

use crate::analysis::stats::percentile_sorted;

/// Warnings printed in full; more are counted.
pub const MAX_WARNINGS: usize = 10;

/// Percentiles printed for every distribution.
const PERCENTILES: [f64; 3] = [50.0, 90.0, 99.0];

/// Whether `path` names a per-request file of `benchlens run`, by its name, or by its first
/// line for other `.jsonl` files.
pub fn is_requests_jsonl(path: &str, first_line: &[u8]) -> bool {
    if path.ends_with(".requests.jsonl") {
        return true;
    }
    path.ends_with(".jsonl")
        && memchr::memmem::find(first_line, b"\"chunks_ms_tokens\"").is_some()
        && memchr::memmem::find(first_line, b"\"stage\"").is_some()
}

/// The summary of `path` when it is a per-request file ([`is_requests_jsonl`]), `None` for any
/// other file (and for stdin, which is read by the usual readers).
pub fn inspect_if_requests(path: &str) -> Option<Result<String, CliError>> {
    if path == "-" || !path.ends_with(".jsonl") {
        return None;
    }
    let read_error = |source| CliError::Read {
        path: path.to_string(),
        source,
    };
    let file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) => return Some(Err(read_error(e))),
    };
    let mut input = std::io::BufReader::with_capacity(1 << 20, file);
    let head = match input.fill_buf() {
        Ok(b) => b,
        Err(e) => return Some(Err(read_error(e))),
    };
    let first_line = &head[..memchr::memchr(b'\n', head).unwrap_or(head.len())];
    if !is_requests_jsonl(path, first_line) {
        return None;
    }
    Some(
        summarise(input)
            .map(|mut s| s.describe(path))
            .map_err(read_error),
    )
}

/// One line, only the fields the summary reads (others ignored).
#[derive(Deserialize)]
struct Line {
    stage: Option<u64>,
    input_len: Option<f64>,
    output_tokens_server: Option<f64>,
    output_tokens_client: Option<f64>,
    ttft_ms: Option<f64>,
    e2el_ms: Option<f64>,
    #[serde(default)]
    chunks_ms_tokens: Vec<(f64, f64)>,
    length_flag: Option<String>,
    finish_reason_missing: Option<bool>,
    error_kind: Option<String>,
}

/// Inter-token gaps as counts in logarithmic buckets 1 % wide, from 1 µs to 10^9 ms: a
/// quantile is read as the bucket's geometric middle, within 0.5 % of the exact value.
#[derive(Clone, Debug)]
pub struct LogSketch {
    /// Values ≤ [`LogSketch::MIN`] (zero gaps of coalesced reads included).
    zero: u64,
    buckets: Vec<u64>,
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
}

impl Default for LogSketch {
    fn default() -> Self {
        LogSketch::new()
    }
}

impl LogSketch {
    const GAMMA: f64 = 1.01;
    /// Smallest value told apart from zero, ms.
    pub const MIN: f64 = 1e-3;
    const BUCKETS: usize = 2777; // ln(1e12) / ln(1.01): 1e-3 .. 1e9 ms

    /// An empty sketch.
    pub fn new() -> LogSketch {
        LogSketch {
            zero: 0,
            buckets: vec![0; Self::BUCKETS + 1],
            count: 0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
        }
    }

    /// Adds one value; non-finite ones are ignored.
    pub fn add(&mut self, v: f64) {
        if !v.is_finite() {
            return;
        }
        self.count += 1;
        self.sum += v;
        self.min = self.min.min(v);
        self.max = self.max.max(v);
        if v <= Self::MIN {
            self.zero += 1;
            return;
        }
        let i = ((v / Self::MIN).ln() / Self::GAMMA.ln()).ceil();
        let i = (i.max(0.0) as usize).min(Self::BUCKETS);
        if let Some(b) = self.buckets.get_mut(i) {
            *b += 1;
        }
    }

    /// Values added.
    pub fn count(&self) -> u64 {
        self.count
    }

    /// The `p`-th percentile (nearest rank), `None` when empty or p is outside 0..=100.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.count == 0 || !(0.0..=100.0).contains(&p) {
            return None;
        }
        let rank = (p / 100.0 * (self.count - 1) as f64).round() as u64;
        if rank < self.zero {
            return Some(self.min.clamp(0.0, Self::MIN));
        }
        let mut seen = self.zero;
        for (i, n) in self.buckets.iter().enumerate() {
            seen += n;
            if rank < seen {
                let upper = Self::MIN * Self::GAMMA.powi(i as i32);
                let mid = upper * 2.0 / (1.0 + Self::GAMMA);
                return Some(mid.clamp(self.min, self.max));
            }
        }
        Some(self.max)
    }

    fn mean(&self) -> Option<f64> {
        (self.count > 0).then(|| self.sum / self.count as f64)
    }
}

/// What one pass over a per-request file found.
#[derive(Clone, Debug, Default)]
pub struct RequestsSummary {
    /// Lines read as requests.
    pub requests: u64,
    /// Requests per stage.
    pub stages: BTreeMap<u64, u64>,
    /// Requests without an error.
    pub ok: u64,
    /// Failed requests by failure kind (`unknown` when the line names none).
    pub failed: BTreeMap<String, u64>,
    /// `over_length` / `short_reply` counts.
    pub length_flags: BTreeMap<String, u64>,
    /// Streams that ended without a `finish_reason`.
    pub finish_reason_missing: u64,
    /// TTFT of each successful request, ms.
    pub ttft_ms: Vec<f64>,
    /// E2EL of each successful request, ms.
    pub e2el_ms: Vec<f64>,
    /// Prompt tokens of each request.
    pub input_tokens: Vec<f64>,
    /// Output tokens of each successful request (the server's count, else the client's).
    pub output_tokens: Vec<f64>,
    /// Inter-token gaps of successful requests, ms.
    pub itl_ms: LogSketch,
    /// The first [`MAX_WARNINGS`] skipped lines, `line N: why`.
    pub warnings: Vec<String>,
    /// Lines skipped in all.
    pub skipped: u64,
}

/// Reads every line of `input` once. Only a failing read is an error; bad lines are skipped
/// and counted.
pub fn summarise(mut input: impl BufRead) -> std::io::Result<RequestsSummary> {
    let mut s = RequestsSummary::default();
    let mut buf = Vec::new();
    let mut observed: Vec<(f64, f64)> = Vec::new();
    let mut line_no = 0u64;
    loop {
        buf.clear();
        if input.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        line_no += 1;
        if buf.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match serde_json::from_slice::<Line>(&buf) {
            Ok(l) => s.add(l, &mut observed),
            Err(e) => {
                s.skipped += 1;
                if s.warnings.len() < MAX_WARNINGS {
                    let msg = e.to_string();
                    let msg = msg.rfind(" at line ").map_or(&msg[..], |i| &msg[..i]);
                    s.warnings.push(format!(
                        "line {line_no}, column {}: {msg}, skipped",
                        e.column()
                    ));
                }
            }
        }
    }
    Ok(s)
}

impl RequestsSummary {
    fn add(&mut self, l: Line, observed: &mut Vec<(f64, f64)>) {
        self.requests += 1;
        *self.stages.entry(l.stage.unwrap_or(0)).or_default() += 1;
        if let Some(f) = l.length_flag {
            *self.length_flags.entry(f).or_default() += 1;
        }
        if l.finish_reason_missing == Some(true) {
            self.finish_reason_missing += 1;
        }
        if let Some(n) = l.input_len.filter(|n| n.is_finite()) {
            self.input_tokens.push(n);
        }
        if let Some(kind) = l.error_kind {
            *self.failed.entry(kind).or_default() += 1;
            return;
        }
        self.ok += 1;
        let push = |v: &mut Vec<f64>, x: Option<f64>| {
            if let Some(x) = x.filter(|x| x.is_finite()) {
                v.push(x);
            }
        };
        push(&mut self.ttft_ms, l.ttft_ms);
        push(&mut self.e2el_ms, l.e2el_ms);
        push(
            &mut self.output_tokens,
            l.output_tokens_server.or(l.output_tokens_client),
        );
        if l.ttft_ms.is_some() && l.e2el_ms.is_some() {
            gaps(&l.chunks_ms_tokens, observed, |g| self.itl_ms.add(g));
        }
    }

    /// The summary as printed under the file's name.
    pub fn describe(&mut self, path: &str) -> String {
        let mut s = String::new();
        let plural = |n: u64| if n == 1 { "" } else { "s" };
        let _ = writeln!(
            s,
            "{path}: benchlens per-request JSON Lines, {} request{} in {} stage{}",
            self.requests,
            plural(self.requests),
            self.stages.len(),
            plural(self.stages.len() as u64)
        );
        let failed: u64 = self.failed.values().sum();
        let _ = write!(s, "  outcomes: {} ok, {failed} failed", self.ok);
        if !self.failed.is_empty() {
            let kinds: Vec<String> = self
                .failed
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            let _ = write!(s, " ({})", kinds.join(", "));
        }
        s.push('\n');
        if !self.length_flags.is_empty() || self.finish_reason_missing > 0 {
            let mut flags: Vec<String> = self
                .length_flags
                .iter()
                .map(|(k, n)| format!("{k} {n}"))
                .collect();
            if self.finish_reason_missing > 0 {
                flags.push(format!(
                    "finish_reason_missing {}",
                    self.finish_reason_missing
                ));
            }
            let _ = writeln!(s, "  flags: {}", flags.join(", "));
        }
        let _ = writeln!(s, "  distributions (n, mean, p50, p90, p99, max):");
        for (name, v) in [
            ("ttft_ms", &mut self.ttft_ms),
            ("e2el_ms", &mut self.e2el_ms),
            ("input_tokens", &mut self.input_tokens),
            ("output_tokens", &mut self.output_tokens),
        ] {
            v.sort_by(f64::total_cmp);
            let mean = (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64);
            let ps = PERCENTILES.map(|p| percentile_sorted(v, p));
            line(
                &mut s,
                name,
                v.len() as u64,
                mean,
                ps,
                v.last().copied(),
                "",
            );
        }
        let sk = &self.itl_ms;
        let ps = PERCENTILES.map(|p| sk.percentile(p));
        let max = (sk.count() > 0).then_some(sk.max);
        line(
            &mut s,
            "itl_ms",
            sk.count(),
            sk.mean(),
            ps,
            max,
            " (percentiles within 0.5 %)",
        );
        if self.skipped > 0 {
            let _ = writeln!(s, "  warnings ({}):", self.skipped);
            for w in &self.warnings {
                let _ = writeln!(s, "    {w}");
            }
            let more = self.skipped.saturating_sub(self.warnings.len() as u64);
            if more > 0 {
                let _ = writeln!(s, "    … and {more} more lines skipped");
            }
        }
        s
    }
}

fn line(
    s: &mut String,
    name: &str,
    n: u64,
    mean: Option<f64>,
    ps: [Option<f64>; 3],
    max: Option<f64>,
    note: &str,
) {
    let f = |v: Option<f64>| v.map_or_else(|| "-".to_string(), crate::model::format_number);
    let _ = writeln!(
        s,
        "    {name}: {n}, {}, {}, {}, {}, {}{note}",
        f(mean.map(round3)),
        f(ps[0].map(round3)),
        f(ps[1].map(round3)),
        f(ps[2].map(round3)),
        f(max.map(round3))
    );
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// The inter-token gaps of one request from its `[ms, tokens]` chunks, as the load generator
/// counts them: a chunk stamped like the one before came in the same read, so its tokens join
/// that read (those of the first read join the next observed gap); each gap is shared by the
/// tokens of the read that ends it.
fn gaps(chunks: &[(f64, f64)], observed: &mut Vec<(f64, f64)>, mut each: impl FnMut(f64)) {
    observed.clear();
    let mut first_read_extra = 0.0;
    for &(at, tokens) in chunks {
        let k = tokens.max(1.0);
        let first_read = observed.len() == 1;
        match observed.last_mut() {
            Some(last) if last.0 == at && first_read => first_read_extra += k,
            Some(last) if last.0 == at => last.1 += k,
            _ => observed.push((at, k)),
        }
    }
    for (i, w) in observed.windows(2).enumerate() {
        let k = w[1].1 + if i == 0 { first_read_extra } else { 0.0 };
        if !(k.is_finite() && k >= 1.0) || k > 1e6 {
            continue;
        }
        let gap = (w[1].0 - w[0].0) / k;
        for _ in 0..k as u64 {
            each(gap);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sketch_percentiles_are_within_half_a_percent() {
        let mut sk = LogSketch::new();
        let values: Vec<f64> = (1..=10_000).map(|i| f64::from(i) * 0.37).collect();
        for v in &values {
            sk.add(*v);
        }
        for p in [1.0, 50.0, 90.0, 99.0, 100.0] {
            let exact = percentile_sorted(&values, p).unwrap_or(f64::NAN);
            let got = sk.percentile(p).unwrap_or(f64::NAN);
            assert!(
                (got - exact).abs() <= exact * 0.006,
                "p{p}: {got} vs {exact}"
            );
        }
        assert_eq!(sk.percentile(101.0), None);
        assert_eq!(LogSketch::new().percentile(50.0), None);
    }

    #[test]
    fn coalesced_chunks_share_the_next_gap() {
        let mut out = Vec::new();
        let mut scratch = Vec::new();
        // First token at 10 ms; a coalesced chunk in the first read; then 20 and 30 (two tokens).
        let chunks = [(10.0, 1.0), (10.0, 1.0), (20.0, 1.0), (30.0, 2.0)];
        gaps(&chunks, &mut scratch, |g| out.push(g));
        assert_eq!(out, vec![5.0, 5.0, 5.0, 5.0]);
    }

    #[test]
    fn lines_are_counted_and_bad_ones_named() {
        let text = concat!(
            r#"{"stage":0,"input_len":10,"output_tokens_server":3,"ttft_ms":5.0,"e2el_ms":25.0,"chunks_ms_tokens":[[5.0,1],[15.0,1],[25.0,1]],"error_kind":null}"#,
            "\n",
            r#"{"stage":0,"input_len":10,"ttft_ms":null,"e2el_ms":null,"chunks_ms_tokens":[],"error_kind":"http_503","length_flag":null}"#,
            "\n\n{\"stage\": \"x\"\n",
            r#"{"stage":1,"input_len":12,"output_tokens_client":2,"ttft_ms":7.0,"e2el_ms":17.0,"chunks_ms_tokens":[[7.0,1],[17.0,1]],"length_flag":"short_reply","finish_reason_missing":true}"#,
            "\n"
        );
        let mut s = summarise(text.as_bytes()).unwrap_or_default();
        assert_eq!(s.requests, 3);
        assert_eq!(s.ok, 2);
        assert_eq!(s.failed.get("http_503"), Some(&1));
        assert_eq!(s.skipped, 1);
        assert!(
            s.warnings[0].starts_with("line 4, column"),
            "{:?}",
            s.warnings
        );
        assert_eq!(s.itl_ms.count(), 3);
        let out = s.describe("r.requests.jsonl");
        assert!(out.contains("3 requests in 2 stages"), "{out}");
        assert!(
            out.contains("outcomes: 2 ok, 1 failed (http_503 1)"),
            "{out}"
        );
        assert!(
            out.contains("flags: short_reply 1, finish_reason_missing 1"),
            "{out}"
        );
        assert!(out.contains("ttft_ms: 2, 6, 6, 6.8, 6.98, 7"), "{out}");
        assert!(out.contains("output_tokens: 2, 2.5,"), "{out}");
    }

    #[test]
    fn detection_by_name_or_first_line() {
        assert!(is_requests_jsonl("a/x.requests.jsonl", b""));
        assert!(is_requests_jsonl(
            "x.jsonl",
            br#"{"stage":0,"chunks_ms_tokens":[]}"#
        ));
        assert!(!is_requests_jsonl("x.jsonl", br#"{"ttfts":[]}"#));
        assert!(!is_requests_jsonl(
            "x.json",
            br#"{"stage":0,"chunks_ms_tokens":[]}"#
        ));
    }
}
