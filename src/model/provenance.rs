//! Which benchlens build wrote a record: the `benchlens_version` and `benchlens_commit` tags
//! that `run` and `merge` stamp on every record they write, read back as one short text
//! (`0.1.0 (a8cd967)`). `merge` compares shards by it; the explorer shows it in a file's row.

use std::collections::BTreeMap;
use std::ops::Range;

use super::{Dataset, DimKey, DimValue};

/// The tag holding the version.
pub const VERSION_TAG: &str = "benchlens_version";
/// The tag holding the commit.
pub const COMMIT_TAG: &str = "benchlens_commit";

/// At most this many distinct builds are named for one file; more are counted.
const MAX_NAMED: usize = 3;

/// `version (commit)` from a version and a commit: the version alone when the commit is
/// missing (files written before builds recorded it), `? (commit)` when the version is;
/// `None` when both are missing (the record was not written by benchlens).
pub fn build_text(version: Option<&str>, commit: Option<&str>) -> Option<String> {
    match (version, commit) {
        (None, None) => None,
        (Some(v), None) => Some(v.to_string()),
        (v, Some(c)) => Some(format!("{} ({c})", v.unwrap_or("?"))),
    }
}

/// The build a record's tags name, as [`build_text`] has it.
pub fn build_of_tags(tags: &BTreeMap<String, String>) -> Option<String> {
    build_text(
        tags.get(VERSION_TAG).map(String::as_str),
        tags.get(COMMIT_TAG).map(String::as_str),
    )
}

/// The builds that wrote the records in `rows`, distinct, in order of first appearance, as
/// one text: `benchlens 0.1.0 (a8cd967)`; several are listed (`benchlens 0.1.0 (a8cd967),
/// 0.1.0 (77aa01c)`, and `and N more` past three). `None` when no record in `rows` names one.
pub fn written_by(data: &Dataset, rows: Range<usize>) -> Option<String> {
    let version = data.column(&DimKey::Tag(VERSION_TAG.into()));
    let commit = data.column(&DimKey::Tag(COMMIT_TAG.into()));
    if version.is_none() && commit.is_none() {
        return None;
    }
    let text = |v: Option<&DimValue>| v.map(DimValue::to_string);
    let mut builds: Vec<String> = Vec::new();
    for row in rows.start..rows.end.min(data.len()) {
        let v = text(version.and_then(|c| c.value(row)));
        let c = text(commit.and_then(|c| c.value(row)));
        if let Some(b) = build_text(v.as_deref(), c.as_deref()) {
            if !builds.contains(&b) {
                builds.push(b);
            }
        }
    }
    let (first, rest) = builds.split_first()?;
    let mut out = format!("benchlens {first}");
    for b in rest.iter().take(MAX_NAMED - 1) {
        out.push_str(", ");
        out.push_str(b);
    }
    if rest.len() >= MAX_NAMED {
        out.push_str(&format!(" and {} more", rest.len() + 1 - MAX_NAMED));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Record;

    fn record(version: Option<&str>, commit: Option<&str>) -> Record {
        let mut r = Record::default();
        if let Some(v) = version {
            r.tags.insert(VERSION_TAG.into(), v.into());
        }
        if let Some(c) = commit {
            r.tags.insert(COMMIT_TAG.into(), c.into());
        }
        r
    }

    #[test]
    fn one_build_is_named_once() {
        let data = Dataset::new(vec![
            record(Some("0.1.0"), Some("a8cd967")),
            record(Some("0.1.0"), Some("a8cd967")),
        ]);
        assert_eq!(
            written_by(&data, 0..2).as_deref(),
            Some("benchlens 0.1.0 (a8cd967)")
        );
    }

    #[test]
    fn rows_of_other_files_do_not_count() {
        let data = Dataset::new(vec![
            record(None, None),
            record(Some("0.2.0"), Some("77aa01c")),
        ]);
        assert_eq!(written_by(&data, 0..1), None);
        assert_eq!(
            written_by(&data, 1..2).as_deref(),
            Some("benchlens 0.2.0 (77aa01c)")
        );
        // A range past the end is cut, never read out of bounds.
        assert_eq!(
            written_by(&data, 1..9).as_deref(),
            Some("benchlens 0.2.0 (77aa01c)")
        );
    }

    #[test]
    fn several_builds_are_listed_and_counted_past_three() {
        let data = Dataset::new(
            ["a", "b", "c", "d", "e", "a"]
                .iter()
                .map(|c| record(Some("0.1.0"), Some(c)))
                .collect(),
        );
        assert_eq!(
            written_by(&data, 0..6).as_deref(),
            Some("benchlens 0.1.0 (a), 0.1.0 (b), 0.1.0 (c) and 2 more")
        );
    }

    #[test]
    fn a_missing_half_is_a_question_mark() {
        let data = Dataset::new(vec![record(None, Some("a8cd967"))]);
        assert_eq!(
            written_by(&data, 0..1).as_deref(),
            Some("benchlens ? (a8cd967)")
        );
        assert_eq!(build_text(None, None), None);
        assert_eq!(
            build_of_tags(&record(Some("1.0"), None).tags).as_deref(),
            Some("1.0")
        );
    }
}
