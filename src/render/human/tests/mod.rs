//! The human view's tests: a run showing every kind of event, in each display and style.

mod run;

use std::sync::{Arc, Mutex};

use super::*;
use crate::event::{CostSource, ExitInfo, Outcome, StepUsage, Tokens, TurnKind};

/// A writer the test can read back.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Folds an event and shows it, as the dispatcher would.
fn feed(
    human: &mut Human,
    totals: &mut RunStats,
    seq: u64,
    ts: SystemTime,
    turn: Turn,
    kind: EventKind,
) {
    let event = Event {
        seq,
        ts,
        turn,
        kind,
    };
    totals.observe(&event);
    human
        .event(&Delivery {
            event: &event,
            totals,
            json: None,
            raw: None,
        })
        .unwrap();
}

fn at(ms: u64) -> SystemTime {
    humantime::parse_rfc3339("2026-11-22T04:00:00Z").unwrap() + Duration::from_millis(ms)
}

fn render(display: Display, styles: Styles, verbose: bool, events: &[(u64, EventKind)]) -> String {
    let out = Shared::default();
    let mut human = Human::new(
        display,
        styles,
        verbose,
        crate::term::out::Terminal::to(Box::new(out.clone())),
        || None,
    );
    let mut totals = RunStats::default();
    for (seq, (ms, kind)) in events.iter().enumerate() {
        let turn = Turn {
            index: 0,
            kind: TurnKind::Start,
        };
        feed(
            &mut human,
            &mut totals,
            seq as u64,
            at(*ms),
            turn,
            kind.clone(),
        );
    }
    human.close().unwrap();
    String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
}

#[test]
fn plain_lines_show_every_kind_of_event() {
    insta::assert_snapshot!(render(
        Display::Lines,
        Styles::plain(),
        false,
        &run::every_event()
    ));
}

#[test]
fn verbose_lines_add_the_details() {
    insta::assert_snapshot!(render(
        Display::Lines,
        Styles::plain(),
        true,
        &run::every_event()
    ));
}

#[test]
fn quiet_shows_only_what_needs_attention() {
    insta::assert_snapshot!(render(
        Display::Quiet,
        Styles::plain(),
        false,
        &run::every_event()
    ));
}

#[test]
fn colours_mark_success_failure_and_warnings() {
    let out = render(
        Display::Lines,
        Styles::colored(),
        false,
        &run::every_event(),
    );
    insta::assert_snapshot!(out.replace('\u{1b}', "\\e"));
}

#[test]
fn plain_output_has_no_control_codes() {
    let out = render(Display::Lines, Styles::plain(), true, &run::every_event());
    assert!(!out.contains('\u{1b}'), "{out}");
}

#[test]
fn a_completed_run_ends_with_a_one_line_summary() {
    let mut events = run::start();
    events.extend(run::words());
    events.push((
        5100,
        EventKind::StepFinished(StepUsage {
            id: None,
            reason: "stop".into(),
            tokens: Tokens {
                input: 1000,
                output: 18,
                reasoning: 0,
                cache_read: 200,
                cache_write: 0,
            },
            cost_usd: Some(0.00333),
            cost_source: Some(CostSource::Reported),
            cost_rejected: None,
            tokens_unreadable: false,
        }),
    ));
    events.push((
        5200,
        EventKind::RunFinished {
            outcome: Outcome::Completed,
            message: "the agent finished".into(),
            duration_ms: 5200,
            exit: ExitInfo {
                code: Some(0),
                signal: None,
            },
        },
    ));
    let out = render(Display::Lines, Styles::plain(), false, &events);
    let summary = out.lines().rev().nth(1).unwrap();
    assert_eq!(
        summary,
        "[00:05.2] ✓ completed in 5.2s · 1 step · 0 tool calls · 1,218 tokens · $0.0033"
    );
}

