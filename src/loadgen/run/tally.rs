//! A stage's figures made while it runs: the sink's worker hands each request that ended to a
//! [`StageTally`], in the stage's order, and the tally keeps only what the stage's end needs —
//! a few numbers per request for the metrics, the view and the series ([`MetricsTally`],
//! [`ViewTally`], [`SeriesTally`]), the request's reads for the second pass over the
//! inter-token latencies (packed, in [`ChunkLog`] segments of 1 MiB; none for a reply that came
//! in one read, which has none), and its canonical detail written to a spool file
//! ([`DetailSpool`]).
//! So the records themselves are let go as they end, and the stage's end sorts samples and
//! copies a file rather than going over every request again.
//!
//! When the requests are needed again after the stage — `--vllm-compatible` writes each one's
//! figures into vLLM's arrays, and `--steady-window` measures only the requests sent in a window
//! known at the stage's end — each whole record is spooled to disk too ([`RecordSpool`]), and
//! the ITL's second pass reads the records back rather than keeping their reads.
//! With `--steady-window` the tally keeps each request's span (two numbers) while the stage
//! runs, and at its end picks the window, reads the window's records back from the spool and
//! makes the figures and detail of those, as [`crate::loadgen::run::steady_window_of`] and the
//! figures over the records it keeps did.
//!
//! The figures are bit for bit those [`stage_figures`] makes from the stage's records after it
//! (and [`crate::loadgen::report::write_canonical`] the detail): the same code, fed in the same
//! order, into the same [`StageFigures`].

use std::cell::RefCell;

use crate::loadgen::capacity::RequestSpan;
#[cfg(doc)]
use crate::loadgen::figures::stage_figures;
use crate::loadgen::figures::{span_of, window_of, window_seconds, FigureOpts, StageFigures};
use crate::loadgen::measure::{has_latencies, itl_of, request_latencies, MetricsTally, Slo};
use crate::loadgen::record::{
    ChunkArrival, ChunkLog, ChunkLogIter, EachRequest, RecordSpool, RequestRecord, SpooledRecords,
};
use crate::loadgen::report::{DetailSpool, SpooledDetail, ViewTally};
use crate::loadgen::timeline::SeriesTally;
use crate::loadgen::LoadgenError;

/// What a stage's figures are made with.
pub(super) struct TallyConfig {
    /// `--goodput`.
    pub(super) slo: Option<Slo>,
    /// Where the stage's canonical detail is spooled.
    pub(super) spool: DetailSpool,
    /// Where every request's whole record is spooled too, when something reads the requests
    /// again after the stage (`--vllm-compatible`'s per-request arrays, the steady window's
    /// figures).
    pub(super) records: Option<RecordSpool>,
    /// `--steady-window`: the metrics, view and detail are those of the requests sent in the
    /// stage's steady window ([`window_of`]), made at the stage's end from the spooled records
    /// (`records` must be given); the series covers every request.
    pub(super) steady: bool,
}

/// A stage's figures so far (see the module doc).
pub(super) struct StageTally {
    figures: Figures,
    series: SeriesTally,
    records: Option<RecordSpool>,
    records_error: Option<std::io::Error>,
    /// `--steady-window`: each request's span, for the window at the stage's end (the figures
    /// wait for it).
    spans: Option<Vec<RequestSpan>>,
}

/// The figures made of the requests measured (every one, or the steady window's).
struct Figures {
    metrics: MetricsTally,
    view: ViewTally,
    /// The observed reads of each request with inter-token latencies, for the ITL's second
    /// pass (see [`Reads`]); none when the records are spooled (the pass reads them again).
    reads: Option<Reads>,
    spool: DetailSpool,
    spool_error: Option<std::io::Error>,
}

