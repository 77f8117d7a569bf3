//! The capacity curve's tests: the two sweeps made against the mock
//! (tests/fixtures/loadgen/README.md) and small made-up sweeps for each rule.

use super::*;
use crate::analysis::capacity::Tally;
use crate::analysis::capacity_figure::capacity_plot;
use crate::analysis::defaults::{default_view, View};
use crate::charts::Theme;
use serde_json::Value;

/// The sweep made against the mock (tests/fixtures/loadgen/README.md).
fn fixture() -> Dataset {
    let bytes = include_bytes!("../../../tests/fixtures/loadgen/sweep-mock.json");
    Dataset::new(
        crate::ingest::read("sweep-mock.json", bytes)
            .unwrap()
            .records,
    )
}

const OBJECTIVES: &str = "p90_ttft:100, at least 99% of requests good";

/// A probe of a rate sweep judged on p90 TTFT.
fn probe(source: &str, engine: &str, n: u32, load: f64, passed: bool, p90: f64) -> Record {
    let mut r = Record {
        source: Some(source.into()),
        engine: Some(engine.into()),
        model: Some("m".into()),
        date: Some("20261123-100000".into()),
        request_rate: Some(load),
        ..Record::default()
    };
    r.tags.insert(
        VERDICT_TAG.into(),
        if passed { "passed" } else { "failed" }.into(),
    );
    r.tags.insert(OBJECTIVES_TAG.into(), OBJECTIVES.into());
    r.set_metric(MetricKey::Extra("probe".into()), f64::from(n));
    r.set_metric(MetricKey::Extra("probe_load".into()), load);
    r.set_metric(MetricKey::RequestThroughput, load.min(10.0));
    r.set_metric(MetricKey::Extra("slo_p90_ttft_ms".into()), p90);
    r
}

/// Loads 4, 8, 16 (fails), 11.31 (fails), 5.657, then the knee's repeats.
fn sweep(source: &str, engine: &str, scale: f64) -> Vec<Record> {
    [
        (4.0, true, 20.0),
        (8.0, true, 40.0),
        (16.0, false, 900.0),
        (11.31, false, 300.0),
        (9.514, true, 80.0),
        (9.514, true, 90.0),
        (11.31, false, 320.0),
    ]
    .iter()
    .enumerate()
    .map(|(k, &(load, passed, p90))| probe(source, engine, k as u32 + 1, load * scale, passed, p90))
    .collect()
}

fn all(ds: &Dataset) -> Vec<usize> {
    (0..ds.len()).collect()
}

fn figure(c: &CapacityCurves) -> Value {
    serde_json::from_str(&capacity_plot(c, Theme::Light).to_json()).unwrap()
}

