//! Improvement tables on the user's seeds, checked against the numbers the seeds print.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use benchlens::analysis::improvement::{
    improvement, improvement_by, improvement_heatmap, ImprovementSpec,
};
use benchlens::ingest;
use benchlens::model::{Dataset, Dim, DimValue, MetricKey};

fn seed(name: &str) -> (Vec<u8>, Dataset) {
    let path = format!("{}/tests/fixtures/seeds/{name}", env!("CARGO_MANIFEST_DIR"));
    let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let got = ingest::read(name, &bytes).unwrap_or_else(|e| panic!("{e}"));
    (bytes, Dataset::new(got.records))
}

fn all(ds: &Dataset) -> Vec<usize> {
    (0..ds.len()).collect()
}

#[test]
fn seed_000_reproduces_every_improvement_row() {
    let (bytes, ds) = seed("000_258d36619a7af95a.txt");
    assert_eq!(ds.len(), 1402);
    let spec = ImprovementSpec::new(
        Dim::Gpu,
        "Tesla",
        "A100",
        MetricKey::Extra("throughput".into()),
    );
    let table = improvement(&ds, &all(&ds), &spec).unwrap();
    assert_eq!(table.rows.len(), 701, "{}", table.summary());
    assert!(
        table.matching.unmatched_baseline.is_empty()
            && table.matching.unmatched_candidate.is_empty()
    );
    assert!(table.matching.duplicates.is_empty() && table.matching.tied_dims.is_empty());
    let names: Vec<String> = table.matching.key_dims.iter().map(|d| d.name()).collect();
    assert_eq!(
        names,
        ["model", "engine", "gpu_count", "batch_size", "tag.status"]
    );

    let text = String::from_utf8(bytes).unwrap();
    let mut checked = 0;
    let mut within_1e6 = 0;
    for line in text.lines().skip(1) {
        let f: Vec<&str> = line.split_whitespace().collect();
        // The seed spells the engine "vLLM"; benchlens keeps one spelling, "vllm".
        let (model, engine) = (f[1], f[2].to_ascii_lowercase());
        let gpus: f64 = f[3].parse().unwrap();
        let batch: f64 = f[4].parse().unwrap();
        let expected: f64 = f[9].parse().unwrap();
        let key = [
            Some(DimValue::from(model)),
            Some(DimValue::from(engine.as_str())),
            Some(DimValue::Num(gpus)),
            Some(DimValue::Num(batch)),
            Some(DimValue::from("ok")),
        ];
        let row = table
            .row(&key)
            .unwrap_or_else(|| panic!("no row for {line}"));
        let got = row.improvement_pct.unwrap();
        let a100: f64 = f[5].parse().unwrap();
        let tesla: f64 = f[6].parse().unwrap();
        assert_eq!(row.candidate_value, a100);
        assert_eq!(row.baseline_value, tesla);
        // The seed computed its column from unrounded throughputs but prints them to six
        // decimals (±5e-7 each); the column itself is rounded to six decimals too. The
        // recomputed value must agree within that propagated rounding error ...
        let bound = 100.0 * 5e-7 * (1.0 / tesla + a100 / (tesla * tesla)) + 5e-7 + 1e-9;
        assert!(
            (got - expected).abs() <= bound.max(1e-6),
            "{line}: got {got}"
        );
        // ... which is within 1e-6 for all but the rows with the smallest throughputs.
        if (got - expected).abs() <= 1e-6 {
            within_1e6 += 1;
        }
        // The file's own figure is carried beside the recomputed one, exactly as printed.
        assert_eq!(row.reported_pct, Some(expected), "{line}");
        checked += 1;
    }
    assert_eq!(checked, 701);
    eprintln!("rows within 1e-6: {within_1e6}");
    assert!(within_1e6 >= 600, "{within_1e6}");

    let key = [
        Some(DimValue::from("Codellama-13b-hf")),
        Some(DimValue::from("vllm")),
        Some(DimValue::Num(1.0)),
        Some(DimValue::Num(512.0)),
        Some(DimValue::from("ok")),
    ];
    let row = table.row(&key).unwrap();
    // The seed prints 311.294330, computed before its throughputs were rounded; from the
    // printed 126.342806 / 30.718344 the exact value is 311.2943263 (within the ±8.3e-6 that
    // six-decimal inputs allow).
    let got = row.improvement_pct.unwrap();
    assert!((got - 311.294330).abs() < 1e-5, "{got}");
    assert!((got - 311.294_326_283).abs() < 1e-8, "{got}");
    // The file's own figure, as printed, beside the recomputed one.
    assert_eq!(row.reported_pct, Some(311.294330));
    assert!(table.has_reported());
    let md = table.to_text_table().to_markdown();
    assert!(md.contains("| 311.294326 | 311.294330 |"), "{md}");
    assert!(md
        .lines()
        .next()
        .unwrap()
        .contains("Improvement in the file (%)"));

    // The reverse comparison is not the file's: its figure is never shown there.
    let reverse = ImprovementSpec::new(
        Dim::Gpu,
        "A100",
        "Tesla",
        MetricKey::Extra("throughput".into()),
    );
    let rev = improvement(&ds, &all(&ds), &reverse).unwrap();
    assert_eq!(rev.rows.len(), 701);
    assert!(!rev.has_reported());
    assert!(!rev
        .to_text_table()
        .to_markdown()
        .contains("Improvement in the file"));

    let by_gpus = improvement_by(&table, &Dim::GpuCount.into()).unwrap();
    assert_eq!(by_gpus.len(), 4);
    assert_eq!(by_gpus.iter().map(|g| g.rows).sum::<usize>(), 701);
    let heat = improvement_heatmap(&table, &Dim::BatchSize.into(), &Dim::Model.into()).unwrap();
    assert_eq!(heat.y.len(), 20);
}

