//! The metrics of one record: a small map from [`MetricKey`] to value, kept as one sorted
//! vector.
//!
//! A record holds a handful of metrics (4 to 40). A `BTreeMap` allocated a node per record
//! and spent most of a table read inserting into and tearing down those nodes; a sorted vector
//! is searched by bisection, and its first few entries live inside the record (no allocation
//! at all for a typical table row). The API is the part of `BTreeMap`'s the code base
//! uses, with the same meaning: iteration is in key order, `insert` replaces and returns the
//! old value.

use std::fmt;
use std::ops::Index;

use smallvec::SmallVec;

use super::metric::MetricKey;

/// Metric → value, iterated in key order. See the [module](self) docs.
#[derive(Clone, Default, PartialEq)]
pub struct Metrics {
    /// Sorted by key, keys unique.
    entries: SmallVec<[(MetricKey, f64); INLINE]>,
}

/// Metrics kept inside the record itself; more spill to the heap. A table row usually
/// carries a handful, a vLLM serving run a few dozen.
const INLINE: usize = 4;

/// Iterator over `(&key, &value)` in key order.
pub type Iter<'a> = std::iter::Map<
    std::slice::Iter<'a, (MetricKey, f64)>,
    fn(&'a (MetricKey, f64)) -> (&'a MetricKey, &'a f64),
>;

/// Owning iterator over `(key, value)` in key order.
pub type IntoIter = smallvec::IntoIter<[(MetricKey, f64); INLINE]>;

impl Metrics {
    /// No metrics (allocates nothing).
    pub const fn new() -> Metrics {
        Metrics {
            entries: SmallVec::new_const(),
        }
    }

    /// No metrics, with room for `n` without reallocating.
    pub fn with_capacity(n: usize) -> Metrics {
        Metrics {
            entries: SmallVec::with_capacity(n),
        }
    }

    #[inline]
    fn find(&self, key: &MetricKey) -> Result<usize, usize> {
        // Values appended in key order (most readers) hit the end first.
        match self.entries.last() {
            None => Err(0),
            Some((last, _)) => match last.cmp(key) {
                std::cmp::Ordering::Less => Err(self.entries.len()),
                std::cmp::Ordering::Equal => Ok(self.entries.len() - 1),
                std::cmp::Ordering::Greater => self.entries.binary_search_by(|(k, _)| k.cmp(key)),
            },
        }
    }

    /// The value of `key`.
    #[inline]
    pub fn get(&self, key: &MetricKey) -> Option<&f64> {
        self.find(key).ok().map(|i| &self.entries[i].1)
    }

    /// The value of `key`, to change in place.
    pub fn get_mut(&mut self, key: &MetricKey) -> Option<&mut f64> {
        self.find(key).ok().map(|i| &mut self.entries[i].1)
    }

    /// Whether `key` has a value.
    #[inline]
    pub fn contains_key(&self, key: &MetricKey) -> bool {
        self.find(key).is_ok()
    }

    /// Sets `key` to `value`; returns the value it replaced.
    #[inline]
    pub fn insert(&mut self, key: MetricKey, value: f64) -> Option<f64> {
        match self.find(&key) {
            Ok(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            Err(i) if i == self.entries.len() => {
                // Appending in key order, the common case: no shifting.
                self.entries.push((key, value));
                None
            }
            Err(i) => {
                self.entries.insert(i, (key, value));
                None
            }
        }
    }

    /// Appends `key`, which the caller knows sorts after every key present (a reader adding a
    /// row's metrics in key order); like [`insert`](Metrics::insert) otherwise.
    #[inline]
    pub(crate) fn push_last(&mut self, key: MetricKey, value: f64) {
        match self.entries.last() {
            Some((last, _)) if *last >= key => {
                self.insert(key, value);
            }
            _ => self.entries.push((key, value)),
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &MetricKey) -> Option<f64> {
        self.find(key).ok().map(|i| self.entries.remove(i).1)
    }

    /// Keeps the entries for which `keep` says so.
    pub fn retain(&mut self, mut keep: impl FnMut(&MetricKey, &mut f64) -> bool) {
        self.entries.retain(|(k, v)| keep(k, v));
    }

    /// Removes every metric.
    pub fn clear(&mut self) {
        self.entries.clear();
    }

    /// How many metrics.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// `(&key, &value)` in key order.
    pub fn iter<'a>(&'a self) -> Iter<'a> {
        fn pair((k, v): &(MetricKey, f64)) -> (&MetricKey, &f64) {
            (k, v)
        }
        let pair: fn(&'a (MetricKey, f64)) -> (&'a MetricKey, &'a f64) = pair;
        self.entries.iter().map(pair)
    }

    /// The keys in order.
    pub fn keys(&self) -> impl DoubleEndedIterator<Item = &MetricKey> + ExactSizeIterator + '_ {
        self.entries.iter().map(|(k, _)| k)
    }

    /// The values in key order.
    pub fn values(&self) -> impl DoubleEndedIterator<Item = &f64> + ExactSizeIterator + '_ {
        self.entries.iter().map(|(_, v)| v)
    }

    /// The values in key order, to change in place.
    pub fn values_mut(
        &mut self,
    ) -> impl DoubleEndedIterator<Item = &mut f64> + ExactSizeIterator + '_ {
        self.entries.iter_mut().map(|(_, v)| v)
    }

    /// The first (smallest) key and its value.
    pub fn first_key_value(&self) -> Option<(&MetricKey, &f64)> {
        self.entries.first().map(|(k, v)| (k, v))
    }

    /// The last (largest) key and its value.
    pub fn last_key_value(&self) -> Option<(&MetricKey, &f64)> {
        self.entries.last().map(|(k, v)| (k, v))
    }
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Index<&MetricKey> for Metrics {
    type Output = f64;

    /// The value of `key`. Panics when there is none, like `BTreeMap`.
    #[allow(
        clippy::expect_used,
        reason = "Index has no way to fail but to panic, as BTreeMap's"
    )]
    fn index(&self, key: &MetricKey) -> &f64 {
        self.get(key).expect("no entry found for key")
    }
}

