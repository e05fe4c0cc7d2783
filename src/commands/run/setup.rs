//! What a run needs, resolved before anything starts: the configuration, the agent, its
//! environment and the limits. Every mistake in them is a usage error found here.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;

use super::repair_policy::{Repair, Template};

use crate::agent::{Adapter, AgentKind, Generic, Invocation, ParseContext, Permissions, acp};
use crate::agent_env::{self, AgentEnv};
use crate::cli::RunArgs;
use crate::config::tasks::TaskFile;
use crate::config::{self, Config, Flags, ObserverSpec, Setting, Value, keys};
use crate::event::{GitStart, Limits, RunInfo, SCHEMA_VERSION};
use crate::exit::Error;
use crate::provenance::{Layer, SettingRecord};
use crate::redact::Redactor;
use crate::rundir::RunDir;
use crate::supervisor::check::Check;
use crate::term::ColorChoice;

/// Everything settled about a run before it starts.
pub(super) struct Setup {
    pub cwd: PathBuf,
    pub config: Config,
    pub agent: Agent,
    pub agent_env: AgentEnv,
    /// The model asked for (`-m`, the `model` setting); the agent chooses when `None`.
    pub model: Option<String>,
    /// When none was asked for: the model the agent's own configuration names, and its file.
    pub configured_model: Option<(String, PathBuf)>,
    pub permissions: Permissions,
    pub limits: Limits,
    /// How long a permission request over ACP waits for a person's key.
    pub permission_timeout: Duration,
    pub plan: bool,
    /// The checks to run once the task completed, in order; empty: none.
    pub checks: Vec<Check>,
    pub repair: Repair,
    /// Whether a turn that stalled on refused permissions gets one more pass.
    pub retry_denied: bool,
    /// What to do about an agent going round in circles (`--stuck`), and when.
    pub stuck: crate::stuck::Mode,
    pub stuck_thresholds: crate::stuck::Thresholds,
    /// The programs that get every event: `[[observers]]`, then `--on-event`.
    pub observers: Vec<ObserverSpec>,
    /// The file or FIFO every event goes to as well.
    pub events_to: Option<PathBuf>,
    /// Where the run is uploaded once it has ended (`--upload`).
    pub upload: Option<crate::bucket::Bucket>,
    pub color: ColorChoice,
    pub runs_dir: PathBuf,
    /// What the sandbox asks for (`--sandbox`), and what enforces it; `None`: no sandbox.
    pub sandbox: Option<(crate::sandbox::Policy, crate::sandbox::By)>,
    /// The sandbox as made into rules, once the run's directory exists.
    pub sandbox_record: Option<crate::event::Sandbox>,
}

/// Checks a run as `args` describe it without starting anything (as `runbook batch` does for
/// each of its tasks, whose file `tasks` it read once): the agent it would run, its budget, and
/// where it would be uploaded.
pub(crate) fn preflight(
    args: &RunArgs,
    global: &Flags<config::Global>,
    tasks: &TaskFile,
) -> anyhow::Result<(&'static str, Option<f64>, Option<crate::bucket::Bucket>)> {
    let setup = Setup::resolve(args, global, false, Some(tasks))?;
    Ok((
        setup.agent.adapter.name(),
        setup.limits.max_cost_usd,
        setup.upload,
    ))
}

/// A batch's task (`--task-file`, `--task-id`) brings its own prompt: it replaces the one given.
/// The file is read unless it was already (`read`).
pub(crate) fn take_task_prompt(args: &mut RunArgs, read: Option<&TaskFile>) -> Result<(), Error> {
    let (Some(file), Some(id)) = (&args.task_file, &args.task_id) else {
        return Ok(());
    };
    let owned;
    let tasks = match read {
        Some(tasks) => tasks,
        None => {
            owned = config::tasks::read_tasks(file)?;
            &owned
        }
    };
    let task = tasks
        .tasks
        .iter()
        .find(|t| &t.id == id)
        .ok_or_else(|| Error::Usage(format!("{}: no task `{id}`", file.display())))?;
    args.prompt = task.prompt.clone();
    Ok(())
}

