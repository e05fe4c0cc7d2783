//! The kinds of value a configuration key takes, and how each is read from a TOML file, an
//! environment variable or a flag, and shown again.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::ValueEnum;

use super::duration;
use crate::agent_kind::{AgentKind, Permissions};
use crate::prices::Price;
use crate::sandbox::By;
use crate::stuck::Mode as StuckMode;
use crate::term::ColorChoice;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// One of the agents runbook drives.
    Agent,
    /// Free text, such as a model id.
    Text,
    /// The URL of a place in object storage: `s3://bucket/prefix`, `gs://…`, `az://…`, `file:///…`.
    Url,
    /// A directory; relative in a file means relative to the file.
    Dir,
    /// A program: a path (relative in a file means relative to the file), or a name on `PATH`.
    Program,
    /// `90s`, `3m`, `1h30m`, or whole seconds.
    Duration,
    /// An inactivity timeout: a duration of at most a day, or `off`.
    Watchdog,
    /// US dollars, more than zero.
    Usd,
    Bool,
    /// `auto`, `always` or `never`.
    Color,
    /// What the agent may do without asking.
    Permissions,
    /// What to do about an agent going round in circles: `off`, `warn` or `stop`.
    Stuck,
    /// A list of command-line arguments (files only).
    Args,
    /// A model's prices (files only).
    Price,
    /// A whole number from 0 to 20.
    Count,
    /// A file; relative in a file means relative to the file.
    File,
    /// Programs that get every event (`[[observers]]`, files only): each a command, or a table
    /// with `command` and optionally `raw`.
    Observers,
    /// A project check: its command, or a table with its command and optional `timeout` and
    /// `cwd`, or `false` to turn off a check a lower layer set (files only).
    Check,
    /// One path of a sandbox list (`[sandbox] write = [...]`): each is an entry of its own.
    SandboxPath,
    /// One TCP port of the sandbox (`[sandbox] ports = [...]`, `--allow-port`).
    Port,
    /// Whether the agent is sandboxed and by what: `true` (`auto`), `false`, `auto`,
    /// `landlock` or `bwrap`.
    Sandbox,
}

/// A check as a configuration file sets it; its name is the entry's.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct CheckSpec {
    pub command: String,
    pub timeout: Option<Duration>,
    /// Relative in a file means relative to the file.
    pub cwd: Option<PathBuf>,
}

/// An observer as a configuration file sets it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ObserverSpec {
    /// Run with `sh -c`.
    pub command: String,
    /// Each line also holds the agent's native line the event came from.
    pub raw: bool,
}

/// The most a count may be.
const MAX_COUNT: u32 = 20;

/// A key's value, of its key's kind.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Value {
    Agent(AgentKind),
    Text(String),
    Path(PathBuf),
    Duration(Duration),
    Usd(f64),
    Bool(bool),
    Color(ColorChoice),
    Permissions(Permissions),
    Stuck(StuckMode),
    Args(Vec<String>),
    Price(Price),
    Count(u32),
    Port(u16),
    /// `None`: no sandbox.
    Sandbox(Option<By>),
    Observers(Vec<ObserverSpec>),
    /// `None`: turned off.
    Check(Option<CheckSpec>),
}

