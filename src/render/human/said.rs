//! What the view has already said of why the run is ending, so that its last line does not
//! say it again: a stop runbook announced, the watchdog's diagnosis, a plan not approved, a
//! repair that stopped, an error of the agent's or its provider's, a file of the run directory
//! that could not be written.

use crate::event::{Decision, EventKind, Outcome, RepairStop};

/// The reasons told so far.
#[derive(Debug, Default)]
pub(super) struct Said {
    /// Messages told word for word (a stop's, a write that failed).
    messages: Vec<String>,
    /// Endings told in words of their own (the watchdog's `no activity for …`, `plan not
    /// approved`).
    outcomes: Vec<Outcome>,
}

/// How many reasons are kept: a run tells a few at most.
const KEPT: usize = 16;

impl Said {
    /// Notes the reason `kind` tells, if it tells one.
    pub(super) fn note(&mut self, kind: &EventKind) {
        match kind {
            EventKind::StopRequested { message, .. } => self.message(message.clone()),
            EventKind::StorageFailed { path, error } => {
                self.message(format!("cannot write {path}: {error}"));
            }
            EventKind::RepairFinished { attempts, stopped } if *stopped != RepairStop::Passed => {
                self.message(super::checks::repair_stopped(*attempts, *stopped));
            }
            // An error the agent or its provider told, on one line as the view showed it.
            EventKind::ProviderError(e) if !e.message.contains('\n') => {
                self.message(format!("{}: {}", e.name, e.message));
            }
            EventKind::AgentError { name, message } if !message.contains('\n') => {
                self.message(format!("{name}: {message}"));
                self.message(message.clone());
            }
            EventKind::WatchdogFired(_) => self.outcome(Outcome::Hung),
            EventKind::PlanDecided(d) if d.decision == Decision::Abort => {
                self.outcome(Outcome::Aborted);
            }
            _ => {}
        }
    }

    fn message(&mut self, message: String) {
        if self.messages.len() < KEPT {
            self.messages.push(message);
        }
    }

    fn outcome(&mut self, outcome: Outcome) {
        if !self.outcomes.contains(&outcome) {
            self.outcomes.push(outcome);
        }
    }

    /// What is left to say of why a run ended as `outcome` with `message`: the clauses of the
    /// message (`; ` between them) not said yet; `None` when all of it was.
    pub(super) fn unsaid(&self, outcome: Outcome, message: &str) -> Option<String> {
        if self.outcomes.contains(&outcome) || self.messages.iter().any(|m| m == message) {
            return None;
        }
        let left: Vec<&str> = message
            .split("; ")
            .filter(|clause| {
                !clause.trim().is_empty() && !self.messages.iter().any(|m| m == clause)
            })
            .collect();
        (!left.is_empty()).then(|| left.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_is_told_by_its_message_or_by_an_ending_said_in_other_words() {
        let mut said = Said::default();
        let ctrl_c = "interrupted by Ctrl-C (SIGINT)";
        assert_eq!(
            said.unsaid(Outcome::Interrupted, ctrl_c).as_deref(),
            Some(ctrl_c)
        );
        said.note(&EventKind::StopRequested {
            reason: Outcome::Interrupted,
            message: ctrl_c.to_owned(),
        });
        assert_eq!(said.unsaid(Outcome::Interrupted, ctrl_c), None);
        let exited = "the agent exited with code 1";
        assert_eq!(
            said.unsaid(Outcome::AgentError, exited).as_deref(),
            Some(exited)
        );
        said.note(&EventKind::StorageFailed {
            path: "/runs/x/events.ndjson".to_owned(),
            error: "No space left on device".to_owned(),
        });
        let storage = "cannot write /runs/x/events.ndjson: No space left on device";
        assert_eq!(said.unsaid(Outcome::StorageError, storage), None);
        // The provider's error the agent ended with was said as it came.
        said.note(&EventKind::ProviderError(crate::event::ProviderError {
            name: "APIError".to_owned(),
            message: "internal server error".to_owned(),
            status: Some(500),
            retryable: Some(true),
        }));
        assert_eq!(
            said.unsaid(Outcome::AgentError, "APIError: internal server error"),
            None
        );
        // A repair that stopped was said: only the rest of the message is left.
        said.note(&EventKind::RepairFinished {
            attempts: 1,
            stopped: RepairStop::SameFailures,
        });
        assert_eq!(
            said.unsaid(
                Outcome::ChecksFailed,
                "the task completed, but the check `lint` failed; repair stopped after 1 \
                 attempt: the last attempt left the same failures"
            )
            .as_deref(),
            Some("the task completed, but the check `lint` failed")
        );
    }
}
