//! The command line's errors ([`CliError`]) and the one way every subcommand prints an error
//! ([`print_error`]): `error: ` then the error and each of its sources, joined by `: ` on one
//! line, as anyhow's `{:#}` prints a chain. One line per error keeps several unreadable files of
//! one `convert` apart and lets scripts grep for `^error: `.

use std::error::Error;
use std::process::ExitCode;

use crate::analysis::AnalysisError;
use crate::ingest::IngestError;

/// Why `convert`, `inspect` or `compare` could not do (all of) what was asked.
#[derive(Debug, thiserror::Error)]
pub enum CliError {
    /// A result file (or stdin) could not be read.
    #[error("{path}: cannot read")]
    Read {
        /// The file as the user named it (`stdin` for `-`).
        path: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A folder of results (`compare --trend DIR`, `site DIR`) could not be listed: a usage
    /// error (exit 2), so that `compare --trend`'s exit 1 always means a regression.
    #[error("{path}: cannot list the folder")]
    ReadDir {
        /// The folder as the user named it (or a subfolder of it).
        path: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// A result file was read but not understood (the error names the file and line).
    #[error(transparent)]
    Ingest(#[from] IngestError),
    /// The output file could not be written.
    #[error("{path}: cannot write")]
    Write {
        /// The output file.
        path: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// `--by` or `--ignore` names no dimension.
    #[error(
        "unknown dimension {name:?}; use a canonical name such as gpu, engine, model, batch_size or tag.<key>"
    )]
    UnknownDimension {
        /// The name given.
        name: String,
    },
    /// `--metric` names no metric.
    #[error(
        "unknown metric {name:?}; use a canonical name such as output_throughput, p99_ttft_ms or extra.throughput"
    )]
    UnknownMetric {
        /// The name given.
        name: String,
    },
    /// Flags that do not go together.
    #[error("{0}")]
    Usage(&'static str),
    /// A results folder holds no result file.
    #[error("{dir}: no result files (.json, .jsonl, .csv, .tsv, .txt) in this folder or below")]
    NoResultFiles {
        /// The folder as given.
        dir: String,
    },
    /// A `--price` that is not `GPU=number`.
    #[error("--price: {0}")]
    BadPrice(#[from] crate::analysis::economics::BadAssumption),
    /// The files hold no metric at all.
    #[error("the files have no metrics to compare")]
    NoMetrics,
    /// No dimension takes two values, so there is no default `--by`.
    #[error("no dimension takes two values in these files; nothing to compare (give --by DIM)")]
    NoComparedDimension,
    /// The compared dimension takes fewer than two values.
    #[error("{dim} takes fewer than two values in these files; nothing to compare")]
    FewerThanTwoValues {
        /// The dimension's canonical name.
        dim: String,
    },
    /// Some input files could not be read (each already printed as it failed).
    #[error("{count} of the files could not be read")]
    UnreadableInputs {
        /// How many.
        count: usize,
    },
    /// `site` could not write the site.
    #[error(transparent)]
    Site(#[from] SiteError),
    /// The comparison itself refused the records (e.g. a value that no record has).
    #[error(transparent)]
    Analysis(#[from] AnalysisError),
}

impl CliError {
    /// The exit code this error ends the process with: 1 when input files could not be read
    /// by `convert`/`inspect`, 2 otherwise (bad arguments, a folder that cannot be listed,
    /// unwritable output, nothing to compare), as documented per subcommand.
    pub fn exit_code(&self) -> ExitCode {
        match self {
            CliError::Read { .. } | CliError::Ingest(_) => ExitCode::FAILURE,
            _ => ExitCode::from(2),
        }
    }
}

/// The one-line form of an error and its sources: `top: cause: deeper cause`.
pub fn chain_text(error: &(dyn Error + 'static)) -> String {
    std::iter::successors(Some(error), |e| (*e).source())
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(": ")
}

/// [`chain_text`] for a file found in a folder rather than named by the user (`site`,
/// `compare --trend`): what the file's first line reads is left out, so a stray file (a
/// password file, a key) is never echoed into a log.
pub fn folder_error_text(error: &CliError) -> String {
    match error {
        CliError::Ingest(IngestError::Unrecognised { file, .. }) => {
            format!("{file}: not a recognised benchmark result file (its content is not shown)")
        }
        other => chain_text(other),
    }
}

/// Prints `error: ` and the error's chain ([`chain_text`]) on stderr.
pub fn print_error(error: &(dyn Error + 'static)) {
    eprintln!("error: {}", chain_text(error));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_is_one_line_with_every_source() {
        let e = CliError::Read {
            path: "x.json".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        };
        assert_eq!(chain_text(&e), "x.json: cannot read: no such file");
        let dir = CliError::ReadDir {
            path: "results".into(),
            source: std::io::Error::new(std::io::ErrorKind::NotFound, "no such file"),
        };
        assert_eq!(
            chain_text(&dir),
            "results: cannot list the folder: no such file"
        );
        assert_eq!(dir.exit_code(), ExitCode::from(2));
        // anyhow's alternate form, which `run` and `mock` print, reads the same.
        let a = anyhow::Error::from(e);
        assert_eq!(chain_text(a.as_ref()), format!("{a:#}"));
        assert_eq!(
            CliError::UnknownDimension {
                name: "gpux".into()
            }
            .exit_code(),
            ExitCode::from(2)
        );
    }
}

/// Why a site could not be written.
#[derive(Debug, thiserror::Error)]
pub enum SiteError {
    /// No built explorer was found.
    #[error("no built explorer (a folder with index.html) at {tried}; run `make build` or pass --explorer DIST")]
    NoExplorer {
        /// The places looked at.
        tried: String,
    },
    /// OUT already holds files.
    #[error("{0}: the output folder is not empty; remove it or choose another")]
    OutputNotEmpty(String),
    /// A file could not be copied or written.
    #[error("{path}: cannot write")]
    Write {
        /// The file.
        path: String,
        /// The system's reason.
        source: std::io::Error,
    },
    /// No file under DIR could be read as results.
    #[error("{0}: no readable result files")]
    NoResults(String),
}