impl Kind {
    /// What a value of this kind looks like, for error messages.
    pub(crate) fn expected(self) -> String {
        match self {
            Kind::Agent => format!("one of {}", names::<AgentKind>()),
            Kind::Text => "a string".to_owned(),
            Kind::Url => "a URL such as s3://bucket/prefix".to_owned(),
            Kind::Dir => "a directory path".to_owned(),
            Kind::Program => "a program's path or name".to_owned(),
            Kind::Duration => {
                "a duration above zero and at most a year, such as \"90s\", \"3m\" or \"1h30m\""
                    .to_owned()
            }
            Kind::Watchdog => {
                "a duration above zero and at most a day, such as \"90s\" or \"3m\", or \"off\""
                    .to_owned()
            }
            Kind::Usd => "a positive amount of US dollars such as 2.5".to_owned(),
            Kind::Bool => "true or false".to_owned(),
            Kind::Color => format!("one of {}", names::<ColorChoice>()),
            Kind::Permissions => format!("one of {}", names::<Permissions>()),
            Kind::Stuck => format!("one of {}", names::<StuckMode>()),
            Kind::Args => "an array of strings".to_owned(),
            Kind::Price => {
                "a table of USD per million tokens: input, cached_input, output and optionally cache_write"
                    .to_owned()
            }
            Kind::Count => format!("a whole number from 0 to {MAX_COUNT}"),
            Kind::File => "a file path".to_owned(),
            Kind::Observers => "an array of tables with `command` and optionally `raw`, such as [[observers]] command = \"jq -c . >> events.log\"".to_owned(),
            Kind::Check => "a command, a table with `command` and optionally `timeout` and `cwd`, or false to turn the check off".to_owned(),
            Kind::SandboxPath => "an array of paths".to_owned(),
            Kind::Port => "a TCP port from 1 to 65535".to_owned(),
            Kind::Sandbox => "true, false, \"auto\", \"landlock\" or \"bwrap\"".to_owned(),
        }
    }

    /// Whether values of this kind are the entries of a table, each with its own name
    /// (`[prices."MODEL"]`, `[checks] NAME = …`).
    pub(crate) fn is_table(self) -> bool {
        matches!(
            self,
            Kind::Price | Kind::Check | Kind::SandboxPath | Kind::Port
        )
    }

    /// What a list of this kind looks like, for error messages.
    pub(crate) fn expected_list(self) -> String {
        match self {
            Kind::Port => "an array of TCP ports, such as [8080]".to_owned(),
            _ => "an array of paths, such as [\"~/.cache/pip\"]".to_owned(),
        }
    }

    /// Whether a table key's entries come as a list (`[sandbox] write = [...]`), each named by
    /// its value, rather than by name (`[checks] test = ...`).
    pub(crate) fn is_list(self) -> bool {
        matches!(self, Kind::SandboxPath | Kind::Port)
    }

