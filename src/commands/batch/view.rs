//! The batch's view, as cargo-nextest shows its tests: a line for each task that ended
//! (`DONE [3m12s] $0.42 fix-login +41 −7`), and at a terminal a row for each running task and a
//! footer redrawn in place; plain lines elsewhere. Every text passes the terminal writer.

use std::time::Duration;

use super::record::{BatchRecord, TaskOutcome, TaskRecord};
use crate::format;
use crate::term::out::{Control, Terminal};
use crate::term::style::Styles;

/// Foreign text (a tool's name, an agent's message) on one row: its newlines and escape
/// sequences made visible before the row is measured, so that it neither adds a row the redraw
/// does not know of nor hides characters the width did not count.
fn escape_line(text: &str) -> std::borrow::Cow<'_, str> {
    crate::foreign::term::escape_line(text)
}

/// The narrowest a row is laid out for.
const MIN_WIDTH: usize = 40;

/// A running task, as its row shows it.
#[derive(Debug, Clone)]
pub(super) struct Row<'a> {
    pub name: &'a str,
    pub agent: &'a str,
    /// What it is doing: `setup`, `starting`, or the tool it runs and for how long.
    pub doing: String,
    pub elapsed: Duration,
    /// `None`: unknown so far.
    pub cost: Option<f64>,
    pub known_cost: f64,
}

/// The footer's numbers.
#[derive(Debug, Clone, Copy)]
pub(super) struct Footer {
    pub running: usize,
    pub queued: usize,
    pub done: usize,
    pub spent: f64,
    /// Some task's cost is not known: what is shown is a floor.
    pub spent_incomplete: bool,
    pub budget: Option<f64>,
}

/// The word of an outcome, as wide as the others.
fn label(outcome: TaskOutcome) -> &'static str {
    match outcome {
        TaskOutcome::Completed => "DONE",
        TaskOutcome::Hung => "HUNG",
        TaskOutcome::BudgetExceeded => "OVER",
        TaskOutcome::Stuck => "STUCK",
        TaskOutcome::TimedOut => "TIME",
        TaskOutcome::Interrupted => "INTR",
        TaskOutcome::NotStarted => "SKIP",
        _ => "FAIL",
    }
}

/// `0.8s` under a minute, then `3m12s`.
fn took(d: Duration) -> String {
    if d < Duration::from_secs(60) {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format::running_for(d)
    }
}

/// `$0.42`, or `unknown` (never `$0.0000` for a cost not known).
fn cost(usd: Option<f64>, known: f64) -> String {
    format::money_of(usd, known)
}

/// The line of a task that ended.
pub(super) fn finished_line(task: &TaskRecord, styles: &Styles) -> String {
    let word = label(task.outcome);
    let style = match task.outcome {
        TaskOutcome::Completed => &styles.ok,
        TaskOutcome::NotStarted | TaskOutcome::Interrupted => &styles.warn,
        _ => &styles.error,
    };
    let took = took(Duration::from_millis(task.duration_ms));
    let mut line = format!(
        "{} [{took:>6}] {:>7} {}",
        style.apply_to(format!("{word:>5}")),
        cost(task.cost_usd, task.known_cost_usd),
        escape_line(&task.task)
    );
    if task.commit.is_some() {
        line.push_str(&format!(
            " +{} −{}",
            task.diff.insertions, task.diff.deletions
        ));
    }
    if task.outcome != TaskOutcome::Completed && !task.message.is_empty() {
        line.push_str(&format!(
            " {}",
            styles.dim.apply_to(format!(
                "· {}",
                escape_line(format::first_line(&task.message))
            ))
        ));
    }
    line
}

/// The batch's verdict, as its run ends it and `status BATCH` repeats it:
/// `Summary [  12s] 3 tasks: 2 completed, 1 agent error · $0.42 of $2.00`.
pub(super) fn summary_line(record: &BatchRecord, styles: &Styles) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for t in &record.tasks {
        let name = t.outcome.as_str().replace('_', " ");
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, c)) => *c += 1,
            None => counts.push((name, 1)),
        }
    }
    let counts: Vec<String> = counts.iter().map(|(n, c)| format!("{c} {n}")).collect();
    let cost = format::money_of(record.cost_usd, record.known_cost_usd);
    let budget = record
        .budget_usd
        .map(|b| format!(" of {}", format::money(b)))
        .unwrap_or_default();
    let took = format::running_for(Duration::from_millis(record.duration_ms));
    format!(
        "{} [{took:>6}] {}: {} · {cost}{budget}",
        styles.bold.apply_to("Summary"),
        format::plural(record.tasks.len() as u64, "task"),
        counts.join(", ")
    )
}

/// The line of a task that is running: `START fix-login (claude)`, as the batch said it.
pub(super) fn started_line(task: &TaskRecord, styles: &Styles) -> String {
    format!(
        "{} {} ({})",
        styles.accent.apply_to("START"),
        escape_line(&task.task),
        escape_line(&task.agent)
    )
}

/// The row of a running task.
pub(super) fn row(row: &Row<'_>, styles: &Styles) -> String {
    let took = took(row.elapsed);
    format!(
        "{} [{took:>6}] {:>7} {} {}",
        styles.accent.apply_to("  RUN"),
        cost(row.cost, row.known_cost),
        row.name,
        styles
            .dim
            .apply_to(format!("{} · {}", row.agent, escape_line(&row.doing))),
    )
}

