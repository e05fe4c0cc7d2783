//! Agents over the Agent Client Protocol (`--via acp`, `--acp-cmd`): JSON-RPC 2.0, one message a
//! line, on the agent's stdin and stdout. runbook is the client. This parser reads what the agent
//! writes: its `session/update` notifications become universal events as they arrive (a tool the
//! moment it is announced, text as it streams), and every response and request is handed on, in
//! order, to the supervisor's client (`supervisor::acp`), which writes the answers.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Deserialize;
use serde_json::{Map, Value};

use super::reported::{self, Cost, Count};
use super::summary::{self, InputFields};
use super::tools::{Ending, OpenCalls};
use super::{
    Adapter, Cli, Invocation, ParseContext, StderrParser, StdoutParser, StreamEnd,
    announce_session, npm_cli, unparsed_line, unreadable_reason,
};
use crate::event::{
    AgentResult, EventKind, StepUsage, Tokens, ToolKind, ToolStart, ToolStatus, UnparsedReason,
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
}

/// Where the parser hands what the agent wrote to its client. Drained by the stdout reader after
/// each batch of lines, so that the client sees a message only after the events before it.
pub(crate) type Inbox = tokio::sync::mpsc::UnboundedSender<Incoming>;

/// An agent driven over ACP: the command that starts it, and the name it goes by.
pub(crate) struct Acp {
    cli: Cli,
    /// Arguments that put the agent in ACP mode, before any extra ones.
    args: &'static [&'static str],
}

/// OpenCode's own ACP server, `opencode acp`.
pub(crate) static OPENCODE: Acp = Acp {
    cli: npm_cli!(program: "opencode", package: "opencode-ai", bin_env: "RUNBOOK_OPENCODE_BIN"),
    args: &["acp"],
};

/// Claude Code through Zed's ACP adapter.
pub(crate) static CLAUDE: Acp = Acp {
    cli: Cli {
        name: "claude",
        program: "claude-agent-acp",
        install_hint: "install it with `npm install -g @zed-industries/claude-agent-acp`, or point --agent-bin / RUNBOOK_CLAUDE_BIN at it",
    },
    args: &[],
};

/// Codex through Zed's ACP adapter.
pub(crate) static CODEX: Acp = Acp {
    cli: Cli {
        name: "codex",
        program: "codex-acp",
        install_hint: "install it with `npm install -g @zed-industries/codex-acp`, or point --agent-bin / RUNBOOK_CODEX_BIN at it",
    },
    args: &[],
};

/// Any other ACP agent (`--acp-cmd`).
pub(crate) static CUSTOM: Acp = Acp {
    cli: Cli {
        name: "acp",
        program: "the --acp-cmd program",
        install_hint: "check the first word of --acp-cmd",
    },
    args: &[],
};

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

    fn stdout_parser(&self, ctx: ParseContext) -> Box<dyn StdoutParser> {
        Box::new(Parser::new(ctx))
    }

    fn stderr_parser(&self) -> Box<dyn StderrParser> {
        Box::new(Stderr)
    }
}

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

/// A tool call announced but not yet shown: it is shown once its input is known (or it runs).
struct Announced {
    call_id: String,
    name: String,
    kind: ToolKind,
    title: Option<String>,
    input: Map<String, Value>,
    locations: Vec<String>,
}

