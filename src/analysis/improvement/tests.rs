use super::*;
use crate::model::{Dim, LatencyMetric, Stat};

/// A record of one GPU, model and batch size with its throughput and a TTFT of
/// 1000 / throughput (so faster means both more throughput and less TTFT).
pub(crate) fn rec(gpu: &str, model: &str, batch: u64, tput: f64) -> crate::model::Record {
    let mut r = crate::model::Record {
        gpu: Some(gpu.into()),
        model: Some(model.into()),
        batch_size: Some(batch),
        ..crate::model::Record::default()
    };
    r.set_metric(MetricKey::OutputThroughput, tput);
    r.set_metric(
        MetricKey::latency(LatencyMetric::Ttft, Stat::Mean),
        1000.0 / tput,
    );
    r
}

fn sample() -> Dataset {
    Dataset::new(vec![
        rec("Tesla", "a", 1, 100.0),
        rec("A100", "a", 1, 150.0),
        rec("Tesla", "a", 8, 200.0),
        rec("A100", "a", 8, 180.0),
        rec("Tesla", "b", 1, 50.0),
        rec("A100", "c", 1, 10.0),
    ])
}

fn all(ds: &Dataset) -> Vec<usize> {
    (0..ds.len()).collect()
}

#[test]
fn a_table_kept_as_columns_compares_as_its_records() {
    let records = sample().into_records();
    let mut columnar = Dataset::default();
    columnar.extend_columnar(crate::model::Index::build(&records));
    let spec = ImprovementSpec::new(Dim::Gpu, "Tesla", "A100", MetricKey::OutputThroughput);
    let table = improvement(&columnar, &all(&columnar), &spec).unwrap();
    assert_eq!(
        table,
        improvement(&sample(), &all(&sample()), &spec).unwrap()
    );
    assert_eq!(table.rows.len(), 2);
    let missing = ImprovementSpec::new(Dim::Gpu, "Tesla", "H100", MetricKey::OutputThroughput);
    assert_eq!(
        improvement(&columnar, &all(&columnar), &missing)
            .unwrap_err()
            .to_string(),
        improvement(&sample(), &all(&sample()), &missing)
            .unwrap_err()
            .to_string()
    );
}

#[test]
fn signs_follow_direction() {
    assert_eq!(
        improvement_pct(100.0, 150.0, Direction::HigherIsBetter),
        Some(50.0)
    );
    assert_eq!(
        improvement_pct(100.0, 50.0, Direction::LowerIsBetter),
        Some(50.0)
    );
    assert_eq!(improvement_pct(0.0, 50.0, Direction::LowerIsBetter), None);
    assert_eq!(
        improvement_pct(1e-300, 1e300, Direction::HigherIsBetter),
        None
    );
}

/// The private mean this table had counted every value; `stats::mean` leaves out
/// non-finite ones, so one infinite row no longer makes the whole mean infinite.
#[test]
fn the_mean_improvement_leaves_out_non_finite_rows() {
    let ds = sample();
    let spec = ImprovementSpec::new(Dim::Gpu, "Tesla", "A100", MetricKey::OutputThroughput);
    let mut t = improvement(&ds, &all(&ds), &spec).unwrap();
    // Rows: +50 % (batch 1) and 180 / 200 − 1 = −10 % (batch 8).
    assert!((t.mean_improvement_pct().unwrap() - 20.0).abs() < 1e-9);
    let mut odd = t.rows[0].clone();
    odd.improvement_pct = Some(f64::INFINITY);
    t.rows.push(odd);
    assert!((t.mean_improvement_pct().unwrap() - 20.0).abs() < 1e-9);
}

#[test]
fn matched_rows_unmatched_and_groups() {
    let ds = sample();
    let spec = ImprovementSpec::new(Dim::Gpu, "Tesla", "A100", MetricKey::OutputThroughput);
    let mut t = improvement(&ds, &all(&ds), &spec).unwrap();
    assert_eq!(
        t.matching.key_dims,
        vec![Dim::Model.into(), Dim::BatchSize.into()]
    );
    assert_eq!(t.rows.len(), 2);
    assert_eq!(t.matching.unmatched_baseline, vec![4]);
    assert_eq!(t.matching.unmatched_candidate, vec![5]);
    t.sort(ImprovementSort::Improvement, true);
    assert_eq!(t.rows[0].improvement_pct, Some(50.0));
    assert!((t.rows[1].improvement_pct.unwrap() + 10.0).abs() < 1e-9);
    let by = improvement_by(&t, &Dim::BatchSize.into()).unwrap();
    assert_eq!(by.len(), 2);
    assert!(improvement_by(&t, &Dim::Engine.into()).is_err());
    let heat = improvement_heatmap(&t, &Dim::BatchSize.into(), &Dim::Model.into()).unwrap();
    assert_eq!(heat.mean_improvement_pct[0][0], Some(50.0));
    assert!((heat.mean_improvement_pct[0][1].unwrap() + 10.0).abs() < 1e-9);
}

