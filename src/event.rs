//! The universal event model: the only contract between agent adapters, the supervisor and consumers.
//!
//! Adapters turn an agent's native output into [`EventKind`]s; the supervisor stamps each with a
//! sequence number, a receive time and the turn it belongs to, making an [`Event`]; consumers (the
//! terminal view, the event log, `--json`, the receipt) only ever see `Event`s. The serialized form
//! is documented in `docs/events.md` and versioned by [`SCHEMA_VERSION`].

use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};

use crate::provenance::{EnvVarRecord, SettingRecord};

/// The finish grace a run has when nothing sets it (`finish_grace`): the wire format's default,
/// which the configuration takes from here.
pub(crate) const DEFAULT_FINISH_GRACE: Duration = Duration::from_secs(5);

/// Version of the serialized event and receipt schema. Bumped on any incompatible change.
pub const SCHEMA_VERSION: u32 = 1;

/// One universal event, as logged to `events.ndjson` and printed by `--json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Event {
    /// Position in the run, from 0, without gaps.
    pub seq: u64,
    /// When runbook received the line (or made the decision) behind this event.
    #[serde(with = "rfc3339")]
    #[schemars(with = "String", extend("format" = "date-time"))]
    pub ts: SystemTime,
    /// The agent invocation this event belongs to.
    pub turn: Turn,
    /// What happened: the `type` tag and its fields, at the top level of the serialized event.
    #[serde(flatten)]
    pub kind: EventKind,
}

/// An agent invocation within a run: the first starts a session, later ones resume it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Turn {
    /// 0 for the run's first invocation, then one more for each that followed (`--then`, the
    /// execution after `--plan`, a repair, the pass after a permission stall).
    pub index: u32,
    /// Whether this invocation started the agent's session or resumed it.
    pub kind: TurnKind,
}

impl Turn {
    /// The run's first turn, which starts the session.
    pub const FIRST: Turn = Turn {
        index: 0,
        kind: TurnKind::Start,
    };
}

/// How a turn reaches the agent's session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TurnKind {
    /// `start`: the turn started a new session.
    Start,
    /// `resume`: the turn continued the session of the turns before.
    Resume,
}

