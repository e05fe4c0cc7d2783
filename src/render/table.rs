//! Tables for people, fitted to the terminal's width: columns sized to their content; when the
//! table is too wide, the columns that may be abbreviated are cut (at a word where one is near,
//! with `…`), then the least needed columns are shortened or left out, lowest rank first. A path
//! is never cut: too wide for its column, it gets a row of its own. A row still too wide is left
//! whole for the terminal writer to break between words.

use crate::term::wrap::wrap;

/// The rank of a column that is never left out.
pub(crate) const KEEP: u8 = u8::MAX;

/// Columns between two cells.
const GAP: usize = 2;

/// How a column gives way when the table is wider than the terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Fit {
    /// Shown whole: shortened to its short form, or left out, by its rank.
    Whole,
    /// An abbreviation: cut at its end with `…`, down to `min` columns.
    Cut { min: usize },
    /// A path (or a value that may be one), never cut: at least `min` columns; too wide for its
    /// column, it gets a row of its own, before the row's other cells when it begins the row,
    /// after them otherwise, so it can be copied whole.
    Path { min: usize },
    /// Broken into rows under the column, between words (the last column only; elsewhere it is
    /// cut), never narrower than `min`.
    Wrap { min: usize },
}

impl Fit {
    /// The narrowest the column is made before others give way.
    fn min(self) -> Option<usize> {
        match self {
            Fit::Whole => None,
            Fit::Cut { min } | Fit::Path { min } | Fit::Wrap { min } => Some(min),
        }
    }
}

/// A column: its header, how much it is needed (`rank`, higher is kept longer), how it gives
/// way, and a shorter form (another header, and each row's short cell) to take before it is
/// left out.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Column {
    header: &'static str,
    rank: u8,
    fit: Fit,
    short: Option<(&'static str, u8)>,
}

impl Column {
    /// A column shown whole and never left out.
    pub(crate) const fn new(header: &'static str) -> Self {
        Self {
            header,
            rank: KEEP,
            fit: Fit::Whole,
            short: None,
        }
    }

    /// Left out (or shortened) before the columns of a higher rank.
    pub(crate) const fn rank(self, rank: u8) -> Self {
        Self { rank, ..self }
    }

    pub(crate) const fn fit(self, fit: Fit) -> Self {
        Self { fit, ..self }
    }

    /// Shortened to `header` and the rows' short cells (at this column's rank), then left out
    /// at `rank`.
    pub(crate) const fn or(self, header: &'static str, rank: u8) -> Self {
        Self {
            short: Some((header, rank)),
            ..self
        }
    }
}

/// A cell: its text, and a shorter one for a column that has a short form.
#[derive(Debug, Clone, Default)]
pub(crate) struct Cell {
    full: String,
    short: Option<String>,
}

impl Cell {
    pub(crate) fn or(full: impl Into<String>, short: impl Into<String>) -> Self {
        Self {
            full: full.into(),
            short: Some(short.into()),
        }
    }
}

impl From<String> for Cell {
    fn from(full: String) -> Self {
        Self { full, short: None }
    }
}

impl From<&str> for Cell {
    fn from(full: &str) -> Self {
        full.to_owned().into()
    }
}

/// A table being filled: its columns, rows of cells (text that may hold colours), and the
/// spaces before every row.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    columns: Vec<Column>,
    rows: Vec<Vec<Cell>>,
    indent: usize,
}

/// The table as laid out: its header row (when a column has a header), then one string per
/// row (rows broken under a `Wrap` column hold `\n`), with no trailing spaces; and the headers
/// of the columns left out, and of those shortened, to fit.
#[derive(Debug, Clone, Default)]
pub(crate) struct Fitted {
    pub header: Option<String>,
    pub rows: Vec<String>,
    pub left_out: Vec<&'static str>,
    pub shortened: Vec<&'static str>,
}

impl Fitted {
    /// The header and every row, each ending in a newline.
    pub(crate) fn text(&self) -> String {
        let mut out = String::new();
        for row in self.header.iter().chain(&self.rows) {
            out.push_str(row);
            out.push('\n');
        }
        out
    }
}

/// A column's form as laid out: which form (0 full, 1 short, 2 left out) and its width.
#[derive(Debug, Clone, Copy)]
struct Shown {
    form: usize,
    width: usize,
}

impl Table {
    pub(crate) fn new(columns: &[Column]) -> Self {
        Self {
            columns: columns.to_vec(),
            rows: Vec::new(),
            indent: 0,
        }
    }

