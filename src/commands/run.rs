//! `runbook run`: start the agent on a task, supervise it, and leave a receipt.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context as _;

use std::sync::Arc;

use crate::agent::{Adapter, Generic, Invocation, ParseContext};
use crate::cli::RunArgs;
use crate::consumer::{Consumer, Dispatcher};
use crate::event::{EventKind, ExitInfo, Limits, Outcome, RunInfo, SCHEMA_VERSION, Turn, TurnKind};
use crate::exit::{Error, ExitStatus};
use crate::prices::PriceTable;
use crate::receipt::ReceiptWriter;
use crate::redact::Redactor;
use crate::render;
use crate::rundir::{self, RunDir};
use crate::store::EventLog;
use crate::supervisor::{self, RawLogs, Signals, TurnSpec, millis};
use crate::term::ColorChoice;

pub(crate) async fn run(args: RunArgs, color: ColorChoice) -> anyhow::Result<ExitStatus> {
    let prompts: Vec<&str> = std::iter::once(args.prompt.as_str())
        .chain(args.then.iter().map(String::as_str))
        .collect();
    if prompts.iter().any(|p| p.trim().is_empty()) {
        return Err(
            Error::Usage("the prompt is empty: say what the agent should do".to_owned()).into(),
        );
    }
    let cwd = resolve_cwd(args.cwd.as_deref())?;
    let agent = resolve_agent(&args)?;
    let adapter = agent.adapter;
    adapter
        .preflight(&Invocation {
            prompt: &args.prompt,
            model: args.model.as_deref(),
            extra_args: &agent.extra_args,
            resume_session: None,
            permissions: args.permissions,
        })
        .map_err(Error::Usage)?;
    let runs_dir = rundir::runs_dir(args.runs_dir.path.as_deref())?;

    // Before anything is started, so that a Ctrl-C from here on is runbook's to handle.
    let mut signals = Signals::install().context("cannot install signal handlers")?;
    supervisor::become_subreaper();

    let started = SystemTime::now();
    let run_dir = RunDir::create(&runs_dir, started)?;
    let redactor = Redactor::from_env();

    let mut consumers: Vec<Box<dyn Consumer>> = vec![
        Box::new(EventLog::new(run_dir.events.try_clone()?)),
        Box::new(ReceiptWriter::new(&run_dir.path)),
    ];
    consumers.extend(render::views(color, args.json, args.verbosity));
    let mut dispatch = Dispatcher::new(consumers);

    let limits = Limits {
        inactivity_timeout_ms: millis(args.inactivity_timeout),
        kill_grace_ms: millis(args.kill_grace),
        timeout_ms: args.timeout.map(millis),
        max_cost_usd: args.max_cost,
    };
    dispatch.emit_now(
        started,
        EventKind::RunStarted(RunInfo {
            schema_version: SCHEMA_VERSION,
            run_id: run_dir.id.clone(),
            runbook_version: env!("CARGO_PKG_VERSION").to_owned(),
            agent: adapter.name().to_owned(),
            model: args.model.clone(),
            prompt: redactor.str(&args.prompt).into_owned(),
            cwd: cwd.display().to_string(),
            run_dir: run_dir.path.display().to_string(),
            pid: std::process::id(),
            pid_start: crate::procfs::stat(std::process::id() as i32).map(|s| s.start),
            limits,
        }),
    );

    let turn_limits = supervisor::Limits {
        inactivity: args.inactivity_timeout,
        grace: args.kill_grace,
        deadline: args.timeout.map(|t| tokio::time::Instant::now() + t),
        max_cost: args.max_cost,
        finish_grace: args.finish_grace,
    };
    let parse = ParseContext {
        cwd: cwd.clone(),
        model: args.model.clone(),
        prices: Arc::new(PriceTable::default()),
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
            model: args.model.as_deref(),
            extra_args: &agent.extra_args,
            resume_session: resume.as_deref(),
            permissions: args.permissions,
        };
        let spec = TurnSpec {
            program: &agent.program,
            args: adapter.args(&inv),
            cwd: &cwd,
            adapter,
            parse: parse.clone(),
            env: adapter.env(&inv),
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

fn resolve_agent(args: &RunArgs) -> Result<Agent, Error> {
    let Some(cmd) = &args.agent_cmd else {
        let adapter = args.agent.adapter();
        return Ok(Agent {
            adapter,
            program: resolve_program(adapter, args.agent_bin.as_deref())?,
            extra_args: args.agent_args.clone(),
        });
    };
    let words = shell_words::split(cmd)
        .map_err(|e| Error::Usage(format!("--agent-cmd cannot be split into words: {e}")))?;
    let Some((first, rest)) = words.split_first() else {
        return Err(Error::Usage(
            "--agent-cmd is empty: give the command that starts the agent".to_owned(),
        ));
    };
    let program = which::which(first).map_err(|_| Error::AgentNotFound {
        program: first.clone(),
        hint: "--agent-cmd names a program that is not on PATH or not executable".to_owned(),
    })?;
    let mut extra_args = rest.to_vec();
    extra_args.extend(args.agent_args.iter().cloned());
    Ok(Agent {
        adapter: &Generic,
        program,
        extra_args,
    })
}

fn resolve_cwd(flag: Option<&Path>) -> anyhow::Result<PathBuf> {
    let dir = match flag {
        Some(dir) => dir.to_path_buf(),
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    match dir.canonicalize() {
        Ok(dir) if dir.is_dir() => Ok(dir),
        _ => Err(Error::Usage(format!("--cwd {} is not a directory", dir.display())).into()),
    }
}

/// The agent binary: `--agent-bin`, else `RUNBOOK_<AGENT>_BIN`, else the agent's program on `PATH`.
fn resolve_program(adapter: &dyn Adapter, flag: Option<&Path>) -> Result<PathBuf, Error> {
    let from_env = std::env::var_os(adapter.bin_env())
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let (candidate, source) = match (flag, from_env) {
        (Some(p), _) => (p.to_path_buf(), "--agent-bin"),
        (None, Some(p)) => (p, adapter.bin_env()),
        (None, None) => (PathBuf::from(adapter.program()), "PATH"),
    };
    which::which(&candidate).map_err(|_| {
        if source == "PATH" {
            Error::AgentNotFound {
                program: format!("{} (looked on PATH)", adapter.program()),
                hint: adapter.install_hint().to_owned(),
            }
        } else {
            Error::AgentNotFound {
                program: candidate.display().to_string(),
                hint: format!(
                    "{source} names a file that does not exist or is not executable; {}",
                    adapter.install_hint()
                ),
            }
        }
    })
}
