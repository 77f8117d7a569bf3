//! A folder of result files: every file under it that may hold results, found recursively
//! for `compare --trend` and `site`.
//!
//! Taken: regular files ending in `.json`, `.jsonl`, `.csv`, `.tsv` or `.txt`
//! ([`crate::share::index::is_result_file_name`]), in path order; skipped: hidden files and
//! folders (`.git`), symbolic links to folders (no loops) and the site index itself.

use std::path::{Path, PathBuf};

use super::error::CliError;

/// Every result file under `dir`, sorted by path. Errors ([`CliError::ReadDir`], exit 2) when
/// `dir` or a folder under it cannot be listed.
pub fn result_files(dir: &Path) -> Result<Vec<PathBuf>, CliError> {
    let mut out = Vec::new();
    walk(dir, &mut out)?;
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), CliError> {
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
            walk(&path, out)?;
        } else if (kind.is_file() || (kind.is_symlink() && path.is_file()))
            && crate::share::index::is_result_file_name(&name)
        {
            out.push(path);
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
}
