//! `-h` and `--help` as a person reads them: short enough for one screen, options under
//! headings, the exit codes once, at the top.

use crate::support::TestContext;

const HEADINGS: [&str; 7] = [
    "Agent:",
    "Limits:",
    "Plan:",
    "Checks and repair:",
    "Observers:",
    "Output:",
    "Run directory:",
];

const SUBCOMMANDS: [&str; 9] = [
    "run", "status", "list", "stats", "report", "replay", "config", "doctor", "trust",
];

/// `runbook ARGS` on a terminal `columns` wide, its stdout.
fn help(columns: u16, args: &[&str]) -> String {
    let mut ctx = TestContext::new();
    ctx.env("COLUMNS", columns.to_string());
    let out = ctx.run(args);
    out.assert_exit(0);
    out.stdout
}

/// The heading each option is shown under, as (heading, the option's line).
fn sections(text: &str) -> Vec<(String, String)> {
    let mut heading = String::new();
    let mut options = Vec::new();
    for line in text.lines() {
        if !line.starts_with(' ') && line.ends_with(':') {
            heading = line.to_owned();
        } else if line.trim_start().starts_with('-') {
            options.push((heading.clone(), line.trim().to_owned()));
        }
    }
    options
}

fn heading_of(text: &str, flag: &str) -> String {
    sections(text)
        .into_iter()
        .find(|(_, line)| line.split([',', ' ']).any(|word| word == flag))
        .map(|(heading, _)| heading)
        .unwrap_or_else(|| panic!("{flag} is not in:\n{text}"))
}

#[test]
fn run_short_help_fits_one_screen_with_one_line_per_option() {
    for columns in [100, 80] {
        let text = help(columns, &["run", "-h"]);
        let lines = text.lines().count();
        assert!(lines <= 60, "{columns} columns: {lines} lines:\n{text}");
        assert!(text.contains("(see more with '--help')"), "{text}");
    }
    let text = help(100, &["run", "-h"]);
    let continued = text
        .lines()
        .filter(|l| l.starts_with("        ") && !l.trim_start().starts_with('-'))
        .count();
    assert_eq!(continued, 0, "every option's brief fits its line:\n{text}");
    let long = help(100, &["run", "--help"]);
    assert!(long.lines().count() > text.lines().count() * 2, "{long}");
    // The long explanations, defaults and variables are in --help only.
    for said in [
        "[env: RUNBOOK_INACTIVITY_TIMEOUT]",
        "--kill-grace",
        "[default: 3m]",
    ] {
        assert!(long.contains(said), "--help lacks {said}:\n{long}");
        assert!(!text.contains(said), "-h has {said}:\n{text}");
    }
    for sub in SUBCOMMANDS {
        let text = help(100, &[sub, "-h"]);
        let lines = text.lines().count();
        assert!(lines <= 60, "{sub} -h: {lines} lines:\n{text}");
    }
}

#[test]
fn run_help_groups_options_under_headings_in_order() {
    for flag in ["-h", "--help"] {
        let text = help(100, &["run", flag]);
        let shown: Vec<&str> = text.lines().filter(|l| HEADINGS.contains(l)).collect();
        assert_eq!(shown, HEADINGS, "run {flag}:\n{text}");
        for (heading, flags) in [
            (
                "Agent:",
                &[
                    "--agent",
                    "--model",
                    "--permissions",
                    "--agent-cmd",
                    "--cwd",
                ][..],
            ),
            (
                "Limits:",
                &["--timeout", "--max-cost", "--inactivity-timeout"],
            ),
            ("Plan:", &["--plan", "--plan-only", "--yes"]),
            (
                "Checks and repair:",
                &["--check", "--no-checks", "--repair-attempts"],
            ),
            ("Observers:", &["--on-event", "--events-to"]),
            ("Output:", &["--json", "--quiet", "--verbose", "--color"]),
            ("Run directory:", &["--runs-dir", "--name"]),
        ] {
            for f in flags {
                assert_eq!(heading_of(&text, f), heading, "run {flag}: {f}\n{text}");
            }
        }
        let order: Vec<String> = sections(&text).into_iter().map(|(_, l)| l).collect();
        let at = |f: &str| {
            order
                .iter()
                .position(|l| l.split([',', ' ']).any(|w| w == f))
                .unwrap()
        };
        assert_eq!(at("--plan") + 1, at("--plan-only"), "run {flag}:\n{text}");
        assert!(at("--agent") < at("--model"), "run {flag}:\n{text}");
    }
    // Every subcommand puts --json and --color under Output, --runs-dir under Run directory.
    for sub in ["status", "list", "replay", "stats", "config", "doctor"] {
        let text = help(100, &[sub, "-h"]);
        assert_eq!(heading_of(&text, "--json"), "Output:", "{sub}:\n{text}");
        assert_eq!(heading_of(&text, "--color"), "Output:", "{sub}:\n{text}");
        assert_eq!(
            heading_of(&text, "--runs-dir"),
            "Run directory:",
            "{sub}:\n{text}"
        );
    }
}

#[test]
fn the_exit_codes_are_told_once_at_the_top_level_and_in_its_man_page() {
    const TABLE: &str = "127  agent not found";
    assert!(help(100, &["--help"]).contains(TABLE));
    let short = help(100, &["-h"]);
    assert!(!short.contains(TABLE), "{short}");
    assert!(short.lines().count() <= 30, "{short}");
    for sub in SUBCOMMANDS.iter().chain(&["completions"]) {
        for flag in ["-h", "--help"] {
            let text = help(100, &[sub, flag]);
            assert!(!text.contains(TABLE), "{sub} {flag}:\n{text}");
        }
    }
    let man = |name: &str| {
        std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("docs/man/{name}.1")),
        )
        .unwrap()
    };
    assert!(man("runbook").contains("agent not found"));
    assert!(!man("runbook-run").contains("agent not found"));
}
