"""Speed of use of the core, part of `make bench-app` (prints, never asserts).

- ``python -m planner params --model Llama-3.1-8B`` as a process, wall and CPU time (median of 5): the
  command line imports only the command it runs;
- the Fleet page's default scenario planned by the core (:func:`planner.decisions.plan_fleet`) in a fresh
  process, its garbage collector set as the app's server sets it (``planner.interpreter``): cold (nothing
  simulated yet; catalog and imports already loaded), warm (the same call again) and after one objective change
  (TPOT to 40 ms), with the replica simulations it ran (capacity runs included), and the Fleet page's checks of
  every option that meets the objectives, on three draws of the traffic and of its speed margin (after the cold
  plan, its buttons); then the same for six node types (the default four, 8x B200 and 8x A100 80GB) in another
  fresh process; then the default scenario cold once more with CPython's own collector settings, for what the
  tuning saves. Each Fleet plan is timed in ``FLEET_PROCESSES`` fresh processes: the median, and the range of the
  wall times.

The Fleet plans quote their node types side by side in one worker process per CPU (``PLANNER_WORKERS``,
planner/decisions/side_by_side.py): the CPU time printed beside each wall time includes the workers'. The default
scenario is timed once more in one process (``PLANNER_WORKERS=1``), what a machine of one CPU would see. On a shared
machine every figure is an upper bound.
``--instructions`` prints instead the instructions the default Fleet plan executes cold (valgrind), a count that does
not move with the machine's load: what to compare when a change is meant to make the plan faster.
"""

from __future__ import annotations

import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from planner.decisions.side_by_side import WORKERS_ENV

REPO = Path(__file__).resolve().parents[1]

_FLEET = """
import json, resource, time
from planner.catalog import get_model, get_node
from planner.decisions import options_across_draws, options_speed_margins, plan_fleet
from planner.defaults import TRAFFIC_DRAWS
from planner.interpreter import tune_collector
from planner.launch import quoted_deployment
from planner.scenario import Scenario
from planner.speed.step_cache import SIMULATIONS

s = Scenario()
traffic = s.traffic()
target, draft = get_model(s.target), get_model(s.draft) if s.draft else None
nodes = [get_node(n) for n in s.fleet_nodes + tuple(EXTRA_NODES)]
out = {}
if TUNED:
    tune_collector()  # as the app's server does once it has started (ui/_server.py)
tighter = traffic.model_copy(update={"tpot_slo_s": 0.04})
engine = "vllm" if s.engine == "hf" else s.engine
asked = (("cold", traffic), ("warm", traffic), ("TPOT objective changed", tighter))


def cpu_s():  # this process's CPU time and its workers' (planner/decisions/side_by_side.py), once they have ended
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


for label, t in asked if TUNED else asked[:1]:  # with CPython's own collector settings: cold only
    runs = SIMULATIONS.count
    wall, cpu = time.perf_counter(), cpu_s()
    plan = plan_fleet(target, nodes, t, draft=draft, method=s.method, engine=engine, kv_dtype=s.kv_dtype)
    out[label] = [time.perf_counter() - wall, cpu_s() - cpu, SIMULATIONS.count - runs]
    if label == "cold" and DRAWS:  # the page's button: every option that meets the objectives on 3 draws
        fields = {"method": s.method, "engine": engine, "kv_dtype": s.kv_dtype}
        runs = SIMULATIONS.count
        wall, cpu = time.perf_counter(), cpu_s()
        options_across_draws(plan, lambda q: quoted_deployment(target, q, t, draft=draft, **fields), TRAFFIC_DRAWS)
        out["its options on 3 draws of the traffic"] = [
            time.perf_counter() - wall, cpu_s() - cpu, SIMULATIONS.count - runs
        ]
        runs = SIMULATIONS.count  # the page's other button: every option's speed margin
        wall, cpu = time.perf_counter(), cpu_s()
        options_speed_margins(plan, lambda q: quoted_deployment(target, q, t, draft=draft, **fields))
        out["its options' speed margins"] = [
            time.perf_counter() - wall, cpu_s() - cpu, SIMULATIONS.count - runs
        ]
print(json.dumps(out))
"""

_FLEET_INSTRUCTIONS = """
from planner.catalog import get_model, get_node
from planner.decisions import plan_fleet
from planner.interpreter import tune_collector
from planner.scenario import Scenario

s = Scenario()
target, draft = get_model(s.target), get_model(s.draft) if s.draft else None
nodes = [get_node(n) for n in s.fleet_nodes]
tune_collector()
engine = "vllm" if s.engine == "hf" else s.engine
if PLAN:
    plan_fleet(target, nodes, s.traffic(), draft=draft, method=s.method, engine=engine, kv_dtype=s.kv_dtype)
"""

