//! Tables: CSV/TSV, markdown tables (with context from the headings above them), pandas text
//! tables, wide tables with one column group per GPU (`throughput_a100`, `throughput_tesla`),
//! TGI benchmark tables and canonical CSV; and the column mapping (source column → canonical
//! field) that the UI shows and lets the user change.
//!
//! Columns are mapped by name and unit hints: dimension synonyms (`batch`, `bs`, `qps`,
//! `concurrency`, `gpu`, ...), latency families and statistics (`TTFT (ms)`, `ttft_s`,
//! `p99_itl_ms`) with seconds scaled to ms, throughputs by unit (`req/s` → request throughput,
//! `tok/s` → output throughput unless the name says total or input). A throughput without a
//! unit stays `extra.<name>` rather than a guess; latency-per-token averages that are not TPOT
//! (`Average latency per token (ms)`) stay `extra.<name>`; unknown numeric columns become
//! `extra.<name>`, unknown text columns `tag.<name>`; an `Improvement` column is kept as
//! `extra.reported_improvement_pct` (the file's own figure, shown beside the recomputed one);
//! other derived columns (`speedup`, `delta`) and the index are ignored.
//!
//! One job per file: [`detect`] says what kind of table a text holds, [`text_tables`] splits
//! markdown and pandas text, [`delimited`] reads CSV/TSV (with [`plain_rows`] and, natively,
//! `parallel`; [`columnar`] reads them into columns instead of records), [`columns`] maps columns, [`rows`] and [`cells`] turn rows into records,
//! [`tgi`] reads TGI tables; the engine and GPU words are [`crate::ingest::words`]'s.

use std::collections::HashSet;

use super::{Format, IngestError, Ingested, Warning};
use crate::model::canonical;
use crate::model::{Dim, DimKey, Record};

mod cells;
mod columnar;
mod columns;
mod delimited;
mod detect;
mod llama_bench;
#[cfg(not(target_arch = "wasm32"))]
mod parallel;
mod plain_rows;
mod ragged;
mod rows;
mod text_tables;
mod tgi;

pub(crate) use cells::trim_cell;
pub(crate) use columnar::{read_csv_columns, read_markdown_columns};
pub(crate) use columns::auto_mapping;
use columns::merge_mapping;
use delimited::read_csv;
pub(crate) use detect::classify_text;
pub(crate) use llama_bench::{
    read_json as read_llama_bench_json, read_text as read_llama_bench_text,
};
pub(crate) use rows::{rows_to_records, RowsContext};
use text_tables::pandas_table;
pub(crate) use text_tables::{markdown_headers, markdown_tables, split_md_cells};
pub(crate) use tgi::read_tgi;

/// How one source column of a table was mapped.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnMapping {
    /// The column name as written in the file.
    pub column: String,
    /// The canonical field it feeds (`input_len`, `mean_ttft_ms`, `tag.status`,
    /// `extra.throughput`), or `None` when ignored.
    pub target: Option<String>,
    /// What each value is multiplied by to reach the canonical unit (1000 for seconds → ms).
    pub scale: f64,
    /// For wide tables: the GPU this column's values belong to (`A100` for `throughput_a100`).
    pub gpu: Option<String>,
    /// For tables with one column group per engine: the engine this column's values belong
    /// to (`vllm` for `vLLM TTFT`).
    pub engine: Option<String>,
    /// For tables with one column per llama-bench test (`| Backend | pp512 | tg128 |`): the
    /// test this column's values belong to (`pp512`), the `tag.test` of its records.
    pub test: Option<String>,
    /// Why the column was mapped so (or ignored).
    pub reason: String,
}

impl ColumnMapping {
    /// The column group this column's values belong to: its GPU, its engine or its test.
    pub fn group(&self) -> Option<&str> {
        self.gpu
            .as_deref()
            .or(self.engine.as_deref())
            .or(self.test.as_deref())
    }

