//! The dimensions of one stage ([`StageInfo`]) as every output of the stage states them.

use std::collections::BTreeMap;

/// The dimensions of one stage, as they go into its record.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageInfo {
    /// Stage number, from 0.
    pub stage: usize,
    /// Model id.
    pub model: String,
    /// Backend name (`openai`).
    pub backend: String,
    /// `--engine`.
    pub engine: Option<String>,
    /// `--gpu`.
    pub gpu: Option<String>,
    /// `--gpu-count`.
    pub gpu_count: Option<u64>,
    /// `--label`.
    pub label: Option<String>,
    /// Dataset name.
    pub dataset: String,
    /// Configured rate (req/s, infinite when unbounded).
    pub request_rate: f64,
    /// Burstiness.
    pub burstiness: f64,
    /// Concurrency cap.
    pub max_concurrency: Option<u64>,
    /// Requests sent in the stage.
    pub num_prompts: u64,
    /// `%Y%m%d-%H%M%S` (UTC) at the stage's start.
    pub date: String,
    /// `--tag` pairs plus run metadata (tool version, command line, server URL...).
    pub tags: BTreeMap<String, String>,
    /// Endpoint path.
    pub endpoint: String,
    /// Whether the run was interrupted during or before this stage.
    pub partial: bool,
}

#[cfg(test)]
impl StageInfo {
    /// A stage as the tests write it: model `m` over `openai`, the random dataset, Poisson
    /// arrivals, the first second of 2026.
    pub(crate) fn fixture(request_rate: f64, max_concurrency: Option<u64>) -> StageInfo {
        StageInfo {
            model: "m".into(),
            backend: "openai".into(),
            dataset: "random".into(),
            request_rate,
            burstiness: 1.0,
            max_concurrency,
            date: "20260101-000000".into(),
            endpoint: "/v1/completions".into(),
            ..StageInfo::default()
        }
    }
}
