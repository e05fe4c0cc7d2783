//! Foreign text on a terminal: escape sequences and control characters an agent, a tool, a
//! check or a receipt read back carries are shown as text and do nothing. Every view runs in a
//! real pseudo-terminal whose output is played through a terminal emulator: no title set, no
//! clipboard written, no bell, no alternate screen, nothing cleared or overwritten, no colour
//! from the payload; and runbook's own colours are still there.

use std::path::Path;
use std::process::Command;

use crate::support::TestContext;
use crate::support::pty::{Pty, Screen};

/// Every kind of payload, as a JSON string spells it: OSC 52 (the clipboard), OSC 0 (the
/// title), clear screen, the alternate screen, the C1 CSI, a colour, a bell.
const PAYLOAD: &str = r"\u001b]52;c;cHduZWQ=\u0007\u001b]0;pwned\u0007\u001b[2J\u001b[?1049h\u009b31mC1\u001b[41mRED\u001b[0m\u0007";
/// The same payload as a shell's printf writes it.
const PRINTF_PAYLOAD: &str =
    r"\033]52;c;cHduZWQ=\007\033]0;pwned\007\033[2J\033[?1049h\302\23331mC1\033[41mRED\033[0m\007";

/// What each payload looks like once escaped: all of it must be on the screen as text.
const SHOWN: [&str; 6] = [
    r"\e]52;c;cHduZWQ=\a",
    r"\e]0;pwned\a",
    r"\e[2J",
    r"\e[?1049h",
    r"\u{9b}31mC1",
    r"\e[41mRED\e[0m",
];

/// An OpenCode stand-in whose every word is poisoned: its `--version`, its text (which is
/// also its summary), a tool's command and error, and its stderr.
fn poisoned_agent(ctx: &TestContext) -> String {
    let step = r#"{"type":"step_start","timestamp":1795319500463,"sessionID":"ses_1","part":{"type":"step-start"}}"#;
    let tool = format!(
        r#"{{"type":"tool_use","timestamp":1795319500589,"sessionID":"ses_1","part":{{"type":"tool","tool":"bash","callID":"c1","state":{{"status":"error","input":{{"command":"echo CMDMARK{PAYLOAD}"}},"error":"ERRMARK{PAYLOAD}","time":{{"start":1,"end":2}}}}}}}}"#
    );
    let text = format!(
        r#"{{"type":"text","timestamp":1795319500600,"sessionID":"ses_1","part":{{"type":"text","text":"TEXTMARK{PAYLOAD} visible\roverwritten","time":{{"start":1,"end":2}}}}}}"#
    );
    let finish = r#"{"type":"step_finish","timestamp":1795319500668,"sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","tokens":{"input":18000,"output":902,"reasoning":0,"cache":{"read":0,"write":0}},"cost":0.0123}}"#;
    ctx.agent_script(
        "poisoned",
        &format!(
            "if [ \"$1\" = --version ]; then printf '9.9.9 VERMARK{PRINTF_PAYLOAD}\\n'; exit 0; fi\n\
             printf 'ERRLINE{PRINTF_PAYLOAD}\\n' >&2\n\
             printf '%s\\n' '{step}' '{tool}' '{text}' '{finish}'"
        ),
    )
}

/// `runbook ARGS` in a 200-column terminal that takes colour, to its end.
fn on_a_terminal(ctx: &TestContext, args: &[&str]) -> Screen {
    let mut cmd: Command = ctx.runbook(args);
    cmd.env("TERM", "xterm-256color").env_remove("NO_COLOR");
    let (_, screen) = Pty::spawn(cmd, 200).finish();
    screen
}

/// The payload did nothing: no title, clipboard or bell, no alternate screen, no background
/// colour anywhere (runbook sets none), and it is on the screen as text.
#[track_caller]
fn assert_shown_as_text(screen: &Screen, what: &str) {
    let text = screen.joined();
    assert_eq!(
        screen.asked,
        Vec::<String>::new(),
        "{what}:\n{}",
        screen.text()
    );
    assert!(!screen.alternate, "{what}: the alternate screen is on");
    assert!(
        screen
            .all_cells()
            .all(|c| c.bg == vt100::Color::Default && !c.inverse),
        "{what}: a cell has a background colour:\n{}",
        screen.text()
    );
    assert!(
        SHOWN.iter().any(|s| text.contains(s)),
        "{what}: no payload shown escaped:\n{}",
        screen.text()
    );
    assert!(!text.contains("pwned\n"), "{what}");
}

