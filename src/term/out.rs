//! The one writer of the terminal: every byte runbook shows a person, on stderr or as a human
//! result on stdout, goes through [`Terminal`], which masks secrets and makes every control
//! character visible, whoever wrote the text.
//!
//! runbook's own colours survive because they are not escape sequences until they get here:
//! its styles (`render::Styles`) write a marker, the SGR introducer followed by a number drawn
//! at random for this process ([`sgr`]), and only this writer turns a marker into the colour
//! code. Text from outside cannot know the number, so an escape sequence in it, a colour code
//! included, is shown as text (`\e[31m`) and does nothing. The live status line's own cursor
//! moves are [`Control`]s, written by no one else.
//!
//! This is the only module allowed to take hold of stdout and stderr (`clippy.toml`).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    reason = "the one writer of the terminal"
)]

use std::borrow::Cow;
use std::io::{self, IsTerminal, Write};

use super::marker::nonce;
pub(crate) use super::marker::own_sgr;
use crate::foreign::term::escape_with;

/// `text` as it may reach the terminal: secrets masked, runbook's markers made colours, every
/// other control character shown escaped. Borrowed when there was nothing to do.
pub(crate) fn clean(text: &str) -> Cow<'_, str> {
    cleaned(text, |len| (len, "\x1b[", 2 + nonce().len() + 1))
}

/// `text` masked and escaped, each of runbook's colour markers (of `len` bytes) kept as `keep`
/// says: what of it is replaced by what (see [`escape_with`]).
fn cleaned(
    text: &str,
    keep: impl Fn(usize) -> (usize, &'static str, usize) + Copy,
) -> Cow<'_, str> {
    let keep = |rest: &str| marker(rest).map(keep);
    match crate::redact::current().str(text) {
        Cow::Borrowed(text) => escape_with(text, keep),
        Cow::Owned(text) => Cow::Owned(escape_with(&text, keep).into_owned()),
    }
}

/// The length of runbook's own colour marker at the start of `rest`, if one is there.
fn marker(rest: &str) -> Option<usize> {
    let after = rest
        .strip_prefix("\x1b[")?
        .strip_prefix(nonce())?
        .strip_prefix(';')?;
    let end = after.find(|c: char| !(c.is_ascii_digit() || c == ';'))?;
    (after.as_bytes()[end] == b'm').then_some(2 + nonce().len() + 1 + end + 1)
}

/// runbook's own cursor moves, for the live status line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Control {
    /// Back to the start of the row.
    Return,
    /// Back to the start of the row, and erase from there to the end of the screen.
    Erase,
    /// Erase the character before the cursor (a key the person took back).
    Backspace,
    /// Up this many rows, to redraw a view of several rows (`runbook batch`).
    Up(u16),
}

impl Control {
    fn bytes(self) -> &'static [u8] {
        match self {
            Control::Return => b"\r",
            Control::Erase => b"\r\x1b[J",
            Control::Backspace => b"\x08 \x08",
            Control::Up(_) => b"",
        }
    }
}

/// `text` as it will look: secrets masked, every control character but runbook's markers shown
/// escaped; what is laid out before [`clean`] makes the markers colours.
fn visible(text: &str) -> Cow<'_, str> {
    cleaned(text, |len| (len, "", 0))
}

/// The terminal (or whatever stands for it): text is collected, laid out for the width of the
/// terminal it is shown on (`term::layout`), cleaned, and written at [`Terminal::flush`] in one
/// call. It has no way to write bytes as they are.
pub(crate) struct Terminal<W: Write = Box<dyn Write + Send>> {
    out: W,
    buf: Vec<u8>,
    /// The stream whose width lines are laid out for; `None`: lines are written whole.
    stream: Option<Stream>,
}

/// Human output on stderr.
pub(crate) fn stderr() -> Terminal {
    Terminal::to(Box::new(io::stderr()) as Box<dyn Write + Send>).laid_out(Stream::Stderr)
}

