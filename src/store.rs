//! The run's event log (`events.ndjson`): every event, one JSON object per line, appended as it
//! happens so another process can follow it. It only ever holds whole lines: a crash loses at most
//! a partial last line, and a write that fails part-way (a full disk) is cut back to the last
//! whole line it wrote.

use std::fs::File;
use std::io;
use std::path::{Path, PathBuf};

use crate::consumer::{Consumer, Delivery};
use crate::redact::{MaskedBuf, MaskedWriter};

/// Appends every event to `events.ndjson`.
pub(crate) struct EventLog {
    file: MaskedWriter<File>,
    path: PathBuf,
    /// The lines of the batch being collected.
    buf: MaskedBuf,
    /// How long the file is: whole lines only.
    len: u64,
}

impl EventLog {
    pub(crate) fn new(file: MaskedWriter<File>, path: PathBuf) -> io::Result<Self> {
        let len = file.len()?;
        Ok(Self {
            file,
            path,
            buf: MaskedBuf::with_capacity(64 * 1024),
            len,
        })
    }
}

impl Consumer for EventLog {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        match &d.json {
            Some(line) => self.buf.push(line),
            None => {
                let mut line = Vec::new();
                crate::encode::event(&mut line, d.event).map_err(io::Error::other)?;
                line.push(b'\n');
                self.buf.push(&crate::redact::current().mask(&line));
            }
        }
        Ok(())
    }

    fn wants_json(&self) -> bool {
        true
    }

    /// Writes the batch in one call where it can. Should the disk refuse part of it, the file is
    /// cut back to the end of the last line that was written whole.
    fn flush(&mut self) -> io::Result<()> {
        let mut written = 0;
        let buf = self.buf.as_masked();
        let result = loop {
            if written == buf.len() {
                break Ok(());
            }
            match self.file.write(&buf.rest(written)) {
                Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => written += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => break Err(e),
            }
        };
        let whole = match result {
            Ok(()) => written,
            Err(_) => memchr::memrchr(b'\n', &buf.as_bytes()[..written]).map_or(0, |nl| nl + 1),
        };
        self.len += whole as u64;
        self.buf.clear();
        if result.is_err() && whole < written {
            // Best effort: on a filesystem that has gone read-only, nothing was written anyway.
            let _ = self.file.set_len(self.len);
        }
        result
    }

    fn name(&self) -> &'static str {
        "the event log"
    }

    fn record(&self) -> Option<&Path> {
        Some(&self.path)
    }
}

/// Appends one event to the log of a run that has ended (`upload.failed`), stamped after its
/// last whole line: the next sequence number, that line's turn, the time now.
pub(crate) fn append_after_end(path: &Path, kind: crate::event::EventKind) -> io::Result<()> {
    use crate::event::{Event, Turn};
    use crate::lines::LineReader;
    let file = crate::files::open(path, crate::files::Links::Refuse).map_err(io::Error::other)?;
    // As long as `runs::EVENT_LINE_LIMIT`: far above any event runbook writes.
    let mut reader = LineReader::new(file, 3 * crate::lines::MAX_LINE_BYTES);
    let mut last: Option<Event> = None;
    while let Some(line) = reader.next_line()? {
        if !line.newline || line.is_overlong() {
            continue;
        }
        if let Ok(ev) = serde_json::from_slice::<Event>(&line.bytes) {
            last = Some(ev);
        }
    }
    let ev = Event {
        seq: last.as_ref().map_or(0, |ev| ev.seq + 1),
        ts: std::time::SystemTime::now(),
        turn: last.map_or(Turn::FIRST, |ev| ev.turn),
        kind,
    };
    let mut line = Vec::new();
    crate::encode::event(&mut line, &ev).map_err(io::Error::other)?;
    line.push(b'\n');
    let (dir, name) = crate::redact::beneath::split(path, &[]);
    let mut file = MaskedWriter::append_below(&dir, &name)?;
    file.write_all(&crate::redact::current().mask(&line))?;
    file.flush()
}
