//! The columnar fast path for CSV/TSV tables: cells appended straight into typed columns
//! ([`Columns`]) instead of one record a row. It maps columns exactly as the row reader does
//! (the same sampled rows, [`auto_mapping`], warnings for ragged and empty rows) and gives up,
//! returning `None` so that the caller reads the file the row way, on anything unusual:
//! per-GPU column groups, 4,096 columns or more, two columns feeding one field, a test-name
//! column, a cell the row reader would warn about or convert (units, `8xH100`). So a file read
//! either way gives the same records, warnings and mapping.
//!
//! Canonical CSV (benchlens's own column names, as `convert --to csv` writes them) takes the same
//! path under the canonical reader's rules ([`Rules::Canonical`]): each column is the field it
//! names, cells are trimmed and kept as written (no units, no placeholders), a row measuring
//! nothing is kept, and `inferred` cells, ragged rows or a cell the canonical reader would warn
//! about send the file to that reader, so either way gives the same records and warnings.
//!
//! Text without quotes, past the sampled rows, is read a row at a time in one pass over its
//! bytes ([`FastRows`]: cells split and read together, a dimension cell seen before appended by
//! its dictionary code), falling back to the general split-then-read way for any row that pass
//! does not take whole; the general way sees every byte the fast one skips, so both together
//! tell a text with a quote (then split by the `csv` crate) without a pass of their own.

use super::cells::{
    cell_number, decimal_prefix, gpu_and_count, plain_decimal, plain_text, trim_cell,
};
use super::delimited::{
    csv_delimiter, csv_reader, next_row, sample_plain_rows, sample_rows, SAMPLE_ROWS,
};
use super::rows::Cells;
use super::text_tables::{first_table_rows, split_md_cells};
use super::{auto_mapping, note_mapping, push_mapping, Table};
use crate::ingest::{Format, Ingested, IngestedColumns, Warning};
use crate::model::canonical::parse_number_text;
use crate::model::columns::{Columns, DimData, TextColumn};
use crate::model::{parse_number, Dim, DimKey};

/// Tables at least this wide are read the row way: a column costs a few allocations here,
/// which two rows of 100,000 columns do not repay.
const MAX_COLUMNS: usize = 4096;

/// One parsed cell, held until the row is known to measure something (text is read again
/// from the cell when the row is appended).
#[derive(Clone, Copy)]
enum Val {
    None,
    Num(f64),
    Count(u64),
    Text,
}

/// The cell without surrounding space, or `None` when it holds no value (empty, `-`, `n/a`,
/// `none`), as the row reader decides.
#[inline]
fn filled(cell: &str) -> Option<&str> {
    let t = trim_cell(cell);
    let empty = t.len() <= 4
        && (t.is_empty()
            || t == "-"
            || t.eq_ignore_ascii_case("n/a")
            || t.eq_ignore_ascii_case("none"));
    (!empty).then_some(t)
}

/// The largest whole number a count dimension takes (2^53).
const MAX_COUNT: f64 = 9.007_199_254_740_992e15;

/// Appends rows to the columns.
struct Appender<'s> {
    columns: Columns,
    placements: Vec<Placement>,
    vals: Vec<Val>,
    /// The positions of the `source` and `format` columns.
    stamp_at: (usize, usize),
    /// Rows ended without the file and format yet ([`Appender::end_row`]).
    unstamped: usize,
    source: &'s str,
    format: &'static str,
    rules: Rules,
    /// The last GPU cell found to name no GPU count: a column repeats its few GPUs, so each
    /// run of one is looked at once.
    gpu_plain: String,
}

/// The row reader would do something this path does not: warn about a cell or convert it.
struct GiveUp;

/// A text cell as the row reader keeps it.
#[inline]
fn text_of(cell: &str) -> Option<&str> {
    if plain_text(cell) {
        Some(cell)
    } else {
        filled(cell)
    }
}

/// `8xH100`, `H100 x 8`: a GPU cell that gives a GPU count too (the row reader's job).
#[inline]
fn gpu_with_count(cell: &str) -> bool {
    filled(cell).and_then(gpu_and_count).is_some()
}

