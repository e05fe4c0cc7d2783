//! `--json`: every event as one line on stdout as it happens, then the receipt as the last line.

use std::io::{self, Write};

use crate::consumer::{Consumer, Delivery};
use crate::event::EventKind;
use crate::receipt::Receipt;
use crate::store::NdjsonWriter;

pub(crate) struct JsonLines<W: Write + Send> {
    writer: NdjsonWriter<W>,
}

impl<W: Write + Send> JsonLines<W> {
    pub(crate) fn new(out: W) -> Self {
        Self {
            writer: NdjsonWriter::new(out),
        }
    }
}

impl<W: Write + Send> Consumer for JsonLines<W> {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        match d.json {
            Some(line) => self.writer.push_line(line),
            None => self.writer.push(d.event)?,
        }
        if matches!(d.event.kind, EventKind::RunFinished { .. })
            && let Some(receipt) = Receipt::of(d.totals)
        {
            self.writer.push(&receipt)?;
        }
        Ok(())
    }

    fn wants_json(&self) -> bool {
        true
    }

    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush()
    }

    fn name(&self) -> &'static str {
        "--json output"
    }
}
