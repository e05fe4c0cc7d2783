//! Reading `/proc`: a process's parent, group, state, CPU time and start time (`/proc/PID/stat`),
//! whether its environment holds an entry (`/proc/PID/environ`), which pids exist, and which was
//! handed out last.

use std::fs;
use std::io::Read as _;

/// One process, as `/proc/PID/stat` describes it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stat {
    pub pid: i32,
    pub ppid: i32,
    pub pgrp: i32,
    pub zombie: bool,
    /// User + system time of the process and of its waited-for children, in clock ticks.
    pub ticks: u64,
    /// When the process started, in clock ticks since boot.
    pub start: u64,
}

/// The stat of one process, if it exists.
/// The files process `pid` has open, as `/proc/PID/fd` names them (what is not a file, such as
/// a pipe, is left out).
pub(crate) fn open_files(pid: i32) -> Vec<std::path::PathBuf> {
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return Vec::new();
    };
    fds.flatten()
        .filter_map(|fd| std::fs::read_link(fd.path()).ok())
        .filter(|target| target.is_absolute())
        .collect()
}

pub(crate) fn stat(pid: i32) -> Option<Stat> {
    parse(pid, &fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
}

/// Whether the process `pid` is alive (not a zombie) and, when `start` is known, is the very
/// process that started then rather than a later one that reused the pid.
pub(crate) fn is_alive(pid: u32, start: Option<u64>) -> bool {
    let Ok(pid) = i32::try_from(pid) else {
        return false;
    };
    stat(pid).is_some_and(|s| !s.zombie && start.is_none_or(|t| t == s.start))
}

/// The living descendants of process `root`, leaving out `skip` and what is below it, found from
/// each thread's `/proc/PID/task/TID/children` (cheap: only the tree is read, not the whole
/// process table); where the kernel has no such file, from the whole table's parents.
pub(crate) fn descendants_but(root: i32, skip: i32) -> Vec<Stat> {
    let mut out = Vec::new();
    let mut next = vec![root];
    let mut seen = std::collections::HashSet::new();
    while let Some(pid) = next.pop() {
        let Some(children) = children(pid) else {
            return descendants_by_parent(root)
                .into_iter()
                .filter(|p| p.pid != skip)
                .collect();
        };
        for child in children {
            if child != skip
                && seen.insert(child)
                && let Some(stat) = stat(child)
            {
                out.push(stat);
                next.push(child);
            }
        }
    }
    out
}

/// The children of process `pid`, from its threads' `children` files; `None` when the kernel has
/// none (and the process still exists).
fn children(pid: i32) -> Option<Vec<i32>> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Some(Vec::new());
    };
    let mut out = Vec::new();
    let mut text = String::new();
    for task in tasks.flatten() {
        text.clear();
        let path = task.path().join("children");
        match fs::File::open(&path).and_then(|mut f| f.read_to_string(&mut text)) {
            Ok(_) => out.extend(
                text.split_ascii_whitespace()
                    .filter_map(|p| p.parse::<i32>().ok()),
            ),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound && task.path().exists() => {
                return None;
            }
            Err(_) => {}
        }
    }
    Some(out)
}

/// The descendants of `root`, from every process's parent.
fn descendants_by_parent(root: i32) -> Vec<Stat> {
    let all: Vec<Stat> = pids().into_iter().filter_map(stat).collect();
    let mut out: Vec<Stat> = Vec::new();
    let mut known = std::collections::HashSet::from([root]);
    loop {
        let below: Vec<Stat> = all
            .iter()
            .filter(|p| known.contains(&p.ppid) && !known.contains(&p.pid))
            .copied()
            .collect();
        if below.is_empty() {
            return out;
        }
        known.extend(below.iter().map(|p| p.pid));
        out.extend(below);
    }
}

/// The pids in `/proc`, in the order the kernel lists them.
pub(crate) fn pids() -> Vec<i32> {
    let Ok(dir) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<i32>().ok())
        .collect()
}

/// The pid the kernel handed out last (the last field of `/proc/loadavg`).
pub(crate) fn last_pid() -> Option<i32> {
    let text = fs::read_to_string("/proc/loadavg").ok()?;
    text.split_ascii_whitespace().last()?.parse().ok()
}

/// At most this much of a process's environment is read.
const ENVIRON_CAP: u64 = 4 * 1024 * 1024;

