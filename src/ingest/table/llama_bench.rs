//! llama.cpp's `llama-bench`: its machine-readable outputs (`-o json`, `jsonl`, `csv`, `sql`)
//! made into a [`Table`] of the tool's own field names and read by the same column mapping
//! as its markdown (`-o md`), so every output of one run gives the same records.
//!
//! The mapping ([`map_column`]): the test (`pp512`, `tg128`, `pp512+tg128`, `… @ d4096`;
//! made from `n_prompt`, `n_gen` and `n_depth` where the output has no `test` column, as
//! llama-bench names it) is a dimension, so prompt processing and generation never look
//! alike; `t/s` or `avg_ts` is `extra.tokens_per_s` (higher is better) with its spread
//! (`± 0.41` in markdown, `stddev_ts`) as `extra.tokens_per_s_stddev`; the model
//! (`model_type`), the GPU (`gpu_info`) and the settings (`ngl`/`n_gpu_layers`,
//! `threads`/`n_threads`, `backend`/`backends`, `build_commit` as text) are dimensions or
//! tags; every other column is a setting too, never a metric. The engine is llama.cpp.

use serde_json::Value;

use super::delimited::{csv_reader, next_row};
use super::{table_with_mapping, ColumnMapping, RowsContext, Table};
use crate::ingest::fields::{note, scalar_text};
use crate::ingest::text::snake;
use crate::ingest::{IngestError, Ingested, Warning};
use crate::model::{Dim, MetricKey};

/// The column a run's spread is put in when a markdown `t/s` cell carries it (`43.09 ± 0.41`).
const SPREAD: &str = "stddev_ts";

/// Whether a table of these columns is llama-bench's: its markdown (`backend`, `test`,
/// `t/s`) or its CSV/JSON/SQL field names (`n_prompt`, `n_gen`, `avg_ts`).
pub(crate) fn is_llama_bench(headers: &[impl AsRef<str>]) -> bool {
    let has = |n: &str| headers.iter().any(|h| h.as_ref().trim() == n);
    (has("test") && has("t/s") && has("backend"))
        || (has("avg_ts") && has("n_prompt") && has("n_gen"))
}

/// Whether a table has llama-bench's results under its tests' names (`pp512`, `tg128`):
/// read as llama-bench's own, with the test a dimension.
pub(crate) fn has_test_columns(headers: &[impl AsRef<str>]) -> bool {
    headers.iter().any(|h| is_test_name(h.as_ref()))
}

