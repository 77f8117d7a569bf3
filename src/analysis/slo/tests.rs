use super::*;
use crate::model::{Dim, LatencyMetric, Percentile, Record};

fn p99_ttft() -> MetricKey {
    MetricKey::latency(LatencyMetric::Ttft, Stat::P(Percentile::new(99.0).unwrap()))
}

fn rec(engine: &str, rate: f64, ttft: f64, tpot: f64, tput: f64) -> Record {
    let mut r = Record {
        engine: Some(engine.into()),
        request_rate: Some(rate),
        ..Record::default()
    };
    r.set_metric(p99_ttft(), ttft);
    r.set_metric(MetricKey::latency(LatencyMetric::Tpot, Stat::Mean), tpot);
    r.set_metric(MetricKey::OutputThroughput, tput);
    r
}

fn spec() -> SloSpec {
    SloSpec {
        limits: vec![
            SloLimit::parse("p99_ttft_ms <= 500").unwrap(),
            SloLimit::parse("mean_tpot_ms≤50").unwrap(),
        ],
        load: Dim::RequestRate.into(),
        throughput: MetricKey::OutputThroughput,
        series_by: vec![Dim::Engine.into()],
    }
}

#[test]
fn highest_passing_load_and_interpolated_boundary() {
    let ds = Dataset::new(vec![
        rec("a", 1.0, 100.0, 20.0, 100.0),
        rec("a", 4.0, 300.0, 30.0, 400.0),
        rec("a", 8.0, 700.0, 40.0, 800.0),
        rec("a", f64::INFINITY, 9000.0, 90.0, 900.0),
        rec("b", 1.0, 600.0, 20.0, 90.0),
        rec("c", 1.0, 100.0, 20.0, 90.0),
        rec("c", f64::INFINITY, 200.0, 20.0, 95.0),
    ]);
    let all: Vec<usize> = (0..ds.len()).collect();
    let out = slo(&ds, &all, &spec());
    let a = &out[0];
    let m = a.measured.as_ref().unwrap();
    assert_eq!(
        (m.load, m.throughput, m.interpolated),
        (4.0, Some(400.0), false)
    );
    let e = a.estimate.as_ref().unwrap();
    // TTFT crosses 500 halfway between 300 (rate 4) and 700 (rate 8): rate 6.
    assert!(e.interpolated);
    assert!((e.load - 6.0).abs() < 1e-12);
    assert!((e.throughput.unwrap() - 600.0).abs() < 1e-9);
    assert_eq!(a.checks[2].violations, ["p99_ttft_ms 700.00 > 500"]);
    // b never meets the SLO.
    assert!(out[1].measured.is_none() && out[1].estimate.is_none());
    // c meets it even unbounded: measured inf, nothing to interpolate.
    assert_eq!(out[2].measured.as_ref().unwrap().load, f64::INFINITY);
    assert!(out[2].estimate.is_none());
    let md = slo_text_table(&out, &spec()).to_markdown();
    assert!(md.contains("| a | 4 | 400.00 | 6.00 | 600.00 |"), "{md}");
}

#[test]
fn a_table_kept_as_columns_gives_what_its_records_give() {
    let records = vec![
        rec("a", 1.0, 100.0, 20.0, 100.0),
        rec("a", 4.0, 300.0, 30.0, 400.0),
        rec("a", 4.0, 500.0, 30.0, 500.0),
        rec("a", 8.0, 700.0, 40.0, 800.0),
        rec("b", 1.0, 600.0, 20.0, 90.0),
        rec("c", f64::INFINITY, 200.0, 20.0, 95.0),
        rec("c", f64::NAN, 200.0, 20.0, 95.0),
        Record {
            engine: Some("c".into()),
            ..Record::default()
        },
    ];
    let mut columnar = Dataset::default();
    columnar.extend_columnar(crate::model::Index::build(&records));
    let kept = Dataset::new(records);
    let all: Vec<usize> = (0..kept.len()).collect();
    let out = slo(&kept, &all, &spec());
    assert_eq!(slo(&columnar, &all, &spec()), out);
    // Two records at rate 4 are averaged: TTFT 400, throughput 450; NaN and no rate
    // leave their records out.
    assert_eq!(out[0].checks[1].records, [1, 2]);
    assert_eq!(
        out[0].measured.as_ref().map(|m| (m.load, m.throughput)),
        Some((4.0, Some(450.0)))
    );
    assert_eq!(out[2].checks.len(), 1);
    assert_eq!(out[2].checks[0].records, [5]);
}

