//! What a generation request asks for ([`Generation`]): which API, streamed or not, which usage
//! reports, how many prompt tokens (counted as words) and how many output tokens the mock will
//! send (all of `max_tokens` with `ignore_eos`, else a pseudo end-of-sequence chosen from the
//! prompt's hash between half of `max_tokens` and `max_tokens`).

use serde_json::Value;

/// Prompt tokens as whitespace-separated words (token-id arrays by their length).
fn count_words(v: &Value) -> u32 {
    match v {
        Value::String(s) => s.split_whitespace().count() as u32,
        // A list of token ids counts its ids; a list of strings or parts counts their words.
        Value::Array(items) if items.iter().all(Value::is_number) => items.len() as u32,
        Value::Array(items) => items.iter().map(count_words).sum(),
        Value::Object(o) => o
            .get("text")
            .or_else(|| o.get("content"))
            .map_or(0, count_words),
        _ => 0,
    }
}

/// The API a generation request came in through.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Api {
    /// OpenAI `/v1/completions`.
    Completions,
    /// OpenAI `/v1/chat/completions`.
    Chat,
    /// TGI `/generate_stream` (one token per event, no `[DONE]`).
    Tgi,
    /// SGLang `/generate` (cumulative text and counts per event, then `[DONE]`).
    Sglang,
}

/// What one generation request asks for, as the mock will answer it.
#[derive(Debug)]
pub(super) struct Generation {
    /// The API it came in through.
    pub(super) api: Api,
    /// Answer as an event stream (else one JSON body).
    pub(super) stream: bool,
    /// A final usage chunk (`stream_options.include_usage`).
    pub(super) include_usage: bool,
    /// Usage in every chunk (`stream_options.continuous_usage_stats`).
    pub(super) continuous_usage: bool,
    /// Prompt tokens, counted as words.
    pub(super) prompt_tokens: u32,
    /// Tokens the mock will generate.
    pub(super) completion_tokens: u32,
    /// Tokens asked for.
    pub(super) max_tokens: u32,
}

/// A generation request the mock cannot answer (a 400 whose message is this error's text).
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub(super) enum GenerationError {
    /// The API's prompt field is absent.
    #[error("missing {key}")]
    MissingPrompt {
        /// `prompt`, `messages`, `inputs` or `text`.
        key: &'static str,
    },
}

impl Generation {
    /// Reads a request body of `api`.
    pub(super) fn from_request(v: &Value, api: Api) -> Result<Generation, GenerationError> {
        let prompt_key = match api {
            Api::Completions => "prompt",
            Api::Chat => "messages",
            Api::Tgi => "inputs",
            Api::Sglang => "text",
        };
        let prompt = v
            .get(prompt_key)
            .ok_or(GenerationError::MissingPrompt { key: prompt_key })?;
        let prompt_tokens = count_words(prompt);
        let params = match api {
            Api::Tgi => v.get("parameters"),
            Api::Sglang => v.get("sampling_params"),
            _ => Some(v),
        };
        let param = |k: &str| params.and_then(|p| p.get(k));
        let max_tokens = param("max_completion_tokens")
            .filter(|_| api == Api::Chat)
            .or_else(|| param("max_tokens"))
            .or_else(|| param("max_new_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(16)
            .min(1_000_000) as u32;
        let ignore_eos = param("ignore_eos")
            .and_then(Value::as_bool)
            .unwrap_or(false);
        let completion_tokens = if ignore_eos || max_tokens < 2 {
            max_tokens
        } else {
            // Deterministic pseudo-EOS: the same prompt always ends at the same length.
            let h = fnv1a(prompt.to_string().as_bytes());
            let half = max_tokens.div_ceil(2);
            half + (h % u64::from(max_tokens - half + 1)) as u32
        };
        let opts = v.get("stream_options");
        let flag = |k: &str| {
            opts.and_then(|o| o.get(k))
                .and_then(Value::as_bool)
                .unwrap_or(false)
        };
        Ok(Generation {
            api,
            // TGI's /generate_stream always streams.
            stream: api == Api::Tgi || v.get("stream").and_then(Value::as_bool).unwrap_or(false),
            include_usage: flag("include_usage"),
            continuous_usage: flag("continuous_usage_stats"),
            prompt_tokens,
            completion_tokens,
            max_tokens,
        })
    }

    /// `length` when it generates all it was allowed, else `stop`.
    pub(super) fn finish_reason(&self) -> &'static str {
        if self.completion_tokens >= self.max_tokens {
            "length"
        } else {
            "stop"
        }
    }
}

/// FNV-1a: a fixed hash, so a prompt's pseudo end-of-sequence is the same on every run.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn word_counting_covers_prompt_shapes() {
        assert_eq!(count_words(&json!("a b  c")), 3);
        assert_eq!(count_words(&json!([1, 2, 3, 4])), 4);
        assert_eq!(
            count_words(
                &json!([{"role": "user", "content": "x y"}, {"role": "system", "content": [{"type": "text", "text": "z"}]}])
            ),
            3
        );
    }

    #[test]
    fn eos_is_honoured_unless_ignored() {
        let g = Generation::from_request(
            &json!({"prompt": "hi there", "max_tokens": 100, "ignore_eos": true}),
            Api::Completions,
        )
        .unwrap();
        assert_eq!(g.completion_tokens, 100);
        let g = Generation::from_request(
            &json!({"prompt": "hi there", "max_tokens": 100}),
            Api::Completions,
        )
        .unwrap();
        assert!((50..=100).contains(&g.completion_tokens));
        let missing = Generation::from_request(&json!({"max_tokens": 3}), Api::Completions);
        // The 400 body's message, as clients saw it before.
        assert_eq!(missing.unwrap_err().to_string(), "missing prompt");
        let missing = Generation::from_request(&json!({"prompt": "x"}), Api::Chat);
        assert_eq!(
            missing.unwrap_err(),
            GenerationError::MissingPrompt { key: "messages" }
        );
        let g = Generation::from_request(
            &json!({"text": "a b c", "sampling_params": {"max_new_tokens": 7, "ignore_eos": true}}),
            Api::Sglang,
        )
        .unwrap();
        assert_eq!((g.prompt_tokens, g.completion_tokens), (3, 7));
        let g = Generation::from_request(
            &json!({"inputs": "a b", "parameters": {"max_new_tokens": 5}}),
            Api::Tgi,
        )
        .unwrap();
        assert!(g.stream && g.prompt_tokens == 2 && (3..=5).contains(&g.completion_tokens));
    }
}