fn text_column(columns: &mut Columns, at: usize) -> Option<&mut TextColumn> {
    match columns.dims_mut().get_mut(at).map(|c| &mut c.data) {
        Some(DimData::Text(c)) => Some(c),
        _ => None,
    }
}

/// One cell read as `model::canonical::from_csv` reads it: trimmed, empty for no value, numbers
/// as [`parse_number_text`] (metrics) and [`parse_number`] (dimensions) read them; `Err` where
/// that reader would warn (a cell that is not a number, a count that is not whole) or read
/// what this path does not (an `inferred` cell).
#[inline]
fn canonical_cell(placement: Placement, cell: &str) -> Result<Val, GiveUp> {
    if let (Placement::Metric(..) | Placement::Real(_), Some(v)) = (placement, plain_decimal(cell))
    {
        return Ok(Val::Num(v));
    }
    let t = cell.trim();
    if t.is_empty() {
        return Ok(Val::None);
    }
    Ok(match placement {
        Placement::Skip => Val::None,
        Placement::Refuse => return Err(GiveUp),
        Placement::Metric(..) => Val::Num(parse_number_text(t).ok_or(GiveUp)?),
        Placement::Text(_) | Placement::Gpu(_) => Val::Text,
        Placement::Real(_) => Val::Num(parse_number(t).ok_or(GiveUp)?),
        Placement::Count(_) => {
            let v = parse_number(t).ok_or(GiveUp)?;
            if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= MAX_COUNT) {
                return Err(GiveUp);
            }
            Val::Count(v as u64)
        }
    })
}

