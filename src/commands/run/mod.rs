//! `runbook run`: start the agent on a task, supervise it, and leave a receipt.

mod planned;
mod provider_ports;
mod repair;
mod repair_policy;
pub(crate) mod sandbox;
mod session;
pub(crate) mod setup;
mod stall;
mod summary;

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::Context as _;

use crate::cli::RunArgs;
use crate::config::{self, Flags};
use crate::consumer::{Consumer, Dispatcher};
use crate::event::TurnKind;
use crate::event::{EventKind, Outcome};
use crate::exit::ExitStatus;
use crate::lifecycle::Ending;
use crate::observers::{
    Callback, CommandObserver, DRAIN, EventsTo, Meta, MetaLine, Pending, Tally,
};
use crate::plan;
use crate::receipt::{Receipt, ReceiptWriter};
use crate::redact::Redactor;
use crate::redact::pump::Pump;
use crate::render;
use crate::rundir::{self, RunDir};
use crate::store::EventLog;
use crate::supervisor::{RawFile, RawLogs, Scope, Signals, Supervisor, end_the_rest};
use crate::term::print;
use planned::{PlanMode, planned, prompt_possible};
use session::Session;
use setup::Setup;
use stall::Stalls;

pub(crate) use setup::resolve_cwd;

/// What runs a run besides its command line: the CLI at a terminal, or a program through the
/// library.
pub(crate) struct Host {
    /// Whether the run is shown: the terminal view on stderr, or `--json` on stdout.
    pub views: bool,
    /// The program's own observers.
    pub callbacks: Vec<Callback>,
    /// runbook is the whole process: it may become its subreaper, and its children are the
    /// run's. Not so in a program using the library, whose other children are its own.
    pub whole_process: bool,
}

impl Host {
    /// The `runbook` command.
    pub(crate) fn terminal() -> Self {
        Self {
            views: true,
            callbacks: Vec::new(),
            whole_process: true,
        }
    }
}

/// How a run ended, and its receipt.
pub(crate) struct Finished {
    pub status: ExitStatus,
    /// `None` only when the run's record could not be written.
    pub receipt: Option<Receipt>,
}

/// `runbook run`.
pub(crate) async fn run(
    mut args: RunArgs,
    global: &Flags<config::Global>,
) -> anyhow::Result<ExitStatus> {
    setup::take_task_prompt(&mut args, None)?;
    Ok(execute(args, global, Host::terminal()).await?.status)
}

/// Runs the agent as `args` say, for `host`. An error: nothing could be started.
pub(crate) async fn execute(
    args: RunArgs,
    global: &Flags<config::Global>,
    host: Host,
) -> anyhow::Result<Finished> {
    let (views, whole_process) = (host.views, host.whole_process);
    // Only a person at the `runbook` command is asked to trust a repository's files; a program
    // using the library is not.
    let ask = views && whole_process && prompt_possible();
    let mut setup = Setup::resolve(&args, global, ask, None)?;
    // Before anything is started, so that a Ctrl-C from here on is runbook's to handle.
    let mut signals = Signals::install().context("cannot install signal handlers")?;
    if whole_process {
        crate::linux::become_subreaper();
    }
    let started = SystemTime::now();
    let run_dir = RunDir::create(&setup.runs_dir, started)?;
    let redactor = Redactor::for_agent(setup.agent_env.values());
    // Whatever this process writes from now on masks them too, the terminal included.
    crate::redact::remember(&redactor);
    // Before anything is started: the run's mark, its cgroups and the guardian that ends its
    // processes should runbook be killed.
    let (scope, tmp) = open_scope(&mut setup, &run_dir, whole_process)?;
    let (mut consumers, mut observers) =
        consumers(&run_dir, &setup, &args, &redactor, host, &scope)?;
    consumers.extend(std::mem::take(&mut observers.consumers));
    let mut dispatch = dispatcher(consumers, &setup);
    let git = run_started(&mut dispatch, &setup, &args, (&run_dir, &redactor), started);

    let ask_person = views && !args.json && prompt_possible();
    let place = Place {
        run_dir: &run_dir,
        redactor: &redactor,
        scope: &scope,
    };
    let (ending, answers) = run_turns(
        &setup,
        &args,
        place,
        &mut dispatch,
        &mut signals,
        ask_person,
    )
    .await?;
    if let Some(changes) = git.as_ref().and_then(crate::git::changes) {
        dispatch.emit_now(SystemTime::now(), EventKind::Changes(changes));
    }

    let (completed, outcome) = last_events(
        &mut dispatch,
        ending,
        &answers,
        &observers.tallies,
        &args,
        started,
    );
    let answer = dispatch.totals().final_text.clone();
    let receipt = Receipt::of(&dispatch.totals());
    let closed = dispatch.close();
    nothing_left(&mut observers, &scope).await;
    // What the run's processes left in its temp dir is not the run's record.
    let _ = std::fs::remove_dir_all(tmp);
    if !told_closing(&closed, args.json, &setup) {
        return Ok(Finished {
            status: ExitStatus::Internal,
            receipt: None,
        });
    }
    if args.plan_only && !args.json && completed && views {
        print_plan(&answer)?;
    }
    let mut receipt = receipt;
    upload(&setup, &run_dir, views, receipt.as_mut());
    Ok(Finished {
        status: ExitStatus::from_outcome(outcome),
        receipt,
    })
}

