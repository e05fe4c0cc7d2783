//! Loop and stuck detection: an agent busy doing the same thing again and again (the same call
//! with the same result, the same failing test after each patch, two calls in turn, empty
//! steps), seen in the universal event stream, so the same for every agent, live and in replay.
//!
//! The [`Detector`] is fed each of the agent's events by the dispatcher and answers with a
//! [`Verdict`] when a rule reaches a threshold: a warning, or (with [`Mode::Stop`]) a stop.
//! Counts are per turn. Only a result that did not change counts: a poll whose output moves on,
//! a provider's errors and retries, and refused calls never do.

mod calls;
mod monologue;
pub(crate) mod nudge;

use clap::ValueEnum;

use crate::event::{Event, EventKind, Stuck, StuckRule, ToolEnd};

/// What runbook does about an agent going round in circles (`--stuck`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub(crate) enum Mode {
    /// Nothing: no rule is looked at.
    Off,
    /// Warn, and let the agent go on.
    Warn,
    /// Warn, then stop the agent at a rule's stop threshold (the run ends `stuck`).
    #[default]
    Stop,
    /// As `stop`, but the first time the agent's session goes on with one prompt that says
    /// what it repeated; stuck again after it, the run ends `stuck`.
    Nudge,
}

/// When each rule warns and stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Thresholds {
    /// The same call with the same result, one after another.
    pub repeat: Level,
    /// The same shell command failing the same way within a turn.
    pub same_failure: Level,
    /// The same call ending in the same error, one after another.
    pub same_error: Level,
    /// A,B,A,B,…: the number of cycles.
    pub ping_pong: Level,
    /// Steps without a tool call whose text is empty or the same.
    pub monologue: Level,
}

/// A rule's warning and stop counts; `None` never.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Level {
    pub warn: Option<u32>,
    pub stop: Option<u32>,
}

impl Default for Thresholds {
    fn default() -> Self {
        Self::with_stops(Stops::default())
    }
}

/// The count at which each rule stops the agent (0: never), as configured; the warnings follow
/// from them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Stops {
    pub repeat: u32,
    pub same_failure: u32,
    pub same_error: u32,
    pub ping_pong: u32,
    pub monologue: u32,
}

impl Default for Stops {
    fn default() -> Self {
        Self {
            repeat: 5,
            same_failure: 5,
            same_error: 3,
            ping_pong: 3,
            monologue: 3,
        }
    }
}

impl Thresholds {
    /// Each rule stopping at its count in `stops`; `repeat` and `same_failure` warn two before
    /// (when that is 2 or more), the others stop without a warning.
    pub(crate) fn with_stops(stops: Stops) -> Self {
        let stop = |n: u32| (n > 0).then_some(n);
        let warned = |n: u32| Level {
            warn: n.checked_sub(2).filter(|w| *w >= 2),
            stop: stop(n),
        };
        let unwarned = |n: u32| Level {
            warn: None,
            stop: stop(n),
        };
        Self {
            repeat: warned(stops.repeat),
            same_failure: warned(stops.same_failure),
            same_error: unwarned(stops.same_error),
            ping_pong: unwarned(stops.ping_pong),
            monologue: unwarned(stops.monologue),
        }
    }
}

impl Thresholds {
    fn level(&self, rule: StuckRule) -> Level {
        match rule {
            StuckRule::Repeat => self.repeat,
            StuckRule::SameFailure => self.same_failure,
            StuckRule::SameError => self.same_error,
            StuckRule::PingPong => self.ping_pong,
            StuckRule::Monologue => self.monologue,
        }
    }
}

/// What a rule concluded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Verdict {
    Warning(Stuck),
    Stop(Stuck),
}

/// A count a rule reached: the rule, the count (cycles for `ping_pong`) and the event it began
/// at. What it is about (a [`Stuck`]) is made only of a count that reaches a threshold.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Reached {
    pub rule: StuckRule,
    pub count: u32,
    pub first_seq: u64,
}

/// The counts one event moved, in the order the rules are judged.
type Counts = [Option<Reached>; 4];

