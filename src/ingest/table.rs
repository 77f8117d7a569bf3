//! Tables: CSV/TSV, markdown tables (with context from headings), pandas text tables, wide
//! tables with one column group per GPU, TGI benchmark tables, canonical CSV; and the column
//! mapping (source column → canonical field) that the UI shows and lets the user change.

use super::{Format, IngestError, Ingested};

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
    /// Why the column was mapped so (or ignored).
    pub reason: String,
}

/// What kind of table the text holds, if any.
pub(crate) fn classify_text(_text: &str) -> Option<(Format, String)> {
    None
}

/// TGI benchmark tables.
pub(crate) fn read_tgi(_text: &str, _out: &mut Ingested) {}

/// Canonical CSV.
pub(crate) fn read_canonical_csv(
    _source: &str,
    _text: &str,
    _out: &mut Ingested,
) -> Result<(), IngestError> {
    Ok(())
}

/// Generic CSV, markdown and pandas text tables.
pub(crate) fn read_table(
    _source: &str,
    _format: Format,
    _text: &str,
    _mapping: Option<&[ColumnMapping]>,
    _out: &mut Ingested,
) -> Result<(), IngestError> {
    Ok(())
}
