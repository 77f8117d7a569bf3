//! Trace replay: arrival times and lengths from a production trace, in three public layouts.
//!
//! - Azure LLM inference trace (Azure/AzurePublicDataset, `AzureLLMInferenceTrace_*.csv`):
//!   `TIMESTAMP,ContextTokens,GeneratedTokens`, the time a date-time such as
//!   `2023-11-16 18:15:46.6805900`.
//! - BurstGPT (HPMLL/BurstGPT, `BurstGPT_*.csv`): `Timestamp,Model,Request tokens,Response
//!   tokens,Total tokens,Log Type`, the time in seconds (the third release adds `Session ID` and
//!   `Elapsed time` columns; columns are found by name). Rows with 0 response tokens are
//!   requests that failed in the original service and are skipped (counted in
//!   [`Trace::skipped`]).
//! - Mooncake (kvcache-ai/Mooncake, `FAST25-release/traces/*.jsonl`): one object a line with
//!   `timestamp` (milliseconds), `input_length`, `output_length` and `hash_ids`, the ids of the
//!   prompt's 512-token blocks: two requests with the same first ids share that prefix.
//!
//! Times are made relative to the first request and divided by `--trace-speed`; the sampler
//! keeps a seeded share of the requests (their times unchanged, so the rate scales with the
//! share) and/or the first N. Pure: the prompts themselves are written by
//! [`super::dataset::trace_prompts`].

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use thiserror::Error;

/// Tokens per Mooncake hash block (the trace's documented block size).
pub const MOONCAKE_BLOCK_TOKENS: u64 = 512;

/// The trace layouts read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TraceLayout {
    /// `TIMESTAMP,ContextTokens,GeneratedTokens`.
    Azure,
    /// `Timestamp,Model,Request tokens,Response tokens,…`.
    BurstGpt,
    /// JSON Lines with `timestamp`, `input_length`, `output_length`, `hash_ids`.
    Mooncake,
}

impl TraceLayout {
    /// The layout's name, as written in results.
    pub fn name(self) -> &'static str {
        match self {
            TraceLayout::Azure => "azure",
            TraceLayout::BurstGpt => "burstgpt",
            TraceLayout::Mooncake => "mooncake",
        }
    }
}

/// One request of a trace.
#[derive(Clone, Debug, PartialEq)]
pub struct TraceRequest {
    /// Arrival, seconds after the trace's first request (before speed scaling).
    pub at_s: f64,
    /// Prompt tokens.
    pub input_len: u64,
    /// Tokens generated.
    pub output_len: u64,
    /// Mooncake's prefix block ids (empty for the other layouts).
    pub hash_ids: Vec<u64>,
}

/// A trace read from a file.
#[derive(Clone, Debug, PartialEq)]
pub struct Trace {
    /// The layout recognised.
    pub layout: TraceLayout,
    /// Requests in arrival order.
    pub requests: Vec<TraceRequest>,
    /// Rows left out on purpose (BurstGPT's failed requests).
    pub skipped: usize,
}

/// Why a trace cannot be replayed (the caller names the file).
#[derive(Debug, Error)]
pub enum TraceError {
    /// Neither a known CSV header nor Mooncake JSON Lines.
    #[error(
        "not a known trace layout (Azure `TIMESTAMP,ContextTokens,GeneratedTokens`, BurstGPT \
         `Timestamp,…,Request tokens,Response tokens,…`, or Mooncake JSON Lines with \
         `timestamp`, `input_length`, `output_length`); the first line is {first_line:?}"
    )]
    Layout {
        /// Its first line, cut to 120 characters.
        first_line: String,
    },
    /// A line whose fields do not read.
    #[error("line {line}: {message}")]
    Line {
        /// 1-based line number.
        line: usize,
        /// What is wrong.
        message: String,
    },
    /// No request left to replay.
    #[error("no request to replay ({skipped} skipped)")]
    Empty {
        /// Rows skipped.
        skipped: usize,
    },
}

