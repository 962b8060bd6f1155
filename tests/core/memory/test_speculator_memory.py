"""Heads, the target's MTP layers and n-gram in the memory plan: weights as the engine loads them, KV, starts."""

from __future__ import annotations

import pytest

from planner.catalog.lookup import get_gpu, get_model, get_node
from planner.deployment import Deployment
from planner.memory import plan_memory

HEAD = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"


def _on_h100(target: str = "Llama-3.1-8B", **fields) -> Deployment:
    return Deployment.build(target=get_model(target), gpu=get_gpu("h100-sxm-80gb"), **fields)


def test_eagle3_head_weighs_its_own_tensors_and_one_layer_of_kv():
    alone = plan_memory(_on_h100())
    plan = plan_memory(_on_h100(draft=get_model(HEAD)))
    # bf16 (the target's dtype): 424,689,664 parameters x 2 B + the int64 d2t map of 32,000 entries
    assert plan.per_gpu.draft_weights_bytes == 2 * 424_689_664 + 8 * 32_000
    assert plan.per_gpu.target_weights_bytes == alone.per_gpu.target_weights_bytes  # the embedding counted once
    assert plan.draft_kv_bytes_per_token_per_gpu == 1 * 2 * 8 * 128 * 2  # one layer, 8 KV heads of 128, K and V
    assert plan.starts and plan.lookahead_slots_per_seq == 5


def test_a_float32_speculators_copy_loads_in_the_targets_dtype():
    plan = plan_memory(_on_h100(draft=get_model("nm-testing/EAGLE3-LLaMA3.1-Instruct-8B-converted")))
    assert plan.per_gpu.draft_weights_bytes == 2 * 424_689_664 + 8 * 32_000


def test_eagle1_head_shares_embedding_and_lm_head():
    plan = plan_memory(_on_h100("Meta-Llama-3-8B", draft=get_model("lmzheng/sglang-EAGLE-LLaMA3-Instruct-8B")))
    assert plan.per_gpu.draft_weights_bytes == 2 * 251_662_336


def test_deepseek_mtp_holds_one_mla_layer_of_kv_and_no_second_embedding():
    dep = Deployment.on_node(get_model("DeepSeek-V3"), get_node("8x-h200-sxm-141gb"), tp=8, method="mtp")
    plan = plan_memory(dep)
    assert plan.draft_kv_bytes_per_token_per_gpu == (512 + 64) * 2  # the latent, not split by TP
    embedding_fp8_bytes = 129_280 * 7168 * 2 // 8  # bf16 embedding, vocab-split over 8 ranks
    assert plan.per_gpu.draft_weights_bytes < 1.6 * 2**30 and plan.per_gpu.draft_weights_bytes > embedding_fp8_bytes
    assert plan.starts


def test_ngram_has_no_weights_or_kv_but_reserves_lookahead():
    plan = plan_memory(_on_h100(method="ngram"))
    assert plan.per_gpu.draft_weights_bytes == 0 and plan.draft_kv_bytes_per_token_per_gpu == 0
    assert plan.lookahead_slots_per_seq == 5 and plan.kv_cache_tokens_without_draft is not None


@pytest.mark.parametrize(
    ("version", "draft_mib", "head_mib"),
    [("0.5.3", 6144, 2048), ("0.5.12", 6144, 4096), ("0.5.15", 0, 0), ("0.5.20", 0, 0)],
)
def test_sglang_reserves_per_method_by_release(version, draft_mib, head_mib):
    """server_args.py _handle_gpu_memory_settings: STANDALONE +6 GiB, EAGLE +2 GiB (v0.5.3), +4 GiB from 0.5.10;
    the flat reserve is gone from 0.5.14 (sgl-project/sglang PR #23862); n-gram never reserves."""

    def fraction(**fields):
        return plan_memory(_on_h100(engine="sglang", engine_version=version, **fields)).limits.memory_fraction

    ngram = fraction(method="ngram")
    total_mib = 81559  # nvidia-smi's H100 SXM total
    assert fraction(draft=get_model("Llama-3.2-1B")) == pytest.approx(ngram - draft_mib / total_mib, abs=0.0011)
    assert fraction(draft=get_model(HEAD)) == pytest.approx(ngram - head_mib / total_mib, abs=0.0011)


def test_a_head_for_another_target_does_not_start():
    plan = plan_memory(_on_h100("Qwen2.5-7B", draft=get_model(HEAD)))
    assert not plan.starts and any("cannot propose for Qwen2.5-7B" in p for p in plan.start_problems)


def test_a_head_on_a_same_geometry_model_it_was_not_trained_for_is_a_problem_not_a_start_stop():
    plan = plan_memory(_on_h100("DeepSeek-R1-Distill-Llama-8B", draft=get_model(HEAD)))
    assert plan.starts and any("head_target" in p for p in plan.problems)


def test_an_engine_without_the_method_does_not_start():
    # data/engine_releases.json: vLLM's V0 engine never ran EAGLE-3, plain transformers runs no head at all
    for engine in ("vllm-v0", "hf"):
        plan = plan_memory(_on_h100(draft=get_model(HEAD), engine=engine))
        assert not plan.starts and any("EAGLE-3 heads" in p for p in plan.start_problems)
