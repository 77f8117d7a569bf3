//! vLLM command lines for `benchlens run`: flags of `vllm bench serve` that benchlens implements
//! are aliases on [`crate::loadgen::RunOpts`] (clap); this module handles the rest before clap
//! sees them. vLLM's parser accepts `--snake_case` spellings, so `--random_input_len` becomes
//! `--random-input-len`; `--backend vllm` is vLLM's name for the completions API (`openai`);
//! and every other `vllm bench serve` flag is rejected with a message naming benchlens's
//! equivalent or saying that it is not supported (clap's own "unexpected argument" would not
//! say which). The table follows vllm/benchmarks/serve.py and datasets.py of vLLM main at commit 009e6d4.

use std::ffi::OsString;

/// vLLM flags benchlens does not implement, with what to do instead.
const UNSUPPORTED: &[(&str, &str)] = &[
    ("tokenizer-mode", "benchlens reads a local tokenizer.json or a built-in encoding: use --tokenizer"),
    ("trust-remote-code", "benchlens runs no model code: --tokenizer takes a local tokenizer.json"),
    ("served-model-name", "use --model: benchlens sends it as the model name"),
    ("endpoint-type", "use --backend (openai, openai-chat, tgi, sglang)"),
    ("use-beam-search", "not supported; request fields go in --extra-body"),
    ("logprobs", "use --extra-body '{\"logprobs\": N}'"),
    ("top-p", "use --extra-body '{\"top_p\": V}'"),
    ("top-k", "use --extra-body '{\"top_k\": V}'"),
    ("min-p", "use --extra-body '{\"min_p\": V}'"),
    ("temperature", "use --extra-body '{\"temperature\": V}'"),
    ("frequency-penalty", "use --extra-body '{\"frequency_penalty\": V}'"),
    ("presence-penalty", "use --extra-body '{\"presence_penalty\": V}'"),
    ("repetition-penalty", "use --extra-body '{\"repetition_penalty\": V}'"),
    ("chat-template-kwargs", "use --extra-body '{\"chat_template_kwargs\": {...}}'"),
    ("request-id-prefix", "not supported"),
    ("probe-request-rate", "not supported"),
    ("profile", "not supported (start the server's profiler yourself)"),
    ("append-result", "not supported: every run writes its own files (a comma list of --request-rate or --max-concurrency runs several stages into one file)"),
    ("self-timed", "not supported: replay a timed trace with --dataset trace --dataset-path FILE"),
    ("no-self-timed", "not supported: replay a timed trace with --dataset trace --dataset-path FILE"),
    ("lora-modules", "not supported: pass the adapter's name as --model"),
    ("lora-assignment", "not supported: pass the adapter's name as --model"),
    ("ready-check-timeout-sec", "not supported: the run starts when /v1/models (or --num-warmups) answers"),
    ("skip-tokenizer-init", "not supported: use --tokenizer words for a tokenizer-free count"),
    ("plot-timeline", "not supported: the explorer draws per-request charts from the result files"),
    ("timeline-itl-thresholds", "not supported: the explorer draws per-request charts from the result files"),
    ("plot-dataset-stats", "not supported: `benchlens inspect` and the explorer show the lengths"),
    ("no-stream", "not supported: benchlens always streams"),
    ("no-oversample", "not supported"),
    ("disable-shuffle", "not supported"),
    ("skip-chat-template", "not supported"),
    ("enable-multimodal-chat", "multimodal prompts are not supported"),
    ("random-batch-size", "not supported: random prompts are single sequences"),
    ("no-reranker", "not supported"),
    ("hf-subset", "Hugging Face datasets are not supported: use --dataset-name sharegpt or custom with a local --dataset-path"),
    ("hf-split", "Hugging Face datasets are not supported: use --dataset-name sharegpt or custom with a local --dataset-path"),
    ("hf-name", "Hugging Face datasets are not supported: use --dataset-name sharegpt or custom with a local --dataset-path"),
    ("hf-output-len", "Hugging Face datasets are not supported: use --output-len with a local dataset"),
    ("sonnet-input-len", "the sonnet dataset is not supported: use --dataset-name random"),
    ("sonnet-output-len", "the sonnet dataset is not supported: use --dataset-name random"),
    ("sonnet-prefix-len", "the sonnet dataset is not supported: use --random-prefix-len"),
    ("spec-bench-output-len", "the spec_bench dataset is not supported"),
    ("spec-bench-category", "the spec_bench dataset is not supported"),
    ("prefix-repetition-suffix-len", "use --input-len (the random part after the shared prefix)"),
    ("prefix-repetition-output-len", "use --output-len"),
    ("blazedit-min-distance", "the blazedit dataset is not supported"),
    ("blazedit-max-distance", "the blazedit dataset is not supported"),
    ("asr-max-audio-len-sec", "audio datasets are not supported"),
    ("asr-min-audio-len-sec", "audio datasets are not supported"),
    ("random-mm-base-items-per-request", "multimodal prompts are not supported"),
    ("random-mm-num-mm-items-range-ratio", "multimodal prompts are not supported"),
    ("random-mm-limit-mm-per-prompt", "multimodal prompts are not supported"),
    ("random-mm-bucket-config", "multimodal prompts are not supported"),
];

/// A vLLM flag that benchlens rejects, with the reason.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
#[error("--{flag} (a `vllm bench serve` option): {advice}")]
pub struct UnsupportedFlag {
    /// The flag, without dashes.
    pub flag: String,
    /// What to use instead, or that it is not supported.
    pub advice: String,
}

