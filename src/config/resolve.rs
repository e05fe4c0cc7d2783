//! The configuration in effect: the layers merged, lowest to highest (defaults, global file,
//! `runbook.toml`, `runbook.local.toml`, `RUNBOOK_*` variables, flags), each value remembering
//! where it was set.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::discover::Places;
use super::error::ConfigError;
use super::file::{self, Entry, EnvDefault, FileLayer};
use super::flags::FlagValue;
use super::keys::{self, Defaulted, Key, Slot, Typed, agent_name, agents};
use super::value::{FromValue, Kind, Value};
use crate::agent_kind::AgentKind;
use crate::exit;
use crate::prices::PriceTable;
use crate::provenance::{Layer, Origin, SettingRecord};

/// One configuration file runbook looked for.
#[derive(Debug)]
pub(crate) struct ConfigFile {
    pub layer: Layer,
    pub path: PathBuf,
    /// What it says; `None` when there is no such file.
    pub content: Option<FileLayer>,
}

/// A key's value in effect (`None`: unset) and where it was set.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Setting {
    pub slot: Slot,
    pub value: Option<Value>,
    pub origin: Origin,
}

impl Setting {
    /// How a message names where the value was given: `--agent-cmd`, `RUNBOOK_AGENT_CMD`, or
    /// `` `agent_cmd` at /work/app/runbook.toml:3:1 ``.
    pub(crate) fn given_by(&self) -> String {
        let o = &self.origin;
        match (&o.name, &o.file, o.line, o.column) {
            (Some(name), ..) => name.clone(),
            (None, Some(file), Some(line), Some(column)) => {
                format!("`{}` at {file}:{line}:{column}", self.slot.name())
            }
            _ => format!("`{}`", self.slot.name()),
        }
    }

    /// The setting as `runbook config --json` and the receipt show it.
    pub(crate) fn record(&self) -> SettingRecord {
        SettingRecord {
            key: self.slot.name(),
            value: self
                .value
                .as_ref()
                .map_or(serde_json::Value::Null, Value::to_json),
            from: self.origin.clone(),
        }
    }
}

/// The configuration in effect for work in one directory.
#[derive(Debug)]
pub(crate) struct Config {
    /// The repository root, where the repository's files are.
    pub root: PathBuf,
    pub files: Vec<ConfigFile>,
    settings: Vec<Setting>,
}

/// Reads every layer for work in `dir`, with the environment runbook was started with. An error
/// is a usage error: nothing should be started.
pub(crate) fn load<'a>(
    dir: &Path,
    flags: impl IntoIterator<Item = &'a FlagValue>,
) -> Result<Config, exit::Error> {
    let places = Places::find(dir);
    let mut files = Vec::new();
    for (layer, path) in places.files {
        let content = file::read(layer, &path)?;
        files.push(ConfigFile {
            layer,
            path,
            content,
        });
    }
    let config = resolve(places.root, files, &|name| std::env::var(name).ok(), flags)?;
    let names = std::env::vars_os().filter_map(|(name, _)| name.into_string().ok());
    for warning in super::variables::misspelt(names) {
        crate::term::print::warn(warning);
    }
    Ok(config)
}

/// [`load`] with the settings of a batch's task over the environment's and under the flags:
/// `task` is the task file and the task's settings in it.
pub(crate) fn load_for_task<'a>(
    dir: &Path,
    task: (&Path, crate::digest::Digest, Vec<Entry>),
    flags: impl IntoIterator<Item = &'a FlagValue>,
) -> Result<Config, exit::Error> {
    let places = Places::find(dir);
    let mut files = Vec::new();
    for (layer, path) in places.files {
        let content = file::read(layer, &path)?;
        files.push(ConfigFile {
            layer,
            path,
            content,
        });
    }
    let (path, digest, entries) = task;
    files.push(ConfigFile {
        layer: Layer::Flag,
        path: path.to_path_buf(),
        content: Some(FileLayer {
            entries,
            env: Vec::new(),
            digest,
        }),
    });
    Ok(resolve(
        places.root,
        files,
        &|name| std::env::var(name).ok(),
        flags,
    )?)
}

/// [`load`] for work in the current directory.
pub(crate) fn load_here<'a>(
    flags: impl IntoIterator<Item = &'a FlagValue>,
) -> anyhow::Result<Config> {
    Ok(load(&std::env::current_dir()?, flags)?)
}

