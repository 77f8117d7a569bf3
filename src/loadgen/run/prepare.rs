//! Checks `benchlens run`'s options before anything is sent: rates, concurrencies, percentiles,
//! timeouts, `--extra-body`, `--tag`, `--goodput` and `--header`, each refusal naming its option
//! ([`LoadgenError::InvalidOption`]).

use std::collections::BTreeMap;
use std::time::Duration;

use hyper::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};

use super::opts::{DatasetKind, Rate, RunOpts};
use crate::loadgen::client::Timeouts;
use crate::loadgen::measure::Slo;
use crate::loadgen::schedule::{Ramp, RampStrategy};
use crate::loadgen::LoadgenError;

pub(super) fn invalid(option: &'static str, message: impl Into<String>) -> LoadgenError {
    LoadgenError::InvalidOption {
        option,
        message: message.into(),
    }
}

/// An option refused by a parser with its own error, kept as the source.
fn invalid_value(
    option: &'static str,
    source: impl std::error::Error + Send + Sync + 'static,
) -> LoadgenError {
    LoadgenError::InvalidOptionValue {
        option,
        source: Box::new(source),
    }
}

/// The rates of the stages (`inf` when none is given).
fn rates_of(items: &[Rate]) -> Vec<f64> {
    match items {
        [] => vec![f64::INFINITY],
        _ => items.iter().map(|r| r.0).collect(),
    }
}

fn parse_pairs(
    items: &[String],
    option: &'static str,
) -> Result<Vec<(String, String)>, LoadgenError> {
    items
        .iter()
        .map(|s| {
            s.split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .map(|(k, v)| (k.trim().to_string(), v.to_string()))
                .ok_or_else(|| invalid(option, format!("{s:?} is not K=V")))
        })
        .collect()
}

/// One `--header`: `Name: value` or `Name=value` (whichever separator comes first: neither can
/// be part of a header name). Surrounding spaces are trimmed; the value may be empty.
pub fn parse_header(s: &str) -> Result<(HeaderName, HeaderValue), LoadgenError> {
    let bad = |why: String| {
        invalid(
            "header",
            format!("{s:?}: {why} (expected `Name: value` or `Name=value`)"),
        )
    };
    let Some(i) = s.find([':', '=']) else {
        return Err(bad("no `:` or `=`".into()));
    };
    let (name, value) = (s[..i].trim(), s[i + 1..].trim());
    if name.is_empty() {
        return Err(bad("no header name".into()));
    }
    let name = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| bad(format!("{name:?} is not a valid header name")))?;
    let value = HeaderValue::from_str(value).map_err(|_| {
        bad(format!(
            "the value of {name} has characters not allowed in a header"
        ))
    })?;
    Ok((name, value))
}

pub(super) fn headers(opts: &RunOpts) -> Result<Vec<(HeaderName, HeaderValue)>, LoadgenError> {
    let given = opts
        .headers
        .iter()
        .map(|h| parse_header(h))
        .collect::<Result<Vec<_>, _>>()?;
    let mut out = Vec::new();
    let key = opts
        .api_key
        .clone()
        .or_else(|| std::env::var("OPENAI_API_KEY").ok())
        .filter(|k| !k.is_empty());
    // An explicit `--header Authorization: ...` wins over the API key.
    if let Some(key) = key.filter(|_| !given.iter().any(|(k, _)| k == hyper::header::AUTHORIZATION))
    {
        let v = HeaderValue::from_str(&format!("Bearer {key}"))
            .map_err(|_| invalid("api-key", "contains characters not allowed in a header"))?;
        out.push((hyper::header::AUTHORIZATION, v));
    }
    out.extend(given);
    Ok(out)
}

fn secs(v: f64, option: &'static str) -> Result<Duration, LoadgenError> {
    Duration::try_from_secs_f64(v)
        .map_err(|_| invalid(option, format!("{v} is not a number of seconds")))
}

/// A timeout option: `None` or `0` means none.
fn opt_secs(v: Option<f64>, option: &'static str) -> Result<Option<Duration>, LoadgenError> {
    v.filter(|v| *v != 0.0).map(|v| secs(v, option)).transpose()
}

/// The options once checked, in the forms the pipeline uses.
pub(super) struct Prepared {
    /// One stage per rate (req/s, infinite for `inf`) ...
    pub(super) rates: Vec<f64>,
    /// `--ramp-up-*`: the rate grows over each stage instead.
    pub(super) ramp: Option<Ramp>,
    /// ... times one per concurrency cap (`None`: no cap).
    pub(super) concurrencies: Vec<Option<u64>>,
    /// `--goodput`'s objectives.
    pub(super) slo: Option<Slo>,
    /// `--extra-body`, a JSON object merged into every request body.
    pub(super) extra: Option<Map<String, Value>>,
    /// `--tag` pairs plus the run's own metadata (version, command line, seed).
    pub(super) tags: BTreeMap<String, String>,
    /// The request timeouts.
    pub(super) timeouts: Timeouts,
}

