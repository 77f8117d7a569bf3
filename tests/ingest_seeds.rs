//! The user's own files (tests/fixtures/seeds), read with concrete values checked.

mod common;

use benchlens::ingest::Format;
use common::{close, metric, read_fixture};

#[test]
fn seed_003_console_blocks_with_context_lines() {
    let got = read_fixture("seeds/003_902df92d1b3a4732.txt");
    assert_eq!(got.format, Format::VllmConsole);
    assert_eq!(got.records.len(), 23, "{:?}", got.warnings);
    for r in &got.records {
        assert_eq!(r.engine.as_deref(), Some("vllm"));
        assert!(r.is_inferred("engine"));
    }
    let r1024 = got
        .records
        .iter()
        .find(|r| r.num_prompts == Some(1024))
        .unwrap();
    assert_eq!(r1024.input_len, Some(80.0));
    assert!(r1024.is_inferred("input_len"));
    assert!(r1024.inferred["input_len"].starts_with("context line 4"));
    close(metric(r1024, "output_throughput"), 434.89);
    close(metric(r1024, "completed"), 1024.0);
    // Second group: seq_length 10000, 7 blocks.
    let second: Vec<_> = got.records[12..19].iter().collect();
    assert!(second.iter().all(|r| r.input_len == Some(10000.0)));
    assert_eq!(second[6].num_prompts, Some(64));
    // Third group: num_prompt:1 applies to all four; input length from the block itself.
    let third = &got.records[19..];
    assert!(third.iter().all(|r| r.num_prompts == Some(1)));
    assert_eq!(third[0].input_len, Some(128000.0));
    close(metric(&third[0], "mean_ttft_ms"), 734188.96);
    close(metric(&got.records[0], "p99_itl_ms"), 94.22);
    close(metric(&got.records[0], "duration_s"), 4.53);
}
