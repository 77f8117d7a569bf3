//! A deterministic mutation fuzzer for detection and every reader, run as part of `cargo test`
//! (stable Rust has no cargo-fuzz/libFuzzer here, so this is the equivalent).
//!
//! Every fixture under `tests/fixtures/` is mutated with a seeded xorshift RNG (bit flips,
//! random bytes, truncations, splices with another fixture, byte and token insertions,
//! duplicated and deleted lines) and fed to [`ingest::detect`], [`ingest::read`],
//! [`ingest::read_columnar`] (which must give the row read's records, warnings and mapping),
//! [`ingest::read_as`] for every [`Format`], the streaming JSON readers
//! [`ingest::read_json_stream`], [`ingest::read_json_stream_columns`] and
//! [`ingest::read_json_stream_gaps_apart`] (the page's worker's, its gaps handed on in small
//! batches and put back: all must agree with [`ingest::read`] whenever they answer) and the per-request file summary of `benchlens
//! inspect`. The test fails if any call panics or a reader disagrees, and saves the input that
//! did to `target/fuzz-failures/`.
//!
//! Bounds: by default at most `BENCHLENS_FUZZ_ITERS=4000` mutations or
//! `BENCHLENS_FUZZ_SECS=30` seconds, whichever comes first. Run longer with e.g.
//! `BENCHLENS_FUZZ_ITERS=1000000 BENCHLENS_FUZZ_SECS=3600 cargo test --release --test fuzz_ingest`,
//! and vary the corpus order with `BENCHLENS_FUZZ_SEED=<u64>`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use benchlens::ingest::{self, Format};
use benchlens::model::canonical;
use proptest::prelude::*;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

const TOKENS: &[&[u8]] = &[
    b"Infinity",
    b"-Infinity",
    b"NaN",
    b"{",
    b"}",
    b"[",
    b"]",
    b"\"",
    b",",
    b"|",
    b"\n",
    b"\r\n",
    b"\\",
    b":",
    b"============ Serving Benchmark Result ============\n",
    b"| --- | --- |\n",
    b"```json\n",
    b"```\n",
    b"# ",
    b"\xEF\xBB\xBF",
    b"\xFF\xFE",
    b"\0",
    b"1e999",
    b"-0",
    b"\"inf\"",
    b"null",
    b"\xF0\x9F\x98",
    b"num_prompts: 1, 2\n",
    // guidellm's console report: its tables' titles, group and column lines, rules and rows.
    b"Benchmarks Stats:\n=====\n",
    b"Benchmarks Info:\n",
    b"Metadata | Request Stats || TTFT (ms) ||| Req Latency (ms) ||\n",
    b" Benchmark| Per Second| Concurrency| mean| median| p99\n",
    b"-----|----|---\n",
    b"constant@0.69| 0.65| 2.93| 4.54\n",
    b"data='prompt_tokens=512,output_tokens=256' backend_model='m'\n",
    b"_a100",
    b"8xH100",
    b"\"tput_per_gpu\": ",
    b"\"median_ttft\": 0.5, \"p99_e2el\": ",
    b"{\"conc\": 4, \"request_metrics\": {\"latency\": {\"ttft\": {\"p50\": ",
    b"_fp8_vllm_tp8_isl1024_osl128_conc16_b200",
    b"{\"ttft_s\": 0.1, \"end_to_end_latency_s\": 1, \"error_code\": ",
    b"= PERFORMANCE OVERVIEW\nRequest Throughput (req/sec): ",
    b"[TTFT] P50    : ",
    b"benchmarks:\n- ",
    b"[TensorRT-LLM][INFO] ",
];

