//! `benchlens sweep`: the capacity search ([`super::capacity`]) driven against a server.
//!
//! Each probe is one `run` stage at the load the search asks for (a request rate, or a
//! concurrency with unbounded rate), measured over its steady-state window and judged against
//! the objectives. Every probe becomes a stage of one result file, tagged with its verdict,
//! so the explorer can draw the curve; the capacity, its bracket and the probe it rests on are
//! printed and recorded on every stage (`tag.capacity`). The per-request file keeps every
//! request of every probe, warm-up and drain included.

use std::path::PathBuf;

use tokio::sync::watch;

use super::capacity::{
    judge, Capacity, CapacitySlo, Objectives, RequestOutcome, Search, SearchConfig,
    SearchConfigError, SloMetric, Step, Verdict,
};
use super::measure::request_latencies;
use super::report;
use super::run::{run_with_stop, steady_window_of, Rate, RunOpts};
use super::LoadgenError;
use crate::analysis::capacity_curve::{TOO_SHORT_VERDICT as TOO_SHORT, VERDICT_TAG};
use crate::model::{MetricKey, Record};

/// What the search varies.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum SweepOver {
    /// Requests per second (arrivals as `--burstiness` says; `--max-concurrency` caps them).
    Rate,
    /// Requests in flight, sent as fast as slots free up.
    Concurrency,
}

impl SweepOver {
    fn unit(self) -> &'static str {
        match self {
            SweepOver::Rate => "req/s",
            SweepOver::Concurrency => "concurrent requests",
        }
    }
}

/// Options of `benchlens sweep`: those of `run` (the server, the prompts, the tokenizer, the
/// output), plus the search's.
#[derive(Clone, Debug, clap::Args)]
pub struct SweepOpts {
    /// Everything `run` takes. `--goodput` holds the objectives, in vLLM's per-request form
    /// (`ttft:500`) and as percentiles (`p99_ttft:500 p95_tpot:50`); `--duration` is each
    /// probe's length (default 30 s); `--seed` seeds probe k with seed + k.
    #[command(flatten)]
    pub run: RunOpts,
    /// What the search varies.
    #[arg(long, value_enum, default_value = "rate")]
    pub over: SweepOver,
    /// The first load probed.
    #[arg(long, default_value_t = 1.0)]
    pub start: f64,
    /// The search stops above this load (the capacity is then "at least" it).
    #[arg(long, default_value_t = 10_000.0)]
    pub max_load: f64,
    /// The search stops below this load (the capacity is then "below" it).
    #[arg(long, default_value_t = 0.1)]
    pub min_load: f64,
    /// Bisect until the failing load is at most this many percent above the passing one.
    #[arg(long, default_value_t = 5.0)]
    pub tolerance_pct: f64,
    /// Probes of each side of the final bracket, in all (the capacity must pass every one).
    #[arg(long, default_value_t = 2)]
    pub repeats: usize,
    /// Most probes before the search gives up (the file keeps what was measured).
    #[arg(long, default_value_t = 30)]
    pub max_probes: usize,
    /// Share of a probe's steady-window requests that must meet every per-request objective,
    /// percent (failed requests never do).
    #[arg(long, default_value_t = 99.0, value_parser = percent)]
    pub min_good_pct: f64,
}

/// A share in percent as the command line gives it: from 0 to 100.
fn percent(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| (0.0..=100.0).contains(p))
        .ok_or_else(|| format!("{text:?} is not a percentage from 0 to 100"))
}

/// What a sweep found.
#[derive(Debug, Default)]
pub struct SweepOutcome {
    /// The answer, when the search ended.
    pub capacity: Option<Capacity>,
    /// One record per probe, in order.
    pub records: Vec<Record>,
    /// Each probe's verdict.
    pub verdicts: Vec<Verdict>,
    /// The result file (None when written to stdout).
    pub result_path: Option<PathBuf>,
    /// Interrupted (Ctrl-C): the last probe was cut short and not judged.
    pub interrupted: bool,
    /// The signal that interrupted the search, when one did ([`sweep_until_ctrl_c`] only).
    pub signal: Option<super::interrupt::Interrupt>,
}

