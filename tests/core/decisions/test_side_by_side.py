"""Node types quoted side by side in worker processes (planner/decisions/side_by_side.py): the same answers as one
after another, the workers' runs kept by the caller, errors in their own words, a dead worker's jobs done here."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.decisions import Traffic, compare_nodes, options_across_draws, options_speed_margins, plan_fleet
from planner.decisions.fleet_quotes import quote_is_kept
from planner.decisions.side_by_side import (
    WORKER_SLOTS,
    WORKERS_ENV,
    _forks,
    cgroup_cpu_quota,
    side_by_side,
    worker_count,
)
from planner.deployment import Deployment
from planner.errors import InputError
from planner.facts import clear_caches
from planner.launch import quoted_deployment
from planner.speed.serving_workload import ServingWorkload
from planner.speed.step_cache import RUNS, SIMULATIONS, simulate_one_cached

forks = pytest.mark.skipif(not _forks(), reason="worker processes are forked on Linux only")

PARENT = os.getpid()
REPO = Path(__file__).resolve().parents[3]


def _pid(_item: int) -> int:
    return os.getpid()


@forks
def test_items_of_one_group_run_in_one_worker_in_order():
    seen = []

    def where(item: str) -> tuple[str, int]:
        seen.append(item)  # in the worker's copy: what it computed before this item
        return "".join(seen), os.getpid()

    answers = dict(side_by_side(where, ["a1", "b1", "a2", "b2"], group=lambda item: item[0], workers=2))
    assert answers[2][0].endswith("a1a2") and answers[3][0].endswith("b1b2")  # each group in its order, in one job
    assert answers[0][1] == answers[2][1] != PARENT and answers[1][1] == answers[3][1] != PARENT
    assert seen == []  # nothing was computed here


def test_one_worker_computes_here_in_order():
    assert list(side_by_side(_pid, [1, 2, 3], workers=1)) == [(0, PARENT), (1, PARENT), (2, PARENT)]


@forks
def test_an_error_comes_back_in_its_own_words_and_other_exceptions_are_raised():
    def check(n: int) -> int:
        if n < 0:
            raise InputError("n", n, "0 or more")
        if n == 0:
            raise ZeroDivisionError("a defect, not an input")
        return n

    answers = dict(side_by_side(check, [3, -1], workers=2))
    error = answers[1]
    assert isinstance(error, InputError) and (error.field, error.value, error.allowed) == ("n", -1, "0 or more")
    assert str(error) == "n = -1 is not allowed: expected 0 or more"
    with pytest.raises(ZeroDivisionError, match="a defect"):
        list(side_by_side(check, [3, 0], workers=2))


@forks
def test_the_jobs_of_a_worker_that_dies_are_done_here():
    def dies_in_a_worker(n: int) -> int:
        if os.getpid() != PARENT and n == 2:
            os._exit(1)
        return n * 10

    assert sorted(side_by_side(dies_in_a_worker, [1, 2, 3], workers=2)) == [(0, 10), (1, 20), (2, 30)]


@forks
def test_a_workers_runs_are_kept_here_and_counted():
    clear_caches()
    dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"))
    rates = [2.0, 4.0]

    def run(rate: float) -> float:
        work = ServingWorkload.build(request_rate=rate, num_prompts=40, prompt_tokens=256, output_tokens=32)
        return simulate_one_cached(dep, work).ttft_at(99)

    before = SIMULATIONS.count
    there = dict(side_by_side(run, rates, workers=2))
    assert SIMULATIONS.count - before == 2 and len(RUNS.entries) == 2  # the workers' two runs, counted and kept here
    here = {i: run(rate) for i, rate in enumerate(rates)}
    assert SIMULATIONS.count - before == 2  # read from what the workers handed back: nothing simulated again
    assert here == there


_HELD_AT_THE_FORK = """
from planner.decisions.side_by_side import side_by_side
from planner.speed.step_cache import RUNS

def takes_the_lock(_item):
    taken = RUNS.lock.acquire(timeout=5)
    if taken:
        RUNS.lock.release()
    return taken

with RUNS.lock:  # held by this thread while the workers are forked
    print(sorted(side_by_side(takes_the_lock, [1, 2], workers=2)))
