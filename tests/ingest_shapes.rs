//! The large shapes `scripts/bench-shapes.sh` times (written by `scripts/gen_shapes.py`),
//! generated small here in the same patterns and read the way `benchlens inspect` and the
//! parse worker read them ([`ingest::read_columnar`]): every value read is the value written.
//! The fast paths these shapes take (JSON Lines read field by field a batch at a time past the
//! first 1,024 documents, the genai-perf CSV's repeated blocks, a markdown table's rows into
//! columns) must not change a value.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use benchlens::ingest::{self, Contents, Format};
use benchlens::model::{MetricKey, Record};

/// The records `read_columnar` gives for `text`, with its format and whether they came as
/// columns.
fn read(name: &str, text: &str) -> (Format, bool, Vec<Record>) {
    let got = ingest::read_columnar(name, text.as_bytes()).unwrap();
    let columns = matches!(got, Contents::Columns(_));
    let got = got.into_ingested();
    (got.format, columns, got.records)
}

fn metric(r: &Record, name: &str) -> Option<f64> {
    r.metric(&MetricKey::from_name(name).unwrap())
}

fn num(text: &str) -> f64 {
    text.parse().unwrap()
}

const ENGINES: [&str; 2] = ["vllm", "sglang"];
const MODELS: [&str; 7] = [
    "llama-0", "llama-1", "llama-2", "llama-3", "llama-4", "llama-5", "llama-6",
];

fn ttft(i: usize) -> String {
    format!("{:.3}", 40.0 + (i % 100) as f64 * 0.37)
}

#[test]
fn sglang_json_lines_read_every_value_past_the_first_batch() {
    // More lines than one batch of documents, so most are read field by field.
    let n = 3000;
    let mut text = String::new();
    for i in 0..n {
        text.push_str(&format!(
            "{{\"backend\": \"{}\", \"dataset_name\": \"random\", \"request_rate\": {}, \
             \"max_concurrency\": {}, \"random_input_len\": 1024, \"random_output_len\": 128, \
             \"duration\": {}.0, \"completed\": 500, \"request_throughput\": {}, \
             \"output_throughput\": {}, \"mean_ttft_ms\": {}, \"p99_ttft_ms\": {}.5, \
             \"mean_itl_ms\": 14.28}}\n",
            ENGINES[i % 2],
            i % 9 + 1,
            1 << (i % 7),
            60 + i % 11,
            7.5 + (i % 13) as f64 * 0.25,
            4258.1 + (i % 1000) as f64,
            ttft(i),
            100 + i % 17,
        ));
    }
    let (format, columns, records) = read("runs.jsonl", &text);
    assert_eq!(format, Format::SglangServing);
    assert!(columns, "past a batch, JSON Lines come as columns");
    assert_eq!(records.len(), n);
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r.engine.as_deref(), Some(ENGINES[i % 2]), "line {}", i + 1);
        assert_eq!(r.dataset.as_deref(), Some("random"));
        assert_eq!(r.request_rate, Some((i % 9 + 1) as f64));
        assert_eq!(r.max_concurrency, Some(1 << (i % 7)));
        assert_eq!((r.input_len, r.output_len), (Some(1024.0), Some(128.0)));
        assert_eq!(metric(r, "duration_s"), Some((60 + i % 11) as f64));
        assert_eq!(metric(r, "completed"), Some(500.0));
        assert_eq!(
            metric(r, "request_throughput"),
            Some(7.5 + (i % 13) as f64 * 0.25)
        );
        assert_eq!(
            metric(r, "output_throughput"),
            Some(num(&format!("{}", 4258.1 + (i % 1000) as f64)))
        );
        assert_eq!(metric(r, "mean_ttft_ms"), Some(num(&ttft(i))));
        assert_eq!(metric(r, "p99_ttft_ms"), Some((100 + i % 17) as f64 + 0.5));
        assert_eq!(metric(r, "mean_itl_ms"), Some(14.28));
        assert_eq!(r.metrics.len(), 7, "line {}: {:?}", i + 1, r.metrics);
        assert!(r.tags.is_empty(), "line {}: {:?}", i + 1, r.tags);
    }
}

