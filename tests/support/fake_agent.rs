//! `fake-agent`: a deterministic stand-in for `opencode run --format json`,
//! used by runbook's integration tests and benchmarks (Linux only).
//!
//! runbook runs it exactly as it would run opencode
//! (`fake-agent run --format json [--model M] [...] PROMPT`); the arguments are
//! ignored except `--version` as the first argument. What it does is chosen
//! by environment variables (exactly one mode variable must be set):
//!
//! ```text
//! fake-agent --version           prints $FAKE_AGENT_VERSION and a newline, exit 0, when it is
//!                                set; else nothing, exit 1 (no version to check against the
//!                                versions runbook was tested with). No argv file either way
//! no mode variable               one-line usage on stderr, exit 2
//! bad input (file, env value)    "fake-agent: ..." on stderr, exit 2, before any output
//!
//! Always (every invocation, before anything else):
//!   FAKE_AGENT_PID_FILE=path   append "<pid>\n" for itself, then one line per
//!                              forked child (written by the parent right after fork)
//!   FAKE_AGENT_ARGV_FILE=path  write {"argv":[argv0, args...],"cwd":"<getcwd>"}
//!                              (argv[0] included; written to path.tmp.PID then renamed)
//!   FAKE_AGENT_CGROUP_FILE=path  copy /proc/self/cgroup there (not for --version)
//!
//! Mode A  FAKE_AGENT_SCENARIO=file.ndjson   (whole file parsed up front)
//!   line not starting with {"$   written to stdout + "\n" in one write(2)
//!   {"$sleep_ms": N}             sleep N ms
//!   {"$stderr": "s"}             s + "\n" to stderr
//!   {"$stderr_raw": "s"}         s to stderr, no newline
//!   {"$stdout_raw": "s"}         s to stdout, no newline (partial lines, garbage)
//!   {"$stdout_hex": "ff fe 0a"}  raw bytes to stdout (hex pairs, whitespace ignored)
//!   {"$long_line": N}            N bytes of 'x' then "\n", in 64 KiB writes
//!   {"$exit": C}                 exit(C), 0..=255
//!   {"$kill_self": "SIGSEGV"}    restore SIG_DFL, unblock, raise (name with or
//!                                without SIG, or a number); core dumps are
//!                                disabled first; if it returns (SIGSTOP,
//!                                SIGCHLD...) the scenario continues
//!   {"$ignore_sigterm": B}       true: SIGTERM -> SIG_IGN; false: SIG_DFL
//!                                (inherited by children forked later)
//!   {"$hang": true}              reap own children, then pause() forever (no CPU)
//!   {"$hang_ticking": {"every_ms": N, "burn_ms": M}}
//!                                forever, no output: sleep N ms, then spin M ms
//!                                of CPU (as a runtime's idle timers do)
//!   {"$spawn_grandchild": {"sleep_ms": N, "setsid": B}}
//!                                fork a child that keeps stdout/stderr (and
//!                                the pipes) open, sleeps N ms, exits 0; setsid
//!                                (default false) is done before the parent
//!                                goes on; parent continues at once
//!   {"$spawn": ["prog", "arg", ...]}
//!                                start a program in the background (stdin,
//!                                stdout, stderr: /dev/null) and go on at once;
//!                                its pid goes to FAKE_AGENT_PID_FILE
//!   {"$try": {"op": OP, "target": T, "setsid": B}}
//!                                do OP and print it as an OpenCode bash tool_use
//!                                line (callID call_try_<n>): status completed,
//!                                output "ok", or status error with "<OP> <T>: <the
//!                                error>". OP: write (the bytes "x" to the file T),
//!                                read (the file T), connect (TCP to 127.0.0.1:T),
//!                                signal (SIGTERM to pid T), shell (`sh -c T`,
//!                                printed as OpenCode prints a command: status
//!                                completed, its stdout and stderr as output, its
//!                                exit code in metadata.exit). setsid (default
//!                                false): done in a forked child that first starts
//!                                a session of its own (its pid recorded)
//!   {"$burn_cpu_ms": N}          spin until this process used N ms of CPU
//!                                (wall time >= N), no output
//!   {"$burn_cpu_child_ms": N}    fork a child that spins N ms of CPU; the
//!                                parent blocks in waitpid (no CPU, no output)
//!   {"$burn_cpu_threads": {"threads": T, "wall_ms": N}}
//!                                spin on T threads of this process for N ms
//!                                of wall time, no output
//!   {"$burn_cpu_jobs": {"jobs": J, "wall_ms": N}}
//!                                fork J children that each spin for N ms of
//!                                wall time, as a parallel build's jobs do, all
//!                                ending together; the parent blocks until all
//!                                have exited (no output)
//!   {"$close_stdout": true}      close fds 1 and 2, keep going
//!   {"$refork_holding_stdout": {"every_ms": N, "setsid": B, "close_output": B}}
//!                                fork a child that, forever, sleeps N ms, forks
//!                                the next generation and exits (each generation
//!                                re-parented, each a new pid), holding stdout
//!                                and stderr (and the pipes) unless close_output
//!                                (default false); setsid (default false): each
//!                                generation starts a session of its own. Every
//!                                generation's pid goes to FAKE_AGENT_PID_FILE.
//!                                The last generation exits 30 s after the first
//!                                started (a failed test cannot leave it behind
//!                                for good). The parent continues at once
//!   {"$repeat": {"line": "s", "times": N, "stream": "stdout"}}
//!                                s + "\n" written N times, in writes of
//!                                >= 256 KiB; stream "stdout" (default) or
//!                                "stderr"; stops at the first failed write
//!   "{{CWD}}" is replaced by getcwd(), and "{{ENV:NAME}}" by the value of the
//!   environment variable NAME (empty when unset), in verbatim lines (raw, not
//!   JSON-escaped) and in directive string values. At the end of the file: exit 0.
//!   Write errors (EPIPE, EBADF after $close_stdout) are ignored.
//!
//! Mode B  FAKE_AGENT_REPLAY=prefix   replays prefix.stdout.ndjson (required),
//!   prefix.stderr.txt (optional), prefix.exit (optional, default 0; 129..=159
//!   = die by signal code-128) and prefix.timing.ndjson (optional; one
//!   {"t": secs, "stream": "stdout"|"stderr", ...} per line in arrival order,
//!   each consumes the next line of that stream; it is written at
//!   spawn + t / FAKE_AGENT_SPEED). FAKE_AGENT_SPEED: float, default 1;
//!   0 or inf = no sleeping. Lines without a timing entry are written
//!   immediately at the end (stdout, then stderr).
//!
//! Mode C  FAKE_AGENT_GENERATE=N   N OpenCode events (exactly N lines) as fast
//!   as possible, in writes of >= 256 KiB (the last one smaller): steps of
//!   step_start, text, 2-3 tool_use (read/edit/bash cycling), step_finish
//!   reason "tool-calls"; the last step is step_start, 1-4 text, step_finish
//!   reason "stop" (N=1: just that step_finish; N=2: step_start + it).
//!   FAKE_AGENT_BIG_EVERY=K (default 600): every K-th tool_use is a bash call
//!   whose output and metadata.output are FAKE_AGENT_BIG_BYTES (default 65536)
//!   bytes each (before JSON escaping); K=0: never. File paths are under
//!   getcwd(). Defaults give ~765 bytes/line with a 15-char cwd
//!   (200000 events = 153 MB); K=40 gives ~2.2 KB/line.
//!
//! Mode D  FAKE_AGENT_PACED=N, FAKE_AGENT_INTERVAL_MS=M (default 5)
//!   step_start, then N text events one every M ms, part.text = "t_ns=<19
//!   digits of CLOCK_REALTIME ns read just before the write(2)>", then
//!   step_finish reason "stop", exit 0.
//!
//! Replay/generate/paced exit 1 if stdout cannot be written (SIGPIPE is ignored).
//! ```
//!
//! Note for "no process left behind" checks: a grandchild that outlives the
//! fake is reparented to the nearest subreaper or pid 1; if that never reaps
//! (as in some containers), it stays a zombie, and kill(pid, 0) still
//! succeeds on zombies. Check /proc/PID/stat state 'Z' instead.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "a test double, not runbook"
)]

