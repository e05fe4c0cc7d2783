//! The fast path for OpenCode's lines: the wire structs read with [`Cursor`] instead of
//! serde_json, field by field as their derived `Deserialize` reads them (defaults, `null` for an
//! absent `Option`, a repeated known field refused). Anything else gives up, and the caller
//! parses the line with serde_json.

use super::{
    Cost, Count, ErrorData, ErrorLine, Line, Part, SeqLen, Span, StrLen, ToolInput, ToolMeta,
    ToolState, WireCache, WireTokens,
};
use crate::agent::scan::{Cursor, once, option, string};

/// The line read the way `serde_json::from_str::<Line>` reads it, or `None` to ask serde_json.
pub(super) fn line(text: &str) -> Option<Line<'_>> {
    read_line(Cursor::new(text)?)
}

/// A line of printable ASCII (most lines), read without a separate UTF-8 check.
pub(super) fn ascii_line(bytes: &[u8]) -> Option<Line<'_>> {
    read_line(Cursor::ascii(bytes)?)
}

fn read_line(mut c: Cursor<'_>) -> Option<Line<'_>> {
    let (mut kind, mut session_id, mut part, mut error) = (None, None, None, None);
    c.object(|c, key| match key {
        "type" => once(&mut kind, string(c)?),
        "sessionID" => once(&mut session_id, option(c, string)?),
        "part" => once(&mut part, option(c, read_part)?),
        "error" => once(&mut error, option(c, error_line)?),
        _ => c.skip(),
    })?;
    c.end()?;
    Some(Line {
        kind: kind?,
        session_id: session_id.flatten(),
        part: part.flatten(),
        error: error.flatten(),
    })
}

fn read_part<'a>(c: &mut Cursor<'a>) -> Option<Part<'a>> {
    let (mut message_id, mut text, mut tool, mut call_id) = (None, None, None, None);
    let (mut state, mut reason, mut tokens, mut cost) = (None, None, None, None);
    c.object(|c, key| match key {
        "messageID" => once(&mut message_id, option(c, string)?),
        "text" => once(&mut text, option(c, string)?),
        "tool" => once(&mut tool, option(c, string)?),
        "callID" => once(&mut call_id, option(c, string)?),
        "state" => once(&mut state, option(c, |c| tool_state(c).map(Box::new))?),
        "reason" => once(&mut reason, option(c, string)?),
        "tokens" => once(&mut tokens, option(c, wire_tokens)?),
        "cost" => once(&mut cost, option(c, |c| c.f64().map(Cost::Number))?),
        _ => c.skip(),
    })?;
    Some(Part {
        message_id: message_id.flatten(),
        text: text.flatten(),
        tool: tool.flatten(),
        call_id: call_id.flatten(),
        state: state.flatten(),
        reason: reason.flatten(),
        tokens: tokens.flatten(),
        cost: cost.flatten(),
    })
}

fn tool_state<'a>(c: &mut Cursor<'a>) -> Option<ToolState<'a>> {
    let (mut status, mut input, mut output, mut error) = (None, None, None, None);
    let (mut metadata, mut title, mut time) = (None, None, None);
    c.object(|c, key| match key {
        "status" => once(&mut status, string(c)?),
        "input" => once(&mut input, option(c, tool_input)?),
        "output" => once(
            &mut output,
            option(c, |c| Some(StrLen(c.string()?.len()?)))?,
        ),
        "error" => once(&mut error, option(c, string)?),
        "metadata" => once(&mut metadata, option(c, tool_meta)?),
        "title" => once(&mut title, option(c, string)?),
        "time" => once(&mut time, option(c, span)?),
        _ => c.skip(),
    })?;
    Some(ToolState {
        status: status.unwrap_or_default(),
        input: input.flatten(),
        output: output.flatten(),
        error: error.flatten(),
        metadata: metadata.flatten(),
        title: title.flatten(),
        time: time.flatten(),
    })
}

