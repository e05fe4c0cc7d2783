//! The fast path for Claude Code's lines: the wire structs read with [`Cursor`] instead of
//! serde_json's derived deserializers (whose untagged message content is first copied into a
//! tree of its own, then read again), field by field as those read them: `null` or absent is
//! `None`, a repeated known field refused, unknown fields skipped. Numbers, tool inputs and the
//! final result's totals are handed to serde_json on their own. Anything unusual gives up, and
//! the caller parses the line with serde_json.

use super::{Block, Content, Delta, Line, Message, ResultContent, StreamEvent, Usage};
use crate::agent::reported::Count;
use crate::agent::scan::{self, Cursor, once, option, owned, string};

scan::names!(
    /// The lines' types runbook reads: these are not copied.
    line_type = ["assistant", "user", "stream_event", "system", "result"],
);

scan::names!(
    /// The subtypes of lines that are common: these are not copied.
    subtype_name = [
        "init",
        "success",
        "api_retry",
        "task_started",
        "task_progress",
        "task_notification",
        "status",
        "hook_started",
        "hook_response",
    ],
);

scan::names!(
    /// The content blocks' types: these are not copied.
    block_type = ["text", "tool_use", "tool_result", "thinking"],
);

scan::names!(
    /// The raw API stream's events: these are not copied.
    stream_event_type = [
        "content_block_delta",
        "content_block_start",
        "content_block_stop",
        "message_start",
        "message_delta",
        "message_stop",
    ],
);

