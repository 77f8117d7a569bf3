//! Dataset store speed on 100k records: indexing, filtering and faceted counts; and, on the
//! browser test's 10^6-row tidy CSV, each step the page takes from the file to a drawn chart
//! and from a filter click to a redrawn one (natively: the page runs the same code as wasm,
//! slower by a factor, so these say which step dominates).
//! Prints timings (median of several runs); asserts nothing. Run with `cargo bench --bench store`.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

/// The allocator the `benchlens` binary runs with (src/main.rs), so these figures are the
/// binary's: the library sets none.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::hint::black_box;
use std::time::Instant;

use benchlens::charts::{self, Theme};
use benchlens::ingest::{self, Contents};
use benchlens::model::{
    Dataset, Dim, DimValue, Filter, Index, LatencyMetric, MetricKey, Record, Stat,
};
use benchlens::views::chart::{chart_contents_cached, ChartChoice, LayoutCache};
use benchlens::wire::{decode_records, encode_records, TableEncoder, TableRows};

#[path = "../tests/common/tidy.rs"]
mod tidy;
use tidy::tidy_csv;

fn records(n: usize) -> Vec<Record> {
    let engines = ["vllm", "sglang", "tgi", "trtllm"];
    let gpus = ["A100", "H100", "L40S", "MI300X", "H200"];
    (0..n)
        .map(|i| {
            let mut r = Record {
                model: Some(format!("model-{}", i % 40).into()),
                engine: Some(engines[i % engines.len()].into()),
                gpu: Some(gpus[(i / 7) % gpus.len()].into()),
                gpu_count: Some(1 << (i % 4)),
                batch_size: Some(1 << (i % 11)),
                request_rate: Some(if i % 13 == 0 {
                    f64::INFINITY
                } else {
                    (i % 32) as f64
                }),
                input_len: Some(128.0 * ((i % 8) + 1) as f64),
                source: Some(format!("run-{}.json", i % 25).into()),
                ..Record::default()
            };
            r.set_metric(
                MetricKey::latency(LatencyMetric::Ttft, Stat::Mean),
                i as f64 * 0.5,
            );
            r.set_metric(MetricKey::OutputThroughput, 1000.0 + i as f64);
            r
        })
        .collect()
}

fn median_ms(mut f: impl FnMut(), runs: usize) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64() * 1000.0
        })
        .collect();
    times.sort_by(f64::total_cmp);
    times[runs / 2]
}

fn ms_of<T>(f: impl FnOnce() -> T) -> (T, f64) {
    let t = Instant::now();
    let out = f();
    (out, t.elapsed().as_secs_f64() * 1000.0)
}

