//! The project's checks after the task: `✓ test 12.3s`, or `✗ lint (exit 1) 0.8s` and the last
//! lines of its output; and the attempts to repair what failed.

use super::Lines;
use crate::event::{CheckResult, EventKind, RepairStop};
use crate::render::format::{duration_ms, money, plural};

/// How many of a failed check's last lines are shown (the log has them all).
const FAILURE_LINES: usize = 5;

/// The lines of a check event; a failure needs attention.
pub(super) fn show(l: &mut Lines<'_>, kind: &EventKind) {
    match kind {
        EventKind::CheckStarted { command, .. } if l.verbose => {
            l.info(l.s.dim.apply_to(format!("  $ {command}")));
        }
        EventKind::CheckFinished(c) => finished(l, c),
        EventKind::RepairStarted {
            attempt,
            failing,
            budget_usd,
        } => {
            let budget = budget_usd
                .map(|b| format!(" (up to {})", money(b)))
                .unwrap_or_default();
            l.info(format!(
                "{} repair attempt {attempt}{budget}: fixing {}",
                l.s.accent.apply_to("↻"),
                failing.join(", ")
            ));
        }
        EventKind::RepairFinished { attempts, stopped } => {
            let attempts = plural(u64::from(*attempts), "attempt");
            if *stopped == RepairStop::Passed {
                l.info(format!("{} repaired in {attempts}", l.s.ok.apply_to("✓")));
            } else {
                l.alert(l.s.error.apply_to(format!(
                    "✗ repair stopped after {attempts}: {}",
                    stopped.describe()
                )));
            }
        }
        _ => {}
    }
}

fn finished(l: &mut Lines<'_>, c: &CheckResult) {
    let s = l.s;
    let took = s.dim.apply_to(duration_ms(c.duration_ms));
    let name = s.bold.apply_to(&c.name);
    if c.passed {
        l.info(format!("{} {name} {took}", s.ok.apply_to("✓")));
        return;
    }
    let why = match (&c.error, c.timed_out) {
        (Some(error), _) => error.clone(),
        (None, true) => "timed out".to_owned(),
        (None, false) => c.exit.to_string(),
    };
    l.alert(format!(
        "{} {name} ({}) {took}",
        s.error.apply_to("✗"),
        s.error.apply_to(why)
    ));
    let shown = c.tail.len().saturating_sub(FAILURE_LINES);
    for line in &c.tail[shown..] {
        l.alert(s.dim.apply_to(format!("  │ {line}")));
    }
    l.alert(s.dim.apply_to(format!("  log: {}", c.log)));
}
