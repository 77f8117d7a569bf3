//! The columnar fast path for CSV/TSV tables: cells appended straight into typed columns
//! ([`Columns`]) instead of one record a row. It maps columns exactly as the row reader does
//! (the same sampled rows, [`auto_mapping`], warnings for ragged and empty rows) and gives up,
//! returning `None` so that the caller reads the file the row way, on anything unusual:
//! per-GPU column groups, 4,096 columns or more, two columns feeding one field, a test-name
//! column, a cell the row reader would warn about or convert (units, `8xH100`). So a file read
//! either way gives the same records, warnings and mapping.

use super::cells::{cell_number, plain_decimal, plain_text, trim_cell};
use super::delimited::{csv_delimiter, csv_reader, next_row, sample_plain_rows, sample_rows};
use super::plain_rows::PlainRows;
use super::rows::Cells;
use super::{auto_mapping, note_scales, push_mapping, ColumnMapping, Table};
use crate::ingest::text::snake;
use crate::ingest::{Format, Ingested, IngestedColumns, Warning};
use crate::model::columns::{Columns, DimData, TextColumn};
use crate::model::{Dim, DimKey, DimKind, MetricKey};

/// Tables at least this wide are read the row way: a column costs a few allocations here,
/// which two rows of 100,000 columns do not repay.
const MAX_COLUMNS: usize = 4096;

/// Where one source column's cells go.
#[derive(Clone, Copy)]
enum Slot {
    /// Ignored (read only to tell an empty cell).
    Skip,
    /// A metric column at this position, values times the scale.
    Metric(usize, f64),
    /// A text dimension or tag column at this position.
    Text(usize),
    /// The GPU column at this position (`8xH100` sends the file the row way).
    Gpu(usize),
    /// A count dimension column.
    Count(usize),
    /// A real-valued dimension column.
    Real(usize),
}

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

/// The columns and the slot of each source column, or `None` when the mapping needs the row
/// reader.
fn plan(mapping: &[ColumnMapping]) -> Option<(Columns, Vec<Slot>)> {
    enum Target {
        Skip,
        Metric(MetricKey, f64),
        Dim(DimKey),
    }
    let mut targets = Vec::with_capacity(mapping.len());
    for m in mapping {
        if m.gpu.is_some() {
            return None;
        }
        let Some(target) = &m.target else {
            targets.push(Target::Skip);
            continue;
        };
        if let Some(key) = MetricKey::from_name(target) {
            targets.push(Target::Metric(key, m.scale));
            continue;
        }
        match DimKey::from_name(target)? {
            DimKey::Known(Dim::Label) if snake(&m.column) == "test_name" => return None,
            DimKey::Known(Dim::Source | Dim::Format) => return None,
            key => targets.push(Target::Dim(key)),
        }
    }
    let mut dims: Vec<DimKey> = vec![DimKey::Known(Dim::Source), DimKey::Known(Dim::Format)];
    let mut metrics: Vec<MetricKey> = Vec::new();
    for t in &targets {
        match t {
            Target::Skip => {}
            Target::Metric(k, _) => metrics.push(k.clone()),
            Target::Dim(k) => dims.push(k.clone()),
        }
    }
    // Two columns feeding one field: the row reader's "later one wins" is not repeated here.
    let (nd, nm) = (dims.len(), metrics.len());
    let columns = Columns::with_keys(dims, metrics);
    if columns.dims().len() != nd || columns.metrics().len() != nm {
        return None;
    }
    let slots = targets
        .iter()
        .map(|t| match t {
            Target::Skip => Some(Slot::Skip),
            Target::Metric(k, scale) => Some(Slot::Metric(columns.metric_position(k)?, *scale)),
            Target::Dim(k) => {
                let at = columns.dim_position(k)?;
                Some(match k {
                    DimKey::Known(Dim::Gpu) => Slot::Gpu(at),
                    DimKey::Tag(_) => Slot::Text(at),
                    DimKey::Known(d) => match d.kind() {
                        DimKind::Text => Slot::Text(at),
                        DimKind::Count => Slot::Count(at),
                        DimKind::Real => Slot::Real(at),
                    },
                })
            }
        })
        .collect::<Option<Vec<Slot>>>()?;
    Some((columns, slots))
}

/// Appends rows to the columns.
struct Appender<'s> {
    columns: Columns,
    slots: Vec<Slot>,
    vals: Vec<Val>,
    /// The positions of the `source` and `format` columns.
    stamp_at: (usize, usize),
    source: &'s str,
    format: &'static str,
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

fn text_column(columns: &mut Columns, at: usize) -> Option<&mut TextColumn> {
    match columns.dims_mut().get_mut(at).map(|c| &mut c.data) {
        Some(DimData::Text(c)) => Some(c),
        _ => None,
    }
}

