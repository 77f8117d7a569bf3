//! Row mapping: table rows to records with a fixed column mapping. Targets are resolved once
//! per table, plain cells take a short path, text values repeated down a column share one
//! allocation, and wide column groups give one record per GPU.

use std::sync::Arc;

use super::cells::{cell_number, gpu_and_count, plain_decimal, plain_text, trim_cell};
use super::{ColumnMapping, Table};
use crate::ingest::fields::infer_dim;
use crate::ingest::names::parse_test_name;
use crate::ingest::text::{parse_quantity, snake, to_ms_factor};
use crate::ingest::{Ingested, Warning};
use crate::model::{Dim, DimKey, DimKind, DimValue, MetricKey, Metrics, Record};

/// Where a table's records came from, for warnings.
pub(crate) struct RowsContext<'a> {
    /// Dimensions applied to every record, with where they came from.
    pub context: &'a [(Dim, String, usize)],
    /// Extra tags on every record.
    pub tags: &'a [(&'a str, &'a str)],
    /// Placement prefix for warnings when rows have no line (`serving`, `[3]`).
    pub at: &'a str,
}

/// A mapping target resolved once per table, so rows are not re-parsing names.
#[derive(Clone)]
enum ColumnTarget {
    Skip,
    Metric {
        key: MetricKey,
        scale: f64,
    },
    Gpu,
    Dim {
        dim: Dim,
        text: bool,
        test_name: bool,
    },
    Tag(String),
    Unknown(String),
}

impl ColumnTarget {
    fn of(m: &ColumnMapping) -> ColumnTarget {
        let Some(target) = &m.target else {
            return ColumnTarget::Skip;
        };
        if let Some(key) = MetricKey::from_name(target) {
            return ColumnTarget::Metric {
                key,
                scale: m.scale,
            };
        }
        match DimKey::from_name(target) {
            Some(DimKey::Known(Dim::Gpu)) => ColumnTarget::Gpu,
            Some(DimKey::Known(dim)) => ColumnTarget::Dim {
                dim,
                text: dim.kind() == DimKind::Text,
                test_name: dim == Dim::Label && snake(&m.column) == "test_name",
            },
            Some(DimKey::Tag(k)) => ColumnTarget::Tag(k),
            None => ColumnTarget::Unknown(target.clone()),
        }
    }
}

fn place_of(line: usize, at: &str) -> String {
    if line > 0 {
        format!("line {line}")
    } else {
        at.to_string()
    }
}

/// Sets the field of a text dimension ([`DimKind::Text`]); the mapping never gives another.
fn set_text(r: &mut Record, d: Dim, v: Arc<str>) {
    if let Some(slot) = r.text_field_mut(d) {
        *slot = Some(v);
    }
}

/// The text values of one column seen so far, so that records repeating a value (a model, a
/// GPU) share one allocation. Only the first [`TextInterner::MAX`] distinct values are kept, so a
/// column of unique values costs a few comparisons per row and no memory.
#[derive(Clone, Default)]
struct TextInterner {
    /// Each value with its [`fingerprint`](TextInterner::fingerprint), compared first.
    values: Vec<(u64, Arc<str>)>,
}

impl TextInterner {
    const MAX: usize = 16;

    /// The length and the first seven bytes: tells most distinct short values apart
    /// (`llama-0`, `llama-1`) without comparing them.
    #[inline]
    fn fingerprint(text: &str) -> u64 {
        let b = text.as_bytes();
        let mut head = [0u8; 8];
        let n = b.len().min(7);
        head[..n].copy_from_slice(&b[..n]);
        head[7] = b.len().min(255) as u8;
        u64::from_le_bytes(head)
    }

    fn get(&mut self, text: &str) -> Arc<str> {
        let f = Self::fingerprint(text);
        if let Some((_, v)) = self.values.iter().find(|(g, v)| *g == f && &**v == text) {
            return Arc::clone(v);
        }
        let v: Arc<str> = text.into();
        if self.values.len() < Self::MAX {
            self.values.push((f, Arc::clone(&v)));
        }
        v
    }
}

