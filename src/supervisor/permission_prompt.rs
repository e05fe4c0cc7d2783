//! The question at the terminal when an ACP agent asks permission: the request (tool, input and
//! the options offered) is shown by its `permission.requested` event; this reads the key that
//! answers it, with the live view paused, under a row that names each key in words and counts
//! down to the refusal that comes by itself. Keys are read raw, so Ctrl-C is a key here: it
//! interrupts the run, as it does anywhere else. The key is awaited a tenth of a second at a
//! time, so that a question that timed out leaves no reader behind to take the next question's
//! key. Once answered, the row is taken off: the answer's own event tells it.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::acp::Ask;
use super::signals::{Received, Signals};
use crate::consumer::Dispatcher;
use crate::event::permission_option_words;
use crate::term::out::{Control, Stream, columns, stderr};

/// How the question ended.
#[derive(Debug)]
pub(crate) enum Asked {
    /// The option chosen, by its index; `None` to refuse when no option refuses.
    Chose(Option<usize>),
    /// Nobody answered in time.
    TimedOut,
    /// runbook was told to stop meanwhile (Ctrl-C at the question is one such).
    Signal(Received),
}

/// What the keys came to.
#[derive(Debug, PartialEq, Eq)]
enum Key {
    /// An option, by its index; `None`: a refusal when no option refuses.
    Chose(Option<usize>),
    /// Ctrl-C.
    Interrupt,
    /// The reader was told to give up.
    Stopped,
}

/// The keys, each with the ACP kind of the option it chooses, in the order shown. None differs
/// from another only by Shift: a key is read the same in either case.
const KEYS: [(u8, &str); 4] = [
    (b'y', "allow_once"),
    (b'a', "allow_always"),
    (b'n', "reject_once"),
    (b'x', "reject_always"),
];

/// Asks at the terminal, for at most `timeout`.
pub(crate) async fn ask(
    ask: &Ask,
    timeout: Duration,
    signals: &mut Signals,
    dispatch: &mut Dispatcher,
) -> Asked {
    dispatch.flush();
    dispatch.pause(true);
    let saved = crate::plan::TermState::save();
    let kinds: Vec<String> = ask.options.iter().map(|(_, _, k)| k.clone()).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = Arc::clone(&stop);
    let until = Instant::now() + timeout;
    let mut question = tokio::task::spawn_blocking(move || choose(&kinds, until, &stopped));
    let (asked, answered) = tokio::select! {
        key = &mut question => match key.ok().and_then(Result::ok) {
            Some(Key::Interrupt) => (Asked::Signal(Received::Interrupt), true),
            Some(Key::Chose(choice)) => (Asked::Chose(choice), true),
            // The terminal went away: nobody is there to answer.
            Some(Key::Stopped) | None => (Asked::Chose(None), true),
        },
        () = tokio::time::sleep(timeout) => (Asked::TimedOut, false),
        got = signals.recv() => (Asked::Signal(got), false),
    };
    // The reader gives up within a tenth of a second; the terminal is put back after it.
    stop.store(true, Ordering::Relaxed);
    if !answered {
        let _ = question.await;
    }
    saved.restore();
    let mut term = stderr();
    term.control(Control::Erase);
    let _ = term.flush();
    dispatch.pause(false);
    asked
}

/// The index of the option of `kind`, the first offered.
fn find(kinds: &[String], kind: &str) -> Option<usize> {
    kinds.iter().position(|k| k == kind)
}

