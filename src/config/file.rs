//! Reading one configuration file: every key in it with the line and column it is on, checked
//! against the key table, and errors that say where and what was expected.

use std::path::{Path, PathBuf};

use serde::Deserialize as _;
use serde::de::IntoDeserializer as _;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::{ConfigError, line_column};
use super::keys::{self, Slot, agent_name, agent_names, agents};
use super::suggest;
use super::value::{Kind, Value};
use crate::digest::Digest;
use crate::files::{self, Links};
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
    /// The SHA-256 of the exact bytes read, for trust in a repository's file.
    pub digest: Digest,
}

/// Reads the file at `path`; `None` when there is no such file.
pub(crate) fn read(layer: Layer, path: &Path) -> Result<Option<FileLayer>, ConfigError> {
    let bytes = match files::read_optional(path, files::CONFIG_LIMIT, Links::Follow) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(None),
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
    let mut out = FileLayer {
        digest: Digest::of(text.as_bytes()),
        ..FileLayer::default()
    };
    for (key, value) in doc.get_ref() {
        match key.get_ref().as_ref() {
            "agents" => reader.agents(key, value, &mut out.entries)?,
            "sandbox" if matches!(value.get_ref(), DeValue::Table(_)) => {
                reader.sandbox(key, value, &mut out.entries)?;
            }
            "env" => {
                for (name, value) in reader.table(key, value, "a table of environment variables")? {
                    out.env.push(reader.env_default(name, value)?);
                }
            }
            "stuck" if matches!(value.get_ref(), DeValue::Table(_)) => {
                reader.stuck_section(key, value, &mut out.entries)?;
            }
            _ => reader.top_level(key, value, &mut out.entries)?,
        }
    }
    reader.no_key_twice(&out.entries)?;
    Ok(out)
}

/// The keys of the `[stuck]` section, each the same as a top-level key: `mode` is `stuck`,
/// `repeat` is `stuck_repeat`, and so on.
const STUCK_SECTION: [(&str, &str); 6] = [
    ("mode", "stuck"),
    ("repeat", "stuck_repeat"),
    ("same_failure", "stuck_same_failure"),
    ("same_error", "stuck_same_error"),
    ("ping_pong", "stuck_ping_pong"),
    ("monologue", "stuck_monologue"),
];

/// A key in the document, with where it is.
pub(super) type SpannedKey<'i> = Spanned<std::borrow::Cow<'i, str>>;

pub(super) struct Reader<'a> {
    pub(super) layer: Layer,
    pub(super) path: &'a Path,
    pub(super) dir: PathBuf,
    pub(super) text: &'a str,
}

