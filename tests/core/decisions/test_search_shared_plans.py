"""The search plans each layout and speculator once and applies K and the batch cap after the shared part: the
plan it gets equals the plan of the point's deployment alone, field by field."""

from __future__ import annotations

import random

from planner.decisions.search import NO_OBJECTIVES, SearchSpace, SearchWorkload
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
        ev = Evaluator(SearchSpace.build(**fields), WORKLOAD, NO_OBJECTIVES)
        points = ev.points()
        shares: dict[tuple, SharedBudget] = {}
        # every point of a few families (so each shared part serves many K and caps), then random points
        chosen = [p for p in points if ev.group(p) in {ev.group(q) for q in rng.sample(points, 3)}]
        chosen += rng.sample(points, min(150, len(points)))
        for point in chosen:
            dep = ev.deployment(point)
            share = shares.setdefault(ev.group(point), SharedBudget())
            shared = plan_budget(dep, compare_without_draft=False, share=share)
            alone = plan_memory(dep, with_suggestions=False, compare_without_draft=False)
            assert _fields(shared) == _fields(alone), point.label
            compared += 1
    assert compared >= 300


def test_the_search_fills_each_point_from_its_own_plan():
    ev = Evaluator(SearchSpace.build(**SPACES[1]), WORKLOAD, NO_OBJECTIVES)
    points = ev.points()
    for point in random.Random(7).sample(points, 60):
        ev.plan(point)
        alone = plan_memory(ev.deployment(point), with_suggestions=False, compare_without_draft=False)
        assert (point.fits and point.max_concurrency >= 1) == (alone.fits and alone.max_concurrency >= 1)
        assert point.starts == alone.starts and point.kv_cache_tokens == alone.kv_cache_tokens


def test_the_screens_step_times_are_those_of_each_points_own_engine():
    """Points of one layout share its step models but not its CUDA-graph padding: a point's steps are priced with its
    own captured sizes (K and the batch cap change them), whatever was screened before it."""
    from planner.speed.engine_step import Chunks, EngineStep  # noqa: PLC0415

    ev = Evaluator(SearchSpace.build(**SPACES[0]), WORKLOAD, NO_OBJECTIVES)
    points = ev.points()
    for point in points:  # the order the search screens them in
        ev.plan(point)
    screened = [p for p in points if p.fits and p.starts]
    for point in random.Random(5).sample(screened, 120) + screened[:40]:
        batch = 37  # a size most captured lists pad
        decode_s, prefill_s = ev._steps_of(point, batch)
        engine = EngineStep(ev.deployment(point))
        context = batch * (WORKLOAD.prompt_tokens + WORKLOAD.output_tokens / 2)
        chunk = Chunks()
        chunk.add(WORKLOAD.prompt_tokens, 0)
        if point.k is None:
            alone = engine.plain(decode_seqs=batch, decode_context_tokens=context).total_s
            mixed = engine.plain(decode_seqs=batch, decode_context_tokens=context, chunks=chunk).total_s
        else:
            alone = engine.speculative(point.k, decode_seqs=batch, decode_context_tokens=context).total_s
            mixed = engine.speculative(point.k, decode_seqs=batch, decode_context_tokens=context, chunks=chunk).total_s
        assert (decode_s, prefill_s) == (alone, max(0.0, mixed - alone)), point.label
