//! Tables: CSV/TSV, markdown tables (with context from the headings above them), pandas text
//! tables, wide tables with one column group per GPU (`throughput_a100`, `throughput_tesla`),
//! TGI benchmark tables and canonical CSV; and the column mapping (source column → canonical
//! field) that the UI shows and lets the user change.
//!
//! Columns are mapped by name and unit hints: dimension synonyms (`batch`, `bs`, `qps`,
//! `concurrency`, `gpu`, ...), latency families and statistics (`TTFT (ms)`, `ttft_s`,
//! `p99_itl_ms`) with seconds scaled to ms, throughputs by unit (`req/s` → request throughput,
//! `tok/s` → output throughput unless the name says total or input). A throughput without a
//! unit stays `extra.<name>` rather than a guess; latency-per-token averages that are not TPOT
//! (`Average latency per token (ms)`) stay `extra.<name>`; unknown numeric columns become
//! `extra.<name>`, unknown text columns `tag.<name>`; an `Improvement` column is kept as
//! `extra.reported_improvement_pct` (the file's own figure, shown beside the recomputed one);
//! other derived columns (`speedup`, `delta`) and the index are ignored.

use std::sync::Arc;

use super::fields::infer_dim;
use super::names::parse_test_name;
use super::text::{parse_quantity, snake, to_ms_factor};
use super::{Format, IngestError, Ingested, Warning};
use crate::model::canonical;
use crate::model::{
    Dim, DimKey, DimValue, LatencyMetric, MetricKey, Metrics, Percentile, Record, Stat,
};

#[cfg(not(target_arch = "wasm32"))]
mod parallel;

/// How one source column of a table was mapped.
#[derive(Clone, Debug, PartialEq)]
pub struct ColumnMapping {
    /// The column name as written in the file.
    pub column: String,
    /// The canonical field it feeds (`input_len`, `mean_ttft_ms`, `tag.status`,
    /// `extra.throughput`), or `None` when ignored.
    pub target: Option<String>,
    /// What each value is multiplied by to reach the canonical unit (1000 for seconds → ms).
    pub scale: f64,
    /// For wide tables: the GPU this column's values belong to (`A100` for `throughput_a100`).
    pub gpu: Option<String>,
    /// Why the column was mapped so (or ignored).
    pub reason: String,
}

impl ColumnMapping {
    fn new(column: &str, target: Option<String>, scale: f64, reason: impl Into<String>) -> Self {
        ColumnMapping {
            column: column.to_string(),
            target,
            scale,
            gpu: None,
            reason: reason.into(),
        }
    }
}

/// A table of text cells with the context found around it.
#[derive(Clone, Debug, Default)]
pub(crate) struct Table {
    pub headers: Vec<String>,
    /// (1-based line, cells)
    pub rows: Vec<(usize, csv::StringRecord)>,
    /// Dimensions from headings above the table: (dimension, value, heading line).
    pub context: Vec<(Dim, String, usize)>,
}

/// Engine names recognised in headings and console context lines (lowercase).
pub(crate) const ENGINES: &[&str] = &[
    "vllm",
    "sglang",
    "sgl",
    "tgi",
    "trtllm",
    "tensorrt-llm",
    "trt-llm",
    "lmdeploy",
    "llama.cpp",
    "ollama",
    "mlc-llm",
    "deepspeed-mii",
    "aphrodite",
    "exllamav2",
    "text-generation-inference",
];

/// Whether a word names a GPU family (`a100`, `H100`, `mi300x`, `tesla`, `l40s`).
pub(crate) fn is_gpu_word(word: &str) -> bool {
    let w = word.to_ascii_lowercase();
    if matches!(
        w.as_str(),
        "tesla" | "rtx" | "gaudi" | "gaudi2" | "gaudi3" | "tpu" | "cpu" | "a6000" | "a5000"
    ) || w.starts_with("rtx")
        || w.starts_with("tpu")
    {
        return true;
    }
    let rest = w
        .strip_prefix("mi")
        .or_else(|| w.strip_prefix("gh"))
        .or_else(|| w.strip_prefix("gb"))
        .or_else(|| w.strip_prefix(['a', 'h', 'b', 'l', 't', 'v']));
    match rest {
        Some(r) => {
            let digits = r.bytes().take_while(u8::is_ascii_digit).count();
            (1..=4).contains(&digits)
                && r[digits..].len() <= 3
                && r[digits..].bytes().all(|b| b.is_ascii_alphabetic())
        }
        None => false,
    }
}

