#!/usr/bin/env python3
"""`runbook batch` with many tasks of the fake agent: what supervising each costs, how fast a
queued task follows one that ended, and what a task's worktree costs to make.

    python3 benches/batch.py [RUNBOOK [FAKE_AGENT]]

Default binaries: target/release/runbook and target/release/fake-agent (`cargo build --release
--features test-support --bins`). Python 3 standard library only; everything happens in a
temporary directory (a fresh git repository, its runs directory and HOME), removed at the end.
Prints markdown on stdout, progress on stderr.

1. Quiet: BENCH_TASKS (50) tasks at `-j BENCH_TASKS`, each an agent that says its first step
   and then stays silent (BENCH_QUIET_S, 20 s, of it measured once every task has spoken). Over
   that window: CPU of the `runbook batch` process and of each task's `runbook run` child (every
   thread's schedstat, and utime+stime from /proc/PID/stat as a check), their memory (RSS and
   PSS from /proc/PID/smaps_rollup), per supervised task (the batch's own share is its figure
   divided by the tasks). The agents (the fake agent) are not counted: they are not runbook.
2. Queue: BENCH_QUEUE_TASKS (50) short tasks (a step, BENCH_SHORT_MS of silence, a reply) at
   `-j BENCH_QUEUE_J` (10). For each task that ended while others were queued: from its run's
   end (its receipt's `ended_at`) to the next task's launch (the batch's `START` line, read as
   it is written) and to that task's `run.started` (its event log).
3. Worktrees: `git` is a wrapper on PATH that logs each command's start and end (bash's
   EPOCHREALTIME, no extra process); from it, every `git worktree add` of passes 1 and 2, the
   git commands a task's end runs, and a task's whole setup (launch to `run.started`). The
   wrapper is on PATH in passes 1 and 3 only: pass 2's figures are without it, pass 3 repeats
   pass 2 with it to say where the time goes. Beside them, the same `git worktree add` run by
   this script alone, one at a time: what git itself costs on this machine at that moment.

BENCH_ONLY=quiet,queue,git picks passes. The machine's load matters: every figure here is wall
time of several processes in a row, so on a busy machine it measures the queue for the CPU too.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
N = int(os.environ.get("BENCH_TASKS", "50"))
QUIET_S = float(os.environ.get("BENCH_QUIET_S", "20"))
QUEUE_N = int(os.environ.get("BENCH_QUEUE_TASKS", "50"))
QUEUE_J = int(os.environ.get("BENCH_QUEUE_J", "10"))
SHORT_MS = int(os.environ.get("BENCH_SHORT_MS", "300"))
TICK = os.sysconf("SC_CLK_TCK")

STEP_START = '{"type":"step_start","timestamp":1795319488573,"sessionID":"ses_b","part":{"id":"prt_1","messageID":"msg_1","sessionID":"ses_b","snapshot":"5743","type":"step-start"}}'
TEXT = '{"type":"text","timestamp":1795319488778,"sessionID":"ses_b","part":{"id":"prt_2","messageID":"msg_1","sessionID":"ses_b","type":"text","text":"All done.","time":{"start":1795319488595,"end":1795319488772}}}'
STOP = '{"type":"step_finish","timestamp":1795319488892,"sessionID":"ses_b","part":{"id":"prt_5","reason":"stop","snapshot":"5743","messageID":"msg_1","sessionID":"ses_b","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.01}}'


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def host():
    model = "?"
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return f"{os.cpu_count()} cores ({model}), Linux {os.uname().release}"


def ts(text):
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(p / 100 * (len(xs) - 1))))] if xs else float("nan")


class Bench:
    def __init__(self, runbook, fake):
        self.runbook, self.fake = runbook, fake
        self.tmp = tempfile.mkdtemp(prefix="runbook-bench-batch-")
        self.repo = os.path.join(self.tmp, "repo")
        self.git = shutil.which("git")
        os.makedirs(self.repo)
        for args in (["init", "-q", "-b", "main"], ["add", "."], ["commit", "-q", "-m", "start"]):
            if args[0] == "add":
                for i in range(20):
                    with open(os.path.join(self.repo, f"file{i}.txt"), "w") as f:
                        f.write("hello\n" * 50)
            subprocess.run([self.git, "-C", self.repo, "-c", "user.name=b", "-c", "user.email=b@b", *args], check=True)
        self.wrapdir = os.path.join(self.tmp, "wrap")
        os.makedirs(self.wrapdir)
        self.gitlog = os.path.join(self.tmp, "git.log")
        wrapper = os.path.join(self.wrapdir, "git")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/bash\ns=$EPOCHREALTIME\n"{self.git}" "$@"\nrc=$?\n'
                    f'printf \'%s %s %s\\n\' "$s" "$EPOCHREALTIME" "$*" >> "{self.gitlog}"\nexit $rc\n')
        os.chmod(wrapper, 0o755)

    def scenario(self, name, lines):
        path = os.path.join(self.tmp, f"{name}.ndjson")
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    def tasks(self, name, count):
        path = os.path.join(self.tmp, f"{name}.toml")
        with open(path, "w") as f:
            f.write('[defaults]\ninactivity_timeout = "10m"\n'
                    f'[defaults.agents.opencode]\nbin = "{self.fake}"\n\n'
                    f'[[task]]\nid = "{name}"\nprompt = "wait"\nrepeat = {count}\n')
        return path

    def start(self, pass_name, tasks, jobs, scenario, wrapped):
        # The batch's record goes beside the runs directory (`<runs>/../batches`).
        runs = os.path.join(self.tmp, pass_name, "runs")
        home = os.path.join(self.tmp, pass_name, "home")
        os.makedirs(home)
        path = os.environ.get("PATH", "/usr/bin:/bin")
        env = {
            "PATH": f"{self.wrapdir}:{path}" if wrapped else path,
            "HOME": home,
            "XDG_CONFIG_HOME": os.path.join(home, ".config"),
            "LANG": "C.UTF-8",
            "NO_COLOR": "1",
            "RUNBOOK_RUNS_DIR": runs,
            "FAKE_AGENT_SCENARIO": scenario,
            "FAKE_AGENT_VERSION": "1.18.33",
        }
        if os.path.exists(self.gitlog):
            os.remove(self.gitlog)
        proc = subprocess.Popen([self.runbook, "batch", tasks, "-j", str(jobs)], cwd=self.repo, env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        lines = []

        def read(stream):
            for raw in iter(stream.readline, b""):
                lines.append((time.time(), raw.decode(errors="replace").rstrip("\n")))

        readers = [threading.Thread(target=read, args=(s,), daemon=True) for s in (proc.stdout, proc.stderr)]
        for r in readers:
            r.start()
        return proc, runs, lines, readers

    def git_log(self):
        if not os.path.exists(self.gitlog):
            return []
        out = []
        with open(self.gitlog) as f:
            for line in f:
                start, end, args = line.rstrip("\n").split(" ", 2)
                out.append((float(start), float(end), args))
        return out

    def record(self, runs):
        batches = os.path.join(os.path.dirname(runs), "batches")
        (batch,) = os.listdir(batches)
        with open(os.path.join(batches, batch, "batch.json")) as f:
            return json.load(f)


def run_started(run_dir):
    with open(os.path.join(run_dir, "events.ndjson")) as f:
        for line in f:
            e = json.loads(line)
            if e["type"] == "run.started":
                return ts(e["ts"])
    return None


def receipt(run_dir):
    with open(os.path.join(run_dir, "result.json")) as f:
        return json.load(f)


def children(pid):
    kids = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(x) for x in f.read().split()]
        except OSError:
            pass
    return kids


def comm_args(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return [a.decode(errors="replace") for a in f.read().split(b"\0") if a]
    except OSError:
        return []


def cpu(pid):
    """({thread: schedstat ns}, utime+stime ticks of the whole process)."""
    threads = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                threads[tid] = int(f.read().split()[0])
        except OSError:
            pass
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return threads, int(fields[11]) + int(fields[12])


def cpu_used(before, after):
    """Seconds on a CPU between two samples: each thread's own difference (a thread that ended
    in between is counted to its last sample; its last moments are in the ticks), and the
    process's utime+stime ticks."""
    ns = sum(t - before[0].get(tid, 0) for tid, t in after[0].items())
    return ns / 1e9, (after[1] - before[1]) / TICK


