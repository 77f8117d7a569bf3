//! `--scrape-metrics`: the server's Prometheus metrics read once a second during a stage, on the
//! stage's clock, through the run's own client. A failed scrape is a warning (once per run),
//! never fatal: the run goes on without telemetry. A quantity the server's engine has a name for
//! but the server does not export is named in a warning once per run, and in each stage's
//! `server_metrics_missing` tag.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::stage::Workload;
use crate::loadgen::telemetry::{self, Reading};

/// Readings so far: seconds since the stage's start, and the reading.
pub(super) type Readings = Arc<Mutex<Vec<(f64, Reading)>>>;

/// The warnings already given in this run (one scraper per stage, one warning per run).
pub(super) type Warned = Arc<Mutex<BTreeSet<String>>>;

/// Prints `text` unless a warning under `key` was given already in this run.
fn warn_once(warned: &Warned, key: &str, text: impl FnOnce() -> String) {
    let first = warned.lock().map(|mut w| w.insert(key.to_string()));
    if first.unwrap_or(true) {
        eprintln!("{}", text());
    }
}

/// Starts scraping `path` every second from `start` until the handle is aborted.
pub(super) fn spawn(
    workload: Arc<Workload>,
    path: String,
    start: Instant,
    warned: Warned,
) -> (JoinHandle<()>, Readings) {
    let readings: Readings = Arc::default();
    let store = readings.clone();
    let handle = tokio::spawn(async move {
        for k in 0u64.. {
            tokio::time::sleep_until(start + Duration::from_secs(k)).await;
            let t = start.elapsed().as_secs_f64();
            match workload.client.get(&path).await {
                Ok(body) => {
                    let r = telemetry::read(&body);
                    if r.is_empty() && r.engines.is_empty() {
                        warn_once(&warned, "unknown", || {
                            format!(
                                "warning: {path} has none of the metric names benchlens maps \
                                 (vLLM, SGLang, TGI, llama.cpp): no server telemetry (it begins \
                                 {:?})",
                                body.chars().take(80).collect::<String>()
                            )
                        });
                    }
                    if let Ok(mut v) = store.lock() {
                        v.push((t, r));
                    }
                }
                Err(f) => warn_once(&warned, "failed", || {
                    format!(
                        "warning: scraping {path} failed: {} (the run goes on without server \
                         telemetry)",
                        f.message
                    )
                }),
            }
        }
    });
    (handle, readings)
}

/// The quantities the server's engine has names for that no reading of the stage had, each
/// named in a warning the first time in the run; the stage's `server_metrics_missing` tag
/// (`None` when nothing is missing).
pub(super) fn missing(readings: &[(f64, Reading)], path: &str, warned: &Warned) -> Option<String> {
    let missing = telemetry::missing(readings);
    for m in &missing {
        warn_once(warned, m, || {
            format!(
                "warning: {path} does not export {m}: no server.{} in the result file (its \
                 server_metrics_missing tag names it)",
                m.split(' ').next().unwrap_or_default()
            )
        });
    }
    (!missing.is_empty()).then(|| missing.join("; "))
}

/// Stops the scraper and returns what it read.
pub(super) fn finish(handle: JoinHandle<()>, readings: &Readings) -> Vec<(f64, Reading)> {
    handle.abort();
    readings
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default()
}
