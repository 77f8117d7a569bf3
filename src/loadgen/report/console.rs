//! vLLM's console summary block per stage, character for character, followed by benchlens's
//! own block of client-side figures and failure reasons ([`summary_text`]).

use std::fmt::Write as _;

use super::stage_info::StageInfo;
use super::view::{p_word, view_percentiles, SummaryView};
use crate::loadgen::measure::StageMetrics;
use crate::loadgen::stats::summarize;

/// Python's `{:.2f}` of a float: `nan`, `inf` and `-inf` spelled as Python spells them.
fn py_f2(v: f64) -> String {
    if v.is_nan() {
        "nan".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "inf".into()
        } else {
            "-inf".into()
        }
    } else {
        format!("{v:.2}")
    }
}

/// vLLM's `"{:<40} {:<10}".format(label, value)`.
fn line(out: &mut String, label: &str, value: impl std::fmt::Display) {
    let _ = writeln!(out, "{label:<40} {:<10}", value.to_string());
}

/// vLLM's `"{:<40} {:<10.2f}".format(label, value)`.
fn line_f(out: &mut String, label: &str, value: f64) {
    line(out, label, py_f2(value));
}

fn section(out: &mut String, title: &str, fill: char) {
    // Python's str.format centring: the odd padding character goes to the right.
    let pad = 50usize.saturating_sub(title.chars().count());
    let left: String = std::iter::repeat_n(fill, pad / 2).collect();
    let right: String = std::iter::repeat_n(fill, pad - pad / 2).collect();
    let _ = writeln!(out, "{left}{title}{right}");
}

/// vLLM's console summary block for a stage (vLLM's `vllm bench serve`, checked against
/// vllm/benchmarks/serve.py of vLLM main at commit 009e6d4: labels, `{:<40} {:<10}` widths, order,
/// the median printed and then every percentile asked for, 50 included), followed by
/// benchlens's own block (client-side figures, error counts and the most frequent reasons).
pub fn summary_text(info: &StageInfo, m: &StageMetrics, view: &SummaryView) -> String {
    let mut out = String::new();
    section(&mut out, " Serving Benchmark Result ", '=');
    line(&mut out, "Successful requests:", m.completed);
    line(&mut out, "Failed requests:", m.failed);
    if let Some(c) = info.max_concurrency {
        line(&mut out, "Maximum request concurrency:", c);
    }
    if info.request_rate.is_finite() {
        line_f(
            &mut out,
            "Request rate configured (RPS):",
            info.request_rate,
        );
    }
    line_f(&mut out, "Benchmark duration (s):", m.duration_s);
    line(&mut out, "Total input tokens:", m.total_input);
    line(&mut out, "Total generated tokens:", m.total_output);
    line_f(
        &mut out,
        "Request throughput (req/s):",
        m.request_throughput,
    );
    if let Some(g) = m.request_goodput {
        line_f(&mut out, "Request goodput (req/s):", g);
    }
    line_f(
        &mut out,
        "Output token throughput (tok/s):",
        m.output_throughput,
    );
    line_f(
        &mut out,
        "Peak output token throughput (tok/s):",
        m.max_output_tokens_per_s,
    );
    line_f(
        &mut out,
        "Peak concurrent requests:",
        m.max_concurrent_requests as f64,
    );
    line_f(
        &mut out,
        "Total token throughput (tok/s):",
        m.total_token_throughput,
    );
    for metric in view.printed(info) {
        let (short, header) = metric.titles();
        let s = view.summary_of(m, metric);
        section(&mut out, header, '-');
        line_f(&mut out, &format!("Mean {short} (ms):"), s.mean);
        line_f(&mut out, &format!("Median {short} (ms):"), s.median);
        for (p, v) in view_percentiles(&s, &view.percentiles) {
            line_f(&mut out, &format!("P{} {short} (ms):", p_word(p)), v);
        }
    }
    let _ = writeln!(out, "{}", "=".repeat(50));
    client_section(&mut out, info, m, view);
    out
}

