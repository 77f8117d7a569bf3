//! Scratch files: what a run spools to disk while a stage runs (each request's canonical
//! detail, its whole record, vLLM's per-request arrays) and reads back once, from the start.
//!
//! Each is made by the `tempfile` crate under a name that says what it is, in the folder asked
//! (so a folder that refuses it, full or with names too long for it, refuses it at once), and
//! unlinked as soon as it is made: only the open handle holds it, so it vanishes on every exit
//! path, a panic, a second Ctrl-C's immediate exit and SIGKILL included.
//!
//! A write the disk refuses later (it filled while the stage ran) does not lose what was
//! written: the bytes the file took stay there, the rest (those still in the buffer, and every
//! later write) are held in memory, and reading back gives the file's part and then memory's.
//! The failure is kept ([`Scratch::failure`]) for the run to say what happened.

use std::fs::File;
use std::io::{BufReader, BufWriter, ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

/// The buffer between a scratch file's writes and the disk.
const BUFFER: usize = 1 << 16;

/// A scratch file being written (see the module doc).
#[derive(Debug)]
pub struct ScratchWriter {
    /// The name it was made under (gone once made), for messages.
    path: PathBuf,
    /// The file, to read back from.
    file: File,
    /// The buffered writer to it, until the disk refuses a write.
    out: Option<BufWriter<File>>,
    /// Bytes accepted so far.
    written: u64,
    /// After a refused write: the bytes the file took, and the rest.
    on_disk: Option<u64>,
    memory: Vec<u8>,
    failure: Option<std::io::Error>,
}

impl ScratchWriter {
    /// A scratch file in `dir`, named `PREFIX` and a random part, unlinked at once.
    pub fn create(dir: &Path, prefix: &str) -> std::io::Result<ScratchWriter> {
        let named = tempfile::Builder::new()
            .prefix(prefix)
            .suffix(".tmp")
            .tempfile_in(dir)?;
        let path = named.path().to_path_buf();
        ScratchWriter::over(named.into_file(), path)
    }

    /// A scratch writer over a file of the caller's (one that fails as a full disk does, in
    /// tests: `/dev/full`), `path` naming it in messages.
    pub fn over(file: File, path: PathBuf) -> std::io::Result<ScratchWriter> {
        let out = BufWriter::with_capacity(BUFFER, file.try_clone()?);
        Ok(ScratchWriter {
            path,
            file,
            out: Some(out),
            written: 0,
            on_disk: None,
            memory: Vec::new(),
            failure: None,
        })
    }

    /// The name it was made under.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The disk's refusal, once one came: what was written since is held in memory.
    pub fn failure(&self) -> Option<&std::io::Error> {
        self.failure.as_ref()
    }

    /// From now on in memory: the buffer's bytes the file did not take move there.
    fn spill(&mut self, e: std::io::Error) {
        if let Some(out) = self.out.take() {
            let (_, buffered) = out.into_parts();
            let buffered = buffered.unwrap_or_else(|p| p.into_inner());
            self.on_disk = Some(self.written - buffered.len() as u64);
            self.memory = buffered;
        }
        self.failure.get_or_insert(e);
    }

    /// Every byte written, readable from the start.
    pub fn finish(mut self) -> Scratch {
        if let Some(e) = self.out.as_mut().and_then(|o| o.flush().err()) {
            self.spill(e);
        }
        drop(self.out.take());
        Scratch {
            path: self.path,
            file: self.file,
            on_disk: self.on_disk,
            memory: self.memory,
            failure: self.failure,
        }
    }
}

impl Write for ScratchWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let mut rest = buf;
        while !rest.is_empty() {
            let Some(out) = self.out.as_mut() else { break };
            match out.write(rest) {
                Ok(0) => self.spill(ErrorKind::WriteZero.into()),
                Ok(n) => {
                    self.written += n as u64;
                    rest = &rest[n..];
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => self.spill(e),
            }
        }
        self.memory.extend_from_slice(rest);
        self.written += rest.len() as u64;
        Ok(buf.len())
    }

    /// Nothing to do: [`ScratchWriter::finish`] flushes.
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A scratch file written (see [`ScratchWriter::finish`]).
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
    file: File,
    on_disk: Option<u64>,
    memory: Vec<u8>,
    failure: Option<std::io::Error>,
}

impl Scratch {
    /// The name it was made under.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The disk's refusal, when one came (part of the content is then in memory).
    pub fn failure(&self) -> Option<&std::io::Error> {
        self.failure.as_ref()
    }

    /// Bytes held in memory because the disk refused them.
    pub fn in_memory(&self) -> usize {
        self.memory.len()
    }

    /// Its content from the start: the file's part, then memory's. One reader at a time.
    pub fn reader(&self) -> std::io::Result<impl Read + '_> {
        let mut file = self.file.try_clone()?;
        file.seek(SeekFrom::Start(0))?;
        let limit = self.on_disk.unwrap_or(u64::MAX);
        Ok(BufReader::with_capacity(BUFFER, file.take(limit)).chain(self.memory.as_slice()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(s: &Scratch) -> Vec<u8> {
        let mut back = Vec::new();
        s.reader().unwrap().read_to_end(&mut back).unwrap();
        back
    }

    #[test]
    fn a_scratch_file_has_no_name_once_made_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        let mut w = ScratchWriter::create(dir.path(), ".r.json.stage0-detail.").unwrap();
        assert!(w
            .path()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with(".r.json.stage0-detail."));
        // Nothing in the folder, even while it is written.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        let data: Vec<u8> = (0..200_000u32).map(|i| (i % 251) as u8).collect();
        for part in data.chunks(7_000) {
            w.write_all(part).unwrap();
        }
        let s = w.finish();
        assert!(s.failure().is_none());
        assert_eq!(content(&s), data);
        // Read twice, the same.
        assert_eq!(content(&s), data);
        // A folder that refuses the name refuses the file at once.
        let long = "x".repeat(300);
        assert!(ScratchWriter::create(dir.path(), &long).is_err());
    }

    #[test]
    fn a_full_disk_moves_the_rest_to_memory_and_nothing_is_lost() {
        let Ok(full) = File::options().write(true).read(true).open("/dev/full") else {
            return;
        };
        let mut w = ScratchWriter::over(full, "/dev/full".into()).unwrap();
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 241) as u8).collect();
        for part in data.chunks(5_000) {
            w.write_all(part).unwrap();
        }
        assert_eq!(
            w.failure().and_then(std::io::Error::raw_os_error),
            Some(libc::ENOSPC)
        );
        let s = w.finish();
        assert_eq!(s.in_memory(), data.len());
        assert_eq!(content(&s), data);
    }
}
