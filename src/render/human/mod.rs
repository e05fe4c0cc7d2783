//! The human view on stderr: one line per thing worth a person's eye, under a live status line
//! on a terminal, or as plain timestamped lines anywhere else.
//!
//! This file holds the view itself, how its lines are laid out and the status line; what each
//! kind of event shows is in one file per family of events.

mod checks;
mod cost;
mod foreign;
mod lifecycle;
mod plan;
mod produced;
mod refusals;
mod said;
mod silent;
mod text;
mod tools;
mod warnings;

use std::io::{self, Write};
use std::time::{Duration, SystemTime};

use super::Styles;
use crate::consumer::{Consumer, Delivery, Tick};
use crate::event::{Event, EventKind, Turn};
use crate::format::{clock, clock_tenths, duration, fit, last_chars, money, short_count};
use crate::stats::RunStats;
use crate::term::Display;
use crate::term::live::StatusLine;
use crate::term::out::Terminal;
use crate::term::wrap::wrap;

/// How wide the view's lines may be: asked at every redraw, so a resized window is followed;
/// `None` when lines are never broken.
pub(crate) type Width = fn() -> Option<usize>;

/// Where the view's lines go: plain lines, or lines above a live status line.
enum Sink {
    Plain(Terminal),
    Live(StatusLine<Box<dyn Write + Send>>),
}

pub(crate) struct Human {
    display: Display,
    styles: Styles,
    verbose: bool,
    sink: Sink,
    width_from: Width,
    /// The width lines are laid out to now; `None`: never broken.
    width: Option<usize>,
    /// `width` was asked since the last redraw: the window may have changed since.
    width_fresh: bool,
    /// The tool or check running, and since when.
    running_tool: Option<(String, SystemTime)>,
    /// The turn's last warning that the agent goes round in circles.
    stuck: Option<String>,
    /// A permission request waiting for its answer: the tool and its input.
    asking: Option<String>,
    /// The answer text streaming in, shown on the status line until the whole text arrives.
    streaming: String,
    /// The last denial shown, so that the same denial is not shown twice.
    denial: tools::Shown,
    /// The refusals in a row so far: a flood of them is shown as a few and a count.
    refusals: refusals::Refusals,
    /// The time prefix of the last event, for what the view says as it closes.
    last_prefix: String,
    /// The model the agent announced last: each turn's adapter announces it again, and the
    /// line (with its price warning) is shown once until the model changes.
    model: Option<String>,
    /// The current turn is a planning turn of `--plan`.
    planning: bool,
    /// A planning turn's latest text, not shown yet.
    held: Option<Held>,
    quiet_for: Duration,
    /// Whether the agent has said anything at all yet.
    silent: silent::Silent,
    /// The agent was nudged: the turn that nudges it goes unsaid.
    nudging: bool,
    /// The run's budget (`--max-cost`), shown beside what was spent.
    budget: Option<f64>,
    /// Someone else has the terminal (a question): ticks draw nothing meanwhile.
    paused: bool,
    /// The run has finished: its summary says it all, and no tick brings the status line back.
    finished: bool,
    /// Why the run is ending, as far as the view has said it.
    said: said::Said,
    /// The agent's last whole text, shown as `│` lines: a summary that says the same is not
    /// shown again.
    last_text: String,
}

/// How a line may be fitted to the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fold {
    /// Meant to be read whole: broken into rows, never cut.
    Wrap,
    /// A one-row preview of the agent's words: cut to the window, with an ellipsis.
    Cut,
}

/// One line of an event: its text, whether it needs attention (kept by `--quiet`), and how it
/// fits a narrow window.
struct Line {
    attention: bool,
    fold: Fold,
    text: String,
}

/// One event's lines as they are made: what shaping them takes (the styles, whether `-v` asked
/// for details, the terminal's width, the event's turn and the run's totals), and the lines so
/// far.
struct Lines<'a> {
    s: &'a Styles,
    verbose: bool,
    /// Columns for the text after the time prefix; `usize::MAX` when lines are never broken.
    width: usize,
    turn: Turn,
    totals: &'a RunStats,
    out: Vec<Line>,
}

impl<'a> Lines<'a> {
    fn new(s: &'a Styles, verbose: bool, width: usize, turn: Turn, totals: &'a RunStats) -> Self {
        Lines {
            s,
            verbose,
            width,
            turn,
            totals,
            out: Vec::new(),
        }
    }

