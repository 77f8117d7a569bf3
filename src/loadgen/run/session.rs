//! What a run sets up once, before its stages: the in-process mock (`--mock`), the client and
//! the server's address, the model (asked of the server when `--model` is not given), the
//! prompts and their request bodies, the tags every stage records, the result files' paths
//! (the folder checked for room before any load) and the warm-up.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;

use super::opts::RunOpts;
use super::prepare::{self, headers, invalid, Prepared};
use super::scrape;
use super::setup::{
    check_folder, first_model, load_prompts, planned_bytes, planned_requests, result_paths, Loaded,
    ResultPaths,
};
use super::sink::SinkConfig;
use super::stage::{run_stage, PromptLens, TurnBodies, Workload};
use crate::loadgen::body::{request_body, Sampling};
use crate::loadgen::client::{Client, Transport};
use crate::loadgen::mock::{MockOpts, MockServer};
use crate::loadgen::schedule::{stop_requested, Arrivals};
use crate::loadgen::target::Target;
use crate::loadgen::tokenizer::Tokenizer;
use crate::loadgen::{LoadgenError, RequestFailed, SetupError};

/// A run's setting, the same for every stage.
pub(super) struct Session {
    /// `--mock`'s server, shut down at the run's end.
    pub(super) mock: Option<MockServer>,
    /// The client, the request bodies and the prompts' lengths.
    pub(super) workload: Arc<Workload>,
    /// The model named in requests.
    pub(super) model: String,
    /// The server's address as benchmarked (the mock's with `--mock`).
    pub(super) base_url: String,
    /// The request path.
    pub(super) endpoint: String,
    /// The dataset's name as recorded.
    pub(super) dataset_name: String,
    /// What counts prompt and reply tokens.
    pub(super) tokenizer: Tokenizer,
    /// The tags of every stage's record.
    pub(super) tags: BTreeMap<String, String>,
    /// A shard's run fingerprint (`tag.run_fingerprint`), for `merge` to check shards are one run.
    pub(super) fingerprint: Option<String>,
    /// The metrics `--scrape-metrics` warned about, once per run.
    pub(super) scrape_warned: scrape::Warned,
    /// The canonical result file (`None`: stdout).
    pub(super) result_path: Option<PathBuf>,
    /// The per-request JSON Lines file.
    pub(super) requests_path: Option<PathBuf>,
}

/// A session and, for a trace, its arrivals; `None` when a signal came first.
pub(super) type Opened = Option<(Session, Option<Vec<Duration>>)>;

