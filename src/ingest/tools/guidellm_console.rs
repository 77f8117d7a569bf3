//! guidellm's console report, as pasted in READMEs and lab guides: its "Benchmarks Stats"
//! table (and the "Benchmarks Info" and "Benchmarks Metadata" printed above it), one row per
//! benchmark (`synchronous`, `throughput`, `constant@0.69`). Each table is turned into the
//! report guidellm saves (`benchmarks.json`) and read by [`super::read_guidellm`], so the
//! console and the file are one reading of the same figures.
//!
//! The tables are `|`-separated text under two header lines: groups (`Req Latency (ms)  |||`,
//! a group spanning as many columns as pipes follow it, the last group the rest) and the
//! columns of each (`mean| median|  p99`).

use serde_json::{Map, Value};

use crate::ingest::table::split_md_cells;
use crate::ingest::text::parse_quantity;
use crate::ingest::Ingested;

/// Where guidellm's console report is: its stats table's title.
const STATS: &str = "Benchmarks Stats";

/// Whether `text` holds guidellm's console report (a stats table with its TTFT group).
pub(crate) fn detect_text(text: &str) -> bool {
    let b = text.as_bytes();
    memchr::memmem::find(b, STATS.as_bytes()).is_some()
        && memchr::memmem::find(b, b"TTFT (ms)").is_some()
}

/// One table: its header (group, column) per column, and its rows (line, cells).
struct Table<'a> {
    columns: Vec<(String, &'a str)>,
    rows: Vec<(usize, Vec<&'a str>)>,
}

/// The table whose title is at line `title` (0-based): rules (`====`) and blank lines skipped,
/// the group line, the column line, a `----` rule, then rows up to the next rule or blank line.
fn table_at<'a>(lines: &[&'a str], title: usize) -> Option<(Table<'a>, usize)> {
    let mut i = title + 1;
    while lines
        .get(i)
        .is_some_and(|l| is_rule(l, '=') || l.trim().is_empty())
    {
        i += 1;
    }
    let groups = lines.get(i)?;
    let names_line = lines.get(i + 1)?;
    if !lines.get(i + 2).is_some_and(|l| is_rule(l, '-')) {
        return None;
    }
    // The column names and each row's cells split as the markdown reader splits a row.
    let mut names: Vec<&str> = Vec::new();
    split_md_cells(names_line, &mut names);
    // Each group and how many columns it spans: the pipes after its name.
    let mut spans: Vec<(String, usize)> = Vec::new();
    let mut rest = groups.trim_end();
    while !rest.is_empty() {
        let name_end = rest.find('|').unwrap_or(rest.len());
        let name = rest[..name_end].trim().to_string();
        let after = &rest[name_end..];
        let pipes = after.len() - after.trim_start_matches('|').len();
        spans.push((name, pipes));
        rest = &after[pipes..];
    }
    let mut columns = Vec::with_capacity(names.len());
    let last = spans.len().saturating_sub(1);
    for (k, (group, span)) in spans.iter().enumerate() {
        let n = if k == last {
            names.len().saturating_sub(columns.len())
        } else {
            *span
        };
        for _ in 0..n {
            let Some(name) = names.get(columns.len()) else {
                break;
            };
            columns.push((group.clone(), *name));
        }
    }
    if columns.len() != names.len() {
        return None;
    }
    let mut rows = Vec::new();
    let mut j = i + 3;
    while let Some(l) = lines.get(j) {
        if l.trim().is_empty() || is_rule(l, '=') || !l.contains('|') {
            break;
        }
        let mut cells = Vec::new();
        split_md_cells(l, &mut cells);
        if cells.len() == columns.len() {
            rows.push((j + 1, cells));
        }
        j += 1;
    }
    Some((Table { columns, rows }, j))
}

/// A rule line of `c` (the header's `----|----` with its column breaks).
fn is_rule(line: &str, c: char) -> bool {
    let t = line.trim();
    t.len() >= 3 && t.starts_with(c) && t.chars().all(|x| x == c || x == '|')
}