/// `3 running · 5 queued · 12 done · $1.20 of $5.00`.
pub(super) fn footer(f: &Footer) -> String {
    let spent = if f.spent_incomplete {
        format!("at least {}", format::money(f.spent))
    } else {
        format::money(f.spent)
    };
    let money = match f.budget {
        Some(budget) => format!("{spent} of {}", format::money(budget)),
        None => format!("{spent} spent"),
    };
    format!(
        "{} running · {} queued · {} done · {money}",
        f.running, f.queued, f.done
    )
}

/// Where the view goes and how.
pub(super) struct View {
    term: Terminal,
    pub styles: Styles,
    live: bool,
    /// Rows drawn below the last line, to be redrawn.
    drawn: u16,
    /// The rows and footer last drawn, drawn again under a line that stays, in the same write,
    /// so that the footer never blinks out.
    last: Option<(Vec<String>, String)>,
}

impl View {
    /// The human view on stderr: live at a terminal, plain lines elsewhere.
    pub(super) fn new(live: bool, color: bool) -> Self {
        Self {
            term: crate::term::out::stderr(),
            styles: Styles::new(color),
            live,
            drawn: 0,
            last: None,
        }
    }

    /// Whether rows are redrawn in place.
    pub(super) fn is_live(&self) -> bool {
        self.live
    }

    /// A line that stays (above the rows at a terminal, drawn again below it).
    pub(super) fn line(&mut self, text: &str) {
        self.clear_rows();
        self.stay(text);
        if let Some((rows, footer)) = self.last.take() {
            self.draw(&rows, &footer);
            self.last = Some((rows, footer));
        }
        let _ = self.term.flush();
    }

    fn stay(&mut self, text: &str) {
        // Broken between words to the width when one is known (a terminal's, `--width`,
        // `COLUMNS`), by the terminal writer; whole otherwise, as a log keeps it.
        self.term.line(text);
    }

    /// Redraws the rows of the running tasks and the footer below `lines`, in one write; at a
    /// terminal only (elsewhere the caller says each line with [`View::line`]).
    pub(super) fn rows(&mut self, lines: &[String], rows: Vec<String>, footer: String) {
        if !self.live {
            return;
        }
        self.clear_rows();
        for text in lines {
            self.stay(text);
        }
        self.draw(&rows, &footer);
        self.last = Some((rows, footer));
        let _ = self.term.flush();
    }

    fn draw(&mut self, rows: &[String], footer: &str) {
        let width = crate::term::width().unwrap_or(80).max(MIN_WIDTH);
        for row in rows.iter().map(String::as_str).chain([footer]) {
            // One column short of the edge, so that no terminal wraps the row.
            self.term.line(&crate::term::fit(row, width - 1));
        }
        self.drawn = u16::try_from(rows.len() + 1).unwrap_or(u16::MAX);
    }

    fn clear_rows(&mut self) {
        if self.drawn > 0 {
            self.term.control(Control::Up(self.drawn));
            self.term.control(Control::Erase);
            self.drawn = 0;
        }
    }

    /// Takes the rows away for good.
    pub(super) fn done(&mut self) {
        self.last = None;
        self.clear_rows();
        let _ = self.term.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::batch::worktree::DiffStat;

    fn record(outcome: TaskOutcome, cost: Option<f64>, message: &str) -> TaskRecord {
        TaskRecord {
            task: "fix-login".into(),
            task_id: "fix-login".into(),
            agent: "claude".into(),
            run_id: Some("r".into()),
            run_dir: None,
            outcome,
            message: message.into(),
            duration_ms: 192_000,
            cost_usd: cost,
            known_cost_usd: cost.unwrap_or(0.0),
            branch: Some("runbook/b/fix-login".into()),
            commit: Some("abc".into()),
            worktree: None,
            diff: DiffStat {
                files: 2,
                insertions: 41,
                deletions: 7,
            },
        }
    }

    #[test]
    fn a_finished_task_is_one_line_and_an_unknown_cost_is_not_zero() {
        let plain = Styles::plain();
        assert_eq!(
            finished_line(&record(TaskOutcome::Completed, Some(0.42), ""), &plain),
            " DONE [ 3m12s] $0.4200 fix-login +41 −7"
        );
        let hung = finished_line(&record(TaskOutcome::Hung, None, "no output for 3m"), &plain);
        assert!(
            hung.starts_with(" HUNG [ 3m12s] unknown fix-login"),
            "{hung}"
        );
        assert!(hung.ends_with("· no output for 3m"), "{hung}");
        assert!(!hung.contains("$0.00"));
        let over = finished_line(&record(TaskOutcome::BudgetExceeded, Some(1.5), "x"), &plain);
        assert!(over.starts_with(" OVER"), "{over}");
    }

    #[test]
    fn the_footer_says_what_is_spent_of_the_budget() {
        let f = Footer {
            running: 3,
            queued: 5,
            done: 12,
            spent: 1.2,
            spent_incomplete: false,
            budget: Some(5.0),
        };
        assert_eq!(
            footer(&f),
            "3 running · 5 queued · 12 done · $1.20 of $5.00"
        );
        let f = Footer {
            budget: None,
            spent_incomplete: true,
            ..f
        };
        assert_eq!(
            footer(&f),
            "3 running · 5 queued · 12 done · at least $1.20 spent"
        );
    }
}
