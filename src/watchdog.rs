//! The inactivity watchdog as a pure state machine over instants: no timers, no processes.
//!
//! Three signals count as activity: a stdout line, any stderr output, and CPU time used by the
//! agent's process tree. The watchdog warns at half the timeout and fires at the full timeout of
//! silence on all three.

use std::time::Duration;

use tokio::time::Instant;

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

#[cfg(test)]
mod tests {
    use super::*;

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
