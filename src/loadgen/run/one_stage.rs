//! One stage of a run from its plan to its record: the schedule driven on the wire
//! ([`run_stage`]), each request counted and its row written as it ends, the figures made
//! (while it runs for a lean stage, by its tally; after it otherwise, by [`stage_figures`]),
//! the server's telemetry joined, the summary printed and the stage's record made.

use tokio::sync::watch;

use super::files::{say_spilled, scratch, with_source, Files, Measured};
use super::opts::RunOpts;
use super::plan::{Plan, Stage};
use super::prepare::Prepared;
use super::scrape;
use super::session::Session;
use super::sink::{RequestsFile, SinkConfig};
use super::stage::{progress_bar, run_stage, StageRun};
use super::tally::{StageTally, Tallied, TallyConfig};
use super::RunOutcome;
use crate::loadgen::figures::{stage_figures, FigureOpts};
use crate::loadgen::interrupt;
use crate::loadgen::record::RecordSpool;
use crate::loadgen::report::{self, DetailSpool, StageInfo};
use crate::loadgen::shard::{REQUEST_ROWS_METRIC, RUN_FINGERPRINT_TAG};
use crate::loadgen::telemetry;
use crate::loadgen::LoadgenError;
use crate::model::{MetricKey, Record};

/// What every stage of a run shares.
pub(super) struct Run<'a> {
    pub(super) opts: &'a RunOpts,
    pub(super) prep: &'a Prepared,
    pub(super) session: &'a Session,
    pub(super) plan: &'a Plan,
    /// The caller wants each stage's requests in its record.
    pub(super) detail_in_records: bool,
    /// The signal that stopped the run, when one did.
    pub(super) taken: &'a interrupt::Taken,
}

