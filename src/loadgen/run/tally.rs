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
//! The figures are bit for bit those made from the stage's records after it
//! ([`crate::loadgen::measure::compute`], [`SummaryView::new`], [`crate::loadgen::timeline::series`],
//! [`crate::loadgen::report::write_canonical`]): the same code, fed in the same order.

use std::cell::RefCell;
use std::collections::BTreeMap;

use crate::loadgen::capacity::{steady_window, RequestSpan, SteadyWindow};
use crate::loadgen::measure::{
    has_latencies, itl_of, request_latencies, MetricsTally, Slo, StageMetrics,
};
use crate::loadgen::record::{
    ChunkArrival, ChunkLog, ChunkLogIter, EachRequest, RecordSpool, RequestRecord, SpooledRecords,
};
use crate::loadgen::report::{
    DetailSpool, PercentileMetric, SpooledDetail, SummaryView, ViewTally,
};
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

    /// The stage's metrics, view and series, its spooled detail, and with `--steady-window` its
    /// window (whose length is then the metrics' duration rather than `duration_s`).
    pub(super) fn finish(
        self,
        duration_s: f64,
        target_rate: f64,
        percentiles: &[f64],
        view: (Vec<PercentileMetric>, u64),
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
                let path = r.path().to_path_buf();
                Some(r.finish().map_err(|e| records_failed(&path, e))?)
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
                let duration = (w.end_s - w.start_s).max(1e-9);
                (Some(w), duration)
            }
            None => (None, duration_s),
        };
        let Figures {
            metrics,
            view: view_tally,
            reads,
            spool,
            spool_error,
        } = figures;
        let detail = spool.finish()?;
        if let Some(source) = spool_error {
            return Err(detail.write_error(source));
        }
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
            metrics,
            view: view_tally.finish(view.0, percentiles.to_vec(), view.1),
            series: series.finish(),
            detail,
            window,
            records,
        })
    }
}

/// A request's place for the steady window: its intended send time, so a client falling behind
/// does not move the window, and its end.
pub(super) fn span_of(r: &RequestRecord) -> RequestSpan {
    RequestSpan {
        sent_s: r.intended_at_s,
        end_s: r.sent_at_s + r.e2el_s.unwrap_or(0.0),
    }
}