/// The page's steps on the million-row tidy CSV.
/// The trade-off view's steps on the 10^6 rows (issue 33 item 4: no main-thread task over
/// 100 ms with 10^6 points), at once and as `app::tradeoff` takes them: rows grouped 20,000 at
/// a time, each series' frontier, each series' traces, then the figure, each its own step.
fn tradeoff_steps(ds: &Dataset) {
    use benchlens::analysis::tradeoff::{
        assemble_plot, assumed_in, assumptions_used, finish_series, overview_as_typed,
        series_traces, tradeoff, tradeoff_plot, LatencyAxis, PlotFrame, ThroughputAxis,
        TradeoffGroups, TradeoffSpec,
    };
    let indices: Vec<usize> = (0..ds.len()).collect();
    let spec = TradeoffSpec {
        throughput: ThroughputAxis::OutputTokensPerS,
        latency: LatencyAxis::TokensPerSPerUser,
        series_by: vec![
            benchlens::model::DimKey::Known(Dim::Engine),
            benchlens::model::DimKey::Known(Dim::Gpu),
        ],
        assumptions: Default::default(),
        theme: Theme::Light,
    };
    let (series, series_ms) = ms_of(|| tradeoff(ds, &indices, &spec));
    let (_, plot_ms) = ms_of(|| tradeoff_plot(ds, &series, &spec).to_json());
    let (_, frontier_ms) = ms_of(|| {
        benchlens::views::analysis::frontier_rows(
            &series,
            benchlens::analysis::tradeoff::MAX_FRONTIER_DRAWN,
        )
    });
    let (_, assumed_ms) = ms_of(|| assumptions_used(ds, &indices, &spec));
    let (_, overview_ms) = ms_of(|| overview_as_typed(&series, &spec, Vec::new(), &[], ""));
    let points: usize = series.iter().map(|s| s.points.len()).sum();
    println!(
        "  trade-off view, {points} points in {} series (tok/s per user against output tok/s):",
        series.len()
    );
    println!("    series and frontiers {series_ms:8.1} ms; figure {plot_ms:6.1} ms; frontier table {frontier_ms:5.1} ms; assumptions {assumed_ms:5.1} ms; overview {overview_ms:5.1} ms");
    println!(
        "    together {:.1} ms (natively; the page's wasm is slower by a factor)",
        series_ms + plot_ms + frontier_ms + assumed_ms + overview_ms
    );
    // In steps, as the page takes them: the longest of each kind.
    let mut groups = TradeoffGroups::default();
    let group_ms = indices
        .chunks(20_000)
        .map(|rows| ms_of(|| groups.add(ds, rows, &spec)).1)
        .fold(0.0, f64::max);
    let mut finish_ms = 0.0f64;
    let series: Vec<_> = groups
        .into_series(ds)
        .into_iter()
        .map(|(name, points)| {
            let (s, ms) = ms_of(|| finish_series(name, points, &spec));
            finish_ms = finish_ms.max(ms);
            s
        })
        .collect();
    let (frame, frame_ms) = ms_of(|| PlotFrame::new(&series));
    let mut traces_ms = 0.0f64;
    let traces: Vec<_> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let (t, ms) = ms_of(|| series_traces(ds, &frame, i, s, &spec));
            traces_ms = traces_ms.max(ms);
            t
        })
        .collect();
    let (_, assemble_ms) = ms_of(|| {
        let assumed = assumed_in(ds, &series, &spec);
        assemble_plot(&frame, &series, traces, &assumed, &spec).to_json()
    });
    println!("    in the page's steps, the longest: 20,000 rows grouped {group_ms:5.1} ms; a series' frontier {finish_ms:5.1} ms; the chart's frame {frame_ms:5.1} ms; a series' traces {traces_ms:5.1} ms; the figure assembled {assemble_ms:5.1} ms");
}

