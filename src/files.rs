//! Opening and reading files runbook did not write itself (configuration, `.env` files,
//! recordings, what a run directory holds) without trusting them: only regular files are read,
//! opening never waits (a FIFO is refused, not waited on), whole reads stop at a size cap, and
//! inside a runs directory a symbolic link is refused rather than followed.

use std::fs::{File, OpenOptions};
use std::io::{self, Read as _};
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::{FileTypeExt as _, OpenOptionsExt as _};
use std::path::{Component, Path, PathBuf};

/// The most read of a configuration or `.env` file.
pub(crate) const CONFIG_LIMIT: u64 = 1024 * 1024;
/// The most read of a receipt (`result.json`); real ones are a few KiB.
pub(crate) const RECEIPT_LIMIT: u64 = 16 * 1024 * 1024;
/// The most read of a recorded exit status (`NAME.exit`).
pub(crate) const EXIT_LIMIT: u64 = 64;

/// Whether a symbolic link at the path itself is followed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Links {
    /// A file the user named or keeps (a configuration file may well be a link into a dotfiles
    /// repository): the link is followed, and what it leads to must be a regular file.
    Follow,
    /// A file inside a runs directory, which runbook wrote as a regular file: a link there was
    /// put by someone else, and is refused.
    Refuse,
}

/// Why a file was not read.
#[derive(Debug, thiserror::Error)]
pub(crate) enum FileError {
    #[error("it is {0}, not a regular file")]
    NotRegular(&'static str),
    #[error("it is a symbolic link, which runbook does not follow in a runs directory")]
    Symlink,
    #[error("it is larger than {}, the most runbook reads of such a file", size(*.0))]
    TooLarge(u64),
    #[error("{0}")]
    Io(#[from] io::Error),
}

impl FileError {
    /// The file does not exist (often not an error at all).
    pub(crate) fn is_not_found(&self) -> bool {
        matches!(self, FileError::Io(e) if e.kind() == io::ErrorKind::NotFound)
    }
}

/// Opens a regular file for reading. Never blocks on a FIFO or a device, and with
/// [`Links::Refuse`] never follows a link at `path`.
pub(crate) fn open(path: &Path, links: Links) -> Result<File, FileError> {
    let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
    if links == Links::Refuse {
        flags |= libc::O_NOFOLLOW;
    }
    #[allow(clippy::disallowed_methods, reason = "opened to read only")]
    let opened = OpenOptions::new().read(true).custom_flags(flags).open(path);
    let file = match opened {
        Ok(file) => file,
        Err(e) if links == Links::Refuse && e.raw_os_error() == Some(libc::ELOOP) => {
            return Err(FileError::Symlink);
        }
        // A socket cannot be opened at all; say what it is rather than "no such device".
        Err(e) => return Err(kind_of(path).map_or(FileError::Io(e), FileError::NotRegular)),
    };
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(FileError::NotRegular(describe(meta.file_type())));
    }
    // Reads of a regular file never block; clear the flag anyway so that nothing sees EAGAIN.
    // SAFETY: F_SETFL on a descriptor this function owns; no memory is involved.
    if unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETFL, 0) } != 0 {
        return Err(io::Error::last_os_error().into());
    }
    Ok(file)
}

/// The whole content of a regular file of at most `limit` bytes.
pub(crate) fn read(path: &Path, limit: u64, links: Links) -> Result<Vec<u8>, FileError> {
    let file = open(path, links)?;
    let expected = file.metadata().map_or(0, |m| m.len()).min(limit);
    let mut bytes = Vec::with_capacity(usize::try_from(expected).unwrap_or(0));
    // One byte more than allowed tells a file over the limit from one exactly at it; the size
    // on record is not trusted (files in /proc say 0, a file may grow while it is read).
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge(limit));
    }
    Ok(bytes)
}

/// [`read`], with a missing file as `None`.
pub(crate) fn read_optional(
    path: &Path,
    limit: u64,
    links: Links,
) -> Result<Option<Vec<u8>>, FileError> {
    match read(path, limit, links) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

/// `name`, a path a file gives relative to the directory `dir` it lies in (a task's `include`,
/// its `prompt_file`), as a path under `dir`; or why it is not one: it is absolute, climbs with
/// `..`, names git's own directory, or leads out of `dir` through a link on the way (what exists
/// of it is resolved). A path that does not exist yet is not refused.
pub(crate) fn inside(dir: &Path, name: &str) -> Result<PathBuf, &'static str> {
    let relative = Path::new(name);
    let plain = !name.is_empty()
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(part) if part != ".git"));
    if !plain {
        return Err("give a relative path inside it, without `..`, `/` at the start or `.git`");
    }
    let dir = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let Ok(root) = dir.canonicalize() else {
        return Err("the directory it is relative to cannot be read");
    };
    let path = dir.join(relative);
    let git_dir = root.join(".git").canonicalize().ok();
    let mut existing = path.clone();
    loop {
        if let Ok(real) = existing.canonicalize() {
            if git_dir.as_deref().is_some_and(|g| real.starts_with(g)) {
                return Err("it leads into git's own directory through a symbolic link");
            }
            if real.starts_with(&root) {
                return Ok(path);
            }
            return Err("it leads out of the directory through a symbolic link");
        }
        if !existing.pop() {
            return Err("it leads out of the directory through a symbolic link");
        }
    }
}

