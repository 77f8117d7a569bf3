//! The index of a file's records on the wire ([`encode_index`], [`decode_index`]), and a plain
//! table sent as that index alone, its schema first and then its rows batch by batch
//! ([`TableEncoder`], [`TableRows`]).

use super::*;

/// Encodes an [`Index`] (the parse worker sends the index of a file's records after them).
/// Codes travel as raw little-endian `u32`, so the page copies them rather than parses.
pub fn encode_index(index: &Index) -> Vec<u8> {
    let mut out = Vec::with_capacity(4 * (index.rows + 1) * (index.columns.len() + 1) + 64);
    put_u32(&mut out, index.rows as u32);
    put_u32(&mut out, index.columns.len() as u32);
    for c in &index.columns {
        match &c.key {
            DimKey::Known(d) => {
                out.push(KEY_DIM);
                put_str(&mut out, d.name());
            }
            DimKey::Tag(t) => {
                out.push(KEY_TAG);
                put_str(&mut out, t);
            }
        }
        put_u32(&mut out, c.dict.len() as u32);
        for v in &c.dict {
            match v {
                DimValue::Num(v) => {
                    out.push(VALUE_NUM);
                    put_f64(&mut out, *v);
                }
                DimValue::Text(t) => {
                    out.push(VALUE_TEXT);
                    put_str(&mut out, t);
                }
            }
        }
        put_codes(&mut out, &c.codes, 0..c.codes.len());
    }
    put_u32(&mut out, index.metric_keys.len() as u32);
    for k in &index.metric_keys {
        put_str(&mut out, &k.name());
    }
    put_u32(&mut out, index.metric_sets.len() as u32);
    for set in &index.metric_sets {
        put_u32(&mut out, set.len() as u32);
        put_u32s(&mut out, set);
    }
    put_codes(
        &mut out,
        &index.row_metric_set,
        0..index.row_metric_set.len(),
    );
    for values in &index.metric_values {
        out.reserve(8 * values.len());
        for v in values {
            put_f64(&mut out, *v);
        }
    }
    out.push(u8::from(index.any_inferred));
    out
}

/// Decodes what [`encode_index`] wrote, checking that every code has its entry.
pub fn decode_index(bytes: &[u8]) -> Result<Index, WireError> {
    let mut reader = Reader { bytes, at: 0 };
    let rows = reader.u32()? as usize;
    let n_columns = reader.u32()? as usize;
    let mut columns = Vec::with_capacity(n_columns.min(bytes.len()));
    for _ in 0..n_columns {
        let at = reader.at;
        let kind = reader.u8()?;
        let name = reader.str()?;
        let key = match kind {
            KEY_DIM => DimKey::from_name(name).filter(|k| matches!(k, DimKey::Known(_))),
            KEY_TAG => Some(DimKey::Tag(name.to_string())),
            _ => None,
        }
        .ok_or(WireError::UnknownKey { at })?;
        let n_dict = reader.u32()? as usize;
        let mut dict = Vec::with_capacity(n_dict.min(bytes.len()));
        for _ in 0..n_dict {
            let at = reader.at;
            dict.push(match reader.u8()? {
                VALUE_NUM => DimValue::Num(reader.f64()?),
                VALUE_TEXT => DimValue::Text(reader.str()?.to_string()),
                _ => return Err(WireError::UnknownValueKind { at }),
            });
        }
        let codes = reader.codes(rows)?;
        columns.push(Column::new(key, dict, codes));
    }
    let n_metrics = reader.u32()? as usize;
    let mut metric_keys = Vec::with_capacity(n_metrics.min(bytes.len()));
    for _ in 0..n_metrics {
        let at = reader.at;
        let key = MetricKey::from_name(reader.str()?).ok_or(WireError::UnknownKey { at })?;
        metric_keys.push(key);
    }
    let n_sets = reader.u32()? as usize;
    let mut metric_sets = Vec::with_capacity(n_sets.min(bytes.len()));
    for _ in 0..n_sets {
        let len = reader.u32()? as usize;
        metric_sets.push(reader.u32s(len)?);
    }
    let row_metric_set = reader.codes(rows)?;
    let mut metric_values = Vec::with_capacity(metric_keys.len());
    for _ in 0..metric_keys.len() {
        let raw = reader.take(rows.saturating_mul(8))?;
        metric_values.push(raw.chunks_exact(8).map(f64_of).collect());
    }
    let any_inferred = reader.u8()? != 0;
    if reader.at != bytes.len() {
        return Err(WireError::TrailingBytes { at: reader.at });
    }
    Index::from_parts(
        rows,
        columns,
        metric_keys,
        metric_sets,
        row_metric_set,
        metric_values,
        any_inferred,
    )
    .map_err(|source| WireError::BadIndex {
        at: reader.at,
        source,
    })
}

