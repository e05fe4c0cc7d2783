//! An agent that has printed nothing at all a while after it started: most often it has no
//! model or key to use, and waits (OpenCode without a model) until the watchdog ends it. The
//! view says so once, with the agent's own command that shows what it can use, and keeps a short
//! word of it on the status line.

use std::time::Duration;

use clap::ValueEnum as _;

use crate::agent_kind::AgentKind;
use crate::event::EventKind;

/// How long an agent may say nothing at all before the view wonders why.
pub(super) const AFTER: Duration = Duration::from_secs(15);

#[derive(Default)]
pub(super) struct Silent {
    agent: Option<AgentKind>,
    /// The agent has said something (any event of its own) since the run started.
    heard: bool,
    /// The line was shown.
    told: bool,
}

impl Silent {
    pub(super) fn note(&mut self, kind: &EventKind) {
        match kind {
            EventKind::RunStarted(info) => {
                self.agent = AgentKind::from_str(&info.agent, true).ok();
            }
            k if k.is_from_agent() => self.heard = true,
            _ => {}
        }
    }

    /// Whether the agent has said nothing at all, `quiet_for` after it started.
    pub(super) fn is_silent(&self, quiet_for: Duration) -> bool {
        !self.heard && quiet_for >= AFTER
    }

    /// The line that says so, the first time it is due.
    pub(super) fn line(&mut self, quiet_for: Duration) -> Option<String> {
        if self.told || !self.is_silent(quiet_for) {
            return None;
        }
        self.told = true;
        let check = match self.agent {
            Some(agent) => format!("; `{}` shows what it can use", agent.setup_check()),
            None => String::new(),
        };
        Some(format!(
            "⚠ the agent has printed nothing in {}s: most often no model or API key is configured{check}",
            quiet_for.as_secs()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_said_once_only_of_an_agent_that_said_nothing() {
        // An agent runbook does not know (`--agent-cmd`): no command to name.
        let mut s = Silent::default();
        assert!(s.line(AFTER).is_some_and(|l| !l.contains('`')));
        let mut s = Silent {
            agent: Some(AgentKind::Opencode),
            ..Silent::default()
        };
        assert_eq!(s.line(Duration::from_secs(3)), None);
        let line = s.line(AFTER).expect("due");
        assert!(line.contains("`opencode models`"), "{line}");
        assert_eq!(s.line(AFTER * 2), None, "once");
        let mut s = Silent::default();
        s.note(&EventKind::SessionStarted {
            session_id: "s".into(),
        });
        assert!(!s.is_silent(AFTER * 10));
    }
}
