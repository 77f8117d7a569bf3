//! `benchlens run`: the options ([`RunOpts`]) and the pipeline that turns them into stages,
//! drives each stage's schedule through the client, measures, prints vLLM's summary and writes
//! the result files after every stage (so an interrupted run keeps what it measured, marked
//! partial). Must not import app code.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use hyper::header::{HeaderName, HeaderValue};
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio::time::Instant;

use super::body::{request_body, Sampling};
use super::client::{Backend, Client, Timeouts, Transport};
use super::dataset::{self, Prompt, RandomSpec};
use super::measure::{compute, Slo, StageMetrics};
use super::mock::{MockOpts, MockServer};
use super::record::{Failure, FailureKind, RequestRecord};
use super::report::{self, PercentileMetric, StageInfo, SummaryView};
use super::schedule::{arrivals, drive, stop_requested, Arrivals, StageSize};
use super::target::Target;
use super::tokenizer::Tokenizer;
use super::LoadgenError;
use crate::model::Record;

/// Where prompts come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum DatasetKind {
    /// Random words of the asked lengths (vLLM's random dataset).
    Random,
    /// JSON Lines with `prompt` and optional `output_len` per line (vLLM's `custom`).
    #[value(alias = "custom")]
    Jsonl,
    /// A ShareGPT conversations file.
    Sharegpt,
}

/// Options of `benchlens run`.
#[derive(Clone, Debug, clap::Args)]
pub struct RunOpts {
    /// API the server speaks.
    #[arg(long, value_enum, default_value = "openai")]
    pub backend: Backend,
    /// Server address, `http://host:port` or `https://host:port` (an optional path prefix is
    /// kept).
    #[arg(long, default_value = "http://127.0.0.1:8000")]
    pub base_url: String,
    /// Server host, as vLLM's `--host` (makes `http://HOST:PORT` when `--base-url` is not given).
    #[arg(long, conflicts_with = "base_url")]
    pub host: Option<String>,
    /// Server port, as vLLM's `--port` (with `--host`, default 127.0.0.1).
    #[arg(long, conflicts_with = "base_url")]
    pub port: Option<u16>,
    /// Speak HTTP/2: negotiated with ALPN `h2` over https://, prior knowledge (h2c) over
    /// http://. Up to 100 concurrent streams share one connection.
    #[arg(long)]
    pub http2: bool,
    /// HTTPS: accept any server certificate (self-signed development servers).
    #[arg(long, conflicts_with = "ca_cert")]
    pub insecure: bool,
    /// HTTPS: trust the CA certificate(s) in this PEM file instead of the built-in (Mozilla)
    /// and system roots.
    #[arg(long, value_name = "FILE")]
    pub ca_cert: Option<PathBuf>,
    /// Request path (default: `/v1/completions`, `/v1/chat/completions`, `/generate_stream` or
    /// `/generate` by backend).
    #[arg(long)]
    pub endpoint: Option<String>,
    /// Model name sent in requests (default: the first id listed by `/v1/models`, which must
    /// answer within 30 seconds).
    #[arg(long)]
    pub model: Option<String>,
    /// API key sent as `Authorization: Bearer` (default: the `OPENAI_API_KEY` environment variable).
    #[arg(long)]
    pub api_key: Option<String>,
    /// Extra request header, `Name: value` (as curl) or `Name=value`; repeatable, a repeated
    /// name sends every value. Replaces a default header of the same name (`Content-Type`,
    /// `Authorization` from `--api-key`).
    #[arg(long = "header", value_name = "NAME: VALUE", num_args = 1..)]
    pub headers: Vec<String>,
    /// JSON object applied to every request body as a JSON Merge Patch (RFC 7396): its keys add
    /// or replace, nested objects merge, and `null` removes a key, e.g.
    /// `{"stream_options": {"continuous_usage_stats": null}}` for a server that rejects it, or
    /// `{"max_tokens": null}` to send only `max_completion_tokens` to a chat endpoint.
    #[arg(long, value_name = "JSON")]
    pub extra_body: Option<String>,
    /// Start the built-in mock server in-process and benchmark it (no GPU needed).
    #[arg(long)]
    pub mock: bool,
    /// With `--mock`: the mock's time to first token, milliseconds.
    #[arg(long, default_value_t = 50.0, requires = "mock")]
    pub mock_ttft_ms: f64,
    /// With `--mock`: the mock's time between tokens, milliseconds.
    #[arg(long, default_value_t = 5.0, requires = "mock")]
    pub mock_itl_ms: f64,
    /// With `--mock`: the mock's continuous-batching limit (see `benchlens mock --max-batch`).
    #[arg(long, requires = "mock")]
    pub mock_max_batch: Option<u32>,