/// Merges the layers: files (lowest first), then the variables `var` reads, then the flags.
pub(crate) fn resolve<'a>(
    root: PathBuf,
    files: Vec<ConfigFile>,
    var: &dyn Fn(&str) -> Option<String>,
    flags: impl IntoIterator<Item = &'a FlagValue>,
) -> Result<Config, ConfigError> {
    let mut entries: Vec<Entry> = defaults().collect();
    let of = |task: bool| {
        files
            .iter()
            .filter(move |f| (f.layer == Layer::Flag) == task)
            .flat_map(|f| f.content.iter().flat_map(|c| c.entries.iter().cloned()))
    };
    entries.extend(of(false));
    let environment = from_environment(var)?;
    let floor = sandbox_of(&environment);
    entries.extend(environment);
    // A batch's task (a file of the flag layer) is over the environment: it was written for
    // this one run. But a task file (maybe a repository's) never loosens the sandbox the
    // user's `RUNBOOK_SANDBOX` asks for.
    entries.extend(of(true).filter(|e| !loosens(e, floor)));

    let (per_agent, plain): (Vec<&FlagValue>, Vec<&FlagValue>) =
        flags.into_iter().partition(|f| f.key.per_agent);
    entries.extend(plain.into_iter().map(|f| flag_entry(f, None)));
    // `--agent-bin` and the arguments after `--` are for the agent that runs.
    let agent = agent_of(&entries);
    entries.extend(per_agent.into_iter().map(|f| flag_entry(f, Some(agent))));

    let settings = slots(&entries)
        .into_iter()
        .map(|slot| {
            // Entries are in layer order, lowest first: the last one for a slot wins.
            let winner = entries.iter().rev().find(|e| e.slot == slot);
            Setting {
                value: winner.map(|e| e.value.clone()),
                origin: winner.map_or_else(Origin::default_value, |e| e.origin.clone()),
                slot,
            }
        })
        .collect();
    Ok(Config {
        root,
        files,
        settings,
    })
}

fn defaults() -> impl Iterator<Item = Entry> {
    keys::all().flat_map(|key| {
        let value = key.default_value();
        key.slots().into_iter().filter_map(move |slot| {
            Some(Entry {
                slot,
                value: value.clone()?,
                origin: Origin::default_value(),
            })
        })
    })
}

/// The sandbox `entries` ask for, the last one winning; `None` when they name none.
fn sandbox_of(entries: &[Entry]) -> Option<Option<crate::sandbox::By>> {
    entries
        .iter()
        .rev()
        .find(|e| *e.slot.key == keys::SANDBOX.0.key)
        .and_then(|e| match e.value {
            Value::Sandbox(by) => Some(by),
            _ => None,
        })
}

/// Whether `entry` asks for a weaker sandbox than `floor` (off, or an enforcer keeping less);
/// it is then left out, and said so.
fn loosens(entry: &Entry, floor: Option<Option<crate::sandbox::By>>) -> bool {
    let (Value::Sandbox(by), Some(Some(floor))) = (&entry.value, floor) else {
        return false;
    };
    if *entry.slot.key != keys::SANDBOX.0.key
        || by.is_some_and(|by| by.strength() >= floor.strength())
    {
        return false;
    }
    let named = by.map_or("off", crate::sandbox::By::name);
    crate::term::print::warn(format_args!(
        "{}: `sandbox = {named}` would loosen the sandbox RUNBOOK_SANDBOX asks for ({}); it is kept",
        crate::foreign::term::escape(&match (&entry.origin.file, entry.origin.line) {
            (Some(file), Some(line)) => format!("{file}:{line}"),
            (Some(file), None) => file.to_string(),
            _ => entry.origin.to_string(),
        }),
        floor.name()
    ));
    true
}

fn from_environment(var: &dyn Fn(&str) -> Option<String>) -> Result<Vec<Entry>, ConfigError> {
    let mut entries = Vec::new();
    for key in keys::all().filter(|k| k.env) {
        for slot in key.slots() {
            let name = key
                .env_var(slot.agent.map(agent_name))
                .expect("keys with env have a variable");
            // An empty variable is unset, as the shell's `VAR= cmd` means.
            let Some(text) = var(&name).filter(|t| !t.is_empty()) else {
                continue;
            };
            let value = key
                .kind
                .parse(&text)
                .map_err(|m| ConfigError::named(&name, m))?;
            entries.push(Entry {
                slot,
                value,
                origin: Origin::named(Layer::Env, Some(name)),
            });
        }
    }
    Ok(entries)
}

