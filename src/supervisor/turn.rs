//! One agent invocation, start to end: the loop that tells the turn's [`Machine`] what happened
//! (output read, the agent's exit, its pipes closing, a signal to runbook, time passing) and
//! carries out what it decides. The decisions themselves are all in `phase`.

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use nix::sys::signal::Signal;
use tokio::time::{Instant, MissedTickBehavior, sleep_until};

use super::acp::{Ask, Reaction};
use super::permission_prompt::{self, Asked};
use super::phase::{Action, Input, Machine};
use super::raw::RawLogs;
use super::readers::Batch;
use super::scope::Scope;
use super::signals::{Received, Signals};
use super::spawn::{Spawned, TurnSpec, spawn};
use super::tree::Tree;
use super::version;
use crate::agent::{Adapter, StreamEnd};
use crate::consumer::Dispatcher;
use crate::event::{
    ActivitySign, EventKind, ExitInfo, Limits, Outcome, PermissionAnswerer, millis,
};
use crate::lifecycle::Ending;
use crate::redact::Redactor;
use crate::term::print;
use crate::watchdog::{self, Activity};

/// How long, after the agent is done, its `--version` may still take to answer.
const VERSION_GRACE: Duration = Duration::from_secs(2);
/// How long an ACP agent has to exit once its stdin is closed at the end of the run.
const CLOSE_GRACE: Duration = Duration::from_secs(2);
/// How long runbook keeps killing a tree before it reports what it could not end.
const KILL_BOUND: Duration = Duration::from_secs(5);

/// What every turn of a run shares: its limits, where raw output goes, the consumers, the
/// signals sent to runbook and what makes a process the run's.
pub(crate) struct Supervisor<'a> {
    pub limits: Limits,
    /// What the budget in `limits` is called when it is crossed (`--max-cost`).
    pub budget_name: &'static str,
    /// The run's wall-clock deadline (shared by all turns).
    pub deadline: Option<Instant>,
    pub logs: RawLogs<'a>,
    pub redactor: &'a Redactor,
    pub dispatch: &'a mut Dispatcher,
    pub signals: &'a mut Signals,
    pub scope: Arc<Scope>,
    /// An ACP agent's process, alive between turns: the next turn is a prompt to it.
    pub live: Option<Spawned>,
    /// How long a permission request waits for a person's answer before it is refused.
    pub permission_timeout: Duration,
}

