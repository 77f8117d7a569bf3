use super::*;

fn req(intended: f64, sent: f64, ttft_ms: f64, e2el_ms: f64) -> RequestDetail {
    RequestDetail {
        intended_s: Some(intended),
        sent_s: Some(sent),
        ttft_ms: Some(ttft_ms),
        e2el_ms: Some(e2el_ms),
        ..RequestDetail::default()
    }
}

#[test]
fn spans_derive_first_token_and_end_and_sort_by_send() {
    let mut failed = req(0.0, 0.5, 100.0, f64::NAN);
    failed.e2el_ms = None;
    failed.error = Some("HTTP 503".into());
    failed.error_kind = Some("http_503".into());
    let no_time = RequestDetail::default();
    let s = spans(&[req(1.0, 1.25, 250.0, 1000.0), failed, no_time]);
    assert_eq!(s.len(), 2);
    assert_eq!(s[0].index, 1);
    assert_eq!(s[0].outcome, Outcome::Failed("http_503".into()));
    assert_eq!(s[0].first_token_s, Some(0.6));
    assert_eq!(s[0].end_s, None);
    assert_eq!(s[0].last_s(), 0.6);
    assert_eq!(s[1].first_token_s, Some(1.5));
    assert_eq!(s[1].end_s, Some(2.25));
    assert_eq!(s[1].outcome.name(), "ok");
}

#[test]
fn few_requests_are_bars_many_are_a_bounded_grid() {
    let few: Vec<_> = (0..10)
        .map(|i| req(i as f64, i as f64, 10.0, 20.0))
        .collect();
    assert!(matches!(timeline(&few), Timeline::Bars(b) if b.len() == 10));
    let many: Vec<_> = (0..100_000)
        .map(|i| req(i as f64 * 1e-3, i as f64 * 1e-3, 10.0, 20.0))
        .collect();
    match timeline(&many) {
        Timeline::Binned(g) => {
            assert_eq!(g.waiting.len(), MAX_BINS);
            assert_eq!(g.requests, 100_000);
        }
        Timeline::Bars(_) => panic!("10^5 requests must be binned"),
    }
}

#[test]
fn grid_keeps_the_time_spent_in_each_phase() {
    // Request-seconds in a phase = sum over bins of mean count × bin width.
    let rs = [req(0.0, 1.0, 500.0, 2000.0), req(0.5, 0.5, 1500.0, 3500.0)];
    let g = phase_grid(&spans(&rs), 7);
    let total = |v: &[f64]| v.iter().sum::<f64>() * g.bin_s;
    assert!((total(&g.waiting) - 1.0).abs() < 1e-9, "{:?}", g.waiting);
    assert!((total(&g.prefill) - 2.0).abs() < 1e-9, "{:?}", g.prefill);
    assert!((total(&g.decoding) - 3.5).abs() < 1e-9, "{:?}", g.decoding);
    // Never more requests in a phase than there are.
    assert!(g.prefill.iter().all(|v| *v <= 2.0 + 1e-9));
    assert_eq!(g.centers_s().len(), 7);
}

#[test]
fn series_are_grouped_into_panels_and_rates_divide_by_the_bin() {
    let mut r = Record::default();
    for (k, v) in [
        ("t_s", vec![0.0, 0.5, 1.0]),
        ("output_tokens", vec![10.0, 20.0, 30.0]),
        ("sent", vec![1.0, 2.0, 3.0]),
        ("in_flight", vec![1.0, 2.0, 1.5]),
        ("ttft_p50_ms", vec![5.0, 6.0, 7.0]),
        ("ttft_p99_ms", vec![9.0, 9.5, 10.0]),
        ("itl_p50_ms", vec![1.0, 1.0, f64::NAN]),
        ("server.kv_cache_usage", vec![0.1, 0.2, 0.3]),
    ] {
        r.series.insert(k.into(), v);
    }
    let p = series_panels(&r).unwrap();
    let titles: Vec<&str> = p.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(
        titles,
        [
            "output tok/s",
            "requests sent/s",
            "requests in flight",
            "TTFT (ms)",
            "ITL (ms)",
            "server.kv_cache_usage"
        ]
    );
    assert_eq!(p.panels[0].lines[0].values, [20.0, 40.0, 60.0]);
    let ttft: Vec<&str> = p.panels[3].lines.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(ttft, ["TTFT p50", "TTFT p99"]);
    // Drawn at the middle of each bin.
    assert_eq!(p.x_s, [0.25, 0.75, 1.25]);
    assert!(series_panels(&Record::default()).is_none());
}

