//! The rows of a large quote-free CSV mapped on several threads (native builds, rayon).
//!
//! The text left after the sampled rows is cut at line ends into one run per core. Each run is
//! mapped on rayon's pool with its own copy of the [`RowMapper`] (with its own copies of the
//! shared texts: threads adding references to one `Arc` would fight over its counter) and
//! writes its records over placeholders in its own part of the output vector, so no record is
//! moved afterwards (at most the parts are closed up when rows were skipped). The placeholders
//! are written on every core at once, which also spreads the page faults of the fresh memory.
//! Warnings are merged in row order, so the result (records, warnings and their lines) is what
//! the sequential loop gives.
//!
//! The placeholders are the price of doing this without `unsafe`: the hand-written fan-out
//! this replaced wrote into the vector's uninitialised spare room instead. Measured here
//! (`benchlens inspect` of a 1,000,000-row tidy CSV, 55.6 MB, two cores, nine runs
//! alternating with the old build): wall time 1.04 (0.82–1.30) of the old, CPU time 1.06
//! (1.02–1.24), about 40 ms of CPU more per million rows (`scripts/bench-ingest-cli.sh` with
//! `OLD=` prints such figures).

use rayon::prelude::*;

use super::plain_rows::PlainRows;
use super::ragged::Ragged;
use super::rows::{RecordSink, RowMapper};
use crate::ingest::Warning;
use crate::model::Record;

/// Less text than this per thread is mapped on the calling thread.
pub(super) const MIN_RUN_BYTES: usize = 1 << 20;

/// At most this many threads.
const MAX_THREADS: usize = 8;

/// One run's part of the output: room for `slots.len()` records, the first `len` written.
struct Part<'s> {
    slots: &'s mut [Record],
    len: usize,
    /// A row gave more records than there was room for (the room is an upper bound, so this
    /// does not happen; if it did, the caller maps the rows on one thread instead).
    overflowed: bool,
}

impl RecordSink for Part<'_> {
    #[inline]
    fn push(&mut self, r: Record) -> Option<&mut Record> {
        let Some(slot) = self.slots.get_mut(self.len) else {
            self.overflowed = true;
            return None;
        };
        self.len += 1;
        *slot = r;
        Some(slot)
    }

    #[inline]
    fn pop(&mut self) {
        // The record stays in its slot until it is written over or cut off with the room
        // left unused.
        self.len = self.len.saturating_sub(1);
    }
}

/// What one thread did with its run.
struct RunOut {
    /// Records written at the start of the run's part.
    written: usize,
    overflowed: bool,
    warnings: Vec<Warning>,
    /// Indexes into `warnings` of the ragged-row warnings.
    ragged_at: Vec<usize>,
    ragged: usize,
    any_inferred: bool,
}

/// Where the rows of `rows` can be cut into runs: after a `\n` that ends a non-empty row.
/// Returns the runs with, for each, an upper bound on its rows.
fn cut<'a>(rows: &PlainRows<'a>, runs: usize) -> Vec<(PlainRows<'a>, usize)> {
    let text = rows.rest;
    let bytes = text.as_bytes();
    let has_cr = memchr::memchr(b'\r', bytes).is_some();
    // Rows end at `\n` or `\r`, so their count is at most the count of those, plus one for
    // a last line without an end. Every run but the last ends with a `\n`, so it has no such
    // line; an exact bound saves closing up the parts afterwards.
    let row_bound = |piece: &[u8]| {
        let ends = if has_cr {
            memchr::memchr2_iter(b'\n', b'\r', piece).count()
        } else {
            memchr::memchr_iter(b'\n', piece).count()
        };
        ends + usize::from(piece.last() != Some(&b'\n'))
    };
    let mut out = Vec::with_capacity(runs);
    let (mut start, mut line, mut reported) = (0, rows.line, rows.reported);
    for k in 1..runs {
        let target = bytes.len() / runs * k;
        if target <= start {
            continue;
        }
        // The first `\n` at or after `target` that ends a non-empty row (`x\n` or `x\r\n`).
        let Some(end) = memchr::memchr_iter(b'\n', &bytes[target..])
            .map(|i| target + i)
            .find(|&i| match i.checked_sub(1).map(|j| bytes[j]) {
                Some(b'\n') | None => false,
                Some(b'\r') => !matches!(
                    i.checked_sub(2).map(|j| bytes[j]),
                    Some(b'\n' | b'\r') | None
                ),
                Some(_) => true,
            })
        else {
            break;
        };
        let p = end + 1;
        if p >= bytes.len() {
            break;
        }
        let piece = &bytes[start..p];
        out.push((
            PlainRows {
                rest: &text[start..p],
                line,
                reported,
                delimiter: rows.delimiter,
            },
            row_bound(piece),
        ));
        // The state the sequential reader has at `p`: the row before ended at `\r` (its `\n`
        // then read as an empty line) or at `\n`.
        line += memchr::memchr_iter(b'\n', piece).count();
        reported = if bytes[end - 1] == b'\r' {
            line - 1
        } else {
            line
        };
        start = p;
    }
    out.push((
        PlainRows {
            rest: &text[start..],
            line,
            reported,
            delimiter: rows.delimiter,
        },
        row_bound(&bytes[start..]),
    ));
    out
}

