//! The library: run an agent from a Rust program as `runbook run` would, with its options typed,
//! its events given to the program's own observers, and its receipt returned.
//!
//! The builder writes the command line the options stand for and `runbook run`'s own parser reads
//! it, so a run from a program and one from the shell go through the same code: the same
//! configuration files and `RUNBOOK_*` variables, the same checks, the same supervision.

use std::future::Future;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser as _;

use crate::cli::{Cli, Command};
use crate::commands::run::{Host, execute};
use crate::event::Event;
use crate::exit::ExitStatus;
use crate::observers::{Callback, Meta};
use crate::receipt::Receipt;

/// The agent CLI a run drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Agent {
    /// OpenCode (`opencode run --format json`).
    Opencode,
    /// Claude Code (`claude -p --output-format stream-json`).
    Claude,
    /// Codex (`codex exec --json`).
    Codex,
}

impl Agent {
    fn as_str(self) -> &'static str {
        match self {
            Agent::Opencode => "opencode",
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }
}

/// What the agent may do without asking (it cannot ask: it runs headless).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Permissions {
    /// The agent's own settings.
    Agent,
    /// Read, search and plan; no edits, no commands.
    ReadOnly,
    /// Edit files and run commands in the working directory.
    Workspace,
    /// Everything: for throwaway machines only.
    Bypass,
}

impl Permissions {
    fn as_str(self) -> &'static str {
        match self {
            Permissions::Agent => "agent",
            Permissions::ReadOnly => "read-only",
            Permissions::Workspace => "workspace",
            Permissions::Bypass => "bypass",
        }
    }
}

/// Why a run could not be made at all. A run that started and then failed (the agent erred, hung,
/// spent its budget) is not an error: its receipt's `outcome` says how it ended.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// An option, a configuration file or a `RUNBOOK_*` variable is wrong, the agent's program
    /// is not there, or a repository's file that is not trusted sets something that would run
    /// (a program is never asked: `RUNBOOK_TRUST` names the files it may trust): nothing was
    /// started. The message says what and what to do, in one line.
    #[error("{0}")]
    Usage(String),
    /// The run could not be made, or its record could not be written (a full disk).
    #[error("{0}")]
    Failed(String),
}

/// One run of an agent on a task: set its options, add observers, then [`Run::run`] it.
///
/// ```no_run
/// # async fn example() -> Result<(), runbook::RunError> {
/// use std::time::Duration;
/// use runbook::{Agent, Run};
///
/// let receipt = Run::new("Fix the flaky test")
///     .agent(Agent::Claude)
///     .max_cost(2.0)
///     .timeout(Duration::from_secs(30 * 60))
///     .check("test", "cargo test")
///     .on_event(|event, meta| eprintln!("turn {}: {}", meta.turn_index, event.kind.type_name()))
///     .run()
///     .await?;
/// println!("{:?} for ${:.2}", receipt.outcome, receipt.cost.usd.unwrap_or(0.0));
/// # Ok(())
/// # }
/// ```
#[must_use = "a run does nothing until `run` is awaited"]
pub struct Run {
    prompt: String,
    then: Vec<String>,
    flags: Vec<String>,
    agent_args: Vec<String>,
    callbacks: Vec<Callback>,
    show: bool,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Run")
            .field("prompt", &self.prompt)
            .field("flags", &self.flags)
            .field("agent_args", &self.agent_args)
            .field("observers", &self.callbacks.len())
            .field("show", &self.show)
            .finish()
    }
}

impl Run {
    /// A run of the configured agent (OpenCode unless configured otherwise) on `prompt`.
    pub fn new(prompt: impl Into<String>) -> Self {
        Self {
            prompt: prompt.into(),
            then: Vec::new(),
            flags: Vec::new(),
            agent_args: Vec::new(),
            callbacks: Vec::new(),
            show: false,
        }
    }

    fn flag(mut self, name: &str, value: impl ToString) -> Self {
        self.flags.push(format!("--{name}"));
        self.flags.push(value.to_string());
        self
    }

    fn switch(mut self, name: &str, on: bool) -> Self {
        if on {
            self.flags.push(format!("--{name}"));
        }
        self
    }

    /// Which agent to run (`--agent`).
    pub fn agent(self, agent: Agent) -> Self {
        self.flag("agent", agent.as_str())
    }

    /// Run this command instead, an agent that prints runbook's universal events (`--agent-cmd`).
    pub fn agent_command(self, command: impl Into<String>) -> Self {
        self.flag("agent-cmd", command.into())
    }

