//! `--sandbox=bwrap` on a kernel where Landlock works: the enforcer named is the one used. The
//! proofs of tests/it/sandbox.rs, run under bubblewrap (`.ci/install-agents` installs it), and
//! what bubblewrap does not keep, which the receipt says and nothing claims otherwise. A
//! bubblewrap that cannot start is found before anything starts. How the enforcer is chosen
//! (flag, file, variable), what a repository may choose untrusted, and `runbook doctor`'s word
//! on each choice.

use std::net::TcpListener;
use std::os::unix::fs::PermissionsExt as _;
use std::path::PathBuf;

use runbook::event::Outcome;

use crate::sandbox::{
    Under, a_process_in_a_session_of_its_own_is_held_all_the_same_under, attempt,
    keys_kept_as_links_are_denied_where_they_lie_under, run, sandboxed_denials,
    the_agent_gets_its_variables_and_the_runs_temp_dir_under,
    the_users_keys_cannot_be_read_but_the_work_dir_can_under, tried,
    writes_go_only_to_the_work_dir_under,
};
use crate::support::TestContext;

/// What the real bubblewrap prints where unprivileged user namespaces are off.
const NO_NAMESPACES: &str = "bwrap: No permissions to create new namespace, likely because the kernel does not allow non-privileged user namespaces. On e.g. debian this can be enabled with 'sysctl kernel.unprivileged_userns_clone=1'.";

#[test]
fn under_bwrap_writes_go_only_to_the_work_dir() {
    writes_go_only_to_the_work_dir_under(Under::Bwrap);
}

#[test]
fn under_bwrap_the_users_keys_cannot_be_read_but_the_work_dir_can() {
    the_users_keys_cannot_be_read_but_the_work_dir_can_under(Under::Bwrap);
}

#[test]
fn under_bwrap_keys_kept_as_links_are_denied_where_they_lie() {
    keys_kept_as_links_are_denied_where_they_lie_under(Under::Bwrap);
}

#[test]
fn under_bwrap_the_agent_gets_its_variables_and_the_runs_temp_dir() {
    the_agent_gets_its_variables_and_the_runs_temp_dir_under(Under::Bwrap);
}

#[test]
fn under_bwrap_a_process_in_a_session_of_its_own_is_held_all_the_same() {
    a_process_in_a_session_of_its_own_is_held_all_the_same_under(Under::Bwrap);
}

/// Bubblewrap filters no ports: a connection to a port not allowed goes through, is not counted
/// as refused, and the receipt claims no ports and lists them as not enforced; the view says so
/// at the start.
#[test]
fn under_bwrap_ports_are_not_kept_and_nothing_claims_they_are() {
    let ctx = TestContext::new();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = other.local_addr().unwrap().port();
    let out = run(
        &ctx,
        &[attempt("connect", port, false)],
        &["--sandbox=bwrap"],
    );
    out.assert_exit(0);
    assert_eq!(tried(&ctx), [None], "the connection went through");
    assert_eq!(sandboxed_denials(&ctx), 0);
    let sandbox = ctx.ended_as(Outcome::Completed).sandbox.unwrap();
    assert_eq!(sandbox.by, "bwrap");
    assert!(sandbox.ports.is_empty(), "{sandbox:?}");
    assert!(
        sandbox.not_enforced.contains(&"tcp ports".to_owned()),
        "{sandbox:?}"
    );
    out.assert_stderr_has("not enforced: tcp ports");
}

/// Run as root (as the suite is), the agent under bubblewrap keeps no capability: it can neither
/// unmount what hides `~/.ssh` nor make `/` writable again.
#[test]
fn under_bwrap_the_agent_cannot_undo_the_mounts_even_as_root() {
    let ctx = TestContext::new();
    let ssh = ctx.home.join(".ssh");
    std::fs::create_dir_all(&ssh).unwrap();
    let key = "-----BEGIN OPENSSH PRIVATE KEY----- runbook-bwrap-test-key";
    std::fs::write(ssh.join("id_ed25519"), key).unwrap();
    let marker = std::path::Path::new("/etc/runbook-bwrap-remount-test");
    let tries = [
        attempt(
            "shell",
            format!("umount {s} && cat {s}/id_ed25519", s = ssh.display()),
            false,
        ),
        attempt(
            "shell",
            format!("mount -o remount,rw / && touch {}", marker.display()),
            false,
        ),
    ];
    run(&ctx, &tries, &["--sandbox=bwrap"]).assert_exit(0);
    let results = tried(&ctx);
    assert_eq!(results.len(), 2, "{results:?}");
    assert!(results.iter().all(Option::is_some), "{results:?}");
    assert!(!marker.exists(), "/ stayed read-only");
    assert!(
        ctx.assert_no_run_file_holds("runbook-bwrap-test-key") > 0,
        "the run's files were read"
    );
}