#: Fresh processes each Fleet plan is timed in (the median is printed: one process on a shared machine varies by
#: about a tenth).
FLEET_PROCESSES = 3

#: Node types added to the default four for the six-node plan: both serve Llama-3.1-70B on one node.
SIX_NODE_EXTRA = ("8x-b200-180gb", "8x-a100-sxm-80gb")


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


def fleet_plan_times(
    extra_nodes: tuple[str, ...] = (), tuned: bool = True, workers: int | None = None
) -> dict[str, list[float]]:
    """Wall s, CPU s (the workers' included) and simulations of the default Fleet plan (plus ``extra_nodes``): cold,
    warm, objective change (``tuned`` False: cold only, with CPython's own garbage-collector settings; ``workers``:
    ``PLANNER_WORKERS``, else one worker process per CPU, planner/decisions/side_by_side.py)."""
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    if workers is not None:
        env[WORKERS_ENV] = str(workers)
    code = f"EXTRA_NODES = {extra_nodes!r}\nTUNED = {tuned!r}\nDRAWS = {tuned and not extra_nodes!r}\n" + _FLEET
    proc = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, check=True, capture_output=True, text=True)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def instructions(plan: bool) -> int:
    """Instructions a process executes (valgrind's cachegrind, ``I refs``) that loads the default Fleet scenario and,
    with ``plan``, plans it cold: the same count on any machine, where wall times move with the machine's load."""
    env = {**os.environ, "PYTHONPATH": str(REPO), WORKERS_ENV: "1"}  # every instruction in the one process counted
    command = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    code = f"PLAN = {plan!r}\n" + _FLEET_INSTRUCTIONS
    proc = subprocess.run([*command, sys.executable, "-c", code], cwd=REPO, env=env, check=True, capture_output=True,
                          text=True)  # fmt: skip
    found = re.search(r"I\s+refs:\s+([\d,]+)", proc.stderr)
    if found is None:
        raise RuntimeError(f"valgrind printed no instruction count: {proc.stderr[-300:]}")
    return int(found.group(1).replace(",", ""))


def main(argv: Sequence[str] = ()) -> int:
    if "--instructions" in argv:  # about a minute: two processes under valgrind
        if shutil.which("valgrind") is None:
            print("valgrind is not installed: apt-get install -y valgrind")
            return 2
        planned, loaded = instructions(plan=True), instructions(plan=False)
        print("Fleet default scenario planned cold, instructions executed (valgrind; the same on any machine)")
        print(f"  {(planned - loaded) / 1e6:,.0f} million (the process {planned / 1e6:,.0f} million, of which "
              f"{loaded / 1e6:,.0f} million load the scenario)")  # fmt: skip
        return 0
    times, cpu = params_process_s()
    print("Core speed of use, ms")
    print(f"{'params as a process, median of 5':<52} {'wall':>8} {'cpu':>8}")
    print(f"{'':<52} {statistics.median(times) * 1e3:8.0f} {statistics.median(cpu) * 1e3:8.0f}")
    for title, extra in (("Fleet default scenario", ()), ("Fleet, six node types", SIX_NODE_EXTRA)):
        processes = [fleet_plan_times(extra) for _ in range(FLEET_PROCESSES)]
        print(f"{title + f', median of {FLEET_PROCESSES} processes':<52} {'wall':>8} {'cpu':>8} "
              f"{'simulations':>12} {'wall range':>14}")  # fmt: skip
        for label in processes[0]:
            walls = sorted(times[label][0] for times in processes)
            wall, cpu, runs = (statistics.median(times[label][i] for times in processes) for i in range(3))
            spread = f"{walls[0] * 1e3:.0f}-{walls[-1] * 1e3:.0f}"
            print(f"{'  ' + label:<52} {wall * 1e3:8.0f} {cpu * 1e3:8.0f} {runs:12.0f} {spread:>14}")
    print(f"{'Fleet default scenario, CPython collector settings':<52} {'wall':>8} {'cpu':>8} {'simulations':>12}")
    for label, (wall, cpu, runs) in fleet_plan_times(tuned=False).items():
        print(f"{'  ' + label:<52} {wall * 1e3:8.0f} {cpu * 1e3:8.0f} {runs:12d}")
    print(f"{f'Fleet default scenario, {WORKERS_ENV}=1 (one process)':<52} {'wall':>8} {'cpu':>8} {'simulations':>12}")
    for label, (wall, cpu, runs) in fleet_plan_times(tuned=True, workers=1).items():
        if label in ("cold", "TPOT objective changed"):
            print(f"{'  ' + label:<52} {wall * 1e3:8.0f} {cpu * 1e3:8.0f} {runs:12d}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
