"""The steady window: its warm-up end, the truncation of its transient, and a capacity that does not move with the
length of the run behind it.

Deterministic seeds, no timing: every figure is a simulated quantity.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.deployment import Deployment
from planner.speed import replica_capacity as capacity_module
from planner.speed.replica_capacity import replica_capacity
from planner.speed.serving_metrics import STEADY_SLICES, steady_rate, steady_state, truncated_start, warm_up_end
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate_one

TP8_70B = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=8, max_model_len=4096)


def _trace(rates: list[float], width_s: float = 1.0) -> list[tuple[float, float]]:
    """A cumulative trace emitting ``rates[i]`` tokens per second over its i-th second."""
    points, total = [(0.0, 0.0)], 0.0
    for i, rate in enumerate(rates):
        total += rate * width_s
        points.append(((i + 1) * width_s, total))
    return points


def test_the_warm_up_lasts_until_the_first_fill_is_prefilled():
    # two requests admitted at once; the second's first token comes after the first one finishes
    assert warm_up_end([0.0, 0.0, 4.0], [0.5, 2.5, 5.0], [2.0, 9.0, 8.0]) == 2.5
    # one admitted after the first completion does not extend it
    assert warm_up_end([0.0, 3.0], [0.5, 3.5], [2.0, 9.0]) == 2.0


def test_a_ramp_is_cut_off_and_a_steady_series_is_kept_whole():
    ramp = _trace([10.0] * 6 + [20.0] * 34)
    start = truncated_start(ramp, 0.0, 40.0, 10.0)
    assert start == pytest.approx(6.0)
    assert steady_rate(ramp, start, 40.0) == pytest.approx(20.0)
    flat = _trace([20.0] * 40)
    assert truncated_start(flat, 0.0, 40.0, 10.0) == 0.0


def test_the_truncation_leaves_the_shortest_window_and_at_most_half():
    late = _trace([10.0] * 30 + [20.0] * 10)  # the rate settles only in the last quarter
    assert truncated_start(late, 0.0, 40.0, 0.0) <= 20.0  # never more than half of it dropped
    assert truncated_start(late, 0.0, 40.0, 30.0) <= 10.0  # and never below the shortest window


@given(st.lists(st.floats(1.0, 1e4), min_size=STEADY_SLICES, max_size=3 * STEADY_SLICES))
def test_the_steady_rate_lies_within_the_slices_it_is_measured_over(rates):
    trace = _trace(rates)
    end = float(len(rates))
    rate, window, steady = steady_state(trace, 0.0, end, 0.0, end)
    assert steady and window == (0.0, end)
    assert min(rates) - 1e-6 <= rate <= max(rates) + 1e-6


def test_the_latencies_count_every_arrival_of_the_whole_window():
    rate, window, _ = steady_state(_trace([10.0] * 6 + [20.0] * 34), 0.0, 40.0, 0.0, 40.0)
    assert window == (0.0, 40.0) and rate == pytest.approx(20.0)


def test_a_heavy_tailed_capacity_holds_when_its_run_doubles(monkeypatch):
    # ShareGPT-like requests at once: the replica climbs to its steady pace as its first long answers finish; over
    # the whole window 4 rounds sat 5% below 16 (52.6 against 55.3 req/s), truncated they agree within 3%
    workload = ServingWorkload.build(offline=True, dataset="sharegpt")
    rates = {}
    for rounds in (4, 8):
        monkeypatch.setattr(capacity_module, "CAPACITY_ROUNDS", rounds)
        rates[rounds] = replica_capacity(TP8_70B, workload).steady_requests_per_s
    assert rates[8] == pytest.approx(rates[4], rel=0.03)


@pytest.mark.parametrize(
    ("node", "tp", "within"),
    # 4 rounds and a third run at 1.05x, as before: +5.2% and +9.4% when the run doubled
    [("8x-h100-sxm-80gb", 4, 0.03), ("8x-h200-sxm-141gb", 2, 0.05)],
)
def test_a_speculative_capacity_of_identical_requests_holds_when_its_run_doubles(monkeypatch, node, tp, within):
    # identical requests start in lockstep and drift apart only as acceptance varies: a short run's window catches
    # a few uneven waves, and a third run just under saturation measures its own Poisson arrivals
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node(node), draft=get_model("Llama-3.2-1B"), tp=tp)
    workload = ServingWorkload.build(offline=True, prompt_tokens=1024, output_tokens=256, num_prompts=400)
    rates = {}
    for rounds in (capacity_module.CAPACITY_ROUNDS, 2 * capacity_module.CAPACITY_ROUNDS):
        monkeypatch.setattr(capacity_module, "CAPACITY_ROUNDS", rounds)
        rates[rounds] = replica_capacity(dep, workload, alpha=0.84, k=3).steady_requests_per_s
    short, long = rates.values()
    assert long == pytest.approx(short, rel=within)


def test_a_closed_loop_of_identical_requests_is_measured_over_whole_rounds():
    # 25 clients of 5,000 + 500 tokens complete in bursts and prefill together: over the window up to the last
    # admission they read 510 and 571 tokens/s at 4 and 8 requests per client, over whole rounds 608 at both
    dep = Deployment.build(
        target=get_model("meta-llama/Llama-3.3-70B-Instruct"), gpu=get_gpu("h100-sxm-80gb"), gpu_count=2, tp=2,
        dtype="fp8", kv_dtype="fp8", engine="trtllm", max_model_len=6144,
    )  # fmt: skip
    runs = [
        simulate_one(dep, ServingWorkload.build(concurrency=25, prompt_tokens=5000, output_tokens=500, num_prompts=n))
        for n in (100, 200)
    ]
    short, long = (run.steady_output_tokens_per_s for run in runs)
    assert long == pytest.approx(short, rel=0.01)
    # each client emits its answers over its requests' latencies (Little's law): over whole rounds, and with the
    # last round's requests (served partly while the batch drains) left out of the steady latencies, the loop's
    # rate is its steady requests' own, above the whole run's (warm-up and drain included)
    run = runs[1]
    little = 25 * 500 / (run.steady_ttft_s.mean + 499 * run.steady_tpot_s.mean)
    assert run.steady_output_tokens_per_s == pytest.approx(little, rel=1e-3)
    assert run.output_tokens_per_s < run.steady_output_tokens_per_s
    # and its steady TPOT does not move with the run's length either
    assert runs[0].steady_tpot_s.mean == pytest.approx(run.steady_tpot_s.mean, rel=0.005)


def test_whole_rounds_keep_a_closed_loop_of_varied_lengths_as_it_was():
    # ShareGPT-like lengths complete one by one: the last whole rounds read as the whole window does
    workload = ServingWorkload.build(concurrency=64, dataset="sharegpt", num_prompts=256, seed=3)
    run = simulate_one(TP8_70B, workload)
    low, high = run.steady_window_s
    assert low < high
    longer = simulate_one(TP8_70B, workload.model_copy(update={"num_prompts": 1024}))
    assert run.steady_output_tokens_per_s == pytest.approx(longer.steady_output_tokens_per_s, rel=0.02)


def test_the_steady_rate_of_a_heavy_tailed_run_does_not_move_with_its_length():
    runs = [
        simulate_one(TP8_70B, ServingWorkload.build(offline=True, dataset="sharegpt", num_prompts=n))
        for n in (4096, 8192)
    ]
    assert runs[1].steady_output_tokens_per_s == pytest.approx(runs[0].steady_output_tokens_per_s, rel=0.03)
