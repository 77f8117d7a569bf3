//! Canonical JSON and CSV: benchlens's own file formats, written by `benchlens convert` and
//! `benchlens run` and read back by every face. The JSON Schema is
//! `schema/benchlens-records.schema.json`.
//!
//! # JSON
//!
//! ```json
//! {
//!   "schema_version": 1,
//!   "records": [
//!     {
//!       "source": "run.json", "model": "meta-llama/Llama-3.1-8B-Instruct", "engine": "vllm",
//!       "gpu": "H100", "gpu_count": 1, "request_rate": "inf",
//!       "tag.node": "a7",
//!       "request_throughput": 26.9, "mean_ttft_ms": 17419.66, "p99.9_itl_ms": 322.99,
//!       "extra.throughput": 126.34,
//!       "inferred": {"gpu": "user"},
//!       "requests": [{"input_len": 1000, "output_len": 100, "ttft_ms": 51.2,
//!                     "itl_ms": [7.1, 6.9], "e2el_ms": 780.4, "error": null,
//!                     "intended_s": 0.5, "sent_s": 0.52}]
//!     }
//!   ]
//! }
//! ```
//!
//! Each record is one flat object. Field names are the dimension names of [`Dim`], `tag.<key>`
//! for free-form tags, the metric names of [`MetricKey`] (`extra.<name>` for metrics without a
//! canonical name), `inferred` (field name → where the value came from) and `requests`
//! (optional per-request detail). Absent fields are omitted. Numbers that JSON cannot hold are
//! written as the strings `"inf"`, `"-inf"` and `"NaN"`, and read back exactly.
//!
//! # CSV
//!
//! One header row, then one row per record. Columns are the same names as the JSON fields, in
//! canonical order (dimensions, tags, metrics, `inferred`); only columns some record uses are
//! written. Empty cells are missing values; `inferred` is `field=source` pairs joined by `;`.
//! Per-request detail is not written to CSV (use JSON for it).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::dim::{format_number, Dim, DimKey, DimKind, DimValue};
use super::metric::MetricKey;
use super::record::{Record, RequestDetail};
use super::SCHEMA_VERSION;

mod csv_text;
mod write;
pub use csv_text::{duplicate_column_warnings, from_csv, header_is_canonical};
pub use write::{write_csv, write_json, write_json_made, Made, Part, RequestOut};

/// Records read from a canonical file, with what was skipped along the way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Decoded {
    /// The records read.
    pub records: Vec<Record>,
    /// Fields or rows that were skipped, and why.
    pub warnings: Vec<String>,
}

/// Why a canonical file could not be read at all.
///
/// Parser errors are kept as text with their position, not as a `source`, for the reason
/// given on [`crate::ingest::IngestError`]: the error is `Clone` and `PartialEq`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CanonicalError {
    /// Not valid JSON.
    #[error("invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// Valid JSON of another shape.
    #[error("not a benchlens records file: {0}")]
    Shape(String),
    /// A newer layout than this build understands.
    #[error("schema_version {0} is newer than this benchlens understands ({SCHEMA_VERSION})")]
    UnsupportedVersion(u64),
    /// Not readable CSV.
    #[error("invalid CSV at line {line}: {message}")]
    Csv {
        /// 1-based line.
        line: u64,
        /// What the parser said.
        message: String,
    },
}

/// A number for JSON: finite numbers as numbers, the rest as `"inf"`, `"-inf"`, `"NaN"`.
pub fn number_to_json(v: f64) -> Value {
    serde_json::Number::from_f64(v)
        .map(Value::Number)
        .unwrap_or_else(|| Value::String(format_number(v)))
}

/// A number from JSON: a number, or a string holding one (`"inf"`, `"NaN"`, `"1,024"`).
pub fn number_from_json(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => parse_number_text(s),
        _ => None,
    }
}

/// Parses a number written as text: `inf`, `Infinity`, `NaN`, `1,024`, ` 12.5 `.
pub fn parse_number_text(s: &str) -> Option<f64> {
    let t = s.trim();
    let first = *t.as_bytes().first()?;
    // A word only where the text does not start as a plain number does.
    if !(first.is_ascii_digit() || first == b'.') {
        let is = |w: &str| t.eq_ignore_ascii_case(w);
        if is("inf") || is("+inf") || is("infinity") || is("+infinity") {
            return Some(f64::INFINITY);
        }
        if is("-inf") || is("-infinity") {
            return Some(f64::NEG_INFINITY);
        }
        if is("nan") {
            return Some(f64::NAN);
        }
    }
    // Rust also accepts "inf"/"nan" spellings handled above; reject anything else odd. Read
    // for every cell of every table: one look at each byte, and no allocation unless the
    // number has thousands commas.
    let mut commas = false;
    for b in t.bytes() {
        match b {
            b'0'..=b'9' | b'.' | b'-' | b'+' | b'e' | b'E' => {}
            b',' => commas = true,
            _ => return None,
        }
    }
    if !commas {
        return t.parse().ok();
    }
    let cleaned = t.replace(',', "");
    if cleaned.is_empty() {
        return None;
    }
    cleaned.parse().ok()
}