    /// The placeholder for the flag's value in `--help`.
    pub(crate) fn value_name(self) -> &'static str {
        match self {
            Kind::Agent => "AGENT",
            Kind::Text => "TEXT",
            Kind::Url => "URL",
            Kind::Dir => "DIR",
            Kind::Program => "PATH",
            Kind::Duration | Kind::Watchdog => "DURATION",
            Kind::Usd => "USD",
            Kind::Bool => "BOOL",
            Kind::Color => "WHEN",
            Kind::Permissions | Kind::Stuck => "MODE",
            Kind::Args => "ARGS",
            Kind::Price => "PRICE",
            Kind::Count => "N",
            Kind::File => "PATH",
            Kind::Observers => "OBSERVERS",
            Kind::Check => "CHECK",
            Kind::SandboxPath => "PATH",
            Kind::Port => "PORT",
            Kind::Sandbox => "BY",
        }
    }

    /// A value that is none of an enumeration's, with the one it is close to.
    fn not_one_of<T: ValueEnum>(self, text: &str) -> String {
        let mut message = format!("expected {}, found {text:?}", self.expected());
        let known: Vec<String> = T::value_variants().iter().map(name).collect();
        if let Some(meant) = super::suggest::did_you_mean(text, known.iter().map(String::as_str)) {
            message.push_str(&format!("; {meant}"));
        }
        message
    }

    /// Reads a value as written in an environment variable or on the command line.
    pub(crate) fn parse(self, text: &str) -> Result<Value, String> {
        let wrong = || Err(format!("expected {}, found {text:?}", self.expected()));
        match self {
            Kind::Agent => {
                choice(text, Value::Agent).ok_or_else(|| self.not_one_of::<AgentKind>(text))
            }
            Kind::Color => {
                choice(text, Value::Color).ok_or_else(|| self.not_one_of::<ColorChoice>(text))
            }
            Kind::Permissions => {
                choice(text, Value::Permissions).ok_or_else(|| self.not_one_of::<Permissions>(text))
            }
            Kind::Stuck => {
                choice(text, Value::Stuck).ok_or_else(|| self.not_one_of::<StuckMode>(text))
            }
            Kind::Text | Kind::Url => Ok(Value::Text(text.to_owned())),
            Kind::Dir | Kind::Program | Kind::File | Kind::SandboxPath => {
                Ok(Value::Path(expand_home(text)))
            }
            Kind::Port => match text.trim().parse::<u16>() {
                Ok(n) if n > 0 => Ok(Value::Port(n)),
                _ => wrong(),
            },
            Kind::Duration => duration::parse(text)
                .map(Value::Duration)
                .map_err(|why| format!("expected {}, found {text:?}: {why}", self.expected())),
            Kind::Watchdog => duration::parse_watchdog(text)
                .map(Value::Duration)
                .map_err(|why| format!("expected {}, found {text:?}: {why}", self.expected())),
            Kind::Usd => parse_usd(text).map_or_else(|_| wrong(), |usd| Ok(Value::Usd(usd))),
            Kind::Bool => match text.to_ascii_lowercase().as_str() {
                "true" | "1" | "yes" | "on" => Ok(Value::Bool(true)),
                "false" | "0" | "no" | "off" => Ok(Value::Bool(false)),
                _ => wrong(),
            },
            Kind::Count => match text.trim().parse::<u32>() {
                Ok(n) if n <= MAX_COUNT => Ok(Value::Count(n)),
                _ => wrong(),
            },
            Kind::Sandbox => parse_sandbox(text).map(Value::Sandbox).ok_or_else(|| {
                let mut message = format!("expected {}, found {text:?}", self.expected());
                let names = ["auto", "landlock", "bwrap"];
                if let Some(meant) = super::suggest::did_you_mean(text, names) {
                    message.push_str(&format!("; {meant}"));
                }
                message
            }),
            Kind::Args | Kind::Price | Kind::Check | Kind::Observers => Err(format!(
                "expected {}, which only a configuration file can give",
                self.expected()
            )),
        }
    }

    /// Reads a value from a configuration file in `dir`.
    pub(crate) fn read_toml(self, value: &toml::Value, dir: &Path) -> Result<Value, String> {
        let found = || format!("expected {}, found {}", self.expected(), describe(value));
        match (self, value) {
            (Kind::Dir | Kind::File | Kind::SandboxPath, toml::Value::String(s)) => {
                Ok(Value::Path(dir.join(expand_home(s))))
            }
            (Kind::Observers, toml::Value::Array(items)) => items
                .iter()
                .map(read_observer)
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Observers)
                .map_err(|why| why.unwrap_or_else(found)),
            // A bare name is looked up on PATH; anything with a slash is a path.
            (Kind::Program, toml::Value::String(s)) if s.contains('/') => {
                Ok(Value::Path(dir.join(expand_home(s))))
            }
            (Kind::Duration | Kind::Watchdog, toml::Value::Integer(secs)) => {
                match u64::try_from(*secs) {
                    Ok(secs) if secs > 0 => self.parse(&secs.to_string()),
                    _ => Err(found()),
                }
            }
            (Kind::Usd, toml::Value::Integer(_) | toml::Value::Float(_)) => {
                let usd = value
                    .as_float()
                    .or_else(|| value.as_integer().map(|i| i as f64));
                match usd {
                    Some(v) if v.is_finite() && v > 0.0 => Ok(Value::Usd(v)),
                    _ => Err(found()),
                }
            }
            (Kind::Bool, toml::Value::Boolean(b)) => Ok(Value::Bool(*b)),
            (Kind::Sandbox, toml::Value::Boolean(b)) => Ok(Value::Sandbox(b.then_some(By::Auto))),
            (Kind::Args, toml::Value::Array(items)) => items
                .iter()
                .map(|i| i.as_str().map(str::to_owned))
                .collect::<Option<Vec<_>>>()
                .map(Value::Args)
                .ok_or_else(found),
            (Kind::Price, toml::Value::Table(_)) => {
                let price: Price = value.clone().try_into().map_err(|e: toml::de::Error| {
                    format!("expected {}: {}", self.expected(), e.message())
                })?;
                let all = [
                    Some(price.input),
                    Some(price.cached_input),
                    Some(price.output),
                    price.cache_write,
                ];
                if all.into_iter().flatten().all(|p| p.is_finite() && p >= 0.0) {
                    Ok(Value::Price(price))
                } else {
                    Err("prices must be zero or more".to_owned())
                }
            }
            (Kind::Port, toml::Value::Integer(n)) => match u16::try_from(*n) {
                Ok(n) if n > 0 => Ok(Value::Port(n)),
                _ => Err(found()),
            },
            (Kind::Count, toml::Value::Integer(n)) => match u32::try_from(*n) {
                Ok(n) if n <= MAX_COUNT => Ok(Value::Count(n)),
                _ => Err(found()),
            },
            (Kind::Check, _) => read_check(value, dir).map_err(|why| why.unwrap_or_else(found)),
            (Kind::Bool | Kind::Args | Kind::Price | Kind::Observers, _) => Err(found()),
            (_, toml::Value::String(s)) => self.parse(s),
            _ => Err(found()),
        }
    }
}

