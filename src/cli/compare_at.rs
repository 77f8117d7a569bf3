//! `benchlens compare FILE... --at-interactivity N [--per-gpu] [--price GPU=USD]`: every
//! series' Pareto frontier read at N tokens per second per user, as the explorer's trade-off
//! view reads it ([`crate::analysis::tradeoff::at_target`]): the throughput there and the
//! cost per million output tokens there, with the prices used named under the table.

use super::compare_args::{render, CompareArgs};
use super::error::CliError;
use crate::analysis::defaults::{default_layout, default_x};
use crate::analysis::economics::{self, Assumptions};
use crate::analysis::export::{Cell, TextColumn, TextTable};
use crate::analysis::tradeoff::{
    assumptions_used, at_target, tradeoff, AssumedFor, LatencyAxis, TargetRow, ThroughputAxis,
    TradeoffSpec,
};
use crate::charts::format_value;
use crate::charts::Theme;
use crate::model::{Dataset, DimKey, LatencyMetric, MetricKey, Stat};

/// The table and its notes, rendered in `args.format`.
pub fn run(
    ds: &Dataset,
    target: f64,
    by: Option<DimKey>,
    args: &CompareArgs,
) -> Result<String, CliError> {
    if !target.is_finite() || target <= 0.0 {
        return Err(CliError::Usage(
            "--at-interactivity takes a number of tokens per second per user above 0",
        ));
    }
    let mut prices = Vec::new();
    for p in &args.price {
        prices.extend(Assumptions::parse_list(p)?);
    }
    let series_by = match by {
        Some(d) => vec![d],
        None => default_layout(ds, default_x(ds), None, None).split_by(),
    };
    let all: Vec<usize> = (0..ds.len()).collect();
    let spec = |throughput| TradeoffSpec {
        throughput,
        latency: LatencyAxis::TokensPerSPerUser,
        series_by: series_by.clone(),
        theme: Theme::Light,
        assumptions: Assumptions {
            prices: prices.clone(),
            kw: Vec::new(),
        },
    };
    let tput = spec(if args.per_gpu {
        ThroughputAxis::OutputTokensPerSPerGpu
    } else {
        ThroughputAxis::OutputTokensPerS
    });
    let cost = spec(ThroughputAxis::UsdPerMillionOutputTokens);
    let tput_rows = at_target(&tradeoff(ds, &all, &tput), &tput, target, None);
    let cost_rows = at_target(&tradeoff(ds, &all, &cost), &cost, target, None);
    let table = table(&tput_rows, &cost_rows, &tput, target);
    let prices_used: Vec<String> = assumptions_used(ds, &all, &cost)
        .iter()
        .map(AssumedFor::text)
        .collect();
    let mut notes = [
        format!(
            "Each series' frontier of {} against tokens per second per user (1000 / mean TPOT), \
             read at {} tok/s per user: interpolated between measured points, never extrapolated.",
            tput.throughput.label(),
            format_value(target)
        ),
        format!("Prices: {}.", prices_used.join("; ")),
    ];
    if tput_rows.is_empty() {
        notes[0] = why_empty(ds, args.per_gpu);
    }
    let meta = serde_json::json!({
        "at_interactivity": target,
        "per_gpu": args.per_gpu,
        "series_by": series_by.iter().map(DimKey::name).collect::<Vec<_>>(),
        "prices": prices_used,
    });
    Ok(match args.format {
        super::compare_args::TableFormat::Markdown => {
            format!(
                "{}\n\n{}\n\n{}",
                notes[0],
                render(&table, args.format, meta),
                notes[1]
            )
        }
        super::compare_args::TableFormat::Csv => {
            eprintln!("{}", notes.join("\n"));
            render(&table, args.format, meta)
        }
        super::compare_args::TableFormat::Json => render(&table, args.format, meta),
    })
}

/// Why no series has a frontier: how many records have each thing a point needs.
fn why_empty(ds: &Dataset, per_gpu: bool) -> String {
    let tpot = MetricKey::latency(LatencyMetric::Tpot, Stat::Mean);
    let (mut with_tpot, mut with_tput, mut with_gpus) = (0, 0, 0);
    for r in ds.records() {
        with_tpot += usize::from(r.metric(&tpot).is_some());
        with_tput += usize::from(r.metric(&MetricKey::OutputThroughput).is_some());
        with_gpus += usize::from(economics::record_gpus(&r).is_some());
    }
    let mut needs = format!(
        "No frontier to read: of {} records, {with_tpot} have a mean TPOT (mean_tpot_ms) and \
         {with_tput} an output throughput (output_throughput)",
        ds.len()
    );
    if per_gpu {
        needs.push_str(&format!(
            ", {with_gpus} a GPU count (gpu_count, or tp × pp × dp; `inspect` shows what was read)"
        ));
    }
    needs.push('.');
    needs
}

/// One row per series of the throughput reading, its cost reading beside it.
fn table(tput: &[TargetRow], cost: &[TargetRow], spec: &TradeoffSpec, target: f64) -> TextTable {
    let columns = vec![
        TextColumn::new("series", "Series", false),
        TextColumn::new(
            "throughput_at_target",
            format!(
                "{} at {} tok/s per user",
                spec.throughput.label(),
                format_value(target)
            ),
            true,
        ),
        TextColumn::new(
            "usd_per_million_output_tokens_at_target",
            "$ per million output tokens there",
            true,
        ),
        TextColumn::new("note", "Note", false),
    ];
    let cell = |row: Option<&TargetRow>| -> (Cell, Option<String>) {
        match row.map(|r| &r.at) {
            Some(Ok(Some(r))) => (
                Cell::number(r.value, format_value(r.value)),
                r.clamped.map(|at| {
                    format!(
                        "every measured point is faster per user; read at the slowest, {} tok/s",
                        format_value(at)
                    )
                }),
            ),
            Some(Err(u)) => (
                Cell::Text("not reached".into()),
                Some(format!(
                    "at most {} tok/s per user measured",
                    format_value(u.best)
                )),
            ),
            Some(Ok(None)) | None => (Cell::Empty, None),
        }
    };
    let rows = tput
        .iter()
        .map(|t| {
            let (value, note) = cell(Some(t));
            let (usd, _) = cell(cost.iter().find(|c| c.series == t.series));
            vec![
                Cell::Text(t.series.clone()),
                value,
                usd,
                Cell::Text(note.unwrap_or_default()),
            ]
        })
        .collect();
    TextTable { columns, rows }
}
