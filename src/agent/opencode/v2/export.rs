//! Reading OpenCode 2's session export (`opencode session export ID`) after the run: the steps
//! its stream did not end (their tokens and cost) and whether the turn finished.

use std::sync::Arc;

use serde::Deserialize;

use super::super::{Cost, WireTokens, step_usage};
use super::Steps;
use crate::agent::{Finisher, StreamEnd};
use crate::event::{EventKind, StepUsage, Tokens};
use crate::prices::PriceTable;

/// The session export asked for once the agent has exited.
pub(in crate::agent::opencode) struct Export {
    pub session: String,
    pub steps: Steps,
    pub model: Option<String>,
    pub prices: Arc<PriceTable>,
    /// Whether the stream told of a failure (which stands whatever the export says).
    pub failed: bool,
}

#[derive(Deserialize)]
struct Session {
    #[serde(default)]
    messages: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    finish: Option<String>,
    #[serde(default)]
    tokens: Option<WireTokens>,
    #[serde(default)]
    cost: Option<Cost>,
    #[serde(default)]
    outcome: Option<String>,
    #[serde(default)]
    error: Option<serde_json::Value>,
}

impl Finisher for Export {
    fn args(&self) -> Vec<String> {
        vec![
            "session".to_owned(),
            "export".to_owned(),
            self.session.clone(),
        ]
    }

    fn finish(
        self: Box<Self>,
        printed: Result<Vec<u8>, String>,
        end: StreamEnd,
        out: &mut Vec<EventKind>,
    ) -> StreamEnd {
        let session = printed.and_then(|bytes| {
            serde_json::from_slice::<Session>(&bytes)
                .map_err(|e| format!("its export is not a session's: {e}"))
        });
        match session {
            Ok(session) => self.read(session, end, out),
            Err(why) => self.without(&why, end, out),
        }
    }
}

impl Export {
    /// The turn's messages (those after its prompt, the last user message): each step the stream
    /// did not end, ended here; the turn's ending from its `idle` message.
    fn read(&self, session: Session, end: StreamEnd, out: &mut Vec<EventKind>) -> StreamEnd {
        let from = session
            .messages
            .iter()
            .rposition(|m| m.kind == "user")
            .map_or(0, |i| i + 1);
        let mut idle = None;
        for message in session.messages.into_iter().skip(from) {
            match &*message.kind {
                "assistant" => self.step(message, out),
                "idle" => idle = Some(message),
                _ => {}
            }
        }
        if self.failed {
            return end;
        }
        match idle {
            Some(m) if m.outcome.as_deref() == Some("succeeded") => match end {
                // A call still waited on, or the output limit, is not undone by the export.
                StreamEnd::Truncated(why) if !why.contains("no step_finish") => {
                    StreamEnd::Truncated(why)
                }
                _ => StreamEnd::Finished,
            },
            Some(m) => StreamEnd::Failed(match m.error {
                Some(e) => format!("OpenCode says the turn failed: {e}"),
                None => "OpenCode says the turn failed".to_owned(),
            }),
            None => end,
        }
    }

    /// One assistant message: its step started and ended, unless the stream did that already.
    fn step(&self, message: Message, out: &mut Vec<EventKind>) {
        let Some(id) = message.id else { return };
        if self.steps.finished.contains(&id) {
            return;
        }
        if !self.steps.started.contains(&id) {
            out.push(EventKind::StepStarted {
                id: Some(id.clone()),
            });
        }
        out.push(EventKind::StepFinished(step_usage(
            Some(id),
            message.finish,
            message.tokens.unwrap_or_default(),
            message.cost,
            (&self.prices, self.model.as_deref()),
        )));
    }

    /// No export: the steps the stream did not end are said to have unknown tokens and cost,
    /// never none.
    fn without(&self, why: &str, end: StreamEnd, out: &mut Vec<EventKind>) -> StreamEnd {
        out.push(EventKind::AgentWarning {
            message: format!(
                "OpenCode's session export could not be had ({why}): the steps its output did not end have unknown tokens and cost, so the run's totals are incomplete"
            ),
        });
        for id in self
            .steps
            .started
            .iter()
            .filter(|id| !self.steps.finished.contains(*id))
        {
            out.push(EventKind::StepFinished(StepUsage {
                id: Some(id.clone()),
                reason: "unknown".to_owned(),
                tokens: Tokens::default(),
                cost_usd: None,
                cost_source: None,
                cost_rejected: None,
                tokens_unreadable: true,
            }));
        }
        end
    }
}
