//! A run's files as its stages end: the canonical result file rewritten after every stage (so
//! an interrupted run keeps what it measured), the vLLM-compatible file of each stage, the
//! stages' scratch files, and where each goes when its folder refuses it (a full disk, a name
//! too long for it): the rescue folder, `benchlens-rescue-<pid>` under the system's temporary
//! folder, said on stderr, rather than the run ending with nothing. A rescue folder left empty
//! is removed when the run ends, whichever way it ends.

use std::path::{Path, PathBuf};

use super::opts::RunOpts;
use super::session::Session;
use super::sink::RequestsFile;
use super::vllm_command::vllm_command_line;
use super::RunOutcome;
use crate::loadgen::figures::StageFigures;
use crate::loadgen::record::{EachRequest, RequestRecord, SpooledRecords};
use crate::loadgen::report::{self, SpooledDetail, StageInfo, StageOut, StageSpooled};
use crate::loadgen::scratch::{Scratch, ScratchWriter};
use crate::loadgen::LoadgenError;

/// What a stage measured, to be written.
pub(super) struct Measured {
    /// The stage's identity, as the summary and the files show it.
    pub(super) info: StageInfo,
    /// Its figures.
    pub(super) figures: StageFigures,
    /// Its requests, when held (not for a lean stage).
    pub(super) requests: Vec<RequestRecord>,
    /// A lean stage's spooled records, for vLLM's per-request arrays.
    pub(super) spooled_records: Option<SpooledRecords>,
    /// Whether a signal cut it short.
    pub(super) stopped: bool,
}

/// The files of a run in progress.
pub(super) struct Files {
    /// The canonical result file (`None`: stdout).
    pub(super) result: Option<PathBuf>,
    /// The per-request JSON Lines file (moved to the rescue folder when its folder refuses it).
    pub(super) requests: Option<PathBuf>,
    /// The per-request file, open from the first stage on.
    pub(super) requests_file: Option<RequestsFile>,
    /// The lean stages' spooled canonical detail, kept (and copied into the canonical file
    /// every time it is rewritten) to the run's end.
    pub(super) spools: Vec<SpooledDetail>,
    /// Whether the stages are lean (their requests let go as they end).
    pub(super) lean: bool,
}

impl Files {
    /// The files of a run set up in `session`; `detail_in_records`: the caller wants each
    /// stage's requests in its record (the stages are then not lean).
    pub(super) fn new(opts: &RunOpts, session: &Session, detail_in_records: bool) -> Files {
        let (result, requests) = (session.result_path.clone(), session.requests_path.clone());
        let to_stdout = result.is_none();
        Files {
            lean: !detail_in_records && opts.write_files && (to_stdout || requests.is_some()),
            result,
            requests,
            requests_file: None,
            spools: Vec::new(),
        }
    }

    /// Writes a stage: its record into the canonical file (rewritten with every stage so far)
    /// and its vLLM-compatible file. The record is pushed to `outcome.records` first.
    pub(super) fn write_stage(
        &mut self,
        opts: &RunOpts,
        session: &Session,
        stages: usize,
        measured: &Measured,
        outcome: &mut RunOutcome,
    ) -> Result<(), LoadgenError> {
        let stage = measured.info.stage;
        if let (Some(p), Some(_), true) = (self.result.clone(), &self.requests, opts.write_files) {
            let write = |p: &Path| match self.lean {
                true => report::write_canonical_spooled(p, &spooled_out(outcome, &self.spools)),
                false => report::write_canonical(p, &stages_out(outcome, &measured.requests)),
            };
            match write(&p) {
                Ok(()) => {}
                Err(e @ LoadgenError::Write { .. }) => {
                    let moved = rescue_path(&p)?;
                    let what = match write(&moved) {
                        Ok(()) => {
                            self.result = Some(moved.clone());
                            outcome.result_path = Some(moved.clone());
                            format!(
                                "{}: the result file is {} instead",
                                with_source(&e),
                                moved.display()
                            )
                        }
                        Err(again) => format!(
                            "{}, and {}: no result file was written; the figures of every \
                             stage so far are only in the summaries printed",
                            with_source(&e),
                            with_source(&again)
                        ),
                    };
                    eprintln!("error: {what}");
                    outcome.write_failures.push(what);
                }
                Err(e) => return Err(e),
            }
            if self.lean && (measured.stopped || stage + 1 == stages) {
                // No stage follows: the spools are in the file. Let go now, before a second
                // Ctrl-C may end the process.
                self.spools.clear();
            }
        }
        if opts.vllm_compatible && opts.write_files {
            let p = self.write_vllm(opts, session, stages, measured, outcome)?;
            outcome.vllm_paths.push(p);
        }
        Ok(())
    }

