//! The one fold of a run's events: identity, steps, tokens, cost, tool calls, errors, the plan and
//! the ending.
//!
//! The dispatcher folds each event into a [`RunStats`] once, before any consumer sees it; every
//! consumer (the terminal view, `--json`, the receipt) and the supervisor's budget check and
//! watchdog diagnostic read that same view, so they cannot disagree. `runbook status` folds a
//! log through the same type.

use std::collections::{BTreeMap, HashMap, VecDeque};

use serde::{Deserialize, Serialize};

use std::time::SystemTime;

use crate::event::{
    AgentResult, CheckResult, CostIssue, CostSource, Decision, Diagnostic, Event, EventKind,
    ExitInfo, Late, Outcome, PermissionAnswerer, PermissionAsked, PriceBasis, ProviderError,
    RepairStop, RunInfo, StepUsage, Tokens, ToolEnd, ToolStart, ToolStatus, Turn, TurnKind,
    Unparsed, UnparsedReason,
};

/// How many stderr lines are kept for diagnostics.
const STDERR_TAIL: usize = 10;
/// How many failed tool calls are remembered by id, for a denial told after them.
const KEEP_ERRORED_CALLS: usize = 4096;
/// How many unparsed lines and errors are kept as examples.
const KEEP_EXAMPLES: usize = 20;
/// How many permission denials are kept (each is also counted in its tool's tally).
pub(crate) const KEEP_DENIALS: usize = 100;
/// How many tool names get a tally of their own; calls of further names are tallied together
/// under [`OTHER_TOOLS`].
const KEEP_TOOL_NAMES: usize = 100;
/// The tally of the tools past [`KEEP_TOOL_NAMES`].
pub const OTHER_TOOLS: &str = "(other tools)";
/// How much of a turn's final text is kept (it is the plan of a planning turn); the rest is
/// counted, not kept.
const KEEP_FINAL_TEXT: usize = 1024 * 1024;

/// Tool calls of one tool name.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ToolTally {
    pub calls: u32,
    pub errors: u32,
    pub denied: u32,
}

/// Totals of one turn.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnTotals {
    pub index: u32,
    pub kind: TurnKind,
    /// The model calls the agent made; null when it does not report them (Codex).
    pub steps: Option<u32>,
    pub tool_calls: u32,
    /// What is known of the turn's tokens: none at all when `tokens_unknown`.
    pub tokens: Tokens,
    /// The turn's tokens are unknown: the agent reports them only at the end of a turn, and this
    /// one ended without that report (a provider failure, a stop by runbook).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tokens_unknown: bool,
    /// The turn's tokens are only part of them (the agent told those of its last model call):
    /// a lower bound. Its cost is not less known for it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub tokens_partial: bool,
    /// USD known so far: the sum of the known step costs, or the agent's own total for the turn
    /// (plus whatever it spent after giving it). A lower bound when `cost_incomplete`; absent when
    /// nothing of it is known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::money::usd_opt"
    )]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_source: Option<CostSource>,
    /// Some of the turn's cost is unknown: a step or the agent's result had no cost, or one that
    /// could not be used and could not be estimated.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub cost_incomplete: bool,
    /// Steps since the agent's result (all of them, before one) that finished without a known
    /// cost.
    #[serde(skip)]
    unpriced_steps: u32,
    /// Whether the agent's own result set the turn's cost, replacing the sum of its steps.
    #[serde(skip)]
    cost_final: bool,
    /// Whether that result's cost is unknown.
    #[serde(skip)]
    result_unpriced: bool,
}

impl TurnTotals {
    /// A turn's totals before anything happened in it; `steps_unreported`: the agent does not
    /// print its model calls, so steps are unknown and tokens (and cost) too until its result.
    fn new(turn: Turn, steps_unreported: bool) -> Self {
        Self {
            index: turn.index,
            kind: turn.kind,
            steps: (!steps_unreported).then_some(0),
            tool_calls: 0,
            tokens: Tokens::default(),
            tokens_unknown: steps_unreported,
            tokens_partial: false,
            cost_usd: None,
            cost_source: None,
            cost_incomplete: steps_unreported,
            unpriced_steps: 0,
            cost_final: false,
            result_unpriced: false,
        }
    }

    /// Whether the turn spent anything that should have a price.
    fn has_usage(&self) -> bool {
        self.steps.is_some_and(|n| n > 0) || self.cost_final || self.tokens_unknown
    }

    /// Whether some of the turn's tokens are unknown: none reported, or not all of them (a turn
    /// that reported no usage at all has its tokens unknown, not 0).
    pub(crate) fn tokens_incomplete(&self) -> bool {
        self.tokens_unknown
            || self.tokens_partial
            || (self.tokens.total() == 0 && !self.has_usage())
    }

    /// The turn's cost, or `None` when some of it is unknown.
    fn known_total(&self) -> Option<f64> {
        if self.cost_incomplete {
            None
        } else {
            self.cost_usd
        }
    }

