"""vLLM V1's hybrid KV-cache groups (planner/memory/kv_groups.py) against vLLM's rule and the v0.19.0 logs."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from planner.catalog.lookup import get_gpu, get_model, get_weight_format
from planner.deployment import Deployment
from planner.engines.components import moe_workspace_bytes
from planner.engines.profiles import engine_profile, resolve_limits
from planner.memory import plan_memory
from planner.memory.kv_groups import CHUNKED, FULL, SLIDING, LayerKv, hybrid_layout, request_bytes
from planner.units import GIB

SW = LayerKv(SLIDING, 1024, 8192)
FA = LayerKv(FULL, None, 8192)


@pytest.mark.parametrize(
    ("sliding", "full", "groups", "padding", "tokens_per_block"),
    [
        (52, 10, 7, 8, 16 / 7),  # Gemma-3-27B: 'Add 8 padding layers', 36,560 / 15,997 blocks
        (29, 5, 7, 1, 16 / 7),  # Gemma-3-4B: 'Add 1 padding layers', 468,144 / 204,817
        (40, 8, 6, 0, 16 / 6),  # Gemma-3-12B: 130,304 / 48,867
        (23, 23, 2, 0, 8),  # Gemma-2-27B: 58,672 / 7,335
    ],
)
def test_groups_match_the_logged_layouts(sliding, full, groups, padding, tokens_per_block):
    layout = hybrid_layout([SW] * sliding + [FA] * full, ratio=1.5)
    assert (layout.num_groups, layout.padding_layers) == (groups, padding)
    assert 16 / layout.num_groups == pytest.approx(tokens_per_block)


def test_group_size_takes_the_largest_kind_when_counts_are_close():
    layout = hybrid_layout([SW] * 12 + [FA] * 13, ratio=1.5)  # vLLM's gpt-oss + EAGLE example
    assert (layout.layers_per_group, layout.num_groups, layout.padding_layers) == (13, 2, 1)
    assert hybrid_layout([SW] * 12 + [FA] * 13, ratio=None).layers_per_group == 12


def test_one_kind_or_unequal_pages_is_not_hybrid():
    assert hybrid_layout([FA] * 32, ratio=1.5) is None
    assert hybrid_layout([SW] * 5 + [LayerKv(FULL, None, 4096)], ratio=1.5) is None


def test_logged_gemma3_27b_counts():
    layout = hybrid_layout([SW] * 52 + [FA] * 10, ratio=1.5)
    assert layout.tokens(15_997, 16) == 36_560
    # 'Maximum concurrency for 8,192 tokens per request: 4.46x': 512 full + 6 x 513 sliding blocks
    assert round(15_997 / layout.blocks_per_request(8192, 8192, 16), 2) == 4.46
    assert layout.blocks_per_request(131_072, 8192, 16) == 11_654


@given(st.integers(1, 40), st.integers(1, 80), st.integers(1, 10**6))
def test_padding_only_adds_memory(full, sliding, blocks):
    layout = hybrid_layout([FA] * full + [SW] * sliding, ratio=1.5)
    assert layout.layers_per_group * layout.num_groups == full + sliding + layout.padding_layers
    assert layout.bytes_per_token >= (full + sliding) * 8192
    assert layout.tokens(blocks, 16) <= blocks * 16


def _gemma3(max_model_len: int, model_id: str = "google/gemma-3-27b-it") -> Deployment:
    """The logged vLLM 0.19.0 run: one H100 (79.19 GiB), gpu_memory_utilization 0.95."""
    return Deployment.build(
        target=get_model(model_id),
        gpu=get_gpu("h100-sxm-80gb"),
        gpu_memory_bytes=round(79.19 * GIB),
        memory_fraction=0.95,
        max_model_len=max_model_len,
        engine="vllm",
        engine_version="0.19.0",
    )


def test_gemma3_27b_at_8k_matches_the_log_within_one_percent():
    plan = plan_memory(_gemma3(8192), with_suggestions=False)
    assert plan.kv_cache_tokens == pytest.approx(36_560, rel=0.01)
    assert plan.kv_bytes_per_token_per_gpu == 70 * 16 * 128 * 2 * 2  # 62 layers + 8 padding
    assert plan.max_concurrency == pytest.approx(4.46, rel=0.02)
    assert any("7 groups of 10 layers" in note for note in plan.assumptions)


def test_gemma3_27b_at_128k_starts_on_the_window_limited_check():
    plan = plan_memory(_gemma3(131_072), with_suggestions=False)
    assert plan.kv_cache_tokens < 131_072  # fewer reported tokens than one request's length ...
    assert plan.admits_max_model_len and plan.starts and plan.fits  # ... yet vLLM admits it
    layers = [SW] * 52 + [FA] * 10
    assert request_bytes(layers, 131_072, 8192, 16) <= plan.per_gpu.kv_cache_bytes
    assert plan.max_concurrency >= 1


def test_window_limited_check_refuses_when_even_the_windows_do_not_fit():
    plan = plan_memory(_gemma3(131_072).replace(memory_fraction=0.72), with_suggestions=False)
    assert not plan.admits_max_model_len
    assert not plan.starts


def test_multimodal_checkpoint_counts_the_vision_tower():
    plan = plan_memory(_gemma3(8192), with_suggestions=False)
    # logged 'weights memory: 51.45GiB'; the text-only model alone would be ~50.3 GiB
    assert plan.per_gpu.target_weights_bytes / GIB == pytest.approx(51.45, rel=0.005)


@pytest.mark.parametrize(
    ("model_id", "tokens", "weights_gib", "bytes_per_token"),
    [
        # llmd019-gemma-3-4b-it-tp1: 'Add 1 padding layers', 7 groups of 5 layers of 4 KV heads x 256
        ("google/gemma-3-4b-it", 468_144, 8.58, 35 * 4 * 256 * 2 * 2),
        # llmd019-gemma-3-12b-it-tp1: no padding, 6 groups of 8 layers of 8 KV heads x 256
        ("google/gemma-3-12b-it", 130_304, 23.31, 48 * 8 * 256 * 2 * 2),
    ],
)
def test_smaller_gemma3_checkpoints_match_their_logs_within_one_percent(model_id, tokens, weights_gib, bytes_per_token):
    # data/calibration/vllm_v0190_llmd_logs.csv: 'weights memory' (vision tower included) and the KV cache tokens
    plan = plan_memory(_gemma3(8192, model_id), with_suggestions=False)
    assert plan.per_gpu.target_weights_bytes / GIB == pytest.approx(weights_gib, rel=0.005)
    assert plan.kv_bytes_per_token_per_gpu == bytes_per_token
    assert plan.kv_cache_tokens == pytest.approx(tokens, rel=0.01)


CH = LayerKv(CHUNKED, 8192, 1024)


def test_logged_llama4_scout_and_gpt_oss_layouts():
    # Llama-4-Scout at TP4: 36 chunked-local + 12 global layers -> 3 + 1 groups of 12; 91,495 blocks, 365,968 tokens
    scout = hybrid_layout(([CH] * 3 + [LayerKv(FULL, None, 1024)]) * 12, ratio=1.5)
    assert (scout.num_groups, scout.layers_per_group, scout.padding_layers) == (4, 12, 0)
    assert scout.tokens(91_495, 16) == 365_968
    # gpt-oss-20b at TP2: 12 sliding (128) + 12 full layers -> 2 groups of 12; 323,972 blocks, 2,591,776 tokens
    oss = hybrid_layout([LayerKv(SLIDING, 128, 1024), LayerKv(FULL, None, 1024)] * 12, ratio=1.5)
    assert (oss.num_groups, oss.layers_per_group, oss.padding_layers) == (2, 12, 0)
    assert oss.tokens(323_972, 16) == 2_591_776


def _logged(model: str, tp: int, fraction: float) -> Deployment:
    """The vLLM 0.19.0 runs of the llm-d-planner campaign: H100s (79.19 GiB), 8,192-token context."""
    return Deployment.build(
        target=get_model(model),
        gpu=get_gpu("h100-sxm-80gb"),
        gpu_count=tp,
        tp=tp,
        gpu_memory_bytes=round(79.19 * GIB),
        memory_fraction=fraction,
        max_model_len=8192,
        engine="vllm",
        engine_version="0.19.0",
    )


@pytest.mark.torch
def test_llama4_scout_tp4_matches_the_log():
    plan = plan_memory(_logged("meta-llama/Llama-4-Scout-17B-16E-Instruct", 4, 0.95), with_suggestions=False)
    assert plan.kv_cache_tokens == pytest.approx(365_968, rel=0.015)
    assert plan.per_gpu.target_weights_bytes / GIB == pytest.approx(53.12, rel=0.005)
    assert plan.kv_bytes_per_token_per_gpu == 48 * 2 * 2 * 128 * 2  # 2 KV heads per GPU, 48 layers, no padding
    assert any("4 groups of 12 layers" in note for note in plan.assumptions)


@pytest.mark.torch
@pytest.mark.parametrize(
    ("tp", "fraction", "tokens"), [(2, 0.90, 2_591_776), (2, 0.95, 2_764_768), (1, 0.95, 1_277_184)]
)
def test_gpt_oss_20b_matches_the_logs(tp, fraction, tokens):
    plan = plan_memory(_logged("openai/gpt-oss-20b", tp, fraction), with_suggestions=False)  # mxfp4 by default
    assert plan.kv_cache_tokens == pytest.approx(tokens, rel=0.015)
    assert plan.kv_bytes_per_token_per_gpu == 24 * 2 * (8 // tp) * 64 * 2


@pytest.mark.torch
def test_gpt_oss_captures_graphs_up_to_1024_and_has_no_fused_moe_workspace():
    # 'Overriding max cuda graph capture size to 1024 for performance' (83 sizes) and a profile peak of 2.87 GiB at
    # TP1 and TP2 (the sampler over 1,024 x 201,088 logits; MXFP4 experts keep no fused-MoE workspace)
    dep = _logged("openai/gpt-oss-20b", 2, 0.90)
    assert resolve_limits(dep, engine_profile("vllm", "0.19.0")).cudagraph_capture_sizes == 83
    assert resolve_limits(_gemma3(8192), engine_profile("vllm", "0.19.0")).cudagraph_capture_sizes == 51
    arch = dep.target.architecture
    assert moe_workspace_bytes(arch, 8192, 2, 2, dep.target_format) == 0
    assert moe_workspace_bytes(arch, 8192, 2, 2, get_weight_format("bf16")) > 0
    plan = plan_memory(dep, with_suggestions=False)
    assert plan.per_gpu.torch_peak_increase_bytes / GIB == pytest.approx(2.87, rel=0.06)
