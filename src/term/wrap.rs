//! Breaking a line that must be read whole into rows that fit the terminal: between the
//! ` · `-separated facts of a line first, then between words, with colours carried over so
//! each row stands on its own. A word too wide for an indented row (a long path) gets a row of
//! its own from the first column, and is never split: wider than the window, the terminal
//! wraps it, so it can still be copied whole.

use console::AnsiCodeIterator;

/// A piece of a line: a run of spaces, or a word (with the colour codes inside it).
struct Piece<'a> {
    text: &'a str,
    space: bool,
    width: usize,
}

/// `text` as rows of at most `width` columns, the first of them starting after `start` columns
/// already taken (a prefix), the others with `indent` spaces (included in the rows). Text that
/// fits is returned as it is.
pub(crate) fn wrap(text: &str, width: usize, start: usize, indent: usize) -> Vec<String> {
    if start + console::measure_text_width(text) <= width {
        return vec![text.to_owned()];
    }
    let pieces = pieces(text);
    let mut rows = Rows::new(width, indent);
    rows.used = start;
    rows.start = start;
    // Facts separated by ` · ` are kept together when they fit a row of their own.
    for clause in clauses(&pieces) {
        let clause_width: usize = clause.iter().map(|p| p.width).sum();
        let lead = clause.iter().take_while(|p| p.space).count();
        let words = &clause[lead..];
        let words_width = clause_width - clause[..lead].iter().map(|p| p.width).sum::<usize>();
        if !rows.is_empty() && !rows.fits(clause_width) && words_width <= rows.room() {
            rows.new_row(words_width);
            rows.push_all(words);
        } else {
            for piece in clause {
                rows.push_word(piece);
            }
        }
    }
    rows.finish()
}

/// Splits a line into runs of spaces and words; colour codes belong to the word they are in
/// (or stand alone as a word of no width).
fn pieces(text: &str) -> Vec<Piece<'_>> {
    let mut out = Vec::new();
    for (part, ansi) in AnsiCodeIterator::new(text) {
        if ansi {
            out.push(Piece {
                text: part,
                space: false,
                width: 0,
            });
            continue;
        }
        let mut start = 0;
        let mut chars = part.char_indices().peekable();
        while let Some((_, c)) = chars.next() {
            let space = c == ' ';
            let next_differs = chars.peek().is_none_or(|&(_, n)| (n == ' ') != space);
            if next_differs {
                let end = chars.peek().map_or(part.len(), |&(j, _)| j);
                let piece = &part[start..end];
                out.push(Piece {
                    text: piece,
                    space,
                    width: console::measure_text_width(piece),
                });
                start = end;
            }
        }
    }
    out
}

/// The pieces grouped into clauses that each end after a `·` separator.
fn clauses<'p, 'a>(pieces: &'p [Piece<'a>]) -> Vec<&'p [Piece<'a>]> {
    let mut out = Vec::new();
    let mut start = 0;
    for (i, p) in pieces.iter().enumerate() {
        if !p.space && p.width > 0 && console::strip_ansi_codes(p.text) == "·" {
            out.push(&pieces[start..=i]);
            start = i + 1;
        }
    }
    if start < pieces.len() {
        out.push(&pieces[start..]);
    }
    out
}

/// Rows being filled, and the colour codes in effect, to close each row and reopen on the next.
struct Rows {
    width: usize,
    indent: usize,
    rows: Vec<String>,
    row: String,
    /// Columns used on the current row.
    used: usize,
    /// Columns the first row starts after.
    start: usize,
    /// Spaces seen since the last word, placed only if another word follows on the same row.
    pending_space: usize,
    /// The colour codes set since the last reset.
    active: String,
}

impl Rows {
    fn new(width: usize, indent: usize) -> Self {
        Self {
            width,
            indent,
            rows: Vec::new(),
            row: String::new(),
            used: 0,
            start: 0,
            pending_space: 0,
            active: String::new(),
        }
    }

    /// Whether the current row holds no words yet.
    fn is_empty(&self) -> bool {
        let bare = if self.rows.is_empty() {
            self.start
        } else {
            self.indent
        };
        self.used <= bare
    }

    /// Columns a new row has for words.
    fn room(&self) -> usize {
        self.width.saturating_sub(self.indent)
    }

    /// Whether `width` more columns fit on the current row.
    fn fits(&self, width: usize) -> bool {
        self.used + self.pending_space + width <= self.width
    }

