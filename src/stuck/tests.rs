use std::time::SystemTime;

use super::*;
use crate::event::{ProviderRetry, StepUsage, ToolEnd, ToolKind, ToolStatus, Turn};

struct Run {
    detector: Detector,
    seq: u64,
    turn: u32,
    said: Vec<(StuckRule, u32, bool)>,
}

impl Run {
    fn new(mode: Mode) -> Self {
        Self {
            detector: Detector::new(mode, Thresholds::default()).expect("on"),
            seq: 0,
            turn: 0,
            said: Vec::new(),
        }
    }

    fn feed(&mut self, kind: EventKind) {
        let ev = Event {
            seq: self.seq,
            ts: SystemTime::UNIX_EPOCH,
            turn: Turn {
                index: self.turn,
                ..Turn::FIRST
            },
            kind,
        };
        self.seq += 1;
        match self.detector.observe(&ev) {
            Some(Verdict::Warning(s)) => self.said.push((s.rule, s.count, false)),
            Some(Verdict::Stop(s)) => self.said.push((s.rule, s.count, true)),
            None => {}
        }
    }

    fn call(&mut self, name: &str, input: &str, status: ToolStatus, result: &str) {
        let kind = ToolKind::of(name);
        self.feed(EventKind::ToolCompleted(ToolEnd {
            call_id: format!("c{}", self.seq),
            name: name.into(),
            kind,
            input: input.into(),
            parent: None,
            status,
            error: None,
            output_bytes: None,
            duration_ms: None,
            input_hash: Some(format!("in:{input}")),
            result_hash: Some(format!("out:{result}")),
        }));
    }

    fn step(&mut self, text: &str) {
        self.feed(EventKind::StepStarted { id: None });
        if !text.is_empty() {
            self.feed(EventKind::Text { text: text.into() });
        }
        self.feed(EventKind::StepFinished(finished()));
    }
}

fn finished() -> StepUsage {
    StepUsage {
        id: None,
        reason: "stop".into(),
        tokens: Default::default(),
        cost_usd: None,
        cost_source: None,
        cost_rejected: None,
        tokens_unreadable: false,
    }
}

const OK: ToolStatus = ToolStatus::Ok;
const ERR: ToolStatus = ToolStatus::Error;

#[test]
fn the_same_call_with_the_same_result_warns_at_three_and_stops_at_five() {
    let mut run = Run::new(Mode::Stop);
    for _ in 0..6 {
        run.call("read", "src/lib.rs", OK, "same");
    }
    assert_eq!(
        run.said,
        [(StuckRule::Repeat, 3, false), (StuckRule::Repeat, 5, true)]
    );
}

#[test]
fn warn_mode_never_stops() {
    let mut run = Run::new(Mode::Warn);
    for _ in 0..6 {
        run.call("read", "src/lib.rs", OK, "same");
    }
    assert_eq!(
        run.said,
        [(StuckRule::Repeat, 3, false), (StuckRule::Repeat, 5, false)]
    );
}

#[test]
fn a_poll_whose_output_changes_never_counts() {
    let mut run = Run::new(Mode::Stop);
    for i in 0..20 {
        run.call("bash", "gh run view", OK, &format!("{i}% done"));
    }
    assert_eq!(run.said, []);
}

#[test]
fn the_same_failure_with_edits_between_warns_then_stops() {
    let mut run = Run::new(Mode::Stop);
    for i in 0..5 {
        run.call("bash", "cargo test", ERR, "assertion failed: 3 == 4");
        run.call("edit", "src/lib.rs", OK, &format!("patch {i}"));
    }
    assert_eq!(
        run.said,
        [
            (StuckRule::SameFailure, 3, false),
            (StuckRule::SameFailure, 5, true)
        ]
    );
}

#[test]
fn a_tdd_loop_whose_failure_changes_and_then_passes_never_counts() {
    let mut run = Run::new(Mode::Stop);
    run.call("bash", "cargo test", ERR, "fail A");
    run.call("edit", "src/lib.rs", OK, "1");
    run.call("bash", "cargo test", ERR, "fail B");
    run.call("edit", "src/lib.rs", OK, "2");
    run.call("bash", "cargo test", OK, "ok");
    run.call("bash", "cargo test", ERR, "fail A");
    run.call("edit", "src/lib.rs", OK, "3");
    run.call("bash", "cargo test", ERR, "fail A");
    assert_eq!(run.said, []);
}