/// What [`RowMapper::row`] can do with a column's cell without [`apply_cell`], when the cell
/// is plain (no surrounding space, no unit, no placeholder); anything else goes through
/// [`apply_cell`], which gives the same result for plain cells.
#[derive(Clone, Copy)]
enum PlainCellPath {
    /// A metric: a plain decimal, times the column's scale.
    Metric(f64),
    /// A text dimension (not the GPU, which may read `8xH100`).
    Text(Dim),
    /// A numeric dimension: a plain decimal.
    Number(Dim),
    /// Always [`apply_cell`].
    Never,
}

impl PlainCellPath {
    fn of(target: &ColumnTarget) -> PlainCellPath {
        match target {
            ColumnTarget::Metric { scale, .. } => PlainCellPath::Metric(*scale),
            ColumnTarget::Dim {
                dim,
                text: true,
                test_name: false,
            } => PlainCellPath::Text(*dim),
            ColumnTarget::Dim {
                dim,
                text: false,
                test_name: false,
            } => PlainCellPath::Number(*dim),
            _ => PlainCellPath::Never,
        }
    }
}

/// Applies one cell; returns the measured value of a metric cell (scaled, not yet set: the
/// caller sets the row's metrics in key order).
fn apply_cell(
    r: &mut Record,
    m: &ColumnMapping,
    target: &ColumnTarget,
    texts: &mut TextInterner,
    cell: &str,
    (line, at): (usize, &str),
    warnings: &mut Vec<Warning>,
) -> Option<f64> {
    let cell = trim_cell(cell);
    if cell.len() <= 4
        && (cell.is_empty()
            || cell == "-"
            || cell.eq_ignore_ascii_case("n/a")
            || cell.eq_ignore_ascii_case("none"))
    {
        return None;
    }
    match target {
        ColumnTarget::Skip => {}
        ColumnTarget::Metric { key, scale } => {
            let Some((v, unit)) = cell_number(cell) else {
                warnings.push(Warning::at(
                    place_of(line, at),
                    format!("{}: {cell:?} is not a number, ignored", m.column),
                ));
                return None;
            };
            let mut scale = *scale;
            if !unit.is_empty() && unit != "%" {
                if let (MetricKey::Latency(..), Some(f)) = (key, to_ms_factor(unit)) {
                    scale = f;
                    if f != 1.0 {
                        crate::ingest::fields::note_in(
                            warnings,
                            format!("{}: values in {unit} converted to ms", m.column),
                        );
                    }
                }
            }
            return Some(v * scale);
        }
        ColumnTarget::Gpu => {
            // `8xH100`, `H100 x 8` → gpu H100, gpu_count 8.
            if let Some((c, gpu)) = gpu_and_count(cell) {
                r.gpu_count = Some(c);
                r.gpu = Some(texts.get(gpu));
                return None;
            }
            r.gpu = Some(texts.get(cell));
        }
        ColumnTarget::Dim {
            dim,
            text,
            test_name,
        } => {
            let set = if *text {
                // What `set_known` does with text, without its detour through `Display`.
                set_text(r, *dim, texts.get(cell));
                Ok(())
            } else {
                let value = match cell_number(cell) {
                    Some((v, _)) => DimValue::Num(v),
                    None => DimValue::Text(cell.to_string()),
                };
                r.set_known(*dim, Some(value))
            };
            match set {
                // A value read from the row beats one inferred from another cell.
                Ok(()) => {
                    if !r.inferred.is_empty() {
                        r.inferred.remove(dim.name());
                    }
                }
                Err(e) => warnings.push(Warning::at(
                    place_of(line, at),
                    format!("{}: {e}, ignored", m.column),
                )),
            }
            if *test_name {
                parse_test_name(cell).apply(r, "test name");
            }
        }
        ColumnTarget::Tag(k) => {
            r.tags.insert(k.clone(), cell.to_string());
        }
        ColumnTarget::Unknown(target) => {
            warnings.push(Warning::at(
                place_of(line, at),
                format!("{}: mapped to unknown field {target:?}, ignored", m.column),
            ));
        }
    }
    None
}

