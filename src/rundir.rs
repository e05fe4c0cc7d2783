//! Run directories: where they live, how they are named, what is in them.
//!
//! Each run gets `<runs dir>/<run id>/` with `events.ndjson` (universal events), `stdout.log` and
//! `stderr.log` (the agent's raw output) and `result.json` (the receipt, written at the end).
//! They hold prompts, tool output and environment names: directories are made `0700` and files
//! `0600`, whatever the umask.
//! Run ids sort by start time: `20261122-043355-7k3mq` (UTC date and time, then the milliseconds
//! and three random characters).

use std::fs::{self, DirBuilder, File, Permissions};
use std::io;
use std::os::unix::fs::{DirBuilderExt as _, PermissionsExt as _};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context as _;

use crate::config::Config;
use crate::redact::{Masked, MaskedWriter};

pub(crate) const EVENTS: &str = "events.ndjson";
pub(crate) const STDOUT: &str = "stdout.log";
pub(crate) const STDERR: &str = "stderr.log";
pub(crate) const RECEIPT: &str = "result.json";
pub(crate) const PLAN: &str = "plan.md";
/// Space set aside for the receipt while the run goes on (see [`RunDir::create`]).
pub(crate) const RESERVE: &str = ".receipt-reserve";
/// Enough for the receipt of a long run.
const RESERVE_BYTES: usize = 128 * 1024;

/// The default runs dir: `$XDG_STATE_HOME/runbook/runs` (`~/.local/state/runbook/runs`).
pub(crate) fn default_runs_dir() -> anyhow::Result<PathBuf> {
    use etcetera::BaseStrategy as _;
    let base = etcetera::choose_base_strategy()
        .context("cannot find a home directory for run logs; pass --runs-dir")?;
    let state = base.state_dir().unwrap_or_else(|| base.data_dir());
    Ok(state.join("runbook").join("runs"))
}

/// The configured runs dir (`runs_dir`: a flag, `RUNBOOK_RUNS_DIR` or a file), else the default.
pub(crate) fn runs_dir(config: &Config) -> anyhow::Result<PathBuf> {
    match config.get(&crate::config::keys::RUNS_DIR) {
        Some(dir) => Ok(dir),
        None => default_runs_dir(),
    }
}

/// An open run directory.
pub(crate) struct RunDir {
    pub id: String,
    pub path: PathBuf,
    pub events: MaskedWriter<File>,
    pub stdout: MaskedWriter<File>,
    pub stderr: MaskedWriter<File>,
}

impl RunDir {
    /// Creates a new, uniquely named run directory under `runs_dir`.
    ///
    /// Space for the receipt is set aside at once, so that a run stopped by a full disk can still
    /// say so in its receipt.
    pub(crate) fn create(runs_dir: &Path, now: SystemTime) -> anyhow::Result<Self> {
        ensure_runs_dir(runs_dir)?;
        let stamp = id_stamp(now);
        for _ in 0..100 {
            let id = format!("{stamp}-{}", suffix(now));
            let path = runs_dir.join(&id);
            match DirBuilder::new().mode(0o700).create(&path) {
                Ok(()) => {
                    let ctx = || format!("cannot create files in {}", path.display());
                    fs::set_permissions(&path, Permissions::from_mode(0o700)).with_context(ctx)?;
                    let open = |name: &str| MaskedWriter::create_new(&path.join(name));
                    reserve(&path.join(RESERVE));
                    return Ok(Self {
                        events: open(EVENTS).with_context(ctx)?,
                        stdout: open(STDOUT).with_context(ctx)?,
                        stderr: open(STDERR).with_context(ctx)?,
                        id,
                        path,
                    });
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                Err(e) => {
                    return Err(e).with_context(|| format!("cannot create {}", path.display()));
                }
            }
        }
        anyhow::bail!("cannot find a free run id in {}", runs_dir.display())
    }
}

/// Creates the runs directory, for the user only, unless it exists.
pub(crate) fn ensure_runs_dir(runs_dir: &Path) -> anyhow::Result<()> {
    if !runs_dir.is_dir() {
        DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(runs_dir)
            .and_then(|()| fs::set_permissions(runs_dir, Permissions::from_mode(0o700)))
            .with_context(|| format!("cannot create the runs directory {}", runs_dir.display()))?;
    }
    Ok(())
}

/// Creates a directory in a run directory that only the user can enter, unless it exists; one
/// that exists is made so too.
pub(crate) fn create_private_dir(path: &Path) -> io::Result<()> {
    match DirBuilder::new().mode(0o700).create(path) {
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        other => other?,
    }
    fs::set_permissions(path, Permissions::from_mode(0o700))
}

/// Sets [`RESERVE_BYTES`] aside at `path`. Best effort: on a disk already too full for it, the
/// run goes on without.
fn reserve(path: &Path) {
    let made = MaskedWriter::create_private(path).and_then(|mut file| {
        use std::os::fd::AsRawFd as _;
        // SAFETY: fallocate on a descriptor this frame owns.
        let got = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, RESERVE_BYTES as i64) };
        match got {
            0 => Ok(()),
            // A filesystem without fallocate: the blocks are taken by writing them.
            libc::EOPNOTSUPP | libc::EINVAL => file.write_all(&Masked::own(&[0; RESERVE_BYTES])),
            e => Err(io::Error::from_raw_os_error(e)),
        }
    });
    if made.is_err() {
        let _ = fs::remove_file(path);
    }
}

