//! Engine and GPU words: the names recognised in headings, console context lines, file names
//! and wide-table column suffixes (`throughput_a100`).

/// The one list of engines: the one spelling of each, and the other spellings people give it
/// (compared with case, `-`, `_`, `.` and spaces ignored): `TRT-LLM`, `trt-llm`,
/// `TensorRT-LLM`, `trtllm` and a file name's `trt` are one engine, `trtllm`. Recognising an
/// engine's name (in headings, console context lines, wide tables' column groups and file
/// names) is finding it here ([`is_engine`]). `sgl`, as SGLang's own reports name their
/// engine, is not a spelling of `sglang`: files, exports and share links (`f.engine=sgl`)
/// written before keep reading the same, so it is kept as written and not recognised.
const ENGINE_SPELLINGS: &[(&str, &[&str])] = &[
    ("vllm", &["vllm"]),
    ("sglang", &["sglang"]),
    ("trtllm", &["trtllm", "tensorrtllm", "trt"]),
    ("tgi", &["tgi", "textgenerationinference"]),
    ("lmdeploy", &["lmdeploy"]),
    ("llama.cpp", &["llamacpp"]),
    ("mlc-llm", &["mlcllm"]),
    ("deepspeed-mii", &["deepspeedmii"]),
    ("ollama", &["ollama"]),
    ("aphrodite", &["aphrodite"]),
    ("exllamav2", &["exllamav2"]),
];

/// The canonical spelling of a known engine's name (`TRT-LLM` → `trtllm`, `vLLM` → `vllm`),
/// `None` for a name it does not know (kept as written). Every engine a reader finds goes
/// through it ([`crate::ingest`]'s stamping), so one engine is one series whatever table,
/// heading or file name spelled it.
pub(crate) fn canonical_engine(name: &str) -> Option<&'static str> {
    let key: String = name
        .chars()
        .filter(|c| !matches!(c, '-' | '_' | '.' | ' '))
        .map(|c| c.to_ascii_lowercase())
        .collect();
    ENGINE_SPELLINGS
        .iter()
        .find(|(_, spellings)| spellings.contains(&key.as_str()))
        .map(|(canonical, _)| *canonical)
}

/// Whether `word` names a known engine, in any of its spellings ([`canonical_engine`]).
pub(crate) fn is_engine(word: &str) -> bool {
    canonical_engine(word).is_some()
}

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
pub(super) fn gpu_display(suffix: &str) -> String {
    if suffix.bytes().any(|b| b.is_ascii_digit()) {
        suffix.to_ascii_uppercase()
    } else {
        crate::model::capitalized(suffix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gpu_words() {
        for w in ["a100", "H100", "mi300x", "tesla", "L40S", "a10g", "B200"] {
            assert!(is_gpu_word(w), "{w}");
        }
        for w in ["mean", "p99", "ms", "l", "total", "batch"] {
            assert!(!is_gpu_word(w), "{w}");
        }
        for name in [
            "TRT-LLM",
            "trt-llm",
            "TensorRT-LLM",
            "trtllm",
            "tensorrt_llm",
        ] {
            assert_eq!(canonical_engine(name), Some("trtllm"), "{name}");
        }
        assert_eq!(canonical_engine("vLLM"), Some("vllm"));
        assert_eq!(canonical_engine("Llama.cpp"), Some("llama.cpp"));
        assert_eq!(canonical_engine("text-generation-inference"), Some("tgi"));
        assert_eq!(canonical_engine("groq"), None);
        assert_eq!(canonical_engine("sgl"), None);
        assert_eq!(canonical_engine("trt"), Some("trtllm"));
        assert!(is_engine("Text-Generation-Inference") && is_engine("llama.cpp"));
        assert!(!is_engine("H100"));
        assert_eq!(gpu_display("a100"), "A100");
        assert_eq!(gpu_display("tesla"), "Tesla");
    }
}