    /// A line that only informs; `--quiet` leaves it out.
    fn info(&mut self, text: impl std::fmt::Display) {
        self.push(false, Fold::Wrap, text);
    }

    /// A line that needs attention; `--quiet` keeps it.
    fn alert(&mut self, text: impl std::fmt::Display) {
        self.push(true, Fold::Wrap, text);
    }

    /// A one-row preview of the agent's words, cut to the window when it is narrow.
    fn preview(&mut self, text: impl std::fmt::Display) {
        self.push(false, Fold::Cut, text);
    }

    fn push(&mut self, attention: bool, fold: Fold, text: impl std::fmt::Display) {
        self.out.push(Line {
            attention,
            fold,
            text: text.to_string(),
        });
    }
}

/// The text of a planning turn, held until it is known not to be the plan.
struct Held {
    prefix: String,
    lines: Vec<Line>,
    text: String,
}

/// Columns of the time before every line (`[00:04.2] `), and so the indent of its later rows.
const PREFIX_WIDTH: usize = 10;
/// Rows after the first of a broken line are indented this much more than the line.
const HANGING: usize = 2;

impl Human {
    /// A view writing to `out`; with [`Display::Live`], lines go above a status line redrawn in
    /// place. Lines are laid out to the columns `width` says.
    pub(crate) fn new(
        display: Display,
        styles: Styles,
        verbose: bool,
        out: Terminal,
        width: Width,
    ) -> Self {
        let sink = if display == Display::Live {
            Sink::Live(StatusLine::new(out, styles.accent.clone()))
        } else {
            Sink::Plain(out)
        };
        Self {
            display,
            styles,
            verbose,
            sink,
            width_from: width,
            width: width(),
            width_fresh: true,
            running_tool: None,
            stuck: None,
            asking: None,
            streaming: String::new(),
            denial: tools::Shown::default(),
            refusals: refusals::Refusals::default(),
            last_prefix: String::new(),
            model: None,
            planning: false,
            held: None,
            quiet_for: Duration::ZERO,
            silent: silent::Silent::default(),
            nudging: false,
            budget: None,
            paused: false,
            finished: false,
            said: said::Said::default(),
            last_text: String::new(),
        }
    }

    /// A person answers the agent's permission requests at this terminal (see
    /// `supervisor::permission_prompt`).
    pub(crate) fn person_answers(mut self, yes: bool) -> Self {
        self.denial.person_answers = yes;
        self
    }

    /// The lines an event shows, each with whether it needs attention (kept by `--quiet`), from
    /// the file of its family. Every kind is named, so a new one has to be given a place.
    fn lines(&mut self, ev: &Event, totals: &RunStats) -> Vec<Line> {
        use EventKind as K;
        let width = self
            .width
            .map_or(usize::MAX, |w| w.saturating_sub(PREFIX_WIDTH));
        let mut lines = Lines::new(&self.styles, self.verbose, width, ev.turn, totals);
        let kind = &ev.kind;
        match kind {
            K::RunFinished {
                outcome,
                message,
                duration_ms,
                ..
            } => {
                let why = self.said.unsaid(*outcome, message);
                lifecycle::run_finished(&mut lines, *outcome, why.as_deref(), *duration_ms);
            }
            // The agent's last text, shown whole, says it already word for word.
            K::Summary { text, .. }
                if produced::repeats(text, &self.last_text)
                    && text::shown_whole(&self.last_text, self.verbose, lines.width) => {}
            // Said once, unless the model changes.
            K::ModelAnnounced { model, .. } if self.model.as_ref() == Some(model) => {}
            K::ModelAnnounced { model, .. } => {
                self.model = Some(model.clone());
                lifecycle::show(&mut lines, kind);
            }
            _ => match part_of(kind) {
                Part::Lifecycle => lifecycle::show(&mut lines, kind),
                Part::Tools => {
                    tools::show_held(&mut lines, &mut self.denial, &mut self.refusals, kind);
                }
                Part::Text => text::show(&mut lines, kind),
                Part::Cost => cost::show(&mut lines, kind),
                Part::Warnings => warnings::show(&mut lines, kind),
                Part::Plan => plan::show(&mut lines, kind),
                Part::Checks => checks::show(&mut lines, kind),
                Part::Produced => produced::show(&mut lines, kind),
            },
        }
        let shows = !lines.out.is_empty();
        if let Some(more) = self.refusals.end(kind, shows, &self.styles) {
            lines.out.insert(0, more);
        }
        lines.out
    }

