use super::*;
use crate::model::Dim;
use std::collections::BTreeSet;

fn rec(engine: &str, gpu: Option<&str>, batch: u64) -> Record {
    Record {
        engine: Some(engine.into()),
        gpu: gpu.map(Into::into),
        batch_size: Some(batch),
        ..Record::default()
    }
}

fn sample() -> Dataset {
    Dataset::new(vec![
        rec("vllm", Some("A100"), 1),
        rec("vllm", Some("H100"), 8),
        rec("sglang", Some("A100"), 8),
        rec("tgi", None, 1),
    ])
}

fn counts(ds: &Dataset, dim: Dim, filter: &Filter) -> Vec<(String, usize)> {
    ds.distinct(&dim.into(), filter)
        .into_iter()
        .map(|f| {
            (
                f.value.map_or("(none)".to_string(), |v| v.to_string()),
                f.count,
            )
        })
        .collect()
}

#[test]
fn unfiltered_counts_and_matches() {
    let ds = sample();
    assert_eq!(ds.matching(&Filter::all()), vec![0, 1, 2, 3]);
    assert_eq!(
        counts(&ds, Dim::Gpu, &Filter::all()),
        [("A100".into(), 2), ("H100".into(), 1), ("(none)".into(), 1)]
    );
    assert_eq!(
        counts(&ds, Dim::BatchSize, &Filter::all()),
        [("1".into(), 2), ("8".into(), 2)]
    );
}

#[test]
fn counts_are_under_the_other_filters() {
    let ds = sample();
    let f = Filter::all().select(Dim::Engine, Some("vllm".into()));
    assert_eq!(ds.matching(&f), vec![0, 1]);
    // The engine facet ignores its own selection ...
    assert_eq!(
        counts(&ds, Dim::Engine, &f),
        [("sglang".into(), 1), ("tgi".into(), 1), ("vllm".into(), 2)]
    );
    // ... the GPU facet is narrowed by it.
    assert_eq!(
        counts(&ds, Dim::Gpu, &f),
        [("A100".into(), 1), ("H100".into(), 1), ("(none)".into(), 0)]
    );
    let f = f.select(Dim::BatchSize, Some(8.0.into()));
    assert_eq!(ds.matching(&f), vec![1]);
    assert_eq!(
        counts(&ds, Dim::Engine, &f),
        [("sglang".into(), 1), ("tgi".into(), 0), ("vllm".into(), 1)]
    );
}

#[test]
fn missing_values_are_selectable_and_unknown_dimensions_match_nothing() {
    let ds = sample();
    let f = Filter::all().select(Dim::Gpu, None);
    assert_eq!(ds.matching(&f), vec![3]);
    let f = Filter::all().select(Dim::Model, Some("llama".into()));
    assert!(ds.matching(&f).is_empty());
    let f = Filter::all().select(Dim::Model, None);
    assert_eq!(ds.matching(&f).len(), 4);
}

#[test]
fn columns_metrics_and_in_place_changes() {
    let mut ds = sample();
    let gpu = ds.column(&Dim::Gpu.into()).unwrap();
    assert_eq!(gpu.dict, [DimValue::from("A100"), DimValue::from("H100")]);
    assert_eq!(*gpu.codes, [1, 2, 1, 0]);
    assert_eq!(gpu.value(1), Some(&DimValue::from("H100")));
    assert_eq!(ds.distinct_len(&Dim::BatchSize.into()), 2);
    assert!(ds.metrics_present(&[0, 1]).is_empty());

    let mut r = rec("trtllm", Some("B200"), 64);
    r.set_metric(MetricKey::OutputThroughput, 1.0);
    let rows = ds.extend(vec![r]);
    assert_eq!(rows, 4..5);
    assert_eq!(ds.metrics_present(&[0, 4]), [MetricKey::OutputThroughput]);
    assert_eq!(ds.metrics_present(&[0, 1]), []);
    ds.update_rows(0..2, |r| r.set_known(Dim::Model, Some("m".into())))
        .unwrap();
    assert_eq!(ds.distinct_len(&Dim::Model.into()), 1);
    ds.remove_rows(0..2);
    assert_eq!(ds.len(), 3);
    assert_eq!(ds.distinct_len(&Dim::Model.into()), 0);
    assert_eq!(ds.metric_keys(), [MetricKey::OutputThroughput]);
}

