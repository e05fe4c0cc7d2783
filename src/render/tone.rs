//! What an outcome means to the person reading it, one answer for every view: the terminal
//! colours an outcome by it (`report::outcome`), the stats page paints its bars and badges by it.

use crate::event::Outcome;

/// How good an outcome is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    /// Finished: green.
    Good,
    /// Still going: cyan.
    Going,
    /// Stopped short, by a person or a cut stream: yellow.
    Warn,
    /// Failed: red.
    Bad,
}

impl Tone {
    pub(crate) fn of(o: Outcome) -> Self {
        match o {
            Outcome::Completed => Tone::Good,
            Outcome::Running => Tone::Going,
            o if o.failed() => Tone::Bad,
            _ => Tone::Warn,
        }
    }

    /// Its name as a CSS class of the stats page.
    pub(crate) fn class(self) -> &'static str {
        match self {
            Tone::Good => "tone-good",
            Tone::Going => "tone-going",
            Tone::Warn => "tone-warn",
            Tone::Bad => "tone-bad",
        }
    }
}
