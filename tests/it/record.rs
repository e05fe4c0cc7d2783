//! Records the real Claude Code, Codex and OpenCode 2 CLIs against the project's fake providers into
//! `fixtures/`: stdout and stderr byte for byte, the exit status and each line's arrival time.
//! Run by hand when a new release is to be tested (see fixtures/README.md and
//! docs/agents-release.md):
//!
//! `RUNBOOK_RECORD_CLAUDE=.agents/claude-2.1.332/node_modules/.bin/claude RUNBOOK_RECORD_DIR=fixtures/claude-2.1.332 cargo test --locked --test it -- --ignored record::record_claude`
//!
//! `RUNBOOK_RECORD_CODEX=.agents/codex-0.171.0/node_modules/.bin/codex RUNBOOK_RECORD_DIR=fixtures/codex-0.171.0 cargo test --locked --test it -- --ignored record::record_codex`
//!
//! `RUNBOOK_RECORD_OPENCODE_V2=.agents/opencode-2.2.5/node_modules/.bin/opencode RUNBOOK_RECORD_DIR=fixtures/opencode-2.2.5 cargo test --locked --test it -- --ignored record::record_opencode_v2`
//!
//! The model requests the agent sent in each scenario are left in the system's temporary
//! directory as `runbook-record-NAME.requests.json`, to see what a new release asks of the
//! provider.

use std::io::{BufRead as _, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

pub(crate) mod opencode_v2;

use crate::conformance::Scenario;
use crate::support::fake_anthropic::{self as anthropic, Reply};
use crate::support::fake_responses as responses;
use crate::support::{self, TestContext, sse};

/// The scenarios recorded, by the file name they are recorded under.
fn scenarios() -> Vec<(&'static str, Scenario)> {
    vec![
        ("text", Scenario::Text),
        ("read_edit", Scenario::ReadEdit),
        ("shell", Scenario::Shell),
        ("tool_fail", Scenario::ToolFail),
        ("http500", Scenario::ProviderError),
        ("permission_denied", Scenario::PermissionDenied),
        ("subagent", Scenario::Subagent),
        ("multistep", Scenario::Multistep),
    ]
}

/// Recordings beyond the canonical scenarios: the multi-step script stopped by Claude's own
/// `--max-budget-usd 0.03`, the permission script in plan mode (runbook's `read-only`), and the
/// text and subagent scripts with the raw API stream runbook asks for
/// (`--include-partial-messages`: `stream_event` lines).
fn variants() -> Vec<(&'static str, Scenario, &'static [&'static str])> {
    vec![
        (
            "budget",
            Scenario::Multistep,
            &["--dangerously-skip-permissions", "--max-budget-usd", "0.03"],
        ),
        (
            "plan_denied",
            Scenario::PermissionDenied,
            &["--permission-mode", "plan"],
        ),
        (
            "text_partial",
            Scenario::Text,
            &["--include-partial-messages"],
        ),
        (
            "subagent_partial",
            Scenario::Subagent,
            &[
                "--dangerously-skip-permissions",
                "--include-partial-messages",
            ],
        ),
    ]
}

fn script(scenario: Scenario, work: &Path) -> sse::Scenario<Reply> {
    use anthropic::scenario as s;
    match scenario {
        Scenario::Text => s::text(work),
        Scenario::ReadEdit => s::read_edit(work),
        Scenario::Shell => s::shell(work),
        Scenario::ToolFail => s::tool_fail(work),
        Scenario::ProviderError => s::provider_error(work),
        Scenario::PermissionDenied => s::permission_denied(work),
        Scenario::Subagent => s::subagent(work),
        Scenario::Multistep => s::multistep(work),
        Scenario::Stall => s::stall(work),
    }
}

/// One line as it arrived.
struct Arrival {
    t: f64,
    stream: &'static str,
    line: Vec<u8>,
}

/// Where a recording is made and what it is renamed to: the agent's name (`/scratch/AGENT-run/`
/// replaces the work dir and home), the directory it goes to, and the scenario's name; and how
/// long the agent may run before it is sent SIGTERM (SIGKILL 5 s later).
struct Target<'a> {
    agent: &'a str,
    dir: &'a Path,
    name: &'a str,
    work: &'a Path,
    home: &'a Path,
    limit: Duration,
}

impl Target<'_> {
    /// `bytes` with the work dir and home named by their fixed paths: they differ from run to
    /// run.
    fn rename(&self, bytes: &[u8]) -> String {
        let Target {
            agent,
            name,
            work,
            home,
            ..
        } = *self;
        String::from_utf8_lossy(bytes)
            .replace(
                &sse::path_str(work),
                &format!("/scratch/{agent}-run/{name}/ws"),
            )
            .replace(
                &sse::path_str(home),
                &format!("/scratch/{agent}-run/{name}/home"),
            )
    }
}