    /// Keeps what the status line shows between events: the running tool and the text
    /// streaming in.
    fn remember(&mut self, kind: &EventKind, at: SystemTime) {
        match kind {
            EventKind::ToolStarted(t) => self.running_tool = Some((tools::running(t), at)),
            EventKind::CheckStarted { name, .. } => {
                self.running_tool = Some((format!("check {name}"), at));
            }
            EventKind::ToolCompleted(_) | EventKind::CheckFinished(_) => self.running_tool = None,
            EventKind::PermissionRequested { tool, input, .. } => {
                self.asking = Some(format!("{tool} {input}").trim().to_owned());
            }
            EventKind::PermissionAnswered { .. }
            | EventKind::TurnCompleted { .. }
            | EventKind::TurnFailed { .. } => {
                self.asking = None;
            }
            EventKind::StuckWarning(stuck) => {
                self.stuck = Some(format!("⟳ {}", crate::stuck::describe(stuck)));
            }
            EventKind::TurnStarted { .. } => self.stuck = None,
            EventKind::RunStarted(info) => self.budget = info.limits.max_cost_usd,
            EventKind::TextDelta { text } => text::stream(&mut self.streaming, text),
            EventKind::Text { text } => {
                self.streaming.clear();
                self.last_text.clone_from(text);
            }
            EventKind::StepFinished(_) => self.streaming.clear(),
            _ => {}
        }
        self.said.note(kind);
        self.silent.note(kind);
        if kind.is_from_agent() {
            self.quiet_for = Duration::ZERO;
        }
    }

    /// Shows one line, laid out for the window: above the status line on a terminal, else
    /// buffered until the next flush. A line of several lines (a plan) is shown as it is.
    fn emit(&mut self, prefix: &str, line: &Line) {
        let mut text = format!("{prefix} ");
        match self.width {
            Some(width) if !line.text.contains('\n') => match line.fold {
                Fold::Cut => text.push_str(&fit(&line.text, width.saturating_sub(PREFIX_WIDTH))),
                Fold::Wrap => {
                    let rows = wrap(&line.text, width, PREFIX_WIDTH, PREFIX_WIDTH + HANGING);
                    text.push_str(&rows.join("\n"));
                }
            },
            _ => text.push_str(&line.text),
        }
        match &mut self.sink {
            Sink::Live(live) => live.line(&text),
            Sink::Plain(out) => out.line(&text),
        }
    }

