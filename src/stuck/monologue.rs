//! The `monologue` rule: steps that end without a tool call, one after another, each saying
//! nothing or the same as the one before. Passed over (neither counted nor ending a streak): a
//! step in which the provider failed or was retried (a storm of 429s is not the agent's doing),
//! one that ended asking for tools or cut at the token limit (its calls, if any, come later),
//! and one with visible reasoning (it was thinking, not repeating itself).

use std::hash::{DefaultHasher, Hash as _, Hasher as _};

use super::Reached;
use crate::event::StuckRule;

#[derive(Default)]
pub(super) struct Monologue {
    /// The open step: whether it called a tool, had provider trouble, and its text's hash.
    tool: bool,
    trouble: bool,
    text: Option<DefaultHasher>,
    /// The streak of idle steps: how many, the text they share (`None`: none yet), the first.
    count: u32,
    said: Option<u64>,
    first_seq: u64,
}

impl Monologue {
    pub(super) fn step_started(&mut self) {
        self.tool = false;
        self.trouble = false;
        self.text = None;
    }

    pub(super) fn tool_call(&mut self) {
        self.tool = true;
    }

    /// Something that makes the step not count: provider trouble, reasoning.
    pub(super) fn pass_over(&mut self) {
        self.trouble = true;
    }

    pub(super) fn text(&mut self, text: &str) {
        let text = text.trim();
        if !text.is_empty() {
            text.hash(self.text.get_or_insert_with(DefaultHasher::new));
        }
    }

    /// A step ended: the streak it makes, if it is idle.
    pub(super) fn step_finished(&mut self, seq: u64, reason: &str) -> Option<Reached> {
        let asked = matches!(
            reason,
            "tool-calls" | "tool_calls" | "tool_use" | "length" | "max_tokens"
        );
        let (tool, trouble) = (self.tool, self.trouble || asked);
        let text = self.text.take().map(|h| h.finish());
        self.step_started();
        if trouble {
            return None;
        }
        if tool {
            self.count = 0;
            self.said = None;
            return None;
        }
        let same = match (text, self.said) {
            (None, _) => true,
            (Some(t), Some(said)) => t == said,
            (Some(_), None) => self.count == 0,
        };
        if same && self.count > 0 {
            self.count += 1;
        } else {
            self.count = 1;
            self.first_seq = seq;
        }
        if text.is_some() {
            self.said = text;
        }
        Some(Reached {
            rule: StuckRule::Monologue,
            count: self.count,
            first_seq: self.first_seq,
        })
    }
}
