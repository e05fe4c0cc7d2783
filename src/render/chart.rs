//! The stats page's charts, as inline SVG laid out here so that nothing in them overlaps: labels
//! in monospace whose width is known before the browser draws them, shortened to their column with
//! the whole text in a `<title>` (shown on hover), axes of nice steps (1, 2 or 5 × 10ⁿ) whose
//! labels never repeat and never touch, and colours named by class so the page's CSS (light or
//! dark) paints them.

use maud::{Markup, html};

use crate::format::{money, thousands};

/// The width of every chart, in the units of its `viewBox`; the SVG scales to its column.
const W: f64 = 560.0;
/// The size of the charts' text.
const FONT: f64 = 12.0;
/// The advance of one column of monospace text (DejaVu Sans Mono, Menlo and Consolas are 0.55 to
/// 0.61 em; a wide character counts two columns), with room to spare.
const CH: f64 = FONT * 0.62;
/// The widest a category's label may be, in columns.
const LABEL_COLS: usize = 26;
/// The height of one horizontal bar's row.
const ROW: f64 = 24.0;

/// What an axis counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unit {
    /// Whole things (runs).
    Count,
    /// US dollars.
    Usd,
}

impl Unit {
    /// The smallest step between two ticks: one of what a label can show.
    fn least_step(self) -> f64 {
        match self {
            Unit::Count => 1.0,
            Unit::Usd => 0.0001,
        }
    }

    /// A tick's label on an axis reaching `top`: counts whole, money as runbook shows it (`$` and
    /// two places from a dollar up, four below), every label of an axis with the same places.
    fn label(self, v: f64, top: f64) -> String {
        match self {
            Unit::Count => thousands(v.round().max(0.0) as u64),
            Unit::Usd if top < 1.0 => money(v),
            Unit::Usd if top >= 1e6 => format!("${v:.0}"),
            Unit::Usd => format!("${v:.2}"),
        }
    }
}

/// Ticks from 0 to at least `max`, in steps of 1, 2 or 5 × 10ⁿ (never below `least`), about
/// `count` steps.
pub(crate) fn ticks(max: f64, count: usize, least: f64) -> Vec<f64> {
    let max = if max.is_finite() && max > least {
        max
    } else {
        least
    };
    let raw = max / count.max(1) as f64;
    let magnitude = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * magnitude)
        .find(|s| *s >= raw * (1.0 - 1e-9))
        .unwrap_or(10.0 * magnitude)
        .max(least);
    let steps = (max / step - 1e-9).ceil().max(1.0) as usize;
    (0..=steps).map(|i| i as f64 * step).collect()
}

