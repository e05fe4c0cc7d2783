//! The event as the view shows it: when any of its text came with a control character in it,
//! every string in it is escaped (`foreign::term`) before anything is laid out, so that widths,
//! wrapping and the status line's cut are measured on the text as it will be shown.

use std::borrow::Cow;

use crate::consumer::Delivery;
use crate::event::Event;
use crate::foreign::term::escaped_copy;

/// `d`'s event, its strings escaped if any needs it; borrowed (and nothing decoded) when none
/// does, which its JSON line tells at a glance.
pub(super) fn escaped<'a>(d: &Delivery<'a>) -> Cow<'a, Event> {
    let needs = match &d.json {
        Some(line) => line_may_hold_controls(line.as_bytes()),
        None => true,
    };
    if !needs {
        return Cow::Borrowed(d.event);
    }
    // An event whose escaped copy cannot be read back is shown as it was: the terminal writer
    // escapes what is left all the same.
    escaped_copy(d.event).map_or(Cow::Borrowed(d.event), Cow::Owned)
}

/// Whether a JSON line may spell a control character: an escape for one (`\u00xx`, `\r`, `\b`,
/// `\f`: runbook's encoder writes DEL and the C1 controls as `\u` escapes too), or a raw one (a
/// bidirectional control). May say yes for text without one, never no for text with one.
fn line_may_hold_controls(line: &[u8]) -> bool {
    let Ok(text) = std::str::from_utf8(line) else {
        return true;
    };
    let escaped = memchr::memchr_iter(b'\\', line)
        .any(|at| matches!(line.get(at + 1), Some(b'u' | b'r' | b'b' | b'f')));
    escaped || crate::foreign::term::has_control(text)
}
