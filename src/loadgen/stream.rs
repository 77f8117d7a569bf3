//! What one streamed answer says, read by read: the SSE events of a body turned into the
//! request's token chunks, server counts, completion and failures. Pure (no I/O, no clock): the
//! client feeds it each read with the time its bytes reached the socket, so every stream shape
//! can be tested from recorded bytes.
//!
//! The rules, for every backend:
//! - A stream is complete when `data: [DONE]` arrives, or when the body ends after a chunk with
//!   a `finish_reason` (some servers never send `[DONE]`). A body that ends before either is
//!   `truncated_stream`.
//! - Only a chunk with generated text (content, reasoning, tool-call names and arguments) is a
//!   timing point. Role-only deltas, empty deltas, usage-only chunks and a final chunk with an
//!   empty delta and the usage are not tokens, so TTFT is the first content, not the first
//!   chunk, and such chunks never inflate the inter-token gaps.
//! - Token counts come from the server's usage when it reports one. A text chunk carries the
//!   growth of a running (cumulative) usage count only while every text chunk so far carried
//!   one; otherwise one token (a total given only at the end says nothing about one chunk).
//! - A text chunk whose bytes came in the same read as the previous text chunk's is marked
//!   `coalesced`: the gap between them was not observed.
//! - A 2xx answer that is not an event stream (an HTML page, a JSON body from a server that
//!   ignored `stream`) is `not_a_stream`, with its content type and first bytes.
//!
//! Must not import app code.

use super::client::Backend;
use super::record::{ChunkArrival, Failure, FailureKind, RequestRecord};
use super::sse::{self, SseParser};

/// Bytes of a non-stream answer quoted in its failure message.
const QUOTED_BYTES: usize = 200;

/// Bytes of a read given to the SSE parser at a time (see [`StreamAccount::push`]'s `feed`).
const FEED_BYTES: usize = 1024;

/// Whether more reads are wanted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Keep reading.
    More,
    /// `[DONE]` arrived: the stream is complete.
    Done,
}

/// The state of one streamed answer.
#[derive(Debug)]
pub struct StreamAccount {
    backend: Backend,
    url: String,
    parser: SseParser,
    /// `None` until the body is known to be an event stream (by its content type or first bytes).
    content_type: Option<String>,
    is_stream: bool,
    /// Bytes held while deciding whether the body is an event stream.
    head: Vec<u8>,
    /// Tokens given to text chunks so far.
    counted: u64,
    /// Every text chunk so far carried a running usage count.
    continuous: bool,
    /// SGLang: length of the cumulative text so far.
    sglang_text: usize,
    finished: bool,
    done: bool,
    /// At least one event came (even one without text).
    saw_event: bool,
    /// Arrival (seconds after the request's write) of the last text chunk.
    last_text_at: Option<f64>,
    /// The first event was read for the model it names.
    model_read: bool,
}

impl StreamAccount {
    /// An account for one answer of `backend` from `url`, with the answer's `Content-Type`.
    pub fn new(backend: Backend, url: &str, content_type: Option<&str>) -> StreamAccount {
        let is_stream = content_type.is_some_and(|c| {
            c.split(';')
                .next()
                .is_some_and(|m| m.trim().eq_ignore_ascii_case("text/event-stream"))
        });
        StreamAccount {
            backend,
            url: url.to_string(),
            parser: SseParser::new(),
            content_type: content_type.map(str::to_string),
            is_stream,
            head: Vec::new(),
            counted: 0,
            continuous: true,
            sglang_text: 0,
            finished: false,
            done: false,
            saw_event: false,
            last_text_at: None,
            model_read: false,
        }
    }

    fn fail(&self, kind: FailureKind, message: String) -> Failure {
        Failure {
            kind,
            message: format!("{}: {message}", self.url),
        }
    }

    fn not_a_stream(&self) -> Failure {
        let quoted = super::record::snippet(&String::from_utf8_lossy(
            &self.head[..self.head.len().min(QUOTED_BYTES * 4)],
        ));
        let ct = self.content_type.as_deref().unwrap_or("(none)");
        self.fail(
            FailureKind::NotAStream,
            format!("HTTP 200 but not an event stream: Content-Type {ct}, body starts {quoted:?}"),
        )
    }

