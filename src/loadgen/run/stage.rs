//! One stage on the wire: drives its arrival schedule through the client (one request per
//! arrival, or with `--multi-turn` one conversation, its turns in order), records every
//! request (cancelled ones too when the run is interrupted) and draws the progress bar.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use serde_json::{Map, Value};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::loadgen::body::{messages_body, Sampling};
use crate::loadgen::client::{Backend, Client};
use crate::loadgen::conversation::{self, Conversation};
use crate::loadgen::dataset::Prompt;
use crate::loadgen::record::{ChunkLog, Failure, FailureKind, RequestRecord, TurnOf};
use crate::loadgen::schedule::{drive, stop_requested, Arrivals, Dispatch};
use crate::loadgen::shard::Shard;

use super::sink::{RequestsFile, Sink, SinkConfig, SinkSender, Tallying, TurnSource};
use super::tally::StageTally;

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
    /// The prompts' token counts (their texts live on only in the bodies).
    pub(super) prompts: Vec<PromptLens>,
    /// Whether `--ignore-eos` was asked (a shorter reply is then flagged).
    pub(super) ignore_eos: bool,
    /// `--shard`: this process's requests are every N-th of the run's, numbered run-wide.
    pub(super) shard: Option<Shard>,
    /// `--multi-turn`: the conversations (dispatch `i` plays conversation `i` modulo their
    /// number) and how their turns' bodies are made (each carries its history, so it is built
    /// when the turn is due).
    pub(super) conversations: Option<(Vec<Conversation>, TurnBodies)>,
}

/// What a request needs of its prompt once the body is built: the token counts. A run keeps
/// these rather than the [`Prompt`]s, whose texts the bodies already hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct PromptLens {
    /// [`Prompt::input_len`].
    pub(super) input_len: u64,
    /// [`Prompt::output_len`].
    pub(super) output_len: u64,
}

impl From<&Prompt> for PromptLens {
    fn from(p: &Prompt) -> PromptLens {
        PromptLens {
            input_len: p.input_len,
            output_len: p.output_len,
        }
    }
}

impl TurnSource for Workload {
    fn turns(&self, number: usize) -> Option<(&[conversation::Turn], bool)> {
        let (list, bodies) = self.conversations.as_ref().filter(|(l, _)| !l.is_empty())?;
        let turns = list[number % list.len()].turns.as_slice();
        Some((turns, bodies.backend == Backend::OpenAiChat))
    }
}

/// What a turn's request body is made of besides its history.
pub(super) struct TurnBodies {
    /// The API.
    pub(super) backend: Backend,
    /// The model name sent.
    pub(super) model: String,
    /// The sampling settings.
    pub(super) sampling: Sampling,
    /// `--extra-body`.
    pub(super) extra: Option<Map<String, Value>>,
}

/// Sends conversation `number`'s turns one after the other on its dispatch: turn `k + 1` once
/// turn `k`'s reply has ended and turn `k + 1`'s think time has passed, its prompt the history
/// with the replies received. Each turn's record is kept as soon as it ends; a failed or
/// cancelled turn ends the conversation. Returns the turns' records' output tokens and
/// failures for the progress bar.
async fn converse(
    workload: &Workload,
    number: usize,
    d: &Dispatch,
    next_index: &AtomicUsize,
    stop: &mut watch::Receiver<bool>,
    results: &SinkSender,
) -> (u64, u64) {
    let Some((list, bodies)) = workload
        .conversations
        .as_ref()
        .filter(|(l, _)| !l.is_empty())
    else {
        return (0, 0);
    };
    let conv = &list[number % list.len()];
    let mut replies: Vec<String> = Vec::with_capacity(conv.turns.len());
    let (mut due, mut woke, mut lag) = (d.intended, d.dispatched, d.lag);
    let (mut tokens, mut failed) = (0, 0);
    for (k, turn) in conv.turns.iter().enumerate() {
        if k > 0 {
            due = Instant::now() + Duration::from_secs_f64(turn.think_time_s);
            tokio::select! {
                () = tokio::time::sleep_until(due) => {}
                () = stop_requested(stop) => break,
            }
            woke = Instant::now();
            lag = woke.saturating_duration_since(due);
        }
        let history = conversation::messages(&conv.turns, &replies, k);
        let body = messages_body(
            bodies.backend,
            &bodies.model,
            &history,
            conversation::TEXT_SEPARATOR,
            turn.output_len,
            &bodies.sampling,
            bodies.extra.as_ref(),
        );
        let mut rec = RequestRecord {
            index: next_index.fetch_add(1, Ordering::Relaxed),
            // The new text alone until the run counts the whole history, after the stage.
            input_len: turn.new_input_len,
            max_tokens: turn.output_len,
            ignore_eos: workload.ignore_eos,
            intended_at_s: (due - d.stage_start).as_secs_f64(),
            dispatched_at_s: (woke - d.stage_start).as_secs_f64(),
            schedule_lag_s: lag.as_secs_f64(),
            chunks: ChunkLog::with_capacity(turn.output_len.min(4096) as usize + 1),
            turn: Some(TurnOf {
                conversation: number,
                turn: k,
                new_input_len: turn.new_input_len,
                think_time_s: turn.think_time_s,
            }),
            ..RequestRecord::default()
        };
        let cancelled = tokio::select! {
            () = workload.client.stream(body, d.stage_start, &mut rec) => false,
            () = stop_requested(stop) => true,
        };
        if cancelled {
            rec.failure = Some(Failure {
                kind: FailureKind::Cancelled,
                message: "cancelled: the run was interrupted (Ctrl-C)".into(),
            });
        }
        let ended = rec.failure.is_some();
        failed += u64::from(ended && !cancelled);
        tokens += rec.output_tokens();
        replies.push(rec.generated_text.clone());
        // Multi-turn requests are in send order by index.
        let _ = results.send((rec.index, rec));
        if ended {
            break;
        }
    }
    (tokens, failed)
}

