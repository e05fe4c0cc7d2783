//! What the model calls cost: each finished step and the agent's own result, with their tokens
//! and cost (both with `-v`), and always a warning for a cost or token count that could not be
//! used.

use super::Lines;
use crate::event::{AgentResult, CostSource, EventKind, StepUsage};
use crate::format::{money, thousands};

/// The lines of a step or result event.
pub(super) fn show(l: &mut Lines<'_>, kind: &EventKind) {
    match kind {
        EventKind::StepFinished(step) if l.verbose => step_finished(l, step),
        EventKind::AgentResult(r) if l.verbose => agent_result(l, r),
        _ => {}
    }
    crate::warning::of(kind, l.totals.steps_finished, |w| {
        l.alert(l.s.warn.apply_to(format!("⚠ {w}")));
    });
}

/// `  step 1 tool-calls · 2,550 tokens · $0.0051`.
fn step_finished(l: &mut Lines<'_>, step: &StepUsage) {
    let cost = step
        .usable_cost()
        .map(money)
        .unwrap_or_else(|| "cost unknown".into());
    let text = format!(
        "  step {} {} · {} tokens · {cost}",
        l.totals.steps_finished,
        step.reason,
        thousands(step.tokens.total())
    );
    l.info(l.s.dim.apply_to(text));
}

/// `  agent result: done · 5,100 tokens · $0.0123 (estimated)`.
fn agent_result(l: &mut Lines<'_>, r: &AgentResult) {
    let tokens = r
        .tokens
        .map(|t| {
            let at_least = if r.tokens_partial { "at least " } else { "" };
            format!(" · {at_least}{} tokens", thousands(t.total()))
        })
        .unwrap_or_default();
    let cost = match (r.usable_cost(), r.cost_source) {
        (Some(c), Some(CostSource::Estimated)) => format!(" · {} (estimated)", money(c)),
        (Some(c), _) => format!(" · {}", money(c)),
        (None, _) => " · cost unknown".to_owned(),
    };
    let verdict = if r.ok { "done" } else { "failed" };
    l.info(
        l.s.dim
            .apply_to(format!("  agent result: {verdict}{tokens}{cost}")),
    );
}
