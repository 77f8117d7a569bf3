use std::sync::Arc;

use super::*;
use crate::loadgen::capacity::SteadyWindow;
use crate::loadgen::figures::stage_figures;
use crate::loadgen::measure::compute;
use crate::loadgen::record::{Failure, FailureKind};
use crate::loadgen::report::{
    self, stage_record, summary_text, write_canonical, write_canonical_spooled, PercentileMetric,
    StageInfo, StageOut, StageSpooled, SummaryView,
};
use crate::loadgen::run::sink::{Sink, SinkConfig, Tallying, TurnSource};
use crate::loadgen::scratch::ScratchWriter;
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
    let slo = Slo::parse("ttft:700 e2el:900").unwrap();
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
    let spool = DetailSpool::new(ScratchWriter::create(dir.path(), "spool").unwrap());
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
        .finish(how(7.5, &p, slo, metrics_shown), cancelled)
        .unwrap();
    let got = &out.figures;
    // Debug prints each f64 in its shortest exact form: equal text, equal bits.
    assert_eq!(format!("{:?}", got.metrics), format!("{m:?}"));
    assert_eq!(format!("{:?}", got.view), format!("{view:?}"));
    assert_eq!(format!("{:?}", got.series), format!("{series:?}"));
    assert!(m.itl.is_some() && !view.error_reasons.is_empty());
    assert_eq!(
        summary_text(&info(), &got.metrics, &got.view),
        summary_text(&info(), &m, &view)
    );

    let mut record = stage_record(&info(), &m, &[], &view);
    record.series = series;
    let second = stage_record(&info(), &m, &[], &view);
    let empty = DetailSpool::new(ScratchWriter::create(dir.path(), "empty").unwrap()).finish();
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

/// How a stage of 7.5 s at 10 req/s is measured, without a window.
fn how(
    duration_s: f64,
    p: &[f64],
    slo: Option<Slo>,
    shown: Vec<PercentileMetric>,
) -> FigureOpts<'_> {
    FigureOpts {
        duration_s,
        target_rate: 10.0,
        percentiles: p,
        slo,
        percentile_metrics: shown,
        steady: false,
    }
}

/// The percentiles, goodput SLO and summary metrics both ways below are made with.
fn settings() -> ([f64; 2], Option<Slo>, Vec<PercentileMetric>) {
    let slo = Slo::parse("ttft:700").unwrap();
    let shown = PercentileMetric::ALL.iter().map(|(_, m)| *m).collect();
    ([50.0, 99.0], slo, shown)
}

/// The figures, canonical file and vLLM file of a stage run with `--steady-window` and/or
/// `--vllm-compatible` made from the stage's held records ([`stage_figures`], as a run that
/// holds them and `merge` make them): the cancelled ones and those outside the window dropped,
/// the figures computed from the rest; vLLM's object from them.
fn held(
    all: &[RequestRecord],
    steady: bool,
    cancelled: u64,
    detailed: bool,
) -> (String, String, String, Option<SteadyWindow>) {
    let (p, slo, shown) = settings();
    let mut reqs = all.to_vec();
    let f = stage_figures(
        &mut reqs,
        FigureOpts {
            steady,
            ..how(7.5, &p, slo, shown)
        },
    );
    assert_eq!(f.cancelled, cancelled);
    let (m, view, window) = (f.metrics, f.view, f.window);
    let mut record = stage_record(&info(), &m, &[], &view);
    record.series = f.series;
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

/// A scratch writer in `dir`, or with `full_disk` one whose every write the disk refuses
/// (`/dev/full`, as a disk that filled while the stage ran).
fn scratch_in(dir: &std::path::Path, name: &str, full_disk: bool) -> ScratchWriter {
    match full_disk {
        true => {
            let full = std::fs::File::options()
                .read(true)
                .write(true)
                .open("/dev/full")
                .unwrap();
            ScratchWriter::over(full, "/dev/full".into()).unwrap()
        }
        false => ScratchWriter::create(dir, name).unwrap(),
    }
}

/// The same through the sink into a spooling tally (requests ending out of order), the
/// vLLM file streamed from the spooled records.
fn spooled(
    all: &[RequestRecord],
    steady: bool,
    cancelled: u64,
    detailed: bool,
    full_disk: bool,
) -> (String, String, String, Option<SteadyWindow>) {
    let (p, slo, shown) = settings();
    let dir = tempfile::tempdir().unwrap();
    let tally = StageTally::new(
        TallyConfig {
            slo,
            spool: DetailSpool::new(scratch_in(dir.path(), "detail", full_disk)),
            records: Some(RecordSpool::new(scratch_in(
                dir.path(),
                "records",
                full_disk,
            ))),
            steady,
        },
        all.len(),
    );
    let t = through_sink(all, tally, detailed, 3);
    assert_eq!(t.cancelled as u64, cancelled);
    let out = t
        .tally
        .finish(
            FigureOpts {
                steady,
                ..how(7.5, &p, slo, shown)
            },
            cancelled,
        )
        .unwrap();
    // A full disk refused the spools as the stage ran: their content went on in memory.
    assert_eq!(out.detail.scratch().failure().is_some(), full_disk);
    let f = out.figures;
    let mut record = stage_record(&info(), &f.metrics, &[], &f.view);
    record.series = f.series;
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
        &f.metrics,
        &records,
        &f.view,
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
        format!("{:?} {:?}", f.metrics, f.view),
        std::fs::read_to_string(path).unwrap(),
        String::from_utf8(vllm).unwrap(),
        f.window,
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
        let want = held(&all, steady, cancelled, detailed);
        let got = spooled(&all, steady, cancelled, detailed, false);
        // A disk that refuses the spools as the stage runs loses nothing, and does not end
        // the stage: the figures, the canonical file and the vLLM file are the same.
        let on_full_disk = spooled(&all, steady, cancelled, detailed, true);
        assert_eq!(
            on_full_disk, got,
            "full disk, steady {steady} detailed {detailed}"
        );
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
