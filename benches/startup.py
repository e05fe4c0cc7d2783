# Usage: python3 benches/startup.py RUNBOOK FAKE_AGENT N
# Median wall time of `runbook run` and of its start-up (run.started to turn.started, from the
# event log) over N runs of a one-step fake agent, as OpenCode (version 1.99.0, untested) and as
# Codex without --model (its config.toml read for the model).
import json, os, statistics, subprocess, sys, tempfile, time
from datetime import datetime
runbook, fake, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
tmp = tempfile.mkdtemp()
oc = os.path.join(tmp, "oc.ndjson")
open(oc, "w").write('{"type":"step_start","timestamp":1,"sessionID":"s","part":{"id":"p1","messageID":"m1","sessionID":"s","type":"step-start"}}\n'
  '{"type":"step_finish","timestamp":3,"sessionID":"s","part":{"id":"p3","reason":"stop","messageID":"m1","sessionID":"s","type":"step-finish","tokens":{"total":1540,"input":1500,"output":40,"reasoning":0,"cache":{"write":0,"read":0}},"cost":0.0051}}\n')
cx = os.path.join(tmp, "cx.ndjson")
open(cx, "w").write('{"type":"thread.started","thread_id":"t"}\n{"type":"turn.started"}\n'
  '{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ok"}}\n'
  '{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":0,"output_tokens":5,"reasoning_output_tokens":0}}\n')
home = os.path.join(tmp, "codex"); os.makedirs(home)
open(os.path.join(home, "config.toml"), "w").write('model = "gpt-5.5"\n')
def ts(s): return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()
def one(agent, scenario, env_extra):
    runs = os.path.join(tmp, "runs"); os.makedirs(runs, exist_ok=True)
    env = {"PATH": os.environ["PATH"], "HOME": tmp, "RUNBOOK_RUNS_DIR": runs, "FAKE_AGENT_SCENARIO": scenario, **env_extra}
    t0 = time.monotonic()
    out = subprocess.run([runbook, "run", "--json", "--agent", agent, "--agent-bin", fake, "go"], env=env, capture_output=True, text=True)
    wall = time.monotonic() - t0
    events = [json.loads(l) for l in out.stdout.splitlines()]
    started = {e["type"]: ts(e["ts"]) for e in events if "ts" in e}
    return wall, started["turn.started"] - started["run.started"]
for label, agent, scenario, extra in [
    ("opencode, version 1.99.0 (untested)", "opencode", oc, {"FAKE_AGENT_VERSION": "1.99.0"}),
    ("codex without --model (config.toml)", "codex", cx, {"FAKE_AGENT_VERSION": "codex-cli 0.169.0", "CODEX_HOME": home}),
]:
    one(agent, scenario, extra)  # warm-up
    samples = [one(agent, scenario, extra) for _ in range(n)]
    walls = [s[0] * 1000 for s in samples]; starts = [s[1] * 1000 for s in samples]
    print(f"| {label} | {statistics.median(walls):.1f} ms | {statistics.median(starts):.2f} ms |")
