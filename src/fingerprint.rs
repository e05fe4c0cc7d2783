//! Fingerprints of a tool call: what it was called with (`input_hash`) and what it gave back
//! (`result_hash`), so that the same call with the same result can be recognised without
//! keeping either. Only the hashes reach the event stream, never the text they were made of.
//!
//! The input is hashed as canonical JSON (keys sorted, no spaces), so that two spellings of the
//! same input are one call. The result is hashed after what changes from one run of the same
//! command to the next without meaning anything is taken out: terminal escapes, durations,
//! timestamps, temporary paths and process ids.

use std::io;

use sha2::{Digest as _, Sha256};

/// Hex digits kept of a SHA-256: 64 bits, plenty to tell a run's tool calls apart.
const HEX_DIGITS: usize = 16;

/// The fingerprint of a call's input: the canonical JSON of `input` (keys sorted), hashed.
pub(crate) fn input(name: &str, input: &serde_json::Value) -> String {
    let mut sink = HashSink::new();
    sink.0.update(name.as_bytes());
    sink.0.update([0]);
    // Written into the hash as it is made: a large input is never held twice.
    serde_json::to_writer(&mut sink, input).expect("a JSON value always serializes");
    sink.hex()
}

/// The fingerprint of an input read as raw JSON text; `None` when it is not JSON.
#[cfg(test)]
pub(crate) fn input_raw(name: &str, raw: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(raw).ok()?;
    Some(input(name, &value))
}

/// How a call ended, for its result fingerprint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Ended {
    Ok,
    Error,
}

/// The fingerprint of a call's result: how it ended, its exit code when it had one, and its
/// output (or error text) with the noise of [`normalize`] taken out.
pub(crate) fn result(ended: Ended, exit_code: Option<i64>, output: &str) -> String {
    let mut sink = HashSink::new();
    sink.0.update(match ended {
        Ended::Ok => b"ok\0".as_slice(),
        Ended::Error => b"error\0",
    });
    if let Some(code) = exit_code {
        sink.0.update(code.to_string().as_bytes());
    }
    sink.0.update([0]);
    normalize(output, &mut |piece| sink.0.update(piece.as_bytes()));
    sink.hex()
}

/// A SHA-256 that JSON can be written into.
struct HashSink(Sha256);

impl HashSink {
    fn new() -> Self {
        Self(Sha256::new())
    }

    fn hex(self) -> String {
        let digest = self.0.finalize();
        let mut out = String::with_capacity(HEX_DIGITS);
        for b in &digest[..HEX_DIGITS / 2] {
            out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
            out.push(char::from_digit(u32::from(b & 0xf), 16).unwrap_or('0'));
        }
        out
    }
}

impl io::Write for HashSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Directories whose entries are made anew by each run of a command.
const TEMP_DIRS: [&str; 6] = [
    "/tmp/",
    "/var/tmp/",
    "/var/folders/",
    "/private/tmp/",
    "/private/var/folders/",
    "/dev/shm/",
];

/// Units a number before them makes a duration of.
const TIME_UNITS: [&str; 13] = [
    "seconds", "second", "secs", "sec", "ms", "µs", "us", "ns", "mins", "min", "s", "m", "h",
];

/// Hands `text` to `out` in pieces, with what differs between two runs of the same command
/// replaced by a placeholder: terminal escape sequences (dropped), durations (`0.53s`, `12ms`),
/// timestamps (`2026-01-02T03:04:05Z`, `03:04:05.123`), paths under a temporary directory, and
/// process ids (`pid 1234`, `pid=1234`).
pub(crate) fn normalize(text: &str, out: &mut dyn FnMut(&str)) {
    let bytes = text.as_bytes();
    let mut i = 0;
    let mut plain = 0;
    while i < bytes.len() {
        let skip = match bytes[i] {
            0x1b => Some((escape_len(&bytes[i..]), "")),
            b'0'..=b'9' if i == 0 || !is_word(bytes[i - 1]) => number(&text[i..]),
            b'/' if i == 0 || !is_path(bytes[i - 1]) => {
                temp_path_len(&text[i..]).map(|n| (n, "<tmp>"))
            }
            b'p' | b'P' if i == 0 || !is_word(bytes[i - 1]) => {
                pid_len(&text[i..]).map(|n| (n, "pid <n>"))
            }
            _ => None,
        };
        match skip {
            Some((len, with)) if len > 0 => {
                out(&text[plain..i]);
                out(with);
                i += len;
                plain = i;
            }
            _ => i += 1,
        }
    }
    out(&text[plain..]);
}

