//! Codex adapter: `codex exec --json` JSONL and its stderr, as universal events.
//!
//! Codex prints `thread.started`, `turn.started`, `item.started` / `item.updated` /
//! `item.completed` for each message, command, file change, tool call or subagent call, top-level
//! `error`s (each reconnect is one), and ends the turn with `turn.completed` (the turn's token
//! usage) or `turn.failed`. It reports no cost: runbook estimates it from the price table. Tool
//! calls that Codex blocks or fails before running leave no item at all, only an `ERROR
//! codex_core::tools::router` line on stderr, which becomes the tool's event here.

mod fast;

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use fast::agrees as fast_path_agrees;

use std::borrow::Cow;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::late::AfterFinal;
use super::prints;
use super::reported::Count;
use super::scan::{self, Name};
use super::summary::{self, InputFields};
use super::tools::{self, Ending, OpenCalls};
use super::{
    Adapter, Cli, Invocation, ParseContext, Permissions, StderrParser, StdoutParser, StreamEnd,
    npm_cli, parse_line_fast, relative_to, unparsed_line,
};
use crate::event::{
    AgentResult, EventKind, PriceBasis, ProviderError, ProviderRetry, Tokens, ToolStart,
    ToolStatus, UnparsedReason,
};
use crate::files;
use crate::prices::PriceTable;

/// Longest tool error text kept in an event.
const MAX_ERROR_CHARS: usize = 2000;
/// How many running subagents are followed (to tell when each finishes); more are shown
/// starting, not finishing.
const MAX_SUBAGENTS: usize = 1000;
/// The stderr line Codex always prints, stdin being /dev/null.
const STDIN_NOTICE: &str = "Reading additional input from stdin...";
/// The items that are tool calls.
const TOOL_ITEMS: &[&str] = &[
    "command_execution",
    "file_change",
    "mcp_tool_call",
    "web_search",
    "collab_tool_call",
];
/// The items that are not tool calls: the model's words and thoughts, a warning, the plan.
const OTHER_ITEMS: &[&str] = &["agent_message", "reasoning", "error", "todo_list"];
/// The tracing target of a tool call Codex refused or could not make.
const ROUTER_ERROR: &str = "ERROR codex_core::tools::router: error=";

pub(crate) struct Codex;

impl Adapter for Codex {
    fn cli(&self) -> Cli {
        npm_cli!(program: "codex", package: "@openai/codex", bin_env: "RUNBOOK_CODEX_BIN")
    }

    fn args(&self, inv: &Invocation<'_>) -> Vec<String> {
        let mut args = vec!["exec".to_owned()];
        if inv.resume_session.is_some() {
            args.push("resume".to_owned());
        }
        args.extend(["--json".to_owned(), "--skip-git-repo-check".to_owned()]);
        // `exec resume` has no --sandbox flag; the config override works for both.
        let sandbox = match inv.permissions {
            Permissions::Agent => None,
            Permissions::ReadOnly => Some("read-only"),
            Permissions::Workspace => Some("workspace-write"),
            Permissions::Bypass => {
                args.push("--dangerously-bypass-approvals-and-sandbox".to_owned());
                None
            }
        };
        if let Some(mode) = sandbox {
            args.extend(["-c".to_owned(), format!("sandbox_mode=\"{mode}\"")]);
        }
        if let Some(model) = inv.model {
            args.extend(["--model".to_owned(), model.to_owned()]);
        }
        args.extend(inv.extra_args.iter().cloned());
        args.push("--".to_owned());
        if let Some(session) = inv.resume_session {
            args.push(session.to_owned());
        }
        args.push(inv.prompt.to_owned());
        args
    }

    fn reports_steps(&self) -> bool {
        false
    }

    fn configured_model(&self, env: &[(String, String)]) -> Option<(String, PathBuf)> {
        let var = |name: &str| {
            env.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into())
                .or_else(|| std::env::var_os(name))
        };
        let home = var("CODEX_HOME")
            .map(PathBuf::from)
            .or_else(|| var("HOME").map(|h| Path::new(&h).join(".codex")))?;
        let file = home.join("config.toml");
        let bytes = files::read(&file, files::CONFIG_LIMIT, files::Links::Follow).ok()?;
        Some((model_from_config(&String::from_utf8(bytes).ok()?)?, file))
    }

    fn own_paths(&self, var: super::own_paths::Var<'_>, _cwd: &Path) -> super::own_paths::OwnPaths {
        super::own_paths::codex(var)
    }

    fn stdout_parser(&self, ctx: ParseContext) -> Box<dyn StdoutParser> {
        let model = ctx
            .model
            .or_else(|| self.configured_model(&[]).map(|(model, _)| model));
        Box::new(Parser {
            cwd: ctx.cwd,
            model,
            prices: ctx.prices,
            sandboxed: ctx.sandboxed,
            ..Parser::default()
        })
    }

    fn stderr_parser(&self) -> Box<dyn StderrParser> {
        Box::new(Stderr { calls: 0 })
    }
}