def memory(pid):
    """RSS, PSS and private (USS) KiB, from smaps_rollup."""
    got = {}
    with open(f"/proc/{pid}/smaps_rollup") as f:
        for line in f:
            parts = line.split()
            if parts and parts[0].endswith(":") and len(parts) >= 2 and parts[1].isdigit():
                got[parts[0][:-1]] = int(parts[1])
    return got.get("Rss", 0), got.get("Pss", 0), got.get("Private_Clean", 0) + got.get("Private_Dirty", 0)


def quiet_pass(b):
    load0 = loadavg()
    silence_ms = int((QUIET_S + 60) * 1000)
    scenario = b.scenario("quiet", [STEP_START, json.dumps({"$sleep_ms": silence_ms}), TEXT, STOP])
    tasks = b.tasks("quiet", N)
    log(f"== pass 1: {N} quiet tasks at -j {N} (load {load0})")
    t0 = time.time()
    proc, runs, lines, readers = b.start("quiet", tasks, N, scenario, wrapped=True)
    deadline = time.time() + 120
    while True:
        kids = [k for k in children(proc.pid) if "run" in comm_args(k)]
        events = [d for d in os.listdir(runs) if os.path.exists(os.path.join(runs, d, "events.ndjson"))] if os.path.isdir(runs) else []
        if len(kids) == N and len(events) >= N and count_turns(runs) >= N:
            break
        if time.time() > deadline or proc.poll() is not None:
            proc.kill()
            raise SystemExit(f"the {N} tasks did not all start within 120 s: {len(kids)} runs, {len(events)} logs")
        time.sleep(0.2)
    all_started = time.time() - t0
    time.sleep(2)
    pids = [proc.pid] + kids
    before = {p: cpu(p) for p in pids}
    w0 = time.monotonic()
    time.sleep(QUIET_S / 2)
    mem = {p: memory(p) for p in pids}
    time.sleep(QUIET_S / 2)
    after = {p: cpu(p) for p in pids}
    window = time.monotonic() - w0
    alive = all(os.path.exists(f"/proc/{p}") for p in pids)
    ended_early = [l for _, l in lines if l.lstrip().startswith(("DONE", "FAIL", "HUNG", "STUCK", "OVER"))]
    load1 = loadavg()
    # End the batch now (Ctrl-C: each run writes its receipt): the rest is waiting.
    proc.send_signal(2)
    try:
        proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    for r in readers:
        r.join(timeout=5)
    if not alive or ended_early:
        raise SystemExit(f"a task ended during the quiet window: {ended_early}")
    batch_cpu, batch_ticks = cpu_used(before[proc.pid], after[proc.pid])
    run_cpu = [cpu_used(before[k], after[k])[0] for k in kids]
    run_ticks = [cpu_used(before[k], after[k])[1] for k in kids]
    rss = [mem[k][0] / 1024 for k in kids]
    pss = [mem[k][1] / 1024 for k in kids]
    uss = [mem[k][2] / 1024 for k in kids]
    brss, bpss, buss = (x / 1024 for x in mem[proc.pid])
    per_task_cpu = [(c + batch_cpu / N) / window * 100 for c in run_cpu]
    per_task_pss = [p + bpss / N for p in pss]
    git = b.git_log()
    adds = [(e - s) * 1000 for s, e, a in git if git_command(a) == "worktree add"]
    out = [
        f"### Pass 1: {N} quiet tasks at `-j {N}`",
        "",
        f"All {N} runs had started and their agents spoken {all_started:.1f} s after `runbook batch` began; "
        f"measured over the next {window:.1f} s of silence (from 2 s later). Load average {load0} before, {load1} at the end of the window.",
        "",
        "| process | CPU over the window (schedstat) | utime+stime (ticks) | % of a core | RSS MiB | PSS MiB | private MiB | threads |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
        f"| `runbook batch` (one) | {batch_cpu * 1000:.1f} ms | {batch_ticks * 1000:.0f} ms | {batch_cpu / window * 100:.3f}% | {brss:.1f} | {bpss:.1f} | {buss:.1f} | {len(after[proc.pid][0])} |",
        f"| each `runbook run`, median (max) of {N} | {med(run_cpu) * 1000:.1f} ({max(run_cpu) * 1000:.1f}) ms | {med(run_ticks) * 1000:.0f} ({max(run_ticks) * 1000:.0f}) ms | {med(run_cpu) / window * 100:.3f}% ({max(run_cpu) / window * 100:.3f}%) | {med(rss):.1f} ({max(rss):.1f}) | {med(pss):.1f} ({max(pss):.1f}) | {med(uss):.1f} ({max(uss):.1f}) | {len(after[kids[0]][0])} |",
        f"| **per supervised task** (its run + the batch's share, 1/{N}), median (max) | | | **{med(per_task_cpu):.3f}%** ({max(per_task_cpu):.3f}%) | | **{med(per_task_pss):.1f}** ({max(per_task_pss):.1f}) | | |",
        "",
        f"Every `runbook run` together: RSS {sum(rss):.0f} MiB, PSS {sum(pss):.0f} MiB (the binary's pages are shared; PSS divides them among the processes).",
        f"`git worktree add` in this pass ({len(adds)} of them, one lock): median {med(adds):.1f} ms, p90 {pct(adds, 90):.1f} ms, max {max(adds) if adds else float('nan'):.1f} ms.",
    ]
    setups = setup_times(b, runs, lines)
    if setups:
        out.append(f"A task's setup (its `START` line to its `run.started`: worktree made behind the lock, then its run started): "
                   f"median {med(setups):.0f} ms, max {max(setups):.0f} ms (the last of {N} waits for the others' worktrees).")
    out += ["", git_breakdown(git)]
    return "\n".join(out)


