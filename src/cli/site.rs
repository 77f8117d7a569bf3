//! `benchlens site DIR -o OUT`: a static dashboard of a folder of results. OUT gets the built
//! explorer (Trunk's `dist/`), a copy of every readable result file under DIR in
//! `results/` (same relative paths) and `results/index.json` listing them
//! ([`crate::share::index`]). Its `index.html` opens, when given no query, on
//! `?view=trends&data=results/index.json`: the explorer fetches the index, then every file
//! it lists, and shows each configuration's trend with its change points.
//!
//! The explorer is found at `--explorer DIR`, else `dist/` in the working directory, else
//! `dist/` beside the binary or two levels up (`target/release/benchlens` in a checkout).

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Args;

use super::error::{CliError, SiteError};
use crate::share::index::{index_json, path_reference, INDEX_FILE_NAME};

/// The folder of the site that holds the result files and their index.
pub const RESULTS_DIR: &str = "results";

/// The query the site's start page opens with.
pub const START_QUERY: &str = "view=trends&data=results%2Findex.json";

/// Arguments of `benchlens site`.
#[derive(Debug, Args)]
pub struct SiteArgs {
    /// The folder of result files (searched recursively).
    pub dir: PathBuf,
    /// The site folder to write; must not exist or be empty.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// The built explorer (`make build` writes `dist/`).
    #[arg(long, value_name = "DIST")]
    pub explorer: Option<PathBuf>,
}

/// The explorer build to copy: `--explorer`, or the first of the default places holding an
/// `index.html`.
pub fn find_explorer(given: Option<&Path>) -> Result<PathBuf, SiteError> {
    let mut tried: Vec<PathBuf> = Vec::new();
    if let Some(g) = given {
        tried.push(g.to_path_buf());
    } else {
        tried.push(PathBuf::from("dist"));
        if let Some(bin_dir) = std::env::current_exe()
            .ok()
            .and_then(|e| e.parent().map(Path::to_path_buf))
        {
            tried.push(bin_dir.join("dist"));
            if let Some(up) = bin_dir.parent().and_then(Path::parent) {
                tried.push(up.join("dist"));
            }
        }
    }
    tried
        .iter()
        .find(|p| p.join("index.html").is_file())
        .cloned()
        .ok_or_else(|| SiteError::NoExplorer {
            tried: tried
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        })
}

fn write_err(path: &Path) -> impl FnOnce(std::io::Error) -> SiteError + '_ {
    move |source| SiteError::Write {
        path: path.display().to_string(),
        source,
    }
}

/// Copies the folder `from` into `to` (created), following no links.
fn copy_tree(from: &Path, to: &Path) -> Result<(), SiteError> {
    std::fs::create_dir_all(to).map_err(write_err(to))?;
    for entry in std::fs::read_dir(from).map_err(write_err(from))? {
        let entry = entry.map_err(write_err(from))?;
        let target = to.join(entry.file_name());
        let kind = entry.file_type().map_err(write_err(&target))?;
        if kind.is_dir() {
            copy_tree(&entry.path(), &target)?;
        } else if entry.path().is_file() {
            std::fs::copy(entry.path(), &target).map_err(write_err(&target))?;
        }
    }
    Ok(())
}

/// The explorer's `index.html` with a `generator` meta naming this benchlens build and a
/// script that, when the page has no query, switches to [`START_QUERY`] before the app starts
/// (so a plain link opens on the trends).
pub fn start_page(explorer_index: &str) -> String {
    let script = format!(
        "<meta name=\"generator\" content=\"benchlens {}\"><script>if(!location.search&&!location.hash){{history.replaceState(null,\"\",\"?{START_QUERY}\")}}</script>",
        crate::VERSION_TEXT
    );
    // Right after `<head …>`, so it runs before any of the page's own scripts.
    let head_end = explorer_index
        .find("<head")
        .and_then(|i| explorer_index[i..].find('>').map(|j| i + j + 1));
    match head_end {
        Some(at) => format!("{}{script}{}", &explorer_index[..at], &explorer_index[at..]),
        None => format!("{script}{explorer_index}"),
    }
}

