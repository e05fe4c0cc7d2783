//! Reading one configuration file: every key in it with the line and column it is on, checked
//! against the key table, and errors that say where and what was expected.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::Deserialize as _;
use serde::de::IntoDeserializer as _;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{ConfigError, line_column};
use super::keys::{self, AGENTS, KEYS, Slot};
use super::value::{Kind, Value};
use crate::agent_env::is_var_name;
use crate::provenance::{Layer, Origin};

/// A value given in a configuration layer.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Entry {
    pub slot: Slot,
    pub value: Value,
    pub origin: Origin,
}

/// An `[env]` entry: a default for the agent's environment. The value may hold `${VAR}`
/// references; they are resolved with the rest of the agent's environment.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct EnvDefault {
    pub name: String,
    pub value: String,
    pub origin: Origin,
}

/// What one configuration file says.
#[derive(Debug, Default)]
pub(crate) struct FileLayer {
    pub entries: Vec<Entry>,
    pub env: Vec<EnvDefault>,
}

/// Reads the file at `path`; `None` when there is no such file.
pub(crate) fn read(layer: Layer, path: &Path) -> Result<Option<FileLayer>, ConfigError> {
    let bytes = match fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(ConfigError::file(path, format!("cannot read it: {e}"))),
    };
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => {
            let valid =
                String::from_utf8_lossy(&e.as_bytes()[..e.utf8_error().valid_up_to()]).into_owned();
            return Err(ConfigError::at(
                path,
                &valid,
                valid.len(),
                "expected UTF-8 text",
            ));
        }
    };
    parse(layer, path, &text).map(Some)
}

/// Reads the TOML `text` of the file at `path`.
pub(crate) fn parse(layer: Layer, path: &Path, text: &str) -> Result<FileLayer, ConfigError> {
    let doc = DeTable::parse(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        ConfigError::at(path, text, offset, e.message())
    })?;
    let reader = Reader {
        layer,
        path,
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        text,
    };
    let mut out = FileLayer::default();
    for (key, value) in doc.get_ref() {
        match key.get_ref().as_ref() {
            "agents" => {
                for (agent, table) in
                    reader.table(key, value, "a table per agent, such as [agents.opencode]")?
                {
                    let Some(agent_name) = AGENTS.iter().find(|a| **a == agent.get_ref().as_ref())
                    else {
                        return Err(reader.error(
                            agent.span().start,
                            format!(
                                "unknown agent `{}`; expected one of {}",
                                agent.get_ref(),
                                AGENTS.join(", ")
                            ),
                        ));
                    };
                    for (name, value) in
                        reader.table(agent, table, "a table of the agent's settings")?
                    {
                        let Some(key) = keys::find_per_agent(name.get_ref()) else {
                            let known = per_agent_names();
                            return Err(reader.error(name.span().start, format!("unknown key `{}` in [agents.{agent_name}]; expected one of {known}", name.get_ref())));
                        };
                        let slot = Slot {
                            key,
                            agent: Some(agent_name),
                            entry: None,
                        };
                        out.entries.push(reader.entry(slot, name, value)?);
                    }
                }
            }
            "env" => {
                for (name, value) in reader.table(key, value, "a table of environment variables")? {
                    out.env.push(reader.env_default(name, value)?);
                }
            }
            name => match keys::find(name) {
                Some(declared) if declared.kind == Kind::Price => {
                    for (entry, value) in reader.table(
                        key,
                        value,
                        "a table of prices by model, such as [prices.\"gpt-5\"]",
                    )? {
                        let slot = Slot {
                            key: declared,
                            agent: None,
                            entry: Some(entry.get_ref().to_string()),
                        };
                        out.entries.push(reader.entry(slot, entry, value)?);
                    }
                }
                Some(declared) => {
                    let slot = Slot {
                        key: declared,
                        agent: None,
                        entry: None,
                    };
                    out.entries.push(reader.entry(slot, key, value)?);
                }
                None => {
                    return Err(reader.error(
                        key.span().start,
                        format!(
                            "unknown key `{name}`; expected one of {}",
                            top_level_names()
                        ),
                    ));
                }
            },
        }
    }
    Ok(out)
}

