//! A task's git worktree: made from the batch's base commit on a branch of its own behind one
//! lock per repository, filled with the ignored files the task file includes, and at the end
//! its changes committed to the branch, the worktree removed, the branch kept only if it moved.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context as _, bail};

/// The repository a batch runs in.
#[derive(Debug, Clone)]
pub(super) struct Repo {
    /// The main checkout's root.
    pub root: PathBuf,
    /// The commit every task starts from.
    pub base: String,
    /// Where git keeps what all worktrees share (the lock is there).
    common_dir: PathBuf,
}

/// Lines a task changed, from the base to its branch.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct DiffStat {
    pub files: u32,
    pub insertions: u64,
    pub deletions: u64,
}

/// How a task's worktree ended.
#[derive(Debug, Clone, Default)]
pub(super) struct Ending {
    /// The branch, when it was kept (it moved from the base, or its worktree was kept).
    pub branch: Option<String>,
    /// The branch's last commit, when it moved from the base.
    pub commit: Option<String>,
    pub diff: DiffStat,
    /// The worktree, when it was kept.
    pub worktree: Option<PathBuf>,
    /// What went wrong committing or removing, if anything.
    pub problem: Option<String>,
}

/// Runs git in `dir`, never asking anything; its stdout, or an error naming what failed.
pub(super) fn git(dir: &Path, args: &[&str]) -> anyhow::Result<String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .env("GIT_OPTIONAL_LOCKS", "0")
        .stdin(Stdio::null())
        .output()
        .with_context(|| format!("cannot run git {}", args.first().unwrap_or(&"")))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        bail!(
            "git {} failed: {}",
            args.first().unwrap_or(&""),
            crate::format::first_line(err.trim())
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim_end().to_owned())
}

impl Repo {
    /// The repository holding `cwd` at its current commit; a usage error outside one.
    pub(super) fn find(cwd: &Path) -> Result<Self, crate::exit::Error> {
        let usage = crate::exit::Error::Usage;
        let root = git(cwd, &["rev-parse", "--show-toplevel"]).map_err(|_| {
            usage(format!(
                "runbook batch runs each task in a git worktree, and {} is not in a git repository: run it in one (or `git init` and commit first)",
                crate::foreign::term::escape(&cwd.display().to_string())
            ))
        })?;
        let root = PathBuf::from(root);
        let base = git(&root, &["rev-parse", "--verify", "-q", "HEAD"]).map_err(|_| {
            usage(format!(
                "the repository {} has no commit yet: a batch's worktrees start from one; commit first",
                crate::foreign::term::escape(&root.display().to_string())
            ))
        })?;
        let common = git(&root, &["rev-parse", "--git-common-dir"])
            .map_err(|e| usage(format!("cannot read the repository: {e:#}")))?;
        let common_dir = root.join(common);
        Ok(Self {
            root,
            base,
            common_dir,
        })
    }

    /// Holds the repository's worktree lock until dropped: `git worktree add` and `remove`
    /// write the same files, and two at once can fail.
    fn lock(&self) -> anyhow::Result<File> {
        let path = self.common_dir.join("runbook-worktree.lock");
        crate::trust::store::lock(&path).with_context(|| format!("cannot lock {}", path.display()))
    }

    /// Makes the worktree `dir` on the new branch `branch` at the base commit, then copies in
    /// the `include` files the main checkout has.
    pub(super) fn add(&self, dir: &Path, branch: &str, include: &[String]) -> anyhow::Result<()> {
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        {
            let _lock = self.lock()?;
            let path = dir.to_string_lossy();
            git(
                &self.root,
                &["worktree", "add", "-q", "-b", branch, &path, &self.base],
            )?;
        }
        for name in include {
            copy_in(&self.root, dir, name)?;
        }
        Ok(())
    }

    /// Commits what the task left in `dir` to its branch, reads what changed from the base,
    /// and removes the worktree unless `keep_worktree`; the branch stays only if it moved
    /// (or its worktree stays).
    pub(super) fn finish(
        &self,
        dir: &Path,
        branch: &str,
        message: &str,
        keep_worktree: bool,
    ) -> Ending {
        let mut ending = Ending::default();
        if let Err(e) = commit_all(dir, message) {
            ending.problem = Some(format!("{e:#}"));
        }
        let head = git(dir, &["rev-parse", "HEAD"]).ok();
        let moved = head.as_deref().is_some_and(|h| h != self.base);
        if moved {
            ending.commit = head;
            ending.diff = diff_stat(&self.root, &self.base, branch).unwrap_or_default();
        }
        if keep_worktree {
            ending.worktree = Some(dir.to_path_buf());
        } else if let Err(e) = self.remove(dir) {
            ending.problem.get_or_insert(format!("{e:#}"));
            ending.worktree = Some(dir.to_path_buf());
        }
        if moved || ending.worktree.is_some() {
            ending.branch = Some(branch.to_owned());
        } else if let Err(e) = git(&self.root, &["branch", "-q", "-D", branch]) {
            ending.problem.get_or_insert(format!("{e:#}"));
        }
        ending
    }

