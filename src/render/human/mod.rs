//! The human view on stderr: one line per thing worth a person's eye, under a live status line
//! on a terminal, or as plain timestamped lines anywhere else.
//!
//! This file holds the view itself, the status line and the live bar; what each kind of event
//! shows is in one file per family of events.

mod cost;
mod lifecycle;
mod plan;
mod text;
mod tools;
mod warnings;

use std::io::{self, Write};
use std::time::{Duration, SystemTime};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Styles;
use super::format::{clock, clock_tenths, duration, fit, last_chars, money, short_count};
use crate::batched::Batched;
use crate::consumer::{Consumer, Delivery, Tick};
use crate::event::{Event, EventKind, Turn};
use crate::stats::RunStats;
use crate::term::Display;

pub(crate) struct Human {
    display: Display,
    styles: Styles,
    verbose: bool,
    out: Batched<Box<dyn Write + Send>>,
    bar: Option<ProgressBar>,
    width: usize,
    running_tool: Option<String>,
    /// The answer text streaming in, shown on the status line until the whole text arrives.
    streaming: String,
    /// The tool of the last call shown as denied, so its `permission.denied` is not shown twice.
    denied_tool: Option<String>,
    quiet_for: Duration,
}

/// One event's lines as they are made: what shaping them takes (the styles, whether `-v` asked
/// for details, the terminal's width, the event's turn and the run's totals), and the lines so
/// far, each with whether it needs attention (kept by `--quiet`).
struct Lines<'a> {
    s: &'a Styles,
    verbose: bool,
    width: usize,
    turn: Turn,
    totals: &'a RunStats,
    out: Vec<(bool, String)>,
}

impl Lines<'_> {
    /// A line that only informs; `--quiet` leaves it out.
    fn info(&mut self, text: impl std::fmt::Display) {
        self.out.push((false, text.to_string()));
    }

    /// A line that needs attention; `--quiet` keeps it.
    fn alert(&mut self, text: impl std::fmt::Display) {
        self.out.push((true, text.to_string()));
    }
}

impl Human {
    /// A view writing to `out`; with [`Display::Live`] the status line is drawn on stderr.
    pub(crate) fn new(
        display: Display,
        styles: Styles,
        verbose: bool,
        out: Box<dyn Write + Send>,
    ) -> Self {
        let (bar, width) = if display == Display::Live {
            let bar = live_bar();
            let width = console::Term::stderr().size().1 as usize;
            (Some(bar), width.max(40))
        } else {
            (None, usize::MAX)
        };
        Self {
            display,
            styles,
            verbose,
            out: Batched::new(out),
            bar,
            width,
            running_tool: None,
            streaming: String::new(),
            denied_tool: None,
            quiet_for: Duration::ZERO,
        }
    }

    /// The lines an event shows, each with whether it needs attention (kept by `--quiet`), from
    /// the file of its family. Every kind is named, so a new one has to be given a place.
    fn lines(&mut self, ev: &Event, totals: &RunStats) -> Vec<(bool, String)> {
        use EventKind as K;
        let mut lines = Lines {
            s: &self.styles,
            verbose: self.verbose,
            width: self.width,
            turn: ev.turn,
            totals,
            out: Vec::new(),
        };
        let kind = &ev.kind;
        match kind {
            K::RunStarted(_)
            | K::TurnStarted { .. }
            | K::AgentVersion { .. }
            | K::SessionStarted { .. }
            | K::StopRequested { .. }
            | K::SignalSent { .. }
            | K::TurnCompleted { .. }
            | K::TurnFailed { .. }
            | K::RunFinished { .. } => lifecycle::show(&mut lines, kind),
            K::ToolStarted(_)
            | K::ToolCompleted(_)
            | K::SubagentStarted { .. }
            | K::SubagentFinished { .. }
            | K::PermissionDenied { .. } => tools::show(&mut lines, &mut self.denied_tool, kind),
            K::Text { .. } | K::TextDelta { .. } | K::Reasoning { .. } => {
                text::show(&mut lines, kind)
            }
            K::StepStarted { .. } | K::StepFinished(_) | K::AgentResult(_) => {
                cost::show(&mut lines, kind)
            }
            K::ProviderError(_)
            | K::ProviderRetry(_)
            | K::AgentWarning { .. }
            | K::AgentError { .. }
            | K::Stderr { .. }
            | K::Unparsed(_)
            | K::WatchdogWarning { .. }
            | K::WatchdogFired(_)
            | K::StorageFailed { .. }
            | K::AfterFinalWord { .. } => warnings::show(&mut lines, kind),
            K::PlanProposed { .. } | K::PlanDecided(_) => plan::show(&mut lines, kind),
        }
        lines.out
    }

