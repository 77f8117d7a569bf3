//! The bytes of one input of `convert`, `inspect` or `site`: a regular file of at least
//! [`MAP_MIN_BYTES`] is memory-mapped, anything else (stdin, pipes, small files) read into a
//! buffer.
//!
//! # Why a map, and what happens when the file changes under it
//!
//! Reading a large file into a fresh buffer copies every byte once more and makes the kernel
//! clear a fresh page for every 4 KiB of it first; a map of the file reads the page cache's
//! pages where they are. Mapping is `unsafe` in `memmap2` because its contract is that nothing
//! modifies or truncates the file while it is mapped: Rust takes the bytes for immutable, so a
//! change under the map is undefined behaviour in principle, and a truncation makes reading a
//! page past the new end kill the process with `SIGBUS`. This process never writes to its
//! inputs; another process could. What is done about it:
//! - only regular files are mapped (never pipes, devices or stdin);
//! - the map is private and read-only ([`memmap2::MmapOptions::map_copy_read_only`]);
//! - the file's length and modification time are taken from the open file before the map and
//!   again once the file has been read ([`Input::check_unchanged`]): a file that changed in
//!   between is reported as an error naming it ("changed while it was being read"), never
//!   returned as if read whole.
//!
//! What remains is the window of the read itself: a file truncated while it is being read
//! ends the process with `SIGBUS`, and one rewritten in place may give mixed values before
//! the check above reports it. Tools that map their inputs (ripgrep, for one) make the same
//! trade; the `-` input (stdin) or a pipe (`cat FILE | benchlens inspect -`) reads a copy.

use std::fs::File;
use std::io::Read;
use std::ops::Deref;
use std::time::SystemTime;

use super::error::CliError;

/// Regular files at least this large are mapped; smaller ones are read (a map costs a few
/// system calls and a page-table set-up that a small read does not repay).
pub const MAP_MIN_BYTES: u64 = 1 << 20;

/// The bytes of one input, mapped or read.
pub(crate) enum Input {
    /// Read into memory (stdin, pipes, small files).
    Read(Vec<u8>),
    /// A regular file mapped read-only, with what it looked like when it was mapped.
    Mapped {
        map: memmap2::Mmap,
        file: File,
        stamp: Stamp,
    },
}

/// A file's length and modification time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Stamp {
    len: u64,
    modified: Option<SystemTime>,
}

impl Stamp {
    fn of(file: &File) -> std::io::Result<Stamp> {
        let meta = file.metadata()?;
        Ok(Stamp {
            len: meta.len(),
            modified: meta.modified().ok(),
        })
    }
}

impl Deref for Input {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Input::Read(bytes) => bytes,
            Input::Mapped { map, .. } => map,
        }
    }
}

impl Input {
    /// Whether the input was mapped.
    #[cfg(test)]
    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self, Input::Mapped { .. })
    }

    /// An error naming `path` when a mapped file's length or modification time changed
    /// since it was mapped (see the [module](self) docs); `Ok` for read inputs.
    pub(crate) fn check_unchanged(&self, path: &str) -> Result<(), CliError> {
        let Input::Mapped { file, stamp, .. } = self else {
            return Ok(());
        };
        let now = Stamp::of(file).map_err(|source| read_error(path, source))?;
        if now == *stamp {
            Ok(())
        } else {
            Err(read_error(
                path,
                std::io::Error::other("the file changed while it was being read"),
            ))
        }
    }
}

fn read_error(path: &str, source: std::io::Error) -> CliError {
    CliError::Read {
        path: path.into(),
        source,
    }
}

/// Reads the bytes of `path` (`-` is stdin), naming the source as the user gave it: a
/// regular file of at least [`MAP_MIN_BYTES`] mapped, anything else read.
pub(crate) fn read_input(path: &str) -> Result<(String, Input), CliError> {
    if path == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|source| read_error("stdin", source))?;
        return Ok(("stdin".to_string(), Input::Read(bytes)));
    }
    read_file(std::path::Path::new(path), path)
}