/// The steady window of a stage's requests' spans ([`steady_window`]), the arrivals ending with
/// the last intended send.
pub(super) fn window_of(spans: &[RequestSpan]) -> SteadyWindow {
    let arrivals_end_s = spans.iter().map(|s| s.sent_s).fold(0.0, f64::max);
    steady_window(spans, arrivals_end_s)
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
    pub(super) metrics: StageMetrics,
    pub(super) view: SummaryView,
    pub(super) series: BTreeMap<String, Vec<f64>>,
    pub(super) detail: SpooledDetail,
    /// `--steady-window`: the window the figures are of.
    pub(super) window: Option<SteadyWindow>,
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
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::loadgen::measure::compute;
    use crate::loadgen::record::{Failure, FailureKind};
    use crate::loadgen::report::{
        self, stage_record, summary_text, write_canonical, write_canonical_spooled, StageInfo,
        StageOut, StageSpooled,
    };
    use crate::loadgen::run::sink::{Sink, SinkConfig, Tallying, TurnSource};
    use crate::loadgen::timeline;

    struct NoTurns;

    impl TurnSource for NoTurns {
        fn turns(&self, _: usize) -> Option<(&[crate::loadgen::conversation::Turn], bool)> {
            None
        }
    }

    /// Requests as a stage records them: replies read one chunk at a time, in bursts, with the
    /// second token in the first read, multi-token chunks, gaps of microseconds to seconds;
    /// failures of several kinds (one truncated after its chunks), a success without tokens,
    /// over-long and short replies, cancelled requests.
    fn recorded(n: usize) -> Vec<RequestRecord> {
        (0..n)
            .map(|i| {
                let failure = match i % 11 {
                    3 => Some(Failure::new(
                        FailureKind::Http(503),
                        "http://h/v1: busy\nnow",
                    )),
                    7 => Some(Failure::new(FailureKind::Truncated, "cut off")),
                    9 if i % 2 == 0 => Some(Failure::new(FailureKind::Cancelled, "cancelled")),
                    _ => None,
                };
                let chunk_count = if i % 13 == 5 { 0 } else { 3 + i % 9 };
                let chunks: ChunkLog = (0..chunk_count)
                    .map(|k| ChunkArrival {
                        at_s: 0.004
                            + (i % 5) as f64 * 0.3
                            + k as f64 * (1e-5 + (i * k % 7) as f64 * 0.011),
                        tokens: if k % 4 == 3 { 3 } else { 1 },
                        coalesced: k > 0 && (i + k) % 3 == 0,
                    })
                    .collect();
                let first = chunks.iter().next().map(|c| c.at_s);
                let last = chunks.iter().last().map(|c| c.at_s);
                let ok = failure.is_none();
                RequestRecord {
                    index: i,
                    input_len: 20 + (i % 4) as u64,
                    max_tokens: 12,
                    intended_at_s: i as f64 * 0.07,
                    dispatched_at_s: i as f64 * 0.07 + 2e-6,
                    schedule_lag_s: (i % 3) as f64 * 1e-6,
                    sent_at_s: i as f64 * 0.071,
                    ttft_s: first,
                    write_delay_s: (i % 5 != 0).then_some(3e-5 * i as f64),
                    first_read_delay_s: Some(1e-6 * (i % 4) as f64),
                    e2el_s: if ok { last.map(|t| t + 2e-4) } else { None },
                    output_tokens_server: (i % 2 == 0).then_some(if i % 10 == 0 { 30 } else { 12 }),
                    input_tokens_server: (i % 3 == 0).then_some(21),
                    output_chunks_local: chunks.len() as u64,
                    coalesced_chunks: chunks.iter().filter(|c| c.coalesced).count() as u64,
                    output_tokens_text: ok.then_some(12),
                    ignore_eos: true,
                    finish_reason_missing: i % 17 == 1,
                    chunks,
                    failure,
                    ..RequestRecord::default()
                }
            })
            .collect()
    }

    fn info() -> StageInfo {
        StageInfo::fixture(10.0, Some(8))
    }

    #[test]
    fn reads_in_many_segments_come_back_request_by_request() {
        let mut reads = Reads {
            segment: 256,
            ..Reads::default()
        };
        let all: Vec<Vec<ChunkArrival>> = recorded(60)
            .iter()
            .map(|r| observed_reads(&r.chunks))
            .filter(|v| v.len() > 1)
            .collect();
        for v in &all {
            reads.push(v.clone());
        }
        assert!(reads.segments.len() > 5, "{}", reads.segments.len());
        let mut back = Vec::new();
        reads.each(|all, n| back.push(all.take(n).collect::<Vec<_>>()));
        assert_eq!(back, all);
    }

    #[test]
    fn observed_reads_give_the_same_inter_token_latencies() {
        for r in recorded(60) {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            itl_of(&r.chunks, &mut |v| a.push(v.to_bits()));
            let reads: ChunkLog = observed_reads(&r.chunks).into_iter().collect();
            itl_of(&reads, &mut |v| b.push(v.to_bits()));
            assert_eq!(a, b, "request {}", r.index);
        }
    }

    /// The requests of `all` that were not cancelled, and how many were.
    fn not_cancelled(all: &[RequestRecord]) -> (Vec<RequestRecord>, u64) {
        let kept: Vec<RequestRecord> = all
            .iter()
            .filter(|r| {
                r.failure
                    .as_ref()
                    .is_none_or(|f| f.kind != FailureKind::Cancelled)
            })
            .cloned()
            .collect();
        let cancelled = (all.len() - kept.len()) as u64;
        (kept, cancelled)
    }

    /// `all` through a sink tallying into `tally` (`keep_text`: the replies' texts kept), the
    /// later sends of each group of `group` ending first.
    fn through_sink(
        all: &[RequestRecord],
        tally: StageTally,
        keep_text: bool,
        group: usize,
    ) -> Tallying {
        let config = SinkConfig {
            tokenizer: None,
            stage: 0,
            keep_text,
            file: None,
        };
        let (sink, tx) = Sink::start_tallied(Arc::new(NoTurns), config, all.len(), Some(tally));
        for g in all.chunks(group) {
            for r in g.iter().rev() {
                tx.send((r.index, r.clone())).unwrap();
            }
        }
        drop(tx);
        let rt = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        let Ok(t) = rt.block_on(sink.finish_tallied()).unwrap() else {
            panic!("tallied")
        };
        t
    }

    /// Every figure, the console summary and the canonical file of a stage tallied through the
    /// sink (requests ending out of order) are those made from its records after it.
    #[test]
    fn tallied_stage_equals_the_stage_made_from_its_records() {
        let p = [50.0, 90.0, 99.0, 99.9];
        let slo = Slo::parse(&["ttft:700 e2el:900".into()]).unwrap();
        let metrics_shown = PercentileMetric::ALL
            .iter()
            .map(|(_, m)| *m)
            .collect::<Vec<_>>();
        let all = recorded(97);
        let (kept, cancelled) = not_cancelled(&all);
        assert!(cancelled > 0);
        let m = compute(&kept, 7.5, 10.0, &p, slo);
        let view = SummaryView::new(metrics_shown.clone(), p.to_vec(), &kept, cancelled);
        let series = timeline::series(&kept);

        let dir = tempfile::tempdir().unwrap();
        let spool = DetailSpool::create(&dir.path().join("spool")).unwrap();
        let tally = StageTally::new(
            TallyConfig {
                slo,
                spool,
                records: None,
                steady: false,
            },
            40,
        );
        // Later sends end first within each group of four.
        let t = through_sink(&all, tally, false, 4);
        assert_eq!(t.cancelled as u64, cancelled);
        let out = t
            .tally
            .finish(7.5, 10.0, &p, (metrics_shown, cancelled))
            .unwrap();
        // Debug prints each f64 in its shortest exact form: equal text, equal bits.
        assert_eq!(format!("{:?}", out.metrics), format!("{m:?}"));
        assert_eq!(format!("{:?}", out.view), format!("{view:?}"));
        assert_eq!(format!("{:?}", out.series), format!("{series:?}"));
        assert!(m.itl.is_some() && !view.error_reasons.is_empty());
        assert_eq!(
            summary_text(&info(), &out.metrics, &out.view),
            summary_text(&info(), &m, &view)
        );

        let mut record = stage_record(&info(), &m, &[], &view);
        record.series = series;
        let second = stage_record(&info(), &m, &[], &view);
        let empty = DetailSpool::create(&dir.path().join("empty"))
            .unwrap()
            .finish()
            .unwrap();
        let (want, got) = (dir.path().join("want.json"), dir.path().join("got.json"));
        write_canonical(
            &want,
            &[
                StageOut {
                    record: &record,
                    requests: &kept,
                },
                StageOut {
                    record: &second,
                    requests: &[],
                },
                StageOut {
                    record: &record,
                    requests: &kept,
                },
            ],
        )
        .unwrap();
        write_canonical_spooled(
            &got,
            &[
                StageSpooled {
                    record: &record,
                    detail: &out.detail,
                },
                StageSpooled {
                    record: &second,
                    detail: &empty,
                },
                StageSpooled {
                    record: &record,
                    detail: &out.detail,
                },
            ],
        )
        .unwrap();
        let want = std::fs::read_to_string(want).unwrap();
        assert_eq!(std::fs::read_to_string(got).unwrap(), want);
        let mut full = record.clone();
        full.requests = kept.iter().map(report::request_detail).collect();
        let mut second_full = second.clone();
        second_full.requests.clear();
        assert_eq!(
            want,
            report::canonical_text(&[full.clone(), second_full, full])
        );
        // The spools go with their details.
        drop((out.detail, empty));
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(left.len(), 2, "{left:?}");
    }

    /// The percentiles, goodput SLO and summary metrics both ways below are made with.
    fn settings() -> ([f64; 2], Option<Slo>, Vec<PercentileMetric>) {
        let slo = Slo::parse(&["ttft:700".into()]).unwrap();
        let shown = PercentileMetric::ALL.iter().map(|(_, m)| *m).collect();
        ([50.0, 99.0], slo, shown)
    }

    /// The figures, canonical file and vLLM file of a stage run with `--steady-window` and/or
    /// `--vllm-compatible` as the run made them from the stage's held records before it spooled
    /// them (run.rs's path for held records): the window of the records, the records outside it
    /// dropped, the figures computed from the rest; vLLM's object from them.
    fn held(
        kept: &[RequestRecord],
        steady: bool,
        cancelled: u64,
        detailed: bool,
    ) -> (String, String, String, Option<SteadyWindow>) {
        let (p, slo, shown) = settings();
        let mut reqs = kept.to_vec();
        let series = timeline::series(&reqs);
        let window = steady.then(|| crate::loadgen::run::steady_window_of(&reqs));
        let duration = match &window {
            Some(w) => {
                let mut inside = vec![false; reqs.len()];
                for &i in &w.indices {
                    inside[i] = true;
                }
                let mut at = 0;
                reqs.retain(|_| {
                    at += 1;
                    inside[at - 1]
                });
                (w.end_s - w.start_s).max(1e-9)
            }
            None => 7.5,
        };
        let m = compute(&reqs, duration, 10.0, &p, slo);
        let view = SummaryView::new(shown, p.to_vec(), &reqs, cancelled);
        let mut record = stage_record(&info(), &m, &[], &view);
        record.series = series;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("held.json");
        write_canonical(
            &path,
            &[StageOut {
                record: &record,
                requests: &reqs,
            }],
        )
        .unwrap();
        let vllm = report::vllm_json(&info(), &m, &reqs, &view, detailed).to_string() + "\n";
        (
            format!("{m:?} {view:?}"),
            std::fs::read_to_string(path).unwrap(),
            vllm,
            window,
        )
    }

    /// The same through the sink into a spooling tally (requests ending out of order), the
    /// vLLM file streamed from the spooled records.
    fn spooled(
        all: &[RequestRecord],
        steady: bool,
        cancelled: u64,
        detailed: bool,
    ) -> (String, String, String, Option<SteadyWindow>) {
        let (p, slo, shown) = settings();
        let dir = tempfile::tempdir().unwrap();
        let tally = StageTally::new(
            TallyConfig {
                slo,
                spool: DetailSpool::create(&dir.path().join("detail")).unwrap(),
                records: Some(RecordSpool::create(&dir.path().join("records")).unwrap()),
                steady,
            },
            all.len(),
        );
        let t = through_sink(all, tally, detailed, 3);
        assert_eq!(t.cancelled as u64, cancelled);
        let out = t.tally.finish(7.5, 10.0, &p, (shown, cancelled)).unwrap();
        let mut record = stage_record(&info(), &out.metrics, &[], &out.view);
        record.series = out.series;
        let path = dir.path().join("spooled.json");
        write_canonical_spooled(
            &path,
            &[StageSpooled {
                record: &record,
                detail: &out.detail,
            }],
        )
        .unwrap();
        let records = out.records.unwrap();
        let mut vllm = Vec::new();
        report::write_vllm_json(
            &mut vllm,
            &info(),
            &out.metrics,
            &records,
            &out.view,
            detailed,
            &dir.path().join("vllm"),
        )
        .unwrap();
        drop((out.detail, records));
        assert_eq!(
            std::fs::read_dir(dir.path()).unwrap().count(),
            1,
            "the spools are removed"
        );
        (
            format!("{:?} {:?}", out.metrics, out.view),
            std::fs::read_to_string(path).unwrap(),
            String::from_utf8(vllm).unwrap(),
            out.window,
        )
    }

    /// `--steady-window` and `--vllm-compatible` runs spool their records and make the same
    /// figures, canonical file (the window's requests only) and vLLM file (every entry, texts
    /// with `--save-detailed`) as from the records held: bit for bit, byte for byte.
    #[test]
    fn spooled_stages_equal_the_stages_made_from_held_records() {
        let mut all = recorded(211);
        for r in all.iter_mut().filter(|r| r.index % 4 == 1) {
            r.generated_text = format!("reply \"{}\"\n\u{e9}", r.index);
        }
        let (kept, cancelled) = not_cancelled(&all);
        for (steady, detailed) in [(true, false), (true, true), (false, true), (false, false)] {
            let want = held(&kept, steady, cancelled, detailed);
            let got = spooled(&all, steady, cancelled, detailed);
            assert_eq!(got.0, want.0, "figures, steady {steady}");
            assert_eq!(got.1, want.1, "canonical file, steady {steady}");
            assert_eq!(
                got.2, want.2,
                "vLLM file, steady {steady} detailed {detailed}"
            );
            assert_eq!(got.3, want.3);
            if let Some(w) = &got.3 {
                // A real window: requests dropped at both ends.
                assert_eq!(w.rule, crate::loadgen::capacity::STEADY_RULE);
                assert!(w.indices.len() >= 20 && w.indices.len() + 20 < kept.len());
                assert!(w.indices[0] > 0 && *w.indices.last().unwrap() + 1 < kept.len());
                assert!(w.start_s > 0.0 && w.end_s > w.start_s);
            }
            if detailed {
                assert!(got.2.contains(r#""reply \"105\"\né""#), "texts written");
            }
        }
    }
}