/// What happened. The `type` tag is dotted (`tool.completed`) so `jq 'select(.type == …)'` reads well.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(tag = "type")]
pub enum EventKind {
    /// Everything known about the run before the agent starts; the first event of every run.
    #[serde(rename = "run.started")]
    RunStarted(Box<RunInfo>),
    /// An agent process was started for a turn.
    #[serde(rename = "turn.started")]
    TurnStarted {
        /// The agent's command line: its program, then its arguments (secrets masked).
        argv: Vec<String>,
        /// The agent's process id, which leads its process group.
        pid: u32,
        /// A read-only planning turn of `--plan`: its final text is the plan, shown whole once
        /// it is proposed.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        planning: bool,
        /// The agent does not report its model calls as they happen, only the turn's total usage
        /// at its end (Codex): the turn's steps are unknown, and so are its tokens until that
        /// total arrives.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        steps_unreported: bool,
        /// The prompt the turn sends the agent (secrets masked): the task, a plan's, a
        /// repair's, a `--then` prompt or the request for a summary.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prompt: Option<String>,
    },
    /// The agent's own version, asked of its binary alongside the run.
    #[serde(rename = "agent.version")]
    AgentVersion {
        /// What the agent's `--version` printed, e.g. `1.14.25`.
        version: String,
        /// Present only when runbook was not tested with this version: the versions it was
        /// tested with. Its output may have changed in ways runbook misreads (`runbook doctor`).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tested_with: Vec<String>,
        /// Whether runbook was tested with this version: `tested`, `untested`, or `unknown` when
        /// runbook has no tested versions of this agent or cannot read a version number in what
        /// it printed. Absent in logs of older runbooks.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        fidelity: Option<Fidelity>,
    },
    /// The agent announced the session this run talks to (the id a resume needs).
    #[serde(rename = "session.started")]
    SessionStarted {
        /// The agent's own id for the session.
        session_id: String,
    },
    /// The agent named the model it runs (Claude Code's first line does), and how runbook can
    /// price it.
    #[serde(rename = "model.announced")]
    ModelAnnounced {
        /// The model, as the agent names it.
        model: String,
        /// Where runbook's price for it comes from.
        price: PriceBasis,
    },
    /// The agent said whether its own sandbox is on (Claude Code 2.1.332 on: `sandbox_enabled`
    /// in its first line). The agent's sandbox, not runbook's: it confines the agent's own tools
    /// by the agent's settings.
    #[serde(rename = "agent.sandbox")]
    AgentSandbox {
        /// Whether the agent runs its tools in its own sandbox.
        enabled: bool,
    },
    /// The agent began one model request/response cycle.
    #[serde(rename = "step.started")]
    StepStarted {
        /// The agent's id for the step (its message id), when it gives one.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<String>,
    },
    /// A step ended; tokens and cost are for this step only.
    #[serde(rename = "step.finished")]
    StepFinished(StepUsage),
    /// A complete piece of the agent's answer text.
    #[serde(rename = "text")]
    Text {
        /// The text, as the agent wrote it (secrets masked).
        text: String,
    },
    /// A fragment of answer text as it streams, before the complete `text` event that repeats it.
    /// Only from agents that stream (Claude Code with partial messages).
    #[serde(rename = "text.delta")]
    TextDelta {
        /// The fragment, to be appended to the ones before it.
        text: String,
    },
    /// A complete piece of the agent's visible reasoning.
    #[serde(rename = "reasoning")]
    Reasoning {
        /// The reasoning text, or its summary, as the agent shows it.
        text: String,
    },
    /// The agent called a tool; a `tool.completed` of the same `call_id` follows.
    #[serde(rename = "tool.started")]
    ToolStarted(ToolStart),
    /// A tool call ended: how, and how long it took.
    #[serde(rename = "tool.completed")]
    ToolCompleted(ToolEnd),
    /// The agent handed work to a subagent (a child session).
    #[serde(rename = "subagent.started")]
    SubagentStarted {
        /// The subagent's own session, when the agent names it.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        session_id: Option<String>,
        /// The tool call that started it.
        call_id: String,
        /// What it was asked to do, in a line.
        description: String,
    },
    /// A subagent handed its work back (or failed).
    #[serde(rename = "subagent.finished")]
    SubagentFinished {
        /// The tool call that started it.
        call_id: String,
        /// How its call ended.
        status: ToolStatus,
        /// The first line of what it handed back, or of its error.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// The agent wanted to do something and was not allowed to.
    #[serde(rename = "permission.denied")]
    PermissionDenied {
        /// The tool that was refused, as the agent names it (`bash`, `Write`).
        tool: String,
        /// What it was called on: the command, the path.
        detail: String,
        /// The refused tool call, when the agent names it: a call already counted as failed is
        /// then counted as denied instead.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
    },
    /// An agent over ACP asked permission before a tool call; `permission.answered` follows.
    #[serde(rename = "permission.requested")]
    PermissionRequested {
        /// The tool call it is about.
        call_id: String,
        /// The tool, as the agent names it.
        tool: String,
        /// What it is called on, in a line.
        input: String,
        /// The kinds of the options offered (`allow_once`, `allow_always`, `reject_once`, …).
        options: Vec<String>,
    },
    /// runbook's answer to a `permission.requested`. A refusal is also a `permission.denied`.
    #[serde(rename = "permission.answered")]
    PermissionAnswered {
        /// The tool call it is about.
        call_id: String,
        /// The tool, as the agent names it.
        tool: String,
        /// What it is called on, in a line.
        input: String,
        /// Whether the call may go ahead.
        allowed: bool,
        /// The kind of the option chosen; absent when none fit (the request was cancelled).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        option: Option<String>,
        /// Who answered.
        by: PermissionAnswerer,
    },
    /// The model provider failed a request (after the agent's own retries, if it reports them).
    #[serde(rename = "provider.error")]
    ProviderError(ProviderError),
    /// A provider request failed and the agent is about to retry it.
    #[serde(rename = "provider.retry")]
    ProviderRetry(ProviderRetry),
    /// The agent's own final word on the turn: whether it succeeded, and its authoritative totals
    /// (they replace the sum of the turn's steps).
    #[serde(rename = "agent.result")]
    AgentResult(AgentResult),
    /// The plan the planning turn ended on (`--plan`): its final text, revision 0 first.
    #[serde(rename = "plan.proposed")]
    PlanProposed {
        /// 0 for the first plan, then one more for each revision asked for.
        revision: u32,
        /// The plan, in Markdown.
        text: String,
    },
    /// What was decided about the plan, by a person at the prompt or by runbook (`--yes`, no
    /// terminal, `--plan-only`).
    #[serde(rename = "plan.decided")]
    PlanDecided(PlanDecision),
    /// A project check (`--check NAME=CMD`) began, after the task (attempt 0).
    #[serde(rename = "check.started")]
    CheckStarted {
        /// 0 after the task, then the repair attempt it follows.
        attempt: u32,
        /// The check's name (`test`).
        name: String,
        /// What runs, with `sh -c`.
        command: String,
    },
    /// A project check ended.
    #[serde(rename = "check.finished")]
    CheckFinished(CheckResult),
    /// The task completed but checks failed: the same session is asked to fix them (a turn
    /// follows, then the checks again, as this attempt).
    #[serde(rename = "repair.started")]
    RepairStarted {
        /// 1 for the first attempt.
        attempt: u32,
        /// The checks that failed, which the prompt holds.
        failing: Vec<String>,
        /// What all repair attempts together may still spend, with `--max-cost`.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            serialize_with = "crate::money::usd_opt"
        )]
        budget_usd: Option<f64>,
    },
    /// Repair is over, and why.
    #[serde(rename = "repair.finished")]
    RepairFinished {
        /// How many attempts were made.
        attempts: u32,
        /// Why repair stopped.
        stopped: RepairStop,
    },
    /// A turn ended after the agent's tools were refused permission (run headless, it cannot
    /// ask): what was refused, and whether the session gets one more pass that asks the agent to
    /// reach the goal without it (`--retry-denied`). The next turn is that pass.
    #[serde(rename = "permission.stalled")]
    PermissionStalled {
        /// The operations refused during the turn.
        denied: Vec<Denial>,
        /// Whether the next turn is the pass (`--retry-denied`, once per run).
        retry: bool,
        /// What the pass may spend: what is left of the repair budget.
        #[serde(
            default,
            skip_serializing_if = "Option::is_none",
            serialize_with = "crate::money::usd_opt"
        )]
        budget_usd: Option<f64>,
    },
    /// The agent warned about something that does not stop it.
    #[serde(rename = "agent.warning")]
    AgentWarning {
        /// The warning, as the agent worded it.
        message: String,
    },
    /// The agent reported a failure of its own that is not the provider's.
    #[serde(rename = "agent.error")]
    AgentError {
        /// The agent's name for the error (`UnknownError`).
        name: String,
        /// The error, as the agent worded it.
        message: String,
    },
    /// What an observer (`--on-event`, `--events-to`) was given and missed, just before the run
    /// ends.
    #[serde(rename = "observer.finished")]
    ObserverFinished(ObserverReport),
    /// An observer stopped taking events for good (it exited, closed its input, could not be
    /// written to), said once, as soon as runbook noticed; the run goes on without it.
    #[serde(rename = "observer.failed")]
    ObserverFailed {
        /// 1-based, as in `observer.finished`.
        index: u32,
        /// The command or path.
        target: String,
        /// Why, with the cause when it is known (the last line it wrote to stderr).
        problem: String,
    },
    /// A line the agent wrote to stderr (colour codes removed).
    #[serde(rename = "stderr")]
    Stderr {
        /// The line, without its newline.
        line: String,
    },
    /// A stdout line the adapter could not read; kept bounded.
    #[serde(rename = "unparsed")]
    Unparsed(Unparsed),
    /// The agent went on after its final word on the turn (its result, or OpenCode's finished
    /// last step): the events of `what` it printed follow, counted like any others. Said by
    /// runbook, for each tool call or step and for the first text.
    #[serde(rename = "after_final_word")]
    AfterFinalWord {
        /// What the agent did after its final word.
        what: Late,
        /// Which one: the tool and its input, or the step.
        detail: String,
    },
    /// The agent has been quiet for a while; the watchdog will fire if it stays so.
    #[serde(rename = "watchdog.warning")]
    WatchdogWarning {
        /// How long the agent has been quiet, in milliseconds.
        quiet_ms: u64,
        /// After how long without activity it is stopped (`--inactivity-timeout`), in
        /// milliseconds.
        timeout_ms: u64,
    },
    /// Activity withdrew the watchdog's warning: the agent is no longer quiet.
    #[serde(rename = "watchdog.resumed")]
    WatchdogResumed {
        /// The sign of life that withdrew it.
        by: ActivitySign,
        /// The share of one core the agent's process tree used over the last CPU sample, in
        /// percent, when that was the sign (`by` is `cpu`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cpu_percent: Option<u32>,
    },
    /// The watchdog decided the agent hung and is stopping it.
    #[serde(rename = "watchdog.fired")]
    WatchdogFired(Box<Diagnostic>),
    /// The agent is doing the same thing again and again (`--stuck`): a warning; the run goes on.
    #[serde(rename = "stuck.warning")]
    StuckWarning(Box<Stuck>),
    /// The agent went round in circles until a stop threshold (`--stuck stop`): it is stopped,
    /// and the run ends `stuck`.
    #[serde(rename = "stuck.detected")]
    StuckDetected(Box<Stuck>),
    /// Stopped for going round in circles, the agent is nudged once (`--stuck nudge`): its
    /// session goes on with a prompt that says what it repeated (the next `turn.started`).
    #[serde(rename = "stuck.nudged")]
    StuckNudged(Box<Stuck>),
    /// Under `--sandbox`: the agent's tool (or the agent itself, on stderr) was refused an
    /// operation, as far as runbook can tell from its error (`Permission denied`, `EACCES`,
    /// `Operation not permitted`). A refusal a program does not print is not seen.
    #[serde(rename = "sandbox.denied")]
    SandboxDenied {
        /// The tool call refused; absent when the agent said so on stderr.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        call_id: Option<String>,
        /// The tool's name, or `stderr`.
        source: String,
        /// The error, its first line (secrets masked).
        detail: String,
    },
    /// runbook decided to stop the agent for a reason other than the watchdog.
    #[serde(rename = "stop.requested")]
    StopRequested {
        /// The outcome the run will have: `budget_exceeded`, `timed_out`, `interrupted`, ….
        reason: Outcome,
        /// Why, in a sentence.
        message: String,
    },
    /// A write to the run directory failed (`path`, with the OS error): what happens from here on
    /// can no longer be recorded, so runbook stops the agent and the run ends as `storage_error`.
    /// The event log itself may be the file that failed, so this event may be missing from it.
    #[serde(rename = "storage.failed")]
    StorageFailed {
        /// The file that could not be written.
        path: String,
        /// The operating system's error.
        error: String,
    },
    /// runbook sent a signal to the agent's process tree.
    #[serde(rename = "signal.sent")]
    SignalSent {
        /// `SIGTERM` or `SIGKILL`.
        signal: String,
        /// How many processes it was sent to.
        processes: u32,
    },
    /// The turn ended with the agent having finished its work. Exactly one of this or
    /// `turn.failed` per turn, after the turn's last tool call.
    #[serde(rename = "turn.completed")]
    TurnCompleted {
        /// How the agent's process exited.
        exit: ExitInfo,
    },
    /// The turn ended without the agent finishing its work. Exactly one of this or
    /// `turn.completed` per turn.
    #[serde(rename = "turn.failed")]
    TurnFailed {
        /// How the turn ended.
        outcome: Outcome,
        /// Why, in a sentence.
        message: String,
        /// How the agent's process exited.
        exit: ExitInfo,
    },
    /// The run's directory could not be uploaded to object storage (`--upload`), each request
    /// having had its retries; the only event after `run.finished`. The local copy is whole and
    /// the exit code is the run's own.
    #[serde(rename = "upload.failed")]
    UploadFailed(UploadFailure),
    /// What the run changed in its git repository since it started, just before it ends.
    #[serde(rename = "changes")]
    Changes(Changes),
    /// What the whole run did, just before it ends: the task's answer, then what each repair
    /// changed; or, for a run that did not complete, how it ended in runbook's words.
    #[serde(rename = "summary")]
    Summary {
        /// A few sentences on one line, for the whole run. A completed run: the answer of the
        /// task's last turn (trimmed), then each repair attempt's answer labelled `Repair:` (or
        /// `Repair 1:`, `Repair 2:`…); with `--summary`, the agent's answer to that question
        /// instead. A run that did not complete (or `--plan-only`): `verdict`, followed with
        /// `--summary` by the agent's summary labelled as such. Older runs' summaries are the
        /// last turn's answer, whichever turn that was (a repair's, or a plan's).
        text: String,
        /// Whether the agent was asked for it in a turn of its own.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        asked: bool,
        /// The answer of the task's last turn, trimmed (not a plan, a repair or `--summary`);
        /// absent when the task never ran or said nothing.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        task: Option<String>,
        /// Each repair attempt's answer, trimmed, in order (the first is attempt 1; empty when
        /// that attempt said nothing).
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        repairs: Vec<String>,
        /// How a run that did not complete ended, in runbook's words (`The plan was not
        /// approved; nothing was run.`, `Checks failed after 2 repair attempts: test`); `text`
        /// begins with it instead of quoting the agent.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        verdict: Option<String>,
    },
    /// The last event of every run.
    #[serde(rename = "run.finished")]
    RunFinished {
        /// How the run ended.
        outcome: Outcome,
        /// Why, in a sentence.
        message: String,
        /// How long the whole run took, in milliseconds.
        duration_ms: u64,
        /// How the last agent process exited.
        exit: ExitInfo,
    },
}

