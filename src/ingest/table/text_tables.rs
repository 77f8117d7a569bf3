//! Tables printed as text: markdown tables (with the model, GPU and engine named in the
//! headings above them) and pandas DataFrames printed with their index.

use super::{trim_cell, Table};
use crate::ingest::text::lines_of;
use crate::ingest::words::{is_engine, is_gpu_word};
use crate::model::Dim;

/// A markdown row's cells, straight into one record (no string a cell).
fn split_md_row(line: &str) -> csv::StringRecord {
    let mut cells = Vec::new();
    split_md_cells(line, &mut cells);
    csv::StringRecord::from(cells)
}

/// A markdown row's cells into `cells` (emptied first), borrowed from the line: trimmed,
/// without the pipes around the row and the emphasis around a cell's whole text.
pub(crate) fn split_md_cells<'a>(line: &'a str, cells: &mut Vec<&'a str>) {
    cells.clear();
    let t = trim_cell(line);
    let t = t.strip_prefix('|').unwrap_or(t);
    let t = t.strip_suffix('|').unwrap_or(t);
    // By bytes: `|` is ASCII, so every cut is on a character boundary.
    let mut start = 0;
    for (i, b) in t.bytes().enumerate() {
        if b == b'|' {
            cells.push(unemphasise(trim_cell(&t[start..i])));
            start = i + 1;
        }
    }
    cells.push(unemphasise(trim_cell(&t[start..])));
}

/// A cell without the markdown emphasis around its whole text (`**64**`, `*0.5*`, `__x__`):
/// a bold row (the author's best result) reads like the others.
fn unemphasise(cell: &str) -> &str {
    if !matches!(cell.as_bytes().first(), Some(b'*' | b'_')) {
        return cell;
    }
    for mark in ["**", "__", "*", "_"] {
        if let Some(inner) = cell
            .strip_prefix(mark)
            .and_then(|c| c.strip_suffix(mark))
            .filter(|i| !i.is_empty() && !i.contains(mark))
        {
            return inner.trim();
        }
    }
    cell
}

/// Whether `line` is a markdown table row: `|` after any leading whitespace.
fn starts_row(line: &str) -> bool {
    trim_cell(line).starts_with('|')
}

fn is_md_separator(line: &str) -> bool {
    let t = line.trim();
    t.contains('-')
        && t.contains('|')
        && t.bytes()
            .all(|b| matches!(b, b'|' | b'-' | b':' | b' ' | b'\t'))
}

/// Words a document's title often is that name no model (`# Benchmark`).
const TITLE_WORDS: &[&str] = &[
    "benchmark",
    "benchmarks",
    "benchmarking",
    "result",
    "results",
    "summary",
    "report",
    "readme",
    "performance",
    "overview",
    "notes",
];

/// The markdown tables in `text` with their headers and context but no rows: what detection
/// needs, without reading every row of a large table a first time.
pub(crate) fn markdown_headers(text: &str) -> Vec<Table> {
    tables_in(text, false)
}

/// The rows of the first markdown table in `text` (the one [`markdown_tables`] gives first),
/// each line as it is ([`split_md_cells`] splits it): a reader that appends them one at a
/// time never holds them all.
pub(crate) fn first_table_rows(text: &str) -> impl Iterator<Item = (usize, &str)> + '_ {
    let mut lines = lines_of(text).enumerate().peekable();
    let mut found = false;
    while let Some((_, l)) = lines.next() {
        if l.trim().starts_with('|') && lines.peek().is_some_and(|(_, n)| is_md_separator(n)) {
            lines.next();
            found = true;
            break;
        }
    }
    lines
        .take_while(move |(_, l)| found && starts_row(l))
        .map(|(i, l)| (i + 1, l))
}

/// Markdown tables in `text`, each with the heading context above it.
///
/// A heading's context (model, GPU, engine) lasts until a heading of the same kind replaces it
/// or a heading of a higher level (fewer `#`) closes its section: under `## Comparison`, the
/// engine of an earlier `### TRT-LLM` no longer applies. Lines inside code fences are not
/// headings (`# lmdeploy serve ...` in a shell snippet).
pub(crate) fn markdown_tables(text: &str) -> Vec<Table> {
    tables_in(text, true)
}

