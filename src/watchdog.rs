//! The inactivity watchdog as a pure state machine over instants: no timers, no processes.
//!
//! Three signals count as activity: a stdout line, any stderr output, and CPU time used by the
//! agent's process tree. The watchdog warns at half the timeout and fires at the full timeout of
//! silence on all three.

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

    /// Records activity on one signal.
    pub(crate) fn observe(&mut self, what: Activity, at: Instant) {
        let slot = &mut self.last[what as usize];
        if at > *slot {
            *slot = at;
        }
        if self.quiet_for(at) < self.warn_after() {
            self.warned = false;
        }
    }

    /// How long a signal has been quiet.
    pub(crate) fn quiet(&self, what: Activity, now: Instant) -> Duration {
        now.saturating_duration_since(self.last[what as usize])
    }

    /// How long all signals have been quiet.
    pub(crate) fn quiet_for(&self, now: Instant) -> Duration {
        now.saturating_duration_since(self.last_activity())
    }

    /// How long the agent has printed nothing, on either stream (CPU use aside).
    pub(crate) fn output_quiet_for(&self, now: Instant) -> Duration {
        self.quiet(Activity::Stdout, now)
            .min(self.quiet(Activity::Stderr, now))
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

/// A tree using at least this share of one core is busy, not hung.
const BUSY_CPU_SHARE: f64 = 0.03;
/// ... and at least this much CPU time over the span judged: the kernel counts CPU time in 10 ms
/// ticks, and an idle agent's timers cost about one tick a second, which over a short span would
/// look like a large share.
const MIN_BUSY_CPU: Duration = Duration::from_millis(30);
/// CPU time is judged over at least a fifth of the inactivity timeout, within these bounds: long
/// enough to count ticks, short enough that a busy agent is seen busy before the watchdog warns
/// (at half the timeout), however short the timeout.
const MIN_CPU_SPAN: (Duration, Duration) = (Duration::from_millis(200), Duration::from_secs(1));

/// Judges whether the agent's process tree is busy from successive readings of its CPU time,
/// over a sliding window (half the inactivity timeout, up to 10 seconds).
#[derive(Debug, Clone)]
pub(crate) struct CpuWindow {
    /// The shortest span a judgement is made over.
    span: Duration,
    window: Duration,
    samples: std::collections::VecDeque<(Instant, Duration)>,
}

impl CpuWindow {
    pub(crate) fn new(timeout: Duration) -> Self {
        let span = (timeout / 5).clamp(MIN_CPU_SPAN.0, MIN_CPU_SPAN.1);
        Self {
            span,
            window: (timeout / 2).clamp(span, Duration::from_secs(10)),
            samples: Default::default(),
        }
    }

    /// Records the tree's total CPU time at `now`; says whether the window shows a busy tree.
    pub(crate) fn record(&mut self, now: Instant, used: Duration) -> bool {
        // Samples from before a gap longer than the window (no tick came while output poured
        // in) say nothing about now.
        if self
            .samples
            .back()
            .is_some_and(|&(last, _)| now.saturating_duration_since(last) > self.window)
        {
            self.samples.clear();
        }
        self.samples.push_back((now, used));
        // Keep one sample at or before the window's start as the baseline.
        if let Some(start) = now.checked_sub(self.window) {
            while self.samples.len() > 2 && self.samples[1].0 <= start {
                self.samples.pop_front();
            }
        }
        let (then, before) = self.samples[0];
        let span = now.saturating_duration_since(then);
        let busy = MIN_BUSY_CPU.max(span.mul_f64(BUSY_CPU_SHARE));
        span >= self.span && used.saturating_sub(before) >= busy
    }

    /// Starts over (the agent is no longer watched).
    pub(crate) fn clear(&mut self) {
        self.samples.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TICK: Duration = Duration::from_millis(10);

    #[test]
    fn an_idle_agent_ticking_once_a_second_is_not_busy() {
        // Samples every 300 ms, as for a 3 s timeout; one 10 ms tick a second, like OpenCode
        // waiting on a stalled provider.
        let t0 = Instant::now();
        let mut cpu = CpuWindow::new(Duration::from_secs(3));
        let mut used = Duration::ZERO;
        for i in 1..=40u32 {
            let now = t0 + Duration::from_millis(300) * i;
            if i % 3 == 0 {
                used += TICK;
            }
            assert!(
                !cpu.record(now, used),
                "sample {i} called an idle agent busy"
            );
        }
    }

    #[test]
    fn at_short_timeouts_a_busy_tree_is_seen_busy_before_the_warning_and_an_idle_one_is_not() {
        for timeout in [1, 2, 3, 10].map(Duration::from_secs) {
            // Sampled as the turn samples: every tenth of the timeout (at least 100 ms).
            let every = (timeout / 10).max(Duration::from_millis(100));
            let t0 = Instant::now();
            let (mut busy, mut idle) = (CpuWindow::new(timeout), CpuWindow::new(timeout));
            let mut seen_busy = None;
            for i in 1..=40u32 {
                let now = t0 + every * i;
                // A whole core, from the first sample on.
                if busy.record(now, every * (i - 1)) && seen_busy.is_none() {
                    seen_busy = Some(every * i);
                }
                // A 10 ms tick a second.
                let ticks = (every * i).as_millis() as u32 / 1000;
                assert!(
                    !idle.record(now, TICK * ticks),
                    "{timeout:?}: idle called busy"
                );
            }
            let seen = seen_busy.expect("a busy tree is seen busy");
            assert!(
                seen < timeout / 2,
                "{timeout:?}: busy seen only after {seen:?}"
            );
        }
    }

    #[test]
    fn a_tree_using_a_few_percent_of_a_core_is_busy_once_a_second_has_been_seen() {
        let t0 = Instant::now();
        let mut cpu = CpuWindow::new(Duration::from_secs(180));
        // 5% of a core: 5 ticks a second, sampled every 100 ms.
        let mut busy_at = None;
        for i in 1..=30u32 {
            let now = t0 + Duration::from_millis(100) * i;
            let used = TICK * (i / 2);
            if cpu.record(now, used) && busy_at.is_none() {
                busy_at = Some(i);
            }
        }
        assert_eq!(
            busy_at,
            Some(11),
            "busy as soon as the window spans a second"
        );
        cpu.clear();
        assert!(
            !cpu.record(t0 + Duration::from_secs(10), TICK * 100),
            "no judgement from one sample"
        );
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