fn dim_to_json(d: Dim, v: &DimValue) -> Value {
    match (d.kind(), v) {
        (DimKind::Text, v) => Value::String(v.to_string()),
        (_, DimValue::Num(n)) => number_to_json(*n),
        (_, DimValue::Text(t)) => Value::String(t.clone()),
    }
}

fn request_to_json(r: &RequestDetail) -> Value {
    serde_json::to_value(RequestOut(r)).unwrap_or(Value::Null)
}

/// One record as a canonical JSON object.
pub fn record_to_json(r: &Record) -> Value {
    let mut m = record_fields(r);
    if !r.requests.is_empty() {
        m.insert(
            "requests".into(),
            Value::Array(r.requests.iter().map(request_to_json).collect()),
        );
    }
    Value::Object(m)
}

/// A record's fields but its requests, in the canonical order (`requests` goes last).
fn record_fields(r: &Record) -> Map<String, Value> {
    let mut m = Map::new();
    for d in Dim::ALL {
        if let Some(v) = r.known(*d) {
            m.insert(d.name().into(), dim_to_json(*d, &v));
        }
    }
    for (k, v) in &r.tags {
        m.insert(format!("tag.{k}"), Value::String(v.clone()));
    }
    for (k, v) in &r.metrics {
        m.insert(k.name(), number_to_json(*v));
    }
    if !r.series.is_empty() {
        let cols = &r.series;
        let series: Map<String, Value> = cols
            .iter()
            .map(|(k, v)| {
                let col = v.iter().map(|x| number_to_json(*x)).collect();
                (k.clone(), Value::Array(col))
            })
            .collect();
        m.insert("series".into(), Value::Object(series));
    }
    if !r.inferred.is_empty() {
        let inferred: Map<String, Value> = r
            .inferred
            .iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect();
        m.insert("inferred".into(), Value::Object(inferred));
    }
    m
}

/// The canonical JSON document for `records`.
pub fn to_json_value(records: &[Record]) -> Value {
    let mut doc = Map::new();
    doc.insert("schema_version".into(), Value::from(SCHEMA_VERSION));
    doc.insert(
        "records".into(),
        Value::Array(records.iter().map(record_to_json).collect()),
    );
    Value::Object(doc)
}

/// The canonical JSON text for `records` (pretty-printed, trailing newline): [`write_json`]
/// into a string.
pub fn to_json(records: &[Record]) -> String {
    let mut out = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write::write_records_json(&mut out, records);
    String::from_utf8(out).unwrap_or_default()
}

/// The canonical CSV text for `records`: [`write_csv`] into a string.
pub fn to_csv(records: &[Record]) -> String {
    write::records_csv(records)
}

/// Whether [`to_csv`] holds `records` exactly, so that reading it back gives them again
/// (checked cell by cell with the reader's own rule, without a CSV reader: the explorer's page
/// carries none).
pub fn csv_holds(records: &[Record]) -> bool {
    write::csv_holds_records(records)
}

/// Whether a parsed JSON document looks like a canonical records file.
pub fn looks_canonical(v: &Value) -> bool {
    v.get("schema_version").is_some() && v.get("records").is_some_and(Value::is_array)
}