#[test]
fn the_mock_sweep_is_one_curve_with_its_knee_and_its_own_words() {
    let ds = fixture();
    assert!(is_sweep_data(&ds));
    assert_eq!(default_view(&ds), View::Capacity);
    let c = capacity_curves(&ds, &all(&ds));
    assert_eq!(c.axis, LoadAxis::RequestRate);
    assert_eq!(c.sweeps.len(), 1, "{:?}", sweep_names(&c));
    assert!(c.series_by.is_empty());
    let s = &c.sweeps[0];
    assert_eq!(s.name, "sweep-mock.json");
    let loads: Vec<f64> = s.probes.iter().map(|p| p.load).collect();
    assert_eq!(
        loads,
        [20.0, 40.0, 47.57, 51.88, 51.88, 54.17, 54.17, 56.57, 80.0]
    );
    assert_eq!(
        s.capacity,
        Some(Capacity::Found {
            load: 51.88,
            failed_at: 54.17,
            rests_on: 7,
            at_load: Tally { met: 2, probes: 2 },
            at_failed: Tally { met: 0, probes: 2 },
        })
    );
    assert_eq!(s.knee(), Some((51.88, Some(54.17))));
    // One panel: p90 TTFT, judged over the steady window, under its 100 ms bound.
    assert_eq!(c.panels.len(), 1);
    assert_eq!(c.panels[0].key, "p90_ttft");
    assert_eq!(c.panels[0].title, "P90 TTFT (ms)");
    assert_eq!(c.panels[0].limits, [Some(100.0)]);
    // The values are the file's own (read back here, so remaking the fixture keeps this true).
    let recorded = |load: f64| -> Vec<f64> {
        let key = MetricKey::Extra("slo_p90_ttft_ms".into());
        ds.records()
            .filter(|r| r.request_rate == Some(load))
            .filter_map(|r| r.metric(&key))
            .collect()
    };
    let at_80 = s.probes.last().unwrap();
    assert_eq!(at_80.values, [recorded(80.0).first().copied()]);
    assert_eq!(at_80.verdict, ProbeVerdict::Failed);
    // Percentile objectives only: no goodput, the first panel is request throughput.
    assert_eq!(s.goodput, GoodputSource::Absent);
    let spread = s.by_load(|p| p.values[0]);
    let knee = spread.iter().find(|l| l.load == 51.88).unwrap();
    assert_eq!(knee.probes, 2);
    let at_knee = recorded(51.88);
    assert_eq!(at_knee.len(), 2);
    assert_eq!(
        (knee.min, knee.max),
        (at_knee[0].min(at_knee[1]), at_knee[0].max(at_knee[1]))
    );

    let words = capacity_words(&c);
    assert_eq!(words.len(), 1);
    assert_eq!(
        words[0].capacity,
        "capacity 51.880 req/s: every probe at 51.880 met the objectives and one at 54.170 \
         did not, so the knee lies in [51.880, 54.170) (+4.4 %); it rests on probe 8"
    );
    let notes = words[0].notes.join("\n");
    assert!(
        notes.contains(
            "At the knee: 2 of 2 probes at 51.880 passed; 0 of 2 probes at 54.170 passed."
        ),
        "{notes}"
    );
    let throughputs: Vec<f64> = ds
        .records()
        .filter(|r| r.request_rate == Some(51.88))
        .filter_map(|r| r.metric(&MetricKey::RequestThroughput))
        .collect();
    let (lo, hi) = (
        throughputs[0].min(throughputs[1]),
        throughputs[0].max(throughputs[1]),
    );
    let expected = format!(
        "Request throughput at the capacity: {:.2} req/s ({lo:.2} – {hi:.2} over 2 probes).",
        (lo + hi) / 2.0
    );
    assert!(notes.contains(&expected), "{expected}\n{notes}");
    assert!(
        notes.contains(&format!("Objectives: {OBJECTIVES}.")),
        "{notes}"
    );
    assert!(notes.contains("define no goodput"), "{notes}");
    assert!(selection_notes(&c).is_empty());
}

#[test]
fn the_two_mock_fixtures_overlay_by_model() {
    let bytes = include_bytes!("../../../tests/fixtures/loadgen/sweep-mock-small.json");
    let mut records = fixture().into_records();
    records.extend(
        crate::ingest::read("sweep-mock-small.json", bytes)
            .unwrap()
            .records,
    );
    let ds = Dataset::new(records);
    assert_eq!(default_view(&ds), View::Capacity);
    let c = capacity_curves(&ds, &all(&ds));
    assert_eq!(c.series_by, [DimKey::Known(Dim::Model)]);
    assert_eq!(sweep_names(&c), ["tiny-mock", "tiny-mock-small"]);
    let knees: Vec<_> = c.sweeps.iter().map(Sweep::knee).collect();
    assert_eq!(
        knees,
        [Some((51.88, Some(54.17))), Some((25.93, Some(27.08)))]
    );
    // Its first probe was judged over the whole stage (too few requests for a window):
    // still a probe of the same sweep.
    assert_eq!(c.sweeps[1].probes.len(), 9);
}

