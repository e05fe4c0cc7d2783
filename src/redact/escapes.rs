//! Secrets spelled with JSON escapes. A value can be written `\u0073k-…`, `\/`, or any mix of
//! escaped and plain characters, and a JSON reader decodes every spelling to the same text. The
//! text is decoded here while remembering where each decoded character was written, so a secret
//! found in the decoded text is masked where it stands in the text as written, and everything
//! else is left byte for byte as it was.

use std::ops::Range;

use aho_corasick::AhoCorasick;
use memchr::{memchr, memchr_iter};

/// The most bytes one byte of a value can take when spelled with escapes (`\u0041` for `A`).
pub(super) const MAX_SPELLING: usize = 6;

/// Whether `text` may spell something in a way the plain and the usual JSON spellings miss. A
/// JSON writer escapes only `"`, `\` and control characters, always the same way; any other
/// spelling of a character needs a `\u` or `\/` escape.
pub(super) fn may_hide(text: &[u8]) -> bool {
    memchr_iter(b'\\', text).any(|at| matches!(text.get(at + 1), Some(b'u' | b'/')))
}

/// Where in `text` (as written) the matcher finds something in the decoded text: sorted,
/// each range covering whole escapes.
pub(super) fn spans(matcher: &AhoCorasick, text: &[u8]) -> Vec<Range<usize>> {
    let mut decoded = Vec::with_capacity(text.len());
    walk(text, |_, piece| decoded.extend_from_slice(piece.decoded()));
    let found: Vec<Range<usize>> = matcher.find_iter(&decoded).map(|m| m.range()).collect();
    if found.is_empty() {
        return Vec::new();
    }
    let mut spans = Vec::with_capacity(found.len());
    let mut next = found.iter().peekable();
    let mut start = None;
    let mut at = 0;
    walk(text, |written, piece| {
        let decoded = at..at + piece.decoded().len();
        at = decoded.end;
        // Where in the text a position of the decoded text was written: inside plain text, the
        // same byte; inside an escape, the whole escape.
        let place = |pos: usize, end: bool| match piece {
            Piece::Plain(_) => written.start + (pos - decoded.start),
            Piece::Escape(_) if end => written.end,
            Piece::Escape(_) => written.start,
        };
        while let Some(m) = next.peek() {
            if m.start >= decoded.end {
                break;
            }
            let from = *start.get_or_insert_with(|| place(m.start.max(decoded.start), false));
            if m.end > decoded.end {
                // It goes on past this piece.
                break;
            }
            spans.push(from..place(m.end, true));
            start = None;
            next.next();
        }
    });
    spans
}

/// `text` with each span replaced by `mask` (overlapping spans make one).
pub(super) fn replace(text: &[u8], spans: &[Range<usize>], mask: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(text.len());
    let mut at = 0;
    for span in spans {
        if span.start < at {
            at = at.max(span.end);
            continue;
        }
        out.extend_from_slice(&text[at..span.start]);
        out.extend_from_slice(mask);
        at = span.end;
    }
    out.extend_from_slice(&text[at..]);
    out
}

/// The first place at or after `pos` where `text` can be cut without cutting an escape in two
/// (read from the start of `text`, which must not begin inside an escape).
pub(super) fn escape_boundary(text: &[u8], pos: usize) -> usize {
    if memchr(b'\\', &text[..pos.min(text.len())]).is_none() {
        return pos;
    }
    let mut boundary = pos;
    let mut done = false;
    walk(text, |written, piece| {
        if !done && written.end >= pos {
            done = true;
            boundary = match piece {
                Piece::Escape(_) if written.start < pos => written.end,
                _ => pos,
            };
        }
    });
    boundary
}

/// `range` widened to whole escapes: a plain match that begins or ends inside an escape (the
/// `0` that ends `\u0030`) covers all of it, so that masking it never leaves half an escape.
pub(super) fn whole(text: &[u8], range: Range<usize>) -> Range<usize> {
    let mut start = range.start;
    walk(text, |written, piece| {
        if matches!(piece, Piece::Escape(_))
            && written.start < range.start
            && written.end > range.start
        {
            start = written.start;
        }
    });
    start..escape_boundary(text, range.end)
}

/// A piece of text: plain bytes, or one escape and the character it stands for (UTF-8).
#[derive(Clone, Copy)]
enum Piece<'a> {
    Plain(&'a [u8]),
    Escape(Char),
}

#[derive(Clone, Copy)]
struct Char {
    utf8: [u8; 4],
    len: usize,
}

impl Piece<'_> {
    fn decoded(&self) -> &[u8] {
        match self {
            Piece::Plain(bytes) => bytes,
            Piece::Escape(c) => &c.utf8[..c.len],
        }
    }
}