/// What a stage gives back: its records in index order (counted, see [`super::sink`]) or, when
/// it was tallied, its tally, its seconds from start to the last request's end, whether it was
/// stopped, how many dispatches were released, and the per-request file with the stage's rows
/// written.
pub(super) struct StageRun {
    pub(super) records: Vec<RequestRecord>,
    pub(super) tallied: Option<Tallying>,
    pub(super) duration_s: f64,
    pub(super) stopped: bool,
    pub(super) released: usize,
    pub(super) file: Option<RequestsFile>,
}

/// Runs one stage: the plan's dispatches are requests, or with `conversational` whole
/// conversations (see [`converse`]); each request goes to the stage's [`Sink`] as it ends, and
/// with a `tally` is counted there rather than kept.
#[allow(clippy::too_many_arguments)]
pub(super) async fn run_stage(
    workload: &Arc<Workload>,
    plan: &Arrivals,
    limit: Option<usize>,
    stop: &mut watch::Receiver<bool>,
    progress: Option<indicatif::ProgressBar>,
    conversational: bool,
    sink: SinkConfig,
    tally: Option<StageTally>,
) -> Result<StageRun, crate::loadgen::LoadgenError> {
    let (sink, results) =
        Sink::start_tallied(workload.clone(), sink, plan.len().unwrap_or(1024), tally);
    let counters = Arc::new(Counters::default());
    // Multi-turn requests are numbered in the order they are sent.
    let next_index = Arc::new(AtomicUsize::new(0));
    let start = Instant::now();
    let summary = {
        let results = results;
        let workload = workload.clone();
        let stop_rx = stop.clone();
        drive(plan, limit, stop, move |d| {
            let workload = workload.clone();
            let results = results.clone();
            let progress = progress.clone();
            let counters = counters.clone();
            let mut stop_rx = stop_rx.clone();
            let next_index = next_index.clone();
            async move {
                if conversational {
                    let (tokens, failed) =
                        converse(&workload, d.index, &d, &next_index, &mut stop_rx, &results).await;
                    if let Some(pb) = progress.as_ref() {
                        let failed = counters.failed.fetch_add(failed, Ordering::Relaxed) + failed;
                        let tokens = counters.tokens.fetch_add(tokens, Ordering::Relaxed) + tokens;
                        let secs = start.elapsed().as_secs_f64().max(1e-3);
                        pb.inc(1);
                        pb.set_message(format!(
                            "conversations, {failed} failed, {:.0} tok/s",
                            tokens as f64 / secs
                        ));
                    }
                    return;
                }
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
                    chunks: ChunkLog::with_capacity(p.output_len.min(4096) as usize + 1),
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
                // Dispatch order is send order.
                let _ = results.send((d.index, rec));
            }
        })
        .await
    };
    let duration_s = start.elapsed().as_secs_f64();
    let (records, tallied, file) = match sink.finish_tallied().await? {
        Ok(mut t) => {
            let file = t.file.take();
            (Vec::new(), Some(t), file)
        }
        Err((records, file)) => (records, None, file),
    };
    Ok(StageRun {
        records,
        tallied,
        duration_s,
        stopped: summary.stopped,
        released: summary.released,
        file,
    })
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
