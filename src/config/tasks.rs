//! A batch's task file: `[defaults]` and `[[task]]` tables of run settings (read by the same
//! reader as a configuration file, so a wrong key is named with its line and column), or JSON
//! lines of tasks (`--tasks -`). The file is named on the command line, and its settings are a
//! task's own: they are of the flag layer (with the file, line and column they are at), over
//! the environment and under the run's own flags.

use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeTable, DeValue};

use super::error::ConfigError;
use super::file::{Entry, Reader, SpannedKey, to_toml};
use super::keys::{self, agent_name, agent_names, agents};
use super::suggest;
use crate::agent_kind::AgentKind;
use crate::digest::Digest;
use crate::files::{self, Links};
use crate::provenance::Layer;

/// The keys of a task (or of `[defaults]`) that are not run settings.
const TASK_KEYS: [&str; 8] = [
    "id",
    "prompt",
    "prompt_file",
    "repeat",
    "agents",
    "setup",
    "setup_timeout",
    "include",
];

/// The most copies of one task `repeat` and `agents` may ask for.
pub(crate) const MAX_COPIES: u32 = 100;

/// The most tasks one task file may make once `repeat` and `agents` made their copies: what one
/// batch (or one scheduler's job) runs. Past it the file is refused before anything is expanded.
pub(crate) const MAX_TASKS: u64 = 10_000;

/// The most prompt text a task file's prompts may hold together, `prompt_file`s included (each
/// is read whole, and many tasks may name the same large one).
pub(crate) const PROMPTS_LIMIT: usize = 64 * 1024 * 1024;

/// What `[defaults]` or one task says besides its prompt.
#[derive(Debug, Clone, Default)]
pub(crate) struct Section {
    /// Run settings, in the file's order.
    pub entries: Vec<Entry>,
    /// A command run in the task's new worktree before the agent starts.
    pub setup: Option<String>,
    /// How long `setup` may run before it is stopped and the task fails.
    pub setup_timeout: Option<std::time::Duration>,
    /// Files (ignored by git, so not in the worktree) copied from the main checkout.
    pub include: Option<Vec<String>>,
    /// How many copies of the task run (`repeat`).
    pub repeat: Option<u32>,
    /// Fan-out: each agent and how many copies it runs.
    pub agents: Option<Vec<(AgentKind, u32)>>,
}

/// One `[[task]]`.
#[derive(Debug, Clone)]
pub(crate) struct TaskSpec {
    pub id: String,
    pub prompt: String,
    pub section: Section,
    /// The 1-based line it starts on.
    pub line: u32,
}

/// A whole task file.
#[derive(Debug, Clone)]
pub(crate) struct TaskFile {
    pub path: PathBuf,
    pub digest: Digest,
    pub defaults: Section,
    pub tasks: Vec<TaskSpec>,
}

impl TaskFile {
    /// How many tasks it makes once `repeat` and `agents` made their copies, counted from those
    /// counts alone (`None` past `u64`).
    pub(crate) fn total(&self) -> Option<u64> {
        self.tasks.iter().try_fold(0u64, |sum, task| {
            let repeat = task.section.repeat.or(self.defaults.repeat).unwrap_or(1);
            let fan = task
                .section
                .agents
                .as_ref()
                .or(self.defaults.agents.as_ref());
            let copies = match fan {
                Some(list) => list
                    .iter()
                    .try_fold(0u64, |n, (_, count)| n.checked_add(u64::from(*count)))?,
                None => 1,
            };
            sum.checked_add(copies.checked_mul(u64::from(repeat))?)
        })
    }

    /// The file, refused (a usage error naming it, its total and the cap) when it makes more
    /// tasks than [`MAX_TASKS`]: decided from the counts, before anything is expanded.
    fn bounded(self) -> Result<Self, ConfigError> {
        match self.total() {
            Some(n) if n <= MAX_TASKS => Ok(self),
            Some(n) => Err(too_many(&self.path, &crate::format::plural(n, "task"))),
            None => Err(too_many(&self.path, "more tasks than can be counted")),
        }
    }

