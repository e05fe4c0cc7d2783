//! Asking the agent binary for its version (`AGENT --version`) alongside the run.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::Command;

use crate::agent::Adapter;

/// How long the agent's `--version` may take.
const VERSION_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs `AGENT --version` in its own process group, with a time limit; the first line it prints
/// when it succeeds.
pub(crate) async fn probe(program: &Path, adapter: &dyn Adapter, enabled: bool) -> Option<String> {
    if !enabled {
        return None;
    }
    let child = Command::new(program)
        .args(adapter.version_args())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let out = tokio::time::timeout(VERSION_TIMEOUT, child.wait_with_output())
        .await
        .ok()?
        .ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().map(str::trim).find(|l| !l.is_empty())?;
    (out.status.success() && line.len() < 200).then(|| line.to_owned())
}
