//! OpenCode 2's stream lines as they are spelled, and the fields runbook knows of them.

use serde::Deserialize;

use super::super::{Cost, Span, WireTokens};

/// The fields of a line runbook reads or knows to leave.
const LINE_FIELDS: &[&str] = &["type", "timestamp", "sessionID", "part", "error"];
/// The fields of a line's `part` runbook reads or knows to leave.
const PART_FIELDS: &[&str] = &[
    "id",
    "partID",
    "sessionID",
    "messageID",
    "type",
    "text",
    "time",
    "tool",
    "state",
    "reason",
    "cost",
    "tokens",
    "snapshot",
    "metadata",
];
/// The fields of an `error` line's error.
const ERROR_FIELDS: &[&str] = &["type", "message", "status", "response"];

/// Whether the line, or its part or error, has a field runbook does not know.
pub(super) fn has_unknown_fields(line: &serde_json::Value) -> bool {
    let unknown = |value: Option<&serde_json::Value>, known: &[&str]| {
        value
            .and_then(serde_json::Value::as_object)
            .is_some_and(|o| o.keys().any(|k| !known.contains(&k.as_str())))
    };
    unknown(Some(line), LINE_FIELDS)
        || unknown(line.get("part"), PART_FIELDS)
        || unknown(line.get("error"), ERROR_FIELDS)
}

#[derive(Deserialize)]
pub(super) struct Line {
    #[serde(rename = "type")]
    pub kind: String,
    #[serde(rename = "sessionID", default)]
    pub session_id: Option<String>,
    #[serde(default)]
    pub part: Option<Part>,
    #[serde(default)]
    pub error: Option<ErrorLine>,
}

#[derive(Deserialize)]
pub(super) struct Part {
    /// On a tool line, the model's id for the call.
    #[serde(default)]
    pub id: Option<String>,
    #[serde(rename = "messageID", default)]
    pub message_id: Option<String>,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub tool: Option<String>,
    #[serde(default)]
    pub state: Option<State>,
    #[serde(default)]
    pub reason: Option<String>,
    #[serde(default)]
    pub tokens: Option<WireTokens>,
    #[serde(default)]
    pub cost: Option<Cost>,
}

#[derive(Deserialize, Default)]
pub(super) struct State {
    #[serde(default)]
    pub status: String,
    #[serde(default)]
    pub input: Option<serde_json::Value>,
    #[serde(default)]
    pub output: Option<String>,
    #[serde(default)]
    pub error: Option<String>,
    #[serde(default)]
    pub metadata: Option<Meta>,
    #[serde(default)]
    pub time: Option<Span>,
}

#[derive(Deserialize, Default)]
pub(super) struct Meta {
    #[serde(default)]
    pub metadata: Option<Inner>,
}

/// `state.metadata.metadata`: a command's exit code, a subagent's session.
#[derive(Deserialize, Default)]
pub(super) struct Inner {
    #[serde(default)]
    pub exit: Option<i64>,
    #[serde(rename = "sessionID", default)]
    pub session_id: Option<String>,
}

#[derive(Deserialize)]
pub(super) struct ErrorLine {
    #[serde(rename = "type", default)]
    pub kind: Option<String>,
    #[serde(default)]
    pub message: Option<String>,
    #[serde(default)]
    pub status: Option<u16>,
    #[serde(default)]
    pub response: Option<serde_json::Value>,
}
