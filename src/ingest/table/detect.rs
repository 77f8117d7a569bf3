//! What kind of table a text holds: vLLM performance-suite or TGI markdown tables, other
//! markdown tables, genai-perf or canonical CSV, any other delimited table, a pandas printout.

use super::delimited::csv_delimiter;
use super::{markdown_headers, pandas_table, Table};
use crate::ingest::Format;
use crate::model::canonical;

/// What kind of table the text holds, if any.
///
/// `may_have_tables`: false when the caller knows the text has no `|` (then no line is split
/// looking for markdown tables).
pub(crate) fn classify_text(text: &str, may_have_tables: bool) -> Option<(Format, String)> {
    // A markdown table needs a `|`; without one, skip splitting every line of a large CSV.
    let md = if may_have_tables && memchr::memchr(b'|', text.as_bytes()).is_some() {
        markdown_headers(text)
    } else {
        Vec::new()
    };
    if let Some(first) = md.first() {
        let has = |t: &Table, name: &str| t.headers.iter().any(|h| h.eq_ignore_ascii_case(name));
        if md.iter().any(|t| has(t, "Test name")) {
            return Some((
                Format::VllmPerfSuite,
                "markdown tables with a \"Test name\" column".into(),
            ));
        }
        if md.iter().any(|t| has(t, "Step") && has(t, "Batch Size")) {
            return Some((
                Format::TgiBenchmark,
                "markdown tables with \"Step\" and \"Batch Size\"".into(),
            ));
        }
        return Some((
            Format::MarkdownTable,
            format!(
                "{} markdown table(s), first with {} columns",
                md.len(),
                first.headers.len()
            ),
        ));
    }
    if super::llama_bench::is_sql(text) {
        return Some((
            Format::LlamaBench,
            "llama-bench's SQL (\"INSERT INTO test\" with \"avg_ts\")".into(),
        ));
    }
    let header = text.lines().find(|l| !l.trim().is_empty())?.trim();
    if let Some(d) = csv_delimiter(header) {
        let first = header
            .split(d as char)
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches('"');
        if first == "Metric" {
            return Some((
                Format::GenaiPerfCsv,
                "CSV starting with a \"Metric\" column".into(),
            ));
        }
        let cols: Vec<&str> = header
            .split(d as char)
            .map(|c| c.trim().trim_matches('"'))
            .collect();
        if canonical::header_is_canonical(&cols) {
            return Some((
                Format::CanonicalCsv,
                "CSV with benchlens column names".into(),
            ));
        }
        if super::llama_bench::is_llama_bench(&cols) {
            return Some((
                Format::LlamaBench,
                "CSV with llama-bench's \"n_prompt\", \"n_gen\" and \"avg_ts\"".into(),
            ));
        }
        let data_lines = text
            .lines()
            .skip(1)
            .filter(|l| l.contains(d as char))
            .take(3)
            .count();
        if data_lines > 0 && cols.len() >= 2 {
            return Some((
                Format::GenericCsv,
                format!("{}-separated table with {} columns", d as char, cols.len()),
            ));
        }
    }
    if pandas_table(text).is_some() {
        return Some((
            Format::PandasText,
            "fixed-width text table with an index column".into(),
        ));
    }
    None
}