#[test]
fn a_stages_last_partial_second_is_rated_over_the_time_it_covers() {
    let rec = |duration: f64| {
        let mut r = Record::default();
        r.series.insert("t_s".into(), vec![0.0, 1.0, 2.0]);
        r.series
            .insert("output_tokens".into(), vec![100.0, 100.0, 30.0]);
        r.set_metric(MetricKey::DurationS, duration);
        r
    };
    // 30 tokens in the last 0.3 s: 100 tok/s, not a collapse to 30.
    let p = series_panels(&rec(2.3)).unwrap();
    let last = p.panels[0].lines[0].values[2];
    assert!((last - 100.0).abs() < 1e-9, "{last}");
    // 0.05 s is too short to rate: not drawn.
    assert!(series_panels(&rec(2.05)).unwrap().panels[0].lines[0].values[2].is_nan());
    // A whole last second, or no duration: divided by the bin as before.
    assert_eq!(
        series_panels(&rec(3.0)).unwrap().panels[0].lines[0].values[2],
        30.0
    );
    let mut r = rec(1.0);
    r.metrics.remove(&MetricKey::DurationS);
    assert_eq!(
        series_panels(&r).unwrap().panels[0].lines[0].values[2],
        30.0
    );
}

#[test]
fn series_derived_from_spans_count_sends_presence_and_first_tokens() {
    // Sent at 0.5 s and 1.5 s, each in flight for 1 s, first tokens 100 ms and 300 ms later.
    let rs = [req(0.5, 0.5, 100.0, 1000.0), req(1.5, 1.5, 300.0, 1000.0)];
    let c = series_from_spans(&spans(&rs));
    assert_eq!(c["t_s"], [0.0, 1.0, 2.0]);
    assert_eq!(c["sent"], [1.0, 1.0, 0.0]);
    assert_eq!(c["in_flight"], [0.5, 1.0, 0.5]);
    assert!((c["ttft_p50_ms"][0] - 100.0).abs() < 1e-9);
    assert!((c["ttft_p50_ms"][1] - 300.0).abs() < 1e-9);
    assert!(c["ttft_p99_ms"][2].is_nan());
    // A record with timing but no series gets these as its panels.
    let r = Record {
        requests: rs.to_vec(),
        ..Record::default()
    };
    let p = series_panels(&r).unwrap();
    let titles: Vec<&str> = p.panels.iter().map(|p| p.title.as_str()).collect();
    assert_eq!(
        titles,
        ["requests sent/s", "requests in flight", "TTFT (ms)"]
    );
    assert!(series_from_spans(&[]).is_empty());
}

#[test]
fn run_detail_and_window() {
    let mut r = Record::default();
    assert!(!has_run_detail(&r));
    r.requests.push(req(0.0, 0.1, 1.0, 2.0));
    assert!(has_run_detail(&r));
    assert_eq!(steady_window_s(&r), None);
    r.metrics
        .insert(MetricKey::Extra("window_start_s".into()), 0.5);
    r.metrics
        .insert(MetricKey::Extra("window_end_s".into()), 2.5);
    assert_eq!(steady_window_s(&r), Some((0.5, 2.5)));
    r.request_rate = Some(f64::INFINITY);
    assert_eq!(stage_label(&r), "(no file) · inf req/s · 1 requests");
}

