//! The columnar read ([`ingest::read_columnar`]) gives what the row read ([`ingest::read`])
//! gives: the same records, warnings, mapping and note, and canonical JSON and CSV written
//! from the columns byte for byte the canonical writers' text for the records. Checked on
//! every fixture, on generated awkward tables (quotes, empty cells, placeholders, UTF-16 and a
//! byte-order mark, ragged rows, 4,096 and 50,000 columns) and on mutations of the fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::ingest::{self, Contents};
use benchlens::model::canonical;
use benchlens::model::canonical::{write_csv, write_json, Part};

fn all_fixtures() -> Vec<(String, Vec<u8>)> {
    let out = common::fixture_files();
    assert!(out.len() > 20, "fixtures not found");
    out
}

/// Checks both reads agree on `bytes`; returns whether the columnar one used columns.
fn same(name: &str, bytes: &[u8]) -> bool {
    let rows = ingest::read(name, bytes);
    let cols = ingest::read_columnar(name, bytes);
    let (rows, cols) = match (rows, cols) {
        (Ok(r), Ok(c)) => (r, c),
        (Err(a), Err(b)) => {
            assert_eq!(a, b, "{name}: errors differ");
            return false;
        }
        (a, b) => panic!("{name}: one read failed: {:?} / {:?}", a.err(), b.err()),
    };
    assert_eq!(rows.format, cols.format(), "{name}");
    let columnar = matches!(cols, Contents::Columns(_));
    if let Contents::Columns(c) = &cols {
        let part = [Part::Columns(&c.columns)];
        let mut json = Vec::new();
        write_json(&mut json, &part).unwrap();
        assert!(
            json == canonical::to_json(&rows.records).into_bytes(),
            "{name}: JSON from columns differs"
        );
        let mut csv = Vec::new();
        write_csv(&mut csv, &part).unwrap();
        assert!(
            csv == canonical::to_csv(&rows.records).into_bytes(),
            "{name}: CSV from columns differs"
        );
    }
    let back = cols.into_ingested();
    // Through canonical JSON: records holding NaN are never `==`.
    assert_eq!(
        canonical::to_json(&back.records),
        canonical::to_json(&rows.records),
        "{name}: records differ"
    );
    if !rows
        .records
        .iter()
        .any(|r| r.metrics.values().any(|v| v.is_nan()))
    {
        assert_eq!(back.records, rows.records, "{name}: records differ");
    }
    assert_eq!(back.warnings, rows.warnings, "{name}: warnings differ");
    assert_eq!(back.mapping, rows.mapping, "{name}: mapping differs");
    assert_eq!(back.note, rows.note, "{name}: note differs");
    columnar
}

#[test]
fn every_fixture_reads_the_same_either_way() {
    let mut columnar = Vec::new();
    for (name, bytes) in all_fixtures() {
        if same(&name, &bytes) {
            columnar.push(name);
        }
    }
    // Most fixture tables are canonical CSV, quote thousands or carry units (read the row
    // way); the trace table is a plain one.
    assert!(
        columnar.iter().any(|n| n == "azure-conv-head.csv"),
        "read into columns: {columnar:?}"
    );
}

/// A tidy table of `rows` rows with whatever cells `cell` gives.
fn table(header: &str, rows: usize, cell: impl Fn(usize, usize) -> String) -> String {
    let width = header.split(',').count();
    let mut s = format!("{header}\n");
    for r in 0..rows {
        let cells: Vec<String> = (0..width).map(|c| cell(r, c)).collect();
        s.push_str(&cells.join(","));
        s.push('\n');
    }
    s
}

const HEADER: &str =
    "model,gpu,batch_size,concurrency,request_rate,TTFT (ms),tpot_s,Throughput (tok/s),node";

