//! What a run produced: its changes to the git repository it worked in (commits, edits, new
//! files, against the state it started from) and the agent's summary, in the receipt, the view,
//! `status` and `runbook report`.

use std::time::Duration;

use runbook::event::Outcome;

use crate::support::{self, TestContext, sh};

/// An agent that commits one change, leaves another uncommitted, adds a file, and says what it
/// did (or, asked for a summary, summarizes).
const EDITOR: &str = r###"
prompt="$(eval echo \"\${$#}\")"
export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com
echo '{"type":"session.started","session_id":"s-1"}'
case "$prompt" in
  *Summarize*)
    printf '%s\n' '{"type":"text","text":"I made the retry wait for the lock. I added a test."}'
    echo '{"type":"step.finished","reason":"stop","tokens":{"input":100,"output":10,"reasoning":0,"cache_read":0,"cache_write":0},"cost_usd":0.02}' ;;
  *)
    printf 'a\nB\nc\nd\n' > a.txt
    git commit -qam 'Make the retry wait for the lock'
    printf 'a\nB\n' > a.txt
    mkdir -p tests && printf 'one\ntwo\nthree\n' > tests/retry.txt
    printf '%s\n' '{"type":"text","text":"## Done\n\nThe retry waits for the lock now.\n\n- Added tests/retry.txt.\n- Committed the fix. Nothing else changed. Really."}' ;;
esac
echo '{"type":"agent.result","ok":true}'
"###;

#[test]
fn the_receipt_says_what_changed_in_the_repository_and_what_the_agent_says_it_did() {
    let ctx = TestContext::new();
    sh(
        &ctx.work,
        "git init -q -b main && printf 'a\\nb\\nc\\n' > a.txt && printf 'x\\n' > notes.txt && git add . && git commit -qm init && printf 'mine\\n' > notes.txt && printf 'scratch\\n' > scratch.txt",
    );
    let agent = ctx.agent_script("editor", EDITOR);
    let out = support::run(
        &mut ctx.runbook(&["run", "--agent-cmd", &agent, "fix the flaky test"]),
        Duration::from_secs(60),
    );
    out.assert_exit(0)
        .assert_stderr_has("± 2 files changed (+4 −2) · 1 commit")
        .assert_stderr_has("Make the retry wait for the lock")
        .assert_stderr_has(
            "summary: The retry waits for the lock now. Added tests/retry.txt. Committed the fix. Nothing else changed.",
        );
    let receipt = ctx.ended_as(Outcome::Completed);
    let git = receipt.git.expect("the repository");
    assert!(git.dirty, "notes.txt and scratch.txt were changed before");
    assert_eq!(git.branch.as_deref(), Some("main"));
    let changes = receipt.changes.expect("changes");
    // Not notes.txt or scratch.txt: they were changed before the run and not since.
    assert_eq!(changes.paths, ["a.txt", "tests/retry.txt"]);
    // a.txt against the start: `b` and `c` went, `B` came; tests/retry.txt: three new lines.
    assert_eq!((changes.insertions, changes.deletions), (4, 2));
    assert_eq!(changes.commits_total, 1);
    assert!(!receipt.summary.as_ref().unwrap().asked);

    let status = ctx.run(&["status"]);
    status
        .assert_stdout_has("changes   2 files changed (+4 −2) · 1 commit · a.txt, tests/retry.txt")
        .assert_stdout_has("git       ");
    let report = ctx.run(&["report"]);
    report
        .assert_exit(0)
        .assert_stdout_has("## Changes\n\n2 files changed (+4 −2) · 1 commit.")
        .assert_stdout_has("- `tests/retry.txt`");
    let json = ctx.run(&["report", "--format", "json"]);
    let facts: serde_json::Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(facts["changes"]["commits_total"], 1);
}

#[test]
fn summary_asks_the_same_session_in_one_more_turn_whose_cost_counts() {
    let ctx = TestContext::new();
    sh(
        &ctx.work,
        "git init -q && printf 'a\\nb\\nc\\n' > a.txt && git add . && git commit -qm init",
    );
    let agent = ctx.agent_script("editor", EDITOR);
    let out = support::run(
        &mut ctx.runbook(&["run", "--agent-cmd", &agent, "--summary", "fix it"]),
        Duration::from_secs(60),
    );
    // The answer is the summary: shown once, as the agent's words, not again as `summary:`.
    out.assert_exit(0)
        .assert_stderr_has("│ I made the retry wait for the lock. I added a test.");
    assert_eq!(
        out.stderr.matches("I made the retry wait").count(),
        1,
        "{}",
        out.stderr
    );
    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(
        receipt.turns.len(),
        2,
        "the summary is a turn of the same session"
    );
    assert!(receipt.summary.unwrap().asked);
    assert_eq!(receipt.cost.usd, Some(0.02));
}

