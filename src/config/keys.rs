//! Every configuration key, declared once, with the type of its values. A key's declaration
//! decides its TOML name, its kind, its default, its `RUNBOOK_*` variable, its flag and its help;
//! the files, the environment, the flags, `runbook config`, `runbook config --init` and `--help`
//! are all derived from [`all`]. Code reads a key through its typed static (`keys::MODEL`), so a
//! misspelt key or a value read as the wrong type does not compile.

use std::marker::PhantomData;
use std::path::PathBuf;
use std::time::Duration;

use clap::ValueEnum as _;

use super::value::{CheckSpec, FromValue, Kind, ObserverSpec, Value};
use crate::agent_kind::{AgentKind, Permissions};
use crate::prices::Price;
use crate::sandbox::By;
use crate::term::ColorChoice;

/// The agents that have an `[agents.NAME]` section (and `RUNBOOK_NAME_BIN`).
pub(crate) fn agents() -> impl Iterator<Item = AgentKind> {
    AgentKind::value_variants().iter().copied()
}

/// `opencode, claude, codex`, for messages.
pub(crate) fn agent_names() -> String {
    agents().map(agent_name).collect::<Vec<_>>().join(", ")
}

/// The name of an agent in files, variables and messages.
pub(crate) fn agent_name(agent: AgentKind) -> &'static str {
    agent.adapter().name()
}