impl EventKind {
    /// The serialized `type` tag, for diagnostics and summaries.
    pub fn type_name(&self) -> &'static str {
        match self {
            EventKind::RunStarted(_) => "run.started",
            EventKind::TurnStarted { .. } => "turn.started",
            EventKind::AgentVersion { .. } => "agent.version",
            EventKind::SessionStarted { .. } => "session.started",
            EventKind::ModelAnnounced { .. } => "model.announced",
            EventKind::AgentSandbox { .. } => "agent.sandbox",
            EventKind::StepStarted { .. } => "step.started",
            EventKind::StepFinished(_) => "step.finished",
            EventKind::Text { .. } => "text",
            EventKind::TextDelta { .. } => "text.delta",
            EventKind::Reasoning { .. } => "reasoning",
            EventKind::ToolStarted(_) => "tool.started",
            EventKind::ToolCompleted(_) => "tool.completed",
            EventKind::SubagentStarted { .. } => "subagent.started",
            EventKind::SubagentFinished { .. } => "subagent.finished",
            EventKind::PermissionDenied { .. } => "permission.denied",
            EventKind::PermissionRequested { .. } => "permission.requested",
            EventKind::PermissionAnswered { .. } => "permission.answered",
            EventKind::ProviderError(_) => "provider.error",
            EventKind::ProviderRetry(_) => "provider.retry",
            EventKind::AgentResult(_) => "agent.result",
            EventKind::PlanProposed { .. } => "plan.proposed",
            EventKind::PlanDecided(_) => "plan.decided",
            EventKind::CheckStarted { .. } => "check.started",
            EventKind::CheckFinished(_) => "check.finished",
            EventKind::RepairStarted { .. } => "repair.started",
            EventKind::RepairFinished { .. } => "repair.finished",
            EventKind::PermissionStalled { .. } => "permission.stalled",
            EventKind::ObserverFinished(_) => "observer.finished",
            EventKind::ObserverFailed { .. } => "observer.failed",
            EventKind::UploadFailed(_) => "upload.failed",
            EventKind::Changes(_) => "changes",
            EventKind::Summary { .. } => "summary",
            EventKind::AgentWarning { .. } => "agent.warning",
            EventKind::AgentError { .. } => "agent.error",
            EventKind::Stderr { .. } => "stderr",
            EventKind::Unparsed(_) => "unparsed",
            EventKind::AfterFinalWord { .. } => "after_final_word",
            EventKind::WatchdogWarning { .. } => "watchdog.warning",
            EventKind::WatchdogResumed { .. } => "watchdog.resumed",
            EventKind::WatchdogFired(_) => "watchdog.fired",
            EventKind::StuckWarning(_) => "stuck.warning",
            EventKind::StuckDetected(_) => "stuck.detected",
            EventKind::StuckNudged(_) => "stuck.nudged",
            EventKind::SandboxDenied { .. } => "sandbox.denied",
            EventKind::StopRequested { .. } => "stop.requested",
            EventKind::StorageFailed { .. } => "storage.failed",
            EventKind::SignalSent { .. } => "signal.sent",
            EventKind::TurnCompleted { .. } => "turn.completed",
            EventKind::TurnFailed { .. } => "turn.failed",
            EventKind::RunFinished { .. } => "run.finished",
        }
    }

    /// Whether this event is something the agent itself said (as opposed to runbook's own bookkeeping).
    pub fn is_from_agent(&self) -> bool {
        !matches!(
            self,
            EventKind::RunStarted(_)
                | EventKind::TurnStarted { .. }
                | EventKind::AgentVersion { .. }
                | EventKind::WatchdogWarning { .. }
                | EventKind::WatchdogResumed { .. }
                | EventKind::WatchdogFired(_)
                | EventKind::StuckWarning(_)
                | EventKind::StuckDetected(_)
                | EventKind::StuckNudged(_)
                | EventKind::SandboxDenied { .. }
                | EventKind::StopRequested { .. }
                | EventKind::SignalSent { .. }
                | EventKind::StorageFailed { .. }
                | EventKind::TurnCompleted { .. }
                | EventKind::TurnFailed { .. }
                | EventKind::RunFinished { .. }
                | EventKind::PlanProposed { .. }
                | EventKind::PlanDecided(_)
                | EventKind::CheckStarted { .. }
                | EventKind::CheckFinished(_)
                | EventKind::RepairStarted { .. }
                | EventKind::RepairFinished { .. }
                | EventKind::PermissionStalled { .. }
                | EventKind::ObserverFinished(_)
                | EventKind::ObserverFailed { .. }
                | EventKind::Changes(_)
                | EventKind::UploadFailed(_)
                | EventKind::Summary { .. }
                | EventKind::AfterFinalWord { .. }
                | EventKind::PermissionAnswered { .. }
        )
    }
}

