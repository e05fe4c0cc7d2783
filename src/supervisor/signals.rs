//! Signals sent to runbook itself: Ctrl-C (SIGINT), and SIGTERM/SIGHUP from a CI runner or a
//! closing terminal. The agent runs in its own process group, so a terminal's Ctrl-C reaches only
//! runbook, which decides what the agent gets.

use tokio::signal::unix::{Signal, SignalKind, signal};

pub(crate) struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
}

/// Which signal arrived.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Received {
    Interrupt,
    Terminate,
    Hangup,
}

impl Received {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Received::Interrupt => "SIGINT",
            Received::Terminate => "SIGTERM",
            Received::Hangup => "SIGHUP",
        }
    }

    /// Why a run it interrupted ended, in a sentence.
    pub(crate) fn message(self) -> String {
        match self {
            Received::Interrupt => "interrupted by Ctrl-C (SIGINT)".to_owned(),
            other => format!("runbook received {}", other.name()),
        }
    }
}

impl Signals {
    /// Installs the handlers; from now on these signals no longer end runbook by themselves.
    pub(crate) fn install() -> std::io::Result<Self> {
        Ok(Self {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
        })
    }

    pub(crate) async fn recv(&mut self) -> Received {
        tokio::select! {
            _ = self.int.recv() => Received::Interrupt,
            _ = self.term.recv() => Received::Terminate,
            _ = self.hup.recv() => Received::Hangup,
        }
    }
}

/// Runs `work` to its end, unless runbook is told to stop first (Ctrl-C, SIGTERM, SIGHUP): for
/// commands that only show something, and end as soon as they are asked to.
pub(crate) async fn unless_stopped<T>(work: impl Future<Output = T>) -> std::io::Result<Option<T>> {
    let mut signals = Signals::install()?;
    tokio::select! {
        done = work => Ok(Some(done)),
        _ = signals.recv() => Ok(None),
    }
}
