//! The one place runbook writes its own messages to the person's terminal: warnings and errors,
//! one line each, on stderr. (The run's view is drawn by `render`; results go to stdout.)

use std::fmt::Display;
use std::io::Write as _;

/// `warning: …` on stderr.
pub(crate) fn warn(message: impl Display) {
    line(format_args!("warning: {message}"));
}

/// A note for the person, on stderr, as it is.
pub(crate) fn note(message: impl Display) {
    line(format_args!("{message}"));
}

/// `error: …` on stderr, the label in red when `color`.
pub(crate) fn error(message: impl Display, color: bool) {
    let label = console::style("error:").red().bold().force_styling(color);
    line(format_args!("{label} {message}"));
}

/// Writes one whole line; a closed or broken stderr is not worth failing over.
fn line(text: std::fmt::Arguments<'_>) {
    let mut err = std::io::stderr().lock();
    super::live::erase_for_message(&mut err);
    let _ = err.write_fmt(text).and_then(|()| err.write_all(b"\n"));
}
