//! Server telemetry: the inference server's Prometheus `/metrics`, scraped on the run's clock
//! (`run --scrape-metrics`) and reduced to a few quantities every engine reports under its own
//! name. Only sample lines (`name{labels} value [timestamp]`) are read, by hand: the
//! `prometheus-parse` crate (0.2.5) matches metric names with `\w+`, so the colon in vLLM's,
//! SGLang's and llama.cpp's names (`vllm:num_requests_running`, valid Prometheus) does not read
//! there, and nothing else of the exposition format is needed here.
//!
//! | common name | vLLM | SGLang | TGI | llama.cpp server |
//! |---|---|---|---|---|
//! | `running` | `vllm:num_requests_running` | `sglang:num_running_reqs` | `tgi_batch_current_size` | `llamacpp:requests_processing` |
//! | `waiting` | `vllm:num_requests_waiting` | `sglang:num_queue_reqs` | `tgi_queue_size` | `llamacpp:requests_deferred` |
//! | `kv_cache_usage` (0–1) | `vllm:kv_cache_usage_perc`, `vllm:gpu_cache_usage_perc` | `sglang:token_usage` | — | `llamacpp:kv_cache_usage_ratio` |
//! | `prefix_cache_hit_rate` (0–1) | `vllm:prefix_cache_hits` / `vllm:prefix_cache_queries` (counters: the rate between two scrapes), `vllm:gpu_prefix_cache_hit_rate` | `sglang:cache_hit_rate` | — | — |
//! | `batch_size` | `vllm:num_requests_running` | `sglang:num_running_reqs` | `tgi_batch_current_size` | `llamacpp:n_busy_slots_per_decode` |
//!
//! Counts are summed over label sets (several models or engines behind one endpoint), ratios
//! averaged. Names are those of the engines' documentation and source (vLLM's
//! `vllm/v1/metrics/loggers.py`, SGLang's `sglang/srt/metrics/collector.py`, TGI's
//! `router/src`, llama.cpp's `tools/server/server.cpp`).

use std::collections::BTreeMap;

/// How a quantity combines over label sets.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Combine {
    Sum,
    Mean,
}

/// Common name, how it combines, and the engines' names for it (first found wins).
const GAUGES: &[(&str, Combine, &[&str])] = &[
    (
        "running",
        Combine::Sum,
        &[
            "vllm:num_requests_running",
            "sglang:num_running_reqs",
            "tgi_batch_current_size",
            "llamacpp:requests_processing",
        ],
    ),
    (
        "waiting",
        Combine::Sum,
        &[
            "vllm:num_requests_waiting",
            "sglang:num_queue_reqs",
            "tgi_queue_size",
            "llamacpp:requests_deferred",
        ],
    ),
    (
        "kv_cache_usage",
        Combine::Mean,
        &[
            "vllm:kv_cache_usage_perc",
            "vllm:gpu_cache_usage_perc",
            "sglang:token_usage",
            "llamacpp:kv_cache_usage_ratio",
        ],
    ),
    (
        "prefix_cache_hit_rate",
        Combine::Mean,
        &["vllm:gpu_prefix_cache_hit_rate", "sglang:cache_hit_rate"],
    ),
    (
        "batch_size",
        Combine::Sum,
        &[
            "llamacpp:n_busy_slots_per_decode",
            "tgi_batch_current_size",
            "vllm:num_requests_running",
            "sglang:num_running_reqs",
        ],
    ),
];

/// One scrape reduced to the common names, plus the prefix-cache counters (whose rate needs
/// two scrapes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Reading {
    /// Common name → value.
    pub values: BTreeMap<&'static str, f64>,
    /// vLLM's `prefix_cache_hits` counter, summed over label sets.
    pub prefix_hits: Option<f64>,
    /// vLLM's `prefix_cache_queries` counter, summed over label sets.
    pub prefix_queries: Option<f64>,
}

/// One sample line's metric name and value; `None` for comments, blank lines and lines that
/// do not read. Label values are skipped over (quoted, so a `}` inside one is fine).
fn sample(line: &str) -> Option<(&str, f64)> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let name_end = line
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == ':'))
        .unwrap_or(line.len());
    let (name, mut rest) = line.split_at(name_end);
    if name.is_empty() || name.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if let Some(labels) = rest.strip_prefix('{') {
        let mut in_quotes = false;
        let mut escaped = false;
        let close = labels.char_indices().find_map(|(i, c)| {
            match c {
                _ if escaped => escaped = false,
                '\\' if in_quotes => escaped = true,
                '"' => in_quotes = !in_quotes,
                '}' if !in_quotes => return Some(i),
                _ => {}
            }
            None
        })?;
        rest = &labels[close + 1..];
    }
    let value = rest.split_whitespace().next()?;
    let v = match value {
        "+Inf" | "Inf" => f64::INFINITY,
        "-Inf" => f64::NEG_INFINITY,
        _ => value.parse().ok()?,
    };
    Some((name, v))
}

/// Reads a `/metrics` body. Lines that do not read are skipped; a body with none of the known
/// names gives an empty reading.
pub fn read(text: &str) -> Reading {
    let mut found: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for (name, v) in text.lines().filter_map(sample) {
        if v.is_finite() {
            let name = name.strip_suffix("_total").unwrap_or(name);
            found.entry(name).or_default().push(v);
        }
    }
    let sum = |name: &str| found.get(name).map(|v| v.iter().sum::<f64>());
    let mut r = Reading {
        prefix_hits: sum("vllm:prefix_cache_hits"),
        prefix_queries: sum("vllm:prefix_cache_queries"),
        ..Reading::default()
    };
    for (common, combine, names) in GAUGES {
        let Some(vals) = names.iter().find_map(|n| found.get(n)) else {
            continue;
        };
        let total: f64 = vals.iter().sum();
        let v = match combine {
            Combine::Sum => total,
            Combine::Mean => total / vals.len() as f64,
        };
        r.values.insert(common, v);
    }
    r
}

