//! A Markdown document written only from runbook's own Markdown (`&'static str`) and foreign
//! text escaped by [`crate::foreign::markdown`]: the way `runbook report` writes Markdown.

use crate::foreign::markdown::{Block, Inline};

/// A Markdown document, one block at a time, blocks apart by an empty line.
#[derive(Debug, Default)]
pub(crate) struct Document {
    out: String,
}

impl Document {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// An empty line before the next block, unless it is the first.
    fn next_block(&mut self) {
        if !self.out.is_empty() {
            self.out.push('\n');
        }
    }

    /// `## title`.
    pub(crate) fn heading(&mut self, title: &'static str) {
        self.next_block();
        self.out.push_str("## ");
        self.out.push_str(title);
        self.out.push('\n');
    }

    /// `## title`, with foreign text in it.
    pub(crate) fn heading_of(&mut self, title: Inline) {
        self.next_block();
        self.out.push_str("## ");
        self.out.push_str(&title.render(false));
        self.out.push('\n');
    }

    /// A paragraph of one line.
    pub(crate) fn paragraph(&mut self, text: Inline) {
        self.next_block();
        self.out.push_str(&text.render(false));
        self.out.push('\n');
    }

    /// Paragraphs or a code block of foreign text.
    pub(crate) fn block(&mut self, block: &Block) {
        self.next_block();
        self.out.push_str(block.as_str());
    }

    /// A bulleted list, one line an item.
    pub(crate) fn list(&mut self, items: impl IntoIterator<Item = Inline>) {
        self.next_block();
        for item in items {
            self.out.push_str("- ");
            self.out.push_str(&item.render(false));
            self.out.push('\n');
        }
    }

    /// A table with the column names `head` (empty for none) and `rows` of as many cells.
    pub(crate) fn table(
        &mut self,
        head: &[&'static str],
        rows: impl IntoIterator<Item = Vec<Inline>>,
    ) {
        self.next_block();
        self.row(head.iter().map(|&h| h.to_owned()));
        self.row(head.iter().map(|_| "---".to_owned()));
        for cells in rows {
            debug_assert_eq!(cells.len(), head.len(), "a row of as many cells as columns");
            self.row(cells.iter().map(|c| c.render(true)));
        }
    }

    /// `| a | b |`, or `| |` for an empty cell.
    fn row(&mut self, cells: impl Iterator<Item = String>) {
        self.out.push('|');
        for cell in cells {
            debug_assert!(!cell.contains('\n'), "a cell on one line");
            if cell.is_empty() {
                self.out.push_str(" |");
            } else {
                self.out.push(' ');
                self.out.push_str(&cell);
                self.out.push_str(" |");
            }
        }
        self.out.push('\n');
    }

    /// A folded `<details>` block with runbook's own `summary`, holding the blocks `body`
    /// writes. Foreign text never goes in the `<summary>` line: an HTML block is not Markdown,
    /// and nothing in it would be escaped.
    pub(crate) fn details(&mut self, summary: &'static str, body: impl FnOnce(&mut Self)) {
        self.next_block();
        self.out.push_str("<details><summary>");
        self.out.push_str(summary);
        self.out.push_str("</summary>\n");
        body(self);
        self.out.push_str("\n</details>\n");
    }

    /// The Markdown.
    pub(crate) fn finish(self) -> String {
        self.out
    }
}
