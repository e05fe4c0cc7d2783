//! Agents over the Agent Client Protocol (`--via acp`, `--acp-cmd`): JSON-RPC 2.0, one message a
//! line, on the agent's stdin and stdout. runbook is the client. This parser reads what the agent
//! writes: its `session/update` notifications become universal events as they arrive (a tool the
//! moment it is announced, text as it streams), and every response and request is handed on, in
//! order, to the supervisor's client (`supervisor::acp`), which writes the answers.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use serde::Deserialize;
use serde_json::{Map, Value};

mod prints;

use super::reported::{self, Cost, Count};
use super::summary::{self, InputFields};
use super::tools::{Ending, OpenCalls};
use super::versions;
use super::{
    Adapter, AgentKind, Cli, Invocation, ParseContext, StderrParser, StdoutParser, StreamEnd,
    announce_session, npm_cli, unparsed_line, unreadable_reason,
};
use crate::event::{
    AgentResult, EventKind, Fidelity, ProviderError, ProviderRetry, StepUsage, Tokens, ToolKind,
    ToolStart, ToolStatus, UnparsedReason,
};
use crate::prices::PriceTable;

/// In `stdout.log` of an ACP run, a line runbook wrote to the agent's stdin starts with this;
/// every other line is the agent's.
pub(crate) const SENT_MARK: &str = "> ";

/// What the agent wrote that its client must act on: a response to one of its requests, or a
/// request of the agent's own.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Incoming {
    Response {
        id: Value,
        outcome: Result<Value, RpcError>,
        /// The agent ended its turn right after a call runbook refused, without a word since:
        /// it stopped at the refusal rather than finished (as OpenCode's native stream says).
        stopped_at_refusal: bool,
        /// The parser told the failed prompt as the provider's failure (`provider.error`).
        provider_failed: bool,
    },
    Request {
        id: Value,
        method: String,
        params: Value,
        /// The tool call the request is about, as the parser has shown it, when it has.
        tool: Option<ToolStart>,
    },
}

/// A JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub(crate) struct RpcError {
    #[serde(default)]
    pub code: i64,
    #[serde(default)]
    pub message: String,
    #[serde(default)]
    pub data: Option<Value>,
}

/// Where the parser hands what the agent wrote to its client. Drained by the stdout reader after
/// each batch of lines, so that the client sees a message only after the events before it.
pub(crate) type Inbox = tokio::sync::mpsc::UnboundedSender<Incoming>;

/// An agent driven over ACP: the command that starts it, and the name it goes by.
pub(crate) struct Acp {
    cli: Cli,
    /// Arguments that put the agent in ACP mode, before any extra ones.
    args: &'static [&'static str],
    /// Whether it tells usage or cost at all (codex-acp 0.16.0 tells neither).
    tells_cost: bool,
}

/// OpenCode's own ACP server, `opencode acp`.
pub(crate) static OPENCODE: Acp = Acp {
    cli: npm_cli!(program: "opencode", package: "opencode-ai", bin_env: "RUNBOOK_OPENCODE_BIN"),
    args: &["acp"],
    tells_cost: true,
};

/// Claude Code through Zed's ACP adapter.
pub(crate) static CLAUDE: Acp = Acp {
    cli: Cli {
        name: "claude",
        program: "claude-agent-acp",
        install_hint: "install it with `npm install -g @zed-industries/claude-agent-acp`, or point --agent-bin / RUNBOOK_CLAUDE_BIN at it",
    },
    args: &[],
    tells_cost: true,
};

/// Codex through Zed's ACP adapter.
pub(crate) static CODEX: Acp = Acp {
    cli: Cli {
        name: "codex",
        program: "codex-acp",
        install_hint: "install it with `npm install -g @zed-industries/codex-acp`, or point --agent-bin / RUNBOOK_CODEX_BIN at it",
    },
    args: &[],
    tells_cost: false,
};

/// Any other ACP agent (`--acp-cmd`).
pub(crate) static CUSTOM: Acp = Acp {
    cli: Cli {
        name: "acp",
        program: "the --acp-cmd program",
        install_hint: "check the first word of --acp-cmd",
    },
    args: &[],
    tells_cost: true,
};

impl Acp {
    /// The arguments that put its binary in ACP mode (`acp` for `opencode acp`).
    pub(crate) fn mode_args(&self) -> &'static [&'static str] {
        self.args
    }
}

impl Adapter for Acp {
    fn cli(&self) -> Cli {
        self.cli
    }

    /// The prompt is not an argument: it is sent as `session/prompt`.
    fn args(&self, inv: &Invocation<'_>) -> Vec<String> {
        let mut args: Vec<String> = self.args.iter().map(|&a| a.to_owned()).collect();
        args.extend(inv.extra_args.iter().cloned());
        args
    }

    /// An agent over ACP tells its usage (`usage_update`), not each model call: OpenCode sends
    /// one update for a prompt of several calls. Its steps are unknown, never a wrong count.
    fn reports_steps(&self) -> bool {
        false
    }

    /// The agent names its version in its answer to `initialize`.
    fn version_args(&self) -> &'static [&'static str] {
        &[]
    }

    fn speaks_acp(&self) -> bool {
        true
    }

    fn tells_cost(&self) -> bool {
        self.tells_cost
    }

    fn tells_tool_durations(&self) -> bool {
        false
    }

    fn own_paths(&self, var: super::own_paths::Var<'_>, cwd: &Path) -> super::own_paths::OwnPaths {
        match self.cli.name {
            "claude" => super::own_paths::claude(var),
            "codex" => super::own_paths::codex(var),
            "opencode" => super::own_paths::opencode(var, cwd),
            _ => super::own_paths::OwnPaths::default(),
        }
    }

    /// OpenCode keeps its sessions where its background service may run them.
    fn daemon(&self, var: super::own_paths::Var<'_>) -> Option<Box<dyn super::handed::Daemon>> {
        (self.cli.name == "opencode")
            .then(|| super::opencode_service::find(var))
            .flatten()
    }

    fn stdout_parser(&self, ctx: ParseContext) -> Box<dyn StdoutParser> {
        Box::new(Parser::new(ctx))
    }

    fn stderr_parser(&self) -> Box<dyn StderrParser> {
        Box::new(Stderr)
    }
}

