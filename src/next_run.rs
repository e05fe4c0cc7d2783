//! Waiting for the next run (`status --live --next`): a run directory that appears after the
//! wait began, taken once its first event says where it works. File-change notification wakes
//! the wait; a steady check covers what notification misses.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::time::Duration;

use notify::{RecursiveMode, Watcher as _};
use tokio::sync::mpsc;

use crate::rundir;
use crate::runs::{self, Runs};

/// How often the runs directory is looked at without a notification.
const CHECK_EVERY: Duration = Duration::from_millis(500);

/// The directory of the first run to start after this is called, working in `here` when given.
/// Creates the runs directory if there is none yet, as the run itself would.
pub(crate) async fn next_run(runs: &Runs, here: Option<&Path>) -> anyhow::Result<PathBuf> {
    rundir::ensure_runs_dir(runs.dir())?;
    let (tx, mut changed) = mpsc::channel::<()>(1);
    let mut watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if res.is_ok_and(|ev| !matches!(ev.kind, notify::EventKind::Access(_))) {
            let _ = tx.try_send(());
        }
    })?;
    watcher.watch(runs.dir(), RecursiveMode::NonRecursive)?;
    // Runs that exist now are not the next one, running or not.
    let mut seen: HashSet<String> = runs.ids()?.into_iter().collect();
    // New runs whose first event is not logged yet.
    let mut starting: Vec<String> = Vec::new();
    let mut checks = tokio::time::interval(CHECK_EVERY);
    checks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
    loop {
        for id in runs.ids()? {
            if seen.insert(id.clone()) {
                // Its first event is written inside it: watch it until then.
                let _ = watcher.watch(&runs.path(&id), RecursiveMode::NonRecursive);
                starting.push(id);
            }
        }
        let mut found = None;
        starting.retain(|id| {
            let dir = runs.path(id);
            match runs::started_in(&dir) {
                None => true,
                Some(cwd) => {
                    if found.is_none() && here.is_none_or(|h| h == cwd) {
                        found = Some(dir.clone());
                    }
                    let _ = watcher.unwatch(&dir);
                    false
                }
            }
        });
        if let Some(dir) = found {
            return Ok(dir);
        }
        tokio::select! {
            _ = changed.recv() => {}
            _ = checks.tick() => {}
        }
    }
}
