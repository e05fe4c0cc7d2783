//! `--sandbox`: the agent's processes, run through the real binary under Landlock, can write only
//! in the work dir (and the agent's own dirs), cannot read the user's keys, connect only to the
//! ports allowed and signal nothing outside the run; a process that leaves the agent's session
//! is held all the same. The receipt records the sandbox and the refusals seen. The proofs that
//! bubblewrap keeps the same writes and reads take an enforcer ([`Under`]); tests/it/sandbox_bwrap.rs
//! runs them under bubblewrap.

use std::net::TcpListener;
use std::path::Path;
use std::process::Command;

use runbook::event::{EventKind, Outcome, ToolStatus};

use crate::support::{self, TestContext};

const STEP_START: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_test","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_test","snapshot":"5743","type":"step-start"}}"#;
const FINAL: &str = r#"{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_test","part":{"id":"prt_5","reason":"stop","snapshot":"5743","messageID":"msg_1","sessionID":"ses_test","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}"#;

/// The enforcer a test runs the agent under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Under {
    /// Landlock, which `--sandbox` comes to on a kernel with ABI 6 or newer (the suite's).
    Landlock,
    /// Bubblewrap, asked for by name.
    Bwrap,
}

impl Under {
    /// The flag that asks for it.
    pub(crate) fn flag(self) -> &'static str {
        match self {
            Under::Landlock => "--sandbox",
            Under::Bwrap => "--sandbox=bwrap",
        }
    }

    /// The receipt's `sandbox.by`.
    fn name(self) -> &'static str {
        match self {
            Under::Landlock => "landlock",
            Under::Bwrap => "bwrap",
        }
    }

    /// Asserts that `result` is a refusal as this enforcer makes it: Landlock's `EACCES` or
    /// `EPERM`; under bubblewrap also a read-only file system (`EROFS`).
    #[track_caller]
    pub(crate) fn refused(self, result: &Option<String>, what: &str) {
        let error = result
            .as_deref()
            .unwrap_or_else(|| panic!("{what} was allowed under {self:?}"));
        let bwrap = self == Under::Bwrap && error.contains("Read-only file system");
        assert!(
            bwrap
                || error.contains("Permission denied")
                || error.contains("Operation not permitted"),
            "{what} under {self:?}: {error}"
        );
    }
}

/// A `$try` directive of the fake agent.
pub(crate) fn attempt(op: &str, target: impl std::fmt::Display, setsid: bool) -> String {
    serde_json::json!({"$try": {"op": op, "target": target.to_string(), "setsid": setsid}})
        .to_string()
}

/// A whole OpenCode run doing `tries`, one after another.
pub(crate) fn scenario(tries: &[String]) -> String {
    let mut lines = vec![STEP_START.to_owned()];
    lines.extend(tries.iter().cloned());
    lines.push(FINAL.to_owned());
    lines.join("\n") + "\n"
}

/// Runs the fake agent playing `tries` with `extra` flags; its pid file in the work dir, which
/// it may write.
pub(crate) fn run(ctx: &TestContext, tries: &[String], extra: &[&str]) -> support::Outcome {
    let mut cmd = ctx.fake_run(&scenario(tries), extra);
    cmd.env("FAKE_AGENT_PID_FILE", ctx.work.join("agent.pids"));
    support::run(&mut cmd, std::time::Duration::from_secs(60))
}

/// How each `$try` ended, in order: `None` for success, else its error.
pub(crate) fn tried(ctx: &TestContext) -> Vec<Option<String>> {
    ctx.events()
        .into_iter()
        .filter_map(|e| match e.kind {
            EventKind::ToolCompleted(end) if end.call_id.starts_with("call_try_") => {
                Some(match end.status {
                    ToolStatus::Ok => None,
                    _ => Some(end.error.unwrap_or_default()),
                })
            }
            _ => None,
        })
        .collect()
}

#[track_caller]
fn refused(result: &Option<String>, what: &str) {
    Under::Landlock.refused(result, what);
}

pub(crate) fn sandboxed_denials(ctx: &TestContext) -> usize {
    ctx.events()
        .iter()
        .filter(|e| matches!(e.kind, EventKind::SandboxDenied { .. }))
        .count()
}

#[test]
fn writes_go_only_to_the_work_dir() {
    writes_go_only_to_the_work_dir_under(Under::Landlock);
}

