//! Markdown for people (the plan): rendered by termimad to fit the terminal, or plain.

use termimad::MadSkin;

use crate::foreign::Foreign;
use crate::term::out::own_sgr;

/// Narrowest and widest text the plan is wrapped to.
const MIN_WIDTH: usize = 40;
const MAX_WIDTH: usize = 100;

/// `markdown` laid out for a terminal `width` columns wide with styles (bold headings, bullets,
/// shaded code) when `color`; otherwise the markdown itself, which reads well as plain text and
/// keeps its headings' `#` marks. Control characters in it are escaped before it is laid out,
/// and only termimad's own colours are made colours.
pub(crate) fn render(markdown: Foreign<'_>, color: bool, width: usize) -> String {
    let markdown = markdown.term();
    if !color {
        return markdown.trim_end().to_owned();
    }
    let mut skin = MadSkin::default();
    for header in &mut skin.headers {
        header.align = termimad::Alignment::Left;
    }
    let width = width.clamp(MIN_WIDTH, MAX_WIDTH);
    let text = own_sgr(&skin.text(&markdown, Some(width)).to_string());
    // termimad pads lines to the width; trailing blanks only get in the way of copy and paste.
    text.lines()
        .map(str::trim_end)
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PLAN: &str = "# Plan\n\n## Files\n\n- `src/lib.rs`: add a **retry** around the flaky call\n- `tests/it.rs`: a test for it\n\n## Testing\n\n```sh\ncargo test retry\n```\n\n## Risks\n\n1. The retry hides a real failure.\n2. Slower tests.\n";

    #[test]
    fn a_plan_renders_plain() {
        insta::assert_snapshot!(render(Foreign::new(PLAN), false, 60));
    }

    #[test]
    fn a_plan_renders_coloured() {
        insta::assert_snapshot!(crate::term::out::clean(&render(
            Foreign::new(PLAN),
            true,
            60
        )));
    }

    #[test]
    fn long_lines_wrap_to_the_terminal() {
        let long = "word ".repeat(40);
        let out = console::strip_ansi_codes(&render(Foreign::new(&long), true, 50)).into_owned();
        assert!(out.lines().count() > 1, "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= 50), "{out}");
    }
}