    /// A step: its tokens count, and its cost (after the agent's result too: the result's total
    /// covers only what came before it). A cost that is not a usable amount counts as unknown,
    /// never as less.
    fn step(&mut self, usage: &StepUsage) {
        if let Some(steps) = &mut self.steps {
            *steps += 1;
        }
        self.tokens.add(&usage.tokens);
        // A count it could not read (or a step whose usage never came) counts as 0: what is
        // known is then a lower bound.
        if usage.tokens_unreadable {
            self.tokens_partial = true;
        }
        match usage.usable_cost() {
            Some(cost) => {
                *self.cost_usd.get_or_insert(0.0) += cost;
                self.cost_source = merge_source(self.cost_source, usage.cost_source);
            }
            None => self.unpriced_steps += 1,
        }
        self.update();
    }

    /// The agent's own totals replace the sum of the steps, except that a cost it did not give
    /// (or gave unusable) leaves what the steps cost as what is known.
    fn result(&mut self, result: &AgentResult) {
        if let Some(tokens) = result.tokens {
            self.tokens = tokens;
            self.tokens_unknown = false;
            self.tokens_partial = result.tokens_partial;
        }
        let cost = result.usable_cost();
        if result.tokens.is_none() && result.cost_usd.is_none() && result.cost_rejected.is_none() {
            return;
        }
        self.cost_final = true;
        self.unpriced_steps = 0;
        match cost {
            Some(cost) => {
                self.cost_usd = Some(cost);
                self.cost_source = result.cost_source;
                self.result_unpriced = false;
            }
            None => self.result_unpriced = true,
        }
        self.update();
    }

    fn update(&mut self) {
        self.cost_incomplete =
            self.unpriced_steps > 0 || self.result_unpriced || self.tokens_unknown;
    }
}

/// One estimated part makes the whole an estimate, and one conservative part (priced at its
/// provider's highest price) makes it conservative.
fn merge_source(a: Option<CostSource>, b: Option<CostSource>) -> Option<CostSource> {
    match (a, b) {
        (Some(CostSource::Conservative), _) | (_, Some(CostSource::Conservative)) => {
            Some(CostSource::Conservative)
        }
        (Some(CostSource::Estimated), _) | (_, Some(CostSource::Estimated)) => {
            Some(CostSource::Estimated)
        }
        (a, b) => a.or(b),
    }
}

/// The repair of failed checks, as folded so far.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Repair {
    /// Each attempt, with the index of the turn it resumed the session in.
    pub attempts: Vec<(u32, u32)>,
    pub budget_usd: Option<f64>,
    pub stopped: Option<RepairStop>,
}

pub use crate::event::Denial;

/// A turn that stalled on refused permissions, and the one more pass its session got, if any.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stall {
    pub denied: Vec<Denial>,
    /// The index of the pass's turn.
    pub pass_turn: Option<u32>,
    pub budget_usd: Option<f64>,
    /// How the pass ended, once it has.
    pub pass_outcome: Option<Outcome>,
}

/// What the run's budget knows of its spending.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Spent {
    /// At least this much, in USD: the costs known so far.
    AtLeast(f64),
    /// The agent reported a cost that puts no bound on the spending: an infinite one, or one that
    /// could not be used and could not be estimated.
    Unbounded(CostIssue),
}

/// Warnings about the run (see `crate::warning`): how many, and the first few.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Warnings {
    pub count: u64,
    pub samples: Vec<String>,
}

/// What the agent printed after its final word, across the run.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct AfterFinalWord {
    pub texts: u32,
    pub tool_calls: u32,
    pub model_calls: u32,
}