/// A plain record (dimensions and metrics only), as a table read into columns holds.
fn plain(engine: &str, gpu: Option<&str>, batch: u64, ttft: Option<f64>) -> Record {
    let mut r = rec(engine, gpu, batch);
    if let Some(v) = ttft {
        r.set_metric(MetricKey::OutputThroughput, v);
    }
    r.tags.insert("site".into(), format!("s{}", batch % 3));
    r
}

/// The same rows, the middle file kept as its index alone.
fn mixed() -> (Vec<Record>, Dataset) {
    let first = vec![
        plain("vllm", Some("A100"), 1, Some(1.0)),
        rec("tgi", None, 2),
    ];
    let table = vec![
        plain("sglang", Some("H100"), 8, Some(2.5)),
        plain("vllm", None, 4, None),
        plain("trtllm", Some("A100"), 8, Some(f64::NAN)),
        plain("sglang", Some("B200"), 16, Some(7.0)),
    ];
    let last = vec![plain("tgi", Some("H100"), 1, Some(3.0))];
    let mut ds = Dataset::new(first.clone());
    assert_eq!(ds.extend_columnar(Index::build(&table)), 2..6);
    assert_eq!(ds.extend(last.clone()), 6..7);
    let all: Vec<Record> = first.into_iter().chain(table).chain(last).collect();
    (all, ds)
}

/// Records compared through their debug text: a NaN metric equals itself there.
fn dbg(x: impl std::fmt::Debug) -> String {
    format!("{x:?}")
}

#[test]
fn rows_kept_as_columns_read_as_their_records() {
    let (all, ds) = mixed();
    let reference = Dataset::new(all.clone());
    assert_eq!(ds.len(), 7);
    assert_eq!(ds.index(), reference.index());
    for (i, r) in all.iter().enumerate() {
        assert_eq!(dbg(ds.record(i).as_deref()), dbg(Some(r)), "row {i}");
        assert_eq!(ds.kept_record(i).is_some(), !(2..6).contains(&i), "row {i}");
    }
    assert!(ds.record(7).is_none());
    assert_eq!(ds.kept_records().count(), 3);
    let f = Filter::all().select(Dim::Engine, Some("sglang".into()));
    assert_eq!(ds.matching(&f), [2, 5]);
    let filtered: Vec<Record> = ds.filtered(&f).map(Cow::into_owned).collect();
    assert_eq!(dbg(&filtered), dbg(&[all[2].clone(), all[5].clone()]));
    assert_eq!(ds.facets(&f), reference.facets(&f));
    assert_eq!(dbg(&*ds.records_in(0..2)), dbg(&all[0..2]));
    assert!(matches!(ds.records_in(0..2), Cow::Borrowed(_)));
    assert_eq!(dbg(&*ds.records_in(1..4)), dbg(&all[1..4]));
    assert_eq!(dbg(&*ds.records_in(5..99)), dbg(&all[5..7]));
    assert_eq!(ds.first_metric(1), None);
    assert_eq!(ds.first_metric(2), Some(&MetricKey::OutputThroughput));
    assert_eq!(dbg(ds.clone().into_records()), dbg(&all));
}

