//! The mock's API routes: `GET /v1/models`, `GET /health`, `POST /v1/completions`,
//! `POST /v1/chat/completions`, TGI's `POST /generate_stream` and SGLang's `POST /generate`.
//! Each request is checked for the API key, read as a [`Generation`], given its fault and (with
//! `--max-batch`) a batch slot, and answered as a stream or, once its last token is due, as one
//! JSON body. Errors are OpenAI-style error objects.

use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::task::Poll;

use bytes::Bytes;
use http_body_util::{BodyExt, Either, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use serde_json::{json, Value};
use tokio::time::Instant;

use super::body::{complete_body, SseBody};
use super::config::Config;
use super::faults::Fault;
use super::generation::{Api, Generation};
use crate::loadgen::stamp::Stamps;
use crate::loadgen::timer::PreciseTimer;

/// A reply: one JSON body or an event stream.
pub(super) type MockBody = Either<Full<Bytes>, SseBody>;

/// A JSON reply.
fn json_response(status: StatusCode, body: Bytes) -> Response<MockBody> {
    let mut r = Response::new(Either::Left(Full::new(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    r
}

/// An OpenAI-style error object.
fn error_response(status: StatusCode, message: &str) -> Response<MockBody> {
    let body = json!({"object": "error", "message": message, "code": status.as_u16()});
    json_response(status, Bytes::from(body.to_string()))
}

/// `GET /metrics`: the batch's state and token counters in vLLM's Prometheus names (see
/// [`crate::loadgen::telemetry`]), so that `run --scrape-metrics` can be tested against the
/// mock. Without `--max-batch` the mock has no batch to report and the body has no samples.
fn metrics_response(cfg: &Config) -> Response<MockBody> {
    let mut text = String::new();
    if let Some(b) = &cfg.batch {
        let running = b.running.load(Ordering::Relaxed);
        let waiting = b.waiting.load(Ordering::Relaxed);
        let label = format!("{{model_name={:?}}}", cfg.model);
        let mut gauge = |name: &str, help: &str, value: f64| {
            text.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} gauge\n{name}{label} {value}\n"
            ));
        };
        gauge(
            "vllm:num_requests_running",
            "Number of requests in model execution batches.",
            f64::from(running),
        );
        gauge(
            "vllm:num_requests_waiting",
            "Number of requests waiting to be processed.",
            f64::from(waiting),
        );
        gauge(
            "vllm:kv_cache_usage_perc",
            "KV-cache usage. 1 means 100 percent usage.",
            f64::from(running) / f64::from(b.max),
        );
        // Counters as vLLM writes them: typed without `_total`, sampled with it.
        let mut counter = |name: &str, help: &str, value: u64| {
            text.push_str(&format!(
                "# HELP {name} {help}\n# TYPE {name} counter\n{name}_total{label} {value}\n"
            ));
        };
        counter(
            "vllm:prompt_tokens",
            "Number of prefill tokens processed.",
            b.prompt_tokens.load(Ordering::Relaxed),
        );
        counter(
            "vllm:generation_tokens",
            "Number of generation tokens processed.",
            b.generated_tokens.load(Ordering::Relaxed),
        );
    }
    let mut r = Response::new(Either::Left(Full::new(Bytes::from(text))));
    r.headers_mut().insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("text/plain; version=0.0.4"),
    );
    r
}

/// A request body this large (and the JSON read from it) is handed back to the system once
/// read, rather than left in the allocator's free lists: without it, six prompts of 7.5 MB
/// left the mock 41 MiB larger than it started.
const RELEASE_AFTER_BODY_BYTES: usize = 1 << 20;

/// Returns the memory freed on this thread to the system (the binary's allocator is mimalloc;
/// where the library runs under another, as in unit tests, this only tidies mimalloc's own
/// empty heap).
fn release_memory() {
    // SAFETY: `mi_collect` takes no pointers and may be called from any thread at any time.
    unsafe { libmimalloc_sys::mi_collect(true) }
}

