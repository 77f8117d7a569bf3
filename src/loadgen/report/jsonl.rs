//! The per-request JSON Lines beside the canonical result file (`<result>.requests.jsonl`):
//! one row per request ([`request_line`]), cancelled ones included. A stage's rows are in the
//! order its requests ended, each on disk within half a second of its end (see
//! `loadgen::run::sink`); `index` gives the send order.

use serde::{Serialize, Serializer};

use crate::loadgen::record::{ChunkLog, RequestRecord};

/// One JSON Lines row per request (`<result>.requests.jsonl`). Fields:
///
/// | field | meaning |
/// |---|---|
/// | `stage`, `index` | stage number and request index within it |
/// | `input_len`, `input_tokens_server` | prompt tokens by the client's tokenizer / the server's usage |
/// | `max_tokens` | output tokens asked for |
/// | `output_tokens_server`, `output_tokens_client`, `output_chunks_client` | output tokens by usage, by the client's tokenizer, and token-bearing chunks |
/// | `intended_send_s`, `dispatched_s`, `sent_s` | seconds after the stage start: scheduled, dispatcher woke, sent |
/// | `schedule_lag_ms` | the client's own lateness (see [`crate::loadgen::schedule::Dispatch::lag`]) |
/// | `ttft_ms`, `e2el_ms` | from the request's write syscall to the kernel's receive stamp; `null` when failed |
/// | `write_delay_ms` | `sent_s` to the write syscall of the request (checkout/connect, client scheduling; not in TTFT) |
/// | `read_delay_ms` | how long the first response bytes waited in the socket for the client (outside TTFT) |
/// | `chunks_ms_tokens` | `[ms after the request's write, tokens]` per token-bearing chunk |
/// | `coalesced_chunks` | of those, chunks that came in the same read as the one before (gap not observed) |
/// | `finish_reason_missing` | the stream ended with `[DONE]` but no `finish_reason` (maybe cut off by the server) |
/// | `retried_unsent` | only when true: sent again on a new connection, the pooled one having been closed by the server before answering |
/// | `usage_ignored` | only when true: the server's usage held values that are no token counts, ignored |
/// | `length_flag` | `over_length` (more tokens than asked), `short_reply` (fewer despite `--ignore-eos`) or `null` |
/// | `error_kind`, `error` | failure kind (`http_503`, `idle_timeout`...) and message, or `null` |
/// | `conversation`, `turn` | `--multi-turn` only: the conversation's number and the turn (from 0); rows of a stage are in the order requests ended (sort by `index` for send order), a conversation's turns in turn order |
/// | `turn_input_len` | `--multi-turn` only: tokens of the turn's new user text (`input_len` is the whole history) |
/// | `think_time_s` | `--multi-turn` only: seconds waited after the previous turn's reply ended (0 for turn 0) |
pub fn request_line(stage: usize, r: &RequestRecord) -> String {
    // Serialized straight from the record: the same text as a `serde_json::Value` of these keys
    // in this order (non-finite numbers as `null`), without building one per request.
    serde_json::to_string(&Row::new(stage, r)).unwrap_or_default()
}

/// The row's keys, in the file's order.
#[derive(Serialize)]
struct Row<'a> {
    stage: usize,
    index: usize,
    input_len: u64,
    input_tokens_server: Option<u64>,
    max_tokens: u64,
    output_tokens_server: Option<u64>,
    output_chunks_client: u64,
    output_tokens_client: Option<u64>,
    intended_send_s: f64,
    dispatched_s: f64,
    schedule_lag_ms: f64,
    sent_s: f64,
    ttft_ms: Option<f64>,
    e2el_ms: Option<f64>,
    write_delay_ms: Option<f64>,
    read_delay_ms: Option<f64>,
    chunks_ms_tokens: Chunks<'a>,
    coalesced_chunks: u64,
    length_flag: Option<&'static str>,
    finish_reason_missing: bool,
    #[serde(skip_serializing_if = "is_false")]
    retried_unsent: bool,
    #[serde(skip_serializing_if = "is_false")]
    usage_ignored: bool,
    error_kind: Option<String>,
    error: Option<&'a str>,
    /// Only multi-turn runs carry the conversation keys.
    #[serde(flatten, skip_serializing_if = "Option::is_none")]
    turn: Option<TurnKeys>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

#[derive(Serialize)]
struct TurnKeys {
    conversation: usize,
    turn: usize,
    turn_input_len: u64,
    think_time_s: f64,
}

