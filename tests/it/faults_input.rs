//! Fault matrix, hostile input: secrets an agent spells with JSON escapes, files runbook did not
//! write (devices, FIFOs, links, gigabyte lines), out-of-range numbers, and lines of the wrong
//! shape. One test per row; each command that could eat memory runs under a data-size limit, and
//! each that could block runs under a time limit, so that a regression fails instead of taking
//! the machine or the suite with it.

use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use runbook::event::{EventKind, Outcome};

use crate::support::{self, Outcome as Finished, TestContext, events_and_receipt, run, unescaped};

/// How long a command that must answer at once may take before the test fails.
const PROMPT: Duration = Duration::from_secs(20);
/// How long reading past a gigabyte line may take on a busy machine.
const HUGE_READ: Duration = Duration::from_secs(90);
/// The most data memory a command may take here: far above what runbook needs, far below the
/// gigabyte an unbounded read would take.
const MEMORY: libc::rlim_t = 512 * 1024 * 1024;
/// A line longer than [`MEMORY`], stored as a hole in a sparse file so that it costs no disk.
const HUGE_LINE: u64 = 1024 * 1024 * 1024;

const STEP_START: &str = r#"{"type":"step_start","timestamp":1,"sessionID":"ses_in","part":{"id":"p1","messageID":"m1","sessionID":"ses_in","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":2,"sessionID":"ses_in","part":{"id":"p2","messageID":"m1","sessionID":"ses_in","type":"text","text":"All done."}}"#;
const STEP_STOP: &str = r#"{"type":"step_finish","timestamp":3,"sessionID":"ses_in","part":{"id":"p3","reason":"stop","messageID":"m1","sessionID":"ses_in","type":"step-finish","tokens":{"total":11,"input":10,"output":1,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}"#;