/// The agent to run: its adapter, its binary, and the arguments that come with it.
pub(crate) struct Agent {
    pub adapter: &'static dyn Adapter,
    pub program: PathBuf,
    pub extra_args: Vec<String>,
}

impl Setup {
    /// `ask`: a person at a terminal may be asked whether to trust the repository's files.
    /// `tasks`: the task file of `--task-file`, when it was read already.
    pub(super) fn resolve(
        args: &RunArgs,
        global: &Flags<config::Global>,
        ask: bool,
        tasks: Option<&TaskFile>,
    ) -> anyhow::Result<Self> {
        no_empty_prompt(args)?;
        let cwd = resolve_cwd(args.workspace.cwd.as_deref())?;
        // Everything that can be wrong with the configuration is found before anything starts.
        let flags = global
            .values()
            .iter()
            .chain(args.options.values())
            .chain(args.runs_dir.values());
        let config = load_config(args, &cwd, flags, tasks)?;
        let agent_env = agent_env::load(&config, &args.workspace.env_files)?;
        // What a repository's files would start or write takes effect only once they are trusted.
        let given = crate::trust::Given::from_env(args.trust);
        crate::trust::ensure(&config, &agent_env, &given, ask, args.no_checks)?;
        let mut agent = resolve_agent(&config)?;
        let model = config.get(&keys::MODEL);
        let permissions = config.value(&keys::PERMISSIONS);
        adapter_preflight(&agent, &args.prompt, model.as_deref(), permissions)?;
        let configured_model = model
            .is_none()
            .then(|| agent.adapter.configured_model(&agent_env.pairs()))
            .flatten();
        let limits = limits(&config);
        budget_can_hold(&config, &agent)?;
        let template = repair_template(&config)?;
        let mut sandbox =
            super::sandbox::policy(&config, agent.adapter, &agent_env.pairs(), (&cwd, &given))?;
        if let Some((policy, _)) = &mut sandbox {
            super::sandbox::own_server(agent.adapter, &mut agent.extra_args, policy);
        }
        Ok(Self {
            sandbox,
            sandbox_record: None,
            checks: if args.no_checks {
                Vec::new()
            } else {
                checks(
                    config.checks(),
                    &args.checks,
                    config.value(&keys::CHECK_TIMEOUT),
                )
            },
            repair: Repair::new(
                config.value(&keys::REPAIR_ATTEMPTS),
                limits.max_cost_usd,
                config.get(&keys::REPAIR_BUDGET),
                template,
            ),
            retry_denied: config.value(&keys::RETRY_DENIED),
            stuck: config.value(&keys::STUCK),
            stuck_thresholds: stuck_thresholds(&config),
            permission_timeout: config.value(&keys::PERMISSION_TIMEOUT),
            observers: observers(&config, &args.on_event),
            events_to: config.get(&keys::EVENTS_TO),
            upload: config
                .get(&keys::UPLOAD)
                .filter(|url| !url.is_empty())
                .map(|url| crate::bucket::open(&url))
                .transpose()?,
            limits,
            plan: config.value(&keys::PLAN),
            color: config.value(&keys::COLOR),
            runs_dir: crate::rundir::runs_dir(&config)?,
            cwd,
            agent,
            agent_env,
            model,
            configured_model,
            permissions,
            config,
        })
    }

    /// The model the agent will use, as far as runbook can know before it starts: the one asked
    /// for, else the one the agent's configuration names.
    pub(super) fn priced_model(&self) -> Option<&str> {
        self.model
            .as_deref()
            .or(self.configured_model.as_ref().map(|(m, _)| m.as_str()))
    }

    /// What the adapter's parser is told.
    pub(super) fn parse_context(&self) -> ParseContext {
        ParseContext {
            cwd: self.cwd.clone(),
            model: self.priced_model().map(str::to_owned),
            prices: Arc::new(self.config.prices()),
            inbox: None,
            told: None,
            sandboxed: self.config.value(&crate::config::keys::SANDBOX).is_some(),
            finishing: None,
        }
    }