    /// Requests per second, a number or `inf`; a comma list runs one stage per value.
    #[arg(long, value_delimiter = ',', default_value = "inf")]
    pub request_rate: Vec<String>,
    /// Burstiness of arrivals: gamma shape (1 = Poisson, lower = burstier).
    #[arg(long, default_value_t = 1.0)]
    pub burstiness: f64,
    /// Most requests in flight; a comma list multiplies the stages.
    #[arg(long, value_delimiter = ',')]
    pub max_concurrency: Vec<u64>,
    /// Requests per stage.
    #[arg(long, default_value_t = 1000)]
    pub num_prompts: u64,
    /// Seconds per stage instead of a number of requests.
    #[arg(long, value_name = "SECONDS")]
    pub duration: Option<f64>,
    /// Requests sent (and not measured) before the first stage.
    #[arg(long, visible_alias = "num-warmups", default_value_t = 0)]
    pub warmup: u64,
    /// Seed of the arrival schedules and random prompts.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Where prompts come from.
    #[arg(
        long,
        visible_alias = "dataset-name",
        value_enum,
        default_value = "random"
    )]
    pub dataset: DatasetKind,
    /// File for `--dataset jsonl` / `sharegpt`.
    #[arg(long)]
    pub dataset_path: Option<PathBuf>,
    /// Input tokens per random prompt.
    #[arg(long, visible_alias = "random-input-len", default_value_t = 1024)]
    pub input_len: u64,
    /// Output tokens per request (random dataset; overrides ShareGPT reply lengths when given there).
    #[arg(
        long,
        visible_alias = "random-output-len",
        alias = "sharegpt-output-len",
        alias = "custom-output-len"
    )]
    pub output_len: Option<u64>,
    /// Random lengths vary uniformly within ±ratio of the asked length.
    #[arg(long, alias = "random-range-ratio", default_value_t = 0.0)]
    pub range_ratio: f64,
    /// Tokens of a prefix shared by all random prompts.
    #[arg(long, alias = "random-prefix-len", default_value_t = 0)]
    pub prefix_len: u64,
    /// Tokenizer for prompt lengths: a local Hugging Face `tokenizer.json`, `cl100k_base` or
    /// `o200k_base` (BPE ranks built into the binary) or `words` (whitespace-separated words,
    /// as the mock counts). Prompts count the special tokens the tokenizer adds (a BOS), as
    /// vLLM does; generated text does not.
    #[arg(long, default_value = "cl100k_base")]
    pub tokenizer: String,
    /// Ask the server to ignore end-of-sequence so every request generates its full length
    /// (without it, no `ignore_eos` key is sent). `openai`/`openai-chat`: `"ignore_eos": true`,
    /// read by vLLM, SGLang, llama.cpp's server and TensorRT-LLM; TGI's OpenAI route, Ollama
    /// and `transformers serve` have no such option (a strict server rejects the key: remove it
    /// with `--extra-body '{"ignore_eos": null}'`). `sglang`: `sampling_params.ignore_eos`.
    /// `tgi`: TGI has no such parameter, nothing is sent. Replies shorter than asked are counted
    /// as `short_reply` and warned about in the summary.
    #[arg(long)]
    pub ignore_eos: bool,

    /// SLOs for goodput, e.g. `--goodput ttft:500 tpot:50 e2el:2000` (milliseconds).
    #[arg(long, num_args = 1.., value_name = "METRIC:MS")]
    pub goodput: Vec<String>,
    /// Percentiles reported for every latency (vLLM's `--metric-percentiles`, whose default
    /// is 99 alone).
    #[arg(
        long,
        visible_alias = "metric-percentiles",
        value_delimiter = ',',
        default_value = "50,90,95,99"
    )]
    pub percentiles: Vec<f64>,
    /// Metrics whose percentiles the console summary and the vLLM-compatible file show, as
    /// vLLM's: `ttft`, `tpot`, `itl`, `e2el`, `client_queue_time`,
    /// `e2el_including_client_queue` (the canonical file always has the first four).
    #[arg(long, default_value = PercentileMetric::DEFAULT)]
    pub percentile_metrics: String,
    /// Exit non-zero when more than this percentage of a stage's requests failed (a run in
    /// which no request succeeded always exits non-zero).
    #[arg(long, value_name = "PCT")]
    pub fail_on_error: Option<f64>,

    /// Connect timeout (TCP, and the TLS handshake for https://), seconds; 0 = none.
    #[arg(long, default_value_t = 10.0)]
    pub connect_timeout: f64,
    /// Longest wait from sending a request to its first token, seconds, including the wait for
    /// the answer's first byte; 0 = none. Generous, because a loaded server queues requests
    /// before their first token; it only keeps a server that never answers from hanging the run.
    #[arg(long, default_value = "600")]
    pub first_token_timeout: Option<f64>,
    /// Longest silence between two chunks after the first token, seconds; 0 = none.
    #[arg(long, default_value = "60")]
    pub idle_timeout: Option<f64>,
    /// Longest request, seconds (default: none; 0 = none).
    #[arg(long)]
    pub request_timeout: Option<f64>,

    /// Engine behind the server (vllm, sglang, tgi...), recorded in the results.
    #[arg(long)]
    pub engine: Option<String>,
    /// GPU model, recorded in the results.
    #[arg(long)]
    pub gpu: Option<String>,
    /// Number of GPUs, recorded in the results.
    #[arg(long)]
    pub gpu_count: Option<u64>,
    /// Free-form `K=V` recorded as `tag.K` (repeatable).
    #[arg(long = "tag", visible_alias = "metadata", value_name = "K=V", num_args = 1..)]
    pub tags: Vec<String>,
    /// Label of the run (also heads vLLM-compatible file names).
    #[arg(long)]
    pub label: Option<String>,
    /// Folder for result files.
    #[arg(long, default_value = ".")]
    pub result_dir: PathBuf,
    /// Result file name (`-` for stdout; default `benchlens-{backend}-{model}-{date}.json`).
    /// With `--vllm-compatible` it names the vLLM-format file instead, as in vLLM (several
    /// stages: `NAME-stageN.json`), and the canonical file keeps its default name.
    #[arg(long)]
    pub result_filename: Option<String>,
    /// Also write one file per stage with exactly vLLM's serving keys and file names.
    #[arg(long)]
    pub vllm_compatible: bool,
    /// vLLM's `--save-result`: accepted for pasted command lines; benchlens always writes
    /// its result files.
    #[arg(long)]
    pub save_result: bool,
    /// vLLM's `--save-detailed`: the vLLM-compatible file gets the per-request arrays
    /// (`input_lens`, `output_lens`, `ttfts`, `itls`, `start_times`, `generated_texts`,
    /// `errors`).
    #[arg(long)]
    pub save_detailed: bool,
    /// Do not draw progress bars.
    #[arg(long, visible_alias = "disable-tqdm")]
    pub no_progress: bool,
}

