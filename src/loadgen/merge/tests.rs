use super::*;

#[test]
fn request_lines_read_back_as_written() {
    let r = RequestRecord {
        index: 7,
        input_len: 12,
        max_tokens: 3,
        intended_at_s: 0.5,
        dispatched_at_s: 0.5,
        sent_at_s: 0.501,
        ttft_s: Some(0.02),
        e2el_s: Some(0.03),
        chunks: [
            ChunkArrival {
                at_s: 0.02,
                tokens: 1,
                coalesced: false,
            },
            ChunkArrival {
                at_s: 0.03,
                tokens: 1,
                coalesced: false,
            },
            ChunkArrival {
                at_s: 0.03,
                tokens: 1,
                coalesced: true,
            },
        ]
        .into_iter()
        .collect(),
        ..RequestRecord::default()
    };
    let (stage, back) = parse_request_line(&report::request_line(2, &r)).unwrap();
    assert_eq!(stage, 2);
    assert_eq!(back.index, 7);
    assert_eq!(back.chunks, r.chunks);
    assert_eq!(
        (back.ttft_s, back.e2el_s, back.sent_at_s),
        (r.ttft_s, r.e2el_s, r.sent_at_s)
    );
    let failed = RequestRecord {
        failure: Some(Failure {
            kind: FailureKind::Http(503),
            message: "busy".into(),
        }),
        ..r
    };
    let (_, back) = parse_request_line(&report::request_line(0, &failed)).unwrap();
    assert_eq!(back.failure, failed.failure);
    assert_eq!(
        FailureKind::from_name("idle_timeout"),
        Some(FailureKind::IdleTimeout)
    );
    assert_eq!(FailureKind::from_name("http_x"), None);
    assert!(parse_request_line("{}").unwrap_err().contains("stage"));
}

#[test]
fn the_start_skew_is_read_as_seconds_where_the_command_line_is_parsed() {
    use clap::Parser;
    #[derive(Parser)]
    struct Wrap {
        #[command(flatten)]
        args: MergeArgs,
    }
    let parse = |skew: &str| {
        let flag = format!("--max-start-skew={skew}");
        Wrap::try_parse_from(["merge", "a.json", "-o", "m.json", flag.as_str()])
            .map(|w| w.args.max_start_skew)
            .map_err(|e| e.to_string())
    };
    assert_eq!(parse("0.5"), Ok(0.5));
    for bad in ["-1", "NaN", "inf", "soon"] {
        let why = parse(bad).unwrap_err();
        assert!(
            why.contains("--max-start-skew") && why.contains("seconds"),
            "{why}"
        );
    }
}
