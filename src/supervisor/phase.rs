//! The phases of one turn and what moves the turn between them, as a pure state machine.
//!
//! ```text
//!             first output          final word             exit, pipes open
//!  Starting ───────────────▶ Running ─────────▶ Finishing ─────────────────▶ Draining
//!     │                        │                    │                           │ pipes close
//!     │ Ctrl-C, watchdog,      │ Ctrl-C, watchdog,  │ Ctrl-C (interrupted),     ▼
//!     │ --timeout, budget      │ --timeout, budget  │ no exit by finish_grace   Ended
//!     ▼                        ▼                    ▼ or --timeout (finished)   ▲
//!  Stopping (SIGTERM sent; SIGKILL after kill_grace) ── exit ──▶ Draining ──────┘
//! ```
//!
//! An exit with the pipes already closed goes straight to `Ended`. `Draining` is bounded whatever
//! is left holding the pipes: the rest of the tree is ended after [`LINGER`] (or at once when the
//! run reaches its deadline, its budget or a signal), SIGKILL follows the grace, and
//! [`READ_AFTER_KILL`] after the kill runbook stops reading pipes that something outside its
//! reach still holds. [`Machine::step`] takes one
//! input (output read, the agent's exit, its pipes closing, a signal to runbook, or time passing)
//! and the time, and returns the actions to carry out. It never touches a process, a clock or a
//! consumer, so every transition is tested without an agent; the supervisor's loop only feeds it
//! inputs and does what it says.

use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::time::Instant;

use super::signals::Received;
use crate::agent::StreamEnd;
use crate::event::{CostIssue, ExitInfo, Limits, Outcome, Stream};
use crate::format;
use crate::lifecycle::Ending;
use crate::stats::Spent;
use crate::watchdog::{Activity, BUSY_CPU, CpuGauge, Quiet, Verdict, Watchdog};

/// After the agent exits, how long its pipes may stay open (held by a leftover process) before
/// the rest of its tree is ended.
pub(crate) const LINGER: Duration = Duration::from_secs(2);

/// Once the tree has been killed, how long its pipes may stay open before runbook stops reading
/// them: whatever still holds them is out of runbook's reach, and the run ends without it.
pub(crate) const READ_AFTER_KILL: Duration = Duration::from_secs(1);

/// Where a turn is.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Phase {
    /// Started; nothing read from it yet. Every limit applies.
    Starting,
    /// At work. Every limit applies: watchdog, `--timeout`, `--max-cost`.
    Running,
    /// It gave its final word and should exit on its own by `by`. Its cost and its silence no
    /// longer matter (its work is done: there is nothing left to save, and a quiet finished agent
    /// is not a hung one); Ctrl-C still stops it, and at `by` (or the run's deadline) it is ended
    /// as finished work.
    Finishing { by: Instant },
    /// runbook asked an ACP agent to cancel its prompt (`session/cancel`); at `until` it is ended
    /// with signals after all.
    Cancelling { stop: Stop, until: Instant },
    /// runbook is ending it (SIGTERM sent); SIGKILL at `kill_at` unless it has exited.
    Stopping {
        stop: Stop,
        kill_at: Option<Instant>,
    },
    /// It exited, but its pipes are still open: a leftover process holds them. At
    /// `linger_until` (or the run's deadline, if sooner) the rest of the tree is ended; SIGKILL at
    /// `kill_at`; at `read_until` (set by the kill) runbook stops reading the pipes.
    Draining {
        exit: ExitInfo,
        stop: Option<Stop>,
        linger_until: Option<Instant>,
        kill_at: Option<Instant>,
        read_until: Option<Instant>,
    },
    /// It exited and its output has been read to the end.
    Ended { exit: ExitInfo, stop: Option<Stop> },
}

/// Why runbook ended the agent.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Stop {
    /// A limit or a signal: the turn's outcome is this, whatever the agent did.
    Limit { outcome: Outcome, message: String },
    /// It gave its final word but did not exit in time: its own verdict stands.
    Finished,
}