impl Value {
    /// The value as a configuration file would write it.
    pub(crate) fn to_toml(&self) -> toml::Value {
        match self {
            Value::Agent(a) => toml::Value::String(name(a)),
            Value::Color(c) => toml::Value::String(name(c)),
            Value::Permissions(p) => toml::Value::String(name(p)),
            Value::Stuck(m) => toml::Value::String(name(m)),
            Value::Text(s) => toml::Value::String(s.clone()),
            Value::Path(p) => toml::Value::String(p.display().to_string()),
            Value::Duration(d) => toml::Value::String(duration::format(*d)),
            Value::Usd(v) => toml::Value::Float(*v),
            Value::Bool(b) => toml::Value::Boolean(*b),
            Value::Args(args) => {
                toml::Value::Array(args.iter().cloned().map(toml::Value::String).collect())
            }
            Value::Price(p) => {
                toml::Value::try_from(p).unwrap_or_else(|_| toml::Value::Table(toml::Table::new()))
            }
            Value::Count(n) => toml::Value::Integer(i64::from(*n)),
            Value::Port(n) => toml::Value::Integer(i64::from(*n)),
            Value::Sandbox(None) => toml::Value::Boolean(false),
            Value::Sandbox(Some(by)) => toml::Value::String(by.name().to_owned()),
            Value::Observers(observers) => toml::Value::Array(
                observers
                    .iter()
                    .map(|o| {
                        let mut table = toml::Table::new();
                        table.insert("command".into(), toml::Value::String(o.command.clone()));
                        if o.raw {
                            table.insert("raw".into(), toml::Value::Boolean(true));
                        }
                        toml::Value::Table(table)
                    })
                    .collect(),
            ),
            Value::Check(None) => toml::Value::Boolean(false),
            Value::Check(Some(CheckSpec {
                command,
                timeout: None,
                cwd: None,
            })) => toml::Value::String(command.clone()),
            Value::Check(Some(spec)) => {
                let mut table = toml::Table::new();
                table.insert("command".into(), toml::Value::String(spec.command.clone()));
                if let Some(timeout) = spec.timeout {
                    table.insert("timeout".into(), Value::Duration(timeout).to_toml());
                }
                if let Some(cwd) = &spec.cwd {
                    table.insert("cwd".into(), Value::Path(cwd.clone()).to_toml());
                }
                toml::Value::Table(table)
            }
        }
    }

    /// The name of a list's entry this value is (`/home/me/.cache/pip`, `8080`).
    pub(crate) fn entry_name(&self) -> String {
        match self {
            Value::Path(p) => p.display().to_string(),
            Value::Port(n) => n.to_string(),
            other => other.to_toml().to_string(),
        }
    }

    /// The value as JSON, for `runbook config --json` and receipts.
    pub(crate) fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self.to_toml()).unwrap_or(serde_json::Value::Null)
    }
}

/// The Rust type of a kind of value, for reading settings.
pub(crate) trait FromValue: Sized {
    /// The kinds of key whose values are of this type.
    const KINDS: &'static [Kind];