/// The cells of one table row, however it was split.
pub(crate) trait Cells {
    /// Cell `i`, if the row has that many.
    fn cell(&self, i: usize) -> Option<&str>;
    /// Whether any cell holds more than whitespace.
    fn any_filled(&self) -> bool;
}

impl Cells for csv::StringRecord {
    fn cell(&self, i: usize) -> Option<&str> {
        self.get(i)
    }
    fn any_filled(&self) -> bool {
        self.iter().any(|c| !c.trim().is_empty())
    }
}

impl Cells for [&str] {
    fn cell(&self, i: usize) -> Option<&str> {
        self.get(i).copied()
    }
    fn any_filled(&self) -> bool {
        self.iter().any(|c| !c.trim().is_empty())
    }
}

/// Turns rows into records with a mapping; wide column groups give one record per GPU.
/// Targets are resolved once, so rows can be streamed through [`RowMapper::row`].
#[derive(Clone)]
pub(crate) struct RowMapper<'a> {
    mapping: &'a [ColumnMapping],
    targets: Vec<ColumnTarget>,
    /// Per column: the shortcut for plain cells.
    plain_paths: Vec<PlainCellPath>,
    /// Per column: its text values, shared between records.
    texts: Vec<TextInterner>,
    /// Metric columns per record, to size each record's metrics once.
    metrics_per_record: usize,
    /// Per group: the columns it reads, in column order (columns of other GPUs left out).
    group_columns: Vec<Vec<usize>>,
    /// Per group: its metric columns by key (stably), so each row's metrics are appended in
    /// order.
    group_metrics: Vec<Vec<usize>>,
    /// Per column: the value the current record measured in it.
    measured: Vec<Option<f64>>,
    groups: Vec<Option<&'a str>>,
    /// Per group: its GPU (or engine, or test), shared by the group's records.
    group_gpus: Vec<Option<Arc<str>>>,
    /// Per group: what its name is, a GPU's (`throughput_a100`), an engine's (`vLLM TTFT`)
    /// or a llama-bench test's (`pp512`).
    group_kinds: Vec<GroupKind>,
    context: Vec<(Dim, DimValue, String)>,
    tags: &'a [(&'a str, &'a str)],
    at: &'a str,
    /// The file and format every record is stamped with here, while it is being written,
    /// rather than in a later pass over all records (see `Ingested::stamped`).
    pub(super) stamp: Option<(Arc<str>, Arc<str>)>,
    /// Whether any record got an inferred value.
    pub(super) any_inferred: bool,
}

