//! Prompt datasets: `random` (vLLM's random dataset: lengths drawn uniformly within
//! `±range_ratio` of the asked length, an optional shared prefix), `jsonl` (one
//! `{"prompt", "output_len"?}` object per line) and `sharegpt` (first human turn as the prompt,
//! the reply's length as the output length), and `trace` (a production trace's lengths, see
//! [`trace_prompts`]).
//!
//! Lengths are counted with the chosen [`Tokenizer`] (a built-in BPE by default) the way vLLM
//! counts them, special tokens included ([`Tokenizer::count_prompt`]): a prompt's length is what
//! the server's tokenizer makes of it. Random prompts have exactly the asked number of tokens
//! that way: with a tokenizer that adds a BOS token, `--input-len 100` is 99 random tokens plus
//! the BOS (vLLM's random dataset does the same). Never downloads anything. Must not import app
//! code.

use std::path::Path;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::Value;

use super::tokenizer::Tokenizer;
use super::trace::TraceRequest;
use super::{DatasetError, LoadgenError};

/// One prompt to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Prompt {
    /// The prompt text.
    pub text: String,
    /// Its length in tokens, special tokens included (see the module doc).
    pub input_len: u64,
    /// Output tokens to ask for.
    pub output_len: u64,
}

/// Options of the random dataset.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RandomSpec {
    /// Mean input tokens (excluding the prefix).
    pub input_len: u64,
    /// Mean output tokens.
    pub output_len: u64,
    /// Lengths are uniform in `[len·(1−r), len·(1+r)]`.
    pub range_ratio: f64,
    /// Tokens of the prefix the prompts of a group share.
    pub prefix_len: u64,
    /// How many different prefixes (groups); 1 = every prompt shares one.
    pub prefix_groups: u64,
    /// In which order the groups' prompts are sent.
    pub prefix_order: PrefixOrder,
}

/// The order in which prompts of several prefix groups are sent: what a prefix cache sees.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum PrefixOrder {
    /// Each group's prompts one after another: cache-friendly, a prefix is reused at once.
    #[default]
    Grouped,
    /// Round-robin over the groups: cache-hostile, a prefix comes back only after every other
    /// group's (with more groups than the cache holds, it is gone by then).
    Interleaved,
    /// Seeded random order (as vLLM's prefix-repetition dataset).
    Shuffled,
}

/// The prefix group of prompt `i` of `count` among `groups`.
fn group_of(i: usize, count: usize, groups: usize, order: PrefixOrder, perm: &[usize]) -> usize {
    match order {
        PrefixOrder::Grouped => i * groups / count.max(1),
        PrefixOrder::Interleaved => i % groups,
        PrefixOrder::Shuffled => perm[i] * groups / count.max(1),
    }
}

fn length_range(len: u64, ratio: f64) -> (u64, u64) {
    let lo = (len as f64 * (1.0 - ratio)).floor().max(0.0) as u64;
    let hi = (len as f64 * (1.0 + ratio)).floor() as u64;
    (lo, hi.max(lo))
}

/// `count` random prompts, reproducible from `seed`, of exact lengths in `tok`'s tokens: the
/// prefix, then random tokens, then the special tokens the tokenizer adds make `prefix_len` +
/// a length drawn around `input_len` (as vLLM: the random part is drawn around `input_len`
/// less the special tokens).
pub fn random(spec: RandomSpec, count: usize, seed: u64, tok: &Tokenizer) -> Vec<Prompt> {
    let mut rng = StdRng::seed_from_u64(seed);
    let groups = spec.prefix_groups.max(1) as usize;
    let prefixes: Vec<String> = (0..groups)
        .map(|_| tok.random_text(&mut rng, "", spec.prefix_len).0)
        .collect();
    let mut perm: Vec<usize> = (0..count).collect();
    if spec.prefix_order == PrefixOrder::Shuffled {
        use rand::seq::SliceRandom;
        perm.shuffle(&mut StdRng::seed_from_u64(seed ^ PRIME));
    }
    let real_input_len = spec.input_len.saturating_sub(tok.special_tokens());
    let (in_lo, in_hi) = length_range(real_input_len, spec.range_ratio);
    let (out_lo, out_hi) = length_range(spec.output_len, spec.range_ratio);
    (0..count)
        .map(|i| {
            let prefix = &prefixes[group_of(i, count, groups, spec.prefix_order, &perm)];
            let n_in = rng.random_range(in_lo..=in_hi);
            let n_out = rng.random_range(out_lo..=out_hi).max(1);
            let (text, plain) = tok.random_text(&mut rng, prefix, n_in);
            Prompt {
                // Only a tokenizer.json adds special tokens: the others need no second count.
                input_len: match tok {
                    Tokenizer::Hf { .. } => tok.count_prompt(&text),
                    _ => plain,
                },
                text,
                output_len: n_out,
            }
        })
        .collect()
}