/// Whether the environment process `pid` started with holds exactly `entry` (`NAME=value`).
/// `buf` is reused between calls. Processes of another user (unreadable) and zombies (no
/// environment left) do not.
pub(crate) fn environ_has(pid: i32, entry: &[u8], buf: &mut Vec<u8>) -> bool {
    environ_has_any(pid, &[entry], buf)
}

/// Whether the environment process `pid` started with holds any of `entries`, read once.
pub(crate) fn environ_has_any(pid: i32, entries: &[&[u8]], buf: &mut Vec<u8>) -> bool {
    buf.clear();
    let Ok(file) = fs::File::open(format!("/proc/{pid}/environ")) else {
        return false;
    };
    if file.take(ENVIRON_CAP).read_to_end(buf).is_err() {
        return false;
    }
    buf.split(|&b| b == 0).any(|e| entries.contains(&e))
}

/// The start time of this process, which with its pid names it uniquely.
pub(crate) fn own_start() -> Option<u64> {
    stat(std::process::id() as i32).map(|s| s.start)
}

/// Parses `/proc/PID/stat`. The command name may contain spaces and parentheses, so fields are
/// counted from the last `)`.
pub(crate) fn parse(pid: i32, stat: &str) -> Option<Stat> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_ascii_whitespace().take(20).collect();
    let num = |i: usize| f.get(i).and_then(|s| s.parse::<i64>().ok());
    let ticks = [11, 12, 13, 14]
        .iter()
        .map(|&i| num(i).unwrap_or(0).max(0) as u64)
        .sum();
    Some(Stat {
        pid,
        ppid: num(1)? as i32,
        pgrp: num(2)? as i32,
        zombie: f.first() == Some(&"Z"),
        ticks,
        start: num(19).unwrap_or(0).max(0) as u64,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_lines_with_odd_command_names_parse() {
        let line =
            "4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 100 0 0 0 7 3 2 1 20 0 1 0 98765 1 1";
        let p = parse(4242, line).unwrap();
        assert_eq!(
            (p.ppid, p.pgrp, p.zombie, p.ticks, p.start),
            (1, 4242, false, 13, 98765)
        );
        assert!(
            parse(1, "1 (x) Z").is_none(),
            "missing fields are not guessed"
        );
        assert!(parse(1, "1 (x) Z 0 1").unwrap().zombie);
    }

    #[test]
    fn this_processs_environment_is_read_entry_by_entry() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .env("PROCFS_TEST_ENTRY", "yes")
            .spawn()
            .unwrap();
        let pid = child.id() as i32;
        let mut buf = Vec::new();
        // Right after exec the kernel may not have set up the new environment yet.
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while !environ_has(pid, b"PROCFS_TEST_ENTRY=yes", &mut buf)
            && std::time::Instant::now() < until
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(environ_has(pid, b"PROCFS_TEST_ENTRY=yes", &mut buf));
        assert!(!environ_has(pid, b"PROCFS_TEST_ENTRY=ye", &mut buf));
        assert!(!environ_has(pid, b"PROCFS_TEST_ENTRY", &mut buf));
        assert!(pids().contains(&pid));
        assert!(last_pid().is_some_and(|last| last > 0));
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn a_grandchild_is_among_the_descendants() {
        let mut child = std::process::Command::new("sh")
            .args(["-c", "sleep 5 & wait"])
            .spawn()
            .unwrap();
        let me = std::process::id() as i32;
        let child_pid = child.id() as i32;
        let until = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut below = descendants_but(me, 0);
        // Other tests of this process have children of their own: wait for this one's.
        while !below.iter().any(|p| p.ppid == child_pid) && std::time::Instant::now() < until {
            std::thread::sleep(std::time::Duration::from_millis(5));
            below = descendants_but(me, 0);
        }
        assert!(below.iter().any(|p| p.pid == child_pid));
        assert!(
            below.iter().any(|p| p.ppid == child_pid),
            "the sleep below the shell"
        );
        assert_eq!(
            descendants_by_parent(me)
                .iter()
                .filter(|p| p.ppid == child_pid)
                .count(),
            1
        );
        for p in below.iter().filter(|p| p.ppid == child_pid) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(p.pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        child.kill().unwrap();
        child.wait().unwrap();
    }

    #[test]
    fn this_process_is_alive_and_a_reused_pid_is_not() {
        let me = std::process::id();
        let start = stat(me as i32).unwrap().start;
        assert!(is_alive(me, Some(start)));
        assert!(is_alive(me, None));
        assert!(
            !is_alive(me, Some(start + 1)),
            "another start time means another process"
        );
        assert!(!is_alive(u32::MAX - 1, None));
    }
}
