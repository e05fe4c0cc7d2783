use std::path::PathBuf;

use super::*;

const READ_EDIT: &str =
    include_str!("../../../fixtures/acp/opencode-1.18.33.read_edit.stdout.ndjson");

fn parse(lines: &str) -> (Vec<EventKind>, Vec<Incoming>, StreamEnd) {
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let ctx = ParseContext {
        inbox: Some(tx),
        ..ParseContext::new(PathBuf::from("/home/me/demo"))
    };
    let mut parser = OPENCODE.stdout_parser(ctx);
    let mut out = Vec::new();
    for line in lines.lines().filter(|l| !l.is_empty()) {
        parser.line(line.as_bytes(), &mut out);
    }
    let end = parser.end(&mut out);
    (
        out,
        std::iter::from_fn(|| rx.try_recv().ok()).collect(),
        end,
    )
}

#[test]
fn a_recorded_session_shows_each_tool_from_its_start_to_its_end() {
    let (events, messages, end) = parse(READ_EDIT);
    let names: Vec<&str> = events.iter().map(EventKind::type_name).collect();
    let first = |t: &str| names.iter().position(|n| *n == t).unwrap();
    assert_eq!(names[0], "agent.version");
    assert_eq!(names[1], "session.started");
    let tools: Vec<(&str, &str, &str)> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::ToolStarted(s) => Some(("start", s.name.as_str(), s.input.as_str())),
            EventKind::ToolCompleted(c) => Some(("end", c.name.as_str(), c.input.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        tools,
        [
            ("start", "read", "README.md"),
            ("end", "read", "README.md"),
            ("start", "edit", "README.md"),
            ("end", "edit", "README.md"),
        ]
    );
    // Text streams as it comes, and is whole before the first tool.
    assert!(first("text.delta") < first("text"));
    assert!(first("text") < first("tool.started"));
    let EventKind::AgentResult(result) = events.last().unwrap() else {
        panic!("the turn ends on the agent's result: {names:?}");
    };
    assert!(result.ok);
    let tokens = result.tokens.unwrap();
    assert_eq!(
        (tokens.input, tokens.output, tokens.cache_read),
        (200, 15, 1700)
    );
    assert_eq!(result.cost_usd, Some(0.008385));
    assert_eq!(
        result.message.as_deref(),
        Some("Done: I added a line at the end of README.md.")
    );
    // The usage update counts as the step it paid for, so a budget sees it before the result.
    assert!(events.iter().any(|e| matches!(
        e,
        EventKind::StepFinished(s) if s.cost_usd == Some(0.008385)
    )));
    assert_eq!(end, StreamEnd::Finished);
    // Every response went on to the client, in order: initialize, session/new, the prompt.
    let ids: Vec<Value> = messages
        .iter()
        .map(|m| match m {
            Incoming::Response { id, .. } => id.clone(),
            Incoming::Request { .. } => Value::Null,
        })
        .collect();
    assert_eq!(ids, [1, 2, 3].map(Value::from));
}

#[test]
fn a_tool_announced_without_input_starts_once_its_input_is_known() {
    let lines = [
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash","kind":"execute","status":"pending","rawInput":{}}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","rawInput":{"command":"cargo test"}}}}"#,
    ];
    let (events, _, end) = parse(&lines.join("\n"));
    let [
        EventKind::ToolStarted(start),
        EventKind::ToolCompleted(closed),
    ] = events.as_slice()
    else {
        panic!("{events:?}");
    };
    assert_eq!(
        (start.name.as_str(), start.input.as_str()),
        ("bash", "cargo test")
    );
    assert_eq!(start.kind, ToolKind::Shell);
    // Never finished: closed as failed when the stream ends, which ended mid-turn.
    assert_eq!(closed.status, ToolStatus::Error);
    assert!(matches!(end, StreamEnd::Truncated(_)));
}

