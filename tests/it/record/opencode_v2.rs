//! OpenCode 2 (`@opencode/cli`) recorded against the fake Chat Completions provider: the
//! canonical scenarios with its own tool names and arguments (`shell`, `subagent`, `path`), run
//! with a private server (`--standalone`) and, for some, through the background service it starts
//! otherwise; beside each stream, the session as `opencode session export` keeps it and the
//! processes left with the run's home once it ended.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use super::{Target, record};
use crate::support::fake_llm::{self as chat, Reply, ToolCall, Usage};
use crate::support::sse::{self, Scenario, canon};
use crate::support::{self, TestContext};

/// How OpenCode 2 is run: with a private server (`--standalone`) or through the background
/// service it starts or joins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Standalone,
    Service,
}

/// One recording: its file name, its script, how it is run, how long it may run and whether
/// the shell needs a permission.
pub(super) struct Recording {
    pub(super) name: &'static str,
    script: fn(&Path) -> Scenario<Reply>,
    mode: Mode,
    limit: Duration,
    ask_shell: bool,
}

const LIMIT: Duration = Duration::from_secs(90);

fn plain(name: &'static str, script: fn(&Path) -> Scenario<Reply>, mode: Mode) -> Recording {
    Recording {
        name,
        script,
        mode,
        limit: LIMIT,
        ask_shell: false,
    }
}

/// Every recording but the two turns (see [`record_turns`]). A 500 is retried without end, so
/// that run is stopped after 25 s.
pub(super) fn recordings() -> Vec<Recording> {
    use Mode::*;
    vec![
        plain("text", chat::scenario::text, Standalone),
        plain("read_edit", read_edit, Standalone),
        plain("shell", shell, Standalone),
        plain("tool_fail", tool_fail, Standalone),
        Recording {
            limit: Duration::from_secs(25),
            ..plain("http500", http500, Standalone)
        },
        plain("http400", chat::scenario::provider_error, Standalone),
        Recording {
            ask_shell: true,
            ..plain("permission_denied", permission_denied, Standalone)
        },
        plain("subagent", subagent, Standalone),
        plain("multistep", multistep, Standalone),
        plain("text_service", chat::scenario::text, Service),
        plain("shell_service", shell, Service),
    ]
}

fn call(id: &str, name: &str, args: Value) -> ToolCall {
    ToolCall::new(id, name, args)
}

fn shell_call(id: &str, command: &str) -> ToolCall {
    call(id, "shell", json!({"command": command}))
}

fn step(call: ToolCall, usage: Usage) -> Reply {
    Reply::tool_calls(None, vec![call], usage)
}

fn path_of(work: &Path, name: &str) -> Value {
    json!({"path": sse::path_str(&work.join(name))})
}

pub(crate) fn read_edit(work: &Path) -> Scenario<Reply> {
    let mut edit = path_of(work, "README.md");
    edit["oldString"] = json!(sse::README_LAST_LINE);
    edit["newString"] = json!(sse::README_NEW_LINE);
    let script = vec![
        Reply::tool_calls(
            Some(canon::READ_EDIT_PREAMBLE),
            vec![call("call_read", "read", path_of(work, "README.md"))],
            Usage::new(1500, 40),
        ),
        step(call("call_edit", "edit", edit), Usage::new(1700, 60)),
        Reply::text(canon::READ_EDIT_ANSWER, Usage::new(1900, 20)),
    ];
    Scenario::new(canon::READ_EDIT_PROMPT, script, &[])
}

pub(crate) fn shell(_work: &Path) -> Scenario<Reply> {
    let script = vec![
        step(
            shell_call("call_sh", canon::SHELL_COMMAND),
            Usage::new(1400, 30),
        ),
        Reply::text(canon::SHELL_ANSWER, Usage::new(1600, 25)),
    ];
    Scenario::new(canon::SHELL_PROMPT, script, &[])
}

