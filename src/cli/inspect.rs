//! `benchlens inspect FILE...`: prints, per file, the detected format, the record count, each
//! dimension with its distinct values, the metrics found, the column mapping of tables and
//! the warnings. Files read into columns ([`crate::ingest::read_columnar`]) are described from the
//! columns' dictionaries, without a record being built; per-request files of `benchlens run` get
//! a summary of their own ([`super::inspect_requests`]), read in one pass. Unreadable files get
//! one `error:` line on stderr each
//! ([`super::error::print_error`]) and exit code 1.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Args;

use super::convert::ingest_contents;
use super::error::print_error;
use crate::ingest::{ColumnMapping, Contents, Format, Ingested, Warning};
use crate::model::{Dim, DimKey, DimValue, MetricKey};

/// Arguments of `benchlens inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Result files to inspect (`-` reads stdin).
    #[arg(required = true)]
    pub files: Vec<String>,
}

const MAX_VALUES: usize = 12;

/// What the report says of a file's rows.
#[derive(Default)]
struct Summary {
    records: usize,
    dims: BTreeMap<DimKey, BTreeSet<DimValue>>,
    metrics: BTreeSet<MetricKey>,
    requests: usize,
}

/// The report for one file, as printed.
pub fn describe(path: &str, got: &Ingested) -> String {
    let mut sum = Summary {
        records: got.records.len(),
        ..Summary::default()
    };
    for r in &got.records {
        for (k, v) in r.dims() {
            if matches!(k, DimKey::Known(Dim::Source | Dim::Format)) {
                continue;
            }
            sum.dims.entry(k).or_default().insert(v);
        }
        for k in r.metrics.keys() {
            if !sum.metrics.contains(k) {
                sum.metrics.insert(k.clone());
            }
        }
        sum.requests += r.requests.len();
    }
    report(
        path,
        got.format,
        &sum,
        got.note.as_deref(),
        &got.mapping,
        &got.warnings,
    )
}

/// The report for one file read by [`crate::ingest::read_columnar`]: the same text [`describe`]
/// gives for its records.
pub fn describe_contents(path: &str, got: &Contents) -> String {
    let c = match got {
        Contents::Records(r) => return describe(path, r),
        Contents::Columns(c) => c,
    };
    let cols = &c.columns;
    let mut sum = Summary {
        records: cols.len(),
        requests: cols.requests().total(),
        ..Summary::default()
    };
    for col in cols.dims() {
        if matches!(col.key, DimKey::Known(Dim::Source | Dim::Format)) {
            continue;
        }
        let values: BTreeSet<DimValue> = col.data.distinct().into_iter().collect();
        if !values.is_empty() {
            sum.dims.insert(col.key.clone(), values);
        }
    }
    for m in cols.metrics() {
        if m.count() > 0 {
            sum.metrics.insert(m.key.clone());
        }
    }
    report(
        path,
        c.format,
        &sum,
        c.note.as_deref(),
        &c.mapping,
        &c.warnings,
    )
}

fn report(
    path: &str,
    format: Format,
    sum: &Summary,
    note: Option<&str>,
    mapping: &[ColumnMapping],
    warnings: &[Warning],
) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{path}: {} ({}), {} record{}",
        format.label(),
        format.name(),
        sum.records,
        if sum.records == 1 { "" } else { "s" }
    );
    if let Some(note) = note {
        let _ = writeln!(s, "  note: {note}");
    }
    if !sum.dims.is_empty() {
        let _ = writeln!(s, "  dimensions:");
        for (k, values) in &sum.dims {
            let shown: Vec<String> = values
                .iter()
                .take(MAX_VALUES)
                .map(|v| v.to_string())
                .collect();
            let more = values.len().saturating_sub(MAX_VALUES);
            let _ = write!(s, "    {}: {}", k.name(), shown.join(", "));
            if more > 0 {
                let _ = write!(s, ", … ({more} more)");
            }
            s.push('\n');
        }
    }
    if !sum.metrics.is_empty() {
        let names: Vec<String> = sum.metrics.iter().map(MetricKey::name).collect();
        let _ = writeln!(s, "  metrics: {}", names.join(", "));
    }
    if sum.requests > 0 {
        let _ = writeln!(s, "  per-request detail: {} requests", sum.requests);
    }
    if !mapping.is_empty() {
        let _ = writeln!(s, "  columns:");
        for m in mapping {
            let target = m.target.as_deref().unwrap_or("(ignored)");
            let gpu = match (&m.gpu, &m.engine) {
                (Some(g), _) => format!(" [gpu {g}]"),
                (None, Some(e)) => format!(" [engine {e}]"),
                (None, None) => String::new(),
            };
            let scale = if m.scale == 1.0 {
                String::new()
            } else {
                format!(" ×{}", m.scale)
            };
            let _ = writeln!(s, "    {} → {target}{scale}{gpu}: {}", m.column, m.reason);
        }
    }
    if !warnings.is_empty() {
        let _ = writeln!(s, "  warnings ({}):", warnings.len());
        for w in warnings {
            let _ = writeln!(s, "    {w}");
        }
    }
    s
}

/// Runs `benchlens inspect`.
pub fn run(args: &InspectArgs) -> ExitCode {
    let mut failed = 0;
    for path in &args.files {
        if crate::stdout::closed() {
            break;
        }
        match super::inspect_requests::inspect_if_requests(path) {
            Some(Ok(text)) => {
                crate::stdout::print(&text);
                continue;
            }
            Some(Err(e)) => {
                print_error(&e);
                failed += 1;
                continue;
            }
            None => {}
        }
        match ingest_contents(path) {
            Ok(got) => crate::stdout::print(&describe_contents(path, &got)),
            Err(e) => {
                print_error(&e);
                failed += 1;
            }
        }
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