/// Parses a trace of any of the three layouts.
pub fn parse(text: &str) -> Result<Trace, TraceError> {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let first_trim = first.trim_start_matches('\u{feff}').trim();
    let trace = if first_trim.starts_with('{') {
        parse_mooncake(text)?
    } else {
        let header: Vec<String> = first_trim
            .split(',')
            .map(|h| h.trim().to_ascii_lowercase())
            .collect();
        let col = |name: &str| header.iter().position(|h| h == name);
        match (
            col("timestamp"),
            col("contexttokens"),
            col("generatedtokens"),
            col("request tokens"),
            col("response tokens"),
        ) {
            (Some(t), Some(i), Some(o), _, _) => parse_csv(text, TraceLayout::Azure, t, i, o)?,
            (Some(t), _, _, Some(i), Some(o)) => parse_csv(text, TraceLayout::BurstGpt, t, i, o)?,
            _ => {
                return Err(TraceError::Layout {
                    first_line: first.chars().take(120).collect(),
                })
            }
        }
    };
    if trace.requests.is_empty() {
        return Err(TraceError::Empty {
            skipped: trace.skipped,
        });
    }
    Ok(trace)
}

fn line_error(line: usize, message: impl Into<String>) -> TraceError {
    TraceError::Line {
        line,
        message: message.into(),
    }
}

fn parse_count(line: usize, what: &str, s: &str) -> Result<u64, TraceError> {
    let s = s.trim();
    s.parse::<u64>()
        .ok()
        .or_else(|| {
            // Some exports write counts as floats ("374.0").
            s.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0 && x.fract() == 0.0)
                .map(|x| x as u64)
        })
        .ok_or_else(|| line_error(line, format!("{what} {s:?} is not a token count")))
}

/// Seconds since the Unix epoch of an Azure time stamp `YYYY-MM-DD HH:MM:SS[.fraction]`
/// (the trace's clock; only differences matter).
fn azure_seconds(s: &str) -> Option<f64> {
    let s = s.trim();
    let (date, time) = s.split_once([' ', 'T'])?;
    let mut d = date.split('-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    if d.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&day) {
        return None;
    }
    let mut t = time.split(':');
    let (h, min, sec) = (
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<i64>().ok()?,
        t.next()?.parse::<f64>().ok()?,
    );
    if t.next().is_some()
        || !(0..24).contains(&h)
        || !(0..60).contains(&min)
        || !(0.0..61.0).contains(&sec)
    {
        return None;
    }
    let days = crate::model::civil::days_from_civil(y, m, day);
    Some((days * 86_400 + h * 3600 + min * 60) as f64 + sec)
}

fn parse_csv(
    text: &str,
    layout: TraceLayout,
    t_col: usize,
    in_col: usize,
    out_col: usize,
) -> Result<Trace, TraceError> {
    let mut reader = csv::ReaderBuilder::new()
        .has_headers(true)
        .flexible(true)
        .from_reader(text.as_bytes());
    let mut raw: Vec<(f64, u64, u64)> = Vec::new();
    let mut skipped = 0;
    for row in reader.records() {
        let row = row.map_err(|e| {
            let line = e.position().map_or(0, |p| p.line() as usize);
            line_error(line, e.to_string())
        })?;
        let line = row.position().map_or(0, |p| p.line() as usize);
        if row.iter().all(|f| f.trim().is_empty()) {
            continue;
        }
        let field = |i: usize, what: &str| {
            row.get(i)
                .ok_or_else(|| line_error(line, format!("no {what} column")))
        };
        let ts = field(t_col, "time")?;
        let at = match layout {
            TraceLayout::Azure => azure_seconds(ts),
            _ => ts.trim().parse::<f64>().ok().filter(|x| x.is_finite()),
        }
        .ok_or_else(|| line_error(line, format!("time {ts:?} does not read")))?;
        let input = parse_count(line, "input length", field(in_col, "input length")?)?;
        let output = parse_count(line, "output length", field(out_col, "output length")?)?;
        if layout == TraceLayout::BurstGpt && output == 0 {
            skipped += 1;
            continue;
        }
        raw.push((at, input, output));
    }
    Ok(finish(
        layout,
        raw.into_iter().map(|(at, i, o)| (at, i, o, Vec::new())),
        skipped,
    ))
}

