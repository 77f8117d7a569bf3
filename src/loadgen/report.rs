//! What a run leaves behind: vLLM's console summary block per stage, one canonical result file
//! (every stage a [`Record`], written with [`canonical::to_json`]), per-request JSON Lines beside
//! it, and with `--vllm-compatible` one file per stage with exactly vLLM's serving keys. Files are
//! written atomically (temporary file, then rename); `-` means stdout. Must not import app code.
//!
//! This file holds the dates and the atomic writes; each output has its own file, all re-exported
//! here: `stage_info` ([`StageInfo`], a stage's dimensions), `view` ([`SummaryView`]: percentile
//! metrics, queue times, failure reasons), `console` ([`summary_text`]), `record`
//! ([`stage_record`]), `vllm` ([`write_vllm_json`], [`vllm_file_name`]) and `jsonl`
//! ([`request_line`]), and `canonical_file` ([`write_canonical`]: the canonical file streamed to
//! disk, its per-request detail made while written). They import one another one way (`stage_info` ← `view` ← `console`,
//! `record` ← `vllm`) and never this file.

use std::io::Write as _;
use std::path::Path;

use super::LoadgenError;
use crate::model::canonical;
use crate::model::Record;

mod canonical_file;
mod console;
mod jsonl;
mod record;
mod stage_info;
mod view;
mod vllm;

pub use canonical_file::{
    write_canonical, write_canonical_spooled, write_doc, DetailSpool, SpooledDetail, StageOut,
    StageSpooled,
};
pub use console::summary_text;
pub use jsonl::request_line;
pub use record::{request_detail, stage_record};
pub use stage_info::StageInfo;
pub use view::{
    error_reasons, ErrorReason, PercentileMetric, SummaryView, UnknownPercentileMetric, ViewTally,
    REASON_BYTES,
};
#[cfg(test)]
pub(crate) use vllm::vllm_json;
pub use vllm::{vllm_file_name, write_vllm_json};

/// `%Y%m%d-%H%M%S` in UTC for seconds since the Unix epoch.
pub fn format_date(unix_s: u64) -> String {
    let days = (unix_s / 86_400) as i64;
    let secs = unix_s % 86_400;
    let (y, m, d) = crate::model::civil::civil_from_days(days);
    format!(
        "{y:04}{m:02}{d:02}-{:02}{:02}{:02}",
        secs / 3600,
        secs / 60 % 60,
        secs % 60
    )
}

/// `%Y%m%d-%H%M%S-mmm` in UTC (the date to the millisecond) for milliseconds since the Unix
/// epoch.
pub fn format_date_ms(unix_ms: u64) -> String {
    format!("{}-{:03}", format_date(unix_ms / 1000), unix_ms % 1000)
}

/// Creates the result file `path` for writing: a new file, or with `overwrite` one emptied if
/// it exists. Without `overwrite` an existing file is left as it is ([`LoadgenError::Exists`]);
/// the check and the creation are one step, so of two runs naming one file only one gets it.
pub fn create_file(path: &Path, overwrite: bool) -> Result<std::fs::File, LoadgenError> {
    let mut open = std::fs::OpenOptions::new();
    open.write(true);
    match overwrite {
        true => open.create(true).truncate(true),
        false => open.create_new(true),
    };
    open.open(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::AlreadyExists => LoadgenError::Exists { path: path.into() },
        _ => LoadgenError::Write {
            path: path.into(),
            source,
        },
    })
}

/// The current UTC date as vLLM writes it.
pub fn now_date() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    format_date(secs)
}

/// Writes `text` to `path` atomically (a temporary file in the same folder, then a rename), or
/// to stdout when `path` is `-`.
pub fn write_atomic(path: &Path, text: &str) -> Result<(), LoadgenError> {
    write_atomic_with(path, |out| out.write_all(text.as_bytes()))
}

/// Writes what `write` writes to `path` atomically (buffered into a temporary file in the same
/// folder, synced, then renamed over `path`; the temporary file is removed on failure), or to
/// stdout when `path` is `-`.
pub fn write_atomic_with(
    path: &Path,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> Result<(), LoadgenError> {
    let err = |source| LoadgenError::Write {
        path: path.into(),
        source,
    };
    if path == Path::new("-") {
        let mut out = std::io::BufWriter::new(std::io::stdout().lock());
        return write(&mut out).and_then(|()| out.flush()).map_err(err);
    }
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // The `tempfile` crate's: removed when dropped, on failure or a panic. Made readable as a
    // file the run creates itself is (tempfile's own files are the owner's alone).
    let tmp = tempfile::Builder::new()
        .prefix(&format!(".{name}."))
        .suffix(".tmp")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o666))
        .tempfile_in(dir)
        .map_err(err)?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, tmp);
    write(&mut out).map_err(err)?;
    let tmp = out.into_inner().map_err(|e| err(e.into_error()))?;
    tmp.as_file().sync_all().map_err(err)?;
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}

/// The canonical JSON of all stages so far.
pub fn canonical_text(records: &[Record]) -> String {
    canonical::to_json(records)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_format_like_vllm() {
        assert_eq!(format_date(0), "19700101-000000");
        // 2024-02-29 12:34:56 UTC
        assert_eq!(format_date(1_709_210_096), "20240229-123456");
    }

    #[test]
    fn dates_to_the_millisecond() {
        assert_eq!(format_date_ms(1_709_210_096_007), "20240229-123456-007");
    }

    #[test]
    fn result_files_are_created_new_unless_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.requests.jsonl");
        std::fs::write(&p, "kept\n").unwrap();
        let err = create_file(&p, false).unwrap_err();
        assert!(matches!(err, LoadgenError::Exists { .. }), "{err}");
        assert!(err.to_string().contains("r.requests.jsonl exists"), "{err}");
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "kept\n");
        create_file(&p, true).unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "");
        assert!(create_file(&dir.path().join("new.jsonl"), false).is_ok());
    }

    #[test]
    fn atomic_write_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("r.json");
        write_atomic(&p, "one").unwrap();
        write_atomic(&p, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
        // Readable as any file the process creates (not the temporary file's owner-only mode).
        use std::os::unix::fs::PermissionsExt;
        let plain = dir.path().join("plain");
        std::fs::write(&plain, "x").unwrap();
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&p), mode(&plain));
        std::fs::remove_file(plain).unwrap();
        assert!(write_atomic(&dir.path().join("missing/r.json"), "x").is_err());
    }
}
