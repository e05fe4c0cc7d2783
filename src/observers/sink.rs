//! `--events-to PATH`: the observers' lines appended to a file, or written to a FIFO without
//! ever waiting for its reader: with none yet, it is opened again on the next heartbeat; one that
//! goes away is waited for again; lines it has no room for are dropped and counted.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileTypeExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{MetaLine, Tally};
use crate::consumer::{Consumer, Delivery, Tick};
use crate::redact::{Masked, MaskedWriter};

pub(crate) struct EventsTo {
    tally: Arc<Tally>,
    meta: MetaLine,
    /// The directory the file is reached from without following a link, and the way from there.
    anchor: PathBuf,
    relative: PathBuf,
    fifo: bool,
    out: Option<MaskedWriter<File>>,
    /// The end of a line a FIFO took only part of, written before anything else.
    pending: Masked<'static>,
}

impl EventsTo {
    /// Events to `path`: a FIFO that exists, or a file, created (0600) or appended to. Below
    /// the first of `anchors` it lies in (the work dir, where an agent writes), no link on the
    /// way is followed; elsewhere, none at the file itself.
    pub(crate) fn open(
        tally: Arc<Tally>,
        path: &Path,
        anchors: &[&Path],
        meta: MetaLine,
    ) -> io::Result<Self> {
        let fifo = std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_fifo());
        let (anchor, relative) = crate::redact::beneath::split(path, anchors);
        let mut sink = Self {
            tally,
            meta,
            anchor,
            relative,
            fifo,
            out: None,
            pending: Masked::EMPTY,
        };
        if !fifo {
            sink.out = Some(MaskedWriter::append_below(&sink.anchor, &sink.relative)?);
        } else {
            sink.reopen();
        }
        Ok(sink)
    }

    /// Opens the FIFO if a reader has it open; never waits for one.
    fn reopen(&mut self) {
        if self.out.is_some() || !self.fifo {
            return;
        }
        self.out = MaskedWriter::fifo_below(&self.anchor, &self.relative).ok();
    }

    /// Writes `bytes` as far as the output takes them now; what it did not take.
    fn write_now<'b>(&mut self, bytes: &'b Masked<'b>) -> Result<Masked<'b>, ()> {
        let Some(out) = &mut self.out else {
            return Err(());
        };
        let mut rest = bytes.borrowed();
        while !rest.is_empty() {
            match out.write(&rest) {
                Ok(0) => return Err(()),
                Ok(n) => rest = Masked::rest_of(rest, n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(rest),
                Err(e) => {
                    // The reader went away: wait for the next one.
                    self.out = None;
                    if !self.fifo {
                        self.tally.failed(format!("cannot be written: {e}"));
                    }
                    return Err(());
                }
            }
        }
        Ok(rest)
    }

    /// The end of a line the FIFO took part of; whether it is all out now.
    fn flush_pending(&mut self) -> bool {
        if self.pending.is_empty() {
            return true;
        }
        let pending = std::mem::replace(&mut self.pending, Masked::EMPTY);
        match self.write_now(&pending) {
            Ok(rest) => {
                self.pending = rest.into_owned();
                self.pending.is_empty()
            }
            Err(()) => false,
        }
    }
}

impl Consumer for EventsTo {
    fn event(&mut self, delivery: &Delivery<'_>) -> io::Result<()> {
        let Some(json) = &delivery.json else {
            return Ok(());
        };
        if self.tally.is_failed() {
            return Ok(());
        }
        self.reopen();
        if self.out.is_none() || !self.flush_pending() {
            self.tally.dropped("has no reader, or one that fell behind");
            return Ok(());
        }
        let line = self.meta.line(json, delivery.event.turn, None);
        match self.write_now(&line) {
            Ok(rest) if rest.len() == line.len() => {
                self.tally.dropped("has no reader, or one that fell behind");
            }
            Ok(rest) => {
                self.tally.queued();
                self.tally.written(1);
                self.pending = rest.into_owned();
            }
            Err(()) => self.tally.dropped("has no reader, or one that fell behind"),
        }
        Ok(())
    }

    fn wants_json(&self) -> bool {
        true
    }

    fn tick(&mut self, _tick: &Tick<'_>) -> io::Result<()> {
        self.reopen();
        self.flush_pending();
        Ok(())
    }

    fn close(&mut self) -> io::Result<()> {
        self.tally.closing();
        self.flush_pending();
        self.out = None;
        Ok(())
    }

    fn news(&mut self) -> Option<crate::event::EventKind> {
        self.tally.news()
    }

    fn name(&self) -> &'static str {
        "events-to"
    }
}
