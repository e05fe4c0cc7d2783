//! Running totals folded from the event stream: steps, tokens, cost, tool calls, errors.
//!
//! Every consumer that needs totals (the status line, the receipt, the supervisor's budget check
//! and watchdog diagnostic) folds the same events through this one type, so they always agree.

use std::collections::{BTreeMap, VecDeque};

use serde::{Deserialize, Serialize};

use crate::event::{
    CostSource, EventKind, ProviderError, Tokens, ToolStatus, Turn, TurnKind, UnparsedReason,
};

/// How many stderr lines are kept for diagnostics.
const STDERR_TAIL: usize = 10;
/// How many unparsed lines and errors are kept as examples.
const KEEP_EXAMPLES: usize = 20;

/// Tool calls of one tool name.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolTally {
    pub calls: u32,
    pub errors: u32,
    pub denied: u32,
}

/// Totals of one turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TurnTotals {
    pub index: u32,
    pub kind: TurnKind,
    pub steps: u32,
    pub tool_calls: u32,
    pub tokens: Tokens,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Denial {
    pub tool: String,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UnparsedSample {
    pub reason: UnparsedReason,
    pub bytes: u64,
    pub head: String,
}

/// Totals so far. Cheap to update; updated once per event.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    pub session_id: Option<String>,
    pub steps_started: u32,
    pub steps_finished: u32,
    /// Whether a step has started and not finished.
    pub step_open: bool,
    pub last_finish_reason: Option<String>,
    pub tokens: Tokens,
    /// Sum of the known step costs.
    pub cost_usd: f64,
    /// Steps that finished without a known cost.
    pub steps_without_cost: u32,
    pub cost_source: Option<CostSource>,
    pub tool_calls: u32,
    pub tools: BTreeMap<String, ToolTally>,
    pub subagents: u32,
    pub permission_denials: Vec<Denial>,
    pub provider_errors: Vec<ProviderError>,
    pub agent_errors: Vec<String>,
    pub unparsed_lines: u64,
    pub unparsed_samples: Vec<UnparsedSample>,
    pub stderr_lines: u64,
    pub stderr_tail: VecDeque<String>,
    pub last_agent_event: Option<&'static str>,
    pub last_text: Option<String>,
    pub turns: Vec<TurnTotals>,
}

impl RunStats {
    /// Folds one event into the totals.
    pub fn observe(&mut self, turn: Turn, kind: &EventKind) {
        if kind.is_from_agent() {
            self.last_agent_event = Some(kind.type_name());
        }
        match kind {
            EventKind::TurnStarted { .. } => self.turns.push(TurnTotals {
                index: turn.index,
                kind: turn.kind,
                steps: 0,
                tool_calls: 0,
                tokens: Tokens::default(),
                cost_usd: None,
            }),
            EventKind::SessionStarted { session_id } => self.session_id = Some(session_id.clone()),
            EventKind::StepStarted { .. } => {
                self.steps_started += 1;
                self.step_open = true;
            }
            EventKind::StepFinished(usage) => {
                self.steps_finished += 1;
                self.step_open = false;
                self.last_finish_reason = Some(usage.reason.clone());
                self.tokens.add(&usage.tokens);
                match usage.cost_usd {
                    Some(cost) => {
                        self.cost_usd += cost;
                        // One estimated step makes the whole total an estimate.
                        if self.cost_source != Some(CostSource::Estimated) {
                            self.cost_source = usage.cost_source;
                        }
                    }
                    None => self.steps_without_cost += 1,
                }
                if let Some(t) = self.turn_mut(turn) {
                    t.steps += 1;
                    t.tokens.add(&usage.tokens);
                    if let Some(cost) = usage.cost_usd {
                        *t.cost_usd.get_or_insert(0.0) += cost;
                    }
                }
            }
            EventKind::Text { text } => self.last_text = Some(text.clone()),
            EventKind::ToolCompleted(end) => {
                self.tool_calls += 1;
                let tally = self.tools.entry(end.name.clone()).or_default();
                tally.calls += 1;
                match end.status {
                    ToolStatus::Ok => {}
                    ToolStatus::Error => tally.errors += 1,
                    ToolStatus::Denied => tally.denied += 1,
                }
                if let Some(t) = self.turn_mut(turn) {
                    t.tool_calls += 1;
                }
            }
            EventKind::SubagentStarted { .. } => self.subagents += 1,
            EventKind::PermissionDenied { tool, detail } => self.permission_denials.push(Denial {
                tool: tool.clone(),
                detail: detail.clone(),
            }),
            EventKind::ProviderError(err) => push_bounded(&mut self.provider_errors, err.clone()),
            EventKind::AgentError { name, message } => {
                push_bounded(&mut self.agent_errors, format!("{name}: {message}"));
            }
            EventKind::Unparsed(u) => {
                self.unparsed_lines += 1;
                push_bounded(
                    &mut self.unparsed_samples,
                    UnparsedSample {
                        reason: u.reason,
                        bytes: u.bytes,
                        head: u.head.clone(),
                    },
                );
            }
            EventKind::Stderr { line } => {
                self.stderr_lines += 1;
                if self.stderr_tail.len() == STDERR_TAIL {
                    self.stderr_tail.pop_front();
                }
                self.stderr_tail.push_back(line.clone());
            }
            _ => {}
        }
    }

    /// The total cost, unless some step's cost is unknown (then the total is unknown, not low).
    pub fn cost(&self) -> Option<f64> {
        (self.steps_finished > 0 && self.steps_without_cost == 0).then_some(self.cost_usd)
    }

    /// The cost known so far, for budget checks: a lower bound even when some steps are unknown.
    pub fn known_cost(&self) -> f64 {
        self.cost_usd
    }

    fn turn_mut(&mut self, turn: Turn) -> Option<&mut TurnTotals> {
        self.turns.iter_mut().rev().find(|t| t.index == turn.index)
    }
}

fn push_bounded<T>(v: &mut Vec<T>, item: T) {
    if v.len() < KEEP_EXAMPLES {
        v.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{StepUsage, ToolEnd};

    fn step(cost: Option<f64>, input: u64) -> EventKind {
        EventKind::StepFinished(StepUsage {
            id: None,
            reason: "stop".into(),
            tokens: Tokens {
                input,
                output: 1,
                ..Tokens::default()
            },
            cost_usd: cost,
            cost_source: cost.map(|_| CostSource::Reported),
        })
    }

    #[test]
    fn an_unknown_step_cost_makes_the_total_unknown_but_keeps_a_lower_bound() {
        let mut s = RunStats::default();
        s.observe(Turn::FIRST, &step(Some(0.5), 10));
        assert_eq!(s.cost(), Some(0.5));
        s.observe(Turn::FIRST, &step(None, 5));
        assert_eq!(s.cost(), None);
        assert!((s.known_cost() - 0.5).abs() < 1e-12);
        assert_eq!(s.tokens.input, 15);
    }

    #[test]
    fn tool_tallies_count_errors_and_denials_per_name() {
        let mut s = RunStats::default();
        for status in [ToolStatus::Ok, ToolStatus::Error, ToolStatus::Denied] {
            s.observe(
                Turn::FIRST,
                &EventKind::ToolCompleted(ToolEnd {
                    call_id: "c".into(),
                    name: "bash".into(),
                    input: "ls".into(),
                    status,
                    error: None,
                    output_bytes: None,
                    duration_ms: None,
                }),
            );
        }
        assert_eq!(
            s.tools["bash"],
            ToolTally {
                calls: 3,
                errors: 1,
                denied: 1
            }
        );
        assert_eq!(s.tool_calls, 3);
    }
}
