//! `runbook batch` against the fake agent: many tasks at once, each in a worktree of its own,
//! their outcomes, the batch's budget, Ctrl-C, the views and the record.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::support::{self, TestContext};

const LIMIT: Duration = Duration::from_secs(120);

const STEP_START: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_test","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_test","snapshot":"5743","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":1795319488778,"sessionID":"ses_test","part":{"id":"prt_2","messageID":"msg_1","sessionID":"ses_test","type":"text","text":"All done.","time":{"start":1795319488595,"end":1795319488772}}}"#;
const TOOL_BASH: &str = r#"{"type":"tool_use","timestamp":1795319495152,"sessionID":"ses_test","part":{"type":"tool","tool":"bash","callID":"call_bash_1","state":{"status":"completed","input":{"command":"echo hi"},"output":"hi\n","metadata":{"output":"hi\n","exit":0,"truncated":false},"title":"echo hi","time":{"start":1795319495034,"end":1795319495136}},"id":"prt_9","sessionID":"ses_test","messageID":"msg_1"}}"#;

const RATE_LIMITED: &str = r#"{"type":"error","timestamp":1795319489000,"sessionID":"ses_test","error":{"name":"APIError","data":{"message":"Rate limit reached for requests","statusCode":429,"isRetryable":true}}}"#;

fn step_finish(reason: &str, cost: f64) -> String {
    format!(
        r#"{{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_test","part":{{"id":"prt_5","reason":"{reason}","snapshot":"5743","messageID":"msg_1","sessionID":"ses_test","type":"step-finish","tokens":{{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{{"write":0,"read":0}}}},"cost":{cost}}}}}"#
    )
}

/// A repository in the test's work dir, with one commit, and the scenarios the agent plays:
/// the prompt `edit:NAME` writes `NAME.txt` and completes; any other prompt names a scenario.
struct Bench {
    ctx: TestContext,
    agent: PathBuf,
}

impl Bench {
    fn new() -> Self {
        let mut ctx = TestContext::new();
        git(&ctx.work, &["init", "-q", "-b", "main"]);
        std::fs::write(ctx.work.join("README"), "hello\n").unwrap();
        std::fs::write(ctx.work.join(".gitignore"), ".env\n").unwrap();
        git(&ctx.work, &["add", "."]);
        git(&ctx.work, &["commit", "-q", "-m", "start"]);
        let dir = ctx.root().to_path_buf();
        let (stop, over) = (step_finish("stop", 0.05), step_finish("tool-calls", 5.0));
        let scenarios = [
            ("ok", vec![STEP_START, TOOL_BASH, TEXT, &stop]),
            (
                "slow",
                vec![STEP_START, r#"{"$sleep_ms": 1500}"#, TEXT, &stop],
            ),
            ("hang", vec![STEP_START, r#"{"$hang": true}"#]),
            ("over", vec![STEP_START, &over, r#"{"$sleep_ms": 20000}"#]),
            (
                "fail",
                vec![
                    STEP_START,
                    r#"{"$stderr": "model exploded"}"#,
                    r#"{"$exit": 1}"#,
                ],
            ),
            (
                "limited",
                vec![
                    STEP_START,
                    RATE_LIMITED,
                    r#"{"$sleep_ms": 4000}"#,
                    TEXT,
                    &stop,
                ],
            ),
            (
                "long",
                vec![STEP_START, TOOL_BASH, r#"{"$sleep_ms": 60000}"#],
            ),
        ];
        for (name, lines) in scenarios {
            let text: Vec<String> = lines.iter().map(|l| (*l).to_owned()).collect();
            std::fs::write(dir.join(format!("{name}.ndjson")), text.join("\n") + "\n").unwrap();
        }
        let agent = dir.join("agent.sh");
        std::fs::write(
            &agent,
            format!(
                "#!/bin/sh\nfor last; do :; done\ncase \"$last\" in\n  edit:*) n=${{last#edit:}}; echo \"$n\" > \"$n.txt\"; s=ok;;\n  *) s=$last;;\nesac\nFAKE_AGENT_SCENARIO={dir}/$s.ndjson exec {fake} \"$@\"\n",
                dir = dir.display(),
                fake = support::fake_agent_bin().display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
        let pids = ctx.pid_file();
        ctx.env("FAKE_AGENT_PID_FILE", pids.display().to_string());
        Self { ctx, agent }
    }

    /// A task file (outside the repository) with `tasks` after defaults that run the agent.
    fn tasks(&self, defaults: &str, tasks: &str) -> PathBuf {
        let path = self.ctx.root().join("tasks.toml");
        let text = format!(
            "[defaults]\ninactivity_timeout = \"2s\"\nkill_grace = \"1s\"\n{defaults}\n[defaults.agents.opencode]\nbin = \"{}\"\n\n{tasks}",
            self.agent.display()
        );
        std::fs::write(&path, text).unwrap();
        path
    }

    fn batch(&self, args: &[&str]) -> support::Outcome {
        let args = [&["batch"], args].concat();
        support::run(&mut self.ctx.runbook(&args), LIMIT)
    }

    /// The one batch record.
    fn record(&self) -> Value {
        let dir = self.ctx.root().join("batches");
        let batch = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        serde_json::from_slice(&std::fs::read(batch.join("batch.json")).unwrap()).unwrap()
    }

    fn branches(&self) -> Vec<String> {
        let out = git(&self.ctx.work, &["branch", "--format=%(refname:short)"]);
        out.lines()
            .filter(|b| *b != "main")
            .map(str::to_owned)
            .collect()
    }

    fn worktrees(&self) -> usize {
        git(&self.ctx.work, &["worktree", "list", "--porcelain"])
            .lines()
            .filter(|l| l.starts_with("worktree "))
            .count()
            - 1
    }
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(["-c", "user.name=t", "-c", "user.email=t@t"])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn outcome_of<'a>(record: &'a Value, task: &str) -> &'a str {
    record["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["task"] == task)
        .unwrap_or_else(|| panic!("no task {task} in {record:#}"))["outcome"]
        .as_str()
        .unwrap()
}

#[test]
fn twenty_tasks_at_once_each_edit_only_their_own_branch() {
    let b = Bench::new();
    let tasks: String = (1..=20)
        .map(|n| format!("[[task]]\nid = \"t{n}\"\nprompt = \"edit:t{n}\"\n\n"))
        .collect();
    let file = b.tasks("", &tasks);
    let out = b.batch(&[file.to_str().unwrap(), "-j", "20"]);
    out.assert_exit(0);
    let record = b.record();
    assert_eq!(record["outcome"], "completed", "{record:#}");
    assert_eq!(record["tasks"].as_array().unwrap().len(), 20);
    let mut branches = b.branches();
    branches.sort();
    assert_eq!(branches.len(), 20, "{branches:?}");
    for task in record["tasks"].as_array().unwrap() {
        let name = task["task"].as_str().unwrap();
        assert_eq!(task["outcome"], "completed", "{task:#}");
        assert_eq!(task["diff"]["files"], 1, "{task:#}");
        let branch = task["branch"].as_str().unwrap();
        let changed = git(&b.ctx.work, &["diff", "--name-only", "main", branch]);
        assert_eq!(
            changed.trim(),
            format!("{name}.txt"),
            "{branch} holds only its own edit"
        );
        assert!(task["run_id"].is_string());
    }
    assert_eq!(b.worktrees(), 0, "every worktree was removed");
    assert!(
        !b.ctx.work.join("t1.txt").exists(),
        "the main checkout is untouched"
    );
    assert_eq!(out.stderr.matches(" DONE [").count(), 20, "{}", out.stderr);
}

#[test]
fn a_hung_an_over_budget_and_a_failing_task_end_each_their_own_way_while_the_rest_finish() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"good\"\nprompt = \"edit:good\"\n\n\
         [[task]]\nid = \"stalls\"\nprompt = \"hang\"\n\n\
         [[task]]\nid = \"spends\"\nprompt = \"over\"\nmax_cost = 1\n\n\
         [[task]]\nid = \"breaks\"\nprompt = \"fail\"\n\n\
         [[task]]\nid = \"also-good\"\nprompt = \"edit:also\"\n",
    );
    let out = b.batch(&[file.to_str().unwrap(), "-j", "5"]);
    out.assert_exit(1);
    let record = b.record();
    assert_eq!(record["outcome"], "failed");
    assert_eq!(outcome_of(&record, "good"), "completed");
    assert_eq!(outcome_of(&record, "also-good"), "completed");
    assert_eq!(outcome_of(&record, "stalls"), "hung");
    assert_eq!(outcome_of(&record, "spends"), "budget_exceeded");
    assert_eq!(outcome_of(&record, "breaks"), "agent_error");
    for (word, task) in [
        ("HUNG", "stalls"),
        ("OVER", "spends"),
        ("FAIL", "breaks"),
        ("DONE", "good"),
    ] {
        assert!(
            out.stderr
                .lines()
                .any(|l| l.contains(word) && l.contains(task)),
            "{word} {task}: {}",
            out.stderr
        );
    }
    // --keep failed (the default): the failed tasks' worktrees stay, the others go.
    assert_eq!(b.worktrees(), 3, "{}", out.stderr);
    b.ctx.assert_agent_gone();
    let clean = b.ctx.run(&["batch", "clean"]);
    clean.assert_exit(0);
    assert_eq!(b.worktrees(), 0, "{}", clean.stderr);
    assert_eq!(b.branches().len(), 2, "the branches with changes stay");
}

#[test]
fn the_batch_budget_stops_new_launches_and_says_so() {
    let b = Bench::new();
    let tasks: String = (1..=4)
        .map(|n| format!("[[task]]\nid = \"t{n}\"\nprompt = \"ok\"\nmax_cost = 0.1\n\n"))
        .collect();
    let file = b.tasks("", &tasks);
    let out = b.batch(&[file.to_str().unwrap(), "-j", "4", "--max-cost", "0.22"]);
    out.assert_exit(1);
    let record = b.record();
    let outcomes: Vec<&str> = ["t1", "t2", "t3", "t4"]
        .iter()
        .map(|t| outcome_of(&record, t))
        .collect();
    // Two fit at once (0.2 of 0.22); the third waits for them, then fits what is left (0.12);
    // the fourth does not (0.07 left).
    assert_eq!(
        outcomes,
        ["completed", "completed", "completed", "not_started"],
        "{record:#}"
    );
    assert!(out.stderr.contains("HOLD budget: $0.0000 spent and $0.2000 held by the running tasks; the next task (cap $0.1000) could cross $0.2200"), "{}", out.stderr);
    assert!(out.stderr.contains("1 task not started"), "{}", out.stderr);
    assert!(
        record["held"].as_str().unwrap().starts_with("budget"),
        "{record:#}"
    );
}

#[test]
fn outside_a_git_repository_a_clear_error_and_nothing_starts() {
    let b = Bench::new();
    let file = b.tasks("", "[[task]]\nid = \"a\"\nprompt = \"ok\"\n");
    let mut cmd = b.ctx.runbook(&["batch", file.to_str().unwrap()]);
    cmd.current_dir(b.ctx.root().join("runs"));
    let out = support::run(&mut cmd, LIMIT);
    out.assert_exit(2);
    assert_eq!(out.stderr.trim().lines().count(), 1, "{}", out.stderr);
    out.assert_stderr_has("is not in a git repository");
    assert!(!b.ctx.root().join("batches").exists());
}

#[test]
fn a_wrong_task_file_is_named_with_its_line_and_nothing_starts() {
    let b = Bench::new();
    let file = b.tasks("", "[[task]]\nid = \"a\"\nprompt = \"ok\"\nmodle = \"x\"\n");
    let out = b.batch(&[file.to_str().unwrap()]);
    out.assert_exit(2);
    out.assert_stderr_has("tasks.toml:11:1: unknown key `modle`; did you mean `model`?");
    assert!(b.branches().is_empty());
}

/// Sends SIGINT to the batch once both its runs have started; what is left after.
fn interrupted(keep: &str) -> (Bench, support::Outcome) {
    let b = Bench::new();
    let tasks: String = ["a", "b", "c"]
        .iter()
        .map(|id| {
            format!("[[task]]\nid = \"{id}\"\nprompt = \"long\"\ninactivity_timeout = \"60s\"\n\n")
        })
        .collect();
    let file = b.tasks("", &tasks);
    let mut child = b
        .ctx
        .runbook(&["batch", file.to_str().unwrap(), "-j", "2", "--keep", keep])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    loop {
        let started = std::fs::read_dir(&b.ctx.runs).map_or(0, |d| {
            d.flatten()
                .filter(|e| {
                    std::fs::read_to_string(e.path().join("events.ndjson"))
                        .is_ok_and(|t| t.contains("\"tool.started\""))
                })
                .count()
        });
        if started == 2 {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the runs never started"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the batch ended before its runs started"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = support::finish(child, LIMIT);
    (b, out)
}

#[test]
fn ctrl_c_stops_every_task_with_its_receipt_and_leaves_no_process() {
    let (b, out) = interrupted("failed");
    out.assert_exit(130);
    let record = b.record();
    assert_eq!(record["outcome"], "interrupted");
    assert_eq!(outcome_of(&record, "a"), "interrupted");
    assert_eq!(outcome_of(&record, "b"), "interrupted");
    assert_eq!(outcome_of(&record, "c"), "not_started");
    for dir in b.ctx.run_dirs() {
        let receipt: Value =
            serde_json::from_slice(&std::fs::read(dir.join("result.json")).unwrap()).unwrap();
        assert_eq!(receipt["outcome"], "interrupted");
    }
    b.ctx.assert_agent_gone();
    assert_eq!(
        b.worktrees(),
        2,
        "--keep failed keeps the interrupted tasks' worktrees"
    );
    out.assert_stderr_has("interrupted: stopping 2 running tasks");
}

#[test]
fn ctrl_c_with_keep_none_removes_every_worktree() {
    let (b, out) = interrupted("none");
    out.assert_exit(130);
    b.ctx.assert_agent_gone();
    assert_eq!(b.worktrees(), 0, "{}", out.stderr);
    assert!(b.branches().is_empty(), "no branch had changes");
}

#[test]
fn json_tags_every_event_with_its_task_and_run() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"a\"\nprompt = \"edit:a\"\nrepeat = 2\n",
    );
    let out = b.batch(&[file.to_str().unwrap(), "--json"]);
    out.assert_exit(0);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines[0]["type"], "batch.started");
    let last = lines.last().unwrap();
    assert_eq!(last["type"], "batch");
    for task in ["a-1", "a-2"] {
        let events: Vec<&Value> = lines.iter().filter(|l| l["task"] == task).collect();
        assert!(events.iter().any(|e| e["type"] == "run.started"), "{task}");
        assert!(events.iter().any(|e| e["type"] == "receipt"), "{task}");
        let run = &events[0]["run_id"];
        assert!(events.iter().all(|e| e["run_id"] == *run), "{task}");
    }
    assert!(out.stderr.trim().is_empty(), "{}", out.stderr);
}

#[test]
fn tasks_from_stdin_as_json_lines_fan_out_and_junit_reports_them() {
    let b = Bench::new();
    let junit = b.ctx.root().join("junit.xml");
    let bin = b.agent.display().to_string();
    let stdin = format!(
        "{{\"id\":\"x\",\"prompt\":\"edit:x\",\"inactivity_timeout\":\"2s\",\"agents\":{{\"opencode\":{{\"bin\":\"{bin}\"}}}}}}\n\
         {{\"id\":\"y\",\"prompt\":\"fail\",\"agents\":{{\"opencode\":{{\"bin\":\"{bin}\"}}}}}}\n"
    );
    let mut cmd = b
        .ctx
        .runbook(&["batch", "--tasks", "-", "--junit", junit.to_str().unwrap()]);
    cmd.stdin(std::process::Stdio::piped());
    cmd.stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut child = cmd.spawn().unwrap();
    use std::io::Write as _;
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let out = support::finish(child, LIMIT);
    out.assert_exit(1);
    let record = b.record();
    assert_eq!(outcome_of(&record, "x"), "completed");
    assert_eq!(outcome_of(&record, "y"), "agent_error");
    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(xml.contains("tests=\"2\" failures=\"1\""), "{xml}");
    assert!(
        xml.contains("<testcase classname=\"opencode\" name=\"y\""),
        "{xml}"
    );
    assert!(xml.contains("<failure type=\"agent_error\""), "{xml}");
}

#[test]
fn the_plain_view_off_a_terminal() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"fix-login\"\nprompt = \"edit:login\"\n\n[[task]]\nid = \"stalls\"\nprompt = \"hang\"\n",
    );
    let out = b.batch(&[file.to_str().unwrap(), "-j", "1", "--keep", "none"]);
    out.assert_exit(1);
    let text = plain_view(&out.stderr, b.ctx.root());
    insta::assert_snapshot!("batch_plain_view", text);
}

#[test]
fn a_queued_task_starts_once_a_run_wrote_its_receipt_not_once_its_worktree_is_settled() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"first\"\nprompt = \"edit:first\"\n\n[[task]]\nid = \"second\"\nprompt = \"edit:second\"\n",
    );
    let out = b.batch(&[file.to_str().unwrap(), "-j", "1"]);
    out.assert_exit(0);
    let at = |word: &str, task: &str| {
        out.stderr
            .lines()
            .position(|l| l.trim_start().starts_with(word) && l.contains(&format!(" {task}")))
            .unwrap_or_else(|| panic!("no `{word}` line for {task} in {}", out.stderr))
    };
    // The first task's DONE line comes once its change is committed and its worktree removed;
    // the second task did not wait for that.
    assert!(
        at("START", "second") < at("DONE", "first"),
        "{}",
        out.stderr
    );
    let record = b.record();
    for task in ["first", "second"] {
        assert_eq!(outcome_of(&record, task), "completed", "{record:#}");
        let branch = record["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task"] == task)
            .unwrap()["branch"]
            .as_str()
            .unwrap()
            .to_owned();
        let files = git(&b.ctx.work, &["ls-tree", "--name-only", &branch]);
        assert!(files.lines().any(|f| f == format!("{task}.txt")), "{files}");
        let other = if task == "first" { "second" } else { "first" };
        assert!(!files.contains(&format!("{other}.txt")), "{files}");
    }
    assert_eq!(b.worktrees(), 0, "{}", out.stderr);
}

