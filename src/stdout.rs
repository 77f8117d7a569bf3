//! Standard output that does not panic when its reader has gone: `benchlens inspect … | head`
//! closes the pipe after ten lines, and `print!` would panic on the next write ("failed
//! printing to stdout: Broken pipe"). Here a closed pipe ends the output quietly, as in the
//! usual command-line tools; any other write error is said once on standard error.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

/// Set once standard output failed, so later writes are skipped and the error is said once.
static CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to standard output as is (no newline added), flushing it.
pub fn print(text: &str) {
    if CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        CLOSED.store(true, Ordering::Relaxed);
        if e.kind() != ErrorKind::BrokenPipe {
            // Standard error may be gone as well; nothing is left to tell then.
            let _ = writeln!(
                std::io::stderr(),
                "warning: could not write to standard output: {e}"
            );
        }
    }
}

/// Writes `text` and a newline to standard output (see [`print`]).
pub fn println(text: &str) {
    print(&format!("{text}\n"));
}

/// Whether writing to standard output has failed (the reader closed the pipe, or another
/// error): commands that only print can stop early.
pub fn closed() -> bool {
    CLOSED.load(Ordering::Relaxed)
}