#[test]
fn removing_and_changing_rows_kept_as_columns() {
    // Every cut: across runs, inside the table, all of it.
    for (a, b) in [(0, 3), (3, 5), (2, 6), (1, 7), (4, 4), (5, 7), (0, 7)] {
        let (mut all, mut ds) = mixed();
        ds.remove_rows(a..b);
        all.drain(a..b);
        let reference = Dataset::new(all.clone());
        assert_eq!(ds.index(), reference.index(), "{a}..{b}");
        let got: Vec<Record> = ds.records().map(Cow::into_owned).collect();
        assert_eq!(dbg(got), dbg(&all), "{a}..{b}");
    }
    let (mut all, mut ds) = mixed();
    ds.update_rows(3..5, |r| {
        r.set_inferred(&Dim::Model.into(), "m".into(), "user")
    })
    .unwrap();
    for r in &mut all[3..5] {
        r.set_inferred(&Dim::Model.into(), "m".into(), "user")
            .unwrap();
    }
    assert_eq!(ds.index(), Dataset::new(all.clone()).index());
    assert!(ds.any_inferred());
    let got: Vec<Record> = ds.records().map(Cow::into_owned).collect();
    assert_eq!(dbg(got), dbg(all));
    // The changed file is kept as records now.
    assert!(ds.kept_record(2).is_some());
}

#[test]
fn one_pass_gives_the_matching_rows_and_every_count() {
    let ds = sample();
    let vllm = Filter::all().select(Dim::Engine, Some("vllm".into()));
    let a100_or_none = Filter::all()
        .select(Dim::Gpu, Some("A100".into()))
        .select(Dim::Gpu, None);
    let both = vllm.clone().select(Dim::BatchSize, Some(8.0.into()));
    let nothing = Filter::all().select(Dim::Model, Some("llama".into()));
    for f in [Filter::all(), vllm, a100_or_none, both, nothing] {
        let pass = ds.filter_pass(&f);
        assert_eq!(pass.rows, ds.matching(&f), "{f:?}");
        assert_eq!(pass.facets, ds.facets(&f), "{f:?}");
    }
    let pass = ds.filter_pass(
        &Filter::all()
            .select(Dim::Gpu, None)
            .select(Dim::Engine, Some("tgi".into())),
    );
    assert_eq!(pass.rows, [3]);
    let facet = |d: Dim| pass.facets.iter().find(|f| f.key == d.into()).unwrap();
    let gpu: Vec<(Option<String>, usize, bool)> = facet(Dim::Gpu)
        .values
        .iter()
        .map(|v| {
            (
                v.value.as_ref().map(ToString::to_string),
                v.count,
                v.selected,
            )
        })
        .collect();
    // Under the engine filter alone: tgi has no GPU.
    assert_eq!(
        gpu,
        [
            (Some("A100".into()), 0, false),
            (Some("H100".into()), 0, false),
            (None, 1, true)
        ]
    );
    let engines: Vec<usize> = facet(Dim::Engine).values.iter().map(|v| v.count).collect();
    // Under the GPU filter alone: only tgi has no GPU.
    assert_eq!(engines, [0, 1, 0]);
}

#[test]
fn one_row_of_each_configuration() {
    let mut records = vec![
        rec("vllm", Some("A100"), 1),
        rec("vllm", Some("A100"), 1),
        rec("vllm", None, 1),
        rec("tgi", Some("A100"), 1),
        rec("vllm", None, 1),
        rec("vllm", Some("A100"), 1),
    ];
    // The same dimensions with a metric: another configuration.
    records[5].set_metric(MetricKey::OutputThroughput, 1.0);
    let mut ds = Dataset::new(records);
    assert_eq!(*ds.configurations(), [0, 2, 3, 5]);
    // Kept until the rows change.
    assert!(Arc::ptr_eq(&ds.configurations(), &ds.configurations()));
    ds.extend(vec![
        rec("tgi", Some("H100"), 1),
        rec("vllm", Some("A100"), 1),
    ]);
    assert_eq!(*ds.configurations(), [0, 2, 3, 5, 6]);
    ds.remove_rows(0..1);
    assert_eq!(*ds.configurations(), [0, 1, 2, 4, 5]);
    // Past 2^26 combinations they are hashed, past 2^64 told apart by their codes.
    for tags in [5, 20] {
        let wide: Vec<Record> = (0..80u64)
            .map(|i| {
                let mut r = rec("vllm", None, 1);
                for t in 0..tags {
                    r.tags.insert(format!("t{t}"), format!("{}", (i + t) % 40));
                }
                r
            })
            .collect();
        let firsts: Vec<usize> = (0..40).collect();
        assert_eq!(*Dataset::new(wide).configurations(), firsts, "{tags} tags");
    }
    assert!(Dataset::default().configurations().is_empty());
}

