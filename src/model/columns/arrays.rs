//! Per-request arrays: every record's requests laid end to end, one column per field, with
//! offsets saying where each record's requests start (and, for the inter-token latencies,
//! [`NumberLists`]: where each request's start).

use super::bitmap::Bitmap;
use super::lists::NumberLists;
use super::text::TextColumn;
use crate::model::RequestDetail;

/// An optional number per request: values plus validity. The column may stop short of the
/// requests: those past its end have no value, so a field no request has costs nothing.
#[derive(Clone, Debug, Default)]
struct OptColumn<T> {
    values: Vec<T>,
    valid: Bitmap,
}

impl<T: Copy + Default> OptColumn<T> {
    /// Sets request `q`'s value, `q` at or past the column's end.
    fn put(&mut self, q: usize, v: Option<T>) {
        let Some(v) = v else { return };
        if self.values.len() < q {
            self.values.resize(q, T::default());
        }
        while self.valid.len() < q {
            self.valid.push(false);
        }
        self.values.push(v);
        self.valid.push(true);
    }

    /// A whole one-row column from `values` (`None`: no value), kept only if one has a value.
    fn of(values: Vec<T>, valid: Bitmap) -> OptColumn<T> {
        if valid.count_ones() == 0 {
            OptColumn::default()
        } else {
            OptColumn { values, valid }
        }
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

/// A per-request number field of [`RequestArrays`], for [`RequestArrays::set_numbers`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RequestField {
    /// Prompt tokens (a count: rounded down, negative or non-finite values are no value).
    InputLen,
    /// Generated tokens (a count, as `InputLen`).
    OutputLen,
    /// Time to first token, ms.
    TtftMs,
    /// End-to-end latency, ms.
    E2elMs,
    /// Scheduled send time, s.
    IntendedS,
    /// Send time, s.
    SentS,
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
        let start = self.total();
        for (i, q) in requests.iter().enumerate() {
            self.push_scalars(start + i, q);
            if !q.itl_ms.is_empty() {
                self.pad_lists(start + i);
                self.itl.push_iter(q.itl_ms.iter());
            }
        }
        self.offsets.push(start + requests.len());
    }

    /// Empty gap lists up to request `q` (lists stop at the last request with gaps).
    fn pad_lists(&mut self, q: usize) {
        while self.itl.len() < q {
            self.itl.push(&[]);
        }
    }

    /// Sets request `q`'s fields but its inter-token latencies (`q` at or past every
    /// column's end).
    fn push_scalars(&mut self, q: usize, r: &RequestDetail) {
        self.input_len.put(q, r.input_len);
        self.output_len.put(q, r.output_len);
        self.ttft_ms.put(q, r.ttft_ms);
        self.e2el_ms.put(q, r.e2el_ms);
        self.intended_s.put(q, r.intended_s);
        self.sent_s.put(q, r.sent_s);
        for (column, text) in [
            (&mut self.error, &r.error),
            (&mut self.error_kind, &r.error_kind),
        ] {
            if let Some(text) = text {
                while column.len() < q {
                    column.push(None);
                }
                column.push(Some(text));
            }
        }
    }

    /// One row of `n` requests whose fields are then given a field at a time
    /// ([`set_numbers`](Self::set_numbers), [`set_errors`](Self::set_errors),
    /// [`set_gaps`](Self::set_gaps)): a reader holding per-request arrays builds the columns
    /// straight from them, never a [`RequestDetail`] per request.
    pub fn one_row(n: usize) -> RequestArrays {
        RequestArrays {
            offsets: vec![0, n],
            ..RequestArrays::default()
        }
    }

    /// Sets `field` of the requests of a [`one_row`](Self::one_row): request `q` gets
    /// `values[q]`, NaN being no value (values past the row's requests are ignored). Times
    /// are taken as given, counts as whole numbers ≥ 0 (anything else is no value).
    pub fn set_numbers(&mut self, field: RequestField, mut values: Vec<f64>) {
        values.truncate(self.total());
        let mut valid = Bitmap::default();
        valid.reserve(values.len());
        match field {
            RequestField::InputLen | RequestField::OutputLen => {
                // Collected in place: the f64s' allocation holds the counts.
                let counts: Vec<u64> = values
                    .into_iter()
                    .map(|v| {
                        let ok = v.is_finite() && v >= 0.0;
                        valid.push(ok);
                        if ok {
                            v as u64
                        } else {
                            0
                        }
                    })
                    .collect();
                let column = OptColumn::of(counts, valid);
                match field {
                    RequestField::InputLen => self.input_len = column,
                    _ => self.output_len = column,
                }
            }
            _ => {
                for v in &mut values {
                    valid.push(!v.is_nan());
                    if v.is_nan() {
                        *v = 0.0;
                    }
                }
                let column = OptColumn::of(values, valid);
                match field {
                    RequestField::TtftMs => self.ttft_ms = column,
                    RequestField::E2elMs => self.e2el_ms = column,
                    RequestField::IntendedS => self.intended_s = column,
                    _ => self.sent_s = column,
                }
            }
        }
    }