/// An upload of a run's directory that failed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct UploadFailure {
    /// Where the run was to go, with any credential in the URL masked.
    pub url: String,
    /// Why it failed, in a sentence.
    pub error: String,
}

/// The git repository a run's agent worked in, as the run found it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct GitStart {
    /// The repository's root directory.
    pub root: String,
    /// The commit checked out; absent in a repository without commits yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    /// The branch checked out; absent on a detached HEAD.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub branch: Option<String>,
    /// Whether there were uncommitted changes or untracked files already.
    pub dirty: bool,
}

/// What a run changed in its repository since it started: the agent's commits, its uncommitted
/// edits and its new files, all against the commit it started from. Files that were already
/// changed at the start count only if the run changed them again (their lines then include the
/// earlier changes).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Changes {
    /// How many files changed, were added or were deleted.
    pub files_changed: u32,
    /// Lines added (binary files count none).
    pub insertions: u64,
    /// Lines removed.
    pub deletions: u64,
    /// The changed paths, relative to the repository's root, sorted; at most 200.
    pub paths: Vec<String>,
    /// How many commits the run added on top of the one it started from.
    pub commits_total: u32,
    /// Those commits, oldest first; at most 50.
    pub commits: Vec<Commit>,
}

/// A commit a run added.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Commit {
    /// Its full hash.
    pub id: String,
    /// Its subject line.
    pub subject: String,
}

/// What one observer was given and missed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObserverReport {
    /// 1-based: `--on-event` commands in the order given, then `--events-to`.
    pub index: u32,
    /// The command, or the path the events went to.
    pub target: String,
    /// Events taken into its queue.
    pub queued: u64,
    /// Events written to it by the time of this report.
    pub written: u64,
    /// Events it missed: its queue was full, or a FIFO had no reader or no room.
    pub dropped: u64,
    /// Events whose callback panicked (a program's observer): caught, and the next events still
    /// came.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub panics: u64,
    /// Why it got no more events, if it stopped taking them (it exited, closed its input).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
    /// A command's output logs (`observers/<index>.std{out,err}.log`): their cap, and what was
    /// cut from them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub log: Option<ObserverLog>,
}

/// What a command observer's output logs kept.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ObserverLog {
    /// The most each of its two logs holds: its first bytes, a line saying how many were cut,
    /// and its last bytes.
    pub cap_bytes: u64,
    /// The bytes of its output left out of its logs, by the time of this report.
    pub cut_bytes: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// An operation of the agent's that was refused permission.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Denial {
    /// The tool that was refused, as the agent names it.
    pub tool: String,
    /// What it was called on: the command, the path.
    pub detail: String,
}

/// Why repair stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum RepairStop {
    /// The checks pass.
    Passed,
    /// `--repair-attempts` were made and checks still fail.
    AttemptsExhausted,
    /// An attempt left exactly the same failures as the one before (times and paths aside).
    SameFailures,
    /// The repair budget was spent: the agent was stopped mid-attempt.
    Budget,
    /// The agent's repair turn did not complete.
    AgentFailed,
    /// The agent went round in circles during an attempt and was stopped (`--stuck`).
    Stuck,
    /// Ctrl-C (or SIGTERM/SIGHUP to runbook).
    Interrupted,
    /// The run reached its `--timeout`.
    TimedOut,
}

impl RepairStop {
    /// Why repair stopped, in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            RepairStop::Passed => "the checks pass",
            RepairStop::AttemptsExhausted => "every attempt was made",
            RepairStop::SameFailures => "the last attempt left the same failures",
            RepairStop::Budget => "its budget was spent",
            RepairStop::AgentFailed => "the agent's repair turn did not complete",
            RepairStop::Stuck => "the agent went round in circles and was stopped",
            RepairStop::Interrupted => "it was interrupted",
            RepairStop::TimedOut => "the run reached its --timeout",
        }
    }
}

/// How a project check went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CheckResult {
    /// 0 for the checks after the task.
    pub attempt: u32,
    /// The check's name (`test`).
    pub name: String,
    /// Run with `sh -c` in the agent's working directory.
    pub command: String,
    /// It exited 0 within its timeout.
    pub passed: bool,
    /// How its process exited.
    pub exit: ExitInfo,
    /// It outlived its timeout and was ended with its whole tree.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub timed_out: bool,
    /// How long it ran, in milliseconds.
    pub duration_ms: u64,
    /// Bytes of output, stdout and stderr together.
    pub output_bytes: u64,
    /// The last lines of its output (at most 80).
    pub tail: Vec<String>,
    /// Its whole output, in the run directory.
    pub log: String,
    /// Why it could not be run at all.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl CheckResult {
    /// Why the check could not run at all, when it could not: it could not be started, or the
    /// shell found no command to run (exit 127) or could not run it (exit 126). Such a check says
    /// nothing of the code, so there is nothing for a repair to fix.
    pub(crate) fn could_not_run(&self) -> Option<String> {
        if let Some(error) = &self.error {
            return Some(error.clone());
        }
        match self.exit.code {
            Some(127) => Some("exit 127: its command was not found".to_owned()),
            Some(126) => Some("exit 126: its command could not be run".to_owned()),
            _ => None,
        }
    }
}

/// What the agent printed after its final word.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Late {
    /// Text (or reasoning): the outcome stands.
    Text,
    /// A tool call: work the final word did not account for.
    Tool,
    /// A model call (a step, or another result).
    Step,
}

impl Late {
    /// How a message names it: `text`, `a tool call`, `a model call`.
    pub fn as_str(self) -> &'static str {
        match self {
            Late::Text => "text",
            Late::Tool => "a tool call",
            Late::Step => "a model call",
        }
    }
}

/// A decision about a proposed plan.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PlanDecision {
    /// What was decided.
    pub decision: Decision,
    /// Who decided: `person` at the prompt, or `auto` (`--yes`, no terminal, `--plan-only`).
    pub by: DecidedBy,
    /// What the person asked to change (for `revise`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub feedback: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
