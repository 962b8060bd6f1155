"""The simulated scheduler against the static estimate, its steady state, tree verification and replica capacity.

Deterministic seeds, no timing: every figure is a simulated or estimated quantity.
"""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner import acceptance_math as am
from planner.catalog.lookup import get_model, get_node
from planner.deployment import Deployment
from planner.speed import replica_run
from planner.speed.engine_step import EngineStep
from planner.speed.estimate import SpeedWorkload, estimate_speed
from planner.speed.replica_capacity import replica_capacity
from planner.speed.serving_metrics import Percentiles, last_round_start
from planner.speed.serving_workload import ServingWorkload
from planner.speed.simulate import simulate, simulate_one

H100 = get_node("1x-h100-sxm-80gb")
HEAD_DEP = Deployment.on_node(
    get_model("Llama-3.1-8B"), H100, draft=get_model("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"), num_speculative_tokens=4
)
DRAFT_DEP = Deployment.on_node(
    get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4, draft=get_model("Llama-3.2-1B"),
    num_speculative_tokens=3,
)  # fmt: skip

#: Decode-dominated requests: the static estimate prices decode steps, so prefill must be a small share here.
PROMPT, OUTPUT = 32, 2048


@pytest.mark.parametrize(
    ("engine", "verification", "batch"),
    [
        ("vllm", "chain", 1),
        ("vllm", "chain", 33),
        ("vllm", "chain", 64),
        ("vllm", "chain", 128),
        ("vllm", "tree", 33),
        ("vllm", "tree", 128),
        ("sglang", "chain", 33),
        ("sglang", "tree", 48),
        ("trtllm", "chain", 100),
    ],
)
def test_the_static_estimate_equals_the_simulated_steady_state(engine, verification, batch):
    dep = HEAD_DEP.replace(engine=engine)
    est = estimate_speed(
        dep,
        SpeedWorkload.build(
            alpha=0.7, k=4, batch_size=batch, prompt_tokens=PROMPT, output_tokens=OUTPUT, verification=verification
        ),
    )
    lengths = {"prompt_tokens": PROMPT, "output_tokens": OUTPUT}
    workload = ServingWorkload.build(concurrency=batch, num_prompts=4 * batch, **lengths)
    run = simulate(dep, workload, alpha=0.7, k=4, verification=verification)
    assert run.plain.steady and run.speculative.steady
    assert run.speedup == pytest.approx(est.speedup, rel=0.03)
    assert run.speculative.steady_output_tokens_per_s == pytest.approx(est.throughput_tok_s, rel=0.03)
    assert run.plain.steady_output_tokens_per_s == pytest.approx(est.baseline_throughput_tok_s, rel=0.03)
    assert run.speculative.tpot_s.mean == pytest.approx(est.spec_tpot_s, rel=0.03)


@pytest.mark.parametrize(
    ("engine", "batch"), [("vllm", 64), ("vllm", 128), ("trtllm", 128), ("vllm-v0", 64), ("sglang", 64)]
)
def test_the_static_estimate_serves_each_prompt_as_the_simulator_does(engine, batch):
    # ShareGPT-like requests (202-token prompts, 179-token outputs on average): every request's prefill is a real
    # share of the work, mixed into decode steps (vLLM V1, TensorRT-LLM) or run in steps of its own (vLLM V0,
    # SGLang, whose cap of 48 running requests with a draft holds its speculative arm below the batch of 64); the
    # static estimate of the same lengths, each step priced over the prompt lengths it may meet (a prompt's cost is
    # convex in its length: a short one rides along a decode step's weight reads almost free, a long one pays its
    # FLOPs), serves them as the simulated closed loop does once it is steady: speedup, throughput and TPOT within 3%
    dep = DRAFT_DEP.replace(engine=engine)
    workload = ServingWorkload.build(concurrency=batch, num_prompts=12 * batch, dataset="sharegpt", seed=0)
    est = estimate_speed(dep, SpeedWorkload.build(alpha=0.8, k=3, batch_size=batch, dataset="sharegpt"))
    run = simulate(dep, workload, alpha=0.8, k=3)
    assert run.plain.steady and run.speculative.steady
    assert run.speedup == pytest.approx(est.speedup, rel=0.03)
    assert run.speculative.steady_output_tokens_per_s == pytest.approx(est.throughput_tok_s, rel=0.03)
    assert run.plain.steady_output_tokens_per_s == pytest.approx(est.baseline_throughput_tok_s, rel=0.03)
    assert run.speculative.steady_tpot_s.mean == pytest.approx(est.spec_tpot_s, rel=0.03)
    assert run.plain.steady_tpot_s.mean == pytest.approx(est.baseline_tpot_s, rel=0.03)
    # and the first token: the queue past the engine's running cap, the step a new request misses (where prompts run
    # apart, the prefill step of the prompts still waiting as often as they are) and its prompt's step, shared with
    # the other slots' prompts (within 1.7% where steps mix, 3.3% where prompts run apart, over two draws)
    assert run.plain.steady_ttft_s.mean == pytest.approx(est.baseline_ttft_s, rel=0.05)
    assert run.speculative.steady_ttft_s.mean == pytest.approx(est.spec_ttft_s, rel=0.05)
    # every prompt at the mean length would promise more: the spread is priced
    alike = estimate_speed(
        dep, SpeedWorkload.build(alpha=0.8, k=3, batch_size=batch, prompt_tokens=202, output_tokens=179)
    )
    assert alike.baseline_throughput_tok_s > est.baseline_throughput_tok_s
    # and the decode step alone more still: the estimate counts the prompts
    decoding = estimate_speed(
        dep, SpeedWorkload.build(alpha=0.8, k=3, batch_size=batch, prompt_tokens=1, output_tokens=est.output_tokens)
    )
    assert decoding.baseline_throughput_tok_s > 1.05 * est.baseline_throughput_tok_s


