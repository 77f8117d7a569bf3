//! Engine and GPU words: the names recognised in headings, console context lines and
//! wide-table column suffixes (`throughput_a100`).

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
        assert_eq!(gpu_display("a100"), "A100");
        assert_eq!(gpu_display("tesla"), "Tesla");
    }
}
