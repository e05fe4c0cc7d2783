//! What the run produced, told just before its end: `± 3 files changed (+42 −7) · 1 commit`,
//! the commits, and the run's summary.

use super::Lines;
use crate::event::{Changes, EventKind};
use crate::format::{plural, thousands};

/// How many of the run's commits are listed.
const SHOWN_COMMITS: usize = 5;

/// The lines of a `changes` or `summary` event.
pub(super) fn show(l: &mut Lines<'_>, kind: &EventKind) {
    match kind {
        EventKind::Changes(c) => changes(l, c),
        EventKind::Summary { text, .. } => {
            l.info(format!("{} {text}", l.s.dim.apply_to("summary:")));
        }
        _ => {}
    }
}

fn changes(l: &mut Lines<'_>, c: &Changes) {
    let s = l.s;
    if c.files_changed == 0 && c.commits_total == 0 {
        l.info(s.dim.apply_to("± the repository is as the run found it"));
        return;
    }
    let mut line = format!(
        "{} {} changed ({}{} {}{})",
        s.accent.apply_to("±"),
        plural(u64::from(c.files_changed), "file"),
        s.ok.apply_to("+"),
        s.ok.apply_to(thousands(c.insertions)),
        s.error.apply_to("−"),
        s.error.apply_to(thousands(c.deletions)),
    );
    if c.commits_total > 0 {
        line.push_str(&format!(
            " · {}",
            plural(u64::from(c.commits_total), "commit")
        ));
    }
    l.info(line);
    for commit in c.commits.iter().take(SHOWN_COMMITS) {
        let short = &commit.id[..commit.id.len().min(7)];
        l.info(s.dim.apply_to(format!("  {short} {}", commit.subject)));
    }
}
