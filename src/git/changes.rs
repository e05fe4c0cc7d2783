//! What a run produced in the git repository the agent worked in, read with the `git` binary and
//! never written to: the commit and state it started from, then the files, lines and commits that
//! changed since, the agent's commits and uncommitted edits and new files alike.
//!
//! The repository is found once, before the agent runs; its end is read from the same git dir
//! and work tree, whatever the agent left in `.git`, through the one runner ([`super::run`]),
//! which runs no program a configuration names. `git status` does not refresh the index; a
//! repository git cannot read, or no `git` at all, is simply not reported.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::Git;
use crate::event::{Changes, Commit, GitStart};

/// At most this many changed paths are listed (all are counted).
pub(crate) const MAX_PATHS: usize = 200;
/// At most this many new commits are listed (all are counted).
const MAX_COMMITS: usize = 50;
/// New files larger than this are counted as changed, their lines not.
const MAX_COUNTED_BYTES: u64 = 8 * 1024 * 1024;

/// The repository as the run found it, with what the end needs to tell the run's changes from
/// the ones already there.
#[derive(Debug, Clone)]
pub(crate) struct Start {
    pub info: GitStart,
    root: PathBuf,
    /// The repository's git dir, as found before the agent ran.
    git_dir: PathBuf,
    /// Paths already changed or new at the start, with their content's hash then.
    dirty: BTreeMap<String, Option<String>>,
}

/// The repository holding `cwd` and its state, if it is one git can read.
pub(crate) fn start(cwd: &Path) -> Option<Start> {
    let found = Git::find(cwd).ok()?;
    let root = PathBuf::from(found.line(&["rev-parse", "--show-toplevel"]).ok()?);
    let git_dir = PathBuf::from(found.line(&["rev-parse", "--absolute-git-dir"]).ok()?);
    let git = Git::at(&git_dir, &root).ok()?;
    let commit = git.line(&["rev-parse", "--verify", "-q", "HEAD"]).ok();
    let branch = git
        .line(&["symbolic-ref", "--short", "-q", "HEAD"])
        .ok()
        .filter(|b| !b.is_empty());
    let dirty: BTreeMap<String, Option<String>> = status(&git)?
        .into_iter()
        .map(|path| {
            let hash = hash(&git, &root, &path);
            (path, hash)
        })
        .collect();
    Some(Start {
        info: GitStart {
            root: root.display().to_string(),
            commit,
            branch,
            dirty: !dirty.is_empty(),
        },
        root,
        git_dir,
        dirty,
    })
}

/// What changed since `start`: every path whose content differs from the start commit now
/// (committed since or not, new files included), but for the ones that were already changed at
/// the start and were not touched since.
pub(crate) fn changes(start: &Start) -> Option<Changes> {
    let root = &start.root;
    // Read again: the agent may have defined filters since the start.
    let git = Git::at(&start.git_dir, root).ok()?;
    let mut lines: BTreeMap<String, Option<(u64, u64)>> = BTreeMap::new();
    if let Some(base) = &start.info.commit {
        // Tracked files: the start commit against the work tree now.
        let numstat = git
            .out(&[
                "diff",
                "--no-ext-diff",
                "--no-textconv",
                "--ignore-submodules=dirty",
                "--numstat",
                "-z",
                "--no-renames",
                base,
                "--",
            ])
            .ok()?;
        for field in numstat.split('\0') {
            let mut parts = field.splitn(3, '\t');
            let (Some(added), Some(removed), Some(path)) =
                (parts.next(), parts.next(), parts.next())
            else {
                continue;
            };
            let counts = added.parse().ok().zip(removed.parse().ok());
            lines.insert(path.to_owned(), counts);
        }
    }
    // New files, and every file of a repository without a commit yet.
    for path in status(&git)? {
        if lines.contains_key(&path) || !root.join(&path).is_file() {
            continue;
        }
        let tracked_before = start
            .info
            .commit
            .as_ref()
            .is_some_and(|base| git.succeeds(&["cat-file", "-e", &format!("{base}:{path}")]));
        if !tracked_before {
            lines.insert(path.clone(), count_lines(&root.join(&path)).map(|n| (n, 0)));
        }
    }
    // What was already changed at the start and is the same now is not the run's.
    lines.retain(|path, _| match start.dirty.get(path) {
        Some(then) => hash(&git, root, path) != *then,
        None => true,
    });
    let commits = match &start.info.commit {
        Some(base) => new_commits(&git, base),
        None => Vec::new(),
    };
    let commits_total = commits.len() as u32;
    Some(Changes {
        files_changed: lines.len() as u32,
        insertions: lines.values().flatten().map(|(a, _)| a).sum(),
        deletions: lines.values().flatten().map(|(_, d)| d).sum(),
        paths: lines.keys().take(MAX_PATHS).cloned().collect(),
        commits_total,
        commits: commits.into_iter().take(MAX_COMMITS).collect(),
    })
}