#[test]
fn streaming_text_shows_on_the_status_line_until_the_whole_text_arrives() {
    let mut human = Human::new(
        Display::Lines,
        Styles::plain(),
        false,
        crate::term::out::Terminal::to(Box::new(Shared::default())),
        || None,
    );
    let mut totals = RunStats::default();
    let mut feed = |human: &mut Human, seq: u64, kind: EventKind| {
        feed(human, &mut totals, seq, at(seq), Turn::FIRST, kind);
    };
    for (seq, piece) in [
        "Hello! This is a scri",
        "pted answer.\nSecond li",
        "ne so far",
    ]
    .into_iter()
    .enumerate()
    {
        feed(
            &mut human,
            seq as u64,
            EventKind::TextDelta {
                text: piece.to_owned(),
            },
        );
    }
    let line = human.status_line(at(10), &RunStats::default());
    assert!(line.ends_with("│ Second line so far"), "{line}");
    feed(
        &mut human,
        4,
        EventKind::Text {
            text: "Hello! This is a scripted answer.\nSecond line so far.".to_owned(),
        },
    );
    assert!(
        !human
            .status_line(at(10), &RunStats::default())
            .contains('│')
    );
}

#[test]
fn in_a_narrow_window_text_previews_are_cut_and_everything_else_is_broken_into_rows() {
    let show = |verbose: bool| {
        let out = Shared::default();
        let mut human = Human::new(
            Display::Lines,
            Styles::plain(),
            verbose,
            crate::term::out::Terminal::to(Box::new(out.clone())),
            || Some(50),
        );
        let mut totals = RunStats::default();
        let text = "The tests fail because the fixture directory is missing from the package.";
        feed(
            &mut human,
            &mut totals,
            0,
            at(0),
            Turn::FIRST,
            EventKind::Text {
                text: text.to_owned(),
            },
        );
        feed(
            &mut human,
            &mut totals,
            1,
            at(1),
            Turn::FIRST,
            EventKind::AgentWarning {
                message: "the provider is rate limiting requests; retrying in 30 seconds"
                    .to_owned(),
            },
        );
        human.close().unwrap();
        String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
    };
    assert_eq!(
        show(false),
        "[00:00.0] │ The tests fail because the fixture di…\n\
         [00:00.0] ⚠ agent warning: the provider is rate\n            limiting requests; retrying in 30\n            seconds\n"
    );
    assert_eq!(
        show(true),
        "[00:00.0] │ The tests fail because the fixture\n            directory is missing from the package.\n\
         [00:00.0] ⚠ agent warning: the provider is rate\n            limiting requests; retrying in 30\n            seconds\n"
    );
}

#[test]
fn a_model_announced_again_by_each_turn_is_shown_once() {
    let announced = |model: &str| EventKind::ModelAnnounced {
        model: model.into(),
        price: crate::event::PriceBasis::Conservative,
    };
    let out = render(
        Display::Lines,
        Styles::plain(),
        false,
        &[
            (10, announced("claude-opus-9")),
            (20, announced("claude-opus-9")),
            (30, announced("claude-opus-9-mini")),
        ],
    );
    assert_eq!(out.matches("model claude-opus-9\n").count(), 1, "{out}");
    assert_eq!(out.matches("claude-opus-9 is not in").count(), 1, "{out}");
    assert_eq!(out.matches("model claude-opus-9-mini").count(), 1, "{out}");
}

#[test]
fn a_cost_not_yet_known_is_a_question_mark_on_the_status_line_never_zero() {
    let mut human = Human::new(
        Display::Lines,
        Styles::plain(),
        false,
        crate::term::out::Terminal::to(Box::new(Shared::default())),
        || None,
    );
    let mut totals = RunStats::default();
    let started = EventKind::TurnStarted {
        argv: vec!["agent".to_owned()],
        pid: 1,
        planning: false,
        steps_unreported: true,
        prompt: None,
    };
    feed(&mut human, &mut totals, 0, at(0), Turn::FIRST, started);
    let line = human.status_line(at(10), &totals);
    assert!(line.contains("· $?"), "{line}");
    assert!(!line.contains("$0.0000"), "{line}");
}

