//! `benchlens convert FILE... [--to json|csv] [-o OUT]`: reads result files of any supported
//! format (`-` is stdin) and writes the canonical records of all of them to one output
//! (`-`, the default, is stdout). Unreadable files are reported on stderr, one `error:` line
//! each ([`super::error::print_error`]), and make the exit code 1; the readable ones are still
//! converted. An unwritable output exits with 2.
//!
//! Large files are memory-mapped rather than copied ([`super::input`], which says what a file
//! changing under the map does).
//!
//! Everything read (records, or columns from [`ingest::read_columnar`]) goes through the one
//! canonical writer ([`canonical::write_json`], [`canonical::write_csv`]), streamed through a
//! buffer, without the whole text or a document-sized value tree in memory.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use super::error::{folder_error_text, print_error, CliError};
use super::input::{read_file, read_input};
use crate::ingest::{self, Contents, Ingested, Warning};
use crate::model::canonical::{self, Part};
use crate::model::Record;

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
    /// Print every warning of each file on stderr (without it, the first
    /// [`QUIET_WARNINGS`] of each file and how many more there are).
    #[arg(short, long)]
    pub verbose: bool,
}

/// Warnings of one file `convert` prints without `--verbose`.
pub const QUIET_WARNINGS: usize = 10;

/// Prints a file's warnings on stderr, each naming the file: all of them with `verbose`, else
/// the first [`QUIET_WARNINGS`] and a line saying how many more there are.
fn print_warnings<'a>(
    path: &str,
    warnings: impl ExactSizeIterator<Item = &'a Warning>,
    verbose: bool,
) {
    let total = warnings.len();
    let shown = if verbose {
        total
    } else {
        total.min(QUIET_WARNINGS)
    };
    for w in warnings.take(shown) {
        eprintln!("{path}: warning: {w}");
    }
    if shown < total {
        eprintln!(
            "{path}: {} more warning(s) (--verbose prints them all)",
            total - shown
        );
    }
}

/// Files at least this large are first offered to the streaming JSON reader.
const STREAM_MIN_BYTES: u64 = 8 << 20;

/// Reads and ingests one result file, `file`, named `shown` in records and messages (`-` is
/// stdin; a name that is not UTF-8 is shown lossily but opened as it is). A large single JSON
/// document is parsed from the file as it is read ([`ingest::read_json_stream`]), so its text
/// is never held beside the records; anything that reader does not take is read whole as
/// before.
pub(crate) fn ingest_file(file: &Path, shown: &str) -> Result<Ingested, CliError> {
    if let Some(got) = ingest_streamed(file, shown)? {
        return Ok(got);
    }
    let (name, bytes) = if shown == "-" {
        read_input(shown)?
    } else {
        read_file(file, shown)?
    };
    let got = ingest::read(&name, &bytes)?;
    bytes.check_unchanged(shown)?;
    Ok(got)
}

/// The streaming JSON reader's result for a file of at least [`STREAM_MIN_BYTES`], `None`
/// for stdin, smaller files and documents that reader does not take.
fn ingest_streamed(file: &Path, shown: &str) -> Result<Option<Ingested>, CliError> {
    let Some(input) = open_streamed(file, shown)? else {
        return Ok(None);
    };
    ingest::read_json_stream(shown, input).map_err(|source| CliError::Read {
        path: shown.into(),
        source,
    })
}

/// Opens `path` for the streaming JSON reader: `None` for stdin and files smaller than
/// [`STREAM_MIN_BYTES`].
fn open_streamed(
    path: &Path,
    shown: &str,
) -> Result<Option<std::io::BufReader<std::fs::File>>, CliError> {
    if shown == "-" {
        return Ok(None);
    }
    let read_error = |source| CliError::Read {
        path: shown.into(),
        source,
    };
    let mut file = std::fs::File::open(path).map_err(read_error)?;
    let len = file.metadata().map_err(read_error)?.len();
    if len < STREAM_MIN_BYTES || !starts_an_object(&mut file).map_err(read_error)? {
        return Ok(None);
    }
    Ok(Some(std::io::BufReader::with_capacity(1 << 20, file)))
}

