//! The few styles the human view uses; plain by default, coloured on request.

use console::Style;

#[derive(Debug, Clone, Default)]
pub(crate) struct Styles {
    pub ok: Style,
    pub error: Style,
    pub warn: Style,
    pub dim: Style,
    pub bold: Style,
    pub accent: Style,
    /// Whether these styles colour anything (for what is styled elsewhere, like markdown).
    pub color: bool,
}

impl Styles {
    /// Coloured or plain, as decided for the stream written to.
    pub(crate) fn new(color: bool) -> Self {
        if color {
            Self::colored()
        } else {
            Self::plain()
        }
    }

    /// Styles that always emit colour codes (the caller has already decided colour is wanted).
    pub(crate) fn colored() -> Self {
        Self {
            ok: Style::new().green().force_styling(true),
            error: Style::new().red().bold().force_styling(true),
            warn: Style::new().yellow().force_styling(true),
            dim: Style::new().dim().force_styling(true),
            bold: Style::new().bold().force_styling(true),
            accent: Style::new().cyan().force_styling(true),
            color: true,
        }
    }

    /// Styles that never emit colour codes, whatever the terminal.
    pub(crate) fn plain() -> Self {
        let plain = Style::new().force_styling(false);
        Self {
            ok: plain.clone(),
            error: plain.clone(),
            warn: plain.clone(),
            dim: plain.clone(),
            bold: plain.clone(),
            accent: plain,
            color: false,
        }
    }
}
