//! Trust in a repository's files. A cloned repository is foreign: its `runbook.toml`,
//! `runbook.local.toml`, `.env` and `.env.local` may set what runbook starts (checks, observers,
//! the agent's binary, command and arguments, permissions, variables that change what runs) or
//! where it writes outside the repository. Those settings take effect only once the user has
//! trusted the file at its current content (`runbook trust`, recorded by SHA-256), or trusts it
//! for one run (`--trust`, `RUNBOOK_TRUST`); at a terminal runbook asks once. The user's own
//! file, variables and flags are always trusted, and settings that run nothing need no trust.

mod env_vars;
mod needs;
mod prompt;
pub(crate) mod store;

use std::path::{Path, PathBuf};

use crate::agent_env::AgentEnv;
use crate::config::Config;
use crate::exit;
pub(crate) use needs::{Need, RepoFile, inside, repository_files, task_file_foreign};
pub(crate) use prompt::escape;
use store::{Recorded, Store};

/// The variable that trusts files for one run: paths separated by `:`, each a file or the
/// directory whose files are trusted.
pub(crate) const VAR: &str = "RUNBOOK_TRUST";

/// How a repository's file stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// It sets nothing that needs trust.
    NotNeeded,
    /// Trusted at its current content (`runbook trust`).
    Trusted,
    /// Trusted for this run by `--trust` or `RUNBOOK_TRUST`.
    Given,
    /// Trusted once, but it has changed since.
    Changed,
    /// Never trusted.
    Untrusted,
}

impl Status {
    /// Whether what the file sets may take effect.
    pub(crate) fn allows(self) -> bool {
        matches!(self, Status::NotNeeded | Status::Trusted | Status::Given)
    }

    /// Its name in `runbook config --json`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Status::NotNeeded => "not_needed",
            Status::Trusted => "trusted",
            Status::Given => "given",
            Status::Changed => "changed",
            Status::Untrusted => "untrusted",
        }
    }

    /// How `runbook config` says it.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Status::NotNeeded => "nothing in it needs trust",
            Status::Trusted => "trusted",
            Status::Given => "trusted for this run (--trust or RUNBOOK_TRUST)",
            Status::Changed => "NOT TRUSTED: changed since it was trusted",
            Status::Untrusted => "NOT TRUSTED",
        }
    }
}

/// What the user said for this run: `--trust` (every file of the repository) and the paths of
/// `RUNBOOK_TRUST`.
#[derive(Debug, Default)]
pub(crate) struct Given {
    pub all: bool,
    pub paths: Vec<PathBuf>,
}

impl Given {
    /// `--trust` as `flag` says, and `RUNBOOK_TRUST` as the environment has it.
    pub(crate) fn from_env(flag: bool) -> Self {
        let paths = std::env::var_os(VAR)
            .map(|v| {
                std::env::split_paths(&v)
                    .filter(|p| !p.as_os_str().is_empty())
                    .collect()
            })
            .unwrap_or_default();
        Self { all: flag, paths }
    }

    /// Whether the user trusts `file` for this run.
    pub(crate) fn covers(&self, file: &Path) -> bool {
        if self.all {
            return true;
        }
        let Ok(key) = store::key(file) else {
            return false;
        };
        self.paths.iter().any(|p| {
            if p.is_dir() {
                p.canonicalize().ok().as_deref() == Path::new(&key).parent()
            } else {
                store::key(p).is_ok_and(|k| k == key)
            }
        })
    }
}

/// Each repository file that was read, with how it stands. The record is read only when some
/// file needs trust.
pub(crate) fn examine(
    config: &Config,
    env: &AgentEnv,
    given: &Given,
) -> Result<Vec<(RepoFile, Status)>, exit::Error> {
    let files = repository_files(config, env);
    let mut store: Option<Store> = None;
    let mut out = Vec::new();
    for file in files {
        let status = if file.needs.is_empty() {
            Status::NotNeeded
        } else if given.covers(&file.path) {
            Status::Given
        } else {
            if store.is_none() {
                store = Some(Store::load()?);
            }
            let store = store.as_ref().expect("loaded above");
            let key = store::key(&file.path).unwrap_or_default();
            match store.recorded(&key, file.digest) {
                Recorded::Matches => Status::Trusted,
                Recorded::Changed => Status::Changed,
                Recorded::Absent => Status::Untrusted,
            }
        };
        out.push((file, status));
    }
    Ok(out)
}

