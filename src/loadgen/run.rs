//! `benchlens run`: the pipeline that turns the options into stages, drives each stage's
//! schedule through the client, measures, prints vLLM's summary and writes the result files
//! after every stage (so an interrupted run keeps what it measured, marked partial), and the
//! signal handling around it ([`interrupt`](super::interrupt): SIGINT, SIGTERM, SIGHUP). Must not
//! import app code.
//!
//! The parts, each in its own file: [`opts`] (the command-line options), [`prepare`] (their
//! checks), `setup` (the model probe, the prompts, the result paths), `stage` (one stage on the
//! wire), `sink` (each request as it ends: its reply counted, its row written to the per-request
//! file), `vllm_command` (vLLM's command line for the vLLM-compatible files). They import one
//! another only one way (`setup` uses `prepare` and `opts`, `prepare` and `vllm_command` use
//! `opts`, `stage` uses `sink`, `sink` none) and never this file.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::body::{request_body, Sampling};
use super::capacity::{RequestSpan, SteadyWindow};
use super::client::{Client, Transport};
use super::interrupt::{self, Interrupt};
use super::measure::{compute, StageMetrics};
use super::mock::{MockOpts, MockServer};
use super::record::{EachRequest, FailureKind, RecordSpool, RequestRecord};
use super::report::{self, StageInfo, SummaryView};
use super::schedule::{arrivals, ramp_arrivals, stop_requested, Arrivals, StageSize};
use super::shard::{REQUEST_ROWS_METRIC, RUN_FINGERPRINT_TAG};
use super::target::Target;
use super::telemetry;
use super::timeline;
use super::tokenizer::Tokenizer;
use super::{LoadgenError, RequestFailed, SetupError};
use crate::model::{MetricKey, Record};

pub mod opts;
pub mod prepare;
mod scrape;
mod setup;
mod sink;
mod stage;
mod tally;
mod vllm_command;

pub use opts::{DatasetKind, Rate, RunOpts};
pub use prepare::parse_header;
pub use vllm_command::vllm_command_line;

use super::report::{DetailSpool, SpooledDetail, StageOut, StageSpooled};
use prepare::{headers, invalid, prepare};
use setup::{
    check_folder, first_model, load_prompts, planned_bytes, planned_requests, result_paths, Loaded,
    ResultPaths,
};
use sink::{RequestsFile, SinkConfig};
use stage::{progress_bar, run_stage, PromptLens, StageRun, TurnBodies, Workload};
use tally::{StageTally, Tallied, TallyConfig};

/// What a run produced.
#[derive(Debug, Default)]
pub struct RunOutcome {
    /// One record per stage, as written.
    pub records: Vec<Record>,
    /// Metrics per stage.
    pub metrics: Vec<StageMetrics>,
    /// Per-request measurements per stage (empty for the stages [`run`] tallies as they run,
    /// see `lean` in [`run_inner`]: their requests are not held).
    pub requests: Vec<Vec<RequestRecord>>,
    /// The console summaries printed.
    pub summaries: Vec<String>,
    /// The canonical result file (None when written to stdout).
    pub result_path: Option<PathBuf>,
    /// The per-request JSON Lines file.
    pub requests_path: Option<PathBuf>,
    /// vLLM-compatible files.
    pub vllm_paths: Vec<PathBuf>,
    /// Whether the run was interrupted.
    pub partial: bool,
    /// Requests cancelled by the interrupt (in the JSON Lines only, as `cancelled`).
    pub cancelled: u64,
    /// The signal that interrupted the run, when one did ([`run`] only).
    pub interrupt: Option<Interrupt>,
    /// Files that could not be written where asked (a full disk), each with where their
    /// content went instead: the run measured on and exits non-zero.
    pub write_failures: Vec<String>,
}

/// Without `--fail-on-error`, the share (percent) of a run's requests that may fail before it
/// exits non-zero: a server that died mid-way must not leave a run that "passed".
pub const DEFAULT_FAIL_ON_ERROR_PCT: f64 = 50.0;

