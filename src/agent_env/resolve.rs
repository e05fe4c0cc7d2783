//! The variables runbook sets for the agent, layered lowest to highest: `[env]` in the
//! configuration, `.env`, `.env.local` (both in the repository root), the shell runbook was
//! started from (a variable it already has keeps its value), then each `--env-file` in order.
//! `${VAR}` in a value is the shell's `VAR`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::dotenv;
use crate::config::{Config, ConfigError, EnvDefault, line_column};
use crate::digest::Digest;
use crate::exit;
use crate::files::{self, Links};
use crate::provenance::{EnvLayer, EnvVarRecord};

/// A variable set for the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AgentVar {
    pub value: String,
    pub record: EnvVarRecord,
}

/// A `.env` file of the repository that was read, and the names it assigns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct DotenvFile {
    pub path: PathBuf,
    /// The SHA-256 of the exact bytes read, for trust in a repository's file.
    pub digest: Digest,
    /// Every name the file assigns, in order, each once.
    pub names: Vec<String>,
}

/// The agent's variables by name.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct AgentEnv {
    vars: BTreeMap<String, AgentVar>,
    /// The repository's `.env` files that were read (not `--env-file`s, which are the user's).
    dotenv: Vec<DotenvFile>,
}

impl AgentEnv {
    /// Name and value of each variable, to set on the agent's process.
    pub(crate) fn pairs(&self) -> Vec<(String, String)> {
        self.vars
            .iter()
            .map(|(name, var)| (name.clone(), var.value.clone()))
            .collect()
    }

    /// Every value, for the redactor: none may appear in anything runbook writes.
    pub(crate) fn values(&self) -> impl Iterator<Item = &str> {
        self.vars.values().map(|v| v.value.as_str())
    }

    /// The repository's `.env` and `.env.local`, those that exist.
    pub(crate) fn dotenv_files(&self) -> &[DotenvFile] {
        &self.dotenv
    }

    /// Where each variable came from, without its value.
    pub(crate) fn records(&self) -> Vec<EnvVarRecord> {
        self.vars.values().map(|v| v.record.clone()).collect()
    }

    fn set(
        &mut self,
        name: String,
        value: String,
        layer: EnvLayer,
        file: Option<&Path>,
        line: Option<u32>,
    ) {
        let record = EnvVarRecord {
            name: name.clone(),
            layer,
            file: file.map(|f| f.display().to_string()),
            line,
        };
        self.vars.insert(name, AgentVar { value, record });
    }
}

/// The `.env` files in the repository root, lowest first.
const DOTENV_FILES: [(EnvLayer, &str); 2] = [
    (EnvLayer::Dotenv, ".env"),
    (EnvLayer::DotenvLocal, ".env.local"),
];

/// The agent's environment for `config`, over the environment runbook was started with. An
/// error is a usage error: nothing should be started.
pub(crate) fn load(config: &Config, env_files: &[PathBuf]) -> Result<AgentEnv, exit::Error> {
    let shell = |name: &str| std::env::var(name).ok();
    Ok(resolve(
        config.env_defaults(),
        &config.root,
        env_files,
        &shell,
    )?)
}

/// Layers the agent's environment. `shell` reads the environment runbook was started from.
fn resolve<'a>(
    defaults: impl IntoIterator<Item = &'a EnvDefault>,
    root: &Path,
    env_files: &[PathBuf],
    shell: &dyn Fn(&str) -> Option<String>,
) -> Result<AgentEnv, ConfigError> {
    let mut env = AgentEnv::default();
    for d in defaults {
        let file = PathBuf::from(d.origin.file.clone().unwrap_or_default());
        let (line, column) = (d.origin.line.unwrap_or(1), d.origin.column.unwrap_or(1));
        let value = dotenv::expand(&d.value, shell).map_err(|e| {
            ConfigError::at_line(
                &file,
                line,
                column,
                format!("env.{}: {}", d.name, e.message),
            )
        })?;
        env.set(
            d.name.clone(),
            value,
            EnvLayer::Config,
            Some(&file),
            Some(line),
        );
    }
    for (layer, name) in DOTENV_FILES {
        read_into(&mut env, layer, &root.join(name), true, shell)?;
    }
    let names: Vec<String> = env.vars.keys().cloned().collect();
    for name in names {
        if let Some(value) = shell(&name) {
            env.set(name, value, EnvLayer::Shell, None, None);
        }
    }
    for file in env_files {
        read_into(&mut env, EnvLayer::EnvFile, file, false, shell)?;
    }
    Ok(env)
}

