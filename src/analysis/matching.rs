//! Matching records of two sides (baseline/candidate, old/new) on the values of every other
//! dimension: which dimensions form the match key, which pairs match, what is left over.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::export::TextColumn;
use crate::model::{BorrowedDim, Dim, DimKey, DimKind, DimValue, Record};

/// The dimensions left out of every match key unless the caller says otherwise: `source`,
/// `format`, `date` and `label` describe where and when a result was written, not the
/// configuration that was measured.
pub fn default_ignored() -> BTreeSet<DimKey> {
    [Dim::Source, Dim::Format, Dim::Date, Dim::Label]
        .into_iter()
        .map(DimKey::Known)
        .collect()
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
                    crate::columns::Column::Dim(d.clone()).is_numeric(),
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
    let m: BTreeMap<MatchKey, Vec<usize>> = groups.into_iter().collect();
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
/// `exclude`, measured token lengths ([`super::points::is_measured_column`]) and those *tied
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
        super::points::measured_dims_of(baseline.iter().chain(candidate).map(|(_, r)| *r));
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
    let mut cand = group_by_key(candidate, &key_dims);
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
    unmatched_baseline.sort_unstable();
    unmatched_candidate.sort_unstable();
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
