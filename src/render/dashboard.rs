//! `runbook stats --html FILE`: one self-contained page (inline CSS and SVG, no script, nothing
//! fetched) with the same numbers as `runbook stats`, as charts: runs and cost per day, outcomes,
//! how long runs took, cost per project and model; and the most expensive and the failed runs.
//! The markup is maud's, the charts plotters' SVG.

use maud::{DOCTYPE, Markup, PreEscaped, html};
use plotters::prelude::*;

use crate::event::Outcome;
use crate::format::{duration_ms, money, money_of, utc};
use crate::overview::{Figures, Group, RunFacts};

const GREEN_BAR: RGBColor = RGBColor(0x2d, 0xa4, 0x4e);
const BLUE_BAR: RGBColor = RGBColor(0x09, 0x69, 0xda);
const RED_BAR: RGBColor = RGBColor(0xcf, 0x22, 0x2e);
const PURPLE_BAR: RGBColor = RGBColor(0x82, 0x50, 0xdf);
const TEAL_BAR: RGBColor = RGBColor(0x1b, 0x7c, 0x83);

/// How many runs each table lists, and how many bars a per-project or per-model chart has.
const TOP: usize = 15;

const CSS: &str = "
body { font: 15px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1100px; color: #1d2329; padding: 0 1rem; }
h1 { margin-bottom: 0.2rem; } h2 { margin-top: 2.2rem; font-size: 1.15rem; }
.sub { color: #5b6670; margin-top: 0; }
.cards { display: grid; grid-template-columns: repeat(auto-fit, minmax(150px, 1fr)); gap: 0.8rem; margin: 1.5rem 0; }
.card { border: 1px solid #d8dee4; border-radius: 8px; padding: 0.8rem 1rem; }
.card .n { display: block; font-size: 1.5rem; font-weight: 600; }
.card .l { color: #5b6670; font-size: 0.85rem; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(480px, 1fr)); gap: 1rem; }
svg { max-width: 100%; height: auto; }
table { border-collapse: collapse; width: 100%; font-size: 0.9rem; }
th, td { text-align: left; padding: 0.3rem 0.6rem; border-bottom: 1px solid #e6eaee; }
th { color: #5b6670; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.bad { color: #b42318; } .warn { color: #9a6700; }
footer { margin-top: 3rem; color: #5b6670; font-size: 0.8rem; }
";

/// The page.
pub(crate) fn page(f: &Figures, runs: &[RunFacts], dirs: &[String]) -> String {
    let span = match (&f.first, &f.last) {
        (Some(a), Some(b)) => format!("{} to {}", &a[..10], &b[..10]),
        _ => "no runs".to_owned(),
    };
    let rate = f
        .success_rate
        .map_or("-".to_owned(), |r| format!("{:.1}%", r * 100.0));
    let skipped: u32 = f.skipped.values().sum();
    let cards = [
        ("runs", f.runs.to_string(), "runs"),
        ("success", rate, "completed"),
        (
            "cost",
            money_of(
                (f.cost.unknown == 0).then_some(f.cost.total_usd),
                f.cost.total_usd,
            ),
            "total cost",
        ),
        (
            "median-cost",
            f.cost.median_usd.map_or("-".to_owned(), money),
            "median cost per run",
        ),
        (
            "p90-cost",
            f.cost.p90_usd.map_or("-".to_owned(), money),
            "90th percentile cost",
        ),
        (
            "median-duration",
            f.duration_ms.median.map_or("-".to_owned(), duration_ms),
            "median duration",
        ),
    ];
    let mut expensive: Vec<&RunFacts> = runs.iter().filter(|r| r.cost_usd.is_some()).collect();
    expensive.sort_by(|a, b| {
        b.cost_usd
            .unwrap_or(0.0)
            .total_cmp(&a.cost_usd.unwrap_or(0.0))
    });
    expensive.truncate(TOP);
    let mut failed: Vec<&RunFacts> = runs
        .iter()
        .filter(|r| r.outcome != Outcome::Completed)
        .collect();
    failed.reverse();
    failed.truncate(TOP);
    let markup = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "runbook stats" }
                style { (PreEscaped(CSS)) }
            }
            body {
                h1 { "runbook stats" }
                p.sub { (f.runs) " runs, " (span) " · " (dirs.join(", "))
                    @if skipped > 0 { " · " span.warn { (skipped) " receipts skipped" } }
                    @for i in &f.implausible { " · " span.warn { (i.runs) " runs' " (i.figure) " skipped: implausible (" (i.example) ")" } }
                    @if f.abandoned + f.running > 0 { " · " (f.running) " running, " (f.abandoned) " abandoned" }
                }
                section.cards {
                    @for (key, value, label) in &cards {
                        div.card { span.n data-key=(key) { (value) } span.l { (label) } }
                    }
                }
                h2 { "Runs and cost per day" }
                div.charts {
                    (PreEscaped(bars("Runs per day", &days(&f.per_day, |g| f64::from(g.runs)), &GREEN_BAR, count_label)))
                    (PreEscaped(bars("Cost per day (USD)", &days(&f.per_day, |g| g.known_cost_usd), &BLUE_BAR, |v| format!("{v:.2}"))))
                }
                h2 { "Outcomes and durations" }
                div.charts {
                    (PreEscaped(bars("Runs by outcome", &outcomes(f), &RED_BAR, count_label)))
                    (PreEscaped(bars("How long runs took", &durations(runs), &PURPLE_BAR, count_label)))
                }
                h2 { "Where the money went" }
                div.charts {
                    (PreEscaped(bars("Cost per project (USD)", &top(&f.per_project), &BLUE_BAR, |v| format!("{v:.2}"))))
                    (PreEscaped(bars("Cost per model (USD)", &top(&f.per_model), &TEAL_BAR, |v| format!("{v:.2}"))))
                }
                h2 { "The most expensive runs" }
                (table(&expensive))
                h2 { "Runs that did not complete" }
                @if failed.is_empty() { p { "None." } } @else { (table(&failed)) }
                footer { "Made by runbook " (env!("CARGO_PKG_VERSION")) " from the runs' receipts." }
            }
        }
    };
    markup.into_string()
}

fn table(runs: &[&RunFacts]) -> Markup {
    html! {
        table {
            thead { tr { th { "run" } th { "started" } th { "agent" } th { "model" } th { "project" } th { "outcome" } th.num { "time" } th.num { "cost" } } }
            tbody {
                @for r in runs {
                    tr {
                        td { code { (r.run_id) } }
                        td { (utc(r.started_at)) }
                        td { (r.agent) }
                        td { (r.model.as_deref().unwrap_or("-")) }
                        td { (r.project) }
                        td class=(if r.outcome == Outcome::Completed { "" } else { "bad" }) { (r.outcome.as_str()) }
                        td.num { (r.duration_ms.map_or("unknown".to_owned(), duration_ms)) }
                        td.num { (r.cost_usd.map_or("unknown".to_owned(), money)) }
                    }
                }
            }
        }
    }
}

/// Per day: the day (`11-24`) and a value.
fn days(groups: &[Group], value: impl Fn(&Group) -> f64) -> Vec<(String, f64)> {
    groups
        .iter()
        .map(|g| (g.key[5..].to_owned(), value(g)))
        .collect()
}

fn outcomes(f: &Figures) -> Vec<(String, f64)> {
    let mut all: Vec<(String, f64)> = f
        .outcomes
        .iter()
        .map(|(k, v)| (k.clone(), f64::from(*v)))
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all
}

/// How many runs took each span of time.
fn durations(runs: &[RunFacts]) -> Vec<(String, f64)> {
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
    spans
        .iter()
        .zip(counts)
        .map(|((label, _), n)| ((*label).to_owned(), f64::from(n)))
        .collect()
}

/// The costliest groups.
fn top(groups: &[Group]) -> Vec<(String, f64)> {
    let mut all: Vec<(String, f64)> = groups
        .iter()
        .map(|g| (short(&g.key), g.known_cost_usd))
        .collect();
    all.sort_by(|a, b| b.1.total_cmp(&a.1));
    all.truncate(TOP);
    all
}

/// The end of a long label (a project's path).
fn short(label: &str) -> String {
    let chars: Vec<char> = label.chars().collect();
    if chars.len() <= 24 {
        label.to_owned()
    } else {
        format!("…{}", chars[chars.len() - 23..].iter().collect::<String>())
    }
}

/// A count on the axis: whole numbers only.
fn count_label(v: f64) -> String {
    if v.fract() == 0.0 {
        format!("{v:.0}")
    } else {
        String::new()
    }
}

/// A bar chart as SVG.
fn bars(title: &str, data: &[(String, f64)], color: &RGBColor, label: fn(f64) -> String) -> String {
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (540, 300)).into_drawing_area();
        let _ = root.fill(&WHITE);
        let n = data.len().max(1) as u32;
        let most = data.iter().map(|(_, v)| *v).fold(0.0, f64::max).max(1e-9) * 1.15;
        let chart = ChartBuilder::on(&root)
            .caption(title, ("sans-serif", 17))
            .margin(10)
            .x_label_area_size(if data.len() > 8 { 60 } else { 30 })
            .y_label_area_size(50)
            .build_cartesian_2d((0u32..n - 1).into_segmented(), 0f64..most);
        let Ok(mut chart) = chart else {
            return String::new();
        };
        let names: Vec<String> = data.iter().map(|(k, _)| k.clone()).collect();
        let _ = chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(data.len().max(1))
            .x_label_formatter(&|v| match v {
                SegmentValue::CenterOf(i) | SegmentValue::Exact(i) => {
                    names.get(*i as usize).cloned().unwrap_or_default()
                }
                SegmentValue::Last => String::new(),
            })
            .y_label_formatter(&|v| label(*v))
            .draw();
        let _ = chart.draw_series(
            Histogram::vertical(&chart)
                .style(color.mix(0.8).filled())
                .margin(6)
                .data(data.iter().enumerate().map(|(i, (_, v))| (i as u32, *v))),
        );
        let _ = root.present();
    }
    svg
}
