"""Roofline step times: memory vs compute bound, TP sharding and all-reduce, MoE expert reads."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.catalog.lookup import get_gpu, get_kv_dtype, get_model, get_weight_format
from planner.errors import InputError
from planner.model.weight_bytes import weight_bytes_per_gpu
from planner.speed.profiles import speed_profile
from planner.speed.roofline import compute_dtype, experts_touched_frac, model_cost, peak_flops
from planner.speed.step_model import StepModel
from planner.units import GB

H100 = get_gpu("h100-sxm-80gb")
PROFILE = speed_profile("vllm", "nvidia")


def _cost(model="Llama-3.1-70B", fmt="bf16", tp=1, pp=1, gpu=H100, kv="auto"):
    return model_cost(get_model(model), get_weight_format(fmt), get_kv_dtype(kv), gpu, tp=tp, pp=pp)


def _step(cost, gpu=H100, profile=PROFILE, batch=1, query=1, context=1024):
    return StepModel(cost, gpu, profile, measured_kernels=False).decode(batch, query, context)


def test_decode_reads_every_weight_but_the_embedding_table():
    cost = _cost(tp=8)
    arch = get_model("Llama-3.1-70B").architecture
    total = weight_bytes_per_gpu(arch, get_weight_format("bf16"), tp=8)
    step = _step(cost)
    # The untied embedding (128256 x 8192 bf16, vocab-split over 8) is looked up, not streamed.
    assert sum(cost.stage_weight_bytes) == total
    assert total - step.weight_read_bytes == pytest.approx(128256 * 8192 * 2 / 8, rel=1e-6)


def test_decoding_text_does_not_stream_the_vision_encoder():
    # Mistral-Small-3.1 holds its Pixtral encoder (438,958,080 bf16 parameters) in memory, but a text step never
    # runs it: the step reads the text model's weights and does none of the encoder's matmuls.
    model = "mistralai/Mistral-Small-3.1-24B-Instruct-2503"
    spec = get_model(model)
    cost = _cost(model, fmt="int8")
    text_only = weight_bytes_per_gpu(spec.architecture, get_weight_format("int8"))
    assert sum(cost.stage_weight_bytes) == text_only + 2 * 438_958_080
    assert _step(cost).weight_read_bytes == pytest.approx(text_only - 2 * 131_072 * 5120, rel=1e-6)
    assert cost.matmul_params_per_gpu == 40 * (2 * 5120 * 4096 + 2 * 5120 * 1024 + 3 * 5120 * 32768)


def test_small_batch_decode_is_memory_bound_and_large_prefill_compute_bound():
    cost = _cost(tp=8)
    assert _step(cost).bound == "memory"
    assert _step(cost, batch=1, query=8192, context=0).bound == "compute"


def test_memory_time_is_bytes_over_achievable_bandwidth():
    cost = _cost(tp=8)
    step = _step(cost)
    expected = (step.weight_read_bytes + step.kv_read_bytes) / (
        H100.memory_bandwidth_gb_s * GB * PROFILE.bandwidth_frac
    )
    # + the new token's KV written and its logits sampled
    assert step.memory_s == pytest.approx(expected, rel=0.01)


def test_tp_one_pays_no_all_reduce_and_tp_eight_does():
    assert _step(_cost("Llama-3.2-1B", tp=1)).allreduce_s == 0.0
    step = _step(_cost("Llama-3.2-1B", tp=8))
    # 16 layers x 2 all-reduces, each at least the profile's latency.
    assert step.allreduce_s >= 2 * 16 * PROFILE.allreduce_latency_s


def test_moe_touches_few_experts_at_batch_one_and_all_at_large_batch():
    cost = _cost("Mixtral-8x7B-v0.1", tp=2)
    one, many = _step(cost, batch=1), _step(cost, batch=256)
    whole = sum(cost.stage_weight_bytes)
    assert one.weight_read_bytes < 0.5 * whole  # 2 of 8 experts per layer
    assert many.weight_read_bytes == pytest.approx(whole - cost.stage_lookup_bytes[0], rel=1e-3)
    assert experts_touched_frac(1, 8, 2) == 0.25


def test_peak_follows_the_weight_format():
    assert compute_dtype(H100, get_weight_format("fp8")) == "fp8"
    assert compute_dtype(get_gpu("a100-sxm-80gb"), get_weight_format("fp8")) == "bf16"  # weight-only on Ampere
    assert compute_dtype(H100, get_weight_format("int4-awq")) == "fp16"  # AWQ computes in fp16
    t4 = get_gpu("t4-16gb")
    assert peak_flops(t4, compute_dtype(t4, get_weight_format("bf16"))) == t4.fp16_dense_tflops * 1e12


def test_attention_runs_at_the_kv_caches_precision_not_the_weights():
    b200 = get_gpu("b200-180gb")
    assert _cost(fmt="nvfp4", gpu=b200, kv="fp8").attention_dtype == "fp8"  # never the FP4 peak
    assert _cost(fmt="fp8", gpu=H100).attention_dtype == "bf16"  # a 16-bit KV cache: 16-bit attention
    assert _cost(fmt="fp8", gpu=get_gpu("a100-sxm-80gb"), kv="fp8").attention_dtype == "bf16"  # no FP8 on Ampere

    def prefill_attention(fmt: str, kv: str) -> tuple[float, float]:
        model = StepModel(_cost("Llama-3.1-8B", fmt, gpu=b200, kv=kv), b200, PROFILE, measured_kernels=False)
        return model.prefill(32768).attention_new_s, model.attn_peak

    # a long prompt's attention costs the same whatever the weights' format; over a 16-bit cache it runs at the
    # BF16 peak, over an 8-bit one at the FP8 peak, each at its own measured fraction (data/kernel_efficiency.json)
    (fp4_s, _), (fp8_s, fp8_rate), (bf16_s, bf16_rate) = (
        prefill_attention("nvfp4", "fp8"), prefill_attention("fp8", "fp8"), prefill_attention("fp8", "bf16")
    )  # fmt: skip
    assert fp4_s == pytest.approx(fp8_s)
    assert bf16_s == pytest.approx(fp8_s * fp8_rate / bf16_rate, rel=0.05)


def test_pipeline_stages_add_up():
    one, two = _step(_cost(tp=4)), _step(_cost(tp=4, pp=2))
    assert max(_cost(tp=4, pp=2).stage_weight_bytes) < max(_cost(tp=4).stage_weight_bytes)
    assert two.total_s > 0.5 * one.total_s


def test_invalid_batch_is_an_input_error():
    with pytest.raises(InputError) as info:
        _step(_cost(), batch=0)
    assert info.value.field == "batch_size"


@settings(max_examples=40, deadline=None)
@given(
    st.floats(min_value=0.3, max_value=0.95),
    st.floats(min_value=1.0, max_value=3.0),
    st.integers(min_value=1, max_value=512),
    st.integers(min_value=1, max_value=16),
)
def test_more_bandwidth_never_slows_a_step(eta, factor, batch, query):
    cost = _cost(tp=8)
    slow = PROFILE.with_values(bandwidth_frac=eta / factor)
    fast = PROFILE.with_values(bandwidth_frac=eta)
    assert (
        _step(cost, profile=fast, batch=batch, query=query).total_s
        <= _step(cost, profile=slow, batch=batch, query=query).total_s
    )


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=256), st.integers(min_value=1, max_value=16), st.integers(0, 32768))
def test_more_tokens_never_take_less_time(batch, query, context):
    cost = _cost(tp=8)
    base = _step(cost, batch=batch, query=query, context=context).total_s
    assert _step(cost, batch=batch + 1, query=query, context=context).total_s >= base
    assert _step(cost, batch=batch, query=query + 1, context=context).total_s >= base
    assert _step(cost, batch=batch, query=query, context=context + 512).total_s >= base
