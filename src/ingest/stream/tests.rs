#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use proptest::prelude::*;

fn both(
    name: &str,
    bytes: &[u8],
) -> (
    Option<Ingested>,
    Result<Ingested, super::super::IngestError>,
) {
    let streamed = read_json_stream(name, bytes).ok().flatten();
    (streamed, super::super::read(name, bytes))
}

#[test]
fn a_serving_run_reads_the_same_either_way() {
    let t = br#"

  {"model_id": "m", "request_throughput": 2.0, "ttfts": [0.05, 0.06], "itls": [[0.01], []],
   "input_lens": [10, 12], "output_lens": [2, 1], "errors": ["", "boom"], "latencies": [0.2, 0]}
"#;
    let (s, r) = both("run.json", t);
    let s = s.unwrap_or_else(|| panic!("not streamed"));
    assert_eq!(Ok(s), r);
}

#[test]
fn a_serving_run_reads_into_columns_as_its_records() {
    let t = concat!(
        "{\"model_id\": \"m\", \"request_throughput\": 2.0, ",
        "\"ttfts\": [0.05, 0.06, null, 0.1], \"itls\": [[0.01, 0.5], [], [0.25], [\"a\", 7]], ",
        "\"input_lens\": [10, 12, 3, 4], \"output_lens\": [3, 1, 2, 2], ",
        "\"errors\": [\"\", \"boom\", \"\", \"\"], \"latencies\": [0.2, 0, 0.4, 0.3], ",
        "\"start_times\": [5.0, 5.5, 6.0, 6.5]}"
    );
    let whole = super::super::read("run.json", t.as_bytes()).unwrap();
    assert_eq!(whole.records[0].requests.len(), 4);
    assert_eq!(whole.records[0].requests[0].itl_ms, vec![10.0, 500.0]);
    let expected = crate::model::canonical::to_json(&whole.records);
    for chunk in [1, 7, 4096] {
        let got = stream_columns("run.json", t.as_bytes(), chunk).unwrap();
        let Some(Contents::Columns(c)) = got else {
            panic!("chunk {chunk}: not columns: {got:?}");
        };
        assert_eq!(c.columns.requests().total(), 4);
        let back = Contents::Columns(c).into_ingested();
        assert_eq!(crate::model::canonical::to_json(&back.records), expected);
        assert_eq!(back.records, whole.records, "chunk {chunk}");
        assert_eq!(
            (back.format, &back.warnings, &back.mapping, &back.note),
            (whole.format, &whole.warnings, &whole.mapping, &whole.note)
        );
    }
    // Without gaps: columns all the same, the records the row reader gives once rebuilt.
    let no_gaps = t.replace("[[0.01, 0.5], [], [0.25], [\"a\", 7]]", "[[], [], [], []]");
    for doc in [
        no_gaps.clone(),
        no_gaps.replace("\"itls\": [[], [], [], []], ", ""),
    ] {
        let got = stream_columns("run.json", doc.as_bytes(), 64).unwrap();
        let Some(Contents::Columns(c)) = got else {
            panic!("not columns: {got:?}");
        };
        assert_eq!(c.columns.requests().total(), 4);
        let whole = super::super::read("run.json", doc.as_bytes()).unwrap();
        let back = Contents::Columns(c).into_ingested();
        assert_eq!(
            (
                back.records,
                back.format,
                back.warnings,
                back.mapping,
                back.note
            ),
            (
                whole.records,
                whole.format,
                whole.warnings,
                whole.mapping,
                whole.note
            )
        );
    }
    // Two `itls` arrays: more lists than requests, left to the record reader.
    let twice = t.replace(
        "\"request_throughput\"",
        "\"itls\": [[1.0]], \"request_throughput\"",
    );
    assert!(stream_columns("run.json", twice.as_bytes(), 64)
        .unwrap()
        .is_none());
    assert!(read_json_stream("run.json", twice.as_bytes())
        .unwrap()
        .is_some());
}

/// [`stream_gaps_apart`] on `t`: its result, and the lists handed on (lengths, values).
fn apart(t: &str, chunk: usize, batch: usize) -> (Option<Contents>, Vec<Gaps>, Vec<u32>) {
    let mut handed: Vec<Gaps> = Vec::new();
    let mut stream = GapStream::new(batch, |lists: &[Gaps]| {
        assert!(!lists.is_empty());
        handed.extend_from_slice(lists);
    });
    let got = stream_gaps_apart("run.json", t.as_bytes(), chunk, &mut stream).unwrap();
    let lens = stream.lens().to_vec();
    (got, handed, lens)
}

