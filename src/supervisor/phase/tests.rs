//! Every phase against every input, on tokio's paused clock, and the timers that move a turn on
//! by themselves.

use super::*;

const INACTIVITY: Duration = Duration::from_secs(180);
const KILL_GRACE: Duration = Duration::from_secs(10);
const FINISH_GRACE: Duration = Duration::from_secs(5);
const BUDGET: f64 = 1.0;
const SECOND: Duration = Duration::from_secs(1);

fn limits() -> Limits {
    Limits {
        inactivity_timeout: INACTIVITY,
        kill_grace: KILL_GRACE,
        finish_grace: FINISH_GRACE,
        timeout: None,
        max_cost_usd: Some(BUDGET),
    }
}

/// One turn, driven on the paused clock; and the CPU time its agent's tree has used.
struct Turn(Machine, Duration);

impl Turn {
    fn new() -> Self {
        Self::with_deadline(None)
    }

    /// A turn of an agent that speaks ACP.
    fn acp() -> Self {
        let now = Instant::now();
        Self(
            Machine::new(limits(), None, now).speaks_acp(true),
            Duration::ZERO,
        )
    }

    fn with_deadline(after: Option<Duration>) -> Self {
        let now = Instant::now();
        Self(
            Machine::new(limits(), after.map(|d| now + d), now),
            Duration::ZERO,
        )
    }

    fn feed(&mut self, input: Input) -> Vec<Action> {
        self.0.step(input, Instant::now())
    }

    /// Some output on stdout, with the run's cost at `spent`.
    fn output(&mut self, final_word: bool, spent: f64) -> Vec<Action> {
        self.spend(final_word, Spent::AtLeast(spent))
    }

    /// Some output on stdout, with the run's spending at `spent`.
    fn spend(&mut self, final_word: bool, spent: Spent) -> Vec<Action> {
        self.feed(Input::Output {
            stream: Stream::Stdout,
            at: Instant::now(),
            final_word,
            spent,
        })
    }

    /// Lets `d` pass, then tells the machine (an idle tree, when it reads the tree's CPU time).
    /// Whatever was due is then done: the next wake-up is in the future, or the loop would spin.
    async fn wait(&mut self, d: Duration) -> Vec<Action> {
        self.burn(d, 0.0).await
    }

    /// Lets `d` pass with the agent's tree using `share` of a core meanwhile, then tells the
    /// machine, as [`Turn::wait`] does.
    async fn burn(&mut self, d: Duration, share: f64) -> Vec<Action> {
        tokio::time::advance(d).await;
        self.1 += d.mul_f64(share);
        let now = Instant::now();
        let cpu = self.0.watches_cpu().then_some(self.1);
        let actions = self.feed(Input::Tick { cpu });
        if let Some(wake) = self.0.next_wake() {
            assert!(wake > now, "{:?} wakes at once again", self.0.phase());
        }
        actions
    }

    fn stim(&mut self, s: Stim) -> Vec<Action> {
        match s {
            Stim::Output => self.output(false, 0.1),
            Stim::FinalWord => self.output(true, 0.1),
            Stim::OverBudget => self.output(false, BUDGET + 0.5),
            Stim::Exit => self.feed(Input::Exited(exit(0))),
            Stim::PipesClosed => self.feed(Input::PipesClosed),
            Stim::CtrlC => self.feed(Input::Signal(Received::Interrupt)),
            Stim::Term => self.feed(Input::Signal(Received::Terminate)),
            Stim::StorageFault => self.feed(Input::Halt {
                outcome: Outcome::StorageError,
                message: "cannot write events.ndjson: No space left on device".to_owned(),
            }),
        }
    }

    /// Lets `d` pass; says where the turn is and what it did.
    async fn after(&mut self, d: Duration) -> String {
        let actions = self.wait(d).await;
        self.says(&actions)
    }

    /// Feeds one input; says where the turn is and what it did.
    fn on(&mut self, s: Stim) -> String {
        let actions = self.stim(s);
        self.says(&actions)
    }

    /// Where the turn is, and what it was last told to do, in one line.
    fn says(&self, actions: &[Action]) -> String {
        let mut out = describe(self.0.phase());
        out.push_str(" |");
        for a in actions {
            out.push(' ');
            out.push_str(&match a {
                Action::Signal(s) => s.as_str().to_owned(),
                Action::Announce { reason, .. } => format!("announce({reason})"),
                Action::Warn { .. } => "warn".to_owned(),
                Action::Resumed { by, cpu: None } => format!("resumed({by:?})"),
                Action::Resumed { by, cpu: Some(c) } => {
                    format!("resumed({by:?} {:.0}%)", c * 100.0)
                }
                Action::Hung(_) => "hung".to_owned(),
                Action::StopReading => "stop-reading".to_owned(),
                Action::Cancel => "cancel".to_owned(),
            });
        }
        out
    }

    /// Ends the turn (the agent exits, its pipes close) and reads the outcome.
    fn end(&mut self, stream: StreamEnd) -> Ending {
        self.feed(Input::Exited(exit(0)));
        self.feed(Input::PipesClosed);
        self.0.ending(stream)
    }
}

fn exit(code: i32) -> ExitInfo {
    ExitInfo {
        code: Some(code),
        signal: None,
    }
}

/// `Stopping[budget_exceeded]`, `Draining`, `Stopping[finished]`.
fn describe(phase: &Phase) -> String {
    let (name, stop) = match phase {
        Phase::Starting => ("Starting", None),
        Phase::Running => ("Running", None),
        Phase::Finishing { .. } => ("Finishing", None),
        Phase::Cancelling { stop, .. } => ("Cancelling", Some(stop)),
        Phase::Stopping { stop, .. } => ("Stopping", Some(stop)),
        Phase::Draining { stop, .. } => ("Draining", stop.as_ref()),
        Phase::Ended { stop, .. } => ("Ended", stop.as_ref()),
    };
    match stop {
        None => name.to_owned(),
        Some(Stop::Finished) => format!("{name}[finished]"),
        Some(Stop::Limit { outcome, .. }) => format!("{name}[{outcome}]"),
    }
}

/// The inputs every phase is tried with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stim {
    Output,
    FinalWord,
    OverBudget,
    Exit,
    PipesClosed,
    CtrlC,
    /// SIGTERM (or SIGHUP) to runbook: the same as Ctrl-C.
    Term,
    /// A write to the run directory failed.
    StorageFault,
}

const STIMS: [Stim; 8] = [
    Stim::Output,
    Stim::FinalWord,
    Stim::OverBudget,
    Stim::Exit,
    Stim::PipesClosed,
    Stim::CtrlC,
    Stim::Term,
    Stim::StorageFault,
];

mod acp;
mod cpu;
mod matrix;
mod timers;
