use super::*;
use crate::model::DimKey;

/// [`super::share_link`] finished with miniz_oxide's raw deflate, as the page finishes it
/// with the browser's.
fn share_link(
    base: &str,
    view: &ViewState,
    files: &[ShareFile<'_>],
    max_chars: usize,
) -> SharedLink {
    match super::share_link(base, view, files, max_chars) {
        LinkStep::Done(link) => link,
        LinkStep::Deflate(draft) => {
            let deflated = miniz_oxide::deflate::compress_to_vec(draft.envelope(), 9);
            draft.finish(Some(&deflated))
        }
    }
}

/// The data part of a link carrying `files`.
fn encode_link_data(files: &[ShareFile<'_>]) -> String {
    pack(&miniz_oxide::deflate::compress_to_vec(
        envelope_json(files).as_bytes(),
        9,
    ))
}

/// [`link_payload`], inflated at most to [`MAX_LINK_DATA_BYTES`] as the page does, then
/// [`link_files`].
fn decode_link_data(data: &str) -> Result<Vec<LinkFile>, LinkDataError> {
    let deflated = link_payload(data)?;
    let json = miniz_oxide::inflate::decompress_to_vec_with_limit(&deflated, MAX_LINK_DATA_BYTES)
        .map_err(|e| match e.status {
        miniz_oxide::inflate::TINFLStatus::HasMoreOutput => LinkDataError::TooLarge {
            max_bytes: MAX_LINK_DATA_BYTES,
        },
        status => LinkDataError::Inflate {
            status: format!("{status:?}"),
        },
    })?;
    link_files(&json)
}

/// A file offered to [`share_link`] under `name`, in a format named "f".
fn file<'a>(name: &'a str, records: &'a [Record]) -> ShareFile<'a> {
    ShareFile {
        name,
        format: "f",
        records,
    }
}

/// A carried file's records as the parse worker reads them (its entry point, natively),
/// each stamped with the file's name and the carrier's format (canonical CSV or JSON),
/// here cleared to compare with what was sent; no warning but the count of inferred fields.
fn read_back(f: &LinkFile) -> Vec<Record> {
    let (records, warnings) =
        match crate::ingest::read_columnar(&f.name, f.text.as_bytes()).unwrap() {
            crate::ingest::Contents::Records(r) => (r.records, r.warnings),
            crate::ingest::Contents::Columns(c) => (c.columns.rows().collect(), c.warnings),
        };
    let warnings: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
    assert!(
        warnings.iter().all(|w| w.contains("inferred from")),
        "{warnings:?}"
    );
    records
        .into_iter()
        .map(|mut r| {
            assert_eq!(r.source.as_deref(), Some(f.name.as_str()));
            assert!(r
                .format
                .as_deref()
                .is_some_and(|k| k.starts_with("canonical_")));
            r.source = None;
            r.format = None;
            r
        })
        .collect()
}

fn run_records(n: usize, seed: u64) -> Vec<Record> {
    // A small deterministic generator: values that do not compress away.
    let mut x = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut next = move || {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (x >> 11) as f64 / (1u64 << 53) as f64
    };
    (0..n)
        .map(|i| {
            let mut r = Record {
                engine: Some(if i % 2 == 0 { "vllm" } else { "sgl" }.into()),
                request_rate: Some(if i % 7 == 6 {
                    f64::INFINITY
                } else {
                    (i % 7) as f64
                }),
                ..Record::default()
            };
            r.set_metric(
                crate::model::MetricKey::latency(
                    crate::model::LatencyMetric::Ttft,
                    crate::model::Stat::Mean,
                ),
                next() * 1000.0,
            );
            r.set_metric(crate::model::MetricKey::OutputThroughput, next() * 5000.0);
            r
        })
        .collect()
}

#[test]
fn link_data_round_trips_records_names_and_formats() {
    let a = run_records(40, 1);
    let mut b = run_records(3, 2);
    b[0].set_inferred(
        &DimKey::Known(crate::model::Dim::Gpu),
        "H100".into(),
        "user",
    )
    .unwrap();
    // Per-request detail does not fit a CSV row: that file travels as JSON.
    b[1].requests.push(crate::model::RequestDetail {
        input_len: Some(128),
        output_len: Some(3),
        ttft_ms: Some(12.5),
        itl_ms: vec![1.25, 2.5].into(),
        e2el_ms: Some(16.25),
        error: None,
        ..crate::model::RequestDetail::default()
    });
    let files = [
        ShareFile {
            name: "run a.json",
            format: "vLLM serving JSON",
            records: &a,
        },
        ShareFile {
            name: "b.csv",
            format: "tidy CSV",
            records: &b,
        },
    ];
    let envelope: serde_json::Value = serde_json::from_str(&envelope_json(&files)).unwrap();
    assert!(envelope["files"][0]["csv"].is_string());
    assert!(envelope["files"][1]["records"].is_object());
    let data = encode_link_data(&files);
    assert!(data.starts_with("1."));
    assert!(data[2..]
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
    let back = decode_link_data(&data).unwrap();
    assert_eq!(back.len(), 2);
    assert_eq!(back[0].name, "run a.json");
    assert_eq!(back[0].format, "vLLM serving JSON");
    assert_eq!(read_back(&back[0]), a);
    assert_eq!(read_back(&back[1]), b);
    let fragment = format!("#x=1&data={data}");
    assert_eq!(link_data_of_fragment(&fragment), Some(data.as_str()));
    assert_eq!(link_data_of_fragment("#view=latency"), None);
}

#[test]
fn a_link_carries_the_data_when_it_fits_and_names_the_files_when_not() {
    let view = ViewState {
        view: Some("latency".into()),
        samples: vec!["001_b815cef7710eda19.txt".into()],
        data: vec!["https://h/x.json".into()],
        ..ViewState::default()
    };
    let small = run_records(20, 3);
    let big = run_records(5000, 4);
    let base = "https://h/benchlens/";
    let fits = share_link(base, &view, &[file("small.json", &small)], SAFE_LINK_CHARS);
    assert_eq!(fits.embedded, ["small.json"]);
    assert!(fits.needs.is_empty());
    assert!(fits.url.len() <= SAFE_LINK_CHARS);
    let (before, data) = fits.url.split_once("#data=").unwrap();
    let opened = ViewState::from_query(before.split_once('?').unwrap().1);
    assert_eq!(opened, view);
    assert_eq!(read_back(&decode_link_data(data).unwrap()[0]), small);

    let too_big = share_link(
        base,
        &view,
        &[file("small.json", &small), file("big.csv", &big)],
        SAFE_LINK_CHARS,
    );
    assert!(too_big.embedded.is_empty());
    assert_eq!(too_big.needs, ["small.json", "big.csv"]);
    let LinkData::TooLong {
        with_data_chars: Some(n),
    } = too_big.data
    else {
        panic!("{:?}", too_big.data)
    };
    assert!(n > SAFE_LINK_CHARS);
    let note = too_big.note();
    assert!(note.contains("without the data"), "{note}");
    assert!(note.contains("must drop: small.json, big.csv."), "{note}");
    assert!(fits.note().contains("with the data of small.json inside"));
    assert!(!too_big.url.contains('#'));
    let opened = ViewState::from_query(too_big.url.split_once('?').unwrap().1);
    assert_eq!(opened.needs, ["small.json", "big.csv"]);
    assert_eq!(opened.samples, view.samples);

    // The limit is the caller's: the same data fits a larger one.
    let roomy = share_link(base, &view, &[file("big.csv", &big)], MAX_LINK_DATA_CHARS);
    assert_eq!(roomy.embedded, ["big.csv"]);

    let none = share_link(base, &ViewState::default(), &[], SAFE_LINK_CHARS);
    assert_eq!(none.url, base);
    // Far too long to try: not even compressed.
    let tiny_limit = share_link(base, &view, &[file("big.csv", &big)], 100);
    assert_eq!(tiny_limit.needs, ["big.csv"]);
    assert_eq!(
        tiny_limit.data,
        LinkData::TooLong {
            with_data_chars: None
        }
    );
    assert_eq!(none.note(), "Link copied.");
}

#[test]
fn damaged_or_hostile_link_data_gives_a_clear_error() {
    let good = encode_link_data(&[ShareFile {
        name: "a.json",
        format: "f",
        records: &run_records(200, 5),
    }]);
    let cases: Vec<(String, &str)> = vec![
        (String::new(), "not in a form"),
        ("garbage".into(), "not in a form"),
        ("2.AAAA".into(), "version \"2\""),
        ("1.@@@@".into(), "not base64url"),
        ("1.".into(), "does not decompress"),
        // A link cut short when it was copied.
        (good[..good.len() / 2].to_string(), "may have been cut"),
        (
            good[..2 + (good.len() - 2) / 8 * 4].to_string(),
            "does not decompress",
        ),
        (
            format!(
                "1.{}",
                base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .encode(miniz_oxide::deflate::compress_to_vec(b"[1,2]", 6))
            ),
            "no list of files",
        ),
        (
            format!(
                "1.{}",
                base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
                    miniz_oxide::deflate::compress_to_vec(
                        br#"{"files":[{"name":"x","records":[1]}]}"#,
                        6
                    )
                )
            ),
            "x's records are not a canonical records document",
        ),
        (
            format!("1.{}", "A".repeat(MAX_LINK_DATA_CHARS)),
            "more than the 2097152",
        ),
    ];
    for (data, expected) in cases {
        let e = decode_link_data(&data).unwrap_err().to_string();
        assert!(e.contains(expected), "{expected:?} not in {e:?}");
    }
    // A carried document the worker cannot read fails there, naming why.
    let later = format!(
        "1.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(
            miniz_oxide::deflate::compress_to_vec(
                br#"{"files":[{"name":"x","records":{"schema_version":99,"records":[]}}]}"#,
                6
            )
        )
    );
    let carried = decode_link_data(&later).unwrap();
    let e = crate::ingest::read_columnar(&carried[0].name, carried[0].text.as_bytes())
        .unwrap_err()
        .to_string();
    assert!(e.contains("schema_version 99"), "{e}");
    // The underlying error stays reachable, not only its text.
    let e = decode_link_data("1.@@@@").unwrap_err();
    assert!(matches!(e, LinkDataError::Base64(_)), "{e:?}");
    assert!(std::error::Error::source(&e).is_some());
}

/// The data of a link written before the page deflated with the browser's
/// `CompressionStream` (miniz_oxide at level 9); tests/browser/links.test.mjs opens it too.
pub(crate) const EARLIER_LINK: &str = "1.ZcvNCoJAFIbhW4mzPomjSea2SwjaZMiURx2Yn5o5I4R47027qN3H9_AuMChNAZrLAlYaggZIeq3IZ_cwA8LgvJGcblb9a3M8ndP3kQaM60kj2VFZQk_PSIE7L5nQkLQd88CdCegiPyJ3PHkXxynN1motjdzWN5y1NiiwEFmFpch_ZYdllRUVClF_Wxi1tGPqxAHLvPqX1Ilsn7oi37UW1uv6Bg";

#[test]
fn a_link_an_earlier_build_wrote_still_opens() {
    let files = decode_link_data(EARLIER_LINK).unwrap();
    assert_eq!(files.len(), 1);
    assert_eq!(files[0].name, "earlier.csv");
    assert_eq!(files[0].format, "tidy CSV");
    let records =
        match crate::ingest::read_columnar(&files[0].name, files[0].text.as_bytes()).unwrap() {
            crate::ingest::Contents::Records(r) => r.records,
            crate::ingest::Contents::Columns(c) => c.columns.rows().collect(),
        };
    assert_eq!(records.len(), 4);
    assert_eq!(records[3].engine.as_deref(), Some("sglang"));
    assert_eq!(
        records[3].metric(&crate::model::MetricKey::OutputThroughput),
        Some(1204.0)
    );
}

#[test]
fn a_zip_bomb_stops_at_the_size_limit() {
    // 64 MiB of spaces deflate to about 64 KB: a short link that would inflate hugely.
    let out = miniz_oxide::deflate::compress_to_vec(&vec![b' '; 64 << 20], 6);
    let data = format!(
        "1.{}",
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(&out)
    );
    assert!(data.len() < MAX_LINK_DATA_CHARS, "{}", data.len());
    assert!(matches!(
        decode_link_data(&data),
        Err(LinkDataError::TooLarge {
            max_bytes: MAX_LINK_DATA_BYTES
        })
    ));
}

proptest::proptest! {
    #[test]
    fn any_fragment_decodes_or_errs_without_panicking(s in "\\PC{0,200}") {
        let _ = decode_link_data(&s);
        let _ = decode_link_data(&format!("1.{s}"));
    }
}
