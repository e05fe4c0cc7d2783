//! The one prompt that nudges an agent stopped for going round in circles (`--stuck nudge`):
//! what it repeated, how often, and that it should change approach or say what blocks it.

use crate::event::{Stuck, StuckRule};

/// The nudge for `stuck`; the input it names is the short, masked one of the verdict.
pub(crate) fn prompt(stuck: &Stuck) -> String {
    let n = stuck.count;
    let call = match (&stuck.tool, &stuck.input) {
        (Some(tool), Some(input)) if !input.is_empty() => format!(" (`{tool} {input}`)"),
        (Some(tool), _) => format!(" (`{tool}`)"),
        _ => String::new(),
    };
    let what = match stuck.rule {
        StuckRule::SameFailure => {
            format!("You have run the same failing command{call} {n} times with the same result")
        }
        StuckRule::Repeat => {
            format!("You have made the same call{call} {n} times in a row with the same result")
        }
        StuckRule::SameError => {
            format!("The same call{call} has ended in the same error {n} times in a row")
        }
        StuckRule::PingPong => format!(
            "You have gone back and forth between the same two calls{call} {n} times, with unchanged results"
        ),
        StuckRule::Monologue => {
            format!("Your last {n} steps called no tool and said nothing new")
        }
    };
    format!("{what}. Change approach, or say what blocks you.")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stuck(rule: StuckRule, tool: Option<&str>, input: Option<&str>) -> Stuck {
        Stuck {
            rule,
            count: 3,
            tool: tool.map(str::to_owned),
            input: input.map(str::to_owned),
            first_seq: 1,
            last_seq: 9,
            nudged: false,
        }
    }

    #[test]
    fn the_nudge_says_what_was_repeated_and_asks_for_another_way() {
        let p = prompt(&stuck(
            StuckRule::SameFailure,
            Some("bash"),
            Some("cargo test"),
        ));
        assert_eq!(
            p,
            "You have run the same failing command (`bash cargo test`) 3 times with the same result. Change approach, or say what blocks you."
        );
        let p = prompt(&stuck(StuckRule::Monologue, None, None));
        assert!(p.starts_with("Your last 3 steps"), "{p}");
        for rule in [StuckRule::Repeat, StuckRule::SameError, StuckRule::PingPong] {
            let p = prompt(&stuck(rule, Some("read"), Some("a.rs")));
            assert!(
                p.contains("`read a.rs`") && p.ends_with("what blocks you."),
                "{p}"
            );
        }
    }
}
