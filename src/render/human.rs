//! The human view on stderr: one line per thing worth a person's eye, under a live status line
//! on a terminal, or as plain timestamped lines anywhere else.

use std::io::{self, Write};
use std::time::{Duration, SystemTime};

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::Styles;
use super::format::{
    clock, clock_tenths, duration, duration_ms, first_line, fit, last_chars, money, plural,
    short_count, thousands,
};
use crate::consumer::{Consumer, Delivery, Tick};
use crate::event::{CostSource, Event, EventKind, Outcome, ToolStatus, Turn};
use crate::stats::RunStats;
use crate::term::Display;

/// How many lines of the agent's text are shown without `-v`.
const TEXT_LINES: usize = 3;

pub(crate) struct Human {
    display: Display,
    styles: Styles,
    verbose: bool,
    out: Box<dyn Write + Send>,
    bar: Option<ProgressBar>,
    width: usize,
    running_tool: Option<String>,
    /// The answer text streaming in, shown on the status line until the whole text arrives.
    streaming: String,
    /// The tool of the last call shown as denied, so its `permission.denied` is not shown twice.
    denied_tool: Option<String>,
    quiet_for: Duration,
    buf: Vec<u8>,
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
            out,
            bar,
            width,
            running_tool: None,
            streaming: String::new(),
            denied_tool: None,
            quiet_for: Duration::ZERO,
            buf: Vec::new(),
        }
    }

    /// The lines an event shows, each with whether it needs attention (kept by `--quiet`).
    fn lines(&mut self, ev: &Event, totals: &RunStats) -> Vec<(bool, String)> {
        let s = self.styles.clone();
        let mut out = Vec::new();
        let mut line = |important: bool, text: String| out.push((important, text));
        match &ev.kind {
            EventKind::RunStarted(info) => {
                let model = info
                    .model
                    .as_deref()
                    .map(|m| format!(" ({m})"))
                    .unwrap_or_default();
                line(
                    false,
                    format!(
                        "{} {}{model} · run {} · {}",
                        s.accent.apply_to("▶"),
                        s.bold.apply_to(&info.agent),
                        info.run_id,
                        s.dim.apply_to(&info.cwd)
                    ),
                );
            }
            EventKind::TurnStarted { argv, .. } => {
                if ev.turn.index > 0 {
                    line(
                        false,
                        format!(
                            "{} turn {} ({})",
                            s.accent.apply_to("▶"),
                            ev.turn.index + 1,
                            turn_kind(ev.turn)
                        ),
                    );
                }
                if self.verbose {
                    line(
                        false,
                        s.dim
                            .apply_to(format!("  $ {}", argv.join(" ")))
                            .to_string(),
                    );
                }
            }
            EventKind::AgentVersion { version } if self.verbose => {
                line(
                    false,
                    s.dim
                        .apply_to(format!("  agent version {version}"))
                        .to_string(),
                );
            }
            EventKind::SessionStarted { session_id } if self.verbose => {
                line(
                    false,
                    s.dim
                        .apply_to(format!("  session {session_id}"))
                        .to_string(),
                );
            }
            EventKind::StepFinished(step) if self.verbose => {
                let cost = step
                    .cost_usd
                    .map(money)
                    .unwrap_or_else(|| "cost unknown".into());
                line(
                    false,
                    s.dim
                        .apply_to(format!(
                            "  step {} {} · {} tokens · {cost}",
                            totals.steps_finished,
                            step.reason,
                            thousands(step.tokens.total())
                        ))
                        .to_string(),
                );
            }
            EventKind::Text { text } => {
                let limit = if self.verbose { usize::MAX } else { TEXT_LINES };
                let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
                for l in lines.iter().take(limit) {
                    line(false, format!("{} {l}", s.dim.apply_to("│")));
                }
                if lines.len() > limit {
                    line(
                        false,
                        s.dim
                            .apply_to(format!(
                                "│ … {} (-v shows all)",
                                plural((lines.len() - limit) as u64, "more line")
                            ))
                            .to_string(),
                    );
                }
            }
            EventKind::Reasoning { text } if self.verbose => {
                for l in text.lines().filter(|l| !l.trim().is_empty()) {
                    line(false, s.dim.apply_to(format!("┆ {l}")).to_string());
                }
            }
            EventKind::ToolCompleted(t) => {
                // A subagent's calls sit under it.
                let nest = if t.parent.is_some() { "  " } else { "" };
                let input = if t.input.is_empty() {
                    String::new()
                } else {
                    format!(" {}", t.input)
                };
                if t.status == ToolStatus::Denied {
                    self.denied_tool = Some(t.name.clone());
                }
                let took = t
                    .duration_ms
                    .map(|ms| format!(" {}", s.dim.apply_to(duration_ms(ms))))
                    .unwrap_or_default();
                let first = t.error.as_deref().map(first_line).unwrap_or_default();
                match t.status {
                    ToolStatus::Ok => line(
                        false,
                        format!(
                            "{nest}{} {}{input}{took}",
                            s.ok.apply_to("✓"),
                            s.bold.apply_to(&t.name),
                        ),
                    ),
                    ToolStatus::Error => line(
                        true,
                        format!(
                            "{nest}{} {}{input}{took}: {}",
                            s.error.apply_to("✗"),
                            s.bold.apply_to(&t.name),
                            s.error.apply_to(first)
                        ),
                    ),
                    ToolStatus::Denied => line(
                        true,
                        format!(
                            "{nest}{} {}{input}: {}",
                            s.warn.apply_to("⊘"),
                            s.bold.apply_to(&t.name),
                            s.warn.apply_to("permission denied")
                        ),
                    ),
                }
            }
            EventKind::SubagentStarted {
                description,
                session_id,
                ..
            } => {
                let id = session_id
                    .as_deref()
                    .map(|id| format!(" {}", s.dim.apply_to(id)))
                    .unwrap_or_default();
                line(
                    false,
                    format!("{} subagent: {description}{id}", s.accent.apply_to("↳")),
                );
            }
            EventKind::SubagentFinished {
                status, message, ..
            } => {
                let what = message
                    .as_deref()
                    .map(|m| format!(": {m}"))
                    .unwrap_or_default();
                match status {
                    ToolStatus::Ok => line(
                        false,
                        format!("{} subagent done{what}", s.accent.apply_to("↲")),
                    ),
                    _ => line(
                        true,
                        format!(
                            "{} {}{what}",
                            s.error.apply_to("↲"),
                            s.error.apply_to("subagent failed")
                        ),
                    ),
                }
            }
            // The denied call was just shown as such.
            EventKind::PermissionDenied { tool, .. }
                if self.denied_tool.take().as_ref() == Some(tool) => {}
            EventKind::PermissionDenied { tool, detail } => {
                let detail = if detail.is_empty() {
                    String::new()
                } else {
                    format!(" ({detail})")
                };
                line(
                    true,
                    s.warn
                        .apply_to(format!("⚠ permission denied: {tool}{detail}"))
                        .to_string(),
                );
            }
            EventKind::ProviderError(e) => {
                let status = e.status.map(|c| format!(" {c}")).unwrap_or_default();
                let retry = match e.retryable {
                    Some(true) => " (retryable)",
                    Some(false) => " (not retryable)",
                    None => "",
                };
                line(
                    true,
                    s.warn
                        .apply_to(format!(
                            "⚠ provider error: {}{status}: {}{retry}",
                            e.name,
                            first_line(&e.message)
                        ))
                        .to_string(),
                );
            }
            EventKind::ProviderRetry(r) => {
                let of = r.max_attempts.map(|m| format!("/{m}")).unwrap_or_default();
                let delay = r
                    .delay_ms
                    .map(|ms| format!(" in {}", duration_ms(ms)))
                    .unwrap_or_default();
                let status = r.status.map(|c| format!(" {c}")).unwrap_or_default();
                line(
                    false,
                    s.warn
                        .apply_to(format!(
                            "⟳ provider retry {}{of}{delay}: {}{status}",
                            r.attempt,
                            first_line(&r.message)
                        ))
                        .to_string(),
                );
            }
            EventKind::AgentResult(r) if self.verbose => {
                let tokens = r
                    .tokens
                    .map(|t| format!(" · {} tokens", thousands(t.total())))
                    .unwrap_or_default();
                let cost = match (r.cost_usd, r.cost_source) {
                    (Some(c), Some(CostSource::Estimated)) => {
                        format!(" · {} (estimated)", money(c))
                    }
                    (Some(c), _) => format!(" · {}", money(c)),
                    (None, _) => " · cost unknown".to_owned(),
                };
                let verdict = if r.ok { "done" } else { "failed" };
                line(
                    false,
                    s.dim
                        .apply_to(format!("  agent result: {verdict}{tokens}{cost}"))
                        .to_string(),
                );
            }
            EventKind::PlanProposed { revision, text } => {
                let title = match revision {
                    0 => "the plan".to_owned(),
                    n => format!("the plan, revision {n}"),
                };
                line(
                    true,
                    format!("{} {}", s.accent.apply_to("▶"), s.bold.apply_to(title)),
                );
                let width = if self.width == usize::MAX {
                    100
                } else {
                    self.width
                };
                line(true, super::markdown::render(text, s.color, width));
            }
            EventKind::PlanDecided(d) => {
                use crate::event::Decision;
                let who = match d.by {
                    crate::event::DecidedBy::Person => "",
                    crate::event::DecidedBy::Auto => " (automatically)",
                };
                let text = match d.decision {
                    Decision::Execute => format!("{} executing the plan{who}", s.ok.apply_to("✓")),
                    Decision::Revise => format!(
                        "{} revising the plan: {}",
                        s.accent.apply_to("↻"),
                        first_line(d.feedback.as_deref().unwrap_or_default())
                    ),
                    Decision::Abort => format!("{} plan not approved{who}", s.error.apply_to("✗")),
                    Decision::Stop => {
                        format!("{} stopping at the plan (--plan-only)", s.ok.apply_to("✓"))
                    }
                };
                line(true, text);
            }
            EventKind::AgentWarning { message } => {
                line(
                    true,
                    s.warn
                        .apply_to(format!("⚠ agent warning: {}", first_line(message)))
                        .to_string(),
                );
            }
            EventKind::AgentError { name, message } => {
                line(
                    true,
                    s.error
                        .apply_to(format!("✗ agent error: {name}: {}", first_line(message)))
                        .to_string(),
                );
            }
            EventKind::Stderr { line: l } => {
                line(false, s.dim.apply_to(format!("stderr: {l}")).to_string())
            }
            EventKind::Unparsed(u) => line(
                true,
                s.warn
                    .apply_to(format!(
                        "⚠ unreadable output line ({}, {} bytes): {}",
                        reason_name(u.reason),
                        thousands(u.bytes),
                        first_line(&u.head)
                    ))
                    .to_string(),
            ),
            EventKind::WatchdogWarning {
                quiet_ms,
                timeout_ms,
            } => line(
                true,
                s.warn
                    .apply_to(format!(
                        "⚠ no activity for {}; the agent will be stopped after {} of silence",
                        duration_ms(*quiet_ms),
                        duration_ms(*timeout_ms)
                    ))
                    .to_string(),
            ),
            EventKind::WatchdogFired(d) => {
                let step = d
                    .open_step
                    .map(|n| format!(" · in step {n}"))
                    .unwrap_or_default();
                let cost = d
                    .cost_usd
                    .map(|c| format!(" · {} so far", money(c)))
                    .unwrap_or_default();
                let last = d.last_event.as_deref().unwrap_or("none");
                line(
                    true,
                    s.error
                        .apply_to(format!(
                            "✗ watchdog: no activity for {} (stdout quiet {}, stderr quiet {}, cpu idle {})",
                            duration_ms(d.timeout_ms),
                            duration_ms(d.stdout_quiet_ms),
                            duration_ms(d.stderr_quiet_ms),
                            duration_ms(d.cpu_quiet_ms),
                        ))
                        .to_string(),
                );
                let done = plural(u64::from(d.completed_steps), "step");
                line(
                    true,
                    s.dim
                        .apply_to(format!("  last event {last}{step} · {done} done{cost}"))
                        .to_string(),
                );
                for l in &d.stderr_tail {
                    line(true, s.dim.apply_to(format!("  stderr: {l}")).to_string());
                }
            }
            EventKind::StopRequested { message, .. } => {
                line(
                    true,
                    s.error
                        .apply_to(format!("✗ stopping the agent: {message}"))
                        .to_string(),
                );
            }
            EventKind::SignalSent { signal, processes } => {
                let plural = if *processes == 1 { "" } else { "es" };
                line(
                    true,
                    s.dim
                        .apply_to(format!("→ {signal} to {processes} process{plural}"))
                        .to_string(),
                );
            }
            EventKind::TurnFailed {
                outcome, message, ..
            } if self.verbose => {
                line(
                    false,
                    s.dim
                        .apply_to(format!("  turn {} {outcome}: {message}", ev.turn.index + 1))
                        .to_string(),
                );
            }
            EventKind::RunFinished {
                outcome,
                message,
                duration_ms,
                ..
            } => {
                line(true, self.summary(totals, *outcome, message, *duration_ms));
                if let Some(info) = totals.info.as_ref().filter(|i| !i.run_dir.is_empty()) {
                    line(
                        true,
                        s.dim
                            .apply_to(format!("  receipt: {}/result.json", info.run_dir))
                            .to_string(),
                    );
                }
            }
            _ => {}
        }
        out
    }

    fn summary(&self, st: &RunStats, outcome: Outcome, message: &str, took_ms: u64) -> String {
        let s = &self.styles;
        let tools = match st.failed_tools() {
            0 => plural(u64::from(st.tool_calls), "tool call"),
            n => format!(
                "{} ({n} failed)",
                plural(u64::from(st.tool_calls), "tool call")
            ),
        };
        let cost = st.cost().map_or_else(|| "cost unknown".to_owned(), money);
        // Agents that don't report their model calls (Codex) have no steps to count.
        let steps = match st.steps_finished {
            0 => String::new(),
            n => format!("{} · ", plural(u64::from(n), "step")),
        };
        let facts = format!(
            "{} · {steps}{tools} · {} tokens · {cost}",
            duration_ms(took_ms),
            thousands(st.tokens.total())
        );
        if outcome == Outcome::Completed {
            format!(
                "{} {} in {facts}",
                s.ok.apply_to("✓"),
                s.ok.apply_to("completed")
            )
        } else {
            format!(
                "{} {} after {facts}: {message}",
                s.error.apply_to("✗"),
                s.error.apply_to(outcome.as_str())
            )
        }
    }

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
        match &ev.kind {
            EventKind::ToolStarted(t) => {
                self.running_tool = Some(format!("{} {}", t.name, t.input))
            }
            EventKind::ToolCompleted(_) => self.running_tool = None,
            EventKind::TextDelta { text } => {
                self.streaming.push_str(text);
                // Only the tail is ever shown.
                if self.streaming.len() > 4096 {
                    let mut cut = self.streaming.len() - 1024;
                    while !self.streaming.is_char_boundary(cut) {
                        cut += 1;
                    }
                    self.streaming.drain(..cut);
                }
            }
            EventKind::Text { .. } | EventKind::StepFinished(_) => self.streaming.clear(),
            _ => {}
        }
        if ev.kind.is_from_agent() {
            self.quiet_for = Duration::ZERO;
        }
        let show = match self.display {
            Display::Silent => return Ok(()),
            Display::Quiet => |important: bool| important,
            Display::Live | Display::Lines => |_| true,
        };
        let prefix = self.prefix(ev.ts, totals.started_at);
        for (important, text) in self.lines(ev, totals) {
            if !show(important) {
                continue;
            }
            match &self.bar {
                // On a terminal one event is one screen line; plain output is never cut.
                Some(bar) if text.contains('\n') => bar.println(format!("{prefix} {text}")),
                Some(bar) => {
                    let text = fit(&text, self.width.saturating_sub(11));
                    bar.println(format!("{prefix} {text}"));
                }
                None => {
                    self.buf.extend_from_slice(prefix.as_bytes());
                    self.buf.push(b' ');
                    self.buf.extend_from_slice(text.as_bytes());
                    self.buf.push(b'\n');
                }
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
        if !self.buf.is_empty() {
            let result = self
                .out
                .write_all(&self.buf)
                .and_then(|()| self.out.flush());
            self.buf.clear();
            result?;
        }
        Ok(())
    }

    fn tick(&mut self, tick: &Tick<'_>) {
        self.quiet_for = tick.quiet_for;
        if let Some(bar) = &self.bar {
            bar.set_message(self.status_line(tick.now, tick.totals));
        }
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

fn turn_kind(turn: Turn) -> &'static str {
    match turn.kind {
        crate::event::TurnKind::Start => "start",
        crate::event::TurnKind::Resume => "resume",
    }
}

/// The schema's name of an unparsed reason (`not_json`).
fn reason_name(reason: crate::event::UnparsedReason) -> String {
    serde_json::to_value(reason)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::event::{
        CostSource, Diagnostic, ExitInfo, Limits, ProviderError, RunInfo, StepUsage, Stream,
        Tokens, ToolEnd, ToolStart, TurnKind, Unparsed, UnparsedReason,
    };

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    /// Folds an event and shows it, as the dispatcher would.
    fn feed(
        human: &mut Human,
        totals: &mut RunStats,
        seq: u64,
        ts: SystemTime,
        turn: Turn,
        kind: EventKind,
    ) {
        let event = Event {
            seq,
            ts,
            turn,
            kind,
        };
        totals.observe(&event);
        human
            .event(&Delivery {
                event: &event,
                totals,
                json: None,
            })
            .unwrap();
    }

    fn at(ms: u64) -> SystemTime {
        humantime::parse_rfc3339("2026-11-22T04:00:00Z").unwrap() + Duration::from_millis(ms)
    }

    fn tool(name: &str, input: &str, status: ToolStatus, error: Option<&str>) -> [EventKind; 2] {
        [
            EventKind::ToolStarted(ToolStart {
                call_id: "c".into(),
                name: name.into(),
                kind: crate::event::ToolKind::of(name),
                input: input.into(),
                parent: None,
            }),
            EventKind::ToolCompleted(ToolEnd {
                call_id: "c".into(),
                name: name.into(),
                kind: crate::event::ToolKind::of(name),
                input: input.into(),
                parent: None,
                status,
                error: error.map(Into::into),
                output_bytes: Some(120),
                duration_ms: Some(42),
            }),
        ]
    }

    /// A run that shows every kind of event once.
    fn every_event() -> Vec<(u64, EventKind)> {
        let step = |reason: &str, cost| {
            EventKind::StepFinished(StepUsage {
                id: None,
                reason: reason.into(),
                tokens: Tokens {
                    input: 1500,
                    output: 40,
                    reasoning: 10,
                    cache_read: 1000,
                    cache_write: 0,
                },
                cost_usd: Some(cost),
                cost_source: Some(CostSource::Reported),
            })
        };
        let mut events = vec![
            (
                0,
                EventKind::RunStarted(RunInfo {
                    schema_version: 1,
                    run_id: "20261122-040000-abcde".into(),
                    runbook_version: "0.1.0".into(),
                    agent: "opencode".into(),
                    model: Some("fake/fake-model".into()),
                    prompt: "Fix the flaky test".into(),
                    cwd: "/work/repo".into(),
                    run_dir: "/state/runs/20261122-040000-abcde".into(),
                    pid: 1,
                    pid_start: None,
                    limits: Limits {
                        inactivity_timeout_ms: 180_000,
                        kill_grace_ms: 10_000,
                        timeout_ms: None,
                        max_cost_usd: None,
                    },
                    settings: Vec::new(),
                    env: Vec::new(),
                }),
            ),
            (
                5,
                EventKind::TurnStarted {
                    argv: vec![
                        "opencode".into(),
                        "run".into(),
                        "--format".into(),
                        "json".into(),
                    ],
                    pid: 42,
                },
            ),
            (
                800,
                EventKind::AgentVersion {
                    version: "1.18.33".into(),
                },
            ),
            (
                3100,
                EventKind::SessionStarted {
                    session_id: "ses_abc".into(),
                },
            ),
            (3200, EventKind::StepStarted { id: None }),
            (
                3300,
                EventKind::Reasoning {
                    text: "The test races on a shared temp dir.".into(),
                },
            ),
            (
                3400,
                EventKind::Text {
                    text:
                        "I'll look at the test first.\n\nThen fix it.\nThen run it.\nThen report."
                            .into(),
                },
            ),
        ];
        let [a, b] = tool("read", "tests/flaky.rs", ToolStatus::Ok, None);
        events.extend([(3500, a), (3540, b)]);
        let [a, b] = tool(
            "read",
            "missing.txt",
            ToolStatus::Error,
            Some("File not found: missing.txt\nmore detail"),
        );
        events.extend([(3600, a), (3610, b)]);
        let [a, b] = tool(
            "bash",
            "rm -rf target",
            ToolStatus::Denied,
            Some("rejected"),
        );
        events.extend([(3700, a), (3710, b)]);
        events.extend([
            (
                3711,
                EventKind::PermissionDenied {
                    tool: "bash".into(),
                    detail: "rm -rf target".into(),
                },
            ),
            (
                3800,
                EventKind::SubagentStarted {
                    session_id: Some("ses_child".into()),
                    call_id: "t".into(),
                    description: "Summarize README".into(),
                },
            ),
            (
                3850,
                EventKind::ToolCompleted(ToolEnd {
                    call_id: "n".into(),
                    name: "bash".into(),
                    kind: crate::event::ToolKind::Shell,
                    input: "ls".into(),
                    parent: Some("t".into()),
                    status: ToolStatus::Ok,
                    error: None,
                    output_bytes: None,
                    duration_ms: None,
                }),
            ),
            (
                3860,
                EventKind::SubagentFinished {
                    call_id: "t".into(),
                    status: ToolStatus::Ok,
                    message: Some("README has 4 lines".into()),
                },
            ),
            (
                3870,
                EventKind::PermissionDenied {
                    tool: "write".into(),
                    detail: "/etc/hosts".into(),
                },
            ),
            (
                3880,
                EventKind::TextDelta {
                    text: "Now the fix".into(),
                },
            ),
            (3900, step("tool-calls", 0.0051)),
            (
                3950,
                EventKind::ProviderRetry(crate::event::ProviderRetry {
                    attempt: 1,
                    max_attempts: Some(3),
                    delay_ms: Some(600),
                    status: Some(529),
                    message: "overloaded".into(),
                }),
            ),
            (
                3960,
                EventKind::AgentWarning {
                    message: "Model metadata for `gpt-x` not found".into(),
                },
            ),
            (
                3970,
                EventKind::AgentResult(crate::event::AgentResult {
                    ok: true,
                    message: None,
                    tokens: Some(Tokens {
                        input: 3000,
                        output: 80,
                        reasoning: 20,
                        cache_read: 2000,
                        cache_write: 0,
                    }),
                    cost_usd: Some(0.0123),
                    cost_source: Some(CostSource::Estimated),
                    model_calls: None,
                    duration_ms: Some(3900),
                }),
            ),
            (
                4000,
                EventKind::Stderr {
                    line: "warning: slow disk".into(),
                },
            ),
            (
                4100,
                EventKind::Unparsed(Unparsed {
                    stream: Stream::Stdout,
                    reason: UnparsedReason::NotJson,
                    bytes: 17,
                    head: "this is not json".into(),
                }),
            ),
            (
                4200,
                EventKind::ProviderError(ProviderError {
                    name: "APIError".into(),
                    message: "rate limited".into(),
                    status: Some(429),
                    retryable: Some(true),
                }),
            ),
            (
                4300,
                EventKind::AgentError {
                    name: "UnknownError".into(),
                    message: "Unexpected server error".into(),
                },
            ),
            (
                94_300,
                EventKind::WatchdogWarning {
                    quiet_ms: 90_000,
                    timeout_ms: 180_000,
                },
            ),
            (
                184_300,
                EventKind::WatchdogFired(Box::new(Diagnostic {
                    timeout_ms: 180_000,
                    stdout_quiet_ms: 180_000,
                    stderr_quiet_ms: 180_300,
                    cpu_quiet_ms: 180_000,
                    last_event: Some("step.started".into()),
                    open_step: Some(2),
                    completed_steps: 1,
                    cost_usd: Some(0.0051),
                    stderr_tail: vec!["warning: slow disk".into()],
                })),
            ),
            (
                184_301,
                EventKind::SignalSent {
                    signal: "SIGTERM".into(),
                    processes: 3,
                },
            ),
            (
                184_400,
                EventKind::StopRequested {
                    reason: Outcome::BudgetExceeded,
                    message: "cost $2.0100 crossed --max-cost $2.00".into(),
                },
            ),
            (
                184_500,
                EventKind::TurnFailed {
                    outcome: Outcome::Hung,
                    message: "no activity for 3m 0s".into(),
                    exit: ExitInfo {
                        code: None,
                        signal: Some(15),
                    },
                },
            ),
            (
                184_600,
                EventKind::RunFinished {
                    outcome: Outcome::Hung,
                    message: "no activity for 3m 0s: the agent looks hung".into(),
                    duration_ms: 184_600,
                    exit: ExitInfo {
                        code: None,
                        signal: Some(15),
                    },
                },
            ),
        ]);
        events
    }

    fn render(
        display: Display,
        styles: Styles,
        verbose: bool,
        events: &[(u64, EventKind)],
    ) -> String {
        let out = Shared::default();
        let mut human = Human::new(display, styles, verbose, Box::new(out.clone()));
        let mut totals = RunStats::default();
        for (seq, (ms, kind)) in events.iter().enumerate() {
            let turn = Turn {
                index: 0,
                kind: TurnKind::Start,
            };
            feed(
                &mut human,
                &mut totals,
                seq as u64,
                at(*ms),
                turn,
                kind.clone(),
            );
        }
        human.close().unwrap();
        String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn plain_lines_show_every_kind_of_event() {
        insta::assert_snapshot!(render(
            Display::Lines,
            Styles::plain(),
            false,
            &every_event()
        ));
    }

    #[test]
    fn verbose_lines_add_the_details() {
        insta::assert_snapshot!(render(
            Display::Lines,
            Styles::plain(),
            true,
            &every_event()
        ));
    }

    #[test]
    fn quiet_shows_only_what_needs_attention() {
        insta::assert_snapshot!(render(
            Display::Quiet,
            Styles::plain(),
            false,
            &every_event()
        ));
    }

    #[test]
    fn colours_mark_success_failure_and_warnings() {
        let out = render(Display::Lines, Styles::colored(), false, &every_event());
        insta::assert_snapshot!(out.replace('\u{1b}', "\\e"));
    }

    #[test]
    fn plain_output_has_no_control_codes() {
        let out = render(Display::Lines, Styles::plain(), true, &every_event());
        assert!(!out.contains('\u{1b}'), "{out}");
    }

    #[test]
    fn a_completed_run_ends_with_a_one_line_summary() {
        let mut events = every_event();
        events.truncate(7);
        events.push((
            5100,
            EventKind::StepFinished(StepUsage {
                id: None,
                reason: "stop".into(),
                tokens: Tokens {
                    input: 1000,
                    output: 18,
                    reasoning: 0,
                    cache_read: 200,
                    cache_write: 0,
                },
                cost_usd: Some(0.00333),
                cost_source: Some(CostSource::Reported),
            }),
        ));
        events.push((
            5200,
            EventKind::RunFinished {
                outcome: Outcome::Completed,
                message: "the agent finished".into(),
                duration_ms: 5200,
                exit: ExitInfo {
                    code: Some(0),
                    signal: None,
                },
            },
        ));
        let out = render(Display::Lines, Styles::plain(), false, &events);
        let summary = out.lines().rev().nth(1).unwrap();
        assert_eq!(
            summary,
            "[00:05.2] ✓ completed in 5.2s · 1 step · 0 tool calls · 1,218 tokens · $0.0033"
        );
    }

    #[test]
    fn streaming_text_shows_on_the_status_line_until_the_whole_text_arrives() {
        let mut human = Human::new(
            Display::Lines,
            Styles::plain(),
            false,
            Box::new(Shared::default()),
        );
        let mut totals = RunStats::default();
        let mut feed = |human: &mut Human, seq: u64, kind: EventKind| {
            feed(human, &mut totals, seq, at(seq), Turn::FIRST, kind);
        };
        for (seq, piece) in [
            "Hello! This is a scri",
            "pted answer.\nSecond li",
            "ne so far",
        ]
        .into_iter()
        .enumerate()
        {
            feed(
                &mut human,
                seq as u64,
                EventKind::TextDelta {
                    text: piece.to_owned(),
                },
            );
        }
        let line = human.status_line(at(10), &RunStats::default());
        assert!(line.ends_with("│ Second line so far"), "{line}");
        feed(
            &mut human,
            4,
            EventKind::Text {
                text: "Hello! This is a scripted answer.\nSecond line so far.".to_owned(),
            },
        );
        assert!(
            !human
                .status_line(at(10), &RunStats::default())
                .contains('│')
        );
    }
}