    /// `00:42 · step 3 · 12.3k tokens · $0.0123`, then the running tool or the newest streamed
    /// text, and how long the agent has been quiet once that is long enough to notice.
    fn status_line(&self, now: SystemTime, st: &RunStats) -> String {
        let elapsed = st
            .started_at
            .and_then(|t| now.duration_since(t).ok())
            .unwrap_or_default();
        let step = if st.turns.last().is_some_and(|t| t.steps.is_none()) {
            "?".to_owned()
        } else if st.step_open {
            st.steps_started.to_string()
        } else {
            st.steps_finished.to_string()
        };
        // The summary's figures, short: what is known, `≥` when more is not, `?` when nothing
        // is.
        let tokens = match (st.tokens.total(), st.tokens_incomplete()) {
            (0, true) => "?".to_owned(),
            (n, true) => format!("≥{}", short_count(n)),
            (n, false) => short_count(n),
        };
        // Nothing known of a cost (none reported yet, or not all known) is `$?`, never
        // `$0.0000`.
        let cost = if (st.cost_incomplete() || st.cost().is_none()) && st.known_cost() <= 0.0 {
            "$?".to_owned()
        } else {
            money(st.known_cost())
        };
        let budget = self
            .budget
            .map(|b| format!(" of {}", money(b)))
            .unwrap_or_default();
        let mut msg = format!(
            "{} · step {step} · {tokens} tokens · {cost}{budget}",
            clock(elapsed),
        );
        if let Some(asking) = &self.asking {
            msg.push_str(&format!(" · waiting for permission: {asking}"));
        } else if let Some((tool, since)) = &self.running_tool {
            let running = now.duration_since(*since).unwrap_or_default();
            msg.push_str(&format!(" · {tool}"));
            // Its clock, once it has run long enough for one to matter.
            if running >= Duration::from_secs(1) {
                msg.push_str(&format!(" {}", crate::format::running_for(running)));
            }
        } else if let Some(tail) = self.streaming.lines().rev().find(|l| !l.trim().is_empty()) {
            let width = self.width.unwrap_or(80);
            let room = width.saturating_sub(msg.len() + 8).max(10);
            // Its newest words; where the rest was cut, an ellipsis says so.
            let tail = tail.trim();
            let shown = if tail.chars().count() <= room {
                tail.to_owned()
            } else {
                format!("…{}", last_chars(tail, room.saturating_sub(1)))
            };
            msg.push_str(&format!(
                " · {}",
                self.styles.dim.apply_to(format!("│ {shown}"))
            ));
        }
        if self.silent.is_silent(self.quiet_for) {
            let word = format!("nothing from the agent in {}", duration(self.quiet_for));
            msg.push_str(&format!(" · {}", self.styles.warn.apply_to(word)));
        } else if self.quiet_for >= Duration::from_secs(5) {
            msg.push_str(&format!(" · quiet {}", duration(self.quiet_for)));
        }
        if let Some(stuck) = &self.stuck {
            msg.push_str(&format!(" · {}", self.styles.warn.apply_to(stuck)));
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

impl Human {
    /// Shows the held text of a planning turn: it was not the plan.
    fn release(&mut self) {
        if let Some(held) = self.held.take() {
            for line in &held.lines {
                self.emit(&held.prefix, line);
            }
        }
    }

    /// Follows the window's width, and redraws the status line with `status`.
    fn redraw(&mut self, status: Option<String>) -> io::Result<()> {
        self.width = (self.width_from)();
        // The next batch asks again: the window may be resized before it comes.
        self.width_fresh = false;
        let width = self.width.unwrap_or(80);
        match &mut self.sink {
            Sink::Live(live) => {
                if let Some(status) = status {
                    live.set(status);
                }
                live.draw(width)
            }
            Sink::Plain(out) => out.flush(),
        }
    }
}

impl Consumer for Human {
    fn event(&mut self, d: &Delivery<'_>) -> io::Result<()> {
        let escaped = foreign::escaped(d);
        let (ev, totals) = (&*escaped, d.totals);
        if !self.width_fresh {
            self.width = (self.width_from)();
            self.width_fresh = true;
        }
        self.remember(&ev.kind, ev.ts);
        let show = match self.display {
            Display::Silent => return Ok(()),
            Display::Quiet => |important: bool| important,
            Display::Live | Display::Lines => |_| true,
        };
        let prefix = self.prefix(ev.ts, totals.started_at);
        self.last_prefix.clone_from(&prefix);
        let mut lines: Vec<Line> = self
            .lines(ev, totals)
            .into_iter()
            .filter(|l| show(l.attention))
            .collect();
        match &ev.kind {
            EventKind::StuckNudged(_) => self.nudging = true,
            EventKind::TurnStarted { planning, .. } => {
                self.planning = *planning;
                // The nudge's line said what this turn is; its prompt is runbook's own.
                if std::mem::take(&mut self.nudging) && !self.verbose {
                    lines.clear();
                }
            }
            // A planning turn's text may be the plan, shown whole once proposed: held until
            // something else is shown.
            EventKind::Text { text } if self.planning => {
                self.release();
                self.held = Some(Held {
                    prefix,
                    lines,
                    text: text.trim().to_owned(),
                });
                return Ok(());
            }
            EventKind::PlanProposed { text, .. }
                if self.held.as_ref().is_some_and(|h| h.text == text.trim()) =>
            {
                self.held = None;
            }
            _ => {}
        }
        if !lines.is_empty() {
            self.release();
        }
        for line in &lines {
            self.emit(&prefix, line);
        }
        if matches!(self.sink, Sink::Live(_)) {
            // The summary says it all once the run is over.
            let status = match ev.kind {
                EventKind::RunFinished { .. } => {
                    self.finished = true;
                    String::new()
                }
                _ => self.status_line(ev.ts, totals),
            };
            if let Sink::Live(live) = &mut self.sink {
                live.set(status);
            }
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.redraw(None)
    }

    fn tick(&mut self, tick: &Tick<'_>) -> io::Result<()> {
        self.quiet_for = tick.quiet_for;
        if self.paused || self.finished {
            return Ok(());
        }
        if self.display != Display::Silent
            && let Some(text) = self.silent.line(tick.quiet_for)
        {
            let prefix = self.prefix(tick.now, tick.totals.started_at);
            let line = Line {
                attention: true,
                fold: Fold::Wrap,
                text: self.styles.warn.apply_to(text).to_string(),
            };
            self.emit(&prefix, &line);
        }
        if let Sink::Live(live) = &mut self.sink {
            live.spin();
            let status = self.status_line(tick.now, tick.totals);
            return self.redraw(Some(status));
        }
        Ok(())
    }

    fn pause(&mut self, paused: bool) {
        self.paused = paused;
        let width = self.width.unwrap_or(80);
        if let Sink::Live(live) = &mut self.sink {
            // The terminal is the person's: a failed draw shows up at the next one.
            let _ = if paused {
                live.pause(width)
            } else {
                live.resume(width)
            };
        }
    }

    fn close(&mut self) -> io::Result<()> {
        self.release();
        // Refusals not yet counted aloud (the events ended in a flood).
        if self.display != Display::Silent
            && let Some(more) = self.refusals.summary(&self.styles)
        {
            let prefix = self.last_prefix.clone();
            self.emit(&prefix, &more);
        }
        let width = self.width.unwrap_or(80);
        match &mut self.sink {
            Sink::Live(live) => live.pause(width),
            Sink::Plain(out) => out.flush(),
        }
    }

    fn name(&self) -> &'static str {
        "the terminal view"
    }

    fn watched(&self) -> bool {
        true
    }

    /// Its line tells at a glance whether an event's text needs escaping.
    fn wants_json(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;

/// The part of the view that shows an event of each kind.
enum Part {
    Lifecycle,
    Tools,
    Text,
    Cost,
    Warnings,
    Plan,
    Checks,
    Produced,
}

fn part_of(kind: &EventKind) -> Part {
    use EventKind as K;
    match kind {
        K::RunStarted(_)
        | K::RunFinished { .. }
        | K::ModelAnnounced { .. }
        | K::TurnStarted { .. }
        | K::AgentVersion { .. }
        | K::AgentSandbox { .. }
        | K::SessionStarted { .. }
        | K::StopRequested { .. }
        | K::SignalSent { .. }
        | K::TurnCompleted { .. }
        | K::TurnFailed { .. } => Part::Lifecycle,
        K::ToolStarted(_)
        | K::ToolCompleted(_)
        | K::SubagentStarted { .. }
        | K::SubagentFinished { .. }
        | K::PermissionDenied { .. }
        | K::PermissionRequested { .. }
        | K::PermissionAnswered { .. } => Part::Tools,
        K::Text { .. } | K::TextDelta { .. } | K::Reasoning { .. } => Part::Text,
        K::StepStarted { .. } | K::StepFinished(_) | K::AgentResult(_) => Part::Cost,
        K::ProviderError(_)
        | K::ProviderRetry(_)
        | K::AgentWarning { .. }
        | K::AgentError { .. }
        | K::Stderr { .. }
        | K::Unparsed(_)
        | K::WatchdogWarning { .. }
        | K::WatchdogResumed { .. }
        | K::WatchdogFired(_)
        | K::StuckWarning(_)
        | K::StuckDetected(_)
        | K::StuckNudged(_)
        | K::SandboxDenied { .. }
        | K::StorageFailed { .. }
        | K::UploadFailed(_)
        | K::ObserverFinished(_)
        | K::ObserverFailed { .. }
        | K::AfterFinalWord { .. } => Part::Warnings,
        K::PlanProposed { .. } | K::PlanDecided(_) => Part::Plan,
        K::CheckStarted { .. }
        | K::CheckFinished(_)
        | K::RepairStarted { .. }
        | K::RepairFinished { .. }
        | K::PermissionStalled { .. } => Part::Checks,
        K::Changes(_) | K::Summary { .. } => Part::Produced,
    }
}
