//! `runbook report BATCH`: a batch told as one table a reviewer can paste (Markdown, every
//! text from the record through the escaper), or its record as JSON.

use super::record::{BatchRecord, TaskOutcome};
use crate::foreign::Foreign;
use crate::foreign::markdown::Inline;
use crate::format;
use crate::render::document::Document;

/// The batch as Markdown: a line of totals, then a row per task.
pub(crate) fn markdown(record: &BatchRecord) -> String {
    let mut doc = Document::new();
    doc.heading_of(Inline::own("Batch ").then(Foreign::new(&record.batch_id).md_code()));
    let done = record
        .tasks
        .iter()
        .filter(|t| t.outcome == TaskOutcome::Completed)
        .count();
    let cost = format::money_of(record.cost_usd, record.known_cost_usd);
    let budget = record
        .budget_usd
        .map(|b| format!(" of {}", format::money(b)))
        .unwrap_or_default();
    let totals = format!(
        "{done} of {} completed · {cost}{budget} · {} · base ",
        format::plural(record.tasks.len() as u64, "task"),
        format::duration_ms(record.duration_ms),
    );
    let base = format::first_chars(&record.base_commit, 12);
    doc.paragraph(figures(&totals).then(Foreign::new(base).md_code()));
    let rows = record.tasks.iter().map(|t| {
        let changes = if t.commit.is_some() {
            Inline::own("+").then(Inline::made(&format!(
                "{} −{}",
                t.diff.insertions, t.diff.deletions
            )))
        } else {
            Inline::own("none")
        };
        let branch = t
            .branch
            .as_deref()
            .map_or(Inline::own("—"), |b| Foreign::new(b).md_code());
        let outcome = if t.message.is_empty() {
            Inline::made(&t.outcome.as_str())
        } else {
            Inline::made(&t.outcome.as_str())
                .and(": ")
                .then(Foreign::new(format::first_line(&t.message)).md_inline())
        };
        vec![
            Foreign::new(&t.task).md_inline(),
            Foreign::new(&t.agent).md_inline(),
            outcome,
            figures(&format::money_of(t.cost_usd, t.known_cost_usd)),
            Inline::made(&format::duration_ms(t.duration_ms)),
            changes,
            branch,
        ]
    });
    doc.table(
        &[
            "Task", "Agent", "Outcome", "Cost", "Time", "Changes", "Branch",
        ],
        rows,
    );
    doc.finish()
}

/// Runbook's own figures (`$0.42 of $2.00`), their dollar signs as they are: a `$` followed by a
/// digit after a blank or at the start opens no math on GitHub, and the rest is escaped as made
/// text is.
fn figures(text: &str) -> Inline {
    let mut parts = text.split('$');
    let mut out = Inline::made(parts.next().unwrap_or(""));
    for part in parts {
        out = out.and("$").then(Inline::made(part));
    }
    out
}
