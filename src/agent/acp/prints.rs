//! Fingerprints of an ACP tool call (`input_hash`, `result_hash`): its input is gathered from
//! every update that tells some of it (`rawInput`, often split over the announcement and the
//! updates after), and hashed with the result when the call ends, as the native adapters do.

use std::collections::HashMap;

use serde_json::{Map, Value};

use crate::event::EventKind;

/// How many calls' inputs are kept at once; past it they are all forgotten (those calls then go
/// without fingerprints, and are not counted).
const MAX_OPEN: usize = 1000;

#[derive(Default)]
pub(super) struct CallInputs {
    open: HashMap<String, (String, Map<String, Value>)>,
}

impl CallInputs {
    /// A call shown as `name`, with what its input was said to be so far.
    pub(super) fn start(&mut self, call_id: &str, name: &str, input: &Map<String, Value>) {
        if self.open.len() >= MAX_OPEN {
            self.open.clear();
        }
        self.open
            .insert(call_id.to_owned(), (name.to_owned(), input.clone()));
    }

    /// More of an open call's input, from a later update's `rawInput`.
    pub(super) fn update(&mut self, call_id: &str, update: &Value) {
        let Some((_, input)) = self.open.get_mut(call_id) else {
            return;
        };
        if let Some(more) = update.get("rawInput").and_then(Value::as_object) {
            input.extend(more.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
    }

    /// Stamps the `tool.completed` of `call_id` among `events` with its fingerprints: its input,
    /// and its result as the update that ended it tells it (exit code and output).
    pub(super) fn finish(
        &mut self,
        call_id: &str,
        update: &Value,
        output: Option<&str>,
        events: &mut [EventKind],
    ) {
        let Some((name, input)) = self.open.remove(call_id) else {
            return;
        };
        let exit = update
            .pointer("/rawOutput/metadata/exit")
            .and_then(Value::as_i64);
        let input = Value::Object(input);
        crate::agent::prints::whole(
            call_id,
            &name,
            &input,
            exit,
            output.unwrap_or_default(),
            events,
        );
    }

    /// Forgets a call that ended without a result (closed unfinished).
    pub(super) fn forget(&mut self, call_id: &str) {
        self.open.remove(call_id);
    }
}
