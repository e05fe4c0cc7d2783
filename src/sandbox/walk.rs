//! What may be read when some paths may not: Landlock only allows, so every path beside the
//! way down to a denied path is allowed, and the way itself is not (the classic approach). From
//! `/` down to `~/.ssh`: `/` is not allowed as a whole, each of its entries but `/home` is;
//! `/home` is not, each of its entries but the user's home is, and so on. Links are not
//! followed: a link is read as what it leads to, where that is.
//!
//! What this costs: the directories on the way (`/`, `/home`, `~`) cannot be listed, and an
//! entry made in one of them after the run started cannot be read.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The paths to allow reading in, with all below them, so that everything but `deny` (absolute,
/// links resolved) and what is below it can be read.
pub(super) fn readable(deny: &[PathBuf]) -> Vec<PathBuf> {
    if deny.is_empty() {
        return vec![PathBuf::from("/")];
    }
    let on_the_way: BTreeSet<&Path> = deny.iter().flat_map(|d| d.ancestors().skip(1)).collect();
    let denied: BTreeSet<&Path> = deny.iter().map(PathBuf::as_path).collect();
    let mut out = Vec::new();
    for dir in &on_the_way {
        let Ok(entries) = std::fs::read_dir(dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            let p = path.as_path();
            if denied.contains(p) || on_the_way.contains(p) {
                continue;
            }
            if entry.file_type().is_ok_and(|t| t.is_symlink()) {
                continue;
            }
            out.push(path);
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[allow(clippy::disallowed_methods, reason = "a test's fixture")]
    fn everything_beside_the_way_to_a_denied_path_is_readable_and_nothing_on_it() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let home = root.join("home");
        for dir in [".ssh", ".config/gcloud", ".config/other", "work"] {
            std::fs::create_dir_all(home.join(dir)).unwrap();
        }
        std::fs::write(home.join(".bashrc"), "").unwrap();
        std::os::unix::fs::symlink(home.join(".ssh"), home.join("keys")).unwrap();
        let got = readable(&[home.join(".ssh"), home.join(".config/gcloud")]);
        let under: Vec<_> = got.iter().filter(|p| p.starts_with(&home)).collect();
        assert_eq!(
            under,
            [
                &home.join(".bashrc"),
                &home.join(".config/other"),
                &home.join("work")
            ],
            "not the denied paths, not the way to them, not a link into one"
        );
        assert!(!got.iter().any(|p| root.starts_with(p)), "{got:?}");
    }
}