impl Default for RunOpts {
    fn default() -> Self {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            opts: RunOpts,
        }
        // The defaults are those of the command line; parsing no arguments cannot fail.
        Wrap::try_parse_from(["run"])
            .map(|w| w.opts)
            .unwrap_or_else(|e| unreachable!("{e}"))
    }
}

/// What a run produced.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// One record per stage, as written.
    pub records: Vec<Record>,
    /// Metrics per stage.
    pub metrics: Vec<StageMetrics>,
    /// Per-request measurements per stage.
    pub requests: Vec<Vec<RequestRecord>>,
    /// The console summaries printed.
    pub summaries: Vec<String>,
    /// The canonical result file (None when written to stdout).
    pub result_path: Option<PathBuf>,
    /// The per-request JSON Lines file.
    pub requests_path: Option<PathBuf>,
    /// vLLM-compatible files.
    pub vllm_paths: Vec<PathBuf>,
    /// Whether the run was interrupted.
    pub partial: bool,
    /// Requests cancelled by the interrupt (in the JSON Lines only, as `cancelled`).
    pub cancelled: u64,
}

impl RunOutcome {
    /// Why the run should exit non-zero, if it should: no request succeeded in any stage, or
    /// a stage's failed share exceeded `fail_on_error_pct` (cancelled requests count neither
    /// way).
    pub fn failure_verdict(&self, fail_on_error_pct: Option<f64>) -> Option<String> {
        let completed: u64 = self.metrics.iter().map(|m| m.completed).sum();
        let failed: u64 = self.metrics.iter().map(|m| m.failed).sum();
        if completed == 0 && failed > 0 {
            return Some(format!("no request succeeded ({failed} failed)"));
        }
        let limit = fail_on_error_pct?;
        self.metrics.iter().enumerate().find_map(|(stage, m)| {
            let total = m.completed + m.failed;
            let pct = if total == 0 {
                0.0
            } else {
                m.failed as f64 * 100.0 / total as f64
            };
            (pct > limit).then(|| {
                format!(
                    "stage {}: {pct:.1}% of requests failed ({} of {total}), more than --fail-on-error {limit}%",
                    stage + 1,
                    m.failed
                )
            })
        })
    }
}

fn invalid(option: &'static str, message: impl Into<String>) -> LoadgenError {
    LoadgenError::InvalidOption {
        option,
        message: message.into(),
    }
}