    /// Removes the worktree `dir` (what it holds too), behind the lock.
    pub(super) fn remove(&self, dir: &Path) -> anyhow::Result<()> {
        let _lock = self.lock()?;
        let path = dir.to_string_lossy();
        if dir.exists() {
            git(&self.root, &["worktree", "remove", "--force", &path])?;
        }
        git(&self.root, &["worktree", "prune"])?;
        Ok(())
    }
}

/// The main checkout's file an `include` names, checked: inside the repository, no link out on
/// the way, not in git's own directory. The error says which and what to do.
pub(super) fn included(root: &Path, name: &str) -> anyhow::Result<PathBuf> {
    crate::files::inside(root, name).map_err(|why| {
        anyhow::anyhow!(
            "`include`: `{}` is not a file of the repository: {why}",
            name.escape_debug()
        )
    })
}

/// Copies the main checkout's file `name` into the worktree, when it has one. A name that leaves
/// the repository (`..`, an absolute path, a link on the way) is refused, and so is a link in
/// the worktree on the way to where the copy goes (a committed link to `~/.ssh`): the copy is
/// written under the worktree or not at all.
fn copy_in(root: &Path, dir: &Path, name: &str) -> anyhow::Result<()> {
    let from = included(root, name)?;
    let shown = name.escape_debug();
    let Ok(meta) = std::fs::symlink_metadata(&from) else {
        return Ok(());
    };
    if !meta.is_file() {
        bail!("`include`: `{shown}` is not a regular file (a link, a directory…)");
    }
    let mut source = crate::files::open(&from, crate::files::Links::Refuse)
        .with_context(|| format!("`include`: cannot read `{shown}`"))?;
    let mode = std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777;
    let mut copy = create_in(dir, Path::new(name), mode)
        .with_context(|| format!("`include`: cannot copy `{shown}` into the worktree"))?;
    std::io::copy(&mut source, &mut copy)
        .with_context(|| format!("`include`: cannot copy `{shown}` into the worktree"))?;
    Ok(())
}

/// Opens `relative` under `dir` for writing (made, or emptied), with the directories on the way;
/// a link anywhere on the way, or at the file itself, is refused rather than followed.
#[allow(
    clippy::disallowed_methods,
    reason = "the user's own ignored file (a .env holds the secrets the task needs), copied byte for byte"
)]
fn create_in(dir: &Path, relative: &Path, mode: u32) -> anyhow::Result<File> {
    use std::os::unix::fs::OpenOptionsExt as _;
    let mut at = dir.to_path_buf();
    let mut parts = relative.components().peekable();
    while let Some(part) = parts.next() {
        at.push(part);
        if parts.peek().is_none() {
            break;
        }
        match std::fs::symlink_metadata(&at) {
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => bail!(
                "{} is a link or a file in the worktree, not a directory",
                at.display()
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => std::fs::create_dir(&at)?,
            Err(e) => return Err(e.into()),
        }
    }
    let file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(mode)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK)
        .open(&at)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ELOOP) => anyhow::anyhow!("{} is a link in the worktree", at.display()),
            _ => anyhow::Error::from(e),
        })?;
    if !file.metadata()?.is_file() {
        bail!("{} is not a regular file in the worktree", at.display());
    }
    Ok(file)
}

/// Commits every change in `dir` (ignored files aside), if there is one.
fn commit_all(dir: &Path, message: &str) -> anyhow::Result<()> {
    git(dir, &["add", "-A"])?;
    let staged = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["diff", "--cached", "--quiet"])
        .stdin(Stdio::null())
        .status()
        .context("cannot run git diff")?;
    if staged.success() {
        return Ok(());
    }
    let named = git(dir, &["config", "user.name"]).is_ok_and(|n| !n.is_empty());
    let mut args = Vec::new();
    if !named {
        args.extend([
            "-c",
            "user.name=runbook",
            "-c",
            "user.email=runbook@localhost",
        ]);
    }
    args.extend(["commit", "-q", "--no-verify", "-m", message]);
    git(dir, &args)?;
    Ok(())
}

/// Files and lines changed from `base` to `branch`.
fn diff_stat(root: &Path, base: &str, branch: &str) -> anyhow::Result<DiffStat> {
    let out = git(root, &["diff", "--numstat", base, branch])?;
    let mut stat = DiffStat::default();
    for line in out.lines() {
        let mut parts = line.split('\t');
        let added = parts.next().and_then(|n| n.parse::<u64>().ok());
        let removed = parts.next().and_then(|n| n.parse::<u64>().ok());
        stat.files += 1;
        stat.insertions += added.unwrap_or(0);
        stat.deletions += removed.unwrap_or(0);
    }
    Ok(stat)
}
