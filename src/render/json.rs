//! `--json`: every event as one line on stdout as it happens, then the receipt as the last line.

use std::io::{self, Write};

use crate::consumer::Consumer;
use crate::event::{Event, EventKind};
use crate::receipt::ReceiptBuilder;
use crate::store::NdjsonWriter;

pub(crate) struct JsonLines<W: Write + Send> {
    writer: NdjsonWriter<W>,
    receipt: ReceiptBuilder,
}

impl<W: Write + Send> JsonLines<W> {
    pub(crate) fn new(out: W) -> Self {
        Self {
            writer: NdjsonWriter::new(out),
            receipt: ReceiptBuilder::default(),
        }
    }
}

impl<W: Write + Send> Consumer for JsonLines<W> {
    fn event(&mut self, ev: &Event, json: Option<&[u8]>) -> io::Result<()> {
        self.receipt.observe(ev);
        match json {
            Some(line) => self.writer.push_line(line),
            None => self.writer.push(ev)?,
        }
        if matches!(ev.kind, EventKind::RunFinished { .. })
            && let Some(receipt) = self.receipt.build()
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