#[test]
fn outside_a_repository_there_are_no_changes_to_tell() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "talker",
        "printf '%s\\n' '{\"type\":\"text\",\"text\":\"Nothing to do.\"}'\necho '{\"type\":\"agent.result\",\"ok\":true}'",
    );
    support::run(
        &mut ctx.runbook(&["run", "--agent-cmd", &agent, "x"]),
        Duration::from_secs(60),
    )
    .assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    assert!(receipt.git.is_none() && receipt.changes.is_none());
    assert_eq!(receipt.summary.unwrap().text, "Nothing to do.");
}

#[test]
fn a_repository_of_thousands_of_files_is_read_whole() {
    let ctx = TestContext::new();
    sh(
        &ctx.work,
        "git init -q && mkdir d && for i in $(seq 1 3000); do echo $i > d/f$i; done && git add . && git commit -qm init",
    );
    let agent = ctx.agent_script(
        "toucher",
        "for i in $(seq 1 250); do echo more >> d/f$i; done\necho '{\"type\":\"agent.result\",\"ok\":true}'",
    );
    support::run(
        &mut ctx.runbook(&["run", "--agent-cmd", &agent, "x"]),
        Duration::from_secs(60),
    )
    .assert_exit(0);
    let changes = ctx.ended_as(Outcome::Completed).changes.unwrap();
    assert_eq!(changes.files_changed, 250);
    assert_eq!(changes.insertions, 250);
    assert_eq!(
        changes.paths.len(),
        200,
        "the list is capped; the count is not"
    );
}

/// Any text where a receipt or an event log holds a commit (a log or a receipt read back is
/// foreign: edited, or uploaded by someone else) is shown cut between characters, escaped.
#[test]
fn a_commit_that_is_any_text_is_shown_escaped_by_status_replay_and_a_bucket() {
    let ctx = TestContext::new();
    sh(
        &ctx.work,
        "git init -q -b main && printf 'a\\nb\\nc\\n' > a.txt && git add . && git commit -qm init",
    );
    let agent = ctx.agent_script("editor", EDITOR);
    support::run(
        &mut ctx.runbook(&["run", "--agent-cmd", &agent, "fix the flaky test"]),
        Duration::from_secs(60),
    )
    .assert_exit(0);
    let receipt = ctx.ended_as(Outcome::Completed);
    let start = receipt.git.unwrap().commit.unwrap();
    let made = receipt.changes.unwrap().commits[0].id.clone();
    let dir = ctx.run_dir();
    for name in ["result.json", "events.ndjson"] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap();
        let text = text
            .replace(&start, "aééééééééééééé\\u001b]0;owned\\u0007")
            .replace(&made, "aéééééé\\u001b[2J|x");
        std::fs::write(dir.join(name), text).unwrap();
    }
    let status = ctx.run(&["status"]);
    status.assert_exit(0).assert_stdout_has("aééééééééé");
    let replay = ctx.run(&[
        "replay",
        dir.join("events.ndjson").to_str().unwrap(),
        "--instant",
    ]);
    replay.assert_exit(0).assert_stderr_has("aéééééé");
    let shelf = ctx.root().join("shelf");
    let id = dir.file_name().unwrap().to_str().unwrap().to_owned();
    std::fs::create_dir_all(shelf.join("runs").join(&id)).unwrap();
    std::fs::copy(
        dir.join("result.json"),
        shelf.join("runs").join(&id).join("result.json"),
    )
    .unwrap();
    let url = format!("file://{}/runs/{id}", shelf.display());
    let remote = ctx.run(&["status", &url]);
    remote.assert_exit(0).assert_stdout_has("aééééééééé");
    let report = ctx.run(&["report", &url]);
    report.assert_exit(0);
    for out in [&status, &replay, &remote, &report] {
        assert!(
            !out.stdout.contains('\u{1b}') && !out.stderr.contains('\u{1b}'),
            "{}{}",
            out.stdout,
            out.stderr
        );
    }
}
