//! A turn of an ACP agent: its answer ends the turn with its process alive, and every stop asks
//! it to cancel before any signal.

use super::*;

#[tokio::test(start_paused = true)]
async fn the_answer_ends_the_turn_and_the_process_lives_on() {
    let mut t = Turn::acp();
    assert_eq!(t.on(Stim::Output), "Running |");
    let actions = t.feed(Input::Answered);
    assert!(actions.is_empty(), "no signal: {actions:?}");
    assert!(t.0.is_ended() && t.0.answered());
    let ending = t.0.ending(StreamEnd::Finished);
    assert_eq!(ending.outcome, Outcome::Completed);
    assert_eq!(
        ending.exit,
        ExitInfo::default(),
        "the process has not exited"
    );
    let truncated = t.0.ending(StreamEnd::Truncated("max_tokens".into()));
    assert_eq!(truncated.outcome, Outcome::Truncated);
}

#[tokio::test(start_paused = true)]
async fn ctrl_c_cancels_first_and_the_cancelled_answer_ends_the_turn_interrupted() {
    let mut t = Turn::acp();
    t.on(Stim::Output);
    assert_eq!(
        t.on(Stim::CtrlC),
        "Cancelling[interrupted] | announce(interrupted) cancel"
    );
    // Ctrl-C's outcome stands over the agent's `cancelled`.
    let actions = t.feed(Input::Answered);
    assert!(actions.is_empty());
    let ending = t.0.ending(StreamEnd::Truncated("cancelled".into()));
    assert_eq!(ending.outcome, Outcome::Interrupted);
}

#[tokio::test(start_paused = true)]
async fn an_agent_that_does_not_cancel_in_time_gets_signals() {
    let mut t = Turn::acp();
    t.on(Stim::Output);
    assert_eq!(
        t.on(Stim::OverBudget),
        "Cancelling[budget_exceeded] | announce(budget_exceeded) cancel"
    );
    assert_eq!(
        t.after(CANCEL_GRACE - SECOND).await,
        "Cancelling[budget_exceeded] |"
    );
    assert_eq!(t.after(SECOND).await, "Stopping[budget_exceeded] | SIGTERM");
    assert_eq!(
        t.after(KILL_GRACE).await,
        "Stopping[budget_exceeded] | SIGKILL"
    );
}

#[tokio::test(start_paused = true)]
async fn a_second_signal_while_cancelling_kills_at_once() {
    let mut t = Turn::acp();
    t.on(Stim::Output);
    t.on(Stim::CtrlC);
    assert_eq!(t.on(Stim::Term), "Stopping[interrupted] | SIGKILL");
}

#[tokio::test(start_paused = true)]
async fn with_nothing_to_cancel_signals_follow_at_once() {
    let mut t = Turn::acp();
    assert_eq!(t.after(INACTIVITY).await, "Cancelling[hung] | hung cancel");
    let actions = t.feed(Input::CannotCancel);
    assert_eq!(t.says(&actions), "Stopping[hung] | SIGTERM");
}

#[tokio::test(start_paused = true)]
async fn a_person_answering_a_permission_is_not_the_agents_silence() {
    let mut t = Turn::acp();
    t.on(Stim::Output);
    t.feed(Input::Asking(true));
    for _ in 0..4 {
        assert_eq!(t.after(INACTIVITY / 2).await, "Running |");
    }
    t.feed(Input::Asking(false));
    let hung = t.after(INACTIVITY).await;
    assert!(hung.starts_with("Cancelling[hung]"), "{hung}");
}
