//! The worker-to-page record encoding (`benchlens::wire`): every record any reader produces from
//! the fixtures and samples comes back equal, and damaged buffers give an error, not a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

use benchlens::ingest;
use benchlens::model::Record;
use benchlens::wire::{decode_records, encode_records, WireError};

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files_under(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn all_inputs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    files_under(&root.join("tests/fixtures"), &mut files);
    files_under(&root.join("public/samples"), &mut files);
    files.sort();
    files
}

fn dbg(records: &[Record]) -> String {
    format!("{records:?}")
}

#[test]
fn every_fixture_round_trips() {
    let mut total = 0;
    for path in all_inputs() {
        let bytes = std::fs::read(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy();
        let Ok(read) = ingest::read(&name, &bytes) else {
            continue;
        };
        let wire = encode_records(&read.records);
        let back = decode_records(&wire).unwrap();
        // Debug text, not ==, so NaN metrics compare equal.
        assert_eq!(dbg(&back), dbg(&read.records), "{}", path.display());
        // Batches decode independently.
        for chunk in read.records.chunks(3) {
            assert_eq!(
                dbg(&decode_records(&encode_records(chunk)).unwrap()),
                dbg(chunk)
            );
        }
        total += read.records.len();
    }
    assert!(total > 100, "only {total} records in the fixtures");
}

#[test]
fn awkward_values_round_trip() {
    let text = r#"{"schema_version": 1, "records": [
        {"model": "m", "request_rate": "inf", "mean_ttft_ms": "NaN", "p99_ttft_ms": 1e300,
         "tag.note": "ünïcödé, \"quoted\"", "gpu_count": 8, "input_len": 0.5,
         "inferred": {"gpu": "file name"},
         "requests": [{"ttft_ms": 1.5, "itl_ms": [], "error": "timeout"},
                      {"input_len": 3, "output_len": 2, "itl_ms": [1, 2.5, 1e-9]}]},
        {}
    ]}"#;
    let records = benchlens::model::canonical::from_json(text)
        .unwrap()
        .records;
    assert_eq!(records.len(), 2);
    let back = decode_records(&encode_records(&records)).unwrap();
    assert_eq!(dbg(&back), dbg(&records));
    assert_eq!(back[0].requests[1].itl_ms, vec![1.0, 2.5, 1e-9]);
}

#[test]
fn damaged_buffers_are_errors() {
    let read = ingest::read(
        "001_b815cef7710eda19.txt",
        &std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/public/samples/001_b815cef7710eda19.txt"
        ))
        .unwrap(),
    )
    .unwrap();
    let wire = encode_records(&read.records);
    for cut in (0..wire.len()).step_by(97) {
        let e = decode_records(&wire[..cut]).unwrap_err();
        assert!(
            matches!(e, WireError::EndsEarly { .. }),
            "cut at {cut}: {e}"
        );
        assert!(e.at() <= cut, "cut at {cut}: {e}");
    }
    let mut longer = wire.clone();
    longer.push(0);
    assert_eq!(
        decode_records(&longer).unwrap_err(),
        WireError::TrailingBytes { at: wire.len() }
    );
    // Byte 4 is the kind of the first key (after the u32 key count), bytes 5..9 its name's
    // length, byte 9 its name's first byte.
    let mut bad_text = wire.clone();
    bad_text[9] = 0xFF;
    let e = decode_records(&bad_text).unwrap_err();
    assert!(matches!(e, WireError::NotUtf8 { at: 9, .. }), "{e:?}");
    assert!(std::error::Error::source(&e).is_some());
    let mut bad_kind = wire;
    bad_kind[4] = 200;
    assert_eq!(
        decode_records(&bad_kind).unwrap_err(),
        WireError::UnknownKey { at: 4 }
    );
    assert_eq!(
        WireError::UnknownKey { at: 4 }.to_string(),
        "record batch is damaged at byte 4: an unknown key"
    );
}
