//! After the agent has exited: the command of its own binary its parser asked for (see
//! [`Finisher`]), run like the agent (its environment, working directory, scope and sandbox),
//! bounded in time and size, its output handed back to the parser.

use std::process::Stdio;
use std::time::{Duration, SystemTime};

use tokio::io::AsyncReadExt as _;
use tokio::process::Command;

use super::spawn::TurnSpec;
use crate::agent::{Finisher, FinisherSlot, StreamEnd};

/// How long the command may take.
const FINISHING_TIMEOUT: Duration = Duration::from_secs(30);
/// The most of its output read.
const FINISHING_OUTPUT: u64 = 64 << 20;

impl super::Supervisor<'_> {
    /// Runs what the parser left in `slot`, if anything, and emits what its reading adds; how
    /// the stream ended in its light.
    pub(super) async fn finishing(
        &mut self,
        spec: &TurnSpec<'_>,
        slot: &FinisherSlot,
        stream: StreamEnd,
    ) -> StreamEnd {
        let finisher = slot.lock().ok().and_then(|mut s| s.take());
        let Some(finisher) = finisher else {
            return stream;
        };
        let printed = self.ask(spec, &*finisher).await;
        let mut events = Vec::new();
        let stream = finisher.finish(printed, stream, &mut events);
        for event in events {
            self.dispatch.emit_now(SystemTime::now(), event);
        }
        stream
    }

    /// What the command printed on stdout, or why it could not be had.
    async fn ask(&self, spec: &TurnSpec<'_>, finisher: &dyn Finisher) -> Result<Vec<u8>, String> {
        let mut command = Command::new(spec.program);
        command
            .args(finisher.args())
            .envs(spec.env.iter().map(|(k, v)| (k, v)))
            .current_dir(spec.cwd)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .process_group(0)
            .kill_on_drop(true);
        let cgroup = self.scope.enter(command.as_std_mut());
        crate::linux::die_with_parent(command.as_std_mut());
        let mut child = command
            .spawn()
            .map_err(|e| format!("it could not be started: {e}"))?;
        drop(cgroup);
        let group = child.id();
        if let Some(pid) = group {
            self.scope.entered(pid);
        }
        let stdout = child.stdout.take().ok_or("its output could not be read")?;
        let answer = tokio::time::timeout(FINISHING_TIMEOUT, async {
            let mut out = Vec::new();
            let read = stdout
                .take(FINISHING_OUTPUT + 1)
                .read_to_end(&mut out)
                .await;
            if read.is_err() || out.len() as u64 > FINISHING_OUTPUT {
                return Err("its output could not be read whole".to_owned());
            }
            match child.wait().await {
                Ok(status) if status.success() => Ok(out),
                Ok(status) => Err(format!("it failed ({status})")),
                Err(e) => Err(format!("it could not be waited for: {e}")),
            }
        })
        .await
        .unwrap_or_else(|_| Err(format!("it took longer than {FINISHING_TIMEOUT:?}")));
        if answer.is_err()
            && let Some(pgid) = group.and_then(|p| i32::try_from(p).ok())
        {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        answer
    }
}