@pytest.mark.parametrize("dataset", ["fixed", "sharegpt"])
@pytest.mark.parametrize("concurrency", [64, 96, 128])
def test_the_simulated_speedup_does_not_move_when_the_request_count_doubles(dataset, concurrency):
    def speedup(n: int) -> float:
        workload = ServingWorkload.build(concurrency=concurrency, num_prompts=n, dataset=dataset, seed=3)
        return simulate(DRAFT_DEP, workload, alpha=0.8, k=3).speedup

    assert speedup(8 * concurrency) == pytest.approx(speedup(4 * concurrency), rel=0.03)


def test_a_tree_in_the_simulator_emits_its_tokens_and_spends_its_budget():
    workload = ServingWorkload.build(concurrency=8, num_prompts=32, prompt_tokens=PROMPT, output_tokens=512)
    chain = simulate(HEAD_DEP.replace(engine="sglang"), workload, alpha=0.6, k=5)
    tree = simulate(HEAD_DEP.replace(engine="sglang"), workload, alpha=0.6, k=5, verification="tree")
    spec = tree.speculative
    assert spec.verification == "tree" and spec.tree_widths == (3, 1, 1, 1, 1)  # SGLang's 5 / 4 / 8 default
    assert spec.tokens_per_step == pytest.approx(am.tree_tokens_per_step(0.6, (3, 1, 1, 1, 1)))
    assert spec.limits.lookahead_tokens_per_seq == 7  # the verify budget less the root
    assert chain.speculative.tokens_per_step == pytest.approx(am.expected_tokens_per_step(0.6, 5))
    assert tree.speedup > chain.speedup  # at batch 8 the wider verify is nearly free


def test_the_replica_capacity_is_the_saturated_steady_state():
    lengths = {"prompt_tokens": 1024, "output_tokens": 256}
    capacity = replica_capacity(DRAFT_DEP.without_draft(), ServingWorkload.build(offline=True, **lengths))
    # the lockstep offline run of 400 requests (warm-up and drain included) sat below the replica's steady state
    offline = simulate_one(DRAFT_DEP.without_draft(), ServingWorkload.build(offline=True, num_prompts=400, **lengths))
    assert capacity.steady_requests_per_s > offline.requests_per_s
    overloaded = simulate_one(
        DRAFT_DEP.without_draft(),
        ServingWorkload.build(request_rate=1.5 * capacity.steady_requests_per_s, num_prompts=6000, **lengths),
    )
    assert overloaded.steady_requests_per_s <= capacity.steady_requests_per_s * 1.03
    more = replica_capacity(DRAFT_DEP.without_draft(), ServingWorkload.build(offline=True, num_prompts=6000, **lengths))
    # runs of the default rounds sit within a few percent of runs over many more requests
    assert more.steady_requests_per_s == pytest.approx(capacity.steady_requests_per_s, rel=0.06)


@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(["vllm", "sglang", "trtllm"]),
    st.sampled_from(["chain", "tree"]),
    st.sampled_from([("rate", 40.0), ("concurrency", 33), ("offline", None)]),
    st.integers(16, 3000),
    st.integers(1, 800),
)
def test_padded_and_tree_steps_never_beat_the_gpus_peak(engine, verification, arrivals, prompt, output):
    mode, value = arrivals
    fields = {"offline": True} if mode == "offline" else {"request_rate" if mode == "rate" else "concurrency": value}
    workload = ServingWorkload.build(prompt_tokens=prompt, output_tokens=output, num_prompts=50, **fields)
    run = simulate(HEAD_DEP.replace(engine=engine), workload, alpha=0.7, k=4, verification=verification)
    for arm in (run.plain, run.speculative):
        assert 0 < arm.delivered_flops_per_s <= arm.peak_flops_per_s
        assert 0 < arm.delivered_bytes_per_s <= arm.peak_bytes_per_s
        assert arm.busy_frac <= 1 and 0 <= arm.mean_padding_frac < 1