    /// `None` when the value is of another kind.
    fn from_value(value: &Value) -> Option<Self>;
}

macro_rules! from_value {
    ($($variant:ident [$($kind:ident),+] => $ty:ty),* $(,)?) => {$(
        impl FromValue for $ty {
            const KINDS: &'static [Kind] = &[$(Kind::$kind),+];

            fn from_value(value: &Value) -> Option<Self> {
                match value {
                    Value::$variant(v) => Some(v.clone()),
                    _ => None,
                }
            }
        }
    )*};
}

from_value!(
    Agent [Agent] => AgentKind,
    Text [Text, Url] => String,
    Path [Dir, Program, File, SandboxPath] => PathBuf,
    Duration [Duration, Watchdog] => Duration,
    Usd [Usd] => f64,
    Bool [Bool] => bool,
    Color [Color] => ColorChoice,
    Permissions [Permissions] => Permissions,
    Stuck [Stuck] => StuckMode,
    Args [Args] => Vec<String>,
    Price [Price] => Price,
    Count [Count] => u32,
    Port [Port] => u16,
    Sandbox [Sandbox] => Option<By>,
    Observers [Observers] => Vec<ObserverSpec>,
    Check [Check] => Option<CheckSpec>,
);

/// An observer from a file: `"cmd"` or `{ command = "cmd", raw = true }`. `Err(None)`: not one at
/// all (the caller says what was expected).
fn read_observer(value: &toml::Value) -> Result<ObserverSpec, Option<String>> {
    let spec = match value {
        toml::Value::String(command) => ObserverSpec {
            command: command.clone(),
            raw: false,
        },
        toml::Value::Table(table) => {
            let mut spec = ObserverSpec {
                command: String::new(),
                raw: false,
            };
            for (field, v) in table {
                match (field.as_str(), v) {
                    ("command", toml::Value::String(c)) => spec.command = c.clone(),
                    ("raw", toml::Value::Boolean(b)) => spec.raw = *b,
                    ("command", _) => return Err(Some("`command` must be a string".to_owned())),
                    ("raw", _) => return Err(Some("`raw` must be true or false".to_owned())),
                    _ => {
                        return Err(Some(format!(
                            "unknown field `{field}` of an observer; {}",
                            meant(field, &["command", "raw"])
                        )));
                    }
                }
            }
            spec
        }
        _ => return Err(None),
    };
    if spec.command.trim().is_empty() {
        return Err(Some("an observer has no command".to_owned()));
    }
    Ok(spec)
}

/// A check from a file: `"cargo test"`, `{ command = "cargo test", timeout = "10m", cwd = "app" }`
/// or `false`. `Err(None)`: not a check at all (the caller says what was expected).
fn read_check(value: &toml::Value, dir: &Path) -> Result<Value, Option<String>> {
    let spec = match value {
        toml::Value::Boolean(false) => return Ok(Value::Check(None)),
        toml::Value::String(command) => CheckSpec {
            command: command.clone(),
            timeout: None,
            cwd: None,
        },
        toml::Value::Table(table) => {
            let mut spec = CheckSpec {
                command: String::new(),
                timeout: None,
                cwd: None,
            };
            for (field, v) in table {
                let wrong = |kind: Kind| {
                    kind.read_toml(v, dir)
                        .map_err(|m| Some(format!("`{field}`: {m}")))
                };
                match (field.as_str(), v) {
                    ("command", toml::Value::String(command)) => spec.command = command.clone(),
                    ("command", _) => return Err(Some("`command` must be a string".to_owned())),
                    ("timeout", _) => {
                        if let Value::Duration(d) = wrong(Kind::Duration)? {
                            spec.timeout = Some(d);
                        }
                    }
                    ("cwd", _) => {
                        if let Value::Path(p) = wrong(Kind::Dir)? {
                            spec.cwd = Some(p);
                        }
                    }
                    _ => {
                        return Err(Some(format!(
                            "unknown field `{field}`; {}",
                            meant(field, &["command", "timeout", "cwd"])
                        )));
                    }
                }
            }
            spec
        }
        _ => return Err(None),
    };
    if spec.command.trim().is_empty() {
        return Err(Some("the check has no command".to_owned()));
    }
    Ok(Value::Check(Some(spec)))
}

