//! How long a tool call took, for an agent that does not say (an ACP agent tells a call's
//! start and end, not its duration): from the times its `tool.started` and `tool.completed`
//! were stamped with, matched by call id. Off for agents that tell their own durations, so
//! their events cost nothing more.

use std::time::SystemTime;

use crate::event::EventKind;

/// How many calls are timed at once; past it the oldest start is forgotten (its end is then
/// told without a duration, as unknown).
const OPEN: usize = 256;

/// The starts of the calls not yet ended, when tools are timed.
#[derive(Debug, Default)]
pub(crate) struct ToolClock {
    on: bool,
    started: Vec<(String, SystemTime)>,
}

impl ToolClock {
    /// Times the calls of the agent from now on (`on`), or leaves them as told.
    pub(crate) fn set(&mut self, on: bool) {
        self.on = on;
        if !on {
            self.started.clear();
        }
    }

    /// Notes the start of a call stamped `ts`, or gives the end of one that lacks a duration
    /// the time since its start.
    #[inline]
    pub(crate) fn time(&mut self, ts: SystemTime, kind: &mut EventKind) {
        if !self.on {
            return;
        }
        match kind {
            EventKind::ToolStarted(start) => {
                if self.started.len() >= OPEN {
                    self.started.remove(0);
                }
                self.started.push((start.call_id.clone(), ts));
            }
            EventKind::ToolCompleted(end) => {
                let Some(i) = self.started.iter().position(|(id, _)| *id == end.call_id) else {
                    return;
                };
                let (_, at) = self.started.remove(i);
                // Read at the same moment (one read of the pipe), the two tell nothing of how
                // long the call took: unknown, not 0.
                if end.duration_ms.is_none() && ts > at {
                    end.duration_ms = ts
                        .duration_since(at)
                        .ok()
                        .map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX));
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::event::{ToolKind, ToolStart, ToolStatus};

    fn start(id: &str) -> EventKind {
        EventKind::ToolStarted(ToolStart {
            call_id: id.to_owned(),
            name: "bash".to_owned(),
            kind: ToolKind::Shell,
            input: "ls".to_owned(),
            parent: None,
        })
    }

    fn end(id: &str, duration_ms: Option<u64>) -> EventKind {
        let EventKind::ToolStarted(s) = start(id) else {
            unreachable!()
        };
        EventKind::ToolCompleted(crate::event::ToolEnd {
            duration_ms,
            ..s.end(ToolStatus::Ok)
        })
    }

    fn took(kind: &EventKind) -> Option<u64> {
        match kind {
            EventKind::ToolCompleted(t) => t.duration_ms,
            _ => None,
        }
    }

    #[test]
    fn an_end_without_a_duration_gets_the_time_since_its_own_start() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let mut clock = ToolClock::default();
        clock.set(true);
        clock.time(t0, &mut start("a"));
        clock.time(t0 + Duration::from_millis(100), &mut start("b"));
        let mut b = end("b", None);
        clock.time(t0 + Duration::from_millis(544), &mut b);
        assert_eq!(took(&b), Some(444));
        let mut a = end("a", None);
        clock.time(t0 + Duration::from_millis(900), &mut a);
        assert_eq!(took(&a), Some(900));
        // The agent's own duration stands; an end of a call never started stays unknown.
        clock.time(t0, &mut start("c"));
        let mut c = end("c", Some(7));
        clock.time(t0 + Duration::from_secs(3), &mut c);
        assert_eq!(took(&c), Some(7));
        let mut d = end("d", None);
        clock.time(t0 + Duration::from_secs(3), &mut d);
        assert_eq!(took(&d), None);
        // Started and ended in one read: how long it took is unknown.
        clock.time(t0, &mut start("e"));
        let mut e = end("e", None);
        clock.time(t0, &mut e);
        assert_eq!(took(&e), None);
    }

    #[test]
    fn off_it_leaves_every_end_as_told() {
        let t0 = SystemTime::UNIX_EPOCH;
        let mut clock = ToolClock::default();
        clock.time(t0, &mut start("a"));
        let mut a = end("a", None);
        clock.time(t0 + Duration::from_secs(1), &mut a);
        assert_eq!(took(&a), None);
    }
}