fn parse_rates(items: &[String]) -> Result<Vec<f64>, LoadgenError> {
    let mut out = Vec::new();
    for s in items {
        let t = s.trim();
        let v = if t.eq_ignore_ascii_case("inf") {
            f64::INFINITY
        } else {
            t.parse::<f64>()
                .ok()
                .filter(|v| *v > 0.0 && v.is_finite())
                .ok_or_else(|| {
                    invalid(
                        "request-rate",
                        format!("{t:?} is not a positive number or inf"),
                    )
                })?
        };
        out.push(v);
    }
    if out.is_empty() {
        out.push(f64::INFINITY);
    }
    Ok(out)
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

fn headers(opts: &RunOpts) -> Result<Vec<(HeaderName, HeaderValue)>, LoadgenError> {
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

/// Longest wait of a second Ctrl-C for the partial files of the first one.
const SECOND_INTERRUPT_WAIT: Duration = Duration::from_secs(1);

/// Runs the benchmark until done or Ctrl-C. The first Ctrl-C stops sending, cancels the
/// requests in flight (recorded as `cancelled`) and writes what was measured, marked partial,
/// whatever the server does; a second one exits with 130 as soon as those files are written
/// (at most [`SECOND_INTERRUPT_WAIT`] later).
pub async fn run(opts: RunOpts) -> Result<RunOutcome, LoadgenError> {
    let (tx, rx) = watch::channel(false);
    let (written_tx, mut written_rx) = watch::channel(false);
    let ctrl_c = tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            eprintln!("interrupted: writing what was measured (Ctrl-C again to quit at once)");
            let _ = tx.send(true);
            if tokio::signal::ctrl_c().await.is_ok() {
                let _ =
                    tokio::time::timeout(SECOND_INTERRUPT_WAIT, written_rx.wait_for(|w| *w)).await;
                std::process::exit(130);
            }
        }
    });
    let out = run_inner(opts, rx, Some(written_tx)).await;
    ctrl_c.abort();
    out
}

struct Prepared {
    rates: Vec<f64>,
    concurrencies: Vec<Option<u64>>,
    slo: Option<Slo>,
    extra: Option<Map<String, Value>>,
    tags: BTreeMap<String, String>,
    timeouts: Timeouts,
    percentile_metrics: Vec<PercentileMetric>,
}

fn prepare(opts: &RunOpts) -> Result<Prepared, LoadgenError> {
    let rates = parse_rates(&opts.request_rate)?;
    if !(opts.burstiness > 0.0 && opts.burstiness.is_finite()) {
        return Err(invalid(
            "burstiness",
            format!("{} must be a positive number", opts.burstiness),
        ));
    }
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
        if rates.iter().any(|r| r.is_infinite()) && concurrencies.contains(&None) {
            return Err(invalid(
                "duration",
                "an infinite request rate for a duration needs --max-concurrency",
            ));
        }
    } else if opts.num_prompts == 0 {
        return Err(invalid("num-prompts", "must be at least 1"));
    }
    let slo = Slo::parse(&opts.goodput).map_err(|m| invalid("goodput", m))?;
    let percentile_metrics = PercentileMetric::parse_list(&opts.percentile_metrics)
        .map_err(|m| invalid("percentile-metrics", m))?;
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
            Err(e) => return Err(invalid("extra-body", e.to_string())),
        },
    };
    let mut tags: BTreeMap<String, String> = parse_pairs(&opts.tags, "tag")?.into_iter().collect();
    tags.insert("benchlens_version".into(), env!("CARGO_PKG_VERSION").into());
    tags.insert(
        "command_line".into(),
        std::env::args().collect::<Vec<_>>().join(" "),
    );
    tags.insert("seed".into(), opts.seed.to_string());
    let timeouts = Timeouts {
        connect: opt_secs(Some(opts.connect_timeout), "connect-timeout")?,
        first_token: opt_secs(opts.first_token_timeout, "first-token-timeout")?,
        idle: opt_secs(opts.idle_timeout, "idle-timeout")?,
        total: opt_secs(opts.request_timeout, "request-timeout")?,
    };
    Ok(Prepared {
        rates,
        concurrencies,
        slo,
        extra,
        tags,
        timeouts,
        percentile_metrics,
    })
}

fn load_prompts(
    opts: &RunOpts,
    count: usize,
    tok: &Tokenizer,
) -> Result<(String, Vec<Prompt>), LoadgenError> {
    let read = || -> Result<(PathBuf, String), LoadgenError> {
        let path = opts
            .dataset_path
            .clone()
            .ok_or_else(|| invalid("dataset-path", "needed for this --dataset"))?;
        let text = std::fs::read_to_string(&path).map_err(|e| LoadgenError::Dataset {
            path: path.clone(),
            message: e.to_string(),
        })?;
        Ok((path, text))
    };
    Ok(match opts.dataset {
        DatasetKind::Random => {
            let spec = RandomSpec {
                input_len: opts.input_len,
                output_len: opts.output_len.unwrap_or(128),
                range_ratio: opts.range_ratio,
                prefix_len: opts.prefix_len,
            };
            (
                "random".into(),
                dataset::random(spec, count, opts.seed, tok),
            )
        }
        DatasetKind::Jsonl => {
            let (path, text) = read()?;
            (
                "jsonl".into(),
                dataset::jsonl(&path, &text, opts.output_len.unwrap_or(128), tok)?,
            )
        }
        DatasetKind::Sharegpt => {
            let (path, text) = read()?;
            (
                "sharegpt".into(),
                dataset::sharegpt(&path, &text, opts.output_len, tok)?,
            )
        }
    })
}

