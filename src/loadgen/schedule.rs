//! Arrival schedules and the dispatcher that follows them.
//!
//! A schedule is computed up front as absolute offsets from the stage start (vLLM's definition:
//! gamma-distributed inter-arrival times with shape `burstiness` and mean `1 / rate`; burstiness 1
//! is a Poisson process; an infinite rate sends everything at once), so a slow client shows up
//! as scheduling lag instead of a drifting rate. The dispatcher sleeps until each intended time,
//! then waits for a concurrency slot, and runs the request as its own task. It uses tokio's clock
//! so tests can run it with paused time. Must not import app code.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rand::rngs::StdRng;
use rand::SeedableRng;
use rand_distr::{Distribution, Gamma};
use tokio::sync::{watch, Semaphore};
use tokio::task::JoinSet;
use tokio::time::Instant;

/// When requests are to be sent, relative to the stage start.
#[derive(Clone, Debug, PartialEq)]
pub enum Arrivals {
    /// A fixed list of offsets, non-decreasing.
    Fixed(Vec<Duration>),
    /// As fast as the concurrency limit allows, until the deadline (infinite rate with a
    /// duration).
    Unbounded {
        /// Stop sending after this long.
        until: Duration,
    },
}

impl Arrivals {
    /// Number of planned requests, when fixed.
    pub fn len(&self) -> Option<usize> {
        match self {
            Arrivals::Fixed(v) => Some(v.len()),
            Arrivals::Unbounded { .. } => None,
        }
    }

    /// Whether no request is planned.
    pub fn is_empty(&self) -> bool {
        self.len() == Some(0)
    }
}

/// How many requests a stage sends.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum StageSize {
    /// Exactly this many.
    Count(usize),
    /// As many as arrive within this time.
    Duration(Duration),
}

/// Builds the arrival offsets for a rate (req/s, may be infinite) and burstiness.
pub fn arrivals(rate: f64, burstiness: f64, size: StageSize, seed: u64) -> Arrivals {
    if rate.is_infinite() {
        return match size {
            StageSize::Count(n) => Arrivals::Fixed(vec![Duration::ZERO; n]),
            StageSize::Duration(until) => Arrivals::Unbounded { until },
        };
    }
    let mut rng = StdRng::seed_from_u64(seed);
    // vLLM: theta = 1 / (rate * burstiness), interval ~ Gamma(shape = burstiness, scale = theta).
    let gamma = Gamma::new(burstiness, 1.0 / (rate * burstiness)).ok();
    let mut next = || gamma.as_ref().map_or(1.0 / rate, |g| g.sample(&mut rng));
    let mut offsets = Vec::new();
    let mut t = 0.0f64;
    match size {
        StageSize::Count(n) => {
            for _ in 0..n {
                offsets.push(Duration::from_secs_f64(t));
                t += next();
            }
        }
        StageSize::Duration(until) => {
            let limit = until.as_secs_f64();
            while t < limit {
                offsets.push(Duration::from_secs_f64(t));
                t += next();
            }
        }
    }
    Arrivals::Fixed(offsets)
}

/// How the request rate grows over a ramped stage (vLLM's `--ramp-up-strategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum RampStrategy {
    /// `start + (end − start) × progress`.
    Linear,
    /// `start × (end / start) ^ progress` (start must be above 0).
    Exponential,
}

/// A rate that grows from `start_rps` to `end_rps` over the stage.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ramp {
    /// How it grows.
    pub strategy: RampStrategy,
    /// Requests per second at the start.
    pub start_rps: f64,
    /// Requests per second at the end.
    pub end_rps: f64,
}

impl Ramp {
    /// The rate at `progress` (0 at the start of the stage, 1 at its end).
    pub fn rate_at(&self, progress: f64) -> f64 {
        let p = progress.clamp(0.0, 1.0);
        match self.strategy {
            RampStrategy::Linear => self.start_rps + (self.end_rps - self.start_rps) * p,
            RampStrategy::Exponential => self.start_rps * (self.end_rps / self.start_rps).powf(p),
        }
    }
}