#[test]
fn latency_improvement_is_positive_when_faster() {
    let ds = sample();
    let metric = MetricKey::latency(LatencyMetric::Ttft, Stat::Mean);
    let spec = ImprovementSpec::new(Dim::Gpu, "Tesla", "A100", metric);
    let t = improvement(&ds, &all(&ds), &spec).unwrap();
    let row = t.row(&[Some("a".into()), Some(1.0.into())]).unwrap();
    assert!(row.improvement_pct.unwrap() > 0.0);
    assert!(t.rule.contains("lower"));
}

#[test]
fn repeats_compare_as_means_and_overlap_is_not_distinguishable() {
    let run = |gpu: &str, batch: u64, n: u32, tput: f64| {
        let mut r = rec(gpu, "a", batch, tput);
        r.tags.insert("run".into(), n.to_string());
        r
    };
    let ds = Dataset::new(vec![
        // Batch 1: 100, 110, 120 against 105, 115, 125: overlapping intervals.
        run("Tesla", 1, 1, 100.0),
        run("Tesla", 1, 2, 110.0),
        run("Tesla", 1, 3, 120.0),
        run("A100", 1, 1, 105.0),
        run("A100", 1, 2, 115.0),
        run("A100", 1, 3, 125.0),
        // Batch 8: 200 ± little against 300 ± little: told apart.
        run("Tesla", 8, 1, 200.0),
        run("Tesla", 8, 2, 201.0),
        run("A100", 8, 1, 300.0),
        run("A100", 8, 2, 301.0),
    ]);
    let spec = ImprovementSpec::new(Dim::Gpu, "Tesla", "A100", MetricKey::OutputThroughput);
    let t = improvement(&ds, &all(&ds), &spec).unwrap();
    assert!(t.matching.duplicates.is_empty(), "{:?}", t.matching);
    assert_eq!(t.rows.len(), 2);
    let b1 = &t.rows[0];
    assert_eq!((b1.baseline_value, b1.candidate_value), (110.0, 115.0));
    assert!(b1.baseline_interval.unwrap().contains(110.0));
    assert_eq!(b1.noise_text(), Some("not distinguishable"));
    assert_eq!(t.rows[1].noise_text(), Some("distinguishable"));
    assert_eq!(
        value_with_interval(110.0, b1.baseline_interval.as_ref()),
        "110.00 ± 24.84"
    );
    let md = t.to_text_table().to_markdown();
    assert!(md.contains("| not distinguishable |"), "{md}");
    // Records sharing a key that differ in an ignored configuration stay ambiguous.
    let mut other = ds.clone().into_records();
    other[1].engine_version = Some("v2".into());
    let other = Dataset::new(other);
    let t = improvement(
        &other,
        &all(&other),
        &spec.clone().ignoring(Dim::EngineVersion),
    )
    .unwrap();
    assert_eq!(t.matching.duplicates.len(), 1);
    assert_eq!(t.rows.len(), 1);
}

#[test]
fn errors_name_what_is_wrong() {
    let ds = sample();
    let spec = ImprovementSpec::new(Dim::Gpu, "Tesla", "H200", MetricKey::OutputThroughput);
    let e = improvement(&ds, &all(&ds), &spec).unwrap_err();
    assert_eq!(
        e.to_string(),
        "no records have gpu = H200; values present: A100, Tesla"
    );
    let spec = ImprovementSpec::new(Dim::Gpu, "Tesla", "Tesla", MetricKey::OutputThroughput);
    assert!(improvement(&ds, &all(&ds), &spec).is_err());
    let spec = ImprovementSpec::new(Dim::Gpu, "Tesla", "A100", MetricKey::Failed);
    let e = improvement(&ds, &all(&ds), &spec).unwrap_err();
    assert!(
        e.to_string()
            .starts_with("no baseline records have the metric failed"),
        "{e}"
    );
}
