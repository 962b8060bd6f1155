"""The latency floor (:mod:`planner.speed.latency_floor`) is a lower bound of what the simulator serves, for prompts
longer than the step budget too (prefilled over several steps), on every engine's scheduler: chunked prefill mixed
with decodes (vLLM V1, SGLang, TensorRT-LLM) and whole prompts in steps of their own (vLLM V0), plain and
speculative, alone and under load. Within the floor's slack, at every percentile of the run's own requests."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.speed.latency_floor import FLOOR_SLACK, alone_latency_s, latency_floor_s
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import draft_shape, simulate_one
from planner.speed.step_cache import PARTS

TARGET, DRAFT, NODE = get_model("Llama-3.1-8B"), get_model("Llama-3.2-1B"), get_node("1x-h100-sxm-80gb")
PERCENTILES = (0.0, 50.0, 90.0, 99.0, 100.0)


def _replica(engine: str, speculative: bool, budget: int | None):
    """The deployment, the engine step the simulator prices it with, and its step budget (tokens)."""
    fields = {"engine": engine, "max_model_len": 8192, "max_num_batched_tokens": budget}
    dep = Deployment.on_node(TARGET, NODE, draft=DRAFT if speculative else None, **fields)
    engine_step, plan = PARTS.get(dep, speculative, None)
    return dep, engine_step, plan.limits.max_num_batched_tokens


@pytest.mark.parametrize(
    ("engine", "budget"),
    [("vllm", 128), ("vllm", 512), ("vllm", None), ("sglang", 1024), ("trtllm", 768), ("vllm-v0", None)],
)
@pytest.mark.parametrize("speculative", [False, True])
def test_no_run_beats_the_floor_of_its_own_requests(engine, budget, speculative):
    dep, engine_step, token_budget = _replica(engine, speculative, budget)
    k, alpha = (3, 0.7) if speculative else (None, None)
    shape = draft_shape(dep, k) if speculative else None
    runs = [
        ServingWorkload.build(request_rate=0.2, prompt_tokens=3000, output_tokens=32, num_prompts=12),
        ServingWorkload.build(request_rate=0.5, dataset="sharegpt", num_prompts=40),
        ServingWorkload.build(concurrency=16, prompt_tokens=2500, output_tokens=24, num_prompts=48),
    ]
    worst = float("inf")
    for workload in runs:
        run = simulate_one(dep, workload, alpha=alpha, k=k)
        prompts, outputs = workload.lengths()
        for pct in PERCENTILES:
            floor = latency_floor_s(engine_step, shape, alpha, prompts, outputs, token_budget, pct)
            assert run.ttft_at(pct) >= FLOOR_SLACK * floor.ttft_s, (workload.describe(), pct)
            assert run.tpot_at(pct) >= FLOOR_SLACK * floor.tpot_s, (workload.describe(), pct)
            worst = min(worst, run.ttft_at(pct) / floor.ttft_s, run.tpot_at(pct) / floor.tpot_s)
    assert worst > 0.99  # the slack is wide of what the tables do


def test_a_prompt_longer_than_the_budget_is_floored_at_every_chunk_it_needs():
    """A 3,000-token prompt under a 512-token budget takes six steps alone: its floor is far above one chunk's, and
    alone it is what the run takes."""
    dep, engine_step, budget = _replica("vllm", False, 512)
    one_chunk, _ = alone_latency_s(engine_step, None, None, 512, budget)
    whole, _ = alone_latency_s(engine_step, None, None, 3000, budget)
    assert budget == 512 and whole > 5 * one_chunk
    quiet = ServingWorkload.build(request_rate=0.01, prompt_tokens=3000, output_tokens=2, num_prompts=3)
    alone = simulate_one(dep, quiet)
    assert FLOOR_SLACK * whole <= alone.ttft_at(0.0) <= 1.05 * whole