    /// The settings of the task `id`: the defaults', then its own (which win).
    pub(crate) fn entries_of(&self, id: &str) -> Option<Vec<Entry>> {
        let task = self.tasks.iter().find(|t| t.id == id)?;
        let mut entries = self.defaults.entries.clone();
        entries.extend(task.section.entries.iter().cloned());
        Some(entries)
    }
}

/// Reads the task file at `path`: JSON lines when it ends in `.jsonl` or `.ndjson`, else TOML.
pub(crate) fn read_tasks(path: &Path) -> Result<TaskFile, ConfigError> {
    let bytes = match files::read_optional(path, files::CONFIG_LIMIT, Links::Follow) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Err(ConfigError::file(path, "no such task file")),
        Err(e) => return Err(ConfigError::file(path, format!("cannot read it: {e}"))),
    };
    let text =
        String::from_utf8(bytes).map_err(|_| ConfigError::file(path, "expected UTF-8 text"))?;
    let json = path
        .extension()
        .is_some_and(|e| e == "jsonl" || e == "ndjson");
    if json {
        parse_json_lines(path, &text)
    } else {
        parse_tasks(path, &text)
    }
}

/// Reads a TOML task file.
pub(crate) fn parse_tasks(path: &Path, text: &str) -> Result<TaskFile, ConfigError> {
    let doc = DeTable::parse(text).map_err(|e| {
        let offset = e.span().map_or(0, |s| s.start);
        ConfigError::at(path, text, offset, e.message())
    })?;
    let reader = Reader {
        layer: Layer::Flag,
        path,
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        text,
    };
    let mut out = TaskFile {
        path: path.to_path_buf(),
        digest: Digest::of(text.as_bytes()),
        defaults: Section::default(),
        tasks: Vec::new(),
    };
    for (key, value) in doc.get_ref() {
        match key.get_ref().as_ref() {
            "defaults" => {
                let table = reader.table(key, value, "a table of run settings")?;
                out.defaults = section(&reader, table, true)?;
            }
            "task" => {
                let DeValue::Array(list) = value.get_ref() else {
                    let message = "`task` must be an array of tables: write each as [[task]]";
                    return Err(reader.error(value.span().start, message.into()));
                };
                let mut prompts = Prompts::default();
                for item in list {
                    let table = reader.table(key, item, "a table: write each as [[task]]")?;
                    let task = task(&reader, item, table)?;
                    prompts.add(&task, path)?;
                    out.tasks.push(task);
                }
            }
            other => {
                let message = match suggest::did_you_mean(other, ["defaults", "task"]) {
                    Some(meant) => format!("unknown key `{other}`; {meant}"),
                    None => format!(
                        "unknown key `{other}`; a task file holds [defaults] and [[task]] tables"
                    ),
                };
                return Err(reader.error(key.span().start, message));
            }
        }
    }
    check_ids(&reader, &out.tasks)?;
    out.bounded()
}

/// Reads JSON lines, each one task with the keys of a `[[task]]`; errors name the line.
pub(crate) fn parse_json_lines(path: &Path, text: &str) -> Result<TaskFile, ConfigError> {
    let mut tasks = Vec::new();
    let mut prompts = Prompts::default();
    for (n, line) in text.lines().enumerate() {
        let line_no = u32::try_from(n + 1).unwrap_or(u32::MAX);
        if line.trim().is_empty() {
            continue;
        }
        let at = |message: String| ConfigError::at_line(path, line_no, 1, message);
        let value: serde_json::Value =
            serde_json::from_str(line).map_err(|e| at(format!("not JSON: {e}")))?;
        if !value.is_object() {
            return Err(at("expected a JSON object, one task per line".into()));
        }
        let toml_text = toml::to_string(&serde_json::json!({ "task": [value] }))
            .map_err(|e| at(format!("cannot read it as a task: {e}")))?;
        let one = parse_tasks(path, &toml_text).map_err(|e| at(e.message().to_owned()))?;
        for mut task in one.tasks {
            task.line = line_no;
            for entry in &mut task.section.entries {
                entry.origin.line = Some(line_no);
                entry.origin.column = Some(1);
            }
            prompts.add(&task, path)?;
            tasks.push(task);
        }
    }
    let reader = Reader {
        layer: Layer::Flag,
        path,
        dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
        text,
    };
    check_ids(&reader, &tasks)?;
    TaskFile {
        path: path.to_path_buf(),
        digest: Digest::of(text.as_bytes()),
        defaults: Section::default(),
        tasks,
    }
    .bounded()
}

