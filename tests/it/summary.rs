//! The run's summary speaks for the whole run, wherever it is shown (the receipt, the end of the
//! live view, `status`, `report`): the task's answer, then what repair changed, labelled; and a
//! run that did not complete says so in runbook's words, never with the agent's last words.

use std::time::Duration;

use pulldown_cmark::{Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use runbook::event::Outcome;

use crate::support::pty::Pty;
use crate::support::{self, TestContext};

/// An agent that answers the task, then each repair: `GIVE_UP=1` makes every repair answer
/// "Nothing more to do." without fixing anything; else the first repair writes `fixed`.
const AGENT: &str = r###"
prompt="$(eval echo \"\${$#}\")"
say() { printf '%s\n' "$1"; }
say '{"type":"session.started","session_id":"s-1"}'
case "$prompt" in
  *"checks fail"*)
    n=$(cat repairs 2>/dev/null || echo 0); n=$((n+1)); echo $n > repairs
    if [ -n "$GIVE_UP" ]; then
      say '{"type":"text","text":"Nothing more to do."}'
    else
      echo ok > fixed
      say '{"type":"text","text":"Fixed: add(a, b) now returns a + b."}'
    fi ;;
  *) say '{"type":"text","text":"## Done\n\nAdded add(a, b) to math.py."}' ;;
esac
say '{"type":"agent.result","ok":true}'
"###;

/// The task, with Markdown and HTML of the user's own in it.
const PROMPT: &str = "add an `add` function\n\n# not a heading\n<b>bold?</b> @octocat | a | b |";

/// A secret-looking value the failing check prints, unknown to the run that printed it.
const SECRET: &str = "s3cr3t-value-4242";

/// What the failing check prints last, trying to break out of its code block and runbook's
/// `<details>`: a longer fence, the closing tag, a heading, a mention, and a secret.
fn check_output() -> String {
    format!("FAILED test_add\n````\n</details><details open>\n# Passed\n@octocat token={SECRET}")
}

/// `runbook run` of [`AGENT`] on [`PROMPT`] with a check `test` that passes once `fixed`
/// exists, and prints [`check_output`] and the attempt's number when it fails.
fn run(ctx: &TestContext, give_up: bool) -> support::Outcome {
    let agent = ctx.agent_script("adder", AGENT);
    std::fs::write(ctx.root().join("check.txt"), check_output()).unwrap();
    let check = format!(
        "test=test -e fixed || {{ echo \"attempt $(cat repairs 2>/dev/null || echo 0)\"; cat '{}'; exit 1; }}",
        ctx.root().join("check.txt").display()
    );
    let mut cmd = ctx.runbook(&["run", "--agent-cmd", &agent, "--check", &check, PROMPT]);
    if give_up {
        cmd.env("GIVE_UP", "1");
    }
    support::run(&mut cmd, Duration::from_secs(60))
}

/// `runbook report` in Markdown, with [`SECRET`] known to it as a secret.
fn report(ctx: &TestContext) -> String {
    let mut cmd = ctx.runbook(&["report", "--format", "markdown"]);
    cmd.env("DEPLOY_TOKEN", SECRET);
    let out = support::run(&mut cmd, Duration::from_secs(30));
    out.assert_exit(0);
    out.stdout
}

/// What a reader of `markdown` sees: its headings, its code blocks, and its text outside them
/// (without the word joiners that keep GitHub from linking).
struct Read {
    headings: Vec<String>,
    blocks: Vec<String>,
    text: String,
}

