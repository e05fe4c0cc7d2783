//! Claude Code adapter: `claude -p --output-format stream-json --verbose
//! --include-partial-messages` NDJSON and its stderr, as universal events.
//!
//! Claude prints one `assistant` line per content block (several share a message id), `user`
//! lines with tool results, raw API stream events (`stream_event`) with the live text and each
//! call's real output tokens, `system` lines (init, retries, subagent tasks, refused calls) and a
//! final `result` with the run's authoritative totals. A step is one API message of the main
//! thread; its cost is estimated from the price table while the run goes (at its provider's
//! highest price for a model the table lacks), and the `result` replaces the estimates with the
//! cost Claude reports.
//!
//! A refused call is known by what Claude says of it in structured form first (a
//! `system/permission_denied` line, the tool result's `tool_result_meta`, the `result`'s list of
//! denials matched by tool-use id), and by its wording only when it says nothing else. Claude Code
//! 2.1.330 runs subagents in the background: the `Agent` call returns at once, and the subagent
//! ends at its `system/task_notification`; Claude then starts a second `system/init`, and prints
//! one `result` per main-thread run, each with the same cumulative totals.

mod fast;

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use fast::agrees as fast_path_agrees;

use std::borrow::Cow;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::late::AfterFinal;
use super::prints::{self, InputPrints};
use super::reported::{self, Cost, Count};
use super::scan::Name;
use super::summary::{self, InputFields};
use super::tools::{self, Ending, OpenCalls};
use super::{
    Adapter, Cli, Invocation, ParseContext, Permissions, StderrParser, StdoutParser, StreamEnd,
    announce_session, npm_cli, parse_line_fast, unparsed_line,
};
use crate::event::{
    AgentResult, EventKind, ProviderError, ProviderRetry, StepUsage, Tokens, ToolKind, ToolStatus,
    UnparsedReason,
};
use crate::prices::PriceTable;

/// The events of the Messages API's stream (`--include-partial-messages`) runbook knows: those it
/// reads and those it knowingly passes over (`content_block_start`, `content_block_stop`,
/// `message_stop`, `ping`). A `stream_event` of any other type is an `unparsed` line.
const STREAM_EVENTS: &[&str] = &[
    "message_start",
    "content_block_start",
    "content_block_delta",
    "content_block_stop",
    "message_delta",
    "message_stop",
    "ping",
];

/// Longest tool error text kept in an event.
const MAX_ERROR_CHARS: usize = 2000;
/// The content blocks runbook knows: read (text, thinking, a tool's call and result) or known
/// to say nothing it shows (a thought redacted, an image).
const KNOWN_BLOCKS: &[&str] = &[
    "text",
    "thinking",
    "redacted_thinking",
    "tool_use",
    "tool_result",
    "image",
];
/// How many denied call ids are remembered (so the result's list of denials does not repeat
/// them); past it, a denial may be told twice rather than memory grow.
const MAX_DENIED_IDS: usize = 4096;
/// What Claude Code prints on stderr when bypass is refused to root.
const ROOT_REFUSAL: &str = "cannot be used with root/sudo privileges";
/// Tool results that mean the call was not allowed, in Claude Code's words: only read when Claude
/// says nothing structured about the call.
const DENIAL_MARKERS: &[&str] = &[
    "but you haven't granted it yet",
    "was blocked. For security",
    "has been denied because",
    "Permission to use",
    "requested permissions to",
    "needs approval. The path is inside",
    "while in plan mode",
];
/// `system` subtypes that carry nothing runbook shows (progress, estimates, request markers, the
/// background task list, notices); any other subtype is kept as an `unparsed` line of unknown
/// type, so a new one is counted, never silently dropped.
const QUIET_SYSTEM: &[&str] = &[
    "thinking_tokens",
    "task_progress",
    "task_updated",
    "status",
    "background_tasks_changed",
    "informational",
    "compact_boundary",
    "hook_started",
    "hook_progress",
    "hook_response",
    "files_persisted",
];

pub(crate) struct Claude;

impl Adapter for Claude {
    fn cli(&self) -> Cli {
        npm_cli!(program: "claude", package: "@anthropic-ai/claude-code", bin_env: "RUNBOOK_CLAUDE_BIN")
    }

    fn args(&self, inv: &Invocation<'_>) -> Vec<String> {
        let mut args: Vec<String> = [
            "-p",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-partial-messages",
        ]
        .map(str::to_owned)
        .into();
        match inv.permissions {
            Permissions::Agent => {}
            Permissions::ReadOnly => args.extend(["--permission-mode".into(), "plan".into()]),
            Permissions::Workspace => {
                args.extend(["--permission-mode".into(), "acceptEdits".into()]);
            }
            Permissions::Bypass => args.push("--dangerously-skip-permissions".into()),
        }
        if let Some(model) = inv.model {
            args.extend(["--model".to_owned(), model.to_owned()]);
        }
        if let Some(session) = inv.resume_session {
            args.extend(["--resume".to_owned(), session.to_owned()]);
        }
        args.extend(inv.extra_args.iter().cloned());
        args.push("--".to_owned());
        args.push(inv.prompt.to_owned());
        args
    }

    fn preflight(&self, inv: &Invocation<'_>) -> Result<(), String> {
        let root = nix::unistd::geteuid().is_root();
        let sandbox = std::env::var_os("IS_SANDBOX").is_some_and(|v| v == "1");
        if inv.permissions == Permissions::Bypass && root && !sandbox {
            return Err(
                "Claude Code refuses --permissions bypass when run as root; if this \
                 machine is a throwaway sandbox, set IS_SANDBOX=1, otherwise run as another user \
                 or choose --permissions workspace"
                    .to_owned(),
            );
        }
        Ok(())
    }

    fn own_paths(&self, var: super::own_paths::Var<'_>, _cwd: &Path) -> super::own_paths::OwnPaths {
        super::own_paths::claude(var)
    }

    fn stdout_parser(&self, ctx: ParseContext) -> Box<dyn StdoutParser> {
        Box::new(Parser {
            cwd: ctx.cwd,
            model: ctx.model,
            prices: ctx.prices,
            sandboxed: ctx.sandboxed,
            ..Parser::default()
        })
    }