/// How many permission requests (and early answers) a replay keeps unsettled.
const MAX_ASKED: usize = 64;

/// Why a turn the agent ended right after a refused call, without an answer, is `truncated`.
pub(crate) const STOPPED_AT_REFUSAL: &str =
    "the agent stopped after a tool call was denied permission";

/// How a prompt's `stopReason` reads as the end of a turn.
pub(crate) fn stop_reason_end(reason: &str) -> StreamEnd {
    match reason {
        "end_turn" => StreamEnd::Finished,
        "max_tokens" => StreamEnd::Truncated(
            "the model reached its output token limit (stopReason max_tokens)".to_owned(),
        ),
        "max_turn_requests" => StreamEnd::Truncated(
            "the agent reached its limit of model requests for one prompt (stopReason max_turn_requests)"
                .to_owned(),
        ),
        "refusal" => StreamEnd::Failed("the agent refused to go on (stopReason refusal)".to_owned()),
        "cancelled" => StreamEnd::Truncated("the agent's turn was cancelled".to_owned()),
        other => StreamEnd::Truncated(format!("the turn ended with stopReason {other:?}")),
    }
}

/// One JSON-RPC message, as far as the parser needs to tell it apart.
#[derive(Deserialize)]
struct Message {
    #[serde(default)]
    id: Option<Value>,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default)]
    result: Option<Value>,
    #[serde(default)]
    error: Option<RpcError>,
}

/// What the client tells the parser, shared between them: the calls whose permission runbook
/// refused (a call that then fails was denied, not broken), and the id of the prompt in flight
/// (whose error ends the turn). Filled by the client as it writes (or, replaying a log, by the
/// parser from runbook's lines recorded in it); read by the parser.
#[derive(Debug, Default)]
pub(crate) struct Told {
    refused: Mutex<HashSet<String>>,
    /// 0: none (runbook's request ids start at 1).
    prompt: AtomicU64,
    /// Runbook asked the agent to cancel the prompt in flight.
    cancel_asked: AtomicBool,
}

/// [`Told`], shared.
pub(crate) type Shared = Arc<Told>;

impl Told {
    /// Runbook refused the permission of `call_id`.
    pub(crate) fn refused(&self, call_id: &str) {
        const MAX_REFUSED: usize = 1024;
        if let Ok(mut refused) = self.refused.lock()
            && refused.len() < MAX_REFUSED
        {
            refused.insert(call_id.to_owned());
        }
    }

    /// Whether runbook refused `call_id` (asked once: the call ends once).
    fn was_refused(&self, call_id: &str) -> bool {
        self.refused
            .lock()
            .is_ok_and(|mut refused| refused.remove(call_id))
    }

    /// The turn is over: what was refused in it is settled.
    fn forget_refusals(&self) {
        if let Ok(mut refused) = self.refused.lock() {
            refused.clear();
        }
    }

    /// The prompt runbook sent has this id.
    pub(crate) fn prompt_sent(&self, id: u64) {
        self.cancel_asked.store(false, Ordering::Release);
        self.prompt.store(id, Ordering::Release);
    }

    /// Runbook asked the agent to cancel the prompt in flight.
    pub(crate) fn cancel_sent(&self) {
        self.cancel_asked.store(true, Ordering::Release);
    }

    /// Whether the prompt in flight was asked to stop: what the agent then tells of its usage
    /// leaves out the model call it cut short.
    fn was_cancelled(&self) -> bool {
        self.cancel_asked.load(Ordering::Acquire)
    }

    pub(crate) fn is_prompt(&self, id: &Value) -> bool {
        let prompt = self.prompt.load(Ordering::Acquire);
        prompt != 0 && id.as_u64() == Some(prompt)
    }
}

/// A tool call announced but not yet shown: it is shown once its input is known (or it runs).
struct Announced {
    call_id: String,
    title: Option<String>,
    acp_kind: Option<String>,
    /// The agent's own name for the tool, when it tells it apart from the title (Claude Code's
    /// adapter: `_meta.claudeCode.toolName`).
    native: Option<String>,
    /// The call that made this one (a subagent's), when the agent says.
    parent: Option<String>,
    input: Map<String, Value>,
    locations: Vec<String>,
}

impl Announced {
    /// A call as its first update announces it: its title and ACP kind, the rest to come.
    fn new(call_id: &str, update: &Value) -> Self {
        let text = |key: &str| update.get(key).and_then(Value::as_str).map(str::to_owned);
        Announced {
            call_id: call_id.to_owned(),
            title: text("title"),
            acp_kind: text("kind"),
            native: None,
            parent: None,
            input: Map::new(),
            locations: Vec::new(),
        }
    }

    /// The call as it is shown: named and classified the way the agent's native stream does,
    /// where the ACP stream lets it.
    fn start(&self, cwd: &std::path::Path) -> ToolStart {
        let command = self.input.get("command");
        // A program's argv (Codex's `["/bin/bash", "-lc", "cat README.md"]`) is a shell command,
        // whatever the title says it does (`Read README.md`, or `ls`).
        let argv = command.is_some_and(Value::is_array);
        let command_line = command.is_some_and(Value::is_string)
            && matches!(self.acp_kind.as_deref(), None | Some("execute"));
        let name = match (&self.native, self.one_word_title()) {
            (Some(native), _) => native.clone(),
            (None, _) if argv => "shell".to_owned(),
            // OpenCode names each call by its tool (`bash`, `task`, `write`).
            (None, Some(title)) if ToolKind::of(title) != ToolKind::Other => title.to_owned(),
            (None, _) if command_line => "shell".to_owned(),
            (None, _) => tool_name(self.title.as_deref(), self.acp_kind.as_deref()),
        };
        let kind = match ToolKind::of(&name) {
            ToolKind::Other => tool_kind(self.acp_kind.as_deref(), &name),
            kind => kind,
        };
        ToolStart {
            input: input_summary(&self.input, &self.locations, self.title.as_deref(), cwd),
            call_id: self.call_id.clone(),
            name,
            kind,
            parent: self.parent.clone(),
        }
    }

