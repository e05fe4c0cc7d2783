//! Files generated from the code and committed (completion scripts, man pages, JSON Schemas),
//! checked for staleness by a test. Refresh them with `RUNBOOK_BLESS=1 cargo test generated_files`.
#![allow(
    clippy::disallowed_methods,
    reason = "writes the generated files of the repository when blessed"
)]

mod reference;

use clap::CommandFactory as _;

use crate::cli::Cli;
use crate::commands::completions::{BIN, SHELLS, man, script};

/// Every generated file, by its path in the repository.
fn generated_files() -> Vec<(String, Vec<u8>)> {
    let mut files = Vec::new();
    for shell in SHELLS {
        files.push((
            format!(
                "completions/{}",
                clap_complete::Generator::file_name(&shell, BIN)
            ),
            script(shell),
        ));
    }
    // The version alone: the commit `--version` names changes with every commit.
    let cmd = Cli::command().version(env!("CARGO_PKG_VERSION"));
    files.push((format!("docs/man/{BIN}.1"), man(cmd.clone())));
    for sub in cmd.get_subcommands() {
        let name = format!("{BIN}-{}", sub.get_name());
        files.push((format!("docs/man/{name}.1"), man(sub.clone().name(name))));
    }
    files.push((
        "docs/events.schema.json".to_owned(),
        schema::<crate::event::Event>(),
    ));
    files.push((
        "docs/receipt.schema.json".to_owned(),
        schema::<crate::receipt::Receipt>(),
    ));
    files.push((
        "docs/batch.schema.json".to_owned(),
        schema::<crate::commands::batch::record::BatchRecord>(),
    ));
    files.push((
        "docs/stats.schema.json".to_owned(),
        schema::<crate::overview::Figures>(),
    ));
    files.push(("docs/prices.md".to_owned(), prices()));
    files
}

/// The shipped price table, for people.
fn prices() -> Vec<u8> {
    let mut text = String::from(
        "# Model prices\n\n\
         Codex reports tokens but no cost, so runbook estimates it from this table, which ships \
         with runbook (list prices in US dollars per million tokens). Costs computed from it are \
         marked `estimated` in events and receipts. Claude Code and OpenCode report their own \
         costs, which runbook uses as they are (Claude Code's steps are estimated from this table \
         while the run goes, then replaced by its reported total).\n\n\
         A model id matches an entry when it is the entry's id, possibly with a provider prefix \
         (`openai/gpt-5`), a context tag (`claude-opus-4-8[1m]`) or a dated suffix \
         (`claude-sonnet-4-5-20250929`: a `-` and at least four digits; `claude-opus-5-7` is not a \
         dated `claude-opus-5`). Your own prices are looked up first: in any configuration file, \
         `[prices.\"MODEL\"]` with `input`, `cached_input`, `output` and optionally \
         `cache_write`, in the same units (see docs/configuration.md).\n\n\
         ## A model that is not in the table\n\n\
         runbook says so when the run starts: one warning line, and a `model.announced` event \
         whose `price` is `conservative` or `unknown` (the receipt's `warnings` keep the line). \
         When the model's provider is known (`claude-…` is Anthropic, `gpt-…` and `o1`…`o9` are \
         OpenAI, or a provider prefix), each kind of token is priced at the highest price any \
         model of that provider in this table charges, so the estimate is never below the real \
         cost: `--max-cost` then stops the run mid-run on it, and its steps' `cost_source` is \
         `conservative`. Once the agent reports what the run really cost (Claude Code's \
         `result`), that replaces the estimate and the receipt's `cost.source` says `reported`. \
         A model of an unknown provider has an unknown cost, never zero.\n\n\
         ## Where the prices were checked\n\n\
         | provider | checked | source |\n\
         | --- | --- | --- |\n",
    );
    for c in crate::prices::CHECKED {
        text.push_str(&format!("| {} | {} | {} |\n", c.provider, c.date, c.source));
    }
    text.push_str(
        "\nThis page is generated from `src/prices.rs`.\n\n\
         | model | provider | input | cached input | output | cache write |\n\
         | --- | --- | --- | --- | --- | --- |\n",
    );
    for (id, p) in crate::prices::SHIPPED {
        let write = p
            .cache_write
            .map_or_else(|| "–".to_owned(), |w| format!("{w}"));
        let provider = crate::prices::provider_of(id).unwrap_or("–");
        text.push_str(&format!(
            "| `{id}` | {provider} | {} | {} | {} | {write} |\n",
            p.input, p.cached_input, p.output
        ));
    }
    text.into_bytes()
}