def count_turns(runs):
    n = 0
    for d in os.listdir(runs):
        p = os.path.join(runs, d, "events.ndjson")
        try:
            with open(p) as f:
                text = f.read()
        except OSError:
            continue
        if '"step.started"' in text:
            n += 1
    return n


def setup_times(b, runs, lines):
    rec = b.record(runs)
    starts = {}
    for t, line in lines:
        words = line.split()
        if len(words) >= 2 and words[0] == "START":
            starts[words[1]] = t
    out = []
    for task in rec["tasks"]:
        if task.get("run_dir") and task["task"] in starts:
            s = run_started(task["run_dir"])
            if s:
                out.append((s - starts[task["task"]]) * 1000)
    return out


def queue_pass(b, wrapped):
    load0 = loadavg()
    scenario = b.scenario("short", [STEP_START, json.dumps({"$sleep_ms": SHORT_MS}), TEXT, STOP])
    name = "short-git" if wrapped else "short"
    tasks = b.tasks(name, QUEUE_N)
    log(f"== pass {'3' if wrapped else '2'}: {QUEUE_N} short tasks at -j {QUEUE_J}{', git logged' if wrapped else ''} (load {load0})")
    proc, runs, lines, readers = b.start(name, tasks, QUEUE_J, scenario, wrapped)
    proc.wait(timeout=600)
    for r in readers:
        r.join(timeout=5)
    load1 = loadavg()
    rec = b.record(runs)
    names = {t["task"] for t in rec["tasks"]}
    ended, started = {}, {}
    for t in rec["tasks"]:
        if t.get("run_dir"):
            ended[t["task"]] = ts(receipt(t["run_dir"])["ended_at"])
            started[t["task"]] = run_started(t["run_dir"])
    launched, done = {}, {}
    for t, line in lines:
        words = line.split()
        if len(words) >= 2 and words[0] == "START":
            launched[words[1]] = t
        elif words and words[0] == "DONE":
            name = next((w for w in words if w in names), None)
            if name:
                done[name] = t
    # Each run's end frees one place of the -j: the i-th end lets in the i-th task that was
    # queued (the ones launched after the first -j), whichever task that is.
    ends = sorted(ended.values())
    queued = sorted(launched, key=launched.get)[QUEUE_J:]
    pairs = list(zip(ends, queued))
    launch = [(launched[bn] - end) * 1000 for end, bn in pairs]
    full = [(started[bn] - end) * 1000 for end, bn in pairs]
    spawn = [(started[bn] - launched[bn]) * 1000 for _, bn in pairs]
    seen = [(done[n] - ended[n]) * 1000 for n in ended if n in done]
    outcomes = {t["outcome"] for t in rec["tasks"]}
    out = []
    title = f"### Pass {'3' if wrapped else '2'}: {QUEUE_N} short tasks at `-j {QUEUE_J}`" + (" again, with git's commands logged" if wrapped else "")
    out += [title, "", f"Load average {load0} before, {load1} after; {len(pairs)} tasks started as another ended; outcomes: {', '.join(sorted(outcomes))}; the batch took {rec['duration_ms'] / 1000:.1f} s.", ""]
    out += ["| from a task's end (its receipt's `ended_at`) to | median ms | p90 ms | max ms |", "|---|---:|---:|---:|"]
    out.append(f"| **the next task's launch** (its `START` line) | **{med(launch):.1f}** | {pct(launch, 90):.1f} | {max(launch):.1f} |")
    out.append(f"| **the next task's `run.started`** | **{med(full):.1f}** | {pct(full, 90):.1f} | {max(full):.1f} |")
    out.append(f"| (the next task's launch → its `run.started`: its worktree, its run's start) | {med(spawn):.1f} | {pct(spawn, 90):.1f} | {max(spawn):.1f} |")
    out.append(f"| (its own `DONE` line: its run gone, its worktree settled) | {med(seen):.1f} | {pct(seen, 90):.1f} | {max(seen):.1f} |")
    if wrapped:
        out += launch_breakdown(b.git_log(), launched, started, [bn for _, bn in pairs])
        out += ["", git_breakdown(b.git_log())]
    return "\n".join(out)


