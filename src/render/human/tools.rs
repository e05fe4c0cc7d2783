//! Tool calls, subagents and permission denials: one line per finished call (a subagent's
//! calls nested under it), one line per denial, and the running call on the status line.

use super::Lines;
use crate::event::{
    EventKind, PermissionAnswerer, ToolEnd, ToolStart, ToolStatus, permission_option_words,
};
use crate::format::{duration_ms, first_line_and_more};

/// The last denial shown, so that the other event telling the same denial is not shown again.
/// Agents tell a denial twice, as a denied call and as a `permission.denied`, in either order.
#[derive(Debug, Default)]
pub(super) enum Last {
    #[default]
    Nothing,
    /// A call of this tool was shown as denied.
    Call(String),
    /// A `permission.denied` of this tool was shown.
    Notice(String),
}

/// How many refusals told by their answer are remembered until their call ends.
const ANSWERED: usize = 16;

/// What was shown of denials, so that each is one line.
#[derive(Debug, Default)]
pub(super) struct Shown {
    last: Last,
    /// The calls whose refusal a person's answer (or their silence) told: by id, until the call
    /// ends. Its `permission.denied` and its denied end add nothing to that line.
    answered: Vec<String>,
    /// A person answers the questions at the terminal, under a row that names each option with
    /// its key: the question's own line does not list them again.
    pub(super) person_answers: bool,
}

impl Shown {
    /// Whether the refusal of `call_id` was told by its answer; `done`: the call is over.
    fn told_by_answer(&mut self, call_id: Option<&str>, done: bool) -> bool {
        let Some(i) = call_id.and_then(|id| self.answered.iter().position(|a| a == id)) else {
            return false;
        };
        if done {
            self.answered.remove(i);
        }
        true
    }
}

/// [`show`], a refusal held back by `refusals` (a flood of them is told in one line).
pub(super) fn show_held(
    l: &mut Lines<'_>,
    denial: &mut Shown,
    refusals: &mut super::refusals::Refusals,
    kind: &EventKind,
) {
    if show(l, denial, kind) {
        refusals.hold(kind, &mut l.out);
    }
}

/// The lines of a tool, subagent or permission event; false when it is the echo of a refusal
/// its answer told already (no line, and no more of a flood of refusals).
pub(super) fn show(l: &mut Lines<'_>, shown: &mut Shown, kind: &EventKind) -> bool {
    match kind {
        EventKind::ToolCompleted(t) if t.status == ToolStatus::Denied => {
            if shown.told_by_answer(Some(&t.call_id), true) {
                return false;
            }
            match std::mem::take(&mut shown.last) {
                // Its denial was just told.
                Last::Notice(tool) if tool == t.name => {}
                _ => {
                    shown.last = Last::Call(t.name.clone());
                    completed(l, t);
                }
            }
        }
        EventKind::ToolCompleted(t) => completed(l, t),
        EventKind::SubagentStarted {
            description,
            session_id,
            ..
        } => subagent_started(l, description, session_id.as_deref()),
        EventKind::SubagentFinished {
            status, message, ..
        } => subagent_finished(l, *status, message.as_deref()),
        EventKind::PermissionRequested {
            tool,
            input,
            options,
            ..
        } => asked(l, tool, input, (!shown.person_answers).then_some(options)),
        EventKind::PermissionAnswered {
            call_id,
            tool,
            input,
            allowed,
            option,
            by,
        } => {
            if !allowed && *by != PermissionAnswerer::Policy {
                if shown.answered.len() >= ANSWERED {
                    shown.answered.remove(0);
                }
                shown.answered.push(call_id.clone());
            }
            answered(l, tool, input, *allowed, option.as_deref(), *by);
        }
        EventKind::PermissionDenied {
            tool,
            detail,
            call_id,
        } => {
            if shown.told_by_answer(call_id.as_deref(), false) {
                return false;
            }
            match std::mem::take(&mut shown.last) {
                // The denied call was just shown as such.
                Last::Call(called) if called == *tool => {}
                _ => {
                    shown.last = Last::Notice(tool.clone());
                    permission_denied(l, tool, detail);
                }
            }
        }
        _ => {}
    }
    true
}

/// `✓ bash ls: allowed once by you`, or a refusal a person's answer (or silence) made:
/// `⊘ bash rm x: rejected by you`. A refusal by `--permissions` is told by its
/// `permission.denied`.
fn answered(
    l: &mut Lines<'_>,
    tool: &str,
    input: &str,
    allowed: bool,
    option: Option<&str>,
    by: PermissionAnswerer,
) {
    let s = l.s;
    let what = match (allowed, option) {
        (true, Some("allow_always")) => "always allowed",
        (true, Some("allow_once")) => "allowed once",
        (true, _) => "allowed",
        (false, Some("reject_always")) => "always rejected",
        (false, Some(_)) => "rejected",
        (false, None) => "cancelled",
    };
    let who = match by {
        PermissionAnswerer::Policy => " by --permissions",
        PermissionAnswerer::Person => " by you",
        PermissionAnswerer::Timeout => ": nobody answered in time",
    };
    let tool = s.bold.apply_to(tool);
    if allowed {
        l.info(format!(
            "{} {tool} {input}: {what}{who}",
            s.ok.apply_to("✓")
        ));
    } else if by != PermissionAnswerer::Policy {
        l.alert(format!(
            "{} {tool} {input}: {}",
            s.warn.apply_to("⊘"),
            s.warn.apply_to(format!("{what}{who}"))
        ));
    }
}