fn dataset_error(path: &Path, source: DatasetError) -> LoadgenError {
    LoadgenError::Dataset {
        path: path.to_path_buf(),
        source,
    }
}

/// Prompts from a JSON Lines file: each line an object with `prompt` (or `text`) and optionally
/// `output_len` (or `max_tokens`); `default_output_len` fills the gap.
pub fn jsonl(
    path: &Path,
    text: &str,
    default_output_len: u64,
    tok: &Tokenizer,
) -> Result<Vec<Prompt>, LoadgenError> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let v: Value = serde_json::from_str(line).map_err(|source| {
            dataset_error(
                path,
                DatasetError::LineNotJson {
                    line: i + 1,
                    source,
                },
            )
        })?;
        let prompt = v
            .get("prompt")
            .or_else(|| v.get("text"))
            .and_then(Value::as_str)
            .ok_or_else(|| dataset_error(path, DatasetError::NoPrompt { line: i + 1 }))?;
        let output_len = v
            .get("output_len")
            .or_else(|| v.get("max_tokens"))
            .and_then(Value::as_u64)
            .unwrap_or(default_output_len)
            .max(1);
        out.push(Prompt {
            text: prompt.to_string(),
            input_len: tok.count_prompt(prompt),
            output_len,
        });
    }
    if out.is_empty() {
        return Err(dataset_error(path, DatasetError::NoPrompts));
    }
    Ok(out)
}

/// Prompts from a ShareGPT JSON file: the first human turn of each conversation with at least
/// two turns; the output length is the reply's length unless `output_len` overrides it.
/// Conversations shorter than 4 tokens either way are skipped, as vLLM does. Both lengths are
/// counted as vLLM counts them, special tokens included.
pub fn sharegpt(
    path: &Path,
    text: &str,
    output_len: Option<u64>,
    tok: &Tokenizer,
) -> Result<Vec<Prompt>, LoadgenError> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| dataset_error(path, DatasetError::NotJson(e)))?;
    let items = v
        .as_array()
        .ok_or_else(|| dataset_error(path, DatasetError::NotAnArray))?;
    let mut out = Vec::new();
    for item in items {
        let Some(turns) = item.get("conversations").and_then(Value::as_array) else {
            continue;
        };
        let value = |i: usize| {
            turns
                .get(i)
                .and_then(|t| t.get("value"))
                .and_then(Value::as_str)
        };
        let (Some(prompt), Some(reply)) = (value(0), value(1)) else {
            continue;
        };
        let (n_in, n_out) = (tok.count_prompt(prompt), tok.count_prompt(reply));
        if n_in < 4 || (output_len.is_none() && n_out < 4) {
            continue;
        }
        out.push(Prompt {
            text: prompt.to_string(),
            input_len: n_in,
            output_len: output_len.unwrap_or(n_out).max(1),
        });
    }
    if out.is_empty() {
        return Err(dataset_error(path, DatasetError::NoUsableConversations));
    }
    Ok(out)
}