#[test]
fn the_view_at_80_columns() {
    let b = Bench::new();
    let long = "a-task-whose-name-is-long-enough-to-reach-the-edge-of-a-terminal";
    let file = b.tasks(
        "",
        &format!("[[task]]\nid = \"{long}\"\nprompt = \"fail\"\n\n[[task]]\nid = \"short\"\nprompt = \"edit:s\"\n"),
    );
    let mut cmd = b.ctx.runbook(&[
        "--width",
        "80",
        "batch",
        file.to_str().unwrap(),
        "-j",
        "1",
        "--keep",
        "none",
    ]);
    let out = support::run(&mut cmd, LIMIT);
    out.assert_exit(1);
    insta::assert_snapshot!("batch_view_80", plain_view(&out.stderr, b.ctx.root()));
}

/// The view with what changes from run to run (ids, times, paths) made constant.
fn plain_view(stderr: &str, root: &Path) -> String {
    let ids = regex::Regex::new(r"\d{8}-\d{6}-[0-9a-z]{5}").unwrap();
    let took = regex::Regex::new(r"\[ *[0-9.]+s\]|\[ *\d+m\d+s\]").unwrap();
    let base = regex::Regex::new(r"base [0-9a-f]{12}").unwrap();
    let text = stderr.replace(&root.display().to_string(), "[ROOT]");
    let text = ids.replace_all(&text, "[ID]");
    let text = took.replace_all(&text, "[TIME]");
    base.replace_all(&text, "base [COMMIT]").into_owned()
}