/// The commits on HEAD since `base`, oldest first.
fn new_commits(git: &Git, base: &str) -> Vec<Commit> {
    let range = format!("{base}..HEAD");
    let Ok(log) = git.out(&[
        "log",
        "--no-show-signature",
        "--reverse",
        "--format=%H%x00%s",
        &range,
        "--",
    ]) else {
        return Vec::new();
    };
    log.lines()
        .filter_map(|line| line.split_once('\0'))
        .map(|(id, subject)| Commit {
            id: id.to_owned(),
            subject: subject.to_owned(),
        })
        .collect()
}

/// The paths `git status` lists: changed, staged, deleted or untracked (each untracked file).
fn status(git: &Git) -> Option<Vec<String>> {
    changed_paths(git).ok()
}

/// The paths of the work tree that differ from its index or `HEAD`, or that git does not track
/// (each untracked file, ignored ones aside), as `git status` lists them.
pub(crate) fn changed_paths(git: &Git) -> anyhow::Result<Vec<String>> {
    let out = git.out(&[
        "status",
        "--porcelain=v1",
        "-z",
        "--untracked-files=all",
        "--ignore-submodules=dirty",
        "--no-renames",
    ])?;
    Ok(out
        .split('\0')
        .filter(|entry| entry.len() > 3)
        .map(|entry| entry[3..].to_owned())
        .collect())
}

/// The hash git would give the file's content now (nothing is written); `None`: it is gone.
fn hash(git: &Git, root: &Path, path: &str) -> Option<String> {
    if !root.join(path).is_file() {
        return None;
    }
    git.line(&["hash-object", "--no-filters", "--", path]).ok()
}

/// Lines of a new file; `None` for a binary or huge one.
fn count_lines(path: &Path) -> Option<u64> {
    let meta = path.metadata().ok()?;
    if meta.len() > MAX_COUNTED_BYTES {
        return None;
    }
    let bytes = std::fs::read(path).ok()?;
    if bytes.contains(&0) {
        return None;
    }
    let newlines = bytes.iter().filter(|&&b| b == b'\n').count() as u64;
    Some(newlines + u64::from(!bytes.is_empty() && !bytes.ends_with(b"\n")))
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests write their own fixtures")]
mod tests {
    use std::process::Command;

    use super::*;

    fn sh(dir: &Path, script: &str) {
        let ok = Command::new("sh")
            .arg("-c")
            .arg(script)
            .current_dir(dir)
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .status()
            .unwrap()
            .success();
        assert!(ok, "{script}");
    }

    #[test]
    fn commits_edits_and_new_files_count_but_what_was_dirty_before_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        sh(
            d,
            "git init -q -b main && printf 'a\\nb\\nc\\n' > a.txt && printf 'x\\n' > old.txt && git add . && git commit -qm init && printf 'wip\\n' > notes.txt && printf 'x\\ny\\n' > old.txt",
        );
        let start = start(d).unwrap();
        assert!(start.info.dirty);
        assert_eq!(start.info.branch.as_deref(), Some("main"));
        // The agent: a commit, an uncommitted edit, a new file.
        sh(
            d,
            "printf 'a\\nB\\nc\\nd\\n' > a.txt && git commit -qam 'Fix the flaky test' && printf 'a\\nB\\n' > a.txt && mkdir -p src && printf 'fn x() {}\\n\\n' > src/new.rs",
        );
        let index = std::fs::read(d.join(".git/index")).unwrap();
        let modified = std::fs::metadata(d.join(".git/index"))
            .unwrap()
            .modified()
            .unwrap();
        let c = changes(&start).unwrap();
        assert_eq!(
            c.paths,
            ["a.txt", "src/new.rs"],
            "not notes.txt or old.txt: {c:?}"
        );
        assert_eq!(c.files_changed, 2);
        // a.txt: `b` and `c` went, `B` came; src/new.rs: 2 lines.
        assert_eq!((c.insertions, c.deletions), (3, 2), "{c:?}");
        assert_eq!(c.commits_total, 1);
        assert_eq!(c.commits[0].subject, "Fix the flaky test");
        // Reading the repository wrote nothing to it, not even its index.
        assert_eq!(std::fs::read(d.join(".git/index")).unwrap(), index);
        assert_eq!(
            std::fs::metadata(d.join(".git/index"))
                .unwrap()
                .modified()
                .unwrap(),
            modified
        );
    }

    #[test]
    fn a_directory_that_is_no_repository_has_nothing_to_say() {
        let dir = tempfile::tempdir().unwrap();
        assert!(start(dir.path()).is_none());
    }

    #[test]
    fn a_repository_without_commits_counts_every_file_as_new() {
        let dir = tempfile::tempdir().unwrap();
        sh(dir.path(), "git init -q");
        let start = start(dir.path()).unwrap();
        assert_eq!(start.info.commit, None);
        std::fs::write(dir.path().join("a.txt"), "1\n2\n").unwrap();
        let c = changes(&start).unwrap();
        assert_eq!((c.files_changed, c.insertions), (1, 2));
    }
}
