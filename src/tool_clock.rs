//! How long a tool call took, for an agent that does not say (an ACP agent tells a call's
//! start and end, not its duration): from the times its `tool.started` and `tool.completed`
//! were stamped with, matched by call id, less the time the call waited for a person's answer
//! to its permission request (`permission.requested` to `permission.answered`): that is the
//! person's time, not the tool's. Off for agents that tell their own durations, so their events
//! cost nothing more.

use std::time::{Duration, SystemTime};

use crate::event::EventKind;

/// How many calls are timed at once; past it the oldest start is forgotten (its end is then
/// told without a duration, as unknown).
const OPEN: usize = 256;

/// A call started and not yet ended.
#[derive(Debug)]
struct Open {
    call_id: String,
    at: SystemTime,
    /// When its permission request was put to a person, while it waits for the answer.
    asked: Option<SystemTime>,
    /// How long it has waited for answers so far.
    waited: Duration,
}

/// The starts of the calls not yet ended, when tools are timed.
#[derive(Debug, Default)]
pub(crate) struct ToolClock {
    on: bool,
    started: Vec<Open>,
}

impl ToolClock {
    /// Times the calls of the agent from now on (`on`), or leaves them as told.
    pub(crate) fn set(&mut self, on: bool) {
        self.on = on;
        if !on {
            self.started.clear();
        }
    }

    /// Notes the start of a call stamped `ts`, or a wait for a permission's answer, or gives
    /// the end of a call that lacks a duration the time since its start, less its waits.
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
                self.started.push(Open {
                    call_id: start.call_id.clone(),
                    at: ts,
                    asked: None,
                    waited: Duration::ZERO,
                });
            }
            EventKind::PermissionRequested { call_id, .. } => {
                if let Some(open) = self.open(call_id) {
                    open.asked = Some(ts);
                }
            }
            EventKind::PermissionAnswered { call_id, .. } => {
                if let Some(open) = self.open(call_id)
                    && let Some(asked) = open.asked.take()
                {
                    open.waited += ts.duration_since(asked).unwrap_or_default();
                }
            }
            EventKind::ToolCompleted(end) => {
                let Some(i) = self.started.iter().position(|o| o.call_id == end.call_id) else {
                    return;
                };
                let open = self.started.remove(i);
                // Read at the same moment (one read of the pipe), the two tell nothing of how
                // long the call took: unknown, not 0.
                if end.duration_ms.is_none() && ts > open.at {
                    end.duration_ms = ts.duration_since(open.at).ok().map(|d| {
                        let worked = d.saturating_sub(open.waited);
                        u64::try_from(worked.as_millis()).unwrap_or(u64::MAX)
                    });
                }
            }
            _ => {}
        }
    }

    fn open(&mut self, call_id: &str) -> Option<&mut Open> {
        self.started.iter_mut().find(|o| o.call_id == call_id)
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
    fn the_wait_for_a_persons_answer_is_not_the_tools_time() {
        let t0 = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let ms = |n| t0 + Duration::from_millis(n);
        let asked = |id: &str| EventKind::PermissionRequested {
            call_id: id.to_owned(),
            tool: "bash".to_owned(),
            input: "ls".to_owned(),
            options: vec!["allow_once".to_owned()],
        };
        let answered = |id: &str| EventKind::PermissionAnswered {
            call_id: id.to_owned(),
            tool: "bash".to_owned(),
            input: "ls".to_owned(),
            allowed: true,
            option: Some("allow_once".to_owned()),
            by: crate::event::PermissionAnswerer::Person,
        };
        let mut clock = ToolClock::default();
        clock.set(true);
        clock.time(t0, &mut start("a"));
        clock.time(ms(100), &mut asked("a"));
        clock.time(ms(30_100), &mut answered("a"));
        let mut a = end("a", None);
        clock.time(ms(30_350), &mut a);
        assert_eq!(took(&a), Some(350));
        // An answer to another call's question takes nothing from this one.
        clock.time(ms(40_000), &mut start("b"));
        clock.time(ms(40_100), &mut asked("c"));
        clock.time(ms(45_100), &mut answered("c"));
        let mut b = end("b", None);
        clock.time(ms(46_000), &mut b);
        assert_eq!(took(&b), Some(6_000));
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
