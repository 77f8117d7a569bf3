//! One streamed generation request, from connection checkout to checkin, in named steps:
//! send the request ([`Client::stream`] takes the send time first, so connecting counts, as in
//! vLLM's client; sent once more on a new connection when a pooled one closed before any
//! answer), follow a 307/308 within the origin once, accept the response head (a non-2xx
//! status is a failure quoting the body and any `Location`; a `Content-Encoding` picks the
//! decoder, [`super::encoding`]), read the event stream under its deadlines while
//! [`StreamAccount`] counts tokens and stamps chunks, then drain the body so the connection
//! can be reused. Latencies count from the write
//! syscall that put the request on the wire to when data reached the socket (the kernel's
//! stamps, [`super::stamp`]), so neither end includes the client's own queueing.

use std::time::Duration;

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper::body::{Body, Incoming};
use hyper::{Response, StatusCode, Uri};
use tokio::time::Instant;

use super::client::{Client, Timeouts};
use super::deadline::{earliest, with_deadline, Deadline};
use super::encoding::{BodyDecoder, DecodeError};
use super::pool::Conn;
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
        let uri = self.uri.clone();
        let (mut conn, mut response, origin) = self
            .send_once_more(uri, body.clone(), &deadlines, rec)
            .await?;
        // A 307/308 within the server's origin is followed once, the same request to the new
        // path; latencies still count from the first request's write (the redirect's round
        // trip is part of what the user waits for). Any other redirect fails naming its
        // Location ([`Client::accept`]).
        if let Some(uri) = self.redirect_to(&response) {
            let mut rest = response.into_body();
            let _ = read_error_body(&mut rest, deadlines.first_token()).await;
            if rest.is_end_stream() {
                self.pool.checkin(conn);
            }
            (conn, response, _) = self.send_once_more(uri, body, &deadlines, rec).await?;
            rec.write_delay_s = Some((origin - sent).as_secs_f64());
        }
        let (mut body, account, decoder) = self.accept(response, &deadlines).await?;
        let url = self.target.url.as_str();
        let reading = Reading {
            pool: &self.pool,
            url,
            conn: &conn,
            origin,
            deadlines: &deadlines,
        };
        let end = reading
            .read_events(&mut body, account, decoder, rec)
            .await?;
        drain(&mut body).await;
        self.pool.checkin(conn);
        Ok(Span { origin, end })
    }

    /// Checks out a connection and sends the request on it. When a connection from the idle
    /// pool fails before one byte of an answer came (the server had closed it, as llama-server
    /// does after each streamed reply while advertising keep-alive), the request never reached
    /// a server that would answer it: it is sent once more on a new connection and
    /// `rec.retried_unsent` says so. The same holds for a request hyper never dispatched.
    async fn send_once_more(
        &self,
        uri: Uri,
        body: Bytes,
        deadlines: &Deadlines,
        rec: &mut RequestRecord,
    ) -> Result<(Conn, Response<Incoming>, Instant), Failure> {
        let mut conn = self.pool.checkout().await?;
        let reads_before = conn.stamps().reads();
        match self
            .send(&mut conn, uri.clone(), body.clone(), deadlines, rec)
            .await
        {
            Ok((r, origin)) => Ok((conn, r, origin)),
            Err(Unsent::No(f)) => Err(f),
            Err(Unsent::Maybe(f)) => {
                if !(conn.reused() && conn.stamps().reads() == reads_before) {
                    return Err(f);
                }
                self.send_fresh(uri, body, deadlines, rec).await
            }
            Err(Unsent::Yes(_)) => self.send_fresh(uri, body, deadlines, rec).await,
        }
    }

    /// The retry of [`Client::send_once_more`]: a new connection, once.
    async fn send_fresh(
        &self,
        uri: Uri,
        body: Bytes,
        deadlines: &Deadlines,
        rec: &mut RequestRecord,
    ) -> Result<(Conn, Response<Incoming>, Instant), Failure> {
        rec.retried_unsent = true;
        let mut conn = self.pool.fresh().await?;
        match self.send(&mut conn, uri, body, deadlines, rec).await {
            Ok((r, origin)) => Ok((conn, r, origin)),
            Err(Unsent::No(f) | Unsent::Maybe(f) | Unsent::Yes(f)) => Err(f),
        }
    }

    /// Writes the request and waits for the response head. Returns the head and when the
    /// request was written (the origin of every latency), recording the delay before that
    /// write in `rec.write_delay_s`.
    async fn send(
        &self,
        conn: &mut Conn,
        uri: Uri,
        body: Bytes,
        deadlines: &Deadlines,
        rec: &mut RequestRecord,
    ) -> Result<(Response<Incoming>, Instant), Unsent> {
        let url = self.target.url.as_str();
        conn.stamps().arm_tx();
        let req = self.request(hyper::Method::POST, uri, body);
        let response = match with_deadline(deadlines.first_token(), conn.send(req)).await {
            Err(kind) => return Err(Unsent::No(deadlines.timed_out(kind, url))),
            Ok(Err(e)) => {
                let f = self.pool.classify(&e, url);
                return Err(if e.is_canceled() {
                    Unsent::Yes(f)
                } else if e.is_incomplete_message()
                    || matches!(f.kind, FailureKind::Reset | FailureKind::Truncated)
                {
                    Unsent::Maybe(f)
                } else {
                    Unsent::No(f)
                });
            }
            Ok(Ok(r)) => r,
        };
        // The time before the write syscall (checkout, connect, the client's own scheduling)
        // is `write_delay_s`, outside the latencies.
        let sent = deadlines.sent;
        let origin = conn.stamps().tx().filter(|t| *t >= sent).unwrap_or(sent);
        rec.write_delay_s = Some((origin - sent).as_secs_f64());
        Ok((response, origin))
    }

    /// The same-origin path a 307 or 308 answer points to, when it should be followed.
    fn redirect_to(&self, response: &Response<Incoming>) -> Option<Uri> {
        let status = response.status();
        if !matches!(
            status,
            StatusCode::TEMPORARY_REDIRECT | StatusCode::PERMANENT_REDIRECT
        ) {
            return None;
        }
        let location = response.headers().get(hyper::header::LOCATION)?;
        let path = self.target.same_origin_path(location.to_str().ok()?)?;
        self.uri_of(&path).ok()
    }

    /// The body of a 2xx answer with the account that will read it and the decoder of its
    /// `Content-Encoding`; any other status is a failure quoting the start of the body (and a
    /// redirect's `Location`), an encoding this client cannot decode a `compressed_stream`.
    async fn accept(
        &self,
        response: Response<Incoming>,
        deadlines: &Deadlines,
    ) -> Result<(Incoming, StreamAccount, BodyDecoder), Failure> {
        let url = self.target.url.as_str();
        let status = response.status();
        let header = |name: hyper::header::HeaderName| {
            response
                .headers()
                .get(name)
                .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
        };
        let content_type = header(hyper::header::CONTENT_TYPE);
        let encoding = header(hyper::header::CONTENT_ENCODING);
        let location = header(hyper::header::LOCATION);
        let mut body = response.into_body();
        if !status.is_success() {
            let text = read_error_body(&mut body, deadlines.first_token()).await;
            let to = location.map_or_else(String::new, |l| {
                let why = match (
                    matches!(status.as_u16(), 307 | 308),
                    self.target.same_origin_path(&l).is_some(),
                ) {
                    (true, true) => "a second redirect: one is followed",
                    (true, false) => "another origin: not followed",
                    (false, _) => "only 307 and 308 are followed",
                };
                format!(" to Location {:?} ({why})", snippet(&l))
            });
            return Err(Failure::new(
                FailureKind::Http(status.as_u16()),
                format!(
                    "{url}: HTTP {}{to}: {}",
                    status_line(status),
                    snippet(&text)
                ),
            ));
        }
        let decoder = BodyDecoder::for_header(encoding.as_deref()).map_err(|name| {
            Failure::new(
                FailureKind::CompressedStream,
                format!("{url}: HTTP {} with Content-Encoding {:?}, which this client did not ask for and cannot decode (it decodes gzip and deflate): have the server or proxy send the stream uncompressed", status.as_u16(), snippet(&name)),
            )
        })?;
        let account = StreamAccount::new(self.backend, url, content_type.as_deref());
        Ok((body, account, decoder))
    }
}