    /// The stage's vLLM-compatible file; where its folder refuses it or its scratch files,
    /// the scratch files, then the file, go to the rescue folder.
    fn write_vllm(
        &self,
        opts: &RunOpts,
        session: &Session,
        stages: usize,
        measured: &Measured,
        outcome: &mut RunOutcome,
    ) -> Result<PathBuf, LoadgenError> {
        let stage = measured.info.stage;
        let name = match &opts.result_filename {
            Some(n) if stages == 1 => n.clone(),
            Some(n) => {
                let stem = n.strip_suffix(".json").unwrap_or(n);
                format!("{stem}-stage{stage}.json")
            }
            None => report::vllm_file_name(&measured.info),
        };
        let p = opts.result_dir.join(name);
        let mut info = measured.info.clone();
        info.tags.insert(
            "benchlens_command_line".into(),
            info.tags.get("command_line").cloned().unwrap_or_default(),
        );
        info.tags.insert(
            "command_line".into(),
            vllm_command_line(
                opts,
                &session.base_url,
                &session.model,
                &session.dataset_name,
                info.request_rate,
                info.max_concurrency,
            ),
        );
        // Every request of the stage (of its window), spooled or held.
        let requests: &dyn EachRequest = match &measured.spooled_records {
            Some(r) => r,
            None => &measured.requests,
        };
        let f = &measured.figures;
        let write = |p: &Path, scratch: &Path| {
            report::write_atomic_with(p, |out| {
                report::write_vllm_json(
                    out,
                    &info,
                    &f.metrics,
                    requests,
                    &f.view,
                    opts.save_detailed,
                    scratch,
                )
            })
        };
        let beside = scratch_stem(self.result.as_deref(), stage, "vllm");
        match write(&p, &beside) {
            Ok(()) => Ok(p),
            Err(e @ LoadgenError::Write { .. }) => {
                let dir = rescue_dir()?;
                let rescued_scratch = dir.join(format!("stage{stage}-vllm"));
                match write(&p, &rescued_scratch) {
                    Ok(()) => {
                        eprintln!(
                            "warning: {}: its scratch files went to {} instead",
                            with_source(&e),
                            dir.display()
                        );
                        Ok(p)
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
                        Ok(moved)
                    }
                    Err(other) => Err(other),
                }
            }
            Err(e) => Err(e),
        }
    }
}

/// The stages to write: every record so far, each with its requests (`last`: those of the
/// record pushed last, not yet in `outcome.requests`).
pub(super) fn stages_out<'a>(
    outcome: &'a RunOutcome,
    last: &'a [RequestRecord],
) -> Vec<StageOut<'a>> {
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
pub(super) fn spooled_out<'a>(
    outcome: &'a RunOutcome,
    spools: &'a [SpooledDetail],
) -> Vec<StageSpooled<'a>> {
    outcome
        .records
        .iter()
        .zip(spools)
        .map(|(record, detail)| StageSpooled { record, detail })
        .collect()
}

