//! Capacity search: the highest load whose requests meet the service-level objectives.
//!
//! Three pure pieces that `benchlens sweep` strings together, each testable without a server:
//!
//! - [`CapacitySlo`]: the objectives, in vLLM's `--goodput` syntax (`ttft:500` — each request's
//!   TTFT at most 500 ms) plus percentile objectives (`p99_ttft:500` — the stage's 99th
//!   percentile at most 500 ms) and the share of requests that must be good (`--min-good-pct`,
//!   99 by default). A failed request is never good.
//! - [`steady_window`]: which requests of a probe were sent while the server was in its steady
//!   state: those of the warm-up (the system filling) and of the drain (arrivals stopped, the
//!   load falling) are left out, and the rule that chose the window is recorded with it.
//! - [`Search`]: brackets the capacity by multiplying the load until a probe fails, bisects the
//!   bracket (geometric midpoints, since capacities span orders of magnitude) until it is
//!   narrower than the tolerance, then repeats the probes on both sides of the knee. The
//!   capacity is the highest load that passed every one of its probes; the lowest load that
//!   failed bounds it from above, and the pair is the uncertainty reported.

mod answer;
mod objectives;
mod search;
mod window;

pub use answer::{Capacity, ProbeOutcome, Tally};
pub use objectives::{
    judge, parse_item, Bounded, CapacitySlo, Item, Objective, ObjectiveCheck, Objectives,
    RequestOutcome, SloError, SloMetric, Verdict,
};
pub use search::{Search, SearchConfig, SearchConfigError, Step};
pub use window::{
    steady_window, RequestSpan, SteadyWindow, MIN_WINDOW_REQUESTS, STEADY_RULE, WHOLE_RULE,
};
