//! OpenCode adapter: `opencode run --format json` NDJSON and its stderr, as universal events.
//!
//! OpenCode prints six line types (`step_start`, `step_finish`, `text`, `reasoning`, `tool_use`,
//! `error`). A tool is printed only once it has finished, so `tool.started` and `tool.completed`
//! are emitted together. There is no end-of-run line: the run finished only if the last step
//! ended with a reason other than `tool-calls` (or `length`, an answer cut by the output limit).

mod prints;
mod steps;
mod v2;

pub(crate) use v2::OpenCode2;

use std::borrow::Cow;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde::de::{self, IgnoredAny, SeqAccess, Visitor};

use self::steps::StepState;
use super::late::AfterFinal;
use super::reported::{self, Cost, Count};
use super::summary::{self, InputFields};
use super::{
    Adapter, Cli, Invocation, ParseContext, Permissions, StderrParser, StdoutParser, StreamEnd,
    announce_session, npm_cli, unparsed_line, unreadable_reason,
};
use crate::event::{
    EventKind, ProviderError, StepUsage, Tokens, ToolEnd, ToolKind, ToolStart, ToolStatus,
    UnparsedReason,
};
use crate::prices::PriceTable;

/// The error text OpenCode puts on a tool call whose permission was auto-rejected.
const REJECTED: &str = "The user rejected permission to use this specific tool call.";
/// Longest tool error text kept in an event.
const MAX_ERROR_CHARS: usize = 2000;

pub(crate) struct OpenCode;

impl Adapter for OpenCode {
    fn cli(&self) -> Cli {
        npm_cli!(program: "opencode", package: "opencode-ai", bin_env: "RUNBOOK_OPENCODE_BIN")
    }

    fn args(&self, inv: &Invocation<'_>) -> Vec<String> {
        let mut args = vec!["run".to_owned(), "--format".to_owned(), "json".to_owned()];
        if let Some(model) = inv.model {
            args.extend(["--model".to_owned(), model.to_owned()]);
        }
        if let Some(session) = inv.resume_session {
            args.extend(["--session".to_owned(), session.to_owned()]);
        }
        match inv.permissions {
            Permissions::Agent | Permissions::Workspace => {}
            // OpenCode's built-in read-only agent.
            Permissions::ReadOnly => args.extend(["--agent".to_owned(), "plan".to_owned()]),
            Permissions::Bypass => args.push("--auto".to_owned()),
        }
        args.extend(inv.extra_args.iter().cloned());
        // `--` keeps a prompt that starts with `-` from being read as an option.
        args.push("--".to_owned());
        args.push(inv.prompt.to_owned());
        args
    }

    fn own_paths(&self, var: super::own_paths::Var<'_>, cwd: &Path) -> super::own_paths::OwnPaths {
        super::own_paths::opencode(var, cwd)
    }

    /// OpenCode 2's `run` without `--standalone` works in its background service.
    fn daemon(&self, var: super::own_paths::Var<'_>) -> Option<Box<dyn super::handed::Daemon>> {
        super::opencode_service::find(var)
    }

    fn has_generations(&self) -> bool {
        true
    }

    fn generation(&self, program: &Path, version: Option<&str>) -> Option<&'static dyn Adapter> {
        v2::is_v2(program, version).then_some(&OpenCode2 as &'static dyn Adapter)
    }

    fn generation_of_line(&self, line: &[u8]) -> Option<&'static dyn Adapter> {
        let generation: &'static dyn Adapter = match v2::printed_by_v2(line)? {
            true => &OpenCode2,
            false => &OpenCode,
        };
        Some(generation)
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

#[derive(Default)]
struct Parser {
    cwd: PathBuf,
    /// The model asked for, to price a step whose reported cost cannot be used.
    model: Option<String>,
    prices: Arc<PriceTable>,
    /// Whether the agent runs in `--sandbox` (a failed command's refusal is then looked for).
    sandboxed: bool,
    session_announced: bool,
    steps: StepState,
    /// What came after the last finished step, outside any step.
    after: AfterFinal,
}

