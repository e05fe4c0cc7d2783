//! What the agent's tree's CPU use does to the watchdog: a share of a core under the threshold
//! (a runtime's idle timers) is silence, one at or above it (a tool at work) is activity, and a
//! warning it withdraws is said.

use super::*;

/// How often the turn of [`limits`] judges CPU use.
fn every(t: &Turn) -> Duration {
    t.0.cpu_every()
}

/// Moves the turn on sample by sample, its tree using `share` of a core, until it is stopped or
/// `limit` has passed; returns when it fired and how often it warned.
async fn until_fired(t: &mut Turn, share: f64, limit: Duration) -> (Option<Instant>, usize) {
    let until = Instant::now() + limit;
    let mut warnings = 0;
    while Instant::now() < until {
        let wake = t.0.next_wake().expect("a watched turn has a wake-up");
        let actions = t.burn(wake - Instant::now(), share).await;
        warnings += actions
            .iter()
            .filter(|a| matches!(a, Action::Warn { .. }))
            .count();
        if actions.iter().any(|a| matches!(a, Action::Hung(_))) {
            return (Some(Instant::now()), warnings);
        }
    }
    (None, warnings)
}

#[tokio::test(start_paused = true)]
async fn idle_timers_under_the_threshold_do_not_keep_a_stalled_agent_alive() {
    for share in [0.0, 0.01, 0.13, BUSY_CPU * 0.99] {
        let mut t = Turn::new();
        t.stim(Stim::Output);
        let stalled = Instant::now();
        let (fired, warnings) = until_fired(&mut t, share, INACTIVITY * 3).await;
        assert_eq!(
            fired,
            Some(stalled + INACTIVITY),
            "{share}: stopped at the timeout"
        );
        assert_eq!(warnings, 1, "{share}: warned once");
    }
}

#[tokio::test(start_paused = true)]
async fn a_tree_at_work_keeps_a_silent_agent_alive() {
    for share in [0.21, 0.3, 1.0, 2.0] {
        let mut t = Turn::new();
        t.stim(Stim::Output);
        let (fired, warnings) = until_fired(&mut t, share, INACTIVITY * 3).await;
        assert_eq!((fired, warnings), (None, 0), "{share}");
    }
}

#[tokio::test(start_paused = true)]
async fn a_stall_after_busy_work_is_stopped_within_the_timeout_and_one_sample() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    // A minute of a busy tree (a tool at work), then nothing at all.
    let (fired, _) = until_fired(&mut t, 0.8, SECOND * 60).await;
    assert_eq!(fired, None);
    let stalled = Instant::now();
    let (fired, warnings) = until_fired(&mut t, 0.0, INACTIVITY * 2).await;
    let fired = fired.expect("stopped");
    assert!(
        fired >= stalled + INACTIVITY && fired <= stalled + INACTIVITY + every(&t),
        "stopped {:?} after the stall",
        fired - stalled
    );
    assert_eq!(warnings, 1);
}

#[tokio::test(start_paused = true)]
async fn busy_cpu_after_the_warning_withdraws_it_and_says_by_how_much() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    let warned = t.wait(INACTIVITY / 2).await;
    assert_eq!(t.says(&warned), "Running | warn");
    // A sample of idle timers, then one of a tool at work.
    assert_eq!(t.burn(every(&t), 0.05).await, []);
    let resumed = t.burn(every(&t), 0.42).await;
    assert_eq!(t.says(&resumed), "Running | resumed(Cpu 42%)");
    assert_eq!(
        t.burn(every(&t), 0.42).await,
        [],
        "said once, while it was withdrawn"
    );
    // Quiet again: a new warning at half the timeout after the last busy sample, the stop at
    // the timeout.
    let busy_until = Instant::now();
    let (fired, warnings) = until_fired(&mut t, 0.02, INACTIVITY * 2).await;
    assert_eq!((fired, warnings), (Some(busy_until + INACTIVITY), 1));
}

#[tokio::test(start_paused = true)]
async fn output_after_the_warning_withdraws_it_and_says_so() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    t.wait(INACTIVITY / 2).await;
    assert_eq!(t.on(Stim::Output), "Running | resumed(Stdout)");
    assert_eq!(t.on(Stim::Output), "Running |", "said once");
    let stderr = t.feed(Input::Output {
        stream: Stream::Stderr,
        at: Instant::now(),
        final_word: false,
        spent: Spent::AtLeast(0.0),
    });
    assert_eq!(t.says(&stderr), "Running |", "no warning left to withdraw");
}

#[tokio::test(start_paused = true)]
async fn without_a_warning_activity_says_nothing() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    assert_eq!(t.burn(every(&t), 1.0).await, []);
    assert_eq!(t.burn(every(&t), 1.0).await, []);
    assert_eq!(t.on(Stim::Output), "Running |");
}

#[tokio::test(start_paused = true)]
async fn a_wake_up_between_samples_does_not_read_a_share_from_a_sliver() {
    let mut t = Turn::new();
    t.stim(Stim::Output);
    t.wait(INACTIVITY / 2).await;
    // 60 ms of CPU (a burst of an idle runtime) over a tenth of a sample would read as a busy
    // share: it is read over the whole sample instead.
    let sliver = every(&t) / 10;
    t.1 += Duration::from_millis(60);
    assert_eq!(t.wait(sliver).await, []);
    assert_eq!(t.wait(every(&t) - sliver).await, []);
}
