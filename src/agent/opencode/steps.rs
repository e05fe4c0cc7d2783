//! What both OpenCode generations' streams say of their steps: the step in progress, how the
//! last one ended, a failure, and from these whether the agent finished its work.

use crate::agent::StreamEnd;

/// The steps of a turn as the stream told them so far.
#[derive(Default)]
pub(super) struct StepState {
    /// The message id of the step in progress, if any.
    open: Option<Option<String>>,
    /// How many times the open step's model call was tried again.
    retries: u32,
    /// The reason the last finished step gave.
    last_reason: Option<String>,
    /// The failure the stream told, as `name: message`.
    error: Option<String>,
    /// Whether a call of the open (or last) step was denied permission.
    denied: bool,
}

impl StepState {
    /// Whether the last step finished the agent's work, and no step is open.
    pub(super) fn finished(&self) -> bool {
        self.open.is_none()
            && self
                .last_reason
                .as_deref()
                .is_some_and(|r| r != "tool-calls" && r != "length")
    }

    /// Whether the step of message `id` is the one in progress.
    pub(super) fn is_open(&self, id: Option<&str>) -> bool {
        matches!(&self.open, Some(open) if open.as_deref() == id)
    }

    /// A step of message `id` started.
    pub(super) fn open(&mut self, id: Option<String>) {
        self.open = Some(id);
        self.retries = 0;
        self.denied = false;
    }

    /// The open step's model call was tried again: the number of this attempt's retry.
    pub(super) fn retried(&mut self) -> u32 {
        self.retries += 1;
        self.retries
    }

    /// The open step ended, for `reason`.
    pub(super) fn close(&mut self, reason: &str) {
        self.open = None;
        self.last_reason = Some(reason.to_owned());
    }

    /// A call of the step was denied permission.
    pub(super) fn denied(&mut self) {
        self.denied = true;
    }

    /// The stream told of a failure.
    pub(super) fn fail(&mut self, message: String) {
        self.error = Some(message);
    }

    pub(super) fn failed(&self) -> bool {
        self.error.is_some()
    }

    /// How the stream ended, by the steps; `inside_step` says why when it ended inside one.
    pub(super) fn stream_end(&self, inside_step: &str) -> StreamEnd {
        if let Some(message) = &self.error {
            return StreamEnd::Failed(message.clone());
        }
        if self.open.is_some() {
            return StreamEnd::Truncated(inside_step.to_owned());
        }
        match self.last_reason.as_deref() {
            None => StreamEnd::Truncated("the agent finished no step".into()),
            Some("tool-calls") if self.denied => StreamEnd::Truncated(
                "the agent stopped after a tool call was denied permission".into(),
            ),
            Some("tool-calls") => {
                StreamEnd::Truncated("the last step asked for tool calls that never came".into())
            }
            Some("length") => StreamEnd::Truncated("the model hit its output token limit".into()),
            Some(_) => StreamEnd::Finished,
        }
    }
}