/// `~/.ssh/x`, `/etc/x`, `../outside` and the home directory are refused, the work dir is
/// written, and the receipt records the enforcer, what it kept and the 4 refusals.
pub(crate) fn writes_go_only_to_the_work_dir_under(under: Under) {
    let ctx = TestContext::new();
    std::fs::create_dir_all(ctx.home.join(".ssh")).unwrap();
    let etc = Path::new("/etc/runbook-sandbox-test");
    let outside = ctx.root().join("outside");
    let tries = [
        attempt("write", ctx.home.join(".ssh/x").display(), false),
        attempt("write", etc.display(), false),
        attempt("write", "../outside", false),
        attempt("write", ctx.home.join("notes").display(), false),
        attempt("write", "inside.txt", false),
    ];
    let out = run(&ctx, &tries, &[under.flag()]);
    out.assert_exit(0);
    let results = tried(&ctx);
    assert_eq!(results.len(), 5, "{results:?}\n{}", out.stderr);
    under.refused(&results[0], "~/.ssh/x");
    under.refused(&results[1], "/etc/x");
    under.refused(&results[2], "../outside");
    under.refused(&results[3], "~/notes");
    assert_eq!(results[4], None, "the work dir");
    assert!(!ctx.home.join(".ssh/x").exists() && !etc.exists() && !outside.exists());
    assert_eq!(
        std::fs::read_to_string(ctx.work.join("inside.txt")).unwrap(),
        "x"
    );

    let receipt = ctx.ended_as(Outcome::Completed);
    let sandbox = receipt.sandbox.expect("the receipt records the sandbox");
    assert_eq!(sandbox.by, under.name());
    match under {
        Under::Landlock => {
            assert!(sandbox.abi.is_some_and(|v| v >= 6), "{sandbox:?}");
            assert!(sandbox.ports.contains(&443), "{sandbox:?}");
            assert!(sandbox.not_enforced.is_empty(), "{sandbox:?}");
        }
        Under::Bwrap => {
            assert_eq!(sandbox.abi, None, "{sandbox:?}");
            assert!(sandbox.ports.is_empty(), "no port is claimed: {sandbox:?}");
            for kept_not in ["tcp ports", "signals outside the run"] {
                assert!(
                    sandbox.not_enforced.iter().any(|n| n == kept_not),
                    "{sandbox:?}"
                );
            }
        }
    }
    assert!(
        sandbox.write.contains(&ctx.work.display().to_string()),
        "{sandbox:?}"
    );
    let ssh = ctx.home.join(".ssh").display().to_string();
    assert!(sandbox.read_deny.contains(&ssh), "{sandbox:?}");
    assert_eq!(sandbox.denied, 4, "{sandbox:?}");
    assert_eq!(sandboxed_denials(&ctx), 4);
}

#[test]
fn without_the_sandbox_the_same_writes_go_through() {
    let ctx = TestContext::new();
    let tries = [
        attempt("write", ctx.home.join("notes").display(), false),
        attempt("write", "../outside", false),
    ];
    run(&ctx, &tries, &[]).assert_exit(0);
    assert_eq!(tried(&ctx), [None, None]);
    assert!(ctx.root().join("outside").exists());
    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(receipt.sandbox, None);
    assert_eq!(sandboxed_denials(&ctx), 0);
}

#[test]
fn the_users_keys_cannot_be_read_but_the_work_dir_can() {
    the_users_keys_cannot_be_read_but_the_work_dir_can_under(Under::Landlock);
}

/// `~/.ssh/id_ed25519` is refused; a file beside the deny list and the work dir's are read.
pub(crate) fn the_users_keys_cannot_be_read_but_the_work_dir_can_under(under: Under) {
    let ctx = TestContext::new();
    let key = ctx.home.join(".ssh/id_ed25519");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
    std::fs::write(ctx.home.join(".aws-not-secret"), "fine").unwrap();
    ctx.write_work("README.md", "hello");
    let tries = [
        attempt("read", key.display(), false),
        attempt("read", "README.md", false),
        attempt("read", ctx.home.join(".aws-not-secret").display(), false),
    ];
    run(&ctx, &tries, &[under.flag()]).assert_exit(0);
    let results = tried(&ctx);
    under.refused(&results[0], "~/.ssh/id_ed25519");
    assert_eq!(results[1..], [None, None], "what is not denied is read");
    assert_eq!(ctx.receipt().sandbox.unwrap().by, under.name());
}

