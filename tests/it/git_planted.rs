//! What a repository, or an agent in it, can make git run: a program planted in every place a
//! configuration names one (clean, smudge and process filters through `.gitattributes` and
//! `info/attributes`, fsmonitor, every hook in `.git/hooks` and `core.hooksPath`, an external
//! diff, a diff driver's command and textconv, pagers, an alias, a credential helper,
//! `core.sshCommand`, askpass, an editor, gpg with `log.showSignature` and a signed commit, and
//! a filter in a file `include.path` pulls in), each writing a marker when run. None of
//! runbook's git commands (a run's start and end, a batch task's worktree made, committed and
//! removed, `batch clean`) runs one, and what they record still counts the agent's work.

use std::path::{Path, PathBuf};
use std::process::Command;

use runbook::event::Outcome;

use crate::support::{self, TestContext};

const STEP_START: &str = r#"{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_test","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_test","snapshot":"5743","type":"step-start"}}"#;
const TEXT: &str = r#"{"type":"text","timestamp":1795319488778,"sessionID":"ses_test","part":{"id":"prt_2","messageID":"msg_1","sessionID":"ses_test","type":"text","text":"All done.","time":{"start":1795319488595,"end":1795319488772}}}"#;
const FINAL: &str = r#"{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_test","part":{"id":"prt_5","reason":"stop","snapshot":"5743","messageID":"msg_1","sessionID":"ses_test","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.001}}"#;

/// Every hook git knows of, planted in `.git/hooks` and in the `core.hooksPath` directory.
const HOOKS: &str = "applypatch-msg pre-applypatch post-applypatch pre-commit pre-merge-commit prepare-commit-msg commit-msg post-commit pre-rebase post-checkout post-merge pre-push pre-receive update proc-receive post-receive post-update reference-transaction push-to-checkout pre-auto-gc post-rewrite sendemail-validate fsmonitor-watchman p4-changelist p4-prepare-changelist p4-post-changelist p4-pre-submit post-index-change";

/// `sh plant.sh GIT_DIR CONFIG MARKERS`: plants a program of every kind for the repository of
/// `GIT_DIR` (its hooks, its `info/attributes`, the work tree's `.gitattributes` in the current
/// directory), named in the configuration file `CONFIG`; each writes `MARKERS/<kind>` when run.
const PLANT: &str = r#"set -e
G="$1"; C="$2"; M="$3"; E="$G/evil"
mkdir -p "$E/hooks" "$G/hooks" "$G/info"
mk() { printf '#!/bin/sh\ntouch "%s/%s"\n%s\n' "$M" "$1" "$2" > "$E/$1"; chmod +x "$E/$1"; }
mk clean 'cat'; mk smudge 'cat'; mk process 'exit 1'; mk info-clean 'cat'; mk include-clean 'cat'
mk fsmonitor 'exit 1'; mk ext-diff 'exit 0'; mk diff-command 'exit 0'; mk textconv 'cat "$1"'
mk pager 'cat'; mk alias ''; mk credential ''; mk ssh ''; mk askpass ''; mk editor ''; mk gpg 'exit 1'
for h in HOOKS; do
  printf '#!/bin/sh\ntouch "%s/hook-%s"\n' "$M" "$h" > "$G/hooks/$h"; chmod +x "$G/hooks/$h"
  printf '#!/bin/sh\ntouch "%s/hooks-path-%s"\n' "$M" "$h" > "$E/hooks/$h"; chmod +x "$E/hooks/$h"
done
cat >> "$C" <<EOF
[core]
	fsmonitor = $E/fsmonitor
	hooksPath = $E/hooks
	pager = $E/pager
	editor = $E/editor
	sshCommand = $E/ssh
	askPass = $E/askpass
[diff]
	external = $E/ext-diff
[diff "evil"]
	textconv = $E/textconv
	command = $E/diff-command
[filter "evil"]
	clean = $E/clean
	smudge = $E/smudge
	required = true
[filter "proc"]
	process = $E/process
[filter "info"]
	clean = $E/info-clean
[pager]
	status = $E/pager
	diff = $E/pager
	log = $E/pager
[alias]
	status = !$E/alias
	diff = !$E/alias
[credential]
	helper = !$E/credential
[gpg]
	program = $E/gpg
[log]
	showSignature = true
[commit]
	gpgSign = true
[include]
	path = $E/included.config