use std::ffi::{OsStr, OsString};
use std::fs::{File, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::clock::{clock_ns, realtime_ns};

mod clock;

const USAGE: &str = "usage: fake-agent run --format json [ARGS] PROMPT  with exactly one of FAKE_AGENT_SCENARIO=<file.ndjson> | FAKE_AGENT_REPLAY=<prefix> | FAKE_AGENT_GENERATE=<n> | FAKE_AGENT_PACED=<n> set (see tests/support/fake_agent.rs); or: fake-agent --version\n";
const MODE_VARS: [&str; 4] = [
    "FAKE_AGENT_SCENARIO",
    "FAKE_AGENT_REPLAY",
    "FAKE_AGENT_GENERATE",
    "FAKE_AGENT_PACED",
];

struct Ctx {
    start: Instant,
    cwd: String,
    pid_file: Option<File>,
}

impl Ctx {
    fn record_pid(&self, pid: i32) {
        if let Some(f) = &self.pid_file {
            // One write(2) per line on an O_APPEND file: atomic, unbuffered.
            let _ = (&*f).write_all(format!("{pid}\n").as_bytes());
        }
    }
}

fn main() {
    let start = Instant::now();
    let args: Vec<String> = std::env::args_os()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    let cwd = std::env::current_dir()
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let pid_file = env_os("FAKE_AGENT_PID_FILE").map(|p| {
        OpenOptions::new()
            .create(true)
            .append(true)
            .open(&p)
            .unwrap_or_else(|e| fatal(&format!("cannot open FAKE_AGENT_PID_FILE {p:?}: {e}")))
    });
    let ctx = Ctx {
        start,
        cwd,
        pid_file,
    };
    ctx.record_pid(std::process::id() as i32);
    // Before the argv file: a version probe running beside the real run must not overwrite it.
    if args.get(1).map(String::as_str) == Some("--version") {
        match env_os("FAKE_AGENT_VERSION") {
            Some(version) => {
                let mut line = version.into_encoded_bytes();
                line.push(b'\n');
                let _ = write_all_fd(1, &line);
                std::process::exit(0);
            }
            None => std::process::exit(1),
        }
    }
    if let Some(path) = env_os("FAKE_AGENT_ARGV_FILE") {
        write_argv_file(Path::new(&path), &args, &ctx.cwd);
    }
    if let Some(path) = env_os("FAKE_AGENT_CGROUP_FILE") {
        let cgroup = std::fs::read("/proc/self/cgroup").unwrap_or_default();
        if let Err(e) = std::fs::write(&path, cgroup) {
            fatal(&format!(
                "cannot write FAKE_AGENT_CGROUP_FILE {path:?}: {e}"
            ));
        }
    }

    let set: Vec<&str> = MODE_VARS
        .iter()
        .copied()
        .filter(|v| env_os(v).is_some())
        .collect();
    match set.as_slice() {
        [] => {
            let _ = write_all_fd(2, USAGE.as_bytes());
            std::process::exit(2);
        }
        [_] => {}
        _ => fatal(&format!(
            "only one mode variable may be set, got {}",
            set.join(", ")
        )),
    }
    let value = env_os(set[0]).unwrap_or_default();
    match set[0] {
        "FAKE_AGENT_SCENARIO" => run_scenario(&ctx, &value),
        "FAKE_AGENT_REPLAY" => run_replay(&ctx, &value),
        "FAKE_AGENT_GENERATE" => {
            let n = parse_env_num::<u64>("FAKE_AGENT_GENERATE", 0);
            let big_every = parse_env_num::<u64>("FAKE_AGENT_BIG_EVERY", DEFAULT_BIG_EVERY);
            let big_bytes = parse_env_num::<usize>("FAKE_AGENT_BIG_BYTES", 65536);
            run_generate(&ctx, n, big_every, big_bytes)
        }
        _ => {
            let n = parse_env_num::<u64>("FAKE_AGENT_PACED", 0);
            let interval = parse_env_num::<u64>("FAKE_AGENT_INTERVAL_MS", 5);
            run_paced(n, interval)
        }
    }
}

// ---------------------------------------------------------------- helpers

fn env_os(name: &str) -> Option<OsString> {
    std::env::var_os(name).filter(|v| !v.is_empty())
}

fn parse_env_num<T: std::str::FromStr>(name: &str, default: T) -> T {
    match env_os(name) {
        None => default,
        Some(v) => v
            .to_str()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| fatal(&format!("{name}={v:?} is not a valid number"))),
    }
}

fn fatal(msg: &str) -> ! {
    let _ = write_all_fd(2, format!("fake-agent: {msg}\n").as_bytes());
    std::process::exit(2);
}

fn errno() -> i32 {
    std::io::Error::last_os_error().raw_os_error().unwrap_or(0)
}

/// write(2) all of `buf` to `fd` (no user-space buffering), retrying on
/// EINTR and waiting on EAGAIN. Returns the errno on failure.
fn write_all_fd(fd: i32, mut buf: &[u8]) -> Result<(), i32> {
    while !buf.is_empty() {
        // SAFETY: buf is a valid slice for the duration of the call.
        let n = unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) };
        if n > 0 {
            buf = &buf[n as usize..];
            continue;
        }
        if n == 0 {
            return Err(libc::EIO);
        }
        match errno() {
            libc::EINTR => {}
            libc::EAGAIN => {
                let mut p = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: p is a valid pollfd.
                unsafe { libc::poll(&mut p, 1, -1) };
            }
            e => return Err(e),
        }
    }
    Ok(())
}

/// For the modes where a failed stdout write ends the run.
fn emit_or_exit(fd: i32, buf: &[u8]) {
    if let Err(e) = write_all_fd(fd, buf) {
        let msg = format!(
            "fake-agent: write to fd {fd} failed: {}\n",
            std::io::Error::from_raw_os_error(e)
        );
        let _ = write_all_fd(2, msg.as_bytes());
        std::process::exit(1);
    }
}

