//! An incremental Server-Sent Events parser over `bytes`, and the allocation-free decoding of
//! the streamed JSON chunks of the OpenAI-compatible APIs.
//!
//! The parser accepts the body in arbitrary pieces (events split across reads, several events in
//! one read, `\n` or `\r\n` line ends) and hands out each event's `data` without copying when the
//! event has a single `data:` line, which is what inference servers send. Chunk decoding borrows
//! from the event and only measures the text it sees, so the hot path allocates nothing per
//! token. Must not import app code.

use bytes::{Buf, BytesMut};
use serde::de::{self, Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::Deserialize;
use std::cell::RefCell;
use std::fmt;

/// Longest event accepted; a server that never ends an event must not exhaust memory.
pub const MAX_EVENT_BYTES: usize = 8 * 1024 * 1024;

/// Why a stream could not be parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SseError {
    /// An event grew past [`MAX_EVENT_BYTES`] without ending.
    EventTooLong,
}

/// Incremental SSE parser: [`push`](SseParser::push) bytes, then drain with
/// [`next_event`](SseParser::next_event).
#[derive(Debug, Default)]
pub struct SseParser {
    buf: BytesMut,
    /// Where to resume scanning for a line end, so a long event is scanned once.
    scan_from: usize,
    /// Data lines of the current event, used only when an event has several `data:` lines.
    data: Vec<u8>,
    /// Start and end of the single data line of the current event inside `buf`.
    single: Option<(usize, usize)>,
    /// Where the line being scanned starts inside `buf`.
    line_start_pos: usize,
    ready: Vec<u8>,
}

impl SseParser {
    /// A parser with an empty buffer.
    pub fn new() -> Self {
        Self::default()
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet part of a complete event.
    pub fn pending(&self) -> usize {
        self.buf.len()
    }

    /// The next complete event's data (the `data:` lines joined by `\n`), `Ok(None)` when more
    /// bytes are needed. Events without data (comments, keep-alives) are skipped.
    pub fn next_event(&mut self) -> Result<Option<&[u8]>, SseError> {
        loop {
            let Some(rel) = memchr_nl(&self.buf[self.scan_from..]) else {
                self.scan_from = self.buf.len();
                if self.buf.len() > MAX_EVENT_BYTES {
                    return Err(SseError::EventTooLong);
                }
                return Ok(None);
            };
            let nl = self.scan_from + rel;
            let mut end = nl;
            if end > 0 && self.buf[end - 1] == b'\r' {
                end -= 1;
            }
            let line_start = self.line_start();
            self.scan_from = nl + 1;
            if end == line_start {
                // A blank line ends the event.
                let had_data = self.single.is_some() || !self.data.is_empty();
                if !had_data {
                    self.reset_event();
                    continue;
                }
                self.ready.clear();
                if self.data.is_empty() {
                    if let Some((s, e)) = self.single {
                        self.ready.extend_from_slice(&self.buf[s..e]);
                    }
                } else {
                    std::mem::swap(&mut self.ready, &mut self.data);
                }
                self.reset_event();
                return Ok(Some(&self.ready));
            }
            self.line_start_pos = self.scan_from;
            let line = &self.buf[line_start..end];
            let value_at = |name: &[u8]| -> Option<usize> {
                let rest = line.strip_prefix(name)?;
                let rest = rest.strip_prefix(b":")?;
                Some(line_start + name.len() + 1 + usize::from(rest.first() == Some(&b' ')))
            };
            if let Some(v) = value_at(b"data") {
                match self.single.take() {
                    None if self.data.is_empty() => self.single = Some((v, end)),
                    prev => {
                        if let Some((s, e)) = prev {
                            let first = self.buf[s..e].to_vec();
                            self.data.extend_from_slice(&first);
                        }
                        self.data.push(b'\n');
                        let more = self.buf[v..end].to_vec();
                        self.data.extend_from_slice(&more);
                    }
                }
            }
            // Other fields (event:, id:, retry:, comments) carry nothing we measure.
        }
    }

    fn line_start(&self) -> usize {
        self.line_start_pos
    }

    fn reset_event(&mut self) {
        // Drop the consumed event from the buffer; cheap because BytesMut advances in place.
        let consumed = self.scan_from;
        self.buf.advance(consumed);
        self.scan_from = 0;
        self.line_start_pos = 0;
        self.single = None;
        self.data.clear();
    }
}

fn memchr_nl(hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&b| b == b'\n')
}

