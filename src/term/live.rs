//! The live status line: one row under the view's lines, redrawn in place.
//!
//! After each draw the cursor waits at the start of the status row, so that whatever the
//! terminal does next cannot leave a stale copy behind: the `^C` a terminal echoes lands on
//! that row instead of wrapping past its end, a window made narrower rewraps the row below
//! the cursor, and one "erase to the end of the screen" from the start of the row removes it
//! all. The status is cut to the window's width; lines printed above it are never cut.

use std::io::{self, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use super::fit;
use super::out::{Control, Terminal};
use super::style::Style;

/// Whether a status line is on the screen, so that runbook's other messages on stderr can
/// erase it first (the next draw puts it back under them).
static DRAWN: AtomicBool = AtomicBool::new(false);

/// Held while the status line is drawn, and while a message is written in its place: the
/// view's heartbeat draws from a thread of its own, and a draw in the middle of a message would
/// leave the status row under it, or the message over the row.
static SCREEN: Mutex<()> = Mutex::new(());

fn screen() -> MutexGuard<'static, ()> {
    SCREEN.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Erases the status line if one is drawn, and writes `text` in its place, then flushes; for a
/// message on stderr. The next draw puts the status back under it.
pub(crate) fn message<W: Write>(out: &mut Terminal<W>, text: &str) -> io::Result<()> {
    let _screen = screen();
    if DRAWN.swap(false, Ordering::AcqRel) {
        out.control(Control::Erase);
    }
    out.line(text);
    out.flush()
}

/// Spinner frames, one a redraw tick.
const FRAMES: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Lines printed above a status line, on a terminal.
pub(crate) struct StatusLine<W: Write> {
    /// Where it all goes; holds the lines waiting to be written, each ending in a newline.
    out: Terminal<W>,
    /// Lines waiting to be written, each ending in a newline.
    lines: String,
    /// What the status line says, colour codes included, before it is cut to fit.
    status: String,
    /// The status row as it is on the screen, if it is.
    drawn: Option<String>,
    /// While paused nothing is drawn (someone else has the terminal).
    paused: bool,
    frame: usize,
    spinner: Style,
}

impl<W: Write> StatusLine<W> {
    pub(crate) fn new(out: Terminal<W>, spinner: Style) -> Self {
        Self {
            out,
            lines: String::with_capacity(16 * 1024),
            status: String::new(),
            drawn: None,
            paused: false,
            frame: 0,
            spinner,
        }
    }

    /// Adds a line to be printed above the status line at the next [`Self::draw`].
    pub(crate) fn line(&mut self, text: &str) {
        self.lines.push_str(text);
        self.lines.push('\n');
    }

    /// Sets what the status line says, from the next [`Self::draw`] on.
    pub(crate) fn set(&mut self, status: String) {
        self.status = status;
    }

    /// Moves the spinner on (about once a second: it shows the view is alive).
    pub(crate) fn spin(&mut self) {
        self.frame = (self.frame + 1) % FRAMES.len();
    }

    /// Writes the waiting lines and the status line, cut to `width` columns, in one write; does
    /// nothing when neither changed.
    pub(crate) fn draw(&mut self, width: usize) -> io::Result<()> {
        let row = if self.paused || self.status.is_empty() {
            None
        } else {
            let spinner = self.spinner.apply_to(FRAMES[self.frame]);
            let row = format!("{spinner} {}", self.status);
            // One column short of the edge: a row that fills the window could wrap.
            Some(fit(&row, width.saturating_sub(1).max(1)).into_owned())
        };
        if self.lines.is_empty() && row == self.drawn {
            return Ok(());
        }
        let _screen = screen();
        if self.drawn.is_some() {
            self.out.control(Control::Erase);
        }
        self.out.text(&self.lines);
        self.lines.clear();
        if let Some(row) = &row {
            self.out.text(row);
            self.out.control(Control::Return);
        }
        self.drawn = row;
        DRAWN.store(self.drawn.is_some(), Ordering::Release);
        self.out.flush()
    }

    /// Writes the waiting lines and takes the status line off the screen (the view is over, or
    /// someone else needs the terminal until [`Self::resume`]).
    pub(crate) fn pause(&mut self, width: usize) -> io::Result<()> {
        self.paused = true;
        self.draw(width)
    }

    /// Draws the status line again after [`Self::pause`].
    pub(crate) fn resume(&mut self, width: usize) -> io::Result<()> {
        self.paused = false;
        self.draw(width)
    }
}

impl<W: Write> Drop for StatusLine<W> {
    /// A view dropped without being closed (an error on the way out) leaves no status behind.
    fn drop(&mut self) {
        if self.drawn.is_some() {
            let _ = self.pause(usize::MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain() -> Style {
        Style::default()
    }

    fn written(s: &StatusLine<Vec<u8>>) -> String {
        String::from_utf8(s.out.get_ref().clone()).unwrap()
    }

    #[test]
    fn lines_go_above_a_status_row_that_keeps_the_cursor_at_its_start() {
        let mut s = StatusLine::new(Terminal::to(Vec::new()), plain());
        s.set("00:01 · step 1".to_owned());
        s.draw(80).unwrap();
        assert_eq!(written(&s), "⠋ 00:01 · step 1\r");
        s.line("[00:01.2] ✓ read a.rs");
        s.draw(80).unwrap();
        assert_eq!(
            written(&s),
            "⠋ 00:01 · step 1\r\r\x1b[J[00:01.2] ✓ read a.rs\n⠋ 00:01 · step 1\r"
        );
    }

    #[test]
    fn nothing_is_written_when_nothing_changed_and_the_status_is_cut_to_the_width() {
        let mut s = StatusLine::new(Terminal::to(Vec::new()), plain());
        s.set("x".repeat(100));
        s.draw(40).unwrap();
        let once = written(&s);
        assert_eq!(console::measure_text_width(once.trim_end_matches('\r')), 39);
        s.draw(40).unwrap();
        assert_eq!(written(&s), once);
    }

    #[test]
    fn pausing_erases_the_status_and_dropping_leaves_none_behind() {
        let mut s = StatusLine::new(Terminal::to(Vec::new()), plain());
        s.set("status".to_owned());
        s.draw(80).unwrap();
        s.line("the end");
        s.pause(80).unwrap();
        assert!(
            written(&s).ends_with("\r\x1b[Jthe end\n"),
            "{:?}",
            written(&s)
        );
        s.resume(80).unwrap();
        assert!(written(&s).ends_with("the end\n⠋ status\r"));

        let mut out = Vec::new();
        {
            let mut s = StatusLine::new(Terminal::to(&mut out), plain());
            s.set("status".to_owned());
            s.draw(80).unwrap();
        }
        assert_eq!(String::from_utf8(out).unwrap(), "⠋ status\r\r\x1b[J");
    }
}
