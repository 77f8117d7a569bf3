use super::*;

fn events(chunks: &[&[u8]]) -> Vec<String> {
    let mut p = SseParser::new();
    let mut out = Vec::new();
    for c in chunks {
        p.push(c);
        while let Some(e) = p.next_event().unwrap() {
            out.push(String::from_utf8(e.to_vec()).unwrap());
        }
    }
    out
}

#[test]
fn events_split_anywhere_are_reassembled() {
    let whole = b"data: {\"a\":1}\n\n: keep-alive\n\ndata: [DONE]\r\n\r\n";
    let expected = vec!["{\"a\":1}".to_string(), "[DONE]".to_string()];
    for cut in 0..whole.len() {
        for cut2 in cut..whole.len() {
            let got = events(&[&whole[..cut], &whole[cut..cut2], &whole[cut2..]]);
            assert_eq!(got, expected, "cuts {cut} {cut2}");
        }
    }
}

#[test]
fn several_data_lines_join_with_newline_and_other_fields_are_ignored() {
    let got = events(&[b"event: x\nid: 3\ndata: one\ndata:two\n\ndata: three\n\n"]);
    assert_eq!(got, ["one\ntwo", "three"]);
}

#[test]
fn runaway_event_is_an_error() {
    let mut p = SseParser::new();
    p.push(&vec![b'x'; MAX_EVENT_BYTES + 1]);
    assert_eq!(p.next_event(), Err(SseError::EventTooLong));
}

