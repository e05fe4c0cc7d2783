//! Exit codes, and the few errors that pick one.

use std::process::ExitCode;

use crate::event::Outcome;

/// runbook's exit codes. Documented in the README, `runbook --help` and `man runbook`; scripts rely on them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// The agent completed its work.
    Completed = 0,
    /// The agent failed: it reported an error, exited non-zero, died, or stopped short.
    AgentFailed = 1,
    /// The command line or configuration was wrong; nothing was started.
    Usage = 2,
    /// The inactivity watchdog stopped a hung agent.
    Hung = 3,
    /// `--max-cost` was crossed.
    Budget = 4,
    /// `--timeout` was reached.
    Timeout = 5,
    /// runbook itself failed: a write to the run directory failed mid-run (`storage_error`), or
    /// the runs directory is not writable.
    Internal = 6,
    /// The run's supervising runbook process died without finishing the run.
    Abandoned = 7,
    /// The plan was not approved (`runbook run --plan`, abort at the prompt).
    Aborted = 8,
    /// The task completed, but a project check failed (`--check`).
    ChecksFailed = 9,
    /// The agent went round in circles and was stopped (`--stuck`).
    Stuck = 10,
    /// The agent's binary was not found.
    AgentNotFound = 127,
    /// Interrupted by Ctrl-C, SIGTERM or SIGHUP.
    Interrupted = 130,
}

impl ExitStatus {
    /// The exit code a run that ended with `outcome` has.
    pub fn from_outcome(outcome: Outcome) -> Self {
        match outcome {
            Outcome::Completed => Self::Completed,
            Outcome::Truncated | Outcome::AgentError | Outcome::Killed => Self::AgentFailed,
            Outcome::Hung => Self::Hung,
            Outcome::BudgetExceeded => Self::Budget,
            Outcome::Stuck => Self::Stuck,
            Outcome::TimedOut => Self::Timeout,
            Outcome::Interrupted => Self::Interrupted,
            Outcome::Running => Self::Completed,
            Outcome::Abandoned => Self::Abandoned,
            Outcome::Aborted => Self::Aborted,
            Outcome::StorageError => Self::Internal,
            Outcome::ChecksFailed => Self::ChecksFailed,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(s: ExitStatus) -> Self {
        ExitCode::from(s as u8)
    }
}

/// Errors that decide the exit code; anything else is [`ExitStatus::Internal`].
#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("{0}")]
    Usage(String),
    #[error("{program} not found: {hint}")]
    AgentNotFound { program: String, hint: String },
}

impl Error {
    pub fn status(&self) -> ExitStatus {
        match self {
            Error::Usage(_) => ExitStatus::Usage,
            Error::AgentNotFound { .. } => ExitStatus::AgentNotFound,
        }
    }
}

/// The exit-code table shown in `runbook --help` and its man page.
pub const EXIT_CODES_HELP: &str = "\
Exit codes:
  0    completed: the agent finished its work
  1    agent failed: it reported an error, exited non-zero, died, or stopped short (truncated)
  2    usage error: bad arguments or configuration, or an untrusted repository file (runbook
       trust); nothing was started
  3    hung: the inactivity watchdog stopped the agent
  4    budget: --max-cost was crossed
  5    timeout: --timeout was reached
  6    runbook error: a write to the run directory failed (storage_error), or it is not writable
  7    abandoned: the supervising runbook process died (runbook status --live)
  8    aborted: the plan was not approved (--plan)
  9    checks failed: the task completed, but a --check did not pass
  10   stuck: the agent went round in circles and was stopped (--stuck)
  127  agent not found
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP)";

/// The exit codes of `runbook batch`.
pub(crate) const BATCH_EXIT_CODES: &str = "\
Exit codes:
  0    every task completed
  1    a task did not complete (or was never started: --max-fail, --max-cost)
  2    usage error: bad arguments, task file or configuration, or not in a git repository;
       nothing was started
  6    runbook error: the batch's record could not be written
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP)
With --task-index or --task-index-from-env: the exit code of the task's run (`runbook
--help`); final for a scheduler: 2, 4, 5, 8, 9, 10, 127; worth another try: 1, 3, 6, 7, 130.";
