//! The trust record: which repository files the user trusted, each by the path it is read at
//! and the SHA-256 of its content then, in `$XDG_STATE_HOME/runbook/trusted.json` (0600). It
//! is replaced whole (a new file renamed over it) under a lock, so that a crash or two
//! `runbook trust` at once never leave half a record.

use std::collections::BTreeMap;
use std::fs::{DirBuilder, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd as _;
use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::Digest;
use crate::exit;
use crate::files::{self, Links};

/// The record's file name in runbook's state directory.
const FILE: &str = "trusted.json";
/// The most read of the record.
const LIMIT: u64 = 16 * 1024 * 1024;

/// One trusted file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct Record {
    /// The SHA-256 of the content trusted, in hex.
    pub sha256: String,
    /// When, as RFC 3339.
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Document {
    version: u32,
    /// By the path the file is read at (its directory resolved).
    files: BTreeMap<String, Record>,
}

/// The trust record as read.
#[derive(Debug)]
pub(crate) struct Store {
    path: PathBuf,
    files: BTreeMap<String, Record>,
}

/// Whether a file, at the content given, is trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Recorded {
    /// Trusted at this content.
    Matches,
    /// Trusted once, at another content.
    Changed,
    /// Never trusted (or forgotten).
    Absent,
}

/// The key a file is recorded under: its directory resolved (links and `..`), then its name;
/// a link at the file itself is not followed, so that a link to a trusted file elsewhere is
/// not the trusted file (its relative paths would mean other files).
pub(crate) fn key(path: &Path) -> io::Result<String> {
    let absolute = std::path::absolute(path)?;
    let name = absolute
        .file_name()
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "it names no file"))?;
    let dir = absolute.parent().unwrap_or(Path::new("/")).canonicalize()?;
    Ok(dir.join(name).display().to_string())
}

/// `$XDG_STATE_HOME/runbook/trusted.json` (`~/.local/state/runbook/trusted.json`).
pub(crate) fn location() -> Result<PathBuf, exit::Error> {
    use etcetera::BaseStrategy as _;
    let base = etcetera::choose_base_strategy().map_err(|_| {
        exit::Error::Usage(
            "cannot find a home directory for the trust record (set HOME)".to_owned(),
        )
    })?;
    let state = base.state_dir().unwrap_or_else(|| base.data_dir());
    Ok(state.join("runbook").join(FILE))
}

impl Store {
    /// Reads the record; none yet is an empty one. A record that cannot be read is an error
    /// that names it and says what to do.
    pub(crate) fn load() -> Result<Self, exit::Error> {
        Self::load_at(location()?)
    }

    fn load_at(path: PathBuf) -> Result<Self, exit::Error> {
        let corrupt = |why: String| {
            exit::Error::Usage(format!(
                "{}: the trust record cannot be read ({why}); remove it, then trust your repositories' files again with `runbook trust`",
                path.display()
            ))
        };
        let bytes = match files::read_optional(&path, LIMIT, Links::Follow) {
            Ok(Some(bytes)) => bytes,
            Ok(None) => {
                return Ok(Self {
                    path,
                    files: BTreeMap::new(),
                });
            }
            Err(e) => return Err(corrupt(e.to_string())),
        };
        let doc: Document = serde_json::from_slice(&bytes).map_err(|e| corrupt(e.to_string()))?;
        if doc.version != 1 {
            return Err(corrupt(format!(
                "version {} is not one runbook knows",
                doc.version
            )));
        }
        if let Some((file, _)) = doc
            .files
            .iter()
            .find(|(_, r)| Digest::from_hex(&r.sha256).is_none())
        {
            return Err(corrupt(format!("the digest of {file} is not a SHA-256")));
        }
        Ok(Self {
            path,
            files: doc.files,
        })
    }

    /// Whether the file recorded under `key` is trusted at `digest`.
    pub(crate) fn recorded(&self, key: &str, digest: Digest) -> Recorded {
        match self.files.get(key) {
            Some(r) if Digest::from_hex(&r.sha256) == Some(digest) => Recorded::Matches,
            Some(_) => Recorded::Changed,
            None => Recorded::Absent,
        }
    }

    /// Every trusted file, by key.
    pub(crate) fn records(&self) -> &BTreeMap<String, Record> {
        &self.files
    }