EOF
printf '[filter "inc"]\n\tclean = %s/include-clean\n\tsmudge = %s/include-clean\n' "$E" "$E" > "$E/included.config"
printf '* filter=evil diff=evil\n*.md filter=inc diff=evil\n' > .gitattributes
printf '*.txt filter=proc\n*.cfg filter=info\n' > "$G/info/attributes"
"#;

/// `sh edit.sh`: the agent's work in the current directory: a line more in each of the three
/// tracked files, and a new file of one line.
const EDIT: &str =
    "set -e\nfor f in README doc.md a.txt; do echo more >> \"$f\"; done\necho new > new.txt\n";

/// `sh sign.sh`: a commit on HEAD that claims a signature (its tree HEAD's), for `git log` to
/// check with gpg.
const SIGN: &str = r#"set -e
git() { command git -c core.hooksPath=/dev/null -c core.fsmonitor=false "$@"; }
tree=$(git rev-parse 'HEAD^{tree}'); parent=$(git rev-parse HEAD)
commit=$(printf 'tree %s\nparent %s\nauthor a <a@a> 1700000000 +0000\ncommitter a <a@a> 1700000000 +0000\ngpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEE\n -----END PGP SIGNATURE-----\n\nSigned, it says\n' "$tree" "$parent" | git hash-object -t commit -w --stdin)
git update-ref HEAD "$commit"
"#;

/// A test's repository and the scripts its agent runs.
struct Repo {
    ctx: TestContext,
    markers: PathBuf,
}

impl Repo {
    /// A repository in the work dir with three tracked files, one commit, and the scripts.
    fn new() -> Self {
        let ctx = TestContext::new();
        support::sh(
            &ctx.work,
            "git init -q -b main && echo hello > README && echo doc > doc.md && echo a > a.txt && git add . && git commit -qm start",
        );
        let markers = ctx.root().join("markers");
        std::fs::create_dir(&markers).unwrap();
        let root = ctx.root();
        std::fs::write(root.join("plant.sh"), PLANT.replace("HOOKS", HOOKS)).unwrap();
        std::fs::write(root.join("edit.sh"), EDIT).unwrap();
        std::fs::write(root.join("sign.sh"), SIGN).unwrap();
        Self { ctx, markers }
    }

    /// `sh plant.sh` for the git dir `git_dir` (and its `config`), run in `dir`.
    fn plant_command(&self, git_dir: &str) -> String {
        format!(
            "sh {root}/plant.sh {git_dir} {git_dir}/config {markers}",
            root = self.ctx.root().display(),
            markers = self.markers.display()
        )
    }

    fn script(&self, name: &str) -> String {
        format!("sh {}/{name}.sh", self.ctx.root().display())
    }

    /// Fails the test if any planted program ran.
    #[track_caller]
    fn assert_nothing_ran(&self, what: &str) {
        let ran: Vec<String> = std::fs::read_dir(&self.markers)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(ran.is_empty(), "{what} ran what git was told to: {ran:?}");
    }
}

/// A run of the fake agent doing each shell command of `commands`, with `extra` flags.
fn run_doing(repo: &Repo, commands: &[String], extra: &[&str]) -> support::Outcome {
    let mut lines = vec![STEP_START.to_owned()];
    for command in commands {
        lines.push(crate::sandbox::attempt("shell", command, false));
    }
    lines.push(TEXT.to_owned());
    lines.push(FINAL.to_owned());
    let mut cmd = repo.ctx.fake_run(&(lines.join("\n") + "\n"), extra);
    // Where the agent may write under the sandbox, and outside the work tree.
    cmd.env("FAKE_AGENT_PID_FILE", repo.ctx.work.join(".git/agent.pids"));
    support::run(&mut cmd, std::time::Duration::from_secs(60))
}

/// The receipt's changes: every path the agent changed or made, and its lines counted as they
/// are in the files, not as a filter would have them.
#[track_caller]
fn assert_work_counted(ctx: &TestContext, planted_gitattributes: bool) {
    let receipt = ctx.ended_as(Outcome::Completed);
    let changes = receipt.changes.expect("the receipt says what changed");
    let mut paths = vec!["README", "a.txt", "doc.md", "new.txt"];
    if planted_gitattributes {
        paths.insert(0, ".gitattributes");
    }
    assert_eq!(changes.paths, paths, "{changes:?}");
    let attributes = if planted_gitattributes { 2 } else { 0 };
    assert_eq!(
        (changes.insertions, changes.deletions),
        (4 + attributes, 0),
        "{changes:?}"
    );
}

