//! Multi-turn conversations (`--multi-turn`): the conversations a run replays turn by turn
//! (ShareGPT's, or synthetic ones whose turns, lengths and think times follow [`Dist`]s), the
//! prompt each turn sends (the history: earlier user turns and the replies actually received,
//! then the new user text) and the client's token count of that prompt.
//!
//! Every new user text is exact in the chosen tokenizer's tokens (the first turn's special
//! tokens included, as single-turn prompts, see [`super::dataset`]). Everything is drawn from
//! the seed, so the same options give the same conversations. Must not import app code.

use std::collections::HashMap;
use std::fmt;
use std::path::Path;
use std::str::FromStr;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, Exp};
use serde_json::Value;

use super::record::RequestRecord;
use super::tokenizer::Tokenizer;
use super::{DatasetError, LoadgenError};

/// A quantity drawn per conversation or per turn: `N` (constant), `uniform:MIN:MAX`
/// (both ends included) or `exponential:MEAN`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Dist {
    /// Always this value.
    Constant(f64),
    /// Uniform between the two values, both included.
    Uniform {
        /// Smallest value.
        min: f64,
        /// Largest value.
        max: f64,
    },
    /// Exponential with this mean (think times: mostly short, sometimes long).
    Exponential {
        /// The mean.
        mean: f64,
    },
}

/// Why a [`Dist`] could not be read.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum DistError {
    /// Not one of the three forms.
    #[error("{0:?} is not N, uniform:MIN:MAX or exponential:MEAN")]
    Form(String),
    /// A number that is negative, not finite, or a range upside down.
    #[error("{0:?}: values must be finite, at least 0, and MIN at most MAX")]
    Range(String),
}

impl FromStr for Dist {
    type Err = DistError;

    fn from_str(s: &str) -> Result<Dist, DistError> {
        let form = || DistError::Form(s.to_string());
        let num = |t: &str| t.trim().parse::<f64>().map_err(|_| form());
        let parts: Vec<&str> = s.trim().split(':').collect();
        let d = match parts.as_slice() {
            [v] => Dist::Constant(num(v)?),
            ["uniform", a, b] => Dist::Uniform {
                min: num(a)?,
                max: num(b)?,
            },
            ["exponential", m] => Dist::Exponential { mean: num(m)? },
            _ => return Err(form()),
        };
        let ok = |x: f64| x.is_finite() && x >= 0.0;
        let valid = match d {
            Dist::Constant(v) => ok(v),
            Dist::Uniform { min, max } => ok(min) && ok(max) && min <= max,
            Dist::Exponential { mean } => ok(mean),
        };
        if valid {
            Ok(d)
        } else {
            Err(DistError::Range(s.to_string()))
        }
    }
}

impl fmt::Display for Dist {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dist::Constant(v) => write!(f, "{v}"),
            Dist::Uniform { min, max } => write!(f, "uniform:{min}:{max}"),
            Dist::Exponential { mean } => write!(f, "exponential:{mean}"),
        }
    }
}

impl Dist {
    /// One draw.
    pub fn sample(&self, rng: &mut StdRng) -> f64 {
        match *self {
            Dist::Constant(v) => v,
            Dist::Uniform { min, max } if min == max => min,
            Dist::Uniform { min, max } => rng.random_range(min..=max),
            Dist::Exponential { mean: 0.0 } => 0.0,
            Dist::Exponential { mean } => Exp::new(1.0 / mean).map_or(mean, |e| e.sample(rng)),
        }
    }

    /// One draw rounded to a whole count (a uniform range's ends equally likely as the rest).
    pub fn sample_count(&self, rng: &mut StdRng) -> u64 {
        match *self {
            Dist::Uniform { min, max } => {
                let (lo, hi) = (min.ceil() as u64, max.floor() as u64);
                rng.random_range(lo..=hi.max(lo))
            }
            _ => self.sample(rng).round() as u64,
        }
    }
}

/// One user turn of a conversation.
#[derive(Clone, Debug, PartialEq)]
pub struct Turn {
    /// The user's new text.
    pub text: String,
    /// Its tokens (the first turn's with the tokenizer's special tokens, as a single prompt).
    pub new_input_len: u64,
    /// Output tokens asked for.
    pub output_len: u64,
    /// Seconds the user thinks after the previous reply ended before sending this turn (0 for
    /// the first turn).
    pub think_time_s: f64,
}

/// A conversation: its user turns, sent in order on one session.
#[derive(Clone, Debug, PartialEq)]
pub struct Conversation {
    /// The turns, at least one.
    pub turns: Vec<Turn>,
}