    /// The run's identity and settings, for `run.started`; secrets masked.
    pub(super) fn run_info(
        &self,
        prompt: &str,
        name: Option<&str>,
        git: Option<GitStart>,
        run_dir: &RunDir,
        redactor: &Redactor,
    ) -> RunInfo {
        RunInfo {
            schema_version: SCHEMA_VERSION,
            run_id: run_dir.id.clone(),
            runbook_version: env!("CARGO_PKG_VERSION").to_owned(),
            agent: self.agent.adapter.name().to_owned(),
            model: self.priced_model().map(str::to_owned),
            model_file: self
                .configured_model
                .as_ref()
                .filter(|_| self.model.is_none())
                .map(|(_, file)| file.display().to_string()),
            prompt: redactor.str(prompt).into_owned(),
            cwd: self.cwd.display().to_string(),
            run_dir: run_dir.path.display().to_string(),
            name: name.map(|n| redactor.str(n).into_owned()),
            git: git.map(Box::new),
            pid: std::process::id(),
            pid_start: crate::linux::procfs::own_start(),
            limits: self.limits,
            settings: redact_records(self.config.records(), redactor),
            env: self.agent_env.records(),
            sandbox: self.sandbox_record.clone(),
        }
    }
}

/// A prompt (the task's or a `--then`) that says nothing is refused before anything starts.
fn no_empty_prompt(args: &RunArgs) -> Result<(), Error> {
    let mut prompts = std::iter::once(&args.prompt).chain(&args.then);
    if prompts.any(|p| p.trim().is_empty()) {
        let message = "the prompt is empty: say what the agent should do";
        return Err(Error::Usage(message.to_owned()));
    }
    Ok(())
}

/// The run's limits as configured.
fn limits(config: &Config) -> Limits {
    Limits {
        inactivity_timeout: config.value(&keys::INACTIVITY_TIMEOUT),
        kill_grace: config.value(&keys::KILL_GRACE),
        finish_grace: config.value(&keys::FINISH_GRACE),
        timeout: config.get(&keys::TIMEOUT),
        max_cost_usd: config.get(&keys::MAX_COST),
    }
}

/// A budget (`max_cost`, `repair_budget`) is refused for an agent that tells no cost: it could not
/// hold.
fn budget_can_hold(config: &Config, agent: &Agent) -> Result<(), Error> {
    let budget = [&keys::MAX_COST, &keys::REPAIR_BUDGET]
        .into_iter()
        .find(|key| config.get(*key).is_some());
    match budget {
        Some(key) if !agent.adapter.tells_cost() => {
            let given = config.setting(key).given_by();
            let cli = agent.adapter.cli();
            Err(Error::Usage(format!(
                "{given} cannot hold: {} tells no usage and no cost; run {} without `--via acp` to keep a budget",
                cli.program, cli.name
            )))
        }
        _ => Ok(()),
    }
}

/// The configured `repair_prompt`, checked.
fn repair_template(config: &Config) -> Result<Option<Template>, Error> {
    config
        .get(&keys::REPAIR_PROMPT)
        .map(|text| {
            Template::new(text).map_err(|why| {
                let given = config.setting(&keys::REPAIR_PROMPT).given_by();
                Error::Usage(format!("{given}: {why}"))
            })
        })
        .transpose()
}

/// The observers of `[[observers]]`, then those of `--on-event` (with `raw` as `on_event_raw`
/// says).
fn observers(config: &Config, on_event: &[String]) -> Vec<ObserverSpec> {
    let raw = config.value(&keys::ON_EVENT_RAW);
    let mut observers = config.get(&keys::OBSERVERS).unwrap_or_default();
    observers.extend(on_event.iter().map(|command| ObserverSpec {
        command: command.clone(),
        raw,
    }));
    observers
}