impl StdoutParser for Parser {
    fn line(&mut self, line: &[u8], out: &mut Vec<EventKind>) {
        // Checking the whole line's UTF-8 at once lets serde_json skip checking each string it
        // keeps; a line that is not UTF-8 is parsed from bytes. serde_json's derived reader is
        // as fast here as a hand-written one was (within 6%, BENCHMARKS.md, "JSON"): OpenCode's
        // lines are few and large, and their large strings are only measured.
        let parsed = match std::str::from_utf8(line) {
            Ok(text) => serde_json::from_str(text),
            Err(_) => serde_json::from_slice(line),
        };
        let parsed: Line<'_> = match parsed {
            Ok(parsed) => parsed,
            Err(_) => {
                out.push(unparsed_line(unreadable_reason(line), line));
                return;
            }
        };
        announce_session(
            &mut self.session_announced,
            parsed.session_id.as_deref(),
            out,
        );
        // OpenCode's final word is its last finished step: a new step is more work of the turn,
        // anything else outside a step comes after the word.
        let late = self.steps.finished() && parsed.kind != "step_start";
        let from = out.len();
        match (&*parsed.kind, parsed.part, parsed.error) {
            ("step_start", Some(part), _) => self.step_start(part, out),
            ("step_finish", Some(part), _) => self.step_finish(part, out),
            ("text", Some(part), _) => out.push(EventKind::Text {
                text: part.text.unwrap_or_default().into_owned(),
            }),
            ("reasoning", Some(part), _) => {
                out.push(EventKind::Reasoning {
                    text: part.text.unwrap_or_default().into_owned(),
                });
            }
            ("tool_use", Some(part), _) => self.tool_use(part, out),
            ("error", _, Some(err)) => self.error(err, out),
            _ => out.push(unparsed_line(UnparsedReason::UnknownType, line)),
        }
        if late {
            self.after.mark(out, from);
        }
    }

    fn end(&mut self, _out: &mut Vec<EventKind>) -> StreamEnd {
        let end = self
            .steps
            .stream_end("the output ended inside a step (no step_finish)");
        self.after.end(end)
    }
}

impl Parser {
    fn step_start(&mut self, part: Part<'_>, out: &mut Vec<EventKind>) {
        let id = part.message_id.map(Cow::into_owned);
        // A retried request re-announces the same message: one step, not two.
        if self.steps.is_open(id.as_deref()) {
            return;
        }
        self.steps.open(id.clone());
        out.push(EventKind::StepStarted { id });
    }

    fn step_finish(&mut self, part: Part<'_>, out: &mut Vec<EventKind>) {
        let usage = step_usage(
            part.message_id.map(Cow::into_owned),
            part.reason.map(Cow::into_owned),
            part.tokens.unwrap_or_default(),
            part.cost,
            (&self.prices, self.model.as_deref()),
        );
        self.steps.close(&usage.reason);
        out.push(EventKind::StepFinished(usage));
    }

    fn tool_use(&mut self, part: Part<'_>, out: &mut Vec<EventKind>) {
        let name = part.tool.unwrap_or(Cow::Borrowed("unknown")).into_owned();
        let call_id = part.call_id.unwrap_or_default().into_owned();
        let stated = part.state.is_some();
        let state = part.state.map(|state| *state).unwrap_or_default();
        let whole = state.input.map_or(serde_json::Value::Null, |input| input.0);
        let input = ToolInput::deserialize(&whole).unwrap_or_default();
        let mut fields = InputFields {
            path: input.file_path.as_deref().or(input.path.as_deref()),
            command: input.command.as_deref(),
            pattern: input.pattern.as_deref(),
            description: input.description.as_deref(),
            url: input.url.as_deref(),
            todos: input.todos.map(|n| n.0),
        };
        // A call to a tool that does not exist names the tool it wanted.
        if name == "invalid" {
            fields = InputFields {
                description: input.tool.as_deref(),
                ..InputFields::default()
            };
        }
        let meta = state.metadata.unwrap_or_default();

        let start = ToolStart {
            kind: ToolKind::of(&name),
            call_id,
            name,
            input: summary::summarize(&fields, state.title.as_deref(), &self.cwd),
            parent: None,
        };
        out.push(EventKind::ToolStarted(start.clone()));
        if start.name == "task" {
            out.push(EventKind::SubagentStarted {
                session_id: meta.session_id.map(Cow::into_owned),
                call_id: start.call_id.clone(),
                description: input.description.as_deref().unwrap_or_default().to_owned(),
            });
        }

        let said = Said {
            status: &state.status,
            error: state.error.as_deref(),
            invalid: input.error.as_deref(),
            exit: meta.exit,
        };
        let (status, error) = ended(&said, &start.name);
        if status == ToolStatus::Denied {
            self.steps.denied();
        }
        let duration_ms = state
            .time
            .and_then(|t| Some(t.end?.saturating_sub(t.start?)));
        let mut end = ToolEnd {
            error,
            output_bytes: state.output.as_ref().map(|o| o.len() as u64),
            duration_ms,
            ..start.end(status)
        };
        if stated {
            let output = state.output.as_deref().or(state.error.as_deref());
            let ran = prints::Ran {
                input: &whole,
                exit: meta.exit,
                output: output.unwrap_or_default(),
            };
            prints::stamp(&mut end, &ran, self.sandboxed);
        }
        out.push(EventKind::ToolCompleted(end));
    }

