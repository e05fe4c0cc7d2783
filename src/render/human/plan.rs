//! Planning: the proposed plan, rendered as markdown, and what was decided about it.

use super::Lines;
use crate::event::{DecidedBy, Decision, EventKind, PlanDecision};
use crate::foreign::Foreign;
use crate::format::first_line_and_more;
use crate::render::markdown;

/// The lines of a plan event; both always need attention.
pub(super) fn show(l: &mut Lines<'_>, kind: &EventKind) {
    match kind {
        EventKind::PlanProposed { revision, text } => proposed(l, *revision, text),
        EventKind::PlanDecided(d) => decided(l, d),
        _ => {}
    }
}

/// `▶ the plan · planning: 5,215 tokens · $0.0084` (or which revision, and what planning
/// has taken so far), then the plan itself, fitted to the terminal.
fn proposed(l: &mut Lines<'_>, revision: u32, text: &str) {
    let s = l.s;
    let title = match revision {
        0 => "the plan".to_owned(),
        n => format!("the plan, revision {n}"),
    };
    let spent = super::lifecycle::spent(l.totals);
    l.alert(format!(
        "{} {} {}",
        s.accent.apply_to("▶"),
        s.bold.apply_to(title),
        s.dim.apply_to(format!("· planning: {spent}"))
    ));
    let width = if l.width == usize::MAX { 100 } else { l.width };
    l.alert(markdown::render(Foreign::new(text), s.color, width));
}

/// `✓ executing the plan`, `↻ revising the plan: <feedback>`, and so on.
fn decided(l: &mut Lines<'_>, d: &PlanDecision) {
    let s = l.s;
    let who = match d.by {
        DecidedBy::Person => "",
        DecidedBy::Auto => " (automatically)",
    };
    let text = match d.decision {
        Decision::Execute => format!("{} executing the plan{who}", s.ok.apply_to("✓")),
        Decision::Revise => format!(
            "{} revising the plan: {}",
            s.accent.apply_to("↻"),
            first_line_and_more(d.feedback.as_deref().unwrap_or_default())
        ),
        Decision::Abort => format!(
            "{} plan not approved{who}; nothing will be executed",
            s.error.apply_to("✗")
        ),
        Decision::Stop => format!("{} stopping at the plan (--plan-only)", s.ok.apply_to("✓")),
    };
    l.alert(text);
}