/// What the tasks read so far hold: refused once they are more than a batch may run, or their
/// prompts more than [`PROMPTS_LIMIT`], before the rest is read.
#[derive(Default)]
struct Prompts {
    tasks: u64,
    bytes: usize,
}

impl Prompts {
    fn add(&mut self, task: &TaskSpec, path: &Path) -> Result<(), ConfigError> {
        self.tasks += 1;
        if self.tasks > MAX_TASKS {
            let more = format!("more than {}", crate::format::plural(MAX_TASKS, "task"));
            return Err(too_many(path, &more));
        }
        self.bytes = self.bytes.saturating_add(task.prompt.len());
        if self.bytes > PROMPTS_LIMIT {
            let message = format!(
                "the prompts up to the task `{}` hold more than {} MiB together: keep each prompt short, or split the file",
                task.id,
                PROMPTS_LIMIT / (1024 * 1024)
            );
            return Err(ConfigError::at_line(path, task.line, 1, message));
        }
        Ok(())
    }
}

/// A file that makes `total` (`12,000 tasks`), more than [`MAX_TASKS`].
fn too_many(path: &Path, total: &str) -> ConfigError {
    ConfigError::file(
        path,
        format!(
            "makes {total} once `repeat` and `agents` made their copies, more than the {} one batch may run: split it into task files of at most {} tasks",
            crate::format::thousands(MAX_TASKS),
            crate::format::thousands(MAX_TASKS)
        ),
    )
}

fn task(
    reader: &Reader<'_>,
    item: &Spanned<DeValue<'_>>,
    table: &DeTable<'_>,
) -> Result<TaskSpec, ConfigError> {
    let start = item.span().start;
    let (line, _) = super::line_column(reader.text, start);
    let id = match find(table, "id") {
        Some((key, value)) => {
            let id = string(reader, key, value)?;
            valid_id(&id).map_err(|m| reader.error(value.span().start, m))?;
            id
        }
        None => return Err(reader.error(start, "the task has no `id`".into())),
    };
    let prompt = match (find(table, "prompt"), find(table, "prompt_file")) {
        (Some((key, value)), None) => string(reader, key, value)?,
        (None, Some((key, value))) => {
            let name = string(reader, key, value)?;
            let file = files::inside(&reader.dir, &name).map_err(|why| {
                let message = format!(
                    "`prompt_file` `{}` must be a file beside the task file: {why}",
                    name.escape_debug()
                );
                reader.error(value.span().start, message)
            })?;
            read_prompt(&file).map_err(|m| reader.error(value.span().start, m))?
        }
        (Some(_), Some((key, _))) => {
            let message = format!("the task `{id}` has both `prompt` and `prompt_file`");
            return Err(reader.error(key.span().start, message));
        }
        (None, None) => {
            let message = format!("the task `{id}` has no `prompt` (or `prompt_file`)");
            return Err(reader.error(start, message));
        }
    };
    if prompt.trim().is_empty() {
        return Err(reader.error(start, format!("the task `{id}` has an empty prompt")));
    }
    Ok(TaskSpec {
        section: section(reader, table, false)?,
        id,
        prompt,
        line,
    })
}