/// Arrival offsets whose rate follows `ramp`. For a count of requests, as vLLM's client ramps:
/// each gap is drawn (gamma, as [`arrivals`]) at the rate of the share of requests sent so far.
/// For a duration, the rate follows the clock: unit gaps are drawn and each arrival is the time
/// at which the expected count ∫ rate dt reaches their sum (so a ramp from 0 starts slowly and
/// still starts).
pub fn ramp_arrivals(ramp: Ramp, burstiness: f64, size: StageSize, seed: u64) -> Arrivals {
    let mut rng = StdRng::seed_from_u64(seed);
    let unit = Gamma::new(burstiness, 1.0 / burstiness).ok();
    let mut unit_gap = || unit.as_ref().map_or(1.0, |g| g.sample(&mut rng));
    let mut offsets = Vec::new();
    match size {
        StageSize::Count(n) => {
            let mut t = 0.0f64;
            for i in 0..n {
                offsets.push(Duration::from_secs_f64(t));
                let rate = ramp.rate_at(i as f64 / n as f64).max(1e-9);
                t += unit_gap() / rate;
            }
        }
        StageSize::Duration(until) => {
            let limit = until.as_secs_f64();
            let total = ramp.expected(limit, limit);
            let mut x = 0.0f64;
            while x < total {
                offsets.push(Duration::from_secs_f64(ramp.time_of(x, limit)));
                x += unit_gap();
            }
        }
    }
    Arrivals::Fixed(offsets)
}

impl Ramp {
    /// Expected arrivals by time `t` of a ramp lasting `limit` seconds: ∫₀ᵗ rate(s / limit) ds.
    fn expected(&self, t: f64, limit: f64) -> f64 {
        let (a, b) = (self.start_rps, self.end_rps);
        match self.strategy {
            RampStrategy::Linear => a * t + (b - a) * t * t / (2.0 * limit),
            RampStrategy::Exponential if (b / a - 1.0).abs() < 1e-12 => a * t,
            RampStrategy::Exponential => {
                let k = (b / a).ln();
                a * limit / k * ((k * t / limit).exp() - 1.0)
            }
        }
    }

