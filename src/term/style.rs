//! The few styles the human view uses; plain by default, coloured on request.
//!
//! A coloured style writes runbook's colour markers, not colour codes: only the terminal writer
//! (`term::out`) makes them colours, so that colour in text from outside never is one.

use std::fmt;

use super::marker::{own_sgr, sgr};

/// One style: what opens it and what closes it, as markers; both empty when plain.
#[derive(Debug, Clone, Default)]
pub(crate) struct Style {
    open: String,
    close: String,
}

impl Style {
    /// The codes `style` writes around a text, as markers.
    #[allow(
        clippy::disallowed_types,
        reason = "console's styles are read here only, and turned into markers"
    )]
    fn of(style: impl FnOnce(console::Style) -> console::Style) -> Self {
        let styled = style(console::Style::new())
            .force_styling(true)
            .apply_to('\0')
            .to_string();
        let (open, close) = styled.split_once('\0').unwrap_or_default();
        Self {
            open: own_sgr(open),
            close: own_sgr(close),
        }
    }

    /// `val` in this style.
    pub(crate) fn apply_to<D>(&self, val: D) -> Styled<'_, D> {
        Styled { style: self, val }
    }
}

/// A value shown in a [`Style`]; width and alignment apply to the value, as with `console`.
pub(crate) struct Styled<'a, D> {
    style: &'a Style,
    val: D,
}

impl<D: fmt::Display> fmt::Display for Styled<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.style.open)?;
        self.val.fmt(f)?;
        f.write_str(&self.style.close)
    }
}

/// What ends every style: a row that breaks inside a colour closes it with this.
pub(crate) fn reset() -> String {
    sgr("0")
}

/// Whether `code` (an ANSI code or a marker) ends every style.
pub(crate) fn is_reset(code: &str) -> bool {
    code == "\x1b[0m" || code == "\x1b[m" || code == reset()
}

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
            ok: Style::of(|s| s.green()),
            error: Style::of(|s| s.red().bold()),
            warn: Style::of(|s| s.yellow()),
            dim: Style::of(|s| s.dim()),
            bold: Style::of(|s| s.bold()),
            accent: Style::of(|s| s.cyan()),
            color: true,
        }
    }

    /// Styles that never emit colour codes, whatever the terminal.
    pub(crate) fn plain() -> Self {
        let plain = Style::default();
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
