//! The filter panel's rules, shared and pure so they are tested natively: which dimensions it
//! lists and in what order, which get a range of two sliders instead of checkboxes, and what a
//! range selects.

use std::collections::BTreeSet;

use crate::model::{format_number, round_significant, Dim, DimKey, DimValue, Facet};

/// Dimensions whose filter is always shown, present in the data or not, first and in this order.
pub const ALWAYS_FILTERED: [Dim; 5] = [
    Dim::Model,
    Dim::Engine,
    Dim::Gpu,
    Dim::BatchSize,
    Dim::MaxConcurrency,
];

/// Numeric dimensions with more values than this are filtered by a range, not checkboxes.
pub const RANGE_FROM_VALUES: usize = 12;

/// The facets the panel lists: the data's, plus an empty one for each [`ALWAYS_FILTERED`]
/// dimension the data lacks; those first in their order, then the rest in canonical order.
pub fn panel_facets(mut facets: Vec<Facet>) -> Vec<Facet> {
    for d in ALWAYS_FILTERED {
        if !facets.iter().any(|f| f.key == DimKey::Known(d)) {
            facets.push(Facet {
                key: DimKey::Known(d),
                values: Vec::new(),
            });
        }
    }
    crate::model::order::sort_by_key(&mut facets, |f| {
        let pos = match &f.key {
            DimKey::Known(d) => ALWAYS_FILTERED.iter().position(|a| a == d),
            DimKey::Tag(_) => None,
        };
        (pos.unwrap_or(usize::MAX), f.key.clone())
    });
    facets
}

/// Whether `facet` is filtered by a range: a measured quantity (`measured`, e.g. a mean token
/// length), or more than [`RANGE_FROM_VALUES`] values that are all numbers.
pub fn shows_range(facet: &Facet, measured: bool) -> bool {
    measured
        || (facet.values.len() > RANGE_FROM_VALUES
            && facet
                .values
                .iter()
                .all(|v| v.value.as_ref().is_none_or(|v| v.as_f64().is_some())))
}

/// What a range facet shows: its values in order, the slider positions and the records with a
/// value.
#[derive(Clone, Debug, PartialEq)]
pub struct RangeFacetState {
    /// The values the sliders move over, in order ("no value" left out).
    pub values: Vec<DimValue>,
    /// The lower slider: the first selected value, or the first value.
    pub lo: usize,
    /// The upper slider: the last selected value, or the last value.
    pub hi: usize,
    /// Records having a value of the dimension.
    pub records: usize,
}

impl RangeFacetState {
    /// The sliders' state for `facet` under the current selection.
    pub fn of(facet: &Facet) -> RangeFacetState {
        let values: Vec<DimValue> = facet
            .values
            .iter()
            .filter_map(|v| v.value.clone())
            .collect();
        let last = values.len().saturating_sub(1);
        let selected: Vec<usize> = facet
            .values
            .iter()
            .enumerate()
            .filter(|(_, v)| v.selected)
            .map(|(i, _)| i.min(last))
            .collect();
        RangeFacetState {
            lo: selected.first().copied().unwrap_or(0),
            hi: selected.last().copied().unwrap_or(last),
            records: facet
                .values
                .iter()
                .filter(|v| v.value.is_some())
                .map(|v| v.count)
                .sum(),
            values,
        }
    }

    /// The index of the last value.
    pub fn last(&self) -> usize {
        self.values.len().saturating_sub(1)
    }

    /// The filter selection for sliders at `a` and `b` (either order): every value between
    /// them, or the empty set (no filter) when they span every value.
    pub fn selection(&self, a: usize, b: usize) -> BTreeSet<Option<DimValue>> {
        let last = self.last();
        let (lo, hi) = (a.min(b), a.max(b).min(last));
        if (lo == 0 && hi >= last) || lo > hi {
            return BTreeSet::new();
        }
        crate::model::order::set_of(self.values[lo..=hi].iter().cloned().map(Some))
    }
}

/// The filter panel's list key of a facet: its dimension with every value, count and selection,
/// so a facet is drawn again exactly when one of them changes.
pub fn facet_key(facet: &Facet) -> (DimKey, Vec<(Option<DimValue>, usize, bool)>) {
    (
        facet.key.clone(),
        facet
            .values
            .iter()
            .map(|v| (v.value.clone(), v.count, v.selected))
            .collect(),
    )
}