/// benchlens's block after vLLM's: what the client did and what went wrong.
fn client_section(out: &mut String, info: &StageInfo, m: &StageMetrics, view: &SummaryView) {
    section(out, " benchlens (client) ", '-');
    if let Some(a) = m.achieved_rate {
        line_f(out, "Achieved send rate (req/s):", a);
    }
    if let Some(l) = &m.schedule_lag {
        line_f(out, "Mean scheduling lag (ms):", l.mean);
        if let Some((p, v)) = l.percentiles.last() {
            line_f(out, &format!("P{} scheduling lag (ms):", p_word(*p)), *v);
        }
    }
    if info.request_rate.is_finite() {
        // Only a finite rate gives each request an intended send time.
        if let Some(s) = &m.ttft_from_intended {
            line_f(out, "Mean TTFT from intended send (ms):", s.mean);
        }
        if let Some(s) = &m.e2el_from_intended {
            line_f(out, "Mean E2EL from intended send (ms):", s.mean);
        }
    } else if info.max_concurrency.is_some() {
        // With `inf` every request is due at once: what remains is the wait for a slot.
        if let Some(s) = summarize(&view.queue_times_ms, &view.percentiles) {
            line_f(out, "Mean wait for a concurrency slot (ms):", s.mean);
        }
    }
    if let Some(s) = &m.write_delay {
        line_f(out, "Mean send-to-write delay (ms):", s.mean);
    }
    if let Some(s) = &m.read_delay {
        line_f(out, "Mean socket-to-read wait (ms):", s.mean);
        if let Some((p, v)) = s.percentiles.last() {
            line_f(
                out,
                &format!("P{} socket-to-read wait (ms):", p_word(*p)),
                *v,
            );
        }
    }
    if let Some(s) = m.total_output_server {
        line(out, "Generated tokens (server usage):", s);
    }
    if let Some(t) = m.total_output_text {
        line(out, "Generated tokens (client tokenizer):", t);
    }
    line(out, "Token chunks (client count):", m.total_output_local);
    line(
        out,
        "Requests with count mismatch:",
        m.output_count_mismatches,
    );
    for (kind, n) in &m.failures {
        line(out, &format!("Errors {kind}:"), n);
    }
    if !view.error_reasons.is_empty() {
        let _ = writeln!(out, "Most frequent errors:");
        for e in &view.error_reasons {
            let _ = writeln!(out, "  {} x {}: {}", e.count, e.kind, e.message);
        }
    }
    if view.cancelled > 0 {
        line(out, "Cancelled by interrupt:", view.cancelled);
    }
    if info.partial {
        line(out, "Partial (interrupted):", "yes");
    }
    for w in crate::loadgen::measure::warnings(m, &info.model) {
        let _ = writeln!(out, "{w}");
    }
    let _ = writeln!(out, "{}", "=".repeat(50));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::record::RequestRecord;
    use crate::loadgen::report::record::stage_record;
    use crate::loadgen::report::view::{error_reasons, PercentileMetric, REASON_BYTES};
    use crate::loadgen::stats::Summary;
    use crate::model::{LatencyMetric, MetricKey, Percentile, Stat};

    fn summary(mean: f64, median: f64, ps: &[(f64, f64)]) -> Option<Summary> {
        Some(Summary {
            count: 100,
            mean,
            median,
            std: 1.0,
            percentiles: ps.to_vec(),
        })
    }

    /// The figures of tests/fixtures/loadgen/vllm-summary-golden.py.
    fn golden_figures() -> StageMetrics {
        StageMetrics {
            completed: 98,
            failed: 2,
            duration_s: 25.123456,
            total_input: 12544,
            total_output: 3136,
            request_throughput: 3.9007,
            request_goodput: Some(3.5),
            output_throughput: 124.8236,
            max_output_tokens_per_s: 310.0,
            max_concurrent_requests: 8,
            total_token_throughput: 624.1155,
            ttft: summary(45.678, 44.1, &[(50.0, 44.1), (99.0, 80.25), (99.9, 91.004)]),
            tpot: summary(5.0049, 5.0, &[(50.0, 5.0), (99.0, 5.5), (99.9, 5.61)]),
            itl: summary(4.999, 4.98, &[(50.0, 4.98), (99.0, 7.125), (99.9, 12.5)]),
            e2el: summary(
                201.3,
                199.9,
                &[(50.0, 199.9), (99.0, 260.0), (99.9, 270.01)],
            ),
            ..StageMetrics::default()
        }
    }

    /// Our block up to and including vLLM's closing rule.
    fn vllm_part(text: &str) -> &str {
        let end = text.find(&format!("{}\n", "=".repeat(50))).unwrap() + 51;
        &text[..end]
    }

    #[test]
    fn summary_matches_vllm_character_for_character() {
        let info = StageInfo {
            request_rate: 4.0,
            max_concurrency: Some(8),
            ..StageInfo::default()
        };
        let view = SummaryView {
            metrics: PercentileMetric::parse_list(PercentileMetric::DEFAULT).unwrap(),
            percentiles: vec![50.0, 99.0, 99.9],
            ..SummaryView::default()
        };
        let text = summary_text(&info, &golden_figures(), &view);
        assert_eq!(
            vllm_part(&text),
            include_str!("../../../tests/fixtures/loadgen/vllm-summary-rate4-conc8.txt")
        );
        // benchlens's own lines come after vLLM's block.
        assert!(text[vllm_part(&text).len()..]
            .starts_with("--------------- benchlens (client) ---------------\n"));

        let info = StageInfo {
            request_rate: f64::INFINITY,
            ..StageInfo::default()
        };
        let view = SummaryView {
            metrics: PercentileMetric::parse_list("ttft,e2el").unwrap(),
            percentiles: vec![99.0],
            ..SummaryView::default()
        };
        let m = StageMetrics {
            request_goodput: None,
            ..golden_figures()
        };
        assert_eq!(
            vllm_part(&summary_text(&info, &m, &view)),
            include_str!("../../../tests/fixtures/loadgen/vllm-summary-inf.txt")
        );
        assert_eq!(
            PercentileMetric::parse_list("ttft,latency")
                .unwrap_err()
                .to_string(),
            "\"latency\" is not one of ttft, tpot, itl, e2el, client_queue_time, \
             e2el_including_client_queue"
        );
    }

    /// The explorer reads our console output as a vLLM summary: benchlens's second block does
    /// not disturb vLLM's.
    #[test]
    fn the_summary_reads_back_as_a_vllm_console_summary() {
        let info = StageInfo {
            request_rate: 4.0,
            max_concurrency: Some(8),
            ..StageInfo::default()
        };
        let mut m = golden_figures();
        m.failures.insert("http_500".into(), 2);
        let view = SummaryView {
            metrics: PercentileMetric::parse_list("ttft,tpot,itl,e2el").unwrap(),
            percentiles: vec![99.0],
            ..SummaryView::default()
        };
        let text = summary_text(&info, &m, &view);
        let got = crate::ingest::read("out.txt", text.as_bytes()).unwrap();
        assert_eq!(got.records.len(), 1);
        let r = &got.records[0];
        assert_eq!(r.metrics[&MetricKey::Completed], 98.0);
        assert_eq!(r.metrics[&MetricKey::TotalTokenThroughput], 624.12);
        let p99 = MetricKey::latency(LatencyMetric::E2el, Stat::P(Percentile::new(99.0).unwrap()));
        assert_eq!(r.metrics[&p99], 260.0);
    }

    #[test]
    fn error_reasons_are_the_three_most_frequent_without_the_url() {
        use crate::loadgen::record::{Failure, FailureKind};
        let failed = |kind, message: &str| RequestRecord {
            failure: Some(Failure {
                kind,
                message: message.into(),
            }),
            ..RequestRecord::default()
        };
        let long = format!(
            "http://h:1/v1/completions: HTTP 400 Bad Request: {}\nend",
            "x".repeat(300)
        );
        let mut reqs = vec![
            failed(
                FailureKind::Reset,
                "http://h:1/v1/completions: connection reset",
            ),
            failed(FailureKind::Http(400), &long),
            failed(FailureKind::Http(400), &long),
            failed(
                FailureKind::Http(422),
                "http://h:1/v1/completions: HTTP 422: {'ignore_eos'}",
            ),
            failed(
                FailureKind::Http(422),
                "http://h:1/v1/completions: HTTP 422: {'ignore_eos'}",
            ),
            failed(
                FailureKind::Http(422),
                "http://h:1/v1/completions: HTTP 422: {'ignore_eos'}",
            ),
            failed(FailureKind::Io, "broken pipe"),
        ];
        reqs.push(RequestRecord::default());
        let r = error_reasons(&reqs, 3);
        assert_eq!(r.len(), 3);
        assert_eq!(
            (r[0].count, r[0].kind.as_str(), r[0].message.as_str()),
            (3, "http_422", "HTTP 422: {'ignore_eos'}")
        );
        assert_eq!((r[1].count, r[1].kind.as_str()), (2, "http_400"));
        assert_eq!(r[1].message.len(), REASON_BYTES);
        assert!(r[1].message.starts_with("HTTP 400 Bad Request: xxx"));
        // Ties keep the order of first appearance.
        assert_eq!((r[2].count, r[2].kind.as_str()), (1, "reset"));
        let view = SummaryView::new(vec![PercentileMetric::Ttft], vec![99.0], &reqs, 0);
        let text = summary_text(&StageInfo::default(), &StageMetrics::default(), &view);
        assert!(
            text.contains("Most frequent errors:\n  3 x http_422: HTTP 422: {'ignore_eos'}\n"),
            "{text}"
        );
    }

    #[test]
    fn from_intended_is_shown_only_for_a_finite_rate() {
        let m = StageMetrics {
            ttft_from_intended: summary(900.0, 900.0, &[]),
            ..StageMetrics::default()
        };
        let r = RequestRecord {
            intended_at_s: 0.0,
            sent_at_s: 0.25,
            ttft_s: Some(0.01),
            e2el_s: Some(0.02),
            ..RequestRecord::default()
        };
        let view = SummaryView::new(vec![], vec![99.0], &[r], 0);
        let finite = StageInfo {
            request_rate: 2.0,
            max_concurrency: Some(4),
            ..StageInfo::default()
        };
        let text = summary_text(&finite, &m, &view);
        let want = format!(
            "{:<40} {:<10}\n",
            "Mean TTFT from intended send (ms):", "900.00"
        );
        assert!(text.contains(&want), "{text}");
        assert!(!text.contains("concurrency slot"));
        let capped = StageInfo {
            request_rate: f64::INFINITY,
            ..finite.clone()
        };
        let text = summary_text(&capped, &m, &view);
        assert!(!text.contains("from intended"), "{text}");
        let want = format!(
            "{:<40} {:<10}\n",
            "Mean wait for a concurrency slot (ms):", "250.00"
        );
        assert!(text.contains(&want), "{text}");
        let rec = stage_record(&capped, &m, &[], &view);
        assert!(rec
            .metrics
            .contains_key(&MetricKey::Extra("mean_concurrency_slot_wait_ms".into())));
        assert!(!rec
            .metrics
            .contains_key(&MetricKey::Extra("mean_ttft_from_intended_ms".into())));
        let open = StageInfo {
            max_concurrency: None,
            ..capped
        };
        let text = summary_text(&open, &m, &view);
        assert!(!text.contains("from intended") && !text.contains("concurrency slot"));
    }
}