fn plain_cell(r: usize, c: usize) -> String {
    match c {
        0 => format!("llama-{}", r % 3),
        1 => ["H100", "A100", "MI300X"][r % 3].to_string(),
        2 => (1 << (r % 6)).to_string(),
        3 => (r % 5 * 8).to_string(),
        4 => ["1", "4", "inf", "0.5"][r % 4].to_string(),
        5 => format!("{}.{}", 40 + r % 17, r % 10),
        6 => format!("0.00{}", r % 9 + 1),
        7 => format!("{}", 1500 + r),
        _ => format!("n{}", r % 2),
    }
}

/// `csv` (a table from [`table`]) as a markdown table.
fn markdown(csv: &str) -> String {
    let mut lines = csv.lines();
    let header = lines.next().unwrap_or("");
    let cells = |l: &str| format!("| {} |", l.split(',').collect::<Vec<_>>().join(" | "));
    let mut out = format!("{}\n", cells(header));
    out.push_str(&format!("|{}\n", "---|".repeat(header.split(',').count())));
    for l in lines {
        out.push_str(&cells(l));
        out.push('\n');
    }
    out
}

#[test]
fn markdown_tables_read_the_same_either_way() {
    let plain = markdown(&table(HEADER, 400, plain_cell));
    assert!(same("plain.md", plain.as_bytes()));
    // Bold cells (an author's best row) read as the others.
    let bold = markdown(&table(HEADER, 60, |r, c| match r % 9 {
        0 => format!("**{}**", plain_cell(r, c)),
        _ => plain_cell(r, c),
    }));
    assert!(same("bold.md", bold.as_bytes()));
    let holes = markdown(&table(HEADER, 200, |r, c| match (r + c) % 7 {
        0 => String::new(),
        1 if c > 4 => "-".into(),
        _ => plain_cell(r, c),
    }));
    same("holes.md", holes.as_bytes());
    // Context from a heading, two tables, a short row: the row reader's.
    assert!(!same(
        "titled.md",
        format!("# llama-3-8b\n\n{plain}").as_bytes()
    ));
    assert!(!same(
        "two.md",
        format!("{plain}\ntext\n\n{plain}").as_bytes()
    ));
    let short = plain.replacen("| n1 |", "|", 1);
    assert!(!same("short.md", short.as_bytes()));
}