/// What to do with a proposed plan.
pub enum Decision {
    /// `execute`: carry the plan out, in the same session.
    Execute,
    /// `revise`: plan again, with the person's feedback.
    Revise,
    /// `abort`: end the run without executing anything.
    Abort,
    /// `--plan-only`: the run ends with the plan.
    Stop,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
/// Who decided about a plan.
pub enum DecidedBy {
    /// `person`: someone at the terminal's prompt.
    Person,
    /// `auto`: runbook, as `--yes`, no terminal or `--plan-only` say.
    Auto,
}

/// The run's identity and settings, carried by `run.started` so that any reader of the log can
/// rebuild the receipt without another source.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RunInfo {
    /// The version of this schema ([`SCHEMA_VERSION`]) the log was written with.
    pub schema_version: u32,
    /// The run's id: its start time and a random part (`20261124-101502-4kq2w`), the name of its directory.
    pub run_id: String,
    /// The version of runbook that ran it.
    pub runbook_version: String,
    /// The agent: `opencode`, `claude`, `codex`, or `custom` for `--agent-cmd`.
    pub agent: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The model asked for, as the agent names it, or the one the agent's own configuration
    /// file names (see `model_file`); absent: the agent's own default, unknown beforehand.
    pub model: Option<String>,
    /// The agent's configuration file `model` was read from (Codex's `config.toml`), when runbook
    /// did not ask for a model: the agent uses that one, and runbook prices it. Absent when the
    /// model was asked for (`-m`, the `model` setting) or is unknown.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_file: Option<String>,
    /// The task's prompt (secrets masked).
    pub prompt: String,
    /// The directory the agent worked in.
    pub cwd: String,
    /// The run's directory: its log, raw output, checks and receipt.
    pub run_dir: String,
    /// The run's name (`--name`), for observers and people; absent: the run id is its name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The git repository the agent worked in, as the run found it; absent outside one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git: Option<Box<GitStart>>,
    /// The supervising runbook process.
    pub pid: u32,
    /// When that process started (clock ticks since boot, from `/proc`), so that a reused pid is
    /// not mistaken for a live supervisor.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid_start: Option<u64>,
    /// The limits the run was held to.
    pub limits: Limits,
    /// The settings that did not come from runbook's defaults, and where each was set.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub settings: Vec<SettingRecord>,
    /// The variables runbook set for the agent, and where each came from (never their values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<EnvVarRecord>,
    /// The sandbox the agent ran in (`--sandbox`); absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sandbox: Option<Sandbox>,
}

/// The sandbox in force for a run's agent, its checks and repair turns (`--sandbox`), as the
/// kernel enforced it: recorded in `run.started` and, with the refusals seen, in the receipt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Sandbox {
    /// What enforced it: `landlock` or `bwrap`.
    pub by: String,
    /// The kernel's Landlock ABI; absent under bubblewrap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abi: Option<u32>,
    /// Where writes were allowed (with all below), links resolved.
    pub write: Vec<String>,
    /// What could not be read (with all below), links resolved.
    pub read_deny: Vec<String>,
    /// The TCP ports connections were allowed to (none listed when ports were not enforced).
    pub ports: Vec<u16>,
    /// What the sandbox's promise holds that this enforcer did not keep (bubblewrap: `tcp
    /// ports`, `signals outside the run`, `abstract unix sockets`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub not_enforced: Vec<String>,
    /// How many refusals runbook saw (`sandbox.denied`); 0 in `run.started`.
    #[serde(default)]
    pub denied: u64,
}

/// The limits a run is held to: recorded in `run.started` and the receipt, and kept by the
/// supervisor. Durations are whole milliseconds on the wire.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Limits {
    /// The agent is stopped after this long without any activity.
    #[serde(rename = "inactivity_timeout_ms", with = "ms")]
    #[schemars(with = "u64")]
    pub inactivity_timeout: Duration,
    /// How long the agent gets to exit after SIGTERM before SIGKILL.
    #[serde(rename = "kill_grace_ms", with = "ms")]
    #[schemars(with = "u64")]
    pub kill_grace: Duration,
    /// How long an agent that gave its final result may take to exit before it is ended. Logs
    /// written before it was recorded ran with the built-in default.
    #[serde(rename = "finish_grace_ms", with = "ms", default = "ms::finish_grace")]
    #[schemars(with = "u64")]
    pub finish_grace: Duration,
    /// The whole run's wall-clock limit.
    #[serde(
        rename = "timeout_ms",
        with = "ms::option",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    #[schemars(with = "Option<u64>")]
    pub timeout: Option<Duration>,
    /// The budget in US dollars.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::money::usd_opt"
    )]
    pub max_cost_usd: Option<f64>,
}

/// Whole milliseconds, saturating.
pub(crate) fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Durations as whole milliseconds.
mod ms {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(super::millis(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }

    /// What runs recorded before the finish grace was ran with: the setting's default.
    pub fn finish_grace() -> Duration {
        super::DEFAULT_FINISH_GRACE
    }

    pub mod option {
        use std::time::Duration;

        use serde::{Deserialize, Deserializer, Serializer};

        pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
            match d {
                Some(d) => s.serialize_some(&super::super::millis(*d)),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
            Ok(Option::<u64>::deserialize(d)?.map(Duration::from_millis))
        }
    }
}

/// Tokens by kind. `input` excludes cached input, which is counted in `cache_read`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct Tokens {
    /// Input tokens not read from the prompt cache (those are `cache_read`).
    pub input: u64,
    /// Output tokens, reasoning not included (that is `reasoning`).
    pub output: u64,
    /// Reasoning tokens, apart from `output`, when the agent tells them apart.
    pub reasoning: u64,
    /// Input tokens read from the provider's prompt cache.
    pub cache_read: u64,
    /// Input tokens written to the provider's prompt cache.
    pub cache_write: u64,
}

impl Tokens {
    /// All kinds together. Counts are the agent's word: absurd ones saturate, never wrap.
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.reasoning)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    /// Adds `other`'s counts to these.
    pub fn add(&mut self, other: &Tokens) {
        self.input = self.input.saturating_add(other.input);
        self.output = self.output.saturating_add(other.output);
        self.reasoning = self.reasoning.saturating_add(other.reasoning);
        self.cache_read = self.cache_read.saturating_add(other.cache_read);
        self.cache_write = self.cache_write.saturating_add(other.cache_write);
    }
}

/// Whether a cost was reported by the agent or estimated by runbook from a price table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CostSource {
    /// `reported`: the agent said what it cost.
    Reported,
    /// `estimated`: runbook priced the tokens from its price table.
    Estimated,
    /// `conservative`: the model is not in runbook's price table, so runbook priced the tokens at
    /// its provider's most expensive known price (an upper bound, until the agent reports).
    Conservative,
}

/// Where runbook's price for a model comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PriceBasis {
    /// `table`: runbook's shipped price table (`docs/prices.md`).
    Table,
    /// `user`: the user's own `[prices]` configuration.
    User,
    /// `conservative`: not in the table; its provider's most expensive known price stands in.
    Conservative,
    /// `unknown`: not in the table, and its provider is not known either.
    Unknown,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
/// One model call's usage: what a step spent.
pub struct StepUsage {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The agent's id for the step (its message id), when it gives one.
    pub id: Option<String>,
    /// Why the model stopped: `stop`, `tool-calls`, `length`, … as the agent reports it.
    pub reason: String,
    /// The step's tokens.
    pub tokens: Tokens,
    /// USD for this step; absent when unknown (which is not zero).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::money::usd_opt"
    )]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Whether `cost_usd` was reported or estimated.
    pub cost_source: Option<CostSource>,
    /// The agent reported a cost runbook did not use, and why; `cost_usd` is then runbook's
    /// estimate from the tokens, or absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_rejected: Option<CostIssue>,
    /// Some token count the agent reported was not a whole number; it counts as 0.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tokens_unreadable: bool,
}

