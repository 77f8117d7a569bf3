//! Helpers shared by the ingest integration tests.
#![allow(dead_code)]

use benchlens::ingest::{self, Ingested};
use benchlens::model::{MetricKey, Record};

/// Every file under `tests/fixtures/`, in path order (folders walked in name order).
pub fn fixture_paths() -> Vec<std::path::PathBuf> {
    fn walk(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<_> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        for p in paths {
            if p.is_dir() {
                walk(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures"),
        &mut out,
    );
    out
}

/// (file name, bytes) of every file under `tests/fixtures/`, in path order.
pub fn fixture_files() -> Vec<(String, Vec<u8>)> {
    fixture_paths()
        .into_iter()
        .filter_map(|p| {
            let bytes = std::fs::read(&p).ok()?;
            Some((p.file_name()?.to_string_lossy().to_string(), bytes))
        })
        .collect()
}

/// The bytes of a fixture under `tests/fixtures/`.
pub fn fixture(path: &str) -> Vec<u8> {
    let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"))
}

/// Reads a fixture, naming it by its file name as a user's upload would be.
pub fn read_fixture(path: &str) -> Ingested {
    let name = path.rsplit('/').next().unwrap_or(path);
    ingest::read(name, &fixture(path)).unwrap_or_else(|e| panic!("{e}"))
}

/// A metric by canonical name.
pub fn metric(r: &Record, name: &str) -> Option<f64> {
    r.metric(&MetricKey::from_name(name).expect(name))
}

/// Asserts `a` ≈ `b` within 1e-9 relative.
pub fn close(a: Option<f64>, b: f64) {
    let a = a.unwrap_or_else(|| panic!("missing value, wanted {b}"));
    assert!(
        (a - b).abs() <= 1e-9 * b.abs().max(1.0),
        "got {a}, wanted {b}"
    );
}