def test_an_engine_without_chunked_prefill_runs_each_prompt_whole_in_one_step():
    """TensorRT-LLM without chunked context: two 3,000-token prompts fill a step of its 8,192-token budget and the
    third waits for the next step; a chunking engine would start the third in the first step with the budget left."""
    dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), engine="trtllm")
    workload = ServingWorkload.build(offline=True, prompt_tokens=3000, output_tokens=4, num_prompts=6)
    engine = EngineStep(dep)
    assert not engine.profile.chunked_prefill
    whole = simulate_one(dep, workload)
    assert whole.limits.max_num_batched_tokens == 8192 and not whole.limits.chunked_prefill
    first = sorted(whole.ttft_values_s)
    assert first[0] == first[1] < first[2] == first[3] < first[4] == first[5]  # two whole prompts a step
    chunked = simulate_one(dep, workload, profile=engine.profile.with_values(chunked_prefill=True))
    split = sorted(chunked.ttft_values_s)
    assert split[1] < split[2] and split[2] == split[4]  # the third prompt was split across the first two steps


@pytest.mark.parametrize("gap_s", [1.0, 10.0, 30.0])
def test_a_request_that_arrives_while_another_decodes_alone_waits_at_most_a_step(gap_s, monkeypatch):
    """The simulator runs identical decode steps in one go up to the next arrival. Those steps are priced at their
    mean context, dearer than the first as a long answer's context grows, so the run must end within a step of the
    arrival however long the gap: a short request arriving ``gap_s`` into a 4,000-token answer is first served in
    about the time it takes alone, never a share of the gap later."""
    dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-a100-sxm-80gb"), max_model_len=8192)
    monkeypatch.setattr(ServingWorkload, "lengths", lambda self: ([64, 64], [4000, 2]))
    monkeypatch.setattr(ServingWorkload, "arrivals", lambda self: [0.0, gap_s])
    run = simulate_one(dep, ServingWorkload.build(request_rate=1.0, num_prompts=2))
    alone, joined = run.ttft_values_s
    assert run.duration_s > gap_s  # the answer was still decoding when the short request arrived
    engine = EngineStep(dep)
    step_s = engine.step_totals(None, 1, 4064)[0]  # the dearest decode step of the answer, alone
    assert joined <= alone + 2 * step_s


@pytest.mark.parametrize(
    "arrivals",
    [{"request_rate": 6.0}, {"request_rate": 40.0}, {"offline": True}, {"concurrency": 24}],
    ids=["light load", "overload", "offline", "closed loop"],
)
def test_the_steady_latencies_are_those_of_the_requests_that_arrived_in_the_steady_window(arrivals, monkeypatch):
    """The steady TTFT and TPOT count the requests whose arrival lies in the steady window, before a closed loop's
    last round (every request where the run has none): checked against that definition, request by request, on each
    kind of arrivals."""
    seen = {}
    metrics = replica_run.ReplicaRun._metrics

    def recording(self, arrival, admitted, first_token, finish, *rest):
        seen.update(arrival=list(arrival), first=list(first_token), finish=list(finish), outputs=self.outputs)
        return metrics(self, arrival, admitted, first_token, finish, *rest)

    monkeypatch.setattr(replica_run.ReplicaRun, "_metrics", recording)
    dep = Deployment.on_node(get_model("Llama-3.1-8B"), get_node("1x-h100-sxm-80gb"), max_model_len=4096)
    run = simulate_one(dep, ServingWorkload.build(num_prompts=300, dataset="sharegpt", seed=3, **arrivals))
    low, high = run.steady_window_s
    if "concurrency" in arrivals:  # a closed loop's last round is served partly while the batch drains
        high = last_round_start(sorted(seen["finish"]), low, high, arrivals["concurrency"])
    arrived = seen["arrival"]
    inside = [i for i, t in enumerate(arrived) if run.steady and low <= t <= high] or range(len(arrived))
    ttft = [seen["first"][i] - arrived[i] for i in inside]
    tpot = [(seen["finish"][i] - seen["first"][i]) / (seen["outputs"][i] - 1) for i in inside if seen["outputs"][i] > 1]
    # 300 requests queued at once all fit the batch: no completion before the last admission, no window
    assert run.steady == ("offline" not in arrivals)
    assert run.steady_ttft_s == Percentiles.of(ttft)
    assert run.steady_tpot_s == Percentiles.of(tpot)