#[test]
fn generated_tables_read_the_same_either_way() {
    // Plain: read into columns.
    let plain = table(HEADER, 500, plain_cell);
    assert!(same("plain.csv", plain.as_bytes()));
    // Tabs and semicolons.
    assert!(same("tabs.tsv", plain.replace(',', "\t").as_bytes()));
    // Quotes: the `csv` crate splits, still into columns.
    let quoted = table(HEADER, 300, |r, c| format!("\"{}\"", plain_cell(r, c)));
    assert!(same("quoted.csv", quoted.as_bytes()));
    // Empty cells and placeholders (a row without any metric is skipped with a warning).
    let holes = table(HEADER, 300, |r, c| match (r + c) % 7 {
        0 => String::new(),
        1 if c > 4 => "-".into(),
        2 => " n/a ".into(),
        3 => format!(" {} ", plain_cell(r, c)),
        _ => plain_cell(r, c),
    });
    same("holes.csv", holes.as_bytes());
    let no_metric = table(HEADER, 50, |r, c| {
        if (5..8).contains(&c) && r % 10 == 3 {
            String::new()
        } else {
            plain_cell(r, c)
        }
    });
    assert!(same("no-metric.csv", no_metric.as_bytes()));
    // Byte-order mark, UTF-16 both ways, CRLF line ends.
    let mut bom = b"\xEF\xBB\xBF".to_vec();
    bom.extend_from_slice(plain.as_bytes());
    assert!(same("bom.csv", &bom));
    for big_endian in [false, true] {
        let mut utf16 = if big_endian {
            vec![0xFE, 0xFF]
        } else {
            vec![0xFF, 0xFE]
        };
        for u in plain.encode_utf16() {
            utf16.extend_from_slice(&if big_endian {
                u.to_be_bytes()
            } else {
                u.to_le_bytes()
            });
        }
        assert!(same("utf16.csv", &utf16));
    }
    assert!(same("crlf.csv", plain.replace('\n', "\r\n").as_bytes()));
    // Ragged rows: more and fewer cells, more than 20 of them.
    let mut ragged = String::from(HEADER);
    ragged.push('\n');
    for r in 0..200 {
        let mut cells: Vec<String> = (0..9).map(|c| plain_cell(r, c)).collect();
        match r % 4 {
            0 => cells.truncate(7),
            1 => cells.push("extra".into()),
            _ => {}
        }
        ragged.push_str(&cells.join(","));
        ragged.push('\n');
    }
    assert!(same("ragged.csv", ragged.as_bytes()));
    // Cells the row reader converts or warns about: read the row way, the same.
    for odd in ["8xH100", "12 ms", "1,024", "abc", "-3", "1e3", "NaN"] {
        let t = table(HEADER, 30, |r, c| {
            if r == 17 && (c == 1 || c == 2 || c == 5) {
                odd.to_string()
            } else {
                plain_cell(r, c)
            }
        });
        same(&format!("odd-{odd}.csv"), t.as_bytes());
    }
    // A file name that carries dimensions, per-GPU column groups, a test-name column.
    same(
        "run-4qps-concurrency8-llama-20250301-101500.csv",
        plain.as_bytes(),
    );
    same(
        "wide.csv",
        b"model,throughput_h100,throughput_a100\nm,1,2\nn,3,4\n",
    );
    same(
        "t.csv",
        b"test_name,TTFT (ms)\nserving_llama8B_tp1_sharegpt_qps_4,5\n",
    );
    // Wide: 4,096 columns (read the row way) and 50,000.
    for width in [4_095usize, 4_096, 50_000] {
        let header: Vec<String> = (0..width).map(|i| format!("m{i}_ms")).collect();
        let t = table(&header.join(","), 2, |r, c| format!("{c}.{r}"));
        assert_eq!(
            same(&format!("wide-{width}.csv"), t.as_bytes()),
            width < 4_096
        );
    }
}

#[test]
fn mutated_tables_read_the_same_either_way() {
    const TOKENS: &[&str] = &[
        ",", "\"", "-", " ", "n/a", "\r\n", "\n", "x", "8x", "1,024", "inf", "NaN", "\t", "é",
        "ms", "0", ";",
    ];
    let mut inputs: Vec<(String, Vec<u8>)> = all_fixtures()
        .into_iter()
        .filter(|(n, _)| n.ends_with(".csv"))
        .collect();
    inputs.push((
        "plain.csv".into(),
        table(HEADER, 40, plain_cell).into_bytes(),
    ));
    let mut x: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut columnar = 0;
    for k in 0..256 {
        let (name, base) = &inputs[k % inputs.len()];
        let mut bytes = base.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % (bytes.len() + 1);
            match next() % 3 {
                0 => {
                    let t = TOKENS[(next() as usize) % TOKENS.len()];
                    let tail = bytes.split_off(at);
                    bytes.extend_from_slice(t.as_bytes());
                    bytes.extend(tail);
                }
                1 => {
                    let end = (at + 1 + (next() as usize) % 8).min(bytes.len());
                    bytes.drain(at..end);
                }
                _ => {
                    // Duplicate a line.
                    let start = bytes[..at]
                        .iter()
                        .rposition(|b| *b == b'\n')
                        .map_or(0, |p| p + 1);
                    let end = bytes[at..]
                        .iter()
                        .position(|b| *b == b'\n')
                        .map_or(bytes.len(), |p| at + p + 1);
                    let line = bytes[start..end].to_vec();
                    let tail = bytes.split_off(start);
                    bytes.extend(line);
                    bytes.extend(tail);
                }
            }
        }
        // Keep the text valid UTF-8 mostly; invalid bytes are read with a warning either way.
        columnar += usize::from(same(&format!("{k}-{name}"), &bytes));
    }
    assert!(columnar > 20, "only {columnar} mutations read into columns");
}

