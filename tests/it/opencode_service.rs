//! Once runbook stops an OpenCode run -- its `--timeout`, `--max-cost`, the inactivity watchdog,
//! loop detection or Ctrl-C -- no model request may reach the provider after runbook exits, and
//! no process of the run may be left. For each OpenCode: 1.18.33 and 2.1.2, native and over ACP,
//! and OpenCode 2 handing the run's work to its background service (`opencode serve --service`,
//! detached, outliving the `opencode run` runbook starts), which is already running for every
//! OpenCode 2 run here.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use runbook::event::Outcome;
use serde_json::json;

use crate::support::fake_llm::{self, FakeLlm, OpencodeConfig, Reply, ToolCall, Usage};
use crate::support::{self, TestContext};

/// Steps of the slow task before its answer, each a tool call of a few seconds.
const STEPS: usize = 8;
/// How long after runbook exits the provider is watched for more requests.
const AFTER: Duration = Duration::from_secs(8);
/// The watchdog's timeout (s); a stalled tool sleeps it and [`AFTER`] less a margin, so that
/// the request that follows a stalled tool still running after the stop comes within the watch.
const WATCHDOG: u64 = 4;
const STALL: u64 = WATCHDOG + 7;
/// Each step of the budget's task costs $0.0315 (10,000 tokens in, 100 out at the fake model's
/// prices): the budget is crossed at the second step.
const BUDGET: &str = "0.05";
const PROMPT: &str = "Run the slow steps, one after the other.";

/// An OpenCode the stops are tried with.
#[derive(Clone, Copy, PartialEq)]
enum Agent {
    /// OpenCode 2's `opencode run` as runbook starts it (`--standalone`).
    V2,
    /// OpenCode 2's `opencode run` through a wrapper that drops `--standalone`: the run's work
    /// goes on in the background service.
    V2Handed,
    /// OpenCode 2's `opencode acp`.
    V2Acp,
    /// OpenCode 1.18.33's `opencode run`.
    V1,
    /// OpenCode 1.18.33's `opencode acp`.
    V1Acp,
}

impl Agent {
    fn v2(self) -> bool {
        matches!(self, Agent::V2 | Agent::V2Handed | Agent::V2Acp)
    }

    fn flags(self) -> &'static [&'static str] {
        match self {
            Agent::V2Acp | Agent::V1Acp => &["--via", "acp"],
            _ => &[],
        }
    }

    /// A shell command as this OpenCode's model calls it.
    fn shell(self, id: &str, command: &str) -> ToolCall {
        if self.v2() {
            ToolCall::new(id, "shell", json!({"command": command}))
        } else {
            let args = json!({"command": command, "description": "Run it"});
            ToolCall::new(id, "bash", args)
        }
    }

    /// The task: `STEPS` steps running the commands `command(i)` makes, then the answer.
    fn task(self, usage: Usage, command: impl Fn(usize) -> String) -> Vec<Reply> {
        self.steps(STEPS, usage, command)
    }

    /// The task with `steps` steps.
    fn steps(self, steps: usize, usage: Usage, command: impl Fn(usize) -> String) -> Vec<Reply> {
        (0..steps)
            .map(|i| {
                let call = self.shell(&format!("call_{i}"), &command(i));
                Reply::tool_calls(None, vec![call], usage)
            })
            .chain([Reply::text("All steps done.", Usage::new(1000, 10))])
            .collect()
    }
}

/// How runbook stops the run.
#[derive(Clone, Copy)]
enum Stop {
    Timeout,
    Budget,
    Watchdog,
    Loop,
    CtrlC,
}

impl Stop {
    /// What the provider plays: steps that run long enough for the stop to come mid-run.
    fn script(self, agent: Agent) -> Vec<Reply> {
        let usage = Usage::new(1000, 20);
        match self {
            // Eight steps of 4 s: the work outlasts the timeout, which leaves a loaded machine
            // time to start OpenCode (OpenCode 1 takes 20 s there) and ask the model.
            Stop::Timeout => agent.task(usage, |i| format!("sleep 4; echo step-{i}")),
            Stop::CtrlC => agent.task(usage, |i| format!("sleep 2; echo step-{i}")),
            Stop::Budget => agent.task(Usage::new(10_000, 100), |i| {
                format!("sleep 1; echo step-{i}")
            }),
            // Twice as many stalls: OpenCode 1's ACP session keeps its main thread above the
            // watchdog's 20% of a core for a minute or more on a loaded machine, which is
            // activity; the stop comes at the first stall after it settles.
            Stop::Watchdog => agent.steps(2 * STEPS, usage, |i| {
                format!("sleep {STALL}; echo step-{i}")
            }),
            Stop::Loop => agent.task(usage, |_| "sleep 1; echo again".to_owned()),
        }
    }

    fn flags(self) -> Vec<String> {
        let watchdog = format!("{WATCHDOG}s");
        let flags = match self {
            Stop::Timeout => vec!["--timeout", "30s"],
            Stop::Budget => vec!["--max-cost", BUDGET],
            Stop::Watchdog => vec!["--inactivity-timeout", &watchdog, "--kill-grace", "2s"],
            Stop::Loop | Stop::CtrlC => vec![],
        };
        flags.into_iter().map(str::to_owned).collect()
    }