/// The model Codex will use when none is given: `model = "…"` at the top of
/// `$CODEX_HOME/config.toml` (default `~/.codex`).
fn model_from_config(text: &str) -> Option<String> {
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            return None;
        }
        if let Some((key, value)) = line.split_once('=')
            && key.trim() == "model"
        {
            let value = value.split(" #").next().unwrap_or(value).trim();
            return Some(value.trim_matches(['"', '\'']).to_owned()).filter(|v| !v.is_empty());
        }
    }
    None
}

#[derive(Default)]
struct Parser {
    cwd: PathBuf,
    model: Option<String>,
    prices: Arc<PriceTable>,
    /// Under `--sandbox`: a failed command's output is searched for the refusal that failed it.
    sandboxed: bool,
    calls: OpenCalls,
    /// Subagent thread id → the call id of the `spawn_agent` that started it.
    subagents: HashMap<String, String>,
    last_error: Option<String>,
    /// Reconnects announced so far.
    retries: u32,
    end: Option<Result<(), String>>,
    /// What came after `turn.completed` (or `turn.failed`).
    after: AfterFinal,
}

impl StdoutParser for Parser {
    fn line(&mut self, line: &[u8], out: &mut Vec<EventKind>) {
        let (late, from) = (self.end.is_some(), out.len());
        // Most of a busy stream: an item line in Codex's own layout, its item read in place.
        let in_place = scan::Cursor::ascii(line).and_then(|c| {
            fast::item_line(c, |kind, item| {
                if !known_item(item.kind.as_str()) {
                    out.push(unparsed_line(UnparsedReason::UnknownType, line));
                }
                match kind {
                    "item.completed" => self.item_completed(item, out),
                    _ => self.item_started(item, out),
                }
            })
        });
        if in_place.is_none() {
            let Some(parsed) = parse_line_fast::<Line>(line, out, fast::line) else {
                return;
            };
            self.parsed(parsed, line, out);
        }
        if late {
            self.after.mark(out, from);
        }
    }

    fn end(&mut self, out: &mut Vec<EventKind>) -> StreamEnd {
        self.calls.close_all(out);
        let end = match self.end.take() {
            Some(Ok(())) => StreamEnd::Finished,
            Some(Err(message)) => StreamEnd::Failed(format!("Codex: {message}")),
            None => {
                StreamEnd::Truncated("the output ended before Codex's turn.completed".to_owned())
            }
        };
        self.after.end(end)
    }
}

/// Whether runbook knows what an item of this type is.
fn known_item(kind: &str) -> bool {
    TOOL_ITEMS.contains(&kind) || OTHER_ITEMS.contains(&kind)
}

impl Parser {
    /// A line read in full: anything but an item line in Codex's own layout.
    fn parsed(&mut self, parsed: Line<'_>, line: &[u8], out: &mut Vec<EventKind>) {
        match parsed.kind.as_str() {
            "thread.started" => {
                out.push(EventKind::SessionStarted {
                    session_id: parsed.thread_id.map(Cow::into_owned).unwrap_or_default(),
                });
                self.announce_unpriced_model(out);
            }
            "turn.started" => {}
            "item.started" | "item.updated" | "item.completed" => {
                let Some(mut item) = parsed.item else { return };
                if !known_item(item.kind.as_str()) {
                    out.push(unparsed_line(UnparsedReason::UnknownType, line));
                }
                if parsed.kind == "item.completed" {
                    self.item_completed(&mut item, out);
                } else {
                    self.item_started(&item, out);
                }
            }
            "error" => self.error(parsed.message.map(Cow::into_owned).unwrap_or_default(), out),
            "turn.completed" => self.turn_completed(parsed.usage.unwrap_or_default(), out),
            "turn.failed" => {
                let message = parsed
                    .error
                    .and_then(|e| e.message)
                    .unwrap_or_else(|| "the turn failed".to_owned());
                if self.last_error.as_deref() != Some(message.as_str()) {
                    out.push(provider_error(&message));
                }
                out.push(EventKind::AgentResult(AgentResult {
                    ok: false,
                    message: Some(message.clone()),
                    tokens: None,
                    cost_usd: None,
                    cost_source: None,
                    cost_rejected: None,
                    tokens_unreadable: false,
                    tokens_partial: false,
                    model_calls: None,
                    duration_ms: None,
                }));
                self.end = Some(Err(message));
            }
            _ => out.push(unparsed_line(UnparsedReason::UnknownType, line)),
        }
    }