    fn stderr_parser(&self) -> Box<dyn StderrParser> {
        Box::new(Stderr)
    }
}

/// The main thread's API message in progress.
struct Step {
    id: String,
    tokens: Tokens,
    /// Some token count Claude reported for it was not a whole number.
    tokens_unreadable: bool,
    model: Option<String>,
    has_tool_use: bool,
}

#[derive(Default)]
struct Parser {
    cwd: PathBuf,
    model: Option<String>,
    prices: Arc<PriceTable>,
    session_announced: bool,
    /// Whether the raw API stream is on (`--include-partial-messages`): steps then end on
    /// `message_delta`, with real output tokens.
    streaming: bool,
    step: Option<Step>,
    calls: OpenCalls,
    /// The input fingerprints of the calls in flight.
    prints: InputPrints,
    /// Under `--sandbox`: a failed tool's output is searched for the refusal that failed it.
    sandboxed: bool,
    denied: HashSet<String>,
    /// Calls Claude said it refused (`system/permission_denied`), until their result arrives.
    refused: HashSet<String>,
    /// Agent calls whose subagent runs in the background: they end at its task notification.
    background: HashSet<String>,
    /// Whether the model the run uses was announced.
    model_announced: bool,
    /// Whether Claude's own sandbox was told (`agent.sandbox`, once a run).
    sandbox_told: bool,
    result: Option<Result<(), String>>,
    /// Whether an API failure was already told (by Claude's own error message).
    told_api_error: bool,
    /// Claude's own words for an API failure whose status it gives only in its `result`.
    pending_api_error: Option<String>,
    /// What came after the `result`.
    after: AfterFinal,
}

impl StdoutParser for Parser {
    fn line(&mut self, line: &[u8], out: &mut Vec<EventKind>) {
        let Some(parsed) = parse_line_fast::<Line>(line, out, fast::line) else {
            return;
        };
        announce_session(
            &mut self.session_announced,
            parsed.session_id.as_deref(),
            out,
        );
        let parent = parsed.parent_tool_use_id.as_deref();
        // A later `result` restates the run's cumulative totals: it is not work after the first.
        let late = self.result.is_some() && parsed.kind != "result";
        let from = out.len();
        match (parsed.kind.as_str(), parsed.subtype.as_deref()) {
            ("system", Some("init")) => self.init(parsed, out),
            ("system", Some("permission_denied")) => {
                if let Some(id) = parsed.tool_use_id
                    && self.refused.len() < MAX_DENIED_IDS
                {
                    self.refused.insert(id);
                }
            }
            ("system", Some("task_notification")) => self.task_notification(parsed, out),
            ("system", Some("api_retry")) => out.push(EventKind::ProviderRetry(retry(&parsed))),
            ("system", Some("task_started")) => {
                let call_id = parsed.tool_use_id.unwrap_or_default();
                if parsed.is_backgrounded == Some(true) && self.background.len() < MAX_DENIED_IDS {
                    self.background.insert(call_id.clone());
                }
                out.push(EventKind::SubagentStarted {
                    session_id: parsed.task_id,
                    call_id,
                    description: parsed.description.unwrap_or_default(),
                });
            }
            ("system", Some(subtype)) if QUIET_SYSTEM.contains(&subtype) => {}
            ("system", _) => out.push(unparsed_line(UnparsedReason::UnknownType, line)),
            ("stream_event", _) => match parsed.event {
                Some(event) if !STREAM_EVENTS.contains(&event.kind.as_str()) => {
                    out.push(unparsed_line(UnparsedReason::UnknownType, line));
                }
                Some(event) if parent.is_none() => self.stream_event(event, out),
                _ => {}
            },
            ("assistant", _) => {
                if let Some(message) = parsed.message {
                    unknown_blocks(&message, line, out);
                    self.assistant(message, parent, parsed.error.is_some(), out);
                }
            }
            ("user", _) => {
                if let Some(message) = parsed.message {
                    unknown_blocks(&message, line, out);
                    let meta = parsed.tool_result_meta.unwrap_or_default();
                    self.user(message, &meta, out);
                }
            }
            ("result", _) => self.result(parsed, out),
            _ => out.push(unparsed_line(UnparsedReason::UnknownType, line)),
        }
        if late {
            self.after.mark(out, from);
        }
    }

    fn end(&mut self, out: &mut Vec<EventKind>) -> StreamEnd {
        self.tell_api_error(None, None, out);
        self.calls.close_all(out);
        // A model call the output stopped inside of still spent its tokens.
        self.finish_step(Some("unfinished".to_owned()), out);
        let end = match self.result.take() {
            Some(Ok(())) => StreamEnd::Finished,
            Some(Err(message)) => StreamEnd::Failed(message),
            None => StreamEnd::Truncated(
                "the output ended before Claude Code's final result".to_owned(),
            ),
        };
        self.after.end(end)
    }
}

/// A `system/api_retry` line: the provider is being retried.
fn retry(parsed: &Line) -> ProviderRetry {
    ProviderRetry {
        attempt: parsed.attempt.unwrap_or(0),
        max_attempts: parsed.max_retries,
        delay_ms: parsed.retry_delay_ms.map(|ms| ms.round() as u64),
        status: parsed.error_status,
        message: parsed
            .error
            .as_ref()
            .and_then(Value::as_str)
            .unwrap_or("request failed")
            .to_owned(),
    }
}

impl Parser {
    /// `system/init`: the session's directory, its model and whether Claude Code sandboxes
    /// itself.
    fn init(&mut self, parsed: Line, out: &mut Vec<EventKind>) {
        if let Some(cwd) = parsed.cwd {
            self.cwd = cwd;
        }
        if let Some(model) = parsed.model {
            self.announce_model(&model, out);
            self.model.get_or_insert(model);
        }
        if let Some(enabled) = parsed.sandbox_enabled
            && !std::mem::replace(&mut self.sandbox_told, true)
        {
            out.push(EventKind::AgentSandbox { enabled });
        }
    }

