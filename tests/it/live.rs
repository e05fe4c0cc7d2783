//! The conformance scenarios live: the real OpenCode, Claude Code and Codex CLIs, each run by the
//! real `runbook` binary against the project's fake provider for its API, must yield the same
//! normalized facts (see `conformance.rs`). Expected tokens and costs come from the usage each
//! fake served, priced independently of runbook's own table; `--then` resumes each agent's real
//! session.

use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::time::Duration;

use runbook::event::{CostSource, Event, EventKind, Outcome, ToolKind, ToolStatus, TurnKind};
use runbook::receipt::Receipt;
use serde_json::json;

use crate::conformance::{ALL, Expected, Scenario, assert_facts, facts};
use crate::support::sse::{self, canon};
use crate::support::{
    self, TestContext, fake_anthropic as anthropic, fake_llm as chat, fake_responses as responses,
};

/// Each run's limit: OpenCode alone takes 3–7 s to start on a small machine.
const LIMIT: Duration = Duration::from_secs(120);

/// A scenario ready to run: the work dir, the fake provider, and the runbook command.
pub(crate) struct Prepared {
    ctx: TestContext,
    /// The body of the last main-conversation model request (owns the fake provider).
    last_request: Box<dyn Fn() -> String>,
    /// Kept until the run is over (Codex's home, removed on drop).
    _home: Option<responses::CodexHome>,
    /// runbook's arguments, `run` first.
    args: Vec<String>,
    /// Arguments for the agent itself, after `--`.
    agent_args: Vec<String>,
    expected: Expected,
    /// The agent does not tell its subagents (codex-acp).
    subagents_hidden: bool,
    /// The tokens the fake provider served, as the agent counts them (all model calls for
    /// Claude Code, the main conversation's for Codex); absent for other agents.
    served_tokens: Option<Box<dyn Fn() -> u64>>,
}

impl Prepared {
    fn new(
        ctx: TestContext,
        last_request: Box<dyn Fn() -> String>,
        home: Option<responses::CodexHome>,
        args: Vec<&str>,
        expected: Expected,
    ) -> Prepared {
        Prepared {
            ctx,
            last_request,
            _home: home,
            args: args.into_iter().map(str::to_owned).collect(),
            agent_args: Vec::new(),
            expected,
            subagents_hidden: false,
            served_tokens: None,
        }
    }

    /// With the tokens the fake provider served, counted by `served`.
    fn served(mut self, served: impl Fn() -> u64 + 'static) -> Prepared {
        self.served_tokens = Some(Box::new(served));
        self
    }

    /// The same scenario over the Agent Client Protocol (`--via acp`): OpenCode's own `opencode
    /// acp`, or the ACP adapter of Claude Code or Codex in the agent's place. The facts are the
    /// native ones but where what the agent tells over ACP differs (docs/visibility.md): no
    /// agent tells its model calls; OpenCode's usage is its last model call's and its own zero
    /// cost is told; Claude Code's leaves out subagents; codex-acp tells neither usage nor cost
    /// nor subagents, and its only refusal ends the turn.
    fn over_acp(mut self, scenario: Scenario) -> Option<Prepared> {
        use Scenario::*;
        let agent = self.value_of("--agent")?.to_owned();
        let adapter = match agent.as_str() {
            "claude" => Some(crate::acp_adapters::adapter_bin("claude-agent-acp")?),
            "codex" => Some(crate::acp_adapters::adapter_bin("codex-acp")?),
            _ => None,
        };
        if agent == "claude" {
            // The adapter bundles its own, older, Claude Code: it runs the one native runs.
            let claude = self.value_of("--agent-bin")?.to_owned();
            self.ctx.env("CLAUDE_CODE_EXECUTABLE", claude);
        }
        if let Some(adapter) = adapter {
            let at = self.args.iter().position(|a| a == "--agent-bin")? + 1;
            self.args[at] = adapter.to_str()?.to_owned();
        }
        if agent == "codex" && self.value_of("--permissions") == Some("bypass") {
            // Its sandbox needs bubblewrap, which a test machine may lack: unsandboxed, as the
            // native Codex tests run.
            self.agent_args
                .extend(["-c", "sandbox_mode=\"danger-full-access\""].map(str::to_owned));
        }
        self.args
            .splice(1..1, ["--via".to_owned(), "acp".to_owned()]);
        let want = &mut self.expected;
        want.steps_known = false;
        match (agent.as_str(), scenario) {
            ("opencode", ReadEdit | Shell | ToolFail | Subagent | Multistep) => want.tokens = None,
            // Its answer tells the failed prompt's usage as zero: known, unlike natively.
            ("opencode", ProviderError) => {
                want.tokens = Some(0);
                want.cost = Some(0.0);
                want.cost_source = Some(CostSource::Reported);
            }
            // The watchdog cancels the prompt, whose usage OpenCode then tells as zero: the
            // turn's tokens are unknown and its cost only a lower bound.
            ("opencode", Stall) => {
                want.tokens = None;
                want.cost = None;
                want.cost_source = Some(CostSource::Reported);
            }
            ("claude", Subagent | Stall) => want.tokens = None,
            ("codex", _) => {
                want.tokens = None;
                want.cost = None;
                want.cost_source = None;
                match scenario {
                    PermissionDenied => want.outcome = Outcome::Truncated,
                    Subagent => {
                        want.tools.clear();
                        self.subagents_hidden = true;
                    }
                    _ => {}
                }
            }
            _ => {}
        }
        Some(self)
    }

    fn value_of(&self, flag: &str) -> Option<&str> {
        let at = self.args.iter().position(|a| a == flag)?;
        self.args.get(at + 1).map(String::as_str)
    }
}