    /// Feeds the bytes of one read that reached the socket `at_s` seconds after the request's
    /// write. Fills `rec` (text, chunks, TTFT, server counts).
    pub fn push(
        &mut self,
        data: &[u8],
        at_s: f64,
        rec: &mut RequestRecord,
    ) -> Result<Flow, Failure> {
        if self.done {
            return Ok(Flow::Done);
        }
        if !self.is_stream {
            // A wrong or missing content type: the first bytes decide.
            self.head.extend_from_slice(data);
            match looks_like_sse(&self.head) {
                Some(true) => {
                    self.is_stream = true;
                    let held = std::mem::take(&mut self.head);
                    return self.feed(&held, at_s, rec);
                }
                Some(false) => return Err(self.not_a_stream()),
                // Blank bytes without end must not grow without bound either.
                None if self.head.len() > sse::MAX_EVENT_BYTES => return Err(self.not_a_stream()),
                None => return Ok(Flow::More),
            }
        }
        self.feed(data, at_s, rec)
    }

    /// Parses the bytes of one read [`FEED_BYTES`] at a time, taking each piece's complete
    /// events before the next piece is copied in: the parser then holds at most a piece and the
    /// event it ends inside, however much one read brought (a whole reply from a fast server).
    fn feed(&mut self, data: &[u8], at_s: f64, rec: &mut RequestRecord) -> Result<Flow, Failure> {
        for piece in data.chunks(FEED_BYTES) {
            self.parser.push(piece);
            if self.events(at_s, rec)? == Flow::Done {
                return Ok(Flow::Done);
            }
        }
        Ok(Flow::More)
    }

    /// Takes the complete events the parser holds.
    fn events(&mut self, at_s: f64, rec: &mut RequestRecord) -> Result<Flow, Failure> {
        loop {
            let event = match self.parser.next_event() {
                Ok(Some(e)) => e,
                Ok(None) => return Ok(Flow::More),
                Err(_) => {
                    return Err(self.fail(
                        FailureKind::MalformedSse,
                        format!("event longer than {} bytes", sse::MAX_EVENT_BYTES),
                    ))
                }
            };
            self.saw_event = true;
            if event.trim_ascii() == b"[DONE]" {
                self.done = true;
                return Ok(Flow::Done);
            }
            let backend = self.backend;
            if !self.model_read && matches!(backend, Backend::OpenAi | Backend::OpenAiChat) {
                self.model_read = true;
                rec.server_model = sse::model_named(event);
            }
            let decoded = if backend == Backend::Sglang {
                // SGLang resends the whole text so far: keep the latest, do not append.
                let mut so_far = String::new();
                let info = sse::capture(&mut so_far, || decode(backend, event));
                if !so_far.is_empty() {
                    rec.generated_text = so_far;
                }
                info
            } else {
                sse::capture(&mut rec.generated_text, || decode(backend, event))
            };
            let Some(info) = decoded else {
                let shown = String::from_utf8_lossy(&event[..event.len().min(120)]).into_owned();
                return Err(self.fail(
                    FailureKind::MalformedSse,
                    format!("unexpected event data {shown:?}"),
                ));
            };
            if info.error {
                let shown = String::from_utf8_lossy(&event[..event.len().min(200)]).into_owned();
                return Err(self.fail(FailureKind::ServerError, shown));
            }
            rec.usage_ignored |= info.usage_ignored;
            if info.prompt_tokens.is_some() {
                rec.input_tokens_server = info.prompt_tokens;
            }
            if let Some(cum) = info.completion_tokens {
                let best = rec.output_tokens_server.unwrap_or(0).max(cum);
                rec.output_tokens_server = Some(best);
            }
            self.finished |= info.finished;
            let new_text = if backend == Backend::Sglang {
                let grew = info.text_bytes > self.sglang_text;
                self.sglang_text = self.sglang_text.max(info.text_bytes);
                grew
            } else {
                info.text_bytes > 0
            };
            if !(info.has_choice && new_text && !info.special) {
                continue;
            }
            rec.output_chunks_local += 1;
            let tokens = match (backend, info.completion_tokens) {
                // TGI: one token per event; its generated_tokens is only the final total.
                (Backend::Tgi, _) => 1,
                (_, Some(cum)) if self.continuous => cum.saturating_sub(self.counted).max(1),
                (_, _) => {
                    self.continuous = false;
                    1
                }
            };
            self.counted += tokens;
            let coalesced = self.last_text_at == Some(at_s);
            rec.coalesced_chunks += u64::from(coalesced);
            if rec.ttft_s.is_none() {
                rec.ttft_s = Some(at_s);
            }
            rec.chunks.push(ChunkArrival {
                at_s,
                tokens: tokens.min(u64::from(u32::MAX)) as u32,
                coalesced,
            });
            self.last_text_at = Some(at_s);
        }
    }