impl AfterFinalWord {
    /// Counts one more of `what`.
    fn count(&mut self, what: Late) {
        match what {
            Late::Text => self.texts += 1,
            Late::Tool => self.tool_calls += 1,
            Late::Step => self.model_calls += 1,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UnparsedSample {
    pub reason: UnparsedReason,
    pub bytes: u64,
    pub head: String,
}

/// How the run ended, from `run.finished`.
#[derive(Debug, Clone, PartialEq)]
pub struct Finish {
    pub at: SystemTime,
    pub outcome: Outcome,
    pub message: String,
    pub exit: ExitInfo,
    pub duration_ms: u64,
}

/// The plan of a `--plan` run, as last proposed and decided.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanState {
    /// The turn that proposed it: planning is every turn up to this one.
    pub turn: u32,
    pub text: String,
    pub revisions: u32,
    pub decision: Option<Decision>,
    pub feedback: Vec<String>,
}

/// Totals so far. Cheap to update; updated once per event.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// The run's identity, from `run.started`.
    pub info: Option<RunInfo>,
    pub started_at: Option<SystemTime>,
    /// The time of the latest event.
    pub last_ts: Option<SystemTime>,
    pub agent_version: Option<String>,
    /// Whether runbook was tested with the agent's version, as `agent.version` said (older logs:
    /// untested when it named the tested versions, else unknown).
    pub fidelity: crate::event::Fidelity,
    /// Why the watchdog stopped the agent, if it did.
    pub watchdog: Option<Diagnostic>,
    /// What the agent repeated: the stop for it, or else the last warning (`stuck.*`).
    pub stuck: Option<crate::event::Stuck>,
    /// The refusals of the sandbox seen (`sandbox.denied`).
    pub sandbox_denied: u64,
    /// The tool calls among those that failed because the sandbox refused them.
    pub sandbox_refused_calls: u32,
    pub plan: Option<PlanState>,
    pub finish: Option<Finish>,
    /// The first write to the run directory that failed, as one line. The run then ends as
    /// `storage_error`, whatever else it did.
    pub storage_error: Option<String>,
    pub session_id: Option<String>,
    /// The model the agent said it runs (`model.announced`), and where its price comes from.
    pub model: Option<(String, PriceBasis)>,
    /// Whether the agent said its own sandbox is on (`agent.sandbox`); `None`: it did not say.
    pub agent_sandbox: Option<bool>,
    /// Tool calls that ended as errors, by call id (at most [`KEEP_ERRORED_CALLS`]), with the
    /// name they are tallied under: a denial the agent tells later moves one to `denied`.
    errored_calls: HashMap<String, String>,
    pub steps_started: u32,
    pub steps_finished: u32,
    /// Whether a step has started and not finished.
    pub step_open: bool,
    pub last_finish_reason: Option<String>,
    /// All turns' tokens.
    pub tokens: Tokens,
    pub cost_source: Option<CostSource>,
    pub tool_calls: u32,
    pub tools: BTreeMap<String, ToolTally>,
    pub subagents: u32,
    pub permission_denials: Vec<Denial>,
    /// Of `permission_denials`, each by its index: whether it was a person's own answer at the
    /// terminal (a choice, not a stall of a run nobody could ask).
    pub(crate) denied_by_person: Vec<bool>,
    /// The calls a person refused, by id, until their `permission.denied`.
    refused_by_person: Vec<String>,
    /// The newest tool call started and not ended yet: its name and input.
    pub running_tool: Option<String>,
    /// The last `running_tool`'s memory, for the next call's.
    spare_tool: String,
    /// The observers whose failure was told as it happened (`observer.failed`).
    pub(crate) observers_told: Vec<u32>,
    /// When the running tool call started.
    pub running_since: Option<SystemTime>,
    /// The check running (`check test`), and since when.
    pub running_check: Option<(String, SystemTime)>,
    /// A permission request waiting for its answer (`bash echo hi`), and since when.
    pub asking: Option<(String, SystemTime)>,
    /// The permissions an ACP agent asked for, each with its answer (the first hundred).
    pub permissions_asked: Vec<PermissionAsked>,
    /// The project's checks, every attempt, in the order they ran.
    pub checks: Vec<CheckResult>,
    /// The repair of failed checks, once it began.
    pub repair: Option<Repair>,
    /// The turn that stalled on refused permissions: the one that got a pass, else the last.
    pub stall: Option<Stall>,
    /// What each observer was given and missed.
    pub observers: Vec<crate::event::ObserverReport>,
    /// What the run changed in its repository.
    pub changes: Option<crate::event::Changes>,
    /// The run's upload to object storage that failed, if it did.
    pub upload_failed: Option<crate::event::UploadFailure>,
    /// The run's `summary` event (an `EventKind::Summary`).
    pub summary: Option<EventKind>,
    pub provider_errors: Vec<ProviderError>,
    pub agent_errors: Vec<String>,
    pub unparsed_lines: u64,
    pub unparsed_samples: Vec<UnparsedSample>,
    pub stderr_lines: u64,
    pub stderr_tail: VecDeque<String>,
    /// Costs the agent reported that were not used (negative, infinite or not a number).
    pub costs_rejected: u32,
    /// The first reported cost that left the spending unbounded, if one did.
    pub unbounded_cost: Option<CostIssue>,
    /// What the agent printed after its final word.
    pub after_final_word: AfterFinalWord,
    pub warnings: Warnings,
    pub last_agent_event: Option<&'static str>,
    pub last_text: Option<String>,
    /// The current turn's text since its last tool call: its final answer, once it has ended.
    /// At most [`KEEP_FINAL_TEXT`] bytes, then a note of how much more there was.
    pub final_text: String,
    /// Bytes of the current turn's final text that were not kept.
    final_text_dropped: u64,
    pub turns: Vec<TurnTotals>,
}

impl RunStats {
    /// The agent's version, and whether runbook was tested with it (`agent.version` of older
    /// runbooks has no `fidelity`: untested when it names the tested versions, else unknown).
    fn agent_version(&mut self, kind: &EventKind) {
        let EventKind::AgentVersion {
            version,
            tested_with,
            fidelity,
        } = kind
        else {
            return;
        };
        self.agent_version = Some(version.clone());
        self.fidelity = fidelity.unwrap_or(if tested_with.is_empty() {
            crate::event::Fidelity::Unknown
        } else {
            crate::event::Fidelity::Untested
        });
    }