def launch_breakdown(git, launched, started, tasks):
    """Where a queued task's launch → `run.started` goes: waiting for the worktree lock (and
    making the directory), `git worktree add` itself, then starting its `runbook run`."""
    adds = {}
    for s, e, args in git:
        if git_command(args) == "worktree add":
            words = args.split()
            branch = words[words.index("-b") + 1]
            adds[branch.rsplit("/", 1)[-1]] = (s, e)
    parts = [[], [], []]
    for task in tasks:
        if task not in adds:
            continue
        s, e = adds[task]
        parts[0].append((s - launched[task]) * 1000)
        parts[1].append((e - s) * 1000)
        parts[2].append((started[task] - e) * 1000)
    names = ["its launch → its `git worktree add` starts (the lock, shared with the ended tasks' `worktree remove`)",
             "`git worktree add` itself", "`git worktree add` done → its `run.started` (its `runbook run` started)"]
    return [f"| ({name}) | {med(xs):.1f} | {pct(xs, 90):.1f} | {max(xs) if xs else float('nan'):.1f} |" for name, xs in zip(names, parts)]


def git_command(args):
    """`worktree add`, `rev-parse`…: the subcommand, past `-C DIR` and `-c NAME=VALUE`."""
    words = args.split()
    while len(words) >= 2 and words[0] in ("-C", "-c"):
        words = words[2:]
    if not words:
        return "?"
    return " ".join(words[:2]) if words[0] in ("worktree", "branch") else words[0]