    /// The tool call an item is, if it is one (its type is one of [`TOOL_ITEMS`]).
    fn tool_of(&self, item: &Item<'_>) -> Option<ToolStart> {
        let (name, input) = match item.kind.as_str() {
            "command_execution" => (
                Cow::Borrowed("shell"),
                summary::truncate(
                    summary::first_line(unwrap_shell(item.command.as_deref().unwrap_or(""))),
                    120,
                ),
            ),
            "file_change" => (Cow::Borrowed("apply_patch"), self.changed_paths(item)),
            "mcp_tool_call" => {
                let server = item.server.as_deref().unwrap_or("mcp");
                let tool = item.tool.as_deref().unwrap_or("tool");
                (
                    Cow::Owned(format!("{server}.{tool}")),
                    arguments_summary(item.arguments.as_ref(), &self.cwd),
                )
            }
            "web_search" => (
                Cow::Borrowed("web_search"),
                item.query.as_deref().unwrap_or_default().to_owned(),
            ),
            "collab_tool_call" => (
                Cow::Borrowed(item.tool.as_deref().unwrap_or("agent")),
                item.prompt
                    .as_deref()
                    .map(|p| summary::truncate(summary::first_line(p), 120))
                    .unwrap_or_else(|| format!("{} agent(s)", item.receiver_thread_ids.len())),
            ),
            _ => return None,
        };
        Some(tools::start(&item.id, &name, input, None))
    }

    fn changed_paths(&self, item: &Item<'_>) -> String {
        let paths: Vec<&str> = item
            .changes
            .iter()
            .map(|c| relative_to(&c.path, &self.cwd))
            .collect();
        summary::truncate(&paths.join(", "), 120)
    }

    fn item_started(&mut self, item: &Item<'_>, out: &mut Vec<EventKind>) {
        if let Some(start) = self.tool_of(item) {
            self.calls.start(start, out);
        }
    }

    /// Takes the item where it lies (its texts are moved out): moving it would copy its 448 bytes
    /// for every line.
    fn item_completed(&mut self, item: &mut Item<'_>, out: &mut Vec<EventKind>) {
        match item.kind.as_str() {
            "agent_message" => out.push(EventKind::Text {
                text: item.text.take().map(Cow::into_owned).unwrap_or_default(),
            }),
            "reasoning" => out.push(EventKind::Reasoning {
                text: item.text.take().map(Cow::into_owned).unwrap_or_default(),
            }),
            "error" => out.push(EventKind::AgentWarning {
                message: item.message.take().map(Cow::into_owned).unwrap_or_default(),
            }),
            "todo_list" => {
                let n = item.items.len();
                let ending = Ending::ok(None);
                let input = format!("{n} todo{}", if n == 1 { "" } else { "s" });
                self.calls.once(
                    tools::start(&item.id, "update_plan", input, None),
                    ending,
                    out,
                );
            }
            // A call already started (the common case) is not described again.
            kind if TOOL_ITEMS.contains(&kind) && self.calls.get(&item.id).is_some() => {
                self.finish(item, out);
            }
            // An item of a type runbook does not know was counted unparsed by its line.
            _ => {
                let Some(start) = self.tool_of(item) else {
                    return;
                };
                self.calls.start(start, out);
                self.finish(item, out);
            }
        }
    }

    /// `tool.completed` for a call's item, and for a subagent call its subagents' news.
    fn finish(&mut self, item: &Item<'_>, out: &mut Vec<EventKind>) {
        let ending = self.ending(item);
        let status = ending.status;
        let at = out.len();
        self.calls.finish(&item.id, ending, out);
        // Only a command is told whole: a file change names its paths, not what changed.
        if item.kind == "command_execution"
            && let Some(command) = item.command.as_deref()
        {
            let input = serde_json::json!({ "command": command });
            let output = item.aggregated_output.as_deref().unwrap_or_default();
            prints::whole(
                &item.id,
                "shell",
                &input,
                item.exit_code,
                output,
                &mut out[at..],
            );
            if self.sandboxed && status == ToolStatus::Error {
                prints::refusal_of(&item.id, output, &mut out[at..]);
            }
        }
        if item.kind == "collab_tool_call" {
            self.subagent(item, status, out);
        }
    }

