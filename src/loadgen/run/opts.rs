//! The options of `benchlens run` ([`RunOpts`], clap derive) and where prompts come from
//! ([`DatasetKind`]): names, defaults and help text, nothing checked here (see
//! [`super::prepare`]).

use std::fmt;
use std::path::PathBuf;

use crate::analysis::capacity::{Objective, Objectives};
use crate::loadgen::client::Backend;
use crate::loadgen::dataset::PrefixOrder;
use crate::loadgen::report::PercentileMetric;
use crate::loadgen::schedule::RampStrategy;
use crate::loadgen::shard::Shard;

/// A request rate as `--request-rate` takes it: requests per second, a positive number, or
/// `inf` (any case: every request at once). Parsed here, at the command line, once.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate(pub f64);

impl Rate {
    /// Every request at once.
    pub const INF: Rate = Rate(f64::INFINITY);
}

impl std::str::FromStr for Rate {
    type Err = String;

    fn from_str(s: &str) -> Result<Rate, String> {
        let t = s.trim();
        if t.eq_ignore_ascii_case("inf") {
            return Ok(Rate::INF);
        }
        t.parse::<f64>()
            .ok()
            .filter(|v| *v > 0.0 && v.is_finite())
            .map(Rate)
            .ok_or_else(|| format!("{t:?} is not a positive number or inf"))
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_finite() {
            write!(f, "{}", self.0)
        } else {
            f.write_str("inf")
        }
    }
}

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
    /// A production trace replayed: arrival times and lengths from an Azure LLM inference
    /// trace CSV, a BurstGPT CSV or a Mooncake JSON Lines file (prefix reuse from its
    /// `hash_ids`); `--request-rate` is not used.
    Trace,
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
    /// HTTP/1.1: the largest response head accepted, in KiB (default 64; 8 at least). A larger
    /// head fails the request naming this flag.
    #[arg(long, value_name = "KIB", value_parser = clap::value_parser!(u32).range(8..=16384))]
    pub max_response_head_kib: Option<u32>,
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
    pub request_rate: Vec<Rate>,
    /// Burstiness of arrivals: gamma shape (1 = Poisson, lower = burstier).
    #[arg(long, default_value_t = 1.0)]
    pub burstiness: f64,
    /// Ramp the request rate over each stage from `--ramp-up-start-rps` to
    /// `--ramp-up-end-rps` instead of holding `--request-rate` (as vLLM's client).
    #[arg(long, value_enum, requires_all = ["ramp_up_start_rps", "ramp_up_end_rps"])]
    pub ramp_up_strategy: Option<RampStrategy>,
    /// The ramp's rate at the start of a stage, requests per second.
    #[arg(long, requires = "ramp_up_strategy")]
    pub ramp_up_start_rps: Option<f64>,
    /// The ramp's rate at the end of a stage, requests per second.
    #[arg(long, requires = "ramp_up_strategy")]
    pub ramp_up_end_rps: Option<f64>,
    /// Most requests in flight; a comma list multiplies the stages.
    #[arg(long, value_delimiter = ',', value_parser = clap::value_parser!(u64).range(1..))]
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
    /// Run only shard I of N (from 0): the requests whose index is I modulo N, at their
    /// planned times, with the I-th share of `--max-concurrency`. N processes started together
    /// with the same options and `--shard 0/N` … `--shard N-1/N` send exactly the whole run;
    /// `benchlens merge` joins their files.
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Seed of the arrival schedules and random prompts.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,

    /// Where prompts come from. Spelled `--dataset-name random` (vLLM's flag) with the
    /// `openai` or `openai-chat` backend, it also sets `--ignore-eos`, as `vllm bench serve`
    /// does for its random dataset; `--dataset random` does not.
    #[arg(
        long,
        visible_alias = "dataset-name",
        value_enum,
        default_value = "random"
    )]
    pub dataset: DatasetKind,
    /// File for `--dataset jsonl` / `sharegpt` / `trace`.
    #[arg(long)]
    pub dataset_path: Option<PathBuf>,
    /// `--dataset trace`: time runs this many times faster than in the trace (0.5 = slower).
    #[arg(long, default_value_t = 1.0)]
    pub trace_speed: f64,
    /// `--dataset trace`: the seeded share of the trace's requests replayed, keeping their
    /// times (so the rate scales with it); `--num-prompts` then caps the count from the start.
    #[arg(long, default_value_t = 1.0)]
    pub trace_sample: f64,
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
    /// Tokens of a prefix shared by random prompts (by each group's, with `--prefix-groups`).
    #[arg(
        long,
        alias = "random-prefix-len",
        alias = "prefix-repetition-prefix-len",
        default_value_t = 0
    )]
    pub prefix_len: u64,
    /// Different prefixes among the random prompts, for prefix-cache studies: G groups of
    /// `--num-prompts / G` prompts, each group sharing a `--prefix-len` prefix.
    #[arg(long, alias = "prefix-repetition-num-prefixes", default_value_t = 1)]
    pub prefix_groups: u64,
    /// The order the groups' prompts are sent in: `grouped` (cache-friendly), `interleaved`
    /// (cache-hostile: round-robin over the groups) or `shuffled`.
    #[arg(long, value_enum, default_value = "grouped")]
    pub prefix_order: PrefixOrder,
    /// Replay conversations turn by turn: each conversation's turns go in order on one session
    /// (a turn is sent once the previous reply has ended and the think time passed), each
    /// carrying the history (earlier user turns and the replies actually received: chat
    /// messages for `openai-chat`, one text joined by newlines for the other backends).
    /// `--dataset sharegpt` replays the file's conversations; `--dataset random` makes synthetic
    /// ones (`--turns`, `--turn-input-len`, `--turn-output-len`, `--think-time`). Arrivals are
    /// conversation starts: `--request-rate` starts conversations per second, `--max-concurrency`
    /// caps the conversations in flight (one holds its slot through its think times),
    /// `--num-prompts` counts conversations, and with `--duration` conversations start within
    /// it and each runs to its last turn. A failed turn ends its conversation (its later turns
    /// are not sent); Ctrl-C cancels the turns in flight.
    #[arg(long, conflicts_with = "shard")]
    pub multi_turn: bool,
    /// `--multi-turn`: at most N user turns per conversation (vLLM's multi-turn benchmark's
    /// `--max-turns` counts user and assistant messages, twice this).
    #[arg(long, value_name = "N", requires = "multi_turn")]
    pub max_turns: Option<usize>,
    /// `--multi-turn --dataset random`: user turns per conversation, a distribution: `N`,
    /// `uniform:MIN:MAX` or `exponential:MEAN`.
    #[arg(
        long,
        value_name = "DIST",
        requires = "multi_turn",
        default_value = "3"
    )]
    pub turns: String,
    /// `--multi-turn --dataset random`: tokens of each turn's new user text, a distribution
    /// (default: `--input-len`). Exact in the `--tokenizer`'s tokens.
    #[arg(long, value_name = "DIST", requires = "multi_turn")]
    pub turn_input_len: Option<String>,
    /// `--multi-turn --dataset random`: output tokens asked for per turn, a distribution
    /// (default: `--output-len`, else 128).
    #[arg(long, value_name = "DIST", requires = "multi_turn")]
    pub turn_output_len: Option<String>,
    /// `--multi-turn`: seconds between a reply's end and the next turn, a distribution
    /// (`0.5`, `uniform:0.2:1`, `exponential:1`).
    #[arg(
        long,
        value_name = "DIST",
        requires = "multi_turn",
        default_value = "0"
    )]
    pub think_time: String,
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

    /// SLOs for goodput, e.g. `--goodput ttft:500 tpot:50 e2el:2000` (milliseconds); an
    /// argument may hold several, separated by spaces.
    #[arg(long, num_args = 1.., value_name = "METRIC:MS")]
    pub goodput: Vec<Objectives>,
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
    #[arg(long, value_delimiter = ',', default_value = PercentileMetric::DEFAULT)]
    pub percentile_metrics: Vec<PercentileMetric>,
    /// Exit non-zero when more than this percentage of a stage's requests failed. Without it,
    /// a run exits non-zero when more than half of its requests failed; one in which no request
    /// succeeded always does.
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
    /// Result file name (`-` for stdout; default
    /// `benchlens-{backend}-{model}-{date}-{ms}-{run id}[-shard{I}of{N}].json`, unique to the
    /// run: the date to the millisecond, a random run id and the shard).
    /// With `--vllm-compatible` it names the vLLM-format file instead, as in vLLM (several
    /// stages: `NAME-stageN.json`), and the canonical file keeps its default name.
    #[arg(long)]
    pub result_filename: Option<String>,
    /// Replace result files that exist (without it a run refuses, before any load, to write
    /// over a file: another run's, or one started at the same moment).
    #[arg(long)]
    pub overwrite: bool,
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
    /// Scrape the server's Prometheus metrics (this path, `/metrics` when none is given) every
    /// second of each stage; the running and waiting requests, KV-cache usage, prefix-cache
    /// hit rate and batch size, under vLLM's, SGLang's, TGI's or llama.cpp's names, go into
    /// the stage's series as `server.*` columns. A failed scrape is a warning, never fatal.
    #[arg(long, value_name = "PATH", num_args = 0..=1, default_missing_value = "/metrics")]
    pub scrape_metrics: Option<String>,
    /// Measure each stage over its steady state only: requests sent during the warm-up (the
    /// server filling, about one request lifetime) and the drain (the last request lifetime of
    /// the arrivals) are left out of the metrics, though kept in the per-request file. The rule
    /// is recorded as `tag.steady_window`, the window as `window_start_s`, `window_end_s` and
    /// `window_lifetime_s`.
    #[arg(long)]
    pub steady_window: bool,
    /// Write the result files (false when another command, such as `sweep`, writes them).
    #[arg(skip = true)]
    pub write_files: bool,
}

impl RunOpts {
    /// `--goodput`'s objectives, in the order given.
    pub fn objectives(&self) -> impl Iterator<Item = &Objective> {
        self.goodput.iter().flat_map(|o| &o.0)
    }
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