    /// Every row starts after `spaces` spaces (counted in the width).
    pub(crate) fn indent(mut self, spaces: usize) -> Self {
        self.indent = spaces;
        self
    }

    /// Adds a row; missing cells are empty, extra ones are ignored. A cell is one line: a line
    /// break in it is shown as a space.
    pub(crate) fn row<C: Into<Cell>>(&mut self, cells: impl IntoIterator<Item = C>) {
        let one_line = |text: &mut String| {
            if text.contains(['\n', '\r']) {
                *text = text.replace(['\n', '\r'], " ");
            }
        };
        let mut cells: Vec<Cell> = cells
            .into_iter()
            .map(|c| {
                let mut c: Cell = c.into();
                one_line(&mut c.full);
                if let Some(short) = &mut c.short {
                    one_line(short);
                }
                c
            })
            .collect();
        cells.resize_with(self.columns.len(), Cell::default);
        self.rows.push(cells);
    }

    /// The table laid out for `width` columns; `None`: every column whole, however wide.
    pub(crate) fn fit(&self, width: Option<usize>) -> Fitted {
        let shown = match width {
            Some(width) => self.layout(width),
            None => (0..self.columns.len())
                .map(|c| Shown {
                    form: 0,
                    width: self.natural(c, 0),
                })
                .collect(),
        };
        let mut fitted = Fitted::default();
        for (c, s) in shown.iter().enumerate() {
            match s.form {
                0 => {}
                1 => fitted.shortened.push(self.columns[c].header),
                _ => fitted.left_out.push(self.columns[c].header),
            }
        }
        if self.columns.iter().any(|c| !c.header.is_empty()) {
            let headers: Vec<String> = (0..self.columns.len())
                .map(|c| self.header(c, shown[c].form).to_owned())
                .collect();
            fitted.header = Some(self.line(&headers, &shown, width));
        }
        for row in &self.rows {
            let cells: Vec<String> = row
                .iter()
                .zip(&shown)
                .map(|(cell, s)| form(cell, s.form).to_owned())
                .collect();
            fitted.rows.push(self.line(&cells, &shown, width));
        }
        fitted
    }

