//! Every phase a turn can be in, against every input: the phase it moves to and what it does.

use super::*;

/// The ways into each phase, from a new turn: inputs, then (for the phases the finish grace
/// leads to) the grace running out, then more inputs.
async fn reach(phase: &str) -> Turn {
    let mut t = Turn::new();
    let (before, grace, after): (&[Stim], bool, &[Stim]) = match phase {
        "Starting" => (&[], false, &[]),
        "Running" => (&[Stim::Output], false, &[]),
        "Finishing" => (&[Stim::FinalWord], false, &[]),
        "Stopping[interrupted]" => (&[Stim::Output, Stim::CtrlC], false, &[]),
        "Stopping[budget_exceeded]" => (&[Stim::Output, Stim::OverBudget], false, &[]),
        "Stopping[finished]" => (&[Stim::FinalWord], true, &[]),
        "Draining" => (&[Stim::Output, Stim::Exit], false, &[]),
        "Draining[interrupted]" => (&[Stim::Output, Stim::CtrlC, Stim::Exit], false, &[]),
        "Draining[finished]" => (&[Stim::FinalWord], true, &[Stim::Exit]),
        "Ended" => (&[Stim::Output, Stim::Exit, Stim::PipesClosed], false, &[]),
        other => panic!("no way into {other}"),
    };
    for &s in before {
        t.stim(s);
    }
    if grace {
        t.wait(FINISH_GRACE).await;
    }
    for &s in after {
        t.stim(s);
    }
    assert_eq!(describe(t.0.phase()), phase, "reaching {phase}");
    t
}

/// (phase, input, where it goes | what it does). Inputs a phase ignores leave it as it was. Every
/// signal to runbook does what Ctrl-C does, so SIGTERM is checked against Ctrl-C's row. A failed
/// write stops the turn like Ctrl-C, but does not hurry a stop already under way.
const TABLE: &[(&str, &[(Stim, &str)])] = &[
    (
        "Starting",
        &[
            (Stim::Output, "Running |"),
            (Stim::FinalWord, "Finishing |"),
            (
                Stim::OverBudget,
                "Stopping[budget_exceeded] | announce(budget_exceeded) SIGTERM",
            ),
            (Stim::Exit, "Draining |"),
            (Stim::PipesClosed, "Starting |"),
            (
                Stim::CtrlC,
                "Stopping[interrupted] | announce(interrupted) SIGTERM",
            ),
            (
                Stim::StorageFault,
                "Stopping[storage_error] | announce(storage_error) SIGTERM",
            ),
        ],
    ),
    (
        "Running",
        &[
            (Stim::Output, "Running |"),
            (Stim::FinalWord, "Finishing |"),
            (
                Stim::OverBudget,
                "Stopping[budget_exceeded] | announce(budget_exceeded) SIGTERM",
            ),
            (Stim::Exit, "Draining |"),
            (Stim::PipesClosed, "Running |"),
            (
                Stim::CtrlC,
                "Stopping[interrupted] | announce(interrupted) SIGTERM",
            ),
            (
                Stim::StorageFault,
                "Stopping[storage_error] | announce(storage_error) SIGTERM",
            ),
        ],
    ),
    (
        "Finishing",
        &[
            (Stim::Output, "Finishing |"),
            (Stim::FinalWord, "Finishing |"),
            // The agent has given its final word: its cost no longer stops it.
            (Stim::OverBudget, "Finishing |"),
            (Stim::Exit, "Draining |"),
            (Stim::PipesClosed, "Finishing |"),
            (
                Stim::CtrlC,
                "Stopping[interrupted] | announce(interrupted) SIGTERM",
            ),
            (
                Stim::StorageFault,
                "Stopping[storage_error] | announce(storage_error) SIGTERM",
            ),
        ],
    ),
    (
        "Stopping[interrupted]",
        &[
            (Stim::Output, "Stopping[interrupted] |"),
            (Stim::FinalWord, "Stopping[interrupted] |"),
            (Stim::OverBudget, "Stopping[interrupted] |"),
            (Stim::Exit, "Draining[interrupted] |"),
            (Stim::PipesClosed, "Stopping[interrupted] |"),
            (Stim::CtrlC, "Stopping[interrupted] | SIGKILL"),
            (Stim::StorageFault, "Stopping[interrupted] |"),
        ],
    ),
    (
        "Stopping[budget_exceeded]",
        &[
            (Stim::Output, "Stopping[budget_exceeded] |"),
            (Stim::FinalWord, "Stopping[budget_exceeded] |"),
            (Stim::OverBudget, "Stopping[budget_exceeded] |"),
            (Stim::Exit, "Draining[budget_exceeded] |"),
            (Stim::PipesClosed, "Stopping[budget_exceeded] |"),
            (Stim::CtrlC, "Stopping[budget_exceeded] | SIGKILL"),
            (Stim::StorageFault, "Stopping[budget_exceeded] |"),
        ],
    ),
    (
        "Stopping[finished]",
        &[
            (Stim::Output, "Stopping[finished] |"),
            (Stim::FinalWord, "Stopping[finished] |"),
            (Stim::OverBudget, "Stopping[finished] |"),
            (Stim::Exit, "Draining[finished] |"),
            (Stim::PipesClosed, "Stopping[finished] |"),
            (
                Stim::CtrlC,
                "Stopping[interrupted] | announce(interrupted) SIGTERM",
            ),
            (
                Stim::StorageFault,
                "Stopping[storage_error] | announce(storage_error) SIGTERM",
            ),
        ],
    ),
    (
        "Draining",
        &[
            (Stim::Output, "Draining |"),
            (Stim::FinalWord, "Draining |"),
            // Output read after the exit is still the agent's spending.
            (
                Stim::OverBudget,
                "Draining[budget_exceeded] | announce(budget_exceeded) SIGTERM",
            ),
            (Stim::Exit, "Draining |"),
            (Stim::PipesClosed, "Ended |"),
            (
                Stim::CtrlC,
                "Draining[interrupted] | announce(interrupted) SIGTERM",
            ),
            (
                Stim::StorageFault,
                "Draining[storage_error] | announce(storage_error) SIGTERM",
            ),
        ],
    ),
    (
        "Draining[interrupted]",
        &[
            (Stim::Output, "Draining[interrupted] |"),
            (Stim::FinalWord, "Draining[interrupted] |"),
            (Stim::OverBudget, "Draining[interrupted] |"),
            (Stim::Exit, "Draining[interrupted] |"),
            (Stim::PipesClosed, "Ended[interrupted] |"),
            (Stim::CtrlC, "Draining[interrupted] | SIGKILL"),
            (Stim::StorageFault, "Draining[interrupted] |"),
        ],
    ),
    (
        "Draining[finished]",
        &[
            (Stim::Output, "Draining[finished] |"),
            (Stim::FinalWord, "Draining[finished] |"),
            // It gave its final word: its cost no longer stops anything.
            (Stim::OverBudget, "Draining[finished] |"),
            (Stim::Exit, "Draining[finished] |"),
            (Stim::PipesClosed, "Ended[finished] |"),
            (
                Stim::CtrlC,
                "Draining[interrupted] | announce(interrupted) SIGTERM",
            ),
            (
                Stim::StorageFault,
                "Draining[storage_error] | announce(storage_error) SIGTERM",
            ),
        ],
    ),
    (
        "Ended",
        &[
            (Stim::Output, "Ended |"),
            (Stim::FinalWord, "Ended |"),
            (Stim::OverBudget, "Ended |"),
            (Stim::Exit, "Ended |"),
            (Stim::PipesClosed, "Ended |"),
            (Stim::CtrlC, "Ended |"),
            (Stim::StorageFault, "Ended |"),
        ],
    ),
];

