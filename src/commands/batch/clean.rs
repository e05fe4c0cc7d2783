//! `runbook batch clean`: removes the worktrees batches left, and their branches that hold no
//! change; and the leftovers `list` and `doctor` point at. A worktree holding changes not
//! committed to its branch (the user's edits in a kept worktree) is kept unless `--force`.

use std::path::{Path, PathBuf};

use super::record::{self, BatchRecord};
use crate::config::{self, Flags};
use crate::exit::{Error, ExitStatus};
use crate::git::Git;

/// The worktrees a batch left, by batch directory.
pub(crate) fn leftovers(runs_dir: &Path) -> Vec<(PathBuf, usize)> {
    let Ok(entries) = std::fs::read_dir(record::batches_dir(runs_dir)) else {
        return Vec::new();
    };
    let mut out: Vec<(PathBuf, usize)> = entries
        .flatten()
        .filter_map(|e| {
            let n = std::fs::read_dir(e.path().join("worktrees")).ok()?.count();
            (n > 0).then(|| (e.path(), n))
        })
        .collect();
    out.sort();
    out
}

/// Cleans the batch `id` (a prefix will do), or every batch that has ended.
pub(super) fn clean(
    id: Option<&str>,
    force: bool,
    global: &Flags<config::Global>,
    runs_dir: &Flags<config::Runs>,
) -> anyhow::Result<ExitStatus> {
    let config = config::load_here(global.values().iter().chain(runs_dir.values()))?;
    let runs_dir = crate::rundir::runs_dir(&config)?;
    let dirs: Vec<PathBuf> = match id {
        Some(id) => vec![super::find_batch(&runs_dir, id)?.ok_or_else(|| {
            Error::Usage(format!(
                "no batch `{id}` in {}",
                record::batches_dir(&runs_dir).display()
            ))
        })?],
        None => leftovers(&runs_dir).into_iter().map(|(d, _)| d).collect(),
    };
    let mut out = crate::term::out::stderr();
    for dir in dirs {
        let record = match record::load(&dir) {
            Ok(r) => r,
            Err(e) => {
                out.line(&format!("skipped {}: {e:#}", dir.display()));
                continue;
            }
        };
        if record.outcome == "running" && id.is_none() {
            out.line(&format!(
                "skipped {}: it may still run (name it to clean it anyway)",
                crate::foreign::term::escape_line(&record.batch_id)
            ));
            continue;
        }
        out.line(&clean_one(&dir, &record, force));
    }
    out.flush()?;
    Ok(ExitStatus::Completed)
}

/// What `clean` did with a batch's worktrees.
#[derive(Default)]
struct Swept {
    removed: u64,
    /// Kept for what they hold, with why.
    kept: Vec<String>,
    /// The branches of the kept worktrees.
    kept_branches: Vec<String>,
    problems: Vec<String>,
}

/// Removes the batch's worktrees (but those holding uncommitted changes, unless `force`) and its
/// branches still at the base; says what it did.
fn clean_one(dir: &Path, record: &BatchRecord, force: bool) -> String {
    let repo = Path::new(&record.repo);
    let git = match Git::find(repo) {
        Ok(git) => git,
        Err(e) => return format!("{}: nothing removed: {e:#}", dir.display()),
    };
    let mut swept = Swept::default();
    if let Ok(entries) = std::fs::read_dir(dir.join("worktrees")) {
        for entry in entries.flatten() {
            sweep(&git, &entry.path(), force, &mut swept);
        }
    }
    let _ = git.out(&["worktree", "prune"]);
    // The branches are the batch's whose directory this is: a record naming another batch (a
    // copied directory, an edit) must not have that batch's branches deleted.
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let shown = crate::foreign::term::escape_line(&record.batch_id);
    if name != record.batch_id || crate::config::tasks::valid_id(name).is_err() {
        swept.problems.push(format!(
            "its record names the batch `{shown}`, not `{name}`: no branch deleted"
        ));
        return said(name, &swept, 0, 0);
    }
    let prefix = format!("refs/heads/runbook/{name}/");
    let refs = git
        .out(&["for-each-ref", "--format=%(refname) %(objectname)", &prefix])
        .unwrap_or_default();
    let (mut deleted, mut kept) = (0, 0);
    for line in refs.lines() {
        let Some((branch, commit)) = line.split_once(' ') else {
            continue;
        };
        if swept.kept_branches.iter().any(|b| b == branch) {
            continue;
        }
        if commit == record.base_commit {
            match git.out(&["update-ref", "-d", branch, commit]) {
                Ok(_) => deleted += 1,
                Err(e) => swept.problems.push(format!("{e:#}")),
            }
        } else {
            kept += 1;
        }
    }
    said(name, &swept, deleted, kept)
}

