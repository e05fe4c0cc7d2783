//! What in a repository's files needs trust before it takes effect: the settings that start a
//! program or write outside the repository, and the agent's variables that change what runs.

use std::path::{Path, PathBuf};

use super::env_vars;
use crate::agent::Permissions;
use crate::agent_env::AgentEnv;
use crate::config::keys::{self, Trust};
use crate::config::{Config, Entry, Value};
use crate::digest::Digest;
use crate::provenance::Layer;
use crate::sandbox::By;

/// One setting of a repository's file that needs trust.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Need {
    /// How the file names it: `checks."test"`, `agents.opencode.bin`, `env.LD_PRELOAD`,
    /// `NODE_OPTIONS` (in a `.env` file).
    pub key: String,
    /// The value as the file writes it; `None` for the agent's variables, whose values are
    /// never shown (they may be secrets).
    pub value: Option<String>,
}

impl Need {
    /// Whether it is one of the checks (`checks."test"`), which `--no-checks` leaves unrun.
    pub(crate) fn is_check(&self) -> bool {
        self.key.starts_with("checks.")
    }
}

/// A file of the repository that runbook read, and what in it needs trust (maybe nothing).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RepoFile {
    pub path: PathBuf,
    /// The SHA-256 of the bytes runbook read and acts on.
    pub digest: Digest,
    pub needs: Vec<Need>,
}

/// The repository's files that were read: `runbook.toml`, `runbook.local.toml`, `.env` and
/// `.env.local`, each with what in it needs trust.
pub(crate) fn repository_files(config: &Config, env: &AgentEnv) -> Vec<RepoFile> {
    let mut out = Vec::new();
    let own_sandbox = users_sandbox(config);
    for file in &config.files {
        let Some(content) = &file.content else {
            continue;
        };
        // A batch's task file (a file of the flag layer) is a repository's when it lies in
        // one (this one, or a clone named from elsewhere), the user's own elsewhere.
        let task_here = file.layer == Layer::Flag && task_file_foreign(&config.root, &file.path);
        if !matches!(file.layer, Layer::Repo | Layer::Local) && !task_here {
            continue;
        }
        let mut needs: Vec<Need> = content
            .entries
            .iter()
            .filter(|e| entry_needs_trust(e, &config.root, own_sandbox))
            .map(|e| Need {
                key: e.slot.name(),
                value: Some(e.value.to_toml().to_string()),
            })
            .collect();
        needs.extend(
            content
                .env
                .iter()
                .filter(|d| env_vars::needs_trust(&d.name))
                .map(|d| Need {
                    key: format!("env.{}", d.name),
                    value: None,
                }),
        );
        out.push(RepoFile {
            path: file.path.clone(),
            digest: content.digest,
            needs,
        });
    }
    for dotenv in env.dotenv_files() {
        let needs = dotenv
            .names
            .iter()
            .filter(|name| env_vars::needs_trust(name))
            .map(|name| Need {
                key: name.clone(),
                value: None,
            })
            .collect();
        out.push(RepoFile {
            path: dotenv.path.clone(),
            digest: dotenv.digest,
            needs,
        });
    }
    out
}

/// The sandbox the user's own file asks for (else the built-in: none), which a repository's
/// file may strengthen but not weaken untrusted.
fn users_sandbox(config: &Config) -> Option<By> {
    let own = config.files.iter().filter(|f| f.layer == Layer::Global);
    let entries = own.flat_map(|f| f.content.iter().flat_map(|c| c.entries.iter()));
    entries
        .filter(|e| *e.slot.key == keys::SANDBOX.0.key)
        .filter_map(|e| match e.value {
            Value::Sandbox(by) => Some(by),
            _ => None,
        })
        .next_back()
        .flatten()
}

/// Whether a repository's file giving `entry` needs trust for it; `own_sandbox`: the sandbox
/// the user's own file asks for.
fn entry_needs_trust(entry: &Entry, root: &Path, own_sandbox: Option<By>) -> bool {
    match (entry.slot.key.trust, &entry.value) {
        (Trust::Never, _) => false,
        (Trust::Runs, Value::Check(spec)) => spec.is_some(),
        (Trust::Runs, Value::Observers(list)) => !list.is_empty(),
        (Trust::Runs, Value::Args(args)) => !args.is_empty(),
        // An empty command runs nothing (and is refused as such).
        (Trust::Runs, Value::Text(command)) => !command.trim().is_empty(),
        (Trust::Runs, Value::Permissions(p)) => {
            !matches!(p, Permissions::Agent | Permissions::ReadOnly)
        }
        (Trust::Runs, _) => true,
        (Trust::WritesOutside, Value::Path(path)) => !inside(root, path),
        (Trust::WritesOutside, _) => true,
        // Off always needs trust; an enforcer only when it keeps less than the user's own.
        (Trust::Loosens, Value::Sandbox(by)) => {
            by.is_none_or(|by| own_sandbox.is_some_and(|own| by.strength() < own.strength()))
        }
        (Trust::Loosens, _) => true,
    }
}

/// Whether a batch's task file at `path` is a repository's, to be trusted before what it runs
/// takes effect: it lies in the repository `root` runbook works in, or in any other git work
/// tree (a clone's task file named from another repository). The home directory kept as a git
/// work tree of its own does not make every file under it a repository's.
pub(crate) fn task_file_foreign(root: &Path, path: &Path) -> bool {
    if inside(root, path) {
        return true;
    }
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    for dir in path.ancestors().skip(1) {
        if home.as_deref() == Some(dir) {
            return false;
        }
        if dir.join(".git").exists() {
            return true;
        }
    }
    false
}