#[tokio::test(start_paused = true)]
async fn every_phase_answers_every_input() {
    let mut failures = Vec::new();
    for (phase, row) in TABLE {
        for stim in STIMS {
            let like = if stim == Stim::Term {
                Stim::CtrlC
            } else {
                stim
            };
            let Some((_, want)) = row.iter().find(|(s, _)| *s == like) else {
                panic!("{phase} has no expectation for {stim:?}");
            };
            let mut t = reach(phase).await;
            let got = t.on(stim);
            if got != *want {
                failures.push(format!("{phase} + {stim:?}: want `{want}`, got `{got}`"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test(start_paused = true)]
async fn time_passing_with_nothing_due_changes_nothing() {
    for (phase, _) in TABLE {
        let mut t = reach(phase).await;
        assert_eq!(t.after(SECOND).await, format!("{phase} |"));
    }
}

/// Ctrl-C in each phase: the turn ends interrupted, except that a stop for a limit keeps its
/// reason and a turn already over keeps its ending.
#[tokio::test(start_paused = true)]
async fn ctrl_c_in_any_phase_ends_the_turn_interrupted() {
    for (phase, _) in TABLE {
        let mut t = reach(phase).await;
        t.stim(Stim::CtrlC);
        let ending = t.end(StreamEnd::Finished);
        let want = match *phase {
            "Ended" => Outcome::Completed,
            "Stopping[budget_exceeded]" => Outcome::BudgetExceeded,
            _ => Outcome::Interrupted,
        };
        assert_eq!(ending.outcome, want, "Ctrl-C while {phase}");
    }
}