#[test]
fn a_repository_planted_before_the_run_has_nothing_run_at_its_start_or_end() {
    let repo = Repo::new();
    support::sh(&repo.ctx.work, &repo.plant_command(".git"));
    git(&repo.ctx.work, &["add", ".gitattributes"]);
    git(&repo.ctx.work, &["commit", "-qm", "attributes"]);
    repo.assert_nothing_ran("planting");
    let out = run_doing(&repo, &[repo.script("edit"), repo.script("sign")], &[]);
    out.assert_exit(0);
    repo.assert_nothing_ran("runbook run");
    let receipt = repo.ctx.ended_as(Outcome::Completed);
    let changes = receipt.changes.expect("the receipt says what changed");
    assert_eq!(
        changes.paths,
        ["README", "a.txt", "doc.md", "new.txt"],
        "{changes:?}"
    );
    assert_eq!(
        (changes.insertions, changes.deletions),
        (4, 0),
        "{changes:?}"
    );
    assert_eq!(changes.commits_total, 1, "the signed commit: {changes:?}");
}

#[test]
fn under_the_sandbox_what_the_agent_plants_in_git_runs_nothing_at_the_end_of_its_run() {
    let repo = Repo::new();
    let commands = [
        repo.plant_command(".git"),
        repo.script("edit"),
        repo.script("sign"),
    ];
    let out = run_doing(&repo, &commands, &["--sandbox"]);
    out.assert_exit(0);
    let tried = crate::sandbox::tried(&repo.ctx);
    assert_eq!(tried, [None, None, None], "{}", out.stderr);
    repo.assert_nothing_ran("runbook run --sandbox");
    assert_work_counted(&repo.ctx, true);
}

/// A batch in the repository of `repo`: each task's prompt names the script its agent runs
/// (`<name>.sh` in the test's root) before it finishes.
struct Batch<'a> {
    repo: &'a Repo,
}

impl<'a> Batch<'a> {
    fn new(repo: &'a Repo) -> Self {
        let dir = repo.ctx.root();
        let ok = [STEP_START, TEXT, FINAL].join("\n") + "\n";
        std::fs::write(dir.join("ok.ndjson"), ok).unwrap();
        let agent = dir.join("agent.sh");
        std::fs::write(
            &agent,
            format!(
                "#!/bin/sh\nfor last; do :; done\nsh {dir}/$last.sh >/dev/null 2>&1\nFAKE_AGENT_SCENARIO={dir}/ok.ndjson exec {fake} \"$@\"\n",
                dir = dir.display(),
                fake = support::fake_agent_bin().display()
            ),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&agent, std::fs::Permissions::from_mode(0o755)).unwrap();
        Self { repo }
    }

    /// Writes the script `name.sh` the task of that prompt runs.
    fn script(&self, name: &str, body: &str) {
        std::fs::write(self.repo.ctx.root().join(format!("{name}.sh")), body).unwrap();
    }

    /// Runs the batch of `tasks` (id = prompt = script name) with `defaults` and `args`.
    fn run(&self, defaults: &str, tasks: &[&str], args: &[&str]) -> support::Outcome {
        let dir = self.repo.ctx.root();
        let listed: String = tasks
            .iter()
            .map(|t| format!("[[task]]\nid = \"{t}\"\nprompt = \"{t}\"\n\n"))
            .collect();
        let file = dir.join("tasks.toml");
        let text = format!(
            "[defaults]\ninactivity_timeout = \"5s\"\nkill_grace = \"1s\"\n{defaults}\n[defaults.agents.opencode]\nbin = \"{}\"\n\n{listed}",
            dir.join("agent.sh").display()
        );
        std::fs::write(&file, text).unwrap();
        let args = [&["batch", file.to_str().unwrap()], args].concat();
        support::run(
            &mut self.repo.ctx.runbook(&args),
            std::time::Duration::from_secs(120),
        )
    }