#[test]
fn filters_that_hide_probes_are_said() {
    let ds = fixture();
    // Leave out probe 8 (the second pass at 51.88): the capacity stands, on probe 6.
    let shown: Vec<usize> = (0..ds.len()).filter(|&i| i != 7).collect();
    let c = capacity_curves(&ds, &shown);
    let words = capacity_words(&c);
    assert!(words[0].capacity.ends_with("it rests on probe 8"));
    assert!(
        words[0].notes[0].starts_with("The 8 probes shown give: capacity 51.880 req/s")
            && words[0].notes[0].ends_with("it rests on probe 6."),
        "{:?}",
        words[0].notes
    );
    assert!(words[0].notes[1].contains("1 of 1 probe at 51.880 passed"));
}

#[test]
fn the_figure_has_a_panel_per_objective_the_limit_and_the_knee() {
    let ds = fixture();
    let c = capacity_curves(&ds, &all(&ds));
    let fig = figure(&c);
    let data = fig["data"].as_array().unwrap();
    let names: Vec<&str> = data.iter().filter_map(|t| t["name"].as_str()).collect();
    // Throughput panel: the mean line, the passed and failed probes, the capacity star.
    let line = &data[0];
    assert_eq!(line["yaxis"], "y");
    assert_eq!(line["x"].as_array().unwrap().len(), 7, "seven loads");
    assert_eq!(line["error_y"]["type"], "data");
    let star = data
        .iter()
        .find(|t| {
            t["name"]
                .as_str()
                .is_some_and(|n| n.contains("capacity 51.88"))
        })
        .unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(star["x"], serde_json::json!([51.88]));
    assert_eq!(star["marker"]["symbol"], "star");
    let failed = data
        .iter()
        .find(|t| {
            t["name"]
                .as_str()
                .is_some_and(|n| n.ends_with("failed probes"))
                && t["yaxis"] == "y2"
        })
        .unwrap();
    assert_eq!(
        failed["x"].as_array().unwrap().len(),
        4,
        "80, 56.57 and twice 54.17"
    );
    assert_eq!(failed["marker"]["symbol"], "x");
    // The p90 TTFT panel with its 100 ms line across the loads.
    let limit = data
        .iter()
        .find(|t| t["name"] == "limit: P90 TTFT ≤ 100 ms")
        .unwrap_or_else(|| panic!("{names:?}"));
    assert_eq!(limit["yaxis"], "y2");
    assert_eq!(limit["y"], serde_json::json!([100.0, 100.0]));
    let x = limit["x"].as_array().unwrap();
    assert!(x[0].as_f64().unwrap() < 20.0 && x[1].as_f64().unwrap() > 80.0);
    // Two panels on one load axis: the second matches the first, only it is titled.
    let layout = &fig["layout"];
    assert_eq!(layout["xaxis2"]["matches"], "x");
    assert_eq!(layout["xaxis2"]["title"]["text"], "Request rate (req/s)");
    assert_eq!(layout["xaxis"]["showticklabels"], false);
    assert_eq!(layout["yaxis2"]["title"]["text"], "P90 TTFT (ms)");
    assert_eq!(
        layout["yaxis"]["title"]["text"],
        "Request throughput (req/s)"
    );
    assert!(layout["xaxis"]["type"].is_null(), "20 to 80 req/s: linear");
    // The knee shaded on both panels, from the capacity to the first failing load.
    let knees: Vec<&Value> = layout["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["type"] == "rect")
        .collect();
    assert_eq!(knees.len(), 2);
    assert_eq!(
        (knees[0]["x0"].as_f64(), knees[0]["x1"].as_f64()),
        (Some(51.88), Some(54.17))
    );
    assert_eq!(knees[1]["yref"], "y2 domain");
    assert_eq!(layout["height"], 190 + 2 * 230);
}

#[test]
fn sweeps_of_two_deployments_are_two_named_curves() {
    let mut records = sweep("a.json", "vllm", 1.0);
    records.extend(sweep("b.json", "sglang", 4.0));
    let ds = Dataset::new(records);
    let c = capacity_curves(&ds, &all(&ds));
    assert_eq!(c.series_by, [DimKey::Known(Dim::Engine)]);
    assert_eq!(sweep_names(&c), ["sglang", "vllm"]);
    let caps: Vec<Option<(f64, Option<f64>)>> = c.sweeps.iter().map(Sweep::knee).collect();
    assert_eq!(
        caps,
        [Some((38.056, Some(45.24))), Some((9.514, Some(11.31)))]
    );
    // One panel, one shared limit line; a knee per sweep and panel.
    assert_eq!(c.panels.len(), 1);
    assert_eq!(c.panels[0].limits, [Some(100.0), Some(100.0)]);
    let fig = figure(&c);
    let limits = fig["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("limit")))
        .count();
    assert_eq!(limits, 1);
    let rects = fig["layout"]["shapes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["type"] == "rect")
        .count();
    assert_eq!(rects, 4);
    // 4 to 64 req/s: a log axis.
    assert_eq!(fig["layout"]["xaxis"]["type"], "log");
    let words = capacity_words(&c);
    assert_eq!(words[0].name, "sglang");
    assert!(
        words[0]
            .capacity
            .starts_with("capacity 38.056 req/s: all 2 probes at 38.056"),
        "{words:?}"
    );
    assert!(words[0].notes[0].contains("recorded no capacity"));
}

#[test]
fn sweeps_differing_only_in_file_or_limit_are_told_apart() {
    let mut records = sweep("monday.json", "vllm", 1.0);
    records.extend(sweep("tuesday.json", "vllm", 1.1));
    let ds = Dataset::new(records.clone());
    let c = capacity_curves(&ds, &all(&ds));
    assert_eq!(c.series_by, [DimKey::Known(Dim::Source)]);
    assert_eq!(sweep_names(&c), ["monday.json", "tuesday.json"]);
    // Other objectives: a sweep of its own, named by them, each with its own limit line.
    for r in records.iter_mut().skip(7) {
        r.source = Some("monday.json".into());
        r.tags.insert(
            OBJECTIVES_TAG.into(),
            "p90_ttft:200, at least 99% of requests good".into(),
        );
    }
    let ds = Dataset::new(records);
    let c = capacity_curves(&ds, &all(&ds));
    assert_eq!(c.series_by, [DimKey::Tag(OBJECTIVES_TAG.into())]);
    assert_eq!(c.panels[0].limits, [Some(100.0), Some(200.0)]);
    let fig = figure(&c);
    let limits: Vec<&Value> = fig["data"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["name"].as_str().is_some_and(|n| n.starts_with("limit (")))
        .collect();
    assert_eq!(limits.len(), 2);
}

#[test]
fn per_request_objectives_give_goodput_and_a_share_panel() {
    let mut records = sweep("a.json", "vllm", 1.0);
    for (k, r) in records.iter_mut().enumerate() {
        r.tags.insert(
            OBJECTIVES_TAG.into(),
            "ttft:500 p90_ttft:100, at least 95% of requests good".into(),
        );
        r.set_metric(MetricKey::Extra("good_pct".into()), 100.0 - k as f64);
        r.set_metric(
            MetricKey::Extra("slo_ttft_within_pct".into()),
            100.0 - k as f64,
        );
    }
    let ds = Dataset::new(records.clone());
    let c = capacity_curves(&ds, &all(&ds));
    let s = &c.sweeps[0];
    assert_eq!(s.goodput, GoodputSource::Derived);
    let at_8 = s.probes.iter().find(|p| p.load == 8.0).unwrap();
    assert_eq!(at_8.goodput, Some(8.0 * 0.99));
    assert_eq!(c.panels.len(), 2);
    let share = &c.panels[0];
    assert_eq!(share.key, "ttft:500");
    assert_eq!(share.title, "Requests with TTFT ≤ 500 ms (%)");
    assert_eq!(share.limits, [Some(95.0)]);
    assert_eq!(at_8.values, [Some(99.0), Some(40.0)]);
    let words = capacity_words(&c);
    assert!(words[0]
        .notes
        .iter()
        .any(|n| n.starts_with("Goodput at the capacity")));
    assert!(words[0]
        .notes
        .iter()
        .any(|n| n.contains("share of good requests")));
    // vLLM's own goodput, when recorded, is used as it is.
    for r in &mut records {
        r.set_metric(MetricKey::RequestGoodput, 1.5);
    }
    let ds = Dataset::new(records);
    let c = capacity_curves(&ds, &all(&ds));
    assert_eq!(c.sweeps[0].goodput, GoodputSource::Recorded);
    assert!(c.sweeps[0].probes.iter().all(|p| p.goodput == Some(1.5)));
    let fig = figure(&c);
    assert_eq!(fig["layout"]["yaxis"]["title"]["text"], "Goodput (req/s)");
    assert!(fig["layout"]["title"]["text"]
        .as_str()
        .unwrap()
        .contains("dotted: request throughput"));
    let dotted = fig["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["line"]["dash"] == "dot")
        .unwrap();
    assert_eq!(dotted["y"][1], 8.0, "request throughput at 8 req/s");
}

#[test]
fn unfinished_sweeps_cut_short_probes_and_other_axes() {
    let mut records = sweep("a.json", "vllm", 1.0);
    records.truncate(4);
    // The fourth probe was interrupted: kept, not judged.
    records[3].tags.insert(PARTIAL_TAG.into(), "true".into());
    let mut conc = probe("c.json", "vllm", 1, 8.0, true, 10.0);
    conc.request_rate = Some(f64::INFINITY);
    conc.max_concurrency = Some(8);
    records.push(conc);
    let mut plain = Record::default();
    plain.set_metric(MetricKey::RequestThroughput, 1.0);
    records.push(plain);
    let ds = Dataset::new(records);
    assert!(!is_sweep_data(&ds));
    let c = capacity_curves(&ds, &all(&ds));
    assert_eq!(
        (c.sweeps.len(), c.other_axis_sweeps, c.not_probes),
        (1, 1, 1)
    );
    let s = &c.sweeps[0];
    assert_eq!(
        s.capacity,
        Some(Capacity::Found {
            load: 8.0,
            failed_at: 16.0,
            rests_on: 1,
            at_load: Tally { met: 1, probes: 1 },
            at_failed: Tally { met: 0, probes: 1 },
        })
    );
    let words = capacity_words(&c);
    assert!(
        words[0].capacity.ends_with("it rests on probe 2"),
        "{words:?}"
    );
    assert!(words[0].notes[0].contains("recorded no capacity"));
    assert!(words[0]
        .notes
        .iter()
        .any(|n| n.starts_with("1 probe(s) cut short")));
    let notes = selection_notes(&c).join(" ");
    assert!(
        notes.contains("1 selected record(s) are not probes"),
        "{notes}"
    );
    assert!(
        notes.contains("1 sweep(s) over the max concurrency"),
        "{notes}"
    );
    let fig = figure(&c);
    let open = fig["data"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["marker"]["symbol"] == "circle-open")
        .unwrap();
    assert_eq!(open["x"], serde_json::json!([11.31]));
}

#[test]
fn a_concurrency_sweep_reads_its_concurrency() {
    let records: Vec<Record> = [
        (1, true),
        (2, true),
        (4, false),
        (3, true),
        (3, true),
        (4, false),
    ]
    .iter()
    .enumerate()
    .map(|(k, &(load, passed))| {
        let mut r = probe("c.json", "vllm", k as u32 + 1, load as f64, passed, 10.0);
        r.request_rate = Some(f64::INFINITY);
        r.max_concurrency = Some(load);
        r
    })
    .collect();
    let ds = Dataset::new(records);
    let c = capacity_curves(&ds, &all(&ds));
    assert_eq!(c.axis, LoadAxis::Concurrency);
    assert_eq!(c.sweeps.len(), 1);
    assert_eq!(
        capacity_words(&c)[0].capacity,
        "capacity 3.000 concurrent requests: all 2 probes at 3.000 met the objectives and all 2 \
         probes at 4.000 did not, so the knee lies in [3.000, 4.000) (+33.3 %); it rests on \
         probe 5"
    );
}

#[test]
fn hostile_tags_are_text_and_never_panic() {
    let mut records = sweep("<b>x</b>.json", "vllm", 1.0);
    for r in &mut records {
        r.tags
            .insert(OBJECTIVES_TAG.into(), "<script>alert(1)</script>".into());
        r.tags.insert(CAPACITY_TAG.into(), "<img src=x>".into());
    }
    records[0].set_metric(MetricKey::Extra("probe".into()), -3.0);
    records[1].set_metric(MetricKey::Extra("probe_load".into()), f64::NAN);
    let ds = Dataset::new(records);
    let c = capacity_curves(&ds, &all(&ds));
    let s = &c.sweeps[0];
    assert!(s.objectives.is_none());
    assert!(s
        .objectives_error
        .as_deref()
        .unwrap()
        .starts_with("tag.objectives: "));
    assert!(c.panels.is_empty());
    let words = capacity_words(&c);
    assert_eq!(words[0].capacity, "<img src=x>");
    assert!(words[0]
        .notes
        .iter()
        .any(|n| n.starts_with("Objectives unreadable")));
    let json = capacity_plot(&c, Theme::Dark).to_json();
    assert!(
        !json.contains("<b>x</b>"),
        "names are escaped in the figure"
    );
    assert!(json.contains("&lt;b&gt;x&lt;/b&gt;.json"));
    // Nothing selected: no sweep, nothing to say about it.
    let empty = capacity_curves(&ds, &[]);
    assert!(empty.sweeps.is_empty() && capacity_words(&empty).is_empty());
    assert!(!is_sweep_data(&Dataset::default()));
}

#[test]
fn a_probe_too_short_to_judge_is_drawn_not_judged() {
    let records: Vec<Record> = [(10.0, true), (15.0, false), (15.0, false), (10.0, true)]
        .iter()
        .enumerate()
        .map(|(k, &(load, passed))| {
            let mut r = probe("s.json", "vllm", k as u32 + 1, load, passed, 10.0);
            if k == 1 {
                r.tags.insert(VERDICT_TAG.into(), TOO_SHORT_VERDICT.into());
            }
            r
        })
        .collect();
    let ds = Dataset::new(records);
    assert!(is_sweep_data(&ds));
    let c = capacity_curves(&ds, &all(&ds));
    let verdicts: Vec<ProbeVerdict> = c.sweeps[0].probes.iter().map(|p| p.verdict).collect();
    assert_eq!(
        verdicts
            .iter()
            .filter(|v| **v == ProbeVerdict::Unjudged)
            .count(),
        1
    );
    let words = capacity_words(&c);
    assert!(
        words[0]
            .notes
            .iter()
            .any(|n| n.starts_with("1 probe(s) cut short (tag.partial) or too short")),
        "{words:?}"
    );
    // The capacity rests on the judged probes only: 2 at 10 passed, 1 at 15 failed.
    assert_eq!(
        c.sweeps[0].capacity,
        Some(Capacity::Found {
            load: 10.0,
            failed_at: 15.0,
            rests_on: 3,
            at_load: Tally { met: 2, probes: 2 },
            at_failed: Tally { met: 0, probes: 1 },
        })
    );
}