/// Rows past the first 200 (the sample that fixes the mapping) go through the columnar
/// reader's one-pass row reading: mutations there, at random places, read the same as the
/// row way.
#[test]
fn mutated_rows_after_the_sample_read_the_same_either_way() {
    const TOKENS: &[&str] = &[
        ",",
        "\"",
        "\"a,b\"",
        "-",
        " ",
        "n/a",
        "\r\n",
        "\n",
        "\r",
        "8x",
        "inf",
        "NaN",
        "\t",
        "é",
        "ms",
        "0",
        ".",
        "1e3",
        "-0",
        "00",
        "1234567890123456",
        "0.000000000000001",
        "llama-1",
        "H100",
        ",,",
    ];
    let base = table(HEADER, 320, plain_cell).into_bytes();
    // The start of row 201 (the header is line 1).
    let sample_end = base
        .iter()
        .enumerate()
        .filter(|(_, b)| **b == b'\n')
        .nth(200)
        .map(|(i, _)| i + 1)
        .unwrap();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    let mut columnar = 0;
    for k in 0..160 {
        let mut bytes = base.clone();
        for _ in 0..1 + next() % 3 {
            let at = sample_end + (next() as usize) % (bytes.len() + 1 - sample_end);
            if next() % 2 == 0 {
                let t = TOKENS[(next() as usize) % TOKENS.len()];
                let tail = bytes.split_off(at);
                bytes.extend_from_slice(t.as_bytes());
                bytes.extend(tail);
            } else {
                let end = (at + 1 + (next() as usize) % 6).min(bytes.len());
                bytes.drain(at..end);
            }
        }
        columnar += usize::from(same(&format!("after-sample-{k}.csv"), &bytes));
    }
    assert!(columnar > 20, "only {columnar} mutations read into columns");
    // Line ends: CRLF throughout, mixed, lone CRs, blank and empty lines, no final newline,
    // with rows after the sample that measure nothing or are ragged.
    let plain = table(HEADER, 300, plain_cell);
    let mut lines: Vec<String> = plain.lines().map(String::from).collect();
    lines[230] = ",,,,,,,,".into();
    lines[240] = "llama-0,H100,1,8".into();
    lines[250] = "llama-0,H100,1,8,1,,,,n0".into();
    lines[260] = " , , , , , , , , ".into();
    lines[270] = "llama-0,H100,1,8,1,1.5,0.002,1500,n0,extra".into();
    for (name, ends) in [
        ("crlf", ["\r\n", "\r\n", "\r\n"]),
        ("mixed", ["\n", "\r\n", "\n"]),
        ("cr", ["\n", "\r", "\r\n"]),
        ("blank", ["\n", "\n\n", "\r\n\r\n"]),
    ] {
        let mut text = String::new();
        for (i, l) in lines.iter().enumerate() {
            text.push_str(l);
            if i + 1 < lines.len() {
                text.push_str(ends[i % 3]);
            }
        }
        assert!(same(&format!("{name}.csv"), text.as_bytes()), "{name}");
    }
    // Cells the row reader converts or warns about, after the sample.
    for odd in [
        "8xH100", "12 ms", "abc", "-3", "1e3", "NaN", "-", "n/a", " 5 ",
    ] {
        let t = table(HEADER, 260, |r, c| {
            if r == 230 && (c == 1 || c == 2 || c == 4 || c == 5) {
                odd.to_string()
            } else {
                plain_cell(r, c)
            }
        });
        same(&format!("late-odd-{odd}.csv"), t.as_bytes());
    }
    // A text dimension whose values are longer than the reader's byte keys, and numbers
    // written several ways (`8`, `08`, `8.0`) in count and real dimensions.
    let t = table(HEADER, 400, |r, c| match c {
        0 => format!("meta-llama/Llama-3.1-{}B-Instruct", [8, 70, 405][r % 3]),
        2 => ["8", "08", "16", "0016"][r % 4].into(),
        4 => ["1", "1.0", "01", "0.5", ".5", "-0", "0"][r % 7].into(),
        _ => plain_cell(r, c),
    });
    assert!(same("keys.csv", t.as_bytes()));
}