    /// The header of column `c` in form `form`.
    fn header(&self, c: usize, form: usize) -> &'static str {
        match (form, self.columns[c].short) {
            (1, Some((short, _))) => short,
            _ => self.columns[c].header,
        }
    }

    /// The width column `c` needs in form `form` to show every cell whole.
    fn natural(&self, c: usize, form: usize) -> usize {
        self.rows
            .iter()
            .map(|r| console::measure_text_width(self::form(&r[c], form)))
            .chain([console::measure_text_width(self.header(c, form))])
            .max()
            .unwrap_or(0)
    }

    /// The rank at which column `c`, now in form `form`, gives way to the next form.
    fn rank(&self, c: usize, form: usize) -> u8 {
        match (form, self.columns[c].short) {
            (1, Some((_, rank))) => rank,
            _ => self.columns[c].rank,
        }
    }

    /// Which form of each column is shown, and how wide, to fit `width`.
    fn layout(&self, width: usize) -> Vec<Shown> {
        let count = self.columns.len();
        let mut form = vec![0usize; count];
        loop {
            let shown: Vec<usize> = (0..count).filter(|&c| form[c] < 2).collect();
            let need = self.indent
                + shown.iter().map(|&c| self.least(c, form[c])).sum::<usize>()
                + GAP * shown.len().saturating_sub(1);
            if need <= width {
                break;
            }
            // The column needed least gives way; of equals, the rightmost.
            let Some(&c) = shown
                .iter()
                .filter(|&&c| self.rank(c, form[c]) < KEEP)
                .min_by_key(|&&c| (self.rank(c, form[c]), std::cmp::Reverse(c)))
            else {
                break;
            };
            form[c] += if form[c] == 0 && self.columns[c].short.is_some() {
                1
            } else {
                2
            };
        }
        self.widths(&form, width)
    }

    /// The least width column `c` takes in form `form` before others give way.
    fn least(&self, c: usize, form: usize) -> usize {
        let natural = self.natural(c, form);
        self.columns[c]
            .fit
            .min()
            .map_or(natural, |min| natural.min(min))
    }

    /// The widths of the columns shown: whole columns as wide as their cells, the others their
    /// least, then what is left given to them, up to their natural width.
    /// When even that is too wide, the columns that may be cut are cut further.
    fn widths(&self, form: &[usize], width: usize) -> Vec<Shown> {
        let mut shown: Vec<Shown> = form
            .iter()
            .enumerate()
            .map(|(c, &f)| Shown {
                form: f,
                width: if f < 2 { self.least(c, f) } else { 0 },
            })
            .collect();
        let visible = shown.iter().filter(|s| s.form < 2).count();
        let used = self.indent
            + shown.iter().map(|s| s.width).sum::<usize>()
            + GAP * visible.saturating_sub(1);
        let flexible = |c: usize| shown_flexible(&self.columns[c], form[c]);
        // Room goes to the most needed first, of equals the rightmost (what a row ends with
        // tells where it came from: a file, a line); a column that breaks into rows last.
        let mut order: Vec<usize> = (0..shown.len()).filter(|&c| flexible(c)).collect();
        order.sort_by_key(|&c| {
            let wraps = matches!(self.columns[c].fit, Fit::Wrap { .. });
            (
                wraps,
                std::cmp::Reverse(self.rank(c, form[c])),
                std::cmp::Reverse(c),
            )
        });
        if used <= width {
            let mut room = width - used;
            for &c in &order {
                let more = self.natural(c, form[c]).saturating_sub(shown[c].width);
                let given = more.min(room);
                shown[c].width += given;
                room -= given;
            }
        } else {
            let mut over = used - width;
            for &c in order.iter().rev() {
                let less = shown[c].width.saturating_sub(1).min(over);
                shown[c].width -= less;
                over -= less;
            }
        }
        shown
    }

    /// One row laid out: each cell shown fitted to its column, padded but the last; a path too
    /// wide for its column on a row of its own.
    fn line(&self, cells: &[String], shown: &[Shown], width: Option<usize>) -> String {
        let visible: Vec<usize> = (0..cells.len()).filter(|&c| shown[c].form < 2).collect();
        let mut line = " ".repeat(self.indent);
        let (mut before, mut after) = (Vec::new(), Vec::new());
        for (i, &c) in visible.iter().enumerate() {
            let last = i + 1 == visible.len();
            let w = shown[c].width;
            let text = match (width, self.columns[c].fit) {
                (None, _) | (_, Fit::Whole) => cells[c].clone(),
                (Some(width), Fit::Wrap { .. }) if last => {
                    let start = console::measure_text_width(&line);
                    wrap(&cells[c], width, start, start).join("\n")
                }
                (Some(width), Fit::Path { .. }) if console::measure_text_width(&cells[c]) > w => {
                    let own = self.own_row(&cells[c], width);
                    (if i == 0 { &mut before } else { &mut after }).push(own);
                    String::new()
                }
                (_, Fit::Path { .. }) => cells[c].clone(),
                _ => cut_end(&cells[c], w),
            };
            line.push_str(&text);
            if !last {
                let pad = w.saturating_sub(console::measure_text_width(&text));
                line.push_str(&" ".repeat(pad + GAP));
            }
        }
        let line = line.trim_end();
        let middle = (!line.is_empty()).then_some(line.to_owned());
        let rows: Vec<String> = before.into_iter().chain(middle).chain(after).collect();
        rows.join("\n")
    }

    /// A path on a row of its own: after the table's indent when it fits there, else from the
    /// first column (wider than the window, the terminal wraps it, whole).
    fn own_row(&self, path: &str, width: usize) -> String {
        if self.indent + console::measure_text_width(path) <= width {
            format!("{}{path}", " ".repeat(self.indent))
        } else {
            path.to_owned()
        }
    }
}

/// Whether a column in form `form` is shown and may be made narrower or wider than its cells.
fn shown_flexible(column: &Column, form: usize) -> bool {
    form < 2 && column.fit.min().is_some()
}

/// A cell's text in form `form`.
fn form(cell: &Cell, form: usize) -> &str {
    match (form, &cell.short) {
        (1, Some(short)) => short,
        _ => &cell.full,
    }
}