pub(crate) static AGENT: Defaulted<AgentKind> = Defaulted::new(
    Key::new("agent", Kind::Agent, "Which agent to run")
        .default("opencode")
        .env()
        .flag(Flag::Run)
        .brief("Which agent to run")
        .heading(Heading::Agent, 1),
);
pub(crate) static AGENT_CMD: Typed<String> = Typed::new(
    Key::new("agent_cmd", Kind::Text, "Run this command instead, an agent that prints runbook's universal events as NDJSON (docs/events.md); the prompt is its last argument. E.g. `--agent-cmd 'uvx my-agent --fast'`")
        .example("\"uvx my-agent --fast\"")
        .env()
        .flag(Flag::Run)
        .conflicts_with("agent-bin")
        .trust(Trust::Runs)
        .brief("Run this command instead; it prints events")
        .heading(Heading::Agent, 5),
);
pub(crate) static VIA: Defaulted<String> = Defaulted::new(
    Key::new("via", Kind::Text, "How runbook talks to the agent: native (its own headless JSON output) or acp (the Agent Client Protocol, on the agent's stdin and stdout: tools shown as they start, permissions asked live)")
        .default("native")
        .env()
        .flag(Flag::Run)
        .brief("How to talk to the agent: native or acp")
        .heading(Heading::Agent, 6),
);
pub(crate) static ACP_CMD: Typed<String> = Typed::new(
    Key::new("acp_cmd", Kind::Text, "Run this command instead, an agent that speaks the Agent Client Protocol on its stdin and stdout. E.g. `--acp-cmd 'npx my-acp-agent'`")
        .example("\"my-acp-agent --stdio\"")
        .env()
        .flag(Flag::Run)
        .conflicts_with("agent-cmd")
        .trust(Trust::Runs)
        .brief("Run this command instead, an ACP agent")
        .heading(Heading::Agent, 7),
);
pub(crate) static MODEL: Typed<String> = Typed::new(
    Key::new(
        "model",
        Kind::Text,
        "The model, as the agent names it (OpenCode: provider/model)",
    )
    .example("\"anthropic/claude-sonnet-4-5\"")
    .env()
    .flag(Flag::Short('m'))
    .brief("The model, as the agent names it")
    .heading(Heading::Agent, 2),
);
pub(crate) static PERMISSIONS: Defaulted<Permissions> = Defaulted::new(
    Key::new("permissions", Kind::Permissions, "What the agent may do without asking: agent (its own settings), read-only, workspace (edit files and run commands in the work dir) or bypass (everything; throwaway machines only)")
        .default("agent")
        .env()
        .flag(Flag::Run)
        .trust(Trust::Runs)
        .brief("What the agent may do without asking")
        .heading(Heading::Agent, 3),
);
pub(crate) static BIN: Typed<PathBuf> = Typed::new(
    Key::new(
        "bin",
        Kind::Program,
        "The agent's binary [default: the agent's program on PATH]",
    )
    .per_agent()
    .example("\"/usr/local/bin/opencode\"")
    .env()
    .flag(Flag::Run)
    .trust(Trust::Runs)
    .brief("The agent's binary [default: on PATH]")
    .heading(Heading::Agent, 4),
);
pub(crate) static ARGS: Typed<Vec<String>> = Typed::new(
    Key::new("args", Kind::Args, "Extra arguments for the agent, before the prompt (on the command line: after `--`, e.g. `-- --agent plan`)")
        .per_agent()
        .example("[\"--agent\", \"plan\"]")
        .flag(Flag::Trailing)
        .trust(Trust::Runs)
        .brief("Extra arguments for the agent (after `--`)"),
);
pub(crate) static INACTIVITY_TIMEOUT: Defaulted<Duration> = Defaulted::new(
    Key::new(
        "inactivity_timeout",
        Kind::Watchdog,
        "Stop the agent after this long without any activity (output, or its processes using 20% of a core or more); at most a day, or `off`",
    )
    .default("3m")
    .env()
    .flag(Flag::Run)
        .brief("Stop after this long idle, or `off`")
        .heading(Heading::Limits, 3),
);
pub(crate) static KILL_GRACE: Defaulted<Duration> = Defaulted::new(
    Key::new(
        "kill_grace",
        Kind::Duration,
        "How long the agent gets to exit after SIGTERM before SIGKILL",
    )
    .default("10s")
    .env()
    .flag(Flag::Run)
    .brief("Time between SIGTERM and SIGKILL")
    .heading(Heading::Limits, 5)
    .advanced(),
);
pub(crate) static FINISH_GRACE: Defaulted<Duration> = Defaulted::new(
    Key::new("finish_grace", Kind::Duration, "How long an agent that printed its final result may take to exit before it is ended (its turn still counts as completed)")
        .default("5s")
        .env()
        .flag(Flag::Run)
        .brief("Time to exit after the final result")
        .heading(Heading::Limits, 6)
        .advanced(),
);
pub(crate) static PERMISSION_TIMEOUT: Defaulted<Duration> = Defaulted::new(
    Key::new(
        "permission_timeout",
        Kind::Duration,
        "Over ACP at a terminal: how long a permission request waits for a key before it is refused",
    )
    .default("5m")
    .env()
    .flag(Flag::Run)
        .brief("Time to answer a permission request (ACP)")
        .heading(Heading::Limits, 4)
        .advanced(),
);
pub(crate) static TIMEOUT: Typed<Duration> = Typed::new(
    Key::new(
        "timeout",
        Kind::Duration,
        "Stop the agent when the whole run has taken this long",
    )
    .example("\"30m\"")
    .env()
    .flag(Flag::Run)
    .brief("Stop the run after this long")
    .heading(Heading::Limits, 1),
);
pub(crate) static MAX_COST: Typed<f64> = Typed::new(
    Key::new(
        "max_cost",
        Kind::Usd,
        "Stop the agent once its reported cost crosses this many US dollars",
    )
    .example("5.0")
    .env()
    .flag(Flag::Run)
    .brief("Stop once it cost this many US dollars")
    .heading(Heading::Limits, 2),
);
pub(crate) static STUCK: Defaulted<crate::stuck::Mode> = Defaulted::new(
    Key::new("stuck", Kind::Stuck, "What to do about an agent going round in circles (the same call with the same result, the same failure after each patch, two calls in turn, empty steps): off, warn, stop it (the run ends `stuck`, exit code 10), or nudge it: once, its session goes on with a prompt saying what it repeats, and stuck again it is stopped")
        .default("stop")
        .env()
        .flag(Flag::Run)
        .brief("When the agent goes round in circles")
        .heading(Heading::Limits, 20),
);
pub(crate) static STUCK_REPEAT: Defaulted<u32> = Defaulted::new(
    Key::new("stuck_repeat", Kind::Count, "Stop the agent when it makes the same call with the same result this many times in a row, with a warning two before (0: never)")
        .default("5")
        .env()
        .flag(Flag::Run)
        .brief("Stop at this many same calls and results")
        .heading(Heading::Limits, 21)
        .advanced(),
);
pub(crate) static STUCK_SAME_FAILURE: Defaulted<u32> = Defaulted::new(
    Key::new("stuck_same_failure", Kind::Count, "Stop the agent when a shell command fails the same way this many times in a turn, whatever ran between, with a warning two before (0: never)")
        .default("5")
        .env()
        .flag(Flag::Run)
        .brief("Stop at this many same shell failures")
        .heading(Heading::Limits, 22)
        .advanced(),
);
pub(crate) static STUCK_SAME_ERROR: Defaulted<u32> = Defaulted::new(
    Key::new("stuck_same_error", Kind::Count, "Stop the agent when the same call ends in the same error this many times in a row (0: never)")
        .default("3")
        .env()
        .flag(Flag::Run)
        .brief("Stop at this many same errors in a row")
        .heading(Heading::Limits, 23)
        .advanced(),
);
pub(crate) static STUCK_PING_PONG: Defaulted<u32> = Defaulted::new(
    Key::new("stuck_ping_pong", Kind::Count, "Stop the agent after this many cycles of two calls in turn (A, B, A, B, …) with unchanged results (0: never)")
        .default("3")
        .env()
        .flag(Flag::Run)
        .brief("Stop at this many A, B, A, B cycles")
        .heading(Heading::Limits, 24)
        .advanced(),
);
pub(crate) static STUCK_MONOLOGUE: Defaulted<u32> = Defaulted::new(
    Key::new("stuck_monologue", Kind::Count, "Stop the agent after this many steps in a row without a tool call whose text is empty or the same (0: never)")
        .default("3")
        .env()
        .flag(Flag::Run)
        .brief("Stop at this many empty or same steps")
        .heading(Heading::Limits, 25)
        .advanced(),
);
pub(crate) static PLAN: Defaulted<bool> = Defaulted::new(
    Key::new("plan", Kind::Bool, "Plan first: a read-only turn that writes a plan, your decision (execute, revise, abort), then execution in the same agent session")
        .default("false")
        .env()
        .flag(Flag::Run)
        .brief("Plan first, then execute on your approval")
        .heading(Heading::Plan, 1),
);
pub(crate) static CHECKS: Typed<Option<CheckSpec>> = Typed::new(
    Key::new("checks", Kind::Check, "Project checks that run, in order, once the task completed (`[checks]`, a command or a table with `command`, `timeout` and `cwd`; `false` turns off one a lower layer set): the run completes only if they pass")
        .example("{ command = \"cargo test\", timeout = \"10m\" }")
        .trust(Trust::Runs),
);
pub(crate) static CHECK_TIMEOUT: Defaulted<Duration> = Defaulted::new(
    Key::new(
        "check_timeout",
        Kind::Duration,
        "End a check that runs longer than this, with its whole tree (unless the check sets its own)",
    )
    .default("30m")
    .env()
    .flag(Flag::Run)
        .brief("End a check that runs longer than this")
        .heading(Heading::Checks, 3),
);
pub(crate) static REPAIR_ATTEMPTS: Defaulted<u32> = Defaulted::new(
    Key::new("repair_attempts", Kind::Count, "When checks fail after a completed task, resume the same session this many times to fix them, running the checks again after each (0: never)")
        .default("2")
        .env()
        .flag(Flag::Run)
        .brief("Times to resume the session to fix checks")
        .heading(Heading::Checks, 4),
);
pub(crate) static REPAIR_BUDGET: Typed<f64> = Typed::new(
    Key::new("repair_budget", Kind::Usd, "What repair attempts and the pass after a permission stall may spend together, on top of the task [default with --max-cost B: the larger of 0.2 × B and $1; without: no cap]")
        .example("1.0")
        .env()
        .flag(Flag::Run)
        .brief("What repairs may spend, on top of the task")
        .heading(Heading::Checks, 5),
);
pub(crate) static REPAIR_PROMPT: Typed<String> = Typed::new(
    Key::new("repair_prompt", Kind::Text, "The repair prompt, a template: {failures} is replaced by the failing checks (each with its command, how it ended and the end of its output), {attempt} and {attempts} by the attempt's number and how many there may be")
        .example("\"Fix these failing checks (attempt {attempt} of {attempts}):\\n{failures}\"")
        .env(),
);
pub(crate) static RETRY_DENIED: Defaulted<bool> = Defaulted::new(
    Key::new("retry_denied", Kind::Bool, "When the agent stalls because its tools were refused permission, give its session one more pass that names what was refused and asks it to reach the goal without them (or to say what it needs)")
        .default("false")
        .env()
        .flag(Flag::Run)
        .brief("Retry once, without the refused tools")
        .heading(Heading::Checks, 6),
);
pub(crate) static OBSERVERS: Typed<Vec<ObserverSpec>> = Typed::new(
    Key::new("observers", Kind::Observers, "Programs started for each run that get every event on their stdin as JSON lines (`[[observers]]` with `command` and optionally `raw`); `--on-event` adds more")
        .example("[{ command = \"jq -c 'select(.type == \\\"tool.completed\\\")' >> tools.log\" }]")
        .trust(Trust::Runs),
);
pub(crate) static ON_EVENT_RAW: Defaulted<bool> = Defaulted::new(
    Key::new("on_event_raw", Kind::Bool, "Each line to an `--on-event` observer also holds `raw`, the agent's own line the event came from")
        .default("false")
        .env()
        .flag(Flag::Run)
        .brief("Add the agent's own line to observer lines")
        .heading(Heading::Observers, 2)
        .advanced(),
);
pub(crate) static EVENTS_TO: Typed<PathBuf> = Typed::new(
    Key::new("events_to", Kind::File, "Append every event as a JSON line to this file, or write it to this FIFO without ever waiting for its reader")
        .example("\"/tmp/runbook-events.fifo\"")
        .env()
        .flag(Flag::Run)
        .trust(Trust::WritesOutside)
        .brief("Write every event to this file or FIFO")
        .heading(Heading::Observers, 3),
);
pub(crate) static RUNS_DIR: Typed<PathBuf> = Typed::new(
    Key::new(
        "runs_dir",
        Kind::Dir,
        "Where run directories go [default: $XDG_STATE_HOME/runbook/runs]",
    )
    .example("\"~/.local/state/runbook/runs\"")
    .env()
    .flag(Flag::Runs)
    .trust(Trust::WritesOutside)
    .brief("Where run directories go")
    .heading(Heading::RunDir, 1),
);
pub(crate) static UPLOAD: Typed<String> = Typed::new(
    Key::new(
        "upload",
        Kind::Url,
        "At the end of the run, upload its directory to object storage under URL/runs/<run id>/, the receipt last: s3://bucket/prefix, gs://…, az://…, file:///path. Credentials come from the provider's usual variables and files (AWS_*, GOOGLE_*, AZURE_*); a failed upload is retried, then reported, and changes neither the exit code nor the local copy. An empty value turns off an upload set elsewhere",
    )
    .example("\"s3://team-runs/nightly\"")
    .env()
    .flag(Flag::Run)
    .trust(Trust::WritesOutside)
    .brief("Upload the run to object storage")
    .heading(Heading::Output, 7),
);
pub(crate) static COLOR: Defaulted<ColorChoice> = Defaulted::new(
    Key::new("color", Kind::Color, "When to use colour")
        .default("auto")
        .env()
        .flag(Flag::Global)
        .brief("When to use colour")
        .heading(Heading::Output, 5),
);
pub(crate) static PRICES: Typed<Price> = Typed::new(
    Key::new(
        "prices",
        Kind::Price,
        "Model prices in USD per million tokens, over the shipped table (`[prices.\"MODEL\"]`)",
    )
    .example("{ input = 1.25, cached_input = 0.125, output = 10.0 }"),
);