fn runbook_args<'a>(
    agent: &'a str,
    bin: &'a Path,
    extra: &[&'a str],
    prompt: &'a str,
) -> Vec<&'a str> {
    let mut args = vec![
        "run",
        "--json",
        "--agent",
        agent,
        "--agent-bin",
        bin.to_str().expect("UTF-8 agent path"),
        "--finish-grace",
        "3s",
    ];
    args.extend_from_slice(extra);
    args.push(prompt);
    args
}

/// The flags a scenario runs with, in runbook's words.
fn scenario_flags(scenario: Scenario) -> Vec<&'static str> {
    match scenario {
        Scenario::PermissionDenied => vec![],
        Scenario::Stall => vec![
            "--permissions",
            "bypass",
            "--inactivity-timeout",
            "5s",
            "--kill-grace",
            "2s",
        ],
        _ => vec!["--permissions", "bypass"],
    }
}

fn outcome_of(scenario: Scenario, agent: &str) -> Outcome {
    match (scenario, agent) {
        (Scenario::ProviderError, _) => Outcome::AgentError,
        (Scenario::Stall, _) => Outcome::Hung,
        // OpenCode ends its run at the denied call, without a final answer.
        (Scenario::PermissionDenied, "opencode") => Outcome::Truncated,
        _ => Outcome::Completed,
    }
}

fn tools(scenario: Scenario, agent: &str) -> Vec<(ToolKind, ToolStatus, bool)> {
    use Scenario::*;
    use ToolKind as K;
    use ToolStatus::{Denied, Error, Ok};
    let calls: &[(ToolKind, ToolStatus, bool)] = match (scenario, agent) {
        (Text | ProviderError | Stall, _) => &[],
        (ReadEdit, "codex") => &[(K::Shell, Ok, false), (K::Edit, Ok, false)],
        (ReadEdit, _) => &[(K::Read, Ok, false), (K::Edit, Ok, false)],
        (Shell, _) => &[(K::Shell, Ok, false)],
        (ToolFail, "codex") => &[(K::Shell, Error, false), (K::Shell, Error, false)],
        (ToolFail, _) => &[(K::Read, Error, false), (K::Shell, Error, false)],
        (PermissionDenied, "opencode") => &[(K::Shell, Denied, false)],
        (PermissionDenied, "claude") => &[(K::Shell, Denied, false), (K::Write, Denied, false)],
        // The sandbox fails `touch` without a trace; the rejected patch is on stderr.
        (PermissionDenied, _) => &[(K::Edit, Denied, false)],
        (Subagent, "opencode") => &[(K::Subagent, Ok, false)],
        (Subagent, "claude") => &[(K::Shell, Ok, true), (K::Subagent, Ok, false)],
        (Subagent, _) => &[(K::Subagent, Ok, false), (K::Subagent, Ok, false)],
        (Multistep, "codex") => &[
            (K::Shell, Ok, false),
            (K::Shell, Ok, false),
            (K::Shell, Ok, false),
            (K::Edit, Ok, false),
            (K::Shell, Ok, false),
        ],
        (Multistep, _) => &[
            (K::Shell, Ok, false),
            (K::Read, Ok, false),
            (K::Shell, Ok, false),
            (K::Write, Ok, false),
            (K::Shell, Ok, false),
        ],
    };
    calls.to_vec()
}

/// A test context whose work dir has the README the scenarios read and edit, in a git
/// repository.
fn work_dir() -> TestContext {
    let ctx = TestContext::new();
    sse::write_readme(&ctx.work).expect("write README.md");
    support::git_init(&ctx.work, &ctx.home);
    ctx
}

/// The canonical scenario from a fake's `scenario` module (they share the names).
macro_rules! pick {
    ($module:path, $scenario:expr, $work:expr) => {{
        use $module as s;
        match $scenario {
            Scenario::Text => s::text($work),
            Scenario::ReadEdit => s::read_edit($work),
            Scenario::Shell => s::shell($work),
            Scenario::ToolFail => s::tool_fail($work),
            Scenario::ProviderError => s::provider_error($work),
            Scenario::PermissionDenied => s::permission_denied($work),
            Scenario::Subagent => s::subagent($work),
            Scenario::Multistep => s::multistep($work),
            Scenario::Stall => s::stall($work),
        }
    }};
}

pub(crate) fn claude(scenario: Scenario) -> Option<Prepared> {
    claude_with(scenario, |_| {})
}

/// [`claude`] with Claude Code 2.1.330.
fn claude_next(scenario: Scenario) -> Option<Prepared> {
    claude_release(Release::Next, scenario, |_| {})
}

/// [`claude`] with Claude Code 2.1.332.
fn claude_latest(scenario: Scenario) -> Option<Prepared> {
    claude_release(Release::Latest, scenario, |_| {})
}

/// [`claude`] with Claude Code 2.1.337.
fn claude_newest(scenario: Scenario) -> Option<Prepared> {
    claude_release(Release::Newest, scenario, |_| {})
}

/// The Claude Code releases runbook is tested with.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Release {
    /// 2.1.197, `.agents/node_modules`.
    Pinned,
    /// 2.1.330, `.agents/claude-2.1.330`: background subagents, and its own model and prices.
    Next,
    /// 2.1.332, `.agents/claude-2.1.332`: as 2.1.330 (same default model and prices), and it
    /// says whether its own sandbox is on.
    Latest,
    /// 2.1.337, `.agents/claude-2.1.337`: as 2.1.332, and it says when it wrote each line.
    Newest,
}

/// [`claude`] with the scenario's script changed by `edit` first (its expected facts are then
/// those of the unchanged script).
fn claude_with(
    scenario: Scenario,
    edit: fn(&mut sse::Scenario<anthropic::Reply>),
) -> Option<Prepared> {
    claude_release(Release::Pinned, scenario, edit)
}