    /// The body ended: complete after `[DONE]` or a finish reason, else the failure.
    pub fn end(&mut self, rec: &mut RequestRecord) -> Result<(), Failure> {
        if !self.is_stream {
            return Err(self.not_a_stream());
        }
        if self.done || self.finished {
            // TGI and SGLang streams carry no OpenAI finish_reason of their own to miss.
            rec.finish_reason_missing =
                !self.finished && matches!(self.backend, Backend::OpenAi | Backend::OpenAiChat);
            return Ok(());
        }
        if !self.saw_event {
            return Err(self.fail(
                FailureKind::Truncated,
                "HTTP 200 with an empty event stream (no data event at all): the server failed after sending its headers (a prompt longer than its context does this on llama-cpp-python)".into(),
            ));
        }
        Err(self.fail(
            FailureKind::Truncated,
            format!(
                "stream ended after {} text chunk(s) without a finish_reason or [DONE]",
                rec.chunks.len()
            ),
        ))
    }
}

fn decode(backend: Backend, data: &[u8]) -> Option<sse::ChunkInfo> {
    match backend {
        Backend::OpenAi | Backend::OpenAiChat => sse::decode_openai(data),
        Backend::Tgi => sse::decode_tgi(data),
        Backend::Sglang => sse::decode_sglang(data),
    }
}

