//! Where a stage's requests go as they end: a worker thread, off the measuring tasks, counts
//! each reply's tokens with the run's tokenizer (and, with `--multi-turn`, the whole prompt a
//! turn sent), lets go of the reply text, and appends the request's JSON Lines row to the
//! per-request file at once. The stage's records come back, index order, when the stage ends.
//!
//! The file's rows are in the order requests **ended**, not the order they were sent (each row
//! carries its `stage` and `index`): a row is on disk within [`FLUSH_INTERVAL`] of its request's
//! end whatever earlier request is still out, so a SIGKILL loses only the rows of its last
//! moments. (Written in send order, as before, one slow request held back every row that ended
//! after it, however long ago, and a SIGKILL lost them all.) A conversation's turns stay in turn
//! order, since a turn is sent after the one before it ended. Every reader that wants send order
//! sorts by `index`: `merge` ([`crate::loadgen::merge`]) sorts each stage's requests, and
//! `inspect`'s summary of the file ([`crate::cli::inspect_requests`]) does not depend on order.
//!
//! So the per-request file is complete a moment after the load ends, whatever its size, and a
//! request's text is held only from its end to its count (a multi-turn conversation's replies
//! until its last turn is counted).
//!
//! Given a [`StageTally`] ([`Sink::start_tallied`]), the worker hands it each request in send
//! order (cancelled ones aside: a request ending before an earlier one waits in a reorder buffer,
//! [`Reorder`], for the tally only) and keeps no record: the stage's figures and canonical detail
//! are made as it runs (see [`super::tally`]).

use std::collections::{BTreeMap, HashMap};
use std::fs::File;
use std::io::{BufWriter, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::loadgen::conversation::{self, Turn};
use crate::loadgen::record::{decode_record, encode_record, FailureKind, RequestRecord};
use crate::loadgen::report;
use crate::loadgen::tokenizer::Tokenizer;
use crate::loadgen::LoadgenError;

use super::tally::StageTally;

/// The per-request JSON Lines file of a run, written as requests end. Rows are buffered, and
/// the buffer goes to the file at most [`FLUSH_INTERVAL`] after its first row (the worker
/// flushes when no request ends meanwhile), so a process killed at once (SIGKILL, a pod's
/// grace period over) loses only the rows of its last moments.
pub(super) struct RequestsFile {
    path: PathBuf,
    out: BufWriter<File>,
    clock: FlushClock,
    rows: u64,
    /// Why writing stopped (a full disk), with the rows that had reached the file by then:
    /// the stage goes on measuring, and the run decides where the next rows go.
    failed: Option<(std::io::Error, u64)>,
}

/// Longest time a finished request's row waits in the buffer before it is written to the file.
pub(super) const FLUSH_INTERVAL: Duration = Duration::from_millis(500);

/// When buffered rows are due to be written: [`FLUSH_INTERVAL`] after the first row written
/// since the last flush.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct FlushClock {
    since: Option<Instant>,
}

impl FlushClock {
    /// A row was buffered at `now`.
    pub(super) fn wrote(&mut self, now: Instant) {
        self.since.get_or_insert(now);
    }

    /// The buffer was written out.
    pub(super) fn flushed(&mut self) {
        self.since = None;
    }

    /// How long until buffered rows are due: `None` with nothing buffered, zero when due.
    pub(super) fn wait(&self, now: Instant) -> Option<Duration> {
        self.since
            .map(|t| (t + FLUSH_INTERVAL).saturating_duration_since(now))
    }
}

impl RequestsFile {
    /// Creates the file at `path`: a new file, or with `overwrite` one emptied if it exists.
    pub(super) fn create(path: &Path, overwrite: bool) -> Result<RequestsFile, LoadgenError> {
        let file = report::create_file(path, overwrite)?;
        Ok(RequestsFile {
            path: path.into(),
            out: BufWriter::with_capacity(1 << 16, file),
            clock: FlushClock::default(),
            rows: 0,
            failed: None,
        })
    }

    /// Why writing the file failed during the last stage, if it did, with how many rows had
    /// been handed to it before (those in the file, at most; the others are lost from it).
    pub(super) fn take_failure(&mut self) -> Option<(LoadgenError, u64)> {
        let (source, rows) = self.failed.take()?;
        Some((self.error(source), rows))
    }

    /// Rows written so far (over every stage).
    pub(super) fn rows(&self) -> u64 {
        self.rows
    }