fn schema<T: schemars::JsonSchema>() -> Vec<u8> {
    let mut text =
        serde_json::to_string_pretty(&schemars::schema_for!(T)).expect("a schema serializes");
    text.push('\n');
    text.into_bytes()
}

/// The parts of hand-written docs made from the code: a file, the name of its region (between
/// `<!-- generated: NAME -->` and `<!-- end: NAME -->`) and what the region holds.
fn generated_regions() -> Vec<(&'static str, &'static str, String)> {
    vec![
        (
            "docs/configuration.md",
            "run options",
            reference::run_options(),
        ),
        ("docs/configuration.md", "keys", reference::config_keys()),
    ]
}

/// `text` with its region `name` holding `content`; `None` when the region's marks are not
/// there, once each, in order.
fn with_region(text: &str, name: &str, content: &str) -> Option<String> {
    let (start, end) = (
        format!("<!-- generated: {name} -->\n"),
        format!("<!-- end: {name} -->"),
    );
    if text.matches(&start).count() != 1 || text.matches(&end).count() != 1 {
        return None;
    }
    let from = text.find(&start)? + start.len();
    let to = text.find(&end)?;
    (from <= to).then(|| format!("{}{content}{}", &text[..from], &text[to..]))
}

#[test]
fn generated_regions_of_the_docs_are_current() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("RUNBOOK_BLESS").is_some();
    let mut stale = Vec::new();
    for (path, name, content) in generated_regions() {
        let file = root.join(path);
        let text = std::fs::read_to_string(&file).expect("a doc");
        let new = with_region(&text, name, &content)
            .unwrap_or_else(|| panic!("{path} must hold `{name}`'s generated region once"));
        if new == text {
            continue;
        }
        if bless {
            std::fs::write(&file, new).expect("write a doc");
        } else {
            stale.push(format!("{path} ({name})"));
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated docs {stale:?}: run `RUNBOOK_BLESS=1 cargo test generated_`"
    );
}

#[test]
fn a_region_is_found_once_and_in_order_or_not_at_all() {
    let doc = "a\n<!-- generated: x -->\nold\n<!-- end: x -->\nb\n";
    assert_eq!(
        with_region(doc, "x", "new\n").as_deref(),
        Some("a\n<!-- generated: x -->\nnew\n<!-- end: x -->\nb\n")
    );
    assert_eq!(
        with_region("<!-- end: x -->\n<!-- generated: x -->\n", "x", ""),
        None
    );
    assert_eq!(with_region(&format!("{doc}{doc}"), "x", ""), None);
    assert_eq!(with_region("nothing", "x", ""), None);
}

#[test]
fn generated_files_are_current() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let bless = std::env::var_os("RUNBOOK_BLESS").is_some();
    let mut stale = Vec::new();
    for (path, content) in generated_files() {
        let file = root.join(&path);
        if bless {
            std::fs::create_dir_all(file.parent().expect("a parent dir")).expect("mkdir");
            std::fs::write(&file, &content).expect("write a generated file");
        } else if std::fs::read(&file).ok().as_deref() != Some(&content[..]) {
            stale.push(path);
        }
    }
    assert!(
        stale.is_empty(),
        "stale generated files {stale:?}: run `RUNBOOK_BLESS=1 cargo test generated_files`"
    );
}