/// The filter panel's list key of a facet: a range facet (drawn once from its values, counts
/// and selection) is drawn again when any of them changes; a checkbox list only when its
/// values change, its counts and ticks following the filter in place ([`value_state`]), so a
/// click does not rebuild every checkbox of the panel.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum PanelKey {
    /// A range of two sliders, as [`facet_key`].
    Range((DimKey, Vec<(Option<DimValue>, usize, bool)>)),
    /// A checkbox list: the dimension and its values.
    Checklist(DimKey, Vec<Option<DimValue>>),
}

/// The [`PanelKey`] of `facet`, shown as a range when `range`.
pub fn panel_key(facet: &Facet, range: bool) -> PanelKey {
    if range {
        PanelKey::Range(facet_key(facet))
    } else {
        PanelKey::Checklist(
            facet.key.clone(),
            facet.values.iter().map(|v| v.value.clone()).collect(),
        )
    }
}

/// How the panel writes values: text as it is, numbers to at most six significant digits
/// (`224.234`, not `224.23416666666665`), more where two of `values` would read alike, and the
/// full value when even 17 digits do not tell them apart. `None` is `no_value`.
pub fn shown_values(values: &[Option<&DimValue>], no_value: &str) -> Vec<String> {
    let numbers: Vec<f64> = values
        .iter()
        .filter_map(|v| v.and_then(DimValue::as_f64))
        .collect();
    // The fewest significant digits (from 6) at which the distinct numbers stay distinct.
    let digits = (6..=17)
        .find(|&d| {
            let mut shown: Vec<String> = numbers
                .iter()
                .map(|&n| format_number(round_significant(n, d)))
                .collect();
            crate::model::order::sort(&mut shown);
            shown.dedup();
            let mut distinct = numbers.clone();
            crate::model::order::sort_floats(&mut distinct);
            distinct.dedup();
            shown.len() == distinct.len()
        })
        .unwrap_or(17);
    values
        .iter()
        .map(|v| match v {
            None => no_value.to_string(),
            Some(DimValue::Num(n)) => format_number(round_significant(*n, digits)),
            Some(other) => other.to_string(),
        })
        .collect()
}