    fn line(&mut self, line: &str) -> std::io::Result<()> {
        self.out.write_all(line.as_bytes())?;
        self.out.write_all(b"\n")?;
        self.rows += 1;
        let now = Instant::now();
        self.clock.wrote(now);
        self.flush_if_due(now)
    }

    /// Writes the buffered rows out if they are due.
    fn flush_if_due(&mut self, now: Instant) -> std::io::Result<()> {
        match self.clock.wait(now) {
            Some(w) if w.is_zero() => self.flush(),
            _ => Ok(()),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.clock.flushed();
        self.out.flush()
    }

    fn error(&self, source: std::io::Error) -> LoadgenError {
        LoadgenError::Write {
            path: self.path.clone(),
            source,
        }
    }
}

/// `--multi-turn`: where the worker finds a conversation's turns.
pub(super) trait TurnSource: Send + Sync + 'static {
    /// Conversation `number`'s turns and whether its prompts are chat messages; `None` without
    /// `--multi-turn`.
    fn turns(&self, number: usize) -> Option<(&[Turn], bool)>;
}

/// What the worker does with each request besides keeping it.
pub(super) struct SinkConfig {
    /// Counts replies' tokens (`None`: the warm-up, whose records are only looked at for
    /// failures).
    pub(super) tokenizer: Option<Tokenizer>,
    /// The stage's number, for the rows.
    pub(super) stage: usize,
    /// Keep each reply's text in its record (`--save-detailed` writes them).
    pub(super) keep_text: bool,
    /// Where rows go, if anywhere.
    pub(super) file: Option<RequestsFile>,
}

/// A request that ended: its place in send order (from 0 in each stage) and its record.
type Ended = (usize, RequestRecord);

/// The sending half, cloned into every request's task.
pub(super) type SinkSender = mpsc::Sender<Ended>;

/// What the worker gives back: the stage's records in index order and the file, its rows
/// written.
#[cfg(test)]
type Drained = Result<(Vec<RequestRecord>, Option<RequestsFile>), LoadgenError>;

/// What the worker of a tallied stage gives back (see [`Sink::start_tallied`]).
pub(super) struct Tallying {
    /// The stage's tally, every request not cancelled counted.
    pub(super) tally: StageTally,
    /// The per-request file, its rows written.
    pub(super) file: Option<RequestsFile>,
    /// Requests cancelled by the interrupt (in the rows, not in the tally).
    pub(super) cancelled: usize,
}

/// What [`work`] ends with.
struct Worked {
    records: Vec<RequestRecord>,
    file: Option<RequestsFile>,
    tally: Option<StageTally>,
    cancelled: usize,
}

/// The worker of one stage.
pub(super) struct Sink {
    handle: JoinHandle<Result<Worked, LoadgenError>>,
}

impl Sink {
    /// Starts the worker; requests are sent to it on the returned sender, and it ends once every
    /// clone of that sender is dropped.
    #[cfg(test)]
    pub(super) fn start<T: TurnSource>(
        workload: Arc<T>,
        config: SinkConfig,
        expected: usize,
    ) -> (Sink, SinkSender) {
        Sink::start_tallied(workload, config, expected, None)
    }

    /// [`Sink::start`], the requests counted by `tally` (when given) rather than kept.
    pub(super) fn start_tallied<T: TurnSource>(
        workload: Arc<T>,
        config: SinkConfig,
        expected: usize,
        tally: Option<StageTally>,
    ) -> (Sink, SinkSender) {
        let (tx, rx) = mpsc::channel::<Ended>();
        let handle = std::thread::spawn(move || work(&*workload, config, &rx, expected, tally));
        (Sink { handle }, tx)
    }

    /// Waits for the worker to drain (the senders must be dropped): the stage's records in index
    /// order and the file, its rows written.
    #[cfg(test)]
    pub(super) async fn finish(self) -> Drained {
        let w = self.join().await?;
        Ok((w.records, w.file))
    }

    /// Waits for the worker of a tallied stage to drain: its tally, or its records (index order)
    /// when it was started without one.
    pub(super) async fn finish_tallied(
        self,
    ) -> Result<Result<Tallying, (Vec<RequestRecord>, Option<RequestsFile>)>, LoadgenError> {
        let w = self.join().await?;
        Ok(match w.tally {
            Some(tally) => Ok(Tallying {
                tally,
                file: w.file,
                cancelled: w.cancelled,
            }),
            None => Err((w.records, w.file)),
        })
    }

    async fn join(self) -> Result<Worked, LoadgenError> {
        let joined = tokio::task::spawn_blocking(move || self.handle.join()).await;
        match joined {
            Ok(Ok(out)) => out,
            // The worker only panics on a bug; its records are lost with it.
            _ => Ok(Worked {
                records: Vec::new(),
                file: None,
                tally: None,
                cancelled: 0,
            }),
        }
    }
}