/// Human results on stdout.
pub(crate) fn stdout() -> Terminal {
    Terminal::to(Box::new(io::stdout()) as Box<dyn Write + Send>).laid_out(Stream::Stdout)
}

/// Prints a human result on stdout, cleaned and laid out (a table, a status, a note).
pub(crate) fn print(text: &str) -> io::Result<()> {
    let mut out = stdout();
    out.text(text);
    out.flush()
}

/// Prints a document on stdout, cleaned but never laid out (a script, a manifest, Markdown for a
/// pull request, a recording's lines): its lines are what a program or a page reads.
pub(crate) fn print_document(text: &str) -> io::Result<()> {
    let mut out = Terminal::to(Box::new(io::stdout()) as Box<dyn Write + Send>);
    out.text(text);
    out.flush()
}

/// Prints `value` as JSON on stdout, then a newline: pretty, or on one line.
pub(crate) fn print_json<T: serde::Serialize + ?Sized>(value: &T, pretty: bool) -> io::Result<()> {
    let mut out = json_stdout();
    if pretty {
        serde_json::to_writer_pretty(&mut out, value)?;
    } else {
        serde_json::to_writer(&mut out, value)?;
    }
    out.write_all(b"\n")?;
    out.flush()
}

/// JSON results on stdout (`--json`): written as they come, with DEL and the C1 controls, which
/// JSON may carry raw inside its strings, written as `\u` escapes.
pub(crate) fn json_stdout() -> Json<io::Stdout> {
    Json {
        out: io::stdout(),
        held: None,
    }
}

/// Stdout for JSON lines the encoder wrote (`--json`'s events and receipt), which have DEL and
/// the C1 controls escaped already.
pub(crate) type Lines = io::Stdout;

/// See [`Lines`].
pub(crate) fn json_lines_stdout() -> Lines {
    io::stdout()
}

/// Whether whoever read stdout has gone (a closed pipe), though nothing is being written.
pub(crate) fn stdout_reader_gone() -> bool {
    crate::linux::reader_gone(&io::stdout())
}

/// See [`json_stdout`].
pub(crate) struct Json<W: Write> {
    out: W,
    /// A 0xC2 that ended the last write: whether it begins a C1 control depends on the next byte.
    held: Option<u8>,
}

impl<W: Write> Write for Json<W> {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        let joined;
        let all: &[u8] = match self.held.take() {
            Some(held) => {
                joined = [&[held][..], bytes].concat();
                &joined
            }
            None => bytes,
        };
        let all = match all {
            [rest @ .., 0xc2] => {
                self.held = Some(0xc2);
                rest
            }
            all => all,
        };
        self.out.write_all(&crate::encode::escape_c1(all))?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        if let Some(held) = self.held.take() {
            self.out.write_all(&[held])?;
        }
        self.out.flush()
    }
}

/// The keys the person presses at the terminal on stderr; it writes nothing.
pub(crate) struct Keys(console::Term);

/// The person's keys (for a question asked on stderr).
pub(crate) fn keys() -> Keys {
    Keys(console::Term::stderr())
}

impl Keys {
    /// The next key, read raw (Ctrl-C is a key).
    pub(crate) fn read_key_raw(&self) -> io::Result<console::Key> {
        self.0.read_key_raw()
    }
}

/// Writes `text` on stderr at once, and ends the row when `end` (back to the first column,
/// then a newline: in raw mode a newline alone does not go back).
pub(crate) fn say(text: &str, end: bool) -> io::Result<()> {
    let mut term = stderr();
    term.text(text);
    if end {
        term.control(Control::Return);
        term.text("\n");
    }
    term.flush()
}

/// One of the two streams a person sees.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Stream {
    Stdout,
    Stderr,
}

/// How many columns the terminal on `stream` has, if it is one.
pub(crate) fn columns(stream: Stream) -> Option<usize> {
    let term = match stream {
        Stream::Stdout => console::Term::stdout(),
        Stream::Stderr => console::Term::stderr(),
    };
    term.size_checked().map(|(_, cols)| usize::from(cols))
}

