//! One task of a batch, named by an index a scheduler gives (`--task-index`,
//! `--task-index-from-env`), and the exit code its run decides.

use super::plan::Job;
use super::record::TaskOutcome;
use crate::cli::BatchArgs;
use crate::exit::{Error, ExitStatus};

/// The variables schedulers set to a task's index, read in this order.
pub(crate) const INDEX_VARS: [&str; 3] = [
    "JOB_COMPLETION_INDEX",
    "SLURM_ARRAY_TASK_ID",
    "AWS_BATCH_JOB_ARRAY_INDEX",
];

/// The index the command line asks for, if it asks for one.
pub(super) fn asked(args: &BatchArgs) -> Result<Option<usize>, Error> {
    if let Some(n) = args.task_index {
        return Ok(Some(n));
    }
    let Some(var) = &args.task_index_from_env else {
        return Ok(None);
    };
    let names: Vec<&str> = if var.is_empty() {
        INDEX_VARS.to_vec()
    } else if is_name(var) {
        vec![var.as_str()]
    } else {
        let shown: String = var.chars().take(40).collect();
        return Err(Error::Usage(format!(
            "--task-index-from-env: `{}` is not a variable's name: use letters, digits and `_` (example: MY_INDEX)",
            crate::trust::escape(&shown)
        )));
    };
    let found = names
        .iter()
        .find_map(|name| std::env::var_os(name).map(|v| (*name, v)));
    let Some((name, value)) = found else {
        let which = match names.as_slice() {
            [one] => format!("{one} is not set"),
            all => format!("none of {} is set", all.join(", ")),
        };
        return Err(Error::Usage(format!(
            "--task-index-from-env: {which}: run it as a task of an indexed job, or give --task-index N"
        )));
    };
    let text = value.to_string_lossy();
    if text.trim().is_empty() {
        return Err(Error::Usage(format!(
            "--task-index-from-env: {name} is set but empty, not a task index (0, 1, 2, …)"
        )));
    }
    text.trim().parse::<usize>().map(Some).map_err(|_| {
        let shown: String = text.chars().take(40).collect();
        Error::Usage(format!(
            "--task-index-from-env: {name} is `{}`, not a task index (0, 1, 2, …)",
            crate::trust::escape(&shown)
        ))
    })
}

/// Whether `text` can name an environment variable: a letter or `_`, then letters, digits, `_`.
fn is_name(text: &str) -> bool {
    let mut chars = text.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Only the job at `index`; an index past the end is a usage error.
pub(super) fn pick(mut jobs: Vec<Job>, index: usize, label: &str) -> Result<Vec<Job>, Error> {
    let count = jobs.len();
    if index >= count {
        return Err(Error::Usage(format!(
            "task index {index} is out of range: {label} has {} (indexes 0 to {})",
            crate::format::plural(count as u64, "task"),
            count.saturating_sub(1)
        )));
    }
    Ok(vec![jobs.swap_remove(index)])
}

/// The exit code of a batch of one indexed task: its run's, as `runbook run` would exit, so
/// that a scheduler can tell final outcomes from ones worth trying again.
pub(super) fn exit_status(outcome: TaskOutcome) -> ExitStatus {
    use crate::event::Outcome as O;
    let run = |o| ExitStatus::from_outcome(o);
    match outcome {
        TaskOutcome::Completed => run(O::Completed),
        TaskOutcome::Truncated => run(O::Truncated),
        TaskOutcome::AgentError => run(O::AgentError),
        TaskOutcome::Killed => run(O::Killed),
        TaskOutcome::Hung => run(O::Hung),
        TaskOutcome::BudgetExceeded => run(O::BudgetExceeded),
        TaskOutcome::Stuck => run(O::Stuck),
        TaskOutcome::TimedOut => run(O::TimedOut),
        TaskOutcome::Interrupted | TaskOutcome::NotStarted => ExitStatus::Interrupted,
        TaskOutcome::Aborted => run(O::Aborted),
        TaskOutcome::StorageError => run(O::StorageError),
        TaskOutcome::ChecksFailed => run(O::ChecksFailed),
        TaskOutcome::Abandoned => run(O::Abandoned),
        // A setup command that failed (a network hiccup, often) is worth another try.
        TaskOutcome::SetupFailed => ExitStatus::AgentFailed,
        TaskOutcome::Queued | TaskOutcome::Running | TaskOutcome::Error => ExitStatus::Internal,
    }
}
