//! The batch's record, `batches/<id>/batch.json` (`docs/batch.schema.json`): per task its run,
//! outcome, cost, branch, commit and diff; rewritten as tasks end, whole each time. And the
//! same as JUnit XML for CI (`--junit`).

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use super::worktree::DiffStat;
use crate::event::Outcome;

/// The version of `batch.json`. Bumped on any incompatible change.
pub(crate) const BATCH_SCHEMA_VERSION: u32 = 1;

/// The record's file name in the batch's directory.
pub(crate) const RECORD: &str = "batch.json";

/// How a task of a batch ended (or stands).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TaskOutcome {
    /// Not started yet.
    Queued,
    /// Its worktree is being made or its run goes on.
    Running,
    /// The run completed: the only outcome that counts as done.
    Completed,
    /// The run ended so (see the run outcomes in `docs/receipt.schema.json`).
    Truncated,
    AgentError,
    Killed,
    Hung,
    BudgetExceeded,
    Stuck,
    TimedOut,
    Interrupted,
    Aborted,
    StorageError,
    ChecksFailed,
    Abandoned,
    /// Its worktree could not be made, or its `setup` command failed.
    SetupFailed,
    /// Its run ended without a receipt.
    Error,
    /// It never started: the batch's budget, `--max-fail` or an interrupt held it back.
    NotStarted,
}

impl From<Outcome> for TaskOutcome {
    fn from(o: Outcome) -> Self {
        match o {
            Outcome::Completed => Self::Completed,
            Outcome::Truncated => Self::Truncated,
            Outcome::AgentError => Self::AgentError,
            Outcome::Killed => Self::Killed,
            Outcome::Hung => Self::Hung,
            Outcome::BudgetExceeded => Self::BudgetExceeded,
            Outcome::Stuck => Self::Stuck,
            Outcome::TimedOut => Self::TimedOut,
            Outcome::Interrupted => Self::Interrupted,
            Outcome::Aborted => Self::Aborted,
            Outcome::StorageError => Self::StorageError,
            Outcome::ChecksFailed => Self::ChecksFailed,
            Outcome::Running => Self::Running,
            Outcome::Abandoned => Self::Abandoned,
        }
    }
}

impl TaskOutcome {
    /// Its name in the record.
    pub(crate) fn as_str(self) -> String {
        serde_json::to_value(self)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default()
    }

    /// Whether the task has ended.
    pub(crate) fn ended(self) -> bool {
        !matches!(self, Self::Queued | Self::Running)
    }
}

/// One task of the batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct TaskRecord {
    /// The task's name in the batch: its id, with the agent and copy when there are several.
    pub task: String,
    /// The id of the `[[task]]` it is a copy of.
    pub task_id: String,
    /// The agent it ran.
    pub agent: String,
    /// Its run (`runbook status RUN_ID`), once it started.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    /// Its run directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_dir: Option<String>,
    pub outcome: TaskOutcome,
    /// Why it ended so, in a line (empty when it completed).
    pub message: String,
    pub duration_ms: u64,
    /// What it cost in US dollars; absent when not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    /// The part of its cost that is known.
    pub known_cost_usd: f64,
    /// Its branch, `runbook/<batch>/<task>`, when kept (it has changes, or its worktree was
    /// kept).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// The branch's last commit, when it differs from the base.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// Its worktree, when kept.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worktree: Option<String>,
    /// Files and lines changed from the base commit.
    #[schemars(with = "DiffRecord")]
    pub diff: DiffStat,
}

/// Files and lines changed from the base commit.
#[derive(schemars::JsonSchema)]
#[allow(dead_code, reason = "the schema of `DiffStat`")]
struct DiffRecord {
    files: u32,
    insertions: u64,
    deletions: u64,
}

/// `batch.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct BatchRecord {
    /// Always `batch`.
    #[serde(rename = "type")]
    pub kind: String,
    pub schema_version: u32,
    pub batch_id: String,
    /// The task file (`-`: read from stdin, kept beside this record).
    pub tasks_file: String,
    /// The main checkout.
    pub repo: String,
    /// The commit every task started from.
    pub base_commit: String,
    #[serde(with = "crate::event::rfc3339")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub started_at: SystemTime,
    /// When it ended; absent while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none", with = "opt_time")]
    #[schemars(with = "Option<String>")]
    pub ended_at: Option<SystemTime>,
    pub duration_ms: u64,
    /// `running`, `completed` (every task did), `failed` (some task did not) or `interrupted`.
    pub outcome: String,
    /// The batch's budget (`--max-cost`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget_usd: Option<f64>,
    /// What the tasks cost; absent when some task's cost is not known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_usd: Option<f64>,
    pub known_cost_usd: f64,
    /// The process id of the batch's runbook, to tell a batch that runs from one whose runbook
    /// is gone.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<u32>,
    /// Why tasks were held back and never started, if any were.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub held: Option<String>,
    pub tasks: Vec<TaskRecord>,
}