impl Supervisor<'_> {
    /// Runs one turn to its end. Events reach the consumers as they happen; once the agent has
    /// started, exactly one `turn.completed` or `turn.failed` is emitted, after everything its
    /// tree wrote has been read and nothing of the tree is left.
    pub(crate) async fn run_turn(&mut self, spec: TurnSpec<'_>) -> Ending {
        self.dispatch.set_turn(spec.turn);
        self.dispatch
            .time_tools(!spec.adapter.tells_tool_durations());
        let acp = spec.adapter.speaks_acp();
        let scope = Arc::clone(&self.scope);
        let mut agent = match self.started(&spec, &scope) {
            Ok(agent) => agent,
            Err(ending) => return ending,
        };
        // Asked before the turn: told now, as the probe would have.
        if spec.version.is_some() {
            self.version(spec.version.clone(), spec.adapter);
        }
        let version = version::probe(spec.program, spec.adapter, spec.probe_version, &scope);
        let mut version = std::pin::pin!(version);
        let mut version_done = !spec.probe_version;
        let mut machine = Machine::new(self.limits, self.deadline, Instant::now())
            .budget_named(self.budget_name)
            .speaks_acp(acp);
        // How the agent answered the turn's prompt (ACP).
        let answer = self
            .drive(
                &mut machine,
                &mut agent,
                (&mut version, &mut version_done),
                spec.adapter,
            )
            .await;
        agent.lane.set_open(false);
        // No agent at work until the next turn: nothing is quiet.
        self.dispatch.quiet_since(None);

        if machine.answered() {
            // The agent lives on for the next prompt.
            let ending = machine.ending(answer.unwrap_or(StreamEnd::Finished));
            self.live = Some(agent);
            if machine.stopped() {
                super::handed::cancel(spec.adapter, &spec.env, self.dispatch).await;
            }
            return self.turn_ended(ending);
        }
        if !version_done && let Ok(v) = tokio::time::timeout(VERSION_GRACE, version).await {
            self.version(v, spec.adapter);
        }
        let finishing = Arc::clone(&agent.finishing);
        let (mut stream, interrupted) = self.finish(agent).await;
        if machine.stopped() || interrupted.is_some() {
            super::handed::cancel(spec.adapter, &spec.env, self.dispatch).await;
        }
        if interrupted.is_none() {
            stream = self.finishing(&spec, &finishing, stream).await;
        }
        if acp && stream == StreamEnd::Finished {
            // Its process ended without answering the prompt.
            stream = StreamEnd::Truncated(
                "the agent's process ended before it answered the prompt".to_owned(),
            );
        }
        let mut ending = machine.ending(stream);
        if let Some(got) = interrupted {
            // Ended while runbook was still ending what the agent left: as in the drain.
            ending.outcome = Outcome::Interrupted;
            ending.message = got.message();
        }
        self.turn_ended(ending)
    }

    /// Feeds the phase machine until it has ended: signals, the agent's output, its exit, time
    /// passing, its version's probe and the heartbeat. The agent's answer to the prompt (ACP).
    async fn drive<F: std::future::Future<Output = Option<String>>>(
        &mut self,
        machine: &mut Machine,
        agent: &mut Spawned,
        (version, version_done): (&mut std::pin::Pin<&mut F>, &mut bool),
        adapter: &dyn Adapter,
    ) -> Option<StreamEnd> {
        let mut ticker = tokio::time::interval(Duration::from_secs(1));
        ticker.set_missed_tick_behavior(MissedTickBehavior::Skip);
        let mut answer: Option<StreamEnd> = None;

        while !machine.is_ended() {
            let wake = machine.next_wake();
            let mut rpc = Vec::new();
            // While the loop takes the agent's output, its stdout reader may deliver a small
            // read itself once every batch before it has been handled here.
            agent.lane.set_open(machine.pipes_open());
            let mut handled = false;
            let input = tokio::select! {
                biased;
                got = self.signals.recv() => Some(Input::Signal(got)),
                batch = agent.batches.recv(), if machine.pipes_open() => Some(match batch {
                    Some(mut batch) => {
                        handled = true;
                        rpc = std::mem::take(&mut batch.rpc);
                        self.deliver(batch)
                    }
                    None => Input::PipesClosed,
                }),
                status = agent.child.wait(), if machine.awaits_exit() => {
                    Some(Input::Exited(exit_info(status.ok())))
                }
                () = sleep_until(wake.unwrap_or_else(far)), if wake.is_some() => {
                    Some(Input::Tick { cpu: read_cpu(machine, &agent.tree) })
                }
                v = version.as_mut(), if !*version_done => {
                    *version_done = true;
                    self.version(v, adapter);
                    None
                }
                _ = ticker.tick() => {
                    // The view's clock is the run's heartbeat's; this wakes the loop for the
                    // halts a tick may raise. Orphans of a tree that forks a lot would pile up
                    // as zombies meanwhile.
                    agent.tree.reap_orphans();
                    None
                }
            };
            // Whatever woke the loop, the consumers are the supervisor's until it is done with it:
            // the reader delivers nothing between, say, a stop and the signal it sends.
            agent.lane.set_open(false);
            if let Some(end) = self.take(input, rpc, machine, agent).await {
                answer = Some(end);
            }
            if handled {
                // Everything that follows from the batch is done: what the reader delivers
                // next comes after it, as it would here.
                agent.lane.handled();
            }
        }
        answer
    }

    /// The agent of this turn: the live ACP agent of the turns before, or a new one, started and
    /// told its prompt; `Err` with the turn's ending when there is none to be had.
    fn started(&mut self, spec: &TurnSpec<'_>, scope: &Arc<Scope>) -> Result<Spawned, Ending> {
        let keep_raw = self.dispatch.wants_raw();
        let mut agent = match self.live.take() {
            Some(agent) => agent,
            None if spec.adapter.speaks_acp() && spec.turn.index > 0 => {
                return Err(Ending::new(
                    Outcome::AgentError,
                    "the agent's process ended with an earlier turn, and its session with it: there is none to continue",
                    ExitInfo::default(),
                ));
            }
            None => spawn(
                spec,
                self.logs,
                self.redactor,
                scope,
                (keep_raw, self.dispatch.lane()),
            )
            .map_err(|e| Ending::not_started(&e))?,
        };
        let mut argv = vec![spec.program.display().to_string()];
        argv.extend(spec.args.iter().map(|a| self.redactor.str(a).into_owned()));
        self.dispatch.emit_now(
            SystemTime::now(),
            EventKind::TurnStarted {
                argv,
                pid: agent.pid,
                planning: spec.planning,
                steps_unreported: !spec.adapter.reports_steps(),
                prompt: Some(self.redactor.str(spec.prompt).into_owned()),
            },
        );
        if let Some(client) = &mut agent.client {
            client.set_policy(spec.permissions, spec.ask_person);
            let mut events = Vec::new();
            client.prompt(spec.prompt, &mut events);
            for event in events {
                self.dispatch.emit(SystemTime::now(), event);
            }
        }
        Ok(agent)
    }

    /// What woke the loop, taken: the input, the JSON-RPC messages that came with it, and a halt
    /// the consumers raised meanwhile. The agent's answer to the prompt, when it came.
    async fn take(
        &mut self,
        input: Option<Input>,
        rpc: Vec<crate::agent::acp::Incoming>,
        machine: &mut Machine,
        agent: &mut Spawned,
    ) -> Option<StreamEnd> {
        let mut answer = None;
        if let Some(input) = input {
            self.step(machine, input, agent).await;
        }
        for message in rpc {
            if let Some(end) = self.receive(message, machine, agent).await {
                answer = Some(end);
                self.step(machine, Input::Answered, agent).await;
            }
        }
        self.dispatch
            .quiet_since(std::time::Instant::now().checked_sub(machine.quiet_for(Instant::now())));
        self.dispatch.flush();
        self.check_raw_logs();
        if let Some(halt) = self.dispatch.take_halt() {
            let input = Input::Halt {
                outcome: halt.outcome,
                message: halt.message,
            };
            self.step(machine, input, agent).await;
            self.dispatch.flush();
        }
        answer
    }

    /// Tells how the turn ended, once everything is written out (a write that failed ends it
    /// as `storage_error`).
    fn turn_ended(&mut self, ending: Ending) -> Ending {
        self.check_raw_logs();
        self.dispatch.flush();
        let ending = ending.unless_storage_failed(self.dispatch.totals().storage_error.as_ref());
        self.dispatch
            .emit_now(SystemTime::now(), ending.turn_event());
        ending
    }

    /// Ends the ACP agent kept between turns, once the run has no more prompts for it: its stdin
    /// is closed, which is its cue to exit; what is left of its tree after [`CLOSE_GRACE`] is
    /// ended. Returns its exit, when it had one to end.
    pub(crate) async fn close(&mut self) -> Option<ExitInfo> {
        let mut agent = self.live.take()?;
        if let Some(client) = &mut agent.client {
            client.close();
        }
        let until = Instant::now() + CLOSE_GRACE;
        let (mut exit, mut open) = (None, true);
        while exit.is_none() || open {
            tokio::select! {
                batch = agent.batches.recv(), if open => match batch {
                    Some(batch) => {
                        let _ = self.deliver(batch);
                    }
                    None => open = false,
                },
                status = agent.child.wait(), if exit.is_none() => {
                    exit = Some(exit_info(status.ok()));
                }
                () = sleep_until(until) => break,
            }
        }
        if exit.is_none() || open {
            let dispatch = &mut *self.dispatch;
            agent
                .tree
                .end_all(
                    self.limits.kill_grace,
                    KILL_BOUND,
                    std::future::pending(),
                    |signal, n| signal_sent(dispatch, signal, n),
                )
                .await;
            agent.stop_reading();
            while let Some(batch) = agent.batches.recv().await {
                let _ = self.deliver(batch);
            }
            if exit.is_none() {
                exit = Some(exit_info(agent.child.wait().await.ok()));
            }
        }
        let _ = agent.stdout.await;
        let _ = agent.stderr.await;
        self.check_raw_logs();
        self.dispatch.flush();
        exit
    }

    /// Asks the person at the terminal to answer a permission request; a signal to runbook
    /// meanwhile (Ctrl-C at the question is one) cancels it, and is handed on.
    async fn ask_person(
        &mut self,
        ask: &Ask,
    ) -> (Option<usize>, PermissionAnswerer, Option<Received>) {
        // The run's --timeout still holds while a person is asked.
        let limit = self.deadline.map_or(self.permission_timeout, |d| {
            self.permission_timeout
                .min(d.saturating_duration_since(Instant::now()))
        });
        let asked =
            permission_prompt::ask(ask, limit, &mut *self.signals, &mut *self.dispatch).await;
        match asked {
            Asked::Chose(choice) => (choice, PermissionAnswerer::Person, None),
            Asked::TimedOut => (None, PermissionAnswerer::Timeout, None),
            Asked::Signal(got) => (None, PermissionAnswerer::Person, Some(got)),
        }
    }

    /// Hands a batch of events to the consumers; tells the machine what it held.
    fn deliver(&mut self, mut batch: Batch) -> Input {
        let delivered = match batch.delivered {
            Some(delivered) => delivered,
            None => self
                .dispatch
                .deliver(batch.ts, &mut batch.events, &batch.raw),
        };
        let input = Input::Output {
            stream: batch.stream,
            at: batch.at,
            final_word: delivered.final_word,
            spent: delivered.spent,
        };
        batch.recycle();
        input
    }

    /// Hands on a failed write to a raw log, which stops the run.
    fn check_raw_logs(&mut self) {
        for raw in [self.logs.stdout, self.logs.stderr] {
            if let Some(error) = raw.take_failure() {
                self.dispatch.storage_failed(&raw.path, &error);
            }
        }
    }

    /// Moves the machine on by `input`, and carries out what it decides (and what follows).
    async fn step(&mut self, machine: &mut Machine, input: Input, agent: &mut Spawned) {
        let mut inputs = vec![input];
        while let Some(input) = inputs.pop() {
            for action in machine.step(input, Instant::now()) {
                if let Some(next) = self.carry_out(action, agent).await {
                    inputs.push(next);
                }
            }
        }
    }

    /// Hands a message from an ACP agent to its client, and emits what it says; the turn's end
    /// when it answered the prompt.
    async fn receive(
        &mut self,
        message: crate::agent::acp::Incoming,
        machine: &mut Machine,
        agent: &mut Spawned,
    ) -> Option<StreamEnd> {
        let client = agent.client.as_mut()?;
        let mut events = Vec::new();
        let reaction = client.receive(message, &mut events);
        for event in events {
            self.dispatch.emit(SystemTime::now(), event);
        }
        match reaction {
            Reaction::None => None,
            Reaction::Answered(end) => Some(end),
            Reaction::Ask(ask) => {
                self.step(machine, Input::Asking(true), agent).await;
                let (option, by, signal) = self.ask_person(&ask).await;
                let mut events = Vec::new();
                if let Some(client) = agent.client.as_mut() {
                    if signal.is_some() {
                        // The prompt is being cancelled: so is the question.
                        client.cancel_ask(&ask, by, &mut events);
                    } else {
                        client.answer(&ask, option, by, &mut events);
                    }
                }
                for event in events {
                    self.dispatch.emit(SystemTime::now(), event);
                }
                self.step(machine, Input::Asking(false), agent).await;
                if let Some(got) = signal {
                    self.step(machine, Input::Signal(got), agent).await;
                }
                None
            }
        }
    }

    async fn carry_out(&mut self, action: Action, agent: &mut Spawned) -> Option<Input> {
        let now = SystemTime::now();
        match action {
            Action::Cancel => {
                let sent = agent
                    .client
                    .as_mut()
                    .is_some_and(super::acp::Client::cancel);
                if !sent {
                    return Some(Input::CannotCancel);
                }
            }
            Action::Signal(Signal::SIGKILL) => {
                let tree = agent.tree.clone();
                let killed = tokio::task::spawn_blocking(move || tree.kill_all(KILL_BOUND))
                    .await
                    .unwrap_or_default();
                self.signal_sent(Signal::SIGKILL, killed.processes);
            }
            Action::Signal(signal) => {
                let processes = agent.tree.signal(signal);
                self.signal_sent(signal, processes);
            }
            Action::StopReading => {
                print::warn(
                    "the agent's output is still held open by a process runbook could not end; no longer reading it",
                );
                agent.stop_reading();
            }
            Action::Announce { reason, message } => self
                .dispatch
                .emit(now, EventKind::StopRequested { reason, message }),
            Action::Warn { quiet, timeout } => self.dispatch.emit(
                now,
                EventKind::WatchdogWarning {
                    quiet_ms: millis(quiet),
                    timeout_ms: millis(timeout),
                },
            ),
            Action::Resumed { by, cpu } => self.dispatch.emit(
                now,
                EventKind::WatchdogResumed {
                    by: match by {
                        Activity::Stdout => ActivitySign::Stdout,
                        Activity::Stderr => ActivitySign::Stderr,
                        Activity::Cpu => ActivitySign::Cpu,
                    },
                    cpu_percent: cpu.map(|share| (share * 100.0).round() as u32),
                },
            ),
            Action::Hung(quiet) => {
                let diagnostic = watchdog::diagnostic(quiet, &self.dispatch.totals());
                self.dispatch
                    .emit(now, EventKind::WatchdogFired(Box::new(diagnostic)));
            }
        }
        None
    }

    fn signal_sent(&mut self, signal: Signal, processes: u32) {
        signal_sent(self.dispatch, signal, processes);
    }

    /// The agent's version, with the versions runbook was tested with when it is not one of them.
    fn version(&mut self, version: Option<String>, adapter: &dyn Adapter) {
        if let Some(version) = version {
            let version = self.redactor.str(&version).into_owned();
            let tested_with = version::untested(adapter, &version);
            let fidelity = Some(version::fidelity(adapter, &version));
            self.dispatch.emit(
                SystemTime::now(),
                EventKind::AgentVersion {
                    version,
                    tested_with,
                    fidelity,
                },
            );
        }
    }

    /// Waits for both readers and ends whatever the tree left behind; returns how the stdout
    /// reader says the stream ended, and the signal to runbook that cut the ending short, if one
    /// did (the run's deadline cuts it short too).
    async fn finish(&mut self, agent: Spawned) -> (StreamEnd, Option<Received>) {
        let stream_end = agent
            .stdout
            .await
            .unwrap_or_else(|e| StreamEnd::Truncated(format!("stdout reader failed: {e}")));
        let _ = agent.stderr.await;
        let mut interrupted = None;
        let (signals, dispatch, deadline) =
            (&mut *self.signals, &mut *self.dispatch, self.deadline);
        let hurry = async {
            tokio::select! {
                got = signals.recv() => interrupted = Some(got),
                () = sleep_until(deadline.unwrap_or_else(far)) => {}
            }
        };
        let left = agent
            .tree
            .end_all(self.limits.kill_grace, KILL_BOUND, hurry, |signal, n| {
                signal_sent(dispatch, signal, n);
            })
            .await;
        if !left.is_empty() {
            print::warn(format_args!(
                "{} processes of the agent's could not be ended (pids {left:?}); they may still be running",
                left.len()
            ));
        }
        (stream_end, interrupted)
    }
}

/// Says that runbook sent `signal` to the tree, when it reached a living process.
fn signal_sent(dispatch: &mut Dispatcher, signal: Signal, processes: u32) {
    if processes > 0 {
        dispatch.emit_now(
            SystemTime::now(),
            EventKind::SignalSent {
                signal: signal.as_str().to_owned(),
                processes,
            },
        );
    }
}

/// The CPU time the agent's tree has used so far, while the machine watches it.
fn read_cpu(machine: &Machine, tree: &Tree) -> Option<Duration> {
    machine.watches_cpu().then(|| tree.cpu_time())
}

pub(super) fn exit_info(status: Option<std::process::ExitStatus>) -> ExitInfo {
    let Some(status) = status else {
        return ExitInfo::default();
    };
    ExitInfo {
        code: status.code(),
        signal: std::os::unix::process::ExitStatusExt::signal(&status),
    }
}

/// A time that never comes, for timers that are off.
fn far() -> Instant {
    Instant::now() + Duration::from_secs(86400 * 365)
}
