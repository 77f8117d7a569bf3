//! Where each source column of a table goes on the columnar path: its [`Placement`] in the typed
//! columns ([`plan`], from the same column mapping the row reader uses), under a generic
//! table's or benchlens's canonical CSV's [`Rules`] (a canonical file's columns are the fields
//! they name: [`canonical_mapping`]). `None` from [`plan`] sends the file to the row reader.

use super::super::{ColumnMapping, Table};
use crate::ingest::text::snake;
use crate::ingest::Warning;
use crate::model::columns::Columns;
use crate::model::{Dim, DimKey, DimKind, MetricKey};

/// Where one source column's cells go.
#[derive(Clone, Copy)]
pub(super) enum Placement {
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
    /// A column whose cells this path does not read (canonical `inferred`): any value in it
    /// sends the file to the row reader.
    Refuse,
}

/// Whose rules a table is read by.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Rules {
    /// A generic table: columns mapped by name and unit hints ([`auto_mapping`]), placeholders
    /// (`-`, `n/a`) read as no value, rows measuring nothing skipped with a warning.
    Table,
    /// benchlens's canonical CSV: as `model::canonical::from_csv` reads it.
    Canonical,
}

/// The columns and the placement of each source column, or `None` when the mapping needs the row
/// reader.
pub(super) fn plan(mapping: &[ColumnMapping], rules: Rules) -> Option<(Columns, Vec<Placement>)> {
    enum Target {
        Skip,
        Refuse,
        Metric(MetricKey, f64),
        Dim(DimKey),
    }
    let mut targets = Vec::with_capacity(mapping.len());
    for m in mapping {
        if m.group().is_some() {
            return None;
        }
        let Some(target) = &m.target else {
            targets.push(Target::Skip);
            continue;
        };
        if rules == Rules::Canonical {
            // The file and format are stamped over whatever a canonical file says.
            match DimKey::from_name(target) {
                Some(DimKey::Known(Dim::Source | Dim::Format)) => {
                    targets.push(Target::Skip);
                    continue;
                }
                None if target == "inferred" => {
                    targets.push(Target::Refuse);
                    continue;
                }
                _ => {}
            }
        }
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
            Target::Skip | Target::Refuse => {}
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
    let placements = targets
        .iter()
        .map(|t| match t {
            Target::Skip => Some(Placement::Skip),
            Target::Refuse => Some(Placement::Refuse),
            Target::Metric(k, scale) => {
                Some(Placement::Metric(columns.metric_position(k)?, *scale))
            }
            Target::Dim(k) => {
                let at = columns.dim_position(k)?;
                Some(match k {
                    DimKey::Known(Dim::Gpu) => Placement::Gpu(at),
                    DimKey::Tag(_) => Placement::Text(at),
                    DimKey::Known(d) => match d.kind() {
                        DimKind::Text => Placement::Text(at),
                        DimKind::Count => Placement::Count(at),
                        DimKind::Real => Placement::Real(at),
                    },
                })
            }
        })
        .collect::<Option<Vec<Placement>>>()?;
    Some((columns, placements))
}

/// A canonical CSV's columns: each the field it names (`inferred` as itself), with the canonical
/// reader's warning for a column it does not know.
pub(super) fn canonical_mapping(t: &Table, warnings: &mut Vec<Warning>) -> Vec<ColumnMapping> {
    t.headers
        .iter()
        .map(|h| {
            let name = h.trim();
            let known = name == "inferred"
                || DimKey::from_name(name).is_some()
                || MetricKey::from_name(name).is_some();
            if !known {
                warnings.push(Warning::at(
                    "line 1",
                    format!("unknown column {name:?}, ignored"),
                ));
            }
            ColumnMapping {
                column: name.to_string(),
                target: known.then(|| name.to_string()),
                scale: 1.0,
                gpu: None,
                engine: None,
                test: None,
                reason: "benchlens column name".into(),
            }
        })
        .collect()
}
