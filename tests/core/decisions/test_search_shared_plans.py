"""The search plans each layout and speculator once and applies K and the batch cap after the shared part: the
plan it gets equals the plan of the point's deployment alone, field by field."""

from __future__ import annotations

import random

from planner.decisions.search import Objectives, SearchSpace, SearchWorkload
from planner.decisions.search.evaluate import Evaluator
from planner.memory.budget import SharedBudget, plan_budget
from planner.memory.plan import plan_memory

# Speculators of every kind (draft models, EAGLE-3 heads, n-gram, none), two node types (one too small for some
# layouts), a sliding-window target, three precisions, every K and six batch caps.
SPACES = [
    {"target": "Llama-3.1-70B", "nodes": ("8x-h100-sxm-80gb", "4x-l40s-48gb"), "dtypes": ("bf16", "fp8", "fp8:fp8")},
    {"target": "Llama-3.1-8B", "nodes": ("1x-h100-sxm-80gb", "4x-l4-24gb"), "dtypes": ("bf16", "fp8:fp8")},
    {"target": "google/gemma-2-9b", "nodes": ("1x-h100-sxm-80gb",), "dtypes": ("bf16",)},
]
WORKLOAD = SearchWorkload(requests_per_s=20, prompt_tokens=1024, output_tokens=256)


def _fields(plan) -> dict:
    return plan.model_dump()


def test_shared_plans_equal_each_points_own_plan_field_by_field():
    rng = random.Random(23)
    compared = 0
    for fields in SPACES:
        ev = Evaluator(SearchSpace.build(**fields), WORKLOAD, Objectives())
        points = ev.points()
        shares: dict[tuple, SharedBudget] = {}
        # every point of a few families (so each shared part serves many K and caps), then random points
        chosen = [p for p in points if ev._group(p) in {ev._group(q) for q in rng.sample(points, 3)}]
        chosen += rng.sample(points, min(150, len(points)))
        for point in chosen:
            dep = ev.deployment(point)
            share = shares.setdefault(ev._group(point), SharedBudget())
            shared = plan_budget(dep, compare_without_draft=False, share=share)
            alone = plan_memory(dep, with_suggestions=False, compare_without_draft=False)
            assert _fields(shared) == _fields(alone), point.label
            compared += 1
    assert compared >= 300


def test_the_search_fills_each_point_from_its_own_plan():
    ev = Evaluator(SearchSpace.build(**SPACES[1]), WORKLOAD, Objectives())
    points = ev.points()
    for point in random.Random(7).sample(points, 60):
        ev.plan(point)
        alone = plan_memory(ev.deployment(point), with_suggestions=False, compare_without_draft=False)
        assert (point.fits and point.max_concurrency >= 1) == (alone.fits and alone.max_concurrency >= 1)
        assert point.starts == alone.starts and point.kv_cache_tokens == alone.kv_cache_tokens
