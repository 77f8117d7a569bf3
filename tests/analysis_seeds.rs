//! Trade-off, SLO, distributions, regression and quality flags on the seeds and fixtures.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use benchlens::analysis::distribution::{distributions, percentile_text_table, RequestQuantity};
use benchlens::analysis::improvement::{improvement, ImprovementSpec};
use benchlens::analysis::quality::{compared_pair_flags, record_flags, FlagKind};
use benchlens::analysis::regression::{regression, RegressionSpec};
use benchlens::analysis::slo::{slo, SloLimit, SloSpec};
use benchlens::analysis::tradeoff::{
    tradeoff, tradeoff_plot, LatencyAxis, ThroughputAxis, TradeoffSpec,
};
use benchlens::charts::Theme;
use benchlens::ingest;
use benchlens::model::{Dataset, Dim, DimValue, LatencyMetric, MetricKey, Record, Stat};

fn read(path: &str) -> Vec<Record> {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
    let name = path.rsplit('/').next().unwrap_or(path);
    ingest::read(name, &bytes)
        .unwrap_or_else(|e| panic!("{e}"))
        .records
}

fn all(ds: &Dataset) -> Vec<usize> {
    (0..ds.len()).collect()
}

const SEED_001: &str = "seeds/001_b815cef7710eda19.txt";

#[test]
fn seed_001_vllm_over_sgl_mean_ttft_matches_the_report() {
    let ds = Dataset::new(read(SEED_001));
    let metric = MetricKey::latency(LatencyMetric::Ttft, Stat::Mean);
    let spec = ImprovementSpec::new(Dim::Engine, "sgl", "vllm", metric);
    let t = improvement(&ds, &all(&ds), &spec).unwrap();
    assert_eq!(t.rows.len(), 6, "{}", t.summary());
    let rate = t
        .matching
        .key_dims
        .iter()
        .position(|d| *d == Dim::RequestRate.into())
        .unwrap();
    let at = |r: f64| {
        t.rows
            .iter()
            .find(|row| row.key[rate] == Some(DimValue::Num(r)))
            .and_then(|row| row.improvement_pct)
            .unwrap()
    };
    // The report's "Faster by (%)" where vllm is fastest: 30.58 % at rate 1, 17.06 % at 10.
    assert_eq!(format!("{:.2}", at(1.0)), "30.58");
    assert_eq!(format!("{:.2}", at(10.0)), "17.06");
    // At inf sgl is faster: negative here (the report measures it against vllm: 3.80 %).
    assert!(at(f64::INFINITY) < 0.0);
}

#[test]
fn seed_001_slo_capacity_per_engine() {
    let ds = Dataset::new(read(SEED_001));
    let spec = SloSpec {
        limits: vec![
            SloLimit::parse("p99_ttft_ms<=500").unwrap(),
            SloLimit::parse("mean_tpot_ms<=50").unwrap(),
        ],
        load: Dim::RequestRate.into(),
        throughput: MetricKey::OutputThroughput,
        series_by: vec![Dim::Engine.into()],
    };
    let out = slo(&ds, &all(&ds), &spec);
    let names: Vec<&str> = out.iter().map(|o| o.series.as_str()).collect();
    assert_eq!(names, ["sgl", "vllm"]);
    let vllm = &out[1];
    let m = vllm.measured.as_ref().unwrap();
    assert_eq!(m.load, 20.0);
    assert!(!m.interpolated);
    assert!((m.throughput.unwrap() - 1921.9663764546028).abs() < 1e-9);
    let e = vllm.estimate.as_ref().unwrap();
    assert!(e.interpolated);
    // p99 TTFT crosses 500 ms between rate 20 (233.34) and 30 (1423.89) before TPOT does.
    let t = (500.0 - 233.33655538037414) / (1423.8852490717543 - 233.33655538037414);
    assert!((e.load - (20.0 + 10.0 * t)).abs() < 1e-9, "{e:?}");
    assert!(e.load > 20.0 && e.load < 30.0);
    // sgl breaks the TTFT limit at rate 1 but meets both at 10 and 20.
    assert!(!out[0].checks[0].passes());
    assert_eq!(out[0].measured.as_ref().unwrap().load, 20.0);
}

