//! The rules about tool calls: `repeat`, `same_error` (of any tool but a shell command),
//! `same_failure` (a shell command's) and `ping_pong`. A call
//! counts only with both its fingerprints (what it was called with, what it gave back), so a
//! result that changed always starts a count again, and a refused call is passed over.

use std::collections::VecDeque;

use super::{Counts, Reached};
use crate::event::{StuckRule, ToolEnd, ToolKind, ToolStatus};

/// How many failing commands `same_failure` follows at once (the oldest is forgotten).
const MAX_FAILURES: usize = 64;
/// The longest input kept with a verdict, in characters.
const MAX_INPUT_CHARS: usize = 60;
/// The most calls `ping_pong` keeps: 32 cycles.
const MAX_WINDOW: usize = 64;

/// One call, as the rules compare it: its name and its two fingerprints, one after another in
/// one string (made once a call), with where the second and third begin.
#[derive(Debug, PartialEq, Eq)]
struct Call {
    text: String,
    input_at: usize,
    result_at: usize,
}

impl Call {
    fn new(name: &str, input: &str, result: &str) -> Self {
        let mut text = String::with_capacity(name.len() + input.len() + result.len());
        text.push_str(name);
        text.push_str(input);
        let result_at = text.len();
        text.push_str(result);
        Self {
            text,
            input_at: name.len(),
            result_at,
        }
    }

    fn input(&self) -> &str {
        &self.text[self.input_at..self.result_at]
    }

    fn result(&self) -> &str {
        &self.text[self.result_at..]
    }
}

/// A run of the same thing, from `first_seq`.
#[derive(Debug, Clone, Copy)]
struct Streak {
    count: u32,
    first_seq: u64,
}

impl Streak {
    fn start(seq: u64) -> Self {
        Self {
            count: 1,
            first_seq: seq,
        }
    }
}

/// A shell command's last failure.
struct Failure {
    input: String,
    result: String,
    streak: Streak,
}

#[derive(Default)]
pub(super) struct Calls {
    repeat: Option<Streak>,
    errors: Option<Streak>,
    /// The last calls, newest last (the last call, for `repeat`), for `ping_pong` (with their
    /// sequence numbers).
    window: VecDeque<(Call, u64)>,
    failures: VecDeque<Failure>,
}

impl Calls {
    /// A call ended: the counts it moved, in the order they are judged.
    pub(super) fn completed(&mut self, seq: u64, end: &ToolEnd) -> Counts {
        let mut counts = [None; 4];
        if end.status == ToolStatus::Denied {
            return counts;
        }
        let (Some(input), Some(result)) = (&end.input_hash, &end.result_hash) else {
            // Something was done that cannot be compared: whatever ran in a row before is over.
            *self = Self {
                failures: std::mem::take(&mut self.failures),
                ..Self::default()
            };
            return counts;
        };
        let call = Call::new(&end.name, input, result);
        let reached = |rule, streak: Streak| {
            Some(Reached {
                rule,
                count: streak.count,
                first_seq: streak.first_seq,
            })
        };
        let again = self.window.back().is_some_and(|(last, _)| *last == call);
        counts[0] = reached(StuckRule::Repeat, bump(&mut self.repeat, again, seq));
        let failed = end.status == ToolStatus::Error;
        // A shell command's failure is `same_failure`'s alone, whether the agent flags it an
        // error or only prints its exit code: judged one way, warned before it is stopped.
        if failed && end.kind != ToolKind::Shell {
            let again = again && self.errors.is_some();
            counts[1] = reached(StuckRule::SameError, bump(&mut self.errors, again, seq));
        } else {
            self.errors = None;
        }
        if end.kind == ToolKind::Shell
            && let Some(streak) = self.failure(&call, failed, seq)
        {
            // The same failing command is a failure before it is a repeat: judged first.
            counts[2] = counts[0].take();
            counts[0] = reached(StuckRule::SameFailure, streak);
        }
        if let Some((cycles, first)) = self.ping_pong(call, seq) {
            counts[3] = Some(Reached {
                rule: StuckRule::PingPong,
                count: cycles,
                first_seq: first,
            });
        }
        counts
    }

    /// `same_failure`: the command's failure, counted again when it is the same as the last
    /// time it ran; a success or another failure forgets or replaces it.
    fn failure(&mut self, call: &Call, failed: bool, seq: u64) -> Option<Streak> {
        let known = self.failures.iter().position(|f| f.input == call.input());
        if !failed {
            if let Some(i) = known {
                self.failures.remove(i);
            }
            return None;
        }
        match known {
            Some(i) if self.failures[i].result == call.result() => {
                let f = &mut self.failures[i];
                f.streak.count += 1;
                Some(f.streak)
            }
            Some(i) => {
                let f = &mut self.failures[i];
                call.result().clone_into(&mut f.result);
                f.streak = Streak::start(seq);
                Some(f.streak)
            }
            None => {
                if self.failures.len() >= MAX_FAILURES {
                    self.failures.pop_front();
                }
                self.failures.push_back(Failure {
                    input: call.input().to_owned(),
                    result: call.result().to_owned(),
                    streak: Streak::start(seq),
                });
                Some(Streak::start(seq))
            }
        }
    }

    /// `ping_pong`: the number of full A,B cycles the last calls make, A and B different, each
    /// with its result unchanged; with the first call's sequence number.
    fn ping_pong(&mut self, call: Call, seq: u64) -> Option<(u32, u64)> {
        self.window.push_back((call, seq));
        let n = self.window.len();
        let (a, b) = (
            &self.window[n - 1].0,
            &self.window.get(n.wrapping_sub(2))?.0,
        );
        if a == b {
            self.window.drain(..n - 1);
            return None;
        }
        let mut run = 2;
        while run < n && self.window[n - 1 - run].0 == self.window[n - 1 - run + 2].0 {
            run += 1;
        }
        // Only as many calls as a cycle can still use are kept, and never more than a few.
        self.window.drain(..n - run.min(MAX_WINDOW));
        let first = self.window.front().map_or(seq, |(_, s)| *s);
        (run % 2 == 0 && run >= 4).then_some(((run / 2) as u32, first))
    }
}

/// Counts one more of the same when `again`, else starts over; the streak as it is now.
fn bump(streak: &mut Option<Streak>, again: bool, seq: u64) -> Streak {
    match streak {
        Some(s) if again => s.count += 1,
        _ => *streak = Some(Streak::start(seq)),
    }
    streak.unwrap_or_else(|| Streak::start(seq))
}

/// The input, cut to a short line.
pub(super) fn short(input: &str) -> String {
    let line = input.lines().next().unwrap_or_default();
    match line.char_indices().nth(MAX_INPUT_CHARS) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line.to_owned(),
    }
}
