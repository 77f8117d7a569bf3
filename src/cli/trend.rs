//! `benchlens compare --trend DIR`: every result file under DIR as one history, each
//! configuration's metric over its dates, and the configurations whose latest point sits at a
//! regressed level (a change point beyond the measured noise, worse per the metric's
//! direction). For CI on a repository of nightly results: exit 1 when there is one.
//!
//! The rule is [`crate::analysis::trend`]'s, the same as the explorer's trends view.

use std::path::Path;
use std::process::ExitCode;

use super::compare_args::{default_metric, render, CompareArgs, TableFormat};
use super::convert::read_all;
use super::error::CliError;
use crate::analysis::trend::{trends, TrendReport, TrendSpec};
use crate::model::{DimKey, MetricKey};

/// Runs the trend check on `dir`: `Ok(1)` when some configuration's latest point is a
/// regression, an error (exit 2) when DIR has no readable dated results.
pub fn run(
    dir: &Path,
    args: &CompareArgs,
    ignore: std::collections::BTreeSet<DimKey>,
) -> Result<ExitCode, CliError> {
    let found = super::results_dir::result_files(dir)?;
    for w in &found.warnings {
        eprintln!("warning: {w}");
    }
    let files = found.files;
    if files.is_empty() {
        return Err(CliError::NoResultFiles {
            dir: dir.display().to_string(),
        });
    }
    let (records, failed) = read_all(&files, args.verbose, true);
    if records.is_empty() {
        return Err(CliError::UnreadableInputs {
            count: failed.max(1),
        });
    }
    let metrics: Vec<MetricKey> = if args.metric.iter().any(|m| m == "all") {
        Vec::new()
    } else if args.metric.is_empty() {
        vec![default_metric(&records).ok_or(CliError::NoMetrics)?]
    } else {
        args.metric
            .iter()
            .map(|n| {
                MetricKey::from_name(n).ok_or_else(|| CliError::UnknownMetric { name: n.clone() })
            })
            .collect::<Result<_, _>>()?
    };
    let spec = TrendSpec {
        metrics,
        ignore,
        threshold_sigma: args.noise_threshold,
    };
    let report = trends(&records, &spec)?;
    crate::stdout::print(&output(&report, files.len(), failed, args.format));
    let regressions = report.latest_regressions().len();
    if regressions == 0 {
        return Ok(ExitCode::SUCCESS);
    }
    // A finding, not a failure to run: the one line every error has, exit code 1.
    eprintln!(
        "error: {regressions} series {} at a regressed level",
        if regressions == 1 { "ends" } else { "end" }
    );
    Ok(ExitCode::FAILURE)
}

fn output(r: &TrendReport, files: usize, failed: usize, format: TableFormat) -> String {
    let table = r.regressions_table(false);
    let meta = serde_json::json!({
        "files": files,
        "unreadable_files": failed,
        "series": r.series.len(),
        "dates": r.dates,
        "threshold_sigma": r.threshold_sigma,
        "key_dims": r.key_dims.iter().map(DimKey::name).collect::<Vec<_>>(),
        "run_dims": r.run_dims.iter().map(DimKey::name).collect::<Vec<_>>(),
        "undated_records": r.undated.len(),
        "short_series": r.short_series(),
    });
    match format {
        TableFormat::Markdown => {
            let mut s = format!("{files} files; {}\n\n", r.summary());
            if !r.run_dims.is_empty() {
                s.push_str(&format!(
                    "Not part of a configuration (one value per date): {}.\n\n",
                    crate::analysis::dim_names(&r.run_dims)
                ));
            }
            if table.rows.is_empty() {
                s.push_str("No configuration ends at a regressed level.\n");
            } else {
                s.push_str("Latest regressions:\n\n");
                s.push_str(&render(&table, format, meta));
            }
            s
        }
        TableFormat::Csv => {
            eprintln!("{files} files; {}", r.summary());
            render(&table, format, meta)
        }
        TableFormat::Json => render(&table, format, meta),
    }
}
