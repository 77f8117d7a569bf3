//! vLLM serving console summaries: `==== Serving Benchmark Result ====` blocks of
//! `Label:<padding>value` lines, with the free lines before them as context.
//!
//! Context lines between blocks form a group that applies to the blocks after it: an engine
//! name on its own (`vllm`) stays until another is named; `key: a, b, c` lists give one value
//! to each following block in order (`num_prompts: 1, 2, 4`); `key: v` applies to every block
//! of the group (`seq_length: 80` → input length). A new group replaces the previous one's
//! lists and values. Context values are marked inferred (`context line N`).

use super::fields::{infer_dim, lengths_from_totals};
use super::text::BANNER;
use super::words::is_engine;
use super::{Ingested, Warning};
use crate::model::canonical::parse_number_text;
use crate::model::{Dim, DimValue, LatencyMetric, MetricKey, Record, Stat};

/// One context value: applies to every block, or one list item per block.
struct ContextValue {
    key: String,
    values: Vec<String>,
    line: usize,
}

fn context_dim(key: &str) -> Option<Dim> {
    match key {
        "num_prompts" | "num_prompt" | "prompts" | "num_requests" => Some(Dim::NumPrompts),
        "seq_length" | "seq_len" | "input_len" | "input_length" | "prompt_len" => {
            Some(Dim::InputLen)
        }
        "output_len" | "output_length" | "max_tokens" => Some(Dim::OutputLen),
        "request_rate" | "qps" | "rate" => Some(Dim::RequestRate),
        "max_concurrency"
        | "concurrency"
        | "maximum_request_concurrency"
        | "max_request_concurrency" => Some(Dim::MaxConcurrency),
        "traffic_request_rate" => Some(Dim::RequestRate),
        "burstiness" | "burstiness_factor" => Some(Dim::Burstiness),
        "model" | "model_id" => Some(Dim::Model),
        "gpu" => Some(Dim::Gpu),
        "tp" | "tp_size" => Some(Dim::Tp),
        "batch_size" | "bs" => Some(Dim::BatchSize),
        "dataset" | "dataset_name" => Some(Dim::Dataset),
        _ => None,
    }
}

fn summary_key(label: &str) -> Option<MetricKey> {
    let l = label.trim();
    let fixed = match l {
        "Successful requests" => Some(MetricKey::Completed),
        "Failed requests" => Some(MetricKey::Failed),
        "Benchmark duration (s)" => Some(MetricKey::DurationS),
        "Request throughput (req/s)" => Some(MetricKey::RequestThroughput),
        "Request goodput (req/s)" => Some(MetricKey::RequestGoodput),
        "Output token throughput (tok/s)" => Some(MetricKey::OutputThroughput),
        // SGLang's older summaries say "Total throughput".
        "Total Token throughput (tok/s)"
        | "Total token throughput (tok/s)"
        | "Total throughput (tok/s)" => Some(MetricKey::TotalTokenThroughput),
        "Input token throughput (tok/s)" => Some(MetricKey::InputThroughput),
        "Total input tokens" => Some(MetricKey::Extra("total_input_tokens".into())),
        "Total generated tokens" => Some(MetricKey::Extra("total_output_tokens".into())),
        "Peak output token throughput (tok/s)" => {
            Some(MetricKey::Extra("max_output_tokens_per_s".into()))
        }
        "Peak concurrent requests" => Some(MetricKey::Extra("max_concurrent_requests".into())),
        // SGLang's `bench_serving`, named as its JSON Lines name them.
        "Total generated tokens (retokenized)" => {
            Some(MetricKey::Extra("total_output_tokens_retokenized".into()))
        }
        "Concurrency" => Some(MetricKey::Extra("concurrency".into())),
        _ => None,
    };
    if fixed.is_some() {
        return fixed;
    }
    // "Mean TTFT (ms)", "P99.9 ITL (ms)", "Median E2EL (ms)"
    let body = l.strip_suffix("(ms)")?.trim();
    let (stat, family) = body.split_once(' ')?;
    let stat = match stat.to_ascii_lowercase().as_str() {
        "mean" => Stat::Mean,
        "median" => Stat::Median,
        "std" => Stat::Std,
        // SGLang prints "Max ITL (ms)": no canonical statistic, kept as an extra.
        "max" => {
            let family = latency_family(family)?;
            return Some(MetricKey::Extra(format!("max_{}_ms", family.name())));
        }
        s => Stat::P(crate::model::Percentile::parse(s.strip_prefix('p')?)?),
    };
    Some(MetricKey::Latency(latency_family(family)?, stat))
}

