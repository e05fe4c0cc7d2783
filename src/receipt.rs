//! The receipt (`result.json`): what happened in a run, how long it took and what it cost.
//!
//! A receipt is read off the run's one fold of its events (`RunStats`), nothing else, so one can
//! be rebuilt from any `events.ndjson`. It is written atomically (temporary file, then rename)
//! once the run is over.

use std::collections::BTreeMap;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};

use crate::consumer::{Consumer, Delivery};
use crate::event::{
    Changes, CheckResult, CostSource, Decision, Diagnostic, EventKind, ExitInfo, Fidelity,
    GitStart, Limits, ObserverReport, Outcome, PermissionAsked, ProviderError, RepairStop,
    SCHEMA_VERSION, Tokens,
};
use crate::provenance::{EnvVarRecord, SettingRecord};
use crate::stats::{
    AfterFinalWord, Denial, Finish, RunStats, ToolTally, TurnTotals, UnparsedSample, Warnings,
};

/// What happened in a run, how long it took and what it cost: `result.json` in the run's
/// directory, written once the run has ended (`runbook status --json` prints one for a run still
/// going). Everything in it can be rebuilt from the run's event log.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Receipt {
    /// Always `receipt`, so a `--json` reader can tell it from events.
    #[serde(rename = "type")]
    pub kind: String,
    /// The version of the schema ([`SCHEMA_VERSION`]).
    pub schema_version: u32,
    /// The run's id, the name of its directory.
    pub run_id: String,
    /// The run's name (`--name`); absent: its id is its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The version of runbook that ran it.
    pub runbook_version: String,
    /// The agent and its version.
    pub agent: AgentInfo,
    /// Whether runbook was tested with the agent's version: `tested`, `untested` (its output may
    /// be misread: a newer release, a new major version), or `unknown` (its version could not be
    /// read, or runbook has no tested versions of this agent). Receipts of older runbooks lack
    /// it: read as `unknown`.
    #[serde(default)]
    pub fidelity: Fidelity,
    /// The model the agent said it ran (`model.announced`), else the one asked for, else the one
    /// priced from the agent's own configuration file (`model_file`); null when none is known.
    pub model: Option<String>,
    /// The agent's configuration file `model` was read from, when runbook did not ask for one
    /// (Codex's `config.toml`); absent when it was asked for or is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_file: Option<String>,
    /// Whether the agent ran its tools in its own sandbox, as it said (`agent.sandbox`: Claude
    /// Code 2.1.332 on tells it); absent when it did not say. Not runbook's own sandbox.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_sandbox: Option<bool>,
    /// The task's prompt (secrets masked).
    pub prompt: String,
    /// The directory the agent worked in.
    pub cwd: String,
    /// The run's directory.
    pub run_dir: String,
    #[serde(with = "crate::event::rfc3339")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    /// When the run started.
    pub started_at: SystemTime,
    #[serde(with = "crate::event::rfc3339")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    /// When it ended.
    pub ended_at: SystemTime,
    /// How long it took, in milliseconds.
    pub duration_ms: u64,
    /// How it ended; it decides runbook's exit code.
    pub outcome: Outcome,
    /// Why the run ended so, in a sentence.
    pub message: String,
    /// How the last agent process exited.
    pub exit: ExitInfo,
    /// The agent's session, the one every turn used.
    pub session_id: Option<String>,
    /// How many model calls (steps) the agent made; null when unknown: the agent does not
    /// report them (Codex).
    pub steps: Option<u32>,
    /// The tool calls, with their failures and denials, by tool.
    pub tool_calls: ToolCalls,
    /// All turns' tokens.
    pub tokens: TokenTotals,
    /// What the run cost, and how sure that is.
    pub cost: Cost,
    /// Each turn: its tokens, cost and steps.
    pub turns: Vec<TurnTotals>,
    /// Operations the agent was refused (the first hundred).
    pub permission_denials: Vec<Denial>,
    /// The permissions an agent over ACP asked for, each with the answer it got (the first
    /// hundred).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub permissions_asked: Vec<PermissionAsked>,
    /// Failed requests to the model provider.
    pub provider_errors: Vec<ProviderError>,
    /// Errors the agent reported that were not the provider's.
    pub agent_errors: Vec<String>,
    /// Output lines the adapter could not read, with samples.
    pub unparsed_lines: UnparsedLines,
    /// What the agent wrote to stderr.
    pub stderr: StderrSummary,
    /// What a reader of the totals must know: costs that could not be used, token counts that
    /// could not be read, work after the agent's final word. Receipts from before it have none.
    #[serde(default)]
    pub warnings: Warnings,
    /// What the agent printed after its final word (counted in the totals too).
    #[serde(default)]
    pub after_final_word: AfterFinalWord,
    /// Why the watchdog stopped the agent, when it did.
    pub watchdog: Option<Diagnostic>,
    /// What the agent repeated when it was stopped for going round in circles (`stuck`), or
    /// the last repetition it was warned of; absent when neither happened.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stuck: Option<crate::event::Stuck>,
    /// The sandbox the agent ran in (`--sandbox`) and how many refusals of it were seen; absent:
    /// the run was not sandboxed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<crate::event::Sandbox>,
    /// The limits the run was held to.
    pub limits: Limits,
    /// The settings that did not come from runbook's defaults, and where each was set.
    #[serde(default)]
    pub settings: Vec<SettingRecord>,
    /// The variables runbook set for the agent and where each came from; never their values.
    #[serde(default)]
    pub env: Vec<EnvVarRecord>,
    /// The plan, for runs with `--plan`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<PlanRecord>,
    /// The project's checks (`--check`), every attempt in the order they ran (0: after the task).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckResult>,
    /// The repair of failed checks, when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub repair: Option<RepairRecord>,
    /// A turn that stalled because the agent's tools were refused permission, and the one more
    /// pass its session got (`--retry-denied`), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub permission_stall: Option<StallRecord>,
    /// What each observer (`--on-event`, `--events-to`) was given and missed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub observers: Vec<ObserverReport>,
    /// The git repository the agent worked in, as the run found it; absent outside one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<GitStart>,
    /// What the run changed in that repository.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub changes: Option<Changes>,
    /// What the whole run did: the task's answer and what repair changed, or how a run that
    /// did not complete ended.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// The run's upload to object storage (`--upload`) that failed, when its last one did; absent
    /// when it was not uploaded or its upload succeeded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub upload_failed: Option<crate::event::UploadFailure>,
}

