//! A task's git worktree: made from the batch's base commit on a branch of its own behind one
//! lock per repository, filled with the ignored files the task file includes, and at the end
//! its changes committed to the branch, the worktree removed, the branch kept only if it moved.

use std::fs::File;
use std::path::{Component, Path, PathBuf};
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

/// Copies the main checkout's file `name` into the worktree, when it has one; a name that
/// leaves the repository is refused.
#[allow(
    clippy::disallowed_methods,
    reason = "the user's own ignored file (a .env holds the secrets the task needs), copied byte for byte"
)]
fn copy_in(root: &Path, dir: &Path, name: &str) -> anyhow::Result<()> {
    let relative = Path::new(name);
    let plain = relative
        .components()
        .all(|c| matches!(c, Component::Normal(_)));
    if !plain {
        bail!("`include`: `{name}` must be a path inside the repository, without `..`");
    }
    let from = root.join(relative);
    let Ok(meta) = std::fs::symlink_metadata(&from) else {
        return Ok(());
    };
    if !meta.is_file() {
        bail!("`include`: `{name}` is not a regular file");
    }
    let to = dir.join(relative);
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent)?;
    }
    std::fs::copy(&from, &to).with_context(|| format!("cannot copy `{name}` into the worktree"))?;
    Ok(())
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