fn latency_family(family: &str) -> Option<LatencyMetric> {
    Some(match family.trim().to_ascii_lowercase().as_str() {
        "ttft" => LatencyMetric::Ttft,
        "tpot" => LatencyMetric::Tpot,
        "itl" => LatencyMetric::Itl,
        "e2el" | "e2e latency" => LatencyMetric::E2el,
        _ => return None,
    })
}

/// Settings a summary block states itself (dimensions, not metrics).
fn summary_dim(label: &str) -> Option<Dim> {
    match label.trim() {
        "Maximum request concurrency" => Some(Dim::MaxConcurrency),
        "Request rate configured (RPS)" | "Traffic request rate" => Some(Dim::RequestRate),
        "Max request concurrency" => Some(Dim::MaxConcurrency),
        "Backend" => Some(Dim::Engine),
        "Model" | "Model ID" => Some(Dim::Model),
        _ => None,
    }
}

/// Reads every summary block.
pub(crate) fn read(text: &str, out: &mut Ingested) {
    let mut engine: Option<(String, usize)> = None;
    // The nearest markdown heading above that names no setting ("## Test 1: 2 GPU pods ..."):
    // it stays until the next heading, as `tag.section`.
    let mut section: Option<(String, usize)> = None;
    // Blocks laid side by side in an HTML table (`<tr><th>with kvcached</th><th>without
    // kvcached</th></tr>`, then one `<td>` a block): the header cells and the cell we are in.
    let mut html = HtmlCells::default();
    let mut group: Vec<ContextValue> = Vec::new();
    let mut group_open = false; // context lines seen since the last block
    let mut index_in_group = 0usize;
    let mut block: Option<(Record, usize)> = None;
    for (i, raw) in text.lines().enumerate() {
        let n = i + 1;
        let line = raw.trim();
        // Summaries pasted as comments (`# Mean TTFT (ms): ...` in a shell script) read as
        // the plain ones.
        let line = if block.is_some() || line.contains(BANNER) {
            line.trim_start_matches('#').trim_start()
        } else {
            line
        };
        if line.contains(BANNER) {
            if let Some((r, start)) = block.take() {
                finish_block(r, start, out);
            }
            if group_open {
                group_open = false;
                index_in_group = 0;
            }
            let mut r = Record::default();
            if let Some((text, at)) = html.header() {
                r.tags.insert("column".to_string(), text.to_string());
                r.inferred.insert(
                    "tag.column".to_string(),
                    format!("HTML table header line {at}"),
                );
            }
            if let Some((text, at)) = &section {
                r.tags.insert("section".to_string(), text.clone());
                r.inferred
                    .insert("tag.section".to_string(), format!("heading line {at}"));
            }
            if let Some((e, at)) = &engine {
                infer_dim(
                    &mut r,
                    Dim::Engine,
                    DimValue::Text(e.clone()),
                    &format!("context line {at}"),
                );
            }
            for c in &group {
                let value = if c.values.len() > 1 {
                    match c.values.get(index_in_group) {
                        Some(v) => v,
                        None => {
                            out.warnings.push(Warning::line(
                                n,
                                format!(
                                    "block {} has no value in the {} list of line {} ({} values)",
                                    index_in_group + 1,
                                    c.key,
                                    c.line,
                                    c.values.len()
                                ),
                            ));
                            continue;
                        }
                    }
                } else {
                    &c.values[0]
                };
                let from = format!("context line {}", c.line);
                match context_dim(&c.key) {
                    Some(d) => {
                        if unset(value) {
                            continue;
                        }
                        let v = context_value(value);
                        if r.known(d).is_none() && r.set_known(d, Some(v)).is_ok() {
                            r.inferred.insert(d.name().to_string(), from);
                        }
                    }
                    None => {
                        r.tags.insert(super::text::snake(&c.key), value.clone());
                        r.inferred
                            .insert(format!("tag.{}", super::text::snake(&c.key)), from);
                    }
                }
            }
            index_in_group += 1;
            block = Some((r, n));
            continue;
        }
        if line.is_empty() {
            continue;
        }
        if line.bytes().all(|b| b == b'=') {
            if let Some((r, start)) = block.take() {
                finish_block(r, start, out);
            }
            continue;
        }
        if let Some((r, _)) = block.as_mut() {
            if line.starts_with('-') {
                continue; // section rule: "----Time to First Token----"
            }
            let Some((label, value)) = line.split_once(':') else {
                out.warnings.push(Warning::line(
                    n,
                    "unexpected line in a summary block, ignored",
                ));
                continue;
            };
            let value = value.trim();
            if let Some(d) = summary_dim(label) {
                // SGLang prints "Max request concurrency: not set".
                if unset(value) {
                    continue;
                }
                let v = parse_number_text(value)
                    .map(DimValue::Num)
                    .unwrap_or_else(|| DimValue::Text(value.to_string()));
                match r.set_known(d, Some(v)) {
                    // Read from the block itself, not inferred from the context any more.
                    Ok(()) => {
                        r.inferred.remove(d.name());
                    }
                    Err(e) => out.warnings.push(Warning::line(n, format!("{e}, ignored"))),
                }
            } else if let Some(key) = summary_key(label) {
                match parse_number_text(value) {
                    Some(v) => r.set_metric(key, v),
                    None => out.warnings.push(Warning::line(
                        n,
                        format!("{:?} is not a number, ignored", value),
                    )),
                }
            } else if value.is_empty() {
                // A sub-heading inside the block ("Per-position acceptance (%):").
            } else {
                // A figure with no canonical name keeps its own name (SGLang's "Concurrency",
                // vLLM's speculative-decoding lines, "Acceptance rate (%)").
                let name = super::text::snake(label);
                let plain = !label.contains(['[', ']', '<', '>', '=', '|', '{', '}'])
                    && label.split_whitespace().count() <= 6;
                match parse_number_text(value) {
                    Some(v) if plain && !name.is_empty() => r.set_metric(MetricKey::Extra(name), v),
                    _ => out.warnings.push(Warning::line(
                        n,
                        format!("unknown summary line {:?}, ignored", label.trim()),
                    )),
                }
            }
            continue;
        }
        // A context line.
        if !group_open {
            group.clear();
            group_open = true;
        }
        if html.read(line, n) {
            continue;
        }
        let flags = command_flags(line);
        if !flags.is_empty() {
            for (key, value) in flags {
                group.push(ContextValue {
                    key: key.to_string(),
                    values: vec![value],
                    line: n,
                });
            }
            continue;
        }
        let line = without_html_tags(line);
        let line = line.as_str();
        if let Some(title) = heading_section(line) {
            // A new section (`##` or deeper: a `# ` line may be a comment in a shell block):
            // an engine named on a line of its own in the last one no longer applies
            // (`SGLang` above `### 2. Async scheduling in vLLM`); one the heading names does.
            if line.starts_with("##") {
                engine = title
                    .split(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | '(' | ')'))
                    .find(|w| is_engine(w))
                    .map(|w| (w.to_ascii_lowercase(), n));
            }
            section = Some((title, n));
            continue;
        }
        let lower = line.to_ascii_lowercase();
        if is_engine(&lower) {
            engine = Some((lower, n));
        } else if let Some((k, v)) = line.split_once(':').filter(|(k, v)| {
            context_key(k) && !v.trim_start().starts_with("//") && !v.contains("](")
        }) {
            let key = super::text::snake(k);
            let values: Vec<String> = v
                .split(',')
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .collect();
            if key.is_empty() || values.is_empty() {
                out.warnings
                    .push(Warning::line(n, "context line without a value, ignored"));
            } else {
                group.push(ContextValue {
                    key,
                    values,
                    line: n,
                });
            }
        } else {
            out.warnings.push(Warning::line(
                n,
                format!("free text {:?} not understood, ignored", truncate(line)),
            ));
        }
    }
    if let Some((r, start)) = block.take() {
        finish_block(r, start, out);
    }
}