/// Prompts for a trace's requests, of its exact input lengths (special tokens included, as for
/// [`random`]) and output lengths. Requests with Mooncake `hash_ids` share their prompt text
/// block by block: block `j` of a prompt is `block_tokens` tokens (the last block what is left),
/// drawn from a generator seeded by `seed` and the block's id, so two requests whose ids agree
/// up to a point send the same text up to there — a prefix cache sees the trace's reuse. The
/// ids chain (an id stands for its whole prefix), so a block's text is made once, after its
/// prefix, and reused verbatim.
pub fn trace_prompts(
    requests: &[TraceRequest],
    block_tokens: u64,
    seed: u64,
    tok: &Tokenizer,
) -> Vec<Prompt> {
    let mut blocks: std::collections::HashMap<(u64, u64), String> = Default::default();
    let specials = tok.special_tokens();
    requests
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let want = r.input_len.saturating_sub(specials);
            let mut text = String::new();
            if r.hash_ids.is_empty() || block_tokens == 0 {
                let mut rng = StdRng::seed_from_u64(seed ^ (i as u64).wrapping_mul(PRIME));
                text = tok.random_text(&mut rng, "", want).0;
            } else {
                let mut left = want;
                let last = r.hash_ids.len() - 1;
                for (j, &id) in r.hash_ids.iter().enumerate() {
                    if left == 0 {
                        break;
                    }
                    let len = if j == last {
                        left
                    } else {
                        block_tokens.min(left)
                    };
                    left -= len;
                    let piece = blocks.entry((id, len)).or_insert_with(|| {
                        let mut rng = StdRng::seed_from_u64(seed ^ id.wrapping_mul(PRIME));
                        let (grown, _) = tok.random_text(&mut rng, &text, len);
                        grown[text.len()..].to_string()
                    });
                    text.push_str(piece);
                }
            }
            Prompt {
                input_len: tok.count_prompt(&text),
                text,
                output_len: r.output_len.max(1),
            }
        })
        .collect()
}

/// Odd constant mixing ids into seeds (2^64 / golden ratio), so neighbouring ids get unrelated
/// generators.
const PRIME: u64 = 0x9E37_79B9_7F4A_7C15;

#[cfg(test)]
mod tests {
    use super::*;

    fn traced(input_len: u64, hash_ids: Vec<u64>) -> TraceRequest {
        TraceRequest {
            at_s: 0.0,
            input_len,
            output_len: 7,
            hash_ids,
        }
    }

    #[test]
    fn prefix_groups_in_cache_friendly_and_hostile_orders() {
        let tok = Tokenizer::from_name("words").unwrap();
        let spec = |prefix_order| RandomSpec {
            input_len: 10,
            output_len: 4,
            range_ratio: 0.0,
            prefix_len: 6,
            prefix_groups: 3,
            prefix_order,
        };
        let prefix = |p: &Prompt| p.text.split(' ').take(6).collect::<Vec<_>>().join(" ");
        let groups = |order| {
            let ps = random(spec(order), 9, 4, &tok);
            assert!(
                ps.iter().all(|p| p.input_len == 16),
                "prefix plus 10 tokens each"
            );
            let mut seen: Vec<String> = Vec::new();
            ps.iter()
                .map(|p| {
                    let x = prefix(p);
                    seen.iter().position(|s| *s == x).unwrap_or_else(|| {
                        seen.push(x);
                        seen.len() - 1
                    })
                })
                .collect::<Vec<usize>>()
        };
        assert_eq!(
            groups(PrefixOrder::Grouped),
            vec![0, 0, 0, 1, 1, 1, 2, 2, 2]
        );
        assert_eq!(
            groups(PrefixOrder::Interleaved),
            vec![0, 1, 2, 0, 1, 2, 0, 1, 2]
        );
        let shuffled = groups(PrefixOrder::Shuffled);
        for g in 0..3 {
            assert_eq!(
                shuffled.iter().filter(|&&x| x == g).count(),
                3,
                "{shuffled:?}"
            );
        }
    }