    /// Folds one event into the totals.
    pub fn observe(&mut self, ev: &Event) {
        self.last_ts = Some(ev.ts);
        self.count(ev.turn, &ev.kind);
        match &ev.kind {
            EventKind::RunStarted(info) => {
                self.info = Some((**info).clone());
                self.started_at = Some(ev.ts);
            }
            version @ EventKind::AgentVersion { .. } => self.agent_version(version),
            EventKind::WatchdogFired(d) => self.watchdog = Some((**d).clone()),
            // Nothing is said after a stop: the last said is the stop, or the last warning.
            EventKind::StuckDetected(s)
            | EventKind::StuckWarning(s)
            | EventKind::StuckNudged(s) => {
                self.stuck = Some((**s).clone());
            }
            EventKind::SandboxDenied { call_id, .. } => self.sandbox_refused(call_id.is_some()),
            EventKind::StorageFailed { path, error } => {
                self.storage_error
                    .get_or_insert_with(|| format!("cannot write {path}: {error}"));
            }
            EventKind::PlanProposed { revision, text } => {
                let feedback = self.plan.take().map(|p| p.feedback).unwrap_or_default();
                self.plan = Some(PlanState {
                    turn: ev.turn.index,
                    text: text.clone(),
                    revisions: *revision,
                    decision: None,
                    feedback,
                });
            }
            EventKind::PlanDecided(d) => {
                if let Some(plan) = &mut self.plan {
                    plan.decision = Some(d.decision);
                    plan.feedback.extend(d.feedback.clone());
                }
            }
            EventKind::ToolStarted(_) => self.running_since = Some(ev.ts),
            EventKind::ToolCompleted(_) => self.running_since = None,
            EventKind::CheckStarted { name, .. } => {
                self.running_check = Some((format!("check {name}"), ev.ts));
            }
            EventKind::CheckFinished(_) => self.running_check = None,
            EventKind::PermissionRequested { tool, input, .. } => {
                self.asking = Some((format!("{tool} {input}").trim().to_owned(), ev.ts));
            }
            EventKind::PermissionAnswered { .. } => self.asking = None,
            EventKind::ObserverFinished(report) => self.observers.push(report.clone()),
            EventKind::Changes(changes) => self.changes = Some(changes.clone()),
            EventKind::UploadFailed(failure) => self.upload_failed = Some(failure.clone()),
            EventKind::Summary { .. } => self.summary = Some(ev.kind.clone()),
            EventKind::TurnCompleted { .. } | EventKind::TurnFailed { .. } => {
                // A question left unanswered at the end of its turn is not asked any more.
                self.asking = None;
                if let Some(stall) = &mut self.stall
                    && stall.pass_turn == Some(ev.turn.index)
                {
                    stall.pass_outcome = Some(match &ev.kind {
                        EventKind::TurnFailed { outcome, .. } => *outcome,
                        _ => Outcome::Completed,
                    });
                }
            }
            EventKind::RunFinished {
                outcome,
                message,
                duration_ms,
                exit,
            } => {
                self.finish = Some(Finish {
                    at: ev.ts,
                    outcome: *outcome,
                    message: message.clone(),
                    exit: *exit,
                    duration_ms: *duration_ms,
                });
            }
            _ => {}
        }
    }

    /// How the run ended: as `run.finished` said, unless a write to the run directory failed,
    /// which no run survives as anything but `storage_error`.
    pub fn ending(&self) -> Option<Finish> {
        let mut end = self.finish.clone()?;
        if let Some(message) = &self.storage_error
            && end.outcome != Outcome::StorageError
        {
            end.outcome = Outcome::StorageError;
            end.message.clone_from(message);
        }
        Some(end)
    }

    /// How many model calls the agent made: `None` when some turn's are unknown (an agent that
    /// does not report them), never a count that leaves them out.
    pub fn steps(&self) -> Option<u32> {
        if self.turns.iter().any(|t| t.steps.is_none()) {
            None
        } else {
            Some(self.steps_finished)
        }
    }

    /// Whether some turn's tokens are unknown or partial, or the agent reported none at all (a
    /// run that ended before its first step): [`Self::tokens`] is then what is known, a lower
    /// bound (zero when nothing is known), never a count of zero.
    pub fn tokens_incomplete(&self) -> bool {
        self.turns
            .iter()
            .any(|t| t.tokens_unknown || t.tokens_partial)
            || (self.tokens.total() == 0 && !self.turns.iter().any(TurnTotals::has_usage))
    }

    /// Tool calls that ran and failed.
    pub fn failed_tools(&self) -> u32 {
        self.tools.values().map(|t| t.errors).sum()
    }

    /// A refusal of the sandbox: a tool call's (`call`), or one the agent told on stderr.
    fn sandbox_refused(&mut self, call: bool) {
        self.sandbox_denied += 1;
        self.sandbox_refused_calls += u32::from(call);
    }

    /// Tool calls that were not allowed to run.
    pub fn denied_tools(&self) -> u32 {
        self.tools.values().map(|t| t.denied).sum()
    }