    fn error(&mut self, err: ErrorLine<'_>, out: &mut Vec<EventKind>) {
        let name = err.name.unwrap_or(Cow::Borrowed("Error")).into_owned();
        let data = err.data.unwrap_or_default();
        let message = data
            .message
            .map_or_else(|| "unknown error".to_owned(), Cow::into_owned);
        self.steps.fail(format!("{name}: {message}"));
        if name == "APIError" || data.status_code.is_some() {
            out.push(EventKind::ProviderError(ProviderError {
                name,
                message,
                status: data.status_code,
                retryable: data.is_retryable,
            }));
        } else {
            out.push(EventKind::AgentError { name, message });
        }
    }
}

/// A finished step's usage from what OpenCode reported of it: its tokens, and its cost when it
/// can be used (else estimated from the tokens with `prices` for `model`).
fn step_usage(
    id: Option<String>,
    reason: Option<String>,
    t: WireTokens,
    cost: Option<Cost>,
    (prices, model): (&PriceTable, Option<&str>),
) -> StepUsage {
    let reason = reason.unwrap_or_else(|| "unknown".to_owned());
    let mut tokens_unreadable = false;
    let mut get = |n: Count| n.get(&mut tokens_unreadable);
    let tokens = Tokens {
        input: get(t.input),
        output: get(t.output),
        reasoning: get(t.reasoning),
        cache_read: get(t.cache.read),
        cache_write: get(t.cache.write),
    };
    let cost = reported::check(
        cost,
        || reported::estimate(prices, model, &tokens),
        tokens_unreadable,
    );
    StepUsage {
        id,
        reason,
        tokens,
        cost_usd: cost.cost_usd,
        cost_source: cost.cost_source,
        cost_rejected: cost.cost_rejected,
        tokens_unreadable,
    }
}

/// What a tool line says of how its call ended.
struct Said<'a> {
    status: &'a str,
    error: Option<&'a str>,
    /// For the `invalid` tool: why the tool the model wanted could not be had.
    invalid: Option<&'a str>,
    exit: Option<i64>,
}

/// How a call ended, and its error: refused by the permission check (OpenCode's own words), a
/// tool that does not exist (its own error), failed, or a command's non-zero exit.
fn ended(said: &Said<'_>, name: &str) -> (ToolStatus, Option<String>) {
    match said.status {
        "error" => {
            let error = said.error.unwrap_or_default();
            if error == REJECTED {
                (ToolStatus::Denied, Some(error.to_owned()))
            } else {
                (
                    ToolStatus::Error,
                    Some(summary::truncate(error, MAX_ERROR_CHARS)),
                )
            }
        }
        _ if name == "invalid" => (
            ToolStatus::Error,
            said.invalid.map(|e| summary::truncate(e, MAX_ERROR_CHARS)),
        ),
        _ => match said.exit {
            Some(code) if code != 0 => (ToolStatus::Error, Some(format!("exit code {code}"))),
            _ => (ToolStatus::Ok, None),
        },
    }
}

/// OpenCode's stderr is empty except for permission auto-rejections and usage errors.
struct Stderr;

impl StderrParser for Stderr {
    fn line(&mut self, line: &str, out: &mut Vec<EventKind>) {
        // `! permission requested: bash (echo hi); auto-rejecting`
        if let Some(rest) = line.split_once("permission requested: ").map(|(_, r)| r)
            && let Some(what) = rest.strip_suffix("; auto-rejecting")
        {
            let (tool, detail) = match what.split_once(" (") {
                Some((tool, detail)) => (tool, detail.strip_suffix(')').unwrap_or(detail)),
                None => (what, ""),
            };
            out.push(EventKind::PermissionDenied {
                tool: tool.to_owned(),
                detail: detail.to_owned(),
                call_id: None,
            });
            // The meaning is the event; the line itself stays in stderr.log.
            return;
        }
        out.push(EventKind::Stderr {
            line: line.to_owned(),
        });
    }
}