/// Counts, rows and keeps (or tallies) every request that arrives until the senders are gone.
fn work(
    workload: &dyn TurnSource,
    mut config: SinkConfig,
    rx: &mpsc::Receiver<Ended>,
    expected: usize,
    mut tally: Option<StageTally>,
) -> Result<Worked, LoadgenError> {
    let keep = tally.is_none();
    let mut records = Vec::with_capacity(if keep { expected.min(1 << 20) } else { 0 });
    // For the tally only: requests that ended before one sent earlier, until it ends.
    let mut waiting = Reorder::new(REORDER_HELD);
    let mut next = 0usize;
    let mut histories = Histories::default();
    let mut failed: Option<std::io::Error> = None;
    let mut cancelled = 0usize;
    let mut file = config.file.take();
    let stage = config.stage;
    loop {
        // Buffered rows go out when due even if no request ends meanwhile.
        let wait = match (file.as_ref(), failed.is_none()) {
            (Some(f), true) => f.clock.wait(Instant::now()),
            _ => None,
        };
        let got = match wait {
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
            Some(w) => rx.recv_timeout(w),
        };
        let (seq, mut rec) = match got {
            Ok(ended) => ended,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Some(f) = file.as_mut() {
                    if let Err(e) = f.flush_if_due(Instant::now()) {
                        failed = Some(e);
                    }
                }
                continue;
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        };
        if let Some(tok) = &config.tokenizer {
            if rec.failure.is_none() {
                rec.output_tokens_text = Some(tok.count(&rec.generated_text));
            }
            histories.count(workload, tok, &mut rec);
        }
        if !config.keep_text {
            rec.generated_text = String::new();
        }
        // The row goes to the file now, in the order requests end: whatever earlier request is
        // still out, this one's row is on disk within FLUSH_INTERVAL.
        if let (Some(f), None) = (file.as_mut(), failed.as_ref()) {
            if let Err(e) = f.line(&report::request_line(stage, &rec)) {
                failed = Some(e);
            }
        }
        cancelled += usize::from(is_cancelled(&rec));
        match tally.as_mut() {
            // The tally takes requests in send order.
            Some(t) => {
                waiting.insert(seq, rec);
                while let Some(rec) = waiting.take(next).map_err(|e| waiting.error(e))? {
                    next += 1;
                    if !is_cancelled(&rec) {
                        t.add(&rec);
                    }
                }
            }
            None => records.push(kept(rec)),
        }
    }
    // Requests whose predecessors never came (a dispatch dropped unsent), in order.
    if let Some(t) = tally.as_mut() {
        while let Some(seq) = waiting.first() {
            if let Some(rec) = waiting.take(seq).map_err(|e| waiting.error(e))? {
                if !is_cancelled(&rec) {
                    t.add(&rec);
                }
            }
        }
    }
    // A write that failed (a full disk) does not end the stage: its measurements stand, and the
    // file says what went wrong for the run to report and write elsewhere.
    if let Some(f) = file.as_mut() {
        let rows = f.rows;
        let written = match failed {
            Some(e) => Err(e),
            None => f.flush(),
        };
        if let Err(e) = written {
            f.failed = Some((e, rows));
        }
    }
    records.sort_by_key(|r| r.index);
    Ok(Worked {
        records,
        file,
        tally,
        cancelled,
    })
}

/// A request cancelled by the interrupt: in the rows, not in the tally.
fn is_cancelled(rec: &RequestRecord) -> bool {
    rec.failure
        .as_ref()
        .is_some_and(|f| f.kind == FailureKind::Cancelled)
}

/// A record kept to the stage's end. Its chunk times are copied into an exact allocation of
/// this thread (a clone's buffer is as long as its bytes), so they lie together rather than
/// among the short-lived buffers of requests in flight (whose freed holes would stay resident).
fn kept(mut rec: RequestRecord) -> RequestRecord {
    rec.chunks = rec.chunks.clone();
    rec
}

/// Requests the reorder buffer holds as they are; those beyond go to its scratch file.
const REORDER_HELD: usize = 1024;

