//! Dimensions recovered from names: file names (`{label}-{rate}qps-concurrency{N}-{model}-{date}.json`,
//! `..._tp8_pp1_sharegpt_qps_16.json`, llmperf's `<model>_<in>_<out>_summary.json`) and
//! vLLM performance-suite test names (`serving_llama8B_tp1_sharegpt_qps_4`). Values found this
//! way only fill dimensions the content left empty, and are marked inferred.

use crate::model::{Dim, DimValue, Record};

use super::fields::infer_dim;

/// Dimension values read from a name.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct FromName {
    pub values: Vec<(Dim, DimValue)>,
}

impl FromName {
    fn push(&mut self, d: Dim, v: DimValue) {
        if !self.values.iter().any(|(k, _)| *k == d) {
            self.values.push((d, v));
        }
    }

    /// Fills the dimensions `r` lacks, marking each inferred from `from`.
    pub fn apply(&self, r: &mut Record, from: &str) {
        for (d, v) in &self.values {
            // A length the name states was asked for; a mean of the run's tokens was not.
            super::fields::measured_mean_aside(r, *d);
            infer_dim(r, *d, v.clone(), from);
        }
    }
}

const DATASETS: &[&str] = &[
    "sharegpt",
    "random",
    "sonnet",
    "burstgpt",
    "hf",
    "instructcoder",
    "mmlu",
    "gsm8k",
];

/// Precisions as InferenceX and others write them in file names (`dsr1_1k1k_fp4_sglang_…`).
const PRECISIONS: &[&str] = &[
    "fp4", "nvfp4", "mxfp4", "fp8", "bf16", "fp16", "fp32", "int8", "int4", "w4a16", "w8a8",
];

/// GPU names as InferenceX runners and others write them in file names (`…_conc128_b200`).
const GPUS: &[&str] = &[
    "a10", "a10g", "a100", "h20", "h100", "h200", "h800", "b200", "b300", "gb200", "gb300", "l4",
    "l40s", "mi250x", "mi300x", "mi325x", "mi355x",
];

/// `1k1k`, `8k1k`: input and output lengths in units of 1,024 tokens, as InferenceX names its
/// sequence-length pairs.
fn kilo_pair(t: &str) -> Option<(f64, f64)> {
    let (i, rest) = t.split_once('k')?;
    let o = rest.strip_suffix('k')?;
    Some((num(i)? * 1024.0, num(o)? * 1024.0))
}

fn num(t: &str) -> Option<f64> {
    if t.eq_ignore_ascii_case("inf") {
        return Some(f64::INFINITY);
    }
    // Digits with an optional point: a sign cannot be in a name's token (split at `-`).
    super::text::plain_decimal(t)
}

fn prefixed(t: &str, prefix: &str) -> Option<f64> {
    let lower = t.to_ascii_lowercase();
    num(lower.strip_prefix(prefix)?)
}

