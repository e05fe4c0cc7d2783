//! The generic adapter (`--agent-cmd`): any program that prints runbook's own universal events as
//! NDJSON on stdout (see `docs/events.md`). `seq`, `ts` and `turn` may be left out; runbook stamps
//! every event itself. Events that only runbook may make (`run.*`, `turn.*`, `watchdog.*`, …)
//! are refused as `unparsed`.

mod fast;

#[cfg(any(test, feature = "fuzzing"))]
pub(crate) use fast::agrees as fast_path_agrees;

use super::late::AfterFinal;
use super::tools::OpenCalls;
use super::{
    Adapter, Cli, Invocation, ParseContext, StderrParser, StdoutParser, StreamEnd, unparsed_line,
    unreadable_reason,
};
use crate::event::{EventKind, UnparsedReason};

/// The environment variable carrying the session to continue, on a resumed turn.
pub(crate) const RESUME_ENV: &str = "RUNBOOK_RESUME_SESSION";

pub(crate) struct Generic;

impl Adapter for Generic {
    fn cli(&self) -> Cli {
        Cli {
            name: "custom",
            program: "the --agent-cmd program",
            install_hint: "check the first word of --agent-cmd",
        }
    }

    /// The command's own arguments (in `extra_args`), then the prompt.
    fn args(&self, inv: &Invocation<'_>) -> Vec<String> {
        let mut args = inv.extra_args.to_vec();
        args.push(inv.prompt.to_owned());
        args
    }

    fn env(&self, inv: &Invocation<'_>) -> Vec<(String, String)> {
        inv.resume_session
            .map(|s| vec![(RESUME_ENV.to_owned(), s.to_owned())])
            .unwrap_or_default()
    }

    fn version_args(&self) -> &'static [&'static str] {
        &[]
    }

    fn stdout_parser(&self, _ctx: ParseContext) -> Box<dyn StdoutParser> {
        Box::new(Parser::default())
    }

    fn stderr_parser(&self) -> Box<dyn StderrParser> {
        Box::new(Stderr)
    }
}

#[derive(Default)]
struct Parser {
    calls: OpenCalls,
    open_step: bool,
    last_reason: Option<String>,
    result: Option<Result<(), String>>,
    /// What came after `agent.result`.
    after: AfterFinal,
}

impl StdoutParser for Parser {
    fn line(&mut self, line: &[u8], out: &mut Vec<EventKind>) {
        // Most lines are read by the fast path; it leaves whatever it does not handle to
        // serde_json.
        let fast = std::str::from_utf8(line).ok().and_then(fast::line);
        let kind: EventKind = match fast.map_or_else(|| serde_json::from_slice(line), Ok) {
            Ok(kind) => kind,
            Err(e) => {
                // An object naming a type no event has, or anything else that did not read.
                let reason = if e.is_data() && e.to_string().starts_with("unknown variant") {
                    UnparsedReason::UnknownType
                } else {
                    unreadable_reason(line)
                };
                out.push(unparsed_line(reason, line));
                return;
            }
        };
        if !kind.is_from_agent() {
            out.push(unparsed_line(UnparsedReason::UnknownType, line));
            return;
        }
        let (late, from) = (self.result.is_some(), out.len());
        self.event(kind, out);
        if late {
            self.after.mark(out, from);
        }
    }

    fn end(&mut self, out: &mut Vec<EventKind>) -> StreamEnd {
        self.calls.close_all(out);
        let end = match self.result.take() {
            Some(Ok(())) => StreamEnd::Finished,
            Some(Err(message)) => StreamEnd::Failed(message),
            None if self.open_step => {
                StreamEnd::Truncated("the output ended inside a step".to_owned())
            }
            None => {
                StreamEnd::Truncated("the agent ended without an agent.result event".to_owned())
            }
        };
        self.after.end(end)
    }
}

impl Parser {
    fn event(&mut self, kind: EventKind, out: &mut Vec<EventKind>) {
        match kind {
            EventKind::ToolStarted(start) => self.calls.start(start, out),
            EventKind::ToolCompleted(end) => self.calls.complete(end, out),
            EventKind::StepStarted { .. } => {
                self.open_step = true;
                out.push(kind);
            }
            EventKind::StepFinished(ref usage) => {
                self.open_step = false;
                self.last_reason = Some(usage.reason.clone());
                out.push(kind);
            }
            EventKind::AgentResult(ref result) => {
                self.result = Some(if result.ok {
                    Ok(())
                } else {
                    Err(result
                        .message
                        .clone()
                        .unwrap_or_else(|| "the agent reported a failure".to_owned()))
                });
                out.push(kind);
            }
            other => out.push(other),
        }
    }
}

