//! Random prompts have exactly the asked number of tokens in the chosen tokenizer, checked per
//! prompt by re-tokenizing it, including a small byte-level BPE `tokenizer.json` (trained here
//! with the `tokenizers` crate on this repository's README), where vocabulary pieces that decode
//! to plain letters ("ing", "tion") re-tokenize into more tokens than they were drawn as.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

use benchlens::loadgen::dataset::{self, PrefixOrder, RandomSpec};
use benchlens::loadgen::tokenizer::Tokenizer;
use tokenizers::models::bpe::{BpeTrainerBuilder, BPE};
use tokenizers::normalizers::NormalizerWrapper;
use tokenizers::pre_tokenizers::byte_level::ByteLevel;
use tokenizers::processors::template::TemplateProcessing;
use tokenizers::{AddedToken, TokenizerImpl};

/// Trains a byte-level BPE of `vocab_size` on the README, with a `<s>` BOS added to every
/// prompt when `bos`, and writes it as `tokenizer.json` in `dir`.
fn byte_level_bpe(dir: &std::path::Path, vocab_size: usize, bos: bool) -> String {
    let mut trainer = BpeTrainerBuilder::new()
        .vocab_size(vocab_size)
        .min_frequency(2)
        .show_progress(false)
        .initial_alphabet(ByteLevel::alphabet().into_iter().collect())
        .special_tokens(vec![AddedToken::from("<s>", true)])
        .build();
    let mut tok: TokenizerImpl<BPE, NormalizerWrapper, ByteLevel, TemplateProcessing, ByteLevel> =
        TokenizerImpl::new(BPE::default());
    tok.with_pre_tokenizer(Some(ByteLevel::default()));
    tok.with_decoder(Some(ByteLevel::default()));
    let corpus = include_str!("../README.md");
    tok.train(&mut trainer, corpus.lines()).unwrap();
    if bos {
        let bos_id = tok.token_to_id("<s>").unwrap();
        tok.with_post_processor(Some(
            TemplateProcessing::builder()
                .try_single("<s> $A")
                .unwrap()
                .special_tokens(vec![("<s>", bos_id)])
                .build()
                .unwrap(),
        ));
    }
    let path = dir.join(if bos { "bpe-bos.json" } else { "bpe.json" });
    tok.save(&path, false).unwrap();
    path.to_string_lossy().into_owned()
}

/// Every prompt re-tokenizes (with `tokenizers`, as the server would) to its recorded length,
/// which is the asked length.
fn assert_exact(path: &str, spec: RandomSpec, count: usize) {
    let ours = Tokenizer::from_name(path).unwrap();
    let mut theirs = tokenizers::Tokenizer::from_file(path).unwrap();
    // The fixture saves a truncation setting, which a server does not apply to prompts.
    theirs.with_truncation(None).unwrap();
    theirs.with_padding(None);
    let prompts = dataset::random(spec, count, 7, &ours);
    assert_eq!(prompts.len(), count);
    for (i, p) in prompts.iter().enumerate() {
        let real = theirs
            .encode(p.text.as_str(), true)
            .unwrap()
            .get_ids()
            .len() as u64;
        assert_eq!(
            (real, p.input_len),
            (spec.input_len, spec.input_len),
            "prompt {i} of {path}: {:?}",
            p.text
        );
    }
}

#[test]
fn random_prompts_are_exact_in_a_byte_level_bpe() {
    let dir = tempfile::tempdir().unwrap();
    let spec = RandomSpec {
        input_len: 128,
        output_len: 8,
        range_ratio: 0.0,
        prefix_len: 0,
        prefix_groups: 1,
        prefix_order: PrefixOrder::Grouped,
    };
    for vocab in [400, 1200] {
        let plain = byte_level_bpe(dir.path(), vocab, false);
        assert_exact(&plain, spec, 50);
        let with_bos = byte_level_bpe(dir.path(), vocab, true);
        // 127 random tokens plus the BOS, as vLLM's random dataset counts them.
        assert_eq!(Tokenizer::from_name(&with_bos).unwrap().special_tokens(), 1);
        assert_exact(&with_bos, spec, 50);
        // A shared prefix and varied lengths: each prompt is exactly its own drawn length.
        let ours = Tokenizer::from_name(&with_bos).unwrap();
        let theirs = tokenizers::Tokenizer::from_file(&with_bos).unwrap();
        let varied = RandomSpec {
            input_len: 64,
            range_ratio: 0.5,
            prefix_len: 16,
            ..spec
        };
        for p in dataset::random(varied, 40, 3, &ours) {
            let real = theirs
                .encode(p.text.as_str(), true)
                .unwrap()
                .get_ids()
                .len() as u64;
            assert_eq!(real, p.input_len, "{:?}", p.text);
            assert!((16 + 32..=16 + 96).contains(&real), "{real}");
        }
    }
}

#[test]
fn random_prompts_are_exact_in_the_bos_fixture_and_built_in_encodings() {
    let spec = RandomSpec {
        input_len: 100,
        output_len: 8,
        range_ratio: 0.0,
        prefix_len: 0,
        prefix_groups: 1,
        prefix_order: PrefixOrder::Grouped,
    };
    assert_exact(
        concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/loadgen/tokenizer-bos.json"
        ),
        spec,
        30,
    );
    for name in ["cl100k_base", "o200k_base"] {
        let tok = Tokenizer::from_name(name).unwrap();
        for p in dataset::random(spec, 30, 1, &tok) {
            assert_eq!((tok.count_prompt(&p.text), p.input_len), (100, 100));
        }
    }
}
