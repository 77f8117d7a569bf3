#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

fn read_csv(text: &str) -> crate::ingest::Ingested {
    crate::ingest::read("results.csv", text.as_bytes()).unwrap()
}

fn first(got: &crate::ingest::Ingested, name: &str) -> Option<f64> {
    got.records[0].metric(&MetricKey::from_name(name).unwrap())
}

/// A paper's CSV with `ttft` and `latency` and no unit, every value a few seconds: read
/// as seconds, with a warning that says it was guessed.
#[test]
fn unitless_latency_too_fast_for_ms_is_seconds_with_a_warning() {
    let got = read_csv("rate,ttft,latency\n1,0.69,2.5\n4,0.91,3.75\n");
    assert_eq!(first(&got, "mean_ttft_ms"), Some(690.0));
    assert_eq!(first(&got, "mean_e2el_ms"), Some(2500.0));
    let guessed: Vec<_> = got
        .warnings
        .iter()
        .filter(|w| w.message.contains("read as seconds (guessed)"))
        .collect();
    assert_eq!(guessed.len(), 2, "{:?}", got.warnings);
    // A TTFT of hundreds stays ms; an ITL below 1 alone is seconds, one of 20 is ms.
    let got = read_csv("rate,ttft\n1,120\n2,180\n");
    assert_eq!(first(&got, "mean_ttft_ms"), Some(120.0));
    let got = read_csv("rate,itl\n1,0.021\n2,0.025\n");
    assert_eq!(first(&got, "mean_itl_ms"), Some(21.0));
    let got = read_csv("rate,itl\n1,20\n2,25\n");
    assert_eq!(first(&got, "mean_itl_ms"), Some(20.0));
    // A light-load TTFT of 25 ms beside a TPOT of 8 ms: ms for both, nothing guessed.
    let got = read_csv("rate,ttft,tpot\n1,25.3,8.2\n2,18.7,8.9\n");
    assert_eq!(first(&got, "mean_ttft_ms"), Some(25.3));
    assert_eq!(first(&got, "mean_tpot_ms"), Some(8.2));
    assert!(got.warnings.iter().all(|w| !w.message.contains("guessed")));
}

/// The unit the other latency columns state decides a unitless one, whatever its range.
#[test]
fn unitless_latency_takes_the_unit_of_its_neighbours() {
    let got = read_csv("rate,ttft,e2e_latency_s\n1,45,2.5\n");
    assert_eq!(first(&got, "mean_ttft_ms"), Some(45000.0));
    assert!(got.warnings.iter().any(|w| w
        .message
        .contains("the unit of the table's other latency columns")));
    let got = read_csv("rate,ttft,e2e_latency_ms\n1,0.5,2500\n");
    assert_eq!(first(&got, "mean_ttft_ms"), Some(0.5));
    // Cells that carry their unit are read by the cell.
    let got = read_csv("rate,ttft\n1,96.6ms\n");
    assert!(got.warnings.iter().all(|w| !w.message.contains("guessed")));
}

fn target(name: &str) -> Option<String> {
    guess_column(name, true).target
}

#[test]
fn columns_map_by_name_and_unit() {
    assert_eq!(target("TTFT (ms)").as_deref(), Some("mean_ttft_ms"));
    let m = guess_column("ttft_s", true);
    assert_eq!(m.target.as_deref(), Some("mean_ttft_ms"));
    assert_eq!(m.scale, 1000.0);
    assert_eq!(target("P99 ITL (ms)").as_deref(), Some("p99_itl_ms"));
    assert_eq!(
        target("Throughput (tok/s)").as_deref(),
        Some("output_throughput")
    );
    assert_eq!(
        target("Throughput (requests/s)").as_deref(),
        Some("request_throughput")
    );
    assert_eq!(
        target("Total Token Tput (tok/s)").as_deref(),
        Some("total_token_throughput")
    );
    assert_eq!(target("throughput").as_deref(), Some("extra.throughput"));
    assert_eq!(target("batch").as_deref(), Some("batch_size"));
    assert_eq!(target("bs").as_deref(), Some("batch_size"));
    assert_eq!(target("concurrency").as_deref(), Some("max_concurrency"));
    assert_eq!(target("gpu").as_deref(), Some("gpu"));
    assert_eq!(target("nrGPUs").as_deref(), Some("gpu_count"));
    assert_eq!(
        target("Improvement").as_deref(),
        Some("extra.reported_improvement_pct")
    );
    assert_eq!(target("speedup"), None);
    assert_eq!(
        target("Average latency per token (ms)").as_deref(),
        Some("extra.average_latency_per_token_ms")
    );
    assert_eq!(target("Mean latency (ms)").as_deref(), Some("mean_e2el_ms"));
    assert_eq!(
        guess_column("node", false).target.as_deref(),
        Some("tag.node")
    );
}