/// A `bwrap` first on PATH that prints `words` on stderr and exits 1, as the real one does
/// where it cannot make its namespaces.
fn failing_bwrap(ctx: &mut TestContext, words: &str) -> PathBuf {
    let dir = ctx.root().join("fake-bin");
    std::fs::create_dir_all(&dir).unwrap();
    let bwrap = dir.join("bwrap");
    let said = ctx.root().join("bwrap-words");
    std::fs::write(&said, words).unwrap();
    std::fs::write(
        &bwrap,
        format!(
            "#!/bin/sh\necho \"$$ $*\" >> '{}/bwrap-calls'\ncat '{}' >&2\nexit 1\n",
            ctx.root().display(),
            said.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&bwrap, std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![dir];
    paths.extend(std::env::split_paths(&path));
    let joined = std::env::join_paths(paths).unwrap();
    ctx.env("PATH", joined.to_str().unwrap());
    bwrap
}

/// A bubblewrap that cannot start (user namespaces off) is found by a probe before the agent
/// starts: one line with bwrap's words and what to do, the usage-error code, no run directory,
/// no agent, no process left.
#[test]
fn a_bwrap_that_cannot_start_is_refused_in_a_line_before_anything_starts() {
    let mut ctx = TestContext::new();
    let bwrap = failing_bwrap(&mut ctx, NO_NAMESPACES);
    let out = run(
        &ctx,
        &[attempt("write", "inside.txt", false)],
        &["--sandbox=bwrap"],
    );
    out.assert_exit(2);
    let lines: Vec<&str> = out.stderr.trim().lines().collect();
    assert_eq!(lines.len(), 1, "one line: {}", out.stderr);
    for said in [
        "No permissions to create new namespace",
        &bwrap.display().to_string(),
        "--sandbox=landlock",
        "user namespaces",
        "without --sandbox",
    ] {
        out.assert_stderr_has(said);
    }
    assert!(ctx.run_dirs().is_empty(), "no run directory, no receipt");
    assert!(!ctx.work.join("inside.txt").exists(), "the agent never ran");
    assert!(
        !ctx.work.join("agent.pids").exists(),
        "the agent never started"
    );
    let calls = std::fs::read_to_string(ctx.root().join("bwrap-calls")).unwrap();
    assert_eq!(calls.lines().count(), 1, "one probe: {calls}");
    assert!(
        calls.contains("--ro-bind / /") && calls.trim_end().ends_with("-- true"),
        "the probe runs `true` under the run's kind of options: {calls}"
    );
    let pid: i32 = calls.split_whitespace().next().unwrap().parse().unwrap();
    assert!(!crate::support::alive(pid), "the probe is gone");
}

/// What a failing bwrap prints is foreign: its escape sequences and lines reach the terminal
/// made visible, on the one line.
#[test]
fn a_failing_bwraps_words_are_shown_made_safe() {
    let mut ctx = TestContext::new();
    failing_bwrap(
        &mut ctx,
        "bwrap: \x1b]0;owned\x07\x1b[31mCreating new namespace failed\nsecond line\r\n",
    );
    let out = run(&ctx, &[], &["--sandbox=bwrap"]);
    out.assert_exit(2);
    assert!(
        !out.stderr.contains('\x1b') && !out.stderr.contains('\x07'),
        "{:?}",
        out.stderr
    );
    assert_eq!(out.stderr.trim().lines().count(), 1, "{:?}", out.stderr);
    out.assert_stderr_has("Creating new namespace failed second line");
    assert!(ctx.run_dirs().is_empty());
}

/// The enforcer is named on the command line, in a file or a variable; `runbook config` shows
/// which and where from; the run uses it; a name that is none is refused in a line; a bare
/// `--sandbox` before the prompt does not take the prompt as its value.
#[test]
fn the_enforcer_is_chosen_by_name_and_config_shows_where_from() {
    let ctx = TestContext::new();
    ctx.write_global_config("sandbox = \"bwrap\"\n");
    let setting = |args: &[&str], env: Option<&str>| {
        let mut cmd = ctx.runbook(&[&["config", "--json"], args].concat());
        if let Some(value) = env {
            cmd.env("RUNBOOK_SANDBOX", value);
        }
        let out = crate::support::run(&mut cmd, std::time::Duration::from_secs(30));
        out.assert_exit(0);
        let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        json["settings"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["key"] == "sandbox")
            .cloned()
            .unwrap()
    };
    let file = setting(&[], None);
    assert_eq!(file["value"], "bwrap", "{file}");
    assert_eq!(file["from"]["layer"], "global", "{file}");
    let flag = setting(&["--sandbox=landlock"], Some("off"));
    assert_eq!(flag["value"], "landlock");
    assert_eq!(flag["from"]["name"], "--sandbox");
    let bare = setting(&["--sandbox"], None);
    assert_eq!(bare["value"], "auto", "{bare}");
    let env = setting(&[], Some("off"));
    assert_eq!(env["value"], false, "{env}");
    assert_eq!(env["from"]["name"], "RUNBOOK_SANDBOX", "{env}");

    run(&ctx, &[], &[]).assert_exit(0);
    assert_eq!(ctx.receipt().sandbox.unwrap().by, "bwrap", "from the file");

    let ctx = TestContext::new();
    run(&ctx, &[], &["--sandbox=landlock"]).assert_exit(0);
    assert_eq!(ctx.receipt().sandbox.unwrap().by, "landlock");

    let ctx = TestContext::new();
    let out = run(&ctx, &[], &["--sandbox=landlok"]);
    out.assert_exit(2);
    out.assert_stderr_has("did you mean `landlock`?");
    assert!(ctx.run_dirs().is_empty());

    let ctx = TestContext::new();
    let bin = crate::support::fake_agent_bin();
    let scenario = ctx.root().join("empty.ndjson");
    std::fs::write(&scenario, "").unwrap();
    let mut cmd = ctx.runbook(&[
        "run",
        "--agent-bin",
        bin.to_str().unwrap(),
        "--sandbox",
        "do the thing",
    ]);
    cmd.env("FAKE_AGENT_SCENARIO", &scenario);
    let out = crate::support::run(&mut cmd, std::time::Duration::from_secs(60));
    let receipt = ctx.receipt();
    assert_eq!(receipt.sandbox.unwrap().by, "landlock", "{}", out.stderr);
    assert_eq!(receipt.prompt, "do the thing");
}

/// A repository's file may turn the sandbox on with any enforcer, or name a stronger one than
/// the user's own file; a weaker one (bubblewrap keeps no ports nor signals) needs trust.
#[test]
fn a_repository_may_name_a_stronger_enforcer_but_not_a_weaker_one_untrusted() {
    let ctx = TestContext::new();
    ctx.write_work("runbook.toml", "sandbox = \"bwrap\"\n");
    run(&ctx, &[], &[]).assert_exit(0);
    assert_eq!(ctx.receipt().sandbox.unwrap().by, "bwrap", "turned on");

    let ctx = TestContext::new();
    ctx.write_global_config("sandbox = \"bwrap\"\n");
    ctx.write_work("runbook.toml", "[sandbox]\nenabled = \"landlock\"\n");
    run(&ctx, &[], &[]).assert_exit(0);
    assert_eq!(ctx.receipt().sandbox.unwrap().by, "landlock", "tightened");

    for (own, theirs) in [
        ("landlock", "\"bwrap\""),
        ("landlock", "true"),
        ("auto", "\"bwrap\""),
    ] {
        let ctx = TestContext::new();
        ctx.write_global_config(&format!("sandbox = \"{own}\"\n"));
        ctx.write_work("runbook.toml", format!("sandbox = {theirs}\n"));
        let out = run(&ctx, &[], &[]);
        out.assert_exit(2);
        out.assert_stderr_has("runbook trust");
        assert!(
            ctx.run_dirs().is_empty(),
            "{own} over {theirs}: nothing started"
        );
    }
}

/// `runbook doctor` says what each choice would come to here, and what bubblewrap would not
/// keep; with a bubblewrap that cannot start, that choice says why, and asking for it is a
/// problem.
#[test]
fn doctor_says_what_each_enforcer_would_keep_here() {
    let choices = |ctx: &TestContext, args: &[&str]| {
        let out = ctx.run(&[&["doctor", "--json"], args].concat());
        let json: serde_json::Value = serde_json::from_str(&out.stdout).unwrap();
        (out, json["sandbox"].clone())
    };
    let ctx = TestContext::new();
    let (_, sandbox) = choices(&ctx, &[]);
    let choice = |sandbox: &serde_json::Value, asked: &str| {
        sandbox["choices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["asked"] == asked)
            .cloned()
            .unwrap_or_else(|| panic!("no {asked}: {sandbox}"))
    };
    assert_eq!(choice(&sandbox, "auto")["by"], "landlock", "{sandbox}");
    assert_eq!(choice(&sandbox, "landlock")["by"], "landlock", "{sandbox}");
    let bwrap = choice(&sandbox, "bwrap");
    assert_eq!(bwrap["by"], "bwrap", "{sandbox}");
    assert!(
        bwrap["not_enforced"]
            .as_array()
            .unwrap()
            .contains(&"tcp ports".into()),
        "{bwrap}"
    );
    let human = ctx.run(&["doctor"]);
    for line in [
        "--sandbox=auto: Landlock ABI",
        "--sandbox=bwrap: bubblewrap: writes, reads; not enforced: tcp ports",
    ] {
        human.assert_stdout_has(line);
    }

    let mut ctx = TestContext::new();
    failing_bwrap(&mut ctx, NO_NAMESPACES);
    let (out, sandbox) = choices(&ctx, &["--sandbox=bwrap"]);
    let bwrap = choice(&sandbox, "bwrap");
    assert_eq!(bwrap["by"], serde_json::Value::Null, "{bwrap}");
    assert!(
        bwrap["problem"]
            .as_str()
            .is_some_and(|p| p.contains("No permissions to create new namespace")),
        "{bwrap}"
    );
    assert_eq!(sandbox["asked"], "bwrap");
    assert!(sandbox["problem"].is_string(), "{sandbox}");
    assert_ne!(out.code(), Some(0), "asked for, it is a problem");
    assert_eq!(choice(&sandbox, "auto")["by"], "landlock", "{sandbox}");
}