/// Reads the underscore-separated parameters of a test or file name:
/// `tp8`, `pp1`, `tep8` / `dep8` (GPUs), `qps_16` / `qps16`, `bs8` / `batch8`, `concurrency_4`, dataset names,
/// and the model alias after `serving_`/`latency_`/`throughput_`.
pub(crate) fn parse_test_name(name: &str) -> FromName {
    let mut f = FromName::default();
    let tokens: Vec<&str> = name.split(['_', '-']).filter(|t| !t.is_empty()).collect();
    let mut i = 0;
    while i < tokens.len() {
        let t = tokens[i];
        let lower = t.to_ascii_lowercase();
        let next = tokens.get(i + 1).and_then(|n| num(n));
        if let Some(v) = prefixed(t, "tp") {
            f.push(Dim::Tp, DimValue::Num(v));
        } else if let Some(v) = prefixed(t, "pp") {
            f.push(Dim::Pp, DimValue::Num(v));
        } else if let Some(v) = prefixed(t, "tep").or_else(|| prefixed(t, "dep")) {
            // InferenceX's parallelism names: tensor parallelism (`tep8`) or data-parallel
            // attention (`dep8`), each with expert parallelism, over that many GPUs.
            f.push(Dim::GpuCount, DimValue::Num(v));
        } else if lower == "qps" || lower == "rate" {
            if let Some(v) = next {
                f.push(Dim::RequestRate, DimValue::Num(v));
                i += 1;
            }
        } else if let Some(v) = prefixed(t, "qps") {
            f.push(Dim::RequestRate, DimValue::Num(v));
        } else if lower == "concurrency" || lower == "conc" || lower == "bs" || lower == "batch" {
            if let Some(v) = next {
                let d = if lower.starts_with("conc") {
                    Dim::MaxConcurrency
                } else {
                    Dim::BatchSize
                };
                f.push(d, DimValue::Num(v));
                i += 1;
            }
        } else if let Some(v) = prefixed(t, "concurrency") {
            f.push(Dim::MaxConcurrency, DimValue::Num(v));
        } else if let Some(v) = prefixed(t, "bs").or_else(|| prefixed(t, "batch")) {
            f.push(Dim::BatchSize, DimValue::Num(v));
        } else if let Some(v) = prefixed(t, "conc") {
            f.push(Dim::MaxConcurrency, DimValue::Num(v));
        } else if let Some(v) = prefixed(t, "isl") {
            f.push(Dim::InputLen, DimValue::Num(v));
        } else if let Some(v) = prefixed(t, "osl") {
            f.push(Dim::OutputLen, DimValue::Num(v));
        } else if let Some(v) = prefixed(t, "ip").or_else(|| prefixed(t, "in")) {
            // `throughput_test_ip2048_op2048_np64`, `throughput_req64_in2048_out2048`
            f.push(Dim::InputLen, DimValue::Num(v));
        } else if let Some(v) = prefixed(t, "op").or_else(|| prefixed(t, "out")) {
            f.push(Dim::OutputLen, DimValue::Num(v));
        } else if let Some(v) = prefixed(t, "np").or_else(|| prefixed(t, "req")) {
            f.push(Dim::NumPrompts, DimValue::Num(v));
        } else if let Some((i, o)) = kilo_pair(&lower) {
            f.push(Dim::InputLen, DimValue::Num(i));
            f.push(Dim::OutputLen, DimValue::Num(o));
        } else if PRECISIONS.contains(&lower.as_str()) {
            f.push(Dim::Precision, DimValue::Text(lower));
        } else if GPUS.contains(&lower.as_str()) {
            f.push(Dim::Gpu, DimValue::Text(lower));
        } else if let Some(engine) = super::words::canonical_engine(&lower) {
            f.push(Dim::Engine, DimValue::Text(engine.to_string()));
        } else if DATASETS.contains(&lower.as_str()) {
            f.push(Dim::Dataset, DimValue::Text(lower));
        } else if i == 1 && matches!(tokens[0], "serving" | "latency" | "throughput") {
            f.push(Dim::Model, DimValue::Text(t.to_string()));
        }
        i += 1;
    }
    f
}

fn is_date(t: &str) -> bool {
    t.len() == 8 && t.bytes().all(|b| b.is_ascii_digit())
}

