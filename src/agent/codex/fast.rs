//! The fast path for Codex's lines: the wire structs read with [`Cursor`] instead of serde_json's
//! derived deserializers, field by field as those read them (`null` or absent is `None`, an absent
//! list is empty, a repeated known field refused, unknown fields skipped). Rare or loosely typed
//! fields (usage, errors, arguments, lists other than strings) are handed to serde_json on their
//! own. Anything unusual gives up, and the caller parses the line with serde_json.

use super::{Item, Line};
use crate::agent::scan::{self, Cursor, name, once, option, string};

scan::names!(
    /// The lines' types runbook reads: these are not copied.
    line_type = [
        "item.completed",
        "item.started",
        "item.updated",
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "error",
    ],
);

scan::names!(
    /// The items' types runbook reads: these are not copied.
    item_type = [
        "command_execution",
        "agent_message",
        "reasoning",
        "file_change",
        "mcp_tool_call",
        "web_search",
        "todo_list",
        "collab_tool_call",
        "error",
    ],
);

/// The line read the way `serde_json::from_slice::<Line>` reads it, or `None` to ask serde_json.
pub(super) fn line(c: Cursor<'_>) -> Option<Line<'_>> {
    any_line(c)
}

/// An item line in the layout Codex writes (`{"type":"item.…","item":{"id":…,"type":…,…}}`, no
/// spaces, `id` and `type` first, then string and exit-code fields): its punctuation and keys
/// are compared as they stand instead of read token by token, the bulk of a busy stream. The
/// item is handed to `then` where it lies, with the line's type: it is neither moved nor boxed.
/// Any other layout, field or value gives `None` without calling `then`, and is read by [`line`].
pub(super) fn item_line<'a, T>(
    mut c: Cursor<'a>,
    then: impl FnOnce(&'static str, &mut Item<'a>) -> T,
) -> Option<T> {
    c.lit(b"{\"type\":\"item.")?;
    let kind = if c.lit(b"completed\"").is_some() {
        "item.completed"
    } else if c.lit(b"started\"").is_some() {
        "item.started"
    } else {
        c.lit(b"updated\"")?;
        "item.updated"
    };
    c.lit(b",\"item\":{\"id\":")?;
    let id = string(&mut c)?;
    c.lit(b",\"type\":")?;
    let item_kind = name(&mut c, item_type)?;
    let (mut text, mut message, mut command, mut aggregated_output) = (None, None, None, None);
    let (mut exit_code, mut status, mut server, mut tool) = (None, None, None, None);
    let (mut query, mut prompt) = (None, None);
    while c.lit(b"}}").is_none() {
        c.lit(b",")?;
        match c.key()? {
            "text" => once(&mut text, option(&mut c, string)?),
            "message" => once(&mut message, option(&mut c, string)?),
            "command" => once(&mut command, option(&mut c, string)?),
            "aggregated_output" => once(&mut aggregated_output, option(&mut c, string)?),
            "exit_code" => once(&mut exit_code, option(&mut c, Cursor::i64)?),
            "status" => once(&mut status, option(&mut c, string)?),
            "server" => once(&mut server, option(&mut c, string)?),
            "tool" => once(&mut tool, option(&mut c, string)?),
            "query" => once(&mut query, option(&mut c, string)?),
            "prompt" => once(&mut prompt, option(&mut c, string)?),
            _ => None,
        }?;
    }
    c.end()?;
    let mut item = Item {
        id,
        kind: item_kind,
        text: text.flatten(),
        message: message.flatten(),
        command: command.flatten(),
        aggregated_output: aggregated_output.flatten(),
        exit_code: exit_code.flatten(),
        status: status.flatten(),
        changes: Vec::new(),
        server: server.flatten(),
        tool: tool.flatten(),
        arguments: None,
        error: None,
        query: query.flatten(),
        prompt: prompt.flatten(),
        receiver_thread_ids: Vec::new(),
        agents_states: None,
        items: Vec::new(),
    };
    Some(then(kind, &mut item))
}