/// Rewrites the arguments of `benchlens run` for clap: `--snake_case` flags become
/// `--kebab-case`, `--backend vllm` becomes `--backend openai`, and a `vllm bench serve` flag
/// that `known` (the run command's long names and aliases) does not list is an error naming
/// the alternative. `--dataset-name random` (vLLM's spelling) with an OpenAI-style backend adds
/// `--ignore-eos`, as `vllm bench serve` forces `ignore_eos` for that dataset (benchlens's own
/// `--dataset random` does not). Arguments before `run` and of other subcommands pass
/// unchanged.
pub fn translate(args: Vec<OsString>, known: &[String]) -> Result<Vec<OsString>, UnsupportedFlag> {
    let Some(run_at) = args.iter().position(|a| a == "run") else {
        return Ok(args);
    };
    // The subcommand is the first non-flag argument after the program name.
    if args[1..run_at]
        .iter()
        .any(|a| !a.to_string_lossy().starts_with('-'))
    {
        return Ok(args);
    }
    let mut out: Vec<OsString> = args[..=run_at].to_vec();
    let mut rest = args[run_at + 1..].iter().peekable();
    let mut vllm_random = false;
    let mut openai_backend = true;
    let mut ignore_eos = false;
    while let Some(arg) = rest.next() {
        let Some(text) = arg.to_str() else {
            out.push(arg.clone());
            continue;
        };
        let Some(flag) = text.strip_prefix("--").filter(|f| !f.is_empty()) else {
            out.push(arg.clone());
            continue;
        };
        let (name, value) = match flag.split_once('=') {
            Some((n, v)) => (n, Some(v)),
            None => (flag, None),
        };
        let name = name.replace('_', "-");
        if !known.contains(&name) {
            if let Some((_, advice)) = UNSUPPORTED.iter().find(|(f, _)| *f == name) {
                return Err(UnsupportedFlag {
                    flag: name,
                    advice: (*advice).to_string(),
                });
            }
        }
        let mut rewritten = match value {
            Some(v) => format!("--{name}={v}"),
            None => format!("--{name}"),
        };
        let given = value.or_else(|| rest.peek().copied().and_then(|v| v.to_str()));
        match name.as_str() {
            "dataset-name" => vllm_random = given == Some("random"),
            "dataset" => vllm_random = false,
            "backend" => {
                openai_backend = matches!(given, Some("vllm" | "openai" | "openai-chat"));
            }
            "ignore-eos" => ignore_eos = true,
            _ => {}
        }
        if name == "backend" {
            match value {
                Some("vllm") => rewritten = "--backend=openai".into(),
                Some(_) => {}
                None => {
                    out.push(rewritten.into());
                    if let Some(v) = rest.next() {
                        out.push(if v == "vllm" {
                            "openai".into()
                        } else {
                            v.clone()
                        });
                    }
                    continue;
                }
            }
        }
        out.push(rewritten.into());
    }
    if vllm_random && openai_backend && !ignore_eos {
        out.push("--ignore-eos".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<OsString> {
        s.split_whitespace().map(OsString::from).collect()
    }

    #[test]
    fn vllm_spellings_are_rewritten_and_unsupported_flags_named() {
        let known: Vec<String> = ["random-input-len", "backend", "model", "top-p"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            translate(
                args("benchlens run --random_input_len 5 --backend vllm --model=a_b x_y"),
                &known
            )
            .unwrap(),
            args("benchlens run --random-input-len 5 --backend openai --model=a_b x_y")
        );
        assert_eq!(
            translate(args("benchlens run --backend=vllm"), &known).unwrap(),
            args("benchlens run --backend=openai")
        );
        let e = translate(
            args("benchlens run --prefix_repetition_suffix_len 9"),
            &known,
        )
        .unwrap_err();
        assert_eq!(e.flag, "prefix-repetition-suffix-len");
        assert!(e.to_string().contains("use --input-len"), "{e}");
        let e = translate(args("benchlens run --endpoint_type=openai"), &known).unwrap_err();
        assert!(e.to_string().contains("use --backend"), "{e}");
        let e = translate(args("benchlens run --temperature 0"), &known).unwrap_err();
        assert!(e.to_string().contains("--extra-body"), "{e}");
        // A flag benchlens knows under the same name is never rejected by the table.
        assert!(translate(args("benchlens run --top-p 0.5"), &known).is_ok());
        // vLLM's random dataset ignores EOS with OpenAI-style backends; benchlens's own
        // spelling, other datasets and other backends do not.
        let known: Vec<String> = ["dataset-name", "dataset", "backend", "ignore-eos", "model"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let t = |s: &str| translate(args(s), &known).unwrap();
        assert_eq!(
            t("benchlens run --dataset-name random --model m"),
            args("benchlens run --dataset-name random --model m --ignore-eos")
        );
        assert_eq!(
            t("benchlens run --dataset_name=random --backend vllm"),
            args("benchlens run --dataset-name=random --backend openai --ignore-eos")
        );
        for same in [
            "benchlens run --dataset random",
            "benchlens run --dataset-name sharegpt",
            "benchlens run --dataset-name random --ignore-eos",
            "benchlens run --dataset-name random --backend tgi",
        ] {
            assert_eq!(t(same), args(same), "{same}");
        }
        // Other subcommands pass unchanged, whatever their arguments say.
        let other = args("benchlens convert run --temperature");
        assert_eq!(translate(other.clone(), &known).unwrap(), other);
    }
}