/// `--ramp-up-strategy` with its two rates, checked (clap makes them come together).
fn parse_ramp(opts: &RunOpts) -> Result<Option<Ramp>, LoadgenError> {
    let (Some(strategy), Some(start_rps), Some(end_rps)) = (
        opts.ramp_up_strategy,
        opts.ramp_up_start_rps,
        opts.ramp_up_end_rps,
    ) else {
        return Ok(None);
    };
    let ok = |x: f64| x.is_finite() && x >= 0.0;
    if !(ok(start_rps) && ok(end_rps) && end_rps > 0.0) {
        return Err(invalid(
            "ramp-up-end-rps",
            "the ramp's rates must be finite, at least 0, and the end above 0",
        ));
    }
    if strategy == RampStrategy::Exponential && start_rps <= 0.0 {
        return Err(invalid(
            "ramp-up-start-rps",
            "an exponential ramp must start above 0",
        ));
    }
    if opts.request_rate != [Rate::INF] {
        return Err(invalid(
            "request-rate",
            "a ramp sets the rate: give --ramp-up-start-rps and --ramp-up-end-rps only",
        ));
    }
    Ok(Some(Ramp {
        strategy,
        start_rps,
        end_rps,
    }))
}

pub(super) fn prepare(opts: &RunOpts) -> Result<Prepared, LoadgenError> {
    let rates = rates_of(&opts.request_rate);
    let ramp = parse_ramp(opts)?;
    if !(opts.burstiness > 0.0 && opts.burstiness.is_finite()) {
        return Err(invalid(
            "burstiness",
            format!("{} must be a positive number", opts.burstiness),
        ));
    }
    // The command line refuses 0; sweep makes its probes' options without it.
    if opts.max_concurrency.contains(&0) {
        return Err(invalid("max-concurrency", "must be at least 1"));
    }
    let concurrencies = if opts.max_concurrency.is_empty() {
        vec![None]
    } else {
        opts.max_concurrency.iter().map(|c| Some(*c)).collect()
    };
    if let Some(p) = opts
        .percentiles
        .iter()
        .find(|p| !(0.0..=100.0).contains(*p))
    {
        return Err(invalid(
            "percentiles",
            format!("{p} is not between 0 and 100"),
        ));
    }
    if !(0.0..1.0).contains(&opts.range_ratio) {
        return Err(invalid("range-ratio", "must be in [0, 1)"));
    }
    if let Some(d) = opts.duration {
        secs(d, "duration")?;
        // A ramp or a trace makes its own schedule.
        let scheduled = ramp.is_some() || opts.dataset == DatasetKind::Trace;
        if !scheduled && rates.iter().any(|r| r.is_infinite()) && concurrencies.contains(&None) {
            return Err(invalid(
                "duration",
                "an infinite request rate for a duration needs --max-concurrency",
            ));
        }
    } else if opts.num_prompts == 0 {
        return Err(invalid("num-prompts", "must be at least 1"));
    }
    let slo = Slo::from_objectives(opts.objectives()).map_err(|e| invalid_value("goodput", e))?;
    if let Some(p) = opts.fail_on_error.filter(|p| !(0.0..=100.0).contains(p)) {
        return Err(invalid(
            "fail-on-error",
            format!("{p} is not a percentage between 0 and 100"),
        ));
    }
    let extra = match &opts.extra_body {
        None => None,
        Some(text) => match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(m)) => Some(m),
            Ok(_) => return Err(invalid("extra-body", "must be a JSON object")),
            Err(e) => return Err(invalid_value("extra-body", e)),
        },
    };
    let mut tags: BTreeMap<String, String> = parse_pairs(&opts.tags, "tag")?.into_iter().collect();
    tags.insert(
        crate::model::provenance::VERSION_TAG.into(),
        crate::VERSION.into(),
    );
    tags.insert(
        crate::model::provenance::COMMIT_TAG.into(),
        crate::COMMIT.into(),
    );
    tags.insert(
        "command_line".into(),
        std::env::args().collect::<Vec<_>>().join(" "),
    );
    tags.insert("seed".into(), opts.seed.to_string());
    if let Some(r) = ramp {
        let name = match r.strategy {
            RampStrategy::Linear => "linear",
            RampStrategy::Exponential => "exponential",
        };
        tags.insert("ramp_up_strategy".into(), name.into());
        tags.insert("ramp_up_start_rps".into(), r.start_rps.to_string());
        tags.insert("ramp_up_end_rps".into(), r.end_rps.to_string());
    }
    let timeouts = Timeouts {
        connect: opt_secs(Some(opts.connect_timeout), "connect-timeout")?,
        first_token: opt_secs(opts.first_token_timeout, "first-token-timeout")?,
        idle: opt_secs(opts.idle_timeout, "idle-timeout")?,
        total: opt_secs(opts.request_timeout, "request-timeout")?,
    };
    Ok(Prepared {
        rates,
        ramp,
        concurrencies,
        slo,
        extra,
        tags,
        timeouts,
    })
}

