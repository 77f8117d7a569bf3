//! Injected faults (`--error-rate`, `--drop-rate`, `--reset-rate`, `--stall-rate`,
//! `--malformed-rate`): which request meets which fault, chosen by a low-discrepancy sequence so
//! the counts are exact, and the socket wrapper that turns a connection's close into a TCP
//! reset. What each fault does halfway through a stream is in [`super::body`].

use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::loadgen::stamp::StampedStream;

/// A fault injected into one request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Fault {
    /// Served as asked.
    None,
    /// HTTP 500 (`--error-rate`).
    Error,
    /// The connection dropped halfway through the stream (`--drop-rate`).
    Drop,
    /// The connection reset (TCP RST) halfway through (`--reset-rate`).
    Reset,
    /// A pause of `--stall-ms` halfway through (`--stall-rate`).
    Stall,
    /// A malformed event halfway through (`--malformed-rate`).
    Malformed,
}

/// Which generation request meets which fault.
#[derive(Debug)]
pub(super) struct FaultPlan {
    /// Cumulative bands: error, then drop, reset, stall, malformed.
    bands: [f64; 5],
    /// Length of an injected stall.
    pub(super) stall: Duration,
    /// Generation requests seen, numbering the sequence.
    requests: AtomicU64,
}

impl FaultPlan {
    /// A plan from the five rates (error, drop, reset, stall, malformed; each clamped to
    /// 0..=1) and the stall length.
    pub(super) fn new(rates: [f64; 5], stall: Duration) -> FaultPlan {
        let mut acc = 0.0;
        FaultPlan {
            bands: rates.map(|r| {
                acc += r.clamp(0.0, 1.0);
                acc
            }),
            stall,
            requests: AtomicU64::new(0),
        }
    }

    /// The fault of the next generation request.
    pub(super) fn next(&self) -> Fault {
        self.fault(self.requests.fetch_add(1, Ordering::Relaxed))
    }

    /// The n-th request's fault: a low-discrepancy sequence (n·φ mod 1) falls into each band
    /// in proportion to its width, so the counts are exact, not just on average.
    fn fault(&self, n: u64) -> Fault {
        let u = (n as f64 * 0.618_033_988_749_894_9).fract();
        let kinds = [
            Fault::Error,
            Fault::Drop,
            Fault::Reset,
            Fault::Stall,
            Fault::Malformed,
        ];
        self.bands
            .iter()
            .zip(kinds)
            .find(|(edge, _)| u < **edge)
            .map_or(Fault::None, |(_, k)| k)
    }
}

/// The connection's socket; when `reset` is set it closes with an RST instead of a FIN.
pub(super) struct ResetOnDrop {
    /// The socket.
    pub(super) stream: StampedStream,
    /// Set when the connection must end with a reset.
    pub(super) reset: Arc<AtomicBool>,
}

impl Drop for ResetOnDrop {
    fn drop(&mut self) {
        if self.reset.load(Ordering::Relaxed) {
            let _ = self.stream.get_ref().set_zero_linger();
        }
    }
}

impl AsyncRead for ResetOnDrop {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for ResetOnDrop {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_come_in_exact_proportions() {
        let plan = FaultPlan::new([0.1, 0.2, 0.0, 0.3, 2.0], Duration::ZERO);
        let mut counts = std::collections::HashMap::new();
        for _ in 0..1000 {
            *counts.entry(plan.next()).or_insert(0) += 1;
        }
        // Rates above 1 are clamped: malformed takes the remaining 40 %.
        let count = |f| counts.get(&f).copied().unwrap_or(0);
        assert_eq!(
            [
                Fault::Error,
                Fault::Drop,
                Fault::Reset,
                Fault::Stall,
                Fault::Malformed,
                Fault::None
            ]
            .map(count),
            [100, 200, 0, 300, 400, 0]
        );
    }
}
