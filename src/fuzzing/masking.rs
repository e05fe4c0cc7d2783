//! Property tests of the masking writer: any secret, in any spelling, through each way runbook
//! writes to a file or a pipe, never appears in what was written, however the bytes were cut
//! into writes.

use std::time::SystemTime;

use proptest::prelude::*;

use crate::redact::{MASK, Masked, MaskedStream, MaskedWriter, Redactor};

/// Characters secrets are made of here, the awkward ones included.
fn secret_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => proptest::char::range('a', 'z'),
        2 => proptest::char::range('0', '9'),
        1 => prop::sample::select(vec!['/', '"', '\\', '-', '_', ':', '@', '+', '=', '\t']),
        1 => prop::sample::select(vec!['é', 'ß', '中', '😀']),
    ]
}

fn secret() -> impl Strategy<Value = String> {
    proptest::collection::vec(secret_char(), 6..24).prop_map(|c| c.into_iter().collect())
}

/// `secret` as it may be written: 0 as it is, 1 as JSON writes it, 2 with every character a
/// `\u` escape, 3 a mix of escapes, `\/` and plain characters.
fn spelled(secret: &str, how: u8, mix: &[u8]) -> String {
    let canonical = serde_json::to_string(secret).unwrap();
    let canonical = &canonical[1..canonical.len() - 1];
    match how % 4 {
        0 => secret.to_owned(),
        1 => canonical.to_owned(),
        _ => secret
            .chars()
            .zip(mix.iter().cycle())
            .map(|(c, &m)| {
                let escaped: String = c
                    .encode_utf16(&mut [0u16; 2])
                    .iter()
                    .map(|u| format!("\\u{u:04x}"))
                    .collect();
                let plain = serde_json::to_string(&c.to_string()).unwrap();
                match (c, how % 4 == 2 || m % 3 == 0, m % 3) {
                    (_, true, _) => escaped,
                    ('/', _, 1) => "\\/".to_owned(),
                    _ => plain[1..plain.len() - 1].to_owned(),
                }
            })
            .collect(),
    }
}

/// `text` with JSON's escapes decoded wherever they are: what a reader of it may make of it.
fn decoded(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut units: Vec<u16> = Vec::new();
    let flush = |units: &mut Vec<u16>, out: &mut String| {
        out.extend(char::decode_utf16(units.drain(..)).map(|c| c.unwrap_or('\u{fffd}')));
    };
    while let Some(c) = chars.next() {
        if c != '\\' {
            flush(&mut units, &mut out);
            out.push(c);
            continue;
        }
        let simple = match chars.peek() {
            Some('u') => {
                let hex: String = chars.clone().skip(1).take(4).collect();
                if let Ok(unit) = u16::from_str_radix(&hex, 16)
                    .map_err(|_| ())
                    .and_then(|u| if hex.len() == 4 { Ok(u) } else { Err(()) })
                {
                    for _ in 0..5 {
                        chars.next();
                    }
                    units.push(unit);
                    continue;
                }
                None
            }
            Some('"') => Some('"'),
            Some('\\') => Some('\\'),
            Some('/') => Some('/'),
            Some('n') => Some('\n'),
            Some('t') => Some('\t'),
            Some('r') => Some('\r'),
            Some('b') => Some('\u{8}'),
            Some('f') => Some('\u{c}'),
            _ => None,
        };
        flush(&mut units, &mut out);
        match simple {
            Some(s) => {
                chars.next();
                out.push(s);
            }
            None => out.push('\\'),
        }
    }
    flush(&mut units, &mut out);
    out
}

/// Fails unless `written` keeps `secret` out, as written and as read.
fn hidden(secret: &str, written: &[u8]) -> Result<(), TestCaseError> {
    let text = String::from_utf8_lossy(written);
    prop_assert!(!text.contains(secret), "{:?} in {:?}", secret, text);
    prop_assert!(
        !decoded(&text).contains(secret),
        "{:?} spelled in {:?}",
        secret,
        text
    );
    Ok(())
}

/// A JSON line holding `spelled` in a string, and a plain line holding it too.
fn lines(before: &str, spelled: &str, after: &str) -> Vec<u8> {
    format!("{{\"output\":\"{before}{spelled}{after}\",\"n\":1}}\nplain {before}{spelled}{after}\n")
        .into_bytes()
}