fn write_argv_file(path: &Path, args: &[String], cwd: &str) {
    let json = serde_json::json!({ "argv": args, "cwd": cwd });
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp.{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let res = std::fs::write(&tmp, format!("{json}\n")).and_then(|()| std::fs::rename(&tmp, path));
    if let Err(e) = res {
        fatal(&format!(
            "cannot write FAKE_AGENT_ARGV_FILE {}: {e}",
            path.display()
        ));
    }
}

fn replace_bytes(hay: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(needle) {
            out.extend_from_slice(with);
            i += needle.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

fn thread_cpu_ns() -> u64 {
    clock_ns(libc::CLOCK_THREAD_CPUTIME_ID)
}

fn sleep_until(deadline: Instant) {
    let now = Instant::now();
    if deadline > now {
        std::thread::sleep(deadline - now);
    }
}

// ---------------------------------------------------------------- signals & processes

const SIGNALS: &[(&str, i32)] = &[
    ("HUP", libc::SIGHUP),
    ("INT", libc::SIGINT),
    ("QUIT", libc::SIGQUIT),
    ("ILL", libc::SIGILL),
    ("TRAP", libc::SIGTRAP),
    ("ABRT", libc::SIGABRT),
    ("BUS", libc::SIGBUS),
    ("FPE", libc::SIGFPE),
    ("KILL", libc::SIGKILL),
    ("USR1", libc::SIGUSR1),
    ("SEGV", libc::SIGSEGV),
    ("USR2", libc::SIGUSR2),
    ("PIPE", libc::SIGPIPE),
    ("ALRM", libc::SIGALRM),
    ("TERM", libc::SIGTERM),
    ("CHLD", libc::SIGCHLD),
    ("CONT", libc::SIGCONT),
    ("STOP", libc::SIGSTOP),
    ("TSTP", libc::SIGTSTP),
    ("TTIN", libc::SIGTTIN),
    ("TTOU", libc::SIGTTOU),
    ("URG", libc::SIGURG),
    ("XCPU", libc::SIGXCPU),
    ("XFSZ", libc::SIGXFSZ),
    ("VTALRM", libc::SIGVTALRM),
    ("PROF", libc::SIGPROF),
    ("WINCH", libc::SIGWINCH),
    ("IO", libc::SIGIO),
    ("SYS", libc::SIGSYS),
];

fn parse_signal(v: &Value) -> Option<i32> {
    if let Some(n) = v.as_u64() {
        return (1..=64).contains(&n).then_some(n as i32);
    }
    let s = v.as_str()?.trim().to_ascii_uppercase();
    let name = s.strip_prefix("SIG").unwrap_or(&s);
    SIGNALS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, sig)| sig)
}

fn set_disposition(sig: i32, handler: libc::sighandler_t) {
    // SAFETY: installing SIG_DFL/SIG_IGN is always sound.
    unsafe { libc::signal(sig, handler) };
}

/// Die by `sig` (default disposition, unblocked). Returns only if the
/// signal's default action does not terminate the process.
fn die_by_signal(sig: i32) {
    const CORE: &[i32] = &[
        libc::SIGQUIT,
        libc::SIGILL,
        libc::SIGTRAP,
        libc::SIGABRT,
        libc::SIGBUS,
        libc::SIGFPE,
        libc::SIGSEGV,
        libc::SIGXCPU,
        libc::SIGXFSZ,
        libc::SIGSYS,
    ];
    // SAFETY: plain libc calls on valid, locally owned arguments.
    unsafe {
        if CORE.contains(&sig) {
            // No core files in test work dirs, no slow core_pattern helpers.
            let rl = libc::rlimit {
                rlim_cur: 0,
                rlim_max: 0,
            };
            libc::setrlimit(libc::RLIMIT_CORE, &rl);
            libc::prctl(libc::PR_SET_DUMPABLE, 0, 0, 0, 0);
        }
        if sig != libc::SIGKILL && sig != libc::SIGSTOP {
            libc::signal(sig, libc::SIG_DFL);
        }
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, sig);
        libc::sigprocmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        libc::raise(sig);
    }
}

/// Reap children that already exited (grandchildren from $spawn_grandchild).
fn reap_exited_children() {
    // SAFETY: waitpid with a null status pointer is allowed.
    while unsafe { libc::waitpid(-1, std::ptr::null_mut(), libc::WNOHANG) } > 0 {}
}

fn hang() -> ! {
    // Reap our own children as they exit (blocking, no CPU), then sleep forever.
    loop {
        // SAFETY: as above.
        let r = unsafe { libc::waitpid(-1, std::ptr::null_mut(), 0) };
        if r < 0 && errno() != libc::EINTR {
            break;
        }
    }
    loop {
        // SAFETY: pause has no arguments.
        unsafe { libc::pause() };
    }
}

/// fork(); the child runs `body` and `_exit(0)`s. Returns the child's pid.
/// The fake is single-threaded, and `body` only calls async-signal-safe code.
fn fork_child(ctx: &Ctx, body: impl FnOnce()) -> i32 {
    // SAFETY: single-threaded process; the child only sleeps/spins and _exits.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        fatal(&format!("fork failed: {}", std::io::Error::last_os_error()));
    }
    if pid == 0 {
        body();
        // SAFETY: terminating the child without running atexit handlers.
        unsafe { libc::_exit(0) };
    }
    ctx.record_pid(pid);
    pid
}

fn spawn_grandchild(ctx: &Ctx, sleep_ms: u64, setsid: bool) {
    let pid = fork_child(ctx, || {
        if setsid {
            // SAFETY: setsid has no arguments.
            unsafe { libc::setsid() };
        }
        std::thread::sleep(Duration::from_millis(sleep_ms));
    });
    if setsid {
        // Do not continue before the child has left our session/process group.
        let until = Instant::now() + Duration::from_secs(2);
        // SAFETY: getsid on any pid is sound.
        while unsafe { libc::getsid(pid) } != pid && Instant::now() < until {
            if unsafe { libc::getsid(pid) } < 0 {
                break;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

/// Does `op` on `target` (in a forked child in a session of its own, with `setsid`) and prints
/// how it went as an OpenCode bash tool call.
fn try_op(ctx: &Ctx, op: &str, target: &str, setsid: bool) {
    static CALLS: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    let n = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if op == "shell" {
        return print_try(n, shell(target));
    }
    let result = if setsid {
        in_own_session(ctx, || attempt(op, target))
    } else {
        attempt(op, target)
    };
    let state = match &result {
        Ok(()) => {
            serde_json::json!({"status": "completed", "input": {"command": format!("{op} {target}")},
            "output": "ok", "metadata": {"exit": 0}, "title": op, "time": {"start": 1, "end": 2}})
        }
        Err(e) => {
            serde_json::json!({"status": "error", "input": {"command": format!("{op} {target}")},
            "error": format!("{op} {target}: {e}"), "time": {"start": 1, "end": 2}})
        }
    };
    print_try(n, state);
}

/// The state of a `$try` shell command, as OpenCode's bash tool tells it: completed, whatever
/// its exit code, with what it printed.
fn shell(command: &str) -> serde_json::Value {
    let (output, exit) = match std::process::Command::new("sh")
        .args(["-c", command])
        .stdin(std::process::Stdio::null())
        .output()
    {
        Ok(out) => {
            let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&out.stderr));
            (text, out.status.code().unwrap_or(-1))
        }
        Err(e) => (e.to_string(), 127),
    };
    serde_json::json!({"status": "completed", "input": {"command": command},
        "output": output, "metadata": {"exit": exit, "output": output}, "title": command,
        "time": {"start": 1, "end": 2}})
}

/// Prints the `tool_use` line of the `n`th `$try`.
fn print_try(n: u32, state: serde_json::Value) {
    let line = serde_json::json!({"type": "tool_use", "timestamp": 1, "sessionID": "ses_fake",
        "part": {"type": "tool", "tool": "bash", "callID": format!("call_try_{n}"), "state": state,
            "id": format!("prt_try_{n}"), "sessionID": "ses_fake", "messageID": "msg_1"}});
    let _ = write_all_fd(1, format!("{line}\n").as_bytes());
}

/// The operation `$try` names: `Err` with the error as the system tells it.
fn attempt(op: &str, target: &str) -> Result<(), String> {
    match op {
        "write" => std::fs::write(target, "x").map_err(|e| e.to_string()),
        "read" => std::fs::read(target).map(drop).map_err(|e| e.to_string()),
        "connect" => {
            let port: u16 = target.parse().map_err(|_| format!("bad port {target}"))?;
            std::net::TcpStream::connect(("127.0.0.1", port))
                .map(drop)
                .map_err(|e| e.to_string())
        }
        _ => {
            let pid: i32 = target.parse().map_err(|_| format!("bad pid {target}"))?;
            // SAFETY: kill(2) with a pid and a signal number.
            if unsafe { libc::kill(pid, libc::SIGTERM) } == 0 {
                Ok(())
            } else {
                Err(std::io::Error::last_os_error().to_string())
            }
        }
    }
}

/// Runs `f` in a forked child that first starts a session of its own, and hands back what it
/// returned (through a pipe).
fn in_own_session(ctx: &Ctx, f: impl FnOnce() -> Result<(), String>) -> Result<(), String> {
    let (mut read, write) = std::io::pipe().map_err(|e| e.to_string())?;
    let pid = fork_child(ctx, move || {
        // SAFETY: setsid has no arguments.
        unsafe { libc::setsid() };
        let said = match f() {
            Ok(()) => String::new(),
            Err(e) => e,
        };
        let mut write = write;
        let _ = write.write_all(said.as_bytes());
    });
    let mut said = String::new();
    let _ = std::io::Read::read_to_string(&mut read, &mut said);
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, std::ptr::null_mut(), 0) };
    if said.is_empty() { Ok(()) } else { Err(said) }
}

