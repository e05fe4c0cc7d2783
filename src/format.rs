//! How runbook writes numbers, durations, times and cut text for people: one place, so every
//! view, report and message says `4.2s`, `$0.0123` or `12,345 tokens` the same way.

use std::time::{Duration, SystemTime};

/// `850ms`, `4.2s`, `3m 5s`, `1h 2m`: a duration, short and exact enough for messages.
///
/// Sub-millisecond parts are dropped before formatting, so a [`Duration`] reads exactly as its
/// whole milliseconds do in [`duration_ms`].
pub(crate) fn duration(d: Duration) -> String {
    duration_ms(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// [`duration`] for a count of milliseconds, as events and receipts carry them.
pub(crate) fn duration_ms(ms: u64) -> String {
    match ms {
        0..1000 => format!("{ms}ms"),
        1000..60_000 => format!("{:.1}s", ms as f64 / 1000.0),
        60_000..3_600_000 => format!("{}m {}s", ms / 60_000, ms % 60_000 / 1000),
        _ => format!("{}h {}m", ms / 3_600_000, ms % 3_600_000 / 60_000),
    }
}

/// `5s`, `3m12s`, `1h02m`: how long something has been running, in whole seconds, for a clock
/// that ticks once a second.
pub(crate) fn running_for(d: Duration) -> String {
    let secs = d.as_secs();
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m{:02}s", secs / 60, secs % 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

/// `$0.0123` below a dollar, `$1.23` above: of the amount as receipts write it
/// ([`crate::money::round`]), so that the live view's exact sum and every view that reads the
/// receipt back show one run's cost the same.
pub(crate) fn money(usd: f64) -> String {
    let rounded = crate::money::round(usd);
    if !rounded.is_finite() || rounded.abs() >= 1e6 {
        return format!("${usd:.2}");
    }
    // In whole billionths, rounded half up to the places shown: `0.00675` is `$0.0068` whatever
    // the binary fraction nearest to it.
    let nano = (rounded * 1e9).round() as i64;
    let (places, unit) = if rounded.abs() < 1.0 {
        (4, 100_000)
    } else {
        (2, 10_000_000)
    };
    let units = (nano.abs() + unit / 2) / unit;
    let per_dollar = 1_000_000_000 / unit;
    let sign = if nano < 0 && units > 0 { "-" } else { "" };
    format!(
        "{sign}${}.{:0places$}",
        units / per_dollar,
        units % per_dollar,
        places = places
    )
}

/// A sum of costs some of which may be unknown: the total when all are known, else `at least`
/// what is known, or `unknown` when nothing is (never `$0.0000` for what is not known).
pub(crate) fn money_of(total: Option<f64>, known: f64) -> String {
    match total {
        Some(usd) => money(usd),
        None if known > 0.0 => format!("at least {}", money(known)),
        None => "unknown".to_owned(),
    }
}

/// `12,345`.
pub(crate) fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `950`, `12.3k`, `4.5M`: a count where only its size matters (the live status line).
pub(crate) fn short_count(n: u64) -> String {
    match n {
        0..1000 => n.to_string(),
        1000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// `1 step`, `3 steps`, `1,200 steps`.
/// `2 files changed (+4 −2) · 1 commit`, or `no files changed` when the run changed nothing:
/// the same words in every view.
pub(crate) fn changes(c: &crate::event::Changes) -> String {
    if c.files_changed == 0 && c.commits_total == 0 {
        return "no files changed".to_owned();
    }
    let mut line = format!(
        "{} changed (+{} −{})",
        plural(u64::from(c.files_changed), "file"),
        thousands(c.insertions),
        thousands(c.deletions)
    );
    if c.commits_total > 0 {
        line.push_str(&format!(
            " · {}",
            plural(u64::from(c.commits_total), "commit")
        ));
    }
    line
}

pub(crate) fn plural(n: u64, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else if ["s", "x", "z", "ch", "sh"]
        .iter()
        .any(|end| noun.ends_with(end))
    {
        format!("{} {noun}es", thousands(n))
    } else {
        format!("{} {noun}s", thousands(n))
    }
}

/// `3 steps`, or `steps unknown` for an agent that does not report its model calls (Codex).
pub(crate) fn steps(n: Option<u32>) -> String {
    match n {
        Some(n) => plural(u64::from(n), "step"),
        None => "steps unknown".to_owned(),
    }
}

/// `12,345 tokens`; `tokens unknown` when some are unknown and none known, `at least 12,345
/// tokens` when some are unknown besides those: never a count that passes unknown tokens for 0.
pub(crate) fn tokens(total: u64, incomplete: bool) -> String {
    match (total, incomplete) {
        (_, false) => format!("{} tokens", thousands(total)),
        (0, true) => "tokens unknown".to_owned(),
        (n, true) => format!("at least {} tokens", thousands(n)),
    }
}

/// `3 tool calls`, `3 tool calls (1 failed)`, `3 tool calls (1 failed, 1 denied)`: calls, with
/// those that failed and those that were not allowed to run told apart, the same in every view.
pub(crate) fn tool_calls(calls: u64, failed: u64, denied: u64) -> String {
    tool_calls_sandboxed(calls, failed, denied, 0)
}

/// `5 tool calls (4 refused by the sandbox)`: as [`tool_calls`], with the failed calls the
/// sandbox refused (`refused`, counted in `failed`) told apart from the others.
pub(crate) fn tool_calls_sandboxed(calls: u64, failed: u64, denied: u64, refused: u64) -> String {
    let mut notes = Vec::new();
    let failed = failed.saturating_sub(refused);
    if failed > 0 {
        notes.push(format!("{} failed", thousands(failed)));
    }
    if refused > 0 {
        notes.push(format!("{} refused by the sandbox", thousands(refused)));
    }
    if denied > 0 {
        notes.push(format!("{} denied", thousands(denied)));
    }
    let calls = plural(calls, "tool call");
    if notes.is_empty() {
        calls
    } else {
        format!("{calls} ({})", notes.join(", "))
    }
}

/// `04:07` (or `1:04:07`): time since a run started.
pub(crate) fn clock(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s % 3600 / 60, s % 60)
    } else {
        format!("{:02}:{:02}", s / 60, s % 60)
    }
}

/// `04:07.3`: [`clock`] with tenths of a second, for timestamping lines.
pub(crate) fn clock_tenths(d: Duration) -> String {
    format!("{}.{}", clock(d), d.subsec_millis() / 100)
}

/// `2026-11-22 04:33:55 UTC`.
pub(crate) fn utc(t: SystemTime) -> String {
    humantime::format_rfc3339_seconds(t)
        .to_string()
        .replace('T', " ")
        .replace('Z', " UTC")
}

/// `just now`, `12m ago`, `3h ago`, `2d ago`: how long before `now` a time was.
pub(crate) fn age(t: SystemTime, now: SystemTime) -> String {
    let d = now.duration_since(t).unwrap_or(Duration::ZERO).as_secs();
    match d {
        0..60 => "just now".to_owned(),
        60..3600 => format!("{}m ago", d / 60),
        3600..86_400 => format!("{}h ago", d / 3600),
        _ => format!("{}d ago", d / 86_400),
    }
}

/// The first non-empty line of a text, trimmed.
pub(crate) fn first_line(text: &str) -> &str {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .unwrap_or("")
}

/// [`first_line`], followed by ` …` when more non-empty lines follow it, so a report says that
/// there is more to read.
pub(crate) fn first_line_and_more(text: &str) -> String {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let first = lines.next().unwrap_or("").trim();
    if lines.next().is_some() {
        format!("{first} …")
    } else {
        first.to_owned()
    }
}

/// At most `max` characters, with an ellipsis when cut.
pub(crate) fn truncate(text: &str, max: usize) -> String {
    // No more bytes than `max` is no more characters either: nothing to count.
    if text.len() <= max {
        return text.to_owned();
    }
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((cut, _)) => format!("{}…", &text[..cut]),
    }
}

/// The first `max` characters of a text (all of it when shorter), cut between characters: the
/// short form of a commit read back from a receipt or a record, which may hold any text.
pub(crate) fn first_chars(text: &str, max: usize) -> &str {
    match text.char_indices().nth(max) {
        Some((cut, _)) => &text[..cut],
        None => text,
    }
}

/// At most `width` terminal columns, ending in `…` when cut ([`crate::term::fit`]).
pub(crate) use crate::term::fit;

/// The last `max` characters of a text (all of it when shorter): the newest part of a stream.
pub(crate) fn last_chars(text: &str, max: usize) -> &str {
    let Some(back) = max.checked_sub(1) else {
        return "";
    };
    match text.char_indices().rev().nth(back) {
        Some((start, _)) => &text[start..],
        None => text,
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn a_cost_shows_the_same_from_the_live_sum_and_from_the_receipt() {
        use super::money;
        // 0.0042 + 0.00495 as the live fold adds them, and as the receipt writes the sum.
        let live: f64 = [0.0042, 0.00495].iter().sum();
        let written: f64 = serde_json::from_str(&{
            let mut out = Vec::new();
            let mut ser = serde_json::Serializer::new(&mut out);
            crate::money::usd(&live, &mut ser).unwrap();
            String::from_utf8(out).unwrap()
        })
        .unwrap();
        assert_eq!(money(live), money(written));
        assert_eq!(money(0.00675), "$0.0068");
        assert_eq!(money(0.006749999999999999), "$0.0068");
        assert_eq!(money(0.0123), "$0.0123");
        assert_eq!(money(1.235), "$1.24");
        assert_eq!(money(0.99996), "$1.0000");
        assert_eq!(money(12.5), "$12.50");
        assert_eq!(money(0.0), "$0.0000");
        for cents in 0..2_000u32 {
            let exact: f64 = (0..7).map(|i| f64::from(cents + i) * 1.3e-5).sum();
            assert_eq!(money(exact), money(crate::money::round(exact)), "{exact}");
        }
    }

    #[test]
    fn unknown_steps_and_tokens_read_as_unknown_never_as_zero() {
        assert_eq!(steps(Some(3)), "3 steps");
        assert_eq!(steps(None), "steps unknown");
        assert_eq!(tokens(1234, false), "1,234 tokens");
        assert_eq!(tokens(0, true), "tokens unknown");
        assert_eq!(tokens(1234, true), "at least 1,234 tokens");
    }
    use super::*;

    #[test]
    fn a_running_clock_counts_whole_seconds() {
        let at = |s| running_for(Duration::from_millis(s));
        assert_eq!(at(2_900), "2s");
        assert_eq!(at(192_000), "3m12s");
        assert_eq!(at(3_725_000), "1h02m");
    }

    #[test]
    fn numbers_read_well() {
        assert_eq!(thousands(1_234_567), "1,234,567");
        assert_eq!(thousands(999), "999");
        assert_eq!(money(0.00333), "$0.0033");
        assert_eq!(money(12.5), "$12.50");
        assert_eq!(short_count(5_123), "5.1k");
        assert_eq!(plural(1, "step"), "1 step");
        assert_eq!(plural(1_200, "step"), "1,200 steps");
        assert_eq!(tool_calls(1, 0, 0), "1 tool call");
        assert_eq!(tool_calls(3, 1, 0), "3 tool calls (1 failed)");
        assert_eq!(
            tool_calls_sandboxed(5, 4, 0, 4),
            "5 tool calls (4 refused by the sandbox)"
        );
        assert_eq!(tool_calls(3, 0, 2), "3 tool calls (2 denied)");
        assert_eq!(tool_calls(3, 1, 1), "3 tool calls (1 failed, 1 denied)");
    }

    #[test]
    fn durations_read_the_same_from_milliseconds_and_durations() {
        for (ms, text) in [
            (0, "0ms"),
            (850, "850ms"),
            (4_250, "4.2s"),
            (12_000, "12.0s"),
            (180_000, "3m 0s"),
            (185_400, "3m 5s"),
            (3_720_000, "1h 2m"),
        ] {
            assert_eq!(duration_ms(ms), text);
            assert_eq!(duration(Duration::from_millis(ms)), text);
        }
        // Only whole milliseconds count.
        assert_eq!(duration(Duration::from_micros(4_250_900)), "4.2s");
        assert_eq!(duration(Duration::from_micros(999_999)), "999ms");
    }

    #[test]
    fn clocks_and_dates_read_well() {
        assert_eq!(clock(Duration::from_secs(247)), "04:07");
        assert_eq!(clock_tenths(Duration::from_millis(3_725_400)), "1:02:05.4");
        let t = humantime::parse_rfc3339("2026-11-22T04:33:55Z").unwrap();
        assert_eq!(utc(t), "2026-11-22 04:33:55 UTC");
        assert_eq!(age(t, t + Duration::from_secs(59)), "just now");
        assert_eq!(age(t, t + Duration::from_secs(3 * 3600)), "3h ago");
    }

    #[test]
    fn text_is_cut_to_what_fits() {
        assert_eq!(first_line("\n  first \nsecond"), "first");
        assert_eq!(first_line_and_more("\n  first \nsecond"), "first …");
        assert_eq!(first_line_and_more("only\n\n"), "only");
        assert_eq!(truncate("héllo", 2), "hé…");
        assert_eq!(fit("hello world", 6), "hello…");
        assert_eq!(last_chars("héllo", 4), "éllo");
        assert_eq!(last_chars("hé", 4), "hé");
        assert_eq!(last_chars("hé", 0), "");
        assert_eq!(first_chars("ééééé", 3), "ééé");
        assert_eq!(first_chars("abc", 10), "abc");
    }
}
