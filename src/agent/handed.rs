//! Work an agent hands to a daemon of its own, outside the process tree runbook ends: after
//! runbook stops the agent, the run's session is looked for there and cancelled.

use std::time::Duration;

/// How long the whole look and cancel may take, connection and answer included.
pub(crate) const BOUND: Duration = Duration::from_secs(5);

/// What became of the run's session in the agent's daemon.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Handed {
    /// No daemon, or the session was not running there: nothing went on.
    Nothing,
    /// It was running there, and has been cancelled.
    Cancelled,
    /// It may be running there, and could not be cancelled: why, in a phrase.
    Failed(String),
}

/// A daemon an agent may have handed the run's work to, found from the agent's environment.
pub(crate) trait Daemon: Send {
    /// What the daemon is called in a sentence (`OpenCode's background service`).
    fn name(&self) -> &'static str;
    /// Cancels the session `session` if the daemon is running it. Blocks, each wait bounded.
    fn cancel(&self, session: &str) -> Handed;
}

/// The sentence runbook says when the run's session had to be cancelled in `daemon`, or could
/// not be; `None` when nothing went on.
pub(crate) fn told(daemon: &str, session: &str, handed: &Handed) -> Option<String> {
    match handed {
        Handed::Nothing => None,
        Handed::Cancelled => Some(format!(
            "the agent's session {session} went on in {daemon} after runbook stopped the agent; runbook cancelled it there"
        )),
        Handed::Failed(why) => Some(format!(
            "the agent's session {session} may still be running in {daemon} after runbook stopped the agent, and could not be cancelled ({why}); end it with the agent's own tools"
        )),
    }
}