/// `bytes` cut at the given places.
fn cut<'a>(bytes: &'a [u8], at: &[usize]) -> Vec<&'a [u8]> {
    let mut places: Vec<usize> = at.iter().map(|a| a % (bytes.len() + 1)).collect();
    places.sort_unstable();
    let mut pieces = Vec::new();
    let mut from = 0;
    for p in places {
        pieces.push(&bytes[from..p]);
        from = p;
    }
    pieces.push(&bytes[from..]);
    pieces
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// A whole piece written to a file or a pipe.
    #[test]
    fn a_whole_write_never_holds_a_secret(
        secret in secret(),
        how in any::<u8>(),
        mix in proptest::collection::vec(any::<u8>(), 24),
        before in "[ a-z]{0,6}",
        after in "[ a-z]{0,6}",
    ) {
        let r = Redactor::for_agent([secret.as_str()]);
        let bytes = lines(&before, &spelled(&secret, how, &mix), &after);
        let mut pipe = MaskedWriter::pipe(Vec::new());
        pipe.write_all(&r.mask(&bytes)).unwrap();
        let written = pipe.into_inner();
        hidden(&secret, &written)?;
        prop_assert!(String::from_utf8_lossy(&written).matches(MASK).count() >= 2);

        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("result.json");
        crate::redact::write::atomically(&path, "json.tmp", &r.mask(&bytes)).unwrap();
        hidden(&secret, &std::fs::read(&path).unwrap())?;
    }

    /// A stream of output (the agent's raw logs, a check's or an observer's log), cut into
    /// writes anywhere, even inside the secret or inside one of its escapes.
    #[test]
    fn a_stream_cut_anywhere_never_holds_a_secret(
        secret in secret(),
        how in any::<u8>(),
        mix in proptest::collection::vec(any::<u8>(), 24),
        before in "[ a-z]{0,6}",
        after in "[ a-z]{0,6}",
        at in proptest::collection::vec(any::<usize>(), 0..6),
        whole_lines in any::<bool>(),
    ) {
        let r = std::sync::Arc::new(Redactor::for_agent([secret.as_str()]));
        let bytes = lines(&before, &spelled(&secret, how, &mix), &after);
        let mut stream = MaskedStream::new(r);
        stream.whole_lines = whole_lines;
        let mut file = MaskedWriter::pipe(Vec::new());
        for piece in cut(&bytes, &at) {
            file.write_all(&stream.push(piece)).unwrap();
        }
        file.write_all(&stream.finish()).unwrap();
        let written = file.into_inner();
        hidden(&secret, &written)?;
        prop_assert!(String::from_utf8_lossy(&written).matches(MASK).count() >= 2);
    }

    /// runbook's own events holding foreign text (a check's command and output), through the
    /// dispatcher to the event log, and an observer's line with the agent's raw line.
    #[test]
    fn an_event_or_an_observers_line_never_holds_a_secret(
        tail in secret(),
        line in "[ a-z]{0,8}",
    ) {
        // Remembered for the whole process: marked so that it cannot be in another test's text.
        let secret = format!("µprop{tail}");
        crate::redact::remember(&Redactor::for_agent([secret.as_str()]));
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.ndjson");
        let log = crate::store::EventLog::new(MaskedWriter::create_new(&path).unwrap(), path.clone())
            .unwrap();
        let mut dispatch = crate::consumer::Dispatcher::new(vec![Box::new(log)]);
        dispatch.emit_now(
            SystemTime::now(),
            crate::event::EventKind::CheckFinished(crate::event::CheckResult {
                attempt: 0,
                name: "leak".to_owned(),
                command: format!("echo {secret}"),
                passed: false,
                exit: crate::event::ExitInfo::default(),
                timed_out: false,
                duration_ms: 1,
                output_bytes: 1,
                tail: vec![format!("{line}{secret}{line}"), secret.clone()],
                log: String::new(),
                error: Some(secret.clone()),
            }),
        );
        drop(dispatch);
        let written = std::fs::read(&path).unwrap();
        hidden(&secret, &written)?;
        prop_assert!(String::from_utf8_lossy(&written).contains(MASK));

        let meta = crate::observers::MetaLine::new(crate::observers::Meta {
            run_id: "r".to_owned(),
            run_name: "n".to_owned(),
            agent: "custom".to_owned(),
            turn_index: 0,
            turn_kind: crate::event::TurnKind::Start,
        });
        let raw = format!("{{\"text\":\"{line}{secret}\"}}");
        let observed = meta.line(
            &Masked::own(b"{\"type\":\"text\"}\n"),
            crate::event::Turn::FIRST,
            Some(&raw),
        );
        hidden(&secret, observed.as_bytes())?;
    }
}

#[test]
fn the_reader_of_written_text_decodes_every_spelling() {
    let secret = "sk/\"é😀x";
    for how in 0..4 {
        let spelled = spelled(secret, how, &[0, 1, 2, 3, 4, 5, 6]);
        assert_eq!(decoded(&spelled), secret, "{spelled}");
    }
}
