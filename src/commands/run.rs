//! `runbook run`: start the agent on a task, supervise it, and leave a receipt.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::Context as _;

use std::sync::Arc;

use std::io::Write as _;

use crate::agent::{Adapter, Generic, Invocation, ParseContext, Permissions};
use crate::cli::RunArgs;
use crate::consumer::{Consumer, Dispatcher};
use crate::event::{
    DecidedBy, Decision, EventKind, ExitInfo, Limits, Outcome, PlanDecision, RunInfo,
    SCHEMA_VERSION, Turn, TurnKind,
};
use crate::exit::{Error, ExitStatus};
use crate::plan;
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
        Box::new(plan::PlanFile::new(&run_dir.path)),
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
    let mut session = Session {
        agent: &agent,
        model: args.model.as_deref(),
        cwd: &cwd,
        parse: ParseContext {
            cwd: cwd.clone(),
            model: args.model.clone(),
            prices: Arc::new(PriceTable::default()),
        },
        limits: turn_limits,
        run_dir: &run_dir,
        redactor: &redactor,
        dispatch: &mut dispatch,
        signals: &mut signals,
        turns: 0,
    };
    let mut ending = if args.plan || args.plan_only {
        planned(&mut session, &args).await
    } else {
        session.turn(&args.prompt, args.permissions).await
    };
    for prompt in &args.then {
        if ending.0 != Outcome::Completed || args.plan_only {
            break;
        }
        ending = session.turn(prompt, args.permissions).await;
    }
    let (outcome, message, exit) = ending;
    let plan = dispatch.stats().final_text.clone();

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
        writeln!(out, "{}", plan.trim_end())?;
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
            match self.dispatch.stats().session_id.clone() {
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
            env: adapter.env(&inv),
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

/// `--plan`: read-only planning turns until the plan is approved, then the execution turn.
async fn planned(session: &mut Session<'_>, args: &RunArgs) -> Ending {
    let before = plan::Snapshot::take(session.cwd);
    let interactive = !args.yes && !args.json && !args.plan_only && prompt_possible();
    let mut prompt = plan::plan_prompt(&args.prompt);
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
        let text = session.dispatch.stats().final_text.trim().to_owned();
        if text.is_empty() {
            return (
                Outcome::AgentError,
                "the planning turn ended without a plan (no final text)".to_owned(),
                ending.2,
            );
        }
        session.emit(EventKind::PlanProposed { revision, text });
        let (answer, by) = if args.plan_only {
            (None, DecidedBy::Auto)
        } else if interactive {
            (
                Some(ask(session, args.max_revisions.saturating_sub(revision)).await),
                DecidedBy::Person,
            )
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
    session
        .turn(&plan::execute_prompt(&args.prompt), args.permissions)
        .await
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
    let saved = TermState::save();
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

/// The terminal's settings before a question, put back however the question ended (a signal
/// can end it while the terminal is in raw mode).
struct TermState(Option<libc::termios>);

impl TermState {
    fn save() -> Self {
        let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: tcgetattr fills `t` when it returns 0; on failure `t` is not read.
        let ok = unsafe { libc::tcgetattr(libc::STDIN_FILENO, t.as_mut_ptr()) } == 0;
        // SAFETY: initialised by the successful tcgetattr above.
        Self(ok.then(|| unsafe { t.assume_init() }))
    }

    fn restore(&self) {
        if let Some(t) = &self.0 {
            // SAFETY: a termios read from the same descriptor.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t) };
        }
    }
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