/// A process that never stays: each generation sleeps `every_ms`, forks the next and exits; for
/// [`REFORK_LIFETIME`] at most.
fn refork(ctx: &Ctx, every_ms: u64, setsid: bool, close_output: bool) {
    let until = Instant::now() + REFORK_LIFETIME;
    fork_child(ctx, || {
        if close_output {
            // SAFETY: closing our own standard fds; nothing else owns them.
            unsafe {
                libc::close(1);
                libc::close(2);
            }
        }
        loop {
            if setsid {
                // SAFETY: setsid has no arguments.
                unsafe { libc::setsid() };
            }
            std::thread::sleep(Duration::from_millis(every_ms));
            if Instant::now() > until {
                // SAFETY: ending the last generation without running atexit handlers.
                unsafe { libc::_exit(0) };
            }
            // SAFETY: single-threaded process; both sides only sleep, fork, write and _exit.
            let pid = unsafe { libc::fork() };
            if pid > 0 {
                ctx.record_pid(pid);
                // SAFETY: ending this generation without running atexit handlers.
                unsafe { libc::_exit(0) };
            }
            // pid == 0: the next generation goes on; pid < 0: this one tries again.
        }
    });
}

/// How long a re-forking grandchild goes on, whatever happens to the test that started it.
const REFORK_LIFETIME: Duration = Duration::from_secs(30);

fn burn_cpu(ms: u64) {
    let target = thread_cpu_ns() + ms * 1_000_000;
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    while thread_cpu_ns() < target {
        for _ in 0..20_000 {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
        }
        std::hint::black_box(x);
    }
}

fn burn_cpu_in_child(ctx: &Ctx, ms: u64) {
    let pid = fork_child(ctx, || burn_cpu(ms));
    let mut status = 0;
    // SAFETY: status is a valid out pointer.
    while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 && errno() == libc::EINTR {}
}

fn burn_cpu_in_jobs(ctx: &Ctx, jobs: u64, wall_ms: u64) {
    let until = Instant::now() + Duration::from_millis(wall_ms);
    let spin = move || {
        while Instant::now() < until {
            burn_cpu(1);
        }
    };
    let pids: Vec<i32> = (0..jobs).map(|_| fork_child(ctx, spin)).collect();
    for pid in pids {
        let mut status = 0;
        // SAFETY: status is a valid out pointer.
        while unsafe { libc::waitpid(pid, &mut status, 0) } < 0 && errno() == libc::EINTR {}
    }
}

// ---------------------------------------------------------------- mode A: scenario

enum Step {
    Out(Vec<u8>),
    Err(Vec<u8>),
    Sleep(u64),
    LongLine(u64),
    Exit(i32),
    KillSelf(i32),
    IgnoreSigterm(bool),
    Hang,
    HangTicking {
        every_ms: u64,
        burn_ms: u64,
    },
    SpawnGrandchild {
        sleep_ms: u64,
        setsid: bool,
    },
    Refork {
        every_ms: u64,
        setsid: bool,
        close_output: bool,
    },
    Spawn(Vec<String>),
    Try {
        op: String,
        target: String,
        setsid: bool,
    },
    BurnCpu(u64),
    BurnCpuChild(u64),
    BurnCpuThreads {
        threads: u64,
        wall_ms: u64,
    },
    BurnCpuJobs {
        jobs: u64,
        wall_ms: u64,
    },
    CloseStdout,
    Repeat {
        fd: i32,
        line: Vec<u8>,
        times: u64,
    },
    Nop,
}

fn run_scenario(ctx: &Ctx, path: &OsStr) -> ! {
    let data = std::fs::read(path)
        .unwrap_or_else(|e| fatal(&format!("cannot read FAKE_AGENT_SCENARIO {path:?}: {e}")));
    let steps = parse_scenario(&data, &ctx.cwd).unwrap_or_else(|e| fatal(&e));
    for step in &steps {
        exec_step(ctx, step);
        reap_exited_children();
    }
    std::process::exit(0);
}

fn parse_scenario(data: &[u8], cwd: &str) -> Result<Vec<Step>, String> {
    let mut lines: Vec<&[u8]> = data.split(|&b| b == b'\n').collect();
    if data.is_empty() || data.ends_with(b"\n") {
        lines.pop();
    }
    let mut steps = Vec::with_capacity(lines.len());
    for (i, line) in lines.into_iter().enumerate() {
        if line.starts_with(b"{\"$") {
            steps.push(
                parse_directive(line, cwd).map_err(|e| format!("scenario line {}: {e}", i + 1))?,
            );
        } else {
            let mut out = substitute_env(&replace_bytes(line, b"{{CWD}}", cwd.as_bytes()));
            out.push(b'\n');
            steps.push(Step::Out(out));
        }
    }
    Ok(steps)
}

fn substitute(v: &mut Value, cwd: &str) {
    match v {
        Value::String(s) => {
            let replaced = substitute_env(s.replace("{{CWD}}", cwd).as_bytes());
            *s = String::from_utf8_lossy(&replaced).into_owned();
        }
        Value::Array(a) => a.iter_mut().for_each(|x| substitute(x, cwd)),
        Value::Object(o) => o.values_mut().for_each(|x| substitute(x, cwd)),
        _ => {}
    }
}

/// Replaces each "{{ENV:NAME}}" with the value of NAME (empty when unset).
fn substitute_env(line: &[u8]) -> Vec<u8> {
    const OPEN: &[u8] = b"{{ENV:";
    let mut out = Vec::with_capacity(line.len());
    let mut rest = line;
    while let Some(at) = rest.windows(OPEN.len()).position(|w| w == OPEN) {
        let after = &rest[at + OPEN.len()..];
        let Some(len) = after.windows(2).position(|w| w == b"}}") else {
            break;
        };
        out.extend_from_slice(&rest[..at]);
        let name = String::from_utf8_lossy(&after[..len]).into_owned();
        out.extend_from_slice(std::env::var(name).unwrap_or_default().as_bytes());
        rest = &after[len + 2..];
    }
    out.extend_from_slice(rest);
    out
}

fn parse_hex(s: &str) -> Result<Vec<u8>, String> {
    let digits: Vec<u8> = s.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    if !digits.len().is_multiple_of(2) {
        return Err(format!("odd number of hex digits in {s:?}"));
    }
    digits
        .chunks(2)
        .map(|p| {
            std::str::from_utf8(p)
                .ok()
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad hex byte {:?}", String::from_utf8_lossy(p)))
        })
        .collect()
}