#[test]
fn gaps_handed_on_in_batches_are_the_columns_gaps() {
    let t = concat!(
        "{\"model_id\": \"m\", \"request_throughput\": 2.0, ",
        "\"ttfts\": [0.05, 0.06, null, 0.1, 0.2], ",
        "\"itls\": [[0.01, 0.5], [], [0.25], [\"a\", 7], [0.001, 0.002, 0.003]], ",
        "\"input_lens\": [10, 12, 3, 4, 5], \"output_lens\": [3, 1, 2, 2, 4], ",
        "\"errors\": [\"\", \"boom\", \"\", \"\", \"\"], \"latencies\": [0.2, 0, 0.4, 0.3, 0.5]}"
    );
    let Some(Contents::Columns(whole)) = stream_columns("run.json", t.as_bytes(), 4096).unwrap()
    else {
        panic!("not columns");
    };
    let expected = Contents::Columns(whole).into_ingested();
    for chunk in [1, 7, 4096] {
        for batch in [1, 2, 3, 1000] {
            let (got, handed, lens) = apart(t, chunk, batch);
            let Some(Contents::Columns(c)) = got else {
                panic!("chunk {chunk}, batch {batch}: not columns: {got:?}");
            };
            assert_eq!(lens, vec![2, 0, 1, 1, 3]);
            assert_eq!(handed.len(), 5, "chunk {chunk}, batch {batch}");
            let mut back = Contents::Columns(c).into_ingested();
            // The columns' own lists are empty: the gaps are those handed on, in order.
            let requests = &mut back.records[0].requests;
            assert!(requests.iter().all(|q| q.itl_ms.is_empty()));
            for (q, list) in requests.iter_mut().zip(handed) {
                q.itl_ms = list;
            }
            assert_eq!(
                back.records, expected.records,
                "chunk {chunk}, batch {batch}"
            );
            assert_eq!(back.records[0].requests[4].itl_ms, vec![1.0, 2.0, 3.0]);
        }
    }
    // No gap at all: columns, only empty lists handed on.
    let no_gaps = t.replace(
        "[[0.01, 0.5], [], [0.25], [\"a\", 7], [0.001, 0.002, 0.003]]",
        "[[], [], [], [], []]",
    );
    let (got, handed, _) = apart(&no_gaps, 64, 1);
    assert!(matches!(got, Some(Contents::Columns(_))), "{got:?}");
    assert!(handed.iter().all(Gaps::is_empty));
    // Two `itls` arrays: declined after lists were handed on (the receiver drops them).
    let twice = t.replace(
        "\"request_throughput\"",
        "\"itls\": [[1.0]], \"request_throughput\"",
    );
    let (got, handed, _) = apart(&twice, 64, 1);
    assert!(got.is_none());
    assert!(!handed.is_empty());
}

#[test]
fn values_across_chunk_boundaries_read_the_same() {
    let t = concat!(
        "\u{FEFF}\n{\"model_id\": \"m\\\"[{\", \"request_throughput\": 2.5e0, ",
        "\"nested\": {\"a\": [1, {\"b\": \"]}\\\\\"}], \"c\": null}, ",
        "\"ttfts\": [0.05, null, \"inf\", true, [1], {\"x\": 2}], ",
        "\"itls\": [[0.01, 0.02], [], 7, [\"a\", 0.5]], \"input_lens\": [10, 12, 3, 4, 5, 6], ",
        "\"errors\": [\"\", \"boom \\u00e9\", null, 3], \"generated_texts\": [\"]\", \"x\"], ",
        "\"start_times\": {}, \"latencies\": [0.2, 0, 1, 2, 3, 4], \"tag\": false}  \n"
    );
    let whole = super::super::read("run.json", t.as_bytes());
    assert!(whole.is_ok(), "{whole:?}");
    for chunk in [1, 2, 3, 5, 8, 13, 64, 4096] {
        let s = read_in_chunks("run.json", t.as_bytes(), chunk, None)
            .ok()
            .flatten();
        assert_eq!(s.as_ref(), whole.as_ref().ok(), "chunk {chunk}");
    }
}

/// One element of a per-request array: mostly numbers (odd ones, some not JSON), then
/// what the readers take leniently or skip.
fn element() -> impl Strategy<Value = String> {
    prop_oneof![
        12 => "-?(0|[1-9][0-9]{0,20})(\\.[0-9]{1,20})?([eE][+-]?[0-9]{1,2})?",
        2 => super::super::json_number::tests::number_text(),
        1 => (0u64..1 << 20, 0u32..8).prop_map(|(m, k)| format!("{}", m as f64 / 10f64.powi(k as i32))),
        1 => prop::sample::select(vec![
            "null", "\"inf\"", "\"1,024\"", "\"x\"", "true", "[1, 2]", "[]", "{\"a\": 1}",
            "{}", " 0.5 ", "\n-0\t", "1e400", "NaN", "-", "[[0.25]]",
        ]).prop_map(String::from),
    ]
}

