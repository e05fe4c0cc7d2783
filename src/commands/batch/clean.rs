//! `runbook batch clean`: removes the worktrees batches left, and their branches that hold no
//! change; and the leftovers `list` and `doctor` point at.

use std::path::{Path, PathBuf};

use super::record::{self, BatchRecord};
use super::worktree::git;
use crate::config::{self, Flags};
use crate::exit::{Error, ExitStatus};

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
        out.line(&clean_one(&dir, &record));
    }
    out.flush()?;
    Ok(ExitStatus::Completed)
}

/// Removes the batch's worktrees and its branches still at the base; says what it did.
fn clean_one(dir: &Path, record: &BatchRecord) -> String {
    let repo = Path::new(&record.repo);
    let mut removed = 0;
    let mut problems = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir.join("worktrees")) {
        for entry in entries.flatten() {
            let path = entry.path();
            let path_text = path.to_string_lossy();
            match git(repo, &["worktree", "remove", "--force", &path_text]) {
                Ok(_) => removed += 1,
                Err(_) if std::fs::remove_dir_all(&path).is_ok() => removed += 1,
                Err(e) => problems.push(format!("{e:#}")),
            }
        }
    }
    let _ = git(repo, &["worktree", "prune"]);
    // The branches are the batch's whose directory this is: a record naming another batch (a
    // copied directory, an edit) must not have that batch's branches deleted.
    let name = dir.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let shown = crate::foreign::term::escape_line(&record.batch_id);
    if name != record.batch_id || crate::config::tasks::valid_id(name).is_err() {
        problems.push(format!(
            "its record names the batch `{shown}`, not `{name}`: no branch deleted"
        ));
        return said(name, removed, 0, 0, &problems);
    }
    let prefix = format!("refs/heads/runbook/{name}/");
    let refs = git(
        repo,
        &[
            "for-each-ref",
            "--format=%(refname:short) %(objectname)",
            &prefix,
        ],
    )
    .unwrap_or_default();
    let (mut deleted, mut kept) = (0, 0);
    for line in refs.lines() {
        let Some((branch, commit)) = line.split_once(' ') else {
            continue;
        };
        if commit == record.base_commit {
            match git(repo, &["branch", "-q", "-D", branch]) {
                Ok(_) => deleted += 1,
                Err(e) => problems.push(format!("{e:#}")),
            }
        } else {
            kept += 1;
        }
    }
    said(name, removed, deleted, kept, &problems)
}

/// What `clean` did to one batch, in a line.
fn said(id: &str, removed: u64, deleted: u64, kept: u64, problems: &[String]) -> String {
    let mut line = format!(
        "{id}: removed {}, deleted {} without changes",
        crate::format::plural(removed, "worktree"),
        crate::format::plural(deleted, "branch"),
    );
    if kept > 0 {
        line.push_str(&format!(
            "; kept {} with changes (git branch -D to drop them)",
            crate::format::plural(kept, "branch")
        ));
    }
    if !problems.is_empty() {
        line.push_str(&format!("; {}", problems.join("; ")));
    }
    line
}
