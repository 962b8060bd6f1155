"""Multi-step scheduling (vLLM V0 ``--num-scheduler-steps``) in the serving simulator.

Deterministic seeds, no timing: every figure is a simulated quantity.
"""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.speed.engine_step import EngineStep
from planner.speed.multi_step import MultiStep
from planner.speed.profiles import PARAMETERS, speed_profile
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate_one

DEP = Deployment.on_node(
    get_model("Meta-Llama-3-8B"), get_node("1x-h100-sxm-80gb"), engine="vllm-v0", max_model_len=4096
)
V0 = speed_profile("vllm-v0", "nvidia")
MULTI = V0.with_values(scheduler_steps=10)


@pytest.mark.parametrize("engine", ["vllm", "vllm-v0", "sglang", "sglang-0.3", "trtllm", "hf"])
def test_every_engine_schedules_every_step_by_default(engine):
    profile = speed_profile(engine, "nvidia")
    assert "scheduler_steps" in PARAMETERS
    assert profile.scheduler_steps == 1
    assert "num-scheduler-steps" in profile.value_source("scheduler_steps")


def test_one_scheduler_step_is_the_plain_simulation():
    workload = ServingWorkload.build(request_rate=8.0, dataset="sharegpt", num_prompts=200, seed=1)
    plain = simulate_one(DEP, workload, profile=V0)
    single = simulate_one(DEP, workload, profile=V0.with_values(scheduler_steps=1))
    assert single.tpot_s.mean == plain.tpot_s.mean and single.output_tokens_per_s == plain.output_tokens_per_s


def test_a_chunk_runs_all_its_steps_unless_the_cache_is_full():
    assert MultiStep(10).chunk_steps(room_tokens=1e9, growth_per_step=256) == 10
    assert MultiStep(10).chunk_steps(room_tokens=1024, growth_per_step=256) == 4
    assert MultiStep(10).chunk_steps(room_tokens=0, growth_per_step=256) == 1
    assert MultiStep(1).chunk_steps(room_tokens=1e9, growth_per_step=1) == 1


def test_a_finished_request_is_told_a_step_after_its_last_token_not_at_the_chunk_end():
    """Three output tokens: the prefill gives the first, the first two steps of a frozen chunk of ten the others;
    the client hears of the finish when the third step's run processes the second's output, while the request
    keeps its slot to the chunk's end (the next arrival still waits for it)."""
    workload = ServingWorkload.build(request_rate=0.5, prompt_tokens=128, output_tokens=3, num_prompts=20, seed=0)
    single = simulate_one(DEP, workload, profile=V0)
    multi = simulate_one(DEP, workload, profile=MULTI)
    step_s = EngineStep(DEP, V0).plain(decode_seqs=1, decode_context_tokens=130).total_s
    assert single.tpot_s.mean == pytest.approx(step_s, rel=0.05)
    assert multi.tpot_s.mean == pytest.approx(3 * step_s / 2, rel=0.05)
    assert MultiStep(10).reported_after(2, 10) == 3 and MultiStep(10).reported_after(9, 6) == 6


def test_arrivals_wait_for_the_running_chunk():
    workload = ServingWorkload.build(request_rate=20.0, dataset="sharegpt", num_prompts=300, seed=2)
    single = simulate_one(DEP, workload, profile=V0)
    multi = simulate_one(DEP, workload, profile=MULTI)
    step_s = EngineStep(DEP, V0).plain(decode_seqs=8, decode_context_tokens=8 * 300).total_s
    # a prompt arriving during a chunk waits for its remaining steps: about half a chunk more on average
    assert multi.ttft_s.mean - single.ttft_s.mean > 3 * step_s


def test_offline_multi_step_gains_nothing_v0_does_not_price_and_never_beats_the_hardware():
    """Each step keeps its cost (the TP input broadcast stays per step) and finished sequences run to the chunk's
    end, so a frozen batch never serves faster than one scheduled every step."""
    workload = ServingWorkload.build(offline=True, dataset="sharegpt", num_prompts=300, seed=3)
    single = simulate_one(DEP, workload, profile=V0)
    run = simulate_one(DEP, workload, profile=MULTI)
    assert run.output_tokens_per_s <= single.output_tokens_per_s * 1.001
    assert run.steady_output_tokens_per_s <= single.steady_output_tokens_per_s * 1.001
    assert run.delivered_flops_per_s <= run.peak_flops_per_s
    assert run.delivered_bytes_per_s <= run.peak_bytes_per_s
