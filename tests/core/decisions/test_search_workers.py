"""The search in worker processes gives the very figures it gives in one process (planner/decisions/search/workers.py).

Each comparison runs the search in fresh processes of its own: a process that runs other threads (a test runner's,
a page's server) never forks workers, and one process's kept evaluations must not answer the other's search.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from planner.decisions.search import NO_OBJECTIVES, SearchSpace, SearchWorkload
from planner.decisions.search import workers as search_workers
from planner.decisions.search.evaluate import Evaluator
from planner.decisions.search.workers import PARALLEL_MIN_POINTS, deal, usable_cpus, worker_count
from planner.defaults import MAX_SEARCH_PROCESSES

REPO = Path(__file__).resolve().parents[3]

SEARCH = """
import json, os, sys
from planner.decisions.search import NO_OBJECTIVES, Objectives, SearchSpace, SearchWorkload, search
from planner.decisions.search import workers
if sys.argv[2] == "worker dies":
    workers._serve = lambda *args: os._exit(3)  # each forked worker dies before it answers
space = SearchSpace.build(target="Llama-3.1-8B", nodes=("1x-h100-sxm-80gb", "8x-h100-sxm-80gb", "1x-h200-sxm-141gb"),
                          dtypes=("bf16", "fp8"), ks=(1, 3), batch_caps=(8, 32, 128))
result = search(space, SearchWorkload(requests_per_s=40, prompt_tokens=1024, output_tokens=256),
                Objectives(ttft_slo_s=0.5, tpot_slo_s=0.02), workers=int(sys.argv[1]))
out = result.as_json()
stages = out.pop("stage_seconds")
out.pop("seconds")
print(json.dumps({"stages": sorted(stages), "result": out}))
"""


def _search_in_a_process(workers: int, how: str = "") -> dict:
    done = subprocess.run(
        [sys.executable, "-c", SEARCH, str(workers), how], cwd=REPO, capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def alone() -> dict:
    return _search_in_a_process(1)


def test_two_processes_give_the_figures_of_one(alone):
    shared = _search_in_a_process(2)
    assert alone["stages"] == ["plan", "screen", "simulate", "size"]
    assert shared["stages"] == ["plan and screen in 2 processes", "simulate", "size"]
    assert shared["result"] == alone["result"]  # every point's figures, the frontiers, the recommendation, the notes
    assert alone["result"]["simulated_points"] > 10 and alone["result"]["recommended"] is not None


def test_a_worker_that_dies_leaves_its_share_to_the_search(alone):
    survived = _search_in_a_process(2, "worker dies")
    assert survived["result"] == alone["result"]


def _evaluator() -> tuple[Evaluator, list]:
    space = SearchSpace.build(
        target="Llama-3.1-8B", nodes=("1x-h100-sxm-80gb", "8x-h100-sxm-80gb"), dtypes=("bf16", "fp8"), ks=(1, 2)
    )
    ev = Evaluator(space, SearchWorkload(requests_per_s=5, prompt_tokens=512, output_tokens=128), NO_OBJECTIVES)
    return ev, ev.points()


def test_shares_hold_whole_layouts_and_every_point_once():
    ev, points = _evaluator()
    dealt = deal(ev, points, 3)
    assert sorted(p.index for share in dealt for p in share) == [p.index for p in points]
    owners = {}
    for i, share in enumerate(dealt):
        for p in share:
            assert owners.setdefault(ev.layout(p), i) == i  # a layout's speculators stay in one process
    sizes = sorted(len(share) for share in dealt)
    largest_layout = max(sum(ev.layout(p) == layout for p in points) for layout in owners)
    assert sizes[-1] - sizes[0] <= largest_layout


def test_no_fork_while_another_thread_runs(monkeypatch):
    monkeypatch.setattr(search_workers, "can_fork", lambda: True)
    assert worker_count(PARALLEL_MIN_POINTS - 1) == 1  # a small space: not worth a fork
    assert worker_count(PARALLEL_MIN_POINTS) == min(usable_cpus(), MAX_SEARCH_PROCESSES)
    monkeypatch.setattr(search_workers, "usable_cpus", lambda: 64)
    assert worker_count(PARALLEL_MIN_POINTS) == MAX_SEARCH_PROCESSES
    assert worker_count(10, wanted=3) == 3
    monkeypatch.undo()
    stop = threading.Event()
    other = threading.Thread(target=stop.wait)
    other.start()
    try:
        assert worker_count(PARALLEL_MIN_POINTS, wanted=4) == 1
        ev, points = _evaluator()
        with search_workers.Workers(ev, points, count=2) as pool:
            assert pool.count == 1 and not pool.workers
    finally:
        stop.set()
        other.join()