pub(crate) static SANDBOX: Defaulted<Option<By>> = Defaulted::new(
    Key::new("sandbox", Kind::Sandbox, "Restrict the agent, its checks and repair turns: writes only in the work dir, its temp dir and the agent's own state dirs, no reads of `sandbox.read_deny` (~/.ssh, ~/.aws, …); with Landlock (Linux 6.12 or newer) also TCP only to 443, the provider's port and `sandbox.ports`, and no signals outside the run. `--sandbox` (`true`, `auto`): Landlock, or where it is missing or too old bubblewrap (`bwrap`) if installed, else refuses to start; `--sandbox=landlock`: Landlock or refuse; `--sandbox=bwrap`: bubblewrap (ports and signals not enforced) or refuse; `off`: none")
        .default("false")
        .env()
        .flag(Flag::Run)
        .trust(Trust::Loosens)
        .brief("Sandbox the agent")
        .heading(Heading::Agent, 8),
);
pub(crate) static SANDBOX_WRITE: Typed<PathBuf> = Typed::new(
    Key::new("sandbox.write", Kind::SandboxPath, "More directories the sandboxed agent may write in (`[sandbox] write = [...]`), besides the work dir, its temp dir and the agent's own state dirs")
        .example("[\"~/.cache/pip\"]")
        .trust(Trust::Loosens),
);
pub(crate) static SANDBOX_READ_DENY: Typed<PathBuf> = Typed::new(
    Key::new("sandbox.read_deny", Kind::SandboxPath, "More paths the sandboxed agent may not read (`[sandbox] read_deny = [...]`), besides ~/.ssh, ~/.aws, ~/.config/gcloud, ~/.gnupg, ~/.netrc and other users' homes")
        .example("[\"~/.kube\"]"),
);
pub(crate) static SANDBOX_PORTS: Typed<u16> = Typed::new(
    Key::new("sandbox.ports", Kind::Port, "More TCP ports the sandboxed agent may connect to (`[sandbox] ports = [...]`, `--allow-port N`, repeatable), besides 443 and the provider's")
        .example("[8080]")
        .flag(Flag::Run)
        .flag_name("allow-port")
        .trust(Trust::Loosens)
        .brief("Let the sandboxed agent connect to port N")
        .heading(Heading::Agent, 9)
        .advanced(),
);

