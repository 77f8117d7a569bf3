//! vLLM performance-suite results (`.buildkite/performance-benchmarks/`, formerly
//! `nightly-benchmarks/`): the markdown tables of `benchmark_results.md`, the column-dict JSON
//! `{"latency": {...}, "throughput": {...}, "serving": {...}}` it embeds (pandas
//! `{"col": {"0": v}}`), the `benchmark_results.json` list of display-name records, and the
//! unfilled description template (no numbers: zero records and a note).
//!
//! Columns go through the generic table mapping with the suite's own meanings on top:
//! `Tput (tok/s)` counts all tokens (total token throughput), bare `Median`/`P99` are TPOT,
//! latency-test latencies are end-to-end. The GPU cell `8xH100` gives gpu H100 and gpu_count
//! 8; test names (`serving_llama8B_tp1_sharegpt_qps_4`) give inferred dimensions.

use serde_json::Value;

use super::table::{
    auto_mapping, markdown_tables, rows_to_records, ColumnMapping, RowsContext, Table,
};
use super::{IngestError, Ingested, Warning};
use crate::model::Dim;

/// Whether the text is the suite's description template with its placeholders unfilled.
pub(crate) fn is_template(text: &str) -> bool {
    // Every placeholder opens with a brace; most files of other kinds (CSV) have none.
    memchr::memchr(b'{', text.as_bytes()).is_some()
        && (text.contains("{latency_tests_markdown_table}")
            || text.contains("{serving_tests_markdown_table}")
            || text.contains("{throughput_tests_markdown_table}")
            || text.contains("{benchmarking_results_in_json_string}"))
}

const ENGINE_CONTEXT: &[(Dim, String, usize)] = &[];

fn suite_mapping(t: &Table, user: Option<&[ColumnMapping]>) -> Vec<ColumnMapping> {
    let mut mapping = auto_mapping(t);
    for m in &mut mapping {
        let target = match m.column.trim() {
            "Tput (tok/s)" => Some("total_token_throughput"),
            "Median" => Some("median_tpot_ms"),
            "P99" => Some("p99_tpot_ms"),
            "Mean" => Some("mean_tpot_ms"),
            "Total # of tokens" => Some("extra.total_num_tokens"),
            _ => None,
        };
        if let Some(tg) = target {
            m.target = Some(tg.to_string());
            m.scale = 1.0;
            m.reason = "vLLM performance-suite column".into();
        }
        if let Some(u) = user.and_then(|u| u.iter().find(|u| u.column == m.column)) {
            *m = u.clone();
        }
    }
    mapping
}

fn read_table(t: &Table, user: Option<&[ColumnMapping]>, at: &str, out: &mut Ingested) {
    let mapping = suite_mapping(t, user);
    let before = out.records.len();
    let ctx = RowsContext {
        context: ENGINE_CONTEXT,
        tags: &[],
        at,
    };
    rows_to_records(t, &mapping, &ctx, out);
    for r in &mut out.records[before..] {
        if r.engine.is_none() {
            r.engine = Some("vllm".into());
            r.inferred
                .insert("engine".into(), "vLLM performance suite".into());
        }
    }
    super::table::push_mapping(mapping, out);
}

/// Reads the suite's markdown report (or notes that it is the empty template).
pub(crate) fn read_text(
    _source: &str,
    text: &str,
    mapping: Option<&[ColumnMapping]>,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    if is_template(text) {
        out.note = Some(
            "no records: this is the vLLM performance-suite template; it holds no numbers".into(),
        );
        return Ok(());
    }
    for t in markdown_tables(text) {
        if t.headers.iter().any(|h| h == "Test name") {
            read_table(&t, mapping, "", out);
        }
    }
    Ok(())
}

fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// A pandas column dict `{"col": {"0": v, "1": v}}` as a table.
fn column_dict_table(section: &serde_json::Map<String, Value>) -> Table {
    let mut t = Table {
        headers: section.keys().cloned().collect(),
        ..Table::default()
    };
    let mut index: Vec<&String> = Vec::new();
    for col in section.values() {
        if let Some(o) = col.as_object() {
            for k in o.keys() {
                if !index.contains(&k) {
                    index.push(k);
                }
            }
        }
    }
    for k in index {
        let cells: Vec<String> = section
            .values()
            .map(|col| col.get(k.as_str()).map(cell).unwrap_or_default())
            .collect();
        t.rows.push((0, csv::StringRecord::from(cells)));
    }
    t
}

/// Reads the column-dict JSON or a `benchmark_results.json` list.
pub(crate) fn read_json(v: &Value, at: &str, out: &mut Ingested) {
    match v {
        Value::Object(o) => {
            for (name, section) in o {
                let place = super::fields::place(at, name);
                match section.as_object() {
                    Some(s) if s.values().all(Value::is_object) => {
                        let t = column_dict_table(s);
                        read_table(&t, None, &place, out);
                    }
                    _ => out
                        .warnings
                        .push(Warning::at(place, "not a column dict, ignored")),
                }
            }
        }
        Value::Array(items) => {
            let mut t = Table::default();
            for item in items {
                if let Some(o) = item.as_object() {
                    for k in o.keys() {
                        if !t.headers.contains(k) {
                            t.headers.push(k.clone());
                        }
                    }
                }
            }
            for (i, item) in items.iter().enumerate() {
                match item.as_object() {
                    Some(o) => {
                        let cells: Vec<String> = t
                            .headers
                            .iter()
                            .map(|h| o.get(h).map(cell).unwrap_or_default())
                            .collect();
                        t.rows.push((0, csv::StringRecord::from(cells)));
                    }
                    None => out.warnings.push(Warning::at(
                        super::fields::place(at, &format!("[{i}]")),
                        "not an object, skipped",
                    )),
                }
            }
            read_table(&t, None, if at.is_empty() { "records" } else { at }, out);
        }
        _ => out.warnings.push(Warning::at(
            if at.is_empty() { "document" } else { at },
            "not a performance-suite document, ignored",
        )),
    }
}