/// Whether `b` may be part of a path before a `/`: then the `/` does not start one.
fn is_path(b: u8) -> bool {
    is_word(b) || matches!(b, b'/' | b'.' | b'-' | b'~' | b'$')
}

fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// The length of the escape sequence at the start of `b` (which starts with ESC).
fn escape_len(b: &[u8]) -> usize {
    match b.get(1) {
        // CSI: parameters and intermediates, then one final byte.
        Some(b'[') => {
            let end = b[2..].iter().position(|c| (0x40..=0x7e).contains(c));
            end.map_or(b.len(), |e| e + 3)
        }
        // OSC: up to BEL or ST.
        Some(b']') => {
            let mut j = 2;
            while j < b.len() {
                if b[j] == 0x07 {
                    return j + 1;
                }
                if b[j] == 0x1b && b.get(j + 1) == Some(&b'\\') {
                    return j + 2;
                }
                j += 1;
            }
            b.len()
        }
        Some(c) if c.is_ascii() => 2,
        _ => 1,
    }
}

/// A duration or a timestamp at the start of `s` (which starts with a digit): its length and
/// its placeholder.
fn number(s: &str) -> Option<(usize, &'static str)> {
    let b = s.as_bytes();
    let digits = |from: usize| b[from..].iter().take_while(|c| c.is_ascii_digit()).count();
    let first = digits(0);
    // A date, perhaps with its time: 2026-01-02, 2026-01-02T03:04:05.123Z.
    if first == 4
        && b.get(4) == Some(&b'-')
        && digits(5) == 2
        && b.get(7) == Some(&b'-')
        && digits(8) == 2
    {
        let mut end = 10;
        if matches!(b.get(10), Some(b'T' | b' ')) && time_len(&s[11..]).is_some() {
            end = 11 + time_len(&s[11..]).unwrap_or(0);
            end += zone_len(&b[end..]);
        }
        return Some((end, "<time>"));
    }
    if let Some(len) = time_len(s) {
        return Some((len, "<time>"));
    }
    // A duration: 12ms, 0.53s, 1.2 seconds.
    let mut end = first;
    if b.get(end) == Some(&b'.') && digits(end + 1) > 0 {
        end += 1 + digits(end + 1);
    }
    let gap = usize::from(b.get(end) == Some(&b' '));
    let rest = &s[end + gap..];
    let unit = TIME_UNITS.iter().find(|u| {
        rest.starts_with(*u) && rest.as_bytes().get(u.len()).is_none_or(|c| !is_word(*c))
    })?;
    Some((end + gap + unit.len(), "<dur>"))
}

/// `03:04:05`, `03:04:05.123`: the length of a clock time at the start of `s`.
fn time_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    let two = |at: usize| {
        b.get(at..at + 2)
            .is_some_and(|d| d.iter().all(u8::is_ascii_digit))
    };
    if !(two(0) && b.get(2) == Some(&b':') && two(3) && b.get(5) == Some(&b':') && two(6)) {
        return None;
    }
    let mut end = 8;
    if b.get(8) == Some(&b'.') {
        let frac = b[9..].iter().take_while(|c| c.is_ascii_digit()).count();
        end += usize::from(frac > 0) * (1 + frac);
    }
    Some(end)
}

/// `Z`, `+01:00`: the length of a time zone at the start of `b`.
fn zone_len(b: &[u8]) -> usize {
    match b.first() {
        Some(b'Z') => 1,
        Some(b'+' | b'-') if b.len() >= 6 && b[3] == b':' => 6,
        _ => 0,
    }
}

/// The length of a path under a temporary directory at the start of `s`.
fn temp_path_len(s: &str) -> Option<usize> {
    let dir = TEMP_DIRS.iter().find(|d| s.starts_with(*d))?;
    let rest = s[dir.len()..]
        .bytes()
        .take_while(|c| !c.is_ascii_whitespace() && !matches!(c, b'"' | b'\'' | b'`' | b':' | b')'))
        .count();
    Some(dir.len() + rest)
}