/// A JSON object of `pairs` (one small builder rather than a `json!` expansion a call).
fn obj<const N: usize>(pairs: [(&str, Value); N]) -> Value {
    Value::Object(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

fn number(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// A cell's number as every table reader reads one; a cell with a unit is none of guidellm's.
fn num(cell: &str) -> Option<f64> {
    parse_quantity(cell)
        .filter(|(v, unit)| unit.is_empty() && v.is_finite())
        .map(|(v, _)| v)
}

/// The value in `text` of `key='…'` (the metadata block's `backend_model='…'`).
fn quoted<'a>(text: &'a str, key: &str) -> Option<&'a str> {
    let at = text.find(&format!("{key}='"))? + key.len() + 2;
    let end = text[at..].find('\'')?;
    Some(&text[at..at + end])
}

/// The benchmark's strategy as guidellm's report writes it, from the row's name.
fn strategy(name: &str) -> Value {
    let (kind, value) = name.split_once('@').unwrap_or((name, ""));
    let value = num(value);
    match (kind, value) {
        ("concurrent", Some(v)) => obj([("type_", kind.into()), ("streams", number(v))]),
        (_, Some(v)) => obj([("type_", kind.into()), ("rate", number(v))]),
        _ => obj([("type_", kind.into())]),
    }
}

/// One stats row as the report's metrics: each group to guidellm's metric name, each column
/// to its statistic. guidellm 0.2 printed the request latency in seconds under a "(ms)"
/// header; it is read as ms only where it is no shorter than the row's TTFT in ms.
fn metrics(t: &Table, cells: &[&str], warn_seconds: &mut bool) -> Map<String, Value> {
    let mut m: Map<String, Value> = Map::new();
    let ttft = t
        .columns
        .iter()
        .zip(cells)
        .find(|((g, c), _)| g.starts_with("TTFT") && *c == "mean")
        .and_then(|(_, v)| num(v));
    for ((group, column), cell) in t.columns.iter().zip(cells) {
        let Some(mut v) = num(cell) else { continue };
        let g = group.to_ascii_lowercase();
        let name = if g.starts_with("req latency") {
            if g.contains("(ms)") {
                if ttft.is_some_and(|t| v < t) {
                    *warn_seconds = true;
                } else {
                    v /= 1000.0;
                }
            }
            "request_latency"
        } else if g.starts_with("ttft") {
            "time_to_first_token_ms"
        } else if g.starts_with("itl") {
            "inter_token_latency_ms"
        } else if g.starts_with("tpot") {
            "time_per_output_token_ms"
        } else if g.starts_with("out tok") {
            "output_tokens_per_second"
        } else if g.starts_with("tot tok") {
            "tokens_per_second"
        } else if g.starts_with("request stats") && *column == "Per Second" {
            "requests_per_second"
        } else if g.starts_with("request stats") && *column == "Concurrency" {
            "request_concurrency"
        } else {
            continue;
        };
        let stats = m
            .entry(name)
            .or_insert_with(|| obj([("successful", Value::Object(Map::new()))]))
            .get_mut("successful")
            .and_then(Value::as_object_mut);
        // A column under a group of one figure (`Per Second`, `Concurrency`) is its mean.
        let stat = match column.to_ascii_lowercase() {
            c if c == "mean" || c == "median" || c.starts_with('p') && c.len() <= 4 => c,
            _ => "mean".to_string(),
        };
        if let Some(stats) = stats {
            stats.insert(stat, number(v));
        }
    }
    m
}

/// Reads every stats table of `text`, each with the metadata and info printed before it.
pub(crate) fn read_guidellm_console(text: &str, out: &mut Ingested) {
    let lines: Vec<&str> = text.lines().collect();
    let mut metadata = String::new();
    // Each benchmark's completed and errored requests, from the info table.
    let mut totals: std::collections::HashMap<String, (f64, f64)> = Default::default();
    let mut section: Option<String> = None;
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(h) = line.strip_prefix('#').filter(|h| h.starts_with([' ', '#'])) {
            let title = h.trim_start_matches('#').trim();
            if !title.is_empty() {
                section = Some(title.to_string());
            }
        }
        if line.starts_with("Benchmarks Metadata") {
            metadata.clear();
            let mut j = i + 1;
            while let Some(l) = lines.get(j).filter(|l| !l.trim().is_empty()) {
                metadata.push_str(l.trim());
                metadata.push(' ');
                j += 1;
            }
            i = j;
            continue;
        }
        if line.starts_with("Benchmarks Info") {
            if let Some((t, end)) = table_at(&lines, i) {
                totals.clear();
                let col = |g: &str, c: &str| {
                    t.columns
                        .iter()
                        .position(|(tg, tc)| tg.starts_with(g) && *tc == c)
                };
                let (comp, err) = (col("Requests Made", "Comp"), col("Requests Made", "Err"));
                for (_, cells) in &t.rows {
                    let get = |k: Option<usize>| k.and_then(|k| cells.get(k)).and_then(|c| num(c));
                    if let (Some(name), Some(c)) = (cells.first(), get(comp)) {
                        totals.insert(name.to_string(), (c, get(err).unwrap_or(0.0)));
                    }
                }
                i = end;
                continue;
            }
        }
        if line.starts_with(STATS) {
            if let Some((t, end)) = table_at(&lines, i) {
                read_stats(&t, &metadata, &totals, section.as_deref(), out);
                totals.clear();
                i = end;
                continue;
            }
        }
        i += 1;
    }
}

