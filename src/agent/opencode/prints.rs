//! The fingerprints of an OpenCode tool call (`input_hash`, `result_hash`), read from its
//! `tool_use` line a second time: only tool lines pay for it, and the parsers of every other
//! line stay as they are.

use std::borrow::Cow;

use serde::Deserialize;

use crate::agent::prints::refusal;
use crate::event::{EventKind, ToolStatus};
use crate::fingerprint::{self, Ended};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow)]
    part: Part<'a>,
}

#[derive(Deserialize)]
struct Part<'a> {
    #[serde(default, borrow)]
    tool: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    state: Option<State<'a>>,
}

#[derive(Deserialize)]
struct State<'a> {
    #[serde(default)]
    input: Option<serde_json::Value>,
    #[serde(default, borrow)]
    output: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    error: Option<Cow<'a, str>>,
    #[serde(default)]
    metadata: Option<Meta>,
}

#[derive(Deserialize)]
struct Meta {
    #[serde(default)]
    exit: Option<i64>,
}

/// Stamps the `tool.completed` among `events` (those made of `line`) with its fingerprints.
/// A denied call has none: it did not run, so there is nothing to compare. In a sandbox
/// (`sandboxed`), a command that failed by its exit code gets, in its error, the first line of
/// its output that tells of a refused operation: OpenCode keeps a command's stderr there, and
/// its error is otherwise only the exit code.
pub(super) fn stamp(line: &[u8], events: &mut [EventKind], sandboxed: bool) {
    let Some(end) = events.iter_mut().find_map(|e| match e {
        EventKind::ToolCompleted(end) if end.status != ToolStatus::Denied => Some(end),
        _ => None,
    }) else {
        return;
    };
    let Ok(Line { part }) = serde_json::from_slice::<Line<'_>>(line) else {
        return;
    };
    let Some(state) = part.state else {
        return;
    };
    let name = part.tool.as_deref().unwrap_or("unknown");
    let input = state.input.unwrap_or(serde_json::Value::Null);
    end.input_hash = Some(fingerprint::input(name, &input));
    let exit = state.metadata.and_then(|m| m.exit);
    let ended = match end.status {
        ToolStatus::Ok => Ended::Ok,
        _ => Ended::Error,
    };
    let output = state.output.or(state.error).unwrap_or_default();
    end.result_hash = Some(fingerprint::result(ended, exit, &output));
    if sandboxed && exit.is_some_and(|code| code != 0) {
        refusal(end, &output);
    }
}