/// The run's scope of processes, under the sandbox when one was asked for (recorded in
/// `setup`), with the run's temp dir, to remove at the end.
fn open_scope(
    setup: &mut Setup,
    run_dir: &RunDir,
    whole_process: bool,
) -> anyhow::Result<(Arc<Scope>, std::path::PathBuf)> {
    let tmp = sandbox::make_tmp(&run_dir.path)?;
    let sandbox = match &setup.sandbox {
        Some((policy, by)) => Some(sandbox::prepare(policy, *by, &tmp)?),
        None => None,
    };
    setup.sandbox_record = sandbox.as_ref().map(sandbox::record);
    let scope = Scope::open(&run_dir.id, whole_process, sandbox, tmp.clone());
    Ok((Arc::new(scope), tmp))
}

/// Pushes the run to its bucket, if it has one: told, recorded in the receipt, and without
/// effect on the exit code or the local copy.
fn upload(setup: &Setup, run_dir: &RunDir, views: bool, receipt: Option<&mut Receipt>) {
    let Some(bucket) = &setup.upload else {
        return;
    };
    let pushed =
        crate::commands::upload::push(bucket, crate::bucket::RUNS_GROUP, &run_dir.path, views);
    if let (Err(failure), Some(receipt)) = (pushed, receipt) {
        receipt.upload_failed = Some(failure);
    }
}

/// `run.started`, with what the repository was before the agent touched it (returned, to tell
/// what the run changed at its end).
fn run_started(
    dispatch: &mut Dispatcher,
    setup: &Setup,
    args: &RunArgs,
    (run_dir, redactor): (&RunDir, &Redactor),
    started: SystemTime,
) -> Option<crate::git::Start> {
    let git = crate::git::start(&setup.cwd);
    let info = setup.run_info(
        &args.prompt,
        args.name.as_deref(),
        git.as_ref().map(|g| g.info.clone()),
        run_dir,
        redactor,
    );
    dispatch.emit_now(started, EventKind::RunStarted(Box::new(info)));
    git
}

/// `--plan-only`: the plan is the result, on stdout (with --json it is the `plan.proposed`
/// event). When stdout and stderr are the same screen, the view has shown it already.
fn print_plan(plan: &str) -> anyhow::Result<()> {
    let env = crate::term::TermEnv::detect();
    if !(env.stdout_is_terminal && env.stderr_is_terminal) {
        crate::term::out::print(&format!("{}\n", plan.trim_end()))?;
    }
    Ok(())
}

