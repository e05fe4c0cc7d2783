//! `runbook run`: start the agent on a task, supervise it, and leave a receipt.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context as _;

use crate::agent::{Adapter, Invocation};
use crate::cli::RunArgs;
use crate::consumer::{Consumer, Dispatcher};
use crate::event::{EventKind, ExitInfo, Limits, Outcome, RunInfo, SCHEMA_VERSION, Turn};
use crate::exit::{Error, ExitStatus};
use crate::receipt::ReceiptWriter;
use crate::redact::Redactor;
use crate::render;
use crate::rundir::{self, RunDir};
use crate::store::EventLog;
use crate::supervisor::{self, RawLogs, Signals, TurnSpec, millis};
use crate::term::ColorChoice;

pub(crate) async fn run(args: RunArgs, color: ColorChoice) -> anyhow::Result<ExitStatus> {
    let adapter = args.agent.adapter();
    if args.prompt.trim().is_empty() {
        return Err(
            Error::Usage("the prompt is empty: say what the agent should do".to_owned()).into(),
        );
    }
    let cwd = resolve_cwd(args.cwd.as_deref())?;
    let program = resolve_program(adapter, args.agent_bin.as_deref())?;
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

    let spec = TurnSpec {
        program: &program,
        args: adapter.args(&Invocation {
            prompt: &args.prompt,
            model: args.model.as_deref(),
            extra_args: &args.agent_args,
            resume_session: None,
        }),
        cwd: &cwd,
        adapter,
        turn: Turn::FIRST,
        probe_version: true,
    };
    let turn_limits = supervisor::Limits {
        inactivity: args.inactivity_timeout,
        grace: args.kill_grace,
        deadline: args.timeout.map(|t| tokio::time::Instant::now() + t),
        max_cost: args.max_cost,
    };
    let logs = RawLogs {
        stdout: &run_dir.stdout,
        stderr: &run_dir.stderr,
    };
    let (outcome, message, exit) = match supervisor::run_turn(
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