impl<'a> RowMapper<'a> {
    pub(crate) fn new(mapping: &'a [ColumnMapping], ctx: &RowsContext<'a>) -> Self {
        let targets: Vec<ColumnTarget> = mapping.iter().map(ColumnTarget::of).collect();
        let mut gpus: Vec<&str> = Vec::new();
        for m in mapping {
            if let Some(g) = m.group() {
                if !gpus.contains(&g) {
                    gpus.push(g);
                }
            }
        }
        let groups: Vec<Option<&str>> = if gpus.is_empty() {
            vec![None]
        } else {
            gpus.iter().map(|g| Some(*g)).collect()
        };
        let context = ctx
            .context
            .iter()
            .map(|(d, v, l)| {
                let value = if d.kind() == DimKind::Text {
                    DimValue::Text(v.clone())
                } else {
                    parse_quantity(v)
                        .map_or_else(|| DimValue::Text(v.clone()), |(n, _)| DimValue::Num(n))
                };
                // Line 0: known from the table's own columns (a llama-bench table), no heading.
                let from = if *l == 0 {
                    "llama-bench table".to_string()
                } else {
                    format!("heading line {l}")
                };
                (*d, value, from)
            })
            .collect();
        let metric_columns = targets
            .iter()
            .filter(|s| matches!(s, ColumnTarget::Metric { .. }))
            .count();
        let metrics_per_record = metric_columns.div_ceil(groups.len());
        let group_columns: Vec<Vec<usize>> = groups
            .iter()
            .map(|group| {
                (0..mapping.len())
                    .filter(|i| mapping[*i].group().is_none() || mapping[*i].group() == *group)
                    .collect()
            })
            .collect();
        let group_metrics = group_columns
            .iter()
            .map(|columns| {
                let mut order: Vec<usize> = columns
                    .iter()
                    .copied()
                    .filter(|i| matches!(targets[*i], ColumnTarget::Metric { .. }))
                    .collect();
                crate::model::order::sort_by(&mut order, |a, b| {
                    match (&targets[*a], &targets[*b]) {
                        (
                            ColumnTarget::Metric { key: ka, .. },
                            ColumnTarget::Metric { key: kb, .. },
                        ) => ka.cmp(kb),
                        _ => std::cmp::Ordering::Equal,
                    }
                });
                order
            })
            .collect();
        RowMapper {
            plain_paths: targets.iter().map(PlainCellPath::of).collect(),
            group_columns,
            group_metrics,
            measured: vec![None; mapping.len()],
            mapping,
            texts: mapping.iter().map(|_| TextInterner::default()).collect(),
            metrics_per_record,
            group_gpus: groups.iter().map(|g| g.map(Arc::from)).collect(),
            group_kinds: groups
                .iter()
                .map(|g| {
                    let of = |f: fn(&ColumnMapping) -> Option<&str>| {
                        g.is_some_and(|g| mapping.iter().any(|m| f(m) == Some(g)))
                    };
                    if of(|m| m.gpu.as_deref()) {
                        GroupKind::Gpu
                    } else if of(|m| m.engine.as_deref()) {
                        GroupKind::Engine
                    } else {
                        GroupKind::Test
                    }
                })
                .collect(),
            targets,
            groups,
            context,
            tags: ctx.tags,
            at: ctx.at,
            stamp: None,
            any_inferred: false,
        }
    }

    /// The same mapper with its own copies of the shared texts (values seen, GPUs, stamp), so
    /// that a thread using it counts references in memory no other thread writes to.
    #[cfg(not(target_arch = "wasm32"))]
    pub(super) fn detached(&self) -> Self {
        let own = |v: &Arc<str>| -> Arc<str> { Arc::from(&**v) };
        let mut m = self.clone();
        for texts in &mut m.texts {
            for (_, v) in &mut texts.values {
                *v = own(v);
            }
        }
        for g in m.group_gpus.iter_mut().flatten() {
            *g = own(g);
        }
        if let Some((source, format)) = &mut m.stamp {
            *source = own(source);
            *format = own(format);
        }
        m
    }

    /// How many records each row gives.
    pub(super) fn per_row(&self) -> usize {
        self.groups.len()
    }

