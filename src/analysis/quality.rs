//! Data-quality flags: short warnings a reader should see next to a number before trusting
//! it — failed requests, runs that did not complete every prompt, an unbounded request rate,
//! values that were inferred rather than read, and for compared pairs, differing input or
//! output lengths (the two sides did not do the same work).

use super::improvement::ImprovementRow;
use crate::charts::comparison::ComparisonTable;
use crate::charts::series::{build_series_with_records, ChartSpec, Series};
use crate::model::flags;
use crate::model::{format_number, Dataset, Dim, DimValue, MetricKey, Record};

/// The kind of a flag, for icons and filtering.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FlagKind {
    /// `failed` > 0.
    FailedRequests,
    /// `completed` < `num_prompts`.
    Incomplete,
    /// `request_rate` = inf: all requests sent at once, a burst rather than a rate.
    InfiniteRequestRate,
    /// Some dimensions were inferred (file name, headings, user) rather than read.
    Inferred,
    /// A compared pair's input or output lengths differ by more than 1 %.
    LengthMismatch,
}

/// One flag with short human text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flag {
    /// The kind.
    pub kind: FlagKind,
    /// Short lowercase text, e.g. `3 requests failed`.
    pub text: String,
}

impl Flag {
    fn new(kind: FlagKind, text: String) -> Flag {
        Flag { kind, text }
    }
}

/// Relative difference above which two lengths count as different (measured mean lengths
/// wobble slightly between runs).
const LENGTH_TOLERANCE: f64 = 0.01;

/// The flags of one record.
pub fn record_flags(r: &Record) -> Vec<Flag> {
    // Keep `may_flag` a superset of what is checked here.
    let mut flags = Vec::new();
    if let Some(failed) = r
        .metric(&MetricKey::Failed)
        .filter(|f| flags::failed_requests(*f))
    {
        flags.push(Flag::new(
            FlagKind::FailedRequests,
            format!(
                "{} request{} failed",
                format_number(failed),
                if failed == 1.0 { "" } else { "s" }
            ),
        ));
    }
    if let (Some(completed), Some(prompts)) = (r.metric(&MetricKey::Completed), r.num_prompts) {
        if flags::incomplete(completed, prompts as f64) {
            flags.push(Flag::new(
                FlagKind::Incomplete,
                format!(
                    "only {} of {prompts} prompts completed",
                    format_number(completed)
                ),
            ));
        }
    }
    if r.request_rate == Some(f64::INFINITY) {
        flags.push(Flag::new(
            FlagKind::InfiniteRequestRate,
            "request rate is inf: every request was sent at once".into(),
        ));
    }
    if !r.inferred.is_empty() {
        let list: Vec<String> = r
            .inferred
            .iter()
            .map(|(k, from)| format!("{k} (from {from})"))
            .collect();
        flags.push(Flag::new(
            FlagKind::Inferred,
            format!("inferred, not read: {}", list.join(", ")),
        ));
    }
    flags
}

fn differs(a: f64, b: f64) -> bool {
    (a - b).abs() > LENGTH_TOLERANCE * a.abs().max(b.abs())
}

/// The flags of a compared pair itself (not of each record): input or output lengths that
/// differ by more than 1 %.
pub fn pair_flags(baseline: &Record, candidate: &Record) -> Vec<Flag> {
    let mut flags = Vec::new();
    for (dim, what) in [(Dim::InputLen, "input"), (Dim::OutputLen, "output")] {
        let (a, b) = (
            baseline.known(dim).and_then(|v| v.as_f64()),
            candidate.known(dim).and_then(|v| v.as_f64()),
        );
        if let (Some(a), Some(b)) = (a, b) {
            if differs(a, b) {
                flags.push(Flag::new(
                    FlagKind::LengthMismatch,
                    format!(
                        "{what} lengths differ: {} vs {} tokens",
                        format_number(a),
                        format_number(b)
                    ),
                ));
            }
        }
    }
    flags
}

/// Every flag of a compared pair: each side's own flags prefixed `baseline:` / `candidate:`,
/// then the pair's.
pub fn compared_pair_flags(baseline: &Record, candidate: &Record) -> Vec<Flag> {
    let side = |prefix: &str, r: &Record| {
        record_flags(r)
            .into_iter()
            .map(|f| Flag::new(f.kind, format!("{prefix}: {}", f.text)))
            .collect::<Vec<_>>()
    };
    let mut flags = side("baseline", baseline);
    flags.extend(side("candidate", candidate));
    flags.extend(pair_flags(baseline, candidate));
    flags
}