#[test]
fn keys_kept_as_links_are_denied_where_they_lie() {
    keys_kept_as_links_are_denied_where_they_lie_under(Under::Landlock);
}

/// A dotfile manager's home: `~/.ssh/id_ed25519` a link into `~/dotfiles`, `~/.aws` a link to a
/// directory there, `~/.aws/credentials` in turn a link into the Nix store's like. The key is
/// refused by every name it has; the rest of `~/dotfiles` is read.
pub(crate) fn keys_kept_as_links_are_denied_where_they_lie_under(under: Under) {
    use std::os::unix::fs::symlink;
    let ctx = TestContext::new();
    let dotfiles = ctx.home.join("dotfiles");
    let store = ctx.home.join("store");
    std::fs::create_dir_all(dotfiles.join("ssh")).unwrap();
    std::fs::create_dir_all(dotfiles.join("aws")).unwrap();
    std::fs::create_dir_all(&store).unwrap();
    std::fs::create_dir_all(ctx.home.join(".ssh")).unwrap();
    std::fs::write(
        dotfiles.join("ssh/id_ed25519"),
        "-----BEGIN OPENSSH PRIVATE KEY-----\n",
    )
    .unwrap();
    std::fs::write(store.join("credentials"), "aws_secret_access_key = x\n").unwrap();
    std::fs::write(dotfiles.join("vimrc"), "set nu\n").unwrap();
    symlink(
        dotfiles.join("ssh/id_ed25519"),
        ctx.home.join(".ssh/id_ed25519"),
    )
    .unwrap();
    symlink(dotfiles.join("aws"), ctx.home.join(".aws")).unwrap();
    symlink(store.join("credentials"), dotfiles.join("aws/credentials")).unwrap();
    let paths = [
        ctx.home.join(".ssh/id_ed25519"),
        dotfiles.join("ssh/id_ed25519"),
        ctx.home.join(".aws/credentials"),
        dotfiles.join("aws/credentials"),
        store.join("credentials"),
        dotfiles.join("vimrc"),
    ];
    let tries: Vec<String> = paths
        .iter()
        .map(|p| attempt("read", p.display(), false))
        .collect();
    run(&ctx, &tries, &[under.flag()]).assert_exit(0);
    let results = tried(&ctx);
    for (path, result) in paths.iter().zip(&results).take(5) {
        under.refused(result, &path.display().to_string());
    }
    assert_eq!(results[5], None, "what no denied path leads to is read");
    let sandbox = ctx.receipt().sandbox.unwrap();
    assert_eq!(sandbox.by, under.name());
    let key = dotfiles.join("ssh/id_ed25519").display().to_string();
    assert!(sandbox.read_deny.contains(&key), "{sandbox:?}");
}

#[test]
fn the_agent_gets_its_variables_and_the_runs_temp_dir() {
    the_agent_gets_its_variables_and_the_runs_temp_dir_under(Under::Landlock);
}

/// The agent's process has the variables runbook gives it: `TMPDIR`, the run's temp dir, which
/// it can write in; the run's mark; the configuration's `[env]`.
pub(crate) fn the_agent_gets_its_variables_and_the_runs_temp_dir_under(under: Under) {
    let ctx = TestContext::new();
    ctx.write_global_config("[env]\nRUNBOOK_TEST_SETTING = \"from-config\"\n");
    let script = "printf '%s\\n%s\\n%s\\n' \"$TMPDIR\" \"$RUNBOOK_RUN\" \"$RUNBOOK_TEST_SETTING\" > env.txt && echo x > \"$TMPDIR/scratch\"";
    let tries = [attempt("shell", script, false)];
    run(&ctx, &tries, &[under.flag()]).assert_exit(0);
    assert_eq!(tried(&ctx), [None], "the temp dir is writable");
    let seen = std::fs::read_to_string(ctx.work.join("env.txt")).unwrap();
    let lines: Vec<&str> = seen.lines().collect();
    assert_eq!(lines.len(), 3, "{seen:?}");
    let run_dir = ctx.run_dir();
    assert_eq!(
        lines[0],
        run_dir.join("tmp").display().to_string(),
        "{seen:?}"
    );
    assert!(!lines[1].is_empty(), "the run's mark: {seen:?}");
    assert_eq!(lines[2], "from-config", "{seen:?}");
    assert!(
        !run_dir.join("tmp").exists(),
        "the temp dir goes with the run"
    );
}

