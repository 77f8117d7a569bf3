//! Tables: generic tidy CSV, wide CSV, generic markdown, TGI benchmark tables, canonical
//! JSON/CSV round trips, and re-reading with a user-changed mapping.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::ingest::{self, Format};
use benchlens::model::canonical;
use common::{close, fixture, metric, read_fixture};

#[test]
fn tidy_csv_maps_columns_by_name_and_unit() {
    let got = read_fixture("tables/tidy.csv");
    assert_eq!(got.format, Format::GenericCsv);
    assert_eq!(got.records.len(), 3, "{:?}", got.warnings);
    let r = &got.records[0];
    assert_eq!(r.model.as_deref(), Some("llama-8b"));
    assert_eq!(r.gpu.as_deref(), Some("H100"));
    assert_eq!(r.batch_size, Some(8));
    assert_eq!(r.max_concurrency, Some(16));
    assert_eq!(r.input_len, Some(1024.0));
    close(metric(r, "mean_ttft_ms"), 45.2);
    close(metric(r, "mean_tpot_ms"), 8.1);
    close(metric(r, "p99_itl_ms"), 22.5);
    close(metric(r, "output_throughput"), 2345.6);
    close(metric(r, "request_throughput"), 18.3);
    assert_eq!(r.tags.get("node").map(String::as_str), Some("a7"));
    let m = |c: &str| got.mapping.iter().find(|m| m.column == c).unwrap().clone();
    assert_eq!(m("tpot_s").scale, 1000.0);
    assert_eq!(m("TTFT (ms)").target.as_deref(), Some("mean_ttft_ms"));
    let w: Vec<String> = got.warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        w.iter()
            .any(|w| w.starts_with("line 4: 3 cells where the header has 12")),
        "{w:?}"
    );
    assert!(
        w.iter().any(|w| w.starts_with("line 4: no measured value")),
        "{w:?}"
    );
    assert!(w.iter().any(|w| w.starts_with("line 5: 13 cells")), "{w:?}");
}

#[test]
fn user_mapping_overrides_the_automatic_one() {
    let bytes = fixture("tables/tidy.csv");
    let first = ingest::read("tidy.csv", &bytes).unwrap();
    let mut mapping = first.mapping.clone();
    for m in &mut mapping {
        if m.column == "Throughput (tok/s)" {
            m.target = Some("total_token_throughput".into());
        }
        if m.column == "node" {
            m.target = None;
        }
    }
    let again = ingest::read_with_mapping("tidy.csv", &bytes, &mapping).unwrap();
    let r = &again.records[0];
    close(metric(r, "total_token_throughput"), 2345.6);
    assert_eq!(metric(r, "output_throughput"), None);
    assert!(r.tags.is_empty());
    assert_eq!(again.mapping, mapping);
}

#[test]
fn wide_csv_with_other_gpu_suffixes() {
    let got = read_fixture("tables/wide.csv");
    assert_eq!(got.format, Format::GenericCsv);
    assert_eq!(got.records.len(), 3, "{:?}", got.warnings);
    let h100: Vec<_> = got
        .records
        .iter()
        .filter(|r| r.gpu.as_deref() == Some("H100"))
        .collect();
    let mi: Vec<_> = got
        .records
        .iter()
        .filter(|r| r.gpu.as_deref() == Some("MI300X"))
        .collect();
    assert_eq!((h100.len(), mi.len()), (2, 1));
    assert_eq!(mi[0].batch_size, Some(64));
    assert_eq!(mi[0].gpu_count, Some(1));
    close(metric(mi[0], "extra.throughput"), 1610.7);
    assert!(got
        .warnings
        .iter()
        .any(|w| w.to_string() == "line 3: no measured value for MI300X, skipped"));
}

#[test]
fn generic_markdown_table() {
    let got = read_fixture("tables/results.md");
    assert_eq!(got.format, Format::MarkdownTable);
    assert_eq!(got.records.len(), 2);
    let r = &got.records[1];
    assert_eq!(r.max_concurrency, Some(8));
    close(metric(r, "mean_ttft_ms"), 35.1);
    close(metric(r, "median_e2el_ms"), 1900.0);
    close(metric(r, "output_throughput"), 700.2);
}

#[test]
fn tgi_benchmark_tables_fill_down_and_strip_units() {
    let got = read_fixture("tables/tgi_benchmark.md");
    assert_eq!(got.format, Format::TgiBenchmark);
    assert_eq!(got.records.len(), 2);
    let b8 = got
        .records
        .iter()
        .find(|r| r.batch_size == Some(8))
        .unwrap();
    assert_eq!(b8.engine.as_deref(), Some("tgi"));
    close(metric(b8, "mean_ttft_ms"), 40.51);
    close(metric(b8, "p99_ttft_ms"), 45.0);
    close(metric(b8, "mean_tpot_ms"), 9.12);
    close(metric(b8, "extra.decode_total_latency_average_ms"), 1160.0);
    close(metric(b8, "extra.decode_total_latency_p99_ms"), 1290.0);
    close(metric(b8, "output_throughput"), 877.2);
    close(metric(b8, "extra.prefill_throughput_average"), 197.5);
}

