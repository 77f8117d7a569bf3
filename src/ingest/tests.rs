use super::*;

#[test]
fn format_names_are_unique_and_round_trip() {
    for f in Format::ALL {
        assert_eq!(Format::from_name(f.name()), Some(*f));
    }
    let mut names: Vec<_> = Format::ALL.iter().map(|f| f.name()).collect();
    names.sort();
    names.dedup();
    assert_eq!(names.len(), Format::ALL.len());
}

#[test]
fn warnings_display_their_place() {
    assert_eq!(Warning::line(12, "bad").to_string(), "line 12: bad");
    assert_eq!(
        Warning::at("records[3].gpu", "bad").to_string(),
        "records[3].gpu: bad"
    );
    assert_eq!(Warning::file("bad").to_string(), "bad");
}

#[test]
fn a_recognised_file_without_points_says_so() {
    let got = read("b.json", br#"{"benchmarks": []}"#).unwrap();
    assert_eq!(got.format, Format::Guidellm);
    assert!(got.records.is_empty());
    assert_eq!(
        got.note.as_deref(),
        Some("no records: this guidellm report holds no benchmark point")
    );
}

#[test]
fn empty_input_is_an_error_naming_the_file() {
    let e = read("x.json", b"").unwrap_err();
    assert_eq!(e.to_string(), "x.json: empty file");
    assert!(read("x.json", b"  \n\n").is_err());
}
