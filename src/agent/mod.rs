//! Agent adapters: how to start each agent, and how its native output becomes universal events.

pub(crate) mod acp;
mod claude;
mod codex;
mod feed;
mod generic;
pub(crate) mod handed;
mod late;
mod opencode;
mod opencode_service;
pub(crate) mod own_paths;
mod prints;
mod reported;
pub(crate) mod scan;
mod summary;
mod tools;
pub(crate) mod versions;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) use crate::agent_kind::{AgentKind, Permissions};
use crate::event::{EventKind, Stream, UNPARSED_HEAD_BYTES, Unparsed, UnparsedReason};
pub(crate) use crate::lifecycle::StreamEnd;
use crate::prices::PriceTable;

pub(crate) use claude::Claude;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use claude::fast_path_agrees as claude_fast_path_agrees;
pub(crate) use codex::Codex;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use codex::fast_path_agrees as codex_fast_path_agrees;
pub(crate) use feed::{StderrFeed, StdoutFeed};
pub(crate) use generic::Generic;
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use generic::fast_path_agrees as generic_fast_path_agrees;
pub(crate) use opencode::OpenCode;

impl AgentKind {
    pub(crate) fn adapter(self) -> &'static dyn Adapter {
        match self {
            AgentKind::Opencode => &OpenCode,
            AgentKind::Claude => &Claude,
            AgentKind::Codex => &Codex,
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
    pub permissions: Permissions,
}

/// What a parser may need beyond the lines: the work dir (to shorten paths), the model and the
/// price table (to estimate costs the agent does not report).
#[derive(Clone)]
pub(crate) struct ParseContext {
    pub cwd: PathBuf,
    pub model: Option<String>,
    pub prices: Arc<PriceTable>,
    /// Where an ACP agent's parser hands the messages its client must answer.
    pub inbox: Option<acp::Inbox>,
    /// What the ACP client tells the parser (refused calls, the prompt in flight).
    pub told: Option<acp::Shared>,
    /// Whether the agent runs in `--sandbox`: a failed command's output is then searched for
    /// the refusal that failed it.
    pub sandboxed: bool,
    /// Where the parser leaves, at the stream's end, what to ask the agent's binary once it has
    /// exited (see [`Finisher`]).
    pub finishing: Option<FinisherSlot>,
}

/// A question to the agent's own binary once it has exited, for what its stream left out, and
/// the reading of its answer.
pub(crate) trait Finisher: Send {
    /// The arguments of the command (the agent's program, environment and working directory).
    fn args(&self) -> Vec<String>;
    /// What the command printed (`Err`: why it could not be had) read into `out`; how the
    /// stream ended (`end`, as the parser read it) in its light.
    fn finish(
        self: Box<Self>,
        printed: Result<Vec<u8>, String>,
        end: StreamEnd,
        out: &mut Vec<EventKind>,
    ) -> StreamEnd;
}

/// Where a parser leaves its [`Finisher`] for the supervisor.
pub(crate) type FinisherSlot = Arc<std::sync::Mutex<Option<Box<dyn Finisher>>>>;

impl ParseContext {
    pub(crate) fn new(cwd: PathBuf) -> Self {
        Self {
            cwd,
            model: None,
            prices: Arc::default(),
            inbox: None,
            told: None,
            sandboxed: false,
            finishing: None,
        }
    }
}

/// How an agent CLI is named, found and installed.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Cli {
    /// The name used on the command line, in events and receipts.
    pub name: &'static str,
    /// The program looked up on `PATH` when no binary is given.
    pub program: &'static str,
    /// How to install the agent, for the "not found" error.
    pub install_hint: &'static str,
}

/// The [`Cli`] of an agent installed with npm, named after its program, whose binary can also be
/// given in `bin_env`.
macro_rules! npm_cli {
    (program: $program:literal, package: $package:literal, bin_env: $bin_env:literal) => {
        $crate::agent::Cli {
            name: $program,
            program: $program,
            install_hint: concat!(
                "install it with `npm install -g ",
                $package,
                "`, or point --agent-bin / ",
                $bin_env,
                " at it"
            ),
        }
    };
}
use npm_cli;