fn mutate(rng: &mut Rng, input: &[u8], other: &[u8]) -> Vec<u8> {
    let mut v = input.to_vec();
    let rounds = 1 + rng.below(4);
    for _ in 0..rounds {
        let len = v.len();
        match rng.below(9) {
            0 if len > 0 => {
                let i = rng.below(len);
                v[i] ^= 1 << rng.below(8);
            }
            1 if len > 0 => {
                let i = rng.below(len);
                v[i] = rng.next() as u8;
            }
            2 => v.truncate(rng.below(len + 1)),
            3 => {
                let cut = rng.below(len + 1);
                let from = rng.below(other.len() + 1);
                v.truncate(cut);
                v.extend_from_slice(&other[from..]);
            }
            4 => {
                let at = rng.below(len + 1);
                let n = 1 + rng.below(16);
                let bytes: Vec<u8> = (0..n).map(|_| rng.next() as u8).collect();
                v.splice(at..at, bytes);
            }
            5 => {
                let at = rng.below(len + 1);
                let t = TOKENS[rng.below(TOKENS.len())];
                v.splice(at..at, t.iter().copied());
            }
            6 | 7 => {
                // Duplicate or delete a line.
                let starts: Vec<usize> = std::iter::once(0)
                    .chain(
                        v.iter()
                            .enumerate()
                            .filter(|(_, b)| **b == b'\n')
                            .map(|(i, _)| i + 1),
                    )
                    .filter(|i| *i < v.len())
                    .collect();
                if starts.is_empty() {
                    continue;
                }
                let s = starts[rng.below(starts.len())];
                let e = v[s..]
                    .iter()
                    .position(|b| *b == b'\n')
                    .map_or(v.len(), |p| s + p + 1);
                if rng.below(2) == 0 {
                    let line = v[s..e].to_vec();
                    v.splice(e..e, line);
                } else {
                    v.drain(s..e);
                }
            }
            _ => {
                // Swap two ranges' bytes.
                if len > 2 {
                    let a = rng.below(len);
                    let b = rng.below(len);
                    v.swap(a, b);
                }
            }
        }
    }
    v
}

/// Runs detection and every reader on `bytes`; returns the panic message if one panicked.
fn exercise(name: &str, bytes: &[u8]) -> Option<String> {
    let result = catch_unwind(AssertUnwindSafe(|| {
        let _ = ingest::detect(name, bytes);
        let rows = ingest::read(name, bytes);
        let columnar = ingest::read_columnar(name, bytes).map(|c| c.into_ingested());
        match (&rows, &columnar) {
            (Ok(a), Ok(b)) => {
                // Through canonical JSON: records with NaN metrics are never `==`.
                assert_eq!(
                    canonical::to_json(&a.records),
                    canonical::to_json(&b.records),
                    "columnar records differ"
                );
                assert_eq!(a.warnings, b.warnings, "columnar warnings differ");
                assert_eq!(a.mapping, b.mapping, "columnar mapping differs");
                assert_eq!(a.note, b.note, "columnar note differs");
            }
            (a, b) => assert_eq!(a.as_ref().err(), b.as_ref().err(), "columnar error differs"),
        }
        if let Ok(got) = rows {
            for r in &got.records {
                assert_eq!(r.source.as_deref(), Some(name));
                assert_eq!(r.format.as_deref(), Some(got.format.name()));
            }
            if !got.mapping.is_empty() {
                let _ = ingest::read_with_mapping(name, bytes, &got.mapping);
            }
        }
        for f in Format::ALL {
            let _ = ingest::read_as(*f, name, bytes);
        }
        // The streaming reader takes only what it reads exactly as the in-memory one does.
        if let Ok(Some(streamed)) = ingest::read_json_stream(name, bytes) {
            assert_eq!(Ok(streamed), ingest::read(name, bytes));
        }
        // So does its columnar form (a serving run's per-request numbers read by hand).
        let same_as_whole = |got: ingest::Ingested| {
            let whole = ingest::read(name, bytes).expect("the streamed reader took it");
            assert_eq!(
                (got.records, got.format, got.warnings, got.mapping, got.note),
                (
                    whole.records,
                    whole.format,
                    whole.warnings,
                    whole.mapping,
                    whole.note
                )
            );
        };
        if let Ok(Some(c)) = ingest::read_json_stream_columns(name, bytes) {
            same_as_whole(c.into_ingested());
        }
        // And the worker's, whose gaps go ahead in batches (of 3 values here, so that most
        // runs cross a batch): put back in order, the same run.
        // Each batch also crosses the wire's form of it, as in the page.
        let mut handed: Vec<benchlens::model::Gaps> = Vec::new();
        let mut wire = benchlens::wire::StreamedGaps::default();
        let mut gaps = ingest::GapStream::new(3, |lists: &[benchlens::model::Gaps]| {
            let bytes = benchlens::wire::encode_gaps(lists);
            assert_eq!(wire.append(&bytes), Ok(lists.len()));
            handed.extend_from_slice(lists);
        });
        let apart = ingest::read_json_stream_gaps_apart(name, bytes, &mut gaps);
        let lens = gaps.lens().to_vec();
        drop(gaps);
        if let Ok(Some(c)) = apart {
            let columnar = matches!(c, ingest::Contents::Columns(_));
            let mut got = c.into_ingested();
            if columnar {
                assert_eq!(handed.len(), lens.len());
                let requests = &mut got.records[0].requests;
                assert_eq!(requests.len(), handed.len());
                for (q, list) in requests.iter_mut().zip(handed) {
                    assert!(q.itl_ms.is_empty());
                    q.itl_ms = list;
                }
            }
            same_as_whole(got);
        }
        let _ = benchlens::cli::inspect_requests::summarise(bytes);
    }));
    result.err().map(|e| {
        e.downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "panic".into())
    })
}

