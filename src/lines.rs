//! Splits a byte stream into lines with bounded memory: a line longer than the limit is never held
//! whole; only its head is kept and the rest is counted.

use std::collections::VecDeque;
use std::io::{self, Read};

use memchr::memchr_iter;

/// Longest line handed to a parser. Real agent lines (tool outputs included) stay far below this.
pub(crate) const MAX_LINE_BYTES: usize = 4 * 1024 * 1024;

/// What the splitter found in a chunk.
pub(crate) enum Piece<'a> {
    /// A complete line, without its newline.
    Line(&'a [u8]),
    /// A line over the limit ended: its first bytes and its full length.
    Overlong { head: &'a [u8], total: u64 },
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
    pub(crate) fn feed(&mut self, chunk: &[u8], f: impl FnMut(Piece<'_>)) {
        self.feed_some(chunk, usize::MAX, usize::MAX, f);
    }

    /// Feeds the start of `chunk`: at most `max_bytes` of it, and no further than the end of its
    /// `max_lines`th line (a cut inside a line keeps its start). Returns how many bytes it took:
    /// the rest is for the next call. One pass finds the newlines.
    pub(crate) fn feed_some(
        &mut self,
        chunk: &[u8],
        max_lines: usize,
        max_bytes: usize,
        mut f: impl FnMut(Piece<'_>),
    ) -> usize {
        let window = &chunk[..chunk.len().min(max_bytes)];
        let (mut at, mut lines) = (0, 0);
        for nl in memchr_iter(b'\n', window) {
            let line = &window[at..nl];
            at = nl + 1;
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
            lines += 1;
            if lines == max_lines {
                return at;
            }
        }
        if at < window.len() {
            self.push_pending(&window[at..]);
        }
        window.len()
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

/// A line read by [`LineReader`]: whole, or only its head when it was over the limit.
pub(crate) struct OwnedLine {
    /// The line without its newline, or its first bytes when it was overlong.
    pub bytes: Vec<u8>,
    /// The whole line's length.
    pub total: u64,
    /// Whether the line ended with a newline (only the last line of a file may not).
    pub newline: bool,
}

impl OwnedLine {
    pub(crate) fn is_overlong(&self) -> bool {
        self.total > self.bytes.len() as u64
    }

    /// The line as the splitter would have handed it over.
    pub(crate) fn piece(&self) -> Piece<'_> {
        if self.is_overlong() {
            Piece::Overlong {
                head: &self.bytes,
                total: self.total,
            }
        } else {
            Piece::Line(&self.bytes)
        }
    }
}

/// Reads a file (or any reader) line by line with bounded memory: at most one read's worth of
/// lines and one line of at most `limit` bytes are held at a time.
pub(crate) struct LineReader<R> {
    reader: R,
    splitter: LineSplitter,
    ready: VecDeque<OwnedLine>,
    buf: Vec<u8>,
    done: bool,
}

/// How much one read takes.
const READ_SIZE: usize = 64 * 1024;

impl<R: Read> LineReader<R> {
    pub(crate) fn new(reader: R, limit: usize) -> Self {
        Self {
            reader,
            splitter: LineSplitter::new(limit),
            ready: VecDeque::new(),
            buf: vec![0; READ_SIZE],
            done: false,
        }
    }

    /// The next line; `None` at the end.
    pub(crate) fn next_line(&mut self) -> io::Result<Option<OwnedLine>> {
        while self.ready.is_empty() && !self.done {
            let n = match self.reader.read(&mut self.buf) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            let ready = &mut self.ready;
            if n == 0 {
                self.done = true;
                self.splitter
                    .finish(|piece| ready.push_back(owned(piece, false)));
            } else {
                self.splitter
                    .feed(&self.buf[..n], |piece| ready.push_back(owned(piece, true)));
            }
        }
        Ok(self.ready.pop_front())
    }
}

fn owned(piece: Piece<'_>, newline: bool) -> OwnedLine {
    match piece {
        Piece::Line(line) => OwnedLine {
            bytes: line.to_vec(),
            total: line.len() as u64,
            newline,
        },
        Piece::Overlong { head, total } => OwnedLine {
            bytes: head.to_vec(),
            total,
            newline,
        },
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

    /// Feeds `chunk` a batch at a time, as the stdout reader does: the lines of each batch.
    fn batches(chunk: &[u8], max_lines: usize, max_bytes: usize) -> Vec<Vec<String>> {
        let mut s = LineSplitter::new(MAX_LINE_BYTES);
        let (mut rest, mut batches) = (chunk, Vec::new());
        while !rest.is_empty() {
            let mut batch = Vec::new();
            let took = s.feed_some(rest, max_lines, max_bytes, |p| {
                if let Piece::Line(l) = p {
                    batch.push(String::from_utf8_lossy(l).into_owned());
                }
            });
            assert!(took > 0, "a call takes something");
            rest = &rest[took..];
            batches.push(batch);
        }
        s.finish(|p| {
            if let Piece::Line(l) = p {
                batches.push(vec![String::from_utf8_lossy(l).into_owned()]);
            }
        });
        batches
    }

    #[test]
    fn a_batch_ends_after_so_many_lines_or_bytes_and_no_line_is_lost() {
        let tiny = b"x\n".repeat(5000);
        let by_lines = batches(&tiny, 512, 1 << 20);
        assert_eq!(by_lines.len(), 5000usize.div_ceil(512));
        assert!(
            by_lines[..by_lines.len() - 1]
                .iter()
                .all(|b| b.len() == 512)
        );
        assert_eq!(by_lines.concat().len(), 5000);

        // A cut inside a line keeps its start for the next batch; the last line, unfinished,
        // comes at the end.
        let by_bytes = batches(b"aaaa\nbbbbbbbbbb\ncc\ndd", 100, 7);
        assert_eq!(
            by_bytes,
            [vec!["aaaa"], vec![], vec!["bbbbbbbbbb", "cc"], vec!["dd"]]
        );
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

    #[test]
    fn a_line_reader_keeps_only_the_head_of_a_huge_line_and_knows_an_unfinished_last_line() {
        let mut input = b"first\n".to_vec();
        input.extend(std::iter::repeat_n(b'x', 200_000));
        input.extend_from_slice(b"\nlast");
        let mut reader = LineReader::new(&input[..], 1000);
        let mut lines = Vec::new();
        while let Some(line) = reader.next_line().unwrap() {
            lines.push((
                line.bytes.len(),
                line.total,
                line.is_overlong(),
                line.newline,
            ));
        }
        assert_eq!(
            lines,
            [
                (5, 5, false, true),
                (1000, 200_000, true, true),
                (4, 4, false, false)
            ]
        );
    }
}
