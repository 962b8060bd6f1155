"""The per-operator step model: each operator its own roofline, GEMM efficiency with tokens, never past peak."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_gpu, get_kv_dtype, get_model, get_node, get_weight_format
from planner.deployment import Deployment
from planner.speed.engine_step import Chunks, EngineStep
from planner.speed.profiles import speed_profile
from planner.speed.roofline import elementwise_bytes_per_token, model_cost
from planner.speed.step_model import OPERATORS, StepModel

H100 = get_gpu("h100-sxm-80gb")
PROFILE = speed_profile("vllm", "nvidia")
#: The roofline's formulas (measured kernel tables are tested in tests/core/speed/test_measured_kernels.py).
MODEL = StepModel(
    model_cost(get_model("Llama-3.1-70B"), get_weight_format("bf16"), get_kv_dtype("auto"), H100, tp=4),
    H100,
    PROFILE,
    measured_kernels=False,
)


def test_the_pass_is_the_sum_of_its_operators():
    step = MODEL.forward(decode_seqs=32, decode_query_tokens=4, decode_context_tokens=32 * 2000, prefill_tokens=512,
                         prefill_seqs=1, prefill_positions=512 * 256.5)  # fmt: skip
    assert set(step.breakdown()) == set(OPERATORS)
    assert step.total_s == pytest.approx(sum(step.breakdown().values()))


def test_the_elementwise_kernels_move_every_new_tokens_activations():
    # two fused residual-add + RMSNorm kernels (4·h values each) and the SiLU-and-multiply (3·I/tp) per layer
    arch = get_model("Llama-3.1-70B").architecture
    per_token = arch.num_layers * (2 * 4 * arch.hidden_size + 3 * arch.intermediate_size / 4) * 2
    assert MODEL.elementwise_bytes_per_token == per_token
    one, many = MODEL.decode(1, 1, 1000), MODEL.decode(64, 4, 1000)
    assert one.elementwise_s == pytest.approx(per_token / MODEL.bw)
    assert many.elementwise_s == pytest.approx(256 * per_token / MODEL.bw)  # K + 1 verify tokens pay it each
    prefill = MODEL.prefill(4096)
    assert prefill.elementwise_s == pytest.approx(4096 * per_token / MODEL.bw)
    assert prefill.bytes_moved >= 4096 * per_token + prefill.weight_read_bytes


def test_a_moe_layer_runs_only_its_shared_experts_activation_outside_the_expert_kernel():
    arch = get_model("Qwen3-30B-A3B").architecture
    moe = arch.moe
    dense = arch.num_layers - len(moe.moe_layers)
    expected = 2 * (
        dense * (arch.norms_per_layer * 4 * arch.hidden_size + 3 * arch.intermediate_size)
        + len(moe.moe_layers) * (arch.norms_per_layer * 4 * arch.hidden_size + 3 * moe.shared_intermediate_size)
    )
    assert elementwise_bytes_per_token(arch, 1, 2) == expected


def test_verify_gemms_become_compute_bound_while_kv_reads_stay_memory_bound():
    # The bug a single per-layer max hides: at batch 128 the K+1 = 4 verify tokens make the weight GEMMs
    # compute-bound, and that time adds to the KV reads instead of hiding under them.
    small = MODEL.decode(1, 4, 1000)
    big = MODEL.decode(128, 4, 1000)
    assert small.weight_gemm_s == pytest.approx(small.weight_read_bytes / MODEL.bw)
    assert big.weight_gemm_s > big.weight_read_bytes / MODEL.bw
    assert big.attention_kv_s == pytest.approx(big.kv_read_bytes / MODEL.bw)
    assert big.total_s > big.weight_gemm_s + big.attention_kv_s


def test_gemm_efficiency_rises_with_tokens():
    per_token = [MODEL.decode(b, 1, 0).weight_gemm_s / b for b in (256, 1024, 4096)]
    assert per_token[0] > per_token[1] > per_token[2]


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 512), st.integers(1, 17), st.integers(0, 32768), st.integers(0, 8192), st.integers(0, 8192))
def test_a_pass_never_beats_the_peak(seqs, query, context, prefill, cached):
    if seqs == 0 and prefill == 0:
        return
    chunks = Chunks()
    if prefill:
        chunks.add(prefill, cached)
    step = MODEL.forward(decode_seqs=seqs, decode_query_tokens=query, decode_context_tokens=seqs * context,
                         prefill_tokens=chunks.tokens, prefill_seqs=chunks.seqs, prefill_positions=chunks.positions,
                         prefill_context_tokens=chunks.context_tokens)  # fmt: skip
    assert step.total_s >= step.flops / MODEL.peak_flops
    assert step.total_s >= step.bytes_moved / MODEL.bandwidth


def test_a_speculative_step_is_draft_passes_plus_one_verify():
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4,
                             draft=get_model("Llama-3.2-1B"))  # fmt: skip
    engine = EngineStep(dep)
    step = engine.speculative(3, decode_seqs=16, decode_context_tokens=16 * 1000)
    names = [name for name, _ in step.passes]
    assert names == ["draft first pass", "draft decode", "draft decode", "target verify"]
    first = dict(step.passes)["draft first pass"]
    assert first.tokens == 16 * (3 + 2)  # vLLM's proposer re-reads the K + 1 verified tokens plus one slot
    assert dict(step.passes)["target verify"].tokens == 16 * 4
    profile = engine.profile  # plus the proposer's host work per draft pass and the step's speculation costs
    overheads = 3 * profile.draft_step_overhead_s + profile.spec_step_overhead_s + 16 * profile.spec_seq_overhead_s
    assert step.total_s == pytest.approx(sum(p.total_s for _, p in step.passes) + overheads)
    sglang = EngineStep(dep.replace(engine="sglang")).speculative(3, decode_seqs=16, decode_context_tokens=16000)
    assert dict(sglang.passes)["draft first pass"].tokens == 16


def test_only_the_target_pass_pays_the_per_sequence_host_cost_in_vllm_v1():
    # V1 prepares a step's per-sequence inputs once; its proposer advances the draft's on the GPU. V0's draft
    # worker prepares every draft step's inputs like a model step.
    dep = Deployment.on_node(get_model("Llama-3.1-70B"), get_node("8x-h100-sxm-80gb"), tp=4,
                             draft=get_model("Llama-3.2-1B"))  # fmt: skip
    for engine, per_seq_draft in (("vllm", 0.0), ("vllm-v0", None)):
        step_engine = EngineStep(dep.replace(engine=engine))
        profile = step_engine.profile
        expected = profile.seq_overhead_s if per_seq_draft is None else per_seq_draft
        for seqs in (8, 128):
            passes = dict(step_engine.speculative(3, decode_seqs=seqs, decode_context_tokens=seqs * 500).passes)
            target, draft = step_engine.target, step_engine.draft
            assert passes["target verify"].overhead_s == pytest.approx(
                target.fixed_overhead_s + seqs * profile.seq_overhead_s
            )
            assert passes["draft decode"].overhead_s == pytest.approx(draft.fixed_overhead_s + seqs * expected)
    assert speed_profile("vllm", "nvidia").seq_overhead_s > 0
