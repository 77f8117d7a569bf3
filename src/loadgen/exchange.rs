//! One streamed generation request, from connection checkout to checkin, in named steps:
//! send the request ([`Client::stream`] takes the send time first, so connecting counts, as in
//! vLLM's client), accept the response head (a non-2xx status is a failure quoting the body),
//! read the event stream under its deadlines while [`StreamAccount`] counts tokens and stamps
//! chunks, then drain the body so the connection can be reused. Latencies count from the write
//! syscall that put the request on the wire to when data reached the socket (the kernel's
//! stamps, [`super::stamp`]), so neither end includes the client's own queueing.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Incoming};
use hyper::{Response, StatusCode};
use tokio::time::Instant;

use super::client::{Client, Timeouts};
use super::deadline::{earliest, with_deadline, Deadline};
use super::pool::{classify_hyper, Conn};
use super::record::{snippet, Failure, FailureKind, RequestRecord};
use super::stream::{Flow, StreamAccount};

/// How long a finished stream's leftover body (the chunked terminator) may take to drain.
const DRAIN_LIMIT: Duration = Duration::from_millis(200);

/// Most bytes of an error body read for its failure message.
const ERROR_BODY_BYTES: usize = 512;

/// A completed stream: latencies count from `origin` (the request's write) to `end` (when the
/// end of the stream reached the socket).
struct Span {
    origin: Instant,
    end: Instant,
}

/// The time limits of one request, fixed when it is sent.
struct Deadlines {
    sent: Instant,
    total: Option<Instant>,
    first_token: Option<Instant>,
    idle: Option<Duration>,
}

impl Deadlines {
    fn new(sent: Instant, timeouts: &Timeouts) -> Deadlines {
        Deadlines {
            sent,
            total: timeouts.total.map(|t| sent + t),
            first_token: timeouts.first_token.map(|t| sent + t),
            idle: timeouts.idle,
        }
    }

    fn total(&self) -> Deadline {
        self.total.map(|d| (d, FailureKind::TotalTimeout))
    }

    /// Until the first token: the total or the first-token limit, whichever comes first.
    fn first_token(&self) -> Deadline {
        earliest(
            self.total(),
            self.first_token,
            FailureKind::FirstTokenTimeout,
        )
    }

    /// For the next read: the first-token limit until a token came, then the idle limit from
    /// the last token (`last_token_at`), each capped by the total.
    fn next_read(&self, last_token_at: Option<Instant>) -> Deadline {
        match last_token_at {
            None => self.first_token(),
            Some(last) => earliest(
                self.total(),
                self.idle.map(|t| last + t),
                FailureKind::IdleTimeout,
            ),
        }
    }

    /// The failure of a request that ran past the deadline of `kind`.
    fn timed_out(&self, kind: FailureKind, url: &str) -> Failure {
        Failure::new(
            kind,
            format!(
                "{url}: {} after {:.3} s",
                kind.name().replace('_', " "),
                self.sent.elapsed().as_secs_f64()
            ),
        )
    }
}

impl Client {
    /// Sends one streamed generation request and fills `rec` with what happened. The send time
    /// is taken here, before a connection is checked out (so connecting counts, as in vLLM's
    /// client); `stage_start` is the origin of `rec.sent_at_s`.
    pub async fn stream(&self, body: Bytes, stage_start: Instant, rec: &mut RequestRecord) {
        let sent = Instant::now();
        rec.sent_at_s = (sent - stage_start).as_secs_f64();
        match self.exchange(body, sent, rec).await {
            Ok(Span { origin, end }) => {
                rec.e2el_s = Some((end.max(origin) - origin).as_secs_f64());
            }
            Err(f) => rec.failure = Some(f),
        }
    }

    /// The request's steps; a failed one drops its connection rather than reusing it.
    async fn exchange(
        &self,
        body: Bytes,
        sent: Instant,
        rec: &mut RequestRecord,
    ) -> Result<Span, Failure> {
        let deadlines = Deadlines::new(sent, &self.timeouts);
        let mut conn = self.pool.checkout().await?;
        let (response, origin) = self.send(&mut conn, body, &deadlines, rec).await?;
        let (mut body, account) = self.accept(response, &deadlines).await?;
        let url = self.target.url.as_str();
        let end = read_events(url, &mut body, account, &conn, origin, &deadlines, rec).await?;
        drain(&mut body).await;
        self.pool.checkin(conn);
        Ok(Span { origin, end })
    }