/// What happened.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Input {
    /// Output was read from one pipe at `at`. `final_word`: it held the agent's final result;
    /// `spent`: what the run has spent with it counted.
    Output {
        stream: Stream,
        at: Instant,
        final_word: bool,
        spent: Spent,
    },
    /// The agent's process exited.
    Exited(ExitInfo),
    /// Both pipes reached their end: everything the agent's tree wrote has been read.
    PipesClosed,
    /// runbook itself received a signal (Ctrl-C, SIGTERM, SIGHUP).
    Signal(Received),
    /// The run cannot go on (a write to the run directory failed, or the reader of runbook's
    /// output went away): the agent is stopped as for Ctrl-C, the turn ending as `outcome`.
    Halt { outcome: Outcome, message: String },
    /// Time passed. `cpu`: the CPU time the agent's tree has used so far, read while it is
    /// watched (see [`Machine::watches_cpu`]).
    Tick { cpu: Option<Duration> },
    /// An ACP agent answered the turn's prompt: the turn is over, and its process lives on for
    /// the next one.
    Answered,
    /// There was no prompt to cancel (the agent never opened its session): only signals are
    /// left.
    CannotCancel,
    /// A person is being asked a permission (`true`), or has answered (`false`): the wait is
    /// not the agent's silence.
    Asking(bool),
}

/// What the supervisor is to do.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Action {
    /// Send a signal to the agent's whole tree. SIGKILL is not one signal but the end of the
    /// tree: runbook kills until no process of it is left.
    Signal(Signal),
    /// Stop reading the agent's pipes: close runbook's ends and keep what was read. Whatever
    /// still holds them could not be ended.
    StopReading,
    /// Say that runbook is stopping the agent, and why (`stop.requested`).
    Announce { reason: Outcome, message: String },
    /// Say that the agent has been quiet for a while (`watchdog.warning`).
    Warn { quiet: Duration, timeout: Duration },
    /// Say that activity withdrew the watchdog's warning (`watchdog.resumed`): `cpu`, the share
    /// of a core the tree used, when that was the activity.
    Resumed { by: Activity, cpu: Option<f64> },
    /// Say that the watchdog fired, with where each activity signal stood (`watchdog.fired`).
    Hung(Quiet),
    /// Ask an ACP agent to cancel its prompt (`session/cancel`).
    Cancel,
}

/// How often the tree's CPU use is judged: a fifth of the inactivity timeout, within these bounds.
/// Each judgement is over one such span, so a stall is seen within the timeout and one span. The
/// longer the span, the less a runtime's short bursts (a garbage collection) weigh; it is short
/// enough that a busy tree is judged busy (after two spans: the first reading is the baseline)
/// before the warning at half the timeout.
pub(crate) const CPU_EVERY: (Duration, Duration) =
    (Duration::from_millis(250), Duration::from_secs(2));

/// How long an ACP agent has, once asked to cancel its prompt, to end it before it is ended with
/// signals.
pub(crate) const CANCEL_GRACE: Duration = Duration::from_secs(3);

/// One turn's state: its phase, plus what every phase needs to know.
#[derive(Debug, Clone)]
pub(crate) struct Machine {
    phase: Phase,
    pipes_open: bool,
    limits: Limits,
    /// What the budget is called when it is crossed.
    budget_name: &'static str,
    /// The run's wall-clock deadline (shared by all turns).
    deadline: Option<Instant>,
    watchdog: Watchdog,
    /// Whether the agent gave its final word: from then on its cost no longer matters.
    final_word: bool,
    /// How often the tree's CPU use is looked at, and when next.
    cpu_every: Duration,
    next_cpu: Instant,
    cpu: CpuGauge,
    /// The agent speaks ACP: a stop asks it to cancel first, and its answer ends the turn.
    acp: bool,
    /// The turn ended with the agent's answer to its prompt (ACP), its process still running.
    answered: bool,
    /// A person is being asked a permission: the watchdog waits.
    asking: bool,
}

impl Machine {
    /// A turn of an ACP agent: see [`Input::Answered`] and [`Phase::Cancelling`].
    pub(crate) fn speaks_acp(self, acp: bool) -> Self {
        Self { acp, ..self }
    }

    /// Whether the turn ended with the agent's answer, its process still running.
    pub(crate) fn answered(&self) -> bool {
        self.answered
    }

    /// A turn whose agent was started at `now`.
    /// What the budget is called in the message when it is crossed (`--max-cost` by default).
    pub(crate) fn budget_named(self, budget_name: &'static str) -> Self {
        Self {
            budget_name,
            ..self
        }
    }

