//! The guardian's own side: started as `runbook __guardian TAG [CGROUP [OBSERVERS_CGROUP]]`, it
//! waits for runbook's word or its death, and on its death ends every process of the run. It
//! sits above the run's scope and its tree, which it uses; runbook's side of the guardian is
//! below them.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use super::{ARG, DONE, NAME, SWEEP_BOUND, parse_change};
use crate::linux::cgroup::Cgroup;
use crate::supervisor::scope::Scope;
use crate::supervisor::tree::Tree;

/// When runbook was started as a guardian (`runbook __guardian TAG [CGROUP [OBSERVERS_CGROUP]]`),
/// serves as one and says how that ended.
pub(crate) fn invocation() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != ARG {
        return None;
    }
    let tag = args.next()?.into_string().ok()?;
    let cgroup = args.next().map(PathBuf::from);
    let observers = args.next().map(PathBuf::from);
    Some(serve(&tag, cgroup.as_deref(), observers.as_deref()))
}

/// Waits for runbook's word or its death; on its death, ends every process of the run `tag`.
fn serve(tag: &str, cgroup: Option<&Path>, observers: Option<&Path>) -> ExitCode {
    crate::linux::set_name(NAME);
    // Signals meant for runbook's terminal or session are not the guardian's business.
    for sig in [libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGTSTP] {
        // SAFETY: setting a signal's disposition to SIG_IGN is always sound.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
    let cgroup = cgroup.map(|dir| Cgroup::at(PathBuf::from(dir)));
    let observers = observers.map(|dir| Cgroup::at(PathBuf::from(dir)));
    let scope = Arc::new(Scope::orphaned(tag, cgroup.clone(), observers.clone()));
    let mut line = String::new();
    let mut stdin = std::io::stdin().lock();
    loop {
        line.clear();
        match stdin.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line.trim() == DONE => return ExitCode::SUCCESS,
            Ok(_) => {
                if let Some((pid, start, is)) = parse_change(&line) {
                    scope.track(pid, start, is);
                }
            }
        }
    }
    // runbook is gone without a word: end what it left.
    let ended = Tree::whole(scope).kill_all(SWEEP_BOUND);
    for cgroup in [cgroup, observers].into_iter().flatten() {
        let _ = cgroup.remove();
    }
    if ended.left.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_told_of_is_tracked_only_while_its_pid_and_start_time_match() {
        let scope = Scope::orphaned("guardian-track-test", None, None);
        scope.track(4242, 7, true);
        assert!(scope.tracks(4242, 7));
        assert!(!scope.tracks(4242, 8), "a reused pid is another process");
        // A late `-` for the process that had the pid before leaves the new one tracked.
        scope.track(4242, 8, true);
        scope.track(4242, 7, false);
        assert!(scope.tracks(4242, 8));
        scope.track(4242, 8, false);
        assert!(!scope.tracks(4242, 8));
    }
}