impl Appender<'_> {
    /// Parses one row's cells; `Ok(false)` when it measured nothing.
    #[inline]
    fn parse<C: Cells + ?Sized>(&mut self, cells: &C) -> Result<bool, GiveUp> {
        self.vals.clear();
        let mut measured = false;
        for (i, placement) in self.placements.iter().enumerate() {
            let Some(cell) = cells.cell(i) else {
                self.vals.push(Val::None);
                continue;
            };
            if self.rules == Rules::Canonical {
                let v = canonical_cell(*placement, cell)?;
                measured |= matches!((placement, v), (Placement::Metric(..), Val::Num(_)));
                self.vals.push(v);
                continue;
            }
            let v = match *placement {
                Placement::Skip | Placement::Refuse => Val::None,
                Placement::Metric(_, scale) => {
                    let v = match plain_decimal(cell) {
                        Some(v) => Some(v),
                        None => match filled(cell) {
                            None => None,
                            Some(t) => Some(t.parse::<f64>().map_err(|_| GiveUp)?),
                        },
                    };
                    match v {
                        Some(v) => {
                            measured = true;
                            Val::Num(v * scale)
                        }
                        None => Val::None,
                    }
                }
                Placement::Text(_) => Val::Text,
                Placement::Gpu(_) => {
                    if cell != self.gpu_plain {
                        if gpu_with_count(cell) {
                            return Err(GiveUp);
                        }
                        self.gpu_plain.clear();
                        self.gpu_plain.push_str(cell);
                    }
                    Val::Text
                }
                Placement::Count(_) => {
                    // A plain decimal reads as `cell_number` reads it, with nothing to trim.
                    let v = match plain_decimal(cell) {
                        Some(v) => Some(v),
                        None => match filled(cell) {
                            None => None,
                            Some(t) => Some(cell_number(t).ok_or(GiveUp)?.0),
                        },
                    };
                    match v {
                        None => Val::None,
                        Some(v) => {
                            if !(v.is_finite() && v >= 0.0 && v.fract() == 0.0 && v <= MAX_COUNT) {
                                return Err(GiveUp);
                            }
                            Val::Count(v as u64)
                        }
                    }
                }
                Placement::Real(_) => match plain_decimal(cell) {
                    Some(v) => Val::Num(v),
                    None => match filled(cell) {
                        None => Val::None,
                        Some(t) => Val::Num(cell_number(t).ok_or(GiveUp)?.0),
                    },
                },
            };
            self.vals.push(v);
        }
        Ok(measured)
    }

    /// Appends the row [`parse`](Appender::parse) read from `cells`.
    #[inline]
    fn commit<C: Cells + ?Sized>(&mut self, cells: &C) {
        for (i, (placement, v)) in self.placements.iter().zip(&self.vals).enumerate() {
            match (*placement, *v) {
                (Placement::Skip | Placement::Refuse, _) => {}
                (Placement::Metric(at, _), v) => {
                    if let Some(c) = self.columns.metrics_mut().get_mut(at) {
                        c.push(match v {
                            Val::Num(x) => Some(x),
                            _ => None,
                        });
                    }
                }
                (Placement::Text(at) | Placement::Gpu(at), v) => {
                    let text = match (v, self.rules) {
                        (Val::Text, Rules::Table) => cells.cell(i).and_then(text_of),
                        (Val::Text, Rules::Canonical) => cells.cell(i).map(str::trim),
                        _ => None,
                    };
                    if let Some(c) = text_column(&mut self.columns, at) {
                        c.push(text);
                    }
                }
                (Placement::Count(at), v) => {
                    if let Some(DimData::Count(c)) =
                        self.columns.dims_mut().get_mut(at).map(|c| &mut c.data)
                    {
                        c.push(match v {
                            Val::Count(n) => Some(n),
                            _ => None,
                        });
                    }
                }
                (Placement::Real(at), v) => {
                    if let Some(DimData::Real(c)) =
                        self.columns.dims_mut().get_mut(at).map(|c| &mut c.data)
                    {
                        c.push(match v {
                            Val::Num(x) => Some(x),
                            _ => None,
                        });
                    }
                }
            }
        }
        self.end_row();
    }

    /// Ends the row being appended. Its file and format, the same on every row, are
    /// stamped on the rows all at once when they are done ([`stamp_rows`](Appender::stamp_rows)),
    /// not a row at a time.
    #[inline]
    fn end_row(&mut self) {
        self.unstamped += 1;
        self.columns.finish_row();
    }

    /// Stamps the file and format on the rows ended since the last call.
    fn stamp_rows(&mut self) {
        let n = std::mem::take(&mut self.unstamped);
        for (at, text) in [
            (self.stamp_at.0, self.source),
            (self.stamp_at.1, self.format),
        ] {
            if let Some(c) = text_column(&mut self.columns, at) {
                c.push_repeated(Some(text), n);
            }
        }
    }

    /// One row: appended, or (measuring nothing) skipped with the row reader's warning.
    #[inline]
    fn row<C: Cells + ?Sized>(
        &mut self,
        line: usize,
        cells: &C,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), GiveUp> {
        if self.parse(cells)? || self.rules == Rules::Canonical {
            self.commit(cells);
        } else {
            let at = if line > 0 {
                format!("line {line}")
            } else {
                String::new()
            };
            warnings.push(Warning::at(at, "no measured value, row skipped"));
        }
        Ok(())
    }
}

/// What [`read_plain`] came to.
enum Plain {
    /// The columns.
    Read(Box<IngestedColumns>),
    /// The file needs the row reader.
    GiveUp,
    /// The text holds a quote: it is for the `csv` crate to split.
    Quoted,
}

