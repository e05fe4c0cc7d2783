//! The inactivity watchdog as a pure state machine over instants: no timers, no processes.
//!
//! Three signals count as activity: a stdout line, any stderr output, and the agent's process
//! tree using at least [`BUSY_CPU`] of a core over a sample (less is what a runtime uses while it
//! waits on something, and counts as silence). The watchdog warns at half the timeout, says so
//! when activity withdraws the warning, and fires at the full timeout of silence on all three.

use std::time::Duration;

use tokio::time::Instant;

use crate::event::{Diagnostic, millis};
use crate::stats::RunStats;

/// How many stderr lines a watchdog diagnostic quotes.
const DIAGNOSTIC_STDERR_LINES: usize = 5;

/// An activity signal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Activity {
    Stdout,
    Stderr,
    Cpu,
}

/// What the watchdog says at a given moment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    Fine,
    /// Quiet for a while: say so once.
    Warn {
        quiet: Duration,
    },
    /// Quiet for the whole timeout: stop the agent.
    Fire {
        quiet: Duration,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct Watchdog {
    timeout: Duration,
    last: [Instant; 3],
    warned: bool,
}

impl Watchdog {
    pub(crate) fn new(timeout: Duration, now: Instant) -> Self {
        Self {
            timeout,
            last: [now; 3],
            warned: false,
        }
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    /// Records activity on one signal; says whether it withdrew a warning given for the quiet
    /// spell it ends.
    pub(crate) fn observe(&mut self, what: Activity, at: Instant) -> bool {
        let slot = &mut self.last[what as usize];
        if at > *slot {
            *slot = at;
        }
        let withdrawn = self.warned && self.quiet_for(at) < self.warn_after();
        if withdrawn {
            self.warned = false;
        }
        withdrawn
    }

    /// How long a signal has been quiet.
    pub(crate) fn quiet(&self, what: Activity, now: Instant) -> Duration {
        now.saturating_duration_since(self.last[what as usize])
    }

    /// How long all signals have been quiet.
    pub(crate) fn quiet_for(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.last_activity())
    }

    fn last_activity(&self) -> Instant {
        self.last.iter().copied().max().unwrap_or_else(Instant::now)
    }

    fn warn_after(&self) -> Duration {
        self.timeout / 2
    }

    /// When the verdict can next change, if nothing happens in between.
    pub(crate) fn next_check(&self) -> Instant {
        let at = if self.warned {
            self.timeout
        } else {
            self.warn_after()
        };
        self.last_activity() + at
    }

    /// The verdict now; a warning is given once per quiet spell.
    pub(crate) fn poll(&mut self, now: Instant) -> Verdict {
        let quiet = self.quiet_for(now);
        if quiet >= self.timeout {
            Verdict::Fire { quiet }
        } else if quiet >= self.warn_after() && !self.warned {
            self.warned = true;
            Verdict::Warn { quiet }
        } else {
            Verdict::Fine
        }
    }
}

/// How long each activity signal had been quiet when the watchdog fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quiet {
    pub timeout: Duration,
    pub stdout: Duration,
    pub stderr: Duration,
    pub cpu: Duration,
}

impl Watchdog {
    /// Where each activity signal stands at `now`.
    pub(crate) fn quiet_times(&self, now: Instant) -> Quiet {
        Quiet {
            timeout: self.timeout,
            stdout: self.quiet(Activity::Stdout, now),
            stderr: self.quiet(Activity::Stderr, now),
            cpu: self.quiet(Activity::Cpu, now),
        }
    }
}

/// What the watchdog's verdict says: which signals were quiet, where the agent was, what it cost.
pub(crate) fn diagnostic(quiet: Quiet, totals: &RunStats) -> Diagnostic {
    let tail = &totals.stderr_tail;
    Diagnostic {
        timeout_ms: millis(quiet.timeout),
        stdout_quiet_ms: millis(quiet.stdout),
        stderr_quiet_ms: millis(quiet.stderr),
        cpu_quiet_ms: millis(quiet.cpu),
        last_event: totals.last_agent_event.map(str::to_owned),
        open_step: totals.step_open.then_some(totals.steps_started),
        completed_steps: totals.steps(),
        cost_usd: totals.cost(),
        stderr_tail: tail
            .iter()
            .skip(tail.len().saturating_sub(DIAGNOSTIC_STDERR_LINES))
            .cloned()
            .collect(),
        running_tool: totals.running_tool.clone(),
    }
}

/// The share of one core at or above which the agent's process tree counts as at work: above
/// what a Node.js or Bun agent uses while it waits on a stalled provider (at most 13% over any
/// second measured, about 2% typical), below what a tool that computes gets even on a machine
/// loaded five times over (22% or more). See docs/RELIABILITY.md, "What counts as activity", for
/// the numbers and how they were measured.
pub(crate) const BUSY_CPU: f64 = 0.20;