/// A per-request array of `n` elements (or, now and then, something that is not one).
fn array(n: usize, item: BoxedStrategy<String>) -> BoxedStrategy<String> {
    prop_oneof![
        8 => (prop::collection::vec(item, n), prop::sample::select(vec![",", ", ", " ,\n"]))
            .prop_map(|(v, sep)| format!("[{}]", v.join(sep))),
        1 => prop::sample::select(vec!["7", "null", "{}", "\"a\"", "[]"]).prop_map(String::from),
    ]
    .boxed()
}

/// A serving run on one line with per-request arrays of odd content.
fn serving_doc() -> impl Strategy<Value = String> {
    (1usize..6).prop_flat_map(|n| {
        let gaps = prop_oneof![
            6 => prop::collection::vec(element(), 0..6)
                .prop_map(|v| format!("[{}]", v.join(","))),
            1 => element(),
        ];
        (
            array(n, element().boxed()),
            array(n, element().boxed()),
            array(n, gaps.boxed()),
            array(n, element().boxed()),
            array(n, element().boxed()),
        )
            .prop_map(|(ttfts, lens, itls, outs, starts)| {
                format!(
                    "{{\"model_id\": \"m\", \"request_throughput\": 2.0, \"ttfts\": {ttfts}, \
                         \"input_lens\": {lens}, \"itls\": {itls}, \"output_lens\": {outs}, \
                         \"start_times\": {starts}, \"latencies\": {lens}}}"
                )
            })
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1024))]

    /// The streamed readers (records and columns, the input cut in chunks of any size) give
    /// what the in-memory reader gives, value for value (`{:?}` tells -0 from 0), or leave
    /// the document to it; a document that is JSON is never left over.
    #[test]
    fn odd_arrays_read_as_the_in_memory_reader_reads_them(
        doc in serving_doc(),
        chunk in prop_oneof![1usize..16, Just(1 << 20)],
    ) {
        let whole = super::super::read("run.json", doc.as_bytes());
        let is_json = serde_json::from_str::<Value>(&doc).is_ok();
        let records = read_in_chunks("run.json", doc.as_bytes(), chunk, None).unwrap();
        match &records {
            Some(r) => prop_assert_eq!(Ok(format!("{r:?}")), whole.as_ref().map(|w| format!("{w:?}"))),
            None => prop_assert!(!is_json, "a JSON document left over"),
        }
        match stream_columns("run.json", doc.as_bytes(), chunk).unwrap() {
            Some(c) => {
                let g = c.into_ingested();
                let shown = |w: &Ingested| {
                    format!("{:?}", (&w.records, w.format, &w.warnings, &w.mapping, &w.note))
                };
                prop_assert_eq!(Ok(shown(&g)), whole.as_ref().map(shown));
            }
            // Left to the record reader (gaps it could not give as columns).
            None => prop_assert!(records.is_some() || !is_json),
        }
        // Gaps handed on in batches of any size: once put back, the same run.
        let (apart_got, handed, _) = apart(&doc, chunk, chunk % 5 + 1);
        let columns = stream_columns("run.json", doc.as_bytes(), chunk).unwrap();
        match (apart_got, columns) {
            (Some(Contents::Columns(a)), Some(Contents::Columns(c))) => {
                let mut a = Contents::Columns(a).into_ingested();
                // Nothing handed on when the run has no `itls` array.
                if !handed.is_empty() {
                    prop_assert_eq!(a.records[0].requests.len(), handed.len());
                    for (q, list) in a.records[0].requests.iter_mut().zip(handed) {
                        q.itl_ms = list;
                    }
                }
                let c = Contents::Columns(c).into_ingested();
                prop_assert_eq!(format!("{:?}", a.records), format!("{:?}", c.records));
            }
            (Some(Contents::Records(a)), Some(Contents::Records(c))) => {
                prop_assert_eq!(format!("{a:?}"), format!("{c:?}"));
            }
            (None, None) => {}
            (a, c) => prop_assert!(false, "apart {a:?}, columns {c:?}"),
        }
    }
}

#[test]
fn anything_but_the_plain_case_is_left_to_the_in_memory_reader() {
    for t in [
        &b"[{\"mean_ttft_ms\": 1}]"[..],
        b"{\"mean_ttft_ms\": NaN}",
        b"{\"mean_ttft_ms\": 1}\n{\"mean_ttft_ms\": 2}",
        b"{\"mean_ttft_ms\": 1",
        b"{\"mean_ttft_ms\": \"\xFF\"}",
        b"\xFF\xFE{\0}\0",
        b"{\"a\": 1}",
        b"   ",
        b"",
    ] {
        assert!(
            read_json_stream("x.json", t).ok().flatten().is_none(),
            "{t:?}"
        );
    }
}
