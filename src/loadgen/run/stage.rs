//! One stage on the wire: drives its arrival schedule through the client, records every
//! request (cancelled ones too when the run is interrupted) and draws the progress bar.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::watch;
use tokio::time::Instant;

use crate::loadgen::client::Client;
use crate::loadgen::dataset::Prompt;
use crate::loadgen::record::{Failure, FailureKind, RequestRecord};
use crate::loadgen::schedule::{drive, stop_requested, Arrivals};
use crate::loadgen::shard::Shard;

/// Running totals for the progress bar.
#[derive(Default)]
struct Counters {
    failed: AtomicU64,
    tokens: AtomicU64,
}

/// What every request of a run is made of: the client that sends it, the prepared request
/// bodies and the prompts they came from (request `i` sends prompt `i` modulo their number).
pub(super) struct Workload {
    /// The HTTP client, shared by all requests.
    pub(super) client: Client,
    /// One request body per prompt, built once before the first stage.
    pub(super) bodies: Vec<Bytes>,
    /// The prompts, for their token counts.
    pub(super) prompts: Vec<Prompt>,
    /// Whether `--ignore-eos` was asked (a shorter reply is then flagged).
    pub(super) ignore_eos: bool,
    /// `--shard`: this process's requests are every N-th of the run's, numbered run-wide.
    pub(super) shard: Option<Shard>,
}

pub(super) async fn run_stage(
    workload: &Arc<Workload>,
    plan: &Arrivals,
    limit: Option<usize>,
    stop: &mut watch::Receiver<bool>,
    progress: Option<indicatif::ProgressBar>,
) -> (Vec<RequestRecord>, f64, bool, usize) {
    let results = Arc::new(Mutex::new(Vec::with_capacity(plan.len().unwrap_or(1024))));
    let counters = Arc::new(Counters::default());
    let start = Instant::now();
    let summary = {
        let results = results.clone();
        let workload = workload.clone();
        let stop_rx = stop.clone();
        drive(plan, limit, stop, move |d| {
            let workload = workload.clone();
            let results = results.clone();
            let progress = progress.clone();
            let counters = counters.clone();
            let mut stop_rx = stop_rx.clone();
            async move {
                let index = workload.shard.map_or(d.index, |s| s.global_index(d.index));
                let i = index % workload.prompts.len();
                let p = &workload.prompts[i];
                let mut rec = RequestRecord {
                    index,
                    input_len: p.input_len,
                    max_tokens: p.output_len,
                    ignore_eos: workload.ignore_eos,
                    intended_at_s: (d.intended - d.stage_start).as_secs_f64(),
                    dispatched_at_s: (d.dispatched - d.stage_start).as_secs_f64(),
                    schedule_lag_s: d.lag.as_secs_f64(),
                    chunks: Vec::with_capacity(p.output_len.min(4096) as usize + 1),
                    ..RequestRecord::default()
                };
                let cancelled = {
                    let request =
                        workload
                            .client
                            .stream(workload.bodies[i].clone(), d.stage_start, &mut rec);
                    tokio::select! {
                        () = request => false,
                        () = stop_requested(&mut stop_rx) => true,
                    }
                };
                if cancelled {
                    // The user stopped the run: not the server's failure, and not measured.
                    rec.failure = Some(Failure {
                        kind: FailureKind::Cancelled,
                        message: "cancelled: the run was interrupted (Ctrl-C)".into(),
                    });
                }
                if let Some(pb) = progress.as_ref().filter(|_| !cancelled) {
                    let failed = counters
                        .failed
                        .fetch_add(u64::from(rec.failure.is_some()), Ordering::Relaxed)
                        + u64::from(rec.failure.is_some());
                    let tokens = counters
                        .tokens
                        .fetch_add(rec.output_tokens(), Ordering::Relaxed)
                        + rec.output_tokens();
                    let secs = start.elapsed().as_secs_f64().max(1e-3);
                    pb.inc(1);
                    pb.set_message(format!(
                        "{failed} failed, {:.0} tok/s",
                        tokens as f64 / secs
                    ));
                }
                if let Ok(mut r) = results.lock() {
                    r.push(rec);
                }
            }
        })
        .await
    };
    let duration = start.elapsed().as_secs_f64();
    let mut out = results
        .lock()
        .map(|mut r| std::mem::take(&mut *r))
        .unwrap_or_default();
    out.sort_by_key(|r| r.index);
    (out, duration, summary.stopped, summary.released)
}

pub(super) fn progress_bar(
    total: Option<usize>,
    hidden: bool,
    stage: usize,
    stages: usize,
) -> Option<indicatif::ProgressBar> {
    if hidden {
        return None;
    }
    let target = indicatif::ProgressDrawTarget::stderr();
    if target.is_hidden() {
        return None;
    }
    let pb = indicatif::ProgressBar::with_draw_target(total.map(|t| t as u64), target);
    let style = indicatif::ProgressStyle::with_template(&format!(
        "stage {}/{} [{{elapsed_precise}}] {{bar:30}} {{pos}}/{{len}} done, {{per_sec}}, {{msg}}",
        stage + 1,
        stages
    ))
    .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar());
    pb.set_style(style);
    Some(pb)
}