/// The most one run can plausibly cost, in USD: a reported cost above it, and a receipt's read
/// back, is not taken as an amount.
pub(crate) const MAX_COST_USD: f64 = 1e6;

/// Why a cost the agent reported was not used: a cost never lowers a total, and one that cannot
/// be read is not taken as zero.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum CostIssue {
    /// Below zero.
    Negative,
    /// Beyond any number (such as `1e400`).
    Infinite,
    /// Not a number at all: a string, an object, …
    Unreadable,
}

impl CostIssue {
    /// The issue, as in "the agent reported {a negative cost}".
    pub fn describe(self) -> &'static str {
        match self {
            CostIssue::Negative => "a negative cost",
            CostIssue::Infinite => {
                "an infinite cost (a number beyond any amount, or above $1e6 for one run)"
            }
            CostIssue::Unreadable => "a cost that is not a number",
        }
    }

    /// What a reported cost says: a usable amount in USD, or why it is not one. An amount above
    /// $1e6 is no amount one run spends: it counts as infinite.
    pub fn check(cost: f64) -> Result<f64, CostIssue> {
        if cost.is_nan() {
            Err(CostIssue::Unreadable)
        } else if cost < 0.0 {
            Err(CostIssue::Negative)
        } else if cost.is_infinite() || cost > MAX_COST_USD {
            Err(CostIssue::Infinite)
        } else {
            // No `-0`.
            Ok(cost + 0.0)
        }
    }
}

fn is_false(b: &bool) -> bool {
    !b
}

impl StepUsage {
    /// The step's cost, when it is a usable amount.
    pub fn usable_cost(&self) -> Option<f64> {
        self.cost_usd.and_then(|c| CostIssue::check(c).ok())
    }