    fn new(column: &str, target: Option<String>, scale: f64, reason: impl Into<String>) -> Self {
        ColumnMapping {
            column: column.to_string(),
            target,
            scale,
            gpu: None,
            engine: None,
            test: None,
            reason: reason.into(),
        }
    }
}

/// A table of text cells with the context found around it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    pub headers: Vec<String>,
    /// (1-based line, cells)
    pub rows: Vec<(usize, csv::StringRecord)>,
    /// Dimensions from headings above the table: (dimension, value, heading line; 0 when the
    /// table's own columns tell it, as a llama-bench table's engine).
    pub context: Vec<(Dim, String, usize)>,
    /// The heading right above the table when it names no model, GPU or engine
    /// (`### GPU 0 ONLY ###`): (text, heading line).
    pub section: Option<(String, usize)>,
    /// The headings above the table that name no model, GPU or engine, nearest first: the
    /// section and the headings enclosing it (`### Time to First Token (seconds)` over
    /// `#### 70B Models`).
    pub headings: Vec<String>,
}

/// Notes what the mapping did to values: scaled columns, and columns sharing a name.
fn note_mapping(mapping: &[ColumnMapping], out: &mut Ingested) {
    for m in mapping {
        if m.reason.ends_with("(guessed)") {
            super::fields::note(out, format!("column {:?}: {}", m.column, m.reason));
        }
        if m.scale != 1.0 {
            if let Some(target) = &m.target {
                super::fields::note(
                    out,
                    format!(
                        "column {:?} → {target}: values multiplied by {}",
                        m.column, m.scale
                    ),
                );
            }
        }
    }
    note_duplicates(mapping, out);
}

/// One warning per column name that several read columns share (see
/// [`canonical::duplicate_column_warnings`]).
fn note_duplicates(mapping: &[ColumnMapping], out: &mut Ingested) {
    let read = mapping
        .iter()
        .map(|m| m.target.as_ref().map(|_| m.column.as_str()));
    for w in canonical::duplicate_column_warnings(read) {
        super::fields::note(out, w);
    }
}

/// Appends the columns of `mapping` that `out` has no mapping for yet (a column named in two
/// tables keeps its first). The names already present are looked up in a set: a list scan per
/// column made a 100,000-column file quadratic.
pub(super) fn push_mapping(mapping: Vec<ColumnMapping>, out: &mut Ingested) {
    let mut seen: HashSet<String> = out.mapping.iter().map(|m| m.column.clone()).collect();
    for m in mapping {
        if seen.insert(m.column.clone()) {
            out.mapping.push(m);
        }
    }
}

fn table_with_mapping(
    t: &Table,
    user: Option<&[ColumnMapping]>,
    ctx: &RowsContext<'_>,
    out: &mut Ingested,
) {
    let mapping = merge_mapping(auto_mapping(t), user);
    note_mapping(&mapping, out);
    rows_to_records(t, &mapping, ctx, out);
    push_mapping(mapping, out);
}

/// Generic CSV, markdown and pandas text tables.
pub(crate) fn read_table(
    source: &str,
    format: Format,
    text: &str,
    mapping: Option<&[ColumnMapping]>,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    let tables = match format {
        Format::MarkdownTable => markdown_tables(text),
        Format::PandasText => pandas_table(text).into_iter().collect(),
        _ => {
            read_csv(source, text, mapping, out)?;
            Vec::new()
        }
    };
    let sections = distinguishing_sections(&tables);
    let mut copies = 0;
    for (t, section) in tables.iter().zip(&sections) {
        let tags: Vec<(&str, &str)> = section.iter().map(|s| ("section", *s)).collect();
        let ctx = RowsContext {
            context: &t.context,
            tags: &tags,
            at: "",
        };
        let before = out.records.len();
        table_with_mapping(t, mapping, &ctx, out);
        copies += drop_copies(&mut out.records, before);
    }
    if copies > 0 {
        let s = if copies == 1 { "" } else { "s" };
        super::fields::note(
            out,
            format!("{copies} row{s} repeating a row of another table of the file (a summary quoting its sources) read once"),
        );
    }
    if sections.iter().any(Option::is_some) {
        super::fields::note(out, "tag.section from the heading above each table");
    }
    if out.records.is_empty() && out.note.is_none() {
        out.note = Some("no records: no row of the table held a measured value".into());
    }
    Ok(())
}

