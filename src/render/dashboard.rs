//! `runbook stats --html FILE`: one self-contained page (inline CSS and SVG, no script, nothing
//! fetched) with the same numbers as `runbook stats`, in the order a team lead reads them: how
//! many runs completed and what they cost; outcomes and runs per day; the runs that did not
//! complete, with their prompt and why; where the money went; how long runs took; the most
//! expensive runs. Outcomes are coloured as on the terminal ([`Tone`]); light or dark as the
//! reader's system is. Every foreign string (prompts, messages, paths, models, names) is masked,
//! shown with its control characters visible, and HTML-escaped by maud; shortened ones carry
//! their whole text on hover. The charts are in `chart`.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use maud::{DOCTYPE, Markup, PreEscaped, html};

use super::chart::{self, Bar, Column, Unit};
use super::tone::Tone;
use crate::event::Outcome;
use crate::format::{duration_ms, fit, money, money_of, plural, utc};
use crate::overview::{Figures, Group, RunFacts};

/// How many runs each table lists, and how many bars a per-project or per-model chart has.
const TOP: usize = 15;
/// The most days the per-day charts fill in one by one (days without runs at 0).
const DAYS: u64 = 400;

const CSS: &str = include_str!("dashboard.css");

/// Foreign text as the page shows it: secrets masked, controls made visible, on one line
/// (maud escapes it where it is put).
fn shown(text: &str) -> String {
    let masked = crate::redact::current().str(text).into_owned();
    crate::foreign::term::escape_line(&masked).into_owned()
}

/// The page.
pub(crate) fn page(f: &Figures, runs: &[RunFacts], dirs: &[String]) -> String {
    let dirs: Vec<String> = dirs.iter().map(|d| shown(d)).collect();
    let nothing = f.runs == 0 && f.running == 0 && f.abandoned == 0;
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="color-scheme" content="light dark";
                title { "runbook stats" }
                style { (PreEscaped(CSS)) }
            }
            body { main {
                h1 { "runbook stats" }
                (subtitle(f, &dirs))
                @if nothing {
                    p.empty { "No runs to show: none match the filters, or there are none yet (" code { "runbook run" } " makes the first)." }
                } @else {
                    (cards(f))
                    (outcome_section(f, runs))
                    (failed_section(f, runs))
                    (money_section(f, runs))
                    (time_section(runs))
                }
                footer { "Made by runbook " (env!("CARGO_PKG_VERSION")) " from the runs' receipts. Times are UTC." }
            } }
        }
    };
    markup.into_string()
}

/// How many runs, over which days, read from where; and what could not be read.
fn subtitle(f: &Figures, dirs: &[String]) -> Markup {
    let span = match (&f.first, &f.last) {
        (Some(a), Some(b)) if a[..10] == b[..10] => format!(", on {}", &a[..10]),
        (Some(a), Some(b)) => format!(", {} to {}", &a[..10], &b[..10]),
        _ => String::new(),
    };
    let skipped: u32 = f.skipped.values().sum();
    html! {
        p.sub {
            (plural(u64::from(f.runs), "run")) (span) " · " (dirs.join(", "))
            @if f.running > 0 { " · " span data-figure="running" { (f.running) " running" } }
            @if f.abandoned > 0 { " · " span.tone-bad data-figure="abandoned" { (f.abandoned) " abandoned (no receipt)" } }
        }
        @if skipped > 0 {
            p.note { (plural(u64::from(skipped), "receipt")) " skipped: "
                (f.skipped.iter().map(|(why, n)| format!("{n} {}", shown(why))).collect::<Vec<_>>().join(", ")) }
        }
        @for i in &f.implausible {
            p.note { (i.runs) " runs' " (i.figure) " skipped: implausible (" (shown(&i.example)) "; " (i.bound) ")" }
        }
    }
}

