//! What reading a file gives: the records ([`Ingested`]) or columns ([`IngestedColumns`]) of
//! [`Contents`], the [`Warning`]s about what a reader skipped, converted or guessed, the
//! [`IngestError`] that says why a file could not be read, and what [`Detection`] found.

use std::fmt;

use super::{ColumnMapping, Format};
use crate::model::columns::Columns;
use crate::model::Record;

/// Something a reader skipped, converted or guessed, with where in the file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// Where: `line 12`, `records[3].gpu`, or `None` for the whole file.
    pub at: Option<String>,
    /// What happened, lowercase.
    pub message: String,
}

impl Warning {
    /// A warning about one place in the file.
    pub fn at(at: impl Into<String>, message: impl Into<String>) -> Warning {
        Warning {
            at: Some(at.into()),
            message: message.into(),
        }
    }

    /// A warning about the whole file.
    pub fn file(message: impl Into<String>) -> Warning {
        Warning {
            at: None,
            message: message.into(),
        }
    }

    /// A warning about a 1-based line.
    pub fn line(line: usize, message: impl Into<String>) -> Warning {
        Warning::at(format!("line {line}"), message)
    }
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.at {
            Some(at) => write!(f, "{at}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

/// Why a file could not be read at all. Messages name the file and, where known, the line.
///
/// The parser's own error is kept as its text with its position, not as a `source`: these
/// errors are cloned into the page's file list and compared in tests, and neither
/// `serde_json::Error` nor `csv::Error` is `Clone` or `PartialEq`.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum IngestError {
    /// Zero bytes, or only whitespace.
    #[error("{file}: empty file")]
    Empty {
        /// The file name.
        file: String,
    },
    /// Binary data, not text.
    #[error("{file}: binary data at byte {offset}, not a text result file")]
    Binary {
        /// The file name.
        file: String,
        /// Where the first binary byte sits.
        offset: usize,
    },
    /// JSON that could not be parsed and held no readable part.
    #[error("{file}: invalid JSON at line {line}, column {column}: {message}")]
    Json {
        /// The file name.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What the parser said.
        message: String,
    },
    /// A CSV that could not be parsed.
    #[error("{file}: invalid CSV at line {line}: {message}")]
    Csv {
        /// The file name.
        file: String,
        /// 1-based line.
        line: usize,
        /// What went wrong.
        message: String,
    },
    /// Readable, but of a shape the detected format does not allow.
    #[error("{file}: {at}: {message}")]
    Shape {
        /// The file name.
        file: String,
        /// Where (`line 3`, `benchmarks[0]`).
        at: String,
        /// What was expected.
        message: String,
    },
    /// Text that matches no known format.
    #[error("{file}: not a recognised benchmark result file ({why})")]
    Unrecognised {
        /// The file name.
        file: String,
        /// What it looked like instead.
        why: String,
    },
}

/// What a file looks like, judged from its content.
#[derive(Clone, Debug, PartialEq)]
pub struct Detection {
    /// The format, when recognised.
    pub format: Option<Format>,
    /// Why: the evidence, or what the content looked like instead.
    pub reason: String,
}

/// The result of reading one file.
#[derive(Clone, Debug, PartialEq)]
pub struct Ingested {
    /// The detected format.
    pub format: Format,
    /// One record per benchmark point.
    pub records: Vec<Record>,
    /// Rows skipped, fields ignored, units converted, values inferred.
    pub warnings: Vec<Warning>,
    /// For tables: how each source column was mapped (empty for other formats).
    pub mapping: Vec<ColumnMapping>,
    /// A remark about the file as a whole, e.g. why it holds no records.
    pub note: Option<String>,
    /// Set by a reader that stamped every record with the file and format itself and
    /// inferred nothing, so that `finish` need not go over them again.
    pub(super) stamped: bool,
    /// When a reader that wants columns asked for it (`Some`): each record's per-request
    /// detail as columns, by record, instead of in the record (see [`Ingested::keep_requests`]).
    pub(super) requests_apart: Option<Vec<(usize, crate::model::columns::RequestArrays)>>,
}

impl Ingested {
    pub(super) fn new(format: Format) -> Ingested {
        Ingested {
            format,
            records: Vec::new(),
            warnings: Vec::new(),
            mapping: Vec::new(),
            note: None,
            stamped: false,
            requests_apart: None,
        }
    }

    /// Gives the record about to be pushed (`r`) its requests, built as columns by its
    /// reader: kept apart as columns when asked for, else rebuilt into the record (the row
    /// view).
    pub(crate) fn keep_requests(
        &mut self,
        r: &mut Record,
        requests: crate::model::columns::RequestArrays,
    ) {
        match &mut self.requests_apart {
            Some(apart) => apart.push((self.records.len(), requests)),
            None => r.requests = requests.requests(0),
        }
    }

    /// The requests kept apart, put back into their records (the row view): for a reader
    /// that asked for them but cannot use them as columns after all.
    pub(crate) fn requests_into_records(&mut self) {
        for (i, requests) in self.requests_apart.take().unwrap_or_default() {
            if let Some(r) = self.records.get_mut(i) {
                r.requests = requests.requests(0);
            }
        }
    }
}

/// The result of reading one file into columns ([`read_columnar`](super::read_columnar)).
#[derive(Clone, Debug, PartialEq)]
pub struct IngestedColumns {
    /// The detected format.
    pub format: Format,
    /// One row per benchmark point: the records [`read`](super::read) gives, as columns.
    pub columns: Columns,
    /// As [`Ingested::warnings`].
    pub warnings: Vec<Warning>,
    /// As [`Ingested::mapping`].
    pub mapping: Vec<ColumnMapping>,
    /// As [`Ingested::note`].
    pub note: Option<String>,
}

/// What [`read_columnar`](super::read_columnar) gives: columns where the format's reader appends to them, records
/// otherwise.
#[derive(Clone, Debug, PartialEq)]
pub enum Contents {
    /// Read the row way.
    Records(Ingested),
    /// Read into columns (boxed: the columns' fixed part is some 800 bytes).
    Columns(Box<IngestedColumns>),
}

impl Contents {
    /// The detected format.
    pub fn format(&self) -> Format {
        match self {
            Contents::Records(r) => r.format,
            Contents::Columns(c) => c.format,
        }
    }

    /// Rows (records).
    pub fn len(&self) -> usize {
        match self {
            Contents::Records(r) => r.records.len(),
            Contents::Columns(c) => c.columns.len(),
        }
    }

    /// Whether no record was read.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The warnings.
    pub fn warnings(&self) -> &[Warning] {
        match self {
            Contents::Records(r) => &r.warnings,
            Contents::Columns(c) => &c.warnings,
        }
    }

    /// The column mapping (tables).
    pub fn mapping(&self) -> &[ColumnMapping] {
        match self {
            Contents::Records(r) => &r.mapping,
            Contents::Columns(c) => &c.mapping,
        }
    }

    /// The remark about the file as a whole.
    pub fn note(&self) -> Option<&str> {
        match self {
            Contents::Records(r) => r.note.as_deref(),
            Contents::Columns(c) => c.note.as_deref(),
        }
    }

    /// The rows as records: what [`read`](super::read) gives for the same file.
    pub fn into_ingested(self) -> Ingested {
        match self {
            Contents::Records(r) => r,
            Contents::Columns(c) => {
                let c = *c;
                Ingested {
                    format: c.format,
                    records: c.columns.rows().collect(),
                    warnings: c.warnings,
                    mapping: c.mapping,
                    note: c.note,
                    stamped: true,
                    requests_apart: None,
                }
            }
        }
    }
}
