//! What `runbook config` prints: the files it read, every key's value and the layer that set it,
//! and the agent's variables with where each came from (never their values); as a table or JSON.

use serde::Serialize;

use super::Styles;
use super::table::{Column, Fit, Table};
use crate::config::Config;
use crate::provenance::{EnvVarRecord, Layer, SettingRecord};

/// The configuration as `runbook config --json` prints it.
#[derive(Debug, Serialize)]
pub(crate) struct Report {
    /// The repository root, where `runbook.toml`, `.env` and `.env.local` are looked for.
    root: String,
    /// The configuration files, lowest layer first.
    files: Vec<FileRecord>,
    settings: Vec<SettingRecord>,
    env: Vec<EnvVarRecord>,
    /// The repository's files that were read, and whether what they set may take effect.
    trust: Vec<TrustRow>,
}

/// A repository's file and how it stands in trust.
#[derive(Debug, Serialize)]
pub(crate) struct TrustRow {
    pub path: String,
    /// `not_needed`, `trusted`, `given` (for this run), `changed` or `untrusted`; `unknown` when
    /// the trust record cannot be read.
    pub status: &'static str,
    /// Whether what it sets takes effect.
    pub trusted: bool,
    /// What in it needs trust: its settings, or variables for the agent.
    pub needs: Vec<String>,
    /// How `runbook config` says the status.
    #[serde(skip)]
    pub describe: String,
}

#[derive(Debug, Serialize)]
struct FileRecord {
    layer: Layer,
    path: String,
    found: bool,
}

impl Report {
    pub(crate) fn new(config: &Config, env: Vec<EnvVarRecord>, trust: Vec<TrustRow>) -> Self {
        Self {
            root: config.root.display().to_string(),
            files: config
                .files
                .iter()
                .map(|f| FileRecord {
                    layer: f.layer,
                    path: f.path.display().to_string(),
                    found: f.content.is_some(),
                })
                .collect(),
            settings: config.settings().iter().map(|s| s.record()).collect(),
            env,
            trust,
        }
    }
}

/// The configuration as a table: the files read, every key's value and where it came from,
/// and the agent's variables; fitted to `width` columns (`None`: every value whole).
pub(crate) fn human(
    config: &Config,
    env: &[EnvVarRecord],
    trust: &[TrustRow],
    styles: &Styles,
    width: Option<usize>,
) -> String {
    let mut out = files(config, styles, width);
    out.push('\n');
    if !trust.is_empty() {
        out.push_str(&trusted(trust, styles, width));
        out.push('\n');
    }
    out.push_str(&settings(config, styles, width));
    out.push('\n');
    out.push_str(&variables(env, styles, width));
    out
}

/// The configuration files, lowest layer first, and whether each was found.
fn files(config: &Config, styles: &Styles, width: Option<usize>) -> String {
    let mut out = String::new();
    out.push_str(
        &styles
            .bold
            .apply_to("Files, lowest layer first:")
            .to_string(),
    );
    out.push('\n');
    let mut files = Table::new(&[
        Column::new(""),
        Column::new("").fit(Fit::Path { min: 16 }),
        Column::new(""),
    ])
    .indent(2);
    for f in &config.files {
        let found = if f.content.is_some() { "" } else { "not found" };
        files.row([
            f.layer.as_str().to_owned(),
            f.path.display().to_string(),
            found.to_owned(),
        ]);
    }
    out.push_str(&files.fit(width).text());
    out
}

/// The repository's files, whether each is trusted, and what in it needs trust.
fn trusted(rows: &[TrustRow], styles: &Styles, width: Option<usize>) -> String {
    let mut out = styles
        .bold
        .apply_to(
            "Trust (what a repository's file runs takes effect once trusted: `runbook trust`):",
        )
        .to_string();
    out.push('\n');
    let mut table = Table::new(&[
        Column::new("").fit(Fit::Path { min: 16 }),
        Column::new("").fit(Fit::Cut { min: 16 }),
        Column::new("").fit(Fit::Wrap { min: 12 }),
    ])
    .indent(2);
    for r in rows {
        let needs = if r.needs.is_empty() {
            String::new()
        } else {
            format!("sets {}", r.needs.join(", "))
        };
        table.row([r.path.clone(), r.describe.clone(), needs]);
    }
    for (row, line) in rows.iter().zip(table.fit(width).rows) {
        let style = if row.trusted {
            &styles.dim
        } else {
            &styles.warn
        };
        out.push_str(&format!("{}\n", style.apply_to(line)));
    }
    out
}

/// Every key with its value and the layer that set it; defaults dim, the rest highlighted.
fn settings(config: &Config, styles: &Styles, width: Option<usize>) -> String {
    let mut out = String::new();
    let mut table = Table::new(&[
        Column::new("KEY"),
        Column::new("VALUE").fit(Fit::Path { min: 16 }),
        Column::new("FROM").fit(Fit::Path { min: 16 }),
    ]);
    for s in config.settings() {
        let value = s
            .value
            .as_ref()
            .map_or_else(|| "-".to_owned(), |v| v.to_toml().to_string());
        table.row([s.slot.name(), value, s.origin.to_string()]);
    }
    let fitted = table.fit(width);
    for (i, line) in fitted.header.iter().chain(&fitted.rows).enumerate() {
        let style = match i {
            0 => &styles.bold,
            i if config.settings()[i - 1].origin.layer == Layer::Default => &styles.dim,
            _ => &styles.accent,
        };
        out.push_str(&style.apply_to(line).to_string());
        out.push('\n');
    }
    out
}

/// The agent's variables and where each came from, never their values.
fn variables(env: &[EnvVarRecord], styles: &Styles, width: Option<usize>) -> String {
    if env.is_empty() {
        return "Agent environment: nothing set ([env], .env, .env.local, --env-file).\n"
            .to_owned();
    }
    let mut out = String::new();
    out.push_str(
        &styles
            .bold
            .apply_to("Agent environment (values are never shown):")
            .to_string(),
    );
    out.push('\n');
    let mut table = Table::new(&[
        Column::new("NAME"),
        Column::new("FROM").fit(Fit::Wrap { min: 16 }),
    ]);
    for v in env {
        let mut from = v.layer.as_str().to_owned();
        if let Some(file) = &v.file {
            from.push_str(&format!(" {file}"));
        }
        if let Some(line) = v.line {
            from.push_str(&format!(":{line}"));
        }
        table.row([v.name.clone(), from]);
    }
    out.push_str(&table.fit(width).text());
    out
}