/// `read src/main.rs`: the call in progress, for the status line.
pub(super) fn running(t: &ToolStart) -> String {
    format!("{} {}", t.name, t.input)
}

/// `? bash ls: asks permission`, with the options offered when no person is asked (a person
/// has them on the row of keys under the question).
fn asked(l: &mut Lines<'_>, tool: &str, input: &str, options: Option<&Vec<String>>) {
    let s = l.s;
    let offered = options.map_or_else(String::new, |options| {
        let words: Vec<&str> = options
            .iter()
            .map(|o| permission_option_words(o).unwrap_or(o.as_str()))
            .collect();
        format!(" ({})", words.join(" · "))
    });
    l.alert(format!(
        "{} {} {input}: {}{offered}",
        s.warn.apply_to("?"),
        s.bold.apply_to(tool),
        s.warn.apply_to("asks permission"),
    ));
}

/// `✓ read src/main.rs 42ms`, `✗ … : the error`, or `⊘ … : permission denied`.
fn completed(l: &mut Lines<'_>, t: &ToolEnd) {
    let s = l.s;
    // A subagent's calls sit under it.
    let nest = if t.parent.is_some() { "  " } else { "" };
    let input = if t.input.is_empty() {
        String::new()
    } else {
        format!(" {}", t.input)
    };
    let took = t
        .duration_ms
        .map(|ms| format!(" {}", s.dim.apply_to(duration_ms(ms))))
        .unwrap_or_default();
    let first = t
        .error
        .as_deref()
        .map(first_line_and_more)
        .unwrap_or_default();
    let name = s.bold.apply_to(&t.name);
    // The sandbox's refusal, told as such once: its `sandbox.denied` that follows says no more.
    if let Some(refusal) = refused_by_sandbox(l, t) {
        let text = format!("refused by the sandbox: {refusal}");
        l.alert(format!(
            "{nest}{} {name}{input}{took}: {}",
            s.warn.apply_to("⛔"),
            s.warn.apply_to(text)
        ));
        return;
    }
    match t.status {
        ToolStatus::Ok => l.info(format!("{nest}{} {name}{input}{took}", s.ok.apply_to("✓"))),
        ToolStatus::Error => l.alert(format!(
            "{nest}{} {name}{input}{took}: {}",
            s.error.apply_to("✗"),
            s.error.apply_to(first)
        )),
        ToolStatus::Denied => l.alert(format!(
            "{nest}{} {name}{input}: {}",
            s.warn.apply_to("⊘"),
            s.warn.apply_to("permission denied")
        )),
    }
}

/// The line of a sandboxed run's tool error that tells of a refusal, as the run's
/// `sandbox.denied` takes it.
fn refused_by_sandbox(l: &Lines<'_>, t: &ToolEnd) -> Option<String> {
    l.totals.info.as_ref()?.sandbox.as_ref()?;
    let line = t
        .error
        .as_deref()?
        .lines()
        .find(|l| crate::sandbox::is_denial(l))?;
    Some(line.trim().to_owned())
}

/// `↳ subagent: <description> <session>`.
fn subagent_started(l: &mut Lines<'_>, description: &str, session_id: Option<&str>) {
    let s = l.s;
    let id = session_id
        .map(|id| format!(" {}", s.dim.apply_to(id)))
        .unwrap_or_default();
    l.info(format!(
        "{} subagent: {description}{id}",
        s.accent.apply_to("↳")
    ));
}

/// `↲ subagent done: <message>`, or that it failed.
fn subagent_finished(l: &mut Lines<'_>, status: ToolStatus, message: Option<&str>) {
    let s = l.s;
    let what = message.map(|m| format!(": {m}")).unwrap_or_default();
    match status {
        ToolStatus::Ok => l.info(format!("{} subagent done{what}", s.accent.apply_to("↲"))),
        _ => l.alert(format!(
            "{} {}{what}",
            s.error.apply_to("↲"),
            s.error.apply_to("subagent failed")
        )),
    }
}

/// `⊘ <tool>: permission denied (<detail>)`, for a denial not already shown with its call: the
/// same words as a denied call's.
fn permission_denied(l: &mut Lines<'_>, tool: &str, detail: &str) {
    let s = l.s;
    let detail = if detail.is_empty() {
        String::new()
    } else {
        format!(" ({detail})")
    };
    l.alert(format!(
        "{} {}: {}",
        s.warn.apply_to("⊘"),
        s.bold.apply_to(tool),
        s.warn.apply_to(format!("permission denied{detail}"))
    ));
}