fn parse_directive(line: &[u8], cwd: &str) -> Result<Step, String> {
    let mut v: Value =
        serde_json::from_slice(line).map_err(|e| format!("invalid directive JSON: {e}"))?;
    substitute(&mut v, cwd);
    let obj = v.as_object().ok_or("directive is not a JSON object")?;
    if obj.len() != 1 {
        return Err("a directive object must have exactly one key".into());
    }
    let (key, val) = obj.iter().next().expect("one key");
    let num = || {
        val.as_u64()
            .ok_or(format!("{key} needs a non-negative integer"))
    };
    let text = || val.as_str().ok_or(format!("{key} needs a string"));
    let flag = || val.as_bool().ok_or(format!("{key} needs true or false"));
    Ok(match key.as_str() {
        "$sleep_ms" => Step::Sleep(num()?),
        "$stderr" => Step::Err(format!("{}\n", text()?).into_bytes()),
        "$stderr_raw" => Step::Err(text()?.as_bytes().to_vec()),
        "$stdout_raw" => Step::Out(text()?.as_bytes().to_vec()),
        "$stdout_hex" => Step::Out(parse_hex(text()?)?),
        "$long_line" => Step::LongLine(num()?),
        "$exit" => {
            let c = num()?;
            if c > 255 {
                return Err("$exit code must be 0..=255".into());
            }
            Step::Exit(c as i32)
        }
        "$kill_self" => {
            Step::KillSelf(parse_signal(val).ok_or(format!("$kill_self: unknown signal {val}"))?)
        }
        "$ignore_sigterm" => Step::IgnoreSigterm(flag()?),
        "$hang" => {
            if flag()? {
                Step::Hang
            } else {
                Step::Nop
            }
        }
        "$close_stdout" => {
            if flag()? {
                Step::CloseStdout
            } else {
                Step::Nop
            }
        }
        "$spawn" => {
            let argv: Option<Vec<String>> = val
                .as_array()
                .map(|a| a.iter().map(|v| v.as_str().map(str::to_owned)).collect())
                .unwrap_or_default();
            match argv {
                Some(argv) if !argv.is_empty() => Step::Spawn(argv),
                _ => return Err("$spawn needs a non-empty array of strings".into()),
            }
        }
        "$try" => {
            let o = val.as_object().ok_or("$try needs an object")?;
            let field = |k: &str| match o.get(k) {
                Some(Value::String(s)) => Ok(s.clone()),
                Some(Value::Number(n)) => Ok(n.to_string()),
                _ => Err(format!("$try.{k} needs a string or a number")),
            };
            let op = field("op")?;
            if !["write", "read", "connect", "signal", "shell"].contains(&op.as_str()) {
                return Err(format!("$try.op: unknown operation {op:?}"));
            }
            Step::Try {
                op,
                target: field("target")?,
                setsid: o.get("setsid").and_then(Value::as_bool).unwrap_or(false),
            }
        }
        "$hang_ticking" => {
            let o = val.as_object().ok_or("$hang_ticking needs an object")?;
            let get = |k: &str| {
                o.get(k)
                    .and_then(Value::as_u64)
                    .ok_or(format!("$hang_ticking.{k} needs a non-negative integer"))
            };
            Step::HangTicking {
                every_ms: get("every_ms")?,
                burn_ms: get("burn_ms")?,
            }
        }
        "$burn_cpu_ms" => Step::BurnCpu(num()?),
        "$burn_cpu_child_ms" => Step::BurnCpuChild(num()?),
        "$burn_cpu_threads" => {
            let o = val.as_object().ok_or("$burn_cpu_threads needs an object")?;
            let get = |k: &str| {
                o.get(k).and_then(Value::as_u64).ok_or(format!(
                    "$burn_cpu_threads.{k} needs a non-negative integer"
                ))
            };
            Step::BurnCpuThreads {
                threads: get("threads")?,
                wall_ms: get("wall_ms")?,
            }
        }
        "$burn_cpu_jobs" => {
            let o = val.as_object().ok_or("$burn_cpu_jobs needs an object")?;
            let get = |k: &str| {
                o.get(k)
                    .and_then(Value::as_u64)
                    .ok_or(format!("$burn_cpu_jobs.{k} needs a non-negative integer"))
            };
            Step::BurnCpuJobs {
                jobs: get("jobs")?,
                wall_ms: get("wall_ms")?,
            }
        }
        "$spawn_grandchild" => {
            let o = val.as_object().ok_or("$spawn_grandchild needs an object")?;
            if let Some(k) = o.keys().find(|k| *k != "sleep_ms" && *k != "setsid") {
                return Err(format!("$spawn_grandchild: unknown key {k:?}"));
            }
            let sleep_ms = o
                .get("sleep_ms")
                .and_then(Value::as_u64)
                .ok_or("$spawn_grandchild.sleep_ms needs a non-negative integer")?;
            let setsid = match o.get("setsid") {
                None => false,
                Some(b) => b.as_bool().ok_or("$spawn_grandchild.setsid needs a bool")?,
            };
            Step::SpawnGrandchild { sleep_ms, setsid }
        }
        "$refork_holding_stdout" => {
            let o = val
                .as_object()
                .ok_or("$refork_holding_stdout needs an object")?;
            if let Some(k) = o
                .keys()
                .find(|k| !["every_ms", "setsid", "close_output"].contains(&k.as_str()))
            {
                return Err(format!("$refork_holding_stdout: unknown key {k:?}"));
            }
            let every_ms = o
                .get("every_ms")
                .and_then(Value::as_u64)
                .ok_or("$refork_holding_stdout.every_ms needs a non-negative integer")?;
            let flag = |name: &str| match o.get(name) {
                None => Ok(false),
                Some(b) => b
                    .as_bool()
                    .ok_or(format!("$refork_holding_stdout.{name} needs a bool")),
            };
            Step::Refork {
                every_ms,
                setsid: flag("setsid")?,
                close_output: flag("close_output")?,
            }
        }
        "$repeat" => {
            let o = val.as_object().ok_or("$repeat needs an object")?;
            if let Some(k) = o
                .keys()
                .find(|k| !["line", "times", "stream"].contains(&k.as_str()))
            {
                return Err(format!("$repeat: unknown key {k:?}"));
            }
            let line = o
                .get("line")
                .and_then(Value::as_str)
                .ok_or("$repeat.line needs a string")?;
            let times = o
                .get("times")
                .and_then(Value::as_u64)
                .ok_or("$repeat.times needs a non-negative integer")?;
            let fd = match o.get("stream").map(|s| s.as_str()) {
                None | Some(Some("stdout")) => 1,
                Some(Some("stderr")) => 2,
                Some(_) => return Err("$repeat.stream is \"stdout\" or \"stderr\"".into()),
            };
            let mut line = line.as_bytes().to_vec();
            line.push(b'\n');
            Step::Repeat { fd, line, times }
        }
        other => return Err(format!("unknown directive {other:?}")),
    })
}

fn exec_step(ctx: &Ctx, step: &Step) {
    match step {
        Step::Out(b) => {
            let _ = write_all_fd(1, b);
        }
        Step::Err(b) => {
            let _ = write_all_fd(2, b);
        }
        Step::Sleep(ms) => std::thread::sleep(Duration::from_millis(*ms)),
        Step::LongLine(n) => {
            static XS: [u8; 65536] = [b'x'; 65536];
            let mut left = *n;
            while left > 0 {
                let k = left.min(XS.len() as u64) as usize;
                if write_all_fd(1, &XS[..k]).is_err() {
                    return;
                }
                left -= k as u64;
            }
            let _ = write_all_fd(1, b"\n");
        }
        Step::Exit(c) => std::process::exit(*c),
        Step::KillSelf(sig) => die_by_signal(*sig),
        Step::IgnoreSigterm(ign) => {
            set_disposition(
                libc::SIGTERM,
                if *ign { libc::SIG_IGN } else { libc::SIG_DFL },
            );
        }
        Step::Hang => hang(),
        Step::HangTicking { every_ms, burn_ms } => loop {
            std::thread::sleep(Duration::from_millis(*every_ms));
            burn_cpu(*burn_ms);
        },
        Step::SpawnGrandchild { sleep_ms, setsid } => spawn_grandchild(ctx, *sleep_ms, *setsid),
        Step::Refork {
            every_ms,
            setsid,
            close_output,
        } => refork(ctx, *every_ms, *setsid, *close_output),
        Step::Spawn(argv) => {
            match std::process::Command::new(&argv[0])
                .args(&argv[1..])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
            {
                Ok(child) => ctx.record_pid(child.id() as i32),
                Err(e) => fatal(&format!("$spawn {argv:?}: {e}")),
            }
        }
        Step::Try { op, target, setsid } => try_op(ctx, op, target, *setsid),
        Step::BurnCpu(ms) => burn_cpu(*ms),
        Step::BurnCpuChild(ms) => burn_cpu_in_child(ctx, *ms),
        Step::BurnCpuJobs { jobs, wall_ms } => burn_cpu_in_jobs(ctx, *jobs, *wall_ms),
        Step::BurnCpuThreads { threads, wall_ms } => {
            let until = Instant::now() + Duration::from_millis(*wall_ms);
            std::thread::scope(|s| {
                for _ in 0..*threads {
                    s.spawn(|| {
                        while Instant::now() < until {
                            burn_cpu(1);
                        }
                    });
                }
            });
        }
        Step::CloseStdout => {
            // SAFETY: closing our own standard fds; nothing else owns them.
            unsafe {
                libc::close(1);
                libc::close(2);
            }
        }
        Step::Repeat { fd, line, times } => repeat(*fd, line, *times),
        Step::Nop => {}
    }
}

