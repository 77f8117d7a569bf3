//! `benchlens compare`: improvement tables and regression checks on the command line.
//!
//! - `benchlens compare FILE... --by gpu --baseline Tesla --candidate A100 [--metric M]
//!   [--ignore DIM]... [--format markdown|csv|json]` prints the improvement of the candidate
//!   over the baseline for every configuration matched across the two values of `--by`.
//!   Whatever is not given (the dimension, the two values, the metric) is picked as the
//!   explorer's improvement view picks it ([`crate::analysis::defaults`]), and the output says
//!   so.
//!   With `--per-gpu` the metric is a throughput divided by each record's GPU count, so
//!   deployments of different sizes compare per GPU.
//! - `benchlens compare OLD NEW [--threshold 5] [--fail-on-regression 5]` prints every metric
//!   that changed by more than the threshold between two runs of the same configurations, and
//!   with `--fail-on-regression P` exits 1 when any got worse by more than P %.
//!
//! - `benchlens compare FILE... --at-interactivity 50 [--per-gpu] [--price H100=2.95]` reads
//!   every series' frontier at that interactivity: throughput and cost per million tokens
//!   ([`super::compare_at`]).
//!
//! - `benchlens compare --trend DIR [--metric M]... [--noise-threshold 5]` follows every
//!   configuration over the dates of the result files under DIR and exits 1 when one ends at a
//!   regressed level ([`super::trend`]).
//!
//! The mode follows the flags: `--by`, `--baseline` or `--candidate` mean improvement; exactly
//! two files without them mean a regression check; any other number of files without them
//! means an improvement with every choice picked by default. Exit codes: 0 success, 1 regression found
//! (or, with `--trend`, a configuration ending at a regressed level), 2 bad arguments, unreadable
//! files or nothing to compare; every error is one `error:` line on stderr
//! ([`super::error::print_error`]). The work is done by [`crate::analysis`].

use std::process::ExitCode;

use super::compare_args::{default_metric, render, CompareArgs, TableFormat};
use super::convert::read_all;
use super::error::CliError;
use crate::analysis::defaults::{default_compare_dim, default_sides};
use crate::analysis::export::{Cell, TextColumn, TextTable};
use crate::analysis::improvement::{
    improvement, ImprovementRow, ImprovementSpec, ImprovementTable,
};
use crate::analysis::regression::{regression, RegressionReport, RegressionSpec};
use crate::analysis::{default_ignored, economics, DuplicateKey};
use crate::model::{Dataset, Dim, DimKey, DimKind, DimValue, MetricKey, Record};

fn parse_dim(name: &str) -> Result<DimKey, CliError> {
    DimKey::from_name(name).ok_or_else(|| CliError::UnknownDimension { name: name.into() })
}

fn parse_value(dim: &DimKey, text: &str) -> DimValue {
    match dim {
        DimKey::Known(d) if d.kind() != DimKind::Text => {
            let mut r = Record::default();
            match r.set_dim(dim, Some(DimValue::from(text))) {
                Ok(()) => r.dim(dim).unwrap_or_else(|| DimValue::from(text)),
                Err(_) => DimValue::from(text),
            }
        }
        _ => DimValue::from(text),
    }
}

fn dims_json(dims: &[DimKey]) -> serde_json::Value {
    dims.iter().map(|d| d.name()).collect()
}

fn duplicates_json(dups: &[DuplicateKey]) -> serde_json::Value {
    dups.iter()
        .map(|d| {
            let key: Vec<serde_json::Value> = d
                .key
                .iter()
                .map(|v| {
                    v.as_ref()
                        .map_or(serde_json::Value::Null, |v| v.to_string().into())
                })
                .collect();
            serde_json::json!({
                "key": key,
                "baseline_records": d.baseline_records,
                "candidate_records": d.candidate_records,
            })
        })
        .collect()
}

/// The Markdown caption for key columns moved out of the table.
fn same_for_every_row(same: &[(String, String)]) -> String {
    if same.is_empty() {
        return String::new();
    }
    let parts: Vec<String> = same
        .iter()
        .map(|(h, v)| {
            format!(
                "{}: {}",
                crate::analysis::export::escape_markdown_cell(h),
                crate::analysis::export::escape_markdown_cell(v)
            )
        })
        .collect();
    format!("Same for every row: {}.\n\n", parts.join(", "))
}