/// `--sandbox`'s value: `true` and its kin are `auto`, `false` and its kin no sandbox.
fn parse_sandbox(text: &str) -> Option<Option<By>> {
    match text.trim().to_ascii_lowercase().as_str() {
        "true" | "1" | "yes" | "on" | "auto" => Some(Some(By::Auto)),
        "false" | "0" | "no" | "off" => Some(None),
        "landlock" => Some(Some(By::Landlock)),
        "bwrap" | "bubblewrap" => Some(Some(By::Bwrap)),
        _ => None,
    }
}

/// A value enum's value named `text`.
/// `did you mean `x`?` for the field `given` is close to, else the fields expected.
fn meant(given: &str, fields: &[&str]) -> String {
    super::suggest::did_you_mean(given, fields.iter().copied()).unwrap_or_else(|| {
        let (last, rest) = fields.split_last().expect("fields are named");
        format!("expected {} or {last}", rest.join(", "))
    })
}

fn choice<T: ValueEnum>(text: &str, wrap: fn(T) -> Value) -> Option<Value> {
    T::from_str(text, false).ok().map(wrap)
}

/// `"opencode", "claude"`: a value enum's names, quoted, for messages.
fn names<T: ValueEnum>() -> String {
    T::value_variants()
        .iter()
        .map(|v| format!("{:?}", name(v)))
        .collect::<Vec<_>>()
        .join(", ")
}

fn name<T: ValueEnum>(v: &T) -> String {
    v.to_possible_value()
        .map(|p| p.get_name().to_owned())
        .unwrap_or_default()
}

/// What a TOML value is, for "expected …, found …".
fn describe(value: &toml::Value) -> String {
    match value {
        toml::Value::String(s) => format!("{s:?}"),
        toml::Value::Integer(i) => i.to_string(),
        toml::Value::Float(f) => f.to_string(),
        toml::Value::Boolean(b) => b.to_string(),
        other => format!("a {}", other.type_str()),
    }
}