fn read(markdown: &str) -> Read {
    let options = Options::ENABLE_TABLES | Options::ENABLE_GFM | Options::ENABLE_FOOTNOTES;
    let (mut headings, mut blocks, mut text) = (Vec::new(), Vec::new(), String::new());
    let (mut heading, mut block): (Option<String>, Option<String>) = (None, None);
    for e in Parser::new_ext(markdown, options) {
        match e {
            Event::Start(Tag::Heading { level, .. }) => {
                assert_eq!(
                    level,
                    HeadingLevel::H2,
                    "runbook's headings only: {markdown}"
                );
                heading = Some(String::new());
            }
            Event::End(TagEnd::Heading(_)) => headings.extend(heading.take()),
            Event::Start(Tag::CodeBlock(_)) => block = Some(String::new()),
            Event::End(TagEnd::CodeBlock) => blocks.extend(block.take()),
            Event::Text(t) => match (&mut heading, &mut block) {
                (Some(h), _) => h.push_str(&t),
                (_, Some(b)) => b.push_str(&t),
                _ => text.push_str(&t),
            },
            Event::Code(c) => text.push_str(&c),
            Event::SoftBreak | Event::HardBreak | Event::End(_) => text.push('\n'),
            Event::Html(h) | Event::InlineHtml(h) => {
                assert!(
                    ["<details><summary>", "</details>", "<sub>", "</sub>"]
                        .iter()
                        .any(|own| h.starts_with(own)),
                    "HTML not runbook's: {h:?} in {markdown}"
                );
            }
            _ => {}
        }
    }
    Read {
        headings,
        blocks,
        text: text.replace('\u{2060}', ""),
    }
}

/// The receipt's `summary`, as written in `result.json`.
fn summary_json(ctx: &TestContext) -> serde_json::Value {
    let text = std::fs::read_to_string(ctx.run_dir().join("result.json")).unwrap();
    let receipt: serde_json::Value = serde_json::from_str(&text).unwrap();
    receipt["summary"].clone()
}

/// The prompt's lines are all in the report's text, as written.
fn assert_prompt_shown(r: &Read, markdown: &str) {
    for line in PROMPT.lines().filter(|l| !l.is_empty()) {
        assert!(r.text.contains(line), "{line:?} not in {markdown}");
    }
}

#[test]
fn a_repaired_run_is_summarized_by_the_tasks_answer_then_what_repair_changed() {
    let ctx = TestContext::new();
    let out = run(&ctx, false);
    out.assert_exit(0);
    let said = "Added add(a, b) to math.py. Repair: Fixed: add(a, b) now returns a + b.";
    out.assert_stderr_has(&format!("summary: {said}"));

    let receipt = ctx.ended_as(Outcome::Completed);
    assert_eq!(receipt.summary.expect("a summary").text, said);
    let summary = summary_json(&ctx);
    assert_eq!(summary["task"], "Added add(a, b) to math.py.");
    assert_eq!(
        summary["repairs"],
        serde_json::json!(["Fixed: add(a, b) now returns a + b."])
    );
    assert!(summary.get("verdict").is_none(), "{summary}");

    ctx.run(&["status"]).assert_exit(0).assert_stdout_has(said);
    let markdown = report(&ctx);
    let r = read(&markdown);
    assert_eq!(
        r.headings,
        ["Summary", "Task", "Checks", "Run"],
        "{markdown}"
    );
    assert!(r.text.contains(said), "{markdown}");
    assert_prompt_shown(&r, &markdown);
    assert!(
        r.blocks.is_empty(),
        "the checks pass in the end: {markdown}"
    );
}

