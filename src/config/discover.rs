//! Where the configuration files are: the global one, and the repository's `runbook.toml` and
//! `runbook.local.toml`, found by walking up from the working directory.

use std::path::{Path, PathBuf};

use crate::provenance::Layer;

pub(crate) const REPO_FILE: &str = "runbook.toml";
pub(crate) const LOCAL_FILE: &str = "runbook.local.toml";

/// The files a configuration is read from, lowest layer first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Places {
    /// The repository root: where `runbook.toml`, `runbook.local.toml`, `.env` and `.env.local` are.
    pub root: PathBuf,
    pub files: Vec<(Layer, PathBuf)>,
}

impl Places {
    /// The files for work in `dir`.
    pub(crate) fn find(dir: &Path) -> Self {
        let root = repository_root(dir);
        let mut files = Vec::new();
        files.extend(global_file().map(|f| (Layer::Global, f)));
        files.push((Layer::Repo, root.join(REPO_FILE)));
        files.push((Layer::Local, root.join(LOCAL_FILE)));
        Self { root, files }
    }
}

/// `$XDG_CONFIG_HOME/runbook/config.toml` (usually `~/.config/runbook/config.toml`).
fn global_file() -> Option<PathBuf> {
    use etcetera::BaseStrategy as _;
    let base = etcetera::choose_base_strategy().ok()?;
    Some(base.config_dir().join("runbook").join("config.toml"))
}

/// The nearest directory at or above `dir` that holds a runbook configuration file, without
/// leaving the repository (the directory holding `.git`); `dir` itself when there is neither.
pub(crate) fn repository_root(dir: &Path) -> PathBuf {
    for candidate in dir.ancestors() {
        let has = |name: &str| candidate.join(name).exists();
        if has(REPO_FILE) || has(LOCAL_FILE) || has(".git") {
            return candidate.to_path_buf();
        }
    }
    dir.to_path_buf()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests write their own fixtures")]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn the_walk_up_stops_at_the_configuration_or_the_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let repo = tmp.path().join("repo");
        let deep = repo.join("src/deep");
        fs::create_dir_all(&deep).unwrap();
        assert_eq!(
            repository_root(&deep),
            deep,
            "nothing found: the dir itself"
        );

        fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(repository_root(&deep), repo);

        fs::write(tmp.path().join(REPO_FILE), "").unwrap();
        assert_eq!(repository_root(&deep), repo, "never above the repository");

        fs::write(repo.join("src").join(REPO_FILE), "").unwrap();
        assert_eq!(
            repository_root(&deep),
            repo.join("src"),
            "the nearest file wins"
        );
    }
}
