//! What an agent or a cloned repository leaves behind for runbook itself to act on, outside the
//! sandbox and without trust: links where runbook appends its events, git's own directory named
//! as a place to write, a repository's task file asking for a weaker sandbox than the user's.

use std::os::unix::fs::{PermissionsExt as _, symlink};
use std::path::Path;

use crate::sandbox::{attempt, run, tried};
use crate::support::{self, TestContext};

const STEP_START: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_test","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_test","snapshot":"5743","type":"step-start"}}"#;
const FINAL: &str = r#"{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_test","part":{"id":"prt_5","reason":"stop","snapshot":"5743","messageID":"msg_1","sessionID":"ses_test","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}"#;
/// A branch name that is a command to a shell reading the file it lands in.
const BRANCH: &str = r#"{"type":"text","timestamp":1795319488778,"sessionID":"ses_test","part":{"id":"prt_2","messageID":"msg_1","sessionID":"ses_test","type":"text","text":"x$(touch${IFS}pwned)","time":{"start":1795319488595,"end":1795319488772}}}"#;

fn scenario() -> String {
    [STEP_START, BRANCH, FINAL].join("\n") + "\n"
}

/// The user's file an agent would have runbook write into.
fn bashrc(ctx: &TestContext) -> std::path::PathBuf {
    let path = ctx.home.join(".bashrc");
    std::fs::write(&path, "# mine\n").unwrap();
    path
}

/// How an agent plants something at `file` (under the work dir) that leads to `target`.
type Plant = fn(&TestContext, &Path, &Path);

#[test]
fn events_to_follows_no_link_an_agent_planted_and_appends_to_no_file_not_its_own() {
    // Each as a sandboxed run could leave it in the work dir for the next run, unsandboxed.
    let plants: [(&str, &str, Plant); 5] = [
        (
            "a link at the file",
            "logs/e.ndjson",
            |ctx, file, target| {
                symlink(target, ctx.work.join(file)).unwrap();
            },
        ),
        ("a dangling link", "logs/e.ndjson", |ctx, file, _| {
            symlink(ctx.home.join(".profile"), ctx.work.join(file)).unwrap();
        }),
        ("a link on the way", "logs/.bashrc", |ctx, _, _| {
            std::fs::remove_dir(ctx.work.join("logs")).unwrap();
            symlink(&ctx.home, ctx.work.join("logs")).unwrap();
        }),
        ("a hard link", "logs/e.ndjson", |ctx, file, target| {
            std::fs::hard_link(target, ctx.work.join(file)).unwrap();
        }),
        ("an executable file", "logs/e.ndjson", |ctx, file, _| {
            let path = ctx.work.join(file);
            std::fs::write(&path, "#!/bin/sh\n").unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }),
    ];
    for (what, file, plant) in plants {
        let ctx = TestContext::new();
        let target = bashrc(&ctx);
        std::fs::create_dir_all(ctx.work.join("logs")).unwrap();
        plant(&ctx, Path::new(file), &target);
        let path = ctx.work.join(file).display().to_string();
        let out = ctx.run_fake(&scenario(), &["--events-to", &path]);
        out.assert_exit(0);
        assert_eq!(
            std::fs::read_to_string(&target).unwrap(),
            "# mine\n",
            "{what}: the user's file is untouched\n{}",
            out.stderr
        );
        assert!(!ctx.home.join(".profile").exists(), "{what}");
        let said: Vec<&str> = out
            .stderr
            .lines()
            .filter(|l| l.contains("cannot be started"))
            .collect();
        assert_eq!(said.len(), 1, "{what}: said once\n{}", out.stderr);
        assert!(
            said[0].contains("link") || said[0].contains("executable"),
            "{what}: says why: {}",
            said[0]
        );
    }
    // Nothing planted: every event reaches the file.
    let ctx = TestContext::new();
    std::fs::create_dir_all(ctx.work.join("logs")).unwrap();
    let path = ctx.work.join("logs/e.ndjson");
    let out = ctx.run_fake(&scenario(), &["--events-to", &path.display().to_string()]);
    out.assert_exit(0);
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.contains("run.finished"), "{written}");
}