/// Runs `cmd` to its end within `limit`, its data memory capped at [`MEMORY`].
fn bounded(cmd: &mut Command, limit: Duration) -> Finished {
    // SAFETY: setrlimit is async-signal-safe and touches only the child's own limits.
    unsafe {
        cmd.pre_exec(|| {
            let cap = libc::rlimit {
                rlim_cur: MEMORY,
                rlim_max: MEMORY,
            };
            if libc::setrlimit(libc::RLIMIT_DATA, &cap) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    run(cmd, limit)
}

/// `runbook ARGS` in `ctx`, bounded in memory and time.
fn runbook(ctx: &TestContext, args: &[&str]) -> Finished {
    bounded(&mut ctx.runbook(args), PROMPT)
}

/// Fails unless runbook said what went wrong in one line, and did not panic.
#[track_caller]
fn one_line_error(out: &Finished, text: &str) {
    out.assert_stderr_has(text);
    assert_eq!(out.stderr.trim_end().lines().count(), 1, "{}", out.stderr);
    assert!(!out.stderr.contains("panicked"), "{}", out.stderr);
}

/// Appends `text`, then a hole of `hole` bytes (read back as NUL bytes), then `after`.
fn append_with_hole(path: &Path, text: &str, hole: u64, after: &str) {
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .unwrap();
    file.write_all(text.as_bytes()).unwrap();
    let len = file.metadata().unwrap().len();
    file.set_len(len + hole).unwrap();
    file.write_all(after.as_bytes()).unwrap();
}

/// Fails if `text` holds `secret` as written, or once its escapes are decoded.
#[track_caller]
fn assert_hidden(place: &str, text: &str, secret: &str, spelled: &str) {
    assert!(!text.contains(secret), "{secret:?} in {place}:\n{text}");
    assert!(!text.contains(spelled), "{spelled:?} in {place}:\n{text}");
    assert!(
        !unescaped(text).contains(secret),
        "{secret:?} spelled with escapes in {place}:\n{text}"
    );
}

#[test]
fn a_secret_spelled_with_json_escapes_reaches_no_file_and_no_terminal() {
    let secret = "sk-test/9f8e7d6c5b4a";
    let spellings = [
        r"\u0073k-test\/9f8e7d6\u0063\u0035b4a",
        r"\u0073\u006B\u002d\u0074\u0065\u0073\u0074\u002f\u0039\u0066\u0038\u0065\u0037\u0064\u0036\u0063\u0035\u0062\u0034\u0061",
        r"sk-test\/9f8e7d6c5b4a",
    ];
    // Each agent's own recording of a shell call, with its output (and command) replaced by the
    // secret as the agent might print it.
    for (agent, recording, replaced) in [
        ("opencode", "opencode/c_bash", "README.md"),
        ("claude", "claude/shell", "hello-from-bash"),
        ("codex", "codex/shell", "hello-from-bash"),
    ] {
        for spelled in spellings {
            let mut ctx = TestContext::new();
            ctx.env("MY_SERVICE_TOKEN", secret);
            let prefix = ctx.root().join("rec");
            let stdout =
                fs::read_to_string(support::fixtures().join(format!("{recording}.stdout.ndjson")))
                    .unwrap();
            assert!(stdout.contains(replaced), "{recording}");
            fs::write(
                prefix.with_extension("stdout.ndjson"),
                stdout.replace(replaced, &format!("token {spelled} end")),
            )
            .unwrap();
            fs::write(
                prefix.with_extension("stderr.txt"),
                format!("warning: key {spelled} rejected\n"),
            )
            .unwrap();
            let bin = support::fake_agent_bin();
            let mut cmd = ctx.runbook(&[
                "run",
                "--agent",
                agent,
                "--agent-bin",
                bin.to_str().unwrap(),
                "--json",
                "do the thing",
            ]);
            cmd.env("FAKE_AGENT_REPLAY", &prefix);
            let out = run(&mut cmd, Duration::from_secs(60));
            let place = format!("{agent} with {spelled}");
            assert_hidden(
                &format!("{place}: --json stdout"),
                &out.stdout,
                secret,
                spelled,
            );
            assert_hidden(&format!("{place}: stderr"), &out.stderr, secret, spelled);
            assert!(
                out.stdout.contains("[REDACTED]"),
                "{place}: nothing was masked:\n{}",
                out.stdout
            );
            let dir = ctx.run_dir();
            for name in ["events.ndjson", "stdout.log", "stderr.log", "result.json"] {
                let text = fs::read_to_string(dir.join(name)).unwrap();
                assert_hidden(&format!("{place}: {name}"), &text, secret, spelled);
            }
            // Masking keeps the agent's lines readable: the shell call is still there.
            let (events, _) = events_and_receipt(&out.stdout);
            assert!(
                events
                    .iter()
                    .any(|e| matches!(&e.kind, EventKind::ToolCompleted(_))),
                "{place}: the tool call was lost"
            );
        }
    }
}

#[test]
fn replaying_a_device_is_refused_with_one_line_in_bounded_memory() {
    let ctx = TestContext::new();
    let out = runbook(&ctx, &["replay", "/dev/zero"]);
    out.assert_exit(2);
    one_line_error(
        &out,
        "/dev/zero: it is a character device, not a regular file",
    );
}

#[test]
fn replaying_a_transcript_with_a_gigabyte_line_counts_it_too_long_in_bounded_memory() {
    let ctx = TestContext::new();
    let file = ctx.root().join("huge.stdout.ndjson");
    append_with_hole(
        &file,
        &format!("{STEP_START}\n"),
        HUGE_LINE,
        &format!("\n{TEXT}\n{STEP_STOP}\n"),
    );
    // Reading past a gigabyte keeps a core busy for seconds: the bound here is on memory, and
    // the time limit only ends a read that never would.
    let out = bounded(
        &mut ctx.runbook(&["replay", "--instant", "--json", file.to_str().unwrap()]),
        HUGE_READ,
    );
    out.assert_exit(0);
    let (events, receipt) = events_and_receipt(&out.stdout);
    let unparsed: Vec<_> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::Unparsed(u) => Some(u),
            _ => None,
        })
        .collect();
    assert_eq!(unparsed.len(), 1, "{unparsed:?}");
    assert_eq!(
        serde_json::to_value(unparsed[0].reason).unwrap(),
        "too_long"
    );
    assert_eq!(unparsed[0].bytes, HUGE_LINE);
    assert_eq!(receipt.unparsed_lines.count, 1);
    assert_eq!(
        receipt.steps,
        Some(1),
        "the lines after the huge one are read"
    );
}

#[test]
fn an_event_log_with_a_gigabyte_line_is_read_around_it_in_bounded_memory() {
    let ctx = TestContext::new();
    ctx.run_fake(&[STEP_START, TEXT, STEP_STOP].join("\n"), &[])
        .assert_exit(0);
    let dir = ctx.run_dir();
    let log = dir.join("events.ndjson");
    let text = fs::read_to_string(&log).unwrap();
    // The huge line goes just before the last event, so that following the log must read past
    // it to see the run end.
    let (head, last) = text.trim_end().rsplit_once('\n').unwrap();
    fs::remove_file(&log).unwrap();
    append_with_hole(
        &log,
        &format!("{head}\n{{"),
        HUGE_LINE,
        &format!("\n{last}\n"),
    );
    let too_long = format!(
        "line {} is too long to be an event ({} bytes); skipped",
        head.lines().count() + 1,
        HUGE_LINE + 1
    );
    let too_long = too_long.as_str();

    let live = runbook(&ctx, &["status", "--live"]);
    live.assert_exit(0).assert_stderr_has(too_long);
    live.assert_stderr_has("✓ completed");

    let replay = runbook(&ctx, &["replay", "--instant", log.to_str().unwrap()]);
    replay.assert_exit(0).assert_stderr_has(too_long);
    replay.assert_stderr_has("✓ completed");

    // Without its receipt the run is read from its log.
    fs::remove_file(dir.join("result.json")).unwrap();
    let status = runbook(&ctx, &["status"]);
    status.assert_exit(0).assert_stderr_has(too_long);
    let listed = runbook(&ctx, &["list", "--json"]);
    listed.assert_exit(0);
    assert_eq!(listed.stdout.lines().count(), 1, "{}", listed.stderr);
}

#[test]
fn a_receipt_that_links_to_a_device_is_skipped_by_list_and_refused_by_status() {
    let ctx = TestContext::new();
    ctx.run_fake(&[STEP_START, TEXT, STEP_STOP].join("\n"), &[])
        .assert_exit(0);
    let real = ctx.run_dir();
    let id = "20990101-000000-zzzzz";
    let planted = ctx.runs.join(id);
    fs::create_dir(&planted).unwrap();
    std::os::unix::fs::symlink("/dev/zero", planted.join("result.json")).unwrap();
    let refused = "result.json: it is a symbolic link, which runbook does not follow";

    let listed = runbook(&ctx, &["list"]);
    listed
        .assert_exit(0)
        .assert_stderr_has(&format!("skipping {id}"));
    listed.assert_stderr_has(refused);
    let real_id = real.file_name().unwrap().to_str().unwrap();
    listed.assert_stdout_has(real_id);
    let json = runbook(&ctx, &["list", "--json"]);
    json.assert_exit(0).assert_stderr_has(refused);
    assert_eq!(json.stdout.lines().count(), 1, "{}", json.stdout);

    let status = runbook(&ctx, &["status", id]);
    status.assert_exit(6);
    one_line_error(&status, refused);
}

#[test]
fn a_fifo_for_runbook_toml_is_refused_at_once() {
    let ctx = TestContext::new();
    let fifo = ctx.work.join("runbook.toml");
    let path = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    for args in [
        &["config"][..],
        &["list"],
        &["run", "--agent-cmd", "true", "x"],
    ] {
        let out = runbook(&ctx, args);
        out.assert_exit(2);
        one_line_error(
            &out,
            "runbook.toml: cannot read it: it is a named pipe (FIFO), not a regular file",
        );
    }
}

#[test]
fn an_env_file_that_is_a_device_is_refused_in_bounded_memory() {
    let ctx = TestContext::new();
    let out = runbook(
        &ctx,
        &["run", "--env-file", "/dev/zero", "--agent-cmd", "true", "x"],
    );
    out.assert_exit(2);
    one_line_error(
        &out,
        "/dev/zero: cannot read it: it is a character device, not a regular file",
    );
    assert!(ctx.run_dirs().is_empty(), "nothing was started");
}

#[test]
fn an_agent_that_answers_version_endlessly_is_read_a_few_kib_and_ended() {
    let ctx = TestContext::new();
    let marker = format!("endless-version-{}", std::process::id());
    let agent = ctx.agent_script(
        "agent",
        &format!(
            "if [ \"$1\" = --version ]; then exec yes {marker}; fi\nprintf '%s\\n' '{STEP_START}' '{TEXT}' '{STEP_STOP}'"
        ),
    );
    let out = bounded(
        &mut ctx.runbook(&["run", "--agent-bin", &agent, "do the thing"]),
        Duration::from_secs(60),
    );
    out.assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(receipt.agent.version, None, "endless output is no version");
    let left: Vec<PathBuf> = fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path().join("cmdline"))
        .filter(|p| fs::read(p).is_ok_and(|c| String::from_utf8_lossy(&c).contains(&marker)))
        .collect();
    assert!(
        left.is_empty(),
        "the version probe outlived the run: {left:?}"
    );
}

