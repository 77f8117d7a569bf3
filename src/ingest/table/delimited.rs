//! CSV and TSV tables read streaming: the header and the first rows fix the column mapping,
//! then every row becomes records without the table being kept. Quote-free text goes through
//! [`PlainRows`] (and, natively, several threads); anything else through the `csv` crate.

#[cfg(not(target_arch = "wasm32"))]
use super::parallel;
use super::plain_rows::PlainRows;
use super::ragged::Ragged;
use super::rows::RowMapper;
use super::{
    auto_mapping, merge_mapping, note_mapping, push_mapping, ColumnMapping, RowsContext, Table,
};
use crate::ingest::{IngestError, Ingested, Warning};

pub(super) fn csv_delimiter(header: &str) -> Option<u8> {
    [b',', b'\t', b';']
        .into_iter()
        .map(|d| (d, header.bytes().filter(|b| *b == d).count()))
        .filter(|(_, n)| *n > 0)
        .max_by_key(|(_, n)| *n)
        .map(|(d, _)| d)
}

/// Rows read before the mapping is fixed (to tell numeric columns from text ones).
pub(super) const SAMPLE_ROWS: usize = 200;

/// The `csv` crate's reader for `text`: rows of any width, no header (the first row is read
/// as one).
pub(super) fn csv_reader(text: &str, delimiter: u8) -> csv::Reader<&[u8]> {
    csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .has_headers(false)
        .from_reader(text.as_bytes())
}

/// The next non-blank CSV row into `rec` and its line; unreadable rows become warnings (or,
/// before the header, the error).
pub(super) fn next_row(
    rdr: &mut csv::Reader<&[u8]>,
    rec: &mut csv::StringRecord,
    source: &str,
    have_header: bool,
    warnings: &mut Vec<Warning>,
) -> Result<Option<usize>, IngestError> {
    loop {
        match rdr.read_record(rec) {
            Ok(false) => return Ok(None),
            Ok(true) => {
                if rec.iter().all(|c| c.trim().is_empty()) {
                    continue;
                }
                return Ok(Some(rec.position().map_or(0, |p| p.line() as usize)));
            }
            Err(e) => {
                let line = e.position().map_or(0, |p| p.line() as usize);
                if !have_header {
                    return Err(IngestError::Csv {
                        file: source.to_string(),
                        line: line.max(1),
                        message: e.to_string(),
                    });
                }
                warnings.push(Warning::line(
                    line,
                    format!("unreadable row ({e}), skipped"),
                ));
            }
        }
    }
}

/// The header and the first [`SAMPLE_ROWS`] rows, whichever way the rows are split: `next`
/// gives the next non-blank row's line and cells (told whether the header has been read, and
/// where to put warnings). Returns the table, the header's width and the ragged rows so far;
/// text without a row is [`IngestError::Empty`].
pub(super) fn sample_rows(
    source: &str,
    warnings: &mut Vec<Warning>,
    mut next: impl FnMut(
        bool,
        &mut Vec<Warning>,
    ) -> Result<Option<(usize, csv::StringRecord)>, IngestError>,
) -> Result<(Table, usize, Ragged), IngestError> {
    let Some((_, header)) = next(false, warnings)? else {
        return Err(IngestError::Empty {
            file: source.to_string(),
        });
    };
    let mut t = Table {
        headers: header.iter().map(|c| c.trim().to_string()).collect(),
        ..Table::default()
    };
    let width = t.headers.len();
    let mut ragged = Ragged { count: 0 };
    while t.rows.len() < SAMPLE_ROWS {
        let Some((line, cells)) = next(true, warnings)? else {
            break;
        };
        ragged.check(line, cells.len(), width, warnings);
        t.rows.push((line, cells));
    }
    Ok((t, width, ragged))
}