    fn ending(&self, item: &Item<'_>) -> Ending {
        let output = item.aggregated_output.as_deref().map(|o| o.len() as u64);
        let failed = matches!(item.status.as_deref(), Some("failed" | "declined"));
        match item.kind.as_str() {
            "command_execution" => match item.exit_code {
                Some(code) if code != 0 || failed => {
                    let last = item
                        .aggregated_output
                        .as_deref()
                        .and_then(|o| o.lines().rev().find(|l| !l.trim().is_empty()))
                        .map(|l| format!(": {}", summary::truncate(l.trim(), 200)))
                        .unwrap_or_default();
                    Ending::failed(ToolStatus::Error, format!("exit code {code}{last}"), output)
                }
                None if failed => Ending::failed(ToolStatus::Error, "failed".to_owned(), output),
                _ => Ending::ok(output),
            },
            "mcp_tool_call" => match &item.error {
                Some(err) => Ending::failed(
                    ToolStatus::Error,
                    summary::truncate(&error_text(err), MAX_ERROR_CHARS),
                    None,
                ),
                None if failed => Ending::failed(ToolStatus::Error, "failed".to_owned(), None),
                None => Ending::ok(None),
            },
            _ if failed => Ending::failed(
                ToolStatus::Error,
                item.status.as_deref().unwrap_or_default().to_owned(),
                output,
            ),
            _ => Ending::ok(output),
        }
    }

    /// Subagents: `spawn_agent` starts them, a `wait` that sees them done finishes them.
    fn subagent(&mut self, item: &Item<'_>, status: ToolStatus, out: &mut Vec<EventKind>) {
        match item.tool.as_deref() {
            Some("spawn_agent") => {
                for thread in &item.receiver_thread_ids {
                    if self.subagents.len() < MAX_SUBAGENTS {
                        self.subagents.insert(thread.clone(), item.id.to_string());
                    }
                    out.push(EventKind::SubagentStarted {
                        session_id: Some(thread.clone()),
                        call_id: item.id.to_string(),
                        description: item
                            .prompt
                            .as_deref()
                            .map(|p| summary::truncate(summary::first_line(p), 120))
                            .unwrap_or_default(),
                    });
                }
            }
            _ => {
                let Some(states) = item.agents_states.as_ref().and_then(Value::as_object) else {
                    return;
                };
                for (thread, state) in states {
                    let done = state.get("status").and_then(Value::as_str);
                    let finished = match done {
                        Some("completed") => ToolStatus::Ok,
                        Some("errored" | "failed" | "shutdown" | "not_found") => ToolStatus::Error,
                        _ => continue,
                    };
                    if let Some(call_id) = self.subagents.remove(thread) {
                        out.push(EventKind::SubagentFinished {
                            call_id,
                            status: if status == ToolStatus::Ok {
                                finished
                            } else {
                                status
                            },
                            message: state
                                .get("message")
                                .and_then(Value::as_str)
                                .map(|m| summary::truncate(summary::first_line(m), 200)),
                        });
                    }
                }
            }
        }
    }

    fn error(&mut self, message: String, out: &mut Vec<EventKind>) {
        // `Reconnecting... 2/5 (the reason)`, or `Reconnecting... waiting for network (…)`.
        if let Some(rest) = message.strip_prefix("Reconnecting...") {
            self.retries += 1;
            let rest = rest.trim();
            let counts = rest.split_once(' ').and_then(|(counts, reason)| {
                let (n, max) = counts.split_once('/')?;
                Some((n.parse().ok()?, max.parse().ok()?, reason))
            });
            let (attempt, max_attempts, reason) = match counts {
                Some((n, max, reason)) => (n, Some(max), reason),
                None => (self.retries, None, rest),
            };
            let reason = reason.trim();
            let reason = reason
                .strip_prefix('(')
                .and_then(|r| r.strip_suffix(')'))
                .unwrap_or(reason);
            out.push(EventKind::ProviderRetry(ProviderRetry {
                attempt,
                max_attempts,
                delay_ms: None,
                status: http_status(reason),
                message: reason.to_owned(),
            }));
            return;
        }
        out.push(provider_error(&message));
        self.last_error = Some(message);
    }

    /// `model.announced` when the model Codex runs has no price of its own in the table: Codex
    /// reports no cost, so runbook says at the start how it will price it.
    fn announce_unpriced_model(&self, out: &mut Vec<EventKind>) {
        if let Some(model) = &self.model {
            let price = self.prices.basis(model);
            if matches!(price, PriceBasis::Conservative | PriceBasis::Unknown) {
                out.push(EventKind::ModelAnnounced {
                    model: model.clone(),
                    price,
                });
            }
        }
    }