#[test]
fn canonical_json_and_csv_round_trip() {
    let got = read_fixture("seeds/001_b815cef7710eda19.txt");
    let json = canonical::to_json(&got.records);
    let back = ingest::read("records.json", json.as_bytes()).unwrap();
    assert_eq!(back.format, Format::CanonicalJson);
    assert_eq!(back.records.len(), 12);
    assert_eq!(back.records[3].metrics, got.records[3].metrics);
    assert_eq!(back.records[3].source.as_deref(), Some("records.json"));
    let csv = canonical::to_csv(&got.records);
    let back = ingest::read("records.csv", csv.as_bytes()).unwrap();
    assert_eq!(back.format, Format::CanonicalCsv);
    assert_eq!(back.records.len(), 12);
    assert_eq!(back.records[5].request_rate, Some(f64::INFINITY));
    assert_eq!(back.records[5].metrics, got.records[5].metrics);
}

/// Quote-free CSV is split by hand; quoting the first header cell sends the same table
/// through the `csv` crate. Both must give the same records, warnings, lines and mapping.
#[test]
fn quote_free_csv_reads_the_same_by_hand_and_through_the_csv_crate() {
    let wide = String::from_utf8(fixture("tables/wide.csv")).unwrap();
    let messy = "\n\nmodel,gpu,batch,concurrency,TTFT (ms),TPOT (s),Throughput (tok/s),status\n\
                 llama,8xH100,8,16,45.2,0.0081,2345.6,ok\n\
                 \n   \n\
                 llama,H100,16,n/a,61 ms,0.0095,3012.4 tok/s\n\
                 mistral,A100,x,32,fast,-,none,oom,extra\n\
                 ,,,,,,,\n\
                 \u{e9}t\u{e9},L40S,1,1,1e2,1.5e-2,1,000\n\
                 qwen,H200,4,4,,,,\n\
                 qwen;H200;4;4\n\
                 phi,H100,2,2,12.5,0.01,99.5,ok";
    let tsv = "model\tTTFT (ms)\tp99 ITL (ms)\nllama\t40\t50\n\nmistral\t41\n";
    let crlf = messy.replace('\n', "\r\n");
    for (name, text) in [
        ("wide.csv", wide.as_str()),
        ("messy.csv", messy),
        ("t.tsv", tsv),
        ("crlf.csv", crlf.as_str()),
    ] {
        assert!(!text.contains('"'));
        let d = if name.ends_with(".tsv") { '\t' } else { ',' };
        let header_start = text.find(|c: char| !c.is_whitespace()).unwrap();
        let first_end = header_start + text[header_start..].find(d).unwrap();
        let quoted = format!(
            "{}\"{}\"{}",
            &text[..header_start],
            &text[header_start..first_end],
            &text[first_end..]
        );
        let by_hand = ingest::read(name, text.as_bytes()).unwrap();
        let by_crate = ingest::read(name, quoted.as_bytes()).unwrap();
        assert_eq!(by_hand.format, Format::GenericCsv, "{name}");
        assert!(!by_hand.records.is_empty(), "{name}");
        assert_eq!(by_hand, by_crate, "{name}");
        if name.ends_with(".csv") && name != "wide.csv" {
            let lines: Vec<_> = by_hand
                .warnings
                .iter()
                .filter_map(|w| w.at.clone())
                .collect();
            assert!(lines.len() >= 5, "{:?}", by_hand.warnings);
        }
    }
}