/// What the whole run did, in a few sentences. Receipts of older versions have only `text` and
/// `asked`, and their `text` is the last turn's answer, whichever turn that was (a repair's, or
/// the plan of a plan that was not approved).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    /// A few sentences on one line, for the whole run. A completed run: the answer of the task's
    /// last turn (trimmed), then each repair attempt's answer labelled `Repair:` (`Repair 1:`,
    /// `Repair 2:`… when there were several); with `--summary`, the agent's answer to that
    /// question instead. A run that did not complete, or `--plan-only`: `verdict`, followed
    /// with `--summary` by the agent's summary labelled `The agent's summary:`.
    pub text: String,
    /// Whether the agent was asked for a summary in a turn of its own (`--summary`).
    pub asked: bool,
    /// The answer of the task's last turn, trimmed (not a plan, a repair or `--summary`);
    /// absent when the task never ran or said nothing.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) task: Option<String>,
    /// Each repair attempt's answer, trimmed, in order (the first is attempt 1; empty when it
    /// said nothing).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub(crate) repairs: Vec<String>,
    /// How a run that did not complete ended, in runbook's words (`The plan was not approved;
    /// nothing was run.`, `Stopped: budget reached after 3 steps.`, `Checks failed after 2
    /// repair attempts: test`); `text` begins with it instead of quoting the agent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) verdict: Option<String>,
}

impl Summary {
    /// The summary a `summary` event told.
    fn of(kind: &EventKind) -> Option<Self> {
        match kind {
            EventKind::Summary {
                text,
                asked,
                task,
                repairs,
                verdict,
            } => Some(Self {
                text: text.clone(),
                asked: *asked,
                task: task.clone(),
                repairs: repairs.clone(),
                verdict: verdict.clone(),
            }),
            _ => None,
        }
    }
}

/// What was refused, and the pass after it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StallRecord {
    /// The operations refused during the turn.
    pub denied: Vec<Denial>,
    /// Absent when there was no pass (`--retry-denied` not given, or used already).
    pub pass: Option<StallPass>,
}

/// The one more pass after a permission stall: its turn, what it could and did spend, and how
/// it ended.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StallPass {
    /// The index of its turn (in `turns`).
    pub turn: u32,
    /// What it could spend: what was left of the repair budget.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::money::usd_opt"
    )]
    pub budget_usd: Option<f64>,
    /// Its tokens.
    pub tokens: Tokens,
    #[serde(serialize_with = "crate::money::usd_opt")]
    /// What it spent in USD; absent when unknown.
    pub cost_usd: Option<f64>,
    /// How its turn ended; absent when the run ended during it.
    pub outcome: Option<Outcome>,
}

