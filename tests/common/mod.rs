//! Helpers shared by the ingest integration tests.
#![allow(dead_code)]

use benchlens::ingest::{self, Ingested};
use benchlens::model::{MetricKey, Record};

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