/// How many threads to map `bytes` of rows on: one per core, each with at least
/// [`MIN_RUN_BYTES`].
pub(super) fn runs_for(bytes: usize) -> usize {
    let most = (bytes / MIN_RUN_BYTES).min(MAX_THREADS);
    if most < 2 {
        // Not worth asking the system (which reads the cgroup's CPU quota).
        return 1;
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    cores.min(most)
}

/// Maps the rows left in `rows` on `runs` threads into `records`, with their warnings into
/// `warnings` and ragged rows counted in `ragged`. Returns `false`, having changed nothing,
/// when the rows cannot be cut into two runs or more.
pub(super) fn map_rows(
    rows: &PlainRows<'_>,
    mapper: &mut RowMapper<'_>,
    width: usize,
    ragged: &mut Ragged,
    records: &mut Vec<Record>,
    warnings: &mut Vec<Warning>,
    runs: usize,
) -> bool {
    if runs < 2 {
        return false;
    }
    let runs = cut(rows, runs);
    if runs.len() < 2 {
        return false;
    }
    let per_row = mapper.per_row();
    let room: Vec<usize> = runs.iter().map(|(_, n)| n * per_row).collect();
    let total: usize = room.iter().sum();
    let base = records.len();
    records.reserve_exact(total);
    records.par_extend((0..total).into_par_iter().map(|_| Record::default()));
    let mut spare = &mut records[base..];
    let mut parts = Vec::with_capacity(runs.len());
    for &n in &room {
        let (part, rest) = std::mem::take(&mut spare).split_at_mut(n);
        parts.push(part);
        spare = rest;
    }
    let template = &*mapper;
    let outs: Vec<RunOut> = runs
        .into_par_iter()
        .zip(parts)
        .map(|((mut run, _), slots)| {
            let mut mapper = template.detached();
            let mut part = Part {
                slots,
                len: 0,
                overflowed: false,
            };
            let mut warnings = Vec::new();
            let mut ragged_at = Vec::new();
            let mut own = Ragged { count: 0 };
            let mut cells: Vec<&str> = Vec::new();
            while let Some(line) = run.next(&mut cells) {
                let before = warnings.len();
                own.check(line, cells.len(), width, &mut warnings);
                if warnings.len() > before {
                    ragged_at.push(before);
                }
                mapper.row(line, cells.as_slice(), &mut part, &mut warnings);
                if part.overflowed {
                    break;
                }
            }
            RunOut {
                written: part.len,
                overflowed: part.overflowed,
                warnings,
                ragged_at,
                ragged: own.count,
                any_inferred: mapper.any_inferred,
            }
        })
        .collect();
    if outs.iter().any(|o| o.overflowed) {
        records.truncate(base);
        return false;
    }
    // Close up the parts: each run's records follow the previous run's.
    let (mut from, mut to) = (base, base);
    for (o, n) in outs.iter().zip(&room) {
        if from != to {
            // The run's records move down over the room the runs before it left unused.
            records[to..from + o.written].rotate_left(from - to);
        }
        to += o.written;
        from += n;
    }
    records.truncate(to);
    // Warnings in row order; ragged rows listed up to the first 20 of the whole file, as the
    // sequential loop lists them; file-level notes once.
    for o in outs {
        mapper.any_inferred |= o.any_inferred;
        let mut listed = o.ragged_at.iter().peekable();
        for (i, w) in o.warnings.into_iter().enumerate() {
            if listed.next_if_eq(&&i).is_some() {
                ragged.count += 1;
                if ragged.count > Ragged::LISTED {
                    continue;
                }
                warnings.push(w);
            } else if w.at.is_none() {
                crate::ingest::fields::note_in(warnings, w.message);
            } else {
                warnings.push(w);
            }
        }
        let listed_here = o.ragged_at.len();
        ragged.count += o.ragged - listed_here;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::delimited::read_plain_csv;
    use super::{cut, PlainRows};
    use crate::ingest::{Format, Ingested};

    /// The same text read on one thread and on `runs` threads.
    fn both(text: &str, runs: usize) -> (Ingested, Ingested) {
        let read = |runs| {
            let mut out = Ingested::new(Format::GenericCsv);
            read_plain_csv("t.csv", text, b',', None, &mut out, runs).expect("reads");
            out
        };
        (read(1), read(runs))
    }

    /// A table with every kind of row the reader treats specially, in a mixed order: blank
    /// and empty lines, ragged rows, cells that are no number, placeholders, units, spaces,
    /// values a count cannot hold, `\r\n` and lone `\r` line ends.
    fn awkward(rows: usize, seed: u64) -> String {
        let mut x = seed;
        let mut next = || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        let mut s = String::from("model,gpu,batch,TTFT (ms),tpot_s,Throughput (tok/s),note\n");
        for i in 0..rows {
            let end = match next() % 20 {
                0 => "\r\n",
                1 => "\r",
                _ => "\n",
            };
            let row = match next() % 25 {
                0 => String::new(),
                1 => "  , ,  ,,,,".to_string(),
                2 => format!("m{},H100,{}", i % 5, i),
                3 => format!("m{},H100,8,1,2,3,x,extra,cells", i % 3),
                4 => format!("m{},A100,8,abc,0.01,5,", i % 4),
                5 => format!("m{},A100,-,n/a,0.02,6,none", i % 4),
                6 => format!(" m{} ,8xH100,2.5,12 ms,0.5 s,1 000,y", i % 2),
                7 => format!("m{},H100,-3,10,0.1,7,z", i % 2),
                _ => format!(
                    "llama-{},H100,{},{}.{},0.0{},{},",
                    i % 7,
                    1 << (i % 8),
                    40 + i % 100,
                    i % 10,
                    i % 9,
                    1500 + i % 1000
                ),
            };
            s.push_str(&row);
            s.push_str(end);
        }
        s
    }

    #[test]
    fn several_threads_read_what_one_reads() {
        for (seed, rows) in [(1, 3000), (2, 1200), (3, 5000)] {
            let text = awkward(rows, seed);
            for runs in [2, 3, 4, 7] {
                let (one, many) = both(&text, runs);
                assert!(one.records.len() > rows / 2, "{}", one.records.len());
                assert_eq!(one.records, many.records, "seed {seed}, {runs} runs");
                assert_eq!(one.warnings, many.warnings, "seed {seed}, {runs} runs");
                assert_eq!(one.mapping, many.mapping);
            }
        }
    }

    #[test]
    fn several_threads_read_what_one_reads_from_random_text() {
        let tokens = [
            ",", ",", "\n", "\n", "\r", "\r\n", "1", "2.5", "-3", "x", "é", " ", "-", "n/a", "1e3",
            "\t", "8xH100", "1,024", "ms",
        ];
        let mut x: u64 = 11;
        let mut next = move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (x >> 33) as usize
        };
        for _ in 0..300 {
            let mut text = String::from("model,gpu,TTFT (ms),batch,Throughput (tok/s)\n");
            let len = 200 + next() % 1500;
            for _ in 0..len {
                text.push_str(tokens[next() % tokens.len()]);
            }
            for runs in [2, 3] {
                let (one, many) = both(&text, runs);
                assert_eq!(one.records, many.records, "{text:?}");
                assert_eq!(one.warnings, many.warnings, "{text:?}");
            }
        }
    }

    #[test]
    fn ragged_rows_are_listed_up_to_twenty_across_threads() {
        let mut text = String::from("model,TTFT (ms)\n");
        for i in 0..2000 {
            if i % 40 == 7 {
                text.push_str(&format!("m{i},1,2\n"));
            } else {
                text.push_str(&format!("m{i},{i}\n"));
            }
        }
        let (one, many) = both(&text, 4);
        assert_eq!(one.warnings, many.warnings);
        let listed = one
            .warnings
            .iter()
            .filter(|w| w.message.contains("cells where the header has"))
            .count();
        assert_eq!(listed, 20);
        assert!(one
            .warnings
            .iter()
            .any(|w| w.message == "50 ragged rows in all (only the first 20 are listed)"));
    }

    #[test]
    fn runs_end_where_rows_end() {
        for (end, last) in [("\n", ""), ("\r\n", "\r\n"), ("\n\n\n", "\n"), ("\r", "")] {
            let mut text = format!("a,TTFT (ms){end}");
            for i in 0..1000 {
                text.push_str(&format!("x{i},{i}{end}"));
            }
            text.push_str(&format!("last,1{last}"));
            for runs in 2..6 {
                let rows = PlainRows {
                    rest: &text,
                    line: 1,
                    reported: 1,
                    delimiter: b',',
                };
                let pieces = cut(&rows, runs);
                let whole: String = pieces.iter().map(|(p, _)| p.rest).collect();
                assert_eq!(whole, text);
                // Lone `\r` line ends leave no `\n` to cut at: one run, read on one thread.
                if end != "\r" {
                    assert_eq!(pieces.len(), runs, "{end:?}");
                }
                let (one, many) = both(&text, runs);
                assert_eq!(one.records.len(), 1001);
                assert_eq!(one.records, many.records, "{end:?} {runs}");
                assert_eq!(one.warnings, many.warnings, "{end:?} {runs}");
            }
        }
    }
}