/// The configured checks with those of `--check` after them (one of the same name replaces the
/// configured one, in its place); each without a timeout of its own gets `timeout`.
fn checks(configured: Vec<Check>, given: &[Check], timeout: Duration) -> Vec<Check> {
    let mut checks = configured;
    for check in given {
        match checks.iter_mut().find(|c| c.name == check.name) {
            Some(same) => *same = check.clone(),
            None => checks.push(check.clone()),
        }
    }
    for check in &mut checks {
        check.timeout.get_or_insert(timeout);
    }
    checks
}

/// The agent to run: `agent_cmd` (a command that prints universal events) when it is set, else
/// the `agent` with its `bin` and `args`.
/// What the agent's adapter finds wrong with the run before it starts (a flag it cannot take).
fn adapter_preflight(
    agent: &Agent,
    prompt: &str,
    model: Option<&str>,
    permissions: Permissions,
) -> Result<(), Error> {
    agent
        .adapter
        .preflight(&Invocation {
            prompt,
            model,
            extra_args: &agent.extra_args,
            resume_session: None,
            permissions,
        })
        .map_err(Error::Usage)
}

/// The run's configuration: its files and flags, and a batch task's settings when it is one
/// (from its file, read here unless it was already: `read`).
fn load_config<'a>(
    args: &RunArgs,
    cwd: &Path,
    flags: impl IntoIterator<Item = &'a config::FlagValue>,
    read: Option<&TaskFile>,
) -> anyhow::Result<Config> {
    Ok(match (&args.task_file, &args.task_id) {
        (Some(file), Some(id)) => {
            let owned;
            let tasks = match read {
                Some(tasks) => tasks,
                None => {
                    owned = config::tasks::read_tasks(file).map_err(Error::from)?;
                    &owned
                }
            };
            let entries = tasks
                .entries_of(id)
                .ok_or_else(|| Error::Usage(format!("{}: no task `{id}`", file.display())))?;
            config::load_for_task(cwd, (file, tasks.digest, entries), flags)?
        }
        _ => config::load(cwd, flags)?,
    })
}

pub(crate) fn resolve_agent(config: &Config) -> Result<Agent, Error> {
    let agent = config.value(&keys::AGENT);
    let args = config.agent_setting(agent, &keys::ARGS);
    let via = config.value(&keys::VIA);
    let acp = match via.as_str() {
        "native" => false,
        "acp" => true,
        other => {
            let given_by = config.setting(&keys::VIA.0).given_by();
            let meant = config::suggest::did_you_mean(other, ["native", "acp"])
                .map(|meant| format!(" ({meant})"))
                .unwrap_or_default();
            return Err(Error::Usage(format!(
                "{given_by} is {other:?}; use native or acp{meant}"
            )));
        }
    };
    let acp_cmd = config.get(&keys::ACP_CMD);
    let (cmd, key, custom) = match (config.get(&keys::AGENT_CMD), acp_cmd) {
        (Some(cmd), None) => (
            Some(cmd),
            &keys::AGENT_CMD,
            &Generic as &'static dyn Adapter,
        ),
        (None, Some(cmd)) => (
            Some(cmd),
            &keys::ACP_CMD,
            &acp::CUSTOM as &'static dyn Adapter,
        ),
        (Some(_), Some(_)) => {
            return Err(Error::Usage(
                "--agent-cmd and --acp-cmd both name the agent's command; give one".to_owned(),
            ));
        }
        (None, None) => (None, &keys::AGENT_CMD, &Generic as &'static dyn Adapter),
    };
    if acp && config.get(&keys::AGENT_CMD).is_some() {
        return Err(Error::Usage(
            "--agent-cmd runs an agent that prints runbook's events, which has no ACP; use --acp-cmd for an ACP agent".to_owned(),
        ));
    }
    let Some(cmd) = cmd else {
        let adapter: &'static dyn Adapter = match (acp, agent) {
            (false, _) => agent.adapter(),
            (true, AgentKind::Opencode) => &acp::OPENCODE,
            (true, AgentKind::Claude) => &acp::CLAUDE,
            (true, AgentKind::Codex) => &acp::CODEX,
        };
        return Ok(Agent {
            adapter,
            program: resolve_program(adapter, config.agent_setting(agent, &keys::BIN))?,
            extra_args: config.agent_get(agent, &keys::ARGS).unwrap_or_default(),
        });
    };
    let given_by = config.setting(key).given_by();
    let words = shell_words::split(&cmd)
        .map_err(|e| Error::Usage(format!("{given_by} cannot be split into words: {e}")))?;
    let Some((first, rest)) = words.split_first() else {
        return Err(Error::Usage(format!(
            "{given_by} is empty: give the command that starts the agent"
        )));
    };
    let program = which::which(first).map_err(|_| Error::AgentNotFound {
        program: first.clone(),
        hint: format!("{given_by} names a program that is not on PATH or not executable"),
    })?;
    let mut extra_args = rest.to_vec();
    // The arguments after `--` go to the command too; an agent's configured ones are its own.
    if args.origin.layer == Layer::Flag && args.origin.file.is_none() {
        extra_args.extend(config.agent_get(agent, &keys::ARGS).unwrap_or_default());
    }
    Ok(Agent {
        adapter: custom,
        program,
        extra_args,
    })
}

