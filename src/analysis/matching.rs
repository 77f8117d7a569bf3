//! Matching records of two sides (baseline/candidate, old/new) on the values of every other
//! dimension: which dimensions form the match key, which pairs match, what is left over.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::export::TextColumn;
use crate::model::{BorrowedDim, ColumnRef, Dataset, Dim, DimKey, DimKind, DimValue, Record};

/// The dimensions left out of every match key unless the caller says otherwise: `source`,
/// `format`, `date` and `label` describe where and when a result was written, not the
/// configuration that was measured.
pub fn default_ignored() -> BTreeSet<DimKey> {
    crate::model::order::set_of(
        [Dim::Source, Dim::Format, Dim::Date, Dim::Label]
            .into_iter()
            .map(DimKey::Known),
    )
}

/// The values of the match-key dimensions of one record, aligned with the key's dimensions
/// (`None`: the record has no value; it only matches records that have none either).
pub type MatchKey = Vec<Option<DimValue>>;

/// A match key with several records on at least one side: ambiguous, so no pair is formed
/// for it (picking one silently would hide a problem). Every record sharing the key, on both
/// sides, is listed here and nowhere else.
#[derive(Clone, Debug, PartialEq)]
pub struct DuplicateKey {
    /// The shared key values, aligned with the key's dimensions.
    pub key: MatchKey,
    /// Baseline (or old-run) records with this key (caller's indices).
    pub baseline_records: Vec<usize>,
    /// Candidate (or new-run) records with this key (caller's indices).
    pub candidate_records: Vec<usize>,
}

impl DuplicateKey {
    /// Records on both sides.
    pub fn len(&self) -> usize {
        self.baseline_records.len() + self.candidate_records.len()
    }

    /// Whether no record has the key (never true for a reported key).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What matching two sides leaves besides the pairs: the key, the dimensions tied to the
/// sides, the records without a partner and the ambiguous keys. The same for an improvement
/// table and a regression report (there the old run is the baseline, the new one the
/// candidate), so both say the same things the same way.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MatchSummary {
    /// The dimensions records were matched on, canonical order.
    pub key_dims: Vec<DimKey>,
    /// Dimensions dropped from the key because each side has one, different, value.
    pub tied_dims: Vec<DimKey>,
    /// Baseline (old-run) records without a candidate for their key.
    pub unmatched_baseline: Vec<usize>,
    /// Candidate (new-run) records without a baseline for their key.
    pub unmatched_candidate: Vec<usize>,
    /// Keys with several records on a side: not compared, listed instead (with every record
    /// of both sides sharing the key); their records are in no other list.
    pub duplicates: Vec<DuplicateKey>,
}

impl MatchSummary {
    /// One exportable column per match-key dimension, numeric where the dimension is.
    pub fn key_columns(&self) -> Vec<TextColumn> {
        self.key_dims
            .iter()
            .map(|d| {
                TextColumn::new(
                    d.name(),
                    d.label(),
                    crate::analysis::table::Column::Dim(d.clone()).is_numeric(),
                )
            })
            .collect()
    }
}

/// The outcome of matching two sides.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Matching {
    /// (key, baseline index, candidate index), sorted by key.
    pub pairs: Vec<(MatchKey, usize, usize)>,
    /// Everything else.
    pub summary: MatchSummary,
}

/// The single value a dimension takes on every record of a side, or `None` when it varies.
/// The inner `Option` is "no value", which counts as a value here.
fn constant_value(records: &[(usize, &Record)], key: &DimKey) -> Option<Option<DimValue>> {
    let first = records.first()?.1.dim(key);
    records
        .iter()
        .all(|(_, r)| r.dim_equals(key, first.as_ref()))
        .then_some(first)
}