/// stderr of an unknown agent: every line is shown as it is.
struct Stderr;

impl StderrParser for Stderr {
    fn line(&mut self, line: &str, out: &mut Vec<EventKind>) {
        out.push(EventKind::Stderr {
            line: line.to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::ToolStatus;

    fn parse(lines: &[&str]) -> (Vec<EventKind>, StreamEnd) {
        let mut parser = Parser::default();
        let mut out = Vec::new();
        for line in lines {
            parser.line(line.as_bytes(), &mut out);
        }
        let end = parser.end(&mut out);
        (out, end)
    }

    #[test]
    fn universal_events_pass_through_and_runbooks_own_are_refused() {
        let (events, end) = parse(&[
            r#"{"type":"tool.started","call_id":"1","name":"bash","kind":"shell","input":"ls"}"#,
            r#"{"type":"tool.completed","call_id":"1","name":"bash","kind":"shell","input":"ls","status":"ok","duration_ms":5}"#,
            r#"{"type":"run.finished","outcome":"completed","message":"x","duration_ms":1,"exit":{"code":0}}"#,
            r#"{"type":"agent.result","ok":true}"#,
        ]);
        let types: Vec<_> = events.iter().map(EventKind::type_name).collect();
        assert_eq!(
            types,
            ["tool.started", "tool.completed", "unparsed", "agent.result"]
        );
        assert!(
            matches!(&events[1], EventKind::ToolCompleted(t) if t.duration_ms == Some(5) && t.status == ToolStatus::Ok)
        );
        assert_eq!(end, StreamEnd::Finished);
    }

    #[test]
    fn unreadable_lines_say_whether_the_type_or_the_shape_was_wrong() {
        let (events, _) = parse(&[
            r#"{"type":"brand.new","x":1}"#,
            r#"{"type":"text","text":5}"#,
            r#"[1,2]"#,
            r#"{"type":"text""#,
        ]);
        let reasons: Vec<_> = events
            .iter()
            .map(|e| match e {
                EventKind::Unparsed(u) => u.reason,
                other => panic!("{other:?}"),
            })
            .collect();
        use UnparsedReason::*;
        assert_eq!(
            reasons,
            [UnknownType, UnexpectedJson, UnexpectedJson, NotJson]
        );
    }

    #[test]
    fn a_call_told_only_when_done_still_gets_its_start() {
        let (events, _) = parse(&[
            r#"{"type":"tool.completed","call_id":"1","name":"grep","input":"fn","status":"error","error":"no match","duration_ms":3}"#,
            r#"{"type":"tool.completed","call_id":"1","name":"grep","input":"fn","status":"ok"}"#,
        ]);
        let [
            EventKind::ToolStarted(start),
            EventKind::ToolCompleted(end),
            EventKind::ToolStarted(again),
            EventKind::ToolCompleted(_),
        ] = &events[..]
        else {
            panic!("{events:?}");
        };
        assert_eq!(start, &end.start());
        assert_eq!(again, start);
        assert_eq!(
            (end.status, end.error.as_deref(), end.duration_ms),
            (ToolStatus::Error, Some("no match"), Some(3))
        );
    }

    #[test]
    fn the_example_in_the_docs_is_a_completed_turn() {
        let docs = include_str!("../../docs/events.md");
        let example = docs
            .split("## Your own agent")
            .nth(1)
            .and_then(|s| s.split("```json\n").nth(1))
            .and_then(|s| s.split("```").next())
            .expect("docs/events.md has the --agent-cmd example");
        let lines: Vec<&str> = example.lines().collect();
        let (events, end) = parse(&lines);
        assert_eq!(events.len(), lines.len());
        assert!(
            events.iter().all(|e| !matches!(e, EventKind::Unparsed(_))),
            "{events:?}"
        );
        assert_eq!(end, StreamEnd::Finished);
    }

    #[test]
    fn a_stream_without_a_result_is_truncated_and_its_open_calls_fail() {
        let (events, end) =
            parse(&[r#"{"type":"tool.started","call_id":"1","name":"bash","input":"sleep 9"}"#]);
        assert!(matches!(end, StreamEnd::Truncated(_)));
        assert!(
            matches!(events.last(), Some(EventKind::ToolCompleted(t)) if t.status == ToolStatus::Error)
        );
    }
}