/// benchlens's canonical header, as `convert --to csv` writes it (source and format included).
const CANONICAL: &str = "source,format,model,engine,gpu,batch_size,request_rate,tag.node,\
mean_ttft_ms,p99_ttft_ms,mean_itl_ms,output_throughput,extra.queue";

fn canonical_cell(r: usize, c: usize) -> String {
    match c {
        0 => "old.json".into(),
        1 => "vllm_serving".into(),
        2 => format!("llama-{}", r % 3),
        3 => ["vllm", "sglang"][r % 2].to_string(),
        4 => ["H100", "A100", "8xH100"][r % 3].to_string(),
        5 => (1 << (r % 6)).to_string(),
        6 => ["1", "4", "inf", "0.5"][r % 4].to_string(),
        7 => format!("n{}", r % 2),
        8 => format!("{}.{}", 40 + r % 17, r % 10),
        9 => format!("{}.{}", 90 + r % 17, r % 10),
        10 => format!("0.00{}", r % 9 + 1),
        11 => format!("{}", 1500 + r),
        _ => format!("{}", r % 4),
    }
}

#[test]
fn canonical_csv_reads_into_columns_as_the_canonical_reader_reads_it() {
    // Plain, and with quotes, CRLF, a cell of spaces: into columns.
    let plain = table(CANONICAL, 500, canonical_cell);
    assert!(same("canonical.csv", plain.as_bytes()));
    let quoted = table(CANONICAL, 200, |r, c| {
        format!("\"{}\"", canonical_cell(r, c))
    });
    assert!(same("canonical-quoted.csv", quoted.as_bytes()));
    assert!(same(
        "canonical-crlf.csv",
        plain.replace('\n', "\r\n").as_bytes()
    ));
    // Cells a generic table would read otherwise: kept as the canonical reader keeps them
    // (placeholders as text, `8xH100` as a GPU name, padded cells trimmed, NaN and inf
    // metrics, a row with no metric kept), all into columns.
    let odd_table = |odd: &str, cols: [usize; 2]| {
        table(CANONICAL, 40, |r, c| {
            if r == 17 && cols.contains(&c) {
                odd.to_string()
            } else if r == 23 && c >= 8 {
                String::new()
            } else {
                canonical_cell(r, c)
            }
        })
    };
    for odd in ["none", "-", "n/a", " padded ", "8xH100", ""] {
        let t = odd_table(odd, [2, 4]);
        assert!(
            same(&format!("canonical-text-{odd}.csv"), t.as_bytes()),
            "{odd:?}"
        );
    }
    for odd in ["NaN", "inf", "-inf", "1e3", " 7 ", "\"1,024\"", ""] {
        let t = odd_table(odd, [8, 12]);
        assert!(
            same(&format!("canonical-number-{odd}.csv"), t.as_bytes()),
            "{odd:?}"
        );
    }
    // Placeholders in a metric column: the canonical reader warns, so the row way, the same.
    for odd in ["none", "-", "n/a"] {
        let t = odd_table(odd, [8, 12]);
        assert!(
            !same(&format!("canonical-metric-{odd}.csv"), t.as_bytes()),
            "{odd:?}"
        );
    }
    // Cells the canonical reader warns about, an `inferred` column with values, ragged rows,
    // unknown and doubled columns: the row way, the same.
    for odd in ["abc", "12 ms", "1.5x"] {
        for col in [5, 6, 8] {
            let t = table(CANONICAL, 30, |r, c| {
                if r == 9 && c == col {
                    odd.to_string()
                } else {
                    canonical_cell(r, c)
                }
            });
            same(&format!("canonical-bad-{odd}-{col}.csv"), t.as_bytes());
        }
    }
    let inferred = table(&format!("{CANONICAL},inferred"), 30, |r, c| {
        if c == 13 {
            if r == 5 {
                "gpu=file name".into()
            } else {
                String::new()
            }
        } else {
            canonical_cell(r, c)
        }
    });
    same("canonical-inferred.csv", inferred.as_bytes());
    let empty_inferred = table(&format!("{CANONICAL},inferred"), 30, |r, c| {
        if c == 13 {
            String::new()
        } else {
            canonical_cell(r, c)
        }
    });
    assert!(same(
        "canonical-inferred-empty.csv",
        empty_inferred.as_bytes()
    ));
    let mut ragged = format!("{CANONICAL}\n");
    for r in 0..40 {
        let mut cells: Vec<String> = (0..13).map(|c| canonical_cell(r, c)).collect();
        if r % 7 == 3 {
            cells.truncate(10);
        }
        ragged.push_str(&cells.join(","));
        ragged.push('\n');
    }
    same("canonical-ragged.csv", ragged.as_bytes());
    let unknown = table(&format!("{CANONICAL},mean_ttft_ms"), 20, |r, c| {
        canonical_cell(r, c % 13)
    });
    same("canonical-doubled.csv", unknown.as_bytes());
    // An unknown column: still a canonical file only when every column is known, so this
    // is a generic table; read the same either way all the same.
    same(
        "canonical-unknown.csv",
        table(&format!("{CANONICAL},whatever"), 20, |r, c| {
            canonical_cell(r, c % 13)
        })
        .as_bytes(),
    );
    // Only a header.
    same("canonical-header.csv", format!("{CANONICAL}\n").as_bytes());
}

