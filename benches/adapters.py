#!/usr/bin/env python3
"""Every adapter against its floor, latency against a Python relay, tiny events, memory, idle CPU.

    python3 benches/adapters.py              # everything (about 10 minutes)
    BENCH_ONLY=throughput,tiny python3 benches/adapters.py

Builds `runbook` and `fake-agent` in release mode first (`cargo build --release --features
test-support --bins`), or measures `BENCH_RUNBOOK=/path/to/runbook`. Prints markdown tables on
stdout, progress on stderr. Python 3 standard library only; reads nothing outside the repository.

The streams (generated once into the scratch directory, `BENCH_DIR`, default a temporary one):
OpenCode (the fake agent's 200,000 events, 1 tool in 600 with two 64 KiB outputs: ~153 MB),
Claude Code stream-json (the recorded transcripts in fixtures/claude cycled to 150 MB, partial
messages included), Codex exec --json (fixtures/codex cycled to 100 MB), runbook's own events for
`--agent-cmd` (100 MB), and 5,000,000 Codex `item.*` lines of ~100 bytes. An agent is a shell
script that answers `--version` and then `cat`s its stream; the floor is that script piped into
`tee FILE > /dev/null`; beside it, runbook's writes alone (the same copy, and at the same time
runbook's event log from a first run copied into a file by the kernel, `cp`, with no parsing)
show the least the bytes runbook must write cost by themselves. Every round runs each stream's floor and
runbook back to back (the order turning by round, each command after a `sync`), so both see the
same load; the table gives medians, the spread (min–max) and the median of the per-round ratios.

Knobs: BENCH_ONLY (throughput,tiny,latency,memory,idle), BENCH_STREAMS (opencode,claude,codex,generic),
BENCH_ROUNDS (7),
BENCH_COMPARE=/path/to/runbook (another build, e.g. an older one, timed in the same rounds), BENCH_TINY_ROUNDS (5),
BENCH_PACED (500 events per latency run), BENCH_INTERVAL_MS (5), BENCH_LATENCY_ROUNDS (3),
BENCH_MEMORY_ROUNDS (5), BENCH_IDLE_SECS (20), BENCH_DIR, BENCH_RUNBOOK, BENCH_JSON=FILE (every figure as JSON, for
benches/dashboard.py), BENCH_PYTHON_ROW=1 (also time the one-thread
Python supervisor of the seed over every stream; slow).
"""

import json
import os
import pty
import select
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", "/tmp")}
# A cycled transcript repeats its tool calls, which loop detection would stop: it still runs and
# warns (its cost is part of every figure), but never ends a run early.
ENV["RUNBOOK_STUCK"] = "warn"


# Every figure measured, for `BENCH_JSON=FILE` (benches/dashboard.py reads it).
RESULTS = {}


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def num(name, default):
    return int(os.environ.get(name, default))


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


def busy_jiffies():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    return sum(v) - v[3] - v[4]


def build():
    if os.environ.get("BENCH_RUNBOOK"):
        rb = os.environ["BENCH_RUNBOOK"]
        fake = os.path.join(os.path.dirname(rb), "fake-agent")
        return rb, fake
    log("== cargo build --release --features test-support --bins")
    subprocess.run(
        ["cargo", "build", "--release", "--locked", "--features", "test-support", "--bins"],
        cwd=REPO,
        check=True,
    )
    target = os.path.join(REPO, "target", "release")
    return os.path.join(target, "runbook"), os.path.join(target, "fake-agent")


# ------------------------------------------------------------------------------------ streams


def cycle(sources, megabytes, out):
    lines = []
    for src in sources:
        with open(src, "rb") as f:
            lines += [l if l.endswith(b"\n") else l + b"\n" for l in f.read().splitlines() if l.strip()]
    target, n = megabytes * 1_000_000, 0
    with open(out, "wb") as f:
        while n < target:
            chunk = b"".join(lines)
            f.write(chunk)
            n += len(chunk)


def fixtures(agent):
    d = os.path.join(REPO, "fixtures", agent)
    return sorted(os.path.join(d, n) for n in os.listdir(d) if n.endswith(".stdout.ndjson"))


def generic_lines():
    out = [b'{"type":"session.started","session_id":"s-1"}\n']
    for i in range(1000):
        out += [
            b'{"type":"step.started","id":"m%d"}\n' % i,
            b'{"type":"text","text":"Reading the tests before changing the parser (%d)."}\n' % i,
            b'{"type":"tool.started","call_id":"c%d","name":"bash","kind":"shell","input":"cargo test --locked -p runbook"}\n' % i,
            b'{"type":"tool.completed","call_id":"c%d","name":"bash","kind":"shell","input":"cargo test --locked -p runbook","status":"ok","duration_ms":5120,"output_bytes":18234}\n' % i,
            b'{"type":"step.finished","id":"m%d","reason":"tool-calls","tokens":{"input":1200,"output":80,"reasoning":0,"cache_read":900,"cache_write":0},"cost_usd":0.0046,"cost_source":"reported"}\n' % i,
        ]
    return out