#[test]
fn seed_001_tradeoff_frontiers() {
    let ds = Dataset::new(read(SEED_001));
    let spec = TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerS,
        latency: LatencyAxis::TokensPerSPerUser,
        series_by: vec![Dim::Engine.into()],
        theme: Theme::Light,
        assumptions: Default::default(),
    };
    let series = tradeoff(&ds, &all(&ds), &spec);
    // From the file's JSON lines, per engine ("framework"), in order of tokens per second per
    // user (1000 / mean_tpot_ms): (request_rate, 1000 / mean_tpot_ms, output_throughput, on
    // the frontier). A point is off the frontier when another has more of both:
    // - vllm at rate inf (9.3908, 2677.78) is beaten by vllm at rate 30 (11.1103, 2791.22);
    // - sgl at rate 30 (7.7134, 2707.68) is beaten by sgl at rate 35 (7.7452, 2783.12).
    let inf = f64::INFINITY;
    /// (request_rate, 1000 / mean_tpot_ms, output_throughput, on the frontier).
    type Point = (f64, f64, f64, bool);
    let want: [(&str, [Point; 6]); 2] = [
        (
            "sgl",
            [
                (30.0, 1000.0 / 129.64514109300026, 2707.684571994086, false),
                (35.0, 1000.0 / 129.11227375657657, 2783.1165187409815, true),
                (inf, 1000.0 / 83.2646009823034, 2694.614157374034, true),
                (20.0, 1000.0 / 29.714098620220238, 1924.2527055769406, true),
                (10.0, 1000.0 / 11.41581945796458, 960.581896497068, true),
                (1.0, 1000.0 / 7.359577867755924, 121.02912422150533, true),
            ],
        ),
        (
            "vllm",
            [
                (35.0, 1000.0 / 121.6537595298719, 2845.198643096852, true),
                (inf, 1000.0 / 106.48754271275457, 2677.781803879899, false),
                (30.0, 1000.0 / 90.00667989586192, 2791.2195851349875, true),
                (20.0, 1000.0 / 21.385631880415048, 1921.9663764546028, true),
                (10.0, 1000.0 / 11.844500969877462, 959.6860197935362, true),
                (1.0, 1000.0 / 8.564716330980287, 120.81006055190667, true),
            ],
        ),
    ];
    assert_eq!(series.len(), want.len());
    for (s, (name, points)) in series.iter().zip(want) {
        assert_eq!(s.name, name);
        // The series keeps its records' order; compared here in order of x.
        let mut got: Vec<Point> = s
            .points
            .iter()
            .map(|p| {
                let rate = ds.record(p.record).unwrap().request_rate.unwrap();
                (rate, p.latency, p.throughput, p.on_frontier)
            })
            .collect();
        got.sort_by(|a, b| a.1.total_cmp(&b.1));
        assert_eq!(got, points, "{name}");
        // The frontier in x order.
        let frontier: Vec<(f64, f64)> = points.iter().filter(|p| p.3).map(|p| (p.1, p.2)).collect();
        assert_eq!(s.frontier_xy(), frontier, "{name}");
    }
    let json = tradeoff_plot(&ds, &series, &spec).to_json();
    assert!(json.contains("frontier"));
}

#[test]
fn per_request_percentiles_match_the_files_own() {
    let records = read("vllm/vllm-4qps-concurrency8-Llama-3.1-8B-Instruct-20250301-101500.json");
    let ds = Dataset::new(records);
    let d = distributions(&ds, &all(&ds), RequestQuantity::TtftMs, &[]);
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].sorted.len(), 3);
    let p99 = d[0].percentile(99.0).unwrap();
    // The file's p99_ttft_ms, computed by vLLM with numpy.
    let stored = ds
        .record(0)
        .unwrap()
        .metric(&MetricKey::from_name("p99_ttft_ms").unwrap())
        .unwrap();
    assert!((p99 - stored).abs() < 1e-9, "{p99} vs {stored}");
    let md = percentile_text_table(&d, RequestQuantity::TtftMs, &[50.0, 99.0]).to_markdown();
    assert!(md.contains("| all | 3 | 60.00 | 60.00 | 69.80 |"), "{md}");
}

#[test]
fn regression_of_a_seed_against_itself_is_clean() {
    let records = read(SEED_001);
    let r = regression(&records, &records, &RegressionSpec::default()).unwrap();
    assert_eq!(r.matched, 12);
    assert!(r.changes.is_empty());
    assert!(r.matching.unmatched_baseline.is_empty() && r.matching.unmatched_candidate.is_empty());
}

#[test]
fn quality_flags_on_seeds() {
    let seed_001 = read(SEED_001);
    let inf = seed_001
        .iter()
        .find(|r| r.request_rate == Some(f64::INFINITY))
        .unwrap();
    assert!(record_flags(inf)
        .iter()
        .any(|f| f.kind == FlagKind::InfiniteRequestRate));
    let seed_002 = read("seeds/002_44f3a8b9f2336bbb.txt");
    let flags = record_flags(&seed_002[0]);
    let inferred = flags.iter().find(|f| f.kind == FlagKind::Inferred).unwrap();
    assert!(
        inferred.text.contains("gpu (from heading line 3)"),
        "{}",
        inferred.text
    );
    // Rows 0 and 1 of the vllm table: same input length, different output lengths.
    let pair = compared_pair_flags(&seed_002[0], &seed_002[1]);
    assert!(pair
        .iter()
        .any(|f| f.text == "output lengths differ: 128 vs 512 tokens"));
}
