//! `--json`: every event as one line on stdout as it happens, then the receipt as the last line.

use std::io::{self, Write};

use crate::batched::Batched;
use crate::consumer::{Consumer, Delivery, Tick};
use crate::event::EventKind;
use crate::receipt::Receipt;

pub(crate) struct JsonLines<W: Write + Send> {
    writer: Batched<W>,
    /// The receipt, from `run.finished` on; it is the last line, written as the run closes.
    receipt: Option<Receipt>,
    /// Whether `out` is this process's stdout, whose reader going away is noticed even while
    /// nothing is written.
    stdout: bool,
}

impl<W: Write + Send> JsonLines<W> {
    pub(crate) fn new(out: W) -> Self {
        Self {
            writer: Batched::new(out),
            receipt: None,
            stdout: false,
        }
    }
}

impl JsonLines<crate::term::out::Lines> {
    /// Lines on stdout. Every line is written by the encoder, which escapes DEL and the C1
    /// controls, so they go out as they are, not scanned again.
    pub(crate) fn stdout() -> Self {
        Self {
            stdout: true,
            ..Self::new(crate::term::out::json_lines_stdout())
        }
    }
}

impl<W: Write + Send> Consumer for JsonLines<W> {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        self.writer.push_event(d)?;
        if matches!(d.event.kind, EventKind::RunFinished { .. }) || self.receipt.is_some() {
            self.receipt = Receipt::of(d.totals);
        }
        Ok(())
    }

    fn tick(&mut self, _tick: &Tick<'_>) -> io::Result<()> {
        if self.stdout && crate::term::out::stdout_reader_gone() {
            return Err(io::ErrorKind::BrokenPipe.into());
        }
        Ok(())
    }

    fn close(&mut self) -> io::Result<()> {
        if let Some(receipt) = self.receipt.take() {
            self.writer.push_json(&receipt)?;
        }
        self.writer.flush()
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

    fn watched(&self) -> bool {
        true
    }
}