/// What one streamed chunk said, measured without allocating.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ChunkInfo {
    /// Bytes of generated text in the chunk: completion `text`; chat `delta.content`, reasoning
    /// (`delta.reasoning_content` or `delta.reasoning`) and tool-call deltas (function name and
    /// arguments); TGI `token.text`; SGLang's cumulative `text`.
    pub text_bytes: usize,
    /// The chunk ends the generation: a non-null `finish_reason` (TGI: `details`; SGLang:
    /// `meta_info.finish_reason`).
    pub finished: bool,
    /// Whether the chunk carried a `choices` entry / token at all.
    pub has_choice: bool,
    /// Cumulative completion tokens reported by the server in this chunk, if any.
    pub completion_tokens: Option<u64>,
    /// Prompt tokens reported by the server in this chunk, if any.
    pub prompt_tokens: Option<u64>,
    /// The server put an error object in the stream.
    pub error: bool,
    /// TGI: the token is special (not text).
    pub special: bool,
    /// A usage count was no token count (negative, fractional, huge, text): ignored.
    pub usage_ignored: bool,
}

/// Most tokens a usage count may say: more is no count of this request (a chunk's tokens are
/// kept as `u32`).
pub const MAX_USAGE_TOKENS: u64 = u32::MAX as u64;

/// A usage count as the server wrote it: a token count, or something that cannot be one
/// (`-1`, `1e308`, `2.5`, `"NaN"`, an object), which is ignored rather than failing the chunk
/// and with it a good stream.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Count {
    Tokens(u64),
    Absurd,
}

impl Count {
    fn of_f64(v: f64) -> Count {
        if v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= MAX_USAGE_TOKENS as f64 {
            Count::Tokens(v as u64)
        } else {
            Count::Absurd
        }
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Count;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a token count")
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Count, E> {
                Ok(if v <= MAX_USAGE_TOKENS {
                    Count::Tokens(v)
                } else {
                    Count::Absurd
                })
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Count, E> {
                Ok(u64::try_from(v).map_or(Count::Absurd, |v| {
                    self.visit_u64::<E>(v).unwrap_or(Count::Absurd)
                }))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Count, E> {
                Ok(Count::of_f64(v))
            }
            fn visit_str<E: de::Error>(self, _: &str) -> Result<Count, E> {
                Ok(Count::Absurd)
            }
            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Count, E> {
                Ok(Count::Absurd)
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Count, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Count::Absurd)
            }
            fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Count, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Count::Absurd)
            }
        }
        d.deserialize_any(V)
    }
}

/// A usage count's tokens; an absurd one is `None` and sets `ignored`.
fn count(c: Option<Count>, ignored: &mut bool) -> Option<u64> {
    match c? {
        Count::Tokens(n) => Some(n),
        Count::Absurd => {
            *ignored = true;
            None
        }
    }
}