/// The records of `side` by their values of `key_dims`, each group's records in `side`
/// order. Records are grouped by borrowed values and each group's key is built once; should
/// two groups' keys compare equal, the records are grouped one by one instead.
fn group_by_key(side: &[(usize, &Record)], key_dims: &[DimKey]) -> BTreeMap<MatchKey, Vec<usize>> {
    let mut ids: HashMap<Vec<Option<BorrowedDim<'_>>>, usize> = HashMap::new();
    let mut groups: Vec<(MatchKey, Vec<usize>)> = Vec::new();
    let mut buf: Vec<Option<BorrowedDim<'_>>> = Vec::with_capacity(key_dims.len());
    for (i, r) in side {
        buf.clear();
        buf.extend(key_dims.iter().map(|d| r.dim_borrowed(d)));
        let g = match ids.get(buf.as_slice()) {
            Some(&g) => g,
            None => {
                ids.insert(buf.clone(), groups.len());
                groups.push((key_dims.iter().map(|d| r.dim(d)).collect(), Vec::new()));
                groups.len() - 1
            }
        };
        groups[g].1.push(*i);
    }
    let n = groups.len();
    let m: BTreeMap<MatchKey, Vec<usize>> = crate::model::order::map_of(groups);
    if m.len() == n {
        return m;
    }
    let mut m: BTreeMap<MatchKey, Vec<usize>> = BTreeMap::new();
    for (i, r) in side {
        m.entry(key_dims.iter().map(|d| r.dim(d)).collect())
            .or_default()
            .push(*i);
    }
    m
}

/// Whether a dimension may be tied to the sides: text dimensions and tags only. Numeric ones
/// (lengths, batch size, load, parallelism) define the work done, so a difference there means
/// the two sides did different work and must stay unmatched unless the caller ignores it.
fn may_tie(d: &DimKey) -> bool {
    match d {
        DimKey::Known(k) => k.kind() == DimKind::Text,
        DimKey::Tag(_) => true,
    }
}

/// Matches `baseline` against `candidate` on every dimension either side has, except those in
/// `exclude`, measured token lengths ([`crate::model::points::is_measured_column`]) and those *tied
/// to the sides*: a text dimension (or tag) that is constant on each
/// side but takes a different value on each (e.g. `engine_version` when comparing engines)
/// could never match, so it is left out of the key and reported in `tied_dims`.
pub(crate) fn match_sides(
    baseline: &[(usize, &Record)],
    candidate: &[(usize, &Record)],
    exclude: &BTreeSet<DimKey>,
) -> Matching {
    // Every dimension some record has, without building values.
    let mut known = vec![false; Dim::ALL.len()];
    let mut dims: BTreeSet<DimKey> = BTreeSet::new();
    for (_, r) in baseline.iter().chain(candidate) {
        for (seen, d) in known.iter_mut().zip(Dim::ALL) {
            *seen = *seen || r.has_known(*d);
        }
        for t in r.tags.keys() {
            if !dims.contains(&DimKey::Tag(t.clone())) {
                dims.insert(DimKey::Tag(t.clone()));
            }
        }
    }
    dims.extend(
        Dim::ALL
            .iter()
            .zip(known)
            .filter(|(_, k)| *k)
            .map(|(d, _)| DimKey::Known(*d)),
    );
    // Measured token lengths are results, not configuration: they never match exactly.
    let measured =
        crate::model::points::measured_dims_of(baseline.iter().chain(candidate).map(|(_, r)| *r));
    let mut key_dims = Vec::new();
    let mut tied_dims = Vec::new();
    for d in dims
        .into_iter()
        .filter(|d| !exclude.contains(d) && !measured.contains(d))
    {
        match (constant_value(baseline, &d), constant_value(candidate, &d)) {
            (Some(b), Some(c)) if b != c && may_tie(&d) => tied_dims.push(d),
            _ => key_dims.push(d),
        }
    }
    let base = group_by_key(baseline, &key_dims);
    let cand = group_by_key(candidate, &key_dims);
    pair_up(base, cand, key_dims, tied_dims)
}

