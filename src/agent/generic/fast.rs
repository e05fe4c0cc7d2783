//! The fast path for universal events (`--agent-cmd`): the common events read without serde's
//! internally tagged enum, which first copies every field of the line into a tree of its own.
//! The line is checked as that copy checks it (every string decoded, every number in range, the
//! tag given once), then the few fields of a text, step or session event are read here, and a
//! tool call or finished step is read by serde_json straight from the line as its own struct
//! (the tag is then an unknown field, ignored). Anything else gives up, and the caller parses the
//! line with serde_json.

use std::borrow::Cow;

use crate::agent::scan::{Cursor, once, string};
use crate::event::{EventKind, StepUsage, ToolEnd, ToolStart};

/// The fields read here, each as written (a line that gives one twice is left to serde_json).
#[derive(Default)]
struct Fields<'a> {
    text: Option<&'a str>,
    id: Option<&'a str>,
    session_id: Option<&'a str>,
}

/// The event read the way `serde_json::from_str::<EventKind>` reads it, or `None` to ask
/// serde_json.
pub(super) fn line(text: &str) -> Option<EventKind> {
    let mut c = Cursor::ascii(text.as_bytes()).or_else(|| Cursor::new(text))?;
    let (mut tag, mut fields) = (None, Fields::default());
    c.object(|c, key| match key {
        "type" => once(&mut tag, string(c)?),
        "text" => once(&mut fields.text, checked(c)?),
        "id" => once(&mut fields.id, checked(c)?),
        "session_id" => once(&mut fields.session_id, checked(c)?),
        _ => checked(c).map(drop),
    })?;
    c.end()?;
    let tag: Cow<'_, str> = tag?;
    Some(match &*tag {
        "text" => EventKind::Text {
            text: required(fields.text)?,
        },
        "text.delta" => EventKind::TextDelta {
            text: required(fields.text)?,
        },
        "reasoning" => EventKind::Reasoning {
            text: required(fields.text)?,
        },
        "session.started" => EventKind::SessionStarted {
            session_id: required(fields.session_id)?,
        },
        "step.started" => EventKind::StepStarted {
            id: match fields.id {
                None => None,
                Some(raw) => optional(raw)?,
            },
        },
        "tool.started" => EventKind::ToolStarted(serde_json::from_str::<ToolStart>(text).ok()?),
        "tool.completed" => EventKind::ToolCompleted(serde_json::from_str::<ToolEnd>(text).ok()?),
        "step.finished" => EventKind::StepFinished(serde_json::from_str::<StepUsage>(text).ok()?),
        _ => return None,
    })
}

/// A string field that must be there.
fn required(raw: Option<&str>) -> Option<String> {
    let mut c = Cursor::new(raw?)?;
    Some(string(&mut c)?.into_owned())
}

/// An `Option<String>` field that was given: `null` is `None`.
fn optional(raw: &str) -> Option<Option<String>> {
    let mut c = Cursor::new(raw)?;
    if c.null() {
        return Some(None);
    }
    Some(Some(string(&mut c)?.into_owned()))
}

/// A value checked as serde copies it (strings decoded, numbers read), returned as written.
fn checked<'a>(c: &mut Cursor<'a>) -> Option<&'a str> {
    let start = c.offset();
    check(c, 64)?;
    Some(c.since(start))
}

fn check(c: &mut Cursor<'_>, depth: u32) -> Option<()> {
    match c.next_byte()? {
        b'"' => c.string()?.len().map(drop),
        b'{' if depth > 0 => c.object(|c, _| check(c, depth - 1)),
        b'[' if depth > 0 => c.array(|c| check(c, depth - 1)),
        b'-' | b'0'..=b'9' => {
            let n = c.number()?;
            let digits = n.strip_prefix('-').unwrap_or(n);
            // Short integers always read; others are read as serde_json reads them, which
            // refuses one out of `f64`'s range.
            if digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) {
                serde_json::from_str::<f64>(n).ok()?;
            }
            Some(())
        }
        b't' | b'f' | b'n' => c.skip(),
        _ => None,
    }
}

/// Whatever the fast path accepts, serde_json accepts with the same value: panics otherwise, and
/// says whether the fast path read the line.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn agrees(text: &str) -> bool {
    crate::agent::scan::same_as_serde::<EventKind>(text, line(text))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::scan::{fixture_lines, mangled};
    use crate::agent::{Adapter, Claude, Codex, OpenCode, ParseContext};

    /// Universal events as agents would print them: what the adapters make of the recorded
    /// transcripts, and odd lines.
    fn corpus() -> Vec<String> {
        let mut lines = Vec::new();
        for (agent, adapter) in [
            ("opencode", &OpenCode as &dyn Adapter),
            ("claude", &Claude),
            ("codex", &Codex),
        ] {
            let mut parser = adapter.stdout_parser(ParseContext::new("/w".into()));
            let mut events = Vec::new();
            for line in fixture_lines(agent) {
                parser.line(line.as_bytes(), &mut events);
            }
            lines.extend(events.iter().map(|e| serde_json::to_string(e).unwrap()));
        }
        lines.extend(
            [
                r#"{"type":"text","text":"caf\u00e9 \ud83d\ude00 \"q\"","extra":[1,-0.5e3,null,true,{"a":{}}]}"#,
                r#"{"text":"tag last","type":"reasoning"}"#,
                r#"{"type":"step.started","id":null}"#,
                r#"{"type":"step.started"}"#,
                r#"{"type":"tool.started","call_id":"c","name":"bash","input":"ls","kind":"shell","parent":null}"#,
                r#"{"type":"tool.completed","call_id":"c","name":"bash","input":"ls","status":"error","error":"x","output_bytes":3,"duration_ms":5}"#,
                r#"{"type":"step.finished","reason":"stop","tokens":{"input":1,"output":2,"reasoning":0,"cache_read":0,"cache_write":0},"cost_usd":1}"#,
                r#"  {"type" : "text" , "text" : "spaced" }  "#,
                r#"{"type":"text","text":"a","big":123456789012345678901234567890}"#,
                r#"{"type":"text","text":"a","text":"b"}"#,
                r#"{"type":"text","type":"text","text":"a"}"#,
                r#"{"type":"text","text":"a","skipped":"lone \ud800"}"#,
                r#"{"type":"text","text":"a","skipped":1e400}"#,
                r#"{"type":"tool.started","call_id":"c","name":"bash","input":"ls","x":"\udc00"}"#,
                r#"{"type":"text","text":5}"#,
                r#"{"type":"text"}"#,
                r#"{"type":"run.started"}"#,
                r#"{"type":"nope","text":"a"}"#,
                r#"{"type":null,"text":"a"}"#,
                r#"{"ty\u0070e":"text","text":"a"}"#,
                r#"{"type":"text","text":"a"} trailing"#,
            ]
            .map(str::to_owned),
        );
        lines
    }

    #[test]
    fn the_fast_path_reads_what_serde_json_reads() {
        let lines = corpus();
        let read = lines.iter().filter(|l| agrees(l)).count();
        assert!(read * 2 > lines.len(), "{read} of {}", lines.len());
        for odd in &lines[lines.len() - 12..] {
            assert!(line(odd).is_none(), "{odd}");
        }
    }

    #[test]
    fn the_fast_path_never_reads_a_mangled_line_differently() {
        let (tried, read) = mangled(&corpus(), 100, agrees);
        // Enough mangled lines stay readable for the comparison to mean something.
        assert!(read * 20 > tried, "{read} of {tried}");
    }
}
