//! The guardian: a small process runbook starts (itself, run as `runbook __guardian TAG
//! [CGROUP]`, which is not a command for people and is read before the command line is) before
//! the agent, that ends every process of the run if runbook dies without doing so (SIGKILL, a
//! crash). The kernel ends the agent with runbook (`PR_SET_PDEATHSIG`), but not what the agent
//! started.
//!
//! runbook holds the write end of a pipe whose read end is the guardian's stdin. When the run
//! ends normally runbook writes `done` and closes it, and the guardian exits at once; when
//! runbook dies the kernel closes it, the guardian reads the end of the pipe, kills the run's
//! cgroup and sweeps `/proc` for the run's mark until nothing of the run is left, then exits.

use std::ffi::CStr;
use std::io::{BufRead as _, Write as _};
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::scope::Scope;
use super::tree::Tree;
use crate::linux::cgroup::Cgroup;

/// The first argument that makes runbook a guardian.
const ARG: &str = "__guardian";
/// What runbook writes when the run has ended normally.
const DONE: &str = "done";
/// How long the guardian keeps killing before it gives up on what it cannot end.
const SWEEP_BOUND: Duration = Duration::from_secs(10);
/// How long runbook waits for a dismissed guardian to exit.
const EXIT_WAIT: Duration = Duration::from_secs(2);
/// How the guardian shows in `ps`.
const NAME: &CStr = c"runbook-guard";

/// The guardian, seen from runbook.
#[derive(Debug)]
pub(crate) struct Guardian {
    child: Child,
    pipe: std::io::PipeWriter,
}

impl Guardian {
    /// Starts the guardian of the run `tag` (and its cgroup): runbook's own binary, in a process
    /// group of its own so that a Ctrl-C at the terminal does not reach it.
    pub(crate) fn start(tag: &str, cgroup: Option<&Cgroup>) -> std::io::Result<Self> {
        // Both ends are close-on-exec: the agent never holds the write end, so runbook's death
        // is the end of the pipe.
        let (read, pipe) = std::io::pipe()?;
        let mut command = Command::new("/proc/self/exe");
        command
            .arg0("runbook")
            .args([ARG, tag])
            .current_dir("/")
            .stdin(read)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0);
        if let Some(cgroup) = cgroup {
            command.arg(cgroup.dir());
        }
        let child = command.spawn()?;
        Ok(Self { child, pipe })
    }

    pub(crate) fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// The run ended normally: the guardian exits without sweeping; runbook waits for it.
    pub(crate) fn dismiss(mut self) {
        let _ = writeln!(self.pipe, "{DONE}");
        drop(self.pipe);
        let until = Instant::now() + EXIT_WAIT;
        while Instant::now() < until {
            if !matches!(self.child.try_wait(), Ok(None)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(2));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// When runbook was started as a guardian (`runbook __guardian TAG [CGROUP]`), serves as one and
/// says how that ended.
pub(crate) fn invocation() -> Option<ExitCode> {
    let mut args = std::env::args_os().skip(1);
    if args.next()? != ARG {
        return None;
    }
    let tag = args.next()?.into_string().ok()?;
    let cgroup = args.next().map(PathBuf::from);
    Some(serve(&tag, cgroup.as_deref()))
}

/// Waits for runbook's word or its death; on its death, ends every process of the run `tag`.
fn serve(tag: &str, cgroup: Option<&Path>) -> ExitCode {
    crate::linux::set_name(NAME);
    // Signals meant for runbook's terminal or session are not the guardian's business.
    for sig in [libc::SIGINT, libc::SIGHUP, libc::SIGQUIT, libc::SIGTSTP] {
        // SAFETY: setting a signal's disposition to SIG_IGN is always sound.
        unsafe { libc::signal(sig, libc::SIG_IGN) };
    }
    let mut line = String::new();
    let mut stdin = std::io::stdin().lock();
    loop {
        line.clear();
        match stdin.read_line(&mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line.trim() == DONE => return ExitCode::SUCCESS,
            Ok(_) => {}
        }
    }
    // runbook is gone without a word: end what it left.
    let cgroup = cgroup.map(|dir| Cgroup::at(PathBuf::from(dir)));
    let scope = Arc::new(Scope::orphaned(tag, cgroup.clone()));
    let ended = Tree::new(scope, None).kill_all(SWEEP_BOUND);
    if let Some(cgroup) = cgroup {
        let _ = cgroup.remove();
    }
    if ended.left.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
