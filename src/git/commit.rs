//! A work tree's content committed onto a branch with git's plumbing: an index of runbook's own
//! filled from the work tree (no filter, no hook: [`super::run`]), its tree made a commit whose
//! parent is the branch's tip, and the branch moved from that tip to it, compared and swapped.
//! Whatever HEAD the work tree is on (detached, another branch, the user's `main`) is neither
//! read nor moved: the work lands on the branch named, and nowhere else.

use std::path::Path;

use super::Git;

/// The branch once its work tree was committed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Committed {
    /// Its tip now.
    pub tip: String,
    /// Whether a commit was made: the work tree held something its tip did not.
    pub made: bool,
}

/// Who a commit is by.
#[derive(Debug, Clone)]
pub(crate) struct Author {
    pub name: String,
    pub email: String,
}

/// Commits what `git`'s work tree holds (its ignored files aside) onto the branch `branch` (a
/// full ref name), on top of its tip, or of `base` when the branch is gone. `index` is where
/// runbook's own index is made; it is left holding the work tree as committed.
pub(crate) fn work_tree(
    git: &Git,
    branch: &str,
    base: &str,
    message: &str,
    index: &Path,
    author: &Author,
) -> anyhow::Result<Committed> {
    let old = git
        .line(&[
            "rev-parse",
            "--verify",
            "-q",
            &format!("{branch}^{{commit}}"),
        ])
        .ok();
    let parent = old.clone().unwrap_or_else(|| base.to_owned());
    let staged = git.with_index(index);
    match std::fs::remove_file(index) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(e.into()),
        _ => {}
    }
    staged.out(&["read-tree", &parent])?;
    staged.out(&["add", "-A"])?;
    let tree = staged.line(&["write-tree"])?;
    let parent_tree = git.line(&["rev-parse", &format!("{parent}^{{tree}}")])?;
    if tree == parent_tree {
        if old.is_none() {
            git.out(&["update-ref", branch, &parent, ""])?;
        }
        return Ok(Committed {
            tip: parent,
            made: false,
        });
    }
    let tip = staged
        .with_env("GIT_AUTHOR_NAME", &author.name)
        .with_env("GIT_AUTHOR_EMAIL", &author.email)
        .with_env("GIT_COMMITTER_NAME", &author.name)
        .with_env("GIT_COMMITTER_EMAIL", &author.email)
        .line(&["commit-tree", &tree, "-p", &parent, "-m", message])?;
    let expected = old.as_deref().unwrap_or("");
    git.out(&["update-ref", "-m", message, branch, &tip, expected])?;
    Ok(Committed { tip, made: true })
}