/// Removes the worktree `path`, unless it holds changes not committed to its branch (or they
/// cannot be told) and `force` is not given.
fn sweep(git: &Git, path: &Path, force: bool, swept: &mut Swept) {
    let text = path.display().to_string();
    let shown = crate::foreign::term::escape_line(&text);
    let linked = git_dir_of(git, path).and_then(|gd| Git::at(&gd, path).ok());
    if !force {
        let holds = linked.as_ref().map(uncommitted);
        let why = match holds {
            Some(Ok(0)) => None,
            Some(Ok(n)) => Some(format!(
                "{shown} holds {} not committed to its branch",
                crate::format::plural(n, "changed file")
            )),
            Some(Err(e)) => Some(format!("{shown}: cannot tell what it holds: {e:#}")),
            None => Some(format!(
                "{shown} is no worktree git knows, so what it holds cannot be told"
            )),
        };
        if let Some(why) = why {
            let branch = linked.and_then(|g| g.line(&["symbolic-ref", "-q", "HEAD"]).ok());
            swept.kept_branches.extend(branch);
            swept.kept.push(why);
            return;
        }
    }
    let path_text = path.to_string_lossy();
    match git.out(&["worktree", "remove", "--force", "--force", &path_text]) {
        Ok(_) => swept.removed += 1,
        Err(_) if std::fs::remove_dir_all(path).is_ok() => swept.removed += 1,
        Err(e) => swept.problems.push(format!("{e:#}")),
    }
}

/// The git dir of the worktree at `path`, as the repository records it (not as the worktree's
/// own `.git` says).
fn git_dir_of(git: &Git, path: &Path) -> Option<std::path::PathBuf> {
    let common = git
        .line(&["rev-parse", "--path-format=absolute", "--git-common-dir"])
        .ok()?;
    let want = path.join(".git");
    let entries = std::fs::read_dir(Path::new(&common).join("worktrees")).ok()?;
    entries.flatten().map(|e| e.path()).find(|gd| {
        crate::files::read(&gd.join("gitdir"), 4096, crate::files::Links::Refuse)
            .is_ok_and(|text| Path::new(String::from_utf8_lossy(&text).trim_end()) == want)
    })
}

/// How many files of the worktree differ from its branch, untracked ones included.
fn uncommitted(git: &Git) -> anyhow::Result<u64> {
    Ok(crate::git::changed_paths(git)?.len() as u64)
}

/// What `clean` did to one batch, in a line.
fn said(id: &str, swept: &Swept, deleted: u64, kept: u64) -> String {
    let mut line = format!(
        "{id}: removed {}, deleted {} without changes",
        crate::format::plural(swept.removed, "worktree"),
        crate::format::plural(deleted, "branch"),
    );
    if !swept.kept.is_empty() {
        line.push_str(&format!(
            "; kept {} ({}): commit what it holds, or clean with --force to remove it anyway",
            crate::format::plural(swept.kept.len() as u64, "worktree"),
            swept.kept.join("; ")
        ));
    }
    if kept > 0 {
        line.push_str(&format!(
            "; kept {} with changes (git branch -D to drop them)",
            crate::format::plural(kept, "branch")
        ));
    }
    if !swept.problems.is_empty() {
        line.push_str(&format!("; {}", swept.problems.join("; ")));
    }
    line
}