struct Parser {
    cwd: PathBuf,
    model: Option<String>,
    prices: Arc<PriceTable>,
    inbox: Option<Inbox>,
    session_announced: bool,
    calls: OpenCalls,
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
            announced: Vec::new(),
            text: String::new(),
            reasoning: String::new(),
            session_cost: None,
            turn_start_cost: None,
            in_turn: false,
            last_text: String::new(),
        }
    }

    /// The tool call `call_id` as shown (or as it will be shown, once announced).
    fn known_tool(&self, call_id: &str) -> Option<ToolStart> {
        if let Some(open) = self.calls.get(call_id) {
            return Some(open.clone());
        }
        let a = self.announced.iter().find(|a| a.call_id == call_id)?;
        Some(ToolStart {
            input: input_summary(&a.input, &a.locations, a.title.as_deref(), &self.cwd),
            call_id: a.call_id.clone(),
            name: a.name.clone(),
            kind: a.kind,
            parent: None,
        })
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
            // The agent's echo of the prompt, its commands, modes and options: nothing that
            // happens.
            _ => {}
        }
        true
    }

    /// A `usage_update`: the session's cost so far; what it grew by is a step's cost.
    fn usage(&mut self, update: &Value, out: &mut Vec<EventKind>) {
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
        let raw_input = update.get("rawInput").and_then(Value::as_object);
        let locations: Vec<String> = update
            .get("locations")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|l| l.get("path").and_then(Value::as_str).map(str::to_owned))
            .collect();
        let title = update.get("title").and_then(Value::as_str);
        if self.calls.get(call_id).is_none() {
            let i = match self.announced.iter().position(|a| a.call_id == call_id) {
                Some(i) => i,
                None => {
                    let acp_kind = update.get("kind").and_then(Value::as_str);
                    let name = tool_name(title, acp_kind);
                    self.announced.push(Announced {
                        call_id: call_id.to_owned(),
                        kind: tool_kind(acp_kind, &name),
                        name,
                        title: title.map(str::to_owned),
                        input: Map::new(),
                        locations: Vec::new(),
                    });
                    self.announced.len() - 1
                }
            };
            let a = &mut self.announced[i];
            if let Some(input) = raw_input {
                a.input
                    .extend(input.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
            if !locations.is_empty() {
                a.locations.clone_from(&locations);
            }
            // Where it runs is not yet what it does (OpenCode announces `bash` with its `cwd`).
            let known = a
                .input
                .keys()
                .any(|k| !matches!(k.as_str(), "cwd" | "workdir" | "timeout"));
            let moving = matches!(status, Some("in_progress" | "completed" | "failed"));
            if !(known || moving) {
                return;
            }
            let a = self.announced.remove(i);
            let start = ToolStart {
                input: input_summary(&a.input, &a.locations, a.title.as_deref(), &self.cwd),
                call_id: a.call_id,
                name: a.name,
                kind: a.kind,
                parent: None,
            };
            self.calls.start(start, out);
        }
        match status {
            Some("completed") => {
                let bytes = output_text(update).map(|t| t.len() as u64);
                self.calls.finish(call_id, Ending::ok(bytes), out);
            }
            Some("failed") => {
                let text = output_text(update);
                let error = text
                    .as_deref()
                    .map(summary::first_line)
                    .filter(|l| !l.is_empty())
                    .unwrap_or("the tool call failed")
                    .to_owned();
                let bytes = text.map(|t| t.len() as u64);
                let status = if is_denial(&error) {
                    ToolStatus::Denied
                } else {
                    ToolStatus::Error
                };
                self.calls
                    .finish(call_id, Ending::failed(status, error, bytes), out);
            }
            _ => {}
        }
    }

    /// A response: events for what it says, then handed on to the client.
    fn response(&mut self, id: Value, message: Message, out: &mut Vec<EventKind>) {
        let outcome = match message.error {
            Some(error) => Err(error),
            None => Ok(message.result.unwrap_or(Value::Null)),
        };
        if let Ok(result) = &outcome {
            if let Some(version) = result.pointer("/agentInfo/version").and_then(Value::as_str) {
                out.push(EventKind::AgentVersion {
                    version: version.to_owned(),
                    tested_with: Vec::new(),
                });
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
        self.hand_on(Incoming::Response { id, outcome });
    }

    /// The prompt's result: the turn's last events and the agent's totals for it.
    fn answered(&mut self, reason: &str, result: &Value, out: &mut Vec<EventKind>) {
        self.flush_text(out);
        for a in std::mem::take(&mut self.announced) {
            let start = ToolStart {
                input: input_summary(&a.input, &a.locations, a.title.as_deref(), &self.cwd),
                call_id: a.call_id,
                name: a.name,
                kind: a.kind,
                parent: None,
            };
            self.calls.start(start, out);
        }
        self.calls.close_all(out);
        #[derive(Deserialize, Default)]
        #[serde(rename_all = "camelCase", default)]
        struct Usage {
            input_tokens: Count,
            output_tokens: Count,
            thought_tokens: Count,
            cached_read_tokens: Count,
            cached_write_tokens: Count,
        }
        let usage = result
            .get("usage")
            .filter(|u| u.is_object())
            .and_then(read::<Usage>);
        let mut tokens_unreadable = false;
        let tokens = usage.map(|u| {
            let mut get = |n: Count| n.get(&mut tokens_unreadable);
            Tokens {
                input: get(u.input_tokens),
                output: get(u.output_tokens),
                reasoning: get(u.thought_tokens),
                cache_read: get(u.cached_read_tokens),
                cache_write: get(u.cached_write_tokens),
            }
        });
        let reported = match (self.session_cost, self.turn_start_cost) {
            (Some(now), before) => Some(Cost::Number((now - before.unwrap_or(0.0)).max(0.0))),
            (None, _) => None,
        };
        let mut checked = reported::check(reported, || None, tokens_unreadable);
        if checked.cost_usd.is_none()
            && !tokens_unreadable
            && let Some(tokens) = &tokens
            && let Some(cost) = reported::estimate(&self.prices, self.model.as_deref(), tokens)
        {
            checked.cost_usd = Some(cost);
            checked.cost_source = Some(crate::event::CostSource::Estimated);
        }
        let ok = reason == "end_turn";
        let message = if ok {
            Some(self.last_text.trim().to_owned()).filter(|t| !t.is_empty())
        } else {
            match stop_reason_end(reason) {
                StreamEnd::Truncated(m) | StreamEnd::Failed(m) => Some(m),
                StreamEnd::Finished => None,
            }
        };
        out.push(EventKind::AgentResult(AgentResult {
            ok,
            message,
            tokens,
            cost_usd: checked.cost_usd,
            cost_source: checked.cost_source,
            cost_rejected: checked.cost_rejected,
            tokens_unreadable,
            model_calls: None,
            duration_ms: None,
        }));
        self.in_turn = false;
        self.turn_start_cost = self.session_cost;
    }
}

impl StdoutParser for Parser {
    fn line(&mut self, line: &[u8], out: &mut Vec<EventKind>) {
        // What runbook itself sent, in a recorded log: not the agent's, but the session's work
        // dir is in it, for paths to be shown as they were live.
        if let Some(sent) = line.strip_prefix(SENT_MARK.as_bytes()) {
            if let Ok(sent) = serde_json::from_slice::<Message>(sent)
                && sent.method.as_deref() == Some("session/new")
                && let Some(cwd) = sent
                    .params
                    .as_ref()
                    .and_then(|p| p.get("cwd"))
                    .and_then(Value::as_str)
            {
                self.cwd = PathBuf::from(cwd);
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
                    out.push(unparsed_line(UnparsedReason::UnexpectedJson, line));
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
        self.calls.close_all(out);
        if self.in_turn {
            StreamEnd::Truncated("the agent's output ended before it answered the prompt".into())
        } else {
            StreamEnd::Finished
        }
    }
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
        words
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(" ")
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

/// Whether a tool's error says it was refused permission.
fn is_denial(error: &str) -> bool {
    let lower = error.to_ascii_lowercase();
    lower.contains("permission") && (lower.contains("reject") || lower.contains("denied"))
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