fn claude_release(
    release: Release,
    scenario: Scenario,
    edit: fn(&mut sse::Scenario<anthropic::Reply>),
) -> Option<Prepared> {
    let bin = match release {
        Release::Pinned => support::claude_bin()?,
        Release::Next => support::claude_next_bin()?,
        Release::Latest => support::claude_release_bin("2.1.332")?,
        Release::Newest => support::claude_release_bin("2.1.337")?,
    };
    let mut ctx = work_dir();
    let mut sc = pick!(anthropic::scenario, scenario, &ctx.work);
    edit(&mut sc);
    let fake = anthropic::FakeAnthropic::for_scenario(&sc);
    for (k, v) in anthropic::claude_env(&ctx.home, &fake.base_url()) {
        ctx.env(&k, v);
    }
    // Claude Code reports the cost of every model call, its subagents' included.
    let served: Vec<&anthropic::Reply> = sc.script.iter().chain(&sc.subagent_script).collect();
    let mut usage: Vec<anthropic::Usage> = served
        .iter()
        .filter_map(|r| match r {
            anthropic::Reply::Message { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect();
    if release != Release::Pinned && scenario == Scenario::Subagent {
        // Told of the background subagent's end, Claude runs its main thread once more, past
        // the script: the fake's `done`.
        usage.push(anthropic::Usage::new(100, 1));
    }
    let tokens = usage
        .iter()
        .map(|u| u.input + u.output + u.cache_creation + u.cache_read)
        .sum();
    let prices = match release {
        Release::Pinned => &anthropic::DEFAULT_MODEL_PRICES,
        Release::Next | Release::Latest | Release::Newest => &anthropic::NEXT_DEFAULT_MODEL_PRICES,
    };
    let cost: f64 = usage.iter().map(|u| u.cost(prices)).sum();
    let reported = scenario != Scenario::Stall;
    let expected = Expected {
        tools: tools(scenario, "claude"),
        outcome: outcome_of(scenario, "claude"),
        // A run stalled before any usage came has its tokens unknown, never 0 (a provider
        // error's are 0, as Claude's result says).
        tokens: reported.then_some(tokens),
        steps_known: true,
        cost: reported.then_some(cost),
        cost_source: reported.then_some(CostSource::Reported),
    };
    let flags = scenario_flags(scenario);
    let args = runbook_args("claude", &bin, &flags, &sc.prompt);
    let fake = std::rc::Rc::new(fake);
    let served = fake.clone();
    let prepared = Prepared::new(
        ctx,
        Box::new(move || last_body(fake.main_requests())),
        None,
        args,
        expected,
    );
    // Claude Code counts every model call, its subagents' included.
    Some(prepared.served(move || {
        served
            .served()
            .iter()
            .filter_map(|(_, u)| *u)
            .map(|u| u.input + u.output + u.cache_creation + u.cache_read)
            .sum()
    }))
}

fn last_body(requests: Vec<sse::Received>) -> String {
    requests
        .last()
        .map(|r| r.body.to_string())
        .unwrap_or_default()
}

/// gpt-5.5 and gpt-5.4 list prices (USD per million input, cached input, output tokens).
fn openai_price(model: &str) -> (f64, f64, f64) {
    match model {
        "gpt-5.4" => (2.5, 0.25, 15.0),
        _ => (5.0, 0.5, 30.0),
    }
}

pub(crate) fn codex(scenario: Scenario) -> Option<Prepared> {
    codex_with(scenario, |_| {})
}

/// [`codex`] with the scenario's script changed by `edit` first (its expected facts are then
/// those of the unchanged script).
pub(crate) fn codex_with(
    scenario: Scenario,
    edit: fn(&mut sse::Scenario<responses::Reply>),
) -> Option<Prepared> {
    codex_from(support::codex_bin()?, scenario, edit)
}

/// [`codex`] with Codex 0.171.0.
fn codex_latest(scenario: Scenario) -> Option<Prepared> {
    codex_from(support::codex_release_bin("0.171.0")?, scenario, |_| {})
}

/// [`codex_with`] with the Codex CLI at `bin`.
fn codex_from(
    bin: std::path::PathBuf,
    scenario: Scenario,
    edit: fn(&mut sse::Scenario<responses::Reply>),
) -> Option<Prepared> {
    let mut ctx = work_dir();
    let mut sc = pick!(responses::scenario, scenario, &ctx.work);
    edit(&mut sc);
    let fake = responses::FakeResponses::for_scenario(&sc);
    // The model is left to Codex's config, except where the scenario needs another one: runbook
    // must find it either way to price the tokens.
    let model = if scenario == Scenario::Subagent {
        responses::SUBAGENT_MODEL
    } else {
        responses::MODEL
    };
    let home = responses::CodexHome::new(&fake.base_url(), &responses::CodexConfig::default())
        .expect("a Codex home");
    for (k, v) in responses::codex_env(&ctx.home, &home) {
        ctx.env(&k, v);
    }
    // Codex counts its main conversation only; runbook prices it from its table.
    let usage = responses::total_usage(&sc.script);
    let finished = matches!(
        outcome_of(scenario, "codex"),
        Outcome::Completed | Outcome::Truncated
    );
    let (input, cached, output) = openai_price(model);
    let cost = ((usage.input - usage.cached) as f64 * input
        + usage.cached as f64 * cached
        + usage.output as f64 * output)
        / 1e6;
    let expected = Expected {
        tools: tools(scenario, "codex"),
        outcome: outcome_of(scenario, "codex"),
        // Codex reports its usage only when the turn completes: a failed turn's is unknown.
        tokens: finished.then_some(usage.input + usage.output),
        steps_known: false,
        cost: finished.then_some(cost),
        cost_source: finished.then_some(CostSource::Estimated),
    };
    let mut flags = match scenario {
        Scenario::PermissionDenied => vec!["--permissions", "read-only"],
        _ => scenario_flags(scenario),
    };
    if scenario == Scenario::Subagent {
        flags.extend(["-m", model]);
    }
    let args = runbook_args("codex", &bin, &flags, &sc.prompt);
    let fake = std::rc::Rc::new(fake);
    let served = fake.clone();
    let prepared = Prepared::new(
        ctx,
        Box::new(move || last_body(fake.main_requests())),
        Some(home),
        args,
        expected,
    );
    // Codex counts its main conversation only.
    Some(prepared.served(move || {
        served
            .served()
            .iter()
            .filter(|(t, _)| !t.subagent)
            .filter_map(|(_, u)| *u)
            .map(|u| u.input + u.output)
            .sum()
    }))
}

pub(crate) fn opencode(scenario: Scenario) -> Option<Prepared> {
    opencode_with(scenario, |_| {}, false)
}

/// [`opencode`] with OpenCode's own undo snapshots on, as its users have them by default (see
/// [`chat::OpencodeConfig::snapshot`]): the drift check compares its lines with the recordings.
pub(crate) fn opencode_with_snapshots(scenario: Scenario) -> Option<Prepared> {
    opencode_with(scenario, |_| {}, true)
}

/// [`opencode_with_snapshots`] with OpenCode 2.1.2 (`@opencode/cli`), whatever
/// `RUNBOOK_TEST_OPENCODE` names: an OpenCode 2 release is driven with its own tools' calls.
pub(crate) fn opencode_2_with_snapshots(scenario: Scenario) -> Option<Prepared> {
    let bin = support::opencode_v2_bin("2.1.2")?;
    opencode_at(bin, scenario, |_| {}, true)
}

/// [`opencode`] with the scenario's script changed by `edit` first (its expected facts are then
/// those of the unchanged script), and OpenCode's snapshots on if `snapshot`.
fn opencode_with(
    scenario: Scenario,
    edit: fn(&mut sse::Scenario<chat::Reply>),
    snapshot: bool,
) -> Option<Prepared> {
    opencode_at(support::opencode_bin()?, scenario, edit, snapshot)
}

/// [`opencode_with`] with the OpenCode at `bin`, 1.x or 2.
fn opencode_at(
    bin: std::path::PathBuf,
    scenario: Scenario,
    edit: fn(&mut sse::Scenario<chat::Reply>),
    snapshot: bool,
) -> Option<Prepared> {
    let mut ctx = work_dir();
    let v2 = is_opencode_2(&bin);
    let mut sc = if v2 {
        opencode_2_script(scenario, &ctx.work)
    } else {
        pick!(chat::scenario, scenario, &ctx.work)
    };
    edit(&mut sc);
    let fake = chat::FakeLlm::start_with_subagent(sc.script.clone(), sc.subagent_script);
    let config = chat::OpencodeConfig {
        overlay: (scenario == Scenario::PermissionDenied)
            .then(|| json!({"permission": {"bash": "ask"}})),
        snapshot,
        ..chat::OpencodeConfig::default()
    };
    chat::opencode_against(&mut ctx, &fake.base_url(), &config);
    // OpenCode reports each step of the main session (its subagents' run in their own).
    let usage: Vec<chat::Usage> = sc
        .script
        .iter()
        .filter_map(|r| match r {
            chat::Reply::Text { usage, .. } | chat::Reply::ToolCalls { usage, .. } => Some(*usage),
            _ => None,
        })
        .collect();
    let steps = !usage.is_empty();
    let expected = Expected {
        tools: tools(scenario, "opencode"),
        // OpenCode 2 goes on after a refused call, to the answer of its next step.
        outcome: match scenario {
            Scenario::PermissionDenied if v2 => Outcome::Completed,
            _ => outcome_of(scenario, "opencode"),
        },
        tokens: steps.then(|| usage.iter().map(|u| u.prompt + u.completion).sum()),
        steps_known: true,
        cost: steps.then(|| {
            usage
                .iter()
                .map(|u| chat::FAKE_MODEL_PRICES.cost_of(u))
                .sum()
        }),
        cost_source: steps.then_some(CostSource::Reported),
    };
    let mut flags = vec!["-m", "fake/fake-model"];
    flags.extend(
        scenario_flags(scenario)
            .into_iter()
            .filter(|f| *f != "--permissions" && *f != "bypass"),
    );
    let args = runbook_args("opencode", &bin, &flags, &sc.prompt);
    Some(Prepared::new(
        ctx,
        Box::new(move || {
            let main = fake.main_requests();
            main.last().map(|r| r.body.to_string()).unwrap_or_default()
        }),
        None,
        args,
        expected,
    ))
}

/// Whether the OpenCode at `bin` is OpenCode 2 (`@opencode/cli`), which prints `opencode v2.2.5`
/// where 1.x prints `1.18.33`.
fn is_opencode_2(bin: &Path) -> bool {
    let out = std::process::Command::new(bin).arg("--version").output();
    let text = out.map(|o| String::from_utf8_lossy(&o.stdout).into_owned());
    text.is_ok_and(|t| {
        t.trim()
            .strip_prefix("opencode v")
            .is_some_and(|v| !v.starts_with("1."))
    })
}

/// The scenario as OpenCode 2's tools take it (`shell`, `subagent`, `path`: those of its
/// recordings). A refused call does not end its run: the next step's answer, past the script's
/// end, is served and counted.
fn opencode_2_script(scenario: Scenario, work: &Path) -> sse::Scenario<chat::Reply> {
    use crate::record::opencode_v2 as v2;
    match scenario {
        Scenario::ReadEdit => v2::read_edit(work),
        Scenario::Shell => v2::shell(work),
        Scenario::ToolFail => v2::tool_fail(work),
        Scenario::PermissionDenied => {
            let mut sc = v2::permission_denied(work);
            let done = chat::Reply::text(chat::DONE_TEXT, chat::Usage::new(100, 1));
            sc.script.push(done);
            sc
        }
        Scenario::Subagent => v2::subagent(work),
        Scenario::Multistep => v2::multistep(work),
        _ => pick!(chat::scenario, scenario, work),
    }
}

/// What a prepared scenario's run left, with both shown for assertion messages.
pub(crate) struct Ran {
    pub(crate) out: support::Outcome,
    pub(crate) events: Vec<Event>,
    pub(crate) receipt: Receipt,
    expected: Expected,
    subagents_hidden: bool,
    /// The body of the last main-conversation model request.
    pub(crate) last_request: Box<dyn Fn() -> String>,
    /// What ran, runbook's stderr and the types of the events.
    pub(crate) why: String,
    /// The work dir, home and runs directory the run had.
    pub(crate) ctx: TestContext,
    /// Codex's `CODEX_HOME` during the run (removed since).
    pub(crate) codex_home: Option<std::path::PathBuf>,
    /// The tokens the fake provider served, as the agent counts them (Claude Code and Codex).
    pub(crate) served_tokens: Option<Box<dyn Fn() -> u64>>,
}

impl Ran {
    pub(crate) fn expected(&self) -> &Expected {
        &self.expected
    }

    #[track_caller]
    pub(crate) fn assert_exit(&self, code: i32) {
        assert_eq!(self.out.code(), Some(code), "{}", self.why);
    }
}

/// Runs `scenario` with `args` added to runbook's command line; `None` when the agent's tests
/// are skipped. On failure, the events so far are in the message.
pub(crate) fn run(
    agent: &str,
    scenario: Scenario,
    prepare: fn(Scenario) -> Option<Prepared>,
    args: &[&str],
) -> Option<Ran> {
    let p = prepare(scenario)?;
    let mut command = p
        .ctx
        .runbook(&p.args.iter().map(String::as_str).collect::<Vec<_>>());
    command.args(args);
    if !p.agent_args.is_empty() {
        command.arg("--").args(&p.agent_args);
    }
    let what = format!("{agent} {scenario:?} {}", args.join(" "));
    let out = match std::panic::catch_unwind(AssertUnwindSafe(|| support::run(&mut command, LIMIT)))
    {
        Ok(out) => out,
        Err(_) => panic!("{what}: runbook did not finish in {LIMIT:?}"),
    };
    let (events, receipt) = support::events_and_receipt(&out.stdout);
    assert_eq!(events, p.ctx.events(), "{what}: --json and the log agree");
    // Enough to tell a failure that shows once in many runs without running it again: how the
    // run ended, and the end of what the agent said.
    let last_events: Vec<String> = events[events.len().saturating_sub(4)..]
        .iter()
        .map(|e| serde_json::to_string(e).expect("events serialize"))
        .collect();
    let raw = std::fs::read_to_string(p.ctx.run_dir().join("stdout.log")).unwrap_or_default();
    let raw_tail: Vec<&str> = raw.lines().rev().take(20).collect();
    let why = format!(
        "{what}\nstderr:\n{}\nevents: {:?}\nlast events:\n{}\nthe agent's last lines (newest first):\n{}",
        out.stderr,
        support::types(&events),
        last_events.join("\n"),
        raw_tail.join("\n")
    );
    Some(Ran {
        out,
        events,
        receipt,
        expected: p.expected,
        subagents_hidden: p.subagents_hidden,
        last_request: p.last_request,
        served_tokens: p.served_tokens,
        why,
        codex_home: p._home.as_ref().map(|h| h.path().to_owned()),
        ctx: p.ctx,
    })
}

fn check(agent: &str, scenario: Scenario, prepare: fn(Scenario) -> Option<Prepared>) {
    if let Some(ran) = run(agent, scenario, prepare, &[]) {
        assert_scenario(&ran, scenario);
    }
}

/// The run amounts to the scenario's facts, and ends with the exit status of its outcome.
pub(crate) fn assert_scenario(ran: &Ran, scenario: Scenario) {
    let why = &ran.why;
    assert_facts(
        &facts(&ran.events, &ran.receipt),
        &ran.expected,
        scenario == Scenario::ProviderError,
        scenario == Scenario::Subagent && !ran.subagents_hidden,
        why,
    );
    // The tokens are those the fake provider served, whatever the script expected.
    if let (Some(tokens), Some(served), false) = (
        facts(&ran.events, &ran.receipt).tokens,
        &ran.served_tokens,
        scenario == Scenario::Stall,
    ) {
        assert_eq!(tokens, served(), "{why}: tokens served");
    }
    ran.assert_exit(match ran.expected.outcome {
        Outcome::Completed => 0,
        Outcome::Hung => 3,
        _ => 1,
    });
    if scenario == Scenario::Stall {
        assert!(
            ran.events
                .iter()
                .any(|e| matches!(e.kind, EventKind::WatchdogFired(_))),
            "{why}"
        );
    }
}

/// One test per scenario, in a module named for the agent and the way it is driven
/// (`live::opencode_meets_every_scenario::multistep`): the runner runs them side by side, and
/// names the one that is slow or fails. The stall's test is `agent_timing_stall`: its five
/// seconds of inactivity race the agent's own start-up, which a loaded machine can lose (the
/// watchdog then fires before the session is open), so it is the one retried (docs/TESTING.md).
macro_rules! scenario_tests {
    ($module:ident, $agent:literal, $prepare:path, [$($test:ident: $scenario:ident),* $(,)?]) => {
        mod $module {
            use super::*;

            $(
                #[test]
                fn $test() {
                    check($agent, Scenario::$scenario, $prepare);
                }
            )*
        }
    };
}

/// Every scenario, one test each.
macro_rules! every_scenario {
    ($module:ident, $agent:literal, $prepare:path) => {
        scenario_tests!($module, $agent, $prepare, [
            text: Text,
            read_edit: ReadEdit,
            shell: Shell,
            tool_fail: ToolFail,
            provider_error: ProviderError,
            permission_denied: PermissionDenied,
            subagent: Subagent,
            multistep: Multistep,
            agent_timing_stall: Stall,
        ]);
    };
}

// The native CLIs are not run live in the plain answer and the one shell command. Their facts
// are proven by the recordings of the same pinned releases, replayed in `conformance.rs`
// (`every_recorded_scenario_yields_the_same_facts_for_every_agent`,
// `every_claude_code_release_yields_the_same_facts`), and what only a live run can show of them
// is shown by other live runs all the same: the CLI started with runbook's flags, answering and
// exiting (`resumes` and `plans_then_executes` run the plain answer live), and shell commands run
// under `--permissions bypass` with their usage streamed per step (`multistep`: five calls, three
// of them shell commands). The pinned releases' read-and-edit and permission scenarios run live
// in `drift::the_drift_check_finds_no_drift_in_the_pinned_versions`, which asserts the same of
// them (`assert_scenario`) and more. Over ACP every scenario stays live: there runbook answers
// the agent's requests, which no recording of one direction proves.
const _: () = assert!(ALL.len() == 9, "a new scenario needs its live tests below");

macro_rules! pinned_native_scenarios {
    ($module:ident, $agent:literal, $prepare:path) => {
        scenario_tests!($module, $agent, $prepare, [
            tool_fail: ToolFail,
            provider_error: ProviderError,
            subagent: Subagent,
            multistep: Multistep,
            agent_timing_stall: Stall,
        ]);
    };
}

pinned_native_scenarios!(claude_code_meets_every_scenario, "claude", claude);
pinned_native_scenarios!(codex_meets_every_scenario, "codex", codex);
pinned_native_scenarios!(opencode_meets_every_scenario, "opencode", opencode);
scenario_tests!(claude_code_2_1_330_meets_every_scenario, "claude", claude_next, [
    read_edit: ReadEdit,
    tool_fail: ToolFail,
    provider_error: ProviderError,
    permission_denied: PermissionDenied,
    subagent: Subagent,
    multistep: Multistep,
    agent_timing_stall: Stall,
]);
// The newest releases, each in every scenario once (their multi-turn runs are those of the
// releases before them).
every_scenario!(
    claude_code_2_1_332_meets_every_scenario,
    "claude",
    claude_latest
);
every_scenario!(
    claude_code_2_1_337_meets_every_scenario,
    "claude",
    claude_newest
);
every_scenario!(codex_0_171_0_meets_every_scenario, "codex", codex_latest);

pub(crate) fn opencode_acp(scenario: Scenario) -> Option<Prepared> {
    opencode(scenario)?.over_acp(scenario)
}

fn claude_acp(scenario: Scenario) -> Option<Prepared> {
    claude(scenario)?.over_acp(scenario)
}

fn codex_acp(scenario: Scenario) -> Option<Prepared> {
    codex(scenario)?.over_acp(scenario)
}

every_scenario!(
    opencode_over_acp_meets_every_scenario,
    "opencode",
    opencode_acp
);
every_scenario!(
    claude_code_over_acp_meets_every_scenario,
    "claude",
    claude_acp
);
every_scenario!(codex_over_acp_meets_every_scenario, "codex", codex_acp);

/// `--then` continues the agent's own session: the second invocation resumes it (the provider
/// sees the first turn's conversation again) and is a `resume` turn of the same run.
fn resumes(agent: &str, prepare: fn(Scenario) -> Option<Prepared>) {
    const SECOND: &str = "Now say it once more.";
    let Some(ran) = run(agent, Scenario::Text, prepare, &["--then", SECOND]) else {
        return;
    };
    let why = &ran.why;
    ran.assert_exit(0);
    assert_eq!(ran.receipt.turns.len(), 2, "{why}");
    assert_eq!(ran.receipt.turns[1].kind, TurnKind::Resume, "{why}");
    let sessions: Vec<&str> = ran
        .events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SessionStarted { session_id } => Some(session_id.as_str()),
            _ => None,
        })
        .collect();
    assert!(!sessions.is_empty(), "{why}");
    assert!(
        sessions.iter().all(|s| *s == sessions[0]),
        "one session: {sessions:?}"
    );
    let argv = support::argvs(&ran.events);
    assert!(argv[1].iter().any(|a| a == sessions[0]), "{why}: {argv:?}");
    // The provider got the first turn's conversation back, with the new prompt.
    let body = (ran.last_request)();
    assert!(body.contains(SECOND), "{why}: {body}");
    assert!(body.contains(canon::TEXT_ANSWER), "{why}: {body}");
}

/// One test per agent (`live::each_agent_resumes_its_own_session_in_a_second_turn::codex_cli`),
/// as for each of the multi-turn runs below: the runner runs them side by side.
mod each_agent_resumes_its_own_session_in_a_second_turn {
    use super::*;

    #[test]
    fn claude_code() {
        resumes("claude", claude);
    }

    #[test]
    fn codex_cli() {
        resumes("codex", codex);
    }

    #[test]
    fn opencode_cli() {
        resumes("opencode", opencode);
    }
}

/// `--plan` without a terminal: a read-only planning turn (each agent's own read-only flags),
/// the plan kept, then execution resumed in the same session with the run's permissions.
fn plans_then_executes(agent: &str, prepare: fn(Scenario) -> Option<Prepared>, read_only: &[&str]) {
    let Some(ran) = run(agent, Scenario::Text, prepare, &["--plan"]) else {
        return;
    };
    let why = &ran.why;
    ran.assert_exit(0);
    let plan = ran.receipt.plan.as_ref().expect("a plan");
    assert_eq!(plan.text, canon::TEXT_ANSWER, "{why}");
    assert_eq!(
        plan.decision,
        Some(runbook::event::Decision::Execute),
        "{why}"
    );
    let argv = support::argvs(&ran.events);
    assert_eq!(argv.len(), 2, "{why}");
    let has = |a: &Vec<String>| a.windows(read_only.len()).any(|w| w == read_only);
    assert!(has(argv[0]) && !has(argv[1]), "{why}: {argv:?}");
}

mod each_agent_plans_read_only_then_executes_in_the_same_session {
    use super::*;

    #[test]
    fn claude_code() {
        plans_then_executes("claude", claude, &["--permission-mode", "plan"]);
    }

    #[test]
    fn codex_cli() {
        plans_then_executes("codex", codex, &["-c", "sandbox_mode=\"read-only\""]);
    }

    #[test]
    fn opencode_cli() {
        plans_then_executes("opencode", opencode, &["--agent", "plan"]);
    }
}

/// Claude Code reports its cost only at the end, but each step's usage streams in: runbook prices
/// the steps as they finish and stops the run once the estimate crosses `--max-cost`.
#[test]
fn claude_code_is_stopped_by_the_budget_from_its_streamed_usage() {
    for prepare in [claude, claude_next] {
        let Some(ran) = run(
            "claude",
            Scenario::Multistep,
            prepare,
            &["--max-cost", "0.03"],
        ) else {
            return;
        };
        let (receipt, why) = (&ran.receipt, &ran.why);
        ran.assert_exit(4);
        assert_eq!(receipt.outcome, Outcome::BudgetExceeded, "{why}");
        assert!(receipt.cost.known_usd > 0.03, "{why}");
        assert!(
            receipt.tool_calls.total < 5,
            "stopped before the end of the script: {why}"
        );
        assert!(
            !ran.events
                .iter()
                .any(|e| matches!(e.kind, EventKind::AgentResult(_))),
            "stopped before Claude's final result: {why}"
        );
        // The model Claude named in its first line is the receipt's.
        let model = receipt.model.as_deref().unwrap_or_default();
        assert!(model.starts_with("claude-opus-"), "{why}");
    }
}

/// In `--permissions read-only` (Claude's plan mode), both releases refuse the shell command
/// and the Write; the receipt counts each as denied, lists both, and counts no error.
#[test]
fn claude_code_in_read_only_reports_refused_calls_as_denied_without_contradiction() {
    for prepare in [claude, claude_next] {
        let Some(ran) = run(
            "claude",
            Scenario::PermissionDenied,
            prepare,
            &["--permissions", "read-only"],
        ) else {
            return;
        };
        let (receipt, why) = (&ran.receipt, &ran.why);
        assert_eq!(receipt.outcome, Outcome::Completed, "{why}");
        crate::conformance::assert_shell_and_write_denied(receipt, why);
        assert_eq!(receipt.unparsed_lines.count, 0, "{why}");
    }
}

/// Claude's HTTP 401 provider error has its status, as 500 does: read from `api_error_status`,
/// not from the wording, in both releases.
#[test]
fn claude_codes_provider_errors_have_their_http_status() {
    fn unauthorized(sc: &mut sse::Scenario<anthropic::Reply>) {
        sc.script = vec![anthropic::Reply::http_error(401, "invalid x-api-key")];
    }
    let releases: [fn(Scenario) -> Option<Prepared>; 2] = [
        |s| claude_release(Release::Pinned, s, unauthorized),
        |s| claude_release(Release::Next, s, unauthorized),
    ];
    for prepare in releases {
        let Some(ran) = run("claude", Scenario::ProviderError, prepare, &[]) else {
            return;
        };
        let (receipt, why) = (&ran.receipt, &ran.why);
        assert_eq!(receipt.outcome, Outcome::AgentError, "{why}");
        let statuses: Vec<Option<u16>> = receipt.provider_errors.iter().map(|e| e.status).collect();
        assert_eq!(statuses, [Some(401)], "{why}");
    }
}

/// What the agent says when it ends its task without touching README.md.
const LOOKS_FINE: &str = "I read README.md; it looks fine to me.";

/// What the check says while README.md lacks its new last line.
const CHECK_SAYS: &str = "README.md lacks its new last line";

/// The task ends without the edit, so the check fails; the repair turn, resumed in the agent's
/// own session with a prompt of only the failing check, makes it (the read-edit script).
fn repairs(agent: &str, prepare: fn(Scenario) -> Option<Prepared>) {
    let check = format!(
        "readme=grep -q '{}' README.md || {{ echo '{CHECK_SAYS}'; exit 1; }}",
        sse::README_NEW_LINE
    );
    let Some(ran) = run(agent, Scenario::ReadEdit, prepare, &["--check", &check]) else {
        return;
    };
    let why = &ran.why;
    ran.assert_exit(0);
    let receipt = &ran.receipt;
    assert_eq!(receipt.outcome, Outcome::Completed, "{why}");
    let checks: Vec<(u32, bool)> = receipt
        .checks
        .iter()
        .map(|c| (c.attempt, c.passed))
        .collect();
    assert_eq!(checks, [(0, false), (1, true)], "{why}");
    let repair = receipt.repair.as_ref().expect("a repair record");
    assert_eq!(
        repair.stopped,
        Some(runbook::event::RepairStop::Passed),
        "{why}"
    );
    assert_eq!(repair.attempts.len(), 1, "{why}");
    assert!(repair.attempts[0].tokens.total() > 0, "{why}");
    assert_same_session(&ran, 2);
    // The repair prompt reached the provider, with the check's own words.
    let body = (ran.last_request)();
    assert!(body.contains("failed (exit 1)"), "{why}: {body}");
    assert!(body.contains(CHECK_SAYS), "{why}: {body}");
}

/// Every turn of the run resumed the first one's session: `turns` invocations, the later ones
/// naming it.
fn assert_same_session(ran: &Ran, turns: usize) {
    let why = &ran.why;
    let session = ran
        .events
        .iter()
        .find_map(|e| match &e.kind {
            EventKind::SessionStarted { session_id } => Some(session_id.clone()),
            _ => None,
        })
        .expect("a session");
    let argv = support::argvs(&ran.events);
    assert_eq!(argv.len(), turns, "{why}");
    for later in &argv[1..] {
        assert!(later.contains(&session), "{why}: {later:?}");
    }
}

mod each_agent_repairs_a_failing_check_in_its_own_session {
    use super::*;

    #[test]
    fn claude_code() {
        repairs("claude", |s| {
            claude_with(s, |sc| {
                let fine = anthropic::Reply::text(LOOKS_FINE, anthropic::Usage::new(1200, 20));
                sc.script.insert(0, fine);
            })
        });
    }

    #[test]
    fn codex_cli() {
        repairs("codex", |s| {
            codex_with(s, |sc| {
                let fine = responses::Reply::text(LOOKS_FINE, responses::Usage::new(1200, 20));
                sc.script.insert(0, fine);
            })
        });
    }

    #[test]
    fn opencode_cli() {
        repairs("opencode", |s| {
            opencode_with(
                s,
                |sc| {
                    let fine = chat::Reply::text(LOOKS_FINE, chat::Usage::new(1200, 20));
                    sc.script.insert(0, fine);
                },
                false,
            )
        });
    }
}

/// What the agent says in the pass after its tools were refused.
const WITHOUT_THEM: &str = "I could not run those; here is what I need instead.";

/// The permission-denied scenario with `--retry-denied`: the turn stalls on the refused tools,
/// and one more pass in the same session, told what was refused, completes.
fn passes_after_a_stall(agent: &str, prepare: fn(Scenario) -> Option<Prepared>) {
    let Some(ran) = run(
        agent,
        Scenario::PermissionDenied,
        prepare,
        &["--retry-denied"],
    ) else {
        return;
    };
    let why = &ran.why;
    ran.assert_exit(0);
    let stall = ran.receipt.permission_stall.as_ref().expect("a stall");
    assert!(!stall.denied.is_empty(), "{why}");
    let pass = stall.pass.as_ref().expect("a pass");
    assert_eq!(pass.turn, 1, "{why}");
    assert_eq!(pass.outcome, Some(Outcome::Completed), "{why}");
    let said = support::texts_of_turn(&ran.events, 1);
    assert_eq!(said.last(), Some(&WITHOUT_THEM), "{why}");
    assert_same_session(&ran, 2);
    let body = (ran.last_request)();
    assert!(body.contains("refused permission"), "{why}: {body}");
    assert!(body.contains(&stall.denied[0].detail), "{why}: {body}");
}

mod each_agent_gets_one_more_pass_after_a_permission_stall {
    use super::*;

    #[test]
    fn claude_code() {
        passes_after_a_stall("claude", |s| {
            claude_with(s, |sc| {
                let reply = anthropic::Reply::text(WITHOUT_THEM, anthropic::Usage::new(1600, 15));
                sc.script.push(reply);
            })
        });
    }

    #[test]
    fn codex_cli() {
        passes_after_a_stall("codex", |s| {
            codex_with(s, |sc| {
                let reply = responses::Reply::text(WITHOUT_THEM, responses::Usage::new(1600, 15));
                sc.script.push(reply);
            })
        });
    }

    #[test]
    fn opencode_cli() {
        passes_after_a_stall("opencode", |s| {
            opencode_with(
                s,
                |sc| {
                    let reply = chat::Reply::text(WITHOUT_THEM, chat::Usage::new(1600, 15));
                    sc.script.push(reply);
                },
                false,
            )
        });
    }
}

/// Claude Code 2.1.330 in the multi-turn runs: a resumed session, a plan then its execution, a
/// repair of a failing check, and one more pass after refused permissions.
mod claude_code_2_1_330_resumes_plans_repairs_and_passes_after_a_stall {
    use super::*;

    #[test]
    fn resumes_its_session() {
        resumes("claude", claude_next);
    }

    #[test]
    fn plans_then_executes() {
        super::plans_then_executes("claude", claude_next, &["--permission-mode", "plan"]);
    }

    #[test]
    fn repairs_a_failing_check() {
        repairs("claude", |s| {
            claude_release(Release::Next, s, |sc| {
                let fine = anthropic::Reply::text(LOOKS_FINE, anthropic::Usage::new(1200, 20));
                sc.script.insert(0, fine);
            })
        });
    }

    #[test]
    fn passes_after_a_stall() {
        super::passes_after_a_stall("claude", |s| {
            claude_release(Release::Next, s, |sc| {
                let reply = anthropic::Reply::text(WITHOUT_THEM, anthropic::Usage::new(1600, 15));
                sc.script.push(reply);
            })
        });
    }
}
