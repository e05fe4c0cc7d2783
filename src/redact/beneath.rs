//! Opening a file for writing below a directory without following a link on the way: not at the
//! file, nor at any directory between the two. A place an agent could write in (the work dir)
//! may hold links it planted to the user's files (`~/.bashrc`, a git hook); what runbook writes
//! there goes where the path says, or nowhere. Links above the directory are the user's own.

use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::{AsRawFd, FromRawFd as _, OwnedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Component, Path, PathBuf};

/// Where to start the walk for `path` (absolute): the first of `anchors` it lies below, else its
/// own directory; and the rest of the way from there.
pub(crate) fn split(path: &Path, anchors: &[&Path]) -> (PathBuf, PathBuf) {
    for anchor in anchors {
        if let Ok(rest) = path.strip_prefix(anchor)
            && !rest.as_os_str().is_empty()
        {
            return (anchor.to_path_buf(), rest.to_path_buf());
        }
    }
    let parent = path.parent().unwrap_or(Path::new("/"));
    let name = path.file_name().map_or_else(PathBuf::new, PathBuf::from);
    (parent.to_path_buf(), name)
}

/// Opens `relative` below the directory `anchor` with `flags` (`O_NOFOLLOW` and `O_CLOEXEC`
/// added) and `mode` for a file it creates. Each directory on the way is opened without
/// following a link; the error names the one that is a link or no directory.
pub(crate) fn open(
    anchor: &Path,
    relative: &Path,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<File> {
    let parts: Vec<&std::ffi::OsStr> = relative
        .components()
        .map(|c| match c {
            Component::Normal(part) => Ok(part),
            _ => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{} climbs out of {}", relative.display(), anchor.display()),
            )),
        })
        .collect::<io::Result<_>>()?;
    let Some((last, dirs)) = parts.split_last() else {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, "no file named"));
    };
    let mut dir = open_at(None, anchor.as_os_str(), DIR_FLAGS & !libc::O_NOFOLLOW, 0)?;
    let mut at = anchor.to_path_buf();
    for part in dirs {
        at.push(part);
        dir = open_at(Some(&dir), part, DIR_FLAGS, 0).map_err(|e| on_the_way(e, &at))?;
    }
    at.push(last);
    let fd = open_at(
        Some(&dir),
        last,
        flags | libc::O_NOFOLLOW | libc::O_CLOEXEC,
        mode,
    )
    .map_err(|e| at_the_file(e, &at))?;
    Ok(File::from(fd))
}

const DIR_FLAGS: libc::c_int =
    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;

/// `openat(2)`, relative to `dir` (the current directory for `None`).
fn open_at(
    dir: Option<&OwnedFd>,
    name: &std::ffi::OsStr,
    flags: libc::c_int,
    mode: u32,
) -> io::Result<OwnedFd> {
    let name = CString::new(name.as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a NUL byte in a path"))?;
    let base = dir.map_or(libc::AT_FDCWD, AsRawFd::as_raw_fd);
    // SAFETY: `name` is a valid C string for the call's duration; the descriptor returned is
    // owned by nothing else.
    let fd = unsafe { libc::openat(base, name.as_ptr(), flags, mode as libc::c_uint) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just opened and is owned by nothing else.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn on_the_way(e: io::Error, at: &Path) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP | libc::ENOTDIR) => io::Error::other(format!(
            "{} is a symbolic link or not a directory, and runbook follows no link where it writes",
            at.display()
        )),
        _ => e,
    }
}

fn at_the_file(e: io::Error, at: &Path) -> io::Error {
    match e.raw_os_error() {
        Some(libc::ELOOP) => io::Error::other(format!(
            "{} is a symbolic link, and runbook follows no link where it writes",
            at.display()
        )),
        _ => e,
    }
}

/// Refuses a file runbook is about to append to that is not what it would have made: another
/// user's, one with other names (a hard link to a file elsewhere), an executable one (a hook or a
/// script), or no plain file at all.
pub(crate) fn own_plain_file(file: &File, path: &Path) -> io::Result<()> {
    use std::os::unix::fs::MetadataExt as _;
    let meta = file.metadata()?;
    let why = if !meta.is_file() {
        Some("it is not a plain file")
    } else if meta.uid() != nix::unistd::geteuid().as_raw() {
        Some("it belongs to another user")
    } else if meta.nlink() > 1 {
        Some("it has other names (hard links), so it is some other file too")
    } else if meta.mode() & 0o111 != 0 {
        Some("it is executable (a script or a hook)")
    } else {
        None
    };
    match why {
        Some(why) => Err(io::Error::other(format!(
            "{}: {why}; runbook appends only to a plain file of its own: remove it or name another",
            path.display()
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests write their own fixtures")]
mod tests {
    use super::*;

    const APPEND: libc::c_int = libc::O_WRONLY | libc::O_APPEND | libc::O_CREAT;

    #[test]
    fn a_link_at_the_file_or_on_the_way_is_refused_and_the_target_untouched() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let work = root.join("work");
        std::fs::create_dir_all(work.join("logs")).unwrap();
        std::fs::write(root.join("bashrc"), "mine\n").unwrap();
        std::os::unix::fs::symlink(root.join("bashrc"), work.join("logs/e.ndjson")).unwrap();
        std::os::unix::fs::symlink(&root, work.join("up")).unwrap();
        for name in ["logs/e.ndjson", "up/bashrc", "up/new.ndjson"] {
            let err = open(&work, Path::new(name), APPEND, 0o600).unwrap_err();
            assert!(err.to_string().contains("symbolic link"), "{name}: {err}");
        }
        assert_eq!(
            std::fs::read_to_string(root.join("bashrc")).unwrap(),
            "mine\n"
        );
        assert!(!root.join("new.ndjson").exists());
        assert!(open(&work, Path::new("logs/ok.ndjson"), APPEND, 0o600).is_ok());
    }

    #[test]
    fn a_path_splits_at_the_first_anchor_it_lies_below_else_at_its_directory() {
        let work = Path::new("/w/repo");
        assert_eq!(
            split(Path::new("/w/repo/a/b.ndjson"), &[work]),
            (PathBuf::from("/w/repo"), PathBuf::from("a/b.ndjson"))
        );
        assert_eq!(
            split(Path::new("/tmp/e.ndjson"), &[work]),
            (PathBuf::from("/tmp"), PathBuf::from("e.ndjson"))
        );
    }

    #[test]
    fn only_a_plain_file_of_ones_own_with_one_name_is_appended_to() {
        use std::os::unix::fs::PermissionsExt as _;
        let tmp = tempfile::tempdir().unwrap();
        let d = tmp.path();
        std::fs::write(d.join("plain"), "").unwrap();
        std::fs::write(d.join("hook"), "").unwrap();
        std::fs::set_permissions(d.join("hook"), std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(d.join("twice"), "").unwrap();
        std::fs::hard_link(d.join("twice"), d.join("other-name")).unwrap();
        let check = |name: &str| own_plain_file(&File::open(d.join(name)).unwrap(), &d.join(name));
        assert!(check("plain").is_ok());
        assert!(
            check("hook")
                .unwrap_err()
                .to_string()
                .contains("executable")
        );
        assert!(
            check("twice")
                .unwrap_err()
                .to_string()
                .contains("hard links")
        );
    }
}