/// What `benchlens compare` picked by default, for the output's notes.
#[derive(Clone, Copy, Debug, Default)]
struct Picked {
    /// The metric (no `--metric`).
    metric: bool,
    /// With `--per-gpu`: how many records had no GPU count (left out); `None` without it.
    without_gpus: Option<usize>,
    /// The compared dimension (no `--by`).
    dim: bool,
    /// Baseline and candidate (no `--baseline`/`--candidate`).
    sides: bool,
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

/// Divides every record's `metric` by its GPU count ([`economics::gpus_of`]); a record
/// without one loses the metric, so it is not compared. Returns how many had none.
fn per_gpu(records: &mut [Record], metric: &MetricKey) -> usize {
    let mut without = 0;
    for r in records.iter_mut() {
        let Some(value) = r.metric(metric) else {
            continue;
        };
        match economics::record_gpus(r) {
            Some((gpus, _)) => r.set_metric(metric.clone(), value / gpus as f64),
            None => {
                r.metrics.remove(metric);
                without += 1;
            }
        }
    }
    without
}

/// Per GPU, the compared values' columns say so in every format: their ids (CSV header, JSON
/// key) end in `_per_gpu`, their headers in "per GPU", and each is followed by the GPU count
/// its row's record was divided by (`baseline_gpus`, `candidate_gpus`).
fn label_per_gpu(table: &mut TextTable, t: &ImprovementTable, ds: &Dataset) {
    for (side, record_of) in [
        (
            "baseline",
            (|r| r.baseline_record) as fn(&ImprovementRow) -> usize,
        ),
        ("candidate", |r| r.candidate_record),
    ] {
        let id = format!("{side}_value");
        let Some(at) = table.columns.iter().position(|c| c.id == id) else {
            continue;
        };
        let column = &mut table.columns[at];
        column.id = format!("{id}_per_gpu");
        column.header = format!("{} per GPU", column.header);
        table.columns.insert(
            at + 1,
            TextColumn::new(
                format!("{side}_gpus"),
                format!("{} GPUs", crate::model::capitalized(side)),
                true,
            ),
        );
        for (cells, row) in table.rows.iter_mut().zip(&t.rows) {
            let gpus = ds
                .record(record_of(row))
                .and_then(|r| economics::record_gpus(&r))
                .map_or(Cell::Empty, |(n, _)| Cell::number(n as f64, n.to_string()));
            cells.insert(at + 1, gpus);
        }
    }
}

fn improvement_output(
    t: &ImprovementTable,
    ds: &Dataset,
    picked: Picked,
    format: TableFormat,
) -> String {
    let mut metric_note = format!(
        "metric: {}{}",
        t.metric.name(),
        if picked.metric {
            " (picked by default; choose with --metric)"
        } else {
            ""
        }
    );
    if picked.dim || picked.sides {
        metric_note.push_str(&format!(
            "; {} picked by default (choose with {})",
            match (picked.dim, picked.sides) {
                (true, true) => "compared dimension, baseline and candidate",
                (true, false) => "compared dimension",
                _ => "baseline and candidate (the candidate is better in most matched configurations)",
            },
            if picked.dim {
                "--by, --baseline and --candidate"
            } else {
                "--baseline and --candidate"
            }
        ));
    }
    if let Some(left_out) = picked.without_gpus {
        metric_note.push_str(&format!(
            "; per GPU: each record's {} divided by its GPU count (gpu_count, else tp × pp × dp), \
             which is not matched on{}",
            t.metric.name(),
            match left_out {
                0 => String::new(),
                n => format!(", {n} record{} without a GPU count left out", plural(n)),
            }
        ));
    }
    let picked_metric = picked.metric;
    let meta = serde_json::json!({
        "dim": t.dim.name(),
        "baseline": t.baseline.to_string(),
        "candidate": t.candidate.to_string(),
        "metric": t.metric.name(),
        "metric_picked_by_default": picked_metric,
        "dim_picked_by_default": picked.dim,
        "sides_picked_by_default": picked.sides,
        "rule": t.rule,
        "reported_note": t.reported_note(),
        "key_dims": dims_json(&t.matching.key_dims),
        "tied_dims": dims_json(&t.matching.tied_dims),
        "unmatched_baseline": t.matching.unmatched_baseline,
        "unmatched_candidate": t.matching.unmatched_candidate,
        "duplicates": duplicates_json(&t.matching.duplicates),
        "missing_metric": t.missing_metric,
        "per_gpu": picked.without_gpus.is_some(),
        "without_gpu_count": picked.without_gpus,
    });
    let mut table = t.to_text_table();
    if picked.without_gpus.is_some() {
        label_per_gpu(&mut table, t, ds);
    }
    match format {
        TableFormat::Markdown => {
            let mut s = format!(
                "**{} = {} vs {} = {}**, {metric_note}\n\n{}\n\n",
                t.dim.name(),
                t.candidate,
                t.dim.name(),
                t.baseline,
                t.rule
            );
            if let Some(note) = t.reported_note() {
                s.push_str(&format!("{note}\n\n"));
            }
            if !t.matching.tied_dims.is_empty() {
                s.push_str(&format!(
                    "Not matched on {} (one value per side).\n\n",
                    crate::analysis::join_or_none(t.matching.tied_dims.iter().map(DimKey::name))
                ));
            }
            let (short, same) = table.split_constant_columns(t.matching.key_dims.len());
            s.push_str(&same_for_every_row(&same));
            s.push_str(&render(&short, format, meta));
            s.push_str(&format!("\n{}\n", t.summary()));
            s
        }
        TableFormat::Csv => {
            eprintln!("{metric_note}; {}", t.summary());
            render(&table, format, meta)
        }
        TableFormat::Json => render(&table, format, meta),
    }
}

fn regression_output(r: &RegressionReport, format: TableFormat) -> String {
    let meta = serde_json::json!({
        "threshold_pct": r.threshold_pct,
        "matched": r.matched,
        "compared": r.compared,
        "key_dims": dims_json(&r.matching.key_dims),
        "tied_dims": dims_json(&r.matching.tied_dims),
        "unmatched_old": r.matching.unmatched_baseline,
        "unmatched_new": r.matching.unmatched_candidate,
        "duplicates": duplicates_json(&r.matching.duplicates),
    });
    let table = r.to_text_table();
    match format {
        TableFormat::Markdown => {
            let mut s = format!("{}\n\n", r.summary());
            if !r.matching.tied_dims.is_empty() {
                s.push_str(&format!(
                    "Not matched on {} (one value per run).\n\n",
                    crate::analysis::join_or_none(r.matching.tied_dims.iter().map(DimKey::name))
                ));
            }
            if !r.changes.is_empty() {
                let (short, same) = table.split_constant_columns(r.matching.key_dims.len());
                s.push_str(&same_for_every_row(&same));
                s.push_str(&render(&short, format, meta));
            }
            s
        }
        TableFormat::Csv => {
            eprintln!("{}", r.summary());
            render(&table, format, meta)
        }
        TableFormat::Json => render(&table, format, meta),
    }
}

/// Runs `benchlens compare`: `Ok(1)` when a regression beyond `--fail-on-regression` was
/// found, an error (exit code 2) for bad arguments, unreadable files or nothing to compare.
pub fn run(args: &CompareArgs) -> Result<ExitCode, CliError> {
    let mut ignore = default_ignored();
    for name in &args.ignore {
        ignore.insert(parse_dim(name)?);
    }
    if let Some(dir) = &args.trend {
        return super::trend::run(dir, args, ignore);
    }
    if let Some(target) = args.at_interactivity {
        let ds = Dataset::new(read_every(&args.files, args.verbose)?);
        let by = args.by.as_deref().map(parse_dim).transpose()?;
        crate::stdout::print(&super::compare_at::run(&ds, target, by, args)?);
        return Ok(ExitCode::SUCCESS);
    }
    if args.metric.len() > 1 {
        return Err(CliError::Usage("--metric is repeated only with --trend"));
    }
    let metric = args
        .metric
        .first()
        .map(|n| MetricKey::from_name(n).ok_or_else(|| CliError::UnknownMetric { name: n.into() }))
        .transpose()?;
    let improvement_mode = args.by.is_some()
        || args.baseline.is_some()
        || args.candidate.is_some()
        || args.files.len() != 2;
    if improvement_mode {
        let dim = args.by.as_deref().map(parse_dim).transpose()?;
        if dim.is_none() && (args.baseline.is_some() || args.candidate.is_some()) {
            return Err(CliError::Usage("--baseline and --candidate need --by"));
        }
        if args.baseline.is_some() != args.candidate.is_some() {
            return Err(CliError::Usage(
                "give both --baseline and --candidate, or neither to pick them by default",
            ));
        }
        if args.fail_on_regression.is_some() {
            return Err(CliError::Usage(
                "--fail-on-regression is for regression checks (two files, no --by)",
            ));
        }
        let mut records = read_every(&args.files, args.verbose)?;
        let mut picked = Picked::default();
        let metric = match metric {
            Some(m) => m,
            None if args.per_gpu => {
                picked.metric = true;
                MetricKey::OutputThroughput
            }
            None => {
                picked.metric = true;
                default_metric(&records).ok_or(CliError::NoMetrics)?
            }
        };
        if args.per_gpu {
            if !crate::analysis::defaults::is_throughput(&metric) {
                return Err(CliError::Usage(
                    "--per-gpu divides a throughput by the GPU count: give a throughput \
                     --metric (output_throughput, total_token_throughput, request_throughput)",
                ));
            }
            picked.without_gpus = Some(per_gpu(&mut records, &metric));
            // Per GPU, deployments of different sizes are the comparison, not a mismatch.
            for d in [Dim::GpuCount, Dim::Tp, Dim::Pp] {
                ignore.insert(DimKey::Known(d));
            }
            let dp_tags = records.iter().flat_map(|r| r.tags.keys());
            for tag in dp_tags.filter(|t| economics::is_dp_tag(t)) {
                ignore.insert(DimKey::Tag(tag.clone()));
            }
        }
        let ds = Dataset::new(records);
        let all: Vec<usize> = (0..ds.len()).collect();
        let dim = match dim {
            Some(d) => d,
            None => {
                picked.dim = true;
                default_compare_dim(&ds).ok_or(CliError::NoComparedDimension)?
            }
        };
        let (baseline, candidate) = match (&args.baseline, &args.candidate) {
            (Some(b), Some(c)) => (parse_value(&dim, b), parse_value(&dim, c)),
            _ => {
                picked.sides = true;
                default_sides(&ds, &all, &dim, &metric)
                    .ok_or_else(|| CliError::FewerThanTwoValues { dim: dim.name() })?
            }
        };
        let spec = ImprovementSpec {
            baseline,
            candidate,
            dim,
            metric,
            ignore,
        };
        let t = improvement(&ds, &all, &spec)?;
        crate::stdout::print(&improvement_output(&t, &ds, picked, args.format));
        Ok(ExitCode::SUCCESS)
    } else {
        if args.per_gpu {
            return Err(CliError::Usage(
                "--per-gpu is for improvement tables (--by) and --at-interactivity, not \
                 regression checks",
            ));
        }
        let (old, failed_old) = read_all(&args.files[..1], args.verbose, false);
        let (new, failed_new) = read_all(&args.files[1..], args.verbose, false);
        if failed_old + failed_new > 0 {
            return Err(CliError::UnreadableInputs {
                count: failed_old + failed_new,
            });
        }
        let spec = RegressionSpec {
            threshold_pct: args.threshold,
            ignore,
            metrics: metric.into_iter().collect(),
        };
        let report = regression(&old, &new, &spec)?;
        crate::stdout::print(&regression_output(&report, args.format));
        let Some(limit) = args.fail_on_regression else {
            return Ok(ExitCode::SUCCESS);
        };
        // The report only holds changes beyond --threshold; a lower limit needs them all.
        let full = if limit < args.threshold {
            let spec = RegressionSpec {
                threshold_pct: limit,
                ..spec
            };
            regression(&old, &new, &spec)?
        } else {
            report
        };
        let worse = full.worse_than(limit);
        if worse.is_empty() {
            return Ok(ExitCode::SUCCESS);
        }
        // A finding, not a failure to run: the one line every error has, exit code 1.
        eprintln!(
            "error: {} metric value{} got worse by more than {limit} %",
            worse.len(),
            if worse.len() == 1 { "" } else { "s" }
        );
        Ok(ExitCode::FAILURE)
    }
}

/// Reads every file, all of which must be readable (those that are not are printed first).
fn read_every(files: &[String], verbose: bool) -> Result<Vec<Record>, CliError> {
    match read_all(files, verbose, false) {
        (records, 0) => Ok(records),
        (_, count) => Err(CliError::UnreadableInputs { count }),
    }
}
