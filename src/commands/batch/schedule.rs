//! Which queued task starts next: at most `-j` at once, none once `--max-fail` tasks failed,
//! none that the batch's budget could not hold, none of an agent being rate-limited, none of an
//! agent whose first task has not said its first word yet.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long an agent counts as rate-limited after a 429 that gave no delay of its own.
pub(super) const RATE_LIMIT_HOLD: Duration = Duration::from_secs(30);

/// How long an agent's first task keeps the agent's other tasks waiting when it says nothing.
/// An agent's first task starts alone: agents sharing one home set up their state when they
/// start (OpenCode creates and migrates its SQLite database, and two doing so at once fail),
/// so the others start once it has spoken; a silent agent does not hold the queue for long.
pub(super) const START_HOLD: Duration = Duration::from_secs(20);

/// A queued task, as the scheduler sees it.
#[derive(Debug, Clone)]
pub(super) struct Candidate<'a> {
    pub agent: &'a str,
    pub max_cost: Option<f64>,
}

/// What holds the queue back.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Hold {
    /// `-j` tasks are running.
    Full,
    /// The budget could be crossed: what was spent, what the running tasks may still spend,
    /// and the cap of the first task held back (`None`: it has no cap of its own).
    Budget {
        spent: f64,
        reserved: f64,
        next: Option<f64>,
    },
    /// Every queued task is of an agent being rate-limited.
    RateLimited(String),
}

/// The decision for the queue.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Next {
    /// Start the queued task at this index, with this budget passed to it (`--max-cost`) when
    /// it has none of its own.
    Start(usize, Option<f64>),
    /// Wait: a running task's end may change the answer.
    Wait(Hold),
    /// No queued task can ever start: the budget is spent, or `--max-fail` was reached.
    Stop(Stopped),
}

/// Why the rest of the queue never starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Stopped {
    Budget,
    MaxFail,
}

/// The batch's state the decision rests on.
#[derive(Debug, Default)]
pub(super) struct Scheduler {
    pub jobs: usize,
    pub max_fail: Option<usize>,
    pub budget: Option<f64>,
    /// Spent by the tasks that ended (a cost not known counts as the task's cap).
    pub spent: f64,
    /// The caps of the running tasks.
    pub running: Vec<f64>,
    pub failed: usize,
    /// Agents being rate-limited, until when.
    pub limited: HashMap<String, Instant>,
    /// Agents whose first task has not spoken yet, until when that holds their other tasks.
    pub starting: HashMap<String, Instant>,
}

