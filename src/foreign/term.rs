//! The terminal sanitizer: foreign text with its control characters and escape sequences made
//! visible, so that nothing in it acts on the terminal.
//!
//! Made visible: every C0 control but tab and newline (`\e` for ESC, `\r`, `\a`, `\b`, `\x01`…),
//! DEL (`\x7f`), every C1 control (`\u{9b}`…: a terminal may read U+009B as CSI) and the Unicode
//! bidirectional controls (`\u{202e}`…), which reorder what a person reads. What is left has no
//! control character in it at all, so no escape sequence can survive: an escaped ESC is two
//! printable characters, and whatever followed it is printed as the text it is.

use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` as a terminal may show it; borrowed when there is nothing to escape.
pub(crate) fn escape(text: &str) -> Cow<'_, str> {
    escape_with(text, |_| None)
}

/// [`escape`], except that where `keep` says the text at an ESC is one of runbook's own
/// sequences (its length, and what to write instead), that is written. For the terminal writer.
pub(crate) fn escape_with<'a>(
    text: &'a str,
    mut keep: impl FnMut(&str) -> Option<(usize, &'static str, usize)>,
) -> Cow<'a, str> {
    let Some(first) = first_control(text) else {
        return Cow::Borrowed(text);
    };
    let mut out = String::with_capacity(text.len() + 16);
    out.push_str(&text[..first]);
    let mut rest = &text[first..];
    while let Some(c) = rest.chars().next() {
        if c == '\x1b'
            && let Some((len, lead, skip)) = keep(rest)
        {
            // runbook's own sequence: `lead`, then what follows its first `skip` bytes.
            out.push_str(lead);
            out.push_str(&rest[skip..len]);
            rest = &rest[len..];
        } else if is_control(c) {
            push_visible(&mut out, c);
            rest = &rest[c.len_utf8()..];
        } else {
            let end = first_control(rest).unwrap_or(rest.len());
            out.push_str(&rest[..end]);
            rest = &rest[end..];
        }
    }
    Cow::Owned(out)
}

/// Whether `text` has anything [`escape`] would escape.
pub(crate) fn has_control(text: &str) -> bool {
    first_control(text).is_some()
}

/// Whether a terminal could act on `c`, or show the text around it other than as written.
pub(crate) fn is_control(c: char) -> bool {
    matches!(c,
        '\0'..='\x08' | '\x0b'..='\x1f' | '\x7f'..='\u{9f}'
        | '\u{061c}' | '\u{200e}' | '\u{200f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// Bytes that may begin a control: the C0 controls, DEL, and the lead bytes of the C1 controls
/// (0xC2) and of the bidirectional ones (0xD8, 0xE2).
const MAY_BEGIN: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = b != b'\t' as usize && b != b'\n' as usize;
        b += 1;
    }
    table[0x7f] = true;
    table[0xc2] = true;
    table[0xd8] = true;
    table[0xe2] = true;
    table
};

/// Where the first control character of `text` is.
fn first_control(text: &str) -> Option<usize> {
    let bytes = text.as_bytes();
    let mut from = 0;
    while let Some(i) = bytes[from..]
        .iter()
        .position(|&b| MAY_BEGIN[usize::from(b)])
    {
        let at = from + i;
        // `at` is at a character's first byte: the table holds no continuation byte.
        if text[at..].chars().next().is_some_and(is_control) {
            return Some(at);
        }
        from = at + 1;
    }
    None
}

/// `c` written so that it is seen and does nothing.
fn push_visible(out: &mut String, c: char) {
    match c {
        '\x1b' => out.push_str("\\e"),
        '\r' => out.push_str("\\r"),
        '\x07' => out.push_str("\\a"),
        '\x08' => out.push_str("\\b"),
        '\0'..='\x7f' => {
            let _ = write!(out, "\\x{:02x}", u32::from(c));
        }
        _ => {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_is_borrowed_and_unchanged() {
        for text in [
            "",
            "read src/lib.rs",
            "tab\tand\nnewline",
            "naïve 中文 😀 ©",
        ] {
            assert!(matches!(escape(text), Cow::Borrowed(t) if t == text));
        }
    }

    #[test]
    fn every_control_is_made_visible() {
        assert_eq!(
            escape("\x1b]52;c;aGk=\x07 \x1b[2J\rX\u{9b}31m\u{202e}a\x7f\x01"),
            "\\e]52;c;aGk=\\a \\e[2J\\rX\\u{9b}31m\\u{202e}a\\x7f\\x01"
        );
        assert_eq!(
            escape("\u{2066}\u{2069}\u{85}"),
            "\\u{2066}\\u{2069}\\u{85}"
        );
    }

    #[test]
    fn what_is_kept_is_only_what_the_caller_says() {
        let kept = escape_with("a\x1b[9;1mb\x1b[31mc", |rest| {
            rest.starts_with("\x1b[9;")
                .then(|| (rest.find('m').unwrap() + 1, "\x1b[", 4))
        });
        assert_eq!(kept, "a\x1b[1mb\\e[31mc");
    }
}
