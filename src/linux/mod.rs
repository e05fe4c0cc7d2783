//! Everything runbook asks of Linux in particular: the process table in `/proc`, cgroups,
//! `prctl` (the agent dies with runbook; orphans are re-parented to runbook) and the pipe size.
//! runbook is built for Linux only (see the crate root); the rest of the code is plain POSIX.

pub(crate) mod cgroup;
pub(crate) mod procfs;

use std::fs::File;
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt as _;

/// Has the kernel kill the child if runbook itself dies without ending it (SIGKILL, a crash), so
/// that not even a killed runbook leaves its agent running.
pub(crate) fn die_with_parent(command: &mut std::process::Command) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: between fork and exec only async-signal-safe calls are made (prctl, getppid).
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // runbook may have died between fork and prctl.
            if libc::getppid() != parent {
                return Err(std::io::Error::other(
                    "runbook exited while starting the agent",
                ));
            }
            Ok(())
        });
    }
}

/// Has the child move itself into a cgroup before it runs anything, through that cgroup's
/// `cgroup.procs` opened by the caller (who keeps `procs` open until the child is started). If
/// the kernel refuses, the child starts anyway, outside it: the caller checks.
pub(crate) fn join_cgroup(command: &mut std::process::Command, procs: &File) {
    let fd = procs.as_raw_fd();
    // SAFETY: between fork and exec only write(2), which is async-signal-safe, is called, on a
    // descriptor the parent keeps open until the child has started.
    unsafe {
        command.pre_exec(move || {
            libc::write(fd, b"0".as_ptr().cast(), 1);
            Ok(())
        });
    }
}

/// Names this process (`comm`, what `ps` and `/proc/PID/comm` show).
pub(crate) fn set_name(name: &std::ffi::CStr) {
    // SAFETY: PR_SET_NAME reads a NUL-terminated string, which `name` is.
    unsafe { libc::prctl(libc::PR_SET_NAME, name.as_ptr()) };
}

/// Asks the kernel to re-parent orphaned descendants to this process instead of init, so that
/// the agent's tree stays under runbook even when a middle process exits.
pub(crate) fn become_subreaper() {
    // Best effort: without it, a grandchild that escapes with setsid after its parent died is missed.
    let _ = nix::sys::prctl::set_child_subreaper(true);
}

/// A child of this process that has exited and waits to be reaped, if there is one; it is left
/// unreaped (`WNOWAIT`), for the caller to decide whether it is theirs to reap.
pub(crate) fn exited_child() -> Option<i32> {
    // SAFETY: an all-zero siginfo_t is a valid value for waitid(2) to fill.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a valid, writable siginfo_t.
    let r = unsafe {
        libc::waitid(
            libc::P_ALL,
            0,
            &mut info,
            libc::WEXITED | libc::WNOHANG | libc::WNOWAIT,
        )
    };
    // SAFETY: waitid filled `info` (si_pid is 0 when no child has exited).
    let pid = unsafe { info.si_pid() };
    (r == 0 && pid > 0).then_some(pid)
}

/// A new eventfd (close-on-exec, non-blocking): a descriptor a `poll(2)` can wait on beside
/// others, made readable by [`raise`]. `None` when no descriptor is left.
pub(crate) fn eventfd() -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd as _;
    // SAFETY: eventfd(2) returns a new descriptor or -1.
    let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    // SAFETY: a descriptor just made, owned once.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd) })
}

/// Makes the eventfd `fd` readable.
pub(crate) fn raise(fd: &impl AsRawFd) {
    let one = 1u64.to_ne_bytes();
    // SAFETY: an 8-byte write from a live buffer to an eventfd the caller holds.
    unsafe { libc::write(fd.as_raw_fd(), one.as_ptr().cast(), one.len()) };
}

/// Asks for a pipe of `bytes` capacity, so that a fast writer is not stopped every 64 KiB (the
/// default). If the kernel refuses (over /proc/sys/fs/pipe-max-size or the user's pipe quota),
/// the pipe keeps its size.
pub(crate) fn grow_pipe(pipe: &impl AsRawFd, bytes: libc::c_int) {
    // SAFETY: fcntl on a descriptor that `pipe` owns for the whole call.
    unsafe { libc::fcntl(pipe.as_raw_fd(), libc::F_SETPIPE_SZ, bytes) };
}

/// Whether the reader at the other end of `out` has gone away: a pipe whose reading end is
/// closed (`runbook run --json | head -1`), or a terminal that hung up. Never blocks.
pub(crate) fn reader_gone(out: &impl AsRawFd) -> bool {
    let mut fd = libc::pollfd {
        fd: out.as_raw_fd(),
        events: 0,
        revents: 0,
    };
    // SAFETY: one pollfd, owned by this frame, with a zero timeout.
    let ready = unsafe { libc::poll(&mut fd, 1, 0) };
    ready > 0 && fd.revents & (libc::POLLERR | libc::POLLHUP) != 0
}