/// The settings and batch keys of `[defaults]` or a task.
fn section(
    reader: &Reader<'_>,
    table: &DeTable<'_>,
    defaults: bool,
) -> Result<Section, ConfigError> {
    let mut out = Section::default();
    for (key, value) in table {
        let name = key.get_ref().as_ref();
        match name {
            "id" | "prompt" | "prompt_file" if defaults => {
                let message = format!("`{name}` belongs in a [[task]], not in [defaults]");
                return Err(reader.error(key.span().start, message));
            }
            "id" | "prompt" | "prompt_file" => {}
            "setup" => out.setup = Some(string(reader, key, value)?),
            "setup_timeout" => out.setup_timeout = Some(setup_timeout(reader, key, value)?),
            "include" => out.include = Some(strings(reader, key, value)?),
            "repeat" => {
                let n = whole(reader, key, value)?;
                out.repeat = Some(n);
            }
            "agents" if matches!(value.get_ref(), DeValue::Array(_)) => {
                out.agents = Some(fan_out(reader, key, value)?);
            }
            "agents" => reader.agents(key, value, &mut out.entries)?,
            "runs_dir" => {
                let message =
                    "`runs_dir` is the batch's, not a task's: pass --runs-dir to runbook batch";
                return Err(reader.error(key.span().start, message.into()));
            }
            "env" => {
                let message = "`env` is set in runbook.toml or .env, not per task";
                return Err(reader.error(key.span().start, message.into()));
            }
            _ if keys::find(name).is_some() => reader.top_level(key, value, &mut out.entries)?,
            _ => {
                let names = keys::all()
                    .filter(|k| !k.per_agent)
                    .map(|k| k.name)
                    .chain(TASK_KEYS);
                let message = match suggest::did_you_mean(name, names) {
                    Some(meant) => format!("unknown key `{name}`; {meant}"),
                    None => format!(
                        "unknown key `{name}`; a task takes {} and the run settings of `runbook config --keys`",
                        TASK_KEYS.join(", ")
                    ),
                };
                return Err(reader.error(key.span().start, message));
            }
        }
    }
    Ok(out)
}

fn find<'t, 'i>(
    table: &'t DeTable<'i>,
    name: &str,
) -> Option<(&'t SpannedKey<'i>, &'t Spanned<DeValue<'i>>)> {
    table.iter().find(|(k, _)| k.get_ref().as_ref() == name)
}

fn string(
    reader: &Reader<'_>,
    key: &SpannedKey<'_>,
    value: &Spanned<DeValue<'_>>,
) -> Result<String, ConfigError> {
    match to_toml(value) {
        Ok(toml::Value::String(s)) => Ok(s),
        Ok(other) => Err(reader.error(
            value.span().start,
            format!(
                "`{}` must be a string, found a {}",
                key.get_ref(),
                other.type_str()
            ),
        )),
        Err(message) => Err(reader.error(value.span().start, message)),
    }
}

/// `setup_timeout`: a duration (`"10m"`, or a whole number of seconds).
fn setup_timeout(
    reader: &Reader<'_>,
    key: &SpannedKey<'_>,
    value: &Spanned<DeValue<'_>>,
) -> Result<std::time::Duration, ConfigError> {
    let toml = to_toml(value).map_err(|m| reader.error(value.span().start, m))?;
    super::value::Kind::Duration
        .read_toml(&toml, Path::new(""))
        .ok()
        .and_then(|v| match v {
            super::value::Value::Duration(d) => Some(d),
            _ => None,
        })
        .ok_or_else(|| {
            reader.error(
                value.span().start,
                format!(
                    "`{}` must be a duration such as \"90s\" or \"10m\", found {}",
                    key.get_ref(),
                    toml
                ),
            )
        })
}

fn strings(
    reader: &Reader<'_>,
    key: &SpannedKey<'_>,
    value: &Spanned<DeValue<'_>>,
) -> Result<Vec<String>, ConfigError> {
    let wrong = || {
        reader.error(
            value.span().start,
            format!("`{}` must be an array of strings", key.get_ref()),
        )
    };
    let Ok(toml::Value::Array(items)) = to_toml(value) else {
        return Err(wrong());
    };
    items
        .into_iter()
        .map(|item| match item {
            toml::Value::String(s) => Ok(s),
            _ => Err(wrong()),
        })
        .collect()
}

