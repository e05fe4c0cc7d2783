//! `runbook report --format markdown` of a run whose every foreign text is hostile: it is pasted
//! in a pull request on GitHub, so it must render as the text it is, read back by a real
//! CommonMark parser.

use std::time::Duration;

use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

use crate::support::{self, TestContext, sh};

/// The word joiner the report puts after `@`, `#` and `:` so that GitHub links nothing.
const NEUTRALISER: char = '\u{2060}';

/// The agent's last word: closing runbook's HTML, mentions, images, links, fences, HTML,
/// references, URLs, emoji, entities, math, and every line start that opens a block.
const SUMMARY: &str = "</details><details open>\n\
@octocat look: ![x](http://evil/x.png) and [click](javascript:alert(1))\n\
```\n<script>alert(1)</script>\n```\n\
Fixes #1 and GH-2, see https://evil.example, www.evil.example, <https://x.example> :smile:\n\
&amp; &lt;b&gt; $x$ ~~gone~~ **bold** _it_ [^1] [ref]\n\
# Heading\n> quote\n- item\n1. item\n=====\n\
| a | b |\n| --- | --- |\n\
trailing  \n    indented\n\n\
[ref]: http://evil.example\n[^1]: a footnote";

/// A changed path that tries to leave its code span.
const PATH: &str = "we`ird`` <b>pa|th.md";

/// A commit subject with Markdown, HTML and a mention in it.
const SUBJECT: &str = "Fix **it** <b>now</b> @team #3 [x](http://e.example) `code";

/// What a failing check prints: runbook's `<details>` closed, a longer fence, HTML, a mention.
const CHECK_OUTPUT: &str =
    "</details><details open>\n`````\n<script>alert(1)</script>\n@octocat #4 `x`";

/// A run in a repository whose agent commits [`SUBJECT`], adds [`PATH`] and says [`SUMMARY`],
/// also when asked for a summary (`--summary`), whose task's prompt is [`SUMMARY`] too, and
/// whose checks fail.
fn poisoned_run(ctx: &TestContext) {
    sh(
        &ctx.work,
        "git init -q -b main && echo a > a.txt && git add . && git commit -qm init",
    );
    let root = ctx.root();
    let text = serde_json::json!({"type": "text", "text": SUMMARY});
    std::fs::write(root.join("summary.json"), format!("{text}\n")).unwrap();
    std::fs::write(root.join("subject.txt"), SUBJECT).unwrap();
    std::fs::write(root.join("path.txt"), PATH).unwrap();
    std::fs::write(root.join("check.txt"), CHECK_OUTPUT).unwrap();
    let root = root.display();
    let agent = ctx.agent_script(
        "poisoner",
        &format!(
            "export GIT_AUTHOR_NAME=a GIT_AUTHOR_EMAIL=a@example.com GIT_COMMITTER_NAME=a GIT_COMMITTER_EMAIL=a@example.com\n\
             echo '{{\"type\":\"session.started\",\"session_id\":\"s-1\"}}'\n\
             echo b >> a.txt && git commit -qa -F '{root}/subject.txt'\n\
             echo x > \"$(cat '{root}/path.txt')\"\n\
             cat '{root}/summary.json'\n\
             echo '{{\"type\":\"agent.result\",\"ok\":true}}'"
        ),
    );
    let failing = format!("bad_check=cat '{root}/check.txt'; exit 1");
    let args = [
        "run",
        "--agent-cmd",
        &agent,
        "--check",
        "ok=true",
        "--check",
        &failing,
        "--summary",
        SUMMARY,
    ];
    support::run(&mut ctx.runbook(&args), Duration::from_secs(60)).assert_exit(9);
}

/// Everything a parser reads in `markdown`, with GitHub's extensions that pulldown-cmark has.
fn parse(markdown: &str) -> Vec<Event<'_>> {
    let options = Options::ENABLE_TABLES
        | Options::ENABLE_STRIKETHROUGH
        | Options::ENABLE_TASKLISTS
        | Options::ENABLE_FOOTNOTES
        | Options::ENABLE_MATH
        | Options::ENABLE_GFM;
    Parser::new_ext(markdown, options).collect()
}

