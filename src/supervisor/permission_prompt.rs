//! The question at the terminal when an ACP agent asks permission: the request (tool, input and
//! the options offered) is shown by its `permission.requested` event; this reads the key that
//! answers it, with the live view paused. Keys are read raw, so Ctrl-C is a key here (it means
//! reject), not a signal.

use std::io::{self, Write as _};
use std::time::Duration;

use console::{Key, Term};

use super::acp::Ask;
use super::signals::{Received, Signals};
use crate::consumer::Dispatcher;

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
    let question = tokio::task::spawn_blocking(move || choose(&Term::stderr(), &kinds));
    let asked = tokio::select! {
        chosen = question => Asked::Chose(chosen.ok().and_then(Result::ok).flatten()),
        () = tokio::time::sleep(timeout) => Asked::TimedOut,
        got = signals.recv() => Asked::Signal(got),
    };
    saved.restore();
    if matches!(asked, Asked::TimedOut) {
        let _ = writeln!(&Term::stderr(), "no answer: rejected");
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

/// Reads keys until one names an offered option (blocking).
fn choose(term: &Term, kinds: &[String]) -> io::Result<Option<usize>> {
    let reject = find(kinds, &["reject_once", "reject_always"]);
    write!(&*term, "[a]llow once  allow [A]lways  [r]eject: ")?;
    term.flush()?;
    loop {
        let chosen = match term.read_key_raw()? {
            Key::Char('a' | 'y') => find(kinds, &["allow_once"]),
            Key::Char('A') => find(kinds, &["allow_always"]),
            Key::Char('r' | 'R' | 'n' | 'N') | Key::Escape | Key::CtrlC => {
                writeln!(&*term, "reject")?;
                return Ok(reject);
            }
            _ => None,
        };
        if let Some(i) = chosen {
            writeln!(&*term, "{}", kinds[i])?;
            return Ok(Some(i));
        }
    }
}