/// `line` written `times` times to `fd`, many copies to a write(2).
fn repeat(fd: i32, line: &[u8], times: u64) {
    const WRITE: usize = 256 * 1024;
    let per_write = (WRITE / line.len().max(1)).max(1) as u64;
    let block = line.repeat(per_write as usize);
    let mut left = times;
    while left > 0 {
        let n = left.min(per_write);
        if write_all_fd(fd, &block[..n as usize * line.len()]).is_err() {
            return;
        }
        left -= n;
    }
}

// ---------------------------------------------------------------- mode B: replay

fn run_replay(ctx: &Ctx, prefix: &OsStr) -> ! {
    let file = |suffix: &str| {
        let mut p = prefix.to_owned();
        p.push(suffix);
        PathBuf::from(p)
    };
    let read_opt = |suffix: &str| -> Option<Vec<u8>> {
        let p = file(suffix);
        match std::fs::read(&p) {
            Ok(d) => Some(d),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => fatal(&format!("cannot read {}: {e}", p.display())),
        }
    };
    let stdout = read_opt(".stdout.ndjson")
        .unwrap_or_else(|| fatal(&format!("{} not found", file(".stdout.ndjson").display())));
    let stderr = read_opt(".stderr.txt").unwrap_or_default();
    let exit_code: i32 = match read_opt(".exit") {
        None => 0,
        Some(d) => String::from_utf8_lossy(&d)
            .trim()
            .parse()
            .ok()
            .filter(|c| (0..=255).contains(c))
            .unwrap_or_else(|| fatal(&format!("{}: not an exit code", file(".exit").display()))),
    };
    // (arrival time in seconds, true = stdout)
    let mut timing: Vec<(f64, bool)> = Vec::new();
    if let Some(d) = read_opt(".timing.ndjson") {
        for (i, line) in d.split(|&b| b == b'\n').enumerate() {
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let bad = || -> ! {
                fatal(&format!(
                    "{} line {}: bad timing entry",
                    file(".timing.ndjson").display(),
                    i + 1
                ))
            };
            let v: Value = serde_json::from_slice(line).unwrap_or_else(|_| bad());
            let t = v.get("t").and_then(Value::as_f64).unwrap_or_else(|| bad());
            let is_stdout = match v.get("stream").and_then(Value::as_str) {
                Some("stdout") => true,
                Some("stderr") => false,
                _ => bad(),
            };
            timing.push((t, is_stdout));
        }
    }
    let speed = parse_env_num::<f64>("FAKE_AGENT_SPEED", 1.0);
    if speed.is_nan() || speed < 0.0 {
        fatal("FAKE_AGENT_SPEED must be >= 0 (0 or inf: no sleeping)");
    }
    let sleeping = speed > 0.0 && speed.is_finite();

    let out_lines: Vec<&[u8]> = stdout.split_inclusive(|&b| b == b'\n').collect();
    let err_lines: Vec<&[u8]> = stderr.split_inclusive(|&b| b == b'\n').collect();
    let (mut oi, mut ei) = (0, 0);
    for (t, is_stdout) in timing {
        let (lines, idx, fd) = if is_stdout {
            (&out_lines, &mut oi, 1)
        } else {
            (&err_lines, &mut ei, 2)
        };
        let Some(line) = lines.get(*idx) else {
            continue;
        };
        *idx += 1;
        if sleeping && t > 0.0 {
            sleep_until(ctx.start + Duration::from_secs_f64(t / speed));
        }
        emit_or_exit(fd, line);
    }
    for line in &out_lines[oi..] {
        emit_or_exit(1, line);
    }
    for line in &err_lines[ei..] {
        emit_or_exit(2, line);
    }
    if (129..=159).contains(&exit_code) {
        die_by_signal(exit_code - 128);
    }
    std::process::exit(exit_code);
}

// ---------------------------------------------------------------- mode C: generate

/// Every K-th tool_use line is a bash call with a big output. With the
/// default sizes this gives ~750 bytes per line on average.
const DEFAULT_BIG_EVERY: u64 = 600;
const FLUSH_AT: usize = 256 * 1024;
const SES: &str = "ses_dfe9ea74fffeFakeGenBench01";
const SNAP: &str = "5743286d464e2ebd864ed1e6fe4faffc3c8a6830";
const ID_SUFFIX: &[u8] = b"wdcELsaaW49j35";
const HEX: &[u8; 16] = b"0123456789abcdef";

