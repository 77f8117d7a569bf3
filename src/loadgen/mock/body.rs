//! The mock's reply bodies: the event stream ([`SseBody`], every chunk due on a schedule from
//! the request's start so it never drifts, written straight into the frame buffer, with the
//! stream faults acted out halfway through) and the whole JSON reply of a request that did not
//! ask to stream ([`complete_body`]). Chunks are shaped like vLLM's (completions, chat), TGI's
//! (one event per token, no `[DONE]`) and SGLang's (cumulative text and counts).

use std::fmt::Write as _;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use hyper::body::{Body, Frame};
use serde_json::json;
use tokio::sync::OwnedSemaphorePermit;
use tokio::time::Instant;

use super::config::Config;
use super::faults::Fault;
use super::generation::{Api, Generation};
use crate::loadgen::timer::PreciseTimer;

/// The words the mock generates, in turn.
const WORDS: [&str; 8] = [
    " the", " mock", " server", " says", " hello", " to", " you", " now",
];

/// The text of output token `i`.
fn token_text(i: u32) -> &'static str {
    WORDS[i as usize % WORDS.len()]
}

/// The whole reply of a request that did not ask to stream, in its API's format.
pub(super) fn complete_body(gen: &Generation, model: &str) -> Bytes {
    let text: String = (0..gen.completion_tokens).map(token_text).collect();
    let finish = gen.finish_reason();
    let usage = json!({"prompt_tokens": gen.prompt_tokens, "completion_tokens": gen.completion_tokens,
        "total_tokens": gen.prompt_tokens + gen.completion_tokens});
    let body = match gen.api {
        Api::Chat => {
            json!({"id": "chatcmpl-benchlens", "object": "chat.completion", "created": 0, "model": model,
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": finish}],
            "usage": usage})
        }
        Api::Completions => {
            json!({"id": "cmpl-benchlens", "object": "text_completion", "created": 0, "model": model,
            "choices": [{"index": 0, "text": text, "logprobs": null, "finish_reason": finish}],
            "usage": usage})
        }
        Api::Tgi => {
            json!([{"generated_text": text, "details": {"finish_reason": finish, "generated_tokens": gen.completion_tokens}}])
        }
        Api::Sglang => {
            json!({"text": text, "meta_info": {"prompt_tokens": gen.prompt_tokens, "completion_tokens": gen.completion_tokens}})
        }
    };
    Bytes::from(body.to_string())
}

/// The streamed body: emits every chunk that is due, then sleeps until the next one.
pub(super) struct SseBody {
    gen: Generation,
    cfg: Arc<Config>,
    next_chunk: u32,
    /// When the next chunk is due; advanced from the previous due time, never from "now".
    next_due: Instant,
    chunks: u32,
    phase: Phase,
    fault: Fault,
    /// The batch slot, released (and the running count lowered) when the body is dropped.
    slot: Option<OwnedSemaphorePermit>,
    /// When the request arrived, for the mock's own first-chunk latency.
    received: Instant,
}

