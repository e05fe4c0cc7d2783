//! `runbook run --plan`: a read-only planning turn, a decision, then execution in the same
//! session. Without a terminal with a scripted `--agent-cmd` agent; through a real
//! pseudo-terminal with the real OpenCode CLI and the fake provider.

use std::process::Stdio;

use rexpect::session::PtySession;
use runbook::event::{Decision, EventKind, Outcome, ToolStatus};

use crate::support::fake_llm::{self as chat, FakeLlm, Reply, Usage};
use crate::support::sse;
use crate::support::{self, TestContext, events_and_receipt};

/// Plans when asked to plan (the plan names the revision), edits when asked to carry it out;
/// `CHANGE_WHILE_PLANNING=1` makes it write a file while planning.
const SCRIPTED_AGENT: &str = r##"
prompt="$(eval echo \"\${$#}\")"
say() { printf '%s\n' "$1"; }
say '{"type":"session.started","session_id":"s-1"}'
case "$prompt" in
  *"You are planning"*)
    [ -n "$CHANGE_WHILE_PLANNING" ] && echo oops > stray.txt
    say '{"type":"text","text":"# Plan\n\n## Files\n\n- `out.txt`: create it\n\n## Testing\n\nRead it.\n\n## Risks\n\nNone."}'
    say '{"type":"step.finished","reason":"stop","tokens":{"input":1200,"output":34,"reasoning":0,"cache_read":0,"cache_write":0},"cost_usd":0.0042}' ;;
  *"Revise your plan"*)
    say '{"type":"text","text":"# Plan, revised"}' ;;
  *)
    echo made > out.txt
    say '{"type":"tool.completed","call_id":"w","name":"write","kind":"write","input":"out.txt","status":"ok"}'
    say '{"type":"text","text":"Done."}' ;;
esac
say '{"type":"agent.result","ok":true}'
"##;

/// [`SCRIPTED_AGENT`] in the test's root.
fn scripted_agent(ctx: &TestContext) -> String {
    ctx.agent_script("planner", SCRIPTED_AGENT)
}

/// Runs `runbook run --agent-cmd SCRIPTED_AGENT ARGS…` to its end.
fn run_planner(ctx: &TestContext, args: &[&str]) -> support::Outcome {
    ctx.run_agent_cmd(&scripted_agent(ctx), args)
}

const PLAN: &str =
    "# Plan\n\n## Files\n\n- `out.txt`: create it\n\n## Testing\n\nRead it.\n\n## Risks\n\nNone.";

#[test]
fn without_a_terminal_the_plan_is_made_kept_and_executed() {
    let ctx = TestContext::new();
    let out = run_planner(&ctx, &["--plan", "create out.txt"]);
    out.assert_exit(0);
    out.assert_stderr_has("## Files")
        .assert_stderr_has("▶ the plan · planning: 1,234 tokens · $0.0042")
        .assert_stderr_has("executing the plan (automatically)");
    assert_eq!(
        std::fs::read_to_string(ctx.run_dir().join("plan.md")).unwrap(),
        format!("{PLAN}\n")
    );
    assert!(ctx.work.join("out.txt").exists(), "the execute turn ran");
    let receipt = ctx.receipt();
    let plan = receipt.plan.expect("the receipt keeps the plan");
    assert_eq!(plan.text, PLAN);
    assert_eq!(plan.decision, Some(Decision::Execute));
    assert_eq!(receipt.turns.len(), 2);
    let events = ctx.events();
    let write_turn = events.iter().find_map(|e| match &e.kind {
        EventKind::ToolCompleted(t) if t.name == "write" => Some(e.turn.index),
        _ => None,
    });
    assert_eq!(write_turn, Some(1), "files change in the execute turn only");
}