/// The synthetic generator's distributions.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SyntheticSpec {
    /// User turns per conversation (at least 1 is sent).
    pub turns: Dist,
    /// Tokens of each turn's new user text.
    pub input_len: Dist,
    /// Output tokens asked for per turn (at least 1).
    pub output_len: Dist,
    /// Seconds between a reply's end and the next turn.
    pub think_time_s: Dist,
}

/// `count` synthetic conversations drawn from `seed`: the turn count, then per turn its new
/// text (exactly the drawn length in `tok`'s tokens), output length and think time.
pub fn synthetic(
    spec: SyntheticSpec,
    count: usize,
    seed: u64,
    tok: &Tokenizer,
) -> Vec<Conversation> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..count)
        .map(|_| {
            let n = spec.turns.sample_count(&mut rng).max(1);
            let turns = (0..n)
                .map(|k| {
                    let want = spec.input_len.sample_count(&mut rng).max(1);
                    let output_len = spec.output_len.sample_count(&mut rng).max(1);
                    let think = spec.think_time_s.sample(&mut rng);
                    // The first turn is the prompt's start: the tokenizer's special tokens
                    // count in its length, as in a single prompt.
                    let plain = if k == 0 {
                        want.saturating_sub(tok.special_tokens()).max(1)
                    } else {
                        want
                    };
                    let (text, _) = tok.random_text(&mut rng, "", plain);
                    Turn {
                        new_input_len: if k == 0 {
                            tok.count_prompt(&text)
                        } else {
                            tok.count(&text)
                        },
                        text,
                        output_len,
                        think_time_s: if k == 0 { 0.0 } else { think },
                    }
                })
                .collect();
            Conversation { turns }
        })
        .collect()
}

/// Conversations of a ShareGPT file replayed turn by turn: each human turn followed by a reply
/// is a turn, asking for the reply's length (or `output_len`); at most `max_turns` per
/// conversation; think times drawn from `think_time_s` with `seed`. Conversations without a
/// human turn followed by a reply are skipped.
pub fn sharegpt(
    path: &Path,
    text: &str,
    output_len: Option<u64>,
    max_turns: Option<usize>,
    think_time_s: Dist,
    seed: u64,
    tok: &Tokenizer,
) -> Result<Vec<Conversation>, LoadgenError> {
    let fail = |source| LoadgenError::Dataset {
        path: path.to_path_buf(),
        source,
    };
    let v: Value = serde_json::from_str(text).map_err(|e| fail(DatasetError::NotJson(e)))?;
    let items = v.as_array().ok_or_else(|| fail(DatasetError::NotAnArray))?;
    let mut rng = StdRng::seed_from_u64(seed);
    let mut out = Vec::new();
    for item in items {
        let Some(messages) = item.get("conversations").and_then(Value::as_array) else {
            continue;
        };
        fn said(m: &Value) -> (bool, Option<&str>) {
            let from = m.get("from").and_then(Value::as_str).unwrap_or_default();
            (
                matches!(from, "human" | "user"),
                m.get("value").and_then(Value::as_str),
            )
        }
        let mut turns = Vec::new();
        let mut i = 0;
        while i + 1 < messages.len() && max_turns.is_none_or(|m| turns.len() < m) {
            let (human, prompt) = said(&messages[i]);
            let (reply_human, reply) = said(&messages[i + 1]);
            match (human, prompt, reply_human, reply) {
                (true, Some(prompt), false, Some(reply)) if !prompt.trim().is_empty() => {
                    let first = turns.is_empty();
                    turns.push(Turn {
                        new_input_len: if first {
                            tok.count_prompt(prompt)
                        } else {
                            tok.count(prompt)
                        },
                        text: prompt.to_string(),
                        output_len: output_len.unwrap_or_else(|| tok.count(reply)).max(1),
                        think_time_s: if first {
                            0.0
                        } else {
                            think_time_s.sample(&mut rng)
                        },
                    });
                    i += 2;
                }
                // A conversation broken off (two human turns in a row, a missing value) ends
                // where it breaks.
                _ if !turns.is_empty() => break,
                _ => i += 1,
            }
        }
        if !turns.is_empty() {
            out.push(Conversation { turns });
        }
    }
    if out.is_empty() {
        return Err(fail(DatasetError::NoUsableConversations));
    }
    Ok(out)
}

/// Separates the parts of a history sent as one text (`/v1/completions`, TGI, SGLang).
pub const TEXT_SEPARATOR: &str = "\n";

