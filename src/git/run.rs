//! The one way runbook runs `git`. A repository's configuration is the agent's to write (its
//! `.git` is in the work dir, even under the sandbox), and so is a `.git` file or directory it
//! leaves in a worktree; the user's own configuration is the agent's too when it runs without
//! the sandbox. So no configuration may name a program that runbook's git then runs:
//!
//! - the git dir is the one runbook found before the agent ran, given to git explicitly, never
//!   found again in a work tree the agent could have changed;
//! - no system or global configuration is read (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL`): of
//!   the user's, only the identity, `core.excludesFile` and `safe.directory` are read, as values;
//! - over the repository's configuration, which git cannot be told to skip, runbook's settings
//!   win: no hooks (`core.hooksPath` leads nowhere), no fsmonitor, no pager, editor, askpass or
//!   credential helper, no transport at all (`protocol.allow=never`, no lazy fetch), no
//!   signatures made or checked, no automatic maintenance, no submodule recursion; and every
//!   filter any configuration defines (`filter.<name>.clean`, `smudge`, `process`) is emptied,
//!   which git takes as no filter, whatever attribute file names it;
//! - no environment variable of git's is passed on from runbook's own environment;
//! - a command that could run a diff driver is given `--no-ext-diff --no-textconv` by its caller.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use anyhow::{Context as _, bail};

