//! Test support: a pinned environment for running the real `runbook` binary, the fake agent, and
//! readers for what a run leaves behind.
#![allow(
    dead_code,
    reason = "each test module uses a different part of the support"
)]

pub mod browser;
pub mod fake_anthropic;
pub mod fake_llm;
pub mod fake_responses;
pub mod pty;
pub mod s3;
pub mod sse;

use std::io::Read;
use std::os::unix::fs::PermissionsExt as _;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::thread;
use std::time::{Duration, Instant};

use runbook::event::Event;
use runbook::receipt::Receipt;

/// How long a `runbook` command, or a run of the fake agent, may take before the test fails.
const RUN_LIMIT: Duration = Duration::from_secs(60);
/// How long a run of a scripted `--agent-cmd` agent may take: as long as any run, for the million
/// lines of `faults_known` take 20 s on a loaded machine.
const AGENT_CMD_LIMIT: Duration = RUN_LIMIT;

/// The `runbook` binary under test; `RUNBOOK_TEST_RUNBOOK` names another build of it.
pub fn runbook_bin() -> PathBuf {
    std::env::var_os("RUNBOOK_TEST_RUNBOOK").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_runbook")),
        PathBuf::from,
    )
}

/// The fake agent (tests/support/fake_agent.rs).
pub fn fake_agent_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_fake-agent"))
}

/// The project's fixtures directory.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The real OpenCode CLI, installed by `.ci/install-agents` into `.agents/`, or named by
/// `RUNBOOK_TEST_OPENCODE`. Missing is a failure, not a skip: set `RUNBOOK_SKIP_REAL_AGENTS=1` to
/// opt out explicitly (never in CI).
pub fn opencode_bin() -> Option<PathBuf> {
    real_agent_bin("opencode", "OpenCode", "RUNBOOK_TEST_OPENCODE")
}

/// The real Claude Code CLI, like [`opencode_bin`]; `RUNBOOK_TEST_CLAUDE` names another one.
pub fn claude_bin() -> Option<PathBuf> {
    real_agent_bin("claude", "Claude Code", "RUNBOOK_TEST_CLAUDE")
}

/// The newer Claude Code release runbook is also tested with (2.1.330, installed beside the
/// pinned one by `.ci/install-agents`), like [`opencode_bin`]; `RUNBOOK_TEST_CLAUDE_NEXT` names
/// another one.
pub fn claude_next_bin() -> Option<PathBuf> {
    real_agent_bin_at(
        ".agents/claude-2.1.330/node_modules/.bin/claude",
        "Claude Code 2.1.330",
        "RUNBOOK_TEST_CLAUDE_NEXT",
    )
}

/// Claude Code `version`, installed beside the pinned one by `.ci/install-agents` into
/// `.agents/claude-VERSION`, like [`opencode_bin`].
pub fn claude_release_bin(version: &str) -> Option<PathBuf> {
    real_agent_bin_at(
        &format!(".agents/claude-{version}/node_modules/.bin/claude"),
        &format!("Claude Code {version}"),
        "RUNBOOK_TEST_CLAUDE_LATEST",
    )
}

/// Codex `version`, installed beside the pinned one by `.ci/install-agents` into
/// `.agents/codex-VERSION`, like [`opencode_bin`].
pub fn codex_release_bin(version: &str) -> Option<PathBuf> {
    real_agent_bin_at(
        &format!(".agents/codex-{version}/node_modules/.bin/codex"),
        &format!("Codex {version}"),
        "RUNBOOK_TEST_CODEX_LATEST",
    )
}

/// OpenCode 2 (`@opencode/cli` `version`), installed beside 1.x by `.ci/install-agents` into
/// `.agents/opencode-VERSION`, like [`opencode_bin`]; `RUNBOOK_TEST_OPENCODE_V2` names another.
pub fn opencode_v2_bin(version: &str) -> Option<PathBuf> {
    real_agent_bin_at(
        &format!(".agents/opencode-{version}/node_modules/.bin/opencode"),
        &format!("OpenCode {version}"),
        "RUNBOOK_TEST_OPENCODE_V2",
    )
}

/// The real Codex CLI, like [`opencode_bin`]; `RUNBOOK_TEST_CODEX` names another one.
pub fn codex_bin() -> Option<PathBuf> {
    real_agent_bin("codex", "Codex", "RUNBOOK_TEST_CODEX")
}

