//! A task's git worktree: made from the batch's base commit on a branch of its own behind one
//! lock per repository, filled with the ignored files the task file includes, and at the end
//! what its work tree holds committed to that branch (whatever HEAD the agent left, and through
//! the git dir runbook made, whatever `.git` the agent left), the worktree removed, the branch
//! kept only if it moved. Every git command goes through [`crate::git::Git`].

use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context as _, bail};

use crate::git::Git;
use crate::git::commit::{self, Author};

/// The repository a batch runs in.
#[derive(Debug, Clone)]
pub(super) struct Repo {
    /// The main checkout's root.
    pub root: PathBuf,
    /// The commit every task starts from.
    pub base: String,
    /// The main checkout's git dir.
    git_dir: PathBuf,
    /// Where git keeps what all worktrees share (the lock is there).
    common_dir: PathBuf,
    /// Who the commits runbook makes are by.
    author: Author,
}

/// A task's worktree as runbook made it, before any agent ran in it.
#[derive(Debug, Clone)]
pub(super) struct Worktree {
    pub dir: PathBuf,
    /// The task's branch (`runbook/<batch>/<task>`).
    pub branch: String,
    /// Its git dir, `<common>/worktrees/<name>`.
    git_dir: PathBuf,
    /// What its `.git` file said.
    dot_git: Vec<u8>,
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

impl Repo {
    /// The repository holding `cwd` at its current commit; a usage error outside one.
    pub(super) fn find(cwd: &Path) -> Result<Self, crate::exit::Error> {
        let usage = crate::exit::Error::Usage;
        let outside = |_| {
            usage(format!(
                "runbook batch runs each task in a git worktree, and {} is not in a git repository: run it in one (or `git init` and commit first)",
                crate::foreign::term::escape(&cwd.display().to_string())
            ))
        };
        let found = Git::find(cwd).map_err(outside)?;
        let root = PathBuf::from(
            found
                .line(&["rev-parse", "--show-toplevel"])
                .map_err(outside)?,
        );
        let unreadable = |e: anyhow::Error| usage(format!("cannot read the repository: {e:#}"));
        let git_dir = found
            .line(&["rev-parse", "--absolute-git-dir"])
            .map_err(unreadable)?;
        let git = Git::at(Path::new(&git_dir), &root).map_err(unreadable)?;
        let base = git.line(&["rev-parse", "--verify", "-q", "HEAD"]).map_err(|_| {
            usage(format!(
                "the repository {} has no commit yet: a batch's worktrees start from one; commit first",
                crate::foreign::term::escape(&root.display().to_string())
            ))
        })?;
        let common = git
            .line(&["rev-parse", "--path-format=absolute", "--git-common-dir"])
            .map_err(unreadable)?;
        let author = author(&git);
        Ok(Self {
            root,
            base,
            git_dir: PathBuf::from(git_dir),
            common_dir: PathBuf::from(common),
            author,
        })
    }

    /// git on the main checkout.
    pub(super) fn git(&self) -> anyhow::Result<Git> {
        Git::at(&self.git_dir, &self.root)
    }

    /// Holds the repository's worktree lock until dropped: `git worktree add` and `remove`
    /// write the same files, and two at once can fail.
    fn lock(&self) -> anyhow::Result<File> {
        let path = self.common_dir.join("runbook-worktree.lock");
        crate::trust::store::lock(&path).with_context(|| format!("cannot lock {}", path.display()))
    }

    /// Makes the worktree `dir` on the new branch `branch` at the base commit, then copies in
    /// the `include` files the main checkout has. The worktree, once made (even when a copy
    /// failed after), and whether all went well.
    pub(super) fn add(
        &self,
        dir: &Path,
        branch: &str,
        include: &[String],
    ) -> (Option<Worktree>, anyhow::Result<()>) {
        let made = self.make(dir, branch);
        let worktree = match made {
            Ok(w) => w,
            Err(e) => return (None, Err(e)),
        };
        for name in include {
            if let Err(e) = copy_in(&self.root, dir, name) {
                return (Some(worktree), Err(e));
            }
        }
        (Some(worktree), Ok(()))
    }