#[test]
fn repeats_whose_interval_holds_a_limit_say_so() {
    let run = |r: Record, tag: &str| {
        let mut r = r;
        r.tags.insert("run".into(), tag.into());
        r
    };
    let ds = Dataset::new(vec![
        run(rec("a", 1.0, 100.0, 20.0, 100.0), "1"),
        run(rec("a", 4.0, 450.0, 30.0, 400.0), "1"),
        run(rec("a", 4.0, 520.0, 30.0, 400.0), "2"),
        run(rec("a", 4.0, 480.0, 30.0, 400.0), "3"),
        run(rec("a", 8.0, 700.0, 40.0, 800.0), "1"),
        // Rate 1 of b: two records of different input lengths, not repeats.
        run(rec("b", 1.0, 100.0, 20.0, 90.0), "1"),
        {
            let mut r = run(rec("b", 1.0, 900.0, 20.0, 90.0), "2");
            r.input_len = Some(4096.0);
            r
        },
    ]);
    let all: Vec<usize> = (0..ds.len()).collect();
    let out = slo(&ds, &all, &spec());
    // Rate 4 passes on its mean (483.3 ms), but its three runs' interval holds 500.
    assert_eq!(out[0].measured.as_ref().map(|m| m.load), Some(4.0));
    assert_eq!(out[0].checks[1].noise.len(), 1);
    let said = out[0].noise_text().unwrap();
    assert!(
        said == "not distinguishable at 4: p99_ttft_ms 95 % interval 396.1 – 570.6 holds 500",
        "{said}"
    );
    // A mean of different configurations has no interval.
    assert!(out[1].checks[0].noise.is_empty());
    assert_eq!(out[1].noise_text(), None);
    let md = slo_text_table(&out, &spec()).to_markdown();
    assert!(md.contains("| Noise |"), "{md}");
    // Without repeats the table is as it was.
    let plain = slo(&ds, &[0, 1, 4], &spec());
    assert!(!slo_text_table(&plain, &spec())
        .to_markdown()
        .contains("Noise"));
}

#[test]
fn limits_parse_with_clear_errors() {
    assert_eq!(
        SloLimit::parse("p99_ttft_ms<=500").unwrap().max_value,
        500.0
    );
    let e = SloLimit::parse("ttft<500").unwrap_err();
    assert!(e.to_string().contains("is not NAME:LIMIT"), "{e}");
    let e = SloLimit::parse("nope<=5").unwrap_err();
    assert!(e.to_string().contains("unknown objective \"nope\""), "{e}");
    // The objectives' other forms: a percentile as a capacity writes it, and a bound on
    // every request, which records cannot answer.
    assert_eq!(
        SloLimit::parse("p99_ttft:500"),
        SloLimit::parse("p99_ttft_ms<=500")
    );
    let e = SloLimit::parse("ttft:500").unwrap_err();
    assert!(e.to_string().contains("bounds every request"), "{e}");
}

#[test]
fn limits_on_absent_metrics_are_named_with_what_exists() {
    let present = vec![
        MetricKey::latency(LatencyMetric::Ttft, Stat::Mean),
        MetricKey::latency(LatencyMetric::Ttft, Stat::P(Percentile::new(90.0).unwrap())),
        MetricKey::latency(LatencyMetric::Ttft, Stat::Std),
        MetricKey::latency(LatencyMetric::E2el, Stat::Mean),
        MetricKey::OutputThroughput,
    ];
    let limits = spec().limits;
    let cov = slo_coverage(&limits, &present);
    assert!(cov.is_partial());
    assert_eq!(
        cov.unchecked.iter().map(limit_text).collect::<Vec<_>>(),
        ["p99_ttft_ms<=500", "mean_tpot_ms<=50"]
    );
    // p99 TTFT is absent: its highest percentile present stands in; no TPOT at all.
    assert_eq!(
        cov.suggested[0].as_ref().map(limit_text).as_deref(),
        Some("p90_ttft_ms<=500")
    );
    assert_eq!(cov.suggested[1], None);
    assert_eq!(limits_text(&cov.repaired(&limits)), "p90_ttft_ms<=500");
    let msg = cov.message().unwrap();
    assert!(msg.contains("p99_ttft_ms<=500, mean_tpot_ms<=50"), "{msg}");
    assert!(
        msg.contains("Latency metrics present: mean_ttft_ms, p90_ttft_ms, mean_e2el_ms."),
        "{msg}"
    );

    let all = slo_coverage(
        &limits,
        &[
            p99_ttft(),
            MetricKey::latency(LatencyMetric::Tpot, Stat::Mean),
        ],
    );
    assert!(!all.is_partial());
    assert_eq!(all.message(), None);
    assert_eq!(all.repaired(&limits), limits);
    // A table's own latency columns are offered too (seed 002), with nothing to suggest.
    let own = slo_coverage(
        &limits,
        &[MetricKey::Extra("average_latency_per_token_ms".into())],
    );
    assert_eq!(own.suggested, [None, None]);
    assert!(own
        .message()
        .unwrap()
        .contains("present: extra.average_latency_per_token_ms."));
    let none = slo_coverage(&limits, &[MetricKey::OutputThroughput]);
    assert!(none.message().unwrap().contains("no latency metric"));
}