fn flag_entry(flag: &FlagValue, agent: Option<AgentKind>) -> Entry {
    let slot = if flag.key.kind.is_list() {
        Slot::entry(flag.key, flag.value.entry_name())
    } else {
        Slot::agents(flag.key, agent)
    };
    Entry {
        slot,
        value: flag.value.clone(),
        origin: Origin::named(Layer::Flag, Some(flag.flag.clone())),
    }
}

/// The agent the entries so far choose.
fn agent_of(entries: &[Entry]) -> AgentKind {
    entries
        .iter()
        .rev()
        .find_map(|e| match e.value {
            Value::Agent(agent) if *e.slot.key == keys::AGENT.0.key => Some(agent),
            _ => None,
        })
        .unwrap_or(AgentKind::Opencode)
}

/// Every slot to show, in the key table's order: the agents' sections, agent by agent, where
/// the first per-agent key is; a table key's entries that some layer gives, by name.
fn slots(entries: &[Entry]) -> Vec<Slot> {
    let mut slots = Vec::new();
    let mut agents_done = false;
    for key in keys::all() {
        if key.per_agent && !agents_done {
            agents_done = true;
            for agent in agents() {
                let per_agent = keys::all().filter(|k| k.per_agent);
                slots.extend(per_agent.map(|key| Slot::agents(key, Some(agent))));
            }
        } else if key.kind.is_table() {
            let mut names: Vec<&String> = Vec::new();
            let given = entries
                .iter()
                .filter(|e| e.slot.key == key)
                .filter_map(|e| e.slot.entry.as_ref());
            // Checks keep the order they were first given in, lowest layer first; prices are
            // by model.
            for name in given {
                if !names.contains(&name) {
                    names.push(name);
                }
            }
            if key.kind == Kind::Price {
                names.sort();
            }
            slots.extend(names.into_iter().map(|name| Slot::entry(key, name.clone())));
        } else if !key.per_agent {
            slots.push(Slot::of(key));
        }
    }
    slots
}

impl Config {
    /// Every setting, in the key table's order.
    pub(crate) fn settings(&self) -> &[Setting] {
        &self.settings
    }

    /// The setting of `key` (of `agent`, for a per-agent key).
    fn slot(&self, key: &Key, agent: Option<AgentKind>) -> &Setting {
        self.settings
            .iter()
            .find(|s| s.slot.key == key && s.slot.agent == agent && s.slot.entry.is_none())
            .expect("every declared key has a setting")
    }

    /// The setting of `key`: its value and where it was set.
    pub(crate) fn setting<T>(&self, key: &Typed<T>) -> &Setting {
        self.slot(&key.key, None)
    }

    /// The value of `key`, if it is set.
    pub(crate) fn get<T: FromValue>(&self, key: &Typed<T>) -> Option<T> {
        read(self.setting(key))
    }

    /// The value of `key`, a key with a default.
    pub(crate) fn value<T: FromValue>(&self, key: &Defaulted<T>) -> T {
        self.get(&key.0)
            .expect("a key with a default always has a value")
    }

    /// The setting of the per-agent `key` for `agent`.
    pub(crate) fn agent_setting<T>(&self, agent: AgentKind, key: &Typed<T>) -> &Setting {
        self.slot(&key.key, Some(agent))
    }

    /// The value of the per-agent `key` for `agent`, if it is set.
    pub(crate) fn agent_get<T: FromValue>(&self, agent: AgentKind, key: &Typed<T>) -> Option<T> {
        read(self.agent_setting(agent, key))
    }

    /// The setting named `name` (`model`, `agents.opencode.bin`, `prices."gpt-5"`), for tests
    /// that speak of settings as a person does.
    #[cfg(test)]
    pub(crate) fn named(&self, name: &str) -> &Setting {
        self.settings
            .iter()
            .find(|s| s.slot.name() == name)
            .unwrap_or_else(|| panic!("no setting `{name}`"))
    }

    /// The shipped price table with the configured prices over it.
    pub(crate) fn prices(&self) -> PriceTable {
        let user: BTreeMap<String, crate::prices::Price> = self
            .settings
            .iter()
            .filter_map(|s| match (&s.value, &s.slot.entry) {
                (Some(Value::Price(price)), Some(model)) => Some((model.clone(), *price)),
                _ => None,
            })
            .collect();
        PriceTable::new(user)
    }

