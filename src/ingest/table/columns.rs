//! Column mapping: which canonical field each source column feeds, guessed from its name and
//! unit (dimension synonyms, latency families and statistics, throughput units), with wide
//! column groups (one per GPU) melted, and the user's mapping taking precedence.

use std::collections::{HashMap, HashSet};

use super::{ColumnMapping, Table};
use crate::ingest::text::{parse_quantity, snake, to_ms_factor};
use crate::ingest::words::{gpu_display, is_engine, is_gpu_word};
use crate::model::{DimKey, LatencyMetric, MetricKey, Percentile, Stat};

fn has_word(n: &str, w: &str) -> bool {
    n.split('_').any(|t| t == w)
}

pub(super) fn dim_synonym(n: &str) -> Option<&'static str> {
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
        "precision" | "dtype" | "quantization" | "quant" | "data_type" | "bits" | "wbits" => {
            "precision"
        }
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
        "batch" | "bs" | "batch_size" | "batchsize" | "max_batch_size" | "n_batch" => "batch_size",
        // llama-bench's settings: runs differ by them (`fa` 0 and 1), so they are dimensions.
        "ngl" | "n_gpu_layers" => "tag.ngl",
        "n_ubatch" => "tag.n_ubatch",
        "fa" | "flash_attn" => "tag.fa",
        "threads" | "n_threads" => "tag.threads",
        "type_k" | "cache_type_k" => "tag.type_k",
        "type_v" | "cache_type_v" => "tag.type_v",
        "sm" | "split_mode" => "tag.split_mode",
        "mmap" | "use_mmap" => "tag.mmap",
        "nkvo" | "no_kv_offload" => "tag.no_kv_offload",
        "n_cpu_moe" => "tag.n_cpu_moe",
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
    if hint.contains("req") && hint.contains("/s")
        || hint == "per sec"
        || n.ends_with("req_s")
        || n.ends_with("requests_per_second")
        || n.ends_with("requests_per_s")
    {
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

pub(super) fn stat_in(n: &str) -> Option<Stat> {
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
        || n.contains("time_per_request")
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
    // `tput` as a word of its own (`tput_per_gpu`): `output_tokens` holds it too.
    let tput = has_word(&n, "tput");
    if n.contains("throughput") || tput || matches!(unit, Some("req/s" | "tok/s")) {
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
            None => (1.0, UNITLESS_LATENCY.to_string()),
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

/// Whether a column holds numbers: every filled cell a number, or all but a few (a row of
/// remarks under the runs, `| | Vulkan +5.3% | Vulkan +6.9% |`: at least two numbers and
/// at most a third of the cells text), whose rows then measure nothing and are said so.
fn numeric_column(t: &Table, col: usize) -> bool {
    let (mut numbers, mut text) = (0usize, 0usize);
    for (_, cells) in t.rows.iter().take(200) {
        if let Some(c) = cells.get(col).map(str::trim) {
            if c.is_empty() || c == "-" || c.eq_ignore_ascii_case("nan") {
                continue;
            }
            if parse_quantity(c).is_none() {
                text += 1;
            } else {
                numbers += 1;
            }
        }
    }
    numbers > 0 && (text == 0 || numbers >= 2 && text * 3 <= numbers + text)
}

/// The reason of a latency column whose name gives no unit, before [`guess_latency_units`].
pub(super) const UNITLESS_LATENCY: &str = "latency without a unit: assumed ms";

/// The automatic mapping of a table, melting wide column groups (`x_a100`, `x_tesla`), with
/// the unit of unitless latency columns decided by [`guess_latency_units`].
pub(crate) fn auto_mapping(t: &Table) -> Vec<ColumnMapping> {
    let mut mapping = auto_mapping_by_name(t);
    statistics_of_headings(t, &mut mapping);
    measured_loads(t, &mut mapping);
    guess_latency_units(t, &mut mapping);
    total_tokens_per_second(t, &mut mapping);
    mapping
}

/// The mapping of each column from its name (and whether it holds numbers).
fn auto_mapping_by_name(t: &Table) -> Vec<ColumnMapping> {
    // Wide tables: stems seen with two or more GPU suffixes.
    let split: Vec<Option<(&str, &str)>> = t
        .headers
        .iter()
        .map(|h| {
            h.rsplit_once('_')
                .filter(|(s, g)| !s.is_empty() && is_gpu_word(g))
        })
        .collect();
    // A stem is multi when two of its columns differ in suffix (ignoring case): each stem's
    // first suffix is kept in a map, so this is one pass rather than a pass per column.
    let mut first_suffix: HashMap<&str, &str> = HashMap::new();
    let mut multi_stems: HashSet<&str> = HashSet::new();
    for &(stem, suffix) in split.iter().flatten() {
        let first = *first_suffix.entry(stem).or_insert(suffix);
        if !first.eq_ignore_ascii_case(suffix) {
            multi_stems.insert(stem);
        }
    }
    let llama_bench = is_llama_bench(&t.headers);
    if multi_stems.is_empty() {
        if let Some(m) = engine_groups(t) {
            return m;
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
                _ if llama_bench => super::llama_bench::map_column(h, guess_column(h, numeric)),
                _ => {
                    let m = guess_column(h, numeric);
                    if m.target.as_deref() == Some("gpu_count") && gpu_names(t, i) {
                        // `1 x NVIDIA A100-SXM4-80GB (81920 MiB)`, `CPU`: a `gpus` column
                        // of names is the GPU (with its count where the cell gives one).
                        ColumnMapping::new(
                            h,
                            Some("gpu".to_string()),
                            1.0,
                            "its cells name the GPU (with a count: `2 x A100`)",
                        )
                    } else if !numeric
                        && m.target.as_deref().is_some_and(|t| t.starts_with("tag."))
                        && engine_column(t, i)
                    {
                        ColumnMapping::new(
                            h,
                            Some("engine".to_string()),
                            1.0,
                            "every value names an engine",
                        )
                    } else {
                        m
                    }
                }
            }
        })
        .collect()
}

/// A header's leading word and the rest: `vLLM TTFT` → (`vllm`, `TTFT`), `TRT-LLM TPS
/// (tok/s)` → (`trt-llm`, `TPS (tok/s)`), `sglang_ttft` → (`sglang`, `ttft`). A statistic or a
/// token kind (`Mean TTFT`, `Output tok/s`) is no system's name.
fn system_prefix(header: &str) -> Option<(String, &str)> {
    let h = header.trim();
    let (word, rest) = h.split_once([' ', '_'])?;
    let lower = word.trim_matches('*').to_ascii_lowercase();
    let rest = rest.trim();
    let not_a_name = crate::ingest::fields::stat_name(&lower).is_some()
        || matches!(
            lower.as_str(),
            "min"
                | "max"
                | "total"
                | "input"
                | "output"
                | "prompt"
                | "request"
                | "requests"
                | "token"
                | "tokens"
                | "e2e"
                | "end-to-end"
                | "peak"
                | "per"
        )
        || lower.bytes().all(|b| b.is_ascii_digit());
    (!rest.is_empty() && !lower.is_empty() && !not_a_name).then_some((lower, rest))
}

/// The mapping of a table with one column group per engine (`| Concurrency | vLLM TPS |
/// SGLang TPS | vLLM TTFT | SGLang TTFT |`): each group's columns are mapped by the rest of
/// their name and belong to that engine, so a row gives one record per engine. `None` unless
/// two leading words share a column name and one of them is a known engine; only leading
/// words that share a name with another form a group.
fn engine_groups(t: &Table) -> Option<Vec<ColumnMapping>> {
    let prefixes: Vec<Option<(String, &str)>> =
        t.headers.iter().map(|h| system_prefix(h)).collect();
    let mut systems_of: HashMap<String, HashSet<&str>> = HashMap::new();
    for (system, rest) in prefixes.iter().flatten() {
        systems_of
            .entry(rest.to_ascii_lowercase())
            .or_default()
            .insert(system.as_str());
    }
    let grouped: HashSet<&str> = systems_of
        .values()
        .filter(|s| s.len() >= 2)
        .flat_map(|s| s.iter().copied())
        .collect();
    if !grouped.iter().any(|s| is_engine(s)) {
        return None;
    }
    let split: Vec<Option<(String, &str)>> = prefixes
        .iter()
        .map(|p| {
            p.as_ref()
                .filter(|(s, _)| grouped.contains(s.as_str()))
                .map(|(s, r)| (s.clone(), *r))
        })
        .collect();
    Some(
        t.headers
            .iter()
            .enumerate()
            .map(|(i, h)| {
                let numeric = numeric_column(t, i);
                match &split[i] {
                    Some((engine, rest)) => {
                        let mut m = guess_column(rest, numeric);
                        m.column = h.clone();
                        m.reason = format!("{} (per engine: {engine})", m.reason);
                        m.engine = Some(engine.clone());
                        m
                    }
                    None => {
                        let mut m = guess_column(h, numeric);
                        m.reason = format!("{} (shared by every engine of the row)", m.reason);
                        m
                    }
                }
            })
            .collect(),
    )
}

/// Whether a GPU-count column (`gpus`) names the GPUs: a cell that is a name (`CPU`) or a
/// count with a name (`1 x NVIDIA A100-SXM4-80GB (81920 MiB)`), not a count alone.
fn gpu_names(t: &Table, col: usize) -> bool {
    t.rows.iter().take(200).any(|(_, cells)| {
        cells.get(col).map(str::trim).is_some_and(|c| {
            super::cells::gpu_and_count(c).is_some()
                || c.starts_with(|ch: char| ch.is_ascii_alphabetic())
                    && !matches!(c.to_ascii_lowercase().as_str(), "n/a" | "none" | "nan")
        })
    })
}

/// Whether a table is llama.cpp's `llama-bench` output (its markdown or field names), or
/// its results under the tests' names (`| Backend | pp512 | tg128 |`).
pub(crate) fn is_llama_bench(headers: &[String]) -> bool {
    super::llama_bench::is_llama_bench(headers) || super::llama_bench::has_test_columns(headers)
}

/// Whether every value of a column (of the first 200 rows) is an engine name (`vllm`,
/// `TRT-LLM`): a column whose name says nothing (`框架`, "framework" in Chinese) still holds
/// the engine, and the engine of the heading above must not replace it.
fn engine_column(t: &Table, col: usize) -> bool {
    let mut any = false;
    for (_, cells) in t.rows.iter().take(200) {
        match cells.get(col).map(str::trim) {
            Some("") | None => {}
            Some(c) if is_engine(c) => any = true,
            Some(_) => return false,
        }
    }
    any
}

/// The user's mapping where it names a column, the automatic one elsewhere.
pub(super) fn merge_mapping(
    auto: Vec<ColumnMapping>,
    user: Option<&[ColumnMapping]>,
) -> Vec<ColumnMapping> {
    let Some(user) = user else { return auto };
    // The first of the user's entries for a column wins, as a scan in order would find it.
    let mut by_column: HashMap<&str, &ColumnMapping> = HashMap::with_capacity(user.len());
    for u in user {
        by_column.entry(u.column.as_str()).or_insert(u);
    }
    auto.into_iter()
        .map(|a| match by_column.get(a.column.as_str()) {
            Some(u) => (*u).clone(),
            None => a,
        })
        .collect()
}

mod by_values;
use by_values::{
    guess_latency_units, measured_loads, statistics_of_headings, total_tokens_per_second,
};

#[cfg(test)]
mod tests;