#[test]
fn report_tells_a_batch_as_one_markdown_table() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"fix-login\"\nprompt = \"edit:login\"\n\n[[task]]\nid = \"breaks\"\nprompt = \"fail\"\n",
    );
    b.batch(&[file.to_str().unwrap()]).assert_exit(1);
    let id = b.record()["batch_id"].as_str().unwrap().to_owned();
    let out = b.ctx.run(&["report", &id]);
    out.assert_exit(0);
    let lines: Vec<&str> = out.stdout.lines().collect();
    assert!(lines[0].starts_with("## Batch `"), "{}", out.stdout);
    assert!(
        out.stdout.contains("1 of 2 tasks completed"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("| Task | Agent | Outcome | Cost | Time | Changes | Branch |"),
        "{}",
        out.stdout
    );
    let row = lines
        .iter()
        .find(|l| l.starts_with("| fix-login |"))
        .expect("a row per task");
    assert!(
        row.contains("| completed | $0.0500 |") && row.contains("| +1 −0 |"),
        "{row}"
    );
    assert!(row.contains(&format!("`runbook/{id}/fix-login`")), "{row}");
    let row = lines.iter().find(|l| l.starts_with("| breaks |")).unwrap();
    assert!(
        row.contains("| agent\\_error: ") && row.contains("| unknown |"),
        "{row}"
    );
    assert!(
        row.contains("| none | `runbook/"),
        "the failed task's worktree is kept: {row}"
    );
    // A prefix of the id finds it too; as JSON it is the record. (Not a prefix as short as the
    // time: the tasks' runs started in the same second.)
    let json = b
        .ctx
        .run(&["report", &id[..id.len() - 1], "--format", "json"]);
    json.assert_exit(0);
    let record: Value = serde_json::from_str(&json.stdout).unwrap();
    assert_eq!(record["batch_id"], id.as_str());
}

/// A prefix that fits a run (or several) and a batch alike is refused in one line, not taken as
/// either: a batch's tasks start in the second the batch does, so their ids share its time.
#[test]
fn report_refuses_a_prefix_that_names_a_run_and_a_batch() {
    let b = Bench::new();
    let file = b.tasks("", "[[task]]\nid = \"one\"\nprompt = \"edit:one\"\n");
    b.batch(&[file.to_str().unwrap()]).assert_exit(0);
    let batch = b.record()["batch_id"].as_str().unwrap().to_owned();
    let run = b.ctx.run_dirs().pop().expect("the task's run");
    let run = run.file_name().unwrap().to_str().unwrap().to_owned();
    // The batch again under an id that shares the run's first random character.
    let batches = b.ctx.root().join("batches");
    let twin = format!("{}zzzz", &run[..17]);
    assert_ne!(twin, run);
    let copy = std::process::Command::new("cp")
        .arg("-r")
        .arg(batches.join(&batch))
        .arg(batches.join(&twin))
        .status()
        .unwrap();
    assert!(copy.success());
    let out = b.ctx.run(&["report", &run[..17]]);
    out.assert_exit(2);
    let said = out.stderr.trim();
    assert!(
        said.contains(&format!(
            "`{}` names a run and a batch: give more of the id",
            &run[..17]
        )) && !said.contains('\n'),
        "{said}"
    );
    // Each whole id still names its own.
    b.ctx.run(&["report", &run]).assert_exit(0);
    // Nor is it taken as the batch when it fits several runs.
    let first = b.ctx.run_dirs().pop().unwrap();
    let second = first.with_file_name(format!("{}yyyy", &run[..17]));
    let copy = std::process::Command::new("cp")
        .arg("-r")
        .arg(&first)
        .arg(&second)
        .status()
        .unwrap();
    assert!(copy.success());
    let out = b.ctx.run(&["report", &run[..17]]);
    out.assert_exit(2);
    assert!(
        out.stderr.contains("names a run and a batch"),
        "{}",
        out.stderr
    );
    let out = b.ctx.run(&["report", &twin]);
    out.assert_exit(0);
    assert!(out.stdout.starts_with("## Batch `"), "{}", out.stdout);
}

#[test]
fn the_live_view_shows_a_row_per_running_task_and_a_footer_then_clears_them() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"slowpoke\"\nprompt = \"long\"\ninactivity_timeout = \"60s\"\ntimeout = \"4s\"\nmax_cost = 1\n\n\
         [[task]]\nid = \"quick\"\nprompt = \"edit:q\"\nmax_cost = 1\n\n[[task]]\nid = \"later\"\nprompt = \"edit:l\"\nmax_cost = 1\n",
    );
    let mut cmd = b.ctx.runbook(&[
        "batch",
        file.to_str().unwrap(),
        "-j",
        "2",
        "--max-cost",
        "9",
    ]);
    cmd.env("TERM", "xterm-256color");
    let pty = crate::support::pty::Pty::spawn(cmd, 100);
    let screen = pty.wait_for("  RUN [");
    let text = screen.text();
    assert!(text.contains("slowpoke opencode ·"), "{text}");
    let screen = pty.wait_for("DONE [");
    let footer = screen.text();
    assert!(
        footer.lines().any(|l| l.contains(" running · ")
            && l.contains(" done · ")
            && l.contains(" of $9.00")),
        "{footer}"
    );
    let (status, screen) = pty.finish();
    assert_eq!(status.code(), Some(1), "slowpoke times out");
    let text = screen.text();
    assert!(
        text.contains(" TIME [") && text.contains("slowpoke"),
        "{text}"
    );
    assert!(text.contains("Summary ["), "{text}");
    assert!(
        !text.contains("  RUN ["),
        "the rows are gone at the end: {text}"
    );
    assert!(
        !text.contains(" running · "),
        "the footer is gone at the end: {text}"
    );
}

#[test]
fn a_task_file_in_the_repository_runs_its_setup_only_once_trusted_and_copies_its_includes() {
    let b = Bench::new();
    std::fs::write(b.ctx.work.join(".env"), "TOKEN=from-the-main-checkout\n").unwrap();
    let text = format!(
        "[defaults]\ninactivity_timeout = \"2s\"\nsetup = \"cp \\\"$RUNBOOK_ROOT_PATH/README\\\" copied && cp .env env-seen\"\ninclude = [\".env\", \"missing.txt\"]\n\
         [defaults.agents.opencode]\nbin = \"{}\"\n\n[[task]]\nid = \"a\"\nprompt = \"edit:a\"\n",
        b.agent.display()
    );
    let file = b.ctx.work.join("tasks.toml");
    std::fs::write(&file, text).unwrap();
    let refused = b.batch(&["tasks.toml"]);
    refused.assert_exit(2);
    refused.assert_stderr_has("not trusted: ");
    refused.assert_stderr_has("tasks.toml");
    assert!(b.branches().is_empty(), "nothing started");

    let out = b.batch(&["tasks.toml", "--trust"]);
    out.assert_exit(0);
    let record = b.record();
    let branch = record["tasks"][0]["branch"].as_str().unwrap();
    let files = git(&b.ctx.work, &["diff", "--name-only", "main", branch]);
    let mut files: Vec<&str> = files.lines().collect();
    files.sort();
    assert_eq!(
        files,
        ["a.txt", "copied", "env-seen"],
        "the setup ran in the worktree"
    );
    let seen = git(&b.ctx.work, &["show", &format!("{branch}:env-seen")]);
    assert_eq!(
        seen, "TOKEN=from-the-main-checkout\n",
        "the ignored .env was copied in"
    );
}

#[test]
fn the_refusals_advice_to_trust_a_task_file_works_and_a_change_needs_it_again() {
    let b = Bench::new();
    let text = format!(
        "[defaults.agents.opencode]\nbin = \"{}\"\n\n[[task]]\nid = \"a\"\nprompt = \"edit:a\"\n",
        b.agent.display()
    );
    let file = b.ctx.work.join("tasks.toml");
    std::fs::write(&file, &text).unwrap();
    let refused = b.batch(&["tasks.toml"]);
    refused.assert_exit(2);
    let shown = file.display().to_string();
    refused.assert_stderr_has(&format!("runbook trust {shown}"));

    let trusted = b.ctx.run(&["trust", &shown]);
    trusted.assert_exit(0);
    trusted.assert_stdout_has("agents.opencode.bin");
    b.batch(&["tasks.toml"]).assert_exit(0);

    std::fs::write(&file, text.replace("edit:a", "edit:b")).unwrap();
    b.batch(&["tasks.toml"]).assert_exit(2);
}

