//! The agent's words: its text (a few lines, each cut to the window, all of them whole with
//! `-v`), its reasoning (with `-v`), and the text streaming in, kept for the status line until
//! the whole text arrives.

use super::Lines;
use crate::event::EventKind;
use crate::format::plural;

/// How many lines of the agent's text are shown without `-v`.
const TEXT_LINES: usize = 3;

/// Streamed text kept beyond this many bytes is cut back to its last KiB or so.
const STREAM_KEPT: usize = 4096;

/// The lines of a text event; streamed pieces show only on the status line.
pub(super) fn show(l: &mut Lines<'_>, kind: &EventKind) {
    match kind {
        EventKind::Text { text } => text_lines(l, text),
        EventKind::Reasoning { text } if l.verbose => {
            for line in text.lines().filter(|line| !line.trim().is_empty()) {
                l.info(l.s.dim.apply_to(format!("┆ {line}")));
            }
        }
        _ => {}
    }
}

/// `│ <line>` for the first few non-empty lines, then how many more there are.
fn text_lines(l: &mut Lines<'_>, text: &str) {
    let limit = if l.verbose { usize::MAX } else { TEXT_LINES };
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    for line in lines.iter().take(limit) {
        let line = format!("{} {line}", l.s.dim.apply_to("│"));
        // A preview may be cut to the window; with -v, all of the text is there to be read.
        if l.verbose {
            l.info(line);
        } else {
            l.preview(line);
        }
    }
    if lines.len() > limit {
        let more = plural((lines.len() - limit) as u64, "more line");
        l.info(l.s.dim.apply_to(format!("│ … {more} (-v shows all)")));
    }
}

/// Whether [`text_lines`] shows all of `text`: no line left for `-v`, none cut to the `width`
/// columns a line has after its time.
pub(super) fn shown_whole(text: &str, verbose: bool, width: usize) -> bool {
    let lines: Vec<&str> = text
        .lines()
        .filter(|line| !line.trim().is_empty())
        .collect();
    verbose
        || (lines.len() <= TEXT_LINES
            && lines
                .iter()
                .all(|line| console::measure_text_width(line) + 2 <= width))
}

/// Adds a streamed piece to `streaming`, dropping what the status line will never show.
pub(super) fn stream(streaming: &mut String, piece: &str) {
    streaming.push_str(piece);
    // Only the tail is ever shown.
    if streaming.len() > STREAM_KEPT {
        let mut cut = streaming.len() - 1024;
        while !streaming.is_char_boundary(cut) {
            cut += 1;
        }
        streaming.drain(..cut);
    }
}