/// `y allow once · a always allow · n reject`: a key for each option offered, and `n` always
/// (a refusal needs no option to be offered).
fn key_row(kinds: &[String]) -> String {
    KEYS.iter()
        .filter(|(_, kind)| *kind == "reject_once" || find(kinds, kind).is_some())
        .map(|(key, kind)| {
            let words = permission_option_words(kind).unwrap_or(*kind);
            format!("{} {words}", char::from(*key))
        })
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `4:59` or `9s`: the time left, in whole seconds rounded up.
fn countdown(left: Duration) -> String {
    let secs = left.as_secs() + u64::from(left.subsec_nanos() > 0);
    if secs >= 60 {
        format!("{}:{:02}", secs / 60, secs % 60)
    } else {
        format!("{secs}s")
    }
}

/// The row of keys and the time left, as long as fits in `width` columns: a row that wrapped
/// could not be rewritten in place.
fn fitted(row: &str, left: &str, width: Option<usize>) -> String {
    let keys: String = row
        .split(" · ")
        .filter_map(|k| k.chars().next())
        .map(String::from)
        .collect::<Vec<_>>()
        .join("/");
    let forms = [
        format!("  {row}   (rejected by itself in {left}) "),
        format!("  {row} ({left}) "),
        format!("{keys}? {left} "),
    ];
    let room = width.map_or(usize::MAX, |w| w.saturating_sub(1));
    forms
        .iter()
        .find(|f| f.chars().count() <= room)
        .unwrap_or(&forms[2])
        .clone()
}

/// The option a key chooses, if it is one.
fn chosen(kinds: &[String], key: u8) -> Option<Key> {
    match key.to_ascii_lowercase() {
        0x03 => Some(Key::Interrupt),
        // n, r and Esc refuse once, or always when that is the only refusal offered.
        b'n' | b'r' | 0x1b => Some(Key::Chose(
            find(kinds, "reject_once").or_else(|| find(kinds, "reject_always")),
        )),
        key => {
            let (_, kind) = KEYS.iter().find(|(k, _)| *k == key)?;
            find(kinds, kind).map(|i| Key::Chose(Some(i)))
        }
    }
}

/// Reads keys until one names an offered option (or is Ctrl-C), or `stop` is set (blocking);
/// the row of keys counts down to `until` meanwhile.
fn choose(kinds: &[String], until: Instant, stop: &AtomicBool) -> io::Result<Key> {
    let row = key_row(kinds);
    let _raw = RawMode::enter();
    let mut shown = String::new();
    while !stop.load(Ordering::Relaxed) {
        let left = countdown(until.saturating_duration_since(Instant::now()));
        if left != shown {
            let mut term = stderr();
            term.control(Control::Erase);
            term.text(&fitted(&row, &left, columns(Stream::Stderr)));
            term.flush()?;
            shown = left;
        }
        let Some(key) = key_within(Duration::from_millis(100))? else {
            continue;
        };
        if let Some(key) = chosen(kinds, key) {
            return Ok(key);
        }
    }
    Ok(Key::Stopped)
}

/// One byte from stdin if one arrives within `wait`.
fn key_within(wait: Duration) -> io::Result<Option<u8>> {
    let mut fds = [libc::pollfd {
        fd: libc::STDIN_FILENO,
        events: libc::POLLIN,
        revents: 0,
    }];
    let ms = libc::c_int::try_from(wait.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: one valid pollfd, for the length given.
    let ready = unsafe { libc::poll(fds.as_mut_ptr(), 1, ms) };
    if ready <= 0 {
        return Ok(None);
    }
    let mut byte = 0u8;
    // SAFETY: reads at most one byte into a live `u8`.
    let n = unsafe { libc::read(libc::STDIN_FILENO, (&raw mut byte).cast(), 1) };
    match n {
        1 => Ok(Some(byte)),
        0 => Err(io::Error::from(io::ErrorKind::UnexpectedEof)),
        _ => Ok(None),
    }
}

/// The terminal in raw mode (a key at a time, no echo, Ctrl-C a byte) until dropped.
struct RawMode(crate::plan::TermState);

impl RawMode {
    fn enter() -> Self {
        let saved = crate::plan::TermState::save();
        let mut t = std::mem::MaybeUninit::<libc::termios>::uninit();
        // SAFETY: tcgetattr fills `t` when it returns 0; `t` is only used then.
        if unsafe { libc::tcgetattr(libc::STDIN_FILENO, t.as_mut_ptr()) } == 0 {
            // SAFETY: initialised by the successful tcgetattr above.
            let mut t = unsafe { t.assume_init() };
            // SAFETY: `t` is a valid termios; the call only changes its flags.
            unsafe { libc::cfmakeraw(&raw mut t) };
            // SAFETY: a termios made from the same descriptor's own.
            unsafe { libc::tcsetattr(libc::STDIN_FILENO, libc::TCSANOW, &raw const t) };
        }
        Self(saved)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        self.0.restore();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(k: &[&str]) -> Vec<String> {
        k.iter().map(|&k| k.to_owned()).collect()
    }

    #[test]
    fn each_option_offered_has_its_own_key_in_words_and_none_differs_only_by_shift() {
        let offered = kinds(&["allow_once", "allow_always", "reject_once"]);
        assert_eq!(
            key_row(&offered),
            "y allow once · a always allow · n reject"
        );
        assert_eq!(chosen(&offered, b'y'), Some(Key::Chose(Some(0))));
        assert_eq!(chosen(&offered, b'A'), Some(Key::Chose(Some(1))));
        assert_eq!(chosen(&offered, b'a'), Some(Key::Chose(Some(1))));
        assert_eq!(chosen(&offered, b'N'), Some(Key::Chose(Some(2))));
        assert_eq!(chosen(&offered, 0x1b), Some(Key::Chose(Some(2))));
        assert_eq!(chosen(&offered, 0x03), Some(Key::Interrupt));
        // Not offered, or no key: nothing.
        assert_eq!(chosen(&offered, b'x'), None);
        assert_eq!(chosen(&offered, b'q'), None);
        // Only an allowance offered: `n` still refuses (with no option to name).
        let once = kinds(&["allow_once"]);
        assert_eq!(key_row(&once), "y allow once · n reject");
        assert_eq!(chosen(&once, b'n'), Some(Key::Chose(None)));
        let always = kinds(&["reject_always", "allow_once"]);
        assert_eq!(
            key_row(&always),
            "y allow once · n reject · x always reject"
        );
        assert_eq!(chosen(&always, b'n'), Some(Key::Chose(Some(0))));
    }

    #[test]
    fn the_time_left_is_in_whole_seconds_rounded_up() {
        assert_eq!(countdown(Duration::from_secs(300)), "5:00");
        assert_eq!(countdown(Duration::from_millis(299_001)), "5:00");
        assert_eq!(countdown(Duration::from_millis(298_999)), "4:59");
        assert_eq!(countdown(Duration::from_millis(9_500)), "10s");
        assert_eq!(countdown(Duration::ZERO), "0s");
    }

    #[test]
    fn the_row_fits_the_terminal_so_it_can_be_rewritten_in_place() {
        let row = "y allow once · a always allow · n reject";
        let full = fitted(row, "4:59", Some(120));
        assert!(full.contains("rejected by itself in 4:59"), "{full}");
        for width in [20, 50, 60, 80] {
            let shown = fitted(row, "4:59", Some(width));
            assert!(shown.chars().count() < width, "{width}: {shown}");
            assert!(shown.contains("4:59"), "{shown}");
        }
        assert_eq!(fitted(row, "9s", Some(20)), "y/a/n? 9s ");
    }
}
