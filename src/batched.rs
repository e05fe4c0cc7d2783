//! Output for a batch of events, collected and written in one call when the batch is done: one
//! system call per batch, and a reader of the file or pipe only ever sees whole lines.

use std::io::{self, Write};

use serde::Serialize;

use crate::consumer::Delivery;

/// Lines collected until [`Write::flush`].
pub(crate) struct Batched<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> Batched<W> {
    pub(crate) fn new(out: W) -> Self {
        Self {
            out,
            buf: Vec::with_capacity(64 * 1024),
        }
    }

    /// `value` as one JSON line, written as every event line is (`encode`: DEL and the C1
    /// controls escaped, so that the line is safe on a terminal too).
    pub(crate) fn push_json(&mut self, value: &impl Serialize) -> io::Result<()> {
        crate::encode::write(&mut self.buf, value).map_err(io::Error::other)?;
        self.buf.push(b'\n');
        Ok(())
    }

    /// The delivered event as its JSON line, encoded once by the dispatcher when it could be.
    pub(crate) fn push_event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        match &d.json {
            Some(line) => {
                self.buf.extend_from_slice(line.as_bytes());
                Ok(())
            }
            None => self.push_json(d.event),
        }
    }
}

impl<W: Write> Write for Batched<W> {
    /// Collects; nothing is written before [`Write::flush`].
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.buf.extend_from_slice(bytes);
        Ok(bytes.len())
    }

    /// Writes out what was collected. What could not be written is dropped, not retried.
    fn flush(&mut self) -> io::Result<()> {
        if self.buf.is_empty() {
            return Ok(());
        }
        let result = self
            .out
            .write_all(&self.buf)
            .and_then(|()| self.out.flush());
        self.buf.clear();
        result
    }
}