/// A write error with its system reason (`cannot write PATH: No space left on device`).
pub(super) fn with_source(e: &LoadgenError) -> String {
    match std::error::Error::source(e) {
        Some(s) => format!("{e}: {s}"),
        None => e.to_string(),
    }
}

/// `benchlens-rescue-<pid>` under the system's temporary folder.
fn rescue_folder() -> PathBuf {
    std::env::temp_dir().join(format!("benchlens-rescue-{}", std::process::id()))
}

/// The rescue folder (created): where files go that the result folder refused.
fn rescue_dir() -> Result<PathBuf, LoadgenError> {
    let dir = rescue_folder();
    std::fs::create_dir_all(&dir).map_err(|source| LoadgenError::Write {
        path: dir.clone(),
        source,
    })?;
    Ok(dir)
}

/// Removes the rescue folder when the run leaves it empty (its scratch files have no name,
/// so only refused result files keep it), whichever way the run ends.
pub(super) struct RescueCleanup;

impl Drop for RescueCleanup {
    fn drop(&mut self) {
        // Fails, as it should, when the folder holds a file or was never made.
        let _ = std::fs::remove_dir(rescue_folder());
    }
}

/// Where a file that could not be written at `path` goes instead: the same name in the
/// rescue folder.
pub(super) fn rescue_path(path: &Path) -> Result<PathBuf, LoadgenError> {
    Ok(rescue_dir()?.join(
        path.file_name()
            .unwrap_or(std::ffi::OsStr::new("benchlens.json")),
    ))
}

/// A stage's scratch file (`what`: its spooled detail or records), beside the result (in the
/// system's temporary folder when the result goes to stdout); where that folder refuses it (a
/// full disk, a name too long for it), in the rescue folder under a short name instead, said
/// on stderr. It has no name once made ([`crate::loadgen::scratch`]).
pub(super) fn scratch(
    result: Option<&Path>,
    stage: usize,
    what: &str,
) -> Result<ScratchWriter, LoadgenError> {
    let stem = scratch_stem(result, stage, what);
    let (dir, prefix) = split_stem(&stem);
    match ScratchWriter::create(dir, &prefix) {
        Ok(w) => Ok(w),
        Err(source) => {
            let refused = LoadgenError::Write {
                path: stem.clone(),
                source,
            };
            let rescue = rescue_dir()?;
            let w = ScratchWriter::create(&rescue, &format!("stage{stage}-{what}.")).map_err(
                |source| LoadgenError::Write {
                    path: rescue.clone(),
                    source,
                },
            )?;
            eprintln!(
                "warning: {}: the scratch file is {} instead",
                with_source(&refused),
                w.path().display()
            );
            Ok(w)
        }
    }
}

/// Says once, when the disk refused part of a stage's scratch file as it ran, that the rest
/// is held in memory and nothing of it was lost.
pub(super) fn say_spilled(stage: usize, what: &str, scratch: &Scratch) {
    if let Some(e) = scratch.failure() {
        eprintln!(
            "warning: cannot write {}: {e}: stage {}'s {what} went on in memory ({} bytes), \
             nothing of it is lost",
            scratch.path().display(),
            stage + 1,
            scratch.in_memory()
        );
    }
}

/// The name a stage's scratch files start with: `.NAME.stageN-WHAT` beside the result, or
/// `benchlens-stageN-WHAT` in the system's temporary folder.
fn scratch_stem(result: Option<&Path>, stage: usize, what: &str) -> PathBuf {
    match result {
        Some(result) => {
            let name = result
                .file_name()
                .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
            result.with_file_name(format!(".{name}.stage{stage}-{what}"))
        }
        None => std::env::temp_dir().join(format!("benchlens-stage{stage}-{what}")),
    }
}

/// A stem's folder (`.` for a bare name) and its name with a final `.`.
fn split_stem(stem: &Path) -> (&Path, String) {
    let dir = match stem.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = stem
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    (dir, format!("{name}."))
}