/// Without `--sandbox` too, the run's processes have the run's temp dir for `TMPDIR`, and what
/// they leave there goes when the run ends: an agent that leaves files in its temp dir at every
/// start (OpenCode: a 5.5 MB library) no longer fills the machine's.
#[test]
fn without_the_sandbox_the_agent_has_the_runs_temp_dir_which_goes_with_the_run() {
    let ctx = TestContext::new();
    let script = "printf '%s\\n' \"$TMPDIR\" > env.txt && echo x > \"$TMPDIR/left-behind\" && test -f \"$TMPDIR/left-behind\"";
    let tries = [attempt("shell", script, false)];
    run(&ctx, &tries, &[]).assert_exit(0);
    assert_eq!(tried(&ctx), [None], "the temp dir is writable");
    let seen = std::fs::read_to_string(ctx.work.join("env.txt")).unwrap();
    let run_dir = ctx.run_dir();
    assert_eq!(seen.trim_end(), run_dir.join("tmp").display().to_string());
    assert!(
        !run_dir.join("tmp").exists(),
        "the temp dir goes with the run"
    );
    assert!(ctx.receipt().sandbox.is_none());
}

#[test]
fn connections_go_only_to_the_ports_allowed() {
    let ctx = TestContext::new();
    let allowed = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let (a, o) = (
        allowed.local_addr().unwrap().port(),
        other.local_addr().unwrap().port(),
    );
    let tries = [attempt("connect", a, false), attempt("connect", o, false)];
    let port = a.to_string();
    run(&ctx, &tries, &["--sandbox", "--allow-port", &port]).assert_exit(0);
    let results = tried(&ctx);
    assert_eq!(results[0], None, "the allowed port");
    refused(&results[1], "another port");
    let sandbox = ctx.receipt().sandbox.unwrap();
    assert!(
        sandbox.ports.contains(&a) && !sandbox.ports.contains(&o),
        "{sandbox:?}"
    );
}

#[test]
fn a_process_in_a_session_of_its_own_is_held_all_the_same() {
    a_process_in_a_session_of_its_own_is_held_all_the_same_under(Under::Landlock);
}

/// A child that starts a session of its own cannot write outside the work dir and can write
/// in it; under Landlock its connection to a port not allowed is refused too (bubblewrap keeps
/// no ports: the connection goes through, and nothing claims otherwise).
pub(crate) fn a_process_in_a_session_of_its_own_is_held_all_the_same_under(under: Under) {
    let ctx = TestContext::new();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    let tries = [
        attempt("write", ctx.home.join("escaped").display(), true),
        attempt("connect", port, true),
        attempt("write", "from-the-child.txt", true),
        attempt("write", "../escaped", true),
    ];
    run(&ctx, &tries, &[under.flag()]).assert_exit(0);
    let results = tried(&ctx);
    under.refused(&results[0], "a write from a setsid child");
    match under {
        Under::Landlock => under.refused(&results[1], "a connection from a setsid child"),
        Under::Bwrap => assert_eq!(results[1], None, "bubblewrap keeps no ports"),
    }
    assert_eq!(results[2], None, "the work dir, from the child");
    under.refused(&results[3], "../escaped from a setsid child");
    assert!(!ctx.home.join("escaped").exists() && !ctx.root().join("escaped").exists());
    assert!(ctx.work.join("from-the-child.txt").exists());
}

#[test]
fn processes_outside_the_run_cannot_be_signalled() {
    let ctx = TestContext::new();
    let mut outside = Command::new("sleep").arg("30").spawn().unwrap();
    let pid = outside.id();
    let tries = [attempt("signal", pid, false), attempt("signal", pid, true)];
    run(&ctx, &tries, &["--sandbox"]).assert_exit(0);
    let results = tried(&ctx);
    refused(&results[0], "SIGTERM to a process outside");
    refused(&results[1], "SIGTERM from a setsid child");
    assert!(
        outside.try_wait().unwrap().is_none(),
        "the process outside still runs"
    );
    let _ = outside.kill();
    let _ = outside.wait();
}

