//! Tool calls, subagents and permission denials: one line per finished call (a subagent's
//! calls nested under it), one line per denial, and the running call on the status line.

use super::Lines;
use crate::event::{EventKind, ToolEnd, ToolStart, ToolStatus};
use crate::render::format::{duration_ms, first_line_and_more};

/// The last denial shown, so that the other event telling the same denial is not shown again.
/// Agents tell a denial twice, as a denied call and as a `permission.denied`, in either order.
#[derive(Debug, Default)]
pub(super) enum Shown {
    #[default]
    Nothing,
    /// A call of this tool was shown as denied.
    Call(String),
    /// A `permission.denied` of this tool was shown.
    Notice(String),
}

/// The lines of a tool, subagent or permission event.
pub(super) fn show(l: &mut Lines<'_>, shown: &mut Shown, kind: &EventKind) {
    match kind {
        EventKind::ToolCompleted(t) if t.status == ToolStatus::Denied => {
            match std::mem::take(shown) {
                // Its denial was just told.
                Shown::Notice(tool) if tool == t.name => {}
                _ => {
                    *shown = Shown::Call(t.name.clone());
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
        } => {
            let s = l.s;
            l.alert(format!(
                "{} {} {input}: {} ({})",
                s.warn.apply_to("?"),
                s.bold.apply_to(tool),
                s.warn.apply_to("asks permission"),
                options.join(", ")
            ));
        }
        // A refusal is told by its `permission.denied`.
        EventKind::PermissionAnswered {
            tool,
            input,
            allowed: true,
            option,
            by,
            ..
        } => {
            let s = l.s;
            let by = match by {
                crate::event::PermissionAnswerer::Policy => "by --permissions",
                crate::event::PermissionAnswerer::Person => "by you",
                crate::event::PermissionAnswerer::Timeout => "after the timeout",
            };
            let option = option.as_deref().unwrap_or("allow");
            l.info(format!(
                "{} {} {input}: {option} {by}",
                s.ok.apply_to("✓"),
                s.bold.apply_to(tool),
            ));
        }
        EventKind::PermissionDenied { tool, detail, .. } => match std::mem::take(shown) {
            // The denied call was just shown as such.
            Shown::Call(called) if called == *tool => {}
            _ => {
                *shown = Shown::Notice(tool.clone());
                permission_denied(l, tool, detail);
            }
        },
        _ => {}
    }
}

/// `read src/main.rs`: the call in progress, for the status line.
pub(super) fn running(t: &ToolStart) -> String {
    format!("{} {}", t.name, t.input)
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
