"""Memoised speed results: equal to the uncached functions, computed once, errors re-raised unchanged."""

from __future__ import annotations

import threading

import pytest

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.decisions import decision_matrix
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.facts import clear_caches
from planner.memory import plan as memory_plan
from planner.memory.plan import plan_memory
from planner.speed.estimate import estimate_speed
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate_one
from planner.speed.step_cache import (
    ESTIMATES,
    PARTS,
    PLANS,
    RUNS,
    SIMULATIONS,
    estimate_speed_cached,
    plan_memory_cached,
    replica_capacity_cached,
    simulate_one_cached,
)
from planner.speed.workload import SpeedWorkload


@pytest.fixture
def dep() -> Deployment:
    return Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), draft=get_model("Llama-3.2-1B"))


def test_cached_run_equals_the_simulation_and_is_computed_once(dep):
    clear_caches()
    work = ServingWorkload.build(request_rate=6.0, num_prompts=60, prompt_tokens=512, output_tokens=64)
    first = simulate_one_cached(dep, work, alpha=0.7, k=3)
    assert first == simulate_one(dep, work, alpha=0.7, k=3)
    misses = RUNS.misses
    again = simulate_one_cached(dep.model_copy(deep=True), work, alpha=0.7, k=3)
    assert again == first and RUNS.misses == misses
    # a copy: assigning to the returned result never changes what the next caller gets
    again.mean_batch_size = -1.0
    assert simulate_one_cached(dep, work, alpha=0.7, k=3).mean_batch_size == first.mean_batch_size


def test_every_input_is_part_of_the_key(dep):
    work = ServingWorkload.build(request_rate=6.0, num_prompts=40, prompt_tokens=512, output_tokens=64)
    base = simulate_one_cached(dep, work, alpha=0.7, k=3)
    assert simulate_one_cached(dep, work, alpha=0.5, k=3) == simulate_one(dep, work, alpha=0.5, k=3)
    assert simulate_one_cached(dep, work, alpha=0.7, k=2) != base
    faster = work.model_copy(update={"request_rate": 12.0})
    assert simulate_one_cached(dep, faster, alpha=0.7, k=3) == simulate_one(dep, faster, alpha=0.7, k=3)
    bigger = dep.replace(node_id=None, gpu=get_gpu("h200-sxm-141gb"))
    assert simulate_one_cached(bigger, work, alpha=0.7, k=3) == simulate_one(bigger, work, alpha=0.7, k=3)
    assert simulate_one_cached(dep, work) == simulate_one(dep, work)


def test_an_input_that_cannot_run_raises_the_same_error_each_time(dep):
    too_long = ServingWorkload.build(request_rate=1.0, num_prompts=5, prompt_tokens=10**6, output_tokens=8)
    messages = []
    for _ in range(2):
        with pytest.raises(PlannerError) as caught:
            simulate_one_cached(dep, too_long)
        messages.append((type(caught.value), str(caught.value), caught.value.field))
    with pytest.raises(PlannerError) as direct:
        simulate_one(dep, too_long)
    assert messages[0] == messages[1] == (type(direct.value), str(direct.value), direct.value.field)


def test_cached_estimate_equals_the_estimate_and_clear_caches_forgets(dep):
    workload = SpeedWorkload.build(batch_size=8, prompt_tokens=512, output_tokens=128, alpha=0.7)
    assert estimate_speed_cached(dep, workload) == estimate_speed(dep, workload)
    assert ESTIMATES.entries
    clear_caches()
    assert not ESTIMATES.entries and not RUNS.entries


def test_cached_plan_equals_the_plan_and_is_computed_once(dep):
    clear_caches()
    plan = plan_memory_cached(dep)
    assert plan == plan_memory(dep, with_suggestions=False)
    misses = PLANS.misses
    assert plan_memory_cached(dep.model_copy(deep=True)) == plan and PLANS.misses == misses
    assert plan_memory_cached(dep.replace(max_model_len=4096)) != plan and PLANS.misses == misses + 1


def test_the_decision_matrix_at_a_new_batch_sizes_no_memory_again(dep, monkeypatch):
    clear_caches()
    first = decision_matrix(dep, batch_size=8)
    budgets = []
    counted = memory_plan.plan_budget
    monkeypatch.setattr(memory_plan, "plan_budget", lambda *a, **kw: budgets.append(1) or counted(*a, **kw))
    again = decision_matrix(dep, batch_size=16)
    assert not budgets  # every candidate's plan (and the baseline's) is reused
    assert [(r.draft, r.kv_cache_tokens, r.fits) for r in again.rows] == [
        (r.draft, r.kv_cache_tokens, r.fits) for r in first.rows
    ]


def test_a_thread_that_pauses_pauses_before_each_of_its_own_runs_only(dep):
    clear_caches()
    paused: list[str] = []
    work = ServingWorkload.build(request_rate=5.0, num_prompts=40, prompt_tokens=256, output_tokens=32)
    with SIMULATIONS.pausing(lambda: paused.append(threading.current_thread().name)):
        before = SIMULATIONS.count
        simulate_one_cached(dep, work)
        replica_capacity_cached(dep, work.model_copy(update={"mode": "offline"}))
        ran, pauses = SIMULATIONS.count - before, len(paused)
        simulate_one_cached(dep, work)  # cached: no run, no pause
        other = threading.Thread(target=simulate_one_cached, args=(dep, work.model_copy(update={"seed": 7})))
        other.start()
        other.join()
    assert ran >= 2 and pauses >= ran and paused == [threading.current_thread().name] * pauses
    simulate_one_cached(dep, work.model_copy(update={"seed": 8}))
    assert len(paused) == pauses


def test_replicas_that_differ_only_in_k_or_batch_cap_share_their_layouts_parts_and_run_as_if_alone(dep):
    """The step models and the memory plan's fixed inputs are built once per layout; each replica's own draft length
    and batch cap still set its CUDA-graph sizes and its plan, so every run is the one it makes on its own."""
    clear_caches()
    work = ServingWorkload.build(request_rate=6.0, num_prompts=60, prompt_tokens=512, output_tokens=64)
    variants = [dep.replace(num_speculative_tokens=k, max_num_seqs=cap) for k, cap in ((2, None), (7, 64), (4, 8))]
    for variant in variants:
        engine, plan = PARTS.get(variant, True, None)
        assert engine.deployment == variant
        assert plan == plan_memory(variant, with_suggestions=False)
        k = variant.num_speculative_tokens
        assert simulate_one_cached(variant, work, alpha=0.7, k=k) == simulate_one(variant, work, alpha=0.7, k=k)
    assert len(PARTS.layouts) == 1, "one layout: its step models built once"