#[test]
fn when_repair_gives_up_the_summary_says_the_checks_failed_not_the_agents_last_words() {
    let ctx = TestContext::new();
    let out = run(&ctx, true);
    out.assert_exit(9);
    let said = "Checks failed after 2 repair attempts: test";
    // The live view says how the run ended on its last lines, once: its summary says no more.
    assert!(!out.stderr.contains("summary:"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("summary: Nothing more to do."),
        "{}",
        out.stderr
    );

    let receipt = ctx.ended_as(Outcome::ChecksFailed);
    assert_eq!(receipt.summary.expect("a summary").text, said);
    let summary = summary_json(&ctx);
    assert_eq!(summary["verdict"], said);
    // The agent's words are kept for what they are, not as the run's.
    assert_eq!(summary["task"], "Added add(a, b) to math.py.");
    assert_eq!(
        summary["repairs"],
        serde_json::json!(["Nothing more to do.", "Nothing more to do."])
    );

    ctx.run(&["status"]).assert_stdout_has(said);
    let markdown = report(&ctx);
    assert!(markdown.starts_with("## Summary\n\n"), "{markdown}");
    let r = read(&markdown);
    assert_eq!(
        r.headings,
        ["Summary", "Task", "Checks", "Run"],
        "{markdown}"
    );
    assert!(r.text.contains(said), "{markdown}");
    assert!(!markdown.contains("Nothing more to do"), "{markdown}");
    assert_prompt_shown(&r, &markdown);
    // The failed check's last lines: one code block holding exactly them, the secret masked.
    let tail = format!("attempt 2\n{}\n", check_output()).replace(SECRET, "[REDACTED]");
    assert_eq!(r.blocks, [tail], "{markdown}");
    assert!(!markdown.contains(SECRET), "{markdown}");
}

#[test]
fn a_plan_that_was_not_approved_says_nothing_was_run_not_the_plan() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "planner",
        r##"printf '%s\n' '{"type":"session.started","session_id":"s-1"}'
printf '%s\n' '{"type":"text","text":"# Plan\n\n## Files\n\n- `math.py`: add it"}'
printf '%s\n' '{"type":"agent.result","ok":true}'"##,
    );
    let mut cmd = ctx.runbook(&["run", "--agent-cmd", &agent, "--plan", PROMPT]);
    cmd.env("TERM", "xterm-256color");
    let mut pty = Pty::spawn(cmd, 120);
    pty.wait_for("[e]xecute");
    pty.send("a");
    let (status, screen) = pty.finish();
    assert_eq!(status.code(), Some(8), "{}", screen.text());
    let said = "The plan was not approved; nothing was run.";
    // Said once on screen, where the plan was refused and on the last line: no summary repeats it.
    assert!(
        screen.has_row(|r| r.contains("plan not approved")),
        "{}",
        screen.text()
    );
    assert!(
        !screen.has_row(|r| r.contains("summary: Plan")),
        "{}",
        screen.text()
    );

    let receipt = ctx.ended_as(Outcome::Aborted);
    assert_eq!(receipt.summary.expect("a summary").text, said);
    let summary = summary_json(&ctx);
    assert!(
        summary.get("task").is_none(),
        "the task never ran: {summary}"
    );
    let markdown = report(&ctx);
    let r = read(&markdown);
    assert_eq!(r.headings, ["Summary", "Task", "Run"], "{markdown}");
    assert!(r.text.contains(said), "{markdown}");
    assert!(
        !r.text.contains("math.py"),
        "the plan is not the summary: {markdown}"
    );
    assert_prompt_shown(&r, &markdown);
}

#[test]
fn a_run_stopped_by_its_budget_says_so_with_its_steps() {
    let ctx = TestContext::new();
    let step = r#"printf '%s\n' '{"type":"step.finished","reason":"tool-calls","tokens":{"input":1000,"output":10,"reasoning":0,"cache_read":0,"cache_write":0},"cost_usd":0.4}'"#;
    let agent = ctx.agent_script(
        "spender",
        &format!(
            "printf '%s\\n' '{{\"type\":\"text\",\"text\":\"Everything works now.\"}}'\n{step}\n{step}\n{step}\nsleep 30"
        ),
    );
    let out = ctx.run_agent_cmd(&agent, &["--max-cost", "1", PROMPT]);
    out.assert_exit(4);
    let said = "Stopped: budget reached after 3 steps.";
    // The live view says how the run ended on its last lines, once: its summary says no more.
    assert!(!out.stderr.contains("summary:"), "{}", out.stderr);
    assert!(
        !out.stderr.contains("summary: Everything works"),
        "{}",
        out.stderr
    );
    let receipt = ctx.ended_as(Outcome::BudgetExceeded);
    assert_eq!(receipt.summary.expect("a summary").text, said);
    ctx.run(&["status"]).assert_stdout_has(said);
    let markdown = report(&ctx);
    let r = read(&markdown);
    assert!(r.text.contains(said), "{markdown}");
    assert!(!r.text.contains("Everything works"), "{markdown}");
    assert_prompt_shown(&r, &markdown);
}