fn tables_in(text: &str, with_rows: bool) -> Vec<Table> {
    let lines: Vec<&str> = lines_of(text).collect();
    let mut tables = Vec::new();
    // Each with the line and the level of the heading that named it.
    let mut model: Option<(String, usize, usize)> = None;
    let mut gpu: Option<(String, usize, usize)> = None;
    let mut engine: Option<(String, Option<String>, usize, usize)> = None;
    let mut section: Option<(String, usize)> = None;
    // The open headings naming no model, GPU or engine: (level, text).
    let mut headings: Vec<(usize, String)> = Vec::new();
    let mut in_fence = false;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if line.starts_with("```") || line.starts_with("~~~") {
            in_fence = !in_fence;
            i += 1;
            continue;
        }
        if let Some(h) = line.strip_prefix('#').filter(|_| !in_fence) {
            let level = 1 + h.bytes().take_while(|b| *b == b'#').count();
            let title = h.trim_start_matches('#').trim();
            let first = title.split_whitespace().next().unwrap_or("");
            // This heading closes the sections below its level.
            model = model.filter(|m| m.2 <= level);
            gpu = gpu.filter(|g| g.2 <= level);
            engine = engine.filter(|e| e.3 <= level);
            section = None;
            headings.retain(|(l, _)| *l < level);
            let labelled = title.split_once(':').and_then(|(label, value)| {
                let value = value.trim();
                let dim = super::columns::dim_synonym(&crate::ingest::text::snake(label))?;
                (!value.is_empty() && matches!(dim, "model" | "engine" | "gpu"))
                    .then_some((dim, value))
            });
            if let Some((dim, value)) = labelled {
                // `## Model: h2oai/h2ogpt-4096-llama2-7b-chat (transformers)` under
                // `# Backend: transformers`: the label says what the heading names, and the
                // engine in brackets after a model is the engine, not part of its name.
                match dim {
                    "model" => {
                        let name = value
                            .strip_suffix(')')
                            .and_then(|v| v.rsplit_once(" ("))
                            .filter(|(_, inner)| {
                                is_engine(inner)
                                    || engine
                                        .as_ref()
                                        .is_some_and(|e| e.0.eq_ignore_ascii_case(inner))
                            })
                            .map_or(value, |(m, _)| m.trim());
                        model = Some((name.to_string(), i + 1, level));
                    }
                    "engine" => {
                        engine = Some((value.to_ascii_lowercase(), None, i + 1, level));
                    }
                    _ => gpu = Some((value.to_string(), i + 1, level)),
                }
            } else if is_gpu_word(first) {
                gpu = Some((title.to_string(), i + 1, level));
            } else if is_engine(first) {
                let version = title
                    .split_whitespace()
                    .nth(1)
                    .filter(|v| {
                        v.trim_start_matches('v')
                            .starts_with(|c: char| c.is_ascii_digit())
                    })
                    .map(str::to_string);
                engine = Some((first.to_ascii_lowercase(), version, i + 1, level));
            } else if level == 1
                && !title.is_empty()
                && !title.contains(' ')
                && !title.ends_with(':')
                && !TITLE_WORDS.contains(&title.to_ascii_lowercase().as_str())
            {
                model = Some((title.to_string(), i + 1, level));
            } else {
                let text = title.trim_end_matches('#').trim();
                if !text.is_empty() {
                    section = Some((text.to_string(), i + 1));
                    headings.push((level, text.to_string()));
                }
            }
            i += 1;
            continue;
        }
        if line.starts_with('|') && i + 1 < lines.len() && is_md_separator(lines[i + 1]) {
            let mut t = Table {
                headers: split_md_row(line).iter().map(str::to_string).collect(),
                section: section.clone(),
                headings: headings.iter().rev().map(|(_, h)| h.clone()).collect(),
                ..Table::default()
            };
            if let Some((m, l, _)) = &model {
                t.context.push((Dim::Model, m.clone(), *l));
            }
            if let Some((g, l, _)) = &gpu {
                t.context.push((Dim::Gpu, g.clone(), *l));
            }
            super::llama_bench::name_sweep_tests(&mut t);
            let llama_bench = super::columns::is_llama_bench(&t.headers);
            if llama_bench {
                // Its `backend` column is ggml's backend; the engine is llama.cpp itself.
                t.context.push((Dim::Engine, "llama.cpp".to_string(), 0));
            } else if let Some((e, v, l, _)) = &engine {
                t.context.push((Dim::Engine, e.clone(), *l));
                if let Some(v) = v {
                    t.context.push((Dim::EngineVersion, v.clone(), *l));
                }
            }
            i += 2;
            while i < lines.len() && starts_row(lines[i]) {
                if with_rows {
                    t.rows.push((i + 1, split_md_row(lines[i])));
                }
                i += 1;
            }
            if llama_bench && with_rows {
                super::llama_bench::split_spread(&mut t);
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