    fn turn_completed(&mut self, usage: Usage, out: &mut Vec<EventKind>) {
        let mut tokens_unreadable = false;
        let mut get = |n: Count| n.get(&mut tokens_unreadable);
        let (input, cached) = (get(usage.input_tokens), get(usage.cached_input_tokens));
        let (output, reasoning) = (get(usage.output_tokens), get(usage.reasoning_output_tokens));
        let tokens = Tokens {
            input: input.saturating_sub(cached),
            output: output.saturating_sub(reasoning),
            reasoning,
            cache_read: cached,
            cache_write: get(usage.cache_write_input_tokens),
        };
        // Tokens that could not all be read give no estimate: it would be too low. A model
        // missing from the table is priced at its provider's highest known price.
        let priced = self
            .model
            .as_deref()
            .and_then(|m| self.prices.price_with_source(m, &tokens))
            .filter(|_| !tokens_unreadable);
        let (cost, cost_source) = (priced.map(|p| p.0), priced.map(|p| p.1));
        out.push(EventKind::AgentResult(AgentResult {
            ok: true,
            message: None,
            tokens: Some(tokens),
            cost_usd: cost,
            cost_source,
            cost_rejected: None,
            tokens_unreadable,
            tokens_partial: false,
            model_calls: None,
            duration_ms: None,
        }));
        self.end = Some(Ok(()));
    }
}

fn provider_error(message: &str) -> EventKind {
    EventKind::ProviderError(ProviderError {
        name: "error".to_owned(),
        message: message.to_owned(),
        status: http_status(message),
        retryable: None,
    })
}

/// The HTTP status quoted in a Codex error (`last status: 429 …`, `unexpected status 401 …`).
fn http_status(message: &str) -> Option<u16> {
    let rest = message.split_once("status")?.1;
    let rest = rest.trim_start_matches([':', ' ']);
    rest.get(..3)?
        .parse()
        .ok()
        .filter(|s| (100..600).contains(s))
}

/// `/bin/bash -lc 'cat README.md'` → `cat README.md`.
fn unwrap_shell(command: &str) -> &str {
    for shell in [
        "/bin/bash -lc ",
        "/bin/bash -c ",
        "bash -lc ",
        "/bin/sh -c ",
        "sh -c ",
    ] {
        if let Some(rest) = command.strip_prefix(shell) {
            let inner = rest
                .strip_prefix('\'')
                .and_then(|r| r.strip_suffix('\''))
                .or_else(|| rest.strip_prefix('"').and_then(|r| r.strip_suffix('"')));
            return inner.unwrap_or(rest);
        }
    }
    command
}

fn arguments_summary(arguments: Option<&Value>, cwd: &Path) -> String {
    let get = |key: &str| arguments.and_then(|a| a.get(key)).and_then(Value::as_str);
    summary::summarize(
        &InputFields {
            path: get("path").or(get("file_path")),
            command: get("command").or(get("cmd")),
            pattern: get("pattern").or(get("query")),
            description: get("description"),
            url: get("url"),
            todos: None,
        },
        None,
        cwd,
    )
}

fn error_text(err: &Value) -> String {
    err.get("message")
        .and_then(Value::as_str)
        .map_or_else(|| err.to_string(), str::to_owned)
}

/// Codex's stderr: a notice about stdin, tracing lines, and the only trace of tool calls it
/// refused or could not make.
struct Stderr {
    calls: u32,
}

impl StderrParser for Stderr {
    fn line(&mut self, line: &str, out: &mut Vec<EventKind>) {
        if line.trim() == STDIN_NOTICE {
            return;
        }
        let Some(error) = line.split_once(ROUTER_ERROR).map(|(_, e)| e.trim()) else {
            out.push(EventKind::Stderr {
                line: line.to_owned(),
            });
            return;
        };
        self.calls += 1;
        let call_id = format!("codex-stderr-{}", self.calls);
        let denied = error.contains("rejected")
            || error.contains("approval policy")
            || error.contains("blocked by");
        let tool = if error.starts_with("apply_patch") || error.starts_with("patch ") {
            "apply_patch".to_owned()
        } else if let Some(name) = error.strip_prefix("unsupported call: ") {
            name.split_whitespace()
                .next()
                .unwrap_or("unknown")
                .to_owned()
        } else {
            "shell".to_owned()
        };
        let text = summary::truncate(error, MAX_ERROR_CHARS);
        let (status, ending) = if denied {
            (
                ToolStatus::Denied,
                Ending::failed(ToolStatus::Denied, text.clone(), None),
            )
        } else {
            (
                ToolStatus::Error,
                Ending::failed(ToolStatus::Error, text.clone(), None),
            )
        };
        let mut calls = OpenCalls::default();
        calls.once(
            tools::start(&call_id, &tool, String::new(), None),
            ending,
            out,
        );
        if status == ToolStatus::Denied {
            out.push(EventKind::PermissionDenied {
                tool,
                detail: text,
                call_id: None,
            });
        }
    }
}