/// The keys, in the order `runbook config` and `--help` show them.
static KEYS: [&Key; 38] = [
    &AGENT.0.key,
    &AGENT_CMD.key,
    &VIA.0.key,
    &ACP_CMD.key,
    &MODEL.key,
    &PERMISSIONS.0.key,
    &BIN.key,
    &ARGS.key,
    &SANDBOX.0.key,
    &SANDBOX_WRITE.key,
    &SANDBOX_READ_DENY.key,
    &SANDBOX_PORTS.key,
    &INACTIVITY_TIMEOUT.0.key,
    &KILL_GRACE.0.key,
    &FINISH_GRACE.0.key,
    &PERMISSION_TIMEOUT.0.key,
    &TIMEOUT.key,
    &MAX_COST.key,
    &STUCK.0.key,
    &STUCK_REPEAT.0.key,
    &STUCK_SAME_FAILURE.0.key,
    &STUCK_SAME_ERROR.0.key,
    &STUCK_PING_PONG.0.key,
    &STUCK_MONOLOGUE.0.key,
    &PLAN.0.key,
    &CHECKS.key,
    &CHECK_TIMEOUT.0.key,
    &REPAIR_ATTEMPTS.0.key,
    &REPAIR_BUDGET.key,
    &REPAIR_PROMPT.key,
    &RETRY_DENIED.0.key,
    &OBSERVERS.key,
    &ON_EVENT_RAW.0.key,
    &EVENTS_TO.key,
    &RUNS_DIR.key,
    &COLOR.0.key,
    &UPLOAD.key,
    &PRICES.key,
];