impl Scheduler {
    /// What to do with `queue` now.
    pub(super) fn next(&self, queue: &[Candidate<'_>], now: Instant) -> Next {
        if self.max_fail.is_some_and(|m| self.failed >= m) {
            return Next::Stop(Stopped::MaxFail);
        }
        if queue.is_empty() || self.running.len() >= self.jobs {
            return Next::Wait(Hold::Full);
        }
        let limited = |agent: &str| self.limited.get(agent).is_some_and(|until| *until > now);
        let starting = |agent: &str| self.starting.get(agent).is_some_and(|until| *until > now);
        let mut hold = None;
        for (i, task) in queue.iter().enumerate() {
            if starting(task.agent) {
                continue;
            }
            if limited(task.agent) {
                hold.get_or_insert(Hold::RateLimited(task.agent.to_owned()));
                continue;
            }
            match self.fits(task.max_cost) {
                Ok(cap) => return Next::Start(i, cap),
                Err(budget) => {
                    if !matches!(hold, Some(Hold::Budget { .. })) {
                        hold = Some(budget);
                    }
                }
            }
        }
        match hold {
            // Nothing runs: no end will free any budget.
            Some(Hold::Budget { .. }) if self.running.is_empty() => Next::Stop(Stopped::Budget),
            Some(hold) => Next::Wait(hold),
            None => Next::Wait(Hold::Full),
        }
    }

    /// Whether a task with this cap fits the budget: `Ok` with the cap to give it when it
    /// has none (what is left, and only when nothing else runs).
    fn fits(&self, cap: Option<f64>) -> Result<Option<f64>, Hold> {
        let Some(budget) = self.budget else {
            return Ok(None);
        };
        let reserved: f64 = self.running.iter().sum();
        let left = budget - self.spent - reserved;
        let hold = || Hold::Budget {
            spent: self.spent,
            reserved,
            next: cap,
        };
        match cap {
            Some(cap) if cap <= left + 1e-9 => Ok(None),
            None if self.running.is_empty() && left > 1e-9 => Ok(Some(left)),
            _ => Err(hold()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn task(agent: &str, max_cost: Option<f64>) -> Candidate<'_> {
        Candidate { agent, max_cost }
    }

    #[test]
    fn a_task_waits_while_the_first_one_of_its_agent_has_not_spoken() {
        let now = Instant::now();
        let mut s = Scheduler {
            jobs: 4,
            ..Scheduler::default()
        };
        s.starting.insert("opencode".into(), now + START_HOLD);
        let queue = [task("opencode", None), task("claude", None)];
        assert_eq!(
            s.next(&queue, now),
            Next::Start(1, None),
            "another agent starts"
        );
        assert_eq!(s.next(&queue[..1], now), Next::Wait(Hold::Full));
        assert_eq!(
            s.next(&queue[..1], now + START_HOLD),
            Next::Start(0, None),
            "a silent agent holds the others only so long"
        );
        s.starting.clear();
        assert_eq!(s.next(&queue[..1], now), Next::Start(0, None));
    }

    #[test]
    fn no_task_starts_that_could_cross_the_budget() {
        let now = Instant::now();
        let mut s = Scheduler {
            jobs: 4,
            budget: Some(1.0),
            ..Scheduler::default()
        };
        let queue = [
            task("a", Some(0.4)),
            task("a", Some(0.4)),
            task("a", Some(0.4)),
        ];
        assert_eq!(s.next(&queue, now), Next::Start(0, None));
        s.running = vec![0.4, 0.4];
        assert_eq!(
            s.next(&queue, now),
            Next::Wait(Hold::Budget {
                spent: 0.0,
                reserved: 0.8,
                next: Some(0.4)
            })
        );
        // A smaller one behind it may start.
        let queue = [task("a", Some(0.4)), task("a", Some(0.1))];
        assert_eq!(s.next(&queue, now), Next::Start(1, None));
        // Spent and nothing running: it never starts.
        s.running.clear();
        s.spent = 0.7;
        assert_eq!(s.next(&queue[..1], now), Next::Stop(Stopped::Budget));
    }

    #[test]
    fn a_task_without_a_cap_starts_alone_with_what_is_left() {
        let now = Instant::now();
        let mut s = Scheduler {
            jobs: 4,
            budget: Some(2.0),
            spent: 0.5,
            ..Scheduler::default()
        };
        let queue = [task("a", None)];
        assert_eq!(s.next(&queue, now), Next::Start(0, Some(1.5)));
        s.running = vec![0.2];
        assert!(matches!(
            s.next(&queue, now),
            Next::Wait(Hold::Budget { .. })
        ));
    }

    #[test]
    fn jobs_max_fail_and_rate_limits_hold_the_queue() {
        let now = Instant::now();
        let mut s = Scheduler {
            jobs: 1,
            max_fail: Some(2),
            ..Scheduler::default()
        };
        let queue = [task("claude", None), task("codex", None)];
        s.running = vec![0.0];
        assert_eq!(s.next(&queue, now), Next::Wait(Hold::Full));
        s.running.clear();
        s.limited
            .insert("claude".into(), now + Duration::from_secs(5));
        assert_eq!(s.next(&queue, now), Next::Start(1, None));
        assert_eq!(
            s.next(&queue[..1], now),
            Next::Wait(Hold::RateLimited("claude".into()))
        );
        assert_eq!(
            s.next(&queue[..1], now + Duration::from_secs(6)),
            Next::Start(0, None)
        );
        s.failed = 2;
        assert_eq!(s.next(&queue, now), Next::Stop(Stopped::MaxFail));
    }
}