    /// Sets the error texts of a [`one_row`](Self::one_row)'s requests, in order (`None`:
    /// it succeeded or the source did not say); texts past the row's requests are ignored.
    pub fn set_errors<'a>(&mut self, errors: impl IntoIterator<Item = Option<&'a str>>) {
        let mut column = TextColumn::default();
        let mut any = false;
        for e in errors.into_iter().take(self.total()) {
            any |= e.is_some();
            column.push(e);
        }
        self.error = if any { column } else { TextColumn::default() };
    }

    /// Gives a [`one_row`](Self::one_row)'s requests their inter-token latencies: list `q`
    /// for request `q` (fewer lists: the rest have none). `false`, leaving the row as it was,
    /// when there are more lists than requests.
    pub fn set_gaps(&mut self, lists: NumberLists) -> bool {
        if lists.len() > self.total() {
            return false;
        }
        self.itl = lists;
        true
    }

    /// Whether some request has inter-token latencies.
    pub fn has_gaps(&self) -> bool {
        self.itl.values() > 0
    }

    /// Request `q`'s inter-token latencies (empty past the end).
    pub fn gaps(&self, q: usize) -> &[f64] {
        self.itl.get(q)
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
        self.offsets.last().copied().unwrap_or(0)
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
    fn one_row_built_a_field_at_a_time_reads_as_pushed_requests() {
        let whole = vec![
            RequestDetail {
                input_len: Some(4),
                output_len: Some(2),
                ttft_ms: Some(2.5),
                itl_ms: vec![1.0, 2.0].into(),
                ..RequestDetail::default()
            },
            RequestDetail {
                input_len: Some(7),
                error: Some("boom".into()),
                ..RequestDetail::default()
            },
            RequestDetail {
                output_len: Some(0),
                ttft_ms: Some(f64::INFINITY),
                sent_s: Some(0.5),
                ..RequestDetail::default()
            },
        ];
        let mut arr = RequestArrays::one_row(3);
        // A fourth value is past the row's requests; -1 is no count.
        arr.set_numbers(RequestField::InputLen, vec![4.0, 7.0, -1.0, 9.0]);
        arr.set_numbers(RequestField::OutputLen, vec![2.0, f64::NAN, 0.0]);
        arr.set_numbers(RequestField::TtftMs, vec![2.5, f64::NAN, f64::INFINITY]);
        arr.set_numbers(RequestField::SentS, vec![f64::NAN, f64::NAN, 0.5]);
        arr.set_numbers(RequestField::E2elMs, vec![f64::NAN; 3]);
        arr.set_errors([None, Some("boom"), None]);
        let mut lists = NumberLists::new();
        lists.push(&[1.0, 2.0]);
        assert!(arr.set_gaps(lists));
        let mut expected = RequestArrays::default();
        expected.push_row(&whole);
        assert_eq!(arr, expected);
        assert_eq!(arr.requests(0), whole);
        assert_eq!(arr.gaps(0), &[1.0, 2.0]);
        // Fields no request has hold nothing.
        let mut bare = RequestArrays::one_row(1_000_000);
        bare.set_numbers(RequestField::E2elMs, vec![f64::NAN; 1_000_000]);
        bare.set_errors(std::iter::repeat_n(None, 1_000_000));
        assert!(bare.heap_bytes() < 1_000, "{}", bare.heap_bytes());
        assert_eq!(bare.request(999_999), RequestDetail::default());
        let mut too_many = NumberLists::new();
        for _ in 0..4 {
            too_many.push(&[1.0]);
        }
        assert!(!arr.set_gaps(too_many));
    }

    #[test]
    fn rows_pushed_after_a_sparse_row_line_up() {
        let a = RequestDetail {
            ttft_ms: Some(1.0),
            ..RequestDetail::default()
        };
        let b = RequestDetail {
            e2el_ms: Some(3.0),
            itl_ms: vec![0.5].into(),
            error_kind: Some("timeout".into()),
            ..RequestDetail::default()
        };
        let mut arr = RequestArrays::default();
        arr.push_row(&[a.clone(), a.clone()]);
        arr.push_row(&[a.clone(), b.clone()]);
        assert_eq!(arr.requests(0), vec![a.clone(), a.clone()]);
        assert_eq!(arr.requests(1), vec![a, b]);
        assert_eq!(arr.total(), 4);
    }
}