/// Every key, in the order `runbook config` and `--help` show them.
pub(crate) fn all() -> impl Iterator<Item = &'static Key> {
    KEYS.iter().copied()
}

/// A key whose values are `T`, so that reading it is checked by the compiler.
pub(crate) struct Typed<T> {
    pub key: Key,
    value: PhantomData<fn() -> T>,
}

impl<T: FromValue> Typed<T> {
    /// Declares a key of values `T`. A key of a kind that cannot hold a `T` does not compile.
    const fn new(key: Key) -> Self {
        let mut i = 0;
        let mut holds = false;
        while i < T::KINDS.len() {
            holds |= T::KINDS[i] as u8 == key.kind as u8;
            i += 1;
        }
        assert!(holds, "a key's type must hold values of its kind");
        Self {
            key,
            value: PhantomData,
        }
    }
}

/// A key with a built-in value: it always has one.
pub(crate) struct Defaulted<T>(pub Typed<T>);

impl<T: FromValue> Defaulted<T> {
    /// Declares a key of values `T` with a default. A key without one does not compile.
    const fn new(key: Key) -> Self {
        assert!(key.default.is_some(), "a defaulted key needs a default");
        Self(Typed::new(key))
    }

    /// The built-in value.
    #[cfg(test)]
    pub(crate) fn default_value(&self) -> T {
        let value = self.0.key.default_value().expect("declared with a default");
        T::from_value(&value).expect("a key's default is of its kind")
    }
}