/// Default probe length, seconds.
const PROBE_SECONDS: f64 = 30.0;

/// A probe too short for a percentile objective is run again longer, up to this many times its
/// length (`--duration`); still too short then, the sweep stops and says so.
const MAX_STRETCH: f64 = 8.0;

/// How much longer to run a probe whose steady window had `have` samples where `need` are
/// needed: the ratio and a quarter more (the window is part of the probe), at least 1.5 times.
fn stretch_for(have: usize, need: usize) -> f64 {
    (need as f64 / have.max(1) as f64 * 1.25).max(1.5)
}

fn invalid(option: &'static str, message: impl ToString) -> LoadgenError {
    LoadgenError::InvalidOption {
        option,
        message: message.to_string(),
    }
}

/// Checks the options and turns them into the objectives and the search.
fn prepare(opts: &SweepOpts) -> Result<(CapacitySlo, Search), LoadgenError> {
    let slo = CapacitySlo::new(opts.run.objectives().copied().collect(), opts.min_good_pct)
        .map_err(|e| invalid("goodput", e))?;
    if opts.over == SweepOver::Rate && opts.run.request_rate != [Rate::INF] {
        return Err(invalid(
            "request-rate",
            "the sweep chooses the request rate; give --start and --max-load instead",
        ));
    }
    if opts.over == SweepOver::Concurrency && !opts.run.max_concurrency.is_empty() {
        return Err(invalid(
            "max-concurrency",
            "the sweep chooses the concurrency; give --start and --max-load instead",
        ));
    }
    if opts.run.request_rate.len() > 1 || opts.run.max_concurrency.len() > 1 {
        return Err(invalid(
            "request-rate",
            "a sweep probes one load at a time: no comma lists",
        ));
    }
    if opts.max_probes == 0 || opts.repeats == 0 {
        return Err(invalid(
            "max-probes",
            "--max-probes and --repeats must be at least 1",
        ));
    }
    let search = Search::new(SearchConfig {
        start: opts.start,
        max: opts.max_load,
        min: opts.min_load,
        tolerance: opts.tolerance_pct / 100.0,
        repeats: opts.repeats,
        growth: 2.0,
        integer: opts.over == SweepOver::Concurrency,
    })
    .map_err(|e| match e {
        SearchConfigError::Tolerance(_) => invalid(
            "tolerance-pct",
            format!("{} must be above 0 and below 100", opts.tolerance_pct),
        ),
        e => invalid("start", e),
    })?;
    Ok((slo, search))
}

/// `run`'s options for probe `k` at `load`: one stage of the probe's length, measured over its
/// steady window, goodput counted with the per-request objectives, no files of its own.
fn probe_opts(opts: &SweepOpts, slo: &CapacitySlo, k: usize, load: f64) -> RunOpts {
    let mut run = opts.run.clone();
    match opts.over {
        SweepOver::Rate => run.request_rate = vec![Rate(load)],
        SweepOver::Concurrency => {
            run.max_concurrency = vec![load as u64];
        }
    }
    run.duration = Some(run.duration.unwrap_or(PROBE_SECONDS));
    run.seed = run.seed.wrapping_add(k as u64);
    // vLLM's goodput takes per-request ttft, tpot and e2el only.
    run.goodput = vec![Objectives(
        slo.objectives
            .iter()
            .filter(|o| o.percentile.is_none() && o.metric != SloMetric::Itl)
            .copied()
            .collect(),
    )];
    run.steady_window = true;
    run.write_files = false;
    // Warm-up requests go before every probe, at its load's concurrency.
    run
}

/// [`sweep`] until done or a signal (SIGINT, SIGTERM, SIGHUP: see
/// [`interrupt`](super::interrupt)): the first stops the probe in flight and keeps what was
/// measured (the file is written after every probe); a second exits at once with the signal's
/// code.
pub async fn sweep_until_ctrl_c(opts: SweepOpts) -> Result<SweepOutcome, LoadgenError> {
    let (tx, rx) = watch::channel(false);
    let (listener, taken) = super::interrupt::listen(tx, None);
    let out = sweep(opts, rx).await;
    listener.abort();
    out.map(|mut o| {
        o.signal = taken.get().copied();
        o
    })
}

