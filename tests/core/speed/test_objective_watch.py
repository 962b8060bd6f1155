"""A run stopped as soon as it is certain to miss an objective: the stop is only ever right, the runs it lets finish
are the runs without it, and a fleet search that uses it gives the same fleets."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.catalog.lookup import get_model, get_node
from planner.decisions.fleet import ReplicaSearch
from planner.decisions.fleet_models import Traffic
from planner.deployment import Deployment
from planner.facts import clear_caches
from planner.speed.objective_watch import CertainMiss, MissCounts, ObjectiveWatch
from planner.speed.serving_metrics import percentile
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate_one
from planner.speed.step_cache import SIMULATIONS, simulate_one_cached, simulate_one_unless_missed

DEP = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_model_len=2048)


@given(
    values=st.lists(st.floats(min_value=0.0, max_value=10.0), min_size=1, max_size=60),
    pct=st.sampled_from([50.0, 90.0, 95.0, 99.0, 99.9, 100.0]),
    limit=st.floats(min_value=0.0, max_value=10.0),
)
def test_a_stop_only_ever_comes_where_the_percentile_misses(values, pct, limit):
    counts = MissCounts(ObjectiveWatch(limit, limit, pct), len(values), len(values))
    stopped = False
    for value in values:
        try:
            counts.ttft(value)
        except CertainMiss:
            stopped = True
            break
    if stopped:
        assert percentile(sorted(values), pct) > limit
    over = sum(v > limit for v in values)
    if over == len(values):  # every value over the limit: certain before the end
        assert stopped


def test_an_objective_not_set_never_stops_a_run():
    counts = MissCounts(ObjectiveWatch(None, None, 99.0), 10, 10)
    for _ in range(10):
        counts.ttft(1e9)
        counts.tpot(1e9)


@pytest.mark.parametrize(
    ("watch", "rate"),
    [(ObjectiveWatch(0.5, None, 99.0), 200.0), (ObjectiveWatch(None, 0.012, 90.0), 60.0)],
    ids=["TTFT under overload", "TPOT at a large batch"],
)
def test_a_stopped_run_misses_that_objective_in_full(watch, rate):
    workload = ServingWorkload.build(request_rate=rate, num_prompts=300, prompt_tokens=1024, output_tokens=128)
    with pytest.raises(CertainMiss):
        simulate_one(DEP, workload, watch=watch)
    run = simulate_one(DEP, workload)
    value, limit = (
        (run.ttft_at(watch.percentile), watch.ttft_limit_s)
        if watch.ttft_limit_s is not None
        else (run.tpot_at(watch.percentile), watch.tpot_limit_s)
    )
    assert value > limit


def test_a_watched_run_that_completes_is_the_run_without_a_watch():
    workload = ServingWorkload.build(request_rate=2.0, num_prompts=200, prompt_tokens=512, output_tokens=64)
    watched = simulate_one(DEP, workload, watch=ObjectiveWatch(2.0, 0.2, 99.0))
    assert watched == simulate_one(DEP, workload)


def test_the_cached_run_is_kept_when_it_completes_and_read_when_kept():
    clear_caches()
    workload = ServingWorkload.build(request_rate=2.0, num_prompts=200, prompt_tokens=512, output_tokens=64)
    first = simulate_one_unless_missed(DEP, workload, ObjectiveWatch(2.0, 0.2, 99.0))
    before = SIMULATIONS.count
    assert simulate_one_cached(DEP, workload) == first and SIMULATIONS.count == before  # kept: not run again
    overload = ServingWorkload.build(request_rate=200.0, num_prompts=300, prompt_tokens=1024, output_tokens=128)
    full = simulate_one_cached(DEP, overload)  # kept in full first: read, whatever the watch
    assert simulate_one_unless_missed(DEP, overload, ObjectiveWatch(0.5, None, 99.0)) == full
    assert SIMULATIONS.count == before + 1


def test_a_fleet_search_learns_a_miss_from_a_stopped_run_and_keeps_no_run_for_it():
    clear_caches()
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4)
    traffic = Traffic(requests_per_s=40, prompt_tokens=1024, output_tokens=256, ttft_slo_s=2.0, tpot_slo_s=0.2)
    watched = ReplicaSearch(dep, traffic, None, None)
    assert watched.misses_at(1) and 1 not in watched.runs
    assert watched.misses_at(40) == bool(ReplicaSearch(dep, traffic, None, None).misses(watched.at(40)))
    assert ReplicaSearch(dep, traffic, None, None).misses(ReplicaSearch(dep, traffic, None, None).at(1))