    pub(crate) fn new(limits: Limits, deadline: Option<Instant>, now: Instant) -> Self {
        let cpu_every = (limits.inactivity_timeout / 5).clamp(CPU_EVERY.0, CPU_EVERY.1);
        Self {
            phase: Phase::Starting,
            pipes_open: true,
            watchdog: Watchdog::new(limits.inactivity_timeout, now),
            final_word: false,
            limits,
            budget_name: "--max-cost",
            deadline,
            cpu_every,
            next_cpu: now + cpu_every,
            cpu: CpuGauge::new(cpu_every),
            acp: false,
            answered: false,
            asking: false,
        }
    }

    #[cfg(test)]
    pub(crate) fn phase(&self) -> &Phase {
        &self.phase
    }

    /// Whether runbook ended the turn for a limit or a signal, not the agent.
    pub(crate) fn stopped(&self) -> bool {
        matches!(
            self.phase,
            Phase::Ended {
                stop: Some(Stop::Limit { .. }),
                ..
            }
        )
    }

    /// Whether the loop is over: the agent exited and its output was read to the end.
    pub(crate) fn is_ended(&self) -> bool {
        matches!(self.phase, Phase::Ended { .. })
    }

    /// Whether there may be more output to read.
    pub(crate) fn pipes_open(&self) -> bool {
        self.pipes_open
    }

    /// Whether the agent's process is still to be waited for.
    pub(crate) fn awaits_exit(&self) -> bool {
        !matches!(self.phase, Phase::Draining { .. } | Phase::Ended { .. })
    }

    /// How long the agent has shown no activity of any kind.
    pub(crate) fn quiet_for(&self, now: Instant) -> Duration {
        self.watchdog.quiet_for(now)
    }

    /// Whether the tree's CPU time is to be read at the next [`Input::Tick`]: while the agent is
    /// watched.
    pub(crate) fn watches_cpu(&self) -> bool {
        self.watched()
    }

    /// How often the tree's CPU use is judged.
    #[cfg(test)]
    pub(crate) fn cpu_every(&self) -> Duration {
        self.cpu_every
    }

    /// When time passing next matters, if it can.
    pub(crate) fn next_wake(&self) -> Option<Instant> {
        let timers = match &self.phase {
            Phase::Starting | Phase::Running => [
                Some(self.watchdog.next_check()),
                Some(self.next_cpu),
                self.deadline,
                None,
            ],
            Phase::Finishing { by } => [Some(*by), self.deadline, None, None],
            Phase::Cancelling { until, .. } => [Some(*until), None, None, None],
            Phase::Stopping { kill_at, .. } => [*kill_at, None, None, None],
            Phase::Draining {
                linger_until,
                kill_at,
                read_until,
                ..
            } => [
                *linger_until,
                // The deadline cuts the linger short; once that is over it has nothing to do.
                self.deadline.filter(|_| linger_until.is_some()),
                *kill_at,
                *read_until,
            ],
            Phase::Ended { .. } => [None, None, None, None],
        };
        timers.into_iter().flatten().min()
    }

    /// Moves the turn on by one input at `now`; returns what to do, in order.
    pub(crate) fn step(&mut self, input: Input, now: Instant) -> Vec<Action> {
        let mut actions = Vec::new();
        match input {
            Input::Output {
                stream,
                at,
                final_word,
                spent,
            } => self.output(stream, at, final_word, spent, now, &mut actions),
            Input::Exited(exit) => self.exited(exit, now),
            Input::PipesClosed => self.pipes_closed(),
            Input::Signal(got) => self.signal(got, now, &mut actions),
            Input::Halt { outcome, message } => {
                self.halt(outcome, message, false, now, &mut actions);
            }
            Input::Tick { cpu } => self.tick(cpu, now, &mut actions),
            Input::Answered => self.answer(),
            Input::CannotCancel => {
                if let Phase::Cancelling { stop, .. } = &self.phase {
                    let stop = stop.clone();
                    self.signal_stop(stop, now, &mut actions);
                }
            }
            Input::Asking(asking) => {
                self.asking = asking;
                // The wait is not the agent's silence: its clock starts again after it.
                self.watchdog.observe(Activity::Stdout, now);
            }
        }
        actions
    }