/// Every turn ended its tree and the observers have had their last event: once they have taken
/// what is queued, what they left goes too, and then nothing of the run is left to guard.
async fn nothing_left(observers: &mut Observers, scope: &Arc<Scope>) {
    drained(std::mem::take(&mut observers.pending)).await;
    ended_the_rest(scope, std::mem::take(&mut observers.logs)).await;
    scope.close();
}

/// Where a run's turns write and what they answer to.
struct Place<'a> {
    run_dir: &'a RunDir,
    redactor: &'a Redactor,
    scope: &'a Arc<Scope>,
}

/// The run's turns, supervised: the task (with its plan, `--then` prompts, checks and repair),
/// then the ACP agent closed, whose exit is the run's. How they ended, and what they answered.
async fn run_turns(
    setup: &Setup,
    args: &RunArgs,
    place: Place<'_>,
    dispatch: &mut Dispatcher,
    signals: &mut Signals,
    ask_person: bool,
) -> anyhow::Result<(Ending, session::Answers)> {
    let run_dir = place.run_dir;
    let raw_stdout = RawFile::new(
        run_dir.stdout.try_clone()?,
        run_dir.path.join(rundir::STDOUT),
    );
    let raw_stderr = RawFile::new(
        run_dir.stderr.try_clone()?,
        run_dir.path.join(rundir::STDERR),
    );
    let supervisor = Supervisor {
        limits: setup.limits,
        budget_name: "--max-cost",
        deadline: (setup.limits.timeout).map(|t| tokio::time::Instant::now() + t),
        logs: RawLogs {
            stdout: &raw_stdout,
            stderr: &raw_stderr,
        },
        redactor: place.redactor,
        dispatch,
        signals,
        scope: Arc::clone(place.scope),
        live: None,
        permission_timeout: setup.permission_timeout,
    };
    let mut session = Session::new(setup, supervisor);
    session.ask_person = ask_person;
    let mut ending = turns(&mut session, args).await;
    // An ACP agent lives until there is no more to ask of it; its exit is the run's.
    if let Some(exit) = session.close().await
        && ending.exit == crate::event::ExitInfo::default()
    {
        ending.exit = exit;
    }
    Ok((ending, std::mem::take(&mut session.answers)))
}

/// The dispatcher of the run's events, its view's clock ticking through every phase of the run
/// (not only while an agent is at work) and the loop detector watching the agent.
fn dispatcher(consumers: Vec<Box<dyn Consumer>>, setup: &Setup) -> Dispatcher {
    let mut dispatch = Dispatcher::new(consumers);
    if let Err(e) = dispatch.start_heartbeat() {
        print::warn(format_args!(
            "cannot start the status line's clock: {e}; the run goes on without it"
        ));
    }
    let detector = crate::stuck::Detector::new(setup.stuck, setup.stuck_thresholds);
    dispatch.watch_for_loops(detector);
    dispatch
}

/// The run's last events, after everything was written out (so that a write that failed, a full
/// disk, is known by then): its summary, which speaks for the whole run and so waits for how it
/// ended, what each observer was given and missed, and `run.finished`. How the run ended.
fn last_events(
    dispatch: &mut Dispatcher,
    ending: Ending,
    answers: &session::Answers,
    tallies: &[Arc<Tally>],
    args: &RunArgs,
    started: SystemTime,
) -> (bool, Outcome) {
    dispatch.flush();
    let ending = ending.unless_storage_failed(dispatch.totals().storage_error.as_ref());
    let told = summary::told(answers, &ending, &dispatch.totals(), args.plan_only);
    if let Some(told) = told {
        dispatch.emit_now(SystemTime::now(), told);
    }
    for tally in tallies {
        let report = EventKind::ObserverFinished(tally.report());
        dispatch.emit_now(SystemTime::now(), report);
    }
    let how = (ending.is_completed(), ending.outcome);
    let finished = ending.run_event(started.elapsed().unwrap_or_default());
    dispatch.emit_now(SystemTime::now(), finished);
    how
}

