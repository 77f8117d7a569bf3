//! The load generator (`benchlens run`) and the OpenAI-compatible mock server
//! (`benchlens mock`): native only.
//!
//! This module owns the whole benchmarking pipeline: arrival schedules ([`schedule`]), prompt
//! datasets ([`dataset`]), the lean hyper 1 HTTP/1.1 and HTTP/2 client with its incremental SSE parser
//! and the per-read accounting of streamed answers ([`client`], [`target`], [`tls`], [`body`],
//! [`sse`], [`stream`]), the per-request [`record`]s, vLLM-compatible statistics ([`stats`], [`measure`]), the result files
//! and console summary ([`report`]) and the mock server ([`mock`]). It writes
//! [`crate::model::Record`]s through [`crate::model::canonical`] and must not import app code
//! (`crate::app`), leptos or web-sys. Like oha, the library owns the options and `run()`, so
//! tests run the whole tool in-process against the mock on 127.0.0.1.
//!
//! # Quick start
//!
//! ```text
//! # No GPU: benchmark the built-in mock (50 ms TTFT, 5 ms ITL) at two rates.
//! benchlens run --mock --request-rate 10,inf --max-concurrency 32 --num-prompts 200
//!
//! # A real server: the model is the first one /v1/models lists.
//! benchlens run --base-url http://gpu-box:8000 --backend openai-chat \
//!     --request-rate 1,4,16,inf --num-prompts 500 --input-len 1024 --output-len 128 \
//!     --ignore-eos --engine vllm --gpu H100 --gpu-count 1 --goodput ttft:500 tpot:50
//!
//! # The mock on its own, e.g. for another client, with faults and a batching model.
//! benchlens mock --port 8000 --ttft-ms 80 --itl-ms 12 --max-batch 64 --error-rate 0.01
//! ```
//!
//! Each run writes one canonical result file (every stage one [`crate::model::Record`]),
//! per-request JSON Lines beside it (see [`report::request_line`]) and, with
//! `--vllm-compatible`, one vLLM serving file per stage; vLLM's summary block is printed per
//! stage. HTTP/1.1 by default, HTTP/2 with `--http2`; `https://` servers over rustls (ring), with
//! `--ca-cert` or `--insecure` for private or self-signed certificates. `scripts/bench-loadgen.sh`
//! measures the client's own speed against the mock.

pub mod body;
/// The capacity search's pure parts (objectives, steady window, search), shared with the
/// explorer's capacity view: [`crate::analysis::capacity`].
pub use crate::analysis::capacity;
pub mod client;
pub mod conversation;
pub mod dataset;
mod deadline;
pub mod encoding;
mod exchange;
pub mod figures;
pub mod interrupt;
pub mod measure;
pub mod merge;
pub mod mock;
mod pool;
pub mod record;
pub mod report;
pub mod run;
pub mod schedule;
pub mod scratch;
pub mod shard;
pub mod sse;
pub mod stamp;
pub mod stats;
pub mod stream;
pub mod sweep;
pub mod target;
pub mod telemetry;
pub mod timeline;
mod timer;
pub mod tls;
pub mod tokenizer;
pub mod trace;

use std::path::PathBuf;

pub use mock::{MockOpts, MockServer};
pub use run::{run, run_with_stop, Rate, RunOpts, RunOutcome};
pub use sweep::{SweepOpts, SweepOutcome};