    fn answer(&mut self) {
        let stop = match &self.phase {
            Phase::Starting | Phase::Running | Phase::Finishing { .. } => None,
            Phase::Cancelling { stop, .. } => Some(stop.clone()),
            Phase::Stopping { .. } | Phase::Draining { .. } | Phase::Ended { .. } => return,
        };
        self.answered = true;
        self.phase = Phase::Ended {
            exit: ExitInfo::default(),
            stop,
        };
    }

    /// Ends the agent with signals for `stop`: SIGTERM now, SIGKILL after the grace.
    fn signal_stop(&mut self, stop: Stop, now: Instant, actions: &mut Vec<Action>) {
        self.phase = Phase::Stopping {
            stop,
            kill_at: Some(now + self.limits.kill_grace),
        };
        actions.push(Action::Signal(Signal::SIGTERM));
    }

    /// How the turn ended, once it has: a stop runbook decided on wins over what the agent did,
    /// except that an agent ended after its final word keeps its own verdict.
    pub(crate) fn ending(&self, stream: StreamEnd) -> Ending {
        let Phase::Ended { exit, stop } = &self.phase else {
            unreachable!("a turn's ending is read once it has ended")
        };
        match stop {
            None if self.answered => Ending::of_answer(stream),
            None => Ending::of_agent(stream, *exit),
            Some(Stop::Limit { outcome, message }) => Ending {
                outcome: *outcome,
                message: message.clone(),
                exit: *exit,
            },
            Some(Stop::Finished) => Ending::after_final_word(stream, *exit),
        }
    }

    /// Whether the watchdog, the deadline and the budget apply.
    fn watched(&self) -> bool {
        matches!(self.phase, Phase::Starting | Phase::Running)
    }

    fn output(
        &mut self,
        stream: Stream,
        at: Instant,
        final_word: bool,
        spent: Spent,
        now: Instant,
        actions: &mut Vec<Action>,
    ) {
        // Output is activity in every phase (the status line says how long it has been quiet),
        // but only a working agent is judged by it.
        let what = match stream {
            Stream::Stdout => Activity::Stdout,
            Stream::Stderr => Activity::Stderr,
        };
        let withdrawn = self.watchdog.observe(what, at);
        if withdrawn && self.watched() {
            actions.push(Action::Resumed {
                by: what,
                cpu: None,
            });
        }
        if let Phase::Draining { stop: None, .. } = self.phase
            && !self.final_word
            && let Some(message) = self
                .limits
                .max_cost_usd
                .and_then(|max| over(spent, max, self.budget_name))
        {
            // Read after the agent exited, but still its spending: the budget holds to the end.
            self.end_leftovers(Outcome::BudgetExceeded, message, now, actions);
            return;
        }
        if !self.watched() {
            return;
        }
        self.phase = Phase::Running;
        self.final_word |= final_word;
        if final_word {
            self.phase = Phase::Finishing {
                by: now + self.limits.finish_grace,
            };
        } else if let Some(message) = self
            .limits
            .max_cost_usd
            .and_then(|max| over(spent, max, self.budget_name))
        {
            self.stop(Outcome::BudgetExceeded, message, now, actions);
        }
    }

    fn exited(&mut self, exit: ExitInfo, now: Instant) {
        let (stop, kill_at, killed) = match std::mem::replace(&mut self.phase, Phase::Starting) {
            Phase::Stopping { stop, kill_at } => (Some(stop), kill_at, kill_at.is_none()),
            Phase::Cancelling { stop, .. } => (Some(stop), None, false),
            Phase::Starting | Phase::Running | Phase::Finishing { .. } => (None, None, false),
            done @ (Phase::Draining { .. } | Phase::Ended { .. }) => {
                self.phase = done;
                return;
            }
        };
        self.phase = if !self.pipes_open {
            Phase::Ended { exit, stop }
        } else if killed {
            // The tree was killed already: what still holds the pipes is out of reach.
            Phase::Draining {
                exit,
                stop,
                linger_until: None,
                kill_at: None,
                read_until: Some(now + READ_AFTER_KILL),
            }
        } else {
            Phase::Draining {
                exit,
                stop,
                linger_until: Some(now + LINGER),
                kill_at,
                read_until: None,
            }
        };
    }