/// The run fingerprint a shard records (`tag.run_fingerprint`, a JSON object): the options
/// that decide which requests are sent, when and how (the server's model and address, the
/// prompts, the schedule, the seed, the number of shards), and none that only name or place
/// the files (`--shard`'s index, `--result-filename`, labels). Shards of one run have equal
/// fingerprints; `benchlens merge` names the first field in which two differ.
pub(super) fn run_fingerprint(
    opts: &RunOpts,
    model: &str,
    server: &str,
    endpoint: &str,
) -> BTreeMap<&'static str, String> {
    let opt = |v: Option<String>| v.unwrap_or_default();
    BTreeMap::from([
        ("model", model.to_string()),
        ("backend", opts.backend.name().to_string()),
        ("server_url", server.to_string()),
        ("endpoint", endpoint.to_string()),
        ("dataset", format!("{:?}", opts.dataset).to_lowercase()),
        (
            "dataset_path",
            opt(opts.dataset_path.as_ref().map(|p| p.display().to_string())),
        ),
        ("trace_speed", opts.trace_speed.to_string()),
        ("trace_sample", opts.trace_sample.to_string()),
        ("input_len", opts.input_len.to_string()),
        ("output_len", opt(opts.output_len.map(|n| n.to_string()))),
        ("range_ratio", opts.range_ratio.to_string()),
        ("prefix_len", opts.prefix_len.to_string()),
        ("prefix_groups", opts.prefix_groups.to_string()),
        (
            "prefix_order",
            format!("{:?}", opts.prefix_order).to_lowercase(),
        ),
        ("tokenizer", opts.tokenizer.clone()),
        ("ignore_eos", opts.ignore_eos.to_string()),
        ("extra_body", opt(opts.extra_body.clone())),
        (
            "request_rate",
            opts.request_rate
                .iter()
                .map(Rate::to_string)
                .collect::<Vec<_>>()
                .join(","),
        ),
        ("burstiness", opts.burstiness.to_string()),
        (
            "ramp_up",
            opt(opts.ramp_up_strategy.map(|s| {
                format!(
                    "{s:?}:{}:{}",
                    opt(opts.ramp_up_start_rps.map(|r| r.to_string())),
                    opt(opts.ramp_up_end_rps.map(|r| r.to_string()))
                )
            })),
        ),
        (
            "max_concurrency",
            opts.max_concurrency
                .iter()
                .map(u64::to_string)
                .collect::<Vec<_>>()
                .join(","),
        ),
        ("num_prompts", opts.num_prompts.to_string()),
        ("duration", opt(opts.duration.map(|d| d.to_string()))),
        ("warmup", opts.warmup.to_string()),
        ("seed", opts.seed.to_string()),
        ("shards", opt(opts.shard.map(|s| s.count.to_string()))),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_of_one_run_share_a_fingerprint() {
        let base = RunOpts {
            shard: "0/4".parse().ok(),
            result_filename: Some("s0.json".into()),
            ..RunOpts::default()
        };
        let other = RunOpts {
            shard: "3/4".parse().ok(),
            result_filename: Some("s3.json".into()),
            label: Some("x".into()),
            ..RunOpts::default()
        };
        let f = |o: &RunOpts| run_fingerprint(o, "m", "http://h:1", "/v1/completions");
        assert_eq!(f(&base), f(&other));
        let longer = RunOpts {
            input_len: 2048,
            ..base.clone()
        };
        let differ: Vec<&str> = f(&base)
            .iter()
            .filter(|(k, v)| f(&longer).get(*k) != Some(v))
            .map(|(k, _)| *k)
            .collect();
        assert_eq!(differ, vec!["input_len"]);
        let reseeded = RunOpts {
            seed: 9,
            ..base.clone()
        };
        assert_eq!(f(&reseeded)["seed"], "9");
        assert_eq!(f(&base)["shards"], "4");
    }
    use crate::loadgen::client::Timeouts;

    #[test]
    fn defaults_parse_and_options_are_checked() {
        let o = RunOpts::default();
        assert_eq!(o.num_prompts, 1000);
        assert_eq!(o.percentiles, vec![50.0, 90.0, 95.0, 99.0]);
        assert!(prepare(&o).is_ok());
        let bad = |f: &dyn Fn(&mut RunOpts)| {
            let mut o = RunOpts::default();
            f(&mut o);
            // As the command line prints it: the error and its sources.
            prepare(&o)
                .err()
                .map(|e| format!("{:#}", anyhow::Error::from(e)))
                .unwrap_or_default()
        };
        // A rate is checked where the command line is parsed.
        assert_eq!(
            "fast".parse::<Rate>(),
            Err("\"fast\" is not a positive number or inf".to_string())
        );
        for bad_rate in ["0", "-2", "NaN", "infinity", ""] {
            assert!(bad_rate.parse::<Rate>().is_err(), "{bad_rate}");
        }
        assert_eq!(" INF ".parse::<Rate>(), Ok(Rate::INF));
        assert_eq!(
            "12.5".parse::<Rate>().map(|r| r.to_string()),
            Ok("12.5".into())
        );
        assert!(bad(&|o| o.burstiness = 0.0).contains("--burstiness"));
        assert!(bad(&|o| o.duration = Some(5.0)).contains("--max-concurrency"));
        assert!(bad(&|o| o.extra_body = Some("[1]".into())).contains("--extra-body"));
        assert!(bad(&|o| o.tags = vec!["novalue".into()]).contains("--tag"));
        // Objectives are read where the command line is parsed, the error naming the flag;
        // those `run` does not take (a percentile is sweep's) are refused here.
        let parsed = |args: &[&str]| {
            use clap::Parser;
            #[derive(Parser)]
            struct Wrap {
                #[command(flatten)]
                opts: RunOpts,
            }
            Wrap::try_parse_from(std::iter::once("run").chain(args.iter().copied()))
                .map(|w| w.opts)
                .map_err(|e| e.to_string())
        };
        let refused = parsed(&["--goodput", "ttft:5", "ttft"])
            .err()
            .unwrap_or_default();
        assert!(
            refused.contains("--goodput") && refused.contains("\"ttft\" is not NAME:LIMIT"),
            "{refused}"
        );
        let refused = parsed(&["--max-concurrency", "4,0"])
            .err()
            .unwrap_or_default();
        assert!(refused.contains("--max-concurrency"), "{refused}");
        let o = parsed(&["--goodput", "ttft:500 e2el_ms<=900", "tpot:5"]).unwrap();
        assert_eq!(
            o.objectives().map(ToString::to_string).collect::<Vec<_>>(),
            ["ttft:500", "e2el:900", "tpot:5"]
        );
        assert_eq!(
            bad(&|o| o.goodput = vec!["p99_ttft:500".parse().unwrap()]),
            "invalid --goodput: \"p99_ttft:500\": run's goodput counts the requests within every \
             bound, as vLLM's: ttft, tpot and e2el (stage percentiles such as p99_ttft are sweep's)"
        );
        let refused = parsed(&["--percentile-metrics", "ttft,p99"])
            .err()
            .unwrap_or_default();
        assert!(
            refused.contains("--percentile-metrics")
                && refused.contains(
                    "\"p99\" is not one of ttft, tpot, itl, e2el, \
                                     client_queue_time, e2el_including_client_queue"
                ),
            "{refused}"
        );
        let o = parsed(&["--percentile-metrics", "e2el, ttft"]).unwrap();
        assert_eq!(o.percentile_metrics.len(), 2);
        assert_eq!(RunOpts::default().percentile_metrics.len(), 3);
        assert!(bad(&|o| o.extra_body = Some("{".into()))
            .starts_with("invalid --extra-body: EOF while parsing an object"));
        assert_eq!(rates_of(&[Rate(1.0), Rate::INF]), vec![1.0, f64::INFINITY]);
        assert_eq!(rates_of(&[]), vec![f64::INFINITY]);
    }

    #[test]
    fn nothing_waits_forever_by_default_and_zero_means_none() {
        let s = Duration::from_secs;
        let t = prepare(&RunOpts::default()).unwrap().timeouts;
        assert_eq!(
            (t.connect, t.first_token, t.idle, t.total),
            (Some(s(10)), Some(s(600)), Some(s(60)), None)
        );
        let mut o = RunOpts::default();
        (o.connect_timeout, o.first_token_timeout, o.idle_timeout) = (0.0, Some(0.0), Some(0.0));
        o.request_timeout = Some(0.0);
        let t = prepare(&o).unwrap().timeouts;
        assert_eq!(t, Timeouts::default());
    }
}