    /// Tokens and cost of the planning turns (every turn up to the one that proposed the plan).
    pub fn planning_totals(&self) -> Option<(u64, Option<f64>)> {
        let last = self.plan.as_ref()?.turn;
        let planning = || self.turns.iter().filter(move |t| t.index <= last);
        Some((
            planning().map(|t| t.tokens.total()).sum(),
            planning()
                .map(TurnTotals::known_total)
                .try_fold(0.0, |sum, c| c.map(|c| sum + c)),
        ))
    }

    /// The totals an event of the agent's changes.
    fn count(&mut self, turn: Turn, kind: &EventKind) {
        if kind.is_from_agent() {
            self.last_agent_event = Some(kind.type_name());
        }
        match kind {
            EventKind::TurnStarted {
                steps_unreported, ..
            } => {
                self.turns.push(TurnTotals::new(turn, *steps_unreported));
                self.clear_final_text();
            }
            EventKind::ToolStarted(start) => self.tool_started(start),
            EventKind::SessionStarted { session_id } => self.session_id = Some(session_id.clone()),
            EventKind::ModelAnnounced { model, price } if self.model.is_none() => {
                self.model = Some((model.clone(), *price));
                self.warn(kind);
            }
            EventKind::AgentSandbox { enabled } => self.agent_sandbox = Some(*enabled),
            EventKind::StepStarted { .. } => {
                self.steps_started += 1;
                self.step_open = true;
            }
            EventKind::StepFinished(usage) => {
                self.steps_finished += 1;
                self.step_open = false;
                set(&mut self.last_finish_reason, &usage.reason);
                self.turn_mut(turn).step(usage);
                self.sum_turns();
                self.cost_checked(usage.rejected(), usage.usable_cost());
                self.warn(kind);
            }
            EventKind::AgentResult(result) => {
                self.turn_mut(turn).result(result);
                self.sum_turns();
                self.cost_checked(result.rejected(), result.usable_cost());
                self.warn(kind);
            }
            EventKind::AfterFinalWord { what, .. } => {
                self.after_final_word.count(*what);
                self.warn(kind);
            }
            EventKind::AgentVersion { .. } => self.warn(kind),
            EventKind::Text { text } => self.text(text),
            EventKind::ToolCompleted(end) => self.tool_completed(turn, end),
            EventKind::SubagentStarted { .. } => self.subagents += 1,
            EventKind::PermissionDenied {
                tool,
                detail,
                call_id,
            } => self.permission_denied(tool, detail, call_id.as_deref()),
            EventKind::ProviderError(err) => push_bounded(&mut self.provider_errors, err.clone()),
            EventKind::AgentError { name, message } => {
                push_bounded(&mut self.agent_errors, format!("{name}: {message}"));
            }
            EventKind::Unparsed(u) => self.unparsed(u),
            EventKind::Stderr { line } => self.stderr(line),
            _ => self.count_decision(turn, kind),
        }
    }

    /// The totals an answer, a check, a repair or a stall changes.
    fn count_decision(&mut self, turn: Turn, kind: &EventKind) {
        match kind {
            EventKind::PermissionAnswered {
                call_id,
                tool,
                input,
                allowed,
                option,
                by,
            } => {
                if !allowed && *by == PermissionAnswerer::Person {
                    if self.refused_by_person.len() >= KEEP_DENIALS {
                        self.refused_by_person.remove(0);
                    }
                    self.refused_by_person.push(call_id.clone());
                }
                if self.permissions_asked.len() < KEEP_DENIALS {
                    self.permissions_asked.push(PermissionAsked {
                        tool: tool.clone(),
                        input: input.clone(),
                        allowed: *allowed,
                        option: option.clone(),
                        by: *by,
                    });
                }
            }
            EventKind::CheckFinished(check) => self.checks.push(check.clone()),
            EventKind::ObserverFailed { index, .. } => self.observers_told.push(*index),
            EventKind::RepairStarted {
                attempt,
                budget_usd,
                ..
            } => {
                let repair = self.repair.get_or_insert_with(Repair::default);
                repair.budget_usd = repair.budget_usd.or(*budget_usd);
                repair.attempts.push((*attempt, turn.index + 1));
            }
            EventKind::RepairFinished { stopped, .. } => {
                self.repair.get_or_insert_with(Repair::default).stopped = Some(*stopped);
            }
            EventKind::PermissionStalled {
                denied,
                retry,
                budget_usd,
            } if self.stall.as_ref().is_none_or(|s| s.pass_turn.is_none()) => {
                self.stall = Some(Stall {
                    denied: denied.clone(),
                    pass_turn: retry.then_some(turn.index + 1),
                    budget_usd: *budget_usd,
                    pass_outcome: None,
                });
            }
            _ => {}
        }
    }

