//! Agent adapters: how to start each agent, and how its native output becomes universal events.

mod opencode;
mod summary;

use std::path::{Path, PathBuf};

use clap::ValueEnum;

use crate::event::{EventKind, Stream, UNPARSED_HEAD_BYTES, Unparsed, UnparsedReason};

pub(crate) use opencode::OpenCode;

/// The agents runbook knows how to drive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum AgentKind {
    /// OpenCode (`opencode run --format json`).
    Opencode,
}

impl AgentKind {
    pub(crate) fn adapter(self) -> &'static dyn Adapter {
        match self {
            AgentKind::Opencode => &OpenCode,
        }
    }
}

/// What one agent invocation should do.
pub(crate) struct Invocation<'a> {
    pub prompt: &'a str,
    pub model: Option<&'a str>,
    /// Passed to the agent verbatim, before the prompt.
    pub extra_args: &'a [String],
    /// Continue this agent session instead of starting a new one.
    pub resume_session: Option<&'a str>,
}

/// Facts a parser may use to shorten what it reports (paths relative to the work dir).
pub(crate) struct ParseContext {
    pub cwd: PathBuf,
}

/// One agent CLI: its command line and its output format.
pub(crate) trait Adapter: Send + Sync {
    /// The name used on the command line, in events and receipts.
    fn name(&self) -> &'static str;
    /// The program looked up on `PATH` when no binary is given.
    fn program(&self) -> &'static str;
    /// The environment variable naming the binary, e.g. `RUNBOOK_OPENCODE_BIN`.
    fn bin_env(&self) -> &'static str;
    /// How to install the agent, for the "not found" error.
    fn install_hint(&self) -> &'static str;
    /// Arguments after the program name.
    fn args(&self, inv: &Invocation<'_>) -> Vec<String>;
    /// Arguments that make the agent print its version and exit.
    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }
    fn stdout_parser(&self, ctx: ParseContext) -> Box<dyn StdoutParser>;
    fn stderr_parser(&self) -> Box<dyn StderrParser>;
}

/// Turns complete stdout lines into events; keeps whatever state the format needs.
pub(crate) trait StdoutParser: Send {
    /// One complete line without its newline. Never fails: unreadable lines become `unparsed`.
    fn line(&mut self, line: &[u8], out: &mut Vec<EventKind>);
    /// Called once at end of stream: did the agent's output end on finished work?
    fn end(&mut self) -> StreamEnd;
}

/// Turns stderr lines into events (every line becomes at least a `stderr` event).
pub(crate) trait StderrParser: Send {
    fn line(&mut self, line: &str, out: &mut Vec<EventKind>);
}

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

/// An `unparsed` event for a line, keeping only its head.
pub(crate) fn unparsed(
    stream: Stream,
    reason: UnparsedReason,
    line: &[u8],
    total_len: u64,
) -> EventKind {
    let mut end = line.len().min(UNPARSED_HEAD_BYTES);
    // Don't cut a character in two: drop an incomplete sequence at the very end of the head.
    if let Err(e) = std::str::from_utf8(&line[..end])
        && e.error_len().is_none()
    {
        end = e.valid_up_to();
    }
    EventKind::Unparsed(Unparsed {
        stream,
        reason,
        bytes: total_len,
        head: String::from_utf8_lossy(&line[..end]).into_owned(),
    })
}

/// Whether a line that failed to parse was not UTF-8 (rather than not JSON).
pub(crate) fn unreadable_reason(line: &[u8]) -> UnparsedReason {
    if std::str::from_utf8(line).is_err() {
        UnparsedReason::NotUtf8
    } else {
        UnparsedReason::NotJson
    }
}

/// `path` relative to `cwd` when it is inside it.
pub(crate) fn relative_to<'a>(path: &'a str, cwd: &Path) -> &'a str {
    Path::new(path)
        .strip_prefix(cwd)
        .ok()
        .and_then(|p| p.to_str())
        .filter(|p| !p.is_empty())
        .unwrap_or(path)
}