// Hole markers in templates: \x01 followed by one code byte.
// T timestamp, P new part id, M message id, S/E part time start/end,
// C call number, N file number (3 digits), X text, a/i/o/r token total/
// input/output/cache-read, $ cost, B big output.
const T_STEP_START: &str = "{\"type\":\"step_start\",\"timestamp\":\x01T,\"sessionID\":\"%SES%\",\"part\":{\"id\":\"\x01P\",\"messageID\":\"\x01M\",\"sessionID\":\"%SES%\",\"snapshot\":\"%SNAP%\",\"type\":\"step-start\"}}\n";
const T_TEXT: &str = "{\"type\":\"text\",\"timestamp\":\x01T,\"sessionID\":\"%SES%\",\"part\":{\"id\":\"\x01P\",\"messageID\":\"\x01M\",\"sessionID\":\"%SES%\",\"type\":\"text\",\"text\":\"\x01X\",\"time\":{\"start\":\x01S,\"end\":\x01E}}}\n";
const T_READ: &str = "{\"type\":\"tool_use\",\"timestamp\":\x01T,\"sessionID\":\"%SES%\",\"part\":{\"type\":\"tool\",\"tool\":\"read\",\"callID\":\"call_read_\x01C\",\"state\":{\"status\":\"completed\",\"input\":{\"filePath\":\"%ROOT%/src/module_\x01N.rs\"},\"output\":\"<path>%ROOT%/src/module_\x01N.rs</path>\\n<type>file</type>\\n<content>\\n1: //! Module \x01N of the demo project.\\n2: \\n3: pub fn answer() -> u32 {\\n4:     42\\n5: }\\n\\n(End of file - total 5 lines)\\n</content>\",\"metadata\":{\"preview\":\"//! Module \x01N of the demo project.\\n\\npub fn answer() -> u32 {\\n    42\\n}\",\"truncated\":false,\"loaded\":[],\"display\":{\"type\":\"file\",\"path\":\"%ROOT%/src/module_\x01N.rs\",\"text\":\"//! Module \x01N of the demo project.\\n\\npub fn answer() -> u32 {\\n    42\\n}\",\"lineStart\":1,\"lineEnd\":5,\"totalLines\":5,\"truncated\":false}},\"title\":\"src/module_\x01N.rs\",\"time\":{\"start\":\x01S,\"end\":\x01E}},\"id\":\"\x01P\",\"sessionID\":\"%SES%\",\"messageID\":\"\x01M\"}}\n";
const T_EDIT: &str = "{\"type\":\"tool_use\",\"timestamp\":\x01T,\"sessionID\":\"%SES%\",\"part\":{\"type\":\"tool\",\"tool\":\"edit\",\"callID\":\"call_edit_\x01C\",\"state\":{\"status\":\"completed\",\"input\":{\"filePath\":\"%ROOT%/src/module_\x01N.rs\",\"oldString\":\"    42\",\"newString\":\"    // The answer.\\n    42\"},\"output\":\"Edit applied successfully.\",\"metadata\":{\"diagnostics\":{},\"diff\":\"%DIFF%\",\"filediff\":{\"file\":\"%ROOT%/src/module_\x01N.rs\",\"patch\":\"%DIFF%\",\"additions\":1,\"deletions\":0},\"truncated\":false},\"title\":\"src/module_\x01N.rs\",\"time\":{\"start\":\x01S,\"end\":\x01E}},\"id\":\"\x01P\",\"sessionID\":\"%SES%\",\"messageID\":\"\x01M\"}}\n";
const T_DIFF: &str = "Index: %ROOT%/src/module_\x01N.rs\\n===================================================================\\n--- %ROOT%/src/module_\x01N.rs\\n+++ %ROOT%/src/module_\x01N.rs\\n@@ -1,5 +1,6 @@\\n //! Module \x01N of the demo project.\\n \\n pub fn answer() -> u32 {\\n+    // The answer.\\n     42\\n }\\n";
const T_BASH: &str = "{\"type\":\"tool_use\",\"timestamp\":\x01T,\"sessionID\":\"%SES%\",\"part\":{\"type\":\"tool\",\"tool\":\"bash\",\"callID\":\"call_bash_\x01C\",\"state\":{\"status\":\"completed\",\"input\":{\"command\":\"cargo test -q module_\x01N\"},\"output\":\"%OUT%\",\"metadata\":{\"output\":\"%OUT%\",\"exit\":0,\"truncated\":false},\"title\":\"cargo test -q module_\x01N\",\"time\":{\"start\":\x01S,\"end\":\x01E}},\"id\":\"\x01P\",\"sessionID\":\"%SES%\",\"messageID\":\"\x01M\"}}\n";
const BASH_OUT: &str = "\\nrunning 3 tests\\n...\\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.01s\\n\\n";
const T_BASH_BIG: &str = "{\"type\":\"tool_use\",\"timestamp\":\x01T,\"sessionID\":\"%SES%\",\"part\":{\"type\":\"tool\",\"tool\":\"bash\",\"callID\":\"call_bash_\x01C\",\"state\":{\"status\":\"completed\",\"input\":{\"command\":\"cargo build -vv 2>&1\"},\"output\":\"\x01B\",\"metadata\":{\"output\":\"\x01B\",\"exit\":0,\"truncated\":false},\"title\":\"cargo build -vv 2>&1\",\"time\":{\"start\":\x01S,\"end\":\x01E}},\"id\":\"\x01P\",\"sessionID\":\"%SES%\",\"messageID\":\"\x01M\"}}\n";
const T_FINISH: &str = "{\"type\":\"step_finish\",\"timestamp\":\x01T,\"sessionID\":\"%SES%\",\"part\":{\"id\":\"\x01P\",\"reason\":\"%REASON%\",\"snapshot\":\"%SNAP%\",\"messageID\":\"\x01M\",\"sessionID\":\"%SES%\",\"type\":\"step-finish\",\"tokens\":{\"total\":\x01a,\"input\":\x01i,\"output\":\x01o,\"reasoning\":0,\"cache\":{\"write\":0,\"read\":\x01r}},\"cost\":\x01$}}\n";
const TEXTS: &[&str] = &[
    "I'll read the module first.",
    "Now I'll make the edit and run the tests.",
    "The tests pass. Let me look at the next module.",
    "Checking the build output for warnings before moving on.",
];

struct Template {
    lits: Vec<Vec<u8>>,
    holes: Vec<u8>,
}

impl Template {
    fn new(src: &str, root_json: &str, reason: &str) -> Template {
        let src = src
            .replace("%DIFF%", T_DIFF)
            .replace("%OUT%", BASH_OUT)
            .replace("%ROOT%", root_json)
            .replace("%SES%", SES)
            .replace("%SNAP%", SNAP)
            .replace("%REASON%", reason);
        let mut lits = vec![Vec::new()];
        let mut holes = Vec::new();
        let mut it = src.bytes();
        while let Some(b) = it.next() {
            if b == 1 {
                holes.push(it.next().expect("hole code"));
                lits.push(Vec::new());
            } else {
                lits.last_mut().expect("lit").push(b);
            }
        }
        Template { lits, holes }
    }
}

struct Gen {
    buf: Vec<u8>,
    big: Vec<u8>,
    ts: u64,
    part: u64,
    msg: u64,
    call: u64,
    file_n: u64,
    step: u64,
    text_i: usize,
}

fn push_dec(buf: &mut Vec<u8>, mut v: u64) {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    buf.extend_from_slice(&tmp[i..]);
}

fn push_id(buf: &mut Vec<u8>, prefix: &[u8], mut v: u64) {
    let mut tmp = [0u8; 12];
    for d in tmp.iter_mut().rev() {
        *d = HEX[(v & 15) as usize];
        v >>= 4;
    }
    buf.extend_from_slice(prefix);
    buf.extend_from_slice(&tmp);
    buf.extend_from_slice(ID_SUFFIX);
}

impl Gen {
    fn line(&mut self, t: &Template) {
        self.ts += 3;
        let step = self.step;
        let tok_in = 1500 + (step * 37) % 900;
        let tok_out = 40 + (step * 13) % 300;
        let tok_cache = ((step * 7) % 5) * 400;
        for (lit, &hole) in t.lits.iter().zip(&t.holes) {
            self.buf.extend_from_slice(lit);
            match hole {
                b'T' => push_dec(&mut self.buf, self.ts),
                b'S' => push_dec(&mut self.buf, self.ts - 41),
                b'E' => push_dec(&mut self.buf, self.ts - 6),
                b'P' => {
                    self.part += 1;
                    push_id(
                        &mut self.buf,
                        b"prt_",
                        0x2016_1603_9001 + self.part * 0x1000,
                    );
                }
                b'M' => push_id(
                    &mut self.buf,
                    b"msg_",
                    0x2016_15bc_b001 + self.msg * 0x10_0000,
                ),
                b'C' => push_dec(&mut self.buf, self.call),
                b'N' => {
                    let n = self.file_n % 1000;
                    self.buf.extend_from_slice(&[
                        b'0' + (n / 100) as u8,
                        b'0' + (n / 10 % 10) as u8,
                        b'0' + (n % 10) as u8,
                    ]);
                }
                b'X' => {
                    self.buf
                        .extend_from_slice(TEXTS[self.text_i % TEXTS.len()].as_bytes());
                    self.text_i += 1;
                }
                b'a' => push_dec(&mut self.buf, tok_in + tok_out + tok_cache),
                b'i' => push_dec(&mut self.buf, tok_in),
                b'o' => push_dec(&mut self.buf, tok_out),
                b'r' => push_dec(&mut self.buf, tok_cache),
                b'$' => {
                    // USD with 3/15/0.3 per million tokens, in nano-dollars.
                    let nanos = tok_in * 3000 + tok_out * 15000 + tok_cache * 300;
                    push_dec(&mut self.buf, nanos / 1_000_000_000);
                    let frac = nanos % 1_000_000_000;
                    if frac != 0 {
                        let mut digits = [0u8; 9];
                        fill_digits(&mut digits, frac);
                        let len = 9 - digits.iter().rev().take_while(|&&d| d == b'0').count();
                        self.buf.push(b'.');
                        self.buf.extend_from_slice(&digits[..len]);
                    }
                }
                b'B' => self.buf.extend_from_slice(&self.big),
                other => unreachable!("hole {other}"),
            }
        }
        self.buf.extend_from_slice(t.lits.last().expect("lit"));
        if self.buf.len() >= FLUSH_AT {
            emit_or_exit(1, &self.buf);
            self.buf.clear();
        }
    }
}

