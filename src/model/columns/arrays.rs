//! Per-request arrays: every record's requests laid end to end, one column per field, with
//! offsets saying where each record's requests start (and, for the inter-token latencies,
//! [`NumberLists`]: where each request's start).

use super::bitmap::Bitmap;
use super::lists::NumberLists;
use super::text::TextColumn;
use crate::model::RequestDetail;

/// An optional number per request: values plus validity.
#[derive(Clone, Debug, Default)]
struct OptColumn<T> {
    values: Vec<T>,
    valid: Bitmap,
}

impl<T: Copy + Default> OptColumn<T> {
    fn push(&mut self, v: Option<T>) {
        self.values.push(v.unwrap_or_default());
        self.valid.push(v.is_some());
    }

    fn reserve(&mut self, n: usize) {
        self.values.reserve_exact(n);
        self.valid.reserve(n);
    }

    fn get(&self, i: usize) -> Option<T> {
        if self.valid.get(i) {
            self.values.get(i).copied()
        } else {
            None
        }
    }

    fn heap_bytes(&self) -> usize {
        self.values.capacity() * std::mem::size_of::<T>() + self.valid.heap_bytes()
    }
}

/// The requests of every row, as columns. Row `r`'s requests are
/// `offsets[r]..offsets[r + 1]`; the last `empty_tail` rows have none and no offsets.
#[derive(Clone, Debug)]
pub struct RequestArrays {
    /// One more than the rows up to the empty tail.
    offsets: Vec<usize>,
    /// Rows after those with offsets, without requests: a table of a million rows and no
    /// per-request detail holds a count here instead of 8 MB of equal offsets (fresh pages
    /// the kernel would clear, then filled).
    empty_tail: usize,
    input_len: OptColumn<u64>,
    output_len: OptColumn<u64>,
    ttft_ms: OptColumn<f64>,
    e2el_ms: OptColumn<f64>,
    intended_s: OptColumn<f64>,
    sent_s: OptColumn<f64>,
    /// Request `q`'s inter-token latencies are list `q`.
    itl: NumberLists,
    /// Error texts repeat (`http_503`, timeouts): dictionary-coded.
    error: TextColumn,
    error_kind: TextColumn,
}

impl Default for RequestArrays {
    fn default() -> Self {
        RequestArrays {
            offsets: vec![0],
            empty_tail: 0,
            input_len: OptColumn::default(),
            output_len: OptColumn::default(),
            ttft_ms: OptColumn::default(),
            e2el_ms: OptColumn::default(),
            intended_s: OptColumn::default(),
            sent_s: OptColumn::default(),
            itl: NumberLists::new(),
            error: TextColumn::default(),
            error_kind: TextColumn::default(),
        }
    }
}

impl PartialEq for RequestArrays {
    fn eq(&self, other: &Self) -> bool {
        self.rows() == other.rows()
            && (0..self.rows()).all(|r| self.requests(r) == other.requests(r))
    }
}

impl RequestArrays {
    /// Appends one row's requests.
    pub fn push_row(&mut self, requests: &[RequestDetail]) {
        if self.empty_tail > 0 {
            let at = self.total();
            self.offsets.extend(std::iter::repeat_n(
                at,
                std::mem::take(&mut self.empty_tail),
            ));
        }
        for q in requests {
            self.push_scalars(q);
            self.itl.push_iter(q.itl_ms.iter());
        }
        self.offsets.push(self.total());
    }

    /// Appends one request's fields but its inter-token latencies.
    fn push_scalars(&mut self, q: &RequestDetail) {
        self.input_len.push(q.input_len);
        self.output_len.push(q.output_len);
        self.ttft_ms.push(q.ttft_ms);
        self.e2el_ms.push(q.e2el_ms);
        self.intended_s.push(q.intended_s);
        self.sent_s.push(q.sent_s);
        self.error.push(q.error.as_deref());
        self.error_kind.push(q.error_kind.as_deref());
    }

