//! The index file: a JSON list of result files that the explorer fetches in one go, written by
//! `benchlens site` and accepted wherever an address is (`?data=…/index.json`).
//!
//! Schema (version 1):
//!
//! ```json
//! {"benchlens_index": 1, "generator": "benchlens 0.1.0 (a8cd967)",
//!  "files": ["2026-11-01/result.json", "2026-11-02/result.json"]}
//! ```
//!
//! `generator` names the benchlens build that wrote the index (`benchlens site`); readers
//! ignore it.
//!
//! `files` are URL references relative to the index file's own address (percent-encoded, `/`
//! separated; `../` allowed) or absolute `http(s)://` addresses. An object with `files` as its
//! only key is read as an index too. `benchlens_index` above 1 is refused, so an older
//! explorer says so instead of misreading a newer index.

use super::json_tree::JsonTree;

/// The index's file name in a site.
pub const INDEX_FILE_NAME: &str = "index.json";

/// File name endings read as result files when a folder is read (`compare --trend`, `site`,
/// a folder dropped on the explorer).
pub const RESULT_EXTENSIONS: [&str; 5] = ["json", "jsonl", "csv", "tsv", "txt"];

/// Whether a file of a folder is read as results: a [`RESULT_EXTENSIONS`] ending, not hidden,
/// not an index.
pub fn is_result_file_name(name: &str) -> bool {
    !name.starts_with('.')
        && name != INDEX_FILE_NAME
        && name
            .rsplit_once('.')
            .is_some_and(|(_, ext)| RESULT_EXTENSIONS.contains(&ext.to_ascii_lowercase().as_str()))
}

/// The index version this explorer writes and reads.
pub const INDEX_VERSION: u64 = 1;

/// Why an index file cannot be used.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// `files` is missing or not a list of strings.
    #[error("the index's \"files\" must be a list of file addresses (strings)")]
    BadFiles,
    /// Written by a newer benchlens.
    #[error("index version {0} is newer than this explorer reads ({INDEX_VERSION})")]
    Version(u64),
}

