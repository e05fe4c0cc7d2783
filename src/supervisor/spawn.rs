//! Starting the agent: its own process group, in the run's scope (its mark, its cgroup), stdin
//! closed, both pipes read on tasks of their own that send batches of events to the supervisor.

use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;

use anyhow::Context as _;
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use super::raw::RawLogs;
use super::readers::{self, Batch};
use super::scope::Scope;
use super::tree::Tree;
use crate::agent::{Adapter, FinisherSlot, ParseContext, StreamEnd};
use crate::consumer::Lane;
use crate::redact::Redactor;

/// What to run for one turn.
pub(crate) struct TurnSpec<'a> {
    pub program: &'a Path,
    pub args: Vec<String>,
    pub cwd: &'a Path,
    pub adapter: &'a dyn Adapter,
    /// What the adapter's parser is told.
    pub parse: ParseContext,
    /// Set in the agent's environment, on top of runbook's own.
    pub env: Vec<(String, String)>,
    pub turn: crate::event::Turn,
    /// Ask the agent binary for its version alongside the run.
    pub probe_version: bool,
    /// What the agent binary said its version was, when it was asked before the turn.
    pub version: Option<String>,
    /// A planning turn of `--plan`.
    pub planning: bool,
    /// The prompt, sent as `session/prompt` to an agent that speaks ACP (others have it in
    /// `args`).
    pub prompt: &'a str,
    /// What an ACP agent may do without asking (others have it in `args`).
    pub permissions: crate::agent::Permissions,
    /// Whether a person at the terminal may be asked a permission.
    pub ask_person: bool,
}

/// A started agent and its readers.
pub(crate) struct Spawned {
    pub child: Child,
    /// The client of an agent that speaks ACP, which writes to its stdin.
    pub client: Option<super::acp::Client>,
    pub pid: u32,
    pub tree: Tree,
    /// Batches of events from both pipes; closed once both reached their end.
    pub batches: mpsc::Receiver<Batch>,
    /// The stdout reader's way to deliver a small read's events itself (see [`Lane`]).
    pub lane: Lane,
    /// The stdout reader, with the adapter's verdict on how the stream ended.
    pub stdout: JoinHandle<StreamEnd>,
    pub stderr: JoinHandle<()>,
    /// What the stdout parser leaves to ask the agent's binary once it has exited.
    pub finishing: FinisherSlot,
    /// Tells both readers to stop: close runbook's ends of the pipes and finish with what was
    /// read.
    stop_reading: watch::Sender<bool>,
}

impl Spawned {
    /// Stops reading the pipes, whoever still holds them; `batches` closes soon after.
    pub(crate) fn stop_reading(&self) {
        self.stop_reading.send_replace(true);
    }
}

/// Starts the agent in its own process group and the run's scope, with its pipes read into
/// `batches`.
pub(crate) fn spawn(
    spec: &TurnSpec<'_>,
    logs: RawLogs<'_>,
    redactor: &Redactor,
    scope: &Arc<Scope>,
    (keep_raw, lane): (bool, Lane),
) -> anyhow::Result<Spawned> {
    let acp = spec.adapter.speaks_acp();
    let (mut child, pid) = start(spec, scope, acp)?;
    let (tx, batches) = mpsc::channel::<Batch>(readers::QUEUE);
    let (stop_reading, stop) = watch::channel(false);
    let mut parse = spec.parse.clone();
    let finishing = FinisherSlot::default();
    parse.finishing = Some(Arc::clone(&finishing));
    let mut mode = readers::StdoutMode {
        keep_raw,
        inbox: None,
        lane: Some(lane.clone()),
    };
    let client = if acp {
        Some(acp_client(
            spec, &mut child, &logs, redactor, &mut parse, &mut mode,
        )?)
    } else {
        None
    };
    let out_reader = readers::stdout(
        child
            .stdout
            .take()
            .context("stdout is piped")?
            .into_owned_fd()
            .context("cannot read the agent's stdout")?,
        logs.stdout.sink()?,
        spec.adapter.stdout_parser(parse),
        redactor.clone(),
        tx.clone(),
        stop.clone(),
        mode,
    );
    // The stdout reader parses a fast agent's output nonstop: on a thread of its own it stays on
    // one core, with its allocator arena and caches, instead of hopping between the runtime's
    // workers each time it waits.
    // Both read their pipe with blocking reads (see `readers`), each on a thread of its own.
    let runtime = tokio::runtime::Handle::current();
    let stdout = tokio::task::spawn_blocking(move || runtime.block_on(out_reader));
    let err_reader = readers::stderr(
        child
            .stderr
            .take()
            .context("stderr is piped")?
            .into_owned_fd()
            .context("cannot read the agent's stderr")?,
        logs.stderr.sink()?,
        spec.adapter.stderr_parser(),
        redactor.clone(),
        tx,
        (stop, Some(lane.clone())),
    );
    let runtime = tokio::runtime::Handle::current();
    let stderr = tokio::task::spawn_blocking(move || runtime.block_on(err_reader));
    Ok(Spawned {
        child,
        client,
        pid,
        tree: Tree::new(Arc::clone(scope), Some(pid)),
        batches,
        lane,
        stdout,
        stderr,
        finishing,
        stop_reading,
    })
}

/// Starts the agent's process (stdin piped only for an ACP agent) in the run's scope, dying with
/// runbook; returns it with its pid.
fn start(spec: &TurnSpec<'_>, scope: &Scope, acp: bool) -> anyhow::Result<(Child, u32)> {
    let mut command = Command::new(spec.program);
    command
        .args(&spec.args)
        .envs(spec.env.iter().map(|(k, v)| (k, v)))
        .current_dir(spec.cwd)
        .stdin(if acp { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true);
    let cgroup = scope.enter(command.as_std_mut());
    crate::linux::die_with_parent(command.as_std_mut());
    let child = command
        .spawn()
        .with_context(|| format!("failed to start {}", spec.program.display()))?;
    drop(cgroup);
    let pid = child
        .id()
        .context("the agent exited before it could be watched")?;
    scope.entered(pid);
    Ok((child, pid))
}

/// The ACP client on the agent's stdin, and the channels between it and the stdout parser.
fn acp_client(
    spec: &TurnSpec<'_>,
    child: &mut Child,
    logs: &RawLogs<'_>,
    redactor: &Redactor,
    parse: &mut ParseContext,
    mode: &mut readers::StdoutMode,
) -> anyhow::Result<super::acp::Client> {
    let (inbox, from_parser) = mpsc::unbounded_channel();
    let told = crate::agent::acp::Shared::default();
    parse.inbox = Some(inbox);
    parse.told = Some(told.clone());
    mode.inbox = Some(from_parser);
    let mut client = super::acp::Client::start(
        child.stdin.take().context("stdin is piped")?,
        logs.stdout.sink()?,
        redactor.clone(),
        spec.cwd,
        spec.permissions,
        told,
    );
    client.choose_model(spec.parse.model.clone());
    Ok(client)
}
