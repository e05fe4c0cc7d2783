//! What time alone does to a turn: the watchdog, the run's deadline, the finish grace, the grace
//! before SIGKILL and the linger after the agent exits; and how each such turn ends.

use super::*;

#[tokio::test(start_paused = true)]
async fn silence_warns_at_half_the_timeout_then_stops_the_agent_as_hung() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    assert_eq!(
        t.0.next_wake(),
        Some(Instant::now() + SECOND * 2),
        "first CPU look"
    );
    let warned = t.wait(INACTIVITY / 2).await;
    assert_eq!(t.says(&warned), "Running | warn");
    let fired = t.wait(INACTIVITY / 2).await;
    assert_eq!(t.says(&fired), "Stopping[hung] | hung SIGTERM");
    let Some(Action::Hung(quiet)) = fired.first() else {
        panic!("{fired:?}")
    };
    assert_eq!((quiet.timeout, quiet.stdout), (INACTIVITY, INACTIVITY));
    let killed = t.wait(KILL_GRACE).await;
    assert_eq!(t.says(&killed), "Stopping[hung] | SIGKILL");
    assert_eq!(t.0.next_wake(), None, "nothing more to time");
    let ending = t.end(StreamEnd::Truncated("cut".into()));
    assert_eq!(ending.outcome, Outcome::Hung);
    assert!(
        ending.message.contains("no activity for 3m 0s"),
        "{}",
        ending.message
    );
}

#[tokio::test(start_paused = true)]
async fn the_deadline_stops_a_working_agent_as_timed_out() {
    let mut t = Turn::with_deadline(Some(SECOND * 30));
    t.stim(Stim::Output);
    assert_eq!(t.after(SECOND * 29).await, "Running |");
    let stopped = t.wait(SECOND).await;
    assert_eq!(
        t.says(&stopped),
        "Stopping[timed_out] | announce(timed_out) SIGTERM"
    );
    assert_eq!(t.end(StreamEnd::Finished).outcome, Outcome::TimedOut);
}

#[tokio::test(start_paused = true)]
async fn a_finished_agent_that_does_not_exit_is_ended_as_completed() {
    let mut t = Turn::new();
    t.stim(Stim::FinalWord);
    assert_eq!(t.0.next_wake(), Some(Instant::now() + FINISH_GRACE));
    let ended = t.wait(FINISH_GRACE).await;
    assert_eq!(
        t.says(&ended),
        "Stopping[finished] | announce(completed) SIGTERM"
    );
    let killed = t.wait(KILL_GRACE).await;
    assert_eq!(t.says(&killed), "Stopping[finished] | SIGKILL");
    let ending = t.end(StreamEnd::Finished);
    assert_eq!(ending.outcome, Outcome::Completed);
    assert!(ending.message.contains("lingered"), "{}", ending.message);
}

/// The bug this machine was built to rule out: a cost-crossing batch after the final word.
#[tokio::test(start_paused = true)]
async fn the_budget_crossed_after_the_final_word_does_not_stop_a_finished_agent() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    t.stim(Stim::FinalWord);
    tokio::time::advance(SECOND).await;
    assert_eq!(t.on(Stim::OverBudget), "Finishing |");
    let ending = t.end(StreamEnd::Finished);
    assert_eq!(ending.outcome, Outcome::Completed);
    // In the same batch as the final word, too.
    let mut t = Turn::new();
    let actions = t.output(true, BUDGET * 3.0);
    assert_eq!(t.says(&actions), "Finishing |");
}

/// A cost that cannot be counted is over any budget; without a budget it stops nothing.
#[tokio::test(start_paused = true)]
async fn spending_without_a_bound_is_over_the_budget() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    let actions = t.spend(false, Spent::Unbounded(crate::event::CostIssue::Infinite));
    assert_eq!(
        t.says(&actions),
        "Stopping[budget_exceeded] | announce(budget_exceeded) SIGTERM"
    );
    let ending = t.end(StreamEnd::Finished);
    assert_eq!(ending.outcome, Outcome::BudgetExceeded);
    assert!(
        ending.message.contains("infinite cost"),
        "{}",
        ending.message
    );

    let now = Instant::now();
    let unlimited = Limits {
        max_cost_usd: None,
        ..limits()
    };
    let mut t = Turn(Machine::new(unlimited, None, now), Duration::ZERO);
    let actions = t.spend(false, Spent::Unbounded(crate::event::CostIssue::Unreadable));
    assert_eq!(t.says(&actions), "Running |");
}