/// The history of turn `k` as chat messages: `(role, content)` pairs, the user's turns and
/// the replies received alternating, ending with turn `k`'s new text.
pub fn messages<'a>(
    turns: &'a [Turn],
    replies: &'a [String],
    k: usize,
) -> Vec<(&'static str, &'a str)> {
    let mut out = Vec::with_capacity(2 * k + 1);
    for (j, turn) in turns.iter().enumerate().take(k + 1) {
        out.push(("user", turn.text.as_str()));
        if j < k {
            out.push(("assistant", replies.get(j).map_or("", String::as_str)));
        }
    }
    out
}

/// The history of turn `k` as one text: the messages' contents joined by [`TEXT_SEPARATOR`].
pub fn history_text(turns: &[Turn], replies: &[String], k: usize) -> String {
    messages(turns, replies, k)
        .iter()
        .map(|(_, c)| *c)
        .collect::<Vec<_>>()
        .join(TEXT_SEPARATOR)
}

/// The client's count of turn `k`'s prompt: for a text prompt the tokenizer's count of the
/// whole text (special tokens included); for chat messages the first one's count with special
/// tokens plus the others' (the server's chat template adds its own tokens, uncounted, as for
/// single-turn chat prompts).
pub fn prompt_len(
    tok: &Tokenizer,
    turns: &[Turn],
    replies: &[String],
    k: usize,
    chat: bool,
) -> u64 {
    if chat {
        messages(turns, replies, k)
            .iter()
            .enumerate()
            .map(|(i, (_, c))| {
                if i == 0 {
                    tok.count_prompt(c)
                } else {
                    tok.count(c)
                }
            })
            .sum()
    } else {
        tok.count_prompt(&history_text(turns, replies, k))
    }
}

