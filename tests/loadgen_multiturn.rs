//! `run --multi-turn` against the mock: each conversation's turns go in order, each prompt
//! carries the history with the replies received (the mock counts prompt words, so the
//! server's prompt tokens must grow by the last prompt, its reply and the new text), think
//! times are kept, the conversations come back the same from the same seed, and a failed turn
//! ends its conversation.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::collections::BTreeMap;
use std::process::Command;

use benchlens::model::{canonical, MetricKey, Record};
use serde_json::Value;
use tokio::sync::watch;

const BIN: &str = env!("CARGO_BIN_EXE_benchlens");

/// Runs `benchlens run --mock --multi-turn` with `args` in a fresh folder named `name`;
/// returns the record, the per-request lines and stderr.
fn run(name: &str, args: &[&str]) -> (Record, Vec<Value>, String) {
    let dir =
        std::env::temp_dir().join(format!("benchlens-multiturn-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(BIN)
        .args(["run", "--mock", "--model", "m", "--tokenizer", "words"])
        .args([
            "--no-progress",
            "--multi-turn",
            "--result-filename",
            "t.json",
        ])
        .arg("--result-dir")
        .arg(&dir)
        .args(args)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stderr}");
    let text = std::fs::read_to_string(dir.join("t.json")).unwrap();
    let record = canonical::from_json(&text).unwrap().records.remove(0);
    let lines = std::fs::read_to_string(dir.join("t.requests.jsonl"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    (record, lines, stderr)
}

/// The lines by conversation, each conversation's in file (send) order.
fn by_conversation(lines: &[Value]) -> BTreeMap<u64, Vec<&Value>> {
    let mut out: BTreeMap<u64, Vec<&Value>> = BTreeMap::new();
    for l in lines {
        out.entry(l["conversation"].as_u64().unwrap())
            .or_default()
            .push(l);
    }
    out
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing in {v}"))
}

/// Every conversation's turns are 0, 1, 2… in send order; each turn went after the previous
/// reply ended plus its think time (within `slack_s`); the server's prompt tokens grow by the
/// previous prompt, its reply and the new text; the client's count agrees with the mock's.
fn check_conversations(lines: &[Value], slack_s: f64) {
    for (c, turns) in by_conversation(lines) {
        for (k, t) in turns.iter().enumerate() {
            assert_eq!(t["turn"].as_u64().unwrap(), k as u64, "conversation {c}");
            assert!(t["error_kind"].is_null(), "{t}");
            assert_eq!(num(t, "input_len"), num(t, "input_tokens_server"), "{t}");
            if k == 0 {
                assert_eq!(num(t, "think_time_s"), 0.0);
                assert_eq!(num(t, "input_len"), num(t, "turn_input_len"));
                continue;
            }
            let p = turns[k - 1];
            assert_eq!(
                num(t, "input_tokens_server"),
                num(p, "input_tokens_server")
                    + num(p, "output_tokens_server")
                    + num(t, "turn_input_len"),
                "conversation {c} turn {k}: history = last prompt + its reply + the new text"
            );
            let reply_end_s = num(p, "sent_s") + num(p, "e2el_ms") / 1e3;
            let gap_s = num(t, "sent_s") - reply_end_s;
            let think = num(t, "think_time_s");
            assert!(
                gap_s >= think && gap_s <= think + slack_s,
                "conversation {c} turn {k}: sent {gap_s:.4} s after the reply, think time {think}"
            );
        }
    }
}

#[test]
fn synthetic_conversations_grow_their_history_keep_think_times_and_reproduce() {
    let args = [
        "--backend",
        "openai-chat",
        "--mock-ttft-ms",
        "5",
        "--mock-itl-ms",
        "0.5",
        "--num-prompts",
        "6",
        "--max-concurrency",
        "3",
        "--seed",
        "7",
        "--turns",
        "uniform:2:4",
        "--turn-input-len",
        "uniform:5:15",
        "--turn-output-len",
        "uniform:3:8",
        "--think-time",
        "uniform:0.05:0.1",
    ];
    let (record, lines, _) = run("synthetic", &args);
    check_conversations(&lines, 0.1);
    let convs = by_conversation(&lines);
    assert_eq!(convs.len(), 6);
    assert!(convs.values().all(|t| (2..=4).contains(&t.len())));
    for t in lines.iter().filter(|t| t["turn"].as_u64() != Some(0)) {
        assert!((0.05..=0.1).contains(&num(t, "think_time_s")), "{t}");
        assert!((5.0..=15.0).contains(&num(t, "turn_input_len")), "{t}");
    }
    // The summary covers every turn; the file says how the conversations were made.
    assert_eq!(
        record.metrics.get(&MetricKey::Completed).copied(),
        Some(lines.len() as f64)
    );
    let tag = |k: &str| record.tags.get(k).cloned().unwrap_or_default();
    assert_eq!(tag("conversations"), "6");
    assert_eq!(tag("conversation_turns"), lines.len().to_string());
    assert_eq!(tag("turns"), "uniform:2:4");
    assert_eq!(tag("think_time_s"), "uniform:0.05:0.1");
    assert_eq!(tag("arrivals"), "conversation_starts");
    assert_eq!(record.dataset.as_deref(), Some("random-multi-turn"));
    // The same seed sends the same conversations (the mock's replies follow the prompts).
    let shape = |lines: &[Value]| {
        let mut s: Vec<(u64, u64, u64, u64, u64)> = lines
            .iter()
            .map(|t| {
                let n = |k: &str| t[k].as_u64().unwrap();
                (
                    n("conversation"),
                    n("turn"),
                    n("input_tokens_server"),
                    n("max_tokens"),
                    (num(t, "think_time_s") * 1e6) as u64,
                )
            })
            .collect();
        s.sort_unstable();
        s
    };
    let (_, again, _) = run("synthetic-again", &args);
    assert_eq!(shape(&lines), shape(&again));
    let mut other = args.to_vec();
    other[11] = "8";
    let (_, other, _) = run("synthetic-other", &other);
    assert_ne!(shape(&lines), shape(&other), "the seed matters");
}

#[test]
fn sharegpt_conversations_replay_turn_by_turn_as_one_text_on_completions() {
    let dir = std::env::temp_dir().join(format!("benchlens-mt-sg-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("sg.json");
    let exchange = |h: &str, g: &str| {
        format!(r#"{{"from":"human","value":"{h}"}},{{"from":"gpt","value":"{g}"}}"#)
    };
    let conv = |n: usize| {
        let turns: Vec<String> = (0..n)
            .map(|i| exchange(&"word ".repeat(4 + i), &"reply ".repeat(5 + i)))
            .collect();
        format!(r#"{{"conversations":[{}]}}"#, turns.join(","))
    };
    std::fs::write(&file, format!("[{},{},{}]", conv(3), conv(1), conv(4))).unwrap();
    let (record, lines, _) = run(
        "sharegpt",
        &[
            "--mock-ttft-ms",
            "2",
            "--mock-itl-ms",
            "0.2",
            "--dataset",
            "sharegpt",
            "--dataset-path",
            file.to_str().unwrap(),
            "--max-turns",
            "3",
            "--think-time",
            "0.02",
            "--request-rate",
            "50",
            "--num-prompts",
            "3",
        ],
    );
    let _ = std::fs::remove_dir_all(&dir);
    check_conversations(&lines, 0.1);
    let lens: Vec<usize> = by_conversation(&lines).values().map(Vec::len).collect();
    assert_eq!(lens, vec![3, 1, 3], "the third capped by --max-turns");
    // Each turn asks for its reply's length in the file.
    let first = &by_conversation(&lines)[&0];
    let asked: Vec<u64> = first
        .iter()
        .map(|t| t["max_tokens"].as_u64().unwrap())
        .collect();
    assert_eq!(asked, vec![5, 6, 7]);
    assert_eq!(record.tags.get("max_turns").map(String::as_str), Some("3"));
    assert_eq!(record.dataset.as_deref(), Some("sharegpt-multi-turn"));
}

#[test]
fn a_failed_turn_ends_its_conversation() {
    // A reply of n tokens takes 5 + 10·n ms: a turn asking for more than 14 tokens outlives the
    // 150 ms request timeout, fails, and its conversation's later turns are never sent.
    let (record, lines, _) = run(
        "failing",
        &[
            "--mock-ttft-ms",
            "5",
            "--mock-itl-ms",
            "10",
            "--ignore-eos",
            "--request-timeout",
            "0.15",
            "--num-prompts",
            "6",
            "--max-concurrency",
            "6",
            "--turns",
            "4",
            "--turn-input-len",
            "5",
            "--turn-output-len",
            "uniform:2:30",
        ],
    );
    let planned: usize = record.tags["conversation_turns"].parse().unwrap();
    assert_eq!(planned, 24);
    assert!(lines.len() < planned, "{} of {planned} sent", lines.len());
    let mut ended_by_failure = 0;
    for (c, turns) in by_conversation(&lines) {
        let (last, before) = turns.split_last().unwrap();
        for t in before {
            assert!(t["error_kind"].is_null(), "conversation {c}: {t}");
            assert!(num(t, "max_tokens") <= 15.0, "{t}");
        }
        if !last["error_kind"].is_null() {
            assert_eq!(last["error_kind"].as_str(), Some("total_timeout"), "{last}");
            assert!(num(last, "max_tokens") >= 14.0, "{last}");
            ended_by_failure += 1;
        } else {
            assert_eq!(turns.len(), 4, "conversation {c} ended without a failure");
        }
    }
    assert!(ended_by_failure > 0);
}

#[test]
fn multi_turn_options_are_checked() {
    let refuse = |args: &[&str], wanted: &str| {
        let out = Command::new(BIN)
            .args([
                "run",
                "--mock",
                "--model",
                "m",
                "--multi-turn",
                "--no-progress",
            ])
            .args(["--result-filename", "-"])
            .args(args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(wanted), "{err}");
    };
    refuse(
        &["--think-time", "normal:1"],
        "invalid --think-time: \"normal:1\" is not N, uniform:MIN:MAX or exponential:MEAN",
    );
    refuse(&["--turns", "uniform:4:2"], "invalid --turns");
    refuse(
        &["--dataset", "jsonl", "--dataset-path", "x"],
        "invalid --multi-turn",
    );
    refuse(&["--shard", "0/2"], "--shard");
    // The conversation options mean nothing without --multi-turn: refused, not ignored.
    let out = Command::new(BIN)
        .args(["run", "--mock", "--model", "m", "--think-time", "1"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--multi-turn"),
        "{err}"
    );
    // ... and the single-prompt generator's options mean nothing with it: refused too.
    for extra in [
        ["--range-ratio", "0.5"],
        ["--prefix-len", "16"],
        ["--prefix-groups", "4"],
    ] {
        let out = Command::new(BIN)
            .args([
                "run",
                "--mock",
                "--model",
                "m",
                "--multi-turn",
                "--num-prompts",
                "2",
            ])
            .args(extra)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        let option = extra[0].trim_start_matches('-');
        assert!(
            !out.status.success()
                && err.contains(option)
                && err.contains("not used by --multi-turn"),
            "{extra:?}: {err}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ctrl_c_during_think_times_stops_at_once_and_keeps_the_turns_done() {
    use benchlens::loadgen::{run_with_stop, MockOpts, MockServer, RunOpts};
    let mock = MockServer::start(MockOpts {
        ttft_ms: 5.0,
        itl_ms: 1.0,
        ..MockOpts::default()
    })
    .await
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let o = RunOpts {
        base_url: mock.base_url(),
        result_dir: dir.path().to_path_buf(),
        no_progress: true,
        num_prompts: 4,
        multi_turn: true,
        turns: "5".into(),
        turn_input_len: Some("8".into()),
        turn_output_len: Some("4".into()),
        // Every conversation thinks for a minute after its first reply.
        think_time: "60".into(),
        model: Some("m".into()),
        tokenizer: "words".into(),
        ..RunOpts::default()
    };
    let (tx, rx) = watch::channel(false);
    let stopper = tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        let _ = tx.send(true);
        tx
    });
    let started = std::time::Instant::now();
    let out = run_with_stop(o, rx).await.unwrap();
    let _tx = stopper.await.unwrap();
    assert!(
        started.elapsed().as_secs_f64() < 5.0,
        "{:?}",
        started.elapsed()
    );
    assert!(out.partial);
    let reqs = &out.requests[0];
    assert_eq!(
        reqs.len(),
        4,
        "each conversation's first turn, then the stop"
    );
    assert!(reqs
        .iter()
        .all(|r| r.failure.is_none() && r.turn.map(|t| t.turn) == Some(0)));
    assert!(out.result_path.as_ref().is_some_and(|p| p.exists()));
}
