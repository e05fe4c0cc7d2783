//! The masking writer: the one way runbook writes bytes to a file or to another process's pipe.
//! It writes only [`Masked`] bytes; whatever else it is handed it masks first with the process's
//! masker ([`super::current`]). Files are opened for writing here and nowhere else: `clippy.toml`
//! refuses `File::create`, `OpenOptions::open` and `fs::write` outside this module, and the file
//! a [`MaskedWriter`] holds never leaves it.
#![allow(
    clippy::disallowed_methods,
    reason = "the one module that opens files for writing; everything written is masked"
)]

use std::fs::{self, File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

use tokio::io::{AsyncWrite, AsyncWriteExt as _};

use super::Masked;

/// A file or a pipe that gets masked bytes only.
#[derive(Debug)]
pub(crate) struct MaskedWriter<W> {
    out: W,
}

impl<W> MaskedWriter<W> {
    /// Another process's pipe (an observer's stdin, an ACP agent's), written masked from now on.
    pub(crate) fn pipe(out: W) -> Self {
        Self { out }
    }

    /// What it wrote to, for a test to look at.
    #[cfg(test)]
    pub(crate) fn into_inner(self) -> W {
        self.out
    }
}

impl<W: Write> MaskedWriter<W> {
    /// One `write(2)` of as much of `bytes` as the output takes now (see [`Masked::rest`]).
    pub(crate) fn write(&mut self, bytes: &Masked<'_>) -> io::Result<usize> {
        self.out.write(bytes.as_bytes())
    }

    pub(crate) fn write_all(&mut self, bytes: &Masked<'_>) -> io::Result<()> {
        self.out.write_all(bytes.as_bytes())
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

impl<W: AsyncWrite + Unpin> MaskedWriter<W> {
    pub(crate) async fn write_all_async(&mut self, bytes: &Masked<'_>) -> io::Result<()> {
        self.out.write_all(bytes.as_bytes()).await?;
        self.out.flush().await
    }

    pub(crate) async fn shutdown(&mut self) -> io::Result<()> {
        self.out.shutdown().await
    }
}

impl MaskedWriter<File> {
    /// A new file only the user can read (`0600` whatever the umask), appended to; it must not
    /// exist yet.
    pub(crate) fn create_new(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .mode(0o600)
            .open(path)?;
        private(file)
    }

    /// A file only the user can read, created or emptied; a symbolic link in its place is
    /// refused, not followed.
    pub(crate) fn create_private(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(path)?;
        private(file)
    }

    /// A file appended to, created (`0600`) if need be.
    pub(crate) fn append(path: &Path) -> io::Result<Self> {
        let out = OpenOptions::new()
            .append(true)
            .create(true)
            .mode(0o600)
            .open(path)?;
        Ok(Self { out })
    }

    /// A FIFO's writing end, opened without waiting: an error when it has no reader.
    pub(crate) fn fifo(path: &Path) -> io::Result<Self> {
        let out = OpenOptions::new()
            .write(true)
            .custom_flags(libc::O_NONBLOCK)
            .open(path)?;
        Ok(Self { out })
    }

    /// A new file, readable as the umask says; it must not exist yet (a file for the user's
    /// repository, such as the starter configuration).
    pub(crate) fn create_shared(path: &Path) -> io::Result<Self> {
        let out = OpenOptions::new().write(true).create_new(true).open(path)?;
        Ok(Self { out })
    }

    pub(crate) fn try_clone(&self) -> io::Result<Self> {
        Ok(Self {
            out: self.out.try_clone()?,
        })
    }

    /// How long the file is now.
    pub(crate) fn len(&self) -> io::Result<u64> {
        Ok(self.out.metadata()?.len())
    }

    /// Cuts the file back to `len` bytes (to the end of its last whole line).
    pub(crate) fn set_len(&self, len: u64) -> io::Result<()> {
        self.out.set_len(len)
    }

    pub(crate) fn sync_all(&self) -> io::Result<()> {
        self.out.sync_all()
    }
}

impl std::os::fd::AsRawFd for MaskedWriter<File> {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.out.as_raw_fd()
    }
}

fn private(file: File) -> io::Result<MaskedWriter<File>> {
    file.set_permissions(Permissions::from_mode(0o600))?;
    Ok(MaskedWriter { out: file })
}

/// Writes `bytes` to a temporary file beside `path` (`tmp_ext` its extension), syncs it, then
/// renames it into place: a reader sees either no file or a whole one, and a failed write
/// leaves nothing behind. Only the user can read it.
pub(crate) fn atomically(path: &Path, tmp_ext: &str, bytes: &Masked<'_>) -> io::Result<()> {
    let tmp = path.with_extension(tmp_ext);
    let written = MaskedWriter::create_private(&tmp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    });
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}
