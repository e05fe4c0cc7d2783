//! `runbook status [--live] BATCH`: a batch followed from another terminal through its record,
//! a line per task as it starts and as it ends, until the batch ends (or its runbook is gone),
//! then the batch's own summary; or with `--json` its record.

use std::collections::HashSet;
use std::path::Path;
use std::time::Duration;

use super::record::{self, BatchRecord};
use super::view::{self, View};
use crate::exit::ExitStatus;

/// How often the record is read again.
const POLL: Duration = Duration::from_millis(300);

/// Shows the batch in `dir`: each task that ended, then (with `live`) each one as it ends, and
/// the batch's exit status once it has ended.
pub(crate) async fn follow(dir: &Path, live: bool, color: bool) -> anyhow::Result<ExitStatus> {
    let mut shown: HashSet<String> = HashSet::new();
    let mut view = View::new(false, color);
    let mut record = record::load(dir)?;
    // The record is read back: its words shown on their one line.
    let line = crate::foreign::term::escape_line;
    view.line(&format!(
        "batch {}: {} · {}",
        line(&record.batch_id),
        crate::format::plural(record.tasks.len() as u64, "task"),
        line(&record.outcome)
    ));
    let mut started: HashSet<String> = HashSet::new();
    loop {
        for task in &record.tasks {
            if task.outcome == record::TaskOutcome::Running && started.insert(task.task.clone()) {
                let line = view::started_line(task, &view.styles);
                view.line(&line);
            }
            if task.outcome.ended() && shown.insert(task.task.clone()) {
                let line = view::finished_line(task, &view.styles);
                view.line(&line);
            }
        }
        if record.outcome != "running" || !live {
            break;
        }
        if !alive(&record) {
            view.line(
                "abandoned: the batch's runbook is gone (runbook batch clean removes what it left)",
            );
            return Ok(ExitStatus::Abandoned);
        }
        tokio::time::sleep(POLL).await;
        record = record::load(dir)?;
    }
    let summary = view::summary_line(&record, &view.styles);
    view.line(&summary);
    Ok(status_of(&record, live))
}

/// `runbook status [--live] BATCH --json`: the batch's record on stdout (with `live`, once the
/// batch has ended or its runbook is gone), and the exit status `follow` would give.
pub(crate) async fn print_json(dir: &Path, live: bool) -> anyhow::Result<ExitStatus> {
    let mut record = record::load(dir)?;
    let mut status = status_of(&record, live);
    while live && record.outcome == "running" {
        if !alive(&record) {
            status = ExitStatus::Abandoned;
            break;
        }
        tokio::time::sleep(POLL).await;
        record = record::load(dir)?;
        status = status_of(&record, live);
    }
    crate::term::out::print_json(&record, true)?;
    Ok(status)
}

/// The exit status: as `status RUN` does, `status BATCH` exits 0 once it has told how the
/// batch went, whatever that was; with `live`, having followed it to its end, the one
/// `runbook batch` had.
fn status_of(record: &BatchRecord, live: bool) -> ExitStatus {
    match record.outcome.as_str() {
        _ if !live => ExitStatus::Completed,
        "completed" | "running" => ExitStatus::Completed,
        "interrupted" => ExitStatus::Interrupted,
        _ => ExitStatus::AgentFailed,
    }
}

/// Whether the batch's runbook still runs.
fn alive(record: &BatchRecord) -> bool {
    let Some(pid) = record.pid.and_then(|p| i32::try_from(p).ok()) else {
        return true;
    };
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z'))
    })
}