    /// `git worktree add`, and what runbook must know of the worktree before an agent runs in it.
    fn make(&self, dir: &Path, branch: &str) -> anyhow::Result<Worktree> {
        if let Some(parent) = dir.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("cannot create {}", parent.display()))?;
        }
        {
            let _lock = self.lock()?;
            let path = dir.to_string_lossy();
            self.git()?
                .out(&["worktree", "add", "-q", "-b", branch, &path, &self.base])?;
        }
        let git_dir = Git::find(dir)?.line(&["rev-parse", "--absolute-git-dir"])?;
        let dot_git = crate::files::read(&dir.join(".git"), 4096, crate::files::Links::Refuse)
            .map_err(|e| anyhow::anyhow!("cannot read {}/.git: {e}", dir.display()))?;
        Ok(Worktree {
            dir: dir.to_path_buf(),
            branch: branch.to_owned(),
            git_dir: PathBuf::from(git_dir),
            dot_git,
        })
    }

    /// Commits what the task left in its work tree to its branch, reads what changed from the
    /// base, and removes the worktree unless `keep_worktree`; the branch stays only if it moved
    /// (or its worktree stays).
    pub(super) fn finish(&self, wt: &Worktree, message: &str, keep_worktree: bool) -> Ending {
        let mut ending = Ending {
            problem: put_back_dot_git(wt).err(),
            ..Ending::default()
        };
        let index = wt.git_dir.join("runbook-index");
        let branch_ref = format!("refs/heads/{}", wt.branch);
        let committed = Git::at(&wt.git_dir, &wt.dir).and_then(|git| {
            commit::work_tree(&git, &branch_ref, &self.base, message, &index, &self.author)
        });
        let tip = match committed {
            Ok(c) => Some(c.tip),
            Err(e) => {
                ending.problem.get_or_insert(format!("{e:#}"));
                None
            }
        };
        let moved = tip.as_deref().is_some_and(|t| t != self.base);
        if moved {
            ending.diff = self
                .diff_stat(tip.as_deref().unwrap_or_default())
                .unwrap_or_default();
            ending.commit = tip;
        }
        if keep_worktree {
            if let Err(e) = settle_kept(wt, &index, &branch_ref) {
                ending.problem.get_or_insert(format!("{e:#}"));
            }
            ending.worktree = Some(wt.dir.clone());
        } else if let Err(e) = self.remove(&wt.dir) {
            ending.problem.get_or_insert(format!("{e:#}"));
            ending.worktree = Some(wt.dir.clone());
        }
        if moved || ending.worktree.is_some() {
            ending.branch = Some(wt.branch.clone());
        } else if let Err(e) = self.drop_branch(&wt.branch) {
            ending.problem.get_or_insert(format!("{e:#}"));
        }
        ending
    }

    /// What is left of a task whose worktree could not be made: the directory, and the branch
    /// if it was made.
    pub(super) fn abandon(&self, dir: &Path, branch: &str) -> Ending {
        let mut ending = Ending::default();
        if let Err(e) = self.remove(dir) {
            ending.problem = Some(format!("{e:#}"));
        }
        let _ = self.drop_branch(branch);
        ending
    }

    /// Deletes the branch `branch` if it is still at the base.
    fn drop_branch(&self, branch: &str) -> anyhow::Result<()> {
        let full = format!("refs/heads/{branch}");
        self.git()?.out(&["update-ref", "-d", &full, &self.base])?;
        Ok(())
    }

    /// Removes the worktree `dir` (what it holds too), behind the lock.
    pub(super) fn remove(&self, dir: &Path) -> anyhow::Result<()> {
        let _lock = self.lock()?;
        let git = self.git()?;
        let path = dir.to_string_lossy();
        if dir.exists() {
            git.out(&["worktree", "remove", "--force", &path])?;
        }
        git.out(&["worktree", "prune"])?;
        Ok(())
    }

    /// Files and lines changed from the base to `tip`.
    fn diff_stat(&self, tip: &str) -> anyhow::Result<DiffStat> {
        let out = self.git()?.out(&[
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--numstat",
            &self.base,
            tip,
        ])?;
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
}

/// Who runbook's commits are by: the repository's `user.name` and `user.email`, else the
/// user's, else runbook.
fn author(git: &Git) -> Author {
    let user = crate::git::run::user();
    let get = |key: &str| {
        git.line(&["config", "--get", key])
            .ok()
            .filter(|v| !v.is_empty())
    };
    let name = get("user.name").or_else(|| user.name.clone());
    let email = get("user.email").or_else(|| user.email.clone());
    match name {
        Some(name) => Author {
            name,
            email: email.unwrap_or_else(|| "runbook@localhost".to_owned()),
        },
        None => Author {
            name: "runbook".to_owned(),
            email: "runbook@localhost".to_owned(),
        },
    }
}

/// Puts the worktree's `.git` file back as runbook made it, if the task replaced it (with a
/// repository of its own, a link, another file): an error saying so.
#[allow(
    clippy::disallowed_methods,
    reason = "the worktree's own `.git` file, as git wrote it, written back byte for byte"
)]
fn put_back_dot_git(wt: &Worktree) -> Result<(), String> {
    let path = wt.dir.join(".git");
    let now = crate::files::read(&path, 4096, crate::files::Links::Refuse).ok();
    if now.as_deref() == Some(wt.dot_git.as_slice()) {
        return Ok(());
    }
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(&path),
        Ok(_) => std::fs::remove_file(&path),
        Err(_) => Ok(()),
    }
    .and_then(|()| std::fs::write(&path, &wt.dot_git))
    .map_err(|e| format!("cannot put back its worktree's .git: {e}"))?;
    Err("the task replaced its worktree's .git: runbook's own was put back and the work tree committed as it was".to_owned())
}

/// A kept worktree on its task's branch, its index the one its work was committed with: `git
/// status` in it shows what the user changes after, nothing of the task's.
fn settle_kept(wt: &Worktree, index: &Path, branch_ref: &str) -> anyhow::Result<()> {
    std::fs::rename(index, wt.git_dir.join("index")).context("cannot keep the worktree's index")?;
    Git::at(&wt.git_dir, &wt.dir)?.out(&["symbolic-ref", "HEAD", branch_ref])?;
    Ok(())
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
