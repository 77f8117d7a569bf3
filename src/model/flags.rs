//! Which records a reader should be warned about before trusting a number drawn from them:
//! the one place that decides it. A record is flagged when some of its requests failed
//! ([`failed_requests`]) or it completed fewer prompts than it was asked
//! ([`incomplete`]); a file's summary also counts records below 95 % ([`low_completion`]).
//! `analysis::quality` words the flags of one record and of a file from these rules, and a
//! chart's points count them over their rows as they are gathered ([`RowFlags`],
//! [`FlagCounts`]), so the hover text of a point and the exported tables say the same.

use super::{ColumnRef, Dataset, Dim, DimValue, MetricKey, MetricValues};

/// Completion below this share of the prompts is noted per file.
pub const LOW_COMPLETION: f64 = 0.95;

/// Whether a record with `failed` failed requests is flagged.
pub fn failed_requests(failed: f64) -> bool {
    failed > 0.0
}

/// Whether a record that completed `completed` of `asked` prompts is flagged.
pub fn incomplete(completed: f64, asked: f64) -> bool {
    completed < asked
}

/// Whether a record completed fewer than 95 % of the `asked` prompts (a file's summary).
pub fn low_completion(completed: f64, asked: f64) -> bool {
    asked > 0.0 && completed < LOW_COMPLETION * asked
}

/// How many of a point's records are flagged, by flag.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FlagCounts {
    /// Records with failed requests.
    pub failed: usize,
    /// Records that completed fewer prompts than asked.
    pub incomplete: usize,
}

impl FlagCounts {
    /// The flags in words, for `records` records in all (`1 of 3 records with failed
    /// requests`); empty when none is flagged.
    pub fn texts(&self, records: usize) -> Vec<String> {
        let of = |n: usize| {
            if records <= 1 {
                "the record".to_string()
            } else {
                format!("{n} of {records} records")
            }
        };
        let mut out = Vec::new();
        if self.failed > 0 {
            out.push(format!("{} with failed requests", of(self.failed)));
        }
        if self.incomplete > 0 {
            out.push(format!(
                "{} completed fewer prompts than asked",
                of(self.incomplete)
            ));
        }
        out
    }
}

/// Reads the flags of a dataset's rows from its columns (no record is built).
pub struct RowFlags<'a> {
    failed: Option<MetricValues<'a>>,
    completed: Option<MetricValues<'a>>,
    prompts: Option<ColumnRef<'a>>,
}

impl<'a> RowFlags<'a> {
    /// The reader for `ds`, or `None` when no row can be flagged (no failed or completed
    /// counts), so that gathering points costs nothing more.
    pub fn new(ds: &'a Dataset) -> Option<RowFlags<'a>> {
        let failed = ds.metric_values(&MetricKey::Failed);
        let completed = ds.metric_values(&MetricKey::Completed);
        if failed.is_none() && completed.is_none() {
            return None;
        }
        Some(RowFlags {
            failed,
            completed,
            prompts: ds.column(&Dim::NumPrompts.into()),
        })
    }

    /// Adds `row`'s flags to `counts`.
    pub fn count(&self, row: usize, counts: &mut FlagCounts) {
        if self
            .failed
            .as_ref()
            .and_then(|f| f.get(row))
            .is_some_and(failed_requests)
        {
            counts.failed += 1;
        }
        let asked = self
            .prompts
            .as_ref()
            .and_then(|p| p.value(row))
            .and_then(DimValue::as_f64);
        let done = self.completed.as_ref().and_then(|c| c.get(row));
        if let (Some(done), Some(asked)) = (done, asked) {
            if incomplete(done, asked) {
                counts.incomplete += 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Record;

    #[test]
    fn rows_are_flagged_by_the_same_rules_as_records() {
        let rec = |completed: f64, failed: f64| {
            let mut r = Record {
                num_prompts: Some(100),
                request_rate: Some(1.0),
                ..Record::default()
            };
            r.set_metric(MetricKey::Completed, completed);
            r.set_metric(MetricKey::Failed, failed);
            r
        };
        let ds = Dataset::new(vec![rec(100.0, 0.0), rec(97.0, 3.0), rec(50.0, 0.0)]);
        let flags = RowFlags::new(&ds).unwrap();
        let mut counts = FlagCounts::default();
        for row in 0..3 {
            flags.count(row, &mut counts);
        }
        assert_eq!(
            counts,
            FlagCounts {
                failed: 1,
                incomplete: 2
            }
        );
        assert_eq!(
            counts.texts(3),
            [
                "1 of 3 records with failed requests",
                "2 of 3 records completed fewer prompts than asked"
            ]
        );
        assert!(!low_completion(97.0, 100.0) && low_completion(94.0, 100.0));
        assert!(RowFlags::new(&Dataset::default()).is_none());
    }
}