/// One stats table as guidellm's report, read by [`super::read_guidellm`]; then what the
/// console says and the report does not: the lengths the run asked for (`data=
/// 'prompt_tokens=512,output_tokens=256'`) and the markdown heading over the paste.
fn read_stats(
    t: &Table,
    metadata: &str,
    totals: &std::collections::HashMap<String, (f64, f64)>,
    section: Option<&str>,
    out: &mut Ingested,
) {
    let mut warn_seconds = false;
    let model = quoted(metadata, "backend_model");
    let benchmarks: Vec<Value> = t
        .rows
        .iter()
        .map(|(_, cells)| {
            let name = cells.first().copied().unwrap_or("");
            let mut b = Map::new();
            b.insert("args".into(), obj([("strategy", strategy(name))]));
            b.insert(
                "metrics".into(),
                Value::Object(metrics(t, cells, &mut warn_seconds)),
            );
            if let Some(m) = model {
                b.insert("worker".into(), obj([("backend_model", m.into())]));
            }
            let (completed, errored) = match totals.get(name) {
                Some(&(c, e)) => (Some(c), Some(e)),
                // Without the info table: a row of zeros completed nothing.
                None => {
                    let zero = cells.iter().skip(1).all(|c| num(c) == Some(0.0));
                    (zero.then_some(0.0), None)
                }
            };
            if let Some(c) = completed {
                let mut totals = Map::new();
                totals.insert("successful".into(), number(c));
                if let Some(e) = errored {
                    totals.insert("errored".into(), number(e));
                }
                b.insert("request_totals".into(), Value::Object(totals));
            }
            Value::Object(b)
        })
        .collect();
    let first = out.records.len();
    let mut report = Map::new();
    report.insert("benchmarks".into(), Value::Array(benchmarks));
    super::read_guidellm(&report, "Benchmarks Stats", out);
    if warn_seconds {
        crate::ingest::fields::note(
            out,
            "Req Latency read as seconds: guidellm 0.2 printed it in seconds under \"(ms)\" \
             (each shorter than its TTFT in ms)",
        );
    }
    let data = quoted(metadata, "data").unwrap_or("");
    let length = |key: &str| {
        data.split(',')
            .find_map(|kv| kv.trim().strip_prefix(key))
            .and_then(|v| v.strip_prefix('='))
            .and_then(num)
    };
    let (input, output) = (length("prompt_tokens"), length("output_tokens"));
    for r in out.records.iter_mut().skip(first) {
        r.input_len = r.input_len.or(input);
        r.output_len = r.output_len.or(output);
        if let Some(s) = section {
            r.tags.insert("section".into(), s.to_string());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::Format;
    use crate::model::MetricKey;

    const STATS_ONLY: &str = "\
Benchmarks Stats:
=======================
Metadata     | Request Stats         || Req Latency (sec) ||| TTFT (ms)           |||
    Benchmark| Per Second| Concurrency|  mean| median|   p99|   mean| median|    p99
-------------|-----------|------------|------|-------|------|-------|-------|-------
 concurrent@4|       1.50|        4.00|  2.50|   2.40|  3.10|  120.0|  110.0|  300.0
constant@9.00|       0.00|        0.00|  0.00|   0.00|  0.00|    0.0|    0.0|    0.0
=======================
";

    #[test]
    fn groups_span_their_pipes_and_the_last_takes_the_rest() {
        let lines: Vec<&str> = STATS_ONLY.lines().collect();
        let (t, _) = table_at(&lines, 0).unwrap();
        let groups: Vec<&str> = t.columns.iter().map(|(g, _)| g.as_str()).collect();
        assert_eq!(
            groups,
            [
                "Metadata",
                "Request Stats",
                "Request Stats",
                "Req Latency (sec)",
                "Req Latency (sec)",
                "Req Latency (sec)",
                "TTFT (ms)",
                "TTFT (ms)",
                "TTFT (ms)"
            ]
        );
        assert_eq!(t.rows.len(), 2);
    }

    #[test]
    fn stats_alone_read_with_seconds_header_and_a_run_of_zeros() {
        let mut out = Ingested::new(Format::Guidellm);
        read_guidellm_console(STATS_ONLY, &mut out);
        assert_eq!(out.records.len(), 2);
        let r = &out.records[0];
        assert_eq!(r.max_concurrency, Some(4));
        // `(sec)` is seconds: no note about a mislabelled header.
        assert_eq!(
            r.metric(&MetricKey::from_name("mean_e2el_ms").unwrap()),
            Some(2500.0)
        );
        assert!(!out
            .warnings
            .iter()
            .any(|w| w.message.contains("Req Latency")));
        // Without the info table, a row of zeros completed nothing.
        let zero = &out.records[1];
        assert_eq!(zero.request_rate, Some(9.0));
        assert_eq!(zero.metric(&MetricKey::Completed), Some(0.0));
    }

    #[test]
    fn a_table_without_its_rule_is_not_read() {
        let text = "Benchmarks Stats\nMetadata | TTFT (ms) ||\nBenchmark| mean| p99\nsync| 1| 2\n";
        let mut out = Ingested::new(Format::Guidellm);
        read_guidellm_console(text, &mut out);
        assert!(out.records.is_empty());
    }
}
