//! How turns and runs end: a turn's outcome from the agent's own ending and what runbook decided,
//! and the events that say so. Live runs and replays both end through here.

use std::time::Duration;

use crate::event::{EventKind, ExitInfo, Outcome, millis};

/// The adapter's reading of how the output stream ended, before the exit status is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StreamEnd {
    /// The agent's own terminal marker arrived: the work is done.
    Finished,
    /// The stream stopped short of the agent's terminal marker; the message says where.
    Truncated(String),
    /// The agent reported a failure.
    Failed(String),
}

/// How a turn or a run ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Ending {
    pub outcome: Outcome,
    /// Why, in a sentence.
    pub message: String,
    /// The agent's exit (the last turn's, for a run).
    pub exit: ExitInfo,
}

impl Ending {
    /// This ending, unless a write to the run directory failed (`storage_error`, the first
    /// failure's message): a run that could not be recorded whole did not complete, whatever the
    /// agent did.
    pub(crate) fn unless_storage_failed(self, storage_error: Option<&String>) -> Self {
        match storage_error {
            Some(message) => Self::new(Outcome::StorageError, message.clone(), self.exit),
            None => self,
        }
    }

    pub(crate) fn new(outcome: Outcome, message: impl Into<String>, exit: ExitInfo) -> Self {
        Self {
            outcome,
            message: message.into(),
            exit,
        }
    }

    /// How the agent's own ending reads, when runbook did not stop it. Fail closed: `completed`
    /// needs a clean exit and a stream that reached the agent's final word.
    pub(crate) fn of_agent(stream: StreamEnd, exit: ExitInfo) -> Self {
        let (outcome, message) = match stream {
            StreamEnd::Failed(message) => (Outcome::AgentError, message),
            _ if exit.signal.is_some() => (Outcome::Killed, format!("the agent was {exit}")),
            // Neither a code nor a signal (a replay whose recorded exit cannot be read): not a
            // clean exit.
            _ if exit.code.is_none() => (
                Outcome::AgentError,
                "the agent's exit status is unknown".to_owned(),
            ),
            _ if exit.code != Some(0) => {
                (Outcome::AgentError, format!("the agent failed with {exit}"))
            }
            StreamEnd::Truncated(message) => (Outcome::Truncated, message),
            StreamEnd::Finished => (Outcome::Completed, "the agent finished".to_owned()),
        };
        Self::new(outcome, message, exit)
    }

    /// How an ACP agent's answer to the turn's prompt reads: its process is still running, and
    /// has no exit to tell.
    pub(crate) fn of_answer(stream: StreamEnd) -> Self {
        let (outcome, message) = match stream {
            StreamEnd::Finished => (Outcome::Completed, "the agent finished".to_owned()),
            StreamEnd::Truncated(message) => (Outcome::Truncated, message),
            StreamEnd::Failed(message) => (Outcome::AgentError, message),
        };
        Self::new(outcome, message, ExitInfo::default())
    }

    /// An agent runbook ended because it lingered after its final word: its own verdict stands,
    /// and the signal that ended it was runbook's, not a crash.
    pub(crate) fn after_final_word(stream: StreamEnd, exit: ExitInfo) -> Self {
        match stream {
            StreamEnd::Finished => Self::new(
                Outcome::Completed,
                "the agent finished (it lingered after its final result and was ended)",
                exit,
            ),
            other => {
                let clean = ExitInfo {
                    code: Some(0),
                    signal: None,
                };
                Self {
                    exit,
                    ..Self::of_agent(other, clean)
                }
            }
        }
    }

    /// A turn whose agent could not be started at all: still a finished run with a receipt.
    pub(crate) fn not_started(error: &anyhow::Error) -> Self {
        Self::new(
            Outcome::AgentError,
            format!("{error:#}"),
            ExitInfo::default(),
        )
    }

    pub(crate) fn is_completed(&self) -> bool {
        self.outcome == Outcome::Completed
    }

    /// The turn's last event: `turn.completed`, or `turn.failed` with why.
    pub(crate) fn turn_event(&self) -> EventKind {
        if self.is_completed() {
            EventKind::TurnCompleted { exit: self.exit }
        } else {
            EventKind::TurnFailed {
                outcome: self.outcome,
                message: self.message.clone(),
                exit: self.exit,
            }
        }
    }

    /// The run's last event, `run.finished`, after `took`.
    pub(crate) fn run_event(self, took: Duration) -> EventKind {
        EventKind::RunFinished {
            outcome: self.outcome,
            message: self.message,
            duration_ms: millis(took),
            exit: self.exit,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exit(code: i32) -> ExitInfo {
        ExitInfo {
            code: Some(code),
            signal: None,
        }
    }

    fn outcome(stream: StreamEnd, exit: ExitInfo) -> Outcome {
        Ending::of_agent(stream, exit).outcome
    }

    #[test]
    fn only_a_clean_exit_after_finished_work_is_completed() {
        assert_eq!(outcome(StreamEnd::Finished, exit(0)), Outcome::Completed);
        assert_eq!(outcome(StreamEnd::Finished, exit(2)), Outcome::AgentError);
        assert_eq!(
            outcome(StreamEnd::Truncated("x".into()), exit(0)),
            Outcome::Truncated
        );
        assert_eq!(
            outcome(StreamEnd::Failed("boom".into()), exit(1)),
            Outcome::AgentError
        );
        let killed = ExitInfo {
            code: None,
            signal: Some(9),
        };
        assert_eq!(outcome(StreamEnd::Finished, killed), Outcome::Killed);
        let unknown = Ending::of_agent(StreamEnd::Finished, ExitInfo::default());
        assert_eq!(
            (unknown.outcome, unknown.message.as_str()),
            (Outcome::AgentError, "the agent's exit status is unknown")
        );
    }

    #[test]
    fn an_agent_ended_after_its_final_word_keeps_its_own_verdict() {
        let ended = ExitInfo {
            code: None,
            signal: Some(15),
        };
        let done = Ending::after_final_word(StreamEnd::Finished, ended);
        assert_eq!(done.outcome, Outcome::Completed);
        assert_eq!(done.exit, ended, "the receipt still shows the signal");
        let failed = Ending::after_final_word(StreamEnd::Failed("no".into()), ended);
        assert_eq!(
            (failed.outcome, failed.message.as_str()),
            (Outcome::AgentError, "no")
        );
    }

    #[test]
    fn the_turn_event_says_failed_with_the_reason_unless_completed() {
        assert_eq!(
            Ending::new(Outcome::Completed, "ok", exit(0)).turn_event(),
            EventKind::TurnCompleted { exit: exit(0) }
        );
        assert_eq!(
            Ending::new(Outcome::Hung, "quiet", exit(1)).turn_event(),
            EventKind::TurnFailed {
                outcome: Outcome::Hung,
                message: "quiet".into(),
                exit: exit(1),
            }
        );
    }
}
