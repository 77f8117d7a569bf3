//! What is measured about one request: the [`RequestRecord`] the client fills while a reply
//! streams in, its chunks' arrivals, and why it failed ([`Failure`], [`FailureKind`]). Plain data
//! shared by the HTTP client (which writes it) and the statistics and reports (which read it), so
//! neither depends on the other. Must not import app code.

mod chunk_log;
mod spool;

pub use chunk_log::{ChunkLog, Iter as ChunkLogIter};
pub use spool::{decode_record, encode_record, EachRequest, RecordSpool, SpooledRecords};

/// Why a request failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FailureKind {
    /// The server refused the TCP connection.
    ConnectRefused,
    /// The TCP connection could not be made for another reason.
    Connect,
    /// The TCP connection (with its TLS handshake) took longer than `--connect-timeout`.
    ConnectTimeout,
    /// The TLS handshake failed (untrusted or invalid certificate, no common protocol, the
    /// server not agreeing to HTTP/2).
    Tls,
    /// The server answered with a non-2xx status.
    Http(u16),
    /// No first token within `--first-token-timeout`.
    FirstTokenTimeout,
    /// No bytes for `--idle-timeout` between tokens.
    IdleTimeout,
    /// The request took longer than `--request-timeout`.
    TotalTimeout,
    /// The stream ended before `[DONE]` or a chunk with a `finish_reason`.
    Truncated,
    /// A 2xx answer that is not an event stream (an HTML page, a JSON body from a server that
    /// ignored `stream`).
    NotAStream,
    /// The connection was reset by the peer.
    Reset,
    /// An event was not valid SSE or not the JSON the backend sends.
    MalformedSse,
    /// The server sent an error object in the stream.
    ServerError,
    /// A 2xx answer compressed with an encoding this client cannot decode (`br`, `zstd`), or
    /// gzip/deflate bytes that do not decode.
    CompressedStream,
    /// Another transport error.
    Io,
    /// The user interrupted the run (Ctrl-C) while the request was in flight: not the
    /// server's failure, and left out of the stage's figures.
    Cancelled,
}

impl FailureKind {
    /// A short snake_case name, used in metric names and the summary (`http_503`).
    pub fn name(self) -> String {
        match self {
            FailureKind::ConnectRefused => "connect_refused".into(),
            FailureKind::Connect => "connect".into(),
            FailureKind::ConnectTimeout => "connect_timeout".into(),
            FailureKind::Tls => "tls".into(),
            FailureKind::Http(s) => format!("http_{s}"),
            FailureKind::FirstTokenTimeout => "first_token_timeout".into(),
            FailureKind::IdleTimeout => "idle_timeout".into(),
            FailureKind::TotalTimeout => "total_timeout".into(),
            FailureKind::Truncated => "truncated_stream".into(),
            FailureKind::NotAStream => "not_a_stream".into(),
            FailureKind::Reset => "reset".into(),
            FailureKind::MalformedSse => "malformed_sse".into(),
            FailureKind::ServerError => "server_error_event".into(),
            FailureKind::CompressedStream => "compressed_stream".into(),
            FailureKind::Io => "io".into(),
            FailureKind::Cancelled => "cancelled".into(),
        }
    }

    /// The kind a [`name`](FailureKind::name) stands for (per-request files read back).
    pub fn from_name(name: &str) -> Option<FailureKind> {
        if let Some(code) = name.strip_prefix("http_") {
            return code.parse().ok().map(FailureKind::Http);
        }
        [
            FailureKind::ConnectRefused,
            FailureKind::Connect,
            FailureKind::ConnectTimeout,
            FailureKind::Tls,
            FailureKind::FirstTokenTimeout,
            FailureKind::IdleTimeout,
            FailureKind::TotalTimeout,
            FailureKind::Truncated,
            FailureKind::NotAStream,
            FailureKind::Reset,
            FailureKind::MalformedSse,
            FailureKind::ServerError,
            FailureKind::CompressedStream,
            FailureKind::Io,
            FailureKind::Cancelled,
        ]
        .into_iter()
        .find(|k| k.name() == name)
    }
}

/// A failed request: the kind and a message naming what happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure {
    /// What kind of failure.
    pub kind: FailureKind,
    /// Details (status line with body snippet, system error).
    pub message: String,
}

impl Failure {
    /// A failure of `kind` described by `message`.
    pub fn new(kind: FailureKind, message: impl Into<String>) -> Failure {
        Failure {
            kind,
            message: message.into(),
        }
    }
}

/// One streamed chunk as seen by the client.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ChunkArrival {
    /// Seconds after the request was written to the socket.
    pub at_s: f64,
    /// Output tokens in the chunk (from the server's running usage when it reports one, else 1).
    pub tokens: u32,
    /// The chunk came in the same read as the previous text chunk: the gap between them was
    /// not observed (the client read too late to tell them apart).
    pub coalesced: bool,
}

