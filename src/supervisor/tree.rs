//! The agent's process tree: who is in it, how much CPU it has used, and how to end all of it.
//!
//! A process is the run's when any of these holds: it is in the run's cgroup; runbook is its
//! parent (runbook is a child subreaper, so a process whose parent died is re-parented to runbook
//! rather than to init); it is in the agent's process group; its environment carries the run's
//! mark; its parent is the run's. That catches processes that left the group with `setsid`, and
//! ones whose parents are long gone.
//!
//! The agent's tree leaves the observers' processes out (their cgroup, their mark, their process
//! groups): they outlive each turn's agent. The whole tree of a run ([`Tree::whole`]) has them
//! too, and the processes runbook told its guardian of; it is what the end of the run and the
//! guardian end.
//!
//! Ending the tree is a loop, not one signal to a list read once: a process can fork between
//! being listed and being signalled. SIGTERM goes to every process found, round after round
//! (with the cgroup frozen where it can be, so that nothing forks meanwhile) until a round finds
//! none new; the kill writes `cgroup.kill` and sweeps `/proc` with SIGKILL, again and again,
//! until two rounds in a row find nothing of the run, or a time bound passes.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use super::scope::Scope;
use crate::linux::procfs::{self, Stat as Proc};

/// How many of the pids handed out last are looked at before the others: a process that
/// re-forks all the time is always among the newest.
const RECENT: i32 = 256;
/// How long the cgroup may take to freeze before runbook signals it anyway.
const FREEZE_WAIT: Duration = Duration::from_millis(50);
/// At most this many rounds of a graceful signal.
const SIGNAL_ROUNDS: usize = 8;
/// Between two rounds of the kill.
const KILL_PAUSE: Duration = Duration::from_millis(2);

/// The tree of one agent process.
#[derive(Debug, Clone)]
pub(crate) struct Tree {
    scope: Arc<Scope>,
    /// The agent's process group (the agent's pid).
    pgid: Option<i32>,
    /// Every process of the run, the observers' too.
    whole: bool,
    tick: Duration,
}

/// How ending the tree went.
#[derive(Debug, Default)]
pub(crate) struct Killed {
    /// How many processes were killed.
    pub processes: u32,
    /// Those still alive when the time bound passed.
    pub left: Vec<i32>,
}

impl Tree {
    pub(crate) fn new(scope: Arc<Scope>, pgid: Option<u32>) -> Self {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let hz = if hz > 0 { hz as u64 } else { 100 };
        Self {
            scope,
            pgid: pgid.and_then(|p| i32::try_from(p).ok()).filter(|&p| p > 1),
            whole: false,
            tick: Duration::from_nanos(1_000_000_000 / hz),
        }
    }

    /// Every process of the run: the agent's, the observers' and what they started.
    pub(crate) fn whole(scope: Arc<Scope>) -> Self {
        Self {
            whole: true,
            ..Self::new(scope, None)
        }
    }

    /// The cgroups the tree is in: the run's, and the observers' for the whole tree.
    fn cgroups(&self) -> Vec<&crate::linux::cgroup::Cgroup> {
        let observers = self.scope.observers_cgroup().filter(|_| self.whole);
        self.scope.cgroup().into_iter().chain(observers).collect()
    }

    /// The living processes of the tree.
    pub(crate) fn members(&self) -> Vec<Proc> {
        self.visit(&mut |_| {})
    }

    /// Whether nothing of the tree is alive: two looks in a row find nothing (a process that
    /// forks and exits all the time could be between two pids in one look).
    pub(crate) fn is_empty(&self) -> bool {
        self.members().is_empty() && self.members().is_empty()
    }

    /// CPU time used so far by the tree: the cgroup's count when there is one (it includes
    /// processes that have exited), else the sum over its living processes.
    pub(crate) fn cpu_time(&self) -> Duration {
        if let Some(time) = self.scope.cgroup().and_then(|c| c.cpu_time()) {
            return time;
        }
        self.tick
            * u32::try_from(self.members().iter().map(|p| p.ticks).sum::<u64>()).unwrap_or(u32::MAX)
    }

    /// Sends `sig` once to every living process of the tree; returns how many got it. Rounds go
    /// on until one finds no process that has not had it (or a few rounds have passed).
    pub(crate) fn signal(&self, sig: Signal) -> u32 {
        let frozen: Vec<_> = self
            .cgroups()
            .into_iter()
            .filter(|c| c.freeze(FREEZE_WAIT))
            .collect();
        let mut sent = HashSet::new();
        if let Some(pgid) = self.pgid {
            // The group's members are counted before it gets the signal: one that it ends at
            // once is gone by the next look.
            self.visit(&mut |p| {
                if p.pgrp == pgid {
                    sent.insert(p.pid);
                }
            });
            let _ = killpg(Pid::from_raw(pgid), sig);
        }
        for _ in 0..SIGNAL_ROUNDS {
            let before = sent.len();
            self.visit(&mut |p| {
                // The group's members counted above had it from killpg.
                if sent.insert(p.pid) {
                    let _ = kill(Pid::from_raw(p.pid), sig);
                }
            });
            if sent.len() == before {
                break;
            }
        }
        for cgroup in frozen {
            cgroup.thaw();
        }
        u32::try_from(sent.len()).unwrap_or(u32::MAX)
    }