fn save_failure(name: &str, bytes: &[u8]) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/fuzz-failures");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(format!("{name}.{}.bin", bytes.len()));
    let _ = std::fs::write(&path, bytes);
    path
}

#[test]
fn mutated_fixtures_never_panic() {
    let corpus = common::fixture_files();
    assert!(corpus.len() >= 10, "fixtures missing");
    let iters: usize = env_or("BENCHLENS_FUZZ_ITERS", 4000);
    let budget = Duration::from_secs(env_or("BENCHLENS_FUZZ_SECS", 30));
    let mut rng = Rng(env_or("BENCHLENS_FUZZ_SEED", 0x9E37_79B9_7F4A_7C15u64) | 1);
    let start = Instant::now();
    // Unmutated fixtures first.
    for (name, bytes) in &corpus {
        if let Some(msg) = exercise(name, bytes) {
            panic!("{name}: {msg}");
        }
    }
    let mut done = 0;
    while done < iters && start.elapsed() < budget {
        let (name, bytes) = &corpus[rng.below(corpus.len())];
        // Big fixtures are cut down so that iterations stay cheap.
        let cap = 1 << (8 + rng.below(9));
        let bytes = &bytes[..bytes.len().min(cap.max(64))];
        let other = &corpus[rng.below(corpus.len())].1;
        let input = mutate(&mut rng, bytes, other);
        if let Some(msg) = exercise(name, &input) {
            let saved = save_failure(name, &input);
            panic!(
                "{name} (mutation {done}) panicked: {msg}; input saved to {}",
                saved.display()
            );
        }
        done += 1;
    }
    eprintln!("fuzz_ingest: {done} mutations in {:?}", start.elapsed());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        prop_assert!(exercise("any.bin", &bytes).is_none());
    }

    #[test]
    fn arbitrary_token_soup_never_panics(
        parts in proptest::collection::vec(0usize..TOKENS.len(), 0..64),
        text in "[ -~\n]{0,64}",
    ) {
        let mut bytes: Vec<u8> = parts.iter().flat_map(|i| TOKENS[*i].iter().copied()).collect();
        bytes.extend_from_slice(text.as_bytes());
        prop_assert!(exercise("soup.json", &bytes).is_none());
    }
}
