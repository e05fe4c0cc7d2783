//! One line of an agent's output into events, the same way for a live run and for a replay:
//! secrets masked, blank stdout lines skipped, an overlong line kept as its head, colour codes and
//! carriage returns taken off stderr.

use super::{StderrParser, StdoutParser, StreamEnd, unparsed};
use crate::event::{EventKind, Stream, UnparsedReason};
use crate::lines::Piece;
use crate::redact::Redactor;

/// How much of an overlong stderr line is kept.
const STDERR_HEAD: usize = 1024;

/// The agent's stdout, through its adapter's parser.
pub(crate) struct StdoutFeed {
    parser: Box<dyn StdoutParser>,
    redactor: Redactor,
}

impl StdoutFeed {
    pub(crate) fn new(parser: Box<dyn StdoutParser>, redactor: Redactor) -> Self {
        Self { parser, redactor }
    }

    pub(crate) fn piece(&mut self, piece: Piece<'_>, events: &mut Vec<EventKind>) {
        match piece {
            // A blank line says nothing; it stays in stdout.log only.
            Piece::Line(line) if line.iter().all(u8::is_ascii_whitespace) => {}
            Piece::Line(line) => self.parser.line(&self.redactor.bytes(line), events),
            Piece::Overlong { head, total } => events.push(unparsed(
                Stream::Stdout,
                UnparsedReason::TooLong,
                &self.redactor.bytes(head),
                total,
            )),
        }
    }

    /// [`StdoutFeed::piece`], keeping in `raw` the line (masked) that made events, with the index
    /// in `events` of the first of them.
    pub(crate) fn piece_kept(
        &mut self,
        piece: Piece<'_>,
        events: &mut Vec<EventKind>,
        raw: &mut Vec<(u32, Box<str>)>,
    ) {
        let before = events.len();
        let line = match &piece {
            Piece::Line(line) => Some(*line),
            Piece::Overlong { .. } => None,
        };
        self.piece(piece, events);
        if let Some(line) = line.filter(|_| events.len() > before) {
            let masked = self.redactor.bytes(line);
            let text = String::from_utf8_lossy(&masked);
            raw.push((before as u32, text.trim_end_matches('\r').into()));
        }
    }

    /// The stream ended: the adapter's last events and its verdict on how it ended.
    pub(crate) fn end(&mut self, events: &mut Vec<EventKind>) -> StreamEnd {
        self.parser.end(events)
    }
}

/// The agent's stderr, through its adapter's stderr parser.
pub(crate) struct StderrFeed {
    parser: Box<dyn StderrParser>,
    redactor: Redactor,
}

impl StderrFeed {
    pub(crate) fn new(parser: Box<dyn StderrParser>, redactor: Redactor) -> Self {
        Self { parser, redactor }
    }

    pub(crate) fn piece(&mut self, piece: Piece<'_>, events: &mut Vec<EventKind>) {
        let line = match piece {
            Piece::Line(line) => String::from_utf8_lossy(line),
            Piece::Overlong { head, total } => {
                let head = String::from_utf8_lossy(&head[..head.len().min(STDERR_HEAD)]);
                format!("{head}… ({total} bytes)").into()
            }
        };
        let plain = console::strip_ansi_codes(&line);
        let plain = plain.trim_end_matches('\r');
        self.parser.line(&self.redactor.str(plain), events);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::{Adapter, OpenCode};

    fn stderr_events(line: &[u8], redactor: Redactor) -> Vec<EventKind> {
        let mut feed = StderrFeed::new(OpenCode.stderr_parser(), redactor);
        let mut events = Vec::new();
        feed.piece(Piece::Line(line), &mut events);
        events
    }

    #[test]
    fn stderr_lines_lose_colour_and_carriage_returns_and_keep_no_secret() {
        let redactor = Redactor::from_vars([("API_TOKEN".into(), "hunter2-secret".into())]);
        let events = stderr_events(b"\x1b[31mtoken hunter2-secret\x1b[0m\r", redactor);
        let lines: Vec<&str> = events
            .iter()
            .filter_map(|e| match e {
                EventKind::Stderr { line } => Some(line.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(lines, ["token [REDACTED]"]);
    }
}