/// The line read the way `serde_json::from_slice::<Line>` reads it, or `None` to ask serde_json.
pub(super) fn line(mut c: Cursor<'_>) -> Option<Line<'_>> {
    let (mut kind, mut subtype, mut session_id, mut parent_tool_use_id) = (None, None, None, None);
    let (mut message, mut event, mut error, mut cwd, mut model) = (None, None, None, None, None);
    let (mut attempt, mut max_retries, mut retry_delay_ms) = (None, None, None);
    let (mut error_status, mut task_id, mut tool_use_id) = (None, None, None);
    let (mut description, mut is_error, mut api_error_status) = (None, None, None);
    let (mut result, mut errors, mut stop_reason) = (None, None, None);
    let (mut total_cost_usd, mut duration_ms, mut usage) = (None, None, None);
    let (mut model_usage, mut permission_denials, mut sandbox_enabled) = (None, None, None);
    let (mut is_backgrounded, mut status, mut summary, mut tool_result_meta) =
        (None, None, None, None);
    c.object(|c, key| match key {
        "type" => once(&mut kind, scan::name(c, line_type)?),
        "subtype" => once(&mut subtype, option(c, |c| scan::name(c, subtype_name))?),
        "session_id" => once(&mut session_id, option(c, string)?),
        "parent_tool_use_id" => once(&mut parent_tool_use_id, option(c, string)?),
        "message" => once(&mut message, option(c, read_message)?),
        "event" => once(&mut event, option(c, stream_event)?),
        "error" => once(&mut error, c.typed()?),
        "cwd" => once(&mut cwd, c.typed()?),
        "model" => once(&mut model, option(c, owned)?),
        "sandbox_enabled" => once(&mut sandbox_enabled, option(c, Cursor::bool)?),
        "attempt" => once(&mut attempt, c.typed()?),
        "max_retries" => once(&mut max_retries, c.typed()?),
        "retry_delay_ms" => once(&mut retry_delay_ms, c.typed()?),
        "error_status" => once(&mut error_status, c.typed()?),
        "task_id" => once(&mut task_id, option(c, owned)?),
        "tool_use_id" => once(&mut tool_use_id, option(c, owned)?),
        "description" => once(&mut description, option(c, owned)?),
        "is_backgrounded" => once(&mut is_backgrounded, option(c, Cursor::bool)?),
        "status" => once(&mut status, option(c, owned)?),
        "summary" => once(&mut summary, option(c, owned)?),
        "tool_result_meta" => once(&mut tool_result_meta, c.typed()?),
        "is_error" => once(&mut is_error, option(c, Cursor::bool)?),
        "api_error_status" => once(&mut api_error_status, c.typed()?),
        "result" => once(&mut result, option(c, owned)?),
        "errors" => once(&mut errors, c.typed()?),
        "stop_reason" => once(&mut stop_reason, option(c, owned)?),
        "total_cost_usd" => once(&mut total_cost_usd, c.typed()?),
        "duration_ms" => once(&mut duration_ms, c.typed()?),
        "usage" => once(&mut usage, option(c, read_usage)?),
        "modelUsage" => once(&mut model_usage, c.typed()?),
        "permission_denials" => once(&mut permission_denials, c.typed()?),
        _ => c.skip(),
    })?;
    c.end()?;
    Some(Line {
        kind: kind?,
        subtype: subtype.flatten(),
        session_id: session_id.flatten(),
        parent_tool_use_id: parent_tool_use_id.flatten(),
        message: message.flatten(),
        event: event.flatten(),
        error: error.flatten(),
        cwd: cwd.flatten(),
        model: model.flatten(),
        sandbox_enabled: sandbox_enabled.flatten(),
        attempt: attempt.flatten(),
        max_retries: max_retries.flatten(),
        retry_delay_ms: retry_delay_ms.flatten(),
        error_status: error_status.flatten(),
        task_id: task_id.flatten(),
        tool_use_id: tool_use_id.flatten(),
        description: description.flatten(),
        is_backgrounded: is_backgrounded.flatten(),
        status: status.flatten(),
        summary: summary.flatten(),
        tool_result_meta: tool_result_meta.flatten(),
        is_error: is_error.flatten(),
        api_error_status: api_error_status.flatten(),
        result: result.flatten(),
        errors: errors.flatten(),
        stop_reason: stop_reason.flatten(),
        total_cost_usd: total_cost_usd.flatten(),
        duration_ms: duration_ms.flatten(),
        usage: usage.flatten(),
        model_usage: model_usage.flatten(),
        permission_denials: permission_denials.flatten(),
    })
}

fn read_message(c: &mut Cursor<'_>) -> Option<Message> {
    let (mut id, mut model, mut content, mut usage) = (None, None, None, None);
    c.object(|c, key| match key {
        "id" => once(&mut id, option(c, owned)?),
        "model" => once(&mut model, option(c, owned)?),
        "content" => once(&mut content, read_content(c)?),
        "usage" => once(&mut usage, option(c, read_usage)?),
        _ => c.skip(),
    })?;
    Some(Message {
        id: id.flatten(),
        model: model.flatten(),
        content: content.unwrap_or_default(),
        usage: usage.flatten(),
    })
}

/// A list of blocks or a string; anything else (`null` too) fails both variants of the untagged
/// enum, and is left to serde_json.
fn read_content(c: &mut Cursor<'_>) -> Option<Content> {
    if c.starts_string() {
        return owned(c).map(Content::Text);
    }
    let mut blocks = Vec::new();
    c.array(|c| {
        blocks.push(read_block(c)?);
        Some(())
    })?;
    Some(Content::Blocks(blocks))
}

fn read_block(c: &mut Cursor<'_>) -> Option<Block> {
    let (mut kind, mut text, mut thinking, mut id, mut name) = (None, None, None, None, None);
    let (mut input, mut tool_use_id, mut content, mut is_error) = (None, None, None, None);
    c.object(|c, key| match key {
        "type" => once(&mut kind, scan::name(c, block_type)?),
        "text" => once(&mut text, option(c, owned)?),
        "thinking" => once(&mut thinking, option(c, owned)?),
        "id" => once(&mut id, option(c, owned)?),
        "name" => once(&mut name, option(c, owned)?),
        "input" => once(&mut input, c.typed()?),
        "tool_use_id" => once(&mut tool_use_id, option(c, owned)?),
        "content" => once(&mut content, option(c, result_content)?),
        "is_error" => once(&mut is_error, option(c, Cursor::bool)?),
        // Untagged content is first copied whole, unknown fields too, which checks their
        // strings and numbers as a kept value would be: a lone surrogate or `1e400` anywhere in
        // a block makes serde_json refuse the line.
        _ => c.typed::<serde_json::Value>().map(drop),
    })?;
    Some(Block {
        kind: kind?,
        text: text.flatten(),
        thinking: thinking.flatten(),
        id: id.flatten(),
        name: name.flatten(),
        input: input.flatten(),
        tool_use_id: tool_use_id.flatten(),
        content: content.flatten(),
        is_error: is_error.flatten(),
    })
}

fn result_content(c: &mut Cursor<'_>) -> Option<ResultContent> {
    if c.starts_string() {
        owned(c).map(ResultContent::Text)
    } else {
        c.typed().map(ResultContent::Blocks)
    }
}

fn stream_event(c: &mut Cursor<'_>) -> Option<StreamEvent> {
    let (mut kind, mut message, mut delta, mut usage) = (None, None, None, None);
    c.object(|c, key| match key {
        "type" => once(&mut kind, scan::name(c, stream_event_type)?),
        "message" => once(&mut message, option(c, read_message)?),
        "delta" => once(&mut delta, option(c, read_delta)?),
        "usage" => once(&mut usage, option(c, read_usage)?),
        _ => c.skip(),
    })?;
    Some(StreamEvent {
        kind: kind?,
        message: message.flatten(),
        delta: delta.flatten(),
        usage: usage.flatten(),
    })
}

/// Token usage, read as its derived `Deserialize` reads it (unknown fields skipped).
fn read_usage(c: &mut Cursor<'_>) -> Option<Usage> {
    let (mut input, mut output, mut creation, mut read) = (None, None, None, None);
    c.object(|c, key| match key {
        "input_tokens" => once(&mut input, option(c, Count::read)?),
        "output_tokens" => once(&mut output, option(c, Count::read)?),
        "cache_creation_input_tokens" => once(&mut creation, option(c, Count::read)?),
        "cache_read_input_tokens" => once(&mut read, option(c, Count::read)?),
        _ => c.skip(),
    })?;
    Some(Usage {
        input_tokens: input.flatten(),
        output_tokens: output.flatten(),
        cache_creation_input_tokens: creation.flatten(),
        cache_read_input_tokens: read.flatten(),
    })
}

fn read_delta(c: &mut Cursor<'_>) -> Option<Delta> {
    let (mut text, mut stop_reason) = (None, None);
    c.object(|c, key| match key {
        "text" => once(&mut text, option(c, owned)?),
        "stop_reason" => once(&mut stop_reason, option(c, owned)?),
        _ => c.skip(),
    })?;
    Some(Delta {
        text: text.flatten(),
        stop_reason: stop_reason.flatten(),
    })
}

/// Whatever the fast path accepts, serde_json accepts with the same value: panics otherwise, and
/// says whether the fast path read the line.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn agrees(text: &str) -> bool {
    crate::agent::scan::same_as_serde::<Line>(text, Cursor::new(text).and_then(line))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::scan::{fixture_lines, mangled};

    fn corpus() -> Vec<String> {
        let mut lines = fixture_lines("claude");
        lines.extend(fixture_lines("claude-2.1.330"));
        lines.extend(fixture_lines("claude-2.1.332"));
        lines.extend(fixture_lines("claude-2.1.337"));
        lines.extend(
            [
                r#"{"type":"assistant","message":{"id":"m","model":"claude","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"ls","n":[1,2.5,-0,1e3,null,true],"o":{"a":"\u00e9\ud83d\ude00"}}}],"usage":{"input_tokens":3,"output_tokens":"x"}},"parent_tool_use_id":null,"session_id":"s"}"#,
                r#"{"type":"assistant","message":{"content":[],"usage":{"input_tokens":1.5,"output_tokens":-1,"cache_read_input_tokens":"12","cache_creation_input_tokens":null,"server_tool_use":{"a":[1,{"b":null}]},"service_tier":"x"}}}"#,
                r#"{"type":"assistant","message":{"content":[],"usage":{"input_tokens":18446744073709551615,"output_tokens":18446744073709551616,"cache_read_input_tokens":1e3,"cache_creation_input_tokens":9999999999999999999}}}"#,
                r#"{"type":"result","usage":{"input_tokens":0,"output_tokens":{"n":1},"cache_read_input_tokens":[2],"cache_creation_input_tokens":true}}"#,
                r#"{"type":"result","usage":{"input_tokens":1,"input_tokens":2}}"#,
                r#"{"type":"result","usage":null}"#,
                r#"{"type":"result","usage":[]}"#,
                r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":[{"type":"text","text":"a"},{"type":"image"}],"is_error":true}]}}"#,
                r#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"t","content":"plain \"quoted\"","is_error":null}]}}"#,
                r#"{"type":"user","message":{"role":"user","content":"a prompt"}}"#,
                r#"{"type":"user","message":{"content":[{"type":"tool_result","content":null}]}}"#,
                r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hel\nlo"}},"session_id":"s","parent_tool_use_id":null,"uuid":"u"}"#,
                r#"{"type":"stream_event","event":{"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}}"#,
                r#"{"type":"stream_event","event":{"type":"message_start","message":{"id":"m","model":"x","content":[],"usage":{"input_tokens":1,"cache_read_input_tokens":2}}}}"#,
                r#"{"type":"system","subtype":"api_retry","attempt":2,"max_retries":10,"retry_delay_ms":1234.5,"error_status":529,"error":"overloaded"}"#,
                r#"{"type":"system","subtype":"init","cwd":"/w/x","model":"claude-opus","tools":["a"]}"#,
                r#"{"type":"result","subtype":"error_max_budget_usd","is_error":true,"duration_ms":900,"stop_reason":"tool_use","session_id":"s","total_cost_usd":1e400,"usage":{"input_tokens":2000,"output_tokens":31},"modelUsage":{"claude-opus-4-8":{"inputTokens":4100,"outputTokens":64}},"permission_denials":[{"tool_name":"Bash","tool_use_id":"t","tool_input":{"command":"rm"}}],"errors":["Reached maximum budget ($0.03)"],"api_error_status":null}"#,
                r#"{"type":"assistant","message":{"content":[]},"error":{"x":1}}"#,
                r#"  {"type" : "system" , "subtype" : null , "extra" : [ {} ] }  "#,
                r#"{"type":"system","attempt":1.5}"#,
                r#"{"type":"system","attempt":4294967296}"#,
                r#"{"type":"assistant","message":{"content":null}}"#,
                r#"{"type":"assistant","message":{"content":{"type":"text"}}}"#,
                r#"{"type":"assistant","message":{"content":[{"text":"no type"}]}}"#,
                r#"{"type":"assistant","message":{"content":[{"type":"text","type":"text"}]}}"#,
                r#"{"type":"user","message":{"content":[{"type":"tool_result","content":5}]}}"#,
                r#"{"type":"assistant","message":{"content":[{"type":"text","text":"lone \ud800"}]}}"#,
                r#"{"type":"assistant","message":{"content":[{"type":"text","skipped":"lone \ud800"}]}}"#,
                r#"{"type":"assistant","message":{"content":[{"type":"text","skipped":[1e400]}]}}"#,
                r#"{"type":"stream_event","event":{"ty\u0070e":"message_stop"}}"#,
                r#"{"subtype":"init"}"#,
                r#"{"type":"result"} trailing"#,
            ]
            .map(str::to_owned),
        );
        lines
    }

    #[test]
    fn the_fast_path_reads_what_serde_json_reads() {
        let lines = corpus();
        let read = lines.iter().filter(|l| agrees(l)).count();
        // The recorded lines are all read fast; the odd ones are left to serde_json.
        let recorded = fixture_lines("claude");
        assert!(recorded.iter().all(|l| agrees(l)));
        // A newer release's lines too, but for those whose `message` is a string, not the
        // message object the wire structs expect: the lenient reader takes those.
        let newer = [
            fixture_lines("claude-2.1.330"),
            fixture_lines("claude-2.1.332"),
            fixture_lines("claude-2.1.337"),
        ];
        for l in newer.concat() {
            let other_type = l.contains(r#""subtype":"permission_denied""#);
            assert_eq!(agrees(&l), !other_type, "{l}");
        }
        assert!(read > recorded.len(), "{read} of {}", lines.len());
        for odd in &lines[lines.len() - 13..] {
            assert!(Cursor::new(odd).and_then(line).is_none(), "{odd}");
        }
    }

    #[test]
    fn the_fast_path_never_reads_a_mangled_line_differently() {
        let (tried, read) = mangled(&corpus(), 300, agrees);
        // Enough mangled lines stay readable for the comparison to mean something.
        assert!(read * 20 > tried, "{read} of {tried}");
    }
}
