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

/// [`escape`] for text shown on one line (a value, a path): newlines and tabs made visible too.
pub(crate) fn escape_line(text: &str) -> Cow<'_, str> {
    match escape(text) {
        Cow::Borrowed(t) if !t.contains(['\n', '\t']) => Cow::Borrowed(t),
        shown => Cow::Owned(shown.replace('\n', "\\n").replace('\t', "\\t")),
    }
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

/// A copy of `value` with every string in it (map keys included) escaped, to lay out before it
/// is shown; `None` when no string needed it, or when the escaped copy does not read back.
pub(crate) fn escaped_copy<T: serde::Serialize + serde::de::DeserializeOwned>(
    value: &T,
) -> Option<T> {
    let mut json = serde_json::to_value(value).ok()?;
    if !escape_strings(&mut json) {
        return None;
    }
    serde_json::from_value(json).ok()
}

/// Escapes every string in `value`; whether anything changed.
fn escape_strings(value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::String(s) => match escape(s) {
            Cow::Borrowed(_) => false,
            Cow::Owned(escaped) => {
                *s = escaped;
                true
            }
        },
        Value::Array(items) => items.iter_mut().fold(false, |c, v| escape_strings(v) | c),
        Value::Object(map) => {
            if !map.keys().any(|k| has_control(k)) {
                return map.values_mut().fold(false, |c, v| escape_strings(v) | c);
            }
            let old = std::mem::take(map);
            for (key, mut v) in old {
                escape_strings(&mut v);
                map.insert(escape(&key).into_owned(), v);
            }
            true
        }
        _ => false,
    }
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
    fn every_string_of_a_value_is_escaped_keys_included() {
        let value: std::collections::BTreeMap<String, Vec<String>> = [(
            "k\x1b]0;t\x07".to_owned(),
            vec!["a\rb".to_owned(), "ok".to_owned()],
        )]
        .into();
        let escaped = escaped_copy(&value).unwrap();
        assert_eq!(
            escaped.into_iter().collect::<Vec<_>>(),
            [(
                "k\\e]0;t\\a".to_owned(),
                vec!["a\\rb".to_owned(), "ok".to_owned()]
            )]
        );
        assert!(escaped_copy(&vec!["plain".to_owned()]).is_none());
    }

    #[test]
    fn what_is_kept_is_only_what_the_caller_says() {
        let kept = escape_with("a\x1b[9;1mb\x1b[31mc", |rest| {
            rest.starts_with("\x1b[9;")
                .then(|| (rest.find('m').unwrap() + 1, "\x1b[", 4))
        });
        assert_eq!(kept, "a\x1b[1mb\\e[31mc");
    }

    mod on_a_terminal {
        //! Whatever text goes through the sanitizer, a terminal (vt100) only prints it: no title,
        //! no clipboard, no bell, no alternate screen, no colour, no cursor moved but by the
        //! characters and newlines themselves.

        use proptest::prelude::*;

        use super::super::escape;

        /// What the terminal was asked to do besides printing.
        #[derive(Default)]
        struct Asked(Vec<String>);

        impl vt100::Callbacks for Asked {
            fn audible_bell(&mut self, _: &mut vt100::Screen) {
                self.0.push("bell".into());
            }
            fn visual_bell(&mut self, _: &mut vt100::Screen) {
                self.0.push("visual bell".into());
            }
            fn resize(&mut self, _: &mut vt100::Screen, size: (u16, u16)) {
                self.0.push(format!("resize {size:?}"));
            }
            fn set_window_icon_name(&mut self, _: &mut vt100::Screen, name: &[u8]) {
                self.0.push(format!("icon {name:?}"));
            }
            fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
                self.0.push(format!("title {title:?}"));
            }
            fn copy_to_clipboard(&mut self, _: &mut vt100::Screen, ty: &[u8], data: &[u8]) {
                self.0.push(format!("clipboard {ty:?} {data:?}"));
            }
            fn paste_from_clipboard(&mut self, _: &mut vt100::Screen, ty: &[u8]) {
                self.0.push(format!("paste {ty:?}"));
            }
            fn unhandled_control(&mut self, _: &mut vt100::Screen, b: u8) {
                self.0.push(format!("control {b}"));
            }
            fn unhandled_escape(
                &mut self,
                _: &mut vt100::Screen,
                i1: Option<u8>,
                i2: Option<u8>,
                b: u8,
            ) {
                self.0.push(format!("escape {i1:?} {i2:?} {b}"));
            }
            fn unhandled_csi(
                &mut self,
                _: &mut vt100::Screen,
                i1: Option<u8>,
                i2: Option<u8>,
                params: &[&[u16]],
                c: char,
            ) {
                self.0.push(format!("csi {i1:?} {i2:?} {params:?} {c}"));
            }
            fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
                self.0.push(format!("osc {params:?}"));
            }
        }

        /// Pieces of hostile text: escape sequences of every kind, lone controls, and text.
        fn piece(wide: bool) -> BoxedStrategy<String> {
            let payloads = prop::sample::select(vec![
                "\x1b]52;c;aGVsbG8=\x07",
                "\x1b]0;pwned\x07",
                "\x1b]2;pwned\x1b\\",
                "\x1b[2J",
                "\x1b[H",
                "\x1b[?1049h",
                "\x1b[?25l",
                "\x1b[31;1m",
                "\x1b[38;5;196m",
                "\u{9b}31m",
                "\u{9d}0;t\u{9c}",
                "\x1bPq#0\x1b\\",
                "\x1bc",
                "\x1b7\x1b8",
                "\r",
                "\x07",
                "\x08",
                "\x0b\x0c",
                "\u{202e}\u{2066}",
            ]);
            let controls = prop_oneof![
                (0u32..0x20).prop_map(|c| char::from_u32(c).unwrap().to_string()),
                (0x7fu32..0xa0).prop_map(|c| char::from_u32(c).unwrap().to_string()),
            ];
            let text = "[a-zA-Z0-9 ;\\[\\]?\\\\é中-]{0,12}";
            if wide {
                prop_oneof![
                    3 => payloads.prop_map(str::to_owned),
                    3 => controls,
                    2 => text.prop_map(|t| t),
                    2 => any::<char>().prop_map(String::from),
                    1 => prop::collection::vec(any::<u8>(), 0..16)
                        .prop_map(|b: Vec<u8>| String::from_utf8_lossy(&b).into_owned()),
                ]
                .boxed()
            } else {
                prop_oneof![
                    3 => payloads.prop_map(str::to_owned),
                    3 => controls,
                    3 => text.prop_map(|t| t),
                    1 => Just("\n".to_owned()),
                ]
                .boxed()
            }
        }

        fn hostile(wide: bool) -> impl Strategy<Value = String> {
            prop::collection::vec(piece(wide), 0..24).prop_map(|p| p.concat())
        }

        /// The screen after `text` was escaped and written as a terminal gets it (through a
        /// pty, a newline arrives as CR LF); and what it was asked besides.
        fn shown(text: &str) -> (String, vt100::Parser<Asked>) {
            let escaped = escape(text).into_owned();
            let rows = escaped.matches('\n').count() + 2;
            let cols = escaped
                .lines()
                .map(|l| l.chars().count() * 2)
                .max()
                .unwrap_or(0)
                + 16;
            let mut vt = vt100::Parser::new_with_callbacks(
                std::num::NonZeroU16::new(u16::try_from(rows).unwrap()).unwrap(),
                std::num::NonZeroU16::new(u16::try_from(cols).unwrap()).unwrap(),
                0,
                Asked::default(),
            );
            vt.process(escaped.replace('\n', "\r\n").as_bytes());
            (escaped, vt)
        }

        /// Nothing happened but printing.
        fn only_printed(escaped: &str, vt: &vt100::Parser<Asked>) -> Result<(), TestCaseError> {
            prop_assert!(
                !escaped
                    .chars()
                    .any(|c| c.is_control() && c != '\n' && c != '\t'),
                "a control character is left: {escaped:?}"
            );
            prop_assert_eq!(&vt.callbacks().0, &Vec::<String>::new());
            let screen = vt.screen();
            prop_assert!(!screen.alternate_screen() && !screen.hide_cursor());
            prop_assert!(!screen.application_cursor() && !screen.bracketed_paste());
            let (rows, cols) = (screen.size().0.get(), screen.size().1.get());
            for row in 0..rows {
                for col in 0..cols {
                    let cell = screen.cell(row, col).unwrap();
                    prop_assert!(
                        cell.fgcolor() == vt100::Color::Default
                            && cell.bgcolor() == vt100::Color::Default
                            && !cell.bold()
                            && !cell.dim()
                            && !cell.italic()
                            && !cell.underline()
                            && !cell.inverse(),
                        "styled cell at {row},{col}"
                    );
                }
            }
            // The cursor went down one row a newline, and never up.
            let newlines = escaped.matches('\n').count();
            prop_assert_eq!(usize::from(screen.cursor_position().0), newlines);
            Ok(())
        }

        /// `line` with its tabs as the spaces to the next tab stop.
        fn expand_tabs(line: &str) -> String {
            let mut out = String::new();
            for c in line.chars() {
                if c == '\t' {
                    let col = console::measure_text_width(&out);
                    out.push_str(&" ".repeat(8 - col % 8));
                } else {
                    out.push(c);
                }
            }
            out
        }

        proptest! {
            #[test]
            fn escaped_text_only_prints(text in hostile(true)) {
                let (escaped, vt) = shown(&text);
                only_printed(&escaped, &vt)?;
            }

            #[test]
            fn escaped_text_is_shown_as_written_row_by_row(text in hostile(false)) {
                let (escaped, vt) = shown(&text);
                only_printed(&escaped, &vt)?;
                let cols = vt.screen().size().1.get();
                let rows: Vec<String> = vt.screen().rows(0, cols).collect();
                for (i, line) in escaped.split('\n').enumerate() {
                    let expected = expand_tabs(line);
                    prop_assert_eq!(rows[i].trim_end(), expected.trim_end(), "row {}", i);
                }
                let last = escaped.rsplit('\n').next().unwrap_or_default();
                prop_assert_eq!(
                    usize::from(vt.screen().cursor_position().1),
                    console::measure_text_width(&expand_tabs(last))
                );
            }

            #[test]
            fn arbitrary_bytes_only_print(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
                let text = String::from_utf8_lossy(&bytes);
                let (escaped, vt) = shown(&text);
                only_printed(&escaped, &vt)?;
            }
        }
    }
}
