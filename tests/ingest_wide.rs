//! Wide tables: 100,000 columns read whole and in order, as CSV and as a markdown table, a wide
//! table with many per-GPU column groups melted, and a user mapping naming every column. The
//! readers' per-column steps are linear (a scan of the mapping so far per column made a
//! 100,000-column CSV take 15-23 s); `make bench` prints the time (scripts/bench-ingest-cli.sh),
//! these tests check what is read.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::ingest::{self, Format};
use common::{close, metric};

const COLUMNS: usize = 100_000;

/// The value of column `i` in row `r` (exact in decimal and in `f64` to 1e-9).
fn value(i: usize, r: usize) -> f64 {
    i as f64 + r as f64 / 10.0
}

/// Checks the two records and the mapping of a table whose columns are `c0..c{COLUMNS-1}`.
fn assert_every_column(got: &ingest::Ingested) {
    assert_eq!(got.records.len(), 2, "{:?}", got.warnings);
    assert_eq!(got.mapping.len(), COLUMNS);
    for (i, m) in got.mapping.iter().enumerate() {
        assert_eq!(m.column, format!("c{i}"));
        assert_eq!(m.target.as_deref(), Some(format!("extra.c{i}").as_str()));
    }
    for (r, rec) in got.records.iter().enumerate() {
        assert_eq!(rec.metrics.len(), COLUMNS);
        for i in 0..COLUMNS {
            close(metric(rec, &format!("extra.c{i}")), value(i, r));
        }
    }
}

#[test]
fn a_csv_of_100000_columns_reads_every_column_in_order() {
    let header: Vec<String> = (0..COLUMNS).map(|i| format!("c{i}")).collect();
    let mut text = header.join(",");
    for r in 0..2 {
        let row: Vec<String> = (0..COLUMNS).map(|i| value(i, r).to_string()).collect();
        text.push('\n');
        text.push_str(&row.join(","));
    }
    text.push('\n');
    let got = ingest::read("wide.csv", text.as_bytes()).unwrap();
    assert_eq!(got.format, Format::GenericCsv);
    assert_every_column(&got);

    // The user's mapping names every column; the one changed applies, the rest read as before.
    let mut mapping = got.mapping.clone();
    mapping[COLUMNS - 1].target = Some("mean_ttft_ms".into());
    mapping[0].target = None;
    let again = ingest::read_with_mapping("wide.csv", text.as_bytes(), &mapping).unwrap();
    assert_eq!(again.mapping, mapping);
    let rec = &again.records[1];
    close(metric(rec, "mean_ttft_ms"), value(COLUMNS - 1, 1));
    assert_eq!(metric(rec, "extra.c0"), None);
    close(metric(rec, "extra.c54321"), value(54_321, 1));
    assert_eq!(rec.metrics.len(), COLUMNS - 1);
}

#[test]
fn a_markdown_table_of_100000_columns_reads_every_column_in_order() {
    let mut text = String::from("|");
    for i in 0..COLUMNS {
        text.push_str(&format!(" c{i} |"));
    }
    text.push_str("\n|");
    text.push_str(&"---|".repeat(COLUMNS));
    for r in 0..2 {
        text.push_str("\n|");
        for i in 0..COLUMNS {
            text.push_str(&format!(" {} |", value(i, r)));
        }
    }
    text.push('\n');
    let got = ingest::read("wide.md", text.as_bytes()).unwrap();
    assert_eq!(got.format, Format::MarkdownTable);
    assert_every_column(&got);
}

#[test]
fn many_per_gpu_column_groups_melt_into_one_record_per_gpu() {
    // 20,000 stems, each with an H100 and an A100 column, and one shared by both GPUs.
    const STEMS: usize = 20_000;
    let mut header = vec!["model".to_string(), "shared_h100".to_string()];
    for s in 0..STEMS {
        header.push(format!("m{s}_h100"));
        header.push(format!("m{s}_A100"));
    }
    let mut text = header.join(",");
    for r in 0..2 {
        let mut row = vec![format!("llama-{r}"), "7".to_string()];
        for s in 0..STEMS {
            row.push(value(s, r).to_string());
            row.push(value(s + STEMS, r).to_string());
        }
        text.push('\n');
        text.push_str(&row.join(","));
    }
    text.push('\n');
    let got = ingest::read("wide-gpus.csv", text.as_bytes()).unwrap();
    assert_eq!(got.records.len(), 4, "{:?}", got.warnings);
    let m = |c: &str| got.mapping.iter().find(|m| m.column == c).unwrap();
    assert_eq!(m("m0_h100").gpu.as_deref(), Some("H100"));
    assert_eq!(m("m19999_A100").gpu.as_deref(), Some("A100"));
    assert_eq!(m("shared_h100").gpu, None);
    for r in 0..2 {
        let model = format!("llama-{r}");
        for (gpu, offset) in [("H100", 0), ("A100", STEMS)] {
            let rec = got
                .records
                .iter()
                .find(|x| x.model.as_deref() == Some(&model) && x.gpu.as_deref() == Some(gpu))
                .unwrap_or_else(|| panic!("no {model} {gpu} record"));
            for s in [0, 1, STEMS / 2, STEMS - 1] {
                close(metric(rec, &format!("extra.m{s}")), value(s + offset, r));
            }
            close(metric(rec, "extra.shared"), 7.0);
        }
    }
}
