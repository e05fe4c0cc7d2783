//! Splits a byte stream into lines with bounded memory: a line longer than the limit is never held
//! whole; only its head is kept and the rest is counted.

use memchr::memchr;

/// Longest line handed to a parser. Real agent lines (tool outputs included) stay far below this.
pub(crate) const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// What the splitter found in a chunk.
pub(crate) enum Piece<'a> {
    /// A complete line, without its newline.
    Line(&'a [u8]),
    /// A line over the limit ended: its first bytes and its full length.
    Overlong { head: &'a [u8], total: u64 },
}

impl<'a> Piece<'a> {
    /// A line already cut from its stream, as the splitter would hand it over.
    pub(crate) fn of(line: &'a [u8]) -> Self {
        if line.len() <= MAX_LINE_BYTES {
            Piece::Line(line)
        } else {
            Piece::Overlong {
                head: &line[..MAX_LINE_BYTES],
                total: line.len() as u64,
            }
        }
    }
}

/// Turns chunks into lines. Keeps at most `limit` bytes of a pending line.
pub(crate) struct LineSplitter {
    limit: usize,
    pending: Vec<u8>,
    /// Bytes of the current line seen beyond `pending` (non-zero only for an overlong line).
    overflow: u64,
}

impl LineSplitter {
    pub(crate) fn new(limit: usize) -> Self {
        Self {
            limit,
            pending: Vec::new(),
            overflow: 0,
        }
    }

    /// Feeds one chunk; calls `f` for every line it completes, in order.
    pub(crate) fn feed(&mut self, mut chunk: &[u8], mut f: impl FnMut(Piece<'_>)) {
        while let Some(nl) = memchr(b'\n', chunk) {
            let (line, rest) = (&chunk[..nl], &chunk[nl + 1..]);
            if self.pending.is_empty() && self.overflow == 0 {
                // The common case: a whole line inside one chunk, handed over without copying.
                if line.len() <= self.limit {
                    f(Piece::Line(line));
                } else {
                    f(Piece::Overlong {
                        head: &line[..self.limit.min(line.len())],
                        total: line.len() as u64,
                    });
                }
            } else {
                self.push_pending(line);
                self.flush_line(&mut f);
            }
            chunk = rest;
        }
        if !chunk.is_empty() {
            self.push_pending(chunk);
        }
    }

    /// Ends the stream: a last line without a newline is still a line.
    pub(crate) fn finish(&mut self, mut f: impl FnMut(Piece<'_>)) {
        if !self.pending.is_empty() || self.overflow > 0 {
            self.flush_line(&mut f);
        }
    }

    fn push_pending(&mut self, bytes: &[u8]) {
        let room = self.limit.saturating_sub(self.pending.len());
        let take = room.min(bytes.len());
        self.pending.extend_from_slice(&bytes[..take]);
        self.overflow += (bytes.len() - take) as u64;
    }

    fn flush_line(&mut self, f: &mut impl FnMut(Piece<'_>)) {
        if self.overflow == 0 {
            f(Piece::Line(&self.pending));
        } else {
            let total = self.pending.len() as u64 + self.overflow;
            f(Piece::Overlong {
                head: &self.pending,
                total,
            });
        }
        self.pending.clear();
        self.overflow = 0;
        // Give back the memory of an unusually long line.
        if self.pending.capacity() > 1024 * 1024 {
            self.pending.shrink_to(64 * 1024);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(limit: usize, chunks: &[&[u8]]) -> Vec<String> {
        let mut s = LineSplitter::new(limit);
        let mut out = Vec::new();
        let mut push = |p: Piece<'_>| {
            out.push(match p {
                Piece::Line(l) => String::from_utf8_lossy(l).into_owned(),
                Piece::Overlong { head, total } => {
                    format!("LONG({},{total})", String::from_utf8_lossy(head))
                }
            });
        };
        for c in chunks {
            s.feed(c, &mut push);
        }
        s.finish(&mut push);
        out
    }

    #[test]
    fn lines_split_across_chunks_are_joined() {
        assert_eq!(
            split(100, &[b"ab", b"c\nde", b"f\n", b"g"]),
            ["abc", "def", "g"]
        );
        assert_eq!(split(100, &[b"\n\n"]), ["", ""]);
    }

    #[test]
    fn overlong_lines_keep_only_their_head_and_length() {
        assert_eq!(split(4, &[b"abcdefgh\nok\n"]), ["LONG(abcd,8)", "ok"]);
        assert_eq!(
            split(4, &[b"abc", b"defgh", b"ij\nok"]),
            ["LONG(abcd,10)", "ok"]
        );
    }

    #[test]
    fn memory_stays_bounded_for_a_huge_line() {
        let mut s = LineSplitter::new(1024);
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..800 {
            s.feed(&chunk, |_| panic!("no line yet"));
            assert!(s.pending.capacity() <= 64 * 1024 * 2);
        }
        let mut total = 0;
        s.feed(b"\n", |p| {
            if let Piece::Overlong { total: t, .. } = p {
                total = t;
            }
        });
        assert_eq!(total, 800 * 64 * 1024);
    }
}
