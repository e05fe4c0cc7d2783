//! The agent's process tree, read from `/proc`: who is in it, how much CPU it has used, and how to
//! signal all of it.
//!
//! runbook makes itself a child subreaper, so a grandchild whose parent died is re-parented to
//! runbook rather than to init: "the tree" is every descendant of runbook plus every member of the
//! agent's process group. That catches processes that left the group with `setsid` too.

use std::collections::{HashMap, HashSet};
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;
use tokio::time::Instant;

use crate::linux::procfs::{self, Stat as Proc};
use crate::watchdog::CpuWindow;

/// The tree of one agent process.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Tree {
    /// runbook itself: everything below it is ours.
    root: i32,
    /// The agent's process group (the agent's pid).
    pgid: i32,
    tick: Duration,
}

impl Tree {
    pub(crate) fn new(pgid: u32) -> Self {
        // SAFETY: sysconf has no preconditions.
        let hz = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
        let hz = if hz > 0 { hz as u64 } else { 100 };
        Self {
            root: std::process::id() as i32,
            pgid: pgid as i32,
            tick: Duration::from_nanos(1_000_000_000 / hz),
        }
    }

    /// The living and zombie processes of the tree.
    pub(crate) fn members(&self) -> Vec<Proc> {
        let all = procfs::all();
        let mut children: HashMap<i32, Vec<usize>> = HashMap::new();
        for (i, p) in all.iter().enumerate() {
            children.entry(p.ppid).or_default().push(i);
        }
        let mut seen = HashSet::new();
        let mut stack = vec![self.root];
        let mut out = Vec::new();
        while let Some(pid) = stack.pop() {
            for &i in children.get(&pid).map_or(&[][..], Vec::as_slice) {
                if seen.insert(all[i].pid) {
                    out.push(all[i]);
                    stack.push(all[i].pid);
                }
            }
        }
        for p in &all {
            if p.pgrp == self.pgid && seen.insert(p.pid) {
                out.push(*p);
            }
        }
        out
    }

    /// CPU time used so far by the tree's processes.
    pub(crate) fn cpu_time(&self) -> Duration {
        self.tick
            * u32::try_from(self.members().iter().map(|p| p.ticks).sum::<u64>()).unwrap_or(u32::MAX)
    }

    /// Sends `sig` to the agent's group and to every other living process of the tree.
    /// Returns how many processes were alive to receive it.
    pub(crate) fn signal(&self, sig: Signal) -> u32 {
        let members = self.members();
        let _ = killpg(Pid::from_raw(self.pgid), sig);
        let mut alive = 0;
        for p in &members {
            if !p.zombie {
                alive += 1;
                let _ = kill(Pid::from_raw(p.pid), sig);
            }
        }
        alive
    }

    /// How many processes of the tree are still alive (zombies excluded).
    pub(crate) fn alive(&self) -> usize {
        self.members().iter().filter(|p| !p.zombie).count()
    }

    /// Ends whatever is left of the tree: SIGTERM, up to `grace` for it to go, then SIGKILL.
    /// Reaps what was re-parented to runbook, except `keep` (tokio waits for that one).
    /// `sent(signal, processes)` hears of each signal that reached a living process.
    pub(crate) async fn end_all(
        &self,
        grace: Duration,
        keep: u32,
        mut sent: impl FnMut(Signal, u32),
    ) {
        if self.alive() > 0 {
            sent(Signal::SIGTERM, self.signal(Signal::SIGTERM));
            let until = Instant::now() + grace;
            while self.alive() > 0 && Instant::now() < until {
                tokio::time::sleep(Duration::from_millis(20)).await;
                self.reap_orphans(Some(keep));
            }
            if self.alive() > 0 {
                sent(Signal::SIGKILL, self.signal(Signal::SIGKILL));
                while self.alive() > 0 {
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    self.reap_orphans(Some(keep));
                }
            }
        }
        self.reap_orphans(Some(keep));
    }

    /// Reaps orphans re-parented to runbook that have exited, except `keep` (tokio waits for that one).
    pub(crate) fn reap_orphans(&self, keep: Option<u32>) {
        for p in self.members() {
            if p.zombie && p.ppid == self.root && Some(p.pid as u32) != keep {
                let _ = nix::sys::wait::waitpid(
                    Pid::from_raw(p.pid),
                    Some(nix::sys::wait::WaitPidFlag::WNOHANG),
                );
            }
        }
    }
}

/// Reads the CPU time of a tree at a steady interval, for the watchdog's window.
pub(crate) struct CpuMeter {
    tree: Tree,
    window: CpuWindow,
}

impl CpuMeter {
    pub(crate) fn new(tree: Tree, inactivity: Duration) -> Self {
        Self {
            tree,
            window: CpuWindow::new(inactivity),
        }
    }

    /// Whether the tree has been busy over the window ending now.
    pub(crate) fn busy(&mut self, now: Instant) -> bool {
        self.window.record(now, self.tree.cpu_time())
    }

    /// Starts over: the agent is no longer watched (it gave its final word, or is being ended).
    pub(crate) fn forget(&mut self) {
        self.window.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spawned_child_is_a_member_and_its_cpu_counts() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .unwrap();
        let tree = Tree::new(child.id());
        assert!(tree.members().iter().any(|p| p.pid == child.id() as i32));
        child.kill().unwrap();
        child.wait().unwrap();
    }
}