    /// Kills the tree, round after round, until two rounds in a row find nothing of it or
    /// `bound` has passed. Blocks; reaps the orphans it kills.
    pub(crate) fn kill_all(&self, bound: Duration) -> Killed {
        let until = Instant::now() + bound;
        let mut killed = HashSet::new();
        let mut empty_rounds = 0;
        loop {
            for cgroup in self.cgroups() {
                // Counted as they are listed: once killed, they may be gone before a look.
                killed.extend(cgroup.pids());
                cgroup.kill();
            }
            if let Some(pgid) = self.pgid {
                let _ = killpg(Pid::from_raw(pgid), Signal::SIGKILL);
            }
            let found = self.visit(&mut |p| {
                killed.insert(p.pid);
                let _ = kill(Pid::from_raw(p.pid), Signal::SIGKILL);
            });
            self.reap_orphans();
            let populated = self.cgroups().iter().any(|c| c.populated());
            if found.is_empty() && !populated {
                empty_rounds += 1;
            } else {
                empty_rounds = 0;
            }
            let processes = u32::try_from(killed.len()).unwrap_or(u32::MAX);
            if empty_rounds >= 2 {
                return Killed {
                    processes,
                    left: Vec::new(),
                };
            }
            if Instant::now() >= until {
                return Killed {
                    processes,
                    left: found.iter().map(|p| p.pid).collect(),
                };
            }
            std::thread::sleep(KILL_PAUSE);
        }
    }

    /// Ends whatever is left of the tree: SIGTERM, up to `grace` for it to go (or until `hurry`
    /// resolves), then the kill (for at most `bound`). Reaps what was re-parented to runbook.
    /// `sent(signal, processes)` hears of each signal that reached a living process. Returns the
    /// processes that could not be ended.
    pub(crate) async fn end_all(
        &self,
        grace: Duration,
        bound: Duration,
        hurry: impl Future<Output = ()>,
        mut sent: impl FnMut(Signal, u32),
    ) -> Vec<i32> {
        self.reap_orphans();
        if self.is_empty() {
            return Vec::new();
        }
        sent(Signal::SIGTERM, self.signal(Signal::SIGTERM));
        let until = tokio::time::Instant::now() + grace;
        let mut hurry = std::pin::pin!(hurry);
        let mut hurried = false;
        while !hurried && tokio::time::Instant::now() < until {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(20)) => {}
                () = &mut hurry => hurried = true,
            }
            self.reap_orphans();
            if self.is_empty() {
                return Vec::new();
            }
        }
        let tree = self.clone();
        let killed = tokio::task::spawn_blocking(move || tree.kill_all(bound))
            .await
            .unwrap_or_default();
        if killed.processes > 0 {
            sent(Signal::SIGKILL, killed.processes);
        }
        killed.left
    }

    /// Reaps orphans re-parented to runbook that have exited; not the processes runbook started
    /// itself, whose owners wait for them.
    pub(crate) fn reap_orphans(&self) {
        if self.scope.root().is_none() {
            return;
        }
        // Plenty for a tree that forks all the time, and a bound for one that never stops.
        for _ in 0..10_000 {
            match crate::linux::exited_child() {
                Some(pid) if !self.scope.is_own(pid) && !self.scope.is_waited_for(pid) => {
                    let _ = nix::sys::wait::waitpid(
                        Pid::from_raw(pid),
                        Some(nix::sys::wait::WaitPidFlag::WNOHANG),
                    );
                }
                _ => return,
            }
        }
    }

    /// Finds the tree's living processes, calling `act` on each as soon as it is found (to
    /// signal it before it can fork again), and returns them.
    ///
    /// The cgroup's list comes first, then the pids handed out last (newest first), then every
    /// other pid (newest first); then the descendants of what was found.
    fn visit(&self, act: &mut dyn FnMut(&Proc)) -> Vec<Proc> {
        let mut seen = HashSet::new();
        let mut members: Vec<Proc> = Vec::new();
        let mut others: Vec<Proc> = Vec::new();
        let mut buf = Vec::new();
        let root = self.scope.root();
        let marks: &[&[u8]] = if self.whole {
            &[self.scope.mark(), self.scope.observers_mark()]
        } else {
            &[self.scope.mark()]
        };
        let mut consider = |pid: i32, known: bool| {
            if pid <= 1 || !seen.insert(pid) || self.scope.is_own(pid) {
                return;
            }
            let Some(p) = procfs::stat(pid) else { return };
            // An observer's process group is the run's, but not the agent's.
            if p.zombie || (!self.whole && self.scope.is_apart(p.pgrp)) {
                return;
            }
            let member = known
                || self.scope.tracks(pid, p.start)
                || (Some(p.ppid) == root
                    && (self.whole || !self.scope.is_observers(pid, &mut buf)))
                || (self.pgid.is_some() && Some(p.pgrp) == self.pgid)
                || procfs::environ_has_any(pid, marks, &mut buf);
            if member {
                act(&p);
                members.push(p);
            } else {
                others.push(p);
            }
        };
        for cgroup in self.cgroups() {
            for pid in cgroup.pids() {
                consider(pid, true);
            }
        }
        if let Some(last) = procfs::last_pid() {
            for pid in (last.saturating_sub(RECENT)..=last).rev() {
                consider(pid, false);
            }
        }
        let mut pids = procfs::pids();
        pids.sort_unstable_by(|a, b| b.cmp(a));
        for pid in pids {
            consider(pid, false);
        }
        // Below a member, whatever it did to its environment and its group.
        loop {
            let known: HashSet<i32> = members.iter().map(|p| p.pid).collect();
            let (below, rest): (Vec<Proc>, Vec<Proc>) =
                others.into_iter().partition(|p| known.contains(&p.ppid));
            others = rest;
            if below.is_empty() {
                return members;
            }
            for p in &below {
                act(p);
            }
            members.extend(below);
        }
    }
}