/// The pairs, unmatched records and duplicate keys of two sides grouped by match key.
fn pair_up(
    base: BTreeMap<MatchKey, Vec<usize>>,
    mut cand: BTreeMap<MatchKey, Vec<usize>>,
    key_dims: Vec<DimKey>,
    tied_dims: Vec<DimKey>,
) -> Matching {
    let mut pairs = Vec::new();
    let mut unmatched_baseline = Vec::new();
    let mut duplicates = Vec::new();
    for (key, b) in base {
        match cand.remove(&key) {
            Some(c) if b.len() == 1 && c.len() == 1 => pairs.push((key, b[0], c[0])),
            Some(c) => duplicates.push(DuplicateKey {
                key,
                baseline_records: b,
                candidate_records: c,
            }),
            None if b.len() == 1 => unmatched_baseline.extend(b),
            None => duplicates.push(DuplicateKey {
                key,
                baseline_records: b,
                candidate_records: Vec::new(),
            }),
        }
    }
    let mut unmatched_candidate = Vec::new();
    for (key, c) in cand {
        if c.len() > 1 {
            duplicates.push(DuplicateKey {
                key,
                baseline_records: Vec::new(),
                candidate_records: c,
            });
        } else {
            unmatched_candidate.extend(c);
        }
    }
    crate::model::order::sort(&mut unmatched_baseline);
    crate::model::order::sort(&mut unmatched_candidate);
    Matching {
        pairs,
        summary: MatchSummary {
            key_dims,
            tied_dims,
            unmatched_baseline,
            unmatched_candidate,
            duplicates,
        },
    }
}