    fn one_word_title(&self) -> Option<&str> {
        self.title
            .as_deref()
            .filter(|t| !t.is_empty() && !t.contains(char::is_whitespace) && t.len() <= 40)
    }
}

struct Parser {
    cwd: PathBuf,
    model: Option<String>,
    prices: Arc<PriceTable>,
    inbox: Option<Inbox>,
    session_announced: bool,
    calls: OpenCalls,
    /// The inputs of the open calls, for their fingerprints.
    inputs: prints::CallInputs,
    announced: Vec<Announced>,
    /// The answer text of the current message, whole.
    text: String,
    reasoning: String,
    /// The session's cost so far, as the agent's last `usage_update` said.
    session_cost: Option<f64>,
    /// The session's cost when the current prompt began.
    turn_start_cost: Option<f64>,
    /// Whether the agent said anything for the prompt still unanswered.
    in_turn: bool,
    /// The final text of the current turn (its last message).
    last_text: String,
    told: Shared,
    /// The agent tells, as a prompt's usage, that of its last model call only (OpenCode 1).
    last_call_usage: bool,
    /// A cancelled prompt's result tells the usage of the model calls that finished before the
    /// cancel (OpenCode 2); other agents tell none, or zero.
    cancel_usage_told: bool,
    /// The agent's usage leaves out its subagents' (Claude Code's adapter sums the main
    /// conversation's results).
    subagents_apart: bool,
    /// Tool calls in the current turn that ran: each means one more model call after it.
    turn_tools: u32,
    /// Subagents started in the current turn.
    turn_subagents: u32,
    /// The last thing the agent did was a call that ended denied: no text, no other call since.
    denied_last: bool,
    /// The prompt just answered ended at a refusal (see [`Incoming::Response`]).
    stopped_at_refusal: bool,
    /// How the last answered turn ended: a replayed log ends as its last turn did.
    last_end: Option<StreamEnd>,
    /// Replaying a log: runbook's answers read before the request they answer (the raw log is
    /// written from two threads), by id: the option chosen, or `None` when cancelled.
    early: HashMap<String, Option<String>>,
    /// The tokens in the agent's context, as its last `usage_update` in this turn said.
    turn_used: Option<u64>,
    /// Replaying a log: the permission requests not yet answered, by their id, with the call and
    /// the offered options (id, kind).
    asked: HashMap<String, (String, Vec<(String, String)>)>,
}

impl Parser {
    fn new(ctx: ParseContext) -> Self {
        Self {
            cwd: ctx.cwd,
            model: ctx.model,
            prices: ctx.prices,
            inbox: ctx.inbox,
            session_announced: false,
            calls: OpenCalls::default(),
            inputs: prints::CallInputs::default(),
            announced: Vec::new(),
            text: String::new(),
            reasoning: String::new(),
            session_cost: None,
            turn_start_cost: None,
            in_turn: false,
            last_text: String::new(),
            told: ctx.told.unwrap_or_default(),
            last_call_usage: false,
            cancel_usage_told: false,
            subagents_apart: false,
            turn_tools: 0,
            turn_subagents: 0,
            denied_last: false,
            stopped_at_refusal: false,
            last_end: None,
            early: HashMap::new(),
            turn_used: None,
            asked: HashMap::new(),
        }
    }

    /// The tool call `call_id` as shown (or as it will be shown, once announced).
    fn known_tool(&self, call_id: &str) -> Option<ToolStart> {
        if let Some(open) = self.calls.get(call_id) {
            return Some(open.clone());
        }
        let a = self.announced.iter().find(|a| a.call_id == call_id)?;
        Some(a.start(&self.cwd))
    }

    /// Ends every call still open: one whose permission runbook refused was denied (Codex's
    /// adapter ends the turn at the refusal without ending the call), any other unfinished.
    fn close_calls(&mut self, out: &mut Vec<EventKind>) {
        for id in self.calls.open_ids() {
            self.inputs.forget(&id);
            if self.told.was_refused(&id) {
                let ending = Ending::failed(
                    ToolStatus::Denied,
                    "runbook refused its permission".to_owned(),
                    None,
                );
                self.calls.finish(&id, ending, out);
                self.denied_last = true;
            }
        }
        self.calls.close_all(out);
    }

    /// Starts a call: a subagent's start is also told as such.
    fn start(&mut self, start: ToolStart, input: &Map<String, Value>, out: &mut Vec<EventKind>) {
        if start.kind == ToolKind::Subagent {
            let description = ["description", "prompt"]
                .iter()
                .find_map(|k| input.get(*k)?.as_str())
                .map(|d| summary::first_line(d).to_owned())
                .unwrap_or_default();
            out.push(EventKind::SubagentStarted {
                session_id: None,
                call_id: start.call_id.clone(),
                description,
            });
        }
        if start.kind == ToolKind::Subagent {
            self.turn_subagents += 1;
        }
        self.calls.start(start, out);
    }

    fn hand_on(&self, message: Incoming) {
        if let Some(inbox) = &self.inbox {
            let _ = inbox.send(message);
        }
    }

    /// The text and reasoning gathered so far, whole.
    fn flush_text(&mut self, out: &mut Vec<EventKind>) {
        if !self.reasoning.is_empty() {
            out.push(EventKind::Reasoning {
                text: std::mem::take(&mut self.reasoning),
            });
        }
        if !self.text.is_empty() {
            self.last_text.clone_from(&self.text);
            out.push(EventKind::Text {
                text: std::mem::take(&mut self.text),
            });
        }
    }