thread_local! {
    /// Whether [`pinned`] is running on this thread.
    static PINNED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with the pinned agent CLIs (those `.ci/install-agents` puts in `.agents`), whatever
/// `RUNBOOK_TEST_*` name: the drift check compares the agents they name with these.
pub fn pinned<T>(f: impl FnOnce() -> T) -> T {
    PINNED.with(|p| p.set(true));
    let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
    PINNED.with(|p| p.set(false));
    out.unwrap_or_else(|panic| std::panic::resume_unwind(panic))
}

/// `.agents/node_modules/.bin/NAME`, or the path in `var`; `None` (said loudly) only when
/// `RUNBOOK_SKIP_REAL_AGENTS=1` outside CI, else a missing binary fails the test.
fn real_agent_bin(name: &str, label: &str, var: &str) -> Option<PathBuf> {
    real_agent_bin_at(&format!(".agents/node_modules/.bin/{name}"), label, var)
}

/// [`real_agent_bin`] for a binary at `default` (relative to the crate) unless `var` names one
/// (outside [`pinned`]).
fn real_agent_bin_at(default: &str, label: &str, var: &str) -> Option<PathBuf> {
    let given = std::env::var_os(var).filter(|_| !PINNED.with(std::cell::Cell::get));
    let path = given
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join(default));
    if path.exists() {
        return Some(path);
    }
    let skip = std::env::var_os("RUNBOOK_SKIP_REAL_AGENTS").is_some_and(|v| v == "1");
    assert!(
        skip && std::env::var_os("CI").is_none(),
        "the real {label} CLI is not at {}: run .ci/install-agents (or set RUNBOOK_SKIP_REAL_AGENTS=1 outside CI to skip)",
        path.display()
    );
    #[expect(
        clippy::print_stderr,
        reason = "a skipped real-agent test must say so loudly"
    )]
    {
        eprintln!("SKIPPED: real {label} test (RUNBOOK_SKIP_REAL_AGENTS=1)");
    }
    None
}

/// `BIN ARGS` run directly in `work`, with only `PATH` and `env` in its environment and stdin
/// `/dev/null` (OpenCode and Codex read a piped stdin to its end before they start).
pub fn agent_command(
    bin: &Path,
    work: &Path,
    args: &[String],
    env: &[(String, String)],
) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args)
        .current_dir(work)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(Stdio::null());
    cmd
}

/// What a finished `runbook` process left.
#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
    pub took: Duration,
}

impl Outcome {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }

    /// Fails the test (showing stderr) unless the process exited with `code`.
    #[track_caller]
    pub fn assert_exit(&self, code: i32) -> &Self {
        assert_eq!(self.code(), Some(code), "stderr:\n{}", self.stderr);
        self
    }

    /// Fails the test unless stderr, what a person at the terminal reads, holds `text`.
    #[track_caller]
    pub fn assert_stderr_has(&self, text: &str) -> &Self {
        assert_holds("stderr", &self.stderr, text);
        self
    }

    /// Fails the test unless stdout holds `text`.
    #[track_caller]
    pub fn assert_stdout_has(&self, text: &str) -> &Self {
        assert_holds("stdout", &self.stdout, text);
        self
    }

    /// Fails the test if stdout or stderr holds `text` (a secret).
    #[track_caller]
    pub fn assert_hides(&self, text: &str) -> &Self {
        assert!(
            !self.stdout.contains(text),
            "{text:?} on stdout:\n{}",
            self.stdout
        );
        assert!(
            !self.stderr.contains(text),
            "{text:?} on stderr:\n{}",
            self.stderr
        );
        self
    }
}

#[track_caller]
fn assert_holds(stream: &str, output: &str, text: &str) {
    assert!(output.contains(text), "no {text:?} on {stream}:\n{output}");
}

/// A temporary home, work dir and runs dir, and a `runbook` command pinned to them.
pub struct TestContext {
    pub tmp: tempfile::TempDir,
    /// The agent's working directory.
    pub work: PathBuf,
    pub runs: PathBuf,
    pub home: PathBuf,
    /// Extra environment for runbook (and so the agent).
    pub env: Vec<(String, String)>,
}

impl TestContext {
    pub fn new() -> Self {
        let tmp = tempfile::tempdir().expect("temp dir");
        let root = tmp.path().canonicalize().expect("canonical temp dir");
        let (work, runs, home) = (root.join("work"), root.join("runs"), root.join("home"));
        for d in [&work, &runs, &home] {
            std::fs::create_dir_all(d).expect("create test dirs");
        }
        Self {
            tmp,
            work,
            runs,
            home,
            env: Vec::new(),
        }
    }

    pub fn root(&self) -> &Path {
        self.work.parent().expect("work has a parent")
    }

    /// `XDG_CONFIG_HOME` for runbook: the global configuration file is `runbook/config.toml` in it.
    pub fn config_home(&self) -> PathBuf {
        self.root().join("config")
    }