/// A configuration key.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Key {
    /// The name in files and in `runbook config`; upper-cased after `RUNBOOK_` it is the
    /// environment variable, with `-` for `_` it is the flag.
    pub name: &'static str,
    pub kind: Kind,
    pub help: &'static str,
    /// The built-in value, as it would be given on the command line; `None`: unset.
    pub default: Option<&'static str>,
    /// A value for `runbook config --init` to suggest, written as TOML (for keys without a default).
    pub example: Option<&'static str>,
    /// Set by a `RUNBOOK_*` environment variable.
    pub env: bool,
    pub flag: Flag,
    /// One per agent, under `[agents.NAME]`; the environment variable is `RUNBOOK_NAME_KEY` and the
    /// flag `--agent-KEY`, which sets it for the agent being run.
    pub per_agent: bool,
    /// A flag (its long name) that cannot be given with this key's flag.
    pub conflicts_with: Option<&'static str>,
    /// Whether a repository's file may set it before the file is trusted.
    pub trust: Trust,
    /// The flag's one-line help in `-h`; `help` is the whole of it, in `--help`.
    pub brief: Option<&'static str>,
    /// The heading `--help` shows the flag under, and its place there.
    pub heading: Option<(Heading, usize)>,
    /// Seldom needed: the flag is left out of `-h` (`--help` shows it).
    pub advanced: bool,
    /// The flag's long name when it is not the key's (`--allow-port` for `sandbox.ports`).
    pub flag_name: Option<&'static str>,
}

/// The headings `--help` groups options under, in the order it shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Heading {
    Agent,
    Limits,
    Plan,
    Checks,
    Observers,
    Output,
    RunDir,
}