impl Run<'_> {
    /// Runs `stage` and measures it; its record is pushed to `outcome.records`, and a failed
    /// write of its rows said there and moved to the rescue folder.
    pub(super) async fn stage(
        &self,
        stage: &Stage,
        stop: &mut watch::Receiver<bool>,
        files: &mut Files,
        outcome: &mut RunOutcome,
    ) -> Result<Measured, LoadgenError> {
        let (opts, session) = (self.opts, self.session);
        let (plan, rate) = self.plan.schedule(stage)?;
        let index = stage.index;
        let pb = progress_bar(plan.len(), opts.no_progress, index, self.plan.stages.len());
        let stage_date = report::now_date();
        // On the wall clock, so that shards' files can be merged onto one time line.
        let stage_start_unix_s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0.0, |d| d.as_secs_f64());
        let scraper = opts.scrape_metrics.clone().map(|path| {
            let at = tokio::time::Instant::now();
            scrape::spawn(
                session.workload.clone(),
                path,
                at,
                session.scrape_warned.clone(),
            )
        });
        if let (Some(_), Some(rp), true, true) = (
            &files.result,
            &files.requests,
            opts.write_files,
            files.requests_file.is_none(),
        ) {
            files.requests_file = Some(RequestsFile::create(rp, opts.overwrite)?);
        }
        let tally = match files.lean {
            true => Some(StageTally::new(
                TallyConfig {
                    slo: self.prep.slo,
                    spool: DetailSpool::new(scratch(files.result.as_deref(), index, "detail")?),
                    records: match opts.vllm_compatible || opts.steady_window {
                        true => Some(RecordSpool::new(scratch(
                            files.result.as_deref(),
                            index,
                            "records",
                        )?)),
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
        let rows_before = files.requests_file.as_ref().map_or(0, RequestsFile::rows);
        let StageRun {
            records: mut reqs,
            tallied,
            duration_s,
            stopped,
            released,
            file,
        } = run_stage(
            &session.workload,
            &plan,
            stage.concurrency.map(|c| c as usize),
            stop,
            pb.clone(),
            session.workload.conversations.is_some(),
            SinkConfig {
                tokenizer: Some(session.tokenizer.clone()),
                stage: index,
                keep_text: opts.vllm_compatible && opts.save_detailed,
                file: files.requests_file.take(),
            },
            tally,
        )
        .await?;
        files.requests_file = file;
        let rows = files
            .requests_file
            .as_ref()
            .map(|f| f.rows().saturating_sub(rows_before));
        rows_failed(files, index, outcome);
        if let Some(pb) = pb {
            pb.finish_and_clear();
        }
        outcome.partial |= stopped;
        let readings = scraper
            .map(|(h, r)| scrape::finish(h, &r))
            .unwrap_or_default();
        let how = FigureOpts {
            duration_s,
            target_rate: rate,
            percentiles: &opts.percentiles,
            slo: self.prep.slo,
            percentile_metrics: opts.percentile_metrics.clone(),
            steady: opts.steady_window,
        };
        // A lean stage's records, spooled for vLLM's per-request arrays.
        let mut spooled_records = None;
        let mut figures = match tallied {
            Some(t) => {
                // Requests cut off by a signal are neither successes nor failures: they are in
                // the JSON Lines only (the tally left them out).
                let Tallied {
                    figures,
                    detail,
                    records,
                } = t.tally.finish(how, t.cancelled as u64)?;
                say_spilled(index, "per-request detail", detail.scratch());
                if let Some(r) = &records {
                    say_spilled(index, "requests", r.scratch());
                }
                files.spools.push(detail);
                spooled_records = records;
                figures
            }
            None => stage_figures(&mut reqs, how),
        };
        let seconds = figures.series.get("t_s").map_or(0, Vec::len);
        figures
            .series
            .extend(telemetry::columns(&readings, seconds));
        let metrics_missing = opts
            .scrape_metrics
            .as_deref()
            .and_then(|path| scrape::missing(&readings, path, &session.scrape_warned));
        let info = StageInfo {
            stage: index,
            model: session.model.clone(),
            backend: opts.backend.name().into(),
            engine: opts.engine.clone(),
            gpu: opts.gpu.clone(),
            gpu_count: opts.gpu_count,
            label: opts.label.clone(),
            dataset: session.dataset_name.clone(),
            request_rate: rate,
            burstiness: opts.burstiness,
            max_concurrency: stage.concurrency,
            num_prompts: released as u64,
            date: stage_date,
            tags: session.tags.clone(),
            endpoint: session.endpoint.clone(),
            partial: stopped,
        };
        let text = report::summary_text(&info, &figures.metrics, &figures.view);
        if session.result_path.is_none() {
            eprint!("{text}");
        } else {
            crate::stdout::print(&text);
        }
        outcome.summaries.push(text);
        let detail: &[_] = if self.detail_in_records { &reqs } else { &[] };
        let mut record = report::stage_record(&info, &figures.metrics, detail, &figures.view);
        record.series = std::mem::take(&mut figures.series);
        self.tag(&mut record, released, stopped, rows, metrics_missing);
        if let Some(w) = &figures.window {
            record.tags.insert("steady_window".into(), w.rule.into());
            let mut put = |k: &str, v: f64| record.metrics.insert(MetricKey::Extra(k.into()), v);
            put("window_start_s", w.start_s);
            put("window_end_s", w.end_s);
            put("window_lifetime_s", w.lifetime_s);
        }
        record.metrics.insert(
            MetricKey::Extra("stage_start_unix_s".into()),
            stage_start_unix_s,
        );
        outcome.records.push(record);
        Ok(Measured {
            info,
            figures,
            requests: reqs,
            spooled_records,
            stopped,
        })
    }

    /// What a stage's record says of the run besides its figures: a fixed length, the shard,
    /// the rows written, the signal, the conversations, the metrics the server lacked.
    fn tag(
        &self,
        record: &mut Record,
        released: usize,
        stopped: bool,
        rows: Option<u64>,
        metrics_missing: Option<String>,
    ) {
        let opts = self.opts;
        if let Some(d) = opts.duration {
            // A stage of a given length sends as many requests as arrive in it: that count is
            // an outcome (in `completed` and `failed`), not a configuration to compare by.
            record.num_prompts = None;
            record.tags.insert("duration_s".into(), d.to_string());
        }
        if let Some(s) = opts.shard {
            record.tags.insert("shard".into(), s.to_string());
            if let Some(f) = &self.session.fingerprint {
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
        if let Some(signal) = self.taken.get().filter(|_| stopped) {
            record
                .tags
                .insert("interrupted_by".into(), signal.name().into());
        }
        if let Some((list, _)) = self
            .session
            .workload
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
    }
}

/// The rows' file failed (a full disk): the stage's measurements stand, and the rows of the
/// stages after it go to a folder that takes them.
fn rows_failed(files: &mut Files, index: usize, outcome: &mut RunOutcome) {
    let Some((e, handed)) = files
        .requests_file
        .as_mut()
        .and_then(RequestsFile::take_failure)
    else {
        return;
    };
    files.requests_file = None;
    // Already in the rescue folder: nowhere else to go.
    let moved = files
        .requests
        .as_deref()
        .and_then(|p| super::files::rescue_path(p).ok())
        .filter(|m| files.requests.as_ref() != Some(m));
    let whereto = moved.as_ref().map_or_else(
        || "nowhere (no folder took them)".to_string(),
        |p| p.display().to_string(),
    );
    let what = format!(
        "{}: at most {handed} rows reached it; stage {}'s later rows are only in the result file's per-request detail, the rows of later stages go to {whereto}",
        with_source(&e),
        index + 1
    );
    eprintln!("error: {what}");
    outcome.write_failures.push(what);
    if let Some(p) = moved {
        files.requests = Some(p);
        outcome.requests_path = files.requests.clone();
    }
}
