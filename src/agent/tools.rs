//! Tool calls in flight, for agents that report a call's start and its end separately: the end
//! repeats what the start said, and calls that never end are closed when the stream does.

use crate::event::{EventKind, ToolEnd, ToolKind, ToolStart, ToolStatus};

/// Error text of a call the agent never finished.
pub(crate) const UNFINISHED: &str = "the agent stopped before this tool call finished";
/// How many calls may be open at once; past it the oldest is closed, so that an agent starting
/// calls it never ends cannot make runbook's memory grow with them.
const MAX_OPEN: usize = 1000;
/// Error text of a call closed because too many were open.
const TOO_MANY_OPEN: &str = "runbook stopped following this call: too many calls were open at once";

/// How a call ended.
pub(crate) struct Ending {
    pub status: ToolStatus,
    pub error: Option<String>,
    pub output_bytes: Option<u64>,
}

impl Ending {
    pub(crate) fn ok(output_bytes: Option<u64>) -> Self {
        Self {
            status: ToolStatus::Ok,
            error: None,
            output_bytes,
        }
    }

    pub(crate) fn failed(status: ToolStatus, error: String, output_bytes: Option<u64>) -> Self {
        Self {
            status,
            error: Some(error),
            output_bytes,
        }
    }
}

#[derive(Default)]
pub(crate) struct OpenCalls {
    open: Vec<ToolStart>,
}

impl OpenCalls {
    /// Records a call and emits `tool.started`, once per call id.
    pub(crate) fn start(&mut self, start: ToolStart, out: &mut Vec<EventKind>) {
        if self.get(&start.call_id).is_some() {
            return;
        }
        if self.open.len() >= MAX_OPEN {
            let oldest = self.open[0].call_id.clone();
            let ending = Ending::failed(ToolStatus::Error, TOO_MANY_OPEN.to_owned(), None);
            self.finish(&oldest, ending, out);
        }
        out.push(EventKind::ToolStarted(start.clone()));
        self.open.push(start);
    }

    pub(crate) fn get(&self, call_id: &str) -> Option<&ToolStart> {
        self.open.iter().find(|c| c.call_id == call_id)
    }

    /// Emits `tool.completed` for an open call, and gives it back; `None` (and nothing emitted)
    /// for an unknown id.
    pub(crate) fn finish<'o>(
        &mut self,
        call_id: &str,
        ending: Ending,
        out: &'o mut Vec<EventKind>,
    ) -> Option<&'o ToolEnd> {
        let i = self.open.iter().position(|c| c.call_id == call_id)?;
        let start = self.open.remove(i);
        out.push(EventKind::ToolCompleted(ToolEnd {
            error: ending.error,
            output_bytes: ending.output_bytes,
            ..start.end(ending.status)
        }));
        match out.last() {
            Some(EventKind::ToolCompleted(end)) => Some(end),
            _ => unreachable!("the event was just pushed"),
        }
    }

    /// Emits the agent's own `tool.completed`, after a `tool.started` for a call it did not say
    /// had started.
    pub(crate) fn complete(&mut self, end: ToolEnd, out: &mut Vec<EventKind>) {
        match self.open.iter().position(|c| c.call_id == end.call_id) {
            Some(i) => drop(self.open.remove(i)),
            None => out.push(EventKind::ToolStarted(end.start())),
        }
        out.push(EventKind::ToolCompleted(end));
    }

    /// Starts and finishes a call at once (one the agent only reports when it is over).
    pub(crate) fn once(&mut self, start: ToolStart, ending: Ending, out: &mut Vec<EventKind>) {
        let id = start.call_id.clone();
        self.start(start, out);
        self.finish(&id, ending, out);
    }

    /// The ids of the calls still open, oldest first.
    pub(crate) fn open_ids(&self) -> Vec<String> {
        self.open.iter().map(|c| c.call_id.clone()).collect()
    }

    /// Closes every call still open, as failed.
    pub(crate) fn close_all(&mut self, out: &mut Vec<EventKind>) {
        for id in self
            .open
            .iter()
            .map(|c| c.call_id.clone())
            .collect::<Vec<_>>()
        {
            self.finish(
                &id,
                Ending::failed(ToolStatus::Error, UNFINISHED.to_owned(), None),
                out,
            );
        }
    }
}

/// A `tool.started` for a call of `name`.
pub(crate) fn start(call_id: &str, name: &str, input: String, parent: Option<&str>) -> ToolStart {
    ToolStart {
        call_id: call_id.to_owned(),
        name: name.to_owned(),
        kind: ToolKind::of(name),
        input,
        parent: parent.map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn calls_that_never_end_are_closed_once_too_many_are_open() {
        let mut calls = OpenCalls::default();
        let mut out = Vec::new();
        for i in 0..MAX_OPEN + 5 {
            calls.start(
                start(&format!("c{i}"), "bash", String::new(), None),
                &mut out,
            );
        }
        assert_eq!(calls.open.len(), MAX_OPEN);
        let closed: Vec<&str> = out
            .iter()
            .filter_map(|e| match e {
                EventKind::ToolCompleted(end) => Some(end.call_id.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(closed, ["c0", "c1", "c2", "c3", "c4"]);
    }
}