#[test]
fn requests_and_errors_go_to_the_client_and_bad_lines_are_unparsed() {
    let lines = [
        "this is not json",
        r#"{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c1"},"options":[]}}"#,
        r#"{"jsonrpc":"2.0","id":9,"error":{"code":-32601,"message":"nope"}}"#,
        r#"{"jsonrpc":"2.0"}"#,
        r#"> {"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
    ];
    let (events, messages, _) = parse(&lines.join("\n"));
    let reasons: Vec<UnparsedReason> = events
        .iter()
        .map(|e| match e {
            EventKind::Unparsed(u) => u.reason,
            other => panic!("{other:?}"),
        })
        .collect();
    assert_eq!(
        reasons,
        [UnparsedReason::NotJson, UnparsedReason::UnexpectedJson]
    );
    assert!(
        matches!(&messages[0], Incoming::Request { method, .. } if method == "session/request_permission")
    );
    assert!(matches!(&messages[1], Incoming::Response { outcome: Err(e), .. } if e.code == -32601));
    assert_eq!(messages.len(), 2);
}

#[test]
fn stop_reasons_end_turns_as_documented() {
    assert_eq!(stop_reason_end("end_turn"), StreamEnd::Finished);
    assert!(matches!(
        stop_reason_end("max_tokens"),
        StreamEnd::Truncated(_)
    ));
    assert!(matches!(stop_reason_end("refusal"), StreamEnd::Failed(_)));
    assert!(matches!(
        stop_reason_end("cancelled"),
        StreamEnd::Truncated(_)
    ));
}

#[test]
fn a_shell_call_announced_with_only_its_directory_waits_for_its_command() {
    let lines = [
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash","kind":"execute","status":"pending","locations":[{"path":"/home/me/demo"}],"rawInput":{"cwd":"/home/me/demo"}}}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"in_progress","kind":"execute","title":"sleep 4","rawInput":{"command":"sleep 4","cwd":"/home/me/demo"}}}}"#,
    ];
    let (events, _, _) = parse(&lines[..1].join("\n"));
    assert!(events.is_empty(), "{events:?}");
    let (events, _, _) = parse(&lines.join("\n"));
    let EventKind::ToolStarted(start) = &events[0] else {
        panic!("{events:?}");
    };
    assert_eq!(
        (start.name.as_str(), start.input.as_str()),
        ("bash", "sleep 4")
    );
}

#[test]
fn thoughts_plans_and_usage_become_reasoning_a_todo_call_and_step_costs() {
    let update = |u: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{u}}}}}"#
        )
    };
    let lines = [
        update(
            r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"Let me "}}"#,
        ),
        update(
            r#"{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"think."}}"#,
        ),
        update(
            r#"{"sessionUpdate":"plan","entries":[{"content":"a","priority":"high","status":"pending"},{"content":"b","priority":"low","status":"pending"}]}"#,
        ),
        update(
            r#"{"sessionUpdate":"usage_update","used":10,"size":100,"cost":{"amount":0.25,"currency":"USD"}}"#,
        ),
        update(
            r#"{"sessionUpdate":"usage_update","used":20,"size":100,"cost":{"amount":0.75,"currency":"USD"}}"#,
        ),
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"max_tokens"}}"#.to_owned(),
    ];
    let (events, _, end) = parse(&lines.join("\n"));
    let EventKind::Reasoning { text } = &events[0] else {
        panic!("{events:?}");
    };
    assert_eq!(text, "Let me think.");
    let plan: Vec<&ToolStart> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::ToolStarted(s) => Some(s),
            _ => None,
        })
        .collect();
    assert_eq!(plan.len(), 1);
    assert_eq!(
        (plan[0].kind, plan[0].input.as_str()),
        (ToolKind::Todo, "2 todos")
    );
    let steps: Vec<Option<f64>> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::StepFinished(s) => Some(s.cost_usd),
            _ => None,
        })
        .collect();
    assert_eq!(
        steps,
        [Some(0.25), Some(0.5)],
        "each step costs what the session grew by"
    );
    let Some(EventKind::AgentResult(result)) = events.last() else {
        panic!("{events:?}");
    };
    assert!(!result.ok);
    assert_eq!(
        result.cost_usd,
        Some(0.75),
        "the turn's cost is the session's growth"
    );
    assert!(
        result
            .message
            .as_deref()
            .is_some_and(|m| m.contains("max_tokens"))
    );
    assert_eq!(end, StreamEnd::Finished, "the prompt was answered");
}

/// A raw log of `runbook run --via acp`, replayed: both directions, no client.
fn replay(name: &str) -> Vec<EventKind> {
    replay_ending(name).0
}