    #[test]
    fn trace_prompts_have_exact_lengths_and_share_blocks() {
        for name in ["words", "cl100k_base"] {
            let tok = Tokenizer::from_name(name).unwrap();
            let reqs = vec![
                traced(70, vec![0, 1, 2]),
                traced(80, vec![0, 1, 3]),
                traced(12, vec![]),
                traced(64, vec![0, 9]),
            ];
            let p = trace_prompts(&reqs, 32, 5, &tok);
            let lens: Vec<u64> = p.iter().map(|p| p.input_len).collect();
            assert_eq!(lens, vec![70, 80, 12, 64], "{name}");
            assert!(p.iter().all(|p| p.output_len == 7));
            // Blocks 0 and 1 (64 tokens) are the same text in the first two prompts.
            let common = p[0]
                .text
                .bytes()
                .zip(p[1].text.bytes())
                .take_while(|(a, b)| a == b)
                .count();
            let shared_block = &p[0].text[..common];
            assert!(
                tok.count(shared_block) >= 63,
                "{name}: {}",
                tok.count(shared_block)
            );
            // Every prompt with id 0 first starts with block 0's text, made alone.
            let block0 = &trace_prompts(&[traced(32, vec![0])], 32, 5, &tok)[0].text;
            assert!(
                p[0].text.starts_with(block0.as_str()) && p[3].text.starts_with(block0.as_str())
            );
            assert!(!p[2].text.starts_with(block0.as_str()));
            assert_eq!(p, trace_prompts(&reqs, 32, 5, &tok), "seeded");
        }
    }

    #[test]
    fn random_prompts_have_exact_lengths_within_range() {
        let tok = Tokenizer::from_name("cl100k_base").unwrap();
        let spec = RandomSpec {
            input_len: 100,
            output_len: 20,
            range_ratio: 0.5,
            prefix_len: 7,
            prefix_groups: 1,
            prefix_order: PrefixOrder::Grouped,
        };
        let ps = random(spec, 200, 1, &tok);
        assert_eq!(ps, random(spec, 200, 1, &tok));
        let prefix: Vec<&str> = ps[0].text.split_whitespace().take(7).collect();
        for p in &ps {
            assert_eq!(tok.count(&p.text), p.input_len);
            assert!((57..=157).contains(&p.input_len), "{}", p.input_len);
            assert!((10..=30).contains(&p.output_len));
            assert_eq!(
                p.text.split_whitespace().take(7).collect::<Vec<_>>(),
                prefix
            );
        }
        let fixed = random(
            RandomSpec {
                range_ratio: 0.0,
                prefix_len: 0,
                ..spec
            },
            5,
            2,
            &tok,
        );
        assert!(fixed
            .iter()
            .all(|p| p.input_len == 100 && p.output_len == 20));
    }

    #[test]
    fn jsonl_and_sharegpt_are_read_and_errors_name_the_line() {
        let p = Path::new("x.jsonl");
        let ps = jsonl(
            p,
            "{\"prompt\": \"a b c\", \"output_len\": 9}\n\n{\"text\": \"d\"}\n",
            5,
            &Tokenizer::Words,
        )
        .unwrap();
        assert_eq!(
            (ps[0].input_len, ps[0].output_len, ps[1].output_len),
            (3, 9, 5)
        );
        let e = jsonl(p, "{\"prompt\": 1}\n", 5, &Tokenizer::Words).unwrap_err();
        let chain = format!("{:#}", anyhow::Error::from(e));
        assert_eq!(chain, "dataset x.jsonl: line 1: no string \"prompt\"");
        let e = jsonl(p, "{\"prompt\": \"a\"}\n{oops\n", 5, &Tokenizer::Words).unwrap_err();
        let chain = format!("{:#}", anyhow::Error::from(e));
        assert!(
            chain.starts_with("dataset x.jsonl: line 2: key must be a string"),
            "{chain}"
        );
        let sg = r#"[{"conversations":[{"from":"human","value":"one two three four"},{"from":"gpt","value":"a b c d e"}]},
                     {"conversations":[{"from":"human","value":"too short"},{"from":"gpt","value":"a b c d"}]}]"#;
        let ps = sharegpt(Path::new("s.json"), sg, None, &Tokenizer::Words).unwrap();
        assert_eq!(ps.len(), 1);
        assert_eq!((ps[0].input_len, ps[0].output_len), (4, 5));
        let e = sharegpt(Path::new("s.json"), "{}", None, &Tokenizer::Words).unwrap_err();
        assert!(matches!(
            e,
            LoadgenError::Dataset {
                source: DatasetError::NotAnArray,
                ..
            }
        ));
    }
}
