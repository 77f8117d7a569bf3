//! A stage's records spooled to disk as they end ([`RecordSpool`]) and read back one at a time
//! ([`SpooledRecords`]), for what needs every request again after the stage: the steady window's
//! figures (the window is known only at the stage's end) and vLLM's per-request arrays. So a
//! long stage holds no record in memory, only the file.
//!
//! Each record is written whole, in a private binary form read back field for field (floats by
//! their bits, the chunks in their packed form), so a record read back equals the one written.

use std::io::{Read, Write};
use std::path::Path;

use super::{ChunkLog, Failure, FailureKind, RequestRecord, TurnOf};
use crate::loadgen::scratch::{Scratch, ScratchWriter};

/// Requests one after the other, each given to `f` in turn.
pub trait EachRequest {
    /// Calls `f` with each request, in order, until it fails.
    fn each_request(
        &self,
        f: &mut dyn FnMut(&RequestRecord) -> std::io::Result<()>,
    ) -> std::io::Result<()>;
}

impl EachRequest for Vec<RequestRecord> {
    fn each_request(
        &self,
        f: &mut dyn FnMut(&RequestRecord) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.iter().try_for_each(f)
    }
}

/// Records written to a scratch file as they come (see the module doc); a full disk moves the
/// rest to memory ([`ScratchWriter`]).
#[derive(Debug)]
pub struct RecordSpool {
    out: ScratchWriter,
    count: usize,
    buf: Vec<u8>,
}

impl RecordSpool {
    /// A spool writing to `out`.
    pub fn new(out: ScratchWriter) -> RecordSpool {
        RecordSpool {
            out,
            count: 0,
            buf: Vec::new(),
        }
    }

    /// Its scratch file's name when made.
    pub fn path(&self) -> &Path {
        self.out.path()
    }

    /// Appends a record.
    pub fn push(&mut self, r: &RequestRecord) -> std::io::Result<()> {
        self.buf.clear();
        encode(&mut self.buf, r);
        self.out.write_all(&self.buf)?;
        self.count += 1;
        Ok(())
    }

    /// The spool, its records written.
    pub fn finish(self) -> SpooledRecords {
        SpooledRecords {
            scratch: self.out.finish(),
            count: self.count,
            keep: None,
        }
    }
}

/// The records of a [`RecordSpool`], read back in the order written.
#[derive(Debug)]
pub struct SpooledRecords {
    scratch: Scratch,
    count: usize,
    /// Which records [`EachRequest`] gives: these positions (ascending), or all.
    keep: Option<Vec<usize>>,
}

impl SpooledRecords {
    /// Records in the file.
    pub fn len(&self) -> usize {
        self.count
    }

    /// Whether the file holds none.
    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    /// Its scratch file (whose [`failure`](Scratch::failure) says whether the disk refused
    /// part of it, then held in memory).
    pub fn scratch(&self) -> &Scratch {
        &self.scratch
    }

    /// Its scratch file's name when made.
    pub fn path(&self) -> &Path {
        self.scratch.path()
    }

    /// From now on, [`EachRequest`] gives only the records at these positions (ascending;
    /// positions past the end are ignored).
    pub fn keep_only(&mut self, positions: Vec<usize>) {
        self.keep = Some(positions);
    }

    /// Calls `f` with each record at the positions in `keep` (ascending), or with every record,
    /// in the order written.
    pub fn each(
        &self,
        keep: Option<&[usize]>,
        f: &mut dyn FnMut(&RequestRecord) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        let mut input = self.scratch.reader()?;
        let mut wanted = keep.map(|k| k.iter().copied().peekable());
        let mut r = RequestRecord::default();
        for at in 0..self.count {
            decode(&mut input, &mut r)?;
            let take = match wanted.as_mut() {
                None => true,
                Some(w) => {
                    while w.next_if(|&i| i < at).is_some() {}
                    match w.peek() {
                        Some(&i) if i == at => {
                            w.next();
                            true
                        }
                        Some(_) => false,
                        None => break,
                    }
                }
            };
            if take {
                f(&r)?;
            }
        }
        Ok(())
    }
}