    /// One row of `requests`, their inter-token latencies taken from `itl` (list `q` for
    /// request `q`; the requests' own `itl_ms` are not read). `None` when `itl` does not hold
    /// one list per request.
    pub fn one_row(requests: &[RequestDetail], itl: NumberLists) -> Option<RequestArrays> {
        if itl.len() != requests.len() {
            return None;
        }
        let mut arrays = RequestArrays {
            itl,
            ..RequestArrays::default()
        };
        let n = requests.len();
        for c in [&mut arrays.input_len, &mut arrays.output_len] {
            c.reserve(n);
        }
        for c in [
            &mut arrays.ttft_ms,
            &mut arrays.e2el_ms,
            &mut arrays.intended_s,
            &mut arrays.sent_s,
        ] {
            c.reserve(n);
        }
        arrays.error.reserve(n);
        arrays.error_kind.reserve(n);
        for q in requests {
            arrays.push_scalars(q);
        }
        arrays.offsets.push(requests.len());
        Some(arrays)
    }

    /// Appends `n` rows without requests.
    pub fn push_empty_rows(&mut self, n: usize) {
        self.empty_tail += n;
    }

    /// Rows.
    pub fn rows(&self) -> usize {
        self.offsets.len() - 1 + self.empty_tail
    }

    /// Where row `r`'s requests start and end (`None` past the last row).
    fn bounds(&self, r: usize) -> Option<(usize, usize)> {
        match (self.offsets.get(r), self.offsets.get(r + 1)) {
            (Some(&a), Some(&b)) => Some((a, b)),
            _ if r < self.rows() => Some((self.total(), self.total())),
            _ => None,
        }
    }

    /// Requests over all rows.
    pub fn total(&self) -> usize {
        self.itl.len()
    }

    /// How many requests row `r` has.
    pub fn count(&self, r: usize) -> usize {
        self.bounds(r).map_or(0, |(a, b)| b - a)
    }

    /// Row `r`'s requests, rebuilt.
    pub fn requests(&self, r: usize) -> Vec<RequestDetail> {
        let Some((a, b)) = self.bounds(r) else {
            return Vec::new();
        };
        (a..b).map(|q| self.request(q)).collect()
    }

    /// The requests of row `r`, as positions over all rows (for [`request`](Self::request)).
    pub fn row_range(&self, r: usize) -> std::ops::Range<usize> {
        match self.bounds(r) {
            Some((a, b)) => a..b,
            None => 0..0,
        }
    }

    /// Request `q` (counted over all rows), rebuilt; an empty request past the end.
    pub fn request(&self, q: usize) -> RequestDetail {
        RequestDetail {
            input_len: self.input_len.get(q),
            output_len: self.output_len.get(q),
            ttft_ms: self.ttft_ms.get(q),
            itl_ms: self.itl.get(q).into(),
            e2el_ms: self.e2el_ms.get(q),
            error: self.error.get(q).map(|s| s.to_string()),
            intended_s: self.intended_s.get(q),
            sent_s: self.sent_s.get(q),
            error_kind: self.error_kind.get(q).map(|s| s.to_string()),
        }
    }