/// The length of `pid 1234`, `PID: 1234`, `pid=1234` at the start of `s`.
fn pid_len(s: &str) -> Option<usize> {
    let b = s.as_bytes();
    if !b.get(..3)?.eq_ignore_ascii_case(b"pid") {
        return None;
    }
    let sep = b[3..]
        .iter()
        .take_while(|c| matches!(c, b' ' | b':' | b'=' | b'#'))
        .count();
    let digits = b[3 + sep..]
        .iter()
        .take_while(|c| c.is_ascii_digit())
        .count();
    (digits > 0 && !b.get(3 + sep + digits).is_some_and(|c| is_word(*c)))
        .then_some(3 + sep + digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(text: &str) -> String {
        let mut out = String::new();
        normalize(text, &mut |p| out.push_str(p));
        out
    }

    #[test]
    fn noise_between_two_runs_of_a_command_is_taken_out() {
        let cases = [
            ("\x1b[31mFAILED\x1b[0m tests::adds", "FAILED tests::adds"),
            ("finished in 0.53s", "finished in <dur>"),
            ("took 12ms, then 1.5 seconds", "took <dur>, then <dur>"),
            ("at 2026-01-02T03:04:05.123Z boom", "at <time> boom"),
            ("at 2026-01-02 03:04:05+01:00 boom", "at <time> boom"),
            ("[12:00:01] started", "[<time>] started"),
            ("wrote /tmp/.tmpA1b2C3/out.txt: done", "wrote <tmp>: done"),
            ("see /var/folders/x_/abc/T/foo.log", "see <tmp>"),
            (
                "server pid 4242 exited, PID=17",
                "server pid <n> exited, pid <n>",
            ),
            ("\x1b]0;title\x07prompt", "prompt"),
        ];
        for (raw, want) in cases {
            assert_eq!(norm(raw), want, "{raw:?}");
        }
    }

    #[test]
    fn what_tells_results_apart_is_kept() {
        let cases = [
            "assertion failed: left == 3, right == 4",
            "line 42: expected `;`",
            "3 passed; 1 failed",
            "progress 30%",
            "/home/me/tmp/file.rs",
            "rapid 12 steps",
            "v1.2.3 released",
            "sha 1234567abc",
        ];
        for raw in cases {
            assert_eq!(norm(raw), raw, "{raw:?}");
        }
    }

    #[test]
    fn a_result_differs_when_what_it_says_differs() {
        let a = result(
            Ended::Error,
            Some(101),
            "test adds ... FAILED\nleft: 3\nfinished in 0.21s",
        );
        let b = result(
            Ended::Error,
            Some(101),
            "test adds ... \x1b[31mFAILED\x1b[0m\nleft: 3\nfinished in 1.07s",
        );
        let c = result(
            Ended::Error,
            Some(101),
            "test adds ... FAILED\nleft: 4\nfinished in 0.21s",
        );
        let d = result(
            Ended::Error,
            Some(1),
            "test adds ... FAILED\nleft: 3\nfinished in 0.21s",
        );
        let e = result(
            Ended::Ok,
            Some(101),
            "test adds ... FAILED\nleft: 3\nfinished in 0.21s",
        );
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_ne!(a, e);
        assert_eq!(a.len(), HEX_DIGITS);
        assert!(a.bytes().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn an_input_is_the_same_however_its_keys_are_ordered_or_spaced() {
        let a = input_raw("bash", r#"{"command":"cargo test","timeout":60}"#);
        let b = input_raw("bash", r#"{ "timeout": 60,  "command": "cargo test" }"#);
        let c = input_raw("bash", r#"{"command":"cargo test --lib","timeout":60}"#);
        let d = input_raw("shell", r#"{"command":"cargo test","timeout":60}"#);
        assert!(a.is_some());
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_ne!(a, d);
        assert_eq!(input_raw("bash", "{not json"), None);
    }

    #[test]
    fn a_fingerprint_does_not_hold_the_text_it_was_made_of() {
        let secret = "sk-live-0123456789abcdef";
        let i = input_raw("bash", &format!(r#"{{"command":"echo {secret}"}}"#)).unwrap_or_default();
        let r = result(Ended::Ok, Some(0), secret);
        for print in [i, r] {
            assert_eq!(print.len(), HEX_DIGITS);
            assert!(!secret.contains(&print) && !print.contains("sk-"));
        }
    }
}
