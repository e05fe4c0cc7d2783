//! Terminal decisions made once at startup: colour on or off, live status line or plain lines,
//! and how wide the view is laid out.

pub(crate) mod layout;
pub(crate) mod live;
mod marker;
pub(crate) mod out;
pub(crate) mod print;
pub(crate) mod style;
pub(crate) mod wrap;

use std::sync::OnceLock;

use clap::ValueEnum;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub(crate) enum ColorChoice {
    /// Colour when stderr is a terminal that supports it.
    #[default]
    Auto,
    Always,
    Never,
}

/// How the human view is drawn on stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Display {
    /// A live status line with event lines printed above it.
    Live,
    /// Plain timestamped lines, no control codes.
    Lines,
    /// Plain lines for what needs attention only (failures, denials, the summary).
    Quiet,
    /// Nothing but runbook's own errors (with `--json`, stdout carries everything).
    Silent,
}

/// The facts the decisions depend on, read from the environment once.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TermEnv {
    pub stderr_is_terminal: bool,
    pub stdout_is_terminal: bool,
    pub is_ci: bool,
    /// `TERM` is unset, empty or `dumb`: nothing is known of what the terminal can do, so no
    /// colour and no control codes (a status line redrawn in place needs them).
    pub term_plain: bool,
    pub no_color: bool,
    pub force_color: bool,
}

impl TermEnv {
    pub(crate) fn detect() -> Self {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let force = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
        let (stderr_is_terminal, stdout_is_terminal) = out::are_terminals();
        Self {
            stderr_is_terminal,
            stdout_is_terminal,
            is_ci: set("CI"),
            term_plain: std::env::var("TERM").map_or(true, |t| t.is_empty() || t == "dumb"),
            no_color: set("NO_COLOR"),
            force_color: force("CLICOLOR_FORCE") || force("FORCE_COLOR"),
        }
    }

    /// `--color` first, then `NO_COLOR`, then `CLICOLOR_FORCE`/`FORCE_COLOR`, then whether stderr
    /// is a capable terminal.
    pub(crate) fn color(&self, choice: ColorChoice) -> bool {
        match choice {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto if self.no_color => false,
            ColorChoice::Auto if self.force_color => true,
            ColorChoice::Auto => self.stderr_is_terminal && !self.term_plain,
        }
    }

    /// The same decision for output on stdout (`status`, `list`).
    pub(crate) fn color_stdout(&self, choice: ColorChoice) -> bool {
        TermEnv {
            stderr_is_terminal: self.stdout_is_terminal,
            ..*self
        }
        .color(choice)
    }

    pub(crate) fn display(&self, json: bool, quiet: bool) -> Display {
        if json {
            Display::Silent
        } else if quiet {
            Display::Quiet
        } else if !self.stderr_is_terminal || self.is_ci || self.term_plain {
            Display::Lines
        } else {
            Display::Live
        }
    }
}

/// At most `width` terminal columns, ending in `…` when cut; colour codes are kept and not
/// counted.
pub(crate) fn fit(text: &str, width: usize) -> std::borrow::Cow<'_, str> {
    console::truncate_str(text, width, "…")
}

/// `--width`, when it was given.
static WIDTH_FLAG: OnceLock<u16> = OnceLock::new();

/// Lays every view out for `columns` columns, whatever the terminal says (`--width`).
pub(crate) fn set_width(columns: u16) {
    let _ = WIDTH_FLAG.set(columns);
}

/// Views narrower than this are laid out as if they were this wide.
const MIN_WIDTH: usize = 20;

/// The columns the view is laid out for: `--width`, then `COLUMNS`, then the width of the
/// terminal on stderr; `None` when stderr is not a terminal and neither was given (lines are
/// then never broken). Asked again at every redraw, so a window resized mid-run is followed.
pub(crate) fn width() -> Option<usize> {
    width_of(out::Stream::Stderr)
}

/// [`width`] for what is printed on stdout.
pub(crate) fn stdout_width() -> Option<usize> {
    width_of(out::Stream::Stdout)
}

/// How wide the tables people read (`list`, `stats`, `config`, `trust --show`) are when stdout
/// is not a terminal and neither `--width` nor `COLUMNS` says.
pub(crate) const TABLE_WIDTH: usize = 80;

/// The columns a table on stdout is fitted to: [`stdout_width`], else [`TABLE_WIDTH`]; `None`
/// with `--wide` (every column shown whole, however wide).
pub(crate) fn table_width(wide: bool) -> Option<usize> {
    (!wide).then(|| stdout_width().unwrap_or(TABLE_WIDTH))
}

fn width_of(stream: out::Stream) -> Option<usize> {
    let given = WIDTH_FLAG.get().map(|&w| usize::from(w)).or_else(|| {
        std::env::var("COLUMNS")
            .ok()
            .and_then(|c| c.trim().parse::<usize>().ok())
            .filter(|&c| c > 0)
    });
    given
        .or_else(|| out::columns(stream))
        .map(|w| w.max(MIN_WIDTH))
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTY: TermEnv = TermEnv {
        stderr_is_terminal: true,
        stdout_is_terminal: true,
        is_ci: false,
        term_plain: false,
        no_color: false,
        force_color: false,
    };

    #[test]
    fn colour_follows_flag_then_no_color_then_force_then_terminal() {
        assert!(TTY.color(ColorChoice::Auto));
        assert!(
            !TermEnv {
                no_color: true,
                ..TTY
            }
            .color(ColorChoice::Auto)
        );
        assert!(
            TermEnv {
                no_color: true,
                ..TTY
            }
            .color(ColorChoice::Always)
        );
        assert!(
            !TermEnv {
                force_color: true,
                ..TTY
            }
            .color(ColorChoice::Never)
        );
        let piped = TermEnv {
            stderr_is_terminal: false,
            ..TTY
        };
        assert!(!piped.color(ColorChoice::Auto));
        assert!(
            TermEnv {
                force_color: true,
                ..piped
            }
            .color(ColorChoice::Auto)
        );
        assert!(
            !TermEnv {
                term_plain: true,
                ..TTY
            }
            .color(ColorChoice::Auto)
        );
    }

    #[test]
    fn the_live_view_needs_a_real_terminal_outside_ci() {
        assert_eq!(TTY.display(false, false), Display::Live);
        assert_eq!(
            TermEnv { is_ci: true, ..TTY }.display(false, false),
            Display::Lines
        );
        assert_eq!(
            TermEnv {
                term_plain: true,
                ..TTY
            }
            .display(false, false),
            Display::Lines
        );
        assert_eq!(
            TermEnv {
                stderr_is_terminal: false,
                ..TTY
            }
            .display(false, false),
            Display::Lines
        );
        assert_eq!(TTY.display(false, true), Display::Quiet);
        assert_eq!(TTY.display(true, false), Display::Silent);
    }
}