/// The filter pass before configurations (the reference for [`Dataset::filter_pass`]):
/// one pass over the rows: a
/// row no filter rejects matches and counts in every dimension, a row exactly one filter
/// rejects counts in that filter's dimension only.
fn filter_pass_by_rows(ds: &Dataset, filter: &Filter) -> FilterPass {
    let masks = ds.masks(filter);
    let impossible = masks.iter().any(|(ci, _)| *ci == usize::MAX);
    let columns = &ds.index.columns;
    let n = ds.len();
    let mut counts: Vec<Vec<usize>> = columns.iter().map(|c| vec![0; c.dict.len() + 1]).collect();
    let mut rows = Vec::new();
    if impossible {
        // No row matches and every count stays 0.
    } else if masks.is_empty() {
        // No filter: every row matches; each column counts its codes on its own.
        rows = (0..n).collect();
        for (col, counts) in columns.iter().zip(&mut counts) {
            for c in col.codes.iter().take(n) {
                if let Some(x) = counts.get_mut(c as usize) {
                    *x += 1;
                }
            }
        }
    } else {
        let checks: Vec<(usize, &Codes, &[bool])> = masks
            .iter()
            .map(|(ci, pass)| (*ci, &columns[*ci].codes, pass.as_slice()))
            .collect();
        let passes = |codes: &Codes, pass: &[bool], row: usize| {
            codes
                .try_get(row)
                .and_then(|c| pass.get(c as usize))
                .copied()
                .unwrap_or(false)
        };
        let count = |counts: &mut Vec<usize>, codes: &Codes, row: usize| {
            if let Some(x) = codes.try_get(row).and_then(|c| counts.get_mut(c as usize)) {
                *x += 1;
            }
        };
        for row in 0..n {
            // Which constrained column (if exactly one) rejects this row.
            let mut failing = usize::MAX;
            let mut failures = 0;
            for &(ci, codes, pass) in &checks {
                if !passes(codes, pass, row) {
                    failures += 1;
                    failing = ci;
                    if failures > 1 {
                        break;
                    }
                }
            }
            match failures {
                0 => {
                    rows.push(row);
                    for (col, counts) in columns.iter().zip(&mut counts) {
                        count(counts, &col.codes, row);
                    }
                }
                1 => {
                    if let (Some(col), Some(counts)) =
                        (columns.get(failing), counts.get_mut(failing))
                    {
                        count(counts, &col.codes, row);
                    }
                }
                _ => {}
            }
        }
    }
    let facets = ds.facets_of(filter, counts);
    // A configuration matches when its first row does (its rows go together).
    let configurations = ds
        .configurations()
        .iter()
        .map(|first| rows.binary_search(first).is_ok())
        .collect();
    FilterPass {
        rows,
        facets,
        configurations,
    }
}

/// Records from `(engine, gpu, batch, site, metric)` choices.
fn generated(rows: &[(u8, u8, u16, u8, u8)]) -> Vec<Record> {
    let engines = ["vllm", "sglang", "tgi"];
    let gpus = [None, Some("A100"), Some("H100")];
    rows.iter()
        .map(|&(e, g, b, site, m)| {
            let mut r = rec(
                engines[usize::from(e) % 3],
                gpus[usize::from(g) % 3],
                u64::from(b),
            );
            if site % 4 != 0 {
                r.tags.insert("site".into(), format!("s{}", site % 4));
            }
            match m % 3 {
                0 => {}
                1 => r.set_metric(MetricKey::OutputThroughput, f64::from(b) * 1.5),
                _ => r.set_metric(MetricKey::Completed, f64::from(site)),
            }
            r
        })
        .collect()
}

