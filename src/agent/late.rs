//! What an agent prints after its final word on a turn (Claude Code's `result`, Codex's
//! `turn.completed`, OpenCode's finished last step, `agent.result`): still counted and shown like
//! anything else, with an `after_final_word` event before it. Text may trail the final word of a
//! completed turn; a tool call or a model call after it means the final word did not account for
//! all the work, and the turn does not complete.

use super::StreamEnd;
use crate::event::{EventKind, Late};

/// What came after the final word so far.
#[derive(Default)]
pub(crate) struct AfterFinal {
    /// Whether trailing text was already marked (text is marked once; work, every time).
    told_text: bool,
    /// Tool calls and model calls after the final word.
    work: u32,
    /// The first of them, described.
    first: Option<String>,
    /// The events of the line being marked, set aside while the marks go in before them (kept
    /// for the next line's, empty between lines).
    spare: Vec<EventKind>,
}

impl AfterFinal {
    /// Marks what one line printed after the final word made, the events `out[from..]`: each
    /// tool call and model call it started, and the first text.
    pub(crate) fn mark(&mut self, out: &mut Vec<EventKind>, from: usize) {
        let made = out.get(from..).unwrap_or_default();
        let marked = |e: &EventKind| match late(e) {
            Some(Late::Text) => !self.told_text,
            Some(_) => true,
            None => false,
        };
        if !made.iter().any(marked) {
            return;
        }
        self.spare.extend(out.drain(from..));
        for event in self.spare.drain(..) {
            match late(&event) {
                Some(Late::Text) if !self.told_text => {
                    self.told_text = true;
                    out.push(EventKind::AfterFinalWord {
                        what: Late::Text,
                        detail: String::new(),
                    });
                }
                Some(Late::Text) | None => {}
                Some(what) => {
                    let detail = detail(&event);
                    self.work += 1;
                    self.first.get_or_insert_with(|| describe(what, &detail));
                    out.push(EventKind::AfterFinalWord { what, detail });
                }
            }
            out.push(event);
        }
    }

    /// How the stream ended, once work after the final word is taken into account.
    pub(crate) fn end(&self, end: StreamEnd) -> StreamEnd {
        match (end, &self.first) {
            (StreamEnd::Finished, Some(first)) => {
                let more = match self.work {
                    1 => String::new(),
                    n => format!(" and {} more", n - 1),
                };
                StreamEnd::Failed(format!(
                    "the agent went on working after its final word: {first}{more}"
                ))
            }
            (end, _) => end,
        }
    }
}

/// What an event printed after the final word starts. A call's end, a subagent or a denial
/// belong to a call already counted at its start.
fn late(kind: &EventKind) -> Option<Late> {
    match kind {
        EventKind::ToolStarted(_) => Some(Late::Tool),
        EventKind::StepStarted { .. } | EventKind::AgentResult(_) => Some(Late::Step),
        EventKind::Text { .. } | EventKind::TextDelta { .. } | EventKind::Reasoning { .. } => {
            Some(Late::Text)
        }
        _ => None,
    }
}

/// Which call a late event started: `bash cargo test`; empty for anything but a tool call.
fn detail(kind: &EventKind) -> String {
    match kind {
        EventKind::ToolStarted(t) => {
            let mut label = String::new();
            t.write_label(&mut label);
            label
        }
        _ => String::new(),
    }
}

/// `a tool call (bash cargo test)`.
fn describe(what: Late, detail: &str) -> String {
    if detail.is_empty() {
        what.as_str().to_owned()
    } else {
        format!("{} ({detail})", what.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ToolKind, ToolStart};

    fn tool(name: &str) -> EventKind {
        EventKind::ToolStarted(ToolStart {
            call_id: "c".into(),
            name: name.into(),
            kind: ToolKind::Shell,
            input: "ls".into(),
            parent: None,
        })
    }

    fn text() -> EventKind {
        EventKind::Text { text: "ok".into() }
    }

    #[test]
    fn trailing_text_is_marked_once_and_leaves_the_turn_finished() {
        let mut after = AfterFinal::default();
        let mut out = vec![text()];
        after.mark(&mut out, 0);
        out.push(text());
        after.mark(&mut out, 2);
        let marks = out
            .iter()
            .filter(|e| matches!(e, EventKind::AfterFinalWord { .. }))
            .count();
        assert_eq!(marks, 1, "{out:?}");
        assert_eq!(after.end(StreamEnd::Finished), StreamEnd::Finished);
    }

    #[test]
    fn each_tool_call_is_marked_and_fails_a_finished_turn() {
        let mut after = AfterFinal::default();
        let mut out = vec![text()];
        out.push(tool("bash"));
        after.mark(&mut out, 1);
        out.push(text());
        out.push(tool("edit"));
        after.mark(&mut out, 3);
        let marks: Vec<Late> = out
            .iter()
            .filter_map(|e| match e {
                EventKind::AfterFinalWord { what, .. } => Some(*what),
                _ => None,
            })
            .collect();
        assert_eq!(marks, [Late::Tool, Late::Text, Late::Tool], "{out:?}");
        assert!(matches!(
            &out[1],
            EventKind::AfterFinalWord { what: Late::Tool, detail } if detail == "bash ls"
        ));
        assert_eq!(
            after.end(StreamEnd::Finished),
            StreamEnd::Failed(
                "the agent went on working after its final word: a tool call (bash ls) and 1 more"
                    .into()
            )
        );
        let failed = StreamEnd::Failed("boom".into());
        assert_eq!(after.end(failed.clone()), failed, "its own failure stands");
    }
}
