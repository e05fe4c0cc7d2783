//! The one place runbook writes its own messages to the person's terminal: warnings and errors,
//! one line each, on stderr. (The run's view is drawn by `render`; results go to stdout.) A
//! message may quote foreign text (a path, an agent's words): it is written through the
//! terminal writer, which shows any control character in it escaped.

use std::fmt::Display;

/// `warning: …` on stderr.
pub(crate) fn warn(message: impl Display) {
    line(&format!("warning: {message}"));
}

/// A note for the person, on stderr, as it is.
pub(crate) fn note(message: impl Display) {
    line(&message.to_string());
}

/// `error: …` on stderr, the label in red when `color`.
pub(crate) fn error(message: impl Display, color: bool) {
    let label = super::style::Styles::new(color)
        .error
        .apply_to("error:")
        .to_string();
    line(&format!("{label} {message}"));
}

/// Writes one whole line; a closed or broken stderr is not worth failing over.
fn line(text: &str) {
    let mut err = super::out::stderr();
    let _ = super::live::message(&mut err, text);
}