/// The files an index lists, as written (relative references or absolute addresses), read
/// with serde_json: the tests' way in to [`index_files_in`].
///
/// `None` when `bytes` is not an index (any other file, to be read as results); `Some(Err)`
/// when it is one that cannot be used.
#[cfg(test)]
pub(crate) fn parse_index(bytes: &[u8]) -> Option<Result<Vec<String>, IndexError>> {
    if !may_be_index(bytes) {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(bytes).ok()?;
    index_files_in(&value)
}

/// Whether `bytes` can be an index at all (a JSON object): the test before anything is parsed.
pub fn may_be_index(bytes: &[u8]) -> bool {
    bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{')
}

/// The files an index lists (relative references or absolute addresses), read from a parsed
/// document (any [`JsonTree`]: the page parses with the browser's own `JSON.parse`).
///
/// `None` when the document is not an index (any other file, to be read as results);
/// `Some(Err)` when it is one that cannot be used.
pub fn index_files_in<T: JsonTree>(doc: T) -> Option<Result<Vec<String>, IndexError>> {
    let keys = doc.keys()?;
    let version = doc.field("benchlens_index");
    if version.is_none() && keys != ["files"] {
        return None;
    }
    if let Some(v) = version.and_then(|v| v.number()) {
        if v > INDEX_VERSION as f64 {
            // Versions are whole numbers; a fraction above this one is newer too.
            return Some(Err(IndexError::Version(v.ceil() as u64)));
        }
    }
    let Some(files) = doc.field("files").and_then(|f| f.items()) else {
        return Some(Err(IndexError::BadFiles));
    };
    Some(
        files
            .iter()
            .map(|f| f.text().ok_or(IndexError::BadFiles))
            .collect(),
    )
}

/// The index file's text for `files` (already relative references), naming this build as
/// its generator.
pub fn index_json(files: &[String]) -> String {
    let mut s = serde_json::to_string_pretty(&serde_json::json!({
        "benchlens_index": INDEX_VERSION,
        "generator": concat!("benchlens ", env!("CARGO_PKG_VERSION"), " (", env!("BENCHLENS_COMMIT"), ")"),
        "files": files,
    }))
    .unwrap_or_default();
    s.push('\n');
    s
}

/// A relative reference for a relative file path: each `/`-separated segment
/// percent-encoded.
pub fn path_reference(relative_path: &str) -> String {
    relative_path
        .split('/')
        .map(super::address::encode_component)
        .collect::<Vec<_>>()
        .join("/")
}

/// Resolves `reference` against the absolute address `base` (RFC 3986's merge and dot-segment
/// removal, without query or fragment on the result's base): an absolute `http(s)://`
/// reference is returned as is, `/path` keeps `base`'s scheme and host.
pub fn resolve_reference(base: &str, reference: &str) -> String {
    if reference.contains("://") {
        return reference.to_string();
    }
    let base = base.split(['?', '#']).next().unwrap_or(base);
    let (origin, base_path) = match base.split_once("://") {
        Some((scheme, rest)) => {
            let (host, path) = rest.find('/').map_or((rest, "/"), |i| rest.split_at(i));
            (format!("{scheme}://{host}"), path.to_string())
        }
        None => (String::new(), base.to_string()),
    };
    let merged = if reference.starts_with('/') {
        reference.to_string()
    } else {
        let dir = base_path.rfind('/').map_or("/", |i| &base_path[..=i]);
        format!("{dir}{reference}")
    };
    let mut out: Vec<&str> = Vec::new();
    let segments: Vec<&str> = merged.split('/').collect();
    for (i, seg) in segments.iter().enumerate() {
        let last = i + 1 == segments.len();
        match *seg {
            "." => {
                if last {
                    out.push("");
                }
            }
            ".." => {
                if out.len() > 1 {
                    out.pop();
                }
                if last {
                    out.push("");
                }
            }
            s => out.push(s),
        }
    }
    format!("{origin}{}", out.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn index_round_trip_and_what_is_not_one() {
        let files = vec!["2026-11-01/a b.json".to_string(), "x.json".to_string()];
        let text = index_json(&files);
        assert_eq!(parse_index(text.as_bytes()), Some(Ok(files)));
        assert!(text.contains(&format!("\"generator\": \"benchlens {}", crate::VERSION)));
        assert_eq!(
            parse_index(br#"{"files": ["r.json"]}"#),
            Some(Ok(vec!["r.json".to_string()]))
        );
        assert_eq!(parse_index(br#"{"files": ["r.json"], "date": "x"}"#), None);
        assert_eq!(parse_index(br#"{"date": "20261101-000000"}"#), None);
        assert_eq!(parse_index(b"a,b\n1,2\n"), None);
        assert_eq!(parse_index(b""), None);
        assert_eq!(
            parse_index(br#"{"benchlens_index": 1, "files": [3]}"#),
            Some(Err(IndexError::BadFiles))
        );
        assert_eq!(
            parse_index(br#"{"benchlens_index": 2, "files": []}"#),
            Some(Err(IndexError::Version(2)))
        );
    }

    #[test]
    fn references_resolve_against_the_index_address() {
        let base = "https://o.github.io/site/results/index.json?x=1";
        assert_eq!(
            resolve_reference(base, "2026-11-01/r.json"),
            "https://o.github.io/site/results/2026-11-01/r.json"
        );
        assert_eq!(
            resolve_reference(base, "../other/./r.json"),
            "https://o.github.io/site/other/r.json"
        );
        assert_eq!(
            resolve_reference(base, "/r.json"),
            "https://o.github.io/r.json"
        );
        assert_eq!(
            resolve_reference(base, "http://h:8/r.json"),
            "http://h:8/r.json"
        );
        assert_eq!(
            resolve_reference("http://h:8", "r.json"),
            "http://h:8/r.json"
        );
        assert_eq!(path_reference("a b/c#1.json"), "a%20b/c%231.json");
        assert!(is_result_file_name("run.JSON") && is_result_file_name("t.csv"));
        assert!(!is_result_file_name("index.json") && !is_result_file_name(".x.json"));
        assert!(!is_result_file_name("README.md") && !is_result_file_name("json"));
    }
}