    /// Starts a row for a word `width` columns wide: indented, unless the word is too wide
    /// for that.
    fn new_row(&mut self, width: usize) {
        if !self.active.is_empty() {
            self.row.push_str(&crate::term::style::reset());
        }
        self.rows.push(std::mem::take(&mut self.row));
        let indent = if self.indent + width <= self.width {
            self.indent
        } else {
            0
        };
        self.row.push_str(&" ".repeat(indent));
        self.row.push_str(&self.active);
        self.used = indent;
        self.pending_space = 0;
    }

    fn push_all(&mut self, pieces: &[Piece<'_>]) {
        for piece in pieces {
            self.push_word(piece);
        }
    }

    /// Places a piece: a space waits for the next word; a word goes on this row if it fits (or
    /// the row is empty), else on a new row.
    fn push_word(&mut self, piece: &Piece<'_>) {
        if piece.space {
            self.pending_space += piece.width;
            return;
        }
        if piece.width > 0 && !self.is_empty() && !self.fits(piece.width) {
            self.new_row(piece.width);
        }
        if piece.width > 0 {
            self.row.push_str(&" ".repeat(self.pending_space));
            self.used += self.pending_space;
            self.pending_space = 0;
        }
        self.row.push_str(piece.text);
        self.used += piece.width;
        if piece.width == 0 {
            self.track(piece.text);
        }
    }

    /// Keeps the colour codes in effect after `code`.
    fn track(&mut self, code: &str) {
        if crate::term::style::is_reset(code) {
            self.active.clear();
        } else if code.ends_with('m') {
            self.active.push_str(code);
        }
    }

    fn finish(mut self) -> Vec<String> {
        self.rows.push(self.row);
        self.rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(rows: &[String]) -> Vec<String> {
        rows.iter()
            .map(|r| console::strip_ansi_codes(r).into_owned())
            .collect()
    }

    #[test]
    fn a_line_that_fits_is_left_alone() {
        assert_eq!(
            wrap("  receipt: /a/b  x", 40, 10, 4),
            ["  receipt: /a/b  x"]
        );
    }

    #[test]
    fn facts_are_kept_together_and_rows_after_the_first_are_indented() {
        let line =
            "✓ completed in 7.5s · 7 steps · 7 tool calls (1 failed) · 18,902 tokens · $0.0123";
        let rows = wrap(line, 70, 10, 12);
        assert_eq!(
            rows,
            [
                "✓ completed in 7.5s · 7 steps · 7 tool calls (1 failed) ·",
                "            18,902 tokens · $0.0123",
            ]
        );
        assert!(10 + console::measure_text_width(&rows[0]) <= 70);
    }

    #[test]
    fn words_wrap_when_a_fact_is_longer_than_a_row() {
        let rows = wrap(
            "✗ hung after 3m 0s: the agent printed nothing for 180s and used no CPU",
            30,
            0,
            2,
        );
        assert_eq!(
            rows,
            [
                "✗ hung after 3m 0s: the agent",
                "  printed nothing for 180s and",
                "  used no CPU",
            ]
        );
    }

    #[test]
    fn a_word_wider_than_a_row_is_never_split() {
        let path = "/tmp/a-long-directory/runs/20261123-abcdef/result.json";
        // Indented when it fits so, from the first column when it fits only so, and left to the
        // terminal when it is wider than the window.
        let line = format!("  receipt: {path}");
        assert_eq!(
            wrap(&line, 72, 10, 12),
            ["  receipt:".to_owned(), format!("{:12}{path}", "")]
        );
        assert_eq!(
            wrap(&line, 60, 10, 12),
            ["  receipt:".to_owned(), path.to_owned()]
        );
        assert_eq!(
            wrap(&line, 40, 10, 12),
            ["  receipt:".to_owned(), path.to_owned()]
        );
    }

    #[test]
    fn colours_are_closed_at_each_row_end_and_reopened() {
        let red = crate::render::Styles::colored().error;
        let line = format!(
            "{} {}",
            red.apply_to("✗ stopping the agent: interrupted by Ctrl-C (SIGINT)"),
            "after 3s"
        );
        let rows = wrap(&line, 30, 0, 2);
        assert_eq!(
            plain(&rows),
            [
                "✗ stopping the agent:",
                "  interrupted by Ctrl-C",
                "  (SIGINT) after 3s"
            ]
        );
        let rows: Vec<String> = rows
            .iter()
            .map(|r| crate::term::out::clean(r).into_owned())
            .collect();
        assert!(rows[0].starts_with("\x1b[31m\x1b[1m") && rows[0].ends_with("\x1b[0m"));
        assert!(rows[1].starts_with("  \x1b[31m\x1b[1m") && rows[1].ends_with("\x1b[0m"));
        assert!(
            rows[2].contains("(SIGINT)\x1b[0m after 3s"),
            "{:?}",
            rows[2]
        );
    }
}