/// Requests that ended before one sent earlier, until it ends (the tally takes requests in
/// send order; their rows are already in the file). Up to `held` of them are kept as they are,
/// a few hundred at most while requests end about in the order sent; beyond that (one request
/// far slower than those sent after it: a connection whose SYN the server dropped, retried by
/// the kernel a second later; a stall) each is written to an unnamed scratch file in the record
/// spool's form and read back in its turn. So a straggler holds a few bytes for each request
/// that ends meanwhile rather than the request (at thousands of requests a second, a one-second
/// straggler held some 20 MB).
struct Reorder {
    held: BTreeMap<usize, RequestRecord>,
    limit: usize,
    /// Each spilled request's place in the scratch file: offset and length.
    spilled: BTreeMap<usize, (u64, usize)>,
    /// Created when first needed.
    scratch: Option<ScratchFile>,
    /// The scratch file's length.
    end: u64,
    buf: Vec<u8>,
}

/// A scratch file in the system's temporary folder, without a name (the `tempfile` crate's):
/// it vanishes with its handle, on every exit path.
struct ScratchFile {
    file: File,
}

impl ScratchFile {
    fn create() -> std::io::Result<ScratchFile> {
        Ok(ScratchFile {
            file: tempfile::tempfile()?,
        })
    }
}

impl Reorder {
    fn new(limit: usize) -> Reorder {
        Reorder {
            held: BTreeMap::new(),
            limit,
            spilled: BTreeMap::new(),
            scratch: None,
            end: 0,
            buf: Vec::new(),
        }
    }

    /// Holds request `seq` until [`take`](Reorder::take)n (kept as it is when it cannot be
    /// written to the scratch file).
    fn insert(&mut self, seq: usize, rec: RequestRecord) {
        if self.held.len() < self.limit || self.spill(seq, &rec).is_err() {
            self.held.insert(seq, rec);
        }
    }

    fn spill(&mut self, seq: usize, rec: &RequestRecord) -> std::io::Result<()> {
        let scratch = match &mut self.scratch {
            Some(s) => s,
            None => self.scratch.insert(ScratchFile::create()?),
        };
        self.buf.clear();
        encode_record(&mut self.buf, rec);
        // The file's position is always its end.
        scratch.file.write_all(&self.buf)?;
        self.spilled.insert(seq, (self.end, self.buf.len()));
        self.end += self.buf.len() as u64;
        Ok(())
    }

    /// Request `seq`, if it is held.
    fn take(&mut self, seq: usize) -> std::io::Result<Option<RequestRecord>> {
        if let Some(rec) = self.held.remove(&seq) {
            return Ok(Some(rec));
        }
        let (Some((at, len)), Some(scratch)) = (self.spilled.remove(&seq), self.scratch.as_mut())
        else {
            return Ok(None);
        };
        let file = &mut scratch.file;
        file.seek(SeekFrom::Start(at))?;
        self.buf.resize(len, 0);
        file.read_exact(&mut self.buf)?;
        if self.spilled.is_empty() {
            // Nothing left in it: the file starts again from empty.
            file.set_len(0)?;
            self.end = 0;
        }
        file.seek(SeekFrom::Start(self.end))?;
        decode_record(&mut self.buf.as_slice()).map(Some)
    }

    /// The earliest request held.
    fn first(&self) -> Option<usize> {
        let held = self.held.keys().next().copied();
        let spilled = self.spilled.keys().next().copied();
        held.into_iter().chain(spilled).min()
    }

    /// A failure of the scratch file, as the run reports it.
    fn error(&self, source: std::io::Error) -> LoadgenError {
        LoadgenError::Write {
            path: std::env::temp_dir(),
            source,
        }
    }
}

/// `--multi-turn`: the replies so far of each conversation in progress, to count the prompt of
/// its next turn (its whole history, as [`conversation::count_histories`] does after a stage).
#[derive(Default)]
struct Histories {
    replies: HashMap<usize, Vec<String>>,
}

impl Histories {
    /// Sets a turn's `input_len` to the tokens of the prompt it sent; forgets the conversation's
    /// replies after its last turn (or one that failed: the conversation ends there).
    fn count(&mut self, source: &dyn TurnSource, tok: &Tokenizer, rec: &mut RequestRecord) {
        let Some(t) = rec.turn else { return };
        let Some((turns, chat)) = source.turns(t.conversation) else {
            return;
        };
        let got = self.replies.entry(t.conversation).or_default();
        if got.len() == t.turn && t.turn < turns.len() {
            rec.input_len = conversation::prompt_len(tok, turns, got, t.turn, chat);
        }
        if rec.failure.is_some() || t.turn + 1 >= turns.len() {
            self.replies.remove(&t.conversation);
        } else {
            got.push(rec.generated_text.clone());
        }
    }
}

#[cfg(test)]
mod tests;