/// Most pairs of rows [`drop_copies`] compares.
const MAX_COPY_CHECK: usize = 1 << 20;

/// Drops the records from `new` on that copy a record of an earlier table (a comparison
/// table quoting the rows of the tables above it): the same configuration and the same
/// measurements, engines compared in their one spelling, whatever heading or inference
/// named them. One run quoted twice is one run, not two repeats. Returns how many. Tables
/// of more than [`MAX_COPY_CHECK`] rows between them are left as they are (quoting tables
/// are short; the check compares every pair).
fn drop_copies(records: &mut Vec<Record>, new: usize) -> usize {
    if new == 0 || new >= records.len() || new.saturating_mul(records.len() - new) > MAX_COPY_CHECK
    {
        return 0;
    }
    fn engine(r: &Record) -> Option<&str> {
        r.engine
            .as_deref()
            .map(|e| crate::ingest::words::canonical_engine(e).unwrap_or(e))
    }
    fn tags(r: &Record) -> impl Iterator<Item = (&String, &String)> {
        r.tags.iter().filter(|(k, _)| *k != "section")
    }
    let same = |a: &Record, b: &Record| {
        a.metrics == b.metrics
            && engine(a) == engine(b)
            && Dim::ALL.iter().filter(|d| **d != Dim::Engine).all(|d| {
                let k = DimKey::Known(*d);
                a.dim(&k) == b.dim(&k)
            })
            && tags(a).eq(tags(b))
    };
    let mut kept = records.split_off(new);
    let before = kept.len();
    kept.retain(|r| r.metrics.is_empty() || !records.iter().any(|e| same(e, r)));
    let dropped = before - kept.len();
    records.append(&mut kept);
    dropped
}

/// Each table's section heading, kept only where it tells tables apart: when tables of the
/// same columns stand under different headings (llama-bench's `### GPU 0 ONLY ###`, `### DUAL
/// GPU ###`), the heading is the one thing that says which run a row is, and without it their
/// rows would look like repeats of one configuration. Headings over tables of different
/// columns (`### Throughput`, `### Latency`) are left out, so those tables' rows still meet.
fn distinguishing_sections(tables: &[Table]) -> Vec<Option<&str>> {
    // Per set of columns: the first section seen, and whether another one differs from it
    // (one pass, so a file of many small tables stays linear).
    fn section(t: &Table) -> Option<&str> {
        t.section.as_ref().map(|(s, _)| s.as_str())
    }
    let mut seen: std::collections::HashMap<&[String], (Option<&str>, bool)> =
        std::collections::HashMap::new();
    for t in tables {
        let entry = seen
            .entry(t.headers.as_slice())
            .or_insert((section(t), false));
        if entry.0 != section(t) {
            entry.1 = true;
        }
    }
    tables
        .iter()
        .map(|t| {
            let differs = seen.get(t.headers.as_slice()).is_some_and(|e| e.1);
            if differs {
                section(t)
            } else {
                None
            }
        })
        .collect()
}

/// Canonical CSV, through [`canonical::from_csv`].
pub(crate) fn read_canonical_csv(
    source: &str,
    text: &str,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    let decoded = canonical::from_csv(text).map_err(|e| match e {
        canonical::CanonicalError::Csv { line, message } => IngestError::Csv {
            file: source.to_string(),
            line: line as usize,
            message,
        },
        other => IngestError::Shape {
            file: source.to_string(),
            at: "line 1".into(),
            message: other.to_string(),
        },
    })?;
    out.records.extend(decoded.records);
    for w in decoded.warnings {
        out.warnings.push(match w.split_once(": ") {
            Some((place, msg)) => Warning::at(place, msg),
            None => Warning::file(w),
        });
    }
    Ok(())
}