/// What `site` wrote.
#[derive(Debug, PartialEq)]
pub struct SiteSummary {
    /// Result files copied and listed, relative to DIR with `/` separators.
    pub files: Vec<String>,
    /// Files under DIR left out because they could not be read as results.
    pub skipped: usize,
}

/// Writes the site (see the module doc).
pub fn write_site(dir: &Path, out: &Path, explorer: &Path) -> Result<SiteSummary, CliError> {
    if out.exists() {
        let empty = std::fs::read_dir(out)
            .map(|mut d| d.next().is_none())
            .unwrap_or(false);
        if !empty {
            return Err(SiteError::OutputNotEmpty(out.display().to_string()).into());
        }
    }
    let found = super::results_dir::result_files(dir)?;
    for w in &found.warnings {
        eprintln!("warning: {w}");
    }
    let mut files = Vec::new();
    let mut skipped = found.warnings.len();
    for path in &found.files {
        let shown = path.display().to_string();
        match super::convert::ingest_file(path, &shown) {
            Ok(got) if !got.records.is_empty() => {
                let rel = path.strip_prefix(dir).unwrap_or(path);
                let rel: Vec<String> = rel
                    .components()
                    .map(|c| c.as_os_str().to_string_lossy().into_owned())
                    .collect();
                files.push((path.clone(), rel.join("/")));
            }
            Ok(_) => {
                eprintln!("{shown}: no records, left out");
                skipped += 1;
            }
            Err(e) => {
                eprintln!("left out: {}", super::error::folder_error_text(&e));
                skipped += 1;
            }
        }
    }
    if files.is_empty() {
        return Err(SiteError::NoResults(dir.display().to_string()).into());
    }
    copy_tree(explorer, out)?;
    let index_path = out.join("index.html");
    let page =
        std::fs::read_to_string(explorer.join("index.html")).map_err(write_err(&index_path))?;
    std::fs::write(&index_path, start_page(&page)).map_err(write_err(&index_path))?;
    let results = out.join(RESULTS_DIR);
    for (from, rel) in &files {
        let to = results.join(rel);
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent).map_err(write_err(parent))?;
        }
        std::fs::copy(from, &to).map_err(write_err(&to))?;
    }
    let refs: Vec<String> = files.iter().map(|(_, rel)| path_reference(rel)).collect();
    let index = results.join(INDEX_FILE_NAME);
    std::fs::write(&index, index_json(&refs)).map_err(write_err(&index))?;
    Ok(SiteSummary {
        files: files.into_iter().map(|(_, rel)| rel).collect(),
        skipped,
    })
}

/// Runs `benchlens site`.
pub fn run(args: &SiteArgs) -> Result<ExitCode, CliError> {
    let explorer = find_explorer(args.explorer.as_deref())?;
    let s = write_site(&args.dir, &args.output, &explorer)?;
    crate::stdout::println(&format!(
        "wrote {}: the explorer from {}, {} result files{} and {}/{INDEX_FILE_NAME}; serve it over HTTP (index.html opens on the trends)",
        args.output.display(),
        explorer.display(),
        s.files.len(),
        if s.skipped > 0 {
            format!(" ({} unreadable left out)", s.skipped)
        } else {
            String::new()
        },
        RESULTS_DIR,
    ));
    Ok(ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn start_page_switches_to_the_trends_before_the_app() {
        let page = start_page("<html><head><link rel=x></head><body></body></html>");
        assert!(page.starts_with("<html><head><meta name=\"generator\" content=\"benchlens "));
        assert!(page.contains(crate::VERSION_TEXT));
        assert!(page.contains("\"><script>if(!location.search"));
        assert!(page.contains(START_QUERY));
        assert!(page.ends_with("<link rel=x></head><body></body></html>"));
        let with_attrs = start_page("<html><head lang=en><title>t</title></head></html>");
        assert!(
            with_attrs.starts_with("<html><head lang=en><meta name=\"generator\""),
            "{with_attrs}"
        );
    }

    #[test]
    fn a_missing_explorer_is_named() {
        let e = find_explorer(Some(Path::new("/no/such/dist"))).unwrap_err();
        assert!(e.to_string().contains("/no/such/dist"), "{e}");
        assert!(e.to_string().contains("make build"), "{e}");
    }
}
