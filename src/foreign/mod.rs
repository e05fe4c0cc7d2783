//! Text that came from outside runbook: what an agent, a tool, a check, a repository's files, a
//! receipt read back or an agent's `--version` said. It reaches a terminal only through
//! [`term`]'s sanitizer and Markdown only through [`markdown`]'s escaper.
//!
//! This module sits at the bottom of the house with the event contract: it depends on nothing
//! else of runbook's.
// Filled in by the terminal sanitizer and the Markdown escaper; until every view uses them, some
// of this is not called yet.
#![allow(dead_code)]

pub(crate) mod markdown;
pub(crate) mod term;

/// Text from outside runbook, borrowed. It has no `Display` of its own: it is shown through
/// [`Foreign::term`] on a terminal and the `md_` escapers in Markdown, and its bytes as they
/// are ([`Foreign::raw`]) go only where they are encoded anyway (JSON, a masked file).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Foreign<'a>(&'a str);

impl<'a> Foreign<'a> {
    /// Marks `text` as foreign.
    pub(crate) fn new(text: &'a str) -> Self {
        Self(text)
    }

    /// The text as it came, for encoders and masked writers only.
    pub(crate) fn raw(self) -> &'a str {
        self.0
    }

    /// The text as a terminal may show it: every control character and escape sequence made
    /// visible, nothing of it interpreted.
    pub(crate) fn term(self) -> std::borrow::Cow<'a, str> {
        term::escape(self.0)
    }

    /// The text inside a paragraph, list item or table cell: every character that would mean
    /// something to Markdown or GitHub escaped or neutralised (see [`markdown`]).
    pub(crate) fn md_inline(self) -> markdown::Inline {
        markdown::inline(self.0)
    }

    /// The text as a code span, fenced with more backticks than any run inside it.
    pub(crate) fn md_code(self) -> markdown::Inline {
        markdown::code(self.0)
    }

    /// The text as a fenced code block, fenced with more backticks than any run inside it.
    pub(crate) fn md_block(self) -> markdown::Block {
        markdown::block(self.0)
    }

    /// The text as paragraphs of escaped text, its line breaks kept.
    pub(crate) fn md_paragraphs(self) -> markdown::Block {
        markdown::paragraphs(self.0)
    }
}
