use super::*;
use crate::loadgen::conversation::Conversation;
use crate::loadgen::measure::compute;
use crate::loadgen::record::{ChunkArrival, ChunkLog, Failure, FailureKind, TurnOf};
use crate::loadgen::report::{
    stage_record, write_doc, PercentileMetric, StageInfo, StageOut, SummaryView,
};

#[test]
fn buffered_rows_are_due_one_interval_after_the_first() {
    let t0 = Instant::now();
    let mut clock = FlushClock::default();
    assert_eq!(clock.wait(t0), None, "nothing buffered");
    clock.wrote(t0);
    clock.wrote(t0 + Duration::from_millis(300));
    assert_eq!(
        clock.wait(t0 + Duration::from_millis(100)),
        Some(FLUSH_INTERVAL - Duration::from_millis(100))
    );
    assert_eq!(clock.wait(t0 + FLUSH_INTERVAL * 2), Some(Duration::ZERO));
    clock.flushed();
    assert_eq!(clock.wait(t0 + FLUSH_INTERVAL * 2), None);
    assert!(FLUSH_INTERVAL < Duration::from_secs(1));
}

/// A finished request's row is in the file within a second even when no other request
/// ends and the stage goes on (its sender alive).
#[test]
fn rows_reach_the_file_while_the_stage_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.requests.jsonl");
    let (sink, tx) = Sink::start(
        Arc::new(Turns(vec![])),
        SinkConfig {
            tokenizer: None,
            stage: 0,
            keep_text: false,
            file: Some(RequestsFile::create(&path, false).unwrap()),
        },
        4,
    );
    for r in recorded(3, false) {
        tx.send((r.index, r)).unwrap();
    }
    let start = Instant::now();
    let rows = loop {
        let text = std::fs::read_to_string(&path).unwrap();
        if text.lines().count() == 3 || start.elapsed() > Duration::from_secs(3) {
            break text.lines().count();
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(rows, 3);
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    drop(tx);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (_, file) = rt.block_on(sink.finish()).unwrap();
    assert_eq!(file.unwrap().rows(), 3);
}

/// Rows reach the file in the order requests end: with request 0 still out (a slow one), the
/// rows of the 40 sent after it that ended are in the file within a second, and request 0's
/// row follows when it ends. (Rows written in send order waited for it, and a SIGKILL then
/// lost them all.)
#[test]
fn rows_of_later_requests_do_not_wait_for_a_slow_earlier_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.requests.jsonl");
    let (sink, tx) = Sink::start(
        Arc::new(Turns(vec![])),
        SinkConfig {
            tokenizer: None,
            stage: 0,
            keep_text: false,
            file: Some(RequestsFile::create(&path, false).unwrap()),
        },
        41,
    );
    let mut all = recorded(41, false);
    let slow = all.remove(0);
    for r in all {
        tx.send((r.index, r)).unwrap();
    }
    let start = Instant::now();
    let on_disk = || -> Vec<usize> {
        let text = std::fs::read_to_string(&path).unwrap();
        text.lines().map(index_of).collect()
    };
    while on_disk().len() < 40 && start.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        start.elapsed() < Duration::from_secs(1),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(on_disk(), (1..=40).collect::<Vec<_>>());
    tx.send((slow.index, slow)).unwrap();
    drop(tx);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (records, file) = rt.block_on(sink.finish()).unwrap();
    assert_eq!(file.unwrap().rows(), 41);
    let mut want: Vec<usize> = (1..=40).collect();
    want.push(0);
    assert_eq!(on_disk(), want, "rows in the order requests ended");
    // The stage's records come back in index order all the same.
    let indices: Vec<usize> = records.iter().map(|r| r.index).collect();
    assert_eq!(indices, (0..=40).collect::<Vec<_>>());
}

struct Turns(Vec<Conversation>);

impl TurnSource for Turns {
    fn turns(&self, number: usize) -> Option<(&[Turn], bool)> {
        let list = &self.0;
        (!list.is_empty()).then(|| (list[number % list.len()].turns.as_slice(), true))
    }
}