#[tokio::test(start_paused = true)]
async fn the_deadline_during_the_finish_grace_ends_the_agent_as_finished() {
    let mut t = Turn::with_deadline(Some(SECOND * 2));
    t.stim(Stim::FinalWord);
    assert_eq!(t.0.next_wake(), Some(Instant::now() + SECOND * 2));
    let ended = t.wait(SECOND * 2).await;
    assert_eq!(
        t.says(&ended),
        "Stopping[finished] | announce(completed) SIGTERM"
    );
    assert_eq!(t.end(StreamEnd::Finished).outcome, Outcome::Completed);
}

#[tokio::test(start_paused = true)]
async fn a_timeout_during_the_drain_cuts_the_linger_short_and_leaves_the_agents_verdict() {
    let mut t = Turn::with_deadline(Some(SECOND));
    t.stim(Stim::Output);
    t.stim(Stim::Exit);
    assert_eq!(
        t.0.next_wake(),
        Some(Instant::now() + SECOND),
        "the deadline"
    );
    assert_eq!(
        t.after(SECOND).await,
        "Draining | SIGTERM",
        "at the deadline"
    );
    assert_eq!(t.0.next_wake(), Some(Instant::now() + KILL_GRACE));
    let killed = t.wait(KILL_GRACE).await;
    assert_eq!(t.says(&killed), "Draining | SIGKILL");
    t.stim(Stim::PipesClosed);
    assert_eq!(t.0.ending(StreamEnd::Finished).outcome, Outcome::Completed);
}

#[tokio::test(start_paused = true)]
async fn the_drain_ends_in_bounded_time_whatever_holds_the_pipes() {
    // Something the kill cannot reach keeps the pipes open and keeps writing to them.
    let mut t = Turn::new();
    t.stim(Stim::Output);
    t.stim(Stim::Exit);
    let mut said = Vec::new();
    let step = Duration::from_millis(100);
    let mut waited = Duration::ZERO;
    while waited < LINGER + KILL_GRACE + READ_AFTER_KILL {
        t.stim(Stim::Output);
        let actions = t.wait(step).await;
        waited += step;
        if !actions.is_empty() {
            said.push(t.says(&actions));
        }
    }
    assert_eq!(
        said,
        [
            "Draining | SIGTERM",
            "Draining | SIGKILL",
            "Draining | stop-reading"
        ]
    );
    assert_eq!(
        t.0.next_wake(),
        None,
        "it waits only for the readers to finish"
    );
    t.stim(Stim::PipesClosed);
    assert!(t.0.is_ended());
    assert_eq!(t.0.ending(StreamEnd::Finished).outcome, Outcome::Completed);
}

#[tokio::test(start_paused = true)]
async fn an_agent_killed_before_it_exited_leaves_pipes_that_are_read_only_a_little_longer() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    t.stim(Stim::CtrlC);
    assert_eq!(t.after(KILL_GRACE).await, "Stopping[interrupted] | SIGKILL");
    t.stim(Stim::Exit);
    // The tree was killed already: no linger, no second round of signals.
    assert_eq!(t.0.next_wake(), Some(Instant::now() + READ_AFTER_KILL));
    assert_eq!(
        t.after(READ_AFTER_KILL).await,
        "Draining[interrupted] | stop-reading"
    );
    t.stim(Stim::PipesClosed);
    assert_eq!(
        t.0.ending(StreamEnd::Finished).outcome,
        Outcome::Interrupted
    );
}

#[tokio::test(start_paused = true)]
async fn the_budget_crossed_in_output_read_after_the_exit_ends_the_run_over_budget() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    t.stim(Stim::Exit);
    assert_eq!(
        t.on(Stim::OverBudget),
        "Draining[budget_exceeded] | announce(budget_exceeded) SIGTERM"
    );
    assert_eq!(
        t.0.next_wake(),
        Some(Instant::now() + KILL_GRACE),
        "no linger left"
    );
    t.stim(Stim::PipesClosed);
    let ending = t.0.ending(StreamEnd::Finished);
    assert_eq!(ending.outcome, Outcome::BudgetExceeded);
    // Once the final word was given, it is not.
    let mut t = Turn::new();
    t.stim(Stim::FinalWord);
    t.stim(Stim::Exit);
    assert_eq!(t.on(Stim::OverBudget), "Draining |");
}