    /// `model.announced` for the first model Claude names, with how runbook can price it.
    fn announce_model(&mut self, model: &str, out: &mut Vec<EventKind>) {
        if std::mem::replace(&mut self.model_announced, true) {
            return;
        }
        out.push(EventKind::ModelAnnounced {
            model: model.to_owned(),
            price: self.prices.basis(model),
        });
    }

    /// A provider failure, told once: Claude's own words for it (held until its `result` gives
    /// the status), else the `result`'s message.
    fn tell_api_error(
        &mut self,
        status: Option<u16>,
        message: Option<&str>,
        out: &mut Vec<EventKind>,
    ) {
        let text = match self.pending_api_error.take() {
            Some(text) => text,
            None if !self.told_api_error && status.is_some() => {
                message.unwrap_or_default().to_owned()
            }
            None => return,
        };
        self.told_api_error = true;
        out.push(EventKind::ProviderError(ProviderError {
            name: "APIError".to_owned(),
            status: status.or_else(|| api_status(&text)),
            message: text,
            retryable: None,
        }));
    }

    /// The real end of a background subagent: its call ends with the notification's status,
    /// and its summary is what it handed back.
    fn task_notification(&mut self, line: Line<'_>, out: &mut Vec<EventKind>) {
        let Some(id) = line.tool_use_id else { return };
        if !self.background.remove(&id) {
            return;
        }
        let summary = line.summary.unwrap_or_default();
        let ending = match line.status.as_deref() {
            Some("completed") | None => Ending::ok(Some(summary.len() as u64)),
            Some(status) => Ending::failed(
                ToolStatus::Error,
                summary::truncate(
                    &format!(
                        "the subagent ended {status}: {}",
                        summary::first_line(&summary)
                    ),
                    MAX_ERROR_CHARS,
                ),
                None,
            ),
        };
        let status = ending.status;
        if self.calls.finish(&id, ending, out).is_some() {
            out.push(EventKind::SubagentFinished {
                call_id: id,
                status,
                message: Some(summary::truncate(summary::first_line(&summary), 200))
                    .filter(|m| !m.is_empty()),
            });
        }
    }

    fn stream_event(&mut self, event: StreamEvent, out: &mut Vec<EventKind>) {
        match event.kind.as_str() {
            "message_start" => {
                self.streaming = true;
                if let Some(message) = event.message {
                    self.finish_step(None, out);
                    self.start_step(&message, out);
                }
            }
            "content_block_delta" => {
                if let Some(Delta {
                    text: Some(text), ..
                }) = event.delta
                    && !text.is_empty()
                {
                    out.push(EventKind::TextDelta { text });
                }
            }
            "message_delta" => {
                let output = event.usage.and_then(|u| u.output_tokens);
                if let Some(step) = &mut self.step
                    && let Some(output) = output
                {
                    step.tokens.output = output.get(&mut step.tokens_unreadable);
                }
                let reason = event.delta.and_then(|d| d.stop_reason);
                self.finish_step(reason, out);
            }
            _ => {}
        }
    }

    fn start_step(&mut self, message: &Message, out: &mut Vec<EventKind>) {
        let Some(id) = message.id.clone() else { return };
        let usage = message.usage.clone().unwrap_or_default();
        let mut tokens_unreadable = false;
        let mut get = |n: Option<Count>| n.unwrap_or_default().get(&mut tokens_unreadable);
        let tokens = Tokens {
            input: get(usage.input_tokens),
            // `message_start` carries a placeholder output count; the real one comes later.
            output: 0,
            reasoning: 0,
            cache_read: get(usage.cache_read_input_tokens),
            cache_write: get(usage.cache_creation_input_tokens),
        };
        self.step = Some(Step {
            id: id.clone(),
            tokens,
            tokens_unreadable,
            model: message.model.clone(),
            has_tool_use: false,
        });
        out.push(EventKind::StepStarted { id: Some(id) });
    }

    fn finish_step(&mut self, reason: Option<String>, out: &mut Vec<EventKind>) {
        let Some(step) = self.step.take() else { return };
        let reason = reason.unwrap_or_else(|| {
            if step.has_tool_use {
                "tool_use"
            } else {
                "end_turn"
            }
            .to_owned()
        });
        let model = step.model.as_deref().or(self.model.as_deref());
        // Tokens that could not all be read give no estimate: it would be too low. A model the
        // table lacks is priced at its provider's highest price, so a budget still holds.
        let cost = model
            .and_then(|m| self.prices.price_with_source(m, &step.tokens))
            .filter(|_| !step.tokens_unreadable);
        out.push(EventKind::StepFinished(StepUsage {
            id: Some(step.id),
            reason,
            tokens: step.tokens,
            cost_usd: cost.map(|(usd, _)| usd),
            cost_source: cost.map(|(_, source)| source),
            cost_rejected: None,
            tokens_unreadable: step.tokens_unreadable,
        }));
    }

    fn assistant(
        &mut self,
        message: Message,
        parent: Option<&str>,
        api_error: bool,
        out: &mut Vec<EventKind>,
    ) {
        let synthetic = message.model.as_deref() == Some("<synthetic>");
        if api_error || synthetic {
            // An API failure, told as a message of Claude's own making.
            let text = message.texts().collect::<Vec<_>>().join("\n");
            self.told_api_error = true;
            match api_status(&text) {
                Some(status) => out.push(EventKind::ProviderError(ProviderError {
                    name: "APIError".to_owned(),
                    status: Some(status),
                    message: text,
                    retryable: None,
                })),
                // Its `result` gives the status (`api_error_status`): told with it then.
                None => self.pending_api_error = Some(text),
            }
            return;
        }
        if parent.is_none() && !self.streaming {
            // Without the raw stream, a step is told by its message id alone.
            let same = matches!(&self.step, Some(s) if Some(&s.id) == message.id.as_ref());
            if !same {
                self.finish_step(None, out);
                self.start_step(&message, out);
            }
        }
        for block in message.content.into_blocks() {
            match block.kind.as_str() {
                "text" if parent.is_none() => out.push(EventKind::Text {
                    text: block.text.unwrap_or_default(),
                }),
                "thinking" if parent.is_none() => out.push(EventKind::Reasoning {
                    text: block.thinking.unwrap_or_default(),
                }),
                "tool_use" => {
                    if parent.is_none()
                        && let Some(step) = &mut self.step
                    {
                        step.has_tool_use = true;
                    }
                    let name = block.name.unwrap_or_else(|| "unknown".to_owned());
                    let input = summarize(&name, block.input.as_ref(), &self.cwd);
                    let id = block.id.unwrap_or_default();
                    if let Some(value) = &block.input {
                        self.prints.start(&id, &name, value);
                    }
                    self.calls
                        .start(tools::start(&id, &name, input, parent), out);
                }
                _ => {}
            }
        }
    }

