//! Names for the sweeps of a capacity figure: the deployment dimensions that tell them apart,
//! then the file, the date or how the sweep was run where those leave two with one name.

use super::{Gathered, RUN_TAGS};
use crate::charts::style::NO_VALUE;
use crate::model::points::SERIES_PREFERENCE;
use crate::model::{Dataset, Dim, DimKey};

/// Most dimensions joined into one sweep's name.
const MAX_NAME_DIMS: usize = 3;

/// Where a dimension ranks when naming sweeps: the deployment's dimensions first (in
/// [`SERIES_PREFERENCE`] order, then the label, then tags), then the file, the date and the
/// tags that say how a sweep was run.
fn name_rank(k: &DimKey) -> (u8, usize) {
    match k {
        DimKey::Known(Dim::Source) => (2, 0),
        DimKey::Known(Dim::Date) => (2, 1),
        DimKey::Known(Dim::Label) => (1, 0),
        DimKey::Known(d) => (
            0,
            SERIES_PREFERENCE
                .iter()
                .position(|p| p == d)
                .unwrap_or(SERIES_PREFERENCE.len()),
        ),
        DimKey::Tag(t) => match RUN_TAGS.iter().position(|r| r == t) {
            Some(at) => (3, at),
            None => (1, 1),
        },
    }
}

/// The dimensions naming the sweeps and each sweep's name: the deployment dimensions that
/// differ between sweeps (at most [`MAX_NAME_DIMS`]), then, while two sweeps share a name,
/// the next differing dimension. One sweep is named by its file.
pub(super) fn name_sweeps(
    key_dims: &[DimKey],
    gathered: &[Gathered],
    ds: &Dataset,
) -> (Vec<DimKey>, Vec<String>) {
    let value = |g: &Gathered, d: usize| {
        g.key
            .get(d)
            .cloned()
            .flatten()
            .map_or(NO_VALUE.to_string(), |v| v.to_string())
    };
    if gathered.len() <= 1 {
        let name = gathered
            .first()
            .and_then(|g| g.records.first())
            .and_then(|&(i, _)| ds.record(i))
            .and_then(|r| r.source.as_deref().map(str::to_string))
            .unwrap_or_else(|| "sweep".to_string());
        return (Vec::new(), gathered.iter().map(|_| name.clone()).collect());
    }
    let mut varying: Vec<usize> = (0..key_dims.len())
        .filter(|&d| {
            let first = value(&gathered[0], d);
            gathered.iter().any(|g| value(g, d) != first)
        })
        .collect();
    crate::model::order::sort_by_key(&mut varying, |&d| name_rank(&key_dims[d]));
    let mut chosen: Vec<usize> = varying
        .iter()
        .copied()
        .filter(|&d| name_rank(&key_dims[d]).0 <= 1)
        .take(MAX_NAME_DIMS)
        .collect();
    let names_of = |chosen: &[usize]| -> Vec<String> {
        gathered
            .iter()
            .map(|g| {
                chosen
                    .iter()
                    .map(|&d| value(g, d))
                    .collect::<Vec<_>>()
                    .join(" · ")
            })
            .collect()
    };
    let distinct = |names: &[String]| {
        let mut seen: Vec<&String> = names.iter().collect();
        crate::model::order::sort(&mut seen);
        seen.dedup();
        seen.len() == names.len()
    };
    for &d in &varying {
        if !chosen.is_empty() && distinct(&names_of(&chosen)) {
            break;
        }
        if !chosen.contains(&d) {
            chosen.push(d);
        }
    }
    let names = names_of(&chosen);
    (chosen.iter().map(|&d| key_dims[d].clone()).collect(), names)
}