#[test]
fn plan_only_on_a_terminal_shows_the_plan_once() {
    let ctx = TestContext::new();
    let agent = scripted_agent(&ctx);
    let cmd = ctx.runbook(&[
        "run",
        "--agent-cmd",
        &agent,
        "--plan-only",
        "create out.txt",
    ]);
    let pty = crate::support::pty::Pty::spawn(cmd, 100);
    let (status, screen) = pty.finish();
    assert!(status.success(), "{}", screen.text());
    let text = screen.text();
    assert_eq!(text.matches("create it").count(), 1, "{text}");
    assert!(text.contains("stopping at the plan"), "{text}");
    // Its paragraphs stay apart: a blank row between each heading and what follows.
    let rows = screen.rows();
    let at = rows
        .iter()
        .position(|r| r.trim().ends_with("Testing"))
        .unwrap_or_else(|| panic!("no heading:\n{text}"));
    assert!(
        rows[at - 1].trim().is_empty() && rows[at + 1].trim().is_empty(),
        "{text}"
    );
}

#[test]
fn plan_only_stops_at_the_plan_and_prints_it_on_stdout() {
    let ctx = TestContext::new();
    let out = run_planner(&ctx, &["--plan-only", "create out.txt"]);
    out.assert_exit(0);
    assert_eq!(
        out.stdout,
        format!("{PLAN}\n"),
        "stdout is the plan and nothing else"
    );
    assert!(!ctx.work.join("out.txt").exists(), "nothing was executed");
    let receipt = ctx.receipt();
    assert_eq!(receipt.turns.len(), 1);
    assert_eq!(receipt.plan.unwrap().decision, Some(Decision::Stop));

    // With --json the plan is an event, and stdout stays JSON lines.
    let ctx = TestContext::new();
    let out = run_planner(&ctx, &["--json", "--plan-only", "create out.txt"]);
    out.assert_exit(0);
    let (events, receipt) = events_and_receipt(&out.stdout);
    assert!(
        events.iter().any(
            |e| matches!(&e.kind, EventKind::PlanProposed { text, revision: 0 } if text == PLAN)
        )
    );
    assert_eq!(receipt.plan.unwrap().text, PLAN);
}

#[test]
fn an_agent_that_changes_files_while_planning_is_stopped_before_executing() {
    let mut ctx = TestContext::new();
    ctx.env("CHANGE_WHILE_PLANNING", "1");
    let out = run_planner(&ctx, &["--plan", "x"]);
    out.assert_exit(1);
    let receipt = ctx.ended_as(Outcome::AgentError);
    assert!(
        receipt
            .message
            .contains("changed files while planning (stray.txt)"),
        "{}",
        receipt.message
    );
    assert_eq!(receipt.turns.len(), 1, "nothing was executed");
    assert!(!ctx.work.join("out.txt").exists());
}

/// What runbook itself writes in the working directory while the agent plans (its run
/// directory there, an observer's file) is not the agent changing files.
#[test]
fn runbooks_own_writes_in_the_work_dir_are_not_the_agent_changing_files() {
    let mut ctx = TestContext::new();
    let runs = ctx.work.join("runs");
    let runs = runs.to_str().unwrap();
    let agent = scripted_agent(&ctx);
    let out = support::run(
        &mut ctx.runbook(&[
            "run",
            "--runs-dir",
            runs,
            "--agent-cmd",
            &agent,
            "--on-event",
            "cat > events.log",
            "--plan",
            "create out.txt",
        ]),
        std::time::Duration::from_secs(60),
    );
    out.assert_exit(0);
    assert!(ctx.work.join("out.txt").exists(), "the execute turn ran");
    assert!(ctx.work.join("events.log").metadata().unwrap().len() > 0);
    // A change of the agent's own is still caught, next to them.
    ctx.env("CHANGE_WHILE_PLANNING", "1");
    let out = support::run(
        &mut ctx.runbook(&[
            "run",
            "--runs-dir",
            runs,
            "--agent-cmd",
            &agent,
            "--plan",
            "x",
        ]),
        std::time::Duration::from_secs(60),
    );
    out.assert_exit(1)
        .assert_stderr_has("changed files while planning (stray.txt)");
}