/// `n` SGLang-style JSON lines; `odd(i)` may replace line `i`.
fn json_lines(n: usize, odd: impl Fn(usize) -> Option<String>) -> String {
    let mut s = String::new();
    for i in 0..n {
        if let Some(line) = odd(i) {
            s.push_str(&line);
        } else {
            s.push_str(&format!(
                "{{\"backend\": \"{}\", \"dataset_name\": \"random\", \"request_rate\": {}, \
                 \"max_concurrency\": {}, \"random_input_len\": 1024, \"random_output_len\": 128, \
                 \"completed\": 500, \"request_throughput\": {}.25, \"mean_ttft_ms\": {}.5, \
                 \"p99_ttft_ms\": {}.75}}",
                ["sglang", "vllm"][i % 2],
                i % 9 + 1,
                1 << (i % 7),
                7 + i % 13,
                40 + i % 17,
                90 + i % 17,
            ));
        }
        s.push('\n');
    }
    s
}

#[test]
fn json_lines_past_a_batch_read_into_columns_as_the_row_reader_reads_them() {
    // Fewer lines than a batch: the row way, the same.
    assert!(!same("few.jsonl", json_lines(1024, |_| None).as_bytes()));
    // More: into columns, a batch at a time, at and across the batch's edges.
    for n in [1025, 2048, 3001] {
        assert!(same(
            &format!("runs-{n}.jsonl"),
            json_lines(n, |_| None).as_bytes()
        ));
    }
    // Keys that first appear late (a metric, a tag-like field, a dimension), bare
    // Infinity/NaN, a broken line (skipped with a warning naming it), a list on one line,
    // per-request arrays, blank lines.
    let odd = json_lines(2600, |i| match i {
        1500 => Some(
            "{\"backend\": \"sglang\", \"request_rate\": Infinity, \"completed\": 3, \
                       \"mean_e2e_latency_ms\": 12.5, \"accept_length\": NaN, \"mean_ttft_ms\": 1}"
                .into(),
        ),
        1700 => Some("{\"backend\": \"sglang\", \"request_rate\": 2, broken".into()),
        1800 => Some(String::new()),
        2100 => Some(
            "[{\"backend\": \"sglang\", \"random_input_len\": 7, \"mean_ttft_ms\": 3}, \
             {\"backend\": \"sglang\", \"random_input_len\": 8, \"mean_ttft_ms\": 4}]"
                .into(),
        ),
        2200 => Some(
            "{\"backend\": \"vllm\", \"model_id\": \"m\", \"request_rate\": 4, \
             \"completed\": 3, \"mean_ttft_ms\": 5, \"ttfts\": [0.1, 0.2, 0.3], \
             \"input_lens\": [10, 11, 12], \"output_lens\": [4, 5, 6]}"
                .into(),
        ),
        _ => None,
    });
    assert!(same("odd.jsonl", odd.as_bytes()));
    // A file whose first line is broken: the same error or the same warnings either way.
    let first_broken = json_lines(1500, |i| (i == 0).then(|| "{\"backend\": ".into()));
    same("first-broken.jsonl", first_broken.as_bytes());
    // Not one JSON document: the same error either way.
    same("none.jsonl", b"{ nope\n{ nope\n");
}

