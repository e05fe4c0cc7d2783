//! A cheap picture of the work tree (path, size, modification time of every file), to tell
//! whether a planning turn changed anything.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Directories never looked into: version control data, and the agents' own state that they
/// write while reading (OpenCode keeps its session snapshots in `.opencode`).
const SKIPPED_DIRS: &[&str] = &[".git", ".opencode", ".jj", ".hg", ".svn"];
/// Beyond this many files the tree is too big to compare cheaply; the rest is not looked at.
const MAX_FILES: usize = 200_000;

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Snapshot {
    files: BTreeMap<PathBuf, (u64, Option<SystemTime>)>,
}

impl Snapshot {
    /// Every file under `root` (symlinks not followed).
    pub(crate) fn take(root: &Path) -> Self {
        let mut files = BTreeMap::new();
        let mut dirs = vec![root.to_path_buf()];
        while let Some(dir) = dirs.pop() {
            let Ok(entries) = fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                let Ok(meta) = entry.path().symlink_metadata() else {
                    continue;
                };
                let path = entry.path();
                if meta.is_dir() {
                    let name = entry.file_name();
                    if !SKIPPED_DIRS.iter().any(|d| name == *d) {
                        dirs.push(path);
                    }
                } else if files.len() < MAX_FILES {
                    let rel = path.strip_prefix(root).unwrap_or(&path).to_path_buf();
                    files.insert(rel, (meta.len(), meta.modified().ok()));
                }
            }
        }
        Self { files }
    }

    /// The paths created, deleted or changed since `self`, sorted.
    pub(crate) fn changes(&self, now: &Snapshot) -> Vec<PathBuf> {
        let mut changed: Vec<PathBuf> = self
            .files
            .iter()
            .filter(|(path, before)| now.files.get(*path) != Some(before))
            .map(|(path, _)| path.clone())
            .collect();
        changed.extend(
            now.files
                .keys()
                .filter(|path| !self.files.contains_key(*path))
                .cloned(),
        );
        changed.sort();
        changed
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests write their own fixtures")]
mod tests {
    use super::*;

    #[test]
    fn created_changed_and_deleted_files_are_found_and_agent_state_is_not() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        fs::create_dir_all(root.join("src")).unwrap();
        fs::create_dir_all(root.join(".git")).unwrap();
        fs::write(root.join("src/a.rs"), "a").unwrap();
        fs::write(root.join("b.txt"), "b").unwrap();
        let before = Snapshot::take(root);
        assert!(before.changes(&Snapshot::take(root)).is_empty());

        fs::write(root.join("src/a.rs"), "longer").unwrap();
        fs::remove_file(root.join("b.txt")).unwrap();
        fs::write(root.join("new.txt"), "n").unwrap();
        fs::write(root.join(".git/index"), "x").unwrap();
        let changed = before.changes(&Snapshot::take(root));
        assert_eq!(
            changed,
            [
                PathBuf::from("b.txt"),
                PathBuf::from("new.txt"),
                PathBuf::from("src/a.rs")
            ]
        );
    }
}