// Through a terminal, with the real OpenCode.

const PLAN_1: &str = "# Plan\n\n## Files\n\n- `README.md`: change its last line\n\n## Testing\n\nRead README.md back.\n\n## Risks\n\nNone.";
const PLAN_2: &str = "# Plan\n\n## Files\n\n- `README.md`: change its last line, and nothing else\n\n## Testing\n\nRead README.md back.\n\n## Risks\n\nNone.";
const FEEDBACK: &str = "Touch nothing but README.md.";

/// OpenCode in a work dir with the demo README, a provider that plans twice then edits, and
/// runbook in a pseudo-terminal.
struct Terminal {
    ctx: TestContext,
    /// The provider, for runs of the real OpenCode.
    llm: Option<FakeLlm>,
    session: PtySession,
}

/// What runbook asks once a plan is shown.
const CHOICES: &str = "[e]xecute  [r]evise  [a]bort";

/// OpenCode planning through runbook in a pseudo-terminal, at the first plan's prompt.
fn terminal() -> Option<Terminal> {
    let bin = support::opencode_bin()?;
    let mut ctx = TestContext::new();
    ctx.env("TERM", "xterm-256color");
    let llm = chat::opencode_editing_readme(&mut ctx, |edit| {
        vec![
            Reply::text(PLAN_1, Usage::new(1200, 60)),
            Reply::text(PLAN_2, Usage::new(1400, 70)),
            Reply::tool_calls(None, vec![edit], Usage::new(1600, 40)),
            Reply::text(chat::DONE_EDITING, Usage::new(1800, 20)),
        ]
    });
    let args = chat::opencode_run_args(&bin, &["--plan"]);
    Some(Terminal::at_the_prompt(ctx, Some(llm), &args))
}

/// `runbook ARGS` with a pseudo-terminal for stdin, stdout and stderr.
fn in_pty(ctx: &TestContext, args: &[&str]) -> PtySession {
    let mut cmd = ctx.runbook(args);
    cmd.stdin(Stdio::inherit())
        .stdout(Stdio::inherit())
        .stderr(Stdio::inherit());
    rexpect::session::spawn_command(cmd, Some(90_000)).expect("spawn in a pty")
}

impl Terminal {
    /// `runbook ARGS` in a pseudo-terminal, once it asks what to do with the plan.
    fn at_the_prompt(ctx: TestContext, llm: Option<FakeLlm>, args: &[&str]) -> Terminal {
        let session = in_pty(&ctx, args);
        let mut t = Terminal { ctx, llm, session };
        t.expect(CHOICES);
        t
    }

    /// Types `keys` (the pty's writer is line-buffered: flushed at once).
    fn type_keys(&mut self, keys: &str) {
        self.session.send(keys).expect("write to the pty");
        self.session.flush().expect("flush the pty");
    }

    fn expect(&mut self, text: &str) {
        if let Err(e) = self.session.exp_string(text) {
            panic!("waiting for {text:?}: {e}");
        }
    }

    fn finish(mut self) -> (i32, Self) {
        let _ = self.session.exp_eof();
        let status = self.session.process().wait().expect("wait for runbook");
        let code = match status {
            nix::sys::wait::WaitStatus::Exited(_, code) => code,
            other => panic!("runbook did not exit: {other:?}"),
        };
        (code, self)
    }
}