/// The count and selection of one value of one dimension in `facets`; `(0, false)` when the
/// facets no longer list it.
pub fn value_state(facets: &[Facet], key: &DimKey, value: &Option<DimValue>) -> (usize, bool) {
    facets
        .iter()
        .find(|f| &f.key == key)
        .and_then(|f| f.values.iter().find(|v| &v.value == value))
        .map_or((0, false), |v| (v.count, v.selected))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::FacetValue;

    fn value(v: f64, count: usize, selected: bool) -> FacetValue {
        FacetValue {
            value: Some(DimValue::from(v)),
            count,
            selected,
        }
    }

    fn facet(key: DimKey, values: Vec<FacetValue>) -> Facet {
        Facet { key, values }
    }

    #[test]
    fn numbers_show_six_digits_unless_two_would_read_alike() {
        let (a, b) = (
            DimValue::from(224.23416666666665),
            DimValue::from(225.32458333333332),
        );
        let (whole, text) = (DimValue::from(1024.0), DimValue::from("sharegpt"));
        let shown = shown_values(&[Some(&a), Some(&b), Some(&whole), Some(&text), None], "—");
        assert_eq!(shown, ["224.234", "225.325", "1024", "sharegpt", "—"]);
        let (c, d) = (DimValue::from(0.1234561), DimValue::from(0.1234564));
        assert_eq!(
            shown_values(&[Some(&c), Some(&d)], ""),
            ["0.1234561", "0.1234564"]
        );
        let tiny = DimValue::from(0.000012345678);
        assert_eq!(shown_values(&[Some(&tiny)], ""), ["0.0000123457"]);
        let (e, f) = (DimValue::from(-0.5), DimValue::from(f64::INFINITY));
        assert_eq!(shown_values(&[Some(&e), Some(&f)], ""), ["-0.5", "inf"]);
        // Past f64's range for the rounding scale, a value is kept as it is, never NaN.
        let (g, h) = (DimValue::from(1e-300), DimValue::from(2e-300));
        let tiny = shown_values(&[Some(&g), Some(&h)], "");
        assert!(
            tiny.iter()
                .all(|t| t.starts_with("0.000") && !t.contains("NaN")),
            "{tiny:?}"
        );
        // The same number twice is one value, not a reason for more digits.
        assert_eq!(
            shown_values(&[Some(&a), Some(&a)], ""),
            ["224.234", "224.234"]
        );
    }

    #[test]
    fn always_filtered_come_first_then_canonical_order() {
        let data = vec![
            facet(DimKey::Known(Dim::RequestRate), vec![value(1.0, 2, false)]),
            facet(DimKey::Tag("node".into()), vec![]),
            facet(DimKey::Known(Dim::Gpu), vec![]),
        ];
        let keys: Vec<String> = panel_facets(data).iter().map(|f| f.key.name()).collect();
        assert_eq!(
            keys,
            [
                "model",
                "engine",
                "gpu",
                "batch_size",
                "max_concurrency",
                "request_rate",
                "tag.node"
            ]
        );
    }

    #[test]
    fn ranges_for_measured_or_long_numeric_facets_only() {
        let numbers: Vec<FacetValue> = (0..=RANGE_FROM_VALUES)
            .map(|i| value(i as f64, 1, false))
            .collect();
        let long = facet(DimKey::Known(Dim::InputLen), numbers.clone());
        assert!(shows_range(&long, false));
        let short = facet(DimKey::Known(Dim::InputLen), numbers[1..].to_vec());
        assert!(!shows_range(&short, false));
        assert!(shows_range(&short, true));
        let mut texts = numbers;
        texts[0].value = Some(DimValue::from("A100"));
        assert!(!shows_range(&facet(DimKey::Known(Dim::Gpu), texts), false));
    }

    #[test]
    fn range_state_and_selection() {
        let mut values: Vec<FacetValue> = (1..=5).map(|i| value(i as f64, i, false)).collect();
        values.push(FacetValue {
            value: None,
            count: 7,
            selected: false,
        });
        let all = RangeFacetState::of(&facet(DimKey::Known(Dim::InputLen), values.clone()));
        assert_eq!((all.lo, all.hi, all.records, all.last()), (0, 4, 15, 4));
        // Spanning every value is no filter; either slider order selects the same values.
        assert!(all.selection(4, 0).is_empty());
        let picked: Vec<String> = all
            .selection(3, 1)
            .into_iter()
            .map(|v| v.map(|v| v.to_string()).unwrap_or_default())
            .collect();
        assert_eq!(picked, ["2", "3", "4"]);
        values[1].selected = true;
        values[2].selected = true;
        let part = RangeFacetState::of(&facet(DimKey::Known(Dim::InputLen), values));
        assert_eq!((part.lo, part.hi), (1, 2));
    }

    #[test]
    fn facet_key_changes_with_counts_and_selection() {
        let a = facet(DimKey::Known(Dim::Gpu), vec![value(1.0, 2, false)]);
        let mut b = a.clone();
        assert_eq!(facet_key(&a), facet_key(&b));
        b.values[0].count = 3;
        assert_ne!(facet_key(&a), facet_key(&b));
        let mut c = a.clone();
        c.values[0].selected = true;
        assert_ne!(facet_key(&a), facet_key(&c));
    }

    #[test]
    fn checklist_keys_follow_values_only_and_states_are_looked_up() {
        let gpu = DimKey::Known(Dim::Gpu);
        let a = facet(gpu.clone(), vec![value(1.0, 2, false), value(2.0, 5, true)]);
        let mut b = a.clone();
        b.values[0].count = 7;
        b.values[1].selected = false;
        assert_eq!(panel_key(&a, false), panel_key(&b, false));
        assert_ne!(panel_key(&a, true), panel_key(&b, true));
        let mut c = a.clone();
        c.values.pop();
        assert_ne!(panel_key(&a, false), panel_key(&c, false));
        assert_ne!(panel_key(&a, false), panel_key(&a, true));
        let facets = [b];
        let two = Some(DimValue::from(2.0));
        assert_eq!(
            value_state(&facets, &gpu, &Some(DimValue::from(1.0))),
            (7, false)
        );
        assert_eq!(value_state(&facets, &gpu, &two), (5, false));
        assert_eq!(value_state(&facets, &gpu, &None), (0, false));
        assert_eq!(
            value_state(&facets, &DimKey::Known(Dim::Engine), &two),
            (0, false)
        );
    }
}
