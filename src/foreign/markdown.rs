//! The Markdown escaper: foreign text quoted so that it renders as the text it is.
//!
//! Foreign text reaches Markdown only as one of the fragments made here: [`Inline`] for text
//! inside a paragraph, list item or table cell (escaped text, or a code span), and [`Block`] for
//! a fenced code block or paragraphs of text. Their contents are private: nothing outside this
//! module can make one from a `String` without escaping it, and runbook's own Markdown goes in
//! only as `&'static str`.
//!
//! What the escaping guarantees, for GitHub-flavoured Markdown as GitHub renders it:
//! - Text parses back to the text it is: every character CommonMark or GitHub's extensions give a
//!   meaning to (emphasis, code, links, images, HTML, entities, tables, strikethrough, math,
//!   footnotes) is backslash-escaped; a line start can open no block (heading, quote, list,
//!   setext underline, fence, indented code); a newline inside inline text is the character
//!   reference `&#10;`, so it neither ends a table row nor breaks a line, and leading and trailing
//!   blanks are character references, so they are neither trimmed nor a hard break.
//! - GitHub's own links in text are broken by [`NEUTRALISER`], U+2060 WORD JOINER, an invisible
//!   character that joins nothing: it follows every `@` (mentions, e-mail addresses), every `#`
//!   (issue references) and every `:` before a non-blank (`https://`, `mailto:`, `:emoji:`), and
//!   stands inside `www.` and `GH-`. A reader sees the text unchanged; GitHub sees no reference.
//! - A code span or block is fenced with one backtick more than the longest run of backticks in
//!   its content, so nothing in it can close it.
//!
//! What is not kept exactly: U+0000 becomes U+FFFD (as CommonMark reads it anyway); inside a
//! code span, where character references are not read, a line feed shows as `␤` and a carriage
//! return as `␍`; in a code block, `\r\n` and a lone `\r` are written as the line end `\n`;
//! in paragraphs, runs of empty lines are one paragraph break and empty lines at either end go.

use std::fmt::Write as _;

/// The invisible character put after `@`, `#` and `:` (and inside `www.` and `GH-`) so that
/// GitHub links no mention, issue, URL or emoji in foreign text.
pub(crate) const NEUTRALISER: char = '\u{2060}';

/// ASCII punctuation that means something anywhere in a line: backslash-escaped wherever it is.
const ALWAYS_ESCAPED: &[char] = &[
    '\\', '`', '*', '_', '[', ']', '<', '>', '&', '~', '|', '$', '^',
];

/// Characters that mean something only at the start of a line (a list, setext underline,
/// definition, or a heading's `#`, which [`NEUTRALISER`] already stops).
const LINE_START_ESCAPED: &[char] = &['-', '+', '=', ':', '#'];

/// Markdown for inside a paragraph, list item or table cell: escaped text, code spans and
/// runbook's own text.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Inline(Vec<Piece>);

#[derive(Debug, Clone, PartialEq, Eq)]
enum Piece {
    /// Runbook's own Markdown, or text already escaped.
    Ready(String),
    /// A code span's content, fenced when placed (a table cell needs its `|` escaped).
    Code(String),
}

impl Inline {
    /// Runbook's own Markdown, as written in its source.
    pub(crate) fn own(markdown: &'static str) -> Self {
        Self(vec![Piece::Ready(markdown.to_owned())])
    }

    /// Text runbook made itself (a number, a duration), escaped as foreign text is: nothing
    /// that is not a `&'static str` goes in as it is.
    pub(crate) fn made(text: &str) -> Self {
        Self(vec![Piece::Ready(text_inline(text))])
    }

    /// `self` followed by `next`.
    #[must_use]
    pub(crate) fn then(mut self, next: Inline) -> Self {
        self.0.extend(next.0);
        self
    }

    /// `self` followed by runbook's own `markdown`.
    #[must_use]
    pub(crate) fn and(self, markdown: &'static str) -> Self {
        self.then(Self::own(markdown))
    }