fn parse_mooncake(text: &str) -> Result<Trace, TraceError> {
    #[derive(serde::Deserialize)]
    struct Line {
        timestamp: f64,
        input_length: u64,
        output_length: u64,
        #[serde(default)]
        hash_ids: Vec<u64>,
    }
    let mut raw = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let l: Line = serde_json::from_str(line).map_err(|e| line_error(i + 1, e.to_string()))?;
        if !l.timestamp.is_finite() {
            return Err(line_error(i + 1, "timestamp is not a finite number"));
        }
        raw.push((
            l.timestamp / 1000.0,
            l.input_length,
            l.output_length,
            l.hash_ids,
        ));
    }
    Ok(finish(TraceLayout::Mooncake, raw.into_iter(), 0))
}

/// Sorts by time (stable: equal times keep file order) and makes times relative to the first.
fn finish(
    layout: TraceLayout,
    raw: impl Iterator<Item = (f64, u64, u64, Vec<u64>)>,
    skipped: usize,
) -> Trace {
    let mut requests: Vec<TraceRequest> = raw
        .map(|(at_s, input_len, output_len, hash_ids)| TraceRequest {
            at_s,
            input_len,
            output_len,
            hash_ids,
        })
        .collect();
    requests.sort_by(|a, b| a.at_s.total_cmp(&b.at_s));
    let t0 = requests.first().map_or(0.0, |r| r.at_s);
    for r in &mut requests {
        r.at_s -= t0;
    }
    Trace {
        layout,
        requests,
        skipped,
    }
}

/// How much of a trace to replay, and how fast.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sampling {
    /// Time is divided by this (2 = twice as fast).
    pub speed: f64,
    /// Seeded share of the requests kept, 0 < share ≤ 1.
    pub share: f64,
    /// Keep at most this many (after the share), from the start.
    pub limit: Option<usize>,
    /// Seed of the share.
    pub seed: u64,
}

