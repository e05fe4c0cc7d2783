//! What the run produced, told just before its end: `± 3 files changed (+42 −7) · 1 commit`,
//! the commits, and the run's summary.

use super::Lines;
use crate::event::{Changes, EventKind};
use crate::format::{changes as changes_line, plural, thousands};

/// How many of the run's commits are listed.
const SHOWN_COMMITS: usize = 5;

/// The lines of a `changes` or `summary` event.
pub(super) fn show(l: &mut Lines<'_>, kind: &EventKind) {
    match kind {
        EventKind::Changes(c) => changes(l, c),
        EventKind::Summary { text, verdict, .. } => {
            // How a run that did not complete ended is said where it happened, and on its last
            // line: only what follows it (the agent's summary, when asked) is news here.
            let text = match verdict {
                Some(verdict) => text.strip_prefix(verdict.as_str()).unwrap_or(text).trim(),
                None => text.as_str(),
            };
            if !text.is_empty() {
                l.info(format!("{} {text}", l.s.dim.apply_to("summary:")));
            }
        }
        _ => {}
    }
}

/// Whether a summary says word for word what the agent's last text, shown already, said
/// (list markers, headings and code fences aside, as a summary is made of it).
pub(super) fn repeats(summary: &str, shown: &str) -> bool {
    let words = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.starts_with('#') && !l.starts_with("```"))
            .flat_map(str::split_whitespace)
            .filter(|w| !w.chars().all(|c| matches!(c, '-' | '*' | '>' | '`')))
            .map(str::to_owned)
            .collect()
    };
    let said = words(summary);
    !said.is_empty() && said == words(shown)
}

fn changes(l: &mut Lines<'_>, c: &Changes) {
    let s = l.s;
    if c.files_changed == 0 && c.commits_total == 0 {
        l.info(s.dim.apply_to(format!("± {}", changes_line(c))));
        return;
    }
    // A count of nought is no news: only lines added or removed are coloured.
    let count = |n: u64, style: &crate::term::style::Style, sign: &str| {
        if n == 0 {
            format!("{sign}0")
        } else {
            format!("{}{}", style.apply_to(sign), style.apply_to(thousands(n)))
        }
    };
    let mut line = format!(
        "{} {} changed ({} {})",
        s.accent.apply_to("±"),
        plural(u64::from(c.files_changed), "file"),
        count(c.insertions, &s.ok, "+"),
        count(c.deletions, &s.error, "−"),
    );
    if c.commits_total > 0 {
        line.push_str(&format!(
            " · {}",
            plural(u64::from(c.commits_total), "commit")
        ));
    }
    l.info(line);
    for commit in c.commits.iter().take(SHOWN_COMMITS) {
        let short = crate::format::first_chars(&commit.id, 7);
        l.info(s.dim.apply_to(format!("  {short} {}", commit.subject)));
    }
}