/// Requests as the client records them: varied timings, chunk sizes, coalesced reads,
/// failures, a cancelled one; with `turns`, conversations of three turns.
fn recorded(n: usize, turns: bool) -> Vec<RequestRecord> {
    (0..n)
        .map(|i| {
            // A failed or cancelled turn ends its conversation: the last turn here.
            let failed = if turns { i % 6 == 5 } else { i % 7 == 3 };
            let cancelled = i == n - 1;
            let chunks: ChunkLog = if failed || cancelled {
                ChunkLog::new()
            } else {
                (0..(5 + i % 4))
                    .map(|k| ChunkArrival {
                        at_s: 0.02 + i as f64 * 1e-4 + k as f64 * (0.003 + (i * k) as f64 * 1e-6),
                        tokens: 1 + u32::from(k % 3 == 2),
                        coalesced: k == 3,
                    })
                    .collect()
            };
            RequestRecord {
                index: i,
                input_len: 11,
                max_tokens: 8,
                intended_at_s: i as f64 * 0.013,
                dispatched_at_s: i as f64 * 0.013 + 1e-5,
                schedule_lag_s: 1e-5,
                sent_at_s: i as f64 * 0.0131,
                ttft_s: chunks.iter().next().map(|c| c.at_s),
                write_delay_s: Some(2e-5 * i as f64),
                first_read_delay_s: Some(1e-6),
                e2el_s: chunks.iter().last().map(|c| c.at_s + 1e-4),
                output_tokens_server: (i % 2 == 0).then_some(8),
                output_chunks_local: chunks.len() as u64,
                coalesced_chunks: 1,
                ignore_eos: true,
                generated_text: format!("reply {i} with some words"),
                failure: if cancelled {
                    Some(Failure::new(FailureKind::Cancelled, "cancelled"))
                } else if failed {
                    Some(Failure::new(FailureKind::Http(503), "busy\nnow"))
                } else {
                    None
                },
                turn: turns.then_some(TurnOf {
                    conversation: i / 3,
                    turn: i % 3,
                    new_input_len: 4,
                    think_time_s: 0.5,
                }),
                chunks,
                ..RequestRecord::default()
            }
        })
        .collect()
}

/// Requests beyond the held ones go to the scratch file and come back equal, in the order
/// asked for; the file (which has no name) is emptied when none is left in it.
#[test]
fn reorder_buffer_spills_beyond_its_limit_and_gives_requests_back_equal() {
    let all = recorded(9, true);
    let mut waiting = Reorder::new(2);
    for seq in [8, 3, 5, 1, 7, 2] {
        waiting.insert(seq, all[seq].clone());
    }
    assert_eq!(waiting.held.keys().copied().collect::<Vec<_>>(), [3, 8]);
    assert_eq!(
        waiting.spilled.keys().copied().collect::<Vec<_>>(),
        [1, 2, 5, 7]
    );
    let scratch = &waiting.scratch.as_ref().unwrap().file;
    assert!(scratch.metadata().unwrap().len() > 0);
    assert_eq!(waiting.first(), Some(1));
    assert_eq!(waiting.take(0).unwrap(), None);
    for seq in [1, 2, 3] {
        assert_eq!(waiting.take(seq).unwrap().as_ref(), Some(&all[seq]));
    }
    // Held again, then spilled after some were read back: at the file's end.
    waiting.insert(4, all[4].clone());
    waiting.insert(6, all[6].clone());
    assert_eq!(waiting.held.keys().copied().collect::<Vec<_>>(), [4, 8]);
    assert_eq!(
        waiting.spilled.keys().copied().collect::<Vec<_>>(),
        [5, 6, 7]
    );
    assert_eq!(waiting.first(), Some(4));
    for seq in [4, 5, 6, 7] {
        assert_eq!(waiting.take(seq).unwrap().as_ref(), Some(&all[seq]));
    }
    assert_eq!((waiting.end, waiting.spilled.len()), (0, 0));
    let scratch = &waiting.scratch.as_ref().unwrap().file;
    assert_eq!(scratch.metadata().unwrap().len(), 0);
    assert_eq!(waiting.first(), Some(8));
    assert_eq!(waiting.take(8).unwrap().as_ref(), Some(&all[8]));
    assert_eq!(waiting.first(), None);
}

fn conversations() -> Vec<Conversation> {
    let turn = |t: &str| Turn {
        text: t.into(),
        new_input_len: 4,
        output_len: 8,
        think_time_s: 0.5,
    };
    vec![Conversation {
        turns: vec![turn("first question"), turn("and then"), turn("last one")],
    }]
}