    fn begin_turn(&mut self) {
        if !self.in_turn {
            self.in_turn = true;
            self.turn_start_cost = self.session_cost;
            self.last_text.clear();
            self.turn_tools = 0;
            self.turn_subagents = 0;
            self.denied_last = false;
            self.turn_used = None;
        }
    }

    fn update(&mut self, update: &Value, out: &mut Vec<EventKind>) -> bool {
        let Some(kind) = update.get("sessionUpdate").and_then(Value::as_str) else {
            return false;
        };
        match kind {
            "agent_message_chunk" => {
                self.begin_turn();
                if !self.reasoning.is_empty() {
                    out.push(EventKind::Reasoning {
                        text: std::mem::take(&mut self.reasoning),
                    });
                }
                if let Some(text) = chunk_text(update) {
                    self.denied_last &= text.trim().is_empty();
                    self.text.push_str(text);
                    out.push(EventKind::TextDelta {
                        text: text.to_owned(),
                    });
                }
            }
            "agent_thought_chunk" => {
                self.begin_turn();
                if let Some(text) = chunk_text(update) {
                    self.reasoning.push_str(text);
                }
            }
            "tool_call" | "tool_call_update" => {
                self.begin_turn();
                self.flush_text(out);
                self.tool(update, out);
            }
            "plan" => {
                self.begin_turn();
                self.flush_text(out);
                let entries = update.get("entries").and_then(Value::as_array);
                let n = entries.map_or(0, Vec::len);
                let fields = InputFields {
                    todos: Some(n),
                    ..InputFields::default()
                };
                let start = ToolStart {
                    call_id: format!("plan-{}", out.len()),
                    name: "plan".to_owned(),
                    kind: ToolKind::Todo,
                    input: summary::summarize(&fields, None, &self.cwd),
                    parent: None,
                };
                self.calls.once(start, Ending::ok(None), out);
            }
            "usage_update" => {
                self.begin_turn();
                self.usage(update, out);
            }
            "session_info_update" => self.session_info(update, out),
            // The agent's echo of the prompt, its commands, modes and options: nothing that
            // happens.
            "user_message_chunk"
            | "available_commands_update"
            | "current_mode_update"
            | "config_option_update" => {}
            _ => return false,
        }
        true
    }

    /// A `session_info_update`: OpenCode 2 tells in its `_meta` that a model call failed and
    /// is tried again (`opencode/retry`, `null` once the retry began).
    fn session_info(&mut self, update: &Value, out: &mut Vec<EventKind>) {
        let Some(retry) = update
            .pointer("/_meta/opencode~1retry")
            .filter(|r| r.is_object())
        else {
            return;
        };
        self.begin_turn();
        // `attempt` is the attempt about to be made: 2 is the first retry.
        let attempt = retry.get("attempt").and_then(Value::as_u64).unwrap_or(2);
        let error = retry.get("error");
        let status = error
            .and_then(|e| e.get("status"))
            .and_then(Value::as_u64)
            .and_then(|s| u16::try_from(s).ok())
            .filter(|s| (100..600).contains(s));
        let message = error
            .and_then(|e| e.get("message"))
            .and_then(Value::as_str)
            .unwrap_or("the model call failed");
        out.push(EventKind::ProviderRetry(ProviderRetry {
            attempt: u32::try_from(attempt.saturating_sub(1).max(1)).unwrap_or(u32::MAX),
            max_attempts: None,
            delay_ms: None,
            status,
            message: message.to_owned(),
        }));
    }

    /// A `usage_update`: the session's cost so far; what it grew by is a step's cost.
    fn usage(&mut self, update: &Value, out: &mut Vec<EventKind>) {
        if let Some(used) = update.get("used").and_then(Value::as_u64) {
            self.turn_used = Some(used);
        }
        #[derive(Deserialize)]
        struct Amount {
            amount: Option<Cost>,
        }
        let Some(cost) = update
            .get("cost")
            .and_then(read::<Amount>)
            .and_then(|c| c.amount)
        else {
            return;
        };
        let checked = match cost.usable() {
            Ok(total) => {
                let before = self.session_cost.unwrap_or(0.0);
                self.session_cost = Some(total.max(before));
                reported::check(
                    Some(Cost::Number((total - before).max(0.0))),
                    || None,
                    false,
                )
            }
            Err(_) => reported::check(Some(cost), || None, false),
        };
        out.push(EventKind::StepFinished(StepUsage {
            id: None,
            reason: "usage_update".to_owned(),
            tokens: Tokens::default(),
            cost_usd: checked.cost_usd,
            cost_source: checked.cost_source,
            cost_rejected: checked.cost_rejected,
            tokens_unreadable: false,
        }));
    }

    fn tool(&mut self, update: &Value, out: &mut Vec<EventKind>) {
        let Some(call_id) = update.get("toolCallId").and_then(Value::as_str) else {
            return;
        };
        let status = update.get("status").and_then(Value::as_str);
        if self.calls.get(call_id).is_some() {
            self.inputs.update(call_id, update);
        } else if !self.announce(call_id, update, status, out) {
            return;
        }
        match status {
            Some("completed") if self.calls.finish(call_id, completed(update), out).is_some() => {
                self.turn_tools += 1;
                self.denied_last = false;
                let text = output_text(update);
                self.inputs.finish(call_id, update, text.as_deref(), out);
            }
            Some("failed") => {
                let text = output_text(update);
                let error = text
                    .as_deref()
                    .and_then(first_words)
                    .unwrap_or("the tool call failed")
                    .to_owned();
                let bytes = text.as_ref().map(|t| t.len() as u64);
                let refused = self.told.was_refused(call_id);
                let status = if refused || is_denial(&error) {
                    ToolStatus::Denied
                } else {
                    self.turn_tools += 1;
                    ToolStatus::Error
                };
                self.denied_last = status == ToolStatus::Denied;
                self.calls
                    .finish(call_id, Ending::failed(status, error, bytes), out);
                self.inputs.finish(call_id, update, text.as_deref(), out);
            }
            _ => {}
        }
    }

