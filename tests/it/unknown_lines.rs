//! Lines of a type runbook does not know are counted as unparsed, never silently dropped: a new
//! kind of Claude Code stream event is one of the receipt's `unparsed_lines`, while the stream
//! events runbook knowingly passes over are not.

use crate::support::{self, TestContext};

const INIT: &str = r#"{"type":"system","subtype":"init","session_id":"s1","model":"claude-sonnet-4-5","tools":[]}"#;
const RESULT: &str = r#"{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"ok","session_id":"s1","total_cost_usd":0.001,"usage":{"input_tokens":10,"output_tokens":2}}"#;

/// `runbook replay` of Claude Code's `lines`: its receipt's unparsed lines.
fn unparsed_of(lines: &[&str]) -> serde_json::Value {
    let ctx = TestContext::new();
    let file = ctx.root().join("claude.ndjson");
    std::fs::write(&file, lines.join("\n") + "\n").expect("the recording");
    let file = file.display().to_string();
    let out = ctx.run(&["replay", "--instant", "--json", "--agent", "claude", &file]);
    let (_, receipt) = support::events_and_receipt(&out.stdout);
    serde_json::to_value(&receipt.unparsed_lines).expect("unparsed lines as JSON")
}

#[test]
fn a_new_kind_of_claude_stream_event_is_counted_as_unparsed() {
    let new = r#"{"type":"stream_event","event":{"type":"content_block_citation","index":0},"session_id":"s1","parent_tool_use_id":null}"#;
    let unparsed = unparsed_of(&[INIT, new, RESULT]);
    assert_eq!(unparsed["count"], 1, "{unparsed}");
    assert!(
        unparsed.to_string().contains("content_block_citation"),
        "{unparsed}"
    );
    // The ones runbook knows and passes over are not.
    let known = [
        r#"{"type":"stream_event","event":{"type":"ping"},"session_id":"s1","parent_tool_use_id":null}"#,
        r#"{"type":"stream_event","event":{"type":"content_block_stop","index":0},"session_id":"s1","parent_tool_use_id":null}"#,
        r#"{"type":"stream_event","event":{"type":"message_stop"},"session_id":"s1","parent_tool_use_id":null}"#,
    ];
    let unparsed = unparsed_of(&[INIT, known[0], known[1], known[2], RESULT]);
    assert_eq!(unparsed["count"], 0, "{unparsed}");
}