thread_local! {
    /// Where the decoders append the generated text they see, while [`capture`] runs.
    static SINK: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Runs a chunk decoder with `text` receiving the generated text it sees (appended; escapes
/// decoded). A thread-local keeps the decoders' signatures and the no-capture path unchanged.
pub fn capture<T>(text: &mut String, decode: impl FnOnce() -> T) -> T {
    SINK.with(|s| *s.borrow_mut() = Some(std::mem::take(text)));
    let out = decode();
    SINK.with(|s| {
        if let Some(t) = s.borrow_mut().take() {
            *text = t;
        }
    });
    out
}

/// Parses a chunk as JSON; a chunk that is not JSON only because of a bare `NaN`, `Infinity` or
/// `-Infinity` (Python's `json.dumps` writes them) is parsed again with those made strings, so
/// an absurd usage count they stand in is ignored like `"NaN"` instead of failing the stream as
/// `malformed_sse`. The retry only runs on a chunk that failed, so good chunks cost nothing
/// more; text the failed attempt captured is taken back first.
fn parse_chunk<T: serde::de::DeserializeOwned>(data: &[u8]) -> Option<T> {
    let captured = SINK.with(|s| s.borrow().as_ref().map(String::len));
    match serde_json::from_slice(data) {
        Ok(v) => Some(v),
        Err(_) => {
            let text = std::str::from_utf8(data).ok()?;
            let rewritten = crate::ingest::rewrite_non_finite(text);
            if matches!(rewritten, std::borrow::Cow::Borrowed(_)) {
                return None;
            }
            SINK.with(|s| {
                if let (Some(t), Some(n)) = (s.borrow_mut().as_mut(), captured) {
                    t.truncate(n);
                }
            });
            serde_json::from_str(&rewritten).ok()
        }
    }
}

/// Length of a JSON string without keeping it (but see [`capture`]).
#[derive(Clone, Copy, Debug, Default)]
struct StrLen(usize);

impl<'de> Deserialize<'de> for StrLen {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl Visitor<'_> for V {
            type Value = StrLen;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a string or null")
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<StrLen, E> {
                SINK.with(|s| {
                    if let Some(t) = s.borrow_mut().as_mut() {
                        t.push_str(v);
                    }
                });
                Ok(StrLen(v.len()))
            }
            fn visit_unit<E: de::Error>(self) -> Result<StrLen, E> {
                Ok(StrLen(0))
            }
            fn visit_none<E: de::Error>(self) -> Result<StrLen, E> {
                Ok(StrLen(0))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize, Default)]
struct Delta {
    #[serde(default)]
    content: StrLen,
    /// vLLM (before 0.10), DeepSeek, SGLang, llama.cpp.
    #[serde(default)]
    reasoning_content: StrLen,
    /// vLLM (0.10 and later), Ollama.
    #[serde(default)]
    reasoning: StrLen,
    #[serde(default)]
    tool_calls: ToolCalls,
}

/// Streamed tool calls: the bytes of function names and arguments, which the model generates.
#[derive(Default)]
struct ToolCalls(usize);

impl<'de> Deserialize<'de> for ToolCalls {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize, Default)]
        struct Function {
            #[serde(default)]
            name: StrLen,
            #[serde(default)]
            arguments: StrLen,
        }
        #[derive(Deserialize)]
        struct Call {
            #[serde(default)]
            function: Option<Function>,
        }
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = ToolCalls;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of tool calls or null")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<ToolCalls, A::Error> {
                let mut n = 0;
                while let Some(c) = seq.next_element::<Call>()? {
                    let f = c.function.unwrap_or_default();
                    n += f.name.0 + f.arguments.0;
                }
                Ok(ToolCalls(n))
            }
            fn visit_unit<E: de::Error>(self) -> Result<ToolCalls, E> {
                Ok(ToolCalls(0))
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct Choice {
    #[serde(default)]
    text: StrLen,
    #[serde(default)]
    delta: Option<Delta>,
    /// `null` while generating; any value ends the choice.
    #[serde(default)]
    finish_reason: Option<IgnoredAny>,
}

/// The first choice's text length and whether any choice was present, without a Vec.
#[derive(Default)]
struct Choices {
    any: bool,
    text_bytes: usize,
    finished: bool,
}

impl<'de> Deserialize<'de> for Choices {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Choices;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a list of choices")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Choices, A::Error> {
                let mut out = Choices::default();
                while let Some(c) = seq.next_element::<Choice>()? {
                    if !out.any {
                        let d = c.delta.unwrap_or_default();
                        out.text_bytes = c.text.0
                            + d.content.0
                            + d.reasoning_content.0
                            + d.reasoning.0
                            + d.tool_calls.0;
                        out.finished = c.finish_reason.is_some();
                    }
                    out.any = true;
                }
                Ok(out)
            }
            fn visit_unit<E: de::Error>(self) -> Result<Choices, E> {
                Ok(Choices::default())
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct Usage {
    #[serde(default)]
    prompt_tokens: Option<Count>,
    #[serde(default)]
    completion_tokens: Option<Count>,
}

#[derive(Deserialize)]
struct OpenAiChunk {
    #[serde(default)]
    choices: Choices,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// Decodes an OpenAI completions or chat-completions stream chunk. `None` when it is not JSON
/// of that shape.
pub fn decode_openai(data: &[u8]) -> Option<ChunkInfo> {
    let c: OpenAiChunk = parse_chunk(data)?;
    let usage = c.usage.as_ref();
    let mut usage_ignored = false;
    let completion_tokens = count(usage.and_then(|u| u.completion_tokens), &mut usage_ignored);
    let prompt_tokens = count(usage.and_then(|u| u.prompt_tokens), &mut usage_ignored);
    Some(ChunkInfo {
        text_bytes: c.choices.text_bytes,
        finished: c.choices.finished,
        has_choice: c.choices.any,
        completion_tokens,
        prompt_tokens,
        error: c.error.is_some(),
        special: false,
        usage_ignored,
    })
}

/// The model an OpenAI-style chunk names (`"model"`), if any. Read from a reply's first event
/// only, so it costs one parse a request.
pub fn model_named(data: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct ModelField<'a> {
        #[serde(borrow, default)]
        model: Option<std::borrow::Cow<'a, str>>,
    }
    let m: ModelField = serde_json::from_slice(data).ok()?;
    m.model.map(|m| m.chars().take(200).collect())
}

#[derive(Deserialize)]
struct TgiToken {
    #[serde(default)]
    text: StrLen,
    #[serde(default)]
    special: bool,
}

#[derive(Deserialize)]
struct TgiDetails {
    #[serde(default)]
    generated_tokens: Option<Count>,
}

#[derive(Deserialize)]
struct TgiChunk {
    #[serde(default)]
    token: Option<TgiToken>,
    #[serde(default)]
    details: Option<TgiDetails>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// Decodes a TGI `/generate_stream` event (one token per event).
pub fn decode_tgi(data: &[u8]) -> Option<ChunkInfo> {
    let c: TgiChunk = parse_chunk(data)?;
    let token = c.token.as_ref();
    let mut usage_ignored = false;
    let generated = c.details.as_ref().and_then(|d| d.generated_tokens);
    let completion_tokens = count(generated, &mut usage_ignored);
    Some(ChunkInfo {
        text_bytes: token.map_or(0, |t| t.text.0),
        // The last event carries `details` (with its finish reason).
        finished: c.details.as_ref().is_some(),
        has_choice: token.is_some(),
        completion_tokens,
        prompt_tokens: None,
        error: c.error.is_some(),
        special: token.is_some_and(|t| t.special),
        usage_ignored,
    })
}

#[derive(Deserialize)]
struct SglMeta {
    #[serde(default)]
    prompt_tokens: Option<Count>,
    #[serde(default)]
    completion_tokens: Option<Count>,
    /// `null` while generating, `{"type": "length", ...}` at the end.
    #[serde(default)]
    finish_reason: Option<IgnoredAny>,
}

#[derive(Deserialize)]
struct SglChunk {
    #[serde(default)]
    text: StrLen,
    #[serde(default)]
    meta_info: Option<SglMeta>,
    #[serde(default)]
    error: Option<IgnoredAny>,
}

/// Decodes an SGLang native `/generate` stream event (cumulative text and token counts).
pub fn decode_sglang(data: &[u8]) -> Option<ChunkInfo> {
    let c: SglChunk = parse_chunk(data)?;
    let meta = c.meta_info.as_ref();
    let mut usage_ignored = false;
    let completion_tokens = count(meta.and_then(|m| m.completion_tokens), &mut usage_ignored);
    let prompt_tokens = count(meta.and_then(|m| m.prompt_tokens), &mut usage_ignored);
    Some(ChunkInfo {
        text_bytes: c.text.0,
        finished: meta.is_some_and(|m| m.finish_reason.is_some()),
        has_choice: true,
        completion_tokens,
        prompt_tokens,
        error: c.error.is_some(),
        special: false,
        usage_ignored,
    })
}

#[cfg(test)]
mod tests;