fn stage(source: &str, rate: f64, requests: Vec<RequestDetail>) -> Record {
    Record {
        source: Some(source.into()),
        request_rate: Some(rate),
        requests,
        ..Record::default()
    }
}

#[test]
fn the_chosen_stage_is_shown_only_while_the_filter_keeps_it() {
    let timed = || vec![req(0.0, 0.0, 10.0, 20.0)];
    let records = Dataset::new(vec![
        stage("a.json", 1.0, timed()),
        // A summary point without detail is never a stage.
        stage("b.json", 2.0, vec![RequestDetail::default()]),
        stage("a.json", 4.0, timed()),
    ]);
    let all = [0, 1, 2];
    let s = run_stages(&records, &all, None).unwrap();
    assert_eq!(
        s.stages,
        vec![
            (0, "a.json · 1 req/s · 1 requests".to_string()),
            (2, "a.json · 4 req/s · 1 requests".to_string())
        ]
    );
    assert_eq!(s.shown, 0);
    assert_eq!(run_stages(&records, &all, Some(2)).unwrap().shown, 2);
    assert_eq!(
        run_stages(&records, &all, Some(2)).unwrap().shown_label(),
        "a.json · 4 req/s · 1 requests"
    );
    // Chosen but filtered out, or not a stage, or out of range: the first stage shown.
    assert_eq!(run_stages(&records, &[0], Some(2)).unwrap().shown, 0);
    assert_eq!(run_stages(&records, &all, Some(1)).unwrap().shown, 0);
    assert_eq!(run_stages(&records, &[0, 7], Some(7)).unwrap().shown, 0);
    assert_eq!(run_stages(&records, &[1], None), Err(NoRunDetail));
    assert_eq!(run_stages(&records, &[], Some(0)), Err(NoRunDetail));
}

#[test]
fn stages_that_read_alike_are_told_apart() {
    let timed = || vec![req(0.0, 0.0, 10.0, 20.0)];
    let tagged = |n: &str| {
        let mut r = stage("sweep.json", 8.0, timed());
        r.tags.insert("stage".into(), n.into());
        r
    };
    let records = Dataset::new(vec![
        tagged("2"),
        stage("sweep.json", 4.0, timed()),
        tagged("5"),
        stage("other.json", 8.0, timed()),
        stage("other.json", 8.0, timed()),
    ]);
    let s = run_stages(&records, &[0, 1, 2, 3, 4], None).unwrap();
    let labels: Vec<&str> = s.stages.iter().map(|(_, l)| l.as_str()).collect();
    assert_eq!(
        labels,
        [
            "sweep.json · 8 req/s · 1 requests · stage 2",
            "sweep.json · 4 req/s · 1 requests",
            "sweep.json · 8 req/s · 1 requests · stage 5",
            "other.json · 8 req/s · 1 requests · 1 of 2",
            "other.json · 8 req/s · 1 requests · 2 of 2",
        ]
    );
}

#[test]
fn the_summary_says_how_the_timeline_is_drawn() {
    assert_eq!(
        timeline_summary(&Timeline::Bars(Vec::new()), None),
        "No request has a send time; series only."
    );
    let bars = timeline(&[req(0.0, 0.0, 10.0, 20.0), req(0.5, 0.5, 10.0, 20.0)]);
    assert_eq!(
        timeline_summary(&bars, Some((1.0, 2.5))),
        "2 requests, one bar each, by send time. Steady-state window 1.00–2.50 s shaded."
    );
    let many: Vec<RequestDetail> = (0..MAX_BARS + 1)
        .map(|i| req(i as f64 * 0.01, i as f64 * 0.01, 5.0, 10.0))
        .collect();
    let binned = timeline(&many);
    let Timeline::Binned(g) = &binned else {
        panic!("{} requests are binned", MAX_BARS + 1)
    };
    assert_eq!(
        timeline_summary(&binned, None),
        format!(
            "{} requests, binned: mean requests in each phase per {:.3} s.",
            MAX_BARS + 1,
            g.bin_s
        )
    );
}
