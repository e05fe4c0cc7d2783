//! OpenCode 2 hands a run's work to its background service (`opencode serve --service`), which
//! outlives the `opencode run` runbook starts: once runbook stops the run (its `--timeout`,
//! Ctrl-C), no model request may reach the provider. (`opencode acp` runs its work in a private
//! server of its own, in runbook's tree, whether the service runs or not.)

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::support::fake_llm::{self, FakeLlm, OpencodeConfig, Reply, ToolCall, Usage};
use crate::support::{self, TestContext};

/// Shell steps of the slow task, each a few seconds long, before its answer.
const STEPS: usize = 8;
/// How long after runbook exits the provider is watched for more requests.
const AFTER: Duration = Duration::from_secs(8);
const PROMPT: &str = "Run the eight slow steps, one after the other.";

struct Service {
    ctx: TestContext,
    llm: FakeLlm,
    bin: PathBuf,
}

impl Service {
    /// A work dir for OpenCode 2 against the fake provider playing the slow task, with its
    /// background service already running in its own home. `None` when real-agent tests are
    /// skipped.
    fn running() -> Option<Service> {
        let bin = support::opencode_v2_bin("2.1.2")?;
        let mut ctx = TestContext::new();
        let script = (0..STEPS)
            .map(|i| {
                let call = ToolCall::new(
                    &format!("call_{i}"),
                    "shell",
                    json!({"command": format!("sleep 3; echo step-{i}")}),
                );
                Reply::tool_calls(None, vec![call], Usage::new(1000, 20))
            })
            .chain([Reply::text("All steps done.", Usage::new(1000, 10))])
            .collect();
        let llm = FakeLlm::start(script);
        fake_llm::write_opencode_config(&ctx.work, &llm.base_url(), &OpencodeConfig::default())
            .expect("opencode.json");
        for (k, v) in fake_llm::opencode_env(&ctx.home) {
            ctx.env(&k, v);
        }
        support::git_init(&ctx.work, &ctx.home);
        let service = Service { ctx, llm, bin };
        let status = service
            .opencode(&["debug", "config"])
            .stdout(Stdio::null())
            .status();
        assert!(
            status.is_ok_and(|s| s.success()),
            "opencode debug config failed"
        );
        assert!(
            service.service_pid().is_some(),
            "OpenCode 2 started no background service"
        );
        Some(service)
    }

    /// `opencode ARGS` in the work dir with OpenCode's offline environment.
    fn opencode(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(&self.bin);
        cmd.args(args).current_dir(&self.ctx.work).env_clear();
        cmd.envs(fake_llm::opencode_env(&self.ctx.home));
        if let Some(path) = std::env::var_os("PATH") {
            cmd.env("PATH", path);
        }
        cmd
    }

    /// The service's pid, from its state file.
    fn service_pid(&self) -> Option<u32> {
        let state = self.ctx.home.join(".local/state/opencode/service.json");
        let text = std::fs::read_to_string(state).ok()?;
        let value: serde_json::Value = serde_json::from_str(&text).ok()?;
        value["pid"].as_u64().and_then(|p| u32::try_from(p).ok())
    }

    /// `runbook run` of OpenCode 2 on the slow task, with `flags`.
    fn start(&self, flags: &[&str]) -> Child {
        let bin = self.bin.to_str().expect("UTF-8 path");
        let mut args = vec!["run", "--agent-bin", bin, "-m", "fake/fake-model"];
        args.extend_from_slice(flags);
        args.push(PROMPT);
        self.ctx
            .runbook(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start runbook")
    }

    /// Waits for runbook to exit, then that long again: no model request may have come after
    /// its exit, and no process of the run may be left but the service itself.
    fn assert_work_stopped(&self, child: Child) {
        let out = child.wait_with_output().expect("runbook's exit");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        let at_exit = self.llm.main_requests().len();
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
        let _ = self.opencode(&["service", "stop"]).status();
        if let Some(pid) = self.service_pid() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid as i32),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
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

#[test]
fn opencode2_timeout_stops_work_in_its_running_service() {
    let Some(svc) = Service::running() else {
        return;
    };
    let child = svc.start(&["--timeout", "20s"]);
    svc.assert_work_stopped(child);
}

#[test]
fn opencode2_ctrl_c_stops_work_in_its_running_service() {
    let Some(svc) = Service::running() else {
        return;
    };
    let child = svc.start(&[]);
    wait_for_requests(&svc.llm, 2);
    ctrl_c(&child);
    svc.assert_work_stopped(child);
}