/// Starts the batch of `file` in the background; its id once its record is written.
#[expect(clippy::zombie_processes, reason = "the caller waits for the child")]
fn start_batch(b: &Bench, file: &Path) -> (std::process::Child, String) {
    let child = b
        .ctx
        .runbook(&["batch", file.to_str().unwrap(), "-j", "1"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let dir = b.ctx.root().join("batches");
    let start = Instant::now();
    loop {
        if let Some(Ok(entry)) = std::fs::read_dir(&dir).ok().and_then(|mut d| d.next())
            && entry.path().join("batch.json").is_file()
        {
            return (child, entry.file_name().to_string_lossy().into_owned());
        }
        assert!(start.elapsed() < Duration::from_secs(60), "no batch record");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn status_live_follows_a_batch_from_another_terminal_to_its_end() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"first\"\nprompt = \"slow\"\n\n[[task]]\nid = \"second\"\nprompt = \"edit:s\"\n",
    );
    let (child, id) = start_batch(&b, &file);
    let out = b.ctx.run(&["status", "--live", &id]);
    out.assert_exit(0);
    let first = out.stderr.find("DONE [").expect(&out.stderr);
    assert!(out.stderr[first..].contains("first"), "{}", out.stderr);
    assert!(out.stderr.contains("second +1 −0"), "{}", out.stderr);
    assert!(
        out.stderr.contains("START first (opencode)"),
        "a row for the running task: {}",
        out.stderr
    );
    assert!(
        out.stderr.contains("Summary") && out.stderr.contains("2 tasks: 2 completed"),
        "the batch's own summary: {}",
        out.stderr
    );
    let batch = support::finish(child, LIMIT);
    batch.assert_exit(0);
}

#[test]
fn status_live_says_when_the_batchs_runbook_is_gone() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"a\"\nprompt = \"long\"\ninactivity_timeout = \"60s\"\n",
    );
    let (mut child, id) = start_batch(&b, &file);
    let start = Instant::now();
    while !std::fs::read_to_string(b.ctx.pid_file()).is_ok_and(|p| !p.trim().is_empty()) {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "the agent never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let out = b.ctx.run(&["status", "--live", &id]);
    out.assert_exit(7);
    out.assert_stderr_has("abandoned: the batch's runbook is gone");
    // Its runs die with it, and each run's guardian ends its agent.
    b.ctx.assert_agent_gone();
}

#[test]
fn a_failing_setup_ends_its_task_before_any_agent_starts_and_costs_nothing() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"broken\"\nprompt = \"edit:b\"\nsetup = \"echo no npm here >&2; exit 3\"\nmax_cost = 1\n\n\
         [[task]]\nid = \"fine\"\nprompt = \"edit:f\"\nmax_cost = 1\n",
    );
    let out = b.batch(&[file.to_str().unwrap(), "-j", "1", "--max-cost", "1.5"]);
    out.assert_exit(1);
    let record = b.record();
    assert_eq!(outcome_of(&record, "broken"), "setup_failed");
    assert_eq!(
        outcome_of(&record, "fine"),
        "completed",
        "a setup that failed spent none of the budget"
    );
    let broken = &record["tasks"][0];
    assert_eq!(broken["cost_usd"], 0.0);
    assert!(broken.get("run_id").is_none(), "{broken:#}");
    assert!(
        out.stderr.contains("FAIL [")
            && out
                .stderr
                .contains("its setup failed (exit 3): no npm here"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_rate_limited_task_holds_the_queued_tasks_of_its_agent_until_it_answers_again() {
    let b = Bench::new();
    // `limited` hits a 429 and answers 4 s later; `slow` frees its slot after 1.5 s, but the
    // queued `after` (same agent) waits for `limited` to answer again.
    let file = b.tasks(
        "",
        "[[task]]\nid = \"limited\"\nprompt = \"limited\"\ninactivity_timeout = \"20s\"\n\n\
         [[task]]\nid = \"slow\"\nprompt = \"slow\"\n\n\
         [[task]]\nid = \"after\"\nprompt = \"edit:after\"\n",
    );
    let out = b.batch(&[file.to_str().unwrap(), "-j", "2", "--json"]);
    let lines: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let at = |pred: &dyn Fn(&Value) -> bool, what: &str| {
        lines
            .iter()
            .position(pred)
            .unwrap_or_else(|| panic!("no {what} in {}", out.stdout))
    };
    let held = at(
        &|l| {
            l["type"] == "batch.held"
                && l["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("opencode is being rate-limited"))
        },
        "hold",
    );
    let slow_done = at(
        &|l| l["task"] == "slow" && l["type"] == "receipt",
        "slow's end",
    );
    let answered = at(
        &|l| l["task"] == "limited" && l["type"] == "text",
        "limited's answer",
    );
    let after_starts = at(
        &|l| l["task"] == "after" && l["type"] == "run.started",
        "after's start",
    );
    assert!(
        held < after_starts && slow_done < answered && answered < after_starts,
        "a free slot while the agent was rate-limited did not start the queued task: {}",
        out.stdout
    );
    assert_eq!(outcome_of(&b.record(), "after"), "completed");
}

#[test]
fn a_setup_that_outlasts_its_setup_timeout_is_stopped_and_ends_its_task() {
    let b = Bench::new();
    let pid_file = b.ctx.root().join("setup.pid");
    let file = b.tasks(
        "",
        &format!(
            "[[task]]\nid = \"stuck\"\nprompt = \"edit:s\"\nsetup = \"echo $$ > {}; exec sleep 60\"\nsetup_timeout = \"1s\"\n\n\
             [[task]]\nid = \"fine\"\nprompt = \"edit:f\"\n",
            pid_file.display()
        ),
    );
    let out = b.batch(&[file.to_str().unwrap(), "-j", "2", "--trust"]);
    out.assert_exit(1);
    assert!(
        out.took < Duration::from_secs(40),
        "the setup was not stopped: {:?}",
        out.took
    );
    let record = b.record();
    assert_eq!(outcome_of(&record, "stuck"), "setup_failed");
    assert_eq!(outcome_of(&record, "fine"), "completed");
    assert!(
        out.stderr
            .contains("its setup did not finish within 1.0s (setup_timeout)"),
        "{}",
        out.stderr
    );
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists()
            || std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z ")),
        "the setup's sleep is still running"
    );
}

#[test]
fn a_setup_timeout_that_is_not_a_duration_is_named_with_its_line() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"a\"\nprompt = \"edit:a\"\nsetup_timeout = \"soon\"\n",
    );
    let out = b.batch(&[file.to_str().unwrap()]);
    out.assert_exit(2);
    assert!(
        out.stderr.contains("tasks.toml:11:")
            && out.stderr.contains("`setup_timeout` must be a duration"),
        "{}",
        out.stderr
    );
    assert!(b.branches().is_empty(), "nothing started");
}

#[test]
fn status_json_prints_a_batchs_record_while_it_runs_and_once_it_has_ended() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"first\"\nprompt = \"slow\"\n\n[[task]]\nid = \"second\"\nprompt = \"edit:s\"\n",
    );
    let (child, id) = start_batch(&b, &file);
    let now = b.ctx.run(&["status", &id, "--json"]);
    now.assert_exit(0);
    let running: Value = serde_json::from_str(&now.stdout).expect(&now.stdout);
    assert_eq!(running["batch_id"], id.as_str());
    assert_eq!(running["outcome"], "running", "{running:#}");
    assert!(now.stderr.trim().is_empty(), "{}", now.stderr);
    let out = b.ctx.run(&["status", "--live", &id, "--json"]);
    out.assert_exit(0);
    let ended: Value = serde_json::from_str(&out.stdout).expect(&out.stdout);
    assert_eq!(ended["outcome"], "completed", "{ended:#}");
    assert_eq!(outcome_of(&ended, "first"), "completed");
    assert_eq!(outcome_of(&ended, "second"), "completed");
    support::finish(child, LIMIT).assert_exit(0);
    assert_eq!(ended, b.record(), "the record as the batch left it");
}

/// Three tasks that each edit a file of their own.
fn three(b: &Bench) -> PathBuf {
    b.tasks(
        "",
        "[[task]]\nid = \"t0\"\nprompt = \"edit:t0\"\n\n\
         [[task]]\nid = \"t1\"\nprompt = \"edit:t1\"\n\n\
         [[task]]\nid = \"t2\"\nprompt = \"fail\"\n",
    )
}