/// Reads a CSV/TSV table (delimiter from the header line), streaming: the first rows fix the
/// mapping, then each row becomes records without the table being kept. Ragged rows are read
/// with a warning (missing cells empty, extra cells ignored).
///
/// Text without quotes (most benchmark CSVs) is split by hand
/// into cells borrowed from `text`; anything else goes through the `csv` crate. Both give the
/// same rows, lines and warnings.
pub(super) fn read_csv(
    source: &str,
    text: &str,
    user: Option<&[ColumnMapping]>,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    let header_line = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let delimiter = csv_delimiter(header_line).unwrap_or(b',');
    if PlainRows::applies(text) {
        #[cfg(not(target_arch = "wasm32"))]
        let runs = parallel::runs_for(text.len());
        #[cfg(target_arch = "wasm32")]
        let runs = 1;
        return read_plain_csv(source, text, delimiter, user, out, runs);
    }
    let mut rdr = csv_reader(text, delimiter);
    let mut rec = csv::StringRecord::new();
    let (t, width, mut ragged) =
        sample_rows(source, &mut out.warnings, |have_header, warnings| {
            let line = next_row(&mut rdr, &mut rec, source, have_header, warnings)?;
            Ok(line.map(|line| (line, rec.clone())))
        })?;
    map_csv_rows(source, &t, text, user, 1, out, |mapper, out| {
        while let Some(line) = next_row(&mut rdr, &mut rec, source, true, &mut out.warnings)? {
            ragged.check(line, rec.len(), width, &mut out.warnings);
            mapper.row(line, &rec, &mut out.records, &mut out.warnings);
        }
        ragged.finish(&mut out.warnings);
        Ok(())
    })
}

/// The part of reading a CSV both row sources share: maps the columns from the sampled rows
/// (or the user's mapping), maps the sampled rows, lets `rest` map the remaining ones (on
/// `runs` threads), and records the mapping. Records come out stamped with `source` and the
/// format.
fn map_csv_rows(
    source: &str,
    t: &Table,
    text: &str,
    user: Option<&[ColumnMapping]>,
    runs: usize,
    out: &mut Ingested,
    rest: impl FnOnce(&mut RowMapper<'_>, &mut Ingested) -> Result<(), IngestError>,
) -> Result<(), IngestError> {
    let mapping = merge_mapping(auto_mapping(t), user);
    note_mapping(&mapping, out);
    let ctx = RowsContext {
        context: &[],
        tags: &[],
        at: "",
    };
    let mut mapper = RowMapper::new(&mapping, &ctx);
    mapper.stamp = Some((source.into(), out.format.name().into()));
    let fresh = out.records.is_empty();
    if runs < 2 {
        // One row per line at most (and one more without a final line end). Rows mapped on
        // several threads reserve their room themselves.
        let estimated_rows = memchr::memchr_iter(b'\n', text.as_bytes()).count() + 1;
        out.records
            .reserve_exact(estimated_rows.min(1 << 22) * mapper.per_row());
    }
    for (line, cells) in &t.rows {
        mapper.row(*line, cells, &mut out.records, &mut out.warnings);
    }
    rest(&mut mapper, out)?;
    // Every record is this reader's and stamped; unless some got an inferred value, the
    // final pass has nothing to do.
    out.stamped = fresh && !mapper.any_inferred;
    push_mapping(mapping, out);
    Ok(())
}

/// [`PlainRows`] over `text` with the header and the sample read ([`sample_rows`]): the rows
/// stand after the sample, ready for the rest; with the sampled table, its width and the
/// ragged-row check.
pub(super) fn sample_plain_rows<'a>(
    source: &str,
    text: &'a str,
    delimiter: u8,
    warnings: &mut Vec<Warning>,
) -> Result<(PlainRows<'a>, Table, usize, Ragged), IngestError> {
    let mut rows = PlainRows {
        rest: text,
        line: 1,
        reported: 1,
        delimiter,
    };
    let mut cells: Vec<&str> = Vec::new();
    let (t, width, ragged) = sample_rows(source, warnings, |_, _| {
        Ok(rows
            .next(&mut cells)
            .map(|line| (line, cells.iter().collect())))
    })?;
    Ok((rows, t, width, ragged))
}