/// `json_lines(n)`'s objects as one JSON list (`[{…},\n{…}]`), or pretty-printed over many
/// lines each.
fn json_list(n: usize, pretty: bool) -> String {
    let items: Vec<String> = json_lines(n, |_| None)
        .lines()
        .map(|l| {
            if pretty {
                l.replace(", ", ",\n    ")
            } else {
                l.to_string()
            }
        })
        .collect();
    format!("[\n{}\n]\n", items.join(",\n"))
}

#[test]
fn a_long_json_list_of_runs_is_read_an_item_at_a_time_as_json_lines_are() {
    // A short list: one document, read the row way, as before.
    assert!(!same("few.json", json_list(1024, false).as_bytes()));
    // A long one: its items a batch at a time into columns (a list of 300,000 such objects
    // took 826 MB parsed whole, 92 MB so), the same records as the row way's whole list.
    for (n, pretty) in [(1025, false), (3001, false), (2000, true)] {
        let list = json_list(n, pretty);
        assert!(same(&format!("runs-{n}.json"), list.as_bytes()), "{n}");
        let lines = json_lines(n, |_| None);
        let a = ingest::read_columnar("runs.json", list.as_bytes()).unwrap();
        let b = ingest::read_columnar("runs.json", lines.as_bytes()).unwrap();
        assert!(
            canonical::to_json(&a.into_ingested().records)
                == canonical::to_json(&b.into_ingested().records),
            "{n}: the list's records differ from its items' as JSON Lines"
        );
    }
    // A long list of canonical records is still one document of records.
    let records = ingest::read("runs.jsonl", json_lines(1500, |_| None).as_bytes())
        .unwrap()
        .records;
    let doc: serde_json::Value =
        serde_json::from_str(&canonical::to_json(&records)).expect("canonical JSON");
    let list = serde_json::to_string(&doc["records"]).expect("list");
    assert!(!same("records.json", list.as_bytes()));
    assert_eq!(
        ingest::read("records.json", list.as_bytes())
            .unwrap()
            .records
            .len(),
        1500
    );
    // A broken item after good ones is skipped with a warning; the others are read.
    let broken = json_list(2000, false).replacen("\"request_rate\": 5,", "\"request_rate\": ,", 1);
    let got = ingest::read_columnar("broken.json", broken.as_bytes())
        .unwrap()
        .into_ingested();
    assert_eq!(got.records.len(), 1999);
    assert!(
        got.warnings
            .iter()
            .any(|w| w.to_string().contains("invalid JSON")),
        "{:?}",
        got.warnings
    );
}