/// The flags of one improvement row: [`compared_pair_flags`] of its baseline and candidate
/// records in `ds` (the dataset the table was computed from).
pub fn improvement_row_flags(ds: &Dataset, row: &ImprovementRow) -> Vec<Flag> {
    match (
        ds.record(row.baseline_record),
        ds.record(row.candidate_record),
    ) {
        (Some(b), Some(c)) => compared_pair_flags(&b, &c),
        _ => Vec::new(),
    }
}

/// Whether some record of `ds` may carry a [`record_flags`] flag (failed or incomplete
/// requests, an infinite request rate, inferred fields), read from the dataset's index: when
/// not, notes need not read a million records to find none. A superset of `record_flags`'
/// conditions (tested on every fixture).
fn may_flag(ds: &Dataset) -> bool {
    ds.any_inferred()
        || ds
            .metric_keys()
            .iter()
            .any(|k| matches!(k, MetricKey::Failed | MetricKey::Completed))
        || ds
            .column(&Dim::RequestRate.into())
            .is_some_and(|c| c.dict.iter().any(|v| v.as_f64() == Some(f64::INFINITY)))
}

/// The data-quality notes of every record drawn at `x` (in the panel `facet`) in a chart's
/// `series`, each given with its points' records (dataset indices, per point as
/// [`build_series_with_records`] gives them), each note once: a note that holds for every
/// series drawn there stands alone, one that holds for only some names them (`vllm: 3
/// requests failed`).
pub fn point_notes(
    ds: &Dataset,
    series: &[(Series, Vec<Vec<usize>>)],
    facet: Option<&DimValue>,
    x: &DimValue,
) -> Vec<String> {
    if !may_flag(ds) {
        return Vec::new();
    }
    // Note text -> the series it applies to, in first-seen order.
    let mut notes: Vec<(String, Vec<&str>)> = Vec::new();
    let mut drawn = 0;
    for (s, rows) in series.iter().filter(|(s, _)| s.facet.as_ref() == facet) {
        let mut here = false;
        for (_, rows) in s.points.iter().zip(rows).filter(|(p, _)| &p.x == x) {
            here = true;
            for r in rows.iter().filter_map(|&i| ds.record(i)) {
                for f in record_flags(&r) {
                    match notes.iter_mut().find(|(t, _)| *t == f.text) {
                        Some((_, names)) if !names.contains(&s.name.as_str()) => {
                            names.push(&s.name)
                        }
                        Some(_) => {}
                        None => notes.push((f.text, vec![&s.name])),
                    }
                }
            }
        }
        drawn += usize::from(here);
    }
    notes
        .into_iter()
        .map(|(text, names)| {
            if names.len() == drawn {
                text
            } else {
                format!("{}: {text}", names.join(", "))
            }
        })
        .collect()
}

/// A table's data-quality notes: those every row has, said once, and the rest per row.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableNotes {
    /// Notes shared by every row (only when there are two rows or more).
    pub shared: Vec<String>,
    /// Per row: its other notes joined with `; ` (empty when none).
    pub rows: Vec<String>,
}

/// Splits per-row notes into the ones every row shares and the rest.
pub fn split_shared_notes(rows: Vec<Vec<String>>) -> TableNotes {
    let shared: Vec<String> = match rows.split_first() {
        Some((first, rest)) if !rest.is_empty() => first
            .iter()
            .filter(|n| rest.iter().all(|r| r.contains(n)))
            .cloned()
            .collect(),
        _ => Vec::new(),
    };
    TableNotes {
        rows: rows
            .into_iter()
            .map(|r| {
                r.into_iter()
                    .filter(|n| !shared.contains(n))
                    .collect::<Vec<_>>()
                    .join("; ")
            })
            .collect(),
        shared,
    }
}

/// The notes of a chart's comparison table (of the chart `spec` draws from the records at
/// `indices`), one entry per row of `table`.
pub fn comparison_notes(
    ds: &Dataset,
    indices: &[usize],
    spec: &ChartSpec,
    table: &ComparisonTable,
) -> TableNotes {
    if !may_flag(ds) {
        return split_shared_notes(vec![Vec::new(); table.rows.len()]);
    }
    // The points again, with their records: the chart keeps only their sums.
    let series = build_series_with_records(ds, indices, spec);
    split_shared_notes(
        table
            .rows
            .iter()
            .map(|row| point_notes(ds, &series, row.facet.as_ref(), &row.x))
            .collect(),
    )
}

/// The notes of an improvement table, one entry per row.
pub fn improvement_notes(ds: &Dataset, rows: &[ImprovementRow]) -> TableNotes {
    split_shared_notes(
        rows.iter()
            .map(|r| {
                improvement_row_flags(ds, r)
                    .into_iter()
                    .map(|f| f.text)
                    .collect()
            })
            .collect(),
    )
}

