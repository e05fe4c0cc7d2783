//! Fingerprints of calls in flight, for agents that tell a call's input when it starts and its
//! result later (Claude Code, Codex): the input's hash is kept from the start, and both are
//! stamped on the call's `tool.completed`.

use std::collections::HashMap;

use serde_json::Value;

use crate::event::{EventKind, ToolStatus};
use crate::fingerprint::{self, Ended};

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