    fn user(&mut self, message: Message, meta: &[ResultMeta], out: &mut Vec<EventKind>) {
        for block in message.content.into_blocks() {
            if block.kind != "tool_result" {
                continue;
            }
            let id = block.tool_use_id.unwrap_or_default();
            if self.background.contains(&id) {
                // "Async agent launched": the subagent has only begun; it ends at its task
                // notification.
                continue;
            }
            let text = block.content.map(|c| c.joined()).unwrap_or_default();
            let bytes = Some(text.len() as u64);
            let refused = self.refused.remove(&id);
            let said = meta
                .iter()
                .find(|m| m.id.as_deref() == Some(id.as_str()))
                .and_then(ResultMeta::refused);
            let denied = match said {
                Some(refused_by_meta) => refused || refused_by_meta,
                // Nothing structured about the call: its wording is all there is.
                None => refused || DENIAL_MARKERS.iter().any(|m| text.contains(m)),
            };
            // A refusal Claude states in structured form stands even without `is_error`.
            let ending = if block.is_error == Some(true) || refused || said == Some(true) {
                if denied {
                    Ending::failed(ToolStatus::Denied, first_sentence(&text), bytes)
                } else {
                    Ending::failed(
                        ToolStatus::Error,
                        summary::truncate(clean_error(&text), MAX_ERROR_CHARS),
                        bytes,
                    )
                }
            } else {
                Ending::ok(bytes)
            };
            let status = ending.status;
            let at = out.len();
            let Some(call) = self.calls.finish(&id, ending, out) else {
                continue;
            };
            let kind = call.kind;
            if status == ToolStatus::Denied {
                let (tool, detail) = (call.name.clone(), call.input.clone());
                if self.denied.len() < MAX_DENIED_IDS {
                    self.denied.insert(id.clone());
                }
                out.push(EventKind::PermissionDenied {
                    tool,
                    detail,
                    call_id: Some(id.clone()),
                });
            }
            self.prints.finish(&id, None, &text, &mut out[at..]);
            if self.sandboxed && status == ToolStatus::Error {
                prints::refusal_of(&id, &text, &mut out[at..]);
            }
            if kind == ToolKind::Subagent {
                out.push(EventKind::SubagentFinished {
                    call_id: id,
                    status,
                    message: Some(summary::truncate(summary::first_line(&text), 200))
                        .filter(|m| !m.is_empty()),
                });
            }
        }
    }

    fn result(&mut self, line: Line<'_>, out: &mut Vec<EventKind>) {
        self.finish_step(line.stop_reason.clone(), out);
        for denial in line.permission_denials.unwrap_or_default() {
            if self.denied.insert(denial.tool_use_id.clone()) {
                // Matched to its call by id: a call told as failed is counted as refused.
                let input = summarize(&denial.tool_name, denial.tool_input.as_ref(), &self.cwd);
                out.push(EventKind::PermissionDenied {
                    tool: denial.tool_name,
                    detail: input,
                    call_id: Some(denial.tool_use_id),
                });
            }
        }
        let failed =
            line.is_error == Some(true) || line.subtype.as_deref().is_some_and(|s| s != "success");
        let message = result_message(line.result.clone(), line.errors.as_deref(), failed);
        if failed {
            self.tell_api_error(line.api_error_status, message.as_deref(), out);
        }
        let mut tokens_unreadable = false;
        let by_model = line
            .model_usage
            .as_ref()
            .map(|usage| tokens_by_model(usage, &mut tokens_unreadable));
        let tokens = match &by_model {
            Some(by_model) => Some(by_model.iter().fold(Tokens::default(), |mut sum, (_, t)| {
                sum.add(t);
                sum
            })),
            None => line.usage.as_ref().map(|u| {
                let mut get = |n: Option<Count>| n.unwrap_or_default().get(&mut tokens_unreadable);
                Tokens {
                    input: get(u.input_tokens),
                    output: get(u.output_tokens),
                    reasoning: 0,
                    cache_read: get(u.cache_read_input_tokens),
                    cache_write: get(u.cache_creation_input_tokens),
                }
            }),
        };
        // A reported total that cannot be used is priced from each model's tokens.
        let estimate = || match &by_model {
            Some(by_model) => by_model.iter().try_fold(0.0, |sum, (model, t)| {
                Some(sum + self.prices.estimate(model, t)?)
            }),
            None => reported::estimate(&self.prices, self.model.as_deref(), &tokens?),
        };
        let cost = reported::check(line.total_cost_usd, estimate, tokens_unreadable);
        out.push(EventKind::AgentResult(AgentResult {
            ok: !failed,
            message: message.clone(),
            tokens,
            cost_usd: cost.cost_usd,
            cost_source: cost.cost_source,
            cost_rejected: cost.cost_rejected,
            tokens_unreadable,
            tokens_partial: false,
            model_calls: None,
            duration_ms: line.duration_ms,
        }));
        self.result = Some(if failed {
            let what = match line.subtype.as_deref() {
                Some("error_max_budget_usd") => "Claude Code stopped at its own budget",
                Some("error_max_turns") => "Claude Code stopped at its turn limit",
                _ => "Claude Code reported an error",
            };
            Err(match message {
                Some(m) => format!("{what}: {}", summary::first_line(&m)),
                None => what.to_owned(),
            })
        } else {
            Ok(())
        });
    }
}