    /// The records of one row, appended to `records`.
    pub(crate) fn row<C: Cells + ?Sized, S: RecordSink>(
        &mut self,
        line: usize,
        cells: &C,
        records: &mut S,
        warnings: &mut Vec<Warning>,
    ) {
        for g in 0..self.groups.len() {
            // Filled in where it stays: the sink says where that is (a vector, or one
            // thread's part of it), and a row that measures nothing is taken back.
            let Some(r) = records.push(Record {
                metrics: Metrics::with_capacity(self.metrics_per_record),
                ..Record::default()
            }) else {
                continue;
            };
            let mut measured = false;
            for &i in &self.group_columns[g] {
                let Some(cell) = cells.cell(i) else {
                    continue;
                };
                let fast = match self.plain_paths[i] {
                    PlainCellPath::Metric(scale) => plain_decimal(cell).map(|v| Some(v * scale)),
                    PlainCellPath::Text(dim) if plain_text(cell) => {
                        set_text(r, dim, self.texts[i].get(cell));
                        Some(None)
                    }
                    // A value the dimension cannot hold goes to `apply_cell`, which says why.
                    PlainCellPath::Number(dim) => plain_decimal(cell)
                        .and_then(|v| r.set_known(dim, Some(DimValue::Num(v))).ok())
                        .map(|()| None),
                    _ => None,
                };
                let value = match fast {
                    Some(value) => {
                        if value.is_none() && !r.inferred.is_empty() {
                            // A value read from the row beats one inferred from another cell.
                            if let ColumnTarget::Dim { dim, .. } = self.targets[i] {
                                r.inferred.remove(dim.name());
                            }
                        }
                        value
                    }
                    None => apply_cell(
                        r,
                        &self.mapping[i],
                        &self.targets[i],
                        &mut self.texts[i],
                        cell,
                        (line, self.at),
                        warnings,
                    ),
                };
                if value.is_some() {
                    measured = true;
                    self.measured[i] = value;
                }
            }
            if !measured {
                records.pop();
                let group = self.groups[g];
                if group.is_none() || cells.any_filled() {
                    warnings.push(Warning::at(
                        place_of(line, self.at),
                        match group {
                            Some(g) => format!("no measured value for {g}, skipped"),
                            None => "no measured value, row skipped".into(),
                        },
                    ));
                }
                continue;
            }
            // In key order, so each is an append; of two columns with the same key the later
            // one wins, as when they were set cell by cell.
            for &i in &self.group_metrics[g] {
                if let (Some(v), ColumnTarget::Metric { key, .. }) =
                    (self.measured[i].take(), &self.targets[i])
                {
                    r.metrics.push_last(key.clone(), v);
                }
            }
            if let Some(name) = &self.group_gpus[g] {
                match self.group_kinds[g] {
                    GroupKind::Gpu => r.gpu = Some(Arc::clone(name)),
                    GroupKind::Engine => r.engine = Some(Arc::clone(name)),
                    GroupKind::Test => {
                        r.tags.insert("test".to_string(), name.to_string());
                    }
                }
            }
            for (d, v, from) in &self.context {
                infer_dim(r, *d, v.clone(), from);
            }
            for (k, v) in self.tags {
                r.tags.insert((*k).to_string(), (*v).to_string());
            }
            if let Some((source, format)) = &self.stamp {
                r.source = Some(Arc::clone(source));
                r.format = Some(Arc::clone(format));
            }
            self.any_inferred |= !r.inferred.is_empty();
        }
    }
}

/// What a column group's name is: the dimension its records take it as.
#[derive(Clone, Copy, Debug)]
enum GroupKind {
    Gpu,
    Engine,
    Test,
}

/// Where [`RowMapper::row`] puts records: a vector, or (for rows mapped on several threads) a
/// slice of one.
pub(crate) trait RecordSink {
    /// Appends `r` and returns it for filling in; `None` when there is no room.
    fn push(&mut self, r: Record) -> Option<&mut Record>;
    /// Removes the record appended last.
    fn pop(&mut self);
}

impl RecordSink for Vec<Record> {
    #[inline]
    fn push(&mut self, r: Record) -> Option<&mut Record> {
        Vec::push(self, r);
        self.last_mut()
    }

    #[inline]
    fn pop(&mut self) {
        Vec::pop(self);
    }
}

/// Turns table rows into records with `mapping`; wide column groups give one record per GPU.
pub(crate) fn rows_to_records(
    t: &Table,
    mapping: &[ColumnMapping],
    ctx: &RowsContext<'_>,
    out: &mut Ingested,
) {
    let mut mapper = RowMapper::new(mapping, ctx);
    out.records.reserve(t.rows.len() * mapper.per_row());
    for (line, cells) in &t.rows {
        mapper.row(*line, cells, &mut out.records, &mut out.warnings);
    }
}