/// The run as `vllm bench serve` would have been invoked for one stage, so that scripts that
/// read vLLM's command lines find the dataset, lengths, rate and concurrency under vLLM's flag
/// names.
pub fn vllm_command_line(
    opts: &RunOpts,
    base_url: &str,
    model: &str,
    dataset: &str,
    rate: f64,
    concurrency: Option<u64>,
) -> String {
    let mut args: Vec<String> = vec!["vllm".into(), "bench".into(), "serve".into()];
    let mut flag = |name: &str, value: Option<String>| {
        args.push(format!("--{name}"));
        args.extend(value);
    };
    flag("backend", Some(opts.backend.name().into()));
    flag("base-url", Some(base_url.into()));
    if let Some(e) = &opts.endpoint {
        flag("endpoint", Some(e.clone()));
    }
    flag("model", Some(model.into()));
    flag("tokenizer", Some(opts.tokenizer.clone()));
    match opts.dataset {
        DatasetKind::Random => {
            flag("dataset-name", Some("random".into()));
            flag("random-input-len", Some(opts.input_len.to_string()));
            flag(
                "random-output-len",
                Some(opts.output_len.unwrap_or(128).to_string()),
            );
            flag("random-range-ratio", Some(opts.range_ratio.to_string()));
            if opts.prefix_len > 0 {
                flag("random-prefix-len", Some(opts.prefix_len.to_string()));
            }
        }
        DatasetKind::Jsonl | DatasetKind::Sharegpt => {
            let (name, len_flag) = if dataset == "sharegpt" {
                ("sharegpt", "sharegpt-output-len")
            } else {
                ("custom", "custom-output-len")
            };
            flag("dataset-name", Some(name.into()));
            if let Some(p) = &opts.dataset_path {
                flag("dataset-path", Some(p.display().to_string()));
            }
            if let Some(n) = opts.output_len {
                flag(len_flag, Some(n.to_string()));
            }
        }
    }
    flag("num-prompts", Some(opts.num_prompts.to_string()));
    flag(
        "request-rate",
        Some(if rate.is_finite() {
            rate.to_string()
        } else {
            "inf".into()
        }),
    );
    flag("burstiness", Some(opts.burstiness.to_string()));
    if let Some(c) = concurrency {
        flag("max-concurrency", Some(c.to_string()));
    }
    flag("seed", Some(opts.seed.to_string()));
    if opts.ignore_eos {
        flag("ignore-eos", None);
    }
    if opts.warmup > 0 {
        flag("num-warmups", Some(opts.warmup.to_string()));
    }
    flag("percentile-metrics", Some(opts.percentile_metrics.clone()));
    let ps: Vec<String> = opts.percentiles.iter().map(|p| p.to_string()).collect();
    flag("metric-percentiles", Some(ps.join(",")));
    if !opts.goodput.is_empty() {
        args.push("--goodput".into());
        args.extend(opts.goodput.iter().cloned());
    }
    args.push("--save-result".into());
    if opts.save_detailed {
        args.push("--save-detailed".into());
    }
    args.join(" ")
}