impl EachRequest for SpooledRecords {
    fn each_request(
        &self,
        f: &mut dyn FnMut(&RequestRecord) -> std::io::Result<()>,
    ) -> std::io::Result<()> {
        self.each(self.keep.as_deref(), f)
    }
}

/// Appends a record to `out` in the spool's form, for a scratch file of one's own; read back
/// with [`decode_record`].
pub fn encode_record(out: &mut Vec<u8>, r: &RequestRecord) {
    encode(out, r);
}

/// The record [`encode_record`] wrote at the start of `input`.
pub fn decode_record(input: &mut impl Read) -> std::io::Result<RequestRecord> {
    let mut r = RequestRecord::default();
    decode(input, &mut r)?;
    Ok(r)
}

fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}

fn put_f64(out: &mut Vec<u8>, v: f64) {
    put_u64(out, v.to_bits());
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) {
    put_u64(out, b.len() as u64);
    out.extend_from_slice(b);
}

fn put_opt_u64(out: &mut Vec<u8>, v: Option<u64>) {
    out.push(u8::from(v.is_some()));
    put_u64(out, v.unwrap_or(0));
}

fn put_opt_f64(out: &mut Vec<u8>, v: Option<f64>) {
    put_opt_u64(out, v.map(f64::to_bits));
}

fn encode(out: &mut Vec<u8>, r: &RequestRecord) {
    put_u64(out, r.index as u64);
    put_u64(out, r.input_len);
    put_u64(out, r.max_tokens);
    put_f64(out, r.intended_at_s);
    put_f64(out, r.dispatched_at_s);
    put_f64(out, r.schedule_lag_s);
    put_f64(out, r.sent_at_s);
    put_opt_f64(out, r.ttft_s);
    put_opt_f64(out, r.write_delay_s);
    put_opt_f64(out, r.first_read_delay_s);
    let (bytes, len, last_ns) = r.chunks.packed();
    put_bytes(out, bytes);
    put_u64(out, len as u64);
    put_u64(out, last_ns);
    put_opt_f64(out, r.e2el_s);
    put_opt_u64(out, r.output_tokens_server);
    put_opt_u64(out, r.input_tokens_server);
    put_u64(out, r.output_chunks_local);
    put_u64(out, r.coalesced_chunks);
    out.push(
        u8::from(r.ignore_eos)
            | u8::from(r.finish_reason_missing) << 1
            | u8::from(r.retried_unsent) << 2
            | u8::from(r.usage_ignored) << 3,
    );
    put_bytes(out, r.generated_text.as_bytes());
    put_opt_u64(out, r.output_tokens_text);
    match &r.failure {
        None => out.push(0),
        Some(f) => {
            out.push(1);
            put_bytes(out, f.kind.name().as_bytes());
            put_bytes(out, f.message.as_bytes());
        }
    }
    match &r.turn {
        None => out.push(0),
        Some(t) => {
            out.push(1);
            put_u64(out, t.conversation as u64);
            put_u64(out, t.turn as u64);
            put_u64(out, t.new_input_len);
            put_f64(out, t.think_time_s);
        }
    }
}

fn bad(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::InvalidData,
        format!("a spooled record is damaged: {what}"),
    )
}

fn take_u8(input: &mut impl Read) -> std::io::Result<u8> {
    let mut b = [0u8; 1];
    input.read_exact(&mut b)?;
    Ok(b[0])
}

fn take_u64(input: &mut impl Read) -> std::io::Result<u64> {
    let mut b = [0u8; 8];
    input.read_exact(&mut b)?;
    Ok(u64::from_le_bytes(b))
}

fn take_usize(input: &mut impl Read) -> std::io::Result<usize> {
    usize::try_from(take_u64(input)?).map_err(|_| bad("a count too large"))
}

