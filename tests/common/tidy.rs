//! The tidy CSV the browser tests and bench generate (`tests/browser/tidy.mjs`'s
//! `tidyCsv(rows, true)`), byte for byte: shared by `tests/wire.rs` and `benches/store.rs`.

use std::fmt::Write as _;

/// `rows` rows of model, engine, GPU, batch, concurrency and four metrics.
pub fn tidy_csv(rows: usize) -> String {
    let engines = ["vllm", "sglang", "tgi", "trtllm"];
    let gpus = ["A100", "H100", "L40S", "MI300X"];
    let mut s = String::with_capacity(rows * 70);
    s.push_str(
        "model,engine,gpu,batch,concurrency,TTFT (ms),TPOT (ms),Throughput (tok/s),E2EL (ms)\n",
    );
    for i in 0..rows {
        let _ = writeln!(
            s,
            "meta-llama/model-{},{},{},{},{},{:.3},{:.3},{:.2},{:.3}",
            i % 12,
            engines[(i >> 2) % 4],
            gpus[(i >> 4) % 4],
            1u64 << (i % 10),
            1u64 << ((i >> 6) % 9),
            20.0 + (i % 997) as f64 * 0.37,
            5.0 + (i % 89) as f64 * 0.11,
            500.0 + (i % 4999) as f64 * 1.7,
            900.0 + (i % 7919) as f64 * 0.53
        );
    }
    s
}
