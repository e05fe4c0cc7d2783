//! The run's event log (`events.ndjson`): every event, one JSON object per line, appended as it
//! happens so another process can follow it; a crash loses at most a partial last line.

use std::fs::File;
use std::io::{self, Write};

use serde::Serialize;

use crate::consumer::{Consumer, Delivery};

/// Buffers whole NDJSON lines and writes them out in one call per flush.
pub(crate) struct NdjsonWriter<W: Write> {
    out: W,
    buf: Vec<u8>,
}

impl<W: Write> NdjsonWriter<W> {
    pub(crate) fn new(out: W) -> Self {
        Self {
            out,
            buf: Vec::with_capacity(64 * 1024),
        }
    }

    pub(crate) fn push(&mut self, value: &impl Serialize) -> io::Result<()> {
        serde_json::to_writer(&mut self.buf, value).map_err(io::Error::other)?;
        self.buf.push(b'\n');
        Ok(())
    }

    /// Appends a line that is already encoded (with its newline).
    pub(crate) fn push_line(&mut self, line: &[u8]) {
        self.buf.extend_from_slice(line);
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        if !self.buf.is_empty() {
            let result = self
                .out
                .write_all(&self.buf)
                .and_then(|()| self.out.flush());
            self.buf.clear();
            result?;
        }
        Ok(())
    }
}

/// Appends every event to `events.ndjson`.
pub(crate) struct EventLog {
    writer: NdjsonWriter<File>,
}

impl EventLog {
    pub(crate) fn new(file: File) -> Self {
        Self {
            writer: NdjsonWriter::new(file),
        }
    }
}

impl Consumer for EventLog {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        match d.json {
            Some(line) => {
                self.writer.push_line(line);
                Ok(())
            }
            None => self.writer.push(d.event),
        }
    }

    fn wants_json(&self) -> bool {
        true
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    fn name(&self) -> &'static str {
        "the event log"
    }
}