/// The rows of `columns` in table form: first their schema ([`TableEncoder::head`]: the row
/// count, every dimension's dictionary, the metric keys and the distinct sets of metrics), then
/// batches of rows ([`TableEncoder::rows`]: each dimension's codes, each row's set of metrics
/// and each metric's values for those rows). The page appends a batch per task to the index it
/// keeps ([`TableRows`]), so no task decodes a million rows, and it never holds the whole index
/// twice (as one message and decoded); the worker never builds a record.
pub struct TableEncoder {
    index: Index,
}

impl TableEncoder {
    /// `None` when the rows carry what this form leaves out (inferred fields, per-request
    /// detail, time series, counts past 2^53, which an `f64` dictionary value would round):
    /// send record batches then.
    pub fn new(columns: &Columns) -> Option<TableEncoder> {
        let huge_count = columns.dims().iter().any(|c| match &c.data {
            DimData::Count(n) => n.values().iter().any(|&v| v > (1u64 << 53)),
            _ => false,
        });
        if columns.any_inferred()
            || columns.any_series()
            || columns.requests().total() > 0
            || huge_count
        {
            return None;
        }
        Some(TableEncoder {
            index: Index::from_columns(columns),
        })
    }

    /// Rows in all.
    pub fn len(&self) -> usize {
        self.index.rows
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.index.rows == 0
    }

    /// The schema, sent first: the row count, then the index without its rows in
    /// [`encode_index`]'s form.
    pub fn head(&self) -> Vec<u8> {
        let i = &self.index;
        let schema = Index {
            rows: 0,
            columns: i
                .columns
                .iter()
                .map(|c| Column::new(c.key.clone(), c.dict.clone(), Codes::default()))
                .collect(),
            metric_keys: i.metric_keys.clone(),
            metric_sets: i.metric_sets.clone(),
            row_metric_set: Codes::default(),
            metric_values: vec![Vec::new(); i.metric_keys.len()],
            any_inferred: false,
        };
        let mut out = Vec::new();
        put_u32(&mut out, i.rows as u32);
        out.extend(encode_index(&schema));
        out
    }

    /// A batch: the number of rows in `rows`, each dimension's codes for them, their sets of
    /// metrics and each metric's values (raw little-endian, so the page copies them).
    pub fn rows(&self, rows: std::ops::Range<usize>) -> Vec<u8> {
        let i = &self.index;
        let end = rows.end.min(i.rows);
        let start = rows.start.min(end);
        let n = end - start;
        let mut out =
            Vec::with_capacity(4 + n * (4 * (i.columns.len() + 1) + 8 * i.metric_keys.len()));
        put_u32(&mut out, n as u32);
        for c in &i.columns {
            put_codes(&mut out, &c.codes, start..end);
        }
        put_codes(&mut out, &i.row_metric_set, start..end);
        for values in &i.metric_values {
            for v in &values[start..end] {
                put_f64(&mut out, *v);
            }
        }
        out
    }
}

/// A dictionary value ready to set on records: text of a well-known dimension shared by every
/// record holding it, any other value as it is.
enum Prepared {
    Shared(Arc<str>),
    Value(DimValue),
}

/// A table in [`TableEncoder`]'s form received a batch at a time: the schema first, then each
/// batch appended to the index ([`TableRows::skip_rows`], or [`TableRows::decode_rows`] to
/// also rebuild the batch's records); then the index goes to the dataset.
pub struct TableRows {
    index: Index,
    total: usize,
    prepared: Vec<Vec<Prepared>>,
}

impl TableRows {
    /// Reads the schema ([`TableEncoder::head`]).
    pub fn new(head: &[u8]) -> Result<TableRows, WireError> {
        let mut reader = Reader { bytes: head, at: 0 };
        let total = reader.u32()? as usize;
        let index = decode_index(&head[reader.at..]).map_err(|e| e.shifted(reader.at))?;
        let prepared = index
            .columns
            .iter()
            .map(|c| {
                c.dict
                    .iter()
                    .map(|v| match (&c.key, v) {
                        (DimKey::Known(d), DimValue::Text(t)) if d.kind() == DimKind::Text => {
                            Prepared::Shared(Arc::from(t.as_str()))
                        }
                        _ => Prepared::Value(v.clone()),
                    })
                    .collect()
            })
            .collect();
        Ok(TableRows {
            index,
            total,
            prepared,
        })
    }

    /// Rows in all.
    pub fn len(&self) -> usize {
        self.total
    }

    /// Whether there are no rows.
    pub fn is_empty(&self) -> bool {
        self.total == 0
    }