/// Adds the assignments of the file at `path`; a missing file is an error unless `optional`.
fn read_into(
    env: &mut AgentEnv,
    layer: EnvLayer,
    path: &Path,
    optional: bool,
    shell: &dyn Fn(&str) -> Option<String>,
) -> Result<(), ConfigError> {
    let (text, digest) = match files::read(path, files::CONFIG_LIMIT, Links::Follow) {
        Ok(bytes) => {
            let digest = Digest::of(&bytes);
            let text = String::from_utf8(bytes)
                .map_err(|_| ConfigError::file(path, "expected UTF-8 text"))?;
            (text, digest)
        }
        Err(e) if optional && e.is_not_found() => return Ok(()),
        Err(e) => return Err(ConfigError::file(path, format!("cannot read it: {e}"))),
    };
    let assignments = dotenv::parse(&text, shell).map_err(|e| {
        let (line, column) = line_column(&text, e.offset);
        ConfigError::at_line(path, line, column, e.message)
    })?;
    if layer != EnvLayer::EnvFile {
        let mut names: Vec<String> = Vec::new();
        for a in &assignments {
            if !names.contains(&a.name) {
                names.push(a.name.clone());
            }
        }
        env.dotenv.push(DotenvFile {
            path: path.to_path_buf(),
            digest,
            names,
        });
    }
    for a in assignments {
        env.set(a.name, a.value, layer, Some(path), Some(a.line));
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, reason = "tests write their own fixtures")]
mod tests {
    use std::fs;

    use super::*;
    use crate::provenance::{Layer, Origin};

    fn default(name: &str, value: &str) -> EnvDefault {
        EnvDefault {
            name: name.to_owned(),
            value: value.to_owned(),
            origin: Origin::in_file(Layer::Repo, "/r/runbook.toml".into(), 4, 7),
        }
    }

    fn layer_of(env: &AgentEnv, name: &str) -> (EnvLayer, String) {
        let var = &env.vars[name];
        (var.record.layer, var.value.clone())
    }

    #[test]
    fn each_layer_overrides_the_ones_below() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        fs::write(
            root.join(".env"),
            "A=dotenv\nB=dotenv\nC=dotenv\nS=dotenv\nF=dotenv\n",
        )
        .unwrap();
        fs::write(root.join(".env.local"), "B=local\nC=local\n").unwrap();
        let extra1 = root.join("one.env");
        let extra2 = root.join("two.env");
        fs::write(&extra1, "F=one\nG=one\n").unwrap();
        fs::write(&extra2, "G=two\nR=${FROM_SHELL}\n").unwrap();
        let shell =
            |name: &str| matches!(name, "S" | "FROM_SHELL").then(|| format!("shell-{name}"));
        let defaults = [
            default("A", "config"),
            default("D", "config ${FROM_SHELL}"),
            default("S", "config"),
        ];

        let env = resolve(&defaults, root, &[extra1, extra2.clone()], &shell).unwrap();
        assert_eq!(layer_of(&env, "A"), (EnvLayer::Dotenv, "dotenv".into()));
        assert_eq!(layer_of(&env, "B"), (EnvLayer::DotenvLocal, "local".into()));
        assert_eq!(
            layer_of(&env, "D"),
            (EnvLayer::Config, "config shell-FROM_SHELL".into())
        );
        assert_eq!(
            layer_of(&env, "S"),
            (EnvLayer::Shell, "shell-S".into()),
            "the shell keeps its own"
        );
        assert_eq!(layer_of(&env, "F"), (EnvLayer::EnvFile, "one".into()));
        assert_eq!(
            layer_of(&env, "G"),
            (EnvLayer::EnvFile, "two".into()),
            "the last --env-file wins"
        );
        assert_eq!(
            layer_of(&env, "R"),
            (EnvLayer::EnvFile, "shell-FROM_SHELL".into())
        );
        let g = &env.vars["G"].record;
        assert_eq!(
            (g.file.as_deref(), g.line),
            (Some(extra2.to_str().unwrap()), Some(1))
        );
        assert!(
            !env.vars.contains_key("FROM_SHELL"),
            "only variables some layer names are set"
        );
    }

    #[test]
    fn errors_name_the_file_and_line() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let none = |_: &str| None;
        let err = resolve(&[default("X", "${MISSING}")], root, &[], &none).unwrap_err();
        assert_eq!(
            err.to_string(),
            "/r/runbook.toml:4:7: env.X: ${MISSING} is not set in the environment runbook was started from"
        );
        fs::write(root.join(".env.local"), "OK=1\n\nnot an assignment\n").unwrap();
        let err = resolve([], root, &[], &none).unwrap_err();
        let local = root.join(".env.local");
        assert_eq!(
            err.to_string(),
            format!("{}:3:5: expected `=` after `not`", local.display())
        );
        fs::remove_file(&local).unwrap();
        let missing = root.join("missing.env");
        let err = resolve([], root, std::slice::from_ref(&missing), &none).unwrap_err();
        assert!(
            err.to_string()
                .starts_with(&format!("{}: cannot read it", missing.display())),
            "{err}"
        );
    }
}