    /// Why the cost the agent reported was not used (a cost runbook was given as unusable
    /// counts, from any agent).
    pub fn rejected(&self) -> Option<CostIssue> {
        self.cost_rejected
            .or_else(|| CostIssue::check(self.cost_usd?).err())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
/// A tool call as it starts.
pub struct ToolStart {
    /// The agent's id for the call, shared with its `tool.completed`.
    pub call_id: String,
    /// The tool's name as the agent calls it.
    pub name: String,
    /// What kind of tool it is, the same for every agent.
    #[serde(default)]
    pub kind: ToolKind,
    /// A short human summary of the input: a file path, a command, a pattern.
    pub input: String,
    /// The call id of the subagent this call was made by; absent for the main agent's calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
}

impl ToolStart {
    /// `bash cargo test`: the call's name and input, trimmed, written into `out` (cleared
    /// first), whose memory a caller that does this for every call can keep.
    pub(crate) fn write_label(&self, out: &mut String) {
        out.clear();
        for part in [&self.name, " ", &self.input] {
            out.push_str(part);
        }
        out.truncate(out.trim_end().len());
        out.drain(..out.len() - out.trim_start().len());
    }

    /// The `tool.completed` of this call: its status, and nothing else known yet.
    pub fn end(self, status: ToolStatus) -> ToolEnd {
        ToolEnd {
            call_id: self.call_id,
            name: self.name,
            kind: self.kind,
            input: self.input,
            parent: self.parent,
            status,
            error: None,
            output_bytes: None,
            duration_ms: None,
            input_hash: None,
            result_hash: None,
        }
    }
}

/// What a tool does, whatever the agent names it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ToolKind {
    /// Reads a file.
    Read,
    /// Changes part of a file.
    Edit,
    /// Writes a whole file.
    Write,
    /// Runs a command.
    Shell,
    /// Searches files or their contents (grep, glob, list).
    Search,
    /// Fetches a URL or searches the web.
    Fetch,
    /// Hands work to a subagent.
    Subagent,
    /// Keeps the agent's to-do list.
    Todo,
    #[default]
    /// Anything else (MCP tools, unknown ones).
    Other,
}

impl ToolKind {
    /// The kind of a tool from its name in any of the agents runbook knows.
    pub fn of(name: &str) -> ToolKind {
        // Lower-cased on the stack when short (every tool call asks), on the heap otherwise.
        let mut buf = [0u8; 32];
        let lower = match buf.get_mut(..name.len()) {
            Some(buf) => {
                buf.copy_from_slice(name.as_bytes());
                buf.make_ascii_lowercase();
                std::borrow::Cow::Borrowed(std::str::from_utf8(buf).unwrap_or_default())
            }
            None => std::borrow::Cow::Owned(name.to_ascii_lowercase()),
        };
        match &*lower {
            "read" | "view" | "view_image" | "notebookread" => ToolKind::Read,
            "edit" | "multiedit" | "apply_patch" | "patch" | "notebookedit" | "str_replace" => {
                ToolKind::Edit
            }
            "write" => ToolKind::Write,
            "bash" | "shell" | "exec_command" | "local_shell" | "write_stdin" | "bashoutput" => {
                ToolKind::Shell
            }
            "grep" | "glob" | "list" | "ls" | "codesearch" | "websearch" | "web_search"
            | "tool_search" => ToolKind::Search,
            "webfetch" | "fetch" => ToolKind::Fetch,
            "task" | "agent" | "spawn_agent" | "wait_agent" | "wait" => ToolKind::Subagent,
            "todowrite" | "todoread" | "update_plan" => ToolKind::Todo,
            _ => ToolKind::Other,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
/// How a tool call ended.
pub enum ToolStatus {
    /// `ok`: it ran and succeeded.
    Ok,
    /// `error`: it ran and failed, or could not run.
    Error,
    /// `denied`: it was not allowed to run.
    Denied,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
/// A tool call as it ends.
pub struct ToolEnd {
    /// The agent's id for the call, shared with its `tool.started`.
    pub call_id: String,
    /// The tool's name as the agent calls it.
    pub name: String,
    #[serde(default)]
    /// What kind of tool it is, the same for every agent.
    pub kind: ToolKind,
    /// What it was called on, in a line: the path, the command, the pattern.
    pub input: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The subagent call it ran under, if any.
    pub parent: Option<String>,
    /// How it ended.
    pub status: ToolStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The first line of its error, when it failed.
    pub error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Bytes of output it returned, when the agent says.
    pub output_bytes: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// How long it took, in milliseconds, when the agent says (over ACP, as runbook timed it
    /// from reading the call's start to reading its end).
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The fingerprint of the call's whole input (its canonical JSON, keys sorted, hashed):
    /// equal for two calls with the same input. Only the hash is kept, never the input.
    pub input_hash: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The fingerprint of how the call ended: its status, exit code and output, with terminal
    /// escapes, durations, timestamps, temporary paths and process ids taken out, hashed.
    pub result_hash: Option<String>,
}

impl ToolEnd {
    /// The `tool.started` of this call.
    pub fn start(&self) -> ToolStart {
        ToolStart {
            call_id: self.call_id.clone(),
            name: self.name.clone(),
            kind: self.kind,
            input: self.input.clone(),
            parent: self.parent.clone(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
/// A failed request to the model provider.
pub struct ProviderError {
    /// The agent's name for the error (`APIError`, `rate_limit_error`).
    pub name: String,
    /// The error, as the provider or the agent worded it.
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The HTTP status of the failed request, when the agent says.
    pub status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Whether the provider said it may be retried, when the agent says.
    pub retryable: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
/// A retry of a failed provider request, about to happen.
pub struct ProviderRetry {
    /// Which retry this is, from 1.
    pub attempt: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// How many attempts the agent makes in all, when it says.
    pub max_attempts: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// How long the agent waits before the retry, in milliseconds, when it says.
    pub delay_ms: Option<u64>,
    /// The HTTP status of the failed request, when the agent says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// Why the request failed, as the agent worded it.
    pub message: String,
}

/// A permission an agent asked for over ACP, and the answer it got.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PermissionAsked {
    /// The tool, as the agent names it.
    pub tool: String,
    /// What it was called on, in a line.
    pub input: String,
    /// Whether it was allowed.
    pub allowed: bool,
    /// The kind of the option chosen (`allow_once`, `reject_once`, …); absent when none fit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub option: Option<String>,
    /// Who answered.
    pub by: PermissionAnswerer,
}

/// Who answered a permission request.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PermissionAnswerer {
    /// The `--permissions` policy, with nobody to ask.
    Policy,
    /// A person at the terminal, by a key.
    Person,
    /// Nobody answered within `--permission-timeout`: refused.
    Timeout,
}

/// An ACP permission option's kind (`allow_once`, `reject_always`, …) in the words a person reads;
/// `None` for a kind the protocol does not define.
pub(crate) fn permission_option_words(kind: &str) -> Option<&'static str> {
    match kind {
        "allow_once" => Some("allow once"),
        "allow_always" => Some("always allow"),
        "reject_once" => Some("reject"),
        "reject_always" => Some("always reject"),
        _ => None,
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
/// The agent's own final word on a turn.
pub struct AgentResult {
    /// Whether the agent says it finished its work.
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Its final message or error, when it gives one.
    pub message: Option<String>,
    /// The turn's tokens, all model calls included (subagents' too, when the agent counts them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<Tokens>,
    /// The turn's cost in USD; absent when unknown (which is not zero).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::money::usd_opt"
    )]
    pub cost_usd: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// Whether `cost_usd` was reported or estimated.
    pub cost_source: Option<CostSource>,
    /// The agent reported a total cost runbook did not use, and why; `cost_usd` is then
    /// runbook's estimate from the tokens, or absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_rejected: Option<CostIssue>,
    /// Some token count the agent reported was not a whole number; it counts as 0.
    #[serde(default, skip_serializing_if = "is_false")]
    pub tokens_unreadable: bool,
    /// `tokens` are only part of the turn's, a lower bound: the agent told the usage of its last
    /// model call and the turn made more (OpenCode over ACP), or left out its subagents' (Claude
    /// Code's ACP adapter).
    #[serde(default, skip_serializing_if = "is_false")]
    pub tokens_partial: bool,
    /// How many model calls the agent made, when it says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_calls: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// How long the agent says the turn took, in milliseconds.
    pub duration_ms: Option<u64>,
}

impl AgentResult {
    /// The turn's cost, when it is a usable amount.
    pub fn usable_cost(&self) -> Option<f64> {
        self.cost_usd.and_then(|c| CostIssue::check(c).ok())
    }

    /// Why the cost the agent reported was not used.
    pub fn rejected(&self) -> Option<CostIssue> {
        self.cost_rejected
            .or_else(|| CostIssue::check(self.cost_usd?).err())
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
/// Which of the agent's output streams a line came from.
pub enum Stream {
    /// Its standard output.
    Stdout,
    /// Its standard error.
    Stderr,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
/// Why a line could not be read.
pub enum UnparsedReason {
    /// Not JSON text at all (or nested too deeply to read).
    NotJson,
    /// Not UTF-8.
    NotUtf8,
    /// Longer than the longest line runbook reads (4 MiB); only its head is kept.
    TooLong,
    /// A JSON object whose `type` the adapter does not know.
    UnknownType,
    /// Valid JSON, but not what the agent's lines look like: not an object, or a field of the
    /// wrong type.
    UnexpectedJson,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
/// An output line the adapter could not read.
pub struct Unparsed {
    /// The stream it came from.
    pub stream: Stream,
    /// Why it could not be read.
    pub reason: UnparsedReason,
    /// Length of the whole line in bytes.
    pub bytes: u64,
    /// The start of the line, lossily decoded, at most [`UNPARSED_HEAD_BYTES`].
    pub head: String,
}

/// How much of an unreadable line is kept.
pub const UNPARSED_HEAD_BYTES: usize = 256;

/// What the agent repeated, and how often (`stuck.warning`, `stuck.detected`, the receipt).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Stuck {
    /// The rule that saw it.
    pub rule: StuckRule,
    /// How many times in a row the agent did it (for `ping_pong`, the calls of the cycles).
    pub count: u32,
    /// The tool it called, when the rule is about tool calls.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    /// What it called the tool on, in a short line (secrets masked).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input: Option<String>,
    /// The event of the first repetition.
    pub first_seq: u64,
    /// The event of the last.
    pub last_seq: u64,
    /// Whether the agent was nudged about going round in circles (`--stuck nudge`): on
    /// `stuck.nudged`, and on whatever is said of it after.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub nudged: bool,
}

/// A way of going round in circles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StuckRule {
    /// The same tool call with the same result, one after another.
    Repeat,
    /// The same shell command failing the same way within a turn, whatever ran between.
    SameFailure,
    /// The same tool call ending in the same error, one after another.
    SameError,
    /// Two calls in turn (A, B, A, B, …), each with the same result as before.
    PingPong,
    /// Steps without a tool call, their text empty or the same.
    Monologue,
}

impl StuckRule {
    /// The rule as it is serialized and configured: `repeat`, `same_failure`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            StuckRule::Repeat => "repeat",
            StuckRule::SameFailure => "same_failure",
            StuckRule::SameError => "same_error",
            StuckRule::PingPong => "ping_pong",
            StuckRule::Monologue => "monologue",
        }
    }
}

/// How a run (or a turn) ended. Fail closed: only `completed` means the agent finished its work.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// The agent exited 0 after a finished final step.
    Completed,
    /// The stream ended mid-step, or on a step that asked for more tool calls.
    Truncated,
    /// The agent reported an error, or exited non-zero.
    AgentError,
    /// The agent died of a signal runbook did not send.
    Killed,
    /// The inactivity watchdog stopped the agent.
    Hung,
    /// `--max-cost` was crossed.
    BudgetExceeded,
    /// The agent went round in circles (the same call with the same result, the same failure
    /// again and again) and was stopped (`--stuck`).
    Stuck,
    /// `--timeout` was reached.
    TimedOut,
    /// Ctrl-C (or SIGTERM/SIGHUP to runbook).
    Interrupted,
    /// The plan was not approved (`--plan`): nothing was executed.
    Aborted,
    /// A write to the run directory failed (a full disk, a read-only filesystem): the run was
    /// stopped, since what it did could no longer be recorded.
    StorageError,
    /// The agent completed its task, but a project check (`--check`) failed the last time the
    /// checks ran.
    ChecksFailed,
    /// Not an ending: the run has no receipt yet and its supervisor is alive (`runbook status`).
    Running,
    /// The supervising runbook process is gone and left no receipt (it was killed).
    Abandoned,
}

impl Outcome {
    /// The outcome as it is serialized: `completed`, `agent_error`, ….
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Completed => "completed",
            Outcome::Truncated => "truncated",
            Outcome::AgentError => "agent_error",
            Outcome::Killed => "killed",
            Outcome::Hung => "hung",
            Outcome::BudgetExceeded => "budget_exceeded",
            Outcome::Stuck => "stuck",
            Outcome::TimedOut => "timed_out",
            Outcome::Interrupted => "interrupted",
            Outcome::Aborted => "aborted",
            Outcome::StorageError => "storage_error",
            Outcome::ChecksFailed => "checks_failed",
            Outcome::Running => "running",
            Outcome::Abandoned => "abandoned",
        }
    }
}

impl Outcome {
    /// Whether the run failed: not completed, still running, or ended by a person (the plan
    /// not approved, Ctrl-C) or with its output cut short.
    pub(crate) fn failed(self) -> bool {
        !matches!(
            self,
            Outcome::Completed
                | Outcome::Running
                | Outcome::Interrupted
                | Outcome::Truncated
                | Outcome::Aborted
        )
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// How the agent process ended: an exit code, or the signal that killed it.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
pub struct ExitInfo {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The exit code, when the process exited.
    pub code: Option<i32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The signal that killed it, when one did.
    pub signal: Option<i32>,
}

impl std::fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match (self.code, self.signal) {
            (Some(code), _) => write!(f, "exit {code}"),
            (None, Some(sig)) => write!(f, "killed by {}", signal_name(sig)),
            (None, None) => f.write_str("exit unknown"),
        }
    }
}

/// `SIGTERM` for 15, and so on; the number for anything unusual.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map_or_else(|_| format!("signal {sig}"), |s| s.as_str().to_owned())
}

/// How far runbook can vouch for its reading of the agent's output: whether it was tested with
/// the agent's version.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Fidelity {
    /// runbook's conformance and live suites run against this version of the agent.
    Tested,
    /// A version runbook was not tested with (a newer release, or a new major version): its
    /// output may have changed in ways runbook misreads.
    Untested,
    /// Not known: the agent's version could not be read, or runbook has no tested versions of
    /// this agent (`--agent-cmd`, an ACP agent).
    #[default]
    Unknown,
}

impl Fidelity {
    /// The word for it: `tested`, `untested`, `unknown`.
    pub fn word(self) -> &'static str {
        match self {
            Fidelity::Tested => "tested",
            Fidelity::Untested => "untested",
            Fidelity::Unknown => "unknown",
        }
    }
}

/// A sign of life the watchdog counts as activity.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ActivitySign {
    /// A line on the agent's stdout.
    Stdout,
    /// Output on the agent's stderr.
    Stderr,
    /// The agent's process tree used at least the watchdog's threshold of a core.
    Cpu,
}

