//! The agent's process tree, read from `/proc`: who is in it, how much CPU it has used, and how to
//! signal all of it.
//!
//! runbook makes itself a child subreaper, so a grandchild whose parent died is re-parented to
//! runbook rather than to init: "the tree" is every descendant of runbook plus every member of the
//! agent's process group. That catches processes that left the group with `setsid` too.

use std::collections::{HashMap, HashSet};
use std::fs;
use std::io::Read;
use std::time::Duration;

use nix::sys::signal::{Signal, kill, killpg};
use nix::unistd::Pid;

use crate::procfs::{self, Stat as Proc};

/// Asks the kernel to re-parent orphaned descendants to this process instead of init.
pub(crate) fn become_subreaper() {
    // Best effort: without it, a grandchild that escapes with setsid after its parent died is missed.
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

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
        let all = read_all();
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

/// Every process on the machine. Processes that vanish while being read are skipped.
fn read_all() -> Vec<Proc> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut buf = String::with_capacity(512);
    let mut out = Vec::with_capacity(256);
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        buf.clear();
        let Ok(mut f) = fs::File::open(format!("/proc/{pid}/stat")) else {
            continue;
        };
        if f.read_to_string(&mut buf).is_err() {
            continue;
        }
        if let Some(p) = procfs::parse(pid, &buf) {
            out.push(p);
        }
    }
    out
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