    /// A tool started: it is the running one (its label written into a reused string).
    fn tool_started(&mut self, start: &ToolStart) {
        let mut running = self
            .running_tool
            .take()
            .unwrap_or_else(|| std::mem::take(&mut self.spare_tool));
        start.write_label(&mut running);
        self.running_tool = Some(running);
        self.clear_final_text();
    }

    /// A refusal; a call told as failed before is counted as refused instead.
    fn permission_denied(&mut self, tool: &str, detail: &str, call_id: Option<&str>) {
        if let Some(name) = call_id.and_then(|id| self.errored_calls.remove(id))
            && let Some(tally) = self.tools.get_mut(&name)
        {
            // The call was told as failed; the agent now says it was refused.
            tally.errors = tally.errors.saturating_sub(1);
            tally.denied += 1;
        }
        let by_person = call_id.is_some_and(|id| {
            let i = self.refused_by_person.iter().position(|r| r == id);
            i.map(|i| self.refused_by_person.remove(i)).is_some()
        });
        if self.permission_denials.len() < KEEP_DENIALS {
            self.permission_denials.push(Denial {
                tool: tool.to_owned(),
                detail: detail.to_owned(),
            });
            self.denied_by_person.push(by_person);
        }
    }

    /// A line the adapter could not read: counted, and a few kept as samples.
    fn unparsed(&mut self, u: &Unparsed) {
        self.unparsed_lines += 1;
        let sample = UnparsedSample {
            reason: u.reason,
            bytes: u.bytes,
            head: u.head.clone(),
        };
        push_bounded(&mut self.unparsed_samples, sample);
    }

    /// The agent's text: the latest, and the turn's answer so far.
    fn text(&mut self, text: &str) {
        set(&mut self.last_text, text);
        if self.final_text_dropped > 0 {
            self.final_text_dropped += text.len() as u64;
            return;
        }
        let sep = if self.final_text.is_empty() {
            ""
        } else {
            "\n\n"
        };
        if self.final_text.len() + sep.len() + text.len() <= KEEP_FINAL_TEXT {
            self.final_text.push_str(sep);
            self.final_text.push_str(text);
            return;
        }
        let mut room = KEEP_FINAL_TEXT.saturating_sub(self.final_text.len() + sep.len());
        while !text.is_char_boundary(room) {
            room -= 1;
        }
        self.final_text.push_str(sep);
        self.final_text.push_str(&text[..room]);
        self.final_text_dropped = (text.len() - room) as u64;
        self.final_text
            .push_str("\n\n[… the rest of the text was not kept: it is in events.ndjson]");
    }

    fn clear_final_text(&mut self) {
        self.final_text.clear();
        self.final_text_dropped = 0;
        if self.final_text.capacity() > 64 * 1024 {
            self.final_text.shrink_to(4096);
        }
    }

    fn tool_completed(&mut self, turn: Turn, end: &ToolEnd) {
        if let Some(running) = self.running_tool.take() {
            self.spare_tool = running;
        }
        self.tool_calls += 1;
        let name = if self.tools.contains_key(&end.name) || self.tools.len() < KEEP_TOOL_NAMES {
            &end.name
        } else {
            OTHER_TOOLS
        };
        let tally = match self.tools.get_mut(name) {
            Some(tally) => tally,
            None => self.tools.entry(name.to_owned()).or_default(),
        };
        tally.calls += 1;
        match end.status {
            ToolStatus::Ok => {}
            ToolStatus::Error => {
                tally.errors += 1;
                if self.errored_calls.len() < KEEP_ERRORED_CALLS {
                    self.errored_calls
                        .insert(end.call_id.clone(), name.to_owned());
                }
            }
            ToolStatus::Denied => tally.denied += 1,
        }
        self.turn_mut(turn).tool_calls += 1;
    }

    /// A cost the agent reported, as checked: one not used is counted, and one that leaves the
    /// spending without a bound (infinite, or without an estimate) is remembered for the budget.
    fn cost_checked(&mut self, rejected: Option<CostIssue>, usable: Option<f64>) {
        let Some(issue) = rejected else { return };
        self.costs_rejected += 1;
        if issue == CostIssue::Infinite || usable.is_none() {
            self.unbounded_cost.get_or_insert(issue);
        }
    }

    fn warn(&mut self, kind: &EventKind) {
        let (warnings, step) = (&mut self.warnings, self.steps_finished);
        crate::warning::of(kind, step, |text| {
            warnings.count += 1;
            push_bounded(&mut warnings.samples, text);
        });
    }

    /// What `--max-cost` is checked against.
    pub fn spent(&self) -> Spent {
        match self.unbounded_cost {
            Some(issue) => Spent::Unbounded(issue),
            None => Spent::AtLeast(self.known_cost()),
        }
    }

    /// Whether some of the cost is unknown: the total is then `None` and the known cost a lower
    /// bound.
    pub fn cost_incomplete(&self) -> bool {
        self.turns.iter().any(|t| t.cost_incomplete)
    }

    fn stderr(&mut self, line: &str) {
        self.stderr_lines += 1;
        if self.stderr_tail.len() == STDERR_TAIL {
            self.stderr_tail.pop_front();
        }
        self.stderr_tail.push_back(line.to_owned());
    }

