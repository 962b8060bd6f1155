"""A quantized multimodal checkpoint against its vLLM 0.19.0 start-up logs: weights with the vision encoder, KV pool."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_gpu
from planner.catalog.name_matching import match_model
from planner.deployment import Deployment
from planner.memory import plan_memory
from planner.units import GIB


def _mistral_small_w8a8(tp: int) -> Deployment:
    """llmd019-mistral-small-3.1-24b-w8a8-tp1/-tp2 (data/calibration/vllm_v0190_llmd_logs.csv): H100 (79.19 GiB),
    gpu_memory_utilization 0.95, max_model_len 8192, vLLM 0.19.0."""
    match = match_model("RedHatAI/Mistral-Small-3.1-24B-Instruct-2503-quantized.w8a8")
    return Deployment.build(
        target=match.model,
        gpu=get_gpu("h100-sxm-80gb"),
        gpu_count=tp,
        gpu_memory_bytes=round(79.19 * GIB),
        tp=tp,
        dtype=match.weight_format,
        memory_fraction=0.95,
        max_model_len=8192,
        engine="vllm",
        engine_version="0.19.0",
    )


@pytest.mark.parametrize(("tp", "weights_gib", "tokens"), [(1, 24.07, 319_344), (2, 12.11, 773_584)])
def test_w8a8_mistral_small_matches_its_logs(tp, weights_gib, tokens):
    dep = _mistral_small_w8a8(tp)
    assert dep.target_format.id == "int8"
    plan = plan_memory(dep, with_suggestions=False)
    assert plan.per_gpu.target_weights_bytes / GIB == pytest.approx(weights_gib, rel=0.01)
    assert plan.kv_bytes_per_token_per_gpu == 40 * 8 * 128 * 2 * 2 // tp  # 40 layers, 8 KV heads of 128, bf16 KV
    assert plan.kv_cache_tokens == pytest.approx(tokens, rel=0.01)