#[test]
fn task_index_runs_only_that_task_and_exits_as_its_run() {
    let b = Bench::new();
    let file = three(&b);
    let out = b.batch(&[file.to_str().unwrap(), "--task-index", "1"]);
    out.assert_exit(0);
    let record = b.record();
    let tasks = record["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 1, "{record:#}");
    assert_eq!(tasks[0]["task"], "t1");
    assert_eq!(
        b.branches(),
        vec!["runbook/".to_owned() + record["batch_id"].as_str().unwrap_or_default() + "/t1"]
    );
    let failed = b.batch(&[file.to_str().unwrap(), "--task-index", "2"]);
    failed.assert_exit(1);
}

#[test]
fn task_index_from_env_reads_the_schedulers_variable_and_in_place_edits_the_checkout() {
    let mut b = Bench::new();
    let file = three(&b);
    b.ctx.env("SLURM_ARRAY_TASK_ID", "0");
    let out = b.batch(&[
        file.to_str().unwrap(),
        "--task-index-from-env",
        "--in-place",
    ]);
    out.assert_exit(0);
    assert!(
        b.ctx.work.join("t0.txt").is_file(),
        "it ran in the checkout"
    );
    assert!(!b.ctx.work.join("t1.txt").exists(), "and ran only task 0");
    assert!(b.branches().is_empty(), "no branch was made");
    b.ctx.env("MY_INDEX", "1");
    b.batch(&[
        file.to_str().unwrap(),
        "--task-index-from-env",
        "MY_INDEX",
        "--in-place",
    ])
    .assert_exit(0);
    assert!(b.ctx.work.join("t1.txt").is_file());
}

/// Each bad task index a scheduler or a person can give: the flag's value or the variable's.
#[test]
fn every_bad_task_index_is_a_one_line_usage_error_and_nothing_is_made() {
    let b = Bench::new();
    let file = three(&b);
    let file = file.to_str().unwrap();
    let from_env = |var: Option<&str>, env: &[(&str, &str)]| {
        let mut args = vec!["batch", file, "--task-index-from-env"];
        args.extend(var);
        let mut cmd = b.ctx.runbook(&args);
        cmd.envs(env.iter().copied());
        support::run(&mut cmd, LIMIT)
    };
    let flag = |value: &str| b.batch(&[file, "--task-index", value]);
    let cases: Vec<(&str, support::Outcome, &str)> = vec![
        ("past the last", flag("3"), "task index 3 is out of range: "),
        (
            "the largest number",
            flag("18446744073709551615"),
            "task index 18446744073709551615 is out of range",
        ),
        ("negative", flag("-1"), "`-1` is not a task index"),
        ("not a number", flag("two"), "`two` is not a task index"),
        ("empty", flag(""), "`` is not a task index"),
        (
            "no scheduler's variable set",
            from_env(None, &[]),
            "none of JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID, AWS_BATCH_JOB_ARRAY_INDEX is set",
        ),
        (
            "the variable empty",
            from_env(None, &[("SLURM_ARRAY_TASK_ID", "")]),
            "SLURM_ARRAY_TASK_ID is set but empty",
        ),
        (
            "the variable negative",
            from_env(None, &[("JOB_COMPLETION_INDEX", "-2")]),
            "JOB_COMPLETION_INDEX is `-2`, not a task index",
        ),
        (
            "the variable past the last",
            from_env(None, &[("AWS_BATCH_JOB_ARRAY_INDEX", "7")]),
            "task index 7 is out of range",
        ),
        (
            "the variable with control characters",
            from_env(None, &[("JOB_COMPLETION_INDEX", "one\x1b[31m")]),
            "JOB_COMPLETION_INDEX is `one\\e[31m`, not a task index",
        ),
        (
            "a named variable not set",
            from_env(Some("MY_INDEX"), &[("SLURM_ARRAY_TASK_ID", "0")]),
            "--task-index-from-env: MY_INDEX is not set",
        ),
        (
            "a named variable empty",
            from_env(Some("MY_INDEX"), &[("MY_INDEX", " ")]),
            "MY_INDEX is set but empty",
        ),
        (
            "not a variable's name",
            from_env(Some("A=B"), &[]),
            "`A=B` is not a variable's name",
        ),
    ];
    for (case, out, says) in &cases {
        assert_eq!(out.code(), Some(2), "{case}: {}", out.stderr);
        let first = out.stderr.lines().next().unwrap_or_default();
        assert!(first.contains(says), "{case}: {:?}", out.stderr);
        assert!(!out.stderr.contains('\x1b'), "{case}: {:?}", out.stderr);
    }
    // runbook's own errors are one line; clap's (a flag's value) one line, then a hint.
    for (case, out, _) in &cases[5..] {
        assert_eq!(
            out.stderr.trim().lines().count(),
            1,
            "{case}: {}",
            out.stderr
        );
    }
    // The task file put after the flag, which takes it as its value: the file is missing.
    let misplaced = b.batch(&["--task-index-from-env", file]);
    misplaced.assert_exit(2);
    assert!(
        misplaced
            .stderr
            .contains("required arguments were not provided")
            && misplaced
                .stderr
                .contains("--task-index-from-env [<VAR>] <FILE>"),
        "{}",
        misplaced.stderr
    );
    let batches = std::fs::read_dir(b.ctx.root().join("batches")).map_or(0, |d| d.count());
    assert_eq!(batches, 0, "no batch directory");
    assert_eq!(b.worktrees(), 0, "no worktree");
    assert!(b.branches().is_empty(), "no branch");
    assert!(b.ctx.run_dirs().is_empty(), "no run directory, no receipt");
}

#[test]
fn batch_upload_pushes_each_run_under_the_batch_id() {
    let b = Bench::new();
    let file = three(&b);
    let place = b.ctx.root().join("bucket");
    std::fs::create_dir_all(&place).unwrap();
    let url = format!("file://{}", place.display());
    b.batch(&[file.to_str().unwrap(), "-j", "3", "--upload", &url])
        .assert_exit(1);
    let record = b.record();
    let batch = place.join(record["batch_id"].as_str().unwrap());
    for task in record["tasks"].as_array().unwrap() {
        let run = batch.join(task["run_id"].as_str().unwrap());
        assert!(
            run.join("result.json").is_file(),
            "{} uploaded",
            run.display()
        );
    }
}

/// Where each run is uploaded: with `upload` set (here in the environment) and no flag, under
/// the batch's id; `--upload` wins over the setting. The runs themselves never upload (nothing
/// under `runs/`, where `runbook run` uploads), so no run is there twice.
#[test]
fn batch_uploads_where_the_upload_setting_says_and_each_run_once() {
    let mut b = Bench::new();
    let file = three(&b);
    let (set, flag) = (b.ctx.root().join("set"), b.ctx.root().join("flag"));
    b.ctx
        .env("RUNBOOK_UPLOAD", format!("file://{}", set.display()));
    let file = file.to_str().unwrap();
    b.batch(&[file, "-j", "3", "--keep", "none"]).assert_exit(1);
    let record = b.record();
    let first = record["batch_id"].as_str().unwrap().to_owned();
    let dirs = |place: &Path| -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(place)
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    };
    assert_eq!(
        dirs(&set),
        vec![first.clone()],
        "only the batch's id, no `runs`"
    );
    let mut ids: Vec<String> = record["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["run_id"].as_str().unwrap().to_owned())
        .collect();
    ids.sort();
    assert_eq!(dirs(&set.join(&first)), ids, "each run once");
    for id in &ids {
        assert!(set.join(&first).join(id).join("result.json").is_file());
    }
    std::fs::remove_dir_all(b.ctx.root().join("batches")).unwrap();
    let url = format!("file://{}", flag.display());
    b.batch(&[file, "-j", "3", "--keep", "none", "--upload", &url])
        .assert_exit(1);
    let second = b.record()["batch_id"].as_str().unwrap().to_owned();
    assert_eq!(dirs(&flag), vec![second.clone()]);
    assert_eq!(dirs(&flag.join(&second)).len(), 3);
    assert_eq!(
        dirs(&set),
        vec![first.clone()],
        "the setting's bucket got nothing more"
    );

    // A task's own `upload` in the task file, over the environment's: for that task alone.
    let own = b.ctx.root().join("own");
    let file = b.tasks(
        "",
        &format!(
            "[[task]]\nid = \"t0\"\nprompt = \"edit:t0\"\nupload = \"file://{}\"\n\n\
             [[task]]\nid = \"t1\"\nprompt = \"edit:t1\"\n",
            own.display()
        ),
    );
    std::fs::remove_dir_all(b.ctx.root().join("batches")).unwrap();
    b.batch(&[file.to_str().unwrap(), "-j", "2", "--keep", "none"])
        .assert_exit(0);
    let record = b.record();
    let third = record["batch_id"].as_str().unwrap().to_owned();
    let run_of = |task: &str| {
        record["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task"] == task)
            .unwrap()["run_id"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    assert_eq!(dirs(&own), vec![third.clone()]);
    assert_eq!(dirs(&own.join(&third)), vec![run_of("t0")]);
    assert_eq!(dirs(&set), vec![first, third.clone()]);
    assert_eq!(dirs(&set.join(&third)), vec![run_of("t1")]);
}

/// The script `runbook fleet slurm` writes, run once per index as Slurm would (each its own
/// process, `SLURM_ARRAY_JOB_ID` shared): every run lands under the one id `slurm-<job id>`,
/// where `runbook stats` reads them together; `--batch-id` fixes another id; outside Slurm the
/// script stops before anything runs.
#[test]
fn the_runs_of_one_fleet_submission_meet_under_one_batch_id() {
    let b = Bench::new();
    // In the repository, where the script names it from.
    let file = b.ctx.work.join("tasks.toml");
    std::fs::rename(three(&b), &file).unwrap();
    let place = b.ctx.root().join("bucket");
    let url = format!("file://{}", place.display());
    let script = |extra: &[&str]| {
        let mut args = vec!["fleet", "slurm", file.to_str().unwrap(), "--upload", &url];
        args.extend_from_slice(&["--retries", "0"]);
        args.extend_from_slice(extra);
        let out = b.ctx.run(&args);
        out.assert_exit(0);
        let path = b.ctx.root().join(format!("array{}.sbatch", extra.len()));
        std::fs::write(&path, &out.stdout).unwrap();
        path
    };
    let submit = |path: &Path, env: &[(&str, &str)]| {
        let dir = support::runbook_bin().parent().unwrap().to_owned();
        let path_var = format!("{}:{}", dir.display(), std::env::var("PATH").unwrap());
        // The environment runbook's own commands get here, as sbatch passes the submitter's.
        let runbook = b.ctx.runbook(&[]);
        let mut bash = Command::new("bash");
        bash.arg(path)
            .current_dir(&b.ctx.work)
            .env_clear()
            .envs(runbook.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .env("PATH", path_var)
            // The task file in the repository sets the agent's binary.
            .env("RUNBOOK_TRUST", &file)
            .envs(env.iter().copied())
            .stdin(std::process::Stdio::null());
        support::run(&mut bash, LIMIT)
    };
    let array = script(&[]);
    for (i, code) in [(0, 0), (1, 0), (2, 1)] {
        let index = i.to_string();
        let env = [
            ("SLURM_ARRAY_JOB_ID", "4242"),
            ("SLURM_ARRAY_TASK_ID", index.as_str()),
        ];
        submit(&array, &env).assert_exit(code);
    }
    let batch = format!("{url}/slurm-4242");
    let stats = b.ctx.run(&["stats", &batch, "--json"]);
    stats.assert_exit(0);
    let stats: Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(stats["runs"], 3, "{stats:#}");
    let whole: Value = serde_json::from_str(&b.ctx.run(&["stats", &url, "--json"]).stdout).unwrap();
    assert_eq!(whole["runs"], 3, "nothing outside the one batch: {whole:#}");
    let batches = std::fs::read_dir(b.ctx.root().join("batches"))
        .unwrap()
        .count();
    assert_eq!(
        batches, 3,
        "three processes, three local batches, one id in the bucket"
    );

    let fixed = script(&["--batch-id", "nightly-1"]);
    submit(&fixed, &[("SLURM_ARRAY_TASK_ID", "0")]).assert_exit(0);
    assert!(place.join("nightly-1").is_dir());

    let outside = submit(&array, &[("SLURM_ARRAY_TASK_ID", "0")]);
    assert_ne!(outside.code(), Some(0));
    assert!(
        outside.stderr.contains("submit this script with sbatch"),
        "{}",
        outside.stderr
    );
    assert_eq!(
        std::fs::read_dir(&place).unwrap().count(),
        2,
        "slurm-4242, nightly-1"
    );
}

/// `--batch-id` names where runs go in a bucket: without one, or a name that is not one, it is
/// refused before anything starts.
#[test]
fn a_batch_id_without_a_bucket_or_not_a_name_is_refused_before_anything_starts() {
    let b = Bench::new();
    let file = three(&b);
    let file = file.to_str().unwrap();
    let url = format!("file://{}", b.ctx.root().join("bucket").display());
    let alone = b.batch(&[file, "--task-index", "0", "--batch-id", "slurm-1"]);
    alone.assert_exit(2);
    assert!(
        alone.stderr.contains("give --upload URL too"),
        "{}",
        alone.stderr
    );
    for bad in ["../up", "runs", "", "a/b", "x\x1b[2J"] {
        let out = b.batch(&[file, "--upload", &url, "--batch-id", bad]);
        out.assert_exit(2);
        assert!(
            out.stderr.contains("--batch-id `"),
            "{bad:?}: {}",
            out.stderr
        );
        assert!(!out.stderr.contains('\x1b'), "{bad:?}: {}", out.stderr);
        let fleet = b.ctx.run(&["fleet", "slurm", file, "--batch-id", bad]);
        fleet.assert_exit(2);
    }
    let batches = std::fs::read_dir(b.ctx.root().join("batches")).map_or(0, |d| d.count());
    assert_eq!(batches, 0);
    assert!(!b.ctx.root().join("bucket").exists());
    assert!(b.ctx.run_dirs().is_empty());
}

/// A key outside the repository, and a link to its directory committed in the repository.
fn key_outside(b: &Bench) -> (PathBuf, PathBuf) {
    let outside = b.ctx.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let key = outside.join("id_ed25519");
    std::fs::write(&key, "PRIVATE-KEY-BYTES\n").unwrap();
    std::os::unix::fs::symlink(&outside, b.ctx.work.join("keys")).unwrap();
    git(&b.ctx.work, &["add", "keys"]);
    git(&b.ctx.work, &["commit", "-q", "-m", "a link out"]);
    (outside, key)
}

#[test]
fn an_include_that_leaves_the_repository_is_refused_and_nothing_outside_is_read_or_written() {
    let b = Bench::new();
    let (outside, key) = key_outside(&b);
    let payloads = [
        "keys/id_ed25519".to_owned(),
        "../outside/id_ed25519".to_owned(),
        key.display().to_string(),
        ".git/config".to_owned(),
    ];
    for name in &payloads {
        let file = b.tasks(
            &format!("include = [{name:?}]"),
            "[[task]]\nid = \"a\"\nprompt = \"edit:a\"\n",
        );
        let out = b.batch(&[file.to_str().unwrap()]);
        out.assert_exit(2)
            .assert_stderr_has("task `a`: `include`: ")
            .assert_stderr_has("is not a file of the repository");
        assert!(b.branches().is_empty(), "nothing started for {name}");
    }
    assert_eq!(
        std::fs::read_to_string(&key).unwrap(),
        "PRIVATE-KEY-BYTES\n",
        "the key outside is untouched"
    );

    // The main checkout has `keys` as a directory of its own (not committed), the worktree the
    // committed link: the copy would land outside through it. It is refused, the task fails.
    std::fs::remove_file(b.ctx.work.join("keys")).unwrap();
    std::fs::create_dir(b.ctx.work.join("keys")).unwrap();
    std::fs::write(b.ctx.work.join("keys/local.env"), "TOKEN=x\n").unwrap();
    let file = b.tasks(
        "include = [\"keys/local.env\"]",
        "[[task]]\nid = \"a\"\nprompt = \"edit:a\"\n",
    );
    let out = b.batch(&[file.to_str().unwrap()]);
    out.assert_exit(1);
    let record = b.record();
    assert_eq!(outcome_of(&record, "a"), "setup_failed", "{record:#}");
    let message = record["tasks"][0]["message"].as_str().unwrap();
    assert!(message.contains("is a link"), "{message}");
    assert!(
        !outside.join("local.env").exists(),
        "nothing written outside the worktree"
    );
    assert!(!b.ctx.pid_file().exists(), "no agent started");
}

#[test]
fn a_prompt_file_outside_the_task_files_directory_is_refused_before_anything_starts() {
    let b = Bench::new();
    let dir = b.ctx.root().join("tasks");
    std::fs::create_dir_all(dir.join("prompts")).unwrap();
    std::fs::write(dir.join("prompts/mine.md"), "edit:mine").unwrap();
    let secret = b.ctx.root().join("secret.txt");
    std::fs::write(&secret, "SECRET-IN-A-PROMPT").unwrap();
    std::os::unix::fs::symlink(b.ctx.root(), dir.join("linked")).unwrap();
    let file = dir.join("tasks.toml");
    let write = |prompt_file: &str| {
        let text = format!(
            "[defaults]\ninactivity_timeout = \"2s\"\n[defaults.agents.opencode]\nbin = \"{}\"\n\n\
             [[task]]\nid = \"a\"\nprompt_file = {prompt_file:?}\n",
            b.agent.display()
        );
        std::fs::write(&file, text).unwrap();
    };
    for payload in [
        "../secret.txt".to_owned(),
        secret.display().to_string(),
        "linked/secret.txt".to_owned(),
        "prompts/../../secret.txt".to_owned(),
    ] {
        write(&payload);
        let out = b.batch(&[file.to_str().unwrap()]);
        out.assert_exit(2)
            .assert_stderr_has("tasks.toml:")
            .assert_stderr_has("must be a file beside the task file")
            .assert_hides("SECRET-IN-A-PROMPT");
        assert!(b.branches().is_empty(), "nothing started for {payload}");
    }
    write("prompts/mine.md");
    b.batch(&[file.to_str().unwrap()]).assert_exit(0);
    let branch = b.record()["tasks"][0]["branch"]
        .as_str()
        .unwrap()
        .to_owned();
    let files = git(&b.ctx.work, &["diff", "--name-only", "main", &branch]);
    assert_eq!(
        files.trim(),
        "mine.txt",
        "the prompt beside the task file was read"
    );
}

#[test]
fn a_task_id_git_cannot_name_a_branch_with_is_refused_before_anything_starts() {
    let b = Bench::new();
    for id in [
        "fix.", "fix.lock", "a..b", "-x", "a/b", "a:b", "a~1", "a b", "x\\n",
    ] {
        let file = b.tasks(
            "",
            &format!("[[task]]\nid = \"{id}\"\nprompt = \"edit:a\"\n"),
        );
        let out = b.batch(&[file.to_str().unwrap()]);
        out.assert_exit(2)
            .assert_stderr_has("tasks.toml:")
            .assert_stderr_has("is not a task id");
        assert!(b.branches().is_empty(), "nothing started for {id}");
    }
}

#[test]
fn a_batch_record_with_foreign_text_is_reported_escaped_and_without_a_crash() {
    let ctx = TestContext::new();
    let id = "20261127-101010-abcde";
    let dir = ctx.root().join("batches").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let task = serde_json::json!({
        "task": "a|b\n# owned", "task_id": "a", "agent": "opencode\u{1b}]0;title\u{7}",
        "outcome": "agent_error",
        "message": "died </script><script>alert(1)</script> | col \u{1b}[31mred\n## heading",
        "duration_ms": 5, "known_cost_usd": 0.0,
        "branch": "runbook/x/a`b", "diff": {"files": 0, "insertions": 0, "deletions": 0}
    });
    let record = serde_json::json!({
        "type": "batch", "schema_version": 1, "batch_id": id, "tasks_file": "t.toml",
        "repo": "/r", "base_commit": "aéééééééééééééé", "started_at": "2026-11-27T10:10:10Z",
        "duration_ms": 5, "outcome": "failed", "known_cost_usd": 0.0, "tasks": [task]
    });
    std::fs::write(dir.join("batch.json"), record.to_string()).unwrap();
    let out = ctx.run(&["report", id]);
    out.assert_exit(0);
    assert!(!out.stdout.contains('\u{1b}'), "{}", out.stdout);
    assert!(out.stdout.contains("`aééééééééééé`"), "{}", out.stdout);
    assert!(!out.stdout.contains("<script>"), "{}", out.stdout);
    let rows: Vec<&str> = out.stdout.lines().filter(|l| l.starts_with('|')).collect();
    assert_eq!(
        rows.len(),
        3,
        "a header, its rule and one row: {}",
        out.stdout
    );
    assert!(
        rows.iter().all(|r| r.matches(" | ").count() == 6),
        "seven cells a row, whatever the text: {}",
        out.stdout
    );
    assert!(
        !out.stdout
            .lines()
            .any(|l| l.starts_with("# ") || l.starts_with("## heading")),
        "{}",
        out.stdout
    );
}

#[test]
fn junit_holds_an_agents_message_as_valid_xml_whatever_it_says() {
    let b = Bench::new();
    let words = "exploded ]]></failure></testcase><x a=\"\u{ffff}\u{fffe}\u{1b}[31m";
    let error = serde_json::json!({
        "type": "error", "timestamp": 1_795_319_489_000_u64, "sessionID": "ses_test",
        "error": {"name": "APIError", "data": {"message": words, "statusCode": 500, "isRetryable": false}}
    });
    let lines = [
        STEP_START.to_owned(),
        error.to_string(),
        serde_json::json!({ "$stderr": words }).to_string(),
        r#"{"$exit": 1}"#.to_owned(),
    ];
    std::fs::write(b.ctx.root().join("xmlish.ndjson"), lines.join("\n") + "\n").unwrap();
    let file = b.tasks("", "[[task]]\nid = \"x\"\nprompt = \"xmlish\"\n");
    let junit = b.ctx.root().join("junit.xml");
    b.batch(&[file.to_str().unwrap(), "--junit", junit.to_str().unwrap()])
        .assert_exit(1);
    let message = b.record()["tasks"][0]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.contains("exploded"),
        "the agent's words reach the report: {message}"
    );
    let xml = std::fs::read_to_string(&junit).unwrap();
    let valid = |c: char| {
        matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}')
            || c >= '\u{10000}'
    };
    assert!(
        xml.chars().all(valid),
        "only characters XML 1.0 holds: {xml:?}"
    );
    for (open, close) in [("<testcase", "</testcase>"), ("<failure", "/>")] {
        assert_eq!(xml.matches(open).count(), 1, "{xml}");
        assert!(xml.contains(close), "{xml}");
    }
    assert!(!xml.contains("<x "), "{xml}");
    assert_eq!(xml.matches("</testcase>").count(), 1, "{xml}");
}

#[test]
fn a_tool_name_with_a_newline_stays_on_its_row_of_the_live_view() {
    let b = Bench::new();
    let spoof = r#"{"type":"tool.started","call_id":"c1","name":"bash\n  DONE [  0.1s]   $0.00 spoofed-task\u001b[2K","kind":"shell","input":"x"}"#;
    let agent = b.ctx.agent_script(
        "spoofing-agent",
        &format!(
            "printf '%s\\n' '{{\"type\":\"session.started\",\"session_id\":\"s-1\"}}'\n\
             printf '%s\\n' '{spoof}'\nsleep 3\n\
             printf '%s\\n' '{{\"type\":\"tool.completed\",\"call_id\":\"c1\",\"status\":\"ok\"}}'\n\
             printf '%s\\n' '{{\"type\":\"agent.result\",\"ok\":true}}'"
        ),
    );
    let file = b.tasks(
        "",
        &format!("[[task]]\nid = \"spoof\"\nprompt = \"x\"\nagent_cmd = {agent:?}\n"),
    );
    let mut cmd = b.ctx.runbook(&["batch", file.to_str().unwrap()]);
    cmd.env("TERM", "xterm-256color");
    let pty = crate::support::pty::Pty::spawn(cmd, 100);
    let forged = |text: &str| {
        text.lines()
            .any(|l| l.trim_start().starts_with("DONE") && l.contains("spoofed-task"))
    };
    let screen = pty.wait_for("spoofed-task");
    let text = screen.text();
    assert!(!forged(&text), "a line of its own: {text}");
    assert!(
        text.lines()
            .any(|l| l.contains("  RUN [") && l.contains("bash\\n  DONE")),
        "the name on the task's row, its newline shown: {text}"
    );
    let (_, screen) = pty.finish();
    let text = screen.text();
    assert!(!forged(&text), "no line left behind: {text}");
}

#[test]
fn a_task_file_of_another_clone_runs_its_setup_and_checks_only_once_trusted() {
    let b = Bench::new();
    let clone = b.ctx.root().join("clone");
    std::fs::create_dir_all(&clone).unwrap();
    git(&clone, &["init", "-q", "-b", "main"]);
    let pwned = b.ctx.root().join("pwned");
    let write = |extra: &str| {
        let text = format!(
            "[defaults]\ninactivity_timeout = \"2s\"\n{extra}\n[defaults.agents.opencode]\nbin = \"{}\"\n\n\
             [[task]]\nid = \"a\"\nprompt = \"edit:a\"\n",
            b.agent.display()
        );
        let file = clone.join("tasks.toml");
        std::fs::write(&file, text).unwrap();
        file
    };
    for extra in [
        format!("setup = \"touch {}\"", pwned.display()),
        format!("[defaults.checks]\nowned = \"touch {}\"", pwned.display()),
    ] {
        let file = write(&extra);
        let out = b.batch(&[file.to_str().unwrap()]);
        out.assert_exit(2)
            .assert_stderr_has("not trusted")
            .assert_stderr_has("clone/tasks.toml");
        assert!(!pwned.exists(), "nothing of the clone's ran: {extra}");
        assert!(b.branches().is_empty(), "nothing started");
    }
    let file = write(&format!("setup = \"touch {}\"", pwned.display()));
    b.batch(&[file.to_str().unwrap(), "--trust"]).assert_exit(0);
    assert!(pwned.exists(), "trusted for this batch, its setup ran");
    std::fs::remove_file(&pwned).unwrap();
    let mut cmd = b.ctx.runbook(&["batch", file.to_str().unwrap()]);
    cmd.env("RUNBOOK_TRUST", &file);
    support::run(&mut cmd, LIMIT).assert_exit(0);
    assert!(
        pwned.exists(),
        "RUNBOOK_TRUST holds for the batch and each task's run"
    );
    // A task file beside no repository is the user's own, as before.
    let own = b.tasks("", "[[task]]\nid = \"b\"\nprompt = \"edit:b\"\n");
    b.batch(&[own.to_str().unwrap()]).assert_exit(0);
}

#[test]
fn a_batch_record_naming_another_batch_deletes_none_of_its_branches_and_forges_no_line() {
    let b = Bench::new();
    let base = git(&b.ctx.work, &["rev-parse", "HEAD"]).trim().to_owned();
    let other = "20261127-000000-aaaaa";
    git(&b.ctx.work, &["branch", &format!("runbook/{other}/x")]);
    let id = "20261127-101010-abcde";
    let dir = b.ctx.root().join("batches").join(id);
    std::fs::create_dir_all(&dir).unwrap();
    let task = serde_json::json!({
        "task": "t\n  DONE [  0.1s]   $0.00 forged-task", "task_id": "t", "agent": "opencode",
        "outcome": "agent_error", "message": "x", "duration_ms": 5, "known_cost_usd": 0.0,
        "diff": {"files": 0, "insertions": 0, "deletions": 0}
    });
    let record = serde_json::json!({
        "type": "batch", "schema_version": 1, "batch_id": other, "tasks_file": "t.toml",
        "repo": b.ctx.work, "base_commit": base, "started_at": "2026-11-27T10:10:10Z",
        "duration_ms": 5, "outcome": "failed\n  DONE [  0.1s]   $0.00 forged-outcome",
        "known_cost_usd": 0.0, "tasks": [task]
    });
    std::fs::write(dir.join("batch.json"), record.to_string()).unwrap();
    let status = b.ctx.run(&["status", id]);
    let forged = |text: &str| {
        text.lines()
            .any(|l| l.trim_start().starts_with("DONE") && l.contains("forged"))
    };
    assert!(
        !forged(&status.stderr) && !forged(&status.stdout),
        "{}",
        status.stderr
    );
    assert!(status.stderr.contains("forged-task"), "{}", status.stderr);
    let clean = b.ctx.run(&["batch", "clean", id]);
    clean.assert_exit(0).assert_stderr_has("no branch deleted");
    assert_eq!(
        b.branches(),
        [format!("runbook/{other}/x")],
        "the other batch's branch stays"
    );
}

#[test]
fn a_task_file_that_makes_millions_of_tasks_is_refused_from_its_counts_by_every_command() {
    let b = Bench::new();
    // 1,000 tasks of 10,000 copies each: ten million, in a file of some 70 KB.
    let tasks: String = (0..1000)
        .map(|n| {
            format!("[[task]]\nid = \"t{n}\"\nprompt = \"ok\"\nrepeat = 100\nagents = [\"opencode:100\"]\n\n")
        })
        .collect();
    let file = b.tasks("", &tasks);
    let file = file.to_str().unwrap();
    let runs = [
        ("batch", b.batch(&[file])),
        ("--task-index", b.batch(&[file, "--task-index", "7"])),
        (
            "fleet",
            support::run(&mut b.ctx.runbook(&["fleet", "k8s", file]), LIMIT),
        ),
    ];
    for (how, out) in runs {
        out.assert_exit(2);
        let error = out.stderr.trim();
        assert_eq!(error.lines().count(), 1, "{how}: {error}");
        for part in [
            file,
            "makes 10,000,000 tasks",
            "more than the 10,000 one batch may run",
            "split it into task files of at most 10,000 tasks",
        ] {
            assert!(error.contains(part), "{how}: no `{part}` in {error}");
        }
        assert!(out.took < Duration::from_secs(30), "{how}: {:?}", out.took);
    }
    assert!(b.branches().is_empty(), "nothing started");
    assert!(!b.ctx.root().join("batches").exists(), "no batch was made");
}

#[test]
fn ctrl_c_on_ten_thousand_queued_tasks_records_every_one_and_leaves_no_process() {
    let b = Bench::new();
    // 100 tasks of 100 copies; one runs at a time, and the first hangs.
    let tasks: String = (0..100)
        .map(|n| {
            format!("[[task]]\nid = \"t{n}\"\nprompt = \"long\"\ninactivity_timeout = \"60s\"\n\n")
        })
        .collect();
    let file = b.tasks("repeat = 100", &tasks);
    let child = b
        .ctx
        .runbook(&["batch", file.to_str().unwrap(), "-j", "1", "--keep", "none"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = || {
        std::fs::read_dir(&b.ctx.runs).is_ok_and(|d| {
            d.flatten().any(|e| {
                std::fs::read_to_string(e.path().join("events.ndjson"))
                    .is_ok_and(|t| t.contains("\"tool.started\""))
            })
        })
    };
    // Collected within a minute of the SIGINT, or the test fails: each of the 9,999 skipped
    // tasks once rewrote the whole record, which took the better part of an hour.
    let out = support::interrupt_when(child, LIMIT, "the first task never started", started);
    out.assert_exit(130);
    let record = b.record();
    assert_eq!(record["outcome"], "interrupted");
    let tasks = record["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 10_000);
    let count = |outcome: &str| tasks.iter().filter(|t| t["outcome"] == outcome).count();
    assert_eq!(count("interrupted"), 1, "{:#}", tasks[0]);
    assert_eq!(count("not_started"), 9_999);
    out.assert_stderr_has("10,000 tasks: 1 interrupted, 9999 not started");
    b.ctx.assert_agent_gone();
    assert_eq!(b.worktrees(), 0);
}

/// The processes a test's setups started and recorded (a pid a line in `file`), killed when the
/// test ends, whether it passed or not.
struct Recorded {
    file: PathBuf,
}

impl Recorded {
    fn new(b: &Bench) -> Self {
        Self {
            file: b.ctx.root().join("setup.pids"),
        }
    }

    fn pids(&self) -> Vec<i32> {
        std::fs::read_to_string(&self.file)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect()
    }

    /// Fails the test unless `n` processes were recorded and every one is gone (within 5 s).
    #[track_caller]
    fn assert_gone(&self, n: usize) {
        let pids = self.pids();
        assert_eq!(pids.len(), n, "the setup recorded {pids:?}");
        let left = support::wait_gone(&pids);
        assert!(
            left.is_empty(),
            "the setup's processes outlived it: {left:?}"
        );
    }
}

impl Drop for Recorded {
    fn drop(&mut self) {
        for pid in self.pids() {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// A script that starts a daemon three ways (`setsid`, a double fork, `env -i setsid`: neither
/// the process group, nor the parent, nor the environment leads back to the setup), each
/// recording its pid in `$1`, then returns.
fn daemons(b: &Bench) -> PathBuf {
    let script = b.ctx.root().join("daemons.sh");
    std::fs::write(
        &script,
        "setsid sh -c 'echo $$ >> \"$0\"; exec sleep 1000' \"$1\" >/dev/null 2>&1 &\n\
         sh -c 'sh -c \"echo \\$\\$ >> \\\"\\$0\\\"; exec sleep 1000\" \"$0\" >/dev/null 2>&1 &' \"$1\"\n\
         env -i /usr/bin/setsid /bin/sh -c 'echo $$ >> \"$0\"; exec /bin/sleep 1000' \"$1\" >/dev/null 2>&1 &\n\
         while [ \"$(cat \"$1\" 2>/dev/null | wc -l)\" -lt 3 ]; do sleep 0.05; done\n",
    )
    .unwrap();
    script
}

fn setup_daemons_are_ended(no_cgroup: bool) {
    let mut b = Bench::new();
    if no_cgroup {
        b.ctx.env("RUNBOOK_NO_CGROUP", "1");
    }
    let recorded = Recorded::new(&b);
    let cgroup = b.ctx.root().join("setup.cgroup");
    let file = b.tasks(
        "",
        &format!(
            "[[task]]\nid = \"a\"\nprompt = \"edit:a\"\nsetup = \"cat /proc/self/cgroup > {}; sh {} {}\"\n",
            cgroup.display(),
            daemons(&b).display(),
            recorded.file.display()
        ),
    );
    let out = b.batch(&[file.to_str().unwrap(), "--trust"]);
    out.assert_exit(0);
    assert_eq!(outcome_of(&b.record(), "a"), "completed");
    recorded.assert_gone(3);
    // The setup ran in a cgroup of its own where runbook can make one, and else in none.
    let cgroup = std::fs::read_to_string(cgroup).unwrap();
    let in_own = cgroup
        .lines()
        .any(|l| l.starts_with("0::") && l.contains("/runbook-"));
    let can = nix::unistd::geteuid().is_root()
        && std::fs::read_to_string("/proc/self/mountinfo")
            .is_ok_and(|m| m.lines().any(|l| l.contains(" - cgroup2 ")));
    assert_eq!(in_own, can && !no_cgroup, "{cgroup}");
}

#[test]
fn a_setups_daemons_however_detached_do_not_outlive_it_cgroup() {
    setup_daemons_are_ended(false);
}

#[test]
fn a_setups_daemons_however_detached_do_not_outlive_it_sweep() {
    setup_daemons_are_ended(true);
}

#[test]
fn a_setups_leftover_that_holds_its_output_and_ignores_sigterm_neither_hangs_the_batch_nor_outlives_it()
 {
    let b = Bench::new();
    let recorded = Recorded::new(&b);
    let ignorer = format!(
        "sh -c 'trap \\\"\\\" TERM; echo $$ >> {}; exec sleep 1000'",
        recorded.file.display()
    );
    // `held` returns at once, its leftover holding the setup's stderr; `stuck` never returns. The
    // timeout leaves a loaded machine time to start the shell that records its pid.
    let file = b.tasks(
        "",
        &format!(
            "[[task]]\nid = \"held\"\nprompt = \"edit:held\"\nsetup = \"{ignorer} &\"\n\n\
             [[task]]\nid = \"stuck\"\nprompt = \"edit:stuck\"\nsetup = \"{ignorer}\"\nsetup_timeout = \"5s\"\n"
        ),
    );
    let out = b.batch(&[file.to_str().unwrap(), "-j", "2", "--trust"]);
    out.assert_exit(1);
    assert!(out.took < Duration::from_secs(60), "{:?}", out.took);
    let record = b.record();
    assert_eq!(outcome_of(&record, "held"), "completed");
    assert_eq!(outcome_of(&record, "stuck"), "setup_failed");
    out.assert_stderr_has("its setup did not finish within 5.0s (setup_timeout)");
    recorded.assert_gone(2);
}

/// A batch whose one task's setup leaves daemons, then waits for ever ignoring SIGTERM, started
/// in the background; returned once the setup's processes are all there.
fn in_a_setup(b: &Bench, recorded: &Recorded) -> std::process::Child {
    let script = b.ctx.root().join("stays.sh");
    std::fs::write(
        &script,
        format!(
            "sh {} \"$1\"\ntrap '' TERM\necho $$ >> \"$1\"\nexec sleep 1000\n",
            daemons(b).display()
        ),
    )
    .unwrap();
    let file = b.tasks(
        "",
        &format!(
            "[[task]]\nid = \"a\"\nprompt = \"edit:a\"\nsetup = \"sh {} {}\"\n",
            script.display(),
            recorded.file.display()
        ),
    );
    let child = b
        .ctx
        .runbook(&["batch", file.to_str().unwrap(), "--trust"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while recorded.pids().len() < 4 {
        assert!(start.elapsed() < LIMIT, "the setup never started");
        std::thread::sleep(Duration::from_millis(50));
    }
    child
}

#[test]
fn ctrl_c_during_a_setup_that_ignores_sigterm_ends_the_batch_and_every_process_of_the_setup() {
    let b = Bench::new();
    let recorded = Recorded::new(&b);
    let child = in_a_setup(&b, &recorded);
    let out = support::interrupt_when(child, LIMIT, "", || true);
    out.assert_exit(130);
    let record = b.record();
    assert_eq!(outcome_of(&record, "a"), "setup_failed");
    assert_eq!(
        record["tasks"][0]["message"],
        "interrupted during its setup"
    );
    recorded.assert_gone(4);
}

fn sigkill_during_setup(no_cgroup: bool) {
    let mut b = Bench::new();
    if no_cgroup {
        b.ctx.env("RUNBOOK_NO_CGROUP", "1");
    }
    let recorded = Recorded::new(&b);
    let mut child = in_a_setup(&b, &recorded);
    // Past the half second in which the guardian hears of processes outside a cgroup.
    std::thread::sleep(Duration::from_millis(1500));
    child.kill().unwrap();
    child.wait().unwrap();
    recorded.assert_gone(4);
}

#[test]
fn a_batch_killed_during_a_setup_leaves_none_of_its_processes_cgroup() {
    sigkill_during_setup(false);
}

#[test]
fn a_batch_killed_during_a_setup_leaves_none_of_its_processes_sweep() {
    sigkill_during_setup(true);
}

/// A batch's runs belong to the repository the batch was made from: `stats` counts them under
/// it (not a project per worktree), `list --here` there finds them, `list` names each one's task
/// and batch, and `report` takes the batch's random part as it takes a run's.
#[test]
fn a_batchs_runs_belong_to_its_repository_and_name_their_task_and_batch() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"build-fix\"\nprompt = \"edit:a\"\n\n[[task]]\nid = \"docs\"\nprompt = \"fail\"\n",
    );
    b.batch(&[file.to_str().unwrap()]).assert_exit(1);
    let id = b.record()["batch_id"].as_str().unwrap().to_owned();
    let short = id.rsplit('-').next().unwrap().to_owned();
    let repo = b.ctx.work.canonicalize().unwrap();

    let stats = b.ctx.run(&["stats", "--wide"]);
    stats.assert_exit(0);
    assert!(!stats.stdout.contains("worktrees"), "{}", stats.stdout);
    let row = stats
        .stdout
        .lines()
        .find(|l| l.contains(repo.to_str().unwrap()))
        .unwrap_or_else(|| panic!("no row for the repository: {}", stats.stdout));
    assert!(
        row.split_whitespace().any(|w| w == "2"),
        "both runs under it: {row}"
    );

    let here = b.ctx.run(&["list", "--here", "--wide"]);
    here.assert_exit(0);
    assert!(
        here.stdout
            .contains(&format!("build-fix (batch {short}): edit:a"))
            && here.stdout.contains(&format!("docs (batch {short}): fail")),
        "{}\n{}",
        here.stdout,
        here.stderr
    );

    // Programs get the same from `list --json`: each receipt with its task and batch.
    let json = b.ctx.run(&["list", "--here", "--json"]);
    json.assert_exit(0);
    let mut tasks: Vec<(String, String)> = json
        .stdout
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("a JSON line"))
        .map(|r| {
            let batch = &r["batch"];
            (
                batch["task"].as_str().unwrap_or_default().to_owned(),
                batch["id"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    tasks.sort();
    assert_eq!(
        tasks,
        [
            ("build-fix".to_owned(), short.clone()),
            ("docs".to_owned(), short.clone())
        ],
        "{}",
        json.stdout
    );

    let report = b.ctx.run(&["report", &short]);
    report.assert_exit(0);
    assert!(
        report.stdout.starts_with(&format!("## Batch `{id}`")),
        "{}",
        report.stdout
    );
    let none = b.ctx.run(&["report", "zzzzz"]);
    none.assert_exit(2);
    assert!(
        none.stderr.contains("no run or batch matches `zzzzz`")
            && none
                .stderr
                .contains(&format!("the latest batches are {id}")),
        "{}",
        none.stderr
    );
}

/// `status BATCH` tells the batch with the batch's own summary and exits 0 whatever its outcome,
/// as `status RUN` does; the batch's report shows its figures as GitHub would, and its JUnit
/// report skips a task that never started rather than failing it.
#[test]
fn status_of_a_batch_says_its_summary_and_exits_as_for_a_run_and_junit_skips_what_never_ran() {
    let b = Bench::new();
    let junit = b.ctx.root().join("junit.xml");
    let file = b.tasks(
        "",
        "[[task]]\nid = \"fix-login\"\nprompt = \"edit:login\"\n\n[[task]]\nid = \"breaks\"\nprompt = \"fail\"\n\n[[task]]\nid = \"later\"\nprompt = \"edit:later\"\n",
    );
    let ran = b.batch(&[
        file.to_str().unwrap(),
        "-j",
        "1",
        "--max-fail",
        "1",
        "--junit",
        junit.to_str().unwrap(),
    ]);
    ran.assert_exit(1);
    let summary = "3 tasks: 1 completed, 1 agent error, 1 not started";
    assert!(ran.stderr.contains(summary), "{}", ran.stderr);
    let id = b.record()["batch_id"].as_str().unwrap().to_owned();

    let status = b.ctx.run(&["status", &id]);
    status.assert_exit(0);
    assert!(
        status.stderr.contains("Summary") && status.stderr.contains(summary),
        "{}",
        status.stderr
    );

    let xml = std::fs::read_to_string(&junit).unwrap();
    assert!(
        xml.contains("tests=\"3\" failures=\"1\" skipped=\"1\""),
        "{xml}"
    );
    let later = xml.lines().find(|l| l.contains("name=\"later\"")).unwrap();
    assert!(
        later.contains("<skipped ") && !later.contains("<failure"),
        "{later}"
    );

    let report = b.ctx.run(&["report", &id]);
    report.assert_exit(0);
    let row = report
        .stdout
        .lines()
        .find(|l| l.starts_with("| fix-login |"))
        .unwrap();
    assert!(
        row.contains("| $0.0500 |") && row.contains("| +1 −0 |"),
        "{row}"
    );
}

/// What a batch leaves is counted in words as written: batches, branches.
#[test]
fn batches_and_branches_are_spelt_so() {
    let b = Bench::new();
    let file = b.tasks(
        "",
        "[[task]]\nid = \"one\"\nprompt = \"fail\"\n\n[[task]]\nid = \"two\"\nprompt = \"fail\"\n",
    );
    b.batch(&[file.to_str().unwrap(), "--keep", "all"])
        .assert_exit(1);
    b.batch(&[file.to_str().unwrap(), "--keep", "all"])
        .assert_exit(1);
    let list = b.ctx.run(&["list"]);
    assert!(list.stderr.contains("left by 2 batches"), "{}", list.stderr);
    let clean = b.ctx.run(&["batch", "clean"]);
    clean.assert_exit(0);
    assert!(
        clean.stdout.contains("2 branches") || clean.stderr.contains("2 branches"),
        "{}{}",
        clean.stdout,
        clean.stderr
    );
    assert!(
        !format!("{}{}{}", list.stderr, clean.stdout, clean.stderr).contains("chs "),
        "{}{}",
        clean.stdout,
        clean.stderr
    );
}