#[test]
fn an_exfiltration_is_refused_and_the_receipt_says_so() {
    let ctx = TestContext::new();
    let key = ctx.home.join(".ssh/id_ed25519");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, "secret key").unwrap();
    let drop_box = TcpListener::bind("127.0.0.1:0").unwrap();
    drop_box.set_nonblocking(true).unwrap();
    let port = drop_box.local_addr().unwrap().port();
    let tries = [
        attempt("read", key.display(), false),
        attempt("write", ctx.root().join("stolen").display(), false),
        attempt("connect", port, false),
    ];
    let out = run(&ctx, &tries, &["--sandbox"]);
    out.assert_exit(0);
    for (result, what) in tried(&ctx).iter().zip(["read", "copy out", "send"]) {
        refused(result, what);
    }
    assert!(drop_box.accept().is_err(), "nothing reached the listener");
    assert!(!ctx.root().join("stolen").exists());
    let sandbox = ctx.receipt().sandbox.unwrap();
    assert_eq!(sandbox.denied, 3, "{sandbox:?}");
    assert!(
        out.stderr.contains("refused by the sandbox"),
        "the view says so: {}",
        out.stderr
    );
}

#[test]
fn a_repository_may_tighten_the_sandbox_but_not_loosen_it_untrusted() {
    let ctx = TestContext::new();
    let secret = ctx.home.join("project-secret.txt");
    std::fs::write(&secret, "s").unwrap();
    ctx.write_work(
        "runbook.toml",
        format!("[sandbox]\nread_deny = [\"{}\"]\n", secret.display()),
    );
    let tries = [attempt("read", secret.display(), false)];
    run(&ctx, &tries, &["--sandbox"]).assert_exit(0);
    refused(&tried(&ctx)[0], "a path the repository denies");

    let ctx = TestContext::new();
    ctx.write_work(
        "runbook.toml",
        "[sandbox]\nwrite = [\"/tmp\"]\nports = [22]\n",
    );
    let out = run(&ctx, &[], &["--sandbox"]);
    assert_ne!(out.code(), Some(0), "{}", out.stderr);
    out.assert_stderr_has("sandbox.write");
    assert!(ctx.run_dirs().is_empty(), "nothing started");

    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "sandbox = false\n");
    let out = run(&ctx, &[], &["--sandbox"]);
    assert_ne!(
        out.code(),
        Some(0),
        "turning it off needs trust: {}",
        out.stderr
    );
}

#[test]
fn config_shows_where_each_sandbox_entry_came_from() {
    let ctx = TestContext::new();
    ctx.write_global_config("[sandbox]\nwrite = [\"~/.cache/pip\"]\nports = [8080]\n");
    ctx.write_work("runbook.toml", "[sandbox]\nread_deny = [\"~/.kube\"]\n");
    let out = ctx.run(&["config", "--json", "--sandbox", "--allow-port", "9000"]);
    out.assert_exit(0);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let settings = json["settings"].as_array().unwrap();
    let home = ctx.home.display();
    for (entry, layer, named) in [
        (
            format!("sandbox.write.\"{home}/.cache/pip\""),
            "global",
            None,
        ),
        ("sandbox.ports.\"8080\"".to_owned(), "global", None),
        (format!("sandbox.read_deny.\"{home}/.kube\""), "repo", None),
        (
            "sandbox.ports.\"9000\"".to_owned(),
            "flag",
            Some("--allow-port"),
        ),
        ("sandbox".to_owned(), "flag", Some("--sandbox")),
    ] {
        let setting = settings
            .iter()
            .find(|s| s["key"] == entry.as_str())
            .unwrap_or_else(|| panic!("no {entry}: {}", out.stdout));
        assert_eq!(setting["from"]["layer"], layer, "{setting}");
        if let Some(name) = named {
            assert_eq!(setting["from"]["name"], name, "{setting}");
        }
    }
}

#[test]
fn checks_run_in_the_sandbox_and_observers_do_not() {
    let ctx = TestContext::new();
    let (check_out, observer_out) = (
        ctx.root().join("from-check"),
        ctx.root().join("from-observer"),
    );
    let check = format!("outside=sh -c 'echo x > {}'", check_out.display());
    let observer = format!("cat > {}", observer_out.display());
    let out = run(
        &ctx,
        &[],
        &[
            "--sandbox",
            "--repair-attempts",
            "0",
            "--check",
            &check,
            "--check",
            "inside=echo x > from-check.txt",
            "--on-event",
            &observer,
        ],
    );
    assert_ne!(out.code(), Some(0), "{}", out.stderr);
    let receipt = ctx.ended_as(Outcome::ChecksFailed);
    let passed: Vec<(&str, bool)> = receipt
        .checks
        .iter()
        .map(|c| (c.name.as_str(), c.passed))
        .collect();
    assert_eq!(passed, [("outside", false), ("inside", true)]);
    assert!(!check_out.exists(), "the check could not write outside");
    assert!(ctx.work.join("from-check.txt").exists());
    assert!(
        observer_out.exists(),
        "the observer, the user's own, is not sandboxed"
    );
}

