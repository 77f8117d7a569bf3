//! The steady-state window of a probe: which requests were sent while the server was in its
//! steady state, leaving out the warm-up (the system filling) and the drain (arrivals stopped),
//! with the rule that chose the window in words.

use crate::analysis::stats::percentile_sorted;

/// A request's place in time, seconds from the probe's start.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RequestSpan {
    /// When it was sent.
    pub sent_s: f64,
    /// When it ended (success or failure).
    pub end_s: f64,
}

/// The part of a probe measured, and the rule that chose it.
#[derive(Clone, Debug, PartialEq)]
pub struct SteadyWindow {
    /// Start of the window, seconds from the probe's start (requests sent from here on count).
    pub start_s: f64,
    /// End of the window (requests sent before it count).
    pub end_s: f64,
    /// Indices of the requests in the window, in the order given.
    pub indices: Vec<usize>,
    /// The rule, in words: the same for every stage measured the same way, so that records
    /// compare (the numbers are in `start_s`, `end_s` and `lifetime_s`).
    pub rule: &'static str,
    /// The median request lifetime the warm-up and drain were sized by, seconds.
    pub lifetime_s: f64,
}

/// The rule of a steady window.
pub const STEADY_RULE: &str = "warm-up: the larger of one median request lifetime (of the first \
     tenth of requests) and a tenth of the arrivals; drain: the last median request lifetime of \
     the arrivals";

/// The rule when the steady window would be too small.
pub const WHOLE_RULE: &str =
    "whole stage: the steady window would have held fewer than 20 requests";

/// The fewest requests a window may hold; with fewer the whole probe is used (and the rule says so).
pub const MIN_WINDOW_REQUESTS: usize = 20;

/// The steady-state window of a probe whose arrivals ran from 0 to `arrivals_end_s`.
///
/// The warm-up lasts while the server fills: until the in-flight count has had time to reach
/// its level, which by Little's law takes about one request lifetime — the median latency of the
/// probe's first requests (the first tenth, at least one) — and at least a tenth of the
/// arrivals. The drain is the last median latency of the arrivals: requests sent then finish as
/// the load falls away after the last arrival, so they would see a lighter server. Requests
/// sent between the two are judged. A window that would hold fewer than
/// [`MIN_WINDOW_REQUESTS`] falls back to every request.
pub fn steady_window(spans: &[RequestSpan], arrivals_end_s: f64) -> SteadyWindow {
    let all = || (0..spans.len()).collect::<Vec<_>>();
    let mut order: Vec<usize> = all();
    crate::model::order::sort_by(&mut order, |&a, &b| {
        spans[a].sent_s.total_cmp(&spans[b].sent_s)
    });
    let first_n = order.len().div_ceil(10).max(1).min(order.len());
    let mut first_latencies: Vec<f64> = order[..first_n]
        .iter()
        .map(|&i| (spans[i].end_s - spans[i].sent_s).max(0.0))
        .collect();
    crate::model::order::sort_floats(&mut first_latencies);
    let lifetime_s = percentile_sorted(&first_latencies, 50.0).unwrap_or(0.0);
    let arrivals_end_s = arrivals_end_s.max(0.0);
    let start_s = lifetime_s.max(0.1 * arrivals_end_s);
    let end_s = arrivals_end_s - lifetime_s;
    let indices: Vec<usize> = (0..spans.len())
        .filter(|&i| spans[i].sent_s >= start_s && spans[i].sent_s < end_s)
        .collect();
    if indices.len() < MIN_WINDOW_REQUESTS {
        return SteadyWindow {
            start_s: 0.0,
            end_s: arrivals_end_s,
            rule: WHOLE_RULE,
            lifetime_s,
            indices: all(),
        };
    }
    SteadyWindow {
        start_s,
        end_s,
        rule: STEADY_RULE,
        lifetime_s,
        indices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(n: usize, gap_s: f64, life_s: f64) -> Vec<RequestSpan> {
        (0..n)
            .map(|i| RequestSpan {
                sent_s: i as f64 * gap_s,
                end_s: i as f64 * gap_s + life_s,
            })
            .collect()
    }

    #[test]
    fn steady_window_leaves_out_warm_up_and_drain() {
        // 100 requests over 10 s, each living 2 s: warm-up 2 s, drain the last 2 s.
        let s = spans(100, 0.1, 2.0);
        let w = steady_window(&s, 10.0);
        assert_eq!((w.start_s, w.end_s), (2.0, 8.0));
        assert_eq!(w.indices.first(), Some(&20));
        assert_eq!(w.indices.last(), Some(&79));
        assert_eq!(w.indices.len(), 60);
        assert_eq!((w.rule, w.lifetime_s), (STEADY_RULE, 2.0));
        // Short lives: the warm-up is a tenth of the arrivals.
        let w = steady_window(&spans(100, 0.1, 0.05), 10.0);
        assert_eq!((w.start_s, w.end_s), (1.0, 9.95));
        assert_eq!(w.indices.len(), 90);
    }

    #[test]
    fn steady_window_falls_back_to_the_whole_probe() {
        let s = spans(30, 0.1, 1.5);
        let w = steady_window(&s, 3.0);
        assert_eq!(w.indices.len(), 30);
        assert_eq!(w.rule, WHOLE_RULE);
        assert_eq!(steady_window(&[], 3.0).indices.len(), 0);
    }
}