// The wire format: only what is read. Strings are borrowed from the line when the fast path
// reads it (serde_json, which reads the rest, copies them).

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: Name,
    thread_id: Option<Cow<'a, str>>,
    /// Boxed: it is large, and every line would move it.
    item: Option<Box<Item<'a>>>,
    message: Option<Cow<'a, str>>,
    error: Option<ErrorBody>,
    usage: Option<Usage>,
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct ErrorBody {
    message: Option<String>,
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize, Default)]
#[serde(default)]
struct Usage {
    input_tokens: Count,
    cached_input_tokens: Count,
    cache_write_input_tokens: Count,
    output_tokens: Count,
    reasoning_output_tokens: Count,
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq, Clone))]
#[derive(Deserialize)]
struct Item<'a> {
    id: Cow<'a, str>,
    #[serde(rename = "type")]
    kind: Name,
    text: Option<Cow<'a, str>>,
    message: Option<Cow<'a, str>>,
    command: Option<Cow<'a, str>>,
    aggregated_output: Option<Cow<'a, str>>,
    exit_code: Option<i64>,
    status: Option<Cow<'a, str>>,
    #[serde(default)]
    changes: Vec<Change>,
    server: Option<Cow<'a, str>>,
    tool: Option<Cow<'a, str>>,
    arguments: Option<Value>,
    error: Option<Value>,
    query: Option<Cow<'a, str>>,
    prompt: Option<Cow<'a, str>>,
    #[serde(default)]
    receiver_thread_ids: Vec<String>,
    agents_states: Option<Value>,
    #[serde(default)]
    items: Vec<Value>,
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq, Clone))]
#[derive(Deserialize)]
struct Change {
    path: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::CostSource;

    #[test]
    fn recorded_transcripts() {
        insta::glob!("../../fixtures/codex", "*.stdout.ndjson", |path| {
            let ctx = ParseContext {
                model: Some("gpt-5.5".to_owned()),
                ..ParseContext::new(PathBuf::from(format!(
                    "/scratch/codex-harness-run/{}/ws",
                    super::super::transcript::name(path)
                )))
            };
            insta::assert_yaml_snapshot!(super::super::transcript::read(&Codex, path, ctx));
        });
    }

    #[test]
    fn recorded_transcripts_of_codex_0_171_0() {
        insta::glob!("../../fixtures/codex-0.171.0", "*.stdout.ndjson", |path| {
            let ctx = ParseContext {
                model: Some("gpt-5.5".to_owned()),
                ..ParseContext::new(PathBuf::from(format!(
                    "/scratch/codex-run/{}/ws",
                    super::super::transcript::name(path)
                )))
            };
            insta::assert_yaml_snapshot!(super::super::transcript::read(&Codex, path, ctx));
        });
    }

