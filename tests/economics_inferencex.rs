//! InferenceX's own result files give, through benchlens, the per-GPU throughput and cost per
//! million tokens that InferenceX publishes for the same rows.
//!
//! The files: `tests/fixtures/real/inferencex-glm5_fp8_vllm_tp8_*.json`, from
//! `experimental/token_position_decode_slo/glm-5/results/` of
//! <https://github.com/SemiAnalysisAI/InferenceX> (Apache-2.0) at commit
//! `843c6254ff69b567f772f6a5fd97675af3d04431` (see the fixtures' README).
//!
//! What InferenceX publishes for them, in the same repository and commit:
//! - **Throughput per GPU**: `experimental/token_position_decode_slo/glm-5/plot_sla_frontier.py`
//!   draws each file's `output_throughput / tp` and `input_throughput / tp` (its lines 82–83),
//!   `tp` from the file name (`tp(\d+)_isl…`); its charts are the experiment's README images.
//!   `utils/process_result.py` divides by the same count on one node (`tp × pp × pcp_size`).
//! - **Cost per million tokens**: `experimental/dsv32/bench.py`'s
//!   `ms_to_cost_per_1m_tokens(ms_per_tok, gpu_hour_price) = ms_per_tok × price / 3.6`, with
//!   `ms_per_tok` the milliseconds one GPU takes per token, `1000 / (tok/s per GPU)`.
//!
//! The figures below are those rules applied to the files' own values (worked out once, by
//! hand, and written here); benchlens must give them from its reader and its own rules.
//! The MiniMax files of the same corpus (`…_dep8_…`, `…_tep8_…`) are not here: benchlens reads
//! no GPU count from `dep8`/`tep8` names yet, so it has no per-GPU figure for them.
#![allow(clippy::unwrap_used, clippy::expect_used)] // test code: a panic is the failure report

mod common;

use benchlens::analysis::economics::{record_gpus, usd_per_million_tokens, Assumptions};
use benchlens::analysis::tradeoff::ThroughputAxis;
use benchlens::model::MetricKey;
use common::read_fixture;

/// `$2.50` per GPU-hour: any price; the two rules must agree at each.
const PRICE: f64 = 2.5;

fn close(got: Option<f64>, want: f64) {
    let got = got.unwrap_or(f64::NAN);
    assert!(
        ((got - want) / want).abs() < 1e-12,
        "got {got}, InferenceX's rule gives {want}"
    );
}

#[test]
fn glm5_rows_give_inferencex_figures() {
    // (file, output tok/s per GPU, input tok/s per GPU, $ per million output tokens at $2.50)
    let rows = [
        (
            "real/inferencex-glm5_fp8_vllm_tp8_isl1024_osl128_conc16.json",
            50.44761641776567,
            403.5809313421254,
            13.765654232176733,
        ),
        (
            "real/inferencex-glm5_fp8_vllm_tp8_isl8192_osl128_conc64.json",
            15.083431841307622,
            965.3396378436878,
            46.04021496902533,
        ),
    ];
    for (file, out_per_gpu, in_per_gpu, usd) in rows {
        let r = read_fixture(file).records.remove(0);
        let (gpus, _) = record_gpus(&r).expect("tp8 in the name is the GPU count");
        assert_eq!(gpus, 8, "{file}");
        close(
            ThroughputAxis::OutputTokensPerSPerGpu.value(&r, &Assumptions::default()),
            out_per_gpu,
        );
        close(
            r.metric(&MetricKey::InputThroughput)
                .map(|v| v / gpus as f64),
            in_per_gpu,
        );
        let output = r.metric(&MetricKey::OutputThroughput).unwrap_or(f64::NAN);
        close(usd_per_million_tokens(output, gpus, PRICE), usd);
        // The cost axis, with the price given for the run's GPU as the page takes it.
        let mut named = r.clone();
        named.gpu = Some("the experiment's GPU".into());
        let priced = Assumptions {
            prices: vec![("the experiment's GPU".into(), PRICE)],
            kw: Vec::new(),
        };
        close(
            ThroughputAxis::UsdPerMillionOutputTokens.value(&named, &priced),
            usd,
        );
    }
}
