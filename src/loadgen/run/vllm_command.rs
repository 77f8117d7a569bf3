//! The `vllm bench serve` command line a stage would have had, written into the
//! vLLM-compatible result files so scripts that read vLLM's command lines find vLLM's flags.

use super::opts::{DatasetKind, Rate, RunOpts};

/// The run as `vllm bench serve` would have been invoked for one stage, so that scripts that
/// read vLLM's command lines find the dataset, lengths, rate and concurrency under vLLM's flag
/// names.
pub fn vllm_command_line(
    opts: &RunOpts,
    base_url: &str,
    model: &str,
    dataset: &str,
    rate: f64,
    concurrency: Option<u64>,
) -> String {
    let mut args: Vec<String> = vec!["vllm".into(), "bench".into(), "serve".into()];
    let mut flag = |name: &str, value: Option<String>| {
        args.push(format!("--{name}"));
        args.extend(value);
    };
    flag("backend", Some(opts.backend.name().into()));
    flag("base-url", Some(base_url.into()));
    if let Some(e) = &opts.endpoint {
        flag("endpoint", Some(e.clone()));
    }
    flag("model", Some(model.into()));
    flag("tokenizer", Some(opts.tokenizer.clone()));
    match opts.dataset {
        DatasetKind::Random => {
            flag("dataset-name", Some("random".into()));
            flag("random-input-len", Some(opts.input_len.to_string()));
            flag(
                "random-output-len",
                Some(opts.output_len.unwrap_or(128).to_string()),
            );
            flag("random-range-ratio", Some(opts.range_ratio.to_string()));
            if opts.prefix_len > 0 {
                flag("random-prefix-len", Some(opts.prefix_len.to_string()));
            }
        }
        DatasetKind::Jsonl | DatasetKind::Sharegpt => {
            let (name, len_flag) = if dataset == "sharegpt" {
                ("sharegpt", "sharegpt-output-len")
            } else {
                ("custom", "custom-output-len")
            };
            flag("dataset-name", Some(name.into()));
            if let Some(p) = &opts.dataset_path {
                flag("dataset-path", Some(p.display().to_string()));
            }
            if let Some(n) = opts.output_len {
                flag(len_flag, Some(n.to_string()));
            }
        }
        // vLLM's client has no trace replay: its nearest is a custom dataset of the file.
        DatasetKind::Trace => {
            flag("dataset-name", Some("custom".into()));
            if let Some(p) = &opts.dataset_path {
                flag("dataset-path", Some(p.display().to_string()));
            }
        }
    }
    flag("num-prompts", Some(opts.num_prompts.to_string()));
    flag("request-rate", Some(Rate(rate).to_string()));
    flag("burstiness", Some(opts.burstiness.to_string()));
    if let Some(c) = concurrency {
        flag("max-concurrency", Some(c.to_string()));
    }
    flag("seed", Some(opts.seed.to_string()));
    if opts.ignore_eos {
        flag("ignore-eos", None);
    }
    if opts.warmup > 0 {
        flag("num-warmups", Some(opts.warmup.to_string()));
    }
    let shown: Vec<&str> = opts.percentile_metrics.iter().map(|m| m.name()).collect();
    flag("percentile-metrics", Some(shown.join(",")));
    let ps: Vec<String> = opts.percentiles.iter().map(|p| p.to_string()).collect();
    flag("metric-percentiles", Some(ps.join(",")));
    if !opts.goodput.is_empty() {
        args.push("--goodput".into());
        args.extend(opts.objectives().map(ToString::to_string));
    }
    args.push("--save-result".into());
    if opts.save_detailed {
        args.push("--save-detailed".into());
    }
    args.join(" ")
}