/// At most `width` columns of `text`, cut at its end with `…`: after the last whole word when
/// one ends in the second half of the room, else mid-word.
pub(crate) fn cut_end(text: &str, width: usize) -> String {
    if console::measure_text_width(text) <= width {
        return text.to_owned();
    }
    let cut = crate::format::fit(text, width).into_owned();
    if text.contains('\x1b') {
        return cut;
    }
    let kept = cut.trim_end_matches('…');
    match kept.rfind(' ') {
        Some(space) if console::measure_text_width(&kept[..space]) * 2 >= width => {
            format!("{}…", kept[..space].trim_end())
        }
        _ => cut,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widest(f: &Fitted) -> usize {
        f.header
            .iter()
            .chain(&f.rows)
            .flat_map(|r| r.lines())
            .map(console::measure_text_width)
            .max()
            .unwrap_or(0)
    }

    fn sample() -> Table {
        let mut t = Table::new(&[
            Column::new("ID"),
            Column::new("WHEN").or("AGE", 6).rank(3),
            Column::new("OUTCOME"),
            Column::new("STEPS").rank(1),
            Column::new("PROMPT").rank(5).fit(Fit::Cut { min: 12 }),
        ]);
        t.row([
            Cell::from("20261122-043355-7k3mq"),
            Cell::or("11-22 04:33 12m ago", "12m ago"),
            Cell::from("checks_failed"),
            Cell::from("12"),
            Cell::from("Fix the flaky test in the parser and tell me why it failed"),
        ]);
        t
    }

    #[test]
    fn a_table_that_fits_is_shown_whole() {
        let f = sample().fit(Some(200));
        assert!(f.left_out.is_empty() && f.shortened.is_empty());
        assert!(f.rows[0].ends_with("tell me why it failed"), "{f:?}");
        assert_eq!(sample().fit(None).rows, f.rows);
    }

    #[test]
    fn columns_give_way_by_rank_and_no_row_is_wider_than_the_width() {
        for width in [20, 40, 60, 80, 100, 120] {
            let f = sample().fit(Some(width));
            if width >= 40 {
                assert!(widest(&f) <= width, "{width}: {f:?}");
            }
            // Whole columns are never cut, even narrower than the columns kept (the terminal
            // writer then breaks the row between words): a word is all there or not at all.
            let text = f.text();
            assert!(text.contains("checks_failed"), "{width}: {text}");
            assert!(text.contains("20261122-043355-7k3mq"), "{width}: {text}");
        }
        let at = |w| sample().fit(Some(w));
        assert!(at(80).left_out.is_empty() && at(80).shortened.is_empty());
        assert_eq!(at(60).left_out, ["STEPS"]);
        assert_eq!(at(60).shortened, ["WHEN"]);
        assert!(at(60).header.unwrap().contains("AGE"));
        assert_eq!(at(50).left_out, ["STEPS", "PROMPT"]);
    }

    #[test]
    fn a_cut_ends_after_a_word_when_one_is_near() {
        assert_eq!(cut_end("Fix the flaky test", 12), "Fix the…");
        assert_eq!(cut_end("Supercalifragilistic", 8), "Superca…");
        assert_eq!(cut_end("short", 8), "short");
    }

    #[test]
    fn a_path_too_wide_for_its_column_gets_a_row_of_its_own() {
        let path = "/home/someone/projects/a-repository/runbook.toml";
        let mut t = Table::new(&[
            Column::new("STATUS"),
            Column::new("FILE").fit(Fit::Path { min: 8 }),
        ]);
        t.row(["matches", path]);
        let rows: Vec<String> = t.fit(Some(40)).rows[0].lines().map(str::to_owned).collect();
        assert_eq!(rows, ["matches", path]);
        let mut t =
            Table::new(&[Column::new("").fit(Fit::Path { min: 8 }), Column::new("")]).indent(2);
        t.row([path, "not found"]);
        let rows: Vec<String> = t.fit(Some(60)).rows[0].lines().map(str::to_owned).collect();
        assert_eq!(rows[0], format!("  {path}"));
        assert_eq!(rows[1].trim_start(), "not found");
        assert_eq!(t.fit(Some(80)).rows[0], format!("  {path}  not found"));
    }

    #[test]
    fn a_wrapped_last_column_breaks_between_words_under_itself() {
        let mut t = Table::new(&[Column::new(""), Column::new("").fit(Fit::Wrap { min: 10 })]);
        t.row([
            "outcomes",
            "50.0% completed · agent_error 3 · checks_failed 2 · hung 1",
        ]);
        let f = t.fit(Some(30));
        assert!(f.header.is_none());
        let rows: Vec<&str> = f.rows[0].lines().collect();
        assert!(rows.len() > 1, "{rows:?}");
        for row in &rows[1..] {
            assert!(row.starts_with("          "), "{rows:?}");
        }
        let words: Vec<&str> = f.rows[0].split_whitespace().collect();
        assert!(words.contains(&"agent_error") && words.contains(&"checks_failed"));
        assert!(widest(&f) <= 30, "{f:?}");
    }
}
