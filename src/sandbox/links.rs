//! What the links in a denied path lead to, denied as well. Dotfile managers (stow, chezmoi,
//! home-manager) keep `~/.ssh/id_ed25519` as a link into a repository of dotfiles or the Nix
//! store: denying `~/.ssh` must deny the key where it really lies, for Landlock (whose rules are
//! on what a path leads to) and for bubblewrap (which hides the path, not the file behind it).

use std::path::{Path, PathBuf};

/// How deep below a denied directory links are looked for.
const MAX_DEPTH: usize = 16;
/// How many entries of one denied path are looked at, at the most.
const MAX_ENTRIES: usize = 20_000;

/// The resolved targets of every symbolic link found in `deny` (the paths themselves, and what
/// their directories hold), each target's own links followed in turn.
pub(super) fn targets(deny: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = Vec::new();
    let mut todo: Vec<PathBuf> = deny.to_vec();
    let mut seen = 0usize;
    while let Some(path) = todo.pop() {
        let mut found = Vec::new();
        links_in(&path, 0, &mut seen, &mut found);
        for link in found {
            let Ok(real) = link.canonicalize() else {
                continue;
            };
            if !out.contains(&real) && !deny.contains(&real) {
                todo.push(real.clone());
                out.push(real);
            }
        }
        if seen >= MAX_ENTRIES * deny.len().max(1) {
            break;
        }
    }
    out
}

/// Pushes onto `found` each link at or below `path`, no link followed on the way.
fn links_in(path: &Path, depth: usize, seen: &mut usize, found: &mut Vec<PathBuf>) {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return;
    };
    *seen += 1;
    if meta.file_type().is_symlink() {
        found.push(path.to_path_buf());
        return;
    }
    if !meta.is_dir() || depth >= MAX_DEPTH {
        return;
    }
    let Ok(entries) = std::fs::read_dir(path) else {
        return;
    };
    for entry in entries.flatten() {
        if *seen >= MAX_ENTRIES {
            return;
        }
        links_in(&entry.path(), depth + 1, seen, found);
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "a test's fixture")]
mod tests {
    use super::*;

    #[test]
    fn a_key_kept_as_a_link_is_denied_where_it_lies_and_so_is_a_linked_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().canonicalize().unwrap();
        let dotfiles = home.join("dotfiles");
        std::fs::create_dir_all(dotfiles.join("ssh")).unwrap();
        std::fs::create_dir_all(dotfiles.join("aws")).unwrap();
        std::fs::create_dir_all(home.join(".ssh")).unwrap();
        std::fs::write(dotfiles.join("ssh/id_ed25519"), "key").unwrap();
        std::fs::write(dotfiles.join("chain"), "k2").unwrap();
        std::os::unix::fs::symlink(
            dotfiles.join("ssh/id_ed25519"),
            home.join(".ssh/id_ed25519"),
        )
        .unwrap();
        std::os::unix::fs::symlink(dotfiles.join("aws"), home.join(".aws")).unwrap();
        // A link in a linked directory is followed as well.
        std::os::unix::fs::symlink(dotfiles.join("chain"), dotfiles.join("aws/credentials"))
            .unwrap();
        let mut got = targets(&[home.join(".ssh"), home.join(".aws")]);
        got.sort();
        assert_eq!(
            got,
            [
                dotfiles.join("aws"),
                dotfiles.join("chain"),
                dotfiles.join("ssh/id_ed25519")
            ]
        );
    }
}
