//! Round trips of [`Columns`]: records in, the same records out, and canonical text written
//! from columns equal to the text written from the same records.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use super::*;
use crate::model::canonical::{self, write_csv, write_json, Part};
use crate::model::RequestDetail;

fn records() -> Vec<Record> {
    let mut out = Vec::new();
    for i in 0..300u64 {
        let mut r = Record {
            source: Some("f.csv".into()),
            format: Some("generic_csv".into()),
            model: Some(Arc::from(format!("llama-{}", i % 3))),
            batch_size: Some(1 << (i % 5)),
            request_rate: Some(if i % 4 == 0 {
                f64::INFINITY
            } else {
                i as f64 / 8.0
            }),
            ..Record::default()
        };
        if i % 7 == 0 {
            r.tags.insert("node".into(), format!("n{}", i % 2));
        }
        if i % 11 != 0 {
            r.set_metric(MetricKey::RequestThroughput, i as f64 * 0.37);
        }
        r.set_metric(
            MetricKey::Extra("x y".into()),
            if i % 13 == 0 { f64::NAN } else { 1.5 },
        );
        if i % 50 == 0 {
            r.inferred.insert("gpu".into(), "file name".into());
            r.gpu = Some("H100".into());
            r.series.insert("t_s".into(), vec![0.0, 1.0]);
            r.requests = vec![
                RequestDetail {
                    input_len: Some(i),
                    ttft_ms: Some(2.5),
                    itl_ms: vec![1.0, f64::INFINITY].into(),
                    error: Some("boom, \"quoted\"".into()),
                    ..RequestDetail::default()
                },
                RequestDetail::default(),
            ];
        }
        out.push(r);
    }
    out
}

#[test]
fn records_come_back_from_columns_unchanged() {
    let recs = records();
    let c = Columns::from_records(&recs);
    assert_eq!(c.len(), recs.len());
    let back: Vec<Record> = c.rows().collect();
    assert_eq!(back.len(), recs.len());
    for (a, b) in back.iter().zip(&recs) {
        // NaN metrics compare unequal; compare their bits through canonical JSON instead.
        assert_eq!(canonical::record_to_json(a), canonical::record_to_json(b));
        assert_eq!(a.requests, b.requests);
    }
    assert!(c.record(recs.len()).is_none());
    // A model column of three values takes one byte a row.
    let model = c.dim(&DimKey::Known(Dim::Model)).unwrap();
    match &model.data {
        DimData::Text(t) => assert_eq!((t.values().len(), t.code_width()), (3, 1)),
        other => panic!("model held as {other:?}"),
    }
    assert_eq!(c.requests().total(), 12);
}

#[test]
fn canonical_text_from_columns_is_the_writers_text() {
    let recs = records();
    let c = Columns::from_records(&recs);
    let (head, tail) = recs.split_at(100);
    let tail_cols = Columns::from_records(tail);
    for parts in [
        vec![Part::Columns(&c)],
        vec![Part::Records(head), Part::Columns(&tail_cols)],
        vec![Part::Records(&recs)],
        vec![],
    ] {
        let mut json = Vec::new();
        write_json(&mut json, &parts).unwrap();
        assert_eq!(
            String::from_utf8(json).unwrap(),
            canonical::to_json(&recs_of(&parts))
        );
        let mut csv = Vec::new();
        write_csv(&mut csv, &parts).unwrap();
        assert_eq!(
            String::from_utf8(csv).unwrap(),
            canonical::to_csv(&recs_of(&parts))
        );
    }
}

fn recs_of(parts: &[Part<'_>]) -> Vec<Record> {
    let mut out = Vec::new();
    for p in parts {
        match p {
            Part::Records(r) => out.extend(r.iter().cloned()),
            Part::Columns(c) => out.extend(c.rows()),
        }
    }
    out
}

#[test]
fn readers_append_column_by_column() {
    let mut c = Columns::with_keys(
        [DimKey::Known(Dim::Model), DimKey::Known(Dim::BatchSize)],
        [MetricKey::RequestThroughput],
    );
    let model = c.dim_position(&DimKey::Known(Dim::Model)).unwrap();
    let batch = c.dim_position(&DimKey::Known(Dim::BatchSize)).unwrap();
    for i in 0..3u64 {
        match &mut c.dims_mut()[model].data {
            DimData::Text(t) => t.push(Some("m")),
            _ => unreachable!(),
        }
        match &mut c.dims_mut()[batch].data {
            DimData::Count(n) => n.push((i > 0).then_some(i)),
            _ => unreachable!(),
        }
        c.metrics_mut()[0].push(Some(i as f64));
        c.finish_row();
    }
    c.finish_rows_without_requests();
    let r = c.record(2).unwrap();
    assert_eq!((r.model.as_deref(), r.batch_size), (Some("m"), Some(2)));
    assert_eq!(c.record(0).unwrap().batch_size, None);
    assert_eq!(r.metric(&MetricKey::RequestThroughput), Some(2.0));
    assert!(c.heap_bytes() > 0);
}

#[test]
fn requests_set_apart_replace_the_rows_requests_when_the_rows_match() {
    let mut rs = records();
    let with: Vec<usize> = (0..rs.len())
        .filter(|&i| !rs[i].requests.is_empty())
        .collect();
    assert!(!with.is_empty());
    let c = Columns::from_records(&rs);
    let arrays = c.requests().clone();
    for r in &mut rs {
        r.requests.clear();
    }
    let mut bare = Columns::from_records(&rs);
    assert_eq!(bare.requests().total(), 0);
    assert!(!bare.set_requests(RequestArrays::default()));
    assert!(bare.set_requests(arrays));
    assert_eq!(bare, c);
    for i in 0..c.len() {
        let head = c.record_without_requests(i).unwrap();
        assert!(head.requests.is_empty());
        let mut whole = c.record(i).unwrap();
        assert_eq!(whole.requests.len(), c.requests().row_range(i).len());
        whole.requests.clear();
        assert_eq!(canonical::to_json(&[head]), canonical::to_json(&[whole]));
    }
    assert!(c.record_without_requests(c.len()).is_none());
}
