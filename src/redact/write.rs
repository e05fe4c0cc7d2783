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
    /// refused, not followed, and so is a file with other names (a hard link to one elsewhere),
    /// before anything of it is emptied.
    pub(crate) fn create_private(path: &Path) -> io::Result<Self> {
        let file = OpenOptions::new()
            .write(true)
            .create(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
            .open(path)?;
        let meta = file.metadata()?;
        if !meta.is_file() || std::os::unix::fs::MetadataExt::nlink(&meta) > 1 {
            return Err(io::Error::other(format!(
                "{}: not a plain file of runbook's own (another file's name, or no file at all): remove it",
                path.display()
            )));
        }
        file.set_len(0)?;
        private(file)
    }

    /// A file appended to, created (`0600`) if need be, reached from the directory `anchor`
    /// by `relative` without following a link ([`super::beneath`]); what is there already must
    /// be a plain file of the user's own, with no other name and no execute permission.
    pub(crate) fn append_below(anchor: &Path, relative: &Path) -> io::Result<Self> {
        let flags = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT | libc::O_NONBLOCK;
        let out = super::beneath::open(anchor, relative, flags, 0o600)?;
        super::beneath::own_plain_file(&out, &anchor.join(relative))?;
        Ok(Self { out })
    }

    /// A FIFO's writing end below `anchor`, no link followed, opened without waiting: an error
    /// when it has no reader, or when what is there is no FIFO.
    pub(crate) fn fifo_below(anchor: &Path, relative: &Path) -> io::Result<Self> {
        let flags = libc::O_WRONLY | libc::O_NONBLOCK;
        let out = super::beneath::open(anchor, relative, flags, 0)?;
        if !std::os::unix::fs::FileTypeExt::is_fifo(&out.metadata()?.file_type()) {
            return Err(io::Error::other(format!(
                "{} is no longer a FIFO",
                anchor.join(relative).display()
            )));
        }
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
    atomically_as(path, tmp_ext, bytes, MaskedWriter::create_new)
}

/// Like [`atomically`], for a page made to be shared (`stats --html`, a batch's JUnit report):
/// its permissions are the umask's, as any file the user writes, not the user's alone.
pub(crate) fn atomically_shared(path: &Path, tmp_ext: &str, bytes: &Masked<'_>) -> io::Result<()> {
    atomically_as(path, tmp_ext, bytes, |tmp| {
        let file = OpenOptions::new()
            .create_new(true)
            .append(true)
            .mode(0o666)
            .open(tmp)?;
        Ok(MaskedWriter { out: file })
    })
}

fn atomically_as(
    path: &Path,
    tmp_ext: &str,
    bytes: &Masked<'_>,
    create: impl FnOnce(&Path) -> io::Result<MaskedWriter<File>>,
) -> io::Result<()> {
    let tmp = path.with_extension(tmp_ext);
    // A file left in the temporary file's place (by a crash, or planted as a link or a hard
    // link to a file elsewhere) is taken away, never written through: the copy is made anew.
    match fs::remove_file(&tmp) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let written = create(&tmp).and_then(|mut file| {
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)
    });
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}
