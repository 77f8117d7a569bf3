//! Canonical CSV read back (written by [`super::write_csv`]): one row per record, a column per
//! dimension and metric present (canonical names, sorted), `inferred` last; described in the
//! parent module's doc.

use super::super::dim::{DimKey, DimValue};
use super::super::metric::MetricKey;
use super::super::record::Record;
use super::{parse_number_text, CanonicalError, Decoded};

/// A canonical CSV column: the writer's and the reader's.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Column {
    Dim(DimKey),
    Metric(MetricKey),
    Inferred,
}

impl Column {
    /// The column a header name reads into, if it is canonical.
    fn from_name(h: &str) -> Option<Column> {
        if h == "inferred" {
            Some(Column::Inferred)
        } else if let Some(k) = DimKey::from_name(h) {
            Some(Column::Dim(k))
        } else {
            MetricKey::from_name(h).map(Column::Metric)
        }
    }

    /// Its header name.
    pub(super) fn name(&self) -> String {
        match self {
            Column::Dim(k) => k.name(),
            Column::Metric(k) => k.name(),
            Column::Inferred => "inferred".into(),
        }
    }

    /// Reads one cell of this column into `r`: trimmed, empty for no value, numbers as
    /// [`parse_number_text`] reads them, `inferred` as `key=how` pairs joined by `;`. `Err`
    /// says why the cell was not used (the caller adds the line).
    pub(super) fn read_cell(&self, cell: &str, r: &mut Record) -> Result<(), String> {
        let cell = cell.trim();
        if cell.is_empty() {
            return Ok(());
        }
        match self {
            Column::Dim(key) => r
                .set_dim(key, Some(DimValue::Text(cell.to_string())))
                .map_err(|e| format!("{e}, ignored")),
            Column::Metric(key) => match parse_number_text(cell) {
                Some(v) => {
                    r.set_metric(key.clone(), v);
                    Ok(())
                }
                None => Err(format!("{}: {cell:?} is not a number, ignored", key.name())),
            },
            Column::Inferred => {
                for pair in cell.split(';').filter(|p| !p.is_empty()) {
                    let (k, v) = pair.split_once('=').unwrap_or((pair, "unknown"));
                    r.inferred.insert(k.to_string(), v.to_string());
                }
                Ok(())
            }
        }
    }
}

/// Whether a CSV header row is canonical: every column is a canonical name and at least one
/// is a metric.
pub fn header_is_canonical(header: &[&str]) -> bool {
    let known = |h: &&str| {
        *h == "inferred" || DimKey::from_name(h).is_some() || MetricKey::from_name(h).is_some()
    };
    !header.is_empty()
        && header.iter().all(known)
        && header.iter().any(|h| MetricKey::from_name(h).is_some())
}

/// One warning per name that several read columns share (`names` in column order, `None` for
/// a column not read): each row keeps the value of the last of them, as every table reader
/// does.
pub fn duplicate_column_warnings<'a>(
    names: impl IntoIterator<Item = Option<&'a str>>,
) -> Vec<String> {
    let mut at: Vec<(&str, Vec<usize>)> = Vec::new();
    let mut index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, name) in names.into_iter().enumerate() {
        let Some(name) = name else { continue };
        match index.get(name) {
            Some(&k) => at[k].1.push(i + 1),
            None => {
                index.insert(name, at.len());
                at.push((name, vec![i + 1]));
            }
        }
    }
    at.into_iter()
        .filter(|(_, cols)| cols.len() > 1)
        .map(|(name, cols)| {
            let list: Vec<String> = cols.iter().map(usize::to_string).collect();
            format!(
                "{} columns are named {name:?} (columns {}): each row keeps the last one's value (column {}), the others are ignored",
                cols.len(),
                list.join(", "),
                cols.last().copied().unwrap_or_default()
            )
        })
        .collect()
}

/// Reads canonical CSV text. Unknown columns and unusable cells are skipped with warnings
/// naming the line and column; of columns sharing a name the last is read, with a warning.
pub fn from_csv(text: &str) -> Result<Decoded, CanonicalError> {
    let mut rdr = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(text.as_bytes());
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| CanonicalError::Csv {
            line: 1,
            message: e.to_string(),
        })?
        .iter()
        .map(|h| h.trim().to_string())
        .collect();
    let mut out = Decoded::default();
    let mut columns: Vec<Option<Column>> = Vec::new();
    for h in &header {
        let c = Column::from_name(h);
        if c.is_none() {
            out.warnings
                .push(format!("line 1: unknown column {h:?}, ignored"));
        }
        columns.push(c);
    }
    let read = header
        .iter()
        .zip(&columns)
        .map(|(h, c)| c.as_ref().map(|_| h.as_str()));
    for w in duplicate_column_warnings(read) {
        out.warnings.push(format!("line 1: {w}"));
    }
    for row in rdr.records() {
        let row = row.map_err(|e| CanonicalError::Csv {
            line: e.position().map_or(0, |p| p.line()),
            message: e.to_string(),
        })?;
        let line = row.position().map_or(0, |p| p.line());
        if row.len() != header.len() {
            out.warnings.push(format!(
                "line {line}: {} fields where the header has {}",
                row.len(),
                header.len()
            ));
        }
        let mut r = Record::default();
        for (cell, column) in row.iter().zip(&columns) {
            if let Some(column) = column {
                if let Err(why) = column.read_cell(cell, &mut r) {
                    out.warnings.push(format!("line {line}: {why}"));
                }
            }
        }
        out.records.push(r);
    }
    Ok(out)
}
