//! The worker-to-page record encoding (`benchlens::wire`): every record any reader produces from
//! the fixtures and samples comes back equal, and damaged buffers give an error, not a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use std::path::{Path, PathBuf};

use benchlens::ingest;
use benchlens::ingest::Contents;
use benchlens::model::{Dataset, Dim, DimValue, Index, Record};
#[path = "common/tidy.rs"]
mod tidy;
use tidy::tidy_csv;

use benchlens::wire::{
    decode_index, decode_records, encode_index, encode_records, TableEncoder, TableRows, WireError,
};

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

/// The records of every fixture and sample that reads, file by file.
fn every_fixture_records() -> Vec<(PathBuf, Vec<Record>)> {
    all_inputs()
        .into_iter()
        .filter_map(|path| {
            let bytes = std::fs::read(&path).unwrap();
            let name = path.file_name().unwrap().to_string_lossy().to_string();
            let records = ingest::read(&name, &bytes).ok()?.records;
            Some((path, records))
        })
        .collect()
}

#[test]
fn the_workers_index_is_the_pages_and_joins_without_rebuilding() {
    let files = every_fixture_records();
    let mut all: Vec<Record> = Vec::new();
    let mut joined = Index::default();
    let mut ds = Dataset::default();
    for (path, records) in &files {
        let index = Index::build(records);
        // The index travels intact ...
        assert_eq!(
            decode_index(&encode_index(&index)).unwrap(),
            index,
            "{}",
            path.display()
        );
        // ... and is the index of the records as the page decodes them.
        let decoded = decode_records(&encode_records(records)).unwrap();
        assert_eq!(Index::build(&decoded), index, "{}", path.display());
        // Split anywhere, the halves' indexes join into the whole one.
        for cut in [0, 1, records.len() / 2, records.len()] {
            let cut = cut.min(records.len());
            let mut head = Index::build(&records[..cut]);
            head.append(Index::build(&records[cut..]));
            assert_eq!(head, index, "{} cut at {cut}", path.display());
        }
        all.extend(records.iter().cloned());
        joined.append(index.clone());
        ds.extend_indexed(records.clone(), index);
    }
    // Files of every kind, one after the other: the joined index is the one built at once.
    assert!(files.len() > 20, "only {} files", files.len());
    let whole = Index::build(&all);
    assert_eq!(whole.len(), all.len());
    assert_eq!(joined, whole);
    assert_eq!(ds.index(), &whole);
    assert_eq!(ds.len(), all.len());
    // An index that does not fit the records is rebuilt rather than trusted.
    let mut short = Dataset::default();
    short.extend_indexed(all.clone(), Index::build(&all[1..]));
    assert_eq!(short.index(), &whole);
}

#[test]
fn damaged_indexes_are_errors() {
    let (_, records) = every_fixture_records()
        .into_iter()
        .find(|(p, _)| p.ends_with("000_258d36619a7af95a.txt"))
        .unwrap();
    let wire = encode_index(&Index::build(&records));
    for cut in 0..wire.len() {
        let e = decode_index(&wire[..cut]).unwrap_err();
        assert!(
            matches!(e, WireError::EndsEarly { .. }),
            "cut at {cut}: {e}"
        );
    }
    let mut longer = wire.clone();
    longer.push(0);
    assert_eq!(
        decode_index(&longer).unwrap_err(),
        WireError::TrailingBytes { at: wire.len() }
    );
    // The index ends with each record's metric set (a u32), each metric's values (an f64 a
    // record) and a flag byte: a last record's set past every set dangles.
    let metrics = Dataset::new(records.clone()).metric_keys().len();
    let at = wire.len() - 1 - 8 * records.len() * metrics - 4;
    let mut dangling = wire.clone();
    dangling[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
    let e = decode_index(&dangling).unwrap_err();
    assert!(matches!(e, WireError::BadIndex { .. }), "{e:?}");
    assert_eq!(
        e.to_string(),
        format!(
            "record index is damaged at byte {}: the index refers to an entry it does not have",
            wire.len()
        )
    );
}

#[test]
fn tables_travel_as_index_and_values_and_rebuild_the_same_records() {
    let mut inputs: Vec<(String, Vec<u8>)> = all_inputs()
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            (name, std::fs::read(&p).unwrap())
        })
        .collect();
    inputs.push(("tidy.csv".into(), tidy_csv(2_000).into_bytes()));
    let mut tables = Vec::new();
    for (name, bytes) in &inputs {
        let Ok(Contents::Columns(c)) = ingest::read_columnar(name, bytes) else {
            continue;
        };
        let expected: Vec<Record> = c.columns.rows().collect();
        assert_eq!(
            Index::from_columns(&c.columns),
            Index::build(&expected),
            "{name}"
        );
        let Some(table) = TableEncoder::new(&c.columns) else {
            continue;
        };
        assert_eq!(table.len(), expected.len());
        let mut rows = TableRows::new(&table.head()).unwrap();
        let mut got = Vec::new();
        // Batches of 7 rows, the last one shorter.
        let mut start = 0;
        while start < table.len() {
            let end = (start + 7).min(table.len());
            got.extend(rows.decode_rows(&table.rows(start..end)).unwrap());
            start = end;
        }
        assert_eq!(rows.done(), expected.len());
        assert_eq!(dbg(&got), dbg(&expected), "{name}");
        assert_eq!(rows.into_index(), Index::build(&expected), "{name}");
        tables.push(name.clone());
    }
    assert!(
        tables.len() >= 2 && tables.contains(&"tidy.csv".to_string()),
        "{tables:?}"
    );

    // Damaged batches are errors: cut short, or rows past the index's.
    let c = match ingest::read_columnar("tidy.csv", tidy_csv(10).as_bytes()).unwrap() {
        Contents::Columns(c) => c,
        Contents::Records(_) => panic!("the tidy CSV is read into columns"),
    };
    let table = TableEncoder::new(&c.columns).unwrap();
    let mut rows = TableRows::new(&table.head()).unwrap();
    let batch = table.rows(0..10);
    for cut in 0..batch.len() {
        assert!(
            matches!(
                rows.decode_rows(&batch[..cut]),
                Err(WireError::EndsEarly { .. })
            ),
            "cut at {cut}"
        );
    }
    assert_eq!(rows.decode_rows(&batch).unwrap().len(), 10);
    assert_eq!(
        rows.decode_rows(&table.rows(0..1)).unwrap_err(),
        WireError::RowsPastEnd { at: 0 }
    );
}