impl Reader<'_> {
    pub(super) fn error(&self, offset: usize, message: String) -> ConfigError {
        ConfigError::at(self.path, self.text, offset, message)
    }

    pub(super) fn origin(&self, offset: usize) -> Origin {
        let (line, column) = line_column(self.text, offset);
        Origin::in_file(self.layer, self.path.display().to_string(), line, column)
    }

    /// The entries of `value`, which must be a table.
    pub(super) fn table<'v, 'i>(
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

    /// A top-level key, or each entry of a table key.
    pub(super) fn top_level(
        &self,
        key: &SpannedKey<'_>,
        value: &Spanned<DeValue<'_>>,
        entries: &mut Vec<Entry>,
    ) -> Result<(), ConfigError> {
        let Some(declared) = keys::find(key.get_ref()) else {
            let message = unknown_top_level(key.get_ref());
            return Err(self.error(key.span().start, message));
        };
        if !declared.kind.is_table() {
            entries.push(self.entry(Slot::of(declared), key, value)?);
            return Ok(());
        }
        let expected = match declared.kind {
            Kind::Check => "a table of checks by name, such as [checks] test = \"cargo test\"",
            _ => "a table of prices by model, such as [prices.\"gpt-5\"]",
        };
        let mut table: Vec<_> = self.table(key, value, expected)?.iter().collect();
        // In the order the file gives them: checks run in that order.
        table.sort_by_key(|(entry, _)| entry.span().start);
        for (entry, value) in table {
            let name = entry.get_ref().to_string();
            if declared.kind == Kind::Check
                && let Err(message) = crate::config::check::valid_name(&name)
            {
                return Err(self.error(entry.span().start, message));
            }
            let slot = Slot::entry(declared, name);
            entries.push(self.entry(slot, entry, value)?);
        }
        Ok(())
    }

    /// The `[stuck]` section: each of its keys is one of the top-level `stuck*` keys.
    fn stuck_section(
        &self,
        key: &SpannedKey<'_>,
        value: &Spanned<DeValue<'_>>,
        entries: &mut Vec<Entry>,
    ) -> Result<(), ConfigError> {
        let expected = "a table of loop detection settings, such as [stuck] repeat = 5";
        for (name, value) in self.table(key, value, expected)? {
            let given = name.get_ref();
            let flat = STUCK_SECTION
                .iter()
                .find(|(short, _)| *short == given.as_ref());
            let Some(declared) = flat.and_then(|(_, flat)| keys::find(flat)) else {
                let names = STUCK_SECTION.map(|(short, _)| short);
                let message = match suggest::did_you_mean(given, names) {
                    Some(meant) => format!("unknown key `{given}` in [stuck]; {meant}"),
                    None => format!(
                        "unknown key `{given}` in [stuck]; expected one of {}",
                        names.join(", ")
                    ),
                };
                return Err(self.error(name.span().start, message));
            };
            entries.push(self.entry(Slot::of(declared), name, value)?);
        }
        Ok(())
    }

    /// One value per key in a file: a `[stuck]` key and the top-level key it stands for may not
    /// both be set.
    fn no_key_twice(&self, entries: &[Entry]) -> Result<(), ConfigError> {
        let at = |e: &Entry| (e.origin.line.unwrap_or(0), e.origin.column.unwrap_or(0));
        for (i, one) in entries.iter().enumerate() {
            // Only a `[stuck]` key has a second spelling (a list may name an item twice).
            if !STUCK_SECTION.iter().any(|(_, f)| *f == one.slot.key.name) {
                continue;
            }
            let Some(other) = entries[..i].iter().find(|e| e.slot == one.slot) else {
                continue;
            };
            let (line, column) = at(one).max(at(other));
            let flat = one.slot.key.name;
            let short = STUCK_SECTION
                .iter()
                .find(|(_, f)| *f == flat)
                .map_or(flat, |(short, _)| short);
            return Err(self.error(
                offset_of(self.text, line, column),
                format!("`{flat}` is set twice, as `{flat}` and as `{short}` in [stuck]; keep one"),
            ));
        }
        Ok(())
    }

    /// The `[agents.NAME]` sections.
    pub(super) fn agents(
        &self,
        key: &SpannedKey<'_>,
        value: &Spanned<DeValue<'_>>,
        entries: &mut Vec<Entry>,
    ) -> Result<(), ConfigError> {
        for (name, table) in
            self.table(key, value, "a table per agent, such as [agents.opencode]")?
        {
            let Some(agent) = agents().find(|a| agent_name(*a) == name.get_ref().as_ref()) else {
                let given = name.get_ref();
                let message = match suggest::did_you_mean(given, agents().map(agent_name)) {
                    Some(meant) => format!("unknown agent `{given}`; {meant}"),
                    None => format!("unknown agent `{given}`; expected one of {}", agent_names()),
                };
                return Err(self.error(name.span().start, message));
            };
            for (name, value) in self.table(name, table, "a table of the agent's settings")? {
                let Some(declared) = keys::find_per_agent(name.get_ref()) else {
                    let given = name.get_ref();
                    let per_agent = keys::all().filter(|k| k.per_agent).map(|k| k.name);
                    let message = match suggest::did_you_mean(given, per_agent) {
                        Some(meant) => format!(
                            "unknown key `{given}` in [agents.{}]; {meant}",
                            agent_name(agent)
                        ),
                        None => format!(
                            "unknown key `{given}` in [agents.{}]; expected one of {}",
                            agent_name(agent),
                            per_agent_names()
                        ),
                    };
                    return Err(self.error(name.span().start, message));
                };
                entries.push(self.entry(Slot::agents(declared, Some(agent)), name, value)?);
            }
        }
        Ok(())
    }

    /// The `[sandbox]` section: `enabled`, and the lists `write`, `read_deny` and `ports`, each
    /// item an entry of its own (so that each shows where it was given).
    fn sandbox(
        &self,
        key: &SpannedKey<'_>,
        value: &Spanned<DeValue<'_>>,
        entries: &mut Vec<Entry>,
    ) -> Result<(), ConfigError> {
        const FIELDS: [&str; 4] = ["enabled", "write", "read_deny", "ports"];
        for (name, value) in self.table(key, value, "a table")? {
            let field = name.get_ref().as_ref();
            let declared = match field {
                "enabled" => {
                    entries.push(self.entry(Slot::of(&keys::SANDBOX.0.key), name, value)?);
                    continue;
                }
                "write" => &keys::SANDBOX_WRITE.key,
                "read_deny" => &keys::SANDBOX_READ_DENY.key,
                "ports" => &keys::SANDBOX_PORTS.key,
                _ => {
                    let meant = suggest::did_you_mean(field, FIELDS)
                        .unwrap_or_else(|| format!("expected one of {}", FIELDS.join(", ")));
                    let message = format!("unknown key `{field}` in [sandbox]; {meant}");
                    return Err(self.error(name.span().start, message));
                }
            };
            let DeValue::Array(items) = value.get_ref() else {
                let message = format!(
                    "`{}` must be {}",
                    declared.name,
                    declared.kind.expected_list()
                );
                return Err(self.error(value.span().start, message));
            };
            for item in items {
                let read = to_toml(item).and_then(|v| declared.kind.read_toml(&v, &self.dir));
                let value = read.map_err(|m| {
                    self.error(item.span().start, format!("`{}`: {m}", declared.name))
                })?;
                entries.push(Entry {
                    slot: Slot::entry(declared, value.entry_name()),
                    origin: self.origin(item.span().start),
                    value,
                });
            }
        }
        Ok(())
    }

    pub(super) fn entry(
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

/// The byte offset of 1-based `line` and `column` (in characters) in `text`.
fn offset_of(text: &str, line: u32, column: u32) -> usize {
    let skip = usize::try_from(line.saturating_sub(1)).unwrap_or(usize::MAX);
    let start: usize = text.split_inclusive('\n').take(skip).map(str::len).sum();
    let rest = &text[start..];
    let column = usize::try_from(column.saturating_sub(1)).unwrap_or(usize::MAX);
    start
        + rest
            .char_indices()
            .nth(column)
            .map_or(rest.len(), |(i, _)| i)
}

pub(super) fn to_toml(value: &Spanned<DeValue<'_>>) -> Result<toml::Value, String> {
    toml::Value::deserialize(value.clone().into_deserializer()).map_err(|e| e.message().to_owned())
}

/// An unknown top-level key: the one it is close to, else where the keys are listed (not
/// the whole list: it would bury the line).
fn unknown_top_level(given: &str) -> String {
    let per_agent = keys::find_per_agent(&given.to_lowercase().replace('-', "_"));
    if let Some(key) = per_agent {
        return format!(
            "unknown key `{given}`; `{}` is set per agent, under [agents.NAME]",
            key.name
        );
    }
    let names = keys::all()
        .filter(|k| !k.per_agent)
        .map(|k| k.name)
        .chain(["agents", "env", "sandbox"]);
    match suggest::did_you_mean(given, names) {
        Some(meant) => format!("unknown key `{given}`; {meant}"),
        None => format!("unknown key `{given}`; `runbook config --keys` lists the keys"),
    }
}

fn per_agent_names() -> String {
    keys::all()
        .filter(|k| k.per_agent)
        .map(|k| k.name)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Whether `name` can be an environment variable's name: letters, digits and `_`, not starting
/// with a digit.
pub(crate) fn is_var_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}
