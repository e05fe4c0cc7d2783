//! `runbook run`: start the agent on a task, supervise it, and leave a receipt.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;

use crate::agent::{Adapter, AgentKind, Generic, Invocation, ParseContext, Permissions};
use crate::agent_env;
use crate::cli::RunArgs;
use crate::config::{self, Config, Flags, Setting, Value};
use crate::consumer::{Consumer, Dispatcher};
use crate::event::{EventKind, ExitInfo, Limits, Outcome, RunInfo, SCHEMA_VERSION, Turn, TurnKind};
use crate::exit::{Error, ExitStatus};
use crate::provenance::{Layer, SettingRecord};
use crate::receipt::ReceiptWriter;
use crate::redact::Redactor;
use crate::render;
use crate::rundir::{self, RunDir};
use crate::store::EventLog;
use crate::supervisor::{self, RawLogs, Signals, TurnSpec, millis};
use crate::term::ColorChoice;

pub(crate) async fn run(
    args: RunArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    let prompts: Vec<&str> = std::iter::once(args.prompt.as_str())
        .chain(args.then.iter().map(String::as_str))
        .collect();
    if prompts.iter().any(|p| p.trim().is_empty()) {
        return Err(
            Error::Usage("the prompt is empty: say what the agent should do".to_owned()).into(),
        );
    }
    let cwd = resolve_cwd(args.workspace.cwd.as_deref())?;
    // Everything that can be wrong with the configuration is found before anything starts.
    let config = config::load(&cwd, global.values().iter().chain(args.options.values()))?;
    let agent_env = agent_env::load(&config, &args.workspace.env_files)?;
    let agent = resolve_agent(&config)?;
    let adapter = agent.adapter;
    let model: Option<String> = config.get("model");
    let permissions: Permissions = config.required("permissions");
    adapter
        .preflight(&Invocation {
            prompt: &args.prompt,
            model: model.as_deref(),
            extra_args: &agent.extra_args,
            resume_session: None,
            permissions,
        })
        .map_err(Error::Usage)?;
    let inactivity_timeout: Duration = config.required("inactivity_timeout");
    let kill_grace: Duration = config.required("kill_grace");
    let finish_grace: Duration = config.required("finish_grace");
    let timeout: Option<Duration> = config.get("timeout");
    let max_cost: Option<f64> = config.get("max_cost");
    let color: ColorChoice = config.required("color");
    let runs_dir = rundir::runs_dir(&config)?;

    // Before anything is started, so that a Ctrl-C from here on is runbook's to handle.
    let mut signals = Signals::install().context("cannot install signal handlers")?;
    supervisor::become_subreaper();

    let started = SystemTime::now();
    let run_dir = RunDir::create(&runs_dir, started)?;
    let redactor = Redactor::for_agent(agent_env.values());

    let mut consumers: Vec<Box<dyn Consumer>> = vec![
        Box::new(EventLog::new(run_dir.events.try_clone()?)),
        Box::new(ReceiptWriter::new(&run_dir.path)),
    ];
    consumers.extend(render::views(color, args.json, args.verbosity));
    let mut dispatch = Dispatcher::new(consumers);

    let limits = Limits {
        inactivity_timeout_ms: millis(inactivity_timeout),
        kill_grace_ms: millis(kill_grace),
        timeout_ms: timeout.map(millis),
        max_cost_usd: max_cost,
    };
    dispatch.emit_now(
        started,
        EventKind::RunStarted(RunInfo {
            schema_version: SCHEMA_VERSION,
            run_id: run_dir.id.clone(),
            runbook_version: env!("CARGO_PKG_VERSION").to_owned(),
            agent: adapter.name().to_owned(),
            model: model.clone(),
            prompt: redactor.str(&args.prompt).into_owned(),
            cwd: cwd.display().to_string(),
            run_dir: run_dir.path.display().to_string(),
            pid: std::process::id(),
            pid_start: crate::procfs::stat(std::process::id() as i32).map(|s| s.start),
            limits,
            settings: redact_records(config.records(), &redactor),
            env: agent_env.records(),
        }),
    );

    let turn_limits = supervisor::Limits {
        inactivity: inactivity_timeout,
        grace: kill_grace,
        deadline: timeout.map(|t| tokio::time::Instant::now() + t),
        max_cost,
        finish_grace,
    };
    let parse = ParseContext {
        cwd: cwd.clone(),
        model: model.clone(),
        prices: Arc::new(config.prices()),
    };
    let mut ending = (Outcome::AgentError, String::new(), ExitInfo::default());
    for (index, prompt) in prompts.iter().enumerate() {
        let resume = if index == 0 {
            None
        } else {
            match dispatch.stats().session_id.clone() {
                Some(id) => Some(id),
                None => {
                    ending.1 =
                        "the agent announced no session, so there is none to continue".to_owned();
                    ending.0 = Outcome::AgentError;
                    break;
                }
            }
        };
        let inv = Invocation {
            prompt,
            model: model.as_deref(),
            extra_args: &agent.extra_args,
            resume_session: resume.as_deref(),
            permissions,
        };
        // The configured variables, then what the invocation itself needs.
        let mut env = agent_env.pairs();
        env.extend(adapter.env(&inv));
        let spec = TurnSpec {
            program: &agent.program,
            args: adapter.args(&inv),
            cwd: &cwd,
            adapter,
            parse: parse.clone(),
            env,
            turn: Turn {
                index: index as u32,
                kind: if index == 0 {
                    TurnKind::Start
                } else {
                    TurnKind::Resume
                },
            },
            probe_version: index == 0 && !adapter.version_args().is_empty(),
        };
        let logs = RawLogs {
            stdout: &run_dir.stdout,
            stderr: &run_dir.stderr,
        };
        ending = match supervisor::run_turn(
            spec,
            turn_limits,
            logs,
            &redactor,
            &mut dispatch,
            &mut signals,
        )
        .await
        {
            Ok(end) => (end.outcome, end.message, end.exit),
            // The agent could not be started at all: still a finished run with a receipt.
            Err(e) => (Outcome::AgentError, format!("{e:#}"), ExitInfo::default()),
        };
        if ending.0 != Outcome::Completed {
            break;
        }
    }
    let (outcome, message, exit) = ending;

    let duration_ms = millis(started.elapsed().unwrap_or_default());
    dispatch.emit_now(
        SystemTime::now(),
        EventKind::RunFinished {
            outcome,
            message,
            duration_ms,
            exit,
        },
    );
    for failure in dispatch.close() {
        #[expect(
            clippy::print_stderr,
            reason = "a consumer failed; the terminal view may be the one that did"
        )]
        {
            eprintln!("warning: {failure}");
        }
    }
    Ok(ExitStatus::from_outcome(outcome))
}