/// Reads canonical JSON text.
pub fn from_json(text: &str) -> Result<Decoded, CanonicalError> {
    let v: Value = serde_json::from_str(text).map_err(|e| CanonicalError::Json {
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    from_json_value(&v)
}

/// Reads a parsed canonical JSON document: `{"schema_version", "records"}` or a bare array of
/// record objects.
pub fn from_json_value(v: &Value) -> Result<Decoded, CanonicalError> {
    let records = match v {
        Value::Object(doc) => {
            if let Some(version) = doc.get("schema_version") {
                let version = version.as_u64().ok_or_else(|| {
                    CanonicalError::Shape("schema_version is not a whole number".into())
                })?;
                if version > u64::from(SCHEMA_VERSION) {
                    return Err(CanonicalError::UnsupportedVersion(version));
                }
            }
            doc.get("records")
                .and_then(Value::as_array)
                .ok_or_else(|| CanonicalError::Shape("no \"records\" array".into()))?
        }
        Value::Array(items) => items,
        _ => {
            return Err(CanonicalError::Shape(
                "expected an object with \"records\" or an array".into(),
            ))
        }
    };
    let mut out = Decoded::default();
    for (i, item) in records.iter().enumerate() {
        match item.as_object() {
            Some(obj) => out.records.push(record_from_json(
                obj,
                &format!("records[{i}]"),
                &mut out.warnings,
            )),
            None => out
                .warnings
                .push(format!("records[{i}]: not an object, skipped")),
        }
    }
    Ok(out)
}

fn request_from_json(v: &Value, at: &str, warnings: &mut Vec<String>) -> Option<RequestDetail> {
    let Some(obj) = v.as_object() else {
        warnings.push(format!("{at}: not an object, skipped"));
        return None;
    };
    let count = |k: &str| obj.get(k).and_then(number_from_json).map(|n| n as u64);
    let real = |k: &str| obj.get(k).and_then(number_from_json);
    Some(RequestDetail {
        input_len: count("input_len"),
        output_len: count("output_len"),
        ttft_ms: real("ttft_ms"),
        itl_ms: obj
            .get("itl_ms")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(number_from_json).collect())
            .unwrap_or_default(),
        e2el_ms: real("e2el_ms"),
        error: obj.get("error").and_then(Value::as_str).map(str::to_string),
        intended_s: real("intended_s"),
        sent_s: real("sent_s"),
        error_kind: obj
            .get("error_kind")
            .and_then(Value::as_str)
            .map(str::to_string),
    })
}

/// A record's time series: columns of numbers (null for no value) as long as `t_s`; a column
/// of another length or that is not an array is left out with a warning.
fn series_from_json(
    cols: &Map<String, Value>,
    at: &str,
    warnings: &mut Vec<String>,
) -> BTreeMap<String, Vec<f64>> {
    let read = |v: &Value| -> Option<Vec<f64>> {
        v.as_array().map(|a| {
            a.iter()
                .map(|x| number_from_json(x).unwrap_or(f64::NAN))
                .collect()
        })
    };
    let len = cols.get("t_s").and_then(read).map(|t| t.len());
    let mut out = BTreeMap::new();
    for (k, v) in cols {
        match (read(v), len) {
            (Some(col), Some(n)) if col.len() == n => {
                out.insert(k.clone(), col);
            }
            (Some(col), Some(n)) => warnings.push(format!(
                "{at}.{k}: {} values for {n} seconds, ignored",
                col.len()
            )),
            (Some(_), None) => {
                warnings.push(format!("{at}: no t_s column, the series is ignored"));
                return BTreeMap::new();
            }
            (None, _) => warnings.push(format!("{at}.{k}: not an array, ignored")),
        }
    }
    out
}

/// Reads one record object; fields that cannot be used are skipped with a warning naming them.
pub fn record_from_json(obj: &Map<String, Value>, at: &str, warnings: &mut Vec<String>) -> Record {
    let mut r = Record::default();
    for (name, value) in obj {
        if value.is_null() {
            continue;
        }
        match name.as_str() {
            "inferred" => match value.as_object() {
                Some(m) => {
                    for (k, v) in m {
                        r.inferred
                            .insert(k.clone(), v.as_str().unwrap_or("unknown").to_string());
                    }
                }
                None => warnings.push(format!("{at}.inferred: not an object, ignored")),
            },
            "series" => match value.as_object() {
                Some(cols) => {
                    let series = series_from_json(cols, &format!("{at}.series"), warnings);
                    r.series = series;
                }
                None => warnings.push(format!("{at}.series: not an object, ignored")),
            },
            "requests" => match value.as_array() {
                Some(items) => {
                    r.requests = items
                        .iter()
                        .enumerate()
                        .filter_map(|(i, v)| {
                            request_from_json(v, &format!("{at}.requests[{i}]"), warnings)
                        })
                        .collect();
                }
                None => warnings.push(format!("{at}.requests: not an array, ignored")),
            },
            _ => {
                if let Some(key) = DimKey::from_name(name) {
                    let dv = match value {
                        Value::String(s) => DimValue::Text(s.clone()),
                        Value::Number(n) => DimValue::Num(n.as_f64().unwrap_or(f64::NAN)),
                        Value::Bool(b) => DimValue::Text(b.to_string()),
                        _ => {
                            warnings.push(format!("{at}.{name}: not a scalar, ignored"));
                            continue;
                        }
                    };
                    if let Err(e) = r.set_dim(&key, Some(dv)) {
                        warnings.push(format!("{at}.{name}: {e}, ignored"));
                    }
                } else if let Some(key) = MetricKey::from_name(name) {
                    match number_from_json(value) {
                        Some(v) => r.set_metric(key, v),
                        None => warnings.push(format!("{at}.{name}: not a number, ignored")),
                    }
                } else {
                    warnings.push(format!("{at}.{name}: unknown field, ignored"));
                }
            }
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{LatencyMetric, Percentile, Stat};

    #[test]
    fn csv_holds_exactly_the_records_csv_reads_back() {
        let plain = sample()
            .into_iter()
            .map(|mut r| {
                r.requests.clear();
                r
            })
            .collect::<Vec<_>>();
        let back = from_csv(&to_csv(&plain)).unwrap();
        assert_eq!(
            csv_holds(&plain),
            back.records == plain && back.warnings.is_empty()
        );
        let one = |f: &dyn Fn(&mut Record)| {
            let mut r = Record::default();
            r.set_metric(MetricKey::RequestThroughput, 2.5);
            f(&mut r);
            vec![r]
        };
        assert!(csv_holds(&one(&|_| {})));
        // What a CSV row cannot keep: spaces at the ends of a text (cells are trimmed),
        // per-request detail, and a file with no metric (not read as canonical CSV at all).
        assert!(!csv_holds(&one(&|r| r.model = Some(" m ".into()))));
        assert!(!csv_holds(&one(&|r| r
            .requests
            .push(RequestDetail::default()))));
        assert!(!csv_holds(&[Record {
            model: Some("m".into()),
            ..Record::default()
        }]));
        assert!(csv_holds(&one(&|r| r.model = Some("a, \"b\"\nc".into()))));
    }

    proptest::proptest! {
        #[test]
        fn csv_holds_agrees_with_reading_back(
            model in "\\PC{0,12}",
            label in proptest::option::of("[ a-z;=,]{0,6}"),
            rate in proptest::option::of(proptest::num::f64::ANY),
            value in proptest::num::f64::ANY,
        ) {
            let mut r = Record {
                model: Some(model.as_str().into()),
                label: label.map(|l| l.as_str().into()),
                request_rate: rate,
                ..Record::default()
            };
            r.set_metric(MetricKey::OutputThroughput, value);
            let records = vec![r];
            let back = from_csv(&to_csv(&records)).unwrap();
            let exact = back.records == records && back.warnings.is_empty();
            // Never claims to hold what does not read back.
            proptest::prop_assert!(!csv_holds(&records) || exact);
            proptest::prop_assert_eq!(csv_holds(&records), exact);
        }
    }

    fn sample() -> Vec<Record> {
        let mut a = Record {
            source: Some("run, \"quoted\".json".into()),
            model: Some("meta-llama/Llama-3.1-8B-Instruct".into()),
            engine: Some("vllm".into()),
            gpu_count: Some(8),
            input_len: Some(80.5),
            request_rate: Some(f64::INFINITY),
            burstiness: Some(1.0),
            ..Record::default()
        };
        a.tags.insert("node".into(), "a7".into());
        a.set_metric(MetricKey::RequestThroughput, 26.94614157374034);
        a.set_metric(
            MetricKey::latency(LatencyMetric::Ttft, Stat::Mean),
            17419.655205215113,
        );
        a.set_metric(
            MetricKey::latency(LatencyMetric::Itl, Stat::P(Percentile::new(99.9).unwrap())),
            f64::NAN,
        );
        a.set_metric(MetricKey::Extra("peak".into()), f64::NEG_INFINITY);
        a.inferred.insert("gpu_count".into(), "file name".into());
        a.requests.push(RequestDetail {
            input_len: Some(1000),
            output_len: Some(3),
            ttft_ms: Some(51.25),
            itl_ms: vec![7.5, f64::INFINITY].into(),
            e2el_ms: Some(70.0),
            error: None,
            intended_s: Some(0.25),
            sent_s: Some(0.5),
            error_kind: None,
        });
        a.requests.push(RequestDetail {
            error: Some("HTTP 500: boom".into()),
            error_kind: Some("http_500".into()),
            ..RequestDetail::default()
        });
        let b = Record {
            gpu: Some("A100 40G".into()),
            batch_size: Some(512),
            metrics: [(MetricKey::Extra("throughput".into()), 126.342806)].into(),
            ..Record::default()
        };
        vec![a, b]
    }

    /// Equality that treats NaN as equal to NaN (the round trip must keep NaN as NaN).
    fn same(a: &[Record], b: &[Record]) -> bool {
        let norm = |rs: &[Record]| {
            rs.iter()
                .map(|r| {
                    let mut r = r.clone();
                    for v in r.metrics.values_mut() {
                        if v.is_nan() {
                            *v = -12345.678;
                        }
                    }
                    r
                })
                .collect::<Vec<_>>()
        };
        norm(a) == norm(b)
    }

    #[test]
    fn json_round_trip_keeps_everything_including_non_finite() {
        let records = sample();
        let text = to_json(&records);
        assert!(text.contains("\"schema_version\": 1"));
        assert!(text.contains("\"request_rate\": \"inf\""));
        assert!(text.contains("\"p99.9_itl_ms\": \"NaN\""));
        let back = from_json(&text).unwrap();
        assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        assert!(same(&records, &back.records), "{:#?}", back.records);
    }

    #[test]
    fn series_round_trip_and_bad_columns_are_named() {
        let r = Record {
            series: [
                ("t_s".to_string(), vec![0.0, 1.0]),
                ("ttft_p50_ms".to_string(), vec![12.5, f64::NAN]),
            ]
            .into(),
            ..Record::default()
        };
        let back = from_json(&to_json(&[r])).unwrap();
        assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        let s = &back.records[0].series;
        assert_eq!(s["t_s"], vec![0.0, 1.0]);
        assert_eq!(s["ttft_p50_ms"][0], 12.5);
        assert!(s["ttft_p50_ms"][1].is_nan());
        let bad = r#"{"schema_version": 1, "records": [{"series": {"t_s": [0, 1], "sent": [1], "x": 3}}]}"#;
        let back = from_json(bad).unwrap();
        assert_eq!(
            back.records[0].series.keys().collect::<Vec<_>>(),
            vec!["t_s"]
        );
        assert_eq!(
            back.warnings,
            vec![
                "records[0].series.sent: 1 values for 2 seconds, ignored",
                "records[0].series.x: not an array, ignored"
            ]
        );
    }

    #[test]
    fn csv_round_trip_keeps_everything_but_request_detail() {
        let mut records = sample();
        let text = to_csv(&records);
        let header = text.lines().next().unwrap();
        assert!(header.starts_with("source,model,engine,gpu,gpu_count,input_len,batch_size,request_rate,burstiness,tag.node,"), "{header}");
        assert!(header.ends_with(",inferred"));
        let back = from_csv(&text).unwrap();
        assert!(back.warnings.is_empty(), "{:?}", back.warnings);
        for r in &mut records {
            r.requests.clear();
        }
        assert!(same(&records, &back.records), "{:#?}", back.records);
    }

    #[test]
    fn bad_fields_are_skipped_with_warnings_naming_them() {
        let text = r#"{"schema_version":1,"records":[{"gpu_count":"eight","mean_ttft_ms":"fast","wat":1,"model":"m"}, 3]}"#;
        let d = from_json(text).unwrap();
        assert_eq!(d.records.len(), 1);
        assert_eq!(d.records[0].model.as_deref(), Some("m"));
        assert_eq!(
            d.warnings,
            [
                "records[0].gpu_count: gpu_count must be a number, got \"eight\", ignored",
                "records[0].mean_ttft_ms: not a number, ignored",
                "records[0].wat: unknown field, ignored",
                "records[1]: not an object, skipped",
            ]
        );
    }

    #[test]
    fn structural_errors_name_the_place() {
        assert_eq!(
            from_json("{\"records\": [").unwrap_err(),
            CanonicalError::Json {
                line: 1,
                column: 13,
                message: "EOF while parsing a list at line 1 column 13".into()
            }
        );
        assert!(matches!(
            from_json("{\"schema_version\": 99, \"records\": []}"),
            Err(CanonicalError::UnsupportedVersion(99))
        ));
        let d = from_csv("model,mean_ttft_ms\nm,1\nn,abc,extra\n").unwrap();
        assert_eq!(d.records.len(), 2);
        assert_eq!(
            d.warnings,
            [
                "line 3: 3 fields where the header has 2",
                "line 3: mean_ttft_ms: \"abc\" is not a number, ignored"
            ]
        );
    }

    #[test]
    fn number_text_forms() {
        assert_eq!(parse_number_text("1,024"), Some(1024.0));
        assert_eq!(parse_number_text(" inf "), Some(f64::INFINITY));
        assert_eq!(parse_number_text("Infinity"), Some(f64::INFINITY));
        assert!(parse_number_text("NaN").unwrap().is_nan());
        assert_eq!(parse_number_text("1e3"), Some(1000.0));
        assert_eq!(parse_number_text("12 ms"), None);
        assert_eq!(parse_number_text(""), None);
    }
}
