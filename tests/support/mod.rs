//! Helpers shared by the load generator's command-line tests: child processes killed when a
//! test ends, and the mock started as a user starts it.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)] // each test file uses a part

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// The `benchlens` binary under test.
pub const BIN: &str = env!("CARGO_BIN_EXE_benchlens");

/// A child process that is killed (and reaped) when the test ends, even by a panic.
pub struct Killed(pub std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `benchlens mock --port 0` with `args` and returns it with the address it printed
/// (the first word of its first line that starts with `scheme://127.0.0.1:`).
pub fn spawn_mock(args: &[&str], scheme: &str) -> (Killed, String) {
    let mut mock = Killed(
        Command::new(BIN)
            .args(["mock", "--port", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let mut line = String::new();
    BufReader::new(mock.0.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let prefix = format!("{scheme}://127.0.0.1:");
    let url = line
        .split_whitespace()
        .find(|w| w.starts_with(&prefix))
        .unwrap_or_else(|| panic!("no {prefix} address in {line:?}"))
        .to_string();
    (mock, url)
}

/// A port on 127.0.0.1 that nothing listens on: bound, read and released at once (a server
/// started right after binds it; a client gets "connection refused").
pub fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}