impl Appender<'_> {
    /// Parses one row's cells; `Ok(false)` when it measured nothing.
    #[inline]
    fn parse<C: Cells + ?Sized>(&mut self, cells: &C) -> Result<bool, GiveUp> {
        self.vals.clear();
        let mut measured = false;
        for (i, slot) in self.slots.iter().enumerate() {
            let Some(cell) = cells.cell(i) else {
                self.vals.push(Val::None);
                continue;
            };
            let v = match *slot {
                Slot::Skip => Val::None,
                Slot::Metric(_, scale) => {
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
                Slot::Text(_) => Val::Text,
                Slot::Gpu(_) => {
                    // `8xH100` gives a GPU count too: the row reader's job.
                    if filled(cell)
                        .and_then(|t| t.split_once(['x', 'X']))
                        .is_some_and(|(n, _)| n.trim().parse::<u64>().is_ok())
                    {
                        return Err(GiveUp);
                    }
                    Val::Text
                }
                Slot::Count(_) => {
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
                Slot::Real(_) => match plain_decimal(cell) {
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
        for (i, (slot, v)) in self.slots.iter().zip(&self.vals).enumerate() {
            match (*slot, *v) {
                (Slot::Skip, _) => {}
                (Slot::Metric(at, _), v) => {
                    if let Some(c) = self.columns.metrics_mut().get_mut(at) {
                        c.push(match v {
                            Val::Num(x) => Some(x),
                            _ => None,
                        });
                    }
                }
                (Slot::Text(at) | Slot::Gpu(at), v) => {
                    let text = match v {
                        Val::Text => cells.cell(i).and_then(text_of),
                        _ => None,
                    };
                    if let Some(c) = text_column(&mut self.columns, at) {
                        c.push(text);
                    }
                }
                (Slot::Count(at), v) => {
                    if let Some(DimData::Count(c)) =
                        self.columns.dims_mut().get_mut(at).map(|c| &mut c.data)
                    {
                        c.push(match v {
                            Val::Count(n) => Some(n),
                            _ => None,
                        });
                    }
                }
                (Slot::Real(at), v) => {
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
        // The file and format, stamped on every row.
        let first = self.columns.is_empty();
        for (at, text) in [
            (self.stamp_at.0, self.source),
            (self.stamp_at.1, self.format),
        ] {
            if let Some(c) = text_column(&mut self.columns, at) {
                if first {
                    c.push(Some(text));
                } else {
                    c.repeat_last();
                }
            }
        }
        self.columns.finish_row();
    }

    /// One row: appended, or (measuring nothing) skipped with the row reader's warning.
    #[inline]
    fn row<C: Cells + ?Sized>(
        &mut self,
        line: usize,
        cells: &C,
        warnings: &mut Vec<Warning>,
    ) -> Result<(), GiveUp> {
        if self.parse(cells)? {
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

/// Reads a generic CSV/TSV (already decoded; `warnings` are the decoding's) into columns, or
/// `None` when it needs the row reader (see the [module](self) docs).
pub(crate) fn read_csv_columns(
    source: &str,
    text: &str,
    warnings: Vec<Warning>,
) -> Option<IngestedColumns> {
    let mut out = Ingested::new(Format::GenericCsv);
    out.warnings = warnings;
    let header_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let delimiter = csv_delimiter(header_line).unwrap_or(b',');
    let format = Format::GenericCsv.name();
    if PlainRows::applies(text) {
        let (mut rows, t, width, mut ragged) =
            sample_plain_rows(source, text, delimiter, &mut out.warnings).ok()?;
        let mut app = start(&t, text, source, format, &mut out)?;
        let mut cells: Vec<&str> = Vec::new();
        while let Some(line) = rows.next(&mut cells) {
            ragged.check(line, cells.len(), width, &mut out.warnings);
            app.row(line, cells.as_slice(), &mut out.warnings).ok()?;
        }
        ragged.finish(&mut out.warnings);
        return Some(finish(app, out));
    }
    let mut rdr = csv_reader(text, delimiter);
    let mut rec = csv::StringRecord::new();
    let (t, width, mut ragged) = sample_rows(source, &mut out.warnings, |have_header, warnings| {
        let line = next_row(&mut rdr, &mut rec, source, have_header, warnings)?;
        Ok(line.map(|line| (line, rec.clone())))
    })
    .ok()?;
    let mut app = start(&t, text, source, format, &mut out)?;
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

/// Maps the columns from the sampled rows and appends those rows.
fn start<'s>(
    t: &Table,
    text: &str,
    source: &'s str,
    format: &'static str,
    out: &mut Ingested,
) -> Option<Appender<'s>> {
    if t.headers.len() >= MAX_COLUMNS {
        return None;
    }
    let mapping = auto_mapping(t);
    let (mut columns, slots) = plan(&mapping)?;
    let estimated_rows = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
    columns.reserve(estimated_rows.min(1 << 24));
    note_scales(&mapping, out);
    let stamp_at = (
        columns.dim_position(&DimKey::Known(Dim::Source))?,
        columns.dim_position(&DimKey::Known(Dim::Format))?,
    );
    let mut app = Appender {
        columns,
        vals: Vec::with_capacity(slots.len()),
        slots,
        stamp_at,
        source,
        format,
    };
    for (line, cells) in &t.rows {
        app.row(*line, cells, &mut out.warnings).ok()?;
    }
    out.mapping = mapping;
    Some(app)
}

fn finish(app: Appender<'_>, mut out: Ingested) -> IngestedColumns {
    let mapping = std::mem::take(&mut out.mapping);
    push_mapping(mapping, &mut out);
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