fn whole(
    reader: &Reader<'_>,
    key: &SpannedKey<'_>,
    value: &Spanned<DeValue<'_>>,
) -> Result<u32, ConfigError> {
    match to_toml(value) {
        Ok(toml::Value::Integer(n)) if (1..=i64::from(MAX_COPIES)).contains(&n) => {
            Ok(u32::try_from(n).unwrap_or(1))
        }
        _ => Err(reader.error(
            value.span().start,
            format!(
                "`{}` must be a whole number from 1 to {MAX_COPIES}",
                key.get_ref()
            ),
        )),
    }
}

/// `agents = ["claude:2", "codex"]`: each agent, and how many copies of the task it runs.
fn fan_out(
    reader: &Reader<'_>,
    key: &SpannedKey<'_>,
    value: &Spanned<DeValue<'_>>,
) -> Result<Vec<(AgentKind, u32)>, ConfigError> {
    let mut out = Vec::new();
    for item in strings(reader, key, value)? {
        let at = |m: String| reader.error(value.span().start, m);
        let (name, count) = match item.split_once(':') {
            Some((name, count)) => {
                let count = count
                    .trim()
                    .parse::<u32>()
                    .ok()
                    .filter(|n| (1..=MAX_COPIES).contains(n))
                    .ok_or_else(|| {
                        at(format!(
                            "`{item}`: the count after `:` must be a whole number from 1 to {MAX_COPIES}"
                        ))
                    })?;
                (name.trim(), count)
            }
            None => (item.trim(), 1),
        };
        let Some(agent) = agents().find(|a| agent_name(*a) == name) else {
            let message = match suggest::did_you_mean(name, agents().map(agent_name)) {
                Some(meant) => format!("unknown agent `{name}` in `agents`; {meant}"),
                None => format!(
                    "unknown agent `{name}` in `agents`; expected one of {}",
                    agent_names()
                ),
            };
            return Err(at(message));
        };
        if out.iter().any(|(a, _)| *a == agent) {
            return Err(at(format!(
                "`{name}` is named twice in `agents`: name it once, with its count (`{name}:2`)"
            )));
        }
        out.push((agent, count));
    }
    if out.is_empty() {
        return Err(reader.error(value.span().start, "`agents` is empty".into()));
    }
    Ok(out)
}

/// A task id: letters, digits, `-`, `_` and `.`, as a branch and a directory name can hold (git's
/// rules for a ref: no `..`, not starting with `.` or `-`, not ending with `.` or `.lock`).
pub(crate) fn valid_id(id: &str) -> Result<(), String> {
    let ok = !id.is_empty()
        && id.len() <= 64
        && !id.starts_with(['.', '-'])
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
        && !id.contains("..")
        && !id.ends_with('.')
        && !id.to_ascii_lowercase().ends_with(".lock");
    if ok {
        Ok(())
    } else {
        Err(format!(
            "`{}` is not a task id: use up to 64 letters, digits, `-`, `_` and `.` (example: fix-login)",
            id.escape_debug()
        ))
    }
}

fn check_ids(reader: &Reader<'_>, tasks: &[TaskSpec]) -> Result<(), ConfigError> {
    for (i, task) in tasks.iter().enumerate() {
        if tasks[..i].iter().any(|t| t.id == task.id) {
            return Err(ConfigError::at_line(
                reader.path,
                task.line,
                1,
                format!("the task id `{}` is used twice", task.id),
            ));
        }
    }
    Ok(())
}