/// Everything a live run shows of the agent, with the whole payload escaped each time.
#[track_caller]
fn assert_run_screen(screen: &Screen, what: &str, verbose: bool) {
    assert_shown_as_text(screen, what);
    let text = screen.joined();
    let mut marks = vec!["TEXTMARK", "CMDMARK", "ERRMARK", "VERMARK"];
    if verbose {
        marks.push("ERRLINE");
    }
    for mark in marks {
        let at = text
            .find(mark)
            .unwrap_or_else(|| panic!("{what}: {mark} not shown:\n{}", screen.text()));
        let after = &text[at..];
        for shown in SHOWN {
            assert!(
                after.contains(shown),
                "{what}: {shown} not shown after {mark}:\n{}",
                screen.text()
            );
        }
    }
    // A bare CR overwrites nothing: both words on one row, the CR between them shown.
    assert!(
        text.contains(r"visible\roverwritten"),
        "{what}:\n{}",
        screen.text()
    );
    // Nothing was cleared: the run's first line is still the first row.
    assert!(
        screen.rows()[0].contains("runbook") || screen.rows()[0].contains("opencode"),
        "{what}: the first row is {:?}",
        screen.rows()[0]
    );
    // runbook's own colours are still colours; the text after a foreign colour code is not red.
    assert!(
        screen.all_cells().any(|c| c.fg != vt100::Color::Default),
        "{what}: no colour at all"
    );
    // The C1 CSI is shown as text, and what follows it keeps its line's own colour: the same as
    // the escape's first character, whatever runbook's style for that line (a warning's, say).
    let shown = screen
        .cells_of(r"\u{9b}31mC1")
        .expect("the C1 CSI shown as text");
    assert_eq!(
        shown[shown.len() - 1].fg,
        shown[0].fg,
        "{what}: the C1 CSI coloured the text"
    );
    let text_mark = screen.cells_of("TEXTMARK").expect("TEXTMARK on the screen");
    assert_ne!(
        text_mark[0].fg,
        vt100::Color::Idx(1),
        "{what}: the agent's text is red"
    );
}

/// Appends the payload to the receipt's free text: the prompt, the model, the message, the
/// agent's version and its session.
fn poison_receipt(dir: &Path) {
    let path = dir.join("result.json");
    let mut receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let payload: String = serde_json::from_str(&format!("\"{PAYLOAD}\"")).unwrap();
    for pointer in [
        "/prompt",
        "/model",
        "/message",
        "/agent/version",
        "/session_id",
    ] {
        if let Some(serde_json::Value::String(s)) = receipt.pointer_mut(pointer) {
            s.push_str(&payload);
        } else if let Some(v) = receipt.pointer_mut(pointer) {
            *v = serde_json::Value::String(format!("POISON{payload}"));
        }
    }
    std::fs::write(&path, serde_json::to_string_pretty(&receipt).unwrap()).unwrap();
}

#[test]
fn foreign_text_does_nothing_to_the_terminal_of_a_live_run() {
    let ctx = TestContext::new();
    let agent = poisoned_agent(&ctx);
    let screen = on_a_terminal(&ctx, &["run", "--agent-bin", &agent, "fix it"]);
    assert_run_screen(&screen, "run", false);

    let ctx = TestContext::new();
    let agent = poisoned_agent(&ctx);
    let screen = on_a_terminal(&ctx, &["run", "-v", "--agent-bin", &agent, "fix it"]);
    assert_run_screen(&screen, "run -v", true);
}

#[test]
fn foreign_text_read_back_does_nothing_to_the_terminal_of_any_view() {
    let ctx = TestContext::new();
    let agent = poisoned_agent(&ctx);
    on_a_terminal(&ctx, &["run", "--agent-bin", &agent, "fix it"]);
    let dir = ctx.run_dir();
    let dir = dir.to_str().unwrap();

    let replay = on_a_terminal(&ctx, &["replay", dir]);
    assert_run_screen(&replay, "replay", false);
    let live = on_a_terminal(&ctx, &["status", "--live", dir]);
    assert_run_screen(&live, "status --live", false);

    poison_receipt(Path::new(dir));
    for args in [
        &["status", dir][..],
        &["list"],
        &["stats"],
        &["report", dir],
    ] {
        let screen = on_a_terminal(&ctx, args);
        assert_shown_as_text(&screen, &args.join(" "));
    }
}

#[test]
fn json_on_a_terminal_carries_no_control_character() {
    let ctx = TestContext::new();
    let agent = poisoned_agent(&ctx);
    let mut cmd = ctx.runbook(&["run", "--json", "--agent-bin", &agent, "fix it"]);
    cmd.env("TERM", "xterm-256color");
    let (_, screen, raw) = Pty::spawn(cmd, 200).finish_raw();
    assert_eq!(screen.asked, Vec::<String>::new(), "{}", screen.text());
    assert!(!screen.alternate);
    let raw = String::from_utf8(raw).unwrap();
    assert!(
        !raw.chars()
            .any(|c| c.is_control() && c != '\n' && c != '\r'),
        "{raw:?}"
    );
    assert!(raw.contains(r"\u009b31mC1"), "{raw}");
}

#[test]
fn foreign_text_in_a_checks_output_does_nothing_to_the_terminal() {
    let ctx = TestContext::new();
    let agent = poisoned_agent(&ctx);
    let check = format!(
        "lint=printf 'CHECKMARK{PRINTF_PAYLOAD} before\\rafter\\n'; printf 'CHECKERR\\033]0;pwned\\007\\n' >&2; exit 1"
    );
    let screen = on_a_terminal(
        &ctx,
        &[
            "run",
            "--repair-attempts",
            "0",
            "--check",
            &check,
            "--agent-bin",
            &agent,
            "fix it",
        ],
    );
    assert_shown_as_text(&screen, "a check's output");
    let text = screen.joined();
    assert!(text.contains("CHECKMARK"), "{}", screen.text());
    assert!(
        text.contains(r"before\rafter"),
        "a bare CR in a check's output overwrote its line:\n{}",
        screen.text()
    );
}