async fn first_model(client: &Client) -> Result<String, LoadgenError> {
    let path = format!("{}/v1/models", client.target().prefix);
    let url = format!("{}{path}", client.target().origin);
    let text = client.get(&path).await.map_err(|f| {
        // Only a server without the route is helped by naming the model; any other refusal
        // (a rejected header, a bad key) would fail every request the same way.
        let hint = match f.kind {
            FailureKind::Http(404) => "; the server lists no models: pass --model",
            FailureKind::Http(_) => "",
            _ => "; pass --model to skip the probe",
        };
        LoadgenError::Setup {
            url: url.clone(),
            message: format!(
                "model probe failed: {} ({}){hint}",
                f.message,
                f.kind.name()
            ),
        }
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| LoadgenError::Setup {
        url: url.clone(),
        message: format!("not JSON: {e}"),
    })?;
    v.get("data")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .and_then(|m| m.get("id"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| LoadgenError::Setup {
            url,
            message: "no model id listed; pass --model".into(),
        })
}

/// Running totals for the progress bar.
#[derive(Default)]
struct Counters {
    failed: AtomicU64,
    tokens: AtomicU64,
}

/// Everything one stage's requests share.
struct Shared {
    client: Client,
    bodies: Vec<Bytes>,
    prompts: Vec<Prompt>,
    ignore_eos: bool,
}

async fn run_stage(
    shared: &Arc<Shared>,
    plan: &Arrivals,
    limit: Option<usize>,
    stop: &mut watch::Receiver<bool>,
    progress: Option<indicatif::ProgressBar>,
) -> (Vec<RequestRecord>, f64, bool, usize) {
    let results = Arc::new(Mutex::new(Vec::with_capacity(plan.len().unwrap_or(1024))));
    let counters = Arc::new(Counters::default());
    let start = Instant::now();
    let summary = {
        let results = results.clone();
        let shared = shared.clone();
        let stop_rx = stop.clone();
        drive(plan, limit, stop, move |d| {
            let shared = shared.clone();
            let results = results.clone();
            let progress = progress.clone();
            let counters = counters.clone();
            let mut stop_rx = stop_rx.clone();
            async move {
                let i = d.index % shared.prompts.len();
                let p = &shared.prompts[i];
                let mut rec = RequestRecord {
                    index: d.index,
                    input_len: p.input_len,
                    max_tokens: p.output_len,
                    ignore_eos: shared.ignore_eos,
                    intended_at_s: (d.intended - d.stage_start).as_secs_f64(),
                    dispatched_at_s: (d.dispatched - d.stage_start).as_secs_f64(),
                    schedule_lag_s: d.lag.as_secs_f64(),
                    chunks: Vec::with_capacity(p.output_len.min(4096) as usize + 1),
                    ..RequestRecord::default()
                };
                let cancelled = {
                    let request =
                        shared
                            .client
                            .stream(shared.bodies[i].clone(), d.stage_start, &mut rec);
                    tokio::select! {
                        () = request => false,
                        () = stop_requested(&mut stop_rx) => true,
                    }
                };
                if cancelled {
                    // The user stopped the run: not the server's failure, and not measured.
                    rec.failure = Some(Failure {
                        kind: FailureKind::Cancelled,
                        message: "cancelled: the run was interrupted (Ctrl-C)".into(),
                    });
                }
                if let Some(pb) = progress.as_ref().filter(|_| !cancelled) {
                    let failed = counters
                        .failed
                        .fetch_add(u64::from(rec.failure.is_some()), Ordering::Relaxed)
                        + u64::from(rec.failure.is_some());
                    let tokens = counters
                        .tokens
                        .fetch_add(rec.output_tokens(), Ordering::Relaxed)
                        + rec.output_tokens();
                    let secs = start.elapsed().as_secs_f64().max(1e-3);
                    pb.inc(1);
                    pb.set_message(format!(
                        "{failed} failed, {:.0} tok/s",
                        tokens as f64 / secs
                    ));
                }
                if let Ok(mut r) = results.lock() {
                    r.push(rec);
                }
            }
        })
        .await
    };
    let duration = start.elapsed().as_secs_f64();
    let mut out = results
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default();
    out.sort_by_key(|r| r.index);
    (out, duration, summary.stopped, summary.released)
}

fn progress_bar(
    total: Option<usize>,
    hidden: bool,
    stage: usize,
    stages: usize,
) -> Option<indicatif::ProgressBar> {
    if hidden {
        return None;
    }
    let target = indicatif::ProgressDrawTarget::stderr();
    if target.is_hidden() {
        return None;
    }
    let pb = indicatif::ProgressBar::with_draw_target(total.map(|t| t as u64), target);
    let style = indicatif::ProgressStyle::with_template(&format!(
        "stage {}/{} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} done, {{per_sec}}, {{msg}}",
        stage + 1,
        stages
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    pb.set_style(style);
    Some(pb)
}

/// Runs the benchmark until done or until `stop` turns true (then the stage in progress is cut
/// short, its finished requests are measured and written, and the run is marked partial).
pub async fn run_with_stop(
    opts: RunOpts,
    stop: watch::Receiver<bool>,
) -> Result<RunOutcome, LoadgenError> {
    run_inner(opts, stop, None).await
}

/// [`run_with_stop`], saying on `written` when the files of an interrupted run are written.
async fn run_inner(
    opts: RunOpts,
    mut stop: watch::Receiver<bool>,
    written: Option<watch::Sender<bool>>,
) -> Result<RunOutcome, LoadgenError> {
    let settled = || {
        if let Some(w) = &written {
            let _ = w.send(true);
        }
    };
    let prep = prepare(&opts)?;
    let mock = if opts.mock {
        Some(
            MockServer::start(MockOpts {
                ttft_ms: opts.mock_ttft_ms,
                itl_ms: opts.mock_itl_ms,
                max_batch: opts.mock_max_batch,
                ..MockOpts::default()
            })
            .await?,
        )
    } else {
        None
    };
    let given_url = match (&opts.host, opts.port) {
        (None, None) => opts.base_url.clone(),
        (host, port) => format!(
            "http://{}:{}",
            host.as_deref().unwrap_or("127.0.0.1"),
            port.unwrap_or(8000)
        ),
    };
    let base_url = mock
        .as_ref()
        .map_or_else(|| given_url.clone(), MockServer::base_url);
    let endpoint = opts
        .endpoint
        .clone()
        .unwrap_or_else(|| opts.backend.default_endpoint().to_string());
    let target = Target::resolve(&base_url, &endpoint, headers(&opts)?).await?;
    let transport = Transport {
        http2: opts.http2,
        insecure: opts.insecure,
        ca_cert: opts.ca_cert.clone(),
    };
    if !target.tls && (opts.insecure || opts.ca_cert.is_some()) {
        return Err(invalid(
            if opts.insecure { "insecure" } else { "ca-cert" },
            format!("applies to https:// servers only, not {base_url}"),
        ));
    }
    let client = Client::with_transport(target, opts.backend, prep.timeouts, &transport)?;
    let model = match &opts.model {
        Some(m) => m.clone(),
        None => {
            let probe = first_model(&client);
            tokio::select! {
                m = probe => m?,
                () = stop_requested(&mut stop) => {
                    eprintln!("interrupted while asking the server for its model: nothing was measured");
                    settled();
                    return Ok(RunOutcome { partial: true, ..RunOutcome::default() });
                }
            }
        }
    };
    let count = opts.num_prompts.clamp(1, 100_000) as usize;
    let tokenizer = Tokenizer::from_name(&opts.tokenizer)?;
    let (dataset_name, prompts) = load_prompts(&opts, count, &tokenizer)?;
    let bodies = prompts
        .iter()
        .map(|p| {
            request_body(
                opts.backend,
                &model,
                &p.text,
                p.output_len,
                &Sampling {
                    ignore_eos: opts.ignore_eos,
                    ..Sampling::default()
                },
                prep.extra.as_ref(),
            )
        })
        .collect();
    let shared = Arc::new(Shared {
        client,
        bodies,
        prompts,
        ignore_eos: opts.ignore_eos,
    });

    let mut tags = prep.tags.clone();
    tags.insert("server_url".into(), base_url.clone());
    tags.insert("endpoint".into(), endpoint.clone());
    tags.insert("backend".into(), opts.backend.name().into());
    tags.insert("http_version".into(), shared.client.http_version().into());
    tags.insert("tokenizer".into(), tokenizer.name().into());

    if opts.warmup > 0 {
        let plan = Arrivals::Fixed(vec![Duration::ZERO; opts.warmup as usize]);
        let limit = prep
            .concurrencies
            .first()
            .copied()
            .flatten()
            .map(|c| c as usize);
        let (reqs, _, stopped, _) = run_stage(&shared, &plan, limit, &mut stop, None).await;
        if stopped {
            eprintln!("interrupted during the warm-up: nothing was measured");
            settled();
            return Ok(RunOutcome {
                partial: true,
                ..RunOutcome::default()
            });
        }
        if !reqs.is_empty() && reqs.iter().all(|r| r.failure.is_some()) {
            let f = reqs[0]
                .failure
                .clone()
                .map_or_else(String::new, |f| f.message);
            return Err(LoadgenError::Setup {
                url: shared.client.target().url.clone(),
                message: format!("every warm-up request failed; first: {f}"),
            });
        }
    }

    let date = report::now_date();
    // With --vllm-compatible, --result-filename names the vLLM file, as in vLLM.
    let own_name = opts
        .result_filename
        .clone()
        .filter(|_| !opts.vllm_compatible);
    let file_name = own_name.unwrap_or_else(|| {
        let m = model.rsplit('/').next().unwrap_or(&model);
        format!("benchlens-{}-{m}-{date}.json", opts.backend.name())
    });
    let to_stdout = file_name == "-";
    let result_path = (!to_stdout).then(|| opts.result_dir.join(&file_name));
    let requests_path = result_path.as_ref().map(|p| {
        let stem = p
            .file_stem()
            .map_or_else(|| "benchlens".into(), |s| s.to_string_lossy().into_owned());
        p.with_file_name(format!("{stem}.requests.jsonl"))
    });
    if let Some(dir) = result_path
        .as_ref()
        .and_then(|p| p.parent())
        .filter(|d| !d.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir).map_err(|source| LoadgenError::Write {
            path: dir.into(),
            source,
        })?;
    }

    let mut outcome = RunOutcome {
        result_path: result_path.clone(),
        requests_path: requests_path.clone(),
        ..RunOutcome::default()
    };
    let mut request_lines = String::new();
    let stages: Vec<(f64, Option<u64>)> = prep
        .rates
        .iter()
        .flat_map(|r| prep.concurrencies.iter().map(move |c| (*r, *c)))
        .collect();
    for (stage, (rate, conc)) in stages.iter().copied().enumerate() {
        if *stop.borrow() {
            outcome.partial = true;
            settled();
            break;
        }
        let size = match opts.duration {
            Some(d) => StageSize::Duration(Duration::from_secs_f64(d)),
            None => StageSize::Count(opts.num_prompts as usize),
        };
        let plan = arrivals(
            rate,
            opts.burstiness,
            size,
            opts.seed.wrapping_add(stage as u64),
        );
        let pb = progress_bar(plan.len(), opts.no_progress, stage, stages.len());
        let stage_date = report::now_date();
        let (mut all_reqs, duration, stopped, released) = run_stage(
            &shared,
            &plan,
            conc.map(|c| c as usize),
            &mut stop,
            pb.clone(),
        )
        .await;
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
        outcome.partial |= stopped;
        // Counted after the stage so tokenizing never delays a measurement.
        for r in all_reqs.iter_mut().filter(|r| r.failure.is_none()) {
            r.output_tokens_text = Some(tokenizer.count(&r.generated_text));
        }
        // Requests cut off by Ctrl-C are neither successes nor failures: they go to the JSON
        // Lines only.
        let is_cancelled = |r: &RequestRecord| {
            r.failure
                .as_ref()
                .is_some_and(|f| f.kind == FailureKind::Cancelled)
        };
        let reqs: Vec<RequestRecord> = all_reqs
            .iter()
            .filter(|r| !is_cancelled(r))
            .cloned()
            .collect();
        let cancelled = (all_reqs.len() - reqs.len()) as u64;
        let m = compute(&reqs, duration, rate, &opts.percentiles, prep.slo);
        let view = SummaryView::new(
            prep.percentile_metrics.clone(),
            opts.percentiles.clone(),
            &reqs,
            cancelled,
        );
        let info = StageInfo {
            stage,
            model: model.clone(),
            backend: opts.backend.name().into(),
            engine: opts.engine.clone(),
            gpu: opts.gpu.clone(),
            gpu_count: opts.gpu_count,
            label: opts.label.clone(),
            dataset: dataset_name.clone(),
            request_rate: rate,
            burstiness: opts.burstiness,
            max_concurrency: conc,
            num_prompts: released as u64,
            date: stage_date,
            tags: tags.clone(),
            endpoint: endpoint.clone(),
            partial: stopped,
        };
        let text = report::summary_text(&info, &m, &view);
        if to_stdout {
            eprint!("{text}");
        } else {
            print!("{text}");
        }
        outcome.summaries.push(text);
        outcome
            .records
            .push(report::stage_record(&info, &m, &reqs, &view));
        for r in &all_reqs {
            request_lines.push_str(&report::request_line(stage, r));
            request_lines.push('\n');
        }
        // Rewritten after every stage so an interrupted run keeps what it measured.
        if let (Some(p), Some(rp)) = (&result_path, &requests_path) {
            report::write_atomic(p, &report::canonical_text(&outcome.records))?;
            report::write_atomic(rp, &request_lines)?;
        }
        if opts.vllm_compatible {
            let name = match &opts.result_filename {
                Some(n) if stages.len() == 1 => n.clone(),
                Some(n) => {
                    let stem = n.strip_suffix(".json").unwrap_or(n);
                    format!("{stem}-stage{stage}.json")
                }
                None => report::vllm_file_name(&info),
            };
            let p = opts.result_dir.join(name);
            let mut info = info.clone();
            info.tags.insert(
                "benchlens_command_line".into(),
                info.tags.get("command_line").cloned().unwrap_or_default(),
            );
            info.tags.insert(
                "command_line".into(),
                vllm_command_line(&opts, &base_url, &model, &dataset_name, rate, conc),
            );
            let mut text =
                report::vllm_json(&info, &m, &reqs, &view, opts.save_detailed).to_string();
            text.push('\n');
            report::write_atomic(&p, &text)?;
            outcome.vllm_paths.push(p);
        }
        outcome.cancelled += cancelled;
        outcome.metrics.push(m);
        outcome.requests.push(reqs);
        if stopped {
            settled();
            break;
        }
    }
    if outcome.partial && outcome.records.is_empty() {
        eprintln!("interrupted before the first stage: nothing was measured");
    }
    if to_stdout {
        report::write_atomic(
            std::path::Path::new("-"),
            &report::canonical_text(&outcome.records),
        )?;
    }
    if let Some(m) = mock {
        m.shutdown().await;
    }
    Ok(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_parse_and_options_are_checked() {
        let o = RunOpts::default();
        assert_eq!(o.num_prompts, 1000);
        assert_eq!(o.percentiles, vec![50.0, 90.0, 95.0, 99.0]);
        assert!(prepare(&o).is_ok());
        let bad = |f: &dyn Fn(&mut RunOpts)| {
            let mut o = RunOpts::default();
            f(&mut o);
            prepare(&o).err().map(|e| e.to_string()).unwrap_or_default()
        };
        assert!(bad(&|o| o.request_rate = vec!["fast".into()]).contains("--request-rate"));
        assert!(bad(&|o| o.burstiness = 0.0).contains("--burstiness"));
        assert!(bad(&|o| o.duration = Some(5.0)).contains("--max-concurrency"));
        assert!(bad(&|o| o.extra_body = Some("[1]".into())).contains("--extra-body"));
        assert!(bad(&|o| o.tags = vec!["novalue".into()]).contains("--tag"));
        assert!(bad(&|o| o.goodput = vec!["ttft".into()]).contains("--goodput"));
        assert_eq!(
            parse_rates(&["1".into(), "inf".into()]).unwrap(),
            vec![1.0, f64::INFINITY]
        );
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