/// `bytes` bytes of build-log-like text, JSON-escaped (without quotes).
fn big_output(bytes: usize) -> Vec<u8> {
    let mut raw = String::with_capacity(bytes + 128);
    let mut i = 0u32;
    while raw.len() < bytes {
        raw.push_str(&format!(
            "   Compiling crate_{i:05} v0.1.{} (/home/dev/.cargo/registry/src/crate_{i:05})\n\trunning `rustc --crate-name crate_{i:05} --edition=2021 \"src/lib.rs\"`\n",
            i % 10
        ));
        i += 1;
    }
    raw.truncate(bytes);
    let json = serde_json::to_string(&raw).expect("string");
    json.as_bytes()[1..json.len() - 1].to_vec()
}

fn run_generate(ctx: &Ctx, n: u64, big_every: u64, big_bytes: usize) -> ! {
    let root = serde_json::to_string(&ctx.cwd).expect("string");
    let root = &root[1..root.len() - 1];
    let mk = |src: &str, reason: &str| Template::new(src, root, reason);
    let (t_start, t_text) = (mk(T_STEP_START, ""), mk(T_TEXT, ""));
    let tools = [mk(T_READ, ""), mk(T_EDIT, ""), mk(T_BASH, "")];
    let t_big = mk(T_BASH_BIG, "");
    let (t_calls, t_stop) = (mk(T_FINISH, "tool-calls"), mk(T_FINISH, "stop"));
    let mut g = Gen {
        buf: Vec::with_capacity(FLUSH_AT + 2 * big_bytes + 64 * 1024),
        big: if big_every > 0 {
            big_output(big_bytes)
        } else {
            Vec::new()
        },
        ts: realtime_ns() / 1_000_000,
        part: 0,
        msg: 0,
        call: 0,
        file_n: 0,
        step: 0,
        text_i: 0,
    };
    let mut tool_lines = 0u64;
    let mut rest = n;
    if rest < 3 {
        if rest == 2 {
            g.line(&t_start);
        }
        if rest >= 1 {
            g.line(&t_stop);
        }
    } else {
        // Middle steps of 3 + k lines; the final step needs at least 3 lines.
        while rest >= 7 {
            let k = (2 + g.step % 2).min(rest - 6);
            g.line(&t_start);
            g.line(&t_text);
            for _ in 0..k {
                tool_lines += 1;
                g.call += 1;
                if big_every > 0 && tool_lines.is_multiple_of(big_every) {
                    g.line(&t_big);
                } else {
                    g.line(&tools[((tool_lines - 1) % 3) as usize]);
                }
            }
            g.line(&t_calls);
            rest -= k + 3;
            g.step += 1;
            g.msg += 1;
            g.file_n += 1;
        }
        g.line(&t_start);
        for _ in 0..rest - 2 {
            g.line(&t_text);
        }
        g.line(&t_stop);
    }
    emit_or_exit(1, &g.buf);
    std::process::exit(0);
}

// ---------------------------------------------------------------- mode D: paced

fn run_paced(n: u64, interval_ms: u64) -> ! {
    let ses = SES.as_bytes();
    let mut line = Vec::with_capacity(512);
    let now_ms = realtime_ns() / 1_000_000;
    let mut start = format!(
        "{{\"type\":\"step_start\",\"timestamp\":{now_ms},\"sessionID\":\"{SES}\",\"part\":{{\"id\":\""
    )
    .into_bytes();
    push_id(&mut start, b"prt_", 0x2016_1603_9001);
    start.extend_from_slice(b"\",\"messageID\":\"");
    push_id(&mut start, b"msg_", 0x2016_15bc_b001);
    start.extend_from_slice(
        format!("\",\"sessionID\":\"{SES}\",\"snapshot\":\"{SNAP}\",\"type\":\"step-start\"}}}}\n")
            .as_bytes(),
    );
    emit_or_exit(1, &start);

    let interval = Duration::from_millis(interval_ms);
    let mut deadline = Instant::now();
    for i in 0..n {
        deadline += interval;
        let now = Instant::now();
        if deadline > now {
            std::thread::sleep(deadline - now);
        } else if now - deadline > interval {
            deadline = now; // fell behind (blocked write): do not burst to catch up
        }
        // Fixed-width slots, patched in right before write(2).
        line.clear();
        line.extend_from_slice(b"{\"type\":\"text\",\"timestamp\":");
        let ts_at = line.len();
        line.extend_from_slice(b"0000000000000,\"sessionID\":\"");
        line.extend_from_slice(ses);
        line.extend_from_slice(b"\",\"part\":{\"id\":\"");
        push_id(&mut line, b"prt_", 0x2016_1603_9001 + (i + 1) * 0x1000);
        line.extend_from_slice(b"\",\"messageID\":\"");
        push_id(&mut line, b"msg_", 0x2016_15bc_b001);
        line.extend_from_slice(b"\",\"sessionID\":\"");
        line.extend_from_slice(ses);
        line.extend_from_slice(b"\",\"type\":\"text\",\"text\":\"t_ns=");
        let ns_at = line.len();
        line.extend_from_slice(b"0000000000000000000\",\"time\":{\"start\":");
        let start_at = line.len();
        line.extend_from_slice(b"0000000000000,\"end\":");
        let end_at = line.len();
        line.extend_from_slice(b"0000000000000}}}\n");

        let ns = realtime_ns();
        fill_digits(&mut line[ns_at..ns_at + 19], ns);
        let ms = ns / 1_000_000;
        fill_digits(&mut line[ts_at..ts_at + 13], ms);
        fill_digits(&mut line[start_at..start_at + 13], ms);
        fill_digits(&mut line[end_at..end_at + 13], ms);
        emit_or_exit(1, &line);
    }

    let now_ms = realtime_ns() / 1_000_000;
    let mut fin = format!(
        "{{\"type\":\"step_finish\",\"timestamp\":{now_ms},\"sessionID\":\"{SES}\",\"part\":{{\"id\":\""
    )
    .into_bytes();
    push_id(&mut fin, b"prt_", 0x2016_1603_9001 + (n + 1) * 0x1000);
    fin.extend_from_slice(
        format!("\",\"reason\":\"stop\",\"snapshot\":\"{SNAP}\",\"messageID\":\"").as_bytes(),
    );
    push_id(&mut fin, b"msg_", 0x2016_15bc_b001);
    fin.extend_from_slice(
        format!("\",\"sessionID\":\"{SES}\",\"type\":\"step-finish\",\"tokens\":{{\"total\":1540,\"input\":1500,\"output\":40,\"reasoning\":0,\"cache\":{{\"write\":0,\"read\":0}}}},\"cost\":0.0051}}}}\n")
            .as_bytes(),
    );
    emit_or_exit(1, &fin);
    std::process::exit(0);
}

/// Right-aligned zero-padded decimal into a fixed-width slot.
fn fill_digits(slot: &mut [u8], mut v: u64) {
    for d in slot.iter_mut().rev() {
        *d = b'0' + (v % 10) as u8;
        v /= 10;
    }
}
