//! A folder of result files: every file under it that may hold results, found recursively
//! for `compare --trend` and `site`.
//!
//! Taken: regular files ending in `.json`, `.jsonl`, `.csv`, `.tsv` or `.txt`
//! ([`crate::share::index::is_result_file_name`]), in path order, and symbolic links to such
//! files inside the folder; skipped: hidden files and folders (`.git`), symbolic links to
//! folders (no loops), symbolic links that lead out of the folder (with a warning: a link to
//! `/etc/passwd` must not end up in a published site or a log) and the site index itself.
//! Names that are not UTF-8 are kept as the system gives them (shown lossily).

use std::path::{Path, PathBuf};

use super::error::CliError;

/// The result files under a folder, and what was left out with a reason to say.
#[derive(Debug, Default)]
pub struct Found {
    /// The files, sorted by path.
    pub files: Vec<PathBuf>,
    /// One line per symbolic link skipped because it leads out of the folder.
    pub warnings: Vec<String>,
}

/// Every result file under `dir`, sorted by path. Errors ([`CliError::ReadDir`], exit 2) when
/// `dir` or a folder under it cannot be listed.
pub fn result_files(dir: &Path) -> Result<Found, CliError> {
    let root = std::fs::canonicalize(dir).map_err(|source| CliError::ReadDir {
        path: dir.display().to_string(),
        source,
    })?;
    let mut out = Found::default();
    walk(dir, &root, &mut out)?;
    out.files.sort();
    Ok(out)
}

fn walk(dir: &Path, root: &Path, out: &mut Found) -> Result<(), CliError> {
    let entries = std::fs::read_dir(dir).map_err(|source| CliError::ReadDir {
        path: dir.display().to_string(),
        source,
    })?;
    for entry in entries {
        let entry = entry.map_err(|source| CliError::ReadDir {
            path: dir.display().to_string(),
            source,
        })?;
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with('.') {
            continue;
        }
        let path = entry.path();
        // file_type() does not follow links: a linked folder is not walked into.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() {
            walk(&path, root, out)?;
            continue;
        }
        if !crate::share::index::is_result_file_name(&name) {
            continue;
        }
        if kind.is_file() {
            out.files.push(path);
        } else if kind.is_symlink() && path.is_file() {
            match std::fs::canonicalize(&path) {
                Ok(target) if target.starts_with(root) => out.files.push(path),
                Ok(target) => out.warnings.push(format!(
                    "{}: a symbolic link to {}, outside {}: skipped",
                    path.display(),
                    target.display(),
                    root.display()
                )),
                Err(_) => {}
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_result_files_recursively_and_skips_the_rest() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        for f in [
            "b/2026-11-02/run.json",
            "a.jsonl",
            "b/2026-11-01/run.JSON",
            "notes.md",
            ".git/x.json",
            "index.json",
            "c/table.csv",
        ] {
            let p = root.join(f);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(&p, "{}").unwrap();
        }
        let got: Vec<String> = result_files(root)
            .unwrap()
            .files
            .iter()
            .map(|p| p.strip_prefix(root).unwrap().display().to_string())
            .collect();
        assert_eq!(
            got,
            [
                "a.jsonl",
                "b/2026-11-01/run.JSON",
                "b/2026-11-02/run.json",
                "c/table.csv"
            ]
        );
        let e = result_files(&root.join("missing")).unwrap_err();
        assert!(
            e.to_string().ends_with("missing: cannot list the folder"),
            "{e}"
        );
        assert_eq!(e.exit_code(), std::process::ExitCode::from(2));
    }

    #[test]
    fn links_out_of_the_folder_are_skipped_with_a_warning_and_odd_names_kept() {
        use std::os::unix::ffi::OsStrExt;
        let outside = tempfile::tempdir().unwrap();
        let secret = outside.path().join("passwd.txt");
        std::fs::write(&secret, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("run.json"), "{}").unwrap();
        std::os::unix::fs::symlink(&secret, root.join("escape.txt")).unwrap();
        std::os::unix::fs::symlink(root.join("run.json"), root.join("inside.json")).unwrap();
        let odd = root.join(std::ffi::OsStr::from_bytes(b"r\xffun.csv"));
        std::fs::write(&odd, "a,b\n").unwrap();
        let found = result_files(root).unwrap();
        let names: Vec<&[u8]> = found
            .files
            .iter()
            .map(|p| p.file_name().unwrap().as_bytes())
            .collect();
        assert_eq!(names, [&b"inside.json"[..], b"run.json", b"r\xffun.csv"]);
        assert_eq!(found.warnings.len(), 1, "{:?}", found.warnings);
        assert!(
            found.warnings[0].contains("escape.txt: a symbolic link to")
                && found.warnings[0].contains("outside")
                && !found.warnings[0].contains("root:x"),
            "{:?}",
            found.warnings
        );
    }
}
