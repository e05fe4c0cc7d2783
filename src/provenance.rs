//! Where a run's settings and the agent's environment variables came from: the records that
//! `run.started`, the receipt and `runbook config --json` carry. Never values of the environment.

use std::fmt;

use serde::{Deserialize, Serialize};

/// The configuration layers, lowest to highest: a higher layer's value wins.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Built into runbook.
    Default,
    /// `$XDG_CONFIG_HOME/runbook/config.toml`.
    Global,
    /// The repository's `runbook.toml`.
    Repo,
    /// `runbook.local.toml` beside it.
    Local,
    /// A `RUNBOOK_*` environment variable.
    Env,
    /// A command-line flag.
    Flag,
}

impl Layer {
    /// How files and messages name the layer: `default`, `global`, `repo`, `local`, `env`, `flag`.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Default => "default",
            Layer::Global => "global",
            Layer::Repo => "repo",
            Layer::Local => "local",
            Layer::Env => "env",
            Layer::Flag => "flag",
        }
    }
}

/// Exactly where a setting's value was given.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Origin {
    /// The layer that gave it.
    pub layer: Layer,
    /// The configuration file (global, repo and local layers).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    /// 1-based line of the key in `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    /// 1-based column (in characters) of the key in `file`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    /// The environment variable (env layer) or the flag (flag layer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

impl Origin {
    /// Runbook's own default.
    pub fn default_value() -> Self {
        Self::named(Layer::Default, None)
    }

    /// A value from the environment or the command line.
    pub fn named(layer: Layer, name: Option<String>) -> Self {
        Self {
            layer,
            file: None,
            line: None,
            column: None,
            name,
        }
    }

    /// A value from a configuration file, at a 1-based line and column.
    pub fn in_file(layer: Layer, file: String, line: u32, column: u32) -> Self {
        Self {
            layer,
            file: Some(file),
            line: Some(line),
            column: Some(column),
            name: None,
        }
    }
}

/// `repo /work/app/runbook.toml:3:1`, `env RUNBOOK_MODEL`, `flag --model`, `default`.
impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.layer.as_str())?;
        if let Some(file) = &self.file {
            write!(f, " {file}")?;
            if let (Some(line), Some(column)) = (self.line, self.column) {
                write!(f, ":{line}:{column}")?;
            }
        }
        if let Some(name) = &self.name {
            write!(f, " {name}")?;
        }
        Ok(())
    }
}

/// A setting that did not come from runbook's defaults, and its value as TOML would write it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SettingRecord {
    /// The key as a configuration file names it: `model`, `agents.claude.bin`, `prices."gpt-5"`.
    pub key: String,
    /// The value, as TOML would write it (in JSON).
    pub value: serde_json::Value,
    /// Where it was given.
    pub from: Origin,
}

/// The layers of the agent's environment, lowest to highest.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum EnvLayer {
    /// `[env]` in a configuration file.
    Config,
    /// `.env` in the repository root.
    Dotenv,
    /// `.env.local` in the repository root.
    DotenvLocal,
    /// The shell runbook was started from already had the variable.
    Shell,
    /// `--env-file FILE`.
    EnvFile,
}

impl EnvLayer {
    /// How messages name the layer: `config`, `dotenv`, `dotenv_local`, `shell`, `env_file`.
    pub fn as_str(self) -> &'static str {
        match self {
            EnvLayer::Config => "config",
            EnvLayer::Dotenv => "dotenv",
            EnvLayer::DotenvLocal => "dotenv_local",
            EnvLayer::Shell => "shell",
            EnvLayer::EnvFile => "env_file",
        }
    }
}

/// A variable runbook set for the agent: its name and where its value came from, never the value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EnvVarRecord {
    /// The variable's name.
    pub name: String,
    /// The layer that set it.
    pub layer: EnvLayer,
    /// The file that set it (absent for the shell).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub file: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The line of the file that set it.
    pub line: Option<u32>,
}