/// The files of one stage as the run wrote them before the sink: replies counted and
/// histories counted after the stage, every row and the canonical text made at its end.
fn after_the_stage(mut all: Vec<RequestRecord>, tok: &Tokenizer, turns: bool) -> (String, String) {
    for r in all.iter_mut().filter(|r| r.failure.is_none()) {
        r.output_tokens_text = Some(tok.count(&r.generated_text));
    }
    if turns {
        conversation::count_histories(&mut all, &conversations(), tok, true);
    }
    let lines: String = all
        .iter()
        .map(|r| report::request_line(0, r) + "\n")
        .collect();
    let reqs: Vec<RequestRecord> = all
        .into_iter()
        .filter(|r| {
            r.failure
                .as_ref()
                .is_none_or(|f| f.kind != FailureKind::Cancelled)
        })
        .collect();
    let record = stage_of(&reqs, true);
    (lines, report::canonical_text(&[record]))
}

fn stage_of(reqs: &[RequestRecord], detail: bool) -> crate::model::Record {
    let m = compute(reqs, 2.0, f64::INFINITY, &[50.0, 99.0], None);
    let view = SummaryView::new(vec![PercentileMetric::Ttft], vec![50.0, 99.0], reqs, 1);
    let info = StageInfo {
        num_prompts: reqs.len() as u64,
        ..StageInfo::fixture(f64::INFINITY, Some(4))
    };
    stage_record(&info, &m, if detail { reqs } else { &[] }, &view)
}

/// The same files through the sink: requests arriving in a scrambled order of completion,
/// the canonical detail made while written. Also the indices in the order they ended.
fn through_the_sink(
    all: Vec<RequestRecord>,
    tok: &Tokenizer,
    turns: bool,
) -> (String, String, Vec<usize>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("r.requests.jsonl");
    let source = Arc::new(Turns(if turns { conversations() } else { vec![] }));
    let (sink, tx) = Sink::start(
        source,
        SinkConfig {
            tokenizer: Some(tok.clone()),
            stage: 0,
            keep_text: false,
            file: Some(RequestsFile::create(&path, false).unwrap()),
        },
        all.len(),
    );
    // Later sends end first within each group of five; a conversation's turns keep their
    // order (a turn is sent after the one before it ended).
    let mut order: Vec<RequestRecord> = Vec::new();
    let mut group = Vec::new();
    for r in all {
        group.push(r);
        if group.len() == 5 || turns {
            order.extend(group.drain(..).rev());
        }
    }
    order.extend(group.into_iter().rev());
    let ended: Vec<usize> = order.iter().map(|r| r.index).collect();
    for r in order {
        tx.send((r.index, r)).unwrap();
    }
    drop(tx);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let (mut reqs, file) = rt.block_on(sink.finish()).unwrap();
    drop(file);
    assert!(
        reqs.iter().all(|r| r.generated_text.is_empty()),
        "texts let go"
    );
    reqs.retain(|r| {
        r.failure
            .as_ref()
            .is_none_or(|f| f.kind != FailureKind::Cancelled)
    });
    let record = stage_of(&reqs, false);
    let mut canonical = Vec::new();
    write_doc(
        &mut canonical,
        &[StageOut {
            record: &record,
            requests: &reqs,
        }],
    )
    .unwrap();
    (
        std::fs::read_to_string(&path).unwrap(),
        String::from_utf8(canonical).unwrap(),
        ended,
    )
}

/// A row's `index`.
fn index_of(line: &str) -> usize {
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    v["index"].as_u64().unwrap() as usize
}

/// The rows of `text` in index order.
fn by_index(text: &str) -> String {
    let mut lines: Vec<&str> = text.lines().collect();
    lines.sort_by_key(|l| index_of(l));
    lines.iter().map(|l| format!("{l}\n")).collect()
}

#[test]
fn rows_and_figures_equal_those_written_after_the_stage() {
    let tok = Tokenizer::from_name("cl100k_base").unwrap();
    for turns in [false, true] {
        let reqs = recorded(23, turns);
        let (lines, canonical) = after_the_stage(reqs.clone(), &tok, turns);
        let (streamed, written, ended) = through_the_sink(reqs, &tok, turns);
        assert_eq!(streamed.lines().count(), 23);
        // Rows in the order requests ended; in index order, the rows written after the stage.
        let order: Vec<usize> = streamed.lines().map(index_of).collect();
        assert_eq!(order, ended, "multi-turn: {turns}");
        assert_eq!(by_index(&streamed), lines, "multi-turn: {turns}");
        assert_eq!(written, canonical, "multi-turn: {turns}");
    }
}
