//! Asking the agent binary for its version (`AGENT --version`) alongside the run.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use super::scope::Scope;
use crate::agent::Adapter;

/// How long the agent's `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `AGENT --version` in its own process group and the run's scope (it is a process of the
/// run like any other), with a time limit; the first line it prints when it succeeds.
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
    let child = command.spawn().ok()?;
    drop(cgroup);
    scope.entered(child.id()?);
    let out = tokio::time::timeout(VERSION_TIMEOUT, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    (out.status.success() && line.len() < 200).then(|| line.to_owned())
}