def tiny_lines(n):
    """n Codex item.* lines of about 100 bytes: a command started and completed, a message."""
    rows = [
        b'{"type":"item.started","item":{"id":"item_%07d","type":"command_execution","command":"ls"}}\n',
        b'{"type":"item.completed","item":{"id":"item_%07d","type":"command_execution","exit_code":0}}\n',
        b'{"type":"item.completed","item":{"id":"item_%07d","type":"agent_message","text":"ok"}}\n',
    ]
    head = b'{"type":"thread.started","thread_id":"0199a213-81c0-7800-8aa1-bbab2a035a53"}\n{"type":"turn.started"}\n'
    tail = b'{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}\n'
    return head, rows, tail


def make_streams(dir, fake):
    streams = {}
    path = os.path.join(dir, "opencode.ndjson")
    if not os.path.exists(path):
        log("== generating the OpenCode stream")
        # Made aside and renamed: a failed generation leaves no empty stream to be timed later.
        with open(path + ".part", "wb") as f:
            subprocess.run(
                [fake, "run", "--format", "json", "--", "bench"],
                env={**ENV, "FAKE_AGENT_GENERATE": "200000"},
                stdout=f,
                check=True,
                cwd=dir,
            )
        os.rename(path + ".part", path)
    streams["opencode"] = path
    for agent, mb in [("claude", 150), ("codex", 100)]:
        path = os.path.join(dir, agent + ".ndjson")
        if not os.path.exists(path):
            log(f"== generating the {agent} stream ({mb} MB)")
            cycle(fixtures(agent), mb, path)
        streams[agent] = path
    path = os.path.join(dir, "generic.ndjson")
    if not os.path.exists(path):
        log("== generating the --agent-cmd stream (100 MB)")
        lines, n = generic_lines(), 0
        with open(path, "wb") as f:
            chunk = b"".join(lines[1:])
            f.write(lines[0])
            while n < 100_000_000:
                f.write(chunk)
                n += len(chunk)
            f.write(b'{"type":"agent.result","ok":true}\n')
    streams["generic"] = path
    return streams