    fn outcome(self) -> Outcome {
        match self {
            Stop::Timeout => Outcome::TimedOut,
            Stop::Budget => Outcome::BudgetExceeded,
            Stop::Watchdog => Outcome::Hung,
            Stop::Loop => Outcome::Stuck,
            Stop::CtrlC => Outcome::Interrupted,
        }
    }
}

/// A work dir for one OpenCode against the fake provider, OpenCode 2's service running in its
/// home.
struct Service {
    ctx: TestContext,
    llm: FakeLlm,
    /// The OpenCode itself.
    opencode: PathBuf,
    /// What runbook starts for it: the OpenCode, or the wrapper.
    bin: PathBuf,
    agent: Agent,
}

impl Service {
    /// `None` when real-agent tests are skipped.
    fn running(agent: Agent, llm: FakeLlm) -> Option<Service> {
        let opencode = if agent.v2() {
            support::opencode_v2_bin("2.1.2")?
        } else {
            support::opencode_bin()?
        };
        let mut ctx = TestContext::new();
        if agent.v2() {
            let config = OpencodeConfig::default();
            fake_llm::write_opencode_config(&ctx.work, &llm.base_url(), &config)
                .expect("opencode.json");
            for (k, v) in fake_llm::opencode_env(&ctx.home) {
                ctx.env(&k, v);
            }
        } else {
            fake_llm::opencode_against(&mut ctx, &llm.base_url(), &OpencodeConfig::default());
        }
        support::git_init(&ctx.work, &ctx.home);
        if agent.v2() {
            own_service_port(&ctx.home);
        }
        let bin = match agent {
            Agent::V2Handed => without_standalone(&ctx, &opencode),
            _ => opencode.clone(),
        };
        let service = Service {
            ctx,
            llm,
            opencode,
            bin,
            agent,
        };
        if agent.v2() {
            service.start_service();
        }
        Some(service)
    }