#[test]
fn revise_with_feedback_then_execute_in_the_same_session() {
    let Some(mut t) = terminal() else {
        return;
    };
    t.type_keys("r");
    t.expect("What should change?");
    t.type_keys(FEEDBACK);
    t.type_keys("\r");
    t.type_keys("\r");
    t.expect("the plan, revision 1");
    t.expect("and nothing else");
    t.expect(CHOICES);
    t.type_keys("e");
    let (code, t) = t.finish();
    assert_eq!(code, 0);

    let events = t.ctx.events();
    let receipt = t.ctx.ended_as(Outcome::Completed);
    assert_eq!(receipt.turns.len(), 3, "plan, revision, execution");
    let plan = receipt.plan.expect("a plan in the receipt");
    assert_eq!((plan.revisions, plan.text.as_str()), (1, PLAN_2));
    assert_eq!(plan.feedback, [FEEDBACK]);
    assert_eq!(plan.decision, Some(Decision::Execute));
    assert!(plan.tokens > 0 && plan.cost_usd.is_some_and(|c| c > 0.0));
    assert_eq!(
        std::fs::read_to_string(t.ctx.run_dir().join("plan.md")).unwrap(),
        format!("{PLAN_2}\n")
    );

    // One session throughout; the planning turns were read-only.
    let sessions: std::collections::BTreeSet<&str> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::SessionStarted { session_id } => Some(session_id.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(sessions.len(), 1, "{sessions:?}");
    let argv = support::argvs(&events);
    let read_only = |a: &Vec<String>| a.windows(2).any(|w| w == ["--agent", "plan"]);
    assert!(read_only(argv[0]) && read_only(argv[1]) && !read_only(argv[2]));

    // The feedback reached the provider, in the same conversation.
    let revised = t.llm.as_ref().expect("a provider").main_requests();
    assert!(
        revised
            .iter()
            .any(|r| r.body.to_string().contains(FEEDBACK))
    );
    // The file changed in the execution turn only.
    let edits: Vec<(u32, ToolStatus)> = events
        .iter()
        .filter_map(|e| match &e.kind {
            EventKind::ToolCompleted(t) if t.name == "edit" => Some((e.turn.index, t.status)),
            _ => None,
        })
        .collect();
    assert_eq!(edits, [(2, ToolStatus::Ok)]);
    assert_eq!(
        std::fs::read_to_string(t.ctx.work.join("README.md")).unwrap(),
        sse::edited_readme()
    );
}

fn assert_aborted(t: Terminal) {
    let (code, t) = t.finish();
    assert_eq!(code, 8);
    let receipt = t.ctx.ended_as(Outcome::Aborted);
    assert_eq!(receipt.turns.len(), 1, "nothing was executed");
    assert_eq!(receipt.plan.unwrap().decision, Some(Decision::Abort));
    assert_eq!(
        std::fs::read_to_string(t.ctx.work.join("README.md")).unwrap(),
        sse::README
    );
}

#[test]
fn abort_at_the_prompt_ends_the_run_with_a_receipt_and_nothing_executed() {
    let Some(mut t) = terminal() else {
        return;
    };
    t.type_keys("a");
    assert_aborted(t);
}

#[test]
fn ctrl_c_at_the_prompt_is_abort() {
    let Some(mut t) = terminal() else {
        return;
    };
    t.session.send_control('c').unwrap();
    assert_aborted(t);
}

#[test]
fn after_the_last_revision_only_execute_or_abort_is_offered() {
    let mut ctx = TestContext::new();
    ctx.env("TERM", "xterm-256color");
    let agent = scripted_agent(&ctx);
    let args = [
        "run",
        "--agent-cmd",
        &agent,
        "--plan",
        "--max-revisions",
        "1",
        "create out.txt",
    ];
    let mut t = Terminal::at_the_prompt(ctx, None, &args);
    t.type_keys("r");
    t.expect("What should change?");
    t.type_keys("smaller\r\r");
    t.expect("# Plan, revised");
    t.expect("[e]xecute  [a]bort (no revisions left)");
    // `r` is not offered any more: nothing happens until a real choice.
    t.type_keys("r");
    t.type_keys("e");
    let (code, t) = t.finish();
    assert_eq!(code, 0);
    let plan = t.ctx.receipt().plan.unwrap();
    assert_eq!(plan.revisions, 1);
    assert_eq!(plan.feedback, ["smaller"]);
    assert_eq!(plan.decision, Some(Decision::Execute));
    assert!(t.ctx.work.join("out.txt").exists());
}