    fn pipes_closed(&mut self) {
        self.pipes_open = false;
        if let Phase::Draining { exit, stop, .. } = &self.phase {
            self.phase = Phase::Ended {
                exit: *exit,
                stop: stop.clone(),
            };
        }
    }

    /// A signal to runbook means the run is to end. A stop already under way for a limit keeps
    /// its reason but loses its grace: SIGKILL at once. Otherwise the turn is interrupted.
    fn signal(&mut self, got: Received, now: Instant, actions: &mut Vec<Action>) {
        let message = got.message();
        self.halt(Outcome::Interrupted, message, true, now, actions);
    }

    /// Ends the run for `outcome`, in whatever phase. A stop already under way for a limit keeps
    /// its reason; `hurry` (a signal to runbook) also takes away its grace.
    fn halt(
        &mut self,
        outcome: Outcome,
        message: String,
        hurry: bool,
        now: Instant,
        actions: &mut Vec<Action>,
    ) {
        match &mut self.phase {
            Phase::Ended { .. } => {}
            Phase::Stopping {
                stop: Stop::Limit { .. },
                kill_at,
            } => {
                if hurry {
                    *kill_at = None;
                    actions.push(Action::Signal(Signal::SIGKILL));
                }
            }
            Phase::Draining {
                stop: Some(Stop::Limit { .. }),
                kill_at,
                read_until,
                ..
            } => {
                if hurry {
                    *kill_at = None;
                    read_until.get_or_insert(now + READ_AFTER_KILL);
                    actions.push(Action::Signal(Signal::SIGKILL));
                }
            }
            Phase::Draining { .. } => {
                // The agent is gone; what it left behind is ended now, and the run with it.
                self.end_leftovers(outcome, message, now, actions);
            }
            Phase::Cancelling { stop, .. } => {
                // Asked to hurry: no more waiting for the cancel.
                if hurry {
                    let stop = stop.clone();
                    self.phase = Phase::Stopping {
                        stop,
                        kill_at: None,
                    };
                    actions.push(Action::Signal(Signal::SIGKILL));
                }
            }
            Phase::Starting
            | Phase::Running
            | Phase::Finishing { .. }
            | Phase::Stopping {
                stop: Stop::Finished,
                ..
            } => self.stop(outcome, message, now, actions),
        }
    }

    fn tick(&mut self, cpu: Option<Duration>, now: Instant, actions: &mut Vec<Action>) {
        match &mut self.phase {
            Phase::Starting | Phase::Running => self.watch(cpu, now, actions),
            Phase::Finishing { by } => {
                let message = if now >= *by {
                    format!(
                        "the agent printed its final result but had not exited after {}; ending it",
                        format::duration(self.limits.finish_grace)
                    )
                } else if self.deadline.is_some_and(|d| now >= d) {
                    "the run reached its --timeout after the agent's final result; ending it"
                        .to_owned()
                } else {
                    return;
                };
                self.phase = Phase::Stopping {
                    stop: Stop::Finished,
                    kill_at: Some(now + self.limits.kill_grace),
                };
                actions.push(Action::Announce {
                    reason: Outcome::Completed,
                    message,
                });
                actions.push(Action::Signal(Signal::SIGTERM));
            }
            Phase::Cancelling { stop, until } => {
                if now >= *until {
                    let stop = stop.clone();
                    self.signal_stop(stop, now, actions);
                }
            }
            Phase::Stopping { kill_at, .. } => {
                kill_when_due(kill_at, now, actions);
            }
            Phase::Draining {
                linger_until,
                kill_at,
                read_until,
                ..
            } => {
                let due = |t: Option<Instant>| t.is_some_and(|t| now >= t);
                if linger_until.is_some() && (due(*linger_until) || due(self.deadline)) {
                    *linger_until = None;
                    kill_at.get_or_insert(now + self.limits.kill_grace);
                    actions.push(Action::Signal(Signal::SIGTERM));
                }
                if kill_when_due(kill_at, now, actions) {
                    read_until.get_or_insert(now + READ_AFTER_KILL);
                }
                if due(*read_until) {
                    *read_until = None;
                    actions.push(Action::StopReading);
                }
            }
            Phase::Ended { .. } => {}
        }
    }

