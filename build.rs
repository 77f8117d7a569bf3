//! Sets `BENCHLENS_COMMIT` for the crate: the commit `benchlens --version` prints and result
//! files record beside the version.
//!
//! In order: the `BENCHLENS_COMMIT` environment variable when set (a release build, or a build
//! from a source archive that knows its commit), else `git rev-parse --short HEAD` in a
//! checkout, else `unknown` (a crates.io or sdist build without `.git` and without the variable).
//! It re-runs only when the variable changes or when HEAD, the branch it names, or the packed
//! refs change; never on every build.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn main() {
    println!("cargo:rerun-if-env-changed=BENCHLENS_COMMIT");
    let dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_default());
    let from_env = std::env::var("BENCHLENS_COMMIT")
        .ok()
        .map(|c| c.trim().to_string())
        .filter(|c| !c.is_empty());
    // Only a checkout of this crate itself counts: not a parent repository that happens to
    // hold an unpacked source archive (cargo's registry, a vendored copy).
    let own_checkout = dir.join(".git").exists();
    let from_git = if from_env.is_none() && own_checkout {
        watch_head(&dir);
        git(&dir, &["rev-parse", "--short", "HEAD"])
    } else {
        None
    };
    // Only characters a commit name has: the value goes into HTML and JSON text as is.
    let commit: String = from_env
        .or(from_git)
        .unwrap_or_else(|| "unknown".into())
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | '+'))
        .take(40)
        .collect();
    let commit = if commit.is_empty() {
        "unknown".into()
    } else {
        commit
    };
    println!("cargo:rustc-env=BENCHLENS_COMMIT={commit}");
}

/// Asks cargo to re-run this script when the checked-out commit moves: HEAD itself (a
/// checkout), the branch file it names (a commit) and the packed refs (a branch packed by gc).
/// Paths come from git, so a worktree (where `.git` is a file) works too; only existing files
/// are named, as a missing one would make cargo re-run the script every build.
fn watch_head(dir: &Path) {
    let abs = |p: String| {
        let p = PathBuf::from(p);
        if p.is_absolute() {
            p
        } else {
            dir.join(p)
        }
    };
    let mut files = Vec::new();
    if let Some(head) = git(dir, &["rev-parse", "--git-path", "HEAD"]) {
        files.push(abs(head));
    }
    if let Some(branch) = git(dir, &["symbolic-ref", "-q", "HEAD"]) {
        if let Some(p) = git(dir, &["rev-parse", "--git-path", &branch]) {
            files.push(abs(p));
        }
    }
    if let Some(p) = git(dir, &["rev-parse", "--git-path", "packed-refs"]) {
        files.push(abs(p));
    }
    for f in files.into_iter().filter(|f| f.is_file()) {
        println!("cargo:rerun-if-changed={}", f.display());
    }
}