pub(crate) fn tool_fail(work: &Path) -> Scenario<Reply> {
    let missing = call("call_missing", "read", path_of(work, "missing.txt"));
    let script = vec![
        step(missing, Usage::new(1400, 30)),
        step(
            shell_call("call_fail", canon::FAILING_COMMAND),
            Usage::new(1500, 30),
        ),
        Reply::text(canon::TOOL_FAIL_ANSWER, Usage::new(1600, 20)),
    ];
    Scenario::new(canon::TOOL_FAIL_PROMPT, script, &[])
}

pub(crate) fn http500(_work: &Path) -> Scenario<Reply> {
    let script = vec![Reply::http_error(500, canon::PROVIDER_ERROR_MESSAGE)];
    Scenario::new(canon::SHORT_PROMPT, script, &[])
}

pub(crate) fn permission_denied(_work: &Path) -> Scenario<Reply> {
    let touch = shell_call("call_touch", "touch created_by_agent.txt");
    let script = vec![step(touch, Usage::new(1300, 30))];
    Scenario::new(canon::PERMISSION_PROMPT, script, &[])
}

pub(crate) fn subagent(_work: &Path) -> Scenario<Reply> {
    let task = json!({"agent": "general", "description": "List workspace files", "prompt": canon::SUBAGENT_TASK});
    let script = vec![
        Reply::tool_calls(
            Some(canon::SUBAGENT_PREAMBLE),
            vec![call("call_task", "subagent", task)],
            Usage::new(1700, 50),
        ),
        Reply::text(canon::SUBAGENT_ANSWER, Usage::new(1900, 30)),
    ];
    let report = vec![Reply::text(canon::SUBAGENT_REPORT, Usage::new(900, 12))];
    Scenario::new(canon::SUBAGENT_PROMPT, script, &[]).with_subagent(report)
}

pub(crate) fn multistep(work: &Path) -> Scenario<Reply> {
    let mut notes = path_of(work, "notes.txt");
    notes["content"] = json!(canon::MULTISTEP_NOTES);
    let calls = [
        shell_call("call_m1", "echo step-1"),
        call("call_m2", "read", path_of(work, "README.md")),
        shell_call("call_m3", "wc -l README.md"),
        call("call_m4", "write", notes),
        shell_call("call_m5", "cat notes.txt"),
    ];
    let mut script: Vec<Reply> = (0..)
        .zip(calls)
        .map(|(i, c)| step(c, Usage::cached(2000 + 100 * i, 31 + i, 1000 + 200 * i)))
        .collect();
    script.push(Reply::text(
        canon::MULTISTEP_ANSWER,
        Usage::cached(2600, 37, 2200),
    ));
    Scenario::new(canon::MULTISTEP_PROMPT, script, &[])
}

/// A work dir with the demo README.md in a git repository, the fake provider playing `sc`, and
/// `opencode.json` pointing at it. The config is OpenCode 1's: OpenCode 2 reads it and says in
/// its log what it left out.
fn prepare(
    script: fn(&Path) -> Scenario<Reply>,
    ask_shell: bool,
) -> (TestContext, chat::FakeLlm, Scenario<Reply>) {
    let ctx = TestContext::new();
    sse::write_readme(&ctx.work).expect("write README.md");
    support::git_init(&ctx.work, &ctx.home);
    let sc = script(&ctx.work);
    let fake = chat::FakeLlm::start_with_subagent(sc.script.clone(), sc.subagent_script.clone());
    let config = chat::OpencodeConfig {
        overlay: ask_shell.then(|| json!({"permission": {"bash": "ask"}})),
        ..chat::OpencodeConfig::default()
    };
    chat::write_opencode_config(&ctx.work, &fake.base_url(), &config).expect("opencode.json");
    (ctx, fake, sc)
}

/// `bin ARGS` in `ctx`'s work dir with OpenCode's offline environment and nothing else of ours.
fn opencode(bin: &Path, ctx: &TestContext, args: &[&str]) -> Command {
    let mut cmd = Command::new(bin);
    cmd.args(args).current_dir(&ctx.work).env_clear();
    cmd.envs(chat::opencode_env(&ctx.home));
    if let Some(path) = std::env::var_os("PATH") {
        cmd.env("PATH", path);
    }
    cmd
}