impl Figures {
    fn add(&mut self, r: &RequestRecord) {
        let l = request_latencies(r);
        self.metrics.add(r, l.as_ref());
        self.view.add(r, l.as_ref().map(|l| l.e2el_ms));
        if let (Some(all), true) = (self.reads.as_mut(), l.is_some()) {
            let reads = observed_reads(&r.chunks);
            // One read has no gap to time.
            if reads.len() > 1 {
                all.push(reads);
            }
        }
        if self.spool_error.is_none() {
            if let Err(e) = self.spool.push(r) {
                self.spool_error = Some(e);
            }
        }
    }
}

impl StageTally {
    /// No requests yet, with room for `expected` of them.
    pub(super) fn new(config: TallyConfig, expected: usize) -> StageTally {
        StageTally {
            figures: Figures {
                metrics: MetricsTally::with_capacity(config.slo, expected),
                view: ViewTally::with_capacity(expected),
                reads: config.records.is_none().then(Reads::default),
                spool: config.spool,
                spool_error: None,
            },
            series: SeriesTally::new(),
            records: config.records,
            records_error: None,
            spans: config.steady.then(|| Vec::with_capacity(expected)),
        }
    }

    /// Counts the next request of the stage (one not cancelled).
    pub(super) fn add(&mut self, r: &RequestRecord) {
        self.series.add(r);
        match self.spans.as_mut() {
            Some(spans) => spans.push(span_of(r)),
            None => self.figures.add(r),
        }
        if let (Some(records), None) = (self.records.as_mut(), self.records_error.as_ref()) {
            if let Err(e) = records.push(r) {
                self.records_error = Some(e);
            }
        }
    }

    /// The stage's figures (with `--steady-window` of its window, whose length is then the
    /// metrics' duration rather than `how.duration_s`), its spooled detail and records.
    /// `cancelled`: the requests the interrupt cut off (left out of the tally).
    pub(super) fn finish(
        self,
        how: FigureOpts<'_>,
        cancelled: u64,
    ) -> Result<Tallied, LoadgenError> {
        let StageTally {
            mut figures,
            series,
            records,
            records_error,
            spans,
        } = self;
        let records_failed = |path: &std::path::Path, source| LoadgenError::Write {
            path: path.into(),
            source,
        };
        let mut records = match records {
            Some(r) => {
                if let Some(source) = records_error {
                    return Err(records_failed(r.path(), source));
                }
                Some(r.finish())
            }
            None => None,
        };
        let (window, duration_s) = match spans {
            Some(spans) => {
                let w = window_of(&spans);
                drop(spans);
                let Some(all) = records.as_mut() else {
                    return Err(LoadgenError::Write {
                        path: "the steady window's requests".into(),
                        source: std::io::Error::other("not spooled"),
                    });
                };
                all.each(Some(&w.indices), &mut |r| {
                    figures.add(r);
                    Ok(())
                })
                .map_err(|e| records_failed(all.path(), e))?;
                all.keep_only(w.indices.clone());
                let duration = window_seconds(&w);
                (Some(w), duration)
            }
            None => (None, how.duration_s),
        };
        let Figures {
            metrics,
            view: view_tally,
            reads,
            spool,
            spool_error,
        } = figures;
        let detail = spool.finish();
        if let Some(source) = spool_error {
            return Err(records_failed(detail.scratch().path(), source));
        }
        let (target_rate, percentiles) = (how.target_rate, how.percentiles);
        // The ITL's second pass: over the reads kept, or the records spooled (the same gaps,
        // requests in the same order: those the figures were made of).
        let read_error: RefCell<Option<std::io::Error>> = RefCell::new(None);
        let metrics = metrics.finish(duration_s, target_rate, percentiles, |f| {
            match (&reads, &records) {
                (Some(reads), _) => reads.each(|all, n| itl_of(all.take(n), f)),
                (None, Some(records)) => {
                    let read = records.each_request(&mut |r| {
                        if has_latencies(r) {
                            itl_of(&r.chunks, &mut *f);
                        }
                        Ok(())
                    });
                    if let Err(e) = read {
                        read_error.borrow_mut().get_or_insert(e);
                    }
                }
                (None, None) => {}
            }
        });
        drop(reads);
        if let (Some(source), Some(records)) = (read_error.into_inner(), &records) {
            return Err(records_failed(records.path(), source));
        }
        Ok(Tallied {
            figures: StageFigures {
                metrics,
                view: view_tally.finish(how.percentile_metrics, percentiles.to_vec(), cancelled),
                series: series.finish(),
                cancelled,
                window,
            },
            detail,
            records,
        })
    }
}