/// The headline numbers.
fn cards(f: &Figures) -> Markup {
    let completed = f
        .outcomes
        .get(Outcome::Completed.as_str())
        .copied()
        .unwrap_or(0);
    let failed = f.runs - completed.min(f.runs);
    let rate = f
        .success_rate
        .map_or("-".to_owned(), |r| format!("{:.1}%", r * 100.0));
    let total = money_of(
        (f.cost.unknown == 0).then_some(f.cost.total_usd),
        f.cost.total_usd,
    );
    let unknown = (f.cost.unknown > 0)
        .then(|| format!("unknown for {}", plural(u64::from(f.cost.unknown), "run")));
    let cards: [(&str, String, &str, Option<String>, &str); 7] = [
        ("runs", f.runs.to_string(), "runs", None, ""),
        (
            "success",
            rate,
            "completed",
            Some(format!("{completed} of {}", f.runs)),
            if failed == 0 { "tone-good" } else { "" },
        ),
        (
            "failed",
            failed.to_string(),
            "did not complete",
            None,
            if failed > 0 { "tone-bad" } else { "" },
        ),
        ("cost", total, "total cost", unknown, ""),
        (
            "median-cost",
            f.cost.median_usd.map_or("-".to_owned(), money),
            "median cost per run",
            None,
            "",
        ),
        (
            "p90-cost",
            f.cost.p90_usd.map_or("-".to_owned(), money),
            "90th percentile cost",
            None,
            "",
        ),
        (
            "median-duration",
            f.duration_ms.median.map_or("-".to_owned(), duration_ms),
            "median duration",
            f.duration_ms.p90.map(|p| format!("p90 {}", duration_ms(p))),
            "",
        ),
    ];
    html! {
        section.cards {
            @for (key, value, label, more, class) in &cards {
                div.card {
                    span.n.(class) data-key=(key) { (value) }
                    span.l { (label) }
                    @if let Some(more) = more { span.m { (more) } }
                }
            }
        }
    }
}

/// Runs by outcome, and per day.
fn outcome_section(f: &Figures, runs: &[RunFacts]) -> Markup {
    let mut outcomes: Vec<(Tone, &String, u32)> = f
        .outcomes
        .iter()
        .map(|(name, n)| (tone_of(name), name, *n))
        .collect();
    outcomes.sort_by_key(|(tone, name, n)| (rank(*tone), std::cmp::Reverse(*n), *name));
    let bars: Vec<Bar> = outcomes
        .iter()
        .map(|(tone, name, n)| Bar {
            label: (*name).clone(),
            value: Some(f64::from(*n)),
            shown: n.to_string(),
            class: tone.class(),
            figure: format!("outcome:{name}"),
        })
        .collect();
    let days = per_day(&f.per_day, runs);
    let columns: Vec<Column> = days
        .iter()
        .map(|d| Column {
            label: d.key[5..].to_owned(),
            title: format!(
                "{}: {}, {} completed",
                d.key,
                plural(u64::from(d.tones.iter().sum::<u32>()), "run"),
                d.tones[0]
            ),
            parts: [Tone::Good, Tone::Going, Tone::Warn, Tone::Bad]
                .iter()
                .zip(d.tones)
                .map(|(t, n)| (t.class(), f64::from(n)))
                .collect(),
        })
        .collect();
    html! {
        h2 { "Outcomes" }
        div.charts {
            figure {
                figcaption { "Runs by outcome" }
                (chart::hbars("Runs by outcome", &bars, Unit::Count))
            }
            figure {
                figcaption { "Runs per day" }
                (chart::columns("Runs per day", &columns, Unit::Count))
                (legend(&days))
            }
        }
    }
}