/// Everything that can stop `benchlens run` or `benchlens mock` as a whole. Failures of single
/// requests are not errors but data ([`record::FailureKind`]). Messages say what failed; the
/// reason is the [`source`](std::error::Error::source), so a printed chain (`{:#}` of an
/// `anyhow::Error`) reads `top: reason: deeper reason` without repeats.
#[derive(Debug, thiserror::Error)]
pub enum LoadgenError {
    /// A command-line option has a value that cannot be used.
    #[error("invalid --{option}: {message}")]
    InvalidOption {
        /// The option's long name.
        option: &'static str,
        /// What is wrong with it.
        message: String,
    },
    /// A command-line option's value was refused by a parser with its own error.
    #[error("invalid --{option}")]
    InvalidOptionValue {
        /// The option's long name.
        option: &'static str,
        /// The parser's reason.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// `--tokenizer` names a tokenizer that could not be loaded.
    #[error("invalid --tokenizer: cannot load {name}")]
    TokenizerLoad {
        /// The built-in name or the file.
        name: String,
        /// The tokenizer library's reason.
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// The mock server could not listen.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// The server did not answer a setup request (`/v1/models`, warm-up) usefully.
    #[error("request to {url} failed")]
    Setup {
        /// The URL requested.
        url: String,
        /// What went wrong.
        source: SetupError,
    },
    /// A dataset file could not be read or understood.
    #[error("dataset {path}")]
    Dataset {
        /// The file.
        path: PathBuf,
        /// What went wrong (with the line when known).
        source: DatasetError,
    },
    /// `--base-url` or `--endpoint` cannot be used.
    #[error(transparent)]
    Target(#[from] target::TargetError),
    /// A TLS set-up (`--ca-cert`, `--tls-cert`/`--tls-key`, an `https://` host) cannot be made.
    #[error(transparent)]
    Tls(#[from] tls::TlsError),
    /// Shard files could not be merged.
    #[error("cannot merge the shards")]
    Merge(#[source] merge::MergeError),
    /// A result file exists and `--overwrite` was not given.
    #[error("{path} exists: not replaced (pass --overwrite to replace it, or choose another --result-filename or --result-dir)")]
    Exists {
        /// The file.
        path: PathBuf,
    },
    /// A result file could not be written.
    #[error("cannot write {path}")]
    Write {
        /// The file.
        path: PathBuf,
        /// The system's reason.
        source: std::io::Error,
    },
}

/// Why a setup request (the `/v1/models` probe, the warm-up) gave nothing to run with.
#[derive(Debug, thiserror::Error)]
pub enum SetupError {
    /// The model probe failed: refused by the server, or no answer.
    #[error("model probe failed{hint}")]
    ModelProbe {
        /// What the user can do about it (` (pass --model ...)`), or empty.
        hint: &'static str,
        /// The request's failure (kind and message, as recorded for requests).
        #[source]
        reason: RequestFailed,
    },
    /// `/v1/models` answered with something that is not JSON.
    #[error("the model list is not JSON")]
    ModelListNotJson(#[source] serde_json::Error),
    /// `/v1/models` listed no model id.
    #[error("no model id listed; pass --model")]
    NoModelListed,
    /// Every warm-up request failed.
    #[error("every warm-up request failed; the first")]
    WarmupFailed(#[source] RequestFailed),
}

/// A request's recorded failure ([`record::Failure`]) as an error: its message and kind.
#[derive(Clone, Debug, Default, PartialEq, Eq, thiserror::Error)]
#[error("{message} ({kind})")]
pub struct RequestFailed {
    /// The failure kind's name (`http_401`, `connect`).
    pub kind: String,
    /// The failure message.
    pub message: String,
}

impl From<&record::Failure> for RequestFailed {
    fn from(f: &record::Failure) -> Self {
        RequestFailed {
            kind: f.kind.name(),
            message: f.message.clone(),
        }
    }
}

/// What is wrong with a prompt dataset file.
#[derive(Debug, thiserror::Error)]
pub enum DatasetError {
    /// The file could not be read.
    #[error("cannot read it")]
    Read(#[source] std::io::Error),
    /// A line of a JSON Lines file is not JSON.
    #[error("line {line}")]
    LineNotJson {
        /// 1-based line number.
        line: usize,
        /// The parser's reason.
        source: serde_json::Error,
    },
    /// A line of a JSON Lines file has no string `prompt` (or `text`).
    #[error("line {line}: no string \"prompt\"")]
    NoPrompt {
        /// 1-based line number.
        line: usize,
    },
    /// The JSON Lines file has no prompt at all.
    #[error("no prompts")]
    NoPrompts,
    /// A ShareGPT file that is not JSON.
    #[error("not JSON")]
    NotJson(#[source] serde_json::Error),
    /// A ShareGPT file whose top level is not an array.
    #[error("not a JSON array of conversations")]
    NotAnArray,
    /// A ShareGPT file without a conversation of two turns long enough to use.
    #[error("no usable conversations")]
    NoUsableConversations,
    /// A trace for `--dataset trace` that cannot be replayed.
    #[error("trace")]
    Trace(#[source] trace::TraceError),
}
