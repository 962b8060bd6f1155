"""The serving simulator: the engines' scheduling limits, published trends, physics and bad workloads."""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.deployment import Deployment
from planner.errors import PlannerError
from planner.pairs.acceptance import acceptance_prior
from planner.speed.replica_capacity import replica_capacity
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate, simulate_one

TARGET, DRAFT = get_model("Llama-3.1-70B"), get_model("Llama-3.2-1B")
SPEC = Deployment.on_node(TARGET, get_node("8x-h100-sxm-80gb"), tp=4, draft=DRAFT, num_speculative_tokens=3)
SMALL = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"))


def _sharegpt(**arrivals):
    return ServingWorkload.build(dataset="sharegpt", num_prompts=400, seed=0, **arrivals)


def test_speedup_of_70b_with_a_1b_draft_falls_with_batch():
    # SpecDecode-Bench (data/calibration/serving-measured.csv rows SDB-L3-70B-SHAREGPT-DRAFT-BS1..BS128,
    # https://specdecode-bench.github.io/): 2.16x at batch 1 falling to 1.26x at batch 128 in vLLM V1, K = 3.
    alpha = acceptance_prior(TARGET, DRAFT).alpha
    speedups = [simulate(SPEC, _sharegpt(concurrency=b), alpha=alpha, k=3).speedup for b in (1, 16, 64, 128)]
    assert all(later < earlier for earlier, later in pairwise(speedups))
    assert speedups[0] > 1.8 and speedups[-1] < 0.75 * speedups[0]


def test_speedup_falls_with_request_rate_and_drops_below_one_where_measured():
    # vLLM spec-decode blog (rows VLLMSD-L3-70B-ShareGPT-DRAFT-QPS1..QPS10, https://blog.vllm.ai/2024/10/17/spec-decode.html):
    # Llama-3-70B TP4 + a 0.5B draft, K = 4, vLLM V0: 1.54x at 1 req/s, 1.03x at 8, 0.71x at 10.
    draft = get_model("Qwen2.5-0.5B")
    dep = Deployment.build(target=TARGET, draft=draft, gpu=get_gpu("h100-sxm-80gb"), gpu_count=4, tp=4,
                           engine="vllm-v0", num_speculative_tokens=4, max_model_len=4096)  # fmt: skip
    alpha = acceptance_prior(TARGET, draft).alpha
    speedups = [simulate(dep, _sharegpt(request_rate=r), alpha=alpha, k=4).speedup for r in (1, 4, 8, 10)]
    assert all(later < earlier for earlier, later in pairwise(speedups))
    assert speedups[0] > 1.1 and speedups[-1] < 1


def test_ttft_rises_steeply_near_saturation_while_throughput_flattens():
    """Around the replica's capacity (its saturated steady rate, which an offline run's whole-run rate sits below)."""
    plain = SPEC.without_draft()
    capacity = replica_capacity(plain, ServingWorkload.build(offline=True, num_prompts=1500)).steady_requests_per_s
    runs = [
        simulate_one(plain, ServingWorkload.build(request_rate=f * capacity, num_prompts=1500))
        for f in (0.3, 0.6, 0.9, 1.2, 1.5)
    ]
    ttft = [r.ttft_s.p99 for r in runs]
    rate = [r.requests_per_s for r in runs]
    assert all(later > earlier for earlier, later in pairwise(ttft))
    assert ttft[3] > 10 * ttft[2]  # queueing past saturation
    assert rate[1] / rate[0] > 1.8  # below saturation throughput follows the offered load ...
    assert rate[-1] / rate[-2] < 1.05  # ... past it, it flattens at capacity
    assert rate[-1] <= 1.05 * capacity
    assert runs[0].limited_by.startswith("offered load") and not runs[-1].limited_by.startswith("offered load")


def test_the_engines_request_caps_bound_the_batch():
    capped = simulate_one(SMALL.replace(max_num_seqs=16), ServingWorkload.build(offline=True, num_prompts=200))
    assert capped.max_batch_size <= 16
    assert capped.limited_by == "max_num_seqs"
    sglang = SMALL.replace(engine="sglang", draft=DRAFT)
    run = simulate_one(sglang, ServingWorkload.build(offline=True, num_prompts=200), alpha=0.8, k=3)
    assert run.limits.max_num_seqs == 48 and run.max_batch_size <= 48
    assert run.limited_by in ("max_num_seqs", "kv_cache", "token_budget", "compute")


def test_a_small_kv_cache_stops_admission_and_preempts():
    tight = SMALL.replace(memory_fraction=0.25, max_model_len=8192)
    run = simulate_one(
        tight, ServingWorkload.build(offline=True, prompt_tokens=4000, output_tokens=2000, num_prompts=300)
    )
    assert run.limited_by == "KV cache capacity" or run.blocked_frac.get("kv_cache", 0) > 0.1
    assert run.preemptions > 0
    long_requests = ServingWorkload.build(offline=True, prompt_tokens=4000, output_tokens=2000, num_prompts=300)
    reserving = simulate_one(tight.replace(engine="trtllm"), long_requests)
    assert reserving.preemptions == 0  # GUARANTEED_NO_EVICT holds the whole output at admission