def make_tiny(dir, n):
    path = os.path.join(dir, f"tiny{n}.ndjson")
    if not os.path.exists(path):
        log(f"== generating {n} tiny Codex lines")
        head, rows, tail = tiny_lines(n)
        with open(path, "wb") as f:
            f.write(head)
            buf = []
            for i in range(n - 3):
                buf.append(rows[i % 3] % (i // 3))
                if len(buf) == 100_000:
                    f.write(b"".join(buf))
                    buf = []
            f.write(b"".join(buf))
            f.write(tail)
    return path


def cat_agent(dir, name, stream):
    path = os.path.join(dir, f"agent-{name}.sh")
    with open(path, "w") as f:
        f.write(f'#!/bin/sh\n[ "$1" = --version ] && {{ echo 1.0.0; exit 0; }}\nexec cat {stream}\n')
    os.chmod(path, 0o755)
    return path


AGENT_FLAGS = {
    "opencode": lambda a: ["--agent", "opencode", "--agent-bin", a],
    "claude": lambda a: ["--agent", "claude", "--agent-bin", a],
    "codex": lambda a: ["--agent", "codex", "--agent-bin", a],
    "generic": lambda a: ["--agent-cmd", a],
}


def runbook_argv(rb, runs, agent_kind, agent):
    return [rb, "run", "--runs-dir", runs, "--json", *AGENT_FLAGS[agent_kind](agent), "bench"]


def timed(argv, shell=False, stdout=subprocess.DEVNULL):
    t = time.perf_counter()
    p = subprocess.Popen(argv, shell=shell, env=ENV, stdout=stdout, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t
    p.returncode = os.waitstatus_to_exitcode(status)
    return wall, ru.ru_utime + ru.ru_stime, p.returncode


def check_run(runs, size, label, code):
    run = [os.path.join(runs, d) for d in os.listdir(runs)]
    logged = os.path.getsize(os.path.join(run[0], "stdout.log")) if len(run) == 1 else -1
    events = os.path.join(run[0], "events.ndjson") if len(run) == 1 else ""
    if logged != size or not os.path.exists(os.path.join(run[0], "result.json")) or os.path.getsize(events) < size // 10:
        sys.exit(f"runbook (exit {code}) did not read the whole {label} stream: {logged} of {size} bytes logged")


def spread(v):
    return f"{statistics.median(v):.3f} ({min(v):.3f}–{max(v):.3f})"


# ------------------------------------------------------------------------------- throughput


def throughput(rb, dir, streams, rounds, tiny_path=None, tiny_n=0, tiny_rounds=0):
    """BENCH_COMPARE=/path/to/runbook: another build, run in the same rounds."""
    other_rb = os.environ.get("BENCH_COMPARE")
    rows = []
    kinds = os.environ.get("BENCH_STREAMS", "opencode,claude,codex,generic").split(",")
    todo = [(k, streams[k], k, rounds) for k in ("opencode", "claude", "codex", "generic") if k in streams and k in kinds]
    if tiny_path:
        todo.append((f"codex, {tiny_n:,} tiny lines", tiny_path, "codex", tiny_rounds))
    python_row = os.environ.get("BENCH_PYTHON_ROW") == "1"
    for label, stream, kind, reps in todo:
        agent = cat_agent(dir, kind, stream)
        size = os.path.getsize(stream)
        out = os.path.join(dir, "floor.out")
        floor_cmd = f"{agent} | tee {out} > /dev/null"
        # runbook's writes alone: the stream into its raw log as the floor does, and at the same
        # time its event log (taken from a first run) copied into a file by the kernel (`cp` is
        # one `copy_file_range`: no byte passes through a process), with no parsing at all. No
        # supervisor that writes these files can write them for less; its `--json` copy goes to
        # /dev/null, which costs nothing on either side.
        events = keep_events(dir, rb, kind, agent, size, label)
        writes_cmd = f"{agent} | tee {out} > /dev/null & cp {events} {out}.events; wait"
        writes, write_ratios, writes_cpu = [], [], []
        floor, runbook, cpu, floor_cpu, ratios, loads = [], [], [], [], [], []
        other, other_ratios, other_cpu = [], [], []
        for r in range(reps):
            runs = os.path.join(dir, "runs")
            shutil.rmtree(runs, ignore_errors=True)
            loads.append(loadavg())
            # Each build follows the floor as often as the other does, and every command starts
            # with the page cache's dirty pages written out: the floor's 100+ MB of writeback
            # must not land on whichever command comes next.
            order = [
                ("floor", "runbook", "other"),
                ("other", "runbook", "floor"),
                ("floor", "other", "runbook"),
                ("runbook", "other", "floor"),
            ][r % 4]
            got = {}
            for what in order:
                os.sync()
                if what == "floor":
                    # runbook's writes alone, next to the floor in every round. Every copy goes
                    # to a new file, as runbook's logs do: truncating the last round's copy
                    # inside the timed command would free its pages there.
                    new_files(out, f"{out}.events")
                    got["writes"], c, _ = timed(writes_cmd, shell=True)
                    writes_cpu.append(c)
                    new_files(out)
                if what == "other":
                    if other_rb:
                        wall, c, code = timed(runbook_argv(other_rb, runs, kind, agent))
                        check_run(runs, size, label, code)
                        shutil.rmtree(runs, ignore_errors=True)
                        other.append(wall)
                        other_cpu.append(c)
                        got["other"] = wall
                    continue
                if what == "floor":
                    got["floor"], c, _ = timed(floor_cmd, shell=True)
                    floor_cpu.append(c)
                else:
                    wall, c, code = timed(runbook_argv(rb, runs, kind, agent))
                    # A cycled transcript goes on after its final word, which runbook reports
                    # (exit 1): what matters here is that all of it was read and logged.
                    check_run(runs, size, label, code)
                    got["runbook"] = wall
                    cpu.append(c)
                    shutil.rmtree(runs, ignore_errors=True)
            floor.append(got["floor"])
            runbook.append(got["runbook"])
            ratios.append(got["runbook"] / got["floor"])
            writes.append(got["writes"])
            write_ratios.append(got["writes"] / got["floor"])
            if "other" in got:
                other_ratios.append(got["other"] / got["floor"])
            log(f"   {label} round {r + 1}/{reps}: floor {got['floor']:.3f} s, runbook {got['runbook']:.3f} s")
        row = {
            "label": label,
            "size": size,
            "floor": floor,
            "runbook": runbook,
            "cpu": cpu,
            "floor_cpu": floor_cpu,
            "ratios": ratios,
            "writes": writes,
            "write_ratios": write_ratios,
            "writes_cpu": writes_cpu,
            "events_size": os.path.getsize(events),
            "other": other_ratios,
            "other_wall": other,
            "other_cpu": other_cpu,
            "load": statistics.median(loads),
        }
        if python_row:
            row["python"] = python_seed(dir, agent, kind)
        rows.append(row)
    return rows


def new_files(*paths):
    """Removes what a timed command is about to write, and writes out the page cache's dirty pages."""
    for path in paths:
        if os.path.exists(path):
            os.remove(path)
    os.sync()


def keep_events(dir, rb, kind, agent, size, label):
    """The event log of one run of the stream, kept for the row of runbook's writes alone."""
    runs = os.path.join(dir, "runs")
    shutil.rmtree(runs, ignore_errors=True)
    _, _, code = timed(runbook_argv(rb, runs, kind, agent))
    check_run(runs, size, label, code)
    [run] = os.listdir(runs)
    kept = os.path.join(dir, f"events-{kind}-{size}.ndjson")
    shutil.move(os.path.join(runs, run, "events.ndjson"), kept)
    shutil.rmtree(runs, ignore_errors=True)
    return kept


def python_seed(dir, agent, kind):
    """The seed's approach, for reference (one run): a thread per pipe, json.loads each line,
    log every event, print it."""
    script = os.path.join(dir, "seed.py")
    with open(script, "w") as f:
        f.write(PY_SEED)
    logdir = os.path.join(dir, "seed")
    shutil.rmtree(logdir, ignore_errors=True)
    return timed([sys.executable, script, logdir, agent])[0]


def print_throughput(rows):
    print("| stream | size | floor `agent \\| tee FILE` s, median (min–max) | runbook `run --json > /dev/null` s, median (min–max) | runbook MB/s (median) | runbook ÷ floor, median of rounds (min–max) | CPU s: floor / runbook (medians) | rounds | load avg |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        mbs = r["size"] / 1e6 / statistics.median(r["runbook"])
        extra = f" (Python seed: {r['python']:.2f} s)" if "python" in r else ""
        print(
            f"| {r['label']}{extra} | {r['size'] / 1e6:.0f} MB | {spread(r['floor'])} | {spread(r['runbook'])} | {mbs:.0f} "
            f"| **{statistics.median(r['ratios']):.2f}×** ({min(r['ratios']):.2f}–{max(r['ratios']):.2f}) "
            f"| {statistics.median(r['floor_cpu']):.2f} / {statistics.median(r['cpu']):.2f} | {len(r['ratios'])} | {r['load']:.2f} |"
        )
    if any(r["other"] for r in rows):
        print(f"\nThe other build (`BENCH_COMPARE={os.environ.get('BENCH_COMPARE')}`), in the same rounds:\n")
        print("| stream | other build ÷ floor, median of rounds (min–max) | this build ÷ floor | s: other / this build (medians) | CPU s: other / this build (medians) |")
        print("|---|---:|---:|---:|---:|")
        for r in rows:
            o = r["other"]
            print(f"| {r['label']} | {statistics.median(o):.2f}× ({min(o):.2f}–{max(o):.2f}) | {statistics.median(r['ratios']):.2f}× "
                  f"| {statistics.median(r['other_wall']):.3f} / {statistics.median(r['runbook']):.3f} "
                  f"| {statistics.median(r['other_cpu']):.2f} / {statistics.median(r['cpu']):.2f} |")
    print("\nrunbook's writes alone (no parsing): the stream into a file as the floor does, and at the same time "
          "runbook's event log copied into a new file by the kernel (`agent | tee FILE > /dev/null & cp events.ndjson "
          "FILE2; wait`), in the same rounds:\n")
    print("| stream | input | event log | writes alone s, median (min–max) | writes alone ÷ floor, median of rounds (min–max) | runbook ÷ floor |")
    print("|---|---:|---:|---:|---:|---:|")
    for r in rows:
        w = r["write_ratios"]
        print(f"| {r['label']} | {r['size'] / 1e6:.0f} MB | {r['events_size'] / 1e6:.0f} MB | {spread(r['writes'])} "
              f"| **{statistics.median(w):.2f}×** ({min(w):.2f}–{max(w):.2f}) | {statistics.median(r['ratios']):.2f}× |")
    cores = os.cpu_count()
    print(f"\nThe CPU that 1.2× the floor leaves for reading the lines and making the events: {cores} cores for "
          "1.2× the floor's time, less what the writes alone used (medians), against what runbook used beyond its writes:\n")
    print("| stream | CPU s: writes alone | CPU s left within 1.2× the floor | CPU s: runbook beyond its writes | runbook ÷ what is left |")
    print("|---|---:|---:|---:|---:|")
    for r in rows:
        wc = statistics.median(r["writes_cpu"])
        left = cores * 1.2 * statistics.median(r["floor"]) - wc
        beyond = statistics.median(r["cpu"]) - wc
        print(f"| {r['label']} | {wc:.2f} | {left:.2f} | {beyond:.2f} | {beyond / left:.1f}× |")
    print()


def print_tiny(rows, n):
    for r in rows:
        if not r["label"].startswith("codex, "):
            continue
        eps = [n / w for w in r["runbook"]]
        floor_eps = [n / w for w in r["floor"]]
        print(f"{n:,} tiny Codex `item.*` lines ({r['size'] / n:.0f} bytes each on average): runbook parses, logs and prints "
              f"**{statistics.median(eps) / 1e6:.2f} M events/s** median (min {min(eps) / 1e6:.2f}, max {max(eps) / 1e6:.2f}); "
              f"the floor moves {statistics.median(floor_eps) / 1e6:.2f} M lines/s.\n")


# ---------------------------------------------------------------------------------- latency

PACED_AGENT = r'''#!/usr/bin/env python3
import json, sys, time
if sys.argv[1:] == ["--version"]:
    print("1.0.0"); sys.exit(0)
n, iv, log = {n}, {iv}, {log!r}
out = open(log, "w")
sid = "ses_latency"
w = sys.stdout.write
for i in range(n):
    ts = int(time.time() * 1000)
    w(json.dumps({{"type": "step_start", "timestamp": ts, "sessionID": sid, "part": {{"id": "prt_s%d" % i, "messageID": "msg_%d" % i, "sessionID": sid, "type": "step-start"}}}}) + "\n")
    line = json.dumps({{"type": "text", "timestamp": ts, "sessionID": sid, "part": {{"id": "prt_t%d" % i, "messageID": "msg_%d" % i, "sessionID": sid, "type": "text", "text": "tick %d" % i, "time": {{"start": ts, "end": ts}}}}}}) + "\n"
    t = time.time_ns(); w(line); sys.stdout.flush(); out.write("%d\n" % t)
    w(json.dumps({{"type": "step_finish", "timestamp": ts, "sessionID": sid, "part": {{"id": "prt_f%d" % i, "messageID": "msg_%d" % i, "sessionID": sid, "type": "step-finish", "reason": "stop" if i == n - 1 else "tool-calls", "tokens": {{"total": 2, "input": 1, "output": 1, "reasoning": 0, "cache": {{"read": 0, "write": 0}}}}, "cost": 0.0}}}}) + "\n")
    sys.stdout.flush()
    time.sleep(iv / 1000.0)
out.close()
'''

# The smallest honest streaming relay: read a line, parse it, append it to a log, print it, flush.
PY_RELAY = r'''import json, os, subprocess, sys, threading
logdir, agent = sys.argv[1], sys.argv[2]
os.makedirs(logdir, exist_ok=True)
p = subprocess.Popen([agent], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
def drain_stderr():
    with open(os.path.join(logdir, "stderr.log"), "wb") as f:
        for raw in p.stderr: f.write(raw)
threading.Thread(target=drain_stderr, daemon=True).start()
with open(os.path.join(logdir, "events.ndjson"), "w") as log:
    for raw in p.stdout:
        try: ev = json.loads(raw)
        except ValueError: ev = {"type": "unparsed"}
        line = json.dumps(ev)
        log.write(line + "\n"); log.flush()
        sys.stdout.write(line + "\n"); sys.stdout.flush()
sys.exit(p.wait())
'''

# The seed's supervisor: a thread per pipe, every line parsed, every event logged and printed.
PY_SEED = r'''import json, os, queue, subprocess, sys, threading
logdir, agent = sys.argv[1], sys.argv[2]
os.makedirs(logdir, exist_ok=True)
p = subprocess.Popen([agent], stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
q = queue.Queue()
def pump(pipe, name):
    for raw in pipe: q.put((name, raw))
    q.put((name, None))
for pipe, name in ((p.stdout, "stdout"), (p.stderr, "stderr")):
    threading.Thread(target=pump, args=(pipe, name), daemon=True).start()
steps = tokens = 0
open_ = 2
with open(os.path.join(logdir, "events.ndjson"), "w") as log, open(os.path.join(logdir, "stdout.log"), "wb") as raw_log:
    while open_:
        name, raw = q.get()
        if raw is None:
            open_ -= 1; continue
        if name == "stdout": raw_log.write(raw)
        try: ev = json.loads(raw)
        except ValueError: ev = {"type": "unparsed"}
        if isinstance(ev, dict) and "step" in str(ev.get("type")): steps += 1
        line = json.dumps(ev)
        log.write(line + "\n"); sys.stdout.write(line + "\n")
with open(os.path.join(logdir, "result.json"), "w") as f:
    json.dump({"steps": steps, "exit": p.wait()}, f)
'''


def read_ticks(fd, writes_at_end, arrivals):
    """Stamps each `tick N` seen on fd (a pipe or a pty) when its read returns."""
    buf = b""
    while True:
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        t = time.time_ns()
        buf += chunk
        *done, buf = buf.split(b"\n")
        for line in done:
            i = line.find(b"tick ")
            if i >= 0:
                j = i + 5
                while j < len(line) and line[j : j + 1].isdigit():
                    j += 1
                n = int(line[i + 5 : j])
                arrivals.setdefault(n, t)


def latency_run(mode, rb, dir, n, iv):
    tmp = tempfile.mkdtemp(dir=dir)
    writes = os.path.join(tmp, "writes")
    agent = os.path.join(tmp, "agent.py")
    with open(agent, "w") as f:
        f.write(PACED_AGENT.format(n=n, iv=iv, log=writes))
    os.chmod(agent, 0o755)
    runs = os.path.join(tmp, "runs")
    arrivals = {}
    follower = None
    if mode in ("floor", "floor, on a pty"):
        argv = [agent]
    elif mode == "cat":
        # The least a process in the middle adds: one more read and write, one more wake-up.
        argv = ["/bin/sh", "-c", f"'{agent}' | cat"]
    elif mode == "tee relay":
        # The least a relay that also keeps a log adds.
        argv = ["/bin/sh", "-c", f"'{agent}' | tee '{os.path.join(tmp, 'relay.log')}'"]
    elif mode == "python relay":
        relay = os.path.join(tmp, "relay.py")
        with open(relay, "w") as f:
            f.write(PY_RELAY)
        argv = [sys.executable, relay, os.path.join(tmp, "relay"), agent]
    elif mode in ("runbook --json", "status --live", "other build status --live"):
        argv = [rb, "run", "--agent-bin", agent, "--runs-dir", runs, "--json", "latency"]
    elif mode == "other build --json":
        argv = [os.environ["BENCH_COMPARE"], "run", "--agent-bin", agent, "--runs-dir", runs, "--json", "latency"]
    else:  # the terminal view, on a pseudo-terminal
        argv = [rb, "run", "--agent-bin", agent, "--runs-dir", runs, "latency"]
    if mode == "tee + tail -f":
        # The least a follower in another process adds: the least relay with a log, and that log
        # followed by `tail -f` (inotify), as `status --live` follows runbook's event log.
        log_path = os.path.join(tmp, "relay.log")
        open(log_path, "w").close()
        p = subprocess.Popen(["/bin/sh", "-c", f"'{agent}' | tee '{log_path}' > /dev/null"], env=ENV,
                             stdin=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        follower = subprocess.Popen(["tail", "-s", "0.05", "-n", "+1", f"--pid={p.pid}", "-f", log_path], env=ENV,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        # Reaped as soon as it ends: `tail --pid` waits for a zombie as for a live process.
        reaper = threading.Thread(target=p.wait)
        reaper.start()
        read_ticks(follower.stdout.fileno(), None, arrivals)
        follower.wait()
        reaper.join()
    elif mode in ("terminal view", "floor, on a pty"):
        pid, master = pty.fork()
        if pid == 0:
            os.execve(argv[0], argv, {**ENV, "TERM": "xterm-256color", "COLUMNS": "120", "LINES": "40"})
        read_ticks(master, None, arrivals)
        os.waitpid(pid, 0)
        os.close(master)
    else:
        p = subprocess.Popen(argv, env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        if mode in ("status --live", "other build status --live"):
            follows = rb if mode == "status --live" else os.environ["BENCH_COMPARE"]
            # runbook's own --json stdout, read alongside: its line is out when the event is
            # appended to the log (both are written in the same flush, stdout just before the log).
            appended = {}
            own = threading.Thread(target=read_ticks, args=(p.stdout.fileno(), None, appended))
            own.start()
            # Follow the run from another process as soon as its directory exists.
            while not (os.path.isdir(runs) and os.listdir(runs)):
                time.sleep(0.001)
            follower = subprocess.Popen(
                [follows, "status", "--runs-dir", runs, "--live", "--json"],
                env=ENV, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
            )
            read_ticks(follower.stdout.fileno(), None, arrivals)
            follower.wait()
            own.join()
            shown = sorted((arrivals[i] - t) / 1e6 for i, t in appended.items() if i in arrivals)
        else:
            read_ticks(p.stdout.fileno(), None, arrivals)
        p.wait()
    with open(writes) as f:
        w = [int(l) for l in f]
    shutil.rmtree(tmp, ignore_errors=True)
    lat = sorted((arrivals[i] - t) / 1e6 for i, t in enumerate(w) if i in arrivals)
    if mode in ("status --live", "other build status --live"):
        return lat, len(w), shown
    return lat, len(w), None


def pct(lat, q):
    return lat[min(len(lat) - 1, int(q * len(lat)))]


def over(mode, p99, floor99, pty99, follow99=None):
    if mode.startswith("floor") or mode.endswith("appended → shown"):
        return ""
    if mode == "terminal view":
        return f"{p99 - pty99:+.3f} (over the pty floor)"
    if mode == "status --live" and follow99 is not None:
        return f"{p99 - floor99:+.3f} ({p99 - follow99:+.3f} over the follower's floor)"
    return f"{p99 - floor99:+.3f}"


def latency(rb, dir):
    n, iv, rounds = num("BENCH_PACED", 500), num("BENCH_INTERVAL_MS", 5), num("BENCH_LATENCY_ROUNDS", 3)
    modes = ["floor", "cat", "tee relay", "python relay", "runbook --json", "floor, on a pty", "terminal view", "tee + tail -f", "status --live"]
    shown_modes = ["appended → shown"]
    if os.environ.get("BENCH_COMPARE"):
        modes.insert(modes.index("runbook --json") + 1, "other build --json")
        modes.append("other build status --live")
        shown_modes.append("other build: appended → shown")
    res = {m: [] for m in modes + shown_modes}
    loads = []
    for r in range(rounds):
        loads.append(loadavg())
        for m in modes if r % 2 == 0 else list(reversed(modes)):
            lat, total, shown = latency_run(m, rb, dir, n, iv)
            if len(lat) != total:
                log(f"   {m}: saw {len(lat)} of {total} events")
            res[m].append(lat)
            if shown:
                key = "appended → shown" if m == "status --live" else "other build: appended → shown"
                res[key].append(shown)
            log(f"   latency round {r + 1}/{rounds} {m}: p50 {pct(lat, 0.5):.3f} p99 {pct(lat, 0.99):.3f} ms")
    print(f"Agent write → line shown: {n} paced `text` events, one every {iv} ms, {rounds} rounds interleaved "
          f"(load average {statistics.median(loads):.2f}); milliseconds, median of the rounds (min–max of the rounds):\n")
    print("| path | p50 ms | p99 ms | max ms (median of rounds) | p99 over the floor |")
    print("|---|---:|---:|---:|---:|")
    floor99 = statistics.median(pct(l, 0.99) for l in res["floor"])
    pty99 = statistics.median(pct(l, 0.99) for l in res["floor, on a pty"])
    follow99 = statistics.median(pct(l, 0.99) for l in res["tee + tail -f"])
    names = {
        "floor": "floor: the agent's stdout read directly",
        "cat": "the least relay: `agent \\| cat` (one more process in the middle, nothing else)",
        "tee relay": "the least relay with a log: `agent \\| tee LOG`",
        "python relay": "Python relay (read, `json.loads`, append to a log, print, flush)",
        "runbook --json": "**runbook `--json`** (stdout)",
        "other build --json": f"the other build's `--json` (`BENCH_COMPARE={os.environ.get('BENCH_COMPARE')}`)",
        "floor, on a pty": "floor for a terminal: the agent's output read from a pty",
        "terminal view": "**runbook terminal view** (on a pty)",
        "tee + tail -f": "floor for a follower: `agent \\| tee LOG` followed by `tail -f LOG` (inotify)",
        "status --live": "**`runbook status --live --json`** following the run (agent write → shown)",
        "appended → shown": "`status --live`: runbook's `--json` line out (event appended) → shown",
        "other build status --live": "the other build's `status --live --json` following this build's run (agent write → shown)",
        "other build: appended → shown": "the other build's `status --live`: event appended → shown",
    }
    RESULTS["latency"] = {"events": n, "interval_ms": iv, "rounds": rounds, "load": statistics.median(loads), "paths": {}}
    for m in modes + shown_modes:
        p50 = [pct(l, 0.5) for l in res[m]]
        p99 = [pct(l, 0.99) for l in res[m]]
        mx = [l[-1] for l in res[m]]
        RESULTS["latency"]["paths"][m] = {"p50": statistics.median(p50), "p99": statistics.median(p99), "max": statistics.median(mx)}
        print(f"| {names[m]} | {statistics.median(p50):.3f} ({min(p50):.3f}–{max(p50):.3f}) | "
              f"{statistics.median(p99):.3f} ({min(p99):.3f}–{max(p99):.3f}) | {statistics.median(mx):.2f} | "
              f"{over(m, statistics.median(p99), floor99, pty99, follow99)} |")
    print()


# ------------------------------------------------------------------------------- memory, idle


def peaks(argv, stdout=subprocess.DEVNULL, every=0.005):
    """Runs `argv` and reads its /proc/PID/status every `every` seconds: the peaks of VmHWM, RssFile
    (what it maps of its files: its code, mostly) and RssAnon (its heap), in MiB, and its exit code."""
    p = subprocess.Popen(argv, env=ENV, stdout=stdout, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    top = {"VmHWM": 0, "RssFile": 0, "RssAnon": 0}
    path = f"/proc/{p.pid}/status"
    while p.poll() is None:
        try:
            with open(path) as f:
                for l in f:
                    key, _, value = l.partition(":")
                    if key in top:
                        top[key] = max(top[key], int(value.split()[0]))
        except (OSError, ValueError):
            pass
        time.sleep(every)
    return {k: v / 1024 for k, v in top.items()}, p.returncode


def peak_rss(argv, stdout=subprocess.DEVNULL):
    top, code = peaks(argv, stdout)
    return top["VmHWM"], code


def evict(*paths):
    """Drops the clean pages of `paths` from the page cache. A binary just written by the linker
    sits in the cache as it was written, and a run then maps about 1 MiB more of it than of the
    same file read back from the disk; every build measured is read back the same way."""
    os.sync()
    for path in paths:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def memory(rb, fake, dir, streams):
    """The peak of each stream, ROUNDS runs each, the other build (BENCH_COMPARE) in the same
    rounds; every build's binary is first evicted from the page cache (`evict`)."""
    other = os.environ.get("BENCH_COMPARE")
    builds = [("runbook", rb)] + ([("other", other)] if other else [])
    evict(*(b for _, b in builds))
    rounds = int(os.environ.get("BENCH_MEMORY_ROUNDS", "5"))
    print(f"Peak memory of runbook itself (VmHWM, sampled every 5 ms), `run --json > /dev/null`, {rounds} rounds"
          + (f", the other build (`BENCH_COMPARE={other}`) in the same rounds" if other else "") + ":\n")
    print("| stream | events | runbook VmHWM MiB, median (min–max) |" + (" other build |" if other else ""))
    print("|---|---:|---:|" + ("---:|" if other else ""))
    runs = os.path.join(dir, "runs")
    todo = [(f"opencode {n}", "OpenCode (fake agent)", f"{n:,}", n) for n in (200_000, 10_000_000)]
    todo += [(k, f"{k} ({os.path.getsize(streams[k]) / 1e6:.0f} MB)", "", k)
             for k in ("claude", "codex", "generic") if k in streams]
    for key, label, events, what in todo:
        seen = {name: [] for name, _ in builds}
        for _ in range(rounds if key != "opencode 10000000" else 1):
            for name, b in builds:
                shutil.rmtree(runs, ignore_errors=True)
                if isinstance(what, int):
                    # `env` execs runbook, so the pid sampled is runbook's.
                    argv = ["env", f"FAKE_AGENT_GENERATE={what}", b, "run", "--runs-dir", runs, "--json",
                            "--agent-bin", fake, "bench"]
                else:
                    argv = runbook_argv(b, runs, what, cat_agent(dir, what, streams[what]))
                mib, code = peak_rss(argv)
                # A cycled transcript goes on after its final word, which runbook reports (exit 1).
                if code not in (0, 1):
                    sys.exit(f"{b} exited {code} on the {label} stream: no peak to report")
                seen[name].append(mib)
        mine = statistics.median(seen["runbook"])
        RESULTS.setdefault("memory", {})[key] = mine
        row = f"| {label} | {events} | {mine:.1f} ({min(seen['runbook']):.1f}–{max(seen['runbook']):.1f}) |"
        if other:
            theirs = statistics.median(seen["other"])
            RESULTS.setdefault("memory other", {})[key] = theirs
            row += f" {theirs:.1f} ({min(seen['other']):.1f}–{max(seen['other']):.1f}) |"
        print(row)
    shutil.rmtree(runs, ignore_errors=True)
    print()


def idle(rb, dir):
    secs = num("BENCH_IDLE_SECS", 20)
    agent = os.path.join(dir, "silent.sh")
    with open(agent, "w") as f:
        f.write('#!/bin/sh\n[ "$1" = --version ] && { echo 1.0.0; exit 0; }\necho \'{"type":"session.started","session_id":"s"}\'\nexec sleep 3600\n')
    os.chmod(agent, 0o755)
    runs = os.path.join(dir, "runs-idle")
    p = subprocess.Popen([rb, "run", "--runs-dir", runs, "--json", "--timeout", f"{secs + 3}s", "--agent-cmd", agent, "x"],
                         env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    time.sleep(2)

    def cpu():
        # Every thread's time on a CPU, in nanoseconds (schedstat), not the 10 ms ticks of stat.
        total = 0
        for t in os.listdir(f"/proc/{p.pid}/task"):
            try:
                with open(f"/proc/{p.pid}/task/{t}/schedstat") as f:
                    total += int(f.read().split()[0])
            except OSError:
                pass
        return total / 1e9

    a = cpu()
    time.sleep(secs)
    b = cpu()
    p.wait()
    shutil.rmtree(runs, ignore_errors=True)
    RESULTS["idle"] = {"ms": (b - a) * 1000, "secs": secs}
    print(f"CPU of runbook while the agent is silent: **{(b - a) * 1000:.1f} ms over {secs} s** "
          f"({(b - a) * 1000 / secs:.2f} ms per second; every thread's schedstat, from 2 s after the start).\n")


def main():
    only = set(os.environ.get("BENCH_ONLY", "throughput,tiny,latency,memory,idle").split(","))
    rb, fake = build()
    dir = os.environ.get("BENCH_DIR") or tempfile.mkdtemp(prefix="runbook-adapters-")
    os.makedirs(dir, exist_ok=True)
    streams = make_streams(dir, fake) if only & {"throughput", "memory"} else {}
    tiny_n = num("BENCH_TINY_EVENTS", 5_000_000)
    tiny = make_tiny(dir, tiny_n) if "tiny" in only else None
    print(f"`{os.path.relpath(rb, REPO) if rb.startswith(REPO) else rb}`, {os.cpu_count()} cores, "
          f"load average {loadavg():.2f} at the start, {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    rows = []
    if "throughput" in only or tiny:
        rows = throughput(rb, dir, streams if "throughput" in only else {}, num("BENCH_ROUNDS", 7),
                          tiny, tiny_n, num("BENCH_TINY_ROUNDS", 5))
        print_throughput(rows)
        if tiny:
            print_tiny(rows, tiny_n)
    if "latency" in only:
        latency(rb, dir)
    if "memory" in only:
        memory(rb, fake, dir, streams)
    if "idle" in only:
        idle(rb, dir)
    print(f"Load average at the end: {loadavg():.2f}.")
    if os.environ.get("BENCH_JSON"):
        RESULTS["throughput"] = rows
        RESULTS["tiny_events"] = tiny_n if tiny else 0
        with open(os.environ["BENCH_JSON"], "w") as f:
            json.dump(RESULTS, f)
    if not os.environ.get("BENCH_DIR"):
        shutil.rmtree(dir, ignore_errors=True)


if __name__ == "__main__":
    main()