/// What a `result` says: a failed run's reason is Claude's `errors` where it gives them (2.1.337
/// fails a run whose actions its auto mode could not check there, its `result` then the agent's
/// last words), else its `result`; a finished run's is its `result`.
fn result_message(
    result: Option<String>,
    errors: Option<&[String]>,
    failed: bool,
) -> Option<String> {
    let errors = errors.map(|e| e.join("; "));
    let message = if failed {
        errors.filter(|e| !e.is_empty()).or(result)
    } else {
        result.or(errors)
    };
    message.filter(|m| !m.is_empty())
}

/// Tokens of each model Claude used, subagents included.
fn tokens_by_model<'a>(
    usage: &'a std::collections::BTreeMap<String, ModelUsage>,
    unreadable: &mut bool,
) -> Vec<(&'a str, Tokens)> {
    usage
        .iter()
        .map(|(model, u)| {
            let tokens = Tokens {
                input: u.input_tokens.get(unreadable),
                output: u.output_tokens.get(unreadable),
                reasoning: 0,
                cache_read: u.cache_read_input_tokens.get(unreadable),
                cache_write: u.cache_creation_input_tokens.get(unreadable),
            };
            (model.as_str(), tokens)
        })
        .collect()
}

/// `API Error: 500 …` → 500.
fn api_status(text: &str) -> Option<u16> {
    let rest = text.split_once("API Error: ")?.1;
    let digits: String = rest
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits.parse().ok().filter(|s| (100..600).contains(s))
}

/// A tool error without Claude's `<tool_use_error>` wrapping.
fn clean_error(text: &str) -> &str {
    text.trim()
        .trim_start_matches("<tool_use_error>")
        .trim_end_matches("</tool_use_error>")
        .trim()
}

/// The first sentence of a denial, which says what was refused.
fn first_sentence(text: &str) -> String {
    let line = summary::first_line(text);
    let end = line.find(". ").map_or(line.len(), |i| i + 1);
    summary::truncate(&line[..end], 300)
}

fn summarize(name: &str, input: Option<&Value>, cwd: &std::path::Path) -> String {
    let get = |key: &str| input.and_then(|i| i.get(key)).and_then(Value::as_str);
    let fields = InputFields {
        path: get("file_path").or(get("notebook_path")).or(get("path")),
        command: get("command"),
        pattern: get("pattern").or(get("query")),
        description: get("description").or(get("prompt")),
        url: get("url"),
        todos: input
            .and_then(|i| i.get("todos"))
            .and_then(Value::as_array)
            .map(Vec::len),
    };
    let text = summary::summarize(&fields, None, cwd);
    if text.is_empty() {
        name.to_owned()
    } else {
        text
    }
}

/// Claude Code's stderr is empty but for startup refusals, which get explained.
struct Stderr;

impl StderrParser for Stderr {
    fn line(&mut self, line: &str, out: &mut Vec<EventKind>) {
        if line.contains(ROOT_REFUSAL) {
            out.push(EventKind::AgentError {
                name: "RefusedAsRoot".to_owned(),
                message: format!(
                    "{line} (set IS_SANDBOX=1 if this machine is a throwaway sandbox, or use --permissions workspace)"
                ),
            });
            return;
        }
        out.push(EventKind::Stderr {
            line: line.to_owned(),
        });
    }
}

// The wire format: only what is read. The fields every line has are borrowed from the line when
// the fast path reads it (serde_json, which reads the rest, copies them).

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct Line<'a> {
    #[serde(rename = "type")]
    kind: Name,
    subtype: Option<Name>,
    session_id: Option<Cow<'a, str>>,
    parent_tool_use_id: Option<Cow<'a, str>>,
    message: Option<Message>,
    event: Option<StreamEvent>,
    /// A string on `assistant` API errors and `api_retry`.
    error: Option<Value>,
    // system/init
    cwd: Option<PathBuf>,
    model: Option<String>,
    /// Whether Claude's own sandbox is on (2.1.332 on).
    sandbox_enabled: Option<bool>,
    // system/api_retry
    attempt: Option<u32>,
    max_retries: Option<u32>,
    retry_delay_ms: Option<f64>,
    error_status: Option<u16>,
    // system/task_*, system/permission_denied
    task_id: Option<String>,
    tool_use_id: Option<String>,
    description: Option<String>,
    is_backgrounded: Option<bool>,
    status: Option<String>,
    summary: Option<String>,
    // user: what Claude says of each tool result besides its text
    tool_result_meta: Option<Vec<ResultMeta>>,
    // result
    is_error: Option<bool>,
    api_error_status: Option<u16>,
    result: Option<String>,
    errors: Option<Vec<String>>,
    stop_reason: Option<String>,
    /// Read whatever it holds: a cost that is not a usable number must not cost the line the
    /// final result.
    total_cost_usd: Option<Cost>,
    duration_ms: Option<u64>,
    usage: Option<Usage>,
    #[serde(rename = "modelUsage")]
    model_usage: Option<std::collections::BTreeMap<String, ModelUsage>>,
    permission_denials: Option<Vec<Denial>>,
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct Message {
    id: Option<String>,
    model: Option<String>,
    #[serde(default)]
    content: Content,
    usage: Option<Usage>,
}

/// A message with a content block of a type runbook does not know is counted an unparsed line
/// (its known blocks are read all the same).
fn unknown_blocks(message: &Message, line: &[u8], out: &mut Vec<EventKind>) {
    if message.has_unknown_block() {
        out.push(unparsed_line(UnparsedReason::UnknownType, line));
    }
}

impl Message {
    fn blocks(&self) -> &[Block] {
        match &self.content {
            Content::Blocks(blocks) => blocks,
            Content::Text(_) => &[],
        }
    }

    fn texts(&self) -> impl Iterator<Item = &str> {
        self.blocks().iter().filter_map(|b| b.text.as_deref())
    }

    /// Whether a content block is of a type runbook does not know.
    fn has_unknown_block(&self) -> bool {
        self.blocks()
            .iter()
            .any(|b| !KNOWN_BLOCKS.contains(&b.kind.as_str()))
    }
}

