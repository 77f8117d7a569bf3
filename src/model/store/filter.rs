//! What the explorer's filters select ([`Filter`]) and the counts they show ([`Facet`]).

use std::collections::{BTreeMap, BTreeSet};

use super::super::dim::{DimKey, DimValue};

/// A selection per dimension. A dimension absent from the map, or mapped to an empty set, is
/// unconstrained. `None` in a set selects the records that have no value for the dimension.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Filter {
    /// Selected values per dimension.
    pub selected: BTreeMap<DimKey, BTreeSet<Option<DimValue>>>,
}

impl Filter {
    /// No constraint at all.
    pub fn all() -> Filter {
        Filter::default()
    }

    /// Adds `value` to the selection of `key`.
    pub fn select(mut self, key: impl Into<DimKey>, value: Option<DimValue>) -> Filter {
        self.selected.entry(key.into()).or_default().insert(value);
        self
    }

    /// Whether nothing is constrained.
    pub fn is_empty(&self) -> bool {
        self.selected.values().all(BTreeSet::is_empty)
    }
}

/// One value of a dimension with the number of records having it.
#[derive(Clone, Debug, PartialEq)]
pub struct FacetValue {
    /// The value; `None` counts the records without one.
    pub value: Option<DimValue>,
    /// Records with this value that pass the filters on every *other* dimension.
    pub count: usize,
    /// Whether the value is currently selected.
    pub selected: bool,
}

/// The values of one dimension, for a multi-select filter.
#[derive(Clone, Debug, PartialEq)]
pub struct Facet {
    /// The dimension.
    pub key: DimKey,
    /// Its values in sort order (numbers numerically, then text, then "no value").
    pub values: Vec<FacetValue>,
}