/// A key in the document, with where it is.
type SpannedKey<'i> = Spanned<std::borrow::Cow<'i, str>>;

struct Reader<'a> {
    layer: Layer,
    path: &'a Path,
    dir: PathBuf,
    text: &'a str,
}

impl Reader<'_> {
    fn error(&self, offset: usize, message: String) -> ConfigError {
        ConfigError::at(self.path, self.text, offset, message)
    }

    fn origin(&self, offset: usize) -> Origin {
        let (line, column) = line_column(self.text, offset);
        Origin::in_file(self.layer, self.path.display().to_string(), line, column)
    }

    /// The entries of `value`, which must be a table.
    fn table<'v, 'i>(
        &self,
        key: &SpannedKey<'i>,
        value: &'v Spanned<DeValue<'i>>,
        expected: &str,
    ) -> Result<&'v DeTable<'i>, ConfigError> {
        match value.get_ref() {
            DeValue::Table(table) => Ok(table),
            other => Err(self.error(
                value.span().start,
                format!(
                    "`{}` must be {expected}, found a {}",
                    key.get_ref(),
                    other.type_str()
                ),
            )),
        }
    }

    fn entry(
        &self,
        slot: Slot,
        key: &SpannedKey<'_>,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<Entry, ConfigError> {
        let read = to_toml(value).and_then(|v| slot.key.kind.read_toml(&v, &self.dir));
        match read {
            Ok(value) => Ok(Entry {
                value,
                origin: self.origin(key.span().start),
                slot,
            }),
            Err(message) => {
                Err(self.error(value.span().start, format!("`{}`: {message}", slot.name())))
            }
        }
    }

    fn env_default(
        &self,
        name: &SpannedKey<'_>,
        value: &Spanned<DeValue<'_>>,
    ) -> Result<EnvDefault, ConfigError> {
        if !is_var_name(name.get_ref()) {
            return Err(self.error(
                name.span().start,
                format!("`{}` is not a variable name; expected letters, digits and _, not starting with a digit", name.get_ref()),
            ));
        }
        let text = match to_toml(value) {
            Ok(toml::Value::String(s)) => s,
            Ok(v @ (toml::Value::Integer(_) | toml::Value::Float(_) | toml::Value::Boolean(_))) => {
                v.to_string()
            }
            Ok(other) => {
                return Err(self.error(
                    value.span().start,
                    format!(
                        "`env.{}` must be a string, found a {}",
                        name.get_ref(),
                        other.type_str()
                    ),
                ));
            }
            Err(message) => return Err(self.error(value.span().start, message)),
        };
        Ok(EnvDefault {
            name: name.get_ref().to_string(),
            value: text,
            origin: self.origin(value.span().start),
        })
    }
}

fn to_toml(value: &Spanned<DeValue<'_>>) -> Result<toml::Value, String> {
    toml::Value::deserialize(value.clone().into_deserializer()).map_err(|e| e.message().to_owned())
}

/// The names a file may use at the top level, for "unknown key" errors.
fn top_level_names() -> String {
    let mut names: Vec<String> = KEYS
        .iter()
        .filter(|k| !k.per_agent && k.kind != Kind::Price)
        .map(|k| k.name.to_owned())
        .collect();
    names.push("[agents.NAME]".to_owned());
    names.extend(
        KEYS.iter()
            .filter(|k| k.kind == Kind::Price)
            .map(|k| format!("[{}.\"MODEL\"]", k.name)),
    );
    names.push("[env]".to_owned());
    names.join(", ")
}

fn per_agent_names() -> String {
    KEYS.iter()
        .filter(|k| k.per_agent)
        .map(|k| k.name)
        .collect::<Vec<_>>()
        .join(", ")
}