    /// The configured checks that are on, in the order they were first given (lowest layer
    /// first), each as the highest layer sets it.
    pub(crate) fn checks(&self) -> Vec<crate::config::check::Check> {
        self.settings
            .iter()
            .filter(|s| *s.slot.key == keys::CHECKS.key)
            .filter_map(|s| match (&s.value, &s.slot.entry) {
                (Some(Value::Check(Some(spec))), Some(name)) => Some(crate::config::check::Check {
                    name: name.clone(),
                    command: spec.command.clone(),
                    timeout: spec.timeout,
                    cwd: spec.cwd.clone(),
                }),
                _ => None,
            })
            .collect()
    }

    /// The entries of a list key (`sandbox.write`, …) that some layer gives, in the order first
    /// given, each with where it was given.
    pub(crate) fn list(&self, key: &Key) -> impl Iterator<Item = &Setting> {
        self.settings
            .iter()
            .filter(move |s| s.slot.key == key && s.value.is_some())
    }

    /// The settings that did not come from the defaults, for the run's record.
    pub(crate) fn records(&self) -> Vec<SettingRecord> {
        self.settings
            .iter()
            .filter(|s| s.origin.layer != Layer::Default)
            .map(Setting::record)
            .collect()
    }

    /// The `[env]` entries of every file, lowest layer first.
    pub(crate) fn env_defaults(&self) -> impl Iterator<Item = &EnvDefault> {
        self.files
            .iter()
            .flat_map(|f| f.content.iter().flat_map(|c| c.env.iter()))
    }
}