def git_breakdown(git):
    kinds = {}
    for s, e, args in git:
        kinds.setdefault(git_command(args), []).append((e - s) * 1000)
    rows = ["| git command (each one the pass ran: the batch's and its runs') | count | median ms | p90 ms | max ms |",
            "|---|---:|---:|---:|---:|"]
    for sub, xs in sorted(kinds.items(), key=lambda kv: -sum(kv[1])):
        rows.append(f"| `git {sub}` | {len(xs)} | {med(xs):.1f} | {pct(xs, 90):.1f} | {max(xs):.1f} |")
    return "\n".join(rows)


def git_alone(b, n=10):
    """`git worktree add` (and `remove`) run by this script alone, one at a time, in the same
    repository: what the command costs on this machine now, without runbook."""
    base = subprocess.run([b.git, "-C", b.repo, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    adds, removes = [], []
    for i in range(n):
        path = os.path.join(b.tmp, f"alone-{i}")
        t0 = time.monotonic()
        subprocess.run([b.git, "-C", b.repo, "worktree", "add", "-q", "-b", f"alone-{i}", path, base], check=True)
        t1 = time.monotonic()
        subprocess.run([b.git, "-C", b.repo, "worktree", "remove", "--force", path], check=True)
        t2 = time.monotonic()
        subprocess.run([b.git, "-C", b.repo, "branch", "-q", "-D", f"alone-{i}"], check=True)
        adds.append((t1 - t0) * 1000)
        removes.append((t2 - t1) * 1000)
    return (f"`git worktree add` run alone by this script, {n} times one after another in the same repository "
            f"(load average {loadavg()}): median {med(adds):.1f} ms (min {min(adds):.1f}); `git worktree remove --force`: median {med(removes):.1f} ms.")


def main():
    runbook = sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target/release/runbook")
    fake = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(runbook), "fake-agent")
    only = set(os.environ.get("BENCH_ONLY", "quiet,queue,git").split(","))
    b = Bench(os.path.abspath(runbook), os.path.abspath(fake))
    print(f"`python3 benches/batch.py {runbook} {fake}` on {host()}, "
          f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, load average {loadavg()} at the start.\n")
    try:
        print(git_alone(b) + "\n", flush=True)
        if "quiet" in only:
            print(quiet_pass(b) + "\n", flush=True)
        if "queue" in only:
            print(queue_pass(b, False) + "\n", flush=True)
        if "git" in only:
            print(queue_pass(b, True) + "\n", flush=True)
    finally:
        shutil.rmtree(b.tmp, ignore_errors=True)
    print(f"Load average at the end: {loadavg()}.")


if __name__ == "__main__":
    main()