    /// The agent's binary (`--agent-bin`).
    pub fn agent_bin(self, path: impl Into<PathBuf>) -> Self {
        self.flag("agent-bin", path.into().display())
    }

    /// Extra arguments for the agent, before the prompt (the arguments after `--`).
    pub fn agent_args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.agent_args.extend(args.into_iter().map(Into::into));
        self
    }

    /// The model, as the agent names it (`-m`; OpenCode: `provider/model`).
    pub fn model(self, model: impl Into<String>) -> Self {
        self.flag("model", model.into())
    }

    /// What the agent may do without asking (`--permissions`).
    pub fn permissions(self, permissions: Permissions) -> Self {
        self.flag("permissions", permissions.as_str())
    }

    /// Where the agent works (`--cwd`) [default: the current directory].
    pub fn cwd(self, dir: impl Into<PathBuf>) -> Self {
        self.flag("cwd", dir.into().display())
    }

    /// Variables for the agent from a dotenv file (`--env-file`; repeatable).
    pub fn env_file(self, path: impl Into<PathBuf>) -> Self {
        self.flag("env-file", path.into().display())
    }

    /// Stop the agent after this long without any activity (`--inactivity-timeout`).
    pub fn inactivity_timeout(self, after: Duration) -> Self {
        self.flag("inactivity-timeout", millis(after))
    }

    /// How long the agent gets to exit after SIGTERM before SIGKILL (`--kill-grace`).
    pub fn kill_grace(self, grace: Duration) -> Self {
        self.flag("kill-grace", millis(grace))
    }

    /// How long an agent that gave its final result may take to exit (`--finish-grace`).
    pub fn finish_grace(self, grace: Duration) -> Self {
        self.flag("finish-grace", millis(grace))
    }

    /// Stop the agent when the whole run has taken this long (`--timeout`).
    pub fn timeout(self, after: Duration) -> Self {
        self.flag("timeout", millis(after))
    }

    /// Stop the agent once its cost crosses this many US dollars (`--max-cost`).
    pub fn max_cost(self, usd: f64) -> Self {
        self.flag("max-cost", usd)
    }

    /// Once the agent has finished, continue its session with this prompt (`--then`;
    /// repeatable).
    pub fn then(mut self, prompt: impl Into<String>) -> Self {
        self.then.push(prompt.into());
        self
    }

    /// Plan first (`--plan`): a read-only turn that writes a plan, then its execution in the same
    /// session. A program is not asked to approve it: it is executed (`--yes`).
    pub fn plan(self, plan: bool) -> Self {
        self.switch("plan", plan).switch("yes", plan)
    }

    /// A project check to run once the task completed (`--check NAME=CMD`; repeatable).
    pub fn check(self, name: &str, command: &str) -> Self {
        self.flag("check", format!("{name}={command}"))
    }

    /// Run no checks, not even those of `runbook.toml` (`--no-checks`).
    pub fn no_checks(self) -> Self {
        self.switch("no-checks", true)
    }

    /// End a check that runs longer than this (`--check-timeout`).
    pub fn check_timeout(self, after: Duration) -> Self {
        self.flag("check-timeout", millis(after))
    }

    /// How many times failing checks may be repaired in the same session
    /// (`--repair-attempts`; 0: never).
    pub fn repair_attempts(self, attempts: u32) -> Self {
        self.flag("repair-attempts", attempts)
    }

    /// What repair may spend on top of the task (`--repair-budget`).
    pub fn repair_budget(self, usd: f64) -> Self {
        self.flag("repair-budget", usd)
    }

    /// Give a session whose tools were refused one more pass without them (`--retry-denied`).
    pub fn retry_denied(self, retry: bool) -> Self {
        self.switch("retry-denied", retry)
    }

    /// A name for the run, in its receipt and every observer's [`Meta`] (`--name`).
    pub fn name(self, name: impl Into<String>) -> Self {
        self.flag("name", name.into())
    }

    /// Where run directories go (`--runs-dir`).
    pub fn runs_dir(self, dir: impl Into<PathBuf>) -> Self {
        self.flag("runs-dir", dir.into().display())
    }

    /// Start this command for the run and write every event to its stdin as a JSON line
    /// (`--on-event`; repeatable).
    pub fn on_event_command(self, command: impl Into<String>) -> Self {
        self.flag("on-event", command.into())
    }

    /// Write every event as a JSON line to this file or FIFO (`--events-to`).
    pub fn events_to(self, path: impl Into<PathBuf>) -> Self {
        self.flag("events-to", path.into().display())
    }

    /// Show the run as `runbook run` does: its view on stderr (off by default).
    pub fn show(mut self, show: bool) -> Self {
        self.show = show;
        self
    }

    /// Call `observer` with an owned copy of every event, in order, and its [`Meta`], on a thread
    /// of its own. The run never waits for it: while it is busy, up to 4,096 events wait for it,
    /// and the ones after are dropped and counted in the receipt's `observers`. A panic in it is
    /// caught and counted; it still gets the next events. When the run ends it gets up to 2 s to
    /// take what is still queued.
    pub fn on_event<F>(mut self, observer: F) -> Self
    where
        F: FnMut(Event, Meta) + Send + 'static,
    {
        self.callbacks.push(Callback::Blocking(Box::new(observer)));
        self
    }

    /// Like [`Run::on_event`], for an async observer: each event's future is awaited, in order,
    /// on a task of its own (spawned on the runtime that awaits [`Run::run`]), never by the run.
    pub fn on_event_async<F, Fut>(mut self, observer: F) -> Self
    where
        F: Fn(Event, Meta) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.callbacks
            .push(Callback::Async(Box::new(move |event, meta| {
                Box::pin(observer(event, meta))
            })));
        self
    }

    /// The command line these options stand for, but for the prompts, which are set after it is
    /// read (a prompt that starts with `-` is still a prompt).
    fn argv(&self) -> Vec<String> {
        let mut argv = vec!["runbook".to_owned(), "run".to_owned()];
        argv.extend(self.flags.iter().cloned());
        argv.push("PROMPT".to_owned());
        if !self.agent_args.is_empty() {
            argv.push("--".to_owned());
            argv.extend(self.agent_args.iter().cloned());
        }
        argv
    }

    /// Runs the agent to the end: supervised, logged in its run directory, checked and repaired
    /// as configured. Returns its receipt whatever the outcome; an error only when nothing could
    /// be started, or the run's record could not be written.
    ///
    /// Ctrl-C, SIGTERM and SIGHUP to the program stop the run (the agent is ended with its whole
    /// tree) for as long as it lasts.
    pub async fn run(self) -> Result<Receipt, RunError> {
        let cli = Cli::try_parse_from(self.argv()).map_err(|e| {
            let text = e.to_string();
            let line = text.lines().next().unwrap_or_default();
            RunError::Usage(line.trim_start_matches("error: ").to_owned())
        })?;
        let Command::Run(mut args) = cli.command else {
            unreachable!("the command line is `runbook run …`");
        };
        args.prompt = self.prompt;
        args.then = self.then;
        let host = Host {
            views: self.show,
            callbacks: self.callbacks,
            whole_process: false,
        };
        let finished = execute(args, &cli.global, host).await.map_err(|e| match e
            .downcast_ref::<crate::exit::Error>()
        {
            Some(usage) => RunError::Usage(usage.to_string()),
            None => RunError::Failed(format!("{e:#}")),
        })?;
        match (finished.status, finished.receipt) {
            (ExitStatus::Internal, _) | (_, None) => Err(RunError::Failed(
                "the run's record could not be written whole".to_owned(),
            )),
            (_, Some(receipt)) => Ok(receipt),
        }
    }
}

/// A duration as the command line takes it.
fn millis(d: Duration) -> String {
    format!("{}ms", d.as_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_become_the_command_line_they_stand_for() {
        let run = Run::new("-fix it")
            .agent(Agent::Codex)
            .permissions(Permissions::Workspace)
            .timeout(Duration::from_millis(1500))
            .max_cost(2.5)
            .check("test", "cargo test")
            .plan(true)
            .agent_args(["--x"]);
        assert_eq!(
            run.argv(),
            [
                "runbook",
                "run",
                "--agent",
                "codex",
                "--permissions",
                "workspace",
                "--timeout",
                "1500ms",
                "--max-cost",
                "2.5",
                "--check",
                "test=cargo test",
                "--plan",
                "--yes",
                "PROMPT",
                "--",
                "--x"
            ]
        );
        let cli = Cli::try_parse_from(run.argv()).unwrap();
        let Command::Run(args) = cli.command else {
            panic!()
        };
        assert_eq!(args.checks[0].command, "cargo test");
        assert!(args.options.values().iter().any(|f| f.flag == "--"));
    }
}
