//! A validating JSON cursor for the fast path of a line parser: it reads the common shape of a
//! line much faster than a general deserializer, and gives up (`None`) on anything unusual.
//!
//! Its contract is one-sided: whatever it accepts, serde_json accepts with the same values; when it
//! gives up, the caller parses the line with serde_json, which decides. So it may refuse valid
//! JSON (a line with tabs or newlines between tokens, an escaped key, deep nesting, a number it
//! does not read itself) but must never accept what serde_json would refuse.

use std::borrow::Cow;

use memchr::{memchr, memchr2};

/// Nesting deeper than this (in skipped values) is left to serde_json.
const MAX_DEPTH: u32 = 64;

/// Reads one JSON text. Only for text without control bytes (< 0x20): whitespace is then only
/// spaces, and a string's contents need no check for raw control characters.
#[derive(Clone)]
pub(crate) struct Cursor<'a> {
    text: &'a str,
    pos: usize,
}

/// A string's contents as written (between the quotes), escapes already checked for syntax.
#[derive(Clone, Copy)]
pub(crate) struct RawStr<'a> {
    raw: &'a str,
    escaped: bool,
}

impl<'a> Cursor<'a> {
    /// `None` when the text has a control byte anywhere.
    pub(crate) fn new(text: &'a str) -> Option<Self> {
        (!has_control_byte(text.as_bytes())).then_some(Self { text, pos: 0 })
    }

    /// For text that is printable ASCII throughout (most lines): one pass checks both that it is
    /// UTF-8 and that it has no control byte. `None` for any other text.
    pub(crate) fn ascii(bytes: &'a [u8]) -> Option<Self> {
        if !is_printable_ascii(bytes) {
            return None;
        }
        // SAFETY: every byte is ASCII (0x20..0x80), so the bytes are UTF-8.
        let text = unsafe { std::str::from_utf8_unchecked(bytes) };
        Some(Self { text, pos: 0 })
    }