/// `~/x` is `x` in the home directory.
fn expand_home(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => Path::new(&home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// `2.5` or `$2.50`, more than zero.
fn parse_usd(s: &str) -> Result<f64, String> {
    let v: f64 = s
        .trim()
        .trim_start_matches('$')
        .parse()
        .map_err(|_| format!("`{s}` is not an amount of dollars (example: 2.50)"))?;
    if !v.is_finite() || v <= 0.0 {
        return Err("must be a positive amount of dollars".to_owned());
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toml(text: &str) -> toml::Value {
        text.parse::<toml::Table>().unwrap().remove("v").unwrap()
    }

    #[test]
    fn durations_and_amounts_parse_like_people_write_them() {
        let d = |t| Kind::Duration.parse(t);
        assert_eq!(d("90s"), Ok(Value::Duration(Duration::from_secs(90))));
        assert_eq!(d("1h30m"), Ok(Value::Duration(Duration::from_secs(5400))));
        assert!(d("0s").is_err());
        assert!(d("18446744073709551615").is_err());
        assert_eq!(d("8760h"), Ok(Value::Duration(duration::MAX)));
        assert!(d("soon").is_err());
        let months = d("3M").unwrap_err();
        assert!(months.contains("did you mean 3m"), "{months}");
        assert_eq!(parse_usd("$2.5"), Ok(2.5));
        assert!(parse_usd("-1").is_err());
        assert!(parse_usd("lots").is_err());
    }

    #[test]
    fn files_take_native_toml_types_and_strings() {
        let dir = Path::new("/repo");
        let d = |t| Kind::Duration.read_toml(&toml(t), dir);
        assert_eq!(d("v = 90"), Ok(Value::Duration(Duration::from_secs(90))));
        assert_eq!(
            d("v = \"2m\""),
            Ok(Value::Duration(Duration::from_secs(120)))
        );
        assert!(d("v = true").unwrap_err().contains("found true"));
        assert!(d("v = \"soon\"").unwrap_err().contains("\"3m\""));
        let usd = |t| Kind::Usd.read_toml(&toml(t), dir);
        assert_eq!(usd("v = 2"), Ok(Value::Usd(2.0)));
        assert_eq!(usd("v = \"$1.5\""), Ok(Value::Usd(1.5)));
        assert!(usd("v = -3.0").is_err());
        assert_eq!(
            Kind::Args.read_toml(&toml("v = [\"--x\", \"y\"]"), dir),
            Ok(Value::Args(vec!["--x".into(), "y".into()]))
        );
        assert!(
            Kind::Args
                .read_toml(&toml("v = [1]"), dir)
                .unwrap_err()
                .contains("array of strings")
        );
        assert!(Kind::Bool.read_toml(&toml("v = \"yes\""), dir).is_err());
        assert!(
            Kind::Agent
                .read_toml(&toml("v = \"nope\""), dir)
                .unwrap_err()
                .contains("\"opencode\"")
        );
    }

    #[test]
    fn paths_in_files_are_relative_to_the_file_but_program_names_are_looked_up() {
        let dir = Path::new("/repo");
        let p = |kind: Kind, t| kind.read_toml(&toml(t), dir);
        assert_eq!(
            p(Kind::Dir, "v = \"runs\""),
            Ok(Value::Path("/repo/runs".into()))
        );
        assert_eq!(
            p(Kind::Program, "v = \"./bin/agent\""),
            Ok(Value::Path("/repo/./bin/agent".into()))
        );
        assert_eq!(
            p(Kind::Program, "v = \"opencode\""),
            Ok(Value::Path("opencode".into()))
        );
        assert_eq!(
            p(Kind::Program, "v = \"/usr/bin/x\""),
            Ok(Value::Path("/usr/bin/x".into()))
        );
    }

    #[test]
    fn prices_are_checked_field_by_field() {
        let dir = Path::new("/repo");
        let ok = Kind::Price.read_toml(
            &toml("v = { input = 1, cached_input = 0.1, output = 4 }"),
            dir,
        );
        assert!(matches!(ok, Ok(Value::Price(p)) if p.output == 4.0 && p.cache_write.is_none()));
        let typo = Kind::Price.read_toml(
            &toml("v = { input = 1, cached_input = 0.1, ouput = 4 }"),
            dir,
        );
        assert!(typo.unwrap_err().contains("ouput"));
    }

    #[test]
    fn the_sandbox_is_a_switch_or_the_name_of_its_enforcer() {
        let dir = Path::new("/repo");
        let file = |t| Kind::Sandbox.read_toml(&toml(t), dir);
        assert_eq!(file("v = true"), Ok(Value::Sandbox(Some(By::Auto))));
        assert_eq!(file("v = false"), Ok(Value::Sandbox(None)));
        assert_eq!(file("v = \"bwrap\""), Ok(Value::Sandbox(Some(By::Bwrap))));
        assert_eq!(
            Kind::Sandbox.parse("Landlock"),
            Ok(Value::Sandbox(Some(By::Landlock)))
        );
        assert_eq!(Kind::Sandbox.parse("1"), Ok(Value::Sandbox(Some(By::Auto))));
        let typo = Kind::Sandbox.parse("landlok").unwrap_err();
        assert!(
            typo.contains("did you mean") && typo.contains("landlock"),
            "{typo}"
        );
        assert!(file("v = 1").is_err());
        assert_eq!(
            Value::Sandbox(Some(By::Bwrap)).to_toml().to_string(),
            "\"bwrap\""
        );
        assert_eq!(Value::Sandbox(None).to_toml().to_string(), "false");
    }

    #[test]
    fn values_show_as_toml_would_write_them() {
        assert_eq!(
            Value::Duration(Duration::from_secs(90))
                .to_toml()
                .to_string(),
            "\"1m30s\""
        );
        assert_eq!(
            Value::Agent(AgentKind::Opencode).to_toml().to_string(),
            "\"opencode\""
        );
        assert_eq!(Value::Usd(2.0).to_json(), serde_json::json!(2.0));
    }
}
