//! One layout for every line a person reads: every subcommand's human output, in terminals 60, 80
//! and 200 columns wide, is broken between words (never mid-word, never cut), a path whole on a
//! row of its own; piped, the same words are there, one line per fact.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::support::pty::{Pty, Screen};
use crate::support::{self, TestContext};

const LIMIT: Duration = Duration::from_secs(120);
const WIDTHS: [u16; 3] = [60, 80, 200];

const STEP_START: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_test","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_test","snapshot":"5743","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":1795319488778,"sessionID":"ses_test","part":{"id":"prt_2","messageID":"msg_1","sessionID":"ses_test","type":"text","text":"All done, the configuration loader now reads every file it was given.","time":{"start":1795319488595,"end":1795319488772}}}"#;
const FINISH: &str = r#"{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_test","part":{"id":"prt_5","reason":"stop","snapshot":"5743","messageID":"msg_1","sessionID":"ses_test","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.05}}"#;

/// Subcommands whose output on stdout is for a program, not a person.
const MACHINE: [&str; 1] = ["completions"];

/// The repository, runs and task files every case works on.
struct World {
    ctx: TestContext,
    /// A task file whose batch holds tasks back for its budget.
    budget_tasks: PathBuf,
    /// A task file whose tasks leave changes and worktrees behind.
    edit_tasks: PathBuf,
    /// A directory whose runbook.toml is not trusted.
    untrusted: PathBuf,
}

fn git(dir: &Path, args: &[&str]) {
    let quoted: Vec<String> = args.iter().map(|a| format!("'{a}'")).collect();
    support::sh(dir, &format!("git {}", quoted.join(" ")));
}

impl World {
    fn new() -> Self {
        let mut ctx = TestContext::new();
        let dir = ctx.root().to_path_buf();
        for d in [&ctx.work, &dir.join("untrusted")] {
            std::fs::create_dir_all(d).unwrap();
            git(d, &["init", "-q", "-b", "main"]);
            std::fs::write(d.join("README"), "hello\n").unwrap();
            git(d, &["add", "."]);
            git(d, &["commit", "-q", "-m", "start"]);
        }
        std::fs::write(
            dir.join("ok.ndjson"),
            [STEP_START, TEXT, FINISH].join("\n") + "\n",
        )
        .unwrap();
        let agent = ctx.agent_script(
            "agent.sh",
            &format!(
                "for last; do :; done\ncase \"$last\" in\n  edit:*) n=${{last#edit:}}; echo \"$n\" > \"$n.txt\";;\nesac\nFAKE_AGENT_SCENARIO={}/ok.ndjson exec {} \"$@\"",
                dir.display(),
                support::fake_agent_bin().display()
            ),
        );
        let defaults = format!(
            "[defaults]\ninactivity_timeout = \"5s\"\nkill_grace = \"1s\"\n[defaults.agents.opencode]\nbin = \"{agent}\"\n\n"
        );
        let budget: String = (1..=4)
            .map(|n| format!("[[task]]\nid = \"t{n}\"\nprompt = \"ok\"\nmax_cost = 0.1\n\n"))
            .collect();
        let budget_tasks = dir.join("budget-tasks.toml");
        std::fs::write(&budget_tasks, format!("{defaults}{budget}")).unwrap();
        let edits = "[[task]]\nid = \"edit-the-configuration-loader\"\nprompt = \"edit:a\"\n\n[[task]]\nid = \"edit-the-command-line-parser\"\nprompt = \"edit:b\"\n";
        let edit_tasks = dir.join("edit-tasks.toml");
        std::fs::write(&edit_tasks, format!("{defaults}{edits}")).unwrap();
        let untrusted = dir.join("untrusted");
        std::fs::write(
            untrusted.join("runbook.toml"),
            "[checks]\ntest = \"cargo test --workspace --all-features --no-fail-fast -- --include-ignored --test-threads 1\"\n",
        )
        .unwrap();
        for (name, var) in [
            ("opencode", "RUNBOOK_OPENCODE_BIN"),
            ("claude", "RUNBOOK_CLAUDE_BIN"),
            ("codex", "RUNBOOK_CODEX_BIN"),
        ] {
            let missing = dir.join(format!("no-{name}"));
            ctx.env(var, missing.display().to_string());
        }
        let world = Self {
            ctx,
            budget_tasks,
            edit_tasks,
            untrusted,
        };
        // Runs for list, stats, status and report to show.
        for _ in 0..3 {
            world
                .ctx
                .run_fake(&[STEP_START, TEXT, FINISH].join("\n"), &[]);
        }
        world
    }
}