/// Runs the search until it has an answer, `--max-probes` is reached or `stop` turns true.
pub async fn sweep(
    opts: SweepOpts,
    stop: watch::Receiver<bool>,
) -> Result<SweepOutcome, LoadgenError> {
    let (slo, mut search) = prepare(&opts)?;
    let unit = opts.over.unit();
    crate::stdout::println(&format!("sweep: objectives {slo}; searching the {unit}"));
    let mut out = SweepOutcome::default();
    let mut request_lines = String::new();
    let mut paths: Option<(PathBuf, PathBuf)> = None;
    // How many times `--duration` the next probe runs: above 1 after a probe too short for a
    // percentile objective, back to 1 once a probe is judged.
    let mut stretch = 1.0;
    loop {
        let load = match search.next() {
            Step::Done(c) => {
                out.capacity = Some(c);
                break;
            }
            Step::Probe(_) if out.records.len() >= opts.max_probes => {
                eprintln!(
                    "sweep: stopped after {} probes (--max-probes) without an answer",
                    opts.max_probes
                );
                break;
            }
            Step::Probe(load) => load,
        };
        let k = out.records.len();
        crate::stdout::println(&format!("sweep: probe {} at {load:.3} {unit}", k + 1));
        let mut popts = probe_opts(&opts, &slo, k, load);
        popts.duration = popts.duration.map(|d| d * stretch);
        let seconds = popts.duration.unwrap_or(PROBE_SECONDS);
        let probe = run_with_stop(popts, stop.clone()).await?;
        out.interrupted = probe.partial;
        let (Some(mut record), Some(requests)) =
            (probe.records.into_iter().next(), probe.requests.first())
        else {
            break;
        };
        let window = steady_window_of(requests);
        let judged: Vec<RequestOutcome> = window
            .indices
            .iter()
            .map(|&i| outcome_of(&requests[i]))
            .collect();
        let verdict = judge(&slo, &judged);
        print_verdict(k, load, unit, &verdict);
        // The most samples any percentile objective lacked, with what it had.
        let short = verdict
            .checks
            .iter()
            .filter_map(|c| Some((c.too_few?, c.samples)))
            .max_by_key(|&(need, have)| need.saturating_sub(have));
        let mut stop_short = None;
        tag_probe(&mut record, k, load, &slo, &verdict);
        if out.interrupted {
            // An interrupted probe is not a measurement of the load: it is kept, not judged.
            record.tags.insert("partial".into(), "true".into());
        } else if let Some((need, have)) = short {
            // Too short to judge a percentile: kept, not judged, and the load probed again
            // longer (bounded by MAX_STRETCH).
            record.tags.insert(VERDICT_TAG.into(), TOO_SHORT.into());
            let next = (stretch * stretch_for(have, need)).min(MAX_STRETCH);
            if stretch >= MAX_STRETCH {
                stop_short = Some(format!(
                    "sweep: probe {} at {load:.3} {unit} ran {seconds:.0} s ({MAX_STRETCH} × \
                     --duration, the most a probe is lengthened) and its steady window still had \
                     {have} samples where {need} are needed: stopped without an answer (raise \
                     --duration, or use a lower percentile)",
                    k + 1
                ));
            } else {
                let base = seconds / stretch;
                crate::stdout::println(&format!(
                    "sweep: probe {} at {load:.3} {unit} had {have} samples in its steady window \
                     where {need} are needed: probing it again for {:.0} s (a probe is \
                     lengthened up to {MAX_STRETCH} × --duration)",
                    k + 1,
                    base * next
                ));
            }
            stretch = next;
        } else {
            search.record(load, verdict.passed);
            stretch = 1.0;
        }
        // One sweep, one configuration: what `run` records per stage (its number, date, seed,
        // and the in-process mock's fresh port) is the first probe's on every probe.
        record.tags.remove("stage");
        if let Some(first) = out.records.first() {
            record.date = first.date.clone();
            for key in ["seed", "server_url"] {
                if let Some(v) = first.tags.get(key) {
                    record.tags.insert(key.into(), v.clone());
                }
            }
        }
        for r in requests {
            request_lines.push_str(&report::request_line(k, r));
            request_lines.push('\n');
        }
        out.records.push(record);
        out.verdicts.push(verdict);
        if paths.is_none() {
            paths = result_paths(&opts, &out.records[0]);
        }
        write(&paths, &out.records, &request_lines)?;
        if out.interrupted {
            break;
        }
        if let Some(why) = stop_short {
            eprintln!("{why}");
            break;
        }
    }
    if let Some(c) = &out.capacity {
        let words = c.describe(unit);
        crate::stdout::println(&format!("sweep: {words}"));
        for r in &mut out.records {
            r.tags.insert("capacity".into(), words.clone());
        }
        write(&paths, &out.records, &request_lines)?;
    }
    out.result_path = paths.map(|(p, _)| p);
    if let Some(p) = &out.result_path {
        crate::stdout::println(&format!("sweep: wrote {}", p.display()));
    }
    Ok(out)
}