/// Everything measured about one request. Times are seconds; `*_at_s` are relative to the stage
/// start, durations relative to the actual send.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RequestRecord {
    /// Index within the stage.
    pub index: usize,
    /// Prompt tokens as the client counted them.
    pub input_len: u64,
    /// Output tokens asked for.
    pub max_tokens: u64,
    /// Scheduled send time.
    pub intended_at_s: f64,
    /// When the dispatcher woke for it.
    pub dispatched_at_s: f64,
    /// The client's scheduling lag (see [`super::schedule::Dispatch::lag`]).
    pub schedule_lag_s: f64,
    /// When it was actually sent (after waiting for a concurrency slot).
    pub sent_at_s: f64,
    /// Time to the first token-bearing chunk: from the write syscall that put the request on
    /// the wire to when the chunk reached the client's socket (the kernel's receive stamp, see
    /// [`super::stamp`]). Neither end includes the client's own queueing.
    pub ttft_s: Option<f64>,
    /// From `sent_at_s` to the write syscall of the request: connection checkout or connect,
    /// and the client's own scheduling. Not in TTFT/E2EL; in the from-intended figures.
    pub write_delay_s: Option<f64>,
    /// How long the first response bytes waited in the socket before the client read them:
    /// client-side queueing, left out of TTFT and ITL.
    pub first_read_delay_s: Option<f64>,
    /// Token-bearing chunks, in arrival order (packed, about 4 bytes each).
    pub chunks: ChunkLog,
    /// Time from the request's write to the end of the stream reaching the socket (successful
    /// requests only).
    pub e2el_s: Option<f64>,
    /// Completion tokens reported by the server's usage.
    pub output_tokens_server: Option<u64>,
    /// Prompt tokens reported by the server's usage.
    pub input_tokens_server: Option<u64>,
    /// Token-bearing chunks counted by the client.
    pub output_chunks_local: u64,
    /// Token-bearing chunks that came in the same read as the one before (see
    /// [`ChunkArrival::coalesced`]).
    pub coalesced_chunks: u64,
    /// The request asked the server to ignore end-of-sequence: fewer tokens than `max_tokens`
    /// is then a short reply.
    pub ignore_eos: bool,
    /// The stream ended with `[DONE]` but no chunk gave a `finish_reason`: the server may
    /// have cut the reply off (llama-cpp-python does so when another request arrives).
    pub finish_reason_missing: bool,
    /// The request was sent again on a new connection: its first, pooled connection closed
    /// before one byte of an answer came (the server had closed it while idle), so the server
    /// never answered it. Not a failure of the server.
    pub retried_unsent: bool,
    /// The server's usage held values that are no token counts (negative, fractional, huge,
    /// text such as `"NaN"`): they were ignored, the client's counts used.
    pub usage_ignored: bool,
    /// The model the reply's first chunk named (OpenAI-style backends), checked against
    /// `--model` in the summary; not kept in the result files.
    pub server_model: Option<String>,
    /// The generated text, as received.
    pub generated_text: String,
    /// Tokens in `generated_text` by the run's tokenizer (counted after the stage, off the
    /// measurement path).
    pub output_tokens_text: Option<u64>,
    /// Why it failed, if it did.
    pub failure: Option<Failure>,
    /// `--multi-turn`: which turn of which conversation this request is.
    pub turn: Option<TurnOf>,
}

/// Where a request stands in a multi-turn conversation.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TurnOf {
    /// The conversation's number in the run (as requests are numbered without `--multi-turn`).
    pub conversation: usize,
    /// The turn, from 0.
    pub turn: usize,
    /// Tokens of the turn's new user text (the rest of `input_len` is the history).
    pub new_input_len: u64,
    /// Seconds the client waited after the previous turn's reply ended (0 for the first turn).
    pub think_time_s: f64,
}

impl RequestRecord {
    /// Output tokens: the server's count when it gave one, else the client's.
    pub fn output_tokens(&self) -> u64 {
        self.output_tokens_server
            .unwrap_or_else(|| self.chunks.tokens())
    }

    /// Input tokens: the server's count when it gave one, else the client's.
    pub fn input_tokens(&self) -> u64 {
        self.input_tokens_server.unwrap_or(self.input_len)
    }

    /// How a successful reply's length compares with what was asked (`None` when as asked, or
    /// failed).
    pub fn length_flag(&self) -> Option<LengthFlag> {
        if self.failure.is_some() || self.max_tokens == 0 {
            return None;
        }
        let out = self.output_tokens();
        if out > self.max_tokens {
            Some(LengthFlag::OverLength)
        } else if self.ignore_eos && out < self.max_tokens {
            Some(LengthFlag::ShortReply)
        } else {
            None
        }
    }
}

/// A reply whose length is not what was asked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LengthFlag {
    /// More output tokens than `max_tokens`: the server ignored the length limit.
    OverLength,
    /// Fewer output tokens than `max_tokens` although `--ignore-eos` asked for all of them: the
    /// server does not honour `ignore_eos`.
    ShortReply,
}

impl LengthFlag {
    /// `over_length` or `short_reply`.
    pub fn name(self) -> &'static str {
        match self {
            LengthFlag::OverLength => "over_length",
            LengthFlag::ShortReply => "short_reply",
        }
    }
}

/// The first 200 characters of a body, on one line: what failure messages quote of a reply.
pub fn snippet(text: &str) -> String {
    let one_line: String = text
        .chars()
        .take(200)
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    one_line.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_kind_names() {
        assert_eq!(FailureKind::Http(503).name(), "http_503");
        assert_eq!(FailureKind::Truncated.name(), "truncated_stream");
        assert_eq!(FailureKind::NotAStream.name(), "not_a_stream");
    }

    #[test]
    fn snippets_are_one_trimmed_line_of_at_most_200_characters() {
        assert_eq!(
            snippet("  <html>\n<body>oops</body>\r\n"),
            "<html> <body>oops</body>"
        );
        assert_eq!(snippet(&"é".repeat(300)).chars().count(), 200);
    }
}
