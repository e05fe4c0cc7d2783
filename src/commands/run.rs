//! `runbook run`: start the agent on a task, supervise it, and leave a receipt.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use std::io::Write as _;

use anyhow::Context as _;

use crate::agent::{Adapter, AgentKind, Generic, Invocation, ParseContext, Permissions};
use crate::agent_env;
use crate::cli::RunArgs;
use crate::config::{self, Config, Flags, Setting, Value};
use crate::consumer::{Consumer, Dispatcher};
use crate::event::{
    DecidedBy, Decision, EventKind, ExitInfo, Limits, Outcome, PlanDecision, RunInfo,
    SCHEMA_VERSION, Turn, TurnKind,
};
use crate::exit::{Error, ExitStatus};
use crate::plan;
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
    let plan: bool = config.required("plan");
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
        Box::new(plan::PlanFile::new(&run_dir.path)),
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
    let mut session = Session {
        agent: &agent,
        model: model.as_deref(),
        cwd: &cwd,
        parse: ParseContext {
            cwd: cwd.clone(),
            model: model.clone(),
            prices: Arc::new(config.prices()),
        },
        env: agent_env.pairs(),
        limits: turn_limits,
        run_dir: &run_dir,
        redactor: &redactor,
        dispatch: &mut dispatch,
        signals: &mut signals,
        turns: 0,
    };
    let plan_mode = PlanMode {
        plan_only: args.plan_only,
        ask: !args.yes && !args.json && !args.plan_only && prompt_possible(),
        max_revisions: args.max_revisions,
    };
    let mut ending = if plan || args.plan_only {
        planned(&mut session, &args.prompt, permissions, &plan_mode).await
    } else {
        session.turn(&args.prompt, permissions).await
    };
    for prompt in &args.then {
        if ending.0 != Outcome::Completed || args.plan_only {
            break;
        }
        ending = session.turn(prompt, permissions).await;
    }
    let (outcome, message, exit) = ending;
    let plan_text = dispatch.totals().final_text.clone();

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
    // `--plan-only`: the plan is the result (with --json it is the `plan.proposed` event).
    if args.plan_only && !args.json && outcome == Outcome::Completed {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{}", plan_text.trim_end())?;
    }
    Ok(ExitStatus::from_outcome(outcome))
}

/// How a turn or a run ended: outcome, message, the agent's exit.
type Ending = (Outcome, String, ExitInfo);

/// The turns of one run: each is the same agent, continuing the session of the one before.
struct Session<'a> {
    agent: &'a Agent,
    model: Option<&'a str>,
    cwd: &'a Path,
    parse: ParseContext,
    /// The configured variables for the agent.
    env: Vec<(String, String)>,
    limits: supervisor::Limits,
    run_dir: &'a RunDir,
    redactor: &'a Redactor,
    dispatch: &'a mut Dispatcher,
    signals: &'a mut Signals,
    turns: u32,
}

impl Session<'_> {
    /// Runs the next turn: the first starts the agent's session, the others resume it.
    async fn turn(&mut self, prompt: &str, permissions: Permissions) -> Ending {
        let index = self.turns;
        self.turns += 1;
        let resume = if index == 0 {
            None
        } else {
            match self.dispatch.totals().session_id.clone() {
                Some(id) => Some(id),
                None => {
                    return (
                        Outcome::AgentError,
                        "the agent announced no session, so there is none to continue".to_owned(),
                        ExitInfo::default(),
                    );
                }
            }
        };
        let adapter = self.agent.adapter;
        let inv = Invocation {
            prompt,
            model: self.model,
            extra_args: &self.agent.extra_args,
            resume_session: resume.as_deref(),
            permissions,
        };
        let spec = TurnSpec {
            program: &self.agent.program,
            args: adapter.args(&inv),
            cwd: self.cwd,
            adapter,
            parse: self.parse.clone(),
            // The configured variables, then what the invocation itself needs.
            env: self.env.iter().cloned().chain(adapter.env(&inv)).collect(),
            turn: Turn {
                index,
                kind: if index == 0 {
                    TurnKind::Start
                } else {
                    TurnKind::Resume
                },
            },
            probe_version: index == 0 && !adapter.version_args().is_empty(),
        };
        let logs = RawLogs {
            stdout: &self.run_dir.stdout,
            stderr: &self.run_dir.stderr,
        };
        match supervisor::run_turn(
            spec,
            self.limits,
            logs,
            self.redactor,
            self.dispatch,
            self.signals,
        )
        .await
        {
            Ok(end) => (end.outcome, end.message, end.exit),
            // The agent could not be started at all: still a finished run with a receipt.
            Err(e) => (Outcome::AgentError, format!("{e:#}"), ExitInfo::default()),
        }
    }

    fn emit(&mut self, kind: EventKind) {
        self.dispatch.emit_now(SystemTime::now(), kind);
    }
}