#[tokio::test(start_paused = true)]
async fn a_stop_that_outlasts_the_agent_still_kills_what_holds_its_pipes() {
    let mut t = Turn::new();
    t.stim(Stim::OverBudget);
    t.stim(Stim::Exit);
    assert_eq!(describe(t.0.phase()), "Draining[budget_exceeded]");
    assert_eq!(t.after(LINGER).await, "Draining[budget_exceeded] | SIGTERM");
    let killed = t.wait(KILL_GRACE - LINGER).await;
    assert_eq!(t.says(&killed), "Draining[budget_exceeded] | SIGKILL");
    t.stim(Stim::PipesClosed);
    let ending = t.0.ending(StreamEnd::Finished);
    assert_eq!(ending.outcome, Outcome::BudgetExceeded);
    assert!(
        ending.message.contains("--max-cost $1.00"),
        "{}",
        ending.message
    );
}

#[tokio::test(start_paused = true)]
async fn a_second_signal_during_a_stop_kills_at_once_and_keeps_the_first_reason() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    t.wait(INACTIVITY).await;
    let killed = t.feed(Input::Signal(Received::Terminate));
    assert_eq!(t.says(&killed), "Stopping[hung] | SIGKILL");
    assert_eq!(t.0.next_wake(), None);
    assert_eq!(t.end(StreamEnd::Finished).outcome, Outcome::Hung);
}

#[tokio::test(start_paused = true)]
async fn signals_other_than_ctrl_c_are_named() {
    let mut t = Turn::new();
    t.feed(Input::Signal(Received::Hangup));
    let ending = t.end(StreamEnd::Finished);
    assert_eq!(
        (ending.outcome, ending.message.as_str()),
        (Outcome::Interrupted, "runbook received SIGHUP")
    );
}

#[tokio::test(start_paused = true)]
async fn an_exit_with_the_pipes_already_closed_ends_the_turn_at_once() {
    let mut t = Turn::new();
    t.stim(Stim::PipesClosed);
    assert!(t.0.awaits_exit() && !t.0.pipes_open());
    t.stim(Stim::Exit);
    assert!(t.0.is_ended());
    let failed = t.0.ending(StreamEnd::Failed("the agent said no".into()));
    assert_eq!(failed.outcome, Outcome::AgentError);
}

#[tokio::test(start_paused = true)]
async fn ctrl_c_while_draining_ends_the_leftovers_with_sigkill_after_the_grace() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    t.stim(Stim::Exit);
    assert_eq!(
        t.on(Stim::CtrlC),
        "Draining[interrupted] | announce(interrupted) SIGTERM"
    );
    assert_eq!(
        t.0.next_wake(),
        Some(Instant::now() + KILL_GRACE),
        "no linger left"
    );
    assert_eq!(t.after(KILL_GRACE).await, "Draining[interrupted] | SIGKILL");
    assert_eq!(
        t.after(READ_AFTER_KILL).await,
        "Draining[interrupted] | stop-reading"
    );
    assert_eq!(t.0.next_wake(), None);
}

#[tokio::test(start_paused = true)]
async fn cpu_is_read_only_while_the_agent_is_watched() {
    let mut t = Turn::new();
    assert!(t.0.watches_cpu(), "from the start");
    t.stim(Stim::Output);
    assert!(t.0.watches_cpu(), "output or not");
    t.stim(Stim::FinalWord);
    assert!(!t.0.watches_cpu(), "a finished agent is not watched");
}

#[tokio::test(start_paused = true)]
async fn output_after_the_final_word_still_counts_as_activity_for_the_status_line() {
    let mut t = Turn::new();
    t.stim(Stim::FinalWord);
    tokio::time::advance(SECOND * 3).await;
    assert_eq!(t.0.quiet_for(Instant::now()), SECOND * 3);
    t.stim(Stim::Output);
    assert_eq!(t.0.quiet_for(Instant::now()), Duration::ZERO);
}