impl RunOutcome {
    /// Why the run should exit non-zero, if it should: no request succeeded in any stage; with
    /// `fail_on_error_pct`, a stage's failed share over it; without, more than half of the
    /// run's requests failed ([`DEFAULT_FAIL_ON_ERROR_PCT`]). Cancelled requests count neither
    /// way.
    pub fn failure_verdict(&self, fail_on_error_pct: Option<f64>) -> Option<String> {
        let completed: u64 = self.metrics.iter().map(|m| m.completed).sum();
        let failed: u64 = self.metrics.iter().map(|m| m.failed).sum();
        if completed == 0 && failed > 0 {
            return Some(format!("no request succeeded ({failed} failed)"));
        }
        let pct = |failed: u64, total: u64| {
            if total == 0 {
                0.0
            } else {
                failed as f64 * 100.0 / total as f64
            }
        };
        let Some(limit) = fail_on_error_pct else {
            let total = completed + failed;
            let share = pct(failed, total);
            return (share > DEFAULT_FAIL_ON_ERROR_PCT).then(|| {
                format!(
                    "{share:.1}% of requests failed ({failed} of {total}), more than half: the server may have failed during the run (--fail-on-error PCT sets another bound)"
                )
            });
        };
        self.metrics.iter().enumerate().find_map(|(stage, m)| {
            let total = m.completed + m.failed;
            let pct = pct(m.failed, total);
            (pct > limit).then(|| {
                format!(
                    "stage {}: {pct:.1}% of requests failed ({} of {total}), more than --fail-on-error {limit}%",
                    stage + 1,
                    m.failed
                )
            })
        })
    }
}

/// Runs the benchmark until done or a signal (SIGINT, SIGTERM, SIGHUP: see
/// [`interrupt`](super::interrupt)). The first stops sending, cancels the requests in flight
/// (recorded as `cancelled`) and writes what was measured, marked partial with the signal's
/// name, whatever the server does; a second one exits with the signal's code as soon as those
/// files are written (at most [`SECOND_SIGNAL_WAIT`](super::interrupt::SECOND_SIGNAL_WAIT)
/// later).
pub async fn run(opts: RunOpts) -> Result<RunOutcome, LoadgenError> {
    let (tx, rx) = watch::channel(false);
    let (written_tx, written_rx) = watch::channel(false);
    let (listener, taken) = interrupt::listen(tx, Some(written_rx));
    let out = run_inner(opts, rx, Some(written_tx), false, &taken).await;
    listener.abort();
    out.map(|mut o| {
        o.interrupt = taken.get().copied();
        o
    })
}

/// The steady-state window of a stage's requests (see
/// [`steady_window`](super::capacity::steady_window)): each request's place is its intended send
/// time, so a client falling behind does not move the window, and the arrivals end with the
/// last intended send.
pub fn steady_window_of(reqs: &[RequestRecord]) -> SteadyWindow {
    let spans: Vec<RequestSpan> = reqs.iter().map(tally::span_of).collect();
    tally::window_of(&spans)
}

/// Runs the benchmark until done or until `stop` turns true (then the stage in progress is cut
/// short, its finished requests are measured and written, and the run is marked partial).
/// Unlike [`run`], the outcome's records carry their per-request detail too.
pub async fn run_with_stop(
    opts: RunOpts,
    stop: watch::Receiver<bool>,
) -> Result<RunOutcome, LoadgenError> {
    run_inner(opts, stop, None, true, &interrupt::Taken::default()).await
}