/// [`read_csv`] for text [`PlainRows`] applies to. The rows after the sampled ones are mapped
/// on `runs` threads (native builds; see [`parallel`]).
pub(super) fn read_plain_csv(
    source: &str,
    text: &str,
    delimiter: u8,
    user: Option<&[ColumnMapping]>,
    out: &mut Ingested,
    runs: usize,
) -> Result<(), IngestError> {
    let (mut rows, t, width, mut ragged) =
        sample_plain_rows(source, text, delimiter, &mut out.warnings)?;
    let mut cells: Vec<&str> = Vec::new();
    map_csv_rows(source, &t, text, user, runs, out, |mapper, out| {
        #[cfg(not(target_arch = "wasm32"))]
        let done = parallel::map_rows(
            &rows,
            mapper,
            width,
            &mut ragged,
            &mut out.records,
            &mut out.warnings,
            runs,
        );
        // No threads in the browser (the page parses in a worker already).
        #[cfg(target_arch = "wasm32")]
        let done = {
            let _ = runs;
            false
        };
        if !done {
            while let Some(line) = rows.next(&mut cells) {
                ragged.check(line, cells.len(), width, &mut out.warnings);
                mapper.row(line, cells.as_slice(), &mut out.records, &mut out.warnings);
            }
        }
        ragged.finish(&mut out.warnings);
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows and lines as the `csv` crate gives them (blank rows skipped like `next_row`).
    fn csv_rows(text: &str, delimiter: u8) -> Vec<(usize, Vec<String>)> {
        let mut rdr = csv_reader(text, delimiter);
        let mut rec = csv::StringRecord::new();
        let mut out = Vec::new();
        let mut warnings = Vec::new();
        while let Some(line) = next_row(&mut rdr, &mut rec, "f", true, &mut warnings).unwrap() {
            out.push((line, rec.iter().map(str::to_string).collect()));
        }
        out
    }

    #[test]
    fn plain_rows_split_like_the_csv_crate() {
        let cases = [
            "a,b,c\n1,2,3\n",
            "a,b\n\n  \n , \n1,2,3\n,,\n7,8",
            "a\tb\n1\t2\n\t\n3\t4\n",
            "x;y\n\u{e9}t\u{e9};1,5\n;;\n",
            "\n\nmodel,TTFT (ms)\nllama, 12.5 \n\n\nmistral,13\n",
            "a,b\n1,2\n3,4\n\n",
            "a,b,c\r\n1,2,3\r\n\r\n4,5\r\n",
            "\r\n\r\na,b\r\n \r\n1,2\r\n\r\n3,4",
            "a,b\r1,2\r\r3,4\r",
            "a,b\n1,2\r\n\n3,4\r\r\n5,6\n\r7,8\n",
            "a,b\n \n\n1,2\n\n \n\n3,4",
        ];
        for text in cases {
            assert!(PlainRows::applies(text), "{text:?}");
            let d = csv_delimiter(text.lines().find(|l| !l.trim().is_empty()).unwrap()).unwrap();
            let mut rows = PlainRows {
                rest: text,
                line: 1,
                reported: 1,
                delimiter: d,
            };
            let mut cells = Vec::new();
            let mut got = Vec::new();
            while let Some(line) = rows.next(&mut cells) {
                got.push((
                    line,
                    cells.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
                ));
            }
            assert_eq!(got, csv_rows(text, d), "{text:?}");
        }
        assert!(!PlainRows::applies("a,b\n\"1,2\",3\n"));
    }

    #[test]
    fn both_row_sources_sample_the_same_table() {
        let read = |text: &str| {
            let mut out = Ingested::new(crate::ingest::Format::GenericCsv);
            let result = read_csv("t.csv", text, None, &mut out);
            (result, out)
        };
        // The quoted header sends the same table through the `csv` crate.
        for body in ["", "\n\n", "a,1\n", "a,1,2\nb\n \nc,5\n,\nd,x\n"] {
            let (plain, plain_out) = read(&format!("model,TTFT (ms)\n{body}"));
            let (quoted, quoted_out) = read(&format!("\"model\",TTFT (ms)\n{body}"));
            assert_eq!(plain, quoted, "{body:?}");
            assert_eq!(plain_out.records, quoted_out.records, "{body:?}");
            assert_eq!(plain_out.warnings, quoted_out.warnings, "{body:?}");
            assert_eq!(plain_out.mapping, quoted_out.mapping, "{body:?}");
        }
        let (_, out) = read("model,TTFT (ms)\na,1,2\nb\n");
        assert_eq!(out.records.len(), 1, "{:?}", out.records);
        assert_eq!(
            out.warnings
                .iter()
                .filter(|w| w.message.contains("cells where the header has 2"))
                .count(),
            2
        );
        assert_eq!(
            read(" \n\n").0,
            Err(IngestError::Empty {
                file: "t.csv".into()
            })
        );
    }
}
