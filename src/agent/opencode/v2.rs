//! OpenCode 2 (`@opencode/cli`): `opencode run --standalone --format json` as universal events.
//!
//! The same line types as 1.x, spelled otherwise: a tool call's id is `part.id`, arguments name
//! files `path`, a command's exit code is `state.metadata.metadata.exit`, an `error` line is
//! `{type, message, status, response}`, a retried model call prints another `step_start` of the
//! same message. The step that gives the final answer is mostly printed as its `text` alone, so
//! the stream cannot tell a finished run: the session's export, asked for once the agent has
//! exited (`export`), tells what the stream left out.

mod export;
mod wire;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;

use super::steps::StepState;
use super::summary::{self, InputFields};
use super::{MAX_ERROR_CHARS, Said, Stderr, ToolInput, ended, prints, step_usage};
use crate::agent::late::AfterFinal;
use crate::agent::{
    Adapter, Cli, FinisherSlot, Invocation, ParseContext, StderrParser, StdoutParser, StreamEnd,
    announce_session, npm_cli, unparsed_line, unreadable_reason,
};
use crate::event::{
    EventKind, ProviderError, ProviderRetry, ToolKind, ToolStart, ToolStatus, UnparsedReason,
};
use crate::prices::PriceTable;
use wire::{ErrorLine, Line, Part};

/// The error OpenCode 2 puts on a call whose permission a run without a person refused.
const REFUSED: &str = "This non-interactive run cannot ask the user for permission, so the request was rejected. Continue without this action.";
/// The longest provider response kept in a provider error's message.
const MAX_RESPONSE_CHARS: usize = 1000;

pub(crate) struct OpenCode2;

impl Adapter for OpenCode2 {
    fn cli(&self) -> Cli {
        npm_cli!(program: "opencode", package: "@opencode/cli", bin_env: "RUNBOOK_OPENCODE_BIN")
    }

    fn args(&self, inv: &Invocation<'_>) -> Vec<String> {
        // `--standalone`: its server is the run's own child, not a detached service that
        // outlives the run.
        let mut args = super::OpenCode.args(inv);
        args.insert(1, "--standalone".to_owned());
        args
    }

    fn own_paths(
        &self,
        var: crate::agent::own_paths::Var<'_>,
        cwd: &Path,
    ) -> crate::agent::own_paths::OwnPaths {
        super::OpenCode.own_paths(var, cwd)
    }

    fn stdout_parser(&self, ctx: ParseContext) -> Box<dyn StdoutParser> {
        Box::new(Parser {
            cwd: ctx.cwd,
            model: ctx.model,
            prices: ctx.prices,
            sandboxed: ctx.sandboxed,
            finishing: ctx.finishing,
            ..Parser::default()
        })
    }

    /// Started `--standalone`, its work stays in the run; a service it joined all the same (a
    /// wrapper that drops the flag) is asked to interrupt the run's session after a stop.
    fn daemon(
        &self,
        var: super::super::own_paths::Var<'_>,
    ) -> Option<Box<dyn super::super::handed::Daemon>> {
        super::super::opencode_service::find(var)
    }

    fn stderr_parser(&self) -> Box<dyn StderrParser> {
        Box::new(Stderr)
    }
}

/// Whether the OpenCode at `program` is OpenCode 2: by the version it printed (`opencode
/// v2.1.2`), or, when it told none, by the package it was installed from (`@opencode/cli`).
pub(super) fn is_v2(program: &Path, version: Option<&str>) -> bool {
    let major = version
        .and_then(crate::agent::versions::version_number)
        .and_then(|v| v.split('.').next()?.parse::<u64>().ok());
    if let Some(major) = major {
        return major >= 2;
    }
    let from_package = |p: &Path| {
        let p = p.to_string_lossy();
        p.contains("node_modules/@opencode/cli/")
    };
    from_package(program) || std::fs::canonicalize(program).is_ok_and(|p| from_package(&p))
}