/// Says what failed as the run closed; false when a file of the run directory could not be
/// written (the terminal view has shown each; with `--json`, stderr has one line for each).
fn told_closing(closed: &crate::consumer::Closed, json: bool, setup: &Setup) -> bool {
    for failure in &closed.failures {
        print::warn(failure);
    }
    if closed.storage_errors.is_empty() {
        return true;
    }
    if json {
        let color = crate::term::TermEnv::detect().color(setup.color);
        for message in &closed.storage_errors {
            print::error(message, color);
        }
    }
    false
}

/// Where the run's events go: the event log, the receipt, the plan file, and the views; then
/// the observers, apart, with what the run reports of them.
fn consumers(
    run_dir: &RunDir,
    setup: &Setup,
    args: &RunArgs,
    redactor: &Redactor,
    host: Host,
    scope: &Scope,
) -> anyhow::Result<(Vec<Box<dyn Consumer>>, Observers)> {
    let mut consumers: Vec<Box<dyn Consumer>> = vec![
        Box::new(EventLog::new(
            run_dir.events.try_clone()?,
            run_dir.path.join(rundir::EVENTS),
        )?),
        Box::new(ReceiptWriter::new(&run_dir.path)),
        Box::new(plan::PlanFile::new(&run_dir.path)),
    ];
    if host.views {
        let person_answers = !args.json
            && setup.permissions == crate::agent::Permissions::Agent
            && prompt_possible();
        consumers.extend(render::views(
            setup.color,
            args.json,
            args.verbosity.into(),
            person_answers,
        ));
    }
    let observers = observers(run_dir, setup, args, redactor, host.callbacks, scope);
    Ok((consumers, observers))
}

/// The run's observers, and their tallies for the report at its end.
#[derive(Default)]
struct Observers {
    consumers: Vec<Box<dyn Consumer>>,
    tallies: Vec<Arc<Tally>>,
    /// The threads that copy the observer processes' output into their logs.
    logs: Vec<Pump>,
    /// The threads and tasks of callback observers, still taking what is queued at the end.
    pending: Vec<Pending>,
}

/// Starts every `--on-event` command and opens `--events-to`. One that cannot be started is
/// told and left out: observers never stop a run.
fn observers(
    run_dir: &RunDir,
    setup: &Setup,
    args: &RunArgs,
    redactor: &Redactor,
    callbacks: Vec<Callback>,
    scope: &Scope,
) -> Observers {
    let name = args.name.as_deref().unwrap_or(&run_dir.id);
    let meta = MetaLine::new(Meta {
        run_id: run_dir.id.clone(),
        run_name: redactor.str(name).into_owned(),
        agent: setup.agent.adapter.name().to_owned(),
        turn_index: 0,
        turn_kind: TurnKind::Start,
    });
    let mut out = Observers::default();
    let logs = run_dir.path.join("observers");
    // Where an agent writes, a link it planted on the way to `--events-to` is not followed.
    let anchors = [setup.cwd.as_path(), setup.config.root.as_path()];
    let targets = setup
        .observers
        .iter()
        .map(|o| (o.command.clone(), None, o.raw))
        .chain(
            setup
                .events_to
                .iter()
                .map(|p| (p.display().to_string(), Some(setup.cwd.join(p)), false)),
        );
    for (index, (target, path, raw)) in (1..).zip(targets) {
        let tally = Arc::new(Tally::new(index, redactor.str(&target).into_owned()));
        let started: std::io::Result<Box<dyn Consumer>> = match path {
            None => CommandObserver::start(
                Arc::clone(&tally),
                &target,
                (&setup.cwd, &logs),
                meta.clone(),
                raw,
                &|command| scope.enter_observer(command),
            )
            .map(|mut o| {
                scope.apart(o.pid());
                out.logs.extend(o.take_logs());
                Box::new(o) as Box<dyn Consumer>
            }),
            Some(path) => EventsTo::open(Arc::clone(&tally), &path, &anchors, meta.clone())
                .map(|o| Box::new(o) as Box<dyn Consumer>),
        };
        match started {
            Ok(consumer) => {
                out.consumers.push(consumer);
                out.tallies.push(tally);
            }
            Err(e) => print::warn(format_args!(
                "observer {index} ({}) cannot be started: {e}; the run goes on without it",
                tally.target
            )),
        }
    }
    let first = (setup.observers.len() + usize::from(setup.events_to.is_some()) + 1) as u32;
    for (index, callback) in (first..).zip(callbacks) {
        let tally = Arc::new(Tally::new(index, callback.describe().to_owned()));
        match callback.observe(Arc::clone(&tally), meta.clone()) {
            Ok((consumer, pending)) => {
                out.consumers.push(consumer);
                out.pending.push(pending);
                out.tallies.push(tally);
            }
            Err(e) => print::warn(format_args!(
                "observer {index} ({}) cannot be started: {e}; the run goes on without it",
                tally.target
            )),
        }
    }
    out
}