/// The settings a pasted benchmark command line gives (`vllm bench serve --model M
/// --num-prompts 300 --max-concurrency 25 \`), as context keys and values: the blocks after
/// it ran with them. A command split over lines gives its flags line by line.
fn command_flags(line: &str) -> Vec<(&'static str, String)> {
    let mut out = Vec::new();
    let mut words = line.split_whitespace().peekable();
    while let Some(w) = words.next() {
        let Some(flag) = w.strip_prefix("--") else {
            continue;
        };
        let (name, inline) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v.to_string())),
            None => (flag, None),
        };
        let key = match name {
            "model" => "model",
            "num-prompts" | "num_prompts" => "num_prompts",
            "request-rate" | "request_rate" => "request_rate",
            "max-concurrency" | "max_concurrency" => "max_concurrency",
            "random-input-len" | "random_input_len" | "input-len" | "input_len" => "input_len",
            "random-output-len"
            | "random_output_len"
            | "output-len"
            | "output_len"
            | "sharegpt-output-len"
            | "sharegpt_output_len" => "output_len",
            "dataset-name" | "dataset_name" => "dataset",
            "burstiness" => "burstiness",
            "batch-size" | "batch_size" => "batch_size",
            "tensor-parallel-size" | "tensor_parallel_size" | "tp" | "tp-size" | "tp_size" => "tp",
            _ => continue,
        };
        let value = match inline {
            Some(v) => v,
            None => match words.peek() {
                Some(v) if !v.starts_with("--") && *v != "\\" => {
                    let v = v.to_string();
                    words.next();
                    v
                }
                _ => continue,
            },
        };
        let value = value.trim_matches(['"', '\'']).to_string();
        if !value.is_empty() {
            out.push((key, name.starts_with("random"), value));
        }
    }
    // vLLM ignores the random dataset's lengths on another dataset.
    let other_dataset = out
        .iter()
        .any(|(k, _, v)| *k == "dataset" && !v.eq_ignore_ascii_case("random"));
    out.into_iter()
        .filter(|(_, random, _)| !(other_dataset && *random))
        .map(|(k, _, v)| (k, v))
        .collect()
}