/// A raw log of `runbook run --via acp`, replayed: both directions, no client; with how the
/// stream ended.
fn replay_ending(name: &str) -> (Vec<EventKind>, StreamEnd) {
    let path = format!(
        "{}/fixtures/acp/{name}.stdout.ndjson",
        env!("CARGO_MANIFEST_DIR")
    );
    let log = std::fs::read_to_string(&path).unwrap();
    let agent: &Acp = if name.starts_with("claude") {
        &CLAUDE
    } else if name.starts_with("codex") {
        &CODEX
    } else {
        &OPENCODE
    };
    replay_lines(agent, log.lines())
}

fn replay_lines<'a>(
    agent: &Acp,
    lines: impl IntoIterator<Item = &'a str>,
) -> (Vec<EventKind>, StreamEnd) {
    let mut parser = agent.stdout_parser(ParseContext::new(PathBuf::from("/home/me/demo")));
    let mut out = Vec::new();
    for line in lines.into_iter().filter(|l| !l.is_empty()) {
        parser.line(line.as_bytes(), &mut out);
    }
    let end = parser.end(&mut out);
    (out, end)
}

fn ends(events: &[EventKind]) -> Vec<(String, ToolKind, ToolStatus, Option<String>)> {
    events
        .iter()
        .filter_map(|e| match e {
            EventKind::ToolCompleted(t) => {
                Some((t.name.clone(), t.kind, t.status, t.parent.clone()))
            }
            _ => None,
        })
        .collect()
}

fn result(events: &[EventKind]) -> &AgentResult {
    events
        .iter()
        .rev()
        .find_map(|e| match e {
            EventKind::AgentResult(r) => Some(r),
            _ => None,
        })
        .expect("the turn has the agent's result")
}

#[test]
fn a_call_whose_permission_runbook_refused_ends_denied_under_its_own_name() {
    let events = replay("claude-agent-acp-0.23.1.permission_denied");
    assert_eq!(
        ends(&events),
        [
            ("Bash".to_owned(), ToolKind::Shell, ToolStatus::Denied, None),
            (
                "Write".to_owned(),
                ToolKind::Write,
                ToolStatus::Denied,
                None
            ),
        ]
    );
    // The error is the words, not the Markdown fence around them.
    for e in &events {
        if let EventKind::ToolCompleted(t) = e {
            assert_eq!(
                t.error.as_deref(),
                Some("User refused permission to run tool")
            );
        }
    }
    // Codex's adapter ends the turn at the refusal without ending the call.
    let events = replay("codex-acp-0.16.0.permission_denied");
    assert_eq!(
        ends(&events),
        [("edit".to_owned(), ToolKind::Edit, ToolStatus::Denied, None)]
    );
}

#[test]
fn a_subagent_is_told_with_its_calls_and_its_tokens_are_a_lower_bound() {
    let events = replay("claude-agent-acp-0.23.1.subagent");
    assert!(events.iter().any(|e| matches!(
        e,
        EventKind::SubagentStarted { call_id, description, .. }
            if call_id == "toolu_agent_1" && description == "List workspace files"
    )));
    assert_eq!(
        ends(&events),
        [
            (
                "Bash".to_owned(),
                ToolKind::Shell,
                ToolStatus::Ok,
                Some("toolu_agent_1".to_owned())
            ),
            ("Agent".to_owned(), ToolKind::Subagent, ToolStatus::Ok, None),
        ]
    );
    // Claude Code's adapter sums the main conversation's usage only.
    let r = result(&events);
    assert!(r.tokens_partial, "{r:?}");
    assert_eq!(r.tokens.map(|t| t.total()), Some(10370));
    assert!(r.cost_usd.is_some_and(|c| (c - 0.0628875).abs() < 1e-9));
}