/// What the colours of the days' outcomes mean (of those there are).
fn legend(days: &[Day<'_>]) -> Markup {
    let tones = [
        (Tone::Good, "completed"),
        (Tone::Going, "running"),
        (Tone::Warn, "interrupted or truncated"),
        (Tone::Bad, "failed"),
    ];
    html! {
        ul.legend {
            @for (tone, what) in tones {
                @if days.iter().any(|d| d.tones[rank(tone) as usize] > 0) {
                    li { span.swatch.(tone.class()) {} (what) }
                }
            }
        }
    }
}

/// The runs that did not complete, newest first, each with its prompt and why.
fn failed_section(f: &Figures, runs: &[RunFacts]) -> Markup {
    let failed: Vec<&RunFacts> = runs
        .iter()
        .rev()
        .filter(|r| r.outcome != Outcome::Completed)
        .collect();
    let shown_runs = &failed[..failed.len().min(TOP)];
    html! {
        h2 { "Runs that did not complete" }
        @if failed.is_empty() {
            p.empty { (if f.runs == 0 { "No run has a receipt yet." } else { "None: every run completed." }) }
        } @else {
            @if failed.len() > TOP { p.note { "The " (TOP) " newest of " (failed.len()) "." } }
            (table(shown_runs, true))
        }
        @if f.abandoned > 0 {
            p.note { (plural(u64::from(f.abandoned), "run")) " abandoned: its runbook was stopped before it wrote a receipt, so there is no reason to show (see " code { "runbook list" } ")." }
        }
    }
}

/// Cost per day, project, model and agent.
fn money_section(f: &Figures, runs: &[RunFacts]) -> Markup {
    let days = per_day(&f.per_day, runs);
    let columns: Vec<Column> = days
        .iter()
        .map(|d| Column {
            label: d.key[5..].to_owned(),
            title: format!(
                "{}: {}",
                d.key,
                d.group.map_or("no runs".to_owned(), |g| money_of(
                    g.cost_usd,
                    g.known_cost_usd
                ))
            ),
            parts: vec![("tone-money", d.group.map_or(0.0, |g| g.known_cost_usd))],
        })
        .collect();
    let mut expensive: Vec<&RunFacts> = runs.iter().filter(|r| r.cost_usd.is_some()).collect();
    expensive.sort_by(|a, b| {
        b.cost_usd
            .unwrap_or(0.0)
            .total_cmp(&a.cost_usd.unwrap_or(0.0))
    });
    expensive.truncate(TOP);
    html! {
        h2 { "Where the money went" }
        div.charts {
            figure {
                figcaption { "Cost per day" }
                (chart::columns("Cost per day", &columns, Unit::Usd))
            }
            (cost_chart("Cost per project", "project", &f.per_project))
            (cost_chart("Cost per model", "model", &f.per_model))
            (cost_chart("Cost per agent", "agent", &f.per_agent))
        }
        @if let Some(st) = &f.stuck {
            p.stuck data-key="stuck" {
                (plural(u64::from(st.runs), "run")) " stopped going round in circles, having spent "
                (money_of(st.spent_usd, st.known_spent_usd)) " until then"
                @if st.cost_unknown > 0 { " (unknown for " (plural(u64::from(st.cost_unknown), "run")) ")" }
                "."
            }
        }
        h2 { "The most expensive runs" }
        @if expensive.is_empty() { p.empty { "No run's cost is known." } } @else { (table(&expensive, false)) }
    }
}

/// The costliest groups, as bars; a group whose cost is partly unknown says `at least`.
fn cost_chart(title: &str, kind: &str, groups: &[Group]) -> Markup {
    let mut sorted: Vec<&Group> = groups.iter().collect();
    sorted.sort_by(|a, b| {
        b.known_cost_usd
            .total_cmp(&a.known_cost_usd)
            .then_with(|| a.key.cmp(&b.key))
    });
    let bars: Vec<Bar> = sorted
        .iter()
        .take(TOP)
        .map(|g| Bar {
            label: shown(&g.key),
            value: (g.known_cost_usd > 0.0 || g.cost_unknown == 0).then_some(g.known_cost_usd),
            shown: money_of(g.cost_usd, g.known_cost_usd),
            class: "tone-money",
            figure: format!("cost-{kind}:{}", shown(&g.key)),
        })
        .collect();
    html! {
        figure {
            figcaption { (title) }
            (chart::hbars(title, &bars, Unit::Usd))
            @if groups.len() > TOP { p.note { "and " (groups.len() - TOP) " more" } }
        }
    }
}

/// How long runs took.
fn time_section(runs: &[RunFacts]) -> Markup {
    let spans: [(&str, u64); 6] = [
        ("< 1m", 60_000),
        ("1–5m", 300_000),
        ("5–15m", 900_000),
        ("15–30m", 1_800_000),
        ("30–60m", 3_600_000),
        ("> 1h", u64::MAX),
    ];
    let mut counts = [0u32; 6];
    for ms in runs.iter().filter_map(|r| r.duration_ms) {
        let i = spans.iter().position(|(_, up_to)| ms < *up_to).unwrap_or(5);
        counts[i] += 1;
    }
    let bars: Vec<Bar> = spans
        .iter()
        .zip(counts)
        .map(|((label, _), n)| Bar {
            label: (*label).to_owned(),
            value: Some(f64::from(n)),
            shown: n.to_string(),
            class: "tone-time",
            figure: format!("duration:{label}"),
        })
        .collect();
    html! {
        h2 { "How long runs took" }
        div.charts {
            figure {
                figcaption { "Runs by duration" }
                (chart::hbars("Runs by duration", &bars, Unit::Count))
            }
        }
    }
}

/// Runs, two rows each: what a run was (id and start, outcome, agent and model, time, cost),
/// then its project, prompt and, when it did not complete, why.
fn table(runs: &[&RunFacts], why: bool) -> Markup {
    html! {
        table.runs {
            thead { tr { th { "run" } th { "outcome" } th { "agent · model" } th.num { "time" } th.num { "cost" } } }
            @for r in runs {
                @let tone = Tone::of(r.outcome);
                tbody {
                    tr.main {
                        td.nowrap { code.id { (clipped_start(&r.run_id, 26)) } span.when { (utc(r.started_at)) } }
                        td.nowrap { span.pill.(tone.class()) data-figure=(format!("run-outcome:{}", shown(&r.run_id))) { (r.outcome.as_str()) } }
                        td { span.agent { (clipped(&r.agent, 24)) } span.model { (clipped(r.model.as_deref().unwrap_or("-"), 28)) } }
                        td.num.nowrap { (r.duration_ms.map_or("unknown".to_owned(), duration_ms)) }
                        td.num.nowrap { (r.cost_usd.map_or("unknown".to_owned(), money)) }
                    }
                    tr.detail {
                        td colspan="5" {
                            span.project { (clipped(&r.project, 60)) }
                            @if !r.prompt.is_empty() { span.prompt { (clipped_start(&r.prompt, 240)) } }
                            @if why && !r.message.is_empty() {
                                span.reason.(tone.class()) data-figure=(format!("reason:{}", shown(&r.run_id))) { (clipped_start(&r.message, 400)) }
                            }
                        }
                    }
                }
            }
        }
    }
}

/// A label of at most `max` columns, its end kept, the whole on hover.
fn clipped(text: &str, max: usize) -> Markup {
    let whole = shown(text);
    html! { span title=(whole) { (chart::tail(&whole, max)) } }
}

/// A text of at most `max` columns, its start kept, the whole on hover.
fn clipped_start(text: &str, max: usize) -> Markup {
    let whole = shown(text);
    html! { span title=(whole) { (fit(&whole, max)) } }
}

/// The tone of an outcome as the figures name it.
fn tone_of(name: &str) -> Tone {
    serde_json::from_value::<Outcome>(serde_json::Value::String(name.to_owned()))
        .map_or(Tone::Bad, Tone::of)
}

/// Good outcomes first.
fn rank(t: Tone) -> u8 {
    match t {
        Tone::Good => 0,
        Tone::Going => 1,
        Tone::Warn => 2,
        Tone::Bad => 3,
    }
}

/// One day of the per-day charts.
struct Day<'a> {
    /// `2026-11-24`.
    key: String,
    /// Its runs by tone: good, going, warn, bad.
    tones: [u32; 4],
    group: Option<&'a Group>,
}