/// Whether a column name is a llama-bench test (`pp512`, `tg128`, `pp512+tg128`,
/// `pp512 @ d4096`): a table with such columns (`| Backend | pp512 | tg128 |`, results
/// copied into a README) holds one test's tokens a second in each.
pub(crate) fn is_test_name(h: &str) -> bool {
    let h = h.trim();
    let h = h
        .split_once(" @ d")
        .filter(|(_, d)| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
        .map_or(h, |(t, _)| t);
    h.split('+').all(|part| {
        let digits = part.strip_prefix("pp").or_else(|| part.strip_prefix("tg"));
        digits.is_some_and(|d| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// A sweep's columns named by a length alone (`| backend | 1 | 2 | … | 4096 |`) under a
/// heading naming the test kind (`### PP sweep`, `### TG sweep`) are those tests (`pp1` …
/// `pp4096`), as llama-bench names them.
pub(super) fn name_sweep_tests(t: &mut Table) {
    let kind = t
        .section
        .as_ref()
        .and_then(|(s, _)| s.split_whitespace().next())
        .map(str::to_ascii_lowercase)
        .filter(|k| k == "pp" || k == "tg");
    let Some(kind) = kind else { return };
    let length = |h: &str| !h.is_empty() && h.bytes().all(|b| b.is_ascii_digit());
    if t.headers.iter().filter(|h| length(h.trim())).count() < 2 {
        return;
    }
    for h in &mut t.headers {
        if length(h.trim()) {
            *h = format!("{kind}{}", h.trim());
        }
    }
}

/// The name of the column holding the spread of a test column's `mean ± spread` cells.
fn spread_of(test: &str) -> String {
    format!("{test} ±")
}

/// Whether the text is llama-bench's `-o sql`: `INSERT INTO test (...)` statements (the
/// table is `llama_bench` in newer versions).
pub(crate) fn is_sql(text: &str) -> bool {
    text.lines().take(200).any(|l| insert_body(l).is_some()) && text.contains("avg_ts")
}

/// How a llama-bench column maps, given what the generic guess (`guessed`) made of it.
pub(super) fn map_column(h: &str, guessed: ColumnMapping) -> ColumnMapping {
    let to = |target: &str, why: &str| ColumnMapping::new(h, Some(target.to_string()), 1.0, why);
    let name = h.trim();
    let per_test = |test: &str, target: &str, why: &str| ColumnMapping {
        test: Some(test.to_string()),
        ..to(target, &format!("{why} (per test: {test})"))
    };
    if is_test_name(name) {
        return per_test(name, "extra.tokens_per_s", "llama-bench's tokens a second");
    }
    if let Some(test) = name.strip_suffix(" ±").filter(|t| is_test_name(t)) {
        return per_test(
            test,
            "extra.tokens_per_s_stddev",
            "the standard deviation of llama-bench's tokens a second",
        );
    }
    match name.to_ascii_lowercase().as_str() {
        "backend" | "backends" => to(
            "tag.backend",
            "llama-bench's ggml backend (CUDA, Vulkan, CPU), not the engine",
        ),
        "test" => to(
            "tag.test",
            "llama-bench's test (pp512: a 512-token prompt processed, tg128: 128 tokens generated): different work, so runs apart",
        ),
        "t/s" | "avg_ts" => to(
            "extra.tokens_per_s",
            "llama-bench's tokens a second (of the prompt in a pp test, generated in a tg test), the mean of its repetitions",
        ),
        SPREAD => to(
            "extra.tokens_per_s_stddev",
            "the standard deviation of llama-bench's tokens a second over its repetitions",
        ),
        "model_type" => to("model", "llama-bench's model description, as its markdown shows it"),
        "gpu_info" => to("gpu", "llama-bench's GPU"),
        "size" | "params" | "model_size" | "model_n_params" => ColumnMapping::new(
            h,
            Some(format!("tag.{name}")),
            1.0,
            "llama-bench's model file size or parameter count: what the model is, not a measurement",
        ),
        "n_prompt" | "n_gen" | "n_depth" => ColumnMapping::new(
            h,
            None,
            1.0,
            "in the test column (pp512, tg128)",
        ),
        "avg_ns" | "stddev_ns" | "test_time" => ColumnMapping::new(
            h,
            None,
            1.0,
            "the time of one repetition (t/s says it as a rate) or when it ran",
        ),
        // A table of tests' columns may say the memory a run took (`max_mem`): measured.
        n if guessed
            .target
            .as_deref()
            .is_some_and(|t| MetricKey::from_name(t).is_some())
            && !["mem", "vram", "memory"]
                .iter()
                .any(|w| snake(n).split('_').any(|p| p == *w)) =>
        {
            ColumnMapping::new(
                h,
                Some(format!("tag.{}", snake(h))),
                1.0,
                "a llama-bench setting: llama-bench measures only t/s",
            )
        }
        _ => guessed,
    }
}

/// Splits the `mean ± spread` cells of a markdown `t/s` column into `t/s` and [`SPREAD`],
/// and those of each test column (`pp512`: `1900.72 ± 33.74 t/s`) into it and its
/// [`spread_of`] column, where a cell has a spread; a unit after a number is left out.
pub(super) fn split_spread(t: &mut Table) {
    let mut split: Vec<(usize, String)> = Vec::new();
    for (col, h) in t.headers.iter().enumerate() {
        let name = if h.trim() == "t/s" {
            SPREAD.to_string()
        } else if is_test_name(h) {
            spread_of(h.trim())
        } else {
            continue;
        };
        let spread = t
            .rows
            .iter()
            .any(|(_, row)| row.get(col).is_some_and(|c| c.contains('±')));
        if spread && !t.headers.contains(&name) {
            split.push((col, name));
        }
    }
    if split.is_empty() {
        return;
    }
    let width = t.headers.len();
    t.headers.extend(split.iter().map(|(_, n)| n.clone()));
    let number = |s: &str| {
        let s = s.trim();
        s.split_once(' ')
            .filter(|(n, _)| n.trim_matches('*').parse::<f64>().is_ok())
            .map_or(s, |(n, _)| n)
            .to_string()
    };
    for (_, row) in &mut t.rows {
        let mut cells: Vec<String> = row.iter().map(str::to_string).collect();
        cells.resize(width, String::new());
        for (col, _) in &split {
            let cell = std::mem::take(&mut cells[*col]);
            let (mean, spread) = cell.split_once('±').unwrap_or((&cell, ""));
            let (mean, spread) = (number(mean), number(spread));
            cells[*col] = mean;
            cells.push(spread);
        }
        *row = csv::StringRecord::from(cells);
    }
}

/// `-o csv` or `-o sql`.
pub(crate) fn read_text(
    source: &str,
    text: &str,
    mapping: Option<&[ColumnMapping]>,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    let t = if is_sql(text) {
        sql_table(text, out)
    } else {
        csv_table(source, text, out)?
    };
    read_table(t, mapping, out);
    Ok(())
}

/// `-o json` (one array) or `-o jsonl` (one object a line): `(line, document)`s.
pub(crate) fn read_json(docs: &[(usize, Value)], out: &mut Ingested) {
    let mut t = Table::default();
    let mut index: std::collections::HashMap<String, usize> = Default::default();
    for (line, doc) in docs {
        let items = match doc {
            Value::Array(items) => items.as_slice(),
            one => std::slice::from_ref(one),
        };
        for item in items {
            let Some(o) = item.as_object() else {
                out.warnings.push(Warning::line(
                    *line,
                    "not a llama-bench test object, skipped",
                ));
                continue;
            };
            let mut cells: Vec<String> = vec![String::new(); t.headers.len()];
            for (k, v) in o {
                // The per-repetition lists (`samples_ns`, `samples_ts`) are summed up by
                // the mean and spread beside them.
                let Some(text) = scalar_text(v) else { continue };
                let col = *index.entry(k.clone()).or_insert_with(|| {
                    t.headers.push(k.clone());
                    t.headers.len() - 1
                });
                if cells.len() <= col {
                    cells.resize(col + 1, String::new());
                }
                cells[col] = text;
            }
            t.rows.push((*line, csv::StringRecord::from(cells)));
        }
    }
    read_table(t, None, out);
}

fn csv_table(source: &str, text: &str, out: &mut Ingested) -> Result<Table, IngestError> {
    let mut rdr = csv_reader(text, b',');
    let mut rec = csv::StringRecord::new();
    let mut t = Table::default();
    if next_row(&mut rdr, &mut rec, source, false, &mut out.warnings)?.is_some() {
        t.headers = rec.iter().map(|h| h.trim().to_string()).collect();
    }
    while let Some(line) = next_row(&mut rdr, &mut rec, source, true, &mut out.warnings)? {
        // A repeated header (outputs of two runs appended) is not a row.
        if rec.iter().zip(&t.headers).all(|(c, h)| c.trim() == h) {
            continue;
        }
        if rec.len() == t.headers.len() {
            t.rows.push((line, rec.clone()));
            continue;
        }
        let said = format!("{} cells under {} column names", rec.len(), t.headers.len());
        match tail_aligned(&t.headers, &rec) {
            Some((row, empty)) => {
                let empty = if empty.is_empty() {
                    "cells over".to_string()
                } else {
                    format!("no value for {}", empty.join(", "))
                };
                out.warnings.push(Warning::line(
                    line,
                    format!("{said}: the test and its results read from the row's end, where llama-bench writes them ({empty})"),
                ));
                t.rows.push((line, csv::StringRecord::from(row)));
            }
            None => {
                out.warnings.push(Warning::line(
                    line,
                    format!("{said}: values may stand under the wrong names"),
                ));
                t.rows.push((line, rec.clone()));
            }
        }
    }
    Ok(t)
}

/// A row whose cells do not match the header's names (a header from another llama-bench
/// version, or an edited file), aligned as llama-bench writes its fields: the settings
/// first, each version adding its new ones among them, and the test (`n_prompt` onwards:
/// `n_gen`, `n_depth`, `test_time`, the timings) always last. So the names from `n_prompt`
/// take the row's last cells and the settings its first; the settings' names left without
/// a cell (or the cells left over) are in the middle. Only when the cell that falls under
/// `test_time` is a date and time (`2025-04-24T11:57:09Z`): otherwise `None`, the row is
/// not llama-bench's as its header says. Returns the row and the names left empty.
fn tail_aligned<'a>(
    headers: &'a [String],
    rec: &csv::StringRecord,
) -> Option<(Vec<String>, Vec<&'a str>)> {
    let at = |n: &str| headers.iter().position(|h| h == n);
    let (test, time) = (at("n_prompt")?, at("test_time")?);
    let tail = headers.len().checked_sub(test)?;
    let from_end = headers.len().checked_sub(time)?;
    let when = rec.get(rec.len().checked_sub(from_end)?)?.trim();
    let b = when.as_bytes();
    let dated = b.len() >= 19
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[..4].iter().all(u8::is_ascii_digit);
    if !dated {
        return None;
    }
    let left = test.min(rec.len().checked_sub(tail)?);
    let mut row: Vec<String> = rec.iter().take(left).map(str::to_string).collect();
    row.resize(test, String::new());
    row.extend(rec.iter().skip(rec.len() - tail).map(str::to_string));
    let empty = headers[left..test].iter().map(String::as_str).collect();
    Some((row, empty))
}

/// `INSERT INTO test (a, b) VALUES ('1', '2');` lines; the `CREATE TABLE` before them is
/// skipped.
fn sql_table(text: &str, out: &mut Ingested) -> Table {
    let mut t = Table::default();
    for (i, line) in text.lines().enumerate() {
        let Some(rest) = insert_body(line) else {
            continue;
        };
        let parsed = rest.split_once(") VALUES (").and_then(|(names, values)| {
            let names: Vec<String> = names.split(',').map(|n| n.trim().to_string()).collect();
            let values = sql_values(values.trim_end().trim_end_matches(';').strip_suffix(')')?)?;
            (names.len() == values.len()).then_some((names, values))
        });
        let Some((names, values)) = parsed else {
            out.warnings
                .push(Warning::line(i + 1, "unreadable INSERT statement, skipped"));
            continue;
        };
        if t.headers.is_empty() {
            t.headers = names;
        } else if t.headers != names {
            out.warnings.push(Warning::line(
                i + 1,
                "columns differ from the first INSERT's, skipped",
            ));
            continue;
        }
        t.rows.push((i + 1, csv::StringRecord::from(values)));
    }
    t
}

/// What follows `INSERT INTO <table> (` in a line that starts so.
fn insert_body(line: &str) -> Option<&str> {
    let rest = line.trim_start().strip_prefix("INSERT INTO ")?;
    let (table, body) = rest.split_once(" (")?;
    (!table.is_empty() && !table.contains(' ')).then_some(body)
}

/// `'a', '1', 'it''s'` → its values; `None` when a quote is left open.
fn sql_values(s: &str) -> Option<Vec<String>> {
    let mut values = Vec::new();
    let mut chars = s.chars().peekable();
    loop {
        while chars.peek().is_some_and(|c| c.is_whitespace()) {
            chars.next();
        }
        let mut v = String::new();
        if chars.peek() == Some(&'\'') {
            chars.next();
            loop {
                match chars.next()? {
                    '\'' if chars.peek() == Some(&'\'') => {
                        chars.next();
                        v.push('\'');
                    }
                    '\'' => break,
                    c => v.push(c),
                }
            }
            while chars.peek().is_some_and(|c| *c != ',') {
                chars.next();
            }
        } else {
            while let Some(c) = chars.next_if(|c| *c != ',') {
                v.push(c);
            }
            v = v.trim().to_string();
        }
        values.push(v);
        if chars.next().is_none() {
            return Some(values);
        }
    }
}

/// Adds the test column where the output has none, then reads the rows.
fn read_table(mut t: Table, mapping: Option<&[ColumnMapping]>, out: &mut Ingested) {
    if !t.headers.iter().any(|h| h == "test") {
        let col = |n: &str| t.headers.iter().position(|h| h == n);
        let (p, g, d) = (col("n_prompt"), col("n_gen"), col("n_depth"));
        t.headers.push("test".to_string());
        let width = t.headers.len() - 1;
        for (_, row) in &mut t.rows {
            let num = |c: Option<usize>| {
                c.and_then(|c| row.get(c))
                    .and_then(|v| v.trim().parse::<u64>().ok())
                    .unwrap_or(0)
            };
            let (p, g, d) = (num(p), num(g), num(d));
            let mut test = match (p, g) {
                (p, 0) => format!("pp{p}"),
                (0, g) => format!("tg{g}"),
                (p, g) => format!("pp{p}+tg{g}"),
            };
            if d > 0 {
                test.push_str(&format!(" @ d{d}"));
            }
            let mut cells: Vec<String> = row.iter().map(str::to_string).collect();
            cells.resize(width, String::new());
            cells.push(test);
            *row = csv::StringRecord::from(cells);
        }
        note(
            out,
            "tag.test made from n_prompt, n_gen and n_depth, as llama-bench names tests",
        );
    }
    t.context.push((Dim::Engine, "llama.cpp".to_string(), 0));
    let ctx = RowsContext {
        context: &t.context,
        tags: &[],
        at: "",
    };
    table_with_mapping(&t, mapping, &ctx, out);
    if out.records.is_empty() && out.note.is_none() {
        out.note = Some("no records: no llama-bench test with a t/s".into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::{read, Format};
    use crate::model::Record;

    fn tag<'a>(r: &'a Record, k: &str) -> Option<&'a str> {
        r.tags.get(k).map(String::as_str)
    }

    #[test]
    fn a_csv_keeps_a_hex_build_commit_as_text_and_the_tests_apart() {
        let csv = "\"build_commit\",\"n_threads\",\"model_type\",\"n_prompt\",\"n_gen\",\"avg_ts\",\"stddev_ts\"\n\
\"0c1e570\",\"8\",\"llama 7B Q4_0\",\"512\",\"0\",\"2410.97\",\"11.16\"\n\
\"0c1e570\",\"8\",\"llama 7B Q4_0\",\"0\",\"128\",\"43.09\",\"0.41\"\n\
\"1e5\",\"8\",\"llama 7B Q4_0\",\"512\",\"128\",\"449.72\",\"1.27\"\n";
        let got = read("bench.csv", csv.as_bytes()).unwrap();
        assert_eq!(got.format, Format::LlamaBench);
        let tests: Vec<_> = got
            .records
            .iter()
            .map(|r| tag(r, "test").unwrap())
            .collect();
        assert_eq!(tests, ["pp512", "tg128", "pp512+tg128"]);
        let r = &got.records[0];
        assert_eq!(tag(r, "build_commit"), Some("0c1e570"));
        assert_eq!(tag(&got.records[2], "build_commit"), Some("1e5"));
        assert_eq!(tag(r, "threads"), Some("8"));
        assert_eq!(r.model.as_deref(), Some("llama 7B Q4_0"));
        assert_eq!(r.engine.as_deref(), Some("llama.cpp"));
        let m = |r: &Record, k: &str| r.metric(&MetricKey::Extra(k.into()));
        assert_eq!(m(r, "tokens_per_s"), Some(2410.97));
        assert_eq!(m(r, "tokens_per_s_stddev"), Some(11.16));
        assert_eq!(r.metrics.len(), 2);
    }

    #[test]
    fn a_short_row_keeps_its_test_and_results_at_the_end_when_its_time_says_so() {
        let csv = "build_commit,n_threads,use_mmap,fit_min_ctx,n_prompt,n_gen,test_time,avg_ts,stddev_ts\n\
\"0c1e570\",\"8\",\"1\",\"512\",\"0\",\"2025-04-24T11:57:09Z\",\"7285.7\",\"100.1\"\n\
\"0c1e570\",\"8\",\"1\",\"0\",\"128\",\"not a time\",\"119.9\",\"0.4\"\n";
        let got = read("bench.csv", csv.as_bytes()).unwrap();
        let r = &got.records[0];
        assert_eq!(tag(r, "test"), Some("pp512"));
        assert_eq!(tag(r, "threads"), Some("8"));
        assert_eq!(
            r.metric(&MetricKey::Extra("tokens_per_s".into())),
            Some(7285.7)
        );
        let said: Vec<String> = got.warnings.iter().map(|w| w.to_string()).collect();
        assert!(said.contains(&"line 2: 8 cells under 9 column names: the test and its results read from the row's end, where llama-bench writes them (no value for fit_min_ctx)".to_string()), "{said:?}");
        // Without a time where the test's time should be, the row is left as it stands.
        assert!(
            said.contains(
                &"line 3: 8 cells under 9 column names: values may stand under the wrong names"
                    .to_string()
            ),
            "{said:?}"
        );
        let headers: Vec<String> = ["a", "n_prompt", "test_time", "avg_ts"]
            .map(String::from)
            .into();
        let long = csv::StringRecord::from(vec!["x", "y", "512", "2025-04-24T11:57:09Z", "9.5"]);
        let (row, empty) = tail_aligned(&headers, &long).unwrap();
        assert_eq!(row, ["x", "512", "2025-04-24T11:57:09Z", "9.5"]);
        assert!(empty.is_empty());
        for n in 0..4 {
            let short = csv::StringRecord::from(vec!["2025-04-24T11:57:09Z"; n]);
            let _ = tail_aligned(&headers, &short);
        }
    }

    #[test]
    fn sql_and_bad_rows_never_panic_and_warnings_name_the_line() {
        let sql = "CREATE TABLE IF NOT EXISTS test (\n  build_commit TEXT,\n  avg_ts REAL\n);\n\n\
INSERT INTO test (build_commit, n_prompt, n_gen, avg_ts, stddev_ts) VALUES ('abc', '0', '128', '43.5', '0.5');\n\
INSERT INTO test (build_commit, n_prompt, n_gen, avg_ts, stddev_ts) VALUES ('abc', '512', '0', '2000\n";
        let got = read("b.sql", sql.as_bytes()).unwrap();
        assert_eq!(got.format, Format::LlamaBench);
        assert_eq!(got.records.len(), 1);
        assert_eq!(tag(&got.records[0], "test"), Some("tg128"));
        assert!(got
            .warnings
            .iter()
            .any(|w| w.to_string() == "line 7: unreadable INSERT statement, skipped"));
        assert_eq!(sql_values("'it''s', 3 ,'x'").unwrap(), ["it's", "3", "x"]);
        assert_eq!(sql_values("'open"), None);
        for cut in 0..sql.len() {
            let _ = read("b.sql", &sql.as_bytes()[..cut]);
        }
    }

    #[test]
    fn jsonl_with_depth_and_a_stray_line() {
        let jsonl = "{\"n_prompt\": 0, \"n_gen\": 32, \"n_depth\": 4096, \"avg_ts\": 20.5, \"stddev_ts\": 0.1, \"samples_ts\": [20.4, 20.6], \"gpu_info\": \"Apple M2\"}\n\
[1, 2]\n";
        let got = read("b.jsonl", jsonl.as_bytes()).unwrap();
        assert_eq!(got.format, Format::LlamaBench);
        let r = &got.records[0];
        assert_eq!(tag(r, "test"), Some("tg32 @ d4096"));
        assert_eq!(r.gpu.as_deref(), Some("Apple M2"));
        assert!(got
            .warnings
            .iter()
            .any(|w| w.to_string().starts_with("line 2: ")));
    }
}