/// A filter from `(dimension, value)` choices: engine, gpu (with "no value"), batch,
/// site, and a dimension no record has.
fn generated_filter(choices: &[(u8, u8)]) -> Filter {
    let mut f = Filter::all();
    for &(d, v) in choices {
        f = match d % 5 {
            0 => f.select(
                Dim::Engine,
                Some(["vllm", "sglang", "tgi", "trt"][usize::from(v) % 4].into()),
            ),
            1 => f.select(
                Dim::Gpu,
                [None, Some("A100".into()), Some("H100".into())][usize::from(v) % 3].clone(),
            ),
            2 => f.select(Dim::BatchSize, Some(f64::from(v % 8).into())),
            3 => f.select(
                DimKey::Tag("site".into()),
                (v % 4 != 0).then(|| format!("s{}", v % 4).into()),
            ),
            _ => f.select(Dim::Model, (v % 2 == 0).then(|| "llama".into())),
        };
    }
    f
}

proptest::proptest! {
    #[test]
    fn filter_pass_by_configuration_equals_the_pass_over_rows(
        rows in proptest::collection::vec((0u8..3, 0u8..3, 0u16..8, 0u8..4, 0u8..3), 0..120),
        choices in proptest::collection::vec((0u8..5, 0u8..8), 0..5),
        cut in 0usize..40,
    ) {
        let f = generated_filter(&choices);
        let records = generated(&rows);
        // Kept as records; part kept as columns; after rows are removed.
        let mut ds = Dataset::new(records.clone());
        let pass = ds.filter_pass(&f);
        proptest::prop_assert_eq!(&pass, &filter_pass_by_rows(&ds, &f));
        proptest::prop_assert_eq!(&ds.matching(&f), &pass.rows);
        // The metrics of the matching rows, every row looked at.
        let metrics: BTreeSet<MetricKey> = pass
            .rows
            .iter()
            .flat_map(|&r| records[r].metrics.keys().cloned())
            .collect();
        proptest::prop_assert_eq!(
            ds.metrics_present(&pass.rows),
            metrics.into_iter().collect::<Vec<_>>()
        );
        let half = records.len() / 2;
        let mut mixed = Dataset::new(records[..half].to_vec());
        mixed.extend_columnar(Index::build(&records[half..]));
        proptest::prop_assert_eq!(mixed.filter_pass(&f), filter_pass_by_rows(&ds, &f));
        ds.remove_rows(cut..cut + 7);
        proptest::prop_assert_eq!(ds.filter_pass(&f), filter_pass_by_rows(&ds, &f));
    }
}

#[test]
fn filter_pass_over_hundreds_of_configurations() {
    // 3 engines x 3 GPUs x 400 batches: 3,600 configurations, two bytes a row.
    let rows: Vec<(u8, u8, u16, u8, u8)> = (0..4000u16)
        .map(|i| ((i % 3) as u8, ((i / 3) % 3) as u8, i % 400, 1, 1))
        .collect();
    let ds = Dataset::new(generated(&rows));
    assert_eq!(ds.configuration_index().of_row.width(), 2);
    assert_eq!(ds.configurations().len(), 3600);
    for choices in [
        vec![],
        vec![(0, 0)],
        vec![(0, 1), (1, 2)],
        vec![(2, 3), (4, 1)],
    ] {
        let f = generated_filter(&choices);
        assert_eq!(ds.filter_pass(&f), filter_pass_by_rows(&ds, &f), "{f:?}");
    }
    let f = generated_filter(&[(0, 1), (1, 2)]);
    let pass = ds.filter_pass(&f);
    // sglang on H100: i % 3 == 1 and (i / 3) % 3 == 2.
    let expected: Vec<usize> = (0..4000)
        .filter(|i| i % 3 == 1 && (i / 3) % 3 == 2)
        .collect();
    assert_eq!(pass.rows, expected);
}