    /// The batch record's entry for `task`.
    fn task(&self, task: &str) -> serde_json::Value {
        let dir = self.repo.ctx.root().join("batches");
        let batch = std::fs::read_dir(&dir).unwrap().next().unwrap().unwrap();
        let record: serde_json::Value =
            serde_json::from_slice(&std::fs::read(batch.path().join("batch.json")).unwrap())
                .unwrap();
        record["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["task"] == task)
            .unwrap_or_else(|| panic!("no task {task} in {record:#}"))
            .clone()
    }
}

/// Settings that keep the test's own git from running what was planted.
const SAFE: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "commit.gpgSign=false",
    "log.showSignature=false",
    "user.name=t",
    "user.email=t@t",
    "filter.evil.clean=",
    "filter.evil.smudge=",
    "filter.evil.required=false",
    "filter.inc.clean=",
    "filter.inc.smudge=",
    "filter.proc.process=",
    "filter.info.clean=",
];

/// `git ARGS` in `dir`, run by the test (not by runbook), running nothing planted.
fn git(dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    for setting in SAFE {
        cmd.args(["-c", setting]);
    }
    let out = cmd.args(args).current_dir(dir).output().unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// What the branch `branch` holds at `path`.
fn shown(dir: &Path, branch: &str, path: &str) -> String {
    git(dir, &["show", &format!("{branch}:{path}")])
}

#[test]
fn a_sandboxed_task_that_replaces_its_worktrees_git_with_a_planted_repository_has_nothing_run_and_its_work_committed()
 {
    let repo = Repo::new();
    let batch = Batch::new(&repo);
    let main = git(&repo.ctx.work, &["rev-parse", "main"]);
    // The agent: its own repository where git's `.git` file was, everything planted in it, and
    // the work done.
    batch.script(
        "replace",
        &format!(
            "set -e\nrm .git\ngit init -q .\n{plant}\n{edit}\n",
            plant = repo.plant_command(".git"),
            edit = repo.script("edit")
        ),
    );
    let out = batch.run("sandbox = true", &["replace"], &[]);
    repo.assert_nothing_ran("runbook batch");
    out.assert_exit(0);
    let task = batch.task("replace");
    assert_eq!(task["outcome"], "completed", "{task:#}");
    assert_eq!(task["diff"]["files"], 5, "{task:#}");
    assert_eq!(task["diff"]["insertions"], 6, "{task:#}");
    let message = task["message"].as_str().unwrap_or_default();
    assert!(message.contains("replaced its worktree's .git"), "{task:#}");
    let branch = task["branch"].as_str().expect("its branch is kept");
    assert_eq!(shown(&repo.ctx.work, branch, "a.txt"), "a\nmore\n");
    assert_eq!(shown(&repo.ctx.work, branch, "new.txt"), "new\n");
    assert_eq!(git(&repo.ctx.work, &["rev-parse", "main"]), main);
    let listed = git(&repo.ctx.work, &["worktree", "list", "--porcelain"]);
    assert_eq!(listed.matches("worktree ").count(), 1, "removed: {listed}");
    let clean = repo.ctx.run(&["batch", "clean"]);
    clean.assert_exit(0);
    repo.assert_nothing_ran("runbook batch clean");
}

#[test]
fn an_unsandboxed_task_that_plants_in_the_repositorys_and_the_users_configuration_has_nothing_run()
{
    let repo = Repo::new();
    let batch = Batch::new(&repo);
    let main = git(&repo.ctx.work, &["rev-parse", "main"]);
    // Without the sandbox the agent can write the main checkout's configuration and the
    // user's own: both are planted, and the work done.
    let common = repo.ctx.work.join(".git");
    let global = repo.ctx.home.join(".gitconfig");
    batch.script(
        "planting",
        &format!(
            "set -e\n{plant}\nsh {root}/plant.sh {common} {global} {markers}\n{edit}\n",
            plant = repo.plant_command(&common.display().to_string()),
            root = repo.ctx.root().display(),
            common = common.display(),
            global = global.display(),
            markers = repo.markers.display(),
            edit = repo.script("edit")
        ),
    );
    let out = batch.run("", &["planting"], &["--keep", "all"]);
    repo.assert_nothing_ran("runbook batch");
    out.assert_exit(0);
    let task = batch.task("planting");
    assert_eq!(task["outcome"], "completed", "{task:#}");
    assert_eq!(task["diff"]["files"], 5, "{task:#}");
    assert_eq!(task["diff"]["insertions"], 6, "{task:#}");
    let branch = task["branch"].as_str().expect("its branch is kept");
    assert_eq!(shown(&repo.ctx.work, branch, "doc.md"), "doc\nmore\n");
    assert_eq!(git(&repo.ctx.work, &["rev-parse", "main"]), main);
    // The kept worktree holds nothing its branch does not: `clean` removes it, running nothing.
    let clean = repo.ctx.run(&["batch", "clean"]);
    clean.assert_exit(0).assert_stderr_has("removed 1 worktree");
    repo.assert_nothing_ran("runbook batch clean");
}

#[test]
fn a_task_leaving_head_detached_on_its_own_branch_or_on_main_has_its_work_on_its_task_branch_and_main_unmoved()
 {
    let repo = Repo::new();
    let batch = Batch::new(&repo);
    let main = git(&repo.ctx.work, &["rev-parse", "main"])
        .trim()
        .to_owned();
    let id = "-c user.name=a -c user.email=a@a";
    batch.script(
        "detached",
        "set -e\ngit checkout -q --detach\necho detached > detached.txt\n",
    );
    batch.script(
        "own",
        &format!(
            "set -e\ngit checkout -q -b mine\necho own > own.txt\ngit add own.txt\ngit {id} commit -qm mine\necho later > later.txt\n"
        ),
    );
    batch.script(
        "onmain",
        "set -e\ngit checkout -q --ignore-other-worktrees main\necho main > onmain.txt\n",
    );
    let out = batch.run("", &["detached", "own", "onmain"], &["-j", "1"]);
    out.assert_exit(0);
    assert_eq!(
        git(&repo.ctx.work, &["rev-parse", "main"]).trim(),
        main,
        "the user's main did not move"
    );
    for (task, files) in [
        ("detached", vec!["detached.txt"]),
        ("own", vec!["later.txt", "own.txt"]),
        ("onmain", vec!["onmain.txt"]),
    ] {
        let record = batch.task(task);
        assert_eq!(record["outcome"], "completed", "{record:#}");
        let branch = format!("runbook/{}", record["task_id"].as_str().unwrap_or(task));
        let branch = record["branch"].as_str().unwrap_or(&branch);
        assert!(branch.ends_with(&format!("/{task}")), "{record:#}");
        let changed = git(&repo.ctx.work, &["diff", "--name-only", &main, branch]);
        assert_eq!(changed.lines().collect::<Vec<_>>(), files, "{record:#}");
        assert_eq!(record["diff"]["files"], files.len(), "{record:#}");
        assert_eq!(
            record["commit"].as_str(),
            Some(git(&repo.ctx.work, &["rev-parse", branch]).trim()),
            "{record:#}"
        );
    }
}

#[test]
fn batch_clean_keeps_a_worktree_holding_the_users_uncommitted_edits_unless_forced() {
    let repo = Repo::new();
    let batch = Batch::new(&repo);
    batch.script("done", "echo done > done.txt\n");
    batch.script("idle", "true\n");
    let out = batch.run("", &["done", "idle"], &["--keep", "all"]);
    out.assert_exit(0);
    let (done, idle) = (batch.task("done"), batch.task("idle"));
    let edited = PathBuf::from(idle["worktree"].as_str().expect("kept"));
    let untouched = PathBuf::from(done["worktree"].as_str().expect("kept"));
    // The user goes on in the worktree of the task that changed nothing.
    std::fs::write(edited.join("README"), "the user's edit\n").unwrap();
    let clean = repo.ctx.run(&["batch", "clean"]);
    clean
        .assert_exit(0)
        .assert_stderr_has("removed 1 worktree")
        .assert_stderr_has("kept 1 worktree")
        .assert_stderr_has("1 changed file not committed to its branch")
        .assert_stderr_has("--force");
    assert!(!untouched.exists(), "{}", clean.stderr);
    assert_eq!(
        std::fs::read_to_string(edited.join("README")).unwrap(),
        "the user's edit\n"
    );
    let idle_branch = idle["branch"].as_str().unwrap();
    assert!(
        git(&repo.ctx.work, &["branch", "--list", idle_branch]).contains(idle_branch),
        "the kept worktree's branch stays: {}",
        clean.stderr
    );
    let forced = repo.ctx.run(&["batch", "clean", "--force"]);
    forced
        .assert_exit(0)
        .assert_stderr_has("removed 1 worktree");
    assert!(!edited.exists(), "{}", forced.stderr);
    repo.assert_nothing_ran("runbook batch clean");
}
