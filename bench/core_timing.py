"""Speed of use of the core, part of `make bench-app` (prints, never asserts).

- ``python -m planner params --model Llama-3.1-8B`` as a process, wall and CPU time (median of 5): the
  command line imports only the command it runs;
- the Fleet page's default scenario planned by the core (:func:`planner.decisions.plan_fleet`) in a fresh
  process: cold (nothing simulated yet; catalog and imports already loaded), warm (the same call again) and
  after one objective change (TPOT 50 -> 40 ms), with the simulated runs it computed and reused.

On a shared machine every figure is an upper bound (the CPU time of the fleet plans is printed beside it).
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

_FLEET = """
import json, time
from planner.catalog import get_model, get_node
from planner.decisions import plan_fleet
from planner.scenario import Scenario
from planner.speed.step_cache import RUNS

s = Scenario()
traffic = s.traffic()
target, draft = get_model(s.target), get_model(s.draft) if s.draft else None
nodes = [get_node(n) for n in s.fleet_nodes]
out = {}
tighter = traffic.model_copy(update={"tpot_slo_s": 0.04})
engine = "vllm" if s.engine == "hf" else s.engine
for label, t in (("cold", traffic), ("warm", traffic), ("TPOT objective changed", tighter)):
    hits, misses = RUNS.hits, RUNS.misses
    wall, cpu = time.perf_counter(), time.process_time()
    plan_fleet(target, nodes, t, draft=draft, method=s.method, engine=engine, kv_dtype=s.kv_dtype)
    out[label] = [time.perf_counter() - wall, time.process_time() - cpu, RUNS.misses - misses, RUNS.hits - hits]
print(json.dumps(out))
"""


def params_process_s(samples: int = 5) -> tuple[list[float], list[float]]:
    """Wall and CPU (user + system) seconds of each ``params`` process."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    times, cpu = [], []
    for _ in range(samples):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        subprocess.run(
            [sys.executable, "-m", "planner", "params", "--model", "Llama-3.1-8B"],
            cwd=REPO, env=env, check=True, capture_output=True,
        )  # fmt: skip
        times.append(time.perf_counter() - start)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return times, cpu


def fleet_plan_times() -> dict[str, list[float]]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([sys.executable, "-c", _FLEET], cwd=REPO, env=env, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> int:
    times, cpu = params_process_s()
    print("Core speed of use, ms")
    print(f"{'params as a process, median of 5':<52} {'wall':>8} {'cpu':>8}")
    print(f"{'':<52} {statistics.median(times) * 1e3:8.0f} {statistics.median(cpu) * 1e3:8.0f}")
    print(f"{'Fleet default scenario, plan_fleet':<52} {'wall':>8} {'cpu':>8} {'runs':>6} {'reused':>6}")
    for label, (wall, cpu, runs, reused) in fleet_plan_times().items():
        print(f"{'  ' + label:<52} {wall * 1e3:8.0f} {cpu * 1e3:8.0f} {runs:6d} {reused:6d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