impl Heading {
    /// Every heading, in the order `--help` shows them.
    #[cfg(test)]
    pub(crate) const ALL: [Heading; 7] = [
        Heading::Agent,
        Heading::Limits,
        Heading::Plan,
        Heading::Checks,
        Heading::Observers,
        Heading::Output,
        Heading::RunDir,
    ];

    pub(crate) const fn title(self) -> &'static str {
        match self {
            Heading::Agent => "Agent",
            Heading::Limits => "Limits",
            Heading::Plan => "Plan",
            Heading::Checks => "Checks and repair",
            Heading::Observers => "Observers",
            Heading::Output => "Output",
            Heading::RunDir => "Run directory",
        }
    }
}

/// What a value of a key set in a repository's file (`runbook.toml`, `runbook.local.toml`) can
/// make runbook do, and so whether the file must be trusted first (`runbook trust`). The
/// user's own file, variables and flags are always trusted.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Trust {
    /// Nothing runs or is written because of it (a model, a timeout, a budget).
    Never,
    /// It starts a program or decides what a started one may do: trusted first, unless the
    /// value turns it off (a check set to `false`, no observers, no arguments, permissions
    /// that give no more than the agent's own).
    Runs,
    /// It is where runbook writes: trusted first when it is outside the repository.
    WritesOutside,
    /// It loosens the sandbox (turns it off, lets the agent write or connect somewhere more):
    /// trusted first. A repository's file may tighten it freely.
    Loosens,
}

/// Which command line, if any, has a flag for a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flag {
    /// No flag: files and the environment only.
    None,
    /// `--KEY` on `runbook run` and `runbook config`.
    Run,
    /// `--KEY` and this short flag on `runbook run` and `runbook config`.
    Short(char),
    /// `--KEY` on every command that reads run directories.
    Runs,
    /// `--KEY` on every command.
    Global,
    /// The arguments after `--` on `runbook run`.
    Trailing,
}

impl Key {
    const fn new(name: &'static str, kind: Kind, help: &'static str) -> Self {
        Self {
            name,
            kind,
            help,
            default: None,
            example: None,
            env: false,
            flag: Flag::None,
            per_agent: false,
            conflicts_with: None,
            trust: Trust::Never,
            brief: None,
            heading: None,
            advanced: false,
            flag_name: None,
        }
    }

    const fn flag_name(self, name: &'static str) -> Self {
        Self {
            flag_name: Some(name),
            ..self
        }
    }

    const fn brief(self, brief: &'static str) -> Self {
        Self {
            brief: Some(brief),
            ..self
        }
    }

    const fn heading(self, heading: Heading, place: usize) -> Self {
        Self {
            heading: Some((heading, place)),
            ..self
        }
    }

    const fn advanced(self) -> Self {
        Self {
            advanced: true,
            ..self
        }
    }

    const fn trust(self, trust: Trust) -> Self {
        Self { trust, ..self }
    }

    const fn default(self, default: &'static str) -> Self {
        Self {
            default: Some(default),
            ..self
        }
    }

    const fn example(self, example: &'static str) -> Self {
        Self {
            example: Some(example),
            ..self
        }
    }

    const fn env(self) -> Self {
        Self { env: true, ..self }
    }

    const fn flag(self, flag: Flag) -> Self {
        Self { flag, ..self }
    }

    const fn conflicts_with(self, flag: &'static str) -> Self {
        Self {
            conflicts_with: Some(flag),
            ..self
        }
    }

    const fn per_agent(self) -> Self {
        Self {
            per_agent: true,
            ..self
        }
    }

    /// The key's environment variable; `agent` is required for per-agent keys.
    pub(crate) fn env_var(&self, agent: Option<&str>) -> Option<String> {
        if !self.env {
            return None;
        }
        let scope = agent.map(|a| format!("{}_", a.to_ascii_uppercase()));
        Some(format!(
            "RUNBOOK_{}{}",
            scope.unwrap_or_default(),
            self.name.to_ascii_uppercase()
        ))
    }