/// runbook's settings, over any configuration git reads.
const SETTINGS: &[(&str, &str)] = &[
    ("core.hooksPath", "/dev/null"),
    ("core.fsmonitor", "false"),
    ("core.pager", "cat"),
    ("core.editor", ":"),
    ("sequence.editor", ":"),
    ("core.askPass", ""),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("commit.gpgSign", "false"),
    ("tag.gpgSign", "false"),
    ("log.showSignature", "false"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
    ("submodule.recurse", "false"),
    ("status.submoduleSummary", "false"),
    ("core.quotepath", "off"),
    ("color.ui", "never"),
];

/// The environment every git command gets (all of git's other variables are removed).
const ENV: &[(&str, &str)] = &[
    ("GIT_CONFIG_NOSYSTEM", "1"),
    ("GIT_CONFIG_GLOBAL", "/dev/null"),
    ("GIT_ATTR_NOSYSTEM", "1"),
    ("GIT_OPTIONAL_LOCKS", "0"),
    ("GIT_TERMINAL_PROMPT", "0"),
    ("GIT_NO_LAZY_FETCH", "1"),
    ("GIT_NO_REPLACE_OBJECTS", "1"),
    ("GIT_PROTOCOL_FROM_USER", "0"),
];

/// git, on one repository.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    /// The repository's git dir, when known; otherwise git finds it from `dir`.
    git_dir: Option<PathBuf>,
    /// The work tree, when the git dir is known.
    work_tree: Option<PathBuf>,
    /// Where git runs.
    dir: PathBuf,
    /// An index of runbook's own instead of the repository's.
    index: Option<PathBuf>,
    /// runbook's settings, the user's values and every filter emptied.
    settings: Vec<(String, String)>,
    /// More environment (a commit's author).
    env: Vec<(&'static str, String)>,
}

impl Git {
    /// git in `dir`, finding the repository that holds it. Only for a place no agent has
    /// touched yet: afterwards, [`Git::at`] with the git dir found now.
    pub(crate) fn find(dir: &Path) -> anyhow::Result<Self> {
        Self::settled(Self::bare(None, None, dir))
    }

    /// git on the git dir `git_dir` and the work tree `work_tree`, whatever `.git` the work tree
    /// holds now.
    pub(crate) fn at(git_dir: &Path, work_tree: &Path) -> anyhow::Result<Self> {
        let bare = Self::bare(Some(git_dir), Some(work_tree), work_tree);
        Self::settled(bare)
    }

    /// A new repository in `dir`, which holds none: one of runbook's own (the demo's).
    pub(crate) fn init(dir: &Path) -> anyhow::Result<Self> {
        Self::bare(None, None, dir).out(&["init", "-q"])?;
        Self::find(dir)
    }

    /// The same git with the index file `index` (runbook's own) instead of the repository's.
    pub(crate) fn with_index(&self, index: &Path) -> Self {
        Self {
            index: Some(index.to_path_buf()),
            ..self.clone()
        }
    }

    /// The same git with `name=value` in its environment (git's identity variables).
    pub(crate) fn with_env(&self, name: &'static str, value: &str) -> Self {
        let mut git = self.clone();
        git.env.push((name, value.to_owned()));
        git
    }

    fn bare(git_dir: Option<&Path>, work_tree: Option<&Path>, dir: &Path) -> Self {
        let mut settings: Vec<(String, String)> = SETTINGS
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        settings.extend(user().forwarded.iter().cloned());
        Self {
            git_dir: git_dir.map(Path::to_path_buf),
            work_tree: work_tree.map(Path::to_path_buf),
            dir: dir.to_path_buf(),
            index: None,
            settings,
            env: Vec::new(),
        }
    }

    /// `bare` with every filter its configuration defines emptied.
    fn settled(mut bare: Self) -> anyhow::Result<Self> {
        let listed = bare
            .out(&["config", "--list", "-z"])
            .context("cannot read the repository's configuration")?;
        for name in filters(&listed) {
            for part in ["clean", "smudge", "process"] {
                bare.settings
                    .push((format!("filter.{name}.{part}"), String::new()));
            }
            bare.settings
                .push((format!("filter.{name}.required"), "false".to_owned()));
        }
        Ok(bare)
    }

    /// The command `git ARGS`, as runbook runs every one.
    fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new("git");
        cmd.arg("--no-pager").args(args).current_dir(&self.dir);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("GIT_") {
                cmd.env_remove(name);
            }
        }
        cmd.envs(ENV.iter().copied());
        cmd.env("GIT_CONFIG_COUNT", self.settings.len().to_string());
        for (i, (key, value)) in self.settings.iter().enumerate() {
            cmd.env(format!("GIT_CONFIG_KEY_{i}"), key);
            cmd.env(format!("GIT_CONFIG_VALUE_{i}"), value);
        }
        if let Some(dir) = &self.git_dir {
            cmd.env("GIT_DIR", dir);
        }
        if let Some(tree) = &self.work_tree {
            cmd.env("GIT_WORK_TREE", tree);
        }
        if let Some(index) = &self.index {
            cmd.env("GIT_INDEX_FILE", index);
        }
        cmd.envs(self.env.iter().map(|(k, v)| (*k, v.as_str())));
        cmd.stdin(Stdio::null());
        cmd
    }

    /// `git ARGS`: its stdout, or an error naming the command and git's first line about it.
    pub(crate) fn out(&self, args: &[&str]) -> anyhow::Result<String> {
        let verb = args.iter().find(|a| !a.starts_with('-')).unwrap_or(&"");
        let out = super::limit::output(&mut self.command(args), super::limit::limit())
            .with_context(|| format!("git {verb}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            bail!(
                "git {verb} failed: {}",
                crate::format::first_line(err.trim())
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    /// [`Git::out`] without the line end.
    pub(crate) fn line(&self, args: &[&str]) -> anyhow::Result<String> {
        self.out(args).map(|s| s.trim_end().to_owned())
    }

    /// Whether `git ARGS` succeeds (`cat-file -e`, `diff --quiet`…).
    pub(crate) fn succeeds(&self, args: &[&str]) -> bool {
        super::limit::output(&mut self.command(args), super::limit::limit())
            .is_ok_and(|out| out.status.success())
    }
}

/// The names of the filters a `config --list -z` defines.
fn filters(listed: &str) -> BTreeSet<String> {
    listed
        .split('\0')
        .filter_map(|entry| {
            let key = entry.split('\n').next()?;
            let rest = key.strip_prefix("filter.")?;
            let (name, part) = rest.rsplit_once('.')?;
            matches!(part, "clean" | "smudge" | "process" | "required").then(|| name.to_owned())
        })
        .collect()
}

/// What runbook reads of the user's own configuration.
#[derive(Debug, Default)]
pub(crate) struct User {
    /// `user.name` and `user.email`, when set.
    pub name: Option<String>,
    pub email: Option<String>,
    /// Settings passed on to every command: `core.excludesFile`, each `safe.directory`.
    forwarded: Vec<(String, String)>,
}

/// The user's configuration as runbook reads it, once.
pub(crate) fn user() -> &'static User {
    static USER: OnceLock<User> = OnceLock::new();
    USER.get_or_init(|| {
        let single = |key: &str| {
            ["--global", "--system"]
                .into_iter()
                .find_map(|scope| read_user(scope, key, false).into_iter().next_back())
        };
        let mut forwarded = Vec::new();
        let file = ["--global", "--system"]
            .into_iter()
            .find_map(|scope| read_user(scope, "core.excludesFile", true).pop());
        if let Some(file) = file {
            forwarded.push(("core.excludesFile".to_owned(), file));
        }
        for scope in ["--system", "--global"] {
            for dir in read_user(scope, "safe.directory", false) {
                forwarded.push(("safe.directory".to_owned(), dir));
            }
        }
        User {
            name: single("user.name").filter(|n| !n.is_empty()),
            email: single("user.email").filter(|e| !e.is_empty()),
            forwarded,
        }
    })
}

/// The values of `key` in the user's configuration file of `scope` (`--global`, `--system`):
/// read as values (`path`: with `~` expanded), outside any repository, no program run.
fn read_user(scope: &str, key: &str, path: bool) -> Vec<String> {
    let mut cmd = Command::new("git");
    cmd.args(["--no-pager", "config", scope]);
    if path {
        cmd.arg("--type=path");
    }
    cmd.args(["--get-all", key]);
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(name);
        }
    }
    cmd.current_dir("/")
        .env("GIT_CEILING_DIRECTORIES", "/")
        .stdin(Stdio::null());
    let out = super::limit::output(&mut cmd, super::limit::limit());
    match out {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::to_owned)
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_filter_a_configuration_defines_is_named_once() {
        let listed = "core.bare\nfalse\0filter.lfs.clean\ngit-lfs clean\0filter.lfs.smudge\nx\0filter.A.b.process\ny\0filter.req.required\ntrue\0filter.x.other\nz\0";
        let names: Vec<String> = filters(listed).into_iter().collect();
        assert_eq!(names, ["A.b", "lfs", "req"]);
    }
}
