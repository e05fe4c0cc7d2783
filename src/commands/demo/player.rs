//! The stand-in agent of `runbook demo`: runbook's own binary, started by the demo's run in
//! place of `opencode`, writes a real OpenCode session bundled in the binary (recorded from
//! OpenCode 1.18.33 against a scripted model provider; `fixtures/opencode/b_read_edit.*`) at the
//! moments it was recorded, sped up as the demo says. It reads nothing; the one change the
//! session made (its edit of `README.md`) it makes too, in the demo's own work dir, once the
//! edit's line is written, so that the run ends with the change it showed.

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// Set by `runbook demo` in its own environment, which the stand-in inherits: the speed to play
/// at, `inf` for no waiting. Its presence is what makes runbook the stand-in.
pub(crate) const SPEED_VAR: &str = "RUNBOOK_DEMO_STAND_IN";
/// The directory the session was recorded in; the stand-in puts its own in its place, so that
/// paths read as they did (`README.md`, not a path on the recording machine).
const RECORDED_CWD: &str = "/scratch/opencode-harness/b_read_edit/work";
/// The version of OpenCode the session was recorded from.
pub(crate) const RECORDED_VERSION: &str = "1.18.33";
/// The model the session was recorded with (the scripted provider's).
pub(crate) const RECORDED_MODEL: &str = "fake/fake-model";
/// The prompt the session was recorded with.
pub(crate) const RECORDED_PROMPT: &str = "Read README.md and add a line at the end";
/// `README.md` as it was when the session began (its `read` shows it).
pub(crate) const README: &str =
    "# Demo project\n\nThis is a demo repository used by the fake LLM harness.\n";

/// OpenCode's stdout, one JSON line per event.
const STDOUT: &str = include_str!("../../../fixtures/opencode/b_read_edit.stdout.ndjson");
/// When each line arrived: `{"t": seconds since the start, "stream": "stdout", …}` per line.
const TIMING: &str = include_str!("../../../fixtures/opencode/b_read_edit.timing.ndjson");

/// Plays the session when this process is the demo's stand-in agent; `None` otherwise.
pub(crate) fn invocation() -> Option<ExitCode> {
    let speed = std::env::var(SPEED_VAR).ok()?;
    let speed = speed
        .parse::<f64>()
        .ok()
        .filter(|s| *s > 0.0)
        .unwrap_or(1.0);
    let version = std::env::args_os().nth(1).is_some_and(|a| a == "--version");
    let played = if version {
        crate::term::out::print_document(&format!("{RECORDED_VERSION}\n"))
    } else {
        play(speed)
    };
    // A closed pipe means runbook stopped reading: nothing more to do either way.
    Some(played.map_or(ExitCode::FAILURE, |()| ExitCode::SUCCESS))
}

/// Writes each recorded line at its recorded moment divided by `speed`.
fn play(speed: f64) -> std::io::Result<()> {
    let start = Instant::now();
    let moments = arrivals();
    let cwd = std::env::current_dir()?;
    // As a JSON string's content: the recorded path sits inside JSON strings.
    let cwd = serde_json::to_string(&cwd.to_string_lossy()).map_err(std::io::Error::other)?;
    let cwd = &cwd[1..cwd.len() - 1];
    for (i, line) in STDOUT.lines().filter(|l| !l.is_empty()).enumerate() {
        if let Some(at) = moments.get(i).and_then(|t| scaled(*t, speed)) {
            std::thread::sleep((start + at).saturating_duration_since(Instant::now()));
        }
        crate::term::out::print_document(&format!("{}\n", line.replace(RECORDED_CWD, cwd)))?;
        if let Some(edited) = edited_readme(line) {
            // The recording's own bytes, bundled in runbook: nothing foreign in them.
            let bytes = crate::redact::Masked::made_of_masked(edited.as_bytes());
            crate::redact::write::atomically_shared(Path::new("README.md"), "demo.tmp", &bytes)?;
        }
    }
    Ok(())
}

/// `README.md` as the session's line `line` leaves it, when that line is its completed edit.
fn edited_readme(line: &str) -> Option<String> {
    let value: serde_json::Value = serde_json::from_str(line).ok()?;
    let part = &value["part"];
    if part["tool"] != "edit" || part["state"]["status"] != "completed" {
        return None;
    }
    let input = &part["state"]["input"];
    let path = input["filePath"].as_str()?;
    (path == format!("{RECORDED_CWD}/README.md")).then_some(())?;
    let (old, new) = (input["oldString"].as_str()?, input["newString"].as_str()?);
    README.contains(old).then(|| README.replacen(old, new, 1))
}

/// The recorded arrival of each stdout line, in seconds since the agent started.
pub(crate) fn arrivals() -> Vec<f64> {
    TIMING
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["stream"] == "stdout")
        .filter_map(|v| v["t"].as_f64())
        .collect()
}

/// `seconds` at `speed`; `None` when there is no waiting (an infinite speed).
fn scaled(seconds: f64, speed: f64) -> Option<Duration> {
    Duration::try_from_secs_f64(seconds / speed)
        .ok()
        .filter(|d| !d.is_zero())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_recorded_line_has_its_moment_and_they_never_go_back() {
        let lines = STDOUT.lines().filter(|l| !l.is_empty()).count();
        let moments = arrivals();
        assert_eq!(moments.len(), lines);
        assert!(moments.windows(2).all(|w| w[0] <= w[1]), "{moments:?}");
        assert!(STDOUT.len() + TIMING.len() < 16 * 1024, "a few KB bundled");
        assert!(
            STDOUT.contains(RECORDED_CWD),
            "the recorded directory is in the session"
        );
    }

    #[test]
    fn the_sessions_one_edit_is_made_to_the_readme_it_read() {
        let edits: Vec<String> = STDOUT.lines().filter_map(edited_readme).collect();
        assert_eq!(edits.len(), 1, "one edit of README.md");
        assert_eq!(
            edits[0],
            format!("{README}This line was added by opencode.\n")
        );
        // As the session's `read` showed it.
        let shown: Vec<String> = README
            .lines()
            .enumerate()
            .map(|(i, l)| format!("{}: {l}", i + 1))
            .collect();
        assert!(STDOUT.contains(&shown.join("\\n")), "{shown:?}");
    }

    #[test]
    fn an_infinite_speed_never_waits() {
        assert_eq!(scaled(4.9, f64::INFINITY), None);
        assert_eq!(scaled(4.0, 2.0), Some(Duration::from_secs(2)));
    }
}