#[test]
fn a_flood_of_refusals_shows_the_first_few_of_each_tool_and_counts_the_rest() {
    let denied = |tool: &str, n: u32| EventKind::PermissionDenied {
        tool: tool.to_owned(),
        detail: format!("rm -rf build{n}"),
        call_id: Some(format!("{tool}{n}")),
    };
    let mut events: Vec<(u64, EventKind)> =
        (0..1000).map(|n| (n, denied("bash", n as u32))).collect();
    events.extend((0..5).map(|n| (1000 + n, denied("write", n as u32))));
    events.push((
        2000,
        EventKind::Text {
            text: "I stopped.".to_owned(),
        },
    ));
    events.extend((0..4).map(|n| (3000 + n, denied("bash", n as u32))));
    for display in [Display::Lines, Display::Quiet] {
        let out = render(display, Styles::plain(), false, &events);
        let count = |what: &str| out.lines().filter(|l| l.contains(what)).count();
        assert_eq!(count("⊘ bash: permission denied"), 6, "{out}");
        assert_eq!(count("⊘ write: permission denied"), 3, "{out}");
        // Said when the flood ends: at the text, then at the end of the run's events.
        assert_eq!(
            count("⊘ … and 999 more refused (bash 997 · write 2)"),
            1,
            "{out}"
        );
        assert_eq!(count("⊘ … and 1 more refused (bash)"), 1, "{out}");
        assert!(out.lines().count() < 20, "{out}");
    }
}

#[test]
fn in_a_flood_a_request_a_person_answers_is_still_shown_and_the_policys_are_not() {
    use crate::event::PermissionAnswerer;
    let round = |n: u32, by: PermissionAnswerer| {
        let call_id = format!("c{n}");
        [
            EventKind::PermissionRequested {
                call_id: call_id.clone(),
                tool: "bash".to_owned(),
                input: format!("rm -rf build{n}"),
                options: vec!["allow_once".to_owned(), "reject_once".to_owned()],
            },
            EventKind::PermissionAnswered {
                call_id: call_id.clone(),
                tool: "bash".to_owned(),
                input: format!("rm -rf build{n}"),
                allowed: false,
                option: Some("reject_once".to_owned()),
                by,
            },
            EventKind::PermissionDenied {
                tool: "bash".to_owned(),
                detail: format!("rm -rf build{n}"),
                call_id: Some(call_id),
            },
        ]
    };
    // A person's refusal is one line, its answer's; the policy's, its denial's.
    for (by, asked, told, held) in [
        (
            PermissionAnswerer::Person,
            10,
            ("⊘ bash rm -rf build", 10),
            0,
        ),
        (
            PermissionAnswerer::Policy,
            3,
            ("⊘ bash: permission denied", 3),
            1,
        ),
    ] {
        let events: Vec<(u64, EventKind)> = (0..10)
            .flat_map(|n| round(n, by))
            .enumerate()
            .map(|(i, kind)| (i as u64, kind))
            .collect();
        let out = render(Display::Lines, Styles::plain(), false, &events);
        let count = |what: &str| out.lines().filter(|l| l.contains(what)).count();
        assert_eq!(count("asks permission"), asked, "{by:?}: {out}");
        assert_eq!(count("⊘"), told.1 + held, "{by:?}: {out}");
        assert_eq!(count(told.0), told.1, "{by:?}: {out}");
        assert_eq!(count("… and 7 more refused (bash)"), held, "{by:?}: {out}");
    }
}

#[test]
fn a_withdrawn_watchdog_warning_says_what_activity_withdrew_it() {
    let resumed = |by, cpu_percent| EventKind::WatchdogResumed { by, cpu_percent };
    let events = [
        (
            10_000,
            EventKind::WatchdogWarning {
                quiet_ms: 10_000,
                timeout_ms: 20_000,
            },
        ),
        (12_000, resumed(crate::event::ActivitySign::Cpu, Some(23))),
        (30_000, resumed(crate::event::ActivitySign::Stdout, None)),
    ];
    for display in [Display::Lines, Display::Quiet] {
        let out = render(display, Styles::plain(), false, &events);
        let lines: Vec<&str> = out
            .lines()
            .filter(|l| l.contains("activity again"))
            .collect();
        assert_eq!(lines.len(), 2, "{out}");
        assert!(
            lines[0].ends_with("✓ activity again: cpu 23%; the watchdog's warning is withdrawn"),
            "{out}"
        );
        assert!(lines[1].contains("activity again: output"), "{out}");
    }
}