pub(crate) fn resolve_cwd(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match flag {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    match dir.canonicalize() {
        Ok(dir) if dir.is_dir() => Ok(dir),
        _ => Err(Error::Usage(format!("--cwd {} is not a directory", dir.display())).into()),
    }
}

/// The agent binary: the agent's `bin` setting (a flag, a variable or a file), else the agent's
/// program on `PATH`.
pub(crate) fn resolve_program(adapter: &dyn Adapter, bin: &Setting) -> Result<PathBuf, Error> {
    let candidate = match &bin.value {
        Some(Value::Path(path)) => path.clone(),
        _ => PathBuf::from(adapter.program()),
    };
    if bin.value.is_some()
        && let Some(why) = not_a_program(&candidate)
    {
        return Err(Error::Usage(format!(
            "{} {} {why}: it must name {}'s executable",
            bin.given_by(),
            candidate.display(),
            adapter.program()
        )));
    }
    which::which(&candidate).map_err(|_| match bin.value {
        None => Error::AgentNotFound {
            program: format!("{} (looked on PATH)", adapter.program()),
            hint: adapter.install_hint().to_owned(),
        },
        Some(_) => Error::AgentNotFound {
            program: candidate.display().to_string(),
            hint: format!(
                "{} names a file that does not exist or is not executable; {}",
                bin.given_by(),
                adapter.install_hint()
            ),
        },
    })
}

/// Why a path that exists cannot be run as a program: a directory, or a file without execute
/// permission. `None` when it can be, or does not exist (which is said otherwise).
fn not_a_program(path: &Path) -> Option<&'static str> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::metadata(path).ok()?;
    if meta.is_dir() {
        Some("is a directory")
    } else if meta.permissions().mode() & 0o111 == 0 {
        Some("is not executable (`chmod +x` it)")
    } else {
        None
    }
}

/// Setting values can hold a secret too (an argument with a token in it).
fn redact_records(mut records: Vec<SettingRecord>, redactor: &Redactor) -> Vec<SettingRecord> {
    for r in &mut records {
        if let Ok(masked) = serde_json::from_str(&redactor.str(&r.value.to_string())) {
            r.value = masked;
        }
    }
    records
}

/// When each loop rule warns and stops, as configured (`stuck_*`).
pub(crate) fn stuck_thresholds(config: &Config) -> crate::stuck::Thresholds {
    crate::stuck::Thresholds::with_stops(crate::stuck::Stops {
        repeat: config.value(&keys::STUCK_REPEAT),
        same_failure: config.value(&keys::STUCK_SAME_FAILURE),
        same_error: config.value(&keys::STUCK_SAME_ERROR),
        ping_pong: config.value(&keys::STUCK_PING_PONG),
        monologue: config.value(&keys::STUCK_MONOLOGUE),
    })
}