/// `[[ms, tokens], ...]`.
struct Chunks<'a>(&'a ChunkLog);

impl Serialize for Chunks<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.0.iter().map(|c| (c.at_s * 1e3, c.tokens)))
    }
}

impl<'a> Row<'a> {
    fn new(stage: usize, r: &'a RequestRecord) -> Row<'a> {
        Row {
            stage,
            index: r.index,
            input_len: r.input_len,
            input_tokens_server: r.input_tokens_server,
            max_tokens: r.max_tokens,
            output_tokens_server: r.output_tokens_server,
            output_chunks_client: r.output_chunks_local,
            output_tokens_client: r.output_tokens_text,
            intended_send_s: r.intended_at_s,
            dispatched_s: r.dispatched_at_s,
            schedule_lag_ms: r.schedule_lag_s * 1e3,
            sent_s: r.sent_at_s,
            ttft_ms: r.ttft_s.map(|t| t * 1e3),
            e2el_ms: r.e2el_s.map(|t| t * 1e3),
            write_delay_ms: r.write_delay_s.map(|t| t * 1e3),
            read_delay_ms: r.first_read_delay_s.map(|t| t * 1e3),
            chunks_ms_tokens: Chunks(&r.chunks),
            coalesced_chunks: r.coalesced_chunks,
            length_flag: r.length_flag().map(|f| f.name()),
            finish_reason_missing: r.finish_reason_missing,
            retried_unsent: r.retried_unsent,
            usage_ignored: r.usage_ignored,
            error_kind: r.failure.as_ref().map(|f| f.kind.name()),
            error: r.failure.as_ref().map(|f| f.message.as_str()),
            turn: r.turn.map(|t| TurnKeys {
                conversation: t.conversation,
                turn: t.turn,
                turn_input_len: t.new_input_len,
                think_time_s: t.think_time_s,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::record::{ChunkArrival, Failure, FailureKind, TurnOf};
    use serde_json::{json, Value};

    /// The row as it was made before: a `serde_json::Value` built key by key.
    fn as_value(stage: usize, r: &RequestRecord) -> String {
        let chunks: Vec<Value> = r
            .chunks
            .iter()
            .map(|c| json!([c.at_s * 1e3, c.tokens]))
            .collect();
        let mut line = json!({
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
        });
        // Only multi-turn runs carry the conversation keys.
        if let (Some(t), Some(obj)) = (r.turn, line.as_object_mut()) {
            obj.insert("conversation".into(), json!(t.conversation));
            obj.insert("turn".into(), json!(t.turn));
            obj.insert("turn_input_len".into(), json!(t.new_input_len));
            obj.insert("think_time_s".into(), json!(t.think_time_s));
        }
        line.to_string()
    }

    #[test]
    fn rows_are_the_text_of_their_values() {
        let mut r = RequestRecord {
            index: 7,
            input_len: 12,
            max_tokens: 4,
            intended_at_s: 0.1,
            dispatched_at_s: 0.1000003,
            schedule_lag_s: 3e-7,
            sent_at_s: 0.25,
            ttft_s: Some(0.0123456789),
            write_delay_s: Some(f64::NAN),
            e2el_s: Some(1.0 / 3.0),
            output_tokens_server: Some(3),
            output_chunks_local: 2,
            coalesced_chunks: 1,
            ignore_eos: true,
            chunks: [
                ChunkArrival {
                    at_s: 0.0123456789,
                    tokens: 1,
                    coalesced: false,
                },
                ChunkArrival {
                    at_s: 0.02,
                    tokens: 2,
                    coalesced: true,
                },
            ]
            .into_iter()
            .collect(),
            ..RequestRecord::default()
        };
        assert_eq!(request_line(3, &r), as_value(3, &r));
        r.failure = Some(Failure::new(FailureKind::Http(503), "busy \"now\"\n"));
        r.turn = Some(TurnOf {
            conversation: 2,
            turn: 1,
            new_input_len: 5,
            think_time_s: 0.5,
        });
        r.output_tokens_text = Some(4);
        assert_eq!(request_line(0, &r), as_value(0, &r));
        let v: Value = serde_json::from_str(&request_line(0, &r)).unwrap();
        assert_eq!(v["write_delay_ms"], Value::Null);
        assert_eq!(v["turn_input_len"], json!(5));
    }
}