/// The requests to replay: a seeded `share` of the trace (each kept with that probability,
/// times unchanged, so the rate scales with the share), at most `limit` of them, times divided
/// by `speed` and made relative to the first kept request.
pub fn sample(trace: &Trace, s: Sampling) -> Vec<TraceRequest> {
    let mut rng = StdRng::seed_from_u64(s.seed);
    let mut out: Vec<TraceRequest> = trace
        .requests
        .iter()
        .filter(|_| s.share >= 1.0 || rng.random_bool(s.share.clamp(0.0, 1.0)))
        .take(s.limit.unwrap_or(usize::MAX))
        .cloned()
        .collect();
    let t0 = out.first().map_or(0.0, |r| r.at_s);
    for r in &mut out {
        r.at_s = (r.at_s - t0) / s.speed;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn azure_times_are_seconds_apart() {
        let t = parse(
            "TIMESTAMP,ContextTokens,GeneratedTokens\n\
             2023-11-16 18:15:46.6805900,374,44\n\
             2023-11-16 18:15:50.9951690,396,109\n\
             2023-11-17 00:00:00.0000000,1,1\n",
        )
        .unwrap();
        assert_eq!(t.layout, TraceLayout::Azure);
        let at: Vec<f64> = t
            .requests
            .iter()
            // Epoch seconds carry about 0.2 µs of rounding: compare to the microsecond.
            .map(|r| (r.at_s * 1e6).round() / 1e6)
            .collect();
        // 18:15:46.68059 to midnight is 5 h 44 min 13.31941 s.
        assert_eq!(at, vec![0.0, 4.314_579, 20_653.319_41]);
        assert_eq!(
            (t.requests[1].input_len, t.requests[1].output_len),
            (396, 109)
        );
    }

    #[test]
    fn azure_dates_cross_month_and_year_ends() {
        let a = azure_seconds("2023-12-31 23:59:59").unwrap();
        let b = azure_seconds("2024-01-01 00:00:01").unwrap();
        assert_eq!(b - a, 2.0);
        let c = azure_seconds("2024-02-28 12:00:00").unwrap();
        let d = azure_seconds("2024-03-01 12:00:00").unwrap();
        assert_eq!(d - c, 2.0 * 86_400.0, "2024 is a leap year");
        assert_eq!(azure_seconds("1970-01-01 00:00:00"), Some(0.0));
        assert_eq!(azure_seconds("2023-13-01 00:00:00"), None);
        assert_eq!(azure_seconds("yesterday"), None);
    }

    #[test]
    fn burstgpt_skips_failed_requests_and_finds_columns_by_name() {
        let t = parse(
            "Timestamp,Session ID,Elapsed time,Model,Request tokens,Response tokens,Total tokens,Log Type\n\
             5,a,1,ChatGPT,472,18,490,Conversation log\n\
             45,b,1,ChatGPT,1087,230,1317,Conversation log\n\
             50,c,1,GPT-4,300,0,300,API log\n\
             118,d,1,GPT-4,417,276,693,Conversation log\n",
        )
        .unwrap();
        assert_eq!(t.layout, TraceLayout::BurstGpt);
        assert_eq!(t.skipped, 1);
        let got: Vec<(f64, u64, u64)> = t
            .requests
            .iter()
            .map(|r| (r.at_s, r.input_len, r.output_len))
            .collect();
        assert_eq!(
            got,
            vec![(0.0, 472, 18), (40.0, 1087, 230), (113.0, 417, 276)]
        );
    }

    #[test]
    fn mooncake_keeps_hash_ids_and_reads_milliseconds() {
        let t = parse(
            "{\"timestamp\": 3000, \"input_length\": 915, \"output_length\": 355, \"hash_ids\": [0, 462]}\n\
             {\"timestamp\": 0, \"input_length\": 6758, \"output_length\": 500, \"hash_ids\": [0, 1, 2]}\n",
        )
        .unwrap();
        assert_eq!(t.layout, TraceLayout::Mooncake);
        assert_eq!(t.requests[0].hash_ids, vec![0, 1, 2]);
        assert_eq!(t.requests[1].at_s, 3.0);
    }

    #[test]
    fn bad_traces_name_the_line() {
        let e = parse("a,b,c\n1,2,3\n").unwrap_err().to_string();
        assert!(e.starts_with("not a known trace layout"), "{e}");
        assert!(e.ends_with("the first line is \"a,b,c\""), "{e}");
        let e = parse("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:15:46,x,4\n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "line 2: input length \"x\" is not a token count");
        let e = parse("TIMESTAMP,ContextTokens,GeneratedTokens\nnoon,1,4\n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "line 2: time \"noon\" does not read");
        let e = parse(
            "{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 2}\n{\"timestamp\": 1}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("line 2: missing field"), "{e}");
        let e = parse("Timestamp,Model,Request tokens,Response tokens\n1,x,5,0\n")
            .unwrap_err()
            .to_string();
        assert_eq!(e, "no request to replay (1 skipped)");
        assert!(matches!(parse(""), Err(TraceError::Layout { .. })));
    }

    #[test]
    fn sampling_scales_time_and_keeps_a_seeded_share() {
        let trace = Trace {
            layout: TraceLayout::BurstGpt,
            requests: (0..1000)
                .map(|i| TraceRequest {
                    at_s: f64::from(i),
                    input_len: 1,
                    output_len: 1,
                    hash_ids: vec![],
                })
                .collect(),
            skipped: 0,
        };
        let all = sample(
            &trace,
            Sampling {
                speed: 4.0,
                share: 1.0,
                limit: Some(3),
                seed: 0,
            },
        );
        let at: Vec<f64> = all.iter().map(|r| r.at_s).collect();
        assert_eq!(at, vec![0.0, 0.25, 0.5]);
        let s = Sampling {
            speed: 1.0,
            share: 0.25,
            limit: None,
            seed: 9,
        };
        let a = sample(&trace, s);
        assert_eq!(a, sample(&trace, s), "seeded");
        assert!((200..300).contains(&a.len()), "{}", a.len());
        assert_eq!(a[0].at_s, 0.0);
    }
}
