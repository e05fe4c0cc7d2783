//! After runbook stops an agent: the run's session, if the agent handed it to a daemon of its
//! own that outlives the agent's process, is cancelled there, and what happened said once.

use std::path::PathBuf;
use std::time::SystemTime;

use crate::agent::Adapter;
use crate::agent::handed::{self, Handed};
use crate::consumer::Dispatcher;
use crate::event::EventKind;

/// Looks for the run's session in the adapter's daemon and cancels it there, within
/// [`handed::BOUND`]; says so (`agent.warning`) when it had to be cancelled or could not be.
pub(crate) async fn cancel(
    adapter: &dyn Adapter,
    env: &[(String, String)],
    dispatch: &mut Dispatcher,
) {
    let Some(session) = dispatch.totals().session_id.clone() else {
        return;
    };
    let var = |name: &str| -> Option<PathBuf> {
        env.iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| PathBuf::from(v))
            .or_else(|| std::env::var_os(name).map(PathBuf::from))
            .filter(|v| !v.as_os_str().is_empty())
    };
    let Some(daemon) = adapter.daemon(&var) else {
        return;
    };
    let name = daemon.name();
    let asked = session.clone();
    let task = tokio::task::spawn_blocking(move || daemon.cancel(&asked));
    let handed = match tokio::time::timeout(handed::BOUND, task).await {
        Ok(Ok(handed)) => handed,
        Ok(Err(_)) => Handed::Failed("asking it failed".to_owned()),
        Err(_) => Handed::Failed(format!(
            "it did not answer within {}",
            crate::format::duration(handed::BOUND)
        )),
    };
    if let Some(message) = handed::told(name, &session, &handed) {
        dispatch.emit_now(SystemTime::now(), EventKind::AgentWarning { message });
    }
}