/// A setting's value as its key's type: the value of a key is always of the key's kind, so a
/// mismatch is a bug in the key table, not a configuration error.
fn read<T: FromValue>(setting: &Setting) -> Option<T> {
    let value = setting.value.as_ref()?;
    Some(T::from_value(value).expect("a key's value is of its declared kind"))
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::config::keys;

    fn file(layer: Layer, text: &str) -> ConfigFile {
        let path = PathBuf::from(format!("/repo/{}.toml", layer.as_str()));
        let content = Some(file::parse(layer, &path, text).unwrap());
        ConfigFile {
            layer,
            path,
            content,
        }
    }

    fn flag(name: &str, value: Value) -> FlagValue {
        let key = keys::find(name)
            .or_else(|| keys::find_per_agent(name))
            .unwrap();
        FlagValue {
            key,
            value,
            flag: format!("--{}", key.long()),
        }
    }

    #[test]
    fn each_value_comes_from_the_highest_layer_that_sets_it() {
        let files = vec![
            file(
                Layer::Global,
                "model = \"g\"\ntimeout = \"1m\"\nmax_cost = 1\n",
            ),
            file(Layer::Repo, "model = \"r\"\ntimeout = \"2m\"\n"),
            file(Layer::Local, "model = \"l\"\n"),
        ];
        let vars = |name: &str| (name == "RUNBOOK_MODEL").then(|| "e".to_owned());
        let flags = [flag("max_cost", Value::Usd(9.0))];
        let config = resolve("/repo".into(), files, &vars, &flags).unwrap();

        assert_eq!(config.get(&keys::MODEL).as_deref(), Some("e"));
        assert_eq!(
            config.named("model").origin,
            Origin::named(Layer::Env, Some("RUNBOOK_MODEL".into()))
        );
        assert_eq!(config.get(&keys::TIMEOUT), Some(Duration::from_secs(120)));
        assert_eq!(
            config.named("timeout").origin,
            Origin::in_file(Layer::Repo, "/repo/repo.toml".into(), 2, 1)
        );
        assert_eq!(config.get(&keys::MAX_COST), Some(9.0));
        assert_eq!(config.named("max_cost").origin.layer, Layer::Flag);
        assert_eq!(
            config.value(&keys::INACTIVITY_TIMEOUT),
            Duration::from_secs(180)
        );
        assert_eq!(
            config.named("inactivity_timeout").origin,
            Origin::default_value()
        );
        assert_eq!(
            Some(config.value(&keys::KILL_GRACE)),
            Some(Duration::from_secs(10))
        );
        assert!(config.named("model").value.is_some());
        assert_eq!(config.records().len(), 3, "{:?}", config.records());
    }

    #[test]
    fn agent_flags_apply_to_the_agent_that_runs_and_tables_merge_by_entry() {
        let files = vec![
            file(
                Layer::Global,
                "[prices.a]\ninput = 1\ncached_input = 0\noutput = 2\n[prices.b]\ninput = 1\ncached_input = 0\noutput = 2\n",
            ),
            file(
                Layer::Repo,
                "[agents.opencode]\nbin = \"/r/oc\"\nargs = [\"--x\"]\n[prices.b]\ninput = 5\ncached_input = 0\noutput = 6\n",
            ),
        ];
        let flags = [flag("args", Value::Args(vec!["--y".into()]))];
        let config = resolve("/repo".into(), files, &|_| None, &flags).unwrap();
        assert_eq!(
            config.agent_get(AgentKind::Opencode, &keys::ARGS),
            Some(vec!["--y".to_owned()])
        );
        assert_eq!(
            config.named("agents.opencode.args").origin,
            Origin::named(Layer::Flag, Some("--agent-args".into()))
        );
        assert_eq!(
            config.agent_get(AgentKind::Opencode, &keys::BIN),
            Some(PathBuf::from("/r/oc"))
        );
        assert_eq!(config.agent_get(AgentKind::Claude, &keys::BIN), None);
        let prices = config.prices();
        assert_eq!(prices.lookup("a").map(|p| p.input), Some(1.0));
        assert_eq!(
            prices.lookup("b").map(|p| p.input),
            Some(5.0),
            "the repo's entry wins"
        );
        assert_eq!(config.named("prices.\"b\"").origin.layer, Layer::Repo);
    }

    #[test]
    fn checks_keep_their_order_and_a_higher_layer_replaces_or_turns_one_off() {
        let files = vec![
            file(
                Layer::Global,
                "[checks]\ntest = \"cargo test\"\nbuild = \"make\"\nlint = \"cargo clippy\"\n",
            ),
            file(
                Layer::Repo,
                "[checks]\nfmt = \"cargo fmt --check\"\nbuild = { command = \"make all\", timeout = \"10m\", cwd = \"sub\" }\ntest = false\n",
            ),
        ];
        let config = resolve("/repo".into(), files, &|_| None, []).unwrap();
        let checks = config.checks();
        let names: Vec<&str> = checks.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["build", "lint", "fmt"]);
        assert_eq!(checks[0].command, "make all");
        assert_eq!(checks[0].timeout, Some(Duration::from_secs(600)));
        assert_eq!(checks[0].cwd, Some(PathBuf::from("/repo/sub")));
        assert_eq!(checks[1].timeout, None, "the check_timeout applies");
        assert_eq!(config.named("checks.\"test\"").origin.layer, Layer::Repo);
        assert_eq!(
            config.named("checks.\"test\"").value,
            Some(Value::Check(None))
        );
    }

    #[test]
    fn a_bad_check_in_a_file_is_named_with_its_line() {
        let err = |text: &str| {
            file::parse(Layer::Repo, Path::new("/repo/runbook.toml"), text)
                .unwrap_err()
                .to_string()
        };
        let bad_name = err("[checks]\n\".hidden\" = \"true\"\n");
        assert!(bad_name.contains("runbook.toml:2:1"), "{bad_name}");
        assert!(bad_name.contains("is not a check name"), "{bad_name}");
        let field = err("[checks]\ntest = { command = \"x\", timout = \"1m\" }\n");
        assert!(field.contains("unknown field `timout`"), "{field}");
        assert!(err("[checks]\ntest = true\n").contains("false to turn the check off"));
        assert!(err("[checks]\ntest = { timeout = \"1m\" }\n").contains("has no command"));
        assert!(err("checks = \"cargo test\"\n").contains("[checks] test = "));
        assert!(err("repair_attempts = 21\n").contains("from 0 to 20"));
    }

    #[test]
    fn a_bad_variable_is_named() {
        let vars = |name: &str| (name == "RUNBOOK_MAX_COST").then(|| "lots".to_owned());
        let err = resolve("/repo".into(), vec![], &vars, []).unwrap_err();
        assert_eq!(
            err.to_string(),
            "RUNBOOK_MAX_COST: expected a positive amount of US dollars such as 2.5, found \"lots\""
        );
    }
}