/// Why a request's send failed, and whether it may not have reached the server.
enum Unsent {
    /// The request was never dispatched on the connection: safe to send again.
    Yes(Failure),
    /// The connection closed or reset before an answer: unsent if no byte of an answer came
    /// and the connection had been idle in the pool.
    Maybe(Failure),
    /// Anything else (a timeout, a protocol error): a failure of the request.
    No(Failure),
}

/// What reading one answer's events needs.
struct Reading<'a> {
    pool: &'a super::pool::Pool,
    url: &'a str,
    conn: &'a Conn,
    origin: Instant,
    deadlines: &'a Deadlines,
}

impl Reading<'_> {
    /// Reads frames until the stream is complete, decoding a compressed body and feeding
    /// each read to `account` with when it reached the socket. Returns when the end of the
    /// stream reached the socket.
    async fn read_events(
        &self,
        body: &mut Incoming,
        mut account: StreamAccount,
        mut decoder: BodyDecoder,
        rec: &mut RequestRecord,
    ) -> Result<Instant, Failure> {
        let (url, origin, deadlines) = (self.url, self.origin, self.deadlines);
        let corrupt = |e: DecodeError<Failure>| match e {
            DecodeError::Corrupt(m) => Failure::new(
                FailureKind::CompressedStream,
                format!("{url}: the compressed event stream does not decode: {m}"),
            ),
            DecodeError::Sink(f) => f,
        };
        let mut last_token_at = origin;
        let mut end_at = origin;
        let mut ended = false;
        loop {
            let deadline = deadlines.next_read(rec.ttft_s.is_some().then_some(last_token_at));
            let frame = match with_deadline(deadline, body.frame()).await {
                Err(kind) => return Err(deadlines.timed_out(kind, url)),
                Ok(None) => {
                    ended = true;
                    break;
                }
                Ok(Some(Err(e))) => return Err(self.pool.classify(&e, url)),
                Ok(Some(Ok(f))) => f,
            };
            // When the data reached the socket, not when this task got to it (see stamp.rs).
            let read_at = Instant::now();
            let arrived_at = self
                .conn
                .stamps()
                .last_rx()
                .map_or(read_at, |t| t.min(read_at));
            end_at = arrived_at;
            if rec.ttft_s.is_none() {
                rec.first_read_delay_s = Some((read_at - arrived_at).as_secs_f64());
            }
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let chunks_before = rec.chunks.len();
            let at_s = (arrived_at.max(origin) - origin).as_secs_f64();
            let mut flow = Flow::More;
            decoder
                .decode(&data, |b| {
                    if flow == Flow::More {
                        flow = account.push(b, at_s, rec)?;
                    }
                    Ok(())
                })
                .map_err(corrupt)?;
            if rec.chunks.len() > chunks_before {
                last_token_at = arrived_at;
            }
            if flow == Flow::Done {
                break;
            }
        }
        // The decoder's last bytes and its check that the stream was whole, when the body
        // ended before `[DONE]` (after it, the trailer is left to the drain).
        if ended {
            let at_s = (end_at.max(origin) - origin).as_secs_f64();
            decoder
                .finish(|b| account.push(b, at_s, rec).map(|_| ()))
                .map_err(corrupt)?;
        }
        account.end(rec)?;
        Ok(end_at)
    }
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
