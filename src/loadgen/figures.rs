//! A stage's figures from its requests, the one way `run`, `sweep` (whose probes are `run`
//! stages) and `merge` make them: cancelled requests left out (they are neither successes nor
//! failures), the per-second series of every other request, and with a steady window the
//! metrics and the summary's view of the requests sent in it ([`stage_figures`]). A long `run`
//! makes the same figures while the stage runs, one request at a time
//! ([`crate::loadgen::run`]'s tally), into the same [`StageFigures`]. Pure; must not import app
//! code.

use std::collections::BTreeMap;

use super::capacity::{steady_window, RequestSpan, SteadyWindow};
use super::measure::{compute, Slo, StageMetrics};
use super::record::{FailureKind, RequestRecord};
use super::report::{PercentileMetric, SummaryView};
use super::timeline;

/// What a stage's figures are made with besides its requests.
#[derive(Clone, Debug)]
pub struct FigureOpts<'a> {
    /// The stage's wall time, seconds (replaced by the window's length with `steady`).
    pub duration_s: f64,
    /// The rate asked for (infinite for none).
    pub target_rate: f64,
    /// The percentiles reported.
    pub percentiles: &'a [f64],
    /// `--goodput`.
    pub slo: Option<Slo>,
    /// The latencies whose percentiles the summary shows.
    pub percentile_metrics: Vec<PercentileMetric>,
    /// `--steady-window`: the metrics and view of the requests sent in the steady window only
    /// (the series keeps every request).
    pub steady: bool,
}

/// A stage's figures.
#[derive(Clone, Debug, PartialEq)]
pub struct StageFigures {
    /// The metrics (of the steady window's requests, with one).
    pub metrics: StageMetrics,
    /// What the console summary and the vLLM-compatible file show.
    pub view: SummaryView,
    /// Every measured request, second by second ([`timeline::series`]).
    pub series: BTreeMap<String, Vec<f64>>,
    /// Requests cancelled by an interrupt, left out of every figure.
    pub cancelled: u64,
    /// The steady window, with one.
    pub window: Option<SteadyWindow>,
}

/// The figures of a stage's `requests` (in the stage's order); leaves in `requests` those the
/// metrics are of: without the cancelled ones, and with a steady window only those sent in it.
pub fn stage_figures(requests: &mut Vec<RequestRecord>, how: FigureOpts<'_>) -> StageFigures {
    let sent = requests.len();
    requests.retain(|r| {
        r.failure
            .as_ref()
            .is_none_or(|f| f.kind != FailureKind::Cancelled)
    });
    let cancelled = (sent - requests.len()) as u64;
    // Every request of the stage, warm-up and drain included.
    let series = timeline::series(requests);
    let window = how.steady.then(|| steady_window_of(requests));
    let duration_s = match &window {
        Some(w) => {
            // The window's indices are ascending: keep those requests, in order.
            let mut inside = vec![false; requests.len()];
            for &i in &w.indices {
                if let Some(k) = inside.get_mut(i) {
                    *k = true;
                }
            }
            let mut at = 0;
            requests.retain(|_| {
                at += 1;
                inside[at - 1]
            });
            window_seconds(w)
        }
        None => how.duration_s,
    };
    let metrics = compute(
        requests,
        duration_s,
        how.target_rate,
        how.percentiles,
        how.slo,
    );
    let view = SummaryView::new(
        how.percentile_metrics,
        how.percentiles.to_vec(),
        requests,
        cancelled,
    );
    StageFigures {
        metrics,
        view,
        series,
        cancelled,
        window,
    }
}

/// The length of a steady window, seconds: the duration its metrics are over.
pub fn window_seconds(w: &SteadyWindow) -> f64 {
    (w.end_s - w.start_s).max(1e-9)
}

/// The steady-state window of a stage's requests (see [`steady_window`]): each request's place
/// is its intended send time, so a client falling behind does not move the window, and the
/// arrivals end with the last intended send.
pub fn steady_window_of(reqs: &[RequestRecord]) -> SteadyWindow {
    let spans: Vec<RequestSpan> = reqs.iter().map(span_of).collect();
    window_of(&spans)
}

/// A request's place for the steady window: its intended send time and its end.
pub fn span_of(r: &RequestRecord) -> RequestSpan {
    RequestSpan {
        sent_s: r.intended_at_s,
        end_s: r.sent_at_s + r.e2el_s.unwrap_or(0.0),
    }
}

/// The steady window of a stage's requests' spans ([`steady_window`]), the arrivals ending with
/// the last intended send.
pub fn window_of(spans: &[RequestSpan]) -> SteadyWindow {
    let arrivals_end_s = spans.iter().map(|s| s.sent_s).fold(0.0, f64::max);
    steady_window(spans, arrivals_end_s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::loadgen::record::Failure;

    fn request(index: usize, at: f64, e2el: f64, cancelled: bool) -> RequestRecord {
        RequestRecord {
            index,
            intended_at_s: at,
            dispatched_at_s: at,
            sent_at_s: at,
            ttft_s: Some(e2el / 2.0),
            e2el_s: Some(e2el),
            failure: cancelled.then(|| Failure::new(FailureKind::Cancelled, "interrupted")),
            ..RequestRecord::default()
        }
    }

    fn how(steady: bool) -> FigureOpts<'static> {
        FigureOpts {
            duration_s: 10.0,
            target_rate: 4.0,
            percentiles: &[50.0, 99.0],
            slo: None,
            percentile_metrics: vec![PercentileMetric::Ttft],
            steady,
        }
    }

    #[test]
    fn cancelled_requests_are_in_no_figure_and_the_window_keeps_its_own() {
        let mut reqs: Vec<RequestRecord> = (0..40)
            .map(|i| request(i, i as f64 * 0.25, 0.5, i == 39))
            .collect();
        let all = stage_figures(&mut reqs.clone(), how(false));
        assert_eq!(all.cancelled, 1);
        assert_eq!(all.metrics.completed + all.metrics.failed, 39);
        assert_eq!(all.window, None);
        // The same as computing the figures of the requests left, by hand.
        let kept: Vec<RequestRecord> = reqs[..39].to_vec();
        assert_eq!(all.metrics, compute(&kept, 10.0, 4.0, &[50.0, 99.0], None));
        // Debug prints NaN as NaN: equal text, equal series.
        let text = |s: &BTreeMap<String, Vec<f64>>| format!("{s:?}");
        assert_eq!(text(&all.series), text(&timeline::series(&kept)));
        let steady = stage_figures(&mut reqs, how(true));
        let w = steady.window.clone().unwrap_or_else(|| panic!("no window"));
        assert_eq!(reqs.len(), w.indices.len());
        assert!(reqs.len() < 39, "{}", reqs.len());
        assert_eq!(steady.metrics.completed as usize, reqs.len());
        assert_eq!(steady.metrics.duration_s, window_seconds(&w));
        // The series keeps every measured request.
        assert_eq!(text(&steady.series), text(&all.series));
    }
}