#[test]
fn a_genai_perf_csv_of_many_blocks_reads_its_last_values() {
    let names = [
        "Time To First Token (ms)",
        "Inter Token Latency (ms)",
        "Request Latency (ms)",
        "Output Sequence Length (tokens)",
        "Input Sequence Length (tokens)",
    ];
    let blocks = 300;
    let mut text = String::new();
    for b in 0..blocks {
        let b = b as f64;
        text.push_str("Metric,avg,min,max,p99,p95,p90,p75,p50,p25\n");
        for name in names {
            text.push_str(&format!(
                "{name},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2},{:.2}\n",
                45.6 + b,
                30.0 + b,
                90.0 + b,
                80.3 + b,
                70.1 + b,
                60.1 + b,
                50.2 + b,
                44.0 + b,
                40.0 + b
            ));
        }
        text.push_str("\nMetric,Value\n");
        text.push_str(&format!(
            "Output Token Throughput (tokens/sec),{:.2}\n",
            1580.3 + b
        ));
        text.push_str(&format!("Request Throughput (per sec),{:.2}\n\n", 12.5 + b));
    }
    let (format, _, records) = read("profile_export_genai_perf.csv", &text);
    assert_eq!(format, Format::GenaiPerfCsv);
    // Every block sets the one run's figures again: the last block's stand.
    assert_eq!(records.len(), 1);
    let r = &records[0];
    let last = (blocks - 1) as f64;
    let cell = |v: f64| num(&format!("{v:.2}"));
    for family in ["ttft", "itl", "e2el"] {
        assert_eq!(
            metric(r, &format!("mean_{family}_ms")),
            Some(cell(45.6 + last))
        );
        assert_eq!(
            metric(r, &format!("p99_{family}_ms")),
            Some(cell(80.3 + last))
        );
        assert_eq!(
            metric(r, &format!("p50_{family}_ms")),
            Some(cell(44.0 + last))
        );
        assert_eq!(
            metric(r, &format!("p25_{family}_ms")),
            Some(cell(40.0 + last))
        );
    }
    assert_eq!(r.output_len, Some(cell(45.6 + last)));
    assert_eq!(r.input_len, Some(cell(45.6 + last)));
    assert_eq!(metric(r, "output_throughput"), Some(cell(1580.3 + last)));
    assert_eq!(metric(r, "request_throughput"), Some(cell(12.5 + last)));
}

#[test]
fn a_markdown_table_reads_every_row_into_columns() {
    let n = 2000;
    let mut text = String::from(
        "| Model | GPU | Concurrency | TTFT (ms) | TPOT (ms) | Throughput (tok/s) |\n\
         |---|---|---:|---:|---:|---:|\n",
    );
    let tpot = |i: usize| format!("{:.3}", 8.0 + (i % 50) as f64 * 0.11);
    let tput = |i: usize| format!("{:.2}", 1500.0 + (i % 1000) as f64);
    for i in 0..n {
        // A bold row reads like the others.
        let model = if i == 7 {
            format!("**{}**", MODELS[i % 7])
        } else {
            MODELS[i % 7].to_string()
        };
        text.push_str(&format!(
            "| {model} | H100 | {} | {} | {} | {} |\n",
            1 << (i % 8),
            ttft(i),
            tpot(i),
            tput(i)
        ));
    }
    let (format, columns, records) = read("table.md", &text);
    assert_eq!(format, Format::MarkdownTable);
    assert!(columns, "one plain markdown table comes as columns");
    assert_eq!(records.len(), n);
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r.model.as_deref(), Some(MODELS[i % 7]), "row {i}");
        assert_eq!(r.gpu.as_deref(), Some("H100"));
        assert_eq!(r.max_concurrency, Some(1 << (i % 8)));
        assert_eq!(metric(r, "mean_ttft_ms"), Some(num(&ttft(i))));
        assert_eq!(metric(r, "mean_tpot_ms"), Some(num(&tpot(i))));
        assert_eq!(metric(r, "output_throughput"), Some(num(&tput(i))));
    }
}
