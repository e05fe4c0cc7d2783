//! Asking the agent binary for its version (`AGENT --version`) alongside the run.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt as _;
use tokio::process::Command;

use super::scope::Scope;
use clap::ValueEnum as _;

use crate::agent::{Adapter, AgentKind, versions};
use crate::event::Fidelity;

/// How long the agent's `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);
/// The most of its output read: a version is one short line, and a program that prints more
/// than this is not answering the question.
const VERSION_OUTPUT: u64 = 4096;
/// The longest version line kept.
const VERSION_LINE: usize = 200;

/// The agent `adapter` drives, when runbook has a table of its tested versions.
fn kind_of(adapter: &dyn Adapter) -> Option<AgentKind> {
    AgentKind::value_variants()
        .iter()
        .copied()
        .find(|k| k.adapter().name() == adapter.name())
}

/// Whether runbook was tested with `version` (what the agent's `--version` printed) of the agent
/// `adapter` drives: unknown for an agent runbook has no table for, or a version it cannot read.
pub(crate) fn fidelity(adapter: &dyn Adapter, version: &str) -> Fidelity {
    kind_of(adapter).map_or(Fidelity::Unknown, |kind| versions::judge(kind, version).1)
}

/// The versions runbook was tested with of the agent `adapter` drives, when `version` (what its
/// `--version` printed) is not one of them; empty when it is, or for an agent runbook has no
/// table for (`--agent-cmd`).
pub(crate) fn untested(adapter: &dyn Adapter, version: &str) -> Vec<String> {
    let Some(kind) = kind_of(adapter) else {
        return Vec::new();
    };
    if versions::is_tested(kind, version) {
        return Vec::new();
    }
    versions::tested(kind)
        .iter()
        .map(|v| (*v).to_owned())
        .collect()
}

/// Runs `AGENT --version` in its own process group and the run's scope (it is a process of the
/// run like any other), with a time limit; the first line it prints when it succeeds. Reads at
/// most [`VERSION_OUTPUT`] bytes; a program that prints more, or does not exit in time, is ended
/// with its process group.
pub(crate) async fn probe(
    program: &Path,
    adapter: &dyn Adapter,
    enabled: bool,
    scope: &Scope,
) -> Option<String> {
    if !enabled {
        return None;
    }
    let mut command = Command::new(program);
    command
        .args(adapter.version_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    let cgroup = scope.enter(command.as_std_mut());
    crate::linux::die_with_parent(command.as_std_mut());
    let mut child = command.spawn().ok()?;
    drop(cgroup);
    let group = child.id();
    scope.entered(group?);
    let stdout = child.stdout.take()?;
    // `None`: no answer in time or in size; the program may still be running.
    let answer = tokio::time::timeout(VERSION_TIMEOUT, async {
        let mut out = Vec::new();
        stdout
            .take(VERSION_OUTPUT + 1)
            .read_to_end(&mut out)
            .await
            .ok()?;
        if out.len() as u64 > VERSION_OUTPUT {
            return None;
        }
        let status = child.wait().await.ok()?;
        Some(status.success().then_some(out))
    })
    .await
    .ok()
    .flatten();
    let Some(answer) = answer else {
        end_group(group);
        return None;
    };
    let out = answer?;
    let text = String::from_utf8_lossy(&out);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    (line.len() < VERSION_LINE).then(|| line.to_owned())
}

/// Ends the probe's process group: the program and anything it started.
fn end_group(pgid: Option<u32>) {
    if let Some(pgid) = pgid.and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

impl super::Supervisor<'_> {
    /// Asks the agent binary at `program` for its version before the turn, in the run's scope
    /// (for an agent whose generations differ: the answer picks the adapter).
    pub(crate) async fn ask_version(
        &self,
        program: &Path,
        adapter: &dyn Adapter,
    ) -> Option<String> {
        probe(program, adapter, true, &self.scope).await
    }
}
