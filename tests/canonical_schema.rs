//! Canonical JSON output validates against the committed JSON Schema, and the schema names
//! exactly the model's dimensions and fixed metrics (so neither drifts from the other).
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use benchlens::model::canonical::to_json_value;
use benchlens::model::{Dim, LatencyMetric, MetricKey, Percentile, Record, RequestDetail, Stat};
use serde_json::Value;

fn schema() -> Value {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/schema/benchlens-records.schema.json"
    ))
    .expect("schema file");
    serde_json::from_str(&text).expect("schema is JSON")
}

fn full_record() -> Record {
    let mut r = Record::default();
    for d in Dim::ALL {
        let v = match d.kind() {
            benchlens::model::DimKind::Text => "x".into(),
            _ => 4.0.into(),
        };
        r.set_known(*d, Some(v)).unwrap();
    }
    r.request_rate = Some(f64::INFINITY);
    r.tags.insert("node".into(), "a7".into());
    for m in [
        MetricKey::Completed,
        MetricKey::Failed,
        MetricKey::DurationS,
        MetricKey::RequestThroughput,
        MetricKey::RequestGoodput,
        MetricKey::InputThroughput,
        MetricKey::OutputThroughput,
        MetricKey::TotalTokenThroughput,
        MetricKey::Extra("throughput".into()),
    ] {
        r.set_metric(m, 1.5);
    }
    for lm in LatencyMetric::ALL {
        for stat in [
            Stat::Mean,
            Stat::Median,
            Stat::Std,
            Stat::P(Percentile::new(99.9).unwrap()),
            Stat::P(Percentile::new(50.0).unwrap()),
        ] {
            r.set_metric(MetricKey::latency(lm, stat), f64::NAN);
        }
    }
    r.inferred.insert("gpu".into(), "user".into());
    r.requests.push(RequestDetail {
        input_len: Some(10),
        output_len: None,
        ttft_ms: Some(f64::INFINITY),
        itl_ms: vec![1.0, 2.0].into(),
        e2el_ms: Some(3.0),
        error: Some("HTTP 500".into()),
        intended_s: Some(0.5),
        sent_s: Some(0.75),
        error_kind: Some("http_500".into()),
    });
    r
}

#[test]
fn canonical_json_validates_against_the_schema() {
    let validator = jsonschema::validator_for(&schema()).expect("schema compiles");
    let doc = to_json_value(&[full_record(), Record::default()]);
    let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

#[test]
fn the_schema_rejects_what_the_format_forbids() {
    let validator = jsonschema::validator_for(&schema()).expect("schema compiles");
    for bad in [
        r#"{"schema_version": 1, "records": [{"gpu_count": -1}]}"#,
        r#"{"schema_version": 1, "records": [{"mean_ttft_ms": "fast"}]}"#,
        r#"{"schema_version": 1, "records": [{"unknown_field": 1}]}"#,
        r#"{"schema_version": 1, "records": [{"tag.node": 3}]}"#,
        r#"{"records": []}"#,
    ] {
        let doc: Value = serde_json::from_str(bad).unwrap();
        assert!(!validator.is_valid(&doc), "accepted {bad}");
    }
}

#[test]
fn the_schema_names_every_dimension_and_fixed_metric() {
    let schema = schema();
    let props = schema["$defs"]["record"]["properties"]
        .as_object()
        .expect("record properties");
    let mut expected: Vec<String> = Dim::ALL.iter().map(|d| d.name().to_string()).collect();
    expected.extend(
        [
            "completed",
            "failed",
            "duration_s",
            "request_throughput",
            "request_goodput",
            "input_throughput",
            "output_throughput",
            "total_token_throughput",
            "inferred",
            "requests",
        ]
        .map(String::from),
    );
    let got: Vec<String> = props.keys().cloned().collect();
    assert_eq!(got, expected);
    for name in &expected[Dim::ALL.len()..expected.len() - 2] {
        assert!(MetricKey::from_name(name).is_some(), "{name}");
    }
}