fn take_f64(input: &mut impl Read) -> std::io::Result<f64> {
    take_u64(input).map(f64::from_bits)
}

fn take_opt_u64(input: &mut impl Read) -> std::io::Result<Option<u64>> {
    let some = take_u8(input)? != 0;
    let v = take_u64(input)?;
    Ok(some.then_some(v))
}

fn take_opt_f64(input: &mut impl Read) -> std::io::Result<Option<f64>> {
    Ok(take_opt_u64(input)?.map(f64::from_bits))
}

/// Reads a length and that many bytes into `into` (cleared first).
fn take_bytes(input: &mut impl Read, into: &mut Vec<u8>) -> std::io::Result<()> {
    let n = take_u64(input)?;
    into.clear();
    let got = input.take(n).read_to_end(into)?;
    if got as u64 != n {
        return Err(bad("cut short"));
    }
    Ok(())
}

fn take_string(input: &mut impl Read, into: &mut String) -> std::io::Result<()> {
    let mut bytes = std::mem::take(into).into_bytes();
    take_bytes(input, &mut bytes)?;
    *into = String::from_utf8(bytes).map_err(|_| bad("a text not UTF-8"))?;
    Ok(())
}

/// Reads the next record into `r` (its buffers reused).
fn decode(input: &mut impl Read, r: &mut RequestRecord) -> std::io::Result<()> {
    r.index = take_usize(input)?;
    r.input_len = take_u64(input)?;
    r.max_tokens = take_u64(input)?;
    r.intended_at_s = take_f64(input)?;
    r.dispatched_at_s = take_f64(input)?;
    r.schedule_lag_s = take_f64(input)?;
    r.sent_at_s = take_f64(input)?;
    r.ttft_s = take_opt_f64(input)?;
    r.write_delay_s = take_opt_f64(input)?;
    r.first_read_delay_s = take_opt_f64(input)?;
    let mut bytes = Vec::new();
    take_bytes(input, &mut bytes)?;
    let len = take_usize(input)?;
    let last_ns = take_u64(input)?;
    r.chunks = ChunkLog::from_packed(bytes, len, last_ns);
    r.e2el_s = take_opt_f64(input)?;
    r.output_tokens_server = take_opt_u64(input)?;
    r.input_tokens_server = take_opt_u64(input)?;
    r.output_chunks_local = take_u64(input)?;
    r.coalesced_chunks = take_u64(input)?;
    let flags = take_u8(input)?;
    r.ignore_eos = flags & 1 != 0;
    r.finish_reason_missing = flags & 2 != 0;
    r.retried_unsent = flags & 4 != 0;
    r.usage_ignored = flags & 8 != 0;
    take_string(input, &mut r.generated_text)?;
    r.output_tokens_text = take_opt_u64(input)?;
    r.failure = match take_u8(input)? {
        0 => None,
        _ => {
            let mut name = String::new();
            take_string(input, &mut name)?;
            let kind = FailureKind::from_name(&name).ok_or_else(|| bad("a failure kind"))?;
            let mut message = String::new();
            take_string(input, &mut message)?;
            Some(Failure { kind, message })
        }
    };
    r.turn = match take_u8(input)? {
        0 => None,
        _ => Some(TurnOf {
            conversation: take_usize(input)?,
            turn: take_usize(input)?,
            new_input_len: take_u64(input)?,
            think_time_s: take_f64(input)?,
        }),
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::record::ChunkArrival;

    fn records() -> Vec<RequestRecord> {
        (0..40)
            .map(|i| {
                let chunks: ChunkLog = (0..(i % 6))
                    .map(|k| ChunkArrival {
                        at_s: 0.01 * i as f64 + 0.0031 * k as f64,
                        tokens: 1 + (k % 3) as u32 * 40_000,
                        coalesced: k % 2 == 1,
                    })
                    .collect();
                RequestRecord {
                    index: i * 3,
                    input_len: 17 + i as u64,
                    max_tokens: 64,
                    intended_at_s: i as f64 * 0.1,
                    dispatched_at_s: i as f64 * 0.1 + 1e-7,
                    schedule_lag_s: 1e-7,
                    sent_at_s: -0.0,
                    ttft_s: (i % 4 != 0).then_some(0.05 + i as f64),
                    write_delay_s: (i % 3 == 0).then_some(f64::NAN),
                    first_read_delay_s: Some(f64::INFINITY),
                    e2el_s: (i % 5 != 1).then_some(1.0 / 3.0),
                    output_tokens_server: (i % 2 == 0).then_some(u64::MAX),
                    input_tokens_server: (i % 7 == 0).then_some(12),
                    output_chunks_local: chunks.len() as u64,
                    coalesced_chunks: 2,
                    ignore_eos: i % 2 == 0,
                    finish_reason_missing: i % 3 == 0,
                    retried_unsent: i % 4 == 1,
                    usage_ignored: i % 5 == 2,
                    server_model: None,
                    generated_text: "é\n\"x\"".repeat(i % 3),
                    output_tokens_text: (i % 4 == 0).then_some(9),
                    failure: match i % 5 {
                        1 => Some(Failure::new(FailureKind::Http(503), "busy\nnow")),
                        2 => Some(Failure::new(FailureKind::Truncated, "")),
                        _ => None,
                    },
                    turn: (i % 3 == 1).then_some(TurnOf {
                        conversation: i / 3,
                        turn: i % 3,
                        new_input_len: 4,
                        think_time_s: 0.25,
                    }),
                    chunks,
                }
            })
            .collect()
    }

    /// Debug prints each f64 in its shortest exact form (and NaN as NaN): equal text, equal
    /// records, NaN included.
    fn text(rs: &[RequestRecord]) -> String {
        format!("{rs:?}")
    }

    #[test]
    fn records_read_back_as_written_all_or_some() {
        let dir = tempfile::tempdir().unwrap();
        let all = records();
        let mut spool = RecordSpool::new(ScratchWriter::create(dir.path(), "spool").unwrap());
        for r in &all {
            spool.push(r).unwrap();
        }
        // Its scratch file has no name in the folder.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let mut spooled = spool.finish();
        assert_eq!(spooled.len(), 40);
        let mut back = Vec::new();
        spooled
            .each_request(&mut |r| {
                back.push(r.clone());
                Ok(())
            })
            .unwrap();
        assert_eq!(text(&back), text(&all));
        for (a, b) in back.iter().zip(&all) {
            assert_eq!(a.chunks, b.chunks);
        }
        spooled.keep_only(vec![0, 5, 6, 39, 40, 90]);
        let mut some = Vec::new();
        spooled
            .each_request(&mut |r| {
                some.push(r.index);
                Ok(())
            })
            .unwrap();
        assert_eq!(some, vec![0, 15, 18, 117]);
        let mut none = 0;
        spooled
            .each(Some(&[]), &mut |_| {
                none += 1;
                Ok(())
            })
            .unwrap();
        assert_eq!(none, 0);
    }

    #[test]
    fn a_damaged_spool_is_an_error_not_a_panic() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spool");
        let file = std::fs::File::options()
            .create_new(true)
            .read(true)
            .write(true)
            .open(&path)
            .unwrap();
        let mut spool = RecordSpool::new(ScratchWriter::over(file, path.clone()).unwrap());
        for r in &records()[..3] {
            spool.push(r).unwrap();
        }
        let spooled = spool.finish();
        let bytes = std::fs::read(&path).unwrap();
        std::fs::write(&path, &bytes[..bytes.len() - 5]).unwrap();
        let mut seen = 0;
        let err = spooled
            .each(None, &mut |_| {
                seen += 1;
                Ok(())
            })
            .unwrap_err();
        assert_eq!(err.kind(), std::io::ErrorKind::UnexpectedEof);
        assert_eq!(seen, 2);
    }
}