    /// How `--help` names the environment variable (`RUNBOOK_<AGENT>_BIN` for per-agent keys).
    pub(crate) fn env_help(&self) -> Option<String> {
        self.env_var(self.per_agent.then_some("<agent>"))
    }

    /// The long flag, without its dashes.
    pub(crate) fn long(&self) -> String {
        if let Some(name) = self.flag_name {
            return name.to_owned();
        }
        let long = self.name.replace('_', "-");
        if self.per_agent {
            format!("agent-{long}")
        } else {
            long
        }
    }

    /// The built-in value.
    pub(crate) fn default_value(&self) -> Option<Value> {
        let text = self.default?;
        Some(self.kind.parse(text).expect("built-in defaults parse"))
    }

    /// The names this key has in files: one, or one per agent.
    pub(crate) fn slots(&'static self) -> Vec<Slot> {
        if self.per_agent {
            agents()
                .map(|agent| Slot::agents(self, Some(agent)))
                .collect()
        } else {
            vec![Slot::of(self)]
        }
    }
}

/// The key named `name` (not per agent).
pub(crate) fn find(name: &str) -> Option<&'static Key> {
    all().find(|k| k.name == name && !k.per_agent)
}

/// The per-agent key named `name`.
pub(crate) fn find_per_agent(name: &str) -> Option<&'static Key> {
    all().find(|k| k.name == name && k.per_agent)
}

/// One place a value can be set: a key, a key of one agent, or one entry of a table key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Slot {
    pub key: &'static Key,
    pub agent: Option<AgentKind>,
    /// The name of a table key's entry (the model of a `prices` entry).
    pub entry: Option<String>,
}

impl Slot {
    /// The key itself.
    pub(crate) fn of(key: &'static Key) -> Self {
        Self::agents(key, None)
    }

    /// A per-agent key of `agent` (or of no agent).
    pub(crate) fn agents(key: &'static Key, agent: Option<AgentKind>) -> Self {
        Self {
            key,
            agent,
            entry: None,
        }
    }

    /// The entry `name` of a table key.
    pub(crate) fn entry(key: &'static Key, name: String) -> Self {
        Self {
            key,
            agent: None,
            entry: Some(name),
        }
    }

    /// The slot's name in files: `model`, `agents.claude.bin`, `prices."gpt-5"`.
    pub(crate) fn name(&self) -> String {
        match (self.agent, &self.entry) {
            (Some(agent), _) => format!("agents.{}.{}", agent_name(agent), self.key.name),
            (None, Some(entry)) => {
                format!("{}.{}", self.key.name, toml::Value::String(entry.clone()))
            }
            (None, None) => self.key.name.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_default_parses_and_every_key_has_something_to_suggest() {
        for key in all() {
            assert!(
                key.default.is_some() || key.example.is_some(),
                "{} needs an example",
                key.name
            );
            let _ = key.default_value();
        }
    }

    #[test]
    fn defaults_the_wire_format_keeps_are_the_settings_defaults() {
        assert_eq!(
            FINISH_GRACE.default_value(),
            crate::event::DEFAULT_FINISH_GRACE
        );
    }

    #[test]
    fn names_follow_one_convention() {
        let model = find("model").unwrap();
        assert_eq!(model.env_var(None).as_deref(), Some("RUNBOOK_MODEL"));
        let bin = find_per_agent("bin").unwrap();
        assert_eq!(
            bin.env_var(Some("opencode")).as_deref(),
            Some("RUNBOOK_OPENCODE_BIN")
        );
        assert_eq!(bin.long(), "agent-bin");
        assert_eq!(
            find("inactivity_timeout").unwrap().long(),
            "inactivity-timeout"
        );
        assert_eq!(bin.slots()[1].name(), "agents.claude.bin");
    }
}
