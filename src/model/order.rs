//! Sorting for the shared modules, through one copy of the standard library's sort.
//!
//! Each `slice::sort_by` call with its own element type or comparison is a new copy of the
//! standard library's stable sort (driftsort, with its quicksort and small-sort networks): about
//! 3.6 KB of wasm per call site. The explorer's page had 41 of them, some 150 KB of its code
//! (`scripts/wasm-sizes.py` counts them under `core`). Here a sort orders the *positions*
//! `0..n` with a comparison behind `&mut dyn FnMut`, so the standard sort is instantiated once,
//! for `usize`, whatever is sorted; the slice is then permuted in place along the cycles of the
//! order. The cost is an index array (a `usize` per element) and an indirect comparison, which is
//! noise for the few thousand points a chart or a table sorts.
//!
//! Large numeric arrays (latencies for percentiles) have [`sort_floats`]: one copy of the
//! unstable sort for `f64` in IEEE total order, without indirection.
//!
//! `BTreeSet`/`BTreeMap`'s `collect()` sorts its items first (one more copy of the stable sort
//! per element type): [`set_of`] and [`map_of`] build them by insertion instead.
//!
//! Native-only code (the load generator, the CLI) may call the standard sorts directly; clippy's
//! `disallowed-methods` (clippy.toml) keeps the shared modules on these.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

/// Sorts `v` stably by `cmp`, like `slice::sort_by`.
pub fn sort_by<T>(v: &mut [T], mut cmp: impl FnMut(&T, &T) -> Ordering) {
    if v.len() < 2 {
        return;
    }
    let order = {
        let v: &[T] = v;
        sorted_positions(v.len(), &mut |a, b| cmp(&v[a], &v[b]))
    };
    permute(v, order);
}

/// Sorts `v` stably by `key`, like `slice::sort_by_key`.
pub fn sort_by_key<T, K: Ord>(v: &mut [T], mut key: impl FnMut(&T) -> K) {
    sort_by(v, |a, b| key(a).cmp(&key(b)));
}

/// Sorts `v` stably, like `slice::sort`.
pub fn sort<T: Ord>(v: &mut [T]) {
    sort_by(v, T::cmp);
}

/// Sorts numbers in IEEE total order (`f64::total_cmp`: −NaN first, then −∞ … −0, +0 … +∞,
/// NaN last). Equal numbers are indistinguishable, so the order is not kept stable.
#[allow(clippy::disallowed_methods)]
pub fn sort_floats(v: &mut [f64]) {
    v.sort_unstable_by(f64::total_cmp);
}

/// The set of `items`, as `collect::<BTreeSet<_>>()` gives it, built by insertion.
pub fn set_of<T: Ord>(items: impl IntoIterator<Item = T>) -> BTreeSet<T> {
    let mut set = BTreeSet::new();
    for item in items {
        set.insert(item);
    }
    set
}

/// The map of `pairs`, as `collect::<BTreeMap<_, _>>()` gives it (a repeated key keeps its
/// last value), built by insertion.
pub fn map_of<K: Ord, V>(pairs: impl IntoIterator<Item = (K, V)>) -> BTreeMap<K, V> {
    let mut map = BTreeMap::new();
    for (k, v) in pairs {
        map.insert(k, v);
    }
    map
}

/// The positions `0..n` in the order `cmp` (comparing positions) gives, stable.
#[allow(clippy::disallowed_methods)]
fn sorted_positions(n: usize, cmp: &mut dyn FnMut(usize, usize) -> Ordering) -> Vec<usize> {
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&a, &b| cmp(a, b));
    order
}

/// Moves `v[order[k]]` to position `k` for every `k`, in place, following the permutation's
/// cycles (each element moves once; `order` is used up).
fn permute<T>(v: &mut [T], mut order: Vec<usize>) {
    for start in 0..v.len() {
        let mut at = start;
        loop {
            let from = order[at];
            order[at] = at;
            if from == start || from == at {
                break;
            }
            // Position `at` holds the element displaced from `start`; `from` still holds its
            // own original element, which belongs at `at`.
            v.swap(at, from);
            at = from;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn sorts_stably_like_the_standard_sort() {
        let mut v = vec![(3, 'a'), (1, 'b'), (3, 'c'), (2, 'd'), (1, 'e')];
        sort_by_key(&mut v, |p| p.0);
        assert_eq!(v, vec![(1, 'b'), (1, 'e'), (2, 'd'), (3, 'a'), (3, 'c')]);
        let mut w = vec!["b".to_string(), "a".into(), "c".into()];
        sort(&mut w);
        assert_eq!(w, ["a", "b", "c"]);
    }

    #[test]
    fn floats_in_total_order() {
        let mut v = vec![2.0, f64::NAN, -0.0, 0.0, -1.0, f64::INFINITY];
        sort_floats(&mut v);
        assert_eq!(v[0], -1.0);
        assert!(v[1] == 0.0 && v[1].is_sign_negative());
        assert!(v[2] == 0.0 && v[2].is_sign_positive());
        assert_eq!(&v[3..5], &[2.0, f64::INFINITY]);
        assert!(v[5].is_nan());
    }

    #[test]
    fn sets_and_maps_as_collect_gives_them() {
        assert_eq!(set_of([3, 1, 3, 2]), [1, 2, 3].into_iter().collect());
        let m = map_of([("b", 1), ("a", 2), ("b", 3)]);
        assert_eq!(m, [("a", 2), ("b", 3)].into_iter().collect());
    }

    proptest! {
        #[test]
        fn same_as_the_standard_stable_sort(v in proptest::collection::vec((0u8..6, any::<u16>()), 0..200)) {
            let mut ours = v.clone();
            let mut theirs = v;
            sort_by_key(&mut ours, |p| p.0);
            theirs.sort_by_key(|p| p.0);
            prop_assert_eq!(ours, theirs);
        }
    }
}