/// `--standalone` in standalone mode, nothing otherwise.
fn mode_flag(mode: Mode) -> &'static [&'static str] {
    match mode {
        Mode::Standalone => &["--standalone"],
        Mode::Service => &[],
    }
}

fn run_args<'a>(mode: Mode, prompt: &'a str, more: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["run"];
    args.extend_from_slice(mode_flag(mode));
    args.extend_from_slice(&["--format", "json", "-m", "fake/fake-model"]);
    args.extend_from_slice(more);
    args.push(prompt);
    args
}

fn target<'a>(dir: &'a Path, name: &'a str, ctx: &'a TestContext, limit: Duration) -> Target<'a> {
    Target {
        agent: "opencode2",
        dir,
        name,
        work: &ctx.work,
        home: &ctx.home,
        limit,
    }
}

/// Records `r` into `dir`: the run, the session's export, the processes left.
pub(super) fn record_one(bin: &Path, dir: &Path, r: &Recording) {
    let (ctx, fake, sc) = prepare(r.script, r.ask_shell);
    let cmd = opencode(bin, &ctx, &run_args(r.mode, &sc.prompt, &[]));
    let t = target(dir, r.name, &ctx, r.limit);
    record(cmd, &t, || bodies(&fake));
    let mut after = format!("after the run:\n{}", processes(&ctx.home, bin, &t));
    export(bin, &ctx, r.mode, &t);
    after.push_str(&stop_service(bin, &ctx, r.mode, &t));
    write(dir, r.name, "processes.txt", &after);
}

/// The two turns of one session: the text scenario, then `--session ID` with a new prompt, as
/// runbook's `--then` does; the export after each, the second's holding both.
pub(super) fn record_turns(bin: &Path, dir: &Path) {
    let (ctx, fake, sc) = prepare(chat::scenario::text, false);
    let mode = Mode::Standalone;
    let first = target(dir, "turn1", &ctx, LIMIT);
    record(
        opencode(bin, &ctx, &run_args(mode, &sc.prompt, &[])),
        &first,
        || bodies(&fake),
    );
    export(bin, &ctx, mode, &first);
    let id = session_id(dir, "turn1").expect("the first turn's session");
    let second = target(dir, "turn2", &ctx, LIMIT);
    let args = run_args(mode, "Now say it once more.", &["--session", &id]);
    record(opencode(bin, &ctx, &args), &second, || bodies(&fake));
    let mut after = format!(
        "after the second turn:\n{}",
        processes(&ctx.home, bin, &second)
    );
    export(bin, &ctx, mode, &second);
    after.push_str(&stop_service(bin, &ctx, mode, &second));
    write(dir, "turn2", "processes.txt", &after);
}

/// Each request with the headers OpenCode 2 sent.
fn bodies(fake: &chat::FakeLlm) -> Vec<Value> {
    let request = |r: chat::Recorded| json!({"headers": r.headers, "body": r.body});
    fake.requests().into_iter().map(request).collect()
}

fn write(dir: &Path, name: &str, suffix: &str, text: &str) {
    std::fs::write(dir.join(format!("{name}.{suffix}")), text).expect("write a recording");
}

/// The first `sessionID` of the recorded stdout `NAME.stdout.ndjson`.
fn session_id(dir: &Path, name: &str) -> Option<String> {
    let stdout = std::fs::read_to_string(dir.join(format!("{name}.stdout.ndjson"))).ok()?;
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|v| v["sessionID"].as_str().map(str::to_owned))
}

/// `opencode session export ID` (through the service in service mode) into `NAME.export.json`,
/// renamed like the stream; what it printed on stderr and its exit into `NAME.export.stderr.txt`
/// when it failed.
fn export(bin: &Path, ctx: &TestContext, mode: Mode, t: &Target<'_>) {
    let Some(id) = session_id(t.dir, t.name) else {
        write(
            t.dir,
            t.name,
            "export.stderr.txt",
            "no sessionID on stdout\n",
        );
        return;
    };
    let mut args = vec!["session", "export"];
    args.extend_from_slice(mode_flag(mode));
    args.push(&id);
    let out = opencode(bin, ctx, &args)
        .output()
        .expect("run session export");
    write(t.dir, t.name, "export.json", &t.rename(&out.stdout));
    if !out.status.success() {
        let text = format!("{}exit: {:?}\n", t.rename(&out.stderr), out.status.code());
        write(t.dir, t.name, "export.stderr.txt", &text);
    }
}