    /// Where the record is.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Changes the record as `change` says, under a lock, over what it holds then (another
    /// `runbook trust` may have changed it since it was read), and writes it whole.
    pub(crate) fn update(
        change: impl FnOnce(&mut BTreeMap<String, Record>),
    ) -> Result<Self, anyhow::Error> {
        Self::update_at(location()?, change)
    }

    fn update_at(
        path: PathBuf,
        change: impl FnOnce(&mut BTreeMap<String, Record>),
    ) -> Result<Self, anyhow::Error> {
        use anyhow::Context as _;
        let dir = path.parent().unwrap_or(Path::new("/")).to_path_buf();
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let _lock = lock(&path.with_extension("lock"))
            .with_context(|| format!("cannot lock {}", path.display()))?;
        let mut store = Self::load_at(path)?;
        change(&mut store.files);
        store
            .write()
            .with_context(|| format!("cannot write {}", store.path.display()))?;
        Ok(store)
    }

    /// Writes the record to a new file beside it, then renames it over: a reader sees the old
    /// record or the new one, never part of one.
    fn write(&self) -> io::Result<()> {
        let doc = Document {
            version: 1,
            files: self.files.clone(),
        };
        let mut json = serde_json::to_vec_pretty(&doc).map_err(io::Error::other)?;
        json.push(b'\n');
        let tmp = format!("json.{}.tmp", std::process::id());
        crate::redact::write::atomically(&self.path, &tmp, &crate::redact::current().mask(&json))
    }
}

/// An exclusive lock on the file at `path` (created 0600), held until the file is closed.
#[allow(
    clippy::disallowed_methods,
    reason = "a lock file: opened to hold a lock on, nothing is written to it"
)]
pub(crate) fn lock(path: &Path) -> io::Result<File> {
    let file = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)?;
    // SAFETY: flock on a descriptor this function owns; no memory is involved.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests write their own fixtures")]
mod tests {
    use std::fs;
    use std::os::unix::fs::MetadataExt as _;

    use super::*;

    fn record(digest: Digest) -> Record {
        Record {
            sha256: digest.hex(),
            trusted_at: "2026-11-26T00:00:00Z".to_owned(),
        }
    }

    #[test]
    fn a_trusted_file_matches_only_its_content_and_the_record_is_private() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("state/runbook").join(FILE);
        let (old, new) = (Digest::of(b"a"), Digest::of(b"b"));
        Store::update_at(path.clone(), |files| {
            files.insert("/r/runbook.toml".into(), record(old));
        })
        .unwrap();
        let store = Store::load_at(path.clone()).unwrap();
        assert_eq!(store.recorded("/r/runbook.toml", old), Recorded::Matches);
        assert_eq!(store.recorded("/r/runbook.toml", new), Recorded::Changed);
        assert_eq!(store.recorded("/r/.env", old), Recorded::Absent);
        assert_eq!(fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        let leftovers: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.ends_with(".tmp"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }

    #[test]
    fn a_corrupt_record_is_a_clear_error() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join(FILE);
        for text in [
            "{not json",
            "{\"version\":1,\"files\":{\"/r/x\":{\"sha256\":\"nope\",\"trusted_at\":\"\"}}}",
            "{\"version\":9,\"files\":{}}",
            "[]",
        ] {
            fs::write(&path, text).unwrap();
            let err = Store::load_at(path.clone()).unwrap_err().to_string();
            assert!(
                err.starts_with(&format!(
                    "{}: the trust record cannot be read",
                    path.display()
                )),
                "{err}"
            );
            assert!(err.contains("runbook trust"), "{err}");
            assert!(!err.contains('\n'), "{err}");
        }
    }

    #[test]
    fn the_key_resolves_the_directory_but_not_a_link_at_the_file() {
        let tmp = tempfile::tempdir().unwrap();
        let real = tmp.path().canonicalize().unwrap();
        fs::create_dir(real.join("repo")).unwrap();
        std::os::unix::fs::symlink(real.join("repo"), real.join("alias")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", real.join("repo/runbook.toml")).unwrap();
        assert_eq!(
            key(&real.join("alias/./runbook.toml")).unwrap(),
            real.join("repo/runbook.toml").display().to_string()
        );
    }
}
