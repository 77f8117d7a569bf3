//! `benchlens convert FILE... [--to json|csv] [-o OUT]`: reads result files of any supported
//! format (`-` is stdin) and writes the canonical records of all of them to one output
//! (`-`, the default, is stdout). Unreadable files are reported on stderr, one line each, and
//! make the exit code non-zero; the readable ones are still converted.

use std::io::{Read, Write};
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use crate::ingest;
use crate::model::{canonical, Record};

/// The canonical output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum OutputFormat {
    /// `{"schema_version": 1, "records": [...]}`.
    Json,
    /// One row per record, canonical column names.
    Csv,
}

/// Arguments of `benchlens convert`.
#[derive(Debug, Args)]
pub struct ConvertArgs {
    /// Result files to read (`-` reads stdin).
    #[arg(required = true)]
    pub files: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "json")]
    pub to: OutputFormat,
    /// Output file (`-` is stdout).
    #[arg(short, long, default_value = "-")]
    pub output: String,
    /// Also print each file's warnings on stderr.
    #[arg(short, long)]
    pub verbose: bool,
}

/// Reads the bytes of `path` (`-` is stdin), naming the source as the user gave it.
pub(crate) fn read_input(path: &str) -> Result<(String, Vec<u8>), String> {
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("stdin: cannot read: {e}"))?;
        Ok(("stdin".to_string(), bytes))
    } else {
        std::fs::read(path)
            .map(|b| (path.to_string(), b))
            .map_err(|e| format!("{path}: cannot read: {e}"))
    }
}

/// Reads every file; returns the records of the readable ones and the number that failed.
pub(crate) fn read_all(files: &[String], verbose: bool) -> (Vec<Record>, usize) {
    let mut records = Vec::new();
    let mut failed = 0;
    for path in files {
        let result = read_input(path)
            .and_then(|(name, bytes)| ingest::read(&name, &bytes).map_err(|e| e.to_string()));
        match result {
            Ok(got) => {
                if verbose {
                    for w in &got.warnings {
                        eprintln!("{path}: {w}");
                    }
                }
                if got.records.is_empty() {
                    let why = got.note.as_deref().unwrap_or("no records");
                    eprintln!("{path}: {why}");
                }
                records.extend(got.records);
            }
            Err(message) => {
                eprintln!("benchlens: {message}");
                failed += 1;
            }
        }
    }
    (records, failed)
}

/// Runs `benchlens convert`.
pub fn run(args: &ConvertArgs) -> ExitCode {
    let (records, failed) = read_all(&args.files, args.verbose);
    let text = match args.to {
        OutputFormat::Json => canonical::to_json(&records),
        OutputFormat::Csv => canonical::to_csv(&records),
    };
    let written = if args.output == "-" {
        std::io::stdout().lock().write_all(text.as_bytes())
    } else {
        std::fs::write(&args.output, text.as_bytes())
    };
    if let Err(e) = written {
        eprintln!("benchlens: {}: cannot write: {e}", args.output);
        return ExitCode::from(2);
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