    /// Rows received so far.
    pub fn done(&self) -> usize {
        self.index.rows
    }

    /// Appends the next batch ([`TableEncoder::rows`] of the rows that follow) to the index,
    /// checking every code and set first: a damaged batch changes nothing. Returns its rows.
    fn append(&mut self, bytes: &[u8]) -> Result<std::ops::Range<usize>, WireError> {
        let mut reader = Reader { bytes, at: 0 };
        let n = reader.u32()? as usize;
        let start = self.index.rows;
        let end = start.saturating_add(n);
        if end > self.total {
            return Err(WireError::RowsPastEnd { at: 0 });
        }
        let dangling = |at: usize| WireError::BadIndex {
            at,
            source: IndexError::Dangling,
        };
        let mut codes = Vec::with_capacity(self.index.columns.len());
        for c in &self.index.columns {
            let at = reader.at;
            let batch = reader.u32s(n)?;
            if batch.iter().any(|&x| x as usize > c.dict.len()) {
                return Err(dangling(at));
            }
            codes.push(batch);
        }
        let at = reader.at;
        let sets = reader.u32s(n)?;
        if sets
            .iter()
            .any(|&s| s as usize >= self.index.metric_sets.len())
        {
            return Err(dangling(at));
        }
        let mut values = Vec::with_capacity(self.index.metric_keys.len());
        for _ in 0..self.index.metric_keys.len() {
            let raw = reader.take(n.saturating_mul(8))?;
            values.push(raw.chunks_exact(8).map(f64_of).collect::<Vec<f64>>());
        }
        if reader.at != bytes.len() {
            return Err(WireError::TrailingBytes { at: reader.at });
        }
        if start == 0 {
            // Room for every row at once: columns grown by doubling hold the old and the new
            // block at each step and leave the old ones behind, and wasm memory never shrinks
            // (10^6 rows peaked at 1.9 times the columns' size). Only where it can be had.
            let rest = self.total;
            for c in &mut self.index.columns {
                c.codes.try_reserve_exact(rest);
            }
            self.index.row_metric_set.try_reserve_exact(rest);
            for column in &mut self.index.metric_values {
                let _ = column.try_reserve_exact(rest);
            }
        }
        for (c, batch) in self.index.columns.iter_mut().zip(codes) {
            c.missing += batch.iter().filter(|&&x| x == 0).count();
            c.codes.extend_from_slice(&batch);
        }
        self.index.row_metric_set.extend_from_slice(&sets);
        for (column, batch) in self.index.metric_values.iter_mut().zip(values) {
            column.extend(batch);
        }
        self.index.rows = end;
        Ok(start..end)
    }

    /// Takes the next batch ([`TableEncoder::rows`]) into the index without rebuilding its
    /// records (the page keeps a table as its index,
    /// [`crate::model::Dataset::extend_columnar`]); returns how many rows it held.
    pub fn skip_rows(&mut self, bytes: &[u8]) -> Result<usize, WireError> {
        self.append(bytes).map(|rows| rows.len())
    }

    /// The records of the next batch ([`TableEncoder::rows`] of the rows that follow).
    pub fn decode_rows(&mut self, bytes: &[u8]) -> Result<Vec<Record>, WireError> {
        let rows = self.append(bytes)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in rows {
            let mut r = Record::default();
            for (c, prepared) in self.index.columns.iter().zip(&self.prepared) {
                let code = c.codes.get(row) as usize;
                match (code.checked_sub(1).and_then(|k| prepared.get(k)), &c.key) {
                    (None, _) => {}
                    (Some(Prepared::Shared(t)), DimKey::Known(d)) => {
                        set_text(&mut r, *d, t.clone())
                    }
                    (Some(Prepared::Shared(t)), key) => r
                        .set_dim(key, Some(DimValue::Text(t.to_string())))
                        .map_err(|source| WireError::RefusedValue { at: 0, source })?,
                    (Some(Prepared::Value(v)), key) => r
                        .set_dim(key, Some(v.clone()))
                        .map_err(|source| WireError::RefusedValue { at: 0, source })?,
                }
            }
            let set = &self.index.metric_sets[self.index.row_metric_set.get(row) as usize];
            let mut metrics = Metrics::with_capacity(set.len());
            for &k in set {
                let k = k as usize;
                metrics.push_last(
                    self.index.metric_keys[k].clone(),
                    self.index.metric_values[k][row],
                );
            }
            r.metrics = metrics;
            out.push(r);
        }
        Ok(out)
    }

    /// The index of the rows received, for [`crate::model::Dataset::extend_columnar`] (or
    /// [`crate::model::Dataset::extend_indexed`] with the rebuilt records) once every batch
    /// is in.
    pub fn into_index(self) -> Index {
        self.index
    }
}