/// Which generation printed `line` of a recorded stream, when the line tells (`Some(true)`:
/// OpenCode 2). OpenCode 2 names a tool line's own part `partID`, its text parts `…_text-N` and
/// its errors by `type`; 1.x names a tool call `callID`, its errors by `name` and `data`, and
/// counts a step's `tokens.total`.
pub(super) fn printed_by_v2(line: &[u8]) -> Option<bool> {
    let value = serde_json::from_slice::<serde_json::Value>(line).ok()?;
    let part = value.get("part");
    let error = value.get("error");
    let has = |o: Option<&serde_json::Value>, key: &str| o.and_then(|o| o.get(key)).is_some();
    let text_id = part
        .filter(|p| p.get("type").and_then(|t| t.as_str()) == Some("text"))
        .and_then(|p| p.get("id")?.as_str()?.rsplit_once("_text-"))
        .is_some_and(|(_, n)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if has(part, "partID") || has(error, "type") || text_id {
        return Some(true);
    }
    let total = has(part.and_then(|p| p.get("tokens")), "total");
    let v1 = has(part, "callID") || has(part, "snapshot") || total;
    (v1 || has(error, "name") || has(error, "data")).then_some(false)
}

/// What the stream said of its steps, kept for the export to complete.
#[derive(Default, Clone)]
pub(super) struct Steps {
    /// The message ids of the steps the stream showed, in order.
    pub started: Vec<String>,
    /// Those whose `step_finish` it printed.
    pub finished: HashSet<String>,
}

#[derive(Default)]
struct Parser {
    cwd: PathBuf,
    model: Option<String>,
    prices: Arc<PriceTable>,
    sandboxed: bool,
    finishing: Option<FinisherSlot>,
    session: Option<String>,
    session_announced: bool,
    state: StepState,
    steps: Steps,
    after: AfterFinal,
}

impl StdoutParser for Parser {
    fn line(&mut self, line: &[u8], out: &mut Vec<EventKind>) {
        let Ok(whole) = serde_json::from_slice::<serde_json::Value>(line) else {
            out.push(unparsed_line(unreadable_reason(line), line));
            return;
        };
        let Ok(parsed) = serde_json::from_slice::<Line>(line) else {
            out.push(unparsed_line(UnparsedReason::UnexpectedJson, line));
            return;
        };
        if self.session.is_none() {
            self.session.clone_from(&parsed.session_id);
        }
        announce_session(
            &mut self.session_announced,
            parsed.session_id.as_deref(),
            out,
        );
        let late = self.state.finished() && parsed.kind != "step_start";
        let from = out.len();
        match (&*parsed.kind, parsed.part, parsed.error) {
            ("step_start", Some(part), _) => self.step_start(part, out),
            ("step_finish", Some(part), _) => self.step_finish(part, out),
            ("text", Some(part), _) => {
                self.in_step(part.message_id.as_deref(), out);
                out.push(EventKind::Text {
                    text: part.text.unwrap_or_default(),
                });
            }
            ("reasoning", Some(part), _) => {
                self.in_step(part.message_id.as_deref(), out);
                out.push(EventKind::Reasoning {
                    text: part.text.unwrap_or_default(),
                });
            }
            ("tool_use", Some(part), _) => self.tool_use(part, out),
            ("error", _, Some(err)) => self.error(err, out),
            _ => {
                out.push(unparsed_line(UnparsedReason::UnknownType, line));
                return;
            }
        }
        if wire::has_unknown_fields(&whole) {
            out.push(unparsed_line(UnparsedReason::UnexpectedJson, line));
        }
        if late {
            self.after.mark(out, from);
        }
    }

    fn end(&mut self, _out: &mut Vec<EventKind>) -> StreamEnd {
        let end = self.after.end(self.stream_end());
        if let (Some(slot), Some(session)) = (&self.finishing, &self.session) {
            let finisher = export::Export {
                session: session.clone(),
                steps: self.steps.clone(),
                model: self.model.clone(),
                prices: Arc::clone(&self.prices),
                failed: self.state.failed(),
            };
            if let Ok(mut slot) = slot.lock() {
                *slot = Some(Box::new(finisher));
            }
        }
        end
    }
}

impl Parser {
    /// How the stream alone ended. OpenCode 2 mostly leaves out the last step's end, so a step
    /// still open is not yet a verdict: the export may close it.
    fn stream_end(&self) -> StreamEnd {
        self.state.stream_end(
            "the output ended inside a step (no step_finish), and the session's export did not tell how it ended",
        )
    }

    /// A line of message `id`: a step of its own when its `step_start` was not printed.
    fn in_step(&mut self, id: Option<&str>, out: &mut Vec<EventKind>) {
        let Some(id) = id else { return };
        if self.state.is_open(Some(id)) || self.steps.finished.contains(id) {
            return;
        }
        self.start(Some(id.to_owned()), out);
    }

    fn start(&mut self, id: Option<String>, out: &mut Vec<EventKind>) {
        if let Some(id) = &id {
            self.steps.started.push(id.clone());
        }
        self.state.open(id.clone());
        out.push(EventKind::StepStarted { id });
    }

    fn step_start(&mut self, part: Part, out: &mut Vec<EventKind>) {
        let id = part.message_id;
        // Another start of the same message is its model call tried again: one step, retried.
        if self.state.is_open(id.as_deref()) {
            out.push(EventKind::ProviderRetry(ProviderRetry {
                attempt: self.state.retried(),
                max_attempts: None,
                delay_ms: None,
                status: None,
                message: "the model call was tried again".to_owned(),
            }));
            return;
        }
        self.start(id, out);
    }

    fn step_finish(&mut self, part: Part, out: &mut Vec<EventKind>) {
        self.in_step(part.message_id.as_deref(), out);
        if let Some(id) = &part.message_id {
            self.steps.finished.insert(id.clone());
        }
        let usage = step_usage(
            part.message_id,
            part.reason,
            part.tokens.unwrap_or_default(),
            part.cost,
            (&self.prices, self.model.as_deref()),
        );
        self.state.close(&usage.reason);
        out.push(EventKind::StepFinished(usage));
    }

    fn tool_use(&mut self, part: Part, out: &mut Vec<EventKind>) {
        self.in_step(part.message_id.as_deref(), out);
        let name = part.tool.unwrap_or_else(|| "unknown".to_owned());
        let stated = part.state.is_some();
        let state = part.state.unwrap_or_default();
        let whole = state.input.unwrap_or(serde_json::Value::Null);
        let input = ToolInput::deserialize(&whole).unwrap_or_default();
        let fields = InputFields {
            path: input.path.as_deref().or(input.file_path.as_deref()),
            command: input.command.as_deref(),
            pattern: input.pattern.as_deref(),
            description: input.description.as_deref(),
            url: input.url.as_deref(),
            todos: input.todos.map(|n| n.0),
        };
        let inner = state.metadata.and_then(|m| m.metadata).unwrap_or_default();
        // Its title is the tool's name: the input says more.
        let start = ToolStart {
            kind: kind_of(&name),
            call_id: part.id.unwrap_or_default(),
            name,
            input: summary::summarize(&fields, None, &self.cwd),
            parent: None,
        };
        out.push(EventKind::ToolStarted(start.clone()));
        let call_id = start.call_id.clone();
        let subagent = start.name == "subagent";
        if subagent {
            out.push(EventKind::SubagentStarted {
                session_id: inner.session_id.clone(),
                call_id: start.call_id.clone(),
                description: input.description.as_deref().unwrap_or_default().to_owned(),
            });
        }
        let (status, error) = if state.status == "error" && state.error.as_deref() == Some(REFUSED)
        {
            (ToolStatus::Denied, state.error.clone())
        } else {
            let said = Said {
                status: &state.status,
                error: state.error.as_deref(),
                invalid: input.error.as_deref(),
                exit: inner.exit,
            };
            ended(&said, &start.name)
        };
        let duration_ms = state
            .time
            .and_then(|t| Some(t.end?.saturating_sub(t.start?)));
        let mut end = crate::event::ToolEnd {
            error,
            output_bytes: state.output.as_ref().map(|o| o.len() as u64),
            duration_ms,
            ..start.end(status)
        };
        let output = state.output.as_deref().or(state.error.as_deref());
        if stated {
            let ran = prints::Ran {
                input: &whole,
                exit: inner.exit,
                output: output.unwrap_or_default(),
            };
            prints::stamp(&mut end, &ran, self.sandboxed);
        }
        out.push(EventKind::ToolCompleted(end));
        if subagent {
            out.push(EventKind::SubagentFinished {
                call_id,
                status,
                message: output.and_then(handed_back),
            });
        }
    }

    fn error(&mut self, err: ErrorLine, out: &mut Vec<EventKind>) {
        let name = err.kind.unwrap_or_else(|| "error".to_owned());
        let message = err.message.unwrap_or_else(|| "unknown error".to_owned());
        self.state.fail(format!("{name}: {message}"));
        if name.starts_with("provider.") || err.status.is_some() {
            let response = err
                .response
                .map(|r| r.to_string())
                .filter(|r| r != "null" && r != "{}");
            let message = match response {
                Some(r) => format!(
                    "{message} (response: {})",
                    summary::truncate(&r, MAX_RESPONSE_CHARS)
                ),
                None => message,
            };
            out.push(EventKind::ProviderError(ProviderError {
                name,
                message,
                status: err.status,
                retryable: None,
            }));
        } else {
            out.push(EventKind::AgentError {
                name,
                message: summary::truncate(&message, MAX_ERROR_CHARS),
            });
        }
    }
}

/// The kind of one of OpenCode 2's tools.
fn kind_of(name: &str) -> ToolKind {
    match name {
        "shell" | "execute" => ToolKind::Shell,
        "subagent" => ToolKind::Subagent,
        "glob" | "grep" => ToolKind::Search,
        "webfetch" | "websearch" => ToolKind::Fetch,
        _ => ToolKind::of(name),
    }
}

/// The first line a subagent handed back, inside its `<subagent …>` wrapper.
fn handed_back(output: &str) -> Option<String> {
    let inside = match output.split_once('>') {
        Some((head, rest)) if head.starts_with("<subagent") => rest,
        _ => output,
    };
    let line = inside
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("</subagent"))?;
    Some(summary::truncate(line, 200))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::agent::transcript;

    /// A recording read as a run reads it: the stream, then the session's export.
    fn read(stdout_path: &Path) -> transcript::Reading {
        let name = transcript::name(stdout_path);
        let cwd = PathBuf::from(format!("/scratch/opencode2-run/{name}/ws"));
        let ctx = ParseContext {
            finishing: Some(FinisherSlot::default()),
            ..ParseContext::new(cwd)
        };
        transcript::read(&OpenCode2, stdout_path, ctx)
    }

    #[test]
    fn recorded_transcripts_of_opencode_2_1_2() {
        insta::glob!(
            "../../../fixtures/opencode-2.1.2",
            "*.stdout.ndjson",
            |path| {
                insta::assert_yaml_snapshot!(read(path));
            }
        );
    }

    #[test]
    fn recorded_transcripts_of_opencode_2_2_5() {
        insta::glob!(
            "../../../fixtures/opencode-2.2.5",
            "*.stdout.ndjson",
            |path| {
                insta::assert_yaml_snapshot!(read(path));
            }
        );
    }

    #[test]
    fn the_generation_is_told_by_the_version_then_by_the_package() {
        let v2 = Path::new("/x/node_modules/@opencode/cli/bin/opencode.exe");
        let v1 = Path::new("/x/node_modules/opencode-ai/bin/opencode.exe");
        assert!(is_v2(v1, Some("opencode v2.1.2")));
        assert!(!is_v2(v2, Some("1.18.33")));
        assert!(is_v2(v2, None));
        assert!(is_v2(v2, Some("opencode")));
        assert!(!is_v2(v1, None));
    }
}
