//! The agent's account of what it did, for the receipt: its final message, trimmed to a few
//! sentences, or with `--summary` its answer to one more turn that asks for one.

use super::session::Session;
use crate::agent::Permissions;
use crate::event::{EventKind, Outcome};
use crate::lifecycle::Ending;

/// The most sentences of the final message a summary keeps.
const SENTENCES: usize = 4;
/// The most characters a summary keeps.
const MAX_CHARS: usize = 600;

/// What `--summary` asks.
const PROMPT: &str = "Summarize what you did in this session in 2 to 4 plain sentences for a \
     pull request description: what changed, why, and anything left undone. No headings, no \
     lists, no code.";

/// Keeps the run's summary for the end of the run, asking the session for one first with `ask` (when the work was
/// done, or done but not checked clean). How the run ends: as `ending`, unless it was stopped
/// while the agent was asked.
pub(super) async fn summarized(
    session: &mut Session<'_>,
    ask: bool,
    permissions: Permissions,
    ending: Ending,
) -> Ending {
    let worth_asking = matches!(ending.outcome, Outcome::Completed | Outcome::ChecksFailed);
    if ask && worth_asking {
        let asked = session.turn(PROMPT, permissions).await;
        if asked.is_completed() {
            let text = trim(&session.final_text());
            if !text.is_empty() {
                session.summary = Some(EventKind::Summary { text, asked: true });
                return ending;
            }
        } else if matches!(asked.outcome, Outcome::Interrupted | Outcome::TimedOut) {
            return asked;
        }
        // The work stands: the summary falls back to the last answer before it.
    }
    let text = trim(&session.final_text());
    if !text.is_empty() {
        session.summary = Some(EventKind::Summary { text, asked: false });
    }
    ending
}

/// The first few sentences of `text`, on one line, at most [`MAX_CHARS`].
pub(crate) fn trim(text: &str) -> String {
    // Headings and code fences are layout, not sentences; list markers go too.
    let words: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.starts_with('#') && !l.starts_with("```"))
        .flat_map(str::split_whitespace)
        .filter(|w| !w.chars().all(|c| matches!(c, '-' | '*' | '>' | '`')))
        .collect();
    let mut out = String::new();
    let mut sentences = 0;
    for word in words {
        if out.len() + word.len() + 1 > MAX_CHARS {
            out.push('…');
            break;
        }
        if !out.is_empty() {
            out.push(' ');
        }
        out.push_str(word);
        if word.ends_with(['.', '!', '?']) {
            sentences += 1;
            if sentences == SENTENCES {
                break;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_summary_is_a_few_sentences_on_one_line() {
        assert_eq!(
            trim("## Done\n\n- Fixed the race.\n- Added a test.\nIt passes. Then more. And more."),
            "Fixed the race. Added a test. It passes. Then more."
        );
        let long = "word ".repeat(500);
        let t = trim(&long);
        assert!(
            t.len() <= MAX_CHARS + '…'.len_utf8() && t.ends_with('…'),
            "{t}"
        );
        assert_eq!(trim("  \n "), "");
    }
}