fn outcome_of(r: &super::record::RequestRecord) -> RequestOutcome {
    match request_latencies(r) {
        Some(l) => RequestOutcome {
            ok: true,
            ttft_ms: l.ttft_ms,
            tpot_ms: l.tpot_ms,
            itl_ms: l.itl_ms,
            e2el_ms: l.e2el_ms,
        },
        None => RequestOutcome::default(),
    }
}

fn print_verdict(k: usize, load: f64, unit: &str, v: &Verdict) {
    let checks: Vec<String> = v
        .checks
        .iter()
        .map(|c| {
            let measured = match (c.objective.percentile, c.measured) {
                (_, _) if c.too_few.is_some() => format!(
                    "not judged: it needs {} samples in the steady window, so the probe was too \
                     short",
                    c.too_few.unwrap_or_default()
                ),
                (_, None) => "n/a".to_string(),
                (Some(_), Some(ms)) => format!("{ms:.1} ms"),
                (None, Some(pct)) => format!("{pct:.1} % within"),
            };
            let mark = if c.met { "met" } else { "MISSED" };
            format!("{} {measured} {mark}", c.objective)
        })
        .collect();
    crate::stdout::println(&format!(
        "sweep: probe {} at {load:.3} {unit}: {} ({} of {} requests good; {})",
        k + 1,
        if v.passed { "passed" } else { "failed" },
        v.good,
        v.requests,
        checks.join(", ")
    ));
}

/// Marks a probe's record with what the explorer and a reader need: its place in the search,
/// the objectives, the verdict and each objective's measured value.
fn tag_probe(record: &mut Record, k: usize, load: f64, slo: &CapacitySlo, v: &Verdict) {
    // Per-probe values are metrics, not tags: a tag that differs from probe to probe would
    // split the curve into one series per probe in the explorer.
    record
        .metrics
        .insert(MetricKey::Extra("probe".into()), (k + 1) as f64);
    record.tags.insert("objectives".into(), slo.to_string());
    record.tags.insert(
        "verdict".into(),
        if v.passed { "passed" } else { "failed" }.into(),
    );
    let mut put = |k: String, x: f64| {
        record.metrics.insert(MetricKey::Extra(k), x);
    };
    put("probe_load".into(), load);
    put("good_pct".into(), v.good_fraction() * 100.0);
    put("window_requests".into(), v.requests as f64);
    for c in &v.checks {
        if let Some(x) = c.measured {
            let name = c.objective.to_string();
            let name = name.split(':').next().unwrap_or_default();
            let suffix = if c.objective.percentile.is_some() {
                "ms"
            } else {
                "within_pct"
            };
            put(format!("slo_{name}_{suffix}"), x);
        }
    }
}