#[test]
fn row_configurations_as_narrow_as_their_count() {
    for (count, width) in [(1, 1), (256, 1), (257, 2), (65_536, 2), (65_537, 4)] {
        // Numbered in order of first appearance, then the first again: the numbers kept
        // before a widening survive it.
        let ids: Vec<u32> = (0..count).chain([0]).collect();
        let mut narrow = configs::RowConfigs::default();
        for &id in &ids {
            narrow.push(id, ids.len());
        }
        assert_eq!(narrow.width(), width, "{count}");
        let mut seen = Vec::new();
        narrow.each(None, |row, id| seen.push((row, id)));
        let expected: Vec<(usize, u32)> = ids.iter().copied().enumerate().collect();
        assert_eq!(seen, expected, "{count}");
        let last = count as usize - 1;
        let mut selected = vec![false; count as usize];
        selected[last] = true;
        let rows = narrow.rows_where(&selected, 1);
        let want: Vec<usize> = if last == 0 { vec![0, 1] } else { vec![last] };
        assert_eq!(rows, want, "{count}");
        let picked = [last, 0];
        let mut some = Vec::new();
        narrow.each(Some(&picked), |row, id| some.push((row, id)));
        assert_eq!(some, [(last, last as u32), (0, 0)], "{count}");
    }
}

#[test]
fn index_codes_widen_in_place_as_appends_bring_values() {
    // Batch sizes 0, 1, 2, ... (code = batch + 1), one GPU and one metric set throughout:
    // the batch column crosses 255 and then 65,535 values as runs are appended.
    let records: Vec<Record> = (0..66_000u64)
        .map(|b| {
            let mut r = rec("vllm", Some("A100"), b);
            r.set_metric(MetricKey::OutputThroughput, b as f64);
            r
        })
        .collect();
    let batch = |i: &Index| -> Column {
        let key = DimKey::Known(Dim::BatchSize);
        i.columns.iter().find(|c| c.key == key).cloned().unwrap()
    };
    let mut appended = Index::default();
    let mut start = 0;
    for (end, width) in [
        (200, 1),
        (255, 1),
        (256, 2),
        (400, 2),
        (65_535, 2),
        (65_536, 4),
        (66_000, 4),
    ] {
        appended.append(Index::build(&records[start..end]));
        start = end;
        let built = Index::build(&records[..end]);
        assert_eq!(appended, built, "{end}");
        let (a, b) = (batch(&appended), batch(&built));
        assert_eq!((a.codes.width(), b.codes.width()), (width, width), "{end}");
        assert_eq!(a.codes.len(), end);
        assert_eq!((a.codes.get(0), a.codes.get(end - 1)), (1, end as u32));
        assert!(a.codes.iter().eq(1..=end as u32));
        assert_eq!(a.missing, 0);
        // One GPU, one set of metrics: no byte a row.
        let gpu = appended.columns.iter().find(|c| c.key == Dim::Gpu.into());
        assert_eq!(gpu.map(|c| c.codes.heap_bytes()), Some(0));
        assert_eq!(appended.row_metric_set.heap_bytes(), 0);
        assert_eq!(appended.row_metric_set.len(), end);
    }
    // A row without a batch size and with another set of metrics widens nothing.
    let mut other = rec("vllm", Some("A100"), 0);
    other.batch_size = None;
    appended.append(Index::build(&[other]));
    let a = batch(&appended);
    assert_eq!((a.codes.width(), a.codes.get(66_000), a.missing), (4, 0, 1));
    assert_eq!(appended.row_metric_set.width(), 1);
    assert_eq!(
        (
            appended.row_metric_set.get(0),
            appended.row_metric_set.get(66_000)
        ),
        (0, 1)
    );
    let ds = Dataset::new(records);
    let f = Filter::all().select(Dim::BatchSize, Some(DimValue::Num(65_535.0)));
    assert_eq!(ds.matching(&f), vec![65_535]);
    assert_eq!(ds.filter_pass(&f).rows, vec![65_535]);
}

#[test]
fn empty_dataset() {
    let ds = Dataset::new(Vec::new());
    assert!(ds.matching(&Filter::all()).is_empty());
    assert!(ds.facets(&Filter::all()).is_empty());
}
