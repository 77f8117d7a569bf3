//! `--scrape-metrics`: the server's Prometheus metrics read once a second during a stage, on the
//! stage's clock, through the run's own client. A failed scrape is a warning (once per stage),
//! never fatal: the run goes on without telemetry.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use super::stage::Workload;
use crate::loadgen::telemetry::{self, Reading};

/// Readings so far: seconds since the stage's start, and the reading.
pub(super) type Readings = Arc<Mutex<Vec<(f64, Reading)>>>;

/// Starts scraping `path` every second from `start` until the handle is aborted.
pub(super) fn spawn(
    workload: Arc<Workload>,
    path: String,
    start: Instant,
) -> (JoinHandle<()>, Readings) {
    let readings: Readings = Arc::default();
    let store = readings.clone();
    let handle = tokio::spawn(async move {
        let (mut warned_failed, mut warned_unknown) = (false, false);
        for k in 0u64.. {
            tokio::time::sleep_until(start + Duration::from_secs(k)).await;
            let t = start.elapsed().as_secs_f64();
            match workload.client.get(&path).await {
                Ok(body) => {
                    let r = telemetry::read(&body);
                    if r.values.is_empty() && r.prefix_queries.is_none() && !warned_unknown {
                        eprintln!(
                            "warning: {path} has none of the metric names benchlens maps \
                             (vLLM, SGLang, TGI, llama.cpp): no server telemetry (it begins \
                             {:?})",
                            body.chars().take(80).collect::<String>()
                        );
                        warned_unknown = true;
                    }
                    if let Ok(mut v) = store.lock() {
                        v.push((t, r));
                    }
                }
                Err(f) if !warned_failed => {
                    eprintln!(
                        "warning: scraping {path} failed: {} (the run goes on without server \
                         telemetry)",
                        f.message
                    );
                    warned_failed = true;
                }
                Err(_) => {}
            }
        }
    });
    (handle, readings)
}

/// Stops the scraper and returns what it read.
pub(super) fn finish(handle: JoinHandle<()>, readings: &Readings) -> Vec<(f64, Reading)> {
    handle.abort();
    readings
        .lock()
        .map(|mut v| std::mem::take(&mut *v))
        .unwrap_or_default()
}