/// What a case needs done before it runs, and what it types.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// Runs to its end; the same command piped must print the same words.
    Same,
    /// Runs to its end; each run says something new (ids, paths), so it is not compared.
    Own,
    /// A batch is run first, leaving worktrees with changes for `batch clean`.
    AfterBatch,
    /// Asks a question: waits for the text, then types the keys.
    Asks(&'static str, &'static str),
}

struct Case {
    name: &'static str,
    args: Vec<String>,
    kind: Kind,
    /// The directory it runs in, if not the work dir.
    dir: Option<PathBuf>,
    /// Its stdout is for a program: only stderr is looked at.
    quiet_stdout: bool,
    /// The header of a table column that is an abbreviation by design (`list`'s PROMPT): a word
    /// under it may end in `…`. No other word may.
    abbreviates: Option<&'static str>,
}

fn case(name: &'static str, args: &[&str], kind: Kind) -> Case {
    Case {
        name,
        args: args.iter().map(|a| (*a).to_owned()).collect(),
        kind,
        dir: None,
        quiet_stdout: false,
        abbreviates: None,
    }
}

/// An ACP agent that asks permission for a long command line, then ends its turn.
fn asking_agent(world: &World) -> String {
    let command = "cargo test --workspace --all-features --no-fail-fast -- --include-ignored";
    let body =
        crate::acp_scripted::asks_once(command, &["allow_once", "allow_always", "reject_once"]);
    crate::acp_scripted::acp_agent(&world.ctx, "asking.sh", &body)
}

fn cases(world: &World) -> Vec<Case> {
    let fake = support::fake_agent_bin().display().to_string();
    let budget = world.budget_tasks.display().to_string();
    let replayed = support::fixtures()
        .join("opencode/d_tool_error.stdout.ndjson")
        .display()
        .to_string();
    let asking = asking_agent(world);
    let mut trust = case(
        "run",
        &["run", "--agent-bin", &fake, "fix it"],
        Kind::Asks("[y/N]", "n\r"),
    );
    trust.dir = Some(world.untrusted.clone());
    let mut fleet = case("fleet", &["fleet", "slurm", &budget], Kind::Same);
    fleet.quiet_stdout = true;
    // Markdown for a pull request, whole on stdout: its human lines are on stderr.
    let mut report = case("report", &["report"], Kind::Same);
    report.quiet_stdout = true;
    let mut list = case("list", &["list"], Kind::Same);
    list.abbreviates = Some("PROMPT");
    let mut completions = case("completions", &["completions", "bash"], Kind::Same);
    completions.quiet_stdout = true;
    vec![
        case(
            "run",
            &["run", "--agent-bin", &fake, "do the thing"],
            Kind::Own,
        ),
        trust,
        case(
            "run",
            &[
                "run",
                "--acp-cmd",
                &asking,
                "--inactivity-timeout",
                "1m",
                "do it",
            ],
            Kind::Asks("allow once", "y"),
        ),
        case("status", &["status"], Kind::Same),
        case(
            "batch",
            &["batch", &budget, "-j", "4", "--max-cost", "0.22"],
            Kind::Own,
        ),
        case("batch", &["batch", "clean"], Kind::AfterBatch),
        list,
        case("stats", &["stats"], Kind::Same),
        report,
        fleet,
        case("upload", &["upload", "--all"], Kind::Same),
        case("replay", &["replay", "--instant", &replayed], Kind::Same),
        case("demo", &["demo", "--fast"], Kind::Own),
        case("config", &["config"], Kind::Same),
        case("doctor", &["doctor"], Kind::Same),
        case("trust", &["trust", "--show"], Kind::Same),
        case("trust", &["trust", "../untrusted/runbook.toml"], Kind::Own),
        completions,
    ]
}

/// The subcommands `runbook --help` lists (`help` aside).
fn subcommands(ctx: &TestContext) -> Vec<String> {
    let help = ctx.run(&["--help"]);
    help.assert_exit(0);
    help.stdout
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect()
}

/// The command of a case: runbook in the case's directory, its stdout thrown away when it is for
/// a program.
fn command(world: &World, case: &Case) -> Command {
    let args: Vec<&str> = case.args.iter().map(String::as_str).collect();
    let mut cmd = world.ctx.runbook(&args);
    if let Some(dir) = &case.dir {
        cmd.current_dir(dir);
    }
    cmd.env("TMPDIR", world.ctx.root());
    if !case.quiet_stdout {
        return cmd;
    }
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg("exec \"$@\" >/dev/null")
        .arg("sh")
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .current_dir(cmd.get_current_dir().unwrap())
        .env_clear();
    for (key, value) in cmd.get_envs() {
        if let Some(value) = value {
            sh.env(key, value);
        }
    }
    sh
}