/// Calls `f` with each piece of `text` in order, and where it was written.
fn walk<'a>(text: &'a [u8], mut f: impl FnMut(Range<usize>, Piece<'a>)) {
    let mut at = 0;
    while at < text.len() {
        let Some(slash) = memchr(b'\\', &text[at..]).map(|p| at + p) else {
            f(at..text.len(), Piece::Plain(&text[at..]));
            return;
        };
        if slash > at {
            f(at..slash, Piece::Plain(&text[at..slash]));
        }
        let (len, c) = escape(&text[slash..]);
        match c {
            Some(c) => f(slash..slash + len, Piece::Escape(c)),
            // Not an escape: a plain backslash.
            None => f(slash..slash + 1, Piece::Plain(&text[slash..=slash])),
        }
        at = slash + len;
    }
}

/// The escape at the start of `s` (which starts with a backslash): its length and character.
/// `(1, None)` when it is not an escape. A lone surrogate stands for U+FFFD, as a lenient
/// reader would read it.
fn escape(s: &[u8]) -> (usize, Option<Char>) {
    let simple = match s.get(1) {
        Some(b'"') => '"',
        Some(b'\\') => '\\',
        Some(b'/') => '/',
        Some(b'b') => '\u{8}',
        Some(b'f') => '\u{c}',
        Some(b'n') => '\n',
        Some(b'r') => '\r',
        Some(b't') => '\t',
        Some(b'u') => return unicode(s),
        _ => return (1, None),
    };
    (2, Some(char_of(simple)))
}

fn unicode(s: &[u8]) -> (usize, Option<Char>) {
    let Some(unit) = hex4(s.get(2..6)) else {
        return (1, None);
    };
    let c = match unit {
        0xD800..=0xDBFF => {
            let low = (s.get(6..8) == Some(b"\\u"))
                .then(|| hex4(s.get(8..12)))
                .flatten()
                .filter(|low| (0xDC00..=0xDFFF).contains(low));
            if let Some(low) = low {
                let code = 0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00);
                return (12, char::from_u32(code).map(char_of));
            }
            char::REPLACEMENT_CHARACTER
        }
        0xDC00..=0xDFFF => char::REPLACEMENT_CHARACTER,
        unit => char::from_u32(u32::from(unit)).unwrap_or(char::REPLACEMENT_CHARACTER),
    };
    (6, Some(char_of(c)))
}

fn char_of(c: char) -> Char {
    let mut utf8 = [0; 4];
    let len = c.encode_utf8(&mut utf8).len();
    Char { utf8, len }
}

fn hex4(digits: Option<&[u8]>) -> Option<u16> {
    let digits = std::str::from_utf8(digits?).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u16::from_str_radix(digits, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn masked(secret: &str, text: &str) -> String {
        let matcher = AhoCorasick::new([secret]).unwrap();
        let spans = spans(&matcher, text.as_bytes());
        String::from_utf8(replace(text.as_bytes(), &spans, b"[M]")).unwrap()
    }

    #[test]
    fn a_secret_is_masked_where_it_stands_in_any_spelling_and_nothing_else_changes() {
        let s = "sk-live/abc";
        assert_eq!(
            masked(s, r#"{"a":"x \u0073k-live\/abc y","b":"\n\u00e9"}"#),
            r#"{"a":"x [M] y","b":"\n\u00e9"}"#
        );
        assert_eq!(
            masked(
                s,
                r#"\u0073\u006b\u002d\u006c\u0069\u0076\u0065\u002f\u0061\u0062\u0063"#
            ),
            "[M]"
        );
        assert_eq!(masked(s, r"sk-live\/abc\/abc"), r"[M]\/abc");
        assert_eq!(
            masked(s, r"\\u0073k-live/abc"),
            r"\\u0073k-live/abc",
            "an escaped backslash"
        );
        assert_eq!(masked("pässwörd", r"p\u00e4ssw\u00f6rd!"), "[M]!");
        assert_eq!(masked("a😀bcdef", r"a\ud83d\ude00bcdef"), "[M]");
        assert_eq!(masked(s, r"\u12 \ud800 \x"), r"\u12 \ud800 \x");
    }

    #[test]
    fn only_u_and_slash_escapes_may_hide_a_spelling() {
        assert!(may_hide(br#"a\u0041"#) && may_hide(br#"a\/b"#));
        assert!(!may_hide(br#"a\n\"b\\"#));
    }

    #[test]
    fn a_cut_never_splits_an_escape() {
        let text = br"ab\u0041cd\\ef";
        assert_eq!(escape_boundary(text, 1), 1);
        assert_eq!(escape_boundary(text, 3), 8);
        assert_eq!(escape_boundary(text, 8), 8);
        assert_eq!(escape_boundary(text, 11), 12);
    }
}