fn read_prompt(file: &Path) -> Result<String, String> {
    match files::read_optional(file, files::CONFIG_LIMIT, Links::Follow) {
        Ok(Some(bytes)) => {
            String::from_utf8(bytes).map_err(|_| format!("{}: expected UTF-8 text", file.display()))
        }
        Ok(None) => Err(format!("{}: no such prompt file", file.display())),
        Err(e) => Err(format!("{}: cannot read it: {e}", file.display())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::keys;

    fn parse(text: &str) -> Result<TaskFile, String> {
        parse_tasks(Path::new("/b/tasks.toml"), text).map_err(|e| e.to_string())
    }

    #[test]
    fn defaults_and_tasks_hold_run_settings_and_batch_keys() {
        let file = parse(
            "[defaults]\nmodel = \"m\"\nmax_cost = 1.5\nsetup = \"npm ci\"\ninclude = [\".env\"]\n\
             [defaults.agents.opencode]\nbin = \"/x/oc\"\n\
             [[task]]\nid = \"a\"\nprompt = \"do a\"\ntimeout = \"5m\"\nrepeat = 2\n\
             [[task]]\nid = \"b\"\nprompt = \"do b\"\nagents = [\"claude:2\", \"codex\"]\n",
        )
        .unwrap();
        assert_eq!(file.defaults.setup.as_deref(), Some("npm ci"));
        assert_eq!(file.defaults.include, Some(vec![".env".to_owned()]));
        assert_eq!(file.tasks.len(), 2);
        assert_eq!(file.tasks[0].section.repeat, Some(2));
        assert_eq!(
            file.tasks[1].section.agents,
            Some(vec![(AgentKind::Claude, 2), (AgentKind::Codex, 1)])
        );
        let a = file.entries_of("a").unwrap();
        let mut names: Vec<String> = a.iter().map(|e| e.slot.name()).collect();
        names.sort();
        assert_eq!(
            names,
            ["agents.opencode.bin", "max_cost", "model", "timeout"]
        );
        let timeout = a.iter().find(|e| *e.slot.key == keys::TIMEOUT.key).unwrap();
        assert_eq!(timeout.origin.layer, Layer::Flag);
        assert_eq!(timeout.origin.file.as_deref(), Some("/b/tasks.toml"));
        assert_eq!(
            (timeout.origin.line, timeout.origin.column),
            (Some(11), Some(1))
        );
    }

    #[test]
    fn a_wrong_key_or_value_is_named_with_its_line_and_column() {
        let err = parse("[[task]]\nid = \"a\"\nprompt = \"x\"\nmodle = \"m\"\n").unwrap_err();
        assert!(
            err.starts_with("/b/tasks.toml:4:1: unknown key `modle`"),
            "{err}"
        );
        assert!(err.contains("did you mean `model`"), "{err}");
        let err = parse("[[task]]\nid = \"a\"\nprompt = \"x\"\nmax_cost = \"lots\"\n").unwrap_err();
        assert!(err.starts_with("/b/tasks.toml:4:12:"), "{err}");
        let err = parse("[defualts]\n").unwrap_err();
        assert!(err.contains("did you mean `defaults`"), "{err}");
        let err = parse("[[task]]\nprompt = \"x\"\n").unwrap_err();
        assert!(err.contains("has no `id`"), "{err}");
        let err = parse("[[task]]\nid = \"a b\"\nprompt = \"x\"\n").unwrap_err();
        assert!(err.contains("is not a task id"), "{err}");
        for id in [
            "fix.", "a.lock", "a.LOCK", "..a", "-a", ".a", "a..b", "a/b", "a:b", "a~1", "a^",
            "a@{1}", "a\\nb",
        ] {
            let err = parse(&format!("[[task]]\nid = \"{id}\"\nprompt = \"x\"\n")).unwrap_err();
            assert!(err.contains("is not a task id"), "{id}: {err}");
        }
        let err =
            parse("[[task]]\nid = \"a\"\nprompt = \"x\"\n[[task]]\nid = \"a\"\nprompt = \"y\"\n")
                .unwrap_err();
        assert!(
            err.starts_with("/b/tasks.toml:4:1: the task id `a` is used twice"),
            "{err}"
        );
        let err =
            parse("[[task]]\nid = \"a\"\nprompt = \"x\"\nagents = [\"claud:2\"]\n").unwrap_err();
        assert!(err.contains("did you mean `claude`"), "{err}");
        let err =
            parse("[[task]]\nid = \"a\"\nprompt = \"x\"\nagents = [\"codex\", \"codex:2\"]\n")
                .unwrap_err();
        assert!(err.contains("`codex` is named twice in `agents`"), "{err}");
        let err = parse("[[task]]\nid = \"a\"\nprompt = \"x\"\nrepeat = 0\n").unwrap_err();
        assert!(err.contains("from 1 to 100"), "{err}");
        let err = parse("[[task]]\nid = \"a\"\n").unwrap_err();
        assert!(err.contains("has no `prompt`"), "{err}");
    }

    #[test]
    fn the_total_is_counted_from_repeat_and_agents_and_a_file_past_the_cap_is_refused() {
        let file = parse(
            "[defaults]\nrepeat = 3\n[[task]]\nid = \"a\"\nprompt = \"x\"\n\
             [[task]]\nid = \"b\"\nprompt = \"y\"\nagents = [\"claude:2\", \"codex\"]\n\
             [[task]]\nid = \"c\"\nprompt = \"z\"\nrepeat = 1\n",
        )
        .unwrap();
        assert_eq!(file.total(), Some(3 + 9 + 1));
        // 2 tasks of 100 × 50 copies: exactly the cap, then one past it.
        let task = |id: &str, n: u32| {
            format!(
                "[[task]]\nid = \"{id}\"\nprompt = \"x\"\nrepeat = 100\nagents = [\"codex:{n}\"]\n"
            )
        };
        assert!(parse(&(task("a", 50) + &task("b", 50))).is_ok());
        let err =
            parse(&(task("a", 50) + &task("b", 50) + "[[task]]\nid = \"c\"\nprompt = \"x\"\n"))
                .unwrap_err();
        assert_eq!(
            err,
            "/b/tasks.toml: makes 10,001 tasks once `repeat` and `agents` made their copies, more than the 10,000 one batch may run: split it into task files of at most 10,000 tasks"
        );
    }

    #[test]
    fn prompt_files_read_past_their_limit_together_are_refused_at_the_task_that_crossed_it() {
        let dir = tempfile::tempdir().unwrap();
        let big = "x".repeat(1024 * 1024 - 1) + "\n";
        #[allow(clippy::disallowed_methods, reason = "a test's fixture")]
        std::fs::write(dir.path().join("big.md"), &big).unwrap();
        let tasks: String = (0..70)
            .map(|n| format!("[[task]]\nid = \"t{n}\"\nprompt_file = \"big.md\"\n"))
            .collect();
        let path = dir.path().join("tasks.toml");
        let err = parse_tasks(&path, &tasks).unwrap_err().to_string();
        assert!(
            err.contains(":193:1: the prompts up to the task `t64` hold more than 64 MiB together"),
            "{err}"
        );
    }

    #[test]
    fn json_lines_are_tasks_and_errors_name_the_line() {
        let path = Path::new("/b/tasks.jsonl");
        let file = parse_json_lines(
            path,
            "{\"id\":\"a\",\"prompt\":\"x\",\"model\":\"m\"}\n\n{\"id\":\"b\",\"prompt\":\"y\"}\n",
        )
        .unwrap();
        assert_eq!(file.tasks.len(), 2);
        assert_eq!(file.tasks[1].line, 3);
        let model = &file.entries_of("a").unwrap()[0];
        assert_eq!(model.origin.line, Some(1));
        let err = parse_json_lines(
            path,
            "{\"id\":\"a\",\"prompt\":\"x\"}\n{\"id\":\"b\",\"prompt\":\"y\",\"tiemout\":\"1m\"}\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.starts_with("/b/tasks.jsonl:2:1: unknown key `tiemout`"),
            "{err}"
        );
        let err = parse_json_lines(path, "[1]\n").unwrap_err().to_string();
        assert!(err.contains(":1:1: expected a JSON object"), "{err}");
    }
}