/// A GPU suffix as people write it: `a100` → `A100`, `tesla` → `Tesla`, `mi300x` → `MI300X`.
fn gpu_display(suffix: &str) -> String {
    if suffix.bytes().any(|b| b.is_ascii_digit()) {
        suffix.to_ascii_uppercase()
    } else {
        let mut c = suffix.chars();
        match c.next() {
            Some(f) => f.to_uppercase().chain(c).collect(),
            None => String::new(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Recognising and splitting tables.

fn split_md_row(line: &str) -> Vec<String> {
    let t = line.trim();
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    t.split('|').map(|c| c.trim().to_string()).collect()
}

fn is_md_separator(line: &str) -> bool {
    let t = line.trim();
    t.contains('-')
        && t.contains('|')
        && t.bytes()
            .all(|b| matches!(b, b'|' | b'-' | b':' | b' ' | b'\t'))
}

/// Markdown tables in `text`, each with the heading context above it.
pub(crate) fn markdown_tables(text: &str) -> Vec<Table> {
    let lines: Vec<&str> = text.lines().collect();
    let mut tables = Vec::new();
    let mut model: Option<(String, usize)> = None;
    let mut gpu: Option<(String, usize)> = None;
    let mut engine: Option<(String, Option<String>, usize)> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(h) = line.strip_prefix('#') {
            let level = 1 + h.bytes().take_while(|b| *b == b'#').count();
            let title = h.trim_start_matches('#').trim();
            let first = title.split_whitespace().next().unwrap_or("");
            if is_gpu_word(first) {
                gpu = Some((title.to_string(), i + 1));
            } else if ENGINES.contains(&first.to_ascii_lowercase().as_str()) {
                let version = title
                    .split_whitespace()
                    .nth(1)
                    .filter(|v| {
                        v.trim_start_matches('v')
                            .starts_with(|c: char| c.is_ascii_digit())
                    })
                    .map(str::to_string);
                engine = Some((first.to_ascii_lowercase(), version, i + 1));
            } else if level == 1 && !title.is_empty() && !title.contains(' ') {
                model = Some((title.to_string(), i + 1));
            }
            i += 1;
            continue;
        }
        if line.starts_with('|') && i + 1 < lines.len() && is_md_separator(lines[i + 1]) {
            let mut t = Table {
                headers: split_md_row(line),
                ..Table::default()
            };
            if let Some((m, l)) = &model {
                t.context.push((Dim::Model, m.clone(), *l));
            }
            if let Some((g, l)) = &gpu {
                t.context.push((Dim::Gpu, g.clone(), *l));
            }
            if let Some((e, v, l)) = &engine {
                t.context.push((Dim::Engine, e.clone(), *l));
                if let Some(v) = v {
                    t.context.push((Dim::EngineVersion, v.clone(), *l));
                }
            }
            i += 2;
            while i < lines.len() && lines[i].trim().starts_with('|') {
                t.rows
                    .push((i + 1, csv::StringRecord::from(split_md_row(lines[i]))));
                i += 1;
            }
            tables.push(t);
            continue;
        }
        i += 1;
    }
    tables
}

/// A pandas DataFrame printed as text: a header line of names, then rows that start with the
/// index. Cells are cut at the right edge of each (right-aligned) header name.
pub(crate) fn pandas_table(text: &str) -> Option<Table> {
    let mut lines = text
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty());
    let (_, header) = lines.next()?;
    let names: Vec<(usize, &str)> = word_spans(header);
    if names.len() < 2 || header.contains(',') || header.contains('|') || header.contains('\t') {
        return None;
    }
    let ends: Vec<usize> = names.iter().map(|(s, w)| s + w.len()).collect();
    let first_start = names[0].0;
    let mut t = Table {
        headers: std::iter::once("(index)".to_string())
            .chain(names.iter().map(|(_, w)| w.to_string()))
            .collect(),
        ..Table::default()
    };
    let mut checked = 0;
    for (i, line) in lines {
        let chars: Vec<char> = line.chars().collect();
        // The index is the first word; it must end before the first column starts.
        let idx_end = chars
            .iter()
            .position(|c| c.is_whitespace())
            .unwrap_or(chars.len());
        let index: String = chars[..idx_end].iter().collect();
        if checked < 5 {
            checked += 1;
            if index.is_empty() || idx_end > first_start + 1 {
                return None;
            }
        }
        let mut cells = vec![index.trim().to_string()];
        let mut start = idx_end;
        for (k, end) in ends.iter().enumerate() {
            let stop = if k + 1 == ends.len() {
                chars.len()
            } else {
                (*end).min(chars.len())
            };
            let s = start.min(chars.len());
            cells.push(
                chars[s..stop.max(s)]
                    .iter()
                    .collect::<String>()
                    .trim()
                    .to_string(),
            );
            start = stop;
        }
        t.rows.push((i + 1, csv::StringRecord::from(cells)));
    }
    (!t.rows.is_empty()).then_some(t)
}

fn word_spans(line: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut start = None;
    // Work in characters so the spans match `chars()` indexing in the rows.
    let mut byte_start = 0;
    for (char_pos, (b, c)) in line.char_indices().enumerate() {
        if c.is_whitespace() {
            if let Some(s) = start.take() {
                out.push((s, &line[byte_start..b]));
            }
        } else if start.is_none() {
            start = Some(char_pos);
            byte_start = b;
        }
    }
    if let Some(s) = start {
        out.push((s, &line[byte_start..]));
    }
    out
}

fn csv_delimiter(header: &str) -> Option<u8> {
    [b',', b'\t', b';']
        .into_iter()
        .map(|d| (d, header.bytes().filter(|b| *b == d).count()))
        .filter(|(_, n)| *n > 0)
        .max_by_key(|(_, n)| *n)
        .map(|(d, _)| d)
}

/// Rows read before the mapping is fixed (to tell numeric columns from text ones).
const SAMPLE_ROWS: usize = 200;

/// Ragged-row bookkeeping for CSV reading: the first 20 are listed, then a count.
struct Ragged {
    count: usize,
}

impl Ragged {
    /// Ragged rows listed one by one; the rest are counted.
    const LISTED: usize = 20;

    fn check(&mut self, line: usize, cells: usize, header: usize, warnings: &mut Vec<Warning>) {
        if cells == header {
            return;
        }
        self.count += 1;
        if self.count <= Self::LISTED {
            let what = if cells < header {
                "missing cells left empty"
            } else {
                "extra cells ignored"
            };
            warnings.push(Warning::line(
                line,
                format!("{cells} cells where the header has {header}; {what}"),
            ));
        }
    }

    fn finish(&self, warnings: &mut Vec<Warning>) {
        if self.count > Self::LISTED {
            warnings.push(Warning::file(format!(
                "{} ragged rows in all (only the first 20 are listed)",
                self.count
            )));
        }
    }
}

/// The next non-blank CSV row into `rec` and its line; unreadable rows become warnings (or,
/// before the header, the error).
fn next_row(
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

/// Reads a CSV/TSV table (delimiter from the header line), streaming: the first rows fix the
/// mapping, then each row becomes records without the table being kept. Ragged rows are read
/// with a warning (missing cells empty, extra cells ignored).
///
/// Text without quotes (most benchmark CSVs) is split by hand
/// into cells borrowed from `text`; anything else goes through the `csv` crate. Both give the
/// same rows, lines and warnings.
fn read_csv(
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
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .flexible(true)
        .has_headers(false)
        .from_reader(text.as_bytes());
    let mut rec = csv::StringRecord::new();
    if next_row(&mut rdr, &mut rec, source, false, &mut out.warnings)?.is_none() {
        return Err(IngestError::Empty {
            file: source.to_string(),
        });
    }
    let mut t = Table {
        headers: rec.iter().map(|c| c.trim().to_string()).collect(),
        ..Table::default()
    };
    let width = t.headers.len();
    let mut ragged = Ragged { count: 0 };
    while t.rows.len() < SAMPLE_ROWS {
        let Some(line) = next_row(&mut rdr, &mut rec, source, true, &mut out.warnings)? else {
            break;
        };
        ragged.check(line, rec.len(), width, &mut out.warnings);
        t.rows.push((line, rec.clone()));
    }
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
    note_scales(&mapping, out);
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

/// Rows of a CSV without quotes: rows end at `\n` or `\r` (so `\r\n` too, the `\n` then
/// being an empty line), cells at the delimiter, borrowed from the text. Empty lines are no
/// row and blank rows (every cell empty after trimming) are skipped, as with the `csv` crate
/// and [`next_row`].
struct PlainRows<'a> {
    rest: &'a str,
    /// 1 + the newlines consumed so far.
    line: usize,
    /// The line the `csv` crate reports for the next row: where the reader stood after the
    /// previous row's terminator (empty lines are skipped while reading the next row, and a
    /// `\r\n`'s `\n` is consumed by the next row too).
    reported: usize,
    delimiter: u8,
}

impl<'a> PlainRows<'a> {
    /// Whether `text` splits the same by hand as through the `csv` crate: no quote at all.
    fn applies(text: &str) -> bool {
        memchr::memchr(b'"', text.as_bytes()).is_none()
    }

    /// The next non-blank row's cells into `cells` and its line.
    fn next(&mut self, cells: &mut Vec<&'a str>) -> Option<usize> {
        while !self.rest.is_empty() {
            // The line, then its cells at each delimiter.
            let text = self.rest;
            let bytes = text.as_bytes();
            cells.clear();
            let end = split_line(text, self.delimiter, cells);
            if bytes.get(end) == Some(&b'\n') {
                self.line += 1;
            }
            self.rest = text.get(end + 1..).unwrap_or("");
            if end == 0 {
                // An empty line is no row at all for the `csv` crate.
                continue;
            }
            let at = self.reported;
            self.reported = self.line;
            if cells.iter().all(|c| c.trim().is_empty()) {
                continue;
            }
            return Some(at);
        }
        None
    }
}

/// Bytes of `x` that are zero, as the high bit of each byte (exact: no carries between bytes).
#[inline]
fn zero_bytes(x: u64) -> u64 {
    const LOW7: u64 = 0x7f7f_7f7f_7f7f_7f7f;
    !(((x & LOW7).wrapping_add(LOW7)) | x | LOW7)
}

/// Splits the first line of `text` (up to `\n`, `\r` or the end) at `delimiter` into `cells`
/// and returns where the line ends. Eight bytes are looked at a time: a table row is some
/// tens of bytes with a delimiter every few, where searching for each one on its own costs
/// more than the search.
#[inline]
fn split_line<'a>(text: &'a str, delimiter: u8, cells: &mut Vec<&'a str>) -> usize {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let bytes = text.as_bytes();
    let (d, lf, cr) = (
        ONES * u64::from(delimiter),
        ONES * u64::from(b'\n'),
        ONES * u64::from(b'\r'),
    );
    let mut start = 0;
    let mut i = 0;
    while let Some(word) = bytes.get(i..i + 8) {
        let mut w = [0u8; 8];
        w.copy_from_slice(word);
        let w = u64::from_le_bytes(w);
        let mut delims = zero_bytes(w ^ d);
        let ends = zero_bytes(w ^ lf) | zero_bytes(w ^ cr);
        let end = (ends != 0).then(|| ends.trailing_zeros() / 8);
        if let Some(e) = end {
            // Only the delimiters before the line's end.
            delims &= (1u64 << (e * 8)) - 1;
        }
        while delims != 0 {
            let at = i + (delims.trailing_zeros() / 8) as usize;
            cells.push(&text[start..at]);
            start = at + 1;
            delims &= delims - 1;
        }
        if let Some(e) = end {
            let at = i + e as usize;
            cells.push(&text[start..at]);
            return at;
        }
        i += 8;
    }
    for (k, &b) in bytes[i..].iter().enumerate() {
        let at = i + k;
        if b == b'\n' || b == b'\r' {
            cells.push(&text[start..at]);
            return at;
        }
        if b == delimiter {
            cells.push(&text[start..at]);
            start = at + 1;
        }
    }
    cells.push(&text[start..]);
    bytes.len()
}

/// [`read_csv`] for text [`PlainRows`] applies to. The rows after the sampled ones are mapped
/// on `runs` threads (native builds; see [`parallel`]).
fn read_plain_csv(
    source: &str,
    text: &str,
    delimiter: u8,
    user: Option<&[ColumnMapping]>,
    out: &mut Ingested,
    runs: usize,
) -> Result<(), IngestError> {
    let mut rows = PlainRows {
        rest: text,
        line: 1,
        reported: 1,
        delimiter,
    };
    let mut cells: Vec<&str> = Vec::new();
    if rows.next(&mut cells).is_none() {
        return Err(IngestError::Empty {
            file: source.to_string(),
        });
    }
    let mut t = Table {
        headers: cells.iter().map(|c| c.trim().to_string()).collect(),
        ..Table::default()
    };
    let width = t.headers.len();
    let mut ragged = Ragged { count: 0 };
    while t.rows.len() < SAMPLE_ROWS {
        let Some(line) = rows.next(&mut cells) else {
            break;
        };
        ragged.check(line, cells.len(), width, &mut out.warnings);
        t.rows.push((line, cells.iter().collect()));
    }
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

/// What kind of table the text holds, if any.
pub(crate) fn classify_text(text: &str) -> Option<(Format, String)> {
    // A markdown table needs a `|`; without one, skip splitting every line of a large CSV.
    let md = if memchr::memchr(b'|', text.as_bytes()).is_some() {
        markdown_tables(text)
    } else {
        Vec::new()
    };
    if let Some(first) = md.first() {
        let has = |t: &Table, name: &str| t.headers.iter().any(|h| h.eq_ignore_ascii_case(name));
        if md.iter().any(|t| has(t, "Test name")) {
            return Some((
                Format::VllmPerfSuite,
                "markdown tables with a \"Test name\" column".into(),
            ));
        }
        if md.iter().any(|t| has(t, "Step") && has(t, "Batch Size")) {
            return Some((
                Format::TgiBenchmark,
                "markdown tables with \"Step\" and \"Batch Size\"".into(),
            ));
        }
        return Some((
            Format::MarkdownTable,
            format!(
                "{} markdown table(s), first with {} columns",
                md.len(),
                first.headers.len()
            ),
        ));
    }
    let header = text.lines().find(|l| !l.trim().is_empty())?.trim();
    if let Some(d) = csv_delimiter(header) {
        let first = header
            .split(d as char)
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches('"');
        if first == "Metric" {
            return Some((
                Format::GenaiPerfCsv,
                "CSV starting with a \"Metric\" column".into(),
            ));
        }
        let cols: Vec<&str> = header
            .split(d as char)
            .map(|c| c.trim().trim_matches('"'))
            .collect();
        if canonical::header_is_canonical(&cols) {
            return Some((
                Format::CanonicalCsv,
                "CSV with benchlens column names".into(),
            ));
        }
        let data_lines = text
            .lines()
            .skip(1)
            .filter(|l| l.contains(d as char))
            .take(3)
            .count();
        if data_lines > 0 && cols.len() >= 2 {
            return Some((
                Format::GenericCsv,
                format!("{}-separated table with {} columns", d as char, cols.len()),
            ));
        }
    }
    if pandas_table(text).is_some() {
        return Some((
            Format::PandasText,
            "fixed-width text table with an index column".into(),
        ));
    }
    None
}

// ---------------------------------------------------------------------------------------------
// Mapping columns.

fn has_word(n: &str, w: &str) -> bool {
    n.split('_').any(|t| t == w)
}

fn dim_synonym(n: &str) -> Option<&'static str> {
    Some(match n {
        "model" | "model_name" | "model_id" | "models" => "model",
        "engine" | "framework" | "backend" | "server" | "inference_engine" => "engine",
        "engine_version" | "version" | "framework_version" => "engine_version",
        "gpu" | "gpu_type" | "gpu_name" | "gpus_type" | "hardware" | "device" | "accelerator"
        | "hw" => "gpu",
        "gpu_count" | "num_gpus" | "n_gpus" | "nr_gpus" | "gpus" | "ngpu" | "ngpus" | "gpu_num"
        | "num_gpu" => "gpu_count",
        "tp" | "tp_size" | "tensor_parallel" | "tensor_parallel_size" => "tp",
        "pp" | "pp_size" | "pipeline_parallel" | "pipeline_parallel_size" => "pp",
        "precision" | "dtype" | "quantization" | "quant" | "data_type" => "precision",
        "dataset" | "dataset_name" | "data" => "dataset",
        "input_len"
        | "input_length"
        | "input_tokens"
        | "isl"
        | "prompt_len"
        | "prompt_length"
        | "prompt_tokens"
        | "seq_len"
        | "seq_length"
        | "input_seq_len"
        | "in_len"
        | "input"
        | "input_size"
        | "input_tokens_per_request" => "input_len",
        "output_len" | "output_length" | "output_tokens" | "osl" | "max_tokens" | "gen_len"
        | "output" | "max_new_tokens" | "out_len" | "output_size" => "output_len",
        "batch" | "bs" | "batch_size" | "batchsize" | "max_batch_size" => "batch_size",
        "concurrency"
        | "max_concurrency"
        | "users"
        | "num_users"
        | "clients"
        | "vus"
        | "max_vus"
        | "num_concurrent_requests"
        | "of_max_concurrency"
        | "concurrent_requests"
        | "parallel"
        | "num_clients" => "max_concurrency",
        "request_rate" | "qps" | "rate" | "rps" | "req_rate" | "arrival_rate"
        | "request_rate_req_s" | "qps_req_s" => "request_rate",
        "burstiness" => "burstiness",
        "num_prompts" | "num_requests" | "of_req" | "n_requests" | "prompts" | "n_prompts"
        | "requests" => "num_prompts",
        "date" | "timestamp" | "datetime" | "run_date" => "date",
        "label" | "name" | "test_name" | "run" | "run_name" | "test" | "experiment" => "label",
        "status" | "errors" | "error" | "errors_l" | "state" => "tag.status",
        _ => return None,
    })
}

/// The unit written in a column name: `(ms)`, `_s`, `tok/s`.
fn unit_of(name: &str, n: &str) -> Option<&'static str> {
    let lower = name.to_ascii_lowercase();
    let paren = lower
        .rfind('(')
        .map(|i| lower[i + 1..].trim_end_matches(')').trim().to_string());
    let hint = paren.as_deref().unwrap_or("");
    if hint.contains("req") && hint.contains("/s") || hint == "per sec" || n.ends_with("req_s") {
        return Some("req/s");
    }
    if (hint.contains("tok") && (hint.contains("/s") || hint.contains("sec")))
        || n.ends_with("tok_s")
        || n.ends_with("tokens_s")
        || n.ends_with("token_s")
        || n.ends_with("tokens_per_s")
        || n.ends_with("tok_per_s")
        || n.ends_with("tokens_per_second")
    {
        return Some("tok/s");
    }
    if hint.contains("/s") || hint.contains("per s") {
        return Some("?/s");
    }
    match hint {
        "ms" | "msec" | "milliseconds" => return Some("ms"),
        "s" | "sec" | "secs" | "seconds" => return Some("s"),
        "us" | "µs" => return Some("us"),
        _ => {}
    }
    if n.ends_with("_ms") {
        Some("ms")
    } else if n.ends_with("_us") {
        Some("us")
    } else if n.ends_with("_s") || n.ends_with("_sec") || n.ends_with("_secs") {
        Some("s")
    } else {
        None
    }
}

fn stat_in(n: &str) -> Option<Stat> {
    for t in n.split('_') {
        match t {
            "mean" | "avg" | "average" => return Some(Stat::Mean),
            "median" => return Some(Stat::Median),
            "std" | "stddev" | "stdev" => return Some(Stat::Std),
            _ => {
                if let Some(p) = t.strip_prefix('p').and_then(Percentile::parse) {
                    return Some(Stat::P(p));
                }
            }
        }
    }
    None
}

fn family_in(n: &str) -> Option<LatencyMetric> {
    if n.contains("ttft") || n.contains("first_token") {
        Some(LatencyMetric::Ttft)
    } else if n.contains("tpot") || n.contains("time_per_output_token") {
        Some(LatencyMetric::Tpot)
    } else if has_word(n, "itl") || n.contains("inter_token") {
        Some(LatencyMetric::Itl)
    } else if n.contains("e2el")
        || n.contains("e2e")
        || n.contains("end_to_end")
        || has_word(n, "latency")
    {
        Some(LatencyMetric::E2el)
    } else {
        None
    }
}

/// The automatic mapping of one column by its name. `numeric` says whether its cells hold
/// numbers (for columns that match no name: `extra.*` or `tag.*`).
pub(crate) fn guess_column(name: &str, numeric: bool) -> ColumnMapping {
    let n = snake(name);
    if n.is_empty() || n == "index" || n == "unnamed_0" || name == "(index)" {
        return ColumnMapping::new(name, None, 1.0, "index column");
    }
    if matches!(
        n.as_str(),
        "improvement" | "improvement_pct" | "improvement_percent"
    ) {
        return ColumnMapping::new(
            name,
            Some(MetricKey::reported_improvement().name()),
            1.0,
            "the file's own improvement figure, shown beside the recomputed one",
        );
    }
    if matches!(n.as_str(), "speedup" | "faster_by" | "diff" | "delta") {
        return ColumnMapping::new(name, None, 1.0, "derived from other columns");
    }
    if let Some(k) = DimKey::from_name(&n) {
        return ColumnMapping::new(name, Some(k.name()), 1.0, "canonical name");
    }
    if let Some(k) = MetricKey::from_name(&n) {
        return ColumnMapping::new(name, Some(k.name()), 1.0, "canonical name");
    }
    if let Some(d) = dim_synonym(&n) {
        return ColumnMapping::new(name, Some(d.to_string()), 1.0, "dimension name");
    }
    let unit = unit_of(name, &n);
    let scale_to_ms = |u: Option<&str>| u.and_then(to_ms_factor);
    // Named counts and durations.
    match n.as_str() {
        "completed" | "successful_requests" | "success" | "successful" | "completed_requests" => {
            return ColumnMapping::new(name, Some("completed".into()), 1.0, "completed requests")
        }
        "failed" | "failed_requests" | "failures" => {
            return ColumnMapping::new(name, Some("failed".into()), 1.0, "failed requests")
        }
        _ => {}
    }
    if n.starts_with("duration")
        || n.starts_with("elapsed_time")
        || n.starts_with("benchmark_duration")
    {
        let scale = match unit {
            Some("ms") => 0.001,
            Some("us") => 1e-6,
            _ => 1.0,
        };
        return ColumnMapping::new(name, Some("duration_s".into()), scale, "duration");
    }
    // Averages per token that are not TPOT keep their own name.
    if n.contains("per_token") || n.contains("per_output_token") {
        return ColumnMapping::new(
            name,
            Some(format!("extra.{n}")),
            1.0,
            "latency per token: no canonical equivalent",
        );
    }
    if n.contains("throughput") || n.contains("tput") || matches!(unit, Some("req/s" | "tok/s")) {
        let target = match unit {
            Some("req/s") if n.contains("goodput") => Some("request_goodput"),
            Some("req/s") => Some("request_throughput"),
            Some("tok/s") if n.contains("total") => Some("total_token_throughput"),
            Some("tok/s") if n.contains("input") || n.contains("prompt") => {
                Some("input_throughput")
            }
            Some("tok/s") if n.contains("per_user") => None,
            Some("tok/s") => Some("output_throughput"),
            _ => None,
        };
        return match target {
            Some(t) => ColumnMapping::new(
                name,
                Some(t.into()),
                1.0,
                format!("throughput in {}", unit.unwrap_or("")),
            ),
            None => ColumnMapping::new(
                name,
                Some(format!("extra.{n}")),
                1.0,
                "throughput without a known unit: kept under its own name",
            ),
        };
    }
    if let Some(family) = family_in(&n) {
        let words: Vec<&str> = n.split('_').collect();
        if words
            .iter()
            .any(|w| matches!(*w, "min" | "max" | "lowest" | "highest"))
        {
            return ColumnMapping::new(
                name,
                Some(format!("extra.{n}")),
                1.0,
                "min/max: no canonical statistic",
            );
        }
        let stat = stat_in(&n).unwrap_or(Stat::Mean);
        let (scale, why) = match scale_to_ms(unit) {
            Some(f) => (f, format!("latency in {}", unit.unwrap_or("ms"))),
            None => (1.0, "latency without a unit: assumed ms".to_string()),
        };
        return ColumnMapping::new(
            name,
            Some(MetricKey::Latency(family, stat).name()),
            scale,
            why,
        );
    }
    if numeric {
        ColumnMapping::new(
            name,
            Some(format!("extra.{n}")),
            1.0,
            "numeric column with no canonical name",
        )
    } else {
        ColumnMapping::new(
            name,
            Some(format!("tag.{n}")),
            1.0,
            "text column with no canonical name",
        )
    }
}

fn numeric_column(t: &Table, col: usize) -> bool {
    let mut any = false;
    for (_, cells) in t.rows.iter().take(200) {
        if let Some(c) = cells.get(col).map(str::trim) {
            if c.is_empty() || c == "-" || c.eq_ignore_ascii_case("nan") {
                continue;
            }
            if parse_quantity(c).is_none() {
                return false;
            }
            any = true;
        }
    }
    any
}

/// The automatic mapping of a table, melting wide column groups (`x_a100`, `x_tesla`).
pub(crate) fn auto_mapping(t: &Table) -> Vec<ColumnMapping> {
    // Wide tables: stems seen with two or more GPU suffixes.
    let split: Vec<Option<(&str, &str)>> = t
        .headers
        .iter()
        .map(|h| {
            h.rsplit_once('_')
                .filter(|(s, g)| !s.is_empty() && is_gpu_word(g))
        })
        .collect();
    let mut multi_stems: Vec<&str> = Vec::new();
    for (i, s) in split.iter().enumerate() {
        if let Some((stem, suffix)) = s {
            let others = split.iter().enumerate().any(|(j, o)| {
                j != i && o.is_some_and(|(st, su)| st == *stem && !su.eq_ignore_ascii_case(suffix))
            });
            if others && !multi_stems.contains(stem) {
                multi_stems.push(stem);
            }
        }
    }
    t.headers
        .iter()
        .enumerate()
        .map(|(i, h)| {
            let numeric = numeric_column(t, i);
            match split[i] {
                Some((stem, suffix)) if !multi_stems.is_empty() => {
                    let mut m = guess_column(stem, numeric);
                    m.column = h.clone();
                    if multi_stems.contains(&stem) {
                        m.gpu = Some(gpu_display(suffix));
                        m.reason = format!("{} (per GPU: {})", m.reason, gpu_display(suffix));
                    } else {
                        m.reason = format!("{} (shared by every GPU of the row)", m.reason);
                    }
                    m
                }
                _ => guess_column(h, numeric),
            }
        })
        .collect()
}

/// The user's mapping where it names a column, the automatic one elsewhere.
fn merge_mapping(auto: Vec<ColumnMapping>, user: Option<&[ColumnMapping]>) -> Vec<ColumnMapping> {
    let Some(user) = user else { return auto };
    auto.into_iter()
        .map(|a| match user.iter().find(|u| u.column == a.column) {
            Some(u) => u.clone(),
            None => a,
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Rows to records.

/// Where a table's records came from, for warnings.
pub(crate) struct RowsContext<'a> {
    /// Dimensions applied to every record, with where they came from.
    pub context: &'a [(Dim, String, usize)],
    /// Extra tags on every record.
    pub tags: &'a [(&'a str, &'a str)],
    /// Placement prefix for warnings when rows have no line (`serving`, `[3]`).
    pub at: &'a str,
}

/// Whether a dimension holds text (the rest hold numbers).
pub(crate) fn is_text_dim(d: Dim) -> bool {
    matches!(
        d,
        Dim::Source
            | Dim::Format
            | Dim::Model
            | Dim::Engine
            | Dim::EngineVersion
            | Dim::Gpu
            | Dim::Precision
            | Dim::Dataset
            | Dim::Date
            | Dim::Label
    )
}

/// A mapping target resolved once per table, so rows are not re-parsing names.
#[derive(Clone)]
enum Slot {
    Skip,
    Metric {
        key: MetricKey,
        scale: f64,
    },
    Gpu,
    Dim {
        dim: Dim,
        text: bool,
        test_name: bool,
    },
    Tag(String),
    Unknown(String),
}

impl Slot {
    fn of(m: &ColumnMapping) -> Slot {
        let Some(target) = &m.target else {
            return Slot::Skip;
        };
        if let Some(key) = MetricKey::from_name(target) {
            return Slot::Metric {
                key,
                scale: m.scale,
            };
        }
        match DimKey::from_name(target) {
            Some(DimKey::Known(Dim::Gpu)) => Slot::Gpu,
            Some(DimKey::Known(dim)) => Slot::Dim {
                dim,
                text: is_text_dim(dim),
                test_name: dim == Dim::Label && snake(&m.column) == "test_name",
            },
            Some(DimKey::Tag(k)) => Slot::Tag(k),
            None => Slot::Unknown(target.clone()),
        }
    }
}

/// A number cell: the plain fast paths first, then thousands separators and units.
fn cell_number(cell: &str) -> Option<(f64, &str)> {
    if let Some(v) = plain_decimal(cell) {
        return Some((v, ""));
    }
    match cell.parse::<f64>() {
        Ok(v) => Some((v, "")),
        Err(_) => parse_quantity(cell),
    }
}

/// `123`, `-40.370`, `.5`: at most 15 digits with an optional sign and point, read exactly as
/// `str::parse::<f64>` reads them (the digits are an exact integer below 2^53 and the power of
/// ten is exact, so the one division rounds correctly). `None` for anything else.
fn plain_decimal(cell: &str) -> Option<f64> {
    let b = cell.as_bytes();
    let (negative, digits) = match b.first()? {
        b'-' => (true, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    let mut mantissa: u64 = 0;
    let mut count = 0u32;
    let mut point: Option<u32> = None;
    for &c in digits {
        match c {
            b'0'..=b'9' => {
                mantissa = mantissa * 10 + u64::from(c - b'0');
                count += 1;
            }
            b'.' if point.is_none() => point = Some(count),
            _ => return None,
        }
    }
    if count == 0 || count > 15 {
        return None;
    }
    const POW10: [f64; 16] = [
        1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
    ];
    let v = match count - point.unwrap_or(count) {
        // A whole number needs no division (the slowest step here).
        0 => mantissa as f64,
        decimals => mantissa as f64 / POW10[decimals as usize],
    };
    Some(if negative { -v } else { v })
}

fn place_of(line: usize, at: &str) -> String {
    if line > 0 {
        format!("line {line}")
    } else {
        at.to_string()
    }
}

/// The field of a text dimension ([`is_text_dim`]); the label for any other.
fn text_field(r: &mut Record, d: Dim) -> &mut Option<Arc<str>> {
    match d {
        Dim::Source => &mut r.source,
        Dim::Format => &mut r.format,
        Dim::Model => &mut r.model,
        Dim::Engine => &mut r.engine,
        Dim::EngineVersion => &mut r.engine_version,
        Dim::Gpu => &mut r.gpu,
        Dim::Precision => &mut r.precision,
        Dim::Dataset => &mut r.dataset,
        Dim::Date => &mut r.date,
        _ => &mut r.label,
    }
}

/// The text values of one column seen so far, so that records repeating a value (a model, a
/// GPU) share one allocation. Only the first [`Shared::MAX`] distinct values are kept, so a
/// column of unique values costs a few comparisons per row and no memory.
#[derive(Clone, Default)]
struct Shared {
    /// Each value with its [`fingerprint`](Shared::fingerprint), compared first.
    values: Vec<(u64, Arc<str>)>,
}

impl Shared {
    const MAX: usize = 16;

    /// The length and the first seven bytes: tells most distinct short values apart
    /// (`llama-0`, `llama-1`) without comparing them.
    #[inline]
    fn fingerprint(text: &str) -> u64 {
        let b = text.as_bytes();
        let mut head = [0u8; 8];
        let n = b.len().min(7);
        head[..n].copy_from_slice(&b[..n]);
        head[7] = b.len().min(255) as u8;
        u64::from_le_bytes(head)
    }

    fn get(&mut self, text: &str) -> Arc<str> {
        let f = Self::fingerprint(text);
        if let Some((_, v)) = self.values.iter().find(|(g, v)| *g == f && &**v == text) {
            return Arc::clone(v);
        }
        let v: Arc<str> = text.into();
        if self.values.len() < Self::MAX {
            self.values.push((f, Arc::clone(&v)));
        }
        v
    }
}

/// What [`RowMapper::row`] can do with a column's cell without [`apply_cell`], when the cell
/// is plain (no surrounding space, no unit, no placeholder); anything else goes through
/// [`apply_cell`], which gives the same result for plain cells.
#[derive(Clone, Copy)]
enum Fast {
    /// A metric: a plain decimal, times the column's scale.
    Metric(f64),
    /// A text dimension (not the GPU, which may read `8xH100`).
    Text(Dim),
    /// A numeric dimension: a plain decimal.
    Number(Dim),
    /// Always [`apply_cell`].
    No,
}

impl Fast {
    fn of(slot: &Slot) -> Fast {
        match slot {
            Slot::Metric { scale, .. } => Fast::Metric(*scale),
            Slot::Dim {
                dim,
                text: true,
                test_name: false,
            } => Fast::Text(*dim),
            Slot::Dim {
                dim,
                text: false,
                test_name: false,
            } => Fast::Number(*dim),
            _ => Fast::No,
        }
    }
}

/// Whether a text cell can be taken as it is: nothing to trim and not a placeholder for no
/// value (`-`, `n/a`, `none`).
#[inline]
fn plain_text(cell: &str) -> bool {
    let b = cell.as_bytes();
    match (b.first(), b.last()) {
        (Some(f), Some(l)) if f.is_ascii_graphic() && l.is_ascii_graphic() => {
            b.len() > 4
                || !(cell == "-"
                    || cell.eq_ignore_ascii_case("n/a")
                    || cell.eq_ignore_ascii_case("none"))
        }
        _ => false,
    }
}

/// `cell.trim()`, with the common case (no whitespace at either end, ASCII) decided by two
/// byte tests.
#[inline]
fn trim_cell(cell: &str) -> &str {
    match (cell.as_bytes().first(), cell.as_bytes().last()) {
        (Some(f), Some(l)) if f.is_ascii_graphic() && l.is_ascii_graphic() => cell,
        _ => cell.trim(),
    }
}

/// Applies one cell; returns the measured value of a metric cell (scaled, not yet set: the
/// caller sets the row's metrics in key order).
fn apply_cell(
    r: &mut Record,
    m: &ColumnMapping,
    slot: &Slot,
    shared: &mut Shared,
    cell: &str,
    (line, at): (usize, &str),
    warnings: &mut Vec<Warning>,
) -> Option<f64> {
    let cell = trim_cell(cell);
    if cell.len() <= 4
        && (cell.is_empty()
            || cell == "-"
            || cell.eq_ignore_ascii_case("n/a")
            || cell.eq_ignore_ascii_case("none"))
    {
        return None;
    }
    match slot {
        Slot::Skip => {}
        Slot::Metric { key, scale } => {
            let Some((v, unit)) = cell_number(cell) else {
                warnings.push(Warning::at(
                    place_of(line, at),
                    format!("{}: {cell:?} is not a number, ignored", m.column),
                ));
                return None;
            };
            let mut scale = *scale;
            if !unit.is_empty() && unit != "%" {
                if let (MetricKey::Latency(..), Some(f)) = (key, to_ms_factor(unit)) {
                    scale = f;
                    if f != 1.0 {
                        super::fields::note_in(
                            warnings,
                            format!("{}: values in {unit} converted to ms", m.column),
                        );
                    }
                }
            }
            return Some(v * scale);
        }
        Slot::Gpu => {
            // `8xH100` → gpu H100, gpu_count 8.
            if let Some((count, rest)) = cell.split_once(['x', 'X']) {
                if let Ok(c) = count.trim().parse::<u64>() {
                    r.gpu_count = Some(c);
                    r.gpu = Some(shared.get(rest.trim()));
                    return None;
                }
            }
            r.gpu = Some(shared.get(cell));
        }
        Slot::Dim {
            dim,
            text,
            test_name,
        } => {
            let set = if *text {
                // What `set_known` does with text, without its detour through `Display`.
                *text_field(r, *dim) = Some(shared.get(cell));
                Ok(())
            } else {
                let value = match cell_number(cell) {
                    Some((v, _)) => DimValue::Num(v),
                    None => DimValue::Text(cell.to_string()),
                };
                r.set_known(*dim, Some(value))
            };
            match set {
                // A value read from the row beats one inferred from another cell.
                Ok(()) => {
                    if !r.inferred.is_empty() {
                        r.inferred.remove(dim.name());
                    }
                }
                Err(e) => warnings.push(Warning::at(
                    place_of(line, at),
                    format!("{}: {e}, ignored", m.column),
                )),
            }
            if *test_name {
                parse_test_name(cell).apply(r, "test name");
            }
        }
        Slot::Tag(k) => {
            r.tags.insert(k.clone(), cell.to_string());
        }
        Slot::Unknown(target) => {
            warnings.push(Warning::at(
                place_of(line, at),
                format!("{}: mapped to unknown field {target:?}, ignored", m.column),
            ));
        }
    }
    None
}

/// The cells of one table row, however it was split.
pub(crate) trait Cells {
    /// Cell `i`, if the row has that many.
    fn cell(&self, i: usize) -> Option<&str>;
    /// Whether any cell holds more than whitespace.
    fn any_filled(&self) -> bool;
}

impl Cells for csv::StringRecord {
    fn cell(&self, i: usize) -> Option<&str> {
        self.get(i)
    }
    fn any_filled(&self) -> bool {
        self.iter().any(|c| !c.trim().is_empty())
    }
}

impl Cells for [&str] {
    fn cell(&self, i: usize) -> Option<&str> {
        self.get(i).copied()
    }
    fn any_filled(&self) -> bool {
        self.iter().any(|c| !c.trim().is_empty())
    }
}

/// Turns rows into records with a mapping; wide column groups give one record per GPU.
/// Targets are resolved once, so rows can be streamed through [`RowMapper::row`].
#[derive(Clone)]
pub(crate) struct RowMapper<'a> {
    mapping: &'a [ColumnMapping],
    slots: Vec<Slot>,
    /// Per column: the shortcut for plain cells.
    fast: Vec<Fast>,
    /// Per column: its text values, shared between records.
    shared: Vec<Shared>,
    /// Metric columns per record, to size each record's metrics once.
    metrics_per_record: usize,
    /// Per group: the columns it reads, in column order (columns of other GPUs left out).
    group_columns: Vec<Vec<usize>>,
    /// Per group: its metric columns by key (stably), so each row's metrics are appended in
    /// order.
    group_metrics: Vec<Vec<usize>>,
    /// Per column: the value the current record measured in it.
    measured: Vec<Option<f64>>,
    groups: Vec<Option<&'a str>>,
    /// Per group: its GPU, shared by the group's records.
    group_gpus: Vec<Option<Arc<str>>>,
    context: Vec<(Dim, DimValue, String)>,
    tags: &'a [(&'a str, &'a str)],
    at: &'a str,
    /// The file and format every record is stamped with here, while it is being written,
    /// rather than in a later pass over all records (see `Ingested::stamped`).
    stamp: Option<(Arc<str>, Arc<str>)>,
    /// Whether any record got an inferred value.
    any_inferred: bool,
}

impl<'a> RowMapper<'a> {
    pub(crate) fn new(mapping: &'a [ColumnMapping], ctx: &RowsContext<'a>) -> Self {
        let slots: Vec<Slot> = mapping.iter().map(Slot::of).collect();
        let mut gpus: Vec<&str> = Vec::new();
        for m in mapping {
            if let Some(g) = &m.gpu {
                if !gpus.contains(&g.as_str()) {
                    gpus.push(g);
                }
            }
        }
        let groups: Vec<Option<&str>> = if gpus.is_empty() {
            vec![None]
        } else {
            gpus.iter().map(|g| Some(*g)).collect()
        };
        let context = ctx
            .context
            .iter()
            .map(|(d, v, l)| {
                let value = if is_text_dim(*d) {
                    DimValue::Text(v.clone())
                } else {
                    parse_quantity(v)
                        .map_or_else(|| DimValue::Text(v.clone()), |(n, _)| DimValue::Num(n))
                };
                (*d, value, format!("heading line {l}"))
            })
            .collect();
        let metric_columns = slots
            .iter()
            .filter(|s| matches!(s, Slot::Metric { .. }))
            .count();
        let metrics_per_record = metric_columns.div_ceil(groups.len());
        let group_columns: Vec<Vec<usize>> = groups
            .iter()
            .map(|group| {
                (0..mapping.len())
                    .filter(|i| mapping[*i].gpu.is_none() || mapping[*i].gpu.as_deref() == *group)
                    .collect()
            })
            .collect();
        let group_metrics = group_columns
            .iter()
            .map(|columns| {
                let mut order: Vec<usize> = columns
                    .iter()
                    .copied()
                    .filter(|i| matches!(slots[*i], Slot::Metric { .. }))
                    .collect();
                order.sort_by(|a, b| match (&slots[*a], &slots[*b]) {
                    (Slot::Metric { key: ka, .. }, Slot::Metric { key: kb, .. }) => ka.cmp(kb),
                    _ => std::cmp::Ordering::Equal,
                });
                order
            })
            .collect();
        RowMapper {
            fast: slots.iter().map(Fast::of).collect(),
            group_columns,
            group_metrics,
            measured: vec![None; mapping.len()],
            mapping,
            shared: mapping.iter().map(|_| Shared::default()).collect(),
            metrics_per_record,
            group_gpus: groups.iter().map(|g| g.map(Arc::from)).collect(),
            slots,
            groups,
            context,
            tags: ctx.tags,
            at: ctx.at,
            stamp: None,
            any_inferred: false,
        }
    }

    /// The same mapper with its own copies of the shared texts (values seen, GPUs, stamp), so
    /// that a thread using it counts references in memory no other thread writes to.
    #[cfg(not(target_arch = "wasm32"))]
    fn detached(&self) -> Self {
        let own = |v: &Arc<str>| -> Arc<str> { Arc::from(&**v) };
        let mut m = self.clone();
        for shared in &mut m.shared {
            for (_, v) in &mut shared.values {
                *v = own(v);
            }
        }
        for g in m.group_gpus.iter_mut().flatten() {
            *g = own(g);
        }
        if let Some((source, format)) = &mut m.stamp {
            *source = own(source);
            *format = own(format);
        }
        m
    }

    /// How many records each row gives.
    fn per_row(&self) -> usize {
        self.groups.len()
    }

    /// The records of one row, appended to `records`.
    pub(crate) fn row<C: Cells + ?Sized, S: RecordSink>(
        &mut self,
        line: usize,
        cells: &C,
        records: &mut S,
        warnings: &mut Vec<Warning>,
    ) {
        for g in 0..self.groups.len() {
            // Filled in where it stays: the sink says where that is (a vector, or one
            // thread's part of it), and a row that measures nothing is taken back.
            let Some(r) = records.push(Record {
                metrics: Metrics::with_capacity(self.metrics_per_record),
                ..Record::default()
            }) else {
                continue;
            };
            let mut measured = false;
            for &i in &self.group_columns[g] {
                let Some(cell) = cells.cell(i) else {
                    continue;
                };
                let fast = match self.fast[i] {
                    Fast::Metric(scale) => plain_decimal(cell).map(|v| Some(v * scale)),
                    Fast::Text(dim) if plain_text(cell) => {
                        *text_field(r, dim) = Some(self.shared[i].get(cell));
                        Some(None)
                    }
                    // A value the dimension cannot hold goes to `apply_cell`, which says why.
                    Fast::Number(dim) => plain_decimal(cell)
                        .and_then(|v| r.set_known(dim, Some(DimValue::Num(v))).ok())
                        .map(|()| None),
                    _ => None,
                };
                let value = match fast {
                    Some(value) => {
                        if value.is_none() && !r.inferred.is_empty() {
                            // A value read from the row beats one inferred from another cell.
                            if let Slot::Dim { dim, .. } = self.slots[i] {
                                r.inferred.remove(dim.name());
                            }
                        }
                        value
                    }
                    None => apply_cell(
                        r,
                        &self.mapping[i],
                        &self.slots[i],
                        &mut self.shared[i],
                        cell,
                        (line, self.at),
                        warnings,
                    ),
                };
                if value.is_some() {
                    measured = true;
                    self.measured[i] = value;
                }
            }
            if !measured {
                records.pop();
                let group = self.groups[g];
                if group.is_none() || cells.any_filled() {
                    warnings.push(Warning::at(
                        place_of(line, self.at),
                        match group {
                            Some(g) => format!("no measured value for {g}, skipped"),
                            None => "no measured value, row skipped".into(),
                        },
                    ));
                }
                continue;
            }
            // In key order, so each is an append; of two columns with the same key the later
            // one wins, as when they were set cell by cell.
            for &i in &self.group_metrics[g] {
                if let (Some(v), Slot::Metric { key, .. }) =
                    (self.measured[i].take(), &self.slots[i])
                {
                    r.metrics.push_last(key.clone(), v);
                }
            }
            if self.group_gpus[g].is_some() {
                r.gpu.clone_from(&self.group_gpus[g]);
            }
            for (d, v, from) in &self.context {
                infer_dim(r, *d, v.clone(), from);
            }
            for (k, v) in self.tags {
                r.tags.insert((*k).to_string(), (*v).to_string());
            }
            if let Some((source, format)) = &self.stamp {
                r.source = Some(Arc::clone(source));
                r.format = Some(Arc::clone(format));
            }
            self.any_inferred |= !r.inferred.is_empty();
        }
    }
}

/// Where [`RowMapper::row`] puts records: a vector, or (for rows mapped on several threads) a
/// slice of one.
pub(crate) trait RecordSink {
    /// Appends `r` and returns it for filling in; `None` when there is no room.
    fn push(&mut self, r: Record) -> Option<&mut Record>;
    /// Removes the record appended last.
    fn pop(&mut self);
}

impl RecordSink for Vec<Record> {
    #[inline]
    fn push(&mut self, r: Record) -> Option<&mut Record> {
        Vec::push(self, r);
        self.last_mut()
    }

    #[inline]
    fn pop(&mut self) {
        Vec::pop(self);
    }
}

/// Turns table rows into records with `mapping`; wide column groups give one record per GPU.
pub(crate) fn rows_to_records(
    t: &Table,
    mapping: &[ColumnMapping],
    ctx: &RowsContext<'_>,
    out: &mut Ingested,
) {
    let mut mapper = RowMapper::new(mapping, ctx);
    out.records.reserve(t.rows.len() * mapper.per_row());
    for (line, cells) in &t.rows {
        mapper.row(*line, cells, &mut out.records, &mut out.warnings);
    }
}

fn note_scales(mapping: &[ColumnMapping], out: &mut Ingested) {
    for m in mapping {
        if m.scale != 1.0 {
            if let Some(target) = &m.target {
                super::fields::note(
                    out,
                    format!(
                        "column {:?} → {target}: values multiplied by {}",
                        m.column, m.scale
                    ),
                );
            }
        }
    }
}

fn push_mapping(mapping: Vec<ColumnMapping>, out: &mut Ingested) {
    for m in mapping {
        if !out.mapping.iter().any(|x| x.column == m.column) {
            out.mapping.push(m);
        }
    }
}

fn table_with_mapping(
    t: &Table,
    user: Option<&[ColumnMapping]>,
    ctx: &RowsContext<'_>,
    out: &mut Ingested,
) {
    let mapping = merge_mapping(auto_mapping(t), user);
    note_scales(&mapping, out);
    rows_to_records(t, &mapping, ctx, out);
    push_mapping(mapping, out);
}

/// Generic CSV, markdown and pandas text tables.
pub(crate) fn read_table(
    source: &str,
    format: Format,
    text: &str,
    mapping: Option<&[ColumnMapping]>,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    let tables = match format {
        Format::MarkdownTable => markdown_tables(text),
        Format::PandasText => pandas_table(text).into_iter().collect(),
        _ => {
            read_csv(source, text, mapping, out)?;
            Vec::new()
        }
    };
    for t in &tables {
        let ctx = RowsContext {
            context: &t.context,
            tags: &[],
            at: "",
        };
        table_with_mapping(t, mapping, &ctx, out);
    }
    if out.records.is_empty() && out.note.is_none() {
        out.note = Some("no records: no row of the table held a measured value".into());
    }
    Ok(())
}

/// Canonical CSV, through [`canonical::from_csv`].
pub(crate) fn read_canonical_csv(
    source: &str,
    text: &str,
    out: &mut Ingested,
) -> Result<(), IngestError> {
    let decoded = canonical::from_csv(text).map_err(|e| match e {
        canonical::CanonicalError::Csv { line, message } => IngestError::Csv {
            file: source.to_string(),
            line: line as usize,
            message,
        },
        other => IngestError::Shape {
            file: source.to_string(),
            at: "line 1".into(),
            message: other.to_string(),
        },
    })?;
    out.records.extend(decoded.records);
    for w in decoded.warnings {
        out.warnings.push(match w.split_once(": ") {
            Some((place, msg)) => Warning::at(place, msg),
            None => Warning::file(w),
        });
    }
    Ok(())
}

/// TGI `text-generation-benchmark` tables: `Step | Batch Size | Average | Lowest | Highest |
/// p50 | p90 | p99`, merged Step cells left blank (filled down), values with units. One record
/// per batch size: prefill latency → TTFT, decode (token) latency → TPOT, decode throughput →
/// output throughput; the rest under `extra.*`.
pub(crate) fn read_tgi(text: &str, out: &mut Ingested) {
    let mut by_batch: Vec<(u64, Record)> = Vec::new();
    for t in markdown_tables(text) {
        let col = |name: &str| t.headers.iter().position(|h| h.eq_ignore_ascii_case(name));
        let (Some(step_col), Some(bs_col)) = (col("Step"), col("Batch Size")) else {
            continue;
        };
        let mut step = String::new();
        for (line, cells) in &t.rows {
            let place = format!("line {line}");
            if let Some(s) = cells.get(step_col).filter(|s| !s.is_empty()) {
                step = s.to_string();
            }
            let Some(bs) = cells
                .get(bs_col)
                .and_then(|c| parse_quantity(c))
                .map(|(v, _)| v as u64)
            else {
                out.warnings
                    .push(Warning::at(place, "no batch size, row skipped"));
                continue;
            };
            let idx = match by_batch.iter().position(|(b, _)| *b == bs) {
                Some(i) => i,
                None => {
                    let mut r = Record {
                        engine: Some("tgi".into()),
                        batch_size: Some(bs),
                        ..Record::default()
                    };
                    r.inferred
                        .insert("engine".into(), "TGI benchmark table layout".into());
                    by_batch.push((bs, r));
                    by_batch.len() - 1
                }
            };
            let r = &mut by_batch[idx].1;
            let step_key = snake(&step);
            for (i, h) in t.headers.iter().enumerate() {
                if i == step_col || i == bs_col {
                    continue;
                }
                let Some((v, unit)) = cells.get(i).and_then(|c| parse_quantity(c)) else {
                    continue;
                };
                let stat = snake(h);
                let is_throughput = unit.contains("/s") || unit.contains("sec");
                let key = if is_throughput {
                    match (step_key.as_str(), stat.as_str()) {
                        ("decode" | "decode_token" | "decode_total", "average") => {
                            MetricKey::OutputThroughput
                        }
                        _ => MetricKey::Extra(format!("{step_key}_throughput_{stat}")),
                    }
                } else {
                    let family = match step_key.as_str() {
                        "prefill" => Some(LatencyMetric::Ttft),
                        "decode_token" => Some(LatencyMetric::Tpot),
                        _ => None,
                    };
                    match (
                        family,
                        stat_in(&stat).or((stat == "average").then_some(Stat::Mean)),
                    ) {
                        (Some(f), Some(s)) => MetricKey::Latency(f, s),
                        _ => MetricKey::Extra(format!("{step_key}_latency_{stat}_ms")),
                    }
                };
                let scale = if is_throughput {
                    1.0
                } else {
                    to_ms_factor(unit).unwrap_or(1.0)
                };
                if scale != 1.0 {
                    super::fields::note(out, format!("{step} latencies in {unit} converted to ms"));
                }
                r.set_metric(key, v * scale);
            }
        }
    }
    if by_batch.is_empty() {
        out.note = Some("no records: no TGI table row had a batch size and values".into());
    }
    out.records.extend(by_batch.into_iter().map(|(_, r)| r));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_line_splits_as_a_search_per_delimiter_does() {
        let alphabet = ["a", "bc", ",", ";", "\n", "\r", "é", " ", "1.5"];
        let mut x: u64 = 7;
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let len = (x >> 58) as usize;
            let mut text = String::new();
            let mut y = x;
            for _ in 0..len {
                y = y.wrapping_mul(6364136223846793005).wrapping_add(1);
                text.push_str(alphabet[(y >> 60) as usize % alphabet.len()]);
            }
            for delimiter in [b',', b';'] {
                let end = text.find(['\n', '\r']).unwrap_or(text.len());
                let expected: Vec<&str> = text[..end].split(delimiter as char).collect();
                let mut cells = Vec::new();
                assert_eq!(split_line(&text, delimiter, &mut cells), end, "{text:?}");
                assert_eq!(cells, expected, "{text:?}");
            }
        }
    }

    #[test]
    fn plain_decimals_read_exactly_as_std_parses_them() {
        let mut cases: Vec<String> = [
            "0",
            "-0",
            "5.",
            ".5",
            "-.5",
            "1024",
            "40.370",
            "0.1",
            "0.3",
            "1500.00",
            "123456789012345",
            "12345678901234.5",
            "9007199254740993",
            "1234567890123456",
            "0.000000000000001",
            "99.99999999999999",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let digits = (x % 16) as usize + 1;
            let text = format!("{:016}", x % 10_000_000_000_000_000);
            let mut t = text[16 - digits..].to_string();
            let at = (x >> 40) as usize % (digits + 1);
            if x & 1 == 0 {
                t.insert(at, '.');
            }
            if x & 2 == 0 {
                t.insert(0, '-');
            }
            cases.push(t);
        }
        for c in &cases {
            if let Some(v) = plain_decimal(c) {
                let expected: f64 = c.parse().unwrap();
                assert_eq!(v.to_bits(), expected.to_bits(), "{c}");
            }
        }
        for not in [
            "", "-", ".", "-.", "1.2.3", "1e3", "+1", "1,024", "inf", "nan", " 1", "1 ",
        ] {
            assert_eq!(plain_decimal(not), None, "{not:?}");
        }
        assert_eq!(plain_decimal("40.370"), Some(40.37));
    }

    fn target(name: &str) -> Option<String> {
        guess_column(name, true).target
    }

    /// Rows and lines as the `csv` crate gives them (blank rows skipped like `next_row`).
    fn csv_rows(text: &str, delimiter: u8) -> Vec<(usize, Vec<String>)> {
        let mut rdr = csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .flexible(true)
            .has_headers(false)
            .from_reader(text.as_bytes());
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
    fn columns_map_by_name_and_unit() {
        assert_eq!(target("TTFT (ms)").as_deref(), Some("mean_ttft_ms"));
        let m = guess_column("ttft_s", true);
        assert_eq!(m.target.as_deref(), Some("mean_ttft_ms"));
        assert_eq!(m.scale, 1000.0);
        assert_eq!(target("P99 ITL (ms)").as_deref(), Some("p99_itl_ms"));
        assert_eq!(
            target("Throughput (tok/s)").as_deref(),
            Some("output_throughput")
        );
        assert_eq!(
            target("Throughput (requests/s)").as_deref(),
            Some("request_throughput")
        );
        assert_eq!(
            target("Total Token Tput (tok/s)").as_deref(),
            Some("total_token_throughput")
        );
        assert_eq!(target("throughput").as_deref(), Some("extra.throughput"));
        assert_eq!(target("batch").as_deref(), Some("batch_size"));
        assert_eq!(target("bs").as_deref(), Some("batch_size"));
        assert_eq!(target("concurrency").as_deref(), Some("max_concurrency"));
        assert_eq!(target("gpu").as_deref(), Some("gpu"));
        assert_eq!(target("nrGPUs").as_deref(), Some("gpu_count"));
        assert_eq!(
            target("Improvement").as_deref(),
            Some("extra.reported_improvement_pct")
        );
        assert_eq!(target("speedup"), None);
        assert_eq!(
            target("Average latency per token (ms)").as_deref(),
            Some("extra.average_latency_per_token_ms")
        );
        assert_eq!(target("Mean latency (ms)").as_deref(), Some("mean_e2el_ms"));
        assert_eq!(
            guess_column("node", false).target.as_deref(),
            Some("tag.node")
        );
    }

    #[test]
    fn gpu_words() {
        for w in ["a100", "H100", "mi300x", "tesla", "L40S", "a10g", "B200"] {
            assert!(is_gpu_word(w), "{w}");
        }
        for w in ["mean", "p99", "ms", "l", "total", "batch"] {
            assert!(!is_gpu_word(w), "{w}");
        }
        assert_eq!(gpu_display("a100"), "A100");
        assert_eq!(gpu_display("tesla"), "Tesla");
    }
}
