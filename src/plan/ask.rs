//! The question at the terminal after a plan: execute, revise (with feedback) or abort. Keys are
//! read raw, so Ctrl-C is a key here (it means abort), not a signal.

use std::io;

use console::Key;

use crate::term::out::{self, Control, Keys, say};

/// What the person decided.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Answer {
    Execute,
    Revise(String),
    Abort,
}

/// Asks on the terminal (blocking). `revisions_left` is how many more revisions may be asked
/// for; at zero only execute and abort are offered.
pub(crate) fn ask(term: &Keys, revisions_left: u32) -> io::Result<Answer> {
    let choices = if revisions_left > 0 {
        "[e]xecute  [r]evise  [a]bort"
    } else {
        "[e]xecute  [a]bort (no revisions left)"
    };
    say(&format!("{choices}: "), false)?;
    loop {
        match term.read_key_raw()? {
            Key::Char('e' | 'E') => {
                say("execute\n", false)?;
                return Ok(Answer::Execute);
            }
            Key::Char('a' | 'A' | 'q' | 'Q') | Key::Escape | Key::CtrlC => {
                say("abort\n", false)?;
                return Ok(Answer::Abort);
            }
            Key::Char('r' | 'R') if revisions_left > 0 => {
                say("revise\n", false)?;
                return Ok(match feedback(term)? {
                    Some(text) => Answer::Revise(text),
                    None => Answer::Abort,
                });
            }
            _ => {}
        }
    }
}

/// Reads feedback until an empty line; `None` for Ctrl-C.
fn feedback(term: &Keys) -> io::Result<Option<String>> {
    say(
        "What should change? End with an empty line (Ctrl-C aborts).\n> ",
        false,
    )?;
    let mut text = String::new();
    let mut line = String::new();
    loop {
        let mut screen = out::stderr();
        match term.read_key_raw()? {
            Key::CtrlC | Key::Escape => {
                say("\n", false)?;
                return Ok(None);
            }
            Key::Enter if line.trim().is_empty() && !text.trim().is_empty() => {
                say("\n", false)?;
                return Ok(Some(text.trim_end().to_owned()));
            }
            Key::Enter => {
                text.push_str(&line);
                text.push('\n');
                line.clear();
                screen.control(Control::Return);
                screen.text("\n> ");
            }
            Key::Backspace if line.pop().is_some() => screen.control(Control::Backspace),
            Key::Char(c) if !c.is_control() => {
                line.push(c);
                screen.text(c.encode_utf8(&mut [0; 4]));
            }
            _ => {}
        }
        screen.flush()?;
    }
}

/// The terminal's settings before a question, put back however the question ended (a signal
/// can end it while the terminal is in raw mode).
pub(crate) struct TermState(Option<libc::termios>);

impl TermState {
    pub(crate) fn save() -> Self {
        let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: tcgetattr fills `t` when it returns 0; on failure `t` is not read.
        let ok = unsafe { libc::tcgetattr(libc::STDIN_FILENO, t.as_mut_ptr()) } == 0;
        // SAFETY: initialised by the successful tcgetattr above.
        Self(ok.then(|| unsafe { t.assume_init() }))
    }

    pub(crate) fn restore(&self) {
        if let Some(t) = &self.0 {
            // SAFETY: a termios read from the same descriptor.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, t) };
        }
    }
}
