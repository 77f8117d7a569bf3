//! A metric column: one `f64` a row and a validity [`Bitmap`] saying which rows measured the
//! metric.

use super::bitmap::Bitmap;
use crate::model::MetricKey;

/// One metric over the rows: its values (0 where a row has none) and which rows have one.
#[derive(Clone, Debug)]
pub struct MetricColumn {
    /// The metric.
    pub key: MetricKey,
    values: Vec<f64>,
    valid: Bitmap,
}

impl PartialEq for MetricColumn {
    /// Same key and, row by row, the same value bit for bit or both absent.
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
            && self.len() == other.len()
            && (0..self.len())
                .all(|i| self.get(i).map(f64::to_bits) == other.get(i).map(f64::to_bits))
    }
}

impl MetricColumn {
    /// An empty column for `key`.
    pub fn new(key: MetricKey) -> MetricColumn {
        MetricColumn {
            key,
            values: Vec::new(),
            valid: Bitmap::new(),
        }
    }

    /// Appends a row: `None` where the row did not measure the metric.
    #[inline]
    pub fn push(&mut self, v: Option<f64>) {
        self.values.push(v.unwrap_or(0.0));
        self.valid.push(v.is_some());
    }

    /// The value of row `i`.
    #[inline]
    pub fn get(&self, i: usize) -> Option<f64> {
        if self.valid.get(i) {
            self.values.get(i).copied()
        } else {
            None
        }
    }

    /// Every row's value (0 where [`valid`](MetricColumn::valid) is not set).
    pub fn values(&self) -> &[f64] {
        &self.values
    }

    /// Which rows have a value.
    pub fn valid(&self) -> &Bitmap {
        &self.valid
    }

    /// Rows with a value.
    pub fn count(&self) -> usize {
        self.valid.count_ones()
    }

    /// Rows.
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// Room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.values.reserve(n);
        self.valid.reserve(n);
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<f64>() + self.valid.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_rows_read_as_none() {
        let mut c = MetricColumn::new(MetricKey::RequestThroughput);
        for v in [Some(1.5), None, Some(f64::NAN), Some(0.0)] {
            c.push(v);
        }
        assert_eq!(c.get(0), Some(1.5));
        assert_eq!(c.get(1), None);
        assert!(c.get(2).is_some_and(f64::is_nan));
        assert_eq!(c.get(3), Some(0.0));
        assert_eq!(c.count(), 3);
        assert_eq!(c.get(4), None);
    }
}