/// Watches one run's events.
pub(crate) struct Detector {
    mode: Mode,
    thresholds: Thresholds,
    turn: u32,
    calls: calls::Calls,
    monologue: monologue::Monologue,
    /// Whether this turn was stopped already: nothing more is said of it.
    stopped: bool,
    /// Whether the agent was nudged (`stuck.nudged`): what is said after says so.
    nudged: bool,
}

impl Detector {
    /// A detector; `None` when `mode` is [`Mode::Off`].
    pub(crate) fn new(mode: Mode, thresholds: Thresholds) -> Option<Self> {
        (mode != Mode::Off).then(|| Self {
            mode,
            thresholds,
            turn: 0,
            calls: calls::Calls::default(),
            monologue: monologue::Monologue::default(),
            stopped: false,
            nudged: false,
        })
    }

    /// One of the agent's events; a verdict when it makes a rule reach a threshold.
    pub(crate) fn observe(&mut self, ev: &Event) -> Option<Verdict> {
        if ev.turn.index != self.turn {
            self.turn = ev.turn.index;
            self.calls = calls::Calls::default();
            self.monologue = monologue::Monologue::default();
            self.stopped = false;
        }
        let (reached, call): (Counts, _) = match &ev.kind {
            EventKind::ToolCompleted(end) => {
                self.monologue.tool_call();
                (self.calls.completed(ev.seq, end), Some(end))
            }
            EventKind::StepStarted { .. } => {
                self.monologue.step_started();
                return None;
            }
            EventKind::Text { text } => {
                self.monologue.text(text);
                return None;
            }
            EventKind::ProviderError(_)
            | EventKind::ProviderRetry(_)
            | EventKind::Reasoning { .. } => {
                self.monologue.pass_over();
                return None;
            }
            EventKind::StuckNudged(_) => {
                self.nudged = true;
                return None;
            }
            EventKind::StepFinished(step) => (
                [
                    self.monologue.step_finished(ev.seq, &step.reason),
                    None,
                    None,
                    None,
                ],
                None,
            ),
            _ => return None,
        };
        self.judge(reached, ev.seq, call)
    }

    /// The strongest verdict among the counts reached: a stop before a warning. What it is
    /// about (`call`: the call that ended at `seq`, for the rules about calls) is made only then.
    fn judge(&mut self, reached: Counts, seq: u64, call: Option<&ToolEnd>) -> Option<Verdict> {
        if self.stopped {
            return None;
        }
        let nudged = self.nudged;
        let stuck = |r: Reached| Stuck {
            rule: r.rule,
            count: r.count,
            tool: call.map(|c| c.name.clone()),
            input: call.map(|c| calls::short(&c.input)),
            first_seq: r.first_seq,
            last_seq: seq,
            nudged,
        };
        let mut warning = None;
        for r in reached.into_iter().flatten() {
            let level = self.thresholds.level(r.rule);
            if level.stop == Some(r.count) {
                // A nudge is the session's to give, after the stop.
                if matches!(self.mode, Mode::Stop | Mode::Nudge) {
                    self.stopped = true;
                    return Some(Verdict::Stop(stuck(r)));
                }
                warning.get_or_insert(r);
            } else if level.warn == Some(r.count) {
                warning.get_or_insert(r);
            }
        }
        warning.map(|r| Verdict::Warning(stuck(r)))
    }
}

/// What the status line and the warnings say of it: `bash cargo test: same failure 3×`.
pub(crate) fn describe(stuck: &Stuck) -> String {
    let what = match stuck.rule {
        StuckRule::Repeat => "same call, same result",
        StuckRule::SameFailure => "same failure",
        StuckRule::SameError => "same error",
        StuckRule::PingPong => "back and forth, same results",
        StuckRule::Monologue => "steps without a tool call, saying nothing new",
    };
    let count = format!("{}×", stuck.count);
    match (&stuck.tool, &stuck.input) {
        (Some(tool), Some(input)) if !input.is_empty() => format!("{tool} {input}: {what} {count}"),
        (Some(tool), _) => format!("{tool}: {what} {count}"),
        (None, _) => format!("{what} {count}"),
    }
}

#[cfg(test)]
mod tests;