/// [`run_with_stop`], saying on `written` when the files of an interrupted run are written.
/// Without `detail_in_records` the outcome's records leave out their per-request detail (the
/// canonical file has it), and when the files are written (to disk, or the result to stdout)
/// the run is `lean`: each stage's figures and canonical detail are made while it runs
/// ([`tally`]), its requests are let go as they end, and the stage's end sorts samples and
/// copies the spooled detail into the canonical file (for stdout: spooled in the temporary
/// folder, copied out at the run's end). With `--vllm-compatible` (which writes every request
/// again) or `--steady-window` (whose figures are of the requests in a window known at the
/// stage's end) the requests' whole records are spooled to disk as well and read back at the
/// stage's end: the window's figures made then, vLLM's per-request arrays streamed from them.
async fn run_inner(
    opts: RunOpts,
    mut stop: watch::Receiver<bool>,
    written: Option<watch::Sender<bool>>,
    detail_in_records: bool,
    taken: &interrupt::Taken,
) -> Result<RunOutcome, LoadgenError> {
    let settled = || {
        if let Some(w) = &written {
            let _ = w.send(true);
        }
    };
    let prep = prepare(&opts)?;
    let mock = if opts.mock {
        Some(
            MockServer::start(MockOpts {
                ttft_ms: opts.mock_ttft_ms,
                itl_ms: opts.mock_itl_ms,
                max_batch: opts.mock_max_batch,
                ..MockOpts::default()
            })
            .await?,
        )
    } else {
        None
    };
    let given_url = match (&opts.host, opts.port) {
        (None, None) => opts.base_url.clone(),
        (host, port) => format!(
            "http://{}:{}",
            host.as_deref().unwrap_or("127.0.0.1"),
            port.unwrap_or(8000)
        ),
    };
    let base_url = mock
        .as_ref()
        .map_or_else(|| given_url.clone(), MockServer::base_url);
    let endpoint = opts
        .endpoint
        .clone()
        .unwrap_or_else(|| opts.backend.default_endpoint().to_string());
    let target = Target::resolve(&base_url, &endpoint, headers(&opts)?).await?;
    let transport = Transport {
        http2: opts.http2,
        insecure: opts.insecure,
        ca_cert: opts.ca_cert.clone(),
        max_head_kib: opts.max_response_head_kib.map(|k| k as usize),
    };
    if !target.tls && (opts.insecure || opts.ca_cert.is_some()) {
        return Err(invalid(
            if opts.insecure { "insecure" } else { "ca-cert" },
            format!("applies to https:// servers only, not {base_url}"),
        ));
    }
    let client = Client::with_transport(target, opts.backend, prep.timeouts, &transport)?;
    let model = match &opts.model {
        Some(m) => m.clone(),
        None => {
            let probe = first_model(&client);
            tokio::select! {
                m = probe => m?,
                () = stop_requested(&mut stop) => {
                    eprintln!("interrupted while asking the server for its model: nothing was measured");
                    settled();
                    return Ok(RunOutcome { partial: true, ..RunOutcome::default() });
                }
            }
        }
    };
    let count = opts.num_prompts.clamp(1, 100_000) as usize;
    let tokenizer = Tokenizer::from_name(&opts.tokenizer)?;
    let Loaded {
        name: dataset_name,
        prompts,
        arrivals: trace_arrivals,
        conversations,
    } = load_prompts(&opts, count, &tokenizer)?;
    let conversation_tags = conversations.as_ref().map(|c| c.tags.clone());
    let bodies = prompts
        .iter()
        .map(|p| {
            request_body(
                opts.backend,
                &model,
                &p.text,
                p.output_len,
                &Sampling {
                    ignore_eos: opts.ignore_eos,
                    ..Sampling::default()
                },
                prep.extra.as_ref(),
            )
        })
        .collect();
    let workload = Arc::new(Workload {
        client,
        bodies,
        // The texts are in the bodies now: only the counts are kept, and the texts freed.
        prompts: prompts.into_iter().map(|p| PromptLens::from(&p)).collect(),
        ignore_eos: opts.ignore_eos,
        shard: opts.shard,
        conversations: conversations.map(|c| {
            (
                c.list,
                TurnBodies {
                    backend: opts.backend,
                    model: model.clone(),
                    sampling: Sampling {
                        ignore_eos: opts.ignore_eos,
                        ..Sampling::default()
                    },
                    extra: prep.extra.clone(),
                },
            )
        }),
    });
    let conversational = workload.conversations.is_some();

    // A shard's fingerprint, for `merge` to check that shards are one run.
    let fingerprint = opts.shard.map(|_| {
        let f = prepare::run_fingerprint(&opts, &model, &given_url, &endpoint);
        serde_json::to_string(&f).unwrap_or_default()
    });
    let mut tags = prep.tags.clone();
    tags.insert("server_url".into(), base_url.clone());
    tags.insert("endpoint".into(), endpoint.clone());
    tags.insert("backend".into(), opts.backend.name().into());
    tags.insert("http_version".into(), workload.client.http_version().into());
    tags.insert("tokenizer".into(), tokenizer.name().into());
    tags.extend(conversation_tags.into_iter().flatten());
    let scrape_warned = scrape::Warned::default();

    // Where the files go, checked before any load: the folder takes files and has room for
    // what the plan will write.
    let ResultPaths {
        result: mut result_path,
        requests: mut requests_path,
    } = result_paths(&opts, &model)?;
    let to_stdout = result_path.is_none();
    if let (Some(path), true) = (&result_path, opts.write_files) {
        let requests = planned_requests(&opts, &prep.rates, prep.concurrencies.len());
        let need = planned_bytes(requests, opts.output_len.unwrap_or(128));
        check_folder(path.parent().unwrap_or(Path::new("")), need)?;
    }

    if opts.warmup > 0 {
        let plan = Arrivals::Fixed(vec![Duration::ZERO; opts.warmup as usize]);
        let limit = prep
            .concurrencies
            .first()
            .copied()
            .flatten()
            .map(|c| c as usize);
        let warm = run_stage(
            &workload,
            &plan,
            limit,
            &mut stop,
            None,
            false,
            SinkConfig {
                tokenizer: None,
                stage: 0,
                keep_text: false,
                file: None,
            },
            None,
        )
        .await?;
        let reqs = warm.records;
        if warm.stopped {
            eprintln!("interrupted during the warm-up: nothing was measured");
            settled();
            return Ok(RunOutcome {
                partial: true,
                ..RunOutcome::default()
            });
        }
        if !reqs.is_empty() && reqs.iter().all(|r| r.failure.is_some()) {
            let first = reqs[0].failure.as_ref().map(RequestFailed::from);
            return Err(LoadgenError::Setup {
                url: workload.client.target().url.clone(),
                source: SetupError::WarmupFailed(first.unwrap_or_default()),
            });
        }
    }

    let mut outcome = RunOutcome {
        result_path: result_path.clone(),
        requests_path: requests_path.clone(),
        ..RunOutcome::default()
    };
    // Rows go to the per-request file as requests end (see `sink`).
    let mut requests_file: Option<RequestsFile> = None;
    let lean = !detail_in_records && opts.write_files && (to_stdout || requests_path.is_some());
    // The lean stages' spooled canonical detail, kept (and rewritten into the canonical file)
    // to the run's end.
    let mut spools: Vec<SpooledDetail> = Vec::new();
    let stages: Vec<(f64, Option<u64>)> = prep
        .rates
        .iter()
        .flat_map(|r| prep.concurrencies.iter().map(move |c| (*r, *c)))
        .collect();
    for (stage, (rate, conc)) in stages.iter().copied().enumerate() {
        if *stop.borrow() {
            outcome.partial = true;
            settled();
            break;
        }
        let size = match opts.duration {
            Some(d) => StageSize::Duration(Duration::from_secs_f64(d)),
            None => StageSize::Count(opts.num_prompts as usize),
        };
        let seed = opts.seed.wrapping_add(stage as u64);
        let plan = match (&trace_arrivals, prep.ramp) {
            (Some(offsets), _) => Arrivals::Fixed(offsets.clone()),
            (None, Some(ramp)) => ramp_arrivals(ramp, opts.burstiness, size, seed),
            (None, None) => arrivals(rate, opts.burstiness, size, seed),
        };
        // A trace's or a ramp's rate is its own: the mean over the planned span.
        let rate = match (&plan, trace_arrivals.is_some() || prep.ramp.is_some()) {
            (Arrivals::Fixed(o), true) if o.len() > 1 => {
                (o.len() - 1) as f64 / o.last().map_or(1.0, Duration::as_secs_f64).max(1e-9)
            }
            _ => rate,
        };
        let (plan, conc) = match opts.shard {
            None => (plan, conc),
            Some(s) => {
                let plan = s.take(&plan).ok_or_else(|| {
                    invalid(
                        "shard",
                        "an unbounded stage (--duration at rate inf) has no requests to split: \
                         give a finite --request-rate or --num-prompts",
                    )
                })?;
                let conc = match conc {
                    None => None,
                    Some(c) => Some(s.concurrency(c).ok_or_else(|| {
                        invalid(
                            "shard",
                            format!("--max-concurrency {c} is less than one per shard"),
                        )
                    })?),
                };
                (plan, conc)
            }
        };
        let pb = progress_bar(plan.len(), opts.no_progress, stage, stages.len());
        let stage_date = report::now_date();
        // On the wall clock, so that shards' files can be merged onto one time line.
        let stage_start_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let scraper = opts.scrape_metrics.clone().map(|path| {
            let at = tokio::time::Instant::now();
            scrape::spawn(workload.clone(), path, at, scrape_warned.clone())
        });
        if let (Some(_), Some(rp), true, true) = (
            &result_path,
            &requests_path,
            opts.write_files,
            requests_file.is_none(),
        ) {
            requests_file = Some(RequestsFile::create(rp, opts.overwrite)?);
        }
        let tally = match lean {
            true => Some(StageTally::new(
                TallyConfig {
                    slo: prep.slo,
                    spool: scratch(result_path.as_deref(), stage, "detail", |p| {
                        DetailSpool::create(p)
                    })?,
                    records: match opts.vllm_compatible || opts.steady_window {
                        true => Some(scratch(result_path.as_deref(), stage, "records", |p| {
                            RecordSpool::create(p).map_err(|source| LoadgenError::Write {
                                path: p.into(),
                                source,
                            })
                        })?),
                        false => None,
                    },
                    steady: opts.steady_window,
                },
                plan.len().unwrap_or(0),
            )),
            false => None,
        };
        // Replies are counted and rows written by the sink's worker as requests end, off the
        // tasks that measure.
        let rows_before = requests_file.as_ref().map_or(0, RequestsFile::rows);
        let StageRun {
            records: mut reqs,
            tallied,
            duration_s: duration,
            stopped,
            released,
            file,
        } = run_stage(
            &workload,
            &plan,
            conc.map(|c| c as usize),
            &mut stop,
            pb.clone(),
            conversational,
            SinkConfig {
                tokenizer: Some(tokenizer.clone()),
                stage,
                keep_text: opts.vllm_compatible && opts.save_detailed,
                file: requests_file.take(),
            },
            tally,
        )
        .await?;
        requests_file = file;
        let rows = requests_file
            .as_ref()
            .map(|f| f.rows().saturating_sub(rows_before));
        // The rows' file failed (a full disk): the stage's measurements stand, and the rows of
        // the stages after it go to a folder that takes them.
        if let Some((e, handed)) = requests_file.as_mut().and_then(RequestsFile::take_failure) {
            requests_file = None;
            let moved = requests_path.as_deref().and_then(|p| rescue_path(p).ok());
            let whereto = moved.as_ref().map_or_else(
                || "nowhere (no folder took them)".to_string(),
                |p| p.display().to_string(),
            );
            let what = format!(
                "{}: at most {handed} rows reached it; stage {}'s later rows are only in the result file's per-request detail, the rows of later stages go to {whereto}",
                with_source(&e),
                stage + 1
            );
            eprintln!("error: {what}");
            outcome.write_failures.push(what);
            if let Some(p) = moved {
                requests_path = Some(p);
                outcome.requests_path = requests_path.clone();
            }
        }
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
        outcome.partial |= stopped;
        let readings = scraper
            .map(|(h, r)| scrape::finish(h, &r))
            .unwrap_or_default();
        // A lean stage's records, spooled for vLLM's per-request arrays.
        let mut spooled_records = None;
        let (m, view, mut series, cancelled, window) = match tallied {
            Some(t) => {
                // Requests cut off by Ctrl-C are neither successes nor failures: they are in
                // the JSON Lines only (the tally left them out).
                let cancelled = t.cancelled as u64;
                let Tallied {
                    metrics,
                    view,
                    series,
                    detail,
                    window,
                    records,
                } = t.tally.finish(
                    duration,
                    rate,
                    &opts.percentiles,
                    (prep.percentile_metrics.clone(), cancelled),
                )?;
                spools.push(detail);
                spooled_records = records;
                (metrics, view, series, cancelled, window)
            }
            None => {
                // Requests cut off by Ctrl-C are neither successes nor failures: they are in the JSON
                // Lines only.
                let sent = reqs.len();
                reqs.retain(|r| {
                    r.failure
                        .as_ref()
                        .is_none_or(|f| f.kind != FailureKind::Cancelled)
                });
                let cancelled = (sent - reqs.len()) as u64;
                // Every request of the stage, warm-up and drain included, second by second, and the
                // server's telemetry on the same seconds.
                let series = timeline::series(&reqs);
                let window = opts.steady_window.then(|| steady_window_of(&reqs));
                let duration = match &window {
                    Some(w) => {
                        // The window's indices are ascending: keep those requests, in order.
                        let mut inside = vec![false; reqs.len()];
                        for &i in &w.indices {
                            if let Some(k) = inside.get_mut(i) {
                                *k = true;
                            }
                        }
                        let mut at = 0;
                        reqs.retain(|_| {
                            at += 1;
                            inside[at - 1]
                        });
                        (w.end_s - w.start_s).max(1e-9)
                    }
                    None => duration,
                };
                let m = compute(&reqs, duration, rate, &opts.percentiles, prep.slo);
                let view = SummaryView::new(
                    prep.percentile_metrics.clone(),
                    opts.percentiles.clone(),
                    &reqs,
                    cancelled,
                );
                (m, view, series, cancelled, window)
            }
        };
        let seconds = series.get("t_s").map_or(0, Vec::len);
        series.extend(telemetry::columns(&readings, seconds));
        let metrics_missing = opts
            .scrape_metrics
            .as_deref()
            .and_then(|path| scrape::missing(&readings, path, &scrape_warned));
        let info = StageInfo {
            stage,
            model: model.clone(),
            backend: opts.backend.name().into(),
            engine: opts.engine.clone(),
            gpu: opts.gpu.clone(),
            gpu_count: opts.gpu_count,
            label: opts.label.clone(),
            dataset: dataset_name.clone(),
            request_rate: rate,
            burstiness: opts.burstiness,
            max_concurrency: conc,
            num_prompts: released as u64,
            date: stage_date,
            tags: tags.clone(),
            endpoint: endpoint.clone(),
            partial: stopped,
        };
        let text = report::summary_text(&info, &m, &view);
        if to_stdout {
            eprint!("{text}");
        } else {
            crate::stdout::print(&text);
        }
        outcome.summaries.push(text);
        let detail: &[RequestRecord] = if detail_in_records { &reqs } else { &[] };
        let mut record = report::stage_record(&info, &m, detail, &view);
        record.series = series;
        if let Some(d) = opts.duration {
            // A stage of a given length sends as many requests as arrive in it: that count is
            // an outcome (in `completed` and `failed`), not a configuration to compare by.
            record.num_prompts = None;
            record.tags.insert("duration_s".into(), d.to_string());
        }
        record.metrics.insert(
            MetricKey::Extra("stage_start_unix_s".into()),
            stage_start_unix_s,
        );
        if let Some(s) = opts.shard {
            record.tags.insert("shard".into(), s.to_string());
            if let Some(f) = &fingerprint {
                record.tags.insert(RUN_FINGERPRINT_TAG.into(), f.clone());
            }
            if let Some(rows) = rows {
                // How many rows the stage wrote to the per-request file: `merge` tells a file
                // cut short by it.
                record
                    .metrics
                    .insert(MetricKey::Extra(REQUEST_ROWS_METRIC.into()), rows as f64);
            }
        }
        if let Some(m) = metrics_missing {
            record.tags.insert("server_metrics_missing".into(), m);
        }
        if let Some(signal) = taken.get().filter(|_| stopped) {
            record
                .tags
                .insert("interrupted_by".into(), signal.name().into());
        }
        if let Some((list, _)) = workload
            .conversations
            .as_ref()
            .filter(|(l, _)| !l.is_empty())
        {
            // Dispatch i plays conversation i modulo their number.
            let planned: usize = (0..released)
                .map(|i| list[i % list.len()].turns.len())
                .sum();
            record
                .tags
                .insert("conversations".into(), released.to_string());
            record
                .tags
                .insert("conversation_turns".into(), planned.to_string());
        }
        if let Some(w) = &window {
            record.tags.insert("steady_window".into(), w.rule.into());
            let mut put = |k: &str, v: f64| record.metrics.insert(MetricKey::Extra(k.into()), v);
            put("window_start_s", w.start_s);
            put("window_end_s", w.end_s);
            put("window_lifetime_s", w.lifetime_s);
        }
        outcome.records.push(record);
        // Rewritten after every stage so an interrupted run keeps what it measured (the
        // per-request rows are on disk already).
        if let (Some(p), Some(_), true) = (result_path.clone(), &requests_path, opts.write_files) {
            let write = |p: &std::path::Path| match lean {
                true => report::write_canonical_spooled(p, &spooled_out(&outcome, &spools)),
                false => report::write_canonical(p, &stages_out(&outcome, &reqs)),
            };
            // A folder that stopped taking files (a full disk): the result goes to one that
            // does, said on stderr, rather than the run ending with nothing.
            match write(&p) {
                Ok(()) => {}
                Err(e @ LoadgenError::Write { .. }) => {
                    let moved = rescue_path(&p)?;
                    write(&moved)?;
                    let what = format!(
                        "{}: the result file is {} instead",
                        with_source(&e),
                        moved.display()
                    );
                    eprintln!("error: {what}");
                    outcome.write_failures.push(what);
                    result_path = Some(moved);
                    outcome.result_path = result_path.clone();
                }
                Err(e) => return Err(e),
            }
            if lean && (stopped || stage + 1 == stages.len()) {
                // No stage follows: the spools are in the file. Removed now, before a second
                // Ctrl-C may end the process.
                spools.clear();
            }
        }
        if opts.vllm_compatible && opts.write_files {
            let name = match &opts.result_filename {
                Some(n) if stages.len() == 1 => n.clone(),
                Some(n) => {
                    let stem = n.strip_suffix(".json").unwrap_or(n);
                    format!("{stem}-stage{stage}.json")
                }
                None => report::vllm_file_name(&info),
            };
            let p = opts.result_dir.join(name);
            let mut info = info.clone();
            info.tags.insert(
                "benchlens_command_line".into(),
                info.tags.get("command_line").cloned().unwrap_or_default(),
            );
            info.tags.insert(
                "command_line".into(),
                vllm_command_line(&opts, &base_url, &model, &dataset_name, rate, conc),
            );
            // Every request of the stage (of its window), spooled or held.
            let requests: &dyn EachRequest = match &spooled_records {
                Some(r) => r,
                None => &reqs,
            };
            let write = |p: &Path, scratch: &Path| {
                report::write_atomic_with(p, |out| {
                    report::write_vllm_json(
                        out,
                        &info,
                        &m,
                        requests,
                        &view,
                        opts.save_detailed,
                        scratch,
                    )
                })
            };
            // A folder that refuses the file or its scratch files (a full disk, a name too
            // long for it): the scratch files, then the file, go to the rescue folder, said on
            // stderr, rather than the run ending with nothing.
            let beside = spool_path(result_path.as_deref(), stage, "vllm");
            let p = match write(&p, &beside) {
                Ok(()) => p,
                Err(e @ LoadgenError::Write { .. }) => {
                    let dir = rescue_dir()?;
                    let rescued_scratch = dir.join(format!("stage{stage}-vllm.tmp"));
                    match write(&p, &rescued_scratch) {
                        Ok(()) => {
                            eprintln!(
                                "warning: {}: its scratch files went to {} instead",
                                with_source(&e),
                                dir.display()
                            );
                            p
                        }
                        Err(LoadgenError::Write { .. }) => {
                            let moved = rescue_path(&p)?;
                            write(&moved, &rescued_scratch)?;
                            let what = format!(
                                "{}: the vLLM-compatible file is {} instead",
                                with_source(&e),
                                moved.display()
                            );
                            eprintln!("error: {what}");
                            outcome.write_failures.push(what);
                            moved
                        }
                        Err(other) => return Err(other),
                    }
                }
                Err(e) => return Err(e),
            };
            outcome.vllm_paths.push(p);
        }
        outcome.cancelled += cancelled;
        outcome.metrics.push(m);
        outcome.requests.push(reqs);
        if stopped {
            settled();
            break;
        }
    }
    if outcome.partial && outcome.records.is_empty() {
        eprintln!("interrupted before the first stage: nothing was measured");
    }
    if to_stdout && opts.write_files {
        let stdout = std::path::Path::new("-");
        if lean {
            report::write_canonical_spooled(stdout, &spooled_out(&outcome, &spools))?;
        } else {
            report::write_canonical(stdout, &stages_out(&outcome, &[]))?;
        }
    }
    if let Some(m) = mock {
        m.shutdown().await;
    }
    Ok(outcome)
}

