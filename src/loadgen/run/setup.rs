//! What a run settles before its first stage: the server's model (`/v1/models`) when
//! `--model` is not given, the prompts of the chosen dataset, and where the result files go.

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use super::opts::{DatasetKind, RunOpts};
use super::prepare::invalid;
use crate::loadgen::client::Client;
use crate::loadgen::dataset::{self, Prompt, RandomSpec};
use crate::loadgen::record::FailureKind;
use crate::loadgen::report;
use crate::loadgen::tokenizer::Tokenizer;
use crate::loadgen::trace;
use crate::loadgen::{DatasetError, LoadgenError, RequestFailed, SetupError};

/// Prompts, the dataset's name, and for a trace its arrival offsets.
pub(super) struct Loaded {
    /// The dataset's name as recorded (`random`, `sharegpt`, `trace-azure`, …).
    pub(super) name: String,
    /// The prompts, in sending order.
    pub(super) prompts: Vec<Prompt>,
    /// A trace's arrival offsets (scaled by `--trace-speed`), one per prompt.
    pub(super) arrivals: Option<Vec<Duration>>,
}

pub(super) fn load_prompts(
    opts: &RunOpts,
    count: usize,
    tok: &Tokenizer,
) -> Result<Loaded, LoadgenError> {
    let read = || -> Result<(PathBuf, String), LoadgenError> {
        let path = opts
            .dataset_path
            .clone()
            .ok_or_else(|| invalid("dataset-path", "needed for this --dataset"))?;
        let text = std::fs::read_to_string(&path).map_err(|e| LoadgenError::Dataset {
            path: path.clone(),
            source: DatasetError::Read(e),
        })?;
        Ok((path, text))
    };
    let listed = |name: &str, prompts| Loaded {
        name: name.into(),
        prompts,
        arrivals: None,
    };
    Ok(match opts.dataset {
        DatasetKind::Random => {
            let spec = RandomSpec {
                input_len: opts.input_len,
                output_len: opts.output_len.unwrap_or(128),
                range_ratio: opts.range_ratio,
                prefix_len: opts.prefix_len,
                prefix_groups: opts.prefix_groups,
                prefix_order: opts.prefix_order,
            };
            listed("random", dataset::random(spec, count, opts.seed, tok))
        }
        DatasetKind::Jsonl => {
            let (path, text) = read()?;
            listed(
                "jsonl",
                dataset::jsonl(&path, &text, opts.output_len.unwrap_or(128), tok)?,
            )
        }
        DatasetKind::Sharegpt => {
            let (path, text) = read()?;
            listed(
                "sharegpt",
                dataset::sharegpt(&path, &text, opts.output_len, tok)?,
            )
        }
        DatasetKind::Trace => {
            let (path, text) = read()?;
            load_trace(opts, &path, &text, count, tok)?
        }
    })
}

/// `--dataset trace`: the sampled requests' prompts and their arrival offsets.
fn load_trace(
    opts: &RunOpts,
    path: &std::path::Path,
    text: &str,
    count: usize,
    tok: &Tokenizer,
) -> Result<Loaded, LoadgenError> {
    if !(opts.trace_speed > 0.0 && opts.trace_speed.is_finite()) {
        return Err(invalid("trace-speed", "must be a positive number"));
    }
    if !(opts.trace_sample > 0.0 && opts.trace_sample <= 1.0) {
        return Err(invalid("trace-sample", "must be above 0 and at most 1"));
    }
    let trace = trace::parse(text).map_err(|e| LoadgenError::Dataset {
        path: path.to_path_buf(),
        source: DatasetError::Trace(e),
    })?;
    let requests = trace::sample(
        &trace,
        trace::Sampling {
            speed: opts.trace_speed,
            share: opts.trace_sample,
            limit: Some(count),
            seed: opts.seed,
        },
    );
    let prompts = dataset::trace_prompts(&requests, trace::MOONCAKE_BLOCK_TOKENS, opts.seed, tok);
    Ok(Loaded {
        name: format!("trace-{}", trace.layout.name()),
        prompts,
        arrivals: Some(
            requests
                .iter()
                .map(|r| Duration::from_secs_f64(r.at_s))
                .collect(),
        ),
    })
}

pub(super) async fn first_model(client: &Client) -> Result<String, LoadgenError> {
    let path = format!("{}/v1/models", client.target().prefix);
    let url = format!("{}{path}", client.target().origin);
    let text = client.get(&path).await.map_err(|f| {
        // A server without the route, or whose model list fails on its own (transformers
        // serve 5.19 answers 500 when its Hugging Face cache folder does not exist), is helped
        // by naming the model; a refusal (a rejected header, a bad key: 4xx) would fail every
        // request the same way.
        let hint = match f.kind {
            FailureKind::Http(404) => " (the server lists no models: pass --model)",
            FailureKind::Http(500..=599) => {
                " (the server could not list its models: pass --model to skip the probe)"
            }
            FailureKind::Http(_) => "",
            _ => " (pass --model to skip the probe)",
        };
        LoadgenError::Setup {
            url: url.clone(),
            source: SetupError::ModelProbe {
                hint,
                reason: RequestFailed::from(&f),
            },
        }
    })?;
    let v: Value = serde_json::from_str(&text).map_err(|e| LoadgenError::Setup {
        url: url.clone(),
        source: SetupError::ModelListNotJson(e),
    })?;
    v.get("data")
        .and_then(Value::as_array)
        .and_then(|d| d.first())
        .and_then(|m| m.get("id"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or(LoadgenError::Setup {
            url,
            source: SetupError::NoModelListed,
        })
}

/// Where a run's files go.
pub(super) struct ResultPaths {
    /// The canonical result file; `None` for stdout (`--result-filename -`).
    pub(super) result: Option<PathBuf>,
    /// The per-request JSON Lines beside it (`<stem>.requests.jsonl`).
    pub(super) requests: Option<PathBuf>,
}

/// The result file's path (`--result-dir`, `--result-filename` or
/// `benchlens-{backend}-{model}-{date}.json`) and the JSON Lines beside it, with the folder
/// created.
pub(super) fn result_paths(opts: &RunOpts, model: &str) -> Result<ResultPaths, LoadgenError> {
    // With --vllm-compatible, --result-filename names the vLLM file, as in vLLM.
    let own_name = opts
        .result_filename
        .clone()
        .filter(|_| !opts.vllm_compatible);
    let file_name = own_name.unwrap_or_else(|| {
        let m = model.rsplit('/').next().unwrap_or(model);
        format!(
            "benchlens-{}-{m}-{}.json",
            opts.backend.name(),
            report::now_date()
        )
    });
    let result = (file_name != "-").then(|| opts.result_dir.join(&file_name));
    let requests = result.as_ref().map(|p| {
        let stem = p
            .file_stem()
            .map_or_else(|| "benchlens".into(), |s| s.to_string_lossy().into_owned());
        p.with_file_name(format!("{stem}.requests.jsonl"))
    });
    if let Some(dir) = result
        .as_ref()
        .and_then(|p| p.parent())
        .filter(|d| !d.as_os_str().is_empty())
    {
        std::fs::create_dir_all(dir).map_err(|source| LoadgenError::Write {
            path: dir.into(),
            source,
        })?;
    }
    Ok(ResultPaths { result, requests })
}