/// What a reader should know about one file's records before trusting its numbers, one short
/// sentence each: records with failed requests, completion below 95 %, configurations that
/// appear more than once (their points are means), and GPU names no default price or power
/// knows. Read from the dataset's columns, so a file of a million rows takes one pass.
pub fn file_notes(ds: &Dataset, rows: std::ops::Range<usize>) -> Vec<String> {
    let rows: Vec<usize> = (rows.start..rows.end.min(ds.len())).collect();
    let mut notes = Vec::new();
    let plural = |n: usize, one: &str, many: &str| {
        if n == 1 {
            one.to_string()
        } else {
            format!("{n} {many}")
        }
    };
    if let Some(failed) = ds.metric_values(&MetricKey::Failed) {
        let (mut records, mut requests) = (0usize, 0.0);
        for &r in &rows {
            if let Some(f) = failed.get(r).filter(|f| *f > 0.0) {
                records += 1;
                requests += f;
            }
        }
        if records > 0 {
            notes.push(format!(
                "{} of {} with failed requests ({} requests in all)",
                plural(records, "1 record", "records"),
                rows.len(),
                format_number(requests)
            ));
        }
    }
    let prompts = ds.column(&Dim::NumPrompts.into());
    if let (Some(completed), Some(prompts)) = (ds.metric_values(&MetricKey::Completed), prompts) {
        let low = rows
            .iter()
            .filter(|&&r| {
                let asked = prompts
                    .value(r)
                    .and_then(DimValue::as_f64)
                    .filter(|p| *p > 0.0);
                matches!((completed.get(r), asked), (Some(c), Some(p)) if flags::low_completion(c, p))
            })
            .count();
        if low > 0 {
            notes.push(format!(
                "{} completed fewer than 95 % of the prompts asked",
                plural(low, "1 record", "records")
            ));
        }
    }
    let mut seen: std::collections::HashMap<u32, usize> = std::collections::HashMap::new();
    ds.each_configuration(Some(&rows), |_, c| *seen.entry(c).or_default() += 1);
    let repeated: Vec<usize> = seen.values().copied().filter(|n| *n > 1).collect();
    if !repeated.is_empty() {
        notes.push(format!(
            "{} appear{} more than once ({} records): a chart point of one is the mean of its records",
            plural(repeated.len(), "1 configuration", "configurations"),
            if repeated.len() == 1 { "s" } else { "" },
            repeated.iter().sum::<usize>()
        ));
    }
    if let Some(gpu) = ds.column(&Dim::Gpu.into()) {
        let mut unknown: Vec<String> = Vec::new();
        let mut used = vec![false; gpu.dict.len() + 1];
        for &r in &rows {
            if let Some(u) = used.get_mut(gpu.codes.get(r) as usize) {
                *u = true;
            }
        }
        for (i, name) in gpu.dict.iter().enumerate() {
            let name = name.to_string();
            if used[i + 1] && crate::analysis::economics::gpu_family(&name).is_none() {
                unknown.push(name);
            }
        }
        if !unknown.is_empty() {
            let shown: Vec<String> = unknown.iter().take(5).cloned().collect();
            notes.push(format!(
                "GPU name{} without a default price or power: {}{}",
                if unknown.len() == 1 { "" } else { "s" },
                shown.join(", "),
                if unknown.len() > 5 {
                    format!(" and {} more", unknown.len() - 5)
                } else {
                    String::new()
                }
            ));
        }
    }
    notes
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_files_notes_name_failures_low_completion_repeats_and_unknown_gpus() {
        let rec = |gpu: &str, rate: f64, completed: f64, failed: f64| {
            let mut r = Record {
                gpu: Some(gpu.into()),
                request_rate: Some(rate),
                num_prompts: Some(100),
                ..Record::default()
            };
            r.set_metric(MetricKey::Completed, completed);
            r.set_metric(MetricKey::Failed, failed);
            r
        };
        let ds = Dataset::new(vec![
            rec("H100", 1.0, 100.0, 0.0),
            rec("H100", 2.0, 90.0, 10.0),
            rec("RTX 3090", 2.0, 99.0, 1.0),
            rec("RTX 3090", 2.0, 100.0, 0.0),
            // Another file's record.
            rec("Gaudi 3", 8.0, 1.0, 99.0),
        ]);
        assert_eq!(
            file_notes(&ds, 0..4),
            [
                "2 records of 4 with failed requests (11 requests in all)",
                "1 record completed fewer than 95 % of the prompts asked",
                "1 configuration appears more than once (2 records): a chart point of one is \
                 the mean of its records",
                "GPU name without a default price or power: RTX 3090",
            ]
        );
        assert!(file_notes(&ds, 0..1).is_empty());
        assert_eq!(file_notes(&ds, 4..9).len(), 3);
    }

    use super::*;

    #[test]
    fn may_flag_holds_wherever_a_record_has_a_flag() {
        let plain = Record {
            num_prompts: Some(10),
            request_rate: Some(4.0),
            ..Record::default()
        };
        let mut failed = plain.clone();
        failed.set_metric(MetricKey::Failed, 2.0);
        let mut incomplete = plain.clone();
        incomplete.set_metric(MetricKey::Completed, 8.0);
        let infinite = Record {
            request_rate: Some(f64::INFINITY),
            ..plain.clone()
        };
        let mut inferred = plain.clone();
        inferred
            .set_inferred(&Dim::Gpu.into(), DimValue::Text("H100".into()), "file name")
            .unwrap();
        for r in [failed, incomplete, infinite, inferred] {
            assert!(!record_flags(&r).is_empty(), "{r:?}");
            assert!(may_flag(&Dataset::new(vec![plain.clone(), r])));
        }
        assert!(record_flags(&plain).is_empty());
        assert!(!may_flag(&Dataset::new(vec![plain])));
    }

    #[test]
    fn point_notes_name_series_only_when_a_note_is_not_shared() {
        use crate::charts::SeriesPoint;
        let rec = |failed: f64| {
            let mut r = Record {
                request_rate: Some(f64::INFINITY),
                ..Record::default()
            };
            r.set_metric(MetricKey::Failed, failed);
            r
        };
        let ds = Dataset::new(vec![rec(0.0), rec(3.0)]);
        let x = DimValue::Num(f64::INFINITY);
        let point = |i: usize| SeriesPoint {
            x: x.clone(),
            y: 1.0,
            first_record: i,
            merge: Default::default(),
            interval: None,
            flags: Default::default(),
        };
        let series = vec![
            (
                Series {
                    name: "sgl".into(),
                    facet: None,
                    points: vec![point(0)],
                },
                vec![vec![0]],
            ),
            (
                Series {
                    name: "vllm".into(),
                    facet: None,
                    points: vec![point(1)],
                },
                vec![vec![1]],
            ),
        ];
        let notes = point_notes(&ds, &series, None, &x).join("; ");
        let inf = record_flags(&ds.record(0).unwrap())[0].text.clone();
        let failed = record_flags(&ds.record(1).unwrap())
            .into_iter()
            .find(|f| f.kind == FlagKind::FailedRequests)
            .unwrap()
            .text;
        // Shared by both series: once, unnamed. Only vllm's: named.
        assert_eq!(notes, format!("{inf}; vllm: {failed}"));
        assert!(point_notes(&ds, &series, None, &DimValue::Num(1.0)).is_empty());
    }

    #[test]
    fn a_note_every_row_shares_is_said_once() {
        let row = |notes: &[&str]| notes.iter().map(|n| n.to_string()).collect::<Vec<_>>();
        let inferred = "inferred, not read: gpu (from heading)";
        let t = split_shared_notes(vec![
            row(&[inferred]),
            row(&[inferred, "3 requests failed"]),
            row(&[inferred]),
        ]);
        assert_eq!(t.shared, [inferred]);
        assert_eq!(t.rows, ["", "3 requests failed", ""]);
        // One row: nothing is "shared", the row keeps its notes.
        let one = split_shared_notes(vec![row(&[inferred])]);
        assert!(one.shared.is_empty());
        assert_eq!(one.rows, [inferred]);
        assert_eq!(split_shared_notes(Vec::new()), TableNotes::default());
    }

    #[test]
    fn record_flags_say_what_is_off() {
        let mut r = Record {
            num_prompts: Some(200),
            request_rate: Some(f64::INFINITY),
            ..Record::default()
        };
        r.set_metric(MetricKey::Failed, 3.0);
        r.set_metric(MetricKey::Completed, 197.0);
        r.inferred.insert("gpu".into(), "file name".into());
        let texts: Vec<String> = record_flags(&r).into_iter().map(|f| f.text).collect();
        assert_eq!(
            texts,
            [
                "3 requests failed",
                "only 197 of 200 prompts completed",
                "request rate is inf: every request was sent at once",
                "inferred, not read: gpu (from file name)",
            ]
        );
        assert!(record_flags(&Record::default()).is_empty());
    }

    #[test]
    fn pairs_flag_different_work() {
        let a = Record {
            input_len: Some(128.0),
            output_len: Some(128.0),
            ..Record::default()
        };
        let b = Record {
            input_len: Some(128.5),
            output_len: Some(256.0),
            ..Record::default()
        };
        let flags = compared_pair_flags(&a, &b);
        assert_eq!(flags.len(), 1);
        assert_eq!(flags[0].kind, FlagKind::LengthMismatch);
        assert_eq!(flags[0].text, "output lengths differ: 128 vs 256 tokens");
    }
}