    /// Writes the global configuration file.
    pub fn write_global_config(&self, toml: &str) -> PathBuf {
        let path = self.config_home().join("runbook").join("config.toml");
        std::fs::create_dir_all(path.parent().unwrap()).expect("create the config dir");
        std::fs::write(&path, toml).expect("write the global config");
        path
    }

    pub fn env(&mut self, key: &str, value: impl Into<String>) -> &mut Self {
        self.env.push((key.to_owned(), value.into()));
        self
    }

    /// `runbook ARGS` with a clean environment: no colour, not a terminal, no CI variable.
    pub fn runbook(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(runbook_bin());
        cmd.args(args)
            .current_dir(&self.work)
            .env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", self.config_home())
            .env("LANG", "C.UTF-8")
            .env("NO_COLOR", "1")
            .env("RUNBOOK_RUNS_DIR", &self.runs)
            .envs(self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null());
        cmd
    }

    /// Runs `runbook ARGS` to its end.
    pub fn run(&self, args: &[&str]) -> Outcome {
        run(&mut self.runbook(args), RUN_LIMIT)
    }

    /// Runs the fake agent playing `scenario` through `runbook run EXTRA…` (see
    /// [`Self::fake_run`]) to its end.
    pub fn run_fake(&self, scenario: &str, extra: &[&str]) -> Outcome {
        run(&mut self.fake_run(scenario, extra), RUN_LIMIT)
    }

    /// A shell script in the test's root (`#!/bin/sh` and `body`), to run as `--agent-cmd`.
    pub fn agent_script(&self, name: &str, body: &str) -> String {
        let path = self.root().join(name);
        std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write the agent script");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        path.to_str().expect("a UTF-8 temporary path").to_owned()
    }

    /// Like [`Self::agent_script`], for a script that first records its pid in
    /// [`Self::pid_file`], so that [`Self::assert_agent_gone`] can check on it.
    pub fn recorded_agent_script(&self, name: &str, body: &str) -> String {
        let pids = self.pid_file();
        self.agent_script(name, &format!("echo $$ >> '{}'\n{body}", pids.display()))
    }

    /// Runs `runbook run --agent-cmd AGENT ARGS…` to its end.
    pub fn run_agent_cmd(&self, agent: &str, args: &[&str]) -> Outcome {
        let args = [&["run", "--agent-cmd", agent], args].concat();
        run(&mut self.runbook(&args), AGENT_CMD_LIMIT)
    }

    /// Writes a file of the work dir (`runbook.toml`, `.env`, …).
    pub fn write_work(&self, name: &str, contents: impl AsRef<[u8]>) -> PathBuf {
        let path = self.work.join(name);
        std::fs::write(&path, contents).expect("write a file of the work dir");
        path
    }

    /// `runbook run --agent-bin fake-agent --inactivity-timeout 2s --kill-grace 1s PROMPT EXTRA…`
    /// with the fake agent playing `scenario` (NDJSON lines; see tests/support/fake_agent.rs).
    pub fn fake_run(&self, scenario: &str, extra: &[&str]) -> Command {
        let path = self
            .root()
            .join(format!("scenario-{}.ndjson", fastrand_name()));
        std::fs::write(&path, scenario).expect("write scenario");
        let bin = fake_agent_bin();
        let mut args = vec![
            "run",
            "--agent-bin",
            bin.to_str().unwrap(),
            "--inactivity-timeout",
            "2s",
            "--kill-grace",
            "1s",
            "do the thing",
        ];
        args.extend_from_slice(extra);
        let mut cmd = self.runbook(&args);
        cmd.env("FAKE_AGENT_SCENARIO", &path)
            .env("FAKE_AGENT_PID_FILE", self.pid_file());
        cmd
    }