#[test]
fn a_table_whose_codes_widen_batch_by_batch_travels_intact() {
    // A batch size per row (code = batch + 1): the page's codes cross 255 in the first batch
    // and 65,535 in the seventh, widening in place as batches are appended.
    let mut csv = String::from("model,engine,gpu,batch,Throughput (tok/s)\n");
    for i in 0..66_000 {
        csv.push_str(&format!("model-a,vllm,A100,{i},{}\n", i % 7));
    }
    let Ok(Contents::Columns(c)) = ingest::read_columnar("wide.csv", csv.as_bytes()) else {
        panic!("the CSV is read into columns");
    };
    let expected = Index::build(&c.columns.rows().collect::<Vec<_>>());
    let table = TableEncoder::new(&c.columns).unwrap();
    let mut rows = TableRows::new(&table.head()).unwrap();
    for start in (0..table.len()).step_by(10_000) {
        let n = rows.skip_rows(&table.rows(start..start + 10_000)).unwrap();
        assert_eq!(n, (table.len() - start).min(10_000));
    }
    let index = rows.into_index();
    assert_eq!(index, expected);
    assert_eq!(decode_index(&encode_index(&index)).unwrap(), index);
    let mut ds = Dataset::default();
    ds.extend_columnar(index);
    let batch = ds.column(&Dim::BatchSize.into()).unwrap();
    assert_eq!(batch.codes.width(), 4);
    assert_eq!(batch.value(65_535), Some(&DimValue::Num(65_535.0)));
    assert_eq!(batch.value(65_999), Some(&DimValue::Num(65_999.0)));
    // One model: no byte a row.
    let model = ds.column(&Dim::Model.into()).unwrap();
    assert_eq!((model.codes.width(), model.codes.heap_bytes()), (1, 0));
    // A batch with a code past the dictionary is refused, changing nothing.
    let mut rows = TableRows::new(&table.head()).unwrap();
    let mut bad = table.rows(0..10);
    // The batch ends with the last column's codes (batch size, last in canonical order),
    // each row's metric set (a u32) and the metric's values (an f64): that column's first
    // code.
    let at = bad.len() - 8 * 10 - 4 * 10 - 4 * 10;
    bad[at..at + 4].copy_from_slice(&66_001u32.to_le_bytes());
    assert!(matches!(
        rows.skip_rows(&bad),
        Err(WireError::BadIndex { .. })
    ));
    assert_eq!(rows.done(), 0);
    // The last entry is that column's, so the same batch with it is taken.
    bad[at..at + 4].copy_from_slice(&66_000u32.to_le_bytes());
    assert_eq!(rows.skip_rows(&bad).unwrap(), 10);
}

#[test]
fn a_table_with_empty_cells_counts_its_rows_without_a_value() {
    // Every third row has no GPU: the page's index counts them (the filter panel offers
    // "no value" from that count), as the index built from the records does.
    let mut csv = String::from("model,engine,gpu,batch,Throughput (tok/s)\n");
    for i in 0..30 {
        let gpu = if i % 3 == 0 { "" } else { "A100" };
        csv.push_str(&format!("model-a,vllm,{gpu},{i},1\n"));
    }
    let Ok(Contents::Columns(c)) = ingest::read_columnar("gaps.csv", csv.as_bytes()) else {
        panic!("the CSV is read into columns");
    };
    let expected = Index::build(&c.columns.rows().collect::<Vec<_>>());
    let table = TableEncoder::new(&c.columns).unwrap();
    let mut rows = TableRows::new(&table.head()).unwrap();
    for start in (0..30).step_by(7) {
        rows.skip_rows(&table.rows(start..start + 7)).unwrap();
    }
    let index = rows.into_index();
    assert_eq!(index, expected);
    let mut ds = Dataset::default();
    ds.extend_columnar(index);
    let gpus = ds.distinct(&Dim::Gpu.into(), &benchlens::model::Filter::all());
    let counts: Vec<(Option<String>, usize)> = gpus
        .iter()
        .map(|f| (f.value.as_ref().map(|v| v.to_string()), f.count))
        .collect();
    assert_eq!(counts, vec![(Some("A100".to_string()), 20), (None, 10)]);
}
