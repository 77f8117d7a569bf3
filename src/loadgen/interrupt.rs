//! The signals that end a run early, handled one way for `run` and `sweep`: SIGINT (Ctrl-C),
//! SIGTERM (Kubernetes stopping a pod, `kill`) and SIGHUP (a closed terminal). The first stops
//! sending and has what was measured written, marked partial with the signal's name; a second
//! (any of the three) exits at once, with the shell's code for that signal (128 + its number),
//! after waiting at most [`SECOND_SIGNAL_WAIT`] for the files of the first.
//!
//! The signal names, exit codes and messages are pure ([`Interrupt`]); [`listen`] is the one
//! place that waits for the signals.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::watch;

/// A signal that ends a run early.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interrupt {
    /// SIGINT: Ctrl-C.
    Int,
    /// SIGTERM: `kill`, a Kubernetes pod being stopped.
    Term,
    /// SIGHUP: the terminal was closed.
    Hup,
}

impl Interrupt {
    /// The signal's name (`SIGTERM`), as written in the result file's `tag.interrupted_by`.
    pub fn name(self) -> &'static str {
        match self {
            Interrupt::Int => "SIGINT",
            Interrupt::Term => "SIGTERM",
            Interrupt::Hup => "SIGHUP",
        }
    }

    /// The exit code a shell gives a process ended by this signal: 128 + the signal's number.
    pub fn exit_code(self) -> u8 {
        match self {
            Interrupt::Int => 130,
            Interrupt::Term => 143,
            Interrupt::Hup => 129,
        }
    }

    /// What is printed on stderr when the first signal is taken.
    pub fn notice(self) -> String {
        match self {
            Interrupt::Int => {
                "interrupted: writing what was measured (Ctrl-C again to quit at once)".into()
            }
            s => format!(
                "interrupted by {}: writing what was measured (send it again to quit at once)",
                s.name()
            ),
        }
    }
}

/// Longest wait of a second signal for the partial files of the first one.
pub const SECOND_SIGNAL_WAIT: Duration = Duration::from_secs(1);

/// The three signals, listened to from the moment this is made (so one that comes before the
/// listening task first runs is not lost to the default action, which ends the process).
pub struct Signals {
    #[cfg(unix)]
    streams: [(Interrupt, tokio::signal::unix::Signal); 3],
}

impl Signals {
    /// Starts listening; must be called within a tokio runtime. `None` when the system refuses
    /// (the run then goes on without an early end).
    pub fn new() -> Option<Signals> {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            Some(Signals {
                streams: [
                    (Interrupt::Int, signal(SignalKind::interrupt()).ok()?),
                    (Interrupt::Term, signal(SignalKind::terminate()).ok()?),
                    (Interrupt::Hup, signal(SignalKind::hangup()).ok()?),
                ],
            })
        }
        #[cfg(not(unix))]
        {
            Some(Signals {})
        }
    }

    /// The next signal to arrive.
    pub async fn next(&mut self) -> Interrupt {
        #[cfg(unix)]
        {
            let [(a, sa), (b, sb), (c, sc)] = &mut self.streams;
            tokio::select! {
                _ = sa.recv() => *a,
                _ = sb.recv() => *b,
                _ = sc.recv() => *c,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            Interrupt::Int
        }
    }
}

/// Which signal interrupted a run, once one did: set before the stop flag turns true.
pub type Taken = Arc<OnceLock<Interrupt>>;

/// Spawns the listener: the first signal is printed ([`Interrupt::notice`]), kept in the
/// returned [`Taken`] and sent on `stop` as `true`; a second exits the process with its code
/// once `written` turns true, or [`SECOND_SIGNAL_WAIT`] after (at once without `written`). The
/// task is to be aborted when the run ends.
pub fn listen(
    stop: watch::Sender<bool>,
    written: Option<watch::Receiver<bool>>,
) -> (tokio::task::JoinHandle<()>, Taken) {
    let signals = Signals::new();
    let taken: Taken = Arc::default();
    let cell = taken.clone();
    let task = tokio::spawn(async move {
        let Some(mut signals) = signals else { return };
        let first = signals.next().await;
        eprintln!("{}", first.notice());
        let _ = cell.set(first);
        let _ = stop.send(true);
        let second = signals.next().await;
        if let Some(mut w) = written {
            let _ = tokio::time::timeout(SECOND_SIGNAL_WAIT, w.wait_for(|w| *w)).await;
        }
        std::process::exit(i32::from(second.exit_code()));
    });
    (task, taken)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_signal_has_its_name_and_shell_exit_code() {
        let all = [Interrupt::Int, Interrupt::Term, Interrupt::Hup];
        let named: Vec<(&str, u8)> = all.iter().map(|s| (s.name(), s.exit_code())).collect();
        assert_eq!(
            named,
            vec![("SIGINT", 130), ("SIGTERM", 143), ("SIGHUP", 129)]
        );
        assert!(Interrupt::Int.notice().contains("Ctrl-C again"));
        assert_eq!(
            Interrupt::Term.notice(),
            "interrupted by SIGTERM: writing what was measured (send it again to quit at once)"
        );
    }
}