#[test]
fn opencode_over_acp_tells_a_failed_command_and_only_its_last_model_calls_tokens() {
    let events = replay("opencode-1.18.33.tool_fail");
    let failed: Vec<_> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::ToolCompleted(t) => Some((t.name.as_str(), t.status, t.error.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(
        failed[1],
        ("bash", ToolStatus::Error, Some("exit code 3".to_owned()))
    );
    assert_eq!(failed[0].1, ToolStatus::Error);
    assert!(result(&events).tokens_partial);

    let events = replay("opencode-1.18.33.multistep");
    let kinds: Vec<ToolKind> = ends(&events).into_iter().map(|e| e.1).collect();
    assert_eq!(
        kinds,
        [
            ToolKind::Shell,
            ToolKind::Read,
            ToolKind::Shell,
            ToolKind::Write,
            ToolKind::Shell
        ]
    );
    let r = result(&events);
    assert!(r.tokens_partial && r.cost_usd.is_some(), "{r:?}");
}

fn provider_error(events: &[EventKind]) -> &ProviderError {
    events
        .iter()
        .find_map(|e| match e {
            EventKind::ProviderError(p) => Some(p),
            _ => None,
        })
        .expect("a provider error")
}

#[test]
fn a_prompt_the_provider_failed_is_a_provider_error_with_what_is_known() {
    let events = replay("claude-agent-acp-0.23.1.http500");
    let failure = provider_error(&events);
    assert_eq!(failure.status, Some(500));
    assert!(failure.message.starts_with("API Error: 500"), "{failure:?}");
    // The agent's context stayed empty and its cost did not grow: nothing was spent.
    let r = result(&events);
    assert!(!r.ok);
    assert_eq!(r.tokens, Some(Tokens::default()));
    assert_eq!(r.cost_usd, Some(0.0));

    let events = replay("codex-acp-0.16.0.http500");
    let failure = provider_error(&events);
    assert_eq!(failure.name, "internal_server_error");
    assert!(failure.message.contains("high demand"), "{failure:?}");
    // codex-acp tells no usage: unknown, not zero.
    assert_eq!(result(&events).tokens, None);
}

#[test]
fn a_turn_ended_right_after_a_refusal_without_a_word_stopped_there() {
    let events = replay("opencode-1.18.33.permission_denied");
    assert_eq!(
        ends(&events),
        [("bash".to_owned(), ToolKind::Shell, ToolStatus::Denied, None)]
    );
    let r = result(&events);
    assert!(!r.ok, "{r:?}");
    assert_eq!(r.message.as_deref(), Some(STOPPED_AT_REFUSAL));
    // One model call, told whole: the refused call did not run, so no call came after it.
    assert!(!r.tokens_partial, "{r:?}");
    // Claude Code answers after its refusals: that turn finished.
    let events = replay("claude-agent-acp-0.23.1.permission_denied");
    assert!(result(&events).ok);
}

#[test]
fn a_replayed_log_ends_as_its_last_turn_did_live() {
    let (_, end) = replay_ending("opencode-1.18.33.permission_denied");
    assert_eq!(end, StreamEnd::Truncated(STOPPED_AT_REFUSAL.to_owned()));
    let (_, end) = replay_ending("claude-agent-acp-0.23.1.http500");
    assert!(matches!(end, StreamEnd::Failed(_)), "{end:?}");
    let (_, end) = replay_ending("claude-agent-acp-0.23.1.subagent");
    assert_eq!(end, StreamEnd::Finished);
}

#[test]
fn runbooks_answer_logged_before_the_request_it_answers_still_counts() {
    // The raw log is written from two threads: an answer may land before its request.
    let log = [
        r#"> {"id":3,"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"bash","kind":"execute","status":"pending","rawInput":{"command":"rm -rf x"}}}}"#,
        r#"> {"id":0,"jsonrpc":"2.0","result":{"outcome":{"outcome":"selected","optionId":"no"}}}"#,
        r#"{"jsonrpc":"2.0","id":0,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"c1"},"options":[{"optionId":"yes","kind":"allow_once","name":"Yes"},{"optionId":"no","kind":"reject_once","name":"No"}]}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"failed","content":[{"type":"content","content":{"type":"text","text":"it did not run"}}]}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}"#,
    ];
    let (events, end) = replay_lines(&OPENCODE, log);
    assert_eq!(
        ends(&events),
        [("bash".to_owned(), ToolKind::Shell, ToolStatus::Denied, None)]
    );
    assert_eq!(end, StreamEnd::Truncated(STOPPED_AT_REFUSAL.to_owned()));
}

#[test]
fn only_the_prompts_own_error_ends_the_turn_and_each_turn_counts_afresh() {
    let opencode = r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentInfo":{"name":"OpenCode","version":"1.18.33"}}}"#;
    let log = [
        opencode,
        // An error to another request, even one that quotes a provider, is not the prompt's.
        r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32603,"message":"API Error: 500 boom"}}"#,
        r#"> {"id":3,"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
        r#"{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call","toolCallId":"c1","title":"read","kind":"read","status":"completed","rawInput":{"filePath":"/home/me/demo/a"}}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn","usage":{"inputTokens":10,"outputTokens":1,"totalTokens":11}}}"#,
        // The next prompt is answered before any update of its own: nothing of the turn before
        // counts in it.
        r#"> {"id":4,"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
        r#"{"jsonrpc":"2.0","id":4,"result":{"stopReason":"end_turn","usage":{"inputTokens":20,"outputTokens":2,"totalTokens":22}}}"#,
        r#"> {"id":5,"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"s","prompt":[]}}"#,
        r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32000,"message":"Authentication required"}}"#,
    ];
    let (events, _) = replay_lines(&OPENCODE, log);
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, EventKind::ProviderError(_))),
        "{events:?}"
    );
    let results: Vec<(bool, bool, Option<u64>)> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::AgentResult(r) => {
                Some((r.ok, r.tokens_partial, r.tokens.map(|t| t.total())))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        results,
        [
            (true, true, Some(11)),
            (true, false, Some(22)),
            // A failed prompt that is not the provider's still ends its turn, tokens unknown.
            (false, false, None),
        ]
    );
}