    /// Starts OpenCode 2's background service (`opencode debug config` does).
    fn start_service(&self) {
        let status = self
            .opencode(&["debug", "config"])
            .stdout(Stdio::null())
            .status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "opencode debug config failed"
        );
        let state = self
            .service_state()
            .expect("OpenCode 2 started no background service");
        let config = self.ctx.home.join(".config/opencode/service.json");
        let port = std::fs::read_to_string(config).expect("the service's config");
        let port: serde_json::Value = serde_json::from_str(&port).expect("JSON");
        let url = format!("http://127.0.0.1:{}", port["port"]);
        assert_eq!(
            state["url"],
            url.as_str(),
            "the service is not on its own port"
        );
    }

    /// `opencode ARGS` in the work dir with OpenCode's offline environment.
    fn opencode(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.opencode);
        cmd.args(args).current_dir(&self.ctx.work).env_clear();
        cmd.envs(fake_llm::opencode_env(&self.ctx.home));
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        cmd
    }

    /// The service's state file (its pid and URL).
    fn service_state(&self) -> Option<serde_json::Value> {
        let state = self.ctx.home.join(".local/state/opencode/service.json");
        let text = std::fs::read_to_string(state).ok()?;
        serde_json::from_str(&text).ok()
    }

    /// The service's pid, from its state file.
    fn service_pid(&self) -> Option<u32> {
        let value = self.service_state()?;
        value["pid"].as_u64().and_then(|p| u32::try_from(p).ok())
    }

    /// `runbook run` of the OpenCode on the slow task, with `flags`.
    fn start(&self, flags: &[String]) -> Child {
        let bin = self.bin.to_str().expect("UTF-8 path");
        let mut args = vec!["run", "--agent-bin", bin, "-m", "fake/fake-model"];
        args.extend_from_slice(self.agent.flags());
        args.extend(flags.iter().map(String::as_str));
        args.push(PROMPT);
        self.ctx
            .runbook(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start runbook")
    }

    /// Waits for runbook to exit, which must have ended the run as `outcome`, then [`AFTER`]:
    /// no model request may have come after its exit, and no process of the run may be left
    /// but the service itself.
    fn assert_work_stopped(&self, child: Child, outcome: Outcome) {
        let out = child.wait_with_output().expect("runbook's exit");
        let at_exit = self.llm.main_requests().len();
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let receipt = self.ctx.receipt();
        assert_eq!(receipt.outcome, outcome, "{}\n{stderr}", receipt.message);
        assert!(
            at_exit >= 1,
            "the run was stopped before OpenCode asked the model anything:\n{stderr}"
        );
        std::thread::sleep(AFTER);
        let after = self.llm.main_requests().len();
        assert_eq!(
            after,
            at_exit,
            "{} model requests reached the provider after runbook exited ({at_exit} before):\n{stderr}",
            after - at_exit
        );
        let left = processes_with_home(&self.ctx.home, self.service_pid());
        assert!(left.is_empty(), "processes of the run left: {left:?}");
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        if self.agent.v2() {
            let _ = self.opencode(&["service", "stop"]).status();
        }
        for (pid, _) in processes_with_home(&self.ctx.home, None) {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Gives the service in `home` a port of its own (its config's `port`; by default every
/// OpenCode 2 service listens on 49374), so that the tests' services run side by side.
fn own_service_port(home: &Path) {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port();
    let dir = home.join(".config/opencode");
    std::fs::create_dir_all(&dir).expect("OpenCode's config dir");
    std::fs::write(
        dir.join("service.json"),
        json!({ "port": port }).to_string(),
    )
    .expect("the service's config");
}

/// A wrapper that runs `opencode` without `--standalone`, as a user's own wrapper may.
fn without_standalone(ctx: &TestContext, opencode: &Path) -> PathBuf {
    let body = format!(
        "for a; do shift; [ \"$a\" = --standalone ] || set -- \"$@\" \"$a\"; done\nexec '{}' \"$@\"",
        opencode.display()
    );
    PathBuf::from(ctx.agent_script("opencode", &body))
}

/// Processes (pid and command line) whose environment has `HOME=home`, but `except`.
fn processes_with_home(home: &Path, except: Option<u32>) -> Vec<(u32, String)> {
    let want = format!("HOME={}", home.display());
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        if Some(pid) == except {
            continue;
        }
        let Ok(environ) = std::fs::read(entry.path().join("environ")) else {
            continue;
        };
        if environ.split(|&b| b == 0).any(|v| v == want.as_bytes()) {
            let cmd = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
            found.push((pid, String::from_utf8_lossy(&cmd).replace('\0', " ")));
        }
    }
    found
}

/// Waits until the provider got `n` main requests, or fails.
fn wait_for_requests(llm: &FakeLlm, n: usize) {
    let start = Instant::now();
    assert!(
        llm.wait_for_main_requests(n, Duration::from_secs(90)),
        "OpenCode made fewer than {n} model requests in {:?}",
        start.elapsed()
    );
}

/// Sends SIGINT to runbook, as Ctrl-C does.
fn ctrl_c(child: &Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).expect("SIGINT to runbook");
}

/// `agent` on a task `stop` stops: nothing of it goes on once runbook has exited.
fn assert_stopped(agent: Agent, stop: Stop) {
    let llm = FakeLlm::start(stop.script(agent));
    let Some(svc) = Service::running(agent, llm) else {
        return;
    };
    let child = svc.start(&stop.flags());
    if let Stop::CtrlC = stop {
        wait_for_requests(&svc.llm, 2);
        ctrl_c(&child);
    }
    svc.assert_work_stopped(child, stop.outcome());
}

/// Ctrl-C while `agent`'s subagent works: the subagent's session makes no model request after
/// runbook exits either (in the service, interrupting the parent session interrupts its child).
fn assert_subagent_stopped(agent: Agent) {
    let task = json!({"agent": "general", "description": "Run the steps", "prompt": PROMPT});
    let call = ToolCall::new("call_sub", "subagent", task);
    let script = vec![
        Reply::tool_calls(None, vec![call], Usage::new(1000, 20)),
        Reply::text("All steps done.", Usage::new(1000, 10)),
    ];
    let steps = agent.task(Usage::new(1000, 20), |i| format!("sleep 2; echo sub-{i}"));
    let llm = FakeLlm::start_with_subagent(script, steps);
    let Some(svc) = Service::running(agent, llm) else {
        return;
    };
    let child = svc.start(&[]);
    // The parent's request, then two of the subagent's.
    wait_for_requests(&svc.llm, 3);
    ctrl_c(&child);
    svc.assert_work_stopped(child, Outcome::Interrupted);
}

/// The five stops for one OpenCode, in a module of its own. The timeout, the budget and the
/// watchdog race the OpenCode's own pace (its start-up must reach the model before the timeout,
/// its usage arrive mid-prompt, its start-up not be starved below the watchdog's share of a
/// core): they are retried as such (`agent_timing_`, docs/TESTING.md).
macro_rules! stops {
    ($module:ident, $agent:expr) => {
        mod $module {
            use super::{Agent, Stop, assert_stopped};

            #[test]
            fn agent_timing_timeout() {
                assert_stopped($agent, Stop::Timeout);
            }

            #[test]
            fn agent_timing_budget() {
                assert_stopped($agent, Stop::Budget);
            }

            #[test]
            fn agent_timing_watchdog() {
                assert_stopped($agent, Stop::Watchdog);
            }

            #[test]
            fn loop_detection() {
                assert_stopped($agent, Stop::Loop);
            }

            #[test]
            fn ctrl_c() {
                assert_stopped($agent, Stop::CtrlC);
            }
        }
    };
}

stops!(opencode2, Agent::V2);
stops!(opencode2_handed_to_its_service, Agent::V2Handed);
stops!(opencode2_acp, Agent::V2Acp);
stops!(opencode1, Agent::V1);
stops!(opencode1_acp, Agent::V1Acp);

#[test]
fn opencode2_subagent_stops_with_its_parent() {
    assert_subagent_stopped(Agent::V2);
}

#[test]
fn opencode2_handed_to_its_service_subagent_stops_with_its_parent() {
    assert_subagent_stopped(Agent::V2Handed);
}