    /// The time at which [`expected`](Ramp::expected) reaches `x` (bisection: it only grows).
    fn time_of(&self, x: f64, limit: f64) -> f64 {
        let (mut lo, mut hi) = (0.0f64, limit);
        for _ in 0..64 {
            let mid = 0.5 * (lo + hi);
            if self.expected(mid, limit) < x {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        hi
    }
}

/// When one request was meant to go and when the dispatcher actually let it go.
#[derive(Clone, Copy, Debug)]
pub struct Dispatch {
    /// Index of the request within the stage.
    pub index: usize,
    /// The stage start.
    pub stage_start: Instant,
    /// The scheduled send time.
    pub intended: Instant,
    /// When the dispatcher woke for it.
    pub dispatched: Instant,
    /// The client's own scheduling lag: how late the dispatcher woke after the request could
    /// first have gone (its intended time, or the previous request's release when the
    /// dispatcher was still waiting for a concurrency slot).
    pub lag: Duration,
    /// When it got a concurrency slot and was handed to its task.
    pub released: Instant,
}

/// What the dispatcher did.
#[derive(Clone, Debug, Default)]
pub struct DriveSummary {
    /// Requests released.
    pub released: usize,
    /// Whether the stop signal cut the stage short.
    pub stopped: bool,
    /// Largest number of requests in flight at once.
    pub peak_in_flight: usize,
}

/// How long requests in flight get after a stop to end by themselves before they are aborted.
pub const CANCEL_GRACE: Duration = Duration::from_millis(200);

/// Sends requests on schedule with at most `limit` in flight, until the plan is done or `stop`
/// turns true. On stop, requests still in flight have [`CANCEL_GRACE`] to end by themselves
/// (recording themselves as cancelled), then their tasks are aborted, so the caller can write
/// what finished within a bounded time. Returns once every released request has finished.
pub async fn drive<F, Fut>(
    plan: &Arrivals,
    limit: Option<usize>,
    stop: &mut watch::Receiver<bool>,
    send: F,
) -> DriveSummary
where
    F: Fn(Dispatch) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let start = Instant::now();
    let sem = Arc::new(Semaphore::new(limit.unwrap_or(Semaphore::MAX_PERMITS)));
    let cap = limit.unwrap_or(Semaphore::MAX_PERMITS);
    let mut tasks = JoinSet::new();
    let mut summary = DriveSummary::default();
    let mut index = 0usize;
    let mut prev_released: Option<Instant> = None;
    loop {
        if *stop.borrow() {
            summary.stopped = true;
            break;
        }
        let intended = match plan {
            Arrivals::Fixed(v) => match v.get(index) {
                Some(off) => start + *off,
                None => break,
            },
            Arrivals::Unbounded { until } => {
                if Instant::now() >= start + *until {
                    break;
                }
                start
            }
        };
        if Instant::now() < intended {
            tokio::select! {
                _ = tokio::time::sleep_until(intended) => {}
                _ = stop_requested(stop) => continue,
            }
        }
        let dispatched = Instant::now();
        let ready = prev_released.map_or(intended, |p| p.max(intended));
        // Reap finished tasks so the JoinSet does not grow without bound.
        while tasks.try_join_next().is_some() {}
        let permit = tokio::select! {
            p = sem.clone().acquire_owned() => match p { Ok(p) => p, Err(_) => break },
            _ = stop_requested(stop) => continue,
            _ = deadline(plan, start) => break,
        };
        summary.peak_in_flight = summary.peak_in_flight.max(cap - sem.available_permits());
        let released = Instant::now();
        prev_released = Some(released);
        let d = Dispatch {
            index,
            stage_start: start,
            intended,
            dispatched,
            lag: dispatched.saturating_duration_since(ready),
            released,
        };
        let fut = send(d);
        tasks.spawn(async move {
            fut.await;
            drop(permit);
        });
        summary.released += 1;
        index += 1;
    }
    // On stop, requests get CANCEL_GRACE to record themselves as cancelled (a request future
    // that watches the stop signal ends at once); whatever is left then is aborted.
    let mut grace_stop = stop.clone();
    let grace = async move {
        stop_requested(&mut grace_stop).await;
        tokio::time::sleep(CANCEL_GRACE).await;
    };
    tokio::pin!(grace);
    let mut aborted = false;
    loop {
        tokio::select! {
            next = tasks.join_next() => if next.is_none() { break },
            () = &mut grace, if !aborted => {
                aborted = true;
                tasks.abort_all();
            }
        }
    }
    summary.stopped |= *stop.borrow();
    summary
}

/// Resolves once `stop` is true; never if its sender is gone without having said stop (so a
/// dropped sender cannot make the dispatcher spin).
pub async fn stop_requested(stop: &mut watch::Receiver<bool>) {
    if stop.wait_for(|v| *v).await.is_err() {
        std::future::pending::<()>().await;
    }
}

async fn deadline(plan: &Arrivals, start: Instant) {
    match plan {
        Arrivals::Unbounded { until } => tokio::time::sleep_until(start + *until).await,
        Arrivals::Fixed(_) => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn ramps_grow_the_rate_as_vllm_does() {
        let lin = Ramp {
            strategy: RampStrategy::Linear,
            start_rps: 2.0,
            end_rps: 10.0,
        };
        assert_eq!(
            (lin.rate_at(0.0), lin.rate_at(0.5), lin.rate_at(1.0)),
            (2.0, 6.0, 10.0)
        );
        let exp = Ramp {
            strategy: RampStrategy::Exponential,
            start_rps: 1.0,
            end_rps: 100.0,
        };
        assert!((exp.rate_at(0.5) - 10.0).abs() < 1e-9);
        // Constant gaps (huge burstiness): each gap is one over the rate at its progress.
        let Arrivals::Fixed(at) = ramp_arrivals(lin, 1e9, StageSize::Count(5), 1) else {
            panic!("a count makes fixed arrivals");
        };
        let gaps: Vec<f64> = at.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect();
        let want = [1.0 / 2.0, 1.0 / 3.6, 1.0 / 5.2, 1.0 / 6.8];
        for (g, w) in gaps.iter().zip(want) {
            assert!((g - w).abs() < 1e-3, "{gaps:?}");
        }
        // A ramp from 0 still starts: rate 5.25·t over 2 s, so ∫ = 2.625·t², 10.5 in all;
        // constant unit gaps put one arrival at 0 and one at each whole count 1 … 10.
        let zero = Ramp {
            start_rps: 0.0,
            end_rps: 10.5,
            ..lin
        };
        let two_s = StageSize::Duration(Duration::from_secs(2));
        let Arrivals::Fixed(at) = ramp_arrivals(zero, 1e9, two_s, 1) else {
            panic!("a duration at a finite rate makes fixed arrivals");
        };
        assert_eq!(at.len(), 11);
        // Burstiness 1e9 leaves each unit gap a 3e-5 spread.
        assert!((at[1].as_secs_f64() - (1.0f64 / 2.625).sqrt()).abs() < 1e-4);
    }

    use std::sync::Mutex;

    fn intervals(a: &Arrivals) -> Vec<f64> {
        let Arrivals::Fixed(v) = a else {
            panic!("fixed")
        };
        v.windows(2).map(|w| (w[1] - w[0]).as_secs_f64()).collect()
    }

    fn mean_cv(x: &[f64]) -> (f64, f64) {
        let n = x.len() as f64;
        let m = x.iter().sum::<f64>() / n;
        let var = x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / n;
        (m, var.sqrt() / m)
    }

    #[test]
    fn poisson_intervals_have_the_right_mean_and_unit_cv() {
        let a = arrivals(20.0, 1.0, StageSize::Count(20_001), 7);
        let (m, cv) = mean_cv(&intervals(&a));
        assert!((m - 0.05).abs() < 0.05 * 0.03, "mean {m}");
        assert!((cv - 1.0).abs() < 0.03, "cv {cv}");
    }

    #[test]
    fn gamma_burstiness_sets_the_cv() {
        // Gamma(shape k): cv = 1/sqrt(k). k = 4 -> 0.5, k = 0.25 -> 2.
        for (k, want) in [(4.0, 0.5), (0.25, 2.0)] {
            let a = arrivals(10.0, k, StageSize::Count(40_001), 3);
            let (m, cv) = mean_cv(&intervals(&a));
            assert!((m - 0.1).abs() < 0.1 * 0.05, "k {k} mean {m}");
            assert!((cv - want).abs() < want * 0.06, "k {k} cv {cv}");
        }
    }

    #[test]
    fn schedules_are_seeded_and_bounded() {
        let a = arrivals(5.0, 1.0, StageSize::Count(50), 1);
        assert_eq!(a, arrivals(5.0, 1.0, StageSize::Count(50), 1));
        assert_ne!(a, arrivals(5.0, 1.0, StageSize::Count(50), 2));
        let Arrivals::Fixed(d) =
            arrivals(5.0, 1.0, StageSize::Duration(Duration::from_secs(100)), 1)
        else {
            panic!()
        };
        assert!(d.iter().all(|o| *o < Duration::from_secs(100)));
        assert!((400..600).contains(&d.len()), "{}", d.len());
        assert_eq!(
            arrivals(f64::INFINITY, 1.0, StageSize::Count(3), 0).len(),
            Some(3)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn dispatch_follows_the_absolute_schedule() {
        let plan = arrivals(100.0, 1.0, StageSize::Count(500), 11);
        let Arrivals::Fixed(offsets) = plan.clone() else {
            panic!()
        };
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (_tx, mut rx) = watch::channel(false);
        let s = seen.clone();
        let summary = drive(&plan, None, &mut rx, move |d| {
            let s = s.clone();
            async move {
                s.lock().unwrap().push((
                    d.index,
                    d.dispatched - d.stage_start,
                    d.dispatched - d.intended,
                ));
                tokio::time::sleep(Duration::from_millis(30)).await;
            }
        })
        .await;
        assert_eq!(summary.released, 500);
        let seen = seen.lock().unwrap();
        for (i, at, lag) in seen.iter() {
            // Paused time: the dispatcher wakes exactly on time (to the millisecond timer tick).
            assert!(lag.as_secs_f64() < 0.0011, "lag {lag:?}");
            assert!((at.as_secs_f64() - offsets[*i].as_secs_f64()).abs() < 0.0011);
        }
        // 500 requests at 100/s span about 5 s.
        let last = offsets[499].as_secs_f64();
        assert!((4.0..6.0).contains(&last), "{last}");
    }

    #[tokio::test(start_paused = true)]
    async fn concurrency_cap_is_never_exceeded() {
        let plan = arrivals(f64::INFINITY, 1.0, StageSize::Count(200), 0);
        let in_flight = Arc::new(Mutex::new((0usize, 0usize)));
        let (_tx, mut rx) = watch::channel(false);
        let f = in_flight.clone();
        let start = Instant::now();
        let summary = drive(&plan, Some(8), &mut rx, move |_| {
            let f = f.clone();
            async move {
                {
                    let mut g = f.lock().unwrap();
                    g.0 += 1;
                    g.1 = g.1.max(g.0);
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
                f.lock().unwrap().0 -= 1;
            }
        })
        .await;
        assert_eq!(summary.released, 200);
        assert_eq!(in_flight.lock().unwrap().1, 8);
        assert_eq!(summary.peak_in_flight, 8);
        // 200 requests, 8 at a time, 100 ms each: 25 waves = 2.5 s.
        let took = start.elapsed().as_secs_f64();
        assert!((2.5..2.6).contains(&took), "{took}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_dropped_stop_sender_is_not_a_stop() {
        let plan = arrivals(100.0, 1.0, StageSize::Count(50), 2);
        let (tx, mut rx) = watch::channel(false);
        drop(tx);
        let summary = drive(&plan, Some(2), &mut rx, |_| {
            tokio::time::sleep(Duration::from_millis(10))
        })
        .await;
        assert_eq!(summary.released, 50);
        assert!(!summary.stopped);
    }

    #[tokio::test(start_paused = true)]
    async fn unbounded_stage_stops_at_its_deadline_and_stop_cancels() {
        let plan = Arrivals::Unbounded {
            until: Duration::from_secs(1),
        };
        let (_tx, mut rx) = watch::channel(false);
        let summary = drive(&plan, Some(4), &mut rx, |_| {
            tokio::time::sleep(Duration::from_millis(100))
        })
        .await;
        // 4 slots, 100 ms each, for 1 s: 40 requests.
        assert!(
            (40..=44).contains(&summary.released),
            "{}",
            summary.released
        );

        let plan = arrivals(10.0, 1.0, StageSize::Count(1000), 5);
        let (tx, mut rx) = watch::channel(false);
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            let _ = tx.send(true);
        });
        let summary = drive(&plan, None, &mut rx, |_| {
            tokio::time::sleep(Duration::from_secs(3600))
        })
        .await;
        assert!(summary.stopped);
        assert!(
            summary.released > 5 && summary.released < 50,
            "{}",
            summary.released
        );
    }
}