fn tool_input<'a>(c: &mut Cursor<'a>) -> Option<ToolInput<'a>> {
    let (mut file_path, mut path, mut command, mut pattern) = (None, None, None, None);
    let (mut description, mut url, mut todos, mut tool, mut error) = (None, None, None, None, None);
    c.object(|c, key| match key {
        "filePath" => once(&mut file_path, option(c, string)?),
        "path" => once(&mut path, option(c, string)?),
        "command" => once(&mut command, option(c, string)?),
        "pattern" => once(&mut pattern, option(c, string)?),
        "description" => once(&mut description, option(c, string)?),
        "url" => once(&mut url, option(c, string)?),
        "todos" => once(&mut todos, option(c, seq_len)?),
        "tool" => once(&mut tool, option(c, string)?),
        "error" => once(&mut error, option(c, string)?),
        _ => c.skip(),
    })?;
    Some(ToolInput {
        file_path: file_path.flatten(),
        path: path.flatten(),
        command: command.flatten(),
        pattern: pattern.flatten(),
        description: description.flatten(),
        url: url.flatten(),
        todos: todos.flatten(),
        tool: tool.flatten(),
        error: error.flatten(),
    })
}

fn seq_len(c: &mut Cursor<'_>) -> Option<SeqLen> {
    let mut n = 0;
    c.array(|c| {
        n += 1;
        c.skip()
    })?;
    Some(SeqLen(n))
}

fn tool_meta<'a>(c: &mut Cursor<'a>) -> Option<ToolMeta<'a>> {
    let (mut session_id, mut exit) = (None, None);
    c.object(|c, key| match key {
        "sessionId" => once(&mut session_id, option(c, string)?),
        "exit" => once(&mut exit, option(c, Cursor::i64)?),
        _ => c.skip(),
    })?;
    Some(ToolMeta {
        session_id: session_id.flatten(),
        exit: exit.flatten(),
    })
}

fn span(c: &mut Cursor<'_>) -> Option<Span> {
    let (mut start, mut end) = (None, None);
    c.object(|c, key| match key {
        "start" => once(&mut start, option(c, Cursor::u64)?),
        "end" => once(&mut end, option(c, Cursor::u64)?),
        _ => c.skip(),
    })?;
    Some(Span {
        start: start.flatten(),
        end: end.flatten(),
    })
}

fn wire_tokens(c: &mut Cursor<'_>) -> Option<WireTokens> {
    let (mut input, mut output, mut reasoning, mut cache) = (None, None, None, None);
    c.object(|c, key| match key {
        "input" => once(&mut input, count(c)?),
        "output" => once(&mut output, count(c)?),
        "reasoning" => once(&mut reasoning, count(c)?),
        "cache" => once(&mut cache, wire_cache(c)?),
        _ => c.skip(),
    })?;
    Some(WireTokens {
        input: input.unwrap_or_default(),
        output: output.unwrap_or_default(),
        reasoning: reasoning.unwrap_or_default(),
        cache: cache.unwrap_or_default(),
    })
}

/// A token count that is a whole number; anything else is left to serde_json.
fn count(c: &mut Cursor<'_>) -> Option<Count> {
    Some(Count(Some(c.u64()?)))
}

fn wire_cache(c: &mut Cursor<'_>) -> Option<WireCache> {
    let (mut read, mut write) = (None, None);
    c.object(|c, key| match key {
        "read" => once(&mut read, count(c)?),
        "write" => once(&mut write, count(c)?),
        _ => c.skip(),
    })?;
    Some(WireCache {
        read: read.unwrap_or_default(),
        write: write.unwrap_or_default(),
    })
}

fn error_line<'a>(c: &mut Cursor<'a>) -> Option<ErrorLine<'a>> {
    let (mut name, mut data) = (None, None);
    c.object(|c, key| match key {
        "name" => once(&mut name, option(c, string)?),
        "data" => once(&mut data, option(c, error_data)?),
        _ => c.skip(),
    })?;
    Some(ErrorLine {
        name: name.flatten(),
        data: data.flatten(),
    })
}

fn error_data<'a>(c: &mut Cursor<'a>) -> Option<ErrorData<'a>> {
    let (mut message, mut status_code, mut is_retryable) = (None, None, None);
    c.object(|c, key| match key {
        "message" => once(&mut message, option(c, string)?),
        "statusCode" => once(
            &mut status_code,
            option(c, |c| u16::try_from(c.u64()?).ok())?,
        ),
        "isRetryable" => once(&mut is_retryable, option(c, Cursor::bool)?),
        _ => c.skip(),
    })?;
    Some(ErrorData {
        message: message.flatten(),
        status_code: status_code.flatten(),
        is_retryable: is_retryable.flatten(),
    })
}

