//! Token counting and exact-length random prompts. Built in: the BPE encodings shipped inside
//! the `tiktoken-rs` crate (`cl100k_base`, `o200k_base`; their ranks are compiled into the
//! binary, nothing is downloaded at run time), and `words` (whitespace-separated words, which
//! is how the mock server counts prompt tokens). Or any local Hugging Face `tokenizer.json`
//! (the model's own tokenizer), loaded with the `tokenizers` crate.
//!
//! Special tokens are counted as vLLM counts them: a prompt's length is
//! `len(tokenizer(prompt).input_ids)`, which includes what the tokenizer's post-processor adds
//! (a BOS token, `[CLS]`/`[SEP]`...): [`Tokenizer::count_prompt`]. Generated text is counted
//! without them, as vLLM does (`add_special_tokens=False`): [`Tokenizer::count`]. The built-in
//! encodings add no special tokens, so for them both counts agree. Must not import app code.

use std::sync::Arc;

use rand::rngs::StdRng;
use rand::Rng;
use tiktoken_rs::CoreBPE;

use super::LoadgenError;

/// Fresh random texts drawn before [`Tokenizer::random_text`] gives up on an exact length.
const RANDOM_TEXT_DRAWS: usize = 8;
/// Re-tokenize-and-adjust rounds per draw.
const RANDOM_TEXT_ADJUSTMENTS: usize = 32;

/// A tokenizer chosen with `--tokenizer`.
#[derive(Clone)]
pub enum Tokenizer {
    /// Whitespace-separated words.
    Words,
    /// A tiktoken BPE encoding.
    Bpe {
        /// Its name (`cl100k_base`).
        name: &'static str,
        /// The encoder.
        bpe: Arc<CoreBPE>,
        /// Token ids that decode to a space and a short lowercase word: random prompts are made
        /// of these, so every one of them is exactly one token in context too.
        words: Arc<Vec<String>>,
    },
    /// A Hugging Face `tokenizer.json`.
    Hf {
        /// The file it came from, as given.
        name: String,
        /// The tokenizer.
        tok: Arc<tokenizers::Tokenizer>,
        /// Vocabulary entries that decode to a short lowercase word, used with a space before.
        words: Arc<Vec<String>>,
    },
}

/// The Hugging Face hub cache folders to look in: `$HF_HUB_CACHE`, `$HF_HOME/hub`,
/// `~/.cache/huggingface/hub`.
fn hf_hub_dirs() -> Vec<std::path::PathBuf> {
    let env = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    let mut out = Vec::new();
    out.extend(env("HF_HUB_CACHE").map(std::path::PathBuf::from));
    out.extend(env("HF_HOME").map(|h| std::path::PathBuf::from(h).join("hub")));
    out.extend(env("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/huggingface/hub")));
    out
}

/// The `tokenizer.json` for `name`: inside it when it is a folder, else in a snapshot of the
/// model id `org/name` in one of the hub cache folders (`models--org--name/snapshots/*/`; the
/// one `refs/main` names first). Never downloads.
pub fn local_tokenizer_json(
    name: &str,
    hub_dirs: &[std::path::PathBuf],
) -> Option<std::path::PathBuf> {
    let dir = std::path::Path::new(name);
    if dir.is_dir() {
        return Some(dir.join("tokenizer.json")).filter(|f| f.is_file());
    }
    if name.split('/').count() != 2 || name.starts_with('/') || name.contains("..") {
        return None;
    }
    let folder = format!("models--{}", name.replace('/', "--"));
    for hub in hub_dirs {
        let model = hub.join(&folder);
        let main = std::fs::read_to_string(model.join("refs/main")).ok();
        let mut snapshots: Vec<std::path::PathBuf> = std::fs::read_dir(model.join("snapshots"))
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .collect();
        snapshots.sort();
        if let Some(main) = main.as_deref().map(str::trim) {
            snapshots.sort_by_key(|p| p.file_name().is_none_or(|n| n != main));
        }
        if let Some(f) = snapshots
            .iter()
            .map(|s| s.join("tokenizer.json"))
            .find(|f| f.is_file())
        {
            return Some(f);
        }
    }
    None
}