    /// One field over every request of every row (time to first token, ms), for distributions
    /// without rebuilding requests.
    pub fn ttft_ms(&self) -> impl Iterator<Item = Option<f64>> + '_ {
        (0..self.total()).map(|q| self.ttft_ms.get(q))
    }

    /// Bytes held.
    pub fn heap_bytes(&self) -> usize {
        self.offsets.capacity() * 8
            + self.input_len.heap_bytes()
            + self.output_len.heap_bytes()
            + self.ttft_ms.heap_bytes()
            + self.e2el_ms.heap_bytes()
            + self.intended_s.heap_bytes()
            + self.sent_s.heap_bytes()
            + self.itl.heap_bytes()
            + self.error.heap_bytes()
            + self.error_kind.heap_bytes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_of_requests_read_back_whole() {
        let a = RequestDetail {
            input_len: Some(10),
            ttft_ms: Some(1.5),
            itl_ms: vec![0.5, 0.25].into(),
            error: Some("http_503".into()),
            sent_s: Some(0.1),
            ..RequestDetail::default()
        };
        let b = RequestDetail {
            output_len: Some(3),
            e2el_ms: Some(9.0),
            error_kind: Some("timeout".into()),
            intended_s: Some(0.0),
            ..RequestDetail::default()
        };
        let mut arr = RequestArrays::default();
        arr.push_row(&[a.clone(), b.clone()]);
        arr.push_empty_rows(2);
        arr.push_row(std::slice::from_ref(&b));
        assert_eq!(arr.rows(), 4);
        assert_eq!(arr.total(), 3);
        assert_eq!(arr.requests(0), vec![a, b.clone()]);
        assert!(arr.requests(1).is_empty());
        assert_eq!(arr.requests(3), vec![b]);
        assert_eq!(arr.count(0), 2);
        assert!(arr.requests(9).is_empty());
        assert_eq!(
            arr.ttft_ms().collect::<Vec<_>>(),
            vec![Some(1.5), None, None]
        );
        assert_eq!(arr.row_range(3), 2..3);
        assert_eq!(arr.row_range(9), 0..0);
        assert_eq!(arr.request(2), arr.requests(3)[0]);
    }

    #[test]
    fn rows_without_requests_at_the_end_hold_none() {
        let a = RequestDetail {
            ttft_ms: Some(2.0),
            ..RequestDetail::default()
        };
        let mut arr = RequestArrays::default();
        arr.push_empty_rows(3);
        assert_eq!((arr.rows(), arr.total()), (3, 0));
        assert_eq!(arr.row_range(2), 0..0);
        arr.push_row(std::slice::from_ref(&a));
        arr.push_empty_rows(1_000_000);
        assert_eq!((arr.rows(), arr.total()), (1_000_004, 1));
        assert_eq!(arr.count(3), 1);
        assert_eq!(arr.row_range(3), 0..1);
        assert_eq!(arr.requests(3), vec![a.clone()]);
        assert_eq!(arr.count(4), 0);
        assert_eq!(arr.row_range(1_000_003), 1..1);
        assert!(arr.requests(1_000_003).is_empty());
        assert_eq!(arr.row_range(1_000_004), 0..0);
        assert!(arr.heap_bytes() < 1_000);
        let mut same = RequestArrays::default();
        for r in 0..1_000_004 {
            if r == 3 {
                same.push_row(std::slice::from_ref(&a));
            } else {
                same.push_row(&[]);
            }
        }
        assert_eq!(arr, same);
    }

    #[test]
    fn one_row_takes_the_gaps_from_the_lists() {
        let with_gaps = |itl: Vec<f64>| RequestDetail {
            input_len: Some(4),
            ttft_ms: Some(2.5),
            itl_ms: itl.into(),
            error: Some("boom".into()),
            ..RequestDetail::default()
        };
        let whole = vec![with_gaps(vec![1.0, 2.0]), with_gaps(Vec::new())];
        let mut lists = NumberLists::new();
        lists.push(&[1.0, 2.0]);
        lists.push(&[]);
        let heads: Vec<RequestDetail> = whole
            .iter()
            .map(|q| RequestDetail {
                itl_ms: vec![f64::NAN].into(),
                ..q.clone()
            })
            .collect();
        let arr = RequestArrays::one_row(&heads, lists.clone()).unwrap();
        let mut expected = RequestArrays::default();
        expected.push_row(&whole);
        assert_eq!(arr, expected);
        assert_eq!(arr.requests(0), whole);
        assert!(RequestArrays::one_row(&heads[..1], lists).is_none());
    }
}
