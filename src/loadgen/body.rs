//! What a generation request carries: the JSON body for each [`Backend`]'s API, the sampling
//! settings that go into it ([`Sampling`], only what is set), and `--extra-body` applied last as
//! a JSON Merge Patch ([`merge_patch`]). Bodies are serialised once, before the run, so the
//! measured path only copies bytes. Must not import app code.

use bytes::Bytes;
use serde_json::{json, Map, Value};

use super::client::Backend;

/// Sampling settings of every request. Only what is set is sent: a server that checks its
/// request schema strictly rejects keys it does not know (`422 Unexpected fields`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sampling {
    /// Ask the server to generate the full length (`ignore_eos: true`); sent only when true, as
    /// vLLM's client does. OpenAI-compatible backends: top-level `ignore_eos` (vLLM, SGLang,
    /// llama.cpp, TensorRT-LLM read it; TGI, Ollama and `transformers serve` do not). SGLang
    /// native: `sampling_params.ignore_eos`. TGI native has no such parameter: nothing is sent.
    pub ignore_eos: bool,
    /// `temperature`.
    pub temperature: Option<f64>,
    /// `top_p`.
    pub top_p: Option<f64>,
    /// `top_k`.
    pub top_k: Option<i64>,
    /// `min_p`.
    pub min_p: Option<f64>,
    /// `repetition_penalty`.
    pub repetition_penalty: Option<f64>,
    /// `frequency_penalty`.
    pub frequency_penalty: Option<f64>,
    /// `presence_penalty`.
    pub presence_penalty: Option<f64>,
}

impl Sampling {
    /// The keys that are set, in the request's JSON.
    fn keys(&self, with_ignore_eos: bool) -> Map<String, Value> {
        let mut m = Map::new();
        if self.ignore_eos && with_ignore_eos {
            m.insert("ignore_eos".into(), Value::Bool(true));
        }
        let floats = [
            ("temperature", self.temperature),
            ("top_p", self.top_p),
            ("min_p", self.min_p),
            ("repetition_penalty", self.repetition_penalty),
            ("frequency_penalty", self.frequency_penalty),
            ("presence_penalty", self.presence_penalty),
        ];
        for (k, v) in floats {
            if let Some(v) = v {
                m.insert(k.into(), json!(v));
            }
        }
        if let Some(k) = self.top_k {
            m.insert("top_k".into(), json!(k));
        }
        m
    }
}

