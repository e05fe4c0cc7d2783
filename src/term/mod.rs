//! Terminal decisions made once at startup: colour on or off, live status line or plain lines.

pub(crate) mod print;

use std::io::IsTerminal;

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
    pub term_dumb: bool,
    pub no_color: bool,
    pub force_color: bool,
}

impl TermEnv {
    pub(crate) fn detect() -> Self {
        let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
        let force = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
        Self {
            stderr_is_terminal: std::io::stderr().is_terminal(),
            stdout_is_terminal: std::io::stdout().is_terminal(),
            is_ci: set("CI"),
            term_dumb: std::env::var("TERM").is_ok_and(|t| t == "dumb"),
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
            ColorChoice::Auto => self.stderr_is_terminal && !self.term_dumb,
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
        } else if !self.stderr_is_terminal || self.is_ci || self.term_dumb {
            Display::Lines
        } else {
            Display::Live
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TTY: TermEnv = TermEnv {
        stderr_is_terminal: true,
        stdout_is_terminal: true,
        is_ci: false,
        term_dumb: false,
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
                term_dumb: true,
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
                term_dumb: true,
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