    fn bytes(&self) -> &'a [u8] {
        self.text.as_bytes()
    }

    /// The next byte after any spaces, not consumed.
    fn peek(&mut self) -> Option<u8> {
        let bytes = self.bytes();
        while bytes.get(self.pos) == Some(&b' ') {
            self.pos += 1;
        }
        bytes.get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> Option<()> {
        (self.peek()? == byte).then(|| self.pos += 1)
    }

    /// Only spaces are left.
    pub(crate) fn end(&mut self) -> Option<()> {
        self.peek().is_none().then_some(())
    }

    /// The next byte after any spaces, not consumed.
    pub(crate) fn next_byte(&mut self) -> Option<u8> {
        self.peek()
    }

    /// Where the cursor is, for [`Cursor::since`].
    pub(crate) fn offset(&mut self) -> usize {
        self.peek();
        self.pos
    }

    /// The text read since `offset`.
    pub(crate) fn since(&self, offset: usize) -> &'a str {
        &self.text[offset..self.pos]
    }

    /// Whether the next value is a string (nothing consumed).
    pub(crate) fn starts_string(&mut self) -> bool {
        self.peek() == Some(b'"')
    }

    /// `null`, consumed; false (and nothing consumed) for anything else.
    pub(crate) fn null(&mut self) -> bool {
        if self.peek() == Some(b'n') && self.bytes()[self.pos..].starts_with(b"null") {
            self.pos += 4;
            true
        } else {
            false
        }
    }

    pub(crate) fn string(&mut self) -> Option<RawStr<'a>> {
        self.eat(b'"')?;
        let bytes = self.bytes();
        let start = self.pos;
        let mut escaped = false;
        loop {
            self.pos = find_quote_or_backslash(bytes, self.pos)?;
            if bytes[self.pos] == b'"' {
                let raw = &self.text[start..self.pos];
                self.pos += 1;
                return Some(RawStr { raw, escaped });
            }
            escaped = true;
            self.pos += match bytes.get(self.pos + 1)? {
                b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => 2,
                b'u' => {
                    hex4(bytes.get(self.pos + 2..self.pos + 6)?)?;
                    6
                }
                _ => return None,
            };
        }
    }

    /// A number as written, checked against JSON's grammar.
    pub(crate) fn number(&mut self) -> Option<&'a str> {
        self.peek()?;
        let bytes = self.bytes();
        let start = self.pos;
        let digits = |pos: &mut usize| {
            let from = *pos;
            while bytes.get(*pos).is_some_and(u8::is_ascii_digit) {
                *pos += 1;
            }
            *pos - from
        };
        let mut pos = self.pos;
        if bytes[pos] == b'-' {
            pos += 1;
        }
        match bytes.get(pos)? {
            b'0' => pos += 1,
            b'1'..=b'9' => {
                digits(&mut pos);
            }
            _ => return None,
        }
        if bytes.get(pos) == Some(&b'.') {
            pos += 1;
            if digits(&mut pos) == 0 {
                return None;
            }
        }
        if matches!(bytes.get(pos), Some(b'e' | b'E')) {
            pos += 1;
            if matches!(bytes.get(pos), Some(b'+' | b'-')) {
                pos += 1;
            }
            if digits(&mut pos) == 0 {
                return None;
            }
        }
        // A digit right after the number (`01`) is not JSON.
        if bytes.get(pos).is_some_and(u8::is_ascii_digit) {
            return None;
        }
        self.pos = pos;
        Some(&self.text[start..pos])
    }

    /// An integer written without fraction or exponent, well inside `i64`.
    pub(crate) fn i64(&mut self) -> Option<i64> {
        let n = self.number()?;
        let digits = n.strip_prefix('-').unwrap_or(n);
        if digits.len() > 18 || !digits.bytes().all(|b| b.is_ascii_digit()) || n == "-0" {
            return None;
        }
        n.parse().ok()
    }

    pub(crate) fn bool(&mut self) -> Option<bool> {
        let next = self.peek()?;
        let rest = &self.bytes()[self.pos..];
        match next {
            b't' if rest.starts_with(b"true") => {
                self.pos += 4;
                Some(true)
            }
            b'f' if rest.starts_with(b"false") => {
                self.pos += 5;
                Some(false)
            }
            _ => None,
        }
    }

    /// Exactly these bytes next, with no space before them: the punctuation and keys of a line
    /// in the one layout its agent writes, read without looking at each token.
    pub(crate) fn lit(&mut self, bytes: &[u8]) -> Option<()> {
        let end = self.pos + bytes.len();
        (self.bytes().get(self.pos..end)? == bytes).then(|| self.pos = end)
    }

    /// An object's key and its `:`, for a caller that reads the object's members itself. Keys
    /// with escapes are given up on, as [`Cursor::object`] does.
    pub(crate) fn key(&mut self) -> Option<&'a str> {
        let key = self.string()?;
        if key.escaped {
            return None;
        }
        self.eat(b':')?;
        Some(key.raw)
    }

    /// An object: `member` is called with each key and must read that key's value. Keys with
    /// escapes are given up on (they may spell a known key).
    pub(crate) fn object(
        &mut self,
        mut member: impl FnMut(&mut Self, &'a str) -> Option<()>,
    ) -> Option<()> {
        self.items(b'{', b'}', |c| {
            let key = c.string()?;
            if key.escaped {
                return None;
            }
            c.eat(b':')?;
            member(c, key.raw)
        })
    }

    /// An array: `element` is called for each element and must read it.
    pub(crate) fn array(&mut self, element: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.items(b'[', b']', element)
    }

    /// `open`, then items separated by commas (`item` reads one), then `close`.
    fn items(
        &mut self,
        open: u8,
        close: u8,
        mut item: impl FnMut(&mut Self) -> Option<()>,
    ) -> Option<()> {
        self.eat(open)?;
        if self.peek()? == close {
            self.pos += 1;
            return Some(());
        }
        loop {
            item(self)?;
            match self.peek()? {
                b',' => self.pos += 1,
                next if next == close => {
                    self.pos += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Any value, checked and skipped, as written.
    pub(crate) fn raw(&mut self) -> Option<&'a str> {
        self.peek()?;
        let start = self.pos;
        self.skip()?;
        Some(&self.text[start..self.pos])
    }

    /// Any value read as `T` by serde_json itself, for fields that are rare or whose reading
    /// is serde_json's own (a `Value`, a number kept as written): the fast path then cannot
    /// read them differently.
    pub(crate) fn typed<T: serde::Deserialize<'a>>(&mut self) -> Option<T> {
        serde_json::from_str(self.raw()?).ok()
    }

    /// Any value, checked and skipped.
    pub(crate) fn skip(&mut self) -> Option<()> {
        self.skip_nested(MAX_DEPTH)
    }

    fn skip_nested(&mut self, depth: u32) -> Option<()> {
        let next = self.peek()?;
        let rest = &self.bytes()[self.pos..];
        match next {
            b'"' => self.string().map(drop),
            b'{' if depth > 0 => self.object(|c, _| c.skip_nested(depth - 1)),
            b'[' if depth > 0 => self.array(|c| c.skip_nested(depth - 1)),
            b'-' | b'0'..=b'9' => self.number().map(drop),
            b't' | b'f' => self.bool().map(drop),
            b'n' if rest.starts_with(b"null") => {
                self.pos += 4;
                Some(())
            }
            _ => None,
        }
    }
}

/// Sets a field seen for the first time; a field given twice is an error for serde.
pub(crate) fn once<T>(slot: &mut Option<T>, value: T) -> Option<()> {
    slot.is_none().then(|| *slot = Some(value))
}

/// An `Option` field: `null` is `None`.
pub(crate) fn option<'a, T>(
    c: &mut Cursor<'a>,
    read: impl FnOnce(&mut Cursor<'a>) -> Option<T>,
) -> Option<Option<T>> {
    if c.null() {
        Some(None)
    } else {
        read(c).map(Some)
    }
}

/// A string's value, borrowed when it has no escapes.
pub(crate) fn string<'a>(c: &mut Cursor<'a>) -> Option<Cow<'a, str>> {
    c.string()?.value()
}