/// [`read_input`] of the file at `file_path`, named `path` in messages (a name that is not
/// UTF-8 is shown lossily but opened as it is).
pub(crate) fn read_file(
    file_path: &std::path::Path,
    path: &str,
) -> Result<(String, Input), CliError> {
    let err = |source| read_error(path, source);
    let mut file = File::open(file_path).map_err(err)?;
    let meta = file.metadata().map_err(err)?;
    if meta.is_file() && meta.len() >= MAP_MIN_BYTES {
        // A binary file (a 20 GB sparse one, a model's weights) is refused from its first
        // bytes, not after mapping and reading all of it.
        let mut head = Vec::with_capacity(crate::ingest::BINARY_HEAD_BYTES);
        (&mut file)
            .take(crate::ingest::BINARY_HEAD_BYTES as u64)
            .read_to_end(&mut head)
            .map_err(err)?;
        crate::ingest::binary_head(path, &head)?;
        let stamp = Stamp::of(&file).map_err(err)?;
        // SAFETY: memmap2's contract is that the file is not modified or truncated while
        // mapped. This process does not write to it; what another process's change does, and
        // how it is detected, is in the module docs (a regular file only, mapped private and
        // read-only, its length and time checked again after reading).
        let map = unsafe {
            memmap2::MmapOptions::new()
                .populate()
                .map_copy_read_only(&file)
        }
        .map_err(err)?;
        return Ok((path.to_string(), Input::Mapped { map, file, stamp }));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.read_to_end(&mut bytes).map_err(err)?;
    Ok((path.to_string(), Input::Read(bytes)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn large_files_are_mapped_small_ones_read_and_both_give_the_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.csv");
        let mut content = b"a,b\n".to_vec();
        while (content.len() as u64) < MAP_MIN_BYTES {
            content.extend_from_slice(b"1.5,2\n");
        }
        std::fs::write(&big, &content).unwrap();
        let (name, input) = read_input(big.to_str().unwrap()).unwrap();
        assert_eq!(name, big.to_str().unwrap());
        assert!(input.is_mapped());
        assert_eq!(&*input, content.as_slice());
        assert!(input.check_unchanged(&name).is_ok());

        let small = dir.path().join("small.csv");
        std::fs::write(&small, b"a,b\n1,2\n").unwrap();
        let (_, input) = read_input(small.to_str().unwrap()).unwrap();
        assert!(!input.is_mapped());
        assert_eq!(&*input, b"a,b\n1,2\n");
        assert!(input.check_unchanged("small.csv").is_ok());
    }

    #[test]
    fn a_mapped_file_that_grows_while_read_is_an_error_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("grows.csv");
        std::fs::write(&path, vec![b'x'; MAP_MIN_BYTES as usize]).unwrap();
        let shown = path.to_str().unwrap();
        let (_, input) = read_input(shown).unwrap();
        assert!(input.is_mapped());
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap();
        f.write_all(b"more\n").unwrap();
        drop(f);
        let err = input.check_unchanged(shown).unwrap_err();
        let text = format!("{err}: {}", std::error::Error::source(&err).unwrap());
        assert_eq!(
            text,
            format!("{shown}: cannot read: the file changed while it was being read")
        );
    }

    #[test]
    fn a_huge_sparse_file_is_refused_from_its_first_bytes() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sparse.json");
        let f = File::create(&path).unwrap();
        // 20 GB of holes: reading it whole took 30 s.
        f.set_len(20 << 30).unwrap();
        drop(f);
        let shown = path.to_str().unwrap();
        let started = std::time::Instant::now();
        let err = read_input(shown).err().unwrap();
        assert!(started.elapsed().as_secs() < 5, "{:?}", started.elapsed());
        assert_eq!(
            err.to_string(),
            format!("{shown}: binary data at byte 0, not a text result file")
        );
        // A large text file still reads whole.
        let text = dir.path().join("big.csv");
        let mut content = b"a,b\n".to_vec();
        while (content.len() as u64) < 2 * MAP_MIN_BYTES {
            content.extend_from_slice(b"1.5,2\n");
        }
        std::fs::write(&text, &content).unwrap();
        let (_, input) = read_input(text.to_str().unwrap()).unwrap();
        assert_eq!(input.len(), content.len());
    }

    #[test]
    fn a_missing_file_is_an_error_naming_it() {
        let err = read_input("/nonexistent/benchlens-input.csv")
            .err()
            .unwrap();
        assert_eq!(
            err.to_string(),
            "/nonexistent/benchlens-input.csv: cannot read"
        );
    }
}