    /// The total cost, unless some of it is unknown (then the total is unknown, not low).
    pub fn cost(&self) -> Option<f64> {
        let mut total = None;
        for t in self.turns.iter().filter(|t| t.has_usage()) {
            *total.get_or_insert(0.0) += t.known_total()?;
        }
        total
    }

    /// The cost known so far, for budget checks: a lower bound even when some of it is unknown.
    pub fn known_cost(&self) -> f64 {
        self.turns
            .iter()
            .filter_map(|t| t.cost_usd)
            .fold(0.0, |a, b| a + b)
    }

    /// The totals of `turn`, started on first use (a replayed transcript has no `turn.started`).
    fn turn_mut(&mut self, turn: Turn) -> &mut TurnTotals {
        match self.turns.iter().rposition(|t| t.index == turn.index) {
            Some(i) => &mut self.turns[i],
            None => {
                self.turns.push(TurnTotals::new(turn, false));
                self.turns.last_mut().expect("just pushed")
            }
        }
    }

    fn sum_turns(&mut self) {
        self.tokens = Tokens::default();
        self.cost_source = None;
        for t in &self.turns {
            self.tokens.add(&t.tokens);
            self.cost_source = merge_source(self.cost_source, t.cost_source);
        }
    }
}

/// Replaces a kept string, reusing its buffer (this runs for every event, several times over)
/// unless that buffer is much larger than needed.
fn set(slot: &mut Option<String>, value: &str) {
    match slot {
        Some(kept) if kept.capacity() <= 4096 || value.len() >= kept.capacity() / 4 => {
            value.clone_into(kept);
        }
        _ => *slot = Some(value.to_owned()),
    }
}

fn push_bounded<T>(v: &mut Vec<T>, item: T) {
    if v.len() < KEEP_EXAMPLES {
        v.push(item);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::event::{ToolKind, ToolStart};

    fn at_first(kind: EventKind) -> Event {
        Event {
            seq: 0,
            ts: SystemTime::UNIX_EPOCH,
            turn: Turn::FIRST,
            kind,
        }
    }

    fn step(cost: Option<f64>, input: u64) -> EventKind {
        EventKind::StepFinished(StepUsage {
            id: None,
            reason: "stop".into(),
            tokens: Tokens {
                input,
                output: 1,
                ..Tokens::default()
            },
            cost_usd: cost,
            cost_source: cost.map(|_| CostSource::Reported),
            cost_rejected: None,
            tokens_unreadable: false,
        })
    }

    #[test]
    fn the_running_tool_is_the_newest_call_started_and_not_ended() {
        let mut stats = RunStats::default();
        let call = |id: &str, name: &str, input: &str| ToolStart {
            call_id: id.into(),
            name: name.into(),
            kind: ToolKind::of(name),
            input: input.into(),
            parent: None,
        };
        let start = |id: &str, name: &str, input: &str| {
            at_first(EventKind::ToolStarted(call(id, name, input)))
        };
        for (name, input, shown) in [
            ("bash", "  ls -la ", "bash   ls -la"),
            ("read", "", "read"),
            ("", " src/main.rs", "src/main.rs"),
            (" grep", "x\t", "grep x"),
        ] {
            stats.observe(&start("c", name, input));
            assert_eq!(stats.running_tool.as_deref(), Some(shown));
            stats.observe(&at_first(EventKind::ToolCompleted(
                call("c", name, input).end(ToolStatus::Ok),
            )));
            assert_eq!(stats.running_tool, None);
        }
        // A call started while another runs is the one shown.
        stats.observe(&start("a", "bash", "sleep 9"));
        stats.observe(&start("b", "read", "README.md"));
        assert_eq!(stats.running_tool.as_deref(), Some("read README.md"));
    }

    #[test]
    fn an_unknown_step_cost_makes_the_total_unknown_but_keeps_a_lower_bound() {
        let mut s = RunStats::default();
        s.observe(&at_first(step(Some(0.5), 10)));
        assert_eq!(s.cost(), Some(0.5));
        s.observe(&at_first(step(None, 5)));
        assert_eq!(s.cost(), None);
        assert!((s.known_cost() - 0.5).abs() < 1e-12);
        assert_eq!(s.tokens.input, 15);
    }

    fn completed(call_id: &str, name: &str, status: ToolStatus) -> EventKind {
        EventKind::ToolCompleted(ToolEnd {
            call_id: call_id.into(),
            name: name.into(),
            kind: ToolKind::Write,
            input: "x".into(),
            parent: None,
            status,
            error: None,
            output_bytes: None,
            duration_ms: None,
            input_hash: None,
            result_hash: None,
        })
    }

    #[test]
    fn a_denial_told_after_its_call_failed_counts_the_call_as_denied() {
        let mut s = RunStats::default();
        s.observe(&at_first(completed("w1", "Write", ToolStatus::Error)));
        s.observe(&at_first(completed("w2", "Write", ToolStatus::Error)));
        let denial = |call_id: Option<&str>| EventKind::PermissionDenied {
            tool: "Write".into(),
            detail: "x".into(),
            call_id: call_id.map(str::to_owned),
        };
        s.observe(&at_first(denial(Some("w1"))));
        // Told twice, or without an id, or for a call never seen: nothing moves.
        s.observe(&at_first(denial(Some("w1"))));
        s.observe(&at_first(denial(None)));
        s.observe(&at_first(denial(Some("elsewhere"))));
        let tally = &s.tools["Write"];
        assert_eq!((tally.calls, tally.errors, tally.denied), (2, 1, 1));
        assert_eq!(s.permission_denials.len(), 4);
    }

    #[test]
    fn a_conservative_part_makes_the_cost_conservative_and_the_agents_report_replaces_it() {
        let mut s = RunStats::default();
        let priced = |source| {
            let mut step = step(Some(0.25), 10);
            if let EventKind::StepFinished(u) = &mut step {
                u.cost_source = Some(source);
            }
            step
        };
        s.observe(&at_first(priced(CostSource::Estimated)));
        s.observe(&at_first(priced(CostSource::Conservative)));
        assert_eq!(s.cost_source, Some(CostSource::Conservative));
        assert_eq!(s.cost(), Some(0.5));
        s.observe(&at_first(EventKind::AgentResult(AgentResult {
            ok: true,
            message: None,
            tokens: None,
            cost_usd: Some(0.125),
            cost_source: Some(CostSource::Reported),
            cost_rejected: None,
            tokens_unreadable: false,
            tokens_partial: false,
            model_calls: None,
            duration_ms: None,
        })));
        assert_eq!(s.cost_source, Some(CostSource::Reported));
        assert_eq!(s.cost(), Some(0.125));
    }

    fn unreported_turn() -> EventKind {
        EventKind::TurnStarted {
            argv: vec!["codex".into()],
            pid: 1,
            planning: false,
            steps_unreported: true,
            prompt: None,
        }
    }

    fn result(tokens: Option<Tokens>, cost: Option<f64>) -> EventKind {
        EventKind::AgentResult(AgentResult {
            ok: tokens.is_some(),
            message: None,
            tokens,
            cost_usd: cost,
            cost_source: cost.map(|_| CostSource::Estimated),
            cost_rejected: None,
            tokens_unreadable: false,
            tokens_partial: false,
            model_calls: None,
            duration_ms: None,
        })
    }

    #[test]
    fn an_agent_that_reports_no_steps_has_them_unknown_and_its_tokens_known_from_its_result() {
        let mut s = RunStats::default();
        s.observe(&at_first(unreported_turn()));
        assert_eq!(s.steps(), None);
        assert!(s.tokens_incomplete(), "nothing is known before the result");
        let tokens = Tokens {
            input: 100,
            output: 5,
            ..Tokens::default()
        };
        s.observe(&at_first(result(Some(tokens), Some(0.01))));
        assert_eq!(
            s.steps(),
            None,
            "a result does not say how many calls it took"
        );
        assert_eq!(s.turns[0].steps, None);
        assert!(!s.tokens_incomplete());
        assert_eq!(s.tokens.total(), 105);
        assert_eq!(s.cost(), Some(0.01));
    }

    #[test]
    fn a_turn_that_ends_without_its_usage_leaves_tokens_and_cost_unknown_not_zero() {
        let mut s = RunStats::default();
        s.observe(&at_first(unreported_turn()));
        s.observe(&at_first(result(None, None)));
        assert!(s.tokens_incomplete());
        assert!(s.turns[0].tokens_unknown);
        assert_eq!(s.cost(), None);
        assert!(s.cost_incomplete());
        // An agent that prints its steps and made none has 0 of them, known; its tokens, like
        // its cost, are unknown (a model call may have been under way), never 0.
        let mut s = RunStats::default();
        s.observe(&at_first(EventKind::TurnStarted {
            argv: vec!["opencode".into()],
            pid: 1,
            planning: false,
            steps_unreported: false,
            prompt: None,
        }));
        assert_eq!(s.steps(), Some(0));
        assert!(s.tokens_incomplete());
        assert_eq!(s.cost(), None);
    }

    #[test]
    fn tool_tallies_count_errors_and_denials_per_name() {
        let mut s = RunStats::default();
        for status in [ToolStatus::Ok, ToolStatus::Error, ToolStatus::Denied] {
            s.observe(&at_first(EventKind::ToolCompleted(ToolEnd {
                call_id: "c".into(),
                name: "bash".into(),
                kind: ToolKind::Shell,
                input: "ls".into(),
                parent: None,
                status,
                error: None,
                output_bytes: None,
                duration_ms: None,
                input_hash: None,
                result_hash: None,
            })));
        }
        assert_eq!(
            s.tools["bash"],
            ToolTally {
                calls: 3,
                errors: 1,
                denied: 1
            }
        );
        assert_eq!(s.tool_calls, 3);
    }
}