/// Whether stderr and stdout are terminals.
pub(crate) fn are_terminals() -> (bool, bool) {
    (io::stderr().is_terminal(), io::stdout().is_terminal())
}

impl<W: Write> Terminal<W> {
    /// A terminal view of `out`: everything written to it through this is cleaned.
    pub(crate) fn to(out: W) -> Self {
        Self {
            out,
            buf: Vec::with_capacity(16 * 1024),
            stream: None,
        }
    }

    /// Lines written through this are laid out for the width of `stream` (asked at each write,
    /// so a resized window is followed): the terminal's, or `--width`/`COLUMNS`; whole when
    /// neither is known.
    pub(crate) fn laid_out(self, stream: Stream) -> Self {
        Self {
            stream: Some(stream),
            ..self
        }
    }

    /// Adds `text` (masked, laid out, runbook's markers made colours, other controls escaped).
    pub(crate) fn text(&mut self, text: &str) {
        let width = match self.stream {
            Some(Stream::Stderr) => super::width(),
            Some(Stream::Stdout) => super::stdout_width(),
            None => None,
        };
        if width.is_none() {
            self.buf.extend_from_slice(clean(text).as_bytes());
            return;
        }
        let shown = visible(text);
        let laid = super::layout::lay_out(&shown, width);
        self.buf.extend_from_slice(clean(&laid).as_bytes());
    }

    /// Adds `text` and a newline.
    pub(crate) fn line(&mut self, text: &str) {
        self.text(text);
        self.buf.push(b'\n');
    }

    /// Adds one of runbook's own cursor moves.
    pub(crate) fn control(&mut self, control: Control) {
        if let Control::Up(rows) = control {
            if rows > 0 {
                self.buf
                    .extend_from_slice(format!("\x1b[{rows}A").as_bytes());
            }
            return;
        }
        self.buf.extend_from_slice(control.bytes());
    }

    /// Writes out what was collected. What could not be written is dropped, not retried.
    pub(crate) fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return self.out.flush();
        }
        let result = self
            .out
            .write_all(&self.buf)
            .and_then(|()| self.out.flush());
        self.buf.clear();
        result
    }

    /// What it writes to.
    #[cfg(test)]
    pub(crate) fn get_ref(&self) -> &W {
        &self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::term::marker::sgr;

    #[test]
    fn runbook_colours_survive_and_foreign_ones_do_not() {
        let own = format!("{}ok{}", sgr("32"), sgr("0"));
        let text = format!("{own} \x1b[31mred\x1b[0m \x1b]0;title\x07");
        assert_eq!(
            clean(&text),
            "\x1b[32mok\x1b[0m \\e[31mred\\e[0m \\e]0;title\\a"
        );
        assert!(matches!(clean("plain"), Cow::Borrowed("plain")));
    }

    #[test]
    fn a_marker_with_a_wrong_number_is_shown_as_text() {
        let forged = "\x1b[1234;5678;9012;3456;7890;31mx";
        assert!(!clean(forged).contains('\x1b'));
        let half = format!("\x1b[{};31", nonce());
        assert!(!clean(&half).contains('\x1b'));
    }

    #[test]
    fn markers_have_no_width_and_own_rendering_is_marked() {
        let own = format!("{}ok{}", sgr("1;32"), sgr("0"));
        assert_eq!(console::measure_text_width(&own), 2);
        assert_eq!(own_sgr("\x1b[1;32mok\x1b[0m"), own);
        assert_eq!(clean(&own_sgr("\x1b[2Ja")), "\\e[2Ja");
    }

    #[test]
    fn controls_are_written_and_everything_waits_for_flush() {
        let mut t = Terminal::to(Vec::new());
        t.text("a\rb");
        t.control(Control::Erase);
        assert!(t.get_ref().is_empty());
        t.flush().unwrap();
        assert_eq!(t.get_ref(), b"a\\rb\r\x1b[J");
    }
}