/// The stages to write: every record so far, each with its requests (`last`: those of the
/// record pushed last, not yet in `outcome.requests`).
fn stages_out<'a>(outcome: &'a RunOutcome, last: &'a [RequestRecord]) -> Vec<StageOut<'a>> {
    outcome
        .records
        .iter()
        .enumerate()
        .map(|(i, record)| StageOut {
            record,
            requests: outcome.requests.get(i).map_or(last, Vec::as_slice),
        })
        .collect()
}

/// The stages to write of a lean run: every record so far with its spooled detail.
fn spooled_out<'a>(outcome: &'a RunOutcome, spools: &'a [SpooledDetail]) -> Vec<StageSpooled<'a>> {
    outcome
        .records
        .iter()
        .zip(spools)
        .map(|(record, detail)| StageSpooled { record, detail })
        .collect()
}

/// Where a stage's `what` (its canonical detail, its records, vLLM's arrays) is spooled: a hidden file
/// beside the result, or in the system's temporary folder when the result goes to stdout.
/// A write error with its system reason (`cannot write PATH: No space left on device`).
fn with_source(e: &LoadgenError) -> String {
    match std::error::Error::source(e) {
        Some(s) => format!("{e}: {s}"),
        None => e.to_string(),
    }
}

/// `benchlens-rescue-<pid>` under the system's temporary folder (created): where files go that
/// the result folder refused.
fn rescue_dir() -> Result<PathBuf, LoadgenError> {
    let dir = std::env::temp_dir().join(format!("benchlens-rescue-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|source| LoadgenError::Write {
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// Where a file that could not be written at `path` goes instead: the same name in the
/// rescue folder ([`rescue_dir`]).
fn rescue_path(path: &Path) -> Result<PathBuf, LoadgenError> {
    Ok(rescue_dir()?.join(
        path.file_name()
            .unwrap_or(std::ffi::OsStr::new("benchlens.json")),
    ))
}

/// A stage's scratch file (`what`: its spooled detail or records) made by `create`, beside the
/// result; where that folder refuses it (a full disk, a name too long for it), in the rescue
/// folder under a short name instead, said on stderr. The run's files do not change: a scratch
/// file is removed once its stage is written.
fn scratch<T>(
    result: Option<&Path>,
    stage: usize,
    what: &str,
    create: impl Fn(&Path) -> Result<T, LoadgenError>,
) -> Result<T, LoadgenError> {
    match create(&spool_path(result, stage, what)) {
        Err(e @ LoadgenError::Write { .. }) => {
            let moved = rescue_dir()?.join(format!("stage{stage}-{what}.tmp"));
            let made = create(&moved)?;
            eprintln!(
                "warning: {}: the scratch file is {} instead",
                with_source(&e),
                moved.display()
            );
            Ok(made)
        }
        other => other,
    }
}

fn spool_path(result: Option<&std::path::Path>, stage: usize, what: &str) -> PathBuf {
    let pid = std::process::id();
    match result {
        Some(result) => {
            let name = result
                .file_name()
                .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
            result.with_file_name(format!(".{name}.stage{stage}-{what}.tmp-{pid}"))
        }
        None => std::env::temp_dir().join(format!("benchlens-stage{stage}-{what}.tmp-{pid}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(stages: &[(u64, u64)]) -> RunOutcome {
        RunOutcome {
            metrics: stages
                .iter()
                .map(|&(completed, failed)| StageMetrics {
                    completed,
                    failed,
                    ..StageMetrics::default()
                })
                .collect(),
            ..RunOutcome::default()
        }
    }

    #[test]
    fn a_run_with_most_requests_failed_is_a_failure_by_default() {
        // The server died mid-way: 84 % failed.
        let why = outcome(&[(16, 84)])
            .failure_verdict(None)
            .expect("a failure");
        assert!(
            why.contains("84.0%") && why.contains("more than half"),
            "{why}"
        );
        // Over the whole run: a bad stage among good ones is not half the run.
        assert_eq!(outcome(&[(100, 0), (40, 60)]).failure_verdict(None), None);
        assert!(outcome(&[(10, 0), (40, 60)])
            .failure_verdict(None)
            .is_some());
        assert_eq!(outcome(&[(50, 50)]).failure_verdict(None), None);
        assert!(outcome(&[(0, 3)])
            .failure_verdict(None)
            .unwrap()
            .contains("no request succeeded"));
        // --fail-on-error sets the bound per stage, stricter or looser.
        let why = outcome(&[(100, 0), (95, 5)])
            .failure_verdict(Some(1.0))
            .unwrap();
        assert!(why.starts_with("stage 2: 5.0%"), "{why}");
        assert_eq!(outcome(&[(16, 84)]).failure_verdict(Some(90.0)), None);
    }
}
