//! The run's event log (`events.ndjson`): every event, one JSON object per line, appended as it
//! happens so another process can follow it; a crash loses at most a partial last line.

use std::fs::File;
use std::io::{self, Write as _};

use crate::batched::Batched;
use crate::consumer::{Consumer, Delivery};

/// Appends every event to `events.ndjson`.
pub(crate) struct EventLog {
    writer: Batched<File>,
}

impl EventLog {
    pub(crate) fn new(file: File) -> Self {
        Self {
            writer: Batched::new(file),
        }
    }
}

impl Consumer for EventLog {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        self.writer.push_event(d)
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