#[test]
fn seed_002_vllm_over_tgi_drops_the_engine_version_by_itself() {
    let (_, ds) = seed("002_44f3a8b9f2336bbb.txt");
    let spec = ImprovementSpec::new(Dim::Engine, "tgi", "vllm", MetricKey::OutputThroughput);
    let table = improvement(&ds, &all(&ds), &spec).unwrap();
    assert_eq!(table.matching.tied_dims, vec![Dim::EngineVersion.into()]);
    assert_eq!(table.rows.len(), 16, "{}", table.summary());
    let pos_in = table
        .matching
        .key_dims
        .iter()
        .position(|d| *d == Dim::InputLen.into())
        .unwrap();
    let pos_out = table
        .matching
        .key_dims
        .iter()
        .position(|d| *d == Dim::OutputLen.into())
        .unwrap();
    let row = table
        .rows
        .iter()
        .find(|r| {
            r.key[pos_in] == Some(DimValue::Num(128.0))
                && r.key[pos_out] == Some(DimValue::Num(128.0))
        })
        .unwrap();
    // 1197.56 / 1107.30 − 1 = 8.151...%
    assert!(
        (row.improvement_pct.unwrap() - 8.15).abs() < 0.005,
        "{row:?}"
    );

    // Ignoring the version explicitly gives the same rows and no tied dimension.
    let spec = spec.ignoring(Dim::EngineVersion);
    let table = improvement(&ds, &all(&ds), &spec).unwrap();
    assert!(table.matching.tied_dims.is_empty());
    assert_eq!(table.rows.len(), 16);
}

#[test]
fn a_file_loaded_twice_reports_duplicates_instead_of_picking() {
    let (_, once) = seed("002_44f3a8b9f2336bbb.txt");
    let mut twice = once.clone().into_records();
    twice.extend(once.into_records());
    let ds = Dataset::new(twice);
    let spec = ImprovementSpec::new(Dim::Engine, "tgi", "vllm", MetricKey::OutputThroughput);
    let table = improvement(&ds, &all(&ds), &spec).unwrap();
    assert!(table.rows.is_empty());
    assert_eq!(table.matching.duplicates.len(), 16);
    assert!(table
        .matching
        .duplicates
        .iter()
        .all(|d| d.baseline_records.len() == 2 && d.candidate_records.len() == 2));
    assert!(table
        .summary()
        .contains("16 duplicate keys (64 records) not compared"));
}
