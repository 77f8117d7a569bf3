//! The per-request JSON Lines beside the canonical result file (`<result>.requests.jsonl`):
//! one row per request ([`request_line`]), cancelled ones included.

use serde_json::{json, Value};

use crate::loadgen::record::RequestRecord;

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
/// | `length_flag` | `over_length` (more tokens than asked), `short_reply` (fewer despite `--ignore-eos`) or `null` |
/// | `error_kind`, `error` | failure kind (`http_503`, `idle_timeout`...) and message, or `null` |
/// | `conversation`, `turn` | `--multi-turn` only: the conversation's number and the turn (from 0); rows of a run are in send order, a conversation's turns in turn order |
/// | `turn_input_len` | `--multi-turn` only: tokens of the turn's new user text (`input_len` is the whole history) |
/// | `think_time_s` | `--multi-turn` only: seconds waited after the previous turn's reply ended (0 for turn 0) |
pub fn request_line(stage: usize, r: &RequestRecord) -> String {
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