/// One agent CLI: its command line and its output format.
pub(crate) trait Adapter: Send + Sync {
    /// Its name, program and install hint.
    fn cli(&self) -> Cli;
    /// The name used on the command line, in events and receipts.
    fn name(&self) -> &'static str {
        self.cli().name
    }
    /// The program looked up on `PATH` when no binary is given.
    fn program(&self) -> &'static str {
        self.cli().program
    }
    /// How to install the agent, for the "not found" error.
    fn install_hint(&self) -> &'static str {
        self.cli().install_hint
    }
    /// Arguments after the program name.
    fn args(&self, inv: &Invocation<'_>) -> Vec<String>;
    /// Environment variables the invocation needs on top of runbook's own.
    fn env(&self, _inv: &Invocation<'_>) -> Vec<(String, String)> {
        Vec::new()
    }
    /// Refuses an invocation the agent is known to refuse, with what to do instead.
    fn preflight(&self, _inv: &Invocation<'_>) -> Result<(), String> {
        Ok(())
    }
    /// Arguments that make the agent print its version and exit.
    fn version_args(&self) -> &'static [&'static str] {
        &["--version"]
    }
    /// Whether the agent prints each model call (step) as it happens; one that does not
    /// (Codex) has an unknown number of steps, never zero.
    fn reports_steps(&self) -> bool {
        true
    }
    /// The model the agent will use when none is asked for, and the file of the agent's own
    /// configuration that names it, read with the agent's environment `env` over runbook's own;
    /// `None` when the agent keeps it elsewhere or it is not set.
    fn configured_model(&self, _env: &[(String, String)]) -> Option<(String, PathBuf)> {
        None
    }
    /// Whether runbook talks to the agent over the Agent Client Protocol: one process for the
    /// whole run, prompts sent on its stdin.
    fn speaks_acp(&self) -> bool {
        false
    }
    /// Whether what the agent spends can be known as it runs (told, or estimated from the tokens
    /// it tells): an agent that tells neither cannot be held to `--max-cost`.
    fn tells_cost(&self) -> bool {
        true
    }
    /// Whether the agent says how long each tool call took, or its calls' ends are timed from
    /// their starts as runbook read them (an ACP agent tells neither start time nor duration).
    fn tells_tool_durations(&self) -> bool {
        true
    }
    /// Where the agent keeps its own state and configuration (see [`own_paths`]), its
    /// environment read by `var`, working in `cwd`.
    fn own_paths(&self, _var: own_paths::Var<'_>, _cwd: &Path) -> own_paths::OwnPaths {
        own_paths::OwnPaths::default()
    }
    /// A daemon of the agent's own, found from its environment read by `var`, that the agent may
    /// hand a run's work to, where it outlives the agent's process: after runbook stops the
    /// agent, the run's session is cancelled there ([`handed`]).
    fn daemon(&self, _var: own_paths::Var<'_>) -> Option<Box<dyn handed::Daemon>> {
        None
    }
    /// Whether another generation of the agent prints another format (see [`Self::generation`]):
    /// its version is then asked before the first turn.
    fn has_generations(&self) -> bool {
        false
    }
    /// The adapter for the binary `program`, which printed `version` to `--version` (`None`: no
    /// answer), when it is another generation's than this one.
    fn generation(&self, _program: &Path, _version: Option<&str>) -> Option<&'static dyn Adapter> {
        None
    }
    /// The generation whose format `line` of a recorded output is, when the line tells (see
    /// [`Self::has_generations`]): how a replay reads a recording whose binary is not at hand.
    fn generation_of_line(&self, _line: &[u8]) -> Option<&'static dyn Adapter> {
        None
    }
    fn stdout_parser(&self, ctx: ParseContext) -> Box<dyn StdoutParser>;
    fn stderr_parser(&self) -> Box<dyn StderrParser>;
}