    /// What an update tells of a call not started yet, gathered until it says what the call
    /// does (or that it runs): then `tool.started`. False while it is still only announced.
    fn announce(
        &mut self,
        call_id: &str,
        update: &Value,
        status: Option<&str>,
        out: &mut Vec<EventKind>,
    ) -> bool {
        let meta = |key: &str| {
            update
                .pointer(&format!("/_meta/claudeCode/{key}"))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let i = match self.announced.iter().position(|a| a.call_id == call_id) {
            Some(i) => i,
            None => {
                self.announced.push(Announced::new(call_id, update));
                self.announced.len() - 1
            }
        };
        let a = &mut self.announced[i];
        if a.native.is_none() {
            a.native = meta("toolName");
        }
        if a.parent.is_none() {
            a.parent = meta("parentToolUseId");
        }
        if let Some(input) = update.get("rawInput").and_then(Value::as_object) {
            a.input
                .extend(input.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        let locations = locations(update);
        if !locations.is_empty() {
            a.locations = locations;
        }
        // Where it runs is not yet what it does (OpenCode announces `bash` with its `cwd`).
        let known = a
            .input
            .keys()
            .any(|k| !matches!(k.as_str(), "cwd" | "workdir" | "timeout"));
        let moving = matches!(status, Some("in_progress" | "completed" | "failed"));
        if !(known || moving) {
            return false;
        }
        let a = self.announced.remove(i);
        let start = a.start(&self.cwd);
        self.inputs.start(call_id, &start.name, &a.input);
        self.start(start, &a.input, out);
        true
    }

    /// A response: events for what it says, then handed on to the client.
    fn response(&mut self, id: Value, message: Message, out: &mut Vec<EventKind>) {
        let outcome = match message.error {
            Some(error) => Err(error),
            None => Ok(message.result.unwrap_or(Value::Null)),
        };
        let mut provider_failed = false;
        if let Err(error) = &outcome
            && self.told.is_prompt(&id)
        {
            provider_failed = self.prompt_failed(error, out);
        }
        if let Ok(result) = &outcome {
            if let Some(info) = result.get("agentInfo") {
                self.agent_info(info, out);
            }
            announce_session(
                &mut self.session_announced,
                result.get("sessionId").and_then(Value::as_str),
                out,
            );
            if let Some(reason) = result.get("stopReason").and_then(Value::as_str) {
                self.answered(reason, result, out);
            }
        }
        let stopped_at_refusal = std::mem::take(&mut self.stopped_at_refusal);
        self.hand_on(Incoming::Response {
            id,
            outcome,
            stopped_at_refusal,
            provider_failed,
        });
    }

    /// The agent's `agentInfo` (in its answer to `initialize`): how it tells usage, and its
    /// version, judged against the versions runbook was tested with when it is an agent runbook
    /// has a table for (OpenCode's own ACP server; an adapter's version is not its agent's).
    fn agent_info(&mut self, info: &Value, out: &mut Vec<EventKind>) {
        let name = info.get("name").and_then(Value::as_str).unwrap_or_default();
        let version = info.get("version").and_then(Value::as_str);
        let opencode = name == "OpenCode";
        let major = version.and_then(versions::major);
        // OpenCode 2 sums a prompt's model calls, a cancelled one's too; 1.x tells its last.
        let summed = opencode && major.is_some_and(|m| m >= 2);
        self.last_call_usage = opencode && !summed;
        self.cancel_usage_told = summed;
        self.subagents_apart = name.contains("claude");
        let Some(version) = version else {
            return;
        };
        let (tested_with, fidelity) = match opencode {
            true => versions::judge(AgentKind::Opencode, version),
            false => (Vec::new(), Fidelity::Unknown),
        };
        out.push(EventKind::AgentVersion {
            version: version.to_owned(),
            tested_with,
            fidelity: Some(fidelity),
        });
    }

    /// The turn's cost: what the session's cost grew by, when the agent tells it.
    fn turn_cost(&self) -> Option<Cost> {
        let now = self.session_cost?;
        Some(Cost::Number(
            (now - self.turn_start_cost.unwrap_or(0.0)).max(0.0),
        ))
    }

    /// The turn's tokens when the agent gave none but said its context is empty: no model call
    /// took anything.
    fn nothing_used(&self) -> Option<Tokens> {
        (self.turn_used == Some(0)).then(Tokens::default)
    }

    /// The prompt failed: the turn's last events, the provider's failure when the error is one
    /// (then `true`), and what is known of the turn's totals.
    fn prompt_failed(&mut self, error: &RpcError, out: &mut Vec<EventKind>) -> bool {
        self.flush_text(out);
        for a in std::mem::take(&mut self.announced) {
            let start = a.start(&self.cwd);
            self.start(start, &a.input, out);
        }
        self.close_calls(out);
        let failure = provider_failure(error);
        let provider_failed = failure.is_some();
        if let Some(failure) = failure {
            out.push(EventKind::ProviderError(failure));
        }
        let checked = reported::check(self.turn_cost(), || None, false);
        out.push(EventKind::AgentResult(AgentResult {
            ok: false,
            message: Some(error.message.clone()),
            tokens: self.nothing_used().filter(|_| !self.told.was_cancelled()),
            cost_usd: checked.cost_usd,
            cost_source: checked.cost_source,
            cost_rejected: checked.cost_rejected,
            tokens_unreadable: false,
            tokens_partial: false,
            model_calls: None,
            duration_ms: None,
        }));
        self.last_end = Some(StreamEnd::Failed(error.message.clone()));
        self.turn_over();
        provider_failed
    }

    /// The turn is over: what was counted in it starts again with the next.
    fn turn_over(&mut self) {
        self.in_turn = false;
        self.turn_start_cost = self.session_cost;
        self.turn_tools = 0;
        self.turn_subagents = 0;
        self.denied_last = false;
        self.turn_used = None;
        self.told.forget_refusals();
    }

    /// The prompt's result: the turn's last events and the agent's totals for it.
    fn answered(&mut self, reason: &str, result: &Value, out: &mut Vec<EventKind>) {
        self.flush_text(out);
        for a in std::mem::take(&mut self.announced) {
            let start = a.start(&self.cwd);
            self.start(start, &a.input, out);
        }
        self.close_calls(out);
        // A prompt cut short tells the usage of the model call it stopped (none, or what streamed
        // before the stop) or of none at all: the turn's tokens are unknown, and what it cost
        // so far a lower bound. OpenCode 2 tells the sum of the calls that finished: kept.
        let cut_short =
            (reason == "cancelled" || self.told.was_cancelled()) && !self.cancel_usage_told;
        let usage = result
            .get("usage")
            .filter(|u| u.is_object() && !cut_short)
            .and_then(read::<Usage>);
        // OpenCode's are its last model call's, and a turn with a tool call that ran made at
        // least two; Claude Code's adapter leaves out what subagents used.
        let tokens_partial = usage.is_some()
            && ((self.last_call_usage && self.turn_tools > 0)
                || (self.subagents_apart && self.turn_subagents > 0));
        let mut tokens_unreadable = false;
        let tokens = usage.map(|u| u.tokens(&mut tokens_unreadable));
        let tokens = tokens.or_else(|| self.nothing_used().filter(|_| !cut_short));
        let mut checked = reported::check(self.turn_cost(), || None, tokens_unreadable);
        // Partial tokens would price a part as the whole: the cost stays unknown instead.
        if checked.cost_usd.is_none()
            && !tokens_unreadable
            && !tokens_partial
            && let Some(tokens) = &tokens
            && let Some(cost) = reported::estimate(&self.prices, self.model.as_deref(), tokens)
        {
            checked.cost_usd = Some(cost);
            checked.cost_source = Some(crate::event::CostSource::Estimated);
        }
        // Ended right after a refused call, without a word: stopped there, not finished.
        self.stopped_at_refusal = reason == "end_turn" && self.denied_last;
        let ok = reason == "end_turn" && !self.stopped_at_refusal;
        let message = self.result_message(reason, ok);
        out.push(EventKind::AgentResult(AgentResult {
            ok,
            message,
            tokens,
            cost_usd: checked.cost_usd,
            cost_source: checked.cost_source,
            cost_rejected: checked.cost_rejected,
            tokens_unreadable,
            tokens_partial,
            model_calls: None,
            duration_ms: None,
        }));
        self.last_end = Some(if self.stopped_at_refusal {
            StreamEnd::Truncated(STOPPED_AT_REFUSAL.to_owned())
        } else {
            stop_reason_end(reason)
        });
        self.turn_over();
    }
}

impl Parser {
    /// What the turn's result says: why it stopped at a refusal or otherwise short, else the
    /// agent's last words.
    fn result_message(&self, reason: &str, ok: bool) -> Option<String> {
        if self.stopped_at_refusal {
            Some(STOPPED_AT_REFUSAL.to_owned())
        } else if ok {
            Some(self.last_text.trim().to_owned()).filter(|t| !t.is_empty())
        } else {
            match stop_reason_end(reason) {
                StreamEnd::Truncated(m) | StreamEnd::Failed(m) => Some(m),
                StreamEnd::Finished => None,
            }
        }
    }

    /// A message runbook sent, read back from a recorded log: the session's work dir (for paths
    /// to be shown as they were live), and its answers to permission requests.
    fn sent(&mut self, sent: Message) {
        if sent.method.as_deref() == Some("session/new")
            && let Some(cwd) = sent
                .params
                .as_ref()
                .and_then(|p| p.get("cwd"))
                .and_then(Value::as_str)
        {
            self.cwd = PathBuf::from(cwd);
        }
        if sent.method.as_deref() == Some("session/prompt")
            && let Some(id) = sent.id.as_ref().and_then(Value::as_u64)
        {
            self.told.prompt_sent(id);
        }
        if sent.method.as_deref() == Some("session/cancel") {
            self.told.cancel_sent();
        }
        // An answer of runbook's to one of the agent's requests: no method, an id.
        if sent.method.is_some() {
            return;
        }
        let Some(id) = sent.id.map(|id| id.to_string()) else {
            return;
        };
        let chosen = sent
            .result
            .as_ref()
            .and_then(|r| r.pointer("/outcome/optionId"))
            .and_then(Value::as_str)
            .map(str::to_owned);
        match self.asked.remove(&id) {
            Some((call_id, options)) => self.settle(&call_id, &options, chosen.as_deref()),
            None if self.early.len() < MAX_ASKED => {
                self.early.insert(id, chosen);
            }
            None => {}
        }
    }

    /// Runbook's answer to the permission request for `call_id`: a refusal unless it chose an
    /// option that allows.
    fn settle(&mut self, call_id: &str, options: &[(String, String)], chosen: Option<&str>) {
        let allowed = chosen
            .and_then(|id| options.iter().find(|(option, _)| option == id))
            .is_some_and(|(_, kind)| kind.starts_with("allow"));
        if !allowed {
            self.told.refused(call_id);
        }
    }

    /// A permission request in a recorded log, kept until the answer runbook gave is read.
    fn asked_in_log(&mut self, id: &Value, params: &Value) {
        let Some(call_id) = params
            .pointer("/toolCall/toolCallId")
            .and_then(Value::as_str)
        else {
            return;
        };
        if self.asked.len() >= MAX_ASKED {
            return;
        }
        let text = |v: &Value, k: &str| v.get(k).and_then(Value::as_str).map(str::to_owned);
        let options = params
            .get("options")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|o| Some((text(o, "optionId")?, text(o, "kind").unwrap_or_default())))
            .collect();
        let options: Vec<(String, String)> = options;
        match self.early.remove(&id.to_string()) {
            Some(chosen) => self.settle(call_id, &options, chosen.as_deref()),
            None => {
                self.asked
                    .insert(id.to_string(), (call_id.to_owned(), options));
            }
        }
    }
}

impl StdoutParser for Parser {
    fn line(&mut self, line: &[u8], out: &mut Vec<EventKind>) {
        // What runbook itself sent, in a recorded log: not the agent's, but the session's work
        // dir is in it, for paths to be shown as they were live.
        if let Some(sent) = line.strip_prefix(SENT_MARK.as_bytes()) {
            if let Ok(sent) = serde_json::from_slice::<Message>(sent) {
                self.sent(sent);
            }
            return;
        }
        let Ok(message) = serde_json::from_slice::<Message>(line) else {
            out.push(unparsed_line(unreadable_reason(line), line));
            return;
        };
        match (message.id.clone(), message.method.clone()) {
            (Some(id), Some(method)) => {
                let params = message.params.unwrap_or(Value::Null);
                if self.inbox.is_none() && method == "session/request_permission" {
                    self.asked_in_log(&id, &params);
                }
                let tool = params
                    .pointer("/toolCall/toolCallId")
                    .and_then(Value::as_str)
                    .and_then(|call_id| self.known_tool(call_id));
                self.hand_on(Incoming::Request {
                    id,
                    method,
                    params,
                    tool,
                });
            }
            (None, Some(method)) => {
                let update = message.params.as_ref().and_then(|p| p.get("update"));
                let known =
                    method == "session/update" && update.is_some_and(|u| self.update(u, out));
                if !known && method == "session/update" {
                    // A kind of update runbook does not know (a newer agent's) is counted, as
                    // one that is not an update at all.
                    let kind = update.and_then(|u| u.get("sessionUpdate"));
                    let reason = match kind {
                        Some(Value::String(_)) => UnparsedReason::UnknownType,
                        _ => UnparsedReason::UnexpectedJson,
                    };
                    out.push(unparsed_line(reason, line));
                } else if update.is_some_and(unknown_meta) {
                    // Read, but it says more than runbook knows how to read: counted too.
                    out.push(unparsed_line(UnparsedReason::UnknownType, line));
                }
            }
            (Some(id), None) if message.result.is_some() || message.error.is_some() => {
                self.response(id, message, out);
            }
            _ => out.push(unparsed_line(UnparsedReason::UnexpectedJson, line)),
        }
    }

    fn end(&mut self, out: &mut Vec<EventKind>) -> StreamEnd {
        self.flush_text(out);
        self.close_calls(out);
        if self.in_turn {
            StreamEnd::Truncated("the agent's output ended before it answered the prompt".into())
        } else if self.inbox.is_none() {
            // A replay: it ends as the last turn did, as the client said live.
            self.last_end.take().unwrap_or(StreamEnd::Finished)
        } else {
            StreamEnd::Finished
        }
    }
}

/// The `_meta` keys of an update runbook reads: Claude Code's adapter's, and OpenCode's retry
/// notices.
const KNOWN_META: [&str; 2] = ["claudeCode", "opencode/retry"];

/// Whether an update's `_meta` holds a key runbook does not know.
fn unknown_meta(update: &Value) -> bool {
    update
        .get("_meta")
        .and_then(Value::as_object)
        .is_some_and(|meta| meta.keys().any(|k| !KNOWN_META.contains(&k.as_str())))
}

/// `value` read as `T`. Costs and counts are read from their JSON text (see `reported`), which a
/// parsed `Value` no longer is.
fn read<T: serde::de::DeserializeOwned>(value: &Value) -> Option<T> {
    serde_json::from_str(&value.to_string()).ok()
}

/// The text of a message or thought chunk.
fn chunk_text(update: &Value) -> Option<&str> {
    let content = update.get("content")?;
    (content.get("type").and_then(Value::as_str) == Some("text"))
        .then(|| content.get("text").and_then(Value::as_str))
        .flatten()
}

/// A tool's name: the title the call was announced with when it is one word (OpenCode names the
/// tool so), else the ACP kind.
pub(crate) fn tool_name(title: Option<&str>, acp_kind: Option<&str>) -> String {
    match title {
        Some(t) if !t.is_empty() && !t.contains(char::is_whitespace) && t.len() <= 40 => {
            t.to_owned()
        }
        _ => acp_kind.unwrap_or("tool").to_owned(),
    }
}

/// The universal kind of a tool from its ACP kind, or from its name.
fn tool_kind(acp_kind: Option<&str>, name: &str) -> ToolKind {
    match acp_kind {
        Some("read") => ToolKind::Read,
        Some("edit" | "delete" | "move") => ToolKind::Edit,
        Some("search") => ToolKind::Search,
        Some("execute") => ToolKind::Shell,
        Some("fetch") => ToolKind::Fetch,
        _ => ToolKind::of(name),
    }
}

/// A one-line summary of a tool's input.
pub(crate) fn input_summary(
    input: &Map<String, Value>,
    locations: &[String],
    title: Option<&str>,
    cwd: &std::path::Path,
) -> String {
    let text = |keys: &[&str]| keys.iter().find_map(|k| input.get(*k)?.as_str());
    let command_list = input.get("command").and_then(Value::as_array).map(|words| {
        let words: Vec<&str> = words.iter().filter_map(Value::as_str).collect();
        // Codex runs each command as `/bin/bash -lc CMD`: the command is CMD.
        match words.as_slice() {
            [shell, flag, command] if shell.ends_with("sh") && matches!(*flag, "-c" | "-lc") => {
                (*command).to_owned()
            }
            _ => words.join(" "),
        }
    });
    let fields = InputFields {
        path: text(&["filePath", "file_path", "path", "abs_path", "notebook_path"])
            .or_else(|| locations.first().map(String::as_str)),
        command: text(&["command", "cmd"]).or(command_list.as_deref()),
        pattern: text(&["pattern", "query"]),
        description: text(&["description", "prompt"]),
        url: text(&["url"]),
        todos: input.get("todos").and_then(Value::as_array).map(Vec::len),
    };
    summary::summarize(&fields, title, cwd)
}

/// The usage a prompt's result tells.
#[derive(Deserialize, Default)]
#[serde(rename_all = "camelCase", default)]
struct Usage {
    input_tokens: Count,
    output_tokens: Count,
    thought_tokens: Count,
    cached_read_tokens: Count,
    cached_write_tokens: Count,
}

impl Usage {
    /// As tokens; a count that cannot be read sets `unreadable`.
    fn tokens(self, unreadable: &mut bool) -> Tokens {
        let mut get = |n: Count| n.get(unreadable);
        Tokens {
            input: get(self.input_tokens),
            output: get(self.output_tokens),
            reasoning: get(self.thought_tokens),
            cache_read: get(self.cached_read_tokens),
            cache_write: get(self.cached_write_tokens),
        }
    }
}

/// The paths a tool call update names.
pub(crate) fn locations(update: &Value) -> Vec<String> {
    update
        .get("locations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|l| l.get("path").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

/// How a call that completed ended: OpenCode's shell says how its command exited; non-zero is
/// a failure, as in its native stream, and no exit at all a command stopped before it finished.
fn completed(update: &Value) -> Ending {
    let text = output_text(update);
    let bytes = text.as_ref().map(|t| t.len() as u64);
    let exit = update.pointer("/rawOutput/metadata/exit");
    match (exit, exit.and_then(Value::as_i64)) {
        (_, Some(code)) if code != 0 => {
            Ending::failed(ToolStatus::Error, format!("exit code {code}"), bytes)
        }
        (Some(Value::Null), _) => {
            Ending::failed(ToolStatus::Error, unfinished(text.as_deref()), bytes)
        }
        _ => match text.as_deref().and_then(stopped_note) {
            Some(_) => Ending::failed(ToolStatus::Error, unfinished(text.as_deref()), bytes),
            None => Ending::ok(bytes),
        },
    }
}

/// What a finished tool call handed back, as text: its content blocks, else its raw output.
fn output_text(update: &Value) -> Option<String> {
    let blocks: Vec<&str> = update
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c.pointer("/content/text").and_then(Value::as_str))
        .collect();
    if !blocks.is_empty() {
        return Some(blocks.join("\n"));
    }
    let raw = update.get("rawOutput")?;
    raw.get("output")
        .or_else(|| raw.get("error"))
        .and_then(Value::as_str)
        .map(str::to_owned)
        .or_else(|| raw.as_str().map(str::to_owned))
}

/// The provider's failure a prompt's error is, when the agent says so: Claude Code's adapter
/// quotes `API Error: 500 …`, OpenCode names an `APIError`, Codex's adapter gives its
/// `codex_error_info`.
fn provider_failure(error: &RpcError) -> Option<ProviderError> {
    let data = error.data.as_ref();
    let field = |key: &str| data.and_then(|d| d.get(key)).and_then(Value::as_str);
    let detail = field("message").unwrap_or(&error.message);
    let (name, status) = if let Some((_, rest)) = error.message.split_once("API Error: ") {
        let status = rest.get(..3).and_then(|s| s.parse::<u16>().ok());
        (
            "api_error".to_owned(),
            status.filter(|s| (100..600).contains(s)),
        )
    } else if let Some(name) = field("errorName").filter(|n| n.ends_with("APIError")) {
        (name.to_owned(), None)
    } else if let Some(info) = data.and_then(|d| d.get("codex_error_info")) {
        let name = info
            .as_str()
            .map(str::to_owned)
            .or_else(|| info.as_object()?.keys().next().cloned())
            .unwrap_or_else(|| "error".to_owned());
        (name, None)
    } else {
        return None;
    };
    Some(ProviderError {
        name,
        message: detail
            .strip_prefix("Internal error: ")
            .unwrap_or(detail)
            .to_owned(),
        status,
        retryable: None,
    })
}

/// The first line of a tool's output that says something: not blank, not a Markdown fence.
fn first_words(text: &str) -> Option<&str> {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("```"))
}

/// What OpenCode's shell appends when it stopped a command itself: the user aborted it, or it
/// ran past its timeout.
const STOPPED_NOTES: [&str; 2] = [
    "User aborted the command",
    "shell tool terminated command after exceeding timeout",
];

/// The note of a command stopped before it finished, in the `<shell_metadata>` OpenCode's shell
/// appends to its output.
fn stopped_note(text: &str) -> Option<&str> {
    let (_, meta) = text.rsplit_once("<shell_metadata>")?;
    let meta = meta.split("</shell_metadata>").next()?;
    meta.lines()
        .map(str::trim)
        .find(|l| STOPPED_NOTES.iter().any(|n| l.starts_with(n)))
}

/// Why a command with no exit status is not a success: how it was stopped, when its output
/// says.
fn unfinished(text: Option<&str>) -> String {
    match text.and_then(stopped_note) {
        Some(note) => format!("stopped before it finished: {note}"),
        None => "stopped before it finished (no exit status)".to_owned(),
    }
}

/// Whether a tool's error says it was refused permission.
fn is_denial(error: &str) -> bool {
    let lower = error.to_ascii_lowercase();
    lower.contains("permission")
        && (lower.contains("reject") || lower.contains("denied") || lower.contains("refused"))
}

/// stderr of an ACP agent: its log lines.
struct Stderr;

impl StderrParser for Stderr {
    fn line(&mut self, line: &str, out: &mut Vec<EventKind>) {
        if !line.trim().is_empty() {
            out.push(EventKind::Stderr {
                line: line.to_owned(),
            });
        }
    }
}

#[cfg(test)]
mod tests;