impl std::fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A tokenizer that could not be loaded, keeping the library's reason.
fn load_error(name: &str, source: Box<dyn std::error::Error + Send + Sync>) -> LoadgenError {
    LoadgenError::TokenizerLoad {
        name: name.into(),
        source,
    }
}

impl Tokenizer {
    /// `cl100k_base`, `o200k_base` or `words`.
    pub fn from_name(name: &str) -> Result<Tokenizer, LoadgenError> {
        let invalid = |message: String| LoadgenError::InvalidOption {
            option: "tokenizer",
            message,
        };
        let (name, bpe) = match name {
            "words" => return Ok(Tokenizer::Words),
            "cl100k_base" => ("cl100k_base", tiktoken_rs::cl100k_base()),
            "o200k_base" => ("o200k_base", tiktoken_rs::o200k_base()),
            path if std::path::Path::new(path).is_file() => return Tokenizer::from_file(path),
            other => {
                // vLLM command lines name a model folder or a Hugging Face model id.
                if let Some(file) = local_tokenizer_json(other, &hf_hub_dirs()) {
                    return Tokenizer::from_file(&file.to_string_lossy());
                }
                return Err(invalid(format!(
                    "{other:?} is neither a built-in tokenizer (cl100k_base, o200k_base, words), a tokenizer.json file, a folder with one, nor a model id in the local Hugging Face cache (nothing is downloaded)"
                )));
            }
        };
        let bpe = bpe.map_err(|e| load_error(name, e.into()))?;
        let words: Vec<String> = (0..50_000u32)
            .filter_map(|id| bpe.decode(&[id]).ok())
            .filter(|t| {
                let w = t.strip_prefix(' ').unwrap_or("");
                (3..=8).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase())
            })
            .collect();
        if words.len() < 100 {
            return Err(invalid(format!("{name}: too few word tokens")));
        }
        Ok(Tokenizer::Bpe {
            name,
            bpe: Arc::new(bpe),
            words: Arc::new(words),
        })
    }

    /// Loads a Hugging Face `tokenizer.json`.
    pub fn from_file(path: &str) -> Result<Tokenizer, LoadgenError> {
        let invalid = |message: String| LoadgenError::InvalidOption {
            option: "tokenizer",
            message,
        };
        let mut tok = tokenizers::Tokenizer::from_file(path).map_err(|e| load_error(path, e))?;
        // Count every token: a truncation or padding setting saved in the file must not cut
        // or pad prompts (transformers ignores them too unless asked).
        tok.with_truncation(None).map_err(|e| load_error(path, e))?;
        tok.with_padding(None);
        let mut words: Vec<String> = tok
            .get_vocab(false)
            .into_values()
            .filter_map(|id| tok.decode(&[id], true).ok())
            .map(|t| t.trim().to_string())
            .filter(|w| (3..=8).contains(&w.len()) && w.bytes().all(|b| b.is_ascii_lowercase()))
            .collect();
        // The vocabulary is a hash map: sort so prompts are reproducible from the seed.
        words.sort();
        words.dedup();
        // Keep the words that are one token after a space in running text. A byte-level BPE
        // also lists pieces ("ing", "tion") that decode to plain letters but become two
        // tokens after a space; prompts made of those re-tokenize a third longer.
        let count = |t: &str| tok.encode_fast(t, false).map_or(0, |e| e.get_ids().len());
        let base = count("a");
        let single: Vec<String> = words
            .iter()
            .filter(|w| count(&format!("a {w}")) == base + 1)
            .cloned()
            .collect();
        if !single.is_empty() {
            words = single;
        }
        if words.is_empty() {
            return Err(invalid(format!(
                "{path}: no plain word tokens to build prompts from"
            )));
        }
        Ok(Tokenizer::Hf {
            name: path.to_string(),
            tok: Arc::new(tok),
            words: Arc::new(words),
        })
    }

    /// The name recorded in results.
    pub fn name(&self) -> &str {
        match self {
            Tokenizer::Words => "words",
            Tokenizer::Bpe { name, .. } => name,
            Tokenizer::Hf { name, .. } => name,
        }
    }

    /// Special tokens the tokenizer adds around one sequence (a BOS token: 1); 0 for the
    /// built-in encodings.
    pub fn special_tokens(&self) -> u64 {
        match self {
            Tokenizer::Hf { tok, .. } => {
                use tokenizers::PostProcessor;
                tok.get_post_processor()
                    .map_or(0, |p| p.added_tokens(false) as u64)
            }
            _ => 0,
        }
    }

    /// Tokens of `text` as a prompt, the way vLLM counts prompt lengths
    /// (`len(tokenizer(prompt).input_ids)`): with the special tokens the tokenizer adds.
    pub fn count_prompt(&self, text: &str) -> u64 {
        match self {
            Tokenizer::Hf { tok, .. } => tok
                .encode_fast(text, true)
                .map_or(0, |e| e.get_ids().len() as u64),
            _ => self.count(text),
        }
    }

    /// Tokens in `text` without special tokens (for generated text).
    pub fn count(&self, text: &str) -> u64 {
        match self {
            Tokenizer::Words => text.split_whitespace().count() as u64,
            Tokenizer::Bpe { bpe, .. } => bpe.encode_ordinary(text).len() as u64,
            Tokenizer::Hf { tok, .. } => tok
                .encode_fast(text, false)
                .map_or(0, |e| e.get_ids().len() as u64),
        }
    }

    /// Appends `n` random tokens to `out` (a word each; for BPE a leading-space word token).
    pub fn push_random(&self, rng: &mut StdRng, n: u64, out: &mut String) {
        match self {
            Tokenizer::Words => {
                const VOCAB: [&str; 16] = [
                    "the", "of", "and", "to", "in", "is", "that", "for", "it", "as", "was", "with",
                    "be", "by", "on", "not",
                ];
                for _ in 0..n {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    out.push_str(VOCAB[rng.random_range(0..VOCAB.len())]);
                }
            }
            Tokenizer::Bpe { words, .. } => {
                for _ in 0..n {
                    out.push_str(&words[rng.random_range(0..words.len())]);
                }
            }
            Tokenizer::Hf { words, .. } => {
                for _ in 0..n {
                    if !out.is_empty() {
                        out.push(' ');
                    }
                    out.push_str(&words[rng.random_range(0..words.len())]);
                }
            }
        }
    }

    /// Random text of exactly `n` tokens after `prefix` (which is kept as-is), counted without
    /// special tokens (see [`Tokenizer::count_prompt`] for the length as a prompt). As vLLM's
    /// random dataset does, the text is re-tokenized and adjusted until it has the length:
    /// too long, it is cut where the first token past the length starts; too short, words are
    /// added. Unlike vLLM (which gives up after 10 tries and keeps the mismatch), a text that
    /// does not settle is drawn again; the count returned is always the text's real count.
    pub fn random_text(&self, rng: &mut StdRng, prefix: &str, n: u64) -> (String, u64) {
        let want = self.count(prefix) + n;
        let mut text = String::new();
        for _ in 0..RANDOM_TEXT_DRAWS {
            text = prefix.to_string();
            self.push_random(rng, n, &mut text);
            for _ in 0..RANDOM_TEXT_ADJUSTMENTS {
                let got = self.count(&text);
                if got == want {
                    return (text, got);
                }
                if got > want {
                    self.cut_to(&mut text, prefix.len(), want);
                } else {
                    self.push_random(rng, want - got, &mut text);
                }
            }
        }
        let got = self.count(&text);
        (text, got)
    }

    /// Shortens `text` (never into its first `keep` bytes) towards `want` tokens: at the start
    /// of token `want` for a `tokenizer.json` (its offsets say where), else by as many trailing
    /// words as there are tokens too many (one word is one token there).
    fn cut_to(&self, text: &mut String, keep: usize, want: u64) {
        let before = text.len();
        if let Tokenizer::Hf { tok, .. } = self {
            // `encode_fast` leaves offsets at (0, 0): the cut needs the real ones.
            let start = tok
                .encode(text.as_str(), false)
                .ok()
                .and_then(|e| e.get_offsets().get(want as usize).map(|o| o.0));
            if let Some(start) = start.filter(|s| *s < text.len() && text.is_char_boundary(*s)) {
                text.truncate(start.max(keep));
            }
        } else {
            let extra = self.count(text).saturating_sub(want);
            for _ in 0..extra {
                match text.rfind(' ').filter(|i| *i >= keep) {
                    Some(i) => text.truncate(i),
                    None => break,
                }
            }
        }
        while text.len() > keep && text.ends_with(char::is_whitespace) {
            text.pop();
        }
        if text.len() == before {
            // No progress (a token spanning the cut): drop the last word instead.
            if let Some(i) = text.rfind(' ').filter(|i| *i >= keep) {
                text.truncate(i);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn random_prompts_have_exact_bpe_lengths() {
        let t = Tokenizer::from_name("cl100k_base").unwrap();
        let mut rng = StdRng::seed_from_u64(1);
        let (prefix, p) = t.random_text(&mut rng, "", 10);
        assert_eq!(p, 10);
        for n in [1, 7, 100, 1000] {
            let (text, got) = t.random_text(&mut rng, &prefix, n);
            assert_eq!(got, 10 + n);
            assert_eq!(t.count(&text), 10 + n);
            assert!(text.starts_with(&prefix));
        }
        // Each word token is one word, so the mock's word count agrees.
        let (text, got) = t.random_text(&mut rng, "", 50);
        assert_eq!(Tokenizer::Words.count(&text), got);
        assert_eq!(t.count("hello world"), 2);
        assert!(Tokenizer::from_name("gpt2-nope").is_err());
    }

    #[test]
    fn model_folders_and_hub_cache_ids_find_their_tokenizer_json() {
        let hub = tempfile::tempdir().unwrap();
        let snap = |rev: &str| {
            let d = hub.path().join("models--org--tiny/snapshots").join(rev);
            std::fs::create_dir_all(&d).unwrap();
            std::fs::write(d.join("tokenizer.json"), rev).unwrap();
            d
        };
        snap("aaa");
        let main = snap("bbb");
        std::fs::create_dir_all(hub.path().join("models--org--tiny/refs")).unwrap();
        std::fs::write(hub.path().join("models--org--tiny/refs/main"), "bbb\n").unwrap();
        let dirs = vec![hub.path().join("missing"), hub.path().to_path_buf()];
        assert_eq!(
            local_tokenizer_json("org/tiny", &dirs),
            Some(main.join("tokenizer.json"))
        );
        assert_eq!(local_tokenizer_json("org/other", &dirs), None);
        assert_eq!(local_tokenizer_json("../x/y", &dirs), None);
        // A model folder holding a tokenizer.json.
        assert_eq!(
            local_tokenizer_json(main.to_str().unwrap(), &[]),
            Some(main.join("tokenizer.json"))
        );
        let e = Tokenizer::from_name("org/not-cached")
            .unwrap_err()
            .to_string();
        assert!(e.contains("nothing is downloaded"), "{e}");
    }

    #[test]
    fn a_local_tokenizer_json_counts_and_builds_prompts() {
        let words = [
            "alpha", "bravo", "charlie", "delta", "echo", "golf", "hotel", "india",
        ];
        let mut vocab = serde_json::Map::new();
        vocab.insert("[UNK]".into(), 0.into());
        for (i, w) in words.iter().enumerate() {
            vocab.insert((*w).into(), (i + 1).into());
        }
        let json = serde_json::json!({
            "version": "1.0", "truncation": null, "padding": null, "added_tokens": [],
            "normalizer": null, "pre_tokenizer": {"type": "Whitespace"}, "post_processor": null,
            "decoder": null, "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}
        });
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("tokenizer.json");
        std::fs::write(&path, json.to_string()).unwrap();
        let t = Tokenizer::from_name(path.to_str().unwrap()).unwrap();
        assert_eq!(t.count("alpha bravo zulu"), 3);
        let mut rng = StdRng::seed_from_u64(3);
        let (text, n) = t.random_text(&mut rng, "", 25);
        assert_eq!((n, t.count(&text)), (25, 25));
        std::fs::write(&path, "{").unwrap();
        // The file, then the library's own reason as the source.
        let e = Tokenizer::from_name(path.to_str().unwrap()).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!("invalid --tokenizer: cannot load {}", path.display())
        );
        let reason = std::error::Error::source(&e).map(ToString::to_string);
        assert!(reason.is_some_and(|r| r.contains("EOF")), "{e:?}");
    }
}