/// Whether a request's `Content-Length` says its body is over `limit` bytes (a length that does
/// not read is left to the body's own count).
fn declared_too_large(headers: &hyper::HeaderMap, limit: u64) -> bool {
    headers
        .get(hyper::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .is_some_and(|n| n > limit)
}

/// A byte limit as a `usize` (the largest one on a 32-bit target).
fn limit_usize(limit: u64) -> usize {
    usize::try_from(limit).unwrap_or(usize::MAX)
}

/// Answers one request: authorisation, route, request body, fault, batch slot, reply.
pub(super) async fn handle(
    req: Request<Incoming>,
    cfg: Arc<Config>,
    reset: Arc<AtomicBool>,
    stamps: Arc<Stamps>,
) -> Result<Response<MockBody>, Infallible> {
    // When the request reached the socket (kernel stamp), not when this task got to it: the
    // configured TTFT counts from there, and so does the mock's own first-chunk latency.
    let now = Instant::now();
    let received = stamps.last_rx().map_or(now, |t| t.min(now));
    if req.version() == hyper::Version::HTTP_2 {
        cfg.http2_requests.fetch_add(1, Ordering::Relaxed);
    }
    if let Some(want) = &cfg.authorization {
        let got = req.headers().get(hyper::header::AUTHORIZATION);
        if got.is_none_or(|g| g.as_bytes() != want.as_bytes()) {
            return Ok(error_response(
                StatusCode::UNAUTHORIZED,
                "missing or wrong API key",
            ));
        }
    }
    let api = match (req.method(), req.uri().path()) {
        (&Method::GET, "/v1/models") => {
            return Ok(json_response(StatusCode::OK, cfg.models_body.clone()))
        }
        (&Method::GET, "/health") => return Ok(json_response(StatusCode::OK, Bytes::new())),
        (&Method::GET, "/metrics") => return Ok(metrics_response(&cfg)),
        (&Method::POST, "/v1/completions") => Api::Completions,
        (&Method::POST, "/v1/chat/completions") => Api::Chat,
        (&Method::POST, "/generate_stream") => Api::Tgi,
        (&Method::POST, "/generate") => Api::Sglang,
        (_, path) => {
            let msg = format!("no route for {} {path}", req.method());
            return Ok(error_response(StatusCode::NOT_FOUND, &msg));
        }
    };
    let limit = cfg.max_body_bytes;
    let too_large = || {
        let msg = format!("request body larger than {limit} bytes (--max-body-bytes)");
        Ok(error_response(StatusCode::PAYLOAD_TOO_LARGE, &msg))
    };
    if declared_too_large(req.headers(), limit) {
        return too_large();
    }
    let limited = http_body_util::Limited::new(req.into_body(), limit_usize(limit));
    let body = match limited.collect().await {
        Ok(b) => b,
        Err(e) if e.is::<http_body_util::LengthLimitError>() => return too_large(),
        Err(_) => return Ok(error_response(StatusCode::BAD_REQUEST, "body not readable")),
    };
    // The whole request is in: the configured TTFT counts from its arrival at the socket.
    let now = Instant::now();
    let start = stamps.last_rx().map_or(now, |t| t.min(now));
    let body = body.to_bytes();
    let body_len = body.len();
    let Ok(v) = serde_json::from_slice::<Value>(&body) else {
        return Ok(error_response(StatusCode::BAD_REQUEST, "body is not JSON"));
    };
    let gen = match Generation::from_request(&v, api) {
        Ok(g) => g,
        Err(e) => return Ok(error_response(StatusCode::BAD_REQUEST, &e.to_string())),
    };
    drop((v, body));
    if body_len > RELEASE_AFTER_BODY_BYTES {
        release_memory();
    }
    let fault = cfg.faults.next();
    if fault == Fault::Reset {
        // Armed now, fired when the body aborts the connection halfway through.
        reset.store(true, Ordering::Relaxed);
    }
    if fault == Fault::Error {
        return Ok(error_response(
            StatusCode::INTERNAL_SERVER_ERROR,
            "injected error (--error-rate)",
        ));
    }
    // Continuous batching: wait for a slot before prefill; the slot is held until the body ends.
    let slot = match &cfg.batch {
        Some(b) => {
            b.waiting.fetch_add(1, Ordering::Relaxed);
            let slot = b.slots.clone().acquire_owned().await.ok();
            b.waiting.fetch_sub(1, Ordering::Relaxed);
            b.prompt_tokens
                .fetch_add(u64::from(gen.prompt_tokens), Ordering::Relaxed);
            slot
        }
        None => None,
    };
    let start = if slot.is_some() {
        Instant::now()
    } else {
        start
    };
    if gen.stream {
        let body = SseBody::new(gen, cfg, start, fault, slot, received);
        let mut r = Response::new(Either::Right(body));
        r.headers_mut().insert(
            hyper::header::CONTENT_TYPE,
            hyper::header::HeaderValue::from_static("text/event-stream"),
        );
        return Ok(r);
    }
    let last = (start + cfg.ttft + cfg.itl * gen.completion_tokens.saturating_sub(1)).into_std();
    std::future::poll_fn(|cx| {
        if std::time::Instant::now() >= last {
            Poll::Ready(())
        } else {
            PreciseTimer::global().wake_at(last, cx.waker());
            Poll::Pending
        }
    })
    .await;
    Ok(json_response(
        StatusCode::OK,
        complete_body(&gen, &cfg.model),
    ))
}