impl Extend<(MetricKey, f64)> for Metrics {
    fn extend<I: IntoIterator<Item = (MetricKey, f64)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k, v);
        }
    }
}

impl<'a> Extend<(&'a MetricKey, &'a f64)> for Metrics {
    fn extend<I: IntoIterator<Item = (&'a MetricKey, &'a f64)>>(&mut self, iter: I) {
        for (k, v) in iter {
            self.insert(k.clone(), *v);
        }
    }
}

impl FromIterator<(MetricKey, f64)> for Metrics {
    fn from_iter<I: IntoIterator<Item = (MetricKey, f64)>>(iter: I) -> Metrics {
        let mut entries: Vec<(MetricKey, f64)> = iter.into_iter().collect();
        // Stable, so that of equal keys the last one wins once duplicates are dropped, as
        // inserting one by one into a map would give.
        crate::model::order::sort_by(&mut entries, |a, b| a.0.cmp(&b.0));
        let mut out: SmallVec<[(MetricKey, f64); INLINE]> = SmallVec::with_capacity(entries.len());
        for (k, v) in entries {
            match out.last_mut() {
                Some(last) if last.0 == k => last.1 = v,
                _ => out.push((k, v)),
            }
        }
        Metrics { entries: out }
    }
}

impl<const N: usize> From<[(MetricKey, f64); N]> for Metrics {
    fn from(pairs: [(MetricKey, f64); N]) -> Metrics {
        pairs.into_iter().collect()
    }
}

impl<'a> IntoIterator for &'a Metrics {
    type Item = (&'a MetricKey, &'a f64);
    type IntoIter = Iter<'a>;

    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl IntoIterator for Metrics {
    type Item = (MetricKey, f64);
    type IntoIter = IntoIter;

    fn into_iter(self) -> IntoIter {
        self.entries.into_iter()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::model::{LatencyMetric, Stat};

    fn keys() -> Vec<MetricKey> {
        vec![
            MetricKey::Extra("zeta".into()),
            MetricKey::OutputThroughput,
            MetricKey::Latency(LatencyMetric::Ttft, Stat::Mean),
            MetricKey::Completed,
            MetricKey::Extra("alpha".into()),
            MetricKey::Latency(LatencyMetric::Itl, Stat::Median),
            MetricKey::OutputThroughput,
        ]
    }

    #[test]
    fn behaves_like_a_btreemap() {
        let mut m = Metrics::new();
        let mut b = BTreeMap::new();
        for (i, k) in keys().into_iter().enumerate() {
            assert_eq!(m.insert(k.clone(), i as f64), b.insert(k, i as f64));
        }
        assert_eq!(m.len(), b.len());
        let pairs: Vec<_> = m.iter().map(|(k, v)| (k.clone(), *v)).collect();
        let expected: Vec<_> = b.iter().map(|(k, v)| (k.clone(), *v)).collect();
        assert_eq!(pairs, expected);
        for k in keys() {
            assert_eq!(m.get(&k), b.get(&k));
            assert!(m.contains_key(&k));
        }
        assert_eq!(
            m.remove(&MetricKey::Completed),
            b.remove(&MetricKey::Completed)
        );
        assert_eq!(m.remove(&MetricKey::Completed), None);
        assert!(!m.contains_key(&MetricKey::Completed));
        let collected: Metrics = keys()
            .into_iter()
            .zip(0..)
            .map(|(k, i)| (k, i as f64))
            .collect();
        let via_map: BTreeMap<_, _> = keys()
            .into_iter()
            .zip(0..)
            .map(|(k, i)| (k, i as f64))
            .collect();
        assert_eq!(
            collected.into_iter().collect::<Vec<_>>(),
            via_map.into_iter().collect::<Vec<_>>()
        );
        assert_eq!(format!("{:?}", m), format!("{:?}", b));
    }
}