#[test]
fn a_call_is_a_shell_command_only_when_it_is_one() {
    let call = |title: &str, kind: &str, input: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"tool_call","toolCallId":"{title}","title":"{title}","kind":"{kind}","status":"completed","rawInput":{input}}}}}}}"#
        )
    };
    let lines = [
        // Codex: argv, titled by what it does.
        call("ls", "search", r#"{"command":["/bin/bash","-lc","ls"]}"#),
        // OpenCode's task tool, started by a slash command.
        call("task", "think", r#"{"command":"/review","prompt":"look"}"#),
        // Some MCP tool with a `command` argument.
        call("deploy service", "other", r#"{"command":"restart"}"#),
    ];
    let (events, _) = replay_lines(&OPENCODE, lines.iter().map(String::as_str));
    let got: Vec<(String, ToolKind)> = ends(&events).into_iter().map(|e| (e.0, e.1)).collect();
    assert_eq!(
        got,
        [
            ("shell".to_owned(), ToolKind::Shell),
            ("task".to_owned(), ToolKind::Subagent),
            ("other".to_owned(), ToolKind::Other),
        ]
    );
    let inputs: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::ToolStarted(t) => Some(t.input.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(inputs[0], "ls", "{inputs:?}");
}

#[test]
fn a_cancelled_prompt_leaves_its_tokens_unknown_and_its_command_unfinished() {
    let events = replay("opencode-1.18.33.cancelled");
    // `sleep 30`, stopped by the cancel: OpenCode says `completed`, with no exit status.
    let [(name, _, status, _)] = ends(&events).try_into().unwrap();
    assert_eq!((name.as_str(), status), ("bash", ToolStatus::Error));
    let error = events.iter().find_map(|e| match e {
        EventKind::ToolCompleted(t) => t.error.clone(),
        _ => None,
    });
    assert_eq!(
        error.as_deref(),
        Some("stopped before it finished: User aborted the command")
    );
    // OpenCode tells zero tokens and a cost of 0 after the cancel, though the model answered:
    // the tokens are unknown and the cost told (0) only a lower bound.
    let r = result(&events);
    assert!(!r.ok);
    assert_eq!(r.tokens, None, "{r:?}");
}

#[test]
fn a_command_stopped_by_its_timeout_or_without_an_exit_status_did_not_succeed() {
    let update = |output: &str, exit: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{{"sessionUpdate":"tool_call_update","toolCallId":"c1","status":"completed","title":"bash","kind":"execute","rawInput":{{"command":"make"}},"rawOutput":{{"output":{output:?},"metadata":{{"exit":{exit}}}}}}}}}}}"#
        )
    };
    for (output, exit, ok) in [
        ("built", "0", true),
        (
            "<shell_metadata>\nUser aborted the command\n</shell_metadata>",
            "0",
            false,
        ),
        (
            "partial\n<shell_metadata>\nshell tool terminated command after exceeding timeout 100 ms.\n</shell_metadata>",
            "null",
            false,
        ),
        ("no note", "null", false),
        (
            "the text User aborted the command outside metadata",
            "0",
            true,
        ),
    ] {
        let (events, _) = replay_lines(&OPENCODE, [update(output, exit).as_str()]);
        let [(_, _, status, _)] = ends(&events).try_into().unwrap();
        assert_eq!(status == ToolStatus::Ok, ok, "{output} exit {exit}");
    }
}