/// Stops a run before anything starts unless every repository file that needs trust has it.
/// With `ask` (a person at a terminal), shows what the files would run and asks once; yes
/// records the trust. Otherwise the error is one line naming the files, their settings and how
/// to trust them. With `no_checks` (the run starts none of the checks), a file whose only
/// settings that need trust are checks stops nothing; one that sets more is asked about whole.
pub(crate) fn ensure(
    config: &Config,
    env: &AgentEnv,
    given: &Given,
    ask: bool,
    no_checks: bool,
) -> anyhow::Result<()> {
    let untrusted: Vec<(RepoFile, Status)> = examine(config, env, given)?
        .into_iter()
        .filter(|(_, status)| !status.allows())
        .filter(|(file, _)| !(no_checks && file.needs.iter().all(needs::Need::is_check)))
        .collect();
    if untrusted.is_empty() {
        return Ok(());
    }
    if ask && prompt::ask(&untrusted)? {
        record(untrusted.iter().map(|(f, _)| f))?;
        return Ok(());
    }
    Err(exit::Error::Usage(refusal(&untrusted)).into())
}

/// Whether the file at `path` is trusted at the content `digest`: for this run
/// (`RUNBOOK_TRUST`), or recorded (`runbook trust`).
pub(crate) fn file_trusted(
    path: &Path,
    digest: crate::digest::Digest,
) -> Result<bool, exit::Error> {
    if Given::from_env(false).covers(path) {
        return Ok(true);
    }
    let store = Store::load()?;
    let key = store::key(path).unwrap_or_default();
    Ok(matches!(store.recorded(&key, digest), Recorded::Matches))
}

/// Records `files` as trusted at the content they were read with.
pub(crate) fn record<'a>(files: impl IntoIterator<Item = &'a RepoFile>) -> anyhow::Result<Store> {
    let now = humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string();
    let mut entries = Vec::new();
    for file in files {
        let key = store::key(&file.path).map_err(|e| {
            exit::Error::Usage(format!(
                "{}: cannot trust it: {e}",
                escape(&file.path.display().to_string())
            ))
        })?;
        entries.push((key, file.digest));
    }
    Store::update(|records| {
        for (key, digest) in entries {
            records.insert(
                key,
                store::Record {
                    sha256: digest.hex(),
                    trusted_at: now.clone(),
                },
            );
        }
    })
}

/// The one line that says which files are not trusted, what in them needs it, and how to trust
/// them.
fn refusal(untrusted: &[(RepoFile, Status)]) -> String {
    let files: Vec<String> = untrusted
        .iter()
        .map(|(file, status)| {
            let keys: Vec<&str> = file.needs.iter().map(|n| n.key.as_str()).collect();
            let changed = if *status == Status::Changed {
                ", changed since it was trusted,"
            } else {
                ""
            };
            format!(
                "{}{changed} sets {}",
                escape(&file.path.display().to_string()),
                keys.join(", ")
            )
        })
        .collect();
    let paths: Vec<String> = untrusted
        .iter()
        .map(|(f, _)| escape(&shell_words::quote(&f.path.display().to_string())))
        .collect();
    let it = if untrusted.len() == 1 { "it" } else { "them" };
    format!(
        "not trusted: {}; nothing was started. Read {it}, then run `runbook trust {}` (or, for one run, pass --trust or set {VAR}={})",
        files.join("; "),
        paths.join(" "),
        paths.join(":"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::digest::Digest;

    fn file(path: &str, keys: &[&str]) -> RepoFile {
        RepoFile {
            path: PathBuf::from(path),
            digest: Digest::of(path.as_bytes()),
            needs: keys
                .iter()
                .map(|k| needs::Need {
                    key: (*k).to_owned(),
                    value: None,
                })
                .collect(),
        }
    }

    #[test]
    fn the_refusal_is_one_line_naming_each_file_its_settings_and_the_ways_to_trust() {
        let line = refusal(&[
            (
                file("/r/runbook.toml", &["checks.\"test\"", "observers"]),
                Status::Untrusted,
            ),
            (
                file("/r/my dir/.env\u{1b}[2J", &["NODE_OPTIONS"]),
                Status::Changed,
            ),
        ]);
        assert!(!line.contains('\n') && !line.contains('\u{1b}'), "{line}");
        assert!(
            line.starts_with("not trusted: /r/runbook.toml sets checks.\"test\", observers; /r/my dir/.env\\e[2J, changed since it was trusted, sets NODE_OPTIONS; nothing was started. Read them"),
            "{line}"
        );
        assert!(
            line.contains("`runbook trust /r/runbook.toml '/r/my dir/.env\\e[2J'`"),
            "{line}"
        );
        assert!(
            line.contains("--trust or set RUNBOOK_TRUST=/r/runbook.toml:"),
            "{line}"
        );
    }

    #[test]
    fn only_trusted_given_or_needless_files_may_take_effect() {
        assert!(Status::NotNeeded.allows() && Status::Trusted.allows() && Status::Given.allows());
        assert!(!Status::Changed.allows() && !Status::Untrusted.allows());
    }
}
