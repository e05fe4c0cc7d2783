#!/usr/bin/env python3
"""Peak memory of `runbook run --json > /dev/null` on one stream, several builds in interleaved
rounds, split into what the process maps of its files (its code, mostly) and its heap.

    python3 benches/peak_memory.py ROUNDS KIND AGENT RUNBOOK [RUNBOOK...]

KIND is the agent runbook is told it runs (`codex`, `claude`, `opencode`; `generic` for
`--agent-cmd`), AGENT a program that prints the stream (benches/adapters.py leaves one per
stream in its BENCH_DIR, e.g. agent-codex.sh). Each run's /proc/PID/status is read every 2 ms:
the peaks of VmHWM, RssFile and RssAnon are printed per build, one figure per round, in MiB.
The loop detector only warns (RUNBOOK_STUCK=warn), as in benches/adapters.py, so a recorded
stream that repeats itself is read to its end.
"""
import os
import shutil
import subprocess
import sys
import tempfile
import time


def peaks(runbook, kind, agent, runs):
    shutil.rmtree(runs, ignore_errors=True)
    flags = ["--agent-cmd", agent] if kind == "generic" else ["--agent", kind, "--agent-bin", agent]
    env = dict(os.environ, RUNBOOK_STUCK="warn")
    argv = [runbook, "run", "--runs-dir", runs, "--json", *flags, "bench"]
    p = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    top = {"VmHWM": 0, "RssFile": 0, "RssAnon": 0}
    while p.poll() is None:
        try:
            with open(f"/proc/{p.pid}/status") as f:
                for line in f:
                    key, value = line.split(":", 1)
                    if key in top:
                        top[key] = max(top[key], int(value.split()[0]))
        except (OSError, ValueError):
            pass
        time.sleep(0.002)
    if p.returncode != 0:
        sys.exit(f"peak_memory: {runbook} exited {p.returncode}")
    return {k: v / 1024 for k, v in top.items()}


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    rounds, kind, agent, builds = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4:]
    runs = os.path.join(tempfile.mkdtemp(prefix="peak-memory-"), "runs")
    seen = {b: [] for b in builds}
    for _ in range(rounds):
        for b in builds:
            seen[b].append(peaks(b, kind, agent, runs))
    shutil.rmtree(os.path.dirname(runs), ignore_errors=True)
    for b in builds:
        print(b)
        for key in ("VmHWM", "RssFile", "RssAnon"):
            print(f"  {key:8} " + " ".join(f"{r[key]:.1f}" for r in seen[b]))


if __name__ == "__main__":
    main()