mod opt_time {
    use std::time::SystemTime;

    use serde::{Deserialize as _, Deserializer, Serializer};

    pub(super) fn serialize<S: Serializer>(
        t: &Option<SystemTime>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match t {
            Some(t) => s.serialize_str(&humantime::format_rfc3339_millis(*t).to_string()),
            None => s.serialize_none(),
        }
    }

    pub(super) fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<SystemTime>, D::Error> {
        let text: Option<String> = Option::deserialize(d)?;
        text.map(|t| humantime::parse_rfc3339_weak(&t).map_err(serde::de::Error::custom))
            .transpose()
    }
}

impl BatchRecord {
    /// Writes it whole into `dir`, atomically.
    pub(super) fn write(&self, dir: &Path) -> std::io::Result<()> {
        crate::receipt::write_atomically(&dir.join(RECORD), self)
    }
}

/// Reads the record in `dir`.
pub(crate) fn load(dir: &Path) -> anyhow::Result<BatchRecord> {
    let path = dir.join(RECORD);
    let bytes = crate::files::read_optional(&path, 64 * 1024 * 1024, crate::files::Links::Refuse)
        .map_err(|e| anyhow::anyhow!("cannot read {}: {e}", path.display()))?
        .ok_or_else(|| anyhow::anyhow!("{} has no {RECORD}", dir.display()))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| anyhow::anyhow!("{} is not a batch record: {e}", path.display()))
}

/// Where the batches live: `batches/` beside the runs directory.
pub(crate) fn batches_dir(runs_dir: &Path) -> PathBuf {
    runs_dir
        .parent()
        .map_or_else(|| runs_dir.join("batches"), |p| p.join("batches"))
}

/// The record as JUnit XML: a test case per task, skipped when it never started (the budget,
/// `--max-fail` or an interrupt held it back), failed when it ran and did not complete.
pub(super) fn junit(record: &BatchRecord) -> String {
    let count = |skipped: bool| {
        record
            .tasks
            .iter()
            .filter(|t| t.outcome != TaskOutcome::Completed)
            .filter(|t| (t.outcome == TaskOutcome::NotStarted) == skipped)
            .count()
    };
    let (failures, skipped) = (count(false), count(true));
    let mut xml = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    xml.push_str(&format!(
        "<testsuites name=\"runbook batch\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\" time=\"{:.3}\">\n",
        record.tasks.len(),
        record.duration_ms as f64 / 1000.0
    ));
    xml.push_str(&format!(
        "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{failures}\" skipped=\"{skipped}\">\n",
        escape_xml(&record.batch_id),
        record.tasks.len()
    ));
    for task in &record.tasks {
        xml.push_str(&format!(
            "    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3}\">",
            escape_xml(&task.agent),
            escape_xml(&task.task),
            task.duration_ms as f64 / 1000.0
        ));
        if task.outcome == TaskOutcome::NotStarted {
            xml.push_str(&format!(
                "<skipped message=\"{}\"/>",
                escape_xml(&task.message)
            ));
        } else if task.outcome != TaskOutcome::Completed {
            xml.push_str(&format!(
                "<failure type=\"{}\" message=\"{}\"/>",
                task.outcome.as_str(),
                escape_xml(&task.message)
            ));
        }
        if let Some(run) = &task.run_id {
            xml.push_str(&format!("<system-out>run {}</system-out>", escape_xml(run)));
        }
        xml.push_str("</testcase>\n");
    }
    xml.push_str("  </testsuite>\n</testsuites>\n");
    xml
}

/// Text as an XML attribute or element may hold it: markup escaped, control characters (which
/// XML 1.0 cannot hold) replaced.
fn escape_xml(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' => out.push(' '),
            // Not characters XML 1.0 can hold: the controls, and U+FFFE and U+FFFF.
            c if c.is_control() || matches!(c, '\u{fffe}' | '\u{ffff}') => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn junit_escapes_markup_and_control_characters() {
        assert_eq!(
            escape_xml("a<b>&\"c\u{1b}[31m"),
            "a&lt;b&gt;&amp;&quot;c\u{fffd}[31m"
        );
        assert_eq!(
            escape_xml("]]></failure>\u{ffff}\u{fffe}\u{85}\r'"),
            "]]&gt;&lt;/failure&gt;\u{fffd}\u{fffd}\u{fffd}\u{fffd}&apos;"
        );
    }
}