/// How the failed checks were repaired, or why not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepairRecord {
    /// What all attempts together could spend (`--max-cost`).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::money::usd_opt"
    )]
    pub budget_usd: Option<f64>,
    /// Why repair stopped; absent when the run ended during it.
    pub stopped: Option<RepairStop>,
    /// Each attempt, in order.
    pub attempts: Vec<RepairAttempt>,
}

/// One attempt: the turn that resumed the session, and what it spent.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RepairAttempt {
    /// 1 for the first attempt.
    pub attempt: u32,
    /// The index of its turn (in `turns`).
    pub turn: u32,
    /// Its tokens.
    pub tokens: Tokens,
    #[serde(serialize_with = "crate::money::usd_opt")]
    /// What it spent in USD; absent when unknown.
    pub cost_usd: Option<f64>,
}

/// What was planned and decided before executing (`--plan`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PlanRecord {
    /// The last plan proposed.
    pub text: String,
    /// How many times it was revised.
    pub revisions: u32,
    /// The last decision about it; absent when the run ended before one was made.
    pub decision: Option<Decision>,
    /// What people asked to change, in order.
    pub feedback: Vec<String>,
    /// Tokens and cost of the planning turns (the first plan and every revision).
    pub tokens: u64,
    #[serde(serialize_with = "crate::money::usd_opt")]
    /// What planning cost in USD; absent when unknown.
    pub cost_usd: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// The agent that ran.
pub struct AgentInfo {
    /// `opencode`, `claude`, `codex`, or `custom` for `--agent-cmd`.
    pub name: String,
    /// Its version, when it told it.
    pub version: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// The run's tool calls.
pub struct ToolCalls {
    /// How many there were.
    pub total: u32,
    /// How many ran and failed.
    pub errors: u32,
    /// How many were not allowed to run.
    pub denied: u32,
    /// The same, by tool name.
    pub by_name: BTreeMap<String, ToolTally>,
}

/// The run's tokens, by kind.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub struct TokenTotals {
    /// Input tokens not read from the prompt cache (those are `cache_read`).
    pub input: u64,
    /// Output tokens, reasoning not included (that is `reasoning`).
    pub output: u64,
    /// Reasoning tokens, apart from `output`.
    pub reasoning: u64,
    /// Input tokens read from the prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the prompt cache.
    pub cache_write: u64,
    /// Every kind above added up.
    pub total: u64,
    /// Some turn's tokens are unknown (the agent reports them only at the end of a turn, and a
    /// turn ended without that report): the counts above are what is known, a lower bound, and
    /// all zero when nothing is known. Left out when false.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub incomplete: bool,
}

