//! Canonical JSON and CSV written straight from columns (and from records, for files read
//! the row way), streamed to any writer: byte for byte what [`canonical::to_json`] and
//! [`canonical::to_csv`] give for the same records, without holding the text or the records.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::io::{self, Write};

use super::{Columns, DimData};
use crate::model::canonical;
use crate::model::{format_number, DimKey, MetricKey, Record, SCHEMA_VERSION};

/// One input's rows, as records or as columns.
#[derive(Clone, Copy, Debug)]
pub enum Part<'a> {
    /// Records.
    Records(&'a [Record]),
    /// Columns.
    Columns(&'a Columns),
}

impl Part<'_> {
    fn len(&self) -> usize {
        match self {
            Part::Records(r) => r.len(),
            Part::Columns(c) => c.len(),
        }
    }
}

/// Writes the canonical JSON document of every part's rows, in order: the same bytes as
/// [`canonical::to_json`] of the records concatenated.
pub fn write_json<W: Write>(mut w: W, parts: &[Part<'_>]) -> io::Result<()> {
    let total: usize = parts.iter().map(Part::len).sum();
    write!(
        w,
        "{{\n  \"schema_version\": {SCHEMA_VERSION},\n  \"records\": ["
    )?;
    if total == 0 {
        w.write_all(b"]\n}\n")?;
        return w.flush();
    }
    let mut first = true;
    let mut buf = Vec::new();
    let mut one = |w: &mut W, r: &Record| -> io::Result<()> {
        w.write_all(if first { b"\n    " } else { b",\n    " })?;
        first = false;
        buf.clear();
        serde_json::to_writer_pretty(&mut buf, &canonical::record_to_json(r))?;
        // Nested one level deeper than on its own: every line after the first indented.
        for (k, line) in buf.split(|b| *b == b'\n').enumerate() {
            if k > 0 {
                w.write_all(b"\n    ")?;
            }
            w.write_all(line)?;
        }
        Ok(())
    };
    for part in parts {
        match part {
            Part::Records(records) => {
                for r in *records {
                    one(&mut w, r)?;
                }
            }
            Part::Columns(c) => {
                for r in c.rows() {
                    one(&mut w, &r)?;
                }
            }
        }
    }
    w.write_all(b"\n  ]\n}\n")?;
    w.flush()
}

/// A canonical CSV column.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
enum Column {
    Dim(DimKey),
    Metric(MetricKey),
    Inferred,
}

/// `format_number` into `buf` (cleared first), without allocating.
fn number_into(buf: &mut String, v: f64) {
    buf.clear();
    if v.is_nan() {
        buf.push_str("NaN");
    } else if v.is_infinite() {
        buf.push_str(if v > 0.0 { "inf" } else { "-inf" });
    } else if v == v.trunc() && v.abs() < 1e15 {
        let _ = write!(buf, "{}", v as i64);
    } else {
        let _ = write!(buf, "{v}");
    }
}

fn inferred_cell(map: &std::collections::BTreeMap<String, String>) -> String {
    map.iter()
        .map(|(k, v)| format!("{k}={v}"))
        .collect::<Vec<_>>()
        .join(";")
}

/// Writes the canonical CSV of every part's rows, in order: the same bytes as
/// [`canonical::to_csv`] of the records concatenated. Numeric dimension values are written
/// once per distinct value, not once a row.
pub fn write_csv<W: Write>(mut w: W, parts: &[Part<'_>]) -> io::Result<()> {
    if parts.iter().all(|p| p.len() == 0) {
        w.write_all(canonical::to_csv(&[]).as_bytes())?;
        return w.flush();
    }
    let mut dims: BTreeSet<DimKey> = BTreeSet::new();
    let mut metrics: BTreeSet<MetricKey> = BTreeSet::new();
    let mut any_inferred = false;
    for part in parts {
        match part {
            Part::Records(records) => {
                for r in *records {
                    dims.extend(r.dims().map(|(k, _)| k));
                    metrics.extend(r.metrics.keys().cloned());
                    any_inferred |= !r.inferred.is_empty();
                }
            }
            Part::Columns(c) => {
                for col in c.dims() {
                    let used = match &col.data {
                        DimData::Text(t) => !t.values().is_empty(),
                        DimData::Count(n) => !n.values().is_empty(),
                        DimData::Real(n) => !n.values().is_empty(),
                    };
                    if used {
                        dims.insert(col.key.clone());
                    }
                }
                for col in c.metrics() {
                    if col.count() > 0 {
                        metrics.insert(col.key.clone());
                    }
                }
                any_inferred |= c.any_inferred();
            }
        }
    }
    let mut columns: Vec<Column> = dims.into_iter().map(Column::Dim).collect();
    columns.extend(metrics.into_iter().map(Column::Metric));
    if any_inferred {
        columns.push(Column::Inferred);
    }
    let mut out = csv::Writer::from_writer(&mut w);
    let header: Vec<String> = columns
        .iter()
        .map(|c| match c {
            Column::Dim(k) => k.name(),
            Column::Metric(k) => k.name(),
            Column::Inferred => "inferred".into(),
        })
        .collect();
    out.write_record(&header)?;
    let mut cell = String::new();
    for part in parts {
        match part {
            Part::Records(records) => {
                for r in *records {
                    for c in &columns {
                        match c {
                            Column::Dim(k) => {
                                cell = r.dim(k).map(|v| v.to_string()).unwrap_or_default()
                            }
                            Column::Metric(k) => match r.metric(k) {
                                Some(v) => number_into(&mut cell, v),
                                None => cell.clear(),
                            },
                            Column::Inferred => cell = inferred_cell(&r.inferred),
                        }
                        out.write_field(&cell)?;
                    }
                    out.write_record(None::<&[u8]>)?;
                }
            }
            Part::Columns(c) => write_columns(&mut out, &columns, c, &mut cell)?,
        }
    }
    out.flush()?;
    drop(out);
    w.flush()
}

/// Where an output column's cells come from in one [`Columns`].
enum Source<'a> {
    /// A dimension: its distinct values written out once (code `k + 1` is entry `k`).
    Dim(&'a DimData, Vec<String>),
    Metric(&'a super::MetricColumn),
    Inferred,
    Missing,
}

fn write_columns<W: Write>(
    out: &mut csv::Writer<W>,
    columns: &[Column],
    c: &Columns,
    cell: &mut String,
) -> io::Result<()> {
    let sources: Vec<Source<'_>> = columns
        .iter()
        .map(|col| match col {
            Column::Dim(k) => match c.dim(k) {
                Some(d) => {
                    let texts = match &d.data {
                        DimData::Text(t) => t.values().iter().map(|v| v.to_string()).collect(),
                        DimData::Count(n) => n
                            .values()
                            .iter()
                            .map(|v| format_number(*v as f64))
                            .collect(),
                        DimData::Real(n) => n.values().iter().map(|v| format_number(*v)).collect(),
                    };
                    Source::Dim(&d.data, texts)
                }
                None => Source::Missing,
            },
            Column::Metric(k) => match c.metric_position(k) {
                Some(p) => Source::Metric(&c.metrics()[p]),
                None => Source::Missing,
            },
            Column::Inferred => Source::Inferred,
        })
        .collect();
    for i in 0..c.len() {
        for s in &sources {
            match s {
                Source::Dim(data, texts) => {
                    let text = (data.code(i) as usize)
                        .checked_sub(1)
                        .and_then(|k| texts.get(k))
                        .map_or("", String::as_str);
                    out.write_field(text)?;
                }
                Source::Metric(m) => {
                    match m.get(i) {
                        Some(v) => number_into(cell, v),
                        None => cell.clear(),
                    }
                    out.write_field(&*cell)?;
                }
                Source::Inferred => {
                    let text = c.inferred(i).map(inferred_cell).unwrap_or_default();
                    out.write_field(text)?;
                }
                Source::Missing => out.write_field("")?,
            }
        }
        out.write_record(None::<&[u8]>)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_written_as_format_number_writes_them() {
        let mut buf = String::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut cases = vec![
            0.0,
            -0.0,
            1e15,
            -1e15,
            1e14,
            0.1,
            1.5e300,
            f64::NAN,
            f64::INFINITY,
        ];
        cases.push(f64::NEG_INFINITY);
        for _ in 0..5_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push(f64::from_bits(x));
            cases.push((x % 100_000) as f64 / 8.0);
        }
        for v in cases {
            number_into(&mut buf, v);
            assert_eq!(buf, format_number(v), "{v:?}");
        }
    }
}