#[test]
fn doctor_shows_the_landlock_abi_and_what_the_sandbox_would_enforce() {
    let ctx = TestContext::new();
    let out = ctx.run(&["doctor", "--json", "--sandbox", "--allow-port", "8443"]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let sandbox = &json["sandbox"];
    assert!(sandbox["abi"].as_u64().is_some_and(|v| v >= 6), "{sandbox}");
    assert_eq!(sandbox["on"], true);
    assert!(sandbox.get("problem").is_none(), "{sandbox}");
    assert_eq!(sandbox["by"], "landlock", "{sandbox}");
    assert!(
        sandbox["bwrap"]
            .as_str()
            .is_some_and(|p| p.ends_with("/bwrap")),
        "whether bubblewrap is installed (.ci/install-agents installs it): {sandbox}"
    );
    let has = |key: &str, value: serde_json::Value| {
        sandbox[key].as_array().is_some_and(|a| a.contains(&value))
    };
    assert!(
        has("write", ctx.work.display().to_string().into()),
        "{sandbox}"
    );
    let ssh = ctx.home.join(".ssh").display().to_string();
    assert!(has("read_deny", ssh.into()), "{sandbox}");
    assert!(
        has("ports", 8443.into()) && has("ports", 443.into()),
        "{sandbox}"
    );
    let human = ctx.run(&["doctor"]);
    assert!(
        human.stdout.contains("sandbox: Landlock ABI") && human.stdout.contains("bwrap at "),
        "{}",
        human.stdout
    );
}

#[test]
fn a_repair_turn_runs_in_the_sandbox_too() {
    let ctx = TestContext::new();
    let tries = [attempt("write", "../outside", false)];
    let out = run(
        &ctx,
        &tries,
        &[
            "--sandbox",
            "--repair-attempts",
            "1",
            "--check",
            "fixed=test -f fixed.txt",
        ],
    );
    assert_ne!(out.code(), Some(0), "{}", out.stderr);
    let receipt = ctx.ended_as(Outcome::ChecksFailed);
    assert_eq!(receipt.turns.len(), 2, "the task and one repair turn");
    let results = tried(&ctx);
    assert_eq!(results.len(), 2, "{results:?}");
    for result in &results {
        refused(result, "../outside, in the task's turn and the repair's");
    }
    assert!(!ctx.root().join("outside").exists());
    assert_eq!(receipt.sandbox.unwrap().denied, 2);
}

/// OpenCode tells a failed command only by its exit code; the refusal is in its output. In the
/// sandbox, the line that tells of it joins the call's error and counts as a denial; a command
/// that failed for another reason does not.
#[test]
fn a_shell_command_refused_by_the_sandbox_counts_as_a_denial() {
    let ctx = TestContext::new();
    let key = ctx.home.join(".ssh/id_ed25519");
    std::fs::create_dir_all(key.parent().unwrap()).unwrap();
    std::fs::write(&key, "-----BEGIN OPENSSH PRIVATE KEY-----\n").unwrap();
    let tries = [
        attempt("shell", format!("echo start; cat {}", key.display()), false),
        attempt("shell", "echo x > ../outside", false),
        attempt("shell", "touch /etc/runbook-sandbox-shell", false),
        attempt("shell", "ls ./missing-file", false),
        attempt("shell", "echo fine > inside.txt", false),
    ];
    run(&ctx, &tries, &["--sandbox"]).assert_exit(0);
    let results = tried(&ctx);
    for (i, what) in ["cat the key", "write ../outside", "touch /etc/x"]
        .iter()
        .enumerate()
    {
        refused(&results[i], what);
        let error = results[i].as_deref().unwrap_or_default();
        assert!(error.starts_with("exit code "), "{what}: {error}");
        assert!(!error.contains("start"), "only the refusal's line: {error}");
    }
    let other = results[3].as_deref().expect("ls of a missing file failed");
    assert!(!other.contains("denied"), "{other}");
    assert_eq!(results[4], None);
    assert!(ctx.work.join("inside.txt").exists());
    assert!(!ctx.root().join("outside").exists());
    assert_eq!(sandboxed_denials(&ctx), 3);
    assert_eq!(ctx.ended_as(Outcome::Completed).sandbox.unwrap().denied, 3);
}

/// Outside the sandbox a command's output is not searched: its error stays its exit code.
#[test]
fn without_the_sandbox_a_commands_output_is_not_searched_for_refusals() {
    let ctx = TestContext::new();
    let tries = [attempt(
        "shell",
        "echo 'x: Permission denied' >&2; exit 1",
        false,
    )];
    run(&ctx, &tries, &[]).assert_exit(0);
    assert_eq!(tried(&ctx), [Some("exit code 1".to_owned())]);
    assert_eq!(sandboxed_denials(&ctx), 0);
}

#[test]
fn a_repositorys_variables_open_no_port_in_the_sandbox() {
    let mut ctx = TestContext::new();
    ctx.write_work(".env", "DOCS_URL=http://docs.example:2222/\n");
    ctx.write_work(
        "runbook.toml",
        "[env]\nWIKI = \"http://wiki.example:2323/x\"\n",
    );
    ctx.env("OPENAI_BASE_URL", "http://127.0.0.1:4545/v1");
    let out = ctx.run(&["doctor", "--json", "--sandbox"]);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    let ports: Vec<u64> = json["sandbox"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_u64)
        .collect();
    assert!(
        !ports.contains(&2222) && !ports.contains(&2323),
        "a repository's plain variables open nothing: {ports:?}"
    );
    assert!(
        ports.contains(&443) && ports.contains(&4545),
        "HTTPS and the provider's address in the user's own environment: {ports:?}"
    );
}

/// The ports `runbook doctor --json` says the sandbox would allow here.
fn doctor_ports(ctx: &TestContext, extra: &[&str]) -> Vec<u64> {
    let mut args = vec!["doctor", "--json", "--sandbox"];
    args.extend_from_slice(extra);
    let out = ctx.run(&args);
    let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
    json["sandbox"]["ports"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(serde_json::Value::as_u64)
        .collect()
}

#[test]
fn a_repositorys_opencode_json_opens_no_port_untrusted_and_a_mere_mention_never_does() {
    let mut ctx = TestContext::new();
    let repo_config = r#"{
        // JSONC, as OpenCode reads it
        "provider": {"local": {"options": {"baseURL": "http://127.0.0.1:41234/v1"}}},
        "mcp": {"db": {"type": "remote", "url": "http://127.0.0.1:5432"}},
        "instructions": ["see http://127.0.0.1:22"],
    }"#;
    for name in ["opencode.json", "opencode.jsonc"] {
        std::fs::write(ctx.work.join(name), repo_config).unwrap();
    }
    let own = ctx.config_home().join("opencode");
    std::fs::create_dir_all(&own).unwrap();
    std::fs::write(
        own.join("opencode.json"),
        r#"{"provider": {"mine": {"options": {"baseURL": "http://127.0.0.1:41235"}}}, "x": "http://127.0.0.1:2222"}"#,
    )
    .unwrap();
    let ports = doctor_ports(&ctx, &[]);
    assert!(
        !ports.contains(&41234),
        "the repository's provider, untrusted: {ports:?}"
    );
    assert!(ports.contains(&41235), "the user's own provider: {ports:?}");
    for mention in [5432, 22, 2222] {
        assert!(
            !ports.contains(&mention),
            "an address that names no provider: {ports:?}"
        );
    }
    // Trusted for the run, the repository's provider is reached; its mentions still are not.
    let trusted = ctx.work.display().to_string();
    ctx.env("RUNBOOK_TRUST", trusted);
    let ports = doctor_ports(&ctx, &[]);
    assert!(ports.contains(&41234), "{ports:?}");
    assert!(!ports.contains(&5432) && !ports.contains(&22), "{ports:?}");
}

#[test]
fn an_untrusted_repositorys_provider_port_is_said_and_stays_closed_in_a_run() {
    let ctx = TestContext::new();
    ctx.write_work(
        "opencode.json",
        r#"{"provider": {"x": {"options": {"baseURL": "http://127.0.0.1:41299/v1"}}}}"#,
    );
    let out = run(&ctx, &[], &["--sandbox"]);
    out.assert_exit(0);
    out.assert_stderr_has("port 41299");
    out.assert_stderr_has("--allow-port 41299");
    let sandbox = ctx.receipt().sandbox.expect("sandboxed");
    assert!(!sandbox.ports.contains(&41299), "{sandbox:?}");
}
