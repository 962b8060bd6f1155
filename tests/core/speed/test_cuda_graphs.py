"""CUDA-graph batch padding: each engine's captured sizes, and what a step of a given size runs at."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_model, get_node
from planner.deployment import ENGINES, Deployment
from planner.engines.capture_sizes import (
    engine_graphs,
    sglang_capture_sizes,
    trtllm_capture_sizes,
    vllm_capture_sizes,
    vllm_v0_capture_sizes,
)
from planner.engines.profiles import engine_profile, resolve_limits
from planner.speed.cuda_graphs import graph_plan
from planner.speed.engine_step import Chunks, EngineStep

TARGET, HEAD = get_model("Llama-3.1-8B"), get_model("yuhuili/EAGLE3-LLaMA3.1-Instruct-8B")
NODE = get_node("1x-h100-sxm-80gb")


def _engine(engine="vllm", draft=None, **fields) -> EngineStep:
    return EngineStep(Deployment.on_node(TARGET, NODE, engine=engine, draft=draft, **fields))


@pytest.mark.parametrize("largest", [1, 4, 16, 100, 256, 272, 512, 1024])
def test_the_vllm_ladder_is_ascending_and_ends_at_its_largest(largest):
    sizes = vllm_capture_sizes(largest)
    assert list(sizes) == sorted(set(sizes)) and sizes[-1] <= largest
    assert len(vllm_capture_sizes(512)) == 51 and vllm_capture_sizes(16) == (1, 2, 4, 8, 16)


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("fields", [{}, {"max_num_seqs": 512}, {"enforce_eager": True}])
def test_the_memory_plan_counts_the_graphs_the_step_model_pads_to(engine, fields):
    """One ladder per engine: the memory plan's capture count (vLLM's graph-memory estimate) is the number of sizes
    the step model pads a batch to."""
    dep = Deployment.on_node(TARGET, NODE, engine=engine, **fields)
    limits = resolve_limits(dep, engine_profile(dep.engine, dep.engine_version))
    assert limits.cudagraph_capture_sizes == len(graph_plan(dep).sizes)
    assert (limits.cudagraph_capture_sizes == 0) == (engine == "hf" or dep.enforce_eager)


def test_engine_ladders_as_their_sources_write_them():
    assert sglang_capture_sizes(48, speculative=True)[-6:] == (28, 30, 32, 40, 44, 48)
    assert sglang_capture_sizes(256, speculative=False)[:6] == (1, 2, 4, 8, 12, 16)
    assert trtllm_capture_sizes() == (*range(1, 32), 32, 64, 128)


@pytest.mark.parametrize(("version", "largest"), [("0.5.5", 256), ("0.6.0", 512), ("0.6.3", 512), (None, 512)])
def test_vllm_v0_graphs_reach_max_num_seqs_from_0_6_0(version, largest):
    """v0.5.5 captures up to 8 x 32 whatever the batch cap; v0.6.0 extends the list to 8 x 1,024 and captures up to
    the cap (vllm/worker/model_runner.py of both releases)."""
    dep = Deployment.on_node(TARGET, NODE, engine="vllm-v0", engine_version=version, max_num_seqs=512)
    plan = graph_plan(dep)
    assert plan.sizes == vllm_v0_capture_sizes(largest) and plan.sizes[-1] == largest
    assert plan.run(seqs=300, query_tokens=1) == ((0, True) if largest == 256 else (4, False))
    assert plan.run(seqs=33, query_tokens=1) == (7, False)


def test_a_vllm_decode_batch_of_33_runs_at_40():
    engine = _engine()
    padded = engine.run_pass(engine.target, decode_seqs=33, decode_context_tokens=33 * 1000)
    exact = engine.target.forward(decode_seqs=33, decode_context_tokens=33 * 1000)
    assert padded.tokens == 40 and exact.tokens == 33
    assert padded.flops > exact.flops and padded.total_s >= exact.total_s
    # padding tokens add GEMM work only: no attention, no logits
    assert padded.attention_kv_s == exact.attention_kv_s and padded.sampling_s == exact.sampling_s


def test_vllm_pads_speculative_and_mixed_steps_in_tokens():
    engine = _engine(draft=HEAD)
    verify = engine.speculative(3, decode_seqs=33, decode_context_tokens=33 * 1000).passes[-1][1]
    assert verify.tokens == 136  # 33 x 4 = 132 tokens -> 136
    chunks = Chunks()
    chunks.add(100, 0)
    mixed = engine.plain(decode_seqs=3, decode_context_tokens=3000, chunks=chunks).passes[0][1]
    assert mixed.tokens == 104


def test_sglang_pads_requests_and_runs_prefill_without_graphs():
    engine = _engine("sglang", draft=HEAD)
    assert engine.graphs.unit == "seqs" and engine.graphs.sizes == graph_plan(engine.deployment).sizes
    verify = engine.speculative(3, decode_seqs=33, decode_context_tokens=33 * 1000).passes[-1][1]
    assert verify.tokens == 40 * 4  # 33 requests run as the 40-request graph
    chunks = Chunks()
    chunks.add(100, 0)
    assert engine.plain(decode_seqs=0, decode_context_tokens=0, chunks=chunks).passes[0][1].tokens == 100


def test_trtllm_runs_an_uncaptured_batch_without_graphs_and_no_padding():
    engine = _engine("trtllm")
    odd = engine.run_pass(engine.target, decode_seqs=33, decode_context_tokens=33 * 1000)
    graphed = engine.target.forward(decode_seqs=33, decode_context_tokens=33 * 1000)
    assert engine.graphs.run(seqs=33, query_tokens=1) == (0, True)
    assert odd.tokens == 33 and odd.overhead_s >= graphed.overhead_s
    captured = engine.run_pass(engine.target, decode_seqs=32, decode_context_tokens=32 * 1000)
    assert captured.overhead_s == engine.target.forward(decode_seqs=32, decode_context_tokens=32000).overhead_s
    assert engine.graphs.run(seqs=32, query_tokens=1) == (0, False)


def test_eager_launches_show_only_where_the_gpu_work_does_not_hide_them():
    small = EngineStep(Deployment.on_node(get_model("Llama-3.2-1B"), NODE, engine="trtllm"))
    alone = small.run_pass(small.target, decode_seqs=33, decode_context_tokens=33)
    graphed = small.target.forward(decode_seqs=33, decode_context_tokens=33)
    launches = small.target.layers * (small.profile.eager_layer_overhead_s - small.profile.layer_overhead_s)
    gpu = graphed.total_s - graphed.overhead_s
    assert alone.total_s == pytest.approx(graphed.total_s + max(0.0, launches - gpu))


def test_above_the_largest_graph_a_decode_runs_eagerly_and_unpadded():
    engine = _engine()
    largest = engine.graphs.largest
    big = engine.run_pass(engine.target, decode_seqs=largest + 1, decode_context_tokens=(largest + 1) * 100)
    graphed = engine.target.forward(decode_seqs=largest + 1, decode_context_tokens=(largest + 1) * 100)
    assert big.tokens == largest + 1 and big.total_s >= graphed.total_s


def test_enforce_eager_captures_nothing():
    engine = _engine(enforce_eager=True)
    assert engine.graphs.sizes == ()
    assert engine.run_pass(engine.target, decode_seqs=33, decode_context_tokens=33000).tokens == 33


def test_every_engine_has_a_capture_rule_with_its_source():
    rules = engine_graphs()
    assert set(rules) == set(ENGINES)
    assert all(rule.source.strip() for rule in rules.values())
