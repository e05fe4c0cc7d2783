//! A log with a cap: its first half is written as it comes, the last half is kept in memory as
//! it goes and written at the end, after one line that says how much was cut between them. A
//! child that writes without end fills neither the disk nor memory.

use std::io::{self, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use super::{Masked, MaskedWriter};

/// Room kept for the line about the cut.
const CUT_LINE_ROOM: usize = 256;

/// Bytes a log left out, shared with whoever reports them.
pub(crate) type Cut = Arc<AtomicU64>;

/// How much a log may hold, and where it counts what it leaves out.
#[derive(Debug, Clone)]
pub(crate) struct Cap {
    pub bytes: u64,
    pub cut: Cut,
}

/// A masking writer fed only bytes a masker already went over (a pump's stream), as `Write`.
pub(super) struct MaskedOut<W: Write>(pub(super) MaskedWriter<W>);

impl<W: Write> Write for MaskedOut<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.write(&Masked::made_of_masked(buf))
    }

    fn flush(&mut self) -> io::Result<()> {
        self.0.flush()
    }
}

/// The writing end of a capped log.
pub(super) struct Capped<W: Write> {
    out: W,
    cap: usize,
    /// Room left for the head.
    head_room: usize,
    /// The last bytes seen once the head is full, as a ring.
    tail: Vec<u8>,
    tail_cap: usize,
    /// Where the next byte goes in `tail` once it is full.
    at: usize,
    /// Bytes seen after the head.
    after_head: u64,
    ended_line: bool,
    /// Where the bytes left out are counted as they are, and how many this log counted there.
    cut: Cut,
    counted: u64,
}

impl<W: Write> Capped<W> {
    pub(super) fn new(out: W, cap: &Cap) -> Self {
        let cut = &cap.cut;
        let cap = cap.bytes;
        let cap = usize::try_from(cap).unwrap_or(usize::MAX);
        let head_room = cap / 2;
        Self {
            out,
            cap,
            head_room,
            tail: Vec::new(),
            tail_cap: cap.saturating_sub(head_room).saturating_sub(CUT_LINE_ROOM),
            at: 0,
            after_head: 0,
            ended_line: true,
            cut: Arc::clone(cut),
            counted: 0,
        }
    }

    pub(super) fn take(&mut self, mut bytes: &[u8]) -> io::Result<()> {
        if self.head_room > 0 {
            let n = bytes.len().min(self.head_room);
            self.out.write_all(&bytes[..n])?;
            if n > 0 {
                self.ended_line = bytes[n - 1] == b'\n';
            }
            self.head_room -= n;
            bytes = &bytes[n..];
        }
        self.after_head += bytes.len() as u64;
        let cut = self.after_head.saturating_sub(self.tail_cap as u64);
        self.cut.fetch_add(cut - self.counted, Ordering::Relaxed);
        self.counted = cut;
        if self.tail_cap == 0 {
            return Ok(());
        }
        if bytes.len() >= self.tail_cap {
            bytes = &bytes[bytes.len() - self.tail_cap..];
        }
        if self.tail.len() < self.tail_cap {
            let n = bytes.len().min(self.tail_cap - self.tail.len());
            self.tail.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        while !bytes.is_empty() {
            let n = bytes.len().min(self.tail_cap - self.at);
            self.tail[self.at..self.at + n].copy_from_slice(&bytes[..n]);
            self.at = (self.at + n) % self.tail_cap;
            bytes = &bytes[n..];
        }
        Ok(())
    }

    /// Writes the line about the cut, if anything was, and the tail.
    pub(super) fn finish(mut self) -> io::Result<()> {
        let (newest, oldest) = self.tail.split_at(self.at);
        let dropped = self.counted;
        if dropped > 0 {
            let newline = if self.ended_line { "" } else { "\n" };
            writeln!(
                self.out,
                "{newline}[runbook: {dropped} bytes of output cut here; the log keeps its first and last bytes, {} bytes at most]",
                self.cap
            )?;
        }
        self.out.write_all(oldest)?;
        self.out.write_all(newest)?;
        self.out.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn capped(input: &[u8], cap: u64) -> (Vec<u8>, u64) {
        let cut = Cut::default();
        let mut out = Vec::new();
        // Fed in odd-sized pieces, as a pipe would.
        let mut log = Capped::new(
            &mut out,
            &Cap {
                bytes: cap,
                cut: Arc::clone(&cut),
            },
        );
        for piece in input.chunks(7) {
            log.take(piece).unwrap();
        }
        log.finish().unwrap();
        (out, cut.load(Ordering::Relaxed))
    }

    #[test]
    fn output_under_the_cap_is_kept_whole() {
        let input: Vec<u8> = (0..1000u32)
            .flat_map(|i| format!("{i}\n").into_bytes())
            .collect();
        assert_eq!(capped(&input, 64 * 1024), (input, 0));
    }

    #[test]
    fn output_over_the_cap_keeps_its_head_and_tail_and_says_what_was_cut() {
        let input: Vec<u8> = (0..100_000u32)
            .flat_map(|i| format!("line {i}\n").into_bytes())
            .collect();
        let cap = 4096;
        let (out, cut) = capped(&input, cap);
        assert!(out.len() as u64 <= cap, "{} bytes", out.len());
        assert!(out.starts_with(b"line 0\nline 1\n"));
        assert!(out.ends_with(b"line 99998\nline 99999\n"));
        let (head, tail) = (2048, 4096 - 2048 - CUT_LINE_ROOM);
        assert_eq!(&out[..head], &input[..head]);
        assert!(out.ends_with(&input[input.len() - tail..]));
        assert_eq!(cut, (input.len() - head - tail) as u64);
        let text = String::from_utf8(out).unwrap();
        assert!(
            text.contains(&format!("\n[runbook: {cut} bytes of output cut here;")),
            "{text}"
        );
    }
}