/// The result file and its per-request companion, named as `run` names them with `sweep` in
/// place of the backend's name (`--result-filename` overrides; `-` writes the records to
/// stdout at the end and no per-request file).
fn result_paths(opts: &SweepOpts, first: &Record) -> Option<(PathBuf, PathBuf)> {
    let name = match &opts.run.result_filename {
        Some(n) if n == "-" => return None,
        Some(n) => n.clone(),
        None => {
            let model = first.model.as_deref().unwrap_or("model");
            let model = model.rsplit('/').next().unwrap_or(model);
            format!(
                "benchlens-sweep-{}-{model}-{}.json",
                opts.run.backend.name(),
                report::now_date()
            )
        }
    };
    let path = opts.run.result_dir.join(name);
    let stem = path.file_stem().map_or_else(
        || "benchlens-sweep".into(),
        |s| s.to_string_lossy().into_owned(),
    );
    let requests = path.with_file_name(format!("{stem}.requests.jsonl"));
    Some((path, requests))
}

fn write(
    paths: &Option<(PathBuf, PathBuf)>,
    records: &[Record],
    request_lines: &str,
) -> Result<(), LoadgenError> {
    let Some((p, rp)) = paths else {
        return Ok(());
    };
    if let Some(dir) = p.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|source| LoadgenError::Write {
            path: dir.into(),
            source,
        })?;
    }
    report::write_atomic(p, &report::canonical_text(records))?;
    report::write_atomic(rp, request_lines)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn opts(args: &[&str]) -> SweepOpts {
        use clap::Parser;
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            opts: SweepOpts,
        }
        let mut all = vec!["sweep"];
        all.extend_from_slice(args);
        Wrap::try_parse_from(all).unwrap().opts
    }

    #[test]
    fn options_are_checked_with_the_flag_named() {
        let err = |args: &[&str]| prepare(&opts(args)).err().map(|e| e.to_string());
        assert_eq!(
            err(&[]),
            Some(
                "invalid --goodput: no objective given: a capacity needs at least one (for \
                 example --goodput p99_ttft:500)"
                    .into()
            )
        );
        assert!(err(&["--goodput", "p99_ttft:500", "--request-rate", "4"])
            .unwrap()
            .contains("--request-rate"));
        assert!(err(&[
            "--goodput",
            "p99_ttft:500",
            "--over",
            "concurrency",
            "--max-concurrency",
            "4"
        ])
        .unwrap()
        .contains("--max-concurrency"));
        assert!(err(&["--goodput", "p99_ttft:500", "--start", "0"])
            .unwrap()
            .contains("positive"));
        assert_eq!(
            err(&["--goodput", "p99_ttft:500", "--tolerance-pct", "100"]),
            Some("invalid --tolerance-pct: 100 must be above 0 and below 100".into())
        );
        assert_eq!(err(&["--goodput", "p99_ttft:500"]), None);
        // A share of good requests is read where the command line is parsed, naming its flag.
        use clap::Parser;
        #[derive(Parser)]
        struct Wrap {
            #[command(flatten)]
            opts: SweepOpts,
        }
        let why = Wrap::try_parse_from(["sweep", "--goodput", "ttft:5", "--min-good-pct", "101"])
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            why.contains("--min-good-pct") && why.contains("percentage"),
            "{why}"
        );
    }

    #[test]
    fn a_probe_is_one_windowed_stage_without_files() {
        let o = opts(&["--goodput", "ttft:300 p99_ttft:500 itl:40", "--seed", "7"]);
        let (slo, _) = prepare(&o).unwrap();
        let run = probe_opts(&o, &slo, 2, 12.5);
        assert_eq!(run.request_rate, vec![Rate(12.5)]);
        assert_eq!(run.duration, Some(PROBE_SECONDS));
        assert_eq!(run.seed, 9);
        assert_eq!(
            run.objectives()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            ["ttft:300"]
        );
        assert!(run.steady_window && !run.write_files);
        let c = opts(&[
            "--goodput",
            "p99_ttft:500",
            "--over",
            "concurrency",
            "--duration",
            "5",
        ]);
        let (slo, _) = prepare(&c).unwrap();
        let run = probe_opts(&c, &slo, 0, 16.0);
        assert_eq!(run.max_concurrency, vec![16]);
        assert_eq!(run.request_rate, vec![Rate::INF]);
        assert_eq!(run.duration, Some(5.0));
    }
}