    /// The Markdown, for a table cell (`in_cell`: a `|` in a code span is escaped, as GFM
    /// tables need) or anywhere else inline.
    pub(crate) fn render(&self, in_cell: bool) -> String {
        let mut out = String::new();
        for piece in &self.0 {
            match piece {
                Piece::Ready(text) => out.push_str(text),
                Piece::Code(content) => code_span(&mut out, content, in_cell),
            }
        }
        out
    }
}

/// Markdown blocks made of foreign text: a fenced code block, or paragraphs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Block(String);

impl Block {
    /// The Markdown, ending in a line feed.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

/// `text` as an inline fragment of escaped text.
pub(super) fn inline(text: &str) -> Inline {
    Inline(vec![Piece::Ready(text_inline(text))])
}

/// `text` as a code span.
pub(super) fn code(text: &str) -> Inline {
    let content = text
        .chars()
        .map(|c| match c {
            '\n' => '␤',
            '\r' => '␍',
            '\0' => '\u{FFFD}',
            c => c,
        })
        .collect();
    Inline(vec![Piece::Code(content)])
}

/// `text` as a fenced code block, with no info string (GitHub highlights nothing).
pub(super) fn block(text: &str) -> Block {
    // Every line end as `\n`: parsers differ on a lone `\r`, and one that does not end a line
    // there could keep the closing fence from being seen.
    let text = text
        .replace('\0', "\u{FFFD}")
        .replace("\r\n", "\n")
        .replace('\r', "\n");
    let fence = "`".repeat(longest_run(&text, '`').max(2) + 1);
    let mut out = format!("{fence}\n{text}");
    if !text.is_empty() && !text.ends_with('\n') {
        out.push('\n');
    }
    let _ = writeln!(out, "{fence}");
    Block(out)
}

/// `text` as paragraphs of escaped text: its lines kept (as hard line breaks), empty lines
/// between paragraphs.
pub(super) fn paragraphs(text: &str) -> Block {
    let mut out = String::new();
    let mut in_paragraph = false;
    let mut gap = false;
    for line in text.split('\n') {
        if line.is_empty() {
            gap = in_paragraph;
            continue;
        }
        if gap {
            out.push_str("\n\n");
            gap = false;
        } else if in_paragraph {
            out.push_str("\\\n");
        }
        out.push_str(&text_inline(line));
        in_paragraph = true;
    }
    if in_paragraph {
        out.push('\n');
    }
    Block(out)
}

/// The escaped form of `text` for any inline position, the start of a line included.
fn text_inline(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let blank = |c: char| matches!(c, ' ' | '\t' | '\u{b}' | '\u{c}');
    let lead = chars.iter().take_while(|&&c| blank(c)).count();
    let trail = chars[lead..]
        .iter()
        .rev()
        .take_while(|&&c| blank(c))
        .count();
    let mut out = String::with_capacity(text.len() + 8);
    for (i, &c) in chars.iter().enumerate() {
        let next = chars.get(i + 1).copied();
        if i < lead || i >= chars.len() - trail {
            let _ = write!(out, "&#{};", u32::from(c));
            continue;
        }
        match c {
            '\0' => out.push('\u{FFFD}'),
            '\n' => out.push_str("&#10;"),
            '\r' => out.push_str("&#13;"),
            c if ALWAYS_ESCAPED.contains(&c) => {
                out.push('\\');
                out.push(c);
            }
            c if i == lead && LINE_START_ESCAPED.contains(&c) => {
                out.push('\\');
                out.push(c);
            }
            // `1.` or `1)` and a blank at the start of a line: an ordered list.
            '.' | ')'
                if i > lead
                    && chars[lead..i].iter().all(char::is_ascii_digit)
                    && next.is_none_or(char::is_whitespace) =>
            {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
        if neutralise_after(&chars, i, next) {
            out.push(NEUTRALISER);
        }
    }
    out
}

/// Whether [`NEUTRALISER`] goes after `chars[i]`.
fn neutralise_after(chars: &[char], i: usize, next: Option<char>) -> bool {
    let ends_with = |word: &str| {
        let n = word.chars().count();
        i + 1 >= n
            && chars[i + 1 - n..=i]
                .iter()
                .zip(word.chars())
                .all(|(a, b)| a.eq_ignore_ascii_case(&b))
    };
    match chars[i] {
        '@' | '#' => true,
        ':' => next.is_none_or(|n| !n.is_whitespace()),
        'w' | 'W' => next == Some('.') && ends_with("www"),
        '-' => ends_with("gh-"),
        _ => false,
    }
}

/// The longest run of `c` in `text`.
fn longest_run(text: &str, c: char) -> usize {
    let (mut longest, mut run) = (0, 0);
    for ch in text.chars() {
        run = if ch == c { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    longest
}

/// `content` in a code span: fenced with one backtick more than its longest run, padded with a
/// space where it starts or ends with a backtick or with spaces at both ends (CommonMark takes
/// one off each side), and with `|` escaped in a table cell.
fn code_span(out: &mut String, content: &str, in_cell: bool) {
    if content.is_empty() {
        return;
    }
    let fence = "`".repeat(longest_run(content, '`') + 1);
    let pad = content.starts_with('`')
        || content.ends_with('`')
        || (content.starts_with(' ') && content.ends_with(' ') && !content.trim().is_empty());
    let pad = if pad { " " } else { "" };
    let content = if in_cell {
        std::borrow::Cow::Owned(content.replace('|', "\\|"))
    } else {
        std::borrow::Cow::Borrowed(content)
    };
    let _ = write!(out, "{fence}{pad}{content}{pad}{fence}");
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;
    use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};

    use super::*;
    use crate::foreign::Foreign;

    /// Every extension pulldown-cmark has that GitHub has too, and a few more that GitHub
    /// lacks (definition lists, sub- and superscript, wiki links): escaped text must survive
    /// them all.
    fn parse(markdown: &str) -> Vec<Event<'_>> {
        let options = Options::all()
            - Options::ENABLE_SMART_PUNCTUATION
            - Options::ENABLE_YAML_STYLE_METADATA_BLOCKS
            - Options::ENABLE_PLUSES_DELIMITED_METADATA_BLOCKS
            - Options::ENABLE_OLD_FOOTNOTES;
        Parser::new_ext(markdown, options | Options::ENABLE_FOOTNOTES).collect()
    }

    /// What the escaper keeps of `text`: all of it, less NUL, which CommonMark reads as U+FFFD.
    fn kept(text: &str) -> String {
        text.replace('\0', "\u{FFFD}")
    }

    /// Text as a reader sees it: without the neutraliser.
    fn seen(text: &str) -> String {
        text.replace(NEUTRALISER, "")
    }

    /// Events between the first `Start(tag)` and its end, which must be all of them but the
    /// container's own (`outside`).
    fn only_text(events: &[Event<'_>]) -> Result<String, String> {
        let mut text = String::new();
        for e in events {
            match e {
                Event::Text(t) => text.push_str(t),
                other => return Err(format!("{other:?} in {events:?}")),
            }
        }
        Ok(text)
    }

    /// The events inside the one `Start(Paragraph)` … `End(Paragraph)` that `events` must be.
    fn paragraph<'e>(events: &'e [Event<'e>]) -> &'e [Event<'e>] {
        match events {
            [
                Event::Start(Tag::Paragraph),
                inner @ ..,
                Event::End(TagEnd::Paragraph),
            ] => inner,
            _ => panic!("not one paragraph: {events:?}"),
        }
    }

    /// A link GitHub would make of text: a mention, an issue, a URL, `www.`, an emoji.
    fn github_link(text: &str) -> Option<String> {
        let lower = text.to_lowercase();
        let chars: Vec<char> = lower.chars().collect();
        for (i, w) in chars.windows(2).enumerate() {
            let hit = match w {
                ['@', c] => c.is_ascii_alphanumeric(),
                ['#', c] => c.is_ascii_alphanumeric(),
                [':', '/'] => true,
                [':', c] => {
                    let name: String = chars[i + 1..]
                        .iter()
                        .take_while(|c| c.is_ascii_alphanumeric() || "_+-".contains(**c))
                        .collect();
                    c.is_ascii_alphanumeric() && chars.get(i + 1 + name.len()) == Some(&':')
                        || ["mailto", "xmpp"]
                            .iter()
                            .any(|s| lower[..].contains(&format!("{s}:{c}")))
                }
                _ => false,
            };
            if hit {
                return Some(chars[i..].iter().take(12).collect());
            }
        }
        [
            "www.", "gh-0", "gh-1", "gh-2", "gh-3", "gh-4", "gh-5", "gh-6", "gh-7", "gh-8", "gh-9",
        ]
        .iter()
        .find(|p| lower.contains(**p))
        .map(|p| (*p).to_owned())
    }

    /// Strings heavy in what Markdown and GitHub read: punctuation, blanks, line ends, and
    /// whole constructs, among any other characters.
    fn tricky() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            any::<char>().prop_map(String::from),
            "[ \t\r\n\u{b}\u{c}\0a1.)]".prop_map(String::from),
            prop::char::ranges(vec!['!'..='/', ':'..='@', '['..='`', '{'..='~'].into())
                .prop_map(String::from),
            prop::sample::select(vec![
                "</details><details open>",
                "@octocat",
                "![x](http://evil/x.png)",
                "[click](javascript:alert(1))",
                "```",
                "~~~",
                "<script>",
                "#1",
                "GH-12",
                "https://evil.example",
                "www.evil.example",
                "a@b.example",
                ":smile:",
                "&amp;",
                "&#10;",
                "  \n",
                "\\\n",
                "1. ",
                "- ",
                "> ",
                "# ",
                "=====",
                "---",
                "| a | b |",
                "$x$",
                "$$",
                "[^1]",
                "[[wiki]]",
                "<http://x>",
                "    code",
                "**b**",
                "_i_",
                "~~s~~",
                "^s^",
                "~s~",
                "\u{2028}",
                "\u{a0}",
                "\u{feff}",
            ])
            .prop_map(String::from),
        ];
        prop::collection::vec(piece, 0..24).prop_map(|v| v.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn inline_text_parses_back_to_one_text_node_of_the_same_text(text in tricky()) {
            let md = Foreign::new(&text).md_inline().render(false);
            let alone = parse(&md);
            if seen(&kept(&text)).is_empty() && md.is_empty() {
                prop_assert!(alone.is_empty(), "{alone:?}");
            } else {
                let got = only_text(paragraph(&alone)).map_err(TestCaseError::fail)?;
                prop_assert_eq!(seen(&got), seen(&kept(&text)), "from {:?}", md);
                prop_assert_eq!(github_link(&got), None, "from {:?}", md);
            }
            let within = format!("before {md} after");
            let got = only_text(paragraph(&parse(&within))).map_err(TestCaseError::fail)?;
            prop_assert_eq!(seen(&got), format!("before {} after", seen(&kept(&text))));
        }

        #[test]
        fn inline_text_keeps_a_table_cell_whole(text in tricky()) {
            let cell = Foreign::new(&text).md_inline().render(true);
            let table = format!("| a | b |\n| --- | --- |\n| {cell} | z |\n");
            let events = parse(&table);
            let cells = table_cells(&events);
            prop_assert_eq!(cells.len(), 4, "{:?}", events);
            prop_assert_eq!(seen(&cells[2]), seen(&kept(&text)), "from {:?}", cell);
            prop_assert_eq!(&cells[3], "z");
        }

        #[test]
        fn a_code_span_holds_exactly_the_text(text in tricky().prop_filter("empty", |t| !t.is_empty())) {
            let want: String = kept(&text).replace('\n', "␤").replace('\r', "␍");
            for in_cell in [false, true] {
                let span = Foreign::new(&text).md_code().render(in_cell);
                let md = if in_cell {
                    format!("| a |\n| --- |\n| {span} |\n")
                } else {
                    format!("x {span} y")
                };
                let codes: Vec<String> = parse(&md)
                    .into_iter()
                    .filter_map(|e| match e {
                        Event::Code(c) => Some(c.to_string()),
                        Event::Text(t) if !in_cell => (!["x ", " y"].contains(&&*t)).then(|| format!("text {t:?}")),
                        Event::Text(t) => (t.as_ref() != "a").then(|| format!("text {t:?}")),
                        _ => None,
                    })
                    .collect();
                prop_assert_eq!(codes, vec![want.clone()], "from {:?}", md);
            }
        }

        #[test]
        fn a_code_block_holds_exactly_the_text(text in tricky()) {
            let md = Foreign::new(&text).md_block();
            let events = parse(md.as_str());
            let inner = match &events[..] {
                [Event::Start(Tag::CodeBlock(_)), inner @ .., Event::End(TagEnd::CodeBlock)] => inner,
                _ => return Err(TestCaseError::fail(format!("not one code block: {events:?}"))),
            };
            let mut want = kept(&text).replace("\r\n", "\n").replace('\r', "\n");
            if !want.is_empty() && !want.ends_with('\n') {
                want.push('\n');
            }
            prop_assert_eq!(only_text(inner).map_err(TestCaseError::fail)?, want);
        }

        #[test]
        fn paragraphs_parse_back_to_their_lines(text in tricky()) {
            let md = Foreign::new(&text).md_paragraphs();
            let mut got = String::new();
            for e in parse(md.as_str()) {
                match e {
                    Event::Start(Tag::Paragraph) if !got.is_empty() => got.push_str("\n\n"),
                    Event::Start(Tag::Paragraph) | Event::End(TagEnd::Paragraph) => {}
                    Event::Text(t) => got.push_str(&t),
                    Event::HardBreak => got.push('\n'),
                    other => return Err(TestCaseError::fail(format!("{other:?} from {md:?}"))),
                }
            }
            let kept = kept(&text);
            let lines: Vec<&str> = kept.split('\n').collect();
            let want = lines
                .split(|l| l.is_empty())
                .filter(|p| !p.is_empty())
                .map(|p| p.join("\n"))
                .collect::<Vec<_>>()
                .join("\n\n");
            prop_assert_eq!(seen(&got), seen(&want), "from {:?}", md);
        }
    }

    /// The text of each table cell, head and body, in order.
    fn table_cells(events: &[Event<'_>]) -> Vec<String> {
        let mut cells = Vec::new();
        let mut current: Option<String> = None;
        for e in events {
            match e {
                Event::Start(Tag::TableCell) => current = Some(String::new()),
                Event::End(TagEnd::TableCell) => cells.extend(current.take()),
                Event::Text(t) => match &mut current {
                    Some(cell) => cell.push_str(t),
                    None => cells.push(format!("stray text {t:?}")),
                },
                Event::Start(Tag::Table(_) | Tag::TableHead | Tag::TableRow)
                | Event::End(TagEnd::Table | TagEnd::TableHead | TagEnd::TableRow) => {}
                other => cells.push(format!("{other:?}")),
            }
        }
        cells
    }

    #[test]
    fn neutralised_text_reads_the_same_and_links_nothing() {
        let md = Foreign::new("@octocat see #1, GH-2, https://x.example, www.x.example :smile:")
            .md_inline()
            .render(false);
        assert_eq!(
            seen(&md),
            "@octocat see #1, GH-2, https://x.example, www.x.example :smile:"
        );
        assert_eq!(md.matches(NEUTRALISER).count(), 7, "{md}");
    }

    #[test]
    fn ordinary_text_is_left_as_it_is() {
        for text in [
            "The retry waits for the lock now.",
            "fake/fake-model",
            "12.3s",
            "5,215",
        ] {
            assert_eq!(Foreign::new(text).md_inline().render(false), text);
        }
    }

    #[test]
    fn fences_are_longer_than_any_run_of_backticks_inside() {
        let span = Foreign::new("a ``` b").md_code().render(false);
        assert_eq!(span, "````a ``` b````");
        let block = Foreign::new("````\nx").md_block();
        assert_eq!(block.as_str(), "`````\n````\nx\n`````\n");
    }
}