impl Session {
    /// Sets the run up, up to its first stage (the warm-up is [`Session::warm_up`]).
    pub(super) async fn open(
        opts: &RunOpts,
        prep: &Prepared,
        stop: &mut watch::Receiver<bool>,
    ) -> Result<Opened, LoadgenError> {
        let mock = match opts.mock {
            true => Some(
                MockServer::start(MockOpts {
                    ttft_ms: opts.mock_ttft_ms,
                    itl_ms: opts.mock_itl_ms,
                    max_batch: opts.mock_max_batch,
                    ..MockOpts::default()
                })
                .await?,
            ),
            false => None,
        };
        let given_url = match (&opts.host, opts.port) {
            (None, None) => opts.base_url.clone(),
            (host, port) => format!(
                "http://{}:{}",
                host.as_deref().unwrap_or("127.0.0.1"),
                port.unwrap_or(8000)
            ),
        };
        let base_url = mock
            .as_ref()
            .map_or_else(|| given_url.clone(), MockServer::base_url);
        let endpoint = opts
            .endpoint
            .clone()
            .unwrap_or_else(|| opts.backend.default_endpoint().to_string());
        let target = Target::resolve(&base_url, &endpoint, headers(opts)?).await?;
        let transport = Transport {
            http2: opts.http2,
            insecure: opts.insecure,
            ca_cert: opts.ca_cert.clone(),
            max_head_kib: opts.max_response_head_kib.map(|k| k as usize),
        };
        if !target.tls && (opts.insecure || opts.ca_cert.is_some()) {
            return Err(invalid(
                if opts.insecure { "insecure" } else { "ca-cert" },
                format!("applies to https:// servers only, not {base_url}"),
            ));
        }
        let client = Client::with_transport(target, opts.backend, prep.timeouts, &transport)?;
        let model = match &opts.model {
            Some(m) => m.clone(),
            None => {
                tokio::select! {
                    m = first_model(&client) => m?,
                    () = stop_requested(stop) => {
                        eprintln!("interrupted while asking the server for its model: nothing was measured");
                        return Ok(None);
                    }
                }
            }
        };
        let count = opts.num_prompts.clamp(1, 100_000) as usize;
        let tokenizer = Tokenizer::from_name(&opts.tokenizer)?;
        let Loaded {
            name: dataset_name,
            prompts,
            arrivals: trace_arrivals,
            conversations,
        } = load_prompts(opts, count, &tokenizer)?;
        let conversation_tags = conversations.as_ref().map(|c| c.tags.clone());
        let sampling = Sampling {
            ignore_eos: opts.ignore_eos,
            ..Sampling::default()
        };
        let bodies = prompts
            .iter()
            .map(|p| {
                request_body(
                    opts.backend,
                    &model,
                    &p.text,
                    p.output_len,
                    &sampling,
                    prep.extra.as_ref(),
                )
            })
            .collect();
        let workload = Arc::new(Workload {
            client,
            bodies,
            // The texts are in the bodies now: only the counts are kept, and the texts freed.
            prompts: prompts.into_iter().map(|p| PromptLens::from(&p)).collect(),
            ignore_eos: opts.ignore_eos,
            shard: opts.shard,
            conversations: conversations.map(|c| {
                (
                    c.list,
                    TurnBodies {
                        backend: opts.backend,
                        model: model.clone(),
                        sampling,
                        extra: prep.extra.clone(),
                    },
                )
            }),
        });
        let fingerprint = opts.shard.map(|_| {
            let f = prepare::run_fingerprint(opts, &model, &given_url, &endpoint);
            serde_json::to_string(&f).unwrap_or_default()
        });
        let mut tags = prep.tags.clone();
        tags.insert("server_url".into(), base_url.clone());
        tags.insert("endpoint".into(), endpoint.clone());
        tags.insert("backend".into(), opts.backend.name().into());
        tags.insert("http_version".into(), workload.client.http_version().into());
        tags.insert("tokenizer".into(), tokenizer.name().into());
        tags.extend(conversation_tags.into_iter().flatten());

        // Where the files go, checked before any load: the folder takes files and has room for
        // what the plan will write.
        let ResultPaths { result, requests } = result_paths(opts, &model)?;
        if let (Some(path), true) = (&result, opts.write_files) {
            let requests = planned_requests(opts, &prep.rates, prep.concurrencies.len());
            let need = planned_bytes(requests, opts.output_len.unwrap_or(128));
            check_folder(path.parent().unwrap_or(Path::new("")), need)?;
        }
        let session = Session {
            mock,
            workload,
            model,
            base_url,
            endpoint,
            dataset_name,
            tokenizer,
            tags,
            fingerprint,
            scrape_warned: scrape::Warned::default(),
            result_path: result,
            requests_path: requests,
        };
        Ok(Some((session, trace_arrivals)))
    }

    /// `--warmup`'s requests, sent and not measured, at the first stage's concurrency; `false`
    /// when a signal cut them short. Every one failing ends the run before any stage.
    pub(super) async fn warm_up(
        &self,
        opts: &RunOpts,
        prep: &Prepared,
        stop: &mut watch::Receiver<bool>,
    ) -> Result<bool, LoadgenError> {
        if opts.warmup == 0 {
            return Ok(true);
        }
        let plan = Arrivals::Fixed(vec![Duration::ZERO; opts.warmup as usize]);
        let limit = prep
            .concurrencies
            .first()
            .copied()
            .flatten()
            .map(|c| c as usize);
        let sink = SinkConfig {
            tokenizer: None,
            stage: 0,
            keep_text: false,
            file: None,
        };
        let warm = run_stage(&self.workload, &plan, limit, stop, None, false, sink, None).await?;
        if warm.stopped {
            eprintln!("interrupted during the warm-up: nothing was measured");
            return Ok(false);
        }
        let reqs = warm.records;
        if let Some(first) = reqs
            .first()
            .filter(|_| reqs.iter().all(|r| r.failure.is_some()))
        {
            return Err(LoadgenError::Setup {
                url: self.workload.client.target().url.clone(),
                source: SetupError::WarmupFailed(
                    first
                        .failure
                        .as_ref()
                        .map(RequestFailed::from)
                        .unwrap_or_default(),
                ),
            });
        }
        Ok(true)
    }
}