/// Ends what is left of the run's processes (what observers started), then waits a little for
/// the observers' logs to be written out.
async fn ended_the_rest(scope: &Arc<Scope>, logs: Vec<Pump>) {
    let left = end_the_rest(Arc::clone(scope), OBSERVER_GRACE, KILL_BOUND).await;
    if !left.is_empty() {
        print::warn(format_args!(
            "{} processes of the run could not be ended (pids {left:?}); they may still be running",
            left.len()
        ));
    }
    let until = tokio::time::Instant::now() + DRAIN;
    for log in logs {
        while !log.is_finished() && tokio::time::Instant::now() < until {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        // One still reading is told to stop: it is a pipe something of the run's left open.
        let _ = tokio::task::block_in_place(|| log.finish(Duration::ZERO));
    }
}

/// How long what observers left gets after SIGTERM, at the end of the run.
const OBSERVER_GRACE: Duration = Duration::from_millis(500);
/// How long the kill of what is left may take.
const KILL_BOUND: Duration = Duration::from_secs(5);

/// Gives callback observers up to [`DRAIN`] to take the events still queued for them; a callback
/// still busy then is left to finish on its own thread or task.
async fn drained(pending: Vec<Pending>) {
    let until = tokio::time::Instant::now() + DRAIN;
    for pending in pending {
        match pending {
            Pending::Task(task) => {
                let _ = tokio::time::timeout_at(until, task).await;
            }
            Pending::Thread(thread) => {
                while !thread.is_finished() && tokio::time::Instant::now() < until {
                    tokio::time::sleep(Duration::from_millis(1)).await;
                }
            }
        }
    }
}

/// The run's turns: the task (planned first with `--plan`), then each `--then` prompt while the
/// turns before it completed.
async fn turns(session: &mut Session<'_>, args: &RunArgs) -> Ending {
    let permissions = session.setup.permissions;
    let mut ending = if session.setup.plan || args.plan_only {
        let mode = PlanMode {
            plan_only: args.plan_only,
            ask: !args.yes && !args.json && !args.plan_only && prompt_possible(),
            max_revisions: args.max_revisions,
        };
        planned(session, &args.prompt, permissions, &mode).await
    } else {
        session.turn(&args.prompt, permissions).await
    };
    if args.plan_only {
        return ending;
    }
    let mut stalls = Stalls::new(session.setup.retry_denied);
    ending = stalls.after(session, ending, permissions).await;
    for prompt in &args.then {
        if !ending.is_completed() {
            break;
        }
        ending = session.turn(prompt, permissions).await;
        ending = stalls.after(session, ending, permissions).await;
    }
    // The task is done only when the project's checks pass; a task that did not complete is
    // not checked.
    let checks = &session.setup.checks;
    if ending.is_completed() && !checks.is_empty() {
        let (checks, repair) = (checks.clone(), session.setup.repair.clone());
        ending = repair::checked(session, &checks, &repair, permissions, ending).await;
    }
    summary::summarized(session, args.summary, permissions, ending).await
}