#[test]
fn a_report_of_hostile_text_renders_it_as_the_text_it_is() {
    let ctx = TestContext::new();
    poisoned_run(&ctx);
    let report = ctx.run(&["report", "--format", "markdown"]);
    report.assert_exit(0);
    let events = parse(&report.stdout);

    // runbook's own structure, and nothing else: its headings, its one bit of HTML.
    let headings: Vec<HeadingLevel> = events
        .iter()
        .filter_map(|e| match e {
            Event::Start(Tag::Heading { level, .. }) => Some(*level),
            _ => None,
        })
        .collect();
    assert_eq!(headings, [HeadingLevel::H2; 5], "{}", report.stdout);
    let html: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Html(h) | Event::InlineHtml(h) => Some(h.as_ref()),
            _ => None,
        })
        .collect();
    let details = [
        "<details><summary>Output of a failed check</summary>\n",
        "</details>\n",
    ];
    assert_eq!(
        html,
        [&details[..], &["<sub>", "</sub>"]].concat(),
        "{}",
        report.stdout
    );
    // The one code block is runbook's, and holds exactly what the check printed.
    let blocks: Vec<String> = events
        .split(|e| matches!(e, Event::Start(Tag::CodeBlock(_))))
        .skip(1)
        .map(|after| {
            let inner = after.split(|e| matches!(e, Event::End(TagEnd::CodeBlock)));
            inner
                .take(1)
                .flatten()
                .map(|e| match e {
                    Event::Text(t) => t.to_string(),
                    other => format!("{other:?}"),
                })
                .collect()
        })
        .collect();
    assert_eq!(blocks, [format!("{CHECK_OUTPUT}\n")], "{}", report.stdout);
    for e in &events {
        let live = matches!(
            e,
            Event::Start(
                Tag::Link { .. }
                    | Tag::Image { .. }
                    | Tag::BlockQuote(_)
                    | Tag::CodeBlock(CodeBlockKind::Indented)
                    | Tag::Emphasis
                    | Tag::Strong
                    | Tag::Strikethrough
                    | Tag::FootnoteDefinition(_)
            ) | Event::FootnoteReference(_)
                | Event::InlineMath(_)
                | Event::DisplayMath(_)
                | Event::TaskListMarker(_)
        );
        assert!(!live, "{e:?} from foreign text in {}", report.stdout);
    }

    // The code spans hold the path and nothing leaks from them.
    let codes: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            Event::Code(c) => Some(c.as_ref()),
            _ => None,
        })
        .collect();
    assert!(codes.contains(&PATH), "{codes:?}");
    assert!(codes.contains(&"ok"), "the check's name: {codes:?}");
    assert!(codes.contains(&"bad_check"), "the check's name: {codes:?}");

    // The text reads as it was written, and GitHub finds nothing in it to link.
    // (GitHub links nothing in code, so the text of the code block is left out.)
    let mut in_code = false;
    let mut text = String::new();
    for e in &events {
        match e {
            Event::Start(Tag::CodeBlock(_)) => in_code = true,
            Event::End(TagEnd::CodeBlock) => in_code = false,
            Event::Text(t) if !in_code => text.push_str(t),
            Event::SoftBreak | Event::HardBreak | Event::End(_) => text.push('\n'),
            _ => {}
        }
    }
    let seen = text.replace(NEUTRALISER, "");
    // The receipt keeps the agent's summary as one line of prose after how the run ended; all
    // of it is shown, and so is the task's prompt, line by line.
    let summary = ctx.receipt().summary.expect("a summary").text;
    assert!(
        summary
            .starts_with("Checks failed after 1 repair attempt: bad_check. The agent's summary: "),
        "{summary}"
    );
    assert!(summary.contains("</details><details open>") && summary.contains("@octocat"));
    let prompt = SUMMARY.lines().filter(|l| !l.trim().is_empty());
    for said in summary.lines().chain([SUBJECT]).chain(prompt) {
        assert!(seen.contains(said), "{said:?} not in {seen}");
    }
    for link in [
        "@octocat",
        "@team",
        "#1",
        "#3",
        "GH-2",
        "https://",
        "http://",
        "www.",
        ":smile:",
        "javascript:alert",
    ] {
        assert!(!text.contains(link), "{link} is live in {text}");
        assert!(seen.contains(link), "{link} is not shown in {seen}");
    }
}
