//! `benchlens run`: the pipeline that turns the options into a plan of stages, drives each
//! stage's schedule through the client, measures, prints vLLM's summary and writes the result
//! files after every stage (so an interrupted run keeps what it measured, marked partial), and
//! the signal handling around it ([`interrupt`](super::interrupt): SIGINT, SIGTERM, SIGHUP).
//! Must not import app code.
//!
//! [`run_inner`] is the whole story: the options checked ([`prepare`]), the run set up
//! (`session`: the mock, the client, the model, the prompts, the result paths checked for
//! room), its `plan` of stages made, the warm-up, then for each stage: run and measure it
//! (`one_stage`), write it (`files`); then the last writes. The other parts, each in its own
//! file: [`opts`] (the command-line options), `setup` (the model probe, the prompts, the result
//! paths), `stage` (one stage on the wire), `sink` (each request as it ends: its reply counted,
//! its row written to the per-request file), `tally` (a lean stage's figures as it runs),
//! `vllm_command` (vLLM's command line for the vLLM-compatible files). They never import this
//! file but for [`RunOutcome`].

use std::path::PathBuf;

use tokio::sync::watch;

use super::interrupt::{self, Interrupt};
use super::measure::StageMetrics;
use super::record::RequestRecord;
use super::report;
use super::LoadgenError;
use crate::model::Record;

mod files;
mod one_stage;
pub mod opts;
mod plan;
pub mod prepare;
mod scrape;
mod session;
mod setup;
mod sink;
mod stage;
mod tally;
mod vllm_command;

pub use super::figures::steady_window_of;
pub use opts::{DatasetKind, Rate, RunOpts};
pub use prepare::parse_header;
pub use vllm_command::vllm_command_line;

use files::{spooled_out, stages_out, Files, Measured, RescueCleanup};
use one_stage::Run;
use plan::Plan;
use prepare::prepare;
use session::Session;

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
/// (`tally`), its requests are let go as they end, and the stage's end sorts samples and
/// copies the spooled detail into the canonical file (for stdout: spooled in the temporary
/// folder, copied out at the run's end). With `--vllm-compatible` (which writes every request
/// again) or `--steady-window` (whose figures are of the requests in a window known at the
/// stage's end) the requests' whole records are spooled as well and read back at the stage's
/// end: the window's figures made then, vLLM's per-request arrays streamed from them.
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
    let interrupted = || {
        settled();
        Ok(RunOutcome {
            partial: true,
            ..RunOutcome::default()
        })
    };
    let prep = prepare(&opts)?;
    // Whichever way the run ends, a rescue folder it left empty goes.
    let _rescue = RescueCleanup;
    let Some((session, trace)) = Session::open(&opts, &prep, &mut stop).await? else {
        return interrupted();
    };
    let plan = Plan::new(&opts, &prep, trace)?;
    if !session.warm_up(&opts, &prep, &mut stop).await? {
        return interrupted();
    }
    let run = Run {
        opts: &opts,
        prep: &prep,
        session: &session,
        plan: &plan,
        detail_in_records,
        taken,
    };
    let mut files = Files::new(&opts, &session, detail_in_records);
    let mut outcome = RunOutcome {
        result_path: session.result_path.clone(),
        requests_path: session.requests_path.clone(),
        ..RunOutcome::default()
    };
    for stage in &plan.stages {
        if *stop.borrow() {
            outcome.partial = true;
            settled();
            break;
        }
        let measured = run
            .stage(stage, &mut stop, &mut files, &mut outcome)
            .await?;
        files.write_stage(&opts, &session, plan.stages.len(), &measured, &mut outcome)?;
        let Measured {
            figures,
            requests,
            stopped,
            ..
        } = measured;
        outcome.cancelled += figures.cancelled;
        outcome.metrics.push(figures.metrics);
        outcome.requests.push(requests);
        if stopped {
            settled();
            break;
        }
    }
    if outcome.partial && outcome.records.is_empty() {
        eprintln!("interrupted before the first stage: nothing was measured");
    }
    if session.result_path.is_none() && opts.write_files {
        let stdout = std::path::Path::new("-");
        if files.lean {
            report::write_canonical_spooled(stdout, &spooled_out(&outcome, &files.spools))?;
        } else {
            report::write_canonical(stdout, &stages_out(&outcome, &[]))?;
        }
    }
    if let Some(m) = session.mock {
        m.shutdown().await;
    }
    Ok(outcome)
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