/// Whatever the fast path accepts, serde_json accepts with the same value: panics otherwise, and
/// says whether the fast path read the line.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn agrees(text: &str) -> bool {
    let ascii = ascii_line(text.as_bytes());
    let Some(fast) = line(text) else {
        assert!(ascii.is_none(), "{text}");
        return false;
    };
    if text.bytes().all(|b| (0x20..0x80).contains(&b)) {
        assert_eq!(ascii.as_ref(), Some(&fast), "{text}");
    } else {
        assert!(ascii.is_none(), "{text}");
    }
    crate::agent::scan::same_as_serde::<Line<'_>>(text, Some(fast))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn corpus() -> Vec<String> {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/opencode");
        let mut lines: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.to_string_lossy().ends_with(".stdout.ndjson"))
            .flat_map(|p| {
                let text = std::fs::read_to_string(p).unwrap();
                text.lines().map(str::to_owned).collect::<Vec<_>>()
            })
            .collect();
        lines.extend(
            [
                r#"{"type":"text","sessionID":"s","part":{"messageID":"m","text":"caf\u00e9 \ud83d\ude00 \"q\" \\ \/ \b\f\n\r\t","time":{"start":1,"end":null}}}"#,
                r#"{"type":"reasoning","part":{"text":null,"time":{}}}"#,
                r#"{"type":"step_finish","part":{"reason":"tool-calls","tokens":{"total":5,"input":1,"output":2,"reasoning":3,"cache":{"read":4,"write":5}},"cost":0.0123}}"#,
                r#"{"type":"step_finish","part":{"tokens":{},"cost":1e-3}}"#,
                r#"{"type":"step_finish","part":{"tokens":null,"cost":7}}"#,
                r#"{"type":"step_finish","part":{"cost":-0.5E+2}}"#,
                r#"{"type":"tool_use","part":{"tool":"bash","callID":"c1","state":{"status":"completed","input":{"command":"ls\n-la","description":"list"},"output":"a\u0000b\n\u00e9\ud83d\ude00","metadata":{"exit":-2,"output":"x"},"title":"t","time":{"start":5,"end":9}}}}"#,
                r#"{"type":"tool_use","part":{"tool":"todowrite","callID":"c2","state":{"status":"completed","input":{"todos":[{"content":"a","status":"pending"},[],null,1.5,"s",true]},"output":""}}}"#,
                r#"{"type":"tool_use","part":{"tool":"task","callID":"c3","state":{"status":"error","input":{"description":"sub","prompt":"p"},"error":"The user rejected permission to use this specific tool call.","metadata":{"sessionId":"ses_child"}}}}"#,
                r#"{"type":"tool_use","part":{"tool":"invalid","state":{"status":"completed","input":{"tool":"nope","error":"no such tool"},"output":null,"metadata":null,"title":null,"time":null}}}"#,
                r#"{"type":"tool_use","part":{"tool":"webfetch","state":{"input":{"url":"https://x","pattern":"p","path":"q","filePath":null}}}}"#,
                r#"{"type":"error","sessionID":"s","error":{"name":"APIError","data":{"message":"boom","statusCode":529,"isRetryable":false,"responseBody":"{\"a\":[1,2,{}]}"}}}"#,
                r#"{"type":"error","error":{"name":null,"data":{"message":null,"statusCode":null,"isRetryable":null}}}"#,
                r#"{"type":"error","error":{}}"#,
                r#"  {"type" : "text" , "part" : { "text" : "spaced" } }  "#,
                r#"{"type":"step_start","part":{},"extra":[{"deep":[[[[{"x":[-0.0,0,1E5,2e-2,true,false,null]}]]]]}]}"#,
                r#"{"type":"unknown","part":null,"error":null,"sessionID":null}"#,
                r#"{"type":"text","part":{"skipped":"lone \ud800 surrogate"}}"#,
                r#"{"type":"text","type":"text"}"#,
                r#"{"type":"text","part":{"text":"a","text":"b"}}"#,
                r#"{"type":"text","part":{"te\u0078t":"escaped key"}}"#,
                r#"{"type":"text","part":{"text":"lone \ud800 surrogate"}}"#,
                r#"{"type":"step_finish","part":{"tokens":{"input":18446744073709551615}}}"#,
                r#"{"type":"step_finish","part":{"tokens":{"input":18446744073709551616}}}"#,
                r#"{"type":"step_finish","part":{"tokens":{"input":-1}}}"#,
                r#"{"type":"step_finish","part":{"tokens":{"input":1.0}}}"#,
                r#"{"type":"step_finish","part":{"tokens":{"cache":null}}}"#,
                r#"{"type":"error","error":{"data":{"statusCode":65536}}}"#,
                r#"{"type":"tool_use","part":{"state":{"status":null}}}"#,
                r#"{"type":"tool_use","part":{"state":{"metadata":{"exit":9223372036854775807}}}}"#,
                r#"{"type":"tool_use","part":{"state":{"metadata":{"exit":-0}}}}"#,
                r#"["text",null,{"text":"positional"}]"#,
                r#"{"type":"text","part":{"text":"tab	inside"}}"#,
                "{\"type\":\"text\",\n\"part\":{}}",
                r#"{"type":"text"} trailing"#,
                r#"{"type":"text",}"#,
            ]
            .map(str::to_owned),
        );
        lines
    }

    #[test]
    fn the_fast_path_reads_what_serde_json_reads() {
        let lines = corpus();
        let read = lines.iter().filter(|l| agrees(l)).count();
        // The common shapes are read fast; the odd ones are left to serde_json.
        assert!(read * 10 >= lines.len() * 7, "{read} of {}", lines.len());
        // A skipped string is not checked for lone surrogates, by serde_json either.
        assert!(agrees(&lines[lines.len() - 19]));
        for odd in &lines[lines.len() - 18..] {
            assert!(line(odd).is_none(), "{odd}");
        }
    }

    #[test]
    fn the_fast_path_never_reads_a_mangled_line_differently() {
        const ALPHABET: &[&str] = &[
            "\"", "\\", "{", "}", "[", "]", ",", ":", " ", "0", "1", "9", "-", "+", ".", "e", "E",
            "u", "n", "t", "f", "a", "l", "s", "r", "x", "/", "\t", "\n", "null", "true", "[]",
            "{}", "\"\"", "1.5", "\\u", "\\ud800", "\\udc00", "é", "😀", "\u{7f}",
        ];
        let mut rng = fastrand::Rng::with_seed(0x5eed);
        let (mut tried, mut read) = (0, 0);
        for original in corpus() {
            for _ in 0..1000 {
                let mut text = original.clone();
                for _ in 0..rng.usize(1..4) {
                    let mut at = rng.usize(0..=text.len());
                    while !text.is_char_boundary(at) {
                        at -= 1;
                    }
                    match rng.u8(0..4) {
                        0 => text.insert_str(at, ALPHABET[rng.usize(..ALPHABET.len())]),
                        1 => {
                            let mut end = (at + rng.usize(1..4)).min(text.len());
                            while !text.is_char_boundary(end) {
                                end += 1;
                            }
                            text.replace_range(at..end, "");
                        }
                        2 => {
                            let mut end = (at + rng.usize(1..3)).min(text.len());
                            while !text.is_char_boundary(end) {
                                end += 1;
                            }
                            text.replace_range(at..end, ALPHABET[rng.usize(..ALPHABET.len())]);
                        }
                        _ => {
                            // Repeat a piece (a key, a value, a whole member).
                            let mut end = (at + rng.usize(1..40)).min(text.len());
                            while !text.is_char_boundary(end) {
                                end += 1;
                            }
                            let piece = text[at..end].to_owned();
                            text.insert_str(at, &piece);
                        }
                    }
                }
                tried += 1;
                read += usize::from(agrees(&text));
            }
        }
        // Enough mangled lines stay readable for the comparison to mean something.
        assert!(read * 20 > tried, "{read} of {tried}");
    }
}