#[test]
fn the_same_error_three_times_in_a_row_stops() {
    let mut run = Run::new(Mode::Stop);
    for _ in 0..3 {
        run.call("read", "missing.rs", ERR, "not found");
    }
    assert_eq!(run.said, [(StuckRule::SameError, 3, true)]);
}

#[test]
fn a_ping_pong_with_unchanged_results_stops_after_three_cycles() {
    let mut run = Run::new(Mode::Stop);
    for _ in 0..3 {
        run.call("read", "a.rs", OK, "a");
        run.call("read", "b.rs", OK, "b");
    }
    assert_eq!(run.said, [(StuckRule::PingPong, 3, true)]);
}

#[test]
fn edits_to_many_files_and_a_listing_that_changed_never_count() {
    let mut run = Run::new(Mode::Stop);
    for i in 0..20 {
        run.call("edit", &format!("src/f{i}.rs"), OK, "applied");
    }
    run.call("ls", ".", OK, "a");
    run.call("write", "b", OK, "");
    run.call("ls", ".", OK, "a b");
    assert_eq!(run.said, []);
}

#[test]
fn refused_calls_and_calls_without_fingerprints_are_not_counted() {
    let mut run = Run::new(Mode::Stop);
    for _ in 0..6 {
        run.call("bash", "rm -rf /", ToolStatus::Denied, "");
    }
    for i in 0..6 {
        let mut end = ToolEnd {
            call_id: format!("x{i}"),
            name: "bash".into(),
            kind: ToolKind::Shell,
            input: "ls".into(),
            parent: None,
            status: OK,
            error: None,
            output_bytes: None,
            duration_ms: None,
            input_hash: None,
            result_hash: None,
        };
        run.feed(EventKind::ToolCompleted(end.clone()));
        end.status = ERR;
        run.feed(EventKind::ToolCompleted(end));
    }
    assert_eq!(run.said, []);
}

#[test]
fn counts_start_again_with_each_turn() {
    let mut run = Run::new(Mode::Stop);
    for turn in 0..3 {
        run.turn = turn;
        for _ in 0..4 {
            run.call("read", "a.rs", OK, "a");
        }
    }
    assert_eq!(run.said, [(StuckRule::Repeat, 3, false); 3]);
}

#[test]
fn steps_that_say_nothing_new_without_a_tool_call_stop() {
    let mut run = Run::new(Mode::Stop);
    run.step("I will look.");
    run.step("I will look.");
    run.step("");
    assert_eq!(run.said, [(StuckRule::Monologue, 3, true)]);
}

#[test]
fn steps_that_ask_for_tools_or_think_are_no_monologue() {
    let mut run = Run::new(Mode::Stop);
    for _ in 0..5 {
        run.feed(EventKind::StepStarted { id: None });
        run.feed(EventKind::StepFinished(StepUsage {
            reason: "tool-calls".into(),
            ..finished()
        }));
    }
    for _ in 0..5 {
        run.feed(EventKind::StepStarted { id: None });
        run.feed(EventKind::Reasoning {
            text: "Let me think.".into(),
        });
        run.feed(EventKind::StepFinished(finished()));
    }
    assert_eq!(run.said, []);
}

#[test]
fn provider_retries_are_no_monologue() {
    let mut run = Run::new(Mode::Stop);
    for _ in 0..10 {
        run.feed(EventKind::StepStarted { id: None });
        run.feed(EventKind::ProviderRetry(ProviderRetry {
            attempt: 1,
            max_attempts: None,
            delay_ms: None,
            status: Some(429),
            message: "rate limited".into(),
        }));
        run.feed(EventKind::StepFinished(finished()));
    }
    run.step("Here is the answer.");
    assert_eq!(run.said, []);
}

