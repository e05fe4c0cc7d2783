//! A flood of refusals told in a few lines: the first few refusals of each tool are shown (with
//! the request that led to each), the rest only counted, and one line says how many more there
//! were once something else happens or the turn ends. Every one is still in the log and the
//! receipt. A request a person answers at the terminal is always shown: it is their question.

use std::collections::{BTreeMap, BTreeSet};

use super::{Fold, Line};
use crate::event::{EventKind, PermissionAnswerer, ToolStatus};
use crate::format::thousands;
use crate::render::Styles;

/// How many refusals of one tool a flood shows before they are only counted.
pub(super) const SHOWN_PER_TOOL: u64 = 3;
/// How many tools the summary line names; the rest are counted together.
const NAMED: usize = 5;

/// The refusals since the last other thing shown.
#[derive(Debug, Default)]
pub(super) struct Refusals {
    /// This flood's tellings of refusals, by tool: `permission.denied` notices, and calls ended
    /// denied. An agent tells a refusal once or twice (each way at most once, in either order,
    /// even interleaved with the next), so the refusals are the larger count.
    seen: BTreeMap<String, (u64, u64)>,
    /// The tools whose last refusal was a person's (or their silence): their next request is
    /// the question a person answers, always shown.
    asked_person: BTreeSet<String>,
}

/// The tool a line of a refusal is about: a denied call, a `permission.denied`, or a request
/// (which leads to a refusal, or to an answer that ends the flood).
fn refused_tool(kind: &EventKind) -> Option<&str> {
    match kind {
        EventKind::ToolCompleted(t) if t.status == ToolStatus::Denied => Some(&t.name),
        EventKind::PermissionDenied { tool, .. }
        | EventKind::PermissionRequested { tool, .. }
        | EventKind::PermissionAnswered {
            tool,
            allowed: false,
            ..
        } => Some(tool),
        _ => None,
    }
}

impl Refusals {
    /// The lines of `kind` as shown within a flood: a refusal beyond the first few of its tool
    /// (and the request before it) shows nothing and is counted.
    pub(super) fn hold(&mut self, kind: &EventKind, lines: &mut Vec<Line>) {
        let Some(tool) = refused_tool(kind) else {
            return;
        };
        let told = self.seen.entry(tool.to_owned()).or_default();
        match kind {
            EventKind::PermissionDenied { .. } => told.0 += 1,
            EventKind::ToolCompleted(_) => told.1 += 1,
            EventKind::PermissionAnswered { by, .. } => {
                if *by == PermissionAnswerer::Policy {
                    self.asked_person.remove(tool);
                } else {
                    self.asked_person.insert(tool.to_owned());
                }
                return;
            }
            _ => {}
        }
        let refusals = told.0.max(told.1);
        let hidden = match kind {
            // The question of a refusal to come: hidden once the flood is past its first few,
            // unless a person answers it.
            EventKind::PermissionRequested { .. } => {
                refusals >= SHOWN_PER_TOOL && !self.asked_person.contains(tool)
            }
            _ => refusals > SHOWN_PER_TOOL,
        };
        if hidden {
            lines.clear();
        }
    }

    /// The line that ends the flood, when `kind` ends it: it shows something other than a
    /// refusal (`shows`), or it ends the turn or the run.
    pub(super) fn end(&mut self, kind: &EventKind, shows: bool, s: &Styles) -> Option<Line> {
        let ends = matches!(
            kind,
            EventKind::TurnCompleted { .. }
                | EventKind::TurnFailed { .. }
                | EventKind::RunFinished { .. }
        ) || (shows && refused_tool(kind).is_none());
        if !ends {
            return None;
        }
        self.summary(s)
    }

    /// The line that says how many refusals were not shown, when there are any; the flood is
    /// over.
    pub(super) fn summary(&mut self, s: &Styles) -> Option<Line> {
        self.asked_person.clear();
        let held: Vec<(String, u64)> = std::mem::take(&mut self.seen)
            .into_iter()
            .map(|(tool, (notices, calls))| {
                (tool, notices.max(calls).saturating_sub(SHOWN_PER_TOOL))
            })
            .filter(|(_, n)| *n > 0)
            .collect();
        let total: u64 = held.iter().map(|(_, n)| n).sum();
        if total == 0 {
            return None;
        }
        let mut tools = held;
        tools.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let mut named: Vec<String> = tools
            .iter()
            .take(NAMED)
            .map(|(tool, n)| format!("{tool} {}", thousands(*n)))
            .collect();
        let others: u64 = tools.iter().skip(NAMED).map(|(_, n)| n).sum();
        if others > 0 {
            named.push(format!("other tools {}", thousands(others)));
        }
        let which = if tools.len() == 1 {
            tools[0].0.clone()
        } else {
            named.join(" · ")
        };
        Some(Line {
            attention: true,
            fold: Fold::Wrap,
            text: format!(
                "{} {}",
                s.warn.apply_to("⊘"),
                s.warn
                    .apply_to(format!("… and {} more refused ({which})", thousands(total)))
            ),
        })
    }
}