/// Whether a body starts like an event stream: `Some(true)` when its first non-blank bytes are
/// an SSE field (`data:`, `event:`, `id:`, `retry:`) or a comment, `Some(false)` when they cannot
/// become one, `None` while too few bytes came to tell.
pub fn looks_like_sse(head: &[u8]) -> Option<bool> {
    let start = head.iter().position(|b| !b.is_ascii_whitespace())?;
    let p = &head[start..];
    const FIELDS: [&[u8]; 5] = [b"data:", b"event:", b"id:", b"retry:", b":"];
    if FIELDS.iter().any(|f| p.starts_with(f)) {
        return Some(true);
    }
    if FIELDS.iter().any(|f| f.starts_with(p)) {
        return None;
    }
    Some(false)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn feed(
        backend: Backend,
        ct: Option<&str>,
        reads: &[(&str, f64)],
    ) -> (RequestRecord, Result<(), Failure>) {
        let mut a = StreamAccount::new(backend, "http://x/v1", ct);
        let mut rec = RequestRecord::default();
        for (bytes, at) in reads {
            match a.push(bytes.as_bytes(), *at, &mut rec) {
                Err(f) => return (rec, Err(f)),
                Ok(Flow::Done) => {
                    let end = a.end(&mut rec);
                    return (rec, end);
                }
                Ok(Flow::More) => {}
            }
        }
        let end = a.end(&mut rec);
        (rec, end)
    }

    const SSE: Option<&str> = Some("text/event-stream; charset=utf-8");

    #[test]
    fn sse_sniffing() {
        assert_eq!(looks_like_sse(b"  \r\n"), None);
        assert_eq!(looks_like_sse(b"da"), None);
        assert_eq!(looks_like_sse(b"data: x"), Some(true));
        assert_eq!(looks_like_sse(b": ping\n\n"), Some(true));
        assert_eq!(looks_like_sse(b"<!DOCTYPE html>"), Some(false));
        assert_eq!(looks_like_sse(b"{\"id\":1}"), Some(false));
    }

    #[test]
    fn an_answer_that_is_not_a_stream_is_named_with_its_first_bytes() {
        let (_, end) = feed(
            Backend::OpenAi,
            None,
            &[("\n  \n", 0.1), ("{\"object\":\"error\"}", 0.2)],
        );
        let f = end.unwrap_err();
        assert_eq!(f.kind, FailureKind::NotAStream);
        assert!(
            f.message.contains("Content-Type (none)") && f.message.contains("object"),
            "{}",
            f.message
        );
        // An empty body without a content type, and endless blank bytes.
        let (_, end) = feed(Backend::OpenAi, None, &[]);
        assert_eq!(end.unwrap_err().kind, FailureKind::NotAStream);
        let blanks = " ".repeat(sse::MAX_EVENT_BYTES + 1);
        let (_, end) = feed(Backend::OpenAi, Some("text/plain"), &[(&blanks, 0.1)]);
        assert_eq!(end.unwrap_err().kind, FailureKind::NotAStream);
    }

    #[test]
    fn a_stream_with_a_wrong_content_type_is_still_read() {
        let (rec, end) = feed(
            Backend::OpenAi,
            Some("application/json"),
            &[
                ("da", 0.1),
                (
                    "ta: {\"choices\":[{\"text\":\"a\",\"finish_reason\":\"length\"}]}\n\n",
                    0.2,
                ),
            ],
        );
        end.unwrap();
        assert_eq!(rec.ttft_s, Some(0.2));
    }

    #[test]
    fn cumulative_usage_splits_multi_token_chunks_until_a_chunk_lacks_it() {
        let ev = |text: &str, cum: u64| {
            format!("data: {{\"choices\":[{{\"text\":\"{text}\"}}],\"usage\":{{\"completion_tokens\":{cum}}}}}\n\n")
        };
        let (rec, end) = feed(
            Backend::OpenAi,
            SSE,
            &[
                (&ev("a", 1), 0.1),
                (&ev("bc", 3), 0.2),
                ("data: {\"choices\":[{\"text\":\"d\"}]}\n\n", 0.3),
                (&ev("e", 9), 0.4),
                ("data: [DONE]\n\n", 0.5),
            ],
        );
        end.unwrap();
        let tokens: Vec<u32> = rec.chunks.iter().map(|c| c.tokens).collect();
        assert_eq!(tokens, [1, 2, 1, 1]);
        assert_eq!(rec.output_tokens_server, Some(9));
    }

    #[test]
    fn chunks_in_one_read_are_marked_coalesced() {
        let one = "data: {\"choices\":[{\"text\":\"a\"}]}\n\n";
        let two = format!("{one}{one}");
        let (rec, _) = feed(
            Backend::OpenAi,
            SSE,
            &[(one, 0.1), (&two, 0.2), (one, 0.2), (one, 0.3)],
        );
        let flags: Vec<bool> = rec.chunks.iter().map(|c| c.coalesced).collect();
        assert_eq!(flags, [false, false, true, true, false]);
        assert_eq!(rec.coalesced_chunks, 2);
    }

    #[test]
    fn a_whole_reply_in_one_read_reads_as_its_events_one_by_one() {
        // Events of varied lengths, `\r\n` line ends and a two-line event, so events straddle
        // the pieces the parser is fed in.
        let mut events: Vec<String> = (0..300)
            .map(|i| {
                let text = "x".repeat(i % 37);
                format!("data: {{\"choices\":[{{\"text\":\"t{i}{text}\"}}]}}\r\n\r\n")
            })
            .collect();
        events.insert(
            150,
            "data: {\"choices\":\ndata: [{\"text\":\"two\"}]}\n\n".into(),
        );
        events.push(
            "data: {\"choices\":[{\"text\":\"end\",\"finish_reason\":\"length\"}]}\n\n".into(),
        );
        events.push("data: [DONE]\n\n".into());
        let whole = events.concat();
        assert!(whole.len() > 8 * FEED_BYTES);
        let (one, end) = feed(Backend::OpenAi, SSE, &[(&whole, 0.5)]);
        end.unwrap();
        let apart: Vec<(&str, f64)> = events
            .iter()
            .enumerate()
            .map(|(i, e)| (e.as_str(), i as f64))
            .collect();
        let (each, end) = feed(Backend::OpenAi, SSE, &apart);
        end.unwrap();
        assert_eq!(one.chunks.len(), 302);
        let mut text: Vec<String> = (0..300)
            .map(|i| format!("t{i}{}", "x".repeat(i % 37)))
            .collect();
        text.insert(150, "two".into());
        text.push("end".into());
        assert_eq!(one.generated_text, text.concat());
        assert_eq!(each.generated_text, text.concat());
        assert_eq!(one.output_chunks_local, each.output_chunks_local);
        // In one read every chunk after the first is coalesced; read apart, none is.
        assert_eq!((one.coalesced_chunks, each.coalesced_chunks), (301, 0));
        assert!(!one.finish_reason_missing);
    }

    #[test]
    fn done_without_a_finish_reason_is_complete_but_flagged() {
        let text = "data: {\"choices\":[{\"text\":\"a\"}]}\n\n";
        let (rec, end) = feed(
            Backend::OpenAi,
            SSE,
            &[(text, 0.1), ("data: [DONE]\n\n", 0.2)],
        );
        end.unwrap();
        assert!(rec.finish_reason_missing);
        let finished = "data: {\"choices\":[{\"text\":\"a\",\"finish_reason\":\"length\"}]}\n\n";
        let (rec, end) = feed(
            Backend::OpenAi,
            SSE,
            &[(finished, 0.1), ("data: [DONE]\n\n", 0.2)],
        );
        end.unwrap();
        assert!(!rec.finish_reason_missing);
    }

    #[test]
    fn the_first_event_names_the_model_and_absurd_usage_keeps_the_stream() {
        let (rec, end) = feed(
            Backend::OpenAiChat,
            SSE,
            &[
                (
                    "data: {\"model\":\"/models/q.gguf\",\"choices\":[{\"delta\":{\"content\":\"a\"}}],\"usage\":{\"prompt_tokens\":-1}}\n\n",
                    0.1,
                ),
                (
                    "data: {\"model\":\"other\",\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}]}\n\n",
                    0.2,
                ),
            ],
        );
        end.unwrap();
        assert_eq!(rec.server_model.as_deref(), Some("/models/q.gguf"));
        assert!(rec.usage_ignored);
        assert_eq!((rec.chunks.len(), rec.input_tokens_server), (2, None));
        // TGI's native stream names no model, and is not asked for one.
        let (rec, _) = feed(
            Backend::Tgi,
            SSE,
            &[(
                "data: {\"model\":\"x\",\"token\":{\"text\":\"a\"}}\n\n",
                0.1,
            )],
        );
        assert_eq!(rec.server_model, None);
    }

    #[test]
    fn bare_nan_usage_in_a_data_line_keeps_the_stream() {
        // Not JSON (Python's json.dumps writes a bare NaN): the usage is ignored with a warning,
        // the chunks and their times kept, the stream not thrown away as malformed_sse.
        let (rec, end) = feed(
            Backend::OpenAiChat,
            SSE,
            &[
                ("data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n", 0.1),
                (
                    "data: {\"choices\":[{\"delta\":{\"content\":\"b\"},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":NaN,\"completion_tokens\":Infinity}}\n\n",
                    0.2,
                ),
                ("data: [DONE]\n\n", 0.3),
            ],
        );
        end.unwrap();
        assert!(rec.usage_ignored);
        assert_eq!(rec.chunks.len(), 2);
        assert_eq!(
            (rec.input_tokens_server, rec.output_tokens_server),
            (None, None)
        );
    }

    #[test]
    fn an_empty_event_stream_says_so() {
        let (_, end) = feed(Backend::OpenAiChat, SSE, &[]);
        let f = end.unwrap_err();
        assert_eq!(f.kind, FailureKind::Truncated);
        assert!(f.message.contains("empty event stream"), "{}", f.message);
        // A stream that began and then stopped is a plain truncation.
        let role = "data: {\"choices\":[{\"delta\":{\"role\":\"assistant\"}}]}\n\n";
        let (_, end) = feed(Backend::OpenAiChat, SSE, &[(role, 0.1)]);
        let f = end.unwrap_err();
        assert!(
            f.message.contains("without a finish_reason"),
            "{}",
            f.message
        );
    }
}
