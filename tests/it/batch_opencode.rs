//! `runbook batch` of the real OpenCode against the fake provider: three tasks at once, each in
//! its own worktree, each completing with its edit only on its own branch.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::support::fake_llm::{self, FakeLlm, OpencodeConfig, Reply, ToolCall, Usage};
use crate::support::{self, TestContext};

/// The batch's limit: three OpenCodes starting at once on a small machine.
const LIMIT: Duration = Duration::from_secs(180);

fn git(dir: &Path, home: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("HOME", home)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .expect("run git");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn three_opencode_tasks_at_once_each_complete_with_their_edit_only_on_their_own_branch() {
    let Some(bin) = support::opencode_bin() else {
        return;
    };
    let mut ctx = TestContext::new();
    // Each task writes the branch it is on into a file of its worktree (a relative path: the
    // command runs in the task's worktree), then answers.
    let write = ToolCall::new(
        "call_mark",
        "bash",
        json!({"command": "git rev-parse --abbrev-ref HEAD > mark.txt", "description": "Mark"}),
    );
    let llm = FakeLlm::start(vec![
        Reply::tool_calls(None, vec![write], Usage::new(1400, 30)),
        Reply::text("Marked.", Usage::new(1500, 10)),
    ]);
    fake_llm::opencode_against(&mut ctx, &llm.base_url(), &OpencodeConfig::default());
    let home = ctx.home.clone();
    git(&ctx.work, &home, &["init", "-q", "-b", "main"]);
    std::fs::write(ctx.work.join("README.md"), "# Demo\n").unwrap();
    git(&ctx.work, &home, &["add", "."]);
    git(&ctx.work, &home, &["commit", "-q", "-m", "start"]);
    let file = ctx.root().join("tasks.toml");
    std::fs::write(
        &file,
        format!(
            "[defaults]\nmodel = \"fake/fake-model\"\npermissions = \"bypass\"\n\
             [defaults.agents.opencode]\nbin = \"{}\"\n\n\
             [[task]]\nid = \"one\"\nprompt = \"Mark the branch\"\n\
             [[task]]\nid = \"two\"\nprompt = \"Mark the branch\"\n\
             [[task]]\nid = \"three\"\nprompt = \"Mark the branch\"\n",
            bin.display()
        ),
    )
    .unwrap();
    let out = support::run(
        &mut ctx.runbook(&["batch", file.to_str().unwrap(), "-j", "3"]),
        LIMIT,
    );
    let batches = ctx.root().join("batches");
    let dir = std::fs::read_dir(&batches)
        .unwrap()
        .next()
        .unwrap()
        .unwrap();
    let record: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("batch.json")).unwrap()).unwrap();
    // What each run's agent said on stderr, to tell why one failed.
    let said: Vec<String> = record["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|t| t["run_dir"].as_str())
        .map(|d| std::fs::read_to_string(Path::new(d).join("stderr.log")).unwrap_or_default())
        .collect();
    let log_dir = home.join(".local/share/opencode/log");
    let logs: String = std::fs::read_dir(&log_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| std::fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    let why = format!(
        "{}\n{}\n{}\nOpenCode's log:\n{}",
        out.stderr,
        out.stdout,
        said.join("\n---\n"),
        logs.lines()
            .filter(|l| !l.contains("level=INFO"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    assert_eq!(out.code(), Some(0), "{why}");
    for task in ["one", "two", "three"] {
        let entry = record["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task"] == task)
            .unwrap_or_else(|| panic!("{task} in {record:#}"));
        assert_eq!(entry["outcome"], "completed", "{task}: {why}");
        let branch = entry["branch"].as_str().expect("a branch").to_owned();
        let mark = git(&ctx.work, &home, &["show", &format!("{branch}:mark.txt")]);
        assert_eq!(mark.trim(), branch, "{task}'s edit is its own");
        let changed = git(&ctx.work, &home, &["diff", "--name-only", "main", &branch]);
        assert_eq!(changed.trim(), "mark.txt", "{task}: only its own edit");
    }
    assert!(
        !ctx.work.join("mark.txt").exists(),
        "the main checkout is untouched"
    );
    assert!(out.stderr.contains("DONE ["), "{why}");
}
