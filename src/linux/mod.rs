//! Everything runbook asks of Linux in particular: the process table in `/proc`, `prctl` (the
//! agent dies with runbook; orphans are re-parented to runbook) and the pipe size. runbook is
//! built for Linux only (see the crate root); the rest of the code is plain POSIX.

pub(crate) mod procfs;

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

/// Asks the kernel to re-parent orphaned descendants to this process instead of init, so that
/// the agent's tree stays under runbook even when a middle process exits.
pub(crate) fn become_subreaper() {
    // Best effort: without it, a grandchild that escapes with setsid after its parent died is missed.
    let _ = nix::sys::prctl::set_child_subreaper(true);
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