    /// Keeps what the status line shows between events: the running tool and the text
    /// streaming in.
    fn remember(&mut self, kind: &EventKind) {
        match kind {
            EventKind::ToolStarted(t) => self.running_tool = Some(tools::running(t)),
            EventKind::ToolCompleted(_) => self.running_tool = None,
            EventKind::TextDelta { text } => text::stream(&mut self.streaming, text),
            EventKind::Text { .. } | EventKind::StepFinished(_) => self.streaming.clear(),
            _ => {}
        }
        if kind.is_from_agent() {
            self.quiet_for = Duration::ZERO;
        }
    }

    /// Shows one line: above the status line on a terminal, else buffered until the next flush.
    fn emit(&mut self, prefix: &str, text: &str) {
        match &self.bar {
            // On a terminal one event is one screen line; plain output is never cut.
            Some(bar) if text.contains('\n') => bar.println(format!("{prefix} {text}")),
            Some(bar) => {
                let text = fit(text, self.width.saturating_sub(11));
                bar.println(format!("{prefix} {text}"));
            }
            None => {
                // Into memory: cannot fail.
                let _ = writeln!(self.out, "{prefix} {text}");
            }
        }
    }

    /// `00:42 · step 3 · 12.3k tokens · $0.0123`, then the running tool or the newest streamed
    /// text, and how long the agent has been quiet once that is long enough to notice.
    fn status_line(&self, now: SystemTime, st: &RunStats) -> String {
        let elapsed = st
            .started_at
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default();
        let step = if st.step_open {
            st.steps_started
        } else {
            st.steps_finished
        };
        let mut msg = format!(
            "{} · step {step} · {} tokens · {}",
            clock(elapsed),
            short_count(st.tokens.total()),
            money(st.known_cost())
        );
        if let Some(tool) = &self.running_tool {
            msg.push_str(&format!(" · {tool}"));
        } else if let Some(tail) = self.streaming.lines().rev().find(|l| !l.trim().is_empty()) {
            let room = self.width.saturating_sub(msg.len() + 8).max(10);
            let shown = last_chars(tail.trim(), room);
            msg.push_str(&format!(
                " · {}",
                self.styles.dim.apply_to(format!("│ {shown}"))
            ));
        }
        if self.quiet_for >= Duration::from_secs(5) {
            msg.push_str(&format!(" · quiet {}", duration(self.quiet_for)));
        }
        msg
    }

    /// `[00:04.2]`: the time since the run started, before every line.
    fn prefix(&self, ts: SystemTime, started: Option<SystemTime>) -> String {
        let elapsed = started
            .and_then(|t| ts.duration_since(t).ok())
            .unwrap_or_default();
        self.styles
            .dim
            .apply_to(format!("[{}]", clock_tenths(elapsed)))
            .to_string()
    }
}

impl Consumer for Human {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        let (ev, totals) = (d.event, d.totals);
        self.remember(&ev.kind);
        let show = match self.display {
            Display::Silent => return Ok(()),
            Display::Quiet => |important: bool| important,
            Display::Live | Display::Lines => |_| true,
        };
        let prefix = self.prefix(ev.ts, totals.started_at);
        for (important, text) in self.lines(ev, totals) {
            if show(important) {
                self.emit(&prefix, &text);
            }
        }
        if let Some(bar) = &self.bar {
            if matches!(ev.kind, EventKind::RunFinished { .. }) {
                bar.finish_and_clear();
            } else {
                bar.set_message(self.status_line(ev.ts, totals));
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }

    fn tick(&mut self, tick: &Tick<'_>) -> io::Result<()> {
        self.quiet_for = tick.quiet_for;
        if let Some(bar) = &self.bar {
            bar.set_message(self.status_line(tick.now, tick.totals));
        }
        Ok(())
    }

    fn pause(&mut self, paused: bool) {
        if let Some(bar) = &mut self.bar {
            if paused {
                bar.finish_and_clear();
            } else {
                *bar = live_bar();
            }
        }
    }

    fn close(&mut self) -> io::Result<()> {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
        self.flush()
    }

    fn name(&self) -> &'static str {
        "the terminal view"
    }
}

/// The status line, redrawn a few times a second on stderr.
fn live_bar() -> ProgressBar {
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(4));
    bar.set_style(ProgressStyle::with_template("{spinner:.cyan} {msg}").expect("valid template"));
    bar.enable_steady_tick(Duration::from_millis(250));
    bar
}

#[cfg(test)]
mod tests;
