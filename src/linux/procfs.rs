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
    buf.clear();
    let Ok(file) = fs::File::open(format!("/proc/{pid}/environ")) else {
        return false;
    };
    if file.take(ENVIRON_CAP).read_to_end(buf).is_err() {
        return false;
    }
    buf.split(|&b| b == 0).any(|e| e == entry)
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