/// Readings at seconds `t_s` from the stage start, as series columns `server.<name>` over the
/// seconds `0 … seconds − 1` (the last reading in a second wins; NaN where none). The prefix
/// hit rate from vLLM's counters is the hits over the queries between consecutive readings.
pub fn columns(readings: &[(f64, Reading)], seconds: usize) -> BTreeMap<String, Vec<f64>> {
    let mut out: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    let mut put = |name: &str, t: f64, v: f64| {
        if t.is_nan() || t < 0.0 || seconds == 0 {
            return;
        }
        let i = (t.floor() as usize).min(seconds - 1);
        out.entry(format!("server.{name}"))
            .or_insert_with(|| vec![f64::NAN; seconds])[i] = v;
    };
    let mut last_counters: Option<(f64, f64)> = None;
    for (t, r) in readings {
        for (name, v) in &r.values {
            put(name, *t, *v);
        }
        if let (Some(h), Some(q)) = (r.prefix_hits, r.prefix_queries) {
            if let Some((h0, q0)) = last_counters {
                if q > q0 && !r.values.contains_key("prefix_cache_hit_rate") {
                    put("prefix_cache_hit_rate", *t, (h - h0) / (q - q0));
                }
            }
            last_counters = Some((h, q));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shape of vLLM's `/metrics` (names from its v1 loggers).
    const VLLM: &str = "\
# HELP vllm:num_requests_running Number of requests in model execution batches.
# TYPE vllm:num_requests_running gauge
vllm:num_requests_running{engine=\"0\",model_name=\"m\"} 7.0
vllm:num_requests_running{engine=\"1\",model_name=\"m\"} 5.0
# TYPE vllm:num_requests_waiting gauge
vllm:num_requests_waiting{engine=\"0\",model_name=\"m\"} 3.0
# TYPE vllm:kv_cache_usage_perc gauge
vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.5
vllm:kv_cache_usage_perc{engine=\"1\",model_name=\"m\"} 0.25
# TYPE vllm:prefix_cache_queries counter
vllm:prefix_cache_queries_total{engine=\"0\",model_name=\"m\"} 1000.0
# TYPE vllm:prefix_cache_hits counter
vllm:prefix_cache_hits_total{engine=\"0\",model_name=\"m\"} 400.0
";

    #[test]
    fn vllm_names_map_to_common_ones() {
        let r = read(VLLM);
        assert_eq!(r.values["running"], 12.0);
        assert_eq!(r.values["waiting"], 3.0);
        assert_eq!(r.values["kv_cache_usage"], 0.375);
        assert_eq!(r.values["batch_size"], 12.0);
        assert_eq!(
            (r.prefix_hits, r.prefix_queries),
            (Some(400.0), Some(1000.0))
        );
    }

    #[test]
    fn other_engines_and_garbage() {
        let sglang = "sglang:num_running_reqs{model_name=\"m\"} 4\nsglang:num_queue_reqs{model_name=\"m\"} 1\nsglang:token_usage{model_name=\"m\"} 0.2\nsglang:cache_hit_rate{model_name=\"m\"} 0.9\n";
        let values = |text: &str, keys: [&str; 3]| {
            let r = read(text);
            keys.map(|k| r.values.get(k).copied())
        };
        assert_eq!(
            values(sglang, ["running", "waiting", "kv_cache_usage"]),
            [Some(4.0), Some(1.0), Some(0.2)]
        );
        let r = read(sglang);
        assert_eq!(r.values["prefix_cache_hit_rate"], 0.9);
        let tgi = "# TYPE tgi_queue_size gauge\ntgi_queue_size 2\n# TYPE tgi_batch_current_size gauge\ntgi_batch_current_size 6\n";
        assert_eq!(
            values(tgi, ["running", "waiting", "batch_size"]),
            [Some(6.0), Some(2.0), Some(6.0)]
        );
        let llama = "llamacpp:requests_processing 1\nllamacpp:requests_deferred 0\nllamacpp:kv_cache_usage_ratio 0.01\nllamacpp:n_busy_slots_per_decode 1\n";
        assert_eq!(read(llama).values.len(), 4);
        assert_eq!(read("<html>not metrics</html>"), Reading::default());
        assert_eq!(
            sample("x{a=\"}\\\" {\",b=\"2\"} 1.5 1700000000000"),
            Some(("x", 1.5))
        );
        assert_eq!(sample("x +Inf"), Some(("x", f64::INFINITY)));
        assert_eq!(sample("9x 1"), None);
        assert_eq!(sample("x{a=\"1\" 2"), None);
        assert_eq!(read(""), Reading::default());
    }

    #[test]
    fn columns_bin_by_second_and_rate_the_counters() {
        let at = |t: f64, q: f64, h: f64, running: f64| {
            let mut r = Reading {
                prefix_hits: Some(h),
                prefix_queries: Some(q),
                ..Reading::default()
            };
            r.values.insert("running", running);
            (t, r)
        };
        let cols = columns(
            &[
                at(0.2, 100.0, 10.0, 1.0),
                at(1.1, 200.0, 60.0, 3.0),
                at(9.0, 300.0, 60.0, 2.0),
            ],
            3,
        );
        assert_eq!(cols["server.running"], vec![1.0, 3.0, 2.0]);
        let hit = &cols["server.prefix_cache_hit_rate"];
        assert!(hit[0].is_nan());
        assert_eq!(hit[1], 0.5);
        assert_eq!(hit[2], 0.0);
        assert!(columns(&[at(0.0, 1.0, 1.0, 1.0)], 0).is_empty());
    }
}
