//! The question at the terminal when an ACP agent asks permission: the request (tool, input and
//! the options offered) is shown by its `permission.requested` event; this reads the key that
//! answers it, with the live view paused. Keys are read raw, so Ctrl-C is a key here (it means
//! reject), not a signal. The key is awaited a tenth of a second at a time, so that a question
//! that timed out leaves no reader behind to take the next question's key.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use super::acp::Ask;
use super::signals::{Received, Signals};
use crate::consumer::Dispatcher;
use crate::term::out::say;

/// How the question ended.
#[derive(Debug)]
pub(crate) enum Asked {
    /// The option chosen, by its index; `None` to refuse when no option refuses.
    Chose(Option<usize>),
    /// Nobody answered in time.
    TimedOut,
    /// runbook was told to stop meanwhile.
    Signal(Received),
}

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
    let mut question = tokio::task::spawn_blocking(move || choose(&kinds, &stopped));
    let (asked, answered) = tokio::select! {
        chosen = &mut question => (Asked::Chose(chosen.ok().and_then(Result::ok).flatten()), true),
        () = tokio::time::sleep(timeout) => (Asked::TimedOut, false),
        got = signals.recv() => (Asked::Signal(got), false),
    };
    // The reader gives up within a tenth of a second; the terminal is put back after it.
    stop.store(true, Ordering::Relaxed);
    if !answered {
        let _ = question.await;
    }
    saved.restore();
    if matches!(asked, Asked::TimedOut) {
        let _ = say("no answer: rejected", true);
    }
    dispatch.pause(false);
    asked
}

/// The option of `kind` (the first of `kinds` offered).
fn find(kinds: &[String], wanted: &[&str]) -> Option<usize> {
    wanted
        .iter()
        .find_map(|w| kinds.iter().position(|k| k == w))
}

/// Reads keys until one names an offered option, or `stop` is set (blocking).
fn choose(kinds: &[String], stop: &AtomicBool) -> io::Result<Option<usize>> {
    let reject = find(kinds, &["reject_once", "reject_always"]);
    say("[a]llow once  allow [A]lways  [r]eject: ", false)?;
    let _raw = RawMode::enter();
    while !stop.load(Ordering::Relaxed) {
        let Some(key) = key_within(Duration::from_millis(100))? else {
            continue;
        };
        let chosen = match key {
            b'a' | b'y' => find(kinds, &["allow_once"]),
            b'A' => find(kinds, &["allow_always"]),
            // r, n, Esc, Ctrl-C
            b'r' | b'R' | b'n' | b'N' | 0x1b | 0x03 => {
                say("reject", true)?;
                return Ok(reject);
            }
            _ => None,
        };
        if let Some(i) = chosen {
            // The agent named the option: the terminal writer shows it as text.
            say(&kinds[i], true)?;
            return Ok(Some(i));
        }
    }
    Ok(None)
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
