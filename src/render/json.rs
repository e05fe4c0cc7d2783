//! `--json`: every event as one line on stdout as it happens, then the receipt as the last line.

use std::io::{self, Write};

use crate::batched::Batched;
use crate::consumer::{Consumer, Delivery};
use crate::event::EventKind;
use crate::receipt::Receipt;

pub(crate) struct JsonLines<W: Write + Send> {
    writer: Batched<W>,
}

impl<W: Write + Send> JsonLines<W> {
    pub(crate) fn new(out: W) -> Self {
        Self {
            writer: Batched::new(out),
        }
    }
}

impl<W: Write + Send> Consumer for JsonLines<W> {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        self.writer.push_event(d)?;
        if matches!(d.event.kind, EventKind::RunFinished { .. })
            && let Some(receipt) = Receipt::of(d.totals)
        {
            self.writer.push_json(&receipt)?;
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