impl Drop for SseBody {
    fn drop(&mut self) {
        if let (Some(_), Some(b)) = (self.slot.take(), &self.cfg.batch) {
            b.running.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

/// Where a streamed body is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// Token chunks are still due.
    Tokens,
    /// The usage chunk and `[DONE]` are next.
    Tail,
    /// Everything is sent.
    Done,
}

impl SseBody {
    /// A body whose first chunk is due `ttft` after `start`; it holds its batch `slot` (if
    /// any) until dropped.
    pub(super) fn new(
        gen: Generation,
        cfg: Arc<Config>,
        start: Instant,
        fault: Fault,
        slot: Option<OwnedSemaphorePermit>,
        received: Instant,
    ) -> SseBody {
        let chunks = gen.completion_tokens.div_ceil(cfg.tokens_per_chunk);
        if let (Some(_), Some(b)) = (&slot, &cfg.batch) {
            b.running.fetch_add(1, Ordering::Relaxed);
        }
        SseBody {
            next_due: start + cfg.ttft,
            gen,
            cfg,
            next_chunk: 0,
            fault,
            slot,
            received,
            chunks,
            phase: if chunks == 0 {
                Phase::Tail
            } else {
                Phase::Tokens
            },
        }
    }

    /// Time from one chunk to the next: `k × itl`, slowed by batch occupancy.
    fn step(&self) -> Duration {
        let base = self.cfg.itl * self.cfg.tokens_per_chunk;
        match &self.cfg.batch {
            Some(b) => {
                let running = f64::from(b.running.load(Ordering::Relaxed));
                base.mul_f64(1.0 + running / f64::from(b.max))
            }
            None => base,
        }
    }

    /// Writes chunk `chunk` in the API's format.
    fn write_chunk(&self, out: &mut BytesMut, chunk: u32) {
        let k = self.cfg.tokens_per_chunk;
        let first = chunk * k;
        let last = (first + k).min(self.gen.completion_tokens);
        if let Some(b) = &self.cfg.batch {
            b.generated_tokens
                .fetch_add(u64::from(last.saturating_sub(first)), Ordering::Relaxed);
        }
        let finish = if chunk + 1 == self.chunks {
            self.gen.finish_reason()
        } else {
            ""
        };
        let model = &self.cfg.model_json;
        // Written straight into the frame buffer: no intermediate strings on the hot path.
        match self.gen.api {
            Api::Completions | Api::Chat => {
                let chat = self.gen.api == Api::Chat;
                let (id, object) = if chat {
                    ("chatcmpl-benchlens", "chat.completion.chunk")
                } else {
                    ("cmpl-benchlens", "text_completion")
                };
                let _ = write!(
                    out,
                    "data: {{\"id\":\"{id}\",\"object\":\"{object}\",\"created\":0,\"model\":{model},\"choices\":[{{\"index\":0,"
                );
                out.extend_from_slice(if chat {
                    b"\"delta\":{\"role\":\"assistant\",\"content\":\""
                } else {
                    b"\"text\":\""
                });
                for i in first..last {
                    out.extend_from_slice(token_text(i).as_bytes());
                }
                out.extend_from_slice(if chat { b"\"}" } else { b"\"" });
                out.extend_from_slice(b",\"logprobs\":null,\"finish_reason\":");
                if finish.is_empty() {
                    out.extend_from_slice(b"null}]");
                } else {
                    let _ = write!(out, "\"{finish}\"}}]");
                }
                if self.gen.continuous_usage {
                    self.write_usage(out, last);
                }
                out.extend_from_slice(b"}\n\n");
            }
            Api::Tgi => {
                // TGI sends one event per token.
                for i in first..last {
                    let _ = write!(
                        out,
                        "data:{{\"index\":{i},\"token\":{{\"id\":{i},\"text\":\"{}\",\"logprob\":0.0,\"special\":false}},",
                        token_text(i)
                    );
                    if i + 1 == self.gen.completion_tokens {
                        let _ = write!(
                            out,
                            "\"generated_text\":\"\",\"details\":{{\"finish_reason\":\"{}\",\"generated_tokens\":{}}}}}\n\n",
                            self.gen.finish_reason(),
                            self.gen.completion_tokens
                        );
                    } else {
                        out.extend_from_slice(b"\"generated_text\":null,\"details\":null}\n\n");
                    }
                }
            }
            Api::Sglang => {
                out.extend_from_slice(b"data: {\"text\":\"");
                for i in 0..last {
                    out.extend_from_slice(token_text(i).as_bytes());
                }
                let _ = write!(
                    out,
                    "\",\"meta_info\":{{\"prompt_tokens\":{},\"completion_tokens\":{last}}}}}\n\n",
                    self.gen.prompt_tokens
                );
            }
        }
    }

    /// Writes a `usage` member with `completion` tokens so far.
    fn write_usage(&self, out: &mut BytesMut, completion: u32) {
        let p = self.gen.prompt_tokens;
        let _ = write!(
            out,
            ",\"usage\":{{\"prompt_tokens\":{p},\"completion_tokens\":{completion},\"total_tokens\":{}}}",
            p + completion
        );
    }

    /// Writes what follows the last token: the usage chunk if asked for, and `[DONE]`.
    fn write_tail(&self, out: &mut BytesMut) {
        match self.gen.api {
            Api::Tgi => return,
            Api::Sglang => {}
            Api::Completions | Api::Chat => {
                if self.gen.include_usage {
                    let id = if self.gen.api == Api::Chat {
                        "chatcmpl-benchlens"
                    } else {
                        "cmpl-benchlens"
                    };
                    let _ = write!(out, "data: {{\"id\":\"{id}\",\"created\":0,\"choices\":[]");
                    self.write_usage(out, self.gen.completion_tokens);
                    out.extend_from_slice(b"}\n\n");
                }
            }
        }
        out.extend_from_slice(b"data: [DONE]\n\n");
    }
}

impl Body for SseBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = &mut *self;
        if this.phase == Phase::Done {
            return Poll::Ready(None);
        }
        let now = Instant::now();
        let mut out = BytesMut::new();
        // Everything already due goes out in one frame: with zero delays the whole body is one write.
        while this.phase == Phase::Tokens && this.next_due <= now {
            let halfway = this.next_chunk == this.chunks / 2;
            if halfway && matches!(this.fault, Fault::Drop | Fault::Reset) {
                // An error from the body makes hyper abort the connection mid-stream.
                this.phase = Phase::Done;
                return Poll::Ready(Some(Err(std::io::Error::other("injected drop"))));
            }
            if halfway && this.fault == Fault::Malformed {
                out.extend_from_slice(b"data: {\"choices\": [{\"text\": \n\n");
            }
            this.write_chunk(&mut out, this.next_chunk);
            if this.next_chunk == 0 {
                let us = now.duration_since(this.received).as_micros();
                if let Ok(mut v) = this.cfg.first_chunk_us.lock() {
                    v.push(u32::try_from(us).unwrap_or(u32::MAX));
                }
            }
            this.next_chunk += 1;
            this.next_due += this.step();
            if this.next_chunk == this.chunks / 2 && this.fault == Fault::Stall {
                this.next_due += this.cfg.faults.stall;
            }
            if this.next_chunk == this.chunks {
                this.phase = Phase::Tail;
            }
        }
        if this.phase == Phase::Tail {
            this.write_tail(&mut out);
            this.phase = Phase::Done;
        }
        if this.phase == Phase::Tokens && out.is_empty() {
            PreciseTimer::global().wake_at(this.next_due.into_std(), cx.waker());
            return Poll::Pending;
        }
        Poll::Ready(Some(Ok(Frame::data(out.freeze()))))
    }

    fn is_end_stream(&self) -> bool {
        self.phase == Phase::Done
    }
}