/// A coordinate, to a hundredth.
fn at(v: f64) -> String {
    let s = format!("{v:.2}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The width of `text` in columns.
fn cols(text: &str) -> usize {
    console::measure_text_width(text)
}

/// The width of `text` in the charts' units.
fn width(text: &str) -> f64 {
    cols(text) as f64 * CH
}

/// `text` in at most `max` columns: its end after `…` when longer (a path's or a model's end says
/// the most).
pub(crate) fn tail(text: &str, max: usize) -> String {
    if cols(text) <= max {
        return text.to_owned();
    }
    let mut used = 1;
    let mut start = text.len();
    for (i, c) in text.char_indices().rev() {
        let w = cols(c.encode_utf8(&mut [0; 4]));
        if used + w > max {
            break;
        }
        used += w;
        start = i;
    }
    format!("…{}", &text[start..])
}

/// The labels of one chart, each in at most `max` columns, told apart: labels whose ends are
/// the same (paths under one layout, `…/services/billing`) lose that common end (`…/`) instead,
/// so that what differs between them shows.
pub(crate) fn tails(labels: &[String], max: usize) -> Vec<String> {
    let mut short: Vec<String> = labels.iter().map(|l| tail(l, max)).collect();
    for i in 0..labels.len() {
        let same: Vec<usize> = (0..labels.len())
            .filter(|j| short[*j] == short[i] && labels[*j] != labels[i])
            .collect();
        if same.is_empty() {
            continue;
        }
        let group: Vec<&str> = std::iter::once(i)
            .chain(same.iter().copied())
            .map(|j| labels[j].as_str())
            .collect();
        let end = common_end(&group);
        if end == 0 {
            continue;
        }
        for j in std::iter::once(i).chain(same) {
            let rest = &labels[j][..labels[j].len() - end];
            short[j] = format!("{}/…", tail(rest, max.saturating_sub(2).max(2)));
        }
    }
    short
}

/// The length in bytes of the end all of `labels` share, from a `/` on, leaving each a start.
fn common_end(labels: &[&str]) -> usize {
    let Some(first) = labels.first() else {
        return 0;
    };
    let mut end = first.len();
    for l in labels {
        let shared = first
            .bytes()
            .rev()
            .zip(l.bytes().rev())
            .take_while(|(a, b)| a == b)
            .count();
        end = end.min(shared).min(l.len().saturating_sub(1));
    }
    // From the `/` that starts a whole component of the shared end.
    let cut = &first[first.len() - end..];
    cut.find('/').map_or(0, |slash| end - slash)
}

/// One bar of a horizontal bar chart.
pub(crate) struct Bar {
    /// What it is, whole (shortened to fit, with the whole on hover).
    pub label: String,
    /// How long it is; unknown draws no bar.
    pub value: Option<f64>,
    /// The value as shown at its end (`3`, `$1.20`, `at least $4.00`, `unknown`).
    pub shown: String,
    /// Its colour's class.
    pub class: &'static str,
    /// `data-figure` of its row, for whoever reads the page's numbers.
    pub figure: String,
}

/// Bars side by side, one row each, a label left of each and its value right of it, over an
/// axis of `unit`.
pub(crate) fn hbars(title: &str, bars: &[Bar], unit: Unit) -> Markup {
    let labels: Vec<String> = bars.iter().map(|b| b.label.clone()).collect();
    let short = tails(&labels, LABEL_COLS);
    let label_cols = short
        .iter()
        .map(|l| cols(l))
        .max()
        .unwrap_or(0)
        .min(LABEL_COLS);
    let x0 = 8.0 + label_cols as f64 * CH + 8.0;
    let value_w = bars.iter().map(|b| width(&b.shown)).fold(0.0, f64::max) + 10.0;
    let x1 = W - 8.0 - value_w;
    let max = bars.iter().filter_map(|b| b.value).fold(0.0, f64::max);
    let ticks = fitting_ticks(max, unit, x1 - x0);
    let top = ticks.last().copied().unwrap_or(1.0);
    let x = |v: f64| x0 + (x1 - x0) * (v / top).clamp(0.0, 1.0);
    // A bar too short to see is a sliver still; none is none.
    let length = |v: Option<f64>| match v {
        Some(v) if v > 0.0 => (x(v) - x0).max(1.0),
        _ => 0.0,
    };
    let axis = 6.0 + bars.len() as f64 * ROW + 4.0;
    let height = axis + 24.0;
    html! {
        svg.chart viewBox=(format!("0 0 {W} {height}")) role="img" aria-label=(title) {
            @for t in &ticks {
                line.grid x1=(at(x(*t))) x2=(at(x(*t))) y1="4" y2=(at(axis)) {}
                text.tick.axis-value x=(at(x(*t))) y=(at(axis + 16.0)) text-anchor="middle" { (unit.label(*t, top)) }
            }
            @for (i, (b, short)) in bars.iter().zip(&short).enumerate() {
                @let y = 6.0 + i as f64 * ROW;
                g data-figure=(b.figure) {
                    text.label x=(at(x0 - 8.0)) y=(at(y + 16.0)) text-anchor="end" {
                        title { (b.label) } (short)
                    }
                    rect class=(b.class) x=(at(x0)) y=(at(y + 4.0)) width=(at(length(b.value))) height=(at(ROW - 8.0)) rx="2" {
                        title { (b.label) ": " (b.shown) }
                    }
                    text.value x=(at(x0 + length(b.value) + 5.0)) y=(at(y + 16.0)) { (b.shown) }
                }
            }
            line.axis x1=(at(x0)) x2=(at(x0)) y1="4" y2=(at(axis)) {}
        }
    }
}

/// The most ticks (up to 5 steps) whose labels fit `span` side by side with room between them.
fn fitting_ticks(max: f64, unit: Unit, span: f64) -> Vec<f64> {
    let mut ticks = vec![0.0, unit.least_step()];
    for count in (1..=5).rev() {
        ticks = self::ticks(max, count, unit.least_step());
        let top = ticks.last().copied().unwrap_or(1.0);
        let widest = ticks
            .iter()
            .map(|t| width(&unit.label(*t, top)))
            .fold(0.0, f64::max);
        if span / (ticks.len() - 1) as f64 >= widest + 12.0 {
            break;
        }
    }
    ticks
}

/// One column of a column chart: its parts stacked from the bottom.
pub(crate) struct Column {
    /// The label under it (`11-24`), shown when there is room.
    pub label: String,
    /// What it is, whole, on hover (`2026-11-24: 5 runs, 4 completed`).
    pub title: String,
    /// Its parts: colour class and amount.
    pub parts: Vec<(&'static str, f64)>,
}

/// Columns side by side over a vertical axis of `unit` (runs or cost per day).
pub(crate) fn columns(title: &str, columns: &[Column], unit: Unit) -> Markup {
    const HEIGHT: f64 = 254.0;
    let axis = HEIGHT - 30.0;
    let max = columns
        .iter()
        .map(|c| c.parts.iter().map(|p| p.1).sum::<f64>())
        .fold(0.0, f64::max);
    let ticks = ticks(max, 5, unit.least_step());
    let top = ticks.last().copied().unwrap_or(1.0);
    let labels: Vec<String> = ticks.iter().map(|t| unit.label(*t, top)).collect();
    let x0 = 8.0 + labels.iter().map(|l| width(l)).fold(0.0, f64::max) + 8.0;
    let x1 = W - 8.0;
    let y = |v: f64| axis - (axis - 10.0) * (v / top).clamp(0.0, 1.0);
    let slot = (x1 - x0) / columns.len().max(1) as f64;
    let bar = (slot * 0.72).max(0.5);
    // Every `every`th label, so that two never touch.
    let widest = columns.iter().map(|c| width(&c.label)).fold(0.0, f64::max);
    let every = ((widest + 10.0) / slot).ceil().max(1.0) as usize;
    html! {
        svg.chart viewBox=(format!("0 0 {W} {HEIGHT}")) role="img" aria-label=(title) {
            @for (t, label) in ticks.iter().zip(&labels) {
                line.grid x1=(at(x0)) x2=(at(x1)) y1=(at(y(*t))) y2=(at(y(*t))) {}
                text.tick.axis-value x=(at(x0 - 6.0)) y=(at(y(*t) + 4.0)) text-anchor="end" { (label) }
            }
            @for (i, c) in columns.iter().enumerate() {
                @let mid = x0 + slot * (i as f64 + 0.5);
                g {
                    title { (c.title) }
                    @for (class, from, to) in stacked(&c.parts) {
                        // A part too small to see is a sliver still.
                        @let h = (y(from) - y(to)).max(1.0);
                        rect class=(class) x=(at(mid - bar / 2.0)) y=(at(y(from) - h)) width=(at(bar)) height=(at(h)) {}
                    }
                }
                @let half = width(&c.label) / 2.0;
                @if i % every == 0 && mid + half <= W - 2.0 {
                    text.tick x=(at(mid)) y=(at(axis + 22.0)) text-anchor="middle" { (c.label) }
                }
            }
            line.axis x1=(at(x0)) x2=(at(x1)) y1=(at(axis)) y2=(at(axis)) {}
        }
    }
}

/// Each part that is there, with where it starts and ends on the axis.
fn stacked(parts: &[(&'static str, f64)]) -> Vec<(&'static str, f64, f64)> {
    let mut base = 0.0;
    let mut out = Vec::new();
    for (class, v) in parts {
        if *v > 0.0 {
            out.push((*class, base, base + v));
            base += v;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_step_by_one_two_or_five_and_their_labels_never_repeat() {
        assert_eq!(ticks(3.0, 5, 1.0), vec![0.0, 1.0, 2.0, 3.0]);
        assert_eq!(ticks(17.0, 5, 1.0), vec![0.0, 5.0, 10.0, 15.0, 20.0]);
        assert_eq!(ticks(0.0, 5, 1.0), vec![0.0, 1.0]);
        for max in [
            0.00003, 0.0004, 0.017, 0.023, 0.05, 0.3, 0.99, 1.0, 1.7, 7.3, 42.0, 999.0, 12_345.0,
            2e6,
        ] {
            for count in 1..=5 {
                let t = ticks(max, count, Unit::Usd.least_step());
                assert!(*t.last().unwrap() >= max, "{max}: {t:?}");
                let step = t[1] - t[0];
                let mantissa = step / 10f64.powf(step.log10().floor());
                assert!(
                    [1.0, 2.0, 5.0].iter().any(|m| (m - mantissa).abs() < 1e-6),
                    "{max}: step {step}"
                );
                let top = *t.last().unwrap();
                let labels: Vec<String> = t.iter().map(|v| Unit::Usd.label(*v, top)).collect();
                let mut unique = labels.clone();
                unique.dedup();
                assert_eq!(unique, labels, "{max}");
                assert!(labels.iter().all(|l| l.starts_with('$')), "{labels:?}");
            }
        }
        let top = 0.02;
        let small: Vec<String> = ticks(0.017, 4, 0.0001)
            .iter()
            .map(|v| Unit::Usd.label(*v, top))
            .collect();
        assert_eq!(
            small,
            ["$0.0000", "$0.0050", "$0.0100", "$0.0150", "$0.0200"]
        );
        assert_eq!(Unit::Usd.label(1.5, 2.0), "$1.50");
        assert_eq!(Unit::Count.label(12_000.0, 20_000.0), "12,000");
    }

    #[test]
    fn a_long_label_keeps_its_end_within_its_columns() {
        assert_eq!(tail("/short", 26), "/short");
        let path = "/home/someone/work/clients/acme/very-long-project-name";
        let short = tail(path, 26);
        assert_eq!(cols(&short), 26);
        assert!(short.starts_with('…') && path.ends_with(&short[3..]));
        // Wide characters count two columns.
        let wide = tail("項目項目項目項目項目", 9);
        assert_eq!(wide, "…項目項目");
    }

    #[test]
    fn labels_with_one_end_are_told_apart_by_what_differs() {
        let labels: Vec<String> = (1..=3)
            .map(|i| format!("/home/someone/src/acme/platform-{i}/services/billing-reconciliation"))
            .chain(["/elsewhere".to_owned()])
            .collect();
        let short = tails(&labels, 26);
        assert_eq!(short[0], "…one/src/acme/platform-1/…");
        assert_eq!(short[2], "…one/src/acme/platform-3/…");
        assert_eq!(short[3], "/elsewhere");
        assert!(short.iter().all(|s| cols(s) <= 26), "{short:?}");
        // Labels the same but for their middle, with no `/` to cut at, keep their ends.
        let flat = vec![
            "a".repeat(40) + "1" + &"b".repeat(40),
            "a".repeat(40) + "2" + &"b".repeat(40),
        ];
        assert_eq!(tails(&flat, 10), vec![tail(&flat[0], 10); 2]);
    }
}