"""


@forks
@pytest.mark.slow
def test_a_lock_held_here_at_the_fork_is_free_in_the_worker():
    # in a process group of its own: without new locks in the workers, they would wait for this one for ever
    process = subprocess.Popen(
        [sys.executable, "-c", _HELD_AT_THE_FORK], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        cwd=REPO, start_new_session=True,
    )  # fmt: skip
    try:
        out, err = process.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.communicate()
        pytest.fail("the workers waited for a lock held by a thread they do not have")
    assert out.strip() == "[(0, True), (1, True)]", err


def test_quotes_side_by_side_are_the_quotes_one_after_another():
    target = get_model("Llama-3.1-8B")
    nodes = [get_node(n) for n in ("1x-h100-sxm-80gb", "1x-l40s-48gb", "8x-h100-sxm-80gb", "1x-a100-sxm-80gb")]
    traffic = Traffic(requests_per_s=3, prompt_tokens=512, output_tokens=128, ttft_slo_s=1.0, alpha=0.8)
    draft = get_model("Llama-3.2-1B")
    answers, simulations = [], []
    for workers in (1, 3):
        clear_caches()
        before = SIMULATIONS.count
        answers.append(compare_nodes(target, nodes, traffic, draft=draft, workers=workers, engine="vllm"))
        simulations.append(SIMULATIONS.count - before)
        assert all(quote_is_kept(target, node, traffic, draft=draft, engine="vllm") for node in nodes)
    assert answers[0] == answers[1]
    # the two H100 node types share their replicas' runs in one job, as they do one after another
    assert simulations[0] == simulations[1] > 0


def test_the_number_of_workers_is_the_setting_or_the_cpus_never_more_than_the_jobs(monkeypatch):
    monkeypatch.setenv(WORKERS_ENV, "3")
    assert (worker_count(8), worker_count(2), worker_count(8, 1)) == (3, 2, 1)
    monkeypatch.delenv(WORKERS_ENV)
    assert 1 <= worker_count(64) <= (os.cpu_count() or 1)
    for bad in ("0", "two", "-1"):
        monkeypatch.setenv(WORKERS_ENV, bad)
        with pytest.raises(InputError, match=f"{WORKERS_ENV} = '{bad}' is not allowed: expected a whole number"):
            worker_count(4)


@forks
def test_the_pages_checks_of_every_option_side_by_side_are_those_one_after_another():
    target, draft = get_model("Llama-3.1-8B"), get_model("Llama-3.2-1B")
    nodes = [get_node("8x-h100-sxm-80gb"), get_node("1x-l40s-48gb")]
    traffic = Traffic(requests_per_s=20, prompt_tokens=512, output_tokens=128, ttft_slo_s=0.3, tpot_slo_s=0.03)
    plan = plan_fleet(target, nodes, traffic, draft=draft, engine="vllm", workers=1)
    assert len({q.gpu for q in plan.meeting}) == 2  # options of two GPUs: two jobs

    def deployment_of(quoted):
        return quoted_deployment(target, quoted, traffic, draft=draft, engine="vllm")

    answers, seen = [], []
    for workers in (1, 2):
        clear_caches()
        seen.clear()
        draws = options_across_draws(plan, deployment_of, 2, workers=workers)
        margins = options_speed_margins(
            plan, deployment_of, workers=workers, before_option=lambda done, quoted: seen.append(done)
        )
        answers.append((draws, margins))
        assert seen == list(range(len(plan.meeting)))  # the progress bar: before each, as they are done
    assert answers[0] == answers[1]


@pytest.mark.parametrize(
    ("files", "quota"),
    [
        ({"cpu.max": "150000 100000\n"}, 2),  # cgroup v2: 1.5 CPUs, rounded up
        ({"cpu.max": "max 100000\n"}, None),
        ({"cpu/cpu.cfs_quota_us": "400000\n", "cpu/cpu.cfs_period_us": "100000\n"}, 4),  # cgroup v1
        ({"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}, None),
        ({"cpu.max": "garbled"}, None),
        ({}, None),
    ],
)
def test_a_containers_cpu_quota_bounds_the_workers(tmp_path, files, quota):
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    assert cgroup_cpu_quota(tmp_path) == quota


@forks
def test_computations_at_the_same_time_share_the_workers_and_give_them_back():
    assert sorted(pid for _, pid in side_by_side(_pid, [1, 2], workers=2)) != [PARENT, PARENT]
    assert WORKER_SLOTS.busy == 0  # given back once done
    taken = WORKER_SLOTS.take(1, limit=2)  # another visitor's plan holds one of the two workers
    try:
        assert list(side_by_side(_pid, [1, 2], workers=2)) == [(0, PARENT), (1, PARENT)]  # one left: done here
    finally:
        WORKER_SLOTS.give(taken)
    assert WORKER_SLOTS.busy == 0


@forks
def test_a_worker_forks_no_workers_of_its_own():
    def inner_pids(_item: int) -> tuple[int, list[int]]:
        return os.getpid(), [pid for _, pid in side_by_side(_pid, [1, 2], workers=2)]

    for worker, inner in (answer for _, answer in side_by_side(inner_pids, [1, 2], workers=2)):
        assert worker != PARENT and inner == [worker, worker]


def test_items_answered_already_come_first_in_order_from_here():
    answers = list(side_by_side(_pid, [1, 2, 3, 4], workers=2, kept=lambda n: n % 2 == 0))
    assert answers[:2] == [(1, PARENT), (3, PARENT)] and sorted(i for i, _ in answers[2:]) == [0, 2]