#[test]
fn absurd_usage_counts_are_ignored_not_the_chunk() {
    for bad in [
        "-1",
        "1e308",
        "\"NaN\"",
        "2.5",
        "99999999999",
        "true",
        "[1]",
        "{\"n\":1}",
    ] {
        let chunk = format!(
            r#"{{"choices":[{{"text":"a"}}],"usage":{{"prompt_tokens":{bad},"completion_tokens":3}}}}"#
        );
        let c = decode_openai(chunk.as_bytes()).unwrap_or_else(|| panic!("{bad}"));
        assert!(c.usage_ignored, "{bad}");
        assert_eq!(
            (c.text_bytes, c.prompt_tokens, c.completion_tokens),
            (1, None, Some(3)),
            "{bad}"
        );
    }
    // Bare NaN/Infinity (not JSON, as Python writes them) are absurd counts too, the text
    // captured once.
    for bad in ["NaN", "Infinity", "-Infinity"] {
        let chunk = format!(
            r#"{{"choices":[{{"delta":{{"content":"ab"}}}}],"usage":{{"prompt_tokens":{bad},"completion_tokens":3}}}}"#
        );
        let mut text = String::new();
        let c = capture(&mut text, || decode_openai(chunk.as_bytes()))
            .unwrap_or_else(|| panic!("{bad}"));
        assert!(c.usage_ignored, "{bad}");
        assert_eq!(
            (text.as_str(), c.prompt_tokens, c.completion_tokens),
            ("ab", None, Some(3))
        );
    }
    let c = decode_tgi(br#"{"token":{"text":"a"},"details":{"generated_tokens":NaN}}"#).unwrap();
    assert_eq!((c.completion_tokens, c.usage_ignored), (None, true));
    let c = decode_sglang(br#"{"text":"ab","meta_info":{"prompt_tokens":Infinity}}"#).unwrap();
    assert_eq!((c.prompt_tokens, c.usage_ignored), (None, true));
    assert!(decode_openai(br#"{"choices":[], NaN}"#).is_none());
    // A whole number written as a float is a count; null is no count and nothing ignored.
    let c =
        decode_openai(br#"{"choices":[],"usage":{"prompt_tokens":7.0,"completion_tokens":null}}"#)
            .unwrap();
    assert_eq!(
        (c.prompt_tokens, c.completion_tokens, c.usage_ignored),
        (Some(7), None, false)
    );
    let c = decode_tgi(br#"{"token":{"text":"a"},"details":{"generated_tokens":-4}}"#).unwrap();
    assert_eq!(
        (c.completion_tokens, c.usage_ignored, c.finished),
        (None, true, true)
    );
    let c =
        decode_sglang(br#"{"text":"ab","meta_info":{"prompt_tokens":"x","completion_tokens":2}}"#)
            .unwrap();
    assert_eq!(
        (c.prompt_tokens, c.completion_tokens, c.usage_ignored),
        (None, Some(2), true)
    );
}

#[test]
fn the_model_a_chunk_names_is_read() {
    assert_eq!(
        model_named(br#"{"id":"x","model":"llama-3\u002e1","choices":[]}"#).as_deref(),
        Some("llama-3.1")
    );
    assert_eq!(model_named(br#"{"choices":[]}"#), None);
    assert_eq!(model_named(br#"{"model":null}"#), None);
    assert_eq!(model_named(b"not json"), None);
}

#[test]
fn decodes_openai_chunks() {
    let c = decode_openai(br#"{"choices":[{"index":0,"text":" hi","finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}"#).unwrap();
    assert_eq!(
        (
            c.text_bytes,
            c.has_choice,
            c.completion_tokens,
            c.prompt_tokens
        ),
        (3, true, Some(2), Some(5))
    );
    let c = decode_openai(br#"{"choices":[{"delta":{"content":"h\u00e9"}}]}"#).unwrap();
    assert_eq!(c.text_bytes, 3);
    let c = decode_openai(br#"{"choices":[],"usage":{"completion_tokens":9}}"#).unwrap();
    assert!(!c.has_choice);
    assert_eq!(c.completion_tokens, Some(9));
    assert!(
        decode_openai(br#"{"error":{"message":"boom"}}"#)
            .unwrap()
            .error
    );
    assert!(decode_openai(b"{not json").is_none());
}

#[test]
fn finish_reasons_reasoning_and_tool_calls_are_read() {
    let c = decode_openai(
        br#"{"choices":[{"delta":{},"finish_reason":"length"}],"usage":{"completion_tokens":5}}"#,
    )
    .unwrap();
    assert!(c.finished && c.has_choice);
    assert_eq!((c.text_bytes, c.completion_tokens), (0, Some(5)));
    let c =
        decode_openai(br#"{"choices":[{"delta":{"content":"a"},"finish_reason":null}]}"#).unwrap();
    assert!(!c.finished);
    let c = decode_openai(br#"{"choices":[{"delta":{"reasoning":"hm","content":""}}]}"#).unwrap();
    assert_eq!(c.text_bytes, 2);
    let c = decode_openai(
        br#"{"choices":[{"delta":{"reasoning_content":"abc","content":null,"tool_calls":null}}]}"#,
    )
    .unwrap();
    assert_eq!(c.text_bytes, 3);
    let c = decode_openai(
            br#"{"choices":[{"delta":{"tool_calls":[{"index":0,"id":"x","type":"function","function":{"name":"f","arguments":"{\"a\""}}]}}]}"#,
        )
        .unwrap();
    assert_eq!(c.text_bytes, 5);
    let c = decode_openai(br#"{"choices":[{"delta":{"role":"assistant"}}]}"#).unwrap();
    assert_eq!((c.text_bytes, c.has_choice), (0, true));
    assert!(decode_tgi(br#"{"token":{"text":"x","special":false},"details":{"finish_reason":"length","generated_tokens":1}}"#).unwrap().finished);
    assert!(
        !decode_tgi(br#"{"token":{"text":"x","special":false},"details":null}"#)
            .unwrap()
            .finished
    );
    assert!(
        decode_sglang(
            br#"{"text":"ab","meta_info":{"finish_reason":{"type":"length","length":2}}}"#
        )
        .unwrap()
        .finished
    );
    assert!(
        !decode_sglang(br#"{"text":"ab","meta_info":{"finish_reason":null}}"#)
            .unwrap()
            .finished
    );
}

#[test]
fn capture_collects_the_generated_text_with_escapes_decoded() {
    let mut text = String::from("a");
    let c = capture(&mut text, || {
        decode_openai(br#"{"choices":[{"delta":{"content":" b\n\u00e9"}}]}"#)
    });
    assert_eq!(c.unwrap().text_bytes, 5);
    assert_eq!(text, "a b\n\u{e9}");
    // Outside capture nothing is collected.
    decode_openai(br#"{"choices":[{"text":"zzz"}]}"#).unwrap();
    assert_eq!(text, "a b\n\u{e9}");
}

#[test]
fn decodes_tgi_and_sglang_chunks() {
    let c = decode_tgi(br#"{"index":1,"token":{"id":3,"text":" a","logprob":0.0,"special":false},"generated_text":null,"details":null}"#).unwrap();
    assert_eq!((c.text_bytes, c.has_choice), (2, true));
    let c =
        decode_sglang(br#"{"text":"abc","meta_info":{"prompt_tokens":4,"completion_tokens":3}}"#)
            .unwrap();
    assert_eq!((c.text_bytes, c.completion_tokens), (3, Some(3)));
}