fn before(world: &World, case: &Case) {
    if case.kind == Kind::AfterBatch {
        let edits = world.edit_tasks.display().to_string();
        let out = world.ctx.run(&["batch", &edits, "--keep", "all"]);
        assert!(out.code().is_some(), "{}", out.stderr);
    }
}

/// Words as compared: digits (times, ages, sizes) do not count.
fn normal(word: &str) -> String {
    word.chars()
        .map(|c| if c.is_ascii_digit() { '0' } else { c })
        .collect()
}

/// The words under the column headed `header` (rows after the header, starting at or past its
/// first column) that end in `…`: abbreviations the table means.
fn abbreviations(rows: &[String], header: Option<&str>) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let Some(header) = header else { return out };
    let Some((h, at)) = rows.iter().enumerate().find_map(|(r, row)| {
        let at = row.find(&format!(" {header}"))?;
        Some((r, row[..=at].chars().count()))
    }) else {
        return out;
    };
    for row in &rows[h + 1..] {
        let mut col = 0;
        for piece in row.split(' ') {
            if col >= at && piece.ends_with('…') {
                out.insert(normal(piece));
            }
            col += piece.chars().count() + 1;
        }
    }
    out
}

/// What is wrong with the screen of a case: a word split across rows, a word cut short (but an
/// abbreviation under the column `abbreviates` heads), and when the screen is `wide` enough for
/// every table column, a word of the piped output not shown (narrower, a table leaves its least
/// needed columns out, and says so).
fn faults(
    screen: &Screen,
    piped: Option<&str>,
    abbreviates: Option<&str>,
    wide: bool,
) -> Vec<String> {
    let mut out = Vec::new();
    let rows = screen.rows();
    for (r, row) in rows.iter().enumerate() {
        let Some(next) = rows.get(r + 1) else { break };
        // A row the terminal wrapped with a word running on: only a word wider than the window,
        // alone on its rows from the first column, may.
        let runs_on = screen.is_wrapped(r) && !next.starts_with(' ') && !next.is_empty();
        let alone = !row.contains(' ');
        if runs_on && !alone {
            out.push(format!("a word split across rows:\n  {row}\n  {next}"));
        }
    }
    let joined = screen.joined();
    let shown: BTreeSet<String> = joined.split_whitespace().map(normal).collect();
    let said: BTreeSet<String> = piped
        .unwrap_or_default()
        .split_whitespace()
        .map(normal)
        .collect();
    let meant = abbreviations(rows, abbreviates);
    for word in &shown {
        let cut = word.ends_with('…') && word.chars().count() > 1;
        if cut && !said.contains(word) && !meant.contains(word) {
            out.push(format!("a word cut short: {word:?}"));
        }
    }
    if piped.is_some() && wide {
        for word in said.difference(&shown) {
            out.push(format!("a word not shown: {word:?}"));
        }
    }
    out
}

/// Runs a case in a terminal `cols` wide; the screen.
fn on_terminal(world: &World, case: &Case, cols: u16) -> Screen {
    before(world, case);
    let mut cmd = command(world, case);
    cmd.env("TERM", "xterm-256color");
    let mut pty = Pty::spawn(cmd, cols);
    if let Kind::Asks(text, keys) = case.kind {
        pty.wait_for(text);
        pty.send(keys);
    }
    pty.finish().1
}

#[test]
fn every_subcommand_breaks_its_lines_between_words_at_60_80_and_200_columns() {
    let world = World::new();
    let cases = cases(&world);
    for name in subcommands(&world.ctx) {
        assert!(
            cases.iter().any(|c| c.name == name),
            "`runbook {name}` has no case here: add one"
        );
    }
    let mut failed = Vec::new();
    for case in cases.iter().filter(|c| !MACHINE.contains(&c.name)) {
        // Piped, laid out as wide as the widest terminal: the words that terminal must show.
        let piped = (case.kind == Kind::Same).then(|| {
            let mut cmd = command(&world, case);
            cmd.env("COLUMNS", WIDTHS[2].to_string());
            let out = support::run(&mut cmd, LIMIT);
            format!("{}\n{}", out.stdout, out.stderr)
        });
        for cols in WIDTHS {
            let screen = on_terminal(&world, case, cols);
            let wide = cols == WIDTHS[2];
            for fault in faults(&screen, piped.as_deref(), case.abbreviates, wide) {
                failed.push(format!(
                    "`runbook {}` at {cols} columns: {fault}",
                    case.args.join(" ")
                ));
            }
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}
