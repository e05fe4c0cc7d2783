//! Consumers that show a run to people (`human`) and to programs (`json`).

mod chart;
pub(crate) mod dashboard;
pub(crate) mod document;
pub(crate) mod human;
pub(crate) mod json;
pub(crate) mod list;
mod markdown;
pub(crate) mod overview;
pub(crate) mod pr;
pub(crate) mod report;
pub(crate) mod settings;
pub(crate) mod table;
pub(crate) mod tone;

pub(crate) use crate::term::style::Styles;

use crate::consumer::Consumer;
use crate::term::{ColorChoice, TermEnv};

/// How much the human view shows: `quiet` only what needs attention, `verbose` everything.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Verbosity {
    pub(crate) quiet: bool,
    pub(crate) verbose: bool,
}

/// The views of a run: for people on stderr, and with `--json` for programs on stdout.
/// `person_answers`: a person at this terminal answers the agent's permission requests.
pub(crate) fn views(
    color: ColorChoice,
    json: bool,
    verbosity: Verbosity,
    person_answers: bool,
) -> Vec<Box<dyn Consumer>> {
    let mut views: Vec<Box<dyn Consumer>> = Vec::new();
    if json {
        // stdout carries everything; the human view would show nothing.
        views.push(Box::new(json::JsonLines::stdout()));
    } else {
        let term = TermEnv::detect();
        let styles = Styles::new(term.color(color));
        let display = term.display(false, verbosity.quiet);
        views.push(Box::new(
            human::Human::new(
                display,
                styles,
                verbosity.verbose,
                crate::term::out::stderr(),
                crate::term::width,
            )
            .person_answers(person_answers),
        ));
    }
    views
}
