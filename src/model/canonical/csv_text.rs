//! Canonical CSV read back (written by [`super::write_csv`]): one row per record, a column per
//! dimension and metric present (canonical names, sorted), `inferred` last; described in the
//! parent module's doc.

use super::super::dim::{DimKey, DimValue};
use super::super::metric::MetricKey;
use super::super::record::Record;
use super::{parse_number_text, CanonicalError, Decoded};

enum Column {
    Dim(DimKey),
    Metric(MetricKey),
    Inferred,
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
        let c = if h == "inferred" {
            Some(Column::Inferred)
        } else if let Some(k) = DimKey::from_name(h) {
            Some(Column::Dim(k))
        } else if let Some(k) = MetricKey::from_name(h) {
            Some(Column::Metric(k))
        } else {
            out.warnings
                .push(format!("line 1: unknown column {h:?}, ignored"));
            None
        };
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
            let (Some(column), cell) = (column, cell.trim()) else {
                continue;
            };
            if cell.is_empty() {
                continue;
            }
            match column {
                Column::Dim(key) => {
                    if let Err(e) = r.set_dim(key, Some(DimValue::Text(cell.to_string()))) {
                        out.warnings.push(format!("line {line}: {e}, ignored"));
                    }
                }
                Column::Metric(key) => match parse_number_text(cell) {
                    Some(v) => r.set_metric(key.clone(), v),
                    None => out.warnings.push(format!(
                        "line {line}: {}: {cell:?} is not a number, ignored",
                        key.name()
                    )),
                },
                Column::Inferred => {
                    for pair in cell.split(';').filter(|p| !p.is_empty()) {
                        let (k, v) = pair.split_once('=').unwrap_or((pair, "unknown"));
                        r.inferred.insert(k.to_string(), v.to_string());
                    }
                }
            }
        }
        out.records.push(r);
    }
    Ok(out)
}