#[test]
fn a_repository_cannot_name_gits_own_directory_as_a_place_to_write_untrusted() {
    for (key, value) in [
        ("events_to", ".git/hooks/post-checkout"),
        ("events_to", ".git/config"),
        ("events_to", "hooks/post-checkout"),
        ("events_to", "sub/.git/hooks/post-merge"),
        ("events_to", "logs/../.git/hooks/post-checkout"),
        ("runs_dir", ".git/hooks"),
    ] {
        let ctx = TestContext::new();
        support::git_init(&ctx.work, &ctx.home);
        let hook = ctx.work.join(".git/hooks/post-checkout");
        std::fs::write(&hook, "#!/bin/sh\necho checked out\n").unwrap();
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(ctx.work.join("sub/.git/hooks")).unwrap();
        // A link the clone carries, into git's own directory.
        symlink(".git/hooks", ctx.work.join("hooks")).unwrap();
        ctx.write_work("runbook.toml", format!("{key} = \"{value}\"\n"));
        let config = std::fs::read(ctx.work.join(".git/config")).unwrap();
        let out = ctx.run_fake(&scenario(), &[]);
        assert_eq!(
            out.code(),
            Some(2),
            "{key} = {value}: refused\n{}",
            out.stderr
        );
        out.assert_stderr_has("not trusted");
        out.assert_stderr_has(key);
        assert_eq!(
            std::fs::read_to_string(&hook).unwrap(),
            "#!/bin/sh\necho checked out\n",
            "{value}"
        );
        assert_eq!(std::fs::read(ctx.work.join(".git/config")).unwrap(), config);
        assert!(!ctx.work.join("sub/.git/hooks/post-merge").exists());
        assert!(ctx.run_dirs().is_empty(), "nothing started");
    }
    // The repository's own place for logs needs no trust.
    let ctx = TestContext::new();
    support::git_init(&ctx.work, &ctx.home);
    std::fs::create_dir_all(ctx.work.join("logs")).unwrap();
    ctx.write_work("runbook.toml", "events_to = \"logs/e.ndjson\"\n");
    ctx.run_fake(&scenario(), &[]).assert_exit(0);
    assert!(ctx.work.join("logs/e.ndjson").is_file());
}

#[test]
fn a_task_file_never_loosens_the_sandbox_the_users_variable_asks_for() {
    for (asked, task, by) in [
        ("landlock", "\"bwrap\"", "landlock"),
        ("landlock", "\"auto\"", "landlock"),
        ("landlock", "true", "landlock"),
        ("bwrap", "\"landlock\"", "landlock"),
    ] {
        let mut ctx = TestContext::new();
        support::git_init(&ctx.work, &ctx.home);
        ctx.write_work(
            "tasks.toml",
            format!("[[task]]\nid = \"a\"\nprompt = \"do a\"\nsandbox = {task}\n"),
        );
        ctx.env("RUNBOOK_SANDBOX", asked);
        let tries = [attempt("write", ctx.home.join("planted").display(), false)];
        let out = run(
            &ctx,
            &tries,
            &["--task-file", "tasks.toml", "--task-id", "a"],
        );
        out.assert_exit(0);
        let sandbox = ctx.receipt().sandbox.expect("sandboxed");
        assert_eq!(
            sandbox.by, by,
            "{asked} and a task's {task}\n{}",
            out.stderr
        );
        assert!(tried(&ctx)[0].is_some(), "the write outside was refused");
        if by == asked {
            out.assert_stderr_has("would loosen the sandbox RUNBOOK_SANDBOX asks for");
        }
    }
}

#[test]
fn a_fifo_the_repositorys_config_includes_holds_up_no_git_command_of_runbooks() {
    for planted in ["include", "config"] {
        let mut ctx = TestContext::new();
        support::git_init(&ctx.work, &ctx.home);
        let git = ctx.work.join(".git");
        let fifo = match planted {
            // A file the repository's configuration includes, made a FIFO nobody writes.
            "include" => {
                let mut config = std::fs::read_to_string(git.join("config")).unwrap();
                config.push_str("[include]\n\tpath = planted.fifo\n");
                std::fs::write(git.join("config"), config).unwrap();
                git.join("planted.fifo")
            }
            // The configuration itself.
            _ => {
                std::fs::remove_file(git.join("config")).unwrap();
                git.join("config")
            }
        };
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        ctx.env("RUNBOOK_GIT_TIMEOUT", "1s");
        let out = ctx.run_fake(&scenario(), &[]);
        out.assert_exit(0);
        let receipt = ctx.receipt();
        assert_eq!(
            receipt.outcome,
            runbook::event::Outcome::Completed,
            "{planted}"
        );
        assert!(
            receipt.changes.is_none(),
            "{planted}: nothing to say of git"
        );
    }
}