    /// The watchdog's and the deadline's turn, while the agent is at work.
    fn watch(&mut self, cpu: Option<Duration>, now: Instant, actions: &mut Vec<Action>) {
        if self.asking {
            // Waiting for a person, not for the agent.
            self.watchdog.observe(Activity::Stdout, now);
        }
        let share = cpu.and_then(|used| self.cpu.record(now, used));
        if let Some(share) = share.filter(|&s| s >= BUSY_CPU)
            && self.watchdog.observe(Activity::Cpu, now)
        {
            actions.push(Action::Resumed {
                by: Activity::Cpu,
                cpu: Some(share),
            });
        }
        if now >= self.next_cpu {
            self.next_cpu = now + self.cpu_every;
        }
        match self.watchdog.poll(now) {
            Verdict::Fine => {}
            Verdict::Warn { quiet } => actions.push(Action::Warn {
                quiet,
                timeout: self.watchdog.timeout(),
            }),
            Verdict::Fire { quiet } => {
                actions.push(Action::Hung(self.watchdog.quiet_times(now)));
                let message = format!(
                    "no activity for {}: the agent looks hung",
                    format::duration(quiet)
                );
                self.begin_stop(Outcome::Hung, message, now, actions);
                return;
            }
        }
        if self.deadline.is_some_and(|d| now >= d) {
            let message = "the run reached its --timeout".to_owned();
            self.stop(Outcome::TimedOut, message, now, actions);
        }
    }

    /// The agent has exited and the turn is to end as `outcome`: says so, ends what the agent
    /// left with SIGTERM at once (no more linger), and SIGKILL after the grace.
    fn end_leftovers(
        &mut self,
        outcome: Outcome,
        message: String,
        now: Instant,
        actions: &mut Vec<Action>,
    ) {
        let Phase::Draining {
            stop,
            linger_until,
            kill_at,
            ..
        } = &mut self.phase
        else {
            return;
        };
        *stop = Some(Stop::Limit {
            outcome,
            message: message.clone(),
        });
        *linger_until = None;
        kill_at.get_or_insert(now + self.limits.kill_grace);
        actions.push(Action::Announce {
            reason: outcome,
            message,
        });
        actions.push(Action::Signal(Signal::SIGTERM));
    }

    /// Stops the agent for `outcome`: says so, then SIGTERM, and SIGKILL after the grace.
    fn stop(&mut self, outcome: Outcome, message: String, now: Instant, actions: &mut Vec<Action>) {
        actions.push(Action::Announce {
            reason: outcome,
            message: message.clone(),
        });
        self.begin_stop(outcome, message, now, actions);
    }

    fn begin_stop(
        &mut self,
        outcome: Outcome,
        message: String,
        now: Instant,
        actions: &mut Vec<Action>,
    ) {
        let stop = Stop::Limit { outcome, message };
        if self.acp {
            // An ACP agent is asked to cancel first, and ended with signals if it does not.
            self.phase = Phase::Cancelling {
                stop,
                until: now + CANCEL_GRACE,
            };
            actions.push(Action::Cancel);
            return;
        }
        self.signal_stop(stop, now, actions);
    }
}

/// Why `spent` is over the budget `max`, if it is. Spending that has no bound is over any budget:
/// fail closed.
fn over(spent: Spent, max: f64, name: &str) -> Option<String> {
    match spent {
        Spent::AtLeast(cost) if cost > max => Some(format!(
            "cost {} crossed {name} ${max:.2}",
            crate::format::money(cost)
        )),
        Spent::AtLeast(_) => None,
        Spent::Unbounded(CostIssue::Infinite) => Some(format!(
            "the agent reported {}: over {name} ${max:.2}",
            CostIssue::Infinite.describe()
        )),
        Spent::Unbounded(issue) => Some(format!(
            "the agent reported {} and the model has no price to estimate it from: the run's spending can no longer be held to {name} ${max:.2}",
            issue.describe()
        )),
    }
}

/// SIGKILL once the grace after SIGTERM is over; whether it was sent now.
fn kill_when_due(kill_at: &mut Option<Instant>, now: Instant, actions: &mut Vec<Action>) -> bool {
    let due = kill_at.is_some_and(|t| now >= t);
    if due {
        *kill_at = None;
        actions.push(Action::Signal(Signal::SIGKILL));
    }
    due
}

#[cfg(test)]
mod tests;