/// [`match_sides`] over the rows `baseline` and `candidate` of `ds`, read from its index
/// (dictionary codes) instead of records: the same outcome, since a dimension's dictionary
/// holds each value once and in order, so equal codes are equal values and code order is
/// value order (code 0, no value, first, as `None` sorts first). No record is read, so a
/// dataset kept as columns ([`Dataset::record`]) is matched without building any.
pub(crate) fn match_rows(
    ds: &Dataset,
    baseline: &[usize],
    candidate: &[usize],
    exclude: &BTreeSet<DimKey>,
) -> Matching {
    let code = |col: &ColumnRef<'_>, row: usize| col.codes.get(row);
    let both = || baseline.iter().chain(candidate).copied();
    // Every dimension some row of either side has a value for.
    let dims: BTreeSet<DimKey> = crate::model::order::set_of(
        ds.dim_keys()
            .filter(|k| {
                ds.column(k)
                    .is_some_and(|c| both().any(|row| code(&c, row) != 0))
            })
            .cloned(),
    );
    // Measured token lengths, as [`crate::model::points::measured_dims_of`] finds them.
    let measured: Vec<DimKey> = crate::model::points::LENGTH_DIMS
        .iter()
        .map(|d| DimKey::Known(*d))
        .filter(|k| {
            let Some(c) = ds.column(k) else {
                return false;
            };
            let mut seen = vec![false; c.dict.len() + 1];
            let mut with_value = 0;
            for row in both() {
                let x = code(&c, row);
                if x != 0 {
                    with_value += 1;
                    seen[x as usize] = true;
                }
            }
            let distinct: Vec<DimValue> = c
                .dict
                .iter()
                .zip(&seen[1..])
                .filter(|(_, s)| **s)
                .map(|(v, _)| v.clone())
                .collect();
            crate::model::points::is_measured_column(&distinct, with_value)
        })
        .collect();
    // The single code a dimension takes on every row of a side.
    let constant = |side: &[usize], col: &ColumnRef<'_>| -> Option<u32> {
        let first = code(col, *side.first()?);
        side.iter()
            .all(|&row| code(col, row) == first)
            .then_some(first)
    };
    let mut key_dims = Vec::new();
    let mut tied_dims = Vec::new();
    for d in dims
        .into_iter()
        .filter(|d| !exclude.contains(d) && !measured.contains(d))
    {
        let tied = ds.column(&d).is_some_and(|c| {
            matches!(
                (constant(baseline, &c), constant(candidate, &c)),
                (Some(b), Some(c)) if b != c
            )
        });
        if tied && may_tie(&d) {
            tied_dims.push(d);
        } else {
            key_dims.push(d);
        }
    }
    let columns: Vec<Option<ColumnRef<'_>>> = key_dims.iter().map(|k| ds.column(k)).collect();
    let group = |side: &[usize]| -> BTreeMap<MatchKey, Vec<usize>> {
        let mut combos = crate::model::points::Combos::new(
            columns.iter().map(|c| c.map(|c| (c.codes, c.dict.len()))),
        );
        let mut groups: Vec<(Vec<u32>, Vec<usize>)> = Vec::new();
        for &row in side {
            let id = combos.id(row) as usize;
            if id == groups.len() {
                let codes = columns
                    .iter()
                    .map(|c| c.as_ref().map_or(0, |c| code(c, row)))
                    .collect();
                groups.push((codes, Vec::new()));
            }
            if let Some(g) = groups.get_mut(id) {
                g.1.push(row);
            }
        }
        // Code order is value order: sorting codes sorts the keys as the map would.
        crate::model::order::sort_by(&mut groups, |a, b| a.0.cmp(&b.0));
        crate::model::order::map_of(groups.into_iter().map(|(codes, rows)| {
            let key: MatchKey = columns
                .iter()
                .zip(&codes)
                .map(|(c, &x)| match (c, x) {
                    (Some(c), x) if x != 0 => c.dict.get(x as usize - 1).cloned(),
                    _ => None,
                })
                .collect();
            (key, rows)
        }))
    };
    let base = group(baseline);
    let cand = group(candidate);
    pair_up(base, cand, key_dims, tied_dims)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(engine: &str, version: &str, input: f64) -> Record {
        Record {
            engine: Some(engine.into()),
            engine_version: Some(version.into()),
            input_len: Some(input),
            source: Some(format!("{engine}.json").into()),
            ..Record::default()
        }
    }

    #[test]
    fn tied_dimensions_leave_the_key_and_duplicates_are_reported() {
        let recs = [
            rec("vllm", "0.2", 128.0),
            rec("vllm", "0.2", 512.0),
            rec("tgi", "1.3", 128.0),
            rec("tgi", "1.3", 512.0),
            rec("tgi", "1.3", 512.0),
            rec("tgi", "1.3", 2048.0),
        ];
        let b: Vec<(usize, &Record)> = recs.iter().enumerate().take(2).collect();
        let c: Vec<(usize, &Record)> = recs.iter().enumerate().skip(2).collect();
        let mut exclude = default_ignored();
        exclude.insert(Dim::Engine.into());
        let m = match_sides(&b, &c, &exclude);
        assert_eq!(m.summary.key_dims, vec![DimKey::Known(Dim::InputLen)]);
        assert_eq!(m.summary.tied_dims, vec![DimKey::Known(Dim::EngineVersion)]);
        assert_eq!(m.pairs.len(), 1);
        assert_eq!((m.pairs[0].1, m.pairs[0].2), (0, 2));
        assert_eq!(m.summary.duplicates.len(), 1);
        assert_eq!(m.summary.duplicates[0].baseline_records, vec![1]);
        assert_eq!(m.summary.duplicates[0].candidate_records, vec![3, 4]);
        assert_eq!(m.summary.unmatched_candidate, vec![5]);
        assert!(m.summary.unmatched_baseline.is_empty());
    }

    proptest::proptest! {
        /// Every record lands in exactly one place: a pair, an unmatched list or a duplicate.
        #[test]
        fn every_record_is_accounted_for_once(
            base in proptest::collection::vec((0u8..3, 0u8..3), 0..12),
            cand in proptest::collection::vec((0u8..3, 0u8..3), 0..12),
        ) {
            let make = |(m, b): (u8, u8)| Record {
                model: Some(format!("m{m}").into()),
                batch_size: Some(u64::from(b)),
                ..Record::default()
            };
            let recs: Vec<Record> = base.iter().chain(&cand).map(|&x| make(x)).collect();
            let b: Vec<(usize, &Record)> = recs.iter().enumerate().take(base.len()).collect();
            let c: Vec<(usize, &Record)> = recs.iter().enumerate().skip(base.len()).collect();
            let m = match_sides(&b, &c, &default_ignored());
            let mut seen: Vec<usize> = m
                .pairs
                .iter()
                .flat_map(|(_, x, y)| [*x, *y])
                .chain(m.summary.unmatched_baseline.iter().copied())
                .chain(m.summary.unmatched_candidate.iter().copied())
                .chain(m.summary.duplicates.iter().flat_map(|d| {
                    d.baseline_records.iter().chain(&d.candidate_records).copied()
                }))
                .collect();
            seen.sort_unstable();
            let everyone: Vec<usize> = (0..recs.len()).collect();
            proptest::prop_assert_eq!(seen, everyone);
            for (key, x, y) in &m.pairs {
                let kx: MatchKey = m.summary.key_dims.iter().map(|d| recs[*x].dim(d)).collect();
                let ky: MatchKey = m.summary.key_dims.iter().map(|d| recs[*y].dim(d)).collect();
                proptest::prop_assert_eq!(&kx, key);
                proptest::prop_assert_eq!(&ky, key);
            }
        }
    }

    proptest::proptest! {
        /// Matching rows by their dictionary codes gives what matching their records gives:
        /// key, tied dimensions, pairs, leftovers and duplicates, in the same order.
        #[test]
        fn matching_codes_equals_matching_records(
            rows in proptest::collection::vec(
                (0u8..3, 0u8..3, proptest::option::of(0u8..4), 0u8..2, 0u8..5),
                0..24,
            ),
            split in 0usize..24,
            ignore_batch in proptest::bool::ANY,
        ) {
            let recs: Vec<Record> = rows
                .iter()
                .map(|&(side, model, batch, version, len)| Record {
                    engine: Some(["vllm", "tgi", "sglang"][side as usize].into()),
                    model: Some(format!("m{model}").into()),
                    batch_size: batch.map(u64::from),
                    engine_version: Some(format!("v{version}").into()),
                    // Fractional and varied on some draws: a measured length.
                    output_len: Some(100.0 + f64::from(len) * 0.5),
                    ..Record::default()
                })
                .collect();
            let ds = Dataset::new(recs.clone());
            let split = split.min(recs.len());
            // Sides by engine, as an improvement picks them; `split` leaves rows out.
            let side = |name: &str, from: usize| -> Vec<usize> {
                (from..recs.len())
                    .filter(|&i| recs[i].engine.as_deref() == Some(name))
                    .collect()
            };
            let (b, c) = (side("vllm", split), side("tgi", 0));
            let mut exclude = default_ignored();
            exclude.insert(Dim::Engine.into());
            if ignore_batch {
                exclude.insert(Dim::BatchSize.into());
            }
            let by_records = match_sides(
                &b.iter().map(|&i| (i, &recs[i])).collect::<Vec<_>>(),
                &c.iter().map(|&i| (i, &recs[i])).collect::<Vec<_>>(),
                &exclude,
            );
            proptest::prop_assert_eq!(match_rows(&ds, &b, &c, &exclude), by_records);
        }
    }

    #[test]
    fn numeric_dimensions_never_tie() {
        let recs = [rec("vllm", "0.2", 128.0), rec("tgi", "1.3", 512.0)];
        let b: Vec<(usize, &Record)> = vec![(0, &recs[0])];
        let c: Vec<(usize, &Record)> = vec![(1, &recs[1])];
        let mut exclude = default_ignored();
        exclude.insert(Dim::Engine.into());
        let m = match_sides(&b, &c, &exclude);
        assert_eq!(m.summary.tied_dims, vec![DimKey::Known(Dim::EngineVersion)]);
        assert!(m.pairs.is_empty());
        assert_eq!(
            (
                m.summary.unmatched_baseline.len(),
                m.summary.unmatched_candidate.len()
            ),
            (1, 1)
        );
    }
}