    /// Writes the request and waits for the response head. Returns the head and when the
    /// request was written (the origin of every latency), recording the delay before that
    /// write in `rec.write_delay_s`.
    async fn send(
        &self,
        conn: &mut Conn,
        body: Bytes,
        deadlines: &Deadlines,
        rec: &mut RequestRecord,
    ) -> Result<(Response<Incoming>, Instant), Failure> {
        let url = self.target.url.as_str();
        conn.stamps().arm_tx();
        let req = self.request(hyper::Method::POST, self.uri.clone(), body);
        let response = match with_deadline(deadlines.first_token(), conn.send(req)).await {
            Err(kind) => return Err(deadlines.timed_out(kind, url)),
            Ok(Err(e)) => return Err(classify_hyper(&e, url)),
            Ok(Ok(r)) => r,
        };
        // The time before the write syscall (checkout, connect, the client's own scheduling)
        // is `write_delay_s`, outside the latencies.
        let sent = deadlines.sent;
        let origin = conn.stamps().tx().filter(|t| *t >= sent).unwrap_or(sent);
        rec.write_delay_s = Some((origin - sent).as_secs_f64());
        Ok((response, origin))
    }

    /// The body of a 2xx answer with the account that will read it; any other status is a
    /// failure quoting the start of the body.
    async fn accept(
        &self,
        response: Response<Incoming>,
        deadlines: &Deadlines,
    ) -> Result<(Incoming, StreamAccount), Failure> {
        let url = self.target.url.as_str();
        let status = response.status();
        let content_type = response
            .headers()
            .get(hyper::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let mut body = response.into_body();
        if !status.is_success() {
            let text = read_error_body(&mut body, deadlines.first_token()).await;
            return Err(Failure::new(
                FailureKind::Http(status.as_u16()),
                format!("{url}: HTTP {}: {}", status_line(status), snippet(&text)),
            ));
        }
        let account = StreamAccount::new(self.backend, url, content_type.as_deref());
        Ok((body, account))
    }
}

/// Reads frames until the stream is complete, feeding each to `account` with when it reached
/// the socket. Returns when the end of the stream reached the socket.
async fn read_events(
    url: &str,
    body: &mut Incoming,
    mut account: StreamAccount,
    conn: &Conn,
    origin: Instant,
    deadlines: &Deadlines,
    rec: &mut RequestRecord,
) -> Result<Instant, Failure> {
    let mut last_token_at = origin;
    let mut end_at = origin;
    loop {
        let deadline = deadlines.next_read(rec.ttft_s.is_some().then_some(last_token_at));
        let frame = match with_deadline(deadline, body.frame()).await {
            Err(kind) => return Err(deadlines.timed_out(kind, url)),
            Ok(None) => break,
            Ok(Some(Err(e))) => return Err(classify_hyper(&e, url)),
            Ok(Some(Ok(f))) => f,
        };
        // When the data reached the socket, not when this task got to it (see stamp.rs).
        let read_at = Instant::now();
        let arrived_at = conn.stamps().last_rx().map_or(read_at, |t| t.min(read_at));
        end_at = arrived_at;
        if rec.ttft_s.is_none() {
            rec.first_read_delay_s = Some((read_at - arrived_at).as_secs_f64());
        }
        let Ok(data) = frame.into_data() else {
            continue;
        };
        let chunks_before = rec.chunks.len();
        let at_s = (arrived_at.max(origin) - origin).as_secs_f64();
        let flow = account.push(&data, at_s, rec)?;
        if rec.chunks.len() > chunks_before {
            last_token_at = arrived_at;
        }
        if flow == Flow::Done {
            break;
        }
    }
    account.end(rec)?;
    Ok(end_at)
}

/// Drains the rest of a finished body (the chunked terminator) so the connection can be
/// reused; a body that does not end soon is left behind.
async fn drain(body: &mut Incoming) {
    if body.is_end_stream() {
        return;
    }
    let deadline = Some((Instant::now() + DRAIN_LIMIT, FailureKind::Io));
    let _ = with_deadline(deadline, async {
        while let Some(Ok(_)) = body.frame().await {}
    })
    .await;
}

/// `503 Service Unavailable`, or the bare code when it has no reason phrase.
fn status_line(s: StatusCode) -> String {
    match s.canonical_reason() {
        Some(r) => format!("{} {r}", s.as_u16()),
        None => s.as_u16().to_string(),
    }
}

/// The start of an error body (up to [`ERROR_BODY_BYTES`] and more if one frame brings it), as
/// text; whatever came before the deadline or an error.
async fn read_error_body(body: &mut Incoming, deadline: Deadline) -> String {
    let mut buf = Vec::new();
    let _ = with_deadline(deadline, async {
        while buf.len() < ERROR_BODY_BYTES {
            match body.frame().await {
                Some(Ok(f)) => {
                    if let Ok(d) = f.into_data() {
                        buf.extend_from_slice(&d);
                    }
                }
                _ => break,
            }
        }
    })
    .await;
    String::from_utf8_lossy(&buf).into_owned()
}
