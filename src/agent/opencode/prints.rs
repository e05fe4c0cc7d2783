//! The fingerprints of an OpenCode tool call (`input_hash`, `result_hash`), made from the
//! `tool_use` line's own reading: its input whole, its exit code and its output.

use crate::agent::prints::refusal;
use crate::event::{ToolEnd, ToolStatus};
use crate::fingerprint::{self, Ended};

/// What a finished call read from its line: all its fingerprints are made of.
pub(super) struct Ran<'a> {
    /// The call's input as OpenCode printed it (`null` when it printed none).
    pub input: &'a serde_json::Value,
    pub exit: Option<i64>,
    /// Its output, or its error text when it has no output.
    pub output: &'a str,
}

/// Stamps the call's `end` with its fingerprints. A denied call has none: it did not run, so
/// there is nothing to compare. In a sandbox (`sandboxed`), a command that failed by its exit
/// code gets, in its error, the first line of its output that tells of a refused operation:
/// OpenCode keeps a command's stderr there, and its error is otherwise only the exit code.
pub(super) fn stamp(end: &mut ToolEnd, ran: &Ran<'_>, sandboxed: bool) {
    if end.status == ToolStatus::Denied {
        return;
    }
    end.input_hash = Some(fingerprint::input(&end.name, ran.input));
    let ended = match end.status {
        ToolStatus::Ok => Ended::Ok,
        _ => Ended::Error,
    };
    end.result_hash = Some(fingerprint::result(ended, ran.exit, ran.output));
    if sandboxed && ran.exit.is_some_and(|code| code != 0) {
        refusal(end, ran.output);
    }
}
