//! `benchlens inspect FILE...`: prints, per file, the detected format, the record count, each
//! dimension with its distinct values, the metrics found, the column mapping of tables and
//! the warnings; per-request files of `benchlens run` get a summary of their own
//! ([`super::inspect_requests`]), read in one pass. Unreadable files get one `error:` line on stderr each
//! ([`super::error::print_error`]) and exit code 1.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::process::ExitCode;

use clap::Args;

use super::convert::ingest_input;
use super::error::print_error;
use crate::ingest::Ingested;
use crate::model::{Dim, DimKey, DimValue, MetricKey};

/// Arguments of `benchlens inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// Result files to inspect (`-` reads stdin).
    #[arg(required = true)]
    pub files: Vec<String>,
}

const MAX_VALUES: usize = 12;

/// The report for one file, as printed.
pub fn describe(path: &str, got: &Ingested) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{path}: {} ({}), {} record{}",
        got.format.label(),
        got.format.name(),
        got.records.len(),
        if got.records.len() == 1 { "" } else { "s" }
    );
    if let Some(note) = &got.note {
        let _ = writeln!(s, "  note: {note}");
    }
    let mut dims: BTreeMap<DimKey, BTreeSet<DimValue>> = BTreeMap::new();
    let mut metrics: BTreeMap<MetricKey, usize> = BTreeMap::new();
    let mut requests = 0usize;
    for r in &got.records {
        for (k, v) in r.dims() {
            if matches!(k, DimKey::Known(Dim::Source | Dim::Format)) {
                continue;
            }
            dims.entry(k).or_default().insert(v);
        }
        for k in r.metrics.keys() {
            *metrics.entry(k.clone()).or_default() += 1;
        }
        requests += r.requests.len();
    }
    if !dims.is_empty() {
        let _ = writeln!(s, "  dimensions:");
        for (k, values) in &dims {
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
    if !metrics.is_empty() {
        let names: Vec<String> = metrics.keys().map(MetricKey::name).collect();
        let _ = writeln!(s, "  metrics: {}", names.join(", "));
    }
    if requests > 0 {
        let _ = writeln!(s, "  per-request detail: {requests} requests");
    }
    if !got.mapping.is_empty() {
        let _ = writeln!(s, "  columns:");
        for m in &got.mapping {
            let target = m.target.as_deref().unwrap_or("(ignored)");
            let gpu = m
                .gpu
                .as_deref()
                .map(|g| format!(" [gpu {g}]"))
                .unwrap_or_default();
            let scale = if m.scale == 1.0 {
                String::new()
            } else {
                format!(" ×{}", m.scale)
            };
            let _ = writeln!(s, "    {} → {target}{scale}{gpu}: {}", m.column, m.reason);
        }
    }
    if !got.warnings.is_empty() {
        let _ = writeln!(s, "  warnings ({}):", got.warnings.len());
        for w in &got.warnings {
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
        match ingest_input(path) {
            Ok(got) => crate::stdout::print(&describe(path, &got)),
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