/// How `--plan` goes.
struct PlanMode {
    /// Stop once the plan is made.
    plan_only: bool,
    /// Ask the person at the terminal (else execute without asking).
    ask: bool,
    max_revisions: u32,
}

/// `--plan`: read-only planning turns until the plan is approved, then the execution turn.
async fn planned(
    session: &mut Session<'_>,
    task: &str,
    permissions: Permissions,
    mode: &PlanMode,
) -> Ending {
    let before = plan::Snapshot::take(session.cwd);
    let mut prompt = plan::plan_prompt(task);
    let mut revision = 0;
    loop {
        let ending = session.turn(&prompt, Permissions::ReadOnly).await;
        if ending.0 != Outcome::Completed {
            return ending;
        }
        let changed = before.changes(&plan::Snapshot::take(session.cwd));
        if !changed.is_empty() {
            let list: Vec<String> = changed.iter().map(|p| p.display().to_string()).collect();
            return (
                Outcome::AgentError,
                format!(
                    "the agent changed files while planning ({}); nothing was executed",
                    list.join(", ")
                ),
                ending.2,
            );
        }
        let text = session.dispatch.totals().final_text.trim().to_owned();
        if text.is_empty() {
            return (
                Outcome::AgentError,
                "the planning turn ended without a plan (no final text)".to_owned(),
                ending.2,
            );
        }
        session.emit(EventKind::PlanProposed { revision, text });
        let (answer, by) = if mode.plan_only {
            (None, DecidedBy::Auto)
        } else if mode.ask {
            let left = mode.max_revisions.saturating_sub(revision);
            (Some(ask(session, left).await), DecidedBy::Person)
        } else {
            (Some(plan::Answer::Execute), DecidedBy::Auto)
        };
        let (decision, feedback) = match &answer {
            None => (Decision::Stop, None),
            Some(plan::Answer::Execute) => (Decision::Execute, None),
            Some(plan::Answer::Abort) => (Decision::Abort, None),
            Some(plan::Answer::Revise(text)) => (Decision::Revise, Some(text.clone())),
        };
        session.emit(EventKind::PlanDecided(PlanDecision {
            decision,
            by,
            feedback: feedback.clone(),
        }));
        match decision {
            Decision::Stop => {
                return (
                    Outcome::Completed,
                    "the plan is ready (--plan-only)".to_owned(),
                    ending.2,
                );
            }
            Decision::Abort => {
                return (
                    Outcome::Aborted,
                    "the plan was not approved; nothing was executed".to_owned(),
                    ending.2,
                );
            }
            Decision::Execute => break,
            Decision::Revise => {
                revision += 1;
                prompt = plan::revise_prompt(feedback.as_deref().unwrap_or_default());
            }
        }
    }
    session.turn(&plan::execute_prompt(task), permissions).await
}

/// Whether a person can be asked: stdin and stderr are a terminal, and this is not CI.
fn prompt_possible() -> bool {
    use std::io::IsTerminal as _;
    std::io::stdin().is_terminal()
        && std::io::stderr().is_terminal()
        && std::env::var_os("CI").is_none_or(|v| v.is_empty())
}

/// Asks at the terminal, with the live view paused. Ctrl-C (a key in raw mode, or a signal) and
/// a terminal that cannot be read both mean abort.
async fn ask(session: &mut Session<'_>, revisions_left: u32) -> plan::Answer {
    session.dispatch.pause(true);
    let saved = plan::TermState::save();
    let question =
        tokio::task::spawn_blocking(move || plan::ask(&console::Term::stderr(), revisions_left));
    let answer = tokio::select! {
        answer = question => answer.ok().and_then(Result::ok).unwrap_or(plan::Answer::Abort),
        _ = session.signals.recv() => plan::Answer::Abort,
    };
    saved.restore();
    session.dispatch.pause(false);
    answer
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