/// Whether `path` is inside the directory `root`, links followed: the part of it that exists is
/// resolved, and what follows may not climb out with `..`. Git's own directory (`.git` at any
/// depth, and wherever a `.git` link leads) is not inside: what is written there (a hook, the
/// repository's config) runs or changes what runs.
pub(crate) fn inside(root: &Path, path: &Path) -> bool {
    let Ok(root) = root.canonicalize() else {
        return false;
    };
    let git_dir = root.join(".git").canonicalize().ok();
    let in_git = |p: &Path| {
        git_dir.as_deref().is_some_and(|g| p.starts_with(g))
            || p.strip_prefix(&root).is_ok_and(|rest| {
                rest.components()
                    .any(|c| c.as_os_str().eq_ignore_ascii_case(".git"))
            })
    };
    let mut existing = path.to_path_buf();
    let real = loop {
        if let Ok(real) = existing.canonicalize() {
            break real;
        }
        // `file_name` is `None` for a path ending in `..`: that climbs, and is not inside.
        match (existing.file_name(), existing.parent()) {
            (Some(_), Some(parent)) => existing = parent.to_path_buf(),
            _ => return false,
        }
    };
    // What does not exist yet is judged as written: `new/.git/x` is git's too.
    let rest = path.strip_prefix(&existing).unwrap_or(Path::new(""));
    let real = real.join(rest);
    real.starts_with(&root) && !in_git(&real)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use super::*;
    use crate::config::parse_file;

    #[test]
    fn a_path_is_inside_only_when_it_resolves_there() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        fs::create_dir_all(root.join("logs")).unwrap();
        std::os::unix::fs::symlink(tmp.path(), root.join("out")).unwrap();
        assert!(inside(&root, &root.join("logs/events.ndjson")));
        assert!(inside(&root, &root.join("new/dir/file")));
        assert!(!inside(&root, &root.join("../elsewhere")));
        assert!(!inside(&root, &root.join("new/../../elsewhere")));
        assert!(
            !inside(&root, &root.join("out/events.ndjson")),
            "a link out"
        );
        assert!(!inside(&root, Path::new("/tmp/events.ndjson")));
    }

    #[test]
    fn gits_own_directory_is_never_inside_the_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("repo");
        fs::create_dir_all(root.join(".git/hooks")).unwrap();
        fs::create_dir_all(root.join("vendor/lib/.git")).unwrap();
        fs::create_dir_all(root.join("store")).unwrap();
        std::os::unix::fs::symlink(root.join(".git"), root.join("meta")).unwrap();
        for path in [
            ".git/hooks/post-checkout",
            ".git/config",
            ".git",
            ".GIT/hooks/pre-commit",
            "vendor/lib/.git/hooks/post-merge",
            "meta/hooks/post-checkout",
            "new/.git/x",
            "logs/../.git/config",
        ] {
            assert!(!inside(&root, &root.join(path)), "{path}");
        }
        assert!(inside(&root, &root.join("store/.gitignore")));
        assert!(inside(&root, &root.join("logs/e.ndjson")));
    }

    #[test]
    fn only_what_runs_or_writes_outside_needs_trust() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let path = root.join("runbook.toml");
        let text = "model = \"m\"\ntimeout = \"1m\"\nmax_cost = 2\npermissions = \"read-only\"\n\
                    events_to = \"logs/e.ndjson\"\nruns_dir = \"/tmp/elsewhere\"\n\
                    [checks]\noff = false\ntest = \"make test\"\n\
                    [agents.claude]\nbin = \"./evil\"\nargs = []\n\
                    [env]\nRUST_LOG = \"debug\"\nLD_PRELOAD = \"/x.so\"\n";
        let layer = parse_file(Layer::Repo, &path, text).unwrap();
        let mut needs: Vec<String> = layer
            .entries
            .iter()
            .filter(|e| entry_needs_trust(e, &root, None))
            .map(|e| e.slot.name())
            .collect();
        needs.sort();
        assert_eq!(
            needs,
            ["agents.claude.bin", "checks.\"test\"", "runs_dir"],
            "not the model, limits, a check turned off, no arguments, events inside"
        );
        assert!(env_vars::needs_trust("LD_PRELOAD") && !env_vars::needs_trust("RUST_LOG"));
    }

    #[test]
    fn a_repository_may_name_a_stronger_sandbox_but_not_a_weaker_one_untrusted() {
        let root = Path::new("/repo");
        let needs = |text: &str, own: Option<By>| {
            let layer = parse_file(Layer::Repo, &root.join("runbook.toml"), text).unwrap();
            entry_needs_trust(&layer.entries[0], root, own)
        };
        for (text, own, want) in [
            ("sandbox = true", None, false),
            ("sandbox = \"bwrap\"", None, false),
            ("sandbox = \"landlock\"", Some(By::Bwrap), false),
            ("sandbox = \"auto\"", Some(By::Bwrap), false),
            (
                "[sandbox]\nenabled = \"landlock\"",
                Some(By::Landlock),
                false,
            ),
            ("sandbox = \"bwrap\"", Some(By::Auto), true),
            ("sandbox = \"bwrap\"", Some(By::Landlock), true),
            ("sandbox = true", Some(By::Landlock), true),
            ("sandbox = false", None, true),
            ("sandbox = false", Some(By::Bwrap), true),
        ] {
            assert_eq!(needs(text, own), want, "{text} over {own:?}");
        }
    }
}