/// Reads text without any quote, split by hand ([`PlainRows`](super::plain_rows::PlainRows);
/// most rows by [`FastRows`]). Whether the text holds a quote is found on the way (every byte read is looked at, the
/// rest of the text when the read stops early), not by a pass of its own.
fn read_plain(
    source: &str,
    text: &str,
    newlines: usize,
    delimiter: u8,
    rules: Rules,
    mut out: Ingested,
) -> Plain {
    let quoted = |t: &str| memchr::memchr(b'"', t.as_bytes()).is_some();
    let stop = || {
        if quoted(text) {
            Plain::Quoted
        } else {
            Plain::GiveUp
        }
    };
    let Ok((mut rows, t, width, mut ragged)) =
        sample_plain_rows(source, text, delimiter, &mut out.warnings)
    else {
        return stop();
    };
    if quoted(text.get(..text.len() - rows.rest.len()).unwrap_or(text)) {
        return Plain::Quoted;
    }
    let Some(mut app) = start(&t, newlines, source, rules, &mut out) else {
        return stop();
    };
    let mut fast =
        (width == app.placements.len()).then(|| FastRows::new(&app.placements, delimiter));
    let mut cells: Vec<&str> = Vec::new();
    loop {
        // A row the fast reader takes (never one with a quote) is appended as the general
        // one would append it, with no warning; anything else goes the general way.
        if let Some(f) = fast.as_mut() {
            rows.skip_empty_lines();
            if let Some(used) = f.row(&mut app, rows.rest) {
                rows.advance(used);
                continue;
            }
        }
        let before = rows.rest;
        let Some(line) = rows.next(&mut cells) else {
            break;
        };
        if quoted(
            before
                .get(..before.len() - rows.rest.len())
                .unwrap_or(before),
        ) {
            return Plain::Quoted;
        }
        ragged.check(line, cells.len(), width, &mut out.warnings);
        if app.row(line, cells.as_slice(), &mut out.warnings).is_err() {
            return stop();
        }
    }
    ragged.finish(&mut out.warnings);
    Plain::Read(Box::new(finish(app, out)))
}

/// Reads a generic CSV/TSV (`format` [`Format::GenericCsv`]) or benchlens's canonical CSV
/// ([`Format::CanonicalCsv`]), already decoded (`warnings` are the decoding's), into columns, or
/// `None` when it needs the row reader (see the [module](self) docs). `newlines` is the
/// text's count of `\n` bytes when detection made it (counted here otherwise): the columns
/// make room for that many rows up front.
pub(crate) fn read_csv_columns(
    source: &str,
    format: Format,
    text: &str,
    newlines: Option<usize>,
    warnings: Vec<Warning>,
) -> Option<IngestedColumns> {
    let rules = match format {
        Format::GenericCsv => Rules::Table,
        Format::CanonicalCsv => Rules::Canonical,
        _ => return None,
    };
    let newlines = newlines.unwrap_or_else(|| memchr::memchr_iter(b'\n', text.as_bytes()).count());
    let mut out = Ingested::new(format);
    out.warnings = warnings.clone();
    let header_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let delimiter = csv_delimiter(header_line).unwrap_or(b',');
    let read = match read_plain(source, text, newlines, delimiter, rules, out) {
        Plain::Read(c) => Some(*c),
        Plain::GiveUp => None,
        Plain::Quoted => {
            let mut out = Ingested::new(format);
            out.warnings = warnings.clone();
            read_quoted(source, text, newlines, delimiter, rules, out)
        }
    }?;
    // The canonical reader's own warnings (unknown columns, said by `start`) are the only
    // ones its rules allow: anything else this path noticed (a ragged row, say) is for that
    // reader to word.
    if rules == Rules::Canonical {
        let unknown = read.mapping.iter().filter(|m| m.target.is_none()).count();
        if read.warnings.len() != warnings.len() + unknown || read.columns.is_empty() {
            return None;
        }
        return Some(IngestedColumns {
            mapping: Vec::new(),
            ..read
        });
    }
    Some(read)
}

