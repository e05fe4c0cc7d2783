//! Fault matrix: the run directory fails under the run (a full disk, a filesystem turned
//! read-only), and who may read what it holds. A run that lost part of its record is never
//! `completed`: it is stopped, ends as `storage_error` with exit 6, and says which file failed.
//!
//! The storage faults mount a small tmpfs, which needs root. Without root they say so loudly and
//! pass; in CI (which runs as root) a missing mount is a failure.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use runbook::event::{EventKind, Outcome};

use crate::support::{TestContext, finish, parse_events, run};

const LIMIT: Duration = Duration::from_secs(30);

/// An agent that writes 1 KB text events as fast as it can, forever, recording its pid.
fn endless_writer(ctx: &TestContext) -> String {
    ctx.recorded_agent_script(
        "endless-writer",
        r#"pad=$(printf '%01000d' 0)
i=0
while :; do
  echo "{\"type\":\"text\",\"text\":\"$i $pad\"}"
  i=$((i+1))
done"#,
    )
}

/// A test context whose runs directory is on a tmpfs of `size` (see [`Tmpfs::mount`]).
fn on_small_disk(size: &str) -> Option<(TestContext, Tmpfs)> {
    let mut ctx = TestContext::new();
    let disk = Tmpfs::mount(ctx.root(), size)?;
    ctx.runs = disk.path.join("runs");
    std::fs::create_dir(&ctx.runs).expect("create the runs dir");
    ctx.env("RUNBOOK_RUNS_DIR", ctx.runs.display().to_string());
    Some((ctx, disk))
}