    /// Starts `cmd` in the background and returns once the run's log holds an event of type
    /// `event_type` (the child is killed if that never happens).
    #[expect(clippy::zombie_processes, reason = "the caller waits for the child")]
    pub fn spawn_until(&self, cmd: &mut Command, event_type: &str) -> Child {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn runbook");
        let needle = format!(r#""type":"{event_type}""#);
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let logged = self
                .run_dirs()
                .first()
                .and_then(|d| std::fs::read_to_string(d.join("events.ndjson")).ok());
            if logged.is_some_and(|l| l.contains(&needle)) {
                return child;
            }
            if Instant::now() > until {
                let _ = child.kill();
                let _ = child.wait();
                panic!("no {event_type} event within 20 s");
            }
            thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn pid_file(&self) -> PathBuf {
        self.root().join("agent.pids")
    }

    /// Every run directory, oldest first.
    pub fn run_dirs(&self) -> Vec<PathBuf> {
        let mut dirs: Vec<PathBuf> = std::fs::read_dir(&self.runs)
            .expect("runs dir")
            .map(|e| e.expect("entry").path())
            .collect();
        dirs.sort();
        dirs
    }

    /// The one run directory (panics unless exactly one run happened).
    pub fn run_dir(&self) -> PathBuf {
        let dirs = self.run_dirs();
        assert_eq!(
            dirs.len(),
            1,
            "expected exactly one run dir, found {dirs:?}"
        );
        dirs.into_iter().next().unwrap()
    }

    /// The receipt, read with the schema's strict mirror (unknown fields are an error).
    pub fn receipt(&self) -> Receipt {
        let text = std::fs::read_to_string(self.run_dir().join("result.json"))
            .expect("result.json exists");
        serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("result.json does not match the schema: {e}\n{text}"))
    }

    /// The receipt, which must say the run ended as `outcome`.
    #[track_caller]
    pub fn ended_as(&self, outcome: runbook::event::Outcome) -> Receipt {
        let receipt = self.receipt();
        assert_eq!(receipt.outcome, outcome, "{}", receipt.message);
        receipt
    }

    /// Fails the test if a file of any run directory holds `text` (a secret); returns how many
    /// files were read.
    #[track_caller]
    pub fn assert_no_run_file_holds(&self, text: &str) -> usize {
        let mut files = 0;
        for dir in self.run_dirs() {
            for entry in std::fs::read_dir(&dir).expect("read a run dir") {
                let path = entry.expect("a run dir entry").path();
                let bytes = std::fs::read(&path).expect("read a file of the run");
                files += 1;
                assert!(
                    !String::from_utf8_lossy(&bytes).contains(text),
                    "{text:?} in {}",
                    path.display()
                );
            }
        }
        files
    }

    /// Every logged event, in order.
    pub fn events(&self) -> Vec<Event> {
        parse_events(
            &std::fs::read_to_string(self.run_dir().join("events.ndjson")).expect("events.ndjson"),
        )
    }

    /// Fails the test unless every process the fake agent recorded is gone within 5 s (those left
    /// are killed first).
    #[track_caller]
    pub fn assert_agent_gone(&self) {
        let pids: Vec<i32> = std::fs::read_to_string(self.pid_file())
            .expect("the fake agent's pid file")
            .lines()
            .map(|l| l.trim().parse().expect("a pid a line"))
            .collect();
        assert!(!pids.is_empty(), "the fake agent recorded no pids");
        let left = wait_gone(&pids);
        for &pid in &left {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
        assert!(
            left.is_empty(),
            "agent processes outlived runbook: {left:?}"
        );
    }

    /// The processes the fake agent recorded that are still alive (zombies count as gone).
    pub fn surviving_agent_processes(&self) -> Vec<i32> {
        let Ok(text) = std::fs::read_to_string(self.pid_file()) else {
            return Vec::new();
        };
        text.lines()
            .filter_map(|l| l.trim().parse::<i32>().ok())
            .filter(|&pid| alive(pid))
            .collect()
    }
}

impl Default for TestContext {
    fn default() -> Self {
        Self::new()
    }
}

/// `git init` in `dir` (OpenCode snapshots its work tree with git).
/// Runs `script` in `dir` with git's identity set.
pub fn sh(dir: &Path, script: &str) {
    let ok = Command::new("sh")
        .arg("-c")
        .arg(script)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .status()
        .unwrap()
        .success();
    assert!(ok, "{script}");
}

/// `text` with every `\uXXXX` and `\/` escape decoded (outside strings too), so that a secret
/// spelled with escapes shows up in it.
pub fn unescaped(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find('\\') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let decoded = tail
            .get(2..6)
            .filter(|_| tail[1..].starts_with('u'))
            .and_then(|hex| u32::from_str_radix(hex, 16).ok())
            .and_then(char::from_u32);
        if let Some(c) = decoded {
            out.push(c);
            rest = &tail[6..];
        } else if tail[1..].starts_with('/') {
            out.push('/');
            rest = &tail[2..];
        } else {
            out.push('\\');
            rest = &tail[1..];
        }
    }
    out.push_str(rest);
    out
}

pub fn git_init(dir: &Path, home: &Path) {
    let git = Command::new("git")
        .args(["init", "-q"])
        .current_dir(dir)
        .env("HOME", home)
        .output()
        .expect("run git init");
    assert!(git.status.success(), "git init failed: {git:?}");
}

/// The agent's command line in each turn, in order.
pub fn argvs(events: &[Event]) -> Vec<&Vec<String>> {
    events
        .iter()
        .filter_map(|e| match &e.kind {
            runbook::event::EventKind::TurnStarted { argv, .. } => Some(argv),
            _ => None,
        })
        .collect()
}

/// The events and the closing receipt that `--json` prints.
pub fn events_and_receipt(stdout: &str) -> (Vec<Event>, Receipt) {
    let mut lines: Vec<&str> = stdout.lines().collect();
    let receipt = serde_json::from_str(lines.pop().expect("a receipt line"))
        .expect("the last line is a receipt");
    (parse_events(&lines.join("\n")), receipt)
}

/// Parses NDJSON events strictly: every line must be a whole, valid event.
pub fn parse_events(text: &str) -> Vec<Event> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("bad event line ({e}): {l}")))
        .collect()
}

