//! Records the real Claude Code CLI against the fake Anthropic provider into `fixtures/`: stdout
//! and stderr byte for byte, the exit status and each line's arrival time. Run by hand when a new
//! Claude Code release is to be tested (see fixtures/README.md):
//!
//! `RUNBOOK_RECORD_CLAUDE=.agents/claude-2.1.330/node_modules/.bin/claude RUNBOOK_RECORD_DIR=fixtures/claude-2.1.330 cargo test --locked --test it -- --ignored record::`

use std::io::{BufRead as _, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::conformance::Scenario;
use crate::support::fake_anthropic::{self as anthropic, Reply};
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
/// `--max-budget-usd 0.03`, and the permission script in plan mode (runbook's `read-only`).
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

/// Runs `claude` for `sc` in a fresh work dir and writes `DIR/NAME.*`.
fn record(bin: &Path, dir: &Path, name: &str, sc: &sse::Scenario<Reply>, work: &Path, home: &Path) {
    let fake = anthropic::FakeAnthropic::for_scenario(sc);
    let mut cmd = anthropic::claude_command(bin, work, home, &fake, sc);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    let start = Instant::now();
    let mut child = cmd.spawn().expect("start claude");
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
    let deadline = Instant::now() + Duration::from_secs(120);
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for claude") {
            break status;
        }
        if Instant::now() > deadline {
            child.kill().ok();
            break child.wait().expect("wait for claude");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
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
    // The work dir and home differ from run to run; the recordings name them by fixed paths.
    let fix = |bytes: Vec<u8>| {
        String::from_utf8_lossy(&bytes)
            .replace(
                &sse::path_str(work),
                &format!("/scratch/claude-run/{name}/ws"),
            )
            .replace(
                &sse::path_str(home),
                &format!("/scratch/claude-run/{name}/home"),
            )
    };
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join(format!("{name}.stdout.ndjson")), fix(stdout)).unwrap();
    std::fs::write(dir.join(format!("{name}.stderr.txt")), fix(stderr)).unwrap();
    std::fs::write(dir.join(format!("{name}.exit")), format!("{code}\n")).unwrap();
    std::fs::write(dir.join(format!("{name}.timing.ndjson")), timing).unwrap();
    let requests: Vec<Value> = fake.requests().iter().map(|r| r.body.clone()).collect();
    std::fs::write(
        std::env::temp_dir().join(format!("runbook-record-{name}.requests.json")),
        serde_json::to_string_pretty(&requests).unwrap(),
    )
    .unwrap();
}

fn target() -> Option<(PathBuf, PathBuf)> {
    let bin = std::env::var_os("RUNBOOK_RECORD_CLAUDE")?;
    let dir = std::env::var_os("RUNBOOK_RECORD_DIR")?;
    Some((PathBuf::from(bin), PathBuf::from(dir)))
}

#[test]
#[ignore = "records fixtures from a real Claude Code CLI; run by hand"]
fn record_claude_scenarios() {
    let (bin, dir) = target().expect("set RUNBOOK_RECORD_CLAUDE and RUNBOOK_RECORD_DIR");
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
        record(&bin, &dir, name, &sc, &ctx.work, &ctx.home);
    }
}