#[test]
fn the_status_line_tells_tokens_as_the_summary_does() {
    let mut human = Human::new(
        Display::Lines,
        Styles::plain(),
        false,
        crate::term::out::Terminal::to(Box::new(Shared::default())),
        || None,
    );
    let mut totals = RunStats::default();
    let turn = |steps_unreported: bool| EventKind::TurnStarted {
        argv: vec!["agent".to_owned()],
        pid: 1,
        planning: false,
        steps_unreported,
        prompt: None,
    };
    let second = Turn {
        index: 1,
        kind: TurnKind::Resume,
    };
    feed(&mut human, &mut totals, 0, at(0), Turn::FIRST, turn(false));
    let step = EventKind::StepFinished(StepUsage {
        id: None,
        reason: "stop".into(),
        tokens: Tokens {
            input: 5000,
            output: 215,
            reasoning: 0,
            cache_read: 0,
            cache_write: 0,
        },
        cost_usd: Some(0.01),
        cost_source: Some(CostSource::Reported),
        cost_rejected: None,
        tokens_unreadable: false,
    });
    feed(&mut human, &mut totals, 1, at(1), Turn::FIRST, step);
    let line = human.status_line(at(2), &totals);
    assert!(line.contains(" · 5.2k tokens · "), "{line}");
    // A turn whose tokens are not known yet: what is known is at least the first turn's.
    feed(&mut human, &mut totals, 2, at(3), second, turn(true));
    let line = human.status_line(at(4), &totals);
    assert!(line.contains(" · ≥5.2k tokens · "), "{line}");
    let summary = crate::format::tokens(totals.tokens.total(), totals.tokens_incomplete());
    assert_eq!(summary, "at least 5,215 tokens");
}

#[test]
fn a_summary_the_last_text_said_word_for_word_is_not_shown_again() {
    let text = |t: &str| EventKind::Text { text: t.to_owned() };
    let summary = |t: &str| EventKind::Summary {
        text: t.to_owned(),
        asked: false,
        task: Some(t.to_owned()),
        repairs: Vec::new(),
        verdict: None,
    };
    let out = render(
        Display::Lines,
        Styles::plain(),
        false,
        &[
            (10, text("## Done\n\n- Fixed the race.\n- Added a test.")),
            (20, summary("Fixed the race. Added a test.")),
        ],
    );
    assert!(!out.contains("summary:"), "{out}");
    let out = render(
        Display::Lines,
        Styles::plain(),
        false,
        &[
            (10, text("Fixed the race.")),
            (20, summary("Fixed the race in the retry loop.")),
        ],
    );
    assert!(
        out.contains("summary: Fixed the race in the retry loop."),
        "{out}"
    );
    // Text not shown whole (a line left for `-v`): the summary is what there is to read.
    let out = render(
        Display::Lines,
        Styles::plain(),
        false,
        &[
            (
                10,
                text(
                    "Fixed the race.
Added a test.
Ran it.
All pass.",
                ),
            ),
            (
                20,
                summary("Fixed the race. Added a test. Ran it. All pass."),
            ),
        ],
    );
    assert!(out.contains("summary: Fixed the race."), "{out}");
}

#[test]
fn a_loop_warning_stays_on_the_status_line_until_the_next_turn() {
    let mut human = Human::new(
        Display::Lines,
        Styles::plain(),
        false,
        crate::term::out::Terminal::to(Box::new(Shared::default())),
        || None,
    );
    let mut totals = RunStats::default();
    let stuck = crate::event::Stuck {
        rule: crate::event::StuckRule::SameFailure,
        count: 3,
        tool: Some("bash".into()),
        input: Some("cargo test".into()),
        first_seq: 1,
        last_seq: 7,
        nudged: false,
    };
    let warning = EventKind::StuckWarning(Box::new(stuck));
    feed(&mut human, &mut totals, 8, at(8), Turn::FIRST, warning);
    let line = human.status_line(at(10), &totals);
    assert!(
        line.ends_with("· ⟳ bash cargo test: same failure 3×"),
        "{line}"
    );
    let next = EventKind::TurnStarted {
        argv: vec!["opencode".into()],
        pid: 1,
        planning: false,
        steps_unreported: false,
        prompt: None,
    };
    feed(&mut human, &mut totals, 9, at(9), Turn::FIRST, next);
    assert!(!human.status_line(at(10), &totals).contains('⟳'));
}