/// Whether the file's first 4 KiB start a JSON object (`{` after a byte-order mark and
/// whitespace, or only whitespace so far), read from the start and left there: a large CSV
/// is then not read a mebibyte at a time by two readers that would both decline it.
fn starts_an_object(file: &mut std::fs::File) -> std::io::Result<bool> {
    use std::io::{Read, Seek};
    let mut head = [0u8; 4096];
    let mut got = 0;
    while got < head.len() {
        match file.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    file.rewind()?;
    Ok(ingest::starts_an_object(&head[..got]))
}

/// Reads and ingests one result file (`-` is stdin), into columns where its reader can. A large
/// single JSON document goes to the streaming reader first, as in [`ingest_file`], a serving
/// run's per-request detail then read into columns ([`ingest::read_json_stream_columns`]).
pub(crate) fn ingest_contents(path: &str) -> Result<Contents, CliError> {
    if let Some(input) = open_streamed(Path::new(path), path)? {
        let got =
            ingest::read_json_stream_columns(path, input).map_err(|source| CliError::Read {
                path: path.into(),
                source,
            })?;
        if let Some(got) = got {
            return Ok(got);
        }
    }
    if let Some(got) = ingest_streamed(Path::new(path), path)? {
        return Ok(Contents::Records(got));
    }
    let (name, bytes) = read_input(path)?;
    let got = ingest::read_columnar(&name, &bytes)?;
    bytes.check_unchanged(path)?;
    Ok(got)
}

/// Reads every file, into columns where their readers can; returns the readable ones' rows
/// and the number that failed.
fn read_all_contents(files: &[String], verbose: bool) -> (Vec<Contents>, usize) {
    let mut out = Vec::new();
    let mut failed = 0;
    for path in files {
        match ingest_contents(path) {
            Ok(got) => {
                print_warnings(path, got.warnings().iter(), verbose);
                if got.is_empty() {
                    let why = got.note().unwrap_or("no records");
                    eprintln!("{path}: {why}");
                }
                out.push(got);
            }
            Err(e) => {
                print_error(&e);
                failed += 1;
            }
        }
    }
    (out, failed)
}

/// Reads every file; returns the records of the readable ones and the number that failed.
/// `found_in_folder`: the files were found in a folder (`compare --trend`), not named, so a
/// file that is no result is named without quoting it ([`folder_error_text`]).
pub(crate) fn read_all<P: AsRef<Path>>(
    files: &[P],
    verbose: bool,
    found_in_folder: bool,
) -> (Vec<Record>, usize) {
    let mut records = Vec::new();
    let mut failed = 0;
    for file in files {
        let file = file.as_ref();
        let path = file.display().to_string();
        let path = path.as_str();
        match ingest_file(file, path) {
            Ok(got) => {
                if verbose {
                    print_warnings(path, got.warnings.iter(), true);
                }
                if got.records.is_empty() {
                    let why = got.note.as_deref().unwrap_or("no records");
                    eprintln!("{path}: {why}");
                }
                records.extend(got.records);
            }
            Err(e) if found_in_folder => {
                eprintln!("error: {}", folder_error_text(&e));
                failed += 1;
            }
            Err(e) => {
                print_error(&e);
                failed += 1;
            }
        }
    }
    (records, failed)
}

/// Runs `benchlens convert`: `Ok(1)` when some input could not be read (each printed), an
/// error when the output could not be written.
pub fn run(args: &ConvertArgs) -> Result<ExitCode, CliError> {
    let (contents, failed) = read_all_contents(&args.files, args.verbose);
    let written = if args.output == "-" {
        write_contents(
            contents,
            args.to,
            BufWriter::with_capacity(1 << 16, std::io::stdout().lock()),
        )
    } else {
        std::fs::File::create(&args.output)
            .and_then(|f| write_contents(contents, args.to, BufWriter::with_capacity(1 << 16, f)))
    };
    written.map_err(|source| CliError::Write {
        path: args.output.clone(),
        source,
    })?;
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// Writes the canonical text of `contents` to `out` through the one canonical writer
/// ([`canonical::write_json`], [`canonical::write_csv`]): records and columns alike, a run's
/// requests one at a time, never the whole text or a `Value` tree of them.
fn write_contents(
    contents: Vec<Contents>,
    to: OutputFormat,
    mut out: impl Write,
) -> std::io::Result<()> {
    let parts: Vec<Part<'_>> = contents
        .iter()
        .map(|c| match c {
            Contents::Records(r) => Part::Records(&r.records),
            Contents::Columns(c) => Part::Columns(&c.columns),
        })
        .collect();
    match to {
        OutputFormat::Json => canonical::write_json(&mut out, &parts)?,
        OutputFormat::Csv => canonical::write_csv(&mut out, &parts)?,
    }
    out.flush()
}
