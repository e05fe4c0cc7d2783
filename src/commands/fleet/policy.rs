//! What a scheduler should do when a task's run exits with each of runbook's exit codes: the
//! outcomes that are final, and those worth trying again.

use crate::exit::ExitStatus;

/// What a scheduler does with a task that exited so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Retry {
    /// It succeeded.
    Done,
    /// Final: another try would end the same way (budget, stuck, checks failed, bad input).
    Final,
    /// Worth another try, counted against the task's retries (an agent crash, runbook's own
    /// storage error).
    Again,
    /// Worth another try, not counted: the task was stopped from outside (the pod was evicted).
    Ignore,
}

/// Every exit code runbook has, in the order of the documented table.
pub(super) const EVERY: [ExitStatus; 13] = [
    ExitStatus::Completed,
    ExitStatus::AgentFailed,
    ExitStatus::Usage,
    ExitStatus::Hung,
    ExitStatus::Budget,
    ExitStatus::Timeout,
    ExitStatus::Internal,
    ExitStatus::Abandoned,
    ExitStatus::Aborted,
    ExitStatus::ChecksFailed,
    ExitStatus::Stuck,
    ExitStatus::AgentNotFound,
    ExitStatus::Interrupted,
];

/// What a scheduler does with the exit code of `status`.
pub(super) fn retry(status: ExitStatus) -> Retry {
    match status {
        ExitStatus::Completed => Retry::Done,
        ExitStatus::AgentFailed
        | ExitStatus::Hung
        | ExitStatus::Internal
        | ExitStatus::Abandoned => Retry::Again,
        ExitStatus::Interrupted => Retry::Ignore,
        ExitStatus::Usage
        | ExitStatus::Budget
        | ExitStatus::Timeout
        | ExitStatus::Aborted
        | ExitStatus::ChecksFailed
        | ExitStatus::Stuck
        | ExitStatus::AgentNotFound => Retry::Final,
    }
}

/// The exit codes `retry` sorts as `kind`, ascending.
pub(super) fn codes(kind: Retry) -> Vec<u8> {
    let mut out: Vec<u8> = EVERY
        .iter()
        .filter(|s| retry(**s) == kind)
        .map(|s| *s as u8)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The codes of the exit-code table `runbook --help` documents.
    fn documented() -> Vec<u8> {
        crate::exit::EXIT_CODES_HELP
            .lines()
            .filter_map(|l| l.split_whitespace().next()?.parse().ok())
            .collect()
    }

    #[test]
    fn every_documented_exit_code_has_a_retry_rule() {
        let mut known: Vec<u8> = EVERY.iter().map(|s| *s as u8).collect();
        known.sort_unstable();
        known.dedup();
        assert_eq!(
            known,
            documented(),
            "the exit-code table changed: sort each code in fleet::policy::retry and EVERY"
        );
        let sorted: usize = [Retry::Done, Retry::Final, Retry::Again, Retry::Ignore]
            .into_iter()
            .map(|k| codes(k).len())
            .sum();
        assert_eq!(sorted, known.len());
    }

    #[test]
    fn final_outcomes_are_not_tried_again_and_crashes_are() {
        for final_ in [
            ExitStatus::Budget,
            ExitStatus::Stuck,
            ExitStatus::ChecksFailed,
        ] {
            assert_eq!(retry(final_), Retry::Final);
        }
        for again in [ExitStatus::Internal, ExitStatus::AgentFailed] {
            assert_eq!(retry(again), Retry::Again);
        }
    }
}