/// Every day from the first run's to the last's (only the days with runs over a longer span).
fn per_day<'a>(groups: &'a [Group], runs: &[RunFacts]) -> Vec<Day<'a>> {
    let mut tones: BTreeMap<String, [u32; 4]> = BTreeMap::new();
    for r in runs {
        let i = rank(Tone::of(r.outcome)) as usize;
        tones.entry(day_of(r.started_at)).or_default()[i] += 1;
    }
    let group = |key: &str| groups.iter().find(|g| g.key == key);
    let first = runs.first().map(|r| days_since_epoch(r.started_at));
    let last = runs.last().map(|r| days_since_epoch(r.started_at));
    let keys: Vec<String> = match (first, last) {
        (Some(a), Some(b)) if b >= a && b - a <= DAYS => (a..=b)
            .map(|d| day_of(UNIX_EPOCH + Duration::from_secs(d * 86_400)))
            .collect(),
        _ => groups.iter().map(|g| g.key.clone()).collect(),
    };
    keys.into_iter()
        .map(|key| {
            let t = tones.get(&key).copied().unwrap_or_default();
            Day {
                // Good, going, warn, bad: the order of `rank`.
                tones: t,
                group: group(&key),
                key,
            }
        })
        .collect()
}

fn days_since_epoch(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .unwrap_or(Duration::ZERO)
        .as_secs()
        / 86_400
}

/// `2026-11-24`, in UTC, as the figures key a day.
fn day_of(t: SystemTime) -> String {
    let midnight = UNIX_EPOCH + Duration::from_secs(days_since_epoch(t) * 86_400);
    humantime::format_rfc3339_seconds(midnight).to_string()[..10].to_owned()
}