/// The `type` of each event.
pub fn types(events: &[Event]) -> Vec<&'static str> {
    events.iter().map(|e| e.kind.type_name()).collect()
}

/// Whether a process exists and is not a zombie.
pub fn alive(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat
            .rsplit_once(')')
            .is_some_and(|(_, rest)| !rest.trim_start().starts_with('Z')),
        Err(_) => false,
    }
}

/// What the agent said in turn `index` (0 is the task's), each text in order.
pub fn texts_of_turn(events: &[Event], index: u32) -> Vec<&str> {
    events
        .iter()
        .filter(|e| e.turn.index == index)
        .filter_map(|e| match &e.kind {
            runbook::event::EventKind::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

/// Waits (up to 5 s) for the given processes to be gone; returns those still alive.
pub fn wait_gone(pids: &[i32]) -> Vec<i32> {
    let until = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<i32> = pids.iter().copied().filter(|&p| alive(p)).collect();
        if left.is_empty() || Instant::now() > until {
            return left;
        }
        thread::sleep(Duration::from_millis(20));
    }
}

/// Once `ready` holds (it must within `within`, or the test fails saying `never`), sends the
/// running runbook Ctrl-C's SIGINT and collects its end (within a minute).
pub fn interrupt_when(
    child: Child,
    within: Duration,
    never: &str,
    ready: impl Fn() -> bool,
) -> Outcome {
    let until = Instant::now() + within;
    while !ready() {
        assert!(Instant::now() < until, "{never}");
        thread::sleep(Duration::from_millis(50));
    }
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(child.id() as i32),
        nix::sys::signal::Signal::SIGINT,
    )
    .expect("SIGINT to runbook");
    finish(child, Duration::from_secs(60))
}

/// Runs a command to its end with a time limit (then kills it and fails the test).
pub fn run(cmd: &mut Command, limit: Duration) -> Outcome {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn runbook");
    finish(child, limit)
}

/// Collects a spawned child's output and status, killing it if it outlives `limit`.
pub fn finish(child: Child, limit: Duration) -> Outcome {
    finish_or_kill(child, limit, |child| {
        let _ = child.kill();
    })
}

/// Runs an agent CLI to its end in its own process group (stdin must be set by the caller); if
/// it outlives `limit`, the whole group is killed and the test fails.
pub fn run_agent(cmd: &mut Command, limit: Duration) -> Outcome {
    let child = cmd
        .process_group(0)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn the agent");
    finish_or_kill(child, limit, |child| kill_group(child.id()))
}

/// Sends SIGKILL to process group `pgid`.
pub fn kill_group(pgid: u32) {
    if let Ok(pgid) = i32::try_from(pgid) {
        let _ = nix::sys::signal::killpg(
            nix::unistd::Pid::from_raw(pgid),
            nix::sys::signal::Signal::SIGKILL,
        );
    }
}

/// Collects a child's output and status; past `limit`, `kill` ends it and the test fails.
fn finish_or_kill(mut child: Child, limit: Duration, kill: impl FnOnce(&mut Child)) -> Outcome {
    let start = Instant::now();
    fn collect(pipe: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
        thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut s);
            }
            s
        })
    }
    let out_t = collect(child.stdout.take());
    let err_t = collect(child.stderr.take());
    let status = loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            break status;
        }
        if start.elapsed() > limit {
            kill(&mut child);
            let _ = child.wait();
            panic!(
                "process {} did not finish within {limit:?}; stdout so far:\n{}\nstderr so far:\n{}",
                child.id(),
                out_t.join().unwrap_or_default(),
                err_t.join().unwrap_or_default()
            );
        }
        thread::sleep(Duration::from_millis(10));
    };
    Outcome {
        status,
        stdout: out_t.join().unwrap(),
        stderr: err_t.join().unwrap(),
        took: start.elapsed(),
    }
}

fn fastrand_name() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}