/// Any line, its fields in any order.
fn any_line(mut c: Cursor<'_>) -> Option<Line<'_>> {
    let (mut kind, mut thread_id, mut item) = (None, None, None);
    let (mut message, mut error, mut usage) = (None, None, None);
    c.object(|c, key| match key {
        "type" => once(&mut kind, name(c, line_type)?),
        "thread_id" => once(&mut thread_id, option(c, string)?),
        "item" => once(&mut item, option(c, |c| read_item(c).map(Box::new))?),
        "message" => once(&mut message, option(c, string)?),
        "error" => once(&mut error, c.typed()?),
        "usage" => once(&mut usage, c.typed()?),
        _ => c.skip(),
    })?;
    c.end()?;
    Some(Line {
        kind: kind?,
        thread_id: thread_id.flatten(),
        item: item.flatten(),
        message: message.flatten(),
        error: error.flatten(),
        usage: usage.flatten(),
    })
}

fn read_item<'a>(c: &mut Cursor<'a>) -> Option<Item<'a>> {
    let (mut id, mut kind, mut text, mut message, mut command) = (None, None, None, None, None);
    let (mut aggregated_output, mut exit_code, mut status) = (None, None, None);
    let (mut changes, mut server, mut tool, mut arguments) = (None, None, None, None);
    let (mut error, mut query, mut prompt) = (None, None, None);
    let (mut receiver_thread_ids, mut agents_states, mut items) = (None, None, None);
    c.object(|c, key| match key {
        "id" => once(&mut id, string(c)?),
        "type" => once(&mut kind, name(c, item_type)?),
        "text" => once(&mut text, option(c, string)?),
        "message" => once(&mut message, option(c, string)?),
        "command" => once(&mut command, option(c, string)?),
        "aggregated_output" => once(&mut aggregated_output, option(c, string)?),
        "exit_code" => once(&mut exit_code, option(c, Cursor::i64)?),
        "status" => once(&mut status, option(c, string)?),
        "changes" => once(&mut changes, c.typed()?),
        "server" => once(&mut server, option(c, string)?),
        "tool" => once(&mut tool, option(c, string)?),
        "arguments" => once(&mut arguments, c.typed()?),
        "error" => once(&mut error, c.typed()?),
        "query" => once(&mut query, option(c, string)?),
        "prompt" => once(&mut prompt, option(c, string)?),
        "receiver_thread_ids" => once(&mut receiver_thread_ids, c.typed()?),
        "agents_states" => once(&mut agents_states, c.typed()?),
        "items" => once(&mut items, c.typed()?),
        _ => c.skip(),
    })?;
    Some(Item {
        id: id?,
        kind: kind?,
        text: text.flatten(),
        message: message.flatten(),
        command: command.flatten(),
        aggregated_output: aggregated_output.flatten(),
        exit_code: exit_code.flatten(),
        status: status.flatten(),
        changes: changes.unwrap_or_default(),
        server: server.flatten(),
        tool: tool.flatten(),
        arguments: arguments.flatten(),
        error: error.flatten(),
        query: query.flatten(),
        prompt: prompt.flatten(),
        receiver_thread_ids: receiver_thread_ids.unwrap_or_default(),
        agents_states: agents_states.flatten(),
        items: items.unwrap_or_default(),
    })
}

/// Whatever the fast paths accept (the item read in place, the line read in full), serde_json
/// accepts with the same value: panics otherwise, and says whether either read the line.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn agrees(text: &str) -> bool {
    use crate::agent::scan::same_as_serde;
    let in_place = Cursor::new(text).and_then(|c| item_line(c, as_line));
    let in_place = same_as_serde::<Line>(text, in_place);
    same_as_serde::<Line>(text, Cursor::new(text).and_then(line)) || in_place
}