/// Reads the tree's CPU use sample by sample: the share of one core it used since the previous
/// sample. Each share is judged on its own, and the activity it shows dated at its end, so that
/// a stall is seen at most one sample after it began, whatever the tree did before.
#[derive(Debug, Clone)]
pub(crate) struct CpuGauge {
    /// The shortest span a share is read over: shorter ones, from wake-ups between samples, keep
    /// the baseline for the next.
    span: Duration,
    last: Option<(Instant, Duration)>,
}

impl CpuGauge {
    /// A gauge sampled every `every`.
    pub(crate) fn new(every: Duration) -> Self {
        Self {
            span: every / 2,
            last: None,
        }
    }

    /// Records the tree's total CPU time at `now`; returns the share of one core it used since the
    /// previous reading, once that spans long enough to tell.
    pub(crate) fn record(&mut self, now: Instant, used: Duration) -> Option<f64> {
        let Some((then, before)) = self.last else {
            self.last = Some((now, used));
            return None;
        };
        let span = now.saturating_duration_since(then);
        if span < self.span {
            return None;
        }
        self.last = Some((now, used));
        Some(used.saturating_sub(before).as_secs_f64() / span.as_secs_f64())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_millis(10);

    #[test]
    fn each_sample_reads_the_share_of_a_core_used_since_the_one_before() {
        let t0 = Instant::now();
        let mut cpu = CpuGauge::new(Duration::from_secs(1));
        assert_eq!(cpu.record(t0, TICK * 50), None, "no share from one reading");
        let s = Duration::from_secs(1);
        // Idle timers: one 10 ms tick a second.
        assert_eq!(cpu.record(t0 + s, TICK * 51), Some(0.01));
        // A busy second follows an idle one: read as busy at once, not averaged away.
        assert_eq!(cpu.record(t0 + s * 2, TICK * 151), Some(1.0));
        // ... and an idle one after it is idle at once, not kept busy by the second before.
        assert_eq!(cpu.record(t0 + s * 3, TICK * 151), Some(0.0));
    }

    #[test]
    fn a_wake_up_between_samples_keeps_the_baseline_for_the_next() {
        let t0 = Instant::now();
        let s = Duration::from_secs(1);
        let mut cpu = CpuGauge::new(s);
        cpu.record(t0, Duration::ZERO);
        assert_eq!(
            cpu.record(t0 + Duration::from_millis(100), TICK),
            None,
            "a tenth of a sample is too short to read a share from"
        );
        assert_eq!(cpu.record(t0 + s, TICK * 5), Some(0.05));
    }

    const T: Duration = Duration::from_secs(180);

    #[test]
    fn silence_warns_once_at_half_and_fires_at_the_timeout() {
        let t0 = Instant::now();
        let mut wd = Watchdog::new(T, t0);
        assert_eq!(wd.poll(t0 + Duration::from_secs(10)), Verdict::Fine);
        assert_eq!(wd.next_check(), t0 + T / 2);
        assert!(matches!(wd.poll(t0 + T / 2), Verdict::Warn { .. }));
        assert_eq!(
            wd.poll(t0 + T / 2 + Duration::from_secs(1)),
            Verdict::Fine,
            "warns only once"
        );
        assert_eq!(wd.next_check(), t0 + T);
        assert_eq!(wd.poll(t0 + T), Verdict::Fire { quiet: T });
    }

    #[test]
    fn any_signal_resets_the_clock_and_rearms_the_warning() {
        let t0 = Instant::now();
        let mut wd = Watchdog::new(T, t0);
        assert!(matches!(wd.poll(t0 + T / 2), Verdict::Warn { .. }));
        let t1 = t0 + Duration::from_secs(100);
        wd.observe(Activity::Cpu, t1);
        assert_eq!(
            wd.poll(t0 + T),
            Verdict::Fine,
            "busy CPU keeps the agent alive"
        );
        assert_eq!(
            wd.quiet(Activity::Stdout, t0 + T),
            T,
            "stdout stayed quiet all along"
        );
        assert!(
            matches!(wd.poll(t1 + T / 2), Verdict::Warn { .. }),
            "a new quiet spell warns again"
        );
        assert!(matches!(wd.poll(t1 + T), Verdict::Fire { .. }));
    }

    #[test]
    fn late_observations_never_move_the_clock_back() {
        let t0 = Instant::now();
        let mut wd = Watchdog::new(T, t0 + Duration::from_secs(5));
        wd.observe(Activity::Stderr, t0);
        assert_eq!(wd.quiet_for(t0 + Duration::from_secs(5)), Duration::ZERO);
    }
}