/// Sets each multi-turn record's `input_len` to [`prompt_len`] of the prompt it sent (after the
/// stage, so counting never delays a turn). `reqs` are in send order, so a conversation's
/// earlier turns come before its later ones.
pub fn count_histories(
    reqs: &mut [RequestRecord],
    list: &[Conversation],
    tok: &Tokenizer,
    chat: bool,
) {
    if list.is_empty() {
        return;
    }
    let mut replies: HashMap<usize, Vec<String>> = HashMap::new();
    for r in reqs.iter_mut() {
        let Some(t) = r.turn else { continue };
        let turns = &list[t.conversation % list.len()].turns;
        let got = replies.entry(t.conversation).or_default();
        if got.len() == t.turn && t.turn < turns.len() {
            r.input_len = prompt_len(tok, turns, got, t.turn, chat);
        }
        got.push(r.generated_text.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distributions_parse_print_and_draw_within_bounds() {
        let d: Dist = "uniform:2:4".parse().unwrap();
        assert_eq!(d, Dist::Uniform { min: 2.0, max: 4.0 });
        assert_eq!(d.to_string(), "uniform:2:4");
        assert_eq!("3".parse::<Dist>().unwrap(), Dist::Constant(3.0));
        assert_eq!(
            "exponential:0.5".parse::<Dist>().unwrap(),
            Dist::Exponential { mean: 0.5 }
        );
        assert_eq!(
            "normal:1".parse::<Dist>().unwrap_err().to_string(),
            "\"normal:1\" is not N, uniform:MIN:MAX or exponential:MEAN"
        );
        assert!(matches!(
            "uniform:5:1".parse::<Dist>(),
            Err(DistError::Range(_))
        ));
        assert!(matches!("-1".parse::<Dist>(), Err(DistError::Range(_))));
        let mut rng = StdRng::seed_from_u64(1);
        let counts: Vec<u64> = (0..200).map(|_| d.sample_count(&mut rng)).collect();
        assert!(counts.iter().all(|c| (2..=4).contains(c)));
        assert!(
            [2, 3, 4].iter().all(|v| counts.contains(v)),
            "both ends drawn"
        );
        let e = Dist::Exponential { mean: 2.0 };
        let mean = (0..4000).map(|_| e.sample(&mut rng)).sum::<f64>() / 4000.0;
        assert!((mean - 2.0).abs() < 0.2, "{mean}");
    }

    #[test]
    fn synthetic_conversations_are_seeded_with_exact_new_text_lengths() {
        for name in ["words", "cl100k_base"] {
            let tok = Tokenizer::from_name(name).unwrap();
            let spec = SyntheticSpec {
                turns: "uniform:2:5".parse().unwrap(),
                input_len: "uniform:20:40".parse().unwrap(),
                output_len: "7".parse().unwrap(),
                think_time_s: "uniform:0.1:0.2".parse().unwrap(),
            };
            let convs = synthetic(spec, 20, 3, &tok);
            assert_eq!(convs, synthetic(spec, 20, 3, &tok), "{name}: seeded");
            assert_ne!(
                convs,
                synthetic(spec, 20, 4, &tok),
                "{name}: the seed matters"
            );
            for c in &convs {
                assert!((2..=5).contains(&c.turns.len()));
                for (k, t) in c.turns.iter().enumerate() {
                    assert!(
                        (20..=40).contains(&t.new_input_len),
                        "{name}: {}",
                        t.new_input_len
                    );
                    let counted = if k == 0 {
                        tok.count_prompt(&t.text)
                    } else {
                        tok.count(&t.text)
                    };
                    assert_eq!(counted, t.new_input_len, "{name}");
                    assert_eq!(t.output_len, 7);
                    if k == 0 {
                        assert_eq!(t.think_time_s, 0.0);
                    } else {
                        assert!((0.1..=0.2).contains(&t.think_time_s));
                    }
                }
            }
        }
    }

    #[test]
    fn sharegpt_conversations_replay_every_exchange_up_to_max_turns() {
        let tok = Tokenizer::Words;
        let sg = r#"[
          {"conversations":[{"from":"human","value":"one two three"},{"from":"gpt","value":"a b c d"},
                            {"from":"human","value":"five six"},{"from":"gpt","value":"e f"},
                            {"from":"human","value":"seven"},{"from":"gpt","value":"g"}]},
          {"conversations":[{"from":"system","value":"be nice"},{"from":"user","value":"hi there"},
                            {"from":"assistant","value":"hello"},{"from":"human","value":"x"},
                            {"from":"human","value":"y"}]},
          {"conversations":[{"from":"gpt","value":"alone"}]}
        ]"#;
        let p = Path::new("s.json");
        let c = sharegpt(p, sg, None, None, Dist::Constant(0.5), 0, &tok).unwrap();
        assert_eq!(c.len(), 2);
        let lens: Vec<(u64, u64, f64)> = c[0]
            .turns
            .iter()
            .map(|t| (t.new_input_len, t.output_len, t.think_time_s))
            .collect();
        assert_eq!(lens, vec![(3, 4, 0.0), (2, 2, 0.5), (1, 1, 0.5)]);
        assert_eq!(
            c[1].turns.len(),
            1,
            "breaks off at two human turns in a row"
        );
        assert_eq!(c[1].turns[0].text, "hi there");
        let capped = sharegpt(p, sg, Some(9), Some(2), Dist::Constant(0.0), 0, &tok).unwrap();
        assert_eq!(capped[0].turns.len(), 2);
        assert!(capped[0].turns.iter().all(|t| t.output_len == 9));
        let e = sharegpt(
            p,
            "[{\"conversations\": []}]",
            None,
            None,
            Dist::Constant(0.0),
            0,
            &tok,
        )
        .unwrap_err();
        assert_eq!(
            format!("{:#}", anyhow::Error::from(e)),
            "dataset s.json: no usable conversations"
        );
    }

    #[test]
    fn the_history_carries_earlier_turns_and_the_replies_received() {
        let turn = |text: &str| Turn {
            text: text.into(),
            new_input_len: 0,
            output_len: 1,
            think_time_s: 0.0,
        };
        let turns = vec![turn("a b"), turn("c"), turn("d e f")];
        let replies = vec!["r1 r1".to_string(), "r2".to_string()];
        assert_eq!(
            messages(&turns, &replies, 2),
            vec![
                ("user", "a b"),
                ("assistant", "r1 r1"),
                ("user", "c"),
                ("assistant", "r2"),
                ("user", "d e f")
            ]
        );
        assert_eq!(messages(&turns, &replies, 0), vec![("user", "a b")]);
        assert_eq!(history_text(&turns, &replies, 1), "a b\nr1 r1\nc");
        let tok = Tokenizer::Words;
        assert_eq!(prompt_len(&tok, &turns, &replies, 2, true), 9);
        assert_eq!(prompt_len(&tok, &turns, &replies, 2, false), 9);
        let bpe = Tokenizer::from_name("cl100k_base").unwrap();
        assert_eq!(
            prompt_len(&bpe, &turns, &replies, 1, false),
            bpe.count_prompt("a b\nr1 r1\nc")
        );
    }
}