/// Turns complete stdout lines into events; keeps whatever state the format needs.
pub(crate) trait StdoutParser: Send {
    /// One complete line without its newline. Never fails: unreadable lines become `unparsed`.
    fn line(&mut self, line: &[u8], out: &mut Vec<EventKind>);
    /// Called once at end of stream: did the agent's output end on finished work? Tool calls
    /// that started and never finished are closed here, as errors.
    fn end(&mut self, out: &mut Vec<EventKind>) -> StreamEnd;
}

/// Turns stderr lines into events (every line becomes at least a `stderr` event, unless it is
/// known noise; the raw log keeps every line either way).
pub(crate) trait StderrParser: Send {
    fn line(&mut self, line: &str, out: &mut Vec<EventKind>);
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

/// One stdout line read as `T`, a line type whose only required field is `type`. A JSON object
/// one of whose fields has an unexpected type (a string where an object was expected) is still
/// read, without that field, so that a new spelling of one field never costs the whole line. Only
/// a line that is not a JSON object (or whose `type` is not a string, or not UTF-8) becomes
/// `unparsed`.
pub(crate) fn parse_line_lenient<T: serde::de::DeserializeOwned>(
    line: &[u8],
    out: &mut Vec<EventKind>,
) -> Option<T> {
    if let Ok(parsed) = serde_json::from_slice(line) {
        return Some(parsed);
    }
    let readable = serde_json::from_slice::<serde_json::Map<String, serde_json::Value>>(line)
        .ok()
        .and_then(readable_fields);
    if readable.is_none() {
        out.push(unparsed_line(unreadable_reason(line), line));
    }
    readable
}

/// `T` from the fields of `object` that read as `T` expects, each tried on its own beside `type`.
fn readable_fields<T: serde::de::DeserializeOwned>(
    object: serde_json::Map<String, serde_json::Value>,
) -> Option<T> {
    use serde_json::{Map, Value};
    let kind = object.get("type").filter(|t| t.is_string())?.clone();
    let mut kept = Map::new();
    for (key, value) in object {
        let mut probe = Map::new();
        probe.insert("type".to_owned(), kind.clone());
        probe.insert(key.clone(), value);
        if serde_json::from_value::<T>(Value::Object(probe.clone())).is_ok()
            && let Some(value) = probe.remove(&key)
        {
            kept.insert(key, value);
        }
    }
    serde_json::from_value(Value::Object(kept)).ok()
}

/// A line read with a fast path first: `fast` reads most lines (those that are printable ASCII
/// or UTF-8 without control bytes) and gives up on anything unusual, which
/// [`parse_line_lenient`] then reads. `fast` must only accept what serde_json accepts, with the
/// same value.
#[inline]
pub(crate) fn parse_line_fast<'a, T: serde::de::DeserializeOwned>(
    line: &'a [u8],
    out: &mut Vec<EventKind>,
    fast: fn(scan::Cursor<'a>) -> Option<T>,
) -> Option<T> {
    let cursor =
        scan::Cursor::ascii(line).or_else(|| scan::Cursor::new(std::str::from_utf8(line).ok()?));
    if let Some(parsed) = cursor.and_then(fast) {
        return Some(parsed);
    }
    parse_line_lenient(line, out)
}

/// An `unparsed` event for a whole stdout line.
pub(crate) fn unparsed_line(reason: UnparsedReason, line: &[u8]) -> EventKind {
    unparsed(Stream::Stdout, reason, line, line.len() as u64)
}

/// Emits `session.started` for the first line that names the agent's session (later lines repeat
/// it).
#[inline]
pub(crate) fn announce_session(announced: &mut bool, id: Option<&str>, out: &mut Vec<EventKind>) {
    if !*announced && let Some(id) = id {
        *announced = true;
        out.push(EventKind::SessionStarted {
            session_id: id.to_owned(),
        });
    }
}

/// Why a line failed to parse: it was not UTF-8, not JSON, or JSON of the wrong shape (not an
/// object, or a field of the wrong type). Only asked of lines that failed, so the second look
/// at the line costs nothing on the common path.
pub(crate) fn unreadable_reason(line: &[u8]) -> UnparsedReason {
    if std::str::from_utf8(line).is_err() {
        UnparsedReason::NotUtf8
    } else if serde_json::from_slice::<serde::de::IgnoredAny>(line).is_ok() {
        UnparsedReason::UnexpectedJson
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::ValueEnum as _;

    fn args(agent: AgentKind, permissions: Permissions, resume: Option<&str>) -> Vec<String> {
        agent.adapter().args(&Invocation {
            prompt: "-fix it",
            model: Some("m"),
            extra_args: &["--extra".to_owned()],
            resume_session: resume,
            permissions,
        })
    }

    fn has(args: &[String], wanted: &[&str]) -> bool {
        args.windows(wanted.len()).any(|w| w == wanted)
    }

    #[test]
    fn permissions_map_to_each_agents_own_flags() {
        use AgentKind::*;
        use Permissions::*;
        let table: [(AgentKind, Permissions, &[&str]); 9] = [
            (Opencode, ReadOnly, &["--agent", "plan"]),
            (Opencode, Bypass, &["--auto"]),
            (Claude, ReadOnly, &["--permission-mode", "plan"]),
            (Claude, Workspace, &["--permission-mode", "acceptEdits"]),
            (Claude, Bypass, &["--dangerously-skip-permissions"]),
            (Codex, ReadOnly, &["-c", "sandbox_mode=\"read-only\""]),
            (
                Codex,
                Workspace,
                &["-c", "sandbox_mode=\"workspace-write\""],
            ),
            (
                Codex,
                Bypass,
                &["--dangerously-bypass-approvals-and-sandbox"],
            ),
            (Codex, Agent, &["--json", "--skip-git-repo-check"]),
        ];
        for (agent, permissions, flags) in table {
            let args = args(agent, permissions, None);
            assert!(has(&args, flags), "{agent:?} {permissions:?}: {args:?}");
            // The prompt is last, after `--`, so a leading dash cannot make it an option.
            assert_eq!(args[args.len() - 2..], ["--", "-fix it"], "{args:?}");
            assert!(has(&args, &["--extra"]) && has(&args, &["--model", "m"]));
        }
        for agent in [Opencode, Claude, Codex] {
            let plain = args(agent, Agent, None);
            for flag in [
                "--auto",
                "--dangerously-skip-permissions",
                "--permission-mode",
            ] {
                assert!(!plain.iter().any(|a| a == flag), "{agent:?}: {plain:?}");
            }
        }
    }

    #[test]
    fn each_agent_is_found_by_its_name_or_its_bin_variable() {
        for agent in AgentKind::value_variants() {
            let adapter = agent.adapter();
            assert_eq!(adapter.program(), adapter.name());
            let variable = format!("RUNBOOK_{}_BIN", adapter.name().to_uppercase());
            let hint = adapter.install_hint();
            assert!(
                hint.starts_with("install it with `npm install -g "),
                "{hint}"
            );
            assert!(hint.ends_with(&format!(" or point --agent-bin / {variable} at it")));
        }
    }

    #[test]
    fn a_line_that_did_not_parse_says_why() {
        use UnparsedReason::*;
        assert_eq!(unreadable_reason(b"this is not json"), NotJson);
        assert_eq!(unreadable_reason(br#"{"type":"text""#), NotJson);
        assert_eq!(unreadable_reason(b"[1,2]"), UnexpectedJson);
        assert_eq!(unreadable_reason(br#"{"type":5}"#), UnexpectedJson);
        assert_eq!(unreadable_reason(b"\"ok\""), UnexpectedJson);
        assert_eq!(unreadable_reason(b"{\"a\":\"\xff\"}"), NotUtf8);
    }

    #[test]
    fn a_field_of_an_unexpected_type_costs_only_that_field() {
        #[derive(serde::Deserialize, Debug, PartialEq)]
        struct Line {
            #[serde(rename = "type")]
            kind: String,
            count: Option<u32>,
            name: Option<String>,
        }
        let read = |line: &str| {
            let mut out = Vec::new();
            let parsed = parse_line_lenient::<Line>(line.as_bytes(), &mut out);
            (parsed, out)
        };
        let (parsed, out) = read(r#"{"type":"a","count":"three","name":"n","extra":[1]}"#);
        let want = Line {
            kind: "a".into(),
            count: None,
            name: Some("n".into()),
        };
        assert_eq!(parsed, Some(want));
        assert!(out.is_empty(), "{out:?}");
        for (line, reason) in [
            (r#"{"type":5,"name":"n"}"#, UnparsedReason::UnexpectedJson),
            ("[1,2]", UnparsedReason::UnexpectedJson),
            ("not json", UnparsedReason::NotJson),
        ] {
            let (parsed, out) = read(line);
            assert_eq!(parsed, None, "{line}");
            assert!(
                matches!(&out[..], [EventKind::Unparsed(u)] if u.reason == reason),
                "{line}: {out:?}"
            );
        }
    }

    #[test]
    fn each_agent_resumes_a_session_its_own_way() {
        let opencode = args(AgentKind::Opencode, Permissions::Agent, Some("ses_1"));
        assert!(has(&opencode, &["--session", "ses_1"]), "{opencode:?}");
        let claude = args(AgentKind::Claude, Permissions::Agent, Some("uuid-1"));
        assert!(has(&claude, &["--resume", "uuid-1"]), "{claude:?}");
        let codex = args(AgentKind::Codex, Permissions::ReadOnly, Some("thread-1"));
        assert_eq!(codex[..2], ["exec", "resume"], "{codex:?}");
        assert_eq!(codex[codex.len() - 3..], ["--", "thread-1", "-fix it"]);
    }
}

/// Reading recorded transcripts (`fixtures/AGENT/NAME.stdout.ndjson` and its `.stderr.txt`)
/// through an adapter, for the adapters' snapshot tests.
#[cfg(test)]
pub(crate) mod transcript {
    use std::path::Path;

    use serde::Serialize;

    use super::{Adapter, ParseContext};
    use crate::event::EventKind;

    /// What an adapter makes of one recorded transcript: its events and its verdict.
    #[derive(Serialize)]
    pub(crate) struct Reading {
        events: Vec<EventKind>,
        stderr_events: Vec<EventKind>,
        end: String,
    }

    /// `shell` for `…/shell.stdout.ndjson`.
    pub(crate) fn name(stdout_path: &Path) -> &str {
        stdout_path
            .file_name()
            .and_then(|n| n.to_str())
            .expect("a UTF-8 file name")
            .trim_end_matches(".stdout.ndjson")
    }

    /// A parser that asks for a command once the agent has exited (see [`super::Finisher`]) is
    /// given `NAME.export.json`, the recorded answer, or told there is none.
    pub(crate) fn read(adapter: &dyn Adapter, stdout_path: &Path, ctx: ParseContext) -> Reading {
        let slot = ctx.finishing.clone();
        let mut parser = adapter.stdout_parser(ctx);
        let mut events = Vec::new();
        for line in std::fs::read(stdout_path)
            .expect("read the transcript")
            .split(|&b| b == b'\n')
            .filter(|l| !l.is_empty())
        {
            parser.line(line, &mut events);
        }
        let mut stderr = adapter.stderr_parser();
        let mut stderr_events = Vec::new();
        let stderr_path = stdout_path.with_file_name(format!("{}.stderr.txt", name(stdout_path)));
        let stderr_text = std::fs::read_to_string(stderr_path).unwrap_or_default();
        for line in stderr_text.lines() {
            stderr.line(&console::strip_ansi_codes(line), &mut stderr_events);
        }
        let mut end = parser.end(&mut events);
        let finisher = slot.and_then(|s| s.lock().expect("the slot").take());
        if let Some(finisher) = finisher {
            let export = stdout_path.with_file_name(format!("{}.export.json", name(stdout_path)));
            let printed = std::fs::read(export).map_err(|_| "none was recorded".to_owned());
            end = finisher.finish(printed, end, &mut events);
        }
        let end = format!("{end:?}");
        Reading {
            events,
            stderr_events,
            end,
        }
    }
}