/// Many markdown tables of the same columns: under one heading their rows meet (no section
/// tag), under headings of their own the heading tells them apart. Which headings do that is
/// decided in one pass over the tables (comparing each table with every other made the time
/// grow with the square of their number).
#[test]
fn many_tables_of_the_same_columns_are_told_apart_by_their_headings_only_when_those_differ() {
    let tables = |heading: &dyn Fn(usize) -> String| -> String {
        (0..20_000)
            .map(|i| {
                format!(
                    "{}\n\n| model | batch | throughput |\n|---|---|---|\n| m{} | {} | {} |\n",
                    heading(i),
                    i % 7,
                    i % 5 + 1,
                    i as f64 * 1.5
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    let same = ingest::read("same.md", tables(&|_| "### Section".into()).as_bytes()).unwrap();
    assert_eq!(same.records.len(), 20_000, "{:?}", same.warnings);
    assert!(same.records.iter().all(|r| !r.tags.contains_key("section")));
    let r = &same.records[19_999];
    assert_eq!(r.model.as_deref(), Some("m0"));
    assert_eq!(r.batch_size, Some(5));
    close(metric(r, "extra.throughput"), 29_998.5);

    let apart = ingest::read("apart.md", tables(&|i| format!("### Run {i}")).as_bytes()).unwrap();
    assert_eq!(apart.records.len(), 20_000, "{:?}", apart.warnings);
    let r = &apart.records[123];
    assert_eq!(r.tags.get("section").map(String::as_str), Some("Run 123"));
    close(metric(r, "extra.throughput"), 184.5);
}

#[test]
fn duplicate_column_names_are_warned_about_naming_the_copy_kept() {
    // A canonical CSV and a generic one (its own column names).
    for text in [
        "model,request_rate,mean_ttft_ms,gpu,mean_ttft_ms\nm,1,10,H100,20\nm,2,11,H100,21\n",
        "Model,Rate (req/s),TTFT (ms),GPU,TTFT (ms)\nm,1,10,H100,20\nm,2,11,H100,21\n",
    ] {
        duplicates_in(text);
    }
}

fn duplicates_in(text: &str) {
    let name = if text.contains("TTFT") {
        "TTFT (ms)"
    } else {
        "mean_ttft_ms"
    };
    // The row way and the columnar way say the same and keep the same copy.
    let records = ingest::read("dup.csv", text.as_bytes()).unwrap();
    assert_eq!(records.records.len(), 2);
    close(metric(&records.records[0], "mean_ttft_ms"), 20.0);
    close(metric(&records.records[1], "mean_ttft_ms"), 21.0);
    let columnar = ingest::read_columnar("dup.csv", text.as_bytes()).unwrap();
    let mut from_columns = columnar.clone().into_ingested().records;
    from_columns.sort_by(|a, b| a.request_rate.partial_cmp(&b.request_rate).unwrap());
    close(metric(&from_columns[0], "mean_ttft_ms"), 20.0);
    for w in [records.warnings.clone(), columnar.warnings().to_vec()] {
        let dup: Vec<String> = w
            .iter()
            .map(|w| w.to_string())
            .filter(|w| w.contains("columns are named"))
            .collect();
        let want = format!("2 columns are named {name:?} (columns 3, 5): each row keeps the last one's value (column 5), the others are ignored");
        assert_eq!(dup.len(), 1, "{w:?}");
        assert!(dup[0].ends_with(&want), "{w:?}");
    }
}

/// A README comparing engines side by side, one column group per engine: each row gives one
/// record per engine (so vLLM's and SGLang's TTFTs never share one metric), the bold row is
/// read like the others, and columns outside the groups are shared.
#[test]
fn one_column_group_per_engine_gives_a_record_per_engine() {
    let md = "## Results\n\n\
| Concurrency | vLLM TPS | SGLang TPS | TRT-LLM TPS | vLLM TTFT (ms) | SGLang TTFT (ms) | TRT-LLM TTFT (ms) |\n\
|---|---|---|---|---|---|---|\n\
| 1 | 95.1 | 98.2 | 101.3 | 25.5 | 22.1 | 19.8 |\n\
| **64** | **2100.5** | **2250.7** | **2301.9** | **180.2** | **150.3** | **140.6** |\n";
    let got = ingest::read("engines.md", md.as_bytes()).unwrap();
    assert_eq!(got.format, Format::MarkdownTable);
    assert_eq!(got.records.len(), 6, "{:?}", got.warnings);
    let find = |engine: &str, conc: u64| {
        got.records
            .iter()
            .find(|r| r.engine.as_deref() == Some(engine) && r.max_concurrency == Some(conc))
            .unwrap_or_else(|| panic!("{engine} {conc}: {:?}", got.records))
    };
    close(metric(find("vllm", 1), "mean_ttft_ms"), 25.5);
    close(metric(find("sglang", 1), "mean_ttft_ms"), 22.1);
    close(metric(find("trtllm", 1), "mean_ttft_ms"), 19.8);
    close(metric(find("sglang", 64), "mean_ttft_ms"), 150.3);
    close(metric(find("trtllm", 64), "mean_ttft_ms"), 140.6);
    let tps = |r: &benchlens::model::Record| {
        r.metrics
            .iter()
            .find(|(k, _)| k.name().contains("tps") || k.name().contains("throughput"))
            .map(|(_, v)| *v)
    };
    assert_eq!(tps(find("vllm", 64)), Some(2100.5));
    let m = got
        .mapping
        .iter()
        .find(|m| m.column == "SGLang TTFT (ms)")
        .unwrap();
    assert_eq!(m.engine.as_deref(), Some("sglang"));
    assert_eq!(m.target.as_deref(), Some("mean_ttft_ms"));
}

/// Statistics side by side (`Mean TTFT`, `Median TTFT`) are no engine groups.
#[test]
fn statistic_prefixes_are_not_engine_groups() {
    let md = "| Rate | Mean TTFT (ms) | Median TTFT (ms) |\n|---|---|---|\n| 1 | 20 | 18 |\n";
    let got = ingest::read("stats.md", md.as_bytes()).unwrap();
    assert_eq!(got.records.len(), 1);
    close(metric(&got.records[0], "median_ttft_ms"), 18.0);
}

/// A GPU cell that ends with its count (`NVIDIA H100 80GB HBM3 x 2`) gives the GPU and a GPU
/// count of 2, as `8xH100` does, on the row path and the columnar path alike.
#[test]
fn gpu_count_after_the_gpu_name() {
    let csv =
        b"gpu,rate,mean_ttft_ms\nNVIDIA H100 80GB HBM3 x 2,1,20\n8xH100,2,25\nRTX 4090,3,30\n";
    let got = ingest::read("gpus.csv", csv).unwrap();
    let gpus: Vec<_> = got
        .records
        .iter()
        .map(|r| (r.gpu.as_deref().unwrap_or(""), r.gpu_count))
        .collect();
    assert_eq!(
        gpus,
        [
            ("NVIDIA H100 80GB HBM3", Some(2)),
            ("H100", Some(8)),
            ("RTX 4090", None)
        ]
    );
    let cols = match ingest::read_columnar("gpus.csv", csv).unwrap() {
        ingest::Contents::Columns(c) => c.columns.rows().collect::<Vec<_>>(),
        ingest::Contents::Records(r) => r.records,
    };
    assert_eq!(cols[0].gpu_count, Some(2));
    assert_eq!(cols[0].gpu.as_deref(), Some("NVIDIA H100 80GB HBM3"));
}

/// Configured and measured request rates decided from the column as a whole: thirds written
/// short (`0.33`, `0.67`) are rates someone set, as are uneven rates run again for each
/// engine and the rates of a column whose header names a rate; a column of `QPS` values with
/// three decimals that never recur (`191.532`) is the achieved throughput, named or not.
#[test]
fn configured_rates_are_told_from_measured_ones_by_their_column() {
    let table = |header: &str, rates: &[&str], engines: &[&str]| {
        let mut t = format!("| Engine | {header} | TTFT (ms) |\n|---|---|---|\n");
        for e in engines {
            for (i, r) in rates.iter().enumerate() {
                t.push_str(&format!("| {e} | {r} | {} |\n", 100 + i));
            }
        }
        ingest::read("rates.md", t.as_bytes()).unwrap()
    };
    let rates = |got: &ingest::Ingested| -> Vec<Option<f64>> {
        got.records.iter().map(|r| r.request_rate).collect()
    };
    let measured = |got: &ingest::Ingested| -> Vec<Option<f64>> {
        got.records
            .iter()
            .map(|r| metric(r, "request_throughput"))
            .collect()
    };
    // Thirds and halves, one engine: set.
    let got = table("QPS", &["0.33", "0.67", "1.5", "3"], &["vllm"]);
    assert_eq!(
        rates(&got),
        [0.33, 0.67, 1.5, 3.0].map(Some),
        "{:?}",
        got.warnings
    );
    assert!(got
        .records
        .iter()
        .all(|r| metric(r, "request_throughput").is_none()));
    // Uneven rates that recur for each engine: set.
    let got = table("RPS", &["1.28", "4.62", "12.28"], &["vllm", "sglang"]);
    assert_eq!(
        rates(&got),
        [1.28, 4.62, 12.28].map(Some).repeat(2),
        "{:?}",
        got.warnings
    );
    // Uneven rates under a header that names a rate: taken at its word.
    let got = table("Request rate", &["1.28", "4.62", "12.28"], &["vllm"]);
    assert_eq!(
        rates(&got),
        [1.28, 4.62, 12.28].map(Some),
        "{:?}",
        got.warnings
    );
    // Three decimals that never recur: measured, whatever the header says.
    for header in ["QPS", "Request rate"] {
        let got = table(header, &["47.871", "95.104", "191.532"], &["vllm"]);
        assert_eq!(rates(&got), [None; 3], "{header}: {:?}", got.warnings);
        assert_eq!(
            measured(&got),
            [47.871, 95.104, 191.532].map(Some),
            "{header}"
        );
        let said: Vec<String> = got.warnings.iter().map(|w| w.to_string()).collect();
        assert!(
            said.iter().any(|w| w.contains(&format!(
                "column \"{header}\": 3 of its 3 values are not the round rates"
            ))),
            "{said:?}"
        );
    }
}