/// What is at `path` when it is not a regular file; `None` for a regular file or nothing.
fn kind_of(path: &Path) -> Option<&'static str> {
    let meta = std::fs::metadata(path).ok()?;
    (!meta.is_file()).then(|| describe(meta.file_type()))
}

fn describe(t: std::fs::FileType) -> &'static str {
    if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a named pipe (FIFO)"
    } else if t.is_char_device() {
        "a character device"
    } else if t.is_block_device() {
        "a block device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "not a plain file"
    }
}

/// `16 MiB` for a power of two of at least 1 KiB; bytes otherwise.
fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{} MiB", b >> 20),
        b if b >= 1 << 10 && b % (1 << 10) == 0 => format!("{} KiB", b >> 10),
        b => format!("{b} bytes"),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests write their own fixtures")]
mod tests {
    use super::*;

    #[test]
    fn a_name_inside_a_directory_stays_there_links_resolved() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(tmp.path().join("secret"), "s").unwrap();
        std::os::unix::fs::symlink(tmp.path(), root.join("out")).unwrap();
        std::os::unix::fs::symlink("..", root.join("sub/up")).unwrap();
        std::os::unix::fs::symlink("../..", root.join("sub/far")).unwrap();
        std::os::unix::fs::symlink(root.join("sub"), root.join("in")).unwrap();
        assert_eq!(inside(&root, "sub/x.env"), Ok(root.join("sub/x.env")));
        assert_eq!(
            inside(&root, "in/x"),
            Ok(root.join("in/x")),
            "a link that stays"
        );
        assert_eq!(inside(&root, "new/dir/x"), Ok(root.join("new/dir/x")));
        assert_eq!(inside(&root, "sub/up/x"), Ok(root.join("sub/up/x")));
        for name in [
            "",
            "../secret",
            "sub/../../secret",
            "/etc/passwd",
            "./.git/config",
            ".git/hooks/pre-commit",
            "sub/.git/x",
        ] {
            assert!(inside(&root, name).is_err(), "{name}");
        }
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink(root.join(".git"), root.join("meta")).unwrap();
        for name in ["meta/config", "meta/hooks/post-checkout"] {
            assert!(
                inside(&root, name).is_err(),
                "{name}: git's own, through a link"
            );
        }
        for name in ["out/secret", "out/missing/x", "sub/far/secret"] {
            assert!(inside(&root, name).is_err(), "{name}");
        }
    }

    #[test]
    fn only_regular_files_within_the_limit_are_read() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "hello").unwrap();
        assert_eq!(read(&file, 5, Links::Refuse).unwrap(), b"hello");
        let err = read(&file, 4, Links::Refuse).unwrap_err();
        assert!(matches!(err, FileError::TooLarge(4)), "{err}");

        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&file, &link).unwrap();
        assert_eq!(read(&link, 5, Links::Follow).unwrap(), b"hello");
        assert!(matches!(
            read(&link, 5, Links::Refuse),
            Err(FileError::Symlink)
        ));

        let fifo = dir.path().join("fifo");
        let c_path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c_path.as_ptr(), 0o600) }, 0);
        let err = read(&fifo, 5, Links::Follow).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a named pipe (FIFO), not a regular file"
        );
        let err = read(Path::new("/dev/zero"), 5, Links::Follow).unwrap_err();
        assert_eq!(
            err.to_string(),
            "it is a character device, not a regular file"
        );
        let err = read(dir.path(), 5, Links::Follow).unwrap_err();
        assert_eq!(err.to_string(), "it is a directory, not a regular file");

        assert!(
            read_optional(&dir.path().join("missing"), 5, Links::Follow)
                .unwrap()
                .is_none()
        );
        assert_eq!(
            FileError::TooLarge(RECEIPT_LIMIT).to_string(),
            "it is larger than 16 MiB, the most runbook reads of such a file"
        );
    }
}
