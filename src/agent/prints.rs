//! Fingerprints of calls in flight, for agents that tell a call's input when it starts and its
//! result later (Claude Code, Codex): the input's hash is kept from the start, and both are
//! stamped on the call's `tool.completed`. And, for every adapter, the refusal of the sandbox
//! a failed command's output tells of, added to its error ([`refusal`]).

use std::collections::HashMap;

use serde_json::Value;

use super::summary;
use crate::event::{EventKind, ToolEnd, ToolStatus};
use crate::fingerprint::{self, Ended};
use crate::sandbox::is_denial;

/// Longest refusal line added to a failed command's error.
const MAX_REFUSAL_CHARS: usize = 300;

/// Under `--sandbox`: adds to the error of a failed command (`end`) the first line of its
/// `output` that tells of a refused operation, unless its error already tells of one. An agent
/// keeps a command's stderr in its output, and its error is otherwise the exit code, the last
/// line or the head of a long output, where the refusal may not be.
pub(crate) fn refusal(end: &mut ToolEnd, output: &str) {
    if end.error.as_deref().is_some_and(is_denial) {
        return;
    }
    let Some(line) = output.lines().map(str::trim).find(|l| is_denial(l)) else {
        return;
    };
    let line = summary::truncate(line, MAX_REFUSAL_CHARS);
    end.error = Some(match end.error.take() {
        Some(error) => format!("{error}: {line}"),
        None => line,
    });
}

/// [`refusal`] for the `tool.completed` of `call_id` among `events`.
pub(crate) fn refusal_of(call_id: &str, output: &str, events: &mut [EventKind]) {
    let end = events.iter_mut().rev().find_map(|e| match e {
        EventKind::ToolCompleted(end) if end.call_id == call_id => Some(end),
        _ => None,
    });
    if let Some(end) = end {
        refusal(end, output);
    }
}

/// How many inputs are kept at once; past it they are all forgotten (those calls then go
/// without fingerprints, and are not counted).
const MAX_OPEN: usize = 1000;

#[derive(Default)]
pub(crate) struct InputPrints {
    open: HashMap<String, String>,
}

impl InputPrints {
    /// A call started with `input`.
    pub(crate) fn start(&mut self, call_id: &str, name: &str, input: &Value) {
        if self.open.len() >= MAX_OPEN {
            self.open.clear();
        }
        self.open
            .insert(call_id.to_owned(), fingerprint::input(name, input));
    }

    /// Stamps the `tool.completed` of `call_id` among `events` with its fingerprints: the
    /// input's from its start, the result's of `exit` and `output`. A refused call, or one
    /// whose start was not seen, gets none.
    pub(crate) fn finish(
        &mut self,
        call_id: &str,
        exit: Option<i64>,
        output: &str,
        events: &mut [EventKind],
    ) {
        if let Some(input) = self.open.remove(call_id) {
            stamp(call_id, input, exit, output, events);
        }
    }
}

/// Stamps the `tool.completed` of a call told whole at its end (its input and its result).
pub(crate) fn whole(
    call_id: &str,
    name: &str,
    input: &Value,
    exit: Option<i64>,
    output: &str,
    events: &mut [EventKind],
) {
    stamp(
        call_id,
        fingerprint::input(name, input),
        exit,
        output,
        events,
    );
}

/// Stamps the `tool.completed` of `call_id` among `events`, unless it was refused.
fn stamp(call_id: &str, input: String, exit: Option<i64>, output: &str, events: &mut [EventKind]) {
    let end = events.iter_mut().rev().find_map(|e| match e {
        EventKind::ToolCompleted(end) if end.call_id == call_id => Some(end),
        _ => None,
    });
    let Some(end) = end else {
        return;
    };
    let ended = match end.status {
        ToolStatus::Ok => Ended::Ok,
        ToolStatus::Error => Ended::Error,
        ToolStatus::Denied => return,
    };
    end.result_hash = Some(fingerprint::result(ended, exit, output));
    end.input_hash = Some(input);
}