#[test]
fn a_warning_says_what_was_repeated() {
    let stuck = Stuck {
        rule: StuckRule::SameFailure,
        count: 3,
        tool: Some("bash".into()),
        input: Some("cargo test".into()),
        first_seq: 1,
        last_seq: 9,
        nudged: false,
    };
    assert_eq!(describe(&stuck), "bash cargo test: same failure 3×");
}

/// Every recorded transcript in `fixtures/`, as its adapter reads it: not one warning.
#[test]
fn no_recorded_transcript_trips_a_rule() {
    use crate::agent::{Adapter, Claude, Codex, OpenCode, ParseContext};

    let adapters: [(&str, &dyn Adapter); 4] = [
        ("opencode", &OpenCode),
        ("claude", &Claude),
        ("claude-2.1.330", &Claude),
        ("codex", &Codex),
    ];
    let (mut transcripts, mut printed) = (0, 0);
    for (dir, adapter) in adapters {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures")
            .join(dir);
        for entry in std::fs::read_dir(dir).expect("fixtures") {
            let path = entry.expect("an entry").path();
            if !path.to_string_lossy().ends_with(".stdout.ndjson") {
                continue;
            }
            transcripts += 1;
            let mut parser = adapter.stdout_parser(ParseContext::new("/w".into()));
            let mut kinds = Vec::new();
            for line in std::fs::read(&path)
                .expect("a transcript")
                .split(|&b| b == b'\n')
            {
                parser.line(line, &mut kinds);
            }
            parser.end(&mut kinds);
            let mut run = Run::new(Mode::Stop);
            for kind in kinds {
                if let EventKind::ToolCompleted(end) = &kind {
                    printed += usize::from(end.result_hash.is_some());
                }
                run.feed(kind);
            }
            assert_eq!(run.said, [], "{}", path.display());
        }
    }
    assert!(transcripts >= 37, "only {transcripts} transcripts");
    assert!(printed > 0, "no tool call with fingerprints");
}

/// What an adapter makes of `lines`, judged.
fn judged(adapter: &dyn crate::agent::Adapter, lines: &[String]) -> Vec<(StuckRule, u32, bool)> {
    let mut parser = adapter.stdout_parser(crate::agent::ParseContext::new("/w".into()));
    let mut kinds = Vec::new();
    for line in lines {
        parser.line(line.as_bytes(), &mut kinds);
    }
    let mut run = Run::new(Mode::Stop);
    for kind in kinds {
        run.feed(kind);
    }
    run.said
}

#[test]
fn claude_code_calls_are_judged_as_any_others() {
    let mut lines = vec![
        r#"{"type":"system","subtype":"init","cwd":"/w","session_id":"s","model":"claude-sonnet-4-5"}"#.to_owned(),
    ];
    for i in 0..5 {
        lines.push(format!(
            r#"{{"type":"assistant","message":{{"id":"m{i}","model":"claude-sonnet-4-5","content":[{{"type":"tool_use","id":"t{i}","name":"Bash","input":{{"description":"Run tests","command":"cargo test"}}}}],"usage":{{"input_tokens":3,"output_tokens":1}}}},"parent_tool_use_id":null,"session_id":"s"}}"#
        ));
        lines.push(format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","tool_use_id":"t{i}","content":"test adds ... FAILED in 0.{i}s","is_error":true}}]}},"session_id":"s"}}"#
        ));
    }
    assert_eq!(
        judged(&crate::agent::Claude, &lines),
        [
            (StuckRule::SameFailure, 3, false),
            (StuckRule::SameFailure, 5, true)
        ]
    );
}

#[test]
fn codex_commands_are_judged_as_any_others() {
    let mut lines = vec![r#"{"type":"thread.started","thread_id":"t"}"#.to_owned()];
    for i in 0..6 {
        lines.push(format!(
            r#"{{"type":"item.completed","item":{{"id":"item_{i}","type":"command_execution","command":"/bin/bash -lc 'git log -1'","aggregated_output":"commit abc\n","exit_code":0,"status":"completed"}}}}"#
        ));
    }
    assert_eq!(
        judged(&crate::agent::Codex, &lines),
        [(StuckRule::Repeat, 3, false), (StuckRule::Repeat, 5, true)]
    );
}