/// Reads dimensions from a file name (directories and extension are ignored).
pub(crate) fn parse_file_name(source: &str) -> FromName {
    let base = source.rsplit(['/', '\\']).next().unwrap_or(source);
    let stem = base
        .strip_suffix(".jsonl")
        .or_else(|| base.strip_suffix(".json"))
        .or_else(|| base.strip_suffix(".csv"))
        .or_else(|| base.strip_suffix(".md"))
        .or_else(|| base.strip_suffix(".txt"))
        .unwrap_or(base);
    // vLLM: {label}-{rate}qps[-concurrency{N}]-{model}-{date}
    let dashed: Vec<&str> = stem.split('-').collect();
    if let Some(qi) = dashed
        .iter()
        .position(|t| t.strip_suffix("qps").is_some_and(|r| num(r).is_some()))
    {
        let mut f = FromName::default();
        if let Some(rate) = dashed[qi].strip_suffix("qps").and_then(num) {
            f.push(Dim::RequestRate, DimValue::Num(rate));
        }
        if qi > 0 {
            f.push(Dim::Label, DimValue::Text(dashed[..qi].join("-")));
        }
        let mut rest = qi + 1;
        if let Some(c) = dashed.get(rest).and_then(|t| prefixed(t, "concurrency")) {
            f.push(Dim::MaxConcurrency, DimValue::Num(c));
            rest += 1;
        }
        let mut end = dashed.len();
        if end >= 2 && is_date(dashed[end - 2]) && dashed[end - 1].len() == 6 {
            f.push(
                Dim::Date,
                DimValue::Text(format!("{}-{}", dashed[end - 2], dashed[end - 1])),
            );
            end -= 2;
        }
        if rest < end {
            f.push(Dim::Model, DimValue::Text(dashed[rest..end].join("-")));
        }
        return f;
    }
    // llmperf: <model>_<in>_<out>_summary
    if let Some(body) = stem.strip_suffix("_summary") {
        let parts: Vec<&str> = body.rsplitn(3, '_').collect();
        if let [out_len, in_len, model] = parts[..] {
            if let (Some(i), Some(o)) = (num(in_len), num(out_len)) {
                let mut f = FromName::default();
                f.push(Dim::InputLen, DimValue::Num(i));
                f.push(Dim::OutputLen, DimValue::Num(o));
                f.push(Dim::Model, DimValue::Text(model.to_string()));
                return f;
            }
        }
    }
    // Test-name style parameters anywhere in the name; the model alias is only trusted from
    // real test names.
    let mut f = parse_test_name(stem);
    f.values.retain(|(d, _)| *d != Dim::Model);
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(f: &FromName, d: Dim) -> Option<String> {
        f.values
            .iter()
            .find(|(k, _)| *k == d)
            .map(|(_, v)| v.to_string())
    }

    #[test]
    fn vllm_result_file_names() {
        let f = parse_file_name("runs/vllm-16qps-concurrency64-Llama-3.1-8B-20250414-165148.json");
        assert_eq!(get(&f, Dim::Label).as_deref(), Some("vllm"));
        assert_eq!(get(&f, Dim::RequestRate).as_deref(), Some("16"));
        assert_eq!(get(&f, Dim::MaxConcurrency).as_deref(), Some("64"));
        assert_eq!(get(&f, Dim::Model).as_deref(), Some("Llama-3.1-8B"));
        assert_eq!(get(&f, Dim::Date).as_deref(), Some("20250414-165148"));
        let f = parse_file_name("x-infqps-m-20250101-000000.json");
        assert_eq!(get(&f, Dim::RequestRate).as_deref(), Some("inf"));
    }

    #[test]
    fn test_names_and_suite_file_names() {
        let f = parse_test_name("serving_llama8B_tp1_sharegpt_qps_4");
        assert_eq!(get(&f, Dim::Model).as_deref(), Some("llama8B"));
        assert_eq!(get(&f, Dim::Tp).as_deref(), Some("1"));
        assert_eq!(get(&f, Dim::Dataset).as_deref(), Some("sharegpt"));
        assert_eq!(get(&f, Dim::RequestRate).as_deref(), Some("4"));
        let f = parse_file_name("serving_llama70B_tp8_pp1_sharegpt_qps_inf.json");
        assert_eq!(get(&f, Dim::Tp).as_deref(), Some("8"));
        assert_eq!(get(&f, Dim::Pp).as_deref(), Some("1"));
        assert_eq!(get(&f, Dim::RequestRate).as_deref(), Some("inf"));
        assert_eq!(get(&f, Dim::Model), None);
    }

    #[test]
    fn inferencex_result_names_give_gpu_parallelism_and_precision() {
        let f = parse_file_name("dsr1_1k1k_fp4_sglang_tp4_ep1_dpa_false_conc128_b200.json");
        assert_eq!(get(&f, Dim::Gpu).as_deref(), Some("b200"));
        assert_eq!(get(&f, Dim::Precision).as_deref(), Some("fp4"));
        assert_eq!(get(&f, Dim::Engine).as_deref(), Some("sglang"));
        assert_eq!(get(&f, Dim::Tp).as_deref(), Some("4"));
        assert_eq!(get(&f, Dim::MaxConcurrency).as_deref(), Some("128"));
        assert_eq!(get(&f, Dim::InputLen).as_deref(), Some("1024"));
        assert_eq!(get(&f, Dim::OutputLen).as_deref(), Some("1024"));
        let f = parse_file_name("glm5_fp8_vllm_tp8_isl10240_osl128_conc16.json");
        assert_eq!(get(&f, Dim::InputLen).as_deref(), Some("10240"));
        assert_eq!(get(&f, Dim::OutputLen).as_deref(), Some("128"));
        assert_eq!(get(&f, Dim::Engine).as_deref(), Some("vllm"));
        assert_eq!(get(&f, Dim::Gpu), None);
    }

    #[test]
    fn llmperf_summary_names() {
        let f = parse_file_name("meta-llama-Llama-2-7b-chat-hf_550_150_summary.json");
        assert_eq!(get(&f, Dim::InputLen).as_deref(), Some("550"));
        assert_eq!(get(&f, Dim::OutputLen).as_deref(), Some("150"));
        assert_eq!(
            get(&f, Dim::Model).as_deref(),
            Some("meta-llama-Llama-2-7b-chat-hf")
        );
    }
}
