use super::*;

#[test]
fn non_finite_tokens_are_rewritten_outside_strings_only() {
    let t = r#"{"a": Infinity, "b": -Infinity, "c": NaN, "d": "NaN Infinity", "e": "\"Infinity"}"#;
    let r = rewrite_non_finite(t);
    let v: Value = serde_json::from_str(&r).unwrap();
    assert_eq!(v["a"], "inf");
    assert_eq!(v["b"], "-inf");
    assert_eq!(v["c"], "NaN");
    assert_eq!(v["d"], "NaN Infinity");
    assert_eq!(v["e"], "\"Infinity");
    assert!(matches!(rewrite_non_finite("{\"a\": 1}"), Cow::Borrowed(_)));
}

#[test]
fn json_lines_keep_good_lines_and_warn_about_bad_ones() {
    let t = "{\"a\": 1}\n{\"a\": 2,\n{\"a\": 3}\n{\"a\"";
    let d = parse_docs("f", t, 1).unwrap();
    assert_eq!(d.values.len(), 2);
    assert_eq!(d.values[1].0, 3);
    assert_eq!(d.warnings.len(), 2, "{:?}", d.warnings);
    assert!(
        d.warnings[0].to_string().starts_with("line 2"),
        "{}",
        d.warnings[0]
    );
    assert!(
        d.warnings[1].to_string().starts_with("line 4"),
        "{}",
        d.warnings[1]
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let t = "[".repeat(10_000) + &"]".repeat(10_000);
    let e = parse_docs("deep.json", &t, 1).err().unwrap();
    assert!(
        e.to_string()
            .starts_with("deep.json: invalid JSON at line 1"),
        "{e}"
    );
}

#[test]
fn truncated_single_document_is_an_error_with_position() {
    let e = parse_docs("run.json", "{\n  \"a\": 1,\n  \"b\": [1, 2", 1)
        .err()
        .unwrap();
    assert!(
        e.to_string()
            .starts_with("run.json: invalid JSON at line 3"),
        "{e}"
    );
}