/// Reads the one markdown table of `text` (`format` [`Format::MarkdownTable`]; `head` is it as
/// [`markdown_headers`](super::text_tables::markdown_headers) gives it) into columns, its rows
/// split and appended one at a time, or `None` when it needs the row reader: context from
/// headings or a section, a row whose cell count differs from the header's, or anything the
/// CSV path also gives up on (see the [module](self) docs). The columns are mapped from the
/// first [`SAMPLE_ROWS`] rows, as the row reader maps them. `warnings` are the decoding's.
pub(crate) fn read_markdown_columns(
    source: &str,
    format: Format,
    head: &Table,
    text: &str,
    warnings: Vec<Warning>,
) -> Option<IngestedColumns> {
    if !head.context.is_empty() || head.section.is_some() {
        return None;
    }
    let width = head.headers.len();
    let mut rows = first_table_rows(text);
    let mut t = Table {
        headers: head.headers.clone(),
        ..Table::default()
    };
    // One row's cells, borrowed from its line; the vector kept from row to row.
    let mut cells: Vec<&str> = Vec::with_capacity(width);
    for (line, row) in rows.by_ref().take(SAMPLE_ROWS) {
        split_md_cells(row, &mut cells);
        if cells.len() != width {
            return None;
        }
        t.rows
            .push((line, csv::StringRecord::from(cells.as_slice())));
    }
    let newlines = memchr::memchr_iter(b'\n', text.as_bytes()).count();
    let mut out = Ingested::new(format);
    out.warnings = warnings;
    let mut app = start(&t, newlines, source, Rules::Table, &mut out)?;
    for (line, row) in rows {
        split_md_cells(row, &mut cells);
        if cells.len() != width {
            return None;
        }
        app.row(line, cells.as_slice(), &mut out.warnings).ok()?;
    }
    Some(finish(app, out))
}

/// Reads text with quotes, split by the `csv` crate.
fn read_quoted(
    source: &str,
    text: &str,
    newlines: usize,
    delimiter: u8,
    rules: Rules,
    mut out: Ingested,
) -> Option<IngestedColumns> {
    let mut rdr = csv_reader(text, delimiter);
    let mut rec = csv::StringRecord::new();
    let (t, width, mut ragged) = sample_rows(source, &mut out.warnings, |have_header, warnings| {
        let line = next_row(&mut rdr, &mut rec, source, have_header, warnings)?;
        Ok(line.map(|line| (line, rec.clone())))
    })
    .ok()?;
    let mut app = start(&t, newlines, source, rules, &mut out)?;
    loop {
        match next_row(&mut rdr, &mut rec, source, true, &mut out.warnings) {
            Ok(Some(line)) => {
                ragged.check(line, rec.len(), width, &mut out.warnings);
                app.row(line, &rec, &mut out.warnings).ok()?;
            }
            Ok(None) => break,
            Err(_) => return None,
        }
    }
    ragged.finish(&mut out.warnings);
    Some(finish(app, out))
}

/// Maps the columns from the sampled rows and appends those rows, with room for a row a line
/// (`newlines` of them, and one more).
fn start<'s>(
    t: &Table,
    newlines: usize,
    source: &'s str,
    rules: Rules,
    out: &mut Ingested,
) -> Option<Appender<'s>> {
    if t.headers.len() >= MAX_COLUMNS {
        return None;
    }
    let mapping = match rules {
        Rules::Table => auto_mapping(t),
        Rules::Canonical => canonical_mapping(t, &mut out.warnings),
    };
    let (mut columns, placements) = plan(&mapping, rules)?;
    columns.reserve(newlines.saturating_add(1).min(1 << 24));
    note_mapping(&mapping, out);
    let stamp_at = (
        columns.dim_position(&DimKey::Known(Dim::Source))?,
        columns.dim_position(&DimKey::Known(Dim::Format))?,
    );
    let mut app = Appender {
        columns,
        vals: Vec::with_capacity(placements.len()),
        placements,
        stamp_at,
        unstamped: 0,
        source,
        format: out.format.name(),
        rules,
        gpu_plain: String::new(),
    };
    for (line, cells) in &t.rows {
        app.row(*line, cells, &mut out.warnings).ok()?;
    }
    out.mapping = mapping;
    Some(app)
}

fn finish(mut app: Appender<'_>, mut out: Ingested) -> IngestedColumns {
    let mapping = std::mem::take(&mut out.mapping);
    push_mapping(mapping, &mut out);
    app.stamp_rows();
    let mut columns = app.columns;
    columns.finish_rows_without_requests();
    let note = if columns.is_empty() {
        Some("no records: no row of the table held a measured value".to_string())
    } else {
        None
    };
    IngestedColumns {
        format: out.format,
        columns,
        warnings: out.warnings,
        mapping: out.mapping,
        note,
    }
}

mod fast;
mod plan;
use fast::FastRows;
pub(crate) use plan::Rules;
use plan::{canonical_mapping, plan, Placement};