// The wire format. Borrowed where possible.

#[derive(Deserialize)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct Line<'a> {
    #[serde(rename = "type", borrow)]
    kind: Cow<'a, str>,
    #[serde(rename = "sessionID", default, borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    part: Option<Part<'a>>,
    #[serde(default, borrow)]
    error: Option<ErrorLine<'a>>,
}

#[derive(Deserialize)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct Part<'a> {
    #[serde(rename = "messageID", default, borrow)]
    message_id: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    tool: Option<Cow<'a, str>>,
    #[serde(rename = "callID", default, borrow)]
    call_id: Option<Cow<'a, str>>,
    /// Boxed: it is large, and only tool lines have it (every other line moves less).
    #[serde(default, borrow)]
    state: Option<Box<ToolState<'a>>>,
    #[serde(default, borrow)]
    reason: Option<Cow<'a, str>>,
    #[serde(default)]
    tokens: Option<WireTokens>,
    /// Read whatever it holds: a cost that is not a usable number must not cost the line its
    /// tokens.
    #[serde(default)]
    cost: Option<Cost>,
}

#[derive(Deserialize, Default)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct ToolState<'a> {
    #[serde(default, borrow)]
    status: Cow<'a, str>,
    #[serde(default)]
    input: Option<WholeInput>,
    /// Kept, not only measured: the call's fingerprint is made of it.
    #[serde(default, borrow)]
    output: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    error: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    metadata: Option<ToolMeta<'a>>,
    #[serde(default, borrow)]
    title: Option<Cow<'a, str>>,
    #[serde(default)]
    time: Option<Span>,
}

#[derive(Deserialize, Default)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct ToolInput<'a> {
    #[serde(rename = "filePath", default, borrow)]
    file_path: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    path: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    command: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    pattern: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    description: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    url: Option<Cow<'a, str>>,
    #[serde(default)]
    todos: Option<SeqLen>,
    /// For the `invalid` tool: the tool the model wanted, and why it could not have it.
    #[serde(default, borrow)]
    tool: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    error: Option<Cow<'a, str>>,
}

#[derive(Deserialize, Default)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct ToolMeta<'a> {
    #[serde(rename = "sessionId", default, borrow)]
    session_id: Option<Cow<'a, str>>,
    #[serde(default)]
    exit: Option<i64>,
}

#[derive(Deserialize, Clone, Copy)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct Span {
    start: Option<u64>,
    end: Option<u64>,
}

#[derive(Deserialize, Default)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct WireTokens {
    #[serde(default)]
    input: Count,
    #[serde(default)]
    output: Count,
    #[serde(default)]
    reasoning: Count,
    #[serde(default)]
    cache: WireCache,
}

#[derive(Deserialize, Default)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct WireCache {
    #[serde(default)]
    read: Count,
    #[serde(default)]
    write: Count,
}

#[derive(Deserialize)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct ErrorLine<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    data: Option<ErrorData<'a>>,
}

#[derive(Deserialize, Default)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct ErrorData<'a> {
    #[serde(default, borrow)]
    message: Option<Cow<'a, str>>,
    #[serde(rename = "statusCode", default)]
    status_code: Option<u16>,
    #[serde(rename = "isRetryable", default)]
    is_retryable: Option<bool>,
}

/// A tool's input whole, for the call's fingerprint. It must also read as [`ToolInput`]: a line
/// whose input does not is not OpenCode's.
#[derive(Default)]
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct WholeInput(serde_json::Value);

impl<'de> Deserialize<'de> for WholeInput {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let whole = serde_json::Value::deserialize(d)?;
        ToolInput::deserialize(&whole).map_err(de::Error::custom)?;
        Ok(Self(whole))
    }
}

/// The number of elements of a JSON array, without keeping them.
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct SeqLen(usize);

