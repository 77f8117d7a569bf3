//! Deadlines of one request: the earliest of those that apply, and a future cut off at it with
//! the failure kind that deadline stands for (connect, first-token, idle or total timeout).

use std::future::Future;

use tokio::time::Instant;

use super::record::FailureKind;

/// A point in time and the failure a request meets when it passes.
pub(super) type Deadline = Option<(Instant, FailureKind)>;

/// The earlier of `a` and `b` (`b` standing for `b_kind`), or whichever is set.
pub(super) fn earliest(a: Deadline, b: Option<Instant>, b_kind: FailureKind) -> Deadline {
    match (a, b) {
        (Some(a), Some(b)) if b < a.0 => Some((b, b_kind)),
        (None, Some(b)) => Some((b, b_kind)),
        (a, _) => a,
    }
}

/// Runs `fut` until `deadline`; past it, the deadline's failure kind.
pub(super) async fn with_deadline<T>(
    deadline: Deadline,
    fut: impl Future<Output = T>,
) -> Result<T, FailureKind> {
    match deadline {
        Some((at, kind)) => tokio::time::timeout_at(at, fut).await.map_err(|_| kind),
        None => Ok(fut.await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_earliest_deadline_keeps_its_own_kind() {
        let now = Instant::now();
        let later = now + std::time::Duration::from_secs(1);
        let total = Some((later, FailureKind::TotalTimeout));
        assert_eq!(
            earliest(total, Some(now), FailureKind::IdleTimeout),
            Some((now, FailureKind::IdleTimeout))
        );
        assert_eq!(
            earliest(
                total,
                Some(later + std::time::Duration::from_secs(1)),
                FailureKind::IdleTimeout
            ),
            total
        );
        assert_eq!(
            earliest(None, Some(now), FailureKind::FirstTokenTimeout),
            Some((now, FailureKind::FirstTokenTimeout))
        );
        assert_eq!(earliest(total, None, FailureKind::IdleTimeout), total);
        assert_eq!(earliest(None, None, FailureKind::IdleTimeout), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_future_past_its_deadline_fails_with_the_deadlines_kind() {
        let at = Instant::now() + std::time::Duration::from_millis(10);
        let slow = tokio::time::sleep(std::time::Duration::from_secs(1));
        assert_eq!(
            with_deadline(Some((at, FailureKind::ConnectTimeout)), slow).await,
            Err(FailureKind::ConnectTimeout)
        );
        assert_eq!(with_deadline(None, async { 7 }).await, Ok(7));
    }
}