impl From<Tokens> for TokenTotals {
    fn from(t: Tokens) -> Self {
        Self {
            input: t.input,
            output: t.output,
            reasoning: t.reasoning,
            cache_read: t.cache_read,
            cache_write: t.cache_write,
            total: t.total(),
            incomplete: false,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// What the run cost.
pub struct Cost {
    /// Total USD; null when some step's cost is unknown.
    #[serde(serialize_with = "crate::money::usd_opt")]
    pub usd: Option<f64>,
    /// Whether the total was reported by the agent or estimated by runbook; absent when unknown.
    pub source: Option<CostSource>,
    /// The sum of the costs that are known (a lower bound when `usd` is null).
    #[serde(serialize_with = "crate::money::usd")]
    pub known_usd: f64,
    /// Some of the cost is unknown: a step without a cost, a model without a price, or a cost the
    /// agent reported that could not be used nor estimated. `usd` is then null.
    #[serde(default)]
    pub incomplete: bool,
    /// Costs the agent reported that were not used: negative, infinite or not a number (each is
    /// estimated from its tokens when the model has a price; see `warnings`).
    #[serde(default)]
    pub rejected: u32,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// Output lines that could not be read.
pub struct UnparsedLines {
    /// How many.
    pub count: u64,
    /// The first few, with why.
    pub samples: Vec<UnparsedSample>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
/// What the agent wrote to stderr.
pub struct StderrSummary {
    /// How many lines.
    pub lines: u64,
    /// The last of them.
    pub tail: Vec<String>,
}

impl Receipt {
    /// The receipt of a finished run, from its fold; `None` until the run has both started and
    /// finished.
    pub(crate) fn of(stats: &RunStats) -> Option<Receipt> {
        assemble(stats, stats.ending()?)
    }

    /// A receipt for a run that has not finished (yet): `running` as of `now`, or `abandoned` as
    /// of its last event. A finished run gets its real receipt.
    pub(crate) fn unfinished(
        stats: &RunStats,
        outcome: Outcome,
        message: String,
        now: SystemTime,
    ) -> Option<Receipt> {
        if stats.finish.is_some() {
            return Self::of(stats);
        }
        let started = stats.started_at?;
        let at = if outcome == Outcome::Running {
            now
        } else {
            stats.last_ts.unwrap_or(started)
        };
        let duration_ms = at
            .duration_since(started)
            .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
        let end = Finish {
            at,
            outcome,
            message,
            exit: ExitInfo::default(),
            duration_ms,
        };
        assemble(stats, end)
    }
}

/// The receipt of the run folded into `s`, ended as `end` says.
fn assemble(s: &RunStats, end: Finish) -> Option<Receipt> {
    let info = s.info.as_ref()?;
    Some(Receipt {
        kind: "receipt".to_owned(),
        schema_version: SCHEMA_VERSION,
        run_id: info.run_id.clone(),
        name: info.name.clone(),
        runbook_version: info.runbook_version.clone(),
        agent: AgentInfo {
            name: info.agent.clone(),
            version: s.agent_version.clone(),
        },
        fidelity: s.fidelity,
        model: s
            .model
            .as_ref()
            .map(|(model, _)| model.clone())
            .or_else(|| info.model.clone()),
        model_file: info.model_file.clone().filter(|_| s.model.is_none()),
        agent_sandbox: s.agent_sandbox,
        prompt: info.prompt.clone(),
        cwd: info.cwd.clone(),
        run_dir: info.run_dir.clone(),
        started_at: s.started_at.unwrap_or(end.at),
        ended_at: end.at,
        duration_ms: end.duration_ms,
        outcome: end.outcome,
        message: end.message,
        exit: end.exit,
        session_id: s.session_id.clone(),
        steps: s.steps(),
        tool_calls: tool_calls(s),
        tokens: TokenTotals {
            incomplete: s.tokens_incomplete(),
            ..s.tokens.into()
        },
        cost: cost(s),
        turns: s.turns.clone(),
        permission_denials: s.permission_denials.clone(),
        permissions_asked: s.permissions_asked.clone(),
        checks: s.checks.clone(),
        repair: repair(s),
        permission_stall: stall(s),
        observers: s.observers.clone(),
        git: info.git.as_deref().cloned(),
        changes: s.changes.clone(),
        summary: s.summary.as_ref().and_then(Summary::of),
        upload_failed: s.upload_failed.clone(),
        provider_errors: s.provider_errors.clone(),
        agent_errors: s.agent_errors.clone(),
        unparsed_lines: UnparsedLines {
            count: s.unparsed_lines,
            samples: s.unparsed_samples.clone(),
        },
        stderr: StderrSummary {
            lines: s.stderr_lines,
            tail: s.stderr_tail.iter().cloned().collect(),
        },
        warnings: s.warnings.clone(),
        after_final_word: s.after_final_word,
        watchdog: s.watchdog.clone(),
        stuck: s.stuck.clone(),
        sandbox: info.sandbox.clone().map(|sandbox| crate::event::Sandbox {
            denied: s.sandbox_denied,
            ..sandbox
        }),
        limits: info.limits,
        plan: plan(s),
        settings: info.settings.clone(),
        env: info.env.clone(),
    })
}

fn tool_calls(s: &RunStats) -> ToolCalls {
    let tally = |f: fn(&ToolTally) -> u32| s.tools.values().map(f).sum();
    ToolCalls {
        total: s.tool_calls,
        errors: tally(|t| t.errors),
        denied: tally(|t| t.denied),
        by_name: s.tools.clone(),
    }
}

fn cost(s: &RunStats) -> Cost {
    Cost {
        usd: s.cost(),
        source: s.cost_source,
        known_usd: s.known_cost(),
        incomplete: s.cost_incomplete(),
        rejected: s.costs_rejected,
    }
}

/// The repair record: each attempt with what its turn spent.
fn repair(s: &RunStats) -> Option<RepairRecord> {
    s.repair.as_ref().map(|r| RepairRecord {
        budget_usd: r.budget_usd,
        stopped: r.stopped,
        attempts: r
            .attempts
            .iter()
            .map(|&(attempt, turn)| {
                let totals = s.turns.iter().find(|t| t.index == turn);
                RepairAttempt {
                    attempt,
                    turn,
                    tokens: totals.map(|t| t.tokens).unwrap_or_default(),
                    cost_usd: totals.and_then(|t| t.cost_usd),
                }
            })
            .collect(),
    })
}

/// What a permission stall refused, and the pass after it with what it spent.
fn stall(s: &RunStats) -> Option<StallRecord> {
    s.stall.as_ref().map(|stall| StallRecord {
        denied: stall.denied.clone(),
        pass: stall.pass_turn.map(|turn| {
            let totals = s.turns.iter().find(|t| t.index == turn);
            StallPass {
                turn,
                budget_usd: stall.budget_usd,
                tokens: totals.map(|t| t.tokens).unwrap_or_default(),
                cost_usd: totals.and_then(|t| t.cost_usd),
                outcome: stall.pass_outcome,
            }
        }),
    })
}

/// The plan, with what planning spent.
fn plan(s: &RunStats) -> Option<PlanRecord> {
    s.plan.as_ref().map(|plan| {
        let (tokens, cost_usd) = s.planning_totals().unwrap_or_default();
        PlanRecord {
            text: plan.text.clone(),
            revisions: plan.revisions,
            decision: plan.decision,
            feedback: plan.feedback.clone(),
            tokens,
            cost_usd,
        }
    })
}

/// Writes `result.json` into the run directory once the run is over: from the totals at
/// `run.finished`, or at whatever came after it (a write that failed as the run ended).
pub(crate) struct ReceiptWriter {
    path: PathBuf,
    /// Space set aside in the run directory when it was made, given back just before the receipt
    /// is written, so that a run stopped by a full disk still leaves its receipt.
    reserve: PathBuf,
    receipt: Option<Receipt>,
}

impl ReceiptWriter {
    pub(crate) fn new(run_dir: &Path) -> Self {
        Self {
            path: run_dir.join(crate::rundir::RECEIPT),
            reserve: run_dir.join(crate::rundir::RESERVE),
            receipt: None,
        }
    }
}

impl Consumer for ReceiptWriter {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        if matches!(d.event.kind, EventKind::RunFinished { .. }) || self.receipt.is_some() {
            self.receipt = Receipt::of(d.totals);
        }
        Ok(())
    }

    fn close(&mut self) -> io::Result<()> {
        let _ = fs::remove_file(&self.reserve);
        match self.receipt.take() {
            Some(receipt) => write_atomically(&self.path, &receipt),
            None => Ok(()),
        }
    }

    fn name(&self) -> &'static str {
        "the receipt"
    }

    fn record(&self) -> Option<&Path> {
        Some(&self.path)
    }
}

/// Writes JSON to a temporary file beside `path`, syncs it, then renames it into place: a reader
/// sees either no receipt or a whole one, and a failed write leaves nothing behind. Only the
/// user can read it. Secrets are masked in it, however it spells them.
pub(crate) fn write_atomically(path: &Path, value: &impl Serialize) -> io::Result<()> {
    let mut bytes = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
    bytes.push(b'\n');
    crate::redact::write::atomically(path, "json.tmp", &crate::redact::current().mask(&bytes))
}

/// Records in a run's receipt how its last upload went: the failure, or none once it succeeded.
/// The receipt is rewritten whole, atomically; nothing else in it changes.
pub(crate) fn record_upload(
    path: &Path,
    failure: Option<crate::event::UploadFailure>,
) -> io::Result<()> {
    let bytes = crate::files::read(
        path,
        crate::files::RECEIPT_LIMIT,
        crate::files::Links::Refuse,
    )
    .map_err(io::Error::other)?;
    let mut receipt: Receipt = serde_json::from_slice(&bytes).map_err(io::Error::other)?;
    if receipt.upload_failed == failure {
        return Ok(());
    }
    receipt.upload_failed = failure;
    write_atomically(path, &receipt)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_of_an_older_version_whose_summary_has_only_text_and_asked_still_loads() {
        let mut r: serde_json::Value =
            serde_json::from_str(include_str!("../fixtures/receipt.json")).unwrap();
        let old = serde_json::json!({"text": "Nothing more to do.", "asked": false});
        r["summary"] = old.clone();
        let receipt: Receipt = serde_json::from_value(r).unwrap();
        let summary = receipt.summary.clone().unwrap();
        assert_eq!(summary.text, "Nothing more to do.");
        assert_eq!((summary.task, summary.verdict), (None, None));
        assert!(summary.repairs.is_empty());
        // Written back, it has no field it did not have.
        assert_eq!(serde_json::to_value(&receipt).unwrap()["summary"], old);
    }
}