/// The agent to run: its adapter, its binary, and the arguments that come with it.
struct Agent {
    adapter: &'static dyn Adapter,
    program: PathBuf,
    extra_args: Vec<String>,
}

/// The agent to run: `agent_cmd` (a command that prints universal events) when it is set, else
/// the `agent` with its `bin` and `args`.
fn resolve_agent(config: &Config) -> Result<Agent, Error> {
    let agent: AgentKind = config.required("agent");
    let args = config.agent_setting(agent, "args");
    let Some(cmd) = config.get::<String>("agent_cmd") else {
        let adapter = agent.adapter();
        return Ok(Agent {
            adapter,
            program: resolve_program(adapter, config.agent_setting(agent, "bin"))?,
            extra_args: config.agent_get(agent, "args").unwrap_or_default(),
        });
    };
    let given_by = config.setting("agent_cmd").given_by();
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
    if args.origin.layer == Layer::Flag {
        extra_args.extend(
            config
                .agent_get::<Vec<String>>(agent, "args")
                .unwrap_or_default(),
        );
    }
    Ok(Agent {
        adapter: &Generic,
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
fn resolve_program(adapter: &dyn Adapter, bin: &Setting) -> Result<PathBuf, Error> {
    let candidate = match &bin.value {
        Some(Value::Path(path)) => path.clone(),
        _ => PathBuf::from(adapter.program()),
    };
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

/// Setting values can hold a secret too (an argument with a token in it).
fn redact_records(mut records: Vec<SettingRecord>, redactor: &Redactor) -> Vec<SettingRecord> {
    for r in &mut records {
        if let Ok(masked) = serde_json::from_str(&redactor.str(&r.value.to_string())) {
            r.value = masked;
        }
    }
    records
}