#[test]
fn a_replay_speed_out_of_range_is_a_usage_error_not_a_panic() {
    let ctx = TestContext::new();
    let fixture = support::fixtures().join("opencode/c_bash.stdout.ndjson");
    for speed in ["1e-19", "0", "-1", "NaN", "inf", "1e300"] {
        let flag = format!("--speed={speed}");
        let out = runbook(&ctx, &["replay", &flag, fixture.to_str().unwrap()]);
        assert_eq!(out.code(), Some(2), "--speed {speed}: {}", out.stderr);
        assert!(
            out.stderr.contains("is not a speed from 0.001 to 1000000"),
            "--speed {speed}: {}",
            out.stderr
        );
    }
    let out = runbook(&ctx, &["list", "-n", "99999999999999999999999"]);
    out.assert_exit(2);
}

#[test]
fn a_replay_whose_recorded_exit_cannot_be_read_is_not_completed() {
    let ctx = TestContext::new();
    let copy = ctx.root().join("bash.stdout.ndjson");
    fs::copy(
        support::fixtures().join("opencode/c_bash.stdout.ndjson"),
        &copy,
    )
    .unwrap();
    for garbage in ["zero\n", "-1\n", "300\n", ""] {
        fs::write(ctx.root().join("bash.exit"), garbage).unwrap();
        let out = runbook(
            &ctx,
            &["replay", "--instant", "--json", copy.to_str().unwrap()],
        );
        out.assert_exit(0);
        let (_, receipt) = events_and_receipt(&out.stdout);
        assert_eq!(receipt.outcome, Outcome::AgentError, "{garbage:?}");
        assert_eq!(receipt.message, "the agent's exit status is unknown");
        out.assert_stderr_has("bash.exit does not hold an exit status");
        let shown = runbook(&ctx, &["replay", "--instant", copy.to_str().unwrap()]);
        assert!(!shown.stderr.contains("✓ completed"), "{}", shown.stderr);
    }
    fs::write(ctx.root().join("bash.exit"), "0\n").unwrap();
    let clean = runbook(&ctx, &["replay", "--instant", copy.to_str().unwrap()]);
    clean.assert_stderr_has("✓ completed");
}

#[test]
fn json_of_the_wrong_shape_is_labelled_unexpected_json() {
    let ctx = TestContext::new();
    let scenario = [
        STEP_START,
        "[1,2,3]",
        r#"{"type":"text","sessionID":"ses_in","part":{"text":5}}"#,
        "this is not json",
        TEXT,
        STEP_STOP,
    ]
    .join("\n");
    ctx.run_fake(&scenario, &[]).assert_exit(0);
    let reasons: Vec<serde_json::Value> = ctx
        .events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::Unparsed(u) => Some(serde_json::to_value(u.reason).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(reasons, ["unexpected_json", "unexpected_json", "not_json"]);
}
