//! Signals sent to runbook itself: Ctrl-C (SIGINT), and SIGTERM/SIGHUP from a CI runner or a
//! closing terminal. The agent runs in its own process group, so a terminal's Ctrl-C reaches only
//! runbook, which decides what the agent gets.

use tokio::signal::unix::{Signal, SignalKind, signal};

pub(crate) struct Signals {
    int: Signal,
    term: Signal,
    hup: Signal,
    /// How many interrupts have arrived during the run.
    pub(crate) count: u32,
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
}

impl Signals {
    /// Installs the handlers; from now on these signals no longer end runbook by themselves.
    pub(crate) fn install() -> std::io::Result<Self> {
        Ok(Self {
            int: signal(SignalKind::interrupt())?,
            term: signal(SignalKind::terminate())?,
            hup: signal(SignalKind::hangup())?,
            count: 0,
        })
    }

    pub(crate) async fn recv(&mut self) -> Received {
        let got = tokio::select! {
            _ = self.int.recv() => Received::Interrupt,
            _ = self.term.recv() => Received::Terminate,
            _ = self.hup.recv() => Received::Hangup,
        };
        self.count += 1;
        got
    }
}
