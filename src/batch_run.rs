//! Which batch a run belongs to, told by where it ran: a batch's task works in its own worktree,
//! `batches/<batch>/worktrees/<task>` beside the runs directory, and the batch's record names the
//! repository the batch was made from, where the run belongs.

use std::collections::HashMap;
use std::path::{Component, Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use serde::Deserialize;

use crate::files::{self, Links};

/// The record a batch keeps in its directory.
const RECORD: &str = "batch.json";

/// The most of a batch's record read to find its repository.
const RECORD_LIMIT: u64 = 64 * 1024 * 1024;

/// A run of a batch's task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BatchRun {
    /// The batch's id.
    pub batch_id: String,
    /// The task's name in the batch.
    pub task: String,
    /// The batch's directory.
    pub batch_dir: PathBuf,
    /// The main checkout the batch was made from; `None` when its record cannot be read.
    pub repo: Option<PathBuf>,
    /// Where in the worktree the run started (the batch's place in the repository).
    pub subdir: PathBuf,
}

impl BatchRun {
    /// Where the run belongs: the repository, else the batch's directory.
    pub(crate) fn project(&self) -> &Path {
        self.repo.as_deref().unwrap_or(&self.batch_dir)
    }

    /// The directory of the repository the run stands for (its start, in the main checkout).
    pub(crate) fn home(&self) -> Option<PathBuf> {
        self.repo.as_ref().map(|r| r.join(&self.subdir))
    }

    /// The part of the batch's id a person types (`ew2p8`: the random part, as for a run).
    pub(crate) fn short_id(&self) -> &str {
        self.batch_id.rsplit('-').next().unwrap_or(&self.batch_id)
    }
}

/// The batch and task of a run that worked in `cwd`, if it worked in a batch's worktree.
pub(crate) fn of(cwd: &Path) -> Option<BatchRun> {
    let parts: Vec<Component<'_>> = cwd.components().collect();
    let at = (0..parts.len().saturating_sub(3)).rev().find(|&i| {
        parts[i].as_os_str() == "batches"
            && parts[i + 2].as_os_str() == "worktrees"
            && parts[i + 1].as_os_str().to_str().is_some_and(looks_like_id)
    })?;
    let batch_id = parts[at + 1].as_os_str().to_str()?.to_owned();
    let task = parts[at + 3].as_os_str().to_string_lossy().into_owned();
    let batch_dir: PathBuf = parts[..=at + 1].iter().collect();
    let subdir: PathBuf = parts[at + 4..].iter().collect();
    let repo = repo_of(&batch_dir);
    Some(BatchRun {
        batch_id,
        task,
        batch_dir,
        repo,
        subdir,
    })
}

/// A batch's id, as runs' ids are made (`20261124-101502-ew2p8`).
fn looks_like_id(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 17
        && b[..8].iter().all(u8::is_ascii_digit)
        && b[8] == b'-'
        && b[9..15].iter().all(u8::is_ascii_digit)
}

/// The part of a batch's record read here.
#[derive(Deserialize)]
struct Slim {
    repo: String,
}

/// The main checkout the batch in `batch_dir` was made from, read once per batch.
fn repo_of(batch_dir: &Path) -> Option<PathBuf> {
    static SEEN: OnceLock<Mutex<HashMap<PathBuf, Option<PathBuf>>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Mutex::default);
    if let Some(found) = seen
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(batch_dir)
    {
        return found.clone();
    }
    let found = files::read_optional(&batch_dir.join(RECORD), RECORD_LIMIT, Links::Refuse)
        .ok()
        .flatten()
        .and_then(|bytes| serde_json::from_slice::<Slim>(&bytes).ok())
        .map(|s| PathBuf::from(s.repo))
        .filter(|p| p.is_absolute());
    seen.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(batch_dir.to_owned(), found.clone());
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_of_a_batch_names_its_batch_and_task() {
        let run = of(Path::new(
            "/home/a/.local/share/runbook/batches/20261124-101502-ew2p8/worktrees/build-fix/web",
        ))
        .unwrap();
        assert_eq!(
            (run.batch_id.as_str(), run.task.as_str(), run.short_id()),
            ("20261124-101502-ew2p8", "build-fix", "ew2p8")
        );
        assert_eq!(run.subdir, Path::new("web"));
        assert_eq!(run.repo, None);
        assert!(of(Path::new("/src/batches/notes/worktrees/x")).is_none());
        assert!(of(Path::new("/src/app")).is_none());
    }
}
