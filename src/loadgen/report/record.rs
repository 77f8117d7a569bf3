//! A stage as a canonical [`Record`]: its dimensions, totals, latency summaries under the
//! canonical metric keys, benchlens's extra figures and per-request detail.

use super::stage_info::StageInfo;
use super::view::SummaryView;
use crate::loadgen::measure::{request_latencies, StageMetrics};
use crate::loadgen::record::RequestRecord;
use crate::loadgen::stats::{summarize, Summary};
use crate::model::{LatencyMetric, MetricKey, Percentile, Record, RequestDetail, Stat};

fn pct_label(p: f64) -> String {
    Percentile::new(p).map_or_else(|| p.to_string(), |p| p.to_string())
}

fn put_summary(r: &mut Record, metric: LatencyMetric, s: &Option<Summary>) {
    let Some(s) = s else { return };
    r.metrics
        .insert(MetricKey::latency(metric, Stat::Mean), s.mean);
    r.metrics
        .insert(MetricKey::latency(metric, Stat::Median), s.median);
    r.metrics
        .insert(MetricKey::latency(metric, Stat::Std), s.std);
    for (p, v) in &s.percentiles {
        if let Some(p) = Percentile::new(*p) {
            r.metrics.insert(MetricKey::latency(metric, Stat::P(p)), *v);
        }
    }
}

fn put_extra_summary(r: &mut Record, name: &str, s: &Option<Summary>) {
    let Some(s) = s else { return };
    let mut put = |stat: String, v: f64| {
        r.metrics
            .insert(MetricKey::Extra(format!("{stat}_{name}_ms")), v);
    };
    put("mean".into(), s.mean);
    put("median".into(), s.median);
    put("std".into(), s.std);
    for (p, v) in &s.percentiles {
        put(format!("p{}", pct_label(*p)), *v);
    }
}

/// Per-request detail for the canonical record.
pub fn request_detail(r: &RequestRecord) -> RequestDetail {
    let lat = request_latencies(r);
    RequestDetail {
        input_len: Some(r.input_tokens()),
        output_len: Some(if r.failure.is_some() {
            0
        } else {
            r.output_tokens()
        }),
        ttft_ms: lat.as_ref().map(|l| l.ttft_ms),
        itl_ms: lat
            .as_ref()
            .map(|l| l.itl_ms.as_slice().into())
            .unwrap_or_default(),
        e2el_ms: lat.as_ref().map(|l| l.e2el_ms),
        error: r
            .failure
            .as_ref()
            .map(|f| format!("{}: {}", f.kind.name(), f.message)),
        intended_s: Some(r.intended_at_s),
        // The stage's own series count latencies from here too (`loadgen::timeline`).
        sent_s: Some(r.sent_at_s),
        error_kind: r.failure.as_ref().map(|f| f.kind.name()),
    }
}

/// The canonical record of a stage.
pub fn stage_record(
    info: &StageInfo,
    m: &StageMetrics,
    requests: &[RequestRecord],
    view: &SummaryView,
) -> Record {
    let mut r = Record {
        source: None,
        format: Some("benchlens".into()),
        model: Some(info.model.as_str().into()),
        engine: info.engine.as_deref().map(Into::into),
        gpu: info.gpu.as_deref().map(Into::into),
        gpu_count: info.gpu_count,
        dataset: Some(info.dataset.as_str().into()),
        input_len: m.mean_input_len,
        output_len: m.mean_output_len,
        max_concurrency: info.max_concurrency,
        request_rate: Some(info.request_rate),
        burstiness: Some(info.burstiness),
        num_prompts: Some(info.num_prompts),
        date: Some(info.date.as_str().into()),
        label: info.label.as_deref().map(Into::into),
        tags: info.tags.clone(),
        ..Record::default()
    };
    if info.partial {
        r.tags.insert("partial".into(), "true".into());
    }
    r.tags.insert("stage".into(), info.stage.to_string());
    let mt = &mut r.metrics;
    mt.insert(MetricKey::Completed, m.completed as f64);
    mt.insert(MetricKey::Failed, m.failed as f64);
    mt.insert(MetricKey::DurationS, m.duration_s);
    mt.insert(MetricKey::RequestThroughput, m.request_throughput);
    if let Some(g) = m.request_goodput {
        mt.insert(MetricKey::RequestGoodput, g);
    }
    if m.duration_s > 0.0 {
        mt.insert(
            MetricKey::InputThroughput,
            m.total_input as f64 / m.duration_s,
        );
    }
    mt.insert(MetricKey::OutputThroughput, m.output_throughput);
    mt.insert(MetricKey::TotalTokenThroughput, m.total_token_throughput);
    let mut extra = |k: &str, v: f64| {
        mt.insert(MetricKey::Extra(k.into()), v);
    };
    extra("total_input_tokens", m.total_input as f64);
    extra("total_output_tokens", m.total_output as f64);
    if let Some(s) = m.total_output_server {
        extra("total_output_tokens_server", s as f64);
    }
    extra("total_output_chunks_client", m.total_output_local as f64);
    if let Some(t) = m.total_output_text {
        extra("total_output_tokens_client", t as f64);
    }
    extra("output_count_mismatches", m.output_count_mismatches as f64);
    extra("over_length_requests", m.over_length as f64);
    extra("short_reply_requests", m.short_reply as f64);
    extra(
        "finish_reason_missing_requests",
        m.finish_reason_missing as f64,
    );
    extra("retried_unsent", m.retried_unsent as f64);
    if m.usage_ignored > 0 {
        extra("usage_ignored_requests", m.usage_ignored as f64);
    }
    extra("timed_chunks", m.timed_chunks as f64);
    extra("coalesced_chunks", m.coalesced_chunks as f64);
    extra("max_output_tokens_per_s", m.max_output_tokens_per_s);
    extra("max_concurrent_requests", m.max_concurrent_requests as f64);
    if let Some(a) = m.achieved_rate {
        extra("achieved_request_rate", a);
    }
    for (kind, n) in &m.failures {
        extra(&format!("errors_{kind}"), *n as f64);
    }
    put_summary(&mut r, LatencyMetric::Ttft, &m.ttft);
    put_summary(&mut r, LatencyMetric::Tpot, &m.tpot);
    put_summary(&mut r, LatencyMetric::Itl, &m.itl);
    put_summary(&mut r, LatencyMetric::E2el, &m.e2el);
    if info.request_rate.is_finite() {
        // Only a finite rate gives each request an intended send time.
        put_extra_summary(&mut r, "ttft_from_intended", &m.ttft_from_intended);
        put_extra_summary(&mut r, "e2el_from_intended", &m.e2el_from_intended);
    } else if info.max_concurrency.is_some() {
        let wait = summarize(&view.queue_times_ms, &view.percentiles);
        put_extra_summary(&mut r, "concurrency_slot_wait", &wait);
    }
    if view.cancelled > 0 {
        r.metrics.insert(
            MetricKey::Extra("cancelled_requests".into()),
            view.cancelled as f64,
        );
    }
    put_extra_summary(&mut r, "schedule_lag", &m.schedule_lag);
    put_extra_summary(&mut r, "write_delay", &m.write_delay);
    put_extra_summary(&mut r, "read_delay", &m.read_delay);
    r.requests = requests.iter().map(request_detail).collect();
    r
}