def test_every_request_completes_and_tokens_add_up():
    workload = _sharegpt(request_rate=20.0)
    run = simulate_one(SMALL, workload)
    prompts, outputs = workload.lengths()
    assert run.requests == 400
    assert run.output_tokens_per_s * run.duration_s == pytest.approx(sum(outputs))
    assert run.total_tokens_per_s * run.duration_s == pytest.approx(sum(prompts) + sum(outputs))
    assert run.ttft_s.p50 <= run.ttft_s.p99 and run.e2e_latency_s.mean > run.ttft_s.mean
    assert simulate_one(SMALL, workload).model_dump() == run.model_dump()  # reproducible from the seed


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["vllm", "sglang", "trtllm", "vllm-v0"]),
    st.sampled_from([("rate", 0.5), ("rate", 50.0), ("concurrency", 64), ("offline", None)]),
    st.integers(16, 4000),
    st.integers(1, 1000),
    st.booleans(),
)
def test_a_simulated_replica_never_beats_its_gpus_peak(engine, arrivals, prompt, output, speculate):
    mode, value = arrivals
    fields = {"offline": True} if mode == "offline" else {"request_rate" if mode == "rate" else "concurrency": value}
    workload = ServingWorkload.build(prompt_tokens=prompt, output_tokens=output, num_prompts=60, **fields)
    dep = SPEC.replace(engine=engine)
    run = simulate_one(dep, workload, alpha=0.8 if speculate else None, k=3 if speculate else None)
    assert 0 < run.delivered_flops_per_s <= run.peak_flops_per_s
    assert 0 < run.delivered_bytes_per_s <= run.peak_bytes_per_s
    assert run.busy_frac <= 1


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"request_rate": 0}, "request_rate"),
        ({"request_rate": -1.0}, "request_rate"),
        ({"concurrency": 0}, "concurrency"),
        ({"offline": True, "request_rate": 2.0}, "arrivals"),
        ({"offline": True, "prompt_tokens": 0}, "prompt_tokens"),
    ],
)
def test_bad_workloads_name_the_field(fields, field):
    with pytest.raises(PlannerError) as info:
        ServingWorkload.build(**fields)
    assert info.value.field == field


def test_lengths_beyond_the_model_length_are_refused():
    with pytest.raises(PlannerError) as info:
        simulate_one(SMALL.replace(max_model_len=1024), ServingWorkload.build(offline=True, prompt_tokens=1000))
    assert info.value.field in ("prompt_tokens", "output_tokens") and "1,024" in str(info.value)


def test_a_closed_loops_steady_latencies_leave_its_first_round_out():
    """Every client's first request arrives at once and queues behind the others' prefills; a benchmark that
    averages after its warm-up does not count that round, and neither do the steady-window latencies."""
    lengths = {"prompt_tokens": 4096, "output_tokens": 256}
    alone = simulate_one(SMALL, ServingWorkload.build(concurrency=1, num_prompts=8, **lengths))
    run = simulate_one(SMALL, ServingWorkload.build(concurrency=32, num_prompts=32 * 8, **lengths))
    assert run.steady
    assert run.steady_ttft_s.mean < 0.75 * run.ttft_s.mean  # the first round's queue weighs on the whole-run mean
    assert run.steady_ttft_s.mean >= alone.ttft_s.mean
    assert run.steady_tpot_s.mean == pytest.approx(run.tpot_s.mean, rel=0.15)


def test_a_closed_loop_clients_next_request_waits_for_the_step_already_begun():
    """A client sends its next request when its last one completes, at the end of a step; by the time it reaches the
    engine the next step has begun, so it waits (an idle engine takes it at once). Admitting it into that step kept
    identical clients evenly spaced, so no prompt ever waited for another's prefill and TTFT was one prefill."""
    lengths = {"prompt_tokens": 4096, "output_tokens": 256}
    alone = simulate_one(SMALL, ServingWorkload.build(concurrency=1, num_prompts=10, **lengths))
    four = simulate_one(SMALL, ServingWorkload.build(concurrency=4, num_prompts=40, **lengths))
    assert alone.queueing_delay_s.p99 == 0.0  # one client: the engine is idle when its next request arrives
    assert four.queueing_delay_s.p50 > 0.0  # most requests wait for a step begun before they arrived
    assert four.steady_ttft_s.mean > 1.5 * alone.ttft_s.mean  # ... and some for another client's prefill


def test_a_poisson_runs_steady_latencies_are_its_own_latencies():
    run = simulate_one(SMALL, _sharegpt(request_rate=4.0))
    assert run.steady
    assert run.steady_ttft_s.mean == pytest.approx(run.ttft_s.mean, rel=0.2)
    assert run.steady_tpot_s.mean == pytest.approx(run.tpot_s.mean, rel=0.1)