/// An item read in place as the line serde_json reads.
#[cfg(any(test, feature = "fuzzing"))]
fn as_line<'a>(kind: &'static str, item: &mut Item<'a>) -> Line<'a> {
    Line {
        kind: scan::Name::known(kind),
        thread_id: None,
        item: Some(Box::new(item.clone())),
        message: None,
        error: None,
        usage: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::scan::mangled;

    fn corpus() -> Vec<String> {
        let mut lines = crate::agent::scan::fixture_lines("codex");
        lines.extend(
            [
                r#"{"type":"item.completed","item":{"id":"item_0","type":"mcp_tool_call","server":"docs","tool":"lookup","arguments":{"query":"tokio select","n":[1,2.5,null]},"error":{"message":"server unavailable"},"status":"failed"}}"#,
                r#"{"type":"item.completed","item":{"id":"item_2","type":"todo_list","items":[{"text":"a","completed":true},{"text":"b","completed":false}]}}"#,
                r#"{"type":"item.completed","item":{"id":"item_3","type":"file_change","changes":[{"path":"/w/old.rs","kind":"delete"}],"status":"completed"}}"#,
                r#"{"type":"item.completed","item":{"id":"i","type":"collab_tool_call","tool":"wait","receiver_thread_ids":["t1","t2"],"agents_states":{"t1":{"status":"completed","message":"done"}}}}"#,
                r#"{"type":"item.completed","item":{"id":"i","type":"command_execution","command":"ls","aggregated_output":"a\nb\u00e9\ud83d\ude00","exit_code":-2,"status":"failed"}}"#,
                r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":40,"output_tokens":"x","reasoning_output_tokens":1e400}}"#,
                r#"{"type":"turn.failed","error":{"message":"boom"}}"#,
                r#"{"type":"error","message":"Reconnecting... 1/2 (stream disconnected)"}"#,
                r#"{"type":"thread.started","thread_id":null,"item":null,"message":null,"error":null,"usage":null}"#,
                r#"  {"type" : "turn.started" , "extra" : [ {} ] }  "#,
                r#"{"type":"item.updated","item":{"id":"item_9","type":"command_execution","command":"/bin/bash -lc 'ls'","aggregated_output":"a\n\"b\"\u00e9","exit_code":-3,"status":"failed"}}"#,
                r#"{"type":"item.completed","item":{"id":"i\u0041","type":"agent_message","text":null,"message":null,"query":"q","prompt":"p","server":"s","tool":"t"}}   "#,
                r#"{"type":"item.completed","item":{"id":"a","type":"agent_message","text":"x"},"item":null}"#,
                r#"{"type":"item.completed","item":{"id":"a","type":"agent_message", "text" : "spaced"}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"command_execution","command":"ls","command":"pwd"}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"command_execution","exit_code":007}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"command_execution","exit_code":12345678901234567890}}"#,
                r#"{"type":"item.completedX","item":{"id":"a","type":"agent_message","text":"x"}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"x","id":"b"}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"x","changes":[{"path":"p"}]}}"#,
                r#"{"type":"turn.completed","usage":[1]}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"x","changes":null}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"x","items":null}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"x","exit_code":1.5}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"x","exit_code":-0}}"#,
                r#"{"type":"item.started","item":{"type":"x"}}"#,
                r#"{"type":"item.started","item":{"id":"a","id":"b","type":"x"}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"x","text":"lone \ud800"}}"#,
                r#"{"type":"item.started","item":{"id":"a","type":"x","te\u0078t":"escaped key"}}"#,
                r#"{"thread_id":"t"}"#,
                r#"{"type":"turn.started"} trailing"#,
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
        let recorded = crate::agent::scan::fixture_lines("codex");
        assert!(recorded.iter().all(|l| agrees(l)));
        assert!(read > recorded.len(), "{read} of {}", lines.len());
        for odd in &lines[lines.len() - 10..] {
            assert!(Cursor::new(odd).and_then(line).is_none(), "{odd}");
            assert!(
                Cursor::new(odd)
                    .and_then(|c| item_line(c, |_, _| ()))
                    .is_none(),
                "{odd}"
            );
        }
    }

    #[test]
    fn items_in_codex_s_own_layout_are_read_by_position() {
        let recorded = crate::agent::scan::fixture_lines("codex");
        let items: Vec<&String> = recorded
            .iter()
            .filter(|l| l.starts_with(r#"{"type":"item."#))
            .collect();
        let by_position: Vec<&&String> = items
            .iter()
            .filter(|l| {
                Cursor::new(l)
                    .and_then(|c| item_line(c, |_, _| ()))
                    .is_some()
            })
            .collect();
        // What is read by position is read as serde_json reads it (`agrees` checks the
        // positional reading and the full one); most recorded items are.
        assert!(by_position.iter().all(|l| agrees(l)));
        assert!(
            by_position.len() * 4 >= items.len() * 3,
            "{} of {}",
            by_position.len(),
            items.len()
        );
        let common = r#"{"type":"item.started","item":{"id":"item_1","type":"command_execution","command":"/bin/bash -lc 'cat README.md'","aggregated_output":"","exit_code":null,"status":"in_progress"}}"#;
        assert!(
            Cursor::new(common)
                .and_then(|c| item_line(c, |_, _| ()))
                .is_some()
        );
        for other in [
            r#"{"type":"item.started","item":{"type":"x","id":"a"}}"#,
            r#"{"type":"item.started","item":{"id":"a","type":"x","arguments":{}}}"#,
            r#"{"item":{"id":"a","type":"x"},"type":"item.started"}"#,
            r#"{"type":"item.started","item":{"id":"a","type":"x","id":"b"}}"#,
        ] {
            assert!(
                Cursor::new(other)
                    .and_then(|c| item_line(c, |_, _| ()))
                    .is_none(),
                "{other}"
            );
        }
    }

    #[test]
    fn the_fast_path_never_reads_a_mangled_line_differently() {
        let (tried, read) = mangled(&corpus(), 300, agrees);
        // Enough mangled lines stay readable for the comparison to mean something.
        assert!(read * 20 > tried, "{read} of {tried}");
    }
}