/// The agent's version as the parser told it, with how runbook stands to it.
fn version(events: &[EventKind]) -> (&str, &[String], Option<crate::event::Fidelity>) {
    events
        .iter()
        .find_map(|e| match e {
            EventKind::AgentVersion {
                version,
                tested_with,
                fidelity,
            } => Some((version.as_str(), tested_with.as_slice(), *fidelity)),
            _ => None,
        })
        .expect("the agent's version")
}

#[test]
fn opencode_2_tells_a_prompts_usage_whole_and_its_version_is_judged() {
    use crate::event::Fidelity;
    let events = replay("opencode-2.1.2.shell");
    // Two model calls: 1000 + 20, then 1100 + 7; OpenCode 2 tells their sum.
    let r = result(&events);
    let tokens = r.tokens.unwrap();
    assert_eq!((tokens.input, tokens.output), (2100, 27), "{r:?}");
    assert!(!r.tokens_partial, "{r:?}");
    assert_eq!(version(&events), ("2.1.2", &[][..], Some(Fidelity::Tested)));
    // 1.18.33 tells its last call's: partial after a tool call.
    let events = replay("opencode-1.18.33.multistep");
    assert!(result(&events).tokens_partial);
    assert_eq!(version(&events).2, Some(Fidelity::Tested));
}

#[test]
fn opencode_2_keeps_a_cancelled_prompts_usage() {
    let events = replay("opencode-2.1.2.cancelled");
    let r = result(&events);
    assert!(!r.ok);
    let tokens = r.tokens.expect("the usage OpenCode 2 told");
    assert_eq!(tokens.total(), 1420, "{r:?}");
    assert!(!r.tokens_partial, "{r:?}");
    assert!(
        r.cost_usd.is_some_and(|c| (c - 0.0045058).abs() < 1e-12),
        "{r:?}"
    );
}

#[test]
fn opencode_2_tells_each_provider_retry() {
    let events = replay("opencode-2.1.2.retry");
    let retries: Vec<(u32, Option<u16>, &str)> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::ProviderRetry(r) => Some((r.attempt, r.status, r.message.as_str())),
            _ => None,
        })
        .collect();
    assert_eq!(
        retries,
        [
            (1, Some(500), "fake server error"),
            (2, Some(500), "fake server error")
        ]
    );
    assert!(
        !events.iter().any(|e| matches!(e, EventKind::Unparsed(_))),
        "{events:?}"
    );
}

#[test]
fn an_untested_opencode_or_an_update_runbook_does_not_know_is_said() {
    use crate::event::Fidelity;
    let init = |version: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":1,"agentInfo":{{"name":"OpenCode","version":"{version}"}}}}}}"#
        )
    };
    let update = |update: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","method":"session/update","params":{{"sessionId":"s","update":{update}}}}}"#
        )
    };
    let lines = [
        init("3.0.0"),
        update(r#"{"sessionUpdate":"session_info_update","title":"A title"}"#),
        update(r#"{"sessionUpdate":"agent_plan_v2","entries":[]}"#),
        update(r#"{"sessionUpdate":"session_info_update","_meta":{"opencode/usage":{"a":1}}}"#),
        update(r#"{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}"#),
    ];
    let (events, _) = replay_lines(&OPENCODE, lines.iter().map(String::as_str));
    let (v, tested_with, fidelity) = version(&events);
    assert_eq!((v, fidelity), ("3.0.0", Some(Fidelity::Untested)));
    assert_eq!(
        tested_with,
        crate::agent::versions::tested(crate::agent_kind::AgentKind::Opencode)
    );
    let unparsed: Vec<UnparsedReason> = events
        .iter()
        .filter_map(|e| match e {
            EventKind::Unparsed(u) => Some(u.reason),
            _ => None,
        })
        .collect();
    assert_eq!(
        unparsed,
        [UnparsedReason::UnknownType, UnparsedReason::UnknownType]
    );
    // An adapter's version is not its agent's: unknown.
    let (events, _) = replay_lines(
        &CLAUDE,
        [
            r#"{"jsonrpc":"2.0","id":1,"result":{"agentInfo":{"name":"@zed-industries/claude-agent-acp","version":"0.23.1"}}}"#,
        ],
    );
    assert_eq!(
        version(&events),
        ("0.23.1", &[][..], Some(Fidelity::Unknown))
    );
}