/// A string's value, owned.
pub(crate) fn owned(c: &mut Cursor<'_>) -> Option<String> {
    string(c).map(Cow::into_owned)
}

/// A string that is nearly always one of a few names (a line's or an item's `type`): one that
/// `known` knows is not copied, so that a line of tiny events does not allocate for its names.
pub(crate) fn name(c: &mut Cursor<'_>, known: fn(&str) -> Option<&'static str>) -> Option<Name> {
    let value = string(c)?;
    Some(Name(match known(&value) {
        Some(known) => Cow::Borrowed(known),
        None => Cow::Owned(value.into_owned()),
    }))
}

/// `names!(kind = ["a", "b"])` makes `fn kind(&str) -> Option<&'static str>`, which finds a name
/// of the list with a `match`: a switch on the length and comparisons the compiler writes inline,
/// where a search of a list calls `memcmp` for each name of the same length.
macro_rules! names {
    ($(#[$doc:meta])* $fn:ident = [$($name:literal),* $(,)?] $(,)?) => {
        $(#[$doc])*
        fn $fn(s: &str) -> Option<&'static str> {
            match s {
                $($name => Some($name),)*
                _ => None,
            }
        }
    };
}
pub(crate) use names;

/// A string field read as serde reads a `String`, which [`name`] need not copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Name(Cow<'static, str>);

impl Name {
    /// One of the names a fast path knows.
    #[cfg(any(test, feature = "fuzzing"))]
    pub(crate) const fn known(name: &'static str) -> Self {
        Self(Cow::Borrowed(name))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::ops::Deref for Name {
    type Target = str;

    fn deref(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for Name {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        *self.0 == **other
    }
}

impl<'de> serde::Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        String::deserialize(d).map(|s| Self(Cow::Owned(s)))
    }
}

impl<'a> RawStr<'a> {
    /// The string's value, borrowed when it has no escapes. `None` for a lone surrogate.
    pub(crate) fn value(self) -> Option<Cow<'a, str>> {
        if !self.escaped {
            return Some(Cow::Borrowed(self.raw));
        }
        let mut out = String::with_capacity(self.raw.len());
        self.decode(|piece| match piece {
            Piece::Str(s) => out.push_str(s),
            Piece::Char(c) => out.push(c),
        })?;
        Some(Cow::Owned(out))
    }

    /// The length in bytes of the string's value, without making it. `None` for a lone surrogate.
    pub(crate) fn len(self) -> Option<usize> {
        if !self.escaped {
            return Some(self.raw.len());
        }
        let mut len = 0;
        self.decode(|piece| match piece {
            Piece::Str(s) => len += s.len(),
            Piece::Char(c) => len += c.len_utf8(),
        })?;
        Some(len)
    }

    /// Walks the value in pieces, decoding escapes as serde_json does for a `str`: a surrogate
    /// must be a leading one followed by a trailing one.
    fn decode(self, mut piece: impl FnMut(Piece<'_>)) -> Option<()> {
        let raw = self.raw;
        let bytes = raw.as_bytes();
        let mut at = 0;
        while let Some(found) = memchr(b'\\', &bytes[at..]) {
            piece(Piece::Str(&raw[at..at + found]));
            at += found + 1;
            let c = match *bytes.get(at)? {
                b'"' => '"',
                b'\\' => '\\',
                b'/' => '/',
                b'b' => '\x08',
                b'f' => '\x0c',
                b'n' => '\n',
                b'r' => '\r',
                b't' => '\t',
                b'u' => {
                    let n = u32::from(hex4(bytes.get(at + 1..at + 5)?)?);
                    at += 4;
                    match n {
                        0xD800..=0xDBFF => {
                            if bytes.get(at + 1..at + 3)? != b"\\u" {
                                return None;
                            }
                            let low = u32::from(hex4(bytes.get(at + 3..at + 7)?)?);
                            if !(0xDC00..=0xDFFF).contains(&low) {
                                return None;
                            }
                            at += 6;
                            char::from_u32(0x1_0000 + ((n - 0xD800) << 10) + (low - 0xDC00))?
                        }
                        0xDC00..=0xDFFF => return None,
                        _ => char::from_u32(n)?,
                    }
                }
                _ => return None,
            };
            piece(Piece::Char(c));
            at += 1;
        }
        piece(Piece::Str(&raw[at..]));
        Some(())
    }
}

enum Piece<'s> {
    Str(&'s str),
    Char(char),
}

/// The first `"` or `\\` at or after `from`. Most strings in a line are short (keys, ids): eight
/// bytes at a time in a register finds their end sooner than a call to the vectorized search,
/// which takes over for long ones.
fn find_quote_or_backslash(bytes: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::MAX / 255;
    const HIGHS: u64 = ONES << 7;
    let mut at = from;
    while at < from + 32 {
        let Some(word) = bytes.get(at..at + 8) else {
            let tail = bytes.get(at..)?;
            return Some(at + tail.iter().position(|&b| b == b'"' || b == b'\\')?);
        };
        let word = u64::from_le_bytes(word.try_into().expect("eight bytes"));
        let quote = word ^ (ONES * u64::from(b'"'));
        let backslash = word ^ (ONES * u64::from(b'\\'));
        // A byte of `quote` or `backslash` is zero where the word has that character; the lowest
        // flagged byte is exact.
        let found =
            (quote.wrapping_sub(ONES) & !quote | backslash.wrapping_sub(ONES) & !backslash) & HIGHS;
        if found != 0 {
            return Some(at + found.trailing_zeros() as usize / 8);
        }
        at += 8;
    }
    Some(at + memchr2(b'"', b'\\', &bytes[at..])?)
}

fn hex4(digits: &[u8]) -> Option<u16> {
    let mut n = 0u16;
    for &d in digits {
        n = n << 4 | u16::from(char::from(d).to_digit(16)? as u8);
    }
    Some(n)
}

/// Whether every byte is in 0x20..0x80; 32 bytes at a time, like [`has_control_byte`].
fn is_printable_ascii(bytes: &[u8]) -> bool {
    // One comparison per byte: below 0x20 wraps around to a large value.
    let outside = |b: u8| b.wrapping_sub(0x20) >= 0x60;
    let block_outside = |block: &[u8]| block.iter().fold(false, |any, &b| any | outside(b));
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        if block_outside(block) {
            return false;
        }
    }
    // The last bytes as one more block that overlaps the one before, rather than one at a time.
    match bytes.len() {
        0..32 => !blocks.remainder().iter().any(|&b| outside(b)),
        n => !block_outside(&bytes[n - 32..]),
    }
}

/// Whether any byte is below 0x20; 32 bytes at a time, which the compiler turns into a few
/// vector instructions.
fn has_control_byte(bytes: &[u8]) -> bool {
    let mut blocks = bytes.chunks_exact(32);
    for block in &mut blocks {
        if block.iter().fold(false, |any, &b| any | (b < 0x20)) {
            return true;
        }
    }
    blocks.remainder().iter().any(|&b| b < 0x20)
}

/// Every line of the recorded transcripts of one agent (`fixtures/AGENT/*.stdout.ndjson`).
#[cfg(test)]
pub(crate) fn fixture_lines(agent: &str) -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(agent);
    let mut paths: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().ends_with(".stdout.ndjson"))
        .collect();
    paths.sort();
    paths
        .iter()
        .flat_map(|p| {
            let text = std::fs::read_to_string(p).unwrap();
            text.lines()
                .filter(|l| !l.trim().is_empty())
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect()
}

/// Mangles each line `times` times (1 to 3 random edits: a JSON token inserted, bytes removed or
/// replaced, a piece repeated) and asks `read` about each; returns how many were tried and for
/// how many `read` said yes.
#[cfg(test)]
pub(crate) fn mangled(
    lines: &[String],
    times: usize,
    mut read: impl FnMut(&str) -> bool,
) -> (usize, usize) {
    const ALPHABET: &[&str] = &[
        "\"", "\\", "{", "}", "[", "]", ",", ":", " ", "0", "1", "9", "-", "+", ".", "e", "E", "u",
        "n", "t", "f", "a", "l", "s", "r", "x", "/", "\t", "\n", "null", "true", "[]", "{}",
        "\"\"", "1.5", "\\u", "\\ud800", "\\udc00", "é", "😀", "\u{7f}",
    ];
    let mut rng = fastrand::Rng::with_seed(0x5eed);
    let (mut tried, mut accepted) = (0, 0);
    let boundary = |text: &str, mut at: usize, up: bool| {
        at = at.min(text.len());
        while !text.is_char_boundary(at) {
            if up { at += 1 } else { at -= 1 }
        }
        at
    };
    for original in lines {
        for _ in 0..times {
            let mut text = original.clone();
            for _ in 0..rng.usize(1..4) {
                let at = boundary(&text, rng.usize(0..=text.len()), false);
                let token = ALPHABET[rng.usize(..ALPHABET.len())];
                match rng.u8(0..4) {
                    0 => text.insert_str(at, token),
                    1 => {
                        let end = boundary(&text, at + rng.usize(1..4), true);
                        text.replace_range(at..end, "");
                    }
                    2 => {
                        let end = boundary(&text, at + rng.usize(1..3), true);
                        text.replace_range(at..end, token);
                    }
                    _ => {
                        let end = boundary(&text, at + rng.usize(1..40), true);
                        let piece = text[at..end].to_owned();
                        text.insert_str(at, &piece);
                    }
                }
            }
            tried += 1;
            accepted += usize::from(read(&text));
        }
    }
    (tried, accepted)
}

/// Whatever a fast path accepts (`fast`, its reading of `text`), serde_json accepts with the
/// same value: panics otherwise, and says whether the fast path read the line.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn same_as_serde<'a, T>(text: &'a str, fast: Option<T>) -> bool
where
    T: PartialEq + std::fmt::Debug + serde::Deserialize<'a>,
{
    let Some(fast) = fast else {
        return false;
    };
    match serde_json::from_str::<T>(text) {
        Ok(slow) => assert_eq!(fast, slow, "{text}"),
        Err(e) => panic!("the fast path read what serde_json refuses ({e}): {text}"),
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_decode_as_serde_json_decodes_them() {
        for json in [
            r#""plain""#,
            r#""a\"b\\c\/d\be\ff\ng\rh\ti""#,
            r#""\u0041\u00e9\u4e2d\ud83d\ude00""#,
            r#""caf\u00e9 ☕""#,
            r#""""#,
        ] {
            let expected: String = serde_json::from_str(json).unwrap();
            let mut c = Cursor::new(json).unwrap();
            let s = c.string().unwrap();
            assert_eq!(s.value().unwrap(), expected, "{json}");
            assert_eq!(s.len().unwrap(), expected.len(), "{json}");
            assert!(c.end().is_some());
        }
        for json in [
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\ud83d\u0041""#,
            r#""\ud83dx""#,
            r#""\x""#,
            r#""\u12""#,
            r#""\u12g4""#,
            r#""open"#,
        ] {
            assert!(serde_json::from_str::<String>(json).is_err(), "{json}");
            let fast = Cursor::new(json).and_then(|mut c| c.string()?.value());
            assert!(fast.is_none(), "{json}");
        }
    }

    #[test]
    fn numbers_follow_the_json_grammar() {
        for (json, ok) in [
            ("0", true),
            ("-0.5e+10", true),
            ("12", true),
            ("1.", false),
            ("01", false),
            ("-", false),
            ("1e", false),
            (".5", false),
            ("+1", false),
        ] {
            let fast = Cursor::new(json).and_then(|mut c| {
                c.number()?;
                c.end()
            });
            assert_eq!(fast.is_some(), ok, "{json}");
            assert_eq!(serde_json::from_str::<f64>(json).is_ok(), ok, "{json}");
        }
    }

    #[test]
    fn control_bytes_are_found_anywhere() {
        let mut line = vec![b'a'; 100];
        assert!(!has_control_byte(&line));
        assert!(is_printable_ascii(&line));
        for at in [0, 31, 32, 63, 64, 99] {
            for odd in [b'\t', 0, 0x1f] {
                line[at] = odd;
                assert!(has_control_byte(&line), "{at}");
                assert!(!is_printable_ascii(&line), "{at}");
            }
            for odd in [0x80, 0xc3, 0xff] {
                line[at] = odd;
                assert!(!has_control_byte(&line), "{at}");
                assert!(!is_printable_ascii(&line), "{at}");
            }
            line[at] = 0x7f;
            assert!(is_printable_ascii(&line), "{at}");
            line[at] = b'a';
        }
        // Every length, the odd byte anywhere: the blocks, the overlapping last block and the
        // bytes of a short line one at a time.
        for len in 1..100 {
            let mut line = vec![b' '; len];
            assert!(is_printable_ascii(&line), "{len}");
            for at in 0..len {
                for odd in [0x1f, 0x80] {
                    line[at] = odd;
                    assert!(!is_printable_ascii(&line), "{len} {at}");
                }
                line[at] = b'~';
            }
        }
    }
}