/// Requests' reads, one request's after the other, in segments of about [`Reads::SEGMENT`]
/// bytes: each a packed log and how many reads each of its requests has. Segments of a fixed
/// size rather than one log that doubles, so the room held is the bytes used plus one segment
/// (a doubling log holds up to twice its bytes, and three times while it is copied).
struct Reads {
    /// Bytes a segment is made with room for.
    segment: usize,
    segments: Vec<(ChunkLog, Vec<u32>)>,
}

impl Default for Reads {
    fn default() -> Reads {
        Reads {
            segment: Reads::SEGMENT,
            segments: Vec::new(),
        }
    }
}

impl Reads {
    /// Bytes a segment is made with room for.
    const SEGMENT: usize = 1 << 20;

    /// Each request's reads, in the order pushed: `f` takes the next `n` from the iterator.
    fn each(&self, mut f: impl FnMut(&mut ChunkLogIter<'_>, usize)) {
        for (log, counts) in &self.segments {
            let mut all = log.iter();
            for &n in counts {
                f(&mut all, n as usize);
            }
        }
    }

    /// Appends one request's reads.
    fn push(&mut self, reads: Vec<ChunkArrival>) {
        // A read takes at most 15 bytes (two varints): a request that might not fit starts a
        // new segment (one of more reads than a segment holds gets one of its own, grown).
        let room = |s: &(ChunkLog, Vec<u32>)| s.0.heap_bytes() - s.0.byte_len();
        if self
            .segments
            .last()
            .is_none_or(|s| room(s) < reads.len() * 15)
        {
            let chunks = self.segment / 4;
            self.segments.push((
                ChunkLog::with_capacity(chunks),
                Vec::with_capacity(chunks / 64),
            ));
        }
        if let Some((log, counts)) = self.segments.last_mut() {
            counts.push(reads.len() as u32);
            reads.into_iter().for_each(|c| log.push(c));
        }
    }
}

/// A stage's figures, made by its [`StageTally`].
pub(super) struct Tallied {
    /// The stage's figures (with `--steady-window`, of its window).
    pub(super) figures: StageFigures,
    /// The stage's canonical detail.
    pub(super) detail: SpooledDetail,
    /// The spooled records, when they were (with a window: giving only its requests).
    pub(super) records: Option<SpooledRecords>,
}

/// A reply's chunks as the reads that brought them, each a chunk of all their tokens (the
/// first read's extra tokens moved to the second, where [`itl_of`] counts them): the same
/// inter-token latencies from one entry per read, not per chunk.
fn observed_reads(chunks: &ChunkLog) -> Vec<ChunkArrival> {
    let mut reads: Vec<(f64, u32)> = Vec::new();
    let mut first_read_extra = 0u32;
    for c in chunks {
        let k = c.tokens.max(1);
        let first_read = reads.len() == 1;
        match reads.last_mut() {
            Some(_) if c.coalesced && first_read => first_read_extra += k,
            Some(last) if c.coalesced => last.1 = last.1.saturating_add(k),
            _ => reads.push((c.at_s, k)),
        }
    }
    if let Some(second) = reads.get_mut(1) {
        second.1 = second.1.saturating_add(first_read_extra);
    }
    reads
        .into_iter()
        .map(|(at_s, tokens)| ChunkArrival {
            at_s,
            tokens,
            coalesced: false,
        })
        .collect()
}

#[cfg(test)]
mod tests;