/// Waits for `child` until `limit` has passed, then sends it SIGTERM, as a supervisor stopping
/// it would, and SIGKILL if it is still there 5 s later.
fn wait_within(child: &mut std::process::Child, limit: Duration) -> std::process::ExitStatus {
    let term_at = Instant::now() + limit;
    let kill_at = term_at + Duration::from_secs(5);
    let mut termed = false;
    loop {
        if let Some(status) = child.try_wait().expect("wait for the agent") {
            return status;
        }
        if !termed && Instant::now() > term_at {
            let pid = nix::unistd::Pid::from_raw(child.id() as i32);
            nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).ok();
            termed = true;
        }
        if Instant::now() > kill_at {
            child.kill().ok();
            return child.wait().expect("wait for the agent");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs `cmd` (the agent for one scenario, in `target.work`) and writes `DIR/NAME.*`, and the
/// model requests `requests` gives once it has ended.
fn record(mut cmd: std::process::Command, target: &Target<'_>, requests: impl Fn() -> Vec<Value>) {
    let (dir, name) = (target.dir, target.name);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start the agent");
    let (tx, rx) = mpsc::channel::<Arrival>();
    let readers: Vec<_> = [
        (
            "stdout",
            Box::new(child.stdout.take().unwrap()) as Box<dyn Read + Send>,
        ),
        ("stderr", Box::new(child.stderr.take().unwrap())),
    ]
    .into_iter()
    .map(|(stream, pipe)| {
        let tx = tx.clone();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(pipe);
            loop {
                let mut line = Vec::new();
                match reader.read_until(b'\n', &mut line) {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {
                        let t = start.elapsed().as_secs_f64();
                        tx.send(Arrival { t, stream, line }).unwrap();
                    }
                }
            }
        })
    })
    .collect();
    drop(tx);
    let status = wait_within(&mut child, target.limit);
    for r in readers {
        r.join().unwrap();
    }
    let arrivals: Vec<Arrival> = rx.into_iter().collect();
    let mut stdout = Vec::new();
    let mut stderr = Vec::new();
    let mut timing = String::new();
    for a in &arrivals {
        if a.stream == "stdout" {
            stdout.extend_from_slice(&a.line);
        } else {
            stderr.extend_from_slice(&a.line);
        }
        let kind = serde_json::from_slice::<Value>(&a.line)
            .ok()
            .and_then(|v| v["type"].as_str().map(str::to_owned));
        let mut entry = json!({"t": (a.t * 1000.0).round() / 1000.0, "stream": a.stream, "bytes": a.line.len()});
        if let Some(kind) = kind {
            entry["type"] = json!(kind);
        }
        timing.push_str(&entry.to_string());
        timing.push('\n');
    }
    use std::os::unix::process::ExitStatusExt as _;
    let code = status
        .code()
        .unwrap_or_else(|| 128 + status.signal().unwrap_or(0));
    std::fs::create_dir_all(dir).unwrap();
    let stdout_file = dir.join(format!("{name}.stdout.ndjson"));
    std::fs::write(stdout_file, target.rename(&stdout)).unwrap();
    std::fs::write(
        dir.join(format!("{name}.stderr.txt")),
        target.rename(&stderr),
    )
    .unwrap();
    std::fs::write(dir.join(format!("{name}.exit")), format!("{code}\n")).unwrap();
    std::fs::write(dir.join(format!("{name}.timing.ndjson")), timing).unwrap();
    let requests = requests();
    std::fs::write(
        std::env::temp_dir().join(format!("runbook-record-{name}.requests.json")),
        serde_json::to_string_pretty(&requests).unwrap(),
    )
    .unwrap();
}

/// The binary `var` names and `RUNBOOK_RECORD_DIR`.
fn target(var: &str) -> Option<(PathBuf, PathBuf)> {
    let bin = std::env::var_os(var)?;
    let dir = std::env::var_os("RUNBOOK_RECORD_DIR")?;
    Some((PathBuf::from(bin), PathBuf::from(dir)))
}