    #[test]
    fn the_items_that_are_tool_calls_are_the_ones_described_as_calls() {
        let parser = Parser::default();
        let kinds = [
            "agent_message",
            "reasoning",
            "todo_list",
            "error",
            "something_new",
        ];
        for kind in TOOL_ITEMS.iter().chain(&kinds) {
            let item: Item<'_> =
                serde_json::from_str(&format!(r#"{{"id":"i","type":"{kind}"}}"#)).unwrap();
            assert_eq!(
                parser.tool_of(&item).is_some(),
                TOOL_ITEMS.contains(kind),
                "{kind}"
            );
        }
    }

    /// An item of a type runbook does not know is counted unparsed, started or completed, in
    /// Codex's own layout or another; the items it knows are not.
    #[test]
    fn an_item_of_an_unknown_type_is_an_unparsed_line() {
        let lines = [
            r#"{"type":"item.started","item":{"id":"item_0","type":"image_generation","status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"image_generation","status":"completed"}}"#,
            r#"{"item":{"id":"item_1","type":"image_generation"},"type":"item.completed"}"#,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"agent_message","text":"hi"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_3","type":"todo_list","items":[]}}"#,
        ];
        let (events, _) = parse(&lines);
        let unparsed: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                EventKind::Unparsed(u) => Some(u.head.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(unparsed.len(), 3, "{events:?}");
        assert!(unparsed.iter().all(|h| h.contains("image_generation")));
    }

    #[test]
    fn the_default_model_is_read_from_the_top_of_the_codex_config() {
        let config =
            "# comment\nmodel = \"gpt-5.5\"  # the default\n[profiles.x]\nmodel = \"o3\"\n";
        assert_eq!(model_from_config(config).as_deref(), Some("gpt-5.5"));
        assert_eq!(model_from_config("[a]\nmodel = \"o3\"\n"), None);
    }

    fn parse(lines: &[&str]) -> (Vec<EventKind>, StreamEnd) {
        let mut parser = Parser {
            model: Some("gpt-5.5".to_owned()),
            cwd: PathBuf::from("/w"),
            ..Parser::default()
        };
        let mut out = Vec::new();
        for line in lines {
            parser.line(line.as_bytes(), &mut out);
        }
        let end = parser.end(&mut out);
        (out, end)
    }

    fn ends(events: &[EventKind]) -> Vec<(String, String, ToolStatus, Option<String>)> {
        events
            .iter()
            .filter_map(|e| match e {
                EventKind::ToolCompleted(t) => {
                    Some((t.name.clone(), t.input.clone(), t.status, t.error.clone()))
                }
                _ => None,
            })
            .collect()
    }

    /// Under `--sandbox`, a failed command's refusal joins its error even when it is not the
    /// output's last line; outside it the error stays the exit code and the last line.
    #[test]
    fn a_refusal_in_a_failed_commands_output_joins_its_error_in_the_sandbox() {
        let lines = [
            r#"{"type":"item.started","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'cat ~/.ssh/id; ls nope'","status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"command_execution","command":"/bin/bash -lc 'cat ~/.ssh/id; ls nope'","aggregated_output":"cat: /h/.ssh/id: Permission denied\nls: cannot access 'nope': No such file or directory\n","exit_code":2,"status":"failed"}}"#,
        ];
        let error = |sandboxed: bool| {
            let mut parser = Parser {
                cwd: PathBuf::from("/w"),
                sandboxed,
                ..Parser::default()
            };
            let mut out = Vec::new();
            for line in lines {
                parser.line(line.as_bytes(), &mut out);
            }
            ends(&out)[0].3.clone().unwrap()
        };
        assert_eq!(
            error(true),
            "exit code 2: ls: cannot access 'nope': No such file or directory: cat: /h/.ssh/id: Permission denied"
        );
        assert_eq!(
            error(false),
            "exit code 2: ls: cannot access 'nope': No such file or directory"
        );
    }

    #[test]
    fn mcp_calls_web_searches_todo_lists_and_deletions_are_tool_calls() {
        let (events, end) = parse(&[
            r#"{"type":"item.started","item":{"id":"item_0","type":"mcp_tool_call","server":"docs","tool":"lookup","arguments":{"query":"tokio select"},"status":"in_progress"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"docs","tool":"lookup","arguments":{"query":"tokio select"},"error":{"message":"server unavailable"},"status":"failed"}}"#,
            r#"{"type":"item.completed","item":{"id":"item_1","type":"web_search","query":"rust 1.91 release notes"}}"#,
            r#"{"type":"item.started","item":{"id":"item_2","type":"todo_list","items":[{"text":"a","completed":false}]}}"#,
            r#"{"type":"item.updated","item":{"id":"item_2","type":"todo_list","items":[{"text":"a","completed":true}]}}"#,
            r#"{"type":"item.completed","item":{"id":"item_2","type":"todo_list","items":[{"text":"a","completed":true},{"text":"b","completed":false}]}}"#,
            r#"{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"/w/old.rs","kind":"delete"}],"status":"completed"}}"#,
            r#"{"type":"item.started","item":{"id":"item_4","type":"command_execution","command":"/bin/bash -lc 'sleep 100'","status":"in_progress"}}"#,
        ]);
        assert_eq!(
            ends(&events),
            [
                (
                    "docs.lookup".to_owned(),
                    "tokio select".to_owned(),
                    ToolStatus::Error,
                    Some("server unavailable".to_owned())
                ),
                (
                    "web_search".to_owned(),
                    "rust 1.91 release notes".to_owned(),
                    ToolStatus::Ok,
                    None
                ),
                (
                    "update_plan".to_owned(),
                    "2 todos".to_owned(),
                    ToolStatus::Ok,
                    None
                ),
                (
                    "apply_patch".to_owned(),
                    "old.rs".to_owned(),
                    ToolStatus::Ok,
                    None
                ),
                (
                    "shell".to_owned(),
                    "sleep 100".to_owned(),
                    ToolStatus::Error,
                    Some(crate::agent::tools::UNFINISHED.to_owned())
                ),
            ]
        );
        assert!(matches!(end, StreamEnd::Truncated(_)), "no turn.completed");
    }

    #[test]
    fn a_failed_turn_is_one_provider_error_and_an_unknown_model_costs_unknown() {
        let (events, end) = parse(&[
            r#"{"type":"error","message":"exceeded retry limit, last status: 429 Too Many Requests"}"#,
            r#"{"type":"turn.failed","error":{"message":"exceeded retry limit, last status: 429 Too Many Requests"}}"#,
        ]);
        let errors: Vec<Option<u16>> = events
            .iter()
            .filter_map(|e| match e {
                EventKind::ProviderError(p) => Some(p.status),
                _ => None,
            })
            .collect();
        assert_eq!(errors, [Some(429)]);
        assert!(matches!(end, StreamEnd::Failed(m) if m.contains("429")));

        let mut parser = Parser {
            model: Some("my-own-model".to_owned()),
            ..Parser::default()
        };
        let mut out = Vec::new();
        parser.line(
            br#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":10}}"#,
            &mut out,
        );
        match &out[..] {
            [EventKind::AgentResult(r)] => {
                assert_eq!(r.cost_usd, None, "unknown, not zero");
                assert_eq!(r.tokens.map(|t| (t.input, t.cache_read)), Some((60, 40)));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn an_openai_model_missing_from_the_table_is_announced_and_priced_conservatively() {
        let prices = Arc::new(PriceTable::default());
        let mut parser = Parser {
            model: Some("gpt-9-unreleased".to_owned()),
            prices: prices.clone(),
            ..Parser::default()
        };
        let mut out = Vec::new();
        parser.line(br#"{"type":"thread.started","thread_id":"t"}"#, &mut out);
        assert!(
            out.iter().any(|e| matches!(e, EventKind::ModelAnnounced { model, price: PriceBasis::Conservative } if model == "gpt-9-unreleased")),
            "{out:?}"
        );
        out.clear();
        parser.line(
            br#"{"type":"turn.completed","usage":{"input_tokens":1000000,"cached_input_tokens":0,"output_tokens":1000000}}"#,
            &mut out,
        );
        let highest = prices
            .conservative("gpt-9-unreleased")
            .expect("an openai model");
        match &out[..] {
            [EventKind::AgentResult(r)] => {
                assert_eq!(r.cost_source, Some(CostSource::Conservative));
                let cost = r.cost_usd.expect("priced");
                assert!(
                    (cost - (highest.input + highest.output)).abs() < 1e-9,
                    "{cost}"
                );
                // Higher than any known OpenAI model's price for the same tokens.
                let known = prices.lookup("gpt-5.5").expect("in the table");
                assert!(cost >= known.input + known.output);
            }
            other => panic!("{other:?}"),
        }

        // A model in the table is not announced: its price is known.
        let mut parser = Parser {
            model: Some("gpt-5.5".to_owned()),
            prices,
            ..Parser::default()
        };
        let mut out = Vec::new();
        parser.line(br#"{"type":"thread.started","thread_id":"t"}"#, &mut out);
        assert!(
            !out.iter()
                .any(|e| matches!(e, EventKind::ModelAnnounced { .. }))
        );
    }

    #[test]
    fn reconnects_are_retries_with_or_without_a_count() {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        for line in [
            r#"{"type":"error","message":"Reconnecting... 1/2 (stream disconnected)"}"#,
            r#"{"type":"error","message":"Reconnecting... waiting for network (Connection failed: error sending request)"}"#,
        ] {
            parser.line(line.as_bytes(), &mut out);
        }
        let retries: Vec<(u32, Option<u32>, String)> = out
            .iter()
            .map(|e| match e {
                EventKind::ProviderRetry(r) => (r.attempt, r.max_attempts, r.message.clone()),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            retries,
            [
                (1, Some(2), "stream disconnected".to_owned()),
                (
                    2,
                    None,
                    "waiting for network (Connection failed: error sending request)".to_owned()
                ),
            ]
        );
    }

    #[test]
    fn shell_wrappers_and_statuses_are_read_from_codex_messages() {
        assert_eq!(
            unwrap_shell("/bin/bash -lc 'cat README.md'"),
            "cat README.md"
        );
        assert_eq!(unwrap_shell("ls -la"), "ls -la");
        assert_eq!(
            http_status("exceeded retry limit, last status: 429 Too Many Requests"),
            Some(429)
        );
        assert_eq!(
            http_status("unexpected status 401 Unauthorized: bad key"),
            Some(401)
        );
        assert_eq!(http_status("stream disconnected before completion"), None);
    }
}