/// A line without its HTML tags (`## <a name="toc_3"></a>Test 1: ...` → `## Test 1: ...`).
fn without_html_tags(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(open) = rest.find('<') {
        match rest[open..].find('>') {
            Some(close)
                if rest[open + 1..open + close].chars().all(|c| {
                    c.is_ascii_alphanumeric()
                        || matches!(c, '/' | ' ' | '=' | '"' | '_' | '-' | '\'')
                }) =>
            {
                out.push_str(&rest[..open]);
                rest = &rest[open + close + 1..];
            }
            _ => {
                out.push_str(&rest[..=open]);
                rest = &rest[open + 1..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// The header cells of an HTML table and which data cell of its row the text is in.
#[derive(Default)]
struct HtmlCells {
    headers: Vec<String>,
    line: usize,
    cell: Option<usize>,
}

impl HtmlCells {
    /// Takes a line of the table's markup; false for any other line.
    fn read(&mut self, line: &str, n: usize) -> bool {
        let lower = line.to_ascii_lowercase();
        if lower.contains("<th>") {
            self.headers = lower
                .match_indices("<th>")
                .filter_map(|(i, _)| {
                    let rest = &line[i + 4..];
                    let end = rest.to_ascii_lowercase().find("</th>")?;
                    Some(without_html_tags(&rest[..end]).trim().to_string())
                })
                .collect();
            self.line = n;
            self.cell = None;
        } else if lower.starts_with("<td") {
            self.cell = Some(self.cell.map_or(0, |c| c + 1));
        } else if lower.starts_with("<tr") {
            self.cell = None;
        } else if lower.starts_with("</table") {
            *self = HtmlCells::default();
        } else {
            return matches!(lower.as_str(), "<table>" | "</td>" | "</tr>");
        }
        true
    }

    /// The header of the cell the text is in, with its line.
    fn header(&self) -> Option<(&str, usize)> {
        let h = self.headers.get(self.cell?)?;
        (!h.is_empty()).then_some((h.as_str(), self.line))
    }
}

/// A markdown heading that names no setting, as its text without marks and emoji
/// (`#### ✍️ Test 1: 2 GPU pods ...` → `Test 1: 2 GPU pods ...`). Headings that name a setting
/// (`# request rate: 2`, `# Traffic request rate: inf`) and headings of one engine's name are
/// read as other context lines.
fn heading_section(line: &str) -> Option<String> {
    let rest = line.strip_prefix('#')?.trim_start_matches('#');
    if !rest.starts_with(' ') {
        return None;
    }
    let title = rest
        .trim_start_matches(|c: char| !c.is_alphanumeric())
        .trim();
    // A numbered heading (`### 2. Async scheduling in vLLM`) without its number.
    let title = title
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .strip_prefix(['.', ')'])
        .filter(|_| title.starts_with(|c: char| c.is_ascii_digit()))
        .map_or(title, str::trim);
    if !title.starts_with(|c: char| c.is_alphabetic())
        || title.contains('|')
        || title.chars().count() > 160
        || is_engine(title)
    {
        return None;
    }
    if let Some((k, _)) = title.split_once(':') {
        if context_key(k) && context_dim(&super::text::snake(k)).is_some() {
            return None;
        }
    }
    Some(title.to_string())
}

/// A value that says a setting was not given.
fn unset(value: &str) -> bool {
    matches!(
        value.to_ascii_lowercase().as_str(),
        "not set" | "none" | "null" | "n/a" | "-"
    )
}

/// Whether the text before a colon can name a context setting: a few words, no brackets or
/// markup. (The value must not be a URL's rest or a markdown link either.) Log lines (`(APIServer pid=1) INFO 09-10 23:55:56 [loggers.py:123] ...`) and HTML
/// (`<a name="toc_3"></a>Test 1: ...`) are free text, not settings for the blocks after them.
fn context_key(k: &str) -> bool {
    let k = k.trim().trim_start_matches(['#', '-', '*', '>']).trim();
    !k.is_empty()
        && !k.starts_with([',', ';', '.'])
        && k.chars().count() <= 40
        && k.split_whitespace().count() <= 5
        && !k.contains([
            '(', ')', '[', ']', '<', '>', '{', '}', '=', '/', '\\', '|', '"', '`',
        ])
}

/// A context value as a dimension value: a number where it starts with one
/// (`1.0 (Poisson process)` → 1), else the text.
fn context_value(value: &str) -> DimValue {
    parse_number_text(value)
        .or_else(|| {
            let first = value.split_whitespace().next()?;
            let rest = value[first.len()..].trim_start();
            (rest.starts_with('(') && rest.ends_with(')'))
                .then(|| parse_number_text(first))
                .flatten()
        })
        .map(DimValue::Num)
        .unwrap_or_else(|| DimValue::Text(value.to_string()))
}

fn truncate(s: &str) -> String {
    s.chars().take(40).collect()
}

fn finish_block(mut r: Record, start: usize, out: &mut Ingested) {
    if r.metrics.is_empty() {
        out.warnings.push(Warning::line(
            start,
            "summary block without values, skipped",
        ));
        return;
    }
    lengths_from_totals(
        &mut r,
        [
            "total input tokens",
            "total generated tokens",
            "successful requests",
        ],
    );
    out.records.push(r);
}