/// Why the watchdog fired, in enough detail to act on without opening the logs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Diagnostic {
    /// The inactivity timeout that was reached, in milliseconds.
    pub timeout_ms: u64,
    /// How long each activity signal had been quiet.
    pub stdout_quiet_ms: u64,
    /// How long stderr had been quiet, in milliseconds.
    pub stderr_quiet_ms: u64,
    /// How long the agent's processes had used no CPU, in milliseconds.
    pub cpu_quiet_ms: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    /// The type of the agent's last event before it went quiet.
    pub last_event: Option<String>,
    /// The step in progress (1-based) when the watchdog fired, if one was open.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_step: Option<u32>,
    /// How many steps had finished; absent when unknown (an agent that does not report its
    /// model calls).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completed_steps: Option<u32>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "crate::money::usd_opt"
    )]
    /// What the run had cost by then, in USD, when known.
    pub cost_usd: Option<f64>,
    /// The agent's last lines on stderr.
    pub stderr_tail: Vec<String>,
    /// The tool call that was running (started, not ended) when it fired: its name and input.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_tool: Option<String>,
}

/// RFC 3339 timestamps with microseconds, in UTC.
pub mod rfc3339 {
    use std::time::SystemTime;

    use serde::{Deserialize, Deserializer, Serializer};

    thread_local! {
        /// The last time formatted: the events of one read share their receive time.
        static LAST: std::cell::RefCell<(SystemTime, String)> =
            const { std::cell::RefCell::new((SystemTime::UNIX_EPOCH, String::new())) };
    }

    /// Writes `ts` as RFC 3339 in UTC, to the microsecond.
    pub fn serialize<S: Serializer>(ts: &SystemTime, s: S) -> Result<S::Ok, S::Error> {
        LAST.with_borrow_mut(|(last, text)| {
            if *last != *ts || text.is_empty() {
                *last = *ts;
                text.clear();
                use std::fmt::Write as _;
                let _ = write!(text, "{}", humantime::format_rfc3339_micros(*ts));
            }
            s.serialize_str(text)
        })
    }

    /// Reads an RFC 3339 time.
    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<SystemTime, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        humantime::parse_rfc3339_weak(&s).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_kinds_ignore_case_whatever_the_name_length() {
        assert_eq!(ToolKind::of("Bash"), ToolKind::Shell);
        assert_eq!(ToolKind::of("NotebookRead"), ToolKind::Read);
        assert_eq!(ToolKind::of("TODOWRITE"), ToolKind::Todo);
        assert_eq!(ToolKind::of(""), ToolKind::Other);
        assert_eq!(ToolKind::of("bäsh"), ToolKind::Other);
        assert_eq!(ToolKind::of(&"x".repeat(100)), ToolKind::Other);
    }

    #[test]
    fn limits_are_milliseconds_on_the_wire_and_old_logs_get_the_default_finish_grace() {
        let old = r#"{"inactivity_timeout_ms":180000,"kill_grace_ms":10000,"timeout_ms":60000}"#;
        let limits: Limits = serde_json::from_str(old).unwrap();
        assert_eq!(limits.finish_grace, Duration::from_secs(5));
        assert_eq!(limits.timeout, Some(Duration::from_secs(60)));
        let json = serde_json::to_string(&limits).unwrap();
        assert_eq!(
            json,
            r#"{"inactivity_timeout_ms":180000,"kill_grace_ms":10000,"finish_grace_ms":5000,"timeout_ms":60000}"#
        );
    }

    #[test]
    fn events_round_trip_with_a_dotted_type_tag() {
        let ev = Event {
            seq: 7,
            ts: humantime::parse_rfc3339("2026-11-22T04:33:55.123456Z").unwrap(),
            turn: Turn {
                index: 1,
                kind: TurnKind::Resume,
            },
            kind: EventKind::ToolCompleted(ToolEnd {
                call_id: "call_1".into(),
                name: "read".into(),
                kind: ToolKind::Read,
                input: "README.md".into(),
                parent: None,
                status: ToolStatus::Error,
                error: Some("File not found".into()),
                output_bytes: None,
                duration_ms: Some(9),
                input_hash: None,
                result_hash: None,
            }),
        };
        let json = serde_json::to_string(&ev).unwrap();
        assert!(json.contains(r#""type":"tool.completed""#), "{json}");
        assert!(
            json.contains(r#""ts":"2026-11-22T04:33:55.123456Z""#),
            "{json}"
        );
        assert!(
            json.contains(r#""turn":{"index":1,"kind":"resume"}"#),
            "{json}"
        );
        let back: Event = serde_json::from_str(&json).unwrap();
        assert_eq!(back, ev);
    }
}