fn million() {
    let csv = tidy_csv(1_000_000);
    // The table path (a CSV read into columns): what the worker and the page do.
    let (columnar, columnar_ms) = ms_of(|| ingest::read_columnar("tidy-1m.csv", csv.as_bytes()));
    let Ok(Contents::Columns(c)) = columnar else {
        panic!("the tidy CSV is read into columns");
    };
    let ((head, batches), table_ms) = ms_of(|| {
        let t = TableEncoder::new(&c.columns).unwrap();
        let batches: Vec<Vec<u8>> = (0..t.len())
            .step_by(10_000)
            .map(|s| t.rows(s..s + 10_000))
            .collect();
        (t.head(), batches)
    });
    drop(c);
    // The page keeps the table as its index: the batches only count rows.
    let (ds, rebuild_ms) = ms_of(|| {
        let mut rows = TableRows::new(&head).unwrap();
        for b in &batches {
            rows.skip_rows(b).unwrap();
        }
        let mut ds = Dataset::default();
        ds.extend_columnar(rows.into_index());
        ds
    });
    // Worked out once per change of the dataset; each filter then reads it.
    let (_, configurations_ms) = ms_of(|| ds.configurations().len());
    // The record path (other formats): records in batches, indexed by the worker.
    let (done, read_ms) = ms_of(|| ingest::read("tidy-1m.csv", csv.as_bytes()).unwrap());
    let records = done.records;
    let (wire, encode_ms) = ms_of(|| records.chunks(2000).map(encode_records).collect::<Vec<_>>());
    let (_, index_ms) = ms_of(|| Index::build(&records));
    drop(records);
    let (_, decode_ms) = ms_of(|| {
        let mut all = Vec::with_capacity(ds.len());
        for b in &wire {
            all.extend(decode_records(b).unwrap());
        }
        all
    });
    drop(wire);

    let (view, view_ms) = ms_of(|| benchlens::analysis::defaults::default_view(&ds));
    let choice = ChartChoice {
        view,
        ..ChartChoice::default()
    };
    let mut cache = LayoutCache::default();
    // As the page: the filter pass's rows and configurations, the contents, the figure.
    let mut chart = |f: &Filter| {
        let pass = ds.filter_pass(f);
        let c = chart_contents_cached(
            &ds,
            &pass.rows,
            Some(&pass.configurations),
            &choice,
            Theme::Light,
            1,
            &mut cache,
        )
        .unwrap();
        charts::plot(&ds, &c.series, &c.spec).to_json()
    };
    let (_, first_chart_ms) = ms_of(|| chart(&Filter::all()));
    let filter = Filter::all().select(Dim::Engine, Some("vllm".into()));
    let (_, click_ms) = ms_of(|| chart(&filter));
    // Clicks in turn, as the browser bench makes them: one engine chosen, then none (every
    // row again).
    let mut one_ms = Vec::new();
    let mut all_ms = Vec::new();
    for _ in 0..7 {
        one_ms.push(ms_of(|| chart(&filter)).1);
        all_ms.push(ms_of(|| chart(&Filter::all())).1);
    }
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let (one_ms, all_ms) = (median(one_ms), median(all_ms));
    let matching_ms = median_ms(|| drop(black_box(ds.matching(&filter))), 5);
    let facets_ms = median_ms(|| drop(black_box(ds.facets(&filter))), 5);
    let pass_ms = median_ms(|| drop(black_box(ds.filter_pass(&filter))), 5);
    let indices = ds.matching(&filter);
    let c =
        chart_contents_cached(&ds, &indices, None, &choice, Theme::Light, 1, &mut cache).unwrap();
    let notes_ms = median_ms(
        || {
            let table = charts::comparison_table(&c.series, &c.spec.metric);
            drop(black_box(benchlens::analysis::quality::comparison_notes(
                &ds, &indices, &c.spec, &table,
            )))
        },
        5,
    );
    let run_ms = median_ms(
        || {
            black_box(
                indices
                    .iter()
                    .any(|&i| ds.kept_record(i).is_some_and(|r| !r.requests.is_empty())),
            );
        },
        5,
    );
    println!(
        "the page's steps on a 10^6-row tidy CSV ({:.1} MB), natively:",
        csv.len() as f64 / 1e6
    );
    println!("  table path: read into columns (worker)   {columnar_ms:8.1} ms");
    println!("              index and batches (worker)   {table_ms:8.1} ms");
    println!("              index decoded, kept (page)   {rebuild_ms:8.1} ms");
    println!("  record path: read (worker)               {read_ms:8.1} ms");
    println!("               encode in batches (worker)  {encode_ms:8.1} ms");
    println!("               index (worker)              {index_ms:8.1} ms");
    println!("               decode the batches (page)   {decode_ms:8.1} ms");
    println!(
        "  its configurations ({}, once per change) {configurations_ms:6.1} ms",
        ds.configurations().len()
    );
    println!("  the view the data asks for ({view:?})     {view_ms:8.1} ms");
    println!("  first chart (records matching, contents, figure) {first_chart_ms:6.1} ms");
    println!("  after a filter click: chart          {click_ms:8.1} ms");
    println!("                        clicks in turn: one engine {one_ms:5.1} ms, all again {all_ms:5.1} ms (medians of 7)");
    tradeoff_steps(&ds);
    println!("                        of which matching {matching_ms:5.1} ms");
    println!("                        facet counts   {facets_ms:8.1} ms");
    println!("                        rows and counts (filter pass) {pass_ms:5.1} ms");
    println!("                        comparison notes {notes_ms:6.1} ms");
    println!("                        a walk over the matching records {run_ms:6.1} ms");
}

fn main() {
    million();
    let n = 100_000;
    let recs = records(n);
    let index_ms = median_ms(|| drop(black_box(Dataset::new(recs.clone()))), 5);
    let ds = Dataset::new(recs);
    let filter = Filter::default()
        .select(Dim::Engine, Some("vllm".into()))
        .select(Dim::Engine, Some("sglang".into()))
        .select(Dim::Gpu, Some("H100".into()))
        .select(Dim::BatchSize, Some(DimValue::Num(64.0)));
    let matching_ms = median_ms(|| drop(black_box(ds.matching(&filter))), 21);
    let facets_ms = median_ms(|| drop(black_box(ds.facets(&filter))), 21);
    println!(
        "dataset store, {n} records, {} dimensions:",
        ds.dim_keys().count()
    );
    println!("  index (Dataset::new, incl. clone)   {index_ms:8.2} ms");
    println!(
        "  records matching a 3-dimension filter {matching_ms:6.2} ms  ({} match)",
        ds.matching(&filter).len()
    );
    println!("  facet counts for every dimension     {facets_ms:8.2} ms");
}