/// A tmpfs of `size` mounted for the test, unmounted when dropped.
struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    /// `None` (after saying why) where mounting is not possible: not root, outside CI.
    fn mount(under: &Path, size: &str) -> Option<Self> {
        let path = under.join("small-disk");
        std::fs::create_dir_all(&path).expect("create the mount point");
        let mounted = nix::unistd::geteuid().is_root()
            && Command::new("mount")
                .args(["-t", "tmpfs", "-o", &format!("size={size}"), "tmpfs"])
                .arg(&path)
                .status()
                .is_ok_and(|s| s.success());
        if mounted {
            return Some(Self { path });
        }
        assert!(
            std::env::var_os("CI").is_none(),
            "storage faults need root to mount a tmpfs, and CI must run them"
        );
        #[expect(clippy::print_stderr, reason = "a skipped test must say so loudly")]
        {
            eprintln!("SKIPPED: mounting a tmpfs needs root; storage faults not tried");
        }
        None
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// The event log holds whole events only, each a line.
#[track_caller]
fn assert_whole_lines(events_file: &Path) -> Vec<runbook::event::Event> {
    let text = std::fs::read_to_string(events_file).expect("read events.ndjson");
    assert!(
        text.is_empty() || text.ends_with('\n'),
        "events.ndjson ends mid-line: …{:?}",
        &text[text.len().saturating_sub(80)..]
    );
    parse_events(&text)
}

#[test]
fn a_full_disk_stops_the_agent_and_ends_the_run_as_storage_error() {
    let Some((ctx, _disk)) = on_small_disk("1m") else {
        return;
    };
    let agent = endless_writer(&ctx);
    let out = ctx.run_agent_cmd(&agent, &["--quiet", "fill the disk"]);

    out.assert_exit(6);
    out.assert_stderr_has("No space left on device");
    assert!(!out.stderr.contains("completed"), "{}", out.stderr);
    // The receipt still made it, thanks to the space set aside for it.
    let receipt = ctx.ended_as(Outcome::StorageError);
    assert!(
        receipt.message.contains("cannot write") && receipt.message.contains(".log")
            || receipt.message.contains("events.ndjson"),
        "the receipt names the file: {}",
        receipt.message
    );
    let dir = ctx.run_dir();
    assert_whole_lines(&dir.join("events.ndjson"));
    assert!(
        !dir.join("result.json.tmp").exists(),
        "a temporary receipt was left"
    );
    assert!(
        !dir.join(".receipt-reserve").exists(),
        "the reserve was left"
    );
    ctx.assert_agent_gone();
}

/// Runs a slow agent with `--json` on a disk that something else fills mid-run; with
/// `take_reserve`, the space runbook set aside for the receipt is taken too.
fn disk_filled_mid_run(
    take_reserve: bool,
) -> Option<(TestContext, crate::support::Outcome, Tmpfs)> {
    let (ctx, disk) = on_small_disk("16m")?;
    let agent = ctx.recorded_agent_script(
        "slow-writer",
        r#"while :; do echo '{"type":"text","text":"still working"}'; sleep 0.05; done"#,
    );
    let mut cmd = ctx.runbook(&["run", "--json", "--agent-cmd", &agent, "keep going"]);
    let child = ctx.spawn_until(&mut cmd, "text");
    if take_reserve {
        std::fs::remove_file(ctx.run_dir().join(".receipt-reserve")).expect("a reserve");
    }
    fill(&disk.path);
    Some((ctx, finish(child, LIMIT), disk))
}

/// Takes every free block and inode of the filesystem at `dir`.
fn fill(dir: &Path) {
    let mut n = 0;
    while std::fs::write(dir.join(format!("filler-{n}")), [0u8; 4096]).is_ok() {
        n += 1;
    }
    let mut big = std::fs::File::create(dir.join("filler-0")).expect("reuse a filler");
    while std::io::Write::write_all(&mut big, &[0u8; 65536]).is_ok() {}
}

#[test]
fn a_disk_filled_mid_run_stops_it_with_one_line_and_a_storage_error_receipt() {
    let Some((ctx, out, _disk)) = disk_filled_mid_run(false) else {
        return;
    };
    out.assert_exit(6);
    // runbook's one-line account on stderr: which file failed, and why.
    let stderr: Vec<&str> = out.stderr.lines().collect();
    assert_eq!(stderr.len(), 1, "{}", out.stderr);
    assert!(
        stderr[0].starts_with("error: cannot write ")
            && stderr[0].contains(&*ctx.runs.to_string_lossy())
            && stderr[0].contains("No space left on device"),
        "{}",
        stderr[0]
    );
    // `--json` tells programs too: the fault as an event, and a receipt that is not `completed`.
    let last: serde_json::Value =
        serde_json::from_str(out.stdout.lines().last().expect("a last line")).expect("JSON");
    assert_eq!(last["type"], "receipt");
    assert_eq!(last["outcome"], "storage_error");
    assert!(out.stdout.contains(r#""type":"storage.failed""#));
    ctx.ended_as(Outcome::StorageError);
    assert_whole_lines(&ctx.run_dir().join("events.ndjson"));
    ctx.assert_agent_gone();
}

#[test]
fn a_receipt_that_cannot_be_written_is_said_and_leaves_nothing_half_written() {
    let Some((ctx, out, _disk)) = disk_filled_mid_run(true) else {
        return;
    };
    out.assert_exit(6);
    out.assert_stderr_has("result.json: No space left on device");
    let dir = ctx.run_dir();
    assert!(!dir.join("result.json").exists());
    assert!(!dir.join("result.json.tmp").exists());
    let logged = assert_whole_lines(&dir.join("events.ndjson"));
    assert!(
        logged
            .iter()
            .all(|e| !matches!(e.kind, EventKind::RunFinished { .. })),
        "a full disk took a run.finished line"
    );
    ctx.assert_agent_gone();
}

#[test]
fn a_full_disk_after_the_agent_finished_is_still_not_completed() {
    let Some((ctx, _disk)) = on_small_disk("1m") else {
        return;
    };
    // Three megabytes at once, then the agent's final word and a clean exit.
    let agent = ctx.recorded_agent_script(
        "burst",
        r#"pad=$(printf '%01000d' 0)
i=0
while [ $i -lt 3000 ]; do echo "{\"type\":\"text\",\"text\":\"$pad\"}"; i=$((i+1)); done
echo '{"type":"agent.result","ok":true}'"#,
    );
    let out = ctx.run_agent_cmd(&agent, &["--quiet", "burst"]);
    out.assert_exit(6);
    assert!(!out.stderr.contains("✓"), "{}", out.stderr);
    ctx.ended_as(Outcome::StorageError);
}

#[test]
fn run_directories_are_private_whatever_the_umask() {
    let ctx = TestContext::new();
    let agent = ctx.agent_script(
        "done",
        r#"echo '{"type":"text","text":"hi"}'
echo '{"type":"agent.result","ok":true}'"#,
    );
    let runbook = ctx.runbook(&["run", "--agent-cmd", &agent, "say hi"]);
    let mut sh = Command::new("sh");
    sh.args(["-c", r#"umask 000; exec "$@""#, "sh"])
        .arg(runbook.get_program())
        .args(runbook.get_args())
        .env_clear()
        .envs(runbook.get_envs().filter_map(|(k, v)| Some((k, v?))))
        .current_dir(&ctx.work)
        .stdin(Stdio::null());
    run(&mut sh, LIMIT).assert_exit(0);

    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    let dir = ctx.run_dir();
    assert_eq!(mode(&dir), 0o700, "the run directory");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        assert_eq!(mode(&path), 0o600, "{}", path.display());
        files += 1;
    }
    assert!(files >= 4, "events, logs and the receipt: {files}");
}

/// Reads runbook's `--json` lines until the agent's first text, then closes the pipe.
fn read_until_the_agent_speaks(child: &mut std::process::Child) {
    let mut stdout = std::io::BufReader::new(child.stdout.take().expect("piped stdout"));
    let mut line = String::new();
    while !line.contains(r#""type":"text""#) {
        line.clear();
        std::io::BufRead::read_line(&mut stdout, &mut line).expect("read a line");
        assert!(!line.is_empty(), "runbook ended before the agent spoke");
    }
}

#[test]
fn closing_json_output_stops_the_agent_and_ends_the_run_interrupted_quietly() {
    let ctx = TestContext::new();
    let agent = endless_writer(&ctx);
    let mut child = ctx
        .runbook(&["run", "--json", "--agent-cmd", &agent, "talk forever"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn runbook");
    // `| head`: the first of the agent's lines read (it has recorded its pid by then), then the
    // pipe closed.
    read_until_the_agent_speaks(&mut child);
    let out = finish(child, LIMIT);

    out.assert_exit(130);
    assert_eq!(out.stderr, "", "no error spew for a closed pipe");
    ctx.ended_as(Outcome::Interrupted);
    ctx.assert_agent_gone();
}

#[test]
fn closing_json_output_of_a_silent_agent_still_stops_it() {
    let ctx = TestContext::new();
    let agent = ctx.recorded_agent_script(
        "thinker",
        "echo '{\"type\":\"text\",\"text\":\"thinking\"}'\nexec sleep 600",
    );
    let mut child = ctx
        .runbook(&[
            "run",
            "--json",
            "--inactivity-timeout",
            "10m",
            "--agent-cmd",
            &agent,
            "think",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn runbook");
    read_until_the_agent_speaks(&mut child);
    // Well before the agent's ten minutes of sleep, or `finish` fails the test.
    let out = finish(child, LIMIT);
    out.assert_exit(130);
    ctx.ended_as(Outcome::Interrupted);
    ctx.assert_agent_gone();
}