/// Ends what is left of the run once it is over and its observers have had their last event:
/// whatever the observers started, and anything else of the run's. SIGTERM, up to `grace` for
/// it to go, then the kill (for at most `bound`). Returns the processes that could not be ended.
pub(crate) async fn end_the_rest(scope: Arc<Scope>, grace: Duration, bound: Duration) -> Vec<i32> {
    Tree::whole(scope)
        .end_all(grace, bound, std::future::pending(), |_, _| {})
        .await
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt as _;

    use super::*;

    fn scope(tag: &str) -> Arc<Scope> {
        Arc::new(Scope::orphaned(tag, None, None))
    }

    /// Waits until `pid` shows the environment it was started with (right after exec the
    /// kernel may not have set it up yet).
    fn wait_for_environment(pid: u32, tag: &str) {
        let entry = format!("{}={tag}", super::super::scope::MARK_VAR);
        let until = Instant::now() + Duration::from_secs(5);
        let mut buf = Vec::new();
        while !procfs::environ_has(pid as i32, entry.as_bytes(), &mut buf) && Instant::now() < until
        {
            std::thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn a_spawned_child_is_a_member_by_its_group_and_by_its_mark() {
        let tag = format!("tree-test-{}", std::process::id());
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .env(super::super::scope::MARK_VAR, &tag)
            .process_group(0)
            .spawn()
            .unwrap();
        wait_for_environment(child.id(), &tag);
        let by_group = Tree::new(scope("another"), Some(child.id()));
        assert!(
            by_group
                .members()
                .iter()
                .any(|p| p.pid == child.id() as i32)
        );
        let by_mark = Tree::new(scope(&tag), None);
        assert!(by_mark.members().iter().any(|p| p.pid == child.id() as i32));
        let unrelated = Tree::new(scope("another"), None);
        assert!(
            unrelated
                .members()
                .iter()
                .all(|p| p.pid != child.id() as i32)
        );
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn the_kill_ends_every_marked_process() {
        let tag = format!("tree-kill-{}", std::process::id());
        let mut children: Vec<_> = (0..3)
            .map(|_| {
                std::process::Command::new("sleep")
                    .arg("30")
                    .env(super::super::scope::MARK_VAR, &tag)
                    .spawn()
                    .unwrap()
            })
            .collect();
        for child in &children {
            wait_for_environment(child.id(), &tag);
        }
        let tree = Tree::new(scope(&tag), None);
        let killed = tree.kill_all(Duration::from_secs(5));
        for child in &mut children {
            let status = child.wait().unwrap();
            assert_eq!(
                std::os::unix::process::ExitStatusExt::signal(&status),
                Some(9)
            );
        }
        assert_eq!((killed.processes, killed.left.len()), (3, 0));
    }

    #[test]
    fn a_tracked_process_is_ended_only_while_its_pid_and_start_time_match() {
        let mut child = std::process::Command::new("sleep")
            .arg("30")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let start = procfs::stat(pid).unwrap().start;
        let scope = Arc::new(Scope::orphaned("tree-tracked", None, None));
        // What a guardian was told of a process that had this pid before.
        scope.track(pid, start + 1, true);
        let tree = Tree::whole(Arc::clone(&scope));
        assert!(tree.members().iter().all(|p| p.pid != pid));
        assert_eq!(tree.kill_all(Duration::from_secs(1)).processes, 0);
        assert!(
            procfs::is_alive(child.id(), Some(start)),
            "a reused pid is never hit"
        );
        scope.track(pid, start, true);
        assert_eq!(tree.kill_all(Duration::from_secs(5)).processes, 1);
        let status = child.wait().unwrap();
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&status),
            Some(9)
        );
    }
}