/// In service mode, what `opencode service status` says, then `opencode service stop` and the
/// processes left after it. Whatever is still there with the run's home is then killed (and
/// said so): it was started by this recording.
fn stop_service(bin: &Path, ctx: &TestContext, mode: Mode, t: &Target<'_>) -> String {
    let mut text = String::new();
    if mode == Mode::Service {
        text.push_str(&state_file(&ctx.home));
        for verb in ["status", "stop"] {
            let out = opencode(bin, ctx, &["service", verb]).output();
            let out = out.expect("run opencode service");
            text.push_str(&format!(
                "`opencode service {verb}` (exit {:?}):\n{}{}",
                out.status.code(),
                t.rename(&out.stdout),
                t.rename(&out.stderr)
            ));
        }
        std::thread::sleep(Duration::from_secs(1));
        text.push_str(&format!(
            "after `opencode service stop`:\n{}",
            processes(&ctx.home, bin, t)
        ));
    }
    for (pid, _) in pids_with_home(&ctx.home) {
        let pid = nix::unistd::Pid::from_raw(pid);
        nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).ok();
        text.push_str("(killed by the recorder: a process still had the run's home)\n");
    }
    text
}

/// The keys of the service's state file (its values are the run's: a password among them).
fn state_file(home: &Path) -> String {
    let file = home.join(".local/state/opencode/service.json");
    let keys: Vec<String> = std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|v| v.as_object().map(|o| o.keys().cloned().collect()))
        .unwrap_or_default();
    format!("$XDG_STATE_HOME/opencode/service.json keys: {keys:?}\n")
}

/// Every process whose environment has `HOME=home`: its parent and command line, the binary
/// named `opencode`; `(none)` if there is none.
fn processes(home: &Path, bin: &Path, t: &Target<'_>) -> String {
    let real = bin.canonicalize().unwrap_or_else(|_| bin.to_owned());
    let found = pids_with_home(home);
    let list: Vec<String> = found
        .iter()
        .map(|(pid, cmdline)| {
            let parent = match parent_of(*pid) {
                Some(1) => "detached (parent 1)",
                Some(p) if found.iter().any(|(other, _)| *other == p) => {
                    "child of another process listed"
                }
                _ => "child of the recorder",
            };
            let cmdline = cmdline.replace(&sse::path_str(&real), "opencode");
            let cmdline = cmdline.replace(&sse::path_str(bin), "opencode");
            format!("  {parent}: {}\n", t.rename(cmdline.as_bytes()))
        })
        .collect();
    if list.is_empty() {
        "  (none)\n".to_owned()
    } else {
        list.concat()
    }
}

fn pids_with_home(home: &Path) -> Vec<(i32, String)> {
    let needle = format!("HOME={}\0", sse::path_str(home));
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    let mut found: Vec<(i32, String)> = entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| String::from_utf8_lossy(&env).contains(&needle))
        })
        .filter_map(|pid| {
            let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
            let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
            Some((pid, cmdline.trim_end().to_owned()))
        })
        .collect();
    found.sort();
    found
}

fn parent_of(pid: i32) -> Option<i32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &stat[stat.rfind(')')? + 2..];
    after.split(' ').nth(1)?.parse().ok()
}

/// The binary `RUNBOOK_RECORD_OPENCODE_V2` names (made absolute: it runs in the work dir) and
/// `RUNBOOK_RECORD_DIR`.
pub(super) fn bin_and_dir() -> Option<(PathBuf, PathBuf)> {
    let (bin, dir) = super::target("RUNBOOK_RECORD_OPENCODE_V2")?;
    Some((std::path::absolute(&bin).ok()?, dir))
}
