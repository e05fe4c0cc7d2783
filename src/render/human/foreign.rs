//! The event as the view shows it: when any of its text came with a control character in it,
//! every string in it is escaped (`foreign::term`) before anything is laid out, so that widths,
//! wrapping and the status line's cut are measured on the text as it will be shown.

use std::borrow::Cow;

use crate::consumer::Delivery;
use crate::event::Event;
use crate::foreign::Foreign;

/// `d`'s event, its strings escaped if any needs it; borrowed (and nothing decoded) when none
/// does, which its JSON line tells at a glance.
pub(super) fn escaped<'a>(d: &Delivery<'a>) -> Cow<'a, Event> {
    let needs = match d.json {
        Some(line) => line_may_hold_controls(line),
        None => true,
    };
    if !needs {
        return Cow::Borrowed(d.event);
    }
    let Ok(mut value) = serde_json::to_value(d.event) else {
        return Cow::Borrowed(d.event);
    };
    if !escape_strings(&mut value) {
        return Cow::Borrowed(d.event);
    }
    // An event escaped into something it cannot be read back as is shown as it was: the
    // terminal writer escapes what is left all the same.
    serde_json::from_value(value).map_or(Cow::Borrowed(d.event), Cow::Owned)
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

/// Escapes every string in `value` (keys included); whether anything changed.
fn escape_strings(value: &mut serde_json::Value) -> bool {
    use serde_json::Value;
    match value {
        Value::String(s) => match Foreign::new(s).term() {
            Cow::Borrowed(_) => false,
            Cow::Owned(escaped) => {
                *s = escaped;
                true
            }
        },
        Value::Array(items) => items.iter_mut().fold(false, |c, v| escape_strings(v) | c),
        Value::Object(map) => {
            let mut changed = false;
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                let escaped = Foreign::new(&key).term().into_owned();
                let mut v = map.remove(&key).unwrap_or_default();
                changed |= escape_strings(&mut v) | (escaped != key);
                map.insert(escaped, v);
            }
            changed
        }
        _ => false,
    }
}