impl<'de> Deserialize<'de> for SeqLen {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = SeqLen;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<SeqLen, A::Error> {
                let mut n = 0;
                while seq.next_element::<IgnoredAny>()?.is_some() {
                    n += 1;
                }
                Ok(SeqLen(n))
            }
        }
        d.deserialize_seq(V)
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::event::CostIssue;

    fn read(stdout_path: &Path) -> super::super::transcript::Reading {
        let name = super::super::transcript::name(stdout_path);
        // The recordings ran in this directory; tool paths are shown relative to it.
        let cwd = PathBuf::from(format!("/scratch/opencode-harness/{name}/work"));
        super::super::transcript::read(&OpenCode, stdout_path, ParseContext::new(cwd))
    }

    #[test]
    fn recorded_transcripts() {
        insta::glob!("../../fixtures/opencode", "*.stdout.ndjson", |path| {
            insta::assert_yaml_snapshot!(read(path));
        });
    }

    #[test]
    fn bytes_that_are_not_utf8_matter_only_where_the_parser_reads() {
        let mut parser = OpenCode.stdout_parser(ParseContext::new(PathBuf::from("/")));
        let mut out = Vec::new();
        // In a field that is skipped: the line is read as usual.
        parser.line(
            b"{\"type\":\"text\",\"part\":{\"junk\":\"\xff\xfe\",\"text\":\"hi\"}}",
            &mut out,
        );
        // In the text itself: the line cannot be read.
        parser.line(
            b"{\"type\":\"text\",\"part\":{\"text\":\"h\xffi\"}}",
            &mut out,
        );
        assert!(
            matches!(&out[..], [EventKind::Text { text }, EventKind::Unparsed(_)] if text == "hi"),
            "{out:?}"
        );
    }

    #[test]
    fn no_line_can_make_the_parser_panic() {
        let mut parser = OpenCode.stdout_parser(ParseContext::new(PathBuf::from("/")));
        let mut out = Vec::new();
        for line in [
            &b""[..],
            b"{}",
            b"null",
            b"[1,2]",
            br#"{"type":"tool_use"}"#,
            br#"{"type":"tool_use","part":{"state":{"status":"error"}}}"#,
            br#"{"type":"step_finish","part":{"tokens":{"input":-1}}}"#,
            br#"{"type":"error","error":"just a string"}"#,
            b"\xff\xfe",
        ] {
            parser.line(line, &mut out);
        }
        assert!(
            out.iter().all(|e| matches!(
                e,
                EventKind::Unparsed(_)
                    | EventKind::ToolStarted(_)
                    | EventKind::ToolCompleted(_)
                    | EventKind::StepFinished(StepUsage {
                        tokens_unreadable: true,
                        ..
                    })
            )),
            "{out:?}"
        );
    }

    #[test]
    fn a_step_whose_cost_cannot_be_used_keeps_its_tokens_and_is_priced_when_it_can_be() {
        let ctx = ParseContext {
            model: Some("anthropic/claude-sonnet-4-5".to_owned()),
            ..ParseContext::new(PathBuf::from("/"))
        };
        let mut parser = OpenCode.stdout_parser(ctx);
        let mut out = Vec::new();
        for cost in ["-0.45", "1e400", "\"0.3\"", "{}", "0.5"] {
            let line = format!(
                r#"{{"type":"step_finish","part":{{"reason":"stop","tokens":{{"input":1000,"output":10}},"cost":{cost}}}}}"#
            );
            parser.line(line.as_bytes(), &mut out);
        }
        parser.line(
            br#"{"type":"step_finish","part":{"reason":"stop","tokens":{"input":"1000"},"cost":-1}}"#,
            &mut out,
        );
        let steps: Vec<(u64, Option<f64>, Option<CostIssue>, bool)> = out
            .iter()
            .filter_map(|e| match e {
                EventKind::StepFinished(s) => Some((
                    s.tokens.total(),
                    s.cost_usd,
                    s.cost_rejected,
                    s.tokens_unreadable,
                )),
                _ => None,
            })
            .collect();
        let priced = Some(0.003_15);
        assert_eq!(
            steps,
            [
                (1010, priced, Some(CostIssue::Negative), false),
                (1010, priced, Some(CostIssue::Infinite), false),
                (1010, priced, Some(CostIssue::Unreadable), false),
                (1010, priced, Some(CostIssue::Unreadable), false),
                (1010, Some(0.5), None, false),
                (0, None, Some(CostIssue::Negative), true),
            ]
        );
    }
}