/// Message content: a list of blocks, or (for a user prompt) a plain string.
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
#[serde(untagged)]
enum Content {
    Blocks(Vec<Block>),
    Text(
        #[cfg_attr(
            not(any(test, feature = "fuzzing")),
            expect(dead_code, reason = "a prompt's text is not shown")
        )]
        String,
    ),
}

impl Default for Content {
    fn default() -> Self {
        Content::Blocks(Vec::new())
    }
}

impl Content {
    fn into_blocks(self) -> Vec<Block> {
        match self {
            Content::Blocks(blocks) => blocks,
            Content::Text(_) => Vec::new(),
        }
    }
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct Block {
    #[serde(rename = "type")]
    kind: Name,
    text: Option<String>,
    thinking: Option<String>,
    id: Option<String>,
    name: Option<String>,
    input: Option<Value>,
    tool_use_id: Option<String>,
    content: Option<ResultContent>,
    is_error: Option<bool>,
}

/// A tool result: a string, or a list of text blocks.
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
#[serde(untagged)]
enum ResultContent {
    Text(String),
    Blocks(Vec<Value>),
}

impl ResultContent {
    fn joined(self) -> String {
        match self {
            ResultContent::Text(text) => text,
            ResultContent::Blocks(blocks) => blocks
                .iter()
                .filter_map(|b| b.get("text").and_then(Value::as_str))
                .collect::<Vec<_>>()
                .join("\n"),
        }
    }
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize, Clone, Default)]
struct Usage {
    input_tokens: Option<Count>,
    output_tokens: Option<Count>,
    cache_creation_input_tokens: Option<Count>,
    cache_read_input_tokens: Option<Count>,
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ModelUsage {
    #[serde(default)]
    input_tokens: Count,
    #[serde(default)]
    output_tokens: Count,
    #[serde(default)]
    cache_read_input_tokens: Count,
    #[serde(default)]
    cache_creation_input_tokens: Count,
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct StreamEvent {
    #[serde(rename = "type")]
    kind: Name,
    message: Option<Message>,
    delta: Option<Delta>,
    usage: Option<Usage>,
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct Delta {
    text: Option<String>,
    stop_reason: Option<String>,
}

/// What Claude Code (2.1.330 on) says of a tool result: whether the call was allowed, and why it
/// did not run.
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct ResultMeta {
    id: Option<String>,
    permission_decision: Option<PermissionDecision>,
    non_execution_kind: Option<String>,
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct PermissionDecision {
    decision: Option<String>,
}

impl ResultMeta {
    /// Whether the call was refused, if the meta says anything about it.
    fn refused(&self) -> Option<bool> {
        let decision = self
            .permission_decision
            .as_ref()
            .and_then(|d| d.decision.as_deref());
        let kind = self.non_execution_kind.as_deref();
        if decision.is_none() && kind.is_none() {
            return None;
        }
        let rejected = matches!(decision, Some("reject" | "deny" | "denied"));
        let not_run = kind.is_some_and(|k| {
            k.contains("reject") || k.contains("denied") || k.contains("unavailable")
        });
        Some(rejected || not_run)
    }
}

#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
#[derive(Deserialize)]
struct Denial {
    tool_name: String,
    tool_use_id: String,
    tool_input: Option<Value>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::CostSource;

    #[test]
    fn claudes_own_budget_stop_is_a_failure_with_its_totals() {
        let mut parser = Claude.stdout_parser(ParseContext::new(PathBuf::from("/w")));
        let mut out = Vec::new();
        parser.line(
            br#"{"type":"result","subtype":"error_max_budget_usd","is_error":true,"duration_ms":900,"num_turns":2,"stop_reason":"tool_use","session_id":"s","total_cost_usd":0.031,"usage":{"input_tokens":2000,"output_tokens":31},"modelUsage":{"claude-opus-4-8":{"inputTokens":4100,"outputTokens":64,"cacheReadInputTokens":0,"cacheCreationInputTokens":0,"costUSD":0.031}},"permission_denials":[],"errors":["Reached maximum budget ($0.03)"]}"#,
            &mut out,
        );
        let end = parser.end(&mut out);
        match &out[..] {
            [EventKind::SessionStarted { .. }, EventKind::AgentResult(r)] => {
                assert!(!r.ok);
                assert_eq!(r.cost_usd, Some(0.031));
                // modelUsage, which counts every call, wins over usage.
                assert_eq!(r.tokens.map(|t| t.input), Some(4100));
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(
            end,
            StreamEnd::Failed(
                "Claude Code stopped at its own budget: Reached maximum budget ($0.03)".into()
            )
        );
    }

    fn read(lines: &[&str]) -> (Vec<EventKind>, StreamEnd) {
        let mut parser = Claude.stdout_parser(ParseContext::new(PathBuf::from("/w")));
        let mut out = Vec::new();
        for line in lines {
            parser.line(line.as_bytes(), &mut out);
        }
        let end = parser.end(&mut out);
        (out, end)
    }

    fn tool_use(id: &str, name: &str) -> String {
        format!(
            r#"{{"type":"assistant","message":{{"id":"m_{id}","model":"claude-opus-5-5","content":[{{"type":"tool_use","id":"{id}","name":"{name}","input":{{"command":"touch x","file_path":"/w/x"}}}}],"usage":{{"input_tokens":10,"output_tokens":1}}}},"parent_tool_use_id":null,"session_id":"s"}}"#
        )
    }

    fn tool_result(id: &str, text: &str, meta: &str) -> String {
        format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"{id}","content":"{text}","is_error":true}}]}}{meta},"session_id":"s"}}"#
        )
    }

    fn statuses(out: &[EventKind]) -> Vec<(String, ToolStatus)> {
        out.iter()
            .filter_map(|e| match e {
                EventKind::ToolCompleted(t) => Some((t.call_id.clone(), t.status)),
                _ => None,
            })
            .collect()
    }

    /// Under `--sandbox`, a failed tool's refusal joins its error even past the head of a long
    /// output; a failure that is not a refusal, or one outside the sandbox, is left as it was.
    #[test]
    fn a_refusal_past_the_head_of_a_failed_tools_output_joins_its_error_in_the_sandbox() {
        let long = format!(
            "{}\\ntouch: cannot touch '/etc/x': Read-only file system",
            "building\\n".repeat(400)
        );
        let lines = [tool_use("t1", "Bash"), tool_result("t1", &long, "")];
        let error = |sandboxed: bool| {
            let ctx = ParseContext {
                sandboxed,
                ..ParseContext::new(PathBuf::from("/w"))
            };
            let mut parser = Claude.stdout_parser(ctx);
            let mut out = Vec::new();
            for line in &lines {
                parser.line(line.as_bytes(), &mut out);
            }
            out.iter()
                .find_map(|e| match e {
                    EventKind::ToolCompleted(t) => t.error.clone(),
                    _ => None,
                })
                .unwrap()
        };
        let sandboxed = error(true);
        assert!(
            sandboxed.ends_with(": touch: cannot touch '/etc/x': Read-only file system"),
            "{sandboxed}"
        );
        assert!(
            !error(false).contains("Read-only"),
            "the head only, as before"
        );
    }

    #[test]
    fn a_denial_is_known_by_what_claude_says_of_the_call_before_its_wording() {
        let meta = |id: &str, decision: &str| {
            format!(
                r#","tool_result_meta":[{{"id":"{id}","permission_decision":{{"decision":"{decision}"}}}}]"#
            )
        };
        let (out, _) = read(&[
            &tool_use("a", "Bash"),
            // Refused in words runbook has never seen: the meta says so.
            &tool_result("a", "Some brand new refusal wording.", &meta("a", "reject")),
            &tool_use("b", "Bash"),
            // Allowed, and it failed, though its output reads like a refusal.
            &tool_result(
                "b",
                "was blocked. For security reasons the test failed",
                &meta("b", "accept"),
            ),
            &tool_use("c", "Write"),
            // `message` is a string here, where other lines have an object.
            r#"{"type":"system","subtype":"permission_denied","tool_name":"Write","tool_use_id":"c","message":"not allowed","session_id":"s"}"#,
            &tool_result("c", "Unheard-of words.", ""),
        ]);
        assert_eq!(
            statuses(&out),
            [
                ("a".to_owned(), ToolStatus::Denied),
                ("b".to_owned(), ToolStatus::Error),
                ("c".to_owned(), ToolStatus::Denied)
            ]
        );
        assert!(
            !out.iter().any(|e| matches!(e, EventKind::Unparsed(_))),
            "{out:?}"
        );
        let denied: Vec<Option<&str>> = out
            .iter()
            .filter_map(|e| match e {
                EventKind::PermissionDenied { call_id, .. } => Some(call_id.as_deref()),
                _ => None,
            })
            .collect();
        assert_eq!(denied, [Some("a"), Some("c")]);
    }

    #[test]
    fn the_results_list_of_denials_is_matched_to_calls_by_id() {
        let (out, _) = read(&[
            &tool_use("w", "Write"),
            &tool_result("w", "Something no marker knows.", ""),
            r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s","permission_denials":[{"tool_name":"Write","tool_use_id":"w","tool_input":{"file_path":"/w/x"}}]}"#,
        ]);
        assert_eq!(statuses(&out), [("w".to_owned(), ToolStatus::Error)]);
        // The denial names the call, so the totals count it as refused, not failed.
        assert!(out.iter().any(|e| matches!(
            e,
            EventKind::PermissionDenied { call_id: Some(id), tool, .. } if id == "w" && tool == "Write"
        )), "{out:?}");
    }

    /// A content block of a new type is counted unparsed; the message's known blocks are still
    /// read, and the blocks runbook knows to ignore are not counted.
    #[test]
    fn a_content_block_of_a_new_type_is_counted_unparsed_and_the_rest_read() {
        let (out, _) = read(&[
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"brand_new_block","data":1},{"type":"text","text":"hello"}]},"session_id":"s"}"#,
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"redacted_thinking","data":"x"}]},"session_id":"s"}"#,
            r#"{"type":"user","message":{"content":[{"type":"another_new_block"}]},"session_id":"s"}"#,
        ]);
        let unparsed: Vec<&str> = out
            .iter()
            .filter_map(|e| match e {
                EventKind::Unparsed(u) => Some(u.head.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(unparsed.len(), 2, "{out:?}");
        assert!(
            unparsed[0].contains("brand_new_block") && unparsed[1].contains("another_new_block")
        );
        assert!(
            out.iter()
                .any(|e| matches!(e, EventKind::Text { text } if text == "hello")),
            "{out:?}"
        );
    }

    #[test]
    fn a_new_line_or_a_field_of_another_type_is_kept_not_lost() {
        let (out, _) = read(&[
            // `cwd` a number: the rest of the line is still read.
            r#"{"type":"system","subtype":"init","cwd":5,"model":"claude-opus-9","session_id":"s"}"#,
            r#"{"type":"system","subtype":"brand_new_thing","session_id":"s"}"#,
            r#"{"type":"brand_new_type","session_id":"s"}"#,
        ]);
        match &out[..] {
            [
                EventKind::SessionStarted { .. },
                EventKind::ModelAnnounced { model, price },
                EventKind::Unparsed(a),
                EventKind::Unparsed(b),
            ] => {
                assert_eq!(
                    (model.as_str(), *price),
                    ("claude-opus-9", crate::event::PriceBasis::Conservative)
                );
                assert_eq!(a.reason, UnparsedReason::UnknownType);
                assert_eq!(b.reason, UnparsedReason::UnknownType);
                assert!(a.head.contains("brand_new_thing"));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_provider_error_takes_its_status_from_the_result() {
        let (out, _) = read(&[
            r#"{"type":"assistant","message":{"id":"x","model":"<synthetic>","content":[{"type":"text","text":"Invalid API key · Fix external API key"}]},"error":"authentication_failed","parent_tool_use_id":null,"session_id":"s"}"#,
            r#"{"type":"result","subtype":"success","is_error":true,"api_error_status":401,"result":"Invalid API key · Fix external API key","session_id":"s","total_cost_usd":0,"usage":{"input_tokens":0,"output_tokens":0}}"#,
        ]);
        let errors: Vec<&ProviderError> = out
            .iter()
            .filter_map(|e| match e {
                EventKind::ProviderError(p) => Some(p),
                _ => None,
            })
            .collect();
        assert_eq!(errors.len(), 1, "{out:?}");
        assert_eq!(errors[0].status, Some(401));
        assert_eq!(errors[0].message, "Invalid API key · Fix external API key");
    }

    #[test]
    fn a_step_of_a_model_missing_from_the_table_is_priced_conservatively() {
        let (out, _) = read(&[
            r#"{"type":"system","subtype":"init","model":"claude-opus-9","session_id":"s"}"#,
            r#"{"type":"assistant","message":{"id":"m1","model":"claude-opus-9","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":1000000,"output_tokens":1}}}"#,
            r#"{"type":"assistant","message":{"id":"m2","model":"claude-opus-9","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":1,"output_tokens":1}}}"#,
        ]);
        let step = out
            .iter()
            .find_map(|e| match e {
                EventKind::StepFinished(s) => Some(s),
                _ => None,
            })
            .expect("a step");
        assert_eq!(step.cost_source, Some(CostSource::Conservative));
        // A million input tokens at the highest Anthropic input price runbook knows.
        assert_eq!(step.cost_usd, Some(15.0));
    }

    #[test]
    fn a_background_subagent_that_fails_ends_its_call_as_an_error_at_its_notification() {
        let (out, end) = read(&[
            r#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","id":"ag","name":"Agent","input":{"description":"Look around","prompt":"look"}}]},"parent_tool_use_id":null,"session_id":"s"}"#,
            r#"{"type":"system","subtype":"task_started","task_id":"t1","tool_use_id":"ag","description":"Look around","is_backgrounded":true,"session_id":"s"}"#,
            r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"ag","content":[{"type":"text","text":"Async agent launched successfully."}]}]},"session_id":"s"}"#,
            r#"{"type":"system","subtype":"task_notification","task_id":"t1","tool_use_id":"ag","status":"failed","summary":"It could not start.","session_id":"s"}"#,
            r#"{"type":"result","subtype":"success","is_error":false,"result":"ok","session_id":"s"}"#,
        ]);
        assert_eq!(end, StreamEnd::Finished);
        // Nothing ends at the launch; the notification ends both the call and the subagent.
        let ended: Vec<&EventKind> = out
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    EventKind::ToolCompleted(_) | EventKind::SubagentFinished { .. }
                )
            })
            .collect();
        match &ended[..] {
            [
                EventKind::ToolCompleted(call),
                EventKind::SubagentFinished {
                    status, message, ..
                },
            ] => {
                assert_eq!(call.status, ToolStatus::Error);
                assert_eq!(*status, ToolStatus::Error);
                assert_eq!(message.as_deref(), Some("It could not start."));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn recorded_transcripts() {
        insta::glob!("../../fixtures/claude", "*.stdout.ndjson", |path| {
            let ctx = ParseContext::new(PathBuf::from("/"));
            insta::assert_yaml_snapshot!(super::super::transcript::read(&Claude, path, ctx));
        });
    }

    #[test]
    fn recorded_transcripts_of_claude_code_2_1_330() {
        insta::glob!("../../fixtures/claude-2.1.330", "*.stdout.ndjson", |path| {
            let ctx = ParseContext::new(PathBuf::from("/"));
            insta::assert_yaml_snapshot!(super::super::transcript::read(&Claude, path, ctx));
        });
    }

    #[test]
    fn recorded_transcripts_of_claude_code_2_1_332() {
        insta::glob!("../../fixtures/claude-2.1.332", "*.stdout.ndjson", |path| {
            let ctx = ParseContext::new(PathBuf::from("/"));
            insta::assert_yaml_snapshot!(super::super::transcript::read(&Claude, path, ctx));
        });
    }

    #[test]
    fn recorded_transcripts_of_claude_code_2_1_337() {
        insta::glob!("../../fixtures/claude-2.1.337", "*.stdout.ndjson", |path| {
            let ctx = ParseContext::new(PathBuf::from("/"));
            insta::assert_yaml_snapshot!(super::super::transcript::read(&Claude, path, ctx));
        });
    }

    /// Claude Code 2.1.332 tells whether its own sandbox is on in its first line: told once, as
    /// it said it; a release that does not say tells nothing; a value of another type is read
    /// without it, the line kept.
    #[test]
    fn claudes_own_sandbox_is_told_as_it_said_it() {
        let init = |extra: &str| {
            format!(
                r#"{{"type":"system","subtype":"init","model":"claude-opus-5-5","session_id":"s"{extra}}}"#
            )
        };
        let sandboxes = |lines: &[String]| -> Vec<bool> {
            let lines: Vec<&str> = lines.iter().map(String::as_str).collect();
            read(&lines)
                .0
                .into_iter()
                .filter_map(|e| match e {
                    EventKind::AgentSandbox { enabled } => Some(enabled),
                    _ => None,
                })
                .collect()
        };
        let on = init(r#","sandbox_enabled":true"#);
        assert_eq!(sandboxes(&[on.clone(), on]), [true]);
        assert_eq!(sandboxes(&[init(r#","sandbox_enabled":false"#)]), [false]);
        assert_eq!(sandboxes(&[init("")]), Vec::<bool>::new());
        let odd = init(r#","sandbox_enabled":"yes""#);
        let (events, _) = read(&[odd.as_str()]);
        assert!(sandboxes(std::slice::from_ref(&odd)).is_empty());
        assert!(
            events
                .iter()
                .any(|e| matches!(e, EventKind::ModelAnnounced { .. })),
            "{events:?}"
        );
        assert!(
            !events.iter().any(|e| matches!(e, EventKind::Unparsed(_))),
            "{events:?}"
        );
    }
}