#[test]
#[ignore = "records fixtures from a real Claude Code CLI; run by hand"]
fn record_claude_scenarios() {
    let (bin, dir) =
        target("RUNBOOK_RECORD_CLAUDE").expect("set RUNBOOK_RECORD_CLAUDE and RUNBOOK_RECORD_DIR");
    let only = std::env::var("RUNBOOK_RECORD_ONLY").ok();
    let plain = scenarios().into_iter().map(|(n, s)| (n, s, None));
    let variants = variants().into_iter().map(|(n, s, f)| (n, s, Some(f)));
    for (name, scenario, flags) in plain.chain(variants) {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let ctx = TestContext::new();
        sse::write_readme(&ctx.work).expect("write README.md");
        support::git_init(&ctx.work, &ctx.home);
        let mut sc = script(scenario, &ctx.work);
        if let Some(flags) = flags {
            sc.flags = flags.iter().map(|f| (*f).to_owned()).collect();
        }
        let fake = anthropic::FakeAnthropic::for_scenario(&sc);
        let cmd = anthropic::claude_command(&bin, &ctx.work, &ctx.home, &fake, &sc);
        let target = Target {
            agent: "claude",
            dir: &dir,
            name,
            work: &ctx.work,
            home: &ctx.home,
            limit: Duration::from_secs(120),
        };
        record(cmd, &target, || bodies(fake.requests()));
    }
}

fn bodies(requests: Vec<sse::Received>) -> Vec<Value> {
    requests.into_iter().map(|r| r.body).collect()
}

/// The Codex script of `scenario`, with its flags (`-s read-only` for the denial, `-m gpt-5.4`
/// for the subagent): the scenarios of `fixtures/codex/`.
fn codex_script(scenario: Scenario, work: &Path) -> sse::Scenario<responses::Reply> {
    use responses::scenario as s;
    match scenario {
        Scenario::Text => s::text(work),
        Scenario::ReadEdit => s::read_edit(work),
        Scenario::Shell => s::shell(work),
        Scenario::ToolFail => s::tool_fail(work),
        Scenario::ProviderError => s::provider_error(work),
        Scenario::PermissionDenied => s::permission_denied(work),
        Scenario::Subagent => s::subagent(work),
        Scenario::Multistep => s::multistep(work),
        Scenario::Stall => s::stall(work),
    }
}

#[test]
#[ignore = "records fixtures from a real Codex CLI; run by hand"]
fn record_codex_scenarios() {
    let (bin, dir) =
        target("RUNBOOK_RECORD_CODEX").expect("set RUNBOOK_RECORD_CODEX and RUNBOOK_RECORD_DIR");
    let only = std::env::var("RUNBOOK_RECORD_ONLY").ok();
    for (name, scenario) in scenarios() {
        if only.as_deref().is_some_and(|o| o != name) || scenario == Scenario::Multistep {
            continue;
        }
        let ctx = TestContext::new();
        sse::write_readme(&ctx.work).expect("write README.md");
        support::git_init(&ctx.work, &ctx.home);
        let sc = codex_script(scenario, &ctx.work);
        let fake = responses::FakeResponses::for_scenario(&sc);
        let home = responses::CodexHome::new(&fake.base_url(), &responses::CodexConfig::default())
            .expect("a Codex home");
        let cmd = responses::codex_command(&bin, &ctx.work, &ctx.home, &home, &sc);
        let target = Target {
            agent: "codex",
            dir: &dir,
            name,
            work: &ctx.work,
            home: &ctx.home,
            limit: Duration::from_secs(120),
        };
        record(cmd, &target, || bodies(fake.requests()));
    }
}

#[test]
#[ignore = "records fixtures from a real OpenCode 2 CLI; run by hand"]
fn record_opencode_v2_scenarios() {
    let (bin, dir) =
        opencode_v2::bin_and_dir().expect("set RUNBOOK_RECORD_OPENCODE_V2 and RUNBOOK_RECORD_DIR");
    let only = std::env::var("RUNBOOK_RECORD_ONLY").ok();
    let wanted = |name: &str| only.as_deref().is_none_or(|o| o == name);
    for recording in opencode_v2::recordings() {
        if wanted(recording.name) {
            opencode_v2::record_one(&bin, &dir, &recording);
        }
    }
    if wanted("turn2") {
        opencode_v2::record_turns(&bin, &dir);
    }
}