/// `20261122-043355` from a time (UTC).
/// A new id in the form of run ids (`20261122-043355-7k3mq`), for a batch.
pub(crate) fn new_id(now: SystemTime) -> String {
    format!("{}-{}", id_stamp(now), suffix(now))
}

fn id_stamp(t: SystemTime) -> String {
    // `2026-11-22T04:33:55Z`
    let s = humantime::format_rfc3339_seconds(t).to_string();
    let digits: String = s.chars().filter(char::is_ascii_digit).collect();
    format!("{}-{}", &digits[..8], &digits[8..14])
}

/// Five characters of Crockford base32 (digits and lowercase letters without look-alikes, in
/// ASCII order): the first two are the milliseconds, so ids sort by start time within a second;
/// the last three are random, so runs started in the same millisecond still differ.
fn suffix(t: SystemTime) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";
    let ms = t
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_millis()) as usize;
    let mut id = String::with_capacity(5);
    id.push(ALPHABET[ms / 32] as char);
    id.push(ALPHABET[ms % 32] as char);
    id.extend((0..3).map(|_| ALPHABET[fastrand::usize(..32)] as char));
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn run_ids_sort_by_start_time_and_do_not_collide() {
        let dir = tempfile::tempdir().unwrap();
        let t1 = humantime::parse_rfc3339("2026-11-22T04:33:55Z").unwrap();
        let t2 = humantime::parse_rfc3339("2026-11-22T04:33:55.001Z").unwrap();
        let a = RunDir::create(dir.path(), t1).unwrap();
        let b = RunDir::create(dir.path(), t1).unwrap();
        let c = RunDir::create(dir.path(), t2).unwrap();
        assert!(a.id.starts_with("20261122-043355-"), "{}", a.id);
        assert_ne!(a.id, b.id);
        assert!(a.id < c.id && b.id < c.id);
        assert!(a.path.join(EVENTS).exists() && a.path.join(STDOUT).exists());
    }

    #[test]
    fn run_directories_and_their_files_are_private_whatever_the_umask() {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join("state/runs");
        // SAFETY: umask has no preconditions; the test restores it.
        let old = unsafe { libc::umask(0o000) };
        let made = RunDir::create(&runs, SystemTime::now());
        unsafe { libc::umask(old) };
        let run = made.unwrap();
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&runs), 0o700);
        assert_eq!(mode(&run.path), 0o700);
        for name in [EVENTS, STDOUT, STDERR, RESERVE] {
            assert_eq!(mode(&run.path.join(name)), 0o600, "{name}");
        }
    }
}