/// Applies `patch` to `target` as a JSON Merge Patch (RFC 7396): objects merge key by key, a
/// `null` removes the key, anything else replaces the value.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(obj) = target {
        for (k, v) in patch {
            if v.is_null() {
                obj.remove(k);
            } else {
                merge_patch(obj.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// Builds the JSON body of one request for a backend. `extra` (`--extra-body`) is applied last
/// as a JSON Merge Patch: it adds or replaces any key, nested ones too, and a `null` removes one
/// (`{"stream_options": {"continuous_usage_stats": null}}`, `{"max_tokens": null}`).
pub fn request_body(
    backend: Backend,
    model: &str,
    prompt: &str,
    max_tokens: u64,
    sampling: &Sampling,
    extra: Option<&Map<String, Value>>,
) -> Bytes {
    let prompt = match backend {
        Backend::OpenAiChat => json!([{"role": "user", "content": prompt}]),
        _ => json!(prompt),
    };
    body_of(backend, model, prompt, max_tokens, sampling, extra)
}

/// [`request_body`] for a prompt given as chat messages, `(role, content)` pairs: sent as
/// `messages` to `openai-chat`, and to the other backends as their contents joined by
/// `separator` (those APIs take one text).
pub fn messages_body(
    backend: Backend,
    model: &str,
    messages: &[(&str, &str)],
    separator: &str,
    max_tokens: u64,
    sampling: &Sampling,
    extra: Option<&Map<String, Value>>,
) -> Bytes {
    let prompt = match backend {
        Backend::OpenAiChat => Value::Array(
            messages
                .iter()
                .map(|(role, content)| json!({"role": role, "content": content}))
                .collect(),
        ),
        _ => json!(messages
            .iter()
            .map(|(_, c)| *c)
            .collect::<Vec<_>>()
            .join(separator)),
    };
    body_of(backend, model, prompt, max_tokens, sampling, extra)
}

/// The body with `prompt` in the backend's prompt field (`messages` for chat, a string
/// elsewhere).
fn body_of(
    backend: Backend,
    model: &str,
    prompt: Value,
    max_tokens: u64,
    sampling: &Sampling,
    extra: Option<&Map<String, Value>>,
) -> Bytes {
    let stream_options = json!({"include_usage": true, "continuous_usage_stats": true});
    let mut body = match backend {
        Backend::OpenAi => json!({
            "model": model, "prompt": prompt, "max_tokens": max_tokens,
            "stream": true, "stream_options": stream_options,
        }),
        // Servers read one or the other: OpenAI's current name and the older one.
        Backend::OpenAiChat => json!({
            "model": model, "messages": prompt,
            "max_completion_tokens": max_tokens, "max_tokens": max_tokens,
            "stream": true, "stream_options": stream_options,
        }),
        Backend::Tgi => json!({
            "inputs": prompt,
            "parameters": {"max_new_tokens": max_tokens, "details": true, "decoder_input_details": false},
        }),
        Backend::Sglang => json!({
            "text": prompt, "stream": true,
            "sampling_params": {"max_new_tokens": max_tokens},
        }),
    };
    let (place, with_eos) = match backend {
        Backend::OpenAi | Backend::OpenAiChat => (None, true),
        Backend::Tgi => (Some("parameters"), false),
        Backend::Sglang => (Some("sampling_params"), true),
    };
    let keys = Value::Object(sampling.keys(with_eos));
    match place {
        None => merge_patch(&mut body, &keys),
        Some(k) => merge_patch(&mut body, &json!({ k: keys })),
    }
    if let Some(extra) = extra {
        merge_patch(&mut body, &Value::Object(extra.clone()));
    }
    // Copied out of the serialiser's doubling buffer: a run holds every body until it ends,
    // each in a block of its own length rather than up to twice that.
    Bytes::copy_from_slice(body.to_string().as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(backend: Backend, sampling: &Sampling, extra: &str) -> Value {
        let extra: Option<Map<String, Value>> = serde_json::from_str(extra).ok();
        let b = request_body(backend, "m", "hi", 8, sampling, extra.as_ref());
        serde_json::from_slice(&b).unwrap()
    }

    #[test]
    fn extra_body_overrides_adds_and_removes_keys() {
        let v = body(
            Backend::OpenAi,
            &Sampling::default(),
            r#"{"temperature": 0.7, "top_k": 5, "stream_options": {"continuous_usage_stats": null}}"#,
        );
        assert_eq!(v["temperature"], 0.7);
        assert_eq!(v["top_k"], 5);
        // Nested keys merge: include_usage stays, the removed one is gone.
        assert_eq!(v["stream_options"], json!({"include_usage": true}));
        assert_eq!(v["max_tokens"], 8);
        let v = body(
            Backend::OpenAiChat,
            &Sampling::default(),
            r#"{"max_tokens": null}"#,
        );
        assert!(v.get("max_tokens").is_none());
        assert_eq!(v["max_completion_tokens"], 8);
        let eos = Sampling {
            ignore_eos: true,
            ..Sampling::default()
        };
        let v = body(
            Backend::Sglang,
            &eos,
            r#"{"sampling_params": {"ignore_eos": null, "temperature": 0}}"#,
        );
        assert_eq!(
            v["sampling_params"],
            json!({"max_new_tokens": 8, "temperature": 0})
        );
    }

    #[test]
    fn bodies_carry_only_what_was_asked_for() {
        let plain = Sampling::default();
        let v = body(Backend::OpenAi, &plain, "");
        let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
        keys.sort_unstable();
        assert_eq!(
            keys,
            ["max_tokens", "model", "prompt", "stream", "stream_options"]
        );
        let v = body(Backend::OpenAiChat, &plain, "");
        assert_eq!(
            (
                v["max_completion_tokens"].as_u64(),
                v["max_tokens"].as_u64()
            ),
            (Some(8), Some(8))
        );
        assert!(v.get("ignore_eos").is_none() && v.get("temperature").is_none());
        let set = Sampling {
            ignore_eos: true,
            temperature: Some(0.0),
            repetition_penalty: Some(1.1),
            top_k: Some(3),
            ..Sampling::default()
        };
        let v = body(Backend::OpenAiChat, &set, "");
        assert_eq!(v["ignore_eos"], true);
        assert_eq!(v["temperature"], 0.0);
        assert_eq!(v["repetition_penalty"], 1.1);
        assert_eq!(v["top_k"], 3);
        assert!(v.get("top_p").is_none());
        let v = body(Backend::Sglang, &set, "");
        assert_eq!(v["sampling_params"]["ignore_eos"], true);
        assert!(v.get("ignore_eos").is_none());
        let v = body(Backend::Sglang, &plain, "");
        assert_eq!(v["sampling_params"], json!({"max_new_tokens": 8}));
        // TGI has no ignore_eos parameter.
        let v = body(Backend::Tgi, &set, "");
        assert!(v["parameters"].get("ignore_eos").is_none());
        assert_eq!(v["parameters"]["temperature"], 0.0);
    }

    #[test]
    fn a_conversation_is_messages_for_chat_and_one_text_elsewhere() {
        let history = [("user", "a b"), ("assistant", "c"), ("user", "d")];
        let parse = |b: Bytes| serde_json::from_slice::<Value>(&b).unwrap();
        let plain = Sampling::default();
        let v = parse(messages_body(
            Backend::OpenAiChat,
            "m",
            &history,
            "\n",
            4,
            &plain,
            None,
        ));
        assert_eq!(
            v["messages"],
            json!([{"role": "user", "content": "a b"}, {"role": "assistant", "content": "c"},
                   {"role": "user", "content": "d"}])
        );
        let v = parse(messages_body(
            Backend::OpenAi,
            "m",
            &history,
            "\n",
            4,
            &plain,
            None,
        ));
        assert_eq!(v["prompt"], "a b\nc\nd");
        let v = parse(messages_body(
            Backend::Sglang,
            "m",
            &history,
            "\n",
            4,
            &plain,
            None,
        ));
        assert_eq!(v["text"], "a b\nc\nd");
        assert_eq!(
            body(Backend::OpenAiChat, &plain, "")["messages"],
            json!([{"role": "user", "content": "hi"}])
        );
    }

    #[test]
    fn merge_patch_follows_rfc_7396() {
        // RFC 7396, section 3's example.
        let mut target = json!({"a": "b", "c": {"d": "e", "f": "g"}});
        merge_patch(&mut target, &json!({"a": "z", "c": {"f": null}}));
        assert_eq!(target, json!({"a": "z", "c": {"d": "e"}}));
        let mut t = json!({"a": 1});
        merge_patch(&mut t, &json!({"a": {"b": null, "c": 2}}));
        assert_eq!(t, json!({"a": {"c": 2}}));
    }
}
